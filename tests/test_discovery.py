"""Discoverable API and command line: dir()/help() of lazy modules, explicit keywords, prove --list, help on every
argument, exit codes and formats in --help, integer JSON coefficients, compile to stdout, legends, overshoots with
value and bound."""

from __future__ import annotations

import argparse
import inspect
import json
import pydoc
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

import symverify as sv
import symverify.viz
from symverify.cli import EPILOG, _parser, main
from symverify.errors import CompileError, SerializationError
from symverify.ir.serialize import dump_file, loads
from symverify.scripts.runner import over_text

ROOT = Path(__file__).resolve().parents[1]
X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2)


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", ["verify", "compile", "execute", "polynomials", "evaluate", "Report", "Compiled",
                                  "retnet_direct", "from_sympy", "from_matrix"])
def test_dir_of_the_package_shows_the_lazy_entry_points(name):
    assert name in dir(sv)


def test_dir_of_viz_executors_and_testing_shows_lazy_names():
    import symverify.executors
    import symverify.testing

    assert {"plot_model", "plot_weights", "plot_resources", "write_report"} <= set(dir(symverify.viz))
    assert {"to_torch", "to_zoology"} <= set(dir(symverify.executors))
    assert "circuits" in dir(symverify.testing)


def test_help_of_the_package_documents_the_entry_points():
    text = pydoc.render_doc(sv, renderer=pydoc.plaintext)
    for name in ("verify(", "compile(", "evaluate(", "class Report", "from_sympy("):
        assert name in text, name


def test_from_sympy_and_from_matrix_at_the_top_level():
    from symverify.ir import build

    assert sv.from_sympy is build.from_sympy and sv.from_matrix is build.from_matrix
    assert sv.evaluate(sv.from_matrix([[1, 1], [1, -1]], n=1, d=2), [[3, 4]]) == [[7, -1]]


def test_compile_has_explicit_keywords():
    params = inspect.signature(sv.compile).parameters
    for name in ("method", "name", "plan", "max_cells"):
        assert name in params, name
        assert params[name].kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    assert sv.compile(X, name="xx").model.name == "xx"
    assert sv.compile(X, method="dense", name="d").model.name == "d"
    with pytest.raises(CompileError, match=r"compile\(method='dense'\): unknown options \['plan'\]"):
        sv.compile(X, method="dense", plan="exact")
    with pytest.raises(CompileError, match=r"unknown options \['max_cells'\]"):
        sv.compile(X, method="dense", max_cells=10)


def _actions(parser: argparse.ArgumentParser, where: str = "symverify"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{where} {name}")
        else:
            yield where, action


def test_every_cli_argument_has_help():
    missing = [f"{where} {a.option_strings or a.dest}" for where, a in _actions(_parser())
               if not a.help or a.help == argparse.SUPPRESS]
    assert missing == []


@pytest.mark.parametrize("command", [[], ["verify"], ["prove"], ["compile"], ["info"], ["sweep"], ["report"]])
def test_help_ends_with_exit_codes_and_formats(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([*command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out and "docs/formats.md" in out
    assert "  2    unknown" in out


def test_formats_page_documents_every_format_and_exit_code():
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for word in ("symverify.circuit", "symverify.model", "symverify.certificate", "symverify.proof-run",
                 "## Golden files", "| 130 |", "| 3 |", "| 2 |", "| 1 |", "| 0 |"):
        assert word in text, word
    for code in ("0", "1", "2", "3", "130"):
        assert f"  {code} " in EPILOG


def test_prove_list_names_every_script_without_running(capsys):
    code, out, _ = run(capsys, "prove", "--list")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert "lemma_h16_butterfly" in lines and "Lemma H.16" in lines["lemma_h16_butterfly"]
    assert "[sweep]" in lines["thm_h21_sweep"] and "builtin" in lines["primitives"]
    code, out, _ = run(capsys, "prove", "--list", "primitives")
    assert code == 0 and out.split()[0] == "primitives" and len(out.splitlines()) == 1


def test_integer_json_coefficients_are_rationals():
    as_int = loads(json.dumps({"format": "symverify.circuit", "version": 1, "name": "c", "n": 1, "d": 1,
                               "gates": [["const", [], [3]], ["lin", [0, 1], [-2, {"sym": [[1, {"a": 1}]]}]]],
                               "outputs": [2]}))
    as_str = loads(json.dumps({"format": "symverify.circuit", "version": 1, "name": "c", "n": 1, "d": 1,
                               "gates": [["const", [], ["3"]], ["lin", [0, 1], ["-2", {"sym": [["1", {"a": 1}]]}]]],
                               "outputs": [2]}))
    assert as_int == as_str
    assert sv.evaluate(as_int, [[5]], params={"a": Fraction(1, 3)}) == [[-9]]
    with pytest.raises(SerializationError, match=r"found float 3.0"):
        loads(json.dumps({"format": "symverify.circuit", "version": 1, "name": "c", "n": 1, "d": 1,
                          "gates": [["const", [], [3.0]]], "outputs": [1]}))


def test_compile_without_output_writes_the_model_to_stdout(tmp_path, capsys):
    path = tmp_path / "c.json"
    dump_file(X, path)
    code, out, err = run(capsys, "compile", str(path))
    assert code == 0
    model = loads(out)
    assert isinstance(model, sv.Model) and sv.verify(X, model).proved
    assert "Compiled" in err or "layers" in err


def test_overshoot_messages_give_the_value_and_the_bound():
    inst = {"resources": {"layers": 34}, "bounds": {"layers": 31}, "over_bound": ["layers"]}
    assert over_text(inst, "layers") == "layers=34 > 31"
    assert over_text({"over_bound": ["layers"]}, "layers") == "layers"
    from dataclasses import replace

    c = sv.compile(X)
    over = replace(c, bounds={**c.bounds, "layers": 1})
    assert f"layers={c.resources['layers']} > 1" in repr(over)


SCRIPT = '''
from symverify.scripts.protocol import Instance, ProofResult, script_main

TITLE = "Proved but too big"


def run(quick=False):
    r = ProofResult("big", TITLE)
    r.instances.append(Instance.computed("big instance", True, "a test's computation", "exact",
                                         resources={"layers": 34}, bounds={"layers": 31}))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def test_prove_shows_the_legend_and_overshoot_values(tmp_path, capsys):
    d = tmp_path / "scripts"
    d.mkdir()
    (d / "big.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    code, out, _ = run(capsys, "prove", "--dir", str(d), "-j", "1", "--wide")
    assert code == 1
    assert "p/r/u/a: instances proved/refuted/unknown; argued claims (never proved)" in out
    assert "layers=34 > 31" in out and "big: big instance: over bound: layers=34 > 31" in out


def test_golden_without_a_file_says_how_to_write_one(tmp_path, capsys):
    code, _, err = run(capsys, "prove", "primitives", "--golden", str(tmp_path / "gold.json"))
    assert code == 3 and "no such file" in err and "--update-golden" in err


def test_the_table_and_its_legend_fit_80_columns(tmp_path, capsys, monkeypatch):
    """README: the table fits 80 columns; its legend line was 86 characters."""
    monkeypatch.setenv("COLUMNS", "80")
    d = tmp_path / "scripts"
    d.mkdir()
    (d / "big.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    code, out, _ = run(capsys, "prove", "--dir", str(d), "-j", "1")
    assert code == 1 and "p/r/u/a:" in out
    assert all(len(line) <= 80 for line in out.splitlines()), max(out.splitlines(), key=len)
