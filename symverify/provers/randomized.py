"""The *randomized* method (docs/theory.md §5): Schwartz–Zippel identity testing mod large primes.

Each trial draws every input entry and every weight parameter uniformly from ``F_p`` and compares
both sides exactly mod ``p`` (:mod:`symverify.provers.modular`). If some entry of ``lhs − rhs`` is a
nonzero polynomial ``Δ`` of total degree ``≤ D`` whose reduction mod ``p`` is nonzero, one trial
misses the difference with probability ``≤ D/p``. The degree ``D`` is certified from structure
(:mod:`symverify.provers.bounds`, per cell, parameters included).

The reduction of ``Δ`` mod ``p`` is nonzero when the certified height bound of ``Q^S·Δ`` is
below ``p`` (then no nonzero integer coefficient is divisible by ``p``): trials use
``p = 2^61 − 1`` and the bound is ``(D/p)^k``. Otherwise every trial draws a fresh prime
uniformly from ``[2^61, 2^62)`` (rejection sampling, deterministic Miller–Rabin); at most
``⌈H/61⌉`` of the ``≥ 2^55`` primes there (Rosser–Schoenfeld) divide every coefficient, so one
trial fails with probability ``≤ D/2^61 + ⌈H/61⌉/(2^55 − ⌈log2 Q/61⌉)`` and ``k`` trials with its
``k``-th power. ``k`` is the least that brings the bound to ``error_bound`` (default ``2^-100``).

**The prime grows with the degree.** When the 61-bit per-trial bound ``ε`` above is not at most
:data:`USEFUL_PER_TRIAL` (``2^-16``) — a degree bound near ``2^61``, where Fermat's little theorem
can make ``x^p`` and ``x`` agree at every point mod ``p``, or a huge coefficient height — the
trials draw primes uniformly from ``[2^L, 2^(L+1))`` for the least ``L`` (in steps of 32 from
``max(bits(D), bits(H)) + 64``, at most :data:`~symverify.primes.MAX_PRIME_BITS`) with

    ε_L = D/2^L + ⌈H/L⌉ / (⌊2^L/(2L)⌋ − ⌈log2 Q/L⌉) ≤ 2^-48,

where ``⌊2^L/(2L)⌋`` is a lower bound on the number of primes in ``[2^L, 2^(L+1))`` (from
Rosser–Schoenfeld, ``x/ln x < π(x) < 1.25506·x/ln x`` for ``x ≥ 17``: ``π(2x) − π(x) >
(x/ln 2)·(2/(L+1) − 1.25506/L) ≥ 2^L/(2L)`` for ``L ≥ 5``). Every prime is proved prime
(:mod:`symverify.primes`). Python integers have no size limit, so the arithmetic stays exact.

**Soundness rule.** ``proved`` is returned only when the stated failure bound ``ε^k`` is at most
the requested ``error_bound``: a caller's ``trials`` can only add trials, never lower ``k``
below what the bound needs. When no prime size gives a useful bound the verdict is ``unknown``.
A mismatch mod ``p`` shows that the sides differ (equal polynomials have equal residues); it is
reported as ``refuted`` only with a counterexample re-checked by exact evaluation, otherwise as
``unknown`` with the mismatch (prime, trial, entry) kept as evidence.

**Two engines.** The above is the *python* engine (Python ints mod ``p ≥ 2^61``, one point per
trial). The *torch* engine evaluates both sides with :func:`symverify.executors.modular_eval`
(exact int64 arithmetic mod a prime ``p < 2^31``) on a batch of ``B`` points per trial. Every
trial draws a fresh prime uniformly among the primes of ``[2^30, 2^31)`` that do not divide ``Q``
(there are at least ``2^25`` primes there, by Rosser–Schoenfeld ``x/ln x < π(x) < 1.25506·x/ln x``)
and ``B`` independent uniform points of ``F_p^{n×d}``. A trial misses a nonzero difference ``Δ``
only if (a) ``p`` divides every coefficient of ``Q^S·Δ`` at the differing entry, which at most
``⌈H/30⌉`` of the primes do (none when ``H ≤ 30``: every nonzero coefficient is then below
``2^30 ≤ p``), or (b) ``Δ mod p ≠ 0`` and all ``B`` points are roots (Schwartz–Zippel, ``(D/p)^B``).
So one trial fails with probability at most

    ε = β + (D/2^30)^B,   β = ⌈H/30⌉ / (2^25 − ⌈log2 Q/30⌉)   (β = 0 when H ≤ 30),

and ``k`` independent trials with ``ε^k``. Symbolic weights get one value per trial (the executor
takes one parameter assignment per call), so sides with symbolic weights use ``B = 1``: the point
(inputs and weights) is then uniform and the same bound holds. ``B`` is the least with
``(D/2^30)^B ≤ β`` (``≤ error_bound`` with ``k = 1`` when ``β = 0``), ``k`` the least with
``ε^k ≤ error_bound``. The torch engine is used only when ``D/2^30 ≤ 2^-10`` and ``ε ≤ 2^-10``
(a 31-bit prime gives a useful per-trial bound), both sides are models or circuits, and torch is
installed; :func:`choose_engine` states the rule, and the report names the engine, the primes,
``B``, ``k``, ``D`` and the bound. Whichever engine finds a difference, the counterexample is
re-checked by exact evaluation (a lifted trial point differs exactly: equal rationals have equal
residues).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from symverify.errors import ProverError
from symverify.ir.bigint import show_int
from symverify.primes import MAX_PRIME_BITS, is_prime, passes_screen, screen_decides
from symverify.provers import outcome
from symverify.provers.bounds import M61, Bounds, structure_bounds
from symverify.provers.challenge import CONSTRUCTION, Stream, Transcript
from symverify.provers.counterexample import affordable, confirm, search
from symverify.provers.fingerprint import fingerprint
from symverify.provers.guard import run_limited
from symverify.provers.modular import BatchModRing, eval_mod_batch, torch_first_mismatch
from symverify.provers.options import DeadlineExceededError, Options
from symverify.provers.outcome import MethodResult, UsageError
from symverify.provers.sides import CircuitSide, Side, TorchSide, torch_executable
from symverify.semantics.rings import ModRing
from symverify.semantics.straightline import eval_mod, program

__all__ = [
    "is_prime", "random_prime", "trial_error", "trials_needed", "run_randomized", "choose_engine", "torch_trial_error",
    "TorchPlan", "PRIME_LOW", "PRIMES_IN_RANGE", "TORCH_PRIME_LOW", "TORCH_PRIMES_IN_RANGE", "TORCH_MIN_COST",
    "ENGINES", "BACKEND_TORCH", "BACKEND_PYTHON", "PrimePlan", "plan_primes", "per_trial_error", "primes_in_range_lower",
    "USEFUL_PER_TRIAL", "LARGE_PRIME_PER_TRIAL", "pow2_text",
]

PRIME_LOW = 1 << 61
PRIMES_IN_RANGE = 1 << 55  # a lower bound on #primes in [2^61, 2^62): x/ln x < π(x) < 1.25506·x/ln x
TORCH_PRIME_LOW = 1 << 30
TORCH_PRIMES_IN_RANGE = 1 << 25  # a lower bound on #primes in [2^30, 2^31) (same inequalities: > 3.5·10^7)
USEFUL_PER_TRIAL = Fraction(1, 1 << 16)  # the 61-bit primes are used when they give at least this per trial
LARGE_PRIME_PER_TRIAL = Fraction(1, 1 << 48)  # larger primes are sized to give at least this per trial
TORCH_USEFUL = Fraction(1, 1 << 10)  # the torch engine needs D/2^30 and its per-trial bound at most this
# Engine "auto" picks torch from this many operations per evaluation of both sides. Measured on
# CPU (one thread, dense models, 5 trials at 31-bit primes against 2 at 2^61): break-even near
# 5·10^5, torch 2-3x faster at 7·10^6 and 4-12x at 3·10^7; importing torch costs seconds once.
TORCH_MIN_COST = 1_000_000
ENGINES = ("auto", "torch", "python")
BACKEND_TORCH = "torch int64 mod 31-bit primes"
BACKEND_PYTHON = "python ints mod p ≥ 2^61"
def random_prime(stream: Stream, avoid: int = 1, low: int = PRIME_LOW, opts: Options | None = None) -> int:
    """A prime uniform among the primes in ``[low, 2·low)`` (default ``[2^61, 2^62)``) that do not
    divide ``avoid`` (rejection sampling from the challenge stream; every candidate is decided
    exactly by :func:`symverify.primes.is_prime`).

    With ``opts`` carrying a deadline, it is polled before every candidate, and a primality proof
    that the Miller–Rabin screen cannot replace (a modulus above ``3.3·10^24``: seconds at 1000
    bits, not interruptible) runs in a child process limited to the time left
    (:func:`~symverify.provers.guard.run_limited`); past the deadline
    :class:`~symverify.deadline.DeadlineExceededError` is raised."""
    check = None if opts is None else opts.checker()
    while True:
        if check is not None:
            check()
        c = stream.between(low, 2 * low)
        if not (passes_screen(c) and avoid % c):
            continue
        if screen_decides(c) or check is None:
            if is_prime(c):
                return c
            continue
        assert opts is not None
        lim = run_limited(is_prime, (c,), memory=opts.memory(), timeout=max(opts.remaining() or 0.0, 0.0))
        if lim.status != "ok":
            raise DeadlineExceededError(f"proving a {c.bit_length()}-bit modulus prime: {lim.detail}")
        if lim.value:
            return c


def primes_in_range_lower(bits: int) -> int:
    """A lower bound on the number of primes in ``[2^bits, 2^(bits+1))`` (see the module docstring).

    >>> primes_in_range_lower(61) >= 2**54
    True
    """
    return PRIMES_IN_RANGE if bits == 61 else (1 << bits) // (2 * bits)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def per_trial_error(bounds: Bounds, bits: int) -> Fraction:
    """``ε_L`` for primes drawn uniformly from ``[2^L, 2^(L+1))``, ``L = bits`` (module docstring)."""
    bad = _ceil_div(bounds.height_bits, bits)
    excluded = _ceil_div(bounds.denominator.bit_length(), bits)
    avail = primes_in_range_lower(bits) - excluded
    if avail <= 0:
        return Fraction(1)
    return min(Fraction(1), Fraction(bounds.degree, 1 << bits) + Fraction(bad, avail))


@dataclass(frozen=True)
class PrimePlan:
    """The python engine's primes: the fixed ``2^61 − 1`` (``bits = 61``, ``fixed``) or primes uniform
    in ``[2^bits, 2^(bits+1))``; ``per_trial`` is the certified per-trial failure bound ``ε``."""

    bits: int
    fixed: bool
    per_trial: Fraction

    @property
    def low(self) -> int:
        return 1 << self.bits


def plan_primes(bounds: Bounds) -> PrimePlan | None:
    """The smallest prime size whose per-trial bound is useful (module docstring); None when even
    :data:`~symverify.primes.MAX_PRIME_BITS`-bit primes are not enough."""
    eps, fixed = trial_error(bounds)
    if eps <= USEFUL_PER_TRIAL:
        return PrimePlan(61, fixed, eps)
    bits = max(bounds.degree.bit_length(), bounds.height_bits.bit_length()) + 64
    while bits <= MAX_PRIME_BITS:
        eps = per_trial_error(bounds, bits)
        if eps <= LARGE_PRIME_PER_TRIAL:
            return PrimePlan(bits, False, eps)
        bits += 32
    return None


POINTS_FROM = CONSTRUCTION


def transcript(lhs: Side, rhs: Side, seed: int) -> Transcript:
    """The Fiat–Shamir transcript of a randomized run: the method, the seed and the injective
    fingerprints of both sides (:mod:`symverify.provers.challenge`). Every prime and point is read
    from a stream of it labelled with the draw's purpose, engine, trial and prime, so a change of
    either side gives independent points, and finding two different sides that agree at their
    points is as hard as the stated bound says (docs/trusted-base.md, "The trial points")."""
    return Transcript("randomized", seed, fingerprint(lhs.obj), fingerprint(rhs.obj))


def trial_error(bounds: Bounds) -> tuple[Fraction, bool]:
    """``(per-trial failure bound, uses the fixed prime 2^61 − 1)``; see the module docstring."""
    fixed = bounds.height_below_m61 and bounds.denominator % M61 != 0
    if fixed:
        return Fraction(bounds.degree, M61), True
    bad = -(-bounds.height_bits // 61)
    excluded = -(-bounds.denominator.bit_length() // 61)
    return Fraction(bounds.degree, PRIME_LOW) + Fraction(bad, PRIMES_IN_RANGE - excluded), False


def trials_needed(eps: Fraction, target: Fraction) -> int | None:
    """Least ``k ≥ 1`` with ``eps^k ≤ target`` (None when ``eps ≥ 1``); exact at any size.

    >>> trials_needed(Fraction(4, 2**61 - 1), Fraction(1, 2**100))  # degree 4: two points suffice
    2
    >>> trials_needed(Fraction(1, 2**40), Fraction(1, 2**2000))
    50
    """
    if eps <= 0:
        return 1
    if eps >= 1:
        return None
    k = max(1, math.floor(_log2(target) / _log2(eps)) - 1)
    while k > 1 and eps ** (k - 1) <= target:
        k -= 1
    while eps**k > target:
        k += 1
    return k


def _log2(q: Fraction) -> float:
    """``log2 q`` as a float, for rationals of any size (no float overflow or underflow)."""
    return -math.inf if q == 0 else math.log2(q.numerator) - math.log2(q.denominator)


def _ceil_log2(a: int, b: int) -> int:
    """The least integer ``t`` with ``a ≤ b·2^t`` (``a, b > 0``), exactly."""
    t = a.bit_length() - b.bit_length()

    def fits(t: int) -> bool:
        return a <= (b << t) if t >= 0 else (a << -t) <= b

    while not fits(t):
        t += 1
    while fits(t - 1):
        t -= 1
    return t


def pow2_text(q: Fraction) -> str:
    """``q < 1`` as ``2^x`` with ``x`` the least multiple of 0.1 such that ``q ≤ 2^x`` (exact, so the
    text never understates the bound); ``"1"`` when ``q ≥ 1`` (no bound), ``"0"`` for 0.

    >>> pow2_text(Fraction(1, 2**100)), pow2_text(Fraction(3, 2**62)), pow2_text(Fraction(1)), pow2_text(Fraction(0))
    ('2^-100.0', '2^-60.4', '1', '0')
    """
    if q <= 0:
        return "0"
    if q >= 1:
        return "1"
    t = _ceil_log2(q.numerator**10, q.denominator**10)
    return f"2^{t / 10:.1f}"


@dataclass(frozen=True)
class TorchPlan:
    """The torch engine's per-trial numbers: ``β`` (bad primes), ``B`` points, ``ε = β + (D/2^30)^B``."""

    bad: Fraction
    point: Fraction
    batch: int
    per_trial: Fraction


def torch_trial_error(bounds: Bounds, symbolic: bool, target: Fraction) -> TorchPlan:
    """The per-trial bound of the torch engine (see the module docstring).

    >>> from symverify.provers.bounds import Bounds
    >>> plan = torch_trial_error(Bounds(4, 20, True, 0, 0, 6, 1), False, Fraction(1, 2**100))
    >>> plan.bad, plan.batch, plan.per_trial == Fraction(4, 2**30) ** 4   # H ≤ 30: no bad prime
    (Fraction(0, 1), 4, True)
    """
    point = Fraction(bounds.degree, TORCH_PRIME_LOW)
    if bounds.height_bits <= 30:
        bad = Fraction(0)
    else:
        excluded = -(-bounds.denominator.bit_length() // 30)
        bad = Fraction(-(-bounds.height_bits // 30), TORCH_PRIMES_IN_RANGE - excluded)
    if symbolic:
        batch = 1
    elif bad == 0:
        batch = trials_needed(point, target) or 1
    else:
        batch = trials_needed(point, bad) or 1
    return TorchPlan(bad, point, batch, bad + point**batch)


def _torch_blocker(lhs: Side, rhs: Side, bounds: Bounds, plan: TorchPlan) -> str | None:
    """Why the torch engine cannot run this pair (None: it can)."""
    import importlib.util

    kal = [s.label() for s in (lhs, rhs) if not torch_executable(s)]
    if kal:
        return f"the torch executor takes models and circuits, not {kal[0]}"
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    if plan.point > TORCH_USEFUL:
        return f"the degree bound D = {show_int(bounds.degree)} exceeds 2^20, so D/p > 2^-10 for a 31-bit prime"
    if plan.per_trial > TORCH_USEFUL:
        return (f"the per-trial bound {pow2_text(plan.per_trial)} exceeds 2^-10 (coefficient height < 2^{bounds.height_bits}: "
                "too many 31-bit primes could divide the difference)")
    return None


def choose_engine(lhs: Side, rhs: Side, bounds: Bounds, engine: str, target: Fraction) -> tuple[str, str, TorchPlan]:
    """``(engine, why, torch plan)``: ``"torch"`` or ``"python"`` for :func:`run_randomized`.

    ``engine="python"`` forces the python engine; ``"torch"`` forces torch and raises
    ``UsageError`` (``BackendUnavailableError`` when torch is missing) where it cannot run;
    ``"auto"`` picks torch when it can run, one evaluation of both sides costs at least
    :data:`TORCH_MIN_COST` operations (below that the one-time torch import outweighs the gain),
    and its estimated time (``k`` trials of both sides, :mod:`symverify.provers.engine_cost`) is
    below the python engine's; else python.
    """
    if engine not in ENGINES:
        raise UsageError(f"randomized engine: expected one of {', '.join(ENGINES)}, found {engine!r}")
    plan = torch_trial_error(bounds, bool(lhs.params() | rhs.params()), target)
    if engine == "python":
        return "python", "requested (backend='python')", plan
    blocker = _torch_blocker(lhs, rhs, bounds, plan)
    if engine == "torch":
        if blocker == "torch is not installed":
            from symverify.executors._torch import require_torch

            require_torch()  # raises BackendUnavailableError with the install hint
        if blocker is not None:
            raise UsageError(f"backend='torch' for method 'randomized': {blocker}; use backend='python' or leave it unset")
        return "torch", "requested (backend='torch')", plan
    if blocker is not None:
        return "python", blocker, plan
    cost = lhs.cost() + rhs.cost()
    if cost < TORCH_MIN_COST:
        return "python", f"one evaluation costs about {cost} operations, below {TORCH_MIN_COST}: torch does not pay off", plan
    from symverify.provers.engine_cost import estimate

    primes = plan_primes(bounds)
    k_python = None if primes is None else trials_needed(primes.per_trial, target)
    est = estimate(lhs, rhs, k_python, trials_needed(plan.per_trial, target), plan.batch)
    if est.cheaper() == "python":
        return "python", f"cheaper by the cost model ({est.text()})", plan
    return "torch", f"torch is installed, the degree bound D = {show_int(bounds.degree)} gives D/p ≤ 2^-10, and it is cheaper by the cost model ({est.text()})", plan


def _sample(side: Side, names: list[str], stream: Stream, p: int) -> tuple[list[list[int]], dict[str, int]]:
    """A uniform point of ``F_p``: every input entry, then every parameter in name order."""
    flat = stream.residues(p, side.n * side.d + len(names))
    u = [flat[i * side.d : (i + 1) * side.d] for i in range(side.n)]
    return u, dict(zip(names, flat[side.n * side.d :]))


def _bound_fields(bound: Fraction) -> dict[str, Any]:
    return {"bound": pow2_text(bound), "bound_log2": math.ceil(_log2(bound) * 100 + 1e-6) / 100 if 0 < bound < 1 else None}


def _trial_count(eps: Fraction, opts: Options) -> int | None:
    """The trials to run: enough for ``opts.error_bound``; a caller's ``trials`` only adds more."""
    needed = trials_needed(eps, opts.error_bound)
    if needed is None:
        return None
    return max(needed, opts.trials or 0)


def _proved(method: str, ev: dict[str, Any], eps: Fraction, k: int, opts: Options, seconds: float) -> MethodResult:
    """``proved`` with bound ``eps^k``, checked here against the requested ``error_bound``."""
    bound = eps**k
    ev.update(k=k, **_bound_fields(bound))
    if bound > opts.error_bound:  # unreachable by construction of k; the rule is enforced where it is stated
        return outcome.unknown(method, ev, notes=(
            f"{k} trials give the bound {pow2_text(bound)}, above the requested error_bound {pow2_text(opts.error_bound)}",),
            timings={"trials": seconds})
    return outcome.proved(method, ev, timings={"trials": seconds}, failure_bound=bound, error_bound=opts.error_bound)


def _refute(lhs: Side, rhs: Side, opts: Options, bounds: Bounds, method: str, u: list[list[int]], ps: dict[str, int],
            where: str) -> Any:
    """A counterexample for a trial point that differs mod ``p``: a small one if the search finds it,
    else the lifted trial point itself (it differs exactly); ProverError if neither separates."""
    cex = search(lhs, rhs, opts, found_by=method, degree=bounds.degree, sizes=(bounds.peak_height_bits, bounds.peak_degree))
    if cex is None and not affordable(u, ps, max(bounds.degree, bounds.peak_degree), bounds.peak_height_bits):
        return None  # the caller reports unknown: no counterexample small enough to re-check exactly
    if cex is None:  # the residues differ, so the lifted integer point differs exactly
        cex = confirm(lhs, rhs, u, ps, found_by=f"{method} (lifted trial point)")
    if cex is None:
        raise ProverError(f"{method}: the sides differ {where}, but agree under exact evaluation at that point; "
                          "the modular evaluator is wrong")
    return cex


def _first_cell(a: Any, b: Any) -> list[int] | None:
    for i, (ra, rb) in enumerate(zip(a, b)):
        for j, (x, y) in enumerate(zip(ra, rb)):
            if x != y:
                return [i, j]
    return None


def _refuted_or_unknown(method: str, ev: dict[str, Any], cex: Any, seconds: float) -> MethodResult:
    """Refuted with the re-checkable counterexample; unknown, with the mismatch kept as evidence, when
    none is small enough to re-check."""
    if cex is None:
        ev["sides_differ_mod_p"] = True
        note = ("the sides differ: their outputs differ modulo a trial prime (see the evidence), which equal "
                "polynomials cannot; but every counterexample found is too large to re-check by exact "
                "evaluation (degree × bits of the point plus coefficient bits over the budget), and 'refuted' needs a re-checked one")
        return outcome.unknown(method, ev, notes=(note,), timings={"trials": seconds})
    return outcome.refuted(method, ev, cex, timings={"trials": seconds})


def run_randomized(lhs: Side, rhs: Side, opts: Options, bounds: Bounds | None = None, *, method: str = "randomized",
                   tag: str = "sz", max_trials: int | None = None) -> MethodResult:
    """Schwartz–Zippel with a stated bound; a mismatch yields a re-checked counterexample.

    The engine (``opts.modular``: ``auto``, ``torch`` or ``python``) is chosen by
    :func:`choose_engine`; the evidence names it (``backend``) and says why (``backend_choice``).
    ``max_trials`` caps the trials (a pre-check): a run cut short of the trials the bound needs
    is ``unknown`` unless it finds a difference, never ``proved``. The timings split ``trials``
    (everything) from ``fingerprint`` (hashing both sides for the points, part of ``trials``).
    """
    spent: dict[str, float] = {}
    res = _run_randomized(lhs, rhs, opts, bounds, method, tag, max_trials, spent)
    return replace(res, timings={**res.timings, **spent}) if spent else res


def _transcript(lhs: Side, rhs: Side, seed: int, spent: dict[str, float]) -> Transcript:
    t = time.perf_counter()
    tr = transcript(lhs, rhs, seed)
    spent["fingerprint"] = time.perf_counter() - t
    return tr


def _run_randomized(lhs: Side, rhs: Side, opts: Options, bounds: Bounds | None, method: str, tag: str,
                    max_trials: int | None, spent: dict[str, float]) -> MethodResult:
    start = time.perf_counter()
    bounds = bounds or structure_bounds(lhs, rhs)
    engine, why, plan = choose_engine(lhs, rhs, bounds, opts.modular, opts.error_bound)
    remaining = opts.remaining()
    if engine == "torch" and opts.modular == "auto" and "torch" not in sys.modules and remaining is not None and remaining < 5:
        engine, why = "python", "importing torch (seconds, not interruptible) would not fit in the time left"
    if engine == "torch" and torch_executable(lhs) and torch_executable(rhs):  # choose_engine picks torch for no other pair
        return _run_torch(lhs, rhs, opts, bounds, plan, why, method, tag, start, max_trials, spent)
    primes_plan = plan_primes(bounds)
    ev: dict[str, Any] = {
        "backend": BACKEND_PYTHON,
        "backend_choice": why,
        "degree_bound": bounds.degree,
        "height_bits": bounds.height_bits,
    }
    if primes_plan is None:
        return outcome.unknown(method, ev, notes=(
            f"no prime of at most {MAX_PRIME_BITS} bits gives a useful bound for the degree bound D = "
            f"{bounds.degree if bounds.degree.bit_length() <= 64 else f'2^{bounds.degree.bit_length() - 1}+'} "
            f"and coefficient height < 2^{bounds.height_bits}",))
    eps, fixed = primes_plan.per_trial, primes_plan.fixed
    ev.update({
        "p": "2^61-1" if fixed else f"uniform random primes in [2^{primes_plan.bits}, 2^{primes_plan.bits + 1})",
        "prime_bits": 61 if fixed else primes_plan.bits + 1,
        "per_trial_bound": pow2_text(eps),
        "bound_formula": "(D/p)^k" if fixed else
        f"(D/2^L + ceil(H/L)/(N_L - ceil(log2(Q)/L)))^k, L = {primes_plan.bits}, N_L = a lower bound on #primes in [2^L, 2^(L+1))",
    })
    k = _trial_count(eps, opts)
    assert k is not None  # plan_primes gives eps < 1
    run = k if max_trials is None else min(k, max_trials)
    tr = _transcript(lhs, rhs, opts.seed, spent)
    ev["points_from"] = POINTS_FROM
    names = sorted(lhs.params() | rhs.params())
    primes: list[int] = []
    for t in range(run):
        if opts.expired():
            ev.update(k=t, **_bound_fields(eps**t))
            return outcome.unknown(method, ev, notes=(f"timeout after {t} of {k} trials",),
                                timings={"trials": time.perf_counter() - start})
        try:
            p = M61 if fixed else random_prime(tr.stream(tag, "python", t, "prime"), bounds.denominator, primes_plan.low, opts)
            u, ps = _sample(lhs, names, tr.stream(tag, "python", t, "point", p), p)
            a, b = _eval_point(lhs, u, p, ps, opts), _eval_point(rhs, u, p, ps, opts)
        except DeadlineExceededError:
            ev.update(k=t, **_bound_fields(eps**t))
            return outcome.unknown(method, ev, notes=(f"timeout during trial {t + 1} of {k}",),
                                timings={"trials": time.perf_counter() - start})
        primes.append(p)
        if a != b:
            ev.update(k=t + 1, mismatch_trial=t, mismatch_prime=str(p), mismatch_entry=_first_cell(a, b),
                      primes=[str(q) for q in primes])
            cex = _refute(lhs, rhs, opts, bounds, method, u, ps, f"mod p = {p} at trial {t}")
            return _refuted_or_unknown(method, ev, cex, time.perf_counter() - start)
    if not fixed:
        ev["primes"] = [str(q) for q in primes]
    if run < k:
        ev.update(k=run, **_bound_fields(eps**run))
        return outcome.unknown(method, ev, notes=(f"stopped after {run} of the {k} trials the bound needs",),
                            timings={"trials": time.perf_counter() - start})
    return _proved(method, ev, eps, k, opts, time.perf_counter() - start)


def _eval_point(side: Side, u: list[list[int]], p: int, ps: dict[str, int], opts: Options) -> list[list[int]]:
    """``side`` at the point ``u`` mod ``p`` (weights at ``ps``): circuits through their
    straight-line code (:func:`symverify.semantics.straightline.eval_mod`), other sides through
    :func:`~symverify.provers.modular.eval_mod_batch` (the same residues; the tests compare them)."""
    if isinstance(side, CircuitSide):
        c = side.obj
        prog = program(c)
        ring = ModRing(p, ps)
        vals = eval_mod(prog, [x for row in u for x in row], p, [ring.coerce(x) for x in prog.scalars], opts.checker())
        flat = [vals[o] for o in c.outputs] + [0] * (c.num_inputs - len(c.outputs))
        return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)]
    return eval_mod_batch(side, [u], BatchModRing([p], [ps]), check=opts.checker())[0]


def _torch_device() -> Any:
    from symverify.executors._torch import require_torch

    torch = require_torch()
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _run_torch(lhs: TorchSide, rhs: TorchSide, opts: Options, bounds: Bounds, plan: TorchPlan, why: str, method: str, tag: str,
               start: float, max_trials: int | None = None, spent: dict[str, float] | None = None) -> MethodResult:
    """The torch engine: ``k`` trials, each ``B`` points under a fresh prime in ``[2^30, 2^31)``."""

    eps, batch = plan.per_trial, plan.batch
    k = _trial_count(eps, opts)
    device = _torch_device()
    ev: dict[str, Any] = {
        "backend": BACKEND_TORCH,
        "backend_choice": why,
        "p": "uniform random primes in [2^30, 2^31)",
        "degree_bound": bounds.degree,
        "height_bits": bounds.height_bits,
        "points_per_trial": batch,
        "bad_prime_bound": pow2_text(plan.bad),
        "per_trial_bound": pow2_text(eps),
        "bound_formula": "(beta + (D/2^30)^B)^k, beta = ceil(H/30)/(2^25 - ceil(log2(Q)/30)) (0 when H <= 30)",
        "device": str(device),
    }
    if k is None:  # unreachable: choose_engine requires eps ≤ 2^-10
        return outcome.unknown(method, ev, notes=(f"the per-trial bound {pow2_text(eps)} is not below 1",))
    run = k if max_trials is None else min(k, max_trials)
    tr = _transcript(lhs, rhs, opts.seed, {} if spent is None else spent)
    ev["points_from"] = POINTS_FROM
    names = sorted(lhs.params() | rhs.params())
    primes: list[int] = []
    for t in range(run):
        if opts.expired():
            ev.update(k=t, points=t * batch, primes=[str(q) for q in primes], **_bound_fields(eps**t))
            return outcome.unknown(method, ev, notes=(f"timeout after {t} of {k} trials",),
                                timings={"trials": time.perf_counter() - start})
        p = random_prime(tr.stream(tag, "torch", t, "prime"), bounds.denominator, TORCH_PRIME_LOW)
        draw = tr.stream(tag, "torch", t, "point", p)
        ps = dict(zip(names, draw.residues(p, len(names))))
        points = draw.array(p, batch * lhs.n * lhs.d).reshape(batch, lhs.n, lhs.d)
        primes.append(p)
        try:
            hit = torch_first_mismatch(lhs, rhs, points, p, ps, device, check=opts.checker())
        except DeadlineExceededError:
            ev.update(k=t, points=t * batch, primes=[str(q) for q in primes], **_bound_fields(eps**t))
            return outcome.unknown(method, ev, notes=(f"timeout during trial {t + 1} of {k}",),
                                timings={"trials": time.perf_counter() - start})
        if hit is not None:
            ev.update(k=t + 1, points=t * batch + hit + 1, mismatch_trial=t, mismatch_point=hit, mismatch_prime=str(p),
                      primes=[str(q) for q in primes])
            u = [[int(x) for x in row] for row in points[hit]]
            cex = _refute(lhs, rhs, opts, bounds, method, u, ps, f"mod p = {p} at trial {t}, point {hit} ({BACKEND_TORCH})")
            return _refuted_or_unknown(method, ev, cex, time.perf_counter() - start)
    ev.update(points=run * batch, primes=[str(q) for q in primes])
    if run < k:
        ev.update(k=run, **_bound_fields(eps**run))
        return outcome.unknown(method, ev, notes=(f"stopped after {run} of the {k} trials the bound needs",),
                            timings={"trials": time.perf_counter() - start})
    return _proved(method, ev, eps, k, opts, time.perf_counter() - start)
