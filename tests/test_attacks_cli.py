"""Attacks on the ``symverify`` command line: bad flag values and hostile run files are one line
``symverify: error: …`` on stderr, no traceback, exit 3 (docs/formats.md, exit codes)."""

import os

import pytest
from cases import SQUARE_C, SQUARE_M

from symverify.cli import main
from symverify.ir.serialize import dump_file


@pytest.fixture
def files(tmp_path):
    paths = {"c": str(tmp_path / "c.json"), "m": str(tmp_path / "m.json")}
    dump_file(SQUARE_C, paths["c"])
    dump_file(SQUARE_M, paths["m"])
    return paths


def exit_code(capsys, *argv):
    """``main``'s exit code whether it returns it or argparse exits with it, and stdout, stderr."""
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line_error(capsys, *argv):
    code, _, err = exit_code(capsys, *argv)
    assert code == 3, (code, err)
    assert err.startswith("symverify: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ---- argparse's own errors: one line, not the usage text and then the error ----------------------
@pytest.mark.parametrize("argv, message", [
    (("verify", "{c}", "{m}", "--trials", "1.5"), "argument --trials: expected an integer (digits 0-9, an optional sign), found '1.5'"),
    (("verify", "{c}", "{m}", "--method", "magic"), "argument --method: invalid choice: 'magic'"),
    (("verify", "{c}", "{m}", "--seed", "1.5"), "expected an integer (digits 0-9, an optional sign) or 'fresh', found '1.5'"),
    (("compile", "{c}", "--plan", "bogus"), "argument --plan: invalid choice"),
    (("frobnicate",), "invalid choice: 'frobnicate'"),
])
def test_argparse_errors_are_one_line(files, capsys, argv, message):
    err = one_line_error(capsys, *(a.format(**files) for a in argv))
    assert message in err and "--help" in err and "usage:" not in err


# ---- --timeout: 0, negatives, NaN and inf were passed on (prove ran them as 'crashed', exit 1; NaN was ignored)
@pytest.mark.parametrize("command", [("verify", "{c}", "{m}"), ("prove", "--quick", "primitives")])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e400", "abc"])
def test_bad_timeouts_are_usage_errors(files, capsys, command, value):
    err = one_line_error(capsys, *(a.format(**files) for a in command), "--timeout", value)
    assert "argument --timeout" in err and repr(value) in err


# ---- --seed beyond what a report records -----------------------------------------------------------
def test_a_seed_beyond_63_bits_is_a_usage_error(files, capsys):
    err = one_line_error(capsys, "verify", files["c"], files["m"], "--seed", "9" * 30)
    assert "seed: expected an int within ±(2^63 − 1)" in err


# ---- `report` and `--golden` read through the strict loader ----------------------------------------
RUN = '{"format": "symverify.proof-run", "version": 2, "scripts": []}'


@pytest.mark.parametrize("text, message", [
    ("", "not valid JSON"),
    (RUN[:-1] + ', "scripts": []}', "duplicate key 'scripts'"),
    ('{"format": "symverify.proof-run", "version": 2, "scripts": [], "x": NaN}', "NaN is not a JSON number"),
    ("[" * 10_000 + "]" * 10_000, "MAX_JSON_DEPTH"),
    (b"\xff" + RUN.encode(), "not UTF-8 text: byte 0xff at offset 0"),
])
@pytest.mark.parametrize("command", ["report", "golden"])
def test_hostile_run_files_are_one_line_errors(tmp_path, capsys, text, message, command):
    path = tmp_path / "run.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    argv = (["report", str(path), "-o", str(tmp_path / "r.html")] if command == "report"
            else ["prove", "--quick", "primitives", "--golden", str(path)])
    err = one_line_error(capsys, *argv)
    assert message in err and str(path) in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", ["report", "golden"])
def test_run_files_that_are_not_regular_files_are_refused_not_read_forever(tmp_path, capsys, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "a character device"), (str(fifo), "a FIFO"), (str(tmp_path), "a directory")):
        argv = (["report", path, "-o", str(tmp_path / "r.html")] if command == "report"
                else ["prove", "--quick", "primitives", "--golden", path])
        err = one_line_error(capsys, *argv)
        assert f"expected a regular file, found {kind}" in err


# ---- sweep: a width no circuit can have crashed the script (OverflowError) instead of a usage error --
def test_sweep_width_beyond_max_inputs_is_a_usage_error(capsys):
    err = one_line_error(capsys, "sweep", "thm_h21", "--widths", "9" * 20)
    assert "--widths" in err and "MAX_INPUTS" in err


# ---- sweep: a huge depth ran until the timeout (no gate limit applied to the generated circuits) --
def test_sweep_depth_beyond_max_gates_is_a_usage_error(capsys):
    err = one_line_error(capsys, "sweep", "thm_h21", "--depths", str(10**8))
    assert "depth 100000000" in err and "MAX_GATES = 16777216" in err
    err = one_line_error(capsys, "sweep", "thm_h21", "--widths", "8", "--depths", str(3 * 10**6))
    assert "width 8 and depth 3000000" in err and "24000000 gates" in err


# ---- an output that is a device: a write that fails names the flag and the path ---------------------
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", [("prove", "--quick", "primitives_handwritten", "--json"), ("compile", "{c}", "-o")])
def test_a_device_that_refuses_the_write_is_named(files, capsys, command):
    """``--json /dev/full`` printed ``symverify: error: : No space left on device`` (no flag, no path)."""
    code, _, err = exit_code(capsys, *(a.format(**files) for a in command), "/dev/full")
    last = err.strip().splitlines()[-1]
    assert code == 3 and "Traceback" not in err, (code, err)
    assert last.startswith("symverify: error: ") and "/dev/full" in last and "No space left on device" in last, err
    if command[0] == "prove":
        assert last == "symverify: error: --json /dev/full: cannot write there (No space left on device)", err


# ---- an unknown option points to the subcommand's own --help -------------------------------------
@pytest.mark.parametrize("argv, message", [
    (("sweep", "thm_h21", "--quick"), "unrecognized arguments: --quick (see symverify sweep --help)"),
    (("prove", "--bogus", "primitives"), "unrecognized arguments: --bogus (see symverify prove --help)"),
    (("report", "run.json", "-x"), "unrecognized arguments: -x (see symverify report --help)"),
])
def test_an_unknown_option_names_the_subcommands_help(capsys, argv, message):
    assert message in one_line_error(capsys, *argv)
