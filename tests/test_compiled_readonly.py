"""A Compiled's resources and bounds are read-only after validation, and still pickle, copy and compare."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.compiler import Compiled, compile
from symverify.compiler.result import MODEL_RESOURCES, ReadOnlyMapping
from symverify.kernel.ir.circuit import Circuit, Gate

OUT = compile(Circuit(2, 1, (Gate.mul(0, 1),), (2,)), method="dense")


@pytest.mark.parametrize("part", ["resources", "bounds"])
def test_a_compiled_mapping_refuses_every_change(part: str) -> None:
    m = getattr(OUT, part)
    before = (dict(OUT.resources), dict(OUT.bounds), OUT.over_bound())
    with pytest.raises(TypeError, match="does not support item assignment"):
        m["layers"] = 1  # type: ignore[index]
    with pytest.raises(TypeError, match="does not support item deletion"):
        del m["layers"]  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="does not support item assignment"):
        m["extra"] = 0  # type: ignore[index]
    for name, args in (("update", ({"layers": 0},)), ("pop", ("layers",)), ("clear", ()), ("setdefault", ("x", 0)),
                       ("popitem", ())):
        with pytest.raises(TypeError, match="read-only"):
            getattr(m, name)(*args)
    with pytest.raises(TypeError, match="read-only"):
        m |= {"layers": 0}  # type: ignore[misc]
    m.__init__({"layers": 0})  # type: ignore[misc]  # the items were set once, by __new__: this changes nothing
    with pytest.raises(AttributeError, match="read-only"):
        m._items = {}  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="read-only"):
        del m._items  # type: ignore[attr-defined]
    assert (dict(OUT.resources), dict(OUT.bounds), OUT.over_bound()) == before


def test_lowering_layers_or_adding_a_bound_after_the_fact_is_impossible() -> None:
    """The attack of the report: with plain dicts, ``resources["layers"] = 0`` or a new bound
    changed ``over_bound()`` of a frozen result."""
    over = Compiled(OUT.model, None, {"layers": 9}, "dense", {"layers": 5})
    assert over.over_bound() == ["layers"]
    with pytest.raises(TypeError):
        over.resources["layers"] = 0  # type: ignore[index]
    with pytest.raises(TypeError):
        OUT.bounds["nonzero_params"] = 0  # type: ignore[index]
    assert over.over_bound() == ["layers"] and OUT.over_bound() == []


def test_a_table_is_a_dict_for_json_and_copies() -> None:
    """Being a dict, a table goes through ``json.dumps`` and the dict idioms as before; copies are
    plain, mutable dicts."""
    import json

    assert isinstance(OUT.resources, dict)
    assert json.loads(json.dumps(OUT.resources)) == dict(OUT.resources)
    for twin in (OUT.resources.copy(), OUT.resources | {"x": 1}, {**OUT.resources}, dict(OUT.resources)):
        assert type(twin) is dict
        twin["layers"] = 0


def test_the_caller_s_dict_is_copied() -> None:
    res, bounds = {"layers": len(OUT.model.layers)}, {"layers": 5}
    out = Compiled(OUT.model, None, res, "dense", bounds)
    res["layers"], bounds["layers"] = 99, 1
    bounds["x"] = 0
    assert dict(out.resources) == {"layers": len(OUT.model.layers)} and dict(out.bounds) == {"layers": 5} and out.over_bound() == []


def test_pickle_copy_equality_and_json_are_as_before() -> None:
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(OUT, protocol=proto))
        assert back == OUT and type(back.resources) is ReadOnlyMapping and type(back.bounds) is ReadOnlyMapping
        assert back.to_json() == OUT.to_json()
        with pytest.raises(TypeError):
            back.resources["layers"] = 0  # type: ignore[index]
    for twin in (copy.copy(OUT), copy.deepcopy(OUT), dataclasses.replace(OUT)):
        assert twin == OUT and twin.over_bound() == OUT.over_bound()
    assert OUT.resources == dict(OUT.resources) and dict(OUT.bounds) == OUT.bounds  # equals a plain dict
    assert OUT != dataclasses.replace(OUT, resources={**OUT.resources, "layers": 99})
    assert dataclasses.asdict(OUT)["resources"] == dict(OUT.resources)
    js = OUT.to_json()
    assert type(js["resources"]) is dict and js["resources"] == dict(OUT.resources) and js["bounds"] == dict(OUT.bounds)
    assert repr(OUT.resources) == repr(dict(OUT.resources))
    with pytest.raises(TypeError, match="unhashable"):
        hash(OUT.resources)


def test_replace_makes_a_changed_validated_copy() -> None:
    lower = dataclasses.replace(OUT, resources={**OUT.resources, "layers": 10**6})
    assert lower.over_bound() == ["layers"] and OUT.over_bound() == []
    assert type(lower.resources) is ReadOnlyMapping


numbers = st.one_of(st.integers(-10**30, 10**30), st.fractions(max_denominator=10**6),
                    st.floats(allow_nan=False, allow_infinity=False))
# the model's own resources (``layers`` …) may not be stated below the model's values (a CompileError,
# tested elsewhere): keys here are other names, which any number may take
mappings = st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k not in MODEL_RESOURCES), numbers, max_size=6)


@settings(max_examples=60, deadline=None)
@given(resources=mappings, bounds=mappings)
def test_any_numbers_round_trip_through_pickle(resources: dict, bounds: dict) -> None:
    out = Compiled(OUT.model, None, resources, "dense", bounds)
    back = pickle.loads(pickle.dumps(out))
    assert back == out and dict(back.resources) == resources and dict(back.bounds) == bounds
    assert list(back.resources) == list(resources)  # the order too (to_json and str list in it)
    assert back.over_bound() == out.over_bound() == [k for k, b in bounds.items() if k not in resources or resources[k] > b]
    assert all(type(back.resources[k]) is type(v) for k, v in resources.items())
    assert "no such key" not in back.resources and back.resources.get("no such key") is None


def _kernel_results() -> list[tuple[str, object]]:
    from symverify.gadgets.primitives import identity
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope

    return [("fragment", identity(3, 2)), ("factorization", permutation_to_kaleidoscope([2, 0, 1]))]


@pytest.mark.parametrize(("what", "obj"), _kernel_results())
def test_fragment_and_factorization_tables_are_read_only_and_pickle(what: str, obj: object) -> None:
    """A fragment's stated bounds and a factorization's resources and bounds cannot be changed
    after the fact (``over_bound()`` would change with them), and both results pickle (the
    factorization's tables were ``mappingproxy`` objects, which do not)."""
    tables = ["bounds"] + (["resources"] if what == "factorization" else [])
    for part in tables:
        m = getattr(obj, part)
        assert type(m) is ReadOnlyMapping
        with pytest.raises(TypeError, match="does not support item assignment"):
            m["layers"] = 10**6
    back = pickle.loads(pickle.dumps(obj))
    assert back == obj if what == "fragment" else back.kaleidoscope == obj.kaleidoscope  # type: ignore[attr-defined]
    for part in tables:
        assert type(getattr(back, part)) is ReadOnlyMapping and getattr(back, part) == getattr(obj, part)
    assert copy.deepcopy(obj) is not obj
