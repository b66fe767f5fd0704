"""Golden files the terminal summary calls unused, and ``--symverify-update`` removes, are those of
tests that passed without reading them: never those of a test with a failed subtest or teardown
(symverify.pytest_plugin, "The session")."""

from __future__ import annotations

import pytest

from symverify.testing import golden_text

pytest_plugins = ["pytester"]
golden_text({"loaded": 1})  # the in-process pytest runs below forget the modules they import: load them here


SUBTESTS = """
import os
import pytest

def test_s(subtests, symverify_golden):
    with subtests.test("one"):
        symverify_golden.check({"a": 1}, "one")
    with subtests.test("two"):
        assert not os.environ.get("BREAK")
        symverify_golden.check({"b": 1}, "two")

@pytest.fixture
def breaks_in_teardown():
    yield
    assert not os.environ.get("BREAK")

def test_t(breaks_in_teardown, symverify_golden):
    if not os.environ.get("BREAK"):
        symverify_golden.check({"c": 1})
"""


@pytest.mark.skipif(not hasattr(pytest, "Subtests"), reason="pytest's subtests came with pytest 9")
def test_files_of_a_test_with_a_failed_subtest_or_teardown_are_kept(pytester, monkeypatch):
    """A passing subtest reports the test's call as passed: a test whose other subtest failed before
    its check counted as passed, so its unread file was listed as unused and removed by
    ``--symverify-update``; so was that of a test whose call passed and whose teardown failed."""
    pytester.makepyfile(test_user=SUBTESTS)
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update").assert_outcomes(passed=2)
    d = pytester.path / "golden" / "test_user"
    files = sorted(p.name for p in d.iterdir())
    assert len(files) == 3
    monkeypatch.setenv("BREAK", "1")
    for args in ((), ("--symverify-update",)):
        res = pytester.runpytest("-p", "no:cacheprovider", *args)
        assert "unused" not in res.stdout.str() and "removed" not in res.stdout.str()
        assert sorted(p.name for p in d.iterdir()) == files
