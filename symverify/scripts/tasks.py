"""A proof run's unit of work: one proof script, or some of its cases, in a fresh Python process.

A :class:`Task` names a script, a tier and a part of it (the whole script, a shard ``k/K``, a set
of case indices, or only counting the cases; see :mod:`symverify.scripts.protocol`).
:func:`execute` runs it as ``python -m symverify.proofs.NAME --json OUT ...`` (or the user's file)
and returns plain JSON, the same wherever it runs: ``status`` (``done``, ``crashed``, ``timeout``:
killed at the task's timeout, ``lost``: killed by a signal nobody here sent, or ``interrupted``),
``result`` (the script's JSON, or ``{"cases": N}`` for a count), ``error``, ``seconds``,
``version`` (symverify's, on the machine that ran it), ``build`` (its trusted base's,
:func:`~symverify.kernel.build.build_identity`) and ``host``; for a part of a script (a shard
or some cases), ``cases``: how many cases the part met; for a ``done`` task whose output was cut
(:attr:`Ran.cut`), ``cut``: what was left out (a task that did not finish says it in its ``error``). A crash, even a FLINT abort, ends one process, never the caller.
A process that ends otherwise than :func:`~symverify.scripts.protocol.script_main` ends it after
writing its result (exit code 0, or 1 for a result that is not ok) failed after it: ``crashed``
(``lost`` when killed by a signal), never its result's ``ok``.
A result whose ``name`` is not the task's (a script writing another script's result) is ``crashed``,
as is one that is not strict JSON (``NaN``, a repeated key), not a regular file of at most
:data:`~symverify.ir.limits.MAX_FILE_BYTES` bytes, read at each run (a FIFO, a link) or whose title, seconds or instances have the wrong type,
one that does not say ``"format": "symverify.proof-result"`` and a ``version`` this symverify reads
(:func:`~symverify.viz.run_format.result_version_problem`: what ``script_main`` writes), and a part
that does not say how many ``cases`` it met, or a count of more than :data:`MAX_CASES` cases.

A user's script (``--dir DIR``) runs from its file when ``path`` is set; a task for another
machine carries the ``*.py`` files of its directory instead (``files``), written to a temporary
directory there, so workers need only symverify installed.

This module imports nothing beyond the standard library, symverify's version and its build (a
standard-library module of the kernel): the process pool
of ``symverify prove`` and the Dask backend (:mod:`symverify.scripts.dask_backend`) both use it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from symverify._version import __version__
from symverify.ir import limits

__all__ = ["BUILTIN", "MAX_CASES", "Task", "Processes", "Ran", "execute", "one_line", "ship", "own_import_path"]

BUILTIN = "builtin"

MAX_CASES = 10**6
"""The most cases a ``--count-cases`` task may report: the Dask backend splits a script into tasks
that each list their cases (``--cases …``), so a count is held to what can be listed (the same
10^6 as a range of ``--cases``, :func:`~symverify.scripts.protocol.parse_indices`)."""

# Run in front of a script's process on Linux (``python -S -c _REAPER PARENT CMD...``). With PARENT
# (not "0": ``symverify prove`` or a Dask worker, either of which may be killed mid-task, SIGKILL
# included) it asks for SIGTERM when its parent dies, so it kills the script's tree as on a timeout,
# and checks that the parent is still the one that started it. It makes itself the reaper of orphans
# (PR_SET_CHILD_SUBREAPER), so a grandchild that leaves the session or double-forks stays below it,
# and runs the script as its child (which dies with it). When the script ends, or on SIGTERM (the
# runner's timeout or stop), it stops and kills every process below it (read from /proc), then ends
# as the script did: its exit code, or the same signal.
_REAPER = """import ctypes, os, signal, sys
libc = ctypes.CDLL(None)
if sys.argv[1] != "0":
    libc.prctl(1, signal.SIGTERM)
    if os.getppid() != int(sys.argv[1]):
        os._exit(137)
libc.prctl(36, 1)
def below():
    kids = {}
    for n in os.listdir("/proc"):
        try:
            with open(f"/proc/{n}/stat") as fh:
                kids.setdefault(int(fh.read().rsplit(")", 1)[1].split()[1]), []).append(int(n))
        except (OSError, ValueError, IndexError):
            pass
    out, todo = [], [os.getpid()]
    while todo:
        more = kids.get(todo.pop(), [])
        out += more
        todo += more
    return out
def end():
    stopped = set()
    while True:
        new = [p for p in below() if p not in stopped]
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                pass
        stopped.update(new)
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
def term(*_):
    end()
    os._exit(137)
signal.signal(signal.SIGTERM, term)
me = os.getpid()
pid = os.fork()
if pid == 0:
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        libc.prctl(1, signal.SIGKILL)
        if os.getppid() == me:
            os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
status = os.waitpid(pid, 0)[1]
end()
code = os.waitstatus_to_exitcode(status)
if code < 0:
    try:
        signal.signal(-code, signal.SIG_DFL)
    except (OSError, ValueError):
        pass
    os.kill(os.getpid(), -code)
os._exit(code & 255)
"""


@dataclass(frozen=True)
class Task:
    """One process of a proof run (see the module docstring).

    At most one of ``shard``, ``cases`` and ``count`` is given; none runs the whole script.
    ``env`` is added to the process's environment (a sweep's grid, :data:`~symverify.scripts.protocol.SWEEP_ENV`).
    """

    name: str
    quick: bool = False
    source: str = BUILTIN
    shard: tuple[int, int] | None = None
    cases: tuple[int, ...] | None = None
    count: bool = False
    path: str | None = None
    files: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None

    def __post_init__(self) -> None:
        if sum((self.shard is not None, self.cases is not None, self.count)) > 1:
            raise ValueError("a task is a shard, a set of cases or a count, not several")
        if self.source != BUILTIN and self.path is None and not self.files:
            raise ValueError(f"task {self.name}: a user's script needs its path or its files")

    def part(self) -> str:
        """What part of the script this is, for messages: ``cases 3,4``, ``shard 1/4``, ``count``, ``all``."""
        if self.count:
            return "count"
        if self.shard is not None:
            return f"shard {self.shard[0]}/{self.shard[1]}"
        if self.cases is not None:
            return "cases " + ",".join(map(str, self.cases))
        return "all"

    def argv(self, out: Path, root: Path) -> list[str]:
        """The command line; ``root`` is where shipped ``files`` were written."""
        if self.source == BUILTIN:
            target = ["-m", f"symverify.proofs.{self.name}"]
        elif self.files:
            target = [str(root / f"{self.name}.py")]
        else:
            target = [str(Path(str(self.path)).resolve())]
        extra = ["--quick"] if self.quick else []
        if self.shard is not None:
            extra.append(f"--shard={self.shard[0]}/{self.shard[1]}")
        if self.cases is not None:
            extra.append("--cases=" + ",".join(map(str, self.cases)))
        if self.count:
            extra.append("--count-cases")
        return [sys.executable, *target, "--json", str(out), *extra]


def ship(directory: str | Path) -> tuple[tuple[str, str], ...]:
    """The ``*.py`` files of a user's proof directory as ``(file name, text)``, to send with a task:
    regular files (or links to one) only, each byte kept as it is (a file that is not UTF-8 is
    carried with :data:`SHIPPED_ERRORS` and written back byte for byte; Python reports its
    encoding if the script imports it)."""
    return tuple((p.name, p.read_text(encoding="utf-8", errors=SHIPPED_ERRORS))
                 for p in sorted(Path(directory).glob("*.py")) if p.is_file())


SHIPPED_ERRORS = "surrogateescape"
"""How a shipped file's bytes that are not UTF-8 travel in its text (and are written back)."""


def one_line(text: str, lines: int = 6) -> str:
    """The last ``lines`` non-empty lines of ``text`` joined by `` | ``."""
    return " | ".join(line for line in text.strip().splitlines()[-lines:] if line.strip())


_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')


_CUT = re.compile(r"\n\[\.\.\. \d+ bytes left out \.\.\.\]\n")


def crash_reason(stderr: str, script: str) -> str:
    """Why a script's process failed, from its stderr in one line: for a Python traceback, the
    exception with the script's own last frame (``NAME.py:12: ValueError: …``; the innermost frame
    when the script's file is not among them), else the last two lines. Of an output cut in the
    middle (:meth:`Processes.run`) only its end is read: a frame of its start would be taken for
    the frame of an error at its end."""
    stderr = _CUT.split(stderr)[-1]
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    frames = [(m.group(1), m.group(2)) for line in lines if (m := _FRAME.match(line))]
    if not frames or _FRAME.match(lines[-1]):
        return one_line(stderr, 2)
    own = [f for f in frames if Path(f[0]).name == f"{script}.py"]
    path, number = (own or frames)[-1]
    return f"{Path(path).name}:{number}: {lines[-1].strip()}"


def own_import_path(pythonpath: str | None, links: Path | None = None) -> str:
    """``PYTHONPATH`` for a script's process: the directory this symverify is imported from first,
    then ``pythonpath``. A child's import path starts with its own directory (the temporary one of
    ``-m symverify.proofs.NAME``, or a user's script's), then ``PYTHONPATH``, then site-packages: run
    from a checkout (``python -m symverify prove`` in it, the checkout on the import path as the
    current directory), the scripts imported another installed symverify, so the run showed the
    verdicts of other code (other provers, other built-in scripts) as this one's. A symverify
    installed in site-packages is found there by every process: ``pythonpath`` alone is given.

    With ``links`` (an empty directory that lives as long as the process), the entry put first is
    ``links``, holding only a link ``symverify`` to this package, not the checkout: the checkout's
    other top-level names (``proofs``, ``tests``, ``examples``, ``setup``) would shadow a user's
    modules of those names on ``pythonpath`` (a script importing its project's ``proofs`` package
    crashed). Where no link can be made, the checkout itself. An entry holding ``os.pathsep``,
    which ``PYTHONPATH`` cannot carry, is a :class:`~symverify.errors.UsageError`.

    The entries of ``pythonpath`` are made absolute against this process's current directory (an
    empty entry: that directory), as Python read them here: the child runs in a temporary
    directory, where ``PYTHONPATH=.`` or ``src`` named another place, and a script importing a
    module of the user's project from there crashed."""
    import site

    entries = pythonpath.split(os.pathsep) if pythonpath else []
    here = ""
    if any(not os.path.isabs(p) for p in entries):  # Python reads a relative entry from the current directory, an
        try:                                         # empty one as it: this one's
            here = os.getcwd()
        except FileNotFoundError:  # removed while this process ran in it: an absolute PYTHONPATH needs none
            from symverify.errors import UsageError

            relative = next(p for p in entries if not os.path.isabs(p))
            raise UsageError(f"PYTHONPATH entry {relative!r:.200} is read from the current directory, which no longer "
                             "exists (removed while in use): cd to an existing directory, or make the entry absolute") from None
    rest = [os.path.join(here, p) if p else here for p in entries]
    root = str(Path(__file__).resolve().parents[2])  # .../symverify/scripts/tasks.py → the directory holding symverify
    sites = [*getattr(site, "getsitepackages", list)(), getattr(site, "getusersitepackages", str)()]
    if root in {str(Path(d).resolve()) for d in sites if d}:  # installed: every process finds this copy already, and
        return os.pathsep.join(rest)  # site-packages put first would shadow what a user's PYTHONPATH puts before it
    first = root
    if links is not None and (Path(root) / "symverify").is_dir():  # not inside a zip file, which a link cannot enter
        try:
            (links / "symverify").symlink_to(Path(root) / "symverify", target_is_directory=True)
            first = str(links)
        except OSError:  # no symbolic links here (Windows without the privilege): the checkout itself
            pass
    if os.pathsep in first:
        from symverify.errors import UsageError

        raise UsageError(f"the script processes import symverify from {first!r:.200}, which holds {os.pathsep!r}: "
                         "PYTHONPATH cannot name it; move it (or the temporary directory, TMPDIR) to a path without it")
    return os.pathsep.join([first, *(p for p in rest if p not in (root, first))])


class Ran(NamedTuple):
    """How a child process ended (:meth:`Processes.run`): ``code`` is its exit status, None when it
    was killed at its timeout (``timed_out``) or stopped; each output keeps its first and last
    :data:`OUTPUT_BYTES` / 2 bytes, and ``cut`` says what was left out between them ('' when
    nothing was: "its standard output was cut: N bytes of M left out (...)")."""

    code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    cut: str = ""


class Processes:
    """The running child processes, so an interrupt can stop them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self.stopping = False

    def run(self, cmd: list[str], cwd: Path, timeout: float | None, env: Mapping[str, str] | None = None,
            should_stop: Callable[[], bool] | None = None, guard: bool = True) -> Ran:
        """How ``cmd`` ended (:class:`Ran`): ``code`` None when it timed out or was stopped.

        ``should_stop`` is asked about once a second; when it says yes the process is killed.
        ``guard`` (the default) ends the process and every process below it when this one dies,
        even by SIGKILL (Linux; see ``_REAPER``); ``guard=False`` leaves them running then.

        The child runs with ``PYTHONHASHSEED=0`` (unless ``env`` says otherwise), so that every part of a
        sharded script iterates sets in the same order. A process that cannot be started (an
        environment over the system's limit) ends as ``code`` None with the reason as ``stderr``.

        The child runs in its own session (a new process group, POSIX). The run ends when the child
        exits, even if a grandchild it left behind still holds its stdout or stderr open (see below). Then, or on a timeout or a stop, the whole process
        group is killed, and on Linux first every process below the child, also one that left its
        session or double-forked (``_REAPER``), so no grandchild outlives the run.

        The child writes to pipes, read as it writes: of each output (stdout, stderr) the first and
        last :data:`OUTPUT_BYTES` / 2 bytes are kept, what lies between is counted and dropped
        (:attr:`Ran.cut` says how much), so a script that prints without end fills neither the
        memory nor the disk. The run still ends when the child exits: the processes below it are
        killed then, and what they left in the pipes is read for at most :data:`REAP_SECONDS`.
        """
        from symverify.errors import UsageError

        with self._lock:
            if self.stopping:
                return Ran(None, "", "interrupted")
            # UTF-8 output whatever the locale: _Kept decodes it as UTF-8, and a script's table (≤, →) must
            # not crash the script where standard output is ASCII-only (LC_ALL=C with UTF-8 mode off).
            # One hash seed for every process: the parts of a sharded script must meet the same cases in the
            # same order, and a script that loops over a set of strings would otherwise see another order in each.
            full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8", "PYTHONHASHSEED": "0",
                        **(env or {})}
            imports = tempfile.TemporaryDirectory(prefix="symverify-import-", ignore_cleanup_errors=True)
            try:
                full_env["PYTHONPATH"] = own_import_path(full_env.get("PYTHONPATH"), Path(imports.name))
            except UsageError as e:
                imports.cleanup()
                return Ran(None, "", f"could not start the script's process: {e}")
            if sys.platform.startswith("linux"):
                cmd = [sys.executable, "-S", "-c", _REAPER, str(os.getpid()) if guard else "0", *cmd]
            try:
                proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=full_env, start_new_session=os.name == "posix")
            except OSError as e:  # E2BIG: a command line or environment (a sweep's grid) over the system's limit
                imports.cleanup()
                why = (" (its command line or environment, such as a sweep's grid, is longer than the system allows)"
                       if e.errno == errno.E2BIG else "")
                return Ran(None, "", f"could not start the script's process: {e.strerror or e}{why}")
            self._running.add(proc)
        assert proc.stdout is not None and proc.stderr is not None
        out, err = _Kept(proc.stdout, "standard output"), _Kept(proc.stderr, "standard error")

        def ended(code: int | None, stdout: str | None = None, stderr: str | None = None, timed_out: bool = False) -> Ran:
            out.finish()
            err.finish()
            cut = "; ".join(k.note() for k in (out, err) if k.cut)
            return Ran(code, out.text() if stdout is None else stdout, err.text() if stderr is None else stderr,
                       timed_out, cut)

        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                wait = 1.0 if should_stop is not None else None
                if deadline is not None:
                    left = max(deadline - time.monotonic(), 0.0)
                    wait = left if wait is None else min(wait, left)
                try:
                    proc.wait(timeout=wait)
                    _kill_group(proc)  # grandchildren left behind
                    return ended(None if self.stopping else proc.returncode)
                except subprocess.TimeoutExpired:
                    pass
                if deadline is not None and time.monotonic() >= deadline:
                    _kill_group(proc)
                    proc.wait()
                    return ended(None, stderr=f"timed out after {timeout} s", timed_out=True)
                if should_stop is not None and _asks_to_stop(should_stop):
                    self.stopping = True
                    _kill_group(proc)
                    proc.wait()
                    return ended(None, "", "interrupted")
        finally:
            with self._lock:
                self._running.discard(proc)
            imports.cleanup()

    def stop(self) -> None:
        with self._lock:
            self.stopping = True
            for p in self._running:
                _kill_group(p)


REAP_SECONDS = 5.0
"""How long the process in front of a script may take to kill the processes below it."""

OUTPUT_BYTES = 1 << 20
"""Bytes kept of a script process's stdout, and as many of its stderr (:meth:`Processes.run`): the
first and the last ``OUTPUT_BYTES // 2`` (the end holds the traceback); what lies between is counted
(:attr:`Ran.cut`), neither held nor written anywhere."""


class _Kept:
    """The kept start and end of one output of a child, read from ``pipe`` by a thread as the child
    writes: at most ``keep // 2`` bytes of start and ``keep - keep // 2`` of end are held at any time,
    the bytes between them only counted (``cut``)."""

    def __init__(self, pipe: Any, what: str, keep: int | None = None) -> None:
        keep = OUTPUT_BYTES if keep is None else keep
        self.what, self.head_max, self.tail_max = what, keep // 2, keep - keep // 2
        self.head, self.tail, self.cut = bytearray(), bytearray(), 0
        self._pipe, self._lock = pipe, threading.Lock()
        self._reader = threading.Thread(target=self._read, name=f"symverify {what} reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        fd = self._pipe.fileno()
        try:
            while data := os.read(fd, 1 << 16):
                with self._lock:
                    room = max(self.head_max - len(self.head), 0)
                    self.head += data[:room]
                    self.tail += data[room:]
                    if len(self.tail) > self.tail_max:
                        self.cut += len(self.tail) - self.tail_max
                        del self.tail[:len(self.tail) - self.tail_max]
        except OSError:
            pass
        finally:
            self._pipe.close()

    def finish(self) -> None:
        """Wait, at most :data:`REAP_SECONDS`, for the end of the output: the writers are dead, but
        a process that escaped their kill may hold the pipe (its reader then reads on, alone)."""
        self._reader.join(REAP_SECONDS)

    def text(self) -> str:
        """The kept output as text (UTF-8, an undecodable byte as U+FFFD), with a line saying where
        and how much was left out, if anything was."""
        with self._lock:
            if not self.cut:
                return bytes(self.head + self.tail).decode("utf-8", errors="replace")
            return (bytes(self.head).decode("utf-8", errors="replace") + f"\n[... {self.cut} bytes left out ...]\n"
                    + bytes(self.tail).decode("utf-8", errors="replace"))

    def note(self) -> str:
        """What was cut of this output ('' when nothing was)."""
        with self._lock:
            if not self.cut:
                return ""
            return (f"its {self.what} was cut: {self.cut} bytes of {len(self.head) + self.cut + len(self.tail)} "
                    f"left out (the first {len(self.head)} and last {len(self.tail)} kept)")


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    """Kill ``proc``'s process group (its own session, POSIX), else ``proc`` alone; on Linux, first
    ask ``proc`` (the ``_REAPER`` in front of the script) to kill every process below it, also those
    that left the group, and give it up to :data:`REAP_SECONDS` to do so."""
    if sys.platform.startswith("linux") and proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(REAP_SECONDS)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def _asks_to_stop(should_stop: Callable[[], bool]) -> bool:
    try:
        return bool(should_stop())
    except Exception:  # a stop flag that cannot be read (the scheduler went away) does not stop the work
        return False


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _result_file(path: Path) -> str:
    """What stands at a script's result path when it is not a regular file of at most
    :data:`~symverify.ir.limits.MAX_FILE_BYTES` bytes as the limit is now ('' when it is): the script chose what to write there, and a
    FIFO would block the read forever, a link to ``/dev/zero`` fill the memory. (The read itself,
    :func:`~symverify.ir.serialize.read_json_file`, checks the file it opens again.)"""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "a special file (FIFO, socket or device)" if not stat.S_ISDIR(st.st_mode) else "a directory"
    if st.st_size > limits.MAX_FILE_BYTES:
        return f"{st.st_size} bytes"
    return ""


def _result_shape(data: dict[str, Any]) -> str:
    """What is wrong with the top level of a script's result (``ProofResult.to_json``): ``title``
    text, ``seconds`` a number, ``instances`` a list ('' when nothing is)."""
    if not isinstance(data.get("title", ""), str):
        return f"title: expected text, found {type(data['title']).__name__}"
    secs = data.get("seconds", 0)
    if isinstance(secs, bool) or not isinstance(secs, (int, float)):
        return f"seconds: expected a number, found {json.dumps(secs)[:40]}"
    if not isinstance(data.get("instances"), list):
        return f"instances: expected a list, found {json.dumps(data.get('instances'))[:40]}"
    return ""


def execute(task: Task, procs: Processes | None = None, *, should_stop: Callable[[], bool] | None = None,
            guard: bool = True) -> dict[str, Any]:
    """Run ``task`` in a fresh interpreter and return its plain-JSON result (module docstring).
    ``guard``: see :meth:`Processes.run`."""
    from symverify.kernel.build import build_identity  # the standard library only

    procs = procs or Processes()
    start = time.perf_counter()

    cut = ""  # what was left out of the process's output (Ran.cut): said with the error that quotes it

    def answer(status: str, result: dict[str, Any] | None, error: str) -> dict[str, Any]:
        if cut and status != "done":
            error = f"{error} ({cut})"
        out = {"status": status, "result": result, "error": error, "seconds": time.perf_counter() - start,
               "version": __version__, "build": build_identity(), "host": socket.gethostname()}
        if cut and status == "done":  # no error quotes the output of a finished script: the cut is said apart
            out["cut"] = cut
        return out

    # ignore_cleanup_errors: a grandchild that left the script's session (setsid) may still be writing in the
    # directory; failing to remove it must not fail the task, let alone the run
    with tempfile.TemporaryDirectory(prefix="symverify-prove-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        for fname, text in task.files:
            (root / Path(fname).name).write_text(text, encoding="utf-8", errors=SHIPPED_ERRORS)
        work = root / "work"
        work.mkdir()
        out = work / "result.json"
        code, stdout, stderr, timed_out, cut = procs.run(task.argv(out, root), work, task.timeout, dict(task.env),
                                                         should_stop, guard)
        if procs.stopping:
            return answer("interrupted", None, "the run was interrupted")
        if code is None:
            return answer("timeout" if timed_out else "crashed", None, stderr)
        data = None
        if os.path.lexists(out):
            what = _result_file(out)
            if what:
                return answer("crashed", None, f"result JSON: expected a regular file of at most {limits.MAX_FILE_BYTES} "
                                               f"bytes, found {what}")
            from symverify.errors import SerializationError
            from symverify.ir.serialize import read_json_file

            try:  # strict: no NaN (the run JSON written from it must be read back), no repeated key
                data = read_json_file(out, "the result JSON")
            except SerializationError as e:
                return answer("crashed", None, f"unreadable result JSON: {str(e).removeprefix(f'{out}: cannot read the result JSON: ')}")
            if not isinstance(data, dict):
                return answer("crashed", None, f"result JSON: expected an object, found {type(data).__name__}")
            from symverify.viz.run_format import result_version_problem

            problem = result_version_problem(data, required=True)
            if problem:  # written by another script_main than this symverify's (or by hand): not read as one
                return answer("crashed", None, f"result JSON: {problem}")
            del data["format"], data["version"]
    if data is None:
        if code < 0:
            why = one_line(stderr, 2)
            return answer("lost", None, f"killed by {_signal_name(code)}" + (f": {why}" if why else ""))
        if code == 0 and not stderr.strip():
            return answer("crashed", None, "exit code 0 without a result: the script exited before script_main wrote "
                                           "one (sys.exit or os._exit in run), or never calls it: a proof script ends "
                                           "with 'if __name__ == \"__main__\": raise SystemExit(script_main(run))'")
        why = crash_reason(stderr, task.name) or one_line(stdout, 2) or "no output"
        return answer("crashed", None, f"exit code {code}: {why}")
    if code < 0:  # killed by a signal after its result was written: as without one (Dask retries a lost task)
        why = one_line(stderr, 2)
        return answer("lost", None, f"killed by {_signal_name(code)} after writing its result" + (f": {why}" if why else ""))
    # script_main ends the process with 0 (ok, or a count) or 1 (not ok): any other code, or 1 with a result that
    # says ok, means the script failed after its result was written (an exception or sys.exit after script_main)
    if code not in (0, 1) or (code == 1 and (task.count or data.get("ok") is True)):
        why = crash_reason(stderr, task.name) or one_line(stdout, 2) or "no output"
        return answer("crashed", None, f"exit code {code} after writing its result"
                                       f"{' (which says ok)' if code == 1 and not task.count else ''}: {why}")
    if task.count:
        n = data.get("cases")
        if set(data) != {"cases"} or isinstance(n, bool) or not (isinstance(n, int) and n >= 0):
            return answer("crashed", None, f"--count-cases: expected {{\"cases\": N}}, found {json.dumps(data)[:80]}")
        if n > MAX_CASES:  # the Dask backend lists every case in its tasks: 10^12 of them would fill the memory
            return answer("crashed", None, f"--count-cases: expected at most {MAX_CASES} cases (MAX_CASES), found {n}")
        return answer("done", data, "")
    shape = _result_shape(data)
    if shape:
        return answer("crashed", None, f"result JSON: {shape}")
    if data.get("name") != task.name:
        return answer("crashed", None, f"result JSON: name: expected {task.name!r} (the script's own name: "
                                       f"ProofResult({task.name!r}, TITLE)), found {str(data.get('name'))[:80]!r}")
    met = data.pop("cases", None)  # a part's count of the cases it met (protocol.script_main)
    part = task.cases is not None or (task.shard is not None and task.shard[1] > 1)
    if (met is not None or part) and (isinstance(met, bool) or not (isinstance(met, int) and met >= 0)):
        # every part must say how many cases it met (the runner compares them): a missing or mistyped count
        # would skip that comparison
        return answer("crashed", None, f"result JSON: cases: expected the number of cases this part met (an int ≥ 0), "
                                       f"found {'nothing' if met is None else json.dumps(met)[:40]}")
    done = answer("done", data, "")
    if met is not None:
        done["cases"] = met
    return done
