"""Wiring diagrams of butterfly factors, BB* elements, factor lists and kaleidoscope matrices.

A factor of stride ``s`` acts on the pairs ``(p, p + s)`` (:mod:`symverify.kernel.ir.butterfly`)::

    out[p]     = d1·x[p] + d2·x[p+s]
    out[p + s] = d3·x[p] + d4·x[p+s]

so the diagram draws, for factor ``k`` (application order, left to right), one edge from position
``src`` at column ``k`` to position ``dst`` at column ``k + 1`` for every nonzero entry: ``d1``
and ``d4`` straight (grey), ``d2`` and ``d3`` crossing (coloured by stride). A permutation routed
through one BB* (Beneš, Dao et al. Theorem 2) is thus a switching network: every pair is either
two straight edges or two crossing ones, and following the edges from input ``i`` ends at
``perm[i]``. Diagonal values other than 1 are written on their edges where the diagram is small.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from symverify.errors import LimitError, UsageError
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope
from symverify.kernel.ir.scalar import Scalar, Sym, is_zero, show_scalar

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Wiring", "wiring", "plot_butterfly", "MAX_EDGES"]

MAX_EDGES = 1 << 20
"""The most edges :func:`plot_butterfly` draws."""

Edge = tuple[int, int, Scalar]  # src position, dst position, coefficient


def factor_edges(f: ButterflyFactor) -> list[Edge]:
    """The nonzero entries of one factor as ``(src, dst, value)``: ``out[dst] += value·x[src]``.

    >>> factor_edges(ButterflyFactor(2, 1, (0,), (1,), (1,), (0,)))  # a swap
    [(1, 0, 1), (0, 1, 1)]
    """
    out: list[Edge] = []
    for m, (p, q) in enumerate(f.pairs()):
        for src, dst, v in ((p, p, f.d1[m]), (q, p, f.d2[m]), (p, q, f.d3[m]), (q, q, f.d4[m])):
            if not is_zero(v):
                out.append((src, dst, v))
    return out


@dataclass(frozen=True)
class Wiring:
    """The factors to draw (application order), where BB* groups start, and what the object is.

    ``n`` is the number of entries read in and out (a kaleidoscope's corner; ``size`` otherwise).
    """

    size: int
    factors: tuple[ButterflyFactor, ...]
    group_starts: tuple[int, ...]
    n: int
    title: str

    def edges(self, k: int) -> list[Edge]:
        return factor_edges(self.factors[k])


def wiring(obj: Any) -> Wiring:
    """The :class:`Wiring` of a ButterflyFactor, BBStar, FactorList, Kaleidoscope or Factorization.

    Raises:
        UsageError: any other object.
    """
    from symverify.kernel.kaleidoscope.factorization import Factorization

    if isinstance(obj, Factorization):
        k = obj.kaleidoscope
        def bound(key: str, v: Any) -> str:  # as over_bound() judges it: over is never shown as ≤
            if key not in obj.bounds:
                return ""
            b = obj.bounds[key]
            return f" (> {show_scalar(b)}: over bound)" if v > b else f" (≤ {show_scalar(b)})"

        res = ", ".join(f"{key}={show_scalar(v)}" + bound(key, v) for key, v in obj.resources.items() if key in ("w", "N", "n", "e"))
        inner = wiring(k)
        return Wiring(inner.size, inner.factors, inner.group_starts, inner.n, f"{obj.theorem}: {res}")
    if isinstance(obj, Kaleidoscope):
        per = 2 * (obj.size.bit_length() - 1)
        return Wiring(obj.size, obj.factor_list().factors, tuple(range(0, per * obj.width, per)), obj.n,
                      f"kaleidoscope (BB*)^{obj.width}: n={obj.n}, N={obj.size}")
    if isinstance(obj, BBStar):
        return Wiring(obj.size, obj.factors, (0,), obj.size, f"BB* element of size {obj.size}")
    if isinstance(obj, FactorList):
        return Wiring(obj.size, obj.factors, (), obj.size, f"{len(obj.factors)} butterfly factors of size {obj.size}")
    if isinstance(obj, ButterflyFactor):
        return Wiring(obj.size, (obj,), (), obj.size, f"butterfly factor: size {obj.size}, stride {obj.stride}")
    raise UsageError(
        "plot_butterfly: expected a ButterflyFactor, BBStar, FactorList, Kaleidoscope or Factorization, "
        f"found {type(obj).__name__}"
    )


_STRIDE_COLORS = ("#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7",
                  "#9c755f", "#bab0ac")


def _label_text(v: Scalar, labels: str) -> str | None:
    if labels == "none" or (labels == "auto" and not isinstance(v, Sym) and v == 1):
        return None
    text = show_scalar(v)
    return text if len(text) <= (12 if labels == "all" else 5) else None


def plot_butterfly(obj: Any, *, labels: str = "auto", title: str | None = None,
                   width: float | None = None, height: float | None = None) -> Figure:
    """The wiring diagram of a butterfly object (module docstring).

    Columns ``0 … F`` are the vector before and after each of the ``F`` factors; factor ``k``'s
    edges form one line collection (``gid`` ``"factor k"``) with one segment per nonzero entry.
    ``labels``: ``"auto"`` writes values other than 1 when the diagram has at most 600 edges,
    ``"all"`` every value, ``"none"`` nothing. BB* groups are separated by dashed lines; for a
    kaleidoscope the zero-padded positions (``≥ n``) are shaded.

    ``width`` and ``height`` are inches in ``(0, MAX_INCHES]``, or None to size the figure by the content.

    Raises:
        UsageError: not a butterfly object, an unknown ``labels``, or a ``width`` or ``height`` that is
            not None or a number of inches in ``(0, MAX_INCHES]``.
        LimitError: more than ``MAX_EDGES`` edges.
    """
    from matplotlib.collections import LineCollection

    from symverify.viz._figure import inches, new_figure, plain, wrap

    if labels not in ("auto", "all", "none"):
        raise UsageError(f"plot_butterfly: labels must be 'auto', 'all' or 'none', found {labels!r}")
    width, height = inches(width, "width", "plot_butterfly"), inches(height, "height", "plot_butterfly")
    wr = wiring(obj)
    N, F = wr.size, len(wr.factors)
    all_edges = [wr.edges(k) for k in range(F)]
    total = sum(len(e) for e in all_edges)
    if total > MAX_EDGES:
        raise LimitError(f"a wiring diagram of {total} edges is more than symverify.viz.butterfly.MAX_EDGES = {MAX_EDGES}")
    w = width if width is not None else min(18.0, max(4.0, 2.0 + 0.55 * F))
    h = height if height is not None else min(14.0, max(3.0, 1.2 + 0.28 * N))
    fig = new_figure(w, h)
    ax = fig.add_subplot()
    lw = 1.6 if N <= 16 else (0.8 if N <= 128 else 0.3)
    show_labels = labels == "all" or (labels == "auto" and total <= 600)
    if wr.n < N:
        ax.axhspan(wr.n - 0.5, N - 0.5, color="#eeeeee", zorder=0)
        ax.text(-0.15, (wr.n + N - 1) / 2, "0 in", ha="right", va="center", fontsize=7, color="#777777")
        ax.text(F + 0.15, (wr.n + N - 1) / 2, "dropped", ha="left", va="center", fontsize=7, color="#777777")
    for k, (f, edges) in enumerate(zip(wr.factors, all_edges)):
        segs = [((k, src), (k + 1, dst)) for src, dst, _ in edges]
        color = _STRIDE_COLORS[(f.stride.bit_length() - 1) % len(_STRIDE_COLORS)]
        colors = ["#999999" if src == dst else color for src, dst, _ in edges]
        ax.add_collection(LineCollection(segs, colors=colors, linewidths=lw, gid=f"factor {k}", zorder=2))
        if F <= 64:
            ax.text(k + 0.5, -0.9, f"s={f.stride}", ha="center", va="bottom", fontsize=7, color=color)
        if show_labels:
            for src, dst, v in edges:
                text = _label_text(v, labels)
                if text is None:
                    continue
                t = 0.5 if src == dst else 0.25
                ax.text(k + t, src + t * (dst - src), plain(text), ha="center", va="center", fontsize=6, zorder=3,
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    for g, start in enumerate(wr.group_starts):
        if start:
            ax.axvline(start, color="#444444", linestyle="--", linewidth=0.8)
        if len(wr.group_starts) > 1 or wr.n < N:
            ax.text(start + 0.1, N - 0.4, f"BB* {g + 1}", ha="left", va="top", fontsize=7, color="#444444")
    if (F + 1) * N <= 4000:
        xs = [x for x in range(F + 1) for _ in range(N)]
        ys = [p for _ in range(F + 1) for p in range(N)]
        ax.scatter(xs, ys, s=6 if N <= 32 else 2, color="#333333", zorder=4)
    ax.set_xlim(-0.5, F + 0.5)
    ax.set_ylim(N - 0.5 + 0.5, -1.4)
    if N <= 32:
        ax.set_yticks(range(N))
        ax.tick_params(labelsize=7)
    ax.set_ylabel("position")
    if F <= 40:
        ax.set_xticks(range(F + 1))
    ax.set_xlabel("factors applied")
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    ax.set_title(wrap(title if title is not None else plain(wr.title), fig), fontsize=10)
    return fig


