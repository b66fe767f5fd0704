"""``symverify prove``/``sweep``: an output (``--json``, ``--junit``, ``--golden --update-golden``)
that names a file the run reads (a ``--dir`` script or support module, a built-in script, the
``--golden`` run compared with, the ``--scheduler`` file) is a usage error, and that file is left
as it was; writing the run there replaced a user's script with the run JSON."""

from __future__ import annotations

import argparse
import os
import re

import pytest
from test_attacks_cli import exit_code

from symverify.errors import UsageError
from symverify.scripts import runner

SCRIPT = '''from symverify.scripts.protocol import ProofResult, script_main

TITLE = "Nothing"


def run(quick=False):
    return ProofResult("mine", TITLE)


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def _proofs(tmp_path):
    d = tmp_path / "proofs"
    d.mkdir()
    (d / "mine.py").write_text(SCRIPT, encoding="utf-8")
    (d / "_helpers.py").write_text("X = 1\n", encoding="utf-8")
    return d


def _spare_inputs(args):
    from symverify.cli import _spare_inputs as check

    check(args)


def _args(**kw):
    base = {"dir": [], "json": None, "junit": None, "golden": None, "update_golden": False, "scheduler": None}
    return argparse.Namespace(**{**base, **kw})


@pytest.mark.parametrize("flag", ["--json", "--junit"])
def test_an_output_naming_a_dir_script_is_refused_and_the_script_kept(tmp_path, capsys, flag):
    d = _proofs(tmp_path)
    code, out, err = exit_code(capsys, "prove", "--dir", str(d), "mine", flag, str(d / "mine.py"))
    assert code == 3, (code, out, err)
    assert f"{flag} {d / 'mine.py'} names the proof script file {d / 'mine.py'} of --dir {d}, an input" in err
    assert (d / "mine.py").read_text(encoding="utf-8") == SCRIPT


def test_a_script_given_by_its_path_is_an_input_too(tmp_path, capsys):
    d = _proofs(tmp_path)
    code, _, err = exit_code(capsys, "prove", str(d / "mine.py"), "--json", str(d / "_helpers.py"))
    assert code == 3 and "names the proof script file" in err and "_helpers.py" in err, err
    assert (d / "_helpers.py").read_text(encoding="utf-8") == "X = 1\n"


def test_links_to_an_input_are_refused(tmp_path):
    d = _proofs(tmp_path)
    os.symlink(d / "mine.py", tmp_path / "soft.json")
    os.link(d / "mine.py", tmp_path / "hard.json")
    for out in ("soft.json", "hard.json"):
        with pytest.raises(UsageError, match=r"--json .*names the proof script file .*mine\.py of --dir"):
            _spare_inputs(_args(dir=[str(d)], json=str(tmp_path / out)))


def test_a_built_in_script_is_an_input(tmp_path):
    target = str(runner.builtin_dir() / "primitives.py")
    with pytest.raises(UsageError, match=r"--junit .*primitives\.py of the built-in scripts"):
        _spare_inputs(_args(junit=target))


def test_the_golden_run_and_the_scheduler_file_are_inputs(tmp_path):
    golden, sched = tmp_path / "golden.json", tmp_path / "scheduler.json"
    golden.write_text("{}", encoding="utf-8")
    sched.write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"--junit {golden} names the golden run --golden {golden}")):
        _spare_inputs(_args(golden=str(golden), junit=str(golden)))
    with pytest.raises(UsageError, match=re.escape(f"--json {sched} names the scheduler file --scheduler {sched}")):
        _spare_inputs(_args(scheduler=str(sched), json=str(sched)))
    d = _proofs(tmp_path)
    with pytest.raises(UsageError, match=r"--golden .*mine\.py names the proof script file"):
        _spare_inputs(_args(dir=[str(d)], golden=str(d / "mine.py"), update_golden=True))


def test_other_outputs_pass(tmp_path):
    d = _proofs(tmp_path)
    _spare_inputs(_args(dir=[str(d)], json=str(tmp_path / "run.json"), junit="-", golden=str(tmp_path / "g.json"),
                        update_golden=True, scheduler="local"))


def test_sweep_refuses_it_too(tmp_path, capsys):
    d = _proofs(tmp_path)
    code, _, err = exit_code(capsys, "sweep", "thm_h21_sweep", "--dir", str(d), "--json", str(d / "mine.py"))
    assert code == 3 and "names the proof script file" in err, err
    assert (d / "mine.py").read_text(encoding="utf-8") == SCRIPT


def _tree(tmp_path):
    """A --dir whose scripts read a sub-package's module and a data file there."""
    d = _proofs(tmp_path)
    (d / "lib").mkdir()
    (d / "lib" / "__init__.py").write_text("", encoding="utf-8")
    (d / "lib" / "gates.py").write_text("G = 1\n", encoding="utf-8")
    (d / "data").mkdir()
    (d / "data" / "table.json").write_text('{"rows": 3}\n', encoding="utf-8")
    return d


@pytest.mark.parametrize("flag", ["--json", "--junit"])
@pytest.mark.parametrize("inside", ["lib/gates.py", "lib/__init__.py", "data/table.json"])
def test_an_output_naming_any_file_in_the_dir_tree_is_refused(tmp_path, capsys, flag, inside):
    """Only the top-level ``*.py`` of a ``--dir`` were refused: the run JSON replaced a sub-package's
    module or a data file the scripts read."""
    d = _tree(tmp_path)
    before = (d / inside).read_text(encoding="utf-8")
    code, out, err = exit_code(capsys, "prove", "--dir", str(d), "mine", flag, str(d / inside))
    assert code == 3, (code, out, err)
    assert f"{flag} {d / inside} names the file {(d / inside).resolve()} inside --dir {d}" in err, err
    assert (d / inside).read_text(encoding="utf-8") == before


def test_a_link_into_the_dir_tree_and_the_golden_flag_are_refused_too(tmp_path):
    d = _tree(tmp_path)
    os.symlink(d / "data" / "table.json", tmp_path / "latest.json")
    with pytest.raises(UsageError, match=r"--json .*latest\.json names the file .*table\.json inside --dir"):
        _spare_inputs(_args(dir=[str(d)], json=str(tmp_path / "latest.json")))
    with pytest.raises(UsageError, match=r"--golden .*gates\.py names the file .*gates\.py inside --dir"):
        _spare_inputs(_args(dir=[str(d)], golden=str(d / "lib" / "gates.py"), update_golden=True))
    (d / "fifo").unlink(missing_ok=True)
    os.mkfifo(d / "fifo")  # never opened to look at it
    with pytest.raises(UsageError, match=r"--json .*fifo names the file"):
        _spare_inputs(_args(dir=[str(d)], json=str(d / "fifo")))


def test_a_run_file_written_there_before_and_new_files_pass(tmp_path, capsys):
    """A new file in the tree, and a run file (or JUnit report) this command wrote there before, are
    written as before: a golden run kept beside its scripts is updated."""
    from test_attacks_cli_runner import PASSING_SCRIPT

    d = _tree(tmp_path)
    (d / "passing.py").write_text(PASSING_SCRIPT, encoding="utf-8")
    golden, junit, run = d / "golden.json", d / "data" / "junit.xml", d / "run.json"
    for _ in range(2):  # the second time, the files exist
        code, out, err = exit_code(capsys, "prove", "--dir", str(d), "passing", "-j", "1", "--json", str(run), "--junit", str(junit),
                                   "--golden", str(golden), "--update-golden")
        assert code == 0, (code, out, err)
    assert run.read_text(encoding="utf-8").startswith('{\n  "format": "symverify.proof-run"')
    os.symlink(d / "data" / "new.json", d / "latest.json")  # a link to a file not written yet: a new file
    _spare_inputs(_args(dir=[str(d)], json=str(d / "latest.json")))
    run.write_text('{"format": "symverify.proof-result"}', encoding="utf-8")  # a script's result file is no run
    with pytest.raises(UsageError, match=r"--json .*run\.json names the file"):
        _spare_inputs(_args(dir=[str(d)], json=str(run)))
    with pytest.raises(UsageError, match=r"--junit .*golden\.json names the file"):  # not what --junit writes
        _spare_inputs(_args(dir=[str(d)], junit=str(golden)))
