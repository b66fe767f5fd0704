"""Instances shared by the gated-convolution proof scripts (``proofs/hyena_direct.py``,
``proofs/h3_direct.py``): the direct construction proved for all weights, Theorem H.21's route on the
same circuit for comparison, single-weight mutations, a zoology module read exactly, and refusals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from symverify.compiler import compile
from symverify.compiler.result import Compiled
from symverify.kernel.ir.baseconv import Mode
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.verification import verify
from symverify.mutate import get_weight, set_weight, weight_sites
from symverify.scripts.protocol import Instance, Number, timed

__all__ = ["direct_instance", "route_instance", "mutation_instance", "module_instance", "refusal_instance"]

Build = Callable[[int, int, int], tuple[Circuit, Compiled]]


def direct_instance(name: str, build: Build, N: int, d: int, order: int) -> Instance:
    """The direct model proved against the circuit, every weight symbolic; bounds ``order + 3``
    layers, ``N' = N``, ``d' = (order+1)·d``, no cyclic layer."""
    with timed() as t:
        circuit, compiled = build(N, d, order)
        report = verify(circuit, compiled, method="compositional")
    m = compiled.model
    res: dict[str, Number] = {"layers": m.depth, "inner_n": m.inner_n, "inner_d": m.inner_d, "params": m.param_count(),
           "nonzero_params": m.nonzero_param_count(), "cyclic_layers": sum(1 for la in m.layers if la.mode is Mode.CYCLIC),
           "symbols": len(circuit.params())}
    bounds: dict[str, Number] = {"layers": order + 3, "inner_n": N, "inner_d": (order + 1) * d, "cyclic_layers": 0}
    return Instance.from_report(f"{name} direct N={N} d={d} order={order}", report, resources=res, bounds=bounds, seconds=t[0],
                                detail=f"causal; for all weights and filter taps ({len(circuit.params())} symbols); "
                                       f"{report.text(timings=False)}")


def route_instance(name: str, build: Build, N: int, d: int, method: str) -> Instance:
    """Theorem H.21's route (``compile(circuit, method)``) on the same circuit, proved and held to
    every bound its compiler states, with the direct model's counts beside it (the table of
    docs/gated-convolutions.md) and ``direct_layers ≤ layers``."""
    with timed() as t:
        circuit, direct = build(N, d, 2)
        routed = compile(circuit, method=method)
        report = verify(circuit, routed, method="compositional")
    m, dm = routed.model, direct.model
    res: dict[str, Number] = {"layers": m.depth, "inner_n": m.inner_n, "inner_d": m.inner_d, "params": m.param_count(),
                           "direct_layers": dm.depth, "direct_params": dm.param_count(),
                           "layers_over_direct": round(m.depth / dm.depth, 2),
                           "params_over_direct": round(m.param_count() / dm.param_count(), 2)}
    res.update({k: v for k, v in routed.resources.items() if k in routed.bounds and k not in res})
    return Instance.from_report(f"{name} H.21 route N={N} d={d} [{method}]", report, resources=res,
                                bounds={**dict(routed.bounds), "direct_layers": m.depth}, seconds=t[0],
                                detail=f"for all weights; {report.text(timings=False)}")


def mutation_instance(name: str, build: Build, N: int, d: int) -> Instance:
    """Every single-weight perturbation (+1) of the direct model is refuted with a counterexample."""
    with timed() as t:
        circuit, out = build(N, d, 2)
        sites = weight_sites(out.model)
        missed = []
        for site in sites:
            model = set_weight(out.model, site, get_weight(out.model, site) + 1)
            rep = verify(circuit, replace(out, model=model))
            if rep.verdict.value != "refuted" or rep.counterexample is None:
                missed.append(site)
    return Instance.computed(f"{name} mutations N={N} d={d}", not missed,
                             "verify refutes every mutant (nonzero weight + 1) with an exactly re-checked counterexample",
                             "compositional+exact", resources={"mutants": len(sites), "missed": len(missed)},
                             bounds={"missed": 0}, seconds=t[0])


def module_instance(name: str, module: Any, N: int, d: int, seed: int = 0) -> Instance:
    """A zoology-shaped module read exactly, proved, and its float forward compared with the model's."""
    import numpy as np
    import torch

    from symverify.compiler.gated import gated_from_zoology
    from symverify.executors import execute

    with timed() as t:
        circuit, compiled = gated_from_zoology(module, N)
        report = verify(circuit, compiled)
        u = torch.randn(2, N, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            want = module(u).numpy()
        got = execute(compiled.model, u, backend="torch", dtype="float64").numpy()
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max()) / scale
    return Instance.from_report(f"{name} module N={N} d={d} (exact weights)", report,
                                resources={"layers": compiled.model.depth, "float64_rel_error": err},
                                bounds={"float64_rel_error": 1e-9}, seconds=t[0],
                                detail=f"{type(module).__name__} read exactly (no symbols); torch float64 agrees to {err:.1e}; "
                                       f"{report.text(timings=False)}")


def refusal_instance(cases: list[tuple[Any, str]]) -> Instance:
    """Each object is refused with a CompileError whose message names the operation."""
    from symverify.compiler.gated import gated_from_zoology
    from symverify.errors import CompileError

    ok = 0
    with timed() as t:
        for obj, word in cases:
            try:
                gated_from_zoology(obj, 4)
            except CompileError as e:
                ok += word in str(e)
    return Instance.computed("non-polynomial modules refused", ok == len(cases),
                             "each module is refused with a CompileError naming the operation", "validation",
                             resources={"refused": ok, "cases": len(cases)}, seconds=t[0],
                             detail="softmax, selection, normalisation and GELU are named in the refusal")
