"""The BaseConv layer and the (N, L, d, N', d')-BaseConv model (docs/theory.md §1).

Layout: a state is ``N'×d'`` with rows = sequence positions and columns = channels. One layer is

    y = (u·W + b1) ⊙ (h ⊛ u + b2)

with ``W ∈ F^{d'×d'}`` and ``b1, h, b2 ∈ F^{N'×d'}``; ``⊛`` convolves each column along the
sequence axis, ``causal`` (``Σ_{k≤i} h[k,j]·u[i−k,j]``) or ``cyclic`` (indices mod N'). A model
embeds ``u ∈ F^{N×d}`` in the top-left corner of a zero ``N'×d'`` state, applies its layers, and
reads out the top-left ``N×d`` block. There is no residual, nonlinearity or normalisation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum

from symverify.errors import IRError, ShapeError
from symverify.ir.bigint import safe_repr, short_name
from symverify.ir.bigint import show_int as _s
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import plain_fields, plain_items, plain_str, unordered

__all__ = ["Mode", "Layer", "Model"]


class Mode(str, Enum):
    """Convolution mode of one layer (docs/theory.md §1.1)."""

    CAUSAL = "causal"
    CYCLIC = "cyclic"


@dataclass(frozen=True, slots=True)
class Layer:
    """One BaseConv layer ``(u·W + b1) ⊙ (h ⊛ u + b2)``; all four parameters are :class:`Grid`s."""

    W: Grid
    b1: Grid
    h: Grid
    b2: Grid
    mode: Mode = Mode.CAUSAL

    def __post_init__(self) -> None:
        for name in ("W", "b1", "h", "b2"):
            if not isinstance(getattr(self, name), Grid):
                raise IRError(f"layer field {name}: expected a Grid, found {type(getattr(self, name)).__name__}")
        if isinstance(self.mode, str) and not isinstance(self.mode, Mode):
            try:
                object.__setattr__(self, "mode", Mode(plain_str(self.mode)))  # its characters, not its hash or ==
            except ValueError:
                raise IRError(f"layer mode: expected 'causal' or 'cyclic', found {safe_repr(self.mode)}") from None
        if not isinstance(self.mode, Mode):
            raise IRError(f"layer mode: expected 'causal' or 'cyclic', found {safe_repr(self.mode)}")
        dd = self.W.rows
        if self.W.cols != dd:
            raise ShapeError(f"layer W: expected a square d'×d' matrix, found {_s(self.W.rows)}×{_s(self.W.cols)}")
        nn = self.b1.rows
        others = {(g.rows, g.cols) for g in (self.b1, self.h, self.b2)}
        if len(others) == 1 and self.b1.cols != dd:  # b1, h and b2 agree: W is the odd one out
            raise ShapeError(f"layer W: expected shape {_s(self.b1.cols)}×{_s(self.b1.cols)} (d'×d', from b1, h and b2, "
                             f"which are {_s(nn)}×{_s(self.b1.cols)}), found {_s(dd)}×{_s(dd)}")
        for name in ("b1", "h", "b2"):
            g: Grid = getattr(self, name)
            if (g.rows, g.cols) != (nn, dd):
                raise ShapeError(f"layer {name}: expected shape {_s(nn)}×{_s(dd)} (N'×d', from b1 and W), found {_s(g.rows)}×{_s(g.cols)}")

    @property
    def inner_n(self) -> int:
        return self.b1.rows

    @property
    def inner_d(self) -> int:
        return self.W.rows

    def grids(self) -> Iterator[tuple[str, Grid]]:
        yield from (("W", self.W), ("b1", self.b1), ("h", self.h), ("b2", self.b2))

    @staticmethod
    def make(inner_n: int, inner_d: int, *, W: Grid | None = None, b1: Grid | None = None,
             h: Grid | None = None, b2: Grid | None = None, mode: Mode | str = Mode.CAUSAL) -> Layer:
        """A layer whose omitted parameters are zero; a given parameter must have the stated shape
        (``W``: ``inner_d×inner_d``; ``b1``, ``h``, ``b2``: ``inner_n×inner_d``), else a
        :class:`ShapeError` names it."""
        for name, g, shape in (("W", W, (inner_d, inner_d)), ("b1", b1, (inner_n, inner_d)),
                               ("h", h, (inner_n, inner_d)), ("b2", b2, (inner_n, inner_d))):
            if isinstance(g, Grid) and (g.rows, g.cols) != shape:
                what = "d'×d'" if name == "W" else "N'×d'"
                raise ShapeError(f"layer {name}: expected shape {_s(shape[0])}×{_s(shape[1])} ({what}, from "
                                 f"inner_n={_s(inner_n)}, inner_d={_s(inner_d)}), found {_s(g.rows)}×{_s(g.cols)}")
        z = Grid.zeros(inner_n, inner_d)
        return Layer(W if W is not None else Grid.zeros(inner_d, inner_d), b1 or z, h or z, b2 or z, mode)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Model:
    """An (N, L, d, N', d')-BaseConv model: ``n = N``, ``d``, inner sizes and the layer stack.

    >>> from symverify.kernel.ir.grid import Grid
    >>> ident = Layer.make(2, 1, W=Grid.identity(1), b2=Grid.full(2, 1, 1))
    >>> Model(2, 1, 2, 1, (ident,)).signature
    (2, 1, 1, 2, 1)
    """

    n: int
    d: int
    inner_n: int
    inner_d: int
    layers: tuple[Layer, ...]
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if unordered(self.layers):  # a dict reads as its keys, a set in no order
            raise IRError(f"model layers: expected a sequence of layers in order, found {type(self.layers).__name__}")  # a set has none
        object.__setattr__(self, "layers", tuple(plain_items(self.layers)))  # a subclass as the items it stores
        if type(self.name) is not str:
            object.__setattr__(self, "name", plain_str(self.name))
        plain_fields(self, "n", "d", "inner_n", "inner_d")
        for fname in ("n", "d", "inner_n", "inner_d"):
            v = getattr(self, fname)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ShapeError(f"model {fname}: expected a positive int, found {safe_repr(v)}")
        if not isinstance(self.name, str):
            raise IRError(f"model name: expected a str, found {type(self.name).__name__} {safe_repr(self.name, 40)}")
        if self.inner_n < self.n or self.inner_d < self.d:
            raise ShapeError(
                f"model inner size {_s(self.inner_n)}×{_s(self.inner_d)} must contain the input "
                f"{_s(self.n)}×{_s(self.d)} (N' ≥ N and d' ≥ d)"
            )
        for i, layer in enumerate(self.layers):
            if not isinstance(layer, Layer):
                raise IRError(f"layer {i}: expected a Layer, found {type(layer).__name__}")
            if (layer.inner_n, layer.inner_d) != (self.inner_n, self.inner_d):
                raise ShapeError(
                    f"layer {i}: expected inner shape {_s(self.inner_n)}×{_s(self.inner_d)} (N'×d'), "
                    f"found {_s(layer.inner_n)}×{_s(layer.inner_d)}"
                )

    @property
    def signature(self) -> tuple[int, int, int, int, int]:
        """``(N, L, d, N', d')`` in docs/theory.md §1.2's order."""
        return (self.n, len(self.layers), self.d, self.inner_n, self.inner_d)

    @property
    def depth(self) -> int:
        return len(self.layers)

    def param_count(self) -> int:
        """Dense parameter count: ``L·(d'² + 3·N'·d')`` (arithmetic only: nothing is expanded)."""
        return len(self.layers) * (self.inner_d**2 + 3 * self.inner_n * self.inner_d)

    def nonzero_param_count(self) -> int:
        """Nonzero weights, counted from the grids' rectangles (:meth:`Grid.nonzero_count`)."""
        return sum(g.nonzero_count() for layer in self.layers for _, g in layer.grids())

    def params(self) -> frozenset[str]:
        """Names of symbolic weights used anywhere in the model."""
        return frozenset().union(*(g.params() for layer in self.layers for _, g in layer.grids()))

    def modes(self) -> frozenset[Mode]:
        return frozenset(layer.mode for layer in self.layers)

    def then(self, other: Model) -> Model:
        """Stack ``other`` after ``self`` (Lemma H.11; interfaces are the caller's business); ``other``
        is a :class:`Model` of the same ``n``, ``d``, ``inner_n`` and ``inner_d``."""
        if not isinstance(other, Model):
            raise IRError(f"Model.then: expected a Model, found {type(other).__name__} {safe_repr(other, 40)}")
        if (self.n, self.d, self.inner_n, self.inner_d) != (other.n, other.d, other.inner_n, other.inner_d):
            raise ShapeError(
                f"cannot stack models of shapes (N={self.n}, d={self.d}, N'={self.inner_n}, d'={self.inner_d}) "
                f"and (N={other.n}, d={other.d}, N'={other.inner_n}, d'={other.inner_d})"
            )
        return Model(self.n, self.d, self.inner_n, self.inner_d, self.layers + other.layers, self.name)

    def __str__(self) -> str:
        n, L, d, nn, dd = self.signature
        return f"BaseConv model {self.name or '<unnamed>'}: (N={_s(n)}, L={L}, d={_s(d)}, N'={_s(nn)}, d'={_s(dd)})"

    def __repr__(self) -> str:
        """A short summary (signature, modes, stored weights); the full weights are in ``to_json``."""
        n, L, d, nn, dd = self.signature
        modes = "/".join(sorted(m.value for m in self.modes())) or "none"
        rects = sum(len(g.rects) for layer in self.layers for _, g in layer.grids())
        return f"Model({short_name(self.name, 60)}, N={_s(n)}, L={L}, d={_s(d)}, N'={_s(nn)}, d'={_s(dd)}, modes={modes}, rects={rects})"

    def _repr_html_(self) -> str:
        """A compact table for notebooks (:func:`symverify.viz.html.model_html`)."""
        from symverify.viz.html import model_html  # display is a lazily loaded view, not a dependency of the IR

        return model_html(self)
