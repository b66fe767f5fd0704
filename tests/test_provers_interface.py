"""One Verdict everywhere a verdict is represented: matrix and fragment checks, exact expansion, proof-script instances."""

import json

import pytest
from cases import QUARTIC_C, QUARTIC_M, SQUARE_C

from symverify.errors import UsageError
from symverify.gadgets.primitives import shift_down
from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.provers.exact import expand_compare
from symverify.provers.fragment import FragmentProof, prove_fragment
from symverify.provers.matrix import verify_permutation
from symverify.provers.outcome import Verdict
from symverify.provers.sides import pair_sides
from symverify.scripts.protocol import Instance, ProofResult

# ---- Verdict everywhere ------------------------------------------------------------------------


def test_kaleidoscope_check_verdict_is_a_verdict():
    good = verify_permutation(permutation_to_kaleidoscope([1, 0, 2]), [1, 0, 2])
    bad = verify_permutation(permutation_to_kaleidoscope([1, 0, 2]), [0, 1, 2])
    assert good.verdict is Verdict.PROVED and good.proved and str(good).startswith("proved (exact-matrix)")
    assert bad.verdict is Verdict.REFUTED and not bad.proved and str(bad).startswith("refuted (exact-matrix)")


def test_fragment_proof_verdict():
    assert prove_fragment(shift_down(3, 1, 1)).verdict is Verdict.PROVED
    assert FragmentProof("f", True, None).verdict is Verdict.PROVED
    assert FragmentProof("f", False, True).verdict is Verdict.UNKNOWN
    assert FragmentProof("f", True, False).verdict is Verdict.REFUTED
    assert FragmentProof("f", False, False).verdict is Verdict.REFUTED


def test_exact_outcome_verdicts():
    a, b = pair_sides(SQUARE_C, QUARTIC_M)
    assert expand_compare(a, a, "flint", 10**6, None).verdict is Verdict.PROVED
    differ = expand_compare(a, b, "flint", 10**6, None)
    assert differ.verdict is Verdict.REFUTED and differ.cell == (0, 0) and differ.stopped == ""
    over = expand_compare(*pair_sides(QUARTIC_C, QUARTIC_M), "flint", 0, None)
    assert over.verdict is Verdict.UNKNOWN and over.stopped == "budget" and "max_monomials = 0" in over.detail


def test_instance_takes_a_verdict_or_its_string():
    for given in ("proved", Verdict.PROVED):
        inst = Instance("claim", given, "exact", {"layers": 1}, {"layers": 2})
        assert inst.verdict is Verdict.PROVED and inst.ok
    assert Instance("claim", "refuted", "exact").verdict is Verdict.REFUTED
    for bad in ("PROVED", "ok", True, None, 1):
        with pytest.raises(UsageError, match="instance 'claim': verdict: expected one of 'proved', 'refuted', 'unknown'"):
            Instance("claim", bad, "exact")


def test_instance_json_and_table_write_the_verdict_strings():
    result = ProofResult("demo", "Demo", [Instance("a", "proved", "exact", {"layers": 1}, {"layers": 2}),
                                          Instance("b", Verdict.UNKNOWN, "randomized")])
    data = json.loads(json.dumps(result.to_json()))
    assert [i["verdict"] for i in data["instances"]] == ["proved", "unknown"]
    assert data["counts"] == {"proved": 1, "refuted": 0, "unknown": 1}
    lines = result.table().splitlines()
    assert lines[0] == "Demo (demo): FAILED  {'proved': 1, 'refuted': 0, 'unknown': 1}"
    assert lines[1].startswith("  proved   exact          a ") and lines[2].startswith("  unknown  randomized     b ")
    assert lines[2].endswith("  <--")
