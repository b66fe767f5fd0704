"""A claim proved by a randomized test carries its error bound into every record of a proof run.

``Instance.from_report`` of a ``Report`` proved by the randomized method recorded ``proved`` and
the method only: a proof made with ``error_bound=1/2`` read as plain ``proved`` in the table, the
run JSON, JUnit and golden records. Each test below checks one record, or a reader's refusal of a
run file that drops or forges the bound.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import SerializationError, UsageError
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.outcome import Verdict, fields_text, seal
from symverify.kernel.verification import Report
from symverify.scripts.protocol import Instance, ProofResult
from symverify.viz.run_format import check_run

SQUARE = Circuit(1, 1, (Gate.mul(0, 0),), (1,))


def _randomized() -> sv.Report:
    rep = sv.verify(SQUARE, SQUARE, method="randomized", error_bound=Fraction(1, 2))
    assert rep.proved and 0 < rep.failure_bound <= Fraction(1, 2)
    return rep


def _sealed_report(bound: Fraction) -> Report:
    """A randomized proof with a large bound, sealed as ``verify`` seals it (no prover states one
    this large for a small circuit), its sides named by their digests as ``verify`` names them."""
    side = {"digest": "sha256:" + "0" * 64}
    return Report(Verdict.PROVED, "randomized", {}, None, side, side, {}, (), 0, None, bound,
                  seal("Report", Verdict.PROVED, "randomized", bound, None, fields_text(({}, side, side, (), 0, None))))


def _run(*instances: Instance) -> dict[str, object]:
    res = ProofResult("bounds", "Bounds")
    for i in instances:
        res.instances.append(i)
    return {"format": "symverify.proof-run", "version": 4, "scripts": [
        {"name": "bounds", "title": "Bounds", "status": "ok" if res.ok else "failed", "result": res.to_json()}]}


def test_an_instance_carries_the_union_of_its_reports_error_bounds() -> None:
    rand, exact = _randomized(), sv.verify(SQUARE, SQUARE, method="exact")
    assert exact.failure_bound == 0
    one = Instance.from_report("x²", rand)
    assert one.failure_bound == rand.failure_bound and type(one.failure_bound) is Fraction
    two = Instance.from_report("x² twice", rand, exact, rand)
    assert two.failure_bound == 2 * rand.failure_bound and two.method == "randomized+exact"
    assert Instance.from_report("x² exactly", exact).failure_bound == 0
    refuted = sv.verify(SQUARE, Circuit(1, 1, (), (0,)), method="exact")
    assert Instance.from_report("x² = x", refuted, rand).failure_bound == 0  # no proof, no bound
    with pytest.raises(UsageError, match=r"sum to 3/2 ≥ 1, which bounds nothing"):
        Instance.from_report("vacuous", _sealed_report(Fraction(3, 4)), _sealed_report(Fraction(3, 4)))
    with pytest.raises(UsageError, match=r"method 'exact'.*randomized test.*add '\+randomized'"):
        Instance.from_report("relabelled", rand, method="exact")


def test_the_table_json_junit_and_golden_records_show_the_bound() -> None:
    from symverify.scripts.runner import _golden_view
    from symverify.testing import golden_record

    big = _sealed_report(Fraction(1, 2))
    inst = Instance.from_report("x²", big)
    res = ProofResult("bounds", "Bounds")
    res.instances.append(inst)
    assert "proved (ε ≤ 2^-1.0) prover" in res.table()
    assert res.to_json()["instances"][0]["failure_bound"] == "1/2"
    exact = Instance.from_report("x² exactly", sv.verify(SQUARE, SQUARE, method="exact"))
    assert "failure_bound" not in exact.to_json() and "ε" not in exact.verdict_text()
    assert golden_record(inst)["failure_bound"] == "1/2" and "failure_bound" not in golden_record(exact)
    run = check_run(_run(inst, exact), "run")
    assert [i["failure_bound"] for i in _golden_view(run)[0]["instances"]] == ["1/2", None]


def test_junit_names_the_bound() -> None:
    from symverify.scripts.runner import RunSummary, ScriptOutcome, junit_xml

    inst = Instance.from_report("x²", _sealed_report(Fraction(1, 2)))
    result = ProofResult("bounds", "Bounds")
    result.instances.append(inst)
    summary = RunSummary(True, (ScriptOutcome("bounds", "Bounds", "ok", 0.0, result.to_json()),))
    assert '<property name="failure_bound" value="1/2" />' in junit_xml(summary)


@pytest.mark.parametrize("forge, message", [
    (lambda i: i.pop("failure_bound"), "states its randomized error bound; found none"),
    (lambda i: i.update(failure_bound="0x1"), r"failure_bound: expected a randomized proof's error bound"),
    (lambda i: i.update(failure_bound=0.5), r"failure_bound: expected a randomized proof's error bound"),
    (lambda i: i.update(failure_bound="1"), r"error bound in \[0, 1\), found 1\Z"),
    (lambda i: i.update(method="exact"), r"only a prover's proved claim by the randomized method has"),
    (lambda i: i.update(verdict="unknown", ok=False), r"only a prover's proved claim by the randomized method has"),
])
def test_a_run_file_without_or_with_a_forged_bound_is_refused(forge, message) -> None:  # type: ignore[no-untyped-def]
    run = _run(Instance.from_report("x²", _randomized()))
    check_run(copy.deepcopy(run), "run")
    inst = run["scripts"][0]["result"]["instances"][0]  # type: ignore[index]
    forge(inst)
    if inst["verdict"] != "proved":
        run["scripts"][0]["status"] = "failed"  # type: ignore[index]
    with pytest.raises(SerializationError, match=message):
        check_run(json.loads(json.dumps(run)), "run", from_file=True)


def test_a_version_2_run_without_bounds_is_still_read() -> None:
    run = _run(Instance.from_report("x²", _randomized()))
    run["version"] = 2
    del run["scripts"][0]["result"]["instances"][0]["failure_bound"]  # type: ignore[index]
    del run["scripts"][0]["result"]["instances"][0]["digests"]  # type: ignore[index]  # neither came before version 3
    assert check_run(run, "run", from_file=True)["version"] == 2


def test_the_html_report_and_the_report_json_state_the_bound() -> None:
    from symverify.viz.report import report_page

    page = report_page(_run(Instance.from_report("x²", _sealed_report(Fraction(1, 2)))))
    assert "proved (ε ≤ 2^-1.0)" in page
    rand = _randomized()
    assert Fraction(rand.to_json()["failure_bound"]) == rand.failure_bound
    assert sv.verify(SQUARE, SQUARE, method="exact").to_json()["failure_bound"] == "0"
