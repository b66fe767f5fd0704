"""Proposition H.10 (remember): proofs, the layer constant, an exact oracle, mutations, validation."""

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify.errors import IRError, ShapeError
from symverify.gadgets.remember import REMEMBER_MAX_LAYERS, ChannelF, ConstF, remember_channels, remember_rows
from symverify.kernel.gadgets.fragment import Fragment
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.fragment import prove_fragment
from symverify.semantics.exact import evaluate


def e0(rows, cols):
    return Grid.from_cells(rows, cols, {(0, t): 1 for t in range(cols)})


CASES = [
    ("rows e0 const", lambda: remember_rows(4, 1, 2, 1, e0(2, 1), ConstF(Grid.symbolic("F", 2, 1))), 1),
    ("rows e0 channel (H.21 use)", lambda: remember_rows(4, 2, 2, 1, e0(2, 1), ChannelF((1,))), 1),
    ("rows g*e0 channel", lambda: remember_rows(3, 2, 1, 2, Grid.from_cells(1, 1, {(0, 0): sym("g")}), ChannelF((1,))), 1),
    ("rows all-h const", lambda: remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1))), 2),
    ("rows all-h channel 2 cols", lambda: remember_rows(8, 4, 2, 2, Grid.symbolic("h", 2, 2), ChannelF((3, 0)), cols=(1, 2)), 2),
    ("rows all-h no r", lambda: remember_rows(2, 2, 2, 0, Grid.symbolic("h", 2, 1), ChannelF((1,))), 1),
    ("channels H.21 multiply", lambda: remember_channels(1, 5, 2, 1, e0(1, 2), ChannelF((3, 4))), 1),
    ("channels all-h const 3 rows", lambda: remember_channels(3, 3, 2, 1, Grid.symbolic("h", 3, 2), ConstF(Grid.symbolic("F", 3, 2)), m=3), 1),
    ("channels all-h channel f 2 rows", lambda: remember_channels(3, 5, 2, 1, Grid.symbolic("h", 2, 2), ChannelF((4, 3)), m=2), 1),
]


@pytest.mark.parametrize("name,build,layers", CASES, ids=[c[0] for c in CASES])
def test_remember_is_proved_with_the_stated_constant(name, build, layers):
    frag = build()
    p = prove_fragment(frag)
    assert p.proved, p.failure
    assert frag.depth == layers <= REMEMBER_MAX_LAYERS
    assert frag.bounds["layers"] == layers and p.ok


def test_two_layer_form_needs_the_workspace_and_uses_it_cleanly():
    frag = remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1)))
    assert frag.layers[1].mode.value == "cyclic"
    spec = frag.spec()
    assert spec.checkpoints and spec.checkpoints[0][0] == 1  # r parked at rows [a+s, a+b+s)
    assert {c.row for c in spec.checkpoints[0][1]} == {0, 1, 5}


def test_remember_output_matches_the_formula_on_numbers():
    h = Grid.from_rows([[2], [3]])
    F = Grid.from_rows([[5], [7]])
    frag = remember_rows(6, 1, 2, 1, h, ConstF(F))
    out = evaluate(frag.model(), [[1], [10], [100], [0], [0], [0]])
    # x = (1, 10): h ⊛ x = (2, 2·10 + 3·1) = (2, 23); f ⊙ · = (10, 161); r = 100 kept
    assert out == [[10], [161], [100], [0], [0], [0]]


@given(
    a=st.integers(1, 3),
    b=st.integers(0, 2),
    data=st.data(),
)
def test_remember_rows_agrees_with_a_direct_oracle(a, b, data):
    q = st.fractions(min_value=-5, max_value=5, max_denominator=4)
    h = [data.draw(q) for _ in range(a)]
    fvals = [data.draw(q) for _ in range(a)]
    x = [data.draw(q) for _ in range(a)]
    r = [data.draw(q) for _ in range(b)]
    use_channel = data.draw(st.booleans())
    nn = 2 * (a + b) + data.draw(st.integers(0, 1))
    hg = Grid.from_rows([[v] for v in h])
    if use_channel:
        frag = remember_rows(nn, 2, a, b, hg, ChannelF((1,)))
        u = [[x[i], fvals[i]] for i in range(a)] + [[v, 0] for v in r] + [[0, 0]] * (nn - a - b)
        got = [row[0] for row in evaluate(frag.model(), u)]
    else:
        frag = remember_rows(nn, 1, a, b, hg, ConstF(Grid.from_rows([[v] for v in fvals])))
        u = [[v] for v in x + r] + [[0]] * (nn - a - b)
        got = [row[0] for row in evaluate(frag.model(), u)]
    conv = [sum((h[k] * x[i - k] for k in range(i + 1)), Fraction(0)) for i in range(a)]
    want = [fvals[i] * conv[i] for i in range(a)] + r + [0] * (nn - a - b)
    assert got == want
    assert frag.depth <= REMEMBER_MAX_LAYERS


def test_every_mutated_weight_of_remember_is_refuted():
    frag = remember_rows(6, 2, 2, 1, Grid.symbolic("h", 2, 1), ChannelF((1,)))
    count = 0
    for li, layer in enumerate(frag.layers):
        for gname, g in layer.grids():
            for (i, j), v in g.nonzero().items():
                bad_layer = replace(layer, **{gname: g.paint_cells([(i, j, v + 1)])})
                layers = list(frag.layers)
                layers[li] = bad_layer
                bad = Fragment("mutant", 6, 2, tuple(layers), frag.entry, frag.exit, {}, frag.build_spec)
                p = prove_fragment(bad)
                assert not p.proved and not p.compositional, (li, gname, i, j)
                count += 1
    assert count > 5


@pytest.mark.parametrize(
    "build,err,match",
    [
        (lambda: remember_rows(3, 1, 0, 1, e0(1, 1), ConstF(e0(1, 1))), ShapeError, "a ≥ 1"),
        (lambda: remember_rows(3, 1, 2, 2, e0(2, 1), ConstF(e0(2, 1))), ShapeError, "a \\+ b ≤ N' = 3"),
        (lambda: remember_rows(5, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(e0(2, 1))), ShapeError, "workspace, N' ≥ 2\\(a \\+ b\\) = 6"),
        (lambda: remember_rows(4, 1, 2, 1, e0(2, 1), ConstF(e0(1, 1))), ShapeError, "constant of the x block's shape 2×1"),
        (lambda: remember_rows(4, 3, 2, 1, e0(2, 1), ChannelF((1, 2))), ShapeError, "one f channel per x channel"),
        (lambda: remember_rows(4, 2, 2, 1, e0(2, 2), ChannelF((0, 1)), cols=(0, 1)), IRError, "also used by the x/r blocks"),
        (lambda: remember_rows(4, 2, 2, 1, e0(2, 1), ChannelF((5,)), cols=(0,)), ShapeError, "distinct and in"),
        (lambda: remember_rows(4, 1, 2, 1, e0(2, 1), "f"), IRError, "expected ConstF or ChannelF"),
        (lambda: remember_rows(4, 1, 2, 1, e0(3, 1), ConstF(e0(2, 1))), ShapeError, "expected an 2×1 filter"),
        (lambda: remember_rows(4, 2, 2, 1, e0(2, 1), ConstF(e0(2, 1)), cols=(3,)), ShapeError, "distinct channels"),
        (lambda: remember_channels(1, 3, 2, 2, e0(1, 2), ConstF(e0(1, 2))), ShapeError, "a \\+ b ≤ d' = 3"),
        (lambda: remember_channels(1, 3, 2, 0, e0(1, 2), ConstF(e0(1, 2)), m=2), ShapeError, "1 ≤ m ≤ N' = 1"),
        (lambda: remember_channels(1, 4, 2, 1, e0(1, 2), ChannelF((2, 3))), IRError, "also used"),
        (lambda: remember_channels(1, 5, 2, 1, e0(2, 2), ChannelF((3, 4))), ShapeError, "expected an 1×2 filter"),
    ],
)
def test_remember_validation(build, err, match):
    with pytest.raises(err, match=match):
        build()
