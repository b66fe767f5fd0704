"""The zero-support analysis (semantics.support): sound, agrees with its labelled form run through
the interpreter, and pruning by it keeps every cell's value."""

from __future__ import annotations

import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.semantics.evaluate import embed, eval_layer, eval_layers
from symverify.kernel.semantics.rings import FractionRing
from symverify.kernel.semantics.support import (
    ZERO,
    Dependence,
    DependenceRing,
    layer_support,
    model_supports,
    prune_layer,
    support_of_cells,
)
from symverify.testing import models


def _input_support(m: Model):
    return support_of_cells(((i, q) for i in range(m.n) for q in range(m.d)), m.inner_d)


def _random_state(m: Model, rng: random.Random):
    u = [[Fraction(rng.randint(-9, 9), rng.randint(1, 3)) for _ in range(m.d)] for _ in range(m.n)]
    return embed(u, m.inner_n, m.inner_d, 0)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(models(max_layers=3, pad=2), st.integers(0, 2**32))
def test_cells_outside_the_support_are_zero(m, seed):
    rng = random.Random(seed)
    sups = model_supports(m.layers, _input_support(m))
    state = _random_state(m, rng)
    ring = FractionRing()
    for layer, sup in zip(m.layers, sups[1:]):
        state = eval_layer(layer, state, ring)
        for i in range(m.inner_n):
            for q in range(m.inner_d):
                if i not in sup[q]:
                    assert state[i][q] == 0, (i, q)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(models(max_layers=3, pad=2))
def test_the_labelled_lattice_through_the_interpreter_has_the_same_support(m):
    sup = _input_support(m)
    state = [[Dependence(frozenset({i})) if i in sup[q] else ZERO for q in range(m.inner_d)] for i in range(m.inner_n)]
    for layer in m.layers:
        sup = layer_support(layer, sup).output
        state = eval_layer(layer, state, DependenceRing())
        assert support_of_cells(((i, q) for i in range(m.inner_n) for q in range(m.inner_d) if state[i][q]), m.inner_d) == sup


@settings(max_examples=60, deadline=None, derandomize=True)
@given(models(max_layers=3, pad=2), st.integers(0, 2**32))
def test_pruning_keeps_every_cell(m, seed):
    rng = random.Random(seed)
    state = _random_state(m, rng)
    sup = _input_support(m)
    ring = FractionRing()
    for layer in m.layers:
        pruned, out = prune_layer(layer, sup)
        assert out == layer_support(layer, sup).output
        assert eval_layer(pruned, state, ring) == eval_layer(layer, state, ring)
        state, sup = eval_layer(layer, state, ring), out


def test_pruning_drops_a_weight_that_only_meets_zero_and_keeps_a_live_one():
    W = Grid.from_cells(2, 2, {(0, 0): 1, (1, 0): 5})  # channel 1 is structurally 0
    layer = Layer.make(3, 2, W=W, b2=Grid.full(3, 2, 1))
    pruned, out = prune_layer(layer, support_of_cells([(0, 0), (1, 0)], 2))
    assert pruned.W.nonzero() == {(0, 0): 1}
    assert out == (frozenset({0, 1}), frozenset())


def test_causal_and_cyclic_shifts_differ_at_the_edge():
    taps = Grid.from_cells(3, 1, {(1, 0): 1})
    causal = Layer.make(3, 1, h=taps, b1=Grid.full(3, 1, 1))
    cyclic = Layer.make(3, 1, h=taps, b1=Grid.full(3, 1, 1), mode="cyclic")
    last = (frozenset({2}),)
    assert layer_support(causal, last).output == (frozenset(),)
    assert layer_support(cyclic, last).output == (frozenset({0}),)


def test_a_product_with_a_structural_zero_is_zero_in_the_labelled_lattice():
    a = Dependence(frozenset({1}))
    assert not (a * ZERO) and (a + ZERO) == a and (a * Dependence(frozenset({2}))).labels == {1, 2}
    m = Model(2, 1, 2, 1, (Layer.make(2, 1, h=Grid.from_cells(2, 1, {(0, 0): 1})),))  # b1 = W = 0: output 0
    out = eval_layers(m.layers, [[Dependence(frozenset({0}))], [Dependence(frozenset({1}))]], DependenceRing())
    assert out == [[ZERO], [ZERO]]


@settings(max_examples=80, deadline=None, derandomize=True)
@given(models(max_layers=3, pad=2), st.integers(0, 2**32))
def test_the_pruned_layer_has_the_output_support_of_the_layer(m, seed):
    """prune_layer's output support, proj ∩ conv of the layer as given, is the pruned layer's own
    (its docstring's argument), on random supports of any cells, not only the input block."""
    rng = random.Random(seed)
    for layer in m.layers:
        cells = [(i, q) for i in range(m.inner_n) for q in range(m.inner_d) if rng.random() < 0.4]
        sup = support_of_cells(cells, m.inner_d)
        pruned, out = prune_layer(layer, sup)
        assert out == layer_support(layer, sup).output == layer_support(pruned, sup).output


def test_prune_layer_finds_the_branches_once(monkeypatch):
    """The output support is read off the branches of the layer as given: one pass, not a second
    over the kept weights."""
    from symverify.kernel.semantics import support

    calls = []
    real = support._branches

    def counting(*a):
        calls.append(1)
        return real(*a)

    monkeypatch.setattr(support, "_branches", counting)
    layer = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(1, 0): 1, (0, 1): 3}), b2=Grid.full(2, 2, 1))
    pruned, out = prune_layer(layer, support_of_cells([(0, 0), (1, 0)], 2))
    assert len(calls) == 1
    assert pruned.W.nonzero() == {(0, 1): 3} and out == (frozenset(), frozenset({0, 1}))


@given(rows=st.frozensets(st.integers(0, 12), max_size=8), k=st.integers(0, 14), nn=st.integers(1, 13), cyclic=st.booleans(),
       target=st.frozensets(st.integers(0, 14), max_size=8))
def test_a_tap_is_kept_exactly_when_its_shifted_rows_meet_the_projection(rows, k, nn, cyclic, target):
    """``_meets`` (the test ``prune_layer`` keeps a tap by) is the nonemptiness of the intersection
    of the shifted rows with the target, cyclic or not, an empty target included."""
    from symverify.kernel.semantics import support

    assert support._meets(rows, k, nn, cyclic, target) is bool(support._shifted(rows, k, nn, cyclic) & target)


def test_prune_layer_tests_each_tap_without_building_its_shifted_rows(monkeypatch):
    """A tap's shifted rows are built once, for the convolution branch, not again to test the tap."""
    from symverify.kernel.semantics import support

    built = []
    real = support._shifted

    def counting(*args):
        built.append(args[1])
        return real(*args)

    monkeypatch.setattr(support, "_shifted", counting)
    layer = Layer.make(4, 1, h=Grid.from_cells(4, 1, {(1, 0): 1, (3, 0): 2}), b1=Grid.from_cells(4, 1, {(1, 0): 1}))
    new, out = support.prune_layer(layer, (frozenset({0}),))
    assert sorted(built) == [1, 3]  # the convolution branch's two taps, once each
    assert new.h.nonzero() == {(1, 0): 1} and out == (frozenset({1}),)  # the tap landing on row 3 is dropped
