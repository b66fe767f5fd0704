"""The H.21 planner: the positions of every state, chosen exactly or greedily, and the plan emitted.

:func:`prepare` is pure: from a circuit it returns a frozen :class:`Prepared` whose linear stages
carry their chosen routes (:mod:`.routes`, memoised), so emission (:mod:`.emit`) never routes.
``plan="exact"`` (:func:`_plan_exact`) is a shortest path over the chain of linear stages whose
edge weights are the routes' layers (counted without building the routes; only the chosen ones
are built, by :func:`prepare`); ``"greedy"`` (:func:`_plan_greedy`) goes stage by stage by
estimated factor counts; ``"auto"`` is exact when ``N_k·(Δ + 1) ≤`` :data:`EXACT_PLAN_WORK`.
Every plan takes only layouts whose stage fits the stated size (:func:`~.size.stated_size`).
The stages planned are those of the circuit's needed part (:func:`~symverify.compiler.needed.needed_part`:
gates no output depends on become the constant 0), so a value stays live only while a needed gate reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from symverify.compiler.h21.placement import (
    Cand,
    _broadcast_options,
    _copy_estimate,
    _counts,
    _Option,
    _options,
    _preferred,
)
from symverify.compiler.h21.routes import (
    StageRoute,
    _sparse_need,
    _stage_cost,
    _stage_layers,
    _stage_need,
    expensive_copy,
    route_layers,
    stage_matrix,
    stage_route,
)
from symverify.compiler.h21.size import stated_size
from symverify.compiler.h21.stages import StagePlan, _normalise, _reads
from symverify.compiler.layout import Layout, track_position, track_width
from symverify.compiler.needed import needed_part
from symverify.errors import CompileError
from symverify.kaleidoscope.structured import butterfly_positions
from symverify.kernel.ir.analysis import cut_width
from symverify.kernel.ir.butterfly import next_power_of_two
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.layered import LayeredForm, LinearStage, MulStage, Stage, layered_form
from symverify.kernel.ir.scalar import Scalar

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["EXACT_PLAN_WORK", "PLANS", "Prepared"]


EXACT_PLAN_WORK = 768
"""``plan="auto"`` plans exactly (:func:`_plan_exact`) when the stated size ``N_k = 4·2^⌈log2 w⌉``
times the number of linear stages (``Δ + 1``) is at most this: ``w ≤ 16`` up to ``Δ = 11``,
``w ≤ 32`` up to ``Δ = 5``, ``w ≤ 64`` up to ``Δ = 2``; otherwise
greedily by estimates (:func:`_plan_greedy`). The exact plan weighs every route of every pair of
layouts (counted from their shapes, :func:`~.routes._stage_shape`, not built) and places the
direct-route layouts of every state (:class:`~symverify.kaleidoscope.selection.BroadcastPlacer`),
so its time grows with both (about 1.5 s at the limit). The limit keeps ``auto`` no slower than
the earlier limit (640, every route built) on each set of ``benchmarks/h21_plan_compare.py`` and
never more layers; above it the exact plan still saves layers (``elementary_symmetric(8)``,
``N_k·(Δ + 1) = 832``: 162 layers instead of the greedy 240, about 3.5 s) with ``plan="exact"``."""


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
    limit = stated_size(cut_width(c))  # the stated N_k (package docstring)
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


Matrices = list[tuple[dict[tuple[int, int], Scalar], dict[int, Scalar]]]


@dataclass(frozen=True)
class Prepared:
    """The plan :func:`~.emit.build_model` emits: the stage plans, their matrices, the route each
    linear stage takes at the layout's size (None for a multiplicative stage), the layout, the
    layered form's largest state and whether the plan was exact. Emission only reads it."""

    plans: tuple[StagePlan, ...]
    mats: Matrices
    layout: Layout
    live_width: int
    exact: bool = False
    routes: tuple[StageRoute | None, ...] = ()


def prepare(c: Circuit, plan: str = "auto", max_cells: int | None = None) -> Prepared:
    """Plan every stage (``plan``: see :func:`plan_stages`) and choose the layout (no gadget is emitted), and route every linear stage at the
    layout's size (memoised: the planner has usually routed it already). When a stage needs an
    expensive copy network at its own size (:func:`~.routes.expensive_copy`), the layout of twice the
    size (within the stated ``N_k`` and ``max_cells``) is taken if its routes take fewer layers in all; the plans'
    placements and the layer counts they were chosen by (at each stage's own size) are unchanged."""
    lf = layered_form(needed_part(c))
    d = c.d
    plans, exact = _plan(c, lf, d, plan)
    mats: Matrices = [stage_matrix(p) if not p.is_mul else ({}, {}) for p in plans]
    extent = max([q + 1 for p in plans for q in (*p.in_pos, *p.out_pos)] + [2])
    need = max([extent] + [_sparse_need(e, p.in_pos, p.out_pos, extent) for (e, _), p in zip(mats, plans)]
               + [2 * p.k_rows * track_width(d) for p in plans if p.is_mul])  # k_rows ≤ R/2: M2 reads stay in B1 and its gap
    lay = Layout.choose(c.n, d, need)
    routes = tuple(None if p.is_mul else stage_route(p, lay.size) for p in plans)
    if any(not p.is_mul and expensive_copy(p) for p in plans):
        # A stage whose sources need an expensive copy network (a hub beside unread inputs) may
        # route in fewer factors at twice the size: take the doubled layout, within the stated
        # N_k, when its routes take fewer layers in all.
        wide = Layout.choose(c.n, d, 2 * lay.size)
        if wide.size <= stated_size(cut_width(c)) and (max_cells is None or wide.rows * wide.width <= max_cells):
            wider = tuple(None if p.is_mul else stage_route(p, wide.size, room=True) for p in plans)
            if sum(route_layers(r) for r in wider if r) < sum(route_layers(r) for r in routes if r):
                lay, routes = wide, wider
    return Prepared(tuple(plans), mats, lay, lf.width, exact, routes)


def planned_size(c: Circuit) -> Layout:
    """The layout :func:`~.emit.build_model` will use (:func:`prepare`: no gadget is emitted)."""
    return prepare(c).layout
