"""A proof script's claim from ``verify``'s default method: ``auto`` refutes most wrong pairs by its
one-trial randomized pre-check, whose report names the method ``randomized (pre-check)``, and
``Instance.from_report`` refused that method (not words of ``METHOD_TOKENS``), so the script crashed
where it should have recorded a refuted claim with its counterexample."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.errors import UsageError
from symverify.kernel.provers.outcome import Verdict
from symverify.scripts.protocol import PRECHECK_METHOD, Instance, ProofResult


def _pair():
    product = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    total = sv.Circuit.trace(lambda u: [u[0][0] + u[0][1]], n=1, d=2)
    return product, total


def test_a_refutation_by_the_precheck_is_a_refuted_randomized_claim():
    report = sv.verify(*_pair())
    assert report.verdict is Verdict.REFUTED and report.method == PRECHECK_METHOD  # what auto names it
    claim = Instance.from_report("product is not the sum", report)
    assert claim.verdict is Verdict.REFUTED and claim.method == "randomized" and not claim.ok
    assert claim.counterexample is not None and claim.counterexample["found_by"]
    assert claim.digests == ((report.lhs["digest"], report.rhs["digest"]),)
    result = ProofResult("pre", "a refuted claim", [claim])
    data = result.to_json()
    assert data["counts"]["refuted"] == 1 and data["instances"][0]["method"] == "randomized"


def test_the_precheck_method_joins_the_others_of_a_claim():
    product, total = _pair()
    proved = sv.verify(product, product, method="exact")
    claim = Instance.from_report("two", proved, sv.verify(product, total))
    assert claim.method == "exact+randomized" and claim.verdict is Verdict.REFUTED


def test_a_method_given_as_the_precheck_text_is_still_refused():
    """Only the outcome's own method is read as ``randomized``: a script's ``method=`` is words."""
    with pytest.raises(UsageError, match=r"method 'randomized \(pre-check\)': expected words from"):
        Instance.from_report("x", sv.verify(*_pair()), method=PRECHECK_METHOD)
