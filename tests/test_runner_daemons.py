"""A proof script's process (``symverify prove``: ``symverify.scripts.tasks.Processes.run``) and the
processes it starts: one that leaves the script's session and double-forks (a daemon) was missed by
the kill of the script's process group and outlived the run, at the script's end or its timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import assert_gone

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




def _gone(path: Path) -> None:
    assert_gone(int(path.read_text()), f"{path.stem} outlived the run")


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


SLOW_SCRIPT = '''
import os, time
from symverify.scripts.protocol import script_main

TITLE = "Sleeps with a daemon"


def run(quick=False):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open({pids!r} + "/daemon.tmp", "w") as fh:
                fh.write(str(os.getpid()))
            os.rename({pids!r} + "/daemon.tmp", {pids!r} + "/daemon.pid")
            time.sleep(120)
        os._exit(0)
    with open({pids!r} + "/script.tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.rename({pids!r} + "/script.tmp", {pids!r} + "/script.pid")
    time.sleep(120)


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def test_a_killed_prove_takes_its_scripts_and_their_daemons_with_it(tmp_path):
    """SIGKILL gives ``symverify prove`` no chance to stop its scripts: the reaper in front of each
    one dies with it and kills the script's tree, also a daemon that left the script's session."""
    proofs, pids = tmp_path / "proofs", tmp_path / "pids"
    proofs.mkdir()
    pids.mkdir()
    (proofs / "sleepy.py").write_text(SLOW_SCRIPT.format(pids=str(pids)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                      os.environ.get("PYTHONPATH", "")]))}
    proc = subprocess.Popen([sys.executable, "-m", "symverify", "prove", "sleepy", "--dir", str(proofs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        end = time.monotonic() + 60
        while not ((pids / "script.pid").exists() and (pids / "daemon.pid").exists()) and time.monotonic() < end:
            assert proc.poll() is None, "symverify prove ended before its script started"
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    try:
        _gone(pids / "script.pid")
    finally:
        _gone(pids / "daemon.pid")
