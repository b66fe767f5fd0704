"""The hypothesis strategies of ``symverify.strategies`` refuse sizes that ``verify`` would refuse
when they are made, and shrink failing examples to the fewest gates, layers and weights (README,
"Symbolic identities in your CI")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import LimitError, SymverifyError, UsageError
from symverify.ir import limits
from symverify.kernel.ir.circuit import Op
from symverify.strategies import MAX_INPUT_CELLS, circuits, models, rational_inputs

_FIND = settings(database=None, max_examples=400, derandomize=True, deadline=None,
                 suppress_health_check=list(HealthCheck))


# ---- 1. sizes beyond the IR limits are refused when the strategy is made ------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: circuits(max_n=4096, max_d=1025),
     r"circuits\(max_n=4096, max_d=1025\): 4198400 inputs is more than symverify.ir.limits.MAX_INPUTS = 4194304"),
    (lambda: circuits(max_gates=2**24 + 1),
     r"circuits\(max_gates=16777217\): 16777217 gates is more than symverify.ir.limits.MAX_GATES = 16777216"),
    (lambda: models(max_n=2**22, max_d=2),
     r"models\(max_n=4194304, max_d=2\): 8388608 inputs is more than symverify.ir.limits.MAX_INPUTS"),
    (lambda: models(max_n=2048, max_d=2047, pad=1),
     r"models\(max_n=2048, max_d=2047, pad=1\): the inner state \(max_n\+pad\)·\(max_d\+pad\): 4196352 cells is more "
     r"than symverify.ir.limits.MAX_CELLS = 4194304"),
])
def test_strategies_refuse_sizes_over_the_ir_limits(make, message):
    """Such sizes were accepted; the first drawn object that big was refused by ``verify`` deep inside
    hypothesis (or hypothesis gave up on drawing it)."""
    with pytest.raises(LimitError, match=message):
        make()


def test_strategies_read_the_limits_when_made(monkeypatch):
    """A limit lowered by the user (``symverify.ir.limits.MAX_INPUTS = …``) is the one checked."""
    monkeypatch.setattr(limits, "MAX_INPUTS", 8)
    circuits(max_n=2, max_d=4)
    with pytest.raises(LimitError, match=r"circuits\(max_n=3, max_d=3\): 9 inputs is more than .*MAX_INPUTS = 8"):
        circuits(max_n=3, max_d=3)
    with pytest.raises(LimitError, match=r"rational_inputs\(3, 3\): 9 inputs is more than .*MAX_INPUTS = 8"):
        rational_inputs(3, 3)


def test_min_outputs_hypothesis_cannot_draw_is_refused():
    """``min_outputs=5000`` on a 100×100 circuit made every example overrun hypothesis' buffer."""
    with pytest.raises(UsageError, match=rf"circuits\(min_outputs\): expected at most MAX_INPUT_CELLS = {MAX_INPUT_CELLS}"
                                         r" .*found 5000"):
        circuits(max_n=100, max_d=100, min_outputs=5000)


@pytest.mark.parametrize("make", [lambda: circuits(max_n=3, max_d=2, max_gates=2**24),
                                  lambda: models(max_n=2, max_d=2, max_layers=10**9),
                                  lambda: models(max_n=1000, max_d=1000, pad=0, max_layers=1)])
def test_sizes_within_the_limits_draw(make):
    """A huge ``max_gates`` or ``max_layers`` drew a count first and then that many gates or layers
    (overrunning hypothesis' buffer on nearly every example); a 1000×1000 model drew every weight one
    by one. Lists of gates, layers and nonzero weights keep every example small."""
    seen = []

    @settings(max_examples=20, database=None, derandomize=True, deadline=None)
    @given(make())
    def run(x):
        seen.append(x)

    run()
    assert len(seen) == 20


# ---- 2. shrinking -------------------------------------------------------------------------------
def test_circuits_shrink_to_one_multiplication():
    """A circuit "with a multiplication" was reported with about 8 gates (a drawn count followed by
    gates that each depend on the ones before); it shrinks to the one-gate circuit on a 1×1 input."""
    c = find(circuits(), lambda c: any(g.op is Op.MUL for g in c.gates), settings=_FIND)
    assert (c.n, c.d, len(c.gates), c.gates[0].op) == (1, 1, 1, Op.MUL)
    assert c.outputs == ()


def _reads_gates(c, g):
    return all(a >= c.n * c.d for a in g.args)


def _mul_of_gates(c):
    return any(g.op is Op.MUL and _reads_gates(c, g) for g in c.gates)


def _two_muls(c):
    return sum(g.op is Op.MUL for g in c.gates) >= 2


def _mul_of_mul_of_gates(c):
    nd = c.n * c.d
    return any(g.op is Op.MUL and any(a >= nd and c.gates[a - nd].op is Op.MUL and _reads_gates(c, c.gates[a - nd])
                                      for a in g.args) for g in c.gates)


@pytest.mark.parametrize("prop, gates", [(_mul_of_gates, 2), (_two_muls, 2), (_mul_of_mul_of_gates, 3)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_circuits_shrink_away_the_gates_a_property_does_not_need(prop, gates, seed):
    """A gate count drawn first, then gates whose references depend on the ones before, left 3 to 12
    gates where 2 or 3 suffice (a multiplication of two gates: ``[const, const, mul]`` was reported
    with 7 to 12 gates, on a 2×2 input); lists of same-shaped gates reading relative nodes shrink to
    the fewest gates, on a 1×1 input."""
    import random

    c = find(circuits(), prop, settings=settings(_FIND, derandomize=False), random=random.Random(seed))
    assert len(c.gates) == gates and (c.n, c.d) == (1, 1) and c.outputs == ()


def test_circuits_shrink_outputs_and_stay_valid():
    c = find(circuits(max_n=3, max_d=2, min_outputs=2), lambda c: len(c.outputs) >= 3, settings=_FIND)
    assert len(c.outputs) == 3 and c.gates == () and set(c.outputs) == {0}
    sv.Circuit(c.n, c.d, c.gates, c.outputs)  # still a valid circuit


def test_models_shrink_to_one_layer_and_one_weight():
    m = find(models(max_n=3, max_d=3, max_layers=4, pad=2),
             lambda m: any(layer.W.nonzero_count() for layer in m.layers), settings=_FIND)
    assert len(m.layers) == 1 and m.layers[0].W.nonzero_count() == 1
    assert (m.n, m.d, m.inner_n, m.inner_d) == (1, 1, 1, 1)
    assert all(g.nonzero_count() == 0 for name, g in m.layers[0].grids() if name != "W")


@settings(max_examples=60, database=None, derandomize=True, deadline=None)
@given(circuits(max_n=2, max_d=3, max_gates=6, min_outputs=3), st.data())
def test_drawn_circuits_are_valid_and_within_their_arguments(c, data):
    assert 1 <= c.n <= 2 and 1 <= c.d <= 3 and len(c.gates) <= 6
    assert min(3, c.n * c.d) <= len(c.outputs) <= c.n * c.d
    for k, g in enumerate(c.gates):
        assert all(0 <= a < c.n * c.d + k for a in g.args)
    assert all(0 <= o < c.num_nodes for o in c.outputs)
    u = data.draw(rational_inputs(c.n, c.d))
    y = sv.evaluate(c, u)
    assert len(y) == c.n and all(len(row) == c.d for row in y)


def test_strategy_errors_are_symverify_errors():
    for make in (lambda: circuits(max_gates=2**30), lambda: models(max_n=2**30)):
        with pytest.raises(SymverifyError):
            make()
