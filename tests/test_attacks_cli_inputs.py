"""Attacks on the ``symverify`` command line's number options and on what its loaders say about
the files they refuse: a number ``int()``/``float()`` reads but the options' text does not say
(``1_0``, an Arabic-Indic digit, a padded value) is refused, one line and exit 3, never read as
another number."""

import json
import os
import re
import subprocess
import sys

import pytest
from cases import SQUARE_C, SQUARE_M
from hypothesis import given, settings
from hypothesis import strategies as st
from test_attacks_cli import exit_code, one_line_error

import symverify as sv
from symverify.errors import SerializationError
from symverify.ir.serialize import dump_file, dumps, loads


@pytest.fixture
def files(tmp_path):
    paths = {"c": str(tmp_path / "c.json"), "m": str(tmp_path / "m.json")}
    dump_file(SQUARE_C, paths["c"])
    dump_file(SQUARE_M, paths["m"])
    return paths


# ---- number options: int() read '1_0' as 10, '١٢' (Arabic-Indic) as 12 and ' 5' as 5 -------------
ODD_INTEGERS = ["1_0", "١٢", "３", " 5", "5 ", "5\n", "1e3", "0x10", "²"]


@pytest.mark.parametrize("text", ODD_INTEGERS)
@pytest.mark.parametrize("option, extra", [("--trials", ("--method", "randomized")), ("--seed", ())])
def test_verify_integer_options_take_ascii_digits_only(files, capsys, option, extra, text):
    err = one_line_error(capsys, "verify", files["c"], files["m"], option, text, *extra)
    assert f"argument {option}: expected" in err and "digits 0-9" in err, err


@pytest.mark.parametrize("text", ODD_INTEGERS)
@pytest.mark.parametrize("command", [("prove", "--quick", "primitives"), ("sweep", "thm_h21")])
def test_jobs_take_ascii_digits_only(capsys, command, text):
    err = one_line_error(capsys, *command, "-j", text)
    assert "argument -j/--jobs: expected" in err and "digits 0-9" in err, err


@pytest.mark.parametrize("text", ODD_INTEGERS)
def test_cases_per_task_take_ascii_digits_only(capsys, text):
    err = one_line_error(capsys, "prove", "--quick", "primitives", "--scheduler", "local", "--cases-per-task", text)
    assert "argument --cases-per-task: expected" in err and "digits 0-9" in err, err


@pytest.mark.parametrize("text", ["1_0", "١", "٣.5", " 5", "5 ", "1e1_0", "0x10", "infinity", "NaN"])
@pytest.mark.parametrize("command", [("verify", "{c}", "{m}"), ("prove", "--quick", "primitives")])
def test_timeouts_take_ascii_numbers_only(files, capsys, command, text):
    err = one_line_error(capsys, *(a.format(**files) for a in command), "--timeout", text)
    assert "argument --timeout: expected" in err and repr(text) in err, err


def test_a_very_long_integer_is_named_by_its_length(files, capsys):
    err = one_line_error(capsys, "verify", files["c"], files["m"], "--seed", "9" * 5000)
    assert "5000 digits" in err and len(err) < 400, err


@pytest.mark.parametrize("argv, shown", [
    (("--seed", "-7"), '"seed": -7'), (("--seed", "+7"), '"seed": 7'), (("--seed", "fresh"), '"seed": '),
    (("--timeout", "2.5e1"), '"verdict": "proved"'), (("--timeout", ".5"), '"verdict": "proved"'),
    (("--trials", "12", "--method", "randomized"), '"k": 12'),
])
def test_plain_numbers_are_still_read(files, capsys, argv, shown):
    code, out, err = exit_code(capsys, "verify", files["c"], files["m"], "--json", *argv)
    assert code == 0 and shown in out, (code, err)


# ---- what the loaders say they found: the literal as written ---------------------------------------
CIRCUIT = ('{"format": "symverify.circuit", "version": 1, "n": 1, "d": 2, '
           '"gates": [["mul", [0, 1], []], ["lin", [2, 0], ["1", "-1/2"]]], "outputs": [3]}')


@pytest.mark.parametrize("old, new, message", [
    ('"n": 1', '"n": 1e0', r"document.n: expected int, found float 1e0$"),  # was "float 1.0"
    ('"version": 1', '"version": 1.0', r"document.version: expected 1, found float 1.0 "),
    ('"-1/2"', "1e99999999", r"gates\[1\].coeffs\[1\]: expected an integer, .* found float 1e99999999$"),  # was "float inf"
    ('"-1/2"', "-1E-99999", r"gates\[1\].coeffs\[1\]: .* found float -1E-99999$"),  # was "float -0.0"
    ('"-1/2"', "1." + "0" * 100, r"gates\[1\].coeffs\[1\]: .* found a float literal of 102 characters$"),
    ('"n": 1', '"n": null', r"document.n: expected int, found null$"),  # was "NoneType"
    ('"outputs": [3]', '"outputs": null', r"document.outputs: expected a list, found null$"),
])
def test_a_refused_literal_is_shown_as_written(tmp_path, capsys, old, new, message):
    path = tmp_path / "c.json"
    path.write_text(CIRCUIT.replace(old, new, 1), encoding="utf-8")
    err = one_line_error(capsys, "info", str(path))
    assert re.search(message, err.rstrip("\n")), err


# ---- -0: JSON's negative zero integer was read as 0 (a node id, a size, a coefficient, a cell) ------
@pytest.mark.parametrize("old, new, where", [
    ('"outputs": [3]', '"outputs": [-0]', "document.outputs"),
    ('[0, 1], []', '[-0, 1], []', r"gates\[0\].args\[0\]"),
    ('"n": 1', '"n": -0', "document.n"),
    ('"-1/2"', "-0", r"gates\[1\].coeffs"),
    ('"version": 1', '"version": -0', "document.version"),
])
def test_a_negative_zero_integer_is_refused(tmp_path, capsys, old, new, where):
    path = tmp_path / "c.json"
    path.write_text(CIRCUIT.replace(old, new, 1), encoding="utf-8")
    err = one_line_error(capsys, "info", str(path))
    assert re.search(where + r".*found -0 \(a negative zero; write 0\)", err), err


def test_a_negative_zero_in_a_certificate_is_refused(tmp_path):
    text = ('{"format": "symverify.certificate", "version": 1, "boundaries": '
            '[{"layer": 0, "cells": [[0, 0, 0]]}, {"layer": -0, "cells": [[0, 0, [[0, "1"]], "0"]]}]}')
    assert loads(text.replace("-0", "0")).boundaries[1].layer == 0
    with pytest.raises(SerializationError, match=r"boundaries\[1\].layer: expected int, found -0 \(a negative zero"):
        loads(text)
    with pytest.raises(SerializationError, match=r"cells\[0\]\[2\]\[0\]\[0\] \(node\): expected int, found -0"):
        loads(text.replace('"layer": -0', '"layer": 1').replace('[[0, "1"]]', '[[-0, "1"]]'))


@settings(max_examples=60, deadline=None)
@given(st.integers(-(2**63) + 1, 2**63 - 1))
def test_every_other_integer_literal_reads_as_itself(k):
    doc = loads(CIRCUIT.replace('"-1/2"', str(k)))
    assert doc.gates[1].coeffs[1] == k


# ---- a certificate that does not fit the pair: the error named no file -----------------------------
@pytest.mark.parametrize("edit, message", [
    (lambda d: d["boundaries"].pop(), "certificate: boundaries must run from layer 0 to layer L"),
    (lambda d: d["boundaries"][-1].update(cells=[[0, 0, 99]]), "certificate boundary .*: cell \\(0, 0\\) names node %99"),
    (lambda d: d["boundaries"][-1]["cells"].append([7, 7, 0]), "certificate boundary .*: cell \\(7, 7\\) is outside"),
])
def test_a_certificate_that_does_not_fit_is_named(tmp_path, capsys, edit, message):
    circuit = SQUARE_C
    comp = sv.compile(circuit, method="dense")
    paths = {k: str(tmp_path / f"{k}.json") for k in ("c", "m", "cert")}
    dump_file(circuit, paths["c"])
    dump_file(comp.model, paths["m"])
    doc = json.loads(dumps(comp.certificate))
    edit(doc)
    (tmp_path / "cert.json").write_text(json.dumps(doc), encoding="utf-8")
    err = one_line_error(capsys, "verify", paths["c"], paths["m"], "--certificate", paths["cert"], "--method", "compositional")
    assert re.search(re.escape(f"symverify: error: {paths['cert']}: ") + message, err), err
    code, out, _ = exit_code(capsys, "verify", paths["c"], paths["m"], "--certificate", paths["cert"])  # auto: a note
    assert code == 0 and "the certificate does not fit" in out


# ---- standard output or error that cannot be written -----------------------------------------------
needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _cli(*argv, shell_redirect):
    """``python -m symverify ARGV`` in a shell with ``shell_redirect`` (``2>/dev/full``) applied."""
    return subprocess.run(["bash", "-c", f'exec "$@" {shell_redirect}', "_", sys.executable, "-m", "symverify", *argv],
                          capture_output=True, text=True, timeout=120)


@needs_dev_full
@pytest.mark.parametrize("redirect", ["2>/dev/full", "2>&-", "2>&- >/dev/full"])
def test_an_error_that_cannot_be_printed_still_exits_3_never_1(files, redirect):
    """Writing the error line to a full standard error raised out of the error handler: Python's
    own exit code 1, which ``verify`` uses for *refuted*; with standard error closed the line went
    to standard output."""
    for argv in (("verify", files["c"] + ".missing", files["m"]), ("verify", files["c"], files["m"], "--seed", "x")):
        res = _cli(*argv, shell_redirect=redirect)
        assert res.returncode == 3, (res.returncode, res.stdout, res.stderr)
        assert "error" not in res.stdout


@needs_dev_full
@pytest.mark.parametrize("argv", [("verify", "{c}", "{m}"), ("verify", "{c}", "{m}", "--json"), ("info", "{c}"),
                                  ("compile", "{c}")])
def test_a_full_standard_output_is_named(files, argv):
    """``symverify verify A B > /dev/full`` said only ``symverify: error: No space left on device``."""
    res = _cli(*(a.format(**files) for a in argv), shell_redirect=">/dev/full")
    assert res.returncode == 3, (res.returncode, res.stderr)
    assert res.stderr == "symverify: error: standard output: No space left on device\n", res.stderr


# ---- an option given twice: the first value was dropped without a word ------------------------------
@pytest.mark.parametrize("argv, message", [
    (("verify", "{c}", "{m}", "--method", "exact", "--method", "randomized"),
     "argument --method: given twice ('exact', then 'randomized'); give it once"),
    (("verify", "{c}", "{m}", "--timeout", "5", "--timeout=60"), "argument --timeout: given twice (5.0, then 60.0)"),
    (("verify", "{c}", "{m}", "--progress", "--no-progress"), "argument --progress/--no-progress: given twice"),
    (("verify", "{c}", "{m}", "--json", "--json"), "argument --json: given twice"),
    (("verify", "{c}", "{m}", "--meth", "exact", "--method", "exact"), "argument --method: given twice"),  # a prefix
    (("compile", "{c}", "-o", "{c}.a", "--output", "{c}.b"), "argument -o/--output: given twice"),
    (("prove", "--quick", "primitives", "-j", "1", "--jobs", "2"), "argument -j/--jobs: given twice"),
])
def test_an_option_given_twice_is_refused(files, capsys, argv, message):
    err = one_line_error(capsys, *(a.format(**files) for a in argv))
    assert message in err, err


def test_repeatable_options_are_still_repeatable(tmp_path, capsys):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / f"s_{d}.py").write_text('"""Nothing."""\n', encoding="utf-8")
    code, out, err = exit_code(capsys, "prove", "--list", "--dir", str(tmp_path / "a"), "--dir", str(tmp_path / "b"))
    assert code == 0 and "s_a" in out and "s_b" in out, err


def test_report_with_an_empty_output_path_names_the_flag(tmp_path, capsys):
    """``symverify report RUN.json -o ''`` (an unset variable) answered in the API's words
    (``write_report: out_path must be …``), not the flag's."""
    run = tmp_path / "run.json"
    run.write_text('{"format": "symverify.proof-run", "version": 3, "scripts": []}', encoding="utf-8")
    err = one_line_error(capsys, "report", str(run), "-o", "")
    assert err == "symverify: error: -o: expected a file path, found an empty string\n", err


# ---- '-': standard output for prove's --json/--junit; compile and report wrote a file named '-' -------
@pytest.mark.parametrize("argv, flag, hint", [
    (("compile", "{c}", "-o", "-"), "-o", "leave -o out for standard output"),
    (("compile", "{c}", "-o", "{c}.m", "--certificate", "-"), "--certificate", "./-"),
    (("report", "{run}", "-o", "-"), "-o", "./-"),
])
def test_a_dash_output_is_refused_not_written_as_a_file_named_dash(files, tmp_path, capsys, monkeypatch, argv, flag, hint):
    run = tmp_path / "run.json"
    run.write_text('{"format": "symverify.proof-run", "version": 3, "scripts": []}', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, *(a.format(run=run, **files) for a in argv))
    assert f"{flag} -: expected a file path" in err and hint in err, err
    assert not (tmp_path / "-").exists()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789+-_ .eE\t\n١٣３²x"), min_size=1, max_size=12))
def test_number_options_read_exactly_the_plain_ascii_forms(text):
    """``_integer`` takes what ``int()`` takes only when it is an optional sign and ASCII digits,
    and then the same value; ``_seconds`` takes what ``float()`` takes only in plain decimal form."""
    import argparse

    from symverify.cli import _integer, _seconds

    plain_int = re.fullmatch(r"[+-]?[0-9]+", text) is not None
    try:
        got = _integer(text)
    except argparse.ArgumentTypeError:
        assert not plain_int
    else:
        assert plain_int and got == int(text)
    plain_float = re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", text) is not None
    try:
        secs = _seconds(text)
    except argparse.ArgumentTypeError:
        assert not plain_float or not 0 < float(text) < float("inf")
    else:
        assert plain_float and secs == float(text) and 0 < secs < float("inf")


# ---- a side over a size limit: the error said "verify lhs", not which file -------------------------
@pytest.mark.parametrize("side", ["lhs", "rhs"])
def test_a_side_over_a_limit_names_its_file(files, tmp_path, capsys, side):
    huge = tmp_path / "huge.json"
    huge.write_text(CIRCUIT.replace('"n": 1', '"n": 1000000000', 1), encoding="utf-8")
    argv = ("verify", str(huge), files["c"]) if side == "lhs" else ("verify", files["c"], str(huge))
    err = one_line_error(capsys, *argv)
    assert err.startswith(f"symverify: error: {huge}: verify {side}: circuit ") and "MAX_INPUTS" in err, err


def test_sides_of_different_shapes_name_both_files(files, tmp_path, capsys):
    wide = tmp_path / "wide.json"
    wide.write_text(CIRCUIT.replace('"d": 2', '"d": 3', 1), encoding="utf-8")
    err = one_line_error(capsys, "verify", str(wide), files["c"])
    assert err.startswith(f"symverify: error: {wide} (lhs) and {files['c']} (rhs): verify: the two sides have "
                          "different shapes: lhs circuit"), err
