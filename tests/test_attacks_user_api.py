"""Attacks on what users put in their own CI: the golden files of the pytest plugin (unsettled
results, alone or inside a mapping; a FIFO, a huge file, a byte order mark or CRLF, a key too long
for a file name, keys that differ only in case, a file where the golden directory should be;
reports, arrays, numpy scalars and addresses inside a record; unused files that are directories or
cannot be removed, and tests named through ``--pyargs`` or dropped by a conftest), the hypothesis
strategies' promises (sizes, ranges, flags) and mutation campaigns (fewer mutants than asked for,
an operator not asked for, a zero cell from a precomputed list of nonzero ones).

tests/test_attacks_testing.py holds the earlier attacks on the same modules.
"""

from __future__ import annotations

import os
from fractions import Fraction

import pytest
from hypothesis import given, settings

import symverify as sv
from symverify import mutate
from symverify.errors import UsageError
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Op
from symverify.kernel.ir.scalar import is_zero
from symverify.pytest_plugin import GoldenFile, golden_stem
from symverify.scripts.protocol import Instance, ProofResult
from symverify.strategies import circuits, models, rational_inputs
from symverify.testing import assert_refuted, golden_record, golden_text

Failed = pytest.fail.Exception

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2)
PAIR = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
COMPILED = sv.compile(PAIR)

pytest_plugins = ["pytester"]

# The in-process pytester runs forget the modules they import; load the heavy ones here.
golden_text(sv.verify(X, X, method="exact"))


# ---- golden files: only settled results are kept ------------------------------------------------
def test_an_unknown_report_is_neither_written_nor_matched(tmp_path):
    """An unknown verdict (z3 out of time) was written by --symverify-update and matched on every
    later run, so the test passed although nothing was ever proved."""
    unknown = sv.verify(X, X, method="z3", timeout=1e-9)
    assert not unknown.proved and not unknown.refuted
    with pytest.raises(Failed, match=r"symverify_golden.check: verify's verdict is unknown \(method z3: .*\); "
                                     r"give it more time.*keeps settled results only \(t.json is neither compared nor written\)"):
        GoldenFile(tmp_path, "t", True).check(unknown)
    assert not (tmp_path / "t.json").exists()
    (tmp_path / "t.json").write_text(golden_text(unknown), encoding="utf-8")  # a record of it left by an older version
    with pytest.raises(Failed, match=r"verify's verdict is unknown"):
        GoldenFile(tmp_path, "t", False).check(unknown)


def test_a_refutation_is_still_kept_as_a_regression(tmp_path):
    """A refuted report is settled (a re-checked counterexample): it is stored and compared."""
    report = assert_refuted(X, Y)
    GoldenFile(tmp_path, "t", True).check(report)
    GoldenFile(tmp_path, "t", False).check(report)
    assert '"counterexample": "re-checked"' in (tmp_path / "t.json").read_text(encoding="utf-8")


def test_proof_instances_and_results_that_are_not_ok_are_refused(tmp_path):
    """A refuted instance, one over its bound and a result holding one were stored and then matched."""
    good = Instance.computed("good", True, "rank over Q", "exact", resources={"layers": 3}, bounds={"layers": 4})
    refuted = Instance.computed("bad", False, "rank over Q", "exact")
    over = Instance.computed("big", True, "rank over Q", "exact", resources={"layers": 5}, bounds={"layers": 4})
    argued = Instance.argued("lemma", "docs/theory.md § 5", checks=True)
    GoldenFile(tmp_path, "good", True).check(good)
    GoldenFile(tmp_path, "argued", True).check(argued)  # an argued claim is ok with its verdict unknown
    with pytest.raises(Failed, match=r"the instance 'bad' is not ok \(verdict refuted\)"):
        GoldenFile(tmp_path, "bad", True).check(refuted)
    with pytest.raises(Failed, match=r"the instance 'big' is not ok \(verdict proved, over its bound on layers\)"):
        GoldenFile(tmp_path, "big", True).check(over)
    result = ProofResult("p", "T")
    result.instances += [good, refuted]
    with pytest.raises(Failed, match=r"the result 'p' is not ok \(instances not ok: 'bad'\)"):
        GoldenFile(tmp_path, "p", True).check(result)
    with pytest.raises(Failed, match=r"the result 'empty' is not ok \(no instances\)"):
        GoldenFile(tmp_path, "empty", True).check(ProofResult("empty", "T"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["argued.json", "good.json"]


def test_reports_and_sets_inside_a_mapping_are_recorded_stably(tmp_path):
    """``check({"r": report})`` stored the report's text, with its time ("[0.055 s]") and the
    counterexample's seed-dependent input, and a set of strings in hash-seed order: the golden file
    differed from run to run. A nested report is recorded as golden_record records it."""
    runs = [sv.verify(X, Y, seed=None) for _ in range(3)]
    texts = {golden_text({"cases": [r], "tags": {"b", "a", "c"}}) for r in runs}
    assert len(texts) == 1
    rec = golden_record({"cases": [runs[0]], "tags": frozenset({"b", "a"}), "c": COMPILED})
    assert rec["cases"] == [golden_record(runs[0])] and rec["cases"][0]["counterexample"] == "re-checked"
    assert rec["tags"] == ["a", "b"] and rec["c"] == golden_record(COMPILED)
    assert " s]" not in texts.pop() and "u = " not in golden_text(rec)


def test_an_unknown_report_inside_a_mapping_is_refused(tmp_path):
    """The refusal of unsettled results held only for a bare report: ``check({"z3": unknown})`` stored it."""
    unknown = sv.verify(X, X, method="z3", timeout=1e-9)
    with pytest.raises(Failed, match=r"symverify_golden.check: 'z3': verify's verdict is unknown"):
        GoldenFile(tmp_path, "t", True).check({"exact": sv.verify(X, X, method="exact"), "z3": unknown})
    with pytest.raises(Failed, match=r"verify's verdict is unknown"):
        GoldenFile(tmp_path, "u", True).check({"all": [unknown]})
    assert not list(tmp_path.iterdir())


def test_a_long_array_is_recorded_whole():
    """A numpy array was recorded by str(), which elides all but its ends ('[0 1 2 ... 1997 1998 1999]'):
    a change in the middle left the golden file as it was, so the check passed on a changed result."""
    import numpy as np
    a = np.arange(2000)
    b = a.copy()
    b[1000] = -1
    assert golden_text({"v": a}) != golden_text({"v": b})
    assert golden_record({"v": a})["v"] == list(range(2000))


def test_numpy_scalars_are_recorded_as_numbers_and_bools():
    """np.int64(3) was stored as the string "3", np.bool_(True) as "True": a golden file's field
    changed type with the library that computed it."""
    import numpy as np
    rec = golden_record({"i": np.int64(3), "u": np.uint8(7), "b": np.bool_(True), "f": np.float32(0.5)})
    assert rec == {"i": 3, "u": 7, "b": True, "f": 0.5}
    assert golden_text({"i": np.int64(3)}) == golden_text({"i": 3})


@pytest.mark.parametrize("value", [{"a": "\udcff"}, {"\udcff": 1}])
def test_a_string_no_golden_file_can_hold_is_refused(tmp_path, value):
    """A lone surrogate (a file name decoded with surrogateescape) raised UnicodeEncodeError out of check."""
    with pytest.raises(UsageError, match=r"golden_record: the string '\\udcff' is no UTF-8 text \(character 0: surrogates not allowed\)"):
        GoldenFile(tmp_path, "t", True).check(value)
    assert not list(tmp_path.iterdir())


def test_values_whose_text_names_an_address_are_refused():
    """A generator or a function in a record was stored as '<generator object f at 0x7f…>': the
    golden file changed on every run (only objects with object's own repr were refused)."""
    def gen():
        yield 1

    for value in (gen(), gen, lambda: 1):
        with pytest.raises(UsageError, match=r"golden_record: expected values of the supported types .*found a (generator|function); its text may elide "
                                             r"values or name its address"):
            golden_record({"a": value})


# ---- golden files: what stands in the file's place ----------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("update", [False, True])
def test_a_fifo_in_the_golden_files_place_fails_instead_of_blocking(tmp_path, update):
    """read_text on a FIFO waited for a writer forever: the whole CI run hung."""
    os.mkfifo(tmp_path / "t.json")
    with pytest.raises(Failed, match=r"cannot read the golden file .*t\.json: expected a regular file, found a FIFO"):
        GoldenFile(tmp_path, "t", update).check({"a": 1})


def test_a_key_too_long_for_a_file_name_fails_naming_the_file(tmp_path):
    """Path.exists raised OSError (File name too long) out of check, with a traceback into pathlib."""
    with pytest.raises(Failed, match=r"cannot read the golden file .*t-kkkkkkkkkk.*\.json: "):
        GoldenFile(tmp_path, "t", False).check({"a": 1}, "k" * 400)


def test_a_huge_golden_file_is_a_mismatch_without_reading_it_whole(tmp_path):
    """The whole file was read and diffed, whatever its size; a file larger than any file of the
    record is a mismatch naming both sizes, and an update rewrites it."""
    path = tmp_path / "t.json"
    path.write_bytes(b" " * 100_000)
    record = golden_text({"a": 1}).encode("utf-8")
    with pytest.raises(Failed, match=rf"golden mismatch for .*t\.json: it holds 100000 bytes, this run's record {len(record)};"):
        GoldenFile(tmp_path, "t", False).check({"a": 1})
    GoldenFile(tmp_path, "t", True).check({"a": 1})
    assert path.read_bytes() == record


def test_a_byte_order_mark_and_crlf_read_as_the_record(tmp_path):
    """An editor's byte order mark made a mismatch whose diff showed no visible difference; CRLF
    (git's autocrlf) and the mark are read as LF text, while a real change still fails."""
    path = tmp_path / "t.json"
    text = golden_text({"a": 1})
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    GoldenFile(tmp_path, "t", False).check({"a": 1})
    with pytest.raises(Failed, match=r"golden mismatch(.|\n)*-  \"a\": 1(.|\n)*\+  \"a\": 2"):
        GoldenFile(tmp_path, "t", False).check({"a": 2})


def test_a_missing_final_newline_is_named(tmp_path):
    """The diff of a file without its final newline showed ``}+}``; the message says what differs."""
    (tmp_path / "t.json").write_text(golden_text({"a": 1}).rstrip("\n"), encoding="utf-8")
    with pytest.raises(Failed, match=r"\(the stored file lacks the final newline\)"):
        GoldenFile(tmp_path, "t", False).check({"a": 1})


def test_stems_of_ids_that_differ_in_case_or_collapsed_characters_differ():
    """Ids that the file-safe name maps to one name (case on case-insensitive disks, NUL, '/',
    '..', unicode, long parameters sharing 80 characters) get distinct, short, safe stems."""
    long = "x" * 300
    ids = ["t.py::test_p[A]", "t.py::test_p[a]", "t.py::test_p[\x00]", "t.py::test_p[/]", "t.py::test_p[..]",
           "t.py::test_p[../..]", "t.py::test_p[é]", "t.py::test_p[e]", f"t.py::test_p[{long}a]", f"t.py::test_p[{long}b]"]
    stems = [golden_stem(i) for i in ids]
    assert len({s.lower() for s in stems}) == len(ids)
    for s in stems:
        assert s.isascii() and len(s) <= 89 and "/" not in s and "\x00" not in s and not s.startswith(".")


# ---- hypothesis strategies: what the docstrings promise ------------------------------------------
@settings(max_examples=40, database=None, derandomize=True, deadline=None)
@given(circuits(max_n=3, max_d=2, max_gates=5, linear=True, min_outputs=2),
       circuits(max_n=2, max_d=3, max_gates=4, allow_const=False),
       models(max_n=2, max_d=3, max_layers=2, pad=2, modes=("cyclic",)),
       rational_inputs(2, 3))
def test_strategies_stay_within_their_arguments(lin, noconst, model, u):
    """Sizes within their maxima, min(min_outputs, n·d) outputs at least, outputs naming nodes;
    linear circuits without products or constants, allow_const=False without constants, symbolic
    coefficients only with allow_sym; models' inner sizes at most pad larger, only the modes asked
    for; inputs n×d small rationals (numerators in [−5, 5], denominators in [1, 3])."""
    assert 1 <= lin.n <= 3 and 1 <= lin.d <= 2 and len(lin.gates) <= 5
    assert min(2, lin.n * lin.d) <= len(lin.outputs) <= lin.n * lin.d
    assert all(g.op is Op.LIN for g in lin.gates)
    assert all(g.op is not Op.CONST for g in noconst.gates) and len(noconst.gates) <= 4
    for c in (lin, noconst):
        assert all(0 <= o < c.num_nodes for o in c.outputs)
        assert all(isinstance(x, (int, Fraction)) for g in c.gates for x in g.coeffs)
    assert 1 <= model.n <= 2 and 1 <= model.d <= 3 and len(model.layers) <= 2
    assert model.n <= model.inner_n <= model.n + 2 and model.d <= model.inner_d <= model.d + 2
    assert all(layer.mode.value == "cyclic" for layer in model.layers)
    assert len(u) == 2 and all(len(row) == 3 for row in u)
    assert all(isinstance(q, Fraction) and abs(q.numerator) <= 5 and q.denominator <= 3 for row in u for q in row)


# ---- mutation campaigns --------------------------------------------------------------------------
def test_a_campaign_with_fewer_mutants_than_asked_for_says_so():
    """``mutants(make, 100)`` with most seeds refused returned 84 mutants without a word, so a
    campaign reported on fewer mutants than it claimed."""
    def sparse(s: int) -> mutate.Mutation:
        if s % 5:
            raise UsageError("refused")
        return mutate.weight_mutant(COMPILED.model, s)

    with pytest.raises(UsageError, match=r"mutants: seeds 0 to 415 gave 77 distinct mutants of the 100 asked for "
                                         r"\(7 seeds repeated an earlier mutant; the last refusal said: refused\)"):
        mutate.mutants(sparse, 100)
    assert len(mutate.mutants(sparse, 10)) == 10


def test_a_campaign_refuses_what_is_no_mutation():
    """A maker returning the mutated model itself (mutate_weight instead of weight_mutant) was
    collected as a mutant."""
    site = mutate.weight_sites(COMPILED.model)[0]
    with pytest.raises(UsageError, match=r"mutants: make\(0\): expected a Mutation .*, found Model"):
        mutate.mutants(lambda s: mutate.mutate_weight(COMPILED.model, site, "inc"), 3)


def test_certificate_mutants_use_only_the_operators_asked_for():
    """``operators=("node", "coeff")`` gave 'const' mutants where the drawn cell had no terms or the
    circuit one node; now every mutant's operator is among those asked for, the cell it changed
    had terms, and 'node' with one node is refused rather than replaced."""
    cert = Certificate((
        Boundary(0, (Cell(0, 0, ((0, 1),)),)),
        Boundary(1, (Cell(0, 0, (), 7), Cell(1, 0, ((0, 2),), 1), Cell(2, 0, (), 3))),
        Boundary(2, (Cell(0, 0, ((0, 1),)),)),
    ))
    made = []
    for ops in (("node",), ("coeff",), ("node", "coeff"), ("coeff", "drop")):
        for seed in range(25):
            m = mutate.certificate_mutant(cert, 4, seed, ops)
            assert m.operator in ops, (ops, seed, m)
            if m.operator != "drop":
                assert "(1, 0)" in m.site
            made.append(m.operator)
    assert {"node", "coeff", "drop"} <= set(made)
    with pytest.raises(UsageError, match=r"operator 'node' needs a circuit of at least 2 nodes, found num_nodes=1"):
        mutate.certificate_mutant(cert, 1, 0, ("node",))
    assert {mutate.certificate_mutant(cert, 1, s, ("coeff", "const")).operator for s in range(25)} == {"coeff", "const"}


def test_a_precomputed_site_list_naming_a_zero_cell_is_refused():
    """``weight_mutant(nonzero=...)`` drew its site from the list as given: 'inc' on a zero cell named
    there made a mutant at a site the docstring says is never drawn."""
    model = COMPILED.model
    zeros = mutate.weight_sites(model, nonzero=False)[:3]
    assert all(is_zero(mutate.get_weight(model, s)) for s in zeros)
    with pytest.raises(UsageError, match=r"weight_mutant: nonzero: layer \d+ \w+\[\d+\]\[\d+\] holds 0 in this model"):
        mutate.weight_mutant(model, 1, ("inc",), nonzero=zeros)
    sites = mutate.weight_sites(model)
    m = mutate.weight_mutant(model, 1, ("inc",), nonzero=sites)
    assert m.obj != model and m.operator == "inc"


# ---- golden files: removing the unused ones -----------------------------------------------------
def test_a_directory_named_like_a_golden_file_is_no_unused_file(pytester):
    """``golden/test_user/notes.json/`` (a directory) was listed as unused, and --symverify-update
    ended the run in an INTERNALERROR (IsADirectoryError from unlink) after every test had passed."""
    pytester.makepyfile(test_user='''
def test_a(symverify_golden):
    symverify_golden.check({"a": 1})
''')
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update").assert_outcomes(passed=1)
    (pytester.path / "golden" / "test_user" / "notes.json").mkdir()
    # a file of the collected test_a (its stem, a suffix it no longer writes): removed
    (pytester.path / "golden" / "test_user" / "test_a-6d557526-gone.json").write_text("{}\n", encoding="utf-8")
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.assert_outcomes(passed=1)
    assert res.ret == 0 and "INTERNALERROR" not in res.stdout.str()
    res.stdout.fnmatch_lines(["*1 removed*", "  removed: golden/test_user/test_a-6d557526-gone.json"])
    assert "notes.json" not in res.stdout.str() and (pytester.path / "golden" / "test_user" / "notes.json").is_dir()


class _Config:
    def __init__(self, root, update):
        self.rootpath, self._update, self.args = root, update, []

    def getoption(self, name):
        return self._update


def test_an_unused_file_that_cannot_be_removed_is_listed_not_raised(tmp_path, monkeypatch):
    """An unlink that fails (a read-only directory) raised out of pytest_sessionfinish; the file is
    listed as not removed and the run goes on."""
    from symverify.pytest_plugin import GoldenSession

    stuck, gone = tmp_path / "stuck.json", tmp_path / "gone.json"
    stuck.mkdir()  # unlink of a directory fails as a read-only directory's entries do
    gone.write_text("{}\n", encoding="utf-8")
    s = GoldenSession(_Config(tmp_path, True))  # type: ignore[arg-type]
    monkeypatch.setattr(s, "find_unused", lambda: [stuck, gone])
    s.pytest_sessionfinish(None)  # type: ignore[arg-type]
    assert s.not_removed == [stuck] and s.removed == [gone] and not gone.exists()
    assert ("not removed", [stuck]) in s._groups()


def test_a_test_named_through_pyargs_leaves_the_other_tests_files_alone(pytester):
    """``pytest --pyargs pkg.test_user::test_a --symverify-update`` took the module as fully
    collected (the argument names no path), so it removed test_b's golden file."""
    pkg = pytester.mkpydir("pkg")
    (pkg / "test_user.py").write_text('''
def test_a(symverify_golden):
    symverify_golden.check({"a": 1})


def test_b(symverify_golden):
    symverify_golden.check({"b": 1})
''', encoding="utf-8")
    pytester.syspathinsert()
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update", "pkg").assert_outcomes(passed=2)
    d = pkg / "golden" / "test_user"
    files = sorted(p.name for p in d.iterdir())
    assert len(files) == 2
    (d / "orphan.json").write_text("{}\n", encoding="utf-8")
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update", "--pyargs", "pkg.test_user::test_a")
    res.assert_outcomes(passed=1)
    assert sorted(p.name for p in d.iterdir()) == sorted([*files, "orphan.json"])
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update", "--pyargs", "pkg.test_user")
    res.assert_outcomes(passed=2)
    res.stdout.fnmatch_lines(["  kept: pkg/golden/test_user/orphan.json"])  # claimed by no collected test
    assert sorted(p.name for p in d.iterdir()) == sorted([*files, "orphan.json"])


def test_tests_a_conftest_drops_keep_their_files(pytester):
    """A conftest that drops tests with ``items[:] = …`` (no pytest_deselected) left the module
    looking fully collected, so --symverify-update removed the dropped tests' golden files."""
    pytester.makepyfile(test_user='''
def test_a(symverify_golden):
    symverify_golden.check({"a": 1})


def test_b(symverify_golden):
    symverify_golden.check({"b": 1})
''')
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update").assert_outcomes(passed=2)
    d = pytester.path / "golden" / "test_user"
    files = sorted(p.name for p in d.iterdir())
    assert len(files) == 2
    pytester.makeconftest('''
def pytest_collection_modifyitems(config, items):
    items[:] = [i for i in items if "test_b" not in i.nodeid]
''')
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.assert_outcomes(passed=1)
    assert "removed" not in res.stdout.str() and sorted(p.name for p in d.iterdir()) == files


@pytest.mark.parametrize("update", [False, True])
def test_a_file_in_the_golden_directorys_place_is_named(tmp_path, update):
    """A file named ``golden`` made every check say "no golden file …; run pytest --symverify-update
    to write it", and the update then failed to write: the check names the file in the way."""
    (tmp_path / "golden").write_text("not a directory", encoding="utf-8")
    with pytest.raises(Failed, match=r"cannot read the golden file .*golden/test_user/t\.json: .*/golden is a file, not a directory"):
        GoldenFile(tmp_path / "golden" / "test_user", "t", update).check({"a": 1})


def test_a_compile_result_over_its_stated_bounds_is_refused(tmp_path):
    """A compile result whose resources exceed the bounds it states (the construction missed its
    theorem's bound) was stored and matched like any other."""
    from dataclasses import replace

    assert not COMPILED.over_bound()
    GoldenFile(tmp_path, "ok", True).check(COMPILED)
    over = replace(COMPILED, bounds={**COMPILED.bounds, "layers": COMPILED.resources["layers"] - 1})
    with pytest.raises(Failed, match=rf"the compile result \({COMPILED.method}\) is over its stated bounds: "
                                     rf"layers={COMPILED.resources['layers']} > {COMPILED.resources['layers'] - 1}"):
        GoldenFile(tmp_path, "over", True).check(over)
    with pytest.raises(Failed, match=r"'c': the compile result .* is over its stated bounds"):
        GoldenFile(tmp_path, "nested", True).check({"c": over})
    assert [p.name for p in tmp_path.iterdir()] == ["ok.json"]


def test_keys_that_differ_only_in_case_would_share_a_file(tmp_path):
    """``check(a, "A")`` and ``check(b, "a")`` wrote two files on Linux that are one file on macOS
    and Windows, where the second record overwrote the first and the next run failed for good."""
    g = GoldenFile(tmp_path, "t", True)
    g.check({"a": 1}, "Total")
    with pytest.raises(Failed, match=r"key 'total' and key 'Total' of this test would share the golden file t-total\.json"):
        g.check({"a": 2}, "total")
    g.check({"a": 3}, "other")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t-Total.json", "t-other.json"]
