"""The memory-limited child (``symverify.kernel.provers.guard.run_limited``): its budget when it is
started from another limited child, a limit too large to set, a library that does not fit in it, and
the processes started below it."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time

import pytest
from processes import assert_gone, fork_then_die

from symverify.kernel.provers import guard
from symverify.kernel.provers.guard import run_limited

MIB = 1 << 20


def _alloc(n: int) -> int:
    return len(bytes(n))  # calloc'd: address space, no pages touched


def _alloc_then_nested(held: int, more: int, memory: int) -> str:
    block = bytes(held)
    inner = run_limited(_alloc, (more,), memory=memory, timeout=60)
    del block
    return inner.status


def test_a_nested_limited_child_gets_what_is_left_of_the_outer_budget():
    """A limited child that starts a limited child of its own (a certificate checked whole in a child,
    its stages in children of it): the inner one got the whole budget again, so the pair used up to
    twice ``memory_limit``; it now gets at most what is left of its parent's."""
    budget = 512 * MIB
    alone = run_limited(_alloc, (384 * MIB,), memory=budget, timeout=60)
    assert (alone.status, alone.value) == ("ok", 384 * MIB), alone
    out = run_limited(_alloc_then_nested, (384 * MIB, 384 * MIB, budget), memory=budget, timeout=60)
    assert (out.status, out.value) == ("ok", "memory"), out
    out = run_limited(_alloc_then_nested, (64 * MIB, 64 * MIB, budget), memory=budget, timeout=60)
    assert (out.status, out.value) == ("ok", "ok"), out


def test_a_memory_limit_beyond_what_the_system_can_set_is_no_limit():
    """``memory_limit=2**200`` ended the child with an ``OverflowError`` before it ran (an ``unknown``
    verdict naming a crash); a limit that large is none."""
    out = run_limited(_alloc, (MIB,), memory=2**200, timeout=60)
    assert (out.status, out.value) == ("ok", MIB), out




def _daemon_then_sleep(path: str, seconds: float) -> int:
    """Start a process that leaves the session and double-forks (a daemon), then sleep."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                with open(path + ".tmp", "w") as fh:
                    fh.write(str(os.getpid()))
                os.rename(path + ".tmp", path)
                time.sleep(120)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    end = time.monotonic() + 30
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.05)
    time.sleep(seconds)
    return 1


@pytest.mark.parametrize("seconds, timeout, status", [(60.0, 4.0, "timeout"), (0.0, 60.0, "ok")])
def test_a_daemon_started_in_a_limited_child_ends_with_it(tmp_path, seconds, timeout, status):
    """A process started below the limited child that left its session and double-forked was missed:
    the child was killed at its timeout (or ended with its result) and the daemon went on, an orphan
    with no deadline and no memory limit. The child reaps its orphans, and every process below it is
    killed when it ends (Linux: read from /proc)."""
    if not os.path.exists(f"/proc/{os.getpid()}/stat"):
        pytest.skip("no /proc to see the processes")
    path = str(tmp_path / "pid")
    out = run_limited(_daemon_then_sleep, (path, seconds), memory=1 << 30, timeout=timeout)
    assert out.status == status, out
    assert_gone(int(open(path).read()), "the daemon outlived the limited child")


def _unmapped_extension() -> str | None:
    """An extension module whose shared object this process has not loaded (a fork shares what is)."""
    import importlib.util
    import sys

    with open("/proc/self/maps") as fh:
        maps = fh.read()
    for name in ("_lzma", "_bz2", "_sqlite3", "_curses", "readline", "_dbm", "_gdbm", "_tkinter", "_ctypes_test",
                 "_testcapi", "_xxtestfuzz", "xxlimited"):
        spec = importlib.util.find_spec(name) if name not in sys.modules else None
        if spec is not None and spec.origin and spec.origin.endswith(".so") and spec.origin not in maps:
            return name
    return None


def _load(name: str) -> str:
    import importlib

    importlib.import_module(name)
    return name


def test_a_library_that_does_not_fit_in_the_limit_is_a_memory_stop():
    """A module the child must load (python-flint, where the parent had not imported it) fails for want
    of address space under a small ``memory_limit``: the ImportError reached the caller as
    BackendUnavailableError ("pip install python-flint") though it is installed. It is a memory stop."""
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("no /proc/self/maps to find an extension module not loaded yet")
    name = _unmapped_extension()
    if name is None:
        pytest.skip("every candidate extension module is loaded already")
    out = run_limited(_load, (name,), memory=1, timeout=60)
    assert out.status == "memory", out
    assert out.detail.startswith("a library could not be loaded within the memory limit"), out
    assert run_limited(_load, (name,), memory=1 << 30, timeout=60).value == name


def _group_signals_by_pidfd() -> bool:
    """Whether this kernel signals a process group through a pidfd (``PIDFD_SIGNAL_PROCESS_GROUP``, Linux ≥ 6.9)."""
    try:
        fd = os.pidfd_open(os.getpid())
    except (AttributeError, OSError):
        return False
    try:
        signal.pidfd_send_signal(fd, 0, None, 4)  # signal 0 to the group this process leads: a check only
    except OSError as e:  # ESRCH: it leads none; EINVAL: an unknown flag
        return e.errno != errno.EINVAL
    finally:
        os.close(fd)
    return True




@pytest.mark.skipif(not _group_signals_by_pidfd(), reason="needs PIDFD_SIGNAL_PROCESS_GROUP (Linux ≥ 6.9)")
def test_the_orphans_of_a_killed_child_are_killed_though_another_thread_reaped_it(tmp_path, monkeypatch):
    """``multiprocessing`` reaps every ended child of the process whenever any thread starts a
    ``Process`` or asks ``active_children()``: when that came between the child's death and the group
    kill, the group was left (its number may have been another group's by then) and the orphan the
    child forked went on. The group is signalled through the child's pidfd, held from its start."""
    import multiprocessing as mp

    real = guard._ready

    def then_another_thread_reaps(*args, **kwargs):
        ready = real(*args, **kwargs)
        time.sleep(0.2)  # the child has ended: another thread's Process.start() reaps it now
        mp.active_children()
        with pytest.raises(ChildProcessError):
            os.waitid(os.P_PID, args[1].pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return ready

    monkeypatch.setattr(guard, "_ready", then_another_thread_reaps)
    path = str(tmp_path / "pid")
    try:
        out = run_limited(fork_then_die, (path,), memory=1 << 30, timeout=60, what="the search")
        assert out.status == "crashed" and "killed by signal 9" in out.detail, out
        assert_gone(int(open(path).read()), "the orphan of a child reaped by another thread went on")
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(open(path).read()), signal.SIGKILL)


def _raise_the_limit_then_allocate(n: int) -> str:
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    try:
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except ValueError as e:
        return f"refused: {e}"
    return f"raised from {soft}: {len(bytearray(n))} bytes allocated"


def test_the_computation_cannot_raise_its_memory_limit():
    """Only the soft ``RLIMIT_AS`` was lowered: the computation could raise it back to the hard limit
    (unlimited as a rule) and allocate past its budget. The hard limit is lowered too."""
    import resource

    if resource.getrlimit(resource.RLIMIT_AS)[1] != resource.RLIM_INFINITY:
        pytest.skip("this process has a hard address-space limit already")
    out = run_limited(_raise_the_limit_then_allocate, (512 * MIB,), memory=256 * MIB, timeout=60)
    assert out.status == "ok" and out.value.startswith("refused: "), out


def _write_pid_and_sleep(path: str) -> None:
    with open(path + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.rename(path + ".tmp", path)
    time.sleep(120)


def test_a_child_past_its_timeout_is_killed_where_a_pidfd_cannot_be_signalled(tmp_path, monkeypatch):
    """With ``os.pidfd_open`` and no ``signal.pidfd_send_signal`` (``_kill_group`` allows for it), the
    child past its timeout was stopped through its pidfd: ``AttributeError`` came out of the caller,
    and the child ran on past its timeout. It is stopped and killed by its number."""
    import signal as signals

    if not hasattr(os, "pidfd_open"):
        pytest.skip("no os.pidfd_open here")
    monkeypatch.delattr(signals, "pidfd_send_signal", raising=False)
    path = str(tmp_path / "pid")
    try:
        out = run_limited(_write_pid_and_sleep, (path,), memory=1 << 30, timeout=2, what="the search")
        assert out.status == "timeout", out
        assert_gone(int(open(path).read()), "the child went on past its timeout")
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(open(path).read()), signal.SIGKILL)


def test_the_orphans_of_a_child_killed_as_its_timeout_came_are_killed(tmp_path, monkeypatch):
    """A child killed by a signal just as its timeout came (its end not seen before the timeout) was
    reaped by ``is_alive`` and nothing more: the process it forked, in its group, went on, an orphan
    with no deadline. What is left of the group of an ended child is killed at every end."""
    def the_timeout_comes_as_it_dies(msg, proc, *args, **kwargs):
        while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            time.sleep(0.01)
        return False  # the timeout, at the moment the child died

    monkeypatch.setattr(guard, "_ready", the_timeout_comes_as_it_dies)
    path = str(tmp_path / "pid")
    try:
        out = run_limited(fork_then_die, (path,), memory=1 << 30, timeout=60, what="the search")
        assert out.status == "timeout", out
        assert_gone(int(open(path).read()), "the orphan of a child killed as its timeout came went on")
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(open(path).read()), signal.SIGKILL)
