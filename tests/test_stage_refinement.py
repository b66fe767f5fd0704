"""The compositional memory guard's refined stage bound: numpy over the stage's layers
(``model_rows`` started from the boundary's cells) against the cell-by-cell BoundRing pass."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.kernel.provers import compositional as comp_mod
from symverify.kernel.provers.bounds import BoundRing, bound_rows, layers_peak
from symverify.library import random_circuit


def _slow(model, lo, hi, b0, variables):
    ring = BoundRing(variables)
    state = [[ring.zero] * model.inner_d for _ in range(model.inner_n)]
    for c in b0.cells:
        state[c.row][c.col] = comp_mod._cell_value(c, dict.fromkeys(c.nodes(), ring.var), ring)
    return layers_peak(model.layers[lo:hi], state, ring)[1]


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([(2, 2, 12, 4), (3, 2, 24, 6)]))
def test_numpy_stage_bound_is_at_least_the_exact_pass(seed, shape):
    n, d, size, depth = shape
    c = random_circuit(n, d, size, depth, seed=seed, num_outputs=n)
    compiled = sv.compile(c)
    model, bs = compiled.model, compiled.certificate.boundaries
    for k in range(len(bs) - 1):
        b0, b1 = bs[k], bs[k + 1]
        variables = max(1, len(comp_mod._boundary(b0, {}).nodes))
        fast = comp_mod._refined_layers(model, b0.layer, b1.layer, b0, variables, None)
        slow = _slow(model, b0.layer, b1.layer, b0, variables)
        assert slow <= fast <= slow * 1.1 + 8


def test_whole_model_as_one_stage_matches_the_exact_pass():
    c = random_circuit(3, 2, 30, 6, seed=3, num_outputs=3)
    compiled = sv.compile(c)
    model, bs = compiled.model, compiled.certificate.boundaries
    b0 = bs[0]
    variables = c.num_inputs
    fast = comp_mod._refined_layers(model, 0, len(model.layers), b0, variables, None)
    slow = _slow(model, 0, len(model.layers), b0, variables)
    assert slow <= fast <= slow * 1.1 + 8


def test_bound_rows_round_up_and_keep_zeros():
    ring = BoundRing(3)
    x = ring.var + ring.var + ring.coerce(5)
    rows = bound_rows([[ring.zero, x]])
    assert rows[0][0] == float("-inf") and rows[0][3] == float("-inf")
    deg, s, h, cnt = rows[1]
    assert deg == x.deg and s == x.s
    assert 2.0**h >= 7 and 2.0**cnt >= x.cnt


def test_refinement_falls_back_beyond_the_numpy_limits(monkeypatch):
    c = random_circuit(2, 2, 12, 4, seed=1, num_outputs=2)
    compiled = sv.compile(c)
    model, bs = compiled.model, compiled.certificate.boundaries
    b0, b1 = bs[0], bs[1]
    monkeypatch.setattr(comp_mod, "model_rows", lambda *a, **k: None)
    got = comp_mod._refined_layers(model, b0.layer, b1.layer, b0, c.num_inputs, None)
    assert got == _slow(model, b0.layer, b1.layer, b0, c.num_inputs)


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_decides_a_certified_pair_by_compositional_without_a_precheck(seed):
    c = random_circuit(3, 2, 30, 6, seed=seed, num_outputs=3)
    rep = sv.verify(c, sv.compile(c))
    assert rep.proved and rep.method == "compositional"
    assert not any(k.startswith("method.precheck") for k in rep.timings)
