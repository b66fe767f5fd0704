"""Compile and verify as one property, and the mutation operators as an adversary would use them.

For any circuit ``c`` and every compile method and plan, ``verify(c, compile(c))`` is proved; a
single-weight or single-gate mutant is proved only when it computes the same polynomials (decided
here by exact expansion on a shared ring) and refuted, with an exactly re-checked counterexample,
otherwise. Coefficients include huge, negative and rational values and ones invisible modulo the
Mersenne prime ``2^61 − 1``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.compiler import compile
from symverify.compiler.result import Compiled
from symverify.errors import UsageError
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.semantics.poly import polynomials, shared_ring
from symverify.kernel.verification import verify
from symverify.mutate import (
    GATE_OPERATORS,
    M61,
    WEIGHT_OPERATORS,
    gate_mutant,
    mutate_weight,
    swap_outputs,
    weight_mutant,
    weight_sites,
)

VALUES = (0, 1, -1, 2**200, -(2**127 - 1), M61, Fraction(1, M61), Fraction(2**100 + 1, 3), Fraction(-7, 2**64))


@st.composite
def _circuits(draw: st.DrawFn) -> Circuit:
    """Random circuits shaped as chains (each gate reads the one before), fans (wide fan-in of the
    inputs) or anything, with constants and coefficients from :data:`VALUES`."""
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    nd = n * d
    shape = draw(st.sampled_from(["chain", "fan", "any"]))
    gates: list[Gate] = []
    for k in range(draw(st.integers(0, 8))):
        last = nd + k - 1
        a = last if shape == "chain" else draw(st.integers(0, nd - 1 if shape == "fan" else last))
        b = draw(st.integers(0, last))
        kind = draw(st.sampled_from(["lin", "mul", "const"]))
        if kind == "const":
            gates.append(Gate(Op.CONST, (), (draw(st.sampled_from(VALUES)),)))
        elif kind == "mul":
            gates.append(Gate(Op.MUL, (a, b), ()))
        else:
            gates.append(Gate(Op.LIN, (a, b), (draw(st.sampled_from(VALUES)), draw(st.sampled_from(VALUES)))))
    outs = draw(st.lists(st.integers(0, nd + len(gates) - 1), max_size=nd))  # repeats and inputs allowed
    return Circuit(n, d, tuple(gates), tuple(outs), "mutants")


def _same(a: Circuit | Model | Compiled, b: Circuit | Model | Compiled) -> bool:
    x = a.model if isinstance(a, Compiled) else a
    y = b.model if isinstance(b, Compiled) else b
    ring = shared_ring(x, y)
    return [[str(p) for p in row] for row in polynomials(x, ring)] == [[str(p) for p in row] for row in polynomials(y, ring)]


HOW = st.sampled_from([("dense", "auto"), ("kaleidoscope", "auto"), ("kaleidoscope", "exact"), ("kaleidoscope", "greedy")])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_circuits(), HOW, st.sampled_from(["auto", "exact", "randomized"]))
def test_every_circuit_is_proved_equal_to_its_compilation(c: Circuit, how: tuple[str, str], method: str) -> None:
    out = compile(c, method=how[0]) if how[0] == "dense" else compile(c, plan=how[1])
    assert not out.over_bound(), out.over_bound()
    assert verify(c, out, method=method).verdict.value == "proved"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_circuits(), HOW, st.integers(0, 10**6), st.booleans(), st.sampled_from(["auto", "exact", "randomized"]))
def test_a_mutant_is_proved_only_when_equal_and_refuted_otherwise(c: Circuit, how: tuple[str, str], seed: int,
                                                                   gates: bool, method: str) -> None:
    out = compile(c, method=how[0]) if how[0] == "dense" else compile(c, plan=how[1])
    try:
        if gates:
            lhs: Circuit | Model | Compiled = gate_mutant(c, seed, tuple(GATE_OPERATORS)).obj
            rhs: Circuit | Model | Compiled = out
        else:
            lhs, rhs = c, weight_mutant(out.model, seed, tuple(WEIGHT_OPERATORS)).obj
    except UsageError:
        return  # nothing to mutate (no gate, no nonzero weight)
    report = verify(lhs, rhs, method=method)
    equal = _same(lhs, rhs)
    assert report.verdict.value == ("proved" if equal else "refuted") or report.verdict.value == "unknown"
    if report.verdict.value == "refuted":
        assert report.counterexample is not None


def test_swapping_outputs_that_name_the_same_node_is_refused() -> None:
    """It returned the circuit unchanged: a "mutant" every verifier must prove."""
    c = Circuit(1, 3, (Gate.mul(0, 1),), (3, 3, 0))
    with pytest.raises(UsageError, match=r"positions 0 and 1, both %3 \(the exchange would change nothing\)"):
        swap_outputs(c, 0, 1)
    with pytest.raises(UsageError, match=r"positions 2 and 2, both %0"):
        swap_outputs(c, 2, 2)
    assert swap_outputs(c, 0, 2).outputs == (0, 3, 3)


def test_the_mode_operator_on_a_cell_names_flip_mode() -> None:
    """``mutate_weight(model, site, "mode")`` said 'expected one of … mode, found 'mode''."""
    out = compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense")
    with pytest.raises(UsageError, match=r"'mode' changes a layer's convolution mode, not a cell: use flip_mode\(model, layer\)"):
        mutate_weight(out.model, weight_sites(out.model)[0], "mode")
