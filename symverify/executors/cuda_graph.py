"""Float models on CUDA replayed as captured CUDA graphs (opt-in: ``SYMVERIFY_CUDA_GRAPHS=1``).

On a GPU a compiled model's cost at small batches is kernel launches (a few per layer, ~500
layers), not arithmetic. A CUDA graph records the launches of one forward pass once and replays
them with one call. :func:`graphed_run` captures ``run(static_x)`` for one plan, path, input
shape, dtype and device after two warm-up runs on a side stream (``torch.cuda.graph``), keeps the
static input and output, and on later calls copies the input in, replays and returns a copy of the
output. Data-dependent host decisions cannot be baked into a graph silently: any synchronising
call during capture (``.item()``, ``bool(tensor)``, ``nonzero``) raises, and then the capture is
abandoned for that key and the model runs eagerly from then on.

Not the default: this path has not been run on a GPU by the test suite (no GPU on the machines
it runs on); ``benchmarks/executor.py --device cuda`` times it when the variable is set. A call
that finds the graph busy (another thread replaying it) runs eagerly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from symverify.kernel.engines._torch import require_torch
from symverify.progress import env_switch

__all__ = ["enabled", "graphed_run"]


def enabled() -> bool:
    """True when ``SYMVERIFY_CUDA_GRAPHS`` is ``1``, ``true``, ``yes`` or ``on``; False when it is
    unset, empty, ``0``, ``false``, ``no`` or ``off`` (any case, surrounding spaces ignored), read by
    :func:`symverify.progress.env_switch`, the one parser of on/off settings. Any other value (a typo
    such as ``ture``) is a :class:`~symverify.errors.UsageError`, not silently off."""
    return env_switch("SYMVERIFY_CUDA_GRAPHS", "replay CUDA graphs", "run eagerly", "run eagerly") is True


@dataclass
class _Graphed:
    graph: Any
    static_x: Any
    static_y: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


def _capture(run: Callable[[Any], Any], x: Any) -> _Graphed:
    torch = require_torch()
    static_x = x.clone()
    side = torch.cuda.Stream(device=x.device)
    side.wait_stream(torch.cuda.current_stream(x.device))
    with torch.cuda.stream(side):
        for _ in range(2):  # warm-up: lazy caches (FFT plans, moved weights) are filled outside the capture
            run(static_x)
    torch.cuda.current_stream(x.device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = run(static_x)
    return _Graphed(graph, static_x, static_y)


def _on_cuda(x: Any) -> bool:
    return getattr(getattr(x, "device", None), "type", None) == "cuda"


def graphed_run(cache: dict[Any, Any], key: Any, run: Callable[[Any], Any], x: Any) -> Any | None:
    """``run(x)`` through a CUDA graph cached in ``cache`` under ``key`` (plus ``x``'s shape, dtype
    and device); None when graphs are off, ``x`` is not on a CUDA device, the capture failed once
    for this key, or the graph is busy: the caller then runs eagerly."""
    if not enabled() or not _on_cuda(x):
        return None
    full = ("cuda_graph", key, tuple(x.shape), str(x.dtype), str(x.device))
    hit = cache.get(full)
    if hit is False:
        return None
    if hit is None:
        try:
            hit = _capture(run, x)
        except Exception:  # a synchronising or unsupported call inside the capture: run eagerly from now on
            cache[full] = False
            return None
        cache[full] = hit
    if not hit.lock.acquire(blocking=False):
        return None
    try:
        hit.static_x.copy_(x)
        hit.graph.replay()
        return hit.static_y.clone()
    finally:
        hit.lock.release()
