"""The *halves* selection candidate: copies made in the half of their slot, two Beneš networks of N/2.

Every candidate :func:`symverify.kaleidoscope.selection._halves` returns must compute exactly
``M·z`` on the output positions and 0 everywhere else, and its permutation must never cross the
halves (no Beneš factor of stride ``N/2``). The one circuit of the unseen set that stayed above
the target ``L/(Δ·⌈log2 w⌉) ≤ 9`` (``hubs_w28_D1_seed1``, ``d = 7``) reaches it through this route.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_selection import COEFF, expected, run

from symverify.compiler.h21 import planner
from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.kaleidoscope.selection import _halves, _route_of, _rows, _valid_K, selection_route, selection_size
from symverify.kernel.verification import verify
from symverify.library import wired_circuit
from symverify.mutate import mutate_weight, weight_sites


def _hubs():  # type: ignore[no-untyped-def]
    return wired_circuit(28, 1, "hubs", seed=1, shuffle_outputs=True, d=7)


def test_the_last_hub_circuit_meets_the_target() -> None:
    c = _hubs()
    out = compile_kaleidoscope(c)
    r = out.resources
    assert r["depth"] == 1 and r["width"] == 28
    assert r["layers"] <= 9 * 5  # L/(Δ·⌈log2 w⌉) ≤ 9 (was 46 layers: 9.2)
    assert not out.over_bound()
    assert verify(c, out.model, certificate=out.certificate, method="compositional").proved
    prep = planner.prepare(c)
    first = prep.routes[0]
    assert first is not None and first.route == "selection"
    p = prep.plans[0]
    ents, _ = prep.mats[0]
    wide = selection_route(ents, p.in_pos, p.out_pos, prep.layout.size, room=True)
    assert wide.strategy.startswith("halves")
    assert run(wide.factors, wide.size, p.in_pos) == expected(ents, wide.size)


def test_a_mutated_halves_model_is_refuted() -> None:
    c = _hubs()
    model = compile_kaleidoscope(c).model
    sites = weight_sites(model)
    for site in sites[:: max(1, len(sites) // 10)]:
        assert not verify(c, mutate_weight(model, site, "inc"), method="randomized").proved, site


@st.composite
def low_sources(draw, N: int = 32):  # type: ignore[no-untyped-def]
    """A selection stage at size N whose sources lie below N/2 and whose outputs are anywhere."""
    half = N // 2
    in_pos = draw(st.lists(st.integers(0, half - 1), min_size=1, max_size=10, unique=True))
    out_pos = draw(st.lists(st.integers(0, N - 1), min_size=1, max_size=14, unique=True))
    hot = draw(st.sampled_from(in_pos))
    ents = {}
    for o in out_pos:
        k = draw(st.integers(1, 2))
        pool = in_pos + [hot] * 4
        srcs: list[int] = []
        for _ in range(k):
            j = draw(st.sampled_from(pool))
            if j not in srcs:
                srcs.append(j)
        for j in srcs:
            ents[(o, j)] = draw(COEFF.filter(lambda v: v != 0))
    return ents, in_pos, out_pos


@settings(max_examples=150, deadline=None)
@given(low_sources(), st.sampled_from([32, 64]), st.booleans())
def test_every_halves_candidate_is_exact_and_never_crosses(stage, N, swap) -> None:  # type: ignore[no-untyped-def]
    ents, in_pos, out_pos = stage
    if selection_size(ents, in_pos, out_pos) > N:
        return
    rows = _rows(ents)
    for K in _valid_K(rows, N):
        for choice in _halves(N, K, rows, swap):
            route = _route_of(ents, N, choice, N)
            assert run(route.factors, N, in_pos) == expected(ents, N)  # M·z on the outputs, 0 elsewhere
            # the copy network's first factor and the combine are the only ones that may cross
            pats = choice[3]
            crossing = [s for s, *_ in pats[1:] if s == N // 2]
            assert not crossing, (K, choice[1])


def test_sources_in_the_upper_half_give_no_candidate() -> None:
    rows = _rows({(0, 20): 1, (1, 3): 1})
    assert _halves(32, 8, rows, False) == []


def test_halves_that_overflow_give_no_candidate() -> None:
    # source 0 read by the 16 lower positions, source 1 only by upper ones: source 1 needs a spare
    # copy in the lower half too, 17 slots in 16
    full = {(o, 0): 1 for o in range(16)} | {(o, 1): 1 for o in range(16, 21)}
    assert _halves(32, 16, _rows(full), False) == []
    fits = {k: v for k, v in full.items() if k != (15, 0)}  # 15 + 1 slots: fits
    got = _halves(32, 16, _rows(fits), False)
    assert got and all(choice[1].startswith("halves") for choice in got)
