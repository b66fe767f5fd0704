"""The verification methods behind one interface: ``PROVERS[method].prove(a, b, opts, bounds)``.

Every method :func:`symverify.kernel.verification.verify` accepts (:data:`~symverify.kernel.provers.options.Method`)
is a :class:`Prover` in :data:`PROVERS`: ``exact`` and ``exact-sympy`` (:class:`ExactProver`),
``compositional`` (:class:`CompositionalProver`), ``randomized`` (:class:`RandomizedProver`),
``z3`` (:class:`Z3Prover`) and ``auto`` (:class:`AutoProver`, which combines the others). Each
takes the two sides, the checked :class:`~symverify.kernel.provers.options.Options` and the pair's
structural bounds (:class:`LazyBounds`, computed on first use) and returns a
:class:`~symverify.kernel.provers.outcome.MethodResult`. :func:`prover_for` looks a name up (an unknown
name is a :class:`~symverify.errors.UsageError` listing the methods); :func:`run_prover` runs one
under the deadline.

The contract every prover keeps (docs/trusted-base.md): ``proved`` only with a
``failure_bound`` at most ``opts.error_bound`` (0 for the exact arguments); ``refuted`` only with
a counterexample, which ``verify`` re-checks by exact evaluation; ``unknown`` whenever a budget, a
guard or the deadline stops it. ``verify`` enforces the first two again on every result.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Protocol

from symverify.errors import IRError
from symverify.kernel.provers import outcome
from symverify.kernel.provers.bounds import Bounds, structure_bounds
from symverify.kernel.provers.certified import certified_pair, run_compositional
from symverify.kernel.provers.exact import IN_PROCESS_MONOMIALS, run_exact
from symverify.kernel.provers.matrix import prove_kaleidoscope_circuit
from symverify.kernel.provers.options import METHODS, DeadlineExceededError, Method, Options
from symverify.kernel.provers.outcome import MethodResult, UsageError, Verdict
from symverify.kernel.provers.randomized import run_randomized
from symverify.kernel.provers.sides import Side
from symverify.kernel.provers.z3_backend import run_z3

__all__ = ["Prover", "LazyBounds", "ExactProver", "CompositionalProver", "RandomizedProver", "Z3Prover", "AutoProver",
           "PROVERS", "prover_for", "run_prover", "AUTO_EXACT_MONOMIALS"]

AUTO_EXACT_MONOMIALS = IN_PROCESS_MONOMIALS
AUTO_PRECHECK_DEGREE_BITS = 256
"""``auto`` runs no randomized pre-check before ``exact`` when the degree bound has more bits than
this and ``exact`` applies (its peak monomial estimate is at most :data:`AUTO_EXACT_MONOMIALS`): a
useful trial needs a prime above the degree bound, and proving a prime of ``L`` bits takes about
``(L/1024)^3·2.5`` s (0.03 s at 256 bits, seconds past 1000, minutes past 3000), more than such an
expansion."""


class LazyBounds:
    """The pair's structural bounds (:func:`~symverify.kernel.provers.bounds.structure_bounds`: degree,
    coefficient height, monomial estimates), computed on first use (compositional rarely needs
    them) under the deadline; the seconds spent are recorded as ``timings["bounds"]``. ``value``
    is None until then."""

    def __init__(self, a: Side, b: Side, timings: dict[str, float], deadline: float | None = None) -> None:
        self.a, self.b, self.timings, self.deadline = a, b, timings, deadline
        self.value: Bounds | None = None

    def __call__(self) -> Bounds:
        if self.value is None:
            t = time.perf_counter()
            self.value = structure_bounds(self.a, self.b, deadline=self.deadline)
            self.timings["bounds"] = time.perf_counter() - t
        return self.value

    def degree(self) -> int:
        return self().degree

    def sizes(self) -> tuple[int, int]:
        """``(peak height bits, peak degree)``: what the counterexample search reads from the same pass
        (:func:`~symverify.kernel.provers.counterexample.search_or_stop`'s ``sizes``)."""
        value = self()
        return value.peak_height_bits, value.peak_degree


class Prover(Protocol):
    """A verification method: decide whether the sides ``a`` and ``b`` are equal polynomial maps.

    ``prove`` returns ``proved`` (with ``failure_bound ≤ opts.error_bound``), ``refuted`` (with a
    counterexample) or ``unknown``; it may raise :class:`~symverify.deadline.DeadlineExceededError`
    (:func:`run_prover` turns it into ``unknown``), and :class:`~symverify.errors.UsageError` or
    :class:`~symverify.errors.IRError` for a pair it cannot take.
    """

    def prove(self, a: Side, b: Side, opts: Options, bounds: LazyBounds) -> MethodResult: ...


@dataclass(frozen=True)
class ExactProver:
    """``exact`` (flint, or ``opts.backend``) and ``exact-sympy``: equal canonical polynomials.

    Both sides are expanded in one polynomial ring over Q whose variables are the ``n·d`` inputs
    and every weight symbol, and compared entry by entry; canonical sparse forms are equal iff
    the polynomials are, so ``proved`` holds for all inputs and all weight values
    (:mod:`symverify.kernel.provers.exact`; failure bound 0). A certified monomial estimate decides
    between in-process expansion, a memory-limited child process and refusal (``unknown``).
    Unequal polynomials are ``refuted`` only with a counterexample.

    With ``matrix_first`` (method ``exact``), a kaleidoscope against a linear circuit is first
    decided by comparing their exact ``n×n`` matrices
    (:func:`~symverify.kernel.provers.matrix.prove_kaleidoscope_circuit`, method ``exact-matrix``).
    """

    matrix_first: bool = True

    def prove(self, a: Side, b: Side, opts: Options, bounds: LazyBounds) -> MethodResult:
        if self.matrix_first:
            fast = prove_kaleidoscope_circuit(a, b, opts)
            if fast is not None:
                return fast
        return run_exact(a, b, opts, bounds())


@dataclass(frozen=True)
class CompositionalProver:
    """``compositional``: the stage certificate, checked stage by stage (Lemma H.11).

    Every stage's expected cell values are derived from the circuit's own gates on fresh
    variables, every unlisted cell must be exactly 0, the first boundary is the embedded input and
    the last the output; by induction the model computes the circuit (failure bound 0). The
    certificate is untrusted: a failing stage is ``refuted`` only with a counterexample, else
    ``unknown`` (:mod:`symverify.kernel.provers.certified`). Needs a circuit and a model with a
    certificate (``UsageError`` otherwise).
    """

    def prove(self, a: Side, b: Side, opts: Options, bounds: LazyBounds) -> MethodResult:
        known = bounds.value
        return run_compositional(a, b, opts, degree=bounds.degree, peak_height_bits=None if known is None else known.peak_height_bits,
                                 sizes=bounds.sizes)


@dataclass(frozen=True)
class RandomizedProver:
    """``randomized``: Schwartz–Zippel identity testing modulo primes, with a stated bound.

    Each trial evaluates both sides exactly mod a prime ``p`` at a point drawn (Fiat–Shamir, from
    both sides and the seed) uniformly from ``F_p``; a nonzero difference of certified degree
    ``≤ D`` survives one trial with probability ``≤ D/p`` (plus the chance that ``p`` divides
    every coefficient, bounded from the certified height). ``k`` trials give ``ε^k``, and ``k`` is
    the least with ``ε^k ≤ opts.error_bound``: that is the ``failure_bound`` of a ``proved``
    (:mod:`symverify.kernel.provers.randomized`, python and torch engines).
    """

    def prove(self, a: Side, b: Side, opts: Options, bounds: LazyBounds) -> MethodResult:
        return run_randomized(a, b, opts, bounds())


@dataclass(frozen=True)
class Z3Prover:
    """``z3``: ``∃u, θ: lhs(u, θ) ≠ rhs(u, θ)`` over the reals.

    ``unsat`` means the polynomial maps agree on all of ``R^V``, hence are equal as polynomials
    (failure bound 0); ``sat`` is ``refuted`` only with a counterexample re-checked exactly. Runs
    in a memory-limited child process; sides over the cost or degree guard are refused
    (:mod:`symverify.kernel.provers.z3_backend`).
    """

    def prove(self, a: Side, b: Side, opts: Options, bounds: LazyBounds) -> MethodResult:
        return run_z3(a, b, opts, degree=bounds().degree)


def _auto_compositional(a: Side, b: Side, opts: Options, bounds: LazyBounds) -> tuple[MethodResult | None, tuple[str, ...]]:
    """``compositional`` when the pair carries a certificate: its decision, or None with the notes
    saying why it did not decide (the certificate does not fit, or did not check)."""
    if certified_pair(a, b) is None:
        return None, ()
    try:
        comp = run_compositional(a, b, opts, degree=bounds.degree, peak_height_bits=bounds().peak_height_bits,
                                 sizes=bounds.sizes)
    except IRError as e:  # the certificate does not fit this circuit: decide by another method
        return None, (f"compositional was skipped: the certificate does not fit the circuit ({e})",)
    if comp.verdict is not Verdict.UNKNOWN:
        return comp, ()
    # The certificate did not check and no counterexample was found: decide by another method,
    # and say why in the report.
    notes = (f"compositional was inconclusive: {comp.evidence.get('failure', 'certificate not checked')}",)
    return None, notes + tuple(f"compositional: {n}" for n in comp.notes)


@dataclass(frozen=True)
class AutoProver:
    """``auto``: the other provers, in order, each deciding only what it can.

    A kaleidoscope against a linear circuit is decided by exact matrices. A pair carrying a stage
    certificate is decided by ``compositional`` when it can (its stage checks cost about what one
    evaluation of the model does, so a pre-check before it would cost as much as the proof).
    Otherwise a one-trial randomized pre-check runs: a mismatch mod ``p`` shows the sides differ,
    so the answer is ``refuted`` (or ``unknown`` with that evidence, without a re-checkable
    counterexample) and no proof is looked for. Then ``exact`` when the certified peak monomial
    estimate is at most :data:`AUTO_EXACT_MONOMIALS`, else ``randomized``; a method that ends
    ``unknown`` hands over to the next, and its notes go into the report, except that an ``exact``
    that found the polynomials different (without a counterexample small enough to re-check) ends
    the run as ``unknown``: no proof is looked for. The pre-check is skipped, with a note, where
    ``exact`` applies and the degree bound has more than :data:`AUTO_PRECHECK_DEGREE_BITS` bits
    (its prime's proof of primality would cost more than the expansion: ``x^(2^3000)`` spent a
    20 s timeout proving a 3000-bit prime that ``exact`` did not need). The report names the
    method that decided, and ``proved`` means what it means for that method.
    """

    def prove(self, a: Side, b: Side, opts: Options, bounds: LazyBounds) -> MethodResult:
        fast = prove_kaleidoscope_circuit(a, b, opts)
        if fast is not None:
            return fast
        comp, notes = _auto_compositional(a, b, opts, bounds)
        if comp is not None:
            return comp
        if opts.scheduler is not None and certified_pair(a, b) is None:
            notes += ("the scheduler was not used: it runs the compositional stage checks, and this pair has no "
                      "certificate",)
        exact_applies = bounds().peak_monomials <= AUTO_EXACT_MONOMIALS
        degree_bits = bounds().degree.bit_length()
        pre: MethodResult | None = None
        if exact_applies and degree_bits > AUTO_PRECHECK_DEGREE_BITS:
            notes += (f"the randomized pre-check was skipped: the degree bound (2^{degree_bits - 1} or more) needs a "
                      f"prime of at least {degree_bits} bits, whose proof of primality costs more than exact "
                      f"expansion (at most {AUTO_EXACT_MONOMIALS} monomials)",)
        else:
            pre = run_randomized(a, b, opts, bounds(), method="randomized (pre-check)", tag="pre", max_trials=1)
            if pre.verdict is Verdict.REFUTED or pre.evidence.get("sides_differ_mod_p"):
                # A mismatch mod p shows the sides differ: never go on to look for a proof. Without a
                # counterexample small enough to re-check, the answer is unknown with that evidence.
                return replace(pre, notes=notes + pre.notes)
        if exact_applies:
            res = run_exact(a, b, opts, bounds())
            if res.verdict is not Verdict.UNKNOWN or "first_difference" in res.evidence:
                # decided, or the polynomials differ (no counterexample to re-check): no proof is looked for
                return _with_precheck(replace(res, notes=notes + res.notes), pre)
            notes += tuple(f"exact: {n}" for n in res.notes)
        res = run_randomized(a, b, opts, bounds())
        return _with_precheck(replace(res, notes=notes + res.notes), pre)


def _with_precheck(res: MethodResult, pre: MethodResult | None) -> MethodResult:
    """``res`` with the pre-check's seconds added to its timings as ``precheck.<part>`` (``trials``,
    everything; ``fingerprint``, the hashing inside it); ``res`` itself when none ran."""
    if pre is None:
        return res
    return replace(res, timings={**res.timings, **{f"precheck.{k}": v for k, v in pre.timings.items()}})


PROVERS: Mapping[Method, Prover] = MappingProxyType({
    "auto": AutoProver(),
    "exact": ExactProver(matrix_first=True),
    "exact-sympy": ExactProver(matrix_first=False),
    "compositional": CompositionalProver(),
    "randomized": RandomizedProver(),
    "z3": Z3Prover(),
})
"""Every method by name, in the order of :data:`~symverify.kernel.provers.options.METHODS`."""


def prover_for(method: str) -> Prover:
    """The prover named ``method``.

    Raises:
        UsageError: no method has that name (the message lists them).
    """
    for name, prover in PROVERS.items():
        if name == method:
            return prover
    raise UsageError(f"method: expected one of {', '.join(METHODS)}; found {method!r}")


def run_prover(method: str, prover: Prover, a: Side, b: Side, opts: Options, timings: dict[str, float],
               bounds: LazyBounds | None = None) -> MethodResult:
    """Run ``prover`` (named ``method``) under ``opts``'s deadline (``bounds``: the pair's, when the
    caller wants to read them after; else made here).

    A deadline already past, or one that passes inside the prover
    (:class:`~symverify.deadline.DeadlineExceededError`), gives ``unknown`` with a note naming the
    timeout. The structural bounds, when the prover computed them, are added to the evidence
    (``structure``); ``timings`` gets ``method`` (and ``bounds``) seconds.
    """
    if opts.expired():
        return outcome.unknown(method, notes=(f"timeout: {opts.timeout} s ran out before any method started",))
    bounds = bounds or LazyBounds(a, b, timings, opts.deadline)
    t = time.perf_counter()
    try:
        res = prover.prove(a, b, opts, bounds)
    except DeadlineExceededError:
        res = outcome.unknown(method, notes=(f"timeout: {opts.timeout} s ran out before {method} decided",))
    timings["method"] = time.perf_counter() - t - timings.get("bounds", 0.0)
    if bounds.value is not None:
        res = replace(res, evidence={**res.evidence, "structure": bounds.value.to_json()})
    return res
