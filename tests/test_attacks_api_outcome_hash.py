"""``hash()`` of the outcome classes: a ``Report``, a ``MethodResult`` and a ``ForallResult`` are
hashable (their hash leaves out the dict fields, as a ``FragmentProof``'s does), and equal outcomes
hash alike, so a set or a dict keyed by reports works (:mod:`symverify.kernel.provers.outcome`)."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.forall import ForallResult
from symverify.kernel.provers.outcome import Verdict, proved, seal_outcome, unknown

_SQ = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
_TWICE = Circuit(1, 1, (Gate.add(0, 0),), (1,))


@pytest.mark.parametrize("method", ["exact", "randomized"])
def test_reports_are_hashable_and_equal_ones_hash_alike(method):
    """``hash(report)`` raised a bare ``TypeError: unhashable type: 'dict'``."""
    reports = [sv.verify(_SQ, _SQ, method=method), sv.verify(_SQ, _TWICE, method=method)]
    for r in reports:
        for twin in (copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
            assert twin == r and hash(twin) == hash(r)
    assert len({*reports, *map(copy.deepcopy, reports)}) == 2


def test_method_and_forall_results_are_hashable():
    a = unknown("randomized", {"p": [7, 11]}, notes=("budget",))
    assert hash(a) == hash(copy.deepcopy(a)) and len({a, copy.deepcopy(a), proved("exact", {})}) == 2
    f = seal_outcome(ForallResult("g", Verdict.REFUTED, "n in [1, 4]", {"n": 2}, (0, 0), "1 vs 2", stats={"t": [1]}))
    assert hash(f) == hash(copy.deepcopy(f)) and {f: 1}[pickle.loads(pickle.dumps(f))] == 1


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.text(max_size=3), st.integers() | st.lists(st.integers(), max_size=2), max_size=3),
       st.sampled_from(["a", "b"]))
def test_equal_results_hash_alike(evidence, note):
    """Whatever the evidence (lists included), two equal results have equal hashes."""
    a, b = unknown("m", dict(evidence), notes=(note,)), unknown("m", dict(evidence), notes=(note,))
    assert a == b and hash(a) == hash(b)
