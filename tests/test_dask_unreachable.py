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
