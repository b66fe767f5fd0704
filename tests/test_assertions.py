"""Failures in users' tests read like hypothesis's "Falsifying example": the verdict and the counterexample on
the first line, ``lhs − rhs`` for small sides, short reprs, no frames of symverify.testing; short reprs and
``_repr_html_`` of circuits and certificates."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.library import random_circuit
from symverify.testing import assert_proved, assert_refuted

pytest_plugins = ["pytester"]

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][1] * u[0][1]], n=1, d=2)


def test_first_line_has_the_verdict_and_the_counterexample():
    with pytest.raises(AssertionError) as e:
        assert_proved(X, Y, method="exact")
    first, second = str(e.value).splitlines()[:2]
    assert first.startswith("expected proved, found refuted (method exact): counterexample u = ")
    assert "entry (0, 0) is" in first and "(lhs) vs" in first
    assert second == "lhs − rhs: (0, 0): -x1^2 (inputs x_(i·d+j) = u[i, j])"


def test_unknown_and_refutation_expected_headlines():
    with pytest.raises(AssertionError, match=r"^expected proved, found unknown \(method z3\)"):
        assert_proved(X, Y, method="z3", timeout=1e-9)
    with pytest.raises(AssertionError, match=r"^expected refuted, found proved \(method randomized\)"):
        assert_refuted(X, X, method="randomized")


def test_large_sides_give_no_difference_and_short_reprs():
    big = random_circuit(8, 8, 300, 6, seed=1)
    other = random_circuit(8, 8, 300, 6, seed=2)
    with pytest.raises(AssertionError) as e:
        assert_proved(big, other)
    text = str(e.value)
    assert "lhs − rhs" not in text or len(text) < 4000
    assert len(text) < 4000 and "Gate(" not in text


def test_circuit_and_certificate_reprs_are_short_and_closed():
    big = sv.Circuit.trace(lambda u: [sum((u[0][0] * u[0][1] for _ in range(2000)), start=u[0][0])], n=1, d=2)
    assert len(big.gates) >= 2000 and len(repr(big)) < 200
    assert repr(X) == "Circuit('<lambda>', n=1, d=2, gates=1 (mul 1), outputs=(2,))"
    html = X._repr_html_()
    assert html.startswith("<table") and "mul 1" in html
    named = sv.Circuit(X.n, X.d, X.gates, X.outputs, "q" * 100)
    r = repr(named)
    assert r.count("'") == 2 and "…'" in r
    cert = sv.compile(Y).certificate
    from dataclasses import replace

    from symverify.kernel.ir.certificate import Boundary

    long = replace(cert, boundaries=(replace(cert.boundaries[0], label="x" * 80), *cert.boundaries[1:]))
    assert isinstance(long.boundaries[0], Boundary)
    text = repr(long)
    assert text.count("'") % 2 == 0 and "…'" in text
    assert "<table" in cert._repr_html_() and "input" in cert._repr_html_()
    model = sv.compile(Y, name="m" * 100).model
    assert repr(model).startswith("Model('mmm") and "…', N=1" in repr(model)


USER_TEST = '''
import symverify as sv
from symverify.testing import assert_proved

BIG = sv.Circuit.trace(lambda u: [sum((u[0][0] * u[0][1] for _ in range(2000)), start=u[0][0])], n=1, d=2)
WRONG = sv.Circuit.trace(lambda u: [sum((u[0][0] * u[0][1] for _ in range(2001)), start=u[0][0])], n=1, d=2)


def test_big_sides():
    assert_proved(BIG, WRONG)
'''


def test_pytest_output_is_short_and_starts_with_the_verdict(pytester):
    pytester.makepyfile(test_user=USER_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-rf")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "symverify/testing.py" not in out
    assert len(out) < 20_000
    result.stdout.fnmatch_lines(["E       AssertionError: expected proved, found refuted (method *): counterexample u = *",
                                 "FAILED test_user.py::test_big_sides - AssertionError: expected proved, found*"])
