"""Convolution kernels shared by the float and the modular executors (docs/theory.md §1.1).

States are ``(B, N', d')`` tensors, rows = positions. Two algorithms are generic over the
arithmetic, which the caller passes in:

- :func:`conv_shifts`: ``Σ_k h[k] ⊙ shift_k(x)`` over the nonzero lags only (causal: rows move
  down by k and the top k rows get nothing; cyclic: they wrap around). Cost O(#lags·B·N'·d').
- :func:`conv_blocked`: the blocked direct product. Rows are cut into blocks of T; block pair
  (i, i−m) is multiplied by the T×T Toeplitz block ``H_m[a, c] = h[m·T + a − c]`` (zero outside
  ``[0, N')`` for causal, indices mod N' for cyclic), as one batched matmul per needed m.
  Cost O(B·N'²·d') flops in BLAS, O(d'·T²) memory per block; no FFT, no rounding beyond the sums.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from symverify.kernel.engines._torch import require_torch

__all__ = ["conv_shifts", "conv_blocked", "block_size", "Pool"]

Mac = Callable[[Any, Any, Any, bool, bool], None]
"""``mac(acc_view, src_view, tap_row, tap_is_one, first)``: ``acc = src·tap`` when ``first`` (acc is
uninitialised), else ``acc += src·tap``."""


def conv_shifts(x: Any, lags: Sequence[int], taps: Any, unit: Sequence[bool], cyclic: bool, mac: Mac,
                out: Any = None) -> Any:
    """``h ⊛ x`` for a kernel given by its nonzero ``lags`` and ``taps`` (one row of d' per lag: a
    ``(#lags, d')`` tensor or a sequence of rows).

    The first lag writes the output (``out``, or a new tensor) directly, with no zero fill beyond
    the k rows a causal shift leaves empty, so one impulse costs a single pass over the state.
    """
    n = x.shape[-2]
    out = require_torch().empty_like(x) if out is None else out
    rows = taps.unbind(0) if hasattr(taps, "unbind") else taps  # one call, not a Python iteration over a tensor
    for j, (k, tap, one) in enumerate(zip(lags, rows, unit)):
        first = j == 0
        if k == 0:
            mac(out, x, tap, one, first)
            continue
        mac(out.narrow(-2, k, n - k), x.narrow(-2, 0, n - k), tap, one, first)
        if cyclic:
            mac(out.narrow(-2, 0, k), x.narrow(-2, n - k, k), tap, one, first)
        elif first:
            out.narrow(-2, 0, k).zero_()
    return out


class Pool:
    """Reusable state-sized buffers for one model run.

    A fresh large tensor page-faults on first touch (measured: several passes' worth of time per
    layer), so a model run recycles its dead states and scratch branches instead of allocating.
    Only contiguous tensors the run itself produced are released, never a live output.
    """

    def __init__(self) -> None:
        self.free: list[Any] = []

    def empty_like(self, x: Any) -> Any:
        for i, t in enumerate(self.free):
            if t.shape == x.shape and t.dtype == x.dtype and t.device == x.device:
                return self.free.pop(i)
        return require_torch().empty(x.shape, dtype=x.dtype, device=x.device)

    def release(self, *tensors: Any, keep: Any) -> None:
        for t in tensors:
            if t is not None and t is not keep and t.shape == keep.shape and t.is_contiguous() and not any(t is f for f in self.free):
                self.free.append(t)


def block_size(n: int, cyclic: bool) -> int | None:
    """Rows per block: min(N', 64) for causal; for cyclic a divisor of N' (None: use the doubling)."""
    if not cyclic or n <= 64:
        return min(n, 64)
    t = max(k for k in range(1, 65) if n % k == 0)
    return t if t >= 16 else None


def _needed_blocks(lags: Sequence[int], t: int, nb: int, cyclic: bool) -> list[int]:
    need: set[int] = set()
    for lag in lags:
        for m in (lag // t, lag // t + 1):
            if cyclic:
                need.add(m % nb)
            elif m < nb:
                need.add(m)
    return sorted(need)


def _toeplitz_block(h: Any, m: int, t: int, cyclic: bool) -> Any:
    """``H_m`` as a ``(d', T, T)`` tensor: ``H_m[q, a, c] = h[m·T + a − c, q]``."""
    torch = require_torch()
    n, dd = h.shape
    ar = torch.arange(t, device=h.device)
    idx = m * t + ar[:, None] - ar[None, :]
    if cyclic:
        idx = idx % n
    else:
        idx = torch.where((idx >= 0) & (idx < n), idx, torch.full_like(idx, n))
    h_ext = torch.cat([h, torch.zeros((1, dd), dtype=h.dtype, device=h.device)])
    return h_ext[idx].permute(2, 0, 1).contiguous()


Contract = Callable[[Any, Any], Any]  # contract(H (d', T, T), X (d', T, M)) -> (d', T, M)
Accumulate = Callable[[Any, Any], None]  # acc(target_view, value): target += value


def conv_blocked(x: Any, h: Any, lags: Sequence[int], cyclic: bool, contract: Contract, accumulate: Accumulate) -> Any:
    """``h ⊛ x`` (h dense ``(N', d')``) by blocked Toeplitz products; cyclic without a block size
    that divides N' runs as the causal convolution of ``[x; x]`` read from row N' on."""
    torch = require_torch()
    bsz, n, dd = x.shape
    t = block_size(n, cyclic)
    if t is None:
        y = conv_blocked(torch.cat([x, x], dim=1), torch.cat([h, torch.zeros_like(h)]), lags, False, contract, accumulate)
        return y[:, n:, :]
    nb = -(-n // t)
    pad = nb * t - n
    xp = torch.nn.functional.pad(x, (0, 0, 0, pad)) if pad else x
    xl = xp.reshape(bsz, nb, t, dd).permute(3, 2, 1, 0).contiguous()  # (d', T, nb, B)
    yl = torch.zeros_like(xl)
    for m in _needed_blocks(lags, t, nb, cyclic):
        hm = _toeplitz_block(h, m, t, cyclic)
        src = xl[:, :, : nb - m, :].reshape(dd, t, -1)
        accumulate(yl[:, :, m:, :], contract(hm, src).reshape(dd, t, nb - m, bsz))
        if cyclic and m:
            wrap = xl[:, :, nb - m :, :].reshape(dd, t, -1)
            accumulate(yl[:, :, :m, :], contract(hm, wrap).reshape(dd, t, m, bsz))
    return yl.permute(3, 2, 1, 0).reshape(bsz, nb * t, dd)[:, :n, :]
