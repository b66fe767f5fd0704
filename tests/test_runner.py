"""``symverify prove``: discovery, processes, parallel shards, failed/over-bound/crashed rows, stable
JSON, JUnit, golden runs, interrupts, exit codes."""

import json
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import pytest

from symverify.cli import main
from symverify.errors import UsageError
from symverify.scripts.runner import available, builtin_dir, discover, run_scripts, script_title

TEMPLATE = '''
from fractions import Fraction

from symverify.scripts.protocol import Instance, ProofResult, script_main

TITLE = "{title}"


def run(quick=False):
    {body}
    r = ProofResult("{name}", TITLE)
    r.instances.append(Instance.computed("{name} instance", "{verdict}" == "proved", "a test's comparison", "exact",
                                         resources={{"layers": {layers}, "ratio": Fraction(4, 5)}}, bounds={{"layers": 2}},
                                         detail="quick" if quick else "full"))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''

SHARDED = '''
from symverify.scripts.protocol import Instance, ProofResult, each, script_main

TITLE = "Cases in shards"
SHARDABLE = True


def run(quick=False):
    r = ProofResult("sharded", TITLE)
    for k in each(range(7)):
        for part in range(k % 3):
            r.instances.append(Instance.computed(f"case {k} part {part}", True, "a test's comparison", "exact+dense",
                                                 resources={"k": k}, bounds={"k": 6}))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''

SCRIPTS = {
    "good": dict(title="A result that holds", verdict="proved", layers=2, body="pass"),
    "refuted": dict(title="A false claim", verdict="refuted", layers=1, body="pass"),
    "overbound": dict(title="Proved but too big", verdict="proved", layers=5, body="pass"),
    "crashing": dict(title="A script with a bug", verdict="proved", layers=1, body="raise RuntimeError('boom in run')"),
}


@pytest.fixture
def proof_dir(tmp_path):
    d = tmp_path / "myproofs"
    d.mkdir()
    for name, kw in SCRIPTS.items():
        (d / f"{name}.py").write_text(textwrap.dedent(TEMPLATE.format(name=name, **kw)), encoding="utf-8")
    (d / "_helper.py").write_text("X = 1\n", encoding="utf-8")
    return d


def _user(scripts):
    return {n: s for n, s in scripts.items() if s.source != "builtin"}


def test_discovery_titles_and_builtins(proof_dir):
    found = discover(proof_dir)
    assert list(found) == ["crashing", "good", "overbound", "refuted"]
    assert script_title(found["good"].path) == "A result that holds" and not found["good"].shardable
    both = available([proof_dir])
    assert {"thm_h21_general", "good"} <= set(both) and both["thm_h21_general"].shardable
    assert both["thm_h21_general"].source == "builtin" and (builtin_dir() / "primitives_handwritten.py").exists()
    with pytest.raises(UsageError, match="does not exist"):
        discover(proof_dir / "nowhere")


def test_a_user_script_may_not_take_a_builtin_name(proof_dir):
    (proof_dir / "primitives.py").write_text("TITLE = 'mine'\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"proof script primitives in .* has the name of a built-in script; rename it"):
        available([proof_dir])


def test_rows_for_every_outcome(proof_dir):
    seen = []
    scripts = available([proof_dir])
    summary = run_scripts(scripts, list(_user(scripts)), quick=True, on_start=seen.append)
    rows = {o.name: o for o in summary.outcomes}
    assert seen == ["crashing", "good", "overbound", "refuted"]
    assert rows["good"].status == "ok" and rows["good"].instances()[0]["detail"] == "quick"
    assert rows["refuted"].status == "failed" and rows["refuted"].counts()["refuted"] == 1
    assert rows["overbound"].status == "failed" and rows["overbound"].over_bound() == ["overbound instance: layers"]
    assert rows["crashing"].status == "crashed" and "boom in run" in rows["crashing"].error
    assert rows["crashing"].title == "A script with a bug"
    assert not summary.ok
    assert run_scripts(scripts, ["good"]).ok


def test_shards_merge_into_the_order_of_one_process(tmp_path):
    d = tmp_path / "sharded"
    d.mkdir()
    (d / "sharded.py").write_text(SHARDED, encoding="utf-8")
    scripts = available([d])
    one = run_scripts(scripts, ["sharded"], jobs=1)
    three = run_scripts(scripts, ["sharded"], jobs=3)
    assert one.to_json() == three.to_json()
    names = [i["name"] for i in one.outcomes[0].instances()]
    assert names == [f"case {k} part {p}" for k in range(7) for p in range(k % 3)]


def test_jobs_must_be_positive(proof_dir):
    with pytest.raises(UsageError, match="jobs: expected a positive int"):
        run_scripts(available([proof_dir]), ["good"], jobs=0)


def test_cli_exit_codes_table_and_stable_json(proof_dir, tmp_path, capsys):
    out_json = tmp_path / "run.json"
    code = main(["prove", "--dir", str(proof_dir), "--quick", "--json", str(out_json), "-j", "2"])
    out = capsys.readouterr().out
    assert code == 1
    for word in ("good", "refuted", "overbound", "crashing", "CRASHED", "FAILED", "1 over: overbound instance: layers",
                 "1/4 scripts ok"):
        assert word in out, word
    table = out.split("p/r/u/a: instances")[0]  # the table fits 80 columns; lines of text are not hard-wrapped
    assert max(len(line) for line in table.splitlines()) <= 80
    text = out_json.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["format"] == "symverify.proof-run" and data["ok"] is False
    assert [s["status"] for s in data["scripts"]] == ["crashed", "ok", "failed", "failed"]
    assert str(tmp_path) not in text and '"seconds"' not in text
    inst = data["scripts"][1]["result"]["instances"][0]
    assert inst["resources"] == {"layers": 2, "ratio": "4/5"} and inst["method"] == "exact"
    assert main(["prove", "good", "--dir", str(proof_dir)]) == 0


def test_cli_json_to_stdout_and_timings(proof_dir, capsys):
    assert main(["prove", "good", "--dir", str(proof_dir), "--json", "-", "--timings"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scripts"][0]["name"] == "good" and "seconds" in data and "seconds" in data["scripts"][0]


def test_cli_junit(proof_dir, tmp_path, capsys):
    junit = tmp_path / "out.xml"
    assert main(["prove", "--dir", str(proof_dir), "--junit", str(junit)]) == 1
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "4" and root.get("failures") == "2" and root.get("errors") == "1"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["good instance"].find("failure") is None
    assert cases["refuted instance"].find("failure").get("message") == "verdict refuted"
    assert "over bound: layers" in cases["overbound instance"].find("failure").get("message")


def test_cli_golden_passes_then_fails_with_a_diff(proof_dir, tmp_path, capsys):
    golden = tmp_path / "golden.json"
    assert main(["prove", "good", "--dir", str(proof_dir), "--golden", str(golden), "--update-golden"]) == 0
    assert main(["prove", "good", "--dir", str(proof_dir), "--golden", str(golden)]) == 0
    assert "matches the golden run" in capsys.readouterr().out
    (proof_dir / "good.py").write_text((proof_dir / "good.py").read_text(encoding="utf-8").replace('bounds={"layers": 2}', 'bounds={"layers": 3}'), encoding="utf-8")
    assert main(["prove", "good", "--dir", str(proof_dir), "--golden", str(golden)]) == 1
    out = capsys.readouterr().out
    assert "differs from the golden run" in out and '-     "layers": 2' in out and '+     "layers": 3' in out


def test_cli_golden_refuses_a_file_that_is_not_a_run(proof_dir, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}', encoding="utf-8")
    assert main(["prove", "good", "--dir", str(proof_dir), "--golden", str(bad)]) == 3
    assert "expected a run written by symverify prove --json" in capsys.readouterr().err
    assert main(["prove", "good", "--dir", str(proof_dir), "--update-golden"]) == 3
    assert "--update-golden needs --golden" in capsys.readouterr().err


def test_cli_details(proof_dir, capsys):
    main(["prove", "overbound", "--dir", str(proof_dir), "--details"])
    out = capsys.readouterr().out
    assert "layers=5 (bound 2: 2.50)" in out and "ratio=4/5" in out


def test_unknown_name_lists_the_available_ones(proof_dir, capsys):
    assert main(["prove", "good", "nosuch", "--dir", str(proof_dir)]) == 3
    err = capsys.readouterr().err
    assert "unknown proof script(s) nosuch; available: " in err and "crashing, good, overbound, refuted" in err


def test_interrupt_keeps_the_finished_rows(proof_dir, tmp_path):
    (proof_dir / "slow.py").write_text(textwrap.dedent(TEMPLATE.format(name="slow", title="Slow", verdict="proved", layers=1,
                                                                        body="import time; time.sleep(120)")), encoding="utf-8")
    out_json, junit = tmp_path / "part.json", tmp_path / "part.xml"
    cmd = [sys.executable, "-m", "symverify.cli", "prove", "good", "slow", "--dir", str(proof_dir), "-j", "2",
           "--json", str(out_json), "--junit", str(junit)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    line = ""
    while time.monotonic() < deadline and not line.startswith("good:"):
        line = proc.stderr.readline()
    assert line.startswith("good:"), line
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err + out and "interrupted" in err
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["interrupted"] is True and [s["status"] for s in data["scripts"]] == ["ok", "interrupted"]
    assert ET.parse(junit).getroot().get("errors") == "1"


def test_builtin_script_runs_through_the_runner_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    summary = run_scripts(available(), ["primitives_handwritten"], quick=True)
    (row,) = summary.outcomes
    assert row.ok and row.counts()["proved"] == len(row.instances()) >= 14, row.error


@pytest.mark.parametrize("text, message", [
    ("not json", "cannot read the golden run"),
    ("[" * 100000, "cannot read the golden run"),
    ('{"format": "symverify.proof-run", "scripts": 3}', r"scripts: expected a list of scripts, found int"),
    ('{"format": "symverify.proof-run", "version": 2, "scripts": [7]}', r"scripts\[0\]: expected an object, found int"),
    ('{"format": "symverify.proof-run", "version": 2, "scripts": [{"name": "good", "result": {"instances": 1}}]}',
     r"scripts\[0\].result: expected an object with a list 'instances'"),
    ('{"format": "symverify.proof-run", "version": 2, "scripts": [{"name": "good", "result": {"instances": ["x"]}}]}',
     r"instances\[0\]: expected an object, found str"),
    ('{"format": "symverify.proof-run", "scripts": []}', r"bad.json.version: expected 4, found nothing"),
    (b"\xff\xfe", "cannot read the golden run"),
])
def test_malformed_golden_runs_are_refused_in_one_line(proof_dir, tmp_path, capsys, text, message):
    bad = tmp_path / "bad.json"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["prove", "good", "--dir", str(proof_dir), "--golden", str(bad)]) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    import re

    assert re.search(message, err), err


def test_a_script_that_writes_garbage_json_is_a_crashed_row(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    (d / "liar.py").write_text(textwrap.dedent('''
        import sys
        TITLE = "writes a list"
        if __name__ == "__main__":
            out = sys.argv[sys.argv.index("--json") + 1]
            open(out, "w").write("[1, 2]")
    '''), encoding="utf-8")
    (d / "nested.py").write_text(textwrap.dedent('''
        import sys
        TITLE = "writes deep nesting"
        if __name__ == "__main__":
            out = sys.argv[sys.argv.index("--json") + 1]
            open(out, "w").write("[" * 100000)
    '''), encoding="utf-8")
    rows = {o.name: o for o in run_scripts(available([d]), ["liar", "nested"]).outcomes}
    assert rows["liar"].status == "crashed" and "expected an object, found list" in rows["liar"].error
    assert rows["nested"].status == "crashed" and "unreadable result JSON" in rows["nested"].error


def test_junit_counts_and_golden_show_each_claims_kind():
    from symverify.scripts.protocol import Instance, ProofResult
    from symverify.scripts.runner import RunSummary, ScriptOutcome, golden_text, junit_xml

    result = ProofResult("kinds", "Kinds", [
        Instance.computed("rank", True, "exact rank over Q", "rank"),
        Instance.argued("lemma", "docs/theory.md § Choice (causality)", checks=True),
        Instance.argued("reading", "docs/retnet.md § The readings and their verdicts", "witness", checks=False),
    ])
    data = json.loads(json.dumps(result.to_json()))
    row = ScriptOutcome("kinds", "Kinds", "ok" if data["ok"] else "failed", 0.1, data)
    assert row.counts() == {"proved": 1, "refuted": 0, "unknown": 0, "argued": 2} and row.status == "failed"
    root = ET.fromstring(junit_xml(RunSummary(True, (row,))).split("\n", 1)[1])
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    kinds = {name: {p.get("name"): p.get("value") for p in c.iter("property")} for name, c in cases.items()}
    assert kinds["rank"] == {"kind": "computed", "verdict": "proved", "basis": "exact rank over Q"}
    assert kinds["lemma"]["kind"] == "argued" and cases["lemma"].find("skipped") is not None
    assert cases["reading"].find("failure") is not None and cases["reading"].find("skipped") is None
    golden = json.loads(golden_text(RunSummary(True, (row,)).to_json()))
    assert [i["kind"] for i in golden[0]["instances"]] == ["computed", "argued", "argued"]


SLEEPING = '''
import time

from symverify.scripts.protocol import script_main

TITLE = "Never finishes"


def run(quick=False):
    time.sleep(60)


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def test_cli_a_script_past_its_timeout_is_timed_out_not_crashed(tmp_path, capsys):
    """``prove --timeout S``: a script killed at S is ``TIMED OUT`` in the table, ``"timeout"`` in the
    JSON (its error says after how long), an error of type ``timeout`` in JUnit, and fails the run."""
    d = tmp_path / "slow"
    d.mkdir()
    (d / "sleeping.py").write_text(SLEEPING, encoding="utf-8")
    out_json, junit = tmp_path / "run.json", tmp_path / "run.xml"
    code = main(["prove", "sleeping", "--dir", str(d), "--timeout", "1", "--json", str(out_json), "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 1
    assert "TIMED OUT" in out and "CRASHED" not in out and "sleeping timeout: timed out after 1.0 s" in out
    script = json.loads(out_json.read_text(encoding="utf-8"))["scripts"][0]
    assert (script["status"], script["ok"], script["error"]) == ("timeout", False, "timed out after 1.0 s")
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "timeout" and error.text == "timed out after 1.0 s"


# ---- how a parallel run is cut and ordered (runner.plan) -----------------------------------------
def _costed(d, name, cost):
    (d / f"{name}.py").write_text(SHARDED.replace('SHARDABLE = True', f"SHARDABLE = True\nCOST = {cost}")
                                  .replace('"sharded"', repr(name)), encoding="utf-8")


def test_every_builtin_script_states_its_cost_and_two_jobs_split_none_of_them():
    """``prove all -j 2`` split every SHARDABLE script in two: eight more processes, each paying its
    start-up and cold caches (about 10 % more CPU, 20 % more wall time than whole scripts started
    costliest first). No built-in script is more than half of the run, so none is split."""
    from symverify.scripts.runner import plan

    scripts = available()
    assert all(s.cost is not None and s.cost > 0 for s in scripts.values()), [n for n, s in scripts.items() if s.cost is None]
    two = plan(scripts, sorted(scripts), 2)
    assert sorted(two) == sorted((n, 1) for n in scripts)
    costs = [scripts[n].cost for n, _ in two]
    assert costs == sorted(costs, reverse=True) and two[0][0] == max(scripts, key=lambda n: scripts[n].cost)
    eight = dict(plan(scripts, sorted(scripts), 8))  # 1/8 of the run is less than the costliest shardable script
    biggest = max((n for n in scripts if scripts[n].shardable), key=lambda n: scripts[n].cost)
    assert eight[biggest] >= 2 and sum(eight.values()) < 8 + len(scripts)
    assert plan(scripts, ["thm_h21_general"], 4) == [("thm_h21_general", 4)]  # alone: split among all the jobs
    assert plan(scripts, ["primitives"], 4) == [("primitives", 1)]  # not SHARDABLE
    assert plan(scripts, sorted(scripts), 1) == [(n, 1) for n in sorted(scripts)]  # one job: as named


def test_scripts_without_a_cost_count_the_mean_of_those_with_one(tmp_path):
    from symverify.scripts.runner import Script, plan

    s = {n: Script(n, tmp_path / f"{n}.py", "d", shardable=True, cost=c) for n, c in (("a", None), ("b", 3.0), ("c", 1.0))}
    assert plan(s, ["a", "b", "c"], 3) == [("a", 1), ("b", 2), ("c", 1)]  # a counts 2; 3·3/6 → 2 shards of b, 1.5 each
    none = {n: Script(n, tmp_path / f"{n}.py", "d", shardable=True) for n in "xyz"}
    assert plan(none, ["x", "y", "z"], 2) == [("x", 1), ("y", 1), ("z", 1)]
    assert plan(none, ["x", "y"], 4) == [("x", 2), ("y", 2)]


def test_huge_and_tiny_costs_plan_without_overflow(tmp_path):
    """Two scripts of COST 1e308 summed to inf, and ⌈inf/inf⌉ raised ValueError (a crash of the run)."""
    from symverify.scripts.runner import Script, plan

    s = {n: Script(n, tmp_path / f"{n}.py", "d", shardable=True, cost=c) for n, c in (("a", 1e308), ("b", 1e308), ("c", 5e-324))}
    assert plan(s, ["a", "b", "c"], 2) == [("a", 1), ("b", 1), ("c", 1)]
    assert plan(s, ["a", "c"], 4) == [("a", 4), ("c", 1)]


def test_the_costliest_script_starts_first(tmp_path):
    for name, cost in (("a", 1), ("b", 1), ("c", 5)):
        _costed(tmp_path, name, cost)
    seen = []
    summary = run_scripts(available([tmp_path]), ["a", "b", "c"], jobs=2, on_start=seen.append)
    assert summary.ok and [o.name for o in summary.outcomes] == ["a", "b", "c"]  # rows keep the order asked for
    assert seen[-1] == "b" and set(seen) == {"a", "b", "c"}, seen  # c and a first; as named, b would start before c


@pytest.mark.parametrize("cost, found", [("'fast'", "'fast'"), ("0", "0"), ("-1.5", "-1.5"), ("True", "True"),
                                         ("1e999", "inf"), ("1" + "0" * 400, "1000"), ("1e300", r"1e\+300"), ("2 * 3", "'2 \\* 3'"), ("-(1)", "-1"), ("[1]", r"\[1\]")])
def test_a_cost_that_is_no_positive_number_is_refused(tmp_path, cost, found):
    (tmp_path / "s.py").write_text(f"TITLE = 'x'\nCOST = {cost}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=rf"s\.py: COST: expected a positive number of CPU seconds below 10\^300 .*found {found}"):
        discover(tmp_path)
