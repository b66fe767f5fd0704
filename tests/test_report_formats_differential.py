"""Differential checks of the renderings of a verdict against the object they render.

A ``Report`` of :func:`symverify.verify` is read by people and tools through ``str``/``repr``,
``to_json``, :func:`symverify.testing.golden_record`, the notebook HTML and the ``symverify verify`` command (text,
``--json``, exit code); a proof script's ``ProofResult`` through its table, the proof-run JSON
(docs/formats.md § Proof run), JUnit XML and golden runs. Every rendering must say what the object
says: verdict and claim kind, method, the randomized error bound (printed never below the exact
``(D/p)^k``), the counterexample (parsed back by an in-test parser and re-checked by an in-test
interpreter of the circuit semantics of docs/formats.md § Circuit), resources and bounds; JSON
round trips are lossless. The readers of these files (the proof-run reader behind ``--golden`` and
``symverify report``) refuse forged or malformed documents with a ``SymverifyError`` subclass.
A planted renderer bug (a dropped sign, a bound rounded down) is caught by these checks.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from typing import Any

import pytest
from cases import int_digit_limit
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.cli import main
from symverify.errors import SerializationError, SymverifyError, UsageError
from symverify.ir.serialize import dump_file
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.outcome import Verdict, jsonable
from symverify.scripts import runner
from symverify.scripts.protocol import ClaimKind, Instance, ProofResult
from symverify.semantics.exact import evaluate as exact_evaluate
from symverify.strategies import circuits
from symverify.testing import golden_record
from symverify.viz.resources import load_run as viz_load_run

EXIT = {"proved": 0, "refuted": 1, "unknown": 2}  # docs/formats.md, exit codes of `symverify verify`
HUGE = 10**5000 + 7


# ---- in-test oracle: a parser of exact text and an interpreter of circuits -------------------------

_Q = re.compile(r"(-?)(0x[0-9a-f]+|[0-9]+)(?:/(0x[0-9a-f]+|[0-9]+))?")


def q(text: Any) -> Fraction:
    """An exact value as the report JSON writes it: a JSON int, or ``"-12/5"`` / ``"0x1f"`` text."""
    if isinstance(text, int) and not isinstance(text, bool):
        return Fraction(text)
    m = _Q.fullmatch(text)
    assert m, f"not exact rational text: {text[:40]!r}"
    with int_digit_limit():
        num = int(m[2], 0)
        den = int(m[3], 0) if m[3] else 1
    return Fraction(-num if m[1] else num, den)


def evaluate(c: Circuit, u: list[list[Fraction]]) -> list[list[Fraction]]:
    """``y = f(u)`` by docs/formats.md § Circuit: nodes ``vec(u)`` then gates; outputs row-major."""
    vals = [Fraction(x) for row in u for x in row]
    for g in c.gates:
        op, a, k = g.op.value, g.args, [Fraction(x) for x in g.coeffs]
        vals.append(k[0] if op == "const" else k[0] * vals[a[0]] + k[1] * vals[a[1]] if op == "lin"
                    else vals[a[0]] * vals[a[1]])
    flat = [vals[o] for o in c.outputs] + [Fraction(0)] * (c.n * c.d - len(c.outputs))
    return [flat[i * c.d:(i + 1) * c.d] for i in range(c.n)]


def shown_is(text: str, x: Fraction) -> bool:
    """Whether ``text`` (a value for people, maybe ``<5001-digit integer ≡ r mod 10^9>``) states ``x``."""
    frac = re.fullmatch(r"(-?(?:<[^>]*>|\d+))/(<[^>]*>|\d+)", text)
    if frac:
        return x.denominator != 1 and shown_is(frac[1], Fraction(x.numerator)) and shown_is(frac[2], Fraction(x.denominator))
    m = re.fullmatch(r"(-?)<(\d+)-(digit|bit) integer ≡ (\d+) mod 10\^9>", text)
    if m:
        v = x.numerator
        with int_digit_limit():
            size = len(str(abs(v))) if m[3] == "digit" else abs(v).bit_length()
            return (x.denominator == 1 and (v < 0) == bool(m[1]) and size == int(m[2])
                    and abs(v) % 10**9 == int(m[4]))
    return re.fullmatch(r"-?\d+", text) is not None and Fraction(int(text)) == x


def strict_loads(text: str) -> Any:
    """JSON as the strict readers read it: no repeated keys, no NaN/Infinity."""
    def pairs(kv: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in kv]
        assert len(keys) == len(set(keys)), f"duplicate keys {keys}"
        return dict(kv)

    def bad(name: str) -> Any:
        raise AssertionError(f"{name} in JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=bad)


# ---- what every rendering of a Report must say -----------------------------------------------------
def bound_holds(text: str, exact: Fraction) -> bool:
    """``text`` (``"2^-119.9"``, ``"1"`` or ``"0"``) is ≥ ``exact``, compared exactly."""
    if text in ("0", "1"):
        return exact <= int(text)
    m = re.fullmatch(r"2\^(-?\d+)\.(\d)", text)
    assert m, text
    tenths = int(m[1]) * 10 + (-1 if m[1].startswith("-") else 1) * int(m[2])
    # 2^(tenths/10) ≥ exact  ⇔  2^tenths ≥ exact^10
    return Fraction(2) ** tenths >= exact**10


def prime(text: Any) -> int:
    m = re.fullmatch(r"2\^(\d+)([+-]\d+)?", str(text))
    return 2 ** int(m[1]) + int(m[2] or 0) if m else int(text)


_SHOWN = r"-?(?:<[^>]*>|\d+)(?:/(?:<[^>]*>|\d+))?"


def check_report(r: Any, lhs: Circuit, rhs: Any) -> dict[str, Any]:
    """Every rendering of ``r`` against ``r`` itself (``rhs``: a circuit or a model, see
    :func:`check_counterexample`); returns the JSON document."""
    verdict, method = r.verdict.value, r.method
    text = str(r)
    head = text.splitlines()[0]
    assert re.fullmatch(rf"{verdict.upper()} by {re.escape(method)} \[[^\]]+ s\]", head), head
    assert r.text(timings=False).splitlines()[0] == f"{verdict.upper()} by {method}"
    assert repr(r).startswith(f"Report({verdict}, method={method!r}, ")
    for note in r.notes:
        assert f"  note: {note}" in text
    if r.verdict is Verdict.UNKNOWN:
        assert r.notes, "an unknown verdict says why"
    doc = r.to_json()
    dumped = json.dumps(doc, allow_nan=False, ensure_ascii=False)
    assert strict_loads(dumped) == doc  # lossless, strict JSON
    assert (doc["format"], doc["verdict"], doc["method"], doc["seed"]) == ("symverify.report", verdict, method, r.seed)
    assert doc["notes"] == list(r.notes) and doc["lhs"] == jsonable(r.lhs) and doc["rhs"] == jsonable(r.rhs)
    assert doc["evidence"] == jsonable(r.evidence)
    rec = golden_record(r)
    assert strict_loads(json.dumps(rec)) == rec
    assert (rec["verdict"], rec["method"]) == (verdict, method) and "timings" not in rec
    page = html.unescape(re.sub(r"<[^>]+>", " ", r._repr_html_()))  # the notebook view, tags dropped
    assert re.search(rf"\b{verdict.upper()}\s+by {re.escape(method)}(?!\S)", page)
    if r.counterexample is not None:
        assert str(r.counterexample)[:300] in page
    ev = r.evidence
    if "bound" in ev:
        assert rec["failure_bound"] == ev["bound"] and f"error ≤ {ev['bound']}" in text and f"error ≤ {ev['bound']}" in page
        if ev.get("bound_formula") == "(D/p)^k":
            exact = Fraction(int(ev["degree_bound"]), prime(ev["p"])) ** int(ev["k"])
            assert bound_holds(ev["bound"], exact), (ev["bound"], exact)
            assert bound_holds(ev["per_trial_bound"], Fraction(int(ev["degree_bound"]), prime(ev["p"])))
            # bound_log2 is a decimal with two places, rounded up: 2^(m/100) ≥ exact ⇔ 2^m ≥ exact^100
            if ev.get("bound_log2") is not None:
                m100 = Fraction(str(ev["bound_log2"])) * 100
                assert m100.denominator == 1 and Fraction(2) ** int(m100) >= exact**100
        if r.proved:
            assert bound_holds(ev["bound"], Fraction(0))
    if r.counterexample is None:
        assert doc["counterexample"] is None and "counterexample" not in rec and "counterexample u =" not in text
        return doc
    check_counterexample(r, doc["counterexample"], text, lhs, rhs)
    assert rec["counterexample"] == "re-checked"  # the input depends on the seed; the record holds the claim
    return doc


def check_counterexample(r: Any, cj: dict[str, Any], text: str, lhs: Circuit, rhs: Any) -> None:
    """The JSON counterexample parsed back by :func:`q` equals the object's, separates the sides
    (``lhs`` by :func:`evaluate`; ``rhs`` a circuit, or a model evaluated by the library with the
    counterexample's parameter values), names the first differing entry, and ``str`` states it."""
    cex = r.counterexample
    u = [[q(x) for x in row] for row in cj["inputs"]]
    params = {k: q(v) for k, v in cj["params"].items()}
    i, j = cj["cell"]
    a, b = q(cj["lhs_value"]), q(cj["rhs_value"])
    assert u == [[Fraction(x) for x in row] for row in cex.inputs] and params == dict(cex.params)
    assert (i, j) == tuple(cex.cell) and (a, b) == (cex.lhs_value, cex.rhs_value) and a != b
    assert cj["stage"] == cex.stage and (f"  first failing stage: {cex.stage}" in text) == bool(cex.stage)
    ya = evaluate(lhs, u)
    yb = evaluate(rhs, u) if isinstance(rhs, Circuit) else exact_evaluate(rhs, u, params)
    assert (ya[i][j], yb[i][j]) == (a, b)
    first = next((ii, jj) for ii in range(lhs.n) for jj in range(lhs.d) if ya[ii][jj] != yb[ii][jj])
    assert first == (i, j), "the counterexample names the first differing entry"
    line = next(x for x in text.splitlines() if x.startswith("  counterexample u = "))
    m = re.fullmatch(r"  counterexample u = \[(.*?)\](?: with (.*))?: entry \((\d+), (\d+)\) is ({V}) \(lhs\) vs ({V}) \(rhs\)"
                     .replace("{V}", _SHOWN), line)
    assert m, line
    rows = [row.split(" ") for row in m[1].split("; ")]
    assert len(rows) == len(u) and all(shown_is(t, x) for row_t, row in zip(rows, u) for t, x in zip(row_t, row))
    shown_params = dict(p.split("=", 1) for p in m[2].split(", ")) if m[2] else {}
    assert shown_params.keys() == params.keys() and all(shown_is(shown_params[k], v) for k, v in params.items())
    assert (int(m[3]), int(m[4])) == (i, j)
    assert shown_is(m[5], a) and shown_is(m[6], b), line


# ---- 1. hypothesis-drawn real reports, every method and outcome -------------------------------------
def _perturbed(c: Circuit, delta: Fraction) -> Circuit:
    """``c`` plus ``delta`` on its first output entry (the entry becomes a new lin gate)."""
    base = c.n * c.d + len(c.gates)
    first = c.outputs[0] if c.outputs else 0
    gates = (*c.gates, Gate.const(delta), Gate.lin(first, 1, base, 1))
    outs = (base + 1, *c.outputs[1:]) if c.outputs else (base + 1,)
    return Circuit(c.n, c.d, gates, outs, c.name + "′")


BIG = {"10^5000+7": Fraction(HUGE), "-(10^5000+7)/3": Fraction(-HUGE, 3), "-(2^70001+1)/7": Fraction(-(2**70001) - 1, 7)}


def _deltas() -> st.SearchStrategy[Fraction | str]:
    """Small rationals, or the name of a huge one in ``BIG`` (hypothesis cannot print a huge Fraction)."""
    return st.one_of(st.builds(Fraction, st.integers(-9, 9).filter(bool), st.integers(1, 4)), st.sampled_from(sorted(BIG)))


NAMES = st.sampled_from(["c", "ü∑ 名前", "", "x\ty"])


@settings(max_examples=30)
@given(circuits(max_n=2, max_d=2, max_gates=5), _deltas(), NAMES,
       st.sampled_from(["exact", "exact-sympy", "randomized", "z3", "auto"]), st.booleans())
def test_verify_reports_render_what_they_hold(c, delta, name, method, same):
    c = Circuit(c.n, c.d, c.gates, c.outputs, name)
    other = c if same else _perturbed(c, BIG.get(delta, delta))  # type: ignore[call-overload]
    backend = {"randomized": "python"}.get(method)
    r = sv.verify(c, other, method=method, backend=backend)
    assert r.verdict is (Verdict.PROVED if same else Verdict.REFUTED)
    check_report(r, c, other)


@pytest.mark.parametrize("how", ["timeout", "budget"])
def test_unknown_reports_render_their_reason(how):
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,), "m")
    other = _perturbed(c, Fraction(1))
    kwargs = {"timeout": 1e-9} if how == "timeout" else {"max_monomials": 1}
    r = sv.verify(c, other, method="exact", **kwargs)
    assert r.verdict is Verdict.UNKNOWN
    doc = check_report(r, c, other)
    assert doc["notes"] and doc["counterexample"] is None


def test_compositional_reports_and_mutated_models():
    from symverify.mutate import weight_mutant

    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.const(Fraction(-1, 3)), Gate.lin(2, 1, 3, 1)), (4,), "ü")
    compiled = sv.compile(c)
    check_report(sv.verify(c, compiled, method="compositional"), c, compiled.model)
    verdicts = set()
    for seed in range(10):  # one weight changed: a stage fails (some mutants carry a symbolic weight)
        model = weight_mutant(compiled.model, seed).obj
        r = sv.verify(c, model, certificate=compiled.certificate, method="compositional")
        verdicts.add(r.verdict.value)
        check_report(r, c, model)
    assert verdicts == {"proved", "refuted"}


# ---- the command line against the object ----------------------------------------------------------
@pytest.mark.parametrize("method", ["exact", "randomized", "auto", "z3"])
@pytest.mark.parametrize("case", ["proved", "refuted", "huge", "unknown"])
def test_cli_verify_says_what_verify_says(tmp_path, capsys, method, case):
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.const(Fraction(-1, 3)), Gate.lin(2, 1, 3, 1)), (4,), "ü")
    other = {"proved": c, "refuted": _perturbed(c, Fraction(-5, 2)), "huge": _perturbed(c, Fraction(-HUGE, 3)),
             "unknown": _perturbed(c, Fraction(1))}[case]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    dump_file(c, a)
    dump_file(other, b)
    flags = ["--timeout", "1e-9"] if case == "unknown" else []
    r = sv.verify(c, other, method=method, seed=0, **({"timeout": 1e-9} if case == "unknown" else {}))
    check_report(r, c, other)
    code = main(["verify", str(a), str(b), "--method", method, "--seed", "0", "--json", *flags])
    doc = strict_loads(capsys.readouterr().out)
    assert code == EXIT[r.verdict.value] == EXIT[doc["verdict"]]
    mine = r.to_json()
    for key in ("verdict", "method", "counterexample", "seed", "notes"):
        assert doc[key] == mine[key], key
    assert {k: v for k, v in doc["evidence"].items() if k != "backend_choice"} == \
        {k: v for k, v in mine["evidence"].items() if k != "backend_choice"}
    code = main(["verify", str(a), str(b), "--method", method, "--seed", "0", *flags])
    out = capsys.readouterr().out
    assert code == EXIT[r.verdict.value]
    assert out.splitlines()[0].startswith(f"{r.verdict.value.upper()} by {r.method} [")
    assert out.split("\n", 1)[1] == r.text().split("\n", 1)[1] + "\n" if "\n" in r.text() else True


# ---- proof-script claims: table, run JSON, JUnit, golden view ----------------------------------------
_C = Circuit(1, 1, (Gate.mul(0, 0),), (1,), "sq")
_REPORTS = {"proved": sv.verify(_C, _C, method="exact"),
            "refuted": sv.verify(_C, _perturbed(_C, Fraction(1)), method="exact"),
            "unknown": sv.verify(_C, _perturbed(_C, Fraction(1)), method="exact", timeout=1e-9)}

_NUM = st.one_of(st.integers(-5, 40), st.sampled_from([HUGE, -HUGE, 2**70001]),
                 st.builds(Fraction, st.integers(-50, 50), st.integers(1, 7)),
                 st.floats(0.5, 64, allow_nan=False), st.sampled_from([1.0000001, 1.0, 0.99999994, 3.1415926]))


@st.composite
def instances(draw: Any) -> Instance:
    name = draw(st.sampled_from(["i", "ü∑ 名前 <&>\"", "", "a" * 90]))
    keys = draw(st.lists(st.sampled_from(["layers", "inner_n", "width"]), unique=True, max_size=3))
    res = {k: draw(_NUM) for k in keys}
    bounds = {k: draw(_NUM) for k in draw(st.lists(st.sampled_from(["layers", "inner_n", "depth"]), unique=True, max_size=2))}
    which = draw(st.sampled_from(["computed", "argued", "report"]))
    if which == "computed":
        return Instance.computed(name, draw(st.sampled_from([True, False, None])), "exact rank over Q", "exact",
                                 resources=res, bounds=bounds)
    if which == "argued":
        return Instance.argued(name, "docs/theory.md § 5", checks=draw(st.sampled_from([True, False, None])),
                               resources=res, bounds=bounds)
    return Instance.from_report(name, _REPORTS[draw(st.sampled_from(sorted(_REPORTS)))], resources=res, bounds=bounds)


def _summary(results: list[ProofResult]) -> runner.RunSummary:
    outs = tuple(runner.ScriptOutcome(r.name, r.title, "ok" if r.ok else "failed", 0.0, r.to_json()) for r in results)
    return runner.RunSummary(quick=True, outcomes=outs)


def _over(inst: Instance) -> set[str]:
    """The resources over their stated bound, exactly (a missing value is over)."""
    return {k for k, b in inst.bounds.items() if k not in inst.resources or Fraction(inst.resources[k]) > Fraction(b)}


def _text_value(text: str) -> Fraction:
    return Fraction(text) if re.fullmatch(r"-?\d+(\.\d*)?(e[+-]?\d+)?", text) and not text.lstrip("-").isdigit() else q(text)


def _value(x: Any) -> Fraction:
    return Fraction(x) if isinstance(x, float) else q(x)


@settings(max_examples=25)
@given(st.lists(st.lists(instances(), max_size=5), min_size=1, max_size=3))
def test_proof_renderings_say_what_the_instances_say(groups):
    results = [ProofResult(f"s{k}", f"Script ✓ {k}", list(g)) for k, g in enumerate(groups)]
    summary = _summary(results)
    run = summary.to_json()
    text = json.dumps(run, allow_nan=False, ensure_ascii=False)
    assert strict_loads(text) == run
    root = ET.fromstring(runner.junit_xml(summary).split("\n", 1)[1])
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [r.name for r in results]
    fails = skips = 0
    for res, script, suite in zip(results, run["scripts"], suites):
        assert script["ok"] == res.ok == (script["status"] == "ok")
        insts = script["result"]["instances"]
        assert len(insts) == len(res.instances)
        cases = suite.findall("testcase")
        if not res.instances:
            assert len(cases) == 1 and cases[0].find("error") is not None
            continue
        table = res.table().splitlines()[1:]
        for inst, j, case, line in zip(res.instances, insts, cases, table):
            proved = inst.kind in (ClaimKind.PROVER, ClaimKind.COMPUTED) and inst.verdict is Verdict.PROVED
            over = _over(inst)
            ok = (inst.checks is not False if inst.kind is ClaimKind.ARGUED else proved) and not over
            assert (j["name"], j["verdict"], j["kind"], j["method"]) == (inst.name, inst.verdict.value, inst.kind.value, inst.method)
            assert j["ok"] == inst.ok == ok and set(j["over_bound"]) == over
            # resources and bounds: exact values exactly, floats to 6 digits, and never a misstated comparison
            for part in ("resources", "bounds"):
                for k, v in getattr(inst, part).items():
                    shown = _value(j[part][k])
                    assert shown == v if not isinstance(v, float) else abs(shown - Fraction(v)) <= abs(Fraction(v)) * Fraction(1, 10**5)
            for k in set(inst.bounds) & set(inst.resources):
                assert (_value(j["resources"][k]) > _value(j["bounds"][k])) == (k in over), (k, j)
            # JUnit: a failure exactly for the instances that are not ok, skipped exactly for argued ok ones
            assert case.get("name") == inst.name
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            assert (props["kind"], props["verdict"]) == (inst.kind.value, inst.verdict.value)
            assert (case.find("failure") is not None) == (not ok)
            assert (case.find("skipped") is not None) == (ok and inst.kind is ClaimKind.ARGUED)
            fails += not ok
            skips += ok and inst.kind is ClaimKind.ARGUED
            # the table line
            shown = "argued" if inst.kind is ClaimKind.ARGUED else inst.verdict.value
            assert line.split()[:3] == [shown, inst.kind.value, inst.method] and inst.name in line
            assert line.endswith("<--") or "<-- over bound" in line if not ok else "<--" not in line
            for k in over & set(inst.resources) if "<-- over bound:" in line else ():
                m = re.search(rf"{k}=(\S+) > (\S+?)(,|$)", line.split("<-- over bound:")[1])
                assert m and _text_value(m[1]) > _text_value(m[2]), line
        assert int(suite.get("failures")) == sum(not i.ok for i in res.instances)
    assert int(root.get("failures")) == fails and sum(int(s.get("skipped")) for s in suites) == skips
    assert runner.golden_diff(run, strict_loads(text)) == ""


@pytest.mark.parametrize("r, b, over", [(1.0000001, 1.0, True), (0.1234566, Fraction(12345665, 10**8), False),
                                        (2.0, Fraction(5, 2), False), (1e-7, 0, True)])
def test_six_digit_floats_never_misstate_a_bound(r, b, over):
    """``1.0000001 > 1`` was written ``1.0 > 1.0`` (and ``0.1234566 ≤ 0.12345665`` as ``0.123457``):
    the written values now compare as the exact ones do, in the JSON and in the table."""
    inst = Instance.computed("i", True, "exact rank", "exact", resources={"layers": r}, bounds={"layers": b})
    j = json.loads(json.dumps(inst.to_json()))
    assert (j["over_bound"] == ["layers"]) == over == (not j["ok"])
    assert (_value(j["resources"]["layers"]) > _value(j["bounds"]["layers"])) == over
    line = ProofResult("s", "t", [inst]).table().splitlines()[1]
    m = re.search(r"layers=(\S+)≤(\S+)", line)
    assert m and (_text_value(m[1]) > _text_value(m[2])) == over, line


def test_cli_prove_exit_code_json_and_junit(tmp_path, capsys):
    d = tmp_path / "scripts"
    d.mkdir()
    (d / "mixed.py").write_text(
        "from fractions import Fraction\n"
        "from symverify.scripts.protocol import Instance, ProofResult, script_main\n"
        "TITLE = 'Mixed ✓'\n"
        "def run(quick=False):\n"
        "    r = ProofResult('mixed', TITLE)\n"
        "    r.instances.append(Instance.computed('holds', True, 'exact rank', 'exact', resources={'layers': 3}, bounds={'layers': 4}))\n"
        "    r.instances.append(Instance.computed('fails', False, 'exact rank', 'exact'))\n"
        "    r.instances.append(Instance.argued('hand', 'docs/theory.md § 5', checks=True))\n"
        "    r.instances.append(Instance.computed('over', True, 'exact rank', 'exact', resources={'layers': 5}, bounds={'layers': Fraction(9, 2)}))\n"
        "    return r\n"
        "if __name__ == '__main__':\n"
        "    raise SystemExit(script_main(run))\n", encoding="utf-8")
    (d / "good.py").write_text(
        "from symverify.scripts.protocol import Instance, ProofResult, script_main\n"
        "TITLE = 'Good'\n"
        "def run(quick=False):\n"
        "    r = ProofResult('good', TITLE)\n"
        "    r.instances.append(Instance.computed('holds', True, 'exact rank', 'exact'))\n"
        "    return r\n"
        "if __name__ == '__main__':\n"
        "    raise SystemExit(script_main(run))\n", encoding="utf-8")
    out_json, junit = tmp_path / "run.json", tmp_path / "junit.xml"
    code = main(["prove", "--dir", str(d), "-j", "1", "--json", str(out_json), "--junit", str(junit)])
    table = capsys.readouterr().out
    assert code == 1  # a script failed
    run = runner.load_run(out_json)
    by = {s["name"]: s for s in run["scripts"]}
    assert by["good"]["status"] == "ok" and by["mixed"]["status"] == "failed"
    insts = {i["name"]: i for i in by["mixed"]["result"]["instances"]}
    assert [insts[n]["ok"] for n in ("holds", "fails", "hand", "over")] == [True, False, True, False]
    assert insts["over"]["over_bound"] == ["layers"] and insts["over"]["bounds"] == {"layers": "9/2"}
    root = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert {n for n, c in cases.items() if c.find("failure") is not None} == {"fails", "over"}
    assert {n for n, c in cases.items() if c.find("skipped") is not None} == {"hand"}
    assert "mixed" in table and "good" in table
    # a golden run equal to this failing run does not turn it into a pass
    code = main(["prove", "--dir", str(d), "-j", "1", "--golden", str(out_json)])
    assert code == 1 and "matches the golden run" in capsys.readouterr().out
    assert main(["prove", "good", "--dir", str(d), "-j", "1", "--golden", str(out_json)]) == 0


# ---- 2. the readers under attack ---------------------------------------------------------------------
def _genuine_run() -> dict[str, Any]:
    res = ProofResult("s", "t", [Instance.computed("i", True, "exact rank", "exact", resources={"layers": 3},
                                                   bounds={"layers": Fraction(7, 2)}),
                                 Instance.argued("a", "docs/theory.md § 5")])
    return _summary([res]).to_json()


def _forge(change: Any) -> str:
    run = _genuine_run()
    change(run["scripts"][0]["result"]["instances"][0])
    return json.dumps(run)


def _forge_argued(change: Any) -> str:
    run = _genuine_run()
    change(run["scripts"][0]["result"]["instances"][1])
    return json.dumps(run)


def _set(**kv: Any) -> Any:
    return lambda inst: inst.update(kv)


FORGED_RUNS = [
    (_forge(_set(kind="argued")), r"an argued claim .* verdict must be unknown"),
    (_forge(_set(verdict="refuted")), r"'ok' is true, but"),
    (_forge(_set(verdict="PROVED")), r"verdict: expected one of"),
    (_forge(_set(verdict=True)), r"verdict: expected one of"),
    (_forge(_set(kind="oracle")), r"kind: expected one of"),
    (_forge(_set(ok="yes")), r"ok: expected true or false"),
    (_forge(_set(resources={"layers": 4})), r"layers=4 is over its bound 7/2 but not listed in over_bound"),
    (_forge(_set(over_bound=["layers"], resources={"layers": 4})), r"'ok' is true, but over_bound lists layers"),
    (_forge(_set(over_bound=["width"])), r"over_bound names 'width', which has no stated bound"),
    (_forge(_set(checks=True)), r"checks: expected null, or true or false on an argued claim, found True on a computed"),
    (_forge(_set(checks="yes")), r"checks: expected null, or true or false"),
    (_forge_argued(_set(checks=False)), r"'ok' is true, but the argued claim's checks failed"),
    (_forge(_set(ok=False, over_bound=["layers"])), r"over_bound names 'layers', but layers=3 is within its bound 7/2"),
    # without over_bound, 'ok' is still held to the bounds themselves
    (_forge(lambda inst: (inst.pop("over_bound"), inst.update(resources={"layers": 4}))),
     r"'ok' is true, but layers=4 is over its bound 7/2"),
    (_forge(lambda inst: (inst.pop("over_bound"), inst.update(resources={}))),
     r"'ok' is true, but layers has a bound 7/2 and no value"),
    (_forge(_set(resources={"layers": " 1"})), r"resources.layers: expected an int, a float or an exact rational"),
    (_forge(_set(resources={"layers": "0x10"})), r"resources.layers: expected an int, a float or an exact rational"),
    (_forge(_set(bounds={"layers": "1e9"})), r"bounds.layers: expected an int, a float or an exact rational"),
    (_forge(_set(bounds={"layers": True})), r"bounds.layers: expected an int, a float or an exact rational"),
    (_forge(_set(resources=[3])), r"resources: expected an object"),
    (_forge(_set(name=7)), r"name: expected a string"),
    (json.dumps(_genuine_run()).replace('"layers": 3', '"layers": 3, "layers": 2'), r"duplicate key 'layers'"),
    (json.dumps(_genuine_run()).replace('"layers": 3', '"layers": NaN'), r"NaN is not a JSON number"),
    (json.dumps(_genuine_run()).replace('"layers": 3', '"layers": Infinity'), r"Infinity is not a JSON number"),
    (json.dumps(_genuine_run())[:-40], r"not valid JSON"),
]


@pytest.mark.parametrize("text, match", FORGED_RUNS)
@pytest.mark.parametrize("reader", ["golden", "report"])
def test_forged_runs_are_refused_by_every_reader(tmp_path, text, match, reader):
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    read = runner.load_run if reader == "golden" else viz_load_run
    with pytest.raises(SerializationError, match=match):
        read(path)


def test_genuine_runs_are_read_back_exactly(tmp_path):
    run = _genuine_run()
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    assert runner.load_run(path) == run and viz_load_run(path) == run


def test_report_and_golden_never_take_a_forged_pass(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(_forge(_set(verdict="refuted")), encoding="utf-8")
    code = main(["report", str(path), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 3 and "'ok' is true, but" in err and not (tmp_path / "r.html").exists()
    code = main(["prove", "--quick", "primitives", "--golden", str(path)])  # refused before any script runs
    err = capsys.readouterr().err
    assert code == 3 and err.startswith("symverify: error: ") and err.count("\n") == 1 and "'ok' is true, but" in err


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_instances_refuse_values_that_are_not_numbers(value):
    with pytest.raises(UsageError, match=r"resources\['layers'\]: expected a finite number"):
        Instance.computed("i", True, "exact rank", "exact", resources={"layers": value}, bounds={"layers": 4})
    with pytest.raises(UsageError, match=r"bounds\['layers'\]: expected a finite number"):
        Instance.computed("i", True, "exact rank", "exact", resources={"layers": 3}, bounds={"layers": value})


def test_huge_resources_are_written_exactly():
    inst = Instance.computed("i", True, "exact rank", "exact", resources={"layers": HUGE, "r": Fraction(-HUGE, 3)},
                             bounds={"layers": HUGE + 1})
    j = json.loads(json.dumps(inst.to_json()))
    assert q(j["resources"]["layers"]) == HUGE and q(j["resources"]["r"]) == Fraction(-HUGE, 3) and j["ok"]
    assert "layers=" in ProofResult("s", "t", [inst]).table()


@pytest.mark.parametrize("coeff, value", [("0x10", 16), (" 1", 1), ("0x1f/3", Fraction(31, 3)), ("+ 2 / 4", None)])
def test_certificate_coefficients_follow_the_documented_grammar(coeff, value):
    """docs/formats.md § Exact values allows ``0x`` hexadecimal (how reports write huge integers) and
    spaces around the number: they read as the value they denote, never as something else; a
    certificate is untrusted data (a wrong one can only fail), so this grammar cannot forge a proof."""
    from symverify.kernel.ir.certificate import Certificate

    doc = {"format": "symverify.certificate", "version": 1,
           "boundaries": [{"layer": 0, "cells": [[0, 0, [[0, coeff]], "0"]]}]}
    if value is None:
        with pytest.raises(SymverifyError, match="expected a rational"):
            Certificate.from_json(doc)
        return
    cell = Certificate.from_json(doc).boundaries[0].cells[0]
    assert cell.terms == ((0, value),)


@pytest.mark.parametrize("coeff", ["1_0", "١", "1e3", "0X10", "0x1F", "\u00a01", "1.0", "--1", "0x", "1/0"])
def test_certificate_coefficients_beyond_the_grammar_are_refused(coeff):
    from symverify.kernel.ir.certificate import Certificate

    doc = {"format": "symverify.certificate", "version": 1,
           "boundaries": [{"layer": 0, "cells": [[0, 0, [[0, coeff]], "0"]]}]}
    with pytest.raises(SymverifyError, match=r"cells\[0\]"):
        Certificate.from_json(doc)


# ---- 3. the checks catch planted renderer bugs -------------------------------------------------------
def test_a_dropped_sign_is_caught(monkeypatch):
    import symverify.kernel.provers.outcome as outcome

    c = Circuit(1, 1, (Gate.mul(0, 0),), (1,), "sq")
    other = _perturbed(c, Fraction(-5, 2))
    r = sv.verify(c, other, method="exact")
    check_report(r, c, other)
    from symverify.ir.bigint import show_rational

    monkeypatch.setattr(outcome, "_show", lambda x: show_rational(abs(x)))
    with pytest.raises(AssertionError):
        check_report(r, c, other)
    monkeypatch.undo()
    monkeypatch.setattr(outcome, "_q", lambda x: str(abs(Fraction(x))))
    with pytest.raises(AssertionError):
        check_report(r, c, other)


def test_a_bound_rounded_down_is_caught(monkeypatch):
    import symverify.kernel.provers.randomized as randomized

    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.mul(2, 2)), (3,), "q")
    check_report(sv.verify(c, c, method="randomized", backend="python"), c, c)
    real = randomized.pow2_text

    def floor_text(x: Fraction) -> str:  # the least multiple of 0.1 above, minus 0.1: below the bound
        t = real(x)
        return t if t in ("0", "1") else f"2^{float(t[2:]) - 0.1:.1f}"

    monkeypatch.setattr(randomized, "pow2_text", floor_text)
    with pytest.raises(AssertionError):
        check_report(sv.verify(c, c, method="randomized", backend="python"), c, c)


def test_a_junit_writer_that_drops_a_failure_is_caught(monkeypatch):
    real = runner.junit_xml

    def lenient(summary: runner.RunSummary) -> str:
        return re.sub(r"<failure [^>]*>.*?</failure>|<failure [^>]*/>", "", real(summary), flags=re.S)

    monkeypatch.setattr(runner, "junit_xml", lenient)
    with pytest.raises(AssertionError):
        test_proof_renderings_say_what_the_instances_say.hypothesis.inner_test(
            [[Instance.computed("x", False, "exact rank", "exact")]])
