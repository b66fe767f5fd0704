"""``prove NAME --golden G --update-golden`` (and ``sweep``) keeps the stored run's other scripts;
when the stored file did not read as a run (a merge conflict left in it, a run of a newer symverify,
another kind of file) it wrote this run's scripts alone over it, every other script's record lost
without a word. Such a file is refused before the run, and left as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from symverify.cli import main

TINY = '''from symverify.scripts.protocol import Instance, ProofResult, script_main


def run(quick=False):
    return ProofResult({name!r}, "one computed claim", [Instance.computed("one", True, "a comparison", "exact")])


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def _tree(tmp_path: Path) -> Path:
    d = tmp_path / "d"
    d.mkdir()
    for name in ("first", "second"):
        (d / f"{name}.py").write_text(TINY.format(name=name), encoding="utf-8")
    return d


def _stored(tmp_path: Path, d: Path, capsys) -> str:
    golden = tmp_path / "golden.json"
    assert main(["prove", "--dir", str(d), "--golden", str(golden), "--update-golden"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return golden.read_text(encoding="utf-8")


def _conflict(run: str) -> str:
    return f"<<<<<<< HEAD\n{run}=======\n{run}>>>>>>> other\n"


def _newer(run: str) -> str:
    return json.dumps({**json.loads(run), "version": 99}, indent=2)


@pytest.mark.parametrize(("what", "make", "why"), [
    ("a merge conflict", _conflict, "not valid JSON"),
    ("a newer run", _newer, "version"),
    ("a circuit", lambda run: '{"format": "symverify.circuit", "version": 1, "n": 1, "d": 1, "gates": [], "outputs": []}',
     "expected a run written by symverify prove --json"),
])
def test_a_named_update_over_a_stored_file_that_does_not_read_is_refused(tmp_path, capsys, what, make, why):
    d = _tree(tmp_path)
    golden = tmp_path / "golden.json"
    text = make(_stored(tmp_path, d, capsys))
    golden.write_text(text, encoding="utf-8")
    assert main(["prove", "--dir", str(d), "first", "--golden", str(golden), "--update-golden"]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith(f"symverify: error: --golden {golden} --update-golden: a run of named scripts replaces only "
                          "their part of the stored run"), err
    assert why in err and "fix it, or remove it to write this run alone" in err, err
    assert "proof scripts" not in err  # refused before the run
    assert golden.read_text(encoding="utf-8") == text


def test_a_named_update_of_a_stored_run_keeps_its_other_scripts_and_an_empty_file_is_written(tmp_path, capsys):
    d = _tree(tmp_path)
    golden = tmp_path / "golden.json"
    _stored(tmp_path, d, capsys)
    assert main(["prove", "--dir", str(d), "first", "--golden", str(golden), "--update-golden"]) == 0
    assert "its other scripts kept: second" in capsys.readouterr().out
    assert [s["name"] for s in json.loads(golden.read_text(encoding="utf-8"))["scripts"]] == ["first", "second"]
    golden.write_text("", encoding="utf-8")  # nothing stored, nothing lost
    assert main(["prove", "--dir", str(d), "first", "--golden", str(golden), "--update-golden"]) == 0
    assert [s["name"] for s in json.loads(golden.read_text(encoding="utf-8"))["scripts"]] == ["first"]


def test_an_update_of_every_script_replaces_a_stored_file_that_does_not_read(tmp_path, capsys):
    """A run of every script keeps nothing of the stored run: it is written whole, as before."""
    d = _tree(tmp_path)
    golden = tmp_path / "golden.json"
    golden.write_text(_conflict(_stored(tmp_path, d, capsys)), encoding="utf-8")
    assert main(["prove", "--dir", str(d), "--golden", str(golden), "--update-golden"]) == 0, capsys.readouterr().err
    assert [s["name"] for s in json.loads(golden.read_text(encoding="utf-8"))["scripts"]] == ["first", "second"]


def test_a_named_update_to_a_device_is_written_as_before(tmp_path, capsys):
    """A device stores no run, so nothing of it can be lost: it is written to, not read first."""
    if not Path(os.devnull).exists():
        pytest.skip("no null device")
    d = _tree(tmp_path)
    assert main(["prove", "--dir", str(d), "first", "--golden", os.devnull, "--update-golden"]) == 0
    assert f"golden run written to {os.devnull}" in capsys.readouterr().out
