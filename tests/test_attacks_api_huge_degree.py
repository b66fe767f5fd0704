"""Attacks on ``verify`` with a side of huge degree (``x^(2^3000)`` by 3000 squarings): ``exact``
answers without crashing, and ``auto`` spends no budget on a pre-check whose prime is thousands of
bits long when ``exact`` decides (:mod:`symverify.kernel.provers.registry`, :mod:`symverify.kernel.provers.exact`)."""

from __future__ import annotations

import symverify as sv
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate

_TOWER = Circuit(1, 1, tuple(Gate.mul(j, j) for j in range(3000)), (3000,))  # x^(2^3000)
_X = Circuit(1, 1, (), (0,))
_SQUARE = Circuit(1, 1, (Gate.mul(0, 0),), (1,))


def test_exact_on_a_difference_with_no_small_point_is_unknown():
    """``x^(2^3000) − x²`` vanishes on {−1, 0, 1}; the search for a point went on to entries of 2
    and raised ``OverflowError`` (a float product of the degree); no point's value is small enough
    to re-check, so the answer is unknown, saying the polynomials differ."""
    r = sv.verify(_TOWER, _SQUARE, method="exact", timeout=60)
    assert r.verdict is sv.Verdict.UNKNOWN
    assert any("the polynomials differ" in n for n in r.notes) and r.evidence["first_difference"] == [0, 0]
