"""Benchmark: the exact method's overhead over a bare python-flint loop on the same models.

Run ``python benchmarks/exact_overhead.py [--quick] [--repeat R]``.

For dense random causal BaseConv stacks (small nonzero integer weights, and a rational variant
with weights ``k/2``, ``k/3``) it times

* ``verify(a, b, method="exact", isolate=False)`` with ``a`` and ``b`` equal but distinct objects
  (both sides expanded in this process: structural bounds, the guarded ring, canonical
  comparison), and
* the reference: the same two expansions as a bare loop over ``fmpq_mpoly`` (weights converted
  once, each layer ``y[i,k] = (Σ_j u[i,j]·W[j,k] + b1[i,k]) · (Σ_{t≤i} h[t,k]·u[i−t,k] + b2[i,k])``
  written out with zeros skipped, then ``==`` per entry), measured in the same run,

and prints the ratio toolkit / bare loop (the overhead) with the best of ``R`` interleaved repeats each, and
the share of the toolkit's time spent outside the expansion (bounds, dispatch, comparison).
Nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import random
from fractions import Fraction
from typing import Any

from executor import measure  # benchmarks/executor.py: interleaved minimum timing

from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.verification import verify

FULL = [(4, 2, 1), (8, 2, 1), (16, 4, 1), (32, 8, 1), (4, 2, 2), (8, 2, 2), (8, 4, 2), (4, 4, 3)]
QUICK = [(4, 2, 1), (8, 2, 1), (4, 2, 2)]


def dense(n: int, d: int, layers: int, seed: int, rational: bool) -> Model:
    rng = random.Random(seed)
    pool: list[int | Fraction] = [1, -1, 2, 3, -2]
    if rational:
        pool += [Fraction(1, 2), Fraction(-2, 3)]

    def g(r: int, c: int) -> Grid:
        return Grid.from_rows([[rng.choice(pool) for _ in range(c)] for _ in range(r)])

    return Model(n, d, n, d, tuple(Layer(g(d, d), g(n, d), g(n, d), g(n, d), Mode.CAUSAL) for _ in range(layers)))


def bare_expand(m: Model, flint: Any) -> list[list[Any]]:
    """The model's output polynomials by a plain loop over ``fmpq_mpoly`` (the reference)."""
    n, d = m.n, m.d
    ctx = flint.fmpq_mpoly_ctx.get(tuple(f"x{i}" for i in range(n * d)), "deglex")
    gens = ctx.gens()
    zero = ctx.from_dict({})

    def num(x: Any) -> Any:
        x = Fraction(x)
        return flint.fmpq(x.numerator, x.denominator)

    u = [[gens[i * d + j] for j in range(d)] for i in range(n)]
    for layer in m.layers:
        W = [[num(layer.W.get(j, k)) for k in range(d)] for j in range(d)]
        h = [[num(layer.h.get(t, k)) for k in range(d)] for t in range(n)]
        b1 = [[num(layer.b1.get(i, k)) for k in range(d)] for i in range(n)]
        b2 = [[num(layer.b2.get(i, k)) for k in range(d)] for i in range(n)]
        out = []
        for i in range(n):
            row = []
            for k in range(d):
                proj = zero + b1[i][k]
                for j in range(d):
                    if W[j][k]:
                        proj += u[i][j] * W[j][k]
                conv = zero + b2[i][k]
                for t in range(i + 1):
                    if h[t][k]:
                        conv += u[i - t][k] * h[t][k]
                row.append(proj * conv)
            out.append(row)
        u = out
    return u


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small stacks only")
    ap.add_argument("--repeat", type=int, default=3, help="repeats per measurement (best is kept)")
    args = ap.parse_args(argv)
    import flint

    print(f"{'N×d':>6} {'L':>2} {'weights':>8} {'bare s':>9} {'exact s':>9} {'expand s':>9} {'overhead':>8} {'outside':>8}")
    worst = 0.0
    for n, d, layers in QUICK if args.quick else FULL:
        for rational in (False, True):
            a, b = dense(n, d, layers, 1, rational), dense(n, d, layers, 1, rational)

            def ref(a: Model = a, b: Model = b) -> None:
                pa, pb = bare_expand(a, flint), bare_expand(b, flint)
                assert all(x == y for ra, rb in zip(pa, pb) for x, y in zip(ra, rb))

            reports: list[Any] = []

            def tool(a: Model = a, b: Model = b, reports: list[Any] = reports) -> None:
                reports.append(verify(a, b, method="exact", isolate=False))

            times = measure({"ref": ref, "tool": tool}, args.repeat, wall=True, budget=60.0)
            t_ref, t_tool = times["ref"], times["tool"]
            rep = reports[-1]
            if not rep.proved:
                print(f"{n}×{d} L={layers}: {rep.verdict.value}, expected proved: skipped")
                continue
            expand = rep.timings.get("method.expand", rep.timings.get("expand", float("nan")))
            ratio = t_tool / t_ref
            worst = max(worst, ratio)
            outside = 1 - expand / t_tool if expand == expand else float("nan")
            kind = "Q" if rational else "Z"
            print(f"{n:>3}×{d:<2} {layers:>2} {kind:>8} {t_ref:9.4f} {t_tool:9.4f} {expand:9.4f} {ratio:7.2f}× {outside:7.0%}")
    print(f"largest overhead of verify(method='exact') over the bare flint loop: {worst:.2f}× (target ≤ 1.5×)")


if __name__ == "__main__":
    main()
