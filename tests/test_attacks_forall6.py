"""Adversarial inputs to the all-sizes machinery, sixth round: ``prove_forall`` and ``instantiate`` inside a
``predicates(...)`` block (docs/forall.md §1, §3). The strongest attacks that found no false proof
are kept as regression tests at the end."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.kernel.parametric.concrete import spec_at
from symverify.kernel.parametric.expr import predicates
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    eq,
    inp,
    instantiate,
    ite,
    pred,
    tap,
    var,
    where,
)

i, q, N = (var(x) for x in "iqN")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)


# ---- the statement is the gadget's, whatever predicates the caller's context gives ---------------------
def test_a_predicate_of_the_callers_context_does_not_decide_the_statement() -> None:
    """``i << ite(P(0, 0), 0, 1)`` reads a free predicate: the shift is 0 or 1 depending on the
    placement. The choice of the integer encoding evaluated the shift amount to see whether it is a
    constant, and did so with the predicates of the caller's ``with predicates(...)`` block: inside
    one giving ``P`` true, the amount was the constant 0 and the integer encoding read ``i << k`` as
    ``i·1`` whatever z3's ``P``, so a spec wrong wherever ``P(0, 0)`` is false (``2·in`` at row 1) was
    "proved for all N". The prover now reads no predicate of the caller's context."""
    g = Gadget("g", (Param("N", 1, 8),), N, 1, _COPY, where(eq(i << ite(pred("P", 0, 0), 0, 1), i), inp(i, q), 2 * inp(i, q)))
    outside = sv.prove_forall(g)
    assert outside.verdict is sv.Verdict.REFUTED, outside
    with predicates({"P": lambda *a: True}):
        inside = sv.prove_forall(g)
    assert inside.verdict is sv.Verdict.REFUTED, inside
    with predicates({"P": lambda *a: False}):  # the claim is indeed false where P(0, 0) is false
        assert spec_at(g, {"N": 2}, 1, 0, lambda r, c: 1) == 2


def test_an_instance_under_a_predicates_block_is_held_to_assume() -> None:
    """The ∀ theorem holds for the placements satisfying ``assume``; ``instantiate`` checked a
    ``placement=`` against it, but predicates given by a ``with predicates(...)`` block were taken
    unchecked: ``b1 = [P]`` with ``assume = P`` is proved to copy its input, and the instance built
    with ``P`` false everywhere was the zero layer."""
    p = pred("P", i, q)
    g = Gadget("g", (Param("N", 1, 8),), N, 1, (PLayer(b1=where(p, 1, 0), h=(tap(0),), mode="causal"),), inp(i, q), assume=p)
    assert sv.prove_forall(g).proved
    with predicates({"P": lambda *a: False}), pytest.raises(ParametricError, match=r"the placement violates P\(i, q\) at cell \(0, 0\)"):
        instantiate(g, {"N": 2})
    with predicates({"P": lambda *a: True}):
        (layer,) = instantiate(g, {"N": 2})
    assert layer.b1.to_rows() == [[1], [1]]
