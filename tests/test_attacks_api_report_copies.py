"""Attacks on ``verify``'s ``Report`` through copies and pickles: a copy or a pickle of a sealed report
is the same sealed report, and one whose verdict, failure bound or a sealed field was changed is
refused where it is rebuilt, as a ``Report`` built by hand is (:mod:`symverify.kernel.verification`)."""

from __future__ import annotations

import copy
import copyreg
import pickle

import pytest

import symverify as sv
from symverify.errors import ProverError
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.outcome import is_sealed

_SQ = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
_TWICE = Circuit(1, 1, (Gate.add(0, 0),), (1,))


def _tampered() -> sv.Report:
    report = copy.copy(sv.verify(_SQ, _TWICE))
    assert report.refuted
    object.__setattr__(report, "verdict", sv.Verdict.PROVED)
    return report


@pytest.mark.parametrize("rebuild", ["pickle", "copy", "deepcopy"])
def test_a_copy_or_pickle_of_a_relabelled_report_is_refused(rebuild):
    """A refuted report relabelled ``proved`` and pickled loaded as a ``Report`` whose ``proved`` was
    True, the seal checked by nobody; it is rebuilt by the constructor, which refuses it."""
    report = _tampered()
    with pytest.raises(ProverError, match=r"a proved Report is made only by verify"):
        if rebuild == "pickle":
            pickle.loads(pickle.dumps(report))
        else:
            getattr(copy, rebuild)(report)


def test_a_report_changed_in_place_is_refused_when_copied():
    report = sv.verify(_SQ, _SQ)
    report.evidence["monomials_compared"] = 0  # type: ignore[index]
    with pytest.raises(ProverError, match=r"had one of its sealed fields \(evidence, .*\) replaced or changed"):
        copy.deepcopy(report)


@pytest.mark.parametrize("method", ["exact", "randomized"])
def test_copies_and_pickles_of_sealed_reports_are_sealed_and_equal(method):
    for report in (sv.verify(_SQ, _SQ, method=method), sv.verify(_SQ, _TWICE, method=method)):
        for twin in (pickle.loads(pickle.dumps(report)), copy.copy(report), copy.deepcopy(report)):
            assert is_sealed(twin) and twin == report and twin.verdict is report.verdict
            assert twin.to_json() == report.to_json()


def _object_form(report: sv.Report, **changed: object) -> bytes:
    """A pickle of ``report`` in the default object form (``copyreg``'s: an empty ``Report`` whose
    fields are then set from a dict), as pickles written without ``Report.__reduce__`` have it."""
    state = {**vars(report), **changed}

    class Old:
        def __reduce__(self) -> tuple[object, ...]:
            return copyreg._reconstructor, (sv.Report, object, None), state  # type: ignore[attr-defined]

    return pickle.dumps(Old(), protocol=2)


def test_a_pickle_in_the_object_form_of_a_relabelled_report_is_refused():
    """Such a pickle set the fields without the constructor: a refuted report relabelled ``proved``
    loaded as one, its seal checked by nobody."""
    blob = _object_form(sv.verify(_SQ, _TWICE), verdict=sv.Verdict.PROVED, counterexample=None)
    with pytest.raises(ProverError, match=r"a proved Report is made only by verify"):
        pickle.loads(blob)


def test_a_pickle_in_the_object_form_of_a_sealed_report_loads_as_it():
    for report in (sv.verify(_SQ, _SQ), sv.verify(_SQ, _TWICE)):
        twin = pickle.loads(_object_form(report))
        assert is_sealed(twin) and twin == report and twin.timings == report.timings


@pytest.mark.parametrize("state", [[], {"verdict": "proved", "extra": 1}, {1: 2}])
def test_a_pickle_in_the_object_form_with_other_state_is_refused(state):
    class Odd:
        def __reduce__(self) -> tuple[object, ...]:
            return copyreg._reconstructor, (sv.Report, object, None), state  # type: ignore[attr-defined]

    blob = pickle.dumps(Odd(), protocol=2)
    with pytest.raises(ProverError, match=r"a pickled Report: expected a dict of its fields \['verdict', "):
        pickle.loads(blob)
