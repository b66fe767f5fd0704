"""Benchmark: the kaleidoscope compiler (Theorem H.21) and compositional vs global exact verification.

Run ``python benchmarks/compile_verify.py [--quick] [--large] [--huge] [--exact-timeout 60]``. For
seeded random circuits of depth Δ = 16 and growing cut width w (≈ 15 … 1046; ``--quick``: Δ = 8,
w ≲ 50; ``--large`` adds w ≈ 4200 at Δ = 32, ``--huge`` w ≈ 5300 at Δ = 32: minutes and GBs) it
prints the circuit measures, the model's signature, the compile time, the time of the
compositional proof (:func:`~symverify.kernel.provers.compositional.check_certificate`, every certificate
stage checked exactly) and the time of global exact verification (``verify(method="exact")``:
both sides expanded to canonical polynomials, in a memory-limited subprocess with a timeout),
and the ratio exact / compositional. Once global exact verification stops being feasible (its
verdict is ``unknown``: timeout or size guard) it is not attempted at larger sizes. A second
table splits the default ``verify(circuit, compiled)`` (method ``auto``) into its parts: the
structural bounds, the randomized pre-check (the Fiat–Shamir fingerprint of both sides, then
its trial; 0 since ``auto`` decides a certified pair by compositional first), the compositional
stage checks, and the rest. Prints ratios; asserts nothing about
time.
"""

from __future__ import annotations

import argparse
import time

from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.compiler.result import Compiled
from symverify.kernel.ir.analysis import stats
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.verification import verify
from symverify.library import random_circuit

FULL = [(4, 2, 40, 16), (4, 4, 80, 16), (8, 4, 160, 16), (16, 4, 384, 16), (32, 4, 768, 16), (32, 8, 1536, 16), (64, 8, 3072, 16)]
QUICK = [(2, 2, 16, 8), (4, 2, 40, 8), (4, 4, 80, 8)]
LARGE = [(128, 16, 12288, 32)]  # w ≈ 4200, Δ = 32
HUGE = [(128, 16, 16384, 32)]  # w ≈ 5300, Δ = 32


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (Δ = 8, w ≲ 50)")
    ap.add_argument("--exact-timeout", type=float, default=60.0, help="seconds for each global exact verification")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--large", action="store_true", help="add a row at w ≈ 4200, Δ = 32 (minutes)")
    ap.add_argument("--huge", action="store_true", help="add a row at w ≈ 5300, Δ = 32 (minutes, GBs)")
    args = ap.parse_args(argv)
    head = (f"{'n×d':>6} {'Δ':>3} {'w':>5} {'deg≤':>5} {'L':>5} {'N_k':>5} {'N′':>4} {'d′':>3} {'L/(Δlog2w)':>10} "
            f"{'compile':>8} {'compos.':>8} {'stages':>6} {'exact':>9} {'exact/compos.':>13}")
    print(head)
    exact_feasible = True
    footnotes: list[str] = []
    splits: list[str] = []
    rows = QUICK if args.quick else FULL + (LARGE if args.large else []) + (HUGE if args.huge else [])
    for n, d, size, depth in rows:
        c = random_circuit(n, d, size, depth, seed=args.seed, num_outputs=n * d // 2)
        st = stats(c)
        t = time.perf_counter()
        out = compile_kaleidoscope(c)
        t_compile = time.perf_counter() - t
        res = check_certificate(c, out.model, out.certificate)
        if not res.ok:
            raise SystemExit(f"compositional check failed on {c.name}: {res.failure}")
        t_comp = res.seconds
        exact_cell, ratio = "skipped", "-"
        if exact_feasible:
            rep = verify(c, out.model, method="exact", timeout=args.exact_timeout)
            t_exact = rep.timings.get("total", 0.0)
            if rep.proved:
                exact_cell, ratio = f"{t_exact:8.2f}s", f"{t_exact / t_comp:13.2f}"
            else:
                exact_feasible = False
                exact_cell = f"{rep.verdict.value}*"
                footnotes.append(f"* w = {st.width}: exact verification {rep.verdict.value}: " + "; ".join(rep.notes or ("no notes",)))
                ratio = f"> {t_exact / t_comp:.2f}" if rep.verdict.value == "unknown" else "-"
        r = out.resources
        print(f"{f'{n}x{d}':>6} {st.depth:>3} {st.width:>5} {st.degree_bound:>5} {r['layers']:>5} {r['N_k']:>5} "
              f"{r['inner_n']:>4} {r['inner_d']:>3} {r['L_over_delta_log2_w']:>10} {t_compile:7.2f}s {t_comp:7.2f}s "
              f"{res.stages_total:>6} {exact_cell:>9} {ratio:>13}", flush=True)
        splits.append(auto_split(f"{n}x{d} w={st.width}", c, out))
    for note in footnotes:
        print(note)
    print()
    print(f"verify(circuit, compiled), method auto (seconds; the first torch pre-check includes importing torch)\n{SPLIT_HEAD}")
    for line in splits:
        print(line)


SPLIT_HEAD = (f"{'circuit':>14} {'L':>5} {'total':>7} {'bounds':>7} {'fingerpr.':>9} {'trials':>7} {'stages':>7} "
              f"{'other':>7} verdict")


def auto_split(label: str, c: object, compiled: Compiled) -> str:
    """One row of the ``verify(c, compiled)`` split: bounds, pre-check fingerprint and trials
    (``method.precheck.*``), compositional stages (``method.stages``), the rest of the total."""
    rep = verify(c, compiled)
    tm = rep.timings
    fp = tm.get("method.precheck.fingerprint", 0.0)
    trials = tm.get("method.precheck.trials", 0.0) - fp
    parts = (tm.get("bounds", 0.0), fp, trials, tm.get("method.stages", 0.0))
    other = tm["total"] - sum(parts)
    cells = " ".join(f"{x:>{w}.3f}" for x, w in zip((*parts, other), (7, 9, 7, 7, 7)))
    return f"{label:>14} {len(compiled.model.layers):>5} {tm['total']:>7.3f} {cells} {rep.verdict.value}"


if __name__ == "__main__":
    main()
