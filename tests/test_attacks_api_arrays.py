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
