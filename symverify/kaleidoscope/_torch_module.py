"""The torch module behind :func:`symverify.kaleidoscope.numeric.compile_torch` (imports torch).

Stage ``k`` of stride ``s`` is ``Y = T0·X[:, :, 0:1] + T1·X[:, :, 1:2]`` on the view
``(B, N/(2s), 2, s)`` of the batch, with ``T0, T1 = twiddle[k]`` viewed as ``(N/(2s), 2, s)``
(see :mod:`symverify.kaleidoscope.numeric`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.nn import functional

from symverify.errors import ShapeError

__all__ = ["ButterflyProduct"]


class ButterflyProduct(torch.nn.Module):
    """``x ↦ M·x`` on the last axis for a butterfly product ``M`` of size ``size`` read at its
    ``n×n`` corner (inputs zero-padded to ``size``, the first ``n`` outputs kept)."""

    twiddle: torch.Tensor

    def __init__(self, size: int, n: int, stages: Sequence[tuple[int, Any, Any]], dtype: str, device: Any = None) -> None:
        super().__init__()
        self.size, self.n = size, n
        self.strides = tuple(s for s, _, _ in stages)
        flat = np.stack([np.stack((t0.reshape(-1), t1.reshape(-1))) for _, t0, t1 in stages]) if stages else np.zeros((0, 2, size))
        tw = torch.from_numpy(np.ascontiguousarray(flat, dtype=np.float64)).to(dtype=getattr(torch, dtype), device=device)
        self.register_buffer("twiddle", tw)

    def extra_repr(self) -> str:
        return f"n={self.n}, size={self.size}, stages={len(self.strides)}, dtype={self.twiddle.dtype}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_tracing() and x.shape[-1] != self.n:  # a trace records no Python checks
            raise ShapeError(f"torch butterfly apply: expected a last axis of length {self.n}, found shape {tuple(x.shape)}")
        lead, N = x.shape[:-1], self.size
        z = x.reshape(-1, self.n).to(self.twiddle.dtype)
        if self.n < N:
            z = functional.pad(z, (0, N - self.n))
        B = z.shape[0]
        for s, tw in zip(self.strides, self.twiddle.unbind(0)):
            shape = (N // (2 * s), 2, s)
            v = z.view(B, N // (2 * s), 2, s)
            y = torch.mul(tw[0].view(shape), v[:, :, 0:1])
            y.addcmul_(tw[1].view(shape), v[:, :, 1:2])
            z = y.view(B, N)
        return z[:, : self.n].reshape(*lead, self.n)
