"""Lemma H.16 in every compiled form (``factor_channel``, ``factor_sequence``: pending, pruned,
off-track channels; ``block_scale``: the diagonal factor and the closing sum) proved for all sizes,
and mutations of each — a wrong bit test, a gate on the wrong block, a tap off by one, a stride
misread — refuted at a concrete size no instance sweep contains, re-checked by instantiation (the
prover builds the instance, checks the witness's placement against ``assume`` at every cell and
evaluates the cell exactly before it reports a refutation)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from cases import replace_expr

from symverify.kernel.parametric.expr import bit, eq, ge, lt, pow2, var, where
from symverify.kernel.parametric.gadget import Gadget, tap
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import library as lib

i, q = var("i"), var("q")


def _mutate(g: Gadget, k: int, **fields: Any) -> Gadget:
    layers = list(g.layers)
    layers[k] = dataclasses.replace(layers[k], **fields)
    return dataclasses.replace(g, name=g.name + "_mutant", layers=tuple(layers))


def test_block_scale_proved_for_all_sizes_linear() -> None:
    """(``factor_channel`` is proved by tests/test_forall.py::test_library_proved_for_all_sizes.)"""
    res = prove_forall(lib.block_scale())
    assert res.verdict == "proved", str(res)
    assert "pend ∈ [0, 1]" in res.ranges and res.stats["encoding"] == "int"


# factor_channel at R = 2^9 (the sweeps stop at 2^8), tw ≤ 4, d ≤ 7: N'·d ≤ 2^14, so the re-check builds it
CH = {"r": (9, 9), "j": (2, 2), "d": (4, 7)}


def test_channel_wrong_bit_test_refuted() -> None:
    g = lib.factor_channel()
    e = var("e")
    mutant = _mutate(g, 1, b2=replace_expr(g.layers[1].b2, bit(q, e), bit(q, e + 1)))
    res = prove_forall(mutant, ranges={**CH, "e": (0, 0)})
    assert res.verdict == "refuted" and res.params["r"] == 9, str(res)


def test_channel_gate_on_wrong_block_refuted() -> None:
    g = lib.factor_channel()
    R = pow2(var("r"))
    S = R + (R >> 1)
    # B1's upper cells gated on B0's rows instead
    wrong = replace_expr(g.layers[1].b2, ge(i, S), ge(i, 0))
    res = prove_forall(_mutate(g, 1, b2=wrong), ranges=CH)
    assert res.verdict == "refuted", str(res)


def test_channel_pending_tap_dropped_refuted() -> None:
    g = lib.factor_channel()
    A = g.layers[0]
    R = pow2(var("r"))
    S = R + (R >> 1)
    taps = (A.h[0], A.h[1], tap(2 * S, 1, lt(q, pow2(var("j"))) & eq(var("x2"), 1)))  # a pending B1 is not summed
    res = prove_forall(_mutate(g, 0, h=taps), ranges={**CH, "pend": (1, 1)})
    assert res.verdict == "refuted" and res.params["pend"] == 1, str(res)


# block_scale at R ≥ 2^10, one channel: N' ≤ 4.5·2^11 < 2^14
BS = {"R": (1 << 10, 1 << 11), "tw": (1, 1), "d": (1, 1)}


def test_block_scale_tap_off_by_one_refuted() -> None:
    g = lib.block_scale()
    R = var("R")
    S = R + (R >> 1)
    taps = (g.layers[0].h[0], tap(2 * S + 1, 1, lt(q, var("tw")) & eq(var("pend"), 1)))
    res = prove_forall(_mutate(g, 0, h=taps), ranges={**BS, "pend": (1, 1)})
    assert res.verdict == "refuted" and res.params["R"] >= 1 << 10, str(res)


def test_block_scale_offset_on_wrong_block_refuted() -> None:
    g = lib.block_scale()
    R = var("R")
    S = R + (R >> 1)
    on_b1 = ge(i, S) & lt(i, S + R) & lt(q, var("tw"))
    res = prove_forall(_mutate(g, 0, b2=where(on_b1, 1)), ranges=BS)
    assert res.verdict == "refuted" and res.params["R"] >= 1 << 10, str(res)


@pytest.mark.slow
def test_factor_sequence_stride_misread_refuted() -> None:
    """Layer B reads ``B2`` at ``S + 2t`` instead of ``S + t``: refuted at ``R = 2^9`` (bit-vector
    queries with placements: about a minute)."""
    g = lib.factor_sequence()
    B = g.layers[1]
    R = pow2(var("r"))
    S, t = R + (R >> 1), pow2(var("e"))
    mutant = _mutate(g, 1, h=(B.h[0], B.h[1], tap(S + t + t, 1, lt(q, var("tw")))))
    res = prove_forall(mutant, ranges={"r": (9, 9), "tw": (1, 2), "d": (1, 3)}, timeout_s=600)
    assert res.verdict == "refuted" and res.params["r"] == 9, str(res)
