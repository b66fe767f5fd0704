"""Corollary H.22: BaseConv simulates a RetNet layer (Algorithm 6), via Theorem H.21.

The RetNet layer ``z^t = γ·z^{t−1} + A[t,:]ᵀ V[t,:]``, ``y[t,:] = C[t,:]·z^t`` (with
``A = uW_A``, ``C = uW_C``, ``V = uW_V``) is a polynomial-size circuit
(:func:`symverify.library.retnet`, unrolled as in the excerpt's eq. 7 with the recurrence shared),
so both compilers apply. Each instance is compiled by the dense baseline and by the
paper-faithful kaleidoscope compiler and proved equal to the circuit — with the decay ``γ`` a
symbol where the compiler accepts symbolic coefficients, so the identity holds for every ``γ``.

The excerpt claims O(N·d) parameters and O(N·log d) layers for an N-step RetNet. Those are
asymptotic claims without constants, so they are *measured*, not enforced: the table reports
``params / (N·d)`` and ``layers / (N·log2 d)`` next to each construction's own stated bounds,
which are enforced.
"""

from __future__ import annotations

import math
from fractions import Fraction

from symverify.compiler import compile
from symverify.errors import CompileError
from symverify.ir.analysis import stats
from symverify.ir.scalar import sym
from symverify.library import retnet
from symverify.scripts.protocol import Instance, ProofResult, script_main, timed
from symverify.verification import verify

TITLE = "Corollary H.22 (BaseConv simulates RetNet)"

W_A = [[1, 0, 1], [1, 1, 0], [0, 2, 1]]
W_C = [[1, 2, 0], [0, 1, 1], [1, 0, -1]]
W_V = [[0, 1, 1], [1, -1, 0], [2, 0, 1]]


def _weights(d: int) -> tuple[list[list[int]], ...]:
    return tuple([row[:d] for row in W[:d]] for W in (W_A, W_C, W_V))


def _instance(N: int, d: int, method: str) -> Instance:
    WA, WC, WV = _weights(d)
    gamma: object = sym("gamma")
    with timed() as t:
        try:
            circuit = retnet(N, d, gamma, WA, WC, WV)
            compiled = compile(circuit, method=method)
        except CompileError:
            gamma = Fraction(1, 2)
            circuit = retnet(N, d, gamma, WA, WC, WV)
            compiled = compile(circuit, method=method)
        report = verify(circuit, compiled)
    s = stats(circuit)
    res = compiled.resources
    layers, params = compiled.model.depth, compiled.model.nonzero_param_count()
    resources = {
        "depth": s.depth,
        "width": s.width,
        "layers": layers,
        "inner_n": compiled.model.inner_n,
        "inner_d": compiled.model.inner_d,
        "nonzero_params": params,
        "params_per_Nd": Fraction(params, N * d),
        "layers_per_Nlog2d": Fraction(layers) / Fraction(N * max(1, math.ceil(math.log2(d)))),
    }
    resources.update({k: v for k, v in res.items() if k in compiled.bounds})
    gamma_note = "for all γ" if not isinstance(gamma, Fraction) else f"γ = {gamma}"
    return Instance(
        name=f"RetNet N={N} d={d} [{method}]",
        verdict=report.verdict.value,
        method=report.method,
        resources=resources,
        bounds=dict(compiled.bounds),
        seconds=t[0],
        detail=f"{gamma_note}; {report}",
    )


def run(quick: bool = False) -> ProofResult:
    sizes = [(2, 2), (3, 2)] if quick else [(2, 2), (3, 2), (4, 2), (2, 3), (3, 3)]
    result = ProofResult("cor_h22_retnet", TITLE)
    for N, d in sizes:
        for method in ("dense", "kaleidoscope"):
            result.instances.append(_instance(N, d, method))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
