"""The exact re-check of a counterexample (``verify`` → ``counterexample.recheck``), also under the
timeout: values of millions of bits are re-checked in a child limited to the time left, and once that
has run out the verdict is ``unknown``, never ``refuted`` from an unfinished re-check; small ones are
re-checked in process as before."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import ProverError
from symverify.kernel import verification
from symverify.kernel.provers import outcome
from symverify.kernel.provers.outcome import Counterexample


def _squares(k: int, extra: int) -> sv.Circuit:
    def f(u):
        x = u[0][0]
        for _ in range(k):
            x = x * x
        return [x + extra * u[0][0]]

    return sv.Circuit.trace(f, n=1, d=1)


def _planted(monkeypatch, cex: Counterexample, sleep: float = 0.0) -> None:
    """The method 'finds' ``cex`` (after ``sleep`` seconds, having computed the pair's size bounds, as
    the randomized and exact methods do): only the re-check decides."""

    def run_prover(method, prover, a, b, opts, timings, bounds):
        bounds()
        time.sleep(sleep)
        return outcome.refuted(method, {}, cex)

    monkeypatch.setattr(verification, "run_prover", run_prover)


def test_a_wrong_counterexample_with_huge_values_is_a_prover_error(monkeypatch):
    """A claimed value of 200 kbit that exact evaluation does not reproduce: the ProverError's message
    printed the values by ``str``, which Python refuses past 4300 digits (a ValueError instead of the
    error naming the prover); they are now abbreviated."""
    wrong = Counterexample(((3,),), (), (0, 0), 3 ** (2**17), 3 ** (2**17) + 4, found_by="planted")
    _planted(monkeypatch, wrong)
    with pytest.raises(ProverError, match=r"claimed entry \(0, 0\) = <[0-9]+-bit integer.* exact evaluation gives"):
        sv.verify(_squares(17, 0), _squares(17, 1), method="randomized")


def test_a_huge_recheck_past_the_timeout_is_unknown(monkeypatch):
    """``(2/3)^(2^21)`` on both sides: a re-check of many seconds (Python's gcd of millions of bits,
    one product no deadline check interrupts) ran whatever the timeout, then answered. It is now
    stopped at the timeout, and the verdict is ``unknown`` with a note; the claimed values here are
    wrong, so a re-check that ran to its end would raise ProverError instead."""
    cex = Counterexample(((Fraction(2, 3),),), (), (0, 0), 0, 1, found_by="planted")
    _planted(monkeypatch, cex)
    report = sv.verify(_squares(21, 0), _squares(21, 1), method="randomized", timeout=1)
    assert str(report.verdict) == "unknown", report
    assert report.counterexample is None
    assert any("ran out while the counterexample was re-checked" in n for n in report.notes), report.notes


def test_a_large_recheck_in_the_child_still_decides(monkeypatch):
    """``3^(2^17)`` (about 200 kbit, above ``GUARD_BITS``) within the time: re-checked in the child, a
    right counterexample is ``refuted`` and a wrong one a ProverError, as in process."""
    lhs, rhs = _squares(17, 0), _squares(17, 1)
    right = Counterexample(((3,),), (), (0, 0), 3 ** (2**17), 3 ** (2**17) + 3, found_by="planted")
    _planted(monkeypatch, right)
    report = sv.verify(lhs, rhs, method="randomized", timeout=120)
    assert str(report.verdict) == "refuted" and report.counterexample == right, report
    wrong = Counterexample(((3,),), (), (0, 0), 3 ** (2**17), 3 ** (2**17) + 4, found_by="planted")
    _planted(monkeypatch, wrong)
    with pytest.raises(ProverError, match=r"counterexample re-check failed: the prover \(planted\) claimed entry"):
        sv.verify(lhs, rhs, method="randomized", timeout=120)


def test_a_small_recheck_runs_after_the_timeout(monkeypatch):
    """A counterexample of a few bits found just past the timeout is re-checked in process as before
    (it costs what the method's own confirmation did): ``refuted``, not ``unknown``."""
    cex = Counterexample(((2,),), (), (0, 0), 16, 18, found_by="planted")
    _planted(monkeypatch, cex, sleep=0.3)
    report = sv.verify(_squares(2, 0), _squares(2, 1), method="randomized", timeout=0.1)
    assert str(report.verdict) == "refuted" and report.counterexample == cex, report


def _scaled_squares(k: int, extra: int) -> sv.Circuit:
    """``((2/3)·x)^(2^k) + extra·x``: Fraction values of about ``2^k`` times the point's bits."""
    def f(u):
        x = Fraction(2, 3) * u[0][0]
        for _ in range(k):
            x = x * x
        return [x + extra * u[0][0]]

    return sv.Circuit.trace(f, n=1, d=1)


@pytest.mark.parametrize("method, k, timeout, what", [
    # 0.2 s: the confirmation of k = 16 (about 0.3 s on a fast machine) must not fit in the time left
    ("randomized", 16, 0.2, "ran out before a counterexample small enough to re-check by exact evaluation was found and confirmed"),
    ("exact", 19, 0.5, "ran out while a counterexample at the expansion's point was confirmed by exact evaluation"),
])
def test_the_method_s_own_confirmation_is_held_to_the_timeout(monkeypatch, method, k, timeout, what):
    """The search finds nothing (planted), so the method confirms its own point (the lifted trial point,
    the expansion's nonzero point) exactly: values of 1 to 4 Mbit, under ``MAX_CONFIRM_BITS``, were
    evaluated in process past the timeout (then verify's re-check found no time left). That confirmation
    now runs in a child limited to the time left, and the note names it."""
    from symverify.kernel.provers import counterexample, exact, randomized

    monkeypatch.setattr(randomized, "search_or_stop", lambda *a, **k: None)
    monkeypatch.setattr(exact, "search_or_stop", lambda *a, **k: None)
    real = counterexample.confirm

    def slow(*args, **kwargs):  # the confirmation outlasts the budget on any machine (it runs in the forked child)
        time.sleep(timeout + 1.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(counterexample, "confirm", slow)
    report = sv.verify(_scaled_squares(k, 0), _scaled_squares(k, 1), method=method, timeout=timeout)
    assert str(report.verdict) == "unknown" and report.counterexample is None, report
    assert any(f"timeout: {timeout} s {what}" in n for n in report.notes), report.notes


@pytest.mark.parametrize("method, pair, timeout", [
    ("randomized", lambda: (_squares(21, 0), _squares(21, 1)), 0.3),
    ("exact", lambda: (_scaled_squares(22, 0), _scaled_squares(22, 1)), 1.5),  # its expansion takes ~0.3 s
])
def test_a_search_stopped_by_the_timeout_says_so(monkeypatch, method, pair, timeout):
    """The counterexample search returns nothing once the deadline has passed; with a point too large to
    confirm, the randomized method's note said every counterexample was "too large to re-check" (and the
    exact method's that none small enough was found) instead of naming the timeout."""
    from symverify.kernel.provers import exact, randomized

    def stopped(lhs, rhs, opts, **kw):
        time.sleep(max(opts.remaining() or 0.0, 0.0) + 0.05)
        return None

    monkeypatch.setattr(randomized, "search_or_stop", stopped)
    monkeypatch.setattr(exact, "search_or_stop", stopped)
    report = sv.verify(*pair(), method=method, timeout=timeout)
    assert str(report.verdict) == "unknown", report
    assert any(f"timeout: {timeout} s ran out" in n for n in report.notes), report.notes
    assert not any("too large" in n for n in report.notes), report.notes


def test_a_recheck_child_stopped_by_its_memory_limit_is_not_a_timeout(monkeypatch):
    """The re-check child that reached its memory limit was noted as "timeout: … ran out"; the note
    names the memory limit."""
    from symverify.kernel.provers import guard
    from symverify.kernel.provers.guard import Limited

    _planted(monkeypatch, Counterexample(((3,),), (), (0, 0), 3 ** (2**17), 3 ** (2**17) + 3, found_by="planted"))
    monkeypatch.setattr(guard, "run_limited", lambda *a, **k: Limited("memory", detail="MemoryError in the child"))
    report = sv.verify(_squares(17, 0), _squares(17, 1), method="randomized", timeout=120, memory_limit=1 << 30)
    assert str(report.verdict) == "unknown" and report.counterexample is None, report
    (note,) = [n for n in report.notes if "re-checked" in n]
    assert note.startswith("memory limit: the child process reached its limit of 1073741824 bytes while the "
                           "counterexample was re-checked"), note
    assert "timeout" not in note, note


@pytest.mark.parametrize("method", ["exact", "randomized"])
def test_the_search_s_confirmation_is_held_to_the_timeout(monkeypatch, method):
    """The search's first separating point, ``u = 2`` for ``((2/3)·u)^(2^20)``, has values of about
    2.7 Mbit, under ``MAX_CONFIRM_BITS``: its exact confirmation ran in process (a Fraction product no
    deadline poll interrupts) seconds past ``timeout=0.5`` before the search gave up. It runs in a child
    limited to the time left (``run_limited`` with at most the timeout), and the verdict is unknown."""
    from symverify.kernel.provers import guard

    limited: list[tuple[str, float | None]] = []
    real = guard.run_limited

    def spy(fn, args, *, memory, timeout, what):
        limited.append((fn.__name__, timeout))
        return real(fn, args, memory=memory, timeout=timeout, what=what)

    monkeypatch.setattr(guard, "run_limited", spy)
    report = sv.verify(_scaled_squares(20, 0), _scaled_squares(20, 1), method=method, timeout=0.5)
    assert str(report.verdict) == "unknown" and report.counterexample is None, report
    assert any("timeout: 0.5 s ran out" in n for n in report.notes), report.notes
    assert limited and limited[0][0] == "confirm" and limited[0][1] <= 0.5, limited


def test_a_large_confirmation_in_the_child_still_refutes():
    """Within the time, the search's confirmation in the child (about 200 kbit, above ``GUARD_BITS``)
    gives the counterexample as in process."""
    report = sv.verify(_scaled_squares(16, 0), _scaled_squares(16, 1), method="exact", timeout=120)
    assert str(report.verdict) == "refuted" and report.counterexample.inputs == ((2,),), report
