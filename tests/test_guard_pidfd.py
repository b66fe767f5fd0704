"""The pidfd of the memory-limited child (``symverify.kernel.provers.guard``): it is opened by the
child's number right after the fork, so it is used only once ``waitid`` on it says that its process is
an unreaped child of this process. A pidfd that names another process (the child's number taken by a
new process in between: simulated here by a ``pidfd_open`` that opens a stranger's) is closed, and the
child is followed by its number, never that stranger signalled."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import pytest
from processes import running

from symverify.kernel.provers import guard
from symverify.kernel.provers.guard import run_limited

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open") or not hasattr(os, "P_PIDFD")
                                or not os.path.exists("/proc/self/stat"),
                                reason="needs Linux pidfds (pidfd_open, waitid P_PIDFD) and /proc")


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0]


@pytest.fixture
def stranger():
    """A process that is no child of this one (its parent exited: it passed to init or a subreaper),
    leading a process group and a session of its own; killed at the end through a pidfd."""
    started = subprocess.run(
        [sys.executable, "-c", "import subprocess as s; p = s.Popen(['sleep', '120'], start_new_session=True, "
         "stdin=s.DEVNULL, stdout=s.DEVNULL, stderr=s.DEVNULL); print(p.pid)"],
        capture_output=True, text=True, check=True, timeout=60)
    pid = int(started.stdout)
    fd = os.pidfd_open(pid)
    with pytest.raises(ChildProcessError):  # not a child of this process
        os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    try:
        yield pid
    finally:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        os.close(fd)


@pytest.fixture
def reused(monkeypatch, stranger):
    """``os.pidfd_open`` as if the child's number had gone to ``stranger`` before it was opened."""
    real = os.pidfd_open
    opened: list[int] = []

    def pidfd_open(pid: int, flags: int = 0) -> int:
        opened.append(pid)
        return real(stranger, flags)

    monkeypatch.setattr(os, "pidfd_open", pidfd_open)
    return opened


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _sleep() -> None:
    import time

    time.sleep(120)


def test_a_pidfd_of_another_process_is_not_used_to_kill_a_group(stranger, reused):
    """A child killed by a signal has what is left of its process group killed through its pidfd: a
    pidfd naming a stranger killed the stranger's group (the stranger with it)."""
    out = run_limited(_die, (), memory=1 << 30, timeout=60, what="the search")
    assert reused, "the child's pidfd was not opened"
    assert out.status == "crashed" and "killed by signal 9" in out.detail, out
    assert running(stranger), "a process named by a pidfd of the wrong process was killed"


def test_a_pidfd_of_another_process_is_not_used_to_stop_the_child(stranger, reused):
    """A child past its timeout is stopped through its pidfd before its tree is killed: a pidfd naming
    a stranger stopped the stranger (for good) and left the child running until its kill by number."""
    out = run_limited(_sleep, (), memory=1 << 30, timeout=1, what="the search")
    assert reused, "the child's pidfd was not opened"
    assert out.status == "timeout", out
    assert running(stranger) and _state(stranger) not in ("T", "t"), "a stranger was stopped in the child's place"


def test_the_pidfd_of_the_child_itself_is_used():
    """The check keeps a pidfd that names the child (running, or ended and not reaped yet)."""
    child = subprocess.Popen(["sleep", "120"])
    try:
        fd = guard._pidfd(child.pid)
        assert fd is not None
        os.close(fd)
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # a zombie now, not reaped
        fd = guard._pidfd(child.pid)
        assert fd is not None
        os.close(fd)
    finally:
        child.kill()
        child.wait()


def test_a_pidfd_that_cannot_be_checked_is_not_used(monkeypatch):
    """Where ``waitid`` cannot take a pidfd (Linux before 5.4: EINVAL), the pidfd is closed, not trusted."""
    def einval(*args, **kwargs):
        raise OSError(22, "Invalid argument")

    child = subprocess.Popen(["sleep", "120"])
    try:
        monkeypatch.setattr(os, "waitid", einval)
        assert guard._pidfd(child.pid) is None
    finally:
        monkeypatch.undo()
        child.kill()
        child.wait()


def test_a_child_reaped_by_the_kernel_is_a_crash_said_as_such():
    """With SIGCHLD ignored the kernel reaps an ended child at once: its exit status is nowhere to be
    read. Such a child that died without its answer was said to have "exited with code None"."""
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        died = run_limited(_die, (), memory=1 << 30, timeout=60, what="the search")
        ok = run_limited(int, ("7",), memory=1 << 30, timeout=60, what="the search")
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert died.status == "crashed", died
    assert died.detail.startswith("the process running the search ended before sending a result, its exit status not "
                                  "left to read (SIGCHLD ignored, or it was reaped elsewhere)"), died.detail
    assert ok.status == "ok" and ok.value == 7
