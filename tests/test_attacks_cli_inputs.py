"""Attacks on the ``symverify`` command line's number options and on what its loaders say about
the files they refuse: a number ``int()``/``float()`` reads but the options' text does not say
(``1_0``, an Arabic-Indic digit, a padded value) is refused, one line and exit 3, never read as
another number."""

import pytest
from cases import SQUARE_C, SQUARE_M
from test_attacks_cli import exit_code, one_line_error

from symverify.ir.serialize import dump_file


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
