"""symverify.cli: the rarely taken paths of the command line (files that are devices, the
over-bound lines of ``info --compile``, runs that write no golden file, scripts without
instances, a run off the main thread, and the last-resort error handlers of ``main``).

Each test names the function of ``symverify/cli.py`` it is for and why its assertion bites.
"""

import os
import re
import stat
import sys
import textwrap
import threading
from dataclasses import replace

import pytest
from cases import SQUARE_C

import symverify as sv
from symverify import cli
from symverify.cli import main
from symverify.ir.serialize import dump_file


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


SCRIPTS = {
    "bare": '''
        from symverify.scripts.protocol import Instance, ProofResult, script_main

        TITLE = "One proved claim without resources"


        def run(quick=False):
            r = ProofResult("bare", TITLE)
            r.instances.append(Instance.computed("plain claim", True, "a test's computation", "exact"))
            return r


        if __name__ == "__main__":
            raise SystemExit(script_main(run))
        ''',
    "hand": '''
        from symverify.scripts.protocol import Instance, ProofResult, script_main

        TITLE = "One argued claim"


        def run(quick=False):
            r = ProofResult("hand", TITLE)
            r.instances.append(Instance.argued("general claim", "docs/theory.md § Choice (causality)", "lemma", checks=True))
            return r


        if __name__ == "__main__":
            raise SystemExit(script_main(run))
        ''',
    "empty": '''
        from symverify.scripts.protocol import Instance, ProofResult, script_main

        TITLE = "Checks nothing"


        def run(quick=False):
            return ProofResult("empty", TITLE)


        if __name__ == "__main__":
            raise SystemExit(script_main(run))
        ''',
}


@pytest.fixture
def scripts(tmp_path):
    d = tmp_path / "scripts"
    d.mkdir()
    for name, text in SCRIPTS.items():
        (d / f"{name}.py").write_text(textwrap.dedent(text))
    return str(d)


def test_json_to_a_device_writes_through_it_and_leaves_it_a_device(scripts, capsys):
    """_writable and _write: ``--json /dev/null`` is neither probed by creating a file nor replaced
    by a rename (as root, renaming the temporary file over /dev/null would turn it into a regular
    file: the stat check catches that)."""
    code, out, err = run(capsys, "prove", "--dir", scripts, "bare", "-j", "1", "--json", os.devnull)
    assert code == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert "1/1 scripts ok" in out


def test_details_of_an_instance_without_resources(scripts, capsys):
    """_print_details: an instance with no resources prints its verdict line and no empty resource
    line."""
    code, out, _ = run(capsys, "prove", "--dir", scripts, "bare", "-j", "1", "--details", "--wide")
    assert code == 0
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if "plain claim" in line)
    assert lines[k].split()[:2] == ["proved", "computed"]
    assert k + 1 == len(lines) or not lines[k + 1].startswith("      "), lines[k:k + 2]


def test_details_show_an_argued_claim_as_argued(scripts, capsys):
    """_print_details: an argued claim is never decided by the tool; its line said ``unknown`` (the
    run file's verdict field) beside the kind, where the table counts it as argued."""
    code, out, _ = run(capsys, "prove", "--dir", scripts, "hand", "-j", "1", "--details", "--wide")
    assert code == 0
    line = next(line for line in out.splitlines() if "general claim" in line)
    assert line.split()[:2] == ["argued", "argued"] and "unknown" not in line, line


def test_a_script_without_instances_is_not_ok_and_says_so(scripts, capsys):
    """_print_failures: a script that checks nothing fails with a line saying so."""
    code, out, _ = run(capsys, "prove", "--dir", scripts, "empty", "-j", "1")
    assert code == 1
    assert "empty: no instances checked" in out and "0/1 scripts ok" in out


def test_update_golden_after_a_failed_run_writes_nothing(scripts, tmp_path, capsys):
    """_run: ``--golden G --update-golden`` on a run that is not ok leaves G unwritten."""
    gold = tmp_path / "gold.json"
    code, out, _ = run(capsys, "prove", "--dir", scripts, "empty", "-j", "1", "--golden", str(gold), "--update-golden")
    assert code == 1 and "golden run not written: this run is not ok" in out
    assert not gold.exists()
    code, out, _ = run(capsys, "prove", "--dir", scripts, "bare", "-j", "1", "--golden", str(gold), "--update-golden")
    assert code == 0 and gold.exists() and "golden run written" in out


def test_prove_off_the_main_thread_installs_no_signal_handler(scripts, capsys):
    """_run: off the main thread no SIGTERM handler is installed (signal.signal would raise
    ValueError there) and none is restored; the run itself is unchanged."""
    codes = []
    t = threading.Thread(target=lambda: codes.append(main(["prove", "--dir", scripts, "bare", "-j", "1"])))
    t.start()
    t.join(120)
    assert codes == [0], capsys.readouterr().err


def test_info_compile_lists_the_resources_over_their_bound(tmp_path, capsys, monkeypatch):
    """_cmd_info: a compiled model over a stated bound gets an OVER BOUND line with the value and
    the bound (and a bound on a resource that was not measured is named alone)."""
    path = str(tmp_path / "c.json")
    dump_file(SQUARE_C, path)
    real = sv.compile(SQUARE_C, method="dense")
    over = replace(real, bounds={**real.bounds, "layers": 0})
    monkeypatch.setattr(cli, "_compile_file", lambda *a, **k: over)
    code, out, _ = run(capsys, "info", path, "--compile", "dense")
    assert code == 0
    assert f"OVER BOUND: layers={real.resources['layers']} > 0" in out
    assert "(stated bound 0)" in out


class _UnprintableError(Exception):
    def __str__(self):
        raise RuntimeError("no text")


@pytest.mark.parametrize("exc, code, match", [
    (FileNotFoundError(2, "No such file or directory", "gone.json"), 3, "symverify: error: gone.json: No such file or directory"),
    (KeyboardInterrupt(), 130, "symverify: interrupted"),
    (MemoryError(), 3, "out of memory"),
    (RecursionError(), 3, "internal error (please report it): recursion too deep"),
    (ValueError("bad\n  thing"), 3, "internal error (please report it; SYMVERIFY_TRACEBACK=1 shows where): ValueError: bad thing"),
    (_UnprintableError(), 3, "internal error (please report it; SYMVERIFY_TRACEBACK=1 shows where): _UnprintableError: "),
])
def test_main_turns_every_escaping_exception_into_one_line(tmp_path, capsys, monkeypatch, exc, code, match):
    """_main (behind main): an exception escaping a command becomes one ``symverify: error:`` line
    (or ``interrupted``, exit 130) and no traceback, even when the exception cannot be printed."""
    monkeypatch.delenv("SYMVERIFY_TRACEBACK", raising=False)

    def boom(args):
        raise exc

    monkeypatch.setattr(cli, "_cmd_info", boom)
    got, out, err = run(capsys, "info", str(tmp_path / "x.json"))
    assert got == code and out == ""
    assert match in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value, shown", [("0", False), (" off ", False), ("False", False), ("no", False), ("", False),
                                          ("1", True), ("yes", True)])
def test_traceback_setting_off_keeps_the_one_line(tmp_path, capsys, monkeypatch, value, shown):
    """``SYMVERIFY_TRACEBACK=0`` (or ``off``, ``false``, ``no``) showed the traceback, as any non-empty value did."""
    monkeypatch.setenv("SYMVERIFY_TRACEBACK", value)

    def boom(args):
        raise ValueError("bad")

    monkeypatch.setattr(cli, "_cmd_info", boom)
    if shown:
        with pytest.raises(ValueError, match="bad"):
            run(capsys, "info", str(tmp_path / "x.json"))
    else:
        got, _, err = run(capsys, "info", str(tmp_path / "x.json"))
        assert got == 3 and err.strip() == ("symverify: error: internal error (please report it; SYMVERIFY_TRACEBACK=1 "
                                            "shows where): ValueError: bad")


@pytest.mark.parametrize("value", ["maybe", "2", "ture", "1 0"])
def test_an_unrecognised_traceback_setting_is_a_warning_and_the_traceback_stays_hidden(tmp_path, capsys, monkeypatch, value):
    """``SYMVERIFY_TRACEBACK=maybe`` (any value but the off words and empty) counted as on and showed the
    traceback; it is read by the parser of ``SYMVERIFY_PROGRESS`` (``env_switch``), and since it is read
    while an error is being reported, a value it does not know is a warning naming it, then off."""
    monkeypatch.setenv("SYMVERIFY_TRACEBACK", value)

    def boom(args):
        raise ValueError("bad")

    monkeypatch.setattr(cli, "_cmd_info", boom)
    got, out, err = run(capsys, "info", str(tmp_path / "x.json"))
    assert got == 3 and out == "" and "Traceback" not in err
    assert err.splitlines() == [
        f"symverify: warning: SYMVERIFY_TRACEBACK: expected 1, true, yes or on (show the traceback of an internal error), "
        f"0, false, no or off (hide it), or empty (hide it), found {value!r} in the environment; the traceback is not shown",
        "symverify: error: internal error (please report it; SYMVERIFY_TRACEBACK=1 shows where): ValueError: bad"]


@pytest.mark.parametrize("value", [" ON ", "True", "YES"])
def test_the_traceback_setting_takes_the_word_forms_of_the_progress_setting(tmp_path, capsys, monkeypatch, value):
    monkeypatch.setenv("SYMVERIFY_TRACEBACK", value)

    def boom(args):
        raise ValueError("bad")

    monkeypatch.setattr(cli, "_cmd_info", boom)
    with pytest.raises(ValueError, match="bad"):
        run(capsys, "info", str(tmp_path / "x.json"))
    assert capsys.readouterr().err == ""


def test_prove_on_a_terminal_shows_a_live_status(scripts, capsys, monkeypatch):
    """_run (and its inner start): with stderr a terminal the run sits inside a rich status line
    that names the scripts left; the per-script lines and the exit code are the same as in a
    pipe."""
    import rich.console

    monkeypatch.setattr(rich.console.Console, "is_terminal", property(lambda self: True))
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # the spinner needs a real terminal too
    code, out, err = run(capsys, "prove", "--dir", scripts, "bare", "empty", "-j", "1")
    assert code == 1
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", err)
    assert "proving bare, empty (0/2 done)" in plain and "proving empty (1/2 done)" in plain
    assert "bare: ok 1/1 proved" in plain
    assert "empty: no instances checked" in out
