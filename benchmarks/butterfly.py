"""Benchmark: one BB* product applied in O(N log N) against a dense mat-vec, and Beneš routing.

Run ``python benchmarks/butterfly.py [--max-log 16] [--dense-max-log 13]``. For N = 2^10 … 2^16 it
times (median of repeats) the numpy float64 application of one random BB* element (2·log2 N
stages) to a vector, and a dense float64 mat-vec while the N×N matrix fits (N ≤ 2^13 by default:
512 MiB); beyond that the dense time is extrapolated as O(N²) from the largest measured size and
marked so. At the smallest size the dense matrix *is* the BB* element (materialized in float), and
the largest deviation between the two products is printed as a sanity check. Finally it routes a
random permutation of N = 2^16 (looping algorithm) and times the exact generic kernel. Prints
ratios; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from symverify.ir.butterfly import BBStar, ButterflyFactor, bbstar_strides
from symverify.kaleidoscope import apply, compile_numpy, route_permutation


def random_bbstar(N: int, seed: int) -> BBStar:
    rng = np.random.default_rng(seed)
    fs = []
    for s in bbstar_strides(N):
        d = rng.integers(-3, 4, size=(4, N // 2)).tolist()
        fs.append(ButterflyFactor(N, s, *map(tuple, d)))
    return BBStar(N, tuple(fs))


def median_time(fn: Callable[[], object], budget: float = 0.3, max_reps: int = 50) -> float:
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < max_reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-log", type=int, default=10)
    ap.add_argument("--max-log", type=int, default=16)
    ap.add_argument("--dense-max-log", type=int, default=13)
    ap.add_argument("--quick", action="store_true", help="a small run: N = 2^6 … 2^10 (dense up to 2^9)")
    args = ap.parse_args(argv)
    if args.quick:
        args.min_log, args.max_log, args.dense_max_log = 6, 10, 9
    print(f"{'N':>7} {'BB* apply':>12} {'dense matvec':>14} {'dense/BB*':>10}  note")
    last_dense: tuple[int, float] | None = None
    for k in range(args.min_log, args.max_log + 1):
        N = 1 << k
        bb = random_bbstar(N, seed=k)
        prog = compile_numpy(bb)
        x = np.random.default_rng(0).standard_normal(N)
        t_bb = median_time(lambda prog=prog, x=x: prog.apply(x))
        note = ""
        if k <= args.dense_max_log:
            if k == args.min_log:
                dense = prog.apply(np.eye(N)).T  # column j = BB*·e_j
                dev = float(np.max(np.abs(dense @ x - prog.apply(x))) / max(1.0, float(np.max(np.abs(dense @ x)))))
                note = f"dense = this BB* (max rel. deviation {dev:.1e})"
            else:
                dense = np.random.default_rng(k).standard_normal((N, N))
            t_dense = median_time(lambda dense=dense, x=x: dense @ x)
            last_dense = (N, t_dense)
            del dense
        elif last_dense is not None:
            N0, t0 = last_dense
            t_dense = t0 * (N / N0) ** 2
            note = f"dense extrapolated as O(N²) from N={N0} ({8 * N * N / 2**30:.0f} GiB would not be allocated)"
        else:
            print(f"{N:>7} {t_bb * 1e3:>10.3f}ms {'—':>14} {'—':>10}  no dense size measured")
            continue
        print(f"{N:>7} {t_bb * 1e3:>10.3f}ms {t_dense * 1e3:>12.3f}ms {t_dense / t_bb:>10.1f}  {note}")

    N = 1 << args.max_log
    perm = list(range(N))
    random.Random(1).shuffle(perm)
    t = time.perf_counter()
    bb = route_permutation(perm)
    t_route = time.perf_counter() - t
    y = compile_numpy(bb, "mod", p=2**31 - 1).apply(np.arange(N))
    routed = bool(np.all(y[np.asarray(perm)] == np.arange(N)))
    print(f"routing a random permutation of N={N}: {t_route:.2f}s ({t_route / (N * args.max_log) * 1e9:.0f} ns per element·level); "
          f"routes correctly on 0..N-1: {routed}")

    Ne = 1 << 12
    bb = random_bbstar(Ne, seed=99)
    xs = list(range(Ne))
    t_exact = median_time(lambda: apply(bb, xs), budget=0.5, max_reps=5)
    t_np = median_time(lambda: compile_numpy(bb, "mod", p=2**31 - 1).apply(np.arange(Ne)), budget=0.5, max_reps=5)
    print(f"exact generic kernel (Python ints) N={Ne}: {t_exact * 1e3:.1f}ms; numpy mod p incl. compile: {t_np * 1e3:.1f}ms; "
          f"ratio {t_exact / t_np:.1f}")


if __name__ == "__main__":
    main()
