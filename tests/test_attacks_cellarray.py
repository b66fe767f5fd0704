"""Adversarial inputs to grids built in bulk from float arrays (symverify/kernel/ir/cellarray.py): the same
grid however it is built (equal, same hash, same fingerprint), nothing rounded, a one-ulp mutation
of a zoology weight refuted."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch

import symverify as sv
from symverify.errors import IRError
from symverify.executors import ZoologyBaseConv, from_zoology
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.fingerprint import encode, fingerprint

ODD = np.array([[0.5, -0.0, 5e-324], [3.0, 1e300, -(2.0**-1074)], [2.0**60 + 2**8, 0.1, 1 / 3]])


def _model(g: Grid) -> Model:
    z = Grid.from_cells(g.rows, g.cols, {})
    return Model(g.rows, g.cols, g.rows, g.cols, (Layer(g, z, z, z, Mode.CAUSAL),))


def _cells(a: np.ndarray) -> Grid:
    cells = {(i, j): Fraction(float(a[i, j])) for i in range(a.shape[0]) for j in range(a.shape[1]) if a[i, j] != 0}
    return Grid.from_cells(a.shape[0], a.shape[1], {k: int(v) if v.denominator == 1 else v for k, v in cells.items()})


def test_bulk_grid_is_the_cell_by_cell_grid_byte_for_byte() -> None:
    ga, gc = Grid.from_array(ODD), _cells(ODD)
    assert ga == gc and gc == ga and hash(ga) == hash(gc)
    assert encode(_model(ga)) == encode(_model(gc))
    assert fingerprint(_model(ga)) == fingerprint(_model(gc))


def test_float32_and_float64_of_one_value_are_one_grid() -> None:
    a = np.array([[0.5, 1e-40, -3.25], [0, 0.1, 0], [7, 0, -0.0]], dtype=np.float32)  # 1e-40: a float32 subnormal
    g32, g64 = Grid.from_array(a), Grid.from_array(a.astype(np.float64))
    assert g32 == g64 and fingerprint(_model(g32)) == fingerprint(_model(g64))


def test_negative_zero_is_not_stored() -> None:
    g = Grid.from_array(np.array([[-0.0, 0.0]]))
    assert g == Grid.from_cells(1, 2, {}) and hash(g) == hash(Grid.from_cells(1, 2, {}))
    assert g.nonzero_count() == 0


def test_a_one_ulp_difference_changes_equality_and_fingerprint() -> None:
    b = ODD.copy()
    b[2, 1] = np.nextafter(b[2, 1], 1.0)
    assert Grid.from_array(b) != Grid.from_array(ODD)
    assert fingerprint(_model(Grid.from_array(b))) != fingerprint(_model(Grid.from_array(ODD)))


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="longdouble is float64 on this platform")
def test_longdouble_that_float64_would_round_is_refused() -> None:
    x = np.longdouble(1) + np.longdouble(2) ** -60
    with pytest.raises(IRError, match="float64 would round"):
        Grid.from_array(np.array([[x]], dtype=np.longdouble))
    with pytest.raises(IRError, match="float64 would round"):
        CellArray.from_parts([0], [0], np.array([x]))


def test_longdouble_exact_in_float64_is_read() -> None:
    assert Grid.from_array(np.array([[0.25]], dtype=np.longdouble)).to_rows() == [[Fraction(1, 4)]]


@pytest.mark.parametrize(("args", "match"), [
    (([0], [0], [2**53 + 1]), "not exactly a float64"),
    (([0], [0], ["1.5"]), "expected float or integer values"),
    (([0.7], [0], [1.0]), "expected integer row and column indices"),
    (([0], [0.2], [1.0]), "expected integer row and column indices"),
])
def test_from_parts_never_coerces(args: tuple[object, object, object], match: str) -> None:
    with pytest.raises(IRError, match=match):
        CellArray.from_parts(*args)


def test_from_parts_empty_lists() -> None:
    assert len(CellArray.from_parts([], [], [])) == 0


def _zoo(k: np.ndarray, A: np.ndarray, c: np.ndarray) -> ZoologyBaseConv:
    d, n = k.shape
    z = ZoologyBaseConv(d, n, dtype=torch.float64)
    with torch.no_grad():
        z.projection.weight.copy_(torch.from_numpy(A.T.copy()))
        z.projection.bias.copy_(torch.from_numpy(c))
        z.conv.filter.copy_(torch.from_numpy(k))
    return z


@pytest.mark.parametrize("which", ["filter", "projection", "bias"])
def test_from_zoology_mutated_in_one_weight_is_refuted(which: str) -> None:
    rng = np.random.default_rng(7)
    k, A, c = rng.standard_normal((2, 6)), rng.standard_normal((2, 2)), rng.standard_normal(2)
    good = from_zoology(_zoo(k, A, c))
    k2, A2, c2 = k.copy(), A.copy(), c.copy()
    target = {"filter": (k2, (1, 3)), "projection": (A2, (0, 1)), "bias": (c2, (1,))}[which]
    target[0][target[1]] = np.nextafter(target[0][target[1]], np.inf)
    bad = from_zoology(_zoo(k2, A2, c2))
    assert sv.verify(good, from_zoology(_zoo(k, A, c))).verdict is sv.Verdict.PROVED
    assert sv.verify(good, bad).verdict is sv.Verdict.REFUTED
