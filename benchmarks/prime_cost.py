"""Benchmark: the python engine's cost model of :func:`symverify.kernel.provers.randomized.plan_primes`.

Run ``python benchmarks/prime_cost.py [--gates G]``. On one random circuit of ``G`` gates (default
100 000, ``benchmarks/verify_methods.py``'s ``big_circuit``) it times one straight-line pass
(:func:`symverify.kernel.semantics.straightline.eval_mod`) mod primes of 61 to 512 bits and the
drawing of one prime of each size (:func:`~symverify.kernel.provers.randomized.random_prime`, the
median of 15 draws, without and with a deadline: above ``3.3·10^24`` the primality proof then runs
in a child process). It prints each pass relative to the pass mod ``2^61 − 1`` and each draw in
units of one 61-bit gate, next to the constants ``PASS_COST`` and ``PRIME_COST`` the plan uses,
all measured in this one run; nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_methods import best, big_circuit

from symverify.kernel.primes import is_prime
from symverify.kernel.provers import randomized as rz
from symverify.kernel.provers.bounds import Bounds
from symverify.kernel.provers.challenge import Transcript
from symverify.kernel.provers.options import Options
from symverify.kernel.semantics.rings import ModRing
from symverify.kernel.semantics.straightline import eval_mod, program

SIZES = (61, 96, 128, 160, 192, 256, 384, 512)


def _prime(bits: int) -> int:
    if bits == 61:
        return (1 << 61) - 1
    q = (1 << bits) + 1
    while not is_prime(q):
        q += 2
    return q


def _draws(bits: int, opts: Options | None, count: int = 15) -> float:
    tr = Transcript("randomized", 0, b"lhs", b"rhs")
    times = []
    for t in range(count):
        s = tr.stream("sz", "python", t, "prime", bits)
        start = time.perf_counter()
        rz.random_prime(s, 2, 1 << bits, opts)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gates", type=int, default=100_000)
    args = ap.parse_args()
    c = big_circuit(4, 4, args.gates, 200, seed=1)
    prog, rng = program(c), random.Random(0)
    _draws(96, None, 2)  # imports python-flint once
    passes: dict[int, float] = {}
    for bits in SIZES:
        p = _prime(bits)
        ring = ModRing(p, {})
        co = [ring.coerce(x) for x in prog.scalars]
        xs = [rng.randrange(p) for _ in range(c.num_inputs)]
        passes[bits] = best(lambda xs=xs, p=p, co=co: eval_mod(prog, xs, p, co), repeat=5)
    gate = passes[61] / args.gates
    limited = Options.from_call("randomized", timeout=3600)
    print(f"one pass over {args.gates} gates mod 2^61-1: {passes[61] * 1e3:.1f} ms ({gate * 1e6:.3f} µs a gate)")
    print(f"{'bits':>5} {'pass ÷ 61-bit':>14} {'model':>6} {'draw (gates)':>13} {'model':>9} {'with deadline (gates)':>22}")
    for bits in SIZES:
        plan = rz.trial_plan(Bounds(1, 1, False, 0, 0, 1, 1), bits)
        model_draw = rz.trial_cost(plan, 0)
        model_pass = rz.trial_cost(plan, 1) - model_draw
        draw, child = _draws(bits, None), _draws(bits, limited, 5)
        print(f"{bits:>5} {passes[bits] / passes[61]:14.2f} {model_pass:6.2f} "
              f"{draw / gate:13.0f} {model_draw:9.0f} {child / gate:22.0f}")


if __name__ == "__main__":
    main()
