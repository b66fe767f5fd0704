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
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.kaleidoscope.apply import apply
from symverify.kernel.primes import is_prime, passes_screen, screen_decides
from symverify.kernel.provers import bounds as bd
from symverify.kernel.provers import bounds_layers as bl
from symverify.kernel.provers import randomized as rz
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
    alive = 0
    for obj in (lhs, rhs):  # the peaks bound every intermediate value (what the size guards weigh)
        values = _intermediates(obj, ring)
        for p in values:
            coeffs = _coeffs(p)
            if coeffs:
                assert ring.degree(p) <= b.peak_degree
                assert _min_height(coeffs, b.denominator) < 1 << b.peak_height_bits
        if isinstance(obj, Circuit):  # every node stays alive
            alive += sum(ring.nterms(p) for p in values)
        else:  # two consecutive states at once
            cells = obj.inner_n * obj.inner_d
            sizes = [sum(ring.nterms(p) for p in values[k : k + cells]) for k in range(0, len(values), cells)]
            alive += max(x + y for x, y in pairwise(sizes)) if len(sizes) > 1 else sizes[0]
    assert alive <= b.peak_monomials


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


FLOATS = st.sampled_from([0.5, -3.0, 1e300, -2.0**-1074, 2.0**-1022 * 3, 0.1, 2.0**60 + 2.0**8])


@st.composite
def grids(draw: st.DrawFn, rows: int, cols: int) -> Grid:
    """A sparse grid: a fill (mostly 0) and a few overlapping rectangles (later ones win), or a
    cell array of floats (read as the dyadic rationals they are, subnormals included) with exact
    cells over them."""
    if draw(st.integers(0, 3)) == 0:
        cells = draw(st.lists(st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1)), max_size=3, unique=True))
        vals = [draw(FLOATS) for _ in cells]
        extra = [(i, j, draw(weights)) for i, j in draw(st.lists(st.sampled_from(cells), unique=True))] if cells else []
        arr = CellArray.from_parts([i for i, _ in cells], [j for _, j in cells], vals, extra)
        return Grid(rows, cols, 0, arr)
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
                                  (1, 2**1100), (5, 7), (1, 0), (5, 2**52)])
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
    height of the difference, and the peaks over the kaleidoscope's stage values."""
    rhs = data.draw(st.one_of(circuits(shape=(k.n, 1)), models(shape=(k.n, 1))))
    a, b = as_side(k), as_side(rhs)
    bounds = bd.structure_bounds(a, b)
    ring = _Recording(k.n, tuple(sorted(a.params() | b.params())))
    u = ring.grid_input(k.n, 1)
    for x, y in zip(*([p for row in side.evaluate(u, ring) for p in row] for side in (a, b))):
        assert ring.degree(x) <= bounds.degree and ring.degree(y) <= bounds.degree
        coeffs = _coeffs(x - y)
        if coeffs:
            assert _min_height(coeffs, bounds.denominator) < 1 << bounds.height_bits
    for p in ring.seen + ring.inputs():
        coeffs = _coeffs(p)
        if coeffs:
            assert ring.degree(p) <= bounds.peak_degree
            assert _min_height(coeffs, bounds.denominator) < 1 << bounds.peak_height_bits
    assert _alive(k, ring) <= bounds.peak_monomials


def _alive(k: Kaleidoscope, ring: PolyRing) -> int:
    """The most monomials in two consecutive stage vectors of ``k`` on the inputs."""
    x = ring.inputs() + [ring.zero] * (k.size - k.n)
    factors = [f for g in k.groups for f in g.factors]
    stages = [x] + [apply(FactorList(k.size, tuple(factors[:j])), x, ring, full=True) for j in range(1, len(factors) + 1)]
    sizes = [sum(ring.nterms(p) for p in v) for v in stages]
    return max(a + b for a, b in pairwise(sizes)) if len(sizes) > 1 else sizes[0]


class _Recording(PolyRing):
    """The polynomial ring, keeping every value the butterfly kernel reduces (its stage values)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.seen: list[Any] = []

    def reduce(self, x: Any) -> Any:
        self.seen.append(x)
        return x


def test_a_kaleidoscopes_peaks_weigh_its_stage_values() -> None:
    """``[[0, 0], [0, 0]]·[[H, 0], [0, H]]``, ``H = 10^400``: output zero, but a stage value
    ``H·x0`` of 1329 bits; the peaks were those of the outputs (0 bits, degree 0)."""
    H = 10**400
    first = ButterflyFactor(2, 1, (H,), (0,), (0,), (H,))
    k = Kaleidoscope(2, 2, (BBStar(2, (first, ButterflyFactor(2, 1, (0,), (0,), (0,), (0,)))),))
    b = bd.structure_bounds(as_side(k), as_side(k))
    assert (b.degree, b.height_bits) == (0, 0)
    assert b.peak_degree >= 1 and b.peak_height_bits >= H.bit_length()


def test_a_kaleidoscopes_peaks_count_its_inputs() -> None:
    """A zero factor: no stage value is computed (each entry is the ring's zero) and the output is
    zero, but the inputs (degree 1, one bit) are values of the evaluation, as a circuit's input nodes."""
    zero = ButterflyFactor(2, 1, (0,), (0,), (0,), (0,))
    k = Kaleidoscope(2, 2, (BBStar(2, (zero, ButterflyFactor.identity(2, 1))),))
    b = bd.structure_bounds(as_side(k), as_side(k))
    assert (b.degree, b.height_bits) == (0, 0)
    assert b.peak_degree >= 1 and b.peak_height_bits >= 1


def test_a_kaleidoscopes_peak_monomials_weigh_its_stage_vectors() -> None:
    """All-ones blocks at strides 2 and 1, then a zero factor: the outputs are zero, but the
    second stage holds ``x0 + x1 + x2 + x3`` in all four entries (24 monomials alive with the first
    stage, 48 for the pair); the estimate was ``2·N`` per side (16)."""
    ones = [ButterflyFactor(4, s, (1, 1), (1, 1), (1, 1), (1, 1)) for s in (2, 1)]
    zero, ident = ButterflyFactor(4, 1, (0, 0), (0, 0), (0, 0), (0, 0)), ButterflyFactor.identity(4, 2)
    k = Kaleidoscope(4, 4, (BBStar(4, (*ones, zero, ident)),))
    b = bd.structure_bounds(as_side(k), as_side(k))
    assert 2 * _alive(k, _Recording(4)) == 48 <= b.peak_monomials


def test_a_models_peaks_count_its_input_state(forced: str) -> None:
    """A model whose one layer is zero: its output is zero, but its first state holds the inputs
    (degree 1, ``ℓ1 = 1``, one bit). Its peaks were 0 bits (and, in the numpy pass, degree 0)."""
    m = Model(1, 1, 2, 1, (Layer.make(2, 1),))
    b = bd.structure_bounds(as_side(m), as_side(m))
    assert (b.degree, b.height_bits) == (0, 0)
    assert b.peak_degree >= 1 and b.peak_height_bits >= 1


# ---- the failure bound, the trial count and the primes -------------------------------------------

M61 = (1 << 61) - 1
TARGETS = st.sampled_from([Fraction(1, 2**100), Fraction(1, 2**20), Fraction(1, 3), Fraction(1, 2**1000)])


@st.composite
def bounds_values(draw: st.DrawFn) -> bd.Bounds:
    """Bounds anywhere from trivial to past the largest prime size, near ``2^L`` for every ``L`` used."""
    near = st.integers(0, 4100).flatmap(lambda b: st.integers(max(0, (1 << b) - 3), (1 << b) + 3))
    degree = draw(st.one_of(st.integers(0, 70), near))
    height = draw(st.one_of(st.integers(0, 200), near.filter(lambda h: h < 1 << 20)))
    q = draw(st.sampled_from([1, 2, 6, M61, M61 * 3, 2**4000 + 1, (2**89 - 1) * (2**127 - 1)]))
    return bd.Bounds(degree, height, height <= 60, 0, 0, 3, q)


def _check_plan(b: bd.Bounds, plan: rz.TrialPlan, target: Fraction | None) -> None:
    """``ε`` as stated: at least the Schwartz–Zippel term ``(D/p)^B`` for every prime ``p`` a trial
    can draw, plus (unless no coefficient can have a prime factor ``≥ p``) the share of bad primes."""
    if plan.fixed is not None:
        assert plan.fixed == M61 and b.height_below_m61 and b.denominator % M61 and b.height_bits <= 61
        low = M61
    else:
        low = 1 << plan.bits
    assert plan.low == low and plan.point == Fraction(b.degree, low)
    sz = min(Fraction(1), plan.point**plan.batch)
    assert plan.per_trial >= sz
    if plan.fixed is None and b.height_bits > plan.bits:  # a coefficient below 2^H has < H/L prime factors ≥ 2^L
        free = rz.primes_in_range_lower(plan.bits) - (b.denominator.bit_length() + plan.bits - 1) // plan.bits
        bad = Fraction(-(-b.height_bits // plan.bits), free) if free > 0 else Fraction(1)
        assert plan.per_trial >= min(Fraction(1), bad + sz)
    if target is not None and plan.per_trial < 1:
        assert plan.bad or plan.point**plan.batch <= target


@settings(max_examples=300, deadline=None, derandomize=True)
@given(bounds_values(), TARGETS)
def test_every_plan_states_at_least_the_failure_bound(b: bd.Bounds, target: Fraction) -> None:
    """For each engine's plan: ``ε`` covers both failure modes, and ``k`` trials bring ``ε^k``
    within the target and no fewer do; a degree bound at or past every prime size is no plan."""
    plan = rz.plan_primes(b, target)
    if plan is None:
        assert all(rz.trial_plan(b, bits).per_trial > rz.USEFUL_PER_TRIAL for bits in (61, *range(64, 4097, 32)))
    else:
        _check_plan(b, plan, None)
        assert plan.per_trial <= rz.USEFUL_PER_TRIAL and b.degree < plan.low
        k = rz.trials_needed(plan.per_trial, target)
        assert k is not None and plan.per_trial**k <= target
        assert k == 1 or plan.per_trial ** (k - 1) > target
    for symbolic in (False, True):
        torch_plan = rz.engine_plan("torch", b, symbolic, target)
        assert torch_plan is not None and torch_plan.bits == 30
        _check_plan(b, torch_plan, None if symbolic else target)
        assert not symbolic or torch_plan.batch == 1


def test_the_prime_counts_are_lower_bounds() -> None:
    """``N_L`` (``primes_in_range_lower``) against a sieve for ``L = 5 … 22``, against the known
    count ``π(2^31) − π(2^30) = 105 097 565 − 54 400 028`` at ``L = 30``, and against the
    Rosser–Schoenfeld bound ``(2^L/ln 2)·(2/(L+1) − 1.25506/L)`` at every size the python engine draws."""
    import numpy as np

    top = 1 << 23
    sieve = np.ones(top, dtype=bool)
    sieve[:2] = False
    for p in range(2, int(top**0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = False
    counts = np.cumsum(sieve)
    for L in range(5, 23):
        actual = int(counts[(1 << (L + 1)) - 1] - counts[(1 << L) - 1])
        assert rz.primes_in_range_lower(L) <= actual, L
    assert rz.primes_in_range_lower(30) <= 105_097_565 - 54_400_028
    ln2_up = Fraction(6932, 10000)
    for L in (61, *range(64, 4097, 32)):
        lower = Fraction(2**L) / ln2_up * (Fraction(2, L + 1) - Fraction(125506, 100000 * L))
        assert rz.primes_in_range_lower(L) <= lower, L


@pytest.mark.parametrize("n, prime", [
    (3_317_044_064_679_887_385_961_981, False),  # a strong pseudoprime to the first 13 prime bases: past the screen
    (318_665_857_834_031_151_167_461, False),  # to the first 12: the 13th base catches it
    (3_825_123_056_546_413_051, False),  # to the first 9
    (2**61 - 1, True), (2**89 - 1, True), (2**127 - 1, True), (2**107 - 1, True), (2**61 + 1, False),
])
def test_primality_is_decided_exactly(n: int, prime: bool) -> None:
    assert is_prime(n) is prime
    if not screen_decides(n):
        assert passes_screen(n) or not prime


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.sampled_from([30, 61, 64, 96, 128]), st.integers(0, 2**32))
def test_random_primes_are_primes_of_the_stated_size(bits: int, seed: int) -> None:
    from symverify.kernel.provers.challenge import Transcript

    low = 1 << bits
    avoid = math.prod(range(low + 1, low + 400, 2))  # every odd number just above 2^bits divides it
    p = rz.random_prime(Transcript("attack", seed).stream("prime"), avoid, low)
    assert low <= p < 2 * low and is_prime(p) and avoid % p


def _power_chain(squarings: int) -> Circuit:
    gates = [Gate.mul(0, 0)] + [Gate.mul(k, k) for k in range(1, squarings)]
    return Circuit(1, 1, tuple(gates), (squarings,))


@pytest.mark.parametrize("squarings", [61, 4096, 4100])
def test_a_degree_at_or_past_the_primes_is_not_proved(squarings: int) -> None:
    """``x^(2^s)`` against ``x``: different polynomials, with a degree bound ``D = 2^s`` at least
    every prime of the 61-bit plan (and, for ``s ≥ 4096``, of every plan): never ``proved``, and the
    torch engine (31-bit primes) refuses the pair."""
    lhs, rhs = _power_chain(squarings), Circuit(1, 1, (), (0,))
    b = bd.structure_bounds(as_side(lhs), as_side(rhs))
    assert b.degree == 1 << squarings
    report = symverify.verify(lhs, rhs, method="randomized")
    assert report.verdict != "proved"
    with pytest.raises(symverify.errors.UsageError):
        symverify.verify(lhs, rhs, method="randomized", backend="torch")


@pytest.mark.parametrize("squarings", [50, 51, 52, 53, 54, 60])
def test_degree_chains_near_the_float_limit_keep_their_degree(forced: str, squarings: int) -> None:
    """``(x/3 + 2^64)^(2^s)`` with eight constant gates beside every squaring: the numpy pass
    answers (exactly) below ``2^51`` and gives up from there; every path states the degree ``2^s``
    and a height of at least ``2^s·64`` bits."""
    gates = [Gate.lin(0, Fraction(1, 3), 0, 0), Gate.const(2**64), Gate.add(1, 2)]
    last = 3
    for _ in range(squarings):
        gates.append(Gate.mul(last, last))
        last = len(gates)
        gates += [Gate.const(7)] * 8
    c = Circuit(1, 1, tuple(gates), (last,))
    prog = program(c)
    rows = circuit_rows(prog, scalar_rows(prog.scalars), 1, 3)
    assert (rows is None) == (squarings >= 51)
    if rows is not None:
        assert to_exact(rows[0][0], 3)[0] == 1 << squarings
    zero = Circuit(1, 1, (), ())
    b = bd.structure_bounds(as_side(c), as_side(zero))
    assert b.degree == 1 << squarings and b.height_bits >= (1 << squarings) * 64 and b.denominator == 3


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_randomized_proves_only_equal_pairs(forced: str, data: st.DataObject) -> None:
    """End to end: ``proved`` by the randomized method only where the expanded sides are equal
    (the second side is a random one, or the first compiled, or the first with one weight moved)."""
    lhs = data.draw(circuits(max_gates=6))
    how = data.draw(st.sampled_from(["other", "compiled", "moved"]))
    if how == "other":
        rhs: Any = data.draw(st.one_of(circuits(shape=(lhs.n, lhs.d)), models(shape=(lhs.n, lhs.d))))
    elif how == "compiled":
        rhs = symverify.compile(lhs, method="dense").model
    else:
        gates = list(lhs.gates)
        if gates:
            k = data.draw(st.integers(0, len(gates) - 1))
            gates[k] = Gate.const(data.draw(weights))
        rhs = Circuit(lhs.n, lhs.d, tuple(gates), lhs.outputs)
    report = symverify.verify(lhs, rhs, method="randomized")
    if report.verdict == "proved":
        ring = shared_ring(lhs, rhs)
        assert _truth(lhs, ring) == _truth(rhs, ring)
