"""The numpy bounds passes (symverify.kernel.provers.bounds_vector, bounds_layers) against the exact ones.

Three properties on random circuits and models, with integer, rational and symbolic weights:
the fast pass bounds the true polynomials (degree, monomials, ``ℓ1`` of ``Q^s·f``, from the exact
expansion); it gives the exact pass's degrees, scalar counts and monomial counts, and heights at
least the exact pass's and at most one bit above; and it gives up (the exact pass answers)
where degrees leave the exact range of float64.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.deadline import DeadlineExceededError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers import bounds as bd
from symverify.kernel.provers.bound_rules import scalar_rows
from symverify.kernel.provers.bound_rules import to_exact as to_bounds
from symverify.kernel.provers.bounds_layers import model_rows, read_rects
from symverify.kernel.provers.bounds_vector import circuit_rows, total_count
from symverify.kernel.provers.sides import CircuitSide, ModelSide, as_side
from symverify.kernel.semantics.evaluate import crop, embed
from symverify.kernel.semantics.poly import polynomials, shared_ring
from symverify.kernel.semantics.straightline import program
from symverify.strategies import circuits, models

Val = tuple[int, int, int, int, int]


def _ring(obj: Circuit | Model) -> bd.BoundRing:
    side = as_side(obj)
    return bd.BoundRing(side.num_inputs + len(side.params()), bd.common_denominator(side))


def _fast_circuit(c: Circuit, ring: bd.BoundRing) -> tuple[list[Val], int]:
    prog = program(c)
    rows = circuit_rows(prog, scalar_rows(prog.scalars), ring.variables, ring.q, width=0)
    assert rows is not None
    return [to_bounds(r, ring.q) for r in rows[0]], total_count(rows[1])


def _exact_circuit(c: Circuit, ring: bd.BoundRing) -> tuple[list[Val], int]:
    return bd._circuit_exact(c, ring, None)


def _fast_model(m: Model, ring: bd.BoundRing) -> tuple[list[Val], float]:
    rows = model_rows(m.layers, read_rects(m.layers), m.n, m.d, m.inner_n, m.inner_d, scalar_rows, ring.variables, ring.q)
    assert rows is not None
    return [to_bounds(r, ring.q) for r in rows[0]], rows[1]


def _exact_model(m: Model, ring: bd.BoundRing) -> tuple[list[Val], int]:
    u = [[ring.var] * m.d for _ in range(m.n)]
    state, peak = bd.layers_peak(m.layers, embed(u, m.inner_n, m.inner_d, ring.zero), ring)
    return [(v.deg, v.s, v.l1.m, v.l1.e, v.cnt) for row in crop(state, m.n, m.d) for v in row], peak


def _at_least(m: int, e: int, xm: int, xe: int) -> bool:
    """``m·2^e ≥ xm·2^xe`` for mantissas below ``2^62`` (exponents of any size)."""
    if e >= xe:
        return m << min(e - xe, 64) >= xm
    return xe - e < 64 and m >= xm << (xe - e)


def _bits(m: int, e: int) -> int:
    return bd.UB(m, e).bits()


def _assert_heights(fast: list[Val], exact: list[Val]) -> None:
    """Heights at least the exact pass's, and at most one bit above."""
    assert len(fast) == len(exact), (len(fast), len(exact))  # zip must not drop outputs
    for (_, _, m, e, _), (_, _, xm, xe, _) in zip(fast, exact):
        assert _at_least(m, e, xm, xe)
        assert _bits(m, e) <= _bits(xm, xe) + 1


def _assert_near(fast: list[Val], exact: list[Val]) -> None:
    """Same degrees, scalar counts and monomial counts; heights as :func:`_assert_heights`."""
    assert [(d, s, n) for d, s, _, _, n in fast] == [(d, s, n) for d, s, _, _, n in exact]
    _assert_heights(fast, exact)


def _assert_covers(obj: Circuit | Model, fast: list[Val], q: int) -> None:
    """Every output's true degree, monomial count and ``ℓ1(Q^s·f)`` are within its bounds."""
    ring = shared_ring(obj)
    flat = [p for row in polynomials(obj, ring) for p in row]
    # one bound per output; the read-out grid pads the outputs with zero cells, which zip must not hide
    assert len(flat) >= len(fast) and all(not list(p.coeffs()) for p in flat[len(fast):]), (len(flat), len(fast))
    for p, (deg, s, m, e, cnt) in zip(flat, fast):
        coeffs = [Fraction(int(c.p), int(c.q)) for c in p.coeffs()]
        if not coeffs:
            continue
        assert ring.degree(p) <= deg and len(coeffs) <= cnt
        scaled = [c * q**s for c in coeffs]
        assert all(c.denominator == 1 for c in scaled)
        assert sum(abs(c) for c in scaled) <= m << e


@st.composite
def rational_models(draw: st.DrawFn) -> Model:
    """:func:`~symverify.strategies.models` with some grids scaled by ``1/2`` or ``−2/3``, or a cell set to ``a``."""
    m = draw(models(max_layers=3))
    layers = []
    for layer in m.layers:
        grids = {}
        for name, g in layer.grids():
            how = draw(st.sampled_from(["keep", "keep", "half", "third", "sym"]))
            if how in ("half", "third"):
                f = Fraction(1, 2) if how == "half" else Fraction(-2, 3)
                g = Grid(g.rows, g.cols, g.fill, tuple((*r[:4], r[4] * f) for r in g.rects))
            elif how == "sym":
                g = g.paint(0, 1, 0, 1, sym("a") * 2 - 1)
            grids[name] = g
        layers.append(Layer(grids["W"], grids["b1"], grids["h"], grids["b2"], layer.mode))
    return Model(m.n, m.d, m.inner_n, m.inner_d, tuple(layers))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(circuits(max_gates=30, allow_sym=True))
def test_circuit_pass_bounds_the_polynomials_and_matches_the_exact_pass(c: Circuit) -> None:
    ring = _ring(c)
    fast, peak = _fast_circuit(c, ring)
    exact, exact_peak = _exact_circuit(c, ring)
    _assert_near(fast, exact)
    assert exact_peak <= peak <= exact_peak * (1 + 1e-9) + 1
    _assert_covers(c, fast, ring.q)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.one_of(models(max_layers=3), rational_models()))
def test_model_pass_bounds_the_polynomials_and_matches_the_exact_pass(m: Model) -> None:
    ring = _ring(m)
    fast, peak = _fast_model(m, ring)
    exact, exact_peak = _exact_model(m, ring)
    assert [(d, s) for d, s, _, _, _ in fast] == [(d, s) for d, s, _, _, _ in exact]
    _assert_heights(fast, exact)
    assert all(n >= xn for (*_, n), (*_, xn) in zip(fast, exact))  # one cap per branch, the exact pass caps every partial sum
    assert peak >= exact_peak
    _assert_covers(m, fast, ring.q)


def test_rational_weights_take_one_factor_q_each() -> None:
    """``q = 6``: a weight ``1/2`` costs one factor ``Q``, an integer weight none."""
    W = Grid.from_rows([[Fraction(1, 2), 3], [0, Fraction(-2, 3)]])
    layer = Layer(W, Grid.full(2, 2, 1), Grid.from_rows([[1, 1], [2, 0]]), Grid.zeros(2, 2), Mode.CYCLIC)
    m = Model(2, 2, 2, 2, (layer, layer))
    ring = _ring(m)
    assert ring.q == 6
    fast, _ = _fast_model(m, ring)
    exact, _ = _exact_model(m, ring)
    assert [s for _, s, _, _, _ in fast] == [s for _, s, _, _, _ in exact] and max(s for _, s, _, _, _ in fast) > 0
    _assert_covers(m, fast, ring.q)


def _squaring_circuit(width: int, squarings: int) -> Circuit:
    """``width`` parallel sums, then ``x ↦ x²`` ``squarings`` times on the last: degree ``2^squarings``."""
    gates = [Gate.lin(0, Fraction(1, 2), 1, 3) for _ in range(width)]
    for _ in range(squarings):
        node = 2 + len(gates) - 1
        gates.append(Gate.mul(node, node))
    return Circuit(1, 2, tuple(gates), (2 + len(gates) - 1, 2))


def test_circuit_pass_gives_up_past_2_51_and_the_exact_pass_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Degree ``2^60``: the numpy pass gives up, :func:`circuit_bounds` calls the exact pass once
    and returns what it computed; the degree is the true one, ``2^60``."""
    c = _squaring_circuit(bd.VECTOR_GATES, 60)
    ring = _ring(c)
    prog = program(c)
    assert circuit_rows(prog, scalar_rows(prog.scalars), ring.variables, ring.q) is None
    want = _exact_circuit(c, ring)  # computed apart from the call under test
    calls: list[tuple[list[Val], int]] = []
    exact = bd._circuit_exact

    def spy(*args: Any) -> tuple[list[Val], int]:
        calls.append(exact(*args))
        return calls[-1]

    monkeypatch.setattr(bd, "_circuit_exact", spy)
    bd._CIRCUIT_BOUNDS.clear()
    outs, peak = bd.circuit_bounds(c, ring)
    assert len(calls) == 1  # the exact pass answered, once
    assert ([(v.deg, v.s, v.l1.m, v.l1.e, v.cnt) for v in outs], peak) == want
    assert outs[0].deg == 1 << 60 and outs[1].deg == 1  # (x0/2 + 3·x1)^(2^60), and the first sum itself


def test_circuit_pass_below_2_51_is_used() -> None:
    c = _squaring_circuit(bd.VECTOR_GATES, 40)
    ring = _ring(c)
    prog = program(c)
    assert circuit_rows(prog, scalar_rows(prog.scalars), ring.variables, ring.q) is not None
    _assert_near(_fast_circuit(c, ring)[0], _exact_circuit(c, ring)[0])


def test_model_pass_gives_up_past_2_51_and_the_exact_pass_answers() -> None:
    square = Layer(Grid.identity(1), Grid.zeros(1, 1), Grid.from_rows([[1]]), Grid.zeros(1, 1))
    m = Model(1, 1, 1, 1, (square,) * 53)
    ring = _ring(m)
    assert model_rows(m.layers, read_rects(m.layers), 1, 1, 1, 1, scalar_rows, ring.variables, ring.q) is None
    bounds = bd.structure_bounds(ModelSide(m, 1, 1), ModelSide(m, 1, 1))
    assert bounds.degree == 1 << 53


def test_both_passes_poll_the_deadline() -> None:
    def stop() -> None:
        raise DeadlineExceededError("stop")

    c = _squaring_circuit(bd.VECTOR_GATES, 3)
    prog = program(c)
    with pytest.raises(DeadlineExceededError):
        circuit_rows(prog, scalar_rows(prog.scalars), 2, 2, stop)
    m = Model(1, 1, 1, 1, (Layer(Grid.identity(1), Grid.zeros(1, 1), Grid.from_rows([[1]]), Grid.zeros(1, 1)),))
    with pytest.raises(DeadlineExceededError):
        model_rows(m.layers, read_rects(m.layers), 1, 1, 1, 1, scalar_rows, 1, 1, stop)


def test_structure_bounds_of_a_large_pair_match_the_exact_passes() -> None:
    """A compiled model and its circuit: the bounds every prover reads, fast and exact."""
    import symverify as sv
    from symverify.library import random_circuit

    c = random_circuit(4, 2, 2400, 8, seed=5)
    m = sv.compile(c).model
    a, b = CircuitSide(c, c.n, c.d), ModelSide(m, m.n, m.d)
    fast = bd.structure_bounds(a, b)
    ring = bd.BoundRing(fast.variables, fast.denominator)
    (outs, _), (mouts, _) = _exact_circuit(c, ring), _exact_model(m, ring)
    assert fast.degree == max(v[0] for v in outs + mouts)
    assert fast.monomials >= sum(v[4] for v in outs + mouts)


def _exact_bounds(monkeypatch: pytest.MonkeyPatch, a: CircuitSide | ModelSide, b: CircuitSide | ModelSide) -> bd.Bounds:
    with monkeypatch.context() as mp:
        mp.setattr(bd, "VECTOR_GATES", 1 << 62)
        mp.setattr(bd, "_model_vector", lambda *args: None)
        return bd.structure_bounds(a, b)


@pytest.mark.parametrize("args", [(4, 2, 2400, 8), (8, 2, 3000, 30), (16, 4, 384, 16)])
def test_structure_bounds_decide_as_the_exact_passes(monkeypatch: pytest.MonkeyPatch, args: tuple[int, int, int, int]) -> None:
    """Compiled models against their circuits: the same degree and decision below ``2^61``, a
    height at most one bit above, monomial counts at least the exact passes'."""
    import symverify as sv
    from symverify.library import random_circuit

    c = random_circuit(*args, seed=2)
    m = sv.compile(c).model
    a, b = CircuitSide(c, c.n, c.d), ModelSide(m, m.n, m.d)
    for cache in (bd._CIRCUIT_BOUNDS, bd._MODEL_BOUNDS):
        cache.clear()
    fast, exact = bd.structure_bounds(a, b), _exact_bounds(monkeypatch, a, b)
    assert (fast.degree, fast.height_below_m61, fast.variables, fast.denominator) == (
        exact.degree, exact.height_below_m61, exact.variables, exact.denominator)
    assert exact.height_bits <= fast.height_bits <= exact.height_bits + 1
    assert fast.monomials >= exact.monomials and fast.peak_monomials >= exact.peak_monomials


def test_model_pass_gives_up_beyond_its_cell_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import symverify.kernel.provers.bounds_layers as bl

    m = Model(2, 1, 4, 2, (Layer(Grid.identity(2), Grid.full(4, 2, 1), Grid.from_rows([[1, 0], [0, 1], [0, 0], [0, 0]]),
                                 Grid.zeros(4, 2), Mode.CAUSAL),) * 3)
    ring = _ring(m)
    assert model_rows(m.layers, read_rects(m.layers), 2, 1, 4, 2, scalar_rows, ring.variables, ring.q) is not None
    monkeypatch.setattr(bl, "MAX_CELLS", 8)
    assert model_rows(m.layers, read_rects(m.layers), 2, 1, 4, 2, scalar_rows, ring.variables, ring.q) is None
    bd._MODEL_BOUNDS.clear()
    runs: list[int] = []
    layers_peak = bd.layers_peak

    def spy(*args: Any) -> Any:
        runs.append(1)
        return layers_peak(*args)

    monkeypatch.setattr(bd, "layers_peak", spy)
    bounds = bd.structure_bounds(ModelSide(m, 2, 1), ModelSide(m, 2, 1))
    assert runs == [1]  # the interpreter pass answered (once: both sides are the same object)
    poly = [p for row in polynomials(m, shared_ring(m)) for p in row]
    assert bounds.degree == max(shared_ring(m).degree(p) for p in poly) == 8  # three squaring layers: x^8


@pytest.mark.parametrize("L", [0.0, 60.5, 61.0, 1e3 + 0.25, 2.0**53 + 2, 2.0**56, 2.0**60, 2.0**62])
def test_ub_of_log2_covers_two_to_the_L_with_a_small_mantissa_at_any_size(L: float) -> None:
    """``m·2^e ≥ 2^L`` with ``m < 2^62`` even where ``L`` is beyond float precision (``e`` must not be
    rounded before it is subtracted from ``L``)."""
    from symverify.kernel.provers.bound_rules import _ub_of_log2

    m, e = _ub_of_log2(L)
    assert m >= 1 and m < 2**62, m  # a positive mantissa below 2^62
    whole = math.floor(L)
    shift = e - (whole - 60)  # m·2^e ≥ 2^L  ⇔  log2(m) + shift ≥ 60 + (L − whole), all small numbers
    assert math.log2(m) + shift >= 60 + (L - whole)


@pytest.mark.parametrize("tap", [1, Fraction(-1, 3)])
def test_model_pass_in_windows_equals_one_pass(monkeypatch: pytest.MonkeyPatch, tap: Any) -> None:
    """Windows of a few layers (each window's last state the next one's first) give the same
    output bounds as one window, and a peak at least as large (rounded up once per window);
    rational weights (negative heights) too."""
    import symverify.kernel.provers.bounds_layers as bl

    m = Model(2, 1, 4, 2, (Layer(Grid.identity(2), Grid.full(4, 2, tap), Grid.from_rows([[1, 0], [0, 1], [0, 0], [0, 0]]),
                                 Grid.zeros(4, 2), Mode.CAUSAL),) * 5)
    ring = _ring(m)
    rects = read_rects(m.layers)
    whole = model_rows(m.layers, rects, 2, 1, 4, 2, scalar_rows, ring.variables, ring.q)
    assert whole is not None and len(bl._windows(rects, 5, 8) or ()) == 1
    monkeypatch.setattr(bl, "WINDOW_CELLS", 24)  # 8 state cells and 12 rectangle cells per layer
    assert bl._windows(rects, 5, 8) == [(0, 2), (2, 4), (4, 5)]
    parts = model_rows(m.layers, rects, 2, 1, 4, 2, scalar_rows, ring.variables, ring.q)
    assert parts is not None
    if tap == 1:
        assert (parts[0] == whole[0]).all()
    else:  # each window sizes its rounding on its own: heights may round up a little differently
        assert (parts[0][:, [0, 1]] == whole[0][:, [0, 1]]).all()
        assert abs(parts[0][:, 2:] - whole[0][:, 2:]).max() < 1e-6
    assert whole[1] <= parts[1] <= whole[1] * (1 + 1e-6)
    exact = _exact_model(m, ring)
    assert exact[1] <= parts[1]
    for got, want in zip((to_bounds(r, ring.q) for r in parts[0]), exact[0]):
        assert got[0] == want[0] and got[4] >= want[4] and _at_least(got[2], got[3], want[2], want[3])
