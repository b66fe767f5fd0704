"""``Report`` and ``MethodResult`` compare by everything they state, not by how long it took:
``timings`` is left out of ``==`` and the hash, as out of the seal (as ``seconds`` is on the
provers' own outcome classes), and kept by pickling and the JSON form."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify import library as lib
from symverify.errors import ProverError
from symverify.kernel.provers import outcome
from symverify.kernel.provers.outcome import Verdict

times = st.dictionaries(st.text(max_size=8), st.floats(0, 1e6, allow_nan=False), max_size=4)


@pytest.fixture(scope="module")
def report():
    c = lib.determinant(2)
    return sv.verify(c, c, method="exact")


def test_two_runs_of_one_check_compare_equal(report):
    c = lib.determinant(2)
    again = sv.verify(c, c, method="exact")
    assert again == report
    slower = replace(report, timings={k: v + 1.0 for k, v in report.timings.items()})  # the times are not sealed
    assert slower.timings != report.timings
    assert slower == report and not (slower != report)


@settings(max_examples=30, deadline=None)
@given(a=times, b=times)
def test_a_method_result_compares_without_its_times(a, b):
    ev = {"monomials_compared": 3}
    assert outcome.proved("exact", ev, timings=a) == outcome.proved("exact", ev, timings=b)
    assert outcome.unknown("exact", notes=("budget",), timings=a) == outcome.unknown("exact", notes=("budget",),
                                                                                     timings=b)


def test_what_a_result_states_still_tells_two_apart(report):
    assert outcome.proved("exact", {"monomials_compared": 3}) != outcome.proved("exact", {"monomials_compared": 4})
    assert outcome.unknown("exact", notes=("budget",)) != outcome.unknown("exact", notes=("timeout",))
    assert outcome.proved("exact") != outcome.proved("z3")
    other = sv.verify(lib.determinant(2), lib.determinant(2), method="exact-sympy")
    assert other.proved and other != report  # another method, other evidence
    refuted = sv.verify(lib.prefix_sums(4), lib.product_tree(4), method="exact")
    assert refuted.verdict is Verdict.REFUTED and refuted != report


def test_pickling_and_json_keep_the_times_and_the_seal(report):
    slower = replace(report, timings={"total": 12.5})
    back = pickle.loads(pickle.dumps(slower))
    assert back == report and back.timings == {"total": 12.5} and back.proved
    assert slower.to_json()["timings"] == {"total": 12.5} and json.loads(json.dumps(slower.to_json()))
    with pytest.raises(ProverError, match="made only by"):  # equality never stood in for the seal
        replace(report, notes=("forged",))


def test_a_report_hashes_as_it_compares():
    """The hash leaves the times out as ``==`` does, and the dict fields (evidence, side statistics)
    besides: equal reports of other times hash alike, so a set keeps one of them."""
    rep = sv.verify(lib.determinant(2), lib.determinant(2), method="exact")
    slower = replace(rep, timings={"total": 12.5})
    assert slower == rep and hash(slower) == hash(rep) and len({rep, slower}) == 1
