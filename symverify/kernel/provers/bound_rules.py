"""The bound rules, written once: how a sum, a product, a constant and a variable bound a value.

Every structural bound the randomized method's ``ε`` rests on (docs/trusted-base.md, "the
structural bounds") is an evaluation of these rules over a circuit's gates or a model's layers.
A value ``f`` is bounded by four numbers:

* ``deg``: a degree bound in the inputs and the weight parameters, in ``(max, +)``: ``deg(f+g) ≤
  max``, ``deg(f·g) ≤ deg f + deg g``; a structurally zero value has its own degree (``−1`` exact,
  ``−∞`` in numpy), which ``+`` skips and ``·`` propagates (``0·g = 0``);
* ``s``: the number of non-integral scalar factors, in ``(max, +)``: with ``Q`` the lcm of every
  denominator, ``Q^s·f`` has integer coefficients;
* the **height**: ``ℓ1(f+g) ≤ ℓ1 f + ℓ1 g`` and ``ℓ1(f·g) ≤ ℓ1 f · ℓ1 g``; a sum of terms with
  different ``s`` scales the smaller by ``Q^(s − s')``;
* ``cnt``: the monomial count, ``(+, ·)``, capped by ``C(V+D, D)`` (the monomials of degree
  ``≤ D`` in ``V`` variables) once it exceeds 64.

Two backends evaluate the same rules.

*Exact* (:class:`ExactRules`): a value is a tuple ``(deg, s, m, e, cnt)`` of Python ints with
``ℓ1(Q^s·f) ≤ m·2^e`` (:class:`UB`, mantissas rounded up to 62 bits); the circuit pass and the
interpreter ring of :mod:`symverify.kernel.provers.bounds` run on it.

*Numpy* (rows ``(deg, s, h, c)`` of float64, a whole level or layer at once): ``h = log2 ℓ1(f)``
and ``c = log2 cnt``, so a product is the sum of two rows (:func:`otimes`) and a sum is ``max`` on
the first two fields and ``log2 Σ 2^x`` on the last two (:func:`oplus`, :func:`oplus_rows`).
Degrees and scalar counts are exact integers below ``2^51`` (:data:`EXACT_LIMIT`; the passes give
up above); ``h`` and ``c`` are rounded up after every step (:func:`round_up`, sized by the caller
for its operations), so every value is at least the exact one. :func:`to_exact` and
:func:`from_exact` convert between the two, rounding up. Zero is ``(−∞, −∞, −∞, −∞)`` and one is
``(0, 0, 0, 0)`` in all four semirings at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from symverify.kernel.ir.scalar import Scalar, Sym, is_zero

__all__ = ["UB", "Val", "ZERO_VAL", "VAR_VAL", "COUNT_CAP", "capped", "scalar_parts", "ExactRules",
           "NEG", "ZERO", "ONE", "VAR", "EXACT_LIMIT", "scalar_rows", "count_caps", "cap_counts", "round_up", "otimes",
           "oplus", "oplus_rows", "to_exact", "from_exact"]

_MANT = 62
_SMALL = 1 << _MANT
COUNT_CAP = 1 << 62
"""Every monomial count is capped here."""


# ---- the exact backend ---------------------------------------------------------------------------


def ub_norm(m: int, e: int) -> tuple[int, int]:
    """``m·2^e`` rounded up to a mantissa of at most 62 bits, as ``(m, e)``."""
    extra = m.bit_length() - _MANT
    if extra <= 0:
        return m, e
    top = m >> extra
    if top << extra != m:
        top += 1
        if top >> _MANT:  # rounding up carried into bit 62: top = 2^62, halve it exactly
            return top >> 1, e + extra + 1
    return top, e + extra


def ub_add(mx: int, ex: int, my: int, ey: int) -> tuple[int, int]:
    """An upper bound on ``mx·2^ex + my·2^ey`` (a gap above 124 bits adds one unit to the larger)."""
    if ex == 0 and ey == 0:
        total = mx + my
        if total < _SMALL:
            return total, 0
    if mx == 0:
        return my, ey
    if my == 0:
        return mx, ex
    if ex >= ey:
        hm, he, lm, le = mx, ex, my, ey
    else:
        hm, he, lm, le = my, ey, mx, ex
    gap = he - le
    return ub_norm(hm + 1, he) if gap > 2 * _MANT else ub_norm((hm << gap) + lm, le)


def ub_mul(mx: int, ex: int, my: int, ey: int) -> tuple[int, int]:
    """An upper bound on ``mx·2^ex · my·2^ey``."""
    prod = mx * my
    return (prod, ex + ey) if prod < _SMALL else ub_norm(prod, ex + ey)


class UB(NamedTuple):
    """An upper bound ``m·2^e`` on a non-negative integer (``m < 2^62``, rounded up).

    >>> UB.of(10) + UB.of(5)
    UB(m=15, e=0)
    >>> UB.of(3**50).bits() >= (3**50).bit_length()
    True
    """

    m: int
    e: int = 0

    @staticmethod
    def of(x: int) -> UB:
        return UB(*ub_norm(abs(x), 0))

    def __add__(self, o: UB) -> UB:  # type: ignore[override]
        return UB(*ub_add(self.m, self.e, o.m, o.e))

    def __mul__(self, o: UB) -> UB:  # type: ignore[override]
        return UB(*ub_mul(self.m, self.e, o.m, o.e))

    def bits(self) -> int:
        """An integer ``H`` with value ``< 2^H``."""
        return 0 if self.m == 0 else self.m.bit_length() + self.e

    def less_than(self, x: int) -> bool:
        """Exactly whether the bound ``m·2^e`` is below ``x``."""
        return (self.m << self.e) < x if self.e < 4 * _MANT else False


Val = tuple[int, int, int, int, int]
"""An exact value's bounds ``(deg, s, m, e, cnt)``: ``ℓ1(Q^s·f) ≤ m·2^e``."""
ZERO_VAL: Val = (-1, 0, 0, 0, 0)
VAR_VAL: Val = (1, 0, 1, 0, 1)
"""An input variable (or a parameter): degree 1, no scalar, ``ℓ1 = 1``, one monomial."""


@lru_cache(maxsize=65536)
def _cap(variables: int, deg: int) -> int:
    if deg > 4096:
        return COUNT_CAP
    return min(math.comb(variables + deg, deg), COUNT_CAP)


def capped(cnt: int, deg: int, variables: int) -> int:
    """The count rule's cap: ``cnt``, or ``C(V+D, D)`` when that is smaller and ``cnt > 64``."""
    return cnt if cnt <= 64 else min(cnt, _cap(max(1, variables), deg))


def scalar_parts(x: Scalar) -> tuple[int, int, Fraction, int] | None:
    """A weight's bounds before any backend: ``(deg, s, Σ|c|, terms)``, None for zero. ``s = 0``
    when every coefficient is an integer (``Q^0·x`` is already integral: masks and integer
    weights cost no factor ``Q``), else 1; a number has degree 0 and one term. A ``Sym``'s
    coefficients are ``Fraction`` already (its canonical form), read as they are; a single term (a
    symbol, a scaled monomial: most weights of a symbolic model) is its monomial's degree and
    ``|c|``, without the sum."""
    if isinstance(x, Sym):
        terms = x.terms
        if len(terms) == 1:
            ((mono, c),) = terms
            c = abs(c)
            return sum(e for _, e in mono), int(c.denominator != 1), c, 1
        coeffs = [abs(c) for _, c in terms]
        return x.degree, int(any(c.denominator != 1 for c in coeffs)), sum(coeffs, Fraction(0)), len(coeffs)
    if is_zero(x):
        return None
    v = abs(Fraction(x))
    return 0, int(v.denominator != 1), v, 1


class ExactRules:
    """The rules on exact values (:data:`Val`) for ``variables`` variables and common denominator ``q``.

    ``add`` and ``mul`` are closures over the context (the circuit pass calls them once per gate).
    """

    def __init__(self, variables: int, q: int = 1) -> None:
        self.variables = max(1, variables)
        self.q = q
        qm, qe = ub_norm(q, 0)
        self._squares: list[tuple[int, int]] = [(qm, qe)]  # q, q^2, q^4, …
        self._qcache: dict[int, tuple[int, int]] = {0: (1, 0)}
        self.add, self.mul = self._rules()

    def _rules(self) -> tuple[Callable[[Val, Val], Val], Callable[[Val, Val], Val]]:
        cap, qpow, v = _cap, self.qpow, self.variables

        def mul(x: Val, y: Val) -> Val:
            dx, sx, mx, ex, cx = x
            dy, sy, my, ey, cy = y
            if dx < 0 or dy < 0:
                return ZERO_VAL
            deg, cnt, m, e = dx + dy, cx * cy, mx * my, ex + ey
            if cnt > 64:
                cnt = min(cnt, cap(v, deg))
            if m >= _SMALL:
                m, e = ub_norm(m, e)
            return (deg, sx + sy, m, e, cnt)

        def add(x: Val, y: Val) -> Val:
            dx, sx, mx, ex, cx = x
            dy, sy, my, ey, cy = y
            if dy < 0:
                return x
            if dx < 0:
                return y
            if sx == sy:
                s = sx
                m, e = ub_add(mx, ex, my, ey)
            elif sx > sy:
                s = sx
                m, e = ub_add(mx, ex, *ub_mul(my, ey, *qpow(sx - sy)))
            else:
                s = sy
                m, e = ub_add(*ub_mul(mx, ex, *qpow(sy - sx)), my, ey)
            deg = dx if dx >= dy else dy
            cnt = cx + cy
            if cnt > 64:
                cnt = min(cnt, cap(v, deg))
            return (deg, s, m, e, cnt)

        return add, mul

    def qpow(self, k: int) -> tuple[int, int]:
        """An upper bound on ``q^k`` as ``(m, e)``: the squarings ``q, q^2, q^4, …`` tabulated once,
        multiplied in for the set bits of ``k`` from the lowest; every partial product (the power
        for the low bits of ``k``) is cached, so a new ``k`` costs one product per set bit above
        its longest cached low part."""
        cache = self._qcache
        hit = cache.get(k)
        if hit is not None:
            return hit
        squares = self._squares
        while len(squares) < k.bit_length():
            squares.append(ub_mul(*squares[-1], *squares[-1]))
        tops: list[int] = []
        low = k
        while low not in cache:
            top = low.bit_length() - 1
            tops.append(top)
            low ^= 1 << top
        m, e = cache[low]
        for top in reversed(tops):
            low |= 1 << top
            m, e = cache[low] = ub_mul(m, e, *squares[top])
        return m, e

    def scalar(self, x: Scalar) -> Val:
        """A weight's value: :func:`scalar_parts` with ``ℓ1(Q^s·x) = Q^s·Σ|c|`` (an integer)."""
        parts = scalar_parts(x)
        if parts is None:
            return ZERO_VAL
        deg, s, l1, terms = parts
        s = s if self.q != 1 else 0  # without denominators s stays 0, as every sum makes it
        return (deg, s, *ub_norm(math.ceil(l1 * self.q**s), 0), terms)


# ---- the numpy backend ---------------------------------------------------------------------------

NEG = -math.inf
ZERO = (NEG, NEG, NEG, NEG)
ONE = (0.0, 0.0, 0.0, 0.0)
VAR = (1.0, 0.0, 0.0, 0.0)
"""An input variable: degree 1, no scalar, ``ℓ1 = 1``, one monomial."""

EXACT_LIMIT = float(1 << 51)
"""Degrees and scalar counts stay below this (float64 integers are exact to ``2^53``)."""
COUNT_CAP_LOG2 = 62.0
CAP_DEGREES = 4097
"""``log2 C(V+D, D)`` is tabulated for ``D < 4097``; the exact rules cap larger degrees at ``2^62``."""
SIXTY_FOUR = 6.01
"""Counts are capped where they exceed 64: ``log2 64 = 6 < 6.01 < log2 65``."""


def _log2_up(x: Fraction) -> float:
    """An upper bound on ``log2 x`` for a rational ``x > 0`` (``math.log2`` is within an ulp; exact,
    0, for ``x = 1``)."""
    a, b = math.log2(x.numerator), math.log2(x.denominator)
    return (a - b) + (a + b) * 2.0**-50


def scalar_rows(scalars: Sequence[Scalar]) -> Any:
    """One row per scalar: :func:`scalar_parts` as ``(deg, s, log2 Σ|c|, log2 terms)`` rounded up
    (a degree from :data:`EXACT_LIMIT` on is ``inf``: rows holding it are not usable), zero's row
    for zero."""
    out = np.empty((len(scalars), 4))
    for k, x in enumerate(scalars):
        parts = scalar_parts(x)
        if parts is None:
            out[k] = ZERO
            continue
        deg, s, l1, terms = parts
        out[k] = (float(deg) if deg < EXACT_LIMIT else math.inf, s, _log2_up(l1), _log2_up(Fraction(terms)))
    return out


@lru_cache(maxsize=64)
def count_caps(variables: int) -> Any:
    """``log2 min(C(V+D, D), 2^62)`` rounded up, for ``D = 0 … 4096``, then ``62`` (index 4097). The
    table is kept (one per ``V``) and handed to every caller: it is read-only, so a caller writing
    into it raises instead of lowering a cap, a count bound, for every later pass."""
    caps = np.full(CAP_DEGREES + 1, COUNT_CAP_LOG2)
    c, limit = 1, 1 << 62
    for d in range(CAP_DEGREES):
        if c >= limit:
            break
        caps[d] = math.log2(c) * (1 + 2.0**-48) + 2.0**-48
        c = c * (variables + d + 1) // (d + 1)
    caps.flags.writeable = False
    return caps


def cap_counts(out: Any, caps: Any) -> None:
    """The count rule's cap on rows, in place: ``c ← min(c, log2 C(V+deg, deg))`` where ``c > log2 64``.
    A degree beyond the table, infinite or NaN takes the table's last (largest) cap: never a cap
    below the row's own (casting ``inf`` or NaN to an index is undefined)."""
    deg = out[:, 0]
    last = len(caps) - 1
    idx = np.where(np.isfinite(deg), np.clip(deg, 0, last), last).astype(np.intp)
    cap = caps[idx]
    np.minimum(out[:, 3], cap, out=out[:, 3], where=out[:, 3] > SIXTY_FOUR)


def round_up(x: Any, rel: float, absolute: Any) -> None:
    """``x ← x·(1 + rel) + absolute`` in place, for ``x ≥ 0`` or ``−∞`` (which stays ``−∞``): after
    its own two roundings, at least ``x + x·(rel − 2^-52) + absolute``. Where values may be
    negative the callers size ``absolute`` for every magnitude and pass ``rel = 0``."""
    if rel:
        x *= 1 + rel
    x += absolute


def otimes(x: Any, y: Any) -> Any:
    """The product rule on rows: every field adds (``(max, +)`` and logarithms of ``(+, ·)``)."""
    return x + y


def oplus(x: Any, y: Any, out: Any) -> Any:
    """The sum rule on rows of two terms into ``out``: ``max`` of ``deg`` and ``s``, ``log2(2^h +
    2^h')`` and ``log2(2^c + 2^c')`` (within ``2^-50`` of the exact value; callers round up)."""
    np.maximum(x[..., :2], y[..., :2], out=out[..., :2])
    np.logaddexp2(x[..., 2:], y[..., 2:], out=out[..., 2:])
    return out


def oplus_rows(terms: Any) -> Any:
    """:func:`oplus` over the second axis of ``(m, t, 4)`` terms (pairwise for up to four, else
    ``max + log2 Σ 2^(x − max)``)."""
    if terms.shape[1] <= 4:
        out = oplus(terms[:, 0], terms[:, 1], np.empty((terms.shape[0], 4)))
        for j in range(2, terms.shape[1]):
            oplus(out, terms[:, j], out)
        return out
    top = terms.max(axis=1)
    base = np.where(np.isfinite(top[:, 2:]), top[:, 2:], 0.0)
    top[:, 2:] = base + np.log2(np.exp2(terms[:, :, 2:] - base[:, None]).sum(axis=1))
    return top


def to_exact(row: Any, q: int) -> Val:
    """A row as an exact value (``ℓ1(Q^s·f) ≤ m·2^e``, ``m < 2^62``), every field rounded up;
    :data:`ZERO_VAL` for zero."""
    deg, s, h, c = (float(x) for x in row)
    if deg == NEG:
        return ZERO_VAL
    si = int(s) if q != 1 else 0
    L = h + si * (math.log2(q) * (1 + 2.0**-50)) if q != 1 else h
    L += abs(L) * 2.0**-50 + 2.0**-40
    m, e = _ub_of_log2(L)
    cnt = COUNT_CAP if not c < 62.0 else min(math.floor(2.0**c * (1 + 2.0**-40)), COUNT_CAP)
    return int(deg), si, m, e, cnt


def _ub_of_log2(L: float) -> tuple[int, int]:
    """``(m, e)`` with ``m < 2^62`` and ``m·2^e ≥`` every integer ``≤ 2^L``."""
    if L < 61.0:
        return max(1, math.floor(2.0 ** max(L, 0.0) * (1 + 2.0**-40))), 0
    whole = math.floor(L)  # a float's floor is exactly representable, so L − whole is exact in [0, 1)
    return math.ceil(2.0 ** (60 + (L - whole)) * (1 + 2.0**-40)), whole - 60


def _add_up(x: float, e: int) -> float:
    """A float at least ``x + e`` (``e ≥ 0`` an integer of any size; ``inf`` beyond float64): the
    conversion of ``e`` and the sum, each rounded to nearest, are moved up by one step each."""
    if not e:
        return x
    try:
        f = float(e)
    except OverflowError:
        return math.inf
    if f < e:
        f = math.nextafter(f, math.inf)
    return math.nextafter(x + f, math.inf)


def from_exact(v: Val) -> tuple[float, float, float, float]:
    """An exact value as a row, ``h`` and ``c`` rounded up (``h`` bounds ``log2 ℓ1(Q^s·f) ≥ log2
    ℓ1(f)``; ``inf``, on which a numpy pass reading it gives up, for an exponent ``e`` beyond float64);
    a degree or scalar count from :data:`EXACT_LIMIT` on is ``inf`` as in :func:`scalar_rows` (a float
    would round it, or overflow beyond ``2^1024``)."""
    deg, s, m, e, cnt = v
    if deg < 0:
        return ZERO
    h = _add_up(math.log2(m) * (1 + 2.0**-50) + 2.0**-40, e) if m else NEG
    c = math.log2(cnt) * (1 + 2.0**-50) + 2.0**-40 if cnt else NEG
    return (float(deg) if deg < EXACT_LIMIT else math.inf, float(s) if s < EXACT_LIMIT else math.inf, h, c)
