"""Attacks on the IR's array readers (``Grid.from_array``, ``CellArray``) and exact scalars with numpy and
torch values they could misread: a masked array (reading it drops the mask), a duration, a meta or
sparse tensor. Each is refused with an ``IRError`` saying what to pass instead, never read as other
values nor ended by a bare ``TypeError``."""

from __future__ import annotations

import numpy as np
import pytest

from symverify import Grid
from symverify.errors import IRError
from symverify.kernel.ir.cellarray import CellArray

_MASKED = r"a masked array; its masked entries would be read as the values under the mask: fill them first \(a.filled\(value\)\)"


@pytest.mark.parametrize("make", [
    lambda: Grid.from_array(np.ma.array([[1.0, 2.0]], mask=[[False, True]])),
    lambda: Grid.from_array(np.ma.array([[1, 2]], mask=[[True, False]])),
    lambda: Grid.from_array(np.ma.array([[1.0, 2.0]])),  # no entry masked: refused all the same, as the executors' inputs
    lambda: CellArray.from_dense(np.ma.array([[1.0, 2.0]], mask=[[False, True]])),
    lambda: CellArray.from_parts([0, 0], [0, 1], np.ma.array([1.0, 2.0], mask=[False, True])),
    lambda: CellArray(np.ma.array([0]), [0], [1.0]),
])
def test_a_masked_array_is_refused_not_read_under_its_mask(make):
    """``Grid.from_array(np.ma.array([[1.0, 2.0]], mask=[[False, True]]))`` was the grid ``[[1, 2]]``:
    ``numpy.asarray`` dropped the mask, and the masked 2 became a weight."""
    with pytest.raises(IRError, match=_MASKED):
        make()


def test_a_filled_masked_array_is_read():
    a = np.ma.array([[1.0, 2.0]], mask=[[False, True]])
    assert Grid.from_array(a.filled(0)).to_rows() == [[1, 0]]


@pytest.mark.parametrize("make, message", [
    (lambda: Grid.full(1, 1, np.timedelta64(5, "s")), r"grid fill: expected an exact value .* found timedelta64 np.timedelta64\(5,'s'\)"),
    (lambda: Grid.from_cells(1, 1, {(0, 0): np.timedelta64(1, "D")}), r"grid cell \(0, 0\): .* found timedelta64"),
    (lambda: Grid.from_rows(np.array([[5]], dtype="timedelta64[s]")), r"entry \(0, 0\): .* found timedelta64"),
])
def test_a_duration_is_no_exact_value(make, message):
    """numpy's ``timedelta64`` is a ``signedinteger``, so it passed as an ``Integral`` and ``int()`` of it
    raised ``TypeError``; a duration is no number, refused as ``datetime64`` is."""
    with pytest.raises(IRError, match=message):
        make()


def test_meta_and_sparse_tensors_are_refused_by_name():
    """A meta tensor has no values (``NotImplementedError`` when copied) and a sparse one has no numpy
    form (``TypeError``); both are ``IRError``s saying what was found."""
    torch = pytest.importorskip("torch")
    with pytest.raises(IRError, match=r"W: expected values, found a meta tensor of shape \(2, 2\) \(it has no data\)"):
        Grid.from_array(torch.ones(2, 2, device="meta"), "W")
    with pytest.raises(IRError, match=r"W: expected a dense tensor, found a torch.sparse_coo tensor; convert it first \(a.to_dense\(\)\)"):
        Grid.from_array(torch.eye(2).to_sparse(), "W")
    assert Grid.from_array(torch.eye(2).to_sparse().to_dense(), "W") == Grid.identity(2)


def _bool_tensor():
    return pytest.importorskip("torch").tensor(True)


@pytest.mark.parametrize("make, error, message", [
    (lambda t: __import__("symverify").Circuit(t, 1, (), (0,)), IRError, r"circuit n: expected a positive int, found tensor\(True\)"),
    (lambda t: __import__("symverify").Gate.mul(0, t), IRError, r"mul args: argument tensor\(True\) is not a node id"),
    (lambda t: Grid.zeros(2, 2).paint(0, t, 0, 1, 1), IRError, r"Grid.paint: expected int bounds, found \(0, tensor\(True\), 0, 1\)"),
    (lambda t: Grid(t, 1), __import__("symverify").ShapeError, r"a grid needs non-negative integer sizes; found rows = tensor\(True\)"),
])
def test_a_bool_tensor_is_no_size_nor_node_id(make, error, message):
    """``torch.tensor(True)`` has ``__index__``: it was read as the size or node id 1 wherever numpy's and
    Python's bools are refused (a truth value is no number)."""
    with pytest.raises(error, match=message):
        make(_bool_tensor())


@pytest.mark.parametrize("option, message", [
    ("seed", r"seed: expected an int \(or None for fresh randomness\), found tensor\(True\)"),
    ("trials", r"trials: expected a positive int, found tensor\(True\)"),
    ("timeout", r"timeout: expected a positive number of seconds, found tensor\(True\)"),
])
def test_a_bool_tensor_is_no_verify_option(option, message):
    """``verify(..., timeout=torch.tensor(True))`` ran with a 1-second timeout, ``trials=`` one trial,
    ``seed=`` seed 1; ``True`` itself is refused for each."""
    import symverify as sv
    from symverify.errors import UsageError

    c = sv.Circuit(1, 1, (), (0,))
    with pytest.raises(UsageError, match=message):
        sv.verify(c, c, method="randomized", **{option: _bool_tensor()})


def test_an_integer_tensor_or_zero_d_array_still_reads_as_its_value():
    torch = pytest.importorskip("torch")
    assert Grid(torch.tensor(2), np.array(3)) == Grid(2, 3)
