"""Export a BaseConv model to a torch ``nn.Module`` and import it back exactly.

:func:`to_torch` builds a :class:`BaseConvStack`: dense float parameters ``W (d'×d')`` and
``b1, h, b2 (N'×d')`` per layer, and a forward pass that computes the paper stack of docs/theory.md §1
(embed, ``(x·W + b1) ⊙ (h ⊛ x + b2)`` per layer in its mode, crop) with the executor's own FFT or
blocked direct convolution, so it agrees with ``execute(model, u, backend="torch", path=...)``
within the error model of :mod:`symverify.executors.numeric` (bit for bit on integer data).

:func:`from_torch` converts each float weight ``x`` to ``Fraction(x)``. Every finite float is a
dyadic rational ``m/2^e`` and ``Fraction(float)`` is that value exactly, so nothing is rounded:
the model computes exactly what the module's weights say. Hence ``from_torch(to_torch(m)) == m``
for models whose weights are dyadic rationals representable in the dtype (integers, halves, …);
other weights (1/3) were rounded by ``to_torch``, and come back as their float values. NaN and ±inf
are refused. Equal neighbouring cells are merged into rectangles, so masks stay one rectangle.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from symverify.errors import CompileError, ShapeError
from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.grid import Grid, Rect

from ._torch import require_torch, resolve_device, resolve_dtype
from .kernels import conv_blocked
from .numbers import float_numbers
from .plan import grid_dense, model_plan
from .torch_float import conv_fft

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - torch is a dependency; this keeps the install hint
    require_torch()

__all__ = ["BaseConvLayer", "BaseConvStack", "to_torch", "from_torch", "grid_from_tensor"]


class BaseConvLayer(nn.Module):
    """One paper layer ``(x·W + b1) ⊙ (h ⊛ x + b2)`` with dense parameters (docs/theory.md §1.1)."""

    def __init__(self, W: Any, b1: Any, h: Any, b2: Any, mode: str = "causal") -> None:
        super().__init__()
        if W.dim() != 2 or W.shape[0] != W.shape[1]:
            raise ShapeError(f"W: expected a square d'×d' matrix, found shape {tuple(W.shape)}")
        for name, t in (("b1", b1), ("h", h), ("b2", b2)):
            if t.dim() != 2 or t.shape[1] != W.shape[0] or t.shape != b1.shape:
                raise ShapeError(f"{name}: expected shape (N', {W.shape[0]}) like b1 {tuple(b1.shape)}, found {tuple(t.shape)}")
        self.W, self.b1, self.h, self.b2 = (nn.Parameter(t) for t in (W, b1, h, b2))
        self.mode = Mode(mode).value

    def forward(self, x: Any, path: str = "fft") -> Any:
        cyclic = self.mode == "cyclic"
        if path == "fft":
            conv = conv_fft(x, self.h, cyclic)
        elif path == "direct":
            conv = conv_blocked(x, self.h, range(self.h.shape[0]), cyclic, torch.bmm, lambda t, v: t.add_(v))
        else:
            raise ShapeError(f"path: expected 'fft' or 'direct', found {path!r}")
        return (x @ self.W + self.b1) * (conv + self.b2)


class BaseConvStack(nn.Module):
    """An (N, L, d, N', d')-BaseConv model as a module: ``forward(u)`` on ``(B, N, d)`` or ``(N, d)``."""

    def __init__(self, n: int, d: int, inner_n: int, inner_d: int, layers: Sequence[BaseConvLayer], path: str = "fft") -> None:
        super().__init__()
        self.n, self.d, self.inner_n, self.inner_d, self.path = n, d, inner_n, inner_d, path
        self.layers = nn.ModuleList(layers)
        for i, ly in enumerate(layers):
            if tuple(ly.b1.shape) != (inner_n, inner_d):
                raise ShapeError(f"layer {i}: expected inner shape {inner_n}×{inner_d}, found {tuple(ly.b1.shape)}")

    def forward(self, u: Any) -> Any:
        single = u.dim() == 2
        x = u[None] if single else u
        if tuple(x.shape[1:]) != (self.n, self.d):
            raise ShapeError(f"input: expected shape (B, {self.n}, {self.d}) or ({self.n}, {self.d}), found {tuple(u.shape)}")
        state = torch.nn.functional.pad(x, (0, self.inner_d - self.d, 0, self.inner_n - self.n))
        for ly in self.layers:
            state = ly(state, self.path)
        y = state[:, : self.n, : self.d]
        return y[0] if single else y


def to_torch(model: Model, *, params: Mapping[str, object] | None = None, dtype: Any = None, device: Any = None,
             path: str = "fft") -> BaseConvStack:
    """The model as a :class:`BaseConvStack` (weights rounded to nearest in ``dtype``, default float64).

    >>> from symverify.ir.grid import Grid
    >>> m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    >>> to_torch(m)(torch.tensor([[3.0], [-2.0]], dtype=torch.float64)).tolist()
    [[9.0], [4.0]]
    >>> from_torch(to_torch(m)).layers[0].h.to_rows()
    [[1], [0]]
    """
    dt, dev = resolve_dtype(dtype), resolve_device(device)
    nums = float_numbers(params)
    model_plan(model, nums)  # validates params

    def dense(g: Grid) -> Any:
        return grid_dense(g, nums.convert, torch.float64).to(device=dev, dtype=dt)

    layers = [BaseConvLayer(dense(ly.W), dense(ly.b1), dense(ly.h), dense(ly.b2), ly.mode.value) for ly in model.layers]
    return BaseConvStack(model.n, model.d, model.inner_n, model.inner_d, layers, path)


def grid_from_tensor(t: Any, where: str) -> Grid:
    """The exact grid of a float tensor: rows of equal runs merged into rectangles (fill 0)."""
    a = t.detach().to("cpu", torch.float64).numpy() if hasattr(t, "detach") else np.asarray(t, dtype=np.float64)
    if a.ndim != 2:
        raise ShapeError(f"{where}: expected a 2-d tensor, found shape {a.shape}")
    bad = np.argwhere(~np.isfinite(a))
    if len(bad):
        i, j = (int(v) for v in bad[0])
        raise CompileError(f"{where}[{i}, {j}] is {a[i, j]}: not a finite number, so it has no exact value")
    exact: dict[float, Fraction | int] = {}

    def val(x: float) -> Fraction | int:
        if x not in exact:
            q = Fraction(x)
            exact[x] = int(q) if q.denominator == 1 else q
        return exact[x]

    rects: list[Rect] = []
    open_runs: list[tuple[int, int, float]] = []
    start = 0
    for i in range(a.shape[0] + 1):
        runs: list[tuple[int, int, float]] = []
        if i < a.shape[0]:
            row = a[i]
            cuts = [0, *(np.flatnonzero(np.diff(row) != 0) + 1).tolist(), len(row)]
            runs = [(c0, c1, float(row[c0])) for c0, c1 in itertools.pairwise(cuts) if row[c0] != 0]
        if runs != open_runs:
            rects.extend((start, i, c0, c1, val(v)) for c0, c1, v in open_runs)
            open_runs, start = runs, i
    return Grid(a.shape[0], a.shape[1], 0, tuple(rects))


def from_torch(module: Any) -> Model:
    """The exact model of a :class:`BaseConvStack` (every float weight read as the rational it is)."""
    if not isinstance(module, BaseConvStack):
        raise CompileError(
            f"from_torch: expected a BaseConvStack (as made by to_torch), found {type(module).__name__}; "
            "for the zoology BaseConv variant use from_zoology"
        )
    layers = []
    for i, ly in enumerate(module.layers):
        g = {name: grid_from_tensor(getattr(ly, name), f"layer {i} {name}") for name in ("W", "b1", "h", "b2")}
        layers.append(Layer(g["W"], g["b1"], g["h"], g["b2"], Mode(ly.mode)))
    return Model(module.n, module.d, module.inner_n, module.inner_d, tuple(layers))
