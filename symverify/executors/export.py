"""Export a BaseConv model to a torch ``nn.Module`` and import it back exactly.

:func:`to_torch` builds a :class:`BaseConvStack`: dense float parameters ``W (d'×d')`` and
``b1, h, b2 (N'×d')`` per layer, and a forward pass that computes the paper stack of docs/theory.md §1
(embed, ``(x·W + b1) ⊙ (h ⊛ x + b2)`` per layer in its mode, crop) with the executor's choices:
``path='auto'`` (default) runs kernels with few lags as shifts and the rest by FFT, ``'fft'`` and
``'direct'`` force the executor's FFT or blocked direct convolution. It agrees with
``execute(model, u, backend="torch", path=...)`` within the error model of
:mod:`symverify.executors.numeric`, and equals it on integer data wherever ``execute`` is exact.
The module follows the input's float dtype and device.

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
from typing import Any, cast

import numpy as np

from symverify.errors import CompileError, IRError, ShapeError
from symverify.executors.inputs import check_batch_memory, exact_weights, refuse_hooks
from symverify.executors.torch_float import FloatArithmetic, conv_fft
from symverify.executors.zoology_native import native_layers, run_native
from symverify.ir.bigint import safe_repr
from symverify.ir.limits import allocation_limit
from symverify.kernel.engines._torch import dtype_name, require_torch, resolve_device, resolve_dtype
from symverify.kernel.engines.kernels import Pool, conv_blocked
from symverify.kernel.engines.numbers import Converter, check_params, float_numbers
from symverify.kernel.engines.plan import LayerPlan, LayerStats, grid_dense, plan_dense, sparse_tap_limit
from symverify.kernel.ir.analysis import check_known
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid, Rect
from symverify.kernel.semantics import layer as loop

try:
    import torch
    from torch import nn
except ImportError:  # torch is the extra symverify[torch]: BackendUnavailableError naming it
    require_torch()

__all__ = ["BaseConvLayer", "BaseConvStack", "to_torch", "from_torch", "grid_from_tensor"]


_FLOATS = ("float64", "float32", "bfloat16")
_MODULE_PATHS = ("auto", "fft", "direct")


def _shift_conv(x: Any, h: Any, lags: tuple[int, ...], cyclic: bool) -> Any:
    """``Σ_k h[k] ⊙ shift_k(x)`` over the lags (functional: differentiable, traceable, compilable)."""
    n = x.shape[-2]
    out = None
    for k in lags:
        if k == 0:
            src = x
        elif cyclic:
            src = torch.roll(x, k, dims=-2)
        else:
            src = torch.nn.functional.pad(x[..., : n - k, :], (0, 0, k, 0))
        term = src * h[k]
        out = term if out is None else out + term
    return torch.zeros_like(x) if out is None else out


def _compiling() -> bool:
    """Under ``torch.compile`` the module runs its out-of-place form (the compiler fuses it) and
    takes its structure as built: recompile after editing weights."""
    is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return bool(is_compiling()) if is_compiling is not None else False


def _check_weights(W: Any, b1: Any, h: Any, b2: Any) -> None:
    """A layer's weights: real tensors (float or integer; a complex one would run as its real part,
    a bool one is no number) of shapes ``W (d', d')`` and ``b1, h, b2 (N', d')``."""
    for name, t in (("W", W), ("b1", b1), ("h", h), ("b2", b2)):
        if not isinstance(t, torch.Tensor):
            raise CompileError(f"{name}: expected a tensor, found {type(t).__name__}")
        if t.is_complex() or t.dtype == torch.bool:
            raise CompileError(f"{name}: expected real weights, found a {dtype_name(t.dtype)} tensor"
                               + (" (running it would drop the imaginary parts)" if t.is_complex() else ""))
    if W.dim() != 2 or W.shape[0] != W.shape[1]:
        raise ShapeError(f"W: expected a square d'×d' matrix, found shape {tuple(W.shape)}")
    if b1.dim() != 2 or b1.shape[1] != W.shape[0]:
        raise ShapeError(f"b1: expected shape (N', {W.shape[0]}) (d' = {W.shape[0]} from W), found {tuple(b1.shape)}")
    for name, t in (("h", h), ("b2", b2)):
        if t.shape != b1.shape:
            raise ShapeError(f"{name}: expected shape (N', {W.shape[0]}) like b1 {tuple(b1.shape)}, found {tuple(t.shape)}")


class BaseConvLayer(nn.Module):
    """One paper layer ``(x·W + b1) ⊙ (h ⊛ x + b2)`` with dense parameters (docs/theory.md §1.1).

    ``path='auto'`` runs like ``execute``: a kernel with at most
    :func:`~symverify.kernel.engines.plan.sparse_tap_limit` nonzero lags as shifts (exact on integer
    data), others by FFT, and a ``W`` with few nonzeros per column as gathers. That structure is
    read from the weights when the layer is built and rebuilt when a weight's version or storage
    changes (an in-place edit under ``torch.no_grad()``, an optimizer step, ``load_state_dict``, a
    new tensor). An edit that changes neither, through ``W.data[...] = …`` or a numpy view of a
    weight, is not seen: the layer keeps running its old plans until :meth:`refresh` is called
    (detecting it would mean reading every weight on every call), whatever the ``path``: a
    :class:`BaseConvStack` without gradients runs the plans for ``'fft'`` and ``'direct'`` too. Only
    this layer's own forward pass with ``path='fft'``/``'direct'`` (the stack's with gradients,
    e.g. for training) reads every weight on every call.
    """

    def __init__(self, W: Any, b1: Any, h: Any, b2: Any, mode: str = "causal") -> None:
        super().__init__()
        _check_weights(W, b1, h, b2)
        with torch.inference_mode(False):  # weights built under inference mode: normal tensors (versions, autograd)
            self.W, self.b1, self.h, self.b2 = (nn.Parameter(t.clone() if t.is_inference() else t) for t in (W, b1, h, b2))
        self.mode = Mode(mode).value
        self.refresh()

    def refresh(self) -> None:
        """Re-read the structure ``path='auto'`` relies on (nonzero lags of ``h``, sparsity of ``W``)
        and drop the execution plans built from the weights (done by itself when a weight's version or
        storage changed; call it after an edit through ``.data`` or a numpy view, which changes neither).
        What it builds are normal tensors under ``torch.inference_mode()`` too (they outlive it).
        Weights replaced by ones of other shapes, or complex or bool ones, are refused as at
        construction (:func:`_check_weights`): they would fail inside torch, or run their real parts."""
        _check_weights(self.W, self.b1, self.h, self.b2)
        with torch.no_grad(), torch.inference_mode(False):
            h, W = self.h.detach(), self.W.detach()
            self.lags: tuple[int, ...] = tuple(int(k) for k in torch.nonzero((h != 0).any(dim=1)).flatten().tolist())
            self.shifts = len(self.lags) <= sparse_tap_limit(h.shape[0])
            dd = W.shape[0]
            k = int((W != 0).sum(dim=0).max()) if dd else 0
            self.w_kind = "zero" if k == 0 else "sparse" if k <= max(1, dd // 32) else "dense"
            idx = torch.argsort((W == 0).to(torch.int8), dim=0, stable=True)[:k].contiguous() if self.w_kind == "sparse" \
                else torch.zeros((0, dd), dtype=torch.long, device=W.device)
            self.register_buffer("w_idx", idx, persistent=False)
        self.plans: dict[Any, LayerPlan] = {}
        self.beyond = self._beyond()
        self.versions = self._versions()
        self.plan(self.W.dtype, self.W.device)  # built now, so that tracing the module records only the run

    def _beyond(self) -> dict[Any, str]:
        """Per float dtype, the first of ``W, b1, h, b2`` with a finite weight that is beyond the
        dtype's range (it would round to an infinity there); dtypes where every weight fits are
        absent. Read from each tensor's largest finite magnitude: rounding is monotone, so a
        weight overflows iff the largest does."""
        out: dict[Any, str] = {}
        with torch.no_grad():
            for name, t in (("W", self.W), ("b1", self.b1), ("h", self.h), ("b2", self.b2)):
                a = t.detach()
                if not a.is_floating_point() or a.numel() == 0:
                    continue
                big = torch.where(torch.isfinite(a), a.abs(), 0).amax().double().cpu()
                for dt in (torch.float64, torch.float32, torch.bfloat16, torch.float16):
                    if dt not in out and bool(torch.isinf(big.to(dt))):
                        out[dt] = name
        return out

    def _versions(self) -> tuple[int, ...]:
        """Changes when a weight is edited in place or replaced (``.to``, ``load_state_dict``)."""
        return tuple(v for t in (self.W, self.b1, self.h, self.b2) for v in (t._version, t.data_ptr()))

    def plan(self, dtype: Any, device: Any) -> LayerPlan:
        """The executor's plan of this layer in ``dtype`` on ``device`` (cached until a weight changes)."""
        if self._versions() != self.versions:
            self.refresh()
        if dtype not in (torch.float64, torch.float32, torch.bfloat16):
            dtype = torch.float64  # integer weights: the plan's float layout (the run uses the input's dtype)
        key = (dtype, device)
        if key not in self.plans:
            with torch.no_grad(), torch.inference_mode(False):
                W, b1, h, b2 = (t.detach().to(device=device, dtype=dtype) for t in (self.W, self.b1, self.h, self.b2))
                for name, src, t in (("W", self.W, W), ("b1", self.b1, b1), ("h", self.h, h), ("b2", self.b2, b2)):
                    if src.dtype != dtype and bool((torch.isinf(t) & torch.isfinite(src.detach().to(device))).any()):
                        raise CompileError(f"{name}: a finite {dtype_name(src.dtype)} weight is beyond the range of "
                                           f"{dtype_name(dtype)}, where this input runs (it would be an infinity); "
                                           "run a float64 input or scale the weights")
                taps = h[list(self.lags)].contiguous()
                stats = LayerStats(bool(all((t == t.round()).all() for t in (W, b1, h, b2))), True)  # floats are float64 numbers
                self.plans[key] = plan_dense(0, self.mode == "cyclic", h.shape[0], W, b1, self.lags, taps, b2, stats)
        return self.plans[key]

    def forward(self, x: Any, path: str = "auto") -> Any:
        """The layer on a ``(B, N', d')`` state in out-of-place torch operations, in the state's
        dtype: a finite weight beyond that dtype's range is a :class:`~symverify.errors.CompileError`
        (as in :meth:`plan`), never an infinity."""
        if not _compiling() and self._versions() != self.versions:
            self.refresh()
        name = self.beyond.get(x.dtype)
        if name is not None:
            src = dtype_name(getattr(self, name).dtype)
            raise CompileError(f"{name}: a finite {src} weight is beyond the range of {dtype_name(x.dtype)}, where this "
                               "input runs (it would be an infinity); run a float64 input or scale the weights")
        cyclic = self.mode == "cyclic"
        W, b1, h, b2 = (t.to(device=x.device, dtype=x.dtype) for t in (self.W, self.b1, self.h, self.b2))
        if path == "auto" and self.shifts:
            conv = _shift_conv(x, h, self.lags, cyclic)
        elif path in ("auto", "fft"):
            conv = conv_fft(x, h, cyclic)
        elif path == "direct":
            conv = conv_blocked(x, h, range(h.shape[0]), cyclic, torch.bmm, lambda t, v: t.add_(v))
        else:
            raise ShapeError(f"path: expected 'fft' or 'direct' or 'auto' (the executor's per-layer choice), found {path!r}")
        if path == "auto" and self.w_kind != "dense":
            proj = b1
            if self.w_kind == "sparse":
                idx: Any = self.w_idx.to(x.device)
                coef = W.gather(0, idx)
                for j in range(idx.shape[0]):
                    proj = proj + torch.gather(x, -1, idx[j].expand(x.shape)) * coef[j]
        else:
            proj = x @ W + b1
        return proj * (conv + b2)


class BaseConvStack(nn.Module):
    """An (N, L, d, N', d')-BaseConv model as a module: ``forward(u)`` on ``(B, N, d)`` or ``(N, d)``.

    The output has the input's dtype (float64, float32 or bfloat16; anything else is refused with
    :class:`~symverify.errors.IRError`) and device. Without gradients the forward pass runs the
    executor (:mod:`symverify.executors.torch_float`) on per-layer plans built from the weights,
    one per (dtype, device) and rebuilt when a weight's version or storage changes (**not** after an
    edit through ``.data`` or a numpy view: call :meth:`refresh` then), so it equals ``execute`` bit for bit
    (up to the weights' rounding to the dtype), except the dense projections of a model ``execute``
    runs as a compiled program (:mod:`symverify.executors.program`): there they are one ``mm`` on
    the channels-first state (in the native program, :mod:`symverify.executors._native_program`,
    sums of fused multiply-adds) where the module runs torch's ``matmul`` on the state, and the two
    may sum in different orders (the last bits on non-integer data, within the error bound of
    :mod:`~symverify.executors.numeric`; exact on integers); like ``execute``, it runs the pair form of zoology's
    BaseConv as one fused operation per zoology layer (:mod:`symverify.executors.zoology_native`). With gradients, and under ``torch.compile``, it runs
    the same per-layer choices as out-of-place torch operations (no graph breaks; recompile after
    editing weights). ``torch.jit.trace`` works (the trace fixes the plans); ``torch.jit.script``
    does not: the per-layer dispatch (lag tuples, path names, plans, error messages) is Python,
    which TorchScript does not compile; trace the module instead. A batch whose ``(B, N', d')``
    state needs more bytes than the device has, or an allocation the device refuses, is a
    :class:`~symverify.errors.LimitError` (outside ``torch.compile``).
    """

    def __init__(self, n: int, d: int, inner_n: int, inner_d: int, layers: Sequence[BaseConvLayer], path: str = "auto") -> None:
        """Sizes are positive ints and ``layers`` a list or tuple of :class:`BaseConvLayer` (else
        :class:`ShapeError`, naming the argument); ``path`` a str."""
        for name, v in (("n", n), ("d", d), ("inner_n", inner_n), ("inner_d", inner_d)):
            if type(v) is not int or v < 1:
                raise ShapeError(f"BaseConvStack: {name}: expected a positive int, found {type(v).__name__} {safe_repr(v, 40)}")
        if not isinstance(layers, (list, tuple)) or not all(isinstance(ly, BaseConvLayer) for ly in layers):
            found = type(layers).__name__ if not isinstance(layers, (list, tuple)) else \
                f"a {type(next(ly for ly in layers if not isinstance(ly, BaseConvLayer))).__name__} among them"
            raise ShapeError(f"BaseConvStack: layers: expected a list or tuple of BaseConvLayer, found {found}")
        if type(path) is not str:
            raise ShapeError(f"BaseConvStack: path: expected a str, found {type(path).__name__} {safe_repr(path, 40)}")
        super().__init__()
        self.n, self.d, self.inner_n, self.inner_d, self.path = n, d, inner_n, inner_d, path
        self.layers = nn.ModuleList(layers)
        for i, ly in enumerate(layers):
            if tuple(ly.b1.shape) != (inner_n, inner_d):
                raise ShapeError(f"layer {i}: expected inner shape {inner_n}×{inner_d}, found {tuple(ly.b1.shape)}")
        self._recognise()

    def _recognise(self) -> None:
        """Recognise zoology's pair form now, so that tracing the module records only the run."""
        if len(self.layers):
            native_layers([cast(BaseConvLayer, ly).plan(ly.W.dtype, ly.W.device) for ly in self.layers], self)

    def refresh(self) -> None:
        """Re-read every layer's structure after editing weights (see :class:`BaseConvLayer`)."""
        for ly in self.layers:
            cast(BaseConvLayer, ly).refresh()
        self._recognise()

    def forward(self, u: Any) -> Any:
        if _compiling():
            return self._forward(u)
        with allocation_limit("BaseConvStack"):  # the allocator's failure: a LimitError (a batch too large for the device)
            return self._forward(u)

    def _forward(self, u: Any) -> Any:
        if not (isinstance(u, torch.Tensor) and dtype_name(u.dtype) in _FLOATS):
            found = dtype_name(u.dtype) if isinstance(u, torch.Tensor) else type(u).__name__
            raise IRError(
                f"input: expected a float64, float32 or bfloat16 tensor, found {found}; convert it first "
                "(e.g. u.double()), or use execute(model, u) for exact results on integer data"
            )
        if u.layout != torch.strided:
            raise IRError(f"input: expected a dense tensor, found a {u.layout} tensor; convert it first (u.to_dense())")
        if u.is_meta or any(p.is_meta for p in self.parameters()):  # the layers read values (shifts, nonzero taps)
            what = "the input" if u.is_meta else "a weight"
            raise IRError(f"input: {what} is a meta tensor, which has no values; the layers read the values to run")
        single = u.dim() == 2
        x = u[None] if single else u
        if tuple(x.shape[1:]) != (self.n, self.d):
            raise ShapeError(f"input: expected shape (B, {self.n}, {self.d}) or ({self.n}, {self.d}), found {tuple(u.shape)}")
        if not _compiling():
            check_batch_memory(x.shape[0], self.inner_n * self.inner_d, x.dtype, x.device, "module")
        if x.shape[0] == 0:  # an empty batch: nothing to run (torch's FFT refuses empty batches)
            y = x[:, : self.n, : self.d].clone()
        elif _compiling() or (torch.is_grad_enabled() and (x.requires_grad or any(p.requires_grad for p in self.parameters()))):
            state = torch.nn.functional.pad(x, (0, self.inner_d - self.d, 0, self.inner_n - self.n))
            for ly in self.layers:
                state = ly(state, self.path)
            y = state[:, : self.n, : self.d]
        else:
            if self.path not in _MODULE_PATHS:
                raise ShapeError(f"path: expected 'fft' or 'direct' or 'auto' (the executor's per-layer choice), found {self.path!r}")
            plans = [cast(BaseConvLayer, ly).plan(x.dtype, x.device) for ly in self.layers]
            native = native_layers(plans, self) if self.path == "auto" else None
            if native is not None:  # zoology's BaseConv in the pair form: run as execute runs it
                y = run_native(native, x.contiguous())
            else:
                y = loop.run_model(self, plans, x, FloatArithmetic(self.path, Pool()))
        return y[0] if single else y


def to_torch(model: Model, *, params: Mapping[str, object] | None = None, dtype: str | torch.dtype | None = None,
             device: str | torch.device | None = None, path: str = "auto", requires_grad: bool = False) -> BaseConvStack:
    """The model as a :class:`BaseConvStack` (weights rounded to nearest in ``dtype``, default float64;
    a weight beyond the range of ``dtype`` is a :class:`~symverify.errors.CompileError`, not an infinity).

    ``path`` (``'auto'``, ``'fft'`` or ``'direct'``, settable later as ``module.path``) picks the
    convolutions as :func:`~symverify.executors.execute` does: with ``'auto'`` the module takes
    the executor's per-layer choices, so on integer data it is exact wherever ``execute`` is.
    Inputs of another float dtype than the weights run in the input's dtype. Without gradients
    (the default ``requires_grad=False``, or under ``torch.no_grad()``) the forward pass is the
    executor itself on plans built from the module's weights (rebuilt when a weight's version or
    storage changes: after an edit through ``.data`` or a numpy view, which changes neither, call
    ``module.refresh()``, or the module keeps running the old weights); with
    gradients it is the same computation in out-of-place torch operations, which may round
    otherwise than ``execute`` (the last bits): a shift's multiply and add are two roundings where
    ``execute`` fuses them (``addcmul``), and dense projections and direct-path sums may add in
    another order; the FFT path gives the same bits. Every result is within the error bound of
    :mod:`~symverify.executors.numeric`, and exact where that bound is 0. In every dtype path a
    finite weight beyond the range of the dtype the module runs in is a
    :class:`~symverify.errors.CompileError`, not an infinity.

    >>> from symverify.kernel.ir.grid import Grid
    >>> m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    >>> to_torch(m)(torch.tensor([[3.0], [-2.0]], dtype=torch.float64)).tolist()
    [[9.0], [4.0]]
    >>> from_torch(to_torch(m)).layers[0].h.to_rows()
    [[1], [0]]
    """
    if not isinstance(model, Model):
        raise IRError(f"to_torch: expected a Model, found {type(model).__name__}"
                      + ("; pass its .model" if hasattr(model, "model") else ""))
    if not isinstance(requires_grad, bool):
        raise IRError(f"requires_grad: expected True or False, found {safe_repr(requires_grad, 40)}")
    dt, dev = resolve_dtype(dtype), resolve_device(device)
    if path not in _MODULE_PATHS:
        raise IRError(f"path: expected one of {', '.join(map(repr, _MODULE_PATHS))}, found {path!r}")
    check_known(model, params)
    nums = float_numbers(params)
    check_params(model, nums)  # the layers' own plans are built from the module's tensors

    def dense(g: Grid, where: str) -> Any:  # a Converter reads cell arrays in bulk
        t64 = grid_dense(g, Converter(nums, where), torch.float64)
        t = t64.to(device=dev, dtype=dt)
        lost = torch.isinf(t).nonzero()  # float64 holds every weight (else the Converter raised): these overflowed in dt
        if len(lost):
            i, j = (int(v) for v in lost[0])
            raise CompileError(f"{where}[{i}, {j}]: {float(t64[i, j])!r} is beyond the range of {dtype_name(dt)} "
                               f"({len(lost)} weight(s) so); rounding would make it infinite: use float64 or scale the weights")
        return t

    layers = []
    for i, ly in enumerate(model.layers):
        W, b1, h, b2 = (dense(g, f"layer {i} {name}") for name, g in ly.grids())
        layers.append(BaseConvLayer(W, b1, h, b2, ly.mode.value))
    return BaseConvStack(model.n, model.d, model.inner_n, model.inner_d, layers, path).requires_grad_(requires_grad)


def grid_from_tensor(t: Any, where: str) -> Grid:
    """The exact grid of a float tensor: rows of equal runs merged into rectangles (fill 0)."""
    a = exact_weights(t, where).numpy()
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


_CALL = ("__call__", "_call_impl", "_wrapped_call_impl")
_STACK_METHODS = (*_CALL, "forward", "_forward", "refresh", "_recognise")
"""What a :class:`BaseConvStack` runs (its forward pass) and how it re-reads its weights after an edit."""
_LAYER_METHODS = (*_CALL, "forward", "plan", "refresh", "_versions", "_beyond")
"""What a :class:`BaseConvLayer` runs, the plans it runs, and how it notices an edited weight."""


def _refuse_overrides(obj: Any, base: type, names: tuple[str, ...], what: str) -> None:
    """Refuse a subclass of ``base`` that computes by its own methods ``names``: only the weights are read."""
    changed = [n for n in names if getattr(type(obj), n, None) is not getattr(base, n, None)]
    if changed:
        raise CompileError(f"from_torch: {what} ({type(obj).__name__}) overrides {base.__name__}.{changed[0]}, so it may "
                           "compute otherwise than its weights say, and only the weights are read")


def from_torch(module: Any) -> Model:
    """The exact model of a :class:`BaseConvStack` (every float weight read as the rational it is).
    A module with forward or state-dict hooks (on it, a submodule, or global) is refused
    (:class:`~symverify.errors.CompileError`): they may change what it computes; so is a subclass
    of :class:`BaseConvStack` or :class:`BaseConvLayer` with its own forward pass, plans or refresh
    (:data:`_STACK_METHODS`, :data:`_LAYER_METHODS`), and a method replaced on an instance
    (``module.forward = …``; :func:`~symverify.executors.inputs.refuse_hooks`). The module is
    refreshed (:meth:`BaseConvStack.refresh`), so it runs the weights read even where they were
    edited without changing their version (through ``.data``), which it did not notice before."""
    if not isinstance(module, BaseConvStack):
        raise CompileError(
            f"from_torch: expected a BaseConvStack (as made by to_torch), found {type(module).__name__}; "
            "for the zoology BaseConv variant use from_zoology"
        )
    refuse_hooks(module, "from_torch")  # a hook's change to the forward pass is in no weight
    _refuse_overrides(module, BaseConvStack, _STACK_METHODS, "the module")
    for i, ly in enumerate(module.layers):
        if not isinstance(ly, BaseConvLayer):
            raise CompileError(f"from_torch: layer {i}: expected a BaseConvLayer, found {type(ly).__name__}")
        _refuse_overrides(ly, BaseConvLayer, _LAYER_METHODS, f"layer {i}")
    layers = []
    for i, ly in enumerate(module.layers):
        g = {name: grid_from_tensor(getattr(ly, name), f"layer {i} {name}") for name in ("W", "b1", "h", "b2")}
        if ly.mode not in [m.value for m in Mode]:
            raise CompileError(f"layer {i} mode: expected one of {', '.join(repr(m.value) for m in Mode)}, found {safe_repr(ly.mode, 40)}")
        layers.append(Layer(g["W"], g["b1"], g["h"], g["b2"], Mode(ly.mode)))
    model = Model(module.n, module.d, module.inner_n, module.inner_d, tuple(layers))
    # The module runs plans built from its weights, rebuilt when a weight's version changes; an edit through
    # `.data` changes no version, so it ran the old weights while the new ones were read: it runs those read now.
    module.refresh()
    return model
