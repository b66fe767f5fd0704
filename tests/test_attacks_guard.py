"""The limited child (``symverify.kernel.provers.guard.run_limited``) run by a computation that attacks
it through the result pipe: a message sent in part, one that claims to be larger than the child could
make, bytes that are no message, a pipe closed under the child. Each ends as a crash or a timeout,
never as a value and never past the timeout."""

from __future__ import annotations

import fcntl
import os
import stat
import struct
import time

import pytest

from symverify.kernel.provers.guard import run_limited


def _pipes() -> set[int]:
    """The file descriptors above stderr of this process open for writing on a pipe."""
    found = set()
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                found.add(fd)
        except OSError:
            continue
    return found


OURS = _pipes()  # the test process's own (pytest's saved stdout, say), which the fork copies


def _result_pipes() -> list[int]:
    """In the child: the write end of the result pipe (the read ends the fork copied are open for
    reading only, and its output pipe is stdout and stderr)."""
    return sorted(_pipes() - OURS)


def _write_then_stall(data: bytes, seconds: float) -> int:
    for fd in _result_pipes():
        os.write(fd, data)
    time.sleep(seconds)
    return 1


def test_a_result_sent_in_part_is_a_timeout_not_a_wait_past_it():
    """The caller read the message with a blocking ``recv`` once its first bytes came: a child that
    sent a length and stopped held the caller past its timeout, for as long as it lived (for ever, had
    it slept for ever). The message is read as it comes, under the timeout."""
    out = run_limited(_write_then_stall, (b"\x00\x00\x10\x00", 20.0), memory=1 << 30, timeout=2)
    assert out.status == "timeout", out


def test_a_result_longer_than_the_child_could_make_is_refused_at_once():
    """A length beyond the child's address space: no value it pickled is that long, so nothing is
    read or kept for it (a child streaming bytes would otherwise fill the caller's memory)."""
    out = run_limited(_write_then_stall, (struct.pack("!Q", 1 << 62), 20.0), memory=1 << 30, timeout=60,
                      what="the expansion")
    assert out.status == "crashed", out
    assert out.detail.startswith(f"the process running the expansion sent a result of {1 << 62} bytes, more than its "
                                 "address space ("), out


@pytest.mark.parametrize("data, detail", [
    (struct.pack("!Q", 5) + b"\x80\x05Kxx", r"the result of the process running the computation could not be read back "
                                            r"\(UnpicklingError"),
    (struct.pack("!Q", 0), r"the result of the process running the computation could not be read back \(EOFError"),
])
def test_bytes_that_are_no_message_are_a_crash(data, detail):
    import re

    out = run_limited(_write_then_stall, (data, 0.0), memory=1 << 30, timeout=60)
    assert out.status == "crashed" and re.match(detail, out.detail), out


def _close_the_result_pipe() -> int:
    for fd in _result_pipes():
        os.close(fd)
    return 1


def test_a_child_that_closes_its_result_pipe_is_a_crash():
    out = run_limited(_close_the_result_pipe, (), memory=1 << 30, timeout=60)
    assert out.status == "crashed" and "exited with code 1 before sending a result" in out.detail, out


def test_a_result_is_unpickled_in_place_not_from_copies():
    """The message was unpickled from ``bytes(data[8:8 + size])``: a slice and a copy of it, so a large
    result held the caller's memory at three times its size, and was read back more slowly than before."""
    import pickle
    import tracemalloc

    from symverify.kernel.provers import guard

    size = 32 << 20
    data = pickle.dumps(("ok", b"v" * size, ""), protocol=pickle.HIGHEST_PROTOCOL)
    msg = guard._Message(-1, 1 << 40)
    msg.data = bytearray(struct.pack("!Q", len(data)) + data)
    del data
    tracemalloc.start()
    try:
        status, value, _ = msg.value()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (status, len(value)) == ("ok", size)
    assert peak < 1.5 * size, peak  # the value itself, no copy of the pickle
