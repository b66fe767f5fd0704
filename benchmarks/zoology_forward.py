"""Benchmark: ``execute`` against zoology's own BaseConv forward on the same weights and inputs.

Run ``python benchmarks/zoology_forward.py [--quick] [--batch B]``; with ``ZOOLOGY_SRC`` pointing
at a checkout of github.com/HazyResearch/zoology (and its ``einops``/``pydantic`` installed) the
repository's ``zoology.mixers.base_conv.BaseConv`` (``kernel_size=-1, implicit_long_conv=False``)
is timed too; without it that column is skipped with a message.

For each size (L, d) and dtype (float64, float32) one zoology layer with seeded weights
(multiples of 1/4, so float32 and float64 hold them exactly) is converted with
:func:`~symverify.executors.from_zoology` (general weights need the pair form: two paper layers
on width 2d, which the float executor recognises and runs natively: one fused operation per
zoology layer, :mod:`symverify.executors.zoology_native`) and the script times, single-threaded,
interleaved, median of repeats:

- ``zoo-local``: :class:`~symverify.executors.ZoologyBaseConv`, the faithful re-implementation;
- ``zoo-repo``: the repository's module with the same state dict (when ``ZOOLOGY_SRC`` is set);
- ``execute``: ``execute(model, u, backend="torch", dtype=...)`` on the converted model;
- ``module``: ``to_torch(model)`` in the same dtype, under ``torch.no_grad()``.

It prints ``zoo/execute`` (above 1: execute is faster; the target is ≥ 1.2 at every size, B = 1 by default)
and the largest difference between the outputs (round-off: FFT in both). Ratios are measured in
one run; no absolute time is meaningful on a shared machine. ``--strict`` exits 1 when a ratio is
below the target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from typing import Any

import torch
from executor import measure  # benchmarks/executor.py: interleaved minimum timing

from symverify.executors import ZoologyBaseConv, execute, from_zoology, to_torch

FULL = [(8, 4), (64, 16), (256, 16), (512, 64), (1024, 16), (4096, 16), (4096, 64), (16384, 64)]
QUICK = [(8, 4), (256, 16), (1024, 64)]
TARGET = 1.2


def repo_module() -> tuple[Any, str]:
    """zoology's BaseConv class, or None and the reason it is not timed."""
    src = os.environ.get("ZOOLOGY_SRC")
    if not src:
        return None, "ZOOLOGY_SRC is not set: zoo-repo skipped (point it at a zoology checkout to time the repository's module)"
    sys.path.insert(0, src)
    try:
        from zoology.mixers.base_conv import BaseConv
    except ImportError as e:
        return None, f"ZOOLOGY_SRC={src}: cannot import zoology.mixers.base_conv ({e}); zoo-repo skipped"
    return BaseConv, f"zoo-repo: zoology.mixers.base_conv.BaseConv from {src}"


def layer(d: int, n: int, seed: int) -> ZoologyBaseConv:
    g = torch.Generator().manual_seed(seed)
    z = ZoologyBaseConv(d, n)
    with torch.no_grad():
        for p in z.parameters():
            p.copy_(torch.randint(-3, 4, p.shape, generator=g) / (4 * (n if p.dim() == 2 and p.shape[1] == n else d)))
    return z


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--strict", action="store_true", help="exit 1 when execute is slower than zoology at some size")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cls, note = repo_module()
    print(f"zoology forward vs execute (single-thread CPU time, median of repeats, torch {torch.__version__}, B = {args.batch})")
    print(note)
    head = f"{'L':>5} {'d':>3} {'dtype':>8} | {'zoo-local':>10} {'zoo-repo':>10} {'execute':>10} {'module':>10} | {'zoo/execute':>11} {'max |diff|':>10}"
    print(head)
    print("-" * len(head))
    below = []
    for n, d in QUICK if args.quick else FULL:
        z = layer(d, n, seed=n + d)
        model = from_zoology(z)
        repo = None
        if cls is not None:
            repo = cls(d, n, kernel_size=-1, implicit_long_conv=False)
            repo.load_state_dict({k: v.float() for k, v in z.state_dict().items()})
        u = torch.randint(-4, 5, (args.batch, n, d), generator=torch.Generator().manual_seed(1)) / 4
        for dt in (torch.float64, torch.float32):
            name = str(dt).replace("torch.", "")
            zl = ZoologyBaseConv(d, n, dt)
            zl.load_state_dict(z.state_dict())
            x = u.to(dt)
            mod = to_torch(model, dtype=name)
            fns: dict[str, Callable[[], object]] = {
                "zoo-local": lambda zl=zl, x=x: zl(x),
                "execute": lambda model=model, x=x, name=name: execute(model, x, backend="torch", dtype=name),
                "module": lambda mod=mod, x=x: mod(x),
            }
            if repo is not None:
                rm = repo.to(dt)
                fns["zoo-repo"] = lambda rm=rm, x=x: rm(x)
            with torch.no_grad():
                t = measure(fns, args.reps, wall=False, budget=5.0, stat=statistics.median)
                outs = {k: fn() for k, fn in fns.items()}
            ref = outs["zoo-local"]
            diff = max(float((o.to(torch.float64) - ref.to(torch.float64)).abs().max()) for o in outs.values())
            zoo = min(t["zoo-local"], t.get("zoo-repo", float("inf")))
            ratio = zoo / t["execute"]
            if ratio < TARGET:
                below.append((n, d, name, round(ratio, 2)))
            repo_t = f"{t['zoo-repo'] * 1e3:>8.3f}ms" if "zoo-repo" in t else f"{'—':>10}"
            print(f"{n:>5} {d:>3} {name:>8} | {t['zoo-local'] * 1e3:>8.3f}ms {repo_t} {t['execute'] * 1e3:>8.3f}ms "
                  f"{t['module'] * 1e3:>8.3f}ms | {ratio:>10.2f}× {diff:>10.2e}")
    print()
    if below:
        print(f"below the target zoo/execute ≥ {TARGET}: {below}")
        return 1 if args.strict else 0
    print(f"zoo/execute ≥ {TARGET} at every size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
