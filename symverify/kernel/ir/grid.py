"""Sparse storage for the matrices of a BaseConv layer (W, b1, h, b2).

Compiled models hold thousands of layers whose kernels are impulses and whose biases are masks.
A :class:`Grid` is an ``rows × cols`` matrix stored as a ``fill`` value painted over by
constant rectangles (later rectangles win): a mask "1 on rows [n, 2n)" is one rectangle, an
impulse one 1×1 rectangle, and a dense matrix one rectangle per cell. Grids are immutable and
hashable, so they can be shared between layers.

Sizes are never expanded blindly (:mod:`symverify.ir.limits`): :meth:`Grid.nonzero_count` and
:meth:`Grid.is_zero` work on the rectangles (a 10^5×10^5 mask costs one block, not 10^10 cells),
:meth:`Grid.get` scans the rectangles when they are too large to expand, and the methods that
return one entry per cell (:meth:`Grid.cells`, :meth:`Grid.nonzero`, :meth:`Grid.to_rows`,
:meth:`Grid.identity`, :meth:`Grid.symbolic`) raise :class:`~symverify.errors.LimitError` beyond
``MAX_PAINT`` expanded or ``MAX_CELLS`` dense cells.

A grid read from a float array (:meth:`Grid.from_array`, a trained layer's filter) keeps its cells
as a :class:`~symverify.kernel.ir.cellarray.CellArray` in place of the tuple of rectangles: the same
rectangles (1×1, row-major, each value the exact dyadic rational of its float), stored as numpy
arrays, so building, counting, reading a cell and converting to a tensor cost no Python per cell.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import is_, itemgetter
from typing import Generic, TypeVar

from symverify.errors import IRError, LimitError, ShapeError
from symverify.ir import limits
from symverify.ir.bigint import field_repr, safe_repr, show_int
from symverify.kernel.ir.cellarray import CellArray, refuse_masked
from symverify.kernel.ir.scalar import (
    Scalar,
    all_int,
    as_index,
    as_scalar,
    is_canonical,
    is_zero,
    param_names,
    plain_fields,
    plain_items,
    plain_str,
    scalars_held,
    unordered,
)

__all__ = ["Grid", "Rect"]

Rect = tuple[int, int, int, int, Scalar]  # row_start, row_stop, col_start, col_stop, value


def _sequence(xs: object, what: str) -> None:
    """Refuse rows that are not ordered sequences: a dict reads as its keys, a set in no order, a str as characters."""
    if unordered(xs, sized=True):
        raise IRError(f"Grid.from_rows: {what}: expected a sequence, found {type(xs).__name__}")


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
    rects: tuple[Rect, ...] | CellArray = ()

    def __repr__(self) -> str:
        return field_repr(self)  # the generated repr, with huge integers abbreviated (never fails)

    def __post_init__(self) -> None:
        plain_fields(self, "rows", "cols")
        for name in ("rows", "cols"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ShapeError(f"a grid needs non-negative integer sizes; found {name} = {safe_repr(v)}")
        fill = self.fill
        if not is_canonical(fill):  # canonical: Fraction(3) is 3, Fraction(2, 4, _normalize=False) is 1/2
            object.__setattr__(self, "fill", as_scalar(fill, "grid fill"))
        rects = self.rects
        if isinstance(rects, CellArray):
            if not (type(self.fill) is int and self.fill == 0):
                raise IRError(f"a grid stored as a cell array needs fill 0, found {safe_repr(self.fill)}")
            rects.check_fits(self.rows, self.cols, "grid cell array")
            return
        if unordered(rects):  # rectangles are painted in order: a set has none, a dict would read as its keys
            raise IRError(f"grid rectangles: expected a sequence of rectangles (painted in order), found {type(rects).__name__}")
        if type(rects) is not tuple:
            rects = tuple(plain_items(rects))  # a tuple or list subclass as the items it stores
            object.__setattr__(self, "rects", rects)
        fixed: list[Rect] | None = None
        for k, rect in enumerate(rects):
            plain = type(rect) is tuple
            if not plain and isinstance(rect, tuple):
                # a tuple subclass (a namedtuple) becomes the plain tuple of its stored items: one whose
                # indexing or iteration is overridden would show the encoding (which indexes) one value
                # and the interpreter (which iterates) another
                rect = tuple(tuple.__iter__(rect))  # type: ignore[assignment]
            if not isinstance(rect, tuple) or len(rect) != 5:
                raise IRError(f"grid rectangle {k}: expected (row_start, row_stop, col_start, col_stop, value), found {safe_repr(rect)}")
            r0, r1, c0, c1, v = rect
            if not (type(r0) is int and type(r1) is int and type(c0) is int and type(c1) is int):
                # an int subclass or numpy integer as its value, as paint reads a bound; a bool or float is refused
                if None in (bounds := tuple(map(as_index, (r0, r1, c0, c1)))):
                    raise IRError(f"grid rectangle {k}: expected int bounds, found {safe_repr(rect[:4])}")
                r0, r1, c0, c1 = bounds  # type: ignore[assignment]
                plain = False
            if not (plain and is_canonical(v)):
                # normalise strings, numpy ints and integral Fractions (equal grids then hold equal
                # value objects: they share cached cell maps); refuse floats (as_scalar says why)
                fixed = list(rects[:k]) if fixed is None else fixed
                rect = (r0, r1, c0, c1, v if is_canonical(v) else as_scalar(v, f"grid rectangle {k} value"))
            if fixed is not None:
                fixed.append(rect)
            if not (0 <= r0 < r1 <= self.rows and 0 <= c0 < c1 <= self.cols):
                raise ShapeError(
                    f"grid rectangle {k}: rows [{show_int(r0)}, {show_int(r1)}) × cols [{show_int(c0)}, {show_int(c1)}) "
                    f"do not fit in a {show_int(self.rows)}×{show_int(self.cols)} grid"
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
        """The ``size×size`` identity (refused beyond ``MAX_CELLS`` rows: it stores one rectangle per row)."""
        size = Grid(size, size).rows  # ShapeError unless the size is a non-negative int; a numpy integer as its value
        limits.check(size, "MAX_CELLS", f"Grid.identity({show_int(size)})")
        return Grid.from_cells(size, size, {(i, i): 1 for i in range(size)})

    @staticmethod
    def from_cells(rows: int, cols: int, cells: Mapping[tuple[int, int], object], fill: object = 0) -> Grid:
        """A grid with the given cells set (exact values) over ``fill``; a key that is not an
        ``(i, j)`` pair is an :class:`IRError`. A ``dict`` subclass is read as the items it stores,
        a key as the plain ints it holds (its own ``items()``, iteration or ``<`` could say otherwise);
        two keys naming one cell (an int subclass hashing otherwise than its value) are an :class:`IRError`,
        and so is ``cells`` not being a mapping (a list of pairs)."""
        if not isinstance(cells, Mapping):
            raise IRError(f"Grid.from_cells: expected a mapping {{(i, j): value}}, found {type(cells).__name__} {safe_repr(cells, 40)}")
        rects: list[Rect] = []
        odd = False
        for key, v in plain_items(cells).items():
            if not (type(key) is tuple and len(key) == 2 and type(key[0]) is int and type(key[1]) is int):
                key, odd = _cell_key(key, "Grid.from_cells"), True
            i, j = key
            rects.append((i, i + 1, j, j + 1, as_scalar(v, f"grid cell ({i}, {j})")))
        if odd and len({r[:4] for r in rects}) != len(rects):
            raise IRError("Grid.from_cells: two keys name the same cell")
        rects.sort(key=_POSITION)  # row-major; the positions are distinct plain ints
        return Grid(rows, cols, as_scalar(fill, "grid fill"), tuple(rects))

    @staticmethod
    def symbolic(name: str, rows: int, cols: int) -> Grid:
        """A grid whose every cell is its own parameter ``name[i][j]`` (statements "for all weights").

        >>> str(Grid.symbolic("W", 2, 2).get(1, 0))
        'W[1][0]'
        """
        from symverify.kernel.ir.scalar import sym

        g = Grid(rows, cols)  # ShapeError unless both sizes are non-negative ints (a float gave TypeError)
        if not isinstance(name, str):
            raise IRError(f"Grid.symbolic: expected a str name, found {type(name).__name__} {safe_repr(name, 40)}")
        name, rows, cols = plain_str(name), g.rows, g.cols  # plain values: the sizes' and the name's own methods are not read
        limits.check(rows * cols, "MAX_CELLS", f"Grid.symbolic({name!r}, {show_int(rows)}, {show_int(cols)})")
        return Grid.from_cells(rows, cols, {(i, j): sym(f"{name}[{i}][{j}]") for i in range(rows) for j in range(cols)})

    @staticmethod
    def from_array(a: object, where: str = "array") -> Grid:
        """The exact grid of a 2-d float or integer array (numpy, or anything with ``.numpy()``):
        each float is read as the dyadic rational it is (``Fraction(x)``), in bulk, without one
        Python object per cell; zeros (±0) are not stored; NaN and ±inf raise :class:`IRError`, and so do a
        masked array (its mask would be dropped), a meta tensor (no values) and a sparse tensor.

        >>> import numpy as np
        >>> Grid.from_array(np.array([[0.5, 0.0], [0.0, -3.0]], dtype=np.float32)).to_rows()
        [[Fraction(1, 2), 0], [0, -3]]
        """
        import numpy as np

        refuse_masked(a, where)
        if hasattr(a, "detach"):  # a torch tensor (bfloat16 has no numpy dtype: widened, exactly)
            if getattr(a, "is_meta", False):
                raise IRError(f"{where}: expected values, found a meta tensor of shape {tuple(a.shape)} (it has no data)")  # type: ignore[attr-defined]
            if str(getattr(a, "layout", "torch.strided")) != "torch.strided":
                raise IRError(f"{where}: expected a dense tensor, found a {a.layout} tensor; convert it first (a.to_dense())")  # type: ignore[attr-defined]
            t = a.detach().cpu()  # type: ignore[attr-defined]
            arr = (t.double() if t.is_floating_point() else t).numpy()
        else:
            arr = np.asarray(a)
        if arr.ndim != 2:
            raise ShapeError(f"{where}: expected a 2-d array, found shape {arr.shape}")
        if arr.dtype.kind == "f" and arr.dtype.itemsize < 8:
            arr = arr.astype(np.float64)  # float16/float32 → float64 is exact
        return Grid(int(arr.shape[0]), int(arr.shape[1]), 0, CellArray.from_dense(arr, where=where))

    @staticmethod
    def from_rows(values: Sequence[Sequence[object]], rows: int | None = None, cols: int | None = None) -> Grid:
        """A grid from a nested list (or a 2-d integer array: numpy's too); zero cells are not stored.
        ``rows`` and ``cols``, when given, are non-negative ints the rows and their entries must count
        (else a :class:`ShapeError`), as must every row anything but a sequence (an :class:`IRError`).

        >>> Grid.from_rows([[0, "1/2"], [3, 0]]).nonzero_count()
        2
        """
        kind = getattr(getattr(values, "dtype", None), "kind", "")
        if kind == "f":
            raise IRError(f"Grid.from_rows: found a float array (dtype {values.dtype}), not exact values; "  # type: ignore[attr-defined]
                          "Grid.from_array reads each float as the dyadic rational it is")
        _sequence(values, "rows")
        values = plain_items(values)  # a list or tuple subclass as the rows it stores: read for its length, then its items
        given: list[int | None] = []
        for name, size in (("rows", rows), ("cols", cols)):
            i = None if size is None else as_index(size)
            if size is not None and (i is None or i < 0):
                raise ShapeError(f"Grid.from_rows: {name}: expected a non-negative int (or None: counted), found {safe_repr(size, 40)}")
            given.append(i)
        if cols is None and len(values) > 0:
            _sequence(values[0], "row 0")
        nr, nc = given
        r = len(values) if nr is None else nr
        c = (len(plain_items(values[0])) if len(values) > 0 else 0) if nc is None else nc
        if len(values) != r:
            raise ShapeError(f"Grid.from_rows: expected {show_int(r)} rows, found {len(values)}")
        cells: dict[tuple[int, int], object] = {}
        for i, row in enumerate(values):
            _sequence(row, f"row {i}")
            row = plain_items(row)
            if len(row) != c:
                raise ShapeError(f"Grid.from_rows: row {i}: expected {show_int(c)} entries, found {len(row)}")
            for j, v in enumerate(row):
                s = as_scalar(v, f"entry ({i}, {j})")
                if not is_zero(s):
                    cells[(i, j)] = s
        return Grid.from_cells(r, c, cells)

    def paint(self, r0: int, r1: int, c0: int, c1: int, value: object) -> Grid:
        """A copy with rows ``[r0, r1)`` × cols ``[c0, c1)`` set to ``value`` (empty ranges are no-ops).
        A bound is an integer (an int subclass or numpy integer read by its value, as :meth:`paint_cells`
        and :meth:`from_cells` read a cell); a bool, a float or anything else is an :class:`IRError`,
        an empty range included."""
        if not (type(r0) is int and type(r1) is int and type(c0) is int and type(c1) is int):
            # an int subclass as its value: its own comparisons could call the range empty (the paint then dropped)
            bounds = tuple(map(as_index, (r0, r1, c0, c1)))
            if None in bounds:
                raise IRError(f"Grid.paint: expected int bounds, found {safe_repr((r0, r1, c0, c1))}")
            r0, r1, c0, c1 = bounds  # type: ignore[assignment]
        if r0 >= r1 or c0 >= c1:
            return self
        return Grid(self.rows, self.cols, self.fill, (*self.rects, (r0, r1, c0, c1, as_scalar(value, "grid value"))))

    def paint_cells(self, cells: Iterable[tuple[int, int, object]]) -> Grid:
        """A copy with each ``(i, j, value)`` of ``cells`` painted in order; anything but such a triple is an
        :class:`IRError` (subclasses of tuple, list and int are read as what they store). A 2-d integer
        array (numpy's) of shape ``(k, 3)`` is ``k`` triples, one a row, as :meth:`from_rows` reads an
        integer array; a float array is refused (its values are not exact, :meth:`from_array` reads floats)."""
        if unordered(cells):
            raise IRError(f"Grid.paint_cells: expected a sequence of (i, j, value), found {type(cells).__name__}")
        shape, kind = getattr(cells, "shape", None), getattr(getattr(cells, "dtype", None), "kind", "")
        if kind:  # a numpy array: its rows are arrays, read as the Python values they hold
            if kind == "f" or len(shape) != 2 or shape[1] != 3:  # type: ignore[arg-type, index]
                raise IRError(f"Grid.paint_cells: expected (i, j, value) triples or an integer array of shape (k, 3), "
                              f"found an array of shape {tuple(shape)} and dtype {cells.dtype}")  # type: ignore[arg-type, attr-defined]
            cells = cells.tolist()  # type: ignore[attr-defined]
        triples = []
        for c in plain_items(cells):
            c = plain_items(c)
            if not isinstance(c, (tuple, list)) or len(c) != 3:
                raise IRError(f"Grid.paint_cells: expected (i, j, value) triples, found {safe_repr(c, 60)}")
            triples.append((*_cell_key(c[:2], "Grid.paint_cells"), c[2]))
        extra = tuple((i, i + 1, j, j + 1, as_scalar(v, f"grid cell ({i}, {j})")) for i, j, v in triples)
        return Grid(self.rows, self.cols, self.fill, self.rects + extra)

    # ---- access -----------------------------------------------------------------------
    def cells(self) -> dict[tuple[int, int], Scalar]:
        """Every cell whose value differs from ``fill`` (cached per grid).

        Raises:
            LimitError: the rectangles cover more than ``MAX_PAINT`` cells in all.
        """
        if isinstance(self.rects, CellArray):
            return dict(_array_cells(self))
        return dict(_cells(self))

    def get(self, i: int, j: int) -> Scalar:
        """The value of cell ``(i, j)`` (``fill`` outside every rectangle); a cell outside the
        ``rows × cols`` grid (negative indices included) is a :class:`ShapeError`. An integer index
        (an int subclass, a numpy integer) is read by its value, as :meth:`paint_cells` reads a cell."""
        if not (type(i) is int and type(j) is int):
            i, j = (i if (x := as_index(i)) is None else x), (j if (y := as_index(j)) is None else y)
        if not (type(i) is int and type(j) is int and 0 <= i < self.rows and 0 <= j < self.cols):
            raise ShapeError(f"Grid.get: expected a cell of the {show_int(self.rows)}×{show_int(self.cols)} grid "
                             f"(0 ≤ i < rows, 0 ≤ j < cols), found ({safe_repr(i, 40)}, {safe_repr(j, 40)})")
        if isinstance(self.rects, CellArray):
            v = self.rects.get(i, j)
            return self.fill if v is None else v
        try:
            cells = _cells(self)
        except LimitError:  # too large to expand: the last rectangle that holds the cell wins
            for r0, r1, c0, c1, v in reversed(self.rects):
                if r0 <= i < r1 and c0 <= j < c1:
                    return v
            return self.fill
        return cells.get((i, j), self.fill)

    def to_rows(self) -> list[list[Scalar]]:
        """The dense matrix as a list of rows (refused beyond ``MAX_CELLS`` cells)."""
        limits.check(self.rows * self.cols, "MAX_CELLS", f"Grid.to_rows of a {show_int(self.rows)}×{show_int(self.cols)} grid")
        out: list[list[Scalar]] = [[self.fill] * self.cols for _ in range(self.rows)]
        for (i, j), v in (_array_cells(self) if isinstance(self.rects, CellArray) else _cells(self)).items():
            out[i][j] = v
        return out

    def nonzero(self) -> dict[tuple[int, int], Scalar]:
        """All nonzero cells (materialises the fill when it is nonzero: refused beyond ``MAX_CELLS``)."""
        if isinstance(self.rects, CellArray):  # fill 0, every stored cell nonzero
            return dict(_array_cells(self))
        if is_zero(self.fill):  # _cells keeps exactly the cells unequal to the fill 0: the nonzero ones
            return dict(_cells(self))
        return {(i, j): v for i, row in enumerate(self.to_rows()) for j, v in enumerate(row) if not is_zero(v)}

    def nonzero_count(self) -> int:
        """The number of nonzero cells, computed from the rectangles (never cell by cell).

        Raises:
            LimitError: the rectangles overlap so much that resolving them needs more than
                ``MAX_PAINT`` steps (thousands of nested rectangles).
        """
        if isinstance(self.rects, CellArray):  # fill 0, every stored cell nonzero
            return len(self.rects)
        return _nonzero_count(self)

    def is_zero(self) -> bool:
        return self.nonzero_count() == 0

    def params(self) -> frozenset[str]:
        """The names of the symbolic weights in the grid (a cell array's float cells have none)."""
        if isinstance(self.rects, CellArray):
            return param_names([self.fill]) | self.rects.params()
        return param_names(self.values())

    def values(self) -> Iterable[Scalar]:
        yield self.fill
        for rect in self.rects:
            yield rect[4]

    def transpose(self) -> Grid:
        if isinstance(self.rects, CellArray):
            return Grid(self.cols, self.rows, self.fill, self.rects.transpose())
        return Grid(self.cols, self.rows, self.fill, tuple((c0, c1, r0, r1, v) for r0, r1, c0, c1, v in self.rects))

    def storage_size(self) -> int:
        """Number of stored rectangles (the memory footprint, not the matrix size)."""
        return len(self.rects)


_POSITION = itemgetter(0, 2)
"""A rectangle's top-left cell ``(row_start, col_start)``: the order of :meth:`Grid.from_cells`."""


def _cell_key(key: object, where: str) -> tuple[int, int]:
    """``key`` as a cell ``(i, j)`` of plain ints: a tuple or list (``plain_items``) of two integers
    (numpy's too, read by :func:`as_index`: an int subclass by its value; a bool or float is no index)."""
    if type(key) is tuple and len(key) == 2 and type(key[0]) is int and type(key[1]) is int:
        return key  # type: ignore[return-value]  # the common case, already plain
    key = plain_items(key)
    ij = tuple(map(as_index, key)) if isinstance(key, (tuple, list)) and len(key) == 2 else (None,)
    if None in ij:
        raise IRError(f"{where}: expected a cell (i, j) of two ints, found {safe_repr(key, 60)}")
    return ij  # type: ignore[return-value]


def _array_cells(g: Grid) -> dict[tuple[int, int], Scalar]:
    """The cells of a cell-array grid (fill 0, distinct nonzero cells), under the same limit as :func:`_cells`."""
    limits.check(len(g.rects), "MAX_PAINT",
                 f"the cells of a {show_int(g.rows)}×{show_int(g.cols)} grid with {len(g.rects)} rectangles")
    return {(r0, c0): v for r0, _, c0, _, v in g.rects}


_V = TypeVar("_V")
_VALUE = itemgetter(4)


class _ByContent(Generic[_V]):
    """The results of a pure function of a grid's content, kept for the last ``size`` contents and
    shared by equal grids (compiled models hold many equal grids).

    An entry is found by the content ``(rows, cols, fill, rects)`` as it was read when the entry was
    stored (never the grid object, whose fields ``object.__setattr__`` can rewrite after it was
    stored: a key that changes under the table would be found by content it no longer has), and it
    is a hit only while the values it holds that could change in place (each ``Fraction`` or
    :class:`~symverify.kernel.ir.scalar.Sym`, with its fields: :func:`~symverify.kernel.ir.scalar.scalars_held`)
    are the very objects of the lookup's content and unchanged. So a hit is the result for the
    content the grid holds now: an ``int`` ``5 + (2^61 − 1)`` hashes as ``5``, and a grid rewritten
    from one to the other (or a ``Fraction`` rewritten in place) is computed again, never handed
    the other content's cells, nor is a grid equal to the rewritten one. (The lookup of the very
    rectangle tuple and fill an entry of plain ints was computed from skips the scan of the values:
    a tuple of ints cannot change.)"""

    def __init__(self, size: int) -> None:
        self.size = size
        # oldest first; evicted by popitem, which finds an entry by the hash stored with it: a key whose
        # fraction was rewritten in place hashes otherwise now, and a lookup by key would miss it
        self._entries: OrderedDict[tuple[object, ...], tuple[object, object, list[object], _V]] = OrderedDict()
        self._lock = threading.Lock()  # held by every write; a read is one dict lookup

    def __call__(self, g: Grid, compute: Callable[[Grid], _V]) -> _V:
        rects, fill = g.rects, g.fill
        key = (g.rows, g.cols, fill, rects)
        hit = self._entries.get(key)
        if hit is not None and hit[0] is rects and hit[1] is fill and not hit[2]:
            return hit[3]  # the very tuple of plain ints it was computed from (a tuple and an int cannot change)
        if type(fill) is int and (type(rects) is not tuple or all_int(map(_VALUE, rects))):
            held: list[object] = []  # plain ints only: nothing that can change in place
        else:
            held = scalars_held([fill, *map(_VALUE, rects)] if type(rects) is tuple else [fill])
        if hit is not None and len(hit[2]) == len(held) and all(map(is_, hit[2], held)):
            return hit[3]
        value = compute(g)
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (rects, fill, held, value)
            gone = [self._entries.popitem(last=False) for _ in range(len(self._entries) - self.size)]
        del gone  # released after the lock
        return value


_CELLS: _ByContent[dict[tuple[int, int], Scalar]] = _ByContent(4096)
_COUNTS: _ByContent[int] = _ByContent(4096)


def _cells(g: Grid) -> dict[tuple[int, int], Scalar]:
    """Every cell of the rectangles ``g`` holds whose value differs from its fill (kept per content: :class:`_ByContent`)."""
    return _CELLS(g, _paint)


def _paint(g: Grid) -> dict[tuple[int, int], Scalar]:
    area = sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1, _ in g.rects)
    limits.check(area, "MAX_PAINT",
                 f"the cells of a {show_int(g.rows)}×{show_int(g.cols)} grid with {len(g.rects)} rectangles")
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


def _nonzero_count(g: Grid) -> int:
    """:func:`_count` of ``g``, kept per content (:class:`_ByContent`)."""
    return _COUNTS(g, _count)


def _count(g: Grid) -> int:
    """Nonzero cells by coordinate compression: the rectangles' edges cut the grid into blocks whose
    cells all hold one value; each block is resolved once, from the last rectangle down."""
    if not g.rects:
        return 0 if is_zero(g.fill) else g.rows * g.cols
    from bisect import bisect_left

    rs = sorted({r for rect in g.rects for r in rect[:2]})
    cs = sorted({c for rect in g.rects for c in rect[2:4]})
    spans = [(bisect_left(rs, r0), bisect_left(rs, r1), bisect_left(cs, c0), bisect_left(cs, c1), v)
             for r0, r1, c0, c1, v in g.rects]
    work = sum((a1 - a0) * (b1 - b0) for a0, a1, b0, b1, _ in spans)
    limits.check(work, "MAX_PAINT", f"counting the nonzero cells of a {show_int(g.rows)}×{show_int(g.cols)} grid "
                 f"with {len(g.rects)} overlapping rectangles")
    seen: set[tuple[int, int]] = set()
    zero_fill = is_zero(g.fill)
    count = 0 if zero_fill else g.rows * g.cols
    for a0, a1, b0, b1, v in reversed(spans):
        differs = is_zero(v) != zero_fill
        for a in range(a0, a1):
            for b in range(b0, b1):
                if (a, b) in seen:
                    continue
                seen.add((a, b))
                if differs:
                    area = (rs[a + 1] - rs[a]) * (cs[b + 1] - cs[b])
                    count += area if zero_fill else -area
    return count
