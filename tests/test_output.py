"""Logs and progress: no hard wrapping when the output is not a terminal, a progress display for long compile/verify
(off when not interactive unless asked), per-task times and automatic case groups on Dask."""

from __future__ import annotations

import io
import textwrap

import pytest

import symverify as sv
from symverify.cli import main
from symverify.errors import UsageError
from symverify.ir.serialize import dump_file
from symverify.progress import activity, wanted
from symverify.scripts.dask_backend import auto_groups, task_seconds


@pytest.fixture(autouse=True)
def _terminal(monkeypatch):
    """A live line is cut to the terminal's width (rich reads COLUMNS: the label, then the elapsed time,
    give way on a narrow one) and is drawn only where TERM has cursor control: these tests fix both
    (a test of a narrow or dumb terminal sets its own)."""
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("TERM", "xterm")


X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2)

SCRIPT = '''
from symverify.scripts.protocol import Instance, ProofResult, script_main

TITLE = "Long lines"


def run(quick=False):
    r = ProofResult("longlines", TITLE)
    name = "an instance whose name is long enough to pass eighty columns: " + "x0*x1 + x2*x3 + " * 6 + "1"
    r.instances.append(Instance.computed(name, True, "a test's computation", "exact",
                                         resources={"layers": 3, "inner_n": 1234567, "inner_d": 7654321},
                                         bounds={"layers": 4, "inner_n": 2345678}))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def test_piped_output_is_not_hard_wrapped(tmp_path, capsys):
    d = tmp_path / "scripts"
    d.mkdir()
    (d / "longlines.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    assert main(["prove", "--dir", str(d), "-j", "1", "--details"]) == 0
    out = capsys.readouterr().out
    long = [line for line in out.splitlines() if "x0*x1 + x2*x3 + x0*x1" in line]
    assert long and any("+ 1 (a test's computation)" in line for line in long), out
    details = [line for line in out.splitlines() if "inner_n=1234567 (bound 2345678" in line]
    assert details and "inner_d=7654321" in details[0]
    table = out.split("p/r/u")[0]
    assert max(len(line) for line in table.splitlines()) <= 80


def test_progress_is_off_when_not_interactive_and_on_when_asked(monkeypatch):
    monkeypatch.delenv("SYMVERIFY_PROGRESS", raising=False)
    assert wanted(None, io.StringIO()) is False
    assert wanted(True) is True and wanted(False) is False
    monkeypatch.setenv("SYMVERIFY_PROGRESS", "1")
    assert wanted(None, io.StringIO()) is True
    monkeypatch.setenv("SYMVERIFY_PROGRESS", "0")
    assert wanted(None, io.StringIO()) is False
    with pytest.raises(UsageError, match=r"progress: expected True, False or None \(automatic\), found 'yes'"):
        wanted("yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("value, shown", [("true", True), (" Yes ", True), ("ON", True), ("false", False),
                                          ("no", False), ("Off", False), ("", False)])
def test_progress_setting_takes_the_word_forms(monkeypatch, value, shown):
    """``SYMVERIFY_PROGRESS=true`` was not ``1``, so it was dropped for the automatic choice (no progress in a
    pipe) without a word; the word forms of ``SYMVERIFY_NATIVE`` are read as on and off, empty as unset."""
    monkeypatch.setenv("SYMVERIFY_PROGRESS", value)
    assert wanted(None, io.StringIO()) is shown


@pytest.mark.parametrize("value", ["2", "y", "enable", "1 0"])
def test_a_progress_setting_that_is_neither_on_nor_off_is_refused(monkeypatch, value):
    monkeypatch.setenv("SYMVERIFY_PROGRESS", value)
    with pytest.raises(UsageError, match=rf"SYMVERIFY_PROGRESS: expected 1, true, yes or on .*found '{value}'"):
        wanted(None, io.StringIO())
    assert wanted(False) is False  # an explicit choice does not read the variable


def test_a_bad_progress_setting_refused_by_a_library_call_says_how_to_decide_without_it(monkeypatch):
    """compile() and verify() in a user's process refuse a bad ``SYMVERIFY_PROGRESS`` before any work; the
    message said what the variable holds but not that it is the environment's, nor how a call can do without it."""
    import symverify as sv

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    monkeypatch.setenv("SYMVERIFY_PROGRESS", "maybe")
    with pytest.raises(UsageError, match=r"SYMVERIFY_PROGRESS: .*found 'maybe' in the environment "
                                         r"\(progress=True or False, or --progress / --no-progress, decides without"):
        sv.verify(c, c)
    assert sv.verify(c, c, progress=False).proved


def test_the_command_line_names_a_bad_progress_setting(monkeypatch, tmp_path, capsys):
    import symverify as sv
    from symverify.cli import main

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    sv.dump_file(c, str(tmp_path / "c.json"))
    monkeypatch.setenv("SYMVERIFY_PROGRESS", "yes please")
    assert main(["verify", str(tmp_path / "c.json"), str(tmp_path / "c.json")]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("symverify: error: SYMVERIFY_PROGRESS: expected"), err
    assert main(["verify", str(tmp_path / "c.json"), str(tmp_path / "c.json"), "--no-progress"]) == 0


@pytest.mark.parametrize("term", ["dumb", "unknown"])
def test_activity_on_a_terminal_without_cursor_control_prints_two_plain_lines(monkeypatch, term):
    """rich draws no live line where TERM is dumb or unknown (Emacs shells, some CI logs): asked-for
    progress printed nothing there. It prints the label, then the label with the elapsed time."""
    monkeypatch.setenv("TERM", term)
    buf = io.StringIO()
    with activity("compiling [x] something", True, stream=buf):
        pass
    assert buf.getvalue() == "compiling [x] something ...\ncompiling [x] something: 0:00:00\n"
    with activity("compiling something", False, stream=buf):
        pass
    assert buf.getvalue().count("\n") == 2


def test_prove_in_a_pipe_draws_no_spinner_even_when_colour_is_forced(tmp_path, capsys, monkeypatch):
    """FORCE_COLOR=1 (set by many CI services) made rich take the pipe for a terminal, and ``prove``
    animated its status line into the log. Colours are what FORCE_COLOR asks for; a spinner is not."""
    d = tmp_path / "scripts"
    d.mkdir()
    (d / "longlines.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)  # rich writes no colour where NO_COLOR is set
    assert main(["prove", "--dir", str(d), "-j", "1"]) == 0
    err = capsys.readouterr().err
    assert "\x1b[?25l" not in err and "proving" not in err  # no hidden cursor, no redrawn status line
    assert "longlines: \x1b[32mok\x1b[0m 1/1 proved" in err


def test_activity_shows_the_label_and_elapsed_time():
    buf = io.StringIO()
    with activity("compiling something", True, stream=buf):
        pass
    assert "compiling something" in buf.getvalue() and "0:00:0" in buf.getvalue()
    quiet = io.StringIO()
    with activity("compiling something", False, stream=quiet):
        pass
    assert quiet.getvalue() == ""


def test_compile_shows_progress_when_asked_and_nothing_otherwise(capsys, monkeypatch):
    monkeypatch.delenv("SYMVERIFY_PROGRESS", raising=False)
    sv.compile(X)
    assert capsys.readouterr().err == ""
    sv.compile(X, progress=True)
    assert "compiling <lambda> (3 gates, method kaleidoscope)" in capsys.readouterr().err
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal: the label is cut, not wrapped (a wrapped line is not erased)
    sv.compile(X, progress=True)
    err = capsys.readouterr().err
    assert "compiling <lambda>" in err and "…" in err and "kaleidoscope" not in err
    with pytest.raises(UsageError, match="progress: expected"):
        sv.compile(X, progress=1)  # type: ignore[arg-type]


def test_cli_compile_and_verify_progress_flags(tmp_path, capsys):
    path = tmp_path / "c.json"
    dump_file(X, path)
    assert main(["compile", str(path), "-o", str(tmp_path / "m.json"), "--progress"]) == 0
    assert "compiling" in capsys.readouterr().err
    assert main(["verify", str(path), str(tmp_path / "m.json"), "--progress"]) == 0
    assert "verifying" in capsys.readouterr().err
    assert main(["verify", str(path), str(tmp_path / "m.json"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_dask_rows_time_their_tasks_and_cases_are_grouped_automatically():
    assert task_seconds([{"seconds": 1.5}, {"seconds": 2.0}, {"status": "crashed"}]) == 3.5
    assert auto_groups(560, 2) == 4 and auto_groups(560, 16) == 32 and auto_groups(5, 16) == 5
    assert auto_groups(7, 0) == 2


def test_verify_shows_progress_when_asked(capsys, monkeypatch):
    monkeypatch.delenv("SYMVERIFY_PROGRESS", raising=False)
    compiled = sv.compile(X)
    capsys.readouterr()
    assert sv.verify(X, compiled).proved
    assert capsys.readouterr().err == ""
    assert sv.verify(X, compiled, progress=True).proved
    assert "verifying circuit <lambda>" in capsys.readouterr().err
    with pytest.raises(UsageError, match="progress: expected"):
        sv.verify(X, compiled, progress="on")  # type: ignore[arg-type]
