"""Bulk evaluation of index expressions, conditions and values over many cells at once.

The concrete interpretation (:mod:`symverify.kernel.parametric.concrete`) evaluates a bias ``b1``/``b2`` on
every cell where its value is not constant between cut points. Doing that cell by cell walks the
expression tree once per cell; here each node is evaluated once for a whole array of cells
(``numpy`` int64 over the row and channel index arrays ``rows_``, ``chans``; a node whose value
every cell shares, one that reads neither ``i`` nor ``q``, is a plain ``int``/``bool`` computed once
with the same checks), with exactly the semantics of :mod:`symverify.kernel.parametric.expr`:

* ``&`` / ``|`` / ``where`` / ``ite`` evaluate their later operands only on the cells that reach them
  (so an expression undefined off its guard is never evaluated there);
* an operation that could leave ``[0, 2^62)`` (the range where int64 arithmetic is exact), a
  subtraction below 0, a shift by 62 or more, or a division by zero raises :class:`FallbackError`, and
  the caller evaluates cell by cell with :func:`~symverify.kernel.parametric.expr.IExpr.eval` instead — which
  returns the exact value or raises the precise :class:`~symverify.kernel.parametric.expr.ParametricError`.
  Nothing is wrapped or rounded;
* a free predicate (from ``preds``, else from :func:`~symverify.kernel.parametric.expr.predicates`) is a callable on cells (called once per cell that reaches it) or a set of
  ``(row, channel)`` cells (a vectorised membership test); a weight family is called once per cell
  that reaches it, and its values (``int``, ``Fraction``, :class:`~symverify.kernel.ir.scalar.Sym`) are
  combined with the same Python operations, in the same order, as the cell-by-cell evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from symverify.kernel.ir.scalar import is_zero
from symverify.kernel.parametric.expr import (
    _PREDICATES,
    Bin,
    BoolOp,
    Cmp,
    Cond,
    Fam,
    IExpr,
    Inp,
    Ite,
    Lit,
    Not,
    Num,
    ParametricError,
    Pred,
    Value,
    Var,
    VIf,
    VProd,
    VSum,
    call_predicate,
    env_value,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FallbackError", "Placement", "index", "cond", "value", "nonzero"]

_LIMIT = 1 << 62
_KEY = 1 << 21  # a channel below 2^21 and a row below 2^41 pack into one int64 key

Placement = Callable[..., bool] | AbstractSet[tuple[int, ...]]


class FallbackError(Exception):
    """An operation the int64 arrays cannot do exactly here: evaluate cell by cell instead."""


def _full(n: int, v: int) -> np.ndarray:
    """``v`` at ``n`` cells; ``v`` is an ``int`` result of :func:`_index`, which every path returns
    through :func:`_const`, so it is already in ``[0, 2^62)``."""
    import numpy as np

    return np.full(n, v, dtype=np.int64)


def index(e: IExpr, env: Mapping[str, int], rows_: np.ndarray, chans: np.ndarray, preds: Mapping[str, Placement]) -> np.ndarray:
    """``e`` at every cell ``(rows_[k], chans[k])`` (``env`` gives the parameters)."""
    x = _index(e, env, rows_, chans, preds)
    return _full(len(rows_), x) if type(x) is int else x


def _index(e: IExpr, env: Mapping[str, int], rows_: np.ndarray, chans: np.ndarray, preds: Mapping[str, Placement]) -> Any:
    """:func:`index`, or a plain ``int`` when ``e`` has the same value at every cell (it reads
    neither ``i`` nor ``q``, or only under a constant choice): that value, computed once with
    the same checks (range ``[0, 2^62)``, subtraction, shifts, division) as each cell of an array."""
    import numpy as np

    n = len(rows_)
    if isinstance(e, Lit):
        return _const(e.value)
    if isinstance(e, Var):
        if e.name == "i":
            return rows_
        if e.name == "q":
            return chans
        if e.name not in env:
            raise ParametricError(f"index variable {e.name!r} has no value (known: {sorted(env)})")
        return _const(env_value(e.name, env[e.name]))  # a float or bool refused as the cell-by-cell reading refuses it
    if isinstance(e, Ite):
        m = _cond(e.cond, env, rows_, chans, preds)
        if type(m) is bool:
            return _index(e.a if m else e.b, env, rows_, chans, preds) if n else np.empty(0, dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        if m.any():
            out[m] = index(e.a, env, rows_[m], chans[m], preds)
        if not m.all():
            out[~m] = index(e.b, env, rows_[~m], chans[~m], preds)
        return out
    if not isinstance(e, Bin):
        raise ParametricError(f"index expression: unknown node {type(e).__name__}")
    a, b = _index(e.a, env, rows_, chans, preds), _index(e.b, env, rows_, chans, preds)
    if n == 0:
        return np.empty(0, dtype=np.int64) if type(a) is int else a
    op = e.op
    if type(a) is int and type(b) is int:
        return _const(_bin_int(op, a, b))
    if type(a) is int:
        a = _full(n, a)
    if type(b) is int:
        b = _full(n, b)
    if op == "+":
        r = a + b  # both < 2^62: no int64 overflow
    elif op == "-":
        if (a < b).any():
            raise FallbackError
        r = a - b
    elif op == "*":
        if int(a.max()) * int(b.max()) >= _LIMIT:
            raise FallbackError
        r = a * b
    elif op == "<<":
        if int(b.max()) >= 62 or int(a.max()) << int(b.max()) >= _LIMIT:
            raise FallbackError
        r = a << b
    elif op == ">>":
        if int(b.max()) >= 62:
            raise FallbackError
        r = a >> b
    elif op == "&":
        r = a & b
    elif op == "|":
        r = a | b
    elif op == "^":
        r = a ^ b
    else:
        if not b.all():
            raise FallbackError
        r = a // b if op == "//" else a % b
    if int(r.max()) >= _LIMIT:
        raise FallbackError
    return r


def _const(v: int) -> int:
    """A value every cell shares, in ``[0, 2^62)`` (else :class:`FallbackError`, as :func:`_full`)."""
    if not 0 <= v < _LIMIT:
        raise FallbackError
    return v


def _bin_int(op: str, a: int, b: int) -> int:
    """``a op b`` for two values in ``[0, 2^62)``, refused exactly where the int64 arrays refuse a
    cell (:class:`FallbackError`); the result is then range-checked by :func:`_const`."""
    if op == "+":
        return a + b
    if op == "-":
        if a < b:
            raise FallbackError
        return a - b
    if op == "*":
        if a * b >= _LIMIT:
            raise FallbackError
        return a * b
    if op == "<<":
        if b >= 62 or a << b >= _LIMIT:
            raise FallbackError
        return a << b
    if op == ">>":
        if b >= 62:
            raise FallbackError
        return a >> b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if not b:
        raise FallbackError
    return a // b if op == "//" else a % b


class CellSet(frozenset):  # type: ignore[type-arg]
    """A placement's set of cells, frozen, with its packed int64 keys computed once (a placement is
    read at every predicate node of every layer). Calling it at a point says whether the point is a
    member, so it is also the callable a ``predicates(...)`` block holds (the cell-by-cell evaluation
    calls the predicates it reads; this evaluation tests membership)."""

    _keys: Any = None

    def __call__(self, *idx: int) -> bool:
        return idx in self

    def keys(self) -> np.ndarray:
        """The keys ``r·2^21 + c`` of the members ``(r, c)`` with ``0 ≤ r < 2^41`` and ``0 ≤ c < 2^21``
        (no other member can be a cell of the bulk evaluation), sorted, each once: ``np.unique`` of
        them, computed as a sort and a drop of each key equal to its predecessor (the same array;
        ``np.unique``'s own overhead was most of its time on placements of a few hundred cells)."""
        import numpy as np

        if self._keys is None:
            ks = [r * _KEY + c for r, c in self if 0 <= r < _LIMIT // _KEY and 0 <= c < _KEY]
            keys = np.fromiter(ks, dtype=np.int64, count=len(ks))
            keys.sort()
            if len(keys) > 1:
                keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
            self._keys = keys
        return self._keys


def _member(cells: AbstractSet[tuple[int, ...]], args: list[np.ndarray]) -> np.ndarray:
    import numpy as np

    n = len(args[0]) if args else 0
    if len(args) == 2 and n and int(args[0].max()) < (_LIMIT // _KEY) and int(args[1].max()) < _KEY:
        if isinstance(cells, CellSet):  # sorted unique keys: a binary search per cell
            ks, x = cells.keys(), args[0] * _KEY + args[1]
            if not len(ks):
                return np.zeros(n, dtype=bool)
            at = np.minimum(np.searchsorted(ks, x), len(ks) - 1)
            return ks[at] == x
        keys = [r * _KEY + c for r, c in cells if 0 <= r < _LIMIT // _KEY and 0 <= c < _KEY]
        return np.isin(args[0] * _KEY + args[1], np.fromiter(keys, dtype=np.int64, count=len(keys)))
    cols = [a.tolist() for a in args]
    return np.fromiter((t in cells for t in zip(*cols)), dtype=bool, count=n)


def cond(c: Cond, env: Mapping[str, int], rows_: np.ndarray, chans: np.ndarray, preds: Mapping[str, Placement]) -> np.ndarray:
    """``c`` at every cell, as a bool array."""
    import numpy as np

    m = _cond(c, env, rows_, chans, preds)
    return np.full(len(rows_), m, dtype=bool) if type(m) is bool else m


def _cond(c: Cond, env: Mapping[str, int], rows_: np.ndarray, chans: np.ndarray, preds: Mapping[str, Placement]) -> Any:
    """:func:`cond`, or a plain ``bool`` when ``c`` has the same value at every cell (it compares
    values every cell shares, or its first deciding item does)."""
    import numpy as np

    n = len(rows_)
    if isinstance(c, Cmp):
        a, b = _index(c.a, env, rows_, chans, preds), _index(c.b, env, rows_, chans, preds)
        if n and type(a) is int and type(b) is int:
            return a < b if c.op == "<" else a <= b if c.op == "<=" else a == b if c.op == "==" else a != b
        if type(a) is int:
            a = _full(n, a)
        if type(b) is int:
            b = _full(n, b)
        if c.op == "<":
            return a < b
        if c.op == "<=":
            return a <= b
        if c.op == "==":
            return a == b
        return a != b
    if isinstance(c, BoolOp):
        conj = c.op == "and"
        if not n:
            return np.full(0, conj, dtype=bool)
        out: Any = None  # None while every cell is still open
        todo: Any = None  # the cells whose value is still open (None: all of them)
        for item in c.items:
            if todo is not None and not len(todo):
                break
            m = _cond(item, env, rows_ if todo is None else rows_[todo], chans if todo is None else chans[todo], preds)
            if type(m) is bool:
                if m is conj:  # this item decides none of the open cells
                    continue
                if todo is None:  # it decides every cell
                    return not conj
                out[todo] = not conj
                break
            if todo is None:
                out, todo = np.full(n, conj, dtype=bool), np.arange(n)
            if conj:
                out[todo[~m]] = False
                todo = todo[m]
            else:
                out[todo[m]] = True
                todo = todo[~m]
        return conj if out is None else out
    if isinstance(c, Not):
        m = _cond(c.c, env, rows_, chans, preds)
        return (not m) if type(m) is bool else ~m
    if isinstance(c, Pred):
        fn = preds.get(c.name, _PREDICATES.get().get(c.name))
        if fn is None:
            raise ParametricError(f"predicate {c.name} has no value (give it as instantiate(..., placement={{...}}))")
        if not c.idx:  # no arguments: one value every cell shares (zip over no columns would give no cell)
            if not n:
                return np.zeros(0, dtype=bool)
            return (() in fn) if isinstance(fn, AbstractSet) else call_predicate(c.name, fn, ())
        args = [index(x, env, rows_, chans, preds) for x in c.idx]
        if isinstance(fn, AbstractSet):
            return _member(fn, args)
        cols = [a.tolist() for a in args]
        return np.fromiter((call_predicate(c.name, fn, t) for t in zip(*cols)), dtype=bool, count=n)
    raise ParametricError(f"condition: unknown node {type(c).__name__}")


def value(v: Value, env: Mapping[str, int], rows_: np.ndarray, chans: np.ndarray, preds: Mapping[str, Placement],
          family: Callable[[str], Callable[[tuple[int, ...]], Any]]) -> Any:
    """``v`` at every cell: a constant (the same at every cell) or an object array of scalars;
    ``family(name)`` is the reader of family ``name``'s members (asked once per family node, then
    called on each cell's index tuple, in cell order)."""
    import numpy as np

    n = len(rows_)
    if isinstance(v, Num):
        return v.value
    if isinstance(v, Fam):
        cols = [index(x, env, rows_, chans, preds).tolist() for x in v.idx]
        out = np.empty(n, dtype=object)
        read = family(v.name)
        out[:] = list(map(read, zip(*cols))) if cols else [read(()) for _ in range(n)]
        return out
    if isinstance(v, Inp):
        raise ParametricError("a weight expression reads an input cell")
    if isinstance(v, VSum):
        total: Any = 0
        for x in v.items:
            total = total + value(x, env, rows_, chans, preds, family)
        return total
    if isinstance(v, VProd):
        a = value(v.a, env, rows_, chans, preds, family)
        if not isinstance(a, np.ndarray):
            return 0 if is_zero(a) else a * value(v.b, env, rows_, chans, preds, family)
        nz = nonzero(a)
        out = np.zeros(n, dtype=object)
        if nz.any():
            out[nz] = a[nz] * value(v.b, env, rows_[nz], chans[nz], preds, family)
        return out
    if isinstance(v, VIf):
        c = _cond(v.cond, env, rows_, chans, preds)
        if type(c) is bool:
            return value(v.a if c else v.b, env, rows_, chans, preds, family) if n else 0
        m = c
        if m.all() or not m.any():
            return value(v.a if m.all() else v.b, env, rows_, chans, preds, family) if n else 0
        out = np.empty(n, dtype=object)
        _put(out, m, value(v.a, env, rows_[m], chans[m], preds, family))
        _put(out, ~m, value(v.b, env, rows_[~m], chans[~m], preds, family))
        return out
    raise ParametricError(f"value expression: unknown node {type(v).__name__}")


def nonzero(a: np.ndarray) -> np.ndarray:
    """The cells of an object array of scalars that are not exactly 0 (:func:`~symverify.kernel.ir.scalar.is_zero`;
    a :class:`~symverify.kernel.ir.scalar.Sym` is canonical, never 0, and compares unequal to 0)."""
    import numpy as np

    return np.asarray(a != 0, dtype=bool)


def _put(out: np.ndarray, m: np.ndarray, x: Any) -> None:
    import numpy as np

    if isinstance(x, np.ndarray):
        out[m] = x
    else:  # through a 0-d array, so numpy never looks inside the scalar
        box = np.empty((), dtype=object)
        box[()] = x
        out[m] = box
