"""Run a memory-hungry computation in a child process with an address-space limit and a timeout.

FLINT (and symengine) abort the whole process on memory exhaustion (SIGABRT, "Unable to
allocate memory"); this cannot be caught as ``MemoryError``. Exact expansion
therefore runs here when its size estimate is large: the child sets ``RLIMIT_AS`` to its current
address space plus the budget, so an over-budget expansion kills only the child, and the caller
turns that into an ``unknown`` verdict, never a crash. The limit is never raised above one the
process already has: a limited child started inside another gets at most what is left of its
parent's budget (the pair stays within one ``memory``), and a ``ulimit -v`` is kept.

No process started below the child outlives it (Linux): the child dies with the thread that started
it (``PR_SET_PDEATHSIG``), reaps its orphans (``PR_SET_CHILD_SUBREAPER``, so a process that left its
session or double-forked stays below it), and when it ends, by its result, its timeout or a crash,
every process below it is stopped and killed (read from ``/proc``). One gap is left: when the
process that called :func:`run_limited` is itself killed, the child dies, but orphans of the child
pass to init. Elsewhere only the child itself is killed.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Limited", "run_limited"]


@dataclass(frozen=True)
class Limited:
    """How the child ended: ``ok`` (``value`` holds its result), ``memory``, ``timeout`` or ``crashed``."""

    status: str
    value: Any = None
    detail: str = ""


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _prctl(option: int, arg: int) -> bool:
    import ctypes

    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # no prctl (not Linux)
        return False


def _die_with(parent: int) -> None:
    """Ask Linux to kill this child when the thread that started it ends (``PR_SET_PDEATHSIG``; that
    thread waits in :func:`run_limited` while the child lives): a parent killed at its own timeout (a
    certificate checked whole in a limited child, whose stages run in children of it) runs no exit
    handler, and its child went on, an orphan with no deadline. Elsewhere nothing is asked."""
    if not _prctl(1, signal.SIGKILL):  # PR_SET_PDEATHSIG = 1
        return
    if os.getppid() != parent:  # the parent ended before the request was made
        os._exit(1)


_MAX_RLIMIT = (1 << 63) - 1
"""Linux reads an ``rlim_t`` (64 bits unsigned; ``RLIM_INFINITY`` is all ones); Python's ``setrlimit``
a C long: a limit from here up is none (not an ``OverflowError`` that ended the child)."""


def _reap_orphans() -> None:
    """Make this child the reaper of its orphans (Linux ``PR_SET_CHILD_SUBREAPER`` = 36): a process
    started below it that leaves its session or double-forks (``setsid``, a daemon) stays below it
    instead of passing to init, so :func:`_kill_below` finds it. Elsewhere nothing is asked."""
    _prctl(36, 1)


def _below(pid: int) -> list[int]:
    """The processes below ``pid``, read from every ``/proc/PID/stat``'s parent (Linux); none without /proc."""
    kids: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            try:
                with open(f"/proc/{name}/stat") as fh:  # "pid (comm) state ppid ...": comm may hold anything
                    kids.setdefault(int(fh.read().rsplit(")", 1)[1].split()[1]), []).append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    found: list[int] = []
    todo = [pid]
    while todo:
        more = kids.get(todo.pop(), [])
        found += more
        todo += more
    return found


def _kill_below(pid: int) -> None:
    """SIGKILL every process below ``pid``: each is stopped first (SIGSTOP) and the tree read again
    until nothing new appears, so none forks a process the kill misses; ``pid`` itself is left."""
    stopped: set[int] = set()
    while True:
        new = [p for p in _below(pid) if p not in stopped]
        if not new:
            break
        for p in new:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGSTOP)
        stopped.update(new)
    for p in stopped:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


def _unloadable(e: BaseException | None) -> str:
    """The loader's message when ``e`` (or an exception it was raised from) is an ImportError for want
    of address space (glibc's "failed to map segment", ENOMEM): a library the parent had not loaded
    does not fit in the limit. ``BackendUnavailableError`` ("pip install python-flint") said a module
    was missing that is installed."""
    while e is not None:
        if isinstance(e, ImportError) and any(m in str(e).lower() for m in ("failed to map segment", "cannot allocate memory")):
            return str(e)[:200]
        e = e.__cause__ or e.__context__
    return ""


def _child(conn: Any, memory: int, errfile: str, fn: Callable[..., Any], args: tuple[Any, ...], parent: int,
           what: str) -> None:
    _die_with(parent)
    try:  # FLINT's abort message (stdout) and any fault dump go to a file the parent reads, not the terminal
        import faulthandler

        faulthandler.disable()
        fd = os.open(errfile, os.O_WRONLY | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass
    _reap_orphans()
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _vm_size() + memory
        for cap in (soft, hard):  # never above a limit this process already has: a limited child's child
            if cap != resource.RLIM_INFINITY:  # gets what is left of that child's budget, not a whole budget again
                limit = min(limit, cap)
        if limit < _MAX_RLIMIT:  # a larger limit (memory_limit=2**200) is no limit
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass
    try:
        conn.send(("ok", fn(*args), ""))
    except MemoryError:
        conn.send(("memory", None, f"MemoryError in the process running {what}"))
    except BaseException as e:
        if _unloadable(e):
            conn.send(("memory", None, f"a library could not be loaded within the memory limit ({_unloadable(e)})"))
            return
        try:
            conn.send(("error", e, repr(e)))
        except Exception:
            conn.send(("error", None, repr(e)))
    finally:
        conn.close()
        _kill_below(os.getpid())  # what fn started goes with it, even a process that left its session


_TAIL_BYTES = 1 << 16
"""How much of the end of a child's log :func:`_tail` reads (the log may hold gigabytes of output)."""


def _tail(path: str) -> str:
    """The last two non-empty lines of the child's log (its stdout and stderr, where FLINT's abort
    message comes last), read from its last :data:`_TAIL_BYTES` bytes only, their last 200 characters."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _TAIL_BYTES))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    if size > _TAIL_BYTES:
        text = text.partition("\n")[2]  # the first line read may be cut
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    last = " ".join(lines[-2:])
    return f": {last if len(last) <= 200 else '…' + last[-199:]}" if lines else ""


def _death(code: int | None, memory: int, what: str) -> str:
    """Why the child running ``what`` (a noun phrase: "the expansion", "the z3 query", ...) ended
    without a result: ``code`` is its exit status (``-N``: killed by signal ``N``)."""
    who = f"the process running {what}"
    if code == -signal.SIGABRT:
        return f"{who} aborted (SIGABRT; FLINT aborts when it cannot allocate within the limit of {memory} bytes)"
    if code is not None and code < 0:
        return f"{who} was killed by signal {-code} (memory limit {memory} bytes)"
    return f"{who} exited with code {code} before sending a result (memory limit {memory} bytes)"


_SLICE = 86_400.0
"""The longest single wait (one day): ``poll(2)`` takes at most ``2^31 − 1`` ms, about 24.8 days."""


def _ready(conn: Any, timeout: float | None) -> bool:
    """Whether ``conn`` has a result (or hit EOF) within ``timeout`` seconds (None: no limit),
    waiting in slices of at most :data:`_SLICE` so that any finite timeout, even ``1e300`` s, can be
    waited for (one ``poll`` of more than ~24.8 days raises ``OverflowError``)."""
    if timeout is None:
        return bool(conn.poll(None))
    end = time.monotonic() + max(timeout, 0.0)
    while True:
        left = end - time.monotonic()
        if conn.poll(min(max(left, 0.0), _SLICE)):
            return True
        if left <= _SLICE:
            return False


_STARTING = threading.Lock()


def _fresh_lock() -> None:
    """A forked process copies :data:`_STARTING` as it was, held if a thread was inside :func:`_start`
    (its own child, or a fork by any other thread): it starts with a fresh one, never released otherwise."""
    global _STARTING
    _STARTING = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock)


def _start(proc: Any) -> None:
    """``proc.start()``, also from a daemonic process (a Dask worker: ``multiprocessing`` refuses
    it children, and a stage planned into a limited process was lost there). The flag is lifted
    only while the child starts (the fork), under a lock; the child is daemonic itself, so the
    parent's exit ends it as before (``multiprocessing``'s exit handler).

    It cannot be scoped to this thread: ``Process.start`` reads the flag of the process, not of the
    thread, and a start without it would copy ``multiprocessing``'s private start-up. So during
    that window another thread of a daemonic process sees ``current_process().daemon`` False, may
    start a process ``multiprocessing`` would refuse, and a ``Process`` it creates without
    ``daemon=`` is not daemonic. None of this touches a limited child: each is created with
    ``daemon=True`` and started under the lock (one at a time), and outside a daemonic process
    (everywhere but a Dask worker) nothing is lifted."""
    me = mp.current_process()
    with _STARTING:
        daemonic = me.daemon
        if daemonic:
            me.daemon = False
        try:
            proc.start()
        finally:
            if daemonic:
                me.daemon = True


def _context() -> Any:
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else "spawn")


def run_limited(fn: Callable[..., Any], args: tuple[Any, ...], *, memory: int, timeout: float | None,
                what: str = "the computation") -> Limited:
    """``fn(*args)`` in a child limited to ``memory`` extra bytes of address space and ``timeout`` s.

    ``what`` names what the child does ("the expansion", "the exact re-check of a counterexample",
    ...): the messages of a child that dies or fails say "the process running <what>".

    An exception raised by ``fn`` in the child is re-raised here (so malformed input still
    raises); running out of memory, being killed or aborting, and the timeout are reported.
    """
    ctx = _context()
    parent, child = ctx.Pipe(duplex=False)
    fd, errfile = tempfile.mkstemp(prefix="symverify-guard-", suffix=".log")
    os.close(fd)
    proc = ctx.Process(target=_child, args=(child, memory, errfile, fn, args, os.getpid(), what),
                       daemon=True)
    _start(proc)
    child.close()
    try:
        ready = _ready(parent, timeout)
        if not ready:
            return Limited("timeout", detail=f"no result within {timeout:.3g} s" if timeout is not None else "no result")
        try:
            status, value, detail = parent.recv()
        except (EOFError, OSError):
            proc.join(5)
            return Limited("crashed", detail=_death(proc.exitcode, memory, what) + _tail(errfile))
    finally:
        if proc.is_alive():
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGSTOP)  # it starts nothing more while its tree is killed
            _kill_below(proc.pid)
            proc.kill()
        proc.join(5)
        parent.close()
        with contextlib.suppress(OSError):
            os.unlink(errfile)
    if status == "error":
        if isinstance(value, BaseException):
            raise value
        raise RuntimeError(f"the process running {what} failed: {detail}")
    return Limited(status, value, detail)
