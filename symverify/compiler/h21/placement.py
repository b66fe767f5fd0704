"""Placement candidates for the H.21 compiler: where each state's values sit on the track.

The output positions offered to each linear stage (:func:`_options`; the package docstring lists
the layouts: aligned block starts, padded, compact, packed, read-out), the positions that let the
direct route through (:func:`_broadcast_options`), the product layouts of a multiplicative stage
(:func:`compact_product_layout`, :func:`packed_product_layout`, :func:`smallest_shift`) and the
copy-network estimate the greedy plan ranks them by (:func:`_copy_estimate`). Nothing here builds
a route.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from symverify.compiler.h21.stages import _bijective_copy, _counts, _mul_rows, _two_entry
from symverify.errors import CompileError
from symverify.kernel.ir.butterfly import next_power_of_two
from symverify.kernel.ir.layered import LinearStage, MulStage, Stage
from symverify.kernel.ir.scalar import is_zero

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = []


Cand = tuple[tuple[int, ...], tuple[int, ...], int]


@dataclass(frozen=True)
class _Option:
    """A choice of output positions for a linear stage: ``need`` is twice the shift of the
    multiplicative stage after it (``2·k_rows·tw``), ``cand`` that stage's ``(v1, v3, k_rows)``."""

    out_pos: tuple[int, ...]
    need: int = 0
    cand: Cand | None = None

    def next_in(self) -> tuple[int, ...]:
        """The positions the stage after this one reads (after the multiplicative stage, if any)."""
        return self.cand[0] + self.cand[1] if self.cand is not None else self.out_pos


def _options(stages: Sequence[Stage], idx: int, tw: int, io: Callable[[int], int], packed: bool) -> tuple[list[_Option], bool, bool]:
    """The output positions offered to the linear stage ``stages[idx]`` (module docstring), whether
    the first is the read-out layout, and whether a butterfly-shaped stage may keep its pairs."""
    st = stages[idx]
    assert isinstance(st, LinearStage)
    nxt = stages[idx + 1] if idx + 1 < len(stages) else None
    if nxt is None:
        return [_Option(tuple(io(k) for k in range(len(st.outputs))))], False, False
    if isinstance(nxt, MulStage):
        if sorted(nxt.perm) != list(range(len(st.outputs))):
            raise CompileError(
                f"layered form level {nxt.level}: the multiplicative stage must route a permutation of its "
                f"{len(st.outputs)} input slots, found {list(nxt.perm)[:12]}"
            )
        after = stages[idx + 2] if idx + 2 < len(stages) else None
        rows2 = _two_entry(st)
        two = {i for i, src in enumerate(nxt.perm) if src in rows2}  # mul input slots computed by two entries
        cands, readout = _mul_positions(nxt, after, idx + 3 == len(stages), tw, io, two, packed)
        options = []
        for cand in cands:
            v1, v3, kr = cand
            out_l = [0] * len(st.outputs)
            for src, q in zip(nxt.perm, [*v1, *(p + kr * tw for p in v1), *v3]):
                out_l[src] = q
            options.append(_Option(tuple(out_l), 2 * kr * tw, cand))
        return options, readout, False
    from symverify.kaleidoscope.selection import preferred_positions

    counts = _counts(nxt, len(st.outputs))
    two = _two_entry(st)
    options = [_Option(preferred_positions(cs)) for cs in _paddings(counts, two)]
    options.append(_Option(_compact([r in two for r in range(len(st.outputs))])))
    return options, False, True


def _final_reads(stages: Sequence[Stage], idx: int, io: Callable[[int], int]) -> dict[int, list[int]] | None:
    """When the linear stage ``stages[idx]`` feeds the last multiplicative stage and the last
    stage copies (one entry per row): ``{row of stage idx: output positions that read it}``
    (a ``v1`` row through its product, a ``v3`` row directly); else None."""
    if idx + 3 != len(stages):
        return None
    mul, last = stages[idx + 1], stages[idx + 2]
    if not isinstance(mul, MulStage) or not isinstance(last, LinearStage) or len(last.inputs) != len(mul.outputs):
        return None
    v1_rows, _, v3_rows = _mul_rows(mul)
    row_of = (*v1_rows, *v3_rows)  # output slot of mul (products, then v3) → row of stage idx
    out: dict[int, list[int]] = {}
    for r, row in enumerate(last.rows):
        live = [slot for slot, co in row if not is_zero(co)]
        if len(live) > 1:
            return None
        for slot in live:
            out.setdefault(row_of[slot], []).append(io(r))
    return out


def _broadcast_options(stages: Sequence[Stage], idx: int, in_pos: Sequence[int], tw: int, limit: int,
                       io: Callable[[int], int]) -> list[_Option]:
    """Output positions for the linear stage ``stages[idx]`` read from ``in_pos`` that let its
    direct route through (:class:`~symverify.kaleidoscope.selection.BroadcastPlacer`: ``n``
    broadcast factors and the combine at a stride ``K``, the second operand of a two-entry row at
    ``o ⊕ K``), first fit from 0 with the strides in either order; for a stage feeding a
    multiplicative one, ``v1`` and ``v2 = v1 + k_rows·tw`` are placed together. Before the last
    multiplicative stage, when the last stage copies (:func:`_final_reads`), the products and
    ``v3`` are also placed so that the last stage's direct route, to the fixed output cells, does
    not collide either (a second placer), and also without it; when the last stage copies each
    value once, also with every value the last stage reads at its read-out cell or that cell ``⊕ s``
    (one option per stride ``s``), so the last stage is one butterfly factor of stride ``s`` or
    nothing. At most one option of each kind, for
    the first ``K ∈ {1, 2, 4, 8}`` and ``k_rows ∈ {1, 2, R/4, R/2}`` (``R = limit/tw``; ``R/2``
    puts ``v2`` in the upper half, which the first stride ``N/2`` separates) that works; none when
    no placement fits in ``limit``. A heuristic: the route is still built and counted, and the
    planner takes this option only when it is cheaper."""
    import numpy as np

    from symverify.kaleidoscope.selection import BroadcastPlacer

    st, nxt = stages[idx], stages[idx + 1] if idx + 1 < len(stages) else None
    assert isinstance(st, LinearStage)
    if nxt is None:
        return []
    srcs = [sorted({in_pos[slot] for slot, co in row if not is_zero(co)}) for row in st.rows]

    final = _final_reads(stages, idx, io)
    ahead: list[tuple[str, str | None]] = [(order, later) for later in ("down", "up") for order in ("down", "up")] if final else []

    def place(groups: Sequence[Sequence[tuple[int, int]]], K: int, combos: Sequence[tuple[str, str | None]],
              near: int | None = None) -> list[int] | None:
        """Each group of rows ``(row, offset)`` at the least ``o`` (row at ``o + offset``); with
        ``near``, only at the group's read-out cell or that cell ``⊕ near``."""
        for order, later in combos:
            got = place_in(groups, K, order, later, near)
            if got is not None:
                return got
        return None

    def place_in(groups: Sequence[Sequence[tuple[int, int]]], K: int, order: str, later: str | None,
                 near: int | None) -> list[int] | None:
        out = [0] * len(st.rows)
        placer = BroadcastPlacer(limit, order)
        last = BroadcastPlacer(limit, later) if later is not None and final is not None else None
        for group in groups:
            span = max(off for _, off in group)
            cells = final.get(group[0][0]) if near is not None and final is not None else None
            # a value the last stage reads: at its read-out cell or that cell ⊕ near; else anywhere
            at = np.array([o for o in (cells[0], cells[0] ^ near) if o + span < limit] if cells and near
                          else range(limit - span), dtype=np.int64)
            for off in {off for _, off in group}:  # every row's own cell is a destination or held
                at = at[placer.free(at + off)]
            # the first start that fits: the first few one by one (BroadcastPlacer.fits), the rest
            # all at once (fits_many), which pays off when many starts are refused
            o = -1
            for c in at[:8].tolist():
                ps = [(p, (c + off) ^ (K * j)) for r, off in group for j, p in enumerate(srcs[r])]
                if placer.fits(ps, [c + off for r, off in group if not srcs[r]]) and (
                        last is None or final is None or last.fits([(c + off, t) for r, off in group for t in final.get(r, ())])):
                    o = c
                    break
            rest = at[8:]
            if o < 0 and rest.size:
                ok = placer.fits_many([(p, (rest + off) ^ (K * j)) for r, off in group for j, p in enumerate(srcs[r])],
                                      [rest + off for r, off in group if not srcs[r]])
                if last is not None and final is not None and ok.any():
                    ok = ok & last.fits_many([(rest + off, t) for r, off in group for t in final.get(r, ())])
                hits = np.flatnonzero(ok)
                if hits.size:
                    o = int(rest[hits[0]])
            if o < 0:
                return None
            placer.add([(p, (o + off) ^ (K * j)) for r, off in group for j, p in enumerate(srcs[r])],
                       [o + off for r, off in group if not srcs[r]])
            if last is not None and final is not None:
                last.add([(o + off, t) for r, off in group for t in final.get(r, ())])
            for r, off in group:
                out[r] = o + off
        return out

    def first(combos: Sequence[tuple[str, str | None]], near: int | None = None) -> _Option | None:
        for K in (K for K in (1, 2, 4, 8) if K < limit):
            if not isinstance(nxt, MulStage):
                out = place([[(r, 0)] for r in range(len(st.rows))], K, combos)
                if out is not None:
                    return _Option(tuple(out))
                continue
            v1_rows, v2_rows, v3_rows = _mul_rows(nxt)
            top = limit // (2 * tw)
            for kr in sorted({r for r in (1, 2, top // 2, top) if 1 <= r <= top}):
                groups = [[(a, 0), (b, kr * tw)] for a, b in zip(v1_rows, v2_rows)] + [[(r, 0)] for r in v3_rows]
                out = place(groups, K, combos, near)
                if out is not None:
                    cand = (tuple(out[r] for r in v1_rows), tuple(out[r] for r in v3_rows), kr)
                    return _Option(tuple(out), 2 * kr * tw, cand)
        return None

    # with the last stage's route and without it: the planner counts both
    found = [first(ahead) if ahead else None, first([("down", None), ("up", None)])]
    if final and all(len(ts) == 1 for ts in final.values()):
        # the last stage copies each value once (and copies some value: with none there is no
        # read-out cell to place near): every value at its read-out cell or that cell ⊕ s,
        # so the last stage is one butterfly factor of stride s (or nothing)
        span = next_power_of_two(max(t for ts in final.values() for t in ts) + 1)
        found += [first([("down", None), ("up", None)], s) for s in (1 << b for b in range(span.bit_length())) if s < limit]
    return list(dict.fromkeys(o for o in found if o is not None))


def _copy_estimate(positions: Sequence[int], counts: Sequence[int], size: int = 0) -> int:
    """Factors of the copy network that reads slot ``i`` at ``positions[i]`` ``counts[i]`` times
    (:mod:`symverify.kaleidoscope.selection`): ``⌈log2 f⌉`` when every read slot starts an aligned
    block of its fan-out with no other read slot in it, ``n`` when the read slots are ``0 … m − 1``,
    else ``2n − 1`` (``n = log2`` of ``size`` or of the power of two above the positions)."""
    read = sorted((positions[i], c) for i, c in enumerate(counts) if c > 0)
    if not read:
        return 0
    n = next_power_of_two(max([p + 1 for p, _ in read] + [size])).bit_length() - 1
    f = max(c for _, c in read)
    starts = [p for p, _ in read]
    if all(p % next_power_of_two(c) == 0 and (k + 1 == len(read) or starts[k + 1] >= p + next_power_of_two(c))
           for k, (p, c) in enumerate(read)):
        return (f - 1).bit_length()
    return n if starts == list(range(len(starts))) else 2 * n - 1


def _compact(padded: Sequence[bool], start: int = 0) -> tuple[int, ...]:
    """Positions ``start, start + 1, …`` in order, except that a ``padded`` slot goes to an even
    position whose partner ``p ⊕ 1`` stays free (so a two-entry row combines at stride 1)."""
    out = []
    at = start
    for pad in padded:
        if pad:
            at += at % 2
            out.append(at)
            at += 2
        else:
            out.append(at)
            at += 1
    return tuple(out)


def _paddings(counts: Sequence[int], two: AbstractSet[int]) -> list[list[int]]:
    """``counts`` as is, and with every slot in ``two`` given a block of at least 2: the value
    then sits at an even position with its partner ``p ⊕ 1`` free, so the combine of the stage
    that computes it fits at stride 1 instead of doubling the size."""
    padded = [max(c, 2) if i in two else c for i, c in enumerate(counts)]
    return [list(counts)] + ([padded] if padded != list(counts) else [])


def _preferred(nxt: Stage | None, count: int) -> tuple[int, ...]:
    """Positions for the ``count`` inputs of the linear stage ``nxt`` at aligned block starts
    (:func:`~symverify.kaleidoscope.selection.preferred_positions`), or ``0 … count − 1``."""
    from symverify.kaleidoscope.selection import preferred_positions

    return preferred_positions(_counts(nxt, count))  # all counts 1: 0 … count − 1


def _mul_positions(st: MulStage, nxt: Stage | None, last: bool, tw: int, io: Callable[[int], int],
                   two: AbstractSet[int] = frozenset(), packed: bool = False) -> tuple[list[Cand], bool]:
    """Candidate ``(v1 positions, v3 positions, k_rows)`` of a multiplicative stage, and whether the
    first is the read-out layout.

    The products stay where ``v1`` is and ``v3`` keeps its positions; ``v2`` sits ``k_rows`` rows
    below ``v1`` (same channel), where no ``v1`` or ``v3`` position is. The positions are chosen
    for the next stage: the read-out cells when that stage is the ``last`` one and copies each
    output once (it then costs nothing), else the aligned block starts of the next linear stage's
    copy network (:func:`_preferred`) in three arrangements, with and without the padding of
    :func:`_paddings`; the compact layout (module docstring; ``two``: the input slots computed by
    rows of two entries) comes last.
    """
    count, k = len(st.outputs), st.k
    compact = compact_product_layout(k, count - k, two, tw)
    copy = _bijective_copy(nxt) if last and isinstance(nxt, LinearStage) and len(nxt.inputs) == count else None
    readout = [_with_shift(tuple(io(copy[j]) for j in range(count)), k, tw)] if copy is not None else []
    if readout and not packed:
        return [*readout, compact], True
    from symverify.kaleidoscope.selection import preferred_positions

    candidates = []
    for counts in _paddings(_counts(nxt, count), {k + t for t in range(count - k) if 2 * k + t in two}):
        c1, c3 = counts[:k], counts[k:]
        candidates.append(_with_shift(preferred_positions(counts), k, tw))
        # v1 first, v2 right above it, v3 above v2 (aligned): the shift clears v1 only
        p1 = preferred_positions(c1)
        kr = -(-(max(p1, default=-1) + 1) // tw)
        top = max([p + kr * tw + 1 for p in p1] + [0])
        candidates.append(_with_shift(p1 + preferred_positions(c3, _align(top, c3)), k, tw))
        # v3 first, then v1 (aligned), v2 above it
        p3 = preferred_positions(c3)
        candidates.append(_with_shift(preferred_positions(c1, _align(max(p3, default=-1) + 1, c1)) + p3, k, tw))
    if packed:
        candidates.append(packed_product_layout(k, count - k, two, tw))
    return [*readout, *candidates, compact], bool(readout)


def packed_product_layout(k: int, m: int, two: AbstractSet[int], tw: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``(v1, v3, k_rows)`` packed from 0: ``v1`` first (two-entry slots at even positions with their
    partner free), ``v2`` the least even multiple of ``tw`` above it, and ``v3`` in order in the
    lowest positions left free (between ``v1`` and ``v2`` and above)."""
    pad1 = [i in two or k + i in two for i in range(k)]
    v1 = _compact(pad1)
    shift = _clearing_rows(v1, tw) * tw
    taken = set(v1) | {p + shift for p in v1} | {(p ^ 1) + s for p, pad in zip(v1, pad1) if pad for s in (0, shift)}
    v3: list[int] = []
    for t in range(m):  # first fit
        pad = 2 * k + t in two
        at = 0
        while at in taken or (pad and (at % 2 or at + 1 in taken)):
            at += 1
        v3.append(at)
        taken |= {at, at + 1} if pad else {at}
    return v1, tuple(v3), shift // tw


def _clearing_rows(v1: Sequence[int], tw: int) -> int:
    """``k_rows`` of the least shift ``≥ tw`` that is a multiple of ``tw``, even, and clears the span
    of ``v1`` (with ``tw = 1`` an odd shift would put ``v2`` on the free partners of ``v1``)."""
    span = max(v1, default=-1) + 1 - min(v1, default=0)
    shift = max(-(-span // tw) * tw, tw)
    return (shift + shift % 2) // tw


def compact_product_layout(k: int, m: int, two: AbstractSet[int], tw: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``(v1, v3, k_rows)`` of the compact layout of a multiplicative stage with ``k`` products and
    ``m`` kept values (module docstring): ``v3`` from 0, then ``v1`` from an even position, then
    ``v2`` an even shift above ``v1``; ``two`` (input slots ``0 … 2k + m − 1`` computed by rows of
    two entries) get even positions with their partner free."""
    v3 = _compact([2 * k + t in two for t in range(m)])
    v1 = _compact([i in two or k + i in two for i in range(k)], (max(v3, default=-1) + 2) // 2 * 2)
    return v1, v3, _clearing_rows(v1, tw)


def smallest_shift(v1: Sequence[int], v3: Sequence[int], tw: int) -> int:
    """The smallest ``k_rows ≥ 1`` with no ``p + k_rows·tw`` (``p ∈ v1``) on a ``v1`` or ``v3`` position."""
    taken = set(v1) | set(v3)
    kr = 1
    while any(p + kr * tw in taken for p in v1):
        kr += 1
    return kr


def _align(at: int, counts: Sequence[int]) -> int:
    """The least multiple of the largest block of ``counts`` (:func:`preferred_positions`) ``≥ at``."""
    block = max([next_power_of_two(c) for c in counts if c > 0] + [1])
    return -(-at // block) * block


def _with_shift(alls: tuple[int, ...], k: int, tw: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``(v1, v3, k_rows)`` for the positions ``alls`` (``v1`` the first ``k``): the smallest shift
    ``k_rows ≥ 1`` for which ``v1 + k_rows·tw`` meets no taken position."""
    v1, v3 = alls[:k], alls[k:]
    return v1, v3, smallest_shift(v1, v3, tw)
