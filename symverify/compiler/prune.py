"""Remove weights that can only ever multiply a structural zero (a pass on compiled models).

A forward pass tracks which cells of the state *may* be nonzero (the zero-support analysis of
:mod:`symverify.kernel.semantics.support`): the embedded input block at first, then, for each layer, a
cell whose projection branch ``(u·W + b1)[i, q]`` and convolution branch ``(h ⊛ u + b2)[i, q]``
may both be nonzero. A weight is dropped when every term it contributes to is a product with a
structurally zero factor (:func:`~symverify.kernel.semantics.support.prune_layer`):

* ``W[p, q]`` when no row ``i`` has ``u[i, p]`` possibly nonzero and the convolution branch at
  ``(i, q)`` possibly nonzero;
* ``h[k, q]`` when no row ``i`` has its source ``u[i − k, q]`` possibly nonzero and the
  projection branch at ``(i, q)`` possibly nonzero;
* ``b1[i, q]`` (``b2[i, q]``) when the other branch at ``(i, q)`` is structurally zero.

Every dropped term is ``0 · x`` or ``x · 0`` at every cell for every input, so every cell of
every layer keeps its value: the model computes the same function and a stage certificate that
held before still holds. The pass only removes parameters that no perturbation could expose.

A compiler that already pruned some layers while emitting them (the gadget emitter of
:mod:`symverify.compiler.butterfly_to_baseconv`) notes, per layer, the support it pruned that very
layer object on and the support it left (:func:`note_pruned`); where the pass reaches such a layer
with exactly that support, it keeps the layer and takes the noted output support instead of
pruning it again. That is what pruning again would give: :func:`~symverify.kernel.semantics.support.prune_layer`
is idempotent on one support (every weight it keeps still meets a row where both branches may be
nonzero, and those rows are the same for the pruned layer), and the output support it returns
is the same for the layer before and after pruning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.semantics.support import Support, prune_layer, support_of_cells

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["Pruned"]

Pruned = Mapping[int, tuple[Layer, Support, Support]]
"""Per layer index: the layer object as pruned, the support it was pruned on and the support it leaves."""

_NOTED: IdentityMemo[Pruned] = IdentityMemo(8)


def note_pruned(model: Model, pruned: Pruned) -> None:
    """Note that layer ``li`` of ``model`` is ``pruned[li][0]``, the output of
    :func:`~symverify.kernel.semantics.support.prune_layer` on the support ``pruned[li][1]``, which
    leaves the support ``pruned[li][2]`` (module docstring); kept for the last few models, found by
    identity. A note whose layer is not the model's layer at that index is never used. The supports
    are kept as tuples of frozensets made from what is given, so rewriting a set or list given here
    after the call changes nothing noted."""
    _NOTED.put(model, {li: (layer, _frozen(before), _frozen(after)) for li, (layer, before, after) in pruned.items()})


def _frozen(sup: Support) -> Support:
    """``sup`` as a tuple of frozensets (a frozenset given is kept as it is, not copied)."""
    return tuple(map(frozenset, sup))


def prune_structural_zeros(model: Model, certificate: Certificate | None = None) -> Model:
    """The same model without weights that only ever multiply structural zeros (see the module
    docstring); every cell of every layer keeps its value.

    With a stage ``certificate``, the cells it lists at each boundary are also treated as possibly
    nonzero there (the compositional checker gives each a fresh variable), so the certificate
    still checks after pruning.

    >>> from symverify.kernel.ir.baseconv import Layer, Model
    >>> from symverify.kernel.ir.grid import Grid
    >>> dead = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(1, 0): 1}), b2=Grid.full(2, 2, 1))
    >>> prune_structural_zeros(Model(2, 1, 2, 2, (dead,))).layers[0].W.nonzero_count()  # column 1 is 0
    0
    """
    noted = _NOTED.get(model) or {}
    listed: dict[int, list[tuple[int, int]]] = {}
    for b in certificate.boundaries if certificate is not None else ():
        listed.setdefault(b.layer, []).extend((c.row, c.col) for c in b.cells)
    rows = frozenset(range(model.n))  # the input block: rows [0, n) of channels [0, d), one shared set
    sup = tuple(rows if q < model.d else frozenset() for q in range(model.inner_d))
    layers = []
    for li, layer in enumerate(model.layers):
        if li in listed:
            extra = support_of_cells(listed[li], model.inner_d)
            sup = tuple(a | b for a, b in zip(sup, extra))
        note = noted.get(li)
        if note is not None and note[0] is layer and note[1] == sup:  # pruned on this very support already
            layers.append(layer)
            sup = note[2]
            continue
        new, sup = prune_layer(layer, sup)
        layers.append(new)
    return replace(model, layers=tuple(layers))
