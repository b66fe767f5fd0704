"""Certified structural bounds, computed without expanding anything (one pass over each side).

For every output entry of both sides, :func:`structure_bounds` evaluates the bound rules of
:mod:`symverify.kernel.provers.bound_rules` through the gates or layers, cell by cell: a **degree** bound
in the inputs *and* the weight parameters (a structurally zero branch stays zero, so a layer with
``W = 0`` or ``h = 0`` does not double the degree: a certified per-cell degree, not ``2^L``); a
**height** bound on ``ℓ1(Q^S·f)``, with ``Q`` the lcm of every denominator and ``S`` the number of
non-integral scalar factors, so ``Q^S·f`` has integer coefficients (a nonzero integer coefficient
``c`` has at most ``log2|c| / 61`` prime factors ``≥ 2^61`` and none at all when ``|c| < p``: this
is what makes a randomized pass mod ``p`` sound); a **monomial count** bound: the size estimate
that guards exact expansion.

Large circuits and models are bounded with the rules' numpy backend, a level of gates or a layer
at a time (:mod:`symverify.kernel.provers.bounds_vector`, :mod:`symverify.kernel.provers.bounds_layers`): the same
degrees and scalar counts, heights at most a bit above. The exact backend answers for small
circuits and where those give up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from symverify.deadline import CHECK_EVERY, Check, as_check
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.ir.scalar import Scalar, Sym, param_names
from symverify.kernel.provers import bound_rules as rules
from symverify.kernel.provers.bound_rules import COUNT_CAP, UB, VAR_VAL, ZERO_VAL, ExactRules, Val
from symverify.kernel.provers.bounds_layers import Rects, model_rows, read_rects
from symverify.kernel.provers.bounds_vector import circuit_rows, total_count
from symverify.kernel.provers.sides import CircuitSide, KaleidoscopeSide, ModelSide, Side, assert_never
from symverify.kernel.semantics.evaluate import crop, embed, eval_layer
from symverify.kernel.semantics.straightline import CONST, LIN, MUL, SCALE, program

__all__ = ["UB", "BoundValue", "BoundRing", "Bounds", "structure_bounds", "common_denominator", "layers_peak", "bound_rows",
           "COUNT_CAP", "circuit_bounds", "eval_code"]


class BoundValue:
    """Bounds on one value: an exact :data:`~symverify.kernel.provers.bound_rules.Val` ``(deg, s, m, e,
    cnt)`` (degree, −1 when structurally zero; scalar count ``S``; ``ℓ1(Q^S·f) ≤ m·2^e``; terms);
    ``+`` and ``*`` are the rules of :class:`~symverify.kernel.provers.bound_rules.ExactRules`."""

    __slots__ = ("ctx", "v")

    def __init__(self, v: Val, ctx: BoundRing) -> None:
        self.v, self.ctx = v, ctx

    deg = property(lambda self: self.v[0])
    s = property(lambda self: self.v[1])
    l1 = property(lambda self: UB(self.v[2], self.v[3]))
    cnt = property(lambda self: self.v[4])

    def __add__(self, o: BoundValue) -> BoundValue:
        return self if o.v[0] < 0 else o if self.v[0] < 0 else BoundValue(self.ctx.add(self.v, o.v), self.ctx)

    def __mul__(self, o: BoundValue) -> BoundValue:
        ctx = self.ctx  # the exact scalar 1 (masks, impulses) changes no bound: a shortcut, not a rule
        if o is ctx.one or self is ctx.one:
            return self if o is ctx.one else o
        return ctx.zero if self.v[0] < 0 or o.v[0] < 0 else BoundValue(ctx.mul(self.v, o.v), ctx)

    def __repr__(self) -> str:
        return f"BoundValue(deg={self.deg}, s={self.s}, l1_bits={self.l1.bits()}, terms≤{self.cnt})"


class BoundRing(ExactRules):
    """The interpreter ring of :class:`BoundValue` (``variables`` = inputs + parameters)."""

    falsy_is_zero: ClassVar[bool] = False

    def __init__(self, variables: int, q: int = 1) -> None:
        super().__init__(variables, q)
        self.zero = BoundValue(ZERO_VAL, self)
        self.var = BoundValue(VAR_VAL, self)
        self._scalars: dict[Any, BoundValue] = {}
        self.one = self.coerce(1)

    def coerce(self, x: Scalar) -> BoundValue:
        key = (type(x), x)
        hit = self._scalars.get(key)
        if hit is None:
            hit = self._scalars[key] = BoundValue(self.scalar(x), self)
        return hit

    def reduce(self, x: BoundValue) -> BoundValue:
        return x


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
    return min(sum(v.v[4] for row in values for v in row), COUNT_CAP)


def bound_rows(state: list[list[BoundValue]]) -> Any:
    """A state of :class:`BoundValue` as the numpy rows of :mod:`~symverify.kernel.provers.bound_rules`
    (:func:`~symverify.kernel.provers.bound_rules.from_exact` per cell, row-major): the ``start`` of
    :func:`~symverify.kernel.provers.bounds_layers.model_rows`."""
    import numpy as np

    return np.array([rules.from_exact(v.v) for row in state for v in row], dtype=float).reshape(-1, 4)


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
        peak = max(peak, min(_total(state) + _total(new), COUNT_CAP))
        state = new
        if sizes is not None:
            sizes[:] = _sizes((v.v for row in state for v in row), sizes)
    return state, peak


def _sizes(values: Any, start: list[int]) -> list[int]:
    """``[max height bits, max degree]`` of ``values`` (exact values) and ``start``."""
    hb, dg = start
    for d, _, m, e, _ in values:
        if d >= 0:
            hb, dg = max(hb, m.bit_length() + e), max(dg, d)
    return [hb, dg]


def circuit_bounds(c: Any, ring: BoundRing, check: Check | None = None) -> tuple[list[BoundValue], int]:
    """The :class:`BoundValue` of every output of circuit ``c`` on inputs ``ring.var``, and the sum of
    the monomial bounds over all nodes (capped): one linear pass over the circuit's straight-line
    code (:mod:`symverify.kernel.semantics.straightline`) on plain integer tuples.

    The rules are those of :class:`BoundValue` ``+`` and ``*`` under the interpreter
    (:func:`~symverify.kernel.semantics.evaluate.eval_circuit_nodes`), applied to the plain tuples
    (:func:`eval_code`): the result is the same as running the interpreter over ``ring`` (the tests
    compare the two), without an object per operation. ``check`` runs every few hundred gates. The result is
    cached per circuit object, ``q`` and variable count (the only inputs of the pass).
    """
    key = (ring.q, ring.variables)
    outs, peak = _CIRCUIT_BOUNDS(c, lambda: _circuit_pass(c, ring, check), key)
    if _PEAKS.get(c, key) is None:  # evicted since: the pass puts it again
        _circuit_pass(c, ring, check)
    return [BoundValue(v, ring) for v in outs], peak


_CIRCUIT_BOUNDS: IdentityMemo[tuple[list[Val], int]] = IdentityMemo(16, validate=True)
"""Results of :func:`circuit_bounds` per (circuit object, ``q``, variables): the pass is a function of
these alone, and circuits are immutable."""


_PEAKS: IdentityMemo[tuple[int, int]] = IdentityMemo(64, validate=True)
"""``(peak height bits, peak degree)`` over every value of a side's evaluation, per (object, ``q``,
variables), put by the passes that see every value (larger than the result memos, so a cached
result always finds its peak here)."""


def _peak_put(obj: Any, ring: BoundRing, summary: list[float]) -> None:
    h, d = summary
    _PEAKS.put(obj, (math.ceil(h * (1 + 2.0**-40)) + 1, math.ceil(d)), (ring.q, ring.variables))


VECTOR_GATES = 2048
"""Circuits of at least this many gates are bounded by :func:`_circuit_vector` first."""


def _circuit_pass(c: Any, ring: BoundRing, check: Check | None) -> tuple[list[Val], int]:
    """:func:`_circuit_vector` when it answers, else :func:`_circuit_exact`."""
    fast = _circuit_vector(c, ring, check) if program(c).size >= VECTOR_GATES else None
    return fast if fast is not None else _circuit_exact(c, ring, check)


def _circuit_vector(c: Any, ring: BoundRing, check: Check | None) -> tuple[list[Val], int] | None:
    """The bounds of :func:`_circuit_exact` evaluated level by level with numpy
    (:mod:`symverify.kernel.provers.bounds_vector`): the same degrees, scalar counts and (below ``2^53``)
    monomial counts; heights rounded up, at most a bit above. None where that module gives up
    (a deep narrow circuit, a degree of ``2^51`` or more)."""
    prog = program(c)
    summary = [0.0, 0.0]
    rows = circuit_rows(prog, rules.scalar_rows(prog.scalars), ring.variables, ring.q, check, summary=summary)
    if rows is None:
        return None
    _peak_put(c, ring, summary)
    outs, counts = rows
    return [rules.to_exact(r, ring.q) for r in outs], total_count(counts)


def _circuit_exact(c: Any, ring: BoundRing, check: Check | None) -> tuple[list[Val], int]:
    """:func:`eval_code` over the straight-line code, one gate at a time."""
    prog, nd = program(c), c.num_inputs
    sc = [ring.scalar(x) for x in prog.scalars]
    vals: list[Val] = [VAR_VAL] * nd + [ZERO_VAL] * len(prog.code)
    step = CHECK_EVERY if check is not None else max(len(prog.code), 1)
    for start in range(0, len(prog.code), step):
        if check is not None:
            check()
        eval_code(zip(range(nd + start, nd + start + step), prog.code[start : start + step]), vals, sc, ring)
    hb, dg = _sizes(vals, [0, 0])
    _PEAKS.put(c, (hb, dg), (ring.q, ring.variables))
    return [vals[o] for o in c.outputs], min(sum(v[4] for v in vals), COUNT_CAP)


def eval_code(items: Any, vals: Any, sc: list[Val], ring: ExactRules) -> None:
    """The exact rules over straight-line instructions: ``vals[v]`` for every ``(v, (kind, a, b, i,
    j))`` of ``items`` (:mod:`symverify.kernel.semantics.straightline`), reading ``vals`` and the
    coefficients' values ``sc`` (``ring.scalar`` of the program's ``scalars``)."""
    add, mul = ring.add, ring.mul
    for v, (k, a, b, i, j) in items:
        if k == MUL:
            vals[v] = mul(vals[a], vals[b])
        elif k == LIN:
            vals[v] = add(mul(sc[i], vals[a]), mul(sc[j], vals[b]))
        elif k == SCALE:
            vals[v] = mul(sc[i], vals[a])
        else:
            vals[v] = sc[i] if k == CONST else ZERO_VAL


def _model_vector(m: Any, ring: BoundRing, check: Check | None) -> tuple[list[list[BoundValue]], int] | None:
    """The model's outputs and peak as :func:`layers_peak` bounds them, evaluated layer by layer
    with numpy over the live cells (:mod:`symverify.kernel.provers.bounds_layers`): the same degrees and
    scalar counts, heights and monomial counts rounded up (at least :func:`layers_peak`'s). None
    beyond that module's limits. Cached per model object, ``q`` and variable count."""
    key = (ring.q, ring.variables)
    hit = _MODEL_BOUNDS.get(m, key)
    if hit is None or _PEAKS.get(m, key) is None:
        summary = [0.0, 1.0]
        rows = model_rows(m.layers, _model_rects(m), m.n, m.d, m.inner_n, m.inner_d, rules.scalar_rows,
                          ring.variables, ring.q, check, summary)
        if rows is None:
            return None
        _peak_put(m, ring, summary)
        out, peak = rows
        vals = [rules.to_exact(r, ring.q) for r in out]
        total = COUNT_CAP if not peak < COUNT_CAP else min(math.floor(peak), COUNT_CAP)
        hit = _MODEL_BOUNDS.put(m, (vals, total), key)
    flat = [BoundValue(v, ring) for v in hit[0]]
    return [flat[i * m.d : (i + 1) * m.d] for i in range(m.n)], hit[1]


_MODEL_BOUNDS: IdentityMemo[tuple[list[Val], int]] = IdentityMemo(16, validate=True)
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
            sizes = _sizes((v.v for row in u for v in row), [0, 1])  # the inputs are values too
            state, peak = layers_peak(m.layers, embed(u, m.inner_n, m.inner_d, ring.zero), ring, check, sizes)
            _PEAKS.put(m, (sizes[0], sizes[1]), (ring.q, ring.variables))
            return crop(state, m.n, m.d), peak
        case CircuitSide(obj=c):
            outs, peak = circuit_bounds(c, ring, check)
            flat = outs + [ring.zero] * (c.num_inputs - len(c.outputs))
            return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)], peak
        case KaleidoscopeSide(obj=k):
            seen = _Seen(ring, _sizes((v.v for row in u for v in row), [0, 0]))
            out = side.evaluate(u, seen, check)
            _PEAKS.put(k, (seen.sizes[0], seen.sizes[1]), (ring.q, ring.variables))
            return out, min(2 * k.size * max(1, _total(out), seen.most), COUNT_CAP)
        case _:
            assert_never(side)


class _Seen:
    """``ring`` as the butterfly kernel uses it, with ``sizes`` (:func:`_sizes`) and ``most``, the
    largest monomial count, kept over the inputs and every value it reduces: every stage value a
    kaleidoscope computes (the others are passed through). Two stage vectors of ``N`` entries are
    alive at once, so ``2·N·most`` bounds the monomials alive."""

    def __init__(self, ring: BoundRing, sizes: list[int]) -> None:
        self.ring, self.sizes, self.most = ring, sizes, 1
        self.falsy_is_zero, self.zero, self.coerce = ring.falsy_is_zero, ring.zero, ring.coerce

    def reduce(self, x: BoundValue) -> BoundValue:
        self.sizes = _sizes((x.v,), self.sizes)
        self.most = max(self.most, x.v[4])
        return x


def _params(side: Side) -> frozenset[str]:
    """The side's parameter names, from its distinct values (a circuit's cached program, a
    model's :func:`_model_rects`)."""
    if isinstance(side, CircuitSide):
        return param_names(program(side.obj).scalars)
    if isinstance(side, ModelSide):
        return param_names(_model_rects(side.obj).values)
    return side.params()


def _model_rects(m: Any) -> Rects:
    """A model's grids read once (:func:`~symverify.kernel.provers.bounds_layers.read_rects`: their distinct
    values, for the denominator and the parameters, and the rectangles the numpy pass paints),
    cached per model object (models are immutable)."""
    return _MODEL_RECTS(m, lambda: read_rects(m.layers))


_MODEL_RECTS: IdentityMemo[Rects] = IdentityMemo(16, validate=True)
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
    sizes = _sizes((v.v for row in a + b for v in row), [0, 0])
    for side in (lhs, rhs):
        hit = _PEAKS.get(side.obj, (ring.q, ring.variables))
        if hit is not None:
            sizes = [max(sizes[0], hit[0]), max(sizes[1], hit[1])]
    degree, bits, below, count = -1, 0, True, 0
    # every output pair (x, y) enters through its bound tuples alone: the degree and bits are maxima
    # and ``below`` a conjunction over the pairs, so each distinct pair is read once (compiled models
    # repeat a few values, zero padding above all); only the count sums over every pair
    seen: set[tuple[Val, Val]] = set()
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            xv, yv = x.v, y.v
            count = min(count + xv[4] + yv[4], COUNT_CAP)
            pair = (xv, yv)
            if pair in seen:
                continue
            seen.add(pair)
            degree = max(degree, xv[0], yv[0])
            l1 = UB(*ring.add(xv, yv)[2:4])  # the sum rule bounds ℓ1 of the difference
            bits = max(bits, l1.bits())
            below = below and l1.less_than(M61)
    return Bounds(max(degree, 0), bits, below, count, min(peak_a + peak_b, COUNT_CAP), ring.variables, q,
                  max(sizes[0], bits), max(sizes[1], degree, 0))
