"""The structural bounds of a BaseConv model, layer by layer with numpy (:mod:`.bounds_vector`'s rows).

Through one layer ``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` (docs/theory.md §1.1), in the four semirings
of :mod:`symverify.provers.bounds_vector` at once, per cell ``(i, q)``:

* projection ``P = ⊕_p u[i, p] ⊗ W[p, q] ⊕ b1[i, q]``;
* convolution ``C = ⊕_k h[k, q] ⊗ u[i − k, q] ⊕ b2[i, q]`` (``i − k`` mod ``N'`` when cyclic, no
  term when causal and negative);
* output ``P ⊗ C``, counts capped as in the exact pass.

Only *live* cells are computed: those where both branches may be nonzero by the weights' zero
pattern alone (``b1[i, q] ≠ 0`` or column ``q`` of ``W`` nonzero; ``b2[i, q] ≠ 0`` or a tap in
column ``q``); every other cell is structurally zero, as :class:`~symverify.semantics.evaluate.
RingArithmetic` finds it. The weights are read once from the grids' rectangles (all layers
together, later rectangles winning), the terms of each live cell padded to the layer's widest
column with zero weights (``0 ⊗ x = 0``).

The ``⊕`` of ``t`` terms is ``max`` for degrees and ``m + log2 Σ 2^(x − m)`` for heights and
counts; ``σ`` covers its rounding (``(t + 4)·2^-50`` and ``2^-50`` per unit of magnitude), as in
:mod:`.bounds_vector`. A product cap (``log2 C(V+D, D)``) is applied to each branch and to the
output, where the exact pass caps after every operation: the counts are at least the exact pass's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from symverify.deadline import Check
from symverify.ir.baseconv import Layer, Mode
from symverify.ir.scalar import Scalar, is_zero
from symverify.provers.bounds_vector import NEG, ONE, VAR, _cap_counts, _magnitude, count_caps

__all__ = ["model_rows", "distinct_values", "MAX_CELLS"]

MAX_CELLS = 1 << 25
"""Layers × ``N'·d'`` (the live-cell masks) and the rectangles' total area stay below this."""


def distinct_values(layers: Sequence[Layer]) -> list[Scalar]:
    """Every distinct value of every grid (fills included), in order of first sight; equal
    numbers count once."""
    seen: dict[Scalar, None] = {}
    value = itemgetter(4)
    for layer in layers:
        for grid in (layer.W, layer.h, layer.b1, layer.b2):
            seen[grid.fill] = None
            seen.update(dict.fromkeys(map(value, grid.rects)))
    return list(seen)


class _Ids(dict[Scalar, int]):
    """Distinct weight values, numbered in order of first sight (``0`` is the value 0)."""

    def __missing__(self, key: Scalar) -> int:
        self[key] = k = len(self)
        return k


class _Entries(NamedTuple):
    """The nonzero cells of one kind of grid over all layers, sorted by (layer, row, column)."""

    layer: Any
    row: Any
    col: Any
    vid: Any


def _painted(layers: Sequence[Layer], nn: int, dd: int, ids: _Ids) -> tuple[Any, Any] | None:
    """Every painted cell of every grid: ``(key, value id)`` with ``key = grid·N'd' + row·d' + col``
    (grid ``4·layer + (W, h, b1, b2)``), sorted by key, each cell's last rectangle winning; None
    beyond :data:`MAX_CELLS` cells."""
    r0s: list[int] = []
    r1s: list[int] = []
    c0s: list[int] = []
    c1s: list[int] = []
    vids: list[int] = []
    counts: list[int] = []
    get = ids.__getitem__
    for layer in layers:
        for grid in (layer.W, layer.h, layer.b1, layer.b2):
            rects = grid.rects if is_zero(grid.fill) else ((0, grid.rows, 0, grid.cols, grid.fill), *grid.rects)
            counts.append(len(rects))
            if rects:
                a, b, c, e, v = zip(*rects)
                r0s += a
                r1s += b
                c0s += c
                c1s += e
                vids += map(get, v)
    r0, r1, c0, c1 = (np.array(x, dtype=np.int64) for x in (r0s, r1s, c0s, c1s))
    width = c1 - c0
    area = (r1 - r0) * width
    total = int(area.sum())
    if total > MAX_CELLS:
        return None
    first = np.cumsum(area) - area
    rect = np.repeat(np.arange(len(area)), area)
    local = np.arange(total) - first[rect]
    grid_of = np.repeat(np.arange(len(counts)), counts)
    key = grid_of[rect] * (nn * dd) + (r0[rect] + local // width[rect]) * dd + c0[rect] + local % width[rect]
    vid = np.array(vids, dtype=np.int64)[rect]
    if total > 1 and not bool(np.all(key[1:] > key[:-1])):
        order = np.argsort(key, kind="stable")  # a cell painted twice keeps its last value
        key, vid = key[order], vid[order]
        last = np.append(key[1:] != key[:-1], True)
        key, vid = key[last], vid[last]
    return key, vid


def _entries(key: Any, vid: Any, nonzero: Any, nn: int, dd: int) -> list[_Entries]:
    """The painted cells split by kind (W, h, b1, b2), zero values dropped."""
    keep = nonzero[vid]
    key, vid = key[keep], vid[keep]
    grid, cell = np.divmod(key, nn * dd)
    layer, kind = np.divmod(grid, 4)
    row, col = np.divmod(cell, dd)
    out = []
    for k in range(4):
        sel = kind == k
        out.append(_Entries(layer[sel], row[sel], col[sel], vid[sel]))
    return out


def _padded(e: _Entries, layers: int, dd: int) -> tuple[Any, Any, Any]:
    """Per (layer, column): its entries' rows and value ids, padded with value 0 to the widest
    column over all layers, and every layer's widest column."""
    group = e.layer * dd + e.col
    per = np.bincount(group, minlength=layers * dd)
    width = int(per.max(initial=0))
    rows = np.zeros((layers * dd, max(width, 1)), dtype=np.intp)
    vids = np.zeros((layers * dd, max(width, 1)), dtype=np.intp)
    if width:
        order = np.argsort(group, kind="stable")
        g = group[order]
        pos = np.arange(len(g)) - (np.cumsum(per) - per)[g]
        rows[g, pos] = e.row[order]
        vids[g, pos] = e.vid[order]
    return rows, vids, per.reshape(layers, dd).max(axis=1)


class _Plan(NamedTuple):
    """Every layer's live cells and their terms (see the module docstring)."""

    bounds: Any  # live cells of layer ℓ: [bounds[ℓ], bounds[ℓ + 1])
    cell: Any
    group: Any  # layer·d' + column of each live cell
    b1: Any
    b2: Any
    w_rows: Any
    w_ids: Any
    w_width: Any
    h_rows: Any
    h_ids: Any
    h_width: Any


def _plan(layers: Sequence[Layer], nn: int, dd: int, ids: _Ids, table: Callable[[list[Scalar]], Any]) -> tuple[_Plan, Any] | None:
    """The live cells and padded terms of every layer, and the value table; None beyond limits."""
    count, cells = len(layers), nn * dd
    if count * cells > MAX_CELLS:
        return None
    painted = _painted(layers, nn, dd, ids)
    if painted is None:
        return None
    tab = table(list(ids))
    nonzero = np.isfinite(tab[:, 0])
    W, h, b1, b2 = _entries(*painted, nonzero, nn, dd)
    w_rows, w_ids, w_width = _padded(W, count, dd)
    h_rows, h_ids, h_width = _padded(h, count, dd)
    if int(w_width.max(initial=0) + h_width.max(initial=0)) * cells > MAX_CELLS:
        return None
    proj = np.zeros((count, nn, dd), dtype=bool)
    proj[b1.layer, b1.row, b1.col] = True
    proj |= (np.bincount(W.layer * dd + W.col, minlength=count * dd) > 0).reshape(count, 1, dd)
    conv = np.zeros((count, nn, dd), dtype=bool)
    conv[b2.layer, b2.row, b2.col] = True
    conv |= (np.bincount(h.layer * dd + h.col, minlength=count * dd) > 0).reshape(count, 1, dd)
    layer, cell = np.nonzero((proj & conv).reshape(count, cells))
    live = layer * cells + cell
    plan = _Plan(np.searchsorted(layer, np.arange(count + 1)), cell, layer * dd + cell % dd,
                 _ids_at(b1, live, cells, dd), _ids_at(b2, live, cells, dd),
                 w_rows, w_ids, w_width, h_rows, h_ids, h_width)
    return plan, tab


def _ids_at(e: _Entries, live: Any, cells: int, dd: int) -> Any:
    """The value id of a bias at every live cell (``layer·N'd' + cell``, sorted), 0 where none."""
    keys = e.layer * cells + e.row * dd + e.col
    pos = np.minimum(np.searchsorted(keys, live), max(len(keys) - 1, 0))
    if not len(keys):
        return np.zeros(len(live), dtype=np.intp)
    return np.where(keys[pos] == live, e.vid[pos], 0)


def model_rows(layers: Sequence[Layer], n: int, d: int, nn: int, dd: int, table: Callable[[list[Scalar]], Any],
               variables: int, q: int, check: Check | None = None) -> tuple[Any, float] | None:
    """The four bounds of the ``n×d`` output (row-major) of ``layers`` on independent variables
    in the top-left ``n×d`` block of a zero ``N'×d'`` state, and the peak ``Σ 2^c`` over two
    consecutive states (rounded up); None beyond the limits (then the exact pass answers).
    ``table`` maps the distinct weight values to their rows (:func:`~.bounds_vector.scalar_rows`);
    ``check`` runs before every layer."""
    cells = nn * dd
    X = np.full((cells + 2, 4), NEG)
    X[:cells].reshape(nn, dd, 4)[:n, :d] = VAR
    X[cells + 1] = ONE
    total = float(n * d)
    peak = total
    if layers:
        ids = _Ids()
        ids[0] = 0
        built = _plan(layers, nn, dd, ids, table)
        if built is None:
            return None
        plan, tab = built
        caps = count_caps(variables)
        lq = math.log2(q) + 1.0
        bound = max(_magnitude(tab, lq), 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            for k, layer in enumerate(layers):
                if check is not None:
                    check()
                X, new, bound = _layer(X, plan, k, tab, layer.mode is Mode.CYCLIC, nn, dd, caps, bound, lq)
                peak = max(peak, total + new)
                total = new
                if bound is None:
                    return None
    out = X[:cells].reshape(nn, dd, 4)[:n, :d].reshape(n * d, 4)
    return out, peak * (1 + (cells + 4) * 2.0**-50)


def _layer(X: Any, plan: _Plan, k: int, tab: Any, cyclic: bool, nn: int, dd: int, caps: Any, bound: float,
           lq: float) -> tuple[Any, float, float | None]:
    """One layer on the state ``X`` (rows ``N'·d'`` cells, then zero, then one): the new state,
    ``Σ 2^c`` over it, and the new magnitude bound (None past the exact range)."""
    cells = nn * dd
    new = np.full_like(X, NEG)
    new[cells + 1] = ONE
    lo, hi = int(plan.bounds[k]), int(plan.bounds[k + 1])
    if lo == hi:
        return new, 0.0, bound
    cell, group = plan.cell[lo:hi], plan.group[lo:hi]
    i = cell // dd
    tw, th = int(plan.w_width[k]), int(plan.h_width[k])
    w_src = i[:, None] * dd + plan.w_rows[group, :tw]
    proj = _oplus(X[w_src] + tab[plan.w_ids[group, :tw]], plan.b1[lo:hi], tab)
    src = i[:, None] - plan.h_rows[group, :th]
    h_ids = plan.h_ids[group, :th]
    if cyclic:
        src %= nn
    else:
        h_ids = np.where(src < 0, 0, h_ids)
        np.maximum(src, 0, out=src)
    conv = _oplus(X[src * dd + (cell % dd)[:, None]] + tab[h_ids], plan.b2[lo:hi], tab)
    sigma = (tw + th + 8) * 2.0**-40 + (2 * bound + 2 * math.log2(tw + th + 4) + 8) * 2.0**-46
    if tw:
        _cap_counts(proj, caps)
    if th:
        _cap_counts(conv, caps)
    out = proj + conv
    out[:, 2:] += (sigma, (tw + th + 8) * 2.0**-38)
    _cap_counts(out, caps)
    new[cell] = out
    top = out[:, :3].max(axis=0)
    if not (top[0] < 2.0**51 and top[1] < 2.0**51 and top[2] < math.inf):
        return new, 0.0, None
    bound = max(bound, float(top[2]) + 1.0, float(top[1]) * lq + 1.0)
    return new, float(np.exp2(out[:, 3]).sum()), bound


def _oplus(terms: Any, bias: Any, tab: Any) -> Any:
    """``⊕`` of the ``(m, t, 4)`` terms and the biases (value ids ``bias``), per cell: max for
    degree and scalar count, ``log2 Σ 2^x`` for height and count."""
    if terms.shape[1] == 0:
        return tab[bias]
    if bias.any():
        terms = np.concatenate([terms, tab[bias][:, None]], axis=1)
    elif terms.shape[1] == 1:
        return terms[:, 0]
    top = terms.max(axis=1)
    base = np.where(np.isfinite(top[:, 2:]), top[:, 2:], 0.0)
    top[:, 2:] = base + np.log2(np.exp2(terms[:, :, 2:] - base[:, None]).sum(axis=1))
    return top
