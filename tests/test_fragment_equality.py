"""Fragment equality leaves out the spec; nothing finds a result by it (pinned: an equal fragment with
another claim is proved or refuted on its own claim, in any order, through copies and compositions)."""

from __future__ import annotations

import copy
import pickle

import pytest

from symverify.gadgets.compose import compose, pad
from symverify.gadgets.primitives import cyclic_shift, identity
from symverify.kernel.gadgets.fragment import Fragment, standalone
from symverify.kernel.provers.fragment import prove_fragment
from symverify.kernel.provers.outcome import Verdict


def _twins(n: int = 3) -> tuple[Fragment, Fragment]:
    """``cyclic_shift(n, 1, 1)`` and a fragment with its very layers and interfaces claiming a shift by 2."""
    good, other = cyclic_shift(n, 1, 1), cyclic_shift(n, 1, 2)
    bad = Fragment(good.name, good.inner_n, good.inner_d, good.layers, good.entry, good.exit, good.bounds, other.build_spec)
    return good, bad


def test_equal_fragments_with_different_specs_compare_equal() -> None:
    good, bad = _twins()
    assert good == bad and hash(good) == hash(bad)  # the documented behaviour
    assert good.spec().circuit != bad.spec().circuit  # yet their claims differ


@pytest.mark.parametrize("bad_first", [False, True])
def test_each_is_proved_on_its_own_claim_in_either_order(bad_first: bool) -> None:
    good, bad = _twins()
    order = [bad, good, bad] if bad_first else [good, bad, good]
    verdicts = [prove_fragment(f).verdict for f in order]
    want = {id(good): Verdict.PROVED, id(bad): Verdict.REFUTED}
    assert verdicts == [want[id(f)] for f in order]


def test_copies_and_compositions_keep_their_own_spec() -> None:
    good, bad = _twins()
    for f, verdict in ((good, Verdict.PROVED), (bad, Verdict.REFUTED)):
        for twin in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f)):
            assert twin == f and twin.spec().circuit == f.spec().circuit
            assert prove_fragment(twin).verdict is verdict
    stacked_good, stacked_bad = compose(good, identity(3, 1)), compose(bad, identity(3, 1))
    assert stacked_good == stacked_bad
    assert prove_fragment(stacked_good).proved and prove_fragment(stacked_bad).verdict is Verdict.REFUTED
    padded_good, padded_bad = pad(good, 5, 2), pad(bad, 5, 2)
    assert padded_good == padded_bad
    assert standalone(padded_good)[0] != standalone(padded_bad)[0]
    assert prove_fragment(padded_good).proved and prove_fragment(padded_bad).verdict is Verdict.REFUTED
