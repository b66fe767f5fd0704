"""Under a timeout, the randomized method proves a large modulus prime in a limited child
(``randomized.random_prime``); a stop there is ``unknown`` with a note that says what stopped it."""

from __future__ import annotations

import re

import pytest

import symverify as sv
from symverify.kernel.provers import randomized
from symverify.kernel.provers.guard import Limited


def _scaled_square(c: int) -> sv.Circuit:
    return sv.Circuit.trace(lambda u: [c * u[0][0] * u[0][0]], n=1, d=1)


@pytest.mark.parametrize("status, detail, expected", [
    ("memory", "MemoryError in the expansion process",
     r"^memory limit: the child process reached its limit of 1073741824 bytes during trial 1 of \d+ "
     r"\(proving a \d+-bit modulus prime: MemoryError in the expansion process\)$"),
    ("timeout", "no result within 0.1 s",
     r"^timeout: 60 s ran out during trial 1 of \d+ \(proving a \d+-bit modulus prime: no result within 0.1 s\)$"),
])
def test_a_prime_proof_child_stop_is_named(monkeypatch, status, detail, expected):
    """A coefficient of 71 bits rules out the fixed prime; every candidate's proof goes to the child
    (planted: the screen decides none), which stops. A memory stop was noted "timeout during trial 1"."""
    monkeypatch.setattr(randomized, "screen_decides", lambda c: False)
    monkeypatch.setattr(randomized, "run_limited", lambda *a, **k: Limited(status, detail=detail))
    c = 2**70
    report = sv.verify(_scaled_square(c), _scaled_square(c), method="randomized", timeout=60, memory_limit=1 << 30)
    assert str(report.verdict) == "unknown", report
    (note,) = report.notes
    assert re.match(expected, note), note
