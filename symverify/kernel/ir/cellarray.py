"""Grid cells stored as arrays: exact dyadic rationals read from float arrays in bulk.

A trained layer's filter holds a million distinct weights; one Python rectangle and one
``Fraction`` per weight make a conversion take minutes. A :class:`CellArray` is the rectangle list
of a :class:`~symverify.kernel.ir.grid.Grid` whose cells are 1×1 and pairwise distinct, kept as numpy
arrays: row and column indices and a float64 value per cell. Every finite float64 ``x`` *is* a
dyadic rational ``m·2^e`` (``m`` an odd integer below ``2^53``) and the cell holds exactly that
rational, never a rounding of it (:func:`dyadic_parts` recovers ``m`` and ``e`` for a whole array with
``numpy.frexp``; :func:`exact_scalars` gives the ``int``/``Fraction`` values). Cells whose value
is not a float64 (``k + 1`` for a float64 ``k`` below ``2^-52``, a product of two 53-bit mantissas,
a symbolic weight) are kept beside the arrays as exact scalars (``extra``), so nothing is rounded.

As a sequence a CellArray is exactly the tuple of rectangles ``(i, i + 1, j, j + 1, value)`` of its
cells in row-major order, the tuple :meth:`Grid.from_cells` builds from the same cells: it compares
equal to that tuple and hashes like it. Code that walks ``grid.rects`` gets every rectangle (one
Python object per cell); the hot paths (:meth:`Grid.get`, :meth:`Grid.nonzero_count`, the
executor's dense tensors, :func:`symverify.executors.to_torch`) read the arrays instead.

numpy is imported when a CellArray is built or read, never by ``import symverify``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any, overload

from symverify.errors import IRError, ShapeError
from symverify.ir.bigint import safe_repr, show_int
from symverify.kernel.ir.scalar import Scalar, as_scalar, is_zero, param_names

__all__ = ["CellArray", "dyadic_parts", "exact_scalars", "refuse_masked"]

Rect = tuple[int, int, int, int, Scalar]
_CHUNK = 1 << 16


def dyadic_parts(a: Any) -> tuple[Any, Any]:
    """``(m, e)`` int64 arrays with ``a == m·2^e`` exactly, ``m`` odd (``m = e = 0`` where ``a`` is 0).

    ``numpy.frexp`` splits each finite float into ``f·2^k`` with ``f ∈ [1/2, 1)`` (subnormals
    included); ``f·2^53`` is an integer below ``2^53``, and its trailing zero bits move into the
    exponent. ``a`` must be finite (callers check).

    >>> import numpy as np
    >>> m, e = dyadic_parts(np.array([0.75, -6.0, 0.0, 5e-324]))
    >>> m.tolist(), e.tolist()
    ([3, -3, 0, 1], [-2, 1, 0, -1074])
    """
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    f, k = np.frexp(a)
    m = np.ldexp(f, 53).astype(np.int64)  # exact: |f·2^53| < 2^53
    e = k.astype(np.int64) - 53
    low = m & -m  # the lowest set bit (0 for m = 0)
    tz = np.where(m != 0, np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1, 0)
    m = m >> tz
    e = np.where(m != 0, e + tz, 0)
    return m, e


def exact_scalars(a: Any) -> list[int | Fraction]:
    """The exact rationals of a finite float array, in order: ``int`` where integral, else ``Fraction``.

    Integers below ``2^63`` come out of one numpy conversion; the rest are built from the float's
    own numerator/denominator pair (``float.as_integer_ratio``, exact), so nothing is rounded.

    >>> import numpy as np
    >>> exact_scalars(np.array([2.0, -0.5, 0.1]))
    [2, Fraction(-1, 2), Fraction(3602879701896397, 36028797018963968)]
    """
    import numpy as np

    a = np.asarray(a, dtype=np.float64).ravel()
    out: list[int | Fraction] = [0] * len(a)
    small = (a == np.floor(a)) & (np.abs(a) < 2.0**62)
    idx = np.flatnonzero(small)
    for k, v in zip(idx.tolist(), a[idx].astype(np.int64).tolist()):
        out[k] = v
    rest = np.flatnonzero(~small)
    for k, x in zip(rest.tolist(), a[rest].tolist()):
        n, d = x.as_integer_ratio()
        out[k] = n if d == 1 else Fraction(n, d)
    return out


def _exact_float64(v: Any, r: Any, c: Any, where: str) -> Any:
    """``v`` as float64, refusing a wider float (``longdouble``) that float64 would round."""
    import numpy as np

    w = v.astype(np.float64, copy=False)  # no copy yet: the constructor keeps a read-only copy (_read_only)
    if v.dtype.kind == "f" and v.dtype.itemsize > 8:
        with np.errstate(invalid="ignore"):
            lost = np.flatnonzero((w.astype(v.dtype) != v) & np.isfinite(v))
        if len(lost):
            k = int(lost[0])
            raise IRError(f"{where}: cell ({int(r[k])}, {int(c[k])}) is the {v.dtype} {v[k]!r}, which float64 would round; "
                          "expected values exact in float64 (pass others as exact scalars)")
    return w


def refuse_masked(a: Any, where: str) -> None:
    """Refuse a numpy masked array (:class:`IRError`): ``numpy.asarray`` drops its mask, so its masked
    entries would be read as the values under the mask (the executors' inputs follow the same rule)."""
    import numpy as np

    if isinstance(a, np.ma.MaskedArray):
        raise IRError(f"{where}: a masked array; its masked entries would be read as the values under the mask: "
                      "fill them first (a.filled(value))")


def _read_only(a: Any) -> Any:
    """A read-only copy of the 1-d array ``a`` whose memory is a ``bytes`` object, so that its
    write flag cannot be turned back on: ``cells.vals[0] = 2.0**61`` raises instead of changing a
    weight behind the caches that hold the grid by identity (fingerprint, bounds, plans)."""
    import numpy as np

    return np.frombuffer(np.ascontiguousarray(a).tobytes(), dtype=a.dtype)


class CellArray(Sequence[Rect]):
    """Distinct nonzero cells as arrays, read as 1×1 rectangles in row-major order.

    ``rows``, ``cols``: int64 index arrays; ``vals``: float64 values (finite, nonzero, each the
    exact dyadic rational it is); ``extra``: further cells ``(i, j, value)`` with exact scalars
    (distinct from the array cells, nonzero). Built with :meth:`from_dense` or :meth:`from_parts`.

    Immutable, like the grid that holds it: the arrays are read-only copies (their memory is a
    ``bytes`` object, so the write flag cannot be set again) and assigning an attribute raises
    :class:`IRError`. A weight changed in place would otherwise be evaluated while the caches that
    hold the grid by identity (its fingerprint, bounds and plans) still describe the old one.

    >>> import numpy as np
    >>> cells = CellArray.from_dense(np.array([[0.0, 0.5], [3.0, 0.0]]))
    >>> list(cells)
    [(0, 1, 1, 2, Fraction(1, 2)), (1, 2, 0, 1, 3)]
    >>> cells == ((0, 1, 1, 2, Fraction(1, 2)), (1, 2, 0, 1, 3))
    True
    """

    __slots__ = ("_hash", "_order", "cols", "extra", "rows", "vals")

    rows: Any
    cols: Any
    vals: Any
    extra: tuple[tuple[int, int, Scalar], ...]
    _hash: int | None
    _order: Any

    def __init__(self, rows: Any, cols: Any, vals: Any, extra: Sequence[tuple[int, int, object]] = (), *,
                 where: str = "cell array") -> None:
        import numpy as np

        for x in (rows, cols, vals):
            refuse_masked(x, where)
        r, c, v = (np.ascontiguousarray(x) for x in (rows, cols, vals))
        if not (r.ndim == c.ndim == v.ndim == 1 and len(r) == len(c) == len(v)):
            raise ShapeError(f"{where}: expected three 1-d arrays of one length (rows, cols, values), "
                             f"found shapes {r.shape}, {c.shape}, {v.shape}")
        if r.dtype.kind not in "iu" or c.dtype.kind not in "iu":
            raise IRError(f"{where}: expected integer row and column indices, found {r.dtype} and {c.dtype}")
        if v.dtype.kind not in "fiu":
            raise IRError(f"{where}: expected float or integer values, found {v.dtype}")
        r, c = r.astype(np.int64, copy=False), c.astype(np.int64, copy=False)  # copied once, by _read_only
        if v.dtype.kind in "iu":
            big = np.flatnonzero(np.abs(v.astype(np.float64)) >= 2.0**53)
            if len(big):
                k = int(big[0])
                raise IRError(f"{where}: value {int(v[k])} at ({int(r[k])}, {int(c[k])}) is not exactly a float64; "
                              "pass it in extra")
        v = _exact_float64(v, r, c, where)
        bad = np.flatnonzero(~np.isfinite(v))
        if len(bad):
            k = int(bad[0])
            raise IRError(f"{where}: cell ({int(r[k])}, {int(c[k])}) is {v[k]}: not a finite number, so it has no exact value")
        if len(v) and not v.all():
            k = int(np.flatnonzero(v == 0)[0])
            raise IRError(f"{where}: cell ({int(r[k])}, {int(c[k])}) is 0; a cell array stores nonzero cells only")
        if len(r) and (int(r.min()) < 0 or int(c.min()) < 0):
            raise ShapeError(f"{where}: expected non-negative indices, found a row {int(r.min())} or column {int(c.min())}")
        if len(r) > 1:
            dr, dc = np.diff(r), np.diff(c)
            wrong = np.flatnonzero((dr < 0) | ((dr == 0) & (dc <= 0)))
            if len(wrong):
                k = int(wrong[0])
                raise IRError(f"{where}: cells must be distinct and in row-major order; found ({int(r[k + 1])}, {int(c[k + 1])}) "
                              f"after ({int(r[k])}, {int(c[k])})")
        ex: list[tuple[int, int, Scalar]] = []
        for t, cell in enumerate(extra):
            if not (isinstance(cell, tuple) and len(cell) == 3 and all(type(x) is int for x in cell[:2])):
                raise IRError(f"{where}: extra cell {t}: expected (row, col, value) with int indices, found {safe_repr(cell)}")
            i, j, x = cell
            s = as_scalar(x, f"{where} extra cell ({i}, {j})")
            if is_zero(s):
                raise IRError(f"{where}: extra cell ({i}, {j}) is 0; a cell array stores nonzero cells only")
            if i < 0 or j < 0:
                raise ShapeError(f"{where}: extra cell ({i}, {j}): expected non-negative indices")
            ex.append((i, j, s))
        ex.sort(key=lambda t: t[:2])
        for (i0, j0, _), (i1, j1, _) in itertools.pairwise(ex):
            if (i0, j0) == (i1, j1):
                raise IRError(f"{where}: extra cell ({i0}, {j0}) is given twice")
        for name, value in (("rows", _read_only(r)), ("cols", _read_only(c)), ("vals", _read_only(v)), ("extra", tuple(ex)),
                            ("_hash", None), ("_order", None)):
            object.__setattr__(self, name, value)
        if ex:
            pos = self._positions()
            hit = [(i, j) for (i, j, _), p in zip(ex, pos.tolist()) if p < len(r) and (int(r[p]), int(c[p])) == (i, j)]
            if hit:
                raise IRError(f"{where}: extra cell {hit[0]} is also an array cell")

    # ---- construction --------------------------------------------------------------------
    @staticmethod
    def from_dense(a: Any, *, where: str = "array") -> CellArray:
        """The nonzero cells of a 2-d float or integer array (floats read as the dyadic rationals they
        are; integers of 2^53 or more kept exactly as ``extra``); NaN and ±inf are refused."""
        import numpy as np

        refuse_masked(a, where)
        a = np.asarray(a)
        if a.ndim != 2:
            raise ShapeError(f"{where}: expected a 2-d array, found shape {a.shape}")
        if a.dtype.kind == "b" or a.dtype.kind not in "fiu":
            raise IRError(f"{where}: expected a float or integer array, found dtype {a.dtype}")
        if a.dtype.kind == "f":
            bad = np.argwhere(~np.isfinite(a))
            if len(bad):
                i, j = (int(x) for x in bad[0])
                raise IRError(f"{where}[{i}, {j}] is {a[i, j]}: not a finite number, so it has no exact value")
            r, c = np.nonzero(a)
            return CellArray(r, c, a[r, c], where=where)
        r, c = np.nonzero(a)
        v = a[r, c]
        big = np.abs(v.astype(np.float64)) >= 2.0**53
        if not big.any():
            return CellArray(r, c, v, where=where)
        keep = ~big
        extra = [(int(i), int(j), int(x)) for i, j, x in zip(r[big], c[big], v[big])]
        return CellArray(r[keep], c[keep], v[keep], extra, where=where)

    @staticmethod
    def from_parts(rows: Any, cols: Any, vals: Any, extra: Sequence[tuple[int, int, object]] = (), *,
                   where: str = "cell array") -> CellArray:
        """Cells from index arrays and float values in any order, zeros dropped; ``extra`` cells
        override array cells at the same place (and are dropped where 0)."""
        import numpy as np

        for x in (rows, cols, vals):
            refuse_masked(x, where)
        r, c, v = (np.asarray(x) for x in (rows, cols, vals))
        r, c = (x.astype(np.int64) if x.size == 0 else x for x in (r, c))  # an empty list reads as float64
        if r.dtype.kind not in "iu" or c.dtype.kind not in "iu":
            raise IRError(f"{where}: expected integer row and column indices, found {r.dtype} and {c.dtype}")
        if v.dtype.kind not in "fiu" and v.size:
            raise IRError(f"{where}: expected float or integer values, found {v.dtype} (exact values go in extra)")
        r, c, v = r.astype(np.int64).ravel(), c.astype(np.int64).ravel(), v.ravel()
        ex = {(i, j): as_scalar(x, f"{where} extra cell ({i}, {j})") for i, j, x in extra}
        keep = v != 0
        if ex:
            width = int(max(c.max(initial=0), max(j for _, j in ex))) + 1
            taken = np.array([i * width + j for i, j in ex], dtype=np.int64)
            keep &= ~np.isin(r * width + c, taken)
        r, c, v = r[keep], c[keep], v[keep]
        order = np.lexsort((c, r))
        return CellArray(r[order], c[order], v[order], [(i, j, x) for (i, j), x in ex.items() if not is_zero(x)], where=where)

    # ---- reading -------------------------------------------------------------------------
    def check_form(self, where: str) -> None:
        """Refuse (:class:`IRError`) a cell array whose fields are not as its constructor leaves them,
        as after ``object.__setattr__`` past :meth:`__setattr__`: ``rows``, ``cols``, ``vals``
        read-only 1-d ``int64``/``int64``/``float64`` arrays over ``bytes`` (so they cannot be
        written), the cells valid (finite, nonzero, distinct, row-major), ``extra`` a tuple of plain
        ``(int, int, canonical nonzero scalar)`` tuples sorted by cell, none an array cell, and the
        kept positions of the extra cells (``_order``, a tuple set on first iteration) None or theirs. The
        readers differ in what they trust: iteration (the interpreter, the encoding) follows
        ``_order`` and lets a later cell win, :meth:`get` reads ``extra`` first and the executors read
        the arrays, so a cell array out of that form is read as different weights by each."""
        import numpy as np

        arrays = (("rows", self.rows, np.int64), ("cols", self.cols, np.int64), ("vals", self.vals, np.float64))
        for name, a, dtype in arrays:
            if not (type(a) is np.ndarray and a.ndim == 1 and a.dtype == dtype and not a.flags.writeable
                    and type(a.base) is bytes):
                raise IRError(f"{where}: cell array {name}: expected a read-only 1-d {np.dtype(dtype)} array as the constructor "
                              f"stores it, found {type(a).__name__} {safe_repr(a, 60)} (a field set after construction?)")
        extra = self.extra
        if not (type(extra) is tuple and all(type(c) is tuple and len(c) == 3 and type(c[0]) is int and type(c[1]) is int
                                             for c in extra)):
            raise IRError(f"{where}: cell array extra: expected a tuple of (row, col, value) tuples of int indices, found "
                          f"{safe_repr(extra, 80)} (a field set after construction?)")
        try:
            fresh = CellArray(self.rows, self.cols, self.vals, extra, where=where)  # the constructor's checks of the cells
        except (IRError, ShapeError) as e:
            raise IRError(f"{e} (a cell array's field set after construction?)") from None
        if not (fresh.extra == extra and all(type(x[2]) is type(y[2]) for x, y in zip(fresh.extra, extra))):
            raise IRError(f"{where}: cell array extra: expected its cells sorted by (row, col), each value canonical, "
                          f"found {safe_repr(extra, 80)} (a field set after construction?)")
        order = self._order
        if order is not None and not (type(order) is tuple and extra and order == tuple(fresh._positions().tolist())
                                      and all(type(p) is int for p in order)):
            raise IRError(f"{where}: cell array: the kept positions of its extra cells are not theirs, found "
                          f"{safe_repr(order, 60)} (a field set after construction?)")

    def check_fits(self, rows: int, cols: int, where: str) -> None:
        """Refuse cells outside a ``rows × cols`` grid."""
        n = len(self.rows)
        rmax = max(int(self.rows[-1]) if n else -1, max((i for i, _, _ in self.extra), default=-1))
        cmax = max(int(self.cols.max()) if n else -1, max((j for _, j, _ in self.extra), default=-1))
        if rmax >= rows or cmax >= cols:
            raise ShapeError(f"{where}: a cell in row {show_int(rmax)} or column {show_int(cmax)} does not fit in a "
                             f"{show_int(rows)}×{show_int(cols)} grid")

    def _keys(self, width: int) -> Any:
        return self.rows * width + self.cols

    def _width(self) -> int:
        return int(max(int(self.cols.max()) if len(self.cols) else 0, max((j for _, j, _ in self.extra), default=0))) + 1

    def _positions(self) -> Any:
        """Where each extra cell falls among the array cells (row-major insertion points)."""
        import numpy as np

        w = self._width()
        return np.searchsorted(self._keys(w), np.array([i * w + j for i, j, _ in self.extra], dtype=np.int64))

    def get(self, i: int, j: int) -> Scalar | None:
        """The value of cell ``(i, j)``, or None when it is not stored."""
        import numpy as np

        for a, b, x in self.extra:
            if (a, b) == (i, j):
                return x
        w = self._width()
        if j >= w:
            return None
        keys = self._keys(w)
        p = int(np.searchsorted(keys, i * w + j))
        if p < len(keys) and int(keys[p]) == i * w + j:
            return exact_scalars(self.vals[p : p + 1])[0]
        return None

    def params(self) -> frozenset[str]:
        return param_names(x for _, _, x in self.extra)

    def is_integral(self) -> bool:
        """Every array value is an integer (the extra cells are not looked at)."""
        import numpy as np

        return bool((self.vals == np.floor(self.vals)).all())

    def transpose(self) -> CellArray:
        import numpy as np

        order = np.lexsort((self.rows, self.cols))
        return CellArray(self.cols[order], self.rows[order], self.vals[order], [(j, i, x) for i, j, x in self.extra])

    def __len__(self) -> int:
        return len(self.rows) + len(self.extra)

    def _merged(self, start: int, stop: int) -> Iterator[Rect]:
        """Rectangles ``start … stop − 1`` of the row-major sequence."""
        if not self.extra:
            yield from self._array_rects(start, stop)
            return
        if self._order is None:
            # a tuple: a kept list written in place (``_order[0] = …``, no field assigned) escaped the
            # snapshot a check compares, so an extra cell was dropped from every reader but ``get``
            object.__setattr__(self, "_order", tuple(self._positions().tolist()))
        k = 0  # rectangles emitted so far (array cells before extra cell t: pos[t])
        a = 0
        for t, (i, j, x) in enumerate(self.extra):
            p = self._order[t]
            lo, hi = max(start, k), min(stop, k + (p - a))
            if lo < hi:
                yield from self._array_rects(a + lo - k, a + hi - k)
            k += p - a
            a = p
            if start <= k < stop:
                yield (i, i + 1, j, j + 1, x)
            k += 1
        lo, hi = max(start, k), min(stop, k + len(self.rows) - a)
        if lo < hi:
            yield from self._array_rects(a + lo - k, a + hi - k)

    def _array_rects(self, start: int, stop: int) -> Iterator[Rect]:
        for s in range(start, stop, _CHUNK):
            e = min(stop, s + _CHUNK)
            vs = exact_scalars(self.vals[s:e])
            for i, j, x in zip(self.rows[s:e].tolist(), self.cols[s:e].tolist(), vs):
                yield (i, i + 1, j, j + 1, x)

    def __iter__(self) -> Iterator[Rect]:
        return self._merged(0, len(self))

    @overload
    def __getitem__(self, k: int) -> Rect: ...

    @overload
    def __getitem__(self, k: slice) -> tuple[Rect, ...]: ...

    def __getitem__(self, k: int | slice) -> Rect | tuple[Rect, ...]:
        n = len(self)
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step != 1:
                return tuple(self)[k]
            return tuple(self._merged(start, max(start, stop)))
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("cell array index out of range")
        return next(self._merged(k, k + 1))

    def __add__(self, other: object) -> tuple[Rect, ...]:
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple(self) + other

    def __radd__(self, other: object) -> tuple[Rect, ...]:
        if not isinstance(other, tuple):
            return NotImplemented
        return other + tuple(self)

    def __eq__(self, other: object) -> bool:
        import numpy as np

        if isinstance(other, CellArray) and len(self.rows) == len(other.rows) and self.extra == other.extra:
            return bool(np.array_equal(self.rows, other.rows) and np.array_equal(self.cols, other.cols)
                        and np.array_equal(self.vals, other.vals))
        if isinstance(other, (tuple, list, CellArray)):  # the same cells may be split differently
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        """The hash of the equal tuple of rectangles (computed once: one pass over every cell)."""
        h = self._hash
        if h is None:
            h = hash(tuple(self))
            object.__setattr__(self, "_hash", h)
        return h

    def __setattr__(self, name: str, value: object) -> None:
        raise IRError(f"CellArray.{name}: a cell array cannot be changed once built (it was validated then, and its "
                      "grid's fingerprint, bounds and plans are kept by identity); build a new one, e.g. with "
                      "CellArray.from_parts")

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def __reduce__(self) -> tuple[type[CellArray], tuple[Any, Any, Any, tuple[tuple[int, int, Scalar], ...]]]:
        """Pickled and copied as its parts, rebuilt (and checked) by the constructor."""
        return (type(self), (self.rows, self.cols, self.vals, self.extra))

    def __repr__(self) -> str:
        return f"CellArray({len(self.rows)} array cells, {len(self.extra)} exact cells)"
