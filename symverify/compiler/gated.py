"""Direct causal BaseConv models for gated convolutions (Hyena, H3): ``order + 3`` layers, ``N' = N``.

The gated convolution of order m (:mod:`symverify.library_gated`) is, stage by stage, exactly what
a BaseConv layer ``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` computes, so the direct construction follows the
forward pass with one layer per stage, all causal, on ``d' = (m+1)·d`` channels (block j of d
channels holds ``x_{j+1}`` for ``j < m`` and ``v`` for ``j = m``):

1. *in-projection* (``W = W_in``, ``b1 = b_in``, ``h = 0``, ``b2 = 1``): ``P = u·W_in + b_in``;
2. *pre-filter* (``W = 0``, ``b1 = 1``, ``h_c = s_c``, ``b2 = β``): ``P̃_c = s_c ⊛ P_c + β_c``;
3. *first gate* (``h = e_0``, ``b2 = 0``; on the v block ``W`` picks ``x̃_1``): ``w_1 = x̃_1 ⊙ ṽ``;
   blocks ``x̃_2 … x̃_m`` kept (``b1 = 1, W = 0, h = e_0``), block ``x_1`` cleared;
4. per gate ``i = 1 … m−1`` (``h = h_i + D_i·e_0`` on the v block, ``W`` picks ``x̃_{i+1}``):
   ``w_{i+1} = x̃_{i+1} ⊙ ((h_i + D_i·e_0) ⊛ w_i)`` — the long convolution and the next gate in
   one layer; the blocks still needed kept, the used one cleared;
5. *out-projection* (``W = W_out`` from the v block, ``b1 = b_out``, ``b2 = 1``) into ``[0, d)``.

So order 2 (Hyena, H3) takes **5 layers, N' = N, d' = 3d**; order m takes ``m + 3`` layers and
``d' = (m+1)·d``. Each result is a :class:`~symverify.compiler.result.Compiled` whose certificate
names, at every layer boundary, the circuit nodes of :func:`symverify.library_gated.gated_conv`
with the same weights; ``verify(circuit, compiled)`` proves the identity stage by stage, for all
values of the weights left symbolic. Theorem H.21's route (``sv.compile(circuit)``) reaches the
same circuit with ``Θ(depth·log width)`` cyclic layers; ``proofs/hyena_direct.py`` tabulates both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from symverify.compiler.result import Compiled, source_meta
from symverify.errors import CompileError, IRError, LimitError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero
from symverify.library_gated import (
    GatedConvNodes,
    GatedConvWeights,
    _plain_args,
    _symbolic_filters,
    gated_conv_layout,
    h3_weights,
    hyena_weights,
)

__all__ = ["gated_conv_direct", "hyena_direct", "h3_direct", "gated_from_zoology"]


def _cols(nn: int, dd: int, values: Mapping[int, Scalar]) -> Grid:
    """An ``nn × dd`` grid whose column c is ``values[c]`` on every row (0 elsewhere)."""
    return Grid(nn, dd, 0, tuple((0, nn, c, c + 1, v) for c, v in sorted(values.items()) if not is_zero(v)))


def _layer(nn: int, dd: int, W: Mapping[tuple[int, int], Scalar], b1: Mapping[int, Scalar],
           h: Mapping[tuple[int, int], Scalar], b2: Mapping[int, Scalar]) -> Layer:
    Wn = {k: v for k, v in W.items() if not is_zero(v)}
    hn = {k: v for k, v in h.items() if not is_zero(v)}
    return Layer(Grid.from_cells(dd, dd, Wn), _cols(nn, dd, b1), Grid.from_cells(nn, dd, hn), _cols(nn, dd, b2), Mode.CAUSAL)


def _layers(N: int, w: GatedConvWeights) -> list[Layer]:
    """The ``m + 3`` layers of the module docstring."""
    d, m, dd = w.d, w.order, w.width
    ch = w.channel
    out: list[Layer] = []
    # 1. P = u·W_in + b_in
    out.append(_layer(N, dd, {(r, c): w.W_in[r][c] for r in range(d) for c in range(dd)}, dict(enumerate(w.b_in)), {},
                      dict.fromkeys(range(dd), 1)))
    # 2. P̃_c = s_c ⊛ P_c + β_c
    out.append(_layer(N, dd, {}, dict.fromkeys(range(dd), 1),
                      {(k, c): s for c in range(dd) for k, s in enumerate(w.short[c]) if k < N}, dict(enumerate(w.short_bias))))
    # 3 and 4: gate i (0 … m−1) reads block i into the v block; blocks i+1 … m−1 are kept
    for i in range(m):
        keep = [ch(j, q) for j in range(i + 1, m) for q in range(d)]
        W = {(ch(i, q), ch(m, q)): 1 for q in range(d)}
        h: dict[tuple[int, int], Scalar] = {(0, c): 1 for c in keep}
        for q in range(d):
            if i == 0:
                h[(0, ch(m, q))] = 1
            else:
                taps = w.long[i - 1][q]
                for k, x in enumerate(taps):
                    h[(k, ch(m, q))] = x + w.long_skip[i - 1][q] if k == 0 else x  # type: ignore[operator]
        out.append(_layer(N, dd, W, dict.fromkeys(keep, 1), h, {}))
    # 5. y = w_m·W_out + b_out
    out.append(_layer(N, dd, {(ch(m, r), q): w.W_out[r][q] for r in range(d) for q in range(d)}, dict(enumerate(w.b_out)),
                      {}, dict.fromkeys(range(d), 1)))
    return out


def _boundaries(N: int, w: GatedConvWeights, nodes: GatedConvNodes) -> list[Boundary]:
    d, m, dd = w.d, w.order, w.width
    ch = w.channel

    def grid(rows: tuple[tuple[int, ...], ...], cols: list[int]) -> list[Cell]:
        return [Cell.node(t, c, rows[t][c]) for t in range(N) for c in cols]

    def blocks(src: tuple[tuple[int, ...], ...], js: range) -> list[Cell]:
        return [Cell.node(t, ch(j, q), src[t][ch(j, q)]) for t in range(N) for j in js for q in range(d)]

    out = [Boundary(0, tuple(Cell.node(i // d, i % d, i) for i in range(N * d)), "input"),
           Boundary(1, tuple(grid(nodes.P, list(range(dd)))), "P = u·W_in + b_in"),
           Boundary(2, tuple(grid(nodes.Pf, list(range(dd)))), "P̃ = s ⊛ P + β")]
    for i in range(m):
        gated = [Cell.node(t, ch(m, q), nodes.w[i][t][q]) for t in range(N) for q in range(d)]
        label = "w1 = x̃1 ⊙ ṽ" if i == 0 else f"w{i + 1} = x̃{i + 1} ⊙ ((h{i} + D{i}·e0) ⊛ w{i})"
        out.append(Boundary(3 + i, tuple(sorted(blocks(nodes.Pf, range(i + 1, m)) + gated, key=lambda c: (c.row, c.col))), label))
    out.append(Boundary(m + 3, tuple(Cell.node(t, q, nodes.y[t][q]) for t in range(N) for q in range(d)), "y = w·W_out + b_out"))
    return out


def _certificate_cells(N: int, d: int, order: int, where: str) -> None:
    """Refuse a direct model whose certificate would name more than ``MAX_CELLS`` cells: its
    ``order + 4`` boundaries hold up to ``N·(order+1)·d`` cells each, so building it (and the layers'
    grids) takes work ``Θ((order+3)·N·(order+1)·d)``, quadratic in the order (``hyena_direct(2, 1,
    10**6)`` ran until killed, within every other limit)."""
    limits.check((order + 3) * N * (order + 1) * d, "MAX_CELLS",
                 lambda: f"{where}(N={N}, d={d}, order={order}) certificate: (order+3)·N·(order+1)·d cells")


@_plain_args
def gated_conv_direct(N: int, weights: GatedConvWeights, *, method: str = "gated-direct") -> Compiled:
    """The direct causal BaseConv for the gated convolution ``weights`` on sequence length N.

    ``order + 3`` layers, ``N' = N``, ``d' = (order+1)·d``, all causal (module docstring). Prove it
    with ``verify(gated_conv(N, weights), compiled)``. Sizes are read as the builders of
    :mod:`symverify.library_gated` read them (an ``int`` subclass or a numpy integer by its value), so
    ``hyena_direct(N, d)`` takes every ``N`` and ``d`` that ``hyena(N, d)`` takes.

    Raises:
        CompileError: N not a positive int, weights that are not :class:`GatedConvWeights` for N
            (weights built by ``gated_conv_weights(N0, …)`` for another length ``N0`` included: their
            filters would be padded with 0; see :attr:`GatedConvWeights.N`), or
            ``method`` (the result's method name, written in its certificate) not a non-empty str.
        LimitError: an ``N×d'`` state, or a certificate of ``(order+3)·N·d'`` cells, over
            :data:`~symverify.ir.limits.MAX_CELLS` cells.
    """
    if type(method) is not str or not method:
        raise CompileError(f"gated_conv_direct: method: expected a non-empty str (the construction's name), found "
                           f"{type(method).__name__} {safe_repr(method, 40)}")
    if not isinstance(N, int) or isinstance(N, bool) or N < 1:
        raise CompileError(f"{method}: N must be a positive int (the sequence length), found {N!r}")
    if not isinstance(weights, GatedConvWeights):
        raise CompileError(f"{method}: expected GatedConvWeights, found {type(weights).__name__}")
    limits.check(N * weights.width, "MAX_CELLS", f"{method}(N={N}, d={weights.d}, order={weights.order}) state")
    _certificate_cells(N, weights.d, weights.order, method)
    try:
        circuit, nodes = gated_conv_layout(N, weights)
    except LimitError:
        raise
    except IRError as e:
        raise CompileError(f"{method}: {e}") from None
    dd = weights.width
    layers = _layers(N, weights)
    model = Model(N, weights.d, N, dd, tuple(layers), f"{circuit.name} [{method}]")
    cert = Certificate(tuple(_boundaries(N, weights, nodes)),
                       (("construction", method), *source_meta(circuit), ("order", str(weights.order))))
    resources: dict[str, Any] = {
        "layers": len(layers),
        "inner_n": N,
        "inner_d": dd,
        "params": model.param_count(),
        "nonzero_params": model.nonzero_param_count(),
        "cyclic_layers": 0,
        "long_channels": len({(i, c) for i, layer in enumerate(layers) for (k, c) in layer.h.nonzero() if k >= 1}),
    }
    stated = {"layers": weights.order + 3, "inner_n": N, "inner_d": dd, "cyclic_layers": 0}
    notes = (f"verify against symverify.library_gated.gated_conv with the same weights ({circuit.name})",)
    return Compiled(model, cert, resources, method, stated, notes)


def _known_weights(where: str, fn: Any, weights: dict[str, Any]) -> None:
    """Refuse a keyword that ``fn`` does not take (a misspelt weight would otherwise be a ``TypeError``)."""
    import inspect

    known = [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY]
    bad = sorted(set(weights) - set(known))
    if bad:
        raise CompileError(f"{where}: unknown weight arguments {bad}; expected some of {known}")


def _before_weights(kind: str, N: int, d: int, order: int, banks: int) -> None:
    """The limits that sizes alone decide, checked before any weight is made (``N·d`` symbolic taps
    per bank took tens of seconds to build before the gate limit refused them): the state, the
    symbolic filter banks' terms (:func:`~symverify.library_gated._symbolic_filters`) and the
    certificate's cells (:func:`_certificate_cells`)."""
    _symbolic_filters(N, d, order, banks, kind)  # IRError for sizes that are not positive ints (order ≥ 2)
    limits.check(N * (order + 1) * d, "MAX_CELLS", lambda: f"{kind}(N={N}, d={d}, order={order}) state N·(order+1)·d")
    _certificate_cells(N, d, order, f"{kind}-direct")


@_plain_args
def hyena_direct(N: int, d: int, order: int = 2, **weights: Any) -> Compiled:
    """zoology's ``Hyena`` (:func:`symverify.library_gated.hyena`, same keyword arguments; those left
    out are symbolic) as a causal BaseConv: ``order + 3`` layers (5 for order 2), ``N' = N``,
    ``d' = (order+1)·d``.

    >>> out = hyena_direct(8, 2)
    >>> out.model.signature, out.resources["cyclic_layers"]
    ((8, 5, 2, 8, 6), 0)

    Raises:
        CompileError: bad sizes or weights.
        LimitError: an ``N×d'`` state or a certificate of ``(order+3)·N·d'`` cells over
            :data:`~symverify.ir.limits.MAX_CELLS`, or convolutions of more than
            :data:`~symverify.ir.limits.MAX_GATES` terms (symbolic filters and sizes checked before
            the weights are built).
    """
    _known_weights("hyena_direct", hyena_weights, weights)
    try:
        _before_weights("hyena", N, d, order, weights.get("filters") is None)
        w = hyena_weights(N, d, order, **weights)
    except LimitError:
        raise
    except IRError as e:
        raise CompileError(f"hyena_direct: {e}") from None
    return gated_conv_direct(N, w, method="hyena-direct")


@_plain_args
def h3_direct(N: int, d: int, **weights: Any) -> Compiled:
    """zoology's ``H3`` (:func:`symverify.library_gated.h3`, same keyword arguments; those left out
    are symbolic) as a causal BaseConv: 5 layers, ``N' = N``, ``d' = 3d``.

    >>> h3_direct(4, 1).model.signature
    (4, 5, 1, 4, 3)

    Raises:
        CompileError: bad sizes or weights.
        LimitError: an ``N×d'`` state or a certificate of ``(order+3)·N·d'`` cells over
            :data:`~symverify.ir.limits.MAX_CELLS`, or convolutions of more than
            :data:`~symverify.ir.limits.MAX_GATES` terms (symbolic filters and sizes checked before
            the weights are built).
    """
    _known_weights("h3_direct", h3_weights, weights)
    try:
        _before_weights("h3", N, d, 2, (weights.get("shift_kernel") is None) + (weights.get("ssm_kernel") is None))
        w = h3_weights(N, d, **weights)
    except LimitError:
        raise
    except IRError as e:
        raise CompileError(f"h3_direct: {e}") from None
    return gated_conv_direct(N, w, method="h3-direct")


@_plain_args
def gated_from_zoology(module: Any, seq_len: int) -> tuple[Circuit, Compiled]:
    """A zoology ``Hyena`` or ``H3`` module (duck-typed) at sequence length ``seq_len`` as its circuit
    (:func:`symverify.library_gated.gated_conv` with the module's own weights and materialised
    filters as exact rationals) and its direct causal BaseConv (:func:`gated_conv_direct`).
    ``verify(circuit, compiled)`` then proves the identity exactly.

    Raises:
        CompileError: the module is not of either shape, applies a non-polynomial operation to its
            input (named), or is a variant outside the forms followed
            (:func:`symverify.executors.zoology_gated.gated_weights_from_zoology`).
    """
    from symverify.executors.zoology_gated import gated_weights_from_zoology
    from symverify.library_gated import gated_conv

    w = gated_weights_from_zoology(module, seq_len)
    return gated_conv(seq_len, w), gated_conv_direct(seq_len, w, method=f"{w.kind}-direct")
