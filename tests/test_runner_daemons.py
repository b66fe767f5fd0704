"""A proof script's process (``symverify prove``: ``symverify.scripts.tasks.Processes.run``) and the
processes it starts: one that leaves the script's session and double-forks (a daemon) was missed by
the kill of the script's process group and outlived the run, at the script's end or its timeout."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from symverify.scripts.tasks import Processes

DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open("daemon.tmp", "w") as fh:
            fh.write(str(os.getpid()))
        os.rename("daemon.tmp", "daemon.pid")
        time.sleep(120)
    os._exit(0)
end = time.monotonic() + 30
while not os.path.exists("daemon.pid") and time.monotonic() < end:
    time.sleep(0.05)
time.sleep(float(sys.argv[1]))
sys.exit(int(sys.argv[2]))
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: the reaper in front of a script")


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except OSError:
        return False


def _gone(path: Path) -> None:
    pid = int(path.read_text())
    end = time.monotonic() + 10
    while _running(pid) and time.monotonic() < end:
        time.sleep(0.1)
    try:
        assert not _running(pid), "the daemon outlived the script's run"
    finally:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("seconds, timeout, code", [(0.0, 60.0, 3), (60.0, 4.0, None)])
def test_a_daemon_started_by_a_script_ends_with_its_run(tmp_path, seconds, timeout, code):
    ran = Processes().run([sys.executable, "-c", DAEMON, str(seconds), "3"], tmp_path, timeout)
    assert ran.code == code and ran.timed_out == (code is None), ran
    _gone(tmp_path / "daemon.pid")


def test_the_script_s_exit_code_and_signal_come_through(tmp_path):
    """The process in front of the script ends as the script did: its exit code, or its signal."""
    assert Processes().run([sys.executable, "-c", "raise SystemExit(5)"], tmp_path, 60).code == 5
    killed = Processes().run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
                             tmp_path, 60)
    assert killed.code == -signal.SIGSEGV, killed
