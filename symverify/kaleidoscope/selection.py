"""Stage matrices with at most two entries per row: a copy network, one permutation, one combine.

A linear stage of the layered form (:mod:`symverify.kernel.ir.layered`) is a matrix ``M`` on positions
whose rows have fan-in ≤ 2 while a column (a source) may be read any number of times. Such an
``M`` is a *selection* (every operand slot reads one source; fan-out allowed) followed by a pairwise
combine, and a selection is a monotone copy network followed by one permutation. On ``N = 2^n``
positions this module builds, in application order:

1. **Copy network** (``n`` factors at most, often fewer): every used source ``j`` (fan-out
   ``c_j``) becomes ``c_j`` copies at a set of *copy slots*. The copies are routed by bit-fixing
   on the butterfly: a record (a value and the set of slots it must reach) at position ``p`` meets
   stride ``b`` at the pair ``(p & ~b, p | b)`` and goes to the side(s) whose bit ``b`` its slots
   have; a record whose slots have both values of bit ``b`` is broadcast (block ``[[1, 0], [1, 0]]``
   or ``[[0, 1], [0, 1]]``). Two layouts are tried, with both stride orders:

   * *in place*: source ``j`` keeps the slots ``j … j + c_j − 1``. When every used source sits at
     the start of an aligned block of ``2^⌈log2 c_j⌉`` positions holding no other used source
     (the layout :func:`preferred_positions` gives), strides ``1, 2, …`` broadcast inside the
     blocks: ``⌈log2 f⌉`` factors for the largest fan-out ``f``, none when ``f = 1``;
   * *spread*: monotone intervals as close to their sources as the order allows (forwards and
     backwards); often collision-free when the sources form a few compact runs (the products and
     the ``v3`` block a multiplicative stage leaves), at ``n`` factors or fewer;
   * *compact*: the slots ``0 … s − 1`` (``s = nnz``) in the order of the source positions, strides
     ``N/2 … 1`` (the broadcast banyan network of Lee 1988: compact sorted sources with monotone
     slot intervals never collide), optionally after a *concentration* ``1 … N/2`` that moves the
     used sources, in order, to ``0 … m − 1`` (an order-preserving compaction never collides
     either; Nassimi and Sahni 1981). That is ``2n − 1`` factors (the two stride-``N/2`` factors merge).

   * *compact, gaps filled*: sources in order with gaps between them (unread inputs) get a
     placeholder record of one slot for every empty position below the last source, so the
     sources are compact and the broadcast banyan applies (``n`` factors instead of ``2n − 1``)
     when ``nnz`` plus the gaps fit in ``N``. The placeholders are routed but never moved (no
     weight carries them), so every weight still moves a value some output needs.
   * *compact from the first source, gaps filled*: the same with placeholders only for the gaps
     between the first and the last read source (slots from 0 or from the first source), for
     sources such as gathered input cells whose low cells are unread; it is simulated and kept
     only when it does not collide.

   Every route is simulated; a collision drops that candidate. The last resort, a Beneš
   permutation (Dao et al. Theorem 2, :func:`~symverify.kaleidoscope.permutation.route_permutation`)
   to ``0 … m − 1`` followed by the compact broadcast, cannot collide.
2. **One permutation** (Beneš, ``2n`` factors, ``2n − 1`` once the two stride-1 factors merge; in
   the orientation ``N/2 … 1 … N/2`` or, conjugated by the bit reversal, ``1 … N/2 … 1``): the
   copies of the operands of output row ``o`` go to ``o`` and ``o ⊕ K``, where ``K`` is a power of
   two with ``o ⊕ K`` not an output position for any row with two entries.
3. **One combine factor** of stride ``K``: ``out[o] = a·x[o] + b·x[o ⊕ K]`` (``a·x[o]`` for a row
   with one entry), every other position 0. It multiplies into the permutation's last factor when
   the strides agree (``K = N/2`` with the first orientation).

The combine zeroes every position that is not an output, so the product is exact and
garbage-free: for any ``z`` supported on the input positions it is ``M·z`` on the output
positions and 0 everywhere else below ``N``; lifted to a larger size (``diag(F, I)``) the
positions above ``N`` stay 0.

**Bound** (after :func:`~symverify.kaleidoscope.simplify.simplify_factors`): with ``f``
the largest fan-out, at most ``min(c + 2n, 4n − 1)`` non-identity factors, where ``c = ⌈log2 f⌉``
for sources at aligned block starts, ``c = n`` for sources in order at ``0 … m − 1`` (or anywhere
the broadcast banyan does not collide) and, in general, ``c = 2n − 1`` (concentration, then
broadcast; the Beneš last resort, never needed in the tests and sweeps, costs ``3n − 2``);
``2n`` when no source is read twice (the Beneš and the combine). ``N`` is the least
power of two above every input and output position and ``nnz`` (the copy slots), doubled when
no stride ``K < N`` separates the two-entry rows from the other outputs (:func:`selection_size`).

**Direct** (:func:`_direct`): before any copy network, every source is broadcast by bit-fixing
straight to the operand slots ``o`` and ``o ⊕ K`` of the rows that read it (either stride order,
either operand of a two-entry row at ``o``), then the combine: ``n + 1`` factors or fewer when it
does not collide, which small and structured stages often allow.

Candidates (direct at every valid ``K``, or layout × stride order × orientation × ``K``) are
compared by their simplified factor count; the cheapest is returned. Whether the direct route
collides depends only on where the operand slots are, so a compiler free to choose them can
choose them for it: :class:`BroadcastPlacer` accepts output positions one group at a time
exactly when the direct route stays collision-free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from symverify.errors import CompileError
from symverify.kaleidoscope.permutation import complete_permutation, route_permutation
from symverify.kaleidoscope.simplify import simplify_factors
from symverify.kernel.ir.butterfly import ButterflyFactor, next_power_of_two, pair_number
from symverify.kernel.ir.scalar import Scalar, is_zero

__all__ = [
    "SelectionRoute",
    "selection_route",
    "direct_route",
    "selection_factors",
    "selection_size",
    "is_selection",
    "column_counts",
    "preferred_positions",
    "count_factors",
    "BroadcastPlacer",
]

Ents = Mapping[tuple[int, int], Scalar]


@dataclass(frozen=True)
class SelectionRoute:
    """A route: the factors (application order) at ``size``, the size the route was built at
    (``need``), the copy-network strategy and the stride ``K`` of the combine."""

    size: int
    need: int
    factors: tuple[ButterflyFactor, ...]
    strategy: str
    K: int

    @property
    def count(self) -> int:
        """Non-identity factors after merging (what the compiler emits)."""
        return count_factors(self.factors)


def count_factors(factors: Sequence[ButterflyFactor]) -> int:
    """The number of factors :func:`~symverify.kaleidoscope.simplify.simplify_factors` keeps."""
    return len(simplify_factors(factors))


def is_selection(ents: Ents) -> bool:
    """True when every row has at most two nonzero entries (the shape this module routes)."""
    rows: dict[int, int] = {}
    for (i, _), v in ents.items():
        if not is_zero(v):
            rows[i] = rows.get(i, 0) + 1
    return all(c <= 2 for c in rows.values())


def _rows(ents: Ents) -> dict[int, list[tuple[int, Scalar]]]:
    rows: dict[int, list[tuple[int, Scalar]]] = {}
    for (i, j), v in sorted(ents.items()):
        if not is_zero(v):
            rows.setdefault(i, []).append((j, v))
    for i, r in rows.items():
        if len(r) > 2:
            raise CompileError(f"selection route: output position {i} has {len(r)} entries, expected at most 2")
    return rows


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _valid_K(rows: Mapping[int, list[tuple[int, Scalar]]], N: int) -> list[int]:
    """Strides ``K < N`` with ``o ⊕ K`` not an output position for every two-entry row ``o``."""
    two = [o for o, r in rows.items() if len(r) == 2]
    out: list[int] = []
    K = 1
    while K < N:
        if all((o ^ K) not in rows for o in two):
            out.append(K)
        K *= 2
    return out


def selection_size(ents: Ents, in_pos: Sequence[int] = (), out_pos: Sequence[int] = ()) -> int:
    """The size ``N`` :func:`selection_route` builds at (a power of two ≥ 2): the least one above
    every position and ``nnz``, doubled when no combine stride fits (module docstring)."""
    rows = _rows(ents)
    nnz = sum(len(r) for r in rows.values())
    top = max([q + 1 for q in (*in_pos, *out_pos)] + [i + 1 for i in rows] + [j + 1 for r in rows.values() for j, _ in r] + [nnz, 2])
    N = next_power_of_two(top)
    return N if _valid_K(rows, N) else 2 * N


# ---- the copy network: bit-fixing of records ------------------------------------------------------


def _route_records(N: int, records: Mapping[int, Sequence[int]], strides: Sequence[int],
                   ghosts: AbstractSet[int] = frozenset()) -> tuple[list[ButterflyFactor], dict[int, int]] | None:
    """Route records ``{position: sorted destination slots}`` through factors of ``strides`` by
    bit-fixing (module docstring); ``None`` on a collision or when a record does not end on its
    slots. Returns the factors and ``{slot: start position of its record}``. The records starting
    at ``ghosts`` take their slots (so the others are routed as if they moved) but the factors do
    not move them: their values are dropped at the first factor."""
    cur: dict[int, tuple[list[int], int]] = {p: (list(d), p) for p, d in records.items() if d}
    half = N // 2
    factors: list[ButterflyFactor] = []
    for b in strides:
        d = [[0] * half for _ in range(4)]
        nxt: dict[int, tuple[list[int], int]] = {}
        for p, (dest, origin) in cur.items():
            lo = [t for t in dest if not t & b]
            hi = [t for t in dest if t & b]
            low_pos = p & ~b
            m = pair_number(b, low_pos)
            from_high = 1 if p & b else 0
            for part, to_high in ((lo, 0), (hi, 1)):
                if not part:
                    continue
                q = low_pos | (b if to_high else 0)
                if q in nxt:
                    return None
                nxt[q] = (part, origin)
                if origin not in ghosts:
                    d[2 * to_high + from_high][m] = 1  # d1: lo←lo, d2: lo←hi, d3: hi←lo, d4: hi←hi
        cur = nxt
        factors.append(ButterflyFactor(N, b, *map(tuple, d)))
    where: dict[int, int] = {}
    for p, (dest, origin) in cur.items():
        if dest != [p]:
            return None
        where[p] = origin
    return factors, where


def _copy_candidates(N: int, uses: Mapping[int, int]) -> list[tuple[str, list[ButterflyFactor], dict[int, list[int]]]]:
    """Copy networks for sources ``{position: fan-out}``: ``(name, factors, {source: copy slots})``."""
    n = _log2(N)
    up = [1 << k for k in range(n)]
    down = list(reversed(up))
    srcs = sorted(uses)
    out: list[tuple[str, list[ButterflyFactor], dict[int, list[int]]]] = []

    def add(name: str, pre: list[ButterflyFactor], start: Mapping[int, int], dest: Mapping[int, list[int]], strides: Sequence[int]) -> bool:
        r = _route_records(N, {start[j]: dest[j] for j in srcs}, strides)
        if r is None:
            return False
        fs, _ = r
        out.append((name, pre + fs, {j: dest[j] for j in srcs}))
        return True

    here = {j: j for j in srcs}
    inplace = {j: list(range(j, j + uses[j])) for j in srcs}
    slots = sorted(t for s in inplace.values() for t in s)
    if len(set(slots)) == len(slots) and (not slots or slots[-1] < N):
        for order, strides in (("up", up), ("down", down)):
            add(f"in place {order}", [], here, inplace, strides)
    spread: dict[int, list[int]] = {}  # monotone intervals, each as close to its source as order allows
    acc = 0
    for j in srcs:
        acc = max(acc, j)
        spread[j] = list(range(acc, acc + uses[j]))
        acc += uses[j]
    if acc <= N and spread != inplace:
        for order, strides in (("up", up), ("down", down)):
            add(f"spread {order}", [], here, spread, strides)
    back: dict[int, list[int]] = {}
    end = N
    for j in reversed(srcs):
        end = min(end, j + uses[j])
        back[j] = list(range(end - uses[j], end))
        end -= uses[j]
    if end >= 0 and back != inplace and back != spread:
        for order, strides in (("up", up), ("down", down)):
            add(f"spread back {order}", [], here, back, strides)
    compact: dict[int, list[int]] = {}
    acc = 0
    for j in srcs:
        compact[j] = list(range(acc, acc + uses[j]))
        acc += uses[j]
    add("compact", [], here, compact, down)
    if srcs and srcs[-1] + 1 > len(srcs):  # sources with gaps: fill them so the sources are compact
        filled: dict[int, list[int]] = {}
        acc = 0
        for p in range(srcs[-1] + 1):
            filled[p] = list(range(acc, acc + uses.get(p, 1)))
            acc += uses.get(p, 1)
        if acc <= N:
            r = _route_records(N, filled, down, ghosts=set(filled) - set(uses))
            if r is None:
                raise AssertionError("internal: the broadcast banyan collided on compact sorted sources")
            out.append(("compact, gaps filled", r[0], {j: filled[j] for j in srcs}))
    if srcs and srcs[0] > 0 and srcs[-1] + 1 - srcs[0] > len(srcs):  # the gaps between the sources only
        for base in (0, srcs[0]):
            inner: dict[int, list[int]] = {}
            acc = base
            for p in range(srcs[0], srcs[-1] + 1):
                inner[p] = list(range(acc, acc + uses.get(p, 1)))
                acc += uses.get(p, 1)
            if acc <= N:
                r = _route_records(N, inner, down, ghosts=set(inner) - set(uses))
                if r is not None:
                    out.append((f"compact from {srcs[0]}, gaps filled", r[0], {j: inner[j] for j in srcs}))
    ranks = {j: r for r, j in enumerate(srcs)}
    conc = _route_records(N, {j: [ranks[j]] for j in srcs}, up)
    if conc is not None and add("concentrate+compact", conc[0], ranks, compact, down):
        pass
    elif not out:  # last resort: a Beneš permutation to the ranks, then the compact broadcast
        perm = list(route_permutation(complete_permutation(N, {j: ranks[j] for j in srcs})).factors)
        if not add("benes+compact", perm, ranks, compact, down):
            raise AssertionError("internal: the broadcast banyan collided on compact sorted sources")
    return out


# ---- the permutation --------------------------------------------------------------------------------


def _bit_reverse(N: int, p: int) -> int:
    n = _log2(N)
    return int(format(p, f"0{n}b")[::-1], 2) if n else 0


def _benes(N: int, partial: Mapping[int, int], orientation: str) -> list[ButterflyFactor]:
    """A Beneš network moving ``i ↦ partial[i]`` (completed to a permutation); ``orientation``
    ``"down"`` gives strides ``N/2 … 1 … N/2``, ``"up"`` (conjugated by the bit reversal) ``1 … N/2 … 1``."""
    perm = complete_permutation(N, partial)
    if orientation == "down":
        return list(route_permutation(perm).factors)
    r = [_bit_reverse(N, p) for p in range(N)]
    conj = [0] * N
    for i in range(N):
        conj[r[i]] = r[perm[i]]
    out: list[ButterflyFactor] = []
    half = N // 2
    for f in route_permutation(conj).factors:
        s2 = N // (2 * f.stride)
        d: list[list[Scalar]] = [[1] * half, [0] * half, [0] * half, [1] * half]
        for m in range(half):
            lo = 2 * f.stride * (m // f.stride) + (m % f.stride)
            m2 = pair_number(s2, r[lo])
            for k, diag in enumerate((f.d1, f.d2, f.d3, f.d4)):
                d[k][m2] = diag[m]
        out.append(ButterflyFactor(N, s2, *map(tuple, d)))
    return out


def _combine(N: int, K: int, rows: Mapping[int, list[tuple[int, Scalar]]], second: Mapping[int, int]) -> ButterflyFactor:
    """``out[o] = a·x[o] + b·x[o ⊕ K]``; every other position 0. ``second[o]`` is the index in
    ``rows[o]`` of the operand delivered at ``o ⊕ K``."""
    half = N // 2
    d: list[list[Scalar]] = [[0] * half for _ in range(4)]
    for o, r in rows.items():
        m = pair_number(K, o & ~K)
        hi = 1 if o & K else 0
        if len(r) == 1:
            d[3 * hi][m] = r[0][1]  # d1 (lo←lo) or d4 (hi←hi)
        else:
            k2 = second[o]
            a, b = r[1 - k2][1], r[k2][1]
            if hi:
                d[3][m], d[2][m] = a, b  # out[hi] = a·x[hi] + b·x[lo]
            else:
                d[0][m], d[1][m] = a, b
    return ButterflyFactor(N, K, *map(tuple, d))


def _direct(N: int, K: int, rows: Mapping[int, list[tuple[int, Scalar]]], swap: bool) -> tuple[int, str, int, list[ButterflyFactor]] | None:
    """The copy network and the permutation in one: every source broadcast by bit-fixing straight
    to the operand slots ``o`` and ``o ⊕ K`` of the rows that read it (``n`` factors in either
    stride order), then the combine; None when both orders collide."""
    dest: dict[int, list[int]] = {}
    second: dict[int, int] = {}
    for o, r in rows.items():
        for k, (j, _) in enumerate(r):
            at_partner = k == (0 if swap and len(r) == 2 else 1)
            dest.setdefault(j, []).append(o ^ K if at_partner else o)
            if at_partner:
                second[o] = k
    records = {j: sorted(t) for j, t in dest.items()}
    n = _log2(N)
    best: tuple[int, str, int, list[ButterflyFactor]] | None = None
    for order, strides in (("up", [1 << k for k in range(n)]), ("down", [1 << k for k in reversed(range(n))])):
        routed = _route_records(N, records, strides)
        if routed is None:
            continue
        fs = routed[0] + [_combine(N, K, rows, second)]
        c = len(simplify_factors(fs))
        if best is None or c < best[0]:
            best = (c, f"direct {order}", K, fs)
    return best


# ---- the route ----------------------------------------------------------------------------------


def selection_route(ents: Ents, in_pos: Sequence[int] = (), out_pos: Sequence[int] = (), size: int | None = None,
                    *, max_K: int = 4) -> SelectionRoute:
    """The cheapest route of this module for ``ents`` (``{(out position, in position): coeff}``,
    at most two entries per row), built at ``N = selection_size(...)`` and lifted to ``size``
    (default ``N``). ``max_K`` bounds how many combine strides are tried (the largest ones, and 1).

    Raises:
        CompileError: a row has more than two entries, or ``size`` is below ``N``.
    """
    rows = _rows(ents)
    N = selection_size(ents, in_pos, out_pos)
    size = N if size is None else size
    if size < N:
        raise CompileError(f"selection route: the stage needs size {N} > {size}")
    if not rows:  # the zero map
        zero = ButterflyFactor(size, 1, *([(0,) * (size // 2)] * 4))
        return SelectionRoute(size, N, (zero,), "zero", 1)
    uses: dict[int, int] = {}
    for r in rows.values():
        for j, _ in r:
            uses[j] = uses.get(j, 0) + 1
    valid = _valid_K(rows, N)
    if not valid:  # selection_size doubled N: K = N/2 separates every row from its partner
        raise AssertionError("internal: no combine stride at the selection size")
    Ks = sorted(set(valid[-max_K:] + valid[:1]), reverse=True)
    best = _best_direct(N, rows, valid)  # every stride for the direct route: it is cheap to try
    # Copy networks in both stride orders end on the same slots, so their permutations are equal:
    # each Beneš network is routed once (keyed by the partial map in its order, and the orientation).
    benes: dict[tuple[tuple[tuple[int, int], ...], str], list[ButterflyFactor]] = {}
    for name, copy_fs, slots in _copy_candidates(N, uses):
        for K in Ks:
            # operand slots: the first entry of row o at o, the second at o ⊕ K
            nxt = {j: iter(s) for j, s in slots.items()}
            partial: dict[int, int] = {}
            second: dict[int, int] = {}
            for o, r in rows.items():
                for k, (j, _) in enumerate(r):
                    partial[next(nxt[j])] = o if k == 0 else o ^ K
                if len(r) == 2:
                    second[o] = 1
            comb = _combine(N, K, rows, second)
            for orient in ("down", "up"):
                key = (tuple(partial.items()), orient)
                if key not in benes:
                    benes[key] = _benes(N, partial, orient)
                fs = copy_fs + benes[key] + [comb]
                c = len(simplify_factors(fs))
                if best is None or c < best[0]:
                    best = (c, f"{name}, benes {orient}", K, fs)
    assert best is not None
    _, strategy, K, fs = best
    if size > N:
        fs = [f.lift(size) for f in fs]
    return SelectionRoute(size, N, tuple(fs), strategy, K)


def _best_direct(N: int, rows: Mapping[int, list[tuple[int, Scalar]]], Ks: Sequence[int]) -> tuple[int, str, int, list[ButterflyFactor]] | None:
    """The cheapest :func:`_direct` route over the strides ``Ks`` and both operand orders (the copy
    network and the permutation in one), or None when every one collides."""
    best: tuple[int, str, int, list[ButterflyFactor]] | None = None
    for K in reversed(Ks):
        for swap in (False, True):
            got = _direct(N, K, rows, swap)
            if got is not None and (best is None or got[0] < best[0]):
                best = got
    return best


def direct_route(ents: Ents, in_pos: Sequence[int] = (), out_pos: Sequence[int] = (), size: int | None = None) -> SelectionRoute | None:
    """The cheapest direct candidate of :func:`selection_route` alone (every valid ``K``, both
    operand orders, both stride orders), lifted to ``size``; None when every one collides or the
    stage needs more than ``size``. Cheap to try: no permutation is routed."""
    rows = _rows(ents)
    N = selection_size(ents, in_pos, out_pos)
    size = N if size is None else size
    if not rows or size < N:
        return None
    best = _best_direct(N, rows, _valid_K(rows, N))
    if best is None:
        return None
    _, strategy, K, fs = best
    return SelectionRoute(size, N, tuple(f.lift(size) for f in fs) if size > N else tuple(fs), strategy, K)


def selection_factors(ents: Ents, in_pos: Sequence[int], out_pos: Sequence[int], size: int) -> list[ButterflyFactor]:
    """The factors of :func:`selection_route` at ``size`` (application order, not simplified)."""
    return list(selection_route(ents, in_pos, out_pos, size).factors)


# ---- where the previous stage should put this stage's inputs ----------------------------------------


def column_counts(rows: Sequence[Sequence[tuple[int, Scalar]]], num_inputs: int) -> list[int]:
    """How many rows read each input slot (nonzero coefficients), e.g. for a
    :class:`~symverify.kernel.ir.layered.LinearStage`: ``column_counts(st.rows, len(st.inputs))``."""
    counts = [0] * num_inputs
    for row in rows:
        for slot in {s for s, co in row if not is_zero(co)}:
            counts[slot] += 1
    return counts


def preferred_positions(counts: Sequence[int], start: int = 0) -> tuple[int, ...]:
    """Positions for input slots read ``counts[i]`` times that make the copy network cheapest:
    every read slot at the start of an aligned block of ``2^⌈log2 counts[i]⌉`` positions (blocks
    by decreasing size from ``start``, which should be a multiple of the largest block), then the
    slots nobody reads. The copy network is then ``⌈log2 max(counts)⌉`` broadcast factors.
    The positions span fewer than ``2·Σ counts + #unread`` slots."""
    order = sorted((i for i, c in enumerate(counts) if c > 0), key=lambda i: (-next_power_of_two(counts[i]), i))
    pos = [0] * len(counts)
    at = start
    for i in order:
        pos[i] = at
        at += next_power_of_two(counts[i])
    for i, c in enumerate(counts):
        if c <= 0:
            pos[i] = at
            at += 1
    return tuple(pos)


# ---- layouts that let the direct route through ----------------------------------------------------


class BroadcastPlacer:
    """Output positions chosen so that :func:`_direct` does not collide.

    With the strides in the ``order`` ``"down"`` (``N/2 … 1``), after the strides ``N/2 … 2^b``
    a record of source position ``p`` bound for ``t`` sits at ``t``'s bits ``≥ b`` and ``p``'s
    bits ``< b``; two records of different sources collide exactly when, for some ``b``, they
    agree on both (``b = 0``: distinct destinations). ``"up"`` (``1 … N/2``) is the mirror image:
    after ``1 … 2^b``, ``p``'s bits ``> b`` and ``t``'s bits ``≤ b``. The placer keeps, for every
    ``b``, which source owns each such position and accepts a group of ``(source, destination)``
    pairs only when none is owned by another source and no destination is taken."""

    def __init__(self, N: int, order: str = "down") -> None:
        if order not in ("down", "up"):
            raise CompileError(f"BroadcastPlacer: order: expected 'down' or 'up', found {order!r}")
        if N < 2 or N & (N - 1):
            raise CompileError(f"BroadcastPlacer: expected a size N that is a power of two ≥ 2, found {N}")
        self.N = N
        self.n = _log2(N)
        self.order = order
        self.taken: set[int] = set()
        self.owner: dict[tuple[int, int, int], int] = {}

    def _keys(self, src: int, dest: int) -> list[tuple[int, int, int]]:
        if self.order == "down":  # after strides N/2 … 2^b: dest bits ≥ b, source bits < b
            return [(b, dest >> b, src & ((1 << b) - 1)) for b in range(1, self.n)]
        # up: after strides 1 … 2^b: source bits > b, dest bits ≤ b
        return [(b, src >> (b + 1), dest & ((2 << b) - 1)) for b in range(self.n - 1)]

    def fits(self, pairs: Sequence[tuple[int, int]], reserve: Sequence[int] = ()) -> bool:
        """Whether every ``(source position, destination)`` of ``pairs`` can be added (and the
        positions ``reserve`` kept free of destinations)."""
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
        """Add ``pairs`` (checked by :meth:`fits` first) and reserve ``reserve``."""
        for src, t in pairs:
            self.taken.add(t)
            for key in self._keys(src, t):
                self.owner[key] = src
        self.taken.update(reserve)
