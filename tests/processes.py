"""Process helpers shared by the tests that check no process outlives a run (Linux ``/proc``)."""

from __future__ import annotations

import os
import signal
import time


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie), read from ``/proc``."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except OSError:
        return False


def assert_gone(pid: int, message: str, wait: float = 10.0) -> None:
    """Fail with ``message`` unless ``pid`` ends within ``wait`` seconds; a survivor is killed."""
    end = time.monotonic() + wait
    while running(pid) and time.monotonic() < end:
        time.sleep(0.1)
    try:
        assert not running(pid), message
    finally:
        if running(pid):
            os.kill(pid, signal.SIGKILL)


def fork_then_die(path: str) -> None:
    """Fork a process that writes its pid to ``path`` (atomically) and sleeps two minutes, holding
    whatever the caller's fds hold (a limited child's pipes), then SIGKILL the caller itself once
    ``path`` exists: an orphan in the caller's process group, left by a process killed by a signal."""
    pid = os.fork()
    if pid == 0:
        with open(path + ".tmp", "w") as fh:
            fh.write(str(os.getpid()))
        os.rename(path + ".tmp", path)
        time.sleep(120)
        os._exit(0)
    while not os.path.exists(path):
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGKILL)
