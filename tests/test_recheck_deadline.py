"""The exact re-check of a counterexample (``verify`` → ``counterexample.recheck``)."""

from __future__ import annotations

import time

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
    """The method 'finds' ``cex`` (after ``sleep`` seconds): only the re-check decides."""

    def run_prover(method, prover, a, b, opts, timings):
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
