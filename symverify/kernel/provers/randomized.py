"""The *randomized* method (docs/theory.md §5): Schwartz–Zippel identity testing mod large primes.

Each trial draws a prime ``p`` and ``B`` points (every input entry and every weight parameter
uniform in ``F_p``) and compares both sides exactly mod ``p`` on an engine
(:class:`~symverify.kernel.provers.modular.Engine`). The degree ``D`` of every entry of ``lhs − rhs``
(parameters included) and the height ``H`` (every nonzero integer coefficient of ``Q^S·Δ``, ``Δ``
such an entry, is below ``2^H``) are certified from structure (:mod:`symverify.kernel.provers.bounds`).

**One failure bound.** A trial misses a nonzero ``Δ`` only if (a) ``p`` divides every
coefficient of ``Q^S·Δ`` at the differing entry, or (b) ``Δ mod p ≠ 0`` and all ``B`` points are
roots (Schwartz–Zippel: ``(D/p)^B``). Primes are drawn uniformly among the primes of
``[2^L, 2^(L+1))`` that do not divide ``Q``; at most ``⌈H/L⌉`` of them divide a nonzero
coefficient, and none when ``H ≤ L`` (every nonzero coefficient is then below ``2^L ≤ p``). So one
trial fails with probability at most

    ε = β + (D/2^L)^B,   β = ⌈H/L⌉ / (N_L − ⌈bit_length(Q)/L⌉)   (β = 0 when H ≤ L),

with ``N_L`` a lower bound on the number of primes in ``[2^L, 2^(L+1))``: ``⌊2^L/(2L)⌋`` from
Rosser–Schoenfeld (``x/ln x < π(x) < 1.25506·x/ln x`` for ``x ≥ 17`` give ``π(2x) − π(x) >
(x/ln 2)·(2/(L+1) − 1.25506/L) ≥ 2^L/(2L)`` for ``L ≥ 5``), and from the same inequalities at the
two sizes the engines use most, ``N_30 = 2^25`` and ``N_61 = 2^55``. The fixed prime
``p = 2^61 − 1`` is used instead when ``H`` is below it and it does not divide ``Q``: then
``β = 0`` and ``ε = (D/p)^B``. :func:`trial_plan` is this formula, the only one; ``k`` independent
trials fail with probability ``ε^k``, and ``k`` is the least with ``ε^k ≤ error_bound`` (default
``2^-100``; :func:`trials_needed`). All arithmetic is on exact rationals.

**Prime sizes per engine.** The *python* engine (Python ints, ``B = 1``) takes, among
``L = 61`` (the fixed prime where it applies) and ``L = 64, 96, …`` up to
:data:`~symverify.kernel.primes.MAX_PRIME_BITS` with ``ε ≤`` :data:`USEFUL_PER_TRIAL` (``2^-16``),
the size that minimises the estimated time of the ``k`` trials ``ε^k ≤ error_bound`` needs
(:func:`plan_primes`, a measured cost model, :func:`trial_cost`): a pass over Python ints costs
about the same up to 160 bits, so on a large circuit one trial with a 129-bit prime replaces
three at 61 bits; a degree bound near ``2^61`` (where Fermat's little theorem can make ``x^p``
and ``x`` agree at every point mod ``p``) or a huge coefficient height likewise moves to larger
primes. The choice is only about time: the bound stated is :func:`trial_plan`'s for the size run;
when no size gives a useful bound, the verdict is ``unknown``. The *torch* engine (int64, primes below ``2^31``) uses
``L = 30`` and ``B`` points per trial, ``B`` the least with ``(D/2^30)^B ≤ β`` (``≤ error_bound``
when ``β = 0``); sides with symbolic weights use ``B = 1`` (the executor takes one parameter
assignment per call, so the point, inputs and weights, stays uniform). It runs only when
``D/2^30 ≤ 2^-10`` and ``ε ≤ 2^-10``, both sides are models or circuits (no model's dense ``W``,
``d'²``, over ``MAX_CELLS``) and torch is installed (:func:`choose_engine`). Every prime is proved prime (:mod:`symverify.kernel.primes`).

**One trial loop.** :func:`run_randomized` computes ``ε`` and ``k`` once, then per trial draws the
prime and, through the engine, the points from the Fiat–Shamir streams of
:mod:`symverify.kernel.provers.challenge` (one stream per purpose, engine, trial and prime), and asks the
engine for the first point where the sides differ. The report names the engine, the primes,
``B``, ``k``, ``D`` and the bound.

**Soundness rule.** ``proved`` is returned only when the stated failure bound ``ε^k`` is at most
the requested ``error_bound``: a caller's ``trials`` can only add trials, never lower ``k``
below what the bound needs. A mismatch mod ``p`` shows that the sides differ (equal polynomials
have equal residues); it is reported as ``refuted`` only with a counterexample re-checked by
exact evaluation (a lifted trial point differs exactly: equal rationals have equal residues),
otherwise as ``unknown`` with the mismatch (prime, trial, entry or point) kept as evidence.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from symverify.errors import ProverError
from symverify.ir import limits
from symverify.ir.bigint import show_int
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.primes import MAX_PRIME_BITS, is_prime, passes_screen, screen_decides
from symverify.kernel.provers import outcome
from symverify.kernel.provers.bounds import M61, Bounds, structure_bounds
from symverify.kernel.provers.challenge import CONSTRUCTION, Stream, Transcript
from symverify.kernel.provers.counterexample import (
    affordable,
    confirm_in_time,
    search_or_stop,
    stopped_note,
    value_bits,
)
from symverify.kernel.provers.fingerprint import checked_fingerprint
from symverify.kernel.provers.guard import run_limited
from symverify.kernel.provers.modular import Engine, PythonEngine, TorchEngine
from symverify.kernel.provers.options import DEFAULT_ERROR_BOUND, DeadlineExceededError, Options
from symverify.kernel.provers.outcome import MethodResult, UsageError
from symverify.kernel.provers.sides import Side, torch_executable

__all__ = [
    "is_prime", "random_prime", "trials_needed", "run_randomized", "choose_engine", "TrialPlan", "trial_plan",
    "plan_primes", "engine_plan", "primes_in_range_lower", "PRIME_LOW", "TORCH_PRIME_LOW", "TORCH_MIN_COST",
    "ENGINES", "BACKEND_TORCH", "BACKEND_PYTHON", "USEFUL_PER_TRIAL", "pow2_text",
    "trial_cost", "PASS_COST", "PRIME_COST",
]

PRIME_LOW = 1 << 61
TORCH_PRIME_LOW = 1 << 30
# Lower bounds on #primes in [2^L, 2^(L+1)) at the engines' usual sizes (module docstring; > 3.5·10^7 for L = 30).
_PRIME_COUNTS = {30: 1 << 25, 61: 1 << 55}
USEFUL_PER_TRIAL = Fraction(1, 1 << 16)  # a prime size is considered only when its per-trial bound is at most this
TORCH_USEFUL = Fraction(1, 1 << 10)  # the torch engine needs D/2^30 and its per-trial bound at most this
# Engine "auto" picks torch from this many operations per evaluation of both sides. Measured on
# CPU (one thread, dense models, 5 trials at 31-bit primes against 2 at 2^61): break-even near
# 5·10^5, torch 2-3x faster at 7·10^6 and 4-12x at 3·10^7; importing torch costs seconds once.
TORCH_MIN_COST = 1_000_000
ENGINES = ("auto", "torch", "python")
BACKEND_TORCH = TorchEngine.backend
BACKEND_PYTHON = PythonEngine.backend


def random_prime(stream: Stream, avoid: int = 1, low: int = PRIME_LOW, opts: Options | None = None) -> int:
    """A prime uniform among the primes in ``[low, 2·low)`` (default ``[2^61, 2^62)``) that do not
    divide ``avoid`` (rejection sampling from the challenge stream; every candidate is decided
    exactly by :func:`symverify.kernel.primes.is_prime`).

    With ``opts`` carrying a deadline, it is polled before every candidate, and a primality proof
    that the Miller–Rabin screen cannot replace (a modulus above ``3.3·10^24``: seconds at 1000
    bits, not interruptible) runs in a child process limited to the time left
    (:func:`~symverify.kernel.provers.guard.run_limited`); past the deadline, or when that child
    reaches its memory limit or crashes, :class:`~symverify.deadline.DeadlineExceededError` is raised,
    its detail starting with the child's status (``memory: …``; read by
    :func:`~symverify.kernel.provers.counterexample.stopped_note`)."""
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
        lim = run_limited(is_prime, (c,), memory=opts.memory(), timeout=max(opts.remaining() or 0.0, 0.0),
                          what="the primality proof of a modulus")
        if lim.status != "ok":
            raise DeadlineExceededError(f"{lim.status}: proving a {c.bit_length()}-bit modulus prime: {lim.detail}")
        if lim.value:
            return c


def primes_in_range_lower(bits: int) -> int:
    """A lower bound ``N_L`` on the number of primes in ``[2^bits, 2^(bits+1))`` (module docstring).

    >>> primes_in_range_lower(61) == 2**55, primes_in_range_lower(128) == 2**128 // 256
    (True, True)
    """
    return _PRIME_COUNTS.get(bits, (1 << bits) // (2 * bits))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class TrialPlan:
    """One trial's primes, points and failure bound ``ε = β + (D/low)^B`` (module docstring): primes
    uniform in ``[2^bits, 2^(bits+1))``, or the prime ``fixed``; ``bad`` is ``β``, ``point`` is
    ``D/low``, ``batch`` is ``B`` and ``per_trial`` is ``ε`` (at most 1)."""

    bits: int
    fixed: int | None
    bad: Fraction
    point: Fraction
    batch: int
    per_trial: Fraction

    @property
    def low(self) -> int:
        """The least prime a trial can draw (the fixed prime itself)."""
        return self.fixed or 1 << self.bits

    def formula(self) -> str:
        if self.fixed:
            return "(D/p)^k"
        L, n = self.bits, primes_in_range_lower(self.bits)
        count = f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"floor(2^{L}/{2 * L})"
        return f"(beta + (D/2^{L})^B)^k, beta = ceil(H/{L})/({count} - ceil(bit_length(Q)/{L})) (0 when H <= {L})"


def trial_plan(bounds: Bounds, bits: int, *, fixed: int | None = None, target: Fraction | None = None) -> TrialPlan:
    """The failure bound of one trial (module docstring), for primes in ``[2^bits, 2^(bits+1))`` or the
    prime ``fixed`` (which the caller has shown divides no coefficient). With ``target``, ``B`` is the
    least with ``(D/low)^B ≤ β`` (``≤ target`` when ``β = 0``); without, ``B = 1``.

    >>> plan = trial_plan(Bounds(4, 20, True, 0, 0, 6, 1), 30, target=Fraction(1, 2**100))
    >>> plan.bad, plan.batch, plan.per_trial == Fraction(4, 2**30) ** 4   # H ≤ 30: no bad prime
    (Fraction(0, 1), 4, True)
    """
    low = fixed or 1 << bits
    point, bad = Fraction(bounds.degree, low), Fraction(0)
    if fixed is None and bounds.height_bits > bits:
        avail = primes_in_range_lower(bits) - _ceil_div(bounds.denominator.bit_length(), bits)
        bad = Fraction(_ceil_div(bounds.height_bits, bits), avail) if avail > 0 else Fraction(1)
    # torch runs only at D/2^30 ≤ 2^-10, where B ≤ MAX_ERROR_BITS/10 for any target verify accepts; near 1
    # (a blocked plan) the count would be astronomical, so B = 1 there
    batch = 1 if target is None else trials_needed(point, bad or target, cap=limits.MAX_ERROR_BITS) or 1
    return TrialPlan(bits, fixed, bad, point, batch, min(Fraction(1), bad + point**batch))


# The python engine's cost model (:func:`plan_primes`), measured by benchmarks/prime_cost.py on one
# core: one evaluation pass over Python ints mod an L-bit prime relative to a pass mod 2^61 - 1
# (Python's int overhead dominates up to about 160 bits), and the time to draw one L-bit prime
# (:func:`random_prime`) in units of one 61-bit gate of such a pass (about 0.3 µs). Sizes in
# between are interpolated linearly, larger ones extrapolated (pass ∝ L^1.6, prime ∝ L^3).
PASS_COST = ((61, 1.0), (128, 1.0), (160, 1.05), (192, 1.2), (256, 1.45), (384, 2.1), (512, 3.4))
PRIME_COST = ((61, 1_100.0), (96, 6_000.0), (128, 12_000.0), (160, 27_000.0), (192, 38_000.0), (256, 95_000.0),
              (384, 270_000.0), (512, 650_000.0))
CHILD_PRIME_COST = 25_000.0  # a primality proof above 3.3·10^24 under a deadline runs in a child process


def _interpolate(table: tuple[tuple[int, float], ...], bits: int, power: float) -> float:
    if bits >= table[-1][0]:
        last, value = table[-1]
        return value * (bits / last) ** power
    k = next(k for k, (b, _) in enumerate(table) if bits <= b)  # exists: bits < the last size
    if k == 0:
        return table[0][1]
    (b0, v0), (b1, v1) = table[k - 1], table[k]
    return v0 + (v1 - v0) * (bits - b0) / (b1 - b0)


def trial_cost(plan: TrialPlan, ops: int, *, limited: bool = False) -> float:
    """The estimated cost of one trial of ``plan`` on the python engine, in 61-bit gate passes: one
    pass over ``ops`` operations at the plan's prime size, plus drawing its prime (nothing for the
    fixed prime; a child process for a primality proof above ``3.3·10^24`` when ``limited``, i.e.
    under a deadline, :func:`random_prime`). Only a heuristic for choosing the size: the bound of
    whatever plan is chosen is :func:`trial_plan`'s.

    >>> trial_cost(trial_plan(Bounds(4, 20, True, 0, 0, 6, 1), 61, fixed=M61), 1000)
    1000.0
    """
    bits = 61 if plan.fixed else plan.bits
    draw = 0.0 if plan.fixed else _interpolate(PRIME_COST, bits, 3.0)
    if limited and not plan.fixed and not screen_decides(1 << bits):
        draw += CHILD_PRIME_COST
    return ops * _interpolate(PASS_COST, bits, 1.6) + draw


def plan_primes(bounds: Bounds, target: Fraction = DEFAULT_ERROR_BOUND, *, ops: int = 0,
                limited: bool = False) -> TrialPlan | None:
    """The python engine's plan (module docstring): among the 61-bit plan (the fixed prime
    ``2^61 − 1`` where it divides no coefficient, else random 61-bit primes) and random primes of
    ``L = 64, 96, …`` up to :data:`~symverify.kernel.primes.MAX_PRIME_BITS` bits, each with a per-trial
    bound ``ε ≤`` :data:`USEFUL_PER_TRIAL` (:func:`trial_plan`), the one that minimises
    ``k · cost`` (``k`` the trials ``ε^k ≤ target`` needs, :func:`trials_needed`; ``cost`` one trial
    over ``ops`` operations, :func:`trial_cost`); the least size on ties. One trial with a larger
    prime thus replaces several at 61 bits when the circuit is large enough to pay for drawing it.
    None when no size gives a useful bound."""
    fixed = bounds.height_below_m61 and bounds.denominator % M61 != 0
    best: tuple[float, TrialPlan] | None = None
    for bits in (61, *range(64, MAX_PRIME_BITS + 1, 32)):
        plan = trial_plan(bounds, bits, fixed=M61 if fixed and bits == 61 else None)
        cost = trial_cost(plan, ops, limited=limited)
        if best is not None and cost >= best[0]:
            break  # one trial at this size or larger already costs more than the best plan
        k = trials_needed(plan.per_trial, target) if plan.per_trial <= USEFUL_PER_TRIAL else None
        if k is not None and (best is None or k * cost < best[0]):
            best = (k * cost, plan)
    return None if best is None else best[1]


def engine_plan(engine: str, bounds: Bounds, symbolic: bool, target: Fraction) -> TrialPlan | None:
    """The plan of ``engine`` (``"python"`` or ``"torch"``) for a pair with these bounds (the python
    engine's: :func:`plan_primes` with its defaults)."""
    if engine == "python":
        return plan_primes(bounds, target)
    return trial_plan(bounds, 30, target=None if symbolic else target)


POINTS_FROM = CONSTRUCTION


def transcript(lhs: Side, rhs: Side, seed: int) -> Transcript:
    """The Fiat–Shamir transcript of a randomized run: the method, the seed and the injective
    fingerprints of both sides (:mod:`symverify.kernel.provers.challenge`). Every prime and point is read
    from a stream of it labelled with the draw's purpose, engine, trial and prime, so a change of
    either side gives independent points, and finding two different sides that agree at their
    points is as hard as the stated bound says (docs/trusted-base.md, "The trial points"). The sides
    are ``verify``'s, checked at its start (:func:`~symverify.kernel.provers.fingerprint.checked_fingerprint`)."""
    return Transcript("randomized", seed, checked_fingerprint(lhs.obj), checked_fingerprint(rhs.obj))


def trials_needed(eps: Fraction, target: Fraction, *, cap: int | None = None) -> int | None:
    """Least ``k ≥ 1`` with ``eps^k ≤ target`` (None when ``eps ≥ 1``); exact at any size.

    With ``cap``, None also when more than ``cap`` are needed, decided before any power is computed
    when a float estimate of ``log target / log eps`` exceeds ``cap`` by a wide margin (so ``eps``
    near 1 costs no power beyond ``eps^(cap + 2)``); a returned ``k`` is always checked exactly.

    >>> trials_needed(Fraction(4, 2**61 - 1), Fraction(1, 2**100))  # degree 4: two points suffice
    2
    >>> trials_needed(Fraction(1, 2**40), Fraction(1, 2**2000))
    50
    >>> trials_needed(Fraction(2**30 - 1, 2**30), Fraction(1, 2**100), cap=1000) is None  # about 7·10^10
    True
    """
    if eps <= 0:
        return 1
    if eps >= 1:
        return None
    if target >= 1:
        return 1
    le, lt = _log2(eps), _log2(target)
    est = math.inf if le == 0 else lt / le  # le == 0: eps within 2^-1074 of 1
    if cap is not None and est > cap * (1 + 2.0**-20) + 2:  # the float error is far below the margin
        return None
    k = max(1, math.floor(est) - 1) if math.isfinite(est) else 1
    while k > 1 and eps ** (k - 1) <= target:
        k -= 1
    while eps**k > target:
        k += 1
    return None if cap is not None and k > cap else k


def _log2(q: Fraction) -> float:
    """``log2 q`` as a float, for rationals of any size (no float overflow or underflow; accurate
    near 1, where the difference of the logarithms of numerator and denominator would cancel)."""
    if q == 0:
        return -math.inf
    if Fraction(1, 2) <= q <= 2:
        return math.log1p((q.numerator - q.denominator) / q.denominator) / math.log(2)
    return math.log2(q.numerator) - math.log2(q.denominator)


def _ceil_log2(a: int, b: int) -> int:
    """The least integer ``t`` with ``a ≤ b·2^t`` (``a, b > 0``), exactly."""
    t = a.bit_length() - b.bit_length()

    def fits(t: int) -> bool:
        return a <= (b << t) if t >= 0 else (a << -t) <= b

    # never too large: b·2^(t−1) < 2^(len(b) + len(a) − len(b) − 1) = 2^(len(a) − 1) ≤ a
    while not fits(t):
        t += 1
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


def _torch_blocker(lhs: Side, rhs: Side, bounds: Bounds, plan: TrialPlan) -> str | None:
    """Why the torch engine cannot run this pair (None: it can)."""
    import importlib.util

    kal = [s.label() for s in (lhs, rhs) if not torch_executable(s)]
    if kal:
        return f"the torch executor takes models and circuits, not {kal[0]}"
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    for s in (lhs, rhs):  # its plans hold every W as a dense d'×d' tensor, whatever its sparsity
        dd = s.obj.inner_d if isinstance(s.obj, Model) else 0
        if dd * dd > limits.MAX_CELLS:
            return (f"the torch engine holds every W as a dense d'×d' array: {show_int(dd)}×{show_int(dd)} = "
                    f"{show_int(dd * dd)} cells for the {s.label()}, more than MAX_CELLS = {limits.MAX_CELLS}")
    if plan.point > TORCH_USEFUL:
        return f"the degree bound D = {show_int(bounds.degree)} exceeds 2^20, so D/p > 2^-10 for a 31-bit prime"
    if plan.per_trial > TORCH_USEFUL:
        return (f"the per-trial bound {pow2_text(plan.per_trial)} exceeds 2^-10 (coefficient height < 2^{bounds.height_bits}: "
                "too many 31-bit primes could divide the difference)")
    return None


def choose_engine(lhs: Side, rhs: Side, bounds: Bounds, engine: str, target: Fraction, *,
                  limited: bool = False) -> tuple[str, str, TrialPlan | None]:
    """``(engine, why, plan)``: ``"torch"`` or ``"python"`` for :func:`run_randomized`, with its
    :func:`engine_plan` (None: no prime size gives the python engine a useful bound; its prime size
    is chosen for one evaluation of both sides, ``limited``: under a deadline, :func:`plan_primes`).

    ``engine="python"`` forces the python engine; ``"torch"`` forces torch and raises
    ``UsageError`` (``BackendUnavailableError`` when torch is missing) where it cannot run;
    ``"auto"`` picks torch when it can run, one evaluation of both sides costs at least
    :data:`TORCH_MIN_COST` operations (below that the one-time torch import outweighs the gain),
    and its estimated time (``k`` trials of both sides, :mod:`symverify.provers.engine_cost`) is
    below the python engine's; else python.
    """
    if engine not in ENGINES:
        raise UsageError(f"randomized engine: expected one of {', '.join(ENGINES)}, found {engine!r}")

    def python_plan() -> TrialPlan | None:
        return plan_primes(bounds, target, ops=lhs.cost() + rhs.cost(), limited=limited)

    if engine == "python":
        return "python", "requested (backend='python')", python_plan()
    plan = engine_plan("torch", bounds, bool(lhs.params() | rhs.params()), target)
    assert plan is not None
    blocker = _torch_blocker(lhs, rhs, bounds, plan)
    if engine == "torch":
        if blocker == "torch is not installed":
            from symverify.kernel.engines._torch import require_torch

            require_torch()  # raises BackendUnavailableError with the install hint
        if blocker is not None:
            raise UsageError(f"backend='torch' for method 'randomized': {blocker}; use backend='python' or leave it unset")
        return "torch", "requested (backend='torch')", plan
    primes = python_plan()
    if blocker is not None:
        return "python", blocker, primes
    cost = lhs.cost() + rhs.cost()
    if cost < TORCH_MIN_COST:
        return "python", f"one evaluation costs about {cost} operations, below {TORCH_MIN_COST}: torch does not pay off", primes
    from symverify.provers.engine_cost import estimate

    k_python = None if primes is None else trials_needed(primes.per_trial, target)
    est = estimate(lhs, rhs, k_python, trials_needed(plan.per_trial, target), plan.batch)
    if est.cheaper() == "python":
        return "python", f"cheaper by the cost model ({est.text()})", primes
    return "torch", f"torch is installed, the degree bound D = {show_int(bounds.degree)} gives D/p ≤ 2^-10, and it is cheaper by the cost model ({est.text()})", plan


def _bound_fields(bound: Fraction) -> dict[str, Any]:
    return {"bound": pow2_text(bound), "bound_log2": math.ceil(_log2(bound) * 100 + 1e-6) / 100 if 0 < bound < 1 else None}


def _trial_count(eps: Fraction, opts: Options) -> int | None:
    """The trials to run: enough for ``opts.error_bound``; a caller's ``trials`` only adds more."""
    needed = trials_needed(eps, opts.error_bound)
    if needed is None:
        return None
    return max(needed, opts.trials or 0)


def _proved(method: str, ev: dict[str, Any], eps: Fraction, k: int, opts: Options, seconds: float) -> MethodResult:
    """``proved`` with bound ``eps^k``, held to the requested ``error_bound`` by :func:`outcome.proved`."""
    bound = eps**k
    ev.update(k=k, **_bound_fields(bound))
    # k ≥ trials_needed(eps, error_bound), so bound ≤ error_bound; outcome.proved enforces it (ProverError)
    return outcome.proved(method, ev, timings={"trials": seconds}, failure_bound=bound, error_bound=opts.error_bound)


def _refute(lhs: Side, rhs: Side, opts: Options, bounds: Bounds, method: str, u: list[list[int]], ps: dict[str, int],
            where: str) -> Any:
    """A counterexample for a trial point that differs mod ``p``: a small one if the search finds it,
    else the lifted trial point itself (it differs exactly); ProverError if neither separates.
    :class:`DeadlineExceededError` when the deadline stopped the search before a counterexample small
    enough to re-check was found, or the lifted point's confirmation (held to the deadline as verify's
    re-check is: :func:`~symverify.kernel.provers.counterexample.confirm_in_time`)."""
    stop: DeadlineExceededError | None = None
    try:
        cex = search_or_stop(lhs, rhs, opts, found_by=method, degree=bounds.degree,
                             sizes=(bounds.peak_height_bits, bounds.peak_degree))
    except DeadlineExceededError as e:  # the timeout, or a confirmation child's memory limit or crash
        cex, stop = None, e
    if cex is None and stop is None and opts.expired():  # a search that returned at the deadline
        stop = DeadlineExceededError()
    degree = max(bounds.degree, bounds.peak_degree)
    if cex is None and not affordable(u, ps, degree, bounds.peak_height_bits):
        if stop is not None:  # the search stopped, it did not run out of candidates: say what stopped it
            raise stop
        return None  # the caller reports unknown: no counterexample small enough to re-check exactly
    if cex is None:  # the residues differ, so the lifted integer point differs exactly
        cex = confirm_in_time(lhs, rhs, u, ps, f"{method} (lifted trial point)", opts,
                              value_bits(u, ps, degree, bounds.peak_height_bits))
    if cex is None:
        raise ProverError(f"{method}: the sides differ {where}, but agree under exact evaluation at that point; "
                          "the modular evaluator is wrong")
    return cex


def _refuted_or_unknown(method: str, ev: dict[str, Any], cex: Any, seconds: float, stopped: str = "") -> MethodResult:
    """Refuted with the re-checkable counterexample; unknown, with the mismatch kept as evidence, when
    none is small enough to re-check, or when ``stopped`` says what stopped the search or confirmation."""
    if cex is None:
        ev["sides_differ_mod_p"] = True
        why = stopped or ("every counterexample found is too large to re-check by exact evaluation (degree × bits "
                          "of the point plus coefficient bits over the budget)")
        note = ("the sides differ: their outputs differ modulo a trial prime (see the evidence), which equal "
                f"polynomials cannot; but {why}, and 'refuted' needs a re-checked counterexample")
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


def _engine(name: str) -> Engine:
    if name == "python":
        return PythonEngine()
    from symverify.kernel.engines._torch import require_torch

    torch = require_torch()
    return TorchEngine(torch.device("cuda" if torch.cuda.is_available() else "cpu"))


def _plan_fields(engine: Engine, plan: TrialPlan) -> dict[str, Any]:
    """What the report says about the primes, the points and the bound of one trial."""
    ev: dict[str, Any] = {
        "p": "2^61-1" if plan.fixed else f"uniform random primes in [2^{plan.bits}, 2^{plan.bits + 1})",
        "per_trial_bound": pow2_text(plan.per_trial),
        "bound_formula": plan.formula(),
    }
    if engine.batched:
        ev.update(points_per_trial=plan.batch, bad_prime_bound=pow2_text(plan.bad))
    else:
        ev["prime_bits"] = 61 if plan.fixed else plan.bits + 1
    return {**ev, **engine.evidence()}


def _run_randomized(lhs: Side, rhs: Side, opts: Options, bounds: Bounds | None, method: str, tag: str,
                    max_trials: int | None, spent: dict[str, float]) -> MethodResult:
    """The one trial loop: ``ε`` and ``k`` once from the engine's plan, then up to ``k`` trials."""
    start = time.perf_counter()
    bounds = bounds or structure_bounds(lhs, rhs)
    limited = opts.deadline is not None
    name, why, plan = choose_engine(lhs, rhs, bounds, opts.modular, opts.error_bound, limited=limited)
    remaining = opts.remaining()
    if name == "torch" and opts.modular == "auto" and "torch" not in sys.modules and remaining is not None and remaining < 5:
        name, why, plan = "python", "importing torch (seconds, not interruptible) would not fit in the time left", plan_primes(
            bounds, opts.error_bound, ops=lhs.cost() + rhs.cost(), limited=limited)
    engine = _engine(name)
    ev: dict[str, Any] = {"backend": engine.backend, "backend_choice": why, "degree_bound": bounds.degree,
                          "height_bits": bounds.height_bits}
    if plan is None:
        return outcome.unknown(method, ev, notes=(
            f"no prime of at most {MAX_PRIME_BITS} bits gives a useful bound for the degree bound D = "
            f"{bounds.degree if bounds.degree.bit_length() <= 64 else f'2^{bounds.degree.bit_length() - 1}+'} "
            f"and coefficient height < 2^{bounds.height_bits}",))
    if engine.prime_limit is not None and 2 * plan.low > engine.prime_limit:  # not an assert: kept under python -O
        raise ProverError(f"{method}: internal: the plan's primes (from {plan.low}) are beyond the {engine.name} "
                          f"engine's limit {engine.prime_limit}")
    ev.update(_plan_fields(engine, plan))
    eps = plan.per_trial
    k = _trial_count(eps, opts)
    if k is None:  # every plan in use has ε ≤ 2^-10 (plan_primes, _torch_blocker); not an assert: kept under -O
        raise ProverError(f"{method}: internal: no trial count reaches the error bound at ε = {eps} per trial")
    run = k if max_trials is None else min(k, max_trials)
    tr = _transcript(lhs, rhs, opts.seed, spent)
    ev["points_from"] = POINTS_FROM
    names = sorted(lhs.params() | rhs.params())
    primes: list[int] = []

    def drawn(t: int) -> dict[str, Any]:
        """The first ``t`` trials' primes (unless fixed) and, for a batched engine, their points."""
        return {**({"points": t * plan.batch} if engine.batched else {}),
                **({} if plan.fixed else {"primes": [str(q) for q in primes[:t]]})}

    def stop(t: int, note: str) -> MethodResult:
        ev.update(k=t, **drawn(t), **_bound_fields(eps**t))
        return outcome.unknown(method, ev, notes=(note,), timings={"trials": time.perf_counter() - start})

    for t in range(run):
        if opts.expired():
            return stop(t, f"timeout after {t} of {k} trials")
        try:
            p = plan.fixed or random_prime(tr.stream(tag, engine.name, t, "prime"), bounds.denominator, plan.low, opts)
            points, ps = engine.points(tr.stream(tag, engine.name, t, "point", p), p, lhs, names, plan.batch)
            hit = engine.first_mismatch(lhs, rhs, points, p, ps, opts.checker())
        except DeadlineExceededError as e:  # the timeout, or a prime's proof child out of memory (named as such)
            return stop(t, stopped_note(opts, e, f"during trial {t + 1} of {k}"))
        primes.append(p)
        if hit is not None:
            i, cell = hit
            where = {"points": t * plan.batch + i + 1, "mismatch_point": i} if engine.batched else {"mismatch_entry": cell}
            ev.update(k=t + 1, mismatch_trial=t, mismatch_prime=str(p), primes=[str(q) for q in primes], **where)
            u = [[int(x) for x in row] for row in points[i]]
            try:
                cex = _refute(lhs, rhs, opts, bounds, method, u, ps, f"mod p = {p} at trial {t}, point {i} ({engine.backend})")
            except DeadlineExceededError as e:
                return _refuted_or_unknown(method, ev, None, time.perf_counter() - start, stopped_note(
                    opts, e, "before a counterexample small enough to re-check by exact evaluation was found and confirmed"))
            return _refuted_or_unknown(method, ev, cex, time.perf_counter() - start)
    if run < k:
        return stop(run, f"stopped after {run} of the {k} trials the bound needs")
    ev.update(drawn(run))
    return _proved(method, ev, eps, k, opts, time.perf_counter() - start)
