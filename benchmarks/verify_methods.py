"""Benchmark: exact (flint), exact (sympy) and randomized verification on growing BaseConv stacks.

Run ``python benchmarks/verify_methods.py [--quick] [--sympy-limit SECONDS] [--gates G]``.

First, the randomized method's engines on two equal random circuits of ``G`` gates each (default
100 000; ``--quick``: 20 000): gate-evaluations per second of a bare Python loop mod ``2^61 − 1``
(``x[a]·x[b] mod p`` over the same gate list: the reference, measured in the same run), of the
straight-line evaluator (:mod:`symverify.kernel.semantics.straightline`, one point) and of the generic
ring interpreter it replaced; the structural bounds pass (straight-line vs the ring interpreter)
and the Fiat–Shamir fingerprint (flat vs field by field); then ``verify(method="randomized",
backend="python")`` with its time split (bounds / fingerprint / trials), each compared with the
cost of one trial; ``verify(method="randomized")`` on fresh pairs of equal circuits of ``G`` gates
(nothing cached) and its ratio to the bare loop, both in CPU time, best of 3 pairs (the row
``randomized verify ÷ bare mod-p loop``; ``--ratio`` prints that row alone, ``--pairs`` sets the
pairs); and the bounds pass on one compiled model against its circuit, in trials of
that pair (``--quick``: ``random_circuit(16, 4, 384, 16)``, else ``(64, 8, 3072, 16)``).

Then, for dense random
BaseConv stacks of growing size ``N×d`` and depth ``L`` (small nonzero integer weights, causal),
each method decides the stack against itself (``proved``) and against a copy with one weight
moved (``refuted``). It prints seconds per method, the ratios sympy/flint and flint/randomized,
the monomials compared and where the exact expansion ran. sympy is skipped once flint alone takes
longer than ``--sympy-limit`` (sympy's ``ring()`` is about 12× slower than flint). The verdicts of
all methods must agree (a disagreement is printed loudly); nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

import numpy as np

from symverify.compiler import compile as compile_circuit
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers import fingerprint
from symverify.kernel.provers.bounds import (
    _CIRCUIT_BOUNDS,
    _MODEL_BOUNDS,
    _MODEL_RECTS,
    BoundRing,
    common_denominator,
    layers_peak,
    structure_bounds,
)
from symverify.kernel.provers.sides import as_side
from symverify.kernel.semantics.evaluate import embed, eval_circuit_nodes
from symverify.kernel.semantics.rings import ModRing
from symverify.kernel.semantics.straightline import eval_mod, eval_mod_lanes, program, schedule
from symverify.kernel.verification import Report, verify
from symverify.library import random_circuit


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


def big_circuit(n: int, d: int, size: int, depth: int, seed: int = 0) -> Circuit:
    """A seeded random circuit of ``size`` gates in ``depth`` levels (30 % products, small rational
    coefficients), built in linear time."""
    rng = random.Random(seed)
    nd = n * d
    gates: list[Gate] = []
    prev, nodes = list(range(nd)), nd
    coeffs = [1, -1, 2, 3, Fraction(1, 2), -2]
    for _ in range(depth):
        cur: list[int] = []
        for _ in range(size // depth):
            a, b = rng.choice(prev), rng.randrange(nodes + len(cur))
            if rng.random() < 0.3:
                gates.append(Gate(Op.MUL, (a, b), ()))
            else:
                gates.append(Gate(Op.LIN, (a, b), (rng.choice(coeffs), rng.choice(coeffs))))
            cur.append(nd + len(gates) - 1)
        nodes += len(cur)
        prev = cur
    return Circuit(n, d, tuple(gates), tuple(prev[:nd]), f"big_{size}")


def _rate(gates: int, seconds: float) -> str:
    return f"{gates / seconds:12.3e}"


def engines(size: int) -> None:
    """The circuit rows (see the module docstring)."""
    c, c2 = big_circuit(4, 4, size, 200, seed=1), big_circuit(4, 4, size, 200, seed=1)
    gates = len(c.gates)
    p = (1 << 61) - 1
    rng = random.Random(0)
    x0 = [rng.randrange(p) for _ in range(c.num_inputs)]

    def bare() -> None:  # the reference: the cheapest loop over the same gate list
        v = list(x0)
        ap = v.append
        for a, b in pairs:
            ap(v[a] * v[b] % p)

    pairs = [g.args if len(g.args) == 2 else (0, 0) for g in c.gates]
    t_bare = best(bare)
    prog = program(c)
    ring = ModRing(p)
    coeffs = [ring.coerce(x) for x in prog.scalars]
    t_line = best(lambda: eval_mod(prog, x0, p, coeffs))
    t_ring = best(lambda: eval_circuit_nodes(c, x0, ring), repeat=1)
    lanes = 256
    p31 = (1 << 31) - 1
    xs = np.array([[rng.randrange(p31) for _ in range(lanes)] for _ in range(c.num_inputs)], dtype=np.int64)
    cs = np.array([[ModRing(p31).coerce(x)] * lanes for x in prog.scalars], dtype=np.int64).reshape(len(prog.scalars), lanes)
    primes = np.full(lanes, p31, dtype=np.int64)
    schedule(prog)  # built once per circuit, like the program
    t_lanes = best(lambda: eval_mod_lanes(prog, xs, primes, cs))
    print(f"gate-evaluations/s on {gates} gates, one point mod 2^61-1 (higher is better)")
    print(f"  bare Python loop (reference)  {_rate(gates, t_bare)}")
    print(f"  straight-line evaluator       {_rate(gates, t_line)}   {t_bare / t_line:5.2f} of the reference")
    print(f"  generic ring interpreter      {_rate(gates, t_ring)}   (what the python engine used before)")
    print(f"  batched, {lanes} lanes mod 2^31-1 {_rate(gates * lanes, t_lanes)}   (numpy int64, level by level)")
    a, b = as_side(c), as_side(c2)
    q = common_denominator(a, b)
    _CIRCUIT_BOUNDS.clear()
    rep = verify(c, c2, method="randomized", backend="python")
    _CIRCUIT_BOUNDS.clear()
    t_bounds = best(lambda: structure_bounds(a, b), repeat=1)  # uncached
    old_ring = BoundRing(a.num_inputs + len(a.params() | b.params()), q)
    t_bounds_old = 2 * best(lambda: eval_circuit_nodes(c, [old_ring.var] * c.num_inputs, old_ring), repeat=1)
    t_fp = best(lambda: (fingerprint._RECENT.clear(), fingerprint.fingerprint(a.obj), fingerprint.fingerprint(b.obj)),
                repeat=1)  # uncached
    tm, k = rep.timings, int(rep.evidence["k"])
    trial = (tm["method.trials"] - tm.get("method.fingerprint", 0.0)) / k
    print(f"verify(randomized, python) on both circuits: {rep.verdict.value}, k = {k} trials, p: {rep.evidence['p']}")
    print(f"  total {tm['total']:.3f} s = bounds {tm.get('bounds', 0):.3f} + fingerprint {tm.get('method.fingerprint', 0):.3f} "
          f"+ trials {tm['method.trials'] - tm.get('method.fingerprint', 0):.3f} (one trial {trial:.3f} s)")
    print(f"  bounds pass       {t_bounds:8.3f} s = {t_bounds / trial:5.2f} trials   (ring interpreter: {t_bounds_old:.3f} s)")
    print(f"  fingerprint       {t_fp:8.3f} s = {t_fp / trial:5.2f} trials")
    ratio(size)
    print()


def _bare_loop(x0: list[int], pairs: list[tuple[int, ...]], p: int) -> None:
    """The reference: the cheapest loop over a gate list, ``x[a]·x[b] mod p`` per gate."""
    v = list(x0)
    ap = v.append
    for a, b in pairs:
        ap(v[a] * v[b] % p)


def ratio(size: int, pairs: int = 3) -> float:
    """The row ``randomized verify ÷ bare mod-p loop`` alone, in CPU time (``time.process_time``): for
    each of ``pairs`` fresh pairs of equal ``size``-gate circuits (``big_circuit(4, 4, size, 200)``,
    nothing cached), the bare loop over the first circuit's gates mod ``2^61 − 1`` (best of 3) and
    ``verify(method="randomized")`` of the pair, once; prints and returns the best verify time over the
    best bare time. One smaller pair is verified first, so imports are not counted."""
    warm = big_circuit(4, 4, max(size // 10, 2000), 200, seed=99), big_circuit(4, 4, max(size // 10, 2000), 200, seed=99)
    verify(*warm, method="randomized")
    p = (1 << 61) - 1
    t_bare, t_verify = math.inf, math.inf
    rep = None
    for s in range(20, 20 + pairs):
        c1, c2 = big_circuit(4, 4, size, 200, seed=s), big_circuit(4, 4, size, 200, seed=s)
        rng = random.Random(s)
        x0 = [rng.randrange(p) for _ in range(c1.num_inputs)]
        pairs_ab = [g.args if len(g.args) == 2 else (0, 0) for g in c1.gates]
        t_bare = min(t_bare, best(lambda x=x0, ab=pairs_ab: _bare_loop(x, ab, p), clock=time.process_time))
        t = time.process_time()
        rep = verify(c1, c2, method="randomized")
        t_verify = min(t_verify, time.process_time() - t)
    assert rep is not None
    print(f"randomized verify ÷ bare mod-p loop, {size} gates, CPU time, best of {pairs} fresh pairs: "
          f"{t_verify / t_bare:6.2f}   (verify {t_verify:.3f} s, {rep.verdict.value}, {rep.evidence['backend']}, "
          f"k = {rep.evidence['k']}, prime bits {rep.evidence.get('prime_bits')}; bare loop {t_bare:.4f} s)")
    return t_verify / t_bare


def model_bounds(args: tuple[int, int, int, int]) -> None:
    """The bounds pass on one compiled model against its circuit (``random_circuit(*args)``), in
    trials of ``verify(randomized, python)`` on the same pair; the ring interpreter's pass over the
    model's layers for comparison."""
    c = random_circuit(*args, seed=1)
    comp = compile_circuit(c)
    m = comp.model
    a, b = as_side(comp), as_side(c)
    rep = verify(comp, c, method="randomized", backend="python")
    tm, k = rep.timings, int(rep.evidence["k"])
    trial = (tm["method.trials"] - tm.get("method.fingerprint", 0.0)) / k

    def fresh() -> None:
        for cache in (_CIRCUIT_BOUNDS, _MODEL_BOUNDS, _MODEL_RECTS):
            cache.clear()
        structure_bounds(a, b)

    t_bounds = best(fresh)
    ring = BoundRing(a.num_inputs + len(a.params() | b.params()), common_denominator(a, b))
    u = [[ring.var] * m.d for _ in range(m.n)]
    t_old = best(lambda: layers_peak(m.layers, embed(u, m.inner_n, m.inner_d, ring.zero), ring), repeat=1)
    print(f"compiled random_circuit{args}: {len(m.layers)} layers, N'×d' = {m.inner_n}×{m.inner_d}; "
          f"verify(randomized, python): k = {k} trials, one trial {trial:.3f} s")
    print(f"  bounds pass       {t_bounds:8.3f} s = {t_bounds / trial:5.2f} trials   (ring interpreter, model only: {t_old:.3f} s)")


def best(fn: Callable[[], object], repeat: int = 3, clock: Callable[[], float] = time.perf_counter) -> float:
    out = math.inf
    for _ in range(repeat):
        t = clock()
        fn()
        out = min(out, clock() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--sympy-limit", type=float, default=0.5, help="skip sympy when flint takes longer (s)")
    ap.add_argument("--gates", type=int, default=None, help="gates per circuit in the engine rows (default 100000; quick 20000)")
    ap.add_argument("--ratio", action="store_true", help="only the row randomized verify ÷ bare loop (CPU time)")
    ap.add_argument("--pairs", type=int, default=3, help="fresh circuit pairs for --ratio (best of them; default 3)")
    args = ap.parse_args()
    if args.ratio:
        ratio(args.gates or (20_000 if args.quick else 100_000), args.pairs)
        return
    engines(args.gates or (20_000 if args.quick else 100_000))
    model_bounds((16, 4, 384, 16) if args.quick else (64, 8, 3072, 16))
    print()
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
            verdicts = {fl.verdict, rz.verdict} | ({sy.verdict} if sy is not None else set())
            flag = "" if len(verdicts) == 1 else f"   <-- METHODS DISAGREE: {sorted(v.value for v in verdicts)}"
            ratio_sy = f"{t_sy / t_fl:11.1f}" if sy is not None else f"{'-':>11}"
            print(f"{n:>3}×{d:<2} {L:>2} {label:>8} {t_fl:9.4f} {t_sy:9.4f} {t_rz:9.4f} {ratio_sy} {t_fl / t_rz:10.1f} "
                  f"{fl.evidence.get('monomials_compared', '-')!s:>10} {fl.evidence.get('ran', '-')!s:>10} "
                  f"{rz.evidence.get('k', '-')!s:>2} {fl.verdict.value}{flag}")


if __name__ == "__main__":
    main()
