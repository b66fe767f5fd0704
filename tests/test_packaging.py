"""A regular (wheel) install works from any directory: the proof scripts ship in the package."""

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The built wheel installed (without its dependencies, which this interpreter has) into a
    directory of its own; ``PYTHONPATH`` puts it ahead of the development checkout."""
    tmp = tmp_path_factory.mktemp("wheel dir")  # a space in every path below
    src = tmp / "src"  # a copy, so building leaves nothing in the checkout
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("symverify", "proofs"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(src)],
                   check=True, capture_output=True, text=True)
    (wheel,) = (tmp / "dist").glob("symverify-*.whl")
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True)
    work = tmp / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    return site, work, env


def _run(args, work, env):
    return subprocess.run([sys.executable, *args], cwd=work, env=env, capture_output=True, text=True, timeout=600)


def test_the_wheel_is_what_runs(installed):
    site, work, env = installed
    res = _run(["-c", "import symverify, symverify.proofs; print(symverify.__file__); print(symverify.proofs.__file__)"], work, env)
    assert res.returncode == 0, res.stderr
    for line in res.stdout.splitlines():  # lines, not words: the temporary directory may hold spaces
        assert line.startswith(str(site)), res.stdout
    assert (site / "symverify" / "proofs" / "thm_h21_general.py").exists()


def test_prove_quick_from_another_directory_with_junit_json_and_golden(installed):
    _site, work, env = installed
    res = _run(["-m", "symverify.cli", "prove", "--quick", "-j", "2", "--junit", "out.xml", "--json", "run.json"], work, env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    run = json.loads((work / "run.json").read_text(encoding="utf-8"))
    assert run["ok"] and len(run["scripts"]) >= 14 and all(s["source"] == "builtin" for s in run["scripts"])
    root = ET.parse(work / "out.xml").getroot()
    assert int(root.get("tests")) == sum(len(s["result"]["instances"]) for s in run["scripts"]) and root.get("failures") == "0"
    again = _run(["-m", "symverify.cli", "prove", "--quick", "-j", "2", "--golden", "run.json"], work, env)
    assert again.returncode == 0 and "matches the golden run" in again.stdout, again.stdout[-2000:]
    for s in run["scripts"]:
        for inst in s["result"]["instances"]:
            key = next((k for k, v in inst["bounds"].items() if type(v) is int), None)
            if key is not None:  # a looser bound: the record stays consistent (the golden reader refuses one that is not)
                inst["bounds"][key] += 1
                looser = f'"{key}": {inst["bounds"][key]}'
                break
        else:
            continue
        break
    (work / "changed.json").write_text(json.dumps(run), encoding="utf-8")
    changed = _run(["-m", "symverify.cli", "prove", "--quick", "-j", "2", "--golden", "changed.json"], work, env)
    assert changed.returncode == 1 and "differs from the golden run" in changed.stdout and looser in changed.stdout
