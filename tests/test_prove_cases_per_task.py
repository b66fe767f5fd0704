"""``prove --scheduler … --cases-per-task C`` splits only a shardable script (``SHARDABLE = True``);
for one that is not, C was ignored without a word. A run with no shardable script is refused before
any work; one with some that are not names them in a warning on standard error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from symverify.cli import main

SCRIPT = '''from symverify.scripts.protocol import Instance, ProofResult, each, script_main
{head}

def run(quick=False):
    res = ProofResult("{name}", "one computed claim per case")
    for case in each(range(3)):
        res.instances.append(Instance.computed(f"case {{case}}", True, "a comparison", "exact"))
    return res


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def _dir(tmp_path: Path) -> Path:
    d = tmp_path / "proofs"
    d.mkdir()
    (d / "split.py").write_text(SCRIPT.format(name="split", head="SHARDABLE = True\n"), encoding="utf-8")
    (d / "whole.py").write_text(SCRIPT.format(name="whole", head=""), encoding="utf-8")
    (d / "whole2.py").write_text(SCRIPT.format(name="whole2", head=""), encoding="utf-8")
    return d


@pytest.fixture
def dask_run(monkeypatch) -> list[Any]:
    """Dask's run replaced by the process pool's (the same rows), recording the split asked for."""
    from symverify.scripts import dask_backend, runner

    calls: list[Any] = []

    def run_scripts(scripts, chosen, *, quick, timeout, env, on_start, on_done, cases_per_task, **_: Any):
        calls.append((list(chosen), cases_per_task))
        return runner.run_scripts(scripts, chosen, quick=quick, jobs=1, timeout=timeout, env=env,
                                  on_start=on_start, on_done=on_done)

    monkeypatch.setattr(dask_backend, "run_scripts", run_scripts)
    return calls


def test_a_run_with_no_shardable_script_is_refused_before_the_work(tmp_path, capsys, dask_run):
    d = _dir(tmp_path)
    assert main(["prove", "--dir", str(d), "whole", "whole2", "--scheduler", "local", "--cases-per-task", "2"]) == 3
    err = capsys.readouterr().err
    assert ("--cases-per-task 2: splits a shardable script (SHARDABLE = True) into tasks of that many cases, and no "
            "script of this run is shardable (whole, whole2): expected it left out") in " ".join(err.split()), err
    assert dask_run == []


def test_a_script_that_is_not_shardable_is_named_in_a_warning(tmp_path, capsys, dask_run):
    d = _dir(tmp_path)
    assert main(["prove", "--dir", str(d), "split", "whole", "--scheduler", "local", "--cases-per-task", "2"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert ("symverify: warning: --cases-per-task 2: the proof script whole is not shardable (no SHARDABLE = True) and "
            "run as one task each") in err, err
    assert "split is not" not in err and "split," not in err
    assert dask_run == [(["split", "whole"], 2)]


def test_two_scripts_that_are_not_shardable_are_named_in_one_line(tmp_path, capsys, dask_run):
    d = _dir(tmp_path)
    assert main(["prove", "--dir", str(d), "--scheduler", "local", "--cases-per-task", "5"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning") == 1
    assert "the proof scripts whole, whole2 are not shardable" in " ".join(err.split()), err


def test_only_shardable_scripts_and_no_flag_say_nothing(tmp_path, capsys, dask_run):
    d = _dir(tmp_path)
    assert main(["prove", "--dir", str(d), "split", "--scheduler", "local", "--cases-per-task", "2"]) == 0
    assert main(["prove", "--dir", str(d), "whole", "--scheduler", "local"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert dask_run == [(["split"], 2), (["whole"], None)]
