"""Butterfly factors as BaseConv layers (Lemma H.16) and kaleidoscope matrices (Lemma H.18).

Layout: :mod:`symverify.compiler.layout`: ``d' = d``; ``z[p]`` at local row ``p // tw``, channel
``p % tw`` of row block ``B0``; ``B1``, ``B2`` are row blocks ``S`` and ``2S`` rows further (each
block of ``R = N_k/tw`` rows followed by a gap of ``⌊R/2⌋`` zero rows), cyclic mode. A factor of
stride ``s`` maps, on every pair ``(p, q = p+s)`` with block ``[[d1, d2], [d3, d4]]``
(``ir/butterfly.py``)::

    out[p] = d1·x[p] + d2·x[q],      out[q] = d3·x[p] + d4·x[q],

i.e. ``B·x = D_main ⊙ x + D_up ⊙ S(x) + S(D_low ⊙ x)`` (the printed proof of Lemma H.16 drops the
shifts S; docs/theory.md §4). A layer is either a *conv layer* ``b1 ⊙ (h ⊛ u + b2)`` (``W = 0``)
or a *mix layer* ``(u·W) ⊙ G`` (``h = 0``); every gadget starts with the conv layer ``A``
(:func:`block_taps`, instantiated from
:func:`symverify.parametric.library.block_scale` and its kin): taps ``k·S`` add the blocks onto each other, so every block it writes
receives ``T = B0 + B1`` (a pending sum is completed here) and ``b1`` puts a coefficient on each
destination cell.

* **sequence axis** (``s ≥ tw``: ``q`` is ``t = s/tw`` rows below ``p``, same channel). ``A``:
  ``B0``: ``d1`` at ``p``, ``d4`` at ``q``; ``B1``: ``d2`` at ``q``; ``B2``: ``d3`` at ``p``.
  ``B``: ``B0[r] + B1[r + t] + B2[r − t] → B0[r]`` (taps ``0``,
  ``N' − S − t``, ``S + t``), ones on ``B0``. A row ``p`` reads ``B1[q] = d2·x[q]`` and
  ``B2[p − t]``, a ``q`` row of the previous pair block where ``B2`` is 0; a row ``q`` reads
  ``B2[p] = d3·x[p]`` and ``B1[q + t]``, a ``p`` row of the next block where ``B1`` is 0; a read
  past the end of a block meets its gap (``t ≤ ⌊R/2⌋``). Clean result in ``B0``: 2 layers.
* **channel axis** (``s < tw``: ``q = p XOR s`` in the same row). ``A``: ``B0`` holds
  ``d1·x[p], d2·x[q]`` at ``p, q``, ``B1`` holds ``d3·x[p], d4·x[q]``. ``C``:
  ``u·(I + P_s)`` gives every cell ``u[p] + u[q]``, masked to ``B0`` at
  ``p`` (``out[p]``) and ``B1`` at ``q`` (``out[q]``): the 2×2 block as a sum of two rank-one
  terms. The result stays *pending* (``B0 + B1``): 2 layers, the sum done by the next ``A``.
* **diagonal** (``d2 = d3 = 0``): ``A`` alone on ``B0``: 1 layer.

The **closing sum** ``B0 + B1 (+ offset) → B0`` is one more ``A`` (:func:`sum_layer`), needed
only after a channel factor or for an offset. So a chain costs 2 layers per non-diagonal factor,
1 per diagonal factor, plus at most 1 closing layer. **Constant c16 = 3**: one factor alone takes
at most 3 layers (channel), 2 (sequence) or 1 (diagonal). Identity factors cost 0 layers;
diagonal factors are absorbed into a neighbour and equal-stride neighbours are multiplied
(docs/kaleidoscope.md §1.2). When ``d`` is not a power of two, two gather layers first move the
input onto the track and two scatter layers end the model (:func:`gather_layers`,
:func:`scatter_layers`).

**Pruning** (``GadgetEmitter(prune=True)``): the emitter tracks every cell as a linear form over
the inputs of the stage, so it knows which cells are 0 on every input. It leaves out every
coefficient that would multiply such a cell, restricts the masks to the cells that can be
nonzero, and drops ``W`` entries and filter taps that only meet zeros
(:func:`symverify.kernel.semantics.support.prune_layer`). The function on the model's inputs is
unchanged, and every remaining weight moves a live value (a perturbation changes some stage's
function).

**Lemma H.18**: ``M ∈ (BB*)^w_e`` acting on ``vec(u)`` (``n·d = M.n``) is the chain of all its
factors: ``L ≤ 2·w·2·log2(N_k) + 1 = 4·w·log2(N_k) + 1`` (**c18 = 4**) with ``N_k = e·n·d`` when
``d`` is a power of two, inner length ``N' = 3·(R + ⌊R/2⌋)``, ``R = N_k/d``, and width ``d' = d``.
For other ``d`` two Beneš permutations (Theorem 2) move the gathered track positions to ``vec``
positions and back, so ``w`` becomes ``w + 2``, and the gather and scatter add 4 layers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache

from symverify.compiler.layout import (
    BUFFERS,
    Axis,
    CellState,
    Layout,
    axis_of,
    gate_support,
    grid,
    is_diagonal,  # noqa: F401 (importable by name)
    mention,
    state_boundary,
    track_factor,
    track_sum,
)
from symverify.errors import CompileError
from symverify.ir.bigint import safe_repr
from symverify.kaleidoscope.permutation import complete_permutation
from symverify.kaleidoscope.simplify import diagonal_factor, simplify_factors  # noqa: F401 (importable by name)
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import ButterflyFactor, Kaleidoscope, next_power_of_two
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, as_index, is_zero
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.parametric.bulk import CellSet
from symverify.kernel.semantics.support import Support, prune_layer, support_of_cells

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["Axis", "GadgetEmitter", "Chain", "factor_circuit", "factor_model", "kaleidoscope_model", "kaleidoscope_factors", "C16", "C18"]

C16 = 3  # layers for one factor on its own (Lemma H.16)
C18 = 4  # L ≤ C18·w·log2(N_k) + 1 for a (BB*)^w chain (Lemma H.18)
CYC = Mode.CYCLIC


# ---- layers -----------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _track_cells(lay: Layout, block: int = 0) -> CellSet:
    """The cells of every track position in ``block``: frozen and kept per layout (placements only
    read them, and a chain places every factor on the same layout)."""
    return CellSet(lay.cell(p, block) for p in range(lay.size))


def conv_layer(lay: Layout, taps: Mapping[tuple[int, int], Scalar], scale: Mapping[tuple[int, int], Scalar],
               offset: Mapping[tuple[int, int], Scalar] | None = None) -> Layer:
    """``b1 ⊙ (h ⊛ u + b2)``: ``W = 0``, ``h = taps`` (``(k, channel)``: row ``i`` reads ``u[i − k]``,
    cyclic), ``b1 = scale`` (destination coefficients), ``b2 = offset``."""
    rows, width = lay.rows, lay.width
    return Layer(Grid.zeros(width, width), grid(rows, width, scale), grid(rows, width, taps), grid(rows, width, offset or {}), CYC)


def mix_layer(lay: Layout, W: Mapping[tuple[int, int], Scalar], gate: Mapping[tuple[int, int], Scalar]) -> Layer:
    """``(u·W) ⊙ G``: ``h = 0``, ``b1 = 0``, ``b2 = G`` positional (``W[(src, dst)]`` mixes channels)."""
    rows, width = lay.rows, lay.width
    return Layer(grid(width, width, W), Grid.zeros(rows, width), Grid.zeros(rows, width), grid(rows, width, gate), CYC)


def block_taps(lay: Layout, sources: AbstractSet[int], targets: AbstractSet[int]) -> dict[tuple[int, int], Scalar]:
    """The taps that add block ``b`` of the input onto block ``b'`` (same local row) for every
    ``b ∈ sources``, ``b' ∈ targets``: ``k = ((b' − b) mod 3)·S``. Every target block then holds
    ``Σ_b B_b``, exactly, when the other blocks are 0 (the blocks form the group ``Z_3``)."""
    ks = {((t - b) % BUFFERS) * lay.block for b in sources for t in targets}
    return {(k, c): 1 for k in ks for c in range(lay.tw)}


def sum_layer(lay: Layout, pending: bool, offset: Mapping[int, Scalar], live: AbstractSet[tuple[int, int]] | None = None) -> Layer:
    """The closing layer ``B0 + B1 (+ C) → B0``: layer ``A`` with ones on ``B0`` (on the
    ``live`` output cells) and the offset ``C`` in ``b2``.

    **From the ∀-proved definition**: :func:`symverify.parametric.library.block_scale` with ``g = 1``,
    ``C`` = the offset and ``KEEP`` = ``live`` (all of ``B0``'s track when None)."""
    bad = [p for p, v in offset.items() if not is_zero(v) and not 0 <= p < lay.size]
    if bad:
        raise CompileError(f"sum layer: expected offset positions in [0, {lay.size}) (the track), found {sorted(bad)[:5]}")
    tw = lay.tw
    keep = _track_cells(lay) if live is None else set(live)
    fams: dict[str, Callable[[int, int], Scalar]] = {"g": lambda row, ch: 1, "C": lambda row, ch: offset.get(row * tw + ch, 0)}
    return _block_scale(lay, pending, fams, keep)


def _block_scale(lay: Layout, pending: bool, fams: Mapping[str, Callable[[int, int], Scalar]], keep: AbstractSet[tuple[int, int]]) -> Layer:
    """:func:`symverify.parametric.library.block_scale` instantiated at this layout."""
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.parametric.definitions import block_scale

    params = {"R": lay.track_rows, "tw": lay.tw, "d": lay.width, "pend": int(pending)}
    (layer,) = instantiate(block_scale(), params, dict(fams), {"KEEP": keep})
    return _stored(layer)


def factor_layers(lay: Layout, f: ButterflyFactor, pending: bool = False, support: AbstractSet[int] | None = None,
                  live: AbstractSet[tuple[int, int]] | None = None) -> tuple[Layer, ...]:
    """The layers of the Lemma H.16 gadget for ``f`` (without a closing sum).

    Layer ``A`` (summing a ``pending`` state first) puts the coefficients; a sequence factor
    then shifts and sums (layer ``B``), a channel factor mixes pairs (layer ``C``, leaving
    ``out[q]`` pending in ``B1``); a diagonal factor is
    layer ``A`` alone. Pruning (both default to None = off): ``support`` drops coefficients that
    multiply positions known to be 0, ``live`` restricts the last layer's ones to the cells that
    can be nonzero afterwards. Sequence and channel: 2 layers; diagonal: 1.

    **From the ∀-proved definitions**: a sequence or channel factor is built by instantiating
    :func:`symverify.parametric.library.factor_sequence` / ``factor_channel`` at this layout (every
    form: clean or ``pending``, pruned or not, ``d`` a power of two or not) with the factor's blocks
    as the families ``d1 … d4`` and the placements ``SUP`` = the cells of ``support``, ``LIVE`` =
    ``live`` (all cells the layer writes when None) (:func:`_from_definition`); the diagonal factor
    from :func:`symverify.parametric.library.block_scale` (:func:`_diagonal`). The layers are
    identical to the ones the former hand-written builders assembled
    (tests/test_compiler_from_definitions.py keeps that construction as the reference).
    """
    if f.size != lay.size:
        raise CompileError(f"butterfly gadget: factor size {f.size} differs from the layout size N_k = {lay.size}")
    axis = axis_of(f, lay.tw)
    if axis != "diagonal":
        return _from_definition(lay, f, axis, pending, support, live)
    return (_diagonal(lay, f, pending, support),)


def _diagonal(lay: Layout, f: ButterflyFactor, pending: bool, support: AbstractSet[int] | None) -> Layer:
    """The diagonal factor (``d2 = d3 = 0``): :func:`symverify.parametric.library.block_scale` with ``g``
    = the diagonal (``d1`` at a pair's lower position, ``d4`` at its upper one), ``C = 0`` and
    ``KEEP`` = the cells of ``support`` (every track cell when None)."""
    tw = lay.tw
    diag: dict[int, Scalar] = {}
    for m, (p, q) in enumerate(f.pairs()):
        diag[p], diag[q] = f.d1[m], f.d4[m]
    keep = _track_cells(lay) if support is None else _support_cells(lay, support)
    fams: dict[str, Callable[[int, int], Scalar]] = {"g": lambda row, ch: diag[row * tw + ch], "C": lambda row, ch: 0}
    return _block_scale(lay, pending, fams, keep)


def _support_cells(lay: Layout, support: AbstractSet[int]) -> set[tuple[int, int]]:
    """The cells of the positions ``p`` in ``[0, N_k)`` with ``p in support``: read off the support
    when it holds plain ints only, else by testing every position (a member equal to a position,
    such as a numpy integer, selects that position)."""
    if set(map(type, support)) <= {int}:
        return {lay.cell(p) for p in support if 0 <= p < lay.size}
    return {lay.cell(p) for p in range(lay.size) if p in support}


def _from_definition(lay: Layout, f: ButterflyFactor, axis: Axis, pending: bool = False, support: AbstractSet[int] | None = None,
                     live: AbstractSet[tuple[int, int]] | None = None) -> tuple[Layer, ...]:
    """Layers ``A``, ``B`` (sequence, stride ``t·tw``, ``t = 2^e``) or ``A``, ``C`` (channel, stride
    ``2^e < tw = 2^j``) of Lemma H.16 instantiated from the ∀-proved definition at ``R = 2^r`` track
    rows; family ``dX`` at cell ``(row, channel)`` is ``f.dX`` of the pair whose lower position is
    ``row·tw + channel``; ``x1``/``x2`` say whether a coefficient lands in ``B1``/``B2`` (which fixes
    layer ``A``'s taps, :func:`block_taps`). Grids are stored as :func:`~.layout.grid` stores them."""
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.parametric.definitions import factor_channel, factor_sequence

    tw = lay.tw
    pairs = f.pairs()
    low = {p: m for m, (p, _) in enumerate(pairs)}
    blocks = {"d1": f.d1, "d2": f.d2, "d3": f.d3, "d4": f.d4}

    def family(col: Sequence[Scalar]) -> Callable[[int, int], Scalar]:
        return lambda row, ch: col[low[row * tw + ch]]

    def on(p: int) -> bool:
        return support is None or p in support

    fams = {name: family(col) for name, col in blocks.items()}
    # the cells of the supported positions (every track cell without a support), read off the
    # support itself rather than by testing every position of the layout
    sup = _track_cells(lay) if support is None else _support_cells(lay, support)
    r = lay.track_rows.bit_length() - 1
    written: AbstractSet[tuple[int, int]]
    if axis == "sequence":
        written = _track_cells(lay)
        x1, x2 = any(on(q) for _, q in pairs), any(on(p) for p, _ in pairs)
        params = {"r": r, "tw": tw, "e": (f.stride // tw).bit_length() - 1}
        g = factor_sequence()
    else:
        written = {lay.cell(p) for p, _ in pairs} | {lay.cell(q, 1) for _, q in pairs}
        x1, x2 = any(on(p) or on(q) for p, q in pairs), False
        params = {"r": r, "j": tw.bit_length() - 1, "e": f.stride.bit_length() - 1}
        g = factor_channel()
    params |= {"d": lay.width, "pend": int(pending), "x1": int(x1), "x2": int(x2)}
    placement = {"SUP": sup, "LIVE": written if live is None else set(live)}
    return tuple(_stored(layer) for layer in instantiate(g, params, fams, placement))


def _stored(layer: Layer) -> Layer:
    """``layer`` with every grid in :func:`~.layout.grid`'s storage (the same matrices)."""
    W, b1, h, b2 = (_restored(g) for _, g in layer.grids())
    return Layer(W, b1, h, b2, layer.mode)


def _restored(g: Grid) -> Grid:
    """``g`` in :func:`~.layout.grid`'s storage: one rectangle per column run of equal nonzero values.

    When ``g`` has fill 0 and disjoint rectangles of nonzero values (what the concrete
    interpretation builds), its rectangles are cut into columns, sorted by ``(column, row)`` and
    adjacent equal runs merged — the storage :func:`~.layout.grid` gives its nonzero cells, computed
    per rectangle instead of per cell. Any other grid goes through its cells."""
    rects = g.rects
    if type(rects) is tuple and type(g.fill) is int and g.fill == 0:
        if _canonical(rects):
            return g
        cols = sorted(((c, r0, r1, v) for r0, r1, c0, c1, v in rects for c in range(c0, c1)), key=lambda t: (t[0], t[1]))
        out: list[tuple[int, int, int, int, Scalar]] = []
        ok = True
        for c, r0, r1, v in cols:
            if is_zero(v):
                ok = False
                break
            if out and out[-1][2] == c:
                p = out[-1]
                if r0 < p[1]:  # overlapping rectangles: the later paint wins, read the cells
                    ok = False
                    break
                if p[1] == r0 and p[4] == v:
                    out[-1] = (p[0], r1, c, c + 1, p[4])
                    continue
            out.append((r0, r1, c, c + 1, v))
        if ok:
            return _revalidated(g, tuple(out))
    return grid(g.rows, g.cols, g.nonzero())


def _canonical(rects: tuple[tuple[int, int, int, int, Scalar], ...]) -> bool:
    """Whether ``rects`` already are :func:`~.layout.grid`'s storage: one column each, nonzero,
    sorted by ``(column, row)``, disjoint, no two adjacent runs of equal value."""
    pc, p1, pv = -1, 0, None
    for r0, r1, c0, c1, v in rects:
        if c1 != c0 + 1 or is_zero(v):
            return False
        if c0 == pc:
            if r0 < p1 or (r0 == p1 and v == pv):
                return False
        elif c0 < pc:
            return False
        pc, p1, pv = c0, r1, v
    return True


def _revalidated(g: Grid, rects: tuple[tuple[int, int, int, int, Scalar], ...]) -> Grid:
    """A grid of ``g``'s shape with fill 0 and ``rects``, which are ``g``'s own validated
    rectangles cut into columns and merged (so they fit and hold exact values): built without
    repeating ``Grid``'s per-rectangle checks."""
    out = object.__new__(Grid)
    for name, value in (("rows", g.rows), ("cols", g.cols), ("fill", 0), ("rects", rects)):
        object.__setattr__(out, name, value)
    return out


def gather_layers(lay: Layout, cells: AbstractSet[tuple[int, int]] | None = None) -> tuple[Layer, Layer]:
    """The two layers moving input cell ``(i, j)`` to its track position (``d`` not a power of
    two): a conv shifting channels ``j ≥ tw`` down by ``n`` rows, then ``u·W`` with
    ``W[j, j mod tw] = 1`` masked to the track. ``cells``: the occupied input cells (default: all).

    **From the ∀-proved definition**: :func:`symverify.parametric.library.gather` instantiated at
    ``N' = lay.rows``, ``d``, ``n``, ``tw`` with the placement ``IN = cells`` (proved for every set of
    occupied cells on the input rows)."""
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.parametric.definitions import gather

    n, d = lay.n, lay.d
    occupied = set(cells) if cells is not None else {(i, j) for i in range(n) for j in range(d)}
    a, b = instantiate(gather(), _move_sizes(lay), placement={"IN": occupied})
    return _stored(a), _stored(b)


def scatter_layers(lay: Layout, outputs: int) -> tuple[Layer, Layer]:
    """The inverse of :func:`gather_layers` for outputs ``0 … outputs − 1``: ``u·W`` copying
    channel ``j − tw`` to ``j`` masked to the rows each channel reads, then a conv shifting
    channels ``j ≥ tw`` up by ``n`` rows; output ``k`` ends at cell ``(k // d, k % d)``.

    **From the ∀-proved definition**: :func:`symverify.parametric.library.scatter` instantiated at
    ``N' = lay.rows``, ``d``, ``n``, ``tw`` with the placement ``OUT`` = the output cells (proved for
    every set of output cells on the first ``n`` rows)."""
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.parametric.definitions import scatter

    d = lay.d
    if not 0 <= outputs <= lay.n * d:
        raise CompileError(f"scatter layers: expected 0 ≤ outputs ≤ n·d = {lay.n * d} (the model's cells), found {outputs}")
    a, b = instantiate(scatter(), _move_sizes(lay), placement={"OUT": {divmod(k, d) for k in range(outputs)}})
    return _stored(a), _stored(b)


def _move_sizes(lay: Layout) -> dict[str, int]:
    return {"N": lay.rows, "d": lay.d, "n": lay.n, "tw": lay.tw}


# ---- chains -----------------------------------------------------------------------------------


@dataclass
class GadgetEmitter:
    """Appends gadget layers and a certificate boundary after every gadget (builder state).

    ``layer0`` is the index of the first layer this emitter appends in the whole model, so the
    boundaries it records are absolute.
    """

    lay: Layout
    state: CellState
    layer0: int = 0
    prune: bool = False
    layers: list[Layer] = field(default_factory=list)
    boundaries: list[Boundary] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"sequence": 0, "channel": 0, "diagonal": 0, "sum": 0, "gather": 0})
    pruned_at: dict[int, tuple[Layer, Support, Support]] = field(default_factory=dict)
    """Per absolute layer index, what :meth:`pruned` made there: the layer, the support it was pruned
    on and the support it leaves (:func:`symverify.compiler.prune.note_pruned`)."""

    @property
    def position(self) -> int:
        return self.layer0 + len(self.layers)

    def factor(self, f: ButterflyFactor, label: str) -> None:
        """One Lemma H.16 gadget (fusing a pending sum), then a boundary; with ``prune`` the
        coefficients are restricted to the live positions."""
        vals = self.state.values()
        support = set(vals) if self.prune else None
        after = track_factor(self.state, f, vals)
        live = set(after.cells) if self.prune else None
        layers = factor_layers(self.lay, f, self.state.pending, support, live)
        if self.prune:
            layers = self.pruned(layers)
        self.layers.extend(layers)
        self.state = after
        self.counts[axis_of(f, self.lay.tw)] += 1
        self.boundaries.append(state_boundary(self.position, self.state, f"{label} stride {f.stride} ({axis_of(f, self.lay.tw)})"))

    def pruned(self, layers: Sequence[Layer]) -> tuple[Layer, ...]:
        """``layers`` without weights that only multiply structural zeros, starting from the
        current state's nonzero cells (:func:`symverify.kernel.semantics.support.prune_layer`, each layer
        on the support the previous one leaves). The caller appends them next: each is recorded in
        :attr:`pruned_at` at the index it will have."""
        sup = support_of_cells(self.state.cells, self.lay.width)
        out: list[Layer] = []
        for layer in layers:
            new, after = prune_layer(layer, sup)
            self.pruned_at[self.position + len(out)] = (new, sup, after)
            out.append(new)
            sup = after
        return tuple(out)

    def close(self, offset: Mapping[int, Scalar], label: str, *, boundary: bool = True) -> None:
        """The sum layer (with ``offset``); skipped when nothing is pending and no offset is due."""
        if not self.state.pending and all(is_zero(v) for v in offset.values()):
            return
        after = track_sum(self.state, offset)
        layer = sum_layer(self.lay, self.state.pending, offset, set(after.cells) if self.prune else None)
        self.layers.extend(self.pruned((layer,)) if self.prune else (layer,))
        self.state = after
        self.counts["sum"] += 1
        if boundary:
            self.boundaries.append(state_boundary(self.position, self.state, label))

    def gather(self, label: str) -> None:
        """The gather layers when ``d`` is not a power of two (the state holds the model's input
        cells); afterwards every input sits at its track position. A boundary follows.

        Only the cells of the state are moved (``IN`` = those cells): the gather's definition is
        proved for every input state and zeroes the cells outside ``IN``, so a caller may start the
        emitter from the input cells its model reads (:func:`~symverify.compiler.h21.emit.build_model`)."""
        lay = self.lay
        if not lay.gathered:
            return
        raw = self.state.cells
        self.layers.extend(gather_layers(lay, set(raw)))
        self.state = CellState(lay, {lay.cell(lay.input_position(i * lay.d + j)): f for (i, j), f in raw.items()})
        self.counts["gather"] += 2
        self.boundaries.append(state_boundary(self.position, self.state, label))

    def scatter(self, outputs: int) -> None:
        """The scatter layers when ``d`` is not a power of two: output ``k`` from its track
        position to the model cell ``(k // d, k % d)`` (the state must be clean)."""
        lay = self.lay
        if not lay.gathered:
            return
        if self.state.pending:
            raise AssertionError("internal: scatter of a pending state")
        vals = self.state.values()
        layers = scatter_layers(lay, outputs)
        self.layers.extend(self.pruned(layers) if self.prune else layers)
        self.state = CellState(lay, {divmod(k, lay.d): vals[lay.output_position(k)] for k in range(outputs)
                                     if lay.output_position(k) in vals})
        self.counts["gather"] += 2


def input_state(lay: Layout, nodes: Sequence[int]) -> CellState:
    """Node ``nodes[i]`` at the model's input cell ``(i // d, i % d)``."""
    return CellState(lay, {divmod(i, lay.d): Affine.unit(v) for i, v in enumerate(nodes)})


@dataclass(frozen=True)
class Chain:
    """A compiled factor chain: the model, its certificate and the layer counts by gadget kind."""

    model: Model
    certificate: Certificate
    counts: Mapping[str, int]
    layout: Layout


def _final_boundary(lay: Layout, layer: int, outputs: Sequence[int], label: str) -> Boundary:
    cells = tuple(Cell.node(k // lay.d, k % lay.d, v) for k, v in enumerate(outputs))
    return Boundary(layer, cells, label)


def _run_chain(lay: Layout, n: int, d: int, factors: Sequence[ButterflyFactor], outputs: Sequence[int], name: str,
               circuit: Circuit | None = None) -> Chain:
    start = input_state(lay, range(n * d))
    em = GadgetEmitter(lay, start, prune=True)
    first = state_boundary(0, start, "input")
    em.gather("layout: inputs gathered onto the track")
    for j, f in enumerate(simplify_factors(factors)):
        em.factor(f, f"factor {j}")
    em.close({}, "sum", boundary=lay.gathered)
    em.scatter(n * d)  # every row of the product, not only the circuit's outputs: the rest must read 0
    bounds = [first, *em.boundaries]
    if len(bounds) > 1 and bounds[-1].layer == len(em.layers):
        bounds.pop()  # the output placement replaces the state listing at the last layer
    bounds.append(_final_boundary(lay, len(em.layers), outputs, "output"))
    if circuit is not None:
        need = gate_support(circuit, outputs, set(range(n * d)))
        bounds[1:-1] = [mention(b, need) for b in bounds[1:-1]]
    model = Model(n, d, lay.rows, lay.width, tuple(em.layers), name)
    meta = (("construction", name),)
    return Chain(model, Certificate(tuple(bounds), meta), dict(em.counts), lay)


# ---- Lemma H.16 and Lemma H.18 as standalone models ---------------------------------------------


def factor_circuit(f: ButterflyFactor, d: int) -> Circuit:
    """The linear circuit ``vec(y) = B·vec(u)`` of one factor (``n = size/d``): for every pair
    ``out[p] = d1·x[p] + d2·x[p+s]``, ``out[p+s] = d3·x[p] + d4·x[p+s]`` (symbolic allowed).

    >>> c = factor_circuit(ButterflyFactor(2, 1, (1,), (2,), (3,), (4,)), d=2)
    >>> [str(g) for g in c.gates], c.outputs
    (['lin (1)·%0 + (2)·%1', 'lin (3)·%0 + (4)·%1'], (2, 3))
    """
    from symverify.kernel.ir.circuit import Gate

    if not isinstance(f, ButterflyFactor):
        raise CompileError(f"factor_circuit: expected a ButterflyFactor, found {type(f).__name__}")
    d = _dim(d, "d", "factor_circuit")
    if f.size % d:
        raise CompileError(f"factor_circuit: expected d to divide the factor size {f.size}, found d = {d}")
    gates, out = [], [0] * f.size
    for m, (p, q) in enumerate(f.pairs()):
        gates.append(Gate.lin(p, f.d1[m], q, f.d2[m]))
        out[p] = f.size + len(gates) - 1
        gates.append(Gate.lin(p, f.d3[m], q, f.d4[m]))
        out[q] = f.size + len(gates) - 1
    return Circuit(f.size // d, d, tuple(gates), tuple(out), f"butterfly_factor_N{f.size}_s{f.stride}")


def _dim(x: object, name: str, what: str) -> int:
    """``x`` as a positive ``int`` (a numpy integer by its value); a bool, a float, anything else or a
    value ``< 1`` is a :class:`CompileError` naming ``name``, what was found and its type."""
    i = as_index(x)
    if i is None or i < 1:
        raise CompileError(f"{what}: expected {name} to be a positive int, found {safe_repr(x, 40)} of type {type(x).__name__}")
    return i


def _check_pow2_d(d: object, what: str) -> int:
    """``d`` as a positive ``int`` (:func:`_dim`) that is a power of two, else :class:`CompileError`."""
    i = _dim(d, "d", what)
    if i != next_power_of_two(i):
        raise CompileError(f"{what}: expected d to be a power of two (the factor acts on vec of the inner state), found d = {i}")
    return i


def factor_model(f: ButterflyFactor, d: int) -> tuple[Circuit, Chain]:
    """Lemma H.16 on its own: ``u ↦ B·vec(u)`` for one factor, ``n = size/d`` (``d`` a power of
    two), with the certificate against :func:`factor_circuit`. At most ``C16 = 3`` layers.

    >>> c, ch = factor_model(ButterflyFactor(4, 2, (1, 1), (2, 0), (3, 0), (1, 1)), d=1)
    >>> ch.model.signature, dict(ch.counts)["sequence"]
    ((4, 2, 1, 18, 1), 1)
    """
    d = _check_pow2_d(d, "Lemma H.16 factor model")
    circ = factor_circuit(f, d)
    lay = Layout(f.size // d, d, f.size)
    return circ, _run_chain(lay, lay.n, d, [f], circ.outputs, f"lemma_h16_N{f.size}_s{f.stride}", circ)


def kaleidoscope_factors(K: Kaleidoscope, n: int, d: int) -> tuple[Layout, list[ButterflyFactor]]:
    """The layout and factor list computing ``vec(u) ↦ M·vec(u)`` on the inner state (Lemma H.18).

    For ``d`` a power of two, ``vec`` positions are the cell positions and the factors are ``K``'s.
    Otherwise two Beneš permutations (Theorem 2) move the padded cells to contiguous positions and
    back; values the corner leaves outside ``[0, n·d)`` land outside the read-out block.
    """
    from symverify.kaleidoscope.permutation import route_permutation

    if not isinstance(K, Kaleidoscope):
        raise CompileError(f"Lemma H.18: expected a Kaleidoscope (or the Factorization a construction returns), found {type(K).__name__}")
    n, d = _dim(n, "n", "Lemma H.18"), _dim(d, "d", "Lemma H.18")
    if K.n != n * d:
        raise CompileError(f"Lemma H.18: the kaleidoscope corner is {K.n}×{K.n}, expected n·d = {n * d}")
    lay = Layout.choose(n, d, K.size)
    fs = list(K.lift(lay.size).factor_list().factors)
    if not lay.gathered:
        return lay, fs
    to_vec = {lay.input_position(i): i for i in range(n * d)}
    perm_in = route_permutation(complete_permutation(lay.size, to_vec))
    perm_out = route_permutation(complete_permutation(lay.size, {i: p for p, i in to_vec.items()}))
    return lay, list(perm_in.factors) + fs + list(perm_out.factors)


def kaleidoscope_model(K: Kaleidoscope | Factorization, n: int, d: int, circuit: Circuit) -> Chain:
    """Lemma H.18: the BaseConv model of ``u ↦ M·vec(u)``, ``M`` the corner of ``K``.

    ``K`` may be the :class:`Factorization` a construction returns (its kaleidoscope is compiled).
    ``circuit`` names the output nodes for the certificate: any circuit computing ``M·x`` (e.g.
    ``from_matrix(to_matrix(K), n, d)``); rows of ``M`` past its outputs must be 0, which the
    certificate's read-out check enforces (every row of ``M`` is read out, for every ``d``: the
    scatter layers move all ``n·d`` of them, not only the circuit's outputs). ``L ≤ 4·w·log2(N_k) + 1`` (``w + 2`` BB* when ``d``
    is not a power of two). ``n`` and ``d`` are positive ints (a numpy integer by its value; a
    bool, a float or anything else is a :class:`CompileError`).
    """
    if isinstance(K, Factorization):
        K = K.kaleidoscope
    n, d = _dim(n, "n", "Lemma H.18"), _dim(d, "d", "Lemma H.18")
    if not isinstance(circuit, Circuit):
        raise CompileError(f"Lemma H.18: the reference circuit: expected a Circuit, found {type(circuit).__name__}")
    if (circuit.n, circuit.d) != (n, d):
        raise CompileError(f"Lemma H.18: the reference circuit must read {n}×{d} inputs; found {circuit.n}×{circuit.d}")
    lay, fs = kaleidoscope_factors(K, n, d)
    return _run_chain(lay, n, d, fs, circuit.outputs, f"lemma_h18_w{K.width}_N{K.size}", circuit)


def chain_layer_bound(factors: Sequence[ButterflyFactor], gathered: bool = False) -> int:
    """``2·#factors + 1`` over the *unsimplified* list (what Lemma H.18 states), ``+ 4`` with the
    gather and scatter layers."""
    return 2 * len(factors) + 1 + (4 if gathered else 0)
