"""Occupancy maps of BaseConv models: which cells of the ``N'×d'`` state are live after each layer.

:func:`occupancy` computes, for every layer boundary ``t = 0 … L`` and every cell ``(i, q)``, a
:class:`Role`:

* at a **certificate boundary** (when the model comes with a stage certificate) the live cells are
  exactly the cells the certificate lists there (it claims every other cell is 0, and the
  compositional prover checks that claim). A listed cell is ``REMEMBERED`` when it holds the same
  affine form at the same cell as at the previous boundary (the stage carried it unchanged, as
  ``remember`` of Proposition H.10 does with ``v3``), else ``TRACK`` (a circuit value the stage
  computed or moved there);
* **between boundaries**, and everywhere for a model without a certificate, the live cells are
  those the zero-support analysis (:mod:`symverify.kernel.semantics.support`) says may be nonzero,
  starting from the last boundary's cells (or from the embedded input). Such a cell is
  ``REMEMBERED`` when the layer provably passes it through unchanged (one branch is exactly
  ``u[i, q]`` and the other exactly the constant 1, structurally), else ``WORKSPACE``. Without a
  certificate, the input cells at layer 0 and the read-out corner at layer ``L`` count as
  ``TRACK``;
* every other cell is ``ZERO``.

Each layer also gets a *kind*: the gadget that the certificate's next boundary label names
(``sequence``, ``channel``, ``diagonal`` butterfly gadgets of Lemma H.16, ``remember`` for
products, ``layout``, ``linear``), or the layer's convolution mode when there is no certificate.
:func:`plot_model` draws the roles as an image (layers left to right, cells top to bottom) with
the kinds as a strip under it: the picture of Theorem H.21's construction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from symverify.errors import LimitError, ShapeError, UsageError
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.scalar import Scalar, Sym
from symverify.kernel.semantics.support import Support, layer_support, support_of_cells
from symverify.viz._figure import MAX_INCHES  # the largest width or height a plot takes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["Role", "Occupancy", "occupancy", "plot_model", "MAX_PIXELS", "MAX_INCHES"]

MAX_PIXELS = 1 << 26
"""The largest occupancy map (``(L + 1)·N'·d'`` entries) :func:`occupancy` builds."""


class Role(IntEnum):
    """What a cell of the state holds after a layer (see the module docstring)."""

    ZERO = 0
    TRACK = 1
    REMEMBERED = 2
    WORKSPACE = 3


ROLE_NAMES = {
    Role.ZERO: "zero",
    Role.TRACK: "track (a circuit value)",
    Role.REMEMBERED: "remembered (carried unchanged)",
    Role.WORKSPACE: "workspace",
}


@dataclass(frozen=True)
class Occupancy:
    """The roles of every cell after every layer.

    ``roles[t, i·d' + q]`` is the :class:`Role` (as an ``uint8``) of cell ``(i, q)`` after ``t``
    layers (``t = 0`` is the embedded input). ``kinds[t]`` names the gadget layer ``t`` belongs to
    (``kinds[0]`` is ``"input"``); ``boundaries`` are the layers at which the certificate states the
    cells (empty without one); ``source`` is ``"certificate"`` or ``"support"``; ``labels[t]`` is the
    full label of the certificate boundary that closes layer ``t``'s stage (``kinds[t]`` may be that
    label cut short), ``""`` where none does (without a certificate ``labels`` is empty).
    """

    roles: np.ndarray
    inner_n: int
    inner_d: int
    kinds: tuple[str, ...]
    boundaries: tuple[int, ...]
    source: str
    title: str = ""
    labels: tuple[str, ...] = ()

    @property
    def layers(self) -> int:
        return int(self.roles.shape[0]) - 1

    def live(self, layer: int) -> int:
        """The number of cells that are not ``ZERO`` after ``layer`` layers."""
        return int(np.count_nonzero(self.roles[layer]))

    def cells(self, layer: int, role: Role | None = None) -> set[tuple[int, int]]:
        """The live cells (or those of one ``role``) after ``layer`` layers, as ``(row, channel)``."""
        row = self.roles[layer]
        idx = np.nonzero(row != Role.ZERO if role is None else row == role)[0]
        return {divmod(int(k), self.inner_d) for k in idx}

    def counts(self) -> dict[str, int]:
        """Cells of each role summed over all layers."""
        return {ROLE_NAMES[r].split(" ")[0]: int(np.count_nonzero(self.roles == r)) for r in Role}


def _unpack(obj: Any, certificate: Certificate | None) -> tuple[Model, Certificate | None, str]:
    from symverify.compiler.result import Compiled

    if certificate is not None and not isinstance(certificate, Certificate):
        raise UsageError(f"plot_model: certificate: expected a Certificate (or None: the Compiled's own, or the support "
                         f"analysis), found {type(certificate).__name__}")
    if isinstance(obj, Compiled):
        cert = certificate if certificate is not None else obj.certificate
        return obj.model, cert, f"{obj.method} compilation of {obj.model.name or '<unnamed>'}"
    if isinstance(obj, Model):
        return obj, certificate, obj.name or "BaseConv model"
    raise UsageError(f"plot_model: expected a Model or a Compiled, found {type(obj).__name__}")


_PAREN = re.compile(r"\(([A-Za-z][A-Za-z _-]*)\)\s*$")

KIND_WIDTH = 24
"""The most characters of a gadget name (:func:`gadget_kind`) drawn in the legend: a longer one is cut
at a word boundary and ends in ``…`` (the full label stays in :attr:`Occupancy.labels`)."""


def _readable_cut(text: str, width: int = KIND_WIDTH) -> str:
    """``text`` if it has at most ``width`` characters; else its longest prefix ending at a space (in
    the second half of the width, with trailing operators and punctuation dropped) and ``…``, so that
    no term is cut in two; a text with no such space is cut at ``width - 1`` characters and ``…``."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ", width // 2)
    if space > 0:
        head = head[:space].rstrip(" +-*/=,:;·×")
    return head + "…"


def gadget_kind(label: str) -> str:
    """A short gadget name for a certificate boundary label.

    >>> [gadget_kind(s) for s in ("level 1 linear, factor 0 stride 4 (sequence)", "level 1 products",
    ...                           "layout: rows_to_channels(2×2)", "level 2 linear stage", "input")]
    ['sequence', 'remember', 'layout', 'linear', 'input']
    """
    low = label.lower()
    if low.startswith("layout"):
        return "layout"
    if "product" in low or "multiply" in low or "remember" in low:
        return "remember"
    m = _PAREN.search(label)
    if m:
        return m.group(1).strip()
    if "linear" in low:
        return "linear"
    return _readable_cut(label.split(",")[0].strip() or "stage")


def _check_certificate(model: Model, cert: Certificate) -> list[tuple[int, dict[tuple[int, int], Affine], str]]:
    """The certificate's boundaries as ``(layer, {cell: form}, label)``, the last one per layer."""
    L, nn, dd = model.depth, model.inner_n, model.inner_d
    out: dict[int, tuple[dict[tuple[int, int], Affine], str]] = {}
    for k, b in enumerate(cert.boundaries):
        if b.layer > L:
            raise ShapeError(f"certificate boundary {k} ({b.label!r:.60}): at layer {b.layer}, but the model has {L} layers")
        forms: dict[tuple[int, int], Affine] = {}
        for c in b.cells:
            if c.row >= nn or c.col >= dd:
                raise ShapeError(
                    f"certificate boundary {k} ({b.label!r:.60}): cell ({c.row}, {c.col}) is outside the model's "
                    f"{nn}×{dd} state"
                )
            forms[(c.row, c.col)] = c.form()
        out[b.layer] = (forms, b.label)
    return [(layer, forms, label) for layer, (forms, label) in sorted(out.items())]


def _is_one(v: Scalar) -> bool:
    return not isinstance(v, Sym) and v == 1


def _passthrough(layer: Layer, sup: Support, cells: Sequence[tuple[int, int]]) -> set[tuple[int, int]]:
    """The ``cells`` whose value the layer provably leaves unchanged (module docstring)."""
    nn, dd = layer.inner_n, layer.inner_d
    cyclic = layer.mode is Mode.CYCLIC
    wcol: list[dict[int, Scalar]] = [{} for _ in range(dd)]
    for (p, q), v in layer.W.nonzero().items():
        wcol[q][p] = v
    taps: list[dict[int, Scalar]] = [{} for _ in range(dd)]
    for (k, q), v in layer.h.nonzero().items():
        taps[q][k] = v
    b1, b2 = layer.b1.nonzero(), layer.b2.nonzero()
    out = set()
    for i, q in cells:
        if i not in sup[q]:
            continue
        proj = [p for p in wcol[q] if i in sup[p]]
        proj_is_u = proj == [q] and _is_one(wcol[q][q]) and (i, q) not in b1
        proj_is_one = not proj and _is_one(b1.get((i, q), 0))
        if not (proj_is_u or proj_is_one):
            continue
        conv = [k for k in taps[q] if ((i - k) % nn if cyclic else i - k) in sup[q]]
        conv_is_u = conv == [0] and _is_one(taps[q][0]) and (i, q) not in b2
        conv_is_one = not conv and _is_one(b2.get((i, q), 0))
        if (proj_is_u and conv_is_one) or (proj_is_one and conv_is_u):
            out.add((i, q))
    return out


def occupancy(obj: Model | Any, *, certificate: Certificate | None = None) -> Occupancy:
    """The roles of every cell after every layer of a ``Model`` or ``Compiled`` (module docstring).

    ``certificate`` overrides (or supplies) the stage certificate; without one the roles come from
    the zero-support analysis alone.

    Raises:
        UsageError: ``obj`` is neither a Model nor a Compiled.
        ShapeError: the certificate does not fit the model (a boundary past the last layer, a cell
            outside the state).
        LimitError: the map would have more than ``MAX_PIXELS`` entries.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> from symverify.compiler import compile
    >>> occ = occupancy(compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense"))
    >>> occ.live(0), occ.live(occ.layers), occ.source
    (2, 1, 'certificate')
    """
    model, cert, title = _unpack(obj, certificate)
    L, nn, dd = model.depth, model.inner_n, model.inner_d
    pixels = (L + 1) * nn * dd
    if pixels > MAX_PIXELS:
        raise LimitError(
            f"an occupancy map of {L + 1} layer boundaries × {nn}×{dd} cells = {pixels} entries is more than "
            f"symverify.viz.model.MAX_PIXELS = {MAX_PIXELS}"
        )
    roles = np.zeros((L + 1, nn * dd), dtype=np.uint8)
    kinds: list[str] = ["input"] + [model.layers[t].mode.value for t in range(L)]
    labels: list[str] = [""] * (L + 1)
    input_cells = [(i, j) for i in range(model.n) for j in range(model.d)]
    bounds = _check_certificate(model, cert) if cert is not None else []
    at = {layer: (forms, label) for layer, forms, label in bounds}

    def paint(t: int, cells: set[tuple[int, int]], role: Role) -> None:
        for i, q in cells:
            roles[t, i * dd + q] = role

    if 0 in at:
        prev_forms, labels[0] = at[0]
        cur = set(prev_forms)
    else:
        prev_forms = {}
        cur = set(input_cells)
    paint(0, cur, Role.TRACK)
    sup = support_of_cells(cur, dd)
    last_b = 0
    for t in range(1, L + 1):
        layer = model.layers[t - 1]
        if t in at:
            forms, label = at[t]
            kind = gadget_kind(label) if label else kinds[t]
            for s in range(last_b + 1, t + 1):
                kinds[s], labels[s] = kind, label
            same = {c for c, f in forms.items() if prev_forms.get(c) == f}
            paint(t, same, Role.REMEMBERED)
            paint(t, set(forms) - same, Role.TRACK)
            prev_forms, last_b = forms, t
            cur = set(forms)
            sup = support_of_cells(cur, dd)
            continue
        new_sup = layer_support(layer, sup).output
        cur = {(i, q) for q in range(dd) for i in new_sup[q]}
        kept = _passthrough(layer, sup, sorted(cur))
        paint(t, kept, Role.REMEMBERED)
        if cert is None and t == L:
            corner = {c for c in cur - kept if c[0] < model.n and c[1] < model.d}
            paint(t, corner, Role.TRACK)
            paint(t, cur - kept - corner, Role.WORKSPACE)
        else:
            paint(t, cur - kept, Role.WORKSPACE)
        sup = new_sup
    return Occupancy(roles, nn, dd, tuple(kinds), tuple(b for b, _, _ in bounds),
                     "support" if cert is None else "certificate", title, tuple(labels) if cert is not None else ())


def _kind_palette(kinds: Sequence[str]) -> dict[str, str]:
    fixed = {"input": "#444444", "sequence": "#4e79a7", "channel": "#59a14f", "diagonal": "#b07aa1",
             "remember": "#e15759", "layout": "#9c755f", "linear": "#76b7b2", "cyclic": "#bab0ac", "causal": "#edc948"}
    extra = ["#ff9da7", "#f28e2b", "#8cd17d", "#86bcb6", "#d37295", "#fabfd2", "#b6992d", "#499894"]
    out: dict[str, str] = {}
    for k in dict.fromkeys(kinds):
        out[k] = fixed.get(k) or extra[len([x for x in out if x not in fixed]) % len(extra)]
    return out


LABEL_EVERY_CELL = 48
"""States of at most this many cells get a label per cell (``row i, ch q``); larger ones one per band."""




def plot_model(obj: Model | Any, *, certificate: Certificate | None = None, order: str = "row",
               title: str | None = None, width: float | None = None, height: float | None = None) -> Figure:
    """The occupancy map of a ``Model`` or ``Compiled``: layers left to right, the ``N'·d'`` cells top
    to bottom (``order="row"``: cell ``(i, q)`` at ``i·d' + q``; ``"channel"``: at ``q·N' + i``),
    each coloured by its :class:`Role`; under it a strip naming each layer's gadget kind.

    The image's data is the role map (``fig.axes[0].images[0].get_array()``, one column per
    layer boundary); see :func:`occupancy` for the roles and the errors.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    from symverify.viz._figure import ROLE_COLORS, inches, new_figure, plain, wrap

    if order not in ("row", "channel"):
        raise UsageError(f"plot_model: order must be 'row' or 'channel', found {order!r}")
    width, height = inches(width, "width", "plot_model"), inches(height, "height", "plot_model")
    occ = occupancy(obj, certificate=certificate)
    L, nn, dd = occ.layers, occ.inner_n, occ.inner_d
    grid = occ.roles.T  # cells × layers
    if order == "channel":
        grid = occ.roles.reshape(L + 1, nn, dd).transpose(2, 1, 0).reshape(dd * nn, L + 1)
    cells = nn * dd
    # sized by the content: about 0.12 in per layer (plus the legends) and 0.035 in per cell
    w = width if width is not None else min(16.0, max(6.0, 3.0 + 0.12 * (L + 1)))
    h = height if height is not None else min(10.0, max(3.5, 2.0 + 0.035 * cells))
    fig = new_figure(w, h)
    ax, strip = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [max(4, min(30, cells // 4)), 1]})
    ax.imshow(grid, cmap=ListedColormap(list(ROLE_COLORS)), vmin=0, vmax=len(Role) - 1, aspect="auto",
              interpolation="nearest", extent=(-0.5, L + 0.5, cells - 0.5, -0.5))
    major, minor = (dd, nn) if order == "row" else (nn, dd)
    if cells <= 2048 and minor > 1:
        for k in range(1, minor):
            ax.axhline(k * major - 0.5, color="#dddddd", linewidth=0.4)
    for b in occ.boundaries:
        ax.axvline(b + 0.5, color="#999999", linewidth=0.3, alpha=0.6)
    inner, outer = ("ch", "row") if order == "row" else ("row", "ch")
    if cells <= LABEL_EVERY_CELL:  # every cell named: the bands and the cells inside them
        ax.set_yticks(range(cells))
        ax.set_yticklabels([f"{outer} {k // major}, {inner} {k % major}" for k in range(cells)], fontsize=6)
    else:  # one label per band (every step-th band when there are many), naming the cells inside it
        step = -(-minor // 24)
        bands = range(0, minor, step)
        ax.set_yticks([k * major + (major - 1) / 2 for k in bands])
        ax.set_yticklabels([f"{outer} {k} ({inner} 0–{major - 1})" for k in bands], fontsize=7)
    ax.set_ylabel(f"cells ({'row, channel' if order == 'row' else 'channel, row'}): {nn}×{dd}")
    role_counts = {r: int(np.count_nonzero(occ.roles == r)) for r in Role}
    handles = [Patch(facecolor=ROLE_COLORS[r], edgecolor="#777777", label=f"{ROLE_NAMES[r]}") for r in Role
               if r is not Role.ZERO and role_counts[r]]
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    src = "stage certificate" if occ.source == "certificate" else "zero-support analysis"
    fig.suptitle(wrap(title if title is not None else f"{plain(occ.title)}: live cells per layer ({src})", fig), fontsize=10)
    palette = _kind_palette(occ.kinds)
    names = list(palette)
    codes = np.array([[names.index(k) for k in occ.kinds]])
    strip.imshow(codes, cmap=ListedColormap([palette[k] for k in names]), vmin=0, vmax=max(len(names) - 1, 1),
                 aspect="auto", interpolation="nearest", extent=(-0.5, L + 0.5, 0.5, -0.5))
    strip.set_yticks([])
    strip.set_xlabel("layers applied")
    strip.xaxis.set_major_locator(MaxNLocator(integer=True))  # layers are whole numbers
    strip.legend(handles=[Patch(facecolor=palette[k], label=plain(k)) for k in names], loc="upper left",
                 bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False, ncol=1 if len(names) <= 4 else 2)
    return fig
