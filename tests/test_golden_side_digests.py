"""A report's golden record names its sides by content: each side's ``digest`` (the SHA-256 of its
exact content, ``symverify.kernel.verification.side_digest``) is in the report's ``lhs``/``rhs``, so
two claims about different sides of equal statistics get different records, and the same claim the
same record on every run, seed and hash seed; a record written before the digests fails with a
message that says how to add them (docs/formats.md, "Golden files")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.pytest_plugin import GoldenFile
from symverify.testing import golden_record, golden_text

Failed = pytest.fail.Exception
ROOT = Path(__file__).resolve().parent.parent

# Two identities of one shape: x0·x1 + x0 ≡ x0·(x1 + 1) and x0·x1 + x1 ≡ x1·(x0 + 1). Every side
# statistic (gates, depth, width, degree, symbols) is the same; the polynomials are not.
SUM_A = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0]], n=1, d=2)
PROD_A = sv.Circuit.trace(lambda u: [u[0][0] * (u[0][1] + 1)], n=1, d=2)
SUM_B = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][1]], n=1, d=2)
PROD_B = sv.Circuit.trace(lambda u: [u[0][1] * (u[0][0] + 1)], n=1, d=2)


def _stats(side):
    return {k: v for k, v in side.items() if k != "digest"}


def test_two_identities_of_equal_statistics_have_different_golden_records():
    """Both are proved with equal side statistics: their records were byte-identical, so a CI check
    "this identity is still proved" passed after the identity was replaced by the other."""
    a, b = sv.verify(SUM_A, PROD_A, method="exact"), sv.verify(SUM_B, PROD_B, method="exact")
    assert a.proved and b.proved
    assert (_stats(a.lhs), _stats(a.rhs)) == (_stats(b.lhs), _stats(b.rhs))  # the premise: same statistics
    assert golden_text(a) != golden_text(b)
    assert golden_record(a)["lhs"]["digest"] != golden_record(b)["lhs"]["digest"]
    assert golden_record(a)["rhs"]["digest"] != golden_record(b)["rhs"]["digest"]


def test_a_compiled_side_is_named_by_its_model():
    """A compile result's side is its model, digested whole; its certificate is evidence, not part
    of the claim."""
    from symverify.kernel.provers.sides import as_side
    from symverify.kernel.verification import side_digest

    comp = sv.compile(SUM_A)
    report = sv.verify(SUM_A, comp, method="compositional")
    assert golden_record(report)["rhs"]["digest"] == side_digest(as_side(comp.model))
    assert golden_record(report)["rhs"]["digest"] == side_digest(as_side(comp))  # its certificate is evidence, not the claim


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), method=st.sampled_from(["exact", "randomized", "auto"]))
def test_the_same_claim_gives_the_same_record_whatever_the_seed(seed, method):
    base = golden_text(sv.verify(SUM_A, PROD_A, method=method, seed=0))
    assert golden_text(sv.verify(SUM_A, PROD_A, method=method, seed=seed)) == base
    assert golden_text(sv.verify(SUM_A, PROD_A, method=method, seed=None)) == base


_RECORD = """
import json, symverify as sv
from symverify.testing import golden_text
c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0]], n=1, d=2)
print(golden_text(sv.verify(c, sv.compile(c), seed=None)))
"""


def test_the_same_claim_gives_the_same_record_in_processes_of_different_hash_seeds():
    """The digest depends on the sides' content only: not on an address, a float or the order of a
    set of strings (PYTHONHASHSEED)."""
    texts = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", _RECORD], env=env, capture_output=True, text=True, check=True)
        texts.add(out.stdout)
    c = SUM_A
    texts.add(golden_text(sv.verify(c, sv.compile(c))) + "\n")
    assert len(texts) == 1, texts


def _legacy_text(report) -> str:
    """The record as symverify wrote it before the digests."""
    rec = golden_record(report)
    for side in ("lhs", "rhs"):
        del rec[side]["digest"]
    return json.dumps(rec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_a_record_written_before_the_digests_fails_saying_how_to_update(tmp_path):
    """A golden file without the digests cannot tell the claims apart, so it is not accepted; the
    failure says why and that ``--symverify-update`` adds them, which then compares."""
    report = sv.verify(SUM_A, PROD_A, method="exact")
    (tmp_path / "t.json").write_text(_legacy_text(report), encoding="utf-8")
    with pytest.raises(Failed, match=r"written before golden records of a report held each side's digest.*"
                                     r"the rest of it matches this run.*run pytest --symverify-update to add the digests"):
        GoldenFile(tmp_path, "t", False).check(report)
    other = sv.verify(SUM_B, PROD_B, method="exact")  # the old file matches the other claim as well
    with pytest.raises(Failed, match="written before golden records of a report held each side's digest"):
        GoldenFile(tmp_path, "t", False).check(other)
    GoldenFile(tmp_path, "t", True).check(report)
    assert (tmp_path / "t.json").read_text(encoding="utf-8") == golden_text(report)
    GoldenFile(tmp_path, "t", False).check(report)
    with pytest.raises(Failed, match=r"golden mismatch for .*t\.json; if the change is intended") as info:
        GoldenFile(tmp_path, "t", False).check(other)
    assert "written before" not in str(info.value)


def test_a_record_nested_in_a_mapping_written_before_the_digests_is_recognised(tmp_path):
    report = sv.verify(SUM_A, PROD_A, method="exact")
    rec = {"proofs": [golden_record(report)], "n": 1}
    for side in ("lhs", "rhs"):
        del rec["proofs"][0][side]["digest"]
    (tmp_path / "t.json").write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with pytest.raises(Failed, match="written before golden records of a report held each side's digest"):
        GoldenFile(tmp_path, "t", False).check({"proofs": [report], "n": 1})
    with pytest.raises(Failed, match=r"golden mismatch(?!.*written before)"):  # something else differs too
        GoldenFile(tmp_path, "t", False).check({"proofs": [report], "n": 2})


@pytest.mark.parametrize("text", ["{", "[" * 100_000, '{"kind": "report", "lhs": 1}'])
def test_a_golden_file_edited_into_no_record_is_a_plain_mismatch(tmp_path, text):
    report = sv.verify(SUM_A, PROD_A, method="exact")
    (tmp_path / "t.json").write_text(text, encoding="utf-8")
    with pytest.raises(Failed, match=r"golden mismatch for"):
        GoldenFile(tmp_path, "t", False).check({"r": report, "pad": "x" * 60_000})


def test_a_mismatch_in_the_failure_bound_alone_names_the_engine(tmp_path):
    """A randomized proof's bound depends on the engine ``auto`` chose (torch where installed and
    cheaper): a golden file written on another machine differs in it alone, and the failure says so
    and how to state one bound everywhere."""
    report = sv.verify(SUM_A, PROD_A, method="randomized", backend="python")
    bound = golden_record(report)["failure_bound"]
    (tmp_path / "t.json").write_text(golden_text(report).replace(bound, "2^-108.0"), encoding="utf-8")
    with pytest.raises(Failed, match=r"(?s)golden mismatch for.*only a randomized proof's failure bound differs: it "
                                     r"depends on the engine.*method='randomized', backend='python'"):
        GoldenFile(tmp_path, "t", False).check(report)
    other = golden_text(report).replace(bound, "2^-108.0").replace('"method": "randomized"', '"method": "exact"')
    (tmp_path / "t.json").write_text(other, encoding="utf-8")
    with pytest.raises(Failed, match="golden mismatch") as info:
        GoldenFile(tmp_path, "t", False).check(report)
    assert "only a randomized proof's failure bound" not in str(info.value)


def test_a_record_before_the_digests_is_told_apart_from_one_whose_numbers_changed_type(tmp_path):
    """``1`` and ``1.0`` (or ``true``) are equal in Python: the old record with a value of another
    type is no record of this run, and the failure does not say that the rest matches."""
    report = sv.verify(SUM_A, PROD_A, method="exact")
    rec = json.loads(_legacy_text(report))
    rec["lhs"]["muls"] = float(rec["lhs"]["muls"])
    (tmp_path / "t.json").write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with pytest.raises(Failed, match="golden mismatch") as info:
        GoldenFile(tmp_path, "t", False).check(report)
    assert "written before" not in str(info.value)


# ---- compile results: the model and the circuit compiled, by their digests --------------------------


def _no_compile_digests(rec):
    return {k: v for k, v in rec.items() if k not in ("model_digest", "source_digest")}


def test_two_compile_results_of_equal_shape_and_resources_have_different_golden_records():
    """Two circuits of one shape compile densely into models of equal signature, resources and
    bounds: their records were byte-identical, so a compiler change that made another model of the
    same shape still matched the stored file."""
    a, b = golden_record(sv.compile(SUM_A, method="dense")), golden_record(sv.compile(SUM_B, method="dense"))
    assert _no_compile_digests(a) == _no_compile_digests(b)  # the premise: same method, signature, resources, bounds
    assert a["model_digest"] != b["model_digest"] and a["source_digest"] != b["source_digest"]


def test_a_changed_model_of_the_same_resources_changes_the_record():
    """One weight of the compiled model changed (same signature, resources and bounds): another record."""
    import dataclasses

    from symverify import mutate

    comp = sv.compile(SUM_A, method="dense")
    other = dataclasses.replace(comp, model=mutate.weight_mutant(comp.model, 0, ("inc",)).obj)
    assert other.model != comp.model and other.resources == comp.resources
    assert golden_text(other) != golden_text(comp)
    assert golden_record(other)["source_digest"] == golden_record(comp)["source_digest"]


def test_a_compile_result_is_named_by_the_digests_verify_gives_its_sides():
    comp = sv.compile(SUM_A)
    rec, report = golden_record(comp), golden_record(sv.verify(SUM_A, comp, method="compositional"))
    assert rec["model_digest"] == report["rhs"]["digest"]
    assert rec["source_digest"] == report["lhs"]["digest"]
    assert comp.source is SUM_A


@settings(max_examples=10, deadline=None)
@given(method=st.sampled_from(["dense", "kaleidoscope"]))
def test_the_same_compilation_gives_the_same_record(method):
    assert golden_text(sv.compile(SUM_A, method=method)) == golden_text(sv.compile(SUM_A, method=method))


def test_a_compile_result_without_its_source_records_the_model_only():
    """A compiler module called directly does not know the source: its record says nothing about
    one (never a digest of something else)."""
    from symverify.compiler.dense import compile_dense

    comp = compile_dense(SUM_A)
    assert comp.source is None
    rec = golden_record(comp)
    assert "source_digest" not in rec and rec["model_digest"] == golden_record(sv.compile(SUM_A, method="dense"))["model_digest"]


def test_a_compile_result_refuses_a_source_that_is_no_circuit_of_its_shape():
    import dataclasses

    comp = sv.compile(SUM_A, method="dense")
    with pytest.raises(sv.CompileError, match=r"Compiled source: expected the Circuit that was compiled, or None, found Model"):
        dataclasses.replace(comp, source=comp.model)
    wide = sv.Circuit.trace(lambda u: [u[0][0] * u[1][1]], n=2, d=2)
    with pytest.raises(sv.CompileError, match=r"Compiled source: expected a circuit of the model's shape n=1, d=2, found n=2, d=2"):
        dataclasses.replace(comp, source=wide)


def test_a_compile_record_written_before_the_digests_fails_saying_how_to_update(tmp_path):
    comp = sv.compile(SUM_A, method="dense")
    legacy = json.dumps(_no_compile_digests(golden_record(comp)), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (tmp_path / "t.json").write_text(legacy, encoding="utf-8")
    with pytest.raises(Failed, match=r"written before golden records of a compile result held its model's and source "
                                     r"circuit's digests.*the rest of it matches this run.*--symverify-update to add"):
        GoldenFile(tmp_path, "t", False).check(comp)
    with pytest.raises(Failed, match="written before golden records of a compile result"):  # the other model matches it too
        GoldenFile(tmp_path, "t", False).check(sv.compile(SUM_B, method="dense"))
    GoldenFile(tmp_path, "t", True).check(comp)
    GoldenFile(tmp_path, "t", False).check(comp)
    with pytest.raises(Failed, match=r"golden mismatch for .*t\.json; if the change is intended") as info:
        GoldenFile(tmp_path, "t", False).check(sv.compile(SUM_B, method="dense"))
    assert "written before" not in str(info.value)


def test_a_record_of_a_report_and_a_compile_result_before_the_digests_names_both(tmp_path):
    comp = sv.compile(SUM_A, method="dense")
    report = sv.verify(SUM_A, PROD_A, method="exact")
    rec = golden_record({"c": comp, "r": report})
    rec["c"] = _no_compile_digests(rec["c"])
    for side in ("lhs", "rhs"):
        del rec["r"][side]["digest"]
    (tmp_path / "t.json").write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with pytest.raises(Failed, match=r"written before golden records of a report held each side's digest and of a "
                                     r"compile result held its model's and source circuit's digests"):
        GoldenFile(tmp_path, "t", False).check({"c": comp, "r": report})


def test_a_compile_result_of_a_circuit_subclass_has_no_record():
    """A subclass may evaluate otherwise than its fields say: it has no digest, and the error names
    where it was found."""
    from symverify.errors import SymverifyError
    from symverify.kernel.ir.circuit import Circuit

    class Sub(Circuit):
        pass

    comp = sv.compile(Sub(SUM_A.n, SUM_A.d, SUM_A.gates, SUM_A.outputs), method="dense")
    with pytest.raises(SymverifyError, match=r"golden_record: the compile result's source: expected a Circuit, Model or "
                                             r"Kaleidoscope exactly, found an instance of .*Sub"):
        golden_record(comp)
