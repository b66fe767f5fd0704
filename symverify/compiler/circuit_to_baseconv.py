"""Circuits to BaseConv through kaleidoscopes (Corollary H.20, Theorem H.21).

The circuit is rewritten in layered form (:func:`~symverify.ir.layered.layered_form`, docs/theory.md §2):
linear stages ``z ↦ M·z + c`` and multiplicative stages ``[v1; v2; v3] ↦ [v1 ⊙ v2; v3]``.
Every state gets *positions* in the live vector ``z ∈ F^{N_k}`` (:mod:`.layout`: position ``p``
is channel ``p % tw`` of row ``p // tw`` of block ``B0``, ``tw`` the largest power of two ``≤ d``):

* the input state: input ``i`` at :func:`~.layout.track_position` (``i`` itself when ``d = tw``;
  otherwise after the two gather layers);
* a state the next linear stage reads: each value at the start of an aligned block as large as
  the number of rows that read it (:func:`~symverify.kaleidoscope.selection.preferred_positions`),
  so that stage's copy network is ``⌈log2 fan-out⌉`` factors; a value computed by a row of two
  entries may get a block of at least 2 so that its partner ``p ⊕ 1`` is free and the combine fits
  at stride 1 (:func:`_paddings`); a stage of one butterfly factor keeps its pairs in place
  instead, unless the next stage is then cheaper from aligned blocks (:func:`_reconsider_butterflies`);
* a multiplicative stage with ``k`` products: ``v1`` and ``v3`` placed as above for the stage
  after it (interleaved, ``v1`` first or ``v3`` first), or at the read-out cells when that stage is
  the last one and copies each value once (which then costs nothing); ``v2`` at ``v1 + k_rows·tw``
  with ``k_rows`` the smallest shift that meets no ``v1`` or ``v3`` position; the products stay
  where ``v1`` is;
* the **compact** layout, offered beside every layout above: values in order (``v3``, then
  ``v1``, then ``v2`` an even shift above ``v1``'s region), two-entry rows at even positions
  with their partner free (:func:`_compact`). It spans ``≤ 2(k + m) + tw + 1 ≤ 2w + tw + 1``
  positions for a level of ``k`` products and ``m`` other values and never doubles the selection
  size, which bounds every stage's size (``N_k ≤ 4·2^⌈log2 w⌉``, :mod:`.kaleidoscope`);
* the last state: output ``k`` at :func:`~.layout.track_position` (then the two scatter layers
  when ``d ≠ tw``). A final copy stage is added when the last stage is multiplicative.

**Choosing among the layouts** (``plan``, :func:`plan_stages`), always among those whose stage
fits the stated size: ``"exact"`` (:func:`_plan_exact`) builds the route of every stage for
every pair of its input and output layouts and takes the sequence with the fewest layers in all
(a shortest path along the chain of linear stages). It offers more layouts than the greedy
plan: the read-out layout next to the others, a *packed* one (:func:`packed_product_layout`) and,
for each input layout, one whose positions let the direct route through
(:func:`_broadcast_options`: every operand broadcast by bit-fixing straight to its slot, ``n``
factors and the combine, where a copy network and a Beneš permutation take ``2n`` to ``4n − 1``);
``"greedy"`` (:func:`_plan_greedy`) goes stage by stage by estimated factor counts
(:func:`_cheapest`: this stage and the next), takes the read-out layout whenever it fits, and
builds each route once. The exact plan tries every choice the greedy one can make, so it is never
more layers (it may take a larger ``N_k``, within the stated size, to save layers); ``"auto"``
(the default) is exact when ``N_k·(Δ + 1) ≤`` :data:`EXACT_PLAN_WORK` (``w ≤ 16`` up to ``Δ = 9``,
``w ≤ 32`` up to ``Δ = 4``, ``w ≤ 64`` at ``Δ = 1``: where the fixed costs weigh most and routes
are cheap to build) and greedy otherwise.

**Linear stage** (Corollary H.20 = Theorem H.19 stage by stage, then Lemma H.18): its rows
become a sparse matrix on positions, which becomes butterfly factors: the identity (0 layers),
a diagonal, one butterfly factor, a scaled partial permutation (Beneš routing, Theorem 2, or the
direct broadcast below when that is fewer factors) or, for
rows of at most two entries (every stage here: gates have two arguments), the selection route
(:mod:`symverify.kaleidoscope.selection`: the operands broadcast straight to their slots, or a
copy network, one Beneš permutation and one combine);
the general ``(BB*)^5`` route (Theorem 3) remains for rows of more entries. Every factor is a
Lemma H.16 gadget. The constants ``c`` of the stage are added by the ``b2`` bias of the layer
that closes it (the sum layer, or ``M1`` below).

**Multiplicative stage** (Proposition H.10 in spirit; :func:`mul_layers`): ``M1`` (the closing
conv layer of the linear stage, completing its pending sum and adding its constants) keeps
``v1`` and ``v3`` in ``B0`` and moves ``v2`` to ``B1``; ``M2 = (u·I) ⊙ (h ⊛ u + mask(v3))`` with
``h`` reading ``B1`` ``k_rows`` rows below, so a ``v1`` cell gets ``v1·v2``, a ``v3`` cell
``v3·(0 + 1)`` (its read meets a ``B1`` cell outside ``v2``, a gap row or ``B2``, all 0) and
every other cell 0. That is 2 layers, the first of which is the linear stage's closing layer,
proved once for all inputs and constants by ``proofs/thm_h21_product_gadget.py``. The
gadget of :mod:`symverify.gadgets.remember` is not used: it expects ``f`` in other channels of
the *same* rows as ``x``, while here every operand is on the one track.

Every gadget is pruned to the live cells (:mod:`.butterfly_to_baseconv`, "Pruning").

**Certificate**: a boundary after every gadget (cells = sparse linear forms over the nodes at the
start of the stage) and after every stage (cells = single circuit nodes), so each checked stage
is one or two layers of degree ≤ 2.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Literal

from symverify.compiler.butterfly_to_baseconv import (
    GadgetEmitter,
    complete_permutation,
    diagonal_factor,
    input_state,
    simplify_factors,
)
from symverify.compiler.layout import (
    CellState,
    Layout,
    axis_of,
    gate_support,
    grid,
    mention,
    state_boundary,
    track_position,
    track_width,
)
from symverify.errors import CompileError
from symverify.ir.affine import Affine
from symverify.ir.analysis import cut_width
from symverify.ir.baseconv import Layer, Model
from symverify.ir.butterfly import ButterflyFactor, next_power_of_two
from symverify.ir.certificate import Boundary, Cell, Certificate
from symverify.ir.circuit import Circuit
from symverify.ir.layered import LayeredForm, LinearStage, MulStage, Stage, layered_form
from symverify.ir.scalar import Scalar, is_zero
from symverify.kaleidoscope.structured import butterfly_positions, single_factor

__all__ = ["StagePlan", "Build", "Prepared", "prepare", "plan_stages", "PLANS", "EXACT_PLAN_WORK", "stage_factors", "build_model", "planned_size", "mul_layers",
           "compact_product_layout", "packed_product_layout", "smallest_shift"]

Route = Literal["identity", "diagonal", "butterfly", "permutation", "selection", "sparse"]


@dataclass(frozen=True)
class StagePlan:
    """One stage with the positions of its input and output slots (``k_rows`` for products)."""

    stage: Stage
    in_pos: tuple[int, ...]
    out_pos: tuple[int, ...]
    k_rows: int = 0

    @property
    def is_mul(self) -> bool:
        return isinstance(self.stage, MulStage)


def _copy_stage(level: int, inputs: tuple[int, ...], outputs: tuple[int, ...]) -> LinearStage:
    slot = {v: i for i, v in enumerate(inputs)}
    rows = tuple(((slot[v], 1),) for v in outputs)
    return LinearStage(level, inputs, outputs, rows, (0,) * len(outputs))


def _normalise(lf: LayeredForm, c: Circuit) -> list[Stage]:
    """Every multiplicative stage preceded by a linear one; a linear stage last."""
    out: list[Stage] = []
    state: tuple[int, ...] = tuple(range(c.num_inputs))
    for st in lf.stages:
        if isinstance(st, MulStage) and (not out or isinstance(out[-1], MulStage)):
            out.append(_copy_stage(st.level, state, st.inputs))
        out.append(st)
        state = st.outputs
    if not out or isinstance(out[-1], MulStage):
        out.append(_copy_stage(out[-1].level if out else 0, state, tuple(c.outputs)))
    return out


EXACT_PLAN_WORK = 640
"""``plan="auto"`` plans exactly (:func:`_plan_exact`) when the stated size ``N_k = 4·2^⌈log2 w⌉``
times the number of linear stages (``Δ + 1``) is at most this: ``w ≤ 16`` up to ``Δ = 9``,
``w ≤ 32`` up to ``Δ = 4``, ``w ≤ 64`` at ``Δ = 1``; otherwise greedily by estimates
(:func:`_plan_greedy`). The exact plan builds every route of every pair of layouts, so its time
grows with both (about 2 s at the limit)."""

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


def _mul_rows(mul: MulStage) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The rows of the linear stage before ``mul`` that become its ``v1``, ``v2`` and ``v3``
    (input slot ``i`` of ``mul`` reads row ``perm[i]``)."""
    k = mul.k
    return tuple(mul.perm[:k]), tuple(mul.perm[k:2 * k]), tuple(mul.perm[2 * k:])


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
    not collide either (a second placer), and also without it. At most one option of each kind, for
    the first ``K ∈ {1, 2, 4, 8}`` and ``k_rows ∈ {1, 2, R/4, R/2}`` (``R = limit/tw``; ``R/2``
    puts ``v2`` in the upper half, which the first stride ``N/2`` separates) that works; none when
    no placement fits in ``limit``. A heuristic: the route is still built and counted, and the
    planner takes this option only when it is cheaper."""
    from symverify.kaleidoscope.selection import BroadcastPlacer

    st, nxt = stages[idx], stages[idx + 1] if idx + 1 < len(stages) else None
    assert isinstance(st, LinearStage)
    if nxt is None:
        return []
    srcs = [sorted({in_pos[slot] for slot, co in row if not is_zero(co)}) for row in st.rows]

    final = _final_reads(stages, idx, io)
    ahead: list[tuple[str, str | None]] = [(order, later) for later in ("down", "up") for order in ("down", "up")] if final else []

    def place(groups: Sequence[Sequence[tuple[int, int]]], K: int, combos: Sequence[tuple[str, str | None]]) -> list[int] | None:
        """Each group of rows ``(row, offset)`` at the least ``o`` (row at ``o + offset``)."""
        for order, later in combos:
            got = place_in(groups, K, order, later)
            if got is not None:
                return got
        return None

    def place_in(groups: Sequence[Sequence[tuple[int, int]]], K: int, order: str, later: str | None) -> list[int] | None:
        out = [0] * len(st.rows)
        placer = BroadcastPlacer(limit, order)
        last = BroadcastPlacer(limit, later) if later is not None and final is not None else None
        for group in groups:
            span = max(off for _, off in group)
            for o in range(limit - span):
                ps = [(p, (o + off) ^ (K * j)) for r, off in group for j, p in enumerate(srcs[r])]
                hold = [o + off for r, off in group if not srcs[r]]
                nxt_ps = [(o + off, t) for r, off in group for t in final.get(r, ())] if last is not None and final is not None else []
                if placer.fits(ps, hold) and (last is None or last.fits(nxt_ps)):
                    placer.add(ps, hold)
                    if last is not None:
                        last.add(nxt_ps)
                    for r, off in group:
                        out[r] = o + off
                    break
            else:
                return None
        return out

    def first(combos: Sequence[tuple[str, str | None]]) -> _Option | None:
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
                out = place(groups, K, combos)
                if out is not None:
                    cand = (tuple(out[r] for r in v1_rows), tuple(out[r] for r in v3_rows), kr)
                    return _Option(tuple(out), 2 * kr * tw, cand)
        return None

    # with the last stage's route and without it: the planner counts both
    found = [first(ahead) if ahead else None, first([("down", None), ("up", None)])]
    return list(dict.fromkeys(o for o in found if o is not None))


PLANS = ("auto", "exact", "greedy")


def _is_exact(plan: str, stages: Sequence[Stage], limit: int) -> bool:
    """Whether ``plan`` plans exactly for these stages and stated size (:data:`EXACT_PLAN_WORK`)."""
    linear = sum(1 for st in stages if isinstance(st, LinearStage))
    return plan == "exact" or (plan == "auto" and limit * linear <= EXACT_PLAN_WORK)


def plan_stages(c: Circuit, lf: LayeredForm, d: int, plan: str = "auto") -> list[StagePlan]:
    """Positions for every state (see the module docstring): ``plan="exact"`` chooses them for
    the fewest layers in all (:func:`_plan_exact`), ``"greedy"`` stage by stage by estimates
    (:func:`_plan_greedy`), ``"auto"`` exactly when the stated size is at most
    :data:`EXACT_PLAN_WORK` divided by the number of linear stages, else greedily."""
    return _plan(c, lf, d, plan)[0]


def _plan(c: Circuit, lf: LayeredForm, d: int, plan: str) -> tuple[list[StagePlan], bool]:
    """:func:`plan_stages`, and whether the plan was exact."""
    if plan not in PLANS:
        raise CompileError(f"plan: expected one of {list(PLANS)}, found {plan!r}")
    stages = _normalise(lf, c)
    tw = track_width(d)

    def io(k: int) -> int:
        return track_position(k, c.n, d)

    pos: tuple[int, ...] = tuple(io(i) for i in range(c.num_inputs))
    limit = 4 << max(0, (max(cut_width(c), 2) - 1).bit_length())  # the stated N_k (module docstring)
    exact = _is_exact(plan, stages, limit)
    opts = {idx: _options(stages, idx, tw, io, exact) for idx, st in enumerate(stages) if isinstance(st, LinearStage)}
    if not exact:
        return _plan_greedy(stages, opts, pos, limit), False
    chosen = _plan_exact(stages, opts, pos, limit, tw, io)
    if chosen is None:
        raise AssertionError(f"internal: no layout of some stage fits the stated size N_k = {limit}")
    plans: list[StagePlan] = []
    for idx, st in enumerate(stages):
        if isinstance(st, MulStage):
            cand = chosen[idx - 1].cand
            assert cand is not None
            plans.append(StagePlan(st, pos, cand[0] + cand[1], cand[2]))
        else:
            plans.append(StagePlan(st, pos, chosen[idx].out_pos))
        pos = plans[-1].out_pos
    return plans, True


def _plan_exact(stages: Sequence[Stage], opts: Mapping[int, tuple[list[_Option], bool, bool]], start: tuple[int, ...],
                limit: int, tw: int, io: Callable[[int], int]) -> dict[int, _Option] | None:
    """The choice of options (and of kept butterfly pairs) with the fewest layers in all, every
    stage within the stated size ``limit``: a shortest path over the chain of linear stages whose
    edge weights are the layers of the routes themselves (:func:`_stage_layers`; the
    multiplicative stages and the gather/scatter layers cost the same on every path); among
    paths of equally many layers reaching a state, the one whose largest stage size is smaller.
    A state is a stage's choice of positions; the next stage depends only on the positions it
    reads, so one state per such positions is kept. Every option :func:`_plan_greedy` could take
    is among those tried, so the result is never more layers than the greedy plan's. None when
    no choice fits (never, since the compact layout always does)."""
    Cost = tuple[int, int]  # (layers so far, the largest stage size so far)
    # a state: (cost, the option, the previous state's key), keyed by (out_pos, cand)
    layers: list[dict[tuple[object, ...], tuple[Cost, _Option, tuple[object, ...] | None]]] = []
    prev: dict[tuple[object, ...], tuple[Cost, tuple[int, ...]]] = {(): ((0, 0), start)}
    order = [idx for idx, st in enumerate(stages) if isinstance(st, LinearStage)]
    for idx in order:
        st = stages[idx]
        fused = isinstance(stages[idx + 1] if idx + 1 < len(stages) else None, MulStage)
        options, _, keep = opts[idx]
        cur: dict[tuple[object, ...], tuple[Cost, _Option, tuple[object, ...] | None]] = {}
        for key, (total, in_pos) in prev.items():
            here = list(dict.fromkeys(options))
            kept = butterfly_positions(st, in_pos) if keep else None
            if kept is not None and _Option(kept) not in here:
                here.insert(0, _Option(kept))
            here += [o for o in _broadcast_options(stages, idx, in_pos, tw, limit, io) if o not in here]
            for o in here:
                plan = StagePlan(st, in_pos, o.out_pos, o.need)
                need = _stage_need(plan)
                if need > limit:
                    continue
                cost = (total[0] + _stage_layers(plan, tw, fused), max(total[1], need))
                k2 = (o.out_pos, o.cand)
                if k2 not in cur or cost < cur[k2][0]:
                    cur[k2] = (cost, o, key)
        if not cur:
            return None
        layers.append(cur)
        best: dict[tuple[int, ...], tuple[Cost, tuple[object, ...]]] = {}  # the next stage sees only its input positions
        for k, (cost, o, _) in cur.items():
            if o.next_in() not in best or cost < best[o.next_in()][0]:
                best[o.next_in()] = (cost, k)
        prev = {k: (cost, at) for at, (cost, k) in best.items()}
    key = min(layers[-1], key=lambda k: layers[-1][k][0])
    chosen: dict[int, _Option] = {}
    for idx, layer in zip(reversed(order), reversed(layers)):
        _, o, back = layer[key]
        chosen[idx] = o
        key = back  # type: ignore[assignment]
    return chosen


def _plan_greedy(stages: Sequence[Stage], opts: Mapping[int, tuple[list[_Option], bool, bool]], pos: tuple[int, ...],
                 limit: int) -> list[StagePlan]:
    """Stage by stage, the option with the fewest estimated factors (:func:`_cheapest`); the
    read-out layout whenever it fits; a butterfly-shaped stage keeps its pairs
    (:func:`_reconsider_butterflies` revisits that)."""
    plans: list[StagePlan] = []
    mul_at: dict[int, Cand] = {}
    for idx, st in enumerate(stages):
        nxt = stages[idx + 1] if idx + 1 < len(stages) else None
        if isinstance(st, MulStage):
            v1, v3, kr = mul_at[idx]
            plans.append(StagePlan(st, pos, v1 + v3, kr))
            pos = plans[-1].out_pos
            continue
        options, readout, keep = opts[idx]
        kept = butterfly_positions(st, pos) if keep else None
        if kept is not None:
            plans.append(StagePlan(st, pos, kept))
        elif len(options) == 1:
            plans.append(StagePlan(st, pos, options[0].out_pos))
        else:
            cands = [StagePlan(st, pos, o.out_pos, o.need) for o in options]
            if isinstance(nxt, MulStage):
                after = stages[idx + 2] if idx + 2 < len(stages) else None
                reads = _counts(after, len(nxt.outputs))
                copies = [_copy_estimate(o.next_in(), reads, sum(reads)) for o in options]
            else:
                counts = _counts(nxt, len(st.outputs))
                copies = [_copy_estimate(o.out_pos, counts, sum(counts)) for o in options]
            # the read-out cells make the last stage free: taken whenever they fit the stated size
            plan = cands[0] if readout and _stage_need(cands[0]) <= limit else _cheapest(cands, limit, copies)
            choice = options[cands.index(plan)]
            plans.append(StagePlan(st, pos, choice.out_pos))
            if choice.cand is not None:
                mul_at[idx + 1] = choice.cand
        pos = plans[-1].out_pos
    return _reconsider_butterflies(plans, stages)


def _stage_route(p: StagePlan) -> tuple[ButterflyFactor, ...]:
    """The simplified factors of the route of the linear stage ``p`` at its own size."""
    ents, _ = stage_matrix(p)
    top = max([q + 1 for q in (*p.in_pos, *p.out_pos)] + [2])
    size = next_power_of_two(max(top, _sparse_need(ents, p.in_pos, p.out_pos, top)))
    return tuple(simplify_factors(stage_factors(ents, p.in_pos, p.out_pos, size)[2]))


def _stage_cost(p: StagePlan) -> int:
    """The number of butterfly factors the route of the linear stage ``p`` takes at its own size."""
    return len(_stage_route(p))


def _stage_layers(p: StagePlan, tw: int, fused: bool) -> int:
    """The layers the linear stage ``p`` becomes (:mod:`.butterfly_to_baseconv`): 1 per diagonal
    factor, 2 per other factor, and the closing sum when the stage is not ``fused`` into a
    multiplicative stage and ends pending (a channel factor, stride ``< tw``) or adds constants."""
    assert isinstance(p.stage, LinearStage)
    axes = [axis_of(f, tw) for f in _stage_route(p)]
    layers = sum(1 if a == "diagonal" else 2 for a in axes)
    if not fused and ((axes and axes[-1] == "channel") or any(not is_zero(v) for v in p.stage.offset)):
        layers += 1
    return layers


def _reconsider_butterflies(plans: list[StagePlan], stages: Sequence[Stage]) -> list[StagePlan]:
    """A stage kept as one butterfly factor leaves its values wherever the pairs put them, which
    can make the next linear stage's copy network ``2·lg − 1`` factors instead of ``⌈log2 f⌉``.
    Where that pair of stages is cheaper with this stage's outputs at the next stage's aligned
    block starts (:func:`_preferred`), take those positions instead."""
    out = list(plans)
    for idx in range(len(out) - 1):
        p, q = out[idx], out[idx + 1]
        if p.is_mul or q.is_mul:
            continue
        st = p.stage
        alt = _preferred(stages[idx + 1], len(st.outputs))
        if alt == p.out_pos or butterfly_positions(st, p.in_pos) != p.out_pos:
            continue
        p2, q2 = StagePlan(st, p.in_pos, alt), StagePlan(q.stage, alt, q.out_pos)
        if max(_stage_need(p2), _stage_need(q2)) > max(_stage_need(p), _stage_need(q)):
            continue  # never more room than the stated size
        if _stage_cost(p2) + _stage_cost(q2) < _stage_cost(p) + _stage_cost(q):
            out[idx], out[idx + 1] = p2, q2
    return out


def _cheapest(options: Sequence[StagePlan], limit: int, copies: Sequence[int]) -> StagePlan:
    """The option with the fewest estimated factors in this stage and the next among those that
    fit the stated size ``limit`` (the compact layout, last, always does: module docstring).

    The estimate is this stage's copy network and ``2·log2`` of its size (its Beneš permutation),
    ``copies[i]`` (the next stage's copy network from these positions, :func:`_copy_estimate`) and
    ``2·log2`` of the power of two above the positions (the next stage's permutation is at least
    that large).
    ``k_rows`` of an option carries twice the shift of the multiplicative stage after it."""

    def cost(i: int) -> tuple[int, int]:
        p = options[i]
        need = _stage_need(p)
        top = next_power_of_two(max([q + 1 for q in p.out_pos] + [2]))
        here = _copy_estimate(p.in_pos, _reads(p), need)
        return (0 if need <= limit else 1), here + 2 * need.bit_length() + copies[i] + 2 * top.bit_length()

    return options[min(range(len(options)), key=cost)]


def _reads(p: StagePlan) -> list[int]:
    """How often the linear stage ``p`` reads each of its input slots."""
    from symverify.kaleidoscope.selection import column_counts

    assert isinstance(p.stage, LinearStage)
    return column_counts(p.stage.rows, len(p.stage.inputs))


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


def _stage_need(p: StagePlan) -> int:
    """The size the linear stage ``p`` needs: the power of two above its positions, its route's
    size (:func:`_sparse_need`) and ``p.k_rows`` (twice the shift of a multiplicative stage after it)."""
    top = max([q + 1 for q in (*p.in_pos, *p.out_pos)] + [2])
    return max(next_power_of_two(top), _sparse_need(stage_matrix(p)[0], p.in_pos, p.out_pos, top), p.k_rows)


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


def _two_entry(st: LinearStage) -> set[int]:
    """The rows of ``st`` with two entries: their combine needs a free partner position."""
    return {r for r, row in enumerate(st.rows) if sum(1 for _, co in row if not is_zero(co)) == 2}


def _counts(nxt: Stage | None, count: int) -> list[int]:
    """How often the linear stage ``nxt`` reads each of its ``count`` input slots (1 each when
    ``nxt`` is not such a stage)."""
    from symverify.kaleidoscope.selection import column_counts

    if not isinstance(nxt, LinearStage) or len(nxt.inputs) != count:
        return [1] * count
    return column_counts(nxt.rows, count)


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


def _bijective_copy(st: LinearStage) -> dict[int, int] | None:
    """``{input slot: row}`` when every row of ``st`` copies a different input slot (coefficient 1,
    no offset) and every slot is copied; else None."""
    src = {row[0][0]: r for r, row in enumerate(st.rows) if len(row) == 1 and row[0][1] == 1}
    ok = len(src) == len(st.rows) == len(st.inputs) and set(src) == set(range(len(st.inputs))) and not any(st.offset)
    return src if ok else None


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


def stage_matrix(p: StagePlan) -> tuple[dict[tuple[int, int], Scalar], dict[int, Scalar]]:
    """The entries ``{(out position, in position): coeff}`` and the offsets of a linear stage."""
    st = p.stage
    assert isinstance(st, LinearStage)
    ents: dict[tuple[int, int], Scalar] = {}
    for r, row in enumerate(st.rows):
        for slot, co in row:
            key = (p.out_pos[r], p.in_pos[slot])
            ents[key] = ents.get(key, 0) + co
    ents = {k: v for k, v in ents.items() if not is_zero(v)}
    off = {p.out_pos[r]: o for r, o in enumerate(st.offset) if not is_zero(o)}
    return ents, off


def stage_factors(ents: Mapping[tuple[int, int], Scalar], in_pos: Sequence[int], out_pos: Sequence[int],
                  size: int) -> tuple[Route, int, list[ButterflyFactor]]:
    """The cheapest butterfly route for a stage matrix: ``(route, BB* count, factors at size)``."""
    from symverify.kaleidoscope.matrix import SparseMatrix
    from symverify.kaleidoscope.permutation import route_permutation
    from symverify.kaleidoscope.selection import direct_route, is_selection, selection_route, selection_size
    from symverify.kaleidoscope.sparse import sparse_to_kaleidoscope

    shape, one = _shape(ents, size)
    if shape == "diagonal":
        diag: list[Scalar] = [0] * size
        for (i, _), v in ents.items():
            diag[i] = v
        if set(in_pos) == set(out_pos) and all(type(diag[q]) is int and diag[q] == 1 for q in out_pos):
            return "identity", 0, []
        return "diagonal", 0, [diagonal_factor(diag)]
    if one is not None:
        return "butterfly", 1, [one]
    dim = max([q + 1 for q in (*in_pos, *out_pos)] + [2])  # every live position, or it would pass through
    if shape == "permutation":
        sub = next_power_of_two(dim)
        perm = complete_permutation(sub, {j: i for i, j in ents})
        scale_after: list[Scalar] = [0] * sub
        for (i, _), v in ents.items():
            scale_after[i] = v
        fs = list(route_permutation(perm).factors)
        fs[-1] = fs[-1].absorb(scale_after, "after")
        direct = direct_route(ents, in_pos, out_pos, size)  # a permutation is a selection too
        if direct is not None and direct.count < len(simplify_factors(fs)):
            return "selection", 0, list(direct.factors)
        return "permutation", 1, [f.lift(size) for f in fs]
    if is_selection(ents) and selection_size(ents, in_pos, out_pos) <= size:
        route = selection_route(ents, in_pos, out_pos, size)
        return "selection", 0, list(route.factors)
    K = sparse_to_kaleidoscope(SparseMatrix.from_dict(dim, dim, ents)).kaleidoscope
    if K.size > size:
        raise CompileError(f"internal: a stage needs kaleidoscope size {K.size} > N_k = {size}")
    return "sparse", K.width, list(K.lift(size).factor_list().factors)


def mul_layers(lay: Layout, v1: Sequence[int], k_rows: int, v3: Sequence[int], pending: bool,
               offset: Mapping[int, Scalar]) -> tuple[Layer, Layer]:
    """``M1``, ``M2`` of the multiplicative stage (Proposition H.10; module docstring), built by
    instantiating the ∀-proved definition :func:`symverify.parametric.library.mul_stage` at this
    layout (``R`` track rows, ``tw``, ``d = width``, ``k = k_rows``, ``pend``) with the placement
    ``V1 = v1``, ``V3 = v3`` (as track cells) and the constants ``C = offset``.

    The masks list exactly the occupied positions: ``v1``, ``v2`` at ``v1 + k_rows·tw`` (the same
    channel, ``k_rows`` rows below) and ``v3``, pairwise disjoint, with ``k_rows ≤ R/2`` so every
    read of ``M2`` stays in ``B1``, its gap or ``B2``.
    ``M1`` (the closing conv layer, summing a pending state and adding the linear stage's
    constants ``offset``) keeps ``v1`` and ``v3`` in ``B0`` and puts ``v2`` in ``B1``;
    ``M2 = (u·I) ⊙ (h ⊛ u + mask(v3))`` with ``h`` reading ``B1`` ``k_rows`` rows below (tap
    ``N' − S − k_rows``): a ``v1`` cell becomes ``v1·v2``, a ``v3`` cell ``v3·(0 + 1)`` (its read
    meets a ``B1`` row outside ``v2``, or the gap), every other cell 0. The grids are stored as the
    other compiler layers store theirs (:func:`~.layout.grid`).
    """
    from symverify.parametric.concrete import instantiate
    from symverify.parametric.definitions import mul_stage

    tw = lay.tw
    consts = {lay.cell(p): v for p, v in offset.items() if not is_zero(v)}
    placement = {"V1": frozenset(lay.cell(p) for p in v1), "V3": frozenset(lay.cell(p) for p in v3)}
    params = {"R": lay.track_rows, "tw": tw, "d": lay.width, "k": k_rows, "pend": int(pending)}
    out = []
    for la in instantiate(mul_stage(), params, {"C": lambda r, c: consts.get((r, c), 0)}, placement):
        W, b1, h, b2 = (grid(g.rows, g.cols, g.nonzero()) for g in (la.W, la.b1, la.h, la.b2))
        out.append(Layer(W, b1, h, b2, la.mode))
    return out[0], out[1]


@dataclass
class Build:
    """The pieces of a compiled circuit (model, certificate, per-stage records)."""

    model: Model
    certificate: Certificate
    layout: Layout
    stages: list[dict[str, object]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    live_width: int = 0


def _node_state(lay: Layout, pos: Sequence[int], nodes: Sequence[int]) -> CellState:
    return CellState.at_positions(lay, list(zip(pos, nodes)))


def _node_boundary(layer: int, lay: Layout, pos: Sequence[int], nodes: Sequence[int], label: str) -> Boundary:
    return Boundary(layer, tuple(sorted((Cell.node(*lay.cell(p), v) for p, v in zip(pos, nodes)), key=lambda c: (c.row, c.col))), label)


def _check_stage(em: GadgetEmitter, p: StagePlan, ents: Mapping[tuple[int, int], Scalar], off: Mapping[int, Scalar]) -> None:
    """Internal invariant: the tracked values equal ``M·z + c`` exactly, nothing elsewhere."""
    st = p.stage
    assert isinstance(st, LinearStage)
    node_at = {q: st.inputs[s] for s, q in enumerate(p.in_pos)}
    want: dict[int, dict[int, Scalar]] = {}
    for (i, j), v in ents.items():
        acc = want.setdefault(i, {})
        acc[node_at[j]] = acc.get(node_at[j], 0) + v
    want_forms = {i: Affine({v: x for v, x in want.get(i, {}).items() if not is_zero(x)}, off.get(i, 0))
                  for i in set(want) | set(off)}
    want_forms = {i: f for i, f in want_forms.items() if f}
    got = em.state.values()
    for i, v in off.items():
        got[i] = got.get(i, Affine()) + Affine.constant(v)
    got = {i: f for i, f in got.items() if f}
    if got != want_forms:
        bad = sorted(set(got) ^ set(want_forms) | {i for i in got if i in want_forms and got[i] != want_forms[i]})
        raise AssertionError(f"internal: linear stage level {st.level} computes the wrong values at positions {bad[:8]}")


Matrices = list[tuple[dict[tuple[int, int], Scalar], dict[int, Scalar]]]


@dataclass(frozen=True)
class Prepared:
    """What :func:`build_model` builds from: the stage plans, their matrices, the layout, the
    layered form's largest state (computed once by :func:`prepare`) and whether the plan was exact."""

    plans: tuple[StagePlan, ...]
    mats: Matrices
    layout: Layout
    live_width: int
    exact: bool = False


def prepare(c: Circuit, plan: str = "auto") -> Prepared:
    """Plan every stage (``plan``: see :func:`plan_stages`) and choose the layout (no gadget is emitted)."""
    lf = layered_form(c)
    d = c.d
    plans, exact = _plan(c, lf, d, plan)
    mats: Matrices = [stage_matrix(p) if not p.is_mul else ({}, {}) for p in plans]
    extent = max([q + 1 for p in plans for q in (*p.in_pos, *p.out_pos)] + [2])
    need = max([extent] + [_sparse_need(e, p.in_pos, p.out_pos, extent) for (e, _), p in zip(mats, plans)]
               + [2 * p.k_rows * track_width(d) for p in plans if p.is_mul])  # k_rows ≤ R/2: M2 reads stay in B1 and its gap
    return Prepared(tuple(plans), mats, Layout.choose(c.n, d, need), lf.width, exact)


def _sparse_need(ents: Mapping[tuple[int, int], Scalar], in_pos: Sequence[int], out_pos: Sequence[int], extent: int) -> int:
    """The size a stage's route needs beyond the positions: the selection route's size for rows of
    ≤ 2 entries (:func:`~symverify.kaleidoscope.selection.selection_size`), ``2·nnz`` for the
    general sparse route (Theorem 3's expansion), nothing for a diagonal, one butterfly factor or
    a scaled permutation."""
    from symverify.kaleidoscope.selection import is_selection, selection_size

    if _shape(ents, next_power_of_two(extent))[0] != "sparse":
        return 0
    return selection_size(ents, in_pos, out_pos) if is_selection(ents) else 2 * len(ents)


def _shape(ents: Mapping[tuple[int, int], Scalar], size: int) -> tuple[str, ButterflyFactor | None]:
    """Which route a stage matrix takes: ``diagonal``, ``butterfly`` (with its one factor at
    ``size``), ``permutation`` (one entry per row and per column) or ``sparse``."""
    if all(i == j for i, j in ents):
        return "diagonal", None
    one = single_factor(ents, size)
    if one is not None:
        return "butterfly", one
    rows, cols = [i for i, _ in ents], [j for _, j in ents]
    if len(set(rows)) == len(rows) and len(set(cols)) == len(cols):
        return "permutation", None
    return "sparse", None


def planned_size(c: Circuit) -> Layout:
    """The layout :func:`build_model` will use (:func:`prepare`: no gadget is emitted)."""
    return prepare(c).layout


def _anchor(c: Circuit, bounds: list[Boundary], start: tuple[int, set[int]], outputs: Sequence[int]) -> tuple[int, set[int]]:
    """Make the gadget boundaries since the last node boundary (index, nodes) = ``start`` mention
    what the checker will expand (see :func:`~symverify.compiler.layout.mention`); returns the
    new last node boundary."""
    idx, nodes = start
    need = gate_support(c, outputs, nodes)
    for k in range(idx + 1, len(bounds) - 1):
        bounds[k] = mention(bounds[k], need)
    return len(bounds) - 1, set(outputs)


def build_model(c: Circuit, name: str = "", prepared: Prepared | None = None) -> Build:
    """Compile ``c`` (any circuit) as described in the module docstring; ``prepared``: the result
    of :func:`prepare` for ``c`` when the caller already has it."""
    pre = prepared if prepared is not None else prepare(c)
    plans, mats, lay = pre.plans, pre.mats, pre.layout
    d = c.d
    start = input_state(lay, plans[0].stage.inputs)
    em = GadgetEmitter(lay, start, prune=True)
    bounds = [state_boundary(0, start, "input")]
    em.gather("layout: inputs gathered onto the track")
    records: list[dict[str, object]] = []
    start_nodes = (0, set(plans[0].stage.inputs))
    counts = {"mul": 0}
    for idx, p in enumerate(plans):
        st = p.stage
        if isinstance(st, MulStage):
            prev_off = mats[idx - 1][1]
            m1, m2 = mul_layers(lay, p.out_pos[:st.k], p.k_rows, p.out_pos[st.k:], em.state.pending, prev_off)
            em.layers.extend(em.pruned((m1, m2)))
            counts["mul"] += 1
            em.state = _node_state(lay, p.out_pos, st.outputs)
            bounds.extend(em.boundaries)
            em.boundaries.clear()
            bounds.append(_node_boundary(em.position, lay, p.out_pos, st.outputs, f"level {st.level} products"))
            start_nodes = _anchor(c, bounds, start_nodes, st.outputs)
            records.append({"kind": "mul", "level": st.level, "k": st.k, "k_rows": p.k_rows, "layers": 2})
            continue
        ents, off = mats[idx]
        before = em.position
        route, w, fs = stage_factors(ents, p.in_pos, p.out_pos, lay.size)
        fs = list(simplify_factors(fs))
        for j, f in enumerate(fs):
            em.factor(f, f"level {st.level} linear, factor {j}")
        _check_stage(em, p, ents, off)
        fused = idx + 1 < len(plans) and plans[idx + 1].is_mul
        if not fused:
            em.close(off, "", boundary=False)
            em.state = _node_state(lay, p.out_pos, st.outputs)
        gadget_bounds = len(em.boundaries)
        bounds.extend(em.boundaries)
        em.boundaries.clear()
        if not fused:
            if gadget_bounds and bounds[-1].layer == em.position:
                bounds.pop()  # the node listing replaces the form listing after the last gadget
            bounds.append(_node_boundary(em.position, lay, p.out_pos, st.outputs, f"level {st.level} linear stage"))
            start_nodes = _anchor(c, bounds, start_nodes, st.outputs)
        records.append({"kind": "linear", "level": st.level, "route": route, "bbstar": w, "nnz": len(ents),
                        "factors": len(fs), "layers": em.position - before})
    if lay.gathered:
        em.scatter(len(c.outputs))
        cells = tuple(Cell.node(k // d, k % d, v) for k, v in enumerate(c.outputs))
        bounds.append(Boundary(em.position, cells, "layout: outputs scattered to their cells"))
    counts.update(em.counts)
    model = Model(c.n, d, lay.rows, lay.width, tuple(em.layers), name or (c.name and f"{c.name}_kaleidoscope") or "")
    last = bounds[-1]
    if last.layer != len(model.layers):
        raise AssertionError("internal: the last boundary is not at the last layer")
    cert = Certificate(tuple(bounds), (("method", "kaleidoscope"), ("theorem", "Theorem H.21")))
    return Build(model, cert, lay, records, counts, pre.live_width)
