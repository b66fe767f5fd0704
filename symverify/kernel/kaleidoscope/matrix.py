"""Exact sparse matrices: the targets and the stages of the kaleidoscope constructions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from symverify.errors import IRError, ShapeError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.scalar import (
    Scalar,
    all_int,
    all_of,
    as_index,
    as_scalar,
    is_zero,
    plain_fields,
    plain_items,
    unordered,
)

__all__ = ["SparseMatrix", "check_permutation"]

Entry = tuple[int, int, Scalar]


def check_permutation(perm: Sequence[int], what: str = "permutation") -> tuple[int, ...]:
    """Validate that ``perm`` lists each of ``0 … n−1`` once; returns it as a tuple of Python ints
    (numpy integers, as ``np.argsort`` gives, read as ints; bools and floats refused).

    A ``perm`` without a length (a generator, a set, a str) is refused, and so is a mapping (iterating
    a dict gives its keys, so ``{0: 1, 1: 0}`` would read as the identity) and a length above
    :data:`symverify.ir.limits.MAX_CELLS` (:class:`~symverify.errors.LimitError`, before allocating).
    """
    if unordered(perm, sized=True) or not hasattr(perm, "__getitem__"):
        hint = "; pass [m[i] for i in range(len(m))] for a mapping m" if isinstance(perm, Mapping) else ""
        raise IRError(f"{what}: expected a sequence of ints, found {type(perm).__name__}{hint}")
    perm = plain_items(perm)  # a list or tuple subclass as the items it stores: its length and items are read apart
    n = len(perm)
    limits.check(n, "MAX_CELLS", f"{what} of length {n}")
    seen = [-1] * n
    out = tuple([x if type(x) is int else as_index(x) for x in perm])  # Python ints as they are (the common case)
    for i, v in enumerate(out):
        if v is None or not 0 <= v < n:
            x = perm[i]
            kind = "" if v is not None else f" of type {type(x).__name__}"
            raise IRError(f"{what}: position {i} maps to {safe_repr(x, 40)}{kind}, expected an int in 0 … {n - 1}")
        if seen[v] >= 0:
            raise IRError(f"{what}: positions {seen[v]} and {i} both map to {v}; expected a bijection of 0 … {n - 1}")
        seen[v] = i
    return out  # type: ignore[return-value]



def _plain_entries(es: object, rows: int, cols: int) -> tuple[Entry, ...] | None:
    """The sorted nonzero entries :class:`SparseMatrix` stores for ``es`` when it is a plain tuple or
    list of plain 3-tuples whose positions are plain ``int`` s inside ``rows × cols``, each position
    once (the constructors' and builders' common case), found by C-level scans; None otherwise, and
    the entry-by-entry reading decides (and names the first bad entry). The same result as that
    reading: a plain ``int`` is its own :func:`~symverify.kernel.ir.scalar.as_index` (≥ 0 and inside
    the matrix, checked here), every value is read by :func:`~symverify.kernel.ir.scalar.as_scalar`
    (a plain ``int`` is its own), and zeros are dropped (:func:`~symverify.kernel.ir.scalar.is_zero`)."""
    if type(es) is not tuple and type(es) is not list:
        return None
    if not es:
        return ()
    if not all_of(tuple, es) or not all(map((3).__eq__, map(len, es))):
        return None
    ii, jj, vv = zip(*es)
    if not (all_int(ii) and all_int(jj) and min(ii) >= 0 and max(ii) < rows and min(jj) >= 0 and max(jj) < cols):
        return None
    keys = list(zip(ii, jj))
    if all_int(vv):
        clean = dict(zip(keys, vv))
        if len(clean) != len(keys):  # a position twice: the reading entry by entry names it
            return None
        return tuple((i, j, v) for (i, j), v in sorted(clean.items()) if v != 0)
    if len(set(keys)) != len(keys):
        return None
    out = {key: as_scalar(v, f"sparse matrix entry {key}") for key, v in zip(keys, vv)}
    return tuple((i, j, v) for (i, j), v in sorted(out.items()) if not is_zero(v))


def _index(x: object) -> TypeGuard[int]:
    """``x`` is an ``int`` (not a ``bool``) ``≥ 0``."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


@dataclass(frozen=True, slots=True)
class SparseMatrix:
    """A ``rows × cols`` matrix given by its nonzero entries ``(i, j, value)``, sorted by ``(i, j)``.

    Zero values are dropped on construction; a repeated position is an error. Sizes and positions
    given as an ``int`` subclass or a numpy integer are stored as the plain ``int`` of their value
    (:func:`~symverify.kernel.ir.scalar.as_index`), so the bounds checks, the comparison and the hash
    all read that value.

    >>> m = SparseMatrix.from_dense([[0, 2], [1, 0]])
    >>> m.entries, m.nnz
    (((0, 1, 2), (1, 0, 1)), 2)
    """

    rows: int
    cols: int
    entries: tuple[Entry, ...]

    def __repr__(self) -> str:
        """Shape, nonzero count and the first entries (huge integers shortened:
        :func:`~symverify.ir.bigint.safe_repr`, so printing never fails)."""
        return f"SparseMatrix({self.rows}×{self.cols}, nnz={len(self.entries)}, entries={safe_repr(self.entries, 160)})"

    def __post_init__(self) -> None:
        plain_fields(self, "rows", "cols")  # an int subclass could answer the bounds checks otherwise than its value
        for name in ("rows", "cols"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ShapeError(f"sparse matrix {name}: expected a non-negative int, found {v!r}")
        if isinstance(self.entries, (str, bytes)) or not hasattr(self.entries, "__iter__"):
            raise IRError(f"sparse matrix entries: expected a sequence of (row, col, value), found {type(self.entries).__name__}")
        fast = _plain_entries(plain_items(self.entries), self.rows, self.cols)
        if fast is not None:
            object.__setattr__(self, "entries", fast)
            return
        clean: dict[tuple[int, int], Scalar] = {}
        for k, e in enumerate(plain_items(self.entries)):  # a subclass as the items it stores, each entry too
            e = plain_items(e)
            if not isinstance(e, (tuple, list)) or len(e) != 3:
                raise IRError(f"sparse matrix entry {k}: expected (row, col, value), found {e!r:.80}")
            # positions stored, compared and hashed by their value: an int subclass or numpy integer as its
            # int (as_index, as from_dict reads a key); a bool or float is no position, its type named
            i, j, v = as_index(e[0]), as_index(e[1]), e[2]
            if not (_index(i) and _index(j) and 0 <= i < self.rows and 0 <= j < self.cols):
                bad = next((f" ({safe_repr(x, 40)} is a {type(x).__name__}, not an int)" for x in e[:2] if as_index(x) is None), "")
                raise ShapeError(f"sparse matrix entry {k}: position ({safe_repr(e[0] if i is None else i, 40)}, "
                                 f"{safe_repr(e[1] if j is None else j, 40)}) is outside {self.rows}×{self.cols}{bad}")
            if (i, j) in clean:
                raise IRError(f"sparse matrix entry {k}: position ({i}, {j}) is given twice")
            clean[(i, j)] = as_scalar(v, f"sparse matrix entry ({i}, {j})")
        ents = tuple((i, j, v) for (i, j), v in sorted(clean.items()) if not is_zero(v))
        object.__setattr__(self, "entries", ents)

    @staticmethod
    def from_dense(rows: Sequence[Sequence[object]], what: str = "dense matrix") -> SparseMatrix:
        """The matrix of a sized sequence of rows, each a sized sequence of entries in order (lists,
        tuples, numpy arrays). A row given as a mapping (iterating it gives its keys, so
        ``{1: 7, 0: 3}`` would read as ``[1, 0]``), a set, a str or bytes (its characters) or a
        generator is refused (:class:`IRError`), never read as some other row. An array with no rows
        keeps its column count (``np.zeros((0, 5))`` is ``0×5``; a list ``[]`` has none: ``0×0``)."""
        if unordered(rows, sized=True):
            raise IRError(f"{what}: expected a sequence of rows, found {type(rows).__name__}")
        shape = getattr(rows, "shape", None)
        empty_cols = as_index(shape[1]) if isinstance(shape, tuple) and len(shape) == 2 else None
        rows = [plain_items(row) for row in plain_items(rows)]  # subclasses as the items they store: read twice below
        for i, row in enumerate(rows):
            if unordered(row, sized=True):
                raise IRError(f"{what} row {i}: expected a sequence of entries in order, found {type(row).__name__} "
                              "(a mapping or set has no row order, a str is read as characters)")
        r = len(rows)
        c = len(rows[0]) if r else (empty_cols or 0)
        for i, row in enumerate(rows):
            if len(row) != c:
                raise ShapeError(f"{what} row {i}: expected {c} entries like row 0, found {len(row)}")
        ents: tuple[Any, ...] = tuple((i, j, v) for i, row in enumerate(rows) for j, v in enumerate(row))
        return SparseMatrix(r, c, ents)

    @staticmethod
    def from_dict(rows: int, cols: int, entries: Mapping[tuple[int, int], object]) -> SparseMatrix:
        if not isinstance(entries, Mapping):
            raise IRError(f"sparse matrix: expected a mapping {{(row, col): value}}, found {type(entries).__name__}")
        ents: list[Any] = []
        for key, v in plain_items(entries).items():  # a dict subclass as the items it stores
            key = plain_items(key)
            ij = tuple(map(as_index, key)) if isinstance(key, tuple) and len(key) == 2 else None
            if ij is None or None in ij:  # numpy integers are ints; bools and floats are no positions
                raise IRError(f"sparse matrix: expected keys (row, col) of ints, found {safe_repr(key, 80)}")
            ents.append((*ij, v))
        return SparseMatrix(rows, cols, tuple(ents))

    @staticmethod
    def identity(n: int) -> SparseMatrix:
        if not _index(n):
            raise ShapeError(f"sparse identity: expected a non-negative int n, found {n!r}")
        limits.check(n, "MAX_CELLS", f"the {n}×{n} sparse identity")
        return SparseMatrix(n, n, tuple((i, i, 1) for i in range(n)))

    @staticmethod
    def permutation(perm: Sequence[int]) -> SparseMatrix:
        """``P`` with ``P[perm[i], i] = 1``: the element at position ``i`` moves to ``perm[i]``."""
        perm = check_permutation(perm)
        return SparseMatrix(len(perm), len(perm), tuple((t, i, 1) for i, t in enumerate(perm)))

    @property
    def nnz(self) -> int:
        return len(self.entries)

    def as_dict(self) -> dict[tuple[int, int], Scalar]:
        return {(i, j): v for i, j, v in self.entries}

    def transpose(self) -> SparseMatrix:
        return SparseMatrix(self.cols, self.rows, tuple((j, i, v) for i, j, v in self.entries))

    def to_dense(self) -> list[list[Scalar]]:
        """The ``rows × cols`` rows, zeros included; more than :data:`~symverify.ir.limits.MAX_CELLS`
        cells is a :class:`~symverify.errors.LimitError`, raised before anything is allocated."""
        limits.check(self.rows * self.cols, "MAX_CELLS", lambda: f"the dense form of a {self.rows}×{self.cols} sparse matrix")
        out: list[list[Scalar]] = [[0] * self.cols for _ in range(self.rows)]
        for i, j, v in self.entries:
            out[i][j] = v
        return out

    def row_counts(self) -> list[int]:
        """The nonzeros of each row (a list of ``rows`` counts: :data:`~symverify.ir.limits.MAX_CELLS` at most)."""
        limits.check(self.rows, "MAX_CELLS", lambda: f"the row counts of a {self.rows}×{self.cols} sparse matrix")
        out = [0] * self.rows
        for i, _, _ in self.entries:
            out[i] += 1
        return out

    def col_counts(self) -> list[int]:
        """The nonzeros of each column (a list of ``cols`` counts: :data:`~symverify.ir.limits.MAX_CELLS` at most)."""
        limits.check(self.cols, "MAX_CELLS", lambda: f"the column counts of a {self.rows}×{self.cols} sparse matrix")
        out = [0] * self.cols
        for _, j, _ in self.entries:
            out[j] += 1
        return out
