"""Benchmark: exact (flint), exact (sympy) and randomized verification on growing BaseConv stacks.

Run ``python benchmarks/verify_methods.py [--quick] [--sympy-limit SECONDS]``. For dense random
BaseConv stacks of growing size ``N×d`` and depth ``L`` (small nonzero integer weights, causal),
each method decides the stack against itself (``proved``) and against a copy with one weight
moved (``refuted``). It prints seconds per method, the ratios sympy/flint and flint/randomized,
the monomials compared and where the exact expansion ran. sympy is skipped once flint alone takes
longer than ``--sympy-limit`` (sympy's ``ring()`` is about 12× slower than flint). The verdicts of
all methods must agree (a disagreement is printed loudly); nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import replace

from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.grid import Grid
from symverify.verification import Report, verify


def dense(n: int, d: int, layers: int, seed: int = 0) -> Model:
    rng = random.Random(seed)

    def g(r: int, c: int) -> Grid:
        return Grid.from_rows([[rng.choice([1, -1, 2, 3, -2]) for _ in range(c)] for _ in range(r)])

    return Model(n, d, n, d, tuple(Layer(g(d, d), g(n, d), g(n, d), g(n, d), Mode.CAUSAL) for _ in range(layers)))


def mutated(m: Model) -> Model:
    """The last layer's ``b1[0][0]`` moved by 1 (the read-out entry (0, 0) changes)."""
    last = m.layers[-1]
    b1 = last.b1.paint_cells([(0, 0, last.b1.get(0, 0) + 1)])
    return Model(m.n, m.d, m.inner_n, m.inner_d, (*m.layers[:-1], replace(last, b1=b1)))


def timed(lhs: Model, rhs: Model, method: str) -> tuple[Report, float]:
    t = time.perf_counter()
    r = verify(lhs, rhs, method=method)
    return r, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--sympy-limit", type=float, default=0.5, help="skip sympy when flint takes longer (s)")
    args = ap.parse_args()
    sizes = [(4, 2, 1), (8, 2, 1), (16, 4, 1), (4, 2, 2), (8, 2, 2)]
    if not args.quick:
        sizes += [(32, 8, 1), (8, 4, 2), (16, 4, 2), (8, 2, 3)]
    for warm in ("exact", "exact-sympy", "randomized"):  # import costs out of the first row
        verify(dense(2, 1, 1), dense(2, 1, 1), method=warm)
    head = f"{'N×d':>6} {'L':>2} {'pair':>8} {'flint s':>9} {'sympy s':>9} {'random s':>9} {'sympy/flint':>11} {'flint/rand':>10} {'monomials':>10} {'ran':>10} {'k':>2}"
    print(head)
    print("-" * len(head))
    for n, d, L in sizes:
        m = dense(n, d, L, seed=n * 100 + d * 10 + L)
        for label, other in (("self", m), ("mutated", mutated(m))):
            fl, t_fl = timed(m, other, "exact")
            sy, t_sy = (None, float("nan"))
            if t_fl <= args.sympy_limit:
                sy, t_sy = timed(m, other, "exact-sympy")
            rz, t_rz = timed(m, other, "randomized")
            verdicts = {fl.verdict, rz.verdict} | ({sy.verdict} if sy else set())
            flag = "" if len(verdicts) == 1 else f"   <-- METHODS DISAGREE: {sorted(v.value for v in verdicts)}"
            ratio_sy = f"{t_sy / t_fl:11.1f}" if sy else f"{'-':>11}"
            print(f"{n:>3}×{d:<2} {L:>2} {label:>8} {t_fl:9.4f} {t_sy:9.4f} {t_rz:9.4f} {ratio_sy} {t_fl / t_rz:10.1f} "
                  f"{fl.evidence.get('monomials_compared', '-')!s:>10} {fl.evidence.get('ran', '-')!s:>10} "
                  f"{rz.evidence.get('k', '-')!s:>2} {fl.verdict.value}{flag}")


if __name__ == "__main__":
    main()
