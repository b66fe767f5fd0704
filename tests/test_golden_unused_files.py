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


PLATFORM_TESTS = """
import os
import pytest

HERE = os.environ.get("PLATFORM", "linux")

if HERE == "win":
    def test_win_only(symverify_golden):
        symverify_golden.check({"w": 1})

@pytest.mark.parametrize("backend", ["py"] + (["win"] if HERE == "win" else []))
def test_backend(backend, symverify_golden):
    symverify_golden.check({"b": backend})

@pytest.mark.skipif(HERE != "win", reason="Windows only")
def test_skipped(symverify_golden):
    symverify_golden.check({"s": 1})

def test_fewer(symverify_golden):
    symverify_golden.check({"a": 1})
    if HERE == "win":
        symverify_golden.check({"a": 2}, "more")
"""


def test_files_no_collected_test_claims_are_kept(pytester, monkeypatch):
    """``--symverify-update`` removed every file of a fully collected module that no collected test
    claimed: those of a test defined, or a parameter generated, only on another platform. Only a file
    of a collected test that passed without writing it is removed; the others are listed as kept."""
    pytester.makepyfile(test_user=PLATFORM_TESTS)
    monkeypatch.setenv("PLATFORM", "win")
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update").assert_outcomes(passed=5)
    d = pytester.path / "golden" / "test_user"
    files = sorted(p.name for p in d.iterdir())
    assert len(files) == 6
    monkeypatch.setenv("PLATFORM", "linux")
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(passed=2, skipped=1)
    res.stdout.fnmatch_lines(["1 unused, 2 kept", "  unused: golden/test_user/test_fewer-*-more.json",
                              "  kept: golden/test_user/test_backend_win-*.json",
                              "  kept: golden/test_user/test_win_only-*.json", "*--symverify-update removes the unused*",
                              "*kept: no test collected in this run claims these files*"])
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.stdout.fnmatch_lines(["1 removed, 2 kept", "  removed: golden/test_user/test_fewer-*-more.json"])
    assert sorted(p.name for p in d.iterdir()) == [f for f in files if not f.endswith("-more.json")]
    for args in (("-k", "test_fewer"), ("test_user.py::test_backend",)):  # a run of a part lists nothing as kept
        res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update", *args)
        assert "symverify golden files" not in res.stdout.str()
    assert len(list(d.iterdir())) == 5


PREFIX_TESTS = """
import os
import pytest

HERE = os.environ.get("PLATFORM", "linux")

@pytest.mark.parametrize("b", ["py"] + (["py-fast"] if HERE == "win" else []))
def test_b(b, symverify_golden):
    symverify_golden.check({"b": b})

class TestA:
    def test_x(self, symverify_golden):
        symverify_golden.check({"x": 1})

if HERE == "win":
    def test_x(symverify_golden):
        symverify_golden.check({"x": 2})
"""


def test_files_of_tests_whose_name_extends_a_collected_test_s_legacy_name_are_kept(pytester, monkeypatch):
    """A file was read as a collected test's by its legacy name (the test name, ``test_b_py``) as a
    prefix: ``test_b_py-fast-<hash>.json`` of ``test_b[py-fast]``, a parameter of another platform,
    was called unused and removed, as was a module-level ``test_x``'s file under ``TestA::test_x``."""
    pytester.makepyfile(test_user=PREFIX_TESTS)
    monkeypatch.setenv("PLATFORM", "win")
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update").assert_outcomes(passed=4)
    d = pytester.path / "golden" / "test_user"
    files = sorted(p.name for p in d.iterdir())
    assert len(files) == 4
    monkeypatch.setenv("PLATFORM", "linux")
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.assert_outcomes(passed=2)
    res.stdout.fnmatch_lines(["2 kept", "  kept: golden/test_user/test_b_py-fast-*.json",
                              "  kept: golden/test_user/test_x-*.json"])
    assert sorted(p.name for p in d.iterdir()) == files
    (d / "test_b_py-2.json").write_text("{}\n")  # a legacy file of test_b[py]'s: still unused
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.stdout.fnmatch_lines(["1 unused, 2 kept", "  unused: golden/test_user/test_b_py-2.json"])
