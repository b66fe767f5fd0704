"""A result that says ``ok: false`` where nothing fails (a claim proved within its bounds, or a
script whose every instance is ok): the row said "failed" and its failure read ``over bound:``
with an empty list (JUnit, the failures after the table), or nothing at all. A script's result is
refused as inconsistent (``script_main`` never writes it); a run file may say it (``ok`` left out
is false), and every place that shows the failure says what it is."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from symverify.cli import _print_failures
from symverify.scripts.protocol import Instance, ProofResult
from symverify.scripts.runner import RunSummary, Script, ScriptOutcome, failure_reason, junit_xml, merge
from symverify.viz.report import report_page

SCRIPT = Script("s", Path("s.py"), "d")


def _result(*instances: Instance) -> dict[str, Any]:
    return json.loads(json.dumps(ProofResult("s", "t", list(instances)).to_json()))


def _row(result: dict[str, Any]) -> ScriptOutcome:
    return merge(SCRIPT, [{"status": "done", "seconds": 0.0, "error": "", "result": result}])


def _within() -> Instance:
    return Instance.computed("rank", True, "exact rank over Q", "exact", resources={"layers": 3}, bounds={"layers": 4})


@settings(max_examples=20, deadline=None)
@given(ok=st.sampled_from([False, None]), argued=st.booleans(), top=st.booleans())
def test_a_claim_that_holds_within_its_bounds_but_says_not_ok_is_refused(ok, argued, top):
    inst = Instance.argued("lemma", "docs/theory.md § 2", checks=True) if argued else _within()
    result = _result(inst)
    if ok is None:
        del result["instances"][0]["ok"]
    else:
        result["instances"][0]["ok"] = ok
    if top:
        result["ok"] = False
    row = _row(result)
    claim = "an argued claim whose checks do not fail" if argued else "a computed claim proved"
    assert row.status == "crashed"
    assert row.error == (f"result JSON: instance {inst.name!r}: ok: expected true for {claim} within its bounds, "
                         f"found {'nothing' if ok is None else 'false'}: an inconsistent result")


def test_a_script_that_says_not_ok_while_every_instance_is_ok_is_refused():
    result = _result(_within())
    result["ok"] = False
    row = _row(result)
    assert row.status == "crashed"
    assert row.error == ("result JSON: ok: expected true, since every instance is ok (proved within its bounds), "
                         "found false: an inconsistent result")


@pytest.mark.parametrize("change, reason", [
    ({"ok": False}, "not ok, though proved within its bounds: the result says ok: false (an inconsistent result)"),
    ({"verdict": "unknown"}, "verdict unknown"),
    ({"resources": {"layers": 5}, "over_bound": ["layers"]}, "over bound: layers=5 > 4"),
])
def test_every_failure_shown_says_why(change, reason):
    """A row made without merge (a run file's): the JUnit message and the failures after the table."""
    inst = {**_result(_within())["instances"][0], **change, "ok": False}
    assert failure_reason(inst) == reason
    row = ScriptOutcome("s", "t", "failed", 0.0, {"title": "t", "instances": [inst]})
    xml = junit_xml(RunSummary(False, (row,)))
    assert f'message="{reason.replace(">", "&gt;")}"' in xml and 'message="over bound: "' not in xml
    buf = io.StringIO()
    _print_failures(Console(file=buf, width=300), RunSummary(False, (row,)))
    assert f"s: rank: {reason}" in buf.getvalue()


def test_argued_claims_whose_checks_fail_say_so():
    inst = {**_result(Instance.argued("lemma", "docs/theory.md § 2", checks=False))["instances"][0]}
    assert failure_reason(inst) == "argued, its checks fail"


def test_the_report_page_names_an_inconsistent_run():
    result = _result(_within())
    result["instances"][0]["ok"] = False
    result["ok"] = False
    run = {"ok": False, "scripts": [{"name": "s", "title": "t", "status": "failed", "ok": False, "result": result}]}
    page = report_page(run)
    assert "not ok, though proved within its bounds: the run says ok: false (an inconsistent run)" in page


def test_a_part_that_says_not_ok_while_its_instances_are_ok_is_refused():
    """Merged shards: the part's inconsistent ok is named, not dropped by the merge."""
    good = _result(_within())
    bad = {**_result(_within()), "ok": False}
    for r in (good, bad):
        r["instances"] = [{**r["instances"][0], "case": None, "before": 0}]
    parts = [{"status": "done", "seconds": 0.0, "error": "", "result": r, "part": f"shard {k}/2", "cases": 0}
             for k, r in enumerate((good, bad))]
    row = merge(SCRIPT, parts)
    assert row.status == "crashed"
    assert row.error.startswith("result JSON (part shard 1/2): ok: expected true, since every instance is ok"), row.error


def test_an_instance_over_a_bound_its_run_leaves_unlisted_is_shown_over_it():
    """A run may leave over_bound out: the reason is derived from resources and bounds, never
    read from its absence as 'within its bounds'."""
    inst = {**_result(_within())["instances"][0], "resources": {"layers": 5}, "ok": False}
    del inst["over_bound"]
    assert failure_reason(inst) == "over bound: layers=5 > 4"
    result = {**_result(_within()), "ok": False, "instances": [inst]}
    run = {"ok": False, "scripts": [{"name": "s", "title": "t", "status": "failed", "ok": False, "result": result}]}
    page = report_page(run)
    assert "over bound: layers" in page and "inconsistent" not in page
