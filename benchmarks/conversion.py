"""Benchmark: converting a zoology layer to a paper model and the model to a torch module.

Run ``python benchmarks/conversion.py [--quick] [--per-cell L]``.

For one zoology ``BaseConv`` layer of sequence length L and width d with seeded normal weights (every
weight a distinct float, so the pair form on width 2d is needed) the script times, once each
(thread-CPU seconds, one thread):

- ``from_zoology``: the exact paper model (the filter read in bulk as a cell array);
- ``to_torch``: the module of that model (float64);
- ``forward``: one forward pass of the module at batch 1, for scale;

in float32 and float64. The target is ``from_zoology`` + ``to_torch`` below 1 s for L = 16384, d = 64.
``--per-cell L`` also times the per-cell construction the bulk path replaced (``Fraction`` and one
rectangle per weight, ``Grid.from_rows``) at length L and prints the ratio at that length; the
per-cell path takes about 4 s per 10^5 weights, so keep L small.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from typing import Any

import torch

from symverify.executors import ZoologyBaseConv, from_zoology, to_torch
from symverify.kernel.ir.grid import Grid

TARGET_S = 1.0


def cpu_time(fn: Any) -> tuple[float, Any]:
    t = time.thread_time()
    out = fn()
    return time.thread_time() - t, out


def layer(d: int, n: int, dtype: torch.dtype) -> ZoologyBaseConv:
    z = ZoologyBaseConv(d, n, dtype=dtype)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in z.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64))
    return z


def per_cell(z: ZoologyBaseConv) -> None:
    """The grids of the pair form built cell by cell (the construction the bulk path replaced)."""
    k = z.conv.filter.detach().double().T.tolist()
    rows = [[Fraction(v) + (i == 0) for v in row] + [0] * len(row) for i, row in enumerate(k)]
    Grid.from_rows(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="L = 4096 instead of 16384")
    ap.add_argument("--per-cell", type=int, default=0, metavar="L", help="also time the per-cell construction at length L")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    n, d = (4096 if args.quick else 16384), 64
    print(f"from_zoology / to_torch of one zoology layer, L = {n}, d = {d} (thread-CPU seconds, one thread, torch {torch.__version__})")
    worst = 0.0
    for dtype in (torch.float32, torch.float64):
        z = layer(d, n, dtype)
        t_from, model = cpu_time(lambda: from_zoology(z))  # noqa: B023
        t_to, mod = cpu_time(lambda: to_torch(model))  # noqa: B023
        u = torch.randn(1, n, d, dtype=torch.float64)
        with torch.no_grad():
            t_fw, _ = cpu_time(lambda: mod(u))  # noqa: B023
        worst = max(worst, t_from + t_to)
        print(f"  {dtype!s:>14}: from_zoology {t_from:6.3f} s   to_torch {t_to:6.3f} s   forward {t_fw:6.3f} s   "
              f"({model.signature}, {len(model.layers[0].h.rects)} filter cells)")
    print(f"from_zoology + to_torch: at most {worst:.3f} s (target < {TARGET_S} s at L = 16384): "
          f"{'PASS' if worst < TARGET_S or args.quick else 'FAIL'}")
    if args.per_cell:
        z = layer(d, args.per_cell, torch.float32)
        t_old, _ = cpu_time(lambda: per_cell(z))
        t_new, _ = cpu_time(lambda: from_zoology(z))
        print(f"per-cell filter grid alone at L = {args.per_cell}: {t_old:.3f} s; whole bulk from_zoology {t_new:.3f} s: "
              f"per-cell ÷ bulk = {t_old / max(t_new, 1e-9):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
