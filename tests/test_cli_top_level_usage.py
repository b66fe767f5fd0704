"""The command line before any command: an unknown option is named (not only "a command is
required"), and ``--version`` takes no other argument; both are one-line usage errors (exit 3)."""

from __future__ import annotations

import pytest

from symverify._version import __version__
from symverify.cli import main


def _usage_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 3 and err.count("\n") == 1 and err.startswith("symverify: error: "), err
    return err


@pytest.mark.parametrize("flag", ["--bogus", "-x", "--jsn"])
def test_an_unknown_option_without_a_command_is_named(capsys, flag):
    err = _usage_error(capsys, [flag])
    assert f"expected a command (verify, info, compile, prove, sweep, report), found {flag}" in err


def test_no_arguments_says_a_command_is_required(capsys):
    err = _usage_error(capsys, [])
    assert "the following arguments are required: command (one of verify, info, compile, prove, sweep, report)" in err


@pytest.mark.parametrize(("argv", "found"), [
    (["--version", "extra"], "extra"),
    (["--version", "--version"], "--version"),
    (["--version", "verify", "a.json", "b.json"], "verify a.json b.json"),
    (["--vers", "x\ny"], "x\\ny"),
])
def test_version_with_another_argument_is_a_usage_error(capsys, argv, found):
    err = _usage_error(capsys, argv)
    assert f"argument --version: expected no other arguments, found {found} " in err
    assert __version__ not in err.replace("symverify --help", "")


@pytest.mark.parametrize("argv", [["--version"], ["--vers"]])
def test_version_alone_prints_it(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0 and capsys.readouterr().out == f"symverify {__version__}\n"
