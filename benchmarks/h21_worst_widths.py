"""Benchmark: Theorem H.21's compiler at the worst widths: ``d`` not a power of two, ``Δ = 1``.

Run ``python benchmarks/h21_worst_widths.py [--ds 3,5,6,7,12] [--ks 1,2,4] [--depths 1,2,4] [--no-prove]``.
For every ``d``, width ``w = k·d`` (``n = k``), depth and wiring of
:func:`symverify.library.wired_circuit` (seed 0), and the circuit ``n = 20`` of alternating gates
``mul(j, (7j+3) mod nd)`` / ``j + 2·((7j+3) mod nd)`` (one level) at each ``d``, it compiles by
``method="kaleidoscope"``, proves the model by its certificate and prints, per ``d`` and for
``Δ = 1`` and ``Δ ≥ 2`` apart, the largest ``L/(Δ·⌈log2 w⌉)`` with the circuit where it occurs,
the largest ``N'/w`` and ``(L − 3)/((Δ + 1)(a + 2))`` (``a = ⌈log2 max(w, 2)⌉``), and how many
models exceed a stated bound or are not proved (``--no-prove``: compile only). Asserts nothing.
"""

from __future__ import annotations

import argparse
from fractions import Fraction

from symverify.compiler import compile
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.provers.compositional import check_certificate
from symverify.library import WIRINGS, wired_circuit


def alternating(n: int, d: int) -> Circuit:
    """One level of ``n·d`` gates: ``mul(j, (7j+3) mod nd)`` for even ``j``, ``j + 2·((7j+3) mod nd)`` for odd."""
    w = n * d
    gates = tuple(Gate(Op.MUL, (j, (7 * j + 3) % w), ()) if j % 2 == 0 else Gate(Op.LIN, (j, (7 * j + 3) % w), (1, 2))
                  for j in range(w))
    return Circuit(n, d, gates, tuple(range(w, 2 * w)), f"alternating_n{n}_d{d}")


def row(c: Circuit, prove: bool = True) -> dict[str, object]:
    out = compile(c, method="kaleidoscope")
    r = out.resources
    a = max(1, (max(r["width"], 2) - 1).bit_length())
    ok = check_certificate(c, out.model, out.certificate).ok if prove else True
    return {"name": c.name, "d": c.d, "depth": r["depth"], "ratio": r["layers"] / (max(r["depth"], 1) * a),
            "nprime": Fraction(r["inner_n"], r["width"]), "two_term": Fraction(r["layers"] - 3, (r["depth"] + 1) * (a + 2)),
            "over": bool(out.over_bound()), "proved": ok}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ds", default="3,5,6,7,12")
    ap.add_argument("--ks", default="1,2,4")
    ap.add_argument("--depths", default="1,2,4")
    ap.add_argument("--no-prove", action="store_true", help="compile only (the unproved column then counts nothing)")
    args = ap.parse_args(argv)
    prove = not args.no_prove
    ds, ks, depths = ([int(x) for x in v.split(",")] for v in (args.ds, args.ks, args.depths))
    print(f"{'d':>3s} {'Δ':>4s} {'count':>5s} {'max L/(Δ·⌈log2 w⌉)':>19s}  {'at':30s} {'max N′/w':>9s} "
          f"{'max (L−3)/((Δ+1)(a+2))':>23s} {'over':>4s} {'unproved':>8s}")
    for d in ds:
        rows = [row(wired_circuit(k * d, dep, wiring, d=d), prove) for k in ks for dep in depths for wiring in WIRINGS]
        rows.append(row(alternating(20, d), prove))
        for label, keep in (("1", lambda r: r["depth"] == 1), ("≥2", lambda r: r["depth"] >= 2)):
            sub = [r for r in rows if keep(r)]
            if sub:
                top = max(sub, key=lambda r: r["ratio"])  # type: ignore[arg-type, return-value]
                print(f"{d:3d} {label:>4s} {len(sub):5d} {top['ratio']:19.2f}  {top['name']:30s} "
                      f"{float(max(r['nprime'] for r in sub)):9.2f} {float(max(r['two_term'] for r in sub)):23.2f} "  # type: ignore[type-var]
                      f"{sum(1 for r in sub if r['over']):4d} {sum(1 for r in sub if not r['proved']):8d}")


if __name__ == "__main__":
    main()
