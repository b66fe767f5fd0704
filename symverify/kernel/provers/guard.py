"""Run a memory-hungry computation in a child process with an address-space limit and a timeout.

FLINT (and symengine) abort the whole process on memory exhaustion (SIGABRT, "Unable to
allocate memory"); this cannot be caught as ``MemoryError``. Exact expansion
therefore runs here when its size estimate is large: the child sets ``RLIMIT_AS`` to its current
address space plus the budget, so an over-budget expansion kills only the child, and the caller
turns that into an ``unknown`` verdict, never a crash. The limit is soft and hard (an unprivileged
process cannot raise its hard limit), so the computation cannot lift it. It is never raised above one the
process already has: a limited child started inside another gets at most what is left of its
parent's budget (the pair stays within one ``memory``), and a ``ulimit -v`` is kept.

No process started below the child outlives it (Linux): the child dies with the thread that started
it (``PR_SET_PDEATHSIG``), reaps its orphans (``PR_SET_CHILD_SUBREAPER``, so a process that left its
session or double-forked stays below it), and when it ends, by its result, its timeout or a crash,
every process below it is stopped and killed (read from ``/proc``); when the child is killed by a
signal, what is left of its process group (its own) is killed, through a pidfd held from the child's
start (Linux ≥ 6.9), so also when another thread's ``Process.start`` or ``active_children`` reaped
the child first (``multiprocessing`` reaps every ended child it started then). Out of reach are:

- the processes below a child killed by a signal (SIGABRT, SIGKILL) that left its process group
  (``setsid``, ``setpgid``): their reaper, the child, is gone, and they pass to init (or the next
  subreaper above) with nothing left that names them;
- the orphans of the child when the process that called :func:`run_limited` is itself killed (the
  child dies with it, but runs no clean-up);
- on Linux before 6.9, the group of a child that another thread reaped before the group kill (its
  number may be another group's by then, so it is not signalled);
- everything but the child itself elsewhere than on Linux;
- what the computation does as the caller's user: it may signal the caller or its process group, or
  undo its own ``PR_SET_PDEATHSIG`` and ``PR_SET_CHILD_SUBREAPER`` (not its memory limit, which is hard).

The pidfd is opened by the child's number right after the fork, and kept only if ``waitid`` on it
(``WNOWAIT``) finds its process an unreaped child of this process (:func:`_pidfd`; else the child is
followed by number, as without a pidfd): a child that ended, was reaped by another thread and had its
number taken by a new process (the kernel's pid counter wrapping) in between is not mistaken for that
process. What is left: that new process being itself a child of this process (started by another
thread in the same moment), which the check cannot tell from the child.

The child's output (its stdout and stderr, fds 1 and 2, where FLINT writes its abort message, and
those of the processes it starts) goes to a pipe the caller reads while it waits, never to a file:
a child that prints without end cannot fill the disk. Of it, the first and last :data:`OUTPUT_BYTES`
/ 2 bytes are kept (``output_bytes=``), in :attr:`Limited.output`, and :attr:`Limited.output_cut`
counts the bytes left out between them; a crash's detail quotes the last lines and says when and how
much was cut. A child that writes faster than the caller reads waits for it (a full pipe).

The caller learns of the child's end from the child itself (a pidfd on Linux), not from EOF on the
pipe, which a process the child forked may hold open: a killed child is a crash at once, never a
wait for the whole timeout. Only the child answers: a copy of it that ``fn`` forked and that returns
from ``fn`` exits without sending anything. Its answer (a length, then a pickle: :func:`_send`) is read
as it comes, never by a blocking read that waits for the rest, so a child that sends part of it and
stops ends as a ``timeout``; a length beyond the child's address space, or bytes that do not unpickle,
are a crash.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import numbers
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from symverify.errors import UsageError

__all__ = ["Limited", "run_limited"]


@dataclass(frozen=True)
class Limited:
    """How the child ended: ``ok`` (``value`` holds its result), ``memory``, ``timeout`` or ``crashed``.

    ``output``: the start and end of what the child (and the processes it started) wrote to its
    stdout and stderr, at most ``output_bytes`` of it, decoded as UTF-8 (an undecodable byte as
    U+FFFD), with ``output_cut`` bytes left out between them (0: the whole output)."""

    status: str
    value: Any = None
    detail: str = ""
    output: str = field(default="", repr=False)
    output_cut: int = 0


OUTPUT_BYTES = 1 << 16
"""How much of a child's output :func:`run_limited` keeps by default: its first and its last
``OUTPUT_BYTES // 2`` bytes (the last ones hold FLINT's abort message); what lies between is counted
(:attr:`Limited.output_cut`), not kept."""


class _Output:
    """The kept start and end of a child's output, read from the pipe ``fd`` (its read end), and
    the count of the bytes between them that were left out: at most ``keep // 2`` bytes of start
    and ``keep - keep // 2`` of end are held at any time."""

    def __init__(self, fd: int, keep: int) -> None:
        self.fd, self.head_max, self.tail_max = fd, keep // 2, keep - keep // 2
        self.head, self.tail, self.cut, self.ended = bytearray(), bytearray(), 0, False

    def read(self) -> None:
        """Read what one ``read`` gives (the pipe is ready); at EOF, note that it ended."""
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.ended = True
            return
        room = self.head_max - len(self.head)
        self.head += data[:room]
        self.tail += data[max(room, 0):]
        if len(self.tail) > self.tail_max:
            self.cut += len(self.tail) - self.tail_max
            del self.tail[:len(self.tail) - self.tail_max]

    def drain(self) -> None:
        """Read what the pipe holds now, at most 64 reads (4 MiB): a process below the child that
        escaped its kill and still writes cannot keep the caller here."""
        os.set_blocking(self.fd, False)
        for _ in range(64):
            if self.ended:
                return
            before = len(self.head) + len(self.tail) + self.cut
            self.read()
            if len(self.head) + len(self.tail) + self.cut == before:
                return

    def text(self) -> str:
        return bytes(self.head + self.tail).decode("utf-8", errors="replace")

    def note(self) -> str:
        """'' when the whole output was kept, else what was cut ("; its output was cut: ...")."""
        if not self.cut:
            return ""
        return (f"; its output was cut: {self.cut} bytes of {len(self.head) + self.cut + len(self.tail)} left out "
                f"(the first {len(self.head)} and last {len(self.tail)} kept)")


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


def _child(conn: Any, memory: int, out: Any, fn: Callable[..., Any], args: tuple[Any, ...], parent: int,
           what: str) -> None:
    _die_with(parent)
    with contextlib.suppress(OSError, AttributeError):  # a group of its own, for :func:`_kill_group`
        os.setpgid(0, 0)
    try:  # FLINT's abort message (stdout) and any fault dump go to a pipe the parent reads, not the terminal
        import faulthandler

        faulthandler.disable()
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        out.close()
    except OSError:
        pass
    _reap_orphans()
    try:
        import resource
    except ImportError:  # no address-space limits here (not Unix): run unlimited, as documented
        resource = None  # type: ignore[assignment]
    if resource is not None:
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            limit = _vm_size() + memory
            for cap in (soft, hard):  # never above a limit this process already has: a limited child's child
                if cap != resource.RLIM_INFINITY:  # gets what is left of that child's budget, not a whole budget again
                    limit = min(limit, cap)
            if limit < _MAX_RLIMIT:  # a larger limit (memory_limit=2**200) is no limit
                # the hard limit too: with the soft one alone, the computation could raise it back (up to
                # the hard limit, unlimited as a rule) and run past its budget
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError) as e:  # it ran without the limit, unnoticed
            _send(conn, ("crashed", None, f"the memory limit of {memory} bytes could not be set for the process running "
                                        f"{what} ({type(e).__name__}: {e})"))
            conn.close()
            return
    me = os.getpid()
    try:
        value = fn(*args)
        if os.getpid() != me:  # a process fn forked (os.fork) returned from it: only the child answers
            os._exit(0)
        _send(conn, ("ok", value, ""))
    except MemoryError:
        if os.getpid() != me:
            os._exit(1)
        _send(conn, ("memory", None, f"MemoryError in the process running {what}"))
    except BaseException as e:
        if os.getpid() != me:
            os._exit(1)
        if _unloadable(e):
            _send(conn, ("memory", None, f"a library could not be loaded within the memory limit ({_unloadable(e)})"))
            return
        if isinstance(e, (SystemExit, KeyboardInterrupt)):  # the child's end, not an error to raise in the caller
            _send(conn, ("crashed", None, f"the process running {what} ended by {type(e).__name__}"
                                        + (f" ({e})" if str(e) else "")))
            return
        _send(conn, ("error", e if _transferable(e) else None, repr(e)))
    finally:
        conn.close()
        _kill_below(os.getpid())  # what fn started goes with it, even a process that left its session


def _send(conn: Any, message: tuple[Any, ...]) -> None:
    """Write ``message`` pickled to the pipe ``conn``, after its length (8 bytes, big-endian), as
    :class:`_Message` reads it. It is pickled before anything is written: a value that does not
    pickle raises here with the pipe untouched."""
    import pickle
    import struct

    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    for part in (struct.pack("!Q", len(data)), data):
        view = memoryview(part)
        while view:
            view = view[os.write(conn.fileno(), view):]


class _Message:
    """The child's message, read from the pipe ``fd`` as it comes (never a blocking read that
    waits for the rest, so the caller's timeout holds while the child sends): an 8-byte big-endian
    length, then that many bytes of pickle. A length above ``limit`` (the child's address space:
    no value it pickled can be larger) ends the reading at once, as does EOF."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd, self.limit, self.data, self.ended = fd, limit, bytearray(), False

    def size(self) -> int | None:
        return int.from_bytes(self.data[:8], "big") if len(self.data) >= 8 else None

    def complete(self) -> bool:
        size = self.size()
        return size is not None and len(self.data) >= 8 + size

    def oversized(self) -> bool:
        size = self.size()
        return size is not None and size > self.limit

    def done(self) -> bool:
        """Whether there is nothing more to wait for: the message is whole, too large, or ended."""
        return self.ended or self.complete() or self.oversized()

    def read(self) -> None:
        """Read what one ``read`` gives (the pipe is ready); at EOF, note that it ended."""
        size = self.size()
        want = 1 << 20 if size is None else max(8 + size - len(self.data), 1)
        try:
            chunk = os.read(self.fd, min(want, 1 << 24))
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.ended = True
        self.data += chunk

    def drain(self) -> None:
        """Read what the pipe holds once the child ended (all it wrote, since a write to a full
        pipe does not end), at most 64 reads."""
        os.set_blocking(self.fd, False)
        for _ in range(64):
            if self.done():
                return
            before = len(self.data)
            self.read()
            if len(self.data) == before and not self.ended:
                return

    def value(self) -> Any:
        """The message unpickled, read in place (a copy of the pickle first held the caller's memory
        at three times its size; unpickling copies out what it keeps)."""
        import pickle

        size = self.size()
        assert size is not None
        return pickle.loads(memoryview(self.data)[8:8 + size])


def _transferable(e: BaseException) -> bool:
    """Whether ``e`` can be pickled here and unpickled in the parent (an exception whose ``__init__``
    takes other arguments than its ``args`` pickles, then raises TypeError in the parent's ``recv``)."""
    import pickle

    try:
        pickle.loads(pickle.dumps(e))
    except Exception:
        return False
    return True


def _tail(out: _Output) -> str:
    """The last two non-empty lines of the child's output (its stdout and stderr, where FLINT's abort
    message comes last), their last 200 characters, and the note of what was cut."""
    text = bytes(out.tail if out.cut else out.head + out.tail).decode("utf-8", errors="replace")
    if out.cut:
        text = text.partition("\n")[2]  # the first line kept may be cut
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    last = " ".join(lines[-2:])
    return (f": {last if len(last) <= 200 else '…' + last[-199:]}" if lines else "") + out.note()


def _death(code: int | None, memory: int, what: str) -> str:
    """Why the child running ``what`` (a noun phrase: "the expansion", "the z3 query", ...) ended
    without a result: ``code`` is its exit status (``-N``: killed by signal ``N``; None: not known here)."""
    who = f"the process running {what}"
    if code == -signal.SIGABRT:
        return f"{who} aborted (SIGABRT; FLINT aborts when it cannot allocate within the limit of {memory} bytes)"
    if code is not None and code < 0:
        return f"{who} was killed by signal {-code} (memory limit {memory} bytes)"
    if code is None:  # its status went elsewhere: SIGCHLD ignored (the kernel reaps it), or another thread's wait
        return (f"{who} ended before sending a result, its exit status not left to read (SIGCHLD ignored, or it was "
                f"reaped elsewhere) (memory limit {memory} bytes)")
    return f"{who} exited with code {code} before sending a result (memory limit {memory} bytes)"


_SLICE = 86_400.0
"""The longest single wait (one day): ``poll(2)`` takes at most ``2^31 − 1`` ms, about 24.8 days."""


_LIVENESS = 1.0
"""Where Linux's ``pidfd_open`` is missing, how often (seconds) :func:`_ready` asks whether the child still lives."""


def _pidfd(pid: int) -> int | None:
    """A pidfd of the child ``pid`` (Linux ≥ 5.4), opened by :func:`run_limited` as soon as the child
    is started and held until the end: it names that process, not its number, so no process that
    gets the number once the child is reaped (by :func:`_exit_code`, or by ``Process.start`` or
    ``active_children`` in another thread, which reap every ended child of ``multiprocessing``) is
    waited on or signalled in its place. None where it cannot be opened.

    It is opened by number, so it is kept only if ``waitid`` on it (``P_PIDFD``, ``WNOHANG`` and
    ``WNOWAIT``: nothing is reaped) finds its process an unreaped child of this process, running or
    ended: had the child ended and been reaped between the fork and ``pidfd_open``, and its number
    gone to a process that is no child of this one, that process would otherwise have been waited on
    and signalled (stopped, its group killed) in the child's place. A pidfd the check refuses or cannot
    make (``ChildProcessError``; ``EINVAL`` before Linux 5.4) is closed, and the child is followed by
    its number, as without a pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
    try:
        os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except (AttributeError, OSError):
        os.close(fd)
        return None
    return fd


def _ready(msg: _Message, proc: Any, timeout: float | None, out: _Output | None = None, pidfd: int | None = None) -> bool:
    """Whether the child's message ``msg`` is whole (or too large, or hit EOF), or the child ``proc``
    ended, within ``timeout`` seconds (None: no limit), waiting in slices of at most :data:`_SLICE` so
    that any finite timeout, even ``1e300`` s, can be waited for (one ``poll`` of more than ~24.8 days
    raises ``OverflowError``). The message is read as it comes, so a child that sends part of it and
    stops holds the caller no longer than the timeout; the child's output is read into ``out`` as it
    comes (a full pipe would stop the child).

    The child's end counts because EOF may never come: a process the child forked holds the pipe's
    write end (and ``proc.sentinel``'s) as long as it lives, so a child killed by a signal left the
    caller waiting for its whole timeout, or for ever. The end is read from the child's ``pidfd``
    (:func:`_pidfd`), else asked every :data:`_LIVENESS` seconds."""
    from multiprocessing.connection import wait

    step = _SLICE if pidfd is not None else _LIVENESS
    end = None if timeout is None else time.monotonic() + max(timeout, 0.0)
    os.set_blocking(msg.fd, False)
    while True:
        left = step if end is None else end - time.monotonic()
        log = out if out is not None and not out.ended else None
        ready = wait([msg.fd] + ([] if pidfd is None else [pidfd]) + ([] if log is None else [log.fd]),
                     min(max(left, 0.0), step))
        read = False
        if msg.fd in ready:
            msg.read()
            read = True
            if msg.done():
                return True
        if log is not None and log.fd in ready:
            log.read()
            read = True
        if pidfd is not None and pidfd in ready:  # the child's end
            return True
        if _ended(proc):
            return True
        if end is not None and ((left <= step and not read) or time.monotonic() >= end):
            return False


def _ended(proc: Any) -> bool:
    """Whether the child ``proc`` has ended, asked without reaping it (``waitid`` with ``WNOWAIT``):
    :func:`_kill_group` kills its group only while it is an unreaped zombie, and ``proc.is_alive()``
    reaps it (so without a pidfd the orphans of a child killed by a signal went on). Where
    ``waitid`` is missing, ``proc.is_alive()``."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped already: ended
        return True
    except (AttributeError, OSError):
        return not proc.is_alive()


_PIDFD_SIGNAL_PROCESS_GROUP = 4
"""``pidfd_send_signal``'s flag (Linux ≥ 6.9) that signals the process group the pidfd's process leads."""


def _kill_group(proc: Any, pidfd: int | None = None) -> None:
    """SIGKILL what is left of the ended child ``proc``'s process group (its own, set in :func:`_child`):
    a child killed by a signal kills nothing below it, and the processes it forked, orphans now, are in
    that group unless they left it (``setsid``, ``setpgid``: see the module docstring).

    Through the child's ``pidfd`` (:func:`_pidfd`, Linux ≥ 6.9: ``PIDFD_SIGNAL_PROCESS_GROUP``) even
    once the child was reaped, by another thread's ``Process.start`` say: the pidfd names the group
    the child led, which keeps its number while a member lives, never another group given that number
    later. Elsewhere by number (``killpg``) only while the child is an unreaped zombie (``waitid`` with
    ``WNOWAIT``): once reaped, its number may belong to another process's group, so a group whose
    leader another thread reaped first is left."""
    if not _ended(proc):
        return  # still running: not a crash to clean up after
    if pidfd is not None:
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL, None, _PIDFD_SIGNAL_PROCESS_GROUP)
            return
        except ProcessLookupError:  # no process is left in the group
            return
        except (AttributeError, OSError):  # a kernel before 6.9 (EINVAL): by number, below
            pass
    try:
        if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            return
    except (AttributeError, OSError):  # reaped already (ChildProcessError), or no waitid here
        return
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


def _exit_code(proc: Any) -> int | None:
    """The ended child's exit status (``exitcode`` reaps it; ``join`` would wait on its sentinel, which
    a process it forked may hold open), waiting up to 5 s when it has not ended yet."""
    code = proc.exitcode
    if code is None:
        proc.join(5)
        code = proc.exitcode
    return code  # type: ignore[no-any-return]


def _bytes(memory: object, expected: str = "limited child memory: expected an int ≥ 0 (bytes of address space)") -> int:
    """``memory`` as a plain int ≥ 0 (a numpy integer is read by its value); a bool, a float, a
    negative or anything else is a :class:`UsageError` saying ``expected`` (``setrlimit`` refused it
    in the child, or a limit a little below 0 left the child almost no address space)."""
    import operator

    try:
        value = None if isinstance(memory, bool) else operator.index(memory)  # type: ignore[arg-type]
    except TypeError:
        value = None
    if value is None or value < 0:
        raise UsageError(f"{expected}, found {type(memory).__name__} {memory!r:.40}")
    return int(value)


def _seconds(timeout: object) -> float | None:
    """``timeout`` as seconds to wait: None (no limit), a float (``±inf`` for an int beyond a float's
    range, which no wait reaches either); NaN, a bool or anything but a number is a :class:`UsageError`."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):  # int, float, Fraction, numpy
        raise UsageError(f"limited child timeout: expected None or a number of seconds, found {type(timeout).__name__} "
                         f"{timeout!r:.40}")
    try:
        t = float(timeout)
    except OverflowError:  # an int beyond a float: no limit, or (below 0) no time
        return math.inf if timeout > 0 else -math.inf  # type: ignore[operator]
    if math.isnan(t):
        raise UsageError("limited child timeout: expected None or a number of seconds, found nan")
    return t


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
                what: str = "the computation", output_bytes: int = OUTPUT_BYTES) -> Limited:
    """``fn(*args)`` in a child limited to ``memory`` extra bytes of address space and ``timeout`` s.

    ``what`` names what the child does ("the expansion", "the exact re-check of a counterexample",
    ...): the messages of a child that dies or fails say "the process running <what>".

    An exception raised by ``fn`` in the child is re-raised here (so malformed input still
    raises; one that would not unpickle here is a RuntimeError quoting its repr; ``SystemExit`` and
    ``KeyboardInterrupt`` in the child end it, a crash, not the caller); running out of
    memory, being killed or aborting, a limit that could not be set, and the timeout are reported.

    ``memory`` is an int ≥ 0 (a limit beyond 2^63 bytes is none); ``timeout`` None (no limit) or a
    number of seconds: ``inf``, or an int beyond a float's range, is no limit, ``≤ 0`` is a
    ``timeout`` at once without a child started; NaN, a bool, another type, or a memory that is no
    such int, is a :class:`~symverify.errors.UsageError`.

    ``output_bytes`` (an int ≥ 0, default :data:`OUTPUT_BYTES`) is how much of the child's output is
    kept: its first and last ``output_bytes // 2`` bytes (:attr:`Limited.output`), the rest counted
    in :attr:`Limited.output_cut`; nothing of it is written to disk.
    """
    seconds = _seconds(timeout)
    memory = _bytes(memory)
    keep = _bytes(output_bytes, "limited child output_bytes: expected an int ≥ 0 (bytes of output to keep)")
    if seconds is not None and seconds <= 0:  # no time left: no child to start
        return Limited("timeout", detail=f"no time left (a timeout of {seconds:.3g} s)")
    ctx = _context()
    parent, child = ctx.Pipe(duplex=False)
    log, printing = ctx.Pipe(duplex=False)  # the child's stdout and stderr: read as bytes, never as messages
    out = _Output(log.fileno(), keep)
    msg = _Message(parent.fileno(), _vm_size() + memory)
    proc = ctx.Process(target=_child, args=(child, memory, printing, fn, args, os.getpid(), what), daemon=True)
    pidfd = None
    try:
        _start(proc)
        pidfd = _pidfd(proc.pid)
        child.close()
        printing.close()
        if not _ready(msg, proc, seconds, out, pidfd):
            result = Limited("timeout", detail=f"no result within {seconds:.3g} s")
        else:
            msg.drain()  # the child ended: what it sent is in the pipe
            if msg.oversized():
                result = Limited("crashed", detail=f"the process running {what} sent a result of {msg.size()} bytes, "
                                                   f"more than its address space ({msg.limit} bytes)")
            elif not msg.complete():  # the child ended (or closed the pipe) without sending it whole
                _kill_group(proc, pidfd)
                out.drain()
                result = Limited("crashed", detail=_death(_exit_code(proc), memory, what) + _tail(out))
            else:
                try:
                    status, value, detail = msg.value()
                    result = Limited(status, value, detail)
                except Exception as e:  # a value that does not unpickle here
                    result = Limited("crashed", detail=f"the result of the process running {what} could not be read "
                                                       f"back ({type(e).__name__}: {e})")
    finally:
        if proc.pid is not None:  # started (a KeyboardInterrupt may come before)
            if _ended(proc):  # not reaped first (is_alive): a child killed by a signal as its timeout came
                _kill_group(proc, pidfd)  # left the processes it forked in its group running
                _exit_code(proc)  # reaped now: join waits on its sentinel, which a process it forked may hold
            else:
                with contextlib.suppress(OSError):  # it starts nothing more while its tree is killed
                    # the child, even if another thread reaped it meanwhile; by number where a pidfd cannot be
                    # signalled (a Python with pidfd_open and no pidfd_send_signal: AttributeError left it running)
                    if pidfd is not None and hasattr(signal, "pidfd_send_signal"):
                        signal.pidfd_send_signal(pidfd, signal.SIGSTOP)
                    else:
                        os.kill(proc.pid, signal.SIGSTOP)
                _kill_below(proc.pid)
                proc.kill()
            proc.join(5)
            # its sentinel's two fds closed now: an exception raised below holds this frame in a cycle
            # (the frame holds it, its traceback the frame), which kept them open until a garbage collection
            with contextlib.suppress(ValueError):  # still running after join: they stay until then
                proc.close()
        child.close()
        parent.close()
        printing.close()
        with contextlib.suppress(OSError):
            out.drain()
        log.close()
        if pidfd is not None:
            os.close(pidfd)
    if result.status == "error":
        if isinstance(result.value, BaseException):
            raise result.value
        raise RuntimeError(f"the process running {what} failed: {result.detail}")
    return replace(result, output=out.text(), output_cut=out.cut)
