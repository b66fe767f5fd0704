"""Exact, modular, degree and polynomial evaluation of circuits and models (docs/theory.md §1–§2)."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify import Circuit, Grid, IRError, Layer, Mode, Model, ShapeError, sym
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.poly import PolyRing, polynomials, shared_ring
from symverify.kernel.semantics.rings import ModRing
from symverify.semantics.exact import evaluate
from symverify.testing import circuits, models, rational_inputs


def conv_layer(n, taps, mode):
    """y = 1 ⊙ (h ⊛ u): a pure convolution (docs/appendix-h.md §2.3)."""
    return Layer.make(n, 1, b1=Grid.full(n, 1, 1), h=Grid.from_cells(n, 1, {(k, 0): v for k, v in taps.items()}), mode=mode)


def test_causal_and_cyclic_convolution_by_hand():
    u = [[1], [2], [3], [4]]
    shift1 = {1: 1}
    causal = Model(4, 1, 4, 1, (conv_layer(4, shift1, Mode.CAUSAL),))
    cyclic = Model(4, 1, 4, 1, (conv_layer(4, shift1, Mode.CYCLIC),))
    assert evaluate(causal, u) == [[0], [1], [2], [3]]
    assert evaluate(cyclic, u) == [[4], [1], [2], [3]]
    up = Model(4, 1, 4, 1, (conv_layer(4, {3: 1}, Mode.CYCLIC),))  # shift up by one = lag N−1
    assert evaluate(up, u) == [[2], [3], [4], [1]]


def test_layer_formula_by_hand():
    # y = (u·W + b1) ⊙ (h ⊛ u + b2) with every part nonzero, N' = 2, d' = 2
    W = Grid.from_rows([[1, 2], [0, 1]])
    b1 = Grid.from_rows([[1, 0], [0, 3]])
    h = Grid.from_rows([[1, 0], [2, 1]])
    b2 = Grid.from_rows([[0, 1], [1, 0]])
    m = Model(2, 2, 2, 2, (Layer(W, b1, h, b2, Mode.CAUSAL),))
    u = [[1, 2], [3, 4]]
    proj = [[1 * 1 + 2 * 0 + 1, 1 * 2 + 2 * 1 + 0], [3 + 0 + 0, 3 * 2 + 4 + 3]]
    conv = [[1 * 1 + 0, 0 * 2 + 1], [1 * 3 + 2 * 1 + 1, 0 * 4 + 1 * 2 + 0]]
    assert evaluate(m, u) == [[proj[i][j] * conv[i][j] for j in range(2)] for i in range(2)]


def test_padding_and_crop():
    ident = Layer.make(3, 2, W=Grid.identity(2), b2=Grid.full(3, 2, 1))
    m = Model(2, 1, 3, 2, (ident,))
    assert evaluate(m, [[5], [7]]) == [[5], [7]]


def test_symbolic_weights_need_params():
    L = Layer.make(1, 1, W=Grid.from_cells(1, 1, {(0, 0): sym("w")}), b2=Grid.full(1, 1, 1))
    m = Model(1, 1, 1, 1, (L,))
    assert evaluate(m, [[3]], {"w": "1/3"}) == [[1]]
    with pytest.raises(IRError, match="parameter 'w', but no value was given"):
        evaluate(m, [[3]])
    assert str(polynomials(m)[0][0]) == "x0*p_w"


def test_input_shape_errors():
    c = Circuit(2, 1, (), (0,))
    with pytest.raises(ShapeError, match=r"circuit input: expected shape 2×1 \(n rows of d values\), found 1×1"):
        evaluate(c, [[1]])
    with pytest.raises(ShapeError, match=r"model input: expected shape 1×1 \(n rows of d values\), found 1×2"):
        evaluate(Model(1, 1, 1, 1, ()), [[1, 2]])


@given(circuits(allow_sym=False), st.data())
def test_exact_and_symbolic_circuit_evaluation_agree(c, data):
    u = data.draw(rational_inputs(c.n, c.d))
    polys = polynomials(c)
    ring = PolyRing(c.num_inputs)
    flat_u = [x for row in u for x in row]
    assert [[ring.evaluate(p, flat_u) for p in row] for row in polys] == evaluate(c, u)


@given(models(), st.data())
def test_exact_and_symbolic_model_evaluation_agree(m, data):
    u = data.draw(rational_inputs(m.n, m.d))
    polys = polynomials(m)
    ring = PolyRing(m.n * m.d)
    flat_u = [x for row in u for x in row]
    assert [[ring.evaluate(p, flat_u) for p in row] for row in polys] == evaluate(m, u)


def _terms(p, backend):
    items = p.to_dict().items() if backend == "flint" else dict(p).items()
    return {tuple(int(e) for e in m): Fraction(str(c)) for m, c in items}


@given(circuits(allow_sym=True))
def test_flint_and_sympy_backends_agree(c):
    r1, r2 = shared_ring(c, backend="flint"), shared_ring(c, backend="sympy")
    p1, p2 = polynomials(c, r1), polynomials(c, r2)
    for ra, rb in zip(p1, p2):
        for a, b in zip(ra, rb):
            assert _terms(a, "flint") == _terms(b, "sympy")


@given(models(), st.data())
def test_modular_matches_exact(m, data):
    p = 2**61 - 1
    u = data.draw(rational_inputs(m.n, m.d))
    ring = ModRing(p)
    got = eval_model(m, [[ring.coerce(x) for x in row] for row in u], ring)
    assert got == [[ring.coerce(Fraction(x)) for x in row] for row in evaluate(m, u)]

