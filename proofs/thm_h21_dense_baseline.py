"""Theorem H.21 by the dense baseline construction (docs/appendix-h.md §2.5): every circuit → a proved BaseConv.

The dense compiler (:mod:`symverify.compiler.dense`) is the simple, independent second compiler:
feature memory in row 0, one dense linear layer and one remember layer (Proposition H.10) per
level, layout layers in cyclic mode. Stated bounds: ``L ≤ 2Δ + 5``, ``N' = n``, ``d' ≤ 2w``,
dense parameters ``≤ (2Δ + 5)·((2w)² + 3n·2w)``. Every model is proved against its circuit by its
stage certificate (compositional, Lemma H.11) and, for small circuits, also by global exact
expansion. The sweep covers the standard library, edge cases (constants, symbolic coefficients,
repeated outputs, inputs as outputs, unused inputs, Δ = 0, no outputs) and random circuits.
"""

from __future__ import annotations

import time
from fractions import Fraction

from symverify.compiler import compile
from symverify.ir.build import CircuitBuilder
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.verification import verify
from symverify.library import random_circuit, standard_library
from symverify.scripts.protocol import Decided, Instance, ProofResult, each, script_main

TITLE = "Theorem H.21 via the dense baseline compiler (2 layers per level + layout; L ≤ 2Δ + 5, d' ≤ 2w)"
SHARDABLE = True  # one group of instances per case, independent of the others
COST = 1.2  # CPU seconds of the full tier, measured (orders and splits a parallel run)


def edge_cases() -> list[Circuit]:
    """Small circuits exercising every corner the compiler must handle."""
    a = sym("a")
    b = CircuitBuilder(2, 2)
    u = b.inputs()
    sym_lin = b.build([u[0][0] * a + u[1][1] * (a * a - 1), (u[0][1] + 3) * u[1][0]], "symbolic coefficients and a constant")
    return [
        sym_lin,
        Circuit(2, 2, (Gate.const(5), Gate.const(Fraction(-1, 3))), (4, 5, 4), "constants only (Δ = 0)"),
        Circuit(2, 1, (), (1, 0), "inputs as outputs, swapped (Δ = 0)"),
        Circuit(3, 1, (), (), "no outputs"),
        Circuit(2, 2, (Gate.mul(0, 0), Gate.add(4, 1)), (5, 5, 4, 0), "repeated outputs, input 2 and 3 unused"),
        Circuit(1, 3, (Gate.mul(0, 1), Gate.mul(3, 2), Gate.lin(4, a, 0, 2)), (5, 3, 4), "one row (no layout layers)"),
        Circuit(3, 1, (Gate.mul(0, 1), Gate.mul(3, 3), Gate.mul(4, 2)), (5, 2, 1), "products down a chain"),
    ]


def _instance(c: Circuit, exact: bool) -> Instance:
    start = time.perf_counter()
    comp = compile(c, method="dense")
    cert = check_certificate(c, comp.model, comp.certificate)
    checks: list[Decided] = [cert]
    detail = "" if cert.ok else str(cert.failure)
    if exact:
        report = verify(c, comp.model, method="exact")
        checks.append(report)
        if not report.proved:
            detail = f"global exact expansion: {report}"
    keys = ("depth", "width", "size", "layers", "inner_n", "inner_d", "params", "nonzero_params", "cyclic_layers")
    res = {k: comp.resources[k] for k in keys}
    return Instance.from_report(c.name or "circuit", *checks, resources=res, bounds=comp.bounds,
                                seconds=time.perf_counter() - start, detail=detail)


def run(quick: bool = False) -> ProofResult:
    res = ProofResult("thm_h21_dense_baseline", TITLE)
    randoms = [(2, 2, 30, 6, 1), (3, 2, 60, 8, 2), (2, 3, 100, 12, 3)]
    if not quick:
        randoms += [(4, 2, 200, 15, 4), (4, 4, 300, 20, 5), (8, 2, 400, 10, 6), (2, 2, 300, 60, 7)]
    cases = [(lambda c=c: c, True) for c in [*edge_cases(), *standard_library(quick)]]
    cases += [(lambda r=r: random_circuit(r[0], r[1], r[2], r[3], 0.3, seed=r[4], num_outputs=r[0] * r[1]), r[2] <= 60)
              for r in randoms]
    for make, exact in each(cases):
        res.instances.append(_instance(make(), exact=exact))
    return res


if __name__ == "__main__":
    raise SystemExit(script_main(run))
