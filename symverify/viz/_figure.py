"""The one place the plotting modules get matplotlib from: a fresh Figure on the Agg canvas.

Figures are made with :class:`matplotlib.figure.Figure` directly, never through
:mod:`matplotlib.pyplot`: nothing is registered globally (no figure manager, no GUI backend, no
need to close), ``show()`` is never called, and ``fig.savefig`` renders with Agg whatever backend
the caller's process uses.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from symverify.errors import BackendUnavailableError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["new_figure", "png_bytes", "wrap", "plain", "inches", "ROLE_COLORS", "MAX_INCHES"]

MAX_INCHES = 500
"""The largest ``width`` or ``height`` a plotting function takes: 50 000 pixels at matplotlib's default
100 dpi (it refuses images of 2^23 pixels or more in a direction, when saving)."""

# zero, track, remembered, workspace (see symverify.viz.model.Role)
ROLE_COLORS = ("#ffffff", "#1f5fbf", "#8fc6e8", "#f28e2b")


@lru_cache(maxsize=1)
def _classes() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise BackendUnavailableError(
            "plotting needs matplotlib, which is not installed: pip install 'symverify[viz]'"
        ) from None

    class VizFigure(Figure):
        """A Figure that displays itself as PNG in IPython/Jupyter, with or without pyplot."""

        def _repr_png_(self) -> bytes:
            return png_bytes(self)

    return VizFigure, FigureCanvasAgg


def new_figure(width: float, height: float) -> Figure:
    """An empty ``width × height`` inch figure with constrained layout on an Agg canvas.

    The figure shows itself as a PNG when it ends a notebook cell (``_repr_png_``).

    Raises:
        BackendUnavailableError: matplotlib is not installed (``pip install 'symverify[viz]'``).
    """
    figure_class, canvas_class = _classes()
    fig: Figure = figure_class(figsize=(width, height), layout="constrained")
    canvas_class(fig)
    return fig


def inches(value: object, name: str, where: str) -> float | None:
    """A figure's ``width`` or ``height`` argument: None (sized by the content), or a real number of
    inches in ``(0, MAX_INCHES]`` (numpy numbers included) as a float; anything else (a bool, a str,
    0, a negative or non-finite number, a size past ``MAX_INCHES``) is a
    :class:`~symverify.errors.UsageError` naming ``where`` and ``name``."""
    import math
    import numbers

    from symverify.kernel.ir.scalar import is_bool

    if value is None:
        return None
    try:
        size = float(value) if isinstance(value, numbers.Real) and not is_bool(value) else math.nan
    except (OverflowError, ValueError):  # an int of 400 digits has no float
        size = math.nan
    if not 0 < size <= MAX_INCHES:  # NaN fails too
        from symverify.errors import UsageError
        from symverify.ir.bigint import safe_repr

        raise UsageError(f"{where}: {name} must be None (sized by the content) or inches in (0, {MAX_INCHES}], "
                         f"found {safe_repr(value, 40)}")
    return size


def plain(text: str) -> str:
    """``text`` as matplotlib shows it literally: every ``$`` escaped (``\\$``), so a name holding
    dollar signs is never read as mathtext (``"cost $x^$"`` made ``savefig`` raise ValueError, and
    ``"$5 and $6"`` was drawn as a formula)."""
    return text.replace("$", r"\$")


def wrap(title: str, fig: Figure, points: float = 10.0) -> str:
    """``title`` broken into lines that fit the figure's width at a font of ``points``; a title
    that is not a str is a :class:`~symverify.errors.UsageError`."""
    import textwrap

    if not isinstance(title, str):
        from symverify.errors import UsageError

        raise UsageError(f"title: expected a str, found {type(title).__name__} {title!r:.40}")

    chars = max(30, int(fig.get_figwidth() * 72 / (0.6 * points)))
    return "\n".join(textwrap.fill(line, chars) for line in title.splitlines())


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """``fig`` rendered as PNG."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
