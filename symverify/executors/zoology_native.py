"""zoology's BaseConv run natively by the float executor: one fused operation per zoology layer.

:func:`~symverify.executors.from_zoology` writes a general zoology layer (docs/appendix-h.md §1.3)

    z = (u·A + c) ⊙ ((k + e_0) ⊛ u) + u          (u, z: (B, N, d); A: (d, d); c: (d,); k: (N, d))

as two paper layers on an ``N×2d`` state (the *pair form*, :mod:`symverify.executors.zoology`):
layer 1 computes ``[(u·A + c) ⊙ ((k + e_0) ⊛ u) | u]``, layer 2 adds the halves. Exact evaluation,
the modular executor and :func:`symverify.verify` work on those paper layers. For float execution
:func:`native_layers` recognises the pair in the executor's plans (by the values of the planned
weights, so any model of that shape qualifies, however it was built) and :func:`run_native` runs
each pair on the ``(B, N, d)`` input itself:

- the projection ``u·A + c`` is one ``addmm`` (bias included); it is the output buffer;
- the long convolution ``(k + e_0) ⊛ u`` (the D-skip folded into the filter) runs over the d used
  channels only: as shifts when the plan chose shifts (few lags: exact on integer data, like the
  pair form); for N ≤ 32 as one batched product with the filter's ``(d, N, N)`` Toeplitz
  matrices; else as one real FFT of size :func:`fft_size` (≥ 2N, so causal with no wrap-around).
  The Toeplitz matrices and the filter's transform are built once and cached;
- the gate and the residual are in-place updates of the output: ``out ⊙= conv``, ``out += u``.

It runs for ``path='auto'`` in float64 and float32 (bfloat16, and a forced path, run the paper
layers). It computes the pair form's function with different roundings: the two agree to float
round-off, not bit for bit. The error model of :mod:`symverify.executors.numeric` describes the
paper layers; :func:`~symverify.executors.numeric_check` runs those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from symverify.deadline import Check
from symverify.errors import CompileError
from symverify.executors.program import same_plans
from symverify.executors.torch_float import _mac, run_model
from symverify.kernel.engines._torch import require_torch
from symverify.kernel.engines.kernels import conv_shifts
from symverify.kernel.engines.numbers import float_numbers
from symverify.kernel.engines.plan import LayerPlan, ModelPlan, model_plan
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.semantics.layer import Shape

if TYPE_CHECKING:
    import torch

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["fft_size", "DIRECT_MAX_N"]

_NATIVE_DTYPES = ("torch.float64", "torch.float32")
DIRECT_MAX_N = 32
"""Filters of at most this length run as a batched Toeplitz product: below it the FFT's fixed cost
(two transforms, their set-up) is larger than the N²·d·B products (measured on CPU, B = 4)."""


def fft_size(n: int) -> int:
    """The FFT length for a causal convolution of length ``n``: ``2·m`` with ``m ≥ n`` the smallest
    5-smooth number (2^a·3^b·5^c), so even, at least 2n (no wrap-around) and fast.

    >>> [fft_size(n) for n in (1, 7, 8, 100, 4095)]
    [2, 16, 16, 200, 8192]

    ``n`` not an int in ``[0, MAX_CELLS]`` is a :class:`CompileError` (the search for a 5-smooth
    number past ``10**40`` did not end).
    """
    from symverify.ir import limits

    if type(n) is not int or not 0 <= n <= limits.MAX_CELLS:
        raise CompileError(f"fft_size: expected an int length in [0, MAX_CELLS = {limits.MAX_CELLS}], found "
                           f"{type(n).__name__} {n!r:.40}")
    m = max(1, n)
    while True:
        r = m
        for p in (2, 3, 5):
            while r % p == 0:
                r //= p
        if r == 1:
            return 2 * m
        m += 1


@dataclass
class NativeLayer:
    """One zoology layer ``z = (u·A + c) ⊙ ((k + e_0) ⊛ u) + u`` as tensors on one device and dtype.

    ``a``/``c`` are None when zero; the filter ``k + e_0`` is given by its nonzero ``lags`` and
    their ``taps (#lags, d)``; ``shifts`` says whether it runs as shifts (else by FFT)."""

    a: Any
    c: Any
    lags: tuple[int, ...]
    taps: Any
    unit: tuple[bool, ...]
    shifts: bool
    n: int
    spectra: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)
    """:meth:`filter_fft` per transform size ``n_fft``."""

    def warm(self) -> NativeLayer:
        """Build the cached filter form a run of length ``n`` uses now (so that a traced run
        records only the run itself)."""
        if not self.shifts and self.lags:
            if self.n <= DIRECT_MAX_N:
                self.toeplitz()
            else:
                self.filter_fft(fft_size(self.n))
        return self

    def dense(self) -> Any:
        """The filter as a dense ``(n, d)`` tensor."""
        torch = require_torch()
        h = torch.zeros((self.n, self.taps.shape[1]), dtype=self.taps.dtype, device=self.taps.device)
        h[torch.tensor(self.lags, device=h.device)] = self.taps
        return h

    def filter_fft(self, n_fft: int) -> Any:
        """``rfft`` of the filter along the sequence, size ``n_fft``: ``(d, n_fft // 2 + 1)`` (cached)."""
        if n_fft not in self.spectra:
            self.spectra[n_fft] = require_torch().fft.rfft(self.dense().T, n=n_fft, dim=-1)
        return self.spectra[n_fft]

    @cached_property
    def _toeplitz(self) -> Any:
        torch = require_torch()
        h = self.dense()
        ar = torch.arange(self.n, device=h.device)
        lag = ar[:, None] - ar[None, :]
        h_ext = torch.cat([h, torch.zeros_like(h[:1])])  # row n: the zero above the diagonal
        return h_ext[torch.where(lag >= 0, lag, self.n)].permute(2, 0, 1).contiguous()

    def toeplitz(self) -> Any:
        """``T (d, n, n)`` with ``T[q, t, s] = h[t − s, q]`` (zero for s > t): ``(h ⊛ x)_q = T_q·x_q`` (cached)."""
        return self._toeplitz


def _dense_w(lp: LayerPlan) -> Any:
    """The layer's ``W`` as a dense ``(d', d')`` tensor, whatever form the plan keeps it in."""
    torch = require_torch()
    dd = lp.taps.shape[1]
    if lp.w_kind == "dense":
        return lp.w
    w = torch.zeros((dd, dd), dtype=lp.taps.dtype, device=lp.taps.device)
    if lp.w_kind == "sparse":
        w.scatter_(0, lp.w_idx, lp.w_coef)
    return w


def _chan(lp: LayerPlan, which: str, dd: int) -> Any:
    """A bias of the plan as a ``(d',)`` vector (zeros for a zero bias), or None when it varies with position."""
    b = getattr(lp, which)
    if b.kind == "zero":
        return require_torch().zeros(dd, dtype=lp.taps.dtype, device=lp.taps.device)
    return b.a[0] if b.kind == "chan" else None


def _pair(first: LayerPlan, second: LayerPlan, d: int) -> NativeLayer | None:
    """The zoology layer two planned paper layers compute, if they are its pair form on width 2d."""
    torch = require_torch()
    dd = 2 * d
    if first.cyclic or first.taps.shape[1] != dd or second.lags or second.taps.shape[1] != dd:
        return None
    w1, w2 = _dense_w(first), _dense_w(second)
    b1, b2, b1_2, b2_2 = _chan(first, "b1", dd), _chan(first, "b2", dd), _chan(second, "b1", dd), _chan(second, "b2", dd)
    if b1 is None or b2 is None or b1_2 is None or b2_2 is None:
        return None
    eye = torch.eye(d, dtype=w1.dtype, device=w1.device)
    zero = torch.zeros((d, d), dtype=w1.dtype, device=w1.device)
    ok = (
        bool((w1[d:] == 0).all()) and bool((w1[:d, d:] == eye).all()) and bool((b1[d:] == 0).all())
        and bool((first.taps[:, d:] == 0).all()) and bool((b2[:d] == 0).all()) and bool((b2[d:] == 1).all())
        and bool((w2[:d] == torch.cat([eye, zero], dim=1)).all()) and bool((w2[d:] == torch.cat([eye, zero], dim=1)).all())
        and bool((b1_2 == 0).all()) and bool((b2_2 == 1).all())
    )
    if not ok:
        return None
    a = w1[:d, :d].contiguous()
    c = b1[:d].contiguous()
    keep = torch.nonzero(first.taps[:, :d].any(dim=1)).flatten().tolist()
    lags = tuple(first.lags[j] for j in keep)
    taps = first.taps[keep, :d].contiguous()
    return NativeLayer(
        a if bool(a.any()) else None, c if bool(c.any()) else None, lags, taps,
        tuple((taps == 1).all(dim=1).tolist()), first.auto_path == "sparse", first.inner_n,
    ).warm()


def native_layers(plans: Sequence[LayerPlan], shape: Shape) -> list[NativeLayer] | None:
    """The zoology layers a model's planned layers compute, when every consecutive pair of them is
    the pair form of one (see the module docstring); else None. Cached in the first plan, so
    recognising costs one look-up per run (the result is tied to these plan objects)."""
    if not plans:
        return None
    hit = plans[0].native
    if hit is not None and same_plans(hit[0], hit[2], plans):
        return hit[1]  # type: ignore[no-any-return]
    found: list[NativeLayer] | None = None
    dt = str(plans[0].taps.dtype)
    if (dt in _NATIVE_DTYPES and len(plans) % 2 == 0 and shape.inner_n == shape.n and shape.inner_d == 2 * shape.d):
        pairs = [_pair(plans[i], plans[i + 1], shape.d) for i in range(0, len(plans), 2)]
        if all(p is not None for p in pairs):
            found = [p for p in pairs if p is not None]
    plans[0].native = (tuple(plans), found, plans)
    return found


def _convolve(ly: NativeLayer, x: Any) -> Any:
    """``(k + e_0) ⊛ x`` on ``(B, N, d)``: a fresh tensor, or a strided view of one (FFT)."""
    torch = require_torch()
    if ly.shifts:
        return conv_shifts(x, ly.lags, ly.taps, ly.unit, False, _mac)
    n = ly.n  # the layer's length (the input's, checked by the caller), a Python int even under tracing
    if n <= DIRECT_MAX_N:  # (d, n, n) @ (d, n, B): the result is a view of (B, n, d)
        return torch.bmm(ly.toeplitz(), x.permute(2, 1, 0).contiguous()).permute(2, 1, 0)
    n_fft = fft_size(n)
    # The transform reads the channel-major view in place (no copy) and the result stays a view:
    # the gate multiplies it into the contiguous output directly.
    xf = torch.fft.rfft(x.transpose(-1, -2), n=n_fft, dim=-1).mul_(ly.filter_fft(n_fft))
    return torch.fft.irfft(xf, n=n_fft, dim=-1).narrow(-1, 0, n).transpose(-1, -2)


def _layer(ly: NativeLayer, x: Any) -> Any:
    torch = require_torch()
    conv = _convolve(ly, x) if ly.lags else None
    if ly.a is not None:
        flat = x.reshape(-1, x.shape[-1])
        out = (torch.addmm(ly.c, flat, ly.a) if ly.c is not None else torch.mm(flat, ly.a)).view(x.shape)
    elif ly.c is not None:
        out = ly.c.expand(x.shape).clone()
    else:
        return x.clone()  # zero projection: z = 0 + u
    if conv is None:
        out.zero_()
    else:
        out.mul_(conv)
    return out.add_(x)


def run_native(layers: Sequence[NativeLayer], x: torch.Tensor, check: Check | None = None) -> torch.Tensor:
    """The zoology stack on ``(B, N, d)`` inputs (on the layers' device, in their dtype); ``check``
    runs before every layer. The input is not modified."""
    for ly in layers:
        if check is not None:
            check()
        x = _layer(ly, x)
    return x


_IN_RANGE: IdentityMemo[bool] = IdentityMemo(32)
"""The planned layer lists :func:`check_range` found finite (by identity: :meth:`ModelPlan.on` caches them)."""


def check_range(plans: Sequence[LayerPlan]) -> None:
    """:class:`~symverify.errors.CompileError` when a planned weight is infinite: a weight that is a
    float64 number (the plan refuses others) beyond the range of the plans' dtype, such as ``2^200``
    in float32. Rounding a weight is the float executor's error model; an infinite one is not
    (``2^200·2^-200`` would run as ``inf``). Checked once per list of plans."""
    if not plans or _IN_RANGE.get(plans) is not None:
        return
    torch = require_torch()
    for lp in plans:
        for name, t in (("W", lp.w), ("W", lp.w_coef), ("h", lp.taps), ("b1", lp.b1.value()), ("b2", lp.b2.value())):
            if t is not None and t.is_floating_point() and bool(torch.isinf(t).any()):
                raise CompileError(f"layer {lp.index} {name}: a weight is beyond the range of {str(t.dtype).removeprefix('torch.')} "
                                   "(it would run as an infinity); use float64 or scale the weights")
    _IN_RANGE.put(plans, True)


def run_float_model(model: Model, x: torch.Tensor, params: Mapping[str, object] | None, path: str = "auto") -> torch.Tensor:
    """The float executor on a model: its (cached) plan run by :func:`run_model_native`, after
    :func:`check_range`."""
    # the format named in a weight's overflow error is the one it runs in (the conversion is the same)
    plan = model_plan(model, float_numbers(params, str(x.dtype).removeprefix("torch.")))
    check_range(plan.on(x.device, x.dtype))
    return run_model_native(plan, x, path)


def run_model_native(plan: ModelPlan, x: torch.Tensor, path: str = "auto", check: Check | None = None) -> torch.Tensor:
    """:func:`~symverify.executors.torch_float.run_model`, with the zoology pair form run natively
    when ``path='auto'`` and the model is one (see :func:`native_layers`)."""
    if path == "auto":
        layers = native_layers(plan.on(x.device, x.dtype), plan.model)
        if layers is not None:
            return run_native(layers, x.contiguous(), check)
    return run_model(plan, x, path, check)
