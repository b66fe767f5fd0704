"""The structural bounds of a BaseConv model, layer by layer with numpy (:mod:`.bounds_vector`'s rows).

Through one layer ``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` (docs/theory.md §1.1), in the four semirings
of :mod:`symverify.kernel.provers.bound_rules` at once, per cell ``(i, q)``:

* projection ``P = ⊕_p u[i, p] ⊗ W[p, q] ⊕ b1[i, q]``;
* convolution ``C = ⊕_k h[k, q] ⊗ u[i − k, q] ⊕ b2[i, q]`` (``i − k`` mod ``N'`` when cyclic, no
  term when causal and negative);
* output ``P ⊗ C``, counts capped as in the exact pass.

Only *live* cells are computed: those where both branches may be nonzero by the weights' zero
pattern alone (``b1[i, q] ≠ 0`` or column ``q`` of ``W`` nonzero; ``b2[i, q] ≠ 0`` or a tap in
column ``q``); every other cell is structurally zero, as :class:`~symverify.kernel.semantics.evaluate.
RingArithmetic` finds it. The weights are read once from the grids' rectangles (all layers
together, later rectangles winning), the terms of each live cell padded to the layer's widest
column with zero weights (``0 ⊗ x = 0``).

``⊕`` and ``⊗`` are the rules of :mod:`symverify.kernel.provers.bound_rules`' numpy backend
(:func:`~.bound_rules.oplus_rows` for ``t`` terms). Every output height and count is rounded up
by at least the rounding error of the layer's products and sums (:func:`_layer`), as in
:mod:`.bounds_vector`. Counts are capped (``log2 C(V+D, D)``) after every sum of two or more
terms and at the output (unless one branch is a numeric bias, which changes no count), where the
exact pass caps after every operation: the counts are at least the exact pass's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any, NamedTuple

import numpy as np

from symverify.deadline import Check
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.scalar import Scalar, is_zero
from symverify.kernel.provers.bound_rules import NEG, ONE, VAR, cap_counts, count_caps, oplus_rows, otimes, round_up
from symverify.kernel.provers.bounds_vector import magnitude, peak_of, usable

__all__ = ["Rects", "read_rects", "model_rows", "MAX_CELLS", "WINDOW_CELLS"]

WIDE = 8
"""Up to this many W entries per column, every live cell's W terms are gathered once for all layers."""
MAX_CELLS = 1 << 24
"""Layers × ``N'·d'`` (the live-cell masks) and the rectangles' total area stay below this: each
step of the plan then takes well under a second between deadline checks."""


class Rects(NamedTuple):
    """Every rectangle of every grid of a model, flat (grid ``4·layer + (W, h, b1, b2)``, a nonzero
    fill as a first rectangle over the whole grid): corners, value ids into ``values`` (the distinct
    values in order of first sight, 0 first; equal numbers count once), rectangles per grid."""

    values: list[Scalar]
    r0: Any
    r1: Any
    c0: Any
    c1: Any
    vid: Any
    counts: Any


class _Ids(dict[Scalar, int]):
    """Distinct weight values, numbered in order of first sight (``0`` is the value 0)."""

    def __missing__(self, key: Scalar) -> int:
        self[key] = k = len(self)
        return k


def read_rects(layers: Sequence[Layer]) -> Rects:
    """The :class:`Rects` of ``layers`` (one pass over the rectangles in Python, the rest numpy)."""
    grids = [grid for layer in layers for grid in (layer.W, layer.h, layer.b1, layer.b2)]
    rects = [grid.rects if is_zero(grid.fill) else ((0, grid.rows, 0, grid.cols, grid.fill), *grid.rects) for grid in grids]
    counts = np.fromiter(map(len, rects), dtype=np.int64, count=len(rects))
    flat = list(chain.from_iterable(chain.from_iterable(rects)))
    r0, r1, c0, c1 = (np.array(flat[k::5], dtype=np.int64) for k in range(4))
    ids = _Ids()
    ids[0] = 0
    vid = np.fromiter(map(ids.__getitem__, flat[4::5]), dtype=np.int64, count=len(flat) // 5)
    return Rects(list(ids), r0, r1, c0, c1, vid, counts)


class _Entries(NamedTuple):
    """The nonzero cells of one kind of grid over all layers, sorted by (layer, row, column)."""

    layer: Any
    row: Any
    col: Any
    vid: Any


def _painted(rects: Rects, nn: int, dd: int) -> tuple[Any, Any]:
    """Every painted cell of every grid: ``(key, value id)`` with ``key = grid·B + row·d' + col``
    (grid ``4·layer + (W, h, b1, b2)``, ``B = max(N', d')·d'`` cells per grid), sorted by key,
    each cell's last rectangle winning. At most :data:`MAX_CELLS` cells: ``rects`` is one window of
    :func:`_windows`."""
    r0, r1, c0, c1, vids, counts = rects[1:]
    width = c1 - c0
    area = (r1 - r0) * width
    total = int(area.sum())
    first = np.cumsum(area) - area
    rect = np.repeat(np.arange(len(area)), area)
    local = np.arange(total) - first[rect]
    grid_of = np.repeat(np.arange(len(counts)), counts)
    key = grid_of[rect] * (max(nn, dd) * dd) + (r0[rect] + local // width[rect]) * dd + c0[rect] + local % width[rect]
    vid = vids[rect]
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
    grid, cell = np.divmod(key, max(nn, dd) * dd)
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
    """Every layer's live cells and their terms (see the module docstring); per layer, Python
    lists: where its live cells start, its widest W and h columns, whether it has b1 and b2
    values at live cells."""

    bounds: list[int]  # live cells of layer ℓ: [bounds[ℓ], bounds[ℓ + 1])
    cell: Any
    row_at: Any  # the cell's row times d' (its row's first cell)
    col: Any
    group: Any  # layer·d' + column of each live cell
    has_b1: list[bool]
    has_b2: list[bool]
    b1_rows: Any  # the b1 and b2 values at the live cells (rows of the table)
    b2_rows: Any
    w_src: Any  # for layers with at most one W entry per column: the state cell read, and the weight
    w_one: Any
    w_srcs: Any  # every live cell's W terms (state cells read, value ids), when no column has more
    w_all: Any  # than WIDE entries (else None)
    h_src: Any  # for layers with at most one tap per column: the state cell read (i − k, wrapped or
    h_one: Any  # clipped), and the tap (zero where a causal tap reads above row 0)
    w_rows: Any
    w_ids: Any
    w_width: list[int]
    h_rows: Any
    h_ids: Any
    h_width: list[int]


def _plan(layers: Sequence[Layer], rects: Rects, nn: int, dd: int, tab: Any, check: Check | None) -> _Plan | None:
    """The live cells and padded terms of every layer (``tab``: the value table of ``rects.values``);
    None beyond limits. ``check`` runs between the steps. ``layers`` and ``rects`` are one window
    of :func:`_windows`: at most :data:`MAX_CELLS` layer cells and painted cells."""
    count, cells = len(layers), nn * dd
    painted = _painted(rects, nn, dd)
    if check is not None:
        check()
    nonzero = tab[:, 0] > NEG  # zero's degree is −∞; a degree from 2^51 on is +∞ and nonzero (model_rows gives up)
    W, h, b1, b2 = _entries(*painted, nonzero, nn, dd)
    w_rows, w_ids, w_width = _padded(W, count, dd)
    h_rows, h_ids, h_width = _padded(h, count, dd)
    if int(w_width.max(initial=0) + h_width.max(initial=0)) * cells > MAX_CELLS:
        return None
    if check is not None:
        check()
    b1_at, b2_at = _dense_ids(b1, count, nn, dd), _dense_ids(b2, count, nn, dd)
    proj = b1_at != 0
    proj |= (np.bincount(W.layer * dd + W.col, minlength=count * dd) > 0).reshape(count, 1, dd)
    conv = b2_at != 0
    conv |= (np.bincount(h.layer * dd + h.col, minlength=count * dd) > 0).reshape(count, 1, dd)
    proj &= conv
    live = np.flatnonzero(proj)
    if check is not None:
        check()
    layer, cell = np.divmod(live, cells)
    col = cell % dd
    b1_ids, b2_ids = b1_at.reshape(-1)[live], b2_at.reshape(-1)[live]
    group, row_at = layer * dd + col, cell - col
    cyclic = np.array([lay.mode is Mode.CYCLIC for lay in layers], dtype=bool)[layer]
    src = row_at - h_rows[group, 0] * dd
    h_one = np.where(cyclic | (src >= 0), h_ids[group, 0], 0)
    h_src = np.where(src >= 0, src, np.where(cyclic, src + cells, 0)) + col
    narrow = w_rows.shape[1] <= WIDE
    plan = _Plan(np.searchsorted(layer, np.arange(count + 1)).tolist(), cell, row_at, col, group,
                 _per_layer(layer, b1_ids, count), _per_layer(layer, b2_ids, count),
                 tab[b1_ids], tab[b2_ids], row_at + w_rows[group, 0], tab[w_ids[group, 0]],
                 row_at[:, None] + w_rows[group] if narrow else None, w_ids[group] if narrow else None, h_src, tab[h_one],
                 w_rows, w_ids, w_width.tolist(), h_rows, h_ids, h_width.tolist())
    return plan


def _per_layer(layer: Any, ids: Any, count: int) -> list[bool]:
    """Per layer, whether any of its live cells has a nonzero value id."""
    return (np.bincount(layer[ids != 0], minlength=count) > 0).tolist()


def _dense_ids(e: _Entries, count: int, nn: int, dd: int) -> Any:
    """A bias's value ids as a ``(layers, N', d')`` array (0 where the bias is 0)."""
    out = np.zeros((count, nn, dd), dtype=np.int32)
    out[e.layer, e.row, e.col] = e.vid
    return out


def model_rows(layers: Sequence[Layer], rects: Rects, n: int, d: int, nn: int, dd: int,
               table: Callable[[list[Scalar]], Any], variables: int, q: int,
               check: Check | None = None, summary: list[float] | None = None, *,
               start: Any | None = None) -> tuple[Any, float] | None:
    """The four bounds of the ``n×d`` output (row-major) of ``layers`` on independent variables
    in the top-left ``n×d`` block of a zero ``N'×d'`` state, and the peak ``Σ 2^c`` over two
    consecutive states (rounded up); None beyond the limits (then the exact pass answers).
    ``rects``: :func:`read_rects` of ``layers``; ``table`` maps the distinct weight values to their
    rows (:func:`~.bound_rules.scalar_rows`); ``check`` runs before every layer.

    The layers run in consecutive windows of at most :data:`WINDOW_CELLS` (and :data:`MAX_CELLS`)
    layer cells and rectangle cells each (:func:`_windows`), each window's plan built, run and
    dropped before the next, its last state the next one's first: memory stays bounded and the
    time linear in layers × ``N'·d'`` at any depth. A single layer beyond :data:`MAX_CELLS` gives None.

    The rounding is sized for ``|h| ≤ B`` (``B = 2^20`` bits, then four times what a first run
    found; heights are negative for rational weights, and the zero value's is ``−∞``, so no table
    is free of negative heights and there is no separate rule for non-negative ones), and every stored value (and every value of a
    window's first state) is checked against ``B/4`` afterwards (so the branches, at most
    ``2·B/4`` plus logarithms, are within ``B``); each window is sized and checked on its own.
    ``summary``, when given, receives :func:`~.bounds_vector.peak_of` over the first state's and
    every layer's values.

    ``start`` (``N'·d'`` rows, row-major) replaces that first state: the bounds of any state, such as
    a certificate boundary's cells on fresh variables (rounded up by the caller); the peak then
    starts from its ``Σ 2^c``, rounded up."""
    cells = nn * dd
    X = np.full((cells + 2, 4), NEG)
    if start is None:
        X[:cells].reshape(nn, dd, 4)[:n, :d] = VAR
        first = float(n * d)
    else:
        X[:cells] = start
        first = _first(X, cells)
    X[cells + 1] = ONE
    if not layers:
        return X[:cells].reshape(nn, dd, 4)[:n, :d].reshape(n * d, 4), first
    if check is not None:
        check()
    windows = _windows(rects, len(layers), cells)
    if windows is None:
        return None
    tab = table(rects.values)
    if not usable(tab):  # a weight of degree 2^51 or more (its row's degree is +∞): the exact pass answers
        return None
    lq = math.log2(q) + 1.0
    caps = count_caps(variables)
    peak, sizes = first, peak_of(X[:cells], lq)  # the first state's values are values too
    for a, b in windows:
        done = _window_rows(X, layers[a:b], _slice(rects, a, b), nn, dd, tab, lq, caps, check)
        if done is None:
            return None
        X, every = done
        peak = max(peak, _peak(np.exp2(every[0][:, 3]), every[1], first, cells))
        top = peak_of(every[0], lq)
        sizes = [max(sizes[0], top[0]), max(sizes[1], top[1])]
        first = _first(X, cells)
    if summary is not None:
        summary[:] = sizes
    return X[:cells].reshape(nn, dd, 4)[:n, :d].reshape(n * d, 4), peak


WINDOW_CELLS = 1 << 22
"""Layer cells (layers × ``N'·d'``) and rectangle cells of one window of :func:`model_rows`: a
window's plan (a few dozen numbers per live cell) then stays within a few hundred MB."""


def _first(X: Any, cells: int) -> float:
    """``Σ 2^c`` of the state ``X``'s cells, rounded up (a window's first state)."""
    return float(np.exp2(X[:cells, 3]).sum()) * (1 + (cells + 4) * 2.0**-50)


def _windows(rects: Rects, count: int, cells: int) -> list[tuple[int, int]] | None:
    """Consecutive layer ranges ``[a, b)`` covering ``count`` layers, each of at most
    ``min(WINDOW_CELLS, MAX_CELLS)`` layer cells and rectangle cells (at least one layer each);
    None when one layer alone is over :data:`MAX_CELLS`."""
    area = (rects.r1 - rects.r0) * (rects.c1 - rects.c0)
    grid_area = np.bincount(np.repeat(np.arange(len(rects.counts)), rects.counts), weights=area,
                            minlength=4 * count)
    per_layer = grid_area.reshape(count, 4).sum(axis=1).tolist()
    if cells > MAX_CELLS or (per_layer and max(per_layer) > MAX_CELLS):
        return None
    budget = min(WINDOW_CELLS, MAX_CELLS)
    out: list[tuple[int, int]] = []
    a, used, painted = 0, 0, 0.0
    for k, layer_area in enumerate(per_layer):
        if k > a and (used + cells > budget or painted + layer_area > budget):
            out.append((a, k))
            a, used, painted = k, 0, 0.0
        used += cells
        painted += layer_area
    out.append((a, count))
    return out


def _slice(rects: Rects, a: int, b: int) -> Rects:
    """The :class:`Rects` of layers ``[a, b)`` of the layers ``rects`` was read from (the same value ids)."""
    ends = np.cumsum(rects.counts)
    lo = int(ends[4 * a - 1]) if a else 0
    hi = int(ends[4 * b - 1]) if b else 0
    return Rects(rects.values, rects.r0[lo:hi], rects.r1[lo:hi], rects.c0[lo:hi], rects.c1[lo:hi], rects.vid[lo:hi],
                 rects.counts[4 * a : 4 * b])


def _window_rows(X: Any, layers: Sequence[Layer], rects: Rects, nn: int, dd: int, tab: Any, lq: float,
                 caps: Any, check: Check | None) -> tuple[Any, tuple[Any, list[int]]] | None:
    """One window of :func:`model_rows` from the state ``X``: the last state, and every layer's
    values at its live cells (concatenated) with their counts per layer; None beyond limits."""
    plan = _plan(layers, rects, nn, dd, tab, check)
    if plan is None:
        return None
    cells = nn * dd
    into = magnitude(X[:cells][X[:cells, 0] > NEG], lq)  # the window's first state, as rows it reads
    signed = max(magnitude(tab, lq), into, 2.0**20)
    for _ in range(2):
        state, outs = _run(X, plan, tab, layers, nn, dd, caps, signed, check)
        every = np.concatenate(outs)
        if not usable(every):  # a degree of 2^51 or more, or an overflow to inf or NaN: the exact pass answers
            return None
        found = max(magnitude(tab, lq), magnitude(every, lq), into)
        if found <= signed / 4:
            return state, (every, [len(o) for o in outs])
        signed = 4 * found
    return None


def _peak(counts: Any, sizes: list[int], start: float, cells: int) -> float:
    """``max`` over consecutive states of ``Σ 2^c`` of both, rounded up: ``counts`` holds every
    layer's ``2^c`` in turn (``sizes`` of them each); the first state has ``start`` monomials."""
    width = np.asarray(sizes)
    firsts = np.cumsum(width) - width
    sums = np.add.reduceat(np.append(counts, 0.0), firsts)
    totals = np.where(width > 0, sums, 0.0)
    before = np.append(start, totals[:-1])
    return max(float((before + totals).max(initial=start)), start) * (1 + (cells + 4) * 2.0**-50)


def _run(X: Any, plan: _Plan, tab: Any, layers: Sequence[Layer], nn: int, dd: int, caps: Any, signed: float,
         check: Check | None) -> tuple[Any, list[Any]]:
    """Every layer in turn: the last state, and the values at every layer's live cells."""
    numeric = bool((tab[:, 0] <= 0).all() and (tab[:, 3] <= 0).all())  # no Sym: weights keep degrees and counts
    outs = []
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for k, layer in enumerate(layers):
            if check is not None:
                check()
            X, out = _layer(X, plan, k, tab, layer.mode is Mode.CYCLIC, nn, dd, caps, signed, numeric)
            outs.append(out)
    return X, outs


def _layer(X: Any, plan: _Plan, k: int, tab: Any, cyclic: bool, nn: int, dd: int, caps: Any, signed: float,
           numeric: bool) -> tuple[Any, Any]:
    """One layer on the state ``X`` (rows ``N'·d'`` cells, then zero, then one): the new state
    and its values at the live cells.

    Rounding (``h`` and ``c``): with ``|h| ≤ signed`` (heights may be negative), operands are at
    most ``M' = 2·signed + 2·log2(t + 2) + 8`` in magnitude, and ``(t + 6)·M'·2^-52`` is added, on
    top of ``t·2^-48`` for the ``logaddexp2`` of up to ``t`` terms."""
    cells = nn * dd
    new = np.full_like(X, NEG)
    new[cells + 1] = ONE
    lo, hi = plan.bounds[k], plan.bounds[k + 1]
    tw, th = plan.w_width[k], plan.h_width[k]
    if lo == hi:
        return new, new[:0]
    t = tw + th + 2
    if tw <= 1 and th <= 1 and not (tw and plan.has_b1[k]) and not (th and plan.has_b2[k]):
        proj = otimes(X[plan.w_src[lo:hi]], plan.w_one[lo:hi]) if tw else plan.b1_rows[lo:hi]
        conv = otimes(X[plan.h_src[lo:hi]], plan.h_one[lo:hi]) if th else plan.b2_rows[lo:hi]
        out = otimes(proj, conv)
        absolute = 0.0
    else:
        out = _general(X, plan, k, tab, cyclic, cells, dd, caps)
        absolute = t * 2.0**-48  # the logaddexp2 of up to t terms
    round_up(out[:, 2:], 0.0, absolute + (2 * signed + 2 * math.log2(t + 2) + 8) * (t + 6) * 2.0**-52)
    if not (numeric and (tw == 0 or th == 0)):  # a numeric weight times one cell changes no count
        cap_counts(out, caps)
    new[plan.cell[lo:hi]] = out
    return new, out


def _general(X: Any, plan: _Plan, k: int, tab: Any, cyclic: bool, cells: int, dd: int, caps: Any) -> Any:
    """``P ⊗ C`` at layer ``k``'s live cells, with any number of terms per branch."""
    lo, hi = plan.bounds[k], plan.bounds[k + 1]
    group = plan.group[lo:hi]
    tw, th = plan.w_width[k], plan.h_width[k]
    if not tw:
        w_src = w_ids = None
    elif plan.w_srcs is not None:
        w_src, w_ids = plan.w_srcs[lo:hi, :tw], plan.w_all[lo:hi, :tw]
    else:
        w_src, w_ids = plan.row_at[lo:hi, None] + plan.w_rows[group, :tw], plan.w_ids[group, :tw]
    proj = _branch(X, tab, caps, w_src, w_ids, plan.b1_rows[lo:hi], plan.has_b1[k])
    src = h_ids = None
    if th:
        h_ids = plan.h_ids[group, :th]
        rows = plan.row_at[lo:hi, None] - plan.h_rows[group, :th] * dd
        if cyclic:
            rows %= cells
        else:
            h_ids = np.where(rows < 0, 0, h_ids)
            np.maximum(rows, 0, out=rows)
        src = rows + plan.col[lo:hi, None]
    conv = _branch(X, tab, caps, src, h_ids, plan.b2_rows[lo:hi], plan.has_b2[k])
    return otimes(proj, conv)


def _branch(X: Any, tab: Any, caps: Any, src: Any, ids: Any, bias: Any, has_bias: bool) -> Any:
    """``⊕_t X[src_t] ⊗ tab[ids_t] ⊕ bias`` per live cell (``src``, ``ids``: ``(m, t)`` or None for
    no terms; ``bias``: rows), counts capped after a sum of two or more terms."""
    if src is None:
        return bias
    terms = otimes(X[src], tab[ids])
    if has_bias:
        terms = np.concatenate([terms, bias[:, None]], axis=1)
    if terms.shape[1] == 1:
        return terms[:, 0]
    out = oplus_rows(terms)
    cap_counts(out, caps)
    return out
