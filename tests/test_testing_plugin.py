"""Users' CI: assert_proved / assert_refuted, golden records and the pytest plugin."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import UsageError
from symverify.pytest_plugin import golden_stem
from symverify.testing import assert_proved, assert_refuted, golden_record, golden_text

pytest_plugins = ["pytester"]

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2)


def test_assert_proved_returns_the_report():
    r = assert_proved(X, sv.compile(X).model)
    assert r.proved


def test_assert_proved_on_a_refuted_pair_shows_the_counterexample():
    with pytest.raises(AssertionError, match=r"(?s)verdict: refuted.*counterexample: u = \[.*\]: entry \(0, 0\) is .* \(lhs\) vs .* \(rhs\)"):
        assert_proved(X, Y)


def test_assert_proved_on_an_unknown_pair_says_unknown():
    with pytest.raises(AssertionError, match="verdict: unknown"):
        assert_proved(X, Y, method="z3", timeout=1e-9)


def test_assert_refuted_passes_on_a_refutation_and_fails_on_a_proof():
    assert assert_refuted(X, Y).counterexample is not None
    with pytest.raises(AssertionError, match=r"(?s)expected refuted.*verdict: proved"):
        assert_refuted(X, X, method="randomized")


def test_golden_record_is_stable_and_leaves_out_timings():
    r = sv.verify(X, sv.compile(X).model, method="randomized")
    rec = golden_record(r)
    assert rec["verdict"] == "proved" and rec["method"] == "randomized"
    assert "timings" not in json.dumps(rec) and "failure_bound" in rec
    again = sv.verify(X, sv.compile(X).model, method="randomized")
    assert golden_text(again) == golden_text(r)


def test_golden_record_writes_rationals_as_exact_strings():
    rec = golden_record({"ratio": Fraction(4, 5), "whole": Fraction(3), "count": 3, "t": 0.1234567891})
    assert rec == {"count": 3, "ratio": "4/5", "t": 0.123457, "whole": "3"}


def test_golden_record_refuses_other_objects():
    with pytest.raises(UsageError, match=r"expected a Report, Compiled, Instance, ProofResult, mapping or pandas DataFrame or Series, found int$"):
        golden_record(3)
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    with pytest.raises(UsageError, match=r"found Circuit; keep what verify or compile says about the circuit"):
        golden_record(c)


_USER_TEST = '''
import symverify as sv
from symverify.errors import UsageError
from symverify.testing import assert_proved

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)

def test_identity(symverify_golden):
    symverify_golden.check(assert_proved(X, sv.compile(X).model, method="exact"))
'''


def test_plugin_writes_then_checks_golden_files(pytester):
    pytester.makepyfile(test_user=_USER_TEST)
    missing = pytester.runpytest("-p", "no:cacheprovider")
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*no golden file*--symverify-update*"])
    pytester.runpytest("--symverify-update").assert_outcomes(passed=1)
    stored = pytester.path / "golden" / "test_user" / f"{golden_stem('test_user.py::test_identity')}.json"
    assert json.loads(stored.read_text(encoding="utf-8"))["verdict"] == "proved"
    pytester.runpytest().assert_outcomes(passed=1)


def test_plugin_fails_with_a_diff_when_the_result_changes(pytester):
    pytester.makepyfile(test_user=_USER_TEST)
    pytester.runpytest("--symverify-update").assert_outcomes(passed=1)
    stored = pytester.path / "golden" / "test_user" / f"{golden_stem('test_user.py::test_identity')}.json"
    stored.write_text(stored.read_text(encoding="utf-8").replace('"method": "exact"', '"method": "z3"'), encoding="utf-8")
    res = pytester.runpytest()
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*golden mismatch*", '*-  "method": "z3",*', '*+  "method": "exact",*'])


def test_the_example_ci_project_passes():
    """examples/ci is what README tells users to copy: its golden files must match this tree."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(root / "examples" / "ci")],
                         capture_output=True, text=True, cwd=root)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "3 passed" in res.stdout


def test_a_report_has_no_truth_value():
    r = sv.verify(X, Y)
    assert r.refuted
    with pytest.raises(TypeError, match=r"truth value of a Report is ambiguous \(this one is refuted\); use report.proved"):
        assert r
    with pytest.raises(TypeError, match="assert_proved"):
        bool(sv.verify(X, X))
