"""Benchmark: one sweep serially, on the process pool and on a local Dask cluster of 1 and 2 workers.

Run ``python benchmarks/dask_scaling.py [--quick]``. The sweep is ``symverify sweep thm_h21``
(layered circuits of cut width w and depth Δ, compiled by the H.21 construction and proved by
certificate: CPU-bound instances of a few seconds each). It prints the wall time of each backend,
the speed-up of 2 over 1 (processes, or Dask workers), whether every run wrote the same JSON, the
machine's own ceiling (two CPU-bound Python loops at once against one), and the per-task overhead
of Dask against a plain process per case, measured on a sweep of tiny cases, with the cost of
starting and stopping a local cluster. Prints ratios; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from typing import Any

from symverify.scripts import dask_backend, runner
from symverify.scripts.protocol import SWEEP_ENV
from symverify.scripts.tasks import execute

SWEEP = {"widths": [64, 128], "depths": [4, 8], "seeds": [0, 1], "compilers": ["kaleidoscope"]}
QUICK = {"widths": [32, 64], "depths": [4], "seeds": [0, 1], "compilers": ["kaleidoscope"]}
TINY = {"widths": [1], "depths": [1], "compilers": ["kaleidoscope"]}
BURN = "import time\nt = time.perf_counter()\nx = 0\nfor i in range(20_000_000): x += i\nprint(time.perf_counter() - t)"


def _cluster(workers: int) -> Any:
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        silence_logs=logging.CRITICAL, scheduler_kwargs={"allowed_failures": 1})


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _ceiling() -> float:
    """How much faster two CPU-bound processes finish than one after the other on this machine."""
    one = float(subprocess.run([sys.executable, "-c", BURN], capture_output=True, text=True, check=True).stdout)
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", BURN], stdout=subprocess.PIPE) for _ in range(2)]
    for p in procs:
        p.wait()
    return 2 * one / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller sweep (w ≤ 64, Δ = 4) and 16 tiny tasks")
    args = ap.parse_args(argv)
    grid = QUICK if args.quick else SWEEP
    scripts = runner.available()
    env = {SWEEP_ENV: json.dumps(grid)}
    n = len(grid["widths"]) * len(grid["depths"]) * len(grid["seeds"]) * len(grid["compilers"])
    print(f"sweep thm_h21 {json.dumps(grid)}: {n} instances")
    rows: list[tuple[str, float]] = []
    runs: list[str] = []
    for jobs in (1, 2):
        secs, summary = _timed(lambda jobs=jobs: runner.run_scripts(scripts, ["thm_h21_sweep"], jobs=jobs, env=env))
        rows.append((f"process pool, -j {jobs}", secs))
        runs.append(json.dumps(summary.to_json(), sort_keys=True))
    starts = []
    for workers in (1, 2):
        t_start, cluster = _timed(lambda workers=workers: _cluster(workers))
        starts.append(t_start)
        try:
            address = cluster.scheduler_address
            secs, summary = _timed(lambda address=address: dask_backend.run_scripts(scripts, ["thm_h21_sweep"],
                                                                                    scheduler=address, env=env))
        finally:
            cluster.close()
        rows.append((f"dask local, {workers} worker{'s' if workers > 1 else ''}", secs))
        runs.append(json.dumps(summary.to_json(), sort_keys=True))
    if not json.loads(runs[0])["ok"]:
        raise SystemExit("the sweep did not prove every instance within its bounds")
    print(f"{'backend':<26} {'wall':>8} {'speed-up':>9}")
    for k, (label, secs) in enumerate(rows):
        speed = f"{rows[k - 1][1] / secs:8.2f}×" if k % 2 else ""
        print(f"{label:<26} {secs:7.1f}s {speed:>9}")
    print(f"same JSON on all four: {'yes' if len(set(runs)) == 1 else 'NO'}")
    print(f"this machine's ceiling: two CPU-bound processes run {_ceiling():.2f}× as fast as one after the other")
    print(f"local cluster start: {starts[0]:.2f} s (1 worker), {starts[1]:.2f} s (2 workers)")

    tiny = {**TINY, "seeds": list(range(16 if args.quick else 40))}
    tiny_env = {SWEEP_ENV: json.dumps(tiny)}
    sweep = scripts["thm_h21_sweep"]
    m = len(tiny["seeds"])
    t_proc, _ = _timed(lambda: [execute(sweep.task(False, cases=[i], env=tiny_env)) for i in range(m)])
    cluster = _cluster(1)
    try:
        t_dask, _ = _timed(lambda: dask_backend.run_scripts(scripts, ["thm_h21_sweep"], scheduler=cluster.scheduler_address,
                                                            env=tiny_env))
    finally:
        cluster.close()
    per_proc, per_dask = t_proc / m, t_dask / (m + 1)  # + the count task
    print(f"per task ({m} tiny cases, one at a time): a process per case {per_proc:.3f} s; "
          f"a Dask task {per_dask:.3f} s (overhead {per_dask - per_proc:+.3f} s per task, connecting included)")


if __name__ == "__main__":
    main()
