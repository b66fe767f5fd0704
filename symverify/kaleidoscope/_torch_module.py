"""The torch module behind :func:`symverify.kaleidoscope.numeric.compile_torch` (imports torch).

Two ways to run the same product, picked per call from ``N`` and the batch ``B``:

- **stages**: stage ``k`` of stride ``s`` is ``Y = T0·X[:, :, 0:1] + T1·X[:, :, 1:2]`` on the view
  ``(B, N/(2s), 2, s)`` of the batch, with ``T0, T1 = twiddle[k]`` viewed as ``(N/(2s), 2, s)``
  (see :mod:`symverify.kaleidoscope.numeric`): a multiply into a preallocated buffer and an in-place
  multiply-add, with two buffers alternating (no allocation per stage). The innermost loop of such
  a view is ``s`` long, so small strides vectorise badly; stages of stride ``s < Lw`` therefore run
  on the *transposed* state (index ``p = h·Lw + l`` stored at ``l·H + h``, one copy into the other
  buffer), where they have stride ``s·H ≥ √N/2`` and their twiddles are stored permuted to match.
  Every output is the same two products and one sum as before, so the result is unchanged bit for bit.
- **blocks** (fused stages): split the index ``p = h·Lw + l`` (``Lw = 2^⌊log2 N / 2⌋``, ``H = N/Lw``).
  A stage of stride ``s ≥ Lw`` mixes only the bits of ``h`` (for each fixed ``l``), one of stride
  ``s < Lw`` only the bits of ``l``. So a run of consecutive high stages is, for each ``l``, one dense
  ``H×H`` matrix ``M_l``, and a run of low stages, for each ``h``, one dense ``Lw×Lw`` matrix ``K_h``
  (a BB* element's ``2·log2 N − 1`` stages are three runs: high, low, high). Each run is one
  batched matrix product (``torch.bmm``) over the state held as ``(H, Lw, B)`` or ``(Lw, H, B)``,
  about ``N·√N`` multiply-adds per run and per vector; the blocks are computed once per dtype and
  device (in float64 from the stages, then rounded once), at most ``BLOCK_MAX_N`` points.

- **dense**: for ``N ≤ 64``, or ``N ≤ 512`` with ``N·B ≤ 4096``, the whole product as one ``N×N``
  matrix and one matrix product (the call is then dominated by its fixed cost).

The block form does more arithmetic but in three BLAS calls instead of two elementwise passes per
stage; it pays at small ``N`` and at large batches (``benchmarks/butterfly.py`` measures both):
``use_blocks(N, B)`` is ``N ≤ 512``, or ``N ≤ 1024`` and ``B ≤ 4``, or ``B ≥ 256`` (and
``N ≤ BLOCK_MAX_N``), where each measured faster than the transposed stage form. All forms agree
to round-off (different summation orders), and exactly on integer data whose partial sums stay
below 2^53. Blocks and the dense matrix are computed once per dtype and device, in float64 from the
stages, then rounded once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.nn import functional

from symverify.errors import IRError, ShapeError
from symverify.ir.limits import allocation_limit

_TENSOR = torch.Tensor
_STRIDED = torch.strided
_NOT_REAL = frozenset((torch.bool, torch.complex32, torch.complex64, torch.complex128))

__all__ = ["ButterflyProduct", "BLOCK_MAX_N", "use_blocks", "use_dense"]

# nn.Module's global hook registries (dicts mutated in place): any entry sends a call through nn.Module.__call__
_GLOBAL_HOOKS = tuple(getattr(torch.nn.modules.module, name, {}) for name in (
    "_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks", "_global_backward_pre_hooks"))

BLOCK_MAX_N = 1 << 14  # 3·N·√N float64 block entries: 48 MiB at N = 2^14


def _refuse_overflow(src: torch.Tensor, cast: torch.Tensor) -> None:
    """Refuse finite entries of ``src`` that became ±inf when cast to the module's narrower float
    dtype: ``0·inf`` would make NaN of the other entry of every pair they meet (no rounding error)."""
    if not (src.is_floating_point() and torch.finfo(cast.dtype).max < torch.finfo(src.dtype).max):
        return
    lost = torch.isinf(cast.detach()) & torch.isfinite(src.detach())
    if bool(lost.any()):
        idx = [int(i) for i in lost.nonzero()[0]]
        raise IRError(f"torch butterfly apply: entry {idx} ({float(src.detach()[tuple(idx)])!r}) is beyond the range of "
                      f"{cast.dtype}; scale the input or use float64")


def _refuse_non_finite(x: torch.Tensor) -> None:
    """Refuse a float input holding NaN or ±inf, naming its first such entry by its index in ``x``
    (:func:`symverify.kaleidoscope.numeric.refuse_non_finite`: the exact product has no NaN or
    infinity, and ``0·inf = NaN`` would reach outputs that do not depend on that entry). One sum over
    the input finds out (NaN or ±inf when an entry is one); only when it is not finite (or finite
    entries overflowed it) are the entries looked at one by one. On a GPU reading the sum waits for it."""
    if not x.is_floating_point():
        return
    d = x.detach()
    if math.isfinite(d.sum().item()):
        return
    bad = ~torch.isfinite(d)
    if bool(bad.any()):
        idx = [int(i) for i in bad.nonzero()[0]]
        raise IRError(f"torch butterfly apply: entry {idx} is {float(d[tuple(idx)])!r}: expected finite numbers (the exact "
                      "product has no NaN or infinity, and 0·inf = NaN would reach outputs that do not depend on it)")


def use_blocks(N: int, B: int) -> bool:
    """Whether the fused block form runs a batch of ``B`` vectors of length ``N`` (module docstring)."""
    if N > BLOCK_MAX_N or N < 4:
        return False
    return N <= 512 or (N <= 1024 and B <= 4) or B >= 256


def use_dense(N: int, B: int) -> bool:
    """Whether one dense ``N×N`` matrix product runs a batch of ``B`` vectors of length ``N``."""
    return N <= 64 or (N <= 512 and N * B <= 4096)


def _run_stages(stages: Sequence[tuple[int, Any, Any]], z: torch.Tensor) -> torch.Tensor:
    """The stages applied to ``z (B, N)``: two alternating buffers, a multiply and a multiply-add per stage."""
    B, N = z.shape
    if not stages:
        return z.clone()
    bufs = (torch.empty_like(z), torch.empty_like(z) if len(stages) > 1 else z)
    cur = z
    for k, (s, t0, t1) in enumerate(stages):
        y = bufs[k % 2]
        x0, x1 = cur.view(B, N // (2 * s), 2, s).split(1, dim=2)
        yv = y.view(B, N // (2 * s), 2, s)
        torch.mul(t0, x0, out=yv)
        yv.addcmul_(t1, x1)
        cur = y
    return cur


def _split(N: int) -> tuple[int, int]:
    """``(Lw, H)``: the index ``p = h·Lw + l`` with ``Lw = 2^⌊log2 N / 2⌋`` and ``H = N/Lw``."""
    lw = 1 << ((N.bit_length() - 1) // 2)
    return lw, N // lw


def transposed_stage(N: int, s: int, t0: Any, t1: Any) -> tuple[int, Any, Any]:
    """A stage of stride ``s < Lw`` on the transposed state: stride ``s·H`` and its twiddles
    rearranged so that pair ``(q, q + s·H)`` gets the coefficients of the natural pair it stores."""
    lw, H = _split(N)
    s2 = s * H
    q = np.arange(N).reshape(N // (2 * s2), 2, s2)[:, 0, :]  # first element of each transposed pair
    p = (q % H) * lw + q // H  # its natural index (bit log2 s of it is 0)
    j, t = p // (2 * s), p % (2 * s)
    return s2, np.ascontiguousarray(t0[j, :, t].transpose(0, 2, 1)), np.ascontiguousarray(t1[j, :, t].transpose(0, 2, 1))


def _run_layout(stages: Sequence[tuple[bool, int, Any, Any]], z: torch.Tensor, N: int) -> torch.Tensor:
    """The stage form with layouts on ``z (B, N)``: ``(transposed, stride, T0, T1)`` per stage (module
    docstring); ``N`` is passed as a Python int (a trace records sizes read from tensors)."""
    B = z.shape[0]
    lw, H = _split(N)
    bufs = (torch.empty_like(z), torch.empty_like(z))
    cur, k, lay = z, 0, False
    for tr, s, t0, t1 in stages:
        if tr != lay:
            y = bufs[k % 2]
            if tr:
                y.view(B, lw, H).copy_(cur.view(B, H, lw).transpose(1, 2))
            else:
                y.view(B, H, lw).copy_(cur.view(B, lw, H).transpose(1, 2))
            cur, k, lay = y, k + 1, tr
        y = bufs[k % 2]
        x0, x1 = cur.view(B, N // (2 * s), 2, s).split(1, dim=2)
        yv = y.view(B, N // (2 * s), 2, s)
        torch.mul(t0, x0, out=yv)
        yv.addcmul_(t1, x1)
        cur, k = y, k + 1
    if lay:
        y = bufs[k % 2]
        y.view(B, H, lw).copy_(cur.view(B, lw, H).transpose(1, 2))
        cur = y
    return cur if cur is not z else z.clone()


def _run_layout_autograd(stages: Sequence[tuple[bool, int, Any, Any]], z: torch.Tensor, N: int) -> torch.Tensor:
    """:func:`_run_layout` for an input that autograd follows: the same products and sums in the same
    order (``t0·x0``, then ``addcmul`` of ``t1·x1``, the same bits), each into a new tensor, since
    torch's ``out=`` and in-place forms are refused on a tensor that requires grad."""
    B = z.shape[0]
    lw, H = _split(N)
    cur, lay = z, False
    for tr, s, t0, t1 in stages:
        if tr != lay:
            cur = (cur.view(B, H, lw) if tr else cur.view(B, lw, H)).transpose(1, 2).reshape(B, N)
            lay = tr
        x0, x1 = cur.view(B, N // (2 * s), 2, s).split(1, dim=2)
        cur = torch.addcmul(t0 * x0, t1, x1).reshape(B, N)
    if lay:
        cur = cur.view(B, lw, H).transpose(1, 2).reshape(B, N)
    return cur if cur is not z else z.clone()


def _blocks(N: int, stages: Sequence[tuple[int, Any, Any]]) -> list[tuple[bool, torch.Tensor]]:
    """``(high, blocks)`` per run of consecutive high or low stages, in float64 on the CPU:
    high runs ``(Lw, H, H)`` (``M_l[h_out, h_in]``), low runs ``(H, Lw, Lw)`` (``K_h[l_out, l_in]``).
    Each run is applied to the sums of the basis vectors that do not interact in it: ``H`` vectors
    for a high run (column ``h`` of every ``M_l`` at once), ``Lw`` for a low one."""
    lw = 1 << ((N.bit_length() - 1) // 2)
    H = N // lw
    runs: list[tuple[bool, list[tuple[int, Any, Any]]]] = []
    for s, t0, t1 in stages:
        high = s >= lw
        if runs and runs[-1][0] == high:
            runs[-1][1].append((s, t0, t1))
        else:
            runs.append((high, [(s, t0, t1)]))
    out = []
    for high, run in runs:
        st = [(s, torch.as_tensor(t0, dtype=torch.float64), torch.as_tensor(t1, dtype=torch.float64)) for s, t0, t1 in run]
        if high:
            v = torch.zeros(H, H, lw, dtype=torch.float64)
            v[torch.arange(H), torch.arange(H)] = 1
            y = _run_stages(st, v.reshape(H, N)).reshape(H, H, lw)  # (h_in, h_out, l)
            out.append((True, y.permute(2, 1, 0).contiguous()))
        else:
            v = torch.zeros(lw, H, lw, dtype=torch.float64)
            v[torch.arange(lw), :, torch.arange(lw)] = 1
            y = _run_stages(st, v.reshape(lw, N)).reshape(lw, H, lw)  # (l_in, h, l_out)
            out.append((False, y.permute(1, 2, 0).contiguous()))
    return out


class ButterflyProduct(torch.nn.Module):
    """``x ↦ M·x`` on the last axis for a butterfly product ``M`` of size ``size`` read at its
    ``n×n`` corner (inputs zero-padded to ``size``, the first ``n`` outputs kept).

    Stage ``k`` keeps ``T0`` and ``T1`` as buffers ``t0_k`` and ``t1_k`` of shape ``(N/(2s), 2, s)``
    (a stage of stride ``s < Lw``: ``(N/(2s'), 2, s')`` with ``s' = s·H``, the transposed layout it
    runs in), so ``.to(...)`` moves them and a trace records them as module state (a trace runs the stage
    form). The fused blocks are derived from the float64 stages on first use, per dtype and device.
    """

    _dtype_probe: torch.Tensor  # a scalar buffer: follows ``.to(dtype)``, so inputs are cast to the twiddles' dtype

    def __init__(self, size: int, n: int, stages: Sequence[tuple[int, Any, Any]], dtype: str, device: Any = None) -> None:
        super().__init__()
        self.size, self.n = size, n
        self.strides = tuple(s for s, _, _ in stages)
        self._names = tuple((f"t0_{k}", f"t1_{k}") for k in range(len(stages)))
        lw = _split(size)[0]
        laid = [(s < lw, *(transposed_stage(size, s, np.asarray(t0), np.asarray(t1)) if s < lw else (s, t0, t1)))
                for s, t0, t1 in stages]
        self._layout = tuple((tr, s) for tr, s, _, _ in laid)
        tdtype = getattr(torch, dtype)
        for (a, b), (_, _, t0, t1) in zip(self._names, laid):
            self.register_buffer(a, torch.as_tensor(np.ascontiguousarray(t0, dtype=np.float64), device=device).to(tdtype))
            self.register_buffer(b, torch.as_tensor(np.ascontiguousarray(t1, dtype=np.float64), device=device).to(tdtype))
        self.register_buffer("_dtype_probe", torch.zeros((), dtype=tdtype, device=device))
        self._stages64 = [(s, np.ascontiguousarray(t0, dtype=np.float64), np.ascontiguousarray(t1, dtype=np.float64))
                          for s, t0, t1 in stages]
        self._block_cache: dict[Any, list[tuple[bool, torch.Tensor]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """The module's state for pickling, ``torch.save`` and ``copy.deepcopy``, without the bound
        native kernels (ctypes pointers): a copy binds its own on first use."""
        state = self.__dict__.copy()
        state["_block_cache"] = {k: v for k, v in self._block_cache.items() if not (isinstance(k, tuple) and k[:1] == ("native",))}
        return state

    def extra_repr(self) -> str:
        return f"n={self.n}, size={self.size}, stages={len(self.strides)}, dtype={self._dtype_probe.dtype}"

    def blocks(self, dtype: Any, device: Any) -> list[tuple[bool, torch.Tensor]]:
        """The fused blocks in ``dtype`` on ``device`` (cached)."""
        key = (dtype, str(device))
        if key not in self._block_cache:
            with torch.no_grad():
                self._block_cache[key] = [(high, m.to(device=device, dtype=dtype)) for high, m in _blocks(self.size, self._stages64)]
        return self._block_cache[key]

    def dense(self, dtype: Any, device: Any) -> torch.Tensor:
        """The product as a dense matrix ``Dᵀ`` (``y = x·Dᵀ``) in ``dtype`` on ``device`` (cached)."""
        key = ("dense", dtype, str(device))
        if key not in self._block_cache:
            with torch.no_grad():
                st = [(s, torch.as_tensor(t0), torch.as_tensor(t1)) for s, t0, t1 in self._stages64]
                rows = _run_stages(st, torch.eye(self.size, dtype=torch.float64))  # row i: D·e_i
                self._block_cache[key] = [(False, rows.to(device=device, dtype=dtype).contiguous())]
        return self._block_cache[key][0][1]

    def native(self, dtype: Any) -> Any:
        """The native kernel bound to this product's packed twiddles in ``dtype`` on the CPU
        (:func:`symverify.kaleidoscope._native_butterfly.bind`, cached), or None where it is not available."""
        key = ("native", dtype)
        hit: Any = self._block_cache.get(key)
        if hit is None:
            from symverify.kaleidoscope._native_butterfly import bind

            hit = [bind(self.size, self.strides, [(t0, t1) for _, t0, t1 in self._stages64], dtype)]
            self._block_cache[key] = hit
        return hit[0]

    def _run_native(self, kernel: Any, x: torch.Tensor, lead: Any) -> torch.Tensor:
        """The stages by the native kernel: the input copied (cast, zero-padded) into a new
        ``(B, N)`` buffer, every stage in place on it, the first ``n`` columns returned."""
        N, n = self.size, self.n
        z = x if x.dim() == 2 else x.reshape(-1, n)
        if n == N and z.dtype == kernel.dtype:
            y = z.clone(memory_format=torch.contiguous_format)
        elif n == N:
            y = z.to(kernel.dtype, memory_format=torch.contiguous_format, copy=True)
        else:
            y = torch.empty((z.shape[0], N), dtype=kernel.dtype)
        if n < N:
            y[:, n:].zero_()
            y[:, :n].copy_(z)
        _refuse_overflow(z, y[:, :n] if n < N else y)
        kernel.run_unchecked(y)
        if n < N:
            y = y[:, :n]
        return y if x.dim() == 2 else y.reshape(*lead, n)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``nn.Module.__call__``, one frame shorter on its own no-hook path (about 1 µs of a 10 µs
        call at ``N = 256``): ``forward`` directly when no hook is registered (on this module or
        globally), no trace runs and the module is not compiled; otherwise ``nn.Module.__call__``.
        An allocation the device refuses (a batch too large for it) is a
        :class:`~symverify.errors.LimitError`."""
        with allocation_limit("torch butterfly apply"):  # the allocator's failure (a batch too large for the device)
            if (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                    or _GLOBAL_HOOKS[0] or _GLOBAL_HOOKS[1] or _GLOBAL_HOOKS[2] or _GLOBAL_HOOKS[3]
                    or getattr(self, "_compiled_call_impl", None) is not None or torch._C._get_tracing_state()):
                return super().__call__(*args, **kwargs)
            return self.forward(*args, **kwargs)

    def _bad_input(self, x: Any) -> Exception:
        """Why ``x`` is no input: not a tensor, complex or boolean (casting would drop imaginary parts
        or read bools as numbers), a meta tensor (no values), a sparse one, or a last axis of the
        wrong length."""
        if not isinstance(x, torch.Tensor):
            return IRError(f"torch butterfly apply: expected a torch tensor, found {type(x).__name__}; "
                           "convert it first (torch.as_tensor), or use compile_numpy for numpy arrays")
        if x.dtype in _NOT_REAL:
            return IRError(f"torch butterfly apply: expected real numbers, found a {x.dtype} tensor")
        if x.is_meta:
            return IRError(f"torch butterfly apply: expected values, found a meta tensor of shape {tuple(x.shape)} (it has no data)")
        if x.layout is not _STRIDED:
            return IRError(f"torch butterfly apply: expected a dense tensor, found a {x.layout} tensor of shape "
                           f"{tuple(x.shape)}; convert it first (x.to_dense())")
        return ShapeError(f"torch butterfly apply: expected a last axis of length {self.n}, found shape {tuple(x.shape)}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``M·x`` on the last axis of ``x``. A float input holding NaN or ±inf is an ``IRError``
        naming the entry (:func:`_refuse_non_finite`), found after the product is computed, so that
        its cost follows the memory the run took (an expanded batch too large for the device is the
        allocator's ``LimitError`` first); a trace records no such check."""
        y = self._product(x)
        if not torch.jit.is_tracing():
            _refuse_non_finite(x)
        return y

    def _product(self, x: torch.Tensor) -> torch.Tensor:
        tracing = torch.jit.is_tracing()
        if not tracing:  # a trace records no Python checks
            try:
                bad = ((type(x) is not _TENSOR and not isinstance(x, _TENSOR)) or x.shape[-1] != self.n
                       or x.layout is not _STRIDED or x.is_meta)
            except IndexError:  # a 0-dimensional tensor
                bad = True
            if bad:
                raise self._bad_input(x)
        lead, N = x.shape[:-1], self.size
        if not tracing and x.is_cpu and self.strides and not (x.requires_grad and torch.is_grad_enabled()):
            kernel = self.native(self._buffers["_dtype_probe"].dtype)  # type: ignore[union-attr]
            if kernel is not None:
                if x.dim() == 2 and N == self.n and x.dtype == kernel.dtype and x.is_contiguous():  # the common case
                    y = torch.empty_like(x)
                    kernel.run_unchecked(y, x)  # the first stage reads x: no copy
                    return y
                if x.dtype in _NOT_REAL:  # off the common case, whose dtype is the kernel's
                    raise self._bad_input(x)
                return self._run_native(kernel, x, lead)
        if x.dtype in _NOT_REAL:
            raise self._bad_input(x)
        z = x.reshape(-1, self.n)
        if z.dtype != self._dtype_probe.dtype:
            src, z = z, z.to(self._dtype_probe.dtype)
            if not tracing:  # a trace records no Python checks
                _refuse_overflow(src, z)
        if self.n < N:
            z = functional.pad(z, (0, N - self.n))
        B = z.shape[0]
        if not tracing and self.strides and use_dense(N, B):
            y = z @ self.dense(z.dtype, z.device)
        elif not tracing and self.strides and use_blocks(N, B):
            y = self._run_blocks(z)
        else:
            buffers: dict[str, torch.Tensor] = self._buffers  # type: ignore[assignment]  # plain dict lookups, no __getattr__
            run = _run_layout_autograd if z.requires_grad and torch.is_grad_enabled() else _run_layout
            y = run([(tr, s, buffers[a], buffers[b]) for (tr, s), (a, b) in zip(self._layout, self._names)], z.contiguous(), N)
        return y.reshape(B, N)[:, : self.n].reshape(*lead, self.n)

    def _run_blocks(self, z: torch.Tensor) -> torch.Tensor:
        B, N = z.shape
        lw = 1 << ((N.bit_length() - 1) // 2)
        state = z.t().reshape(N // lw, lw, B)  # (H, Lw, B): index h·Lw + l, the batch last
        high_major = False  # False: (H, Lw, B); True: (Lw, H, B)
        for high, m in self.blocks(z.dtype, z.device):
            if high != high_major:
                state = state.transpose(0, 1)
                high_major = high
            state = torch.bmm(m, state)
        if high_major:
            state = state.transpose(0, 1)
        return state.reshape(N, B).t()
