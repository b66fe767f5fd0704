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
