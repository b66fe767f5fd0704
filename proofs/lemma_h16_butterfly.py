"""Lemma H.16: one butterfly factor matrix (any stride, symbolic diagonals) is O(1) BaseConv layers.

For every stride ``s`` of every size ``N = R·d`` in the sweep (``R = N/d ≤ 64`` track rows in the
quick tier, ``≤ 128`` in the full one), the factor with *symbolic* diagonals ``d1[m] … d4[m]`` (one
parameter each) is compiled by the gadget of :mod:`symverify.compiler.butterfly_to_baseconv`
(sequence axis for ``s ≥ d``: coefficients into three row blocks, then shift and sum; channel axis
for ``s < d``: coefficients into two row blocks, pair mix, closing sum). Each model is proved equal to the linear circuit
``out[p] = d1·x[p] + d2·x[p+s]``, ``out[p+s] = d3·x[p] + d4·x[p+s]`` **for all values of the
parameters**: global exact expansion over ``Q[x, d]`` against :func:`matrix_circuit`, the circuit
of the factor's exact matrix (the kernel's semantics of a factor, a reference built independently of
the construction), and the stage certificate (compositional) against the construction's own circuit
(:func:`~symverify.compiler.butterfly_to_baseconv.factor_circuit`).
Stated constants (docs/theory.md §4, Lemma H.16): at most ``C16 = 3`` layers for a factor alone, held
per axis to what the lemma states for it (2 sequence, 3 channel, 1 diagonal), ``d' = d`` and
``N' = 3·(R + ⌊R/2⌋)`` (three row blocks, each followed by a gap of ``⌊R/2⌋`` rows: none at ``R = 1``,
where ``N' = 3``).
"""

from __future__ import annotations

import time

from symverify.compiler.butterfly_to_baseconv import C16, axis_of, factor_model
from symverify.compiler.layout import track_width
from symverify.ir.build import CircuitBuilder
from symverify.ir.trace import sum_tree
from symverify.kaleidoscope import materialize
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import is_zero, sym
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.verification import verify
from symverify.parametric import library as forall_library
from symverify.scripts.instances import forall_instance
from symverify.scripts.protocol import Instance, ProofResult, each, script_main

TITLE = "Lemma H.16 (a butterfly factor with symbolic diagonals is ≤ 3 cyclic BaseConv layers)"
SHARDABLE = True  # one group of instances per case, independent of the others
COST = 28  # CPU seconds of the full tier, measured (orders and splits a parallel run)
AXIS_LAYERS = {"sequence": 2, "channel": C16, "diagonal": 1}  # one factor alone, per gadget (docs/theory.md §4)


def symbolic_factor(size: int, stride: int) -> ButterflyFactor:
    half = size // 2
    return ButterflyFactor(size, stride, *[tuple(sym(f"d{k}_{m}") for m in range(half)) for k in range(1, 5)])


def matrix_circuit(f: ButterflyFactor, d: int) -> Circuit:
    """The linear circuit ``vec(y) = B·vec(u)`` read off the factor's exact matrix ``B`` (row ``i`` of
    :func:`~symverify.kernel.kaleidoscope.apply.materialize`, the kernel's semantics of a factor: one
    adder tree per row over its nonzero entries), on ``n = size/d`` rows of ``d`` channels. It shares
    no code with the construction, whose own circuit
    (:func:`~symverify.compiler.butterfly_to_baseconv.factor_circuit`) is built from the factor's pairs."""
    b = CircuitBuilder(f.size // d, d)
    flat = [w for row in b.inputs() for w in row]
    outs = [sum_tree(b, [(c, flat[j]) for j, c in sorted(r.terms.items()) if not is_zero(c)]) for r in materialize(f, range(f.size))]
    return b.build(outs, f"butterfly factor N={f.size} stride {f.stride} (its matrix)")


def sweep(quick: bool) -> list[tuple[int, int, int]]:
    """``(rows N', d, stride)``: every stride of ``N = N'·d``."""
    shapes = [(r, d) for d in (1, 2, 4) for r in (1, 2, 4, 8, 16, 64) if r * d >= 2]
    if not quick:
        shapes += [(r, d) for d in (1, 2, 4) for r in (32, 128)] + [(r, 8) for r in (1, 2, 4, 8, 16, 32, 64)]
    return [(r, d, 1 << k) for r, d in shapes for k in range((r * d).bit_length() - 1)]


def _instance(rows: int, d: int, stride: int) -> Instance:
    start = time.perf_counter()
    f = symbolic_factor(rows * d, stride)
    circ, chain = factor_model(f, d)
    model = chain.model
    cert = check_certificate(circ, model, chain.certificate)
    exact = verify(matrix_circuit(f, d), model, method="exact")  # against the matrix, not the construction's circuit
    ok = cert.ok and exact.proved
    detail = "" if ok else f"certificate: {cert.failure}; exact: {exact.verdict.value}"
    res = {"layers": len(model.layers), "inner_n": model.inner_n, "inner_d": model.inner_d,
           "symbols": len(model.params()), "stages_in_certificate": chain.certificate.num_stages}
    axis = axis_of(f, track_width(d))  # the axis by the layout's track width (d itself for the powers of two swept)
    bounds = {"layers": AXIS_LAYERS[axis], "inner_n": 3 * (rows + rows // 2), "inner_d": d}
    name = f"N={rows * d} (R={rows}, d={d}) stride {stride} [{axis}]"
    return Instance.from_report(name, exact, cert, method="exact+compositional", resources=res, bounds=bounds,
                                seconds=time.perf_counter() - start, detail=detail)


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("lemma_h16_butterfly", TITLE)
    for rows, d, stride in each(sweep(quick)):
        result.instances.append(_instance(rows, d, stride))
    # layers A+C (channel axis) for every R = 2^r ≤ 2^38, tw = 2^j ≤ 2^20, every stride; the diagonal factor
    # and the closing sum (block_scale); in the full tier also layers A+B (sequence axis) and every compiled
    # form of the two-layer gadgets (pending input, pruned by SUP/LIVE, off-track channels)
    result.instances.append(forall_instance(forall_library.butterfly_channel()))
    result.instances.append(forall_instance(forall_library.block_scale()))
    if not quick:
        result.instances.append(forall_instance(forall_library.butterfly_sequence()))
        result.instances.append(forall_instance(forall_library.factor_channel()))
        result.instances.append(forall_instance(forall_library.factor_sequence(), timeout_s=600))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
