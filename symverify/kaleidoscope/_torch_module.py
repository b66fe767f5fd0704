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
    ``n×n`` corner (inputs zero-padded to ``size``, the first ``n`` outputs kept).

    Stage ``k`` keeps ``T0`` and ``T1`` as buffers ``t0_k`` and ``t1_k`` of shape ``(N/(2s), 2, s)``,
    so ``.to(...)`` moves them and a trace records them as module state.
    """

    _dtype_probe: torch.Tensor  # a scalar buffer: follows ``.to(dtype)``, so inputs are cast to the twiddles' dtype

    def __init__(self, size: int, n: int, stages: Sequence[tuple[int, Any, Any]], dtype: str, device: Any = None) -> None:
        super().__init__()
        self.size, self.n = size, n
        self.strides = tuple(s for s, _, _ in stages)
        self._names = tuple((f"t0_{k}", f"t1_{k}") for k in range(len(stages)))
        tdtype = getattr(torch, dtype)
        for (a, b), (_, t0, t1) in zip(self._names, stages):
            self.register_buffer(a, torch.as_tensor(np.ascontiguousarray(t0, dtype=np.float64), device=device).to(tdtype))
            self.register_buffer(b, torch.as_tensor(np.ascontiguousarray(t1, dtype=np.float64), device=device).to(tdtype))
        self.register_buffer("_dtype_probe", torch.zeros((), dtype=tdtype, device=device))

    def extra_repr(self) -> str:
        return f"n={self.n}, size={self.size}, stages={len(self.strides)}, dtype={self._dtype_probe.dtype}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_tracing() and x.shape[-1] != self.n:  # a trace records no Python checks
            raise ShapeError(f"torch butterfly apply: expected a last axis of length {self.n}, found shape {tuple(x.shape)}")
        lead, N = x.shape[:-1], self.size
        z = x.reshape(-1, self.n).to(self._dtype_probe.dtype)
        if self.n < N:
            z = functional.pad(z, (0, N - self.n))
        B = z.shape[0]
        buffers: dict[str, torch.Tensor] = self._buffers  # type: ignore[assignment]  # plain dict lookups, no __getattr__
        for s, (a, b) in zip(self.strides, self._names):
            x0, x1 = z.view(B, N // (2 * s), 2, s).split(1, dim=2)
            z = torch.mul(buffers[a], x0)
            z.addcmul_(buffers[b], x1)
        return z.reshape(B, N)[:, : self.n].reshape(*lead, self.n)
