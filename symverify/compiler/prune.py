"""Remove weights that can only ever multiply a structural zero (a pass on compiled models).

A forward pass tracks which cells of the state *may* be nonzero: the embedded input block at
first, then, for each layer, a cell whose projection branch ``(u·W + b1)[i, q]`` and convolution
branch ``(h ⊛ u + b2)[i, q]`` may both be nonzero. A weight is dropped when every term it
contributes to is a product with a structurally zero factor:

* ``W[p, q]`` when no row ``i`` has ``u[i, p]`` possibly nonzero and the convolution branch at
  ``(i, q)`` possibly nonzero;
* ``h[k, q]`` when no row ``i`` has its source ``u[i − k, q]`` possibly nonzero and the
  projection branch at ``(i, q)`` possibly nonzero;
* ``b1[i, q]`` (``b2[i, q]``) when the other branch at ``(i, q)`` is structurally zero.

Every dropped term is ``0 · x`` or ``x · 0`` at every cell for every input, so every cell of
every layer keeps its value: the model computes the same function and a stage certificate that
held before still holds. The pass only removes parameters that no perturbation could expose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.certificate import Certificate
from symverify.ir.grid import Grid

__all__ = ["prune_structural_zeros"]

Support = list[set[int]]  # per column q, the rows i where u[i, q] may be nonzero


def _sparse(rows: int, cols: int, cells: Mapping[tuple[int, int], object]) -> Grid:
    return Grid.from_cells(rows, cols, cells)


def _prune_layer(layer: Layer, sup: Support) -> tuple[Layer, Support]:
    nn, dd = layer.inner_n, layer.inner_d
    cyclic = layer.mode is Mode.CYCLIC
    W, h = layer.W.nonzero(), layer.h.nonzero()
    b1, b2 = layer.b1.nonzero(), layer.b2.nonzero()
    w_by_col: dict[int, list[int]] = {}
    for p, q in W:
        w_by_col.setdefault(q, []).append(p)
    taps: dict[int, list[int]] = {}
    for k, q in h:
        taps.setdefault(q, []).append(k)

    def shifted(q: int, k: int) -> set[int]:
        out = set()
        for src in sup[q]:
            i = src + k
            if i < nn:
                out.add(i)
            elif cyclic:
                out.add(i % nn)
        return out

    conv_sup: list[set[int]] = []
    proj_sup: list[set[int]] = []
    for q in range(dd):
        c = {i for (i, qq) in b2 if qq == q}
        for k in taps.get(q, []):
            c |= shifted(q, k)
        conv_sup.append(c)
        pr = {i for (i, qq) in b1 if qq == q}
        for p in w_by_col.get(q, []):
            pr |= sup[p]
        proj_sup.append(pr)
    keep_W = {(p, q): v for (p, q), v in W.items() if sup[p] & conv_sup[q]}
    keep_h = {(k, q): v for (k, q), v in h.items() if shifted(q, k) & proj_sup[q]}
    keep_b1 = {(i, q): v for (i, q), v in b1.items() if i in conv_sup[q]}
    keep_b2 = {(i, q): v for (i, q), v in b2.items() if i in proj_sup[q]}
    out_sup: Support = []
    for q in range(dd):
        pr = {i for (i, qq) in keep_b1 if qq == q}
        for (p, qq) in keep_W:
            if qq == q:
                pr |= sup[p]
        cv = {i for (i, qq) in keep_b2 if qq == q}
        for (k, qq) in keep_h:
            if qq == q:
                cv |= shifted(q, k)
        out_sup.append(pr & cv)
    if (len(keep_W), len(keep_h), len(keep_b1), len(keep_b2)) == (len(W), len(h), len(b1), len(b2)):
        return layer, out_sup
    new = replace(
        layer,
        W=layer.W if len(keep_W) == len(W) else _sparse(dd, dd, keep_W),
        h=layer.h if len(keep_h) == len(h) else _sparse(nn, dd, keep_h),
        b1=layer.b1 if len(keep_b1) == len(b1) else _sparse(nn, dd, keep_b1),
        b2=layer.b2 if len(keep_b2) == len(b2) else _sparse(nn, dd, keep_b2),
    )
    return new, out_sup


def prune_structural_zeros(model: Model, certificate: Certificate | None = None) -> Model:
    """The same model without weights that only ever multiply structural zeros (see the module
    docstring); every cell of every layer keeps its value.

    With a stage ``certificate``, the cells it lists at each boundary are also treated as possibly
    nonzero there (the compositional checker gives each a fresh variable), so the certificate
    still checks after pruning.

    >>> from symverify.ir.baseconv import Layer, Model
    >>> from symverify.ir.grid import Grid
    >>> dead = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(1, 0): 1}), b2=Grid.full(2, 2, 1))
    >>> prune_structural_zeros(Model(2, 1, 2, 2, (dead,))).layers[0].W.nonzero_count()  # column 1 is 0
    0
    """
    listed: dict[int, list[tuple[int, int]]] = {}
    for b in certificate.boundaries if certificate is not None else ():
        listed.setdefault(b.layer, []).extend((c.row, c.col) for c in b.cells)
    sup: Support = [set(range(model.n)) if q < model.d else set() for q in range(model.inner_d)]
    layers = []
    for li, layer in enumerate(model.layers):
        for i, q in listed.get(li, ()):
            sup[q].add(i)
        new, sup = _prune_layer(layer, sup)
        layers.append(new)
    return replace(model, layers=tuple(layers))
