"""A proof script's claim names what it is about: ``Instance.from_report`` keeps the side digests of
the reports it is made from (``digests``), the proof-run JSON writes them, golden records and golden
runs compare them; a run written before them stays readable, and ``--golden`` says which of its
instances it could not compare by them (docs/formats.md, "Proof run" and "Golden files")."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import SerializationError, UsageError
from symverify.pytest_plugin import GoldenFile
from symverify.scripts.protocol import Instance, ProofResult
from symverify.scripts.runner import golden_diff, golden_note
from symverify.testing import golden_record, golden_text
from symverify.viz.run_format import check_run

Failed = pytest.fail.Exception

# Two identities of one shape and equal statistics (tests/test_golden_side_digests.py)
SUM_A = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0]], n=1, d=2)
PROD_A = sv.Circuit.trace(lambda u: [u[0][0] * (u[0][1] + 1)], n=1, d=2)
SUM_B = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][1]], n=1, d=2)
PROD_B = sv.Circuit.trace(lambda u: [u[0][1] * (u[0][0] + 1)], n=1, d=2)
RES, BOUNDS = {"layers": 3}, {"layers": 4}


def _claim(lhs, rhs, name="the identity", **kw):
    return Instance.from_report(name, sv.verify(lhs, rhs, **kw), resources=RES, bounds=BOUNDS)


def _run(*instances: Instance) -> dict:
    """A run of one script holding ``instances``, as ``symverify prove --json`` writes it."""
    result = ProofResult("s", "S", list(instances)).to_json()
    script = {"name": "s", "title": "S", "status": "ok" if result["ok"] else "failed", "ok": result["ok"],
              "counts": result["counts"], "over_bound": [], "error": "", "result": result}
    return json.loads(json.dumps({"format": "symverify.proof-run", "version": 4, "quick": True, "ok": result["ok"],
                                  "interrupted": False, "scripts": [script]}))


def _without_digests(run: dict) -> dict:
    """``run`` as a version 3 run written before the digests."""
    run = json.loads(json.dumps(run))
    run["version"] = 3
    for s in run["scripts"]:
        for inst in s["result"]["instances"]:
            inst.pop("digests", None)
    return run


def test_two_identities_under_one_name_resources_and_bounds_differ():
    """Both are proved under the same name, resources and bounds: their instance JSON, golden
    records and golden runs compared equal, so a script whose identity was replaced by another
    matched its golden run."""
    a, b = _claim(SUM_A, PROD_A, method="exact"), _claim(SUM_B, PROD_B, method="exact")
    assert a.proved and b.proved
    assert a.to_json()["digests"] != b.to_json()["digests"]
    assert {k: v for k, v in a.to_json().items() if k != "digests"} == {k: v for k, v in b.to_json().items() if k != "digests"}
    assert golden_text(a) != golden_text(b)
    diff = golden_diff(_run(b), _run(a))
    assert "s: the identity: digests: " in diff
    assert golden_note(_run(b), _run(a)) == ""


def test_the_digests_are_those_verify_gives_the_sides_in_order():
    r1, r2 = sv.verify(SUM_A, PROD_A, method="exact"), sv.verify(SUM_B, PROD_B, method="exact")
    inst = Instance.from_report("two", r1, r2)
    assert inst.digests == ((r1.lhs["digest"], r1.rhs["digest"]), (r2.lhs["digest"], r2.rhs["digest"]))
    assert inst.to_json()["digests"] == [{"lhs": r1.lhs["digest"], "rhs": r1.rhs["digest"]},
                                         {"lhs": r2.lhs["digest"], "rhs": r2.rhs["digest"]}]
    assert golden_record(inst)["digests"] == inst.to_json()["digests"]
    assert inst.renamed("other", detail="x").digests == inst.digests


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), method=st.sampled_from(["exact", "randomized", "auto"]))
def test_the_same_claim_has_the_same_digests_whatever_the_seed(seed, method):
    base = _claim(SUM_A, PROD_A, method=method, seed=0)
    other = _claim(SUM_A, PROD_A, method=method, seed=seed)
    assert other.digests == base.digests
    assert golden_text(other) == golden_text(base)
    assert golden_diff(_run(other), _run(base)) == ""


def test_a_claim_of_a_matrix_check_writes_its_digests_and_computed_or_argued_claims_none():
    """A matrix check names its kaleidoscope and target (tests/test_claim_digests.py); computed and
    argued claims rest on no prover's outcome and state no digests."""
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.provers.matrix import verify_permutation

    check = verify_permutation(Kaleidoscope.identity(2), [0, 1])
    assert check.proved and check.digests is not None
    matrix = Instance.from_report("a permutation", check)
    assert matrix.digests == (check.digests,)
    assert matrix.to_json()["digests"] == golden_record(matrix)["digests"] == [{"lhs": check.digests[0],
                                                                                 "rhs": check.digests[1]}]
    report = sv.verify(SUM_A, PROD_A, method="exact")
    argued = Instance.argued("a lemma", "docs/theory.md § 1", checks=True)
    computed = Instance.computed("a rank", True, "exact rank over Q", "rank")
    for inst in (argued, computed):
        assert inst.digests == () and "digests" not in inst.to_json() and "digests" not in golden_record(inst)
    assert len(Instance.from_report("one", report).digests) == 1
    assert Instance.from_report("both", check, report).digests == (check.digests, (report.lhs["digest"], report.rhs["digest"]))


def test_digests_are_refused_where_no_report_gave_them():
    with pytest.raises(UsageError, match=r"instance 'a rank': digests name the sides of a prover's reports; found them "
                                         r"on a computed claim"):
        Instance("a rank", sv.Verdict.PROVED, "rank", kind="computed", basis="exact rank",
                 digests=(("sha256:" + "0" * 64, "sha256:" + "1" * 64),))
    for bad in (["sha256:" + "0" * 64], (("sha256:" + "0" * 63, "sha256:" + "1" * 64),), (("sha256:X", "y", "z"),)):
        with pytest.raises(UsageError, match=r"instance 'c': digests: expected a tuple of \(lhs, rhs\) pairs of "
                                             r"digests 'sha256:<64 hex digits>'"):
            Instance("c", sv.Verdict.PROVED, "rank", kind="computed", basis="exact rank", digests=bad)


def test_a_run_without_digests_is_read_and_compared_without_them():
    """A version 3 run written before the digests stays readable; --golden compares it without
    them and says so; --update-golden adds them."""
    a = _claim(SUM_A, PROD_A, method="exact")
    stored = _without_digests(_run(a))
    assert check_run(stored, "old.json")
    assert golden_diff(_run(a), stored) == ""
    assert golden_note(_run(a), stored) == (
        "the golden run holds no side digests for 1 instance that this run names by them (it was written before runs "
        "held them), so which identities they prove was not compared; --update-golden adds them")
    other = _claim(SUM_B, PROD_B, method="exact")  # the old run cannot tell the other identity apart: said so
    assert golden_diff(_run(other), stored) == "" and golden_note(_run(other), stored)
    assert golden_note(_run(a), _run(a)) == ""


def test_a_claim_that_no_longer_names_sides_differs_from_a_golden_run_that_does():
    a = _claim(SUM_A, PROD_A, method="exact")
    diff = golden_diff(_without_digests(_run(a)), _run(a))
    assert "s: the identity: digests: [{" in diff and "→ null" in diff


ZEROS, ONES = "sha256:" + "0" * 64, "sha256:" + "1" * 64


@pytest.mark.parametrize(("digests", "message"), [
    ([], r"\.digests: expected a non-empty list of objects \{\"lhs\": DIGEST, \"rhs\": DIGEST\}.*, found \[\]"),
    (ZEROS, r"\.digests: expected a non-empty list of objects .*found 'sha256:0000"),
    ([{"lhs": ZEROS}], r"\.digests\[0\]: expected an object \{\"lhs\": DIGEST, \"rhs\": DIGEST\}, found the keys 'lhs'$"),
    ([{"lhs": ZEROS, "rhs": ONES, "x": 1}], r"\.digests\[0\]: expected an object .*found the keys 'lhs', 'rhs', 'x'$"),
    ([{"lhs": ZEROS, "rhs": ONES}, [ZEROS, ONES]], r"\.digests\[1\]: expected an object .*found \['sha256"),
    ([{"lhs": ZEROS, "rhs": "sha256:" + "A" * 64}], r"\.digests\[0\]\.rhs: expected 'sha256:' and 64 lowercase hex digits, "
                                                r"found 'sha256:AAAA"),
    ([{"lhs": ZEROS[:-1], "rhs": ONES}], r"\.digests\[0\]\.lhs: expected 'sha256:' and 64 lowercase hex digits"),
    ([{"lhs": 7, "rhs": ONES}], r"\.digests\[0\]\.lhs: expected 'sha256:' and 64 lowercase hex digits, found 7"),
])
def test_a_run_with_malformed_digests_is_refused(digests, message):
    run = _run(_claim(SUM_A, PROD_A, method="exact"))
    run["scripts"][0]["result"]["instances"][0]["digests"] = digests
    with pytest.raises(SerializationError, match=r"run\.json\.scripts\[0\]\.result\.instances\[0\]" + message):
        check_run(run, "run.json")


def test_digests_on_a_claim_that_is_not_a_prover_s_are_refused_in_a_run():
    run = _run(Instance.computed("a rank", True, "exact rank over Q", "rank"))
    run["scripts"][0]["result"]["instances"][0]["digests"] = [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]
    with pytest.raises(SerializationError, match=r"instances\[0\]\.digests: only a prover's claim names the sides of its "
                                                 r"reports; this one is a computed claim"):
        check_run(run, "run.json")


def test_an_instance_record_written_before_the_digests_fails_saying_how_to_update(tmp_path):
    inst = _claim(SUM_A, PROD_A, method="exact")
    rec = golden_record(inst)
    del rec["digests"]
    (tmp_path / "t.json").write_text(json.dumps(rec, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(Failed, match=r"written before golden records of a proof instance held its reports' side "
                                     r"digests.*--symverify-update to add the digests"):
        GoldenFile(tmp_path, "t", False).check(inst)
    GoldenFile(tmp_path, "t", True).check(inst)
    GoldenFile(tmp_path, "t", False).check(inst)
    with pytest.raises(Failed, match="golden mismatch"):
        GoldenFile(tmp_path, "t", False).check(_claim(SUM_B, PROD_B, method="exact"))


SCRIPT = '''
TITLE = "an identity"
import symverify as sv
from symverify.scripts.protocol import Instance, ProofResult, script_main

LHS = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][{k}]], n=1, d=2)
RHS = sv.Circuit.trace(lambda u: [u[0][{k}] * (u[0][{j}] + 1)], n=1, d=2)

def run(quick=False):
    return ProofResult("ident", TITLE, [Instance.from_report("the identity", sv.verify(LHS, RHS, method="exact"))])

if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def test_prove_golden_compares_digests_and_says_when_the_stored_run_has_none(tmp_path, capsys):
    from symverify.cli import main

    d, golden = tmp_path / "proofs", tmp_path / "golden.json"
    d.mkdir()
    (d / "ident.py").write_text(textwrap.dedent(SCRIPT.format(k=0, j=1)), encoding="utf-8")
    assert main(["prove", "--dir", str(d), "ident", "-j", "1", "--golden", str(golden), "--update-golden"]) == 0
    stored = json.loads(golden.read_text(encoding="utf-8"))
    assert "digests" in stored["scripts"][0]["result"]["instances"][0]
    (d / "ident.py").write_text(textwrap.dedent(SCRIPT.format(k=1, j=0)), encoding="utf-8")  # another identity
    capsys.readouterr()
    assert main(["prove", "--dir", str(d), "ident", "-j", "1", "--golden", str(golden)]) == 1
    out = capsys.readouterr().out
    assert "differs from the golden run" in out and "ident: the identity: digests:" in out
    Path(golden).write_text(json.dumps(_without_digests(stored)), encoding="utf-8")  # a run written before digests
    assert main(["prove", "--dir", str(d), "ident", "-j", "1", "--golden", str(golden)]) == 0
    out = capsys.readouterr().out
    assert "matches the golden run" in out
    assert "note: the golden run holds no side digests for 1 instance" in " ".join(out.split())


# ---- fragment proofs: the spec circuit and model they checked -----------------------------------------


def _fragment_proofs():
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.provers.fragment import prove_fragment

    return prove_fragment(shift_down(3, 1, 1)), prove_fragment(shift_down(3, 1, 2))


def test_a_fragment_proof_names_its_spec_circuit_and_model():
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.gadgets.fragment import standalone
    from symverify.kernel.provers.fingerprint import content_digest
    from symverify.kernel.provers.sides import as_side
    from symverify.kernel.verification import side_digest

    one, two = _fragment_proofs()
    circuit, model, _ = standalone(shift_down(3, 1, 1))
    assert one.digests == (content_digest(circuit), content_digest(model))
    assert one.digests == (side_digest(as_side(circuit)), side_digest(as_side(model)))  # one fingerprint, one name
    a, b = Instance.from_report("shift", one, method="compositional"), Instance.from_report("shift", two, method="compositional")
    assert a.digests == (one.digests,) and a.to_json()["digests"] == [{"lhs": one.digests[0], "rhs": one.digests[1]}]
    assert a.digests != b.digests and golden_text(a) != golden_text(b)
    report = sv.verify(SUM_A, PROD_A, method="exact")
    both = Instance.from_report("both", one, report, method="compositional+exact")
    assert both.digests == (one.digests, (report.lhs["digest"], report.rhs["digest"]))


def test_a_fragment_proof_s_digests_are_sealed():
    """Digests changed after the proof was made (naming another fragment) unseal it: the claim is
    refused, never recorded as being about the other fragment."""
    from symverify.kernel.provers.outcome import is_sealed

    one, two = _fragment_proofs()
    assert is_sealed(one)
    object.__setattr__(one, "digests", two.digests)
    assert not is_sealed(one)
    with pytest.raises(sv.ProverError, match=r"instance 'shift': this FragmentProof \(proved\) was not made by its prover"):
        Instance.from_report("shift", one, method="compositional")


def test_a_fragment_proof_refuses_digests_of_another_form():
    from symverify.kernel.provers.fragment import FragmentProof

    with pytest.raises(sv.ProverError, match=r"fragment proof 'f': digests: expected None or \(circuit, model\) digests "
                                             r"'sha256:<64 hex digits>', found \('sha256:00'"):
        FragmentProof("f", True, True, digests=("sha256:00", "sha256:" + "1" * 64))
    assert FragmentProof("f", True, True).digests is None


_DIGESTS_OF_FRAGMENTS = """
import json
from symverify.gadgets.layout import rows_to_channels
from symverify.gadgets.primitives import linear_map, shift_down
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.fragment import prove_fragment
from symverify.scripts.protocol import Instance
frags = [shift_down(3, 1, 1), shift_down(4, 2, 1), linear_map(Grid.symbolic("W", 2, 2), 3), rows_to_channels(2, 2, 2, 4)]
print(json.dumps([Instance.from_report("f", prove_fragment(f), method="compositional").to_json()["digests"] for f in frags]))
"""


def test_fragment_digests_are_the_same_in_processes_of_different_hash_seeds():
    """What a claim is about does not depend on the order of a set (PYTHONHASHSEED): a user's
    golden record, made in a process of any hash seed, matches the runner's (hash seed 0)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    outs = {subprocess.run([sys.executable, "-c", _DIGESTS_OF_FRAGMENTS], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}).stdout
            for seed in ("0", "1", "2")}
    assert len(outs) == 1, outs
    assert len({json.dumps(d) for d in json.loads(outs.pop())}) == 4  # four fragments, four names


def test_a_run_written_now_is_of_version_4_and_holds_digests_on_every_prover_claim(tmp_path):
    """``digests`` came within version 3 (a reader of version 3 before them refused them as an
    unknown field, and a version 3 run could not say whether it had lost them): the run written
    now says version 4, which promises them."""
    from symverify.cli import main
    from symverify.viz.run_format import VERSION

    d, out = tmp_path / "proofs", tmp_path / "run.json"
    d.mkdir()
    (d / "ident.py").write_text(textwrap.dedent(SCRIPT.format(k=0, j=1)), encoding="utf-8")
    assert main(["prove", "--dir", str(d), "ident", "-j", "1", "--json", str(out)]) == 0
    run = json.loads(out.read_text(encoding="utf-8"))
    assert run["version"] == VERSION == 4
    assert all("digests" in i for s in run["scripts"] for i in s["result"]["instances"])


def test_a_version_4_run_whose_prover_claim_lost_its_digests_is_refused_naming_it():
    a = _claim(SUM_A, PROD_A, method="exact")
    lost = _run(a, Instance.computed("a rank", True, "exact rank over Q", "rank"))
    del lost["scripts"][0]["result"]["instances"][0]["digests"]
    with pytest.raises(SerializationError, match=r"run\.json\.scripts\[0\]\.result\.instances\[0\]\.digests: a prover's "
                                                 r"claim in a run of version 4 names what it is about; found no digests"):
        check_run(lost, "run.json")
    lost["version"] = 3  # a version 3 run may have been written before them: read as written
    assert check_run(lost, "run.json")
    computed_only = _run(Instance.computed("a rank", True, "exact rank over Q", "rank"))
    assert check_run(computed_only, "run.json")  # computed and argued claims name no digests in any version


def test_a_run_of_a_later_version_is_refused_saying_so(tmp_path):
    from symverify.viz.resources import load_run

    run = _run(_claim(SUM_A, PROD_A, method="exact"))
    run["version"] = 5
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    with pytest.raises(SerializationError, match=r"run\.json\.version: expected 2, 3 or 4, found 5 \(a run of a newer "
                                                 r"symverify\?\)"):
        load_run(path)


def test_a_version_2_run_with_digests_is_refused():
    run = _run(_claim(SUM_A, PROD_A, method="exact"))
    run["version"] = 2
    with pytest.raises(SerializationError, match=r"instances\[0\]\.digests: a field of version 3, found in a run of "
                                                 r"version 2 \(which has no digests\); expected version 3 or 4"):
        check_run(run, "run.json")


def test_a_claim_from_an_outcome_that_names_no_digests_is_refused():
    """Every prover names what its outcome is about; one sealed without (by hand) would make a
    version 4 run its own readers refuse."""
    from symverify.kernel.provers.matrix import KaleidoscopeCheck
    from symverify.kernel.provers.outcome import seal_outcome

    check = seal_outcome(KaleidoscopeCheck(sv.Verdict.PROVED, "exact-matrix", 2, 2, 1, False))
    with pytest.raises(UsageError, match=r"instance 'bare': this KaleidoscopeCheck \(proved\) names no digests of what it "
                                         r"is about"):
        Instance.from_report("bare", check)


def test_a_script_s_result_file_of_version_2_holds_digests_and_version_1_may_not(tmp_path):
    """A script's result file (``script_main --json``) holds the claims' digests since version 2,
    which ``symverify report`` then requires; a version 1 file (written before them, or not) is
    read as written."""
    from symverify.viz.resources import load_run
    from symverify.viz.run_format import RESULT_VERSION

    result = {"format": "symverify.proof-result", "version": RESULT_VERSION,
              **ProofResult("s", "S", [_claim(SUM_A, PROD_A, method="exact")]).to_json()}
    assert RESULT_VERSION == 2 and "digests" in result["instances"][0]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    assert load_run(path)["version"] == 4
    del result["instances"][0]["digests"]
    path.write_text(json.dumps(result), encoding="utf-8")
    with pytest.raises(SerializationError, match=r"result\.json\.instances\[0\]\.digests: a prover's claim .* found no digests"):
        load_run(path)
    result["version"] = 1
    path.write_text(json.dumps(result), encoding="utf-8")
    assert load_run(path)["version"] == 3
