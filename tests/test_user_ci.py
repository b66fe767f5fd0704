"""A user's CI, end to end: throwaway projects (``pytester``) that keep identities as regressions with
``symverify.testing`` and the pytest plugin's golden files, an independent oracle for ``golden_record``,
``symverify.mutate`` on a compiled model and the hypothesis strategies as a user draws them.

tests/test_testing_plugin.py, test_golden_files.py and test_attacks_testing.py hold the unit checks;
here each behaviour is seen the way a user's ``pytest`` run shows it (outcomes, messages, the golden
files on disk, the terminal summary, pytest-xdist)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings

import symverify as sv
from symverify import mutate
from symverify.errors import SymverifyError, UsageError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.semantics.poly import polynomials, shared_ring
from symverify.pytest_plugin import golden_stem
from symverify.strategies import circuits, models
from symverify.testing import golden_record, golden_text

pytest_plugins = ["pytester"]

# The in-process pytester runs forget the modules they import; load the heavy ones here.
X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
COMPILED = sv.compile(X)
golden_text(sv.verify(X, COMPILED.model, method="randomized"))


def _vanishing(u):
    """x·y·∏_{k=1..5} (x − k)(x + k): zero at every small integer x, so a counterexample to ``= 0``
    is found at a point that depends on the seed."""
    x = u[0][0]
    p = x * u[0][1]
    for k in range(1, 6):
        p = p * (x - k) * (x + k)
    return [p]


VANISHING = sv.Circuit.trace(_vanishing, n=1, d=2)
ZERO = sv.Circuit.trace(lambda u: [u[0][0] * 0], n=1, d=2)


# ---- 1. a user's project: verdicts and the assertion messages ------------------------------------
_VERDICTS = '''
import pytest
import symverify as sv
from symverify.testing import assert_proved, assert_refuted

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
WRONG = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0]], n=1, d=2)
C = sv.compile(X)
UNKNOWN = [dict(method="z3", timeout=1e-9), dict(method="randomized", timeout=1e-9), dict(timeout=1e-9)]

def test_proved_exact():
    assert_proved(X, C.model, method="exact")

def test_proved_randomized():
    assert_proved(X, C, method="randomized")

def test_refuted_as_expected():
    assert_refuted(X, WRONG)

def test_wrong_identity():
    assert_proved(X, WRONG, method="exact")

def test_proved_but_expected_refuted():
    assert_refuted(X, C.model, method="randomized")

@pytest.mark.parametrize("kw", UNKNOWN, ids=["z3", "randomized", "auto"])
@pytest.mark.parametrize("expect", ["proved", "refuted"])
@pytest.mark.parametrize("rhs", ["equal", "wrong"])
def test_unknown(kw, expect, rhs):
    other = C.model if rhs == "equal" else WRONG
    (assert_proved if expect == "proved" else assert_refuted)(X, other, **kw)
'''


def test_a_users_verdicts_pass_fail_and_unknown_never_passes(pytester):
    """Proved pairs pass, a wrong identity fails with its counterexample, and an ``unknown`` verdict
    (a timeout before any method ran) fails ``assert_proved`` and ``assert_refuted`` alike, on an
    equal pair and on a different one, saying why it is unknown."""
    pytester.makepyfile(test_verdicts=_VERDICTS)
    res = pytester.runpytest("-p", "no:cacheprovider", "-rf")
    res.assert_outcomes(passed=3, failed=2 + 12)
    out = res.stdout.str()
    res.stdout.fnmatch_lines([
        # verdict, method and the re-checked counterexample on the first line; lhs − rhs for small sides
        "E * AssertionError: expected proved, found refuted (method exact): counterexample u = [[]*[]]: entry (0, 0) is * (lhs) vs * (rhs)",
        "E * lhs − rhs: (0, 0): -x0 (inputs x_(i·d+j) = u[[]i, j[]])",
        # a proof that was expected to be a refutation: verdict, method and its failure bound
        "E * AssertionError: expected refuted, found proved (method randomized), failure bound 2^-*",
    ])
    for expect in ("proved", "refuted"):
        for method in ("z3", "randomized", "auto"):
            line = f"E       AssertionError: expected {expect}, found unknown (method {method}): timeout: 1e-09 s ran out before any method started"
            assert out.count(line + "\n") == 2, line  # the equal pair and the wrong one
    assert out.count("E       AssertionError: expected") == 14


# ---- 1. a user's project: the golden-file life cycle -----------------------------------------------
_GOLDEN = '''
import dataclasses
import os
import pytest
import symverify as sv
from symverify.testing import assert_proved

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
C = sv.compile(X)

def test_report(symverify_golden):
    r = assert_proved(X, C.model, method="exact")
    if os.environ.get("USER_CI_SLOW"):  # the same claim measured on a slower machine
        r = dataclasses.replace(r, timings={k: v * 1000 + 7 for k, v in r.timings.items()})
    symverify_golden.check(r)

def test_claim(symverify_golden):
    method = "randomized" if os.environ.get("USER_CI_CHANGE") else "exact"
    symverify_golden.check(assert_proved(X, C.model, method=method))

def test_compiled(symverify_golden):
    symverify_golden.check(C, "compiled")

@pytest.mark.parametrize("p", ["a b", "a_b", "a-b"])
def test_param(symverify_golden, p):
    symverify_golden.check({"p": p})

class TestOne:
    def test_same(self, symverify_golden):
        symverify_golden.check({"cls": 1})

class TestTwo:
    def test_same(self, symverify_golden):
        symverify_golden.check({"cls": 2})
'''

_IDS = ["test_report", "test_claim", "test_param[a b]", "test_param[a_b]", "test_param[a-b]",
        "TestOne::test_same", "TestTwo::test_same"]


def _golden_files(pytester, module="test_golden"):
    d = pytester.path / "golden" / module
    return sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []


def _expected_names(module="test_golden", ids=_IDS):
    names = [f"{golden_stem(f'{module}.py::{i}')}.json" for i in ids]
    return sorted([*names, f"{golden_stem(f'{module}.py::test_compiled')}-compiled.json"])


def test_golden_files_life_cycle(pytester, monkeypatch):
    """Missing files fail (as the plugin's docstring says) and write nothing; ``--symverify-update``
    writes one distinct, stable file per test (parameters and classes included); a changed timing
    passes, a changed claim fails with a diff; a renamed test's old file is listed as kept (no test
    collected claims it: its test may run elsewhere), but not under ``-k`` narrowing, and update
    keeps it until it is removed by hand."""
    import symverify.pytest_plugin as plugin

    assert "a missing file fails with a hint" in plugin.__doc__
    pytester.makepyfile(test_golden=_GOLDEN)
    run = lambda *a: pytester.runpytest("-p", "no:cacheprovider", *a)  # noqa: E731

    res = run()
    res.assert_outcomes(failed=8)
    # one failure section per file (the short summary repeats the message only when the
    # terminal is wide enough, so it is not counted)
    hints = [ln for ln in res.stdout.lines
             if ln.startswith("no golden file") and ln.endswith("run pytest --symverify-update to write it")]
    assert len(hints) == 8
    assert _golden_files(pytester) == []  # a run without the option writes nothing

    run("--symverify-update").assert_outcomes(passed=8)
    assert _golden_files(pytester) == _expected_names()  # 8 distinct names, independent of the run
    first = {p: (pytester.path / "golden" / "test_golden" / p).read_bytes() for p in _golden_files(pytester)}
    assert json.loads(first[f"{golden_stem('test_golden.py::test_report')}.json"])["verdict"] == "proved"

    res = run()
    res.assert_outcomes(passed=8)
    assert "symverify golden files" not in res.stdout.str()

    monkeypatch.setenv("USER_CI_SLOW", "1")
    run().assert_outcomes(passed=8)  # timings alone never fail
    monkeypatch.delenv("USER_CI_SLOW")

    monkeypatch.setenv("USER_CI_CHANGE", "1")
    res = run()
    res.assert_outcomes(passed=7, failed=1)
    res.stdout.fnmatch_lines(["*golden mismatch for *test_claim-*.json; if the change is intended, run pytest --symverify-update",
                              '+  "failure_bound": "2^-*",', '-  "method": "exact",', '+  "method": "randomized",'])
    monkeypatch.delenv("USER_CI_CHANGE")
    stored = {p: (pytester.path / "golden" / "test_golden" / p).read_bytes() for p in _golden_files(pytester)}
    assert stored == first  # nothing was rewritten by the failing or the passing runs

    # rename test_report → test_report_renamed: the new test has no file, the old one is kept (unclaimed)
    pytester.makepyfile(test_golden=_GOLDEN.replace("def test_report(", "def test_report_renamed("))
    old = f"{golden_stem('test_golden.py::test_report')}.json"
    res = run()
    res.assert_outcomes(passed=7, failed=1)
    res.stdout.fnmatch_lines(["*1 failed, 1 kept*", f"  kept: golden/test_golden/{old}"])
    assert "unused" not in res.stdout.str()
    res = run("-k", "test_param")  # the module is narrowed: its unclaimed files are not reported
    res.assert_outcomes(passed=3, deselected=5)
    assert "unused" not in res.stdout.str() and "kept" not in res.stdout.str()
    res = run("--symverify-update")
    res.stdout.fnmatch_lines(["*1 written, 1 kept*", f"  kept: golden/test_golden/{old}"])
    assert "removed" not in res.stdout.str() and (pytester.path / "golden" / "test_golden" / old).is_file()
    (pytester.path / "golden" / "test_golden" / old).unlink()  # the user removes the renamed test's file
    assert _golden_files(pytester) == _expected_names(ids=[*_IDS[1:], "test_report_renamed"])
    run().assert_outcomes(passed=8)


_XDIST = '''
import pytest

@pytest.mark.parametrize("k", range(6))
def test_k(symverify_golden, k):
    symverify_golden.check({"k": k, "flip": k == 5 and bool(__import__("os").environ.get("USER_CI_CHANGE"))})
'''


def test_golden_files_under_xdist(pytester, monkeypatch):
    """``-n 2``: the checks work on the workers, and the controller's summary lists the files the
    workers failed and kept, each once (it listed nothing: an unclaimed file went unreported)."""
    pytest.importorskip("xdist")
    pytester.makepyfile(test_x=_XDIST)
    d = pytester.path / "golden" / "test_x"
    d.mkdir(parents=True)
    for k in range(6):  # what --symverify-update writes (test_golden_files_life_cycle runs that)
        (d / f"{golden_stem(f'test_x.py::test_k[{k}]')}.json").write_text(golden_text({"k": k, "flip": False}), encoding="utf-8")
    (d / "gone-0123abcd.json").write_text("{}\n", encoding="utf-8")
    monkeypatch.setenv("USER_CI_CHANGE", "1")
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    res.assert_outcomes(passed=5, failed=1)
    res.stdout.fnmatch_lines(["*1 failed, 1 kept*", "  failed: golden/test_x/test_k_5-*.json",
                              "  kept: golden/test_x/gone-0123abcd.json"])
    assert res.stdout.str().count("kept: golden/test_x/gone-0123abcd.json") == 1  # once, not once per worker


# ---- 2. an oracle for golden_record -------------------------------------------------------------------
def _plain(x):
    """JSON's view of a value (tuples as lists), the way a golden file holds it."""
    return json.loads(json.dumps(x, default=str))


def _expected_report_record(r):
    """golden_record(report) rebuilt from the report's own fields: the claim and nothing else."""
    rec = {"kind": "report", "verdict": r.verdict.value, "method": r.method, "lhs": _plain(dict(r.lhs)),
           "rhs": _plain(dict(r.rhs))}
    if "bound" in r.evidence and r.verdict.value == "proved":
        rec["failure_bound"] = r.evidence["bound"]
    if r.counterexample is not None:
        rec["counterexample"] = "re-checked"
    return rec


_PAIRS = {
    "proved exact": (X, COMPILED.model, dict(method="exact")),
    "proved randomized": (X, COMPILED, dict(method="randomized")),
    "proved compositional": (X, COMPILED, dict(method="compositional")),
    "refuted auto": (VANISHING, ZERO, {}),
    "refuted randomized": (VANISHING, ZERO, dict(method="randomized")),
    "refuted exact": (VANISHING, ZERO, dict(method="exact")),
    "unknown": (X, COMPILED.model, dict(method="z3", timeout=1e-9)),
}


@pytest.mark.parametrize("name", list(_PAIRS))
def test_golden_record_is_a_function_of_the_claim(name):
    """Each field recomputed from the report; byte-identical across seeds (the refutations' counterexamples
    differ from seed to seed: they were stored, so a golden file of a refutation changed with the seed)
    and across timings."""
    lhs, rhs, kw = _PAIRS[name]
    reports = [sv.verify(lhs, rhs, seed=s, **kw) for s in (0, 1, 2)]
    for r in reports:
        assert golden_record(r) == _expected_report_record(r)
    texts = {golden_text(r) for r in reports}
    slow = dataclasses.replace(reports[0], timings={k: 1e6 for k in reports[0].timings})
    texts.add(golden_text(slow))
    assert len(texts) == 1, texts
    if name.startswith("refuted"):  # the premise: the witnesses themselves depend on the seed
        assert len({str(r.counterexample) for r in reports}) > 1


def test_golden_record_of_a_timed_out_randomized_run_does_not_depend_on_the_trials_it_ran():
    """A randomized run stopped by its timeout is ``unknown`` with the bound of the ``k`` trials run
    so far (``ε^k``), which depends on when the timeout came: it was stored as ``failure_bound``, so
    the golden file changed from run to run. Only a proof's failure bound is recorded."""
    from symverify.library import random_circuit

    c = random_circuit(8, 8, 400, 3)
    m = sv.compile(c).model
    tiny = Fraction(1, 2**30000)  # about 160 trials: the timeouts stop it after a few
    stopped = [sv.verify(c, m, method="randomized", backend="python", error_bound=tiny, timeout=t) for t in (0.15, 0.5, 1.2)]
    assert all(r.verdict is sv.Verdict.UNKNOWN and "timeout" in r.notes[0] for r in stopped)
    assert len({r.evidence["bound"] for r in stopped}) > 1  # the premise: the bound depends on when it stopped
    assert len({golden_text(r) for r in stopped}) == 1 and "failure_bound" not in golden_record(stopped[0])
    proved = sv.verify(X, COMPILED.model, method="randomized")
    assert golden_record(proved)["failure_bound"] == proved.evidence["bound"]


def test_golden_record_changes_when_the_claim_changes():
    """One field of the claim altered → another record: the verdict (same pair, unknown), the method,
    the failure bound, a side's statistics, the compiled resources and bounds."""
    base = sv.verify(X, COMPILED.model, method="randomized")
    text = golden_text(base)
    others = [
        sv.verify(X, COMPILED.model, method="z3", timeout=1e-9),  # verdict unknown
        sv.verify(X, COMPILED.model, method="exact"),  # method (and no failure bound)
        sv.verify(X, COMPILED.model, method="randomized", error_bound=Fraction(1, 2**300)),  # a smaller bound
    ]
    assert all(golden_text(o) != text for o in others)
    for change in ({"evidence": {**base.evidence, "bound": "2^-1.0"}}, {"lhs": {**base.lhs, "muls": base.lhs["muls"] + 1}}):
        with pytest.raises(sv.ProverError, match="sealed fields"):  # a report's shown fields are sealed: no such report
            dataclasses.replace(base, **change)
    assert golden_record(others[2])["failure_bound"] != golden_record(base)["failure_bound"]
    comp = golden_text(COMPILED)
    assert golden_record(COMPILED) == _plain({"kind": "compiled", "method": COMPILED.method,
                                              "signature": list(COMPILED.model.signature),
                                              "resources": golden_record(dict(COMPILED.resources)),
                                              "bounds": golden_record(dict(COMPILED.bounds)),
                                              "model_digest": golden_record(base)["rhs"]["digest"],
                                              "source_digest": golden_record(base)["lhs"]["digest"]})
    key = next(iter(COMPILED.resources))
    changed = dataclasses.replace(COMPILED, resources={**COMPILED.resources, key: 10**9})
    assert golden_text(changed) != comp
    key = next(iter(COMPILED.bounds))
    assert golden_text(dataclasses.replace(COMPILED, bounds={**COMPILED.bounds, key: 10**9})) != comp


# ---- 3. symverify.mutate on a compiled model --------------------------------------------------------
def _differs_somewhere(a, b) -> bool:
    """The sides' polynomials, expanded exactly in one ring, differ in some entry."""
    ring = shared_ring(a, b)
    pa, pb = polynomials(a, ring), polynomials(b, ring)
    return any(str(x - y) != "0" for ra, rb in zip(pa, pb) for x, y in zip(ra, rb))


def _changed_values(a, b) -> list:
    """What differs by value between two models (cells of any grid, layer modes) or two circuits
    (gates, outputs); two equal-valued grids may differ in how they are stored, so ``==`` is no proof."""
    if isinstance(a, Circuit):
        return [k for k, (g, h) in enumerate(zip(a.gates, b.gates)) if g != h] + ([] if a.outputs == b.outputs else ["outputs"])
    out = []
    for k, (la, lb) in enumerate(zip(a.layers, b.layers)):
        out += [(k, "mode")] if la.mode is not lb.mode else []
        for (name, ga), (_, gb) in zip(la.grids(), lb.grids()):
            ra, rb = ga.to_rows(), gb.to_rows()
            out += [(k, name, i, j) for i in range(ga.rows) for j in range(ga.cols) if ra[i][j] != rb[i][j]]
    return out


def _evaluate_differs(a, b, cx) -> bool:
    """Exact evaluation of both sides at the counterexample's input (and parameters) differs."""
    u = [list(r) for r in cx.inputs]
    return sv.evaluate(a, u, cx.params_for(a)) != sv.evaluate(b, u, cx.params_for(b))


def test_every_mutant_is_different_or_admitted_equivalent():
    """Each weight and gate mutant changes exactly one value (a cell, a mode, a gate or the outputs); where ``verify`` refutes it, exact evaluation at the
    counterexample differs; where it proves it equal, an independent exact expansion agrees, and the
    module's documentation says that mutants may compute the same polynomials."""
    weight = mutate.mutants(lambda s: mutate.weight_mutant(COMPILED.model, s, tuple(mutate.WEIGHT_OPERATORS)), 40)
    gate = mutate.mutants(lambda s: mutate.gate_mutant(X, s, tuple(mutate.GATE_OPERATORS)), 16)  # X has 16 distinct ones
    equivalent = []
    for original, muts in ((COMPILED.model, weight), (X, gate)):
        for m in muts:
            assert len(_changed_values(original, m.obj)) == 1, str(m)  # one real change, not a copy
            r = sv.verify(original, m.obj, method="exact")
            assert r.verdict.value in ("proved", "refuted"), (str(m), r)
            if r.refuted:
                assert _evaluate_differs(original, m.obj, r.counterexample), str(m)
            else:
                assert not _differs_somewhere(original, m.obj), str(m)
                equivalent.append(str(m))
    assert {m.operator for m in weight} == set(mutate.WEIGHT_OPERATORS)
    if equivalent:
        assert "may compute the same polynomials as the original" in " ".join(mutate.__doc__.split())


def test_mutant_sets_are_deterministic_for_a_seed_across_processes():
    """The same seeds give the same mutants in another interpreter with another hash seed (set order)."""
    code = ("import symverify as sv; from symverify import mutate\n"
            "X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)\n"
            "m = sv.compile(X).model\n"
            "for mu in mutate.mutants(lambda s: mutate.weight_mutant(m, s, tuple(mutate.WEIGHT_OPERATORS)), 12, seed=5):"
            " print(mu)\n"
            "for mu in mutate.mutants(lambda s: mutate.gate_mutant(X, s, tuple(mutate.GATE_OPERATORS)), 12, seed=5):"
            " print(mu)\n")
    here = [str(mu) for mu in mutate.mutants(lambda s: mutate.weight_mutant(COMPILED.model, s, tuple(mutate.WEIGHT_OPERATORS)),
                                             12, seed=5)]
    here += [str(mu) for mu in mutate.mutants(lambda s: mutate.gate_mutant(X, s, tuple(mutate.GATE_OPERATORS)), 12, seed=5)]
    root = Path(__file__).resolve().parents[1]
    for hash_seed in ("1", "2"):
        env = {**__import__("os").environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root),
               "PYTHONIOENCODING": "utf-8"}  # mutants print symbols (an ASCII-only locale could not write them)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, encoding="utf-8", env=env, check=True).stdout
        assert out.splitlines() == here
    other = [str(mu) for mu in mutate.mutants(lambda s: mutate.weight_mutant(COMPILED.model, s), 12, seed=6)]
    assert other != here[:12]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: mutate.weight_mutant(COMPILED.model, 0, "inc"),
     r"weight_mutant: operators: expected a tuple of operator names among inc, .*, found the string 'inc' \(write \('inc',\)"),
    (lambda: mutate.gate_mutant(X, 0, "op"), r"gate_mutant: operators: .* found the string 'op'"),
    (lambda: mutate.certificate_mutant(COMPILED.certificate, X.num_nodes, 0, "drop"),
     r"certificate_mutant: operators: .* found the string 'drop'"),
    (lambda: mutate.weight_mutant(COMPILED.model, 0, None), r"weight_mutant: operators: expected a non-empty tuple .* found None"),
    (lambda: mutate.gate_mutant(X, 0, [["op"]]), r"gate_mutant: expected operators among op, .*found \[\['op'\]\]"),
    (lambda: mutate.weight_mutant(COMPILED.model, 0, ("inc", "bogus")), r"expected operators among .*found \['inc', 'bogus'\]"),
    (lambda: mutate.mutants(None, 2), r"mutants: make: expected a function of the seed returning a Mutation, found None"),
    (lambda: mutate.mutate_weight(COMPILED.model, mutate.weight_sites(COMPILED.model)[0], "bogus"),
     r"weight operator: expected one of inc, .*found 'bogus'"),
    (lambda: mutate.flip_mode(COMPILED.model, 99), r"flip_mode: the model has \d+ layers, found layer 99"),
    (lambda: mutate.weight_mutant(COMPILED.model, 0, ("sym",), symbol="1x"), r"parameter name must be an identifier"),
])
def test_mutate_refuses_bad_arguments(call, message):
    """A string of operators read as its characters ('i', 'n', 'c': "found ['i', 'n', 'c']"), ``None``
    and a nested list raised TypeError, and ``mutants(None, 2)`` TypeError: now SymverifyErrors naming
    the argument."""
    with pytest.raises(SymverifyError, match=message):
        call()


# ---- 4. strategies, drawn as a user draws them --------------------------------------------------------
@settings(max_examples=60, database=None, derandomize=True, deadline=None)
@given(circuits(max_n=2, max_d=3, max_gates=5, min_outputs=5), circuits(max_n=1, max_d=2, max_gates=4, linear=True),
       circuits(max_n=2, max_d=1, max_gates=4, allow_const=False, allow_sym=True))
def test_drawn_circuits_are_valid_and_within_their_sizes(c, lin, sym_c):
    for x, (mn, md, mg) in ((c, (2, 3, 5)), (lin, (1, 2, 4)), (sym_c, (2, 1, 4))):
        assert 1 <= x.n <= mn and 1 <= x.d <= md and len(x.gates) <= mg and len(x.outputs) <= x.n * x.d
        again = Circuit(x.n, x.d, x.gates, x.outputs, x.name)  # the constructor validates again
        assert again == x
    assert len(c.outputs) >= min(5, c.n * c.d)
    assert all(g.op is Op.LIN for g in lin.gates) and not lin.params()
    assert all(g.op is not Op.CONST for g in sym_c.gates)
    assert not c.params()  # allow_sym defaults to False


@settings(max_examples=40, database=None, derandomize=True, deadline=None)
@given(models(max_n=2, max_d=2, max_layers=3, pad=2, modes=("cyclic",)), models(max_layers=0))
def test_drawn_models_are_valid_and_within_their_sizes(m, empty):
    assert 1 <= m.n <= 2 and 1 <= m.d <= 2 and len(m.layers) <= 3
    assert m.n <= m.inner_n <= m.n + 2 and m.d <= m.inner_d <= m.d + 2
    assert all(ly.mode is Mode.CYCLIC for ly in m.layers)
    layers = tuple(Layer(ly.W, ly.b1, ly.h, ly.b2, ly.mode) for ly in m.layers)
    assert Model(m.n, m.d, m.inner_n, m.inner_d, layers, m.name) == m
    assert empty.layers == ()


@pytest.mark.parametrize(("make", "message"), [
    (lambda: models(max_n=0), r"models\(max_n\): expected an int ≥ 1, found 0"),
    (lambda: models(max_d="2"), r"models\(max_d\): expected an int ≥ 1, found '2'"),
    (lambda: models(modes=(["causal"],)), r"models\(modes\): expected modes among 'causal', 'cyclic'"),
    (lambda: models(modes=Mode.CAUSAL), r"models\(modes\): expected a non-empty tuple of modes"),
    (lambda: circuits(max_gates=1.0), r"circuits\(max_gates\): expected an int ≥ 0, found 1.0"),
    (lambda: circuits(min_outputs=-1), r"circuits\(min_outputs\): expected an int ≥ 0, found -1"),
    (lambda: circuits(max_n=2, max_d=2, min_outputs=5), r"at most max_n·max_d = 4 outputs fit, found 5"),
    (lambda: circuits(allow_sym=1), r"circuits\(allow_sym\): expected True or False, found 1"),
])
def test_strategies_refuse_bad_parameters(make, message):
    with pytest.raises(UsageError, match=message):
        make()
