"""Benchmark: one compositional proof that a memory-limited process cannot hold, on a local Dask cluster.

Run ``python benchmarks/dask_memory.py [--shape 64,16,6144,16] [--workers 2] [--limit-mb M]``. For a
seeded random circuit compiled by Theorem H.21 (default w ≈ 2100, Δ = 16, greedy plan; the size
``verify_dask.py --huge`` names, w = 8389 at Δ = 32, is ``--shape 256,16,25000,32``: 139 s to
compile with a 2.8 GB peak; ``--save FILE`` keeps the pair, ``--load FILE`` reruns the checks on it) it

1. writes the circuit and the compiled model to a temporary file;
2. checks the certificate in a fresh child process that reads that file, without a limit, and
   reports the child's peak virtual size (``VmPeak``: what ``RLIMIT_AS`` limits);
3. checks it on a LocalCluster of ``--workers`` one-thread worker processes
   (:func:`~symverify.kernel.provers.stages_dask.check_certificate_dask`, each task carrying only its
   layers and boundaries) and reports each worker's peak virtual size;
4. sets the limit ``M`` (default: halfway between the largest worker's peak and the single
   process's peak), then runs the child again with ``RLIMIT_AS = M`` (it must fail: a
   ``MemoryError`` or an abort) and a fresh cluster whose workers each run under
   ``RLIMIT_AS = M`` (set in every worker before the check; it must prove).

The process that submits the cluster's tasks holds the whole model (it reads it to cut the
windows) and is not limited: the claim is about the processes that check the stages. The limit
is chosen from the two measured peaks, so it is below the single process's real need by
construction; the table prints both needs. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import subprocess
import sys
import tempfile
import time
from typing import Any

CHILD = r"""
import pickle, resource, sys
limit = int(sys.argv[2])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    from symverify.kernel.provers.compositional import check_certificate
    with open(sys.argv[1], "rb") as f:
        c, compiled = pickle.load(f)
    res = check_certificate(c, compiled.model, compiled.certificate, isolate=False)
    outcome = "proved" if res.ok else f"not proved ({res.stopped or res.failure})"
except MemoryError:
    outcome = "MemoryError"
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmPeak"))
print(outcome, int(peak) // 1024)
"""


def _vm_peak_mb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmPeak"))


def _limit_as(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _warm() -> None:
    import symverify.kernel.provers.stages_dask  # noqa: F401
    from symverify.kernel.semantics.poly import PolyRing

    PolyRing(1, (), "flint")


def single(path: str, limit: int) -> tuple[str, int | None]:
    """The check in a fresh child process under ``RLIMIT_AS = limit`` (0: none): outcome, peak MB."""
    p = subprocess.run([sys.executable, "-c", CHILD, path, str(limit)], capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return f"failed (exit {p.returncode}: {tail[:80]})", None
    outcome, peak = p.stdout.strip().splitlines()[-1].rsplit(" ", 1)
    return outcome, int(peak)


def cluster(c: Any, compiled: Any, workers: int, limit: int) -> tuple[str, list[int], float]:
    """The check on a fresh LocalCluster, every worker under ``RLIMIT_AS = limit`` (0: none)."""
    from distributed import Client, LocalCluster

    from symverify.kernel.provers.stages_dask import check_certificate_dask

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0, silence_logs=logging.CRITICAL) as lc, Client(lc) as client:
        client.wait_for_workers(workers)
        client.run(_warm)
        if limit:
            client.run(_limit_as, limit)
        t = time.perf_counter()
        try:
            res = check_certificate_dask(c, compiled.model, compiled.certificate, scheduler=client,
                                         isolate=False)
            outcome = "proved" if res.ok else f"not proved ({res.stopped}: {'; '.join(res.notes)[:80]})"
        except Exception as e:  # a worker that could not allocate
            outcome = f"failed ({type(e).__name__})"
        seconds = time.perf_counter() - t
        peaks = sorted(client.run(_vm_peak_mb).values())
    return outcome, peaks, seconds


def main(argv: list[str] | None = None) -> None:
    from symverify.compiler.kaleidoscope import compile_kaleidoscope
    from symverify.kernel.ir.analysis import stats
    from symverify.library import random_circuit

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="64,16,6144,16", help="n,d,size,depth of the random circuit")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit-mb", type=int, default=None, help="RLIMIT_AS of the limited runs (default: see above)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save", help="also write the circuit and compiled model (a pickle) here")
    ap.add_argument("--load", help="read the circuit and compiled model from a --save file instead of compiling")
    args = ap.parse_args(argv)
    t = time.perf_counter()
    if args.load:
        with open(args.load, "rb") as f:
            c, compiled = pickle.load(f)
        how = f"read from {args.load}"
    else:
        n, d, size, depth = (int(x) for x in args.shape.split(","))
        c = random_circuit(n, d, size, depth, seed=args.seed, num_outputs=n * d // 2)
        compiled = compile_kaleidoscope(c, plan="greedy")
        how = f"compiled in {time.perf_counter() - t:.0f} s"
        if args.save:
            with open(args.save, "wb") as f:
                pickle.dump((c, compiled), f, protocol=pickle.HIGHEST_PROTOCOL)
    m, cert = compiled.model, compiled.certificate
    assert cert is not None
    print(f"w = {stats(c).width}, Δ = {stats(c).depth}: {len(m.layers)} layers, N'·d' = {m.inner_n}·{m.inner_d}, "
          f"{cert.num_stages} stages, {how}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pair.pkl")
        with open(path, "wb") as f:
            pickle.dump((c, compiled), f, protocol=pickle.HIGHEST_PROTOCOL)
        one, one_peak = single(path, 0)
        print(f"one process, no limit: {one}, peak virtual {one_peak} MB", flush=True)
        many, peaks, secs = cluster(c, compiled, args.workers, 0)
        print(f"{args.workers} workers, no limit: {many} in {secs:.1f} s, worker peaks virtual {peaks} MB", flush=True)
        if one_peak is None:
            return
        limit_mb = args.limit_mb if args.limit_mb is not None else (max(peaks) + one_peak) // 2
        if max(peaks) >= one_peak:
            print(f"no limit separates them: the largest worker needs {max(peaks)} MB, one process {one_peak} MB")
        limit = limit_mb << 20
        one, _ = single(path, limit)
        print(f"one process, RLIMIT_AS = {limit_mb} MB: {one}", flush=True)
        many, peaks, secs = cluster(c, compiled, args.workers, limit)
        print(f"{args.workers} workers, each RLIMIT_AS = {limit_mb} MB: {many} in {secs:.1f} s, "
              f"worker peaks virtual {peaks} MB", flush=True)


if __name__ == "__main__":
    main()
