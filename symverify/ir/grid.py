"""Sparse storage for the matrices of a BaseConv layer (W, b1, h, b2).

Compiled models hold thousands of layers whose kernels are impulses and whose biases are masks.
A :class:`Grid` is an ``rows × cols`` matrix stored as a ``fill`` value painted over by
constant rectangles (later rectangles win): a mask "1 on rows [n, 2n)" is one rectangle, an
impulse one 1×1 rectangle, and a dense matrix one rectangle per cell. Grids are immutable and
hashable, so they can be shared between layers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from symverify.errors import IRError, ShapeError
from symverify.ir.scalar import Scalar, Sym, as_scalar, is_zero

__all__ = ["Grid", "Rect"]

Rect = tuple[int, int, int, int, Scalar]  # row_start, row_stop, col_start, col_stop, value
_EXACT = (int, Fraction, Sym)


@dataclass(frozen=True, slots=True)
class Grid:
    """An exact ``rows × cols`` matrix: ``fill`` everywhere, then each rectangle painted in order.

    >>> g = Grid.zeros(4, 2).paint(1, 3, 0, 2, 1)
    >>> g.to_rows()
    [[0, 0], [1, 1], [1, 1], [0, 0]]
    >>> g.nonzero_count()
    4
    """

    rows: int
    cols: int
    fill: Scalar = 0
    rects: tuple[Rect, ...] = ()

    def __post_init__(self) -> None:
        if not (isinstance(self.rows, int) and isinstance(self.cols, int)) or self.rows < 0 or self.cols < 0:
            raise ShapeError(f"a grid needs non-negative integer sizes; found {self.rows!r}×{self.cols!r}")
        if type(self.fill) not in _EXACT:
            object.__setattr__(self, "fill", as_scalar(self.fill, "grid fill"))
        fixed: list[Rect] | None = None
        for k, rect in enumerate(self.rects):
            if not isinstance(rect, tuple) or len(rect) != 5:
                raise IRError(f"grid rectangle {k}: expected (row_start, row_stop, col_start, col_stop, value), found {rect!r}")
            r0, r1, c0, c1, v = rect
            if not all(type(x) is int for x in (r0, r1, c0, c1)):
                raise IRError(f"grid rectangle {k}: expected int bounds, found {rect[:4]!r}")
            if type(v) not in _EXACT:  # normalise strings and numpy ints; refuse floats (as_scalar says why)
                fixed = list(self.rects[:k]) if fixed is None else fixed
                rect = (r0, r1, c0, c1, as_scalar(v, f"grid rectangle {k} value"))
            if fixed is not None:
                fixed.append(rect)
            if not (0 <= r0 < r1 <= self.rows and 0 <= c0 < c1 <= self.cols):
                raise ShapeError(
                    f"grid rectangle {k}: rows [{r0}, {r1}) × cols [{c0}, {c1}) do not fit in a "
                    f"{self.rows}×{self.cols} grid"
                )
        if fixed is not None:
            object.__setattr__(self, "rects", tuple(fixed))

    # ---- construction -------------------------------------------------------------------
    @staticmethod
    def zeros(rows: int, cols: int) -> Grid:
        return Grid(rows, cols, 0, ())

    @staticmethod
    def full(rows: int, cols: int, value: object) -> Grid:
        return Grid(rows, cols, as_scalar(value, "grid fill"), ())

    @staticmethod
    def identity(size: int) -> Grid:
        return Grid.from_cells(size, size, {(i, i): 1 for i in range(size)})

    @staticmethod
    def from_cells(rows: int, cols: int, cells: Mapping[tuple[int, int], object], fill: object = 0) -> Grid:
        """A grid with the given cells set (exact values) over ``fill``."""
        rects: list[Rect] = []
        for (i, j), v in sorted(cells.items()):
            rects.append((i, i + 1, j, j + 1, as_scalar(v, f"grid cell ({i}, {j})")))
        return Grid(rows, cols, as_scalar(fill, "grid fill"), tuple(rects))

    @staticmethod
    def symbolic(name: str, rows: int, cols: int) -> Grid:
        """A grid whose every cell is its own parameter ``name[i][j]`` (statements "for all weights").

        >>> str(Grid.symbolic("W", 2, 2).get(1, 0))
        'W[1][0]'
        """
        from symverify.ir.scalar import sym

        return Grid.from_cells(rows, cols, {(i, j): sym(f"{name}[{i}][{j}]") for i in range(rows) for j in range(cols)})

    @staticmethod
    def from_rows(values: Sequence[Sequence[object]], rows: int | None = None, cols: int | None = None) -> Grid:
        """A grid from a nested list; zero cells are not stored."""
        r = len(values) if rows is None else rows
        c = (len(values[0]) if values else 0) if cols is None else cols
        if len(values) != r:
            raise ShapeError(f"expected {r} rows, found {len(values)}")
        cells: dict[tuple[int, int], object] = {}
        for i, row in enumerate(values):
            if len(row) != c:
                raise ShapeError(f"row {i}: expected {c} entries, found {len(row)}")
            for j, v in enumerate(row):
                s = as_scalar(v, f"entry ({i}, {j})")
                if not is_zero(s):
                    cells[(i, j)] = s
        return Grid.from_cells(r, c, cells)

    def paint(self, r0: int, r1: int, c0: int, c1: int, value: object) -> Grid:
        """A copy with rows ``[r0, r1)`` × cols ``[c0, c1)`` set to ``value`` (empty ranges are no-ops)."""
        if r0 >= r1 or c0 >= c1:
            return self
        return Grid(self.rows, self.cols, self.fill, (*self.rects, (r0, r1, c0, c1, as_scalar(value, "grid value"))))

    def paint_cells(self, cells: Iterable[tuple[int, int, object]]) -> Grid:
        extra = tuple((i, i + 1, j, j + 1, as_scalar(v, f"grid cell ({i}, {j})")) for i, j, v in cells)
        return Grid(self.rows, self.cols, self.fill, self.rects + extra)

    # ---- access -----------------------------------------------------------------------
    def cells(self) -> dict[tuple[int, int], Scalar]:
        """Every cell whose value differs from ``fill`` (cached per grid)."""
        return dict(_cells(self))

    def get(self, i: int, j: int) -> Scalar:
        return _cells(self).get((i, j), self.fill)

    def to_rows(self) -> list[list[Scalar]]:
        out: list[list[Scalar]] = [[self.fill] * self.cols for _ in range(self.rows)]
        for (i, j), v in _cells(self).items():
            out[i][j] = v
        return out

    def nonzero(self) -> dict[tuple[int, int], Scalar]:
        """All nonzero cells (materialises the fill when it is nonzero)."""
        if is_zero(self.fill):
            return {k: v for k, v in _cells(self).items() if not is_zero(v)}
        return {(i, j): v for i, row in enumerate(self.to_rows()) for j, v in enumerate(row) if not is_zero(v)}

    def nonzero_count(self) -> int:
        if is_zero(self.fill):
            return sum(1 for v in _cells(self).values() if not is_zero(v))
        zeros = sum(1 for v in _cells(self).values() if is_zero(v))
        return self.rows * self.cols - zeros

    def is_zero(self) -> bool:
        return self.nonzero_count() == 0

    def values(self) -> Iterable[Scalar]:
        yield self.fill
        for rect in self.rects:
            yield rect[4]

    def transpose(self) -> Grid:
        return Grid(self.cols, self.rows, self.fill, tuple((c0, c1, r0, r1, v) for r0, r1, c0, c1, v in self.rects))

    def storage_size(self) -> int:
        """Number of stored rectangles (the memory footprint, not the matrix size)."""
        return len(self.rects)


@lru_cache(maxsize=4096)
def _cells(g: Grid) -> dict[tuple[int, int], Scalar]:
    out: dict[tuple[int, int], Scalar] = {}
    fill = g.fill
    for r0, r1, c0, c1, v in g.rects:
        for i in range(r0, r1):
            for j in range(c0, c1):
                if v == fill:  # scalars are canonical, so == is structural equality
                    out.pop((i, j), None)
                else:
                    out[(i, j)] = v
    return out

