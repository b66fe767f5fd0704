"""Benchmark: the cost of refusing unknown ``params`` names in :func:`~symverify.executors.execute`.

Run ``python benchmarks/params_check.py [--reps R]``.

On a small model with one symbolic weight ``a`` (N = 8, d = 2, two causal layers) it times, in
one run, ``execute(m, x, params={"a": 3})`` at batch B = 1 on the torch, modular and exact
backends, as shipped (the names checked against the model's cached weight names,
:func:`~symverify.kernel.ir.analysis.check_known`) and with that check replaced by a no-op (the
behaviour before it existed), in alternating blocks (swapping the function on every call would
defeat the interpreter's caches and time that instead); and the check alone. It prints median
times, the ratio checked / unchecked and the check's share of a call. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics

import torch
from executor import measure  # benchmarks/executor.py: interleaved timing

import symverify.executors as ex
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym


def model() -> Model:
    n, d = 8, 2

    def g(r: int, c: int, k: int) -> Grid:
        return Grid.from_rows([[(i + 2 * j + k) % 3 - 1 for j in range(c)] for i in range(r)])

    w = g(d, d, 0).to_rows()
    w[0][0] = sym("a")
    first = Layer(Grid.from_rows(w), g(n, d, 1), g(n, d, 2), g(n, d, 3), Mode.CAUSAL)
    return Model(n, d, n, d, (first, Layer(g(d, d, 4), g(n, d, 5), g(n, d, 6), g(n, d, 7), Mode.CAUSAL)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=500, help="calls per backend per block")
    ap.add_argument("--blocks", type=int, default=3, help="blocks per variant, alternating")
    args = ap.parse_args()
    m, params = model(), {"a": 3}
    xf = torch.ones((1, m.n, m.d), dtype=torch.float64)
    xm = torch.ones((1, m.n, m.d), dtype=torch.int64)
    xe = [[[1] * m.d for _ in range(m.n)]]
    checked = ex.check_known
    runs = {"torch": lambda: ex.execute(m, xf, backend="torch", params=params),
            "modular": lambda: ex.execute(m, xm, backend="modular", params=params),
            "exact": lambda: ex.execute(m, xe, params=params)}
    samples: dict[str, list[float]] = {}
    for block in range(2 * args.blocks):
        on = block % 2 == 0
        ex.check_known = checked if on else (lambda *a, **k: None)
        try:
            t = measure(runs, args.reps, wall=True, budget=20.0, stat=statistics.median)
        finally:
            ex.check_known = checked
        for name, v in t.items():
            samples.setdefault(f"{name} {'checked' if on else 'unchecked'}", []).append(v)
    alone = measure({"check": lambda: checked(m, params)}, args.reps, wall=True, budget=5.0, stat=statistics.median)["check"]
    print(f"{'backend':8} {'checked µs':>11} {'unchecked µs':>13} {'ratio':>6} {'check share':>12}")
    for name in runs:
        a, b = statistics.median(samples[f"{name} checked"]), statistics.median(samples[f"{name} unchecked"])
        print(f"{name:8} {a * 1e6:11.1f} {b * 1e6:13.1f} {a / b:6.3f} {alone / a:11.2%}")
    print(f"check_known alone: {alone * 1e6:.2f} µs")

if __name__ == "__main__":
    main()
