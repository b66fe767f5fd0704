"""The H.21 planner's fast paths agree with what they replace.

* :class:`~symverify.kaleidoscope.selection.BroadcastPlacer` (owner arrays, :meth:`fits_many`)
  gives the verdicts of the dictionary placer it replaced (kept here as the oracle) and of the
  bit-fixing simulation, on random sequences of groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kaleidoscope.selection import BroadcastPlacer, _route_records


class _DictPlacer:
    """The placer as first written: one dictionary entry per (level, key), every pair re-checked."""

    def __init__(self, N: int, order: str) -> None:
        self.N, self.n, self.order = N, N.bit_length() - 1, order
        self.taken: set[int] = set()
        self.owner: dict[tuple[int, int, int], int] = {}

    def _keys(self, src: int, dest: int) -> list[tuple[int, int, int]]:
        if self.order == "down":
            return [(b, dest >> b, src & ((1 << b) - 1)) for b in range(1, self.n)]
        return [(b, src >> (b + 1), dest & ((2 << b) - 1)) for b in range(self.n - 1)]

    def fits(self, pairs: Sequence[tuple[int, int]], reserve: Sequence[int] = ()) -> bool:
        dests = [t for _, t in pairs] + list(reserve)
        if len(set(dests)) != len(dests) or any(not 0 <= t < self.N or t in self.taken for t in dests):
            return False
        seen: dict[tuple[int, int, int], int] = {}
        for src, t in pairs:
            for key in self._keys(src, t):
                own = self.owner.get(key, seen.get(key, src))
                if own != src:
                    return False
                seen[key] = src
        return True

    def add(self, pairs: Sequence[tuple[int, int]], reserve: Sequence[int] = ()) -> None:
        for src, t in pairs:
            self.taken.add(t)
            for key in self._keys(src, t):
                self.owner[key] = src
        self.taken.update(reserve)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 32]), st.sampled_from(["down", "up"]), st.data())
def test_placer_matches_the_dictionary_placer_and_fits_many(N, order, data):
    """Random groups (1–4 pairs, sources in range, destinations a little beyond it, reserved
    cells) offered in turn: ``fits`` agrees with the dictionary placer, ``fits_many`` over every
    shift of the group agrees with ``fits`` at each shift, and accepted groups are added to both."""
    new, old = BroadcastPlacer(N, order), _DictPlacer(N, order)
    for _ in range(data.draw(st.integers(1, 8))):
        k = data.draw(st.integers(1, 4))
        srcs = [data.draw(st.integers(0, N - 1)) for _ in range(k)]
        offs = [data.draw(st.integers(0, N)) for _ in range(k)]
        xors = [data.draw(st.sampled_from([0, 1, N // 2])) for _ in range(k)]
        hold = data.draw(st.lists(st.integers(0, N), max_size=2))
        starts = np.arange(N, dtype=np.int64)
        many = new.fits_many([(p, (starts + off) ^ x) for p, off, x in zip(srcs, offs, xors)], [starts + h for h in hold])
        for o in range(N):
            pairs = [(p, (o + off) ^ x) for p, off, x in zip(srcs, offs, xors)]
            res = [o + h for h in hold]
            want = old.fits(pairs, res)
            assert new.fits(pairs, res) == want
            assert bool(many[o]) == want
        o = data.draw(st.integers(0, N - 1))
        pairs = [(p, (o + off) ^ x) for p, off, x in zip(srcs, offs, xors)]
        if old.fits(pairs, [o + h for h in hold]):
            old.add(pairs, [o + h for h in hold])
            new.add(pairs, [o + h for h in hold])
    assert new.taken == old.taken


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([4, 8, 16, 32]), st.sampled_from(["down", "up"]), st.data())
def test_groups_the_placer_accepts_route_without_collision(N, order, data):
    """Everything the placer accepted, group by group, is routed by the bit-fixing simulation
    (strides in ``order``) without a collision."""
    placer = BroadcastPlacer(N, order)
    records: dict[int, list[int]] = {}
    for _ in range(data.draw(st.integers(1, 10))):
        pairs = [(data.draw(st.integers(0, N - 1)), data.draw(st.integers(0, N - 1))) for _ in range(data.draw(st.integers(1, 3)))]
        if placer.fits(pairs):
            placer.add(pairs)
            for p, t in pairs:
                records.setdefault(p, []).append(t)
    n = N.bit_length() - 1
    strides = [1 << k for k in (reversed(range(n)) if order == "down" else range(n))]
    assert _route_records(N, {p: sorted(ts) for p, ts in records.items()}, strides) is not None


def test_fits_many_without_arrays_is_one_candidate():
    placer = BroadcastPlacer(8)
    assert placer.fits_many([(0, 0), (0, 1)]).tolist() == [True]
    placer.add([(0, 0)])
    assert placer.fits_many([(1, 0)]).tolist() == [False]
    assert placer.fits_many([(1, np.array([0, 2, 9]))]).tolist() == [False, True, False]
