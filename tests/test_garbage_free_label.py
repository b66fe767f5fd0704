"""A prover's claim given a ``method`` names ``garbage-free`` only where every matrix check it rests on checked it:
``Instance.from_report`` took a ``method`` naming it (``exact-matrix+garbage-free``) on a check
whose sealed ``garbage_free_checked`` is false, so a row stated a fact nothing had checked (as a
randomized proof must name ``randomized``, a claim must not name a check that was not made)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import UsageError
from symverify.kaleidoscope import permutation_to_kaleidoscope
from symverify.kernel.provers.matrix import verify_permutation
from symverify.scripts.protocol import Instance

PERM = (1, 0, 3, 2)
F = permutation_to_kaleidoscope(PERM)
UNCHECKED = verify_permutation(F, PERM, garbage_free=False)
CHECKED = verify_permutation(F, PERM)


def test_the_checks_are_what_the_tests_assume():
    assert not UNCHECKED.garbage_free_checked and CHECKED.garbage_free_checked
    assert UNCHECKED.proved and CHECKED.proved


@pytest.mark.parametrize("method", ["exact-matrix+garbage-free", "garbage-free", "garbage-free+lemma"])
def test_a_method_naming_garbage_free_on_a_check_that_did_not_check_it_is_refused(method):
    with pytest.raises(UsageError, match=r"^instance 'p': method '.*': names garbage-free, but outcome 0 "
                                         r"\(a KaleidoscopeCheck, proved\) did not check it"):
        Instance.from_report("p", UNCHECKED, method=method)


def test_one_unchecked_check_among_checked_ones_is_enough_to_refuse_the_label():
    with pytest.raises(UsageError, match=r"outcome 1 \(a KaleidoscopeCheck, proved\) did not check it"):
        Instance.from_report("p", CHECKED, UNCHECKED, method="exact-matrix+garbage-free", one_digest=True)
    # without method=, the claim joins each outcome's own method: the unchecked one is named as it is
    assert Instance.from_report("p", CHECKED, UNCHECKED).method == "exact-matrix+garbage-free+exact-matrix"


@settings(max_examples=20, deadline=None)
@given(st.permutations(range(4)))
def test_checked_claims_keep_their_label_and_unchecked_ones_their_plain_method(perm):
    f = permutation_to_kaleidoscope(perm)
    checked = verify_permutation(f, perm)
    assert Instance.from_report("p", checked).method == "exact-matrix+garbage-free"
    assert Instance.from_report("p", checked, method="exact-matrix+garbage-free").method == "exact-matrix+garbage-free"
    assert Instance.from_report("p", verify_permutation(f, perm, garbage_free=False)).method == "exact-matrix"
