"""Run a memory-hungry computation in a child process with an address-space limit and a timeout.

FLINT (and symengine) abort the whole process on memory exhaustion (SIGABRT, "Unable to
allocate memory"); this cannot be caught as ``MemoryError``. Exact expansion
therefore runs here when its size estimate is large: the child sets ``RLIMIT_AS`` to its current
address space plus the budget, so an over-budget expansion kills only the child, and the caller
turns that into an ``unknown`` verdict, never a crash. The limit is never raised above one the
process already has: a limited child started inside another gets at most what is left of its
parent's budget (the pair stays within one ``memory``), and a ``ulimit -v`` is kept.
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


def _die_with(parent: int) -> None:
    """Ask Linux to kill this child when the thread that started it ends (``PR_SET_PDEATHSIG``; that
    thread waits in :func:`run_limited` while the child lives): a parent killed at its own timeout (a
    certificate checked whole in a limited child, whose stages run in children of it) runs no exit
    handler, and its child went on, an orphan with no deadline. Elsewhere nothing is asked."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # no prctl (not Linux)
        return
    if os.getppid() != parent:  # the parent ended before the request was made
        os._exit(1)


_MAX_RLIMIT = (1 << 63) - 1
"""Linux reads an ``rlim_t`` (64 bits unsigned; ``RLIM_INFINITY`` is all ones); Python's ``setrlimit``
a C long: a limit from here up is none (not an ``OverflowError`` that ended the child)."""


def _child(conn: Any, memory: int, errfile: str, fn: Callable[..., Any], args: tuple[Any, ...], parent: int) -> None:
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
        conn.send(("memory", None, "MemoryError in the expansion process"))
    except BaseException as e:
        try:
            conn.send(("error", e, repr(e)))
        except Exception:
            conn.send(("error", None, repr(e)))
    finally:
        conn.close()


def _tail(path: str) -> str:
    try:
        with open(path, errors="replace") as fh:
            lines = [" ".join(line.split()) for line in fh.read().splitlines() if line.strip()]
    except OSError:
        return ""
    return f": {' '.join(lines[:2])[:200]}" if lines else ""


def _death(code: int | None, memory: int) -> str:
    if code == -signal.SIGABRT:
        return f"the expansion process aborted (SIGABRT; FLINT aborts when it cannot allocate within the limit of {memory} bytes)"
    if code is not None and code < 0:
        return f"the expansion process was killed by signal {-code} (memory limit {memory} bytes)"
    return f"the expansion process exited with code {code} before sending a result (memory limit {memory} bytes)"


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
    only while the child starts, under a lock; the child is daemonic itself, so the parent's exit
    ends it as before (``multiprocessing``'s exit handler)."""
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


def run_limited(fn: Callable[..., Any], args: tuple[Any, ...], *, memory: int, timeout: float | None) -> Limited:
    """``fn(*args)`` in a child limited to ``memory`` extra bytes of address space and ``timeout`` s.

    An exception raised by ``fn`` in the child is re-raised here (so malformed input still
    raises); running out of memory, being killed or aborting, and the timeout are reported.
    """
    ctx = _context()
    parent, child = ctx.Pipe(duplex=False)
    fd, errfile = tempfile.mkstemp(prefix="symverify-guard-", suffix=".log")
    os.close(fd)
    proc = ctx.Process(target=_child, args=(child, memory, errfile, fn, args, os.getpid()), daemon=True)
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
            return Limited("crashed", detail=_death(proc.exitcode, memory) + _tail(errfile))
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()
        with contextlib.suppress(OSError):
            os.unlink(errfile)
    if status == "error":
        if isinstance(value, BaseException):
            raise value
        raise RuntimeError(f"the expansion process failed: {detail}")
    return Limited(status, value, detail)
