"""Attacks on the sealed outcome classes through copies and pickles (:class:`~symverify.kernel.provers.outcome.Sealed`):
a copy or a pickle of a sealed outcome is the same sealed outcome, and one whose verdict or a sealed
field was changed is refused where it is rebuilt, so a relabelled ``proved`` never loads."""

from __future__ import annotations

import copy
import pickle

import pytest

from symverify.errors import ProverError
from symverify.kernel.provers.compositional import CompositionalResult
from symverify.kernel.provers.forall import ForallResult
from symverify.kernel.provers.fragment import FragmentProof
from symverify.kernel.provers.matrix import KaleidoscopeCheck
from symverify.kernel.provers.outcome import (
    Counterexample,
    Verdict,
    is_sealed,
    proved,
    refuted,
    seal_outcome,
    unknown,
)


def _cex() -> Counterexample:
    return Counterexample(((1, 2),), (("w", 3),), (0, 0), 1, 2)


def _sealed() -> dict[str, object]:
    """One sealed outcome of each class, made by its door."""
    return {
        "MethodResult unknown": unknown("randomized", {"p": 7}, notes=("budget",)),
        "MethodResult refuted": refuted("exact", {}, _cex()),
        "MethodResult proved": proved("exact", {"monomials_compared": 3}),
        "CompositionalResult": seal_outcome(CompositionalResult(False, 1, 2, notes=("stopped",))),
        "FragmentProof": seal_outcome(FragmentProof("frag", False, None, "certificate stage 1")),
        "KaleidoscopeCheck": seal_outcome(KaleidoscopeCheck(Verdict.REFUTED, "exact-matrix", 2, 2, 1, False,
                                                            (0, 1, 0, 1))),
        "ForallResult": seal_outcome(ForallResult("g", Verdict.UNKNOWN, "n in [1, 4]", detail="z3 unknown")),
    }


_RELABEL = {  # the field a forger changes to turn the outcome into a proof (or into another claim)
    "MethodResult unknown": ("verdict", Verdict.PROVED),
    "MethodResult refuted": ("verdict", Verdict.PROVED),
    "MethodResult proved": ("method", "exact-matrix"),
    "CompositionalResult": ("ok", True),
    "FragmentProof": ("compositional", True),
    "KaleidoscopeCheck": ("verdict", Verdict.PROVED),
    "ForallResult": ("verdict", Verdict.PROVED),
}


def _rebuild(how: str, obj: object) -> object:
    if how == "pickle":
        return pickle.loads(pickle.dumps(obj))
    return getattr(copy, how)(obj)


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
@pytest.mark.parametrize("name", sorted(_RELABEL))
def test_a_relabelled_outcome_is_refused_when_copied_or_unpickled(name, how):
    """A pickle of an outcome relabelled ``proved`` loaded with its verdict changed (``proved`` True,
    the seal checked by nobody until ``Instance.from_report``); it is rebuilt and refused."""
    obj = _sealed()[name]
    field_name, value = _RELABEL[name]
    object.__setattr__(obj, field_name, value)
    with pytest.raises(ProverError, match=r"is made only by"):
        _rebuild(how, obj)


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_a_result_changed_in_place_is_refused_when_copied(how):
    res = seal_outcome(ForallResult("g", Verdict.REFUTED, "n in [1, 4]", {"n": 2}, (0, 0), "1 vs 2"))
    res.params["n"] = 3  # type: ignore[index]
    with pytest.raises(ProverError, match=r"sealed fields \(gadget, ranges, .*\) replaced or changed"):
        _rebuild(how, res)


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
@pytest.mark.parametrize("name", sorted(_RELABEL))
def test_copies_and_pickles_of_sealed_outcomes_are_sealed_and_equal(name, how):
    obj = _sealed()[name]
    twin = _rebuild(how, obj)
    assert type(twin) is type(obj) and is_sealed(twin) and twin == obj
    assert twin.verdict is obj.verdict  # type: ignore[attr-defined]


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_an_unsealed_outcome_stays_unsealed(how):
    """One built by hand (no seal) copies as it is: still unsealed, so ``Instance.from_report`` refuses it."""
    twin = _rebuild(how, ForallResult("g", Verdict.PROVED, "n in [1, 4]"))
    assert twin.verdict is Verdict.PROVED and not is_sealed(twin)


def test_a_pickle_naming_another_class_or_other_fields_is_refused():
    from symverify.kernel.provers.outcome import _rebuild as rebuild

    with pytest.raises(ProverError, match=r"rebuilt only as a sealed outcome class, found <class 'dict'>"):
        rebuild(dict, ())
    with pytest.raises(ProverError, match=r"rebuilt from the fields \[.*\], found \['gadget'\]"):
        rebuild(ForallResult, (("gadget", "g"),))


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_a_verdict_replaced_by_its_string_is_refused_with_a_clear_error(how):
    """A ``ForallResult`` whose verdict was set to the string ``"proved"`` (equal to
    ``Verdict.PROVED``) made the refusal itself fail with ``AttributeError`` ('str' has no ``value``)."""
    res = seal_outcome(ForallResult("g", Verdict.UNKNOWN, "n in [1, 4]"))
    object.__setattr__(res, "verdict", "proved")
    with pytest.raises(ProverError, match=r"a proved ForallResult is made only by its prover"):
        _rebuild(how, res)


def _object_form(obj: object, **changed: object) -> bytes:
    """A pickle of ``obj`` in ``copyreg``'s object form (an empty object whose fields a dict then
    sets), as a pickle written without :meth:`Sealed.__reduce__` has it."""
    import copyreg

    state = {**vars(obj), **changed}

    class Old:
        def __reduce__(self) -> tuple[object, ...]:
            return copyreg._reconstructor, (type(obj), object, None), state  # type: ignore[attr-defined]

    return pickle.dumps(Old(), protocol=2)


@pytest.mark.parametrize("name", sorted(_RELABEL))
def test_an_object_form_pickle_of_a_relabelled_outcome_is_refused_and_a_sealed_one_loads(name):
    """Such a pickle set the fields behind the constructor: a relabelled outcome loaded as it was
    written, its seal checked by nobody (``Sealed.__setstate__`` rebuilds it)."""
    obj = _sealed()[name]
    twin = pickle.loads(_object_form(obj))
    assert is_sealed(twin) and twin == obj
    field_name, value = _RELABEL[name]
    with pytest.raises(ProverError, match=r"is made only by"):
        pickle.loads(_object_form(obj, **{field_name: value}))
    with pytest.raises(ProverError, match=rf"a pickled {type(obj).__name__}: expected a dict of its fields"):
        pickle.loads(_object_form(obj, extra=1))
