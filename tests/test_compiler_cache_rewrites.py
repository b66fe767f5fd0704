"""The compiler's memos hand out what no caller can rewrite for the next one: the H.21 routes
(``routes._routed`` through ``stage_route``), the selection choices (``selection._chosen`` through
``selection_route``/``selection_shape``) and the emitter's pruning notes (``prune._NOTED``). A bad
compile would be caught by ``verify``; a memo passing one caller's rewrite to the next is a bug
all the same."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from symverify.compiler.h21 import routes
from symverify.compiler.h21.stages import StagePlan
from symverify.compiler.prune import note_pruned, prune_structural_zeros
from symverify.kaleidoscope import selection
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.layered import LinearStage
from symverify.kernel.semantics.support import prune_layer


def _mutable_parts(x: Any, path: str = "", seen: set[int] | None = None) -> list[str]:
    """Where ``x`` holds a list, dict, set, writable array or non-frozen dataclass (tuples, frozensets
    and frozen dataclasses walked into)."""
    seen = set() if seen is None else seen
    if id(x) in seen:
        return []
    seen.add(id(x))
    if isinstance(x, (list, dict, set, bytearray)) or (isinstance(x, np.ndarray) and x.flags.writeable):
        return [f"{path}: {type(x).__name__}"]
    if isinstance(x, (tuple, frozenset)):
        return [p for y in x for p in _mutable_parts(y, path + "[]", seen)]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        if not type(x).__dataclass_params__.frozen:  # type: ignore[attr-defined]
            return [f"{path}: {type(x).__name__}"]
        return [p for f in dataclasses.fields(x) for p in _mutable_parts(getattr(x, f.name), f"{path}.{f.name}", seen)]
    return []


def _plans() -> list[StagePlan]:
    """Linear stages of every route kind: a selection, a sum of three, a diagonal, a zero map."""
    rows = [((0, 1), (1, 1)), ((1, 2), (2, 1), (3, Fraction(1, 2))), ((2, 3),), ()]
    out = []
    for k, r in enumerate(rows):
        stage = LinearStage(0, (0, 1, 2, 3), (100 + k,), (r,), (k % 2,))
        out.append(StagePlan(stage, (0, 1, 2, 3), (5,)))
    sel = LinearStage(0, (0, 1, 2), (100, 101, 102), (((0, 1), (2, 1)), ((1, -1),), ((0, 2), (1, 1))), (0, 0, 0))
    out.append(StagePlan(sel, (3, 0, 6), (1, 2, 7)))
    return out


@pytest.mark.parametrize("k", range(5))
def test_a_stage_route_holds_nothing_mutable_and_a_rewrite_is_no_later_callers(k: int) -> None:
    p = _plans()[k]
    first = routes.stage_route(p, 8)
    assert _mutable_parts(first) == []
    want = (first.route, first.bbstar, first.factors)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.factors = ()  # type: ignore[misc]
    object.__setattr__(first, "factors", ())  # past the frozen dataclass
    object.__setattr__(first, "bbstar", -1)
    again = routes.stage_route(p, 8)
    assert (again.route, again.bbstar, again.factors) == want and again is not first


def test_a_selection_choice_holds_nothing_mutable_and_its_routes_are_built_per_call() -> None:
    ents = {(0, 0): 1, (0, 2): 1, (1, 1): -1, (2, 0): 2, (2, 1): 1}
    key = selection._ents_key(ents)
    assert _mutable_parts(selection._chosen(key, (), (), 4)) == []
    shape = selection.selection_shape(ents)
    assert type(shape) is tuple and all(type(s) is tuple for s in shape)
    first = selection.selection_route(ents)
    want = first.factors
    object.__setattr__(first, "factors", ())
    again = selection.selection_route(ents)
    assert again.factors == want and selection.selection_shape(ents) == shape


def test_a_pruning_note_is_not_rewritten_through_the_supports_given() -> None:
    """The emitter's note of a layer holds the support it leaves; a caller rewriting the sets it gave
    after noting (here: clearing them) changed the support the pass took on to the next layer, which
    then lost a weight that reads a possibly nonzero cell."""
    full = Grid.full(2, 2, 1)
    copy = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(0, 0): 1, (0, 1): 1}), b2=full)
    reads_1 = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(1, 0): 1}), b2=full)
    model = Model(2, 1, 2, 2, (copy, reads_1))
    start = (frozenset({0, 1}), frozenset())
    pruned, after = prune_layer(copy, start)
    assert pruned == copy and after[1]  # the first layer keeps every weight and fills column 1
    fresh = prune_structural_zeros(model)
    assert fresh.layers[1].W.nonzero() == {(1, 0): 1}
    given = [set(s) for s in after]
    note_pruned(model, {0: (copy, start, given)})
    for s in given:
        s.clear()
    assert prune_structural_zeros(model) == fresh
