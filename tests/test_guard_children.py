"""The limited child (``symverify.kernel.provers.guard.run_limited``): what its messages name, and how
it stands up to bad limits, forks, signals and exceptions."""

from __future__ import annotations

import ast
import contextlib
import math
import os
import pathlib
import signal
import sys
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from processes import assert_gone, fork_then_die

import symverify as sv
from symverify.errors import UsageError
from symverify.kernel.provers import exact, guard
from symverify.kernel.provers.guard import run_limited

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_dead_child_is_named_by_what_it_was_doing():
    """Every child's death was "the expansion process", a z3 query's or a counterexample's re-check too."""
    out = run_limited(_killed, (), memory=1 << 30, timeout=60, what="the z3 query")
    assert out.status == "crashed", out
    assert out.detail.startswith("the process running the z3 query was killed by signal 9 "), out
    assert "expansion" not in out.detail, out


def test_every_kernel_caller_names_its_child():
    """Each ``run_limited`` call of the package says what its child does (``what=``)."""
    calls = []
    for path in sorted((ROOT / "symverify").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "run_limited":
                calls.append((path.relative_to(ROOT), node.lineno, {k.arg for k in node.keywords}))
    assert len(calls) >= 7, calls
    unnamed = [f"{p}:{line}" for p, line, keys in calls if "what" not in keys]
    assert not unnamed, f"run_limited without what=: {unnamed}"


def _killed_expansion(*args: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_an_expansion_killed_in_its_child_is_named_in_the_report(monkeypatch):
    monkeypatch.setattr(exact, "expand_compare", _killed_expansion)  # the fork inherits it
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0]], n=1, d=1)
    report = sv.verify(c, c, method="exact", isolate=True, memory_limit=1 << 30)
    assert str(report.verdict) == "unknown", report
    (note,) = report.notes
    assert note.startswith("expansion stopped (crashed): the process running the expansion was killed by signal 9"), note


# ---- bad limits ----------------------------------------------------------------------------------


def _one() -> int:
    return 1


@pytest.mark.parametrize("timeout, found", [(math.nan, "found nan"), ("10", "found str '10'"), (True, "found bool True")])
def test_a_timeout_that_is_no_number_of_seconds_is_refused(timeout, found):
    """A NaN timeout raised ValueError from ``poll`` (after the child had started), a str TypeError."""
    with pytest.raises(UsageError, match=rf"^limited child timeout: expected None or a number of seconds, {found}"):
        run_limited(_one, (), memory=1 << 30, timeout=timeout)


@pytest.mark.parametrize("timeout", [math.inf, 1e300, pytest.param(10**400, id="10**400")])
def test_a_timeout_beyond_any_wait_is_no_limit(timeout):
    """``10**400`` s raised OverflowError (int to float); like ``inf``, it is no limit."""
    assert run_limited(_one, (), memory=1 << 30, timeout=timeout) == guard.Limited("ok", 1)


@pytest.mark.parametrize("timeout", [0, 0.0, -1, -math.inf, pytest.param(-(10**400), id="-10**400")])
def test_no_time_left_starts_no_child(monkeypatch, timeout):
    monkeypatch.setattr(guard, "_start", lambda proc: pytest.fail("a child was started"))
    out = run_limited(_one, (), memory=1 << 30, timeout=timeout)
    assert out.status == "timeout" and out.detail.startswith("no time left (a timeout of "), out


@pytest.mark.parametrize("memory, found", [(-1, "int -1"), (-(1 << 80), "int -1208925819614629174706176"),
                                           (1e9, "float 1000000000.0"), (True, "bool True"), (None, "NoneType None")])
def test_a_memory_limit_that_is_no_byte_count_is_refused(memory, found):
    """A negative or float limit ended the child before it ran (``setrlimit`` refusing it): a crash, or,
    for a limit a little below 0, a child with almost no address space."""
    with pytest.raises(UsageError, match=rf"^limited child memory: expected an int ≥ 0 \(bytes of address space\), found {found}"):
        run_limited(_one, (), memory=memory, timeout=60)


def _refuse_limits(*args: object) -> None:
    raise ValueError("not allowed")


def test_a_memory_limit_that_cannot_be_set_is_a_crash_not_an_unlimited_run(monkeypatch):
    """The child swallowed ``setrlimit``'s ValueError or OSError and ran without any limit."""
    import resource

    monkeypatch.setattr(resource, "setrlimit", _refuse_limits)  # the fork inherits it
    out = run_limited(_one, (), memory=1 << 30, timeout=60, what="the expansion")
    assert out.status == "crashed", out
    assert out.detail == ("the memory limit of 1073741824 bytes could not be set for the process running the expansion "
                          "(ValueError: not allowed)"), out


# ---- forks, signals, exceptions ------------------------------------------------------------------


def _fork_and_return() -> str:
    pid = os.fork()
    if pid == 0:
        return "the fork"  # returns from fn in a copy of the child
    os.waitpid(pid, 0)
    return "the child"


def test_only_the_child_answers_not_a_copy_it_forked():
    """A copy of the child made by ``os.fork`` in ``fn`` returned from it too and sent its own value,
    which arrived first and was taken as the result."""
    assert run_limited(_fork_and_return, (), memory=1 << 30, timeout=60) == guard.Limited("ok", "the child")


def _assert_killed_with_its_orphan(tmp_path, timeout: float) -> None:
    """``fork_then_die`` in a limited child: a crash at once (killed by signal 9), the process it
    forked gone with it."""
    path = str(tmp_path / "pid")
    try:
        out = run_limited(fork_then_die, (path,), memory=1 << 30, timeout=timeout, what="the search")
        assert out.status == "crashed", out
        assert out.detail.startswith("the process running the search was killed by signal 9 "), out
        assert_gone(int(open(path).read()), "the orphan of the killed child went on")
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(open(path).read()), signal.SIGKILL)



def test_a_child_killed_while_a_process_it_forked_lives_is_a_crash(tmp_path):
    """The caller waited for EOF on the pipe, which the forked process held open: a child killed by a
    signal was reported as a timeout after the whole timeout (with ``timeout=None``, never). The
    forked process, an orphan now, went on; it is killed with the child's process group."""
    _assert_killed_with_its_orphan(tmp_path, timeout=30)


def _rebuild(message: str) -> Exception:
    raise TypeError(f"cannot rebuild {message!r}")


class _UnloadableError(Exception):
    """Pickles, and fails to unpickle (as an exception whose ``__init__`` takes other arguments than its
    ``args`` does, where no library registers a reducer for it: tblib, which distributed installs)."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_rebuild, (str(self),))


def _raise_unloadable() -> None:
    raise _UnloadableError("1-2")


def test_an_exception_that_does_not_unpickle_is_reported_by_its_repr():
    """It pickled in the child and raised TypeError (here "cannot rebuild") in the
    caller's ``recv``: a crash of the caller naming neither the child nor its error."""
    with pytest.raises(RuntimeError, match=r"^the process running the z3 query failed: _UnloadableError\('1-2'\)$"):
        run_limited(_raise_unloadable, (), memory=1 << 30, timeout=60, what="the z3 query")


def _write_pid_and_sleep(path: str) -> None:
    with open(path + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.rename(path + ".tmp", path)
    time.sleep(120)


def test_an_interrupt_in_the_caller_ends_the_child(tmp_path):
    """Ctrl-C (SIGINT, KeyboardInterrupt) while the caller waits: it propagates, and the child is gone."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("Python runs signal handlers in the main thread only")
    path = str(tmp_path / "pid")
    me = threading.get_ident()

    def interrupt() -> None:
        end = time.monotonic() + 60
        while not os.path.exists(path) and time.monotonic() < end:
            time.sleep(0.05)
        if os.path.exists(path):  # the child sleeps 120 s: the caller is still waiting for it
            signal.pthread_kill(me, signal.SIGINT)

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            run_limited(_write_pid_and_sleep, (path,), memory=1 << 30, timeout=300)
    finally:
        signal.signal(signal.SIGINT, old)
    assert_gone(int(open(path).read()), "the child outlived the interrupted caller")


def _exit_3() -> None:
    sys.exit(3)


def _interrupted() -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("fn, ended", [(_exit_3, "SystemExit (3)"), (_interrupted, "KeyboardInterrupt")])
def test_a_child_s_exit_or_interrupt_ends_the_child_not_the_caller(fn, ended):
    """``sys.exit(3)`` in the child was sent back and raised in the caller, which exited."""
    out = run_limited(fn, (), memory=1 << 30, timeout=60, what="the expansion")
    assert out == guard.Limited("crashed", detail=f"the process running the expansion ended by {ended}"), out


def _print_megabytes_then_abort() -> None:
    """Output at the C level (fds 1 and 2, as FLINT writes), which the child sends to its log."""
    for i in range(64):
        os.write(1, f"line {i} ".encode() + b"x" * (1 << 17) + b"\n")
    os.write(2, b"the last words\n")
    os.abort()


def test_a_child_printing_megabytes_is_quoted_by_its_last_line():
    """8 MiB on stdout, then a line on stderr and SIGABRT: the detail quotes the end (of the last 32 KiB
    kept) and says how much of the output was cut."""
    out = run_limited(_print_megabytes_then_abort, (), memory=1 << 30, timeout=60, what="the expansion")
    assert out.status == "crashed", out
    assert out.detail.startswith("the process running the expansion aborted (SIGABRT;"), out
    total = sum(len(f"line {i} ") + (1 << 17) + 1 for i in range(64)) + len("the last words\n")
    cut = total - guard.OUTPUT_BYTES
    assert out.detail.endswith(f" bytes): the last words; its output was cut: {cut} bytes of {total} left out "
                               f"(the first 32768 and last 32768 kept)"), out  # the cut line before it is left out
    assert out.output_cut == cut and out.output.startswith("line 0 xxx") and out.output.endswith("x\nthe last words\n")


def test_limits_as_numpy_numbers_or_fractions_are_read_by_their_value():
    np = pytest.importorskip("numpy")
    from fractions import Fraction

    assert run_limited(_one, (), memory=np.int64(1 << 30), timeout=np.float32(60)) == guard.Limited("ok", 1)
    assert run_limited(_one, (), memory=1 << 30, timeout=Fraction(120, 2)) == guard.Limited("ok", 1)


@given(st.one_of(st.floats(allow_nan=False), st.integers(min_value=-(10**500), max_value=10**500)))
def test_every_number_of_seconds_but_nan_is_a_timeout(timeout):
    """The timeout, as :func:`run_limited` reads it: a float, ``inf`` for an int beyond a float."""
    seconds = guard._seconds(timeout)
    try:
        expected = float(timeout)
    except OverflowError:  # -10**400 s is no time, not no limit
        expected = math.inf if timeout > 0 else -math.inf
    assert isinstance(seconds, float) and seconds == expected


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_a_memory_limit_is_an_int_of_at_least_zero(memory):
    if memory >= 0:
        assert guard._bytes(memory) == memory
    else:
        with pytest.raises(UsageError, match=r"^limited child memory: expected an int ≥ 0 \(bytes of address space\), found int -"):
            guard._bytes(memory)


@pytest.mark.parametrize("missing", ["no pidfd_open", "ENOSYS"])
def test_without_a_pidfd_the_orphans_of_a_killed_child_are_killed_too(tmp_path, monkeypatch, missing):
    """Without a pidfd (``os.pidfd_open`` missing, or Linux before 5.3: ENOSYS) the caller asks every
    second whether the child lives; ``proc.is_alive()`` reaped it, so its process group was never
    killed and the process it forked went on, an orphan with no deadline. The child is asked
    without being reaped, and its group is killed as with a pidfd."""
    if missing == "ENOSYS":
        def enosys(pid: int, flags: int = 0) -> int:
            raise OSError(38, "Function not implemented")
        monkeypatch.setattr(os, "pidfd_open", enosys, raising=False)
    else:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    _assert_killed_with_its_orphan(tmp_path, timeout=60)


def _print_without_end(mib: int) -> str:
    """Writes ``mib`` MiB to stdout and stderr in turn (as a runaway computation's log would), then
    says where its output went."""
    import stat

    block = b"y" * (1 << 20)
    os.write(1, b"BEGIN\n")
    for i in range(mib):
        os.write(1 + i % 2, block)
    os.write(2, b"\nEND\n")
    return "a file" if stat.S_ISREG(os.fstat(1).st_mode) else "no file"


@pytest.mark.parametrize("keep", [0, 1, 4096, 1 << 16])
def test_a_child_printing_far_more_than_the_cap_keeps_its_head_and_tail_only(keep):
    """The child's output went to a temporary file with no size limit: a child printing without end
    filled the disk before its timeout. It goes to a pipe the caller reads, keeping the first and last
    ``output_bytes // 2`` bytes, and the result says how much was cut."""
    mib = 48
    out = run_limited(_print_without_end, (mib,), memory=1 << 30, timeout=120, output_bytes=keep)
    assert (out.status, out.value) == ("ok", "no file"), out
    total = len(b"BEGIN\n") + mib * (1 << 20) + len(b"\nEND\n")
    assert out.output_cut == total - keep
    head, tail = keep // 2, keep - keep // 2
    expected = ("BEGIN\n" + "y" * (1 << 20))[:head] + ("y" * (1 << 20) + "\nEND\n")[len("y" * (1 << 20) + "\nEND\n") - tail:]
    assert out.output == expected


def test_a_short_output_is_kept_whole():
    out = run_limited(_print_without_end, (0,), memory=1 << 30, timeout=60)
    assert (out.output, out.output_cut) == ("BEGIN\n\nEND\n", 0)
    assert "BEGIN" not in repr(out)  # kept out of the repr (it may be 64 KiB)


@pytest.mark.parametrize("keep, found", [(-1, "int -1"), (1.5, "float 1.5"), (True, "bool True"), ("64", "str '64'")])
def test_an_output_cap_that_is_no_byte_count_is_refused(keep, found):
    with pytest.raises(UsageError, match=rf"^limited child output_bytes: expected an int ≥ 0 \(bytes of output to keep\), "
                                         rf"found {found}"):
        run_limited(_one, (), memory=1 << 30, timeout=60, output_bytes=keep)


def _raise_value_error() -> None:
    raise ValueError("in the child")


def test_a_child_s_exception_leaves_no_file_descriptor_open():
    """The exception raised here held the caller's frame (its traceback), and the frame the
    exception: the process object and its sentinel's two file descriptors lived until a garbage
    collection, two more per call."""
    import gc

    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    if before is None:
        pytest.skip("no /proc/self/fd here")
    gc.disable()
    try:
        for _ in range(20):
            with pytest.raises(ValueError, match=r"^in the child$"):
                run_limited(_raise_value_error, (), memory=1 << 30, timeout=60)
        assert len(os.listdir("/proc/self/fd")) <= before
    finally:
        gc.enable()
