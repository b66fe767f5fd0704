"""Theorem H.21 compiler: a stage that needs an expensive copy network routes at twice the size.

A hub read by every gate beside sources read once fills every copy slot of its stage's own size,
so its copy network is a concentration and a broadcast banyan (``2n − 1`` factors). At twice the
size, still within the stated ``N_k = 4·2^⌈log2 w⌉``, the sources and their gaps fit the banyan
(``n`` factors): the planner takes the doubled layout when its routes take fewer layers in all.
"""

from __future__ import annotations

import pytest

from symverify.compiler.h21 import planner, routes
from symverify.compiler.h21.size import stated_size
from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.kaleidoscope.selection import EXPENSIVE_COPIES, selection_route
from symverify.kernel.ir.analysis import cut_width
from symverify.kernel.kaleidoscope.apply import apply
from symverify.kernel.verification import verify
from symverify.library import wired_circuit
from symverify.mutate import mutate_weight, weight_sites


def _hub():  # type: ignore[no-untyped-def]
    return wired_circuit(32, 1, "hub", seed=0)


def test_the_hub_stage_takes_the_doubled_layout_and_fewer_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    c = _hub()
    prep = planner.prepare(c)
    assert prep.layout.size == 128 == stated_size(cut_width(c))
    first = prep.plans[0]
    assert routes.expensive_copy(first)
    wide = compile_kaleidoscope(c)
    monkeypatch.setattr(planner, "expensive_copy", lambda p: False)  # the layout of the stages' own size
    narrow = compile_kaleidoscope(c)
    assert narrow.resources["N_k"] == 64 and wide.resources["N_k"] == 128
    assert (narrow.resources["layers"], wide.resources["layers"]) == (46, 38)  # 42 before the halves route
    assert not wide.over_bound()
    for out in (wide, narrow):
        assert verify(c, out.model, certificate=out.certificate, method="compositional").proved


def test_the_wide_route_is_exact_and_garbage_free() -> None:
    prep = planner.prepare(_hub())
    p = prep.plans[0]
    ents, _ = prep.mats[0]
    own = selection_route(ents, p.in_pos, p.out_pos, 128)
    wide = selection_route(ents, p.in_pos, p.out_pos, 128, room=True)
    assert own.strategy.startswith(EXPENSIVE_COPIES) and (own.need, wide.need) == (64, 128)
    assert wide.count < own.count
    x = [j + 1 if j in set(p.in_pos) else 0 for j in range(128)]  # a state supported on the inputs
    want = [0] * 128
    for (i, j), v in ents.items():
        want[i] += v * x[j]
    for route in (own, wide):
        y = x
        for f in route.factors:
            y = apply(f, y, full=True)
        assert list(y) == want  # every output, and 0 everywhere else


def test_no_room_means_the_own_size() -> None:
    prep = planner.prepare(_hub())
    p = prep.plans[0]
    ents, _ = prep.mats[0]
    assert selection_route(ents, p.in_pos, p.out_pos, 64, room=True).need == 64  # 2N does not fit


def test_a_mutated_wide_model_is_refuted() -> None:
    c = _hub()
    model = compile_kaleidoscope(c).model
    sites = weight_sites(model)
    for site in sites[:: max(1, len(sites) // 12)]:
        assert not verify(c, mutate_weight(model, site, "inc"), method="randomized").proved, site


def test_circuits_without_expensive_copies_keep_their_size() -> None:
    for wiring in ("random", "permutation", "reversal"):
        c = wired_circuit(32, 1, wiring, seed=0)
        prep = planner.prepare(c)
        assert not any(routes.expensive_copy(p) for p in prep.plans if not p.is_mul), wiring


def test_max_cells_keeps_the_own_size() -> None:
    """The doubled layout is taken only within ``max_cells``: held to the narrow layout's cells,
    the compiler emits the narrow one instead of refusing."""
    c = _hub()
    wide = compile_kaleidoscope(c)
    cap = wide.model.inner_n * wide.model.inner_d - 1
    narrow = compile_kaleidoscope(c, max_cells=cap)
    assert narrow.resources["N_k"] == 64 and narrow.resources["layers"] > wide.resources["layers"]
    assert verify(c, narrow.model, certificate=narrow.certificate, method="compositional").proved
