"""Golden files with snapshot-tool semantics: injective names, several checks per test, a terminal summary of what
was written, failed and unused, removal of unused files on update, legacy names; identical proof runs give
byte-identical JSON."""

from __future__ import annotations

import json

import symverify as sv
from symverify.cli import main
from symverify.pytest_plugin import golden_stem
from symverify.testing import golden_text

pytest_plugins = ["pytester"]

# The in-process runs below forget the modules they import; load the heavy ones (numpy cannot load twice) here.
_X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
golden_text(sv.verify(_X, _X, method="exact"))

HEADER = '''
import pytest
import symverify as sv

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
R = sv.verify(X, X, method="exact")
'''


def _files(pytester):
    d = pytester.path / "golden" / "test_user"
    return sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []


def _run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_stems_are_injective_and_independent_of_the_rootdir():
    ids = ["t.py::test_x[a b]", "t.py::test_x[a_b]", "t.py::test_x[a-b]", "t.py::test_x[é]", "t.py::test_x[e]",
           "t.py::TestA::test_x", "t.py::TestB::test_x", "t.py::test_x"]
    stems = [golden_stem(i) for i in ids]
    assert len(set(stems)) == len(ids)
    assert golden_stem("a/b/t.py::test_x[a b]") == golden_stem("t.py::test_x[a b]")
    assert all(s.isascii() and "/" not in s and " " not in s for s in stems)
    assert golden_stem("t.py::TestA::test_x").startswith("TestA.test_x-")


def test_parametrized_ids_and_classes_get_distinct_files(pytester):
    pytester.makepyfile(test_user=HEADER + '''
@pytest.mark.parametrize("p", ["a b", "a_b", "é", "e"])
def test_p(symverify_golden, p):
    symverify_golden.check({"p": p})


class TestA:
    def test_x(self, symverify_golden):
        symverify_golden.check({"cls": "A"})


class TestB:
    def test_x(self, symverify_golden):
        symverify_golden.check({"cls": "B"})
''')
    _run(pytester, "--symverify-update").assert_outcomes(passed=6)
    assert len(_files(pytester)) == 6
    _run(pytester).assert_outcomes(passed=6)


def test_several_checks_are_numbered_and_a_shared_key_is_refused(pytester):
    pytester.makepyfile(test_user=HEADER + '''
def test_two(symverify_golden):
    symverify_golden.check({"first": 1})
    symverify_golden.check({"second": 2})


def test_same_key(symverify_golden):
    symverify_golden.check({"a": 1}, "k")
    symverify_golden.check({"a": 2}, "k")


def test_key_names_an_index(symverify_golden):
    symverify_golden.check({"a": 1})
    symverify_golden.check({"a": 2}, "2")
    symverify_golden.check({"a": 3})
''')
    res = _run(pytester, "--symverify-update")
    res.assert_outcomes(passed=1, failed=2)
    res.stdout.fnmatch_lines(["*key 'k' and key 'k' of this test would share the golden file*",
                              "*unnamed check 2 and key '2' of this test would share*"])
    stem = golden_stem("test_user.py::test_two")
    files = _files(pytester)
    assert f"{stem}.json" in files and f"{stem}-2.json" in files
    first = json.loads((pytester.path / "golden" / "test_user" / f"{stem}.json").read_text(encoding="utf-8"))
    assert first == {"first": 1}
    _run(pytester, "-k", "test_two").assert_outcomes(passed=1)


def test_summary_lists_written_failed_and_unused_and_update_removes_unused(pytester):
    pytester.makepyfile(test_user=HEADER + '''
def test_a(symverify_golden):
    symverify_golden.check(R)


def test_b(symverify_golden):
    symverify_golden.check({"b": 1})
    symverify_golden.check({"extra": 1}, "extra")
''')
    res = _run(pytester, "--symverify-update")
    res.stdout.fnmatch_lines(["*symverify golden files*", "3 written", "  written: golden/test_user/test_a-*.json",
                              "  written: golden/test_user/test_b-*.json", "  written: golden/test_user/test_b-*-extra.json"])
    # a second run writes nothing and reports nothing
    res = _run(pytester, "--symverify-update")
    assert "symverify golden files" not in res.stdout.str()
    # test_b now checks something else (fails) and no longer its extra record; test_a is gone: no
    # collected test claims its file, which is kept (its test may be defined on another platform only)
    pytester.makepyfile(test_user=HEADER + '''
def test_b(symverify_golden):
    symverify_golden.check({"b": 2})
''')
    res = _run(pytester)
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*1 failed, 1 kept*", "  failed: golden/test_user/test_b-*.json",
                              "  kept: golden/test_user/test_a-*.json"])
    assert len(_files(pytester)) == 3
    res = _run(pytester, "--symverify-update")  # the extra record of test_b, which passed, is unused now
    res.stdout.fnmatch_lines(["*1 updated, 1 removed, 1 kept*", "  removed: golden/test_user/test_b-*-extra.json"])
    assert _files(pytester) == sorted([f"{golden_stem('test_user.py::test_a')}.json", f"{golden_stem('test_user.py::test_b')}.json"])
    _run(pytester).assert_outcomes(passed=1)


def test_files_of_deselected_skipped_or_failing_tests_are_kept(pytester):
    pytester.makepyfile(test_user=HEADER + '''
import os

def test_a(symverify_golden):
    symverify_golden.check({"a": 1})


def test_b(symverify_golden):
    symverify_golden.check({"b": 1})
    if os.environ.get("BREAK_B"):
        raise AssertionError("broken after the check")
''')
    _run(pytester, "--symverify-update").assert_outcomes(passed=2)
    _run(pytester, "--symverify-update", "-k", "test_a").assert_outcomes(passed=1)
    _run(pytester, "--symverify-update", "test_user.py::test_a").assert_outcomes(passed=1)
    assert len(_files(pytester)) == 2
    # a check that stops before its second record keeps the second file when the test fails
    pytester.makepyfile(test_user=HEADER + '''
def test_a(symverify_golden):
    symverify_golden.check({"a": 1})


def test_b(symverify_golden):
    raise AssertionError("fails before checking")
''')
    _run(pytester, "--symverify-update").assert_outcomes(passed=1, failed=1)
    assert len(_files(pytester)) == 2


def test_legacy_names_are_read_and_renamed_on_update(pytester):
    pytester.makepyfile(test_user=HEADER + '''
def test_old(symverify_golden):
    symverify_golden.check({"old": 1})
    symverify_golden.check({"old": 2}, "k")
''')
    d = pytester.path / "golden" / "test_user"
    d.mkdir(parents=True)
    (d / "test_old.json").write_text('{\n  "old": 1\n}\n', encoding="utf-8")
    (d / "test_old-k.json").write_text('{\n  "old": 2\n}\n', encoding="utf-8")
    _run(pytester).assert_outcomes(passed=1)
    res = _run(pytester, "--symverify-update")
    res.stdout.fnmatch_lines(["*2 written, 2 removed*"])
    stem = golden_stem("test_user.py::test_old")
    assert _files(pytester) == sorted([f"{stem}.json", f"{stem}-k.json"])


def test_two_identical_proof_runs_give_byte_identical_json(tmp_path, capsys):
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for p in paths:
        assert main(["prove", "--quick", "-j", "1", "cor_h22_retnet", "primitives", "--json", str(p)]) == 0
    capsys.readouterr()
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert "PROVED by compositional" in paths[0].read_text(encoding="utf-8")  # the details are there, without times
