"""Factor counts per linear stage: the compiler's route (``stage_factors``) against the selection
route (:mod:`symverify.kaleidoscope.selection`), both after ``simplify_factors``.

Circuits: the layered circuits of the Theorem H.21 grid sweep (``thm_h21_sweep.layered_circuit``)
and the random circuits of ``thm_h21_general``. Read-only use of the compiler's planning.

    PYTHONPATH=. python benchmarks/selection_factors.py [--per-stage] [--widths 8 16 32 64] [--depths 4 8]
"""

from __future__ import annotations

import argparse
import math
import time

from symverify.compiler.butterfly_to_baseconv import simplify_factors
from symverify.compiler.h21 import build_model, prepare, stage_factors
from symverify.kaleidoscope.selection import column_counts, is_selection, preferred_positions, selection_route
from symverify.kernel.ir.layered import LinearStage


def circuits(widths: list[int], depths: list[int], seeds: list[int]):
    from symverify.library import random_circuit
    from symverify.proofs.thm_h21_sweep import layered_circuit

    for w in widths:
        for D in depths:
            for s in seeds:
                yield f"layered w={w} D={D} seed={s}", layered_circuit(w, D, s), w, D
    for n, d, size, D, seed in [(2, 2, 30, 6, 1), (3, 2, 60, 8, 2), (4, 4, 150, 10, 3), (8, 4, 300, 12, 4), (16, 4, 400, 16, 5)]:
        yield f"random_circuit n={n} d={d} s={size} D={D}", random_circuit(n, d, size, D, 0.3, seed=seed, num_outputs=n * d // 2), n * d, D


def measure(c, per_stage: bool) -> dict[str, float]:
    pre = prepare(c)
    plans, mats, lay = pre.plans, pre.mats, pre.layout
    built = build_model(c, prepared=pre)  # today's layers, per stage
    recs = iter(r for r in built.stages if r["kind"] == "linear")
    tot = {"today": 0, "sel": 0, "best": 0, "pref": 0, "stages": 0, "mul": 0, "sel_N_max": 0,
           "L": len(built.model.layers), "L_best": float(len(built.model.layers)), "L_pref": float(len(built.model.layers))}
    for p, (ents, _) in zip(plans, mats):
        if p.is_mul:
            tot["mul"] += 1
            continue
        route, _, fs = stage_factors(ents, p.in_pos, p.out_pos, lay.size)
        today = len(simplify_factors(fs))
        if not is_selection(ents):
            raise SystemExit("a stage row has more than two entries")
        r = selection_route(ents, p.in_pos, p.out_pos)
        sel = r.count
        best = min(today, sel) if route != "sparse" else sel  # keep today's route for identity/diagonal/butterfly/permutation
        # the same stage with its inputs where preferred_positions puts them (what a free previous state could do)
        st = p.stage
        assert isinstance(st, LinearStage)
        pref_in = preferred_positions(column_counts(st.rows, len(st.inputs)))
        pents = {}
        for row_i, row in enumerate(st.rows):
            for slot, co in row:
                key = (p.out_pos[row_i], pref_in[slot])
                pents[key] = pents.get(key, 0) + co
        pents = {k: v for k, v in pents.items() if v != 0}
        pr = selection_route(pents, pref_in, p.out_pos)
        pref = min(best, pr.count)
        rec = next(recs)
        assert rec["factors"] == today
        # the stage's layers scaled by its factor ratio (a factor costs the same layers in either route)
        if today:
            tot["L_best"] -= rec["layers"] * (1 - best / today)
            tot["L_pref"] -= rec["layers"] * (1 - pref / today)
        for k, v in (("today", today), ("sel", sel), ("best", best), ("pref", pref)):
            tot[k] += v
        tot["stages"] += 1
        tot["sel_N_max"] = max(tot["sel_N_max"], r.need, pr.need)
        if per_stage:
            fan = max([sum(1 for (_, j) in ents if j == q) for q in {j for _, j in ents}] + [0])
            print(f"    level {st.level:3d} {route:11s} nnz={len(ents):4d} fanout={fan:2d} today={today:3d} "
                  f"selection={sel:3d} (N={r.need}, {r.strategy}, K={r.K}) preferred-inputs={pr.count:3d}")
    tot["N_k"] = lay.size
    return tot


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--widths", type=int, nargs="*", default=[8, 16, 32, 64, 128])
    ap.add_argument("--depths", type=int, nargs="*", default=[4, 8])
    ap.add_argument("--seeds", type=int, nargs="*", default=[0, 1])
    ap.add_argument("--per-stage", action="store_true")
    a = ap.parse_args()
    grand = {"today": 0, "sel": 0, "best": 0, "pref": 0}
    print(f"{'circuit':42s} {'N_k':>5s} {'selN':>5s} {'stages':>6s} {'today':>6s} {'select':>6s} {'best':>6s} {'pref':>6s} "
          f"{'ratio':>6s}  L/(Δ·⌈log2 w⌉): today (measured) → best (estimated)")
    for name, c, w, D in circuits(a.widths, a.depths, a.seeds):
        t0 = time.perf_counter()
        if a.per_stage:
            print(name)
        t = measure(c, a.per_stage)
        for k in grand:
            grand[k] += t[k]
        lw = max(1, math.ceil(math.log2(max(w, 2))))
        scale = D * lw
        print(f"{name:42s} {t['N_k']:5d} {t['sel_N_max']:5d} {t['stages']:6d} {t['today']:6d} {t['sel']:6d} {t['best']:6d} "
              f"{t['pref']:6d} {t['best'] / max(t['today'], 1):6.2f}  {t['L'] / scale:5.1f} → {t['L_best'] / scale:5.1f} (preferred inputs {t['L_pref'] / scale:5.1f})"
              f"  ({time.perf_counter() - t0:.1f}s)")
    print("estimate: each linear stage's layers scaled by its factor ratio")
    print(f"TOTAL factors: today {grand['today']}, selection {grand['sel']}, best-of {grand['best']} "
          f"(ratio {grand['best'] / grand['today']:.3f}), with preferred input positions {grand['pref']} "
          f"(ratio {grand['pref'] / grand['today']:.3f})")


if __name__ == "__main__":
    main()
