"""Applying and materializing butterfly products (docs/kaleidoscope.md §1, §4): one kernel, any ring, plus numpy.

Every object (a :class:`ButterflyFactor`, :class:`BBStar`, :class:`FactorList` or
:class:`Kaleidoscope`) is read as its factors in application order. One stage of stride ``s``
maps ``x`` to ``out[p] = d1·x[p] + d2·x[p+s]``, ``out[p+s] = d3·x[p] + d4·x[p+s]`` on its pairs
(``ir/butterfly.py``), so a BB* element of size N costs ``O(N log N)``.

* :func:`apply` / :func:`apply_batch`: exact (:class:`ScalarRing`, also symbolic), rational,
  modular or polynomial values through the ring protocol (``zero``, ``coerce``, ``reduce``).
  Coefficients that are exactly 0 or 1 cost nothing, and identity blocks are skipped.
* :func:`materialize` / :func:`to_matrix`: the exact matrix, by running the same kernel on the
  unit linear forms (one pass; cost proportional to the nonzeros carried through the stages).

Every function here (and :func:`~symverify.kaleidoscope.numeric.compile_numpy` /
:func:`~symverify.kaleidoscope.numeric.compile_torch`, the batched float paths) also takes the
:class:`~symverify.kernel.kaleidoscope.factorization.Factorization` a construction returns, read as its
kaleidoscope.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from itertools import compress, repeat
from operator import sub
from typing import Any, Union

from symverify.deadline import Check
from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope, pair_index
from symverify.kernel.ir.scalar import Scalar, all_int, as_index, is_bool, is_zero, param_names, unordered
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.semantics.rings import AffineRing, Ring, ScalarRing

__all__ = [
    "Butterflies",
    "butterfly_ir",
    "corner",
    "factors_of",
    "params_of",
    "apply",
    "apply_batch",
    "materialize",
    "to_matrix",
]

Butterflies = Union[ButterflyFactor, BBStar, FactorList, Kaleidoscope, Factorization]
_ONE = object()  # marks a coefficient that is exactly 1
_KINDS = "a ButterflyFactor, BBStar, FactorList, Kaleidoscope or Factorization"


def butterfly_ir(obj: Butterflies) -> ButterflyFactor | BBStar | FactorList | Kaleidoscope:
    """The IR object behind ``obj``: a :class:`Factorization` is its kaleidoscope ``E``.

    Raises:
        IRError: ``obj`` is none of the butterfly objects (the message names its type).
    """
    if isinstance(obj, Factorization):
        return obj.kaleidoscope
    if isinstance(obj, (ButterflyFactor, BBStar, FactorList, Kaleidoscope)):
        return obj
    raise IRError(f"applying a butterfly product: expected {_KINDS}, found {type(obj).__name__}")


def corner(obj: Butterflies) -> tuple[int, int]:
    """``(N, n)``: the size of the product and the length of the vectors it maps (``n = N`` except
    for a kaleidoscope, which maps ``F^n → F^n`` through its ``n×n`` corner)."""
    ir = butterfly_ir(obj)
    return ir.size, ir.n if isinstance(ir, Kaleidoscope) else ir.size


def factors_of(obj: Butterflies) -> tuple[int, tuple[ButterflyFactor, ...]]:
    """``(N, factors in application order)`` of any butterfly object."""
    ir = butterfly_ir(obj)
    if isinstance(ir, ButterflyFactor):
        return ir.size, (ir,)
    if isinstance(ir, (BBStar, FactorList)):
        return ir.size, ir.factors
    return ir.size, tuple(f for g in ir.groups for f in g.factors)


def params_of(obj: Butterflies) -> tuple[str, ...]:
    """The sorted parameter names in the diagonals of ``obj``."""
    _, fs = factors_of(obj)
    return tuple(sorted(param_names(v for f in fs for d in (f.d1, f.d2, f.d3, f.d4) for v in d)))


def _classify(x: Scalar, ring: Ring) -> Any:
    if is_zero(x):
        return None
    if type(x) is int and x == 1:
        return _ONE
    return ring.coerce(x)


Plan = list[tuple[int, int, Any, Any, Any, Any]]

_CACHED_UP_TO = 64
"""The largest factor size whose ring-free plan :func:`_plan` keeps on the factor (``_plan_cache``):
small factors are the ones shared among many products; a large factor's plan (up to ``N/2`` pairs)
is not kept alive with it."""


class _Kept:
    """The mark a factor holds for the plan :func:`_plan` keeps for it in :data:`_KEPT` (no fields of
    its own: what it stands for is only in the table, which only :func:`_plan` writes)."""

    __slots__ = ("__weakref__",)


_KEPT: weakref.WeakKeyDictionary[_Kept, tuple[tuple[Any, ...], tuple[Any, ...]]] = weakref.WeakKeyDictionary()
"""Each kept plan with the size, stride and diagonals it was made from, by its mark; an entry goes
with its mark, i.e. with the factor that holds it."""


def _moved(f: ButterflyFactor) -> Sequence[int]:
    """The pairs ``m`` of ``f`` (ascending) that may not be the identity: all of them, or, when every
    diagonal entry is a plain ``int`` (``f.all_int``, derived by its constructor), only those with ``d1 ≠ 1``,
    ``d2 ≠ 0``, ``d3 ≠ 0`` or ``d4 ≠ 1`` (found by C-level scans: most pairs of a compiled chain are
    the identity)."""
    half = f.size // 2
    if not f.all_int:
        return range(half)
    # a diagonal of plain ints that is all 1 (d1, d4) or all 0 (d2, d3) moves no pair: told by a
    # C-level count, so only the other diagonals are read (an int x is not 1 exactly when x − 1 is
    # nonzero); a pair moves when any of its entries' tests is nonzero, read pair by pair in C (the
    # pairs come out ascending, no set to sort)
    tests: list[Any] = [map(sub, d, repeat(1)) for d in (f.d1, f.d4) if d.count(1) != half]
    tests += [d for d in (f.d2, f.d3) if d.count(0) != half]
    if not tests:
        return []
    return list(compress(range(half), tests[0] if len(tests) == 1 else map(any, zip(*tests))))


def _zero_one(f: ButterflyFactor) -> bool:
    """Every entry of the all-int factor ``f`` is 0 or 1 (C-level counts)."""
    half = f.size // 2
    return all(d.count(0) + d.count(1) == half for d in (f.d1, f.d2, f.d3, f.d4))


def _plan(f: ButterflyFactor, ring: Ring) -> Plan:
    """The non-identity pairs of ``f`` with coefficients coerced once (None = 0, _ONE = 1); a pair
    is the identity when ``d1 = d4`` is the ``int`` 1 and ``d2``, ``d3`` are exactly 0. When every
    entry is an ``int``, :func:`_moved` lists exactly the other pairs and each entry is classified
    inline (0 → None, 1 → _ONE, else ``ring.coerce``: :func:`_classify` on an ``int``).

    When every entry is the int 0 or 1 no entry is coerced, so the plan is the same for every ring;
    for a factor of size at most :data:`_CACHED_UP_TO` it is kept on first use, with the size, stride
    and diagonals it was made from, in this module's table :data:`_KEPT` under a fresh mark that the
    factor holds (``_plan_cache``), and read from there afterwards (a fresh list each time) only
    while the factor's fields are still those very objects: a field rewritten past the frozen
    dataclass (``object.__setattr__(f, "d1", ...)``) makes it a miss, as it makes an entry of the
    identity memos one (:func:`~symverify.kernel.ir.memo.fields_now`), so a stale plan never
    evaluates the new diagonals as the old ones; and anything else set as ``_plan_cache`` the same
    way (a plan naming the factor's own fields, another factor's mark) is no mark of the table, or
    names other fields, and is never read: the factor is planned afresh."""
    mark: Any = f._plan_cache  # a _Kept mark, found in _KEPT only if this function stored it
    if mark is not None and type(mark) is _Kept:
        found = _KEPT.get(mark)
        if found is not None:
            (n0, s0, e1, e2, e3, e4), kept = found
            if e1 is f.d1 and e2 is f.d2 and e3 is f.d3 and e4 is f.d4 and s0 is f.stride and n0 is f.size:
                return list(kept)
    s, n = f.stride, f.size
    d1, d2, d3, d4 = f.d1, f.d2, f.d3, f.d4
    plan: Plan = []
    if f.all_int:
        plan = _int_plan(f, ring.coerce)
        if n <= _CACHED_UP_TO and _zero_one(f):
            mark = _Kept()
            _KEPT[mark] = ((n, s, d1, d2, d3, d4), tuple(plan))
            object.__setattr__(f, "_plan_cache", mark)  # frozen: derived from these fields alone
        return plan
    for m in _moved(f):
        a, b, c, d = d1[m], d2[m], d3[m], d4[m]
        if type(a) is int and type(d) is int and a == 1 and d == 1 and is_zero(b) and is_zero(c):
            continue
        p = pair_index(n, s, m)
        plan.append((p, p + s, _classify(a, ring), _classify(b, ring), _classify(c, ring), _classify(d, ring)))
    return plan


def _int_plan(f: ButterflyFactor, co: Any) -> Plan:
    """:func:`_plan` of an all-int factor: its moved pairs, each entry 0 → None, 1 → _ONE, else ``co(entry)``."""
    s, n = f.stride, f.size
    d1, d2, d3, d4 = f.d1, f.d2, f.d3, f.d4
    plan: Plan = []
    for m in _moved(f):
        p = pair_index(n, s, m)
        a, b, c, d = d1[m], d2[m], d3[m], d4[m]
        plan.append((p, p + s,
                     None if a == 0 else _ONE if a == 1 else co(a), None if b == 0 else _ONE if b == 1 else co(b),
                     None if c == 0 else _ONE if c == 1 else co(c), None if d == 0 else _ONE if d == 1 else co(d)))
    return plan


def _term(c: Any, v: Any) -> Any:
    return v if c is _ONE else c * v


def _combine(a: Any, xp: Any, b: Any, xq: Any, ring: Ring) -> Any:
    if a is None:
        return ring.zero if b is None else (xq if b is _ONE else ring.reduce(b * xq))
    if b is None:
        return xp if a is _ONE else ring.reduce(a * xp)
    return ring.reduce(_term(a, xp) + _term(b, xq))


def _run(plans: Sequence[Plan], x: list[Any], ring: Ring, check: Check | None = None) -> list[Any]:
    """The generic per-stage kernel: every stage reads ``x`` and writes a fresh vector; ``check``
    (:mod:`symverify.deadline`) runs before every factor."""
    for plan in plans:
        if check is not None:
            check()
        out = list(x)
        for p, q, a, b, c, d in plan:
            xp, xq = x[p], x[q]
            out[p] = _combine(a, xp, b, xq, ring)
            out[q] = _combine(c, xp, d, xq, ring)
        x = out
    return x


def _ring(ring: object, what: str) -> None:
    """``ring`` has what the stage kernel reads of a ring (``zero``, ``coerce``, ``reduce``: the
    :class:`~symverify.kernel.semantics.rings.Ring` protocol); anything else is an :class:`IRError`
    before any work (it failed inside the kernel, or was never read when every coefficient was 0 or 1)."""
    if not all(hasattr(ring, name) for name in ("zero", "coerce", "reduce")) or not callable(ring.coerce):  # type: ignore[attr-defined]
        raise IRError(f"{what}: expected a ring (with zero, coerce and reduce, e.g. ScalarRing()), found {type(ring).__name__} "
                      f"{ring!r:.40}")


def _exact_entry(v: Any, i: int) -> Any:
    """Entry ``i`` of a vector applied over :class:`ScalarRing`: an ``int`` as it is, another integer
    (a numpy integer) as the ``int`` of its value, a bool or bytes refused (:class:`IRError`: no number),
    anything else as given (Fractions, symbols, floats for a float reference, str labels:
    :func:`_labels_only`)."""
    if type(v) is int:
        return v
    if isinstance(v, bytes) or is_bool(v):
        raise IRError(f"applying a butterfly product: entry {i}: expected a number, found {type(v).__name__} {v!r:.40}")
    j = as_index(v)
    return v if j is None else j


def _labels_only(fs: Sequence[ButterflyFactor], i: int, label: str) -> None:
    """A str entry is a label, moved unchanged by a routing product: every 2×2 block has entries 0 or 1
    and at most one 1 per row (``I``, ``X``, a dropped coordinate). Any other block would compute with
    it (``2·'1/2'`` is ``'1/21/2'``, ``'a' + 'b'`` is ``'ab'``): :class:`IRError`, naming the factor and pair."""
    for k, f in enumerate(fs):
        if f.all_int and _zero_one(f) and not any(a and b for a, b in zip(f.d1, f.d2)) and not any(c and d for c, d in zip(f.d3, f.d4)):
            continue
        m = next(m for m in range(f.size // 2) if not (
            {f.d1[m], f.d2[m], f.d3[m], f.d4[m]} <= {0, 1} and all(type(x) is int for x in f.block(m)[0] + f.block(m)[1])
            and not (f.d1[m] and f.d2[m]) and not (f.d3[m] and f.d4[m])))
        raise IRError(f"applying a butterfly product: entry {i} is the str {label!r:.40}, a label that only 0/1 routing blocks "
                      f"move; factor {k} (stride {f.stride}) pair {m} has the block {f.block(m)}, which would compute with it "
                      "(pass exact numbers: Fraction(1, 2), sym('a'))")


def _io(obj: Butterflies, length: int, full: bool) -> tuple[int, int]:
    """(size, expected input length); a kaleidoscope reads ``n`` values unless ``full``."""
    size, n = corner(obj)
    want = size if full else n
    if length != want:
        what = "kaleidoscope corner n" if want != size else "size N"
        raise ShapeError(f"applying a butterfly product: expected a vector of length {what} = {want}, found {length}")
    return size, want


def apply(obj: Butterflies, x: Sequence[Any], ring: Ring | None = None, *, full: bool = False, check: Check | None = None) -> list[Any]:
    """``obj·x`` over ``ring`` (default :class:`ScalarRing`); a kaleidoscope maps ``F^n → F^n``.

    ``obj`` is any of :data:`Butterflies`; a :class:`Factorization` is applied as its kaleidoscope.
    A kaleidoscope pads ``x`` with zeros to its size ``N`` and returns the first ``n`` entries;
    ``full=True`` applies the whole ``N×N`` product instead. ``check`` (a deadline checker,
    :mod:`symverify.deadline`) runs before every factor.

    >>> from symverify.kernel.ir.butterfly import ButterflyFactor
    >>> swap = ButterflyFactor(2, 1, (0,), (1,), (1,), (0,))
    >>> apply(swap, [5, 7])
    [7, 5]
    """
    return apply_batch(obj, [x], ring, full=full, check=check)[0]


def apply_batch(obj: Butterflies, xs: Sequence[Sequence[Any]], ring: Ring | None = None, *, full: bool = False,
                check: Any = None) -> list[list[Any]]:
    """:func:`apply` on every vector of ``xs`` (coefficients are coerced once). Entries are taken as
    given: exact scalars give exact results, floats give the float products (a float reference for
    the numeric programs); the provers pass exact values or ring elements. Over :class:`ScalarRing`
    an integer that is no ``int`` (a numpy integer, whose products wrap at 64 bits or raise) is read
    as the ``int`` of its value, a bool or bytes is an :class:`IRError`, and a str is a label that only
    routing blocks (0/1, one 1 per row) move (:func:`_labels_only`). ``xs`` is an ordered iterable of vectors (a list, a tuple, a 2-d
    array, a generator); a mapping (iterating it gives its keys), a set, a str or no iterable at all is
    a :class:`ShapeError`."""
    if unordered(xs):
        raise ShapeError(f"applying a butterfly product to a batch: expected a sequence of vectors, found {type(xs).__name__}")
    ring = ScalarRing() if ring is None else ring
    _ring(ring, "applying a butterfly product: ring")
    exact = isinstance(ring, ScalarRing)
    size, fs = factors_of(obj)
    plans = [_plan(f, ring) for f in fs]
    out = []
    for x in xs:
        if unordered(x, sized=True):  # a mapping would read as its keys
            raise ShapeError(f"applying a butterfly product: expected a vector (a sequence of values), found {type(x).__name__}")
        _, length = _io(obj, len(x), full)
        vals = list(x)
        if exact and not all_int(vals):
            vals = [_exact_entry(v, i) for i, v in enumerate(vals)]
            label = next(((i, v) for i, v in enumerate(vals) if isinstance(v, str)), None)
            if label is not None:
                _labels_only(fs, *label)
        y = _run(plans, vals + [ring.zero] * (size - length), ring, check)
        out.append(y[:length])
    return out


def materialize(obj: Butterflies, columns: Sequence[int] | None = None, coeffs: Any = None, *,
                check: Check | None = None) -> list[Affine]:
    """The rows of the full ``N×N`` product restricted to ``columns``, as sparse linear forms.

    Row ``i`` maps column ``j`` to entry ``(i, j)``; ``columns`` are ints (numpy integers read by
    value) in ``0 … N−1``, anything else a :class:`ShapeError`. The default columns are ``0 … n−1`` for a
    kaleidoscope (the only columns the corner reads) and all ``N`` otherwise. Entries are exact
    (``coeffs`` defaults to :class:`ScalarRing`, so symbolic entries are canonical polynomials).
    ``check`` (a deadline checker, :mod:`symverify.deadline`) runs before every factor.
    """
    size, fs = factors_of(obj)
    if columns is None:
        columns = range(corner(obj)[1])
    elif unordered(columns):
        raise ShapeError(f"materialize: expected a sequence of columns (ints in 0 … {size - 1}), found {type(columns).__name__}")
    if coeffs is not None:
        _ring(coeffs, "materialize: coeffs")
    ring = AffineRing(ScalarRing() if coeffs is None else coeffs)
    x = [ring.zero] * size
    for c in columns:
        j = as_index(c)  # a numpy integer by its value; a bool or a float is no column
        if j is None:
            raise ShapeError(f"materialize: expected every column as an int in 0 … {size - 1}, found {c!r:.40} of type {type(c).__name__}")
        if not 0 <= j < size:
            raise ShapeError(f"materialize: column {j} is outside 0 … {size - 1} (expected an int)")
        x[j] = Affine.unit(j)
    return _run([_plan(f, ring) for f in fs], x, ring, check)


def to_matrix(obj: Butterflies, coeffs: Any = None) -> list[list[Any]]:
    """The exact matrix as a list of rows: the ``n×n`` corner of a kaleidoscope, else ``N×N``.

    >>> from symverify.kernel.ir.butterfly import ButterflyFactor
    >>> to_matrix(ButterflyFactor(4, 2, (1, 1), (2, 0), (0, 0), (1, 1)))
    [[1, 0, 2, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    """
    n = corner(obj)[1]
    if coeffs is not None:
        _ring(coeffs, "to_matrix: coeffs")
    rows = materialize(obj, range(n), coeffs)[:n]
    zero = (ScalarRing() if coeffs is None else coeffs).zero
    return [[r.terms.get(j, zero) for j in range(n)] for r in rows]
