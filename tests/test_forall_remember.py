"""Proposition H.10's two-layer rows form and its channels form, proved for all sizes and every
filter with two taps at any lags; mutations (a workspace move misread, a gate on the wrong rows, a
wrong source channel, a tap off by one) refuted at sizes no instance sweep contains, each witness
re-checked by instantiation before it is reported."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from symverify.kernel.parametric.expr import fam, ge, lt, var, where
from symverify.kernel.parametric.gadget import Gadget, tap
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import library as lib

i, q = var("i"), var("q")
N, a, b = var("N"), var("a"), var("b")
BIG = {"N": (1 << 10, lib.MAX_N)}


def _mutate(g: Gadget, k: int, **fields: Any) -> Gadget:
    layers = list(g.layers)
    layers[k] = dataclasses.replace(layers[k], **fields)
    return dataclasses.replace(g, name=g.name + "_mutant", layers=tuple(layers))


def _refuted(mutant: Gadget) -> None:
    res = prove_forall(mutant, ranges=BIG)
    assert res.verdict == "refuted", str(res)
    assert res.params["N"] >= 1 << 10 and "≠" in res.detail


@pytest.mark.parametrize("make", [lib.remember_rows_two, lib.remember_channels], ids=lambda f: f.__name__)
def test_proved_for_all_sizes(make: Any) -> None:
    res = prove_forall(make())
    assert res.verdict == "proved", str(res)
    assert res.stats["encoding"] == "int"


def test_rows_two_workspace_move_misread_refuted() -> None:
    g = lib.remember_rows_two()
    s = a + b
    _refuted(_mutate(g, 1, h=(tap(0), tap(N - s - 1))))


def test_rows_two_gate_on_wrong_rows_refuted() -> None:
    g = lib.remember_rows_two()
    s = a + b
    wrong = where(lt(i, a), fam("F", i, q), where(ge(i, a + s + 1) & lt(i, s + s + 1), 1))
    _refuted(_mutate(g, 0, b1=wrong))


def test_channels_wrong_source_channel_refuted() -> None:
    g = lib.remember_channels()
    _refuted(_mutate(g, 0, W=(tap(q + var("fo") - 1, 1, lt(q, a)),)))  # reads f one channel too far left


def test_channels_wrong_channel_test_refuted() -> None:
    g = lib.remember_channels()
    _refuted(_mutate(g, 0, W=(tap(q + var("fo"), 1, lt(q + 1, a)),)))  # the last x channel gets no f


def test_channels_tap_off_by_one_refuted() -> None:
    g = lib.remember_channels()
    l1 = var("l1")
    taps = (tap(l1 + 1, fam("h1", q), lt(q, a) & lt(l1 + 1, N)), *g.layers[0].h[1:])
    _refuted(_mutate(g, 0, h=taps))
