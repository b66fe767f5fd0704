"""The H.21 planner's fast paths agree with what they replace.

* :class:`~symverify.kaleidoscope.selection.BroadcastPlacer` (owner arrays, :meth:`fits_many`)
  gives the verdicts of the dictionary placer it replaced (kept here as the oracle) and of the
  bit-fixing simulation, on random sequences of groups.
* The layers the planner counts from a route's shape, without building it, are those of the
  route built, on every route kind; the Beneš switch masks are those of ``route_permutation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kaleidoscope.selection import BroadcastPlacer, _route_records, selection_route, selection_shape
from symverify.kaleidoscope.simplify import is_diagonal, simplify_factors
from symverify.kernel.ir.layered import LinearStage


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


# ---- counting a route's layers without building it --------------------------------------------------

_COEFFS = [1, 1, 1, -1, 2, Fraction(1), Fraction(1, 2), Fraction(-3, 2)]


@st.composite
def _stage(draw, kinds=("selection", "permutation", "diagonal", "sparse")):
    """A linear stage with its input and output positions, of a random kind: rows of at most two
    entries (a selection), one entry per row and column (a scaled permutation, some rows the
    identity), the positions unmoved (a diagonal), or rows of up to four entries (the sparse route)."""
    kind = draw(st.sampled_from(kinds))
    n_in = draw(st.integers(1, 6))
    n_out = n_in if kind in ("permutation", "diagonal") else draw(st.integers(1, 6))
    cells = st.integers(0, 15)
    in_pos = draw(st.lists(cells, min_size=n_in, max_size=n_in, unique=True))
    if kind == "diagonal":
        out_pos = list(in_pos)
    else:
        out_pos = draw(st.lists(cells, min_size=n_out, max_size=n_out, unique=True))
    rows = []
    if kind in ("permutation", "diagonal"):
        order = list(range(n_in)) if kind == "diagonal" else draw(st.permutations(range(n_in)))
        for r in range(n_out):
            rows.append(((order[r], draw(st.sampled_from(_COEFFS))),))
    else:
        most = 2 if kind == "selection" else 4
        for _ in range(n_out):
            slots = draw(st.lists(st.integers(0, n_in - 1), max_size=min(most, n_in), unique=True))
            rows.append(tuple((j, draw(st.sampled_from(_COEFFS))) for j in slots))
    offset = tuple(draw(st.sampled_from([0, 0, 0, 1])) for _ in range(n_out))
    stage = LinearStage(0, tuple(range(n_in)), tuple(range(100, 100 + n_out)), tuple(rows), offset)
    return stage, tuple(in_pos), tuple(out_pos)


def _built_shape(factors):
    return tuple((f.stride, is_diagonal(f)) for f in simplify_factors(factors))


@settings(max_examples=150, deadline=None)
@given(_stage(), st.integers(1, 4))
def test_route_shape_is_the_built_routes_shape(case, tw):
    """On every route kind: the shape the planner counts (:func:`_stage_shape`, no factor built for
    a selection route) is the (stride, diagonal) sequence of the route really built and simplified,
    and the layers counted from it are those of the built factors."""
    from symverify.compiler.h21 import routes
    from symverify.compiler.h21.stages import StagePlan
    from symverify.compiler.layout import axis_of

    stage, in_pos, out_pos = case
    p = StagePlan(stage, in_pos, out_pos)
    routes._shaped.cache_clear()
    built = routes._routed.__wrapped__(stage, in_pos, out_pos, None, routes._types(stage))
    assert routes._stage_shape(p) == _built_shape(built.factors)
    for fused in (False, True):
        axes = [axis_of(f, tw) for f in built.factors]
        want = sum(1 if a == "diagonal" else 2 for a in axes)
        if not fused and ((axes and axes[-1] == "channel") or any(o != 0 for o in stage.offset)):
            want += 1
        assert routes._stage_layers(p, tw, fused) == want


@settings(max_examples=150, deadline=None)
@given(_stage(kinds=("selection",)))
def test_selection_shape_matches_the_built_selection_route(case):
    """:func:`selection_shape` (masks only, memoised) is the shape of :func:`selection_route`'s
    built factors, and the memo does not confuse ``1`` with ``Fraction(1)``."""
    from symverify.compiler.h21.routes import stage_matrix
    from symverify.compiler.h21.stages import StagePlan

    stage, in_pos, out_pos = case
    ents, _ = stage_matrix(StagePlan(stage, in_pos, out_pos))
    route = selection_route(ents, in_pos, out_pos)
    assert selection_shape(ents, in_pos, out_pos) == _built_shape(route.factors)
    as_fraction = {k: Fraction(v) for k, v in ents.items()}
    assert selection_shape(as_fraction, in_pos, out_pos) == _built_shape(selection_route(as_fraction, in_pos, out_pos).factors)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 32]), st.data())
def test_benes_switches_are_route_permutations(N, data):
    """The switch masks of ``benes_swaps`` are the switches of :func:`route_permutation`."""
    from symverify.kaleidoscope.permutation import benes_swaps, route_permutation

    perm = data.draw(st.permutations(range(N)))
    want = []
    for f in route_permutation(perm).factors:
        lows = [p for p, _ in f.pairs()]
        want.append((f.stride, sum(1 << p for m, p in enumerate(lows) if f.d2[m] == 1)))
    assert benes_swaps(perm) == want


def test_a_product_the_masks_cannot_decide_is_built():
    """Two terms meeting in one entry (which could cancel) or two coefficients ≠ 1 (which could
    multiply to 1): the mask algebra refuses, and the candidate is built instead."""
    import pytest

    from symverify.kaleidoscope.selection import _shape, _UnsureError

    full = (1 << 4) - 1
    mix = (1, full, 0, full, 0)  # every pair [[1, 1], [1, 1]]
    with pytest.raises(_UnsureError):
        _shape(4, [mix, mix])
    scaled = (2, full, full, 0, 0)  # a diagonal of coefficients ≠ 1, twice
    with pytest.raises(_UnsureError):
        _shape(4, [scaled, scaled])
    assert _shape(4, [(2, full, 0, 0, 0)]) == ()  # the identity
    assert _shape(4, [scaled]) == ((1, True),)
