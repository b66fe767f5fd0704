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


def test_auto_decides_by_exact_without_a_pre_check_of_a_huge_prime():
    """``auto`` ran its one-trial randomized pre-check first, whose prime must pass the degree bound
    ``2^3000``: proving a 3000-bit prime took the whole 20 s timeout and the answer was unknown,
    while ``exact`` alone refutes at ``x = −1`` in a fraction of a second."""
    r = sv.verify(_TOWER, _X, method="auto", timeout=20)
    assert r.refuted and r.method == "exact" and r.counterexample.inputs == ((-1,),)
    assert any("the randomized pre-check was skipped: the degree bound (2^3000 or more) needs a prime of at least "
               "3001 bits" in n for n in r.notes)
    assert not any(k.startswith("precheck") for k in r.timings)


def test_auto_looks_for_no_proof_once_exact_found_the_polynomials_different():
    r = sv.verify(_TOWER, _SQUARE, method="auto", timeout=20)
    assert r.verdict is sv.Verdict.UNKNOWN and r.method == "exact" and "first_difference" in r.evidence
    assert any("the polynomials differ" in n for n in r.notes)


def test_auto_keeps_its_pre_check_below_the_degree_threshold():
    small = Circuit(1, 1, tuple(Gate.mul(j, j) for j in range(200)), (200,))  # degree 2^200
    r = sv.verify(small, _X, method="auto", timeout=60)
    assert r.refuted and r.method == "randomized (pre-check)" and not any("pre-check was skipped" in n for n in r.notes)
