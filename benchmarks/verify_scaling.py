"""Benchmark: ``verify(c, compile(c))`` against compile time and model size, before and after.

Run ``python benchmarks/verify_scaling.py [--large] [--wide] [--now-only] [--repeats 1]``. For seeded
random circuits of depth Δ = 16 and cut width w ≈ 130, 270, 520 (``--large`` adds w ≈ 1046,
``--wide`` w ≈ 2100 and 4200, compiled with the greedy plan: minutes, about 1.3 GB) it compiles the
circuit (Theorem H.21) and times, in the same run, on the same objects:

* **now**: ``verify(c, compiled)`` (method ``auto``): the compositional proof, every certificate
  stage checked exactly, its memory guard refining large stage estimates with numpy
  (:func:`~symverify.kernel.provers.bounds_layers.model_rows` from the boundary's cells), no randomized
  pre-check before it;
* **before**: the same call with the stage refinement forced onto the cell-by-cell
  ``BoundRing`` interpreter pass, plus the one-trial randomized pre-check ``auto`` used to run
  first (structural bounds, fingerprints, one torch or Python trial; torch is imported before any
  timing, so its import is in neither).

It prints seconds, the ratios verify ÷ compile (target ≤ 0.5) and before ÷ now, and the log-log
slope of verify time against model size (layers × N′·d′; target ≤ 1.05) over the rows, for both.
Both runs must say ``proved``. Times are this thread's CPU seconds (``time.thread_time``; no stage
runs in a child process at these sizes, the table says so), the minimum of ``--repeats``
interleaved runs after one untimed ``verify`` (so neither run pays for the other's cold caches);
``--now-only`` skips the before run (minutes at ``--wide``). The last column is the process's peak
resident memory so far. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.kernel.ir.analysis import stats
from symverify.kernel.verification import verify
from symverify.library import random_circuit

ROWS = [(16, 4, 384, 16), (32, 4, 768, 16), (32, 8, 1536, 16)]
LARGE = [(64, 8, 3072, 16)]
WIDE = [(64, 16, 6144, 16), (128, 16, 12288, 16)]  # w ≈ 2100, 4200


@contextmanager
def cell_by_cell_refinement() -> Iterator[None]:
    """The stage refinement as it was: the numpy pass refused, so the ``BoundRing`` pass answers."""
    from symverify.kernel.provers import compositional

    saved = compositional.model_rows
    compositional.model_rows = lambda *a, **k: None  # type: ignore[assignment]
    try:
        yield
    finally:
        compositional.model_rows = saved


def precheck_seconds(c: Any, compiled: Any) -> float:
    """The one-trial randomized pre-check ``auto`` ran before the compositional proof."""
    from symverify.kernel.provers.options import Options
    from symverify.kernel.provers.randomized import run_randomized
    from symverify.kernel.provers.registry import LazyBounds
    from symverify.kernel.provers.sides import pair_sides

    t = time.thread_time()
    a, b = pair_sides(c, compiled, None)
    opts = Options.from_call("auto")
    bounds = LazyBounds(a, b, {})
    pre = run_randomized(a, b, opts, bounds(), method="randomized (pre-check)", tag="pre", max_trials=1)
    assert not pre.evidence.get("sides_differ_mod_p")
    return time.thread_time() - t


def peak_mb() -> float:
    """This process's peak resident memory so far, MB (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ``log y`` against ``log x``."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / den if den else float("nan")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="add w ≈ 1046 (minutes)")
    ap.add_argument("--wide", action="store_true", help="add w ≈ 2100 and 4200, greedy plan (minutes)")
    ap.add_argument("--now-only", action="store_true", help="time only the current verify")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        import torch  # noqa: F401  (imported once, outside every timing)
    except ImportError:
        pass
    print(f"{'w':>5} {'L':>5} {'size':>9} {'compile':>8} {'now':>8} {'before':>8} {'now/comp':>8} "
          f"{'bef/comp':>8} {'bef/now':>7} {'refine':>7} {'isolated':>8} {'peak MB':>8}")
    sizes, nows, befores = [], [], []
    for n, d, size, depth in ROWS + (LARGE if args.large else []) + (WIDE if args.wide else []):
        c = random_circuit(n, d, size, depth, seed=args.seed, num_outputs=n * d // 2)
        w = stats(c).width
        t = time.thread_time()
        compiled = compile_kaleidoscope(c, plan="greedy" if (n, d, size, depth) in WIDE else "auto")
        t_compile = time.thread_time() - t
        m = compiled.model
        model_size = len(m.layers) * m.inner_n * m.inner_d
        now = before = refine = math.inf
        verify(c, compiled)  # untimed: the caches both runs share (grid shapes, constants) are warm for both
        isolated = 0
        for _ in range(args.repeats):
            t = time.thread_time()
            rep = verify(c, compiled)
            t_now = time.thread_time() - t
            assert rep.proved and rep.method == "compositional", rep
            isolated = max(isolated, int(rep.evidence.get("stages_isolated", 0)))
            now = min(now, t_now)
            if args.now_only:
                continue
            t = time.thread_time()
            with cell_by_cell_refinement():
                old = verify(c, compiled)
            t_old = time.thread_time() - t
            assert old.proved, old
            pre = precheck_seconds(c, compiled)
            before = min(before, t_old + pre)
            refine = min(refine, t_old / t_now)
        sizes.append(model_size)
        nows.append(now)
        befores.append(before)
        print(f"{w:>5} {len(m.layers):>5} {model_size:>9} {t_compile:7.2f}s {now:7.2f}s {before:7.2f}s "
              f"{now / t_compile:8.2f} {before / t_compile:8.2f} {before / now:7.2f} {refine:7.2f} {isolated:>8} {peak_mb():8.0f}", flush=True)
    if len(sizes) > 1:
        print(f"log-log slope of verify time vs model size: now {slope(sizes, nows):.2f}"
              + ("" if args.now_only else f", before {slope(sizes, befores):.2f}"))
    print("refine: the old cell-by-cell stage refinement alone (without the pre-check) ÷ now")


if __name__ == "__main__":
    main()
