"""Differential check of the resources every construction records and of the bound columns of
the proof tables, against a recount written in this file.

A table row is only as true as its resource and bound columns. This file never reads a
resource the package computes to check another one: it recounts everything from the built
object itself and recomputes every bound from the formula docs/theory.md states.

* **Models** (:func:`recount_model`): the layer count, the inner ``N'×d'`` read from every
  layer's grids (``W`` is ``d'×d'``; ``b1``, ``h``, ``b2`` are ``N'×d'``), the dense parameter
  count ``L·(d'² + 3·N'·d')`` (docs/theory.md §1.2), the nonzero weights counted cell by cell
  from the dense grids, the cyclic layers, and the filter support (taps ``h[k, c] ≠ 0`` at
  lag ``k ≥ 1``, and the ``(layer, channel)`` pairs holding one).
* **Circuits** (:func:`measures`): size, level, depth and cut width exactly as docs/theory.md §2
  defines them, and the levels of the needed part that hold products.
* **Kaleidoscopes** (:func:`recount_kaleidoscope`): ``w`` = the BB* groups, each checked to hold
  ``2·log2 N`` factors of size ``N`` with strides ``N/2 … 1, 1 … N/2`` (§3), ``e = N/n`` and
  ``4·w·N·log2 N`` parameters.
* **Bounds** from the statements of docs/theory.md: the dense compiler (``L ≤ 2Δ + 5``,
  ``N' = n``, ``d' ≤ 2w``, params ``≤ (2Δ+5)·((2w)² + 3·n·2w)``), Theorem H.21
  (``8·(Δ+1)·(a+2) + 3``, ``24·max(Δ,1)·a + 27``, ``N_k ≤ 4·2^a``, ``N' = 3·(R + ⌊R/2⌋) ≤ 18·2^a/tw``,
  ``d' = d``), Lemma H.16 (``C16 = 3``), Lemma H.18 (``4·w'·log2 N_k + 1 (+4)``), Corollary H.20,
  Theorem H.19 (all three modes), Dao et al. Theorems 2 and 3 (both forms), the primitives table,
  Proposition H.10, Lemma H.11, the gated convolutions (docs/gated-convolutions.md: ``m + 3``
  layers, ``N' = N``, ``d' = (m+1)·d``) and the direct RetNet models (docs/retnet.md:
  ``k·(3G + 1)`` layers or ``3kG + 1`` fused, ``d' = d + group·d (+ d)``, ``N' = N``).
* Every row that states a bound must hold ``resource ≤ bound``, and ``over_bound()`` must say
  exactly that.

Inputs: hypothesis-drawn small circuits, permutations, sparse matrices and gadget arguments, and
the instances the proof scripts build (their own builders, loaded from ``proofs/``). The planted
bug tests show the recount failing on a compiler patched to record one layer less than it
builds, a bound function off by one, and a permutation construction that pads one size too far.

The default run takes a few seconds; ``SYMVERIFY_RESACCT_EXAMPLES=200`` draws more examples and
``SYMVERIFY_RESACCT_FULL=1`` also checks the full tiers of the proof scripts' instance lists.
"""

from __future__ import annotations

import importlib.util
import math
import os
import random
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify import strategies as svst
from symverify.compiler import compile
from symverify.compiler.butterfly_to_baseconv import kaleidoscope_model
from symverify.compiler.gated import h3_direct, hyena_direct
from symverify.compiler.retnet import retnet_direct, retnet_stack_direct
from symverify.errors import CompileError
from symverify.gadgets import primitives as prim
from symverify.gadgets.compose import compose
from symverify.gadgets.layout import channels_to_rows, rows_to_channels
from symverify.gadgets.remember import ChannelF, ConstF, remember_channels, remember_rows
from symverify.ir.build import from_matrix
from symverify.kaleidoscope import (
    SparseMatrix,
    linear_circuit_to_kaleidoscope,
    permutation_to_kaleidoscope,
    sparse_to_kaleidoscope,
    to_matrix,
)
from symverify.kaleidoscope.sparse_dao import sparse_to_kaleidoscope_thm3
from symverify.kernel.gadgets.fragment import Fragment
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import is_zero

EXAMPLES = int(os.environ.get("SYMVERIFY_RESACCT_EXAMPLES", "0"))
FULL = os.environ.get("SYMVERIFY_RESACCT_FULL", "") == "1"
FAST = settings(max_examples=EXAMPLES or 8, deadline=None, derandomize=not EXAMPLES)
PROOFS = Path(__file__).resolve().parent.parent / "proofs"


def _load(stem: str) -> ModuleType:
    """A proof script of this checkout (``symverify.proofs`` may resolve to another tree)."""
    spec = importlib.util.spec_from_file_location(f"resacct_{stem}", PROOFS / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---- the recount ------------------------------------------------------------------------------


def _ceil_log2(x: int) -> int:
    """``⌈log2 x⌉`` for ``x ≥ 1``, by doubling (no bit tricks shared with the package)."""
    k, p = 0, 1
    while p < x:
        p, k = 2 * p, k + 1
    return k


def _pow2_floor(d: int) -> int:
    """The track width ``tw``: the largest power of two ``≤ d``."""
    p = 1
    while 2 * p <= d:
        p *= 2
    return p


def _blocks(R: int) -> int:
    """``N'`` of the butterfly layout (docs/theory.md §4, Lemma H.16): three row blocks of ``R``
    rows, each followed by a gap of ``⌊R/2⌋`` zero rows: ``3·(R + ⌊R/2⌋)``, i.e. ``4.5·R`` for
    ``R ≥ 2`` and 3 rows at ``R = 1``."""
    return 3 * (R + R // 2)


def _exact_log2(x: int) -> int:
    k = _ceil_log2(x)
    assert 2**k == x, f"{x} is not a power of two"
    return k


def recount_layers(layers: Sequence[Layer]) -> dict[str, Any]:
    """Everything a construction records about a stack of layers, counted from the grids."""
    shapes = set()
    nonzero = taps = 0
    tap_channels = set()
    for i, layer in enumerate(layers):
        W = layer.W.to_rows()
        dd = len(W)
        assert all(len(r) == dd for r in W), f"layer {i}: W is not square"
        grids = {name: g.to_rows() for name, g in (("b1", layer.b1), ("h", layer.h), ("b2", layer.b2))}
        for name, rows in grids.items():
            assert all(len(r) == dd for r in rows), f"layer {i}: {name} is not N'×{dd}"
        nn = {len(rows) for rows in grids.values()}
        assert len(nn) == 1, f"layer {i}: b1, h, b2 have different lengths {nn}"
        shapes.add((nn.pop(), dd))
        for rows in (W, *grids.values()):
            nonzero += sum(1 for r in rows for v in r if not is_zero(v))
        for k, r in enumerate(grids["h"]):
            for c, v in enumerate(r):
                if k >= 1 and not is_zero(v):
                    taps += 1
                    tap_channels.add((i, c))
    assert len(shapes) <= 1, f"layers of different inner shapes {shapes}"
    return {"layers": len(layers), "shape": shapes.pop() if shapes else None, "nonzero_params": nonzero,
            "cyclic_layers": sum(1 for layer in layers if layer.mode is Mode.CYCLIC),
            "long_taps": taps, "long_channels": len(tap_channels)}


def recount_model(m: Model | Fragment) -> dict[str, Any]:
    """Layers, ``N'``, ``d'``, dense and nonzero parameters, cyclic layers and filter support."""
    r = recount_layers(m.layers)
    nn, dd = r.pop("shape") or (m.inner_n, m.inner_d)
    assert (nn, dd) == (m.inner_n, m.inner_d), f"the layers are {nn}×{dd}, the object says {m.inner_n}×{m.inner_d}"
    L = r["layers"]
    return {**r, "inner_n": nn, "inner_d": dd, "params": L * (dd * dd + 3 * nn * dd)}


def measures(c: Circuit) -> dict[str, Any]:
    """Size, depth and cut width of docs/theory.md §2, and the levels of needed products."""
    nd = c.num_inputs
    level = [0] * nd
    for g in c.gates:
        level.append(0 if g.op is Op.CONST else 1 + max(level[a] for a in g.args))
    depth = max((level[o] for o in c.outputs), default=0)
    last_read = [-1] * len(level)  # the highest level of a gate reading the node
    for k, g in enumerate(c.gates):
        for a in g.args:
            last_read[a] = max(last_read[a], level[nd + k])
    outs = set(c.outputs)
    width = 0
    for ell in range(depth + 1):
        live = {v for v in range(len(level)) if level[v] <= ell and (v in outs or last_read[v] > ell)}
        if ell == 0:
            live |= set(range(nd))
        width = max(width, len(live))
    needed, todo = set(), list(outs)
    while todo:
        v = todo.pop()
        if v in needed:
            continue
        needed.add(v)
        if v >= nd:
            todo.extend(c.gates[v - nd].args)
    mul_levels = {level[v] for v in needed if v >= nd and c.gates[v - nd].op is Op.MUL}
    # the layered form of the needed part (§2): between levels the live needed values, inside
    # level ℓ also one more slot per product (its operands v1, v2 are separate copies: 2k + m)
    read_by_needed = [-1] * len(level)
    for k, g in enumerate(c.gates):
        if nd + k in needed:
            for a in g.args:
                read_by_needed[a] = max(read_by_needed[a], level[nd + k])
    layered = max(nd, len(c.outputs))
    for ell in range(1, depth + 1):
        live = [v for v in needed if level[v] <= ell and (v in outs or read_by_needed[v] > ell)
                and not (v >= nd and c.gates[v - nd].op is Op.CONST)]  # constants are folded into offsets
        products = sum(1 for v in needed if v >= nd and level[v] == ell and c.gates[v - nd].op is Op.MUL)
        layered = max(layered, len(live) + products)
    return {"size": sum(1 for g in c.gates if g.op is not Op.CONST), "depth": depth, "width": width,
            "nodes": len(level), "mul_levels": len(mul_levels), "layered_width": layered}


def _compare(what: str, recorded: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    out = []
    for k, v in expected.items():
        if k not in recorded:
            out.append(f"{what}: {k} not recorded (recount {v})")
        elif recorded[k] != v:
            out.append(f"{what}: {k} recorded {recorded[k]!r}, recount {v!r}")
    return out


def _within(what: str, resources: Mapping[str, Any], bounds: Mapping[str, Any], over: Sequence[str] | None = None) -> list[str]:
    """Every bounded resource is ≤ its bound, and ``over_bound()`` (when given) names exactly the others."""
    bad = sorted(k for k, b in bounds.items() if k not in resources or Fraction(str(resources[k])) > Fraction(str(b)))
    out = [f"{what}: {k} = {resources.get(k)!r} exceeds its bound {bounds[k]!r}" for k in bad]
    if over is not None and sorted(over) != bad:
        out.append(f"{what}: over_bound() says {sorted(over)}, the recount {bad}")
    return out


# ---- compiled circuits --------------------------------------------------------------------------


def dense_doc_bounds(delta: int, w: int, n: int) -> dict[str, int]:
    """docs/theory.md §4, the dense baseline compiler."""
    L = 2 * delta + 5
    return {"layers": L, "inner_n": n, "inner_d": 2 * w, "params": L * ((2 * w) ** 2 + 3 * n * 2 * w)}


def dense_mismatches(c: Circuit, out: Any) -> list[str]:
    m, res = out.model, out.resources
    rc, me = recount_model(m), measures(c)
    what = f"dense {c.name}"
    errs = _compare(what, res, {k: rc[k] for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params", "cyclic_layers")})
    errs += _compare(what, res, {k: me[k] for k in ("depth", "width", "size")})
    # the layout layers of the doc: 2 moving the input into row 0 (none when n = 1), 2 moving the
    # outputs back (none when there are at most d of them); the rest is one layer per linear stage
    # and one per level with products
    layout = (2 if c.n > 1 else 0) + (2 if len(c.outputs) > c.d else 0)
    errs += _compare(what, res, {"layout_layers": layout, "level_layers": rc["layers"] - layout})
    linear = rc["layers"] - layout - me["mul_levels"]
    if not me["depth"] <= linear <= me["depth"] + 1:
        errs.append(f"{what}: {linear} linear stages for depth {me['depth']}")
    # N' = n and d' = max(n·d, widest state of the layered form)
    if m.signature != (c.n, rc["layers"], c.d, c.n, max(c.num_inputs, me["layered_width"])):
        errs.append(f"{what}: signature {m.signature} is not (n, L, d, n, max(n·d, {me['layered_width']}))")
    errs += _compare(f"{what} bounds", out.bounds, dense_doc_bounds(me["depth"], me["width"], c.n))
    errs += _within(what, res, out.bounds, out.over_bound())
    return errs


def h21_doc_bounds(delta: int, w: int, d: int, n_k: int, linear: int, mul: int) -> dict[str, int]:
    """docs/theory.md §4, Theorem H.21, with ``a = ⌈log2 max(w, 2)⌉``; ``layers`` from the
    instance's own stage counts and ``N_k``."""
    a = _ceil_log2(max(w, 2))
    tw = _pow2_floor(d)
    big = 4 * 2**a
    assert big % tw == 0 and big // tw >= 4, "tw ≤ d ≤ w ≤ 2^a"
    return {"layers": linear * (8 * _exact_log2(n_k) - 1) + mul + (0 if tw == d else 4),
            "layers_thm": 8 * (delta + 1) * (a + 2) + 3,
            "layers_c21": 24 * max(delta, 1) * a + 27,
            "linear_stages": delta + 1, "mul_stages": delta,
            "N_k": big, "inner_n": _blocks(big // tw), "inner_d": d}  # = 18·2^a/tw exactly (R ≥ 4)


def kaleidoscope_mismatches(c: Circuit, out: Any) -> list[str]:
    m, res = out.model, out.resources
    rc, me = recount_model(m), measures(c)
    what = f"kaleidoscope {c.name}"
    L = rc["layers"]
    tw = _pow2_floor(c.d)
    errs = _compare(what, res, {k: rc[k] for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params")})
    errs += _compare(what, res, {k: me[k] for k in ("depth", "width", "size")})
    errs += _compare(what, res, {"n": c.n, "d": c.d, "tw": tw, "layers_thm": L, "layers_c21": L,
                                 "mul_stages": me["mul_levels"], "mul_layers": 2 * me["mul_levels"],
                                 "L_over_delta_log2_w": round(L / (max(me["depth"], 1) * math.log2(max(me["width"], 2))), 3),
                                 "inner_n_over_w": Fraction(rc["inner_n"], me["width"])})
    if rc["cyclic_layers"] != L:
        errs.append(f"{what}: {L - rc['cyclic_layers']} causal layers (every H.21 layer is cyclic)")
    errs += _compare(what, res, {"live_width": me["layered_width"], "stages_in_certificate": out.certificate.num_stages})
    if me["layered_width"] > 2 * max(me["width"], 1):
        errs.append(f"{what}: the layered form holds {me['layered_width']} slots, more than 2w = {2 * me['width']}")
    # docs/theory.md §4, Lemma H.16 in a chain: 2 layers per sequence or channel factor (the
    # channel factor's sum fused into the next gadget), 1 per diagonal factor, 1 per closing sum,
    # 2 per multiplicative stage, and 2 gather + 2 scatter layers only when d is not a power of two
    # (the scatter is skipped when the outputs already sit at their cells)
    counted = (2 * res.get("sequence_gadgets", 0) + 2 * res.get("channel_gadgets", 0) + res.get("diagonal_gadgets", 0)
               + res.get("sum_layers", 0) + res.get("mul_layers", 0))
    if L - counted not in ((2, 4) if tw != c.d else (0,)):
        errs.append(f"{what}: the gadget counts add up to {counted} layers, the model has {L}")
    n_k = res.get("N_k", 0)
    if rc["inner_n"] != _blocks(n_k // tw) or n_k % tw or rc["inner_d"] != c.d:
        errs.append(f"{what}: N'×d' = {rc['inner_n']}×{rc['inner_d']} is not 3·(R + ⌊R/2⌋) × d (R = N_k/tw) for N_k = {n_k}, tw = {tw}")
    if m.signature[:3] != (c.n, L, c.d):
        errs.append(f"{what}: signature {m.signature}")
    doc = h21_doc_bounds(me["depth"], me["width"], c.d, n_k, res.get("linear_stages", 0), me["mul_levels"])
    errs += _compare(f"{what} bounds", out.bounds, doc)
    errs += _within(what, res, out.bounds, out.over_bound())
    return errs


_CIRCUITS = svst.circuits(max_n=3, max_d=3, max_gates=8, allow_sym=True)


@FAST
@given(_CIRCUITS)
def test_dense_compiler_records_what_it_builds(c):
    assert dense_mismatches(c, compile(c, method="dense")) == []


@FAST
@given(_CIRCUITS)
def test_kaleidoscope_compiler_records_what_it_builds(c):
    assert kaleidoscope_mismatches(c, compile(c)) == []


def _h21_cases(stem: str) -> list[Circuit]:
    mod = _load(stem)
    return list(mod.circuits(not FULL)) if hasattr(mod, "circuits") else []


def test_the_h21_and_h20_scripts_circuits_record_what_they_build():
    """The circuits of thm_h21_general and cor_h20_linear, compiled both ways as the scripts do."""
    mod = _load("thm_h21_general")
    cases = list(mod.edge_cases()) + ([c for c in mod.circuits(False)] if FULL else
                                      [c for c in mod.circuits(True) if c.num_inputs <= 9 and len(c.gates) <= 40])
    cases += _h21_cases("cor_h20_linear")
    assert len(cases) >= 10
    errs = []
    for c in cases:
        errs += kaleidoscope_mismatches(c, compile(c))
        errs += dense_mismatches(c, compile(c, method="dense"))
    assert errs == []


def test_the_thm_h21_general_rows_are_the_recount():
    """Every row of thm_h21_general (quick tier): its resource columns are the recount of the
    model the row's circuit compiles to, its bound columns the formulas of docs/theory.md."""
    mod = _load("thm_h21_general")
    circuits = {f"{c.name} {c.n}x{c.d}": c for c in mod.circuits(not FULL)}
    rows = [mod._instance(c) for c in (mod.circuits(not FULL) if FULL else mod.edge_cases())]
    errs = []
    for row in rows:
        c = circuits[row.name]
        out = compile(c)
        rc, me = recount_model(out.model), measures(c)
        recount = {**{k: rc[k] for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params")},
                   **{k: me[k] for k in ("depth", "width", "size")}, "mul_stages": me["mul_levels"],
                   "layers_thm": rc["layers"], "layers_c21": rc["layers"]}
        errs += _compare(f"row {row.name}", row.resources, recount)
        doc = h21_doc_bounds(me["depth"], me["width"], c.d, row.resources["N_k"], row.resources["linear_stages"], me["mul_levels"])
        errs += _compare(f"row {row.name} bounds", row.bounds, doc)
        errs += _within(f"row {row.name}", row.resources, row.bounds)
        if not row.ok:
            errs.append(f"row {row.name} is not ok")
    assert errs == []


def test_the_dense_baseline_rows_are_the_recount():
    mod = _load("thm_h21_dense_baseline")
    cases = list(mod.edge_cases())
    from symverify.library import standard_library

    cases += list(standard_library(True))[:6]
    errs = []
    for c in cases:
        row = mod._instance(c, exact=False)
        out = compile(c, method="dense")
        rc, me = recount_model(out.model), measures(c)
        recount = {**{k: rc[k] for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params", "cyclic_layers")},
                   **{k: me[k] for k in ("depth", "width", "size")}}
        errs += _compare(f"row {row.name}", row.resources, recount)
        errs += _compare(f"row {row.name} bounds", row.bounds, dense_doc_bounds(me["depth"], me["width"], c.n))
        errs += _within(f"row {row.name}", row.resources, row.bounds)
    assert errs == []


# ---- kaleidoscope factorizations ---------------------------------------------------------------


def recount_kaleidoscope(K: Any) -> dict[str, Any]:
    """``w``, ``N``, ``n``, ``e``, the factor count and ``4·w·N·log2 N``, from the groups."""
    N = K.size
    lg = _exact_log2(N)
    want = [N >> (j + 1) for j in range(lg)] + [1 << j for j in range(lg)]  # N/2 … 1, 1 … N/2
    for i, g in enumerate(K.groups):
        assert g.size == N, f"group {i} has size {g.size}, the kaleidoscope {N}"
        assert [f.size for f in g.factors] == [N] * len(want), f"group {i}: factor sizes"
        assert [f.stride for f in g.factors] == want, f"group {i}: strides {[f.stride for f in g.factors]}"
        for f in g.factors:
            assert all(len(x) == N // 2 for x in (f.d1, f.d2, f.d3, f.d4)), f"group {i}: a diagonal is not N/2 long"
    w = len(K.groups)
    return {"w": w, "N": N, "n": K.n, "e": Fraction(N, K.n), "factors": w * 2 * lg, "num_params": 4 * w * N * lg}


def factorization_mismatches(f: Any, expected_bounds: Mapping[str, Any], exact: Mapping[str, Any] = {}) -> list[str]:
    rk = recount_kaleidoscope(f.kaleidoscope)
    what = f.theorem
    errs = _compare(what, f.resources, {k: rk[k] for k in ("w", "N", "n", "e")})
    errs += _compare(what, {"num_params": f.kaleidoscope.num_params}, {"num_params": rk["num_params"]})
    errs += _compare(f"{what} bounds", f.bounds, expected_bounds)
    errs += _compare(what, f.resources, exact)
    errs += _within(what, f.resources, f.bounds, f.over_bound())
    return errs


@FAST
@given(st.integers(1, 40).flatmap(lambda n: st.permutations(list(range(n)))))
def test_permutations_record_one_bbstar_at_the_stated_size(perm):
    """Dao et al. Theorem 2 (docs/theory.md §3): w = 1 at N = 2^⌈log2 max(n, 2)⌉."""
    n = len(perm)
    f = permutation_to_kaleidoscope(perm)
    size = 2 ** _ceil_log2(max(n, 2))
    assert factorization_mismatches(f, {"w": 1, "N": size}, {"N": size}) == []


def _sparse(n: int, seed: int, density: float) -> SparseMatrix:
    rng = random.Random(seed)
    ents = {(i, j): rng.choice([1, -2, Fraction(1, 3)]) for i in range(n) for j in range(n) if rng.random() < density}
    return SparseMatrix.from_dict(n, n, ents)


def _thm3_width(n: int, s: int) -> int:
    """Dao et al. Theorem 3's width (docs/kaleidoscope.md §2.2): ``4⌈s/n⌉``, and 1 at ``s = 0``,
    where the paper's figure 0 would name ``(BB*)^0 = {I}``, which holds no zero matrix."""
    return 4 * -(-s // n) if s else 1


def test_the_zero_matrix_takes_one_bbstar_not_zero():
    """Theorem 3 at s = 0, decided (docs/kaleidoscope.md §2.2): ``(BB*)^0`` is the empty product,
    whose corner is ``I_n``, so the zero matrix needs one BB*; the stated width is
    ``max(1, 4⌈s/n⌉) = 1``, the construction takes exactly one (all-zero first factor), proved,
    and the ``(BB*)^5`` form records the same corrected figure."""
    from symverify.kaleidoscope.sparse_dao import thm3_width_bound
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.provers.matrix import verify_matrix

    for n in (1, 2, 3, 4, 5):
        size = 2 ** _ceil_log2(max(n, 2))
        assert to_matrix(Kaleidoscope(n, size, ())) == [[int(i == j) for j in range(n)] for i in range(n)]
        Z = SparseMatrix(n, n, ())
        f = sparse_to_kaleidoscope_thm3(Z)
        assert thm3_width_bound(n, 0) == _thm3_width(n, 0) == 1
        assert factorization_mismatches(f, {"w": 1, "N": 4 * 2 ** _ceil_log2(n), "e": Fraction(4 * 2 ** _ceil_log2(n), n),
                                            "e_pad": 4}, {"w": 1, "N": size, "s": 0, "pieces": 0}) == []
        assert verify_matrix(f, Z).proved
        assert sparse_to_kaleidoscope(Z).resources["paper_w"] == 1


@FAST
@given(st.integers(1, 9), st.integers(0, 10**6), st.sampled_from([0.0, 0.2, 0.5, 1.0]))
def test_sparse_matrices_record_the_stated_forms(n, seed, density):
    """Dao et al. Theorem 3 (docs/theory.md §3), both forms: ``(BB*)^5`` at
    ``N = 2^⌈log2 max(n, 2s, 2)⌉`` with ``e ≤ max(2, 4s/n)``; the paper's form with
    ``w = 2⌈s/(N − 2n)⌉ ≤ 4⌈s/n⌉``, ``N ≤ 4·2^⌈log2 n⌉`` (``w = 1`` at s = 0)."""
    M = _sparse(n, seed, density)
    s = M.nnz
    N5 = 2 ** _ceil_log2(max(n, 2 * s, 2))
    errs = factorization_mismatches(sparse_to_kaleidoscope(M), {"w": 5, "N": N5, "e": max(Fraction(2), Fraction(4 * s, n))},
                                    {"s": s, "paper_w": _thm3_width(n, s), "N": N5})
    f = sparse_to_kaleidoscope_thm3(M)
    npad = 2 ** _ceil_log2(n)
    N = f.kaleidoscope.size
    pieces = -(-s // (N - 2 * n)) if s else 0
    errs += factorization_mismatches(f, {"w": _thm3_width(n, s), "N": 4 * npad, "e": Fraction(4 * npad, n), "e_pad": 4},
                                     {"s": s, "pieces": pieces, "w": 2 * pieces if s else f.kaleidoscope.width})
    assert errs == []


@FAST
@given(svst.circuits(max_n=3, max_d=2, max_gates=10, linear=True))
def test_linear_circuits_record_the_h19_bounds(c):
    """Theorem H.19 (docs/theory.md §3): live mode ``w ≤ 5·max(Δ,1)``, ``N ≤ 8(w + n) − 1``,
    ``e < 8(w + n)/n``, live state ``W ≤ w``; size mode ``w ≤ 5(Δ+1)``, ``N ≤ 8s − 1``, ``e < 8s/n``
    with ``s`` every node, inputs included (``n`` here is ``n·d``, the matrix size); structured mode
    as :func:`structured_mismatches`."""
    me = measures(c)
    nd, D, w = c.num_inputs, me["depth"], me["width"]
    live = linear_circuit_to_kaleidoscope(c, "live")
    errs = factorization_mismatches(live, {"w": 5 * max(D, 1), "N": 8 * (w + nd) - 1, "e": Fraction(8 * (w + nd), nd),
                                           "live_width": w}, {"depth": D, "cut_width": w, "size": me["size"]})
    size = linear_circuit_to_kaleidoscope(c, "size")
    s = me["nodes"]
    errs += factorization_mismatches(size, {"w": 5 * (D + 1), "N": 8 * s - 1, "e": Fraction(8 * s, nd)},
                                     {"depth": D, "nodes": s})
    errs += structured_mismatches(c)
    assert errs == []


def structured_mismatches(c: Circuit) -> list[str]:
    """The structured mode (docs/kaleidoscope.md §2.4, "Structured levels"): ≤ Δ + 1 one-factor
    levels and one Beneš routing, so ``w ≤ Δ + 2``, at most ``Δ + 1 + 2·log2 N`` non-identity
    factors (recounted from the diagonals), ``N ≤ 2^⌈log2 max(w, 2)⌉`` and ``e`` that over ``n``;
    when some level is not one factor, exactly the live result."""
    me = measures(c)
    D, w = me["depth"], me["width"]
    sf = linear_circuit_to_kaleidoscope(c, "structured")
    if "factors" not in sf.resources:
        live = linear_circuit_to_kaleidoscope(c, "live")
        same = (sf.theorem, dict(sf.resources), dict(sf.bounds)) == (live.theorem, dict(live.resources), dict(live.bounds))
        return [] if same else [f"structured {c.name}: the fallback is not the live result"]
    K = sf.kaleidoscope
    moving = sum(1 for g in K.groups for f in g.factors
                 if any(x != 1 for x in (*f.d1, *f.d4)) or any(not is_zero(x) for x in (*f.d2, *f.d3)))
    top = 2 ** _ceil_log2(max(w, 2))
    return factorization_mismatches(sf, {"w": D + 2, "factors": D + 1 + 2 * _exact_log2(K.size), "N": top,
                                         "e": Fraction(top, c.num_inputs)},
                                    {"factors": moving, "depth": D, "cut_width": w})


def test_the_structured_mode_records_the_bounds_of_its_section():
    """docs/kaleidoscope.md §2.4 on circuits that take the structured route (Walsh–Hadamard levels,
    outputs routed back by one Beneš permutation) and on one that falls back (prefix sums):
    recount against the stated bounds; one BB* of ``log2 N`` factors for a Walsh–Hadamard
    transform; the reversed outputs cost a second BB*, within ``Δ + 2``; every one proved."""
    from symverify import library as lib
    from symverify.kernel.provers.matrix import verify_circuit

    wht = lib.walsh_hadamard(8)
    reversed_wht = Circuit(wht.n, wht.d, wht.gates, tuple(reversed(wht.outputs)), "reversed WHT 8")
    cases = [wht, lib.walsh_hadamard(4, 2), lib.walsh_hadamard(16), reversed_wht, lib.prefix_sums(4, 2)]
    errs = [e for c in cases for e in structured_mismatches(c)]
    assert errs == []
    for c in cases:
        f = linear_circuit_to_kaleidoscope(c, "structured")
        assert verify_circuit(f, c).proved, c.name
    one = linear_circuit_to_kaleidoscope(lib.walsh_hadamard(16), "structured")
    assert (one.resources["w"], one.resources["factors"], one.resources["N"], one.bounds["N"]) == (1, 4, 16, 16)
    routed = linear_circuit_to_kaleidoscope(reversed_wht, "structured")
    assert routed.resources["w"] == 2 <= routed.bounds["w"] == 5 and routed.resources["factors"] > 3
    assert "factors" not in linear_circuit_to_kaleidoscope(lib.prefix_sums(4, 2), "structured").resources


def test_the_dao_and_h19_script_rows_are_within_their_doc_bounds():
    """Rows of dao_thm2_permutations, dao_thm3_sparse and thm_h19_linear_circuits (quick tier):
    every bound column is the formula of docs/theory.md §3 for the row's own ``n``, ``s``, ``Δ``
    and ``w``, and every resource is within it."""
    errs = []
    for row in _load("dao_thm2_permutations").run(True).instances:
        r = row.resources
        errs += _compare(f"thm2 {row.name}", row.bounds, {"w": 1, "N": 2 ** _ceil_log2(max(r["n"], 2))})
        errs += _compare(f"thm2 {row.name}", r, {"e": Fraction(r["N"], r["n"])})
        errs += _within(f"thm2 {row.name}", r, row.bounds)
    for row in _load("dao_thm3_sparse").run(True).instances:
        r = row.resources
        if "s" not in r:  # every row states s: a renamed column must not skip the row unchecked
            errs.append(f"thm3 {row.name}: no 's' column")
            continue
        s, n = r["s"], r["n"]
        if "paper_w" in r:
            want = {"w": 5, "N": 2 ** _ceil_log2(max(n, 2 * s, 2)), "e": max(Fraction(2), Fraction(4 * s, n))}
        else:
            npad = 2 ** _ceil_log2(n)
            want = {"w": _thm3_width(n, s), "N": 4 * npad, "e": Fraction(4 * npad, n), "e_pad": 4}
        errs += _compare(f"thm3 {row.name}", row.bounds, want)
        errs += _within(f"thm3 {row.name}", r, row.bounds)
    for row in _load("thm_h19_linear_circuits").run(True).instances:
        r = row.resources
        if "cut_width" not in r:  # as above: every row of the script states its cut width
            errs.append(f"h19 {row.name}: no 'cut_width' column")
            continue
        D, w, n = r["depth"], r["cut_width"], r["n"]
        if "live_width" in r:
            want = {"w": 5 * max(D, 1), "N": 8 * (w + n) - 1, "e": Fraction(8 * (w + n), n), "live_width": w}
        elif "nodes" in r:
            want = {"w": 5 * (D + 1), "N": 8 * r["nodes"] - 1, "e": Fraction(8 * r["nodes"], n)}
        else:
            errs.append(f"h19 {row.name}: neither 'live_width' nor 'nodes' (no stated form to check)")
            continue
        errs += _compare(f"h19 {row.name}", row.bounds, want)
        errs += _within(f"h19 {row.name}", r, row.bounds)
    assert errs == []


# ---- Lemmas H.16 and H.18 ----------------------------------------------------------------------


def test_the_lemma_h16_rows_are_the_recount():
    """Each row's model rebuilt and recounted; bounds 2 layers on the sequence axis and ``C16 = 3`` on the
    channel axis, ``N' = 3·(R + R/2)``, ``d' = d``."""
    mod = _load("lemma_h16_butterfly")
    from symverify.compiler.butterfly_to_baseconv import factor_model

    sweep = mod.sweep(not FULL)
    errs = []
    for rows, d, stride in sweep[:: 1 if FULL else 5]:
        row = mod._instance(rows, d, stride)
        _circ, chain = factor_model(mod.symbolic_factor(rows * d, stride), d)
        rc = recount_model(chain.model)
        errs += _compare(f"h16 {row.name}", row.resources, {k: rc[k] for k in ("layers", "inner_n", "inner_d")})
        errs += _compare(f"h16 {row.name}", row.resources, {"symbols": len(chain.model.params())})
        errs += row_mismatches("lemma_h16_butterfly", row)
        errs += _compare(f"h16 {row.name} bounds", row.bounds, {"layers": 2 if stride >= d else 3, "inner_n": 3 * (rows + rows // 2), "inner_d": d})
        errs += _within(f"h16 {row.name}", row.resources, row.bounds)
        # the doc: 2 layers on the sequence axis (s ≥ tw), 3 on the channel axis, in N' = 3·(R + ⌊R/2⌋)
        if rc["layers"] != (2 if stride >= d else 3) or rc["inner_n"] != _blocks(rows):
            errs.append(f"h16 {row.name}: {rc['layers']} layers, N' = {rc['inner_n']}")
    assert errs == []


def h18_doc_bounds(w: int, size: int, n: int, d: int) -> dict[str, int]:
    """docs/theory.md §4, Lemma H.18 (and the script's a-priori ``N_k``): ``L ≤ 4·w'·log2 N_k + 1``
    (+ 4), ``N' = 3·(R + ⌊R/2⌋)`` with ``R = N_k/tw``, ``d' = d``; ``w' = w + 2`` when d is not a power of two."""
    tw = _pow2_floor(d)
    gathered = tw != d
    n_k = max(size, 2 ** _ceil_log2(2 * n * tw)) if gathered else size
    wp = w + (2 if gathered else 0)
    return {"layers": 4 * wp * _exact_log2(n_k) + 1 + (4 if gathered else 0), "N_k": n_k, "inner_n": _blocks(n_k // tw),
            "inner_d": d}


def test_the_layout_at_one_track_row_has_three_rows():
    """docs/theory.md §4: ``N' = 3·(R + ⌊R/2⌋)``, ``R = N_k/tw``, which is 3 rows, not ``4.5·R``,
    at ``R = 1``: Theorem H.21 on an identity with n = 1, d = 2 (``N_k = tw = 2``) and Lemma H.18
    on a swap of size 2 (the script's own instance); the stated H.21 bound stays ``18·2^a/tw``."""
    from symverify.compiler.layout import inner_length

    assert [inner_length(R) for R in (1, 2, 4, 8)] == [_blocks(R) for R in (1, 2, 4, 8)] == [3, 9, 18, 36]
    c = Circuit(1, 2, (), (0, 1), "identity 1x2")
    out = compile(c)
    assert (out.resources["N_k"], out.resources["tw"], out.resources["inner_n"]) == (2, 2, 3)
    assert recount_model(out.model)["inner_n"] == 3 and out.bounds["inner_n"] == 18 * 2 // 2
    assert kaleidoscope_mismatches(c, out) == [] and out.over_bound() == []
    mod = _load("lemma_h18_kaleidoscope")
    name, K, n, d = next(case for case in mod.cases(True) if case[1].size == 2)
    row = mod._instance(name, K, n, d)
    chain = kaleidoscope_model(K, n, d, from_matrix(to_matrix(K), n, d, name))
    assert recount_model(chain.model)["inner_n"] == row.resources["inner_n"] == row.bounds["inner_n"] == 3
    assert row.ok and h18_doc_bounds(K.width, K.size, n, d)["inner_n"] == 3


def test_the_lemma_h18_rows_are_the_recount():
    mod = _load("lemma_h18_kaleidoscope")
    errs = []
    for name, K, n, d in mod.cases(not FULL):
        row = mod._instance(name, K, n, d)
        chain = kaleidoscope_model(K, n, d, from_matrix(to_matrix(K), n, d, name))
        rc = recount_model(chain.model)
        errs += _compare(f"h18 {name}", row.resources, {k: rc[k] for k in ("layers", "inner_n", "inner_d")})
        errs += _compare(f"h18 {name}", row.resources, {"w": recount_kaleidoscope(K)["w"]})
        errs += _compare(f"h18 {name} bounds", row.bounds, h18_doc_bounds(K.width, K.size, n, d))
        errs += _within(f"h18 {name}", row.resources, row.bounds)
        if rc["inner_n"] != _blocks(row.resources["N_k"] // _pow2_floor(d)):
            errs.append(f"h18 {name}: N' = {rc['inner_n']} is not 3·(R + ⌊R/2⌋), R = N_k/tw")
    assert errs == []


def test_the_cor_h20_literal_rows_are_within_the_doc_bounds():
    """Corollary H.20, literal route: ``w_K ≤ 5·max(Δ,1)``, ``N_k ≤ 16w``,
    ``L ≤ 4·w'·(⌈log2 w⌉ + 4) + 1 (+4)``, ``d' = d``, with ``w' = w_K (+2)`` for the instance and
    ``5·max(Δ,1) (+2)`` for the stated worst case."""
    mod = _load("cor_h20_linear")
    errs = []
    for c in mod.circuits(not FULL):
        row = mod.literal(c, exact=False)
        me = measures(c)
        D, w = me["depth"], me["width"]
        g = _pow2_floor(c.d) != c.d
        K = linear_circuit_to_kaleidoscope(c, "live").kaleidoscope
        chain = kaleidoscope_model(K, c.n, c.d, c)
        rc = recount_model(chain.model)
        errs += _compare(f"h20 {row.name}", row.resources, {"depth": D, "width": w, "w_K": len(K.groups), "layers": rc["layers"],
                                                            "layers_thm": rc["layers"], "inner_n": rc["inner_n"], "inner_d": rc["inner_d"]})
        lw = _ceil_log2(w) + 4
        want = {"w_K": 5 * max(D, 1), "N_k": 16 * w, "inner_d": c.d,
                "layers": 4 * (5 * max(D, 1) + (2 if g else 0)) * lw + 1 + (4 if g else 0),
                "layers_thm": 4 * (len(K.groups) + (2 if g else 0)) * lw + 1 + (4 if g else 0)}
        errs += _compare(f"h20 {row.name} bounds", row.bounds, want)
        errs += _within(f"h20 {row.name}", row.resources, row.bounds)
    assert errs == []


# ---- gadgets ------------------------------------------------------------------------------------


def fragment_mismatches(frag: Fragment, layers: int, cyclic: int | None = None) -> list[str]:
    """The fragment's resources against the recount, its stated bound against the doc's count."""
    rc = recount_model(frag)
    res = frag.resources()
    errs = _compare(frag.name, res, {k: rc[k] for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params", "cyclic_layers")})
    errs += _compare(f"{frag.name} bounds", frag.bounds, {"layers": layers})
    if rc["layers"] != layers:
        errs.append(f"{frag.name}: {rc['layers']} layers, the doc states {layers}")
    if cyclic is not None and rc["cyclic_layers"] != cyclic:
        errs.append(f"{frag.name}: {rc['cyclic_layers']} cyclic layers, the doc states {cyclic}")
    errs += _within(frag.name, res, frag.bounds, frag.over_bound())
    return errs


@FAST
@given(st.integers(1, 5), st.integers(1, 3), st.data())
def test_primitives_take_the_layers_of_the_doc_table(nn, dd, data):
    """docs/theory.md §4, the table of primitives: 1 layer each (shift_up and the cyclic shift
    cyclic, shift_down causal), ``add`` 2 causal layers."""
    s = data.draw(st.integers(0, nn - 1))
    W = Grid.from_rows([[data.draw(st.integers(-1, 1)) for _ in range(dd)] for _ in range(dd)])
    B = Grid.from_rows([[data.draw(st.integers(-1, 1)) for _ in range(dd)] for _ in range(nn)])
    frags: list[tuple[Fragment, int, int | None]] = [
        (prim.linear_map(W, nn), 1, None), (prim.identity(nn, dd), 1, None), (prim.convolution(B), 1, 0),
        (prim.fixed_gate(B), 1, None), (prim.constant(B), 1, None), (prim.shift_down(nn, dd, s), 1, 0),
        (prim.shift_up(nn, dd, s), 1, 1), (prim.cyclic_shift(nn, dd, s), 1, 1)]
    if nn >= 2:
        frags.append((prim.running_add(data.draw(st.integers(1, nn // 2)), nn, dd), 2, 0))
    errs = [e for f, L, cyc in frags for e in fragment_mismatches(f, L, cyc)]
    assert errs == []


@FAST
@given(st.integers(1, 2), st.integers(0, 2), st.booleans(), st.integers(1, 3), st.data())
def test_remember_takes_the_layers_of_proposition_h10(a, b, lag0, dd, data):
    """Proposition H.10 (docs/theory.md §4): rows form 1 layer when h has taps at lag 0 only or r
    is empty, else 2 (``N' ≥ 2(a + b)``); channels form always 1."""
    nn = 2 * (a + b) + data.draw(st.integers(0, 1))
    h = Grid.from_rows([[data.draw(st.integers(-1, 2)) if (k == 0 or not lag0) else 0 for _ in range(dd)] for k in range(a)],
                       a, dd)
    F = Grid.from_rows([[data.draw(st.integers(-1, 2)) for _ in range(dd)] for _ in range(a)], a, dd)
    rows = remember_rows(nn, dd, a, b, h, ConstF(F))
    two = any(not is_zero(v) for r in h.to_rows()[1:] for v in r) and b > 0
    errs = fragment_mismatches(rows, 2 if two else 1)
    m = data.draw(st.integers(1, 3))
    hc = Grid.from_rows([[data.draw(st.integers(-1, 2)) for _ in range(a)] for _ in range(m)], m, a)
    ch = remember_channels(m, a + b + a, a, b, hc, ChannelF(tuple(range(a + b, 2 * a + b))), m)
    errs += fragment_mismatches(ch, 1)
    assert errs == []


@FAST
@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 2))
def test_layout_gadgets_and_composition_add_up(n, d, extra):
    """The dense compiler's layout gadgets (docs/theory.md §4: 2 layers, none when n = 1; 2 causal
    layers back, none when there are at most d outputs) and Lemma H.11 (layers add up)."""
    nd = n * d
    dd = nd + extra
    fin = rows_to_channels(n, d, n, dd)
    m = min(nd, dd)
    fout = channels_to_rows(m, d, n, dd)
    errs = fragment_mismatches(fin, 2 if n > 1 else 0)
    errs += fragment_mismatches(fout, 2 if m > d else 0, 0)
    both = compose(fin, fout)
    errs += fragment_mismatches(both, fin.depth + fout.depth)
    assert errs == []


# ---- gated convolutions and RetNet -------------------------------------------------------------


def compiled_mismatches(out: Any, keys: Sequence[str], stated: Mapping[str, Any]) -> list[str]:
    rc = recount_model(out.model)
    errs = _compare(out.method, out.resources, {k: rc[k] for k in keys})
    errs += _compare(f"{out.method} bounds", out.bounds, stated)
    errs += _within(out.method, out.resources, out.bounds, out.over_bound())
    return errs


@FAST
@given(st.integers(1, 5), st.integers(1, 3), st.integers(2, 3))
def test_gated_convolutions_record_what_they_build(N, d, order):
    """docs/gated-convolutions.md: order m takes m + 3 causal layers, ``N' = N``, ``d' = (m+1)·d``."""
    keys = ("layers", "inner_n", "inner_d", "params", "nonzero_params", "cyclic_layers", "long_channels")
    errs = []
    for out, m in ((hyena_direct(N, d, order), order), (h3_direct(N, d), 2)):
        errs += compiled_mismatches(out, keys, {"layers": m + 3, "inner_n": N, "inner_d": (m + 1) * d, "cyclic_layers": 0})
        if recount_model(out.model)["layers"] != m + 3:
            errs.append(f"{out.method}: not m + 3 layers")
    assert errs == []


@FAST
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_retnet_direct_models_record_what_they_build(N, d, data):
    """docs/retnet.md: ``G = ⌈d/group⌉``; one layer ``3G + 1`` causal layers, k layers ``k·(3G+1)``
    or ``3kG + 1`` fused; ``N' = N``; ``d' = d + group·d`` (+ d when G > 1)."""
    group = data.draw(st.integers(1, d))
    k = data.draw(st.integers(1, 2))
    fuse = data.draw(st.booleans())
    G = -(-d // group)
    dd = d + group * d + (d if G > 1 else 0)
    keys = ("layers", "inner_n", "inner_d", "params", "nonzero_params", "cyclic_layers", "long_channels", "long_taps")
    one = retnet_direct(N, d, group=group)
    errs = compiled_mismatches(one, keys, {"layers": 3 * G + 1, "inner_n": N, "inner_d": dd, "cyclic_layers": 0})
    stack = retnet_stack_direct(N, d, k, group=group, fuse=fuse)
    L = 3 * k * G + 1 if fuse else k * (3 * G + 1)
    errs += compiled_mismatches(stack, keys, {"layers": L, "inner_n": N, "inner_d": dd, "cyclic_layers": 0})
    for out, want in ((one, 3 * G + 1), (stack, L)):
        if recount_model(out.model)["layers"] != want:
            errs.append(f"{out.method}: {recount_model(out.model)['layers']} layers, the doc states {want}")
    assert errs == []


def test_the_cor_h22_rows_are_the_recount():
    """Corollary H.22 (docs/retnet.md): the RetNet circuit's depth ``N + 1 + max(1, ⌈log2 d⌉) +
    ⌈log2 d⌉``, both compilers' rows against their recount and the doc's bounds, and the ratio
    columns recomputed."""
    from symverify.library import retnet

    mod = _load("cor_h22_retnet")
    errs: list[str] = []
    for N, d in ((2, 2),) if not FULL else ((2, 2), (3, 1), (4, 2), (3, 3)):
        c = retnet(N, d)
        me = measures(c)
        lg = _ceil_log2(d)
        for method in ("dense", "kaleidoscope"):
            row = mod._h21(N, d, method, [])
            out = compile(c, method=method)
            rc = recount_model(out.model)
            what = f"h22 {row.name}"
            errs += _compare(what, row.resources, {"circuit_depth": me["depth"], "width": me["width"],
                                                   **{k: rc[k] for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params",
                                                                         "cyclic_layers")},
                                                   "params_per_layer_over_Nd": Fraction(rc["params"], rc["layers"] * N * d),
                                                   "layers_over_N_log2_2d": round(rc["layers"] / (N * math.log2(2 * d)), 2)})
            doc = (dense_doc_bounds(me["depth"], me["width"], N) if method == "dense" else
                   h21_doc_bounds(me["depth"], me["width"], d, out.resources["N_k"], out.resources["linear_stages"], me["mul_levels"]))
            errs += _compare(f"{what} bounds", row.bounds, {**doc, "circuit_depth": N + 1 + max(1, lg) + lg})
            errs += _within(what, row.resources, row.bounds)
        for group in sorted({1, d}):
            row = mod._direct(N, d, group, [])
            rc = recount_model(retnet_direct(N, d, group=group).model)
            errs += _compare(f"h22 {row.name}", row.resources, {**{k: rc[k] for k in ("layers", "inner_n", "inner_d", "params",
                                                                                        "nonzero_params", "cyclic_layers",
                                                                                        "long_channels")},
                                                                "params_per_layer_over_Nd": Fraction(rc["params"], rc["layers"] * N * d)})
            errs += _within(f"h22 {row.name}", row.resources, row.bounds)
    assert errs == []


def test_the_thm_h21_sweep_circuits_have_the_stated_shape_and_record_what_they_build():
    """thm_h21_sweep's layered circuits: cut width exactly w, depth exactly Δ, size w·Δ (its
    docstring); compiled as the script does, each recount matches."""
    mod = _load("thm_h21_sweep")
    cases = mod.cases(not FULL) if FULL else [(8, 2, 0, "kaleidoscope"), (8, 2, 1, "dense"), (16, 2, 0, "kaleidoscope")]
    errs = []
    for w, depth, seed, compiler in cases:
        c = mod.layered_circuit(w, depth, seed)
        me = measures(c)
        errs += _compare(c.name, me, {"width": w, "depth": depth, "size": w * depth})
        out = compile(c, method=compiler)
        errs += (kaleidoscope_mismatches if compiler == "kaleidoscope" else dense_mismatches)(c, out)
    assert errs == []


# ---- the tables of the docs --------------------------------------------------------------------

ROOT = PROOFS.parent


def _table_rows(path: str, header: str) -> list[list[str]]:
    """The rows of the markdown table in ``path`` whose header line starts with ``header``."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _number(cell: str) -> int:
    return int(cell.replace(" ", "").replace("\u202f", "").replace("\u2009", ""))


def _gated_builds(name: str, N: int, d: int) -> Any:
    from symverify.library_gated import h3, hyena

    kind, _, route = name.partition(":")
    order = 3 if "order 3" in kind else 2
    if "direct" in route:
        return hyena_direct(N, d, order) if kind.startswith("Hyena") else h3_direct(N, d)
    circuit = hyena(N, d, order) if kind.startswith("Hyena") else h3(N, d)
    return compile(circuit, method="dense" if "dense" in route else "kaleidoscope")


def test_the_gated_convolution_table_is_the_recount():
    """docs/gated-convolutions.md: every row's layers, N', d' and dense parameters are the recount
    of the model it names (the H.21 kaleidoscope rows only with ``SYMVERIFY_RESACCT_FULL=1``)."""
    errs = []
    rows = _table_rows("docs/gated-convolutions.md", "| N | d | construction |")
    assert len(rows) >= 6
    for N_, d_, name, layers, nn, dd, params in rows:
        if "kaleidoscope" in name and not FULL:
            continue
        rc = recount_model(_gated_builds(name, _number(N_), _number(d_)).model)
        errs += _compare(f"gated-convolutions.md {N_}x{d_} {name}", {"layers": _number(layers), "inner_n": _number(nn),
                                                                      "inner_d": _number(dd), "params": _number(params)},
                         {k: rc[k] for k in ("layers", "inner_n", "inner_d", "params")})
    assert errs == []


def test_the_readme_retnet_table_is_the_recount():
    """README.md, RetNet at N = 16, d = 4: the direct rows (and with ``SYMVERIFY_RESACCT_FULL=1``
    the H.21 routes) are the recount of the models they name; the causal lower bound is
    ``3·N·d(d+1)/2``."""
    from symverify.library import retnet

    N, d = 16, 4
    errs = []
    rows = {r[0]: r for r in _table_rows("README.md", "| construction | layers | N' | d' | dense params |")}
    lower = rows["lower bounds"][4]
    if f"= {3 * N * d * (d + 1) // 2}" not in lower:
        errs.append(f"README: the causal lower bound is not 3·N·d(d+1)/2 = {3 * N * d * (d + 1) // 2}: {lower}")
    builds: dict[str, Any] = {"direct, `retnet_direct(group=d)`": lambda: retnet_direct(N, d, group=d),
                              "direct, `group=2`": lambda: retnet_direct(N, d, group=2),
                              "direct, `group=1`": lambda: retnet_direct(N, d, group=1)}
    if FULL:
        builds['H.21 route, `compile(method="dense")`'] = lambda: compile(retnet(N, d), method="dense")
        builds['H.21 route, `compile(method="kaleidoscope")`'] = lambda: compile(retnet(N, d))
    for name, build in builds.items():
        _, layers, nn, dd, params, nonzero, _mode = rows[name]
        rc = recount_model(build().model)
        errs += _compare(f"README {name}", {"layers": _number(layers), "inner_n": _number(nn), "inner_d": _number(dd),
                                            "params": _number(params), "nonzero_params": _number(nonzero)},
                         {k: rc[k] for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params")})
    assert errs == []


# ---- every table: the dense parameter column ---------------------------------------------------

_CHEAP_SCRIPTS = ("primitives", "primitives_handwritten", "prop_h10_remember", "lemma_h11_composition",
                  "thm_h21_dense_baseline", "causal_limit", "dao_thm2_permutations")
_MORE_SCRIPTS = ("lemma_h16_butterfly", "lemma_h18_kaleidoscope", "thm_h21_general", "cor_h20_linear", "cor_h22_retnet",
                 "hyena_direct", "h3_direct", "thm_h21_product_gadget", "thm_h21_sweep")


def row_mismatches(script: str, row: Any) -> list[str]:
    """A column called ``params`` is the dense count ``L·(d'² + 3·N'·d')`` of docs/theory.md §1.2
    (what every compiler and ``Model.param_count`` report), ``nonzero_params`` is at most it, and a
    proved row is within every bound it states."""
    r, what = row.resources, f"{script}: {row.name}"
    errs = []
    if all(k in r for k in ("layers", "inner_n", "inner_d", "params")):
        L, nn, dd = r["layers"], r["inner_n"], r["inner_d"]
        errs += _compare(what, r, {"params": L * (dd * dd + 3 * nn * dd)})
    if "nonzero_params" in r and "params" in r and r["nonzero_params"] > r["params"]:
        errs.append(f"{what}: nonzero_params {r['nonzero_params']} > params {r['params']}")
    if "cyclic_layers" in r and not (isinstance(r["cyclic_layers"], int) and 0 <= r["cyclic_layers"] <= r.get("layers", 0)):
        errs.append(f"{what}: cyclic_layers {r['cyclic_layers']!r} is not a count of at most {r.get('layers')} layers")
    if row.proved:
        errs += _within(what, r, row.bounds)
    return errs


@pytest.mark.parametrize("script", _CHEAP_SCRIPTS + (_MORE_SCRIPTS if FULL else ()))
def test_every_params_column_is_the_dense_count(script):
    rows = _load(script).run(True).instances
    assert rows
    assert [e for row in rows for e in row_mismatches(script, row)] == []


def test_the_causal_limit_records_cyclic_layers_as_a_count(monkeypatch):
    """causal_limit's ``cyclic_layers`` is the number of cyclic layers of the model the row names,
    as in every other script: recounted for the dense models and the causal broadcast, and a
    broadcast model with two cyclic layers (planted) is recorded as 2, not as a 0/1 flag."""
    mod = _load("causal_limit")
    models = {"every row := x_0 has a 2-layer causal model": mod.broadcast_model()}
    for c in (Circuit(2, 1, (), (1,), "output 0 := x_1"), Circuit(2, 1, (), (1, 1), "every row := x_1")):
        models[f"{c.name}: the dense (cyclic) model computes it"] = compile(c, method="dense").model
    rows = {row.name: row for row in mod.run(True).instances if "cyclic_layers" in row.resources}
    assert sorted(rows) == sorted(models)
    for name, row in rows.items():
        rc = recount_model(models[name])
        assert (row.resources["cyclic_layers"], row.resources["layers"]) == (rc["cyclic_layers"], rc["layers"]), name
        assert row.ok, name
    shift = prim.cyclic_shift(2, 1, 1)
    planted = Model(2, 1, 2, 1, (*shift.layers, *shift.layers), "two cyclic shifts")
    monkeypatch.setattr(mod, "broadcast_model", lambda: planted)
    row = mod._causal_broadcast()
    assert row.resources["cyclic_layers"] == 2 and not row.ok


# ---- the recount catches planted bugs ----------------------------------------------------------


def test_planted_bug_a_compiler_that_builds_one_layer_more_than_it_records(monkeypatch):
    import symverify.compiler.kaleidoscope as kal

    c = _load("thm_h21_general").edge_cases()[0]
    assert kaleidoscope_mismatches(c, compile(c)) == []
    real = kal._resources

    def one_less(circuit: Circuit, build: Any) -> dict[str, Any]:
        res = real(circuit, build)
        return {**res, "layers": res["layers"] - 1}

    monkeypatch.setattr(kal, "_resources", one_less)
    # caught where the result is made: a compile result may not state fewer layers than its model has
    with pytest.raises(CompileError, match=r"resources\['layers'\]: expected at least"):
        compile(c)


def test_planted_bug_a_bound_off_by_one(monkeypatch):
    import symverify.compiler.dense as dense
    import symverify.compiler.kaleidoscope as kal

    c = _load("thm_h21_general").edge_cases()[0]
    real_k, real_d = kal.kaleidoscope_bounds, dense.dense_bounds
    monkeypatch.setattr(kal, "kaleidoscope_bounds", lambda *a: {**real_k(*a), "layers_thm": real_k(*a)["layers_thm"] + 1})
    monkeypatch.setattr(dense, "dense_bounds", lambda *a: {**real_d(*a), "layers": real_d(*a)["layers"] - 1})
    k_errs = kaleidoscope_mismatches(c, compile(c))
    d_errs = dense_mismatches(c, compile(c, method="dense"))
    assert any("bounds: layers_thm" in e for e in k_errs), k_errs
    assert any("bounds: layers" in e for e in d_errs), d_errs


def test_planted_bug_a_permutation_padded_one_size_too_far(monkeypatch):
    import symverify.kaleidoscope.permutation as pm

    real = pm.next_power_of_two
    monkeypatch.setattr(pm, "next_power_of_two", lambda n: 2 * real(n))
    f = pm.permutation_to_kaleidoscope([2, 0, 1])
    errs = factorization_mismatches(f, {"w": 1, "N": 4}, {"N": 4})
    assert any(e.endswith("bounds: N recorded 8, recount 4") for e in errs), errs
    assert any(e.endswith(": N recorded 8, recount 4") and "bounds" not in e for e in errs), errs


def test_planted_bug_a_gadget_with_an_extra_layer():
    frag = prim.shift_down(3, 2, 1)
    extra = Layer.make(3, 2, W=Grid.identity(2), b2=Grid.full(3, 2, 1))
    bad = Fragment(frag.name, frag.inner_n, frag.inner_d, (*frag.layers, extra), frag.entry, frag.exit, frag.bounds,
                   frag.build_spec)
    assert fragment_mismatches(frag, 1, 0) == []
    errs = fragment_mismatches(bad, 1, 0)
    assert any("exceeds its bound" in e for e in errs) and any("the doc states 1" in e for e in errs), errs


def test_measures_follow_the_doc_on_a_hand_example():
    """The in-test measures on a circuit counted by hand: x0·x1 (level 1) then + x0 (level 2);
    live sets {x0, x1} at level 0, {x0, g0} at 1, {g1} at 2: w = 2, Δ = 2, size 2."""
    from symverify.kernel.ir.circuit import Gate

    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0), Gate.const(3)), (3,))
    assert measures(c) == {"size": 2, "depth": 2, "width": 2, "nodes": 5, "mul_levels": 1, "layered_width": 3}
