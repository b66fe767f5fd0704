"""A direct causal BaseConv for RetNet (beyond Corollary H.22): O(1) layers, ``N' = N``.

Corollary H.22 reaches RetNet through Theorem H.21 (a circuit of depth ``Θ(N)``, hence
``Θ(N·log)`` cyclic layers). A direct construction does much better, because the RetNet state is a
causal long convolution. One RetNet layer (Algorithm 6) on ``u ∈ F^{N×d}``,

    A = u·W_A,  C = u·W_C,  V = u·W_V,  z^n = γ·z^{n−1} + A[n]ᵀV[n],  y[n] = C[n]·z^n,

unrolls to ``z^n[p,q] = Σ_{i≤n} γ^{n−i} A[i,p]·V[i,q]``: the sequence ``O_pq[i] = A[i,p]·V[i,q]``
convolved causally with the kernel ``h[k] = γ^k``. So, per outer-product channel ``(p, q)``:

1. *linear* (``W``, ``b2 = 1``, ``h = 0``): copy ``V[n,q] = Σ_r u[n,r]·W_V[r,q]`` into the channel,
   keep ``u``;
2. *product* (``h = e_0``, ``b2 = 0``): ``(u·W)[n] = A[n,p]`` times the channel itself, giving
   ``O_pq[n]``; ``u`` is kept by ``b1 = 1, W = 0, h = e_0``;
3. *decay* (``h[k] = γ^k``, causal, ``b2 = 0``): ``(u·W)[n] = C[n,p]`` times
   ``Σ_{k≤n} γ^k O_pq[n−k] = z^n[p,q]``, giving ``C[n,p]·z^n[p,q]``;
4. *linear*: ``y[n,q] = Σ_p C[n,p]·z^n[p,q]`` into channel q; everything else 0.

:func:`retnet_direct` builds this with the ``d`` values of p handled ``group`` at a time: a group
of g values of p needs ``g·d`` work channels, and with more than one group an accumulator of d
channels collects ``Σ_p`` between groups (steps 4 and 1 of consecutive groups are one linear
layer). With ``G = ⌈d/g⌉`` groups the model is a causal ``(N, 3G + 1, d, N, d + g·d [+ d])``
BaseConv: ``group = d`` (the default) gives **4 layers and ``d' = d + d²``**; ``group = 1`` gives
**``3d + 1`` layers and ``d' = 3d``**. Every layer is causal and ``N' = N``.

:func:`retnet_stack_direct` stacks RetNet layers by Lemma H.11 (each RetNet layer leaves only its
``N×d`` output nonzero, which is exactly the next one's clean entry interface); ``fuse=True``
merges each junction's two linear layers into one (``u·W_out·W_in``).

Each result is a :class:`~symverify.compiler.result.Compiled` whose certificate names, at every
layer boundary, the circuit nodes of :func:`symverify.library.retnet` /
:func:`~symverify.library.retnet_stack` (called with the same arguments) that each cell holds;
``verify(circuit, compiled)`` checks it stage by stage. Weights left ``None`` are symbols, so the
proof is for all of their values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symverify.compiler.result import Compiled, source_meta
from symverify.errors import CompileError, IRError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_bool, is_zero
from symverify.library import RetNetNodes, RetNetWeights, retnet_layout, retnet_stack_weights, retnet_weights
from symverify.library_gated import _plain_args

__all__ = ["retnet_direct", "retnet_stack_direct", "direct_layout", "DirectLayout"]


@dataclass(frozen=True)
class DirectLayout:
    """Channel layout of the direct construction for one RetNet layer.

    Channels ``[0, d)`` hold ``u`` (and, at the end, ``y``); work slot ``s`` (``0 ≤ s < g``) holds
    the d channels ``d + s·d + q``; with more than one group the accumulator holds ``d + g·d + q``.
    Group ``j`` handles ``p ∈ [j·g, min(d, (j+1)·g))``, p in slot ``p − j·g``.
    """

    N: int
    d: int
    group: int

    @property
    def groups(self) -> int:
        return -(-self.d // self.group)

    @property
    def inner_d(self) -> int:
        return self.d + self.group * self.d + (self.d if self.groups > 1 else 0)

    @property
    def layers(self) -> int:
        return 3 * self.groups + 1

    def work(self, s: int, q: int) -> int:
        return self.d + s * self.d + q

    def acc(self, q: int) -> int:
        return self.d + self.group * self.d + q

    def ps(self, j: int) -> range:
        return range(j * self.group, min(self.d, (j + 1) * self.group))


@_plain_args
def direct_layout(N: int, d: int, group: int | None = None) -> DirectLayout:
    """The :class:`DirectLayout` for ``(N, d, group)`` (``group=None``: ``d``), validated. Sizes are
    read as :func:`symverify.library.retnet` reads them (an ``int`` subclass or a numpy integer by its
    value).

    Raises:
        CompileError: N or d not a positive int, or ``group`` not in ``[1, d]``.
    """
    return _layout(N, d, group, "retnet_direct")


def _layout(N: int, d: int, group: int | None, where: str) -> DirectLayout:
    """:func:`direct_layout`, its errors naming ``where`` (the function called)."""
    problems = []
    for name, v in (("N", N), ("d", d)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            problems.append(f"{name} must be a positive int, found {v!r}")
    if problems:
        raise CompileError(f"{where}: " + "; ".join(problems))
    g = d if group is None else group
    if not isinstance(g, int) or isinstance(g, bool) or not 1 <= g <= d:
        raise CompileError(f"{where}: group must be an int in [1, d] = [1, {d}], found {group!r}")
    lay = DirectLayout(N, d, g)
    limits.check(N * lay.inner_d, "MAX_CELLS", f"{where}(N={N}, d={d}, group={g}) state")
    return lay


# ---- weights ----------------------------------------------------------------------------------


def _live_b2(nn: int, dd: int, W: dict[tuple[int, int], Scalar]) -> Grid:
    """``b2 = 1`` on the columns W writes (a linear layer ``u·W``), 0 elsewhere."""
    cols = sorted({q for (_, q), v in W.items() if not is_zero(v)})
    g = Grid.zeros(nn, dd)
    for c in cols:
        g = g.paint(0, nn, c, c + 1, 1)
    return g


def _linear(nn: int, dd: int, W: dict[tuple[int, int], Scalar]) -> Layer:
    """The linear map ``y = u·W`` (``b1 = 0``, ``h = 0``, ``b2 = 1`` on W's columns)."""
    Wn = {k: v for k, v in W.items() if not is_zero(v)}
    return Layer(Grid.from_cells(dd, dd, Wn), Grid.zeros(nn, dd), Grid.zeros(nn, dd), _live_b2(nn, dd, Wn), Mode.CAUSAL)


def _gated(nn: int, dd: int, W: dict[tuple[int, int], Scalar], keep: Sequence[int], taps: dict[int, Sequence[Scalar]]) -> Layer:
    """``y[:, c] = (u·W)[:, c] ⊙ (h_c ⊛ u[:, c])`` on the channels ``c`` of ``taps`` (``h_c[k] =
    taps[c][k]``, causal), ``y[:, c] = u[:, c]`` on ``keep`` (``b1 = 1``, ``h = e_0``), 0 elsewhere."""
    Wn = {k: v for k, v in W.items() if not is_zero(v)}
    b1 = Grid.zeros(nn, dd)
    for c in keep:
        b1 = b1.paint(0, nn, c, c + 1, 1)
    hcells: dict[tuple[int, int], Scalar] = {(0, c): 1 for c in keep}
    for c, ks in taps.items():
        for k, v in enumerate(ks):
            if not is_zero(v):
                hcells[(k, c)] = v
    return Layer(Grid.from_cells(dd, dd, Wn), b1, Grid.from_cells(nn, dd, hcells), Grid.zeros(nn, dd), Mode.CAUSAL)


def _in_map(lay: DirectLayout, w: RetNetWeights, j: int) -> dict[tuple[int, int], Scalar]:
    """Keep ``u``; ``V[n,q]`` into work channel ``(s, q)`` for every p of group j."""
    d = lay.d
    W: dict[tuple[int, int], Scalar] = {(r, r): 1 for r in range(d)}
    for s in range(len(lay.ps(j))):
        for r in range(d):
            for q in range(d):
                W[(r, lay.work(s, q))] = w.W_V[r][q]
    return W


def _out_map(lay: DirectLayout, j: int) -> dict[tuple[int, int], Scalar]:
    """``Σ`` over group j's slots (plus the accumulator) into the accumulator, or into channels
    ``[0, d)`` after the last group."""
    d, last = lay.d, j == lay.groups - 1
    W: dict[tuple[int, int], Scalar] = {}
    for q in range(d):
        dst = q if last else lay.acc(q)
        for s in range(len(lay.ps(j))):
            W[(lay.work(s, q), dst)] = 1
        if j > 0:
            W[(lay.acc(q), dst)] = 1
    return W


def _compose_maps(first: dict[tuple[int, int], Scalar], second: dict[tuple[int, int], Scalar]) -> dict[tuple[int, int], Scalar]:
    """The matrix product ``first·second`` (the composition ``u ↦ (u·first)·second``)."""
    out: dict[tuple[int, int], Scalar] = {}
    by_row: dict[int, list[tuple[int, Scalar]]] = {}
    for (a, b), v in second.items():
        by_row.setdefault(a, []).append((b, v))
    for (r, a), v in first.items():
        for b, x in by_row.get(a, ()):
            out[(r, b)] = out.get((r, b), 0) + v * x  # type: ignore[operator]
    return {k: v for k, v in out.items() if not is_zero(v)}


def _steps(lay: DirectLayout, w: RetNetWeights) -> list[tuple[str, object]]:
    """One RetNet layer as ``("map", W)`` linear steps and ``("layer", Layer)`` gated layers,
    in order: map, then per group ``product, decay, map``."""
    N, d, dd = lay.N, lay.d, lay.inner_d
    decay = [w.gamma**k if k else 1 for k in range(N)]
    steps: list[tuple[str, object]] = [("map", _in_map(lay, w, 0))]
    for j in range(lay.groups):
        last = j == lay.groups - 1
        acc = [lay.acc(q) for q in range(d)] if j > 0 else []
        slots = list(enumerate(lay.ps(j)))
        # product: work(s, q) ← A[n, p]·V[n, q]
        Wp = {(r, lay.work(s, q)): w.W_A[r][p] for s, p in slots for r in range(d) for q in range(d)}
        taps_p: dict[int, Sequence[Scalar]] = {lay.work(s, q): [1] for s, _ in slots for q in range(d)}
        steps.append(("layer", _gated(N, dd, Wp, list(range(d)) + acc, taps_p)))
        # decay: work(s, q) ← C[n, p]·Σ_k γ^k·work(s, q)[n − k] = C[n, p]·z^n[p, q]
        Wc = {(r, lay.work(s, q)): w.W_C[r][p] for s, p in slots for r in range(d) for q in range(d)}
        taps_c: dict[int, Sequence[Scalar]] = {lay.work(s, q): decay for s, _ in slots for q in range(d)}
        steps.append(("layer", _gated(N, dd, Wc, ([] if last else list(range(d))) + acc, taps_c)))
        out = _out_map(lay, j)
        if not last:
            out.update(_in_map(lay, w, j + 1))
        steps.append(("map", out))
    return steps


# ---- certificate ------------------------------------------------------------------------------


def _boundaries(lay: DirectLayout, nodes: RetNetNodes) -> list[tuple[str, list[Cell]]]:
    """The state after each step of :func:`_steps`, as circuit nodes (every other cell is 0)."""
    N, d = lay.N, lay.d

    def u_cells() -> list[Cell]:
        return [Cell.node(t, r, nodes.u[t][r]) for t in range(N) for r in range(d)]

    def acc_cells(upto: int) -> list[Cell]:
        if upto == 0:
            return []
        return [Cell(t, lay.acc(q), tuple((nodes.read[t][p][q], 1) for p in range(upto))) for t in range(N) for q in range(d)]

    def work(j: int, which: str) -> list[Cell]:
        out = []
        for s, p in enumerate(lay.ps(j)):
            for t in range(N):
                for q in range(d):
                    node = nodes.V[t][q] if which == "V" else (nodes.outer if which == "outer" else nodes.read)[t][p][q]
                    out.append(Cell.node(t, lay.work(s, q), node))
        return out

    out = [("V in work", u_cells() + work(0, "V"))]
    for j in range(lay.groups):
        last = j == lay.groups - 1
        start = j * lay.group
        out.append((f"group {j}: A·V", u_cells() + acc_cells(start) + work(j, "outer")))
        out.append((f"group {j}: C·z", ([] if last else u_cells()) + acc_cells(start) + work(j, "read")))
        if last:
            out.append(("y", [Cell.node(t, q, nodes.y[t][q]) for t in range(N) for q in range(d)]))
        else:
            out.append((f"group {j}: Σ_p", u_cells() + acc_cells(start + len(lay.ps(j))) + work(j + 1, "V")))
    return out


def _sort_cells(cells: list[Cell]) -> tuple[Cell, ...]:
    return tuple(sorted(cells, key=lambda c: (c.row, c.col)))


def _build(N: int, d: int, weights: list[RetNetWeights], group: int | None, fuse: bool, method: str) -> Compiled:
    lay = _layout(N, d, group, method.replace("-", "_"))
    try:
        circuit, all_nodes = retnet_layout(N, d, weights)
    except IRError as e:
        raise CompileError(f"{method}: {e}") from None
    nn, dd = N, lay.inner_d
    layers: list[Layer] = []
    bounds: list[Boundary] = [Boundary(0, tuple(Cell.node(i // d, i % d, i) for i in range(N * d)), "input")]
    pending: dict[tuple[int, int], Scalar] | None = None  # a linear map not yet emitted (fusing)
    for k, (w, nodes) in enumerate(zip(weights, all_nodes)):
        steps = _steps(lay, w)
        labels = _boundaries(lay, nodes)
        for n, ((kind, obj), (label, cells)) in enumerate(zip(steps, labels)):
            tag = f"layer {k}: {label}" if len(weights) > 1 else label
            if kind == "map":
                assert isinstance(obj, dict)
                W = obj if pending is None else _compose_maps(pending, obj)
                pending = None
                if fuse and n == len(steps) - 1 and k < len(weights) - 1:
                    pending = W  # merged with the next RetNet layer's first map
                    continue
                layers.append(_linear(nn, dd, W))
            else:
                assert isinstance(obj, Layer)
                layers.append(obj)
            bounds.append(Boundary(len(layers), _sort_cells(cells), tag))
    model = Model(N, d, nn, dd, tuple(layers), circuit.name + f" [{method}, group={lay.group}]")
    cert = Certificate(tuple(bounds), (("construction", method), *source_meta(circuit), ("group", str(lay.group))))
    per = lay.layers
    L = len(layers)
    long_pairs = sum(1 for layer in layers for (k, _c) in layer.h.nonzero() if k >= 1)
    long_channels = len({(i, c) for i, layer in enumerate(layers) for (k, c) in layer.h.nonzero() if k >= 1})
    resources = {
        "layers": L,
        "inner_n": nn,
        "inner_d": dd,
        "params": model.param_count(),
        "nonzero_params": model.nonzero_param_count(),
        "cyclic_layers": sum(1 for layer in layers if layer.mode is Mode.CYCLIC),
        "long_channels": long_channels,
        "long_taps": long_pairs,
    }
    stated = {
        "layers": len(weights) * per - (len(weights) - 1 if fuse else 0),
        "inner_n": N,
        "inner_d": lay.inner_d,
        "cyclic_layers": 0,
    }
    notes = (f"verify against symverify.library.{'retnet' if len(weights) == 1 else 'retnet_stack'} with the same "
             f"arguments ({circuit.name})",)
    return Compiled(model, cert, resources, method, stated, notes)


@_plain_args
def retnet_direct(N: int, d: int, gamma: object = None, W_A: Sequence[Sequence[object]] | None = None,
                  W_C: Sequence[Sequence[object]] | None = None, W_V: Sequence[Sequence[object]] | None = None,
                  *, group: int | None = None) -> Compiled:
    """One RetNet layer (Algorithm 6) as a causal BaseConv with ``N' = N`` (see the module docstring).

    The layers realise, with ``G = ⌈d/group⌉`` groups of ``group`` values of p each:

    * layer 0: ``u ↦ [u | V[:,q] in every work channel (s, q)]`` (linear);
    * per group, ``work(s, q) ← A[n,p]·V[n,q]`` (``W`` picks ``A[n,p] = Σ_r u[n,r]·W_A[r,p]``,
      ``h = e_0``), then ``work(s, q) ← C[n,p]·Σ_{k≤n} γ^k·work(s, q)[n−k] = C[n,p]·z^n[p,q]``
      (``h[k] = γ^k``, causal), then one linear layer adding the slots into the accumulator (or,
      after the last group, ``y[n,q] = Σ_p C[n,p]·z^n[p,q]`` into channel q) and loading V for the
      next group.

    Resources: ``3G + 1`` layers (4 for the default ``group = d``), ``N' = N``,
    ``d' = d + group·d`` (plus d accumulator channels when ``G > 1``), all causal. Arguments left
    ``None`` are symbolic (``gamma``, ``W_A[p][q]``, …; :func:`symverify.library.retnet_weights`).
    Prove it with ``verify(library.retnet(N, d, gamma, W_A, W_C, W_V), compiled)``.

    This is the construction Corollary H.22's statement invites but does not give: the corollary
    goes through Theorem H.21 (``Θ(N·log)`` cyclic layers); here the decay sum is one causal long
    convolution.

    >>> out = retnet_direct(8, 2)
    >>> out.model.signature, out.resources["cyclic_layers"]
    ((8, 4, 2, 8, 6), 0)

    Sizes are read as :func:`symverify.library.retnet` reads them (an ``int`` subclass or a numpy
    integer by its value), so every ``(N, d)`` it builds a circuit for is compiled.

    Raises:
        CompileError: bad sizes, ``group`` outside ``[1, d]`` or malformed weights.
        LimitError: an ``N×d'`` state over :data:`~symverify.ir.limits.MAX_CELLS` cells.
    """
    _layout(N, d, group, "retnet_direct")
    try:
        w = retnet_weights(d, gamma, W_A, W_C, W_V)
    except IRError as e:
        raise CompileError(f"retnet_direct: {e}") from None
    return _build(N, d, [w], group, False, "retnet-direct")


@_plain_args
def retnet_stack_direct(N: int, d: int, layers: int | Sequence[RetNetWeights], *, group: int | None = None,
                        fuse: bool = False) -> Compiled:
    """A stack of RetNet layers (:func:`symverify.library.retnet_stack`) as one causal BaseConv.

    Each RetNet layer is :func:`retnet_direct`'s construction; they are stacked by Lemma H.11: a
    RetNet layer ends with its output in the ``N×d`` block and every other cell 0, which is the
    next layer's clean entry interface (the certificate states, and the checker proves, that
    boundary). ``k`` layers take ``k·(3G + 1)`` BaseConv layers, or ``k·3G + 1`` with ``fuse=True``,
    which replaces each junction's two linear layers ``u·W_out`` and ``u·W_in`` by one ``u·(W_out·W_in)``.

    ``layers`` is a count (symbolic weights ``L{k}.gamma``, ``L{k}.W_A[p][q]``, …) or a sequence of
    :class:`~symverify.library.RetNetWeights`.

    Raises:
        CompileError: bad sizes or weights, or ``fuse`` not ``True`` or ``False`` (a numpy bool by its
            value: ``fuse="no"`` would otherwise read as true and fuse).
        LimitError: an ``N×d'`` state over :data:`~symverify.ir.limits.MAX_CELLS` cells.
    """
    if not is_bool(fuse):
        raise CompileError(f"retnet_stack_direct: fuse: expected True or False, found {type(fuse).__name__} {safe_repr(fuse, 40)}")
    fuse = bool(fuse)
    _layout(N, d, group, "retnet_stack_direct")
    try:
        ws = retnet_stack_weights(d, layers)
    except IRError as e:
        raise CompileError(f"retnet_stack_direct: {e}") from None
    if not ws:
        raise CompileError("retnet_stack_direct: expected at least one layer")
    return _build(N, d, ws, group, fuse, "retnet-stack-direct")
