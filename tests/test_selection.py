"""The selection route (symverify.kaleidoscope.selection): exact, garbage-free, and cheap."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.compiler.butterfly_to_baseconv import simplify_factors
from symverify.errors import CompileError
from symverify.kaleidoscope.selection import (
    _benes,
    _route_records,
    column_counts,
    count_factors,
    is_selection,
    preferred_positions,
    selection_factors,
    selection_route,
    selection_size,
)
from symverify.kernel.ir.butterfly import ButterflyFactor, pair_index
from symverify.kernel.ir.layered import LinearStage

Forms = list[dict[int, Fraction]]


def run(factors: list[ButterflyFactor] | tuple[ButterflyFactor, ...], size: int, in_pos) -> Forms:
    """The factors applied to the unit linear forms on ``in_pos`` (every other position 0)."""
    x: Forms = [{} for _ in range(size)]
    for j in in_pos:
        x[j] = {j: Fraction(1)}
    for f in factors:
        assert f.size == size
        y: Forms = [{} for _ in range(size)]
        for m in range(size // 2):
            p = pair_index(size, f.stride, m)
            q = p + f.stride
            for tgt, a, b in ((p, f.d1[m], f.d2[m]), (q, f.d3[m], f.d4[m])):
                acc: dict[int, Fraction] = {}
                for c, src in ((a, x[p]), (b, x[q])):
                    for k, v in src.items():
                        acc[k] = acc.get(k, 0) + c * v
                y[tgt] = {k: v for k, v in acc.items() if v != 0}
        x = y
    return x


def expected(ents, size: int) -> Forms:
    want: Forms = [{} for _ in range(size)]
    for (o, j), v in ents.items():
        if v != 0:
            want[o][j] = want[o].get(j, 0) + v
    return want


def check(ents, in_pos, out_pos, size=None):
    r = selection_route(ents, in_pos, out_pos, size)
    assert r.size == (size or r.need) and r.need == selection_size(ents, in_pos, out_pos)
    assert all(f.size == r.size for f in r.factors)
    assert run(r.factors, r.size, in_pos) == expected(ents, r.size)  # M·z on the outputs, 0 elsewhere
    simple = simplify_factors(r.factors)
    assert run(simple, r.size, in_pos) == expected(ents, r.size)
    assert r.count == len(simple)
    return r


COEFF = st.sampled_from([0, 1, -1, 2, Fraction(1, 3), Fraction(-5, 2)])


@st.composite
def stages(draw, top: int = 64):
    in_pos = draw(st.lists(st.integers(0, top - 1), min_size=1, max_size=24, unique=True))
    out_pos = draw(st.lists(st.integers(0, top - 1), min_size=0, max_size=24, unique=True))
    hot = draw(st.lists(st.sampled_from(in_pos), min_size=1, max_size=3))  # a few high-fan-out sources
    ents = {}
    for o in out_pos:
        k = draw(st.integers(0, 2))
        pool = in_pos + hot * 4
        srcs = []
        for _ in range(k):
            j = draw(st.sampled_from(pool))
            if j not in srcs:
                srcs.append(j)
        for j in srcs:
            ents[(o, j)] = draw(COEFF)
    return ents, in_pos, out_pos


@given(stages())
def test_random_stages_exact(stage):
    ents, in_pos, out_pos = stage
    check(ents, in_pos, out_pos)


@given(stages(top=16), st.sampled_from([0, 1, 2]))
def test_lifted_exact(stage, extra):
    ents, in_pos, out_pos = stage
    need = selection_size(ents, in_pos, out_pos)
    check(ents, in_pos, out_pos, need << extra)


@given(stages(top=32))
def test_bound(stage):
    ents, in_pos, out_pos = stage
    r = check(ents, in_pos, out_pos)
    n = r.need.bit_length() - 1
    nonzero = {k: v for k, v in ents.items() if v != 0}
    fan = max([sum(1 for (_, j) in nonzero if j == q) for _, q in nonzero] + [1])
    assert r.count <= 4 * n - 1
    if fan == 1:
        assert r.count <= 2 * n


@given(st.lists(st.integers(0, 6), min_size=1, max_size=12), st.data())
def test_preferred_positions_cheap(counts, data):
    """Sources where preferred_positions puts them: ⌈log2 f⌉ copy factors, one Beneš, the combine merged."""
    pos = preferred_positions(counts)
    assert len(set(pos)) == len(pos)
    uses = [q for i, c in enumerate(counts) for q in [pos[i]] * c]
    total = len(uses)
    top = max(pos) + 1
    perm = data.draw(st.permutations(range(total)))
    ents = {}
    for t, j in enumerate(uses):  # output row t // 2 reads use perm[t]: a row may read one source twice
        o = perm[t] // 2 + top
        ents[(o, j)] = ents.get((o, j), 0) + 1 + t % 3
    outs = sorted({o for o, _ in ents})
    r = check(ents, pos, outs)
    n = r.need.bit_length() - 1
    f = max(counts)
    assert r.count <= (f - 1).bit_length() + 2 * n


def test_empty_stage():
    r = check({}, [0, 1, 2], [3])
    assert r.need == 4 and run(r.factors, 4, [0, 1, 2]) == [{}, {}, {}, {}]
    check({}, [], [])
    check({(1, 0): 0}, [0], [1])  # an explicit zero coefficient


def test_single_row():
    check({(0, 1): 3}, [1], [0])
    check({(5, 1): 3, (5, 2): Fraction(-1, 2)}, [1, 2], [5])
    r = check({(0, 0): 1, (0, 1): 1}, [0, 1], [0])
    assert r.need == 2  # size 2: K = 1, o ⊕ 1 = 1 is no output


def test_all_rows_read_one_source():
    ents = {(o, 3): o + 1 for o in range(12)}
    r = check(ents, [3], list(range(12)))
    ents2 = {(o, 3): 1 for o in range(12)} | {(o, 7): -1 for o in range(0, 12, 2)}
    check(ents2, [3, 7], list(range(12)))
    assert r.count <= 4 * (r.need.bit_length() - 1) - 1


def test_size_two_and_identity_like():
    check({(0, 0): 1, (1, 1): 1}, [0, 1], [0, 1])
    check({(0, 1): 1, (1, 0): 1}, [0, 1], [0, 1])
    check({(0, 0): 2, (1, 0): 1}, [0, 1], [0, 1])  # one source read twice, an unused source killed
    check({(1, 0): 1, (1, 1): 1}, [0, 1], [1])


def test_two_entry_rows_crowding_every_stride():
    """Every position an output with two entries: no stride K < N fits, so N doubles."""
    ents = {(o, j): 1 for o in range(8) for j in (o, (o + 3) % 8)}
    assert selection_size(ents, range(8), range(8)) == 16
    check(ents, list(range(8)), list(range(8)))


def test_unused_inputs_are_killed():
    check({(2, 9): 1}, list(range(16)), [2])


def test_too_small_size_and_fan_in_three():
    with pytest.raises(CompileError):
        selection_route({(0, 1): 1, (0, 2): 1, (0, 3): 1}, [1, 2, 3], [0])
    with pytest.raises(CompileError):
        selection_route({(0, 9): 1}, [9], [0], 8)
    assert not is_selection({(0, 1): 1, (0, 2): 1, (0, 3): 1})
    assert is_selection({(0, 1): 1, (0, 2): 1, (0, 3): 0})


def test_selection_factors_matches_route():
    ents = {(0, 4): 1, (1, 4): 2, (2, 5): 1, (2, 4): 1}
    fs = selection_factors(ents, [4, 5], [0, 1, 2], 32)
    assert run(fs, 32, [4, 5]) == expected(ents, 32)


@given(st.integers(1, 5).flatmap(lambda n: st.tuples(st.just(1 << n), st.permutations(range(1 << n)))), st.sampled_from(["up", "down"]))
def test_benes_orientations(np, orient):
    N, perm = np
    fs = _benes(N, dict(enumerate(perm)), orient)
    if N > 2:
        strides = [f.stride for f in fs]
        assert strides[0] == (N // 2 if orient == "down" else 1)
    got = run(fs, N, range(N))
    assert got == [{i: 1} for i in sorted(range(N), key=lambda i: perm[i])]


def test_broadcast_banyan_compact_sources():
    """Lee's broadcast banyan: compact sorted sources, monotone slot intervals, strides N/2 … 1."""
    N = 16
    uses = [3, 1, 5, 2, 4, 1]
    dest, acc = {}, 0
    for t, c in enumerate(uses):
        dest[t] = list(range(acc, acc + c))
        acc += c
    r = _route_records(N, dest, [8, 4, 2, 1])
    assert r is not None
    fs, where = r
    x = run(fs, N, range(len(uses)))
    for t, slots in dest.items():
        for q in slots:
            assert x[q] == {t: 1} and where[q] == t
    assert all(x[q] == {} for q in range(acc, N))


def test_column_counts_of_a_stage():
    stg = LinearStage(1, (10, 11, 12), (20, 21, 22), (((0, 1), (1, 2)), ((0, 1),), ((2, 0),)), (0, 0, 0))
    assert column_counts(stg.rows, len(stg.inputs)) == [2, 1, 0]
    pos = preferred_positions([2, 1, 0])
    assert pos == (0, 2, 3)


def test_count_factors():
    assert count_factors([ButterflyFactor.identity(4, 1)]) == 0


# ---- every candidate on its own (the route keeps only the cheapest) ----------------------------------


@given(stages(top=32), st.booleans())
def test_direct_candidate_exact_when_it_routes(stage, swap):
    """The direct broadcast (sources straight to the operand slots ``o``, ``o ⊕ K``, then the
    combine): whenever bit-fixing does not collide it computes ``M·z`` exactly and nothing else."""
    from symverify.kaleidoscope.selection import _direct, _route_of, _rows, _valid_K

    ents, in_pos, out_pos = stage
    rows = _rows(ents)
    if not rows:
        return
    N = selection_size(ents, in_pos, out_pos)
    n = N.bit_length() - 1
    for K in _valid_K(rows, N):
        got = _direct(N, K, rows, swap)
        if got is None:
            continue
        count, name, k = got[:3]
        fs = list(_route_of(ents, N, got, N).factors)
        assert name.startswith("direct") and k == K and count <= n + 1 and count == count_factors(fs)
        assert run(fs, N, in_pos) == expected(ents, N)


@given(st.lists(st.integers(0, 4), min_size=2, max_size=12), st.sampled_from([16, 32, 64]))
def test_every_copy_candidate_delivers_its_slots(counts, N):
    """Each copy network :func:`_copy_candidates` offers ends with source ``j``'s value on exactly
    its slots (gap-filled compact sources included: the fillers' copies land on other slots)."""
    from symverify.kaleidoscope.selection import _copy_candidates

    uses = {2 * i + (i % 3 == 0): c for i, c in enumerate(counts) if c}  # sources with gaps between them
    if not uses or max(uses) >= N or sum(uses.values()) + max(uses) + 1 > N:
        return
    for name, fs, slots in _copy_candidates(N, uses):
        x = run(fs, N, range(max(uses) + 1))  # the gaps hold values too (unread inputs)
        for j, ss in slots.items():
            assert len(ss) == uses[j], name
            for q in ss:
                assert x[q] == {j: 1}, (name, j, q)
        used = {q for ss in slots.values() for q in ss}
        assert all(x[q] == {} for q in range(N) if q not in used), name  # nothing else moves: no weight is dead


def test_gap_filled_compact_copy_is_offered_and_cheaper_than_concentration():
    """Sources 0, 2, 3, 6 read 3, 2, 3, 1 times: not at aligned blocks, not compact. Filling the
    gaps makes them compact (the broadcast banyan, n factors) instead of concentrating (2n − 1)."""
    from symverify.kaleidoscope.selection import _copy_candidates

    cands = {name: count_factors(fs) for name, fs, _ in _copy_candidates(32, {0: 3, 2: 2, 3: 3, 6: 1})}
    assert "compact, gaps filled" in cands and cands["compact, gaps filled"] <= 5
    assert cands["compact, gaps filled"] < cands["concentrate+compact"]


def test_direct_candidate_routes_a_butterfly_aligned_stage_in_n_plus_one_factors():
    """A case where bit-fixing cannot collide: ``_direct`` returns a route, and it is exact."""
    from symverify.kaleidoscope.selection import _direct, _route_of, _rows

    pairs = {(o, o & ~1): 1 + o % 3 for o in range(8)}  # sources 0, 2, 4, 6, each read by its pair
    got = _direct(16, 8, _rows(pairs), False)
    assert got is not None and got[0] <= 5
    assert run(list(_route_of(pairs, 16, got, 16).factors), 16, [0, 2, 4, 6]) == expected(pairs, 16)
    ents = {(0, 0): 1, (1, 0): 2, (2, 2): 1, (3, 2): 1, (8, 0): 1, (8, 2): -1}  # row 8 = x0 − x2 combines at stride 4
    for swap in (False, True):
        got = _direct(16, 4, _rows(ents), swap)
        assert got is not None, swap
        count, name, K = got[:3]
        fs = list(_route_of(ents, 16, got, 16).factors)
        assert name.startswith("direct")
        assert K == 4 and count <= 5 and run(fs, 16, [0, 2]) == expected(ents, 16)


def test_direct_route_wins_on_a_spread_selection():
    """Two sources each broadcast to a butterfly-aligned set: bit-fixing routes them straight to
    their rows, so the route is n factors plus the combine (no copy network, no Beneš)."""
    ents = {(0, 0): 1, (2, 0): 1, (4, 0): 1, (6, 0): 2, (1, 1): 1, (3, 1): 3}
    r = check(ents, [0, 1], [0, 1, 2, 3, 4, 6])
    assert r.strategy.startswith("direct") and r.count <= 3


@given(st.sampled_from([4, 8, 16, 32]), st.sampled_from(["down", "up"]), st.data())
def test_broadcast_placer_accepts_exactly_the_collision_free_placements(N, order, data):
    """``BroadcastPlacer.fits`` is the bit-fixing simulation's verdict: for random sources and
    distinct destinations, it accepts all pairs at once iff the direct broadcast (strides in
    ``order``) routes them without a collision."""
    from symverify.kaleidoscope.selection import BroadcastPlacer, _route_records

    dests = data.draw(st.lists(st.integers(0, N - 1), min_size=1, max_size=N, unique=True))
    srcs = [data.draw(st.integers(0, N - 1)) for _ in dests]
    placer = BroadcastPlacer(N, order)
    records: dict[int, list[int]] = {}
    for p, t in zip(srcs, dests):
        records.setdefault(p, []).append(t)
    n = N.bit_length() - 1
    strides = [1 << k for k in (reversed(range(n)) if order == "down" else range(n))]
    routed = _route_records(N, {p: sorted(ts) for p, ts in records.items()}, strides)
    assert placer.fits(list(zip(srcs, dests))) == (routed is not None)


def test_broadcast_placer_tracks_what_it_added():
    from symverify.kaleidoscope.selection import BroadcastPlacer

    placer = BroadcastPlacer(8)
    assert placer.fits([(0, 0), (0, 1)]) and placer.fits([(1, 2)])
    placer.add([(0, 0), (0, 1)], reserve=[5])
    assert not placer.fits([(3, 1)])  # taken
    assert not placer.fits([(2, 4)], reserve=[5])  # reserved by the earlier group
    assert not placer.fits([(4, 2)])  # after stride 4 both sit at 0: (2 >> 2, 4 mod 4) is source 0's (0 >> 2, 0 mod 4)
    assert placer.fits([(2, 3)])  # source 2 reaches 3 through 2, which nothing else passes
    assert not placer.fits([(1, 8)]) and not placer.fits([(1, -1)])  # outside the size


def test_broadcast_placer_refuses_a_bad_order_or_size():
    from symverify.kaleidoscope.selection import BroadcastPlacer

    with pytest.raises(CompileError, match=r"order: expected 'down' or 'up', found 'sideways'"):
        BroadcastPlacer(8, "sideways")
    with pytest.raises(CompileError, match=r"power of two ≥ 2, found 12"):
        BroadcastPlacer(12)


def _permutation_benes(N, partial, orientation):
    """The Beneš network of :func:`route_permutation` (``"up"``: conjugated by the bit reversal),
    built factor by factor: the oracle for the switch masks of ``_benes_masks``."""
    from symverify.kaleidoscope.permutation import bit_reversal, complete_permutation, route_permutation
    from symverify.kernel.ir.butterfly import pair_number

    perm = complete_permutation(N, partial)
    if orientation == "down":
        return list(route_permutation(perm).factors)
    r = bit_reversal(N)
    conj = [0] * N
    for i in range(N):
        conj[r[i]] = r[perm[i]]
    out = []
    for f in route_permutation(conj).factors:
        s2 = N // (2 * f.stride)
        d = [[1] * (N // 2), [0] * (N // 2), [0] * (N // 2), [1] * (N // 2)]
        for m in range(N // 2):
            lo = pair_index(N, f.stride, m)
            m2 = pair_number(s2, r[lo])
            for k, diag in enumerate((f.d1, f.d2, f.d3, f.d4)):
                d[k][m2] = diag[m]
        out.append(ButterflyFactor(N, s2, *map(tuple, d)))
    return out


@settings(max_examples=25, deadline=None)
@given(stages(top=32))
def test_each_benes_network_is_routed_once_and_the_route_is_unchanged(stage):
    """Copy networks in both stride orders end on the same slots: selection_route routes each
    Beneš network (partial map, orientation) once, and its route is the one that building and
    simplifying every candidate afresh gives (the cheapest candidate, the first on ties), with
    the Beneš networks of :func:`~symverify.kaleidoscope.permutation.route_permutation`."""
    import symverify.kaleidoscope.selection as sel

    ents, in_pos, out_pos = stage
    if not sel._rows(ents):
        return
    calls: list[tuple[object, ...]] = []
    real = sel._benes_masks

    def counted(N, partial, orient):
        calls.append((N, tuple(partial.items()), orient))
        return real(N, partial, orient)

    sel._chosen.cache_clear()
    sel._benes_masks = counted
    try:
        got = selection_route(ents, in_pos, out_pos)
    finally:
        sel._benes_masks = real
    assert len(calls) == len(set(calls))
    # the reference: every candidate built afresh, in the order selection_route tries them
    rows, N = sel._rows(ents), selection_size(ents, in_pos, out_pos)
    uses: dict[int, int] = {}
    for r in rows.values():
        for j, _ in r:
            uses[j] = uses.get(j, 0) + 1
    valid = sel._valid_K(rows, N)
    direct = sel._best_direct(N, rows, valid)
    best = None if direct is None else (direct[0], direct[1], direct[2], list(sel._route_of(ents, N, direct, N).factors))
    for _, copy_fs, slots in sel._copy_candidates(N, uses):
        for K in sorted(set(valid[-4:] + valid[:1]), reverse=True):
            nxt = {j: iter(s) for j, s in slots.items()}
            partial, second = {}, {}
            for o, r in rows.items():
                for k, (j, _) in enumerate(r):
                    partial[next(nxt[j])] = o if k == 0 else o ^ K
                if len(r) == 2:
                    second[o] = 1
            for orient in ("down", "up"):
                fs = copy_fs + _permutation_benes(N, partial, orient) + [sel._combine(N, K, rows, second)]
                c = len(simplify_factors(fs))
                if best is None or c < best[0]:
                    best = (c, orient, K, fs)
    assert best is not None and got.factors == tuple(best[3]) and got.K == best[2]
