"""What ``symverify prove`` takes from a script's own result file (``runner.merge``): the rules of
a run file (docs/formats.md § Proof run), so that the run it writes is one its readers take back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from symverify.scripts.runner import RunSummary, Script, merge
from symverify.viz.run_format import check_run

SCRIPT = Script("s", Path("s.py"), "d")
PROVED = {"name": "i", "verdict": "proved", "method": "exact", "resources": {}, "bounds": {}, "detail": "", "kind": "prover",
          "basis": "", "checks": None, "over_bound": [], "ok": True, "digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]}


def _one(instances: list[dict[str, Any]], **fields: Any) -> Any:
    return merge(SCRIPT, [{"status": "done", "seconds": 0.0, "error": "",
                           "result": {"name": "s", "title": "t", **fields, "instances": instances}}])


def _two(a: dict[str, Any], b: dict[str, Any]) -> Any:
    return merge(SCRIPT, [{"status": "done", "seconds": 0.0, "error": "", "cases": 2, "part": f"shard {k}/2",
                           "result": {"name": "s", "title": "t", "ok": True, "instances": [{**inst, "case": k}]}}
                          for k, inst in enumerate((a, b))])


def _read_back(row: Any) -> dict[str, Any]:
    return check_run(json.loads(json.dumps(RunSummary(True, (row,)).to_json())), "run", from_file=True)


@pytest.mark.parametrize("merged", [lambda i: _one([i], ok=True), lambda i: _two(PROVED, i)], ids=["one part", "two parts"])
def test_a_randomized_proof_without_its_error_bound_is_a_crashed_row(merged: Any) -> None:
    """It made an ok row, shown as an exact ``proved`` in the table, JSON and JUnit, and a run file
    that ``--golden`` then refused to read back."""
    row = merged({**PROVED, "method": "exact+randomized"})
    assert row.status == "crashed" and row.result is None
    assert re.fullmatch(r"result JSON\.instances\[[01]\]\.failure_bound: a proved claim by 'exact\+randomized' states its "
                        r"randomized error bound; found none \(it would read as an exact argument\)", row.error), row.error
    with_bound = merged({**PROVED, "method": "exact+randomized", "failure_bound": "1/1024"})
    assert with_bound.status == "ok", with_bound.error
    assert _read_back(with_bound)["ok"] is True


def test_a_result_that_leaves_ok_out_states_nothing() -> None:
    """Its ``ok`` is derived from its instances, as a run file's summaries left out are (it was a
    crashed row saying ``ok: expected true …, found false`` of an ``ok`` the file did not have)."""
    row = _one([PROVED])
    assert row.status == "ok" and not row.error and row.result is not None and row.result["ok"] is True
    assert _read_back(row)["ok"] is True
    failed = _one([PROVED, {**PROVED, "name": "j", "verdict": "unknown", "ok": False}])
    assert failed.status == "failed" and failed.result is not None and failed.result["ok"] is False
    assert _one([PROVED], ok=False).status == "crashed"  # written, and false while every instance is ok
    lying = _one([{**PROVED, "verdict": "unknown"}], ok=True)  # ok re-derived: never an ok row
    assert lying.status == "failed"


@pytest.mark.parametrize(("tag", "value", "found"), [("case", True, "true"), ("case", "1", '"1"'), ("case", -1, "-1"),
                                                     ("case", 1.0, "1.0"), ("before", "2", '"2"'), ("before", None, "null"),
                                                     ("before", False, "false")])
def test_a_mistyped_case_tag_of_a_part_is_a_crashed_row(tag: str, value: Any, found: str) -> None:
    """``case: true`` was merged as case 1 and ``case: "1"`` as an instance made outside each();
    a ``before`` that is no index stood first."""
    inst = {**PROVED, tag: value}
    if tag == "before":
        inst["case"] = None
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.0, "error": "", "cases": 2, "part": "shard 0/2",
                          "result": {"name": "s", "title": "t", "ok": True, "instances": [{**PROVED, "case": 0}, inst]}},
                         {"status": "done", "seconds": 0.0, "error": "", "cases": 2, "part": "shard 1/2",
                          "result": {"name": "s", "title": "t", "ok": True, "instances": [{**PROVED, "case": 1}]}}])
    assert row.status == "crashed" and row.result is None
    assert row.error.startswith(f"result JSON: instance 'i': {tag}: expected "), row.error
    assert row.error.endswith(f", found {found}")


@pytest.mark.parametrize(("parts", "error"), [
    ([], "no part of the script ran"),
    ([{"status": "done", "result": None}], "a finished part (all) without a result: expected an object, found NoneType"),
    ([{"status": "done"}], "a finished part (all) without a result: expected an object, found NoneType"),
    ([{"status": "done", "part": "shard 0/2", "cases": 1, "result": {"name": "s", "title": "t", "instances": []}},
      {"status": "done", "part": "shard 1/2", "cases": 1, "result": [1]}],
     "a finished part (shard 1/2) without a result: expected an object, found list"),
])
def test_parts_without_a_result_are_a_crashed_row(parts: list[dict[str, Any]], error: str) -> None:
    """merge raised IndexError (out of the whole run) for finished parts that hold no result."""
    row = merge(SCRIPT, parts)
    assert (row.status, row.error, row.result) == ("crashed", error, None)
