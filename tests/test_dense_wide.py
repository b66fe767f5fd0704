"""The dense compiler on wide gate-free circuits: no per-cell work for layout moves without layers,
a support pass that touches only the columns with weights, and the same results as before."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify.compiler.dense as dense
from symverify.compiler import compile
from symverify.compiler.prune import prune_structural_zeros
from symverify.errors import CompileError
from symverify.kernel.gadgets.fragment import Fragment, block
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics import support
from symverify.semantics.exact import evaluate


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[tuple[int, int]]]:
    """Record the depth of every fragment whose boundaries are derived, and every rows_to_channels call."""
    depths: list[int] = []
    moves: list[tuple[int, int]] = []
    derive, move = dense.fragment_boundaries, dense.rows_to_channels

    def boundaries(frag, entry, first):
        depths.append(frag.depth)
        return derive(frag, entry, first)

    def rows_to_channels(n, d, nn, dd):
        moves.append((n, d))
        return move(n, d, nn, dd)

    monkeypatch.setattr(dense, "fragment_boundaries", boundaries)
    monkeypatch.setattr(dense, "rows_to_channels", rows_to_channels)
    return depths, moves


def test_a_wide_gate_free_circuit_builds_no_layerless_layout_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Circuit(1, d, (), (0,))``: the layout moves have no layers; before, both were built and their
    specs evaluated over every one of the d state cells, only for the boundaries to be dropped."""
    depths, moves = _spy(monkeypatch)
    c = Circuit(1, 4096, (), (0,))
    out = compile(c, method="dense")
    assert moves == [] and 0 not in depths
    assert out.model.signature == (1, 1, 4096, 1, 4096) and out.resources["layout_layers"] == 0
    assert check_certificate(c, out.model, out.certificate).ok
    rng = random.Random(1)
    u = [[rng.randint(-9, 9) for _ in range(4096)]]
    assert evaluate(out.model, u) == evaluate(c, u)


def test_layout_moves_with_layers_are_still_built_and_derived(monkeypatch: pytest.MonkeyPatch) -> None:
    depths, moves = _spy(monkeypatch)
    c = Circuit(2, 2, (Gate.mul(0, 3),), (4, 1, 2))  # n = 2: rows_to_channels has 2 layers; m = 3 > d: so has channels_to_rows
    out = compile(c, method="dense")
    assert moves == [(2, 2)] and depths == [2, 2] and out.resources["layout_layers"] == 4
    assert check_certificate(c, out.model, out.certificate).ok
    rng = random.Random(2)
    u = [[rng.randint(-9, 9) for _ in range(2)] for _ in range(2)]
    assert evaluate(out.model, u) == evaluate(c, u)


def test_a_layerless_fragment_s_entry_is_still_checked() -> None:
    plan = dense._Plan(1, 4, [], [])
    frag = Fragment("move", 1, 4, (), block([0], range(2)), block([0], range(2)), {"layers": 0}, None)
    plan.add_affine(frag, (Cell.node(0, 1, 1),))
    assert plan.frags == [frag] and plan.layers == 0 and plan.bounds == []
    with pytest.raises(CompileError, match=r"entry cell \(0, 3\) is outside the entry interface of move"):
        plan.add_affine(frag, (Cell.node(0, 3, 3),))


def _branches_reference(W, h, b1, b2, sup, nn, dd, cyclic):
    """The column-by-column definition (docs: module docstring of semantics.support), every column visited."""
    proj, conv = [], []
    for q in range(dd):
        pr = {a for a, c in b1 if c == q}
        for p, c in W:
            if c == q:
                pr |= sup[p]
        cv = {a for a, c in b2 if c == q}
        for k, c in h:
            if c == q:
                cv |= {(s + k) % nn for s in sup[q]} if cyclic else {s + k for s in sup[q] if s + k < nn}
        proj.append(frozenset(pr))
        conv.append(frozenset(cv))
    return tuple(proj), tuple(conv)


@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(1, 6), st.integers(1, 7), st.booleans())
def test_branches_agree_with_the_column_by_column_definition(data, nn: int, dd: int, cyclic: bool) -> None:
    cells = st.lists(st.tuples(st.integers(0, nn - 1), st.integers(0, dd - 1)), max_size=8)
    W = data.draw(st.lists(st.tuples(st.integers(0, dd - 1), st.integers(0, dd - 1)), max_size=8))
    h, b1, b2 = data.draw(cells), data.draw(cells), data.draw(cells)
    sup = tuple(frozenset(data.draw(st.sets(st.integers(0, nn - 1), max_size=nn))) for _ in range(dd))
    got = support._branches(W, h, b1, b2, sup, nn, dd, cyclic)
    assert got == _branches_reference(W, h, b1, b2, sup, nn, dd, cyclic)
    assert all(type(s) is frozenset for part in got for s in part) and all(len(part) == dd for part in got)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 3), st.integers(0, 2**32))
def test_pruning_a_layer_keeps_what_it_kept_before(nn: int, dd: int, pad: int, seed: int) -> None:
    """prune_structural_zeros with the input block built directly equals the cell-by-cell support."""
    rng = random.Random(seed)

    def grid(r: int, c: int) -> Grid:
        return Grid.from_cells(r, c, {(rng.randrange(r), rng.randrange(c)): rng.choice([1, -2, 3]) for _ in range(rng.randint(0, 4))})

    N, D = nn + pad, dd + pad
    layers = tuple(Layer(grid(D, D), grid(N, D), grid(N, D), grid(N, D), rng.choice([Mode.CAUSAL, Mode.CYCLIC])) for _ in range(2))
    m = Model(nn, dd, N, D, layers)
    sup = support.support_of_cells(((i, q) for i in range(nn) for q in range(dd)), D)
    want = []
    for layer in layers:
        new, sup = support.prune_layer(layer, sup)
        want.append(new)
    assert prune_structural_zeros(m).layers == tuple(want)
