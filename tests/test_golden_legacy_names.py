"""The legacy golden file name (``<test name>.json``, no class in it) is read only when one test of the
module can own it: tests that request ``symverify_golden`` at run time (``request.getfixturevalue``,
directly or through a fixture) and tests of nested classes count as sharing the name
(symverify.pytest_plugin, "Golden files written by earlier versions")."""

from __future__ import annotations

import pytest

from symverify.pytest_plugin import golden_stem
from symverify.testing import golden_text

pytest_plugins = ["pytester"]
golden_text({"loaded": 1})  # the in-process pytest runs below forget the modules they import: load them here

DYNAMIC = """
import pytest

@pytest.fixture
def golden(request):
    return request.getfixturevalue("symverify_golden")

class TestA:
    def test_x(self, request):
        request.getfixturevalue("symverify_golden").check({"a": 1})

class TestB:
    def test_x(self, request):
        request.getfixturevalue("symverify_golden").check({"a": 1})

class TestC:
    def test_y(self, golden):
        golden.check({"a": 1})

class TestD:
    def test_y(self, golden):
        golden.check({"a": 1})
"""

NESTED = """
class TestOuter:
    class TestA:
        def test_x(self, symverify_golden):
            symverify_golden.check({"a": 1})

    class TestB:
        class TestDeep:
            def test_x(self, symverify_golden):
                symverify_golden.check({"a": 1})
"""


def _legacy(pytester, name: str) -> None:
    d = pytester.path / "golden" / "test_user"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.json").write_text('{\n  "a": 1\n}\n', encoding="utf-8")


@pytest.mark.parametrize("args", [(), ("-k", "TestA or TestC"), ("test_user.py::TestA", "test_user.py::TestC")])
def test_tests_requesting_the_fixture_at_run_time_share_the_legacy_name(pytester, args):
    """TestA::test_x and TestB::test_x (``request.getfixturevalue``), TestC::test_y and TestD::test_y
    (through a fixture that does): the old ``test_x.json`` was read by each, whichever it belonged to."""
    pytester.makepyfile(test_user=DYNAMIC)
    _legacy(pytester, "test_x")
    _legacy(pytester, "test_y")
    res = pytester.runpytest("-p", "no:cacheprovider", *args)
    res.assert_outcomes(failed=4 if not args else 2, deselected=2 if args and args[0] == "-k" else 0)
    a, c = golden_stem("test_user.py::TestA::test_x"), golden_stem("test_user.py::TestC::test_y")
    res.stdout.fnmatch_lines([f"*test_x.json of an earlier version*may belong to any of 2 tests of this module "
                              f"(TestA::test_x → {a}.json; TestB::test_x → *", "*rename it*"])
    res.stdout.fnmatch_lines([f"*test_y.json of an earlier version*may belong to any of 2 tests of this module "
                              f"(TestC::test_y → {c}.json; TestD::test_y → *"])


@pytest.mark.parametrize("args", [(), ("test_user.py::TestOuter::TestA",)])
def test_tests_of_nested_classes_share_the_legacy_name(pytester, args):
    """``TestOuter::TestA::test_x`` and ``TestOuter::TestB::TestDeep::test_x`` share ``test_x.json``:
    the module's nested classes were not looked into when the other one was not collected."""
    pytester.makepyfile(test_user=NESTED)
    _legacy(pytester, "test_x")
    res = pytester.runpytest("-p", "no:cacheprovider", *args)
    res.assert_outcomes(failed=2 if not args else 1)
    res.stdout.fnmatch_lines(["*may belong to any of 2 tests of this module (TestOuter::TestA::test_x → *; "
                              "TestOuter::TestB::TestDeep::test_x → *"])


def test_a_namesake_that_cannot_request_the_fixture_leaves_the_legacy_name_to_the_other(pytester):
    """A same-named test with no fixture that could request ``symverify_golden`` (no ``request`` in
    its fixture closure) owns no golden file: the old file is still read by the one test that can."""
    pytester.makepyfile(test_user="""
import pytest

class TestA:
    def test_x(self, request):
        request.getfixturevalue("symverify_golden").check({"a": 1})

class TestB:
    class TestInner:
        def test_x(self, tmp_path):
            pass
""")
    _legacy(pytester, "test_x")
    for args in ((), ("test_user.py::TestA",)):
        pytester.runpytest("-p", "no:cacheprovider", *args).assert_outcomes(passed=2 if not args else 1)
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.assert_outcomes(passed=2)
    d = pytester.path / "golden" / "test_user"
    assert sorted(p.name for p in d.iterdir()) == [f"{golden_stem('test_user.py::TestA::test_x')}.json"]


def test_a_namesake_using_a_fixture_of_its_own_class_shares_the_legacy_name(pytester):
    """TestB's fixture is defined in TestB, so it does not resolve from TestA's node: it may request
    ``symverify_golden``, and the name counts as shared when only TestA runs; a parametrized
    namesake without fixtures does not."""
    pytester.makepyfile(test_user="""
import pytest

class TestA:
    def test_x(self, symverify_golden):
        symverify_golden.check({"a": 1})

class TestB:
    @pytest.fixture
    def golden(self, request):
        return request.getfixturevalue("symverify_golden")

    def test_x(self, golden):
        golden.check({"a": 1})

class TestC:
    @pytest.mark.parametrize("p", [1])
    def test_y(self, p):
        pass

def test_y(symverify_golden):
    symverify_golden.check({"a": 1})
""")
    _legacy(pytester, "test_x")
    _legacy(pytester, "test_y")
    for args in ((), ("test_user.py::TestA", "test_user.py::test_y")):
        res = pytester.runpytest("-p", "no:cacheprovider", *args)
        res.assert_outcomes(failed=1 if args else 2, passed=1 if args else 2)
        res.stdout.fnmatch_lines(["*may belong to any of 2 tests of this module (TestA::test_x → *; TestB::test_x → *"])



@pytest.mark.parametrize("args", [(), ("test_user.py::test_Case",)])
def test_names_that_differ_in_case_only_share_the_legacy_name(pytester, args):
    """``test_case.json`` and ``test_Case.json`` are one file on macOS and Windows: each test read
    the other's old file there."""
    pytester.makepyfile(test_user="""
def test_case(symverify_golden):
    symverify_golden.check({"a": 1})

def test_Case(symverify_golden):
    symverify_golden.check({"a": 1})
""")
    _legacy(pytester, "test_Case")
    res = pytester.runpytest("-p", "no:cacheprovider", *args)
    res.assert_outcomes(failed=1 if args else 2)
    res.stdout.fnmatch_lines(["*test_Case.json of an earlier version*may belong to any of 2 tests of this module*"])
