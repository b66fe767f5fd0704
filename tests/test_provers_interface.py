"""Sides as a closed union, and one Verdict everywhere a verdict is represented."""

import json
from dataclasses import FrozenInstanceError

import pytest
from cases import QUARTIC_C, QUARTIC_CERT, QUARTIC_M, SQUARE_C, SQUARE_M, SWAP_K

import symverify as sv
from symverify.errors import IRError, UsageError
from symverify.gadgets.primitives import shift_down
from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.provers.exact import expand_compare
from symverify.provers.fragment import FragmentProof, prove_fragment
from symverify.provers.matrix import verify_permutation
from symverify.provers.outcome import Verdict
from symverify.provers.sides import (
    CircuitSide,
    KaleidoscopeSide,
    ModelSide,
    as_side,
    certificate_of,
    pair_sides,
    torch_executable,
)
from symverify.scripts.protocol import Instance, ProofResult

# ---- the Side union ----------------------------------------------------------------------------


def test_as_side_gives_one_class_per_kind():
    compiled = sv.compile(QUARTIC_C)
    for obj, cls, kind in ((SQUARE_C, CircuitSide, "circuit"), (SQUARE_M, ModelSide, "model"),
                           (SWAP_K, KaleidoscopeSide, "kaleidoscope"), (compiled, ModelSide, "model")):
        side = as_side(obj)
        assert type(side) is cls and side.kind == kind
    assert certificate_of(as_side(compiled)) is compiled.certificate
    assert certificate_of(as_side(SQUARE_C)) is None and certificate_of(as_side(SWAP_K)) is None
    assert torch_executable(as_side(SQUARE_C)) and torch_executable(as_side(SQUARE_M))
    assert not torch_executable(as_side(SWAP_K))
    with pytest.raises(FrozenInstanceError):
        as_side(SQUARE_C).n = 3
    with pytest.raises(IRError, match="expected a Circuit, Model, Kaleidoscope"):
        as_side(3)


def test_pair_sides_reshapes_kaleidoscopes_and_attaches_certificates():
    perm = permutation_to_kaleidoscope([1, 0, 3, 2])
    c = sv.Circuit(2, 2, (), (1, 0, 3, 2))
    k, circ = pair_sides(perm, c)
    assert isinstance(k, KaleidoscopeSide) and k.shape == (2, 2) and k.label() == "kaleidoscope (2×2)"
    assert isinstance(circ, CircuitSide) and as_side(perm).shape == (4, 1)
    m_left, c_right = pair_sides(QUARTIC_M, QUARTIC_C, QUARTIC_CERT)
    assert isinstance(m_left, ModelSide) and m_left.certificate is QUARTIC_CERT and certificate_of(c_right) is None
    with pytest.raises(IRError, match="neither side is a model"):
        pair_sides(SQUARE_C, SQUARE_C, QUARTIC_CERT)


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
