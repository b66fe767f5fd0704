"""The command line and the proof runner under a hostile environment: an ASCII-only standard output
(``LC_ALL=C`` with UTF-8 mode off), the machine's colour and symverify settings. Each test here failed
before its fix."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from symverify.cli import main


def _ascii_env() -> dict[str, str]:
    """The environment of a C locale without Python's UTF-8 mode: standard streams encode ASCII only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LANGUAGE")
           and not k.startswith("LC_")}
    return {**env, "LC_ALL": "C", "PYTHONUTF8": "0"}


def _cli(*argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "symverify.cli", *argv], capture_output=True, env=_ascii_env(),
                          timeout=300)


def test_the_environment_here_is_ascii_only():
    code = "import sys; print(sys.stdout.encoding, sys.stderr.encoding)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_ascii_env(), check=True)
    assert out.stdout.split() == ["ascii", "ascii"]


def test_help_and_list_on_an_ascii_only_terminal_escape_the_symbols():
    """``--help`` (``widths × depths``) and ``prove --list`` (``→``, ``≤`` in titles) crashed with a
    UnicodeEncodeError traceback (exit 1) or an internal error (exit 3)."""
    for argv, symbol in ((("--help",), rb"\xd7"), (("sweep", "--help"), rb"\u0394"), (("prove", "--list"), rb"\u2192")):
        res = _cli(*argv)
        assert res.returncode == 0, res.stderr.decode("ascii", "replace")
        assert symbol in res.stdout and b"Traceback" not in res.stderr
        res.stdout.decode("ascii")  # all of it ASCII


def test_prove_on_an_ascii_only_terminal_runs_its_scripts():
    """A script's process inherited the ASCII-only streams and crashed printing its table (``≤``):
    ``symverify prove`` reported every such script CRASHED. ``--json -`` is the same run, \\u-escaped."""
    res = _cli("prove", "causal_limit", "--quick", "-j", "1", "--json", "-")
    assert res.returncode == 0, res.stderr.decode("ascii", "replace")
    text = res.stdout.decode("ascii")
    run = json.loads(text)
    assert run["ok"] is True and [s["status"] for s in run["scripts"]] == ["ok"]
    assert "≤" in json.dumps(run, ensure_ascii=False)  # the symbols are there, escaped in the text
    assert "\\u2264" in res.stderr.decode("ascii")  # the table (on stderr with --json -) escapes them too


def test_a_proof_script_run_directly_on_an_ascii_only_terminal_prints_its_table():
    """``python -m symverify.proofs.NAME`` (``script_main``) crashed printing its table (``≤``)."""
    res = subprocess.run([sys.executable, "-m", "symverify.proofs.causal_limit", "--quick"], capture_output=True,
                         env=_ascii_env(), timeout=300)
    assert res.returncode == 0, res.stderr.decode("ascii", "replace")
    assert b"\\u2264" in res.stdout and b"Traceback" not in res.stderr


def test_main_in_process_on_an_ascii_stream_restores_its_error_handler(monkeypatch):
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["prove", "--list"]) == 0
    assert out.errors == "strict"  # as it was: the fallback is only for the command's own output
    out.flush()
    assert b"\\u2192" in out.buffer.getvalue()  # type: ignore[attr-defined]


def test_the_suite_ignores_the_machine_s_colour_and_symverify_settings():
    """``SYMVERIFY_PROGRESS=1`` (a progress line on stderr), ``SYMVERIFY_TRACEBACK=1`` and
    ``FORCE_COLOR=1`` (colours in a pipe) on the machine failed the CLI tests that read stderr and
    stdout: conftest's ``_without_host_settings`` removes them for every test."""
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "SYMVERIFY_PROGRESS": "1", "SYMVERIFY_TRACEBACK": "1", "FORCE_COLOR": "1",
           "PYTEST_ADDOPTS": "-p no:cacheprovider"}
    chosen = [f"{tests / 'test_cli.py'}::{name}" for name in ("test_exit_0_proved", "test_console_script_exit_codes")]
    chosen.append(f"{tests / 'test_environment.py'}::test_no_host_setting_reaches_a_test")
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *chosen],
                         capture_output=True, encoding="utf-8", errors="replace", env=env, cwd=tests.parent, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:]
    assert "3 passed" in res.stdout


def test_no_host_setting_reaches_a_test():
    from conftest import HOST_SETTINGS

    assert [name for name in HOST_SETTINGS if name in os.environ] == []


def test_ci_runs_the_command_that_readme_gives():
    """``.ci/run`` (CI on a fresh machine) and README's "exactly what CI runs" are one command."""
    root = Path(__file__).resolve().parents[1]
    ci = (root / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    block = readme.split("this is exactly what CI runs (`.ci/run`):", 1)[1].split("```bash\n", 1)[1].split("\n```", 1)[0]
    assert block == ci
    assert ci.endswith(".venv/bin/python -m pytest -n 2")


def test_pytest_from_another_directory_skips_the_alias_modules(tmp_path):
    """pyproject's ``--ignore=symverify/ir/circuit.py`` (the alias modules, collected as their kernel
    modules) was read from the current directory: from elsewhere the aliases were collected and
    failed to import as doctest modules."""
    root = Path(__file__).resolve().parents[1]
    res = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          f"--rootdir={root}", str(root / "symverify" / "ir")],
                         capture_output=True, encoding="utf-8", errors="replace", cwd=tmp_path, timeout=300)
    assert res.returncode == 0 and "error" not in res.stdout, res.stdout[-3000:]
    assert "symverify/ir/circuit.py" not in res.stdout
