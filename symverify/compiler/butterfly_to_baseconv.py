"""Butterfly factors as BaseConv layers (Lemma H.16) and kaleidoscope matrices (Lemma H.18).

Layout: :mod:`symverify.compiler.layout` (``z[p]`` at cell ``(p // dp, p % dp)`` of block ``B0``,
``B1``/``B2`` workspace, cyclic mode). A factor of stride ``s`` maps, on every pair ``(p, q = p+s)``
with block ``[[d1, d2], [d3, d4]]`` (``ir/butterfly.py``)::

    out[p] = d1·x[p] + d2·x[q],      out[q] = d3·x[p] + d4·x[q],

i.e. ``B·x = D_main ⊙ x + D_up ⊙ S(x) + S(D_low ⊙ x)`` (the printed proof of Lemma H.16 drops the
shifts S; docs/theory.md §4). The three terms are built in the disjoint buffers and summed:

* **sequence axis** (``s ≥ dp``: ``q`` is ``t = s/dp`` rows below ``p``, same column). Layer 1
  ``(u·W)⊙G`` (``h = 0``, ``b2 = G``): ``W`` copies ``B0`` into ``B0, B1, B2``; ``G`` puts at the
  *source* cell the coefficient each term needs: ``B0``: ``d1`` at ``p``, ``d4`` at ``q``;
  ``B1``: ``d2`` at ``q`` (moves up); ``B2``: ``d3`` at ``p`` (moves down). Layer 2 (``W = 0``,
  ``b1 = 1``, ``b2 = 0``) convolves: ``e_0`` on ``B0``, ``e_{N'−t}`` (shift up by ``t``, cyclic)
  on ``B1``, ``e_t`` on ``B2``. No term lands on a wrong row: ``B1`` is nonzero only on the upper
  rows of the ``2t``-row blocks, so a lower row ``r`` reads ``B1[r+t]`` (its partner) and an upper
  row reads the next block's lower half, which is 0, also when the read wraps cyclically past
  row ``N'−1``; symmetrically for ``B2`` (nonzero on lower rows, read by the upper partner);
* **channel axis** (``s < dp``: ``q = p XOR s`` in the same row). Layer 1 ``(u·W)⊙G``: ``W`` copies
  ``B0 → B0`` and the partner column ``B0[c XOR s] → B1[c]``; ``G`` holds ``d1/d4`` on ``B0`` and
  ``d2`` (at ``p``) / ``d3`` (at ``q``) on ``B1`` (coefficients at the destination);
* **diagonal** (``d2 = d3 = 0``): one ``(u·W)⊙G`` layer on ``B0``.

The **sum** ``B0 + B1 + B2 → B0`` is the projection ``u·W_sum`` (``h = 0``, ``b2 = 1``; ``b1``
carries an affine offset when one is due). It is fused into the next gadget's layer 1, since
``(u·W_sum·W_copy)⊙G`` is still one layer, so a chain costs 2 layers per sequence factor, 1 per
channel or diagonal factor, plus 1 closing sum. **Constant c16 = 3**: one factor alone takes at
most 3 layers (sequence), 2 (channel) or 1 (diagonal). Identity factors cost 0 layers; diagonal
factors are absorbed into a neighbour and equal-stride neighbours are multiplied (docs/kaleidoscope.md §1.2).

**Pruning** (``GadgetEmitter(prune=True)``, used by the circuit compiler): the emitter tracks
every cell as a linear form over the inputs of the stage, so it knows which cells are 0 on every
input. It leaves out every ``G`` coefficient that would multiply such a cell, restricts the
all-ones biases to the cells that can be nonzero, and drops ``W`` entries and filter taps that only
meet zeros (:func:`symverify.semantics.support.prune_layer`). The function on the model's inputs is unchanged, and almost every
remaining weight moves a live value (a perturbation changes some stage's function).

**Lemma H.18**: ``M ∈ (BB*)^w_e`` acting on ``vec(u)`` (``n·d = M.n``) is the chain of all its
factors: ``L ≤ w·(4·log2 N' + 2·log2 dp) + 1 ≤ 4·w·log2(N_k) + 1`` (**c18 = 4**) with
``N_k = e·n·d`` when ``d`` is a power of two, inner length ``N' = N_k/dp`` and width ``d' = 3·dp``.
For other ``d`` two Beneš permutations (Theorem 2) move ``vec(u)`` between the padded cells and
contiguous positions, so ``w`` becomes ``w + 2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from symverify.compiler.layout import (
    BUFFERS,
    Axis,
    CellState,
    Layout,
    axis_of,
    gate_support,
    grid,
    is_diagonal,
    mention,
    state_boundary,
    track_factor,
    track_sum,
)
from symverify.errors import CompileError
from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.butterfly import ButterflyFactor, Kaleidoscope, next_power_of_two
from symverify.ir.certificate import Boundary, Cell, Certificate
from symverify.ir.circuit import Circuit
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar, is_zero
from symverify.kaleidoscope.permutation import complete_permutation
from symverify.semantics.support import prune_layer, support_of_cells

__all__ = [
    "Axis",
    "axis_of",
    "is_diagonal",
    "simplify_factors",
    "GadgetEmitter",
    "Chain",
    "factor_circuit",
    "factor_model",
    "kaleidoscope_model",
    "complete_permutation",
    "diagonal_factor",
    "fused_projection",
    "routed_offset",
    "gate_layer",
    "sum_layer",
    "factor_layers",
    "track_factor",
    "track_sum",
    "kaleidoscope_factors",
    "chain_layer_bound",
    "C16",
    "C18",
]

C16 = 3  # layers for one factor on its own (Lemma H.16)
C18 = 4  # L ≤ C18·w·log2(N_k) + 1 for a (BB*)^w chain (Lemma H.18)
CYC = Mode.CYCLIC


# ---- factor algebra ---------------------------------------------------------------------------


def _diag(f: ButterflyFactor) -> list[Scalar]:
    out: list[Scalar] = [0] * f.size
    for m, (p, q) in enumerate(f.pairs()):
        out[p], out[q] = f.d1[m], f.d4[m]
    return out


def diagonal_factor(diag: Sequence[Scalar]) -> ButterflyFactor:
    n = len(diag)
    return ButterflyFactor(n, 1, tuple(diag[0::2]), (0,) * (n // 2), (0,) * (n // 2), tuple(diag[1::2]))


def _mul_diag(a: list[Scalar] | None, b: list[Scalar]) -> list[Scalar]:
    return list(b) if a is None else [x * y for x, y in zip(a, b)]


def simplify_factors(factors: Sequence[ButterflyFactor]) -> tuple[ButterflyFactor, ...]:
    """The same product with identity factors dropped, diagonal factors absorbed into a
    neighbour and adjacent equal-stride factors multiplied (docs/kaleidoscope.md §1.2); application order kept.

    >>> I = ButterflyFactor.identity(4, 1)
    >>> D = ButterflyFactor(4, 2, (2, 1), (0, 0), (0, 0), (1, 1))
    >>> X = ButterflyFactor(4, 1, (0, 0), (1, 1), (1, 1), (0, 0))
    >>> [(f.stride, f.d2) for f in simplify_factors([I, D, X, X])]
    [(1, (0, 0))]
    """
    out: list[ButterflyFactor] = []
    diag: list[Scalar] | None = None
    work = list(factors)
    while work:
        f = work.pop(0)
        if f.is_identity():
            continue
        if is_diagonal(f):
            diag = _mul_diag(diag, _diag(f))
            continue
        if diag is not None:
            f, diag = f.absorb(diag, "before"), None
        if out and out[-1].stride == f.stride:
            work.insert(0, out.pop().then(f))  # the product may be diagonal or identity: re-examine
            continue
        out.append(f)
    if diag is not None and not all(type(v) is int and v == 1 for v in diag):
        if out:
            out[-1] = out[-1].absorb(diag, "after")
        else:
            out.append(diagonal_factor(diag))
    return tuple(out)


# ---- layers -----------------------------------------------------------------------------------


def _w_copy(lay: Layout, axis: Axis, stride: int) -> dict[tuple[int, int], Scalar]:
    dp = lay.dp
    W: dict[tuple[int, int], Scalar] = {}
    for c in range(dp):
        W[(c, c)] = 1
        if axis == "sequence":
            W[(c, dp + c)] = 1
            W[(c, 2 * dp + c)] = 1
        elif axis == "channel":
            W[(c ^ stride, dp + c)] = 1
    return W


def fused_projection(lay: Layout, W: Mapping[tuple[int, int], Scalar], pending: bool) -> dict[tuple[int, int], Scalar]:
    """``W_sum·W`` when the input is split over the buffers, else ``W`` (W reads only B0)."""
    if not pending:
        return dict(W)
    return {(b * lay.dp + p, q): v for (p, q), v in W.items() for b in range(BUFFERS)}


def routed_offset(lay: Layout, W: Mapping[tuple[int, int], Scalar], offset: Mapping[int, Scalar]) -> dict[tuple[int, int], Scalar]:
    """``b1 = C·W``: an offset ``C`` (on B0 positions) pushed through a copy matrix ``W``."""
    b1: dict[tuple[int, int], Scalar] = {}
    for p, v in offset.items():
        if is_zero(v):
            continue
        r, c = lay.cell(p)
        for (src, q), w in W.items():
            if src == c:
                b1[(r, q)] = b1.get((r, q), 0) + v * w
    return b1


def gate_layer(lay: Layout, W: Mapping[tuple[int, int], Scalar], G: Mapping[tuple[int, int], Scalar],
               b1: Mapping[tuple[int, int], Scalar] | None = None) -> Layer:
    """``(u·W + b1) ⊙ G``: ``h = 0``, ``b2 = G`` positional."""
    rows, width = lay.rows, lay.width
    return Layer(grid(width, width, W), grid(rows, width, b1 or {}), Grid.zeros(rows, width), grid(rows, width, G), CYC)


def _ones(lay: Layout, cells: AbstractSet[tuple[int, int]] | None) -> Grid:
    """All ones, or ones exactly on ``cells`` (a pruned bias: the other cells only ever multiply 0)."""
    if cells is None:
        return Grid.full(lay.rows, lay.width, 1)
    return grid(lay.rows, lay.width, dict.fromkeys(cells, 1))


def sum_layer(lay: Layout, pending: bool, offset: Mapping[int, Scalar], live: AbstractSet[tuple[int, int]] | None = None) -> Layer:
    """``u·W_sum + C``: ``h = 0``, ``b2 = 1`` (on the ``live`` output cells), ``b1 = C`` on B0."""
    W = fused_projection(lay, {(c, c): 1 for c in range(lay.dp)}, pending)
    b1 = {lay.cell(p): v for p, v in offset.items() if not is_zero(v)}
    rows, width = lay.rows, lay.width
    return Layer(grid(width, width, W), grid(rows, width, b1), Grid.zeros(rows, width), _ones(lay, live), CYC)


def _shift_layer(lay: Layout, t: int, live: AbstractSet[tuple[int, int]] | None = None) -> Layer:
    """Pure convolution: ``e_0`` on B0, up by ``t`` rows on B1, down by ``t`` rows on B2 (cyclic);
    ``b1 = 1`` (on the ``live`` output cells)."""
    rows, dp = lay.rows, lay.dp
    h = {}
    for c in range(dp):
        h[(0, c)] = 1
        h[((rows - t) % rows, dp + c)] = 1
        h[(t % rows, 2 * dp + c)] = 1
    return Layer(Grid.zeros(lay.width, lay.width), _ones(lay, live), grid(rows, lay.width, h), Grid.zeros(rows, lay.width), CYC)


def _coefficients(lay: Layout, f: ButterflyFactor, axis: Axis, support: AbstractSet[int] | None) -> dict[tuple[int, int], Scalar]:
    """The gate ``G`` of layer 1 (see the module docstring for which buffer holds what).

    With ``support`` (the positions whose value is not identically 0), a coefficient that would
    only ever multiply 0 is left out: the layer computes the same function on every input the
    model can see, and every remaining coefficient moves a live value.
    """
    G: dict[tuple[int, int], Scalar] = {}
    cell = lay.cell

    def live(p: int) -> bool:
        return support is None or p in support

    for m, (p, q) in enumerate(f.pairs()):
        lp, lq = live(p), live(q)
        if lp:
            G[cell(p)] = f.d1[m]
        if lq:
            G[cell(q)] = f.d4[m]
        if axis == "sequence":
            if lq:
                G[cell(q, 1)] = f.d2[m]
            if lp:
                G[cell(p, 2)] = f.d3[m]
        elif axis == "channel":
            if lq:
                G[cell(p, 1)] = f.d2[m]
            if lp:
                G[cell(q, 1)] = f.d3[m]
    return G


def factor_layers(lay: Layout, f: ButterflyFactor, pending: bool = False, support: AbstractSet[int] | None = None,
                  live: AbstractSet[tuple[int, int]] | None = None) -> tuple[Layer, ...]:
    """The layers of the Lemma H.16 gadget for ``f`` (without the closing sum).

    ``pending`` fuses the previous gadget's sum into layer 1. Pruning (both default to None = off):
    ``support`` drops coefficients that multiply positions known to be 0 (see
    :func:`_coefficients`), ``live`` restricts the shift layer's all-ones ``b1`` to the cells that
    can be nonzero afterwards. Sequence: 2 layers; channel/diagonal: 1.
    """
    if f.size != lay.size:
        raise CompileError(f"butterfly gadget: factor size {f.size} differs from the layout size N_k = {lay.size}")
    axis = axis_of(f, lay.dp)
    Wc = _w_copy(lay, axis, f.stride)
    first = gate_layer(lay, fused_projection(lay, Wc, pending), _coefficients(lay, f, axis, support))
    if axis != "sequence":
        return (first,)
    return (first, _shift_layer(lay, f.stride // lay.dp, live))


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
    counts: dict[str, int] = field(default_factory=lambda: {"sequence": 0, "channel": 0, "diagonal": 0, "sum": 0})

    @property
    def position(self) -> int:
        return self.layer0 + len(self.layers)

    def factor(self, f: ButterflyFactor, label: str) -> None:
        """One Lemma H.16 gadget (fusing a pending sum), then a boundary; with ``prune`` the
        coefficients are restricted to the live positions."""
        support = set(self.state.values()) if self.prune else None
        after = track_factor(self.state, f)
        live = set(after.cells) if self.prune else None
        layers = factor_layers(self.lay, f, self.state.pending, support, live)
        if self.prune:
            layers = self.pruned(layers)
        self.layers.extend(layers)
        self.state = after
        self.counts[axis_of(f, self.lay.dp)] += 1
        self.boundaries.append(state_boundary(self.position, self.state, f"{label} stride {f.stride} ({axis_of(f, self.lay.dp)})"))

    def pruned(self, layers: Sequence[Layer]) -> tuple[Layer, ...]:
        """``layers`` without weights that only multiply structural zeros, starting from the
        current state's nonzero cells (:func:`symverify.semantics.support.prune_layer`, each layer
        on the support the previous one leaves)."""
        sup = support_of_cells(self.state.cells, self.lay.width)
        out = []
        for layer in layers:
            new, sup = prune_layer(layer, sup)
            out.append(new)
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


@dataclass(frozen=True)
class Chain:
    """A compiled factor chain: the model, its certificate and the layer counts by gadget kind."""

    model: Model
    certificate: Certificate
    counts: Mapping[str, int]
    layout: Layout


def _final_boundary(lay: Layout, layer: int, outputs: Sequence[int], label: str) -> Boundary:
    cells = tuple(Cell.node(*lay.cell(lay.output_position(k)), v) for k, v in enumerate(outputs))
    return Boundary(layer, cells, label)


def _run_chain(lay: Layout, n: int, d: int, factors: Sequence[ButterflyFactor], outputs: Sequence[int], name: str,
               circuit: Circuit | None = None) -> Chain:
    start = CellState.at_positions(lay, [(lay.input_position(i), i) for i in range(n * d)])
    em = GadgetEmitter(lay, start)
    first = state_boundary(0, start, "input")
    for j, f in enumerate(simplify_factors(factors)):
        em.factor(f, f"factor {j}")
    em.close({}, "sum", boundary=False)
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
    from symverify.ir.circuit import Gate

    if f.size % d:
        raise CompileError(f"factor_circuit: d = {d} does not divide the factor size {f.size}")
    gates, out = [], [0] * f.size
    for m, (p, q) in enumerate(f.pairs()):
        gates.append(Gate.lin(p, f.d1[m], q, f.d2[m]))
        out[p] = f.size + len(gates) - 1
        gates.append(Gate.lin(p, f.d3[m], q, f.d4[m]))
        out[q] = f.size + len(gates) - 1
    return Circuit(f.size // d, d, tuple(gates), tuple(out), f"butterfly_factor_N{f.size}_s{f.stride}")


def _check_pow2_d(d: int, what: str) -> None:
    if d != next_power_of_two(d):
        raise CompileError(f"{what}: expected d to be a power of two (the factor acts on vec of the inner state), found d = {d}")


def factor_model(f: ButterflyFactor, d: int) -> tuple[Circuit, Chain]:
    """Lemma H.16 on its own: ``u ↦ B·vec(u)`` for one factor, ``n = size/d`` (``d`` a power of
    two), with the certificate against :func:`factor_circuit`. At most ``C16 = 3`` layers.

    >>> c, ch = factor_model(ButterflyFactor(4, 2, (1, 1), (2, 0), (3, 0), (1, 1)), d=1)
    >>> ch.model.signature, dict(ch.counts)["sequence"]
    ((4, 3, 1, 4, 3), 1)
    """
    _check_pow2_d(d, "Lemma H.16 factor model")
    circ = factor_circuit(f, d)
    lay = Layout(f.size // d, d, d, f.size)
    return circ, _run_chain(lay, lay.n, d, [f], circ.outputs, f"lemma_h16_N{f.size}_s{f.stride}", circ)


def kaleidoscope_factors(K: Kaleidoscope, n: int, d: int) -> tuple[Layout, list[ButterflyFactor]]:
    """The layout and factor list computing ``vec(u) ↦ M·vec(u)`` on the inner state (Lemma H.18).

    For ``d`` a power of two, ``vec`` positions are the cell positions and the factors are ``K``'s.
    Otherwise two Beneš permutations (Theorem 2) move the padded cells to contiguous positions and
    back; values the corner leaves outside ``[0, n·d)`` land outside the read-out block.
    """
    from symverify.kaleidoscope.permutation import route_permutation

    if K.n != n * d:
        raise CompileError(f"Lemma H.18: the kaleidoscope corner is {K.n}×{K.n}, expected n·d = {n * d}")
    lay = Layout.choose(n, d, K.size)
    fs = list(K.lift(lay.size).factor_list().factors)
    if lay.dp == d:
        return lay, fs
    to_vec = {lay.input_position(i): i for i in range(n * d)}
    perm_in = route_permutation(complete_permutation(lay.size, to_vec))
    perm_out = route_permutation(complete_permutation(lay.size, {i: p for p, i in to_vec.items()}))
    return lay, list(perm_in.factors) + fs + list(perm_out.factors)


def kaleidoscope_model(K: Kaleidoscope, n: int, d: int, circuit: Circuit) -> Chain:
    """Lemma H.18: the BaseConv model of ``u ↦ M·vec(u)``, ``M`` the corner of ``K``.

    ``circuit`` names the output nodes for the certificate: any circuit computing ``M·x`` (e.g.
    ``from_matrix(to_matrix(K), n, d)``); rows of ``M`` past its outputs must be 0, which the
    certificate's read-out check enforces. ``L ≤ 4·w·log2(N_k) + 1`` (``w + 2`` BB* when ``d``
    is not a power of two).
    """
    if (circuit.n, circuit.d) != (n, d):
        raise CompileError(f"Lemma H.18: the reference circuit must read {n}×{d} inputs; found {circuit.n}×{circuit.d}")
    lay, fs = kaleidoscope_factors(K, n, d)
    return _run_chain(lay, n, d, fs, circuit.outputs, f"lemma_h18_w{K.width}_N{K.size}", circuit)


def chain_layer_bound(factors: Sequence[ButterflyFactor], dp: int) -> int:
    """``2·#sequence + #channel + 1`` over the *unsimplified* list (what Lemma H.18 states)."""
    seq = sum(1 for f in factors if f.stride >= dp)
    return 2 * seq + (len(factors) - seq) + 1
