"""symverify.kaleidoscope.selection: every copy network ``_copy_patterns`` offers really puts the
copies of each source on the slots it names, and *concentrate+compact* (the network that replaced
the Beneš last resort, which could never be reached) is offered for every fan-out map.

The oracle is an independent simulation of the 0/1 patterns (:data:`~symverify.kaleidoscope.selection.Pat`):
``out[q] = x[q]`` where bit ``q`` of ``straight`` is set, ``x[q ⊕ s]`` where bit ``q`` of ``cross``
is, else 0. A network that loses, duplicates or misplaces a copy fails it.
"""

import random
import sys

import pytest

from symverify.kaleidoscope import selection


def simulate(N: int, pats, start: dict[int, object]) -> list[object]:
    x: list[object] = [None] * N
    for p, v in start.items():
        x[p] = v
    for s, straight, ne1, cross, cne1 in pats:
        assert ne1 == 0 and cne1 == 0  # copy networks are 0/1
        x = [x[q] if straight >> q & 1 else x[q ^ s] if cross >> q & 1 else None for q in range(N)]
    return x


def random_uses(rng: random.Random, N: int) -> dict[int, int]:
    uses: dict[int, int] = {}
    total = 0
    for j in sorted(rng.sample(range(N), rng.randint(1, N))):
        u = rng.randint(1, 3)
        if total + u > N:
            break
        uses[j] = u
        total += u
    return uses


@pytest.mark.parametrize("N", [2, 4, 8, 16, 32])
def test_every_copy_network_delivers_its_copies(N):
    """_copy_patterns: for random fan-outs, each candidate's simulated output holds source j on
    exactly its named slots; concentrate+compact is always among the candidates (the argument in the
    code: a monotone concentration never collides in the butterfly)."""
    rng = random.Random(N)
    for _ in range(300 if N <= 16 else 100):
        uses = random_uses(rng, N)
        if not uses:
            continue
        cands = selection._copy_patterns(N, uses)
        assert "concentrate+compact" in [name for name, _, _ in cands], uses
        for name, pats, slots in cands:
            out = simulate(N, pats, {j: j for j in uses})
            for j, ts in slots.items():
                assert len(ts) == uses[j], (name, uses)
                assert all(out[t] == j for t in ts), (name, uses, j, ts, out)


def test_the_worst_spread_still_routes():
    """Sources at the top of N, copies filling all of N: the in-place and strided networks would
    run past N and are not offered; concentrate+compact is, and delivers."""
    N = 16
    uses = {15: 4, 14: 4, 13: 4, 12: 4}
    cands = dict((name, (pats, slots)) for name, pats, slots in selection._copy_patterns(N, uses))
    pats, slots = cands["concentrate+compact"]
    out = simulate(N, pats, {j: j for j in uses})
    assert slots == {12: [0, 1, 2, 3], 13: [4, 5, 6, 7], 14: [8, 9, 10, 11], 15: [12, 13, 14, 15]}
    assert out == [t // 4 + 12 for t in range(16)]
    assert not any(name.startswith(("in place", "strided")) for name in cands)


def test_no_sources_no_copies():
    """_copy_patterns (no sources): every candidate names no slots and moves nothing."""
    cands = selection._copy_patterns(8, {})
    assert cands and all(slots == {} for _, _, slots in cands)
    assert all(simulate(8, pats, {}) == [None] * 8 for _, pats, _ in cands)


def test_route_masks_refuses_a_slot_named_twice_or_negative():
    """_route_masks: a record naming one slot twice, or a negative slot, cannot end as one copy per
    slot: None, not a wrong network."""
    up = [1, 2, 4]
    assert selection._route_masks(8, {0: [1, 1]}, up) is None
    assert selection._route_masks(8, {0: [-1]}, up) is None
    assert selection._route_masks(8, {0: [1, 2]}, up) is not None


def test_route_masks_ignores_records_bound_nowhere():
    """_route_masks: a record with no slots is not routed (and blocks nothing)."""
    up = [1, 2, 4]
    with_empty = selection._route_masks(8, {3: [], 0: [0, 1]}, up)
    without = selection._route_masks(8, {0: [0, 1]}, up)
    assert with_empty is not None and with_empty == without


def test_route_masks_refuses_a_route_that_does_not_fix_every_bit():
    """_route_masks: with strides that leave a bit unfixed a record does not end on its slot:
    None."""
    assert selection._route_masks(8, {0: [4]}, [1, 2]) is None
    assert selection._route_masks(8, {0: [4]}, [1, 2, 4]) is not None


def test_candidate_shape_from_built_factors_agrees_with_the_patterns(monkeypatch):
    """_candidate: when the patterns cannot decide a product (never for this module's routes), the
    shape comes from the built, simplified factors. Forcing that path on every candidate of a few
    stages must give the same chosen routes and the same factor shapes as the pattern computation
    (an independent computation of the same thing)."""
    from fractions import Fraction

    stages = [
        ({(0, 1): 1, (0, 2): Fraction(1, 2), (1, 3): 1, (2, 1): 3}, [1, 2, 3], [0, 1, 2]),
        ({(0, 0): 1, (0, 1): 1, (1, 0): 2, (2, 1): 1, (3, 0): 1, (3, 1): -1}, [0, 1], [0, 1, 2, 3]),
        ({(5, 7): 1, (2, 7): 1, (6, 0): 4}, [0, 7], [2, 5, 6]),
    ]
    key = selection._ents_key

    def clear():
        for f in (selection._chosen, selection._chosen_at):
            if hasattr(f, "cache_clear"):
                f.cache_clear()

    def choices():
        clear()
        return [selection._chosen(key(e), tuple(i), tuple(o), 4) for e, i, o in stages]

    expected = choices()

    real_shape = selection._shape
    forced = []

    def unsure(*a, **k):  # only _candidate's calls: the direct route's pruning keeps the real one
        if sys._getframe(1).f_code.co_name == "_candidate":
            forced.append(1)
            raise selection._UnsureError
        return real_shape(*a, **k)

    monkeypatch.setattr(selection, "_shape", unsure)
    try:
        assert choices() == expected
        assert forced  # the fallback did run
    finally:
        clear()
