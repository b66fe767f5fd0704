"""The causal limit: Theorem H.21 is false for causal-only stacks (docs/theory.md §4 **Choice (causality)**).

Lemma (see :mod:`symverify.gadgets.causal`): in a causal stack, output row i depends only on input rows
≤ i, for all weights, depths and inner sizes (induction on layers). Checked here for concrete
sizes by exact symbolic computation with every weight a distinct symbol (so for all weights), and
by a sound abstract interpretation for larger sizes. Consequence, by exact non-dependence (not by
a failed search): the circuits ``y = [x_1; 0]`` and ``y = [x_1; x_1]`` (n = 2, d = 1) are computed
by no causal stack, while the dense compiler's cyclic model computes them (proved), and
``y = [x_0; x_0]`` has a two-layer causal model (proved). The lemma's general statement, and the
impossibility for every depth and inner size that follows from it, are *argued* instances citing
the hand proof (docs/theory.md, **Choice (causality)**); the script checks them on concrete sizes.
"""

from __future__ import annotations

import time

from symverify.compiler import compile
from symverify.gadgets.causal import (
    causal_obstruction,
    exact_row_dependence,
    later_row_reads,
    row_support,
    symbolic_model,
)
from symverify.gadgets.compose import compose
from symverify.gadgets.primitives import convolution, fixed_gate
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics.poly import polynomials, shared_ring
from symverify.scripts.protocol import Instance, ProofResult, script_main

CAUSAL_LEMMA = "docs/theory.md § Choice (causality)"

TITLE = "Causal limit: a causal stack's output row 0 never depends on input row 1 (Theorem H.21 needs cyclic mode)"
COST = 0.6  # CPU seconds of the full tier, measured (orders and splits a parallel run)


def _cyclic_layers(model: Model) -> int:
    """The number of cyclic layers of ``model`` (a count, as every script records it)."""
    return sum(1 for layer in model.layers if layer.mode is Mode.CYCLIC)


def _row_instance(nn: int, dd: int, L: int, exact: bool) -> Instance:
    start = time.perf_counter()
    model = symbolic_model(nn, dd, L)
    deps = exact_row_dependence(model) if exact else row_support(model)
    bad = later_row_reads(deps)
    detail = "no output row reads a later input row" if not bad else f"violations {bad[:4]}"
    res = {"layers": L, "inner_n": nn, "inner_d": dd, "weight_symbols": len(model.params()), "later_row_reads": len(bad)}
    method = "exact" if exact else "support"
    name = f"causal {nn}x{dd}, L={L}: row i depends only on rows ≤ i"
    computation = ("exact row dependence of the output polynomials, every weight a distinct symbol (the support "
                   "superset, matched by an expansion at integer weights; the full expansion where they differ)" if exact
                   else "zero-support abstract interpretation (a sound over-approximation of row dependence)")
    return Instance.computed(name, not bad, computation, method, resources=res, bounds={"later_row_reads": 0},
                             seconds=time.perf_counter() - start, detail=detail)


def _cyclic_control(nn: int, L: int) -> Instance:
    """Sanity: with cyclic layers, row 0 *does* depend on row 1 (the check can see dependence)."""
    start = time.perf_counter()
    deps = exact_row_dependence(symbolic_model(nn, 1, L, mode=Mode.CYCLIC))
    ok = 1 in deps[0]
    return Instance.computed(f"control: cyclic {nn}x1, L={L}: row 0 depends on row 1", ok,
                             "exact row dependence of the output polynomials, every weight a distinct symbol", "exact",
                             resources={"layers": L, "inner_n": nn}, seconds=time.perf_counter() - start,
                             detail=f"row 0 reads rows {sorted(deps[0])}")


def _impossible(c: Circuit) -> list[Instance]:
    start = time.perf_counter()
    obs = causal_obstruction(c)
    seconds = time.perf_counter() - start
    out = [
        Instance.computed(f"{c.name}: some output row reads a later input row", obs is not None,
                          "exact dependence of the circuit's output polynomials on its input rows", "exact",
                          seconds=seconds, detail=str(obs)[:200] if obs else "no obstruction"),
        Instance.argued(f"{c.name}: computed by no causal stack (any depth, any inner size)", CAUSAL_LEMMA, "lemma",
                        checks=obs is not None, detail="the causal lemma and the obstruction above"),
    ]
    start = time.perf_counter()
    comp = compile(c, method="dense")
    cert = check_certificate(c, comp.model, comp.certificate)
    res = {**{k: comp.resources[k] for k in comp.bounds}, "layers": comp.model.depth, "cyclic_layers": _cyclic_layers(comp.model)}
    out.append(Instance.from_report(f"{c.name}: the dense (cyclic) model computes it", cert, resources=res,
                                    bounds=dict(comp.bounds), seconds=time.perf_counter() - start))
    return out


def broadcast_model() -> Model:
    """``y = [x_0; x_0]`` by mask-row-0 then ``h = e_0 + e_1``: both layers causal."""
    frag = compose(fixed_gate(Grid.from_rows([[1], [0]])), convolution(Grid.from_rows([[1], [1]]), Mode.CAUSAL))
    return Model(2, 1, 2, 1, frag.layers, "causal broadcast")


def _causal_broadcast() -> Instance:
    """:func:`broadcast_model` computes ``y = [x_0; x_0]`` with no cyclic layer."""
    start = time.perf_counter()
    c = Circuit(2, 1, (), (0, 0), "every row := x_0")
    model = broadcast_model()
    ring = shared_ring(c, model)
    same = polynomials(c, ring) == polynomials(model, ring)
    cyclic = _cyclic_layers(model)
    return Instance.computed("every row := x_0 has a 2-layer causal model", same and cyclic == 0,
                             "exact comparison of the expanded output polynomials, and every layer's mode", "exact",
                             resources={"layers": model.depth, "cyclic_layers": cyclic},
                             bounds={"layers": 2, "cyclic_layers": 0}, seconds=time.perf_counter() - start)


def run(quick: bool = False) -> ProofResult:
    res = ProofResult("causal_limit", TITLE)
    res.instances.append(Instance.argued(
        "the causal lemma: in every causal stack, output row i depends only on input rows ≤ i (all sizes, depths, "
        "weights)", CAUSAL_LEMMA, "lemma", detail="induction over the layers; checked below for concrete sizes"))
    exact_sizes = [(2, 1, 1), (2, 1, 2), (2, 1, 3), (2, 2, 2), (3, 1, 3), (3, 2, 2)]
    if not quick:
        exact_sizes += [(2, 2, 3), (3, 2, 3), (2, 1, 4), (4, 1, 3), (3, 1, 4)]
    for nn, dd, L in exact_sizes:
        res.instances.append(_row_instance(nn, dd, L, exact=True))
    support_sizes = [(4, 2, 4), (8, 2, 6)] if quick else [(4, 2, 4), (8, 2, 6), (16, 3, 8), (32, 2, 12)]
    for nn, dd, L in support_sizes:
        res.instances.append(_row_instance(nn, dd, L, exact=False))
    res.instances.append(_cyclic_control(2, 1))
    res.instances.append(_cyclic_control(3, 2))
    res.instances.extend(_impossible(Circuit(2, 1, (), (1,), "output 0 := x_1")))
    res.instances.extend(_impossible(Circuit(2, 1, (), (1, 1), "every row := x_1")))
    res.instances.append(_causal_broadcast())
    return res


if __name__ == "__main__":
    raise SystemExit(script_main(run))
