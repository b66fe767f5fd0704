"""A matrix check's garbage-free flag reaches the claim made from it: ``KaleidoscopeCheck`` seals
whether it also checked ``E·(x, 0) = (M·x, 0)`` (``garbage_free_checked``), and the claim's method
shows it (``exact-matrix+garbage-free``) wherever the method is shown: the table, the run JSON,
golden records and runs. The claim said ``exact-matrix`` either way, and a renamed claim (the
exhaustive rows of ``dao_thm2_permutations``) lost the words of the detail that said it."""

from __future__ import annotations

import pytest

from symverify.kaleidoscope import permutation_to_kaleidoscope
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.provers.matrix import verify_matrix, verify_permutation
from symverify.scripts.instances import kaleidoscope_instance
from symverify.scripts.protocol import Instance, ProofResult
from symverify.testing import golden_record

SWAP = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]


def test_a_garbage_free_proof_says_so_in_its_method_table_json_and_golden_record():
    f = permutation_to_kaleidoscope([1, 0, 2])
    check = verify_permutation(f, [1, 0, 2])
    assert check.proved and check.garbage_free_checked
    inst = kaleidoscope_instance("swap", f, check).renamed("swap, renamed", detail="1 permutation")
    assert inst.method == "exact-matrix+garbage-free"
    assert inst.to_json()["method"] == golden_record(inst)["method"] == "exact-matrix+garbage-free"
    assert "exact-matrix+garbage-free" in ProofResult("s", "S", [inst]).table()


def test_a_proof_without_the_garbage_free_check_does_not_claim_it():
    f = permutation_to_kaleidoscope([1, 0, 2])
    plain = Factorization(f.kaleidoscope, "test", False)
    check = verify_matrix(plain, SWAP)
    assert check.proved and not check.garbage_free_checked
    assert kaleidoscope_instance("swap", plain, check).method == "exact-matrix"
    both = Instance.from_report("both", check, verify_matrix(f, SWAP))
    assert both.method == "exact-matrix+exact-matrix+garbage-free"


@pytest.mark.parametrize("garbage_free", [True, False])
def test_the_method_is_the_flag_the_check_sealed(garbage_free):
    f = permutation_to_kaleidoscope([2, 0, 1, 3])
    check = verify_matrix(f, [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]], garbage_free=garbage_free)
    assert check.garbage_free_checked is garbage_free
    assert ("garbage-free" in kaleidoscope_instance("p", f, check).method.split("+")) is garbage_free
