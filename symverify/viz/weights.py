"""The four parameters of one BaseConv layer, ``W``, ``b1``, ``h`` and ``b2``: sparsity and values.

Each grid is one panel. Zero cells are left blank, so the sparsity pattern is what is coloured;
numeric values (ints and fractions) are coloured on one diverging scale shared by the four panels
(blue negative, red positive); symbolic weights (``Sym``) are drawn in one flat colour, since
they have no single value. Small grids are annotated with their values.
"""

from __future__ import annotations

import numbers
import operator
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from symverify.errors import UsageError
from symverify.ir import limits
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, Sym, is_bool, show_scalar

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["plot_weights", "SYMBOLIC_COLOR"]

SYMBOLIC_COLOR = "#9467bd"
_ANNOTATE_CELLS = 144
_MAX_SCALE = 1e300  # the colour scale's largest magnitude; larger values take the end colours


def _float(v: Scalar) -> float:
    if isinstance(v, (int, Fraction)):
        try:
            return float(v)
        except OverflowError:
            return 1e308 if v > 0 else -1e308  # copysign would convert v to a float, and overflow again
    raise TypeError(v)


def grid_arrays(g: Grid) -> tuple[np.ndarray, np.ndarray, dict[tuple[int, int], Scalar]]:
    """``(values, symbolic, nonzero)`` of a grid: a float array with NaN at zero and symbolic
    cells, a bool array marking symbolic cells, and the nonzero cells themselves.

    Raises:
        LimitError: the grid has more than ``MAX_CELLS`` cells.
    """
    limits.check(g.rows * g.cols, "MAX_CELLS", f"plotting a {g.rows}×{g.cols} grid")
    values = np.full((g.rows, g.cols), np.nan)
    symbolic = np.zeros((g.rows, g.cols), dtype=bool)
    nz = g.nonzero()
    for (i, j), v in nz.items():
        if isinstance(v, Sym):
            symbolic[i, j] = True
        else:  # nonzero() lists nonzero cells only
            values[i, j] = _float(v)
    return values, symbolic, nz


def _layer_of(obj: Any, index: int | None) -> tuple[Layer, str]:
    from symverify.compiler.result import Compiled

    if isinstance(obj, Compiled):
        obj = obj.model
    if isinstance(obj, Model):
        if index is None:
            raise UsageError(f"plot_weights: a model has {obj.depth} layers; pass index=k to choose one")
        if is_bool(index) or not isinstance(index, numbers.Integral):  # numpy integers are read by their value
            raise UsageError(f"plot_weights: index: expected an int layer index, found {type(index).__name__} {index!r:.40}")
        k = operator.index(index)
        if not -obj.depth <= k < obj.depth:
            raise UsageError(f"plot_weights: layer index {k} is out of range for a model of {obj.depth} layers")
        k %= obj.depth
        return obj.layers[k], f"{obj.name or 'model'}, layer {k}"
    if isinstance(obj, Layer):
        if index is not None:
            raise UsageError(f"plot_weights: index={index!r} chooses a layer of a Model or Compiled; found a Layer")
        return obj, "layer"
    raise UsageError(f"plot_weights: expected a Layer (or a Model/Compiled and index=k), found {type(obj).__name__}")


MAX_SQUARE_RATIO = 40
"""Matrices up to this aspect ratio are drawn with square cells; thinner ones fill their panel."""


def plot_weights(layer: Layer | Any, index: int | None = None, *, title: str | None = None,
                 annotate: bool | None = None) -> Figure:
    """``W`` (d'×d'), ``b1``, ``h``, ``b2`` (N'×d') of one layer, one panel each.

    ``layer`` is a :class:`Layer`, or a ``Model``/``Compiled`` with ``index`` choosing the layer.
    ``annotate`` writes each nonzero value in its cell (default: when a grid has at most 144
    cells). Panel ``k``'s first image holds the numeric values (NaN where zero or symbolic), a
    second image, when present, the symbolic cells.

    Raises:
        UsageError: not a layer, a model without a valid ``index`` (an int, numpy's included, from
            ``-L`` to ``L − 1``), a Layer with an ``index``, or an ``annotate`` that is not a bool or None.
        LimitError: a grid has more than ``MAX_CELLS`` cells.
    """
    from matplotlib.colors import ListedColormap, TwoSlopeNorm
    from matplotlib.ticker import MaxNLocator

    from symverify.viz._figure import new_figure, plain, wrap

    if annotate is not None and not is_bool(annotate):
        raise UsageError(f"plot_weights: annotate: expected True, False or None (by the grid's size), found "
                         f"{type(annotate).__name__} {annotate!r:.40}")
    lay, what = _layer_of(layer, index)
    arrays = {name: grid_arrays(g) for name, g in lay.grids()}
    finite = [np.nanmax(np.abs(v)) for v, _, _ in arrays.values() if np.isfinite(v).any()]
    vmax = min(max(finite), _MAX_SCALE) if finite else 1.0  # a scale of ±1e308 overflows the colour bar's span
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-vmax, vmax=vmax)
    nn, dd = lay.inner_n, lay.inner_d
    fig = new_figure(min(16.0, 3.0 + 0.9 * 4 + 0.08 * 4 * dd), min(10.0, max(3.0, 1.5 + 0.12 * max(nn, dd))))
    axes = fig.subplots(1, 4, gridspec_kw={"width_ratios": [1, 1, 1, 1]})
    for ax, (name, (values, symbolic, nz)) in zip(axes, arrays.items()):  # four panels: mappable is set
        g = dict(lay.grids())[name]
        # square cells (a 3×3 W stays a small square next to 72×3 biases) unless a matrix is too thin to see
        aspect = "equal" if max(g.rows, g.cols) <= MAX_SQUARE_RATIO * max(1, min(g.rows, g.cols)) else "auto"
        mappable = ax.imshow(values, cmap="RdBu_r", norm=norm, aspect=aspect, interpolation="nearest")
        if symbolic.any():
            ax.imshow(np.where(symbolic, 1.0, np.nan), cmap=ListedColormap([SYMBOLIC_COLOR]), vmin=0, vmax=1,
                      aspect=aspect, interpolation="nearest")
        ax.set_facecolor("#ffffff")
        shape = f"{g.rows}×{g.cols}"
        ax.set_title(f"{name}  {shape}\n{len(nz)} nonzero" + (f", {int(symbolic.sum())} symbolic" if symbolic.any() else ""),
                     fontsize=9)
        ax.set_xlabel("channel" if name != "W" else "output channel q", fontsize=8)
        ax.set_ylabel({"W": "input channel p", "h": "tap k"}.get(name, "row i"), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        for spine in ax.spines.values():
            spine.set_color("#bbbbbb")
        if annotate if annotate is not None else g.rows * g.cols <= _ANNOTATE_CELLS:
            for (i, j), v in nz.items():
                text = show_scalar(v)
                dark = isinstance(v, Sym) or abs(values[i, j]) > 0.6 * vmax
                ax.text(j, i, plain(text if len(text) <= 6 else text[:5] + "…"), ha="center", va="center", fontsize=6,
                        color="white" if dark else "black")
    fig.colorbar(mappable, ax=list(axes), shrink=0.8, label="value (symbolic: purple)")
    fig.suptitle(wrap(title if title is not None else f"{plain(what)} ({lay.mode.value}): (u·W + b1) ⊙ (h ⊛ u + b2)", fig),
                 fontsize=10)
    return fig
