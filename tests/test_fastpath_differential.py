"""Differential tests of the trusted kernel's fast paths against independent references.

Each fast path (sparse stage evaluator, ``Grid.nonzero``, the compositional checker's expected
values, ``BatchModRing.grid``, gate normal coefficients, butterfly plans of all-int factors,
straight-line programs) is compared with a naive re-implementation written here from the
definitions (docs/theory.md §1.1 for the layer, §2 for circuits, docs/kaleidoscope.md §1 for
butterfly factors), on the edges where a fast path could differ: zero, negative and huge
(``2**4000``) coefficients, ``Fraction`` values equal to 0 or 1, symbols, grids with a nonzero
fill and overlapping rectangles, cyclic and causal modes, taps at the last lag, ``1×1`` and
``1×N`` shapes, shared nodes and repeated outputs. The bulk bias evaluation and the ∀-prover's
48-bit encoding have their own file (``tests/test_fastpath_differential_parametric.py``).
"""

from __future__ import annotations

import gc
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import ButterflyFactor, pair_index
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, as_scalar, is_zero, sym
from symverify.kernel.kaleidoscope import apply as kapply
from symverify.kernel.provers import compositional
from symverify.kernel.provers.bounds import BoundRing
from symverify.kernel.provers.modular import BatchModRing
from symverify.kernel.semantics.evaluate import eval_circuit_nodes
from symverify.kernel.semantics.rings import FractionRing, ModRing, ScalarRing, eval_sym
from symverify.kernel.semantics.sparse import eval_layers_sparse
from symverify.kernel.semantics.straightline import eval_mod, program

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
P = 2**61 - 1
PARAMS = {"a": 3, "b": Fraction(-2, 5)}
PARAMS_MOD = {"a": 3, "b": 7}
A, B = sym("a"), sym("b")
BIG = 2**4000

# Scalars a grid or a gate may hold, chosen for the edges: zeros of two types, ones of two types
# (``Fraction(1)`` is a Fraction equal to 1, never the int 1 object), negatives, huge integers,
# symbols and a polynomial in them.
EDGE_SCALARS = [0, Fraction(0), 1, Fraction(1), -1, 2, Fraction(1, 2), Fraction(-3, 7), BIG, -BIG - 1, A, 2 * A * B - 1]


def _val(x: Any, params: dict[str, Any] = PARAMS) -> Any:
    """An IR scalar as an exact Fraction (a Sym evaluated at ``params``)."""
    return Fraction(eval_sym(x, params)) if isinstance(x, Sym) else Fraction(x)


# ---- a naive grid painter and layer (docs/theory.md §1.1), independent of Grid's cell maps ----

def _paint(rows: int, cols: int, fill: Any, rects: list[tuple[int, int, int, int, Any]]) -> list[list[Any]]:
    out = [[fill] * cols for _ in range(rows)]
    for r0, r1, c0, c1, v in rects:
        for i in range(r0, r1):
            for j in range(c0, c1):
                out[i][j] = v
    return out


def _naive_layer(dense: dict[str, list[list[Any]]], cyclic: bool, u: list[list[Fraction]],
                 params: dict[str, Any]) -> list[list[Fraction]]:
    W, b1, h, b2 = (dense[k] for k in ("W", "b1", "h", "b2"))
    nn, dd = len(u), len(u[0])
    out = []
    for i in range(nn):
        row = []
        for q in range(dd):
            proj = sum((u[i][p] * _val(W[p][q], params) for p in range(dd)), Fraction(0)) + _val(b1[i][q], params)
            conv = _val(b2[i][q], params)
            for k in range(nn):
                src = i - k
                if src < 0:
                    if not cyclic:
                        continue
                    src += nn
                conv += _val(h[k][q], params) * u[src][q]
            row.append(proj * conv)
        out.append(row)
    return out


@st.composite
def _grid(draw: st.DrawFn, rows: int, cols: int) -> tuple[Grid, list[list[Any]]]:
    """A grid with a fill (often 0, sometimes nonzero or ``Fraction(0)``) and overlapping rectangles
    painted in order (zeros painted over nonzeros included), with its dense matrix painted naively."""
    fill = draw(st.sampled_from([0, 0, 0, Fraction(0), 1, Fraction(1, 2), A]))
    rects = []
    for _ in range(draw(st.integers(0, 4))):
        r0 = draw(st.integers(0, rows - 1))
        r1 = draw(st.integers(r0 + 1, rows))
        c0 = draw(st.integers(0, cols - 1))
        c1 = draw(st.integers(c0 + 1, cols))
        rects.append((r0, r1, c0, c1, draw(st.sampled_from(EDGE_SCALARS))))
    return Grid(rows, cols, fill, tuple(rects)), _paint(rows, cols, fill, rects)


@st.composite
def _model_case(draw: st.DrawFn) -> tuple[Model, list[dict[str, list[list[Any]]]], list[list[Any]]]:
    nn = draw(st.integers(1, 4))
    dd = draw(st.sampled_from([1, 1, 2, 3]))
    layers, dense = [], []
    for _ in range(draw(st.integers(1, 3))):
        parts = {"W": draw(_grid(dd, dd)), "b1": draw(_grid(nn, dd)), "h": draw(_grid(nn, dd)), "b2": draw(_grid(nn, dd))}
        mode = draw(st.sampled_from([Mode.CAUSAL, Mode.CYCLIC]))
        layers.append(Layer(parts["W"][0], parts["b1"][0], parts["h"][0], parts["b2"][0], mode))
        dense.append({k: v[1] for k, v in parts.items()})
    value = st.sampled_from([0, 0, 1, Fraction(1), -1, Fraction(3, 4), BIG, -2])
    state = [[draw(value) for _ in range(dd)] for _ in range(nn)]
    return Model(nn, dd, nn, dd, tuple(layers)), dense, state


def _naive_model(m: Model, dense: list[dict[str, list[list[Any]]]], state: list[list[Any]],
                 params: dict[str, Any] = PARAMS) -> list[list[Fraction]]:
    u = [[Fraction(x) for x in row] for row in state]
    for layer, grids in zip(m.layers, dense):
        u = _naive_layer(grids, layer.mode is Mode.CYCLIC, u, params)
    return u


def _dense(cells: dict[tuple[int, int], Any], nn: int, dd: int) -> list[list[Fraction]]:
    out = [[Fraction(0)] * dd for _ in range(nn)]
    for (i, q), x in cells.items():
        assert 0 <= i < nn and 0 <= q < dd, f"cell {(i, q)} outside the {nn}×{dd} state"
        out[i][q] = Fraction(x)
    return out


@SETTINGS
@given(_model_case())
def test_sparse_evaluator_equals_the_naive_layer_over_rationals(case: Any) -> None:
    """The sparse stage evaluator (scatter through the taps, projection inlined) equals the layer
    formula computed densely here, on grids with fills, overlapping rectangles, both modes."""
    m, dense, state = case
    cells = {(i, q): x for i, row in enumerate(state) for q, x in enumerate(row) if x}
    got = eval_layers_sparse(m.layers, cells, FractionRing(PARAMS))
    assert all(got.values()), "a zero cell was stored"
    assert _dense(got, m.inner_n, m.inner_d) == _naive_model(m, dense, state)


@SETTINGS
@given(_model_case())
def test_sparse_evaluator_equals_the_naive_layer_mod_p(case: Any) -> None:
    m, dense, state = case
    ring = ModRing(P, PARAMS_MOD)
    cells = {(i, q): ring.coerce(x) for i, row in enumerate(state) for q, x in enumerate(row) if ring.coerce(x)}
    got = eval_layers_sparse(m.layers, cells, ring)
    want = _naive_model(m, dense, state, PARAMS_MOD)
    assert all(got.values())
    dense_got = [[got.get((i, q), 0) for q in range(m.inner_d)] for i in range(m.inner_n)]
    assert dense_got == [[ring.coerce(x) for x in row] for row in want]


@pytest.mark.parametrize("mode", [Mode.CAUSAL, Mode.CYCLIC])
@pytest.mark.parametrize(("nn", "dd"), [(1, 1), (1, 3), (3, 1), (4, 2)])
def test_sparse_evaluator_at_the_last_lag_and_small_shapes(mode: Mode, nn: int, dd: int) -> None:
    """A tap at lag ``N'−1`` on every row (wraps to ``src − 1`` when cyclic, dropped past ``N'``
    when causal), a weight ``Fraction(1)`` (equal to 1, not the ring's one object) and a nonzero
    b2 fill, on ``1×1`` and ``1×N`` shapes."""
    rects = [(nn - 1, nn, 0, dd, Fraction(1)), (0, 1, 0, dd, -1)]
    h = Grid(nn, dd, 0, tuple(rects)) if nn > 1 else Grid(nn, dd, 0, ((0, 1, 0, dd, Fraction(1)),))
    W = Grid(dd, dd, 1, ())  # every entry 1: a fill, no rectangle
    b2 = Grid(nn, dd, Fraction(1, 3), ((0, 1, 0, 1, 0),))
    layer = Layer(W, Grid.zeros(nn, dd), h, b2, mode)
    m = Model(nn, dd, nn, dd, (layer, layer))
    state = [[(i * dd + q) % 3 - 1 + (BIG if (i + q) % 2 else 0) for q in range(dd)] for i in range(nn)]
    dense = [{"W": W.to_rows(), "b1": [[0] * dd for _ in range(nn)], "h": h.to_rows(), "b2": b2.to_rows()}] * 2
    cells = {(i, q): x for i, row in enumerate(state) for q, x in enumerate(row) if x}
    got = eval_layers_sparse(m.layers, cells, FractionRing())
    assert _dense(got, nn, dd) == _naive_model(m, dense, state)


# ---- Grid.nonzero / is_zero (221fbc9) ------------------------------------------------------------

@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), st.data())
def test_grid_nonzero_equals_the_naive_painter(rows: int, cols: int, data: st.DataObject) -> None:
    """``nonzero``, ``nonzero_count``, ``is_zero``, ``to_rows`` and ``get`` agree with painting the
    rectangles in order over the fill (``Fraction(0)`` fills and zeros painted over nonzeros included)."""
    g, dense = data.draw(_grid(rows, cols))
    want = {(i, j): v for i, row in enumerate(dense) for j, v in enumerate(row) if not (isinstance(v, (int, Fraction)) and v == 0)}
    got = g.nonzero()
    assert got == want
    assert all(type(v) is type(want[k]) or not isinstance(v, Sym) for k, v in got.items())
    assert g.nonzero_count() == len(want)
    assert g.is_zero() == (not want)
    assert g.to_rows() == dense
    assert all(g.get(i, j) == dense[i][j] for i in range(rows) for j in range(cols))


def test_grid_nonzero_on_empty_and_zero_fraction_grids() -> None:
    assert Grid.zeros(0, 3).nonzero() == {} and Grid.zeros(3, 0).nonzero() == {}
    assert Grid(2, 2, Fraction(0), ((0, 1, 0, 1, Fraction(0)), (1, 2, 1, 2, Fraction(1)))).nonzero() == {(1, 1): 1}
    # a zero painted over a nonzero rectangle removes the cell; the fill's zero type does not matter
    g = Grid(3, 3, Fraction(0), ((0, 3, 0, 3, BIG), (1, 2, 1, 2, 0)))
    assert len(g.nonzero()) == 8 and (1, 1) not in g.nonzero() and g.nonzero_count() == 8
    # a nonzero fill: every cell not painted 0
    g = Grid(2, 3, A, ((0, 1, 0, 3, 0),))
    assert g.nonzero() == {(1, j): A for j in range(3)}


def test_grid_duplicate_cells_and_bools() -> None:
    """A cell painted twice holds the later value (a 0 over a 5 removes it); bools are refused."""
    g = Grid.zeros(2, 2).paint_cells([(0, 0, 5), (0, 0, 0), (1, 1, 0), (1, 1, Fraction(1, 2))])
    assert g.nonzero() == {(1, 1): Fraction(1, 2)} and g.nonzero_count() == 1
    with pytest.raises(IRError, match="bool"):
        Grid(1, 1, 0, ((0, 1, 0, 1, True),))
    with pytest.raises(IRError, match="bool"):
        Grid(1, 1, False, ())


def test_equal_grids_of_different_value_types_evaluate_alike() -> None:
    """``Grid`` equality is numeric (``1 == Fraction(1)``), so equal grids share the cached cell
    maps and one may read the other's value objects: every conversion still gives equal values."""
    g_frac = Grid(2, 2, Fraction(0), ((0, 1, 0, 2, Fraction(1)), (1, 2, 1, 2, Fraction(-3))))
    g_int = Grid(2, 2, 0, ((0, 1, 0, 2, 1), (1, 2, 1, 2, -3)))
    assert g_frac == g_int
    g_frac.nonzero()  # fills the shared cache first
    assert g_int.nonzero() == {(0, 0): 1, (0, 1): 1, (1, 1): -3} and g_int.to_rows() == [[1, 1], [0, -3]]
    for primes in ([101], [101, 103]):
        ring = BatchModRing(primes, [{}] * len(primes))
        for t, p in enumerate(primes):
            sl = ring.grid(g_int) if len(primes) == 1 else ring.grid(g_int)[t]
            assert [[int(x) for x in row] for row in sl.tolist()] == [[1, 1], [0, p - 3]]
    layer = Layer(g_int, Grid.zeros(2, 2), g_int, Grid.zeros(2, 2), Mode.CYCLIC)
    got = eval_layers_sparse([layer], {(0, 0): 2, (1, 1): 5}, FractionRing())
    dense = {"W": [[1, 1], [0, -3]], "b1": [[0, 0], [0, 0]], "h": [[1, 1], [0, -3]], "b2": [[0, 0], [0, 0]]}
    assert _dense(got, 2, 2) == _naive_layer(dense, True, [[Fraction(2), Fraction(0)], [Fraction(0), Fraction(5)]], PARAMS)


@pytest.mark.parametrize(("x", "zero"), [(0, True), (Fraction(0), True), (-0, True), (1, False), (Fraction(1), False),
                                         (BIG, False), (A, False), ((A + 1) - A - 1, True), (A - A, True),
                                         (False, True), (True, False)])
def test_is_zero_on_edge_values(x: Any, zero: bool) -> None:
    assert is_zero(x) is zero


# ---- compositional checker: _expected (4d3343d) -------------------------------------------------

COEFFS = [0, 1, -1, 2, Fraction(1, 2), Fraction(-1, 3), BIG, A, A - 1]


@st.composite
def _circuit(draw: st.DrawFn) -> Circuit:
    """A circuit with shared nodes, LIN gates reading one node twice, coefficients 0/1/-1/huge/symbolic,
    constants 0 and 1, and repeated outputs."""
    n, d = draw(st.sampled_from([(1, 1), (1, 3), (2, 2)]))
    nodes = n * d
    gates = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["lin", "lin", "mul", "const"]))
        a, b = draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1))
        if op == "lin":
            gates.append(Gate(Op.LIN, (a, b), (draw(st.sampled_from(COEFFS)), draw(st.sampled_from(COEFFS)))))
        elif op == "mul":
            gates.append(Gate(Op.MUL, (a, b), ()))
        else:
            gates.append(Gate(Op.CONST, (), (draw(st.sampled_from([0, 1, Fraction(1, 2), A])),)))
        nodes += 1
    outs = tuple(draw(st.lists(st.integers(0, nodes - 1), min_size=1, max_size=n * d)))
    return Circuit(n, d, tuple(gates), outs)


def _naive_circuit(c: Circuit, inputs: list[Any], params: dict[str, Any] = PARAMS) -> list[Fraction]:
    vals = [Fraction(x) for x in inputs]
    for g in c.gates:
        if g.op is Op.CONST:
            vals.append(_val(g.coeffs[0], params))
        elif g.op is Op.MUL:
            vals.append(vals[g.args[0]] * vals[g.args[1]])
        else:
            (a, b), (al, be) = g.args, g.coeffs
            vals.append(_val(al, params) * vals[a] + _val(be, params) * vals[b])
    return vals


@SETTINGS
@given(_circuit(), st.lists(st.sampled_from([0, 1, -1, Fraction(2, 3), BIG]), min_size=4, max_size=4))
def test_compositional_expected_values_equal_the_naive_circuit(c: Circuit, xs: list[Any]) -> None:
    """``_expected`` (coefficient 1 adds the operand itself, int 0 skipped, empty sum = zero) equals
    the circuit's definition, over rationals and mod p, for every gate (repeated outputs and shared
    nodes included)."""
    inputs = xs[: c.num_inputs]
    frontier = dict(enumerate(inputs))
    need = compositional._needed(c, frontier, set(range(c.num_inputs, c.num_nodes)))
    want = _naive_circuit(c, inputs)
    got = compositional._expected(c, frontier, need, FractionRing(PARAMS))
    assert {v: Fraction(got[v]) for v in need} == {v: want[v] for v in need}
    ring = ModRing(P, PARAMS_MOD)
    got_p = compositional._expected(c, {k: ring.coerce(x) for k, x in frontier.items()}, need, ring)
    want_p = _naive_circuit(c, inputs, PARAMS_MOD)
    assert {v: got_p[v] for v in need} == {v: ring.coerce(want_p[v]) for v in need}
    # the generic interpreter agrees on every node too
    nodes = eval_circuit_nodes(c, inputs, FractionRing(PARAMS))
    assert [Fraction(x) for x in nodes] == want


def test_compositional_expected_of_a_lin_gate_with_all_zero_coefficients_is_the_ring_zero() -> None:
    c = Circuit(1, 2, (Gate(Op.LIN, (0, 1), (0, Fraction(0))), Gate(Op.LIN, (2, 2), (1, 1))), (3, 3))
    assert c.gates[0].coeffs == (0, 0)
    got = compositional._expected(c, {0: 5, 1: 7}, [2, 3], FractionRing())
    assert got[2] == 0 and got[3] == 0
    assert compositional._read_args(c.gates[0]) == ()


# ---- BatchModRing.grid (f419783) -----------------------------------------------------------------

@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.data(), st.sampled_from([[P], [P, 101], [101, 101, 1009]]))
def test_batch_mod_ring_grid_equals_cell_by_cell_coercion(rows: int, cols: int, data: st.DataObject, primes: list[int]) -> None:
    """Each point's slice of ``BatchModRing.grid`` is the dense matrix coerced by that point's ring."""
    g, dense = data.draw(_grid(rows, cols))
    params = [{"a": 3 + t, "b": 5 * t + 1} for t in range(len(primes))]
    ring = BatchModRing(primes, params)
    got = ring.grid(g)
    ints_one_prime = len(set(primes)) == 1 and all(type(v) is int for v in g.values())
    for t, p in enumerate(primes):
        r = ModRing(p, params[t])
        want = [[r.coerce(v) for v in row] for row in dense]
        sl = got if ints_one_prime else got[t]
        assert [[int(x) for x in row] for row in sl.tolist()] == want


# ---- Gate normal coefficients (0954edc) ----------------------------------------------------------

@pytest.mark.parametrize("x", [Fraction(1, 2), Fraction(-7, 3), A, 2 * A * B - 1, 3, 0, -BIG, Fraction(4, 2), Fraction(0),
                               Fraction(1), "3/6", "-4/2"])
def test_gate_coefficients_equal_as_scalar_in_value_and_type(x: Any) -> None:
    g = Gate(Op.LIN, (0, 1), (x, 1))
    want = as_scalar(x)
    assert g.coeffs[0] == want and type(g.coeffs[0]) is type(want)
    assert not (type(g.coeffs[0]) is Fraction and g.coeffs[0].denominator == 1)


@pytest.mark.parametrize("bad", [True, False, 0.5, None])
def test_gate_refuses_bool_and_float_coefficients(bad: Any) -> None:
    with pytest.raises(IRError, match="coefficient"):
        Gate(Op.LIN, (0, 1), (Fraction(1, 2), bad))
    with pytest.raises(IRError, match="coefficient"):
        Gate(Op.LIN, (0, 1), (bad, A))


# ---- butterfly plans of all-int factors (1674591) ------------------------------------------------

def _naive_factor(f: ButterflyFactor, x: list[Any]) -> list[Any]:
    out = list(x)
    for m in range(f.size // 2):
        p = pair_index(f.size, f.stride, m)
        a, b, c, d = (_val(v) for v in (f.d1[m], f.d2[m], f.d3[m], f.d4[m]))
        out[p] = a * x[p] + b * x[p + f.stride]
        out[p + f.stride] = c * x[p] + d * x[p + f.stride]
    return out


def _generic_plan(f: ButterflyFactor, ring: Any) -> list[Any]:
    """The plan of the generic branch of ``_plan`` (every pair classified by ``_classify``)."""
    plan = []
    for m in range(f.size // 2):
        a, b, c, d = f.d1[m], f.d2[m], f.d3[m], f.d4[m]
        if type(a) is int and type(d) is int and a == 1 and d == 1 and is_zero(b) and is_zero(c):
            continue
        p = pair_index(f.size, f.stride, m)
        plan.append((p, p + f.stride, *(kapply._classify(v, ring) for v in (a, b, c, d))))
    return plan


INT_DIAG = [0, 1, 1, 1, -1, 2, BIG, -BIG]


@SETTINGS
@given(st.sampled_from([2, 4, 8]), st.data())
def test_all_int_butterfly_plans_equal_the_generic_plan_and_the_naive_product(size: int, data: st.DataObject) -> None:
    half = size // 2
    stride = data.draw(st.sampled_from([s for s in (1, 2, 4) if s <= half]))
    mixed = data.draw(st.booleans())
    values = INT_DIAG + ([Fraction(1), Fraction(0), Fraction(1, 2), A] if mixed else [])
    diags = [tuple(data.draw(st.sampled_from(values)) for _ in range(half)) for _ in range(4)]
    f = ButterflyFactor(size, stride, *diags)
    ring = ScalarRing()
    assert kapply._plan(f, ring) == _generic_plan(f, ring)
    x = [data.draw(st.sampled_from([0, 1, -3, Fraction(5, 7), BIG])) for _ in range(size)]
    got = kapply.apply(f, x, FractionRing(PARAMS))
    assert [Fraction(v) for v in got] == _naive_factor(f, [Fraction(v) for v in x])


def test_butterfly_identity_pairs_with_fraction_ones_are_not_skipped_as_ints() -> None:
    """``Fraction(1)`` on the diagonal is normalised to the int 1 by the factor (as_scalar), so the
    pair is the identity either way; a pair with ``d2 = BIG`` is never skipped."""
    f = ButterflyFactor(4, 1, (Fraction(1), 1), (0, BIG), (Fraction(0), 0), (1, 1))
    assert f.d1 == (1, 1) and type(f.d1[0]) is int and type(f.d3[0]) is int
    assert [p for p, *_ in kapply._plan(f, ScalarRing())] == [2]
    assert kapply.apply(f, [1, 2, 3, 4]) == [1, 2, 3 + 4 * BIG, 4]


# ---- straight-line programs (b5f01fe, e75c517) ---------------------------------------------------

def _naive_program(c: Circuit) -> tuple[list[Any], list[int]]:
    """``scalars`` (distinct by type and value, in order of first use) and every coefficient's index,
    by a gate-by-gate scan."""
    index: dict[Any, int] = {}
    scalars: list[Any] = []
    idx = []
    for g in c.gates:
        for x in g.coeffs:
            key = (type(x), x)
            if key not in index:
                index[key] = len(scalars)
                scalars.append(x)
            idx.append(index[key])
    return scalars, idx


def _decoded(prog: Any) -> list[int]:
    return [int.from_bytes(prog.coeff_index[k : k + 8], "little", signed=True) for k in range(0, len(prog.coeff_index), 8)]


def _fresh_coeff(k: int) -> Any:
    """A coefficient object built at run time (never a cached small int or an interned constant)."""
    kind = k % 4
    if kind == 0:
        return BIG + k // 4  # a new big int object each time
    if kind == 1:
        return Fraction(k, 2 * k + 1)
    if kind == 2:
        return sym(f"s{k % 5}") * (k + 2)
    return -(BIG + k // 4)


def test_program_coefficients_survive_id_reuse_after_garbage_collection() -> None:
    """Circuits built one after another from fresh coefficient objects, each dropped before the next
    is built (so CPython reuses the freed objects' ids): every program's coefficient indices decode
    to the coefficients of a gate-by-gate scan, and two different coefficients never share an index."""
    for round_ in range(30):
        gates = [Gate(Op.LIN, (0, 0), (_fresh_coeff(round_ * 7 + k), _fresh_coeff(round_ * 7 + k + 1))) for k in range(6)]
        gates.append(Gate(Op.LIN, (0, 1), (1, 1)))
        gates.append(Gate(Op.CONST, (), (_fresh_coeff(round_),)))
        c = Circuit(1, 1, tuple(gates), (len(gates),))
        prog = program(c)
        scalars, idx = _naive_program(c)
        assert list(prog.scalars) == scalars and [type(x) for x in prog.scalars] == [type(x) for x in scalars]
        assert _decoded(prog) == idx
        flat = [x for g in c.gates for x in g.coeffs]
        assert [prog.scalars[k] for k in _decoded(prog)] == flat
        del c, gates, prog, flat
        gc.collect()


@SETTINGS
@given(_circuit())
def test_program_and_eval_mod_equal_the_naive_scan_and_circuit(c: Circuit) -> None:
    prog = program(c)
    scalars, idx = _naive_program(c)
    assert list(prog.scalars) == scalars and _decoded(prog) == idx
    assert prog.size == len(c.gates)
    assert list(prog.ops) == [{Op.CONST: 0, Op.LIN: 1, Op.MUL: 2}[g.op] for g in c.gates]
    ring = ModRing(P, PARAMS_MOD)
    inputs = [(3 * k + 1) % 5 for k in range(c.num_inputs)]
    got = eval_mod(prog, inputs, P, [ring.coerce(x) for x in prog.scalars])
    want = _naive_circuit(c, inputs, PARAMS_MOD)
    assert got == [ring.coerce(x) for x in want]


def test_program_keeps_equal_values_of_different_types_apart() -> None:
    """``1`` and ``Fraction(1)`` cannot both reach a gate (gates normalise), but equal values built
    as distinct objects share one entry and ``A`` and ``A·1`` are one Sym value."""
    c = Circuit(1, 1, (Gate(Op.LIN, (0, 0), (BIG + 1, BIG + 1)), Gate(Op.LIN, (0, 1), (A, A * 1)),
                       Gate(Op.LIN, (1, 2), (Fraction(1, 2), Fraction(2, 4)))), (3,))
    prog = program(c)
    assert list(prog.scalars) == [BIG + 1, A, Fraction(1, 2)]
    assert _decoded(prog) == [0, 0, 1, 1, 2, 2]


# ---- the memory guard's per-program coefficient values (ebed69c) ---------------------------------

@pytest.mark.parametrize("q", [1, 6])
def test_memory_guard_coefficient_values_do_not_depend_on_the_variable_count(q: int) -> None:
    c = Circuit(1, 2, (Gate(Op.LIN, (0, 1), (Fraction(1, 2), A)), Gate(Op.LIN, (0, 2), (BIG, -1)), Gate(Op.MUL, (2, 3), ())), (4,))
    prog = program(c)
    for variables in (1, 2, 50, 10**6):
        assert [BoundRing(variables, q).scalar(x) for x in prog.scalars] == [BoundRing(1, q).scalar(x) for x in prog.scalars]
    compositional._PROGRAM_SCALARS.clear()
    for variables in (2, 50):
        fresh = compositional._circuit_count(c, {0, 1}, [2, 3, 4], variables)
        compositional._PROGRAM_SCALARS.clear()
        assert compositional._circuit_count(c, {0, 1}, [2, 3, 4], variables) == fresh


# ---- end to end: one weight perturbed at the fast paths' edges is never proved -------------------

@pytest.fixture(scope="module")
def det2() -> Any:
    import symverify as sv
    from symverify import library

    c = library.determinant(2)
    comp = sv.compile(c, method="dense")  # N' = 2, causal and cyclic layers
    return c, comp


def _never_falsely_proved(c: Circuit, comp: Any, mutant: Model) -> str:
    """The exact method's verdict on ``(c, mutant)``, and the compositional (original certificate,
    sparse evaluator) and randomized methods never contradict it."""
    import symverify as sv

    truth = sv.verify(c, mutant, method="exact").verdict
    assert truth in ("proved", "refuted")
    for method, kw in (("compositional", {"certificate": comp.certificate}), ("randomized", {})):
        got = sv.verify(c, mutant, method=method, **kw).verdict
        assert got == truth or got == "unknown", (method, got, truth)
        assert not (got == "proved" and truth == "refuted")
    return truth


@pytest.mark.parametrize("op", ["frac_p", "add_p", "zero", "neg", "sym"])
def test_every_nonzero_weight_perturbed_is_refuted_or_invisible(det2: Any, op: str) -> None:
    """Weights 1 turned into ``1 + 1/(2^61−1)`` (no longer the ring's one object), ``1 + 2^61 − 1``
    (equal to 1 mod the preferred prime), 0 (a zero painted over a nonzero rectangle), negated, or
    symbolic: at every nonzero site of a model with causal and cyclic layers."""
    from symverify import mutate

    c, comp = det2
    verdicts = [_never_falsely_proved(c, comp, mutate.mutate_weight(comp.model, s, op)) for s in mutate.weight_sites(comp.model)]
    assert verdicts.count("refuted") >= len(verdicts) // 2  # most sites matter (the campaign's ground truth)


def test_every_zero_weight_made_one_and_every_mode_flipped(det2: Any) -> None:
    """A new tap (the last lag ``N'−1`` included), a new bias row no source reaches, a new
    projection weight; each layer's mode flipped where it can matter (a wrap that only cyclic mode makes)."""
    from symverify import mutate

    c, comp = det2
    m = comp.model
    sites = mutate.weight_sites(m, False)
    assert any(s.grid == "h" and s.row == m.inner_n - 1 for s in sites)
    verdicts = [_never_falsely_proved(c, comp, mutate.mutate_weight(m, s, "one")) for s in sites]
    verdicts += [_never_falsely_proved(c, comp, mutate.flip_mode(m, k)) for k in range(len(m.layers))
                 if mutate.mode_matters(m.layers[k])]  # the others compute the same in both modes
    assert "refuted" in verdicts


@pytest.mark.parametrize("gates", [
    (),
    (Gate(Op.CONST, (), (0,)), Gate(Op.CONST, (), (1,)), Gate(Op.CONST, (), (A,))),
    (Gate(Op.MUL, (0, 0), ()), Gate(Op.MUL, (1, 1), ())),
    (Gate(Op.CONST, (), (BIG,)), Gate(Op.LIN, (0, 1), (0, 0)), Gate(Op.LIN, (0, 1), (0, -1)), Gate(Op.LIN, (2, 0), (1, -1))),
], ids=["no-gates", "consts-only", "muls-only", "mixed-zero-coefficients"])
def test_program_of_degenerate_circuits(gates: tuple[Gate, ...]) -> None:
    """No coefficient at all, no operand at all, or zero coefficients on either side of a LIN gate:
    the bulk arrays still give the gate-by-gate code and ``eval_mod`` the circuit's values."""
    c = Circuit(1, 1, gates, (len(gates),))
    prog = program(c)
    scalars, idx = _naive_program(c)
    assert list(prog.scalars) == scalars and _decoded(prog) == idx and prog.size == len(gates)
    ring = ModRing(P, PARAMS_MOD)
    got = eval_mod(prog, [5], P, [ring.coerce(x) for x in prog.scalars])
    assert got == [ring.coerce(x) for x in _naive_circuit(c, [5], PARAMS_MOD)]


@SETTINGS
@given(_model_case())
def test_sparse_projection_at_every_cell_equals_the_naive_projection(case: Any) -> None:
    """``Projection.at`` (the projection branch the combine step inlines) is ``u·W + b1`` at every
    cell, None exactly where the sum has no nonzero term."""
    from symverify.kernel.semantics.sparse import SparseArithmetic

    m, dense, state = case
    arith = SparseArithmetic(FractionRing(PARAMS))
    cells = {(i, q): x for i, row in enumerate(state) for q, x in enumerate(row) if x}
    proj = arith.project(arith.prepare(m.layers[0]), cells, iter(()))
    W, b1 = dense[0]["W"], dense[0]["b1"]
    for i in range(m.inner_n):
        for q in range(m.inner_d):
            want = sum((Fraction(state[i][p]) * _val(W[p][q]) for p in range(m.inner_d)), Fraction(0)) + _val(b1[i][q])
            got = proj.at(i, q)
            assert (Fraction(0) if got is None else Fraction(got)) == want


def test_grid_values_are_canonical() -> None:
    """An integral Fraction is stored as the int (as gate coefficients are), so equal grids hold
    equal value objects of the same type: a shared cached cell map never hands a Fraction to an
    all-int path."""
    g = Grid(2, 2, Fraction(0), ((0, 1, 0, 2, Fraction(1)), (1, 2, 1, 2, Fraction(-3)), (1, 2, 0, 1, Fraction(1, 2))))
    assert type(g.fill) is int and [type(r[4]) for r in g.rects] == [int, int, Fraction]
    assert all(type(v) is int for (r, c), v in g.nonzero().items() if (r, c) != (1, 0))
