"""The proof-run format held both ways: what ``symverify prove`` writes from a script's own result
JSON is what the run readers take (docs/formats.md § Proof run), and a refutation carries its
counterexample into the run file, the JUnit failure and the report page.

A script's JSON (a script of ``--dir`` writes what it likes) with an unknown field, a mistyped one,
a NaN, or a counterexample on a claim that is not refuted makes its row ``crashed``, naming the
field; every other row is written so that ``load_run`` reads it back equal. The summaries a
forged run file states (a script ``ok`` over a refuted instance, counts, a run's ``ok``) are
refused by the readers."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import SerializationError, UsageError
from symverify.ir.serialize import loads
from symverify.kernel.provers.outcome import Verdict
from symverify.scripts import protocol
from symverify.scripts.protocol import ClaimKind, Instance, ProofResult
from symverify.scripts.runner import RunSummary, Script, ScriptOutcome, junit_xml, load_run, merge
from symverify.viz.report import report_page
from symverify.viz.resources import load_run as load_run_for_plots

SCRIPT = Script("s", Path("s.py"), "builtin", "T")


def _inst(**kw: Any) -> dict[str, Any]:
    base = {"name": "x", "verdict": "proved", "method": "exact", "resources": {"layers": 1}, "bounds": {"layers": 1},
            "detail": "", "kind": "prover", "basis": "", "checks": None, "over_bound": [], "ok": True}
    if kw.get("kind", "prover") == "prover":  # a prover's claim names what it is about (run format version 4)
        base["digests"] = [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]
    return {**base, **kw}


def _row(*instances: dict[str, Any], **result: Any) -> ScriptOutcome:
    return merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "",
                           "result": {"name": "s", "title": "T", "ok": True, "instances": list(instances), **result}}])


def _written(row: ScriptOutcome, tmp_path: Path, timings: bool = False) -> dict[str, Any]:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RunSummary(True, (row,)).to_json(timings), allow_nan=False), encoding="utf-8")
    return load_run(path)


@pytest.mark.parametrize("instance, result, field", [
    (_inst(note="mine"), {}, "unknown field 'note'"),
    (_inst(), {"extra": 1}, "unknown field 'extra'"),
    (_inst(method=3), {}, "instances[0].method: expected a string, found 3"),
    (_inst(detail=None), {}, "instances[0].detail: expected a string"),
    (_inst(seconds=float("nan")), {}, "instances[0].seconds: expected a finite number of seconds ≥ 0, found nan"),
    (_inst(seconds=-1), {}, "instances[0].seconds: expected a finite number"),
    (_inst(resources={"layers": 1, "width": float("nan")}), {}, "resources.width: expected an int, a float or an exact"),
    (_inst(resources={"layers": 1, "note": "n/a"}), {}, "resources.note: expected an int, a float or an exact"),
    (_inst(counterexample={"cell": [0, 0]}), {}, "counterexample: only a refuted instance has one; this one is proved"),
    (_inst(), {"title": 5}, "result JSON.title: expected a string, found 5"),
    (_inst(), {"seconds": float("inf")}, "result JSON.seconds: expected a finite number"),
    (_inst(ok="yes"), {}, "instance 'x': ok: expected true or false, found 'yes'"),  # never read as true
    (_inst(), {"ok": 1}, "result: ok: expected true or false, found 1"),
])
def test_a_scripts_json_with_a_field_no_run_holds_makes_its_row_crashed(instance, result, field):
    row = _row(instance, **result)
    assert row.status == "crashed" and not row.ok and row.result is None, row
    assert field in row.error, row.error


def test_a_refuted_instance_keeps_its_counterexample(tmp_path):
    row = _row(_inst(verdict="refuted", ok=False, counterexample={"cell": [0, 1], "inputs": [["1", "2"]]}))
    assert row.status == "failed"
    back = _written(row, tmp_path)
    inst = back["scripts"][0]["result"]["instances"][0]
    assert inst["counterexample"] == {"cell": [0, 1], "inputs": [["1", "2"]]}
    failure = ET.fromstring(junit_xml(RunSummary(True, (row,)))).find(".//failure")
    assert failure is not None and 'counterexample: {"cell": [0, 1], "inputs": [["1", "2"]]}' in (failure.text or "")


def _refuting_report() -> Any:
    head = '{"format": "symverify.circuit", "version": 1, "n": 1, "d": 2, "gates": [["mul", [0, 1], []]'
    x = loads(head + '], "outputs": [2]}')
    y = loads(head + ', ["lin", [2, 2], [1, 1]]], "outputs": [3]}')  # 2·x0·x1
    report = sv.verify(x, y, method="exact")
    assert report.verdict is Verdict.REFUTED
    return report, x


def test_from_report_writes_the_reports_counterexample_through_to_the_page(tmp_path):
    report, x = _refuting_report()
    inst = Instance.from_report("doubles", report)
    assert inst.counterexample == report.to_json()["counterexample"] and inst.counterexample is not None
    assert "counterexample" not in Instance.from_report("same", sv.verify(x, x)).to_json()
    result = ProofResult("s", "T", [inst])
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "", "result": json.loads(json.dumps(result.to_json()))}])
    back = _written(row, tmp_path)
    written = back["scripts"][0]["result"]["instances"][0]
    assert written["counterexample"] == report.to_json()["counterexample"]
    page = report_page(back)
    assert f'"lhs_value": "{written["counterexample"]["lhs_value"]}"' in page.replace("&quot;", '"')


def test_an_instance_holds_a_counterexample_only_when_refuted():
    with pytest.raises(UsageError, match="counterexample= belongs to a refuted claim, found it on a proved one"):
        Instance("x", Verdict.PROVED, "exact", counterexample={"cell": [0, 0]}, kind=ClaimKind.PROVER)


# ---- every row merge writes is read back ------------------------------------------------------------
_VALUES = st.one_of(st.integers(-3, 10), st.sampled_from(["8/5", "3", "x", "0x10"]), st.floats(allow_nan=True),
                    st.booleans(), st.none())
_FIELDS = st.fixed_dictionaries({}, optional={
    "verdict": st.sampled_from(["proved", "refuted", "unknown", "Proved"]),
    "kind": st.sampled_from(["prover", "computed", "argued", "hand"]),
    "method": st.sampled_from(["exact", 3]),
    "resources": st.dictionaries(st.sampled_from(["layers", "width"]), _VALUES, max_size=2),
    "bounds": st.dictionaries(st.sampled_from(["layers", "width"]), _VALUES, max_size=2),
    "over_bound": st.lists(st.sampled_from(["layers", "width"]), max_size=2, unique=True),
    "ok": st.one_of(st.booleans(), st.just("yes")),
    "checks": st.one_of(st.none(), st.booleans()),
    "seconds": st.one_of(st.floats(allow_nan=True), st.integers(-1, 3)),
    "counterexample": st.just({"cell": [0, 0]}),
    "note": st.just("x"),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_FIELDS, min_size=1, max_size=3), st.booleans())
def test_what_merge_writes_the_readers_take(tmp_path, changes, timings):
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "", "result": {
        "name": "s", "title": "T", "ok": True, "instances": [{**_inst(name=f"i{k}"), **c} for k, c in enumerate(changes)]}}])
    assert row.status in ("ok", "failed", "crashed")
    if row.status == "crashed":
        assert row.result is None and row.error
        return
    text = json.dumps(RunSummary(True, (row,)).to_json(timings), allow_nan=False)  # no NaN reaches the file
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    back = load_run(path)
    assert back == json.loads(text)
    insts = back["scripts"][0]["result"]["instances"]
    assert row.ok == all(i["ok"] for i in insts)
    for i in insts:  # an ok instance is proved (or argued with checks holding) and within its bounds
        assert not i["ok"] or (i["kind"] == "argued" and i["checks"] is not False) or i["verdict"] == "proved"
        assert all(isinstance(v, (int, str)) or math.isfinite(v) for v in i["resources"].values())


# ---- forged summaries in a run file ------------------------------------------------------------------
def _run_file(tmp_path: Path, **change: Any) -> Path:
    row = _row(_inst(), _inst(name="y", verdict="refuted", ok=False))
    data = RunSummary(True, (row,)).to_json()
    script = data["scripts"][0]
    for key, value in change.items():
        target, _, field = key.rpartition("__")
        (data if not target else script if target == "script" else script["result"])[field] = value
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, message", [
    ({"script__status": "ok", "script__ok": True}, r"scripts\[0\]\.result: 'ok' is true, but instance 'y' is not ok"),
    ({"script__status": "ok"}, r"scripts\[0\]\.ok: expected true for status 'ok', found false"),
    ({"ok": True}, r"\.ok: expected false \(a script is not ok\), found true"),
    ({"script__counts": {"proved": 2, "refuted": 0, "unknown": 0, "argued": 0}}, r"scripts\[0\]\.counts: expected the counts"),
    ({"result__ok": True}, r"scripts\[0\]\.result: 'ok' is true, but instance 'y' is not ok"),
    ({"script__status": "crashed"}, r"scripts\[0\]\.result: a crashed script has no result"),
    ({"script__status": "passed"}, r"scripts\[0\]\.status: expected one of ok, failed, crashed, timeout, interrupted"),
    ({"version": 5}, r"\.version: expected 2, 3 or 4, found 5 \(a run of a newer symverify\?\)"),
    ({"directory": "/x"}, r"unknown field 'directory'"),
    ({"quick": "yes"}, r"\.quick: expected true or false, found 'yes'"),
])
def test_forged_summaries_are_refused(tmp_path, change, message):
    path = _run_file(tmp_path, **change)
    with pytest.raises(SerializationError, match=message):
        load_run(path)
    with pytest.raises(SerializationError, match=message):
        report_page(str(path))


def test_the_unforged_file_is_read(tmp_path):
    path = _run_file(tmp_path)
    assert load_run(path)["scripts"][0]["status"] == "failed"


# ---- runs written by symverify 0.1.0 ------------------------------------------------------------------
RUN_010 = Path(__file__).parent / "data" / "run-0.1.0.json"  # `prove --quick primitives lemma_h11_composition --json`


def test_a_run_of_0_1_0_is_read_by_every_reader():
    """0.1.0 wrote counts without ``argued`` and instances without ``kind``, ``basis``, ``checks``."""
    run = load_run(RUN_010)
    assert run == json.loads(RUN_010.read_text(encoding="utf-8"))
    assert set(run["scripts"][0]["counts"]) == {"proved", "refuted", "unknown"}
    assert "kind" not in run["scripts"][0]["result"]["instances"][0]
    assert "all ok" in report_page(str(RUN_010))


def test_a_kind_left_out_compares_as_prover_in_a_golden_run():
    from symverify.scripts.runner import golden_diff

    old = load_run(RUN_010)
    now = json.loads(json.dumps(old))
    for s in now["scripts"]:
        s["counts"]["argued"] = 0
        s["result"]["counts"]["argued"] = 0
        for inst in s["result"]["instances"]:
            inst.update(kind="prover", basis="", checks=None)
    assert golden_diff(now, old) == ""
    now["scripts"][0]["result"]["instances"][0]["kind"] = "computed"
    assert ': kind: "prover" → "computed"' in golden_diff(now, old)


def test_an_ok_left_out_compares_as_false_in_a_golden_run():
    from symverify.scripts.runner import golden_diff

    now = load_run(RUN_010)
    inst = now["scripts"][0]["result"]["instances"][0]
    inst["ok"] = False
    old = json.loads(json.dumps(now))
    del old["scripts"][0]["result"]["instances"][0]["ok"]
    assert golden_diff(now, old) == ""
    inst["ok"] = True
    assert f"primitives: {inst['name']}: ok: false → true" in golden_diff(now, old)


@pytest.mark.parametrize("counts, message", [
    ({"proved": 27, "refuted": 0, "unknown": 0, "argued": 1}, r"counts: expected the counts of its instances"),
    ({"proved": 27, "refuted": 0}, r"counts: expected an object of counts"),
    ({"proved": 26, "refuted": 0, "unknown": 0}, r"counts: expected the counts of its instances"),
])
def test_counts_of_a_0_1_0_run_are_still_its_instances(tmp_path, counts, message):
    run = json.loads(RUN_010.read_text(encoding="utf-8"))
    run["scripts"][0]["counts"] = counts
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    with pytest.raises(SerializationError, match=message):
        load_run(path)


USER_SCRIPT = '''
import symverify as sv
from symverify.ir.serialize import loads
from symverify.scripts.protocol import Instance, ProofResult, script_main

TITLE = "a square against its double"
HEAD = '{"format": "symverify.circuit", "version": 1, "n": 1, "d": 2, "gates": [["mul", [0, 1], []]'


def run(quick):
    x = loads(HEAD + '], "outputs": [2]}')
    y = loads(HEAD + ', ["lin", [2, 2], [1, 1]]], "outputs": [3]}')
    return ProofResult("doubles", TITLE, [Instance.from_report("x0*x1 vs 2*x0*x1", sv.verify(x, y, method="exact"))])


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def test_prove_prints_and_writes_a_refutations_counterexample(tmp_path, capsys):
    from symverify.cli import main

    d = tmp_path / "d"
    d.mkdir()
    (d / "doubles.py").write_text(USER_SCRIPT, encoding="utf-8")
    out, junit = tmp_path / "run.json", tmp_path / "j.xml"
    assert main(["prove", "--dir", str(d), "doubles", "-j", "1", "--json", str(out), "--junit", str(junit)]) == 1
    shown = capsys.readouterr()
    run = load_run(out)
    cex = run["scripts"][0]["result"]["instances"][0]["counterexample"]
    assert cex["cell"] == [0, 0] and cex["lhs_value"] != cex["rhs_value"]
    assert f"counterexample: {json.dumps(cex, ensure_ascii=False)}" in shown.out + shown.err
    failure = ET.parse(junit).getroot().find(".//failure")
    assert failure is not None and json.dumps(cex, ensure_ascii=False) in (failure.text or "")


def test_one_shards_result_file_is_read(tmp_path):
    """``python -m symverify.proofs.NAME --shard K/N --json OUT`` tags its instances with their case."""
    import subprocess
    import sys

    out = tmp_path / "part.json"
    subprocess.run([sys.executable, "-m", "symverify.proofs.primitives", "--quick", "--shard", "0/2", "--json", str(out)],
                   check=True, capture_output=True)
    part = json.loads(out.read_text(encoding="utf-8"))
    assert any("case" in i for i in part["instances"]) and isinstance(part["cases"], int)
    run = load_run_for_plots(str(out))
    assert run["scripts"][0]["result"]["instances"] and "all ok" in report_page(str(out))
    assert not any("case" in i or "before" in i for i in run["scripts"][0]["result"]["instances"])
    assert "cases" not in run["scripts"][0]["result"]
    part["instances"][0]["case"] = -1
    out.write_text(json.dumps(part), encoding="utf-8")
    with pytest.raises(SerializationError, match=r"instances\[0\]\.case: expected null or a case index ≥ 0, found -1"):
        load_run_for_plots(str(out))


@pytest.mark.parametrize("command", [["info"], ["verify", "--method", "exact"]])
def test_a_run_or_a_verdict_given_as_a_circuit_says_what_it_is(tmp_path, capsys, command):
    from symverify.cli import main

    report = tmp_path / "verdict.json"
    report.write_text(json.dumps({"format": "symverify.report", "verdict": "proved"}), encoding="utf-8")
    for path, hint in ((RUN_010, "symverify report FILE` shows it"), (report, "not a side to verify")):
        args = [*command, str(path)] + ([str(path)] if command[0] == "verify" else [])
        assert main(args) == 3
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and hint in err, err


# ---- what a page calls all ok: a summary left out is derived, never assumed ----------------------------
def _one(inst: dict[str, Any], **script: Any) -> dict[str, Any]:
    return {"scripts": [{"name": "s", **script, "result": {"instances": [inst]}}]}


@pytest.mark.parametrize("run", [
    _one({"name": "i", "verdict": "proved", "resources": {"layers": 5}, "bounds": {"layers": 1}}),  # over its bound
    _one({"name": "i", "verdict": "proved", "bounds": {"layers": 1}}),  # a bound without a value
    _one({"name": "i", "verdict": "proved"}),  # "ok left out is false"
    {"interrupted": True, **_one(_inst(), status="ok")},  # the run's ok left out
    _one(_inst()),  # the script's status and ok left out
], ids=["over bound", "bound without value", "ok left out", "interrupted", "script summary left out"])
def test_a_page_never_calls_all_ok_what_its_summaries_leave_out(run, tmp_path):
    from symverify.viz.resources import resource_records

    page = report_page(run)
    assert 'Result: <span class="failed">FAILED' in page and "all ok" not in page
    assert "Failures (0)" not in page and "None: every instance" not in page  # the page says why
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"format": "symverify.proof-run", "version": 3, **run}), encoding="utf-8")
    assert "all ok" not in report_page(str(path))
    if "ok" not in run["scripts"][0]["result"]["instances"][0]:  # the plots mark it not ok
        assert not any(r.ok for r in resource_records(run))


@pytest.mark.parametrize("field, value, message", [
    ("resources", {1: 5}, r"resources: expected an object with text keys, found the key 1"),
    ("bounds", {("layers",): 5}, r"bounds: expected an object with text keys, found the key \('layers',\)"),
    ("seconds", 10**5000, r"seconds: expected a finite number of seconds ≥ 0, found <5001-digit integer"),
    ("seconds", 2**1024, r"seconds: expected a finite number of seconds ≥ 0"),
    ("counterexample", {"v": 10**5000}, r"counterexample: expected a JSON value .*found an int of 5001 digits at \.v"),
    ("counterexample", {1: 2}, r"counterexample: .*found the key 1 at the top"),
    ("counterexample", {"a": [{1, 2}]}, r"counterexample: .*found a set at \.a\[0\]"),
], ids=["int key", "tuple key", "10^5000 s", "2^1024 s", "huge int", "int key in cex", "set in cex"])
def test_an_in_memory_run_no_file_holds_is_refused_by_name(field, value, message):
    inst = _inst(verdict="refuted", ok=False, **{field: value})
    with pytest.raises(SerializationError, match=message):
        report_page(_one(inst, status="failed"))


class _Liar(dict):  # type: ignore[type-arg]
    """An instance whose get() says ok while its items say refuted."""

    def get(self, key: Any, default: Any = None) -> Any:
        return True if key == "ok" else super().get(key, default)


def test_an_in_memory_run_is_read_as_the_plain_json_a_file_holds():
    """report_page of dicts: every mapping is read by its items (a dict subclass's get() is not
    taken at its word), a mappingproxy as the object it holds."""
    run = _one(_Liar(_inst(verdict="refuted", ok=False)), status="failed")
    page = report_page(run)
    assert "all ok" not in page and "FAILED" in page
    inst = _inst(verdict="refuted", ok=False, counterexample=[MappingProxyType({"a": 1})])
    assert '"a": 1' in report_page(_one(inst, status="failed")).replace("&quot;", '"')
    with pytest.raises(SerializationError, match=r"nested more than symverify.ir.limits.MAX_JSON_DEPTH"):
        report_page(_one(_inst(verdict="refuted", ok=False, counterexample=_nested(100)), status="failed"))


def _nested(depth: int) -> Any:
    cex: Any = 1
    for _ in range(depth):
        cex = [cex]
    return cex


@pytest.mark.parametrize("cex, read", [(float("nan"), False), ({"a": [float("-inf")]}, False), (_nested(59), False),
                                       (_nested(58), True), ({"v": [1.5, None, "x", True]}, True)],
                         ids=["nan", "inf", "59 deep", "58 deep", "plain"])
def test_a_counterexample_prove_writes_is_one_its_readers_take(tmp_path, cex, read):
    """A script's counterexample with a NaN, or nested deeper than a run file may be, makes its row
    crashed: ``prove`` writes no file that ``--golden`` or ``report`` refuses."""
    row = _row(_inst(verdict="refuted", ok=False, counterexample=cex))
    if not read:
        assert row.status == "crashed" and "instances[0].counterexample: expected a JSON value" in row.error, row
        return
    assert row.status == "failed"
    assert _written(row, tmp_path)["scripts"][0]["result"]["instances"][0]["counterexample"] == cex
    assert "FAILED" in report_page(str(tmp_path / "run.json"))


def test_matrix_and_forall_refutations_keep_their_counterexample():
    from symverify.kaleidoscope.linear import linear_circuit_to_kaleidoscope
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.provers.matrix import verify_circuit
    from symverify.library import walsh_hadamard
    from symverify.parametric import Gadget, Param, PLayer, fam, inp, pred, tap, var, where

    c = walsh_hadamard(4)
    k = linear_circuit_to_kaleidoscope(c).kaleidoscope
    check = verify_circuit(Kaleidoscope(k.n, k.size, tuple(reversed(k.groups))), c, garbage_free=False)
    assert check.verdict is Verdict.REFUTED and check.first_difference is not None
    i, j, got, want = check.first_difference
    assert Instance.from_report("matrix", check).counterexample == {"entry": [i, j], "found": got, "expected": want}
    n, r, q = var("N"), var("i"), var("q")
    g = Gadget("g", (Param("N", 1, 8), Param("V", 0, 3)), n, 1,
               (PLayer(b1=where(pred("V", r, q), fam("V"), 1), h=(tap(0),), mode="cyclic"),),
               where(pred("V", r, q), fam("V"), 2) * inp(r, q))
    res = sv.prove_forall(g, timeout=30)
    assert res.verdict is Verdict.REFUTED and res.cell is not None
    cex = Instance.from_report("forall", res).counterexample
    assert cex == {"params": dict(res.params), "cell": list(res.cell), "detail": res.detail}
    json.dumps(cex, allow_nan=False)


# ---- every Instance a script can make goes through to the readers ------------------------------------
_NUMBERS = st.one_of(st.integers(-5, 10), st.integers(2**1590, 2**1600), st.fractions(max_denominator=7),
                     st.floats(-1e6, 1e6, allow_nan=False), st.just(1.0000001))
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                               st.text(max_size=5)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                     max_leaves=8)
_KEYS = st.sampled_from(["layers", "width", "params"])  # no panel of the page plots these alone


@st.composite
def _instances(draw: Any) -> Instance:
    name = draw(st.text("ab ·<&\"", min_size=1, max_size=8))
    res, bounds = draw(st.dictionaries(_KEYS, _NUMBERS, max_size=3)), draw(st.dictionaries(_KEYS, _NUMBERS, max_size=2))
    how = draw(st.sampled_from(["prover", "computed", "argued"]))
    if how == "argued":
        return Instance.argued(name, "docs/theory.md § 5", checks=draw(st.sampled_from([None, True, False])),
                               resources=res, bounds=bounds)
    holds = draw(st.sampled_from([True, False, None]))
    if how == "computed":
        return Instance.computed(name, holds, "an exact sum", "exact", resources=res, bounds=bounds)
    verdict = {True: Verdict.PROVED, False: Verdict.REFUTED, None: Verdict.UNKNOWN}[holds]
    cex = draw(_JSON) if verdict is Verdict.REFUTED else None
    token = protocol._FROM_REPORT.set(True)  # a prover's claim of any verdict, as from_report makes them
    try:
        return Instance(name, verdict, "exact", res, bounds, draw(st.floats(0, 100)), draw(st.text(max_size=5)),
                        kind=ClaimKind.PROVER, counterexample=cex, digests=(("sha256:" + "0" * 64, "sha256:" + "1" * 64),))
    finally:
        protocol._FROM_REPORT.reset(token)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_instances(), max_size=4), st.booleans())
def test_what_a_scripts_instances_write_every_reader_takes(tmp_path, instances, timings):
    result = json.loads(json.dumps(ProofResult("s", "T", instances).to_json(), allow_nan=False))  # what script_main writes
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "", "result": result}])
    assert row.status == ("ok" if instances and all(i.ok for i in instances) else "failed"), row.error
    assert [i["ok"] for i in row.instances()] == [i.ok for i in instances]
    text = json.dumps(RunSummary(True, (row,)).to_json(timings), allow_nan=False)
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    assert load_run(path) == json.loads(text) == load_run_for_plots(str(path))
    assert ("all ok" in report_page(str(path))) == row.ok


@pytest.mark.parametrize("cex, found", [(float("nan"), "nan at the top"), ({"q": Fraction(1, 2)}, "a Fraction at .q"),
                                        (_nested(59), "nesting deeper than 58")])
def test_an_instance_holds_a_counterexample_a_run_file_can_hold(cex, found):
    with pytest.raises(UsageError, match=f"counterexample=: expected a JSON value .*found {re.escape(found)}"):
        Instance("x", Verdict.REFUTED, "exact", counterexample=cex, kind=ClaimKind.PROVER)


def test_a_counterexample_is_checked_in_linear_time_as_the_text_it_would_write():
    """A list met at several places counts at each, as JSON text writes it: ``[x, x]`` nested 50
    deep is 2^50 values (writing it would never end), refused at once; a row given twice is fine;
    a cycle is refused, not followed."""
    from symverify.viz.run_format import COUNTEREXAMPLE_VALUES, json_problem

    doubled: Any = [1]
    for _ in range(50):
        doubled = [doubled, doubled]
    assert json_problem(doubled).startswith(f"more than {COUNTEREXAMPLE_VALUES} values at ")
    row = [0, 1]
    assert json_problem({"inputs": [row, row], "cell": (0, 0), "again": (0, 0)}) == ""
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert json_problem(cyclic) == "a list holding itself at [0] (a cycle)"
    deep = _nested(40)
    assert json_problem([deep, deep]) == ""
    assert json_problem([deep, _wrap(deep, 18)]).startswith("nesting deeper than 58 below ")  # met again, deeper
    with pytest.raises(UsageError, match=r"counterexample=: expected a JSON value .*found more than 10000000 values"):
        Instance("x", Verdict.REFUTED, "exact", counterexample=doubled, kind=ClaimKind.PROVER)


def _wrap(x: Any, times: int) -> Any:
    for _ in range(times):
        x = [x]
    return x


def test_a_result_saying_not_ok_over_ok_instances_is_refused(tmp_path):
    """A script's ``result.ok`` false while every instance is ok (and the row ok) was taken: the
    result's own summary disagreed with the instances it holds (as ``ok`` true over a failed
    instance, refused above)."""
    row = _row(_inst(), _inst(name="y"))
    data = RunSummary(True, (row,)).to_json()
    assert data["scripts"][0]["status"] == "ok" and data["scripts"][0]["result"]["ok"] is True
    load_run(_write_json(tmp_path, data))
    data["scripts"][0]["result"]["ok"] = False
    with pytest.raises(SerializationError, match=r"scripts\[0\]\.result\.ok: expected true \(every one of its 2 instance\(s\) is ok\), found false"):
        load_run(_write_json(tmp_path, data))


def _write_json(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
