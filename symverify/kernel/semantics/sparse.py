"""The BaseConv layer on *sparse* states: only the nonzero cells, visited through the layer's structure.

A state is a dict ``{(i, q): value}`` holding exactly the cells whose value is not the ring's
zero; every other cell of the ``N'×d'`` state is 0. One layer ``(u·W + b1) ⊙ (h ⊛ u + b2)``
(docs/theory.md §1.1) can be nonzero at ``(i, q)`` only where its convolution branch can, and
(the rule of :mod:`symverify.kernel.semantics.support`, applied here to the state itself: this
module does not import that one) that is at a row of ``b2[:, q]`` or at ``i = src + k`` (mod
``N'`` when cyclic, dropped past ``N'`` when causal) for a tap ``h[k, q] ≠ 0`` and a nonzero
source ``u[src, q]``. :class:`SparseArithmetic` visits exactly those cells, column by column,
and at each one computes

    conv = Σ_k h[k, q]·u[i − k, q] + b2[i, q],    proj = Σ_p u[i, p]·W[p, q] + b1[i, q],

over the nonzero terms only, then ``reduce(proj·conv)``. Every term it leaves out is a product
with an exact zero (and ``1·x`` is taken as ``x``), so in a ring where ``bool(x)`` is False
exactly at zero (``falsy_is_zero``: exact numbers, residues mod a prime, polynomials over Q)
every cell equals the one computed by :class:`~symverify.kernel.semantics.evaluate.RingArithmetic`
cell by cell, while the work is proportional to the nonzero cells rather than to ``N'·d'`` (a
stage of a compiled model holds a few hundred nonzero cells in a state of thousands). Rings
without that flag are refused.

As in :class:`~symverify.kernel.semantics.evaluate.RingArithmetic`, a cell's two factors live only until
their product (two states and one column of convolution values at a time), and ``check`` runs every
:data:`~symverify.deadline.CHECK_EVERY` multiply-adds or so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, NamedTuple

from symverify.deadline import CHECK_EVERY, Check
from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.scalar import canonical
from symverify.kernel.semantics.layer import Shape, run_layers
from symverify.kernel.semantics.rings import Ring

__all__ = ["Cells", "Projection", "SparseArithmetic", "SparseLayer", "eval_layers_sparse", "to_cells", "to_rows"]

Cells = dict[tuple[int, int], Any]
"""A sparse state: the nonzero cells ``(row, channel) → value``."""


class SparseLayer(NamedTuple):
    """A layer prepared for :class:`SparseArithmetic`, per live channel ``q`` (one where neither
    branch is identically zero): ``taps[q]`` the nonzero ``(k, h[k, q])``, ``w[q]`` the nonzero
    ``(p, W[p, q])``, ``b1[q]``/``b2[q]`` the nonzero biases by row; weights coerced."""

    inner_n: int
    inner_d: int
    cyclic: bool
    live: tuple[int, ...]
    taps: dict[int, list[tuple[int, Any]]]
    w: dict[int, list[tuple[int, Any]]]
    b1: dict[int, dict[int, Any]]
    b2: dict[int, dict[int, Any]]


Conv = Iterator[tuple[int, dict[int, Any]]]
"""The convolution branch: a lazy stream of columns ``(q, {i: value})`` holding every cell where it
may be nonzero (values not yet tested against zero)."""


class Projection(NamedTuple):
    """The projection branch ``(u·W + b1)[i, q] = Σ_p u[i, p]·W[p, q] + b1[i, q]``, over the
    nonzero terms only: the state ``u`` and the layer's ``w``/``b1`` per channel, read by
    :meth:`SparseArithmetic.combine` at the cells of the convolution stream (:meth:`at` one cell)."""

    u: Cells
    w: dict[int, list[tuple[int, Any]]]
    b1: dict[int, dict[int, Any]]
    one: Any

    def at(self, i: int, q: int) -> Any:
        """``(u·W + b1)[i, q]``; None where it is zero."""
        u, one, proj = self.u, self.one, None
        for p, wv in self.w.get(q, ()):
            x = u.get((i, p))
            if x is not None:
                t = x if wv is one else x * wv
                proj = t if proj is None else proj + t
        b1 = self.b1.get(q)
        if b1 is not None and i in b1:
            proj = b1[i] if proj is None else proj + b1[i]
        return proj


def _by_column(g: Any, co: Callable[[Any], Any]) -> dict[int, list[tuple[int, Any]]]:
    """The nonzero entries of a grid, per column ``q``: ``[(row, coerce(value)), ...]``. Each distinct
    value is coerced once, keyed by ``(type, value)`` of its canonical form (:func:`canonical`: a
    grid's values are canonical; any other is read as the plain value it stores, or refused)."""
    out: dict[int, list[tuple[int, Any]]] = {}
    ring_values: dict[tuple[type, Any], Any] = {}
    for (r, q), v in g.nonzero().items():
        if type(v) is not int:
            v = canonical(v, "grid value")
        key = (type(v), v)
        x = ring_values.get(key)
        if x is None:
            x = ring_values[key] = co(v)
        out.setdefault(q, []).append((r, x))
    return out


@dataclass(frozen=True)
class SparseArithmetic:
    """The layer on sparse states (see the module docstring), for :mod:`symverify.kernel.semantics.layer`.

    Each distinct number is coerced into the ring once (``consts``), so the weight 1 is one object,
    ``one``: a term ``1·x`` is taken as ``x`` and a product with ``one`` as the other factor (then
    reduced as any product). Compiled models are mostly such copies and selections.
    """

    ring: Ring
    check: Check | None = None
    consts: dict[tuple[type, Any], Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.ring.falsy_is_zero:
            raise IRError(f"SparseArithmetic needs a ring whose zero is its only falsy value; {type(self.ring).__name__} is not one")

    @property
    def one(self) -> Any:
        return self.coerce(1)

    def coerce(self, x: Any) -> Any:
        """``ring.coerce(x)``, once per distinct number (a symbol every time). A number is keyed by
        ``(type, value)`` of its canonical form (:func:`canonical`), so a ``Fraction`` of an ``int``
        subclass whose ``==`` and hash lie never takes another number's slot."""
        if type(x) is not int:
            if type(x) is not Fraction:
                return self.ring.coerce(x)
            x = canonical(x)  # an int or a Fraction of plain ints
        key = (type(x), x)
        hit = self.consts.get(key)
        if hit is None:
            hit = self.consts[key] = self.ring.coerce(x)
        return hit

    def prepare(self, layer: Layer) -> SparseLayer:
        """The layer's live channels and their nonzero weights, coerced into the ring."""
        co = self.coerce
        taps, w = _by_column(layer.h, co), _by_column(layer.W, co)
        b1 = {q: dict(col) for q, col in _by_column(layer.b1, co).items()}
        b2 = {q: dict(col) for q, col in _by_column(layer.b2, co).items()}
        live = tuple(q for q in range(layer.inner_d) if (q in taps or q in b2) and (q in w or q in b1))
        return SparseLayer(layer.inner_n, layer.inner_d, layer.mode is Mode.CYCLIC, live, taps, w, b1, b2)

    def convolve(self, plan: SparseLayer, u: Cells) -> Conv | None:
        """``(h ⊛ u + b2)[i, q]`` at the cells where it may be nonzero, as a lazy stream (nonzero
        values only); None when no channel is live."""
        return self._convolve(plan, u) if plan.live else None

    def _convolve(self, plan: SparseLayer, u: Cells) -> Conv:
        """Column by column, each nonzero source ``u[src, q]`` is scattered once through the taps:
        ``h[k, q]·u[src, q]`` is added into row ``src + k`` (wrapped or dropped as the mode says),
        then ``b2[:, q]`` is added. A row receives exactly the nonzero terms of
        ``Σ_k h[k, q]·u[i − k, q] + b2[i, q]`` (in another order, which exact rings do not see)."""
        nn, cyclic, check, one = plan.inner_n, plan.cyclic, self.check, self.one
        sources: dict[int, list[tuple[int, Any]]] = {}
        for (i, q), x in u.items():
            col = sources.get(q)
            if col is None:
                sources[q] = [(i, x)]
            else:
                col.append((i, x))
        work = 0
        for q in plan.live:
            taps, b2 = plan.taps.get(q), plan.b2.get(q)
            acc: dict[int, Any] = {}
            if taps:
                ntaps = len(taps)
                for src, x in sources.get(q, ()):
                    if check is not None:
                        work += ntaps
                        if work >= CHECK_EVERY:
                            check()
                            work = 0
                    for k, hv in taps:
                        i = src + k
                        if i >= nn:
                            if not cyclic:
                                continue
                            i -= nn
                        t = x if hv is one else hv * x
                        c = acc.get(i)
                        acc[i] = t if c is None else c + t
            if b2:
                for i, b in b2.items():
                    c = acc.get(i)
                    acc[i] = b if c is None else c + b
            if check is not None:
                work += len(acc) * (len(plan.w.get(q, ())) + 1)
                if work >= CHECK_EVERY:
                    check()
                    work = 0
            if acc:
                yield q, acc

    def project(self, plan: SparseLayer, u: Cells, conv: Conv) -> Projection:
        """``(u·W + b1)[i, q]``, computed by :meth:`combine` at the cells of ``conv`` only."""
        return Projection(u, plan.w, plan.b1, self.one)

    def combine(self, plan: SparseLayer, u: Cells, proj: Projection | None, conv: Conv | None) -> Cells:
        """The new sparse state: ``reduce(proj·conv)`` at each cell of the convolution stream where
        both factors are nonzero (a product of nonzero values of these rings is nonzero, but it is
        tested anyway, so a zero is never stored). The projection is :meth:`Projection.at`, inlined
        per column."""
        red, one = self.ring.reduce, self.one
        out: Cells = {}
        if proj is None or conv is None:
            return out
        x_of = proj.u.get
        for q, col in conv:
            w, b1 = proj.w.get(q, ()), proj.b1.get(q)
            for i, c in col.items():
                if not c:
                    continue
                p = None
                for r, wv in w:
                    x = x_of((i, r))
                    if x is not None:
                        t = x if wv is one else x * wv
                        p = t if p is None else p + t
                if b1 is not None and i in b1:
                    p = b1[i] if p is None else p + b1[i]
                if p is not None and p:
                    y = red(c if p is one else p if c is one else p * c)
                    if y:
                        out[(i, q)] = y
        return out

    def embed(self, u: Sequence[Sequence[Any]], shape: Shape) -> Cells:
        return to_cells(u)

    def crop(self, state: Cells, shape: Shape) -> Cells:
        return {(i, q): v for (i, q), v in state.items() if i < shape.n and q < shape.d}

    def retire(self, old: Cells, new: Cells) -> None:
        return None


def to_cells(rows: Sequence[Sequence[Any]]) -> Cells:
    """The nonzero cells of a dense state (nested lists)."""
    return {(i, q): x for i, row in enumerate(rows) for q, x in enumerate(row) if x}


def to_rows(cells: Cells, inner_n: int, inner_d: int, zero: Any) -> list[list[Any]]:
    """The dense ``inner_n×inner_d`` state (nested lists) holding ``cells``."""
    out = [[zero] * inner_d for _ in range(inner_n)]
    for (i, q), x in cells.items():
        if not (0 <= i < inner_n and 0 <= q < inner_d):
            raise ShapeError(f"sparse state: cell ({i}, {q}) is outside the {inner_n}×{inner_d} state")
        out[i][q] = x
    return out


def eval_layers_sparse(layers: Sequence[Layer], cells: Cells, ring: Ring, check: Check | None = None) -> Cells:
    """Apply ``layers`` in order to the sparse state ``cells`` (its values nonzero); ``check`` runs
    before every layer and inside each (see the module docstring)."""
    return run_layers(layers, {c: x for c, x in cells.items() if x}, SparseArithmetic(ring, check), check)
