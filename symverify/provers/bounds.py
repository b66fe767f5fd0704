"""Certified structural bounds, computed without expanding anything (one interpreter pass).

For every output entry of both sides, :func:`structure_bounds` propagates through the gates or
layers, cell by cell:

* a **degree** bound in the input variables *and* the weight parameters (``+`` takes the max,
  ``*`` adds; a structurally zero branch stays zero, so a layer with ``W = 0`` or ``h = 0`` does
  not double the degree; a certified per-cell degree, not ``2^L``);
* a **height** bound: with ``Q`` the lcm of every denominator in the weights and coefficients and
  ``S`` the number of scalar factors, ``Q^S·f`` has integer coefficients and its ℓ1 norm is
  bounded by ``ℓ1(f+g) ≤ ℓ1(f)+ℓ1(g)``, ``ℓ1(f·g) ≤ ℓ1(f)·ℓ1(g)`` (kept as a rounded-up
  ``m·2^e``). A nonzero integer coefficient ``c`` has at most ``log2|c| / 61`` prime factors
  ``≥ 2^61`` and none at all when ``|c| < p``: this is what makes a randomized pass mod ``p`` sound
  (the difference must not vanish mod ``p`` as a polynomial);
* a **monomial count** bound (sums add, products multiply, both capped by ``C(V+D, D)``): the
  size estimate that guards exact expansion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

from symverify.deadline import Check, as_check
from symverify.ir.scalar import Scalar, Sym, power
from symverify.provers.sides import CircuitSide, KaleidoscopeSide, ModelSide, Side, assert_never
from symverify.semantics.evaluate import crop, embed, eval_circuit_nodes, eval_layer

__all__ = ["UB", "BoundValue", "BoundRing", "Bounds", "structure_bounds", "common_denominator", "layers_peak",
           "monomial_cap", "COUNT_CAP"]

_MANT = 62
_COUNT_CAP = COUNT_CAP = 1 << 62


_SMALL = 1 << _MANT


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
        return _norm(abs(x), 0)

    def __add__(self, o: UB) -> UB:  # type: ignore[override]
        if self.e == 0 and o.e == 0:
            total = self.m + o.m
            if total < _SMALL:
                return UB(total, 0)
        if self.m == 0:
            return o
        if o.m == 0:
            return self
        hi, lo = (self, o) if self.e >= o.e else (o, self)
        gap = hi.e - lo.e
        if gap > 2 * _MANT:
            return _norm(hi.m + 1, hi.e)
        return _norm((hi.m << gap) + lo.m, lo.e)

    def __mul__(self, o: UB) -> UB:  # type: ignore[override]
        prod = self.m * o.m
        if prod < _SMALL:
            return UB(prod, self.e + o.e)
        return _norm(prod, self.e + o.e)

    def pow(self, k: int) -> UB:
        return UB(1) if k == 0 else power(self, k)

    def bits(self) -> int:
        """An integer ``H`` with value ``< 2^H``."""
        return 0 if self.m == 0 else self.m.bit_length() + self.e

    def less_than(self, x: int) -> bool:
        """Exactly whether the bound ``m·2^e`` is below ``x``."""
        return (self.m << self.e) < x if self.e < 4 * _MANT else False


def _norm(m: int, e: int) -> UB:
    extra = m.bit_length() - _MANT
    if extra <= 0:
        return UB(m, e)
    top = m >> extra
    if top << extra != m:
        top += 1
    return _norm(top, e + extra) if top.bit_length() > _MANT else UB(top, e + extra)


_ZERO_DEG = -1


class BoundValue:
    """Bounds on one value: degree (−1: structurally zero), scalar count S, ℓ1 of ``Q^S·f``, terms."""

    __slots__ = ("cnt", "ctx", "deg", "l1", "s")

    def __init__(self, deg: int, s: int, l1: UB, cnt: int, ctx: BoundRing) -> None:
        self.deg, self.s, self.l1, self.cnt, self.ctx = deg, s, l1, cnt, ctx

    def __add__(self, o: BoundValue) -> BoundValue:
        if o.deg < 0:
            return self
        if self.deg < 0:
            return o
        ctx = self.ctx
        if ctx.q == 1:
            s, l1 = 0, self.l1 + o.l1
        else:
            s = max(self.s, o.s)
            l1 = self.l1 * ctx.qpow(s - self.s) + o.l1 * ctx.qpow(s - o.s)
        deg = self.deg if self.deg >= o.deg else o.deg
        cnt = self.cnt + o.cnt
        if cnt > 64:
            cnt = min(cnt, ctx.cap(deg))
        return BoundValue(deg, s, l1, cnt, ctx)

    def __mul__(self, o: BoundValue) -> BoundValue:
        if self.deg < 0 or o.deg < 0:
            return self.ctx.zero
        one = self.ctx.one  # multiplying by the exact scalar 1 (masks, impulses) changes no bound
        if o is one:
            return self
        if self is one:
            return o
        deg = self.deg + o.deg
        cnt = self.cnt * o.cnt
        if cnt > 64:
            cnt = min(cnt, self.ctx.cap(deg))
        return BoundValue(deg, self.s + o.s, self.l1 * o.l1, cnt, self.ctx)

    def __repr__(self) -> str:
        return f"BoundValue(deg={self.deg}, s={self.s}, l1_bits={self.l1.bits()}, terms≤{self.cnt})"


class BoundRing:
    """The interpreter ring of :class:`BoundValue` (``variables`` = inputs + parameters)."""

    falsy_is_zero: ClassVar[bool] = False

    def __init__(self, variables: int, q: int = 1) -> None:
        self.variables = max(1, variables)
        self.q = q
        self._qub = UB.of(q)
        self.zero = BoundValue(_ZERO_DEG, 0, UB(0), 0, self)
        self.var = BoundValue(1, 0, UB(1), 1, self)
        self._scalars: dict[Any, BoundValue] = {}
        self.one = self.coerce(1) if q == 1 else None

    def qpow(self, k: int) -> UB:
        return UB(1) if self.q == 1 or k == 0 else _qpow(self._qub, k)

    def cap(self, deg: int) -> int:
        return _cap(self.variables, deg)

    def coerce(self, x: Scalar) -> BoundValue:
        key = (type(x), x)
        hit = self._scalars.get(key)
        if hit is None:
            hit = self._scalars[key] = self._scalar(x)
        return hit

    def _scalar(self, x: Scalar) -> BoundValue:
        s = 1 if self.q != 1 else 0
        if isinstance(x, Sym):
            l1 = UB(0)
            for _, c in x.terms:
                l1 = l1 + UB.of(int(c * self.q))
            deg = max(sum(e for _, e in mono) for mono, _ in x.terms)
            return BoundValue(deg, s, l1, len(x.terms), self)
        if x == 0:
            return self.zero
        return BoundValue(0, s, UB.of(int(Fraction(x) * self.q)), 1, self)

    def reduce(self, x: BoundValue) -> BoundValue:
        return x


@lru_cache(maxsize=4096)
def _qpow(q: UB, k: int) -> UB:
    return q.pow(k)


@lru_cache(maxsize=65536)
def _cap(variables: int, deg: int) -> int:
    if deg > 4096:
        return _COUNT_CAP
    return min(math.comb(variables + deg, deg), _COUNT_CAP)


def monomial_cap(variables: int, degree: int) -> int:
    """``C(V+D, D)`` (capped at :data:`COUNT_CAP`): the monomials of degree ``≤ D`` in ``V`` variables."""
    return 0 if degree < 0 else _cap(max(1, variables), degree)


def common_denominator(*sides: Side) -> int:
    """The lcm ``Q`` of every denominator in the weights, coefficients and parameter expressions."""
    q = 1
    for side in sides:
        for x in _scalars_of(side):
            if isinstance(x, Sym):
                for _, c in x.terms:
                    q = math.lcm(q, c.denominator)
            elif isinstance(x, Fraction):
                q = math.lcm(q, x.denominator)
    return q


def _scalars_of(side: Side) -> Any:
    match side:
        case CircuitSide(obj=c):
            for g in c.gates:
                yield from g.coeffs
        case ModelSide(obj=m):
            for layer in m.layers:
                for _, grid in layer.grids():
                    yield from grid.values()
        case KaleidoscopeSide(obj=k):
            for group in k.groups:
                for f in group.factors:
                    for diag in (f.d1, f.d2, f.d3, f.d4):
                        yield from diag
        case _:
            assert_never(side)


@dataclass(frozen=True)
class Bounds:
    """Structural bounds for a pair of sides (see the module docstring).

    ``degree``: max over entries of both sides (bounds the degree of every difference);
    ``height_bits``: every nonzero integer coefficient of ``Q^S·(lhs − rhs)`` at any entry is
    ``< 2^height_bits``; ``height_below_p``: the same bound is already ``< 2^61 − 1``;
    ``monomials``: the total monomials of both sides' outputs (an upper bound);
    ``peak_monomials``: the monomials alive at once while both sides are expanded (an upper bound,
    padding cells and intermediate nodes included): what the exact method's memory guard uses.
    """

    degree: int
    height_bits: int
    height_below_m61: bool
    monomials: int
    peak_monomials: int
    variables: int
    denominator: int

    def to_json(self) -> dict[str, Any]:
        return {
            "degree": self.degree,
            "height_bits": self.height_bits,
            "monomials_estimate": self.monomials,
            "peak_monomials_estimate": self.peak_monomials,
            "variables": self.variables,
            "common_denominator": self.denominator,
        }


M61 = (1 << 61) - 1


def _total(values: Any) -> int:
    return min(sum(v.cnt for row in values for v in row), _COUNT_CAP)


def layers_peak(layers: Any, state: list[list[BoundValue]], ring: BoundRing,
                check: Check | None = None) -> tuple[list[list[BoundValue]], int]:
    """The state after ``layers`` and the peak of live monomials while they run (two whole
    ``N'×d'`` states, padding cells included); ``check`` as in :func:`structure_bounds`."""
    peak = _total(state)
    for layer in layers:
        if check is not None:
            check()
        new = eval_layer(layer, state, ring, check)
        peak = max(peak, min(_total(state) + _total(new), _COUNT_CAP))
        state = new
    return state, peak


def _run(side: Side, u: list[list[BoundValue]], ring: BoundRing, check: Check | None = None) -> tuple[list[list[BoundValue]], int]:
    """The side's outputs and its peak of live monomials while the interpreter runs it.

    A model keeps two whole ``N'×d'`` states alive (padding cells included); a circuit keeps every
    node value; a butterfly pass keeps two vectors.
    """
    match side:
        case ModelSide(obj=m):
            state, peak = layers_peak(m.layers, embed(u, m.inner_n, m.inner_d, ring.zero), ring, check)
            return crop(state, m.n, m.d), peak
        case CircuitSide(obj=c):
            vals = eval_circuit_nodes(c, [v for row in u for v in row], ring, check)
            flat = [vals[o] for o in c.outputs] + [ring.zero] * (c.num_inputs - len(c.outputs))
            return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)], _total([vals])
        case KaleidoscopeSide(obj=k):
            out = side.evaluate(u, ring, check)
            return out, min(2 * k.size * max(1, _total(out)), _COUNT_CAP)
        case _:
            assert_never(side)


def structure_bounds(lhs: Side, rhs: Side, *, deadline: float | Check | None = None) -> Bounds:
    """One :class:`BoundRing` pass over both sides.

    ``deadline`` (a ``time.monotonic()`` value, or a checker from :mod:`symverify.deadline` such
    as ``Options.checker()``) is polled every few hundred operations and between layers: once it
    has passed, :class:`~symverify.deadline.DeadlineExceededError` is raised (callers answer
    ``unknown``), so the pass never runs more than a few milliseconds past the deadline.
    """
    check = as_check(deadline)
    if check is not None:
        check()
    params = lhs.params() | rhs.params()
    q = common_denominator(lhs, rhs)
    ring = BoundRing(lhs.num_inputs + len(params), q)
    u = [[ring.var] * lhs.d for _ in range(lhs.n)]
    a, peak_a = _run(lhs, u, ring, check)
    b, peak_b = (a, peak_a) if rhs.obj is lhs.obj else _run(rhs, u, ring, check)
    degree, bits, below, count = -1, 0, True, 0
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            degree = max(degree, x.deg, y.deg)
            count = min(count + x.cnt + y.cnt, _COUNT_CAP)
            s = max(x.s, y.s)
            l1 = x.l1 * ring.qpow(s - x.s) + y.l1 * ring.qpow(s - y.s)
            bits = max(bits, l1.bits())
            below = below and l1.less_than(M61)
    return Bounds(max(degree, 0), bits, below, count, min(peak_a + peak_b, _COUNT_CAP), ring.variables, q)
