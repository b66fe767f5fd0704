"""Which cells may be nonzero: the one structural zero-support analysis of BaseConv layers.

A *support* lists, per channel ``q``, the rows ``i`` where the state ``u[i, q]`` may be nonzero;
every other cell is 0 on every input. Through one layer ``(u·W + b1) ⊙ (h ⊛ u + b2)``
(docs/theory.md §1.1), per column ``q``:

* the projection branch ``(u·W + b1)[i, q]`` may be nonzero only at rows of ``b1[:, q]`` and at
  rows ``i`` with ``u[i, p]`` in the support for some ``W[p, q] ≠ 0``;
* the convolution branch ``(h ⊛ u + b2)[i, q]`` only at rows of ``b2[:, q]`` and at rows
  ``i = src + k`` (mod ``N'`` when cyclic; dropped past ``N'`` when causal) for a tap
  ``h[k, q] ≠ 0`` and a source ``u[src, q]`` in the support;
* the output ``[i, q]`` only where both branches may be nonzero (a product with a structural 0
  is 0).

The analysis is sound (a cell outside the support is 0 for every input and every weight value
that keeps the weights' zero pattern) and exact about the pattern, not the values: cancellations
are not seen. It drives the pruning of weights that only ever multiply a structural zero
(:func:`prune_layer`, used by :mod:`symverify.compiler.prune` and the butterfly gadgets of
:mod:`symverify.compiler.butterfly_to_baseconv`).

The same lattice with labels is :class:`Dependence`: a value is structurally zero, or may be
nonzero and depends on a set of labels (input rows, for the causal lemma of
:mod:`symverify.gadgets.causal`). ``+`` joins, ``·`` is zero when a factor is zero and joins
otherwise. Run through the one interpreter (:func:`symverify.kernel.semantics.evaluate.eval_model` in
:class:`DependenceRing`), its nonzero cells are exactly :func:`layer_support`'s; the per-channel
row sets above are that analysis with the labels dropped, at the speed of set operations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero

__all__ = ["Dependence", "DependenceRing", "Support", "LayerSupport", "support_of_cells", "layer_support", "model_supports", "prune_layer"]

Support = tuple[frozenset[int], ...]
"""Per channel ``q``, the rows where ``u[i, q]`` may be nonzero."""


def support_of_cells(cells: Iterable[tuple[int, int]], inner_d: int) -> Support:
    """The support holding exactly ``cells`` (``(row, channel)`` pairs)."""
    rows: list[set[int]] = [set() for _ in range(inner_d)]
    for i, q in cells:
        rows[q].add(i)
    return tuple(frozenset(r) for r in rows)


@dataclass(frozen=True)
class LayerSupport:
    """One layer's branches and output on a given input support (see the module docstring)."""

    inputs: Support
    projection: Support
    convolution: Support
    output: Support


def _shifted(rows: Iterable[int], k: int, nn: int, cyclic: bool) -> set[int]:
    """``{src + k}`` for ``src`` in ``rows``: wrapped mod ``nn`` when cyclic, else kept below ``nn``."""
    if cyclic:
        return {(src + k) % nn for src in rows}
    return {src + k for src in rows if src + k < nn}


def _meets(rows: Iterable[int], k: int, nn: int, cyclic: bool, target: frozenset[int]) -> bool:
    """Whether ``_shifted(rows, k, nn, cyclic) & target`` is nonempty, without building either set:
    False at once for an empty ``target``, else ``isdisjoint`` over the shifted rows as they come,
    which stops at the first one in ``target``."""
    if not target:
        return False
    if cyclic:
        return not target.isdisjoint((src + k) % nn for src in rows)
    return not target.isdisjoint(src + k for src in rows if src + k < nn)


def _by_column(cells: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """``{q: [a, …]}`` for the cells ``(a, q)``; only columns with a cell are keys."""
    out: dict[int, list[int]] = {}
    for a, q in cells:
        out.setdefault(q, []).append(a)
    return out


_EMPTY: frozenset[int] = frozenset()


def _branches(W: Iterable[tuple[int, int]], h: Iterable[tuple[int, int]], b1: Iterable[tuple[int, int]],
              b2: Iterable[tuple[int, int]], sup: Support, nn: int, dd: int, cyclic: bool) -> tuple[Support, Support]:
    """The projection and convolution branches' supports, column by column (module docstring); a
    column with no weight in a branch gets the empty set without a set being built for it."""
    w_by_col, taps = _by_column(W), _by_column(h)
    b1_rows, b2_rows = _by_column(b1), _by_column(b2)
    proj: list[frozenset[int]] = [_EMPTY] * dd
    conv: list[frozenset[int]] = [_EMPTY] * dd
    for q in w_by_col.keys() | b1_rows.keys():
        pr = set(b1_rows.get(q, ()))
        for p in w_by_col.get(q, ()):
            pr |= sup[p]
        proj[q] = frozenset(pr)
    for q in taps.keys() | b2_rows.keys():
        cv = set(b2_rows.get(q, ()))
        for k in taps.get(q, ()):
            cv |= _shifted(sup[q], k, nn, cyclic)
        conv[q] = frozenset(cv)
    return tuple(proj), tuple(conv)


def layer_support(layer: Layer, sup: Support) -> LayerSupport:
    """The branches' and the output's support of ``layer`` on inputs supported on ``sup``.

    >>> from symverify.kernel.ir.grid import Grid
    >>> shift = Layer.make(3, 1, h=Grid.from_cells(3, 1, {(1, 0): 1}), b1=Grid.full(3, 1, 1))
    >>> layer_support(shift, (frozenset({0}),)).output  # row 0 moves down one row
    (frozenset({1}),)
    """
    nn, dd = layer.inner_n, layer.inner_d
    proj, conv = _branches(layer.W.nonzero(), layer.h.nonzero(), layer.b1.nonzero(), layer.b2.nonzero(),
                           sup, nn, dd, layer.mode is Mode.CYCLIC)
    return LayerSupport(sup, proj, conv, tuple(p & c for p, c in zip(proj, conv)))


def prune_layer(layer: Layer, sup: Support) -> tuple[Layer, Support]:
    """``layer`` without the weights that only ever multiply a structural zero on inputs
    supported on ``sup``, and the output support (the same for both layers).

    ``W[p, q]`` is dropped when no row ``i`` has ``u[i, p]`` in the support and the convolution
    branch at ``(i, q)`` possibly nonzero; ``h[k, q]`` when no source ``u[src, q]`` in the support
    lands (at ``src + k``) on a row whose projection branch may be nonzero; ``b1[i, q]``
    (``b2[i, q]``) when the other branch at ``(i, q)`` is structurally zero. Every dropped term is
    ``0·x`` or ``x·0`` at every cell for every input, so every cell keeps its value.

    The output support is ``proj ∩ conv`` of the layer as given, computed once: the pruned layer's
    branches ``proj' ⊆ proj``, ``conv' ⊆ conv`` meet in the same rows. A row ``i ∈ proj[q] ∩ conv[q]``
    stays in ``proj'[q]``: it came from ``b1[i, q]``, kept since ``i ∈ conv[q]``, or from a ``W[p, q]``
    with ``i ∈ sup[p]``, kept since ``sup[p] ∩ conv[q]`` holds ``i``; and in ``conv'[q]`` likewise
    (``b2[i, q]`` kept since ``i ∈ proj[q]``; a tap ``h[k, q]`` landing on ``i`` kept since its
    shifted support meets ``proj[q]`` at ``i``).
    """
    nn, dd = layer.inner_n, layer.inner_d
    cyclic = layer.mode is Mode.CYCLIC
    W, h, b1, b2 = layer.W.nonzero(), layer.h.nonzero(), layer.b1.nonzero(), layer.b2.nonzero()
    proj, conv = _branches(W, h, b1, b2, sup, nn, dd, cyclic)
    keep_W = {(p, q): v for (p, q), v in W.items() if sup[p] & conv[q]}
    keep_h = {(k, q): v for (k, q), v in h.items() if _meets(sup[q], k, nn, cyclic, proj[q])}
    keep_b1 = {(i, q): v for (i, q), v in b1.items() if i in conv[q]}
    keep_b2 = {(i, q): v for (i, q), v in b2.items() if i in proj[q]}
    out = tuple(p & c for p, c in zip(proj, conv))
    if (len(keep_W), len(keep_h), len(keep_b1), len(keep_b2)) == (len(W), len(h), len(b1), len(b2)):
        return layer, out
    new = replace(
        layer,
        W=_kept(layer.W, W, keep_W),
        h=_kept(layer.h, h, keep_h),
        b1=_kept(layer.b1, b1, keep_b1),
        b2=_kept(layer.b2, b2, keep_b2),
    )
    return new, out


def _kept(g: Grid, before: Mapping[tuple[int, int], Scalar], kept: Mapping[tuple[int, int], Scalar]) -> Grid:
    return g if len(kept) == len(before) else Grid.from_cells(g.rows, g.cols, kept)


def model_supports(layers: Sequence[Layer], sup: Support) -> list[Support]:
    """The support before every layer and after the last (``len(layers) + 1`` entries)."""
    out = [sup]
    for layer in layers:
        sup = layer_support(layer, sup).output
        out.append(sup)
    return out


class Dependence:
    """A value that is structurally zero (``nonzero`` False), or may be nonzero and depends on
    ``labels``; the lattice of the module docstring."""

    __slots__ = ("labels", "nonzero")

    def __init__(self, labels: frozenset[int] = frozenset(), nonzero: bool = True) -> None:
        self.labels, self.nonzero = labels, nonzero

    def __bool__(self) -> bool:
        return self.nonzero

    def __add__(self, other: Dependence) -> Dependence:
        if not other.nonzero:
            return self
        if not self.nonzero:
            return other
        return Dependence(self.labels | other.labels)

    def __mul__(self, other: Dependence) -> Dependence:
        if not (self.nonzero and other.nonzero):
            return ZERO
        return Dependence(self.labels | other.labels)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dependence) and (self.nonzero, self.labels) == (other.nonzero, other.labels)

    def __hash__(self) -> int:
        return hash((self.nonzero, self.labels))

    def __repr__(self) -> str:
        return f"Dependence({sorted(self.labels)})" if self.nonzero else "Dependence(zero)"


ZERO = Dependence(frozenset(), nonzero=False)


class DependenceRing:
    """The interpreter ring of :class:`Dependence`: a weight or bias is a constant (no labels),
    structurally zero exactly when it is 0."""

    falsy_is_zero: ClassVar[bool] = True
    zero = ZERO

    def coerce(self, x: Scalar) -> Dependence:
        return ZERO if is_zero(x) else Dependence()

    def reduce(self, x: Dependence) -> Dependence:
        return x
