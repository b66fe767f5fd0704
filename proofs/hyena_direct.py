"""Hyena (zoology's ``Hyena`` mixer) as a direct causal BaseConv, proved for all weights and filters.

The circuit is :func:`symverify.library.hyena` (docs/gated-convolutions.md states the form: in-projection
to ``x1, x2, v``, a depthwise causal short filter of 3 taps with bias, ``v ⊙ x1``, the long filter
``h`` with its skip ``D``, ``⊙ x2``, the out-projection; no residual). The construction is
:func:`symverify.compiler.gated.hyena_direct`: ``order + 3`` causal layers, ``N' = N``,
``d' = (order+1)·d``; every weight, bias and filter tap is a symbol, so each proof holds for all of
their values (the implicit filter's MLP only produces the taps).

Instances: the direct model proved up to N = 64 (quick: up to N = 16) for orders 2 and 3 (full: 4);
Theorem H.21's route (``sv.compile``, dense and kaleidoscope) on the same circuit, proved, with the
layer and parameter counts of both routes; every mutation of one nonzero weight (+1) refuted; a zoology-shaped
module (:class:`~symverify.executors.zoology_gated.ZoologyHyena`) read exactly, proved, and its float
forward matched; non-polynomial modules refused.
"""

from __future__ import annotations

from symverify.compiler.gated import hyena_direct
from symverify.library import hyena
from symverify.scripts.gated_instances import (
    direct_instance,
    module_instance,
    mutation_instance,
    refusal_instance,
    route_instance,
)
from symverify.scripts.protocol import ProofResult, script_main

TITLE = "Hyena as a direct causal BaseConv (order + 3 layers, d' = (order+1)·d), proved for all weights"
COST = 10  # CPU seconds of the full tier, measured (orders and splits a parallel run)


def _build(N: int, d: int, order: int):  # type: ignore[no-untyped-def]
    return hyena(N, d, order), hyena_direct(N, d, order)


def run(quick: bool = False) -> ProofResult:
    import torch
    from torch import nn

    from symverify.executors.zoology_gated import ZoologyHyena

    result = ProofResult("hyena_direct", TITLE)
    if quick:
        direct = [(1, 1, 2), (3, 2, 2), (8, 2, 2), (16, 2, 2), (5, 2, 3)]
        routes = [(2, 1, "dense"), (3, 1, "kaleidoscope")]
        mut, mods = (2, 1), [(8, 2)]
    else:
        direct = [(N, d, o) for N in (1, 2, 4, 8, 16, 32, 64) for d in (1, 2, 4) for o in (2, 3)] + [(16, 2, 4), (64, 2, 4)]
        routes = [(N, d, m) for N, d in ((2, 1), (3, 1), (4, 1), (4, 2)) for m in ("dense", "kaleidoscope")]
        mut, mods = (3, 2), [(8, 2), (64, 4)]
    for N, d, o in direct:
        result.instances.append(direct_instance("hyena", _build, N, d, o))
    for N, d, m in routes:
        result.instances.append(route_instance("hyena", _build, N, d, m))
    result.instances.append(mutation_instance("hyena", _build, *mut))
    for N, d in mods:
        torch.manual_seed(N + d)
        result.instances.append(module_instance("hyena", ZoologyHyena(d, N).double().eval(), N, d))

    class Attention(nn.Module):
        pass

    class Mamba(nn.Module):
        pass

    result.instances.append(refusal_instance([(Attention(), "softmax"), (Mamba(), "selection"), (nn.LayerNorm(2), "normalisation"),
                                              (nn.GELU(), "GELU")]))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
