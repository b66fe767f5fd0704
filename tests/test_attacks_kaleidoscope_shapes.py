"""Attacks on the shapes the kaleidoscope constructions and the matrix prover read: empty matrices,
targets smaller than the corner, resources a factorization is handed, huge sparse matrices. Each
ends in a clear ``SymverifyError`` or in a verdict that states what it is about."""

import pytest

from symverify.errors import ShapeError
from symverify.kaleidoscope import SparseMatrix, sparse_to_kaleidoscope, sparse_to_kaleidoscope_thm3


# ---- empty matrices ------------------------------------------------------------------------------------
@pytest.mark.parametrize("construct", [sparse_to_kaleidoscope, sparse_to_kaleidoscope_thm3])
def test_a_0x0_matrix_is_no_kaleidoscope(construct):
    """A ``0×0`` matrix was built as the ``1×1`` zero kaleidoscope, and ``verify_matrix`` then proved it
    equal to the ``0×0`` matrix: a corner of another shape than the matrix given."""
    with pytest.raises(ShapeError, match=r"expected a matrix with at least one row or column .* found a 0×0 SparseMatrix"):
        construct(SparseMatrix(0, 0, ()))


@pytest.mark.parametrize("construct", [sparse_to_kaleidoscope, sparse_to_kaleidoscope_thm3])
@pytest.mark.parametrize("rows, cols", [(0, 3), (2, 0)])
def test_a_matrix_with_no_rows_or_no_columns_is_the_zero_corner(construct, rows, cols):
    f = construct(SparseMatrix(rows, cols, ()))
    assert f.kaleidoscope.n == max(rows, cols)
