"""Grids stored as cell arrays, and from_zoology/to_torch reading weights in bulk.

The per-cell converter that from_zoology used before (every weight through ``Fraction(float)`` and
``Grid.from_rows``) is kept below as the oracle: the bulk path must give the same cells, exactly.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import CompileError, IRError, ShapeError
from symverify.executors import ZoologyBaseConv, execute, from_zoology, to_torch
from symverify.executors.export import grid_from_tensor
from symverify.ir.serialize import dumps, loads
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.cellarray import CellArray, dyadic_parts, exact_scalars
from symverify.kernel.ir.grid import Grid

# ---- the per-cell oracle (from_zoology as it was built cell by cell) -------------------------


def _old_read(mod: ZoologyBaseConv, n: int) -> tuple[list[list[Any]], list[Any], list[list[Any]]]:
    A = grid_from_tensor(mod.projection.weight.T, "A").to_rows()
    c = grid_from_tensor(mod.projection.bias[None, :], "c").to_rows()[0]
    filt = mod.conv.filter.detach().to("cpu", torch.float64)
    k = torch.zeros(filt.shape[0], n, dtype=filt.dtype)
    m = min(n, filt.shape[1])
    k[:, :m] = filt[:, :m]
    return A, c, grid_from_tensor(k, "k").to_rows()


def _old_single(A: list[list[Any]], c: list[Any], k: list[list[Any]]) -> list[Grid] | None:
    d, n = len(c), len(k[0])
    W = [[0] * d for _ in range(d)]
    b1, h, b2 = ([[0] * d for _ in range(n)] for _ in range(3))
    for q in range(d):
        Aq, kq = [A[p][q] for p in range(d)], k[q]
        if all(v == 0 for v in kq):
            cols = (Aq, c[q] + 1, [1] + [0] * (n - 1), 0)
        elif all(v == 0 for v in Aq):
            cols = (Aq, 1, [c[q] * v + (c[q] + 1) * (j == 0) for j, v in enumerate(kq)], 0)
        elif c[q] == 0 and all(v == 0 for p, v in enumerate(Aq) if p != q):
            cols = ([int(p == q) for p in range(d)], 0, [Aq[q] * (v + (j == 0)) for j, v in enumerate(kq)], 1)
        else:
            return None
        for p in range(d):
            W[p][q] = cols[0][p]
        for i in range(n):
            b1[i][q], h[i][q], b2[i][q] = cols[1], cols[2][i], cols[3]
    return [Grid.from_rows(t) for t in (W, b1, h, b2)]


def _old_pair(A: list[list[Any]], c: list[Any], k: list[list[Any]]) -> list[list[Grid]]:
    d, n = len(c), len(k[0])
    W1 = [[A[p][q] if p < d and q < d else int(p < d and q == p + d) for q in range(2 * d)] for p in range(2 * d)]
    b1 = [[c[q] if q < d else 0 for q in range(2 * d)] for _ in range(n)]
    h1 = [[(k[q][i] + (i == 0)) if q < d else 0 for q in range(2 * d)] for i in range(n)]
    b21 = [[int(q >= d) for q in range(2 * d)] for _ in range(n)]
    W2 = [[int(q < d and (p == q or p == q + d)) for q in range(2 * d)] for p in range(2 * d)]
    b22 = [[1] * (2 * d) for _ in range(n)]
    zero = [[0] * (2 * d) for _ in range(n)]
    g = Grid.from_rows
    return [[g(W1), g(b1), g(h1), g(b21)], [g(W2), g(zero), g(zero), g(b22)]]


def _old_model(z: ZoologyBaseConv, form: str) -> list[list[Grid]]:
    r = _old_read(z, z.l_max)
    one = _old_single(*r) if form != "pair" else None
    return [one] if one is not None else _old_pair(*r)


def _same(model: Model, old: list[list[Grid]]) -> None:
    assert len(model.layers) == len(old)
    for ly, grids in zip(model.layers, old):
        for (name, g), o in zip(ly.grids(), grids):
            assert (g.rows, g.cols) == (o.rows, o.cols), name
            assert g.nonzero() == o.nonzero(), name
            assert all(type(v) is type(o.nonzero()[key]) for key, v in g.nonzero().items()), name  # int stays int


# ---- weights with every kind of float ------------------------------------------------------

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 0.5, 0.1, -1 / 3, 5e-324, -2.5e-320, 2.2250738585072014e-308, 1e-300,
           1e300, 2.0**52 + 1, -(2.0**60), 1e-8, 7.0, 2.0**-1074 * 3]


def _zoo(d: int, n: int, dtype: torch.dtype, A: np.ndarray, c: np.ndarray, k: np.ndarray) -> ZoologyBaseConv:
    z = ZoologyBaseConv(d, n, dtype=dtype)
    with torch.no_grad():
        z.projection.weight.copy_(torch.from_numpy(A.T.copy()))
        z.projection.bias.copy_(torch.from_numpy(c))
        z.conv.filter.copy_(torch.from_numpy(k))
    return z


@st.composite
def zoology_layers(draw: Any) -> tuple[ZoologyBaseConv, str]:
    d, n = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    val = st.one_of(st.sampled_from(SPECIAL), st.floats(-4, 4, allow_nan=False), st.integers(-5, 5).map(float))

    def arr(*shape: int) -> np.ndarray:
        return np.array(draw(st.lists(val, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))), dtype=np.float64).reshape(shape)

    A, c, k = arr(d, d), arr(d), arr(d, n)
    for q in range(d):  # steer columns into the single-layer forms often
        kind = draw(st.sampled_from(["any", "k0", "A0", "self"]))
        if kind == "k0":
            k[q] = 0
        elif kind == "A0":
            A[:, q] = 0
        elif kind == "self":
            A[:, q] = 0
            A[q, q] = draw(st.sampled_from([1.0, -0.5, 0.1, 3.0, 1e-300]))
            c[q] = draw(st.sampled_from([0.0, -0.0]))
    if dtype == torch.float32:
        with np.errstate(over="ignore", under="ignore"):
            A, c, k = (x.astype(np.float32).astype(np.float64) for x in (A, c, k))
        A, c, k = (np.where(np.isfinite(x), x, 1.0) for x in (A, c, k))
    return _zoo(d, n, dtype, A, c, k), draw(st.sampled_from(["auto", "pair"]))


@settings(max_examples=60, deadline=None)
@given(zoology_layers())
def test_from_zoology_equals_the_per_cell_converter(case: tuple[ZoologyBaseConv, str]) -> None:
    z, form = case
    model = from_zoology(z, form=form)
    old = _old_model(z, form)
    _same(model, old)
    # to_torch reads the cell arrays in bulk: the same tensors as from the per-cell grids
    ref = Model(model.n, model.d, model.inner_n, model.inner_d, tuple(Layer(*g, Mode.CAUSAL) for g in old))
    with np.errstate(over="ignore"):
        for dt in ("float64", "float32"):
            try:
                ours = to_torch(model, dtype=dt)
            except CompileError as e:  # a float64 weight beyond float32's range: refused by both, never rounded to inf
                assert dt == "float32" and "beyond the range of float32" in str(e), e
                with pytest.raises(CompileError, match="beyond the range of float32"):
                    to_torch(ref, dtype=dt)
                continue
            for a, b in zip(ours.parameters(), to_torch(ref, dtype=dt).parameters()):
                assert torch.equal(a, b)


def test_float64_products_that_are_not_float64_numbers_stay_exact() -> None:
    x = 1 + 2.0**-30  # 31-bit mantissas: x·x needs 61 bits
    A = np.zeros((1, 1))
    c, k = np.array([x]), np.array([[x, x, 0.5]])
    model = from_zoology(_zoo(1, 3, torch.float64, A, c, k))
    h = model.layers[0].h
    assert isinstance(h.rects, CellArray) and len(h.rects.extra) == 2  # row 0 and the one inexact product
    assert h.get(1, 0) == Fraction(x) ** 2 and h.get(2, 0) == Fraction(x) / 2
    _same(model, _old_model(_zoo(1, 3, torch.float64, A, c, k), "auto"))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["projection.weight", "projection.bias", "conv.filter"])
def test_from_zoology_refuses_non_finite_weights(bad: float, where: str) -> None:
    z = ZoologyBaseConv(2, 3, dtype=torch.float64)
    with torch.no_grad():
        z.get_parameter(where).view(-1)[-1] = bad
    with pytest.raises(CompileError, match=rf"layer 0 {where}\[\d, \d\] is -?(nan|inf): not a finite number"):
        from_zoology(z)


def test_one_long_layer_is_read_in_bulk() -> None:
    z = ZoologyBaseConv(4, 2048, dtype=torch.float32)
    g = torch.Generator().manual_seed(0)  # seeded: the global generator's state depends on the tests run before
    with torch.no_grad():
        for p in z.parameters():
            p.normal_(generator=g)
    model = from_zoology(z)
    h = model.layers[0].h
    assert isinstance(h.rects, CellArray) and len(h.rects.rows) == 4 * 2047
    u = torch.randn(2, 2048, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    ref = z.double()(u)
    assert torch.allclose(to_torch(model)(u), ref, rtol=1e-9, atol=1e-9)
    assert torch.allclose(execute(model, u, backend="torch"), ref, rtol=1e-9, atol=1e-9)


# ---- CellArray and Grid.from_array ----------------------------------------------------------


def test_dyadic_parts_and_exact_scalars_are_the_floats_rationals() -> None:
    a = np.array([*SPECIAL, 2.0 ** 70, -2.0 ** (-1000)])
    m, e = dyadic_parts(a)
    for x, mi, ei in zip(a.tolist(), m.tolist(), e.tolist()):
        assert Fraction(mi) * Fraction(2) ** ei == Fraction(x)
        assert mi == 0 or mi % 2 == 1
    got = exact_scalars(a)
    assert got == [Fraction(x) for x in a.tolist()]
    assert all(type(v) is int for v, x in zip(got, a.tolist()) if x == int(x))


def test_from_array_equals_from_cells() -> None:
    a = np.array([[0.0, 0.5, -0.0], [3.0, 0.0, 5e-324]], dtype=np.float64)
    g = Grid.from_array(a)
    ref = Grid.from_cells(2, 3, {(0, 1): Fraction(1, 2), (1, 0): 3, (1, 2): Fraction(5e-324)})
    assert g == ref and ref == g and hash(g) == hash(ref)
    assert g.to_rows() == ref.to_rows() and g.nonzero_count() == 3 and g.get(1, 2) == Fraction(5e-324) and g.get(0, 0) == 0
    assert g.transpose().nonzero() == ref.transpose().nonzero() and g.params() == frozenset()  # (row-major again)
    assert list(g.rects[1:]) == list(ref.rects[1:]) and g.rects[-1] == ref.rects[-1]
    m = Model(2, 3, 2, 3, (Layer(Grid.zeros(3, 3), g, g, g),))
    assert loads(dumps(m)) == m
    assert Grid.from_array(torch.tensor([[1.5, 0.0]], dtype=torch.bfloat16)).to_rows() == [[Fraction(3, 2), 0]]
    assert Grid.from_array(np.array([[2**60, 0, -7]])).to_rows() == [[2**60, 0, -7]]  # large ints exact


def test_extra_cells_merge_in_row_major_order() -> None:
    cells = CellArray(np.array([0, 2]), np.array([1, 0]), np.array([1.0, 0.25]), [(1, 1, Fraction(1, 3)), (0, 0, 5)])
    assert list(cells) == [(0, 1, 0, 1, 5), (0, 1, 1, 2, 1), (1, 2, 1, 2, Fraction(1, 3)), (2, 3, 0, 1, Fraction(1, 4))]
    assert [cells[k] for k in range(4)] == list(cells) and cells[1:3] == tuple(cells)[1:3]
    g = Grid(3, 2, 0, cells)
    assert g.get(1, 1) == Fraction(1, 3) and g.get(2, 0) == Fraction(1, 4) and g.get(2, 1) == 0
    split = CellArray.from_parts([0, 0, 1, 2], [0, 1, 1, 0], [5.0, 1.0, 9.0, 0.25], [(1, 1, Fraction(1, 3))])
    assert split == cells and g == Grid(3, 2, 0, split)
    assert g.paint(0, 1, 0, 1, 0).get(0, 0) == 0  # painting turns the cells into ordinary rectangles


@pytest.mark.parametrize(("args", "err", "match"), [
    (([0], [0], [float("nan")]), IRError, r"cell \(0, 0\) is nan: not a finite number"),
    (([0], [0], [0.0]), IRError, r"cell \(0, 0\) is 0; a cell array stores nonzero cells only"),
    (([1, 0], [0, 0], [1.0, 1.0]), IRError, r"distinct and in row-major order; found \(0, 0\) after \(1, 0\)"),
    (([0, 0], [1, 1], [1.0, 1.0]), IRError, r"distinct and in row-major order"),
    (([0], [0], [1.0], [(0, 0, 2)]), IRError, r"extra cell \(0, 0\) is also an array cell"),
    (([0], [0], [1.0], [(1, 0, 2), (1, 0, 3)]), IRError, r"extra cell \(1, 0\) is given twice"),
    (([0], [0], [1.0], [(1, 0, 0)]), IRError, r"extra cell \(1, 0\) is 0"),
    (([0], [0], [1.0], [(1, 0, 0.5)]), IRError, r"found the float 0.5"),
    (([0], [0], [2**60]), IRError, r"value 1152921504606846976 at \(0, 0\) is not exactly a float64"),
    (([0], [-1], [1.0]), ShapeError, r"expected non-negative indices"),
    (([0, 1], [0], [1.0]), ShapeError, r"expected three 1-d arrays of one length"),
    (([0.5], [0], [1.0]), IRError, r"expected integer row and column indices"),
])
def test_cell_array_validation(args: tuple[Any, ...], err: type[Exception], match: str) -> None:
    with pytest.raises(err, match=match):
        CellArray(*(np.asarray(a) for a in args[:3]), *args[3:])


def test_grid_refuses_misfit_cell_arrays() -> None:
    cells = CellArray(np.array([2]), np.array([0]), np.array([1.0]))
    with pytest.raises(ShapeError, match=r"a cell in row 2 or column 0 does not fit in a 2×2 grid"):
        Grid(2, 2, 0, cells)
    with pytest.raises(IRError, match=r"a grid stored as a cell array needs fill 0, found 1"):
        Grid(3, 2, 1, cells)
    with pytest.raises(IRError, match=r"array\[0, 1\] is inf: not a finite number"):
        Grid.from_array(np.array([[1.0, np.inf]]))
    with pytest.raises(ShapeError, match=r"expected a 2-d array, found shape \(2,\)"):
        Grid.from_array(np.array([1.0, 2.0]))
    with pytest.raises(IRError, match=r"expected a float or integer array, found dtype bool"):
        Grid.from_array(np.array([[True]]))


def test_mutation_of_one_weight_changes_the_grid() -> None:
    a = np.arange(1.0, 7.0).reshape(2, 3) / 8
    g = Grid.from_array(a)
    for i, j in itertools.product(range(2), range(3)):
        b = a.copy()
        b[i, j] += 2.0**-40
        assert Grid.from_array(b) != g and Grid.from_array(b).get(i, j) == Fraction(float(b[i, j]))


def test_exact_float64_products_stay_in_the_arrays() -> None:
    k = np.random.default_rng(0).standard_normal((2, 50))  # 53-bit mantissas: products by ±1, 2^j are exact
    model = from_zoology(_zoo(2, 50, torch.float64, np.zeros((2, 2)), np.array([1.0, -0.25]), k))
    h = model.layers[0].h
    assert isinstance(h.rects, CellArray) and [i for i, _, _ in h.rects.extra] == [0, 0] and len(h.rects.rows) == 98
    assert h.get(7, 1) == Fraction(-0.25) * Fraction(float(k[1, 7]))
