"""Execution plans: a model's or circuit's weights as tensors, built once and reused.

A plan converts every exact weight once, either to ``float`` (:class:`FloatNumbers`, the value
rounded to nearest float64) or to a residue mod p (:class:`ModNumbers`), and records the structure
the executors exploit (docs/theory.md §1.1, one layer ``(u·W + b1) ⊙ (h ⊛ u + b2)``):

- ``W`` is zero, *sparse* (at most ``k`` nonzeros per column: ``k`` gathers) or dense (a matmul);
- ``h`` is stored as its nonzero lags and their per-channel taps; few taps run as shifts
  (``sparse``), many as an FFT or a blocked direct product;
- ``b1``/``b2`` are zero, per channel ``(1, d')``, per position ``(N', 1)``, an outer product of
  the two (a rectangle mask) or dense.

Grids are read through their rectangles (``fill`` + painted rectangles), never cell by cell,
so a mask over ``N'×d'`` cells costs one tensor slice. Plans are cached per object identity
(:mod:`symverify.kernel.engines.numbers`); circuits have their own plans (:mod:`.circuit_plan`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from symverify.deadline import Check
from symverify.kernel.engines._torch import require_torch
from symverify.kernel.engines.numbers import Converter, ModNumbers, Numbers, cached, check_params
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, Sym

if TYPE_CHECKING:
    import torch

__all__ = ["Bias", "LayerPlan", "ModelPlan", "model_plan", "grid_dense", "kernel_taps", "compact_bias", "sparse_tap_limit", "PATHS", "plan_dense", "LayerStats"]

PATHS = ("auto", "fft", "direct", "sparse")
_KERNEL_SCAN_ROWS = 64  # kernels whose rectangles touch at most this many rows are read row by row


def sparse_tap_limit(inner_n: int) -> int:
    """``path='auto'`` runs a kernel as shifts when it has at most this many nonzero lags.

    One shift costs about two passes over the state; an FFT convolution of size 2N' about
    ``c·log2(2N')`` passes; on CPU the crossover measured 10–30 taps (``benchmarks/executor.py``).
    """
    return max(4, int(math.log2(max(2, inner_n))))


# ---- grids to tensors ----------------------------------------------------------------------


def grid_dense(g: Grid, conv: Callable[[Scalar], Any], dtype: torch.dtype) -> torch.Tensor:
    """The grid as a dense CPU tensor, painted rectangle by rectangle (later rectangles win)."""
    torch = require_torch()
    t = torch.full((g.rows, g.cols), conv(g.fill), dtype=dtype)
    if isinstance(g.rects, CellArray):  # array cells in one indexed store, the few exact ones after
        cells_ = g.rects
        bulk = getattr(conv, "floats", None)
        vals = bulk(cells_) if bulk is not None else None
        if vals is not None:
            t[torch.tensor(cells_.rows), torch.tensor(cells_.cols)] = torch.tensor(vals).to(dtype)  # copies: the arrays are read-only
            rects: Any = [(i, i + 1, j, j + 1, v) for i, j, v in cells_.extra]
        else:
            rects = g.rects
    else:
        rects = g.rects
    cells: dict[tuple[int, int], Any] = {}

    def flush() -> None:
        if cells:
            idx = torch.tensor(list(cells.keys()), dtype=torch.long)
            t[idx[:, 0], idx[:, 1]] = torch.tensor(list(cells.values()), dtype=dtype)
            cells.clear()

    for r0, r1, c0, c1, v in rects:
        if r1 - r0 == 1 and c1 - c0 == 1:
            cells[(r0, c0)] = conv(v)
        else:
            flush()
            t[r0:r1, c0:c1] = conv(v)
    flush()
    return t


def _touched_rows(g: Grid) -> list[int] | None:
    """Rows any rectangle touches, if the fill is zero and they are few; else None."""
    if not (g.fill == 0 and not isinstance(g.fill, Sym)):
        return None
    if isinstance(g.rects, CellArray):
        import numpy as np

        used = np.union1d(g.rects.rows, [i for i, _, _ in g.rects.extra])
        return [int(r) for r in used] if len(used) <= _KERNEL_SCAN_ROWS else None
    spans = sorted((r0, r1) for r0, r1, *_ in g.rects)
    rows: list[int] = []
    for r0, r1 in spans:
        lo = max(r0, rows[-1] + 1) if rows else r0
        rows.extend(range(lo, r1))
        if len(rows) > _KERNEL_SCAN_ROWS:
            return None
    return rows


def kernel_taps(g: Grid, conv: Callable[[Scalar], Any], dtype: torch.dtype) -> tuple[tuple[int, ...], torch.Tensor]:
    """The nonzero lags of a kernel grid and their taps, a ``(#lags, d')`` tensor."""
    torch = require_torch()
    rows = _touched_rows(g)
    if rows is None:
        dense = grid_dense(g, conv, dtype)
        lags = torch.nonzero((dense != 0).any(dim=1)).flatten()
        return tuple(int(k) for k in lags), dense[lags].contiguous()
    pos = {r: k for k, r in enumerate(rows)}
    t = torch.zeros((len(rows), g.cols), dtype=dtype)
    for r0, r1, c0, c1, v in g.rects:
        val = conv(v)
        for r in range(r0, r1):
            t[pos[r], c0:c1] = val
    keep = torch.nonzero((t != 0).any(dim=1)).flatten()
    return tuple(rows[int(k)] for k in keep), t[keep].contiguous()


def _move(t: Any, device: Any, dtype: Any) -> Any:
    return None if t is None else t.to(device=device, dtype=dtype)


@dataclass(frozen=True)
class Bias:
    """A bias in its cheapest exact form: ``zero``, ``chan`` (1, d'), ``pos`` (N', 1), ``outer`` or ``dense``."""

    kind: str
    a: Any = None  # chan/pos/dense: the tensor; outer: the (N', 1) factor
    b: Any = None  # outer: the (1, d') factor

    def value(self, p: int | None = None) -> Any:
        """A tensor broadcastable to ``(B, N', d')``; None for zero."""
        if self.kind == "zero":
            return None
        if self.kind == "outer":
            return self.a * self.b if p is None else (self.a * self.b) % p
        return self.a

    def to(self, device: Any, dtype: Any) -> Bias:
        """The bias on ``device`` in ``dtype``; an outer product whose rounded factors do not
        multiply to the rounded product becomes dense, so the value is always ``fl(bias)``."""
        moved = Bias(self.kind, _move(self.a, device, dtype), _move(self.b, device, dtype))
        if self.kind == "outer" and dtype != self.a.dtype:
            full = (self.a * self.b).to(device=device, dtype=dtype)
            if not bool((moved.a * moved.b == full).all()):
                return Bias("dense", full)
        return moved


def compact_bias(t: torch.Tensor, p: int | None = None) -> Bias:
    """Detect the cheapest exact form of a dense bias (bit-exact: only equal tensors qualify)."""
    torch = require_torch()
    if not bool(t.any()):
        return Bias("zero")
    if bool((t == t[0:1]).all()):
        return Bias("chan", t[0:1].clone())
    if bool((t == t[:, 0:1]).all()):
        return Bias("pos", t[:, 0:1].clone())
    i0, j0 = (int(v) for v in torch.nonzero(t)[0])
    r = t[:, j0 : j0 + 1].clone()
    if p is None:
        c = t[i0 : i0 + 1, :] / t[i0, j0]
        ok = bool((r * c == t).all())
    else:
        c = (t[i0 : i0 + 1, :] * pow(int(t[i0, j0]), -1, p)) % p
        ok = bool(((r * c) % p == t).all())
    return Bias("outer", r, c) if ok else Bias("dense", t)


# ---- layer and model plans -----------------------------------------------------------------


@dataclass(frozen=True)
class LayerStats:
    """What the float error model needs to know about a layer's exact weights."""

    integral: bool  # every weight is an integer
    exact64: bool  # every weight is exactly a float64


FftKey = tuple[str, int, Any]
"""A cached kernel transform's key: ``("fft", n_fft, transform dtype)``."""
ProgramKey = tuple[str, str, int, str]
"""A cached program's key: ``("program", path, batch size, str(dtype))``."""


def _narrow_span(used: Any) -> tuple[int, int] | None:
    """``(first, count)`` of the range holding every True of the 1-d mask ``used``, when it covers
    at most 3/4 of the mask (worth a narrowed operation); else None."""
    idx = require_torch().nonzero(used).flatten().tolist()
    if idx and (idx[-1] - idx[0] + 1) * 4 <= used.shape[0] * 3:
        return int(idx[0]), int(idx[-1] - idx[0] + 1)
    return None


@dataclass
class LayerPlan:
    """One layer's tensors (on one device, in one dtype) and its chosen convolution path.

    What the executors derive from the tensors is computed once: values without arguments as
    ``functools.cached_property`` (read through :meth:`kernel_dense`, :meth:`rows`,
    :meth:`gathers`, :meth:`tap_channels`, :meth:`w_rows`), values per argument in the typed dict
    fields below, keyed as each one documents. :meth:`to` returns a plan with empty caches."""

    index: int
    cyclic: bool
    inner_n: int
    w_kind: str  # zero | sparse | dense
    w: Any  # dense (d', d') or None
    w_idx: Any  # sparse: (k, d') row indices
    w_coef: Any  # sparse: (k, d') coefficients
    b1: Bias
    lags: tuple[int, ...]
    taps: Any  # (#lags, d')
    unit: tuple[bool, ...]  # tap row is all ones (a plain shifted add)
    b2: Bias
    auto_path: str  # none | sparse | direct | fft
    stats: LayerStats
    # Per-argument caches (filled by the executors, empty in a fresh plan; not compared, not shown):
    fft_kernels: dict[FftKey, Any] = field(default_factory=dict, repr=False, compare=False)
    """``rfft`` of the dense kernel, per ``("fft", n_fft, transform dtype)`` (``conv_fft``)."""
    fft_span_kernels: dict[FftKey, Any] = field(default_factory=dict, repr=False, compare=False)
    """The same for the kernel narrowed to :meth:`tap_channels`."""
    exact_in: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)
    """Per ``str(dtype)``: is every weight exact in that dtype (the float error model)."""
    programs: dict[ProgramKey, tuple[tuple[LayerPlan, ...], Any, Sequence[LayerPlan]]] = field(
        default_factory=dict, repr=False, compare=False)
    """Compiled programs of a model whose first layer is this one, per ``("program", path, batch,
    str(dtype))``, with the plans they were built for (a few batch sizes, oldest dropped first)."""
    graphs: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """CUDA graphs of a model whose first layer is this one (:func:`~.cuda_graph.graphed_run`'s cache:
    the captured graph per key and input shape, or ``False`` after a failed capture)."""
    abs_plan: LayerPlan | None = field(default=None, repr=False, compare=False)
    """The same layer with every weight replaced by its absolute value (the float error model)."""
    native: tuple[tuple[LayerPlan, ...], Any, Sequence[LayerPlan]] | None = field(default=None, repr=False, compare=False)
    """The zoology layers of a model whose first layer is this one, with the plans recognised."""

    def to(self, device: Any, dtype: Any) -> LayerPlan:
        def mv(t: Any) -> Any:
            return _move(t, device, dtype)

        return LayerPlan(
            self.index, self.cyclic, self.inner_n, self.w_kind, mv(self.w),
            None if self.w_idx is None else self.w_idx.to(device), mv(self.w_coef), self.b1.to(device, dtype),
            self.lags, mv(self.taps), self.unit, self.b2.to(device, dtype), self.auto_path, self.stats,
        )

    @cached_property
    def _kernel(self) -> torch.Tensor:
        torch = require_torch()
        h = torch.zeros((self.inner_n, self.taps.shape[1]), dtype=self.taps.dtype, device=self.taps.device)
        if self.lags:
            h[torch.tensor(self.lags, device=h.device)] = self.taps
        return h

    @cached_property
    def _rows(self) -> tuple[torch.Tensor, ...]:
        return tuple(self.taps.unbind(0))

    @cached_property
    def _gathers(self) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
        return tuple(self.w_idx.unbind(0)), tuple(self.w_coef.unbind(0))

    @cached_property
    def _tap_channels(self) -> tuple[int, int] | None:
        return _narrow_span((self.taps != 0).any(dim=0))

    @cached_property
    def _w_rows(self) -> tuple[int, int] | None:
        return _narrow_span((self.w != 0).any(dim=1))

    def kernel_dense(self) -> torch.Tensor:
        """The kernel as a dense ``(N', d')`` tensor (cached)."""
        return self._kernel

    def rows(self) -> tuple[torch.Tensor, ...]:
        """The tap rows, one ``(d',)`` tensor per lag (cached: iterating a tensor costs per call)."""
        return self._rows

    def gathers(self, shape: Sequence[int]) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
        """Sparse ``W``: per term, the index expanded to a state of ``shape`` and the coefficient row."""
        idx, coef = self._gathers
        return tuple(i.expand(shape) for i in idx), coef

    def tap_channels(self) -> tuple[int, int] | None:
        """``(first, count)`` of the channel range holding every nonzero tap, when it is at most 3/4
        of the channels (an FFT over the rest would transform zeros); else None (cached)."""
        return self._tap_channels

    def w_rows(self) -> tuple[int, int] | None:
        """Dense ``W``: ``(first, count)`` of the row range holding every nonzero, when it is at most
        3/4 of the rows; else None (cached)."""
        return self._w_rows

    def warm(self) -> LayerPlan:
        """Fill the per-plan caches now (so that a traced run records only the run itself)."""
        if self.auto_path == "sparse":  # the rows are read by the shifts path only (unbinding 10^4 rows costs)
            self.rows()
        if self.lags:
            self.tap_channels()
        if self.w_kind == "dense":
            self.w_rows()
        if self.w_kind == "sparse":
            self.gathers((1, 1, self.w_idx.shape[1]))
        return self

    def path(self, requested: str) -> str:
        """The convolution path to run: ``requested`` unless 'auto' (layers without taps: 'none')."""
        if not self.lags:
            return "none"
        return self.auto_path if requested == "auto" else requested


def _plan_layer(i: int, layer: Layer, numbers: Numbers, inner_n: int) -> LayerPlan:
    dt = numbers.torch_dtype
    p = numbers.p if isinstance(numbers, ModNumbers) else None
    conv = Converter(numbers, f"layer {i}")
    W = grid_dense(layer.W, conv, dt)
    lags, taps = kernel_taps(layer.h, conv, dt)
    b1 = grid_dense(layer.b1, conv, dt)
    b2 = grid_dense(layer.b2, conv, dt)
    stats = LayerStats(conv.integral(), conv.exact_in_float64()) if p is None else LayerStats(True, True)
    return plan_dense(i, layer.mode is Mode.CYCLIC, inner_n, W, b1, lags, taps, b2, stats, p)


def plan_dense(i: int, cyclic: bool, inner_n: int, W: torch.Tensor, b1: torch.Tensor, lags: tuple[int, ...],
               taps: torch.Tensor, b2: torch.Tensor,
               stats: LayerStats, p: int | None = None) -> LayerPlan:
    """A layer's plan from its tensors: dense ``W (d', d')``, ``b1``, ``b2 (N', d')``, the kernel's
    nonzero ``lags`` and their ``taps (#lags, d')`` (``p``: residues mod p)."""
    torch = require_torch()
    dd = W.shape[0]
    nnz_col = (W != 0).sum(dim=0)
    k = int(nnz_col.max()) if dd else 0
    w_idx = w_coef = None
    w = None if k == 0 else W  # the dense W, kept for the sparse kind too
    if k == 0:
        w_kind = "zero"
    elif k <= max(1, dd // 32):  # a gather and a multiply per term against ~d'/12 passes for a CPU matmul
        w_kind = "sparse"
        w_idx = torch.argsort((W == 0).to(torch.int8), dim=0, stable=True)[:k].contiguous()
        w_coef = W.gather(0, w_idx).contiguous()
    else:
        w_kind = "dense"
    if not lags:
        auto = "none"
    elif len(lags) <= sparse_tap_limit(inner_n):
        auto = "sparse"
    else:  # the blocked direct product was slower than the FFT at every N' measured (16 to 8192)
        auto = "fft"
    unit = tuple((taps == 1).all(dim=1).tolist()) if len(lags) else ()
    return LayerPlan(i, cyclic, inner_n, w_kind, w, w_idx, w_coef, compact_bias(b1, p), lags, taps, unit,
                     compact_bias(b2, p), auto, stats).warm()


@dataclass
class ModelPlan:
    """Every layer of a model, planned once; ``on(device, dtype)`` moves (and caches) the tensors."""

    model: Model
    numbers: Any
    layers: list[LayerPlan]
    moved: dict[tuple[str, str], list[LayerPlan]] = field(default_factory=dict, repr=False)
    """The layers moved to ``(str(device), str(dtype))``."""

    def on(self, device: Any, dtype: Any) -> list[LayerPlan]:
        key = (str(device), str(dtype))
        if key not in self.moved:
            self.moved[key] = [lp.to(device, dtype).warm() for lp in self.layers]
        return self.moved[key]


def model_plan(m: Model, numbers: Numbers, check: Check | None = None) -> ModelPlan:
    """The (cached) plan of a model for one number kind and one set of parameter values;
    ``check`` (:mod:`symverify.deadline`) runs before planning each layer."""
    check_params(m, numbers)

    def layer(i: int, ly: Layer) -> LayerPlan:
        if check is not None:
            check()
        return _plan_layer(i, ly, numbers, m.inner_n)

    return cached(m, numbers, lambda: ModelPlan(m, numbers, [layer(i, ly) for i, ly in enumerate(m.layers)]))


