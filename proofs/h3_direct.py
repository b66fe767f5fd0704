"""H3 (zoology's ``H3`` mixer, ``head_dim = 1``) as a direct causal BaseConv, proved for all weights.

The circuit is :func:`symverify.library.h3` (docs/gated-convolutions.md states the form: ``q, k, v``
projections with biases, ``k`` through the shift SSM's kernel plus ``ssm_k_D·k``, ``k̃ ⊙ v`` through
the diagonal SSM's kernel plus ``D``, ``⊙ q``, ``output_linear``; no residual). The construction is
:func:`symverify.compiler.gated.h3_direct`: 5 causal layers, ``N' = N``, ``d' = 3d``; every weight,
bias, kernel tap and skip is a symbol, so each proof holds for all of their values (the SSM
parameters only produce the kernels).

Instances: the direct model proved up to N = 64 (quick: up to N = 16); Theorem H.21's route on the
same circuit, proved, with both routes' layer and parameter counts; every mutation of one nonzero
weight (+1) refuted; an H3-shaped module (:class:`~symverify.executors.zoology_gated.ZoologyH3`) read exactly,
proved, and its float forward matched (also with a kernel shorter than the sequence).
"""

from __future__ import annotations

from symverify.compiler.gated import h3_direct
from symverify.library import h3
from symverify.scripts.gated_instances import direct_instance, module_instance, mutation_instance, route_instance
from symverify.scripts.protocol import ProofResult, script_main

TITLE = "H3 as a direct causal BaseConv (5 layers, d' = 3d), proved for all weights"
COST = 8.5  # CPU seconds of the full tier, measured (orders and splits a parallel run)


def _build(N: int, d: int, order: int):  # type: ignore[no-untyped-def]
    return h3(N, d), h3_direct(N, d)


def run(quick: bool = False) -> ProofResult:
    import torch

    from symverify.executors.zoology_gated import ZoologyH3

    result = ProofResult("h3_direct", TITLE)
    if quick:
        direct = [(1, 1), (3, 2), (8, 2), (16, 2)]
        routes = [(2, 1, "dense"), (2, 1, "kaleidoscope")]
        mut, mods = (2, 1), [(8, 2, None)]
    else:
        direct = [(N, d) for N in (1, 2, 4, 8, 16, 32, 64) for d in (1, 2, 4)]
        routes = [(N, d, m) for N, d in ((2, 1), (3, 1), (4, 1), (4, 2)) for m in ("dense", "kaleidoscope")]
        mut, mods = (3, 2), [(8, 2, None), (16, 2, 6), (64, 4, None)]
    for N, d in direct:
        result.instances.append(direct_instance("h3", _build, N, d, 2))
    for N, d, m in routes:
        result.instances.append(route_instance("h3", _build, N, d, m))
    result.instances.append(mutation_instance("h3", _build, *mut))
    for N, d, lmax in mods:
        torch.manual_seed(N + d)
        result.instances.append(module_instance("h3", ZoologyH3(d, 4, lmax).double().eval(), N, d))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
