"""A grid reduced mod one prime (:meth:`symverify.kernel.provers.modular.BatchModRing.grid`): a grid of
``int`` cells over the fill 0 is built from its nonzero cells only; the array must equal the dense
conversion (every cell of :meth:`Grid.to_rows` mod ``p``), whatever the rectangles, overlaps,
explicit zeros and signs."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.modular import BatchModRing

P = (1 << 61) - 1


def _dense(grid: Grid, p: int) -> list[list[int]]:
    return [[v % p for v in row] for row in grid.to_rows()]  # type: ignore[operator]


@st.composite
def _grids(draw: Any, values: list[Any], fills: list[Any], side: int, count: int) -> Grid:
    """A ``rows × cols`` grid (each ≤ ``side``) with up to ``count`` cells drawn from ``values``."""
    rows, cols = draw(st.integers(0, side)), draw(st.integers(0, side))
    cells = {}
    if rows and cols:
        for _ in range(draw(st.integers(0, count))):
            i, j = draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))
            cells[(i, j)] = draw(st.sampled_from(values))
    return Grid.from_cells(rows, cols, cells, fill=draw(st.sampled_from(fills)))


def grids() -> st.SearchStrategy[Grid]:
    return _grids([0, 1, -1, 2, P, P + 3, -(P + 1), 7 << 70], [0, 0, 0, 3], 6, 12)


@settings(max_examples=120, deadline=None)
@given(grids())
def test_grid_mod_one_prime_equals_the_dense_conversion(grid: Grid) -> None:
    arr = BatchModRing([P], [{}]).grid(grid)
    assert arr.shape == (grid.rows, grid.cols)
    assert arr.tolist() == _dense(grid, P)
    assert all(type(v) is int for row in arr.tolist() for v in row)


def test_overlapping_rectangles_and_negative_cells() -> None:
    """A later rectangle over an earlier one and a negative cell: reduced as the dense matrix is."""
    g = Grid(3, 4, 0, ((0, 2, 0, 3, 5), (1, 3, 2, 4, -2), (0, 1, 0, 1, 0)))
    assert BatchModRing([11], [{}]).grid(g).tolist() == _dense(g, 11)


def mixed_grids() -> st.SearchStrategy[Grid]:
    return _grids([0, 1, -1, Fraction(1, 3), Fraction(-5, 2), sym("a") * 2 + 1, 7 << 70], [0, 0, 0, Fraction(0), 3], 5, 10)


@settings(max_examples=120, deadline=None)
@given(mixed_grids())
def test_grid_at_several_points_equals_each_points_dense_conversion(grid: Grid) -> None:
    """Several primes and parameter values (rationals and symbols): point ``t`` holds every cell of
    :meth:`Grid.to_rows` coerced into its own ring, zeros included."""
    primes, params = [11, 13, P], [{"a": 4}, {"a": 5}, {"a": 6}]
    ring = BatchModRing(primes, params)
    arr = ring.grid(grid)
    assert arr.shape == (3, grid.rows, grid.cols)
    for t, r in enumerate(ring.rings):
        assert arr[t].tolist() == [[r.coerce(v) for v in row] for row in grid.to_rows()]
