"""The *randomized* method (THEORY §5): Schwartz–Zippel identity testing mod large primes.

Each trial draws every input entry and every weight parameter uniformly from ``F_p`` and compares
both sides exactly mod ``p`` (:mod:`symverify.prove.modular`). If some entry of ``lhs − rhs`` is a
nonzero polynomial ``Δ`` of total degree ``≤ D`` whose reduction mod ``p`` is nonzero, one trial
misses the difference with probability ``≤ D/p``. The degree ``D`` is certified from structure
(:mod:`symverify.prove.bounds`, per cell, parameters included).

The reduction of ``Δ`` mod ``p`` is nonzero when the certified height bound of ``Q^S·Δ`` is
below ``p`` (then no nonzero integer coefficient is divisible by ``p``): trials use
``p = 2^61 − 1`` and the bound is ``(D/p)^k``. Otherwise every trial draws a fresh prime
uniformly from ``[2^61, 2^62)`` (rejection sampling, deterministic Miller–Rabin); at most
``⌈H/61⌉`` of the ``≥ 2^55`` primes there (Rosser–Schoenfeld) divide every coefficient, so one
trial fails with probability ``≤ D/2^61 + ⌈H/61⌉/(2^55 − ⌈log2 Q/61⌉)`` and ``k`` trials with its
``k``-th power. ``k`` is the least that brings the bound to ``error_bound`` (default ``2^-100``).
"""

from __future__ import annotations

import math
import random
import time
from fractions import Fraction
from typing import Any

from symverify.errors import ProverError
from symverify.prove.bounds import M61, Bounds, structure_bounds
from symverify.prove.counterexample import confirm, search
from symverify.prove.modular import BatchModRing, eval_mod_batch
from symverify.prove.options import Options
from symverify.prove.outcome import MethodResult, Verdict
from symverify.prove.sides import Side

__all__ = ["is_prime", "random_prime", "trial_error", "trials_needed", "run_randomized", "PRIME_LOW", "PRIMES_IN_RANGE"]

PRIME_LOW = 1 << 61
PRIMES_IN_RANGE = 1 << 55  # a lower bound on #primes in [2^61, 2^62): x/ln x < π(x) < 1.25506·x/ln x
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)  # deterministic below 3.3·10^24


def is_prime(n: int) -> bool:
    """Deterministic Miller–Rabin for ``n < 3.3·10^24``.

    >>> is_prime(2**61 - 1), is_prime(2**61 + 1)
    (True, False)
    """
    if n < 2:
        return False
    for q in _MR_BASES:
        if n % q == 0:
            return n == q
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def random_prime(rng: random.Random, avoid: int = 1) -> int:
    """A prime uniform among the primes in ``[2^61, 2^62)`` that do not divide ``avoid``."""
    while True:
        c = rng.randrange(PRIME_LOW, 2 * PRIME_LOW)
        if is_prime(c) and avoid % c:
            return c


def trial_error(bounds: Bounds) -> tuple[Fraction, bool]:
    """``(per-trial failure bound, uses the fixed prime 2^61 − 1)``; see the module docstring."""
    fixed = bounds.height_below_m61 and bounds.denominator % M61 != 0
    if fixed:
        return Fraction(bounds.degree, M61), True
    bad = -(-bounds.height_bits // 61)
    excluded = -(-bounds.denominator.bit_length() // 61)
    return Fraction(bounds.degree, PRIME_LOW) + Fraction(bad, PRIMES_IN_RANGE - excluded), False


def trials_needed(eps: Fraction, target: Fraction) -> int | None:
    """Least ``k ≥ 1`` with ``eps^k ≤ target`` (None when ``eps ≥ 1``).

    >>> trials_needed(Fraction(4, 2**61 - 1), Fraction(1, 2**100))  # degree 4: two points suffice
    2
    """
    if eps <= 0:
        return 1
    if eps >= 1:
        return None
    k = max(1, math.ceil(math.log(target) / math.log(eps)) - 1)
    while eps**k > target:
        k += 1
    return k


def _log2(q: Fraction) -> float:
    return -math.inf if q == 0 else math.log2(q.numerator) - math.log2(q.denominator)


def _pow2(q: Fraction) -> str:
    """``q`` as ``2^x`` with x rounded up to 0.1, past float rounding (the text never understates)."""
    return "0" if q == 0 else f"2^{math.ceil(_log2(q) * 10 + 1e-6) / 10:.1f}"


def _sample(side: Side, names: list[str], rng: random.Random, p: int) -> tuple[list[list[int]], dict[str, int]]:
    u = [[rng.randrange(p) for _ in range(side.d)] for _ in range(side.n)]
    return u, {k: rng.randrange(p) for k in names}


def run_randomized(lhs: Side, rhs: Side, opts: Options, bounds: Bounds | None = None, *, method: str = "randomized",
                   tag: str = "sz") -> MethodResult:
    """Schwartz–Zippel with a stated bound; a mismatch yields a re-checked counterexample."""
    start = time.perf_counter()
    bounds = bounds or structure_bounds(lhs, rhs)
    eps, fixed = trial_error(bounds)
    k = opts.trials if opts.trials is not None else trials_needed(eps, opts.error_bound)
    ev: dict[str, Any] = {
        "p": "2^61-1" if fixed else "uniform random primes in [2^61, 2^62)",
        "degree_bound": bounds.degree,
        "height_bits": bounds.height_bits,
        "per_trial_bound": _pow2(eps),
        "bound_formula": "(D/p)^k" if fixed else "(D/2^61 + ceil(H/61)/(2^55 - ceil(log2(Q)/61)))^k",
    }
    if k is None:
        return MethodResult(Verdict.UNKNOWN, method, ev, notes=(f"the degree bound D = {bounds.degree} is not below p: no bound",))
    rng = random.Random(f"symverify-{tag}-{opts.seed}")
    names = sorted(lhs.params() | rhs.params())
    primes, done = [], 0
    for t in range(k):
        if opts.expired():
            ev.update(k=done, bound=_pow2(eps**done))
            return MethodResult(Verdict.UNKNOWN, method, ev, notes=(f"timeout after {done} of {k} trials",),
                                timings={"trials": time.perf_counter() - start})
        p = M61 if fixed else random_prime(rng, bounds.denominator)
        u, ps = _sample(lhs, names, rng, p)
        ring = BatchModRing([p], [ps])
        a, b = eval_mod_batch(lhs, [u], ring)[0], eval_mod_batch(rhs, [u], ring)[0]
        primes.append(p)
        done = t + 1
        if a != b:
            ev.update(k=done, mismatch_trial=t, primes=[str(q) for q in primes])
            cex = search(lhs, rhs, opts, found_by=method, degree=bounds.degree)
            if cex is None:  # the residues differ, so the lifted integer point differs exactly
                cex = confirm(lhs, rhs, u, ps, found_by=f"{method} (lifted trial point)")
            if cex is None:
                raise ProverError(
                    f"{method}: the sides differ mod p = {p} at trial {t}, but agree under exact evaluation at that "
                    "point; the modular evaluator is wrong"
                )
            return MethodResult(Verdict.REFUTED, method, ev, cex, timings={"trials": time.perf_counter() - start})
    bound = eps**k
    ev.update(k=k, bound=_pow2(bound), bound_log2=math.ceil(_log2(bound) * 100 + 1e-6) / 100 if bound else None)
    if not fixed:
        ev["primes"] = [str(q) for q in primes]
    return MethodResult(Verdict.PROVED, method, ev, timings={"trials": time.perf_counter() - start})
