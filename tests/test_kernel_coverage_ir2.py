"""Coverage of ``symverify/kernel/ir/cellarray.py``, ``ir/layered.py`` and
``kaleidoscope/matrix.py``: constructor refusals a user can reach, the sequence protocol of a cell
array (slices with a step, negative and out-of-range indices, tuple concatenation, comparison with
other types, the cached hash, repr), the layered form's internal liveness guards and the sparse
matrix transpose. Each test names the functions it reaches; every assertion compares against an
independent reading (the tuple of rectangles, a dense matrix) so a wrong branch fails it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate
from symverify.kernel.ir.layered import LinearStage, MulStage, _row_for, layered_form
from symverify.kernel.ir.scalar import sym
from symverify.kernel.kaleidoscope.matrix import SparseMatrix


def _cells() -> CellArray:
    """Three array cells and one exact cell between them (row-major: (0,1), (1,0), (1,2), (2,2))."""
    return CellArray(np.array([0, 1, 2]), np.array([1, 0, 2]), np.array([0.5, 3.0, -2.0]), [(1, 2, Fraction(1, 3))])


@pytest.mark.parametrize(("extra", "error", "message"), [
    # cellarray.py CellArray.__init__
    ([(0, 1)], IRError, r"extra cell 0: expected \(row, col, value\) with int indices, found \(0, 1\)"),
    ([(0, 1.0, 2)], IRError, r"extra cell 0: expected \(row, col, value\) with int indices"),
    ([(-1, 0, 2)], ShapeError, r"extra cell \(-1, 0\): expected non-negative indices"),
])
def test_cell_array_refuses_malformed_extra_cells(extra, error, message) -> None:
    with pytest.raises(error, match=message):
        CellArray(np.array([0]), np.array([0]), np.array([1.0]), extra)


def test_cell_array_refuses_non_numeric_values_and_non_2d_dense_arrays() -> None:
    """cellarray.py ``CellArray.__init__`` (object-dtype values: Fractions belong in ``extra``),
    ``CellArray.from_dense`` (a 1-d array)."""
    with pytest.raises(IRError, match="expected float or integer values, found object"):
        CellArray(np.array([0]), np.array([0]), np.array([Fraction(1, 3)], dtype=object))
    with pytest.raises(ShapeError, match=r"expected a 2-d array, found shape \(3,\)"):
        CellArray.from_dense(np.array([1.0, 2.0, 3.0]))


def test_get_beyond_the_widest_column_is_none() -> None:
    """cellarray.py ``CellArray.get``: a column at or past the width is not stored (a wrong key
    there would alias cell (i + 1, j − width))."""
    cells = _cells()
    assert cells.get(0, 3) is None and cells.get(0, 5) is None
    assert cells.get(1, 2) == Fraction(1, 3) and cells.get(2, 2) == -2 and cells.get(0, 1) == Fraction(1, 2)


def test_sequence_protocol_matches_the_tuple_of_rectangles() -> None:
    """cellarray.py ``CellArray.__getitem__`` (a slice with a step, out of range, negative indices),
    ``CellArray.__add__`` and ``CellArray.__radd__`` (concatenation with tuples, NotImplemented
    otherwise), ``CellArray.__eq__`` (== with another type), ``CellArray.__hash__`` (the hash
    computed once), ``CellArray.__repr__``."""
    cells = _cells()
    ref = ((0, 1, 1, 2, Fraction(1, 2)), (1, 2, 0, 1, 3), (1, 2, 2, 3, Fraction(1, 3)), (2, 3, 2, 3, -2))
    assert tuple(cells) == ref
    assert cells[::2] == ref[::2] and cells[::-1] == ref[::-1] and cells[1:3] == ref[1:3]
    assert cells[-1] == ref[-1] and cells[-4] == ref[0]
    for k in (4, -5):
        with pytest.raises(IndexError, match="cell array index out of range"):
            cells[k]
    extra = ((9, 10, 9, 10, 1),)
    assert cells + extra == ref + extra and extra + cells == extra + ref
    with pytest.raises(TypeError):
        cells + [1]  # type: ignore[operator]  # noqa: RUF005 (the NotImplemented path is the point)
    with pytest.raises(TypeError):
        [1] + cells  # type: ignore[operator]  # noqa: RUF005
    assert (cells == 5) is False and cells != "cells"
    assert hash(cells) == hash(ref) and hash(cells) == hash(ref)  # the second call reads the cache
    assert repr(cells) == "CellArray(3 array cells, 1 exact cells)"


def test_layered_form_liveness_guards() -> None:
    """layered.py ``_row_for``: it refuses a node (or an operand) that is not in the state;
    ``layered_form`` never asks for one (live_sets), so these are called directly."""
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.add(0, 1)), (2, 3))
    with pytest.raises(IRError, match=r"node %2 is needed at level 1 but is not live"):
        _row_for(c, 2, {}, 1)
    with pytest.raises(IRError, match=r"operand %1 of node %3 is not live at level 1"):
        _row_for(c, 3, {0: 0}, 1)
    assert _row_for(c, 3, {0: 0, 1: 1}, 1) == (((0, 1), (1, 1)), 0)


def test_layered_form_output_stage() -> None:
    """layered.py: the final output stage (the condition simplified in
    ``layered_form``: the last stage's outputs are always the state): a product level followed by
    outputs that are not the state gets exactly one more linear stage, whose rows are the copies."""
    c = Circuit(1, 3, (Gate.mul(0, 1),), (3, 0, 3))
    lf = layered_form(c)
    assert [type(s) for s in lf.stages] == [LinearStage, MulStage, LinearStage]
    last = lf.stages[-1]
    assert isinstance(last, LinearStage) and last.outputs == (3, 0, 3)
    assert sum(map(len, last.rows)) == 3 and sum(map(len, lf.stages[0].rows)) == 3  # first stage: copies of u0, u1 and u0 (kept)
    same = layered_form(Circuit(1, 2, (Gate.add(0, 1),), (2,)))  # the last level yields the outputs
    assert len(same.stages) == 1 and same.stages[0].outputs == (2,)
    zero = layered_form(Circuit(1, 2, (), (1, 0)))  # Δ = 0: one linear stage of copies
    assert len(zero.stages) == 1 and zero.stages[0].rows == (((1, 1),), ((0, 1),))


def test_sparse_matrix_transpose_matches_the_dense_transpose() -> None:
    """kaleidoscope/matrix.py ``SparseMatrix.transpose``: every entry (i, j, v) moves to (j, i, v);
    the shape swaps."""
    dense = [[0, 2, 0], [Fraction(1, 2), 0, sym("a")]]
    m = SparseMatrix.from_dense(dense)
    t = m.transpose()
    assert (t.rows, t.cols) == (3, 2)
    assert t.as_dict() == {(j, i): v for i, row in enumerate(dense) for j, v in enumerate(row) if v != 0}
    assert t.transpose() == m
