"""Adversarial differential tests of the structural bounds the randomized method's ``ε`` rests on.

Random circuits and BaseConv models (hand-built with sparse weights: integers like ``10^400``,
rationals with large denominators, negative values, parameters, zeros, both layer modes; and
circuits compiled into models) are expanded exactly (:mod:`symverify.kernel.semantics.poly`); every
bound path, forced in turn (the exact circuit pass, the numpy circuit pass, the numpy layer
pass, the exact layer pass, and :func:`structure_bounds` with each), must be at least the truth:
the total degree, the monomial count, ``ℓ1(Q^s·f)`` with ``Q^s·f`` integral, and for a pair of
sides every nonzero integer coefficient of ``Q^S·(lhs − rhs)`` below ``2^height_bits``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers import bounds as bd
from symverify.kernel.provers import bounds_layers as bl
from symverify.kernel.provers.bound_rules import from_exact, scalar_rows, to_exact
from symverify.kernel.provers.bounds_layers import read_rects
from symverify.kernel.provers.bounds_vector import circuit_rows, total_count
from symverify.kernel.provers.sides import as_side
from symverify.kernel.semantics.evaluate import crop, embed, eval_circuit_nodes, eval_layer
from symverify.kernel.semantics.poly import PolyRing, polynomials, shared_ring
from symverify.kernel.semantics.straightline import program

Val = tuple[int, int, int, int, int]
A, B = sym("a"), sym("b")

HUGE = 10**400
# Weights an adversary would pick: huge and tiny magnitudes, large prime denominators, signs, parameters.
weights = st.one_of(
    st.just(0),
    st.integers(-3, 3),
    st.sampled_from([HUGE, -HUGE, 2**1100 + 1, -(2**61 - 1), 2**61 - 1, 2**64]),
    st.builds(Fraction, st.sampled_from([1, -1, 3, HUGE, -(2**127 - 1)]),
              st.sampled_from([2, 3, 2**89 - 1, 10**60 + 7, HUGE + 1])),
    st.sampled_from([A, B, A * B - 3, Fraction(1, 2**61 - 1) * A**3 + HUGE * B,
                     -A**2 * B**2 + Fraction(HUGE, 7), A**5]),
)


# ---- the truth ---------------------------------------------------------------------------------


def _coeffs(p: Any) -> list[Fraction]:
    return [Fraction(int(c.p), int(c.q)) for c in p.coeffs()]


def _truth(obj: Circuit | Model, ring: Any) -> list[Any]:
    return [p for row in polynomials(obj, ring) for p in row]


def _covers(ring: Any, p: Any, v: Val, q: int) -> None:
    """The bound ``v = (deg, s, m, e, cnt)`` covers polynomial ``p``: degree, terms, ``Q^s·p``
    integral with ``ℓ1 ≤ m·2^e``."""
    deg, s, m, e, cnt = v
    coeffs = _coeffs(p)
    if not coeffs:
        return
    assert ring.degree(p) <= deg, (ring.degree(p), deg)
    assert len(coeffs) <= cnt, (len(coeffs), cnt)
    scaled = [c * q**s for c in coeffs]
    assert all(c.denominator == 1 for c in scaled), (q, s)
    assert sum(abs(c) for c in scaled) <= m << e


def _min_height(coeffs: list[Fraction], q: int) -> int:
    """``max |c|`` over the coefficients of ``Q^S·Δ``, ``S`` the least making it integral (any
    larger ``S`` only makes the coefficients larger)."""
    den = math.lcm(1, *(c.denominator for c in coeffs))
    s, qs = 0, 1
    while qs % den:
        s, qs = s + 1, qs * q
        assert s < 10_000, "the common denominator does not clear the coefficients"
    return max(abs(c * qs) for c in coeffs).numerator


def _check_pair(lhs: Circuit | Model, rhs: Circuit | Model, b: bd.Bounds) -> None:
    """:class:`Bounds` of a pair covers the truth: degree of every entry of both sides, every
    nonzero coefficient of ``Q^S·(lhs − rhs)`` below ``2^height_bits`` (and below ``2^61 − 1``
    when ``height_below_m61``), monomials of both sides."""
    ring = shared_ring(lhs, rhs)
    pl, pr = _truth(lhs, ring), _truth(rhs, ring)
    total = 0
    for x, y in zip(pl, pr):
        assert ring.degree(x) <= b.degree and ring.degree(y) <= b.degree
        total += ring.nterms(x) + ring.nterms(y)
        coeffs = _coeffs(x - y)
        if coeffs:
            top = _min_height(coeffs, b.denominator)
            assert top < 1 << b.height_bits, (top.bit_length(), b.height_bits)
            assert not b.height_below_m61 or top < (1 << 61) - 1
    assert total <= b.monomials
    assert b.degree <= b.peak_degree and b.height_bits <= b.peak_height_bits
    for obj in (lhs, rhs):  # the peaks bound every intermediate value (what the size guards weigh)
        for p in _intermediates(obj, ring):
            coeffs = _coeffs(p)
            if coeffs:
                assert ring.degree(p) <= b.peak_degree
                assert _min_height(coeffs, b.denominator) < 1 << b.peak_height_bits


def _intermediates(obj: Circuit | Model, ring: Any) -> list[Any]:
    """Every node of a circuit; every cell of every state of a model."""
    u = ring.grid_input(obj.n, obj.d)
    if isinstance(obj, Circuit):
        return eval_circuit_nodes(obj, [x for row in u for x in row], ring)
    state = embed(u, obj.inner_n, obj.inner_d, ring.zero)
    out = [x for row in state for x in row]
    for layer in obj.layers:
        state = eval_layer(layer, state, ring)
        out += [x for row in state for x in row]
    return out


# ---- every path, forced ------------------------------------------------------------------------


def _ring(*objs: Circuit | Model) -> bd.BoundRing:
    sides = [as_side(o) for o in objs]
    names = frozenset().union(*(s.params() for s in sides))
    return bd.BoundRing(sides[0].num_inputs + len(names), bd.common_denominator(*sides))


def _exact_circuit(c: Circuit, ring: bd.BoundRing) -> list[Val]:
    return bd._circuit_exact(c, ring, None)[0]


def _numpy_circuit(c: Circuit, ring: bd.BoundRing) -> list[Val] | None:
    prog = program(c)
    rows = circuit_rows(prog, scalar_rows(prog.scalars), ring.variables, ring.q, width=0)
    if rows is None:
        return None
    assert total_count(rows[1]) >= 0
    return [to_exact(r, ring.q) for r in rows[0]]


def _numpy_model(m: Model, ring: bd.BoundRing) -> list[Val] | None:
    rows = bl.model_rows(m.layers, read_rects(m.layers), m.n, m.d, m.inner_n, m.inner_d, scalar_rows,
                      ring.variables, ring.q)
    return None if rows is None else [to_exact(r, ring.q) for r in rows[0]]


def _exact_model(m: Model, ring: bd.BoundRing) -> list[Val]:
    u = [[ring.var] * m.d for _ in range(m.n)]
    state, _ = bd.layers_peak(m.layers, embed(u, m.inner_n, m.inner_d, ring.zero), ring)
    return [v.v for row in crop(state, m.n, m.d) for v in row]


def _numpy_model_split(m: Model, ring: bd.BoundRing) -> list[Val] | None:
    """The numpy layer pass with one layer per window and every term list on the wide path."""
    old = bl.WINDOW_CELLS, bl.WIDE
    bl.WINDOW_CELLS, bl.WIDE = 1, 0
    try:
        return _numpy_model(m, ring)
    finally:
        bl.WINDOW_CELLS, bl.WIDE = old


def _check_paths(obj: Circuit | Model) -> None:
    ring = _ring(obj)
    pr = shared_ring(obj)
    truth = _truth(obj, pr)
    paths = [_exact_circuit, _numpy_circuit] if isinstance(obj, Circuit) else [_exact_model, _numpy_model, _numpy_model_split]
    for path in paths:
        got = path(obj, ring)  # type: ignore[operator]
        if got is None:
            continue  # the numpy pass gave up: the exact one answers
        assert len(got) <= len(truth)
        for p, v in zip(truth, got):
            _covers(pr, p, v, ring.q)


@pytest.fixture(params=["exact", "numpy"])
def forced(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """:func:`structure_bounds` with its exact passes only, or numpy passes at every size."""
    if request.param == "exact":
        monkeypatch.setattr(bd, "_model_vector", lambda m, ring, check: None)
        monkeypatch.setattr(bd, "VECTOR_GATES", 1 << 60)
    else:
        monkeypatch.setattr(bd, "VECTOR_GATES", 0)
        real = bd.circuit_rows
        monkeypatch.setattr(bd, "circuit_rows", lambda *a, **k: real(*a, **{**k, "width": 0}))
    for memo in (bd._CIRCUIT_BOUNDS, bd._MODEL_BOUNDS, bd._PEAKS):
        memo.clear()
    return str(request.param)


# ---- generators --------------------------------------------------------------------------------


@st.composite
def circuits(draw: st.DrawFn, max_gates: int = 10, shape: tuple[int, int] | None = None) -> Circuit:
    n, d = shape or (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    nd = n * d
    gates: list[Gate] = []
    for _ in range(draw(st.integers(0, max_gates))):
        nodes = nd + len(gates)
        a, b = draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1))
        kind = draw(st.sampled_from(["mul", "mul", "lin", "lin", "const", "scale"]))
        if kind == "mul":
            gates.append(Gate.mul(a, b))
        elif kind == "lin":
            gates.append(Gate.lin(a, draw(weights), b, draw(weights)))
        elif kind == "scale":
            gates.append(Gate.scale(a, draw(weights)))
        else:
            gates.append(Gate.const(draw(weights)))
    total = nd + len(gates)
    outs = tuple(draw(st.lists(st.integers(0, total - 1), min_size=nd, max_size=nd)))
    return Circuit(n, d, tuple(gates), outs, "attack")


@st.composite
def grids(draw: st.DrawFn, rows: int, cols: int) -> Grid:
    """A sparse grid: a fill (mostly 0) and a few overlapping rectangles (later ones win)."""
    fill = draw(st.one_of(st.just(0), st.just(0), weights))
    rects = []
    for _ in range(draw(st.integers(0, 3))):
        r0, c0 = draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))
        r1, c1 = draw(st.integers(r0 + 1, rows)), draw(st.integers(c0 + 1, cols))
        rects.append((r0, r1, c0, c1, draw(weights)))
    return Grid(rows, cols, fill, tuple(rects))


@st.composite
def models(draw: st.DrawFn, max_layers: int = 3, shape: tuple[int, int] | None = None) -> Model:
    n, d = shape or (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    nn, dd = n + draw(st.integers(0, 2)), d + draw(st.integers(0, 1))
    layers = []
    for _ in range(draw(st.integers(1, max_layers))):
        W, h = draw(grids(dd, dd)), draw(grids(nn, dd))
        b1, b2 = draw(grids(nn, dd)), draw(grids(nn, dd))
        layers.append(Layer(W, b1, h, b2, draw(st.sampled_from([Mode.CAUSAL, Mode.CYCLIC]))))
    return Model(n, d, nn, dd, tuple(layers), "attack")


# ---- the properties ----------------------------------------------------------------------------

_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@st.composite
def kaleidoscopes(draw: st.DrawFn) -> Kaleidoscope:
    """A ``(BB*)^w`` kaleidoscope of size 2 or 4 with the adversarial weights on its diagonals."""
    size = draw(st.sampled_from([2, 4]))
    half = size // 2

    def factor(stride: int) -> ButterflyFactor:
        diag = st.lists(weights, min_size=half, max_size=half).map(tuple)
        return ButterflyFactor(size, stride, draw(diag), draw(diag), draw(diag), draw(diag))

    groups = tuple(BBStar(size, tuple(factor(s) for s in bbstar_strides(size))) for _ in range(draw(st.integers(1, 2))))
    return Kaleidoscope(draw(st.integers(1, size)), size, groups)


@_SETTINGS
@given(circuits())
def test_every_circuit_path_covers_the_polynomials(c: Circuit) -> None:
    _check_paths(c)


@_SETTINGS
@given(models())
def test_every_model_path_covers_the_polynomials(m: Model) -> None:
    _check_paths(m)


@_SETTINGS
@given(st.data())
def test_structure_bounds_of_a_pair_cover_the_difference(forced: str, data: st.DataObject) -> None:
    lhs = data.draw(st.one_of(circuits(), models()))
    shape = (lhs.n, lhs.d)
    rhs = data.draw(st.one_of(circuits(shape=shape), models(shape=shape)))
    _check_pair(lhs, rhs, bd.structure_bounds(as_side(lhs), as_side(rhs)))


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(circuits(max_gates=5), st.sampled_from(["dense", "kaleidoscope"]))
def test_structure_bounds_of_a_circuit_and_its_compiled_model(forced: str, c: Circuit, method: str) -> None:
    compiled = symverify.compile(c, method=method)
    _check_paths(compiled.model)
    _check_pair(c, compiled.model, bd.structure_bounds(as_side(c), as_side(compiled)))


# ---- regressions -------------------------------------------------------------------------------


def _squarings(c: int, squarings: int) -> Circuit:
    """``c^(2^squarings)``: a constant squared in a chain, eight constant gates beside every
    squaring (wide enough for the numpy circuit pass)."""
    gates = [Gate.const(c)]
    last = 1
    for _ in range(squarings):
        gates.append(Gate.mul(last, last))
        last = len(gates)
        gates += [Gate.const(5)] * 8
    return Circuit(1, 1, tuple(gates), (last,))


def test_a_height_just_below_the_float_range_is_left_to_the_exact_pass() -> None:
    """``(2^4096 − 2^4068)^(2^1012)``: its numpy height is finite, within ``2^-40`` of float64's
    largest value, so rounding it up once more overflowed (``OverflowError`` from
    :func:`structure_bounds`, and from ``verify``). The numpy pass now gives up on it."""
    c = _squarings(2**4096 - 2**4068, 1012)
    prog = program(c)
    assert circuit_rows(prog, scalar_rows(prog.scalars), 1, 1) is None
    for memo in (bd._CIRCUIT_BOUNDS, bd._PEAKS):
        memo.clear()
    b = bd.structure_bounds(as_side(c), as_side(c))
    assert b.degree == 0 and b.height_bits > 4095 << 1012 and b.peak_height_bits >= b.height_bits


@pytest.mark.parametrize("m, e", [(3, 2**20), (2**61 + 1, 2**53 + 1), (2**61 + 1, 2**60 + 1), (2**62 - 1, 2**60 + 63),
                                  (1, 2**1100), (5, 7), (1, 0)])
def test_from_exact_rounds_the_height_up_at_every_exponent(m: int, e: int) -> None:
    """``h ≥ log2(m·2^e)``; the exponent was converted and added rounding to nearest (below the
    truth by up to 63 at ``e ≈ 2^60``), and one beyond float64 raised ``OverflowError``."""
    h = from_exact((3, 0, m, e, 5))[2]
    assert h == math.inf or Fraction(h) >= Fraction(math.log2(m)) + e
    assert h < math.inf or e > 2**1023


@_SETTINGS
@given(kaleidoscopes(), st.data())
def test_structure_bounds_of_a_kaleidoscope_cover_the_difference(forced: str, k: Kaleidoscope, data: st.DataObject) -> None:
    """A kaleidoscope (read as ``n×1``) against a circuit or a model of that shape: degree and
    height of the difference (its intermediate values are not weighed here)."""
    rhs = data.draw(st.one_of(circuits(shape=(k.n, 1)), models(shape=(k.n, 1))))
    a, b = as_side(k), as_side(rhs)
    bounds = bd.structure_bounds(a, b)
    ring = PolyRing(k.n, tuple(sorted(a.params() | b.params())))
    u = ring.grid_input(k.n, 1)
    for x, y in zip(*([p for row in side.evaluate(u, ring) for p in row] for side in (a, b))):
        assert ring.degree(x) <= bounds.degree and ring.degree(y) <= bounds.degree
        coeffs = _coeffs(x - y)
        if coeffs:
            assert _min_height(coeffs, bounds.denominator) < 1 << bounds.height_bits


def test_a_models_peaks_count_its_input_state(forced: str) -> None:
    """A model whose one layer is zero: its output is zero, but its first state holds the inputs
    (degree 1, ``ℓ1 = 1``, one bit). Its peaks were 0 bits (and, in the numpy pass, degree 0)."""
    m = Model(1, 1, 2, 1, (Layer.make(2, 1),))
    b = bd.structure_bounds(as_side(m), as_side(m))
    assert (b.degree, b.height_bits) == (0, 0)
    assert b.peak_degree >= 1 and b.peak_height_bits >= 1
