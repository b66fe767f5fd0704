"""Attacks on the tools users run their checks with: the pytest plugin's golden files, the
mutation operators of ``symverify.mutate`` and the HTML views of ``symverify.viz``. A golden file
never keeps an unsettled verdict, a mutant is never a change that cannot alter what the object
computes, and a page never shows a claim as another kind than it is."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.testing import golden_text

pytest_plugins = ["pytester"]

_X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
_Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0] ** 3], n=1, d=2)
golden_text(sv.verify(_X, _X, method="exact"))  # the in-process pytester runs forget what they import


# ---- golden files ---------------------------------------------------------------------------------

_BARE_VERDICT = '''
import symverify as sv

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0] ** 3], n=1, d=2)

def test_verdict(symverify_golden):
    symverify_golden.check({"verdict": sv.verify(X, Y, method="z3", timeout=1e-9).verdict})
'''


def test_a_bare_unknown_verdict_is_neither_written_nor_matched(pytester: pytest.Pytester) -> None:
    """``check({"verdict": report.verdict})`` of an unknown report wrote ``"unknown"`` with
    ``--symverify-update``, and every later run whose check ran out of time again passed: a golden
    file kept a verdict that depends on the time the check had, as it refuses to keep the report."""
    pytester.makepyfile(test_user=_BARE_VERDICT)
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*'verdict': a verdict is unknown*neither compared nor written*"])
    assert not (pytester.path / "golden").exists()
    stored = pytester.path / "golden" / "test_user"
    stored.mkdir(parents=True)
    from symverify.pytest_plugin import golden_stem

    (stored / f"{golden_stem('test_user.py::test_verdict')}.json").write_text('{\n  "verdict": "unknown"\n}\n')
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
