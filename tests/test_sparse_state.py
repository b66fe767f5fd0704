"""The sparse-state layer backend agrees with the reference ring interpreter cell for cell."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify.deadline import DeadlineExceededError
from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.bounds import BoundRing
from symverify.kernel.semantics.evaluate import eval_layers
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.semantics.rings import FractionRing, ModRing
from symverify.kernel.semantics.sparse import SparseArithmetic, eval_layers_sparse, to_cells, to_rows
from symverify.strategies import models

RATIONALS = [Fraction(1, 2), Fraction(-2, 3), Fraction(5, 7), 3, -1, 1]


@st.composite
def _rational_model(draw: st.DrawFn) -> Model:
    """A random model (non-power-of-two sizes included) with some weights repainted to rationals."""
    m = draw(models(max_n=3, max_d=3, max_layers=3, pad=3))
    layers = []
    for ly in m.layers:
        for name in ("W", "b1", "h", "b2"):
            g = getattr(ly, name)
            for _ in range(draw(st.integers(0, 2))):
                i, j = draw(st.integers(0, g.rows - 1)), draw(st.integers(0, g.cols - 1))
                g = g.paint(i, i + 1, j, j + 1, draw(st.sampled_from(RATIONALS)))
            ly = replace(ly, **{name: g})
        layers.append(ly)
    return replace(m, layers=tuple(layers))


@st.composite
def _model_and_state(draw: st.DrawFn) -> tuple[Model, list[list[Any]]]:
    m = draw(_rational_model())
    value = st.sampled_from([0, 0, 1, -2, Fraction(3, 4), Fraction(-1, 5)])
    state = [[draw(value) for _ in range(m.inner_d)] for _ in range(m.inner_n)]
    return m, state


def _dense(cells: dict[tuple[int, int], Any], m: Model, zero: Any) -> list[list[Any]]:
    return to_rows(cells, m.inner_n, m.inner_d, zero)


@given(_model_and_state())
def test_sparse_layers_agree_with_the_ring_interpreter_on_rationals(case: tuple[Model, list[list[Any]]]) -> None:
    m, state = case
    ring = FractionRing()
    want = eval_layers(m.layers, state, ring)
    got = eval_layers_sparse(m.layers, to_cells(state), ring)
    assert _dense(got, m, 0) == want
    assert all(v for v in got.values())  # only nonzero cells are stored


@given(_model_and_state(), st.sampled_from([11, 13, 2**31 - 1]))
def test_sparse_layers_agree_with_the_ring_interpreter_mod_p(case: tuple[Model, list[list[Any]]], p: int) -> None:
    m, state = case
    ring = ModRing(p)
    start = [[ring.coerce(x) for x in row] for row in state]
    want = eval_layers(m.layers, start, ring)
    got = eval_layers_sparse(m.layers, to_cells(start), ring)
    assert [[x % p for x in row] for row in _dense(got, m, 0)] == [[x % p for x in row] for row in want]


@given(_rational_model())
def test_sparse_layers_agree_with_the_ring_interpreter_on_polynomials(m: Model) -> None:
    ring = PolyRing(m.inner_n * m.inner_d)
    gens = ring.inputs()
    state = [[gens[i * m.inner_d + j] if (i + j) % 2 == 0 else ring.zero for j in range(m.inner_d)] for i in range(m.inner_n)]
    want = eval_layers(m.layers, state, ring)
    got = eval_layers_sparse(m.layers, to_cells(state), ring)
    assert _dense(got, m, ring.zero) == want


def test_cyclic_and_causal_wraps_and_the_unit_shortcut() -> None:
    # a 5-row state (not a power of two), lag 2: causal drops rows 3, 4; cyclic wraps them to 0, 1
    h = Grid.from_cells(5, 1, {(2, 0): 1})
    for mode in ("causal", "cyclic"):
        layer = Layer.make(5, 1, h=h, b1=Grid.full(5, 1, Fraction(1, 3)), mode=mode)
        state = [[Fraction(k + 1)] for k in range(5)]
        want = eval_layers([layer], state, FractionRing())
        assert _dense(eval_layers_sparse([layer], to_cells(state), FractionRing()), Model(5, 1, 5, 1, (layer,)), 0) == want


def test_rings_without_a_falsy_zero_are_refused() -> None:
    with pytest.raises(IRError, match="falsy"):
        SparseArithmetic(BoundRing(1))  # bound values have no truth value


def test_the_deadline_is_polled_inside_a_layer() -> None:
    n = 600
    layer = Layer.make(n, 1, W=Grid.identity(1), h=Grid.full(n, 1, 1))
    calls = []

    def check() -> None:
        calls.append(1)
        if len(calls) > 3:
            raise DeadlineExceededError("timeout")

    with pytest.raises(DeadlineExceededError):
        eval_layers_sparse([layer], {(i, 0): 1 for i in range(n)}, FractionRing(), check)  # n·n multiply-adds
    assert len(calls) > 3


@given(_model_and_state())
def test_the_projection_at_one_cell_is_u_times_w_plus_b1(case: tuple[Model, list[list[Any]]]) -> None:
    m, state = case
    arith = SparseArithmetic(FractionRing())
    for layer in m.layers:
        proj = arith.project(arith.prepare(layer), to_cells(state), iter(()))
        W, b1 = layer.W.to_rows(), layer.b1.to_rows()
        for i in range(m.inner_n):
            for q in range(m.inner_d):
                want = sum((state[i][p] * W[p][q] for p in range(m.inner_d)), Fraction(0)) + b1[i][q]
                assert (proj.at(i, q) or 0) == want
