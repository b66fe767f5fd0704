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
   * *strided*: source ``j`` keeps its position and its copies go a whole stride apart,
     ``j + k·S`` for ``k < c_j`` with ``S`` the power of two above every source: when the sources
     sit below ``S`` and ``f·S ≤ N``, strides ``S, 2S, …`` broadcast every source at once
     (``⌈log2 f⌉`` factors, one for fan-outs of two);
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

   * *halves* (:func:`_halves`): every copy made in the half (bit ``N/2``) of the operand slot
     it is bound for, by the broadcast banyan of *compact, gaps filled* in both halves at once
     (the stride-``N/2`` factor splits each source's copies between the halves). The permutation
     then never crosses the halves: it is two Beneš networks of size ``N/2`` side by side,
     ``2n − 3`` factors instead of ``2n − 1``. It pays where a stage is routed at twice its own
     size (sources below ``N/2``, room in each half).

   Every route is simulated; a collision drops that candidate. *Concentrate, then compact*
   (the sources in order onto ``0 … m − 1`` through strides ``1, 2, …, N/2``, then the compact
   broadcast) never collides (a monotone map onto consecutive ranks, see :func:`_copy_patterns`),
   so every stage has a candidate.
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
broadcast, which always routes);
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
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

from symverify.errors import CompileError
from symverify.kaleidoscope.permutation import benes_swaps, complete_permutation
from symverify.kaleidoscope.simplify import is_diagonal, simplify_factors
from symverify.kernel.ir.butterfly import (
    ButterflyFactor,
    check_size_limit,
    is_power_of_two,
    next_power_of_two,
    pair_number,
)
from symverify.kernel.ir.scalar import Scalar, is_zero, unordered

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
    "selection_shape",
    "selection_strategy",
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


def _position(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _check_stage(ents: Ents, in_pos: Sequence[int] = (), out_pos: Sequence[int] = ()) -> None:
    """Refuse (:class:`CompileError`) a stage that is not ``{(out position, in position): coeff}``
    with non-negative int positions, or ``in_pos``/``out_pos`` that are not sequences of non-negative
    ints (a mapping would be read as its keys, a set in no given order, and an iterator would be
    used up by this check)."""
    if not isinstance(ents, Mapping):
        raise CompileError(f"selection route: expected a mapping {{(out position, in position): coeff}}, found {type(ents).__name__}")
    for key in ents:
        if not (isinstance(key, tuple) and len(key) == 2 and _position(key[0]) and _position(key[1])):
            raise CompileError(f"selection route: expected keys (out position, in position) of non-negative ints, found {key!r:.80}")
    for what, ps in (("in_pos", in_pos), ("out_pos", out_pos)):
        if unordered(ps, sized=True):
            raise CompileError(f"selection route {what}: expected a sequence of positions in order, found {type(ps).__name__}")
        for p in ps:
            if not _position(p):
                raise CompileError(f"selection route {what}: expected non-negative int positions, found {p!r:.80}")


def _check_max_K(max_K: object) -> None:
    if not isinstance(max_K, int) or isinstance(max_K, bool) or max_K < 1:
        raise CompileError(f"selection route max_K: expected a positive int, found {max_K!r}")


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
    every position and ``nnz``, doubled when no combine stride fits (module docstring).

    Raises:
        CompileError: positions that are not non-negative ints.
        LimitError: ``N`` above :data:`symverify.ir.limits.MAX_CELLS`.
    """
    _check_stage(ents, in_pos, out_pos)
    rows = _rows(ents)
    nnz = sum(len(r) for r in rows.values())
    top = max([q + 1 for q in (*in_pos, *out_pos)] + [i + 1 for i in rows] + [j + 1 for r in rows.values() for j, _ in r] + [nnz, 2])
    N = next_power_of_two(top)
    check_size_limit(N, "selection route: the stage size N")
    return N if _valid_K(rows, N) else 2 * N


# ---- the copy network: bit-fixing of records ------------------------------------------------------


def _route_masks(N: int, records: Mapping[int, Sequence[int]], strides: Sequence[int],
                 ghosts: AbstractSet[int] = frozenset(), ghost_slots: AbstractSet[int] = frozenset()
                 ) -> tuple[list[Pat], dict[int, int]] | None:
    """Route records ``{position: sorted destination slots}`` through factors of ``strides`` by
    bit-fixing (module docstring); ``None`` on a collision or when a record does not end on its
    slots. Returns the factors as 0/1 patterns (:data:`Pat`) and ``{slot: start position of its
    record}``. The records starting at ``ghosts`` take their slots (so the others are routed as
    if they moved) but the factors do not move them: their values are dropped at the first factor.
    Likewise every part of a record bound only for ``ghost_slots`` is routed but never moved."""
    cur: dict[int, tuple[int, int]] = {}  # position: (mask of the destination slots, origin)
    for p, d in records.items():
        if d:
            mask = 0
            for t in d:
                if t < 0 or mask >> t & 1:  # a slot twice (or none) never ends as one slot
                    return None
                mask |= 1 << t
            cur[p] = (mask, p)
    gmask = 0
    for t in ghost_slots:
        gmask |= 1 << t
    pats: list[Pat] = []
    for b in strides:
        low = _low(max(N, 2 * b), b)  # the slots whose bit b is clear (N at least covers every slot below it)
        nxt: dict[int, tuple[int, int]] = {}
        straight = cross = 0
        for p, (dest, origin) in cur.items():
            lo = dest & low
            hi = dest & ~low
            low_pos = p & ~b
            for part, q in ((lo, low_pos), (hi, low_pos | b)):
                if not part:
                    continue
                if q in nxt:
                    return None
                nxt[q] = (part, origin)
                if origin not in ghosts and part & ~gmask:  # out[q] reads x[p]: straight when q = p, across the pair else
                    if q == p:
                        straight |= 1 << q
                    else:
                        cross |= 1 << q
        cur = nxt
        pats.append((b, straight, 0, cross, 0))
    where: dict[int, int] = {}
    for p, (dest, origin) in cur.items():
        if dest != 1 << p:
            return None
        where[p] = origin
    return pats, where


def _route_records(N: int, records: Mapping[int, Sequence[int]], strides: Sequence[int],
                   ghosts: AbstractSet[int] = frozenset()) -> tuple[list[ButterflyFactor], dict[int, int]] | None:
    """:func:`_route_masks` with the factors built (:func:`_build`)."""
    r = _route_masks(N, records, strides, ghosts)
    return None if r is None else ([_build(N, p) for p in r[0]], r[1])


def _copy_candidates(N: int, uses: Mapping[int, int]) -> list[tuple[str, list[ButterflyFactor], dict[int, list[int]]]]:
    """Copy networks for sources ``{position: fan-out}``: ``(name, factors, {source: copy slots})``."""
    return [(name, [_build(N, p) for p in pats], slots) for name, pats, slots in _copy_patterns(N, uses)]


def _copy_patterns(N: int, uses: Mapping[int, int]) -> list[tuple[str, list[Pat], dict[int, list[int]]]]:
    """:func:`_copy_candidates` with the factors as 0/1 patterns (:data:`Pat`), none built."""
    n = _log2(N)
    up = [1 << k for k in range(n)]
    down = list(reversed(up))
    srcs = sorted(uses)
    out: list[tuple[str, list[Pat], dict[int, list[int]]]] = []

    def add(name: str, pre: list[Pat], start: Mapping[int, int], dest: Mapping[int, list[int]], strides: Sequence[int]) -> bool:
        r = _route_masks(N, {start[j]: dest[j] for j in srcs}, strides)
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
    if srcs:  # copies a whole stride apart: source j at j + k·S, S the power of two above every source
        S = 1 << srcs[-1].bit_length()
        strided = {j: [j + k * S for k in range(uses[j])] for j in srcs}
        if strided != inplace and all(t[-1] < N for t in strided.values()):
            for order, strides in (("up", up), ("down", down)):
                add(f"strided {order}", [], here, strided, strides)
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
            r = _route_masks(N, filled, down, ghosts=set(filled) - set(uses))
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
                r = _route_masks(N, inner, down, ghosts=set(inner) - set(uses))
                if r is not None:
                    out.append((f"compact from {srcs[0]}, gaps filled", r[0], {j: inner[j] for j in srcs}))
    # Always routable, so no other fallback: sorted sources onto their ranks through strides
    # 1, 2, 4, … never collide (after bits 0..k of the destinations are fixed, two records share a
    # position only if their sources agree above bit k, i.e. differ by less than 2^(k+1); then their
    # ranks differ by more than 0 and less than 2^(k+1), so their low k+1 bits differ); then the
    # compact broadcast from compact sorted sources, which never collides (as above).
    ranks = {j: r for r, j in enumerate(srcs)}
    conc = _route_masks(N, {j: [ranks[j]] for j in srcs}, up)
    if conc is None or not add("concentrate+compact", conc[0], ranks, compact, down):
        raise AssertionError("internal: the butterfly collided on a monotone concentration of sorted sources")
    return out


# ---- factors as patterns: counting without building ------------------------------------------------

Pat = tuple[int, int, int, int, int]
"""A butterfly factor of size ``N`` as bit masks over positions: ``(stride s, straight, straight ≠ 1,
cross, cross ≠ 1)``. Bit ``p`` of ``straight`` is set when ``out[p]`` reads ``x[p]`` with a nonzero
coefficient (``d1`` at a lower position, ``d4`` at an upper one), of ``cross`` when it reads
``x[p ⊕ s]`` (``d2``, ``d3``); the ``≠ 1`` masks mark the nonzero coefficients that are not exactly
the int ``1``. The copy networks and Beneš networks of this module are 0/1 factors, so their
pattern is the factor (:func:`_build`); the combine carries the stage's coefficients."""


class _UnsureError(Exception):
    """A pattern product whose value the masks do not determine (a sum of two terms, or a product
    of two coefficients ≠ 1, which could be 0 or 1): the caller builds the factors instead."""


@lru_cache(maxsize=256)
def _low(N: int, s: int) -> int:
    """The mask of the positions below ``N`` whose bit ``s`` is clear."""
    block = (1 << s) - 1
    return sum(block << q for q in range(0, N, 2 * s))


def _swap(N: int, s: int, mask: int) -> int:
    """``mask`` with the bits ``p`` and ``p ⊕ s`` exchanged."""
    lo = _low(N, s)
    return ((mask & lo) << s) | ((mask >> s) & lo)


def _build(N: int, pat: Pat) -> ButterflyFactor:
    """The 0/1 factor of a pattern without coefficients ≠ 1."""
    s, a, _, c, _ = pat
    half = N // 2
    d: list[list[Scalar]] = [[0] * half for _ in range(4)]
    for m in range(half):
        lo = 2 * s * (m // s) + (m % s)
        hi = lo + s
        d[0][m], d[1][m] = (a >> lo) & 1, (c >> lo) & 1
        d[2][m], d[3][m] = (c >> hi) & 1, (a >> hi) & 1
    return ButterflyFactor(N, s, *map(tuple, d))


def _scale(mask: int, ne1: int, dmask: int, dne1: int) -> tuple[int, int]:
    """Entries ``mask`` (``ne1`` of them ≠ 1) times the entries ``dmask`` (``dne1`` ≠ 1), elementwise."""
    nz = mask & dmask
    if nz & ne1 & dne1:
        raise _UnsureError
    return nz, nz & (ne1 | dne1)


def _then(N: int, f: Pat, g: Pat) -> Pat:
    """The pattern of ``g·f`` (``f`` applied first; one stride), as ``ButterflyFactor.then``."""
    s, fa, fa1, fc, fc1 = f
    _, ga, ga1, gc, gc1 = g
    sfa, sfa1, sfc, sfc1 = _swap(N, s, fa), _swap(N, s, fa1), _swap(N, s, fc), _swap(N, s, fc1)
    t1, t1n = _scale(ga, ga1, fa, fa1)  # g[p, p]·f[p, p]
    t2, t2n = _scale(gc, gc1, sfc, sfc1)  # g[p, p⊕s]·f[p⊕s, p]
    u1, u1n = _scale(ga, ga1, fc, fc1)  # g[p, p]·f[p, p⊕s]
    u2, u2n = _scale(gc, gc1, sfa, sfa1)  # g[p, p⊕s]·f[p⊕s, p⊕s]
    if t1 & t2 or u1 & u2:
        raise _UnsureError
    return (s, t1 | t2, t1n | t2n, u1 | u2, u1n | u2n)


def _shape(N: int, pats: Sequence[Pat]) -> tuple[tuple[int, bool], ...]:
    """``(stride, diagonal)`` of every factor :func:`~symverify.kaleidoscope.simplify.simplify_factors`
    keeps of the factors ``pats``, step for step as it does (identity factors dropped, diagonal
    ones absorbed into a neighbour, adjacent equal strides multiplied), on the masks alone.

    Raises:
        _UnsureError: a product the masks do not determine.
    """
    full = (1 << N) - 1
    out: list[Pat] = []
    diag: tuple[int, int] | None = None
    work = list(pats)
    while work:
        f = work.pop(0)
        s, a, a1, c, c1 = f
        if not c and a == full and not a1:  # identity
            continue
        if not c:  # diagonal: its straight entries
            diag = (a, a1) if diag is None else _scale(diag[0], diag[1], a, a1)
            continue
        if diag is not None:  # F·D: column p scaled by D[p]
            a, a1 = _scale(a, a1, *diag)
            c, c1 = _scale(c, c1, _swap(N, s, diag[0]), _swap(N, s, diag[1]))
            f, diag = (s, a, a1, c, c1), None
        if out and out[-1][0] == s:
            work.insert(0, _then(N, out.pop(), f))
            continue
        out.append(f)
    if diag is not None and not (diag[0] == full and not diag[1]):
        if out:  # D·F: row p scaled by D[p]
            s, a, a1, c, c1 = out[-1]
            out[-1] = (s, *_scale(a, a1, *diag), *_scale(c, c1, *diag))
        else:
            out.append((1, diag[0], diag[1], 0, 0))
    return tuple((f[0], not f[3]) for f in out)


# ---- the permutation --------------------------------------------------------------------------------


def _bit_reverse(N: int, p: int) -> int:
    n = _log2(N)
    return int(format(p, f"0{n}b")[::-1], 2) if n else 0


@lru_cache(maxsize=32)
def _bit_reversal(N: int) -> list[int]:
    return [_bit_reverse(N, p) for p in range(N)]


def _benes_masks(N: int, partial: Mapping[int, int], orientation: str) -> list[Pat]:
    """A Beneš network moving ``i ↦ partial[i]`` (completed to a permutation) as 0/1 patterns;
    ``orientation`` ``"down"`` gives strides ``N/2 … 1 … N/2``, ``"up"`` (conjugated by the bit
    reversal) ``1 … N/2 … 1``."""
    perm = complete_permutation(N, partial)
    full = (1 << N) - 1
    if orientation == "down":
        swaps = benes_swaps(perm)
    else:
        r = _bit_reversal(N)
        conj = [0] * N
        for i in range(N):
            conj[r[i]] = r[perm[i]]
        swaps = []
        for h, sw in benes_swaps(conj):  # pair (q, q + h) becomes (r[q], r[q] + N/2h)
            moved = 0
            while sw:
                low = sw & -sw
                moved |= 1 << r[low.bit_length() - 1]
                sw ^= low
            swaps.append((N // (2 * h), moved))
    out: list[Pat] = []
    for h, sw in swaps:
        cross = sw | (sw << h)
        out.append((h, full & ~cross, 0, cross, 0))
    return out


def _benes(N: int, partial: Mapping[int, int], orientation: str) -> list[ButterflyFactor]:
    """:func:`_benes_masks`, the factors built."""
    return [_build(N, p) for p in _benes_masks(N, partial, orientation)]


def _combine_pat(N: int, K: int, rows: Mapping[int, list[tuple[int, Scalar]]], second: Mapping[int, int]) -> Pat:
    """The pattern of :func:`_combine`."""
    a = a1 = c = c1 = 0
    for o, r in rows.items():
        bit = 1 << o
        if len(r) == 1:
            first, other = r[0][1], None
        else:
            k2 = second[o]
            first, other = r[1 - k2][1], r[k2][1]
        a |= bit
        if not (type(first) is int and first == 1):
            a1 |= bit
        if other is not None:
            c |= bit
            if not (type(other) is int and other == 1):
                c1 |= bit
    return (K, a, a1, c, c1)


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


_Choice = tuple[int, str, int, tuple[Pat, ...], tuple[tuple[int, int], ...], tuple[tuple[int, bool], ...]]
"""A candidate route: ``(factor count, strategy, K, its 0/1 factors before the combine as patterns,
the combine's ``second`` map, the (stride, diagonal) shape of the simplified factors)``."""


def _candidate(N: int, K: int, rows: Mapping[int, list[tuple[int, Scalar]]], second: Mapping[int, int],
               pats: Sequence[Pat], name: str) -> _Choice:
    """A candidate's shape from its patterns (:func:`_shape`), or from its built and simplified
    factors when the patterns do not determine it (never in the routes of this module: every
    product meets at most one coefficient ≠ 1 and no two terms)."""
    try:
        shape = _shape(N, [*pats, _combine_pat(N, K, rows, second)])
    except _UnsureError:
        fs = simplify_factors([*(_build(N, p) for p in pats), _combine(N, K, rows, second)])
        shape = tuple((f.stride, is_diagonal(f)) for f in fs)
    return (len(shape), name, K, tuple(pats), tuple(sorted(second.items())), shape)


def _operand_slots(K: int, rows: Mapping[int, list[tuple[int, Scalar]]], swap: bool) -> tuple[dict[int, list[int]], dict[int, int]]:
    """``({source: the operand slots it is bound for}, second)``: the first entry of row ``o`` at
    ``o`` and the second at ``o ⊕ K`` (the other way round with ``swap``); ``second[o]`` is the
    index in ``rows[o]`` of the entry delivered at ``o ⊕ K`` (rows of two entries)."""
    dest: dict[int, list[int]] = {}
    second: dict[int, int] = {}
    for o, r in rows.items():
        for k, (j, _) in enumerate(r):
            at_partner = k == (0 if swap and len(r) == 2 else 1)
            dest.setdefault(j, []).append(o ^ K if at_partner else o)
            if at_partner:
                second[o] = k
    return dest, second


def _direct(N: int, K: int, rows: Mapping[int, list[tuple[int, Scalar]]], swap: bool) -> _Choice | None:
    """The copy network and the permutation in one: every source broadcast by bit-fixing straight
    to the operand slots ``o`` and ``o ⊕ K`` of the rows that read it (``n`` factors in either
    stride order), then the combine; None when both orders collide."""
    dest, second = _operand_slots(K, rows, swap)
    records = {j: sorted(t) for j, t in dest.items()}
    n = _log2(N)
    best: _Choice | None = None
    for order, strides in (("up", [1 << k for k in range(n)]), ("down", [1 << k for k in reversed(range(n))])):
        routed = _route_masks(N, records, strides)
        if routed is None:
            continue
        got = _candidate(N, K, rows, second, routed[0], f"direct {order}")
        if best is None or got[0] < best[0]:
            best = got
    return best


def _halves(N: int, K: int, rows: Mapping[int, list[tuple[int, Scalar]]], swap: bool, beat: int | None = None,
            benes: dict[tuple[int, tuple[tuple[int, int], ...], str], list[Pat]] | None = None) -> list[_Choice]:
    """The *halves* candidates: every operand copy made in the half (bit ``N/2``) of the slot it is
    bound for, so that the permutation never crosses the halves and is two Beneš networks of size
    ``N/2`` side by side (``2n − 3`` factors instead of ``2n − 1``).

    The destinations are ``o`` (first operand; the second with ``swap``) and ``o ⊕ K`` of every
    row ``o``. Source ``j`` needs ``a_j`` copies in the lower half and ``b_j`` in the upper one.
    The copy network is the broadcast banyan (strides ``N/2 … 1``) of the layout *compact, gaps
    filled* in each half at once: the stride ``N/2`` factor splits every record into its two
    halves, and in each half the positions ``0 … m`` (``m`` the last source, all sources below
    ``N/2``) are compact and sorted with monotone slot intervals: every position holds at least one
    slot there (a placeholder where no copy of it is bound for that half, routed but never moved:
    no weight carries it), so neither half collides (Lee 1988). Empty when the sources are
    not all below ``N/2`` or a half's slots do not fit in it, and (``beat``) when the copy network
    alone has more than ``beat`` factors, so that no candidate can have fewer than ``beat`` (only its
    last factor can merge with the permutation's first). ``benes`` memoises the half networks by
    size, partial map and orientation (a caller trying several ``K`` routes each one once). Every
    candidate is simulated."""
    half = N // 2
    if N < 4:
        return []
    dest, second = _operand_slots(K, rows, swap)
    if not dest or max(dest) >= half:
        return []
    top = max(dest) + 1
    records: dict[int, list[int]] = {}
    partial: list[dict[int, int]] = [{}, {}]  # per half: slot (within the half) -> destination (within the half)
    spare: set[int] = set()  # placeholder slots: routed, never moved
    nxt = [0, 0]
    for p in range(top):
        mine = sorted(dest.get(p, []))
        slots: list[int] = []
        for h in (0, 1):
            bound = [t - h * half for t in mine if (t >= half) == bool(h)]
            for k, t in enumerate(bound):
                partial[h][nxt[h] + k] = t
            if not bound:  # a placeholder where no copy is bound for this half
                spare.add(h * half + nxt[h])
            take = max(len(bound), 1)
            slots.extend(range(h * half + nxt[h], h * half + nxt[h] + take))
            nxt[h] += take
        records[p] = slots
    if nxt[0] > half or nxt[1] > half:
        return []
    routed = _route_masks(N, records, [1 << k for k in reversed(range(_log2(N)))], ghost_slots=spare)
    if routed is None or (beat is not None and len(_shape(N, routed[0])) > beat):
        return []
    out: list[_Choice] = []
    for orient in ("down", "up"):
        lo, hi = (_memo_benes(half, part, orient, benes) for part in partial)
        assert [f[0] for f in lo] == [f[0] for f in hi], "internal: two Beneš networks of one size differ in strides"
        both = [(a[0], a[1] | b[1] << half, 0, a[3] | b[3] << half, 0) for a, b in zip(lo, hi)]
        out.append(_candidate(N, K, rows, second, routed[0] + both, f"halves{', swapped' if swap else ''}, benes {orient}"))
    return out


def _memo_benes(N: int, partial: Mapping[int, int], orient: str,
                memo: dict[tuple[int, tuple[tuple[int, int], ...], str], list[Pat]] | None) -> list[Pat]:
    """:func:`_benes_masks`, looked up in ``memo`` (keyed by size, partial map and orientation) first."""
    if memo is None:
        return _benes_masks(N, partial, orient)
    key = (N, tuple(partial.items()), orient)
    if key not in memo:
        memo[key] = _benes_masks(N, partial, orient)
    return memo[key]


# ---- the route ----------------------------------------------------------------------------------


def _ents_key(ents: Ents) -> tuple[tuple[int, int, Scalar, type], ...]:
    """A memo key for a stage matrix: its entries with their types (``1`` and ``Fraction(1)`` are
    equal but only the former is the identity's coefficient)."""
    return tuple(sorted((i, j, v, type(v)) for (i, j), v in ents.items()))


EXPENSIVE_COPIES = ("concentrate+compact",)
"""The copy networks of ``2n − 1`` factors or more (module docstring): a stage that needs one may
route in fewer factors at twice the size, where its sources and their gaps fit the broadcast
banyan (``compact, gaps filled``: ``n + 1`` factors)."""


@lru_cache(maxsize=4096)
def _chosen(key: tuple[tuple[int, int, Scalar, type], ...], in_pos: tuple[int, ...], out_pos: tuple[int, ...],
            max_K: int, room: int = 0) -> tuple[int, _Choice | None]:
    """The size :func:`selection_route` builds at and its chosen candidate (None: the zero map),
    memoised by the stage matrix and the positions; every candidate is compared by its shape
    (:func:`_candidate`), none is built. With ``room ≥ 2N`` a stage whose best candidate at its
    own size ``N`` copies through an expensive network (:data:`EXPENSIVE_COPIES`) is also routed at
    ``2N``, and that route is taken when it has fewer factors."""
    N, best = _chosen_at(key, in_pos, out_pos, max_K, 0)
    if best is not None and room >= 2 * N and best[1].startswith(EXPENSIVE_COPIES):
        N2, wide = _chosen_at(key, in_pos, out_pos, max_K, 2 * N)
        if wide is not None and wide[0] < best[0]:
            return N2, wide
    return N, best


@lru_cache(maxsize=4096)
def _chosen_at(key: tuple[tuple[int, int, Scalar, type], ...], in_pos: tuple[int, ...], out_pos: tuple[int, ...],
               max_K: int, at: int) -> tuple[int, _Choice | None]:
    """:func:`_chosen` at the stage's own size (``at = 0``) or at the size ``at`` (above it)."""
    ents = {(i, j): v for i, j, v, _ in key}
    rows = _rows(ents)
    N = max(selection_size(ents, in_pos, out_pos), at)
    if not rows:
        return N, None
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
    benes: dict[tuple[int, tuple[tuple[int, int], ...], str], list[Pat]] = {}
    for name, copy_pats, slots in _copy_patterns(N, uses):
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
            for orient in ("down", "up"):
                got = _candidate(N, K, rows, second, copy_pats + _memo_benes(N, partial, orient, benes), f"{name}, benes {orient}")
                if best is None or got[0] < best[0]:
                    best = got
    for K in Ks:  # the copies made in the halves of their slots: two Beneš networks of size N/2
        for swap in (False, True):
            for got in _halves(N, K, rows, swap, None if best is None else best[0], benes):
                if best is None or got[0] < best[0]:
                    best = got
    assert best is not None
    return N, best


def _route_of(ents: Ents, N: int, choice: _Choice, size: int) -> SelectionRoute:
    """The chosen candidate built (its 0/1 factors and the combine) and lifted to ``size``."""
    _, strategy, K, pats, second, _ = choice
    fs = [_build(N, p) for p in pats] + [_combine(N, K, _rows(ents), dict(second))]
    if size > N:
        fs = [f.lift(size) for f in fs]
    return SelectionRoute(size, N, tuple(fs), strategy, K)


def selection_route(ents: Ents, in_pos: Sequence[int] = (), out_pos: Sequence[int] = (), size: int | None = None,
                    *, max_K: int = 4, room: bool = False) -> SelectionRoute:
    """The cheapest route of this module for ``ents`` (``{(out position, in position): coeff}``,
    at most two entries per row), built at ``N = selection_size(...)`` and lifted to ``size``
    (default ``N``). ``max_K`` bounds how many combine strides are tried (the largest ones, and 1).
    With ``room``, a stage that needs an expensive copy network at ``N`` may be built at ``2N ≤
    size`` instead when that takes fewer factors (:func:`_chosen`).
    The candidates are compared by :func:`selection_shape` (memoised); only the chosen one is built.

    Raises:
        CompileError: a row has more than two entries, ``size`` is below ``N`` or not a power of
            two, positions are not non-negative ints, or ``max_K`` is not a positive int.
    """
    _check_stage(ents, in_pos, out_pos)
    _check_max_K(max_K)
    if size is not None and not is_power_of_two(size):
        raise CompileError(f"selection route: size: expected a power of two, found {size!r}")
    _rows(ents)  # validates the rows
    N, choice = _chosen(_ents_key(ents), tuple(in_pos), tuple(out_pos), max_K, (size or 0) if room else 0)
    size = N if size is None else size
    if size < N:
        raise CompileError(f"selection route: the stage needs size {N} > {size}")
    if choice is None:  # the zero map
        zero = ButterflyFactor(size, 1, *([(0,) * (size // 2)] * 4))
        return SelectionRoute(size, N, (zero,), "zero", 1)
    return _route_of(ents, N, choice, size)


def selection_strategy(ents: Ents, in_pos: Sequence[int] = (), out_pos: Sequence[int] = (), *, max_K: int = 4) -> str:
    """The name of the candidate :func:`selection_route` takes at the stage's own size (memoised):
    e.g. ``"direct up"``, ``"compact, gaps filled, benes down"`` or ``"zero"``."""
    _check_stage(ents, in_pos, out_pos)
    _check_max_K(max_K)
    _rows(ents)
    _, choice = _chosen(_ents_key(ents), tuple(in_pos), tuple(out_pos), max_K)
    return "zero" if choice is None else choice[1]


def selection_shape(ents: Ents, in_pos: Sequence[int] = (), out_pos: Sequence[int] = (), *,
                    max_K: int = 4) -> tuple[tuple[int, bool], ...]:
    """``(stride, diagonal)`` of every factor of ``simplify_factors(selection_route(ents, in_pos,
    out_pos).factors)``, counted without building a factor: every candidate's 0/1 copy and Beneš
    factors are bit masks over positions (:data:`Pat`) and are simplified as masks
    (:func:`_shape`); exact, since every product there has one term and at most one coefficient
    ≠ 1 (else that candidate is built). Memoised by the entries (with their types) and the
    positions. The zero map is one zero factor of stride 1.

    Raises:
        CompileError: a row has more than two entries.
    """
    _check_stage(ents, in_pos, out_pos)
    _check_max_K(max_K)
    _rows(ents)
    _, choice = _chosen(_ents_key(ents), tuple(in_pos), tuple(out_pos), max_K)
    return ((1, True),) if choice is None else choice[5]


def _best_direct(N: int, rows: Mapping[int, list[tuple[int, Scalar]]], Ks: Sequence[int]) -> _Choice | None:
    """The cheapest :func:`_direct` route over the strides ``Ks`` and both operand orders (the copy
    network and the permutation in one), or None when every one collides."""
    best: _Choice | None = None
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
    _check_stage(ents, in_pos, out_pos)
    rows = _rows(ents)
    N = selection_size(ents, in_pos, out_pos)
    size = N if size is None else size
    if not rows or size < N:
        return None
    best = _best_direct(N, rows, _valid_K(rows, N))
    if best is None:
        return None
    return _route_of(ents, N, best, size)


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
            if not _position(slot) or slot >= num_inputs:
                raise CompileError(f"column_counts: a row reads slot {slot!r}, expected an int in 0 … {num_inputs - 1}")
            counts[slot] += 1
    return counts


def preferred_positions(counts: Sequence[int], start: int = 0) -> tuple[int, ...]:
    """Positions for input slots read ``counts[i]`` times that make the copy network cheapest:
    every read slot at the start of an aligned block of ``2^⌈log2 counts[i]⌉`` positions (blocks
    by decreasing size from ``start``, which should be a multiple of the largest block), then the
    slots nobody reads. The copy network is then ``⌈log2 max(counts)⌉`` broadcast factors.
    The positions span fewer than ``2·Σ counts + #unread`` slots."""
    for i, c in enumerate(counts):
        if not _position(c):
            raise CompileError(f"preferred_positions: counts[{i}]: expected a non-negative int, found {c!r}")
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
    ``b``, which source owns each such position (an ``(n − 1) × N`` array: the position a record
    sits at after level ``b`` is the index) and accepts a group of ``(source, destination)``
    pairs only when none is owned by another source and no destination is taken.

    :meth:`fits_many` answers :meth:`fits` for many candidate groups at once (numpy, one array
    operation per pair and level instead of a dictionary look-up per candidate, pair and level):
    a first-fit scan over every start position is one call."""

    def __init__(self, N: int, order: str = "down") -> None:
        if order not in ("down", "up"):
            raise CompileError(f"BroadcastPlacer: order: expected 'down' or 'up', found {order!r}")
        if not is_power_of_two(N) or N < 2:
            raise CompileError(f"BroadcastPlacer: expected a size N that is a power of two ≥ 2, found {N!r}")
        check_size_limit(N, "BroadcastPlacer: the size N")
        import numpy as np

        self.N = N
        self.n = _log2(N)
        self.order = order
        self.taken: set[int] = set()
        self._taken = np.zeros(N, dtype=bool)
        # levels b (down: 1 … n − 1, up: 0 … n − 2); row k of _owner is the k-th level, -1: no owner
        self._levels = list(range(1, self.n)) if order == "down" else list(range(self.n - 1))
        self._owner = np.full((len(self._levels), N), -1, dtype=np.int64)
        self._own: list[list[int]] = [[-1] * N for _ in self._levels]  # the same as lists, for fits
        # per level, the low bits a record's position takes from its source (down) or destination (up)
        self._keeps = [(1 << b) - 1 if order == "down" else (2 << b) - 1 for b in self._levels]
        self._shifts = np.array(self._levels, dtype=np.int64)[:, None, None]
        self._rows = np.arange(len(self._levels))[:, None, None]

    def fits(self, pairs: Sequence[tuple[int, int]], reserve: Sequence[int] = ()) -> bool:
        """Whether every ``(source position, destination)`` of ``pairs`` can be added (and the
        positions ``reserve`` kept free of destinations)."""
        dests = [t for _, t in pairs]
        dests.extend(reserve)
        if len(set(dests)) != len(dests):
            return False
        N, taken = self.N, self.taken
        for t in dests:
            if not 0 <= t < N or t in taken:
                return False
        for p, _ in pairs:
            if not 0 <= p < N:
                return False
        seen: dict[tuple[int, int], int] = {}
        down = self.order == "down"
        for k, keep in enumerate(self._keeps):
            row = self._own[k]
            for src, t in pairs:
                at = (t & ~keep) | (src & keep) if down else (src & ~keep) | (t & keep)  # where the record sits after level b (class docstring)
                own = row[at]
                if own < 0:
                    own = seen.setdefault((k, at), src)
                if own != src:
                    return False
        return True

    def fits_many(self, pairs: Sequence[tuple[Any, Any]], reserve: Sequence[Any] = ()) -> NDArray[np.bool_]:
        """:meth:`fits` for many candidates at once: every source, destination and reserved
        position is an int or a 1-D integer array (numpy), all arrays of one length ``C``;
        candidate ``c`` takes element ``c`` of each. Returns a boolean array of length ``C``
        (length 1 when nothing is an array): whether candidate ``c`` fits. One array operation
        per check for every pair, level and candidate together."""
        import numpy as np

        N = self.N
        P = len(pairs)
        C = max([np.size(x) for pr in pairs for x in pr] + [np.size(x) for x in reserve] + [1])
        S = np.empty((P, C), dtype=np.int64)
        D = np.empty((P + len(reserve), C), dtype=np.int64)
        for i, (p, t) in enumerate(pairs):
            S[i], D[i] = p, t
        for i, t in enumerate(reserve):
            D[P + i] = t
        lo = min(S.min(initial=0), D.min(initial=0))
        hi = max(S.max(initial=0), D.max(initial=0))
        if lo < 0 or hi >= N:  # refuse the candidates outside 0 … N − 1; index the rest
            ok: NDArray[np.bool_] = np.asarray(((S >= 0) & (S < N)).all(axis=0) & ((D >= 0) & (D < N)).all(axis=0))
            S, D = np.where(ok, S, 0), np.where(ok, D, 0)
        else:
            ok = np.ones(C, dtype=bool)
        ok &= ~self._taken[D].any(axis=0)
        for i in range(1, D.shape[0]):
            for j in range(i):
                ok &= D[i] != D[j]
        if not P or not self._levels:
            return ok
        T = D[:P]
        B = self._shifts
        if self.order == "down":  # after strides N/2 … 2^b: dest bits ≥ b, source bits < b
            at = ((T >> B) << B) | (S & ((1 << B) - 1))
        else:  # up: after strides 1 … 2^b: source bits > b, dest bits ≤ b
            at = ((S >> (B + 1)) << (B + 1)) | (T & ((2 << B) - 1))
        own = self._owner[self._rows, at]
        ok &= ((own < 0) | (own == S)).all(axis=(0, 1))
        for i in range(1, P):  # two pairs of the group from different sources at one position
            for j in range(i):
                ok &= (S[i] == S[j]) | (at[:, i] != at[:, j]).all(axis=0)
        return ok

    def free(self, cells: Any) -> NDArray[np.bool_]:
        """Whether each position of the integer array ``cells`` is in ``0 … N − 1`` and not taken."""
        import numpy as np

        cells = np.asarray(cells, dtype=np.int64)
        inside = (cells >= 0) & (cells < self.N)
        return inside & ~self._taken[np.where(inside, cells, 0)]

    def add(self, pairs: Sequence[tuple[int, int]], reserve: Sequence[int] = ()) -> None:
        """Add ``pairs`` (checked by :meth:`fits` first) and reserve ``reserve``."""
        down = self.order == "down"
        ks: list[int] = []
        ats: list[int] = []
        owners: list[int] = []
        for src, t in pairs:
            for k, keep in enumerate(self._keeps):
                at = (t & ~keep) | (src & keep) if down else (src & ~keep) | (t & keep)  # where the record sits after level b (class docstring)
                self._own[k][at] = src
                ks.append(k)
                ats.append(at)
                owners.append(src)
        if ks:
            self._owner[ks, ats] = owners  # one assignment; pairs that fit share a position only with their own source
        fresh = [t for _, t in pairs] + list(reserve)
        self.taken.update(fresh)
        self._taken[fresh] = True
