"""A proof instance's resources and bounds are read-only once the instance has checked them: an
edit after the fact (a script or plugin setting ``inst.resources["layers"] = 10**9``, or raising a
bound so that an over-bound claim reads ok) cannot change ``ok``, the table or the JSON."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.scripts.protocol import Instance, ProofResult

EDITS: list[tuple[str, Callable[[Any], Any]]] = [
    ("raise a value", lambda m: m.__setitem__("layers", 10**9)),
    ("add a key", lambda m: m.__setitem__("extra", 0)),
    ("delete a key", lambda m: m.__delitem__("layers")),
    ("update", lambda m: m.update({"layers": 0})),
    ("pop", lambda m: m.pop("layers")),
    ("popitem", lambda m: m.popitem()),
    ("clear", lambda m: m.clear()),
    ("setdefault", lambda m: m.setdefault("new", 1)),
]


def _claims() -> list[Instance]:
    return [Instance.computed("within", True, "an exact comparison", "exact", resources={"layers": 3}, bounds={"layers": 4}),
            Instance.computed("over", True, "an exact comparison", "exact", resources={"layers": 9}, bounds={"layers": 4}),
            Instance.argued("argued", "docs/theory.md § 5", checks=True, resources={"layers": 3}, bounds={"layers": 4})]


def _seen(inst: Instance) -> tuple[bool, list[str], str]:
    result = ProofResult("s", "S", [inst])
    return inst.ok, inst.over_bound(), json.dumps(result.to_json(), sort_keys=True) + result.table()


@pytest.mark.parametrize("part", ["resources", "bounds"])
@pytest.mark.parametrize(("what", "edit"), EDITS, ids=[w for w, _ in EDITS])
def test_an_edit_after_the_check_is_refused_and_changes_nothing(part: str, what: str, edit: Callable[[Any], Any]) -> None:
    for inst in _claims():
        before = _seen(inst)
        with pytest.raises(TypeError, match="read-only"):
            edit(getattr(inst, part))
        assert _seen(inst) == before, (inst.name, part, what)


def test_an_over_bound_claim_cannot_be_made_to_read_ok() -> None:
    """The attack: a plugin lowers a resource or raises the bound of a claim over its bound."""
    over = _claims()[1]
    assert not over.ok and over.over_bound() == ["layers"]
    with pytest.raises(TypeError, match="read-only"):
        over.resources["layers"] = 1  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        over.bounds["layers"] = 10**9  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        over.bounds |= {"layers": 10**9}  # type: ignore[operator]
    result = ProofResult("s", "S", [over])
    assert not over.ok and not result.ok and result.to_json()["instances"][0]["over_bound"] == ["layers"]


def test_the_callers_dict_is_not_the_instances() -> None:
    mine = {"layers": 3}
    inst = Instance.computed("x", True, "an exact comparison", "exact", resources=mine, bounds={"layers": 4})
    mine["layers"] = 10**9
    assert inst.resources == {"layers": 3} and inst.ok


def test_a_renamed_claim_and_copies_keep_read_only_tables() -> None:
    for inst in _claims():
        for other in (inst.renamed("again"), pickle.loads(pickle.dumps(inst)), copy.deepcopy(inst), copy.copy(inst)):
            assert other.resources == inst.resources and other.bounds == inst.bounds and other.ok == inst.ok
            with pytest.raises(TypeError, match="read-only"):
                other.resources["layers"] = 0  # type: ignore[index]
        assert dict(inst.resources) == inst.resources and json.dumps(inst.resources)  # still a dict to read


@settings(max_examples=60, deadline=None)
@given(resources=st.dictionaries(st.text(min_size=1, max_size=4), st.integers(-10, 10), max_size=4),
       bounds=st.dictionaries(st.text(min_size=1, max_size=4), st.integers(-10, 10), max_size=4),
       key=st.text(min_size=1, max_size=4), value=st.integers(-10**12, 10**12), part=st.sampled_from(["resources", "bounds"]))
def test_no_edit_changes_ok_or_the_json(resources: dict[str, int], bounds: dict[str, int], key: str, value: int,
                                        part: str) -> None:
    inst = Instance.computed("x", True, "an exact comparison", "exact", resources=resources, bounds=bounds)
    before = _seen(inst)
    with pytest.raises(TypeError, match="read-only"):
        getattr(inst, part)[key] = value
    assert _seen(inst) == before
