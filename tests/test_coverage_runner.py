"""symverify.scripts.runner: resource ratios with unusable entries, the run JSON of a Dask run,
rows from malformed or interrupted parts, the timeout check, and the field lines of a golden
diff where scripts or instances are missing on one side.

Each test names the function of ``symverify/scripts/runner.py`` it is for and why its assertion
bites.
"""

from fractions import Fraction
from pathlib import Path

import pytest

from symverify.errors import UsageError
from symverify.scripts import runner
from symverify.scripts.runner import RunSummary, Script, ScriptOutcome, golden_diff, merge, ratios

SCRIPT = Script("s", Path("/x/s.py"), "/x", "Title")


def test_ratios_skip_bounds_they_cannot_divide():
    """ratios: a bound whose value is missing (KeyError) or not a number (ValueError) gives no row;
    the others keep their exact ratio, a zero bound its convention."""
    inst = {"resources": {"layers": 6, "width": "wide", "zero": 0, "pos": 2},
            "bounds": {"layers": 4, "missing": 3, "width": 2, "zero": 0, "pos": 0}}
    got = {k: r for k, _, _, r in ratios(inst)}
    assert got == {"layers": Fraction(3, 2), "zero": Fraction(0), "pos": Fraction(10**9)}


def test_run_json_names_the_scheduler_with_timings():
    """RunSummary.to_json: with timings, a Dask run records where it ran; without timings, or run on
    the local pool, there is no scheduler key."""
    s = RunSummary(True, (), 1.26, jobs=3, where="dask local")
    assert s.to_json(True)["scheduler"] == "dask local" and s.to_json(True)["seconds"] == 1.3
    assert "scheduler" not in s.to_json(False)
    assert "scheduler" not in RunSummary(True, (), 1.0).to_json(True)


def part(result, status="done", error=""):
    return {"status": status, "result": result, "error": error, "seconds": 0.5}


@pytest.mark.parametrize("result, error", [
    ({"instances": {"a": 1}}, "result JSON: expected an object with a list of instances"),
    ({"instances": [3]}, "result JSON: instance 0: expected an object, found int"),
])
def test_malformed_results_make_the_row_crashed(result, error):
    """_listed and _claim: a part whose result is not a list of objects makes the row crashed with
    the reason, never ok."""
    row = merge(SCRIPT, [part(result)])
    assert row.status == "crashed" and row.error == error and not row.ok


def test_an_interrupted_part_makes_the_row_interrupted():
    """merge: one interrupted part makes the whole row interrupted (not crashed, not ok), even when
    another part finished."""
    done = part({"title": "T", "ok": True, "instances": []})
    row = merge(SCRIPT, [done, part(None, "interrupted", "the run was interrupted")])
    assert (row.status, row.error) == ("interrupted", "the run was interrupted")


@pytest.mark.parametrize("timeout", [0, -1.0, float("inf"), float("nan"), True, "10"])
def test_run_scripts_refuses_a_bad_timeout(timeout):
    """run_scripts: the timeout is a positive finite number of seconds (or None)."""
    with pytest.raises(UsageError, match="timeout: expected a positive, finite number of seconds"):
        runner.run_scripts({"s": SCRIPT}, ["s"], timeout=timeout)


def run_json(*scripts):
    return {"scripts": [{"name": n, "status": st, "result": {"instances": [{"name": i, "verdict": "proved"} for i in insts]}}
                        for n, st, insts in scripts]}


def test_golden_diff_names_missing_scripts_and_instances():
    """_field_lines: a script present on one side only, a script whose status changed, an instance
    present on one side only, each gets its own field line."""
    golden = run_json(("a", "ok", ["x", "y"]), ("b", "ok", ["z"]))
    run = run_json(("a", "failed", ["x"]))
    diff = golden_diff(run, golden)
    lines = [line for line in diff.splitlines() if not line.startswith(("---", "+++", "@@", " ", "-", "+"))]
    assert lines == [
        'a: status: "ok" → "failed"',
        "a: y: instance: present → (none)",
        'b: script: "b" → (none)',
    ]
    back = golden_diff(golden, run)
    assert "a: y: instance: (none) → present" in back and 'b: script: (none) → "b"' in back
    assert golden_diff(golden, golden) == ""


def test_golden_diff_on_a_renamed_script():
    """_field_lines: scripts matched by position under different names: one line naming both."""
    diff = golden_diff(run_json(("new", "ok", [])), run_json(("old", "ok", [])))
    assert 'new: script: "old" → "new"' in diff


def test_outcome_of_a_crashed_row_has_no_instances():
    """A crashed row from merge has no result: no instances, no counts of proved claims."""
    row = merge(SCRIPT, [part(None, "crashed", "exit code 1: boom")])
    assert isinstance(row, ScriptOutcome) and row.instances() == [] and row.error == "exit code 1: boom"
