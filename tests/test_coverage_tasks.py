"""symverify.scripts.tasks: the invariants of a Task, what part of a script it names, and the
rare endings of its process (a timeout, a stop before the start, a bad ``--count-cases`` answer,
an unknown signal, a process that is already gone).

Each test names the function of ``symverify/scripts/tasks.py`` it is for and why its assertion
bites.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from symverify.scripts import tasks
from symverify.scripts.tasks import Processes, Task, execute


@pytest.mark.parametrize("kw, match", [
    ({"shard": (1, 2), "cases": (0,)}, "a task is a shard, a set of cases or a count, not several"),
    ({"cases": (0,), "count": True}, "not several"),
    ({"source": "/some/dir"}, "task t: a user's script needs its path or its files"),
])
def test_task_invariants(kw, match):
    """Task.__post_init__: the runner's own invariants, internal errors."""
    with pytest.raises(ValueError, match=match):
        Task("t", **kw)


def test_part_names_what_the_task_runs():
    """Task.part and the flags argv passes for the same part."""
    assert Task("t", count=True).part() == "count"
    assert Task("t", shard=(2, 5)).part() == "shard 2/5"
    assert Task("t", cases=(3, 4)).part() == "cases 3,4"
    assert Task("t").part() == "all"
    out, root = Path("/o/r.json"), Path("/r")
    assert Task("t", shard=(2, 5)).argv(out, root)[-1] == "--shard=2/5"
    assert Task("t", cases=(3, 4), quick=True).argv(out, root)[-2:] == ["--quick", "--cases=3,4"]
    assert Task("t", count=True).argv(out, root)[-1] == "--count-cases"


def test_a_stopped_pool_starts_nothing(tmp_path):
    """Processes.run: after stop() no process is started and the answer is 'interrupted'."""
    procs = Processes()
    procs.stop()
    marker = tmp_path / "ran"
    ran = procs.run([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], tmp_path, None)
    assert ran == (None, "", "interrupted", False, "")
    assert not marker.exists()


def user_task(tmp_path, body, **kw):
    path = tmp_path / "s.py"
    path.write_text(textwrap.dedent(body))
    return Task("s", source=str(tmp_path), path=str(path), **kw)


def test_a_timeout_is_its_own_status_that_says_so(tmp_path):
    """execute: a process killed at its timeout is 'timeout' (not 'crashed') with the timeout as error."""
    t = user_task(tmp_path, "import time\ntime.sleep(60)\n", timeout=0.5)
    ans = execute(t)
    assert ans["status"] == "timeout" and ans["result"] is None
    assert ans["error"] == "timed out after 0.5 s"
    assert ans["seconds"] < 30


HEAD = '{"format": "symverify.proof-result", "version": 1, '
"""What every result file a script's process writes starts with (protocol.script_main)."""


@pytest.mark.parametrize("answer", ['{"cases": -1}', '{"cases": "3"}', '{"n": 3}', '{"cases": true}', '{"cases": 2, "n": 3}'])
def test_count_cases_needs_a_count(tmp_path, answer):
    """execute: a ``--count-cases`` answer without a non-negative int ``cases`` is a crash that
    quotes what came back."""
    body = f"""
        import sys
        out = sys.argv[sys.argv.index("--json") + 1]
        open(out, "w").write({HEAD + answer[1:]!r})
        """
    ans = execute(user_task(tmp_path, body, count=True))
    assert ans["status"] == "crashed"
    assert ans["error"] == "--count-cases: expected {\"cases\": N}, found " + answer


def test_a_count_beyond_max_cases_is_a_crash(tmp_path):
    """execute: a count of 10^12 cases made the Dask backend build tasks listing every case (memory
    without end); more than MAX_CASES is a crash naming the limit, MAX_CASES itself is read."""
    for n, status in ((10**12, "crashed"), (tasks.MAX_CASES + 1, "crashed"), (tasks.MAX_CASES, "done")):
        body = f"""
            import sys
            open(sys.argv[sys.argv.index("--json") + 1], "w").write({HEAD + f'"cases": {n}}}'!r})
            """
        ans = execute(user_task(tmp_path, body, count=True))
        assert ans["status"] == status, ans
        if status == "crashed":
            assert ans["error"] == f"--count-cases: expected at most 1000000 cases (MAX_CASES), found {n}"


def test_count_cases_accepts_zero(tmp_path):
    """The same check lets a count of 0 through (a script with no cases)."""
    body = """
        import sys
        open(sys.argv[sys.argv.index("--json") + 1], "w").write('{"format": "symverify.proof-result", "version": 1, "cases": 0}')
        """
    ans = execute(user_task(tmp_path, body, count=True))
    assert ans["status"] == "done" and ans["result"] == {"cases": 0}


def test_signal_names():
    """_signal_name: a known signal by name, an unknown number as 'signal N'."""
    assert tasks._signal_name(-9) == "SIGKILL"
    assert tasks._signal_name(-250) == "signal 250"


def test_a_stop_flag_that_cannot_be_read_does_not_stop():
    """_asks_to_stop: a flag that raises (the scheduler went away) means go on."""
    def broken():
        raise ConnectionError("scheduler gone")

    assert tasks._asks_to_stop(broken) is False
    assert tasks._asks_to_stop(lambda: 1) is True


def test_killing_a_process_that_is_already_gone_is_quiet():
    """_kill_group: the group is gone (ProcessLookupError from killpg), then the process is gone too
    (from kill): neither escapes."""
    done = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    done.wait()

    class Gone:
        pid = done.pid
        killed = False

        def poll(self):
            return 0

        def kill(self):
            Gone.killed = True
            raise ProcessLookupError

    tasks._kill_group(Gone())  # type: ignore[arg-type]
    assert Gone.killed
