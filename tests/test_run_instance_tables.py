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


def _refutation() -> Instance:
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    from symverify.kernel.provers.matrix import verify_matrix

    check = verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    return Instance.from_report("swap = id", check)


@pytest.mark.parametrize(("what", "edit"), [
    ("set a key", lambda c: c.__setitem__("found", 1)),
    ("delete a key", lambda c: c.__delitem__("expected")),
    ("update", lambda c: c.update({"found": 1})),
    ("set an entry", lambda c: c["entry"].__setitem__(0, 2)),
    ("append", lambda c: c["entry"].append(2)),
    ("extend", lambda c: c["entry"].extend([2])),
    ("+=", lambda c: c["entry"].__iadd__([2])),
    ("*=", lambda c: c["entry"].__imul__(2)),
    ("sort", lambda c: c["entry"].sort()),
    ("pop", lambda c: c["entry"].pop()),
    ("clear", lambda c: c["entry"].clear()),
])
def test_a_counterexample_is_read_only_too(what: str, edit: Callable[[Any], Any]) -> None:
    """A refutation's counterexample, as the run JSON and JUnit show it, cannot be changed after the
    claim was made (``counterexample["found"] = 1`` would show the two values agreeing)."""
    inst = _refutation()
    assert inst.counterexample == {"entry": [0, 0], "found": 0, "expected": 1}
    before = _seen(inst)
    with pytest.raises(TypeError, match="read-only"):
        edit(inst.counterexample)
    assert _seen(inst) == before and inst.counterexample == {"entry": [0, 0], "found": 0, "expected": 1}
    for other in (pickle.loads(pickle.dumps(inst)), copy.deepcopy(inst), inst.renamed("again")):
        assert other.counterexample == inst.counterexample
        with pytest.raises(TypeError, match="read-only"):
            edit(other.counterexample)


def test_a_counterexample_is_a_copy_of_its_own() -> None:
    """What the script passed, changed later, changes nothing; a list met at several places is
    copied once (a counterexample may share lists: their size counts as written, not as held)."""
    from symverify.scripts.protocol import ReadOnlyList, _frozen_json

    shared: list[Any] = [1, [2]]
    frozen = _frozen_json({"a": shared, "b": shared, "t": (3, 4)}, {})
    shared.append(5)
    shared[1].append(6)
    assert frozen == {"a": [1, [2]], "b": [1, [2]], "t": [3, 4]} and frozen["a"] is frozen["b"]
    assert isinstance(frozen["t"], ReadOnlyList) and json.dumps(frozen) == '{"a": [1, [2]], "b": [1, [2]], "t": [3, 4]}'


@pytest.mark.parametrize("part", ["name", "detail", "basis"])
def test_a_lone_surrogate_in_an_instances_text_is_refused_where_it_is_made(part: str) -> None:
    """UTF-8 cannot hold it: the script's table crashed on print with a UnicodeEncodeError (and the
    JSON was refused on reading back), far from the instance."""
    from symverify.errors import UsageError

    kw = {"name": "x", "detail": "", "basis": "an exact comparison", part: "bad \ud800 text"}
    with pytest.raises(UsageError, match=rf"instance .*: {part}: expected Unicode text, found a lone surrogate \\ud800 "
                                         r"at position 4"):
        Instance.computed(kw["name"], True, kw["basis"], "exact", detail=kw["detail"])


def test_a_script_with_such_a_name_is_a_crashed_row_naming_it(tmp_path: Any) -> None:
    from symverify.scripts.runner import available, run_scripts

    (tmp_path / "sur.py").write_text(
        "from symverify.scripts.protocol import Instance, ProofResult, script_main\nTITLE = 's'\n"
        "def run(quick=False):\n    return ProofResult('sur', TITLE, [Instance.computed('bad \\ud800', True, 'c', 'exact')])\n"
        "if __name__ == '__main__':\n    raise SystemExit(script_main(run))\n", encoding="utf-8")
    row = run_scripts(available([tmp_path]), ["sur"]).outcomes[0]
    assert row.status == "crashed" and "name: expected Unicode text, found a lone surrogate \\ud800" in row.error, row.error
