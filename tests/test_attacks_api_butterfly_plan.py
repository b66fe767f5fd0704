"""Attacks on the plan a small 0/1 butterfly factor keeps (``ButterflyFactor._plan_cache``,
:mod:`symverify.kernel.kaleidoscope.apply`): a diagonal, the stride or the size rewritten past the
frozen dataclass after a ``verify`` planned the factor is planned again, never read through the old
plan, so no method proves the new kaleidoscope equal to what the old one computed."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.kaleidoscope.apply import _plan, apply
from symverify.kernel.semantics.rings import ScalarRing

_IDENT = Circuit(1, 2, (), (0, 1))
_SWAP = {"d1": (0, 0), "d2": (1, 1), "d3": (1, 1), "d4": (0, 0)}  # every pair (p, p + 2) swapped


@pytest.mark.parametrize("method", ["exact", "randomized", "auto"])
def test_a_rewritten_factor_is_not_proved_through_its_old_plan(method):
    """After ``verify`` planned the identity factor of stride 2, its diagonals were rewritten into a
    swap: the kept plan still applied the identity, and every method proved the rewritten
    kaleidoscope (which maps ``(a, b)`` to ``(0, 0)``) equal to the identity."""
    k = Kaleidoscope(2, 4, (BBStar.identity(4),))
    f = k.groups[0].factors[0]
    assert sv.verify(k, _IDENT, method=method).proved and f._plan_cache is not None
    for name, value in _SWAP.items():
        object.__setattr__(f, name, value)
    assert sv.verify(k, _IDENT, method=method).refuted


@pytest.mark.parametrize("field, value", [("d2", (1, 0)), ("d1", (0, 1)), ("stride", 1)])
def test_a_rewritten_field_is_planned_again(field, value):
    f = ButterflyFactor(4, 2, (0, 0), (1, 1), (1, 1), (0, 0))
    before = apply(f, [1, 2, 3, 4])
    assert before == [3, 4, 1, 2] and f._plan_cache is not None
    object.__setattr__(f, field, value)
    fresh = ButterflyFactor(f.size, f.stride, f.d1, f.d2, f.d3, f.d4)
    assert _plan(f, ScalarRing()) == _plan(fresh, ScalarRing())
    assert apply(f, [1, 2, 3, 4]) == apply(fresh, [1, 2, 3, 4]) != before


def test_an_unchanged_factor_reads_its_plan_from_the_cache():
    f = ButterflyFactor(4, 1, (0, 1), (1, 0), (1, 0), (0, 1))
    first = _plan(f, ScalarRing())
    kept = f._plan_cache
    assert _plan(f, ScalarRing()) == first and f._plan_cache is kept
