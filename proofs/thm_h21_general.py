"""Theorem H.21: an (nd, s, Δ, w) circuit is an (n, O(Δ·log w), d, O(w), O(d)) cyclic BaseConv.

Every circuit of the sweep is compiled by the paper's construction
(:func:`~symverify.compiler.kaleidoscope.compile_kaleidoscope`: layered form, each linear stage a
kaleidoscope of at most 5 BB* factors computed by Lemma H.16 gadgets, each multiplicative stage
by ``remember``, Proposition H.10) and proved equal to it by its stage certificate
(compositional, Lemma H.11), plus global exact expansion when small. Cross-check: the dense
baseline compiler's model (proved by its own certificate) and the kaleidoscope model are also
compared with each other directly: exact expansion when small, else Schwartz–Zippel over
``F_p`` with Python ints (``p ≥ 2^61``), with the stated failure bound ``(D/p)^k ≤ 2^-100`` (in
the instance detail).

Stated constants (each instance fails when exceeded), ``a = ⌈log2 max(w, 2)⌉``:
``L ≤ (#linear stages)·(8·log2 N_k − 1) + #mul stages (+ 4)`` (``layers``),
``L ≤ 8·(Δ+1)·(a+2) + 3`` (``layers_thm``), ``L ≤ 24·max(Δ,1)·a + 27`` (``layers_c21``),
``N_k ≤ 4·2^a``, ``N' = 3·(R + ⌊R/2⌋) ≤ 18·2^a/tw`` (``R = N_k/tw``), ``d' = d``. The table reports
``L/(max(Δ,1)·log2 w)`` and ``N'/w``.
"""

from __future__ import annotations

import time

from symverify.compiler import compile
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.verification import verify
from symverify.library import determinant, elementary_symmetric, random_circuit, standard_library, walsh_hadamard
from symverify.scripts.protocol import Decided, Instance, ProofResult, each, script_main

TITLE = "Theorem H.21 (any circuit → cyclic BaseConv, L ≤ 8·(Δ+1)·(⌈log2 max(w, 2)⌉ + 2) + 3, N' = O(w/d), d' = d)"
SHARDABLE = True  # one group of instances per case, independent of the others
COST = 12  # CPU seconds of the full tier, measured (orders and splits a parallel run)

KEYS = ("depth", "width", "size", "layers", "inner_n", "inner_d", "N_k", "params", "nonzero_params", "L_over_delta_log2_w",
        "inner_n_over_w", "layers_thm", "layers_c21", "linear_stages", "mul_stages")


def edge_cases() -> list[Circuit]:
    a = sym("a")
    return [
        Circuit(2, 2, (Gate.lin(0, a, 1, a * a - 1), Gate.const(3), Gate.add(1, 5), Gate.mul(6, 2)), (4, 7, 5), "symbolic+constant"),
        Circuit(2, 3, (), (5, 0, 0, 3), "selection d=3 (Δ = 0)"),
        Circuit(3, 1, (Gate.add(0, 1),), (), "no outputs"),
        Circuit(2, 2, (Gate.lin(0, 0, 1, 0), Gate.mul(0, 0)), (4, 5), "zero coefficients"),
        Circuit(1, 5, (Gate.mul(0, 1), Gate.mul(2, 3), Gate.mul(5, 6), Gate.mul(7, 4)), (8, 0), "product d=5"),
    ]


def circuits(quick: bool) -> list[Circuit]:
    out = edge_cases() + standard_library(quick)
    named = [determinant(3), walsh_hadamard(16), elementary_symmetric(8)]
    out += [c for c in named if (c.name, c.n, c.d) not in {(o.name, o.n, o.d) for o in out}]
    randoms = [(2, 2, 30, 6, 1), (3, 2, 60, 8, 2), (4, 4, 150, 10, 3)]
    if not quick:
        out += [walsh_hadamard(64), walsh_hadamard(16, 16), elementary_symmetric(16), determinant(4)]
        randoms += [(8, 4, 300, 12, 4), (16, 4, 400, 16, 5), (32, 4, 768, 16, 6), (4, 2, 200, 40, 7)]
    out += [random_circuit(n, d, s, D, 0.3, seed=seed, num_outputs=n * d // 2) for n, d, s, D, seed in randoms]
    return out


def _instance(c: Circuit) -> Instance:
    start = time.perf_counter()
    small = c.num_inputs <= 9 and len(c.gates) <= 40
    out = compile(c, method="kaleidoscope")
    notes = []
    res = check_certificate(c, out.model, out.certificate)
    checks: list[Decided] = [res]
    method = "compositional"
    if not res.ok:
        notes.append(f"certificate: {res.failure}")
    if small and res.ok:
        rep = verify(c, out.model, method="exact")
        checks.append(rep)
        method += "+exact"
        if not rep.proved:
            notes.append("global exact expansion differs")
    dense = compile(c, method="dense")
    dres = check_certificate(c, dense.model, dense.certificate)
    # the Python-int engine (primes ≥ 2^61): the same verdict and stated bound target as torch's,
    # without building a tensor plan of both models (which costs more than the trials here)
    if small:
        cross = verify(out.model, dense.model, method="exact")
    else:
        cross = verify(out.model, dense.model, method="randomized", backend="python")
    checks += [dres, cross]
    if not (dres.ok and cross.proved):
        notes.append(f"dense cross-check: certificate {dres.ok}, models {cross.verdict.value}")
    bound = cross.evidence.get("bound")
    notes.append(f"vs dense: {cross.method}" + (f" error ≤ {bound}" if bound is not None else ""))
    method += "+dense" + ("+randomized" if cross.method == "randomized" else "")  # its error bound is the claim's
    resources = {k: out.resources[k] for k in KEYS}
    bounds = {k: v for k, v in out.bounds.items() if k in resources}
    name = f"{c.name} {c.n}x{c.d}"
    return Instance.from_report(name, *checks, method=method, resources=resources, bounds=bounds,
                                seconds=time.perf_counter() - start, detail="; ".join(notes))


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("thm_h21_general", TITLE)
    for c in each(circuits(quick)):
        result.instances.append(_instance(c))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
