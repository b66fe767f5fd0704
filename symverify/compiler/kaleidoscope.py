"""The paper's compiler: any circuit to a cyclic BaseConv model (Theorem H.21, Corollary H.20).

``compile_kaleidoscope(circuit)`` follows the proof of Theorem H.21: the layered form
(docs/theory.md §2), each linear stage as a kaleidoscope matrix (Theorem H.19 stage by stage, Dao et
al. Theorems 2–3) computed by butterfly gadgets (Lemmas H.16, H.18), each multiplicative stage by
``remember`` (Proposition H.10). See :mod:`.h21` for the pipeline (stages → placement → routes → planner → emit).
All layers are cyclic (docs/theory.md §4: the theorem is false for causal stacks).

**Stated constants** (checked on every instance by ``proofs/thm_h21_general.py`` and
``thm_h21_sweep.py``), with ``Δ`` the depth, ``w`` the cut width (``n·d ≤ w``, at most ``n·d``
outputs), ``a = ⌈log2 max(w, 2)⌉``, ``tw ≤ d`` the track
width (the largest power of two ``≤ d``) and ``lg = log2 N_k``:

* every gate has two arguments, so every linear stage has rows of at most two entries and takes
  the selection route (:mod:`symverify.kaleidoscope.selection`: ``≤ 4·lg − 1`` factors; ``≤
  ⌈log2 f⌉ + 2·lg`` from the aligned block starts the planner prefers, ``f`` the fan-out) or a
  cheaper one (a diagonal, one butterfly factor, a scaled permutation: ``≤ 2·lg − 1``);
* **size**: ``N_k ≤ 4·2^a`` (``lg ≤ a + 2``). Between levels a state has ``≤ w`` slots; inside
  level ℓ, ``W_ℓ = 2k + m`` (``k`` products, ``m`` other values, ``k + m ≤ w``), and the rows
  that place the operands ``v1``, ``v2`` are copies (:mod:`symverify.kernel.ir.layered`), so a stage's
  ``nnz ≤ 2(k + m) ≤ 2w``. The planner offers, beside the layouts that make the next copy network
  cheap, a *compact* one (:func:`~.h21.planner.plan_stages`): ``v3`` in order, a row of
  two entries at an even position with its partner free (``≤ 2m`` positions), then ``v1`` (``k``),
  then ``v2`` an even shift ``≤ k + tw`` above it: ``≤ 2(k + m) + tw + 1 ≤ 2w + tw + 1 ≤ 4·2^a``
  positions, a multiplicative shift needing ``2·k_rows·tw ≤ 2k + 2tw ≤ 4·2^a``, and a combine at
  stride 1 (the selection size is never doubled). A state between levels takes ``≤ 2w + 1``.
  The planner (exact or greedy, :func:`~.h21.planner.plan_stages`) takes only layouts
  whose stage fits ``4·2^a``; the compact one always fits, so every stage does; the read-out
  layout (the last products at their output cells, which makes the last stage free) is one of
  them, and the last stage itself (outputs below ``2·n·tw ≤ 2^(a+1)``) needs ``≤ 2^(a+1)``
  doubled at most once;
* ``d' = d`` and ``N' = 3·(R + ⌊R/2⌋)``, ``R = N_k/tw`` (:func:`.layout.inner_length`): ``4.5·R``
  for ``R ≥ 2``, 3 rows at ``R = 1`` (``N_k = tw``); stated: ``3·(R* + R*/2)`` at ``R* = 4·2^a/tw
  ≥ 4`` (``tw ≤ d ≤ w ≤ 2^a``), exactly ``18·2^a/tw``;
* layers: a linear stage ``≤ 2·(4·lg − 1) + 1``, a multiplicative stage 1 more (its first layer
  closes the linear stage), ``≤ Δ + 1`` linear and ``≤ Δ`` multiplicative stages, and 4
  gather/scatter layers when ``d`` is not a power of two:
  ``L ≤ (Δ+1)·(8·lg − 1) + Δ + 4 ≤ 8·(Δ+1)·(a + 2) + 3`` (``layers_thm``): **c_L = 8** on the
  leading term ``Δ·a`` (measured on the proof sweeps, both tiers: ``L/(Δ·log2 w) ≤ 6.5``). Collected into one
  product, ``L ≤ c21·max(Δ,1)·a + c0`` with **c21 = 24, c0 = 27** (``layers_c21``): the two-term
  form is ``8aΔ + 16Δ + 8a + 19`` and ``16Δ + 8a ≤ 16aΔ + 8`` for ``a, Δ ≥ 1`` (``Δ = 0``:
  ``8a + 19``). Neither constant can be smaller: at ``a = 1`` the two-term form is ``24Δ + 27``. The single
  product is loose at small ``a`` by construction: it must absorb the ``+ 1`` stage and the ``+ 2``
  of ``lg`` (docs/theory.md, Theorem H.21, "Constants").

Symbolic circuit coefficients (``Sym``) are supported: they become butterfly diagonals and then
positional gates. Nothing else is rejected, except circuits whose inner state would exceed
``max_cells`` (reported with every other problem in one :class:`CompileError`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

from symverify.errors import CompileError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.analysis import check_state
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import plain_index

if TYPE_CHECKING:
    from symverify.compiler.h21.emit import Build
    from symverify.compiler.h21.planner import Prepared
    from symverify.compiler.result import Compiled

__all__ = ["compile_kaleidoscope", "kaleidoscope_bounds", "C21", "C0", "MAX_CELLS"]

C21 = 24
C0 = 27
MAX_CELLS = limits.MAX_CELLS  # N'·d' cells at import; ``max_cells=None`` reads limits.MAX_CELLS at each call


def kaleidoscope_bounds(depth: int, width: int, d: int, n_k: int, linear_stages: int, mul_stages: int) -> dict[str, Any]:
    """The bounds the construction states for a circuit of depth Δ and cut width w (see module doc):
    ``layers`` from the instance's own stage counts and ``N_k``, the rest from ``Δ`` and ``w``.
    Each is a non-negative int (``n_k`` and ``d`` at least 1), else :class:`CompileError`."""
    from symverify.compiler.result import check_counts

    check_counts("kaleidoscope_bounds", depth=depth, width=width, d=d, n_k=n_k, linear_stages=linear_stages,
                 mul_stages=mul_stages)
    depth, width, d, n_k, linear_stages, mul_stages = (int(x) for x in (depth, width, d, n_k, linear_stages, mul_stages))
    if d < 1 or n_k < 1:
        raise CompileError(f"kaleidoscope_bounds: expected d ≥ 1 and n_k ≥ 1, found d = {d}, n_k = {n_k}")
    from symverify.compiler.h21.size import log2_ceil, stated_size
    from symverify.compiler.layout import inner_length, track_width

    a = log2_ceil(max(width, 2))
    lg = log2_ceil(n_k)
    tw = track_width(d)
    extra = 0 if tw == d else 4
    big = stated_size(width)  # the one statement of N_k, shared with the planner
    return {
        "layers": linear_stages * (8 * lg - 1) + mul_stages + extra,
        "layers_thm": 8 * (depth + 1) * (a + 2) + 3,
        "layers_c21": C21 * max(depth, 1) * a + C0,
        "linear_stages": depth + 1,
        "mul_stages": depth,
        "N_k": big,
        "inner_n": inner_length(big // tw),
        "inner_d": d,
    }


def _resources(c: Circuit, build: Build) -> dict[str, Any]:
    from symverify.kernel.ir.analysis import stats

    st = stats(c)
    m = build.model
    lin = [r for r in build.stages if r["kind"] == "linear"]
    mul = [r for r in build.stages if r["kind"] == "mul"]
    L = len(m.layers)
    denom = max(st.depth, 1) * math.log2(max(st.width, 2))
    return {
        "layers": L,
        "n": m.n,
        "d": m.d,
        "inner_n": m.inner_n,
        "inner_d": m.inner_d,
        "N_k": build.layout.size,
        "tw": build.layout.tw,
        "params": m.param_count(),
        "nonzero_params": m.nonzero_param_count(),
        "depth": st.depth,
        "width": st.width,
        "live_width": build.live_width,
        "size": st.size,
        "linear_stages": len(lin),
        "mul_stages": len(mul),
        "bbstar": sum(cast(int, r["bbstar"]) for r in lin),
        "sequence_gadgets": build.counts.get("sequence", 0),
        "channel_gadgets": build.counts.get("channel", 0),
        "diagonal_gadgets": build.counts.get("diagonal", 0),
        "sum_layers": build.counts.get("sum", 0),
        "mul_layers": 2 * len(mul),
        "stages_in_certificate": build.certificate.num_stages,
        "layers_c21": L,
        "layers_thm": L,
        "L_over_delta_log2_w": round(L / denom, 3),
        "inner_n_over_w": Fraction(m.inner_n, st.width),
    }


def compile_kaleidoscope(circuit: Circuit, *, max_cells: int | None = None, name: str = "", plan: str = "auto",
                         **unknown: Any) -> Compiled:
    """Compile ``circuit`` by Theorem H.21 into a ``Compiled`` (model, certificate, resources, bounds).

    Args:
        circuit: any circuit (symbolic coefficients allowed).
        max_cells: refuse (CompileError) when the inner state ``N'·d'`` would exceed this (a positive
            int, a numpy integer by its value; ``None``, the
            default: :data:`symverify.ir.limits.MAX_CELLS` as it is at the call).
        name: the model's name (default: the circuit's name + ``_kaleidoscope``; empty for an unnamed circuit).
        plan: how the positions of the states are chosen: ``"exact"`` (the fewest layers in all
            over the layouts offered, every route's layers counted from its shape; it may take a larger
            ``N_k``, within the stated size, to save layers), ``"greedy"`` (stage by stage by
            estimated factor counts: much faster on wide or deep circuits) or ``"auto"`` (exact
            when ``N_k·(Δ + 1) ≤`` :data:`~.h21.planner.EXACT_PLAN_WORK` (768): ``w ≤ 16`` up
            to ``Δ = 11``, ``w ≤ 32`` up to ``Δ = 5``, ``w ≤ 64`` up to ``Δ = 2``; and
            greedy when the exact layout would exceed ``max_cells`` but the greedy one does not).
            Every plan meets the same stated bounds.

    Raises:
        CompileError: listing every reason the circuit cannot be compiled (no partial model),
            including unknown options.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> out = compile_kaleidoscope(Circuit(1, 2, (Gate.mul(0, 1),), (2,)))
    >>> out.model.signature, out.method, out.over_bound()
    ((1, 6, 2, 9, 2), 'kaleidoscope', [])
    """
    from symverify.compiler.h21 import PLANS, build_model, prepare
    from symverify.compiler.result import Compiled, source_meta

    problems = []
    if unknown:
        problems.append(f"unknown options {sorted(unknown)} (expected max_cells, name, plan)")
    bad_plan = not isinstance(plan, str) or plan not in PLANS
    if bad_plan:
        problems.append(f"plan: expected one of {list(PLANS)}, found {plan!r}")
    if not isinstance(name, str):
        problems.append(f"name: expected a str, found {type(name).__name__} {safe_repr(name, 40)}")
    max_cells = plain_index(max_cells)  # type: ignore[assignment]  # a numpy integer by its value
    if max_cells is None:
        max_cells = limits.MAX_CELLS  # read now: a caller may have raised or lowered the limit
    elif not isinstance(max_cells, int) or isinstance(max_cells, bool) or max_cells < 1:
        problems.append(f"max_cells: expected a positive int, found {safe_repr(max_cells, 40)}")
        max_cells = limits.MAX_CELLS  # sized anyway, so that every problem is listed
    if not isinstance(circuit, Circuit):
        problems.append(f"expected a Circuit, found {type(circuit).__name__}")
        raise CompileError("compile (method 'kaleidoscope'): " + "; ".join(problems))
    check_state(circuit, "compile(method='kaleidoscope')")
    def cells_of(p: Prepared) -> int:
        return int(p.layout.rows * p.layout.width)

    chosen = "auto" if bad_plan else plan
    prepared = prepare(circuit, chosen, max_cells)  # sized anyway, so that every problem is listed
    if cells_of(prepared) > max_cells and chosen == "auto" and prepared.exact:  # the exact plan may trade size for layers
        greedy = prepare(circuit, "greedy", max_cells)
        if cells_of(greedy) < cells_of(prepared):
            prepared = greedy
    lay, cells = prepared.layout, cells_of(prepared)
    if cells > max_cells:
        problems.append(
            f"the inner state would be {lay.rows}×{lay.width} = {cells} cells (N_k = {lay.size}), "
            f"more than max_cells = {max_cells}"
        )
    if problems:
        raise CompileError(f"compile {circuit.name or '<unnamed>'} (method 'kaleidoscope', Theorem H.21): " + "; ".join(problems))
    build = build_model(circuit, name, prepared)
    res = _resources(circuit, build)
    bounds = kaleidoscope_bounds(res["depth"], res["width"], res["d"], res["N_k"], res["linear_stages"], res["mul_stages"])
    cert = Certificate(build.certificate.boundaries, (*build.certificate.meta, *source_meta(circuit)))
    return Compiled(model=build.model, certificate=cert, resources=res, method="kaleidoscope", bounds=bounds)
