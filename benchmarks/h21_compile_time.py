"""Benchmark: Theorem H.21's compiler, compile time and layers, this tree beside a baseline tree.

Run ``python benchmarks/h21_compile_time.py [--baseline DIR] [--plan auto|exact|greedy] [--repeat K] [--large]``.
Compiles a fixed set of circuits (the library's determinant and Walsh–Hadamard, sweep circuits
and unseen wirings of several widths and depths, ``d`` a power of two and not; ``--large`` adds
the two largest default rows of ``compile_verify.py``, cut width up to w ≈ 1046: seconds each) by
``method="kaleidoscope"`` and prints, per circuit, the layers and the best of ``K`` compile times
(the route memo, where the tree has one, cleared before each; run from the repository root). With ``--baseline DIR`` (the
repository root of another checkout, e.g. an earlier commit exported with ``git archive``) the
same circuits are compiled by that tree's ``symverify`` in a subprocess and both columns are
printed side by side with the time ratio, measured in this one run. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CASES = [
    ("determinant(3)", "lib.determinant(3)"),
    ("walsh_hadamard(64)", "lib.walsh_hadamard(64)"),
    ("sweep w=8 Δ=2", "layered_circuit(8, 2, 0)"),
    ("sweep w=16 Δ=4", "layered_circuit(16, 4, 0)"),
    ("hubs w=8 Δ=4", "lib.wired_circuit(8, 4, 'hubs', seed=0)"),
    ("random w=16 Δ=3", "lib.wired_circuit(16, 3, 'random', seed=1)"),
    ("permutation w=24 Δ=3", "lib.wired_circuit(24, 3, 'permutation', seed=3)"),
    ("hub w=32 Δ=2", "lib.wired_circuit(32, 2, 'hub', seed=0)"),
    ("random w=64 Δ=2", "lib.wired_circuit(64, 2, 'random', seed=0)"),
]
LARGE = [("random 32×4 size 768 Δ=16", "lib.random_circuit(32, 4, 768, 16, seed=1, num_outputs=64)"),
         ("random 64×8 size 3072 Δ=16", "lib.random_circuit(64, 8, 3072, 16, seed=1, num_outputs=256)")]


def measure(plan: str, repeat: int, cases: list[tuple[str, str]] = CASES) -> dict[str, tuple[int, float]]:
    """``{case: (layers, best seconds)}`` for this interpreter's ``symverify``."""
    import importlib.util

    from symverify import library as lib
    from symverify.compiler import compile

    spec = importlib.util.spec_from_file_location("thm_h21_sweep", os.path.join(os.getcwd(), "proofs", "thm_h21_sweep.py"))
    assert spec is not None and spec.loader is not None
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    scope = {"lib": lib, "layered_circuit": sweep.layered_circuit}
    out: dict[str, tuple[int, float]] = {}
    for name, expr in cases:
        c = eval(expr, scope)  # the fixed expressions above
        best, layers = float("inf"), 0
        for _ in range(repeat):
            for mod in list(sys.modules.values()):  # a fresh route memo per timing, where there is one
                clear = getattr(getattr(mod, "_routed", None), "cache_clear", None)
                if clear is not None and getattr(mod, "__name__", "").startswith("symverify."):
                    clear()
            t0 = time.perf_counter()
            layers = len(compile(c, plan=plan).model.layers)
            best = min(best, time.perf_counter() - t0)
        out[name] = (layers, best)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", help="repository root of the tree to compare with")
    ap.add_argument("--plan", default="auto", choices=("auto", "exact", "greedy"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--large", action="store_true", help="add two random circuits of depth 16, cut width up to ≈ 1046 (seconds per compile)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the baseline's own run
    args = ap.parse_args(argv)
    cases = CASES + (LARGE if args.large else [])
    here = measure(args.plan, args.repeat, cases)
    if args.json:
        print(json.dumps(here))
        return
    base: dict[str, tuple[int, float]] = {}
    if args.baseline:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline))
        res = subprocess.run([sys.executable, os.path.abspath(__file__), "--json", "--plan", args.plan, "--repeat", str(args.repeat)]
                             + (["--large"] if args.large else []),
                             capture_output=True, text=True, env=env, cwd=os.path.abspath(args.baseline), check=True)
        base = {k: tuple(v) for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items()}  # type: ignore[misc]
    print(f"plan={args.plan}, best of {args.repeat}")
    print(f"{'circuit':24} {'layers':>7} {'time s':>8}" + (f" {'base L':>7} {'base s':>8} {'time ratio':>10}" if base else ""))
    for name, _ in cases:
        layers, secs = here[name]
        row = f"{name:24} {layers:7d} {secs:8.2f}"
        if base:
            bl, bs = base[name]
            row += f" {bl:7d} {bs:8.2f} {secs / bs:10.2f}"
        print(row)


if __name__ == "__main__":
    main()
