"""The state handling the torch backends of the layer loop share (the float executor and the modular engine).

:class:`TorchStates` holds ``(B, N', d')`` states for :mod:`symverify.kernel.semantics.layer`: it embeds
``(B, N, d)`` inputs in the top-left corner of a zero state (:func:`embed`, docs/theory.md §1.2), crops
the output and recycles buffers; :func:`gather` reads ``x[..., idx]`` (the sparse projection and the
circuit levels). The modular engine (:mod:`.torch_modular`) runs on these, so they are trusted; the
float executor (:mod:`symverify.executors.torch_float`) reuses them.
"""

from __future__ import annotations

from typing import Any

from symverify.kernel.engines._torch import require_torch
from symverify.kernel.engines.kernels import Pool
from symverify.kernel.engines.plan import LayerPlan
from symverify.kernel.semantics.layer import Shape

__all__ = ["TorchStates", "embed", "gather"]


def gather(x: Any, idx: Any, out: Any = None) -> Any:
    """``x[..., idx]`` (a gather with an expanded index: far faster than index_select on the last axis)."""
    return require_torch().gather(x, -1, idx.expand(x.shape), out=out)


def embed(x: Any, inner_n: int, inner_d: int) -> Any:
    """Zero-pad ``(B, N, d)`` into the top-left corner of a ``(B, N', d')`` state."""
    torch = require_torch()
    state = torch.zeros((x.shape[0], inner_n, inner_d), dtype=x.dtype, device=x.device)
    state[:, : x.shape[1], : x.shape[2]] = x
    return state


class TorchStates:
    """What the torch backends of :mod:`symverify.kernel.semantics.layer` share: ``(B, N', d')`` states,
    layers planned in advance (:class:`~symverify.kernel.engines.plan.LayerPlan`), the convolution
    path, and a :class:`Pool` of buffers to recycle (None: allocate)."""

    path: str
    pool: Pool | None

    def prepare(self, lp: LayerPlan) -> LayerPlan:
        return lp

    def embed(self, x: Any, shape: Shape) -> Any:
        return embed(x, shape.inner_n, shape.inner_d)

    def crop(self, state: Any, shape: Shape) -> Any:
        return state[:, : shape.n, : shape.d].contiguous()

    def retire(self, old: Any, new: Any) -> None:
        if self.pool is not None:
            self.pool.release(old, keep=new)

    def _recycle(self, y: Any, proj: Any, conv: Any) -> Any:
        if self.pool is not None:
            self.pool.release(proj, conv, keep=y)
        return y
