"""Benchmark: BB* products applied in O(N log N): against a dense mat-vec, batched against torch_butterfly's algorithm, and Beneš routing.

Run ``python benchmarks/butterfly.py [--max-log 16] [--dense-max-log 13]``. For N = 2^10 … 2^16 it
times (median of repeats) the numpy float64 application of one random BB* element (2·log2 N
stages) to a vector, and a dense float64 mat-vec while the N×N matrix fits (N ≤ 2^13 by default:
512 MiB); beyond that the dense time is extrapolated as O(N²) from the largest measured size and
marked so. At the smallest size the dense matrix *is* the BB* element (materialized in float), and
the largest deviation between the two products is printed as a sanity check. Finally it routes a
random permutation of N = 2^16 (looping algorithm) and times the exact generic kernel.

The batched table (``--batches 1,16,256``, N = 2^8 … 2^14 by default; ``--batched-only`` runs
just this one) times one random BB* element applied to a (B, N) float64 batch by
``compile_numpy`` and ``compile_torch`` against a re-implementation of torch_butterfly's pure-torch
``butterfly_multiply_torch`` on the same twiddles: per factor of stride s it views the batch as
(B, N/(2s), 1, 2, s), multiplies by the twiddle viewed as (N/(2s), 2, 2, s) and sums over the
input index of the 2×2 blocks. When ``BUTTERFLY_SRC`` names a checkout of HazyResearch/butterfly,
its ``torch_butterfly.Butterfly`` module (``nblocks=2``, decreasing stride first: the B* half,
then B) with the same twiddles is timed too. Torch runs on one thread; the methods are measured
interleaved (thread-CPU time, minimum of ≥ 5 rounds), with the ratio ours/reference (≤ 1 means ours is faster).
``torch`` is ``compile_torch`` as it runs (the native kernel when it builds); ``forms`` is the same
module held to its pure-torch forms, timed in the same run.
Prints ratios; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import random
import statistics
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Optional

import numpy as np

from symverify.kaleidoscope import compile_numpy, compile_torch, route_permutation
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, bbstar_strides
from symverify.kernel.kaleidoscope.apply import apply


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


def interleaved_minima(fns: dict[str, Callable[[], object]], budget: float = 1.0, min_reps: int = 5,
                       max_reps: int = 30) -> dict[str, float]:
    """Minimum thread-CPU time of every function (``time.thread_time``: steady on a shared machine,
    torch runs on one thread), measured in rounds: each round runs all of them once, in rotating
    order; at least ``min_reps`` rounds, more while the budget lasts. Each runs once first to warm up."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for fn in fns.values():
        fn()
    start = time.perf_counter()
    r = 0
    while r < min_reps or (time.perf_counter() - start < budget and r < max_reps):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t = time.thread_time()
            fns[name]()
            times[name].append(time.thread_time() - t)
        r += 1
    return {k: min(v) for k, v in times.items()}


def reference_twiddle(bb: BBStar) -> np.ndarray:
    """torch_butterfly's layout: shape (nblocks=2, log2 N, N/2, 2, 2), entry [b, k, m, i, j] the
    (i, j) entry of pair m's block in factor k of half b (the B* half first, decreasing stride)."""
    N, k = bb.size, len(bb.factors) // 2
    blocks = np.array([[[f.d1, f.d2], [f.d3, f.d4]] for f in bb.factors], dtype=np.float64)  # (2k, 2, 2, N/2)
    return blocks.transpose(0, 3, 1, 2).reshape(2, k, N // 2, 2, 2)


def reference_multiply(twiddle: object, x: object) -> object:
    """torch_butterfly's pure-torch algorithm for one stack, two blocks, decreasing stride first:
    per factor, the (N/(2s), 2, 2, s) twiddle times the (B, N/(2s), 1, 2, s) batch, summed over j."""
    import torch

    assert isinstance(twiddle, torch.Tensor) and isinstance(x, torch.Tensor)
    nblocks, log_n = twiddle.shape[0], twiddle.shape[1]
    B, N = x.shape
    out = x.contiguous()
    increasing = False
    for b in range(nblocks):
        for k in range(log_n):
            s = 1 << (k if increasing else log_n - 1 - k)
            t = twiddle[b, k].view(N // (2 * s), s, 2, 2).permute(0, 2, 3, 1)
            out = (t * out.view(B, N // (2 * s), 1, 2, s)).sum(dim=3)
        increasing = not increasing
    return out.view(B, N)


def peer_module(src: str, twiddle: object, N: int) -> tuple[Callable[[object], object] | None, str]:
    """torch_butterfly from the checkout at ``src`` with our twiddles, and what is timed.

    Its ``Butterfly`` module (``nblocks=2``, decreasing stride first), whose forward pass calls the
    C++ kernel ``torch.ops.torch_butterfly.butterfly_multiply_fw``, when the extension is built
    (``python setup.py build_ext --inplace`` in the checkout); otherwise its own pure-torch
    ``butterfly_multiply_torch`` (``torch_butterfly/multiply.py``, loaded by file path), said so in
    the note; None when neither loads."""
    import sys

    import torch

    tw = torch.as_tensor(twiddle)
    if src not in sys.path:
        sys.path.insert(0, src)
    try:
        from torch_butterfly import Butterfly  # type: ignore[import-not-found]

        mod = Butterfly(N, N, bias=False, increasing_stride=False, nblocks=2).double()
        with torch.no_grad():
            mod.twiddle.copy_(tw.reshape(mod.twiddle.shape))
        mod(torch.zeros(1, N, dtype=torch.float64))
        return mod, f"module = torch_butterfly.Butterfly from {src} (its C++ kernel butterfly_multiply_fw)"
    except Exception as e:  # an optional peer: fall back to its C++ kernel alone, then to its pure-torch path
        why = f"{type(e).__name__}: {str(e)[:120]}"
    try:  # the package's __init__ imports more than the kernel needs (scipy): load the built kernel itself
        import glob

        libs = sorted(glob.glob(f"{src}/torch_butterfly/_butterfly*.so"))
        if not libs:
            raise ImportError("no built _butterfly extension in the checkout")
        torch.ops.load_library(libs[0])
        op = torch.ops.torch_butterfly.butterfly_multiply_fw
        tw6c = tw.reshape(1, *tw.shape).contiguous()

        def run_cpp(x: object) -> object:
            assert isinstance(x, torch.Tensor)
            return op(tw6c, x.unsqueeze(1), False, None).squeeze(1)

        run_cpp(torch.zeros(1, N, dtype=torch.float64))
        return run_cpp, (f"module = torch_butterfly's C++ kernel torch.ops.torch_butterfly.butterfly_multiply_fw from {libs[0]} "
                         f"(the Butterfly module itself did not import: {why})")
    except Exception as e:
        why += f"; C++ kernel: {type(e).__name__}: {str(e)[:120]}"
    try:
        # multiply.py scripts wrappers of the C++ ops at import, so only its pure-torch function is compiled
        path = f"{src}/torch_butterfly/multiply.py"
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        body = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "butterfly_multiply_torch"]
        if not body:
            raise ImportError(f"{path} has no butterfly_multiply_torch")
        code = compile(ast.Module(body=body, type_ignores=[]), path, "exec")
        space: dict[str, object] = {"math": math, "torch": torch, "F": torch.nn.functional, "Optional": Optional, "Tuple": tuple}
        exec(code, space)
        peer = SimpleNamespace(butterfly_multiply_torch=space["butterfly_multiply_torch"])
        tw6 = tw.reshape(1, *tw.shape).contiguous()  # (nstacks=1, nblocks=2, log N, N/2, 2, 2)

        def run(x: object) -> object:
            assert isinstance(x, torch.Tensor)
            return peer.butterfly_multiply_torch(tw6, x.unsqueeze(1), increasing_stride=False).squeeze(1)

        run(torch.zeros(1, N, dtype=torch.float64))
    except Exception as e2:
        return None, f"torch_butterfly from BUTTERFLY_SRC={src} not used: {why}; multiply.py: {type(e2).__name__}: {e2}"
    return run, (f"module = torch_butterfly's pure-torch butterfly_multiply_torch from {src}: its C++ extension is not "
                 f"built or does not load here ({why})")


def batched_table(logs: range, batches: list[int]) -> None:
    """Time numpy and torch application of one random BB* on (B, N) float64 batches against the
    torch_butterfly algorithm (and its real module when BUTTERFLY_SRC is set); print the ratios."""
    import torch

    torch.set_num_threads(1)
    src = os.environ.get("BUTTERFLY_SRC")
    note = "" if src else "BUTTERFLY_SRC is not set: the torch_butterfly module itself is not timed, only its algorithm"
    from symverify import _native
    from symverify.kaleidoscope._native_butterfly import library

    print("\nbatched application, float64, one thread; ratios are ours / reference (≤ 1: ours is faster)")
    lib = library()
    print(f"compile_torch on the CPU: {'the native kernel ' + str(lib._name) if lib is not None else 'the torch forms (no native kernel: ' + str(_native.why_not('butterfly')) + ')'}")
    ratios: dict[str, list[float]] = {}
    header = False
    for k in logs:
        N = 1 << k
        bb = random_bbstar(N, seed=k)
        prog, mod = compile_numpy(bb), compile_torch(bb)
        forms = compile_torch(bb)  # the same module held to its torch forms (stages, blocks, dense): no native kernel
        forms._block_cache[("native", torch.float64)] = [None]
        tw = torch.from_numpy(reference_twiddle(bb))
        peer, why = peer_module(src, tw, N) if src else (None, "")
        note = why if peer is None and why else note
        if not header:
            peer_head = f" {'module':>10} {'np/mod':>7} {'torch/mod':>9} {'forms':>10} {'forms/mod':>9}" if peer is not None else ""
            print(f"{'N':>6} {'B':>4} {'reference':>11} {'numpy':>10} {'torch':>10} {'np/ref':>7} {'torch/ref':>9}{peer_head}  max rel. dev.")
            if peer is not None:
                print(f"  {why}")
            header = True
        for B in batches:
            xn = np.random.default_rng(B).standard_normal((B, N))
            xt = torch.from_numpy(xn)
            fns: dict[str, Callable[[], object]] = {
                "ref": lambda tw=tw, xt=xt: reference_multiply(tw, xt),
                "numpy": lambda prog=prog, xn=xn: prog.apply(xn),
                "torch": lambda mod=mod, xt=xt: mod(xt),
                "forms": lambda forms=forms, xt=xt: forms(xt),
            }
            if peer is not None:
                fns["module"] = lambda peer=peer, xt=xt: peer(xt)
            with torch.no_grad():
                want = reference_multiply(tw, xt).numpy()  # type: ignore[attr-defined]
                outs = [prog.apply(xn), mod(xt).numpy()] + ([peer(xt).numpy()] if peer is not None else [])  # type: ignore[attr-defined]
                dev = max(float(np.max(np.abs(o - want))) for o in outs) / max(1.0, float(np.max(np.abs(want))))
                t = interleaved_minima(fns)
            cols = {"np/ref": t["numpy"] / t["ref"], "torch/ref": t["torch"] / t["ref"]}
            if peer is not None:
                cols |= {"np/mod": t["numpy"] / t["module"], "torch/mod": t["torch"] / t["module"], "forms/mod": t["forms"] / t["module"]}
            for key, r in cols.items():
                ratios.setdefault(key, []).append(r)
            peer_cols = (f" {t['module'] * 1e3:>8.3f}ms {cols['np/mod']:>7.2f} {cols['torch/mod']:>9.2f} {t['forms'] * 1e3:>8.3f}ms "
                         f"{cols['forms/mod']:>9.2f}") if peer is not None else ""
            print(f"{N:>6} {B:>4} {t['ref'] * 1e3:>9.3f}ms {t['numpy'] * 1e3:>8.3f}ms {t['torch'] * 1e3:>8.3f}ms "
                  f"{cols['np/ref']:>7.2f} {cols['torch/ref']:>9.2f}{peer_cols}  {dev:.1e}", flush=True)
    worst = ", ".join(f"{key} {max(v):.2f}" for key, v in ratios.items())
    print(f"worst ratios (target ≤ 1.00 at every size): {worst}")
    if "torch/mod" in ratios:
        inv = [1 / r for r in ratios["torch/mod"]]
        print(f"torch_butterfly ÷ compile_torch (≥ 1: compile_torch faster): {min(inv):.2f}–{max(inv):.2f}")
        inv = [1 / r for r in ratios["forms/mod"]]
        print(f"torch_butterfly ÷ compile_torch's torch forms (without the native kernel): {min(inv):.2f}–{max(inv):.2f}")
    if note:
        print(f"note: {note}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-log", type=int, default=10)
    ap.add_argument("--max-log", type=int, default=16)
    ap.add_argument("--dense-max-log", type=int, default=13)
    ap.add_argument("--batched-min-log", type=int, default=8)
    ap.add_argument("--batched-max-log", type=int, default=14)
    ap.add_argument("--batches", default="1,16,256", help="batch sizes of the batched table, comma-separated")
    ap.add_argument("--batched-only", action="store_true", help="only the batched table against torch_butterfly")
    ap.add_argument("--quick", action="store_true", help="a small run: N = 2^6 … 2^10 (dense up to 2^9, batched B = 1, 16)")
    args = ap.parse_args(argv)
    if args.quick:
        args.min_log, args.max_log, args.dense_max_log = 6, 10, 9
        args.batched_min_log, args.batched_max_log, args.batches = 6, 10, "1,16"
    batches = [int(b) for b in args.batches.split(",")]
    if args.batched_only:
        batched_table(range(args.batched_min_log, args.batched_max_log + 1), batches)
        return
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
    batched_table(range(args.batched_min_log, args.batched_max_log + 1), batches)


if __name__ == "__main__":
    main()
