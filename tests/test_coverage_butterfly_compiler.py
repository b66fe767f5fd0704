"""symverify.compiler.butterfly_to_baseconv: ``_restored`` on grids the concrete interpretation
does not build (a zero rectangle, overlapping rectangles, a nonzero fill, adjacent equal runs),
and ``factor_circuit``'s argument checks.

The oracle for ``_restored`` is :func:`symverify.compiler.layout.grid` on the grid's cells: the
storage must be exactly that one (same rectangles) and hold the same matrix. A fast path that
kept a zero rectangle, let an earlier paint win, or dropped the fill fails it.
"""

import pytest

from symverify.compiler.butterfly_to_baseconv import _canonical, _restored, factor_circuit
from symverify.compiler.layout import grid
from symverify.errors import CompileError
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym


def check(g: Grid) -> Grid:
    out = _restored(g)
    want = grid(g.rows, g.cols, g.nonzero())
    assert out.to_rows() == g.to_rows()
    assert (out.fill, tuple(out.rects)) == (0, tuple(want.rects))
    assert _canonical(tuple(out.rects))
    return out


@pytest.mark.parametrize("g", [
    # _restored: a zero rectangle painted over a nonzero one (it erases cells)
    Grid.zeros(4, 4).paint(0, 3, 0, 2, 5).paint(1, 2, 0, 2, 0),
    # _restored and _canonical: overlapping rectangles, the later paint wins
    Grid.zeros(4, 2).paint(0, 2, 0, 1, 5).paint(1, 3, 0, 1, 7),
    Grid.zeros(4, 4).paint(0, 3, 0, 3, 2).paint(2, 4, 1, 4, sym("a")),
    # _restored: a nonzero fill is not rectangles on zero
    Grid.full(3, 2, 4).paint(1, 2, 0, 1, 0),
    # adjacent equal runs in one column merge into one rectangle
    Grid.zeros(4, 1).paint(0, 2, 0, 1, 3).paint(2, 4, 0, 1, 3),
])
def test_restored_is_the_layout_storage_of_the_same_matrix(g):
    """_restored: the storage of layout.grid for the same cells, whatever rectangles g was painted with."""
    check(g)


def test_canonical_refuses_adjacent_equal_runs_and_overlaps():
    """_canonical: two runs of one column that overlap, or touch with equal values, are not the
    canonical storage; touching runs of different values are."""
    assert not _canonical(((0, 2, 0, 1, 3), (1, 3, 0, 1, 4)))
    assert not _canonical(((0, 2, 0, 1, 3), (2, 3, 0, 1, 3)))
    assert _canonical(((0, 2, 0, 1, 3), (2, 3, 0, 1, 4)))


@pytest.mark.parametrize("d, match", [(0, "expected d to be a positive int, found 0 of type int"),
                                      (-2, "expected d to be a positive int, found -2 of type int"),
                                      (3, "expected d to divide the factor size 4, found d = 3"),
                                      (True, "expected d to be a positive int, found True of type bool"),
                                      (2.0, "expected d to be a positive int, found 2.0 of type float")])
def test_factor_circuit_refuses_a_d_that_does_not_divide_the_size(d, match):
    """factor_circuit: d must be a positive int dividing the factor size."""
    f = ButterflyFactor(4, 1, (1, 1), (0, 0), (0, 0), (1, 1))
    with pytest.raises(CompileError, match="factor_circuit: " + match):
        factor_circuit(f, d)


def test_factor_circuit_refuses_a_non_factor():
    """factor_circuit: only a ButterflyFactor has pairs to wire."""
    with pytest.raises(CompileError, match="expected a ButterflyFactor, found list"):
        factor_circuit([1, 2], 1)  # type: ignore[arg-type]
