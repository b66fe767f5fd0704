"""Adversarial inputs to the gated convolutions (Hyena/H3): unsupported module shapes refused with a
CompileError, non-finite or complex weights refused, one mutated weight of a read module refuted."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

import symverify as sv
from symverify.compiler.gated import gated_from_zoology, h3_direct, hyena_direct
from symverify.errors import CompileError, LimitError
from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

N = 6


def _hyena() -> ZoologyHyena:
    torch.manual_seed(0)
    return ZoologyHyena(2, N).double().eval()


def _h3() -> ZoologyH3:
    torch.manual_seed(0)
    return ZoologyH3(2, 4, N).double().eval()


@pytest.mark.parametrize(("attr", "value", "match"), [
    ("stride", (2,), "stride"),
    ("dilation", (2,), "dilation"),
    ("padding_mode", "circular", "padding_mode"),
])
def test_short_filter_variants_are_refused(attr: str, value: object, match: str) -> None:
    # these change the module's function; read as the plain causal form they gave a wrong circuit
    m = _hyena()
    setattr(m.short_filter, attr, value)
    with pytest.raises(CompileError, match=match):
        gated_from_zoology(m, N)


@pytest.mark.parametrize("value", [None, "2", 2.0, 0, True])
def test_d_model_must_be_a_positive_int(value: object) -> None:
    for m in (_hyena(), _h3()):
        m.d_model = value
        with pytest.raises(CompileError, match="d_model: expected a positive int"):
            gated_from_zoology(m, N)


def test_complex_weights_are_refused_not_cast_to_real() -> None:
    m = _hyena()
    m.out_proj.weight = nn.Parameter(m.out_proj.weight.detach().to(torch.complex128))
    with pytest.raises(CompileError, match="expected real weights"):
        gated_from_zoology(m, N)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["in_proj", "short_filter", "out_proj"])
def test_non_finite_weights_are_refused(bad: float, where: str) -> None:
    m = _hyena()
    with torch.no_grad():
        getattr(m, where).weight.view(-1)[1] = bad
    with pytest.raises(CompileError, match="expected a finite number"):
        gated_from_zoology(m, N)


def test_non_linear_projection_is_refused() -> None:
    m = _hyena()
    m.in_proj = nn.Sequential(nn.Linear(2, 6), nn.GELU())  # type: ignore[assignment]
    with pytest.raises(CompileError):
        gated_from_zoology(m, N)


def _mutate(t: Any, idx: tuple[int, ...]) -> None:
    with torch.no_grad():
        t[idx] = float(np.nextafter(t[idx].item(), np.inf))


@pytest.mark.parametrize(("kind", "param", "idx"), [
    ("hyena", "short_filter.weight", (1, 0, 2)),
    ("hyena", "out_proj.bias", (1,)),
    ("hyena", "filter_fn.bias", (0,)),
    ("h3", "q_proj.weight", (0, 1)),
    ("h3", "D", (1,)),
])
def test_one_mutated_weight_of_a_read_module_is_refuted(kind: str, param: str, idx: tuple[int, ...]) -> None:
    circuit, good = gated_from_zoology(_hyena() if kind == "hyena" else _h3(), N)
    m = _hyena() if kind == "hyena" else _h3()
    _mutate(m.get_parameter(param), idx)
    _, bad = gated_from_zoology(m, N)
    assert sv.verify(circuit, good).verdict is sv.Verdict.PROVED
    assert sv.verify(circuit, bad).verdict is sv.Verdict.REFUTED


@pytest.mark.parametrize("build", [hyena_direct, h3_direct])
def test_misspelt_weight_keyword_is_a_compile_error(build: Any) -> None:
    with pytest.raises(CompileError, match="unknown weight arguments"):
        build(4, 1, bogus=1)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.1])
def test_float_weights_of_direct_models_are_refused(bad: float) -> None:
    with pytest.raises(CompileError, match="expected an exact value"):
        hyena_direct(4, 1, out_bias=[bad])


@pytest.mark.parametrize("build", [hyena_direct, h3_direct, sv.library.hyena, sv.library.h3])
def test_huge_sequence_lengths_are_a_limit_error_before_any_work(build: Any) -> None:
    """``N = 10^30`` built N symbolic filter taps first (ran until killed); ``N = 10^4`` built a
    circuit of 5·10^7 gates (minutes: the long convolutions grow as N²), with no stated limit."""
    with pytest.raises(LimitError, match=r"state N·(\(order\+1\)|3)·d: 3000000000000000000000000000000 cells is more than symverify\.ir\.limits\.MAX_CELLS"):
        build(10**30, 1)
    # circuits and direct models alike: refused by their symbolic filters before the weights are made
    with pytest.raises(LimitError, match=r"circuit: its \d bank\(s\) of symbolic N-tap filters alone: \d+ gates is more than "
                                         r"symverify\.ir\.limits\.MAX_GATES"):
        build(10**4, 1)


@pytest.mark.parametrize("build, banks", [(sv.library.hyena, 1), (sv.library.h3, 2)])
def test_symbolic_filters_are_counted_before_the_weights_are_made(build: Any, banks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hyena(10^4, 64)`` made its 6.4·10^5 symbolic filter taps (tens of seconds) before the gate
    check refused it: the symbolic banks alone (``d·N(N+1)/2`` terms each) are checked first. That
    count is a lower bound on the gates built: at the limit it passes and the full check decides."""
    from symverify.ir import limits

    with pytest.raises(LimitError, match=rf"\(N=10000, d=64, order=2\) circuit: its {banks} bank\(s\) of symbolic"):
        build(10**4, 64)
    assert len(build(40, 1).gates) >= banks * 40 * 41 // 2
    monkeypatch.setattr(limits, "MAX_GATES", banks * 41 * 42 // 2)  # N = 41: not a layout built (and kept) before
    with pytest.raises(LimitError, match=r"\(N=41, d=1, order=2\) circuit \(its convolutions alone\)"):
        build(41, 1)


def test_the_gate_limit_counts_only_the_taps_that_make_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound is ``Σ (N − k)`` over nonzero taps: zero long filters add no terms."""
    from symverify.ir import limits

    zero = {"filters": [[[0] * 40]], "filter_bias": [[0]]}
    # the zero-filter circuit has 762 gates; counted with its zero long filter the bound would be
    # 3·(40 + 39 + 38) + 40·41/2 = 1171 (the full circuit's, refused below)
    monkeypatch.setattr(limits, "MAX_GATES", 800)
    c = sv.library.hyena(40, 1, **zero)
    assert len(c.gates) <= 800
    assert sv.verify(c, hyena_direct(40, 1, **zero)).proved
    with pytest.raises(LimitError, match=r"hyena\(N=40, d=1, order=2\) circuit"):
        sv.library.hyena(40, 1)


def test_weights_given_as_mappings_are_refused_not_read_as_their_keys():
    """A weight vector or matrix row given as a dict was read as its keys (``b_in={0: 1, 1: 2, ...}``
    became ``(0, 1, ...)``; RetNet's ``W_A=[{0: 5, 1: 7}, ...]`` the rows ``[0, 1]``); ``apply`` read
    a dict vector the same way. Refused wherever a sequence is meant."""
    from symverify.errors import IRError, ShapeError
    from symverify.kaleidoscope import apply, permutation_to_kaleidoscope
    from symverify.library import retnet_weights
    from symverify.library_gated import gated_conv_weights

    with pytest.raises(IRError, match=r"gated b_in: expected 6 entries, found dict"):
        gated_conv_weights(4, 2, b_in={k: k + 1 for k in range(6)})
    with pytest.raises(IRError, match=r"retnet W_A: expected a 2×2 matrix"):
        retnet_weights(2, gamma=1, W_A=[{0: 5, 1: 7}, {0: 1, 1: 2}])
    with pytest.raises(IRError, match=r"retnet W_A: expected a 2×2 matrix"):
        retnet_weights(2, gamma=1, W_A={0: [1, 0], 1: [0, 1]})
    assert retnet_weights(2, gamma=1, W_A=[[5, 7], (1, 2)]).W_A == ((5, 7), (1, 2))
    f = permutation_to_kaleidoscope([1, 0])
    with pytest.raises(ShapeError, match=r"applying a butterfly product: expected a vector .*found dict"):
        apply(f, {0: 5, 1: 7})
    assert apply(f, (5, 7)) == [7, 5]
