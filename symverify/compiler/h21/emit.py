"""Emission for the H.21 compiler: a frozen plan (:mod:`.planner`) becomes the model and its certificate.

Each linear stage's route, chosen by the planner, becomes Lemma H.16 gadgets
(:class:`~symverify.compiler.butterfly_to_baseconv.GadgetEmitter`, pruned to the live cells); each
multiplicative stage the two layers of :func:`mul_layers`; the certificate gets a boundary after
every gadget and every stage. Nothing here routes or chooses positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from symverify.compiler.butterfly_to_baseconv import GadgetEmitter, _stored, input_state
from symverify.compiler.h21.planner import Prepared, prepare
from symverify.compiler.h21.stages import StagePlan
from symverify.compiler.layout import CellState, Layout, gate_support, mention, state_boundary
from symverify.compiler.prune import note_pruned
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.layered import LinearStage, MulStage, Stage
from symverify.kernel.ir.scalar import Scalar, is_zero

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["Build"]


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
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.parametric.definitions import mul_stage

    tw = lay.tw
    consts = {lay.cell(p): v for p, v in offset.items() if not is_zero(v)}
    placement = {"V1": frozenset(lay.cell(p) for p in v1), "V3": frozenset(lay.cell(p) for p in v3)}
    params = {"R": lay.track_rows, "tw": tw, "d": lay.width, "k": k_rows, "pend": int(pending)}
    m1, m2 = instantiate(mul_stage(), params, {"C": lambda r, c: consts.get((r, c), 0)}, placement)
    return _stored(m1), _stored(m2)


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


def _anchor(c: Circuit, bounds: list[Boundary], start: tuple[int, set[int]], outputs: Sequence[int]) -> tuple[int, set[int]]:
    """Make the gadget boundaries since the last node boundary (index, nodes) = ``start`` mention
    what the checker will expand (see :func:`~symverify.compiler.layout.mention`); returns the
    new last node boundary."""
    idx, nodes = start
    need = gate_support(c, outputs, nodes)
    for k in range(idx + 1, len(bounds) - 1):
        bounds[k] = mention(bounds[k], need)
    return len(bounds) - 1, set(outputs)


def _outputs_in_place(st: CellState, outputs: int) -> bool:
    """Whether the scatter layers would leave ``st`` as it is, so the model ends without them.

    The scatter moves output ``k`` from track position ``output_position(k)`` to its model cell
    ``(k // d, k % d)`` and zeroes every other cell; the state it leaves is
    ``{(k // d, k % d): value(output_position(k))}``. For ``k % d < tw`` the track cell of
    ``output_position(k) = (k // d)·tw + k % d`` *is* ``(k // d, k % d)``, so when every output has
    ``k % d < tw`` (e.g. a single output) and the state holds nothing but the outputs, that state
    equals the clean state ``st`` itself: both scatter layers act as the identity on it and the
    last node boundary already lists the outputs at their model cells.
    """
    if st.pending:
        return False
    lay, vals = st.lay, st.values()
    after = {divmod(k, lay.d): vals[lay.output_position(k)] for k in range(outputs) if lay.output_position(k) in vals}
    return after == {cell: f for cell, f in st.cells.items() if f}


def _read_cells(st: Stage, d: int) -> set[tuple[int, int]] | None:
    """The model's input cells the first stage reads (input slot ``k`` sits at cell ``(k // d, k % d)``):
    the slots a linear stage's rows name with a nonzero coefficient; None (every cell) for a product
    stage."""
    if not isinstance(st, LinearStage):
        return None
    return {divmod(slot, d) for row in st.rows for slot, co in row if not is_zero(co)}


def build_model(c: Circuit, name: str = "", prepared: Prepared | None = None) -> Build:
    """Compile ``c`` (any circuit) as described in the package docstring; ``prepared``: the result
    of :func:`prepare` for ``c`` when the caller already has it."""
    pre = prepared if prepared is not None else prepare(c)
    plans, mats, lay = pre.plans, pre.mats, pre.layout
    d = c.d
    start = input_state(lay, plans[0].stage.inputs)
    bounds = [state_boundary(0, start, "input")]
    # the emitter starts from the input cells the first stage reads: the first layer zeroes the
    # others (the gather moves only its IN cells; a first factor's coefficients sit only on its
    # SUP cells, a diagonal one's on its KEEP cells), so no weight carries a value nothing reads
    read = _read_cells(plans[0].stage, d)
    em = GadgetEmitter(lay, start if read is None else CellState(lay, {k: f for k, f in start.cells.items() if k in read}), prune=True)
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
        chosen = pre.routes[idx]
        assert chosen is not None, "internal: a linear stage without its route"
        route, w, fs = chosen.route, chosen.groups, chosen.factors
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
    if lay.gathered and not _outputs_in_place(em.state, len(c.outputs)):
        em.scatter(len(c.outputs))
        cells = tuple(Cell.node(k // d, k % d, v) for k, v in enumerate(c.outputs))
        bounds.append(Boundary(em.position, cells, "layout: outputs scattered to their cells"))
    counts.update(em.counts)
    model = Model(c.n, d, lay.rows, lay.width, tuple(em.layers), name or (c.name and f"{c.name}_kaleidoscope") or "")
    last = bounds[-1]
    if last.layer != len(model.layers):
        raise AssertionError("internal: the last boundary is not at the last layer")
    cert = Certificate(tuple(bounds), (("method", "kaleidoscope"), ("theorem", "Theorem H.21")))
    note_pruned(model, em.pruned_at)  # compile's whole-model pruning pass then skips the layers pruned here
    return Build(model, cert, lay, records, counts, pre.live_width)
