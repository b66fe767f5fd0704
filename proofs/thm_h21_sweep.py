"""Theorem H.21 on a parameter grid: compile layered random circuits of cut width w and depth Δ and
prove each compiled model equal to its circuit.

One case, one instance, one task: the grid point ``(w, Δ, seed, compiler)``. The circuit is
:func:`layered_circuit` (``n·d = w`` inputs, ``w`` gates on every level, each reading the node
below it and a random node of the level below, a seeded mix of products and linear combinations
with small rational coefficients), so its cut width is exactly ``w``, its depth exactly ``Δ`` and its
size ``w·Δ``. It is compiled by the paper's construction (``kaleidoscope``, Theorem H.21) or
the dense baseline (``dense``) and proved equal by its stage certificate (compositional, Lemma
H.11: every stage checked exactly); the instance fails when a resource exceeds the bound the
compiler states (for H.21: ``L ≤ 8·(Δ+1)·(⌈log2 max(w, 2)⌉ + 2) + 3``, ``N_k ≤ 4·2^⌈log2 max(w, 2)⌉``, …; see
``thm_h21_general``).

The grid comes from ``symverify sweep thm_h21 --widths … --depths … --seeds … [--compilers …]``
(through :data:`~symverify.scripts.protocol.SWEEP_ENV`); without one, ``symverify prove`` runs
the small default grids below. Cost grows with ``w·Δ``: one instance at w = 1024, Δ = 16 took
about 90 s and 1.1 GB on a busy 2-core machine.
"""

from __future__ import annotations

import random
import time
from fractions import Fraction
from typing import Any

from symverify.compiler import compile
from symverify.errors import UsageError
from symverify.ir import limits
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.compositional import check_certificate
from symverify.scripts.protocol import Instance, ProofResult, each, script_main, sweep_grid

TITLE = "Theorem H.21 on a grid (layered circuits of cut width w and depth Δ, compiled and proved by certificate)"
SHARDABLE = True  # one instance per grid point
SWEEP = True  # symverify sweep thm_h21 --widths … --depths … --seeds …
COST = 14  # CPU seconds of the full tier, measured (orders and splits a parallel run)

COMPILERS = ("kaleidoscope", "dense")
QUICK: dict[str, Any] = {"widths": [8, 16], "depths": [2, 4], "seeds": [0, 1], "compilers": list(COMPILERS)}
FULL: dict[str, Any] = {"widths": [32, 64, 128], "depths": [4, 8], "seeds": [0, 1], "compilers": list(COMPILERS)}

KEYS = {
    "kaleidoscope": ("depth", "width", "size", "layers", "inner_n", "inner_d", "N_k", "params", "nonzero_params",
                     "L_over_delta_log2_w", "inner_n_over_w", "layers_thm", "layers_c21", "linear_stages", "mul_stages"),
    "dense": ("depth", "width", "size", "layers", "inner_n", "inner_d", "params", "nonzero_params"),
}


def layered_circuit(w: int, depth: int, seed: int, mul_fraction: float = 0.3) -> Circuit:
    """A seeded circuit of cut width exactly ``w``, depth exactly ``depth`` and ``w·depth`` gates
    (module docstring); ``d`` is 4, 2 or 1, whichever divides ``w`` first, and ``n = w/d``."""
    if w < 1 or depth < 1:
        raise UsageError(f"layered_circuit: expected w ≥ 1 and depth ≥ 1, found w={w}, depth={depth}")
    limits.check(w * depth, "MAX_GATES", f"layered_circuit of width {w} and depth {depth}")
    rng = random.Random(f"thm_h21_sweep {w} {depth} {seed}")
    d = next(k for k in (4, 2, 1) if w % k == 0)
    gates: list[Gate] = []
    below = list(range(w))
    for _ in range(depth):
        level = []
        for j in range(w):
            a, b = below[j], rng.choice(below)
            if rng.random() < mul_fraction:
                gates.append(Gate.mul(a, b))
            else:
                gates.append(Gate.lin(a, Fraction(rng.choice((-3, -2, -1, 1, 2, 3)), rng.choice((1, 2))),
                                      b, Fraction(rng.randint(1, 3))))
            level.append(w + len(gates) - 1)
        below = level
    return Circuit(w // d, d, tuple(gates), tuple(below), f"layered w={w} Δ={depth} seed={seed}")


def grid(quick: bool) -> dict[str, list[Any]]:
    """The grid of this run (``symverify sweep``'s, else the tier's), checked."""
    g = sweep_grid(QUICK if quick else FULL)
    for key, low in (("widths", 1), ("depths", 1), ("seeds", 0)):
        vals = g[key]
        if not isinstance(vals, list) or not vals or not all(isinstance(v, int) and not isinstance(v, bool) and v >= low for v in vals):
            raise UsageError(f"sweep grid: {key}: expected a non-empty list of integers ≥ {low}, found {vals!r}")
    if max(g["widths"]) * max(g["depths"]) > limits.MAX_GATES:
        raise UsageError(f"sweep grid: a circuit of width {max(g['widths'])} and depth {max(g['depths'])} has "
                         f"{max(g['widths']) * max(g['depths'])} gates, more than symverify.ir.limits.MAX_GATES = {limits.MAX_GATES}")
    if not isinstance(g["compilers"], list) or not g["compilers"] or not set(g["compilers"]) <= set(COMPILERS):
        raise UsageError(f"sweep grid: compilers: expected some of {', '.join(COMPILERS)}, found {g['compilers']!r}")
    return g


def cases(quick: bool) -> list[tuple[int, int, int, str]]:
    g = grid(quick)
    return [(w, depth, seed, comp) for w in g["widths"] for depth in g["depths"] for seed in g["seeds"]
            for comp in g["compilers"]]


def _instance(w: int, depth: int, seed: int, compiler: str) -> Instance:
    start = time.perf_counter()
    c = layered_circuit(w, depth, seed)
    out = compile(c, method=compiler)
    res = check_certificate(c, out.model, out.certificate)
    resources = {k: out.resources[k] for k in KEYS[compiler] if k in out.resources}
    bounds = {k: v for k, v in out.bounds.items() if k in resources}
    return Instance.from_report(f"w={w} Δ={depth} seed={seed} {compiler}", res, resources=resources, bounds=bounds,
                                seconds=time.perf_counter() - start, detail="" if res.ok else f"certificate: {res.failure}")


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("thm_h21_sweep", TITLE)
    for w, depth, seed, compiler in each(cases(quick)):
        result.instances.append(_instance(w, depth, seed, compiler))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
