"""The *exact* method (docs/theory.md §5): canonical polynomials of both sides, compared entry by entry.

Both sides are expanded in one shared ring (``x0 … x{nd−1}`` and every weight parameter) with
python-flint (``fmpq_mpoly``) or sympy's ``ring()`` over QQ (:mod:`symverify.kernel.semantics.poly`);
equality of canonical sparse forms is ``==``. Symbolic weights are variables, so a pass proves the
identity for all weight values. Guard (expansion beyond memory aborts the process; it cannot be caught): a certified monomial-count estimate
(:mod:`symverify.kernel.provers.bounds`) decides whether to expand in-process, in a memory-limited child
process (:mod:`symverify.kernel.provers.guard`), or not at all; every intermediate polynomial is checked
against ``max_monomials`` and the deadline as it is produced. Over budget → ``unknown``.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from symverify.ir.bigint import show_int
from symverify.kernel.provers import outcome
from symverify.kernel.provers.bounds import Bounds, structure_bounds
from symverify.kernel.provers.counterexample import (
    affordable,
    confirm_in_time,
    search_or_stop,
    stopped_note,
    value_bits,
)
from symverify.kernel.provers.guard import Limited, run_limited
from symverify.kernel.provers.options import DeadlineExceededError, Options
from symverify.kernel.provers.outcome import MethodResult, Verdict
from symverify.kernel.provers.sides import Side
from symverify.kernel.semantics.poly import PolyRing, reused_ring

__all__ = ["ExactOutcome", "expand_compare", "expand_guarded", "run_exact", "sizes", "IN_PROCESS_MONOMIALS", "IN_PROCESS_BITS", "REFUSE_FACTOR"]

IN_PROCESS_MONOMIALS = 200_000
IN_PROCESS_BITS = 1 << 20
"""Coefficients that may exceed this many bits are expanded only in the memory-limited child."""
REFUSE_FACTOR = 64


def sizes(bounds: Bounds) -> tuple[int, int]:
    """``(peak height bits, peak degree)``: what :func:`~symverify.kernel.provers.counterexample.affordable` weighs."""
    return bounds.peak_height_bits, bounds.peak_degree


def _too_large(bounds: Bounds, opts: Options) -> str | None:
    """Why expansion is refused outright, or None: more than ``REFUSE_FACTOR ×`` the monomial
    budget, a coefficient that may need more bits than twice the memory budget has bytes, or
    monomials times coefficient bytes beyond ``REFUSE_FACTOR ×`` the memory budget."""
    est, bits, memory = bounds.peak_monomials, bounds.peak_height_bits, opts.memory()
    if est > opts.max_monomials * REFUSE_FACTOR:
        return (f"refused: the certified estimate of {est} live monomials exceeds {REFUSE_FACTOR}× the budget "
                f"max_monomials = {opts.max_monomials}")
    if bits > 2 * memory or est * (bits // 8) > REFUSE_FACTOR * memory:
        return (f"refused: coefficients of up to {bits_text(bits)} bits (certified bound) in up to {est} live "
                f"monomials exceed the memory budget of {memory} bytes")
    return None


def bits_text(bits: int) -> str:
    """A bit count for a message: exact below ``2^40``, else ``2^k+``."""
    return str(bits) if bits < 1 << 40 else f"2^{bits.bit_length() - 1}+"


class _StopError(Exception):
    def __init__(self, stopped: str, detail: str) -> None:
        super().__init__(detail)
        self.stopped, self.detail = stopped, detail


class _GuardedRing:
    """A :class:`PolyRing` whose ``reduce`` enforces the monomial budget and the deadline."""

    falsy_is_zero: ClassVar[bool] = True

    def __init__(self, ring: PolyRing, max_terms: int, deadline: float | None) -> None:
        self.ring, self.max_terms, self.deadline = ring, max_terms, deadline
        self.zero = ring.zero
        self.coerce = ring.coerce
        self.largest = 0
        self._calls = 0

    def reduce(self, x: Any) -> Any:
        size = len(x)
        if size > self.largest:
            self.largest = size
            if size > self.max_terms:
                raise _StopError("budget", f"an intermediate polynomial has {size} monomials > max_monomials = {self.max_terms}")
        self._calls += 1
        if self.deadline is not None and not self._calls % 64 and time.monotonic() > self.deadline:
            raise _StopError("timeout", "the deadline passed during expansion")
        return x


@dataclass(frozen=True)
class ExactOutcome:
    """What one expansion found, as a :class:`Verdict` of polynomial equality.

    ``PROVED``: every entry's canonical polynomials are equal. ``REFUTED``: some entry's differ;
    ``cell`` is the first such entry and ``point`` a rational point where that entry's difference
    is nonzero, when one small enough was found. This is the expansion's finding only:
    :func:`run_exact` reports ``refuted`` only with a counterexample re-checked by exact
    evaluation, else ``unknown``. ``UNKNOWN``: the expansion stopped; ``stopped`` says why
    (``budget`` or ``timeout``) and ``detail`` where.
    """

    verdict: Verdict
    backend: str
    monomials: int = 0
    largest: int = 0
    cell: tuple[int, int] | None = None
    point: tuple[tuple[tuple[int, ...], ...], tuple[tuple[str, int], ...]] | None = None
    difference: str = ""
    detail: str = ""
    seconds: float = 0.0
    stopped: str = ""


def _nonzero_point(ring: PolyRing, diff: Any, names: list[str], n: int, d: int, degree: int, seed: int) -> Any:
    """Small integers where ``diff`` ≠ 0 (Schwartz–Zippel: each try succeeds w.p. ≥ 1/2 once the
    range exceeds ``2·degree``), or None.

    Only points whose exact evaluation stays small are tried: entries of magnitude ``m`` with
    ``terms · degree · log2 m ≤ 2^26`` bit operations (entries in {−1, 0, 1} always), the same
    budget that makes a counterexample re-checkable (:func:`~symverify.kernel.provers.counterexample.affordable`).
    A polynomial of huge degree (``x^(2^40)·(x³ − x)`` vanishes on {−1, 0, 1}) gets no point rather
    than a multi-gigabyte evaluation; an engine that refuses an evaluation is skipped.
    """
    rng = random.Random(f"symverify-exact-{seed}")
    terms = max(1, _nterms(ring, diff))
    for t in range(200):
        r = 1 if t < 20 else (2 if t < 60 else 2 * degree + 1 + t)
        # log2(r) ≥ 1 and terms ≥ 1, so a degree past the budget is over it: tested first, since the
        # float product of a degree past 2^1024 raises OverflowError
        if r > 1 and (degree > _POINT_BIT_BUDGET or terms * degree * math.log2(r) > _POINT_BIT_BUDGET):
            break
        vals = [rng.randint(-r, r) for _ in range(n * d + len(names))]
        try:
            value = ring.evaluate(diff, vals)
        except (ValueError, OverflowError, MemoryError):
            continue
        if value != 0:
            u = tuple(tuple(vals[i * d : (i + 1) * d]) for i in range(n))
            return u, tuple(zip(names, vals[n * d :]))
    return None


_POINT_BIT_BUDGET = 1 << 26


def _nterms(ring: PolyRing, p: Any) -> int:
    return int(ring.nterms(p))


def _difference_text(ring: PolyRing, diff: Any, degree: int) -> str:
    """A short description of a nonzero difference (never a giant string, never a crash)."""
    terms = _nterms(ring, diff)
    if terms <= 8:
        try:
            text = str(diff)
        except ValueError:  # an integer over Python's int-to-str digit limit
            text = ""
        if text and len(text) <= 160:
            return text
    return f"a nonzero polynomial with {terms} terms of degree {show_int(degree)}"


def expand_compare(lhs: Side, rhs: Side, backend: str, max_monomials: int, deadline: float | None, seed: int = 0) -> ExactOutcome:
    """Expand both sides in one ring and compare (runs in-process; see :func:`run_exact`)."""
    start = time.perf_counter()
    names = sorted(lhs.params() | rhs.params())
    # never handed out, never changed in place: the sides' evaluators only compute with its values
    base = reused_ring(lhs.num_inputs, tuple(names), backend)  # type: ignore[arg-type]
    ring = _GuardedRing(base, max_monomials, deadline)
    u = base.grid_input(lhs.n, lhs.d)
    try:
        a = lhs.evaluate(u, ring)
        b = rhs.evaluate(u, ring)
    except _StopError as e:
        return ExactOutcome(outcome.exact_comparison(None), backend, largest=ring.largest, detail=e.detail, seconds=time.perf_counter() - start,
                            stopped=e.stopped)
    total = 0
    for i, (ra, rb) in enumerate(zip(a, b)):
        for j, (x, y) in enumerate(zip(ra, rb)):
            total += len(x) + len(y)
            if x != y:
                diff = x - y
                deg = base.degree(diff)
                point = _nonzero_point(base, diff, names, lhs.n, lhs.d, deg, seed)
                return ExactOutcome(outcome.exact_comparison(False), backend, total, ring.largest, (i, j), point,
                                    _difference_text(base, diff, deg), seconds=time.perf_counter() - start)
    return ExactOutcome(outcome.exact_comparison(True), backend, total, ring.largest, seconds=time.perf_counter() - start)


def expand_guarded(lhs: Side, rhs: Side, opts: Options, bounds: Bounds, seed: int, *, isolate: bool | None,
                   what: str) -> tuple[ExactOutcome | Limited, str]:
    """:func:`expand_compare` where the guard puts it, and where that was (``in-process`` or
    ``subprocess``): in a child process limited to ``opts.memory()`` bytes and the time left when
    ``isolate`` is True or, for None, when the certified bounds are large (more than
    :data:`IN_PROCESS_MONOMIALS` live monomials or coefficients of more than :data:`IN_PROCESS_BITS`
    bits); in this process otherwise. A child that did not end ``ok`` gives its :class:`Limited`."""
    if isolate is None:
        isolate = bounds.peak_monomials > IN_PROCESS_MONOMIALS or bounds.peak_height_bits > IN_PROCESS_BITS
    args = (lhs, rhs, opts.backend, opts.max_monomials, opts.deadline, seed)
    if not isolate:
        return expand_compare(*args), "in-process"
    remaining = opts.remaining()
    lim = run_limited(expand_compare, args, memory=opts.memory(), timeout=None if remaining is None else max(remaining, 0.0),
                      what=what)
    return (lim.value if lim.status == "ok" else lim), "subprocess"


def _evidence(out: ExactOutcome, bounds: Bounds, where: str) -> dict[str, Any]:
    return {
        "backend": out.backend,
        "monomials_compared": out.monomials,
        "largest_polynomial": out.largest,
        "monomials_estimate": bounds.monomials,
        "peak_monomials_estimate": bounds.peak_monomials,
        "degree_bound": bounds.degree,
        "ran": where,
    }


def run_exact(lhs: Side, rhs: Side, opts: Options, bounds: Bounds | None = None) -> MethodResult:
    """The exact method with its guards; see the module docstring."""
    method = "exact" if opts.backend == "flint" else f"exact-{opts.backend}"
    bounds = bounds or structure_bounds(lhs, rhs)
    est = bounds.peak_monomials
    refused = _too_large(bounds, opts)
    if refused is not None:
        return outcome.unknown(method, {"peak_monomials_estimate": est, "max_monomials": opts.max_monomials,
                                                 "peak_height_bits": bits_text(bounds.peak_height_bits)},
                               notes=(refused,))
    out, where = expand_guarded(lhs, rhs, opts, bounds, opts.seed, isolate=opts.isolate, what="the expansion")
    if isinstance(out, Limited):
        return outcome.unknown(method, {"peak_monomials_estimate": est, "memory_limit": opts.memory(), "ran": where},
                               notes=(f"expansion stopped ({out.status}): {out.detail}",))
    ev = _evidence(out, bounds, where)
    if out.verdict is Verdict.PROVED:
        return outcome.proved(method, ev, timings={"expand": out.seconds})
    if out.verdict is Verdict.UNKNOWN:
        return outcome.unknown(method, ev, notes=(f"expansion stopped ({out.stopped}): {out.detail}",),
                            timings={"expand": out.seconds})
    ev["first_difference"] = list(out.cell or ())
    ev["difference"] = out.difference
    note = "the polynomials differ, but no counterexample small enough to re-check by exact evaluation was found"
    stop: DeadlineExceededError | None = None
    try:
        cex = search_or_stop(lhs, rhs, opts, found_by=method, degree=bounds.degree, sizes=sizes(bounds))
    except DeadlineExceededError as e:  # the timeout, or a confirmation child's memory limit or crash
        cex, stop = None, e
    if cex is None and stop is None and opts.expired():  # a search that returned at the deadline
        stop = DeadlineExceededError()
    if stop is not None:
        note = "the polynomials differ, but " + stopped_note(
            opts, stop, "while searching for a counterexample small enough to re-check by exact evaluation")
    if cex is None and out.point is not None:  # a point where the differing entry is certainly nonzero
        u, ps = out.point
        pdict = {k: Fraction(v) for k, v in ps}
        degree = max(bounds.degree, bounds.peak_degree)
        if affordable(u, pdict, degree, bounds.peak_height_bits):
            try:  # held to the deadline as verify's re-check is: values past GUARD_BITS in a timed child
                cex = confirm_in_time(lhs, rhs, [list(r) for r in u], pdict, method, opts,
                                      value_bits(u, pdict, degree, bounds.peak_height_bits))
            except DeadlineExceededError as e:
                note = "the polynomials differ, but " + stopped_note(
                    opts, e, "while a counterexample at the expansion's point was confirmed by exact evaluation")
    if cex is None:
        return outcome.unknown(method, ev, notes=(note,), timings={"expand": out.seconds})
    return outcome.refuted(method, ev, cex, timings={"expand": out.seconds})
