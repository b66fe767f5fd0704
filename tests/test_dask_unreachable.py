"""A ``--scheduler`` that cannot be reached: one error, nothing more on standard error."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_an_unreachable_scheduler_leaves_nothing_on_standard_error(tmp_path):
    """The client of a scheduler that cannot be reached is closed before the UsageError: nothing
    (a ``Client.__del__`` traceback at exit) follows the one error line."""
    pytest.importorskip("distributed")
    script = ("from symverify.provers.dask_address import open_client\n"
              "try:\n"
              "    with open_client('tcp://127.0.0.1:9', None, 1.0):\n"
              "        pass\n"
              "except Exception as e:\n"
              "    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == "", out.stderr[-2000:]
    assert out.stdout.startswith("UsageError scheduler tcp://127.0.0.1:9: cannot connect: "), out.stdout


SILENT = """
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
port = s.getsockname()[1]
from symverify.provers.dask_address import open_client
try:
    with open_client(f"tcp://127.0.0.1:{port}", None, 1.0, what="--scheduler"):
        pass
except Exception as e:
    print(type(e).__name__, str(e).replace(str(port), "PORT"))
"""


def test_a_peer_that_accepts_and_never_answers_is_given_up(tmp_path):
    """A socket that listens (the kernel accepts the connection) and never answers: distributed
    bounds the connection but not the handshake, and the client waited for ever."""
    out = subprocess.run([sys.executable, "-c", SILENT], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == ("UsageError --scheduler tcp://127.0.0.1:PORT: cannot connect: no answer within 2 s: something "
                          "accepts connections there but does not answer as a Dask scheduler\n"), out.stdout
    assert out.stderr == ""
