"""Benchmark: zoology Hyena and H3 modules through the whole path — circuit, direct BaseConv, exact
proof, float cross-check.

Run ``python benchmarks/gated_zoology.py [--quick]``. With ``ZOOLOGY_SRC`` pointing at a checkout of
github.com/HazyResearch/zoology (with its ``einops``, ``pydantic``, ``opt_einsum`` and ``scipy``
importable) the repository's own ``zoology.mixers.hyena.Hyena`` and ``zoology.mixers.h3.H3`` are run
as well; without it those rows are skipped with a message, and the local forms
(:mod:`symverify.executors.zoology_gated`) are used.

For each module and size (N, d) it prints: the verdict of ``verify(circuit, compiled)`` (the
module's weights as exact rationals, no symbols), the direct model's signature, the time of each
phase as a fraction of the whole (read / prove), and the largest relative difference between the
torch executor's float64 output and the module's own forward in float64 and float32 (``rel64``,
``rel32``: round-off of the module's FFT convolutions and of the executor; ``rel32`` is the
module's float32 error). Fractions and errors are measured in one run; no absolute time is meaningful
on a shared machine. Exits 1 when a proof fails or ``rel64`` exceeds 1e-9 (1e-5 when a filter the
module materialises is float32 even in a float64 module, as zoology's shift-SSM kernel is: the
module's own FFT of it is then float32-accurate, while symverify reads its values exactly).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

import symverify as sv
from symverify.executors import execute
from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

FULL = [(16, 2), (64, 4), (256, 8)]
QUICK = [(16, 2), (64, 4)]


def repo_classes() -> tuple[dict[str, Callable[[int, int], Any]], str]:
    """zoology's Hyena and H3 constructors, or none and the reason."""
    src = os.environ.get("ZOOLOGY_SRC")
    if not src:
        return {}, "ZOOLOGY_SRC is not set: the repository's Hyena and H3 are skipped (local forms only)"
    sys.path.insert(0, src)
    out: dict[str, Callable[[int, int], Any]] = {}
    notes = []
    try:
        from zoology.mixers.hyena import Hyena

        out["zoology Hyena"] = lambda N, d: Hyena(d_model=d, l_max=N)
    except ImportError as e:
        notes.append(f"cannot import zoology.mixers.hyena ({e})")
    try:
        from zoology.mixers.h3 import H3

        out["zoology H3"] = lambda N, d: H3(d_model=d, d_state=8, l_max=N)
    except ImportError as e:
        notes.append(f"cannot import zoology.mixers.h3 ({e})")
    return out, f"ZOOLOGY_SRC={src}: " + ("; ".join(notes) if notes else "the repository's Hyena and H3 are run")


def filter_dtype(mod: Any, N: int) -> torch.dtype:
    """The least precise dtype among the filters the module materialises (zoology's SSKernel keeps
    complex parameters that ``.double()`` does not convert: its shift kernel stays float32, and the
    module's FFT of it is float32-accurate)."""
    with torch.no_grad():
        if hasattr(mod, "filter_fn"):
            ks = [mod.filter_fn.filter(N)]
        else:
            ks = [mod.kernel(L=N, rate=1.0)[0], mod.ssm_k_kernel(L=N, rate=1.0)[0]]
    return min((k.dtype for k in ks), key=lambda t: torch.finfo(t).eps * -1)


def run_one(name: str, make: Callable[[int, int], Any], N: int, d: int, seed: int = 0) -> bool:
    torch.manual_seed(seed)
    mod32 = make(N, d).float().eval()
    mod64 = copy.deepcopy(mod32).double().eval()
    t0 = time.perf_counter()
    circuit, compiled = sv.gated_from_zoology(mod64, N)
    t1 = time.perf_counter()
    report = sv.verify(circuit, compiled)
    t2 = time.perf_counter()
    u = torch.randn(4, N, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    got = execute(compiled.model, u, backend="torch", dtype="float64")
    with torch.no_grad():
        want64 = mod64(u).double()
        want32 = mod32(u.float()).double()
    scale = max(1.0, float(want64.abs().max()))
    rel64 = float((got - want64).abs().max()) / scale
    rel32 = float((got - want32).abs().max()) / scale
    total = t2 - t0
    kdt = filter_dtype(mod64, N)
    tol = 1e-9 if kdt == torch.float64 else 1e-5
    ok = report.verdict.value == "proved" and not circuit.params() and rel64 <= tol
    print(f"{name:14} N={N:4} d={d:2}  {report.verdict.value:7} {compiled.model.signature!s:22} "
          f"read {100 * (t1 - t0) / total:4.0f}%  prove {100 * (t2 - t1) / total:4.0f}%  "
          f"rel64 {rel64:.1e} (filters {str(kdt)[6:]}, ≤ {tol:.0e})  rel32 {rel32:.1e}  {'ok' if ok else 'FAIL'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    makers: dict[str, Callable[[int, int], Any]] = {
        "local Hyena": lambda N, d: ZoologyHyena(d, N),
        "local H3": lambda N, d: ZoologyH3(d, 8, N),
    }
    repo, note = repo_classes()
    print(note)
    makers.update(repo)
    ok = True
    for name, make in makers.items():
        for N, d in sizes:
            ok &= run_one(name, make, N, d)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
