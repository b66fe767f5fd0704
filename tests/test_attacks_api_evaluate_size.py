"""Attacks on exact evaluation's size guard (:data:`symverify.ir.limits.MAX_VALUE_BITS`,
:class:`~symverify.kernel.semantics.rings.FractionRing`): ``symverify.evaluate`` and the exact
executor refuse a value beyond the limit at the gate that first goes over it, naming the gate, the
size and the limit, instead of computing for ever; below the limit nothing changes, and raising the
limit computes larger values. The provers' own evaluations are not held to it."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import LimitError
from symverify.ir import limits
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate
from symverify.kernel.ir.scalar import sym
from symverify.kernel.semantics.evaluate import eval_circuit
from symverify.kernel.semantics.rings import FractionRing


def _squarings(k: int) -> Circuit:
    """``x^(2^k)`` by ``k`` squarings."""
    return Circuit(1, 1, tuple(Gate.mul(j, j) for j in range(k)), (k,))


def test_a_tower_of_squarings_is_refused_at_the_gate_over_the_limit():
    """``a^(2^100000)`` at ``a = 2`` ran with no guard (killed after 300 s)."""
    with pytest.raises(LimitError, match=r"evaluating gate 19 \(node %20, mul of nodes %19, %19\): an exact value of "
                                         r"1048577 bits is more than the 1048576 bits .*MAX_VALUE_BITS; raise it"):
        sv.evaluate(_squarings(100_000), [[2]])


def test_a_value_just_over_the_limit_is_refused():
    """``2^(2^22)`` was computed (4 Mbit); the limit is ``2^20`` bits."""
    with pytest.raises(LimitError, match=r"gate 19 .*1048577 bits is more than the 1048576 bits"):
        sv.evaluate(_squarings(22), [[2]])
    with pytest.raises(LimitError, match=r"gate 19 .*1661954 bits is more than the 1048576 bits"):  # a denominator 3^(2^20)
        sv.evaluate(_squarings(22), [[Fraction(1, 3)]])
    with pytest.raises(LimitError, match=r"gate 19 .*MAX_VALUE_BITS"):
        sv.execute(_squarings(22), [[2]])


def test_raising_the_limit_computes_larger_values(monkeypatch):
    monkeypatch.setattr(limits, "MAX_VALUE_BITS", 1 << 23)
    assert sv.evaluate(_squarings(22), [[2]]) == [[2 ** (2**22)]]


def test_values_at_the_limit_and_small_bases_are_computed():
    assert sv.evaluate(_squarings(19), [[2]]) == [[2 ** (2**19)]]  # 2^19 + 1 bits
    assert sv.evaluate(_squarings(100_000), [[1]]) == [[1]] and sv.evaluate(_squarings(100_000), [[-1]]) == [[1]]


def test_a_symbolic_coefficient_is_refused_before_its_power_is_computed():
    w61 = sym("w") ** (2**61)
    c = Circuit(1, 1, (Gate.lin(0, w61, 0, 0),), (1,))
    with pytest.raises(LimitError, match=r"gate 0 .*a term of the symbolic coefficient .* would have up to "
                                         r"4611686018427387905 bits"):  # 2·2^61 + 1
        sv.evaluate(c, [[1]], {"w": 2})
    assert sv.evaluate(c, [[3]], {"w": 1}) == [[3]] and sv.evaluate(c, [[3]], {"w": -1}) == [[3]]


def test_the_provers_are_not_held_to_the_limit():
    """verify's own exact evaluations bound their sizes themselves: a refutation is still found."""
    big = _squarings(21)  # 2^(2^21) at x = 2: twice the limit
    other = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    assert sv.verify(big, other, method="exact", timeout=60).refuted


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 50), st.integers(0, 50), st.fractions(max_denominator=5)),
                min_size=1, max_size=12),
       st.fractions(max_denominator=4), st.fractions(max_denominator=4))
def test_below_the_limit_the_guard_changes_nothing(spec, a, b):
    gates = []
    for k, (mul, i, j, coef) in enumerate(spec):
        i, j = i % (k + 2), j % (k + 2)
        gates.append(Gate.mul(i, j) if mul else Gate.lin(i, coef, j, 1))
    c = Circuit(1, 2, tuple(gates), (len(gates) + 1,))
    assert sv.evaluate(c, [[a, b]]) == eval_circuit(c, [[a, b]], FractionRing())


def test_a_constant_gate_over_the_limit_is_named():
    c = Circuit(1, 1, (Gate.const(sym("w") ** (2**30)),), (1,), "tower")
    with pytest.raises(LimitError, match=r"^evaluating gate 0 \(node %1, const\) of tower: a term of the symbolic "
                                         r"coefficient w\^1073741824 would have up to 2147483649 bits"):
        sv.evaluate(c, [[1]], {"w": 3})


def test_a_model_over_the_limit_names_the_layer():
    """A model's refusal named neither the model nor the layer."""
    model = sv.compile(_squarings(24))
    with pytest.raises(LimitError, match=r"^evaluating layer \d+ of the model.*: an exact value of 1048577 bits is "
                                         r"more than the 1048576 bits"):
        sv.evaluate(model, [[2]])
