"""Coverage of ``symverify/kernel/provers/compositional.py``, ``exact.py``, ``randomized.py``,
``stages_dask.py`` and ``verification.py``: the stage-outcome combiner's consistency refusals, a
memory-limited stage that times out, the exact prover's search for a nonzero point when the engine
refuses evaluations or never finds one, the difference summary for many terms or huge integers, the
trial count's exact correction of its float estimate, empty stage runs, a circuit too large to
measure in the report, and the numeric cross-check stopped by the timeout. Each test names the
function it reaches and says why a wrong implementation of that branch fails it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from cases import QUARTIC_C, QUARTIC_CERT, QUARTIC_M, SQUARE_M

import symverify as sv
from symverify.deadline import DeadlineExceededError
from symverify.errors import ProverError
from symverify.kernel.ir.certificate import Boundary
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate
from symverify.kernel.provers import compositional, randomized
from symverify.kernel.provers.compositional import StageOutcome, combine
from symverify.kernel.provers.exact import _difference_text, _nonzero_point
from symverify.kernel.provers.guard import Limited
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.sides import CircuitSide
from symverify.kernel.provers.stages_dask import stage_runs
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.verification import _describe, side_digest


# ---- compositional.py ------------------------------------------------------------------------
def test_combine_refuses_inconsistent_stage_outcomes() -> None:
    """compositional.py ``combine`` (now ProverError, a prover contradicting itself): outcomes out
    of stage order, or fewer than ``total`` with none stopping, never make a ``proved``."""
    with pytest.raises(ProverError, match="stage outcomes out of order: expected stage 0, found 1"):
        combine([StageOutcome(1), StageOutcome(0)], 2, 0.0)
    with pytest.raises(ProverError, match="stage outcomes: expected 3 stages, found 2"):
        combine([StageOutcome(0, layers=2), StageOutcome(1, layers=1)], 3, 0.0)
    ok = combine([StageOutcome(0, layers=2, monomials=5), StageOutcome(1, layers=1, monomials=7)], 2, 0.0)
    assert ok.ok and ok.stages_checked == 2 and ok.max_stage_layers == 2 and ok.monomials == 12


def test_an_isolated_stage_that_times_out_is_unknown(monkeypatch) -> None:
    """compositional.py ``StageRun.stage``: the memory-limited child reporting ``timeout`` stops the
    check with ``stopped="timeout"``: the verdict is unknown (a wrong branch reading ``lim.value``
    would crash or, worse, take the missing value as a proof). Every stage is planned into the child
    here."""
    monkeypatch.setattr(compositional, "STAGE_IN_PROCESS_MONOMIALS", 0)
    monkeypatch.setattr(compositional, "run_limited", lambda *a, **k: Limited("timeout", detail="the child ran out of time"))
    rep = sv.verify(QUARTIC_C, QUARTIC_M, method="compositional", certificate=QUARTIC_CERT, isolate=True)
    assert rep.verdict is sv.Verdict.UNKNOWN
    assert any("timeout" in n for n in rep.notes)


# ---- exact.py --------------------------------------------------------------------------------
class _Ring:
    """A stand-in engine: ``refuse`` evaluations raise ValueError, later ones return ``value``."""

    def __init__(self, refuse: int, value: int) -> None:
        self.refuse, self.value, self.calls = refuse, value, 0

    def nterms(self, p: object) -> int:
        return 2

    def evaluate(self, p: object, vals: list[int]) -> Fraction:
        self.calls += 1
        if self.calls <= self.refuse:
            raise ValueError("this engine refuses the evaluation")
        return Fraction(self.value)


def test_nonzero_point_skips_refused_evaluations_and_gives_up_after_200_tries() -> None:
    """exact.py ``_nonzero_point``: an evaluation the engine refuses is skipped (the next point is
    tried); when no point of the 200 is nonzero, None (never a point where the difference is 0)."""
    ring = _Ring(refuse=3, value=5)
    u, ps = _nonzero_point(ring, None, ["a"], 1, 2, 2, seed=0)  # type: ignore[arg-type]
    assert ring.calls == 4 and len(u) == 1 and len(u[0]) == 2 and [n for n, _ in ps] == ["a"]
    zero = _Ring(refuse=0, value=0)
    assert _nonzero_point(zero, None, [], 1, 1, 1, seed=0) is None  # type: ignore[arg-type]
    assert zero.calls == 200


def test_difference_text_summarises_many_terms_and_huge_integers() -> None:
    """exact.py ``_difference_text``: more than 8 terms are summarised; a coefficient over Python's
    int-to-str digit limit is summarised instead of crashing; a short polynomial is printed."""
    ring = PolyRing(1, (), "flint")
    x = ring.inputs()[0]
    many = sum((x**k for k in range(10)), ring.zero)
    assert _difference_text(ring, many, 9) == "a nonzero polynomial with 10 terms of degree 9"
    huge = x * (10**5000) + 1
    assert _difference_text(ring, huge, 1) == "a nonzero polynomial with 2 terms of degree 1"
    assert _difference_text(ring, 2 * x - 1, 1) == "2*x0 - 1"

    class Unprintable:
        """A polynomial whose engine prints its coefficients with Python's int-to-str (sympy with
        pure-Python ground types), over the digit limit: ``str`` raises ValueError."""

        def __str__(self) -> str:
            raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    assert _difference_text(_Ring(0, 1), Unprintable(), 3) == "a nonzero polynomial with 2 terms of degree 3"  # type: ignore[arg-type]


# ---- randomized.py ---------------------------------------------------------------------------
def _least_k(eps: Fraction, target: Fraction) -> int:
    k = 1
    while eps**k > target:
        k += 1
    return k


@pytest.mark.parametrize("skew", [1000.0, 1e-3])
def test_trials_needed_is_exact_whatever_the_float_estimate(monkeypatch, skew) -> None:
    """randomized.py ``trials_needed``: a float estimate above the answer is walked down (and one
    below walked up) to the least ``k`` with ``eps^k ≤ target`` (brute force); the estimate is
    skewed here because real floats are off by less than the margin of 1 the estimate leaves."""
    real = randomized._log2
    monkeypatch.setattr(randomized, "_log2", lambda q: real(q) * skew if q < Fraction(1, 2**30) else real(q))
    for eps, target in [(Fraction(3, 2**20), Fraction(1, 2**100)), (Fraction(1, 7), Fraction(1, 10**9))]:
        assert randomized.trials_needed(eps, target) == _least_k(eps, target)


def test_trial_count_without_a_useful_bound_is_none() -> None:
    """randomized.py ``_trial_count``: ε ≥ 1 gives no trial count (a wrong branch would loop forever
    or return a count whose bound is ≥ 1)."""
    opts = Options.from_call("randomized")
    assert randomized._trial_count(Fraction(1), opts) is None
    assert randomized._trial_count(Fraction(1, 4), opts) == _least_k(Fraction(1, 4), opts.error_bound)


def test_ceil_log2_is_exact() -> None:
    """The simplified ``_ceil_log2`` (its downward loop could never run) is the least ``t`` with
    ``a ≤ b·2^t`` (brute force), for ``t`` of both signs and exact powers of two."""
    for a in (1, 2, 3, 4, 5, 7, 8, 9, 1000, 2**64, 2**64 + 1):
        for b in (1, 2, 3, 5, 8, 1000, 2**70):
            t = randomized._ceil_log2(a, b)
            assert Fraction(a) <= b * Fraction(2) ** t and not Fraction(a) <= b * Fraction(2) ** (t - 1)


def test_interpolate_matches_the_table() -> None:
    """The rewritten ``_interpolate``: the first value at or below the first size, the table's
    values at its sizes, linear in between, extrapolated by the power law past the last."""
    table = randomized.PASS_COST
    assert randomized._interpolate(table, 10, 1.6) == table[0][1]
    for b, v in table:
        assert randomized._interpolate(table, b, 1.6) == pytest.approx(v)
    assert randomized._interpolate(table, 224, 1.6) == pytest.approx((1.2 + 1.45) / 2)
    assert randomized._interpolate(table, 1024, 1.6) == pytest.approx(3.4 * 2**1.6)
    assert not math.isnan(randomized._interpolate(randomized.PRIME_COST, 100, 3.0))


# ---- stages_dask.py --------------------------------------------------------------------------
def test_stage_runs_of_no_stage_is_empty() -> None:
    """stages_dask.py ``stage_runs``: one boundary (or none) has no stage: no run (a run (0, 0)
    would be an empty task, and (0, 1) a stage that does not exist)."""
    assert stage_runs([Boundary(layer=0, cells=())], 4) == []
    assert stage_runs([], 4) == []
    assert stage_runs([Boundary(layer=0, cells=()), Boundary(layer=3, cells=())], 4) == [(0, 1)]


# ---- verification.py -------------------------------------------------------------------------
def test_a_circuit_of_more_than_50000_gates_is_described_by_its_sizes() -> None:
    """verification.py ``_describe``: the size counts the non-constant gates (the same number the
    full measures give), and the outputs and symbols are reported."""
    gates = (Gate.const(3), *(Gate.add(1 + k, 0) for k in range(50_001)))
    c = Circuit(1, 1, gates, (len(gates),), name="chain")
    side = CircuitSide(c, 1, 1)
    got = _describe(side)
    digest = got.pop("digest")
    assert got == {"kind": "circuit", "name": "chain", "n": 1, "d": 1, "size": 50_001, "outputs": 1, "symbols": []}
    assert digest == side_digest(side) and digest.startswith("sha256:")  # the side is named by its content too
    assert side.describe()["size"] == 50_001


def test_numeric_cross_check_stopped_by_the_timeout_is_a_note(monkeypatch) -> None:
    """verification.py ``_cross_check``: the cross-check raising DeadlineExceededError leaves the
    verdict alone and says so in the notes (it must not turn into an error or drop the proof)."""
    import symverify.executors as executors

    pytest.importorskip("torch")

    def stopped(*a, **k):
        raise DeadlineExceededError("the timeout ran out")

    monkeypatch.setattr(executors, "cross_check", stopped)
    rep = sv.verify(QUARTIC_C, QUARTIC_M, method="exact", numeric=True)
    assert rep.proved and rep.numeric is None
    assert "numeric cross-check stopped: the timeout ran out" in rep.notes


def test_numeric_skip_reasons(monkeypatch) -> None:
    """verification.py ``_numeric_skip``: without torch imported and less than
    ``TORCH_IMPORT_SECONDS`` left, the cross-check is skipped (importing torch cannot be
    interrupted); sizing the exact evaluation stopped by the timeout skips it too. With time left
    and sizes known: no skip."""
    import sys

    from symverify.kernel.provers import bounds
    from symverify.kernel.provers.sides import pair_sides
    from symverify.kernel.verification import _numeric_skip

    pytest.importorskip("torch")
    a, b = pair_sides(QUARTIC_C, QUARTIC_M)
    assert _numeric_skip(a, b, Options.from_call("exact", numeric=True)) is None
    short = Options.from_call("exact", numeric=True, timeout=2.0)
    monkeypatch.delitem(sys.modules, "torch")  # restored after the test
    assert _numeric_skip(a, b, short) == "importing torch (seconds, not interruptible) would not fit in the time left"
    monkeypatch.undo()

    def stopped(*args, **kw):
        raise DeadlineExceededError("the timeout ran out")

    monkeypatch.setattr(bounds, "structure_bounds", stopped)
    assert _numeric_skip(a, b, Options.from_call("exact", numeric=True)) == "the timeout ran out while sizing the exact evaluation"


class _Stream:
    """A challenge stream that draws the given candidates in order."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)

    def between(self, lo: int, hi: int) -> int:
        v = self.values.pop(0)
        assert lo <= v < hi
        return v


@pytest.mark.parametrize("timeout", [None, 60.0])
def test_random_prime_rejects_a_strong_pseudoprime_above_the_screen(timeout) -> None:
    """randomized.py ``random_prime`` (without a deadline, and under one, the proof in a child
    process): 3 317 044 064 679 887 385 961 981 = 1 287 836 182 261 · 2 575 672 364 521 passes
    Miller–Rabin for all 13 screen bases and is the first number the screen does not decide; it is
    rejected and the next candidate, a prime (sympy), is drawn. Taking the screen's word there would
    void the Schwartz–Zippel bound."""
    import sympy

    from symverify.kernel.primes import _MR_LIMIT, passes_screen, screen_decides

    assert passes_screen(_MR_LIMIT) and not screen_decides(_MR_LIMIT) and not sympy.isprime(_MR_LIMIT)
    p = sympy.nextprime(_MR_LIMIT)
    opts = None if timeout is None else Options.from_call("randomized", timeout=timeout)
    assert randomized.random_prime(_Stream(_MR_LIMIT, p), 1, 1 << 81, opts) == p


def test_exact_difference_with_an_unaffordable_point_is_unknown(monkeypatch) -> None:
    """exact.py ``run_exact``: when the counterexample search finds nothing and the expansion's
    nonzero point is too large to evaluate exactly, the verdict is ``unknown`` with the note (a
    wrong branch would call ``confirm`` anyway or report ``refuted`` without a counterexample). With
    the point affordable, the same difference is ``refuted`` at the expansion's point."""
    from symverify.kernel.provers import exact

    monkeypatch.setattr(exact, "search_or_stop", lambda *a, **k: None)
    assert sv.verify(QUARTIC_C, SQUARE_M, method="exact").verdict is sv.Verdict.REFUTED
    monkeypatch.setattr(exact, "affordable", lambda *a, **k: False)
    rep = sv.verify(QUARTIC_C, SQUARE_M, method="exact")
    assert rep.verdict is sv.Verdict.UNKNOWN and rep.counterexample is None
    assert any("no counterexample small enough to re-check" in n for n in rep.notes)


def test_randomized_avoids_importing_torch_with_seconds_left(monkeypatch) -> None:
    """randomized.py ``_run_randomized``: the engine choice says torch, torch is not imported yet
    and under 5 s are left: the python engine runs instead, with its own plan (the torch plan would
    not fit its primes), says why, and still proves the identity within the error bound."""
    from types import SimpleNamespace

    from cases import SQUARE_C

    monkeypatch.setattr(randomized, "sys", SimpleNamespace(modules={}))  # torch "not imported" for this module only
    monkeypatch.setattr(randomized, "choose_engine", lambda *a, **k: ("torch", "the stand-in chose torch", None))
    rep = sv.verify(SQUARE_C, SQUARE_M, method="randomized", timeout=4.0)
    assert rep.proved and rep.evidence["backend"] == randomized.BACKEND_PYTHON
    assert rep.evidence["backend_choice"] == "importing torch (seconds, not interruptible) would not fit in the time left"
