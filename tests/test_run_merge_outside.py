"""Merging the parts of a sharded run (``symverify prove -j N``, the Dask backend's tasks): the
instances made outside each(), which every part makes and the row keeps once, must agree in every
field the run file shows (times aside); one that differs is a ``crashed`` row naming the instance
and the field, never the first part's copy shown as if every part agreed."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.scripts.runner import Script, available, merge, run_scripts

SCRIPT = Script("s", Path("s.py"), "d")

PROVED = {"name": "summary", "verdict": "proved", "method": "exact+randomized", "resources": {"layers": 2},
          "bounds": {"layers": 3}, "seconds": 0.5, "detail": "", "kind": "prover", "basis": "", "checks": None,
          "over_bound": [], "ok": True, "failure_bound": "1/1024", "case": None, "before": 2,
          "digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]}
REFUTED = {**{k: v for k, v in PROVED.items() if k != "failure_bound"}, "name": "refuted summary", "verdict": "refuted",
           "method": "exact", "ok": False, "counterexample": {"cell": [0, 1], "values": [1, 2]}}
ARGUED = {**{k: v for k, v in PROVED.items() if k not in ("failure_bound", "digests")}, "name": "argued summary", "verdict": "unknown",
          "method": "lemma", "kind": "argued", "basis": "docs/theory.md § 5", "checks": True}


def _case(k: int) -> dict[str, Any]:
    return {"name": f"case {k}", "verdict": "proved", "method": "exact", "resources": {}, "bounds": {}, "seconds": 0.1,
            "detail": "", "kind": "computed", "basis": "b", "checks": None, "over_bound": [], "ok": True, "case": k}


def _parts(outside: list[dict[str, Any]], other: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def result(k: int, insts: list[dict[str, Any]]) -> dict[str, Any]:
        return {"name": "s", "title": "S", "seconds": 1.0, "instances": [_case(k), _case(k + 2), *insts]}

    return [{"status": "done", "seconds": 1.0, "error": "", "cases": 4, "part": "shard 0/2", "result": result(0, outside)},
            {"status": "done", "seconds": 1.0, "error": "", "cases": 4, "part": "shard 1/2", "result": result(1, other)}]


CHANGES = [
    (PROVED, "failure_bound", "1/2048", "'1/1024' in shard 0/2 and '1/2048' in shard 1/2"),
    (PROVED, "detail", "3 of 4 cases", "'' in shard 0/2 and '3 of 4 cases' in shard 1/2"),
    (PROVED, "method", "exact+dense+randomized", "'exact+randomized' in shard 0/2 and 'exact+dense+randomized' in shard 1/2"),
    (PROVED, "resources", {"layers": 3}, "{'layers': 2} in shard 0/2 and {'layers': 3} in shard 1/2"),
    (PROVED, "resources", {"layers": 2.0}, "{'layers': 2} in shard 0/2 and {'layers': 2.0} in shard 1/2"),
    (PROVED, "bounds", {"layers": 9}, "{'layers': 3} in shard 0/2 and {'layers': 9} in shard 1/2"),
    (REFUTED, "counterexample", {"cell": [0, 0], "values": [1, 2]}, "in shard 0/2 and {'cell': [0, 0], 'values': [1, 2]}"),
    (REFUTED, "detail", "another", "'' in shard 0/2 and 'another' in shard 1/2"),
    (ARGUED, "checks", None, "True in shard 0/2 and None in shard 1/2"),
    (ARGUED, "basis", "docs/theory.md § Choice (causality)", "'docs/theory.md § 5' in shard 0/2 and 'docs/theory.md § Choice (causality)' in shard 1/2"),
    (PROVED, "before", 3, "2 in shard 0/2 and 3 in shard 1/2"),
]


@pytest.mark.parametrize(("inst", "key", "value", "shown"), CHANGES, ids=[f"{i['kind']}-{k}-{n}" for n, (i, k, _, _) in enumerate(CHANGES)])
def test_a_field_that_differs_between_parts_crashes_the_row_naming_it(inst: dict[str, Any], key: str, value: Any,
                                                                        shown: str) -> None:
    same = merge(SCRIPT, _parts([inst], [copy.deepcopy(inst)]))
    assert same.status in ("ok", "failed") and not same.error, same.error
    row = merge(SCRIPT, _parts([inst], [{**inst, key: value}]))
    assert row.status == "crashed" and row.result is None
    assert row.error.startswith(f"the parts made different instances outside each() (instance {inst['name']!r}: its "
                                f"{key} is "), row.error
    assert shown in row.error and "must not depend on the cases a part runs" in row.error


def test_a_field_left_out_in_one_part_differs() -> None:
    row = merge(SCRIPT, _parts([PROVED], [{k: v for k, v in PROVED.items() if k != "detail"}]))
    assert row.status == "crashed" and "its detail is '' in shard 0/2 and nothing in shard 1/2" in row.error


def test_times_may_differ() -> None:
    row = merge(SCRIPT, _parts([PROVED], [{**PROVED, "seconds": 7.5}]))
    assert row.status == "ok", row.error
    assert [i["name"] for i in row.instances()] == ["case 0", "case 1", "summary", "case 2", "case 3"]


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(["detail", "method", "resources", "bounds", "failure_bound"]), text=st.text(max_size=8),
       n=st.integers(0, 10**30))
def test_no_shown_field_of_an_outside_instance_is_taken_from_one_part_alone(key: str, text: str, n: int) -> None:
    value = {"detail": text, "method": "exact+randomized" + ("+dense" if n % 2 else ""), "resources": {"layers": n % 3},
             "bounds": {"layers": n + 2}, "failure_bound": f"1/{n + 2}"}[key]  # within the bound of 3
    other = {**PROVED, key: value}
    row = merge(SCRIPT, _parts([PROVED], [other]))
    if PROVED[key] == value:
        assert row.status == "ok", row.error
    else:  # never a row that shows shard 0/2's value as every part's
        assert row.status == "crashed" and f"its {key} is " in row.error


def test_a_detail_that_depends_on_the_parts_cases_crashes_a_parallel_run(tmp_path: Path) -> None:
    """A summary made after the loop whose detail names the cases the part ran: ``-j 2`` showed
    shard 0's ``cases [0, 2]`` as the run's, where one process says ``cases [0, 1, 2, 3]``."""
    (tmp_path / "summed.py").write_text(textwrap.dedent('''
        from symverify.scripts.protocol import Instance, ProofResult, each, script_main

        TITLE = "a summary of the cases"
        SHARDABLE = True


        def run(quick=False):
            r = ProofResult("summed", TITLE)
            seen = []
            for k in each(range(4)):
                seen.append(k)
                r.instances.append(Instance.computed(f"case {k}", True, "a comparison", "exact"))
            r.instances.append(Instance.computed("summary", True, "a comparison", "exact", detail=f"cases {seen}"))
            return r


        if __name__ == "__main__":
            raise SystemExit(script_main(run))
        '''), encoding="utf-8")
    scripts = available([tmp_path])
    one = run_scripts(scripts, ["summed"], jobs=1).outcomes[0]
    assert one.status == "ok" and one.instances()[-1]["detail"] == "cases [0, 1, 2, 3]"
    two = run_scripts(scripts, ["summed"], jobs=2).outcomes[0]
    assert two.status == "crashed"
    assert "made different instances outside each() (instance 'summary': its detail is 'cases [0, 2]'" in two.error


def test_parts_with_different_titles_crash_the_row() -> None:
    """The row showed the first part's title as the script's."""
    parts = _parts([PROVED], [PROVED])
    parts[1]["result"]["title"] = "S for cases 1 and 3"
    row = merge(SCRIPT, parts)
    assert (row.status, row.result) == ("crashed", None)
    assert row.error == ("the parts' results have different titles (shard 0/2: 'S'; shard 1/2: 'S for cases 1 and 3'): "
                         "expected one title, the same in every part")
