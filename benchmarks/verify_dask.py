"""Benchmark: the compositional stage checks of one ``verify`` on a local Dask cluster.

Run ``python benchmarks/verify_dask.py [--workers 1,2] [--rows w270,w520] [--huge]``. For seeded random
circuits compiled by Theorem H.21 (Δ = 16, cut width w ≈ 270 and 520; ``--huge``: w ≈ 8200 at Δ = 32,
tens of minutes to compile and many GB, not run by default) it times
:func:`~symverify.kernel.provers.compositional.check_certificate` in this process and
:func:`~symverify.kernel.provers.stages_dask.check_certificate_dask` on a LocalCluster of 1, 2, …
one-thread worker processes (started, and their imports done, before the timing; the circuit is
sent to every worker, and each task's layers and boundaries to its worker, inside it), checks that every result equals the local one (seconds apart), and prints
seconds, the speed-up local ÷ cluster, the tasks, and each worker's peak resident memory.

The cluster cannot run faster than the cores it has: on a machine of 2 cores shared with other
work, 2 workers give at most 2×. Each worker holds the whole circuit (it is broadcast) and the
layers of its own tasks only; ``--huge`` shows the per-process peak for that size. Sending the boundaries costs about what
pickling the certificate does (≈ 0.4 of the local check's time at w ≈ 130), so the cluster pays
only where the stage checks are long. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import logging
import resource
import time
from dataclasses import replace

from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.kernel.ir.analysis import stats
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.provers.stages_dask import TASKS_PER_THREAD, check_certificate_dask, stage_runs
from symverify.library import random_circuit

ROWS = {"w130": (16, 4, 384, 16), "w270": (32, 4, 768, 16), "w520": (32, 8, 1536, 16)}
HUGE = (256, 16, 25000, 32)  # w ≈ 8200, Δ = 32


def _warm() -> None:
    """Import what a stage check needs (the worker's first task would otherwise pay for it)."""
    import symverify.kernel.provers.stages_dask  # noqa: F401
    from symverify.kernel.semantics.poly import PolyRing

    PolyRing(1, (), "flint")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> None:
    from distributed import Client, LocalCluster

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,2", help="cluster sizes to time, comma separated")
    ap.add_argument("--rows", default="w270,w520", help=f"among {', '.join(ROWS)}")
    ap.add_argument("--huge", action="store_true", help="add w ≈ 8200, Δ = 32 (compiles in about 2.5 min, 2.8 GB)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.workers.split(",")]
    shapes = [(name, ROWS[name]) for name in args.rows.split(",")] + ([("w8200", HUGE)] if args.huge else [])
    print(f"{'circuit':>8} {'w':>5} {'L':>5} {'stages':>6} {'where':>10} {'tasks':>5} {'seconds':>8} {'speed-up':>8} "
          f"{'peak MB/process':>15}")
    for name, (n, d, size, depth) in shapes:
        c = random_circuit(n, d, size, depth, seed=args.seed, num_outputs=n * d // 2)
        compiled = compile_kaleidoscope(c)
        m, cert = compiled.model, compiled.certificate
        w, L, stages = stats(c).width, len(m.layers), cert.num_stages
        t = time.perf_counter()
        local = check_certificate(c, m, cert)
        t_local = time.perf_counter() - t
        assert local.ok, local
        print(f"{name:>8} {w:>5} {L:>5} {stages:>6} {'local':>10} {'-':>5} {t_local:7.2f}s {1.0:8.2f} "
              f"{_peak_mb():15.0f}", flush=True)
        for k in sizes:
            with LocalCluster(n_workers=k, threads_per_worker=1, processes=True, dashboard_address=":0",
                              silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
                client.wait_for_workers(k)
                client.run(_warm)  # imports done, as on a cluster that stays up (this process has them too)
                t = time.perf_counter()
                res = check_certificate_dask(c, m, cert, scheduler=client)
                t_dask = time.perf_counter() - t
                assert replace(res, seconds=0.0) == replace(local, seconds=0.0), (res, local)
                peaks = client.run(_peak_mb)
                tasks = len(stage_runs(cert.boundaries, TASKS_PER_THREAD * k))
            print(f"{name:>8} {w:>5} {L:>5} {stages:>6} {f'{k} worker' + ('s' if k > 1 else ''):>10} {tasks:>5} "
                  f"{t_dask:7.2f}s {t_local / t_dask:8.2f} {max(peaks.values()):15.0f}", flush=True)


if __name__ == "__main__":
    main()
