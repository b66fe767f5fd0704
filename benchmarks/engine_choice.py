"""Benchmark: does ``randomized``'s automatic engine choice pick the faster engine?

Run ``python benchmarks/engine_choice.py [--quick]``.

First it measures the constants of the cost model (:func:`symverify.provers.engine_cost.calibrate`)
and prints them next to the stated ones (:data:`~symverify.provers.engine_cost.COSTS`). Then, for
pairs of different shapes (circuit vs compiled model, compiled model vs its dense baseline, wide
synthetic models, large circuits), it runs ``verify(method="randomized")`` with each engine forced,
prints both times, the engine ``auto`` chose and the ratio chosen / fastest (1.00 when the choice
was the faster one). One thread (``torch.set_num_threads(1)``); nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import time

import torch

import symverify as sv
from symverify.compiler import compile
from symverify.executors.synthetic import impulse_model
from symverify.library import random_circuit
from symverify.provers.engine_cost import COSTS, calibrate


def pairs(quick: bool) -> list[tuple[str, object, object]]:
    out: list[tuple[str, object, object]] = []
    sizes = [(4, 2, 60, 8, 1), (16, 4, 384, 16, 1)] if quick else [(4, 2, 60, 8, 1), (16, 4, 384, 16, 1), (4, 2, 200, 40, 7), (64, 8, 3072, 16, 1)]
    for n, d, s, depth, seed in sizes:
        c = random_circuit(n, d, s, depth, seed=seed)
        k = compile(c, method="kaleidoscope")
        out.append((f"circuit {n}x{d} s={s} vs compiled (L={len(k.model.layers)})", c, k.model))
        if s <= 400:
            out.append((f"compiled {n}x{d} s={s} vs dense", k.model, compile(c, method="dense").model))
    for N, d, L in ([(1024, 32, 4)] if quick else [(1024, 32, 4), (4096, 64, 4), (256, 16, 64)]):
        out.append((f"impulse N'={N} d'={d} L={L}", impulse_model(N, d, L, seed=1), impulse_model(N, d, L, seed=1)))
    g = 20_000 if quick else 100_000
    out.append((f"circuits of {g} gates", random_circuit(8, 8, g, 50, seed=3), random_circuit(8, 8, g, 50, seed=3)))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    measured = calibrate()
    print("cost model constants (seconds per unit): stated vs measured now")
    for key, v in COSTS.items():
        print(f"  {key:<12} {v:9.2e} {measured[key]:9.2e}   measured/stated {measured[key] / v:5.2f}")
    print()
    print(f"{'pair':<48} {'python s':>9} {'torch s':>9} {'auto':>7} {'chosen/fastest':>14}")
    worst = 1.0
    for name, a, b in pairs(args.quick):
        times = {}
        for engine in ("python", "torch"):
            t = time.perf_counter()
            rep = sv.verify(a, b, method="randomized", backend=engine)
            times[engine] = time.perf_counter() - t
            assert rep.proved, (name, engine, rep)
        chosen = sv.verify(a, b, method="randomized").evidence["backend"]
        pick = "torch" if "torch" in chosen else "python"
        ratio = times[pick] / min(times.values())
        worst = max(worst, ratio)
        print(f"{name:<48} {times['python']:9.3f} {times['torch']:9.3f} {pick:>7} {ratio:14.2f}")
    print(f"\nworst chosen/fastest: {worst:.2f}")


if __name__ == "__main__":
    main()
