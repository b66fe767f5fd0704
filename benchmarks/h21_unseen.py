"""Benchmark: Theorem H.21's compiler on circuits the proof sweeps do not contain.

Run ``python benchmarks/h21_unseen.py [--quick] [--widths 2,4,…] [--depths 1,2,…] [--seeds K] [--ds 3,5,6,7,12]``.
For every wiring of :func:`symverify.library.wired_circuit` (hubs of fan-out ``w``, two random
operands with unread nodes, a reversal, two random permutations, …), cut widths ``w`` and depths
``Δ``, it compiles by ``method="kaleidoscope"`` and prints, per wiring, the largest
``L/(Δ·log2 w)`` (the ratio Theorem H.21's ``O(Δ log w)`` is about), ``N_k/2^⌈log2 w⌉`` and
``N'/w``, with the circuit where each maximum occurs, then the same over everything. The
families with ``d`` not a power of two (``--ds``, default ``3, 5, 6, 7, 12``, none with ``--quick``: widths ``w = k·d``,
``k ∈ {1, 2, 4}``, every wiring including the hubs, each depth and seed) follow in a table per
``d`` and ``Δ = 1`` / ``Δ ≥ 2``: the largest ``L/(Δ·⌈log2 w⌉)`` with its circuit, ``N'/w`` and
``(L − 3)/((Δ + 1)(a + 2))`` (``a = ⌈log2 max(w, 2)⌉``). Every
model's resources are checked against the bounds the compiler states (``over_bound``); with
``--prove`` every model is also proved equal to its circuit by its certificate. Compile-only
by default: it measures sizes, not time, and asserts nothing.
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

from symverify.compiler import compile
from symverify.kernel.provers.compositional import check_certificate
from symverify.library import WIRINGS, wired_circuit


def measure(w: int, depth: int, wiring: str, seed: int, prove: bool, d: int | None = None) -> dict[str, object]:
    c = wired_circuit(w, depth, wiring, seed=seed, shuffle_outputs=seed % 2 == 1, d=d)
    out = compile(c, method="kaleidoscope")
    r = out.resources
    a = max(1, (max(r["width"], 2) - 1).bit_length())
    delta = max(r["depth"], 1)
    row = {"name": c.name, "w": w, "d": c.d, "depth": depth, "ratio": r["layers"] / (delta * math.log2(max(r["width"], 2))),
           "ceil_ratio": Fraction(r["layers"], delta * a), "two_term": Fraction(r["layers"] - 3, (r["depth"] + 1) * (a + 2)),
           "nk": Fraction(r["N_k"], 1 << a), "nprime": Fraction(r["inner_n"], r["width"]), "over": out.over_bound()}
    if prove:
        res = check_certificate(c, out.model, out.certificate)
        row["proved"] = res.ok
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="w ≤ 16, Δ ≤ 4, one seed")
    ap.add_argument("--widths", default="2,4,8,16,32,64,128,256")
    ap.add_argument("--depths", default="1,2,4,8")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--prove", action="store_true", help="also prove every model by its certificate")
    ap.add_argument("--ds", default=None, help="the d (not powers of two) of the families w = k·d (default 3,5,6,7,12; none "
                    "with --quick); '' for none")
    ap.add_argument("--ks", default="1,2,4", help="the multiples k of those families' widths w = k·d")
    args = ap.parse_args(argv)
    widths = [int(x) for x in args.widths.split(",")]
    depths = [int(x) for x in args.depths.split(",")]
    seeds = args.seeds
    if args.quick:
        widths, depths, seeds = [w for w in widths if w <= 16], [d for d in depths if d <= 4], 1
    print(f"wired circuits: widths {widths}, depths {depths}, {seeds} seed(s) per point (odd seeds shuffle the outputs)")
    print(f"{'wiring':12s} {'count':>5s} {'max L/(Δ·log2 w)':>17s}  {'at':28s} {'max N_k/2^a':>11s} {'max N′/w':>9s} {'over bound':>10s}")
    everything: list[dict[str, object]] = []
    for wiring in WIRINGS:
        rows = [measure(w, dep, wiring, s, args.prove) for w in widths for dep in depths for s in range(seeds)]
        everything += rows
        top = max(rows, key=lambda r: r["ratio"])  # type: ignore[arg-type, return-value]
        print(f"{wiring:12s} {len(rows):5d} {top['ratio']:17.2f}  {top['name']:28s} {float(max(r['nk'] for r in rows)):11.2f} "  # type: ignore[type-var]
              f"{float(max(r['nprime'] for r in rows)):9.2f} {sum(1 for r in rows if r['over']):10d}")  # type: ignore[type-var]
    top = max(everything, key=lambda r: r["ratio"])  # type: ignore[arg-type, return-value]
    print(f"{'all':12s} {len(everything):5d} {top['ratio']:17.2f}  {top['name']:28s}")
    for label, keep in (("Δ = 1", lambda r: r["depth"] == 1), ("Δ ≥ 2", lambda r: r["depth"] >= 2)):
        sub = [r for r in everything if keep(r)]
        if sub:
            top = max(sub, key=lambda r: r["ratio"])  # type: ignore[arg-type, return-value]
            print(f"  {label}: max L/(Δ·log2 w) = {top['ratio']:.2f} at {top['name']}, "
                  f"{sum(1 for r in sub if r['ratio'] > 8)} of {len(sub)} above 8")  # type: ignore[operator]
    for lo, hi in ((2, 8), (16, 64), (128, 1 << 30)):
        sub = [r for r in everything if lo <= r["w"] <= hi]  # type: ignore[operator]
        if sub:
            print(f"  w in [{lo}, {min(hi, max(widths))}]: max L/(Δ·log2 w) = {max(float(r['ratio']) for r in sub):.2f}")  # type: ignore[arg-type]
    ds = [int(x) for x in (args.ds if args.ds is not None else "" if args.quick else "3,5,6,7,12").split(",") if x]
    if ds:
        everything += d_families(ds, [int(x) for x in args.ks.split(",")], depths, seeds, args.prove)
    if args.prove:
        print(f"proved by certificate: {sum(1 for r in everything if r.get('proved'))}/{len(everything)}")


def d_families(ds: list[int], ks: list[int], depths: list[int], seeds: int, prove: bool) -> list[dict[str, object]]:
    """Every wiring at ``w = k·d`` for each ``d`` of ``ds``; prints the table per ``d`` and ``Δ``."""
    print(f"\nd not a power of two: w = k·d, k in {ks}, depths {depths}, every wiring, {seeds} seed(s)")
    print(f"{'d':>3s} {'Δ':>3s} {'count':>5s} {'max L/(Δ·⌈log2 w⌉)':>19s}  {'at':28s} {'max N′/w':>9s} "
          f"{'max (L−3)/((Δ+1)(a+2))':>23s} {'over bound':>10s}")
    out: list[dict[str, object]] = []
    for d in ds:
        rows = [measure(k * d, dep, wiring, s, prove, d) for k in ks for dep in depths for wiring in WIRINGS for s in range(seeds)]
        out += rows
        for label, keep in (("1", lambda r: r["depth"] == 1), ("≥2", lambda r: r["depth"] >= 2)):
            sub = [r for r in rows if keep(r)]
            if sub:
                top = max(sub, key=lambda r: r["ceil_ratio"])  # type: ignore[arg-type, return-value]
                print(f"{d:3d} {label:>3s} {len(sub):5d} {float(top['ceil_ratio']):19.2f}  {top['name']:28s} "  # type: ignore[arg-type]
                      f"{float(max(r['nprime'] for r in sub)):9.2f} {float(max(r['two_term'] for r in sub)):23.2f} "  # type: ignore[type-var]
                      f"{sum(1 for r in sub if r['over']):10d}")
    top = max(out, key=lambda r: r["ceil_ratio"])  # type: ignore[arg-type, return-value]
    print(f"{'all':>3s} {'':>3s} {len(out):5d} {float(top['ceil_ratio']):19.2f}  {top['name']:28s}")  # type: ignore[arg-type]
    return out


if __name__ == "__main__":
    main()
