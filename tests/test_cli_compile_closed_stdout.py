"""``symverify compile CIRCUIT.json >&-`` (standard output closed, Python's ``sys.stdout`` is None)
exited 0 with the model, the command's product, written nowhere; it is a usage error before the
work, saying to pass ``-o``. With ``-o`` a closed standard output takes only the summary."""

from __future__ import annotations

import sys
from pathlib import Path

import symverify as sv
from symverify.cli import main


def _circuit(tmp_path: Path) -> str:
    path = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(path))
    return str(path)


def test_compile_to_a_closed_standard_output_is_refused(tmp_path, capsys, monkeypatch):
    c = _circuit(tmp_path)
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["compile", c, "--certificate", str(tmp_path / "cert.json")]) == 3
    assert capsys.readouterr().err == ("symverify: error: compile: standard output is closed, and without -o the model is "
                                       "written there: expected -o MODEL.json, or an open standard output\n")
    assert not (tmp_path / "cert.json").exists()  # refused before the work


def test_compile_with_o_and_a_closed_standard_output_writes_the_model(tmp_path, capsys, monkeypatch):
    c = _circuit(tmp_path)
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["compile", c, "-o", str(tmp_path / "m.json")]) == 0
    assert sv.load_file(str(tmp_path / "m.json")).n == 1


def test_prove_json_or_junit_dash_to_a_closed_standard_output_is_refused(capsys, monkeypatch):
    """``prove --json - >&-``: the run's JSON, the output asked for, would go nowhere."""
    monkeypatch.setattr(sys, "stdout", None)
    for flag in ("--json", "--junit"):
        assert main(["prove", "primitives", flag, "-"]) == 3
        assert capsys.readouterr().err == (f"symverify: error: {flag} -: standard output is closed, so the run written "
                                           "there would be lost: expected a file path, or an open standard output\n")
