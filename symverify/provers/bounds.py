"""Certified structural bounds, computed without expanding anything (one pass over each side).

For every output entry of both sides, :func:`structure_bounds` propagates through the gates or
layers, cell by cell:

* a **degree** bound in the input variables *and* the weight parameters (``+`` takes the max,
  ``*`` adds; a structurally zero branch stays zero, so a layer with ``W = 0`` or ``h = 0`` does
  not double the degree; a certified per-cell degree, not ``2^L``);
* a **height** bound: with ``Q`` the lcm of every denominator in the weights and coefficients and
  ``S`` the number of non-integral scalar factors (integer weights and masks add none), ``Q^S·f``
  has integer coefficients and its ℓ1 norm is
  bounded by ``ℓ1(f+g) ≤ ℓ1(f)+ℓ1(g)``, ``ℓ1(f·g) ≤ ℓ1(f)·ℓ1(g)`` (kept as a rounded-up
  ``m·2^e``). A nonzero integer coefficient ``c`` has at most ``log2|c| / 61`` prime factors
  ``≥ 2^61`` and none at all when ``|c| < p``: this is what makes a randomized pass mod ``p`` sound
  (the difference must not vanish mod ``p`` as a polynomial);
* a **monomial count** bound (sums add, products multiply, both capped by ``C(V+D, D)``): the
  size estimate that guards exact expansion.

The three are evaluations in semirings (``(max, +)``; ``(+, ·)`` on ``ℓ1`` norms and counts), so
large circuits and models are bounded with numpy, a level of gates or a layer at a time, in
float64 rounded up (:mod:`symverify.provers.bounds_vector`, :mod:`symverify.provers.bounds_layers`):
the same degrees and scalar counts, heights at most a bit above. The exact pass below answers
for small circuits and where those give up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

from symverify.deadline import CHECK_EVERY, Check, as_check
from symverify.ir.memo import IdentityMemo
from symverify.ir.scalar import Scalar, Sym, param_names, power
from symverify.provers.bounds_layers import Rects, model_rows, read_rects
from symverify.provers.bounds_vector import circuit_rows, scalar_rows, to_bounds, total_count
from symverify.provers.sides import CircuitSide, KaleidoscopeSide, ModelSide, Side, assert_never
from symverify.semantics.evaluate import crop, embed, eval_layer
from symverify.semantics.straightline import CONST, LIN, MUL, SCALE, program

__all__ = ["UB", "BoundValue", "BoundRing", "Bounds", "structure_bounds", "common_denominator", "layers_peak", "bound_rows",
           "monomial_cap", "COUNT_CAP", "circuit_bounds"]

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


def _mul_t(m1: int, e1: int, m2: int, e2: int) -> tuple[int, int]:
    """``UB(m1, e1) * UB(m2, e2)`` as a pair (the same steps as :meth:`UB.__mul__`)."""
    prod = m1 * m2
    if prod < _SMALL:
        return prod, e1 + e2
    return _normt(prod, e1 + e2)


def _norm(m: int, e: int) -> UB:
    return UB(*_normt(m, e))


def _normt(m: int, e: int) -> tuple[int, int]:
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
        self._squares: list[tuple[int, int]] = [(self._qub.m, self._qub.e)]  # q, q^2, q^4, … as UB.pow computes them
        self._qcache: dict[int, tuple[int, int]] = {0: (1, 0)}
        self.zero = BoundValue(_ZERO_DEG, 0, UB(0), 0, self)
        self.var = BoundValue(1, 0, UB(1), 1, self)
        self._scalars: dict[Any, BoundValue] = {}
        self.one = self.coerce(1)

    def qpow(self, k: int) -> UB:
        """``UB.of(q).pow(k)``: the same squarings and products (:meth:`qpow_t`)."""
        return UB(1) if self.q == 1 or k == 0 else UB(*self.qpow_t(k))

    def qpow_t(self, k: int) -> tuple[int, int]:
        """:meth:`qpow` as a pair ``(m, e)``: the squarings ``q, q^2, q^4, …`` of :meth:`UB.pow`
        tabulated once, multiplied in for the set bits of ``k`` from the lowest, as
        :meth:`UB.pow` does. Every partial product is the power for the low bits of ``k``, so it
        is cached and reused: a new ``k`` costs one product per set bit above its longest cached
        low part."""
        cache = self._qcache
        hit = cache.get(k)
        if hit is not None:
            return hit
        squares = self._squares
        while len(squares) < k.bit_length():
            sm, se = squares[-1]
            squares.append(_mul_t(sm, se, sm, se))
        tops: list[int] = []
        low = k
        while low not in cache:
            top = low.bit_length() - 1
            tops.append(top)
            low ^= 1 << top
        m, e = cache[low]
        for top in reversed(tops):
            low |= 1 << top
            m, e = _mul_t(m, e, *squares[top])
            cache[low] = (m, e)
        return m, e

    def cap(self, deg: int) -> int:
        return _cap(self.variables, deg)

    def coerce(self, x: Scalar) -> BoundValue:
        key = (type(x), x)
        hit = self._scalars.get(key)
        if hit is None:
            hit = self._scalars[key] = self._scalar(x)
        return hit

    def _scalar(self, x: Scalar) -> BoundValue:
        """A weight's bound: ``s = 0`` when its coefficients are integers (``Q^0·x`` is already
        integral: masks and integer weights cost no factor ``Q``), else ``s = 1``."""
        if isinstance(x, Sym):
            s = 0 if all(Fraction(c).denominator == 1 for _, c in x.terms) else 1
            l1 = UB(0)
            for _, c in x.terms:
                l1 = l1 + UB.of(int(c * self.q**s))
            deg = max(sum(e for _, e in mono) for mono, _ in x.terms)
            return BoundValue(deg, s, l1, len(x.terms), self)
        if x == 0:
            return self.zero
        v = Fraction(x)
        s = 0 if v.denominator == 1 else 1
        return BoundValue(0, s, UB.of(int(v * self.q**s)), 1, self)

    def reduce(self, x: BoundValue) -> BoundValue:
        return x


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
            yield from program(c).scalars  # the distinct coefficients
        case ModelSide(obj=m):
            yield from _model_rects(m).values
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
    padding cells and intermediate nodes included): what the exact method's memory guard uses;
    ``peak_height_bits``, ``peak_degree``: the same height and degree bounds over every
    intermediate value of both sides, not only the outputs (a constant squared 64 times and then
    multiplied by zero has an output of height 0 but a value of ``2^64`` bits on the way): what the
    size guards of exact expansion and exact evaluation weigh, with the monomial counts.
    """

    degree: int
    height_bits: int
    height_below_m61: bool
    monomials: int
    peak_monomials: int
    variables: int
    denominator: int
    peak_height_bits: int = 0
    peak_degree: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "degree": self.degree,
            "height_bits": self.height_bits,
            "monomials_estimate": self.monomials,
            "peak_monomials_estimate": self.peak_monomials,
            "variables": self.variables,
            "common_denominator": self.denominator,
            "peak_height_bits": self.peak_height_bits,
        }


M61 = (1 << 61) - 1


def _total(values: Any) -> int:
    return min(sum(v.cnt for row in values for v in row), _COUNT_CAP)


def bound_rows(state: list[list[BoundValue]]) -> Any:
    """A state of :class:`BoundValue` as the numpy rows of :mod:`~symverify.provers.bounds_vector`
    (``(deg, s, log2 ℓ1, log2 cnt)`` per cell, row-major), heights and counts rounded up: the
    ``start`` of :func:`~symverify.provers.bounds_layers.model_rows`."""
    import numpy as np

    cells = [v for row in state for v in row]
    out = np.full((len(cells), 4), -math.inf)
    for k, v in enumerate(cells):
        if v.deg >= 0:
            m, e = v.l1
            h = (math.log2(m) * (1 + 2.0**-50) + 2.0**-40 + e) if m else -math.inf
            c = math.log2(v.cnt) * (1 + 2.0**-50) + 2.0**-40 if v.cnt else -math.inf
            out[k] = (v.deg, v.s, h, c)
    return out


def layers_peak(layers: Any, state: list[list[BoundValue]], ring: BoundRing,
                check: Check | None = None, sizes: list[int] | None = None) -> tuple[list[list[BoundValue]], int]:
    """The state after ``layers`` and the peak of live monomials while they run (two whole
    ``N'×d'`` states, padding cells included); ``check`` as in :func:`structure_bounds`.
    ``sizes``, when given, receives ``[peak height bits, peak degree]`` over every state."""
    peak = _total(state)
    for layer in layers:
        if check is not None:
            check()
        new = eval_layer(layer, state, ring, check)
        peak = max(peak, min(_total(state) + _total(new), _COUNT_CAP))
        state = new
        if sizes is not None:
            sizes[:] = _sizes(state, sizes)
    return state, peak


def _sizes(values: Any, start: list[int]) -> list[int]:
    """``[max height bits, max degree]`` of ``values`` (rows of :class:`BoundValue`) and ``start``."""
    hb, dg = start
    for row in values:
        for v in row:
            if v.deg >= 0:
                hb, dg = max(hb, v.l1.bits()), max(dg, v.deg)
    return [hb, dg]


_Val = tuple[int, int, int, int, int]
"""A :class:`BoundValue` as a plain tuple ``(deg, s, m, e, cnt)``, ``l1 ≤ m·2^e``."""


def _ub_add(mx: int, ex: int, my: int, ey: int) -> tuple[int, int]:
    """``UB(mx, ex) + UB(my, ey)`` as a pair (the same steps as :meth:`UB.__add__`)."""
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
    return _normt(hm + 1, he) if gap > 2 * _MANT else _normt((hm << gap) + lm, le)


def circuit_bounds(c: Any, ring: BoundRing, check: Check | None = None) -> tuple[list[BoundValue], int]:
    """The :class:`BoundValue` of every output of circuit ``c`` on inputs ``ring.var``, and the sum of
    the monomial bounds over all nodes (capped): one linear pass over the circuit's straight-line
    code (:mod:`symverify.semantics.straightline`) on plain integer tuples.

    The steps are those of :class:`BoundValue` ``+`` and ``*`` under the interpreter
    (:func:`~symverify.semantics.evaluate.eval_circuit_nodes`), written out on ``(deg, s, m, e,
    cnt)``: the result is the same as running the interpreter over ``ring`` (the tests compare the
    two), without an object per operation. ``check`` runs every few hundred gates. The result is
    cached per circuit object, ``q`` and variable count (the only inputs of the pass).
    """
    key = (ring.q, ring.variables)
    outs, peak = _CIRCUIT_BOUNDS(c, lambda: _circuit_pass(c, ring, check), key)
    if _PEAKS.get(c, key) is None:  # evicted since: the pass puts it again
        _circuit_pass(c, ring, check)
    return [BoundValue(d, s, UB(m, e), n, ring) if d >= 0 else ring.zero for d, s, m, e, n in outs], peak


_CIRCUIT_BOUNDS: IdentityMemo[tuple[list[_Val], int]] = IdentityMemo(16)
"""Results of :func:`circuit_bounds` per (circuit object, ``q``, variables): the pass is a function of
these alone, and circuits are immutable."""


_PEAKS: IdentityMemo[tuple[int, int]] = IdentityMemo(64)
"""``(peak height bits, peak degree)`` over every value of a side's evaluation, per (object, ``q``,
variables), put by the passes that see every value (larger than the result memos, so a cached
result always finds its peak here)."""


def _peak_put(obj: Any, ring: BoundRing, summary: list[float]) -> None:
    h, d = summary
    _PEAKS.put(obj, (math.ceil(h * (1 + 2.0**-40)) + 1, math.ceil(d)), (ring.q, ring.variables))


VECTOR_GATES = 2048
"""Circuits of at least this many gates are bounded by :func:`_circuit_vector` first."""


def _circuit_pass(c: Any, ring: BoundRing, check: Check | None) -> tuple[list[_Val], int]:
    """:func:`_circuit_vector` when it answers, else :func:`_circuit_exact`."""
    fast = _circuit_vector(c, ring, check) if len(program(c).code) >= VECTOR_GATES else None
    return fast if fast is not None else _circuit_exact(c, ring, check)


def _circuit_vector(c: Any, ring: BoundRing, check: Check | None) -> tuple[list[_Val], int] | None:
    """The bounds of :func:`_circuit_exact` evaluated level by level with numpy
    (:mod:`symverify.provers.bounds_vector`): the same degrees, scalar counts and (below ``2^53``)
    monomial counts; heights rounded up, at most a bit above. None where that module gives up
    (a deep narrow circuit, a degree of ``2^51`` or more)."""
    prog = program(c)
    summary = [0.0, 0.0]
    rows = circuit_rows(prog, scalar_rows(prog.scalars), ring.variables, ring.q, check, summary=summary)
    if rows is None:
        return None
    _peak_put(c, ring, summary)
    outs, counts = rows
    return [to_bounds(r, ring.q) for r in outs], total_count(counts)


def _circuit_exact(c: Any, ring: BoundRing, check: Check | None) -> tuple[list[_Val], int]:
    """The steps of :class:`BoundValue` ``+`` and ``*`` over the straight-line code, one gate at a time."""
    prog = program(c)
    q, small, cap, qpow = ring.q, _SMALL, ring.cap, ring.qpow_t
    zero: _Val = (_ZERO_DEG, 0, 0, 0, 0)
    sc: list[_Val] = []
    for x in prog.scalars:
        bv = ring.coerce(x)
        sc.append((bv.deg, bv.s, bv.l1.m, bv.l1.e, bv.cnt))
    vals: list[_Val] = [(1, 0, 1, 0, 1)] * c.num_inputs
    ap = vals.append

    def mul(x: _Val, y: _Val) -> _Val:
        dx, sx, mx, ex, cx = x
        dy, sy, my, ey, cy = y
        if dx < 0 or dy < 0:
            return zero
        deg = dx + dy
        cnt = cx * cy
        if cnt > 64:
            cnt = min(cnt, cap(deg))
        m, e = mx * my, ex + ey
        if m >= small:
            m, e = _normt(m, e)
        return (deg, sx + sy, m, e, cnt)

    def add(x: _Val, y: _Val) -> _Val:
        dx, sx, mx, ex, cx = x
        dy, sy, my, ey, cy = y
        if dy < 0:
            return x
        if dx < 0:
            return y
        if q == 1:
            s = 0
            m, e = _ub_add(mx, ex, my, ey)
        elif sx == sy:
            s = sx
            m, e = _ub_add(mx, ex, my, ey)
        elif sx > sy:
            s = sx
            m, e = _ub_add(mx, ex, *_mul_t(my, ey, *qpow(sx - sy)))
        else:
            s = sy
            m, e = _ub_add(*_mul_t(mx, ex, *qpow(sy - sx)), my, ey)
        deg = dx if dx >= dy else dy
        cnt = cx + cy
        if cnt > 64:
            cnt = min(cnt, cap(deg))
        return (deg, s, m, e, cnt)

    code = prog.code
    step = CHECK_EVERY if check is not None else max(len(code), 1)
    for start in range(0, len(code), step):
        if check is not None:
            check()
        for k, a, b, i, j in code[start : start + step]:
            if k == MUL:  # mul(vals[a], vals[b]), written out
                dx, sx, mx, ex, cx = vals[a]
                dy, sy, my, ey, cy = vals[b]
                if dx < 0 or dy < 0:
                    ap(zero)
                    continue
                deg = dx + dy
                cnt = cx * cy
                if cnt > 64:
                    cnt = min(cnt, _COUNT_CAP if deg > 4096 else cap(deg))  # as _cap
                m, e = mx * my, ex + ey
                if m >= small:
                    m, e = _normt(m, e)
                ap((deg, sx + sy, m, e, cnt))
            elif k == LIN:
                ap(add(mul(sc[i], vals[a]), mul(sc[j], vals[b])))
            elif k == SCALE:
                ap(mul(sc[i], vals[a]))
            elif k == CONST:
                ap(sc[i])
            else:
                ap(zero)
    total = hb = dg = 0
    for v in vals:
        total += v[4]
        if v[0] >= 0:
            hb = max(hb, v[2].bit_length() + v[3])
            dg = max(dg, v[0])
    _PEAKS.put(c, (hb, dg), (q, ring.variables))
    return [vals[o] for o in c.outputs], min(total, _COUNT_CAP)


def _model_vector(m: Any, ring: BoundRing, check: Check | None) -> tuple[list[list[BoundValue]], int] | None:
    """The model's outputs and peak as :func:`layers_peak` bounds them, evaluated layer by layer
    with numpy over the live cells (:mod:`symverify.provers.bounds_layers`): the same degrees and
    scalar counts, heights and monomial counts rounded up (at least :func:`layers_peak`'s). None
    beyond that module's limits. Cached per model object, ``q`` and variable count."""
    key = (ring.q, ring.variables)
    hit = _MODEL_BOUNDS.get(m, key)
    if hit is None or _PEAKS.get(m, key) is None:
        summary = [0.0, 1.0]
        rows = model_rows(m.layers, _model_rects(m), m.n, m.d, m.inner_n, m.inner_d, scalar_rows,
                          ring.variables, ring.q, check, summary)
        if rows is None:
            return None
        _peak_put(m, ring, summary)
        out, peak = rows
        vals = [to_bounds(r, ring.q) for r in out]
        total = _COUNT_CAP if not peak < _COUNT_CAP else min(math.floor(peak), _COUNT_CAP)
        hit = _MODEL_BOUNDS.put(m, (vals, total), key)
    flat = [BoundValue(d, s, UB(mm, e), n, ring) if d >= 0 else ring.zero for d, s, mm, e, n in hit[0]]
    return [flat[i * m.d : (i + 1) * m.d] for i in range(m.n)], hit[1]


_MODEL_BOUNDS: IdentityMemo[tuple[list[_Val], int]] = IdentityMemo(16)
"""Results of :func:`_model_vector` per (model object, ``q``, variables), as :data:`_CIRCUIT_BOUNDS`."""


def _run(side: Side, u: list[list[BoundValue]], ring: BoundRing, check: Check | None = None) -> tuple[list[list[BoundValue]], int]:
    """The side's outputs and its peak of live monomials while the interpreter runs it.

    A model keeps two whole ``N'×d'`` states alive (padding cells included); a circuit keeps every
    node value; a butterfly pass keeps two vectors.
    """
    match side:
        case ModelSide(obj=m):
            fast = _model_vector(m, ring, check)
            if fast is not None:
                return fast
            sizes = [0, 1]
            state, peak = layers_peak(m.layers, embed(u, m.inner_n, m.inner_d, ring.zero), ring, check, sizes)
            _PEAKS.put(m, (sizes[0], sizes[1]), (ring.q, ring.variables))
            return crop(state, m.n, m.d), peak
        case CircuitSide(obj=c):
            outs, peak = circuit_bounds(c, ring, check)
            flat = outs + [ring.zero] * (c.num_inputs - len(c.outputs))
            return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)], peak
        case KaleidoscopeSide(obj=k):
            out = side.evaluate(u, ring, check)
            return out, min(2 * k.size * max(1, _total(out)), _COUNT_CAP)
        case _:
            assert_never(side)


def _params(side: Side) -> frozenset[str]:
    """The side's parameter names, from its distinct values (a circuit's cached program, a
    model's :func:`_model_rects`)."""
    if isinstance(side, CircuitSide):
        return param_names(program(side.obj).scalars)
    if isinstance(side, ModelSide):
        return param_names(_model_rects(side.obj).values)
    return side.params()


def _model_rects(m: Any) -> Rects:
    """A model's grids read once (:func:`~symverify.provers.bounds_layers.read_rects`: their distinct
    values, for the denominator and the parameters, and the rectangles the numpy pass paints),
    cached per model object (models are immutable)."""
    return _MODEL_RECTS(m, lambda: read_rects(m.layers))


_MODEL_RECTS: IdentityMemo[Rects] = IdentityMemo(16)
"""Results of :func:`_model_rects` per model object."""


def structure_bounds(lhs: Side, rhs: Side, *, deadline: float | Check | None = None) -> Bounds:
    """One pass over both sides: numpy over a large circuit's levels or a model's layers
    (:func:`_circuit_vector`, :func:`_model_vector`), else the exact :class:`BoundRing` pass.

    ``deadline`` (a ``time.monotonic()`` value, or a checker from :mod:`symverify.deadline` such
    as ``Options.checker()``) is polled every few hundred operations and between layers: once it
    has passed, :class:`~symverify.deadline.DeadlineExceededError` is raised (callers answer
    ``unknown``), so the pass never runs more than a few milliseconds past the deadline.
    """
    check = as_check(deadline)
    if check is not None:
        check()
    params = _params(lhs) | _params(rhs)
    q = common_denominator(lhs, rhs)
    ring = BoundRing(lhs.num_inputs + len(params), q)
    u = [[ring.var] * lhs.d for _ in range(lhs.n)]
    a, peak_a = _run(lhs, u, ring, check)
    b, peak_b = (a, peak_a) if rhs.obj is lhs.obj else _run(rhs, u, ring, check)
    sizes = _sizes(a, _sizes(b, [0, 0]))
    for side in (lhs, rhs):
        hit = _PEAKS.get(side.obj, (ring.q, ring.variables))
        if hit is not None:
            sizes = [max(sizes[0], hit[0]), max(sizes[1], hit[1])]
    degree, bits, below, count = -1, 0, True, 0
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            degree = max(degree, x.deg, y.deg)
            count = min(count + x.cnt + y.cnt, _COUNT_CAP)
            s = max(x.s, y.s)
            l1 = x.l1 * ring.qpow(s - x.s) + y.l1 * ring.qpow(s - y.s)
            bits = max(bits, l1.bits())
            below = below and l1.less_than(M61)
    return Bounds(max(degree, 0), bits, below, count, min(peak_a + peak_b, _COUNT_CAP), ring.variables, q,
                  max(sizes[0], bits), max(sizes[1], degree, 0))
