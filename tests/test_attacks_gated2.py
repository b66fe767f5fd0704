"""Second round of attacks on the gated convolutions (Hyena, H3; docs/gated-convolutions.md):
sizes refused before any weight is made, the direct model's size bounded in its order, hand-built
weights validated, the circuit against zoology's forward passes written out literally, and (with
``ZOOLOGY_SRC`` set to a checkout of github.com/HazyResearch/zoology) against its own modules."""

from __future__ import annotations

import dataclasses
import os
import sys
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.compiler import gated as gated_mod
from symverify.compiler.gated import gated_conv_direct, h3_direct, hyena_direct
from symverify.errors import CompileError, IRError, LimitError
from symverify.executors import execute
from symverify.ir import limits
from symverify.library_gated import GatedConvWeights, gated_conv, h3, hyena, hyena_weights


def _no_weights(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("weights were built before the sizes were checked")


# ---- sizes decided before the weights ----------------------------------------------------------


@pytest.mark.parametrize(("build", "banks"), [(hyena_direct, 1), (h3_direct, 2)])
def test_direct_symbolic_filters_are_refused_before_the_weights(build: Any, banks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hyena_direct(10^6, 1)`` built 10^6 symbolic taps (50 s; ``h3_direct``: 80 s) before the gate
    limit refused it, though its docstring says both limits are checked before the weights."""
    monkeypatch.setattr(gated_mod, "hyena_weights", _no_weights)
    monkeypatch.setattr(gated_mod, "h3_weights", _no_weights)
    with pytest.raises(LimitError, match=rf"\(N=1000000, d=1, order=2\) circuit: its {banks} bank\(s\) of symbolic N-tap filters"):
        build(10**6, 1)


def test_a_large_order_is_a_limit_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    """``hyena_direct(2, 1, 10**6)`` passed every limit (state 2·10^6 cells) and ran until killed:
    the direct model has ``order + 3`` layers and as many certificate boundaries of ``N·(order+1)·d``
    cells, work quadratic in the order. Its certificate's cells are now bounded by ``MAX_CELLS``."""
    monkeypatch.setattr(gated_mod, "hyena_weights", _no_weights)
    with pytest.raises(LimitError, match=r"hyena-direct\(N=2, d=1, order=1000000\) certificate: \(order\+3\)·N·\(order\+1\)·d cells: "
                                         r"2000008000006 cells is more than symverify\.ir\.limits\.MAX_CELLS"):
        hyena_direct(2, 1, 10**6)
    monkeypatch.undo()
    # given weights: gated_conv_direct checks the same count; at the limit it builds
    w = hyena_weights(3, 1, 3, filters=[[[1, 2, 3]], [[0, 1]]])
    monkeypatch.setattr(limits, "MAX_CELLS", 6 * 3 * 4 - 1)
    with pytest.raises(LimitError, match=r"hyena-direct\(N=3, d=1, order=3\) certificate"):
        gated_conv_direct(3, w, method="hyena-direct")
    monkeypatch.setattr(limits, "MAX_CELLS", 6 * 3 * 4)
    out = gated_conv_direct(3, w)
    assert out.model.depth == 6 and sv.verify(gated_conv(3, w), out).proved


@pytest.mark.parametrize("order", [2, 3, 5])
def test_the_direct_layers_keep_their_columns(order: int) -> None:
    """The columns of ``b1``/``b2`` are now painted in one grid; every stage is still the forward pass."""
    c, out = hyena(3, 2, order), hyena_direct(3, 2, order)
    assert out.model.signature == (3, order + 3, 2, 3, (order + 1) * 2)
    assert sv.verify(c, out).proved
    keep = out.model.layers[2].b1  # first gate: 1 on the kept blocks x̃_2 … x̃_m, 0 on x_1 and v
    assert [keep.to_rows()[0][j * 2] for j in range(order + 1)] == [0] + [1] * (order - 1) + [0]


# ---- hand-built weights ---------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "match"), [
    ({"order": 3}, r"hyena long: expected 2 filter banks"),
    ({"order": 1}, r"hyena: expected an int order ≥ 2, found 1"),
    ({"d": 2}, r"hyena W_in: expected 2 rows, found 1 rows"),
    ({"d": True}, r"expected an int d ≥ 1, found True"),
    ({"b_out": (0.1,)}, r"hyena b_out\[0\]: expected an exact value .* found the float 0\.1"),
    ({"W_out": ()}, r"hyena W_out: expected 1 rows, found 0 rows"),
    ({"W_in": ((1, 2, 3, 4),)}, r"hyena W_in\[0\]: expected 3 entries, found length 4"),
    ({"b_in": {0: 1, 1: 2, 2: 3}}, r"hyena b_in: expected 3 entries, found dict"),
    ({"long_skip": ((1, 2),)}, r"hyena long_skip\[0\]: expected 1 entries, found length 2"),
    ({"kind": 3}, r"GatedConvWeights: expected a str kind, found int"),
])
def test_hand_built_weights_are_validated(change: dict[str, object], match: str) -> None:
    """A :class:`GatedConvWeights` built directly or by ``dataclasses.replace`` was not checked: another
    order or d gave an IndexError inside ``gated_conv_direct``, extra columns of ``W_in`` were
    silently ignored, and a float was caught only as a gate constant without naming the weight."""
    w = hyena_weights(4, 1)
    with pytest.raises(IRError, match=match):
        dataclasses.replace(w, **change)


@pytest.mark.parametrize(("change", "match"), [
    ({"long": (((),),)}, r"hyena long\[0\]\[0\]: expected a filter of at least 1 tap, found none"),
    ({"short": ((1,), (), (1,))}, r"hyena short\[1\]: expected a filter of at least 1 tap, found none"),
])
def test_hand_built_filters_of_no_tap_are_refused(change: dict[str, object], match: str) -> None:
    """An empty long filter (``gated_conv_weights`` pads every filter to its length) raised
    IndexError inside ``gated_conv`` and ``gated_conv_direct``."""
    w = hyena_weights(4, 1, filters=[[[1, 2, 3, 4]]], short_filter=[[1, 0, 0]] * 3)
    with pytest.raises(IRError, match=match):
        dataclasses.replace(w, **change)


@pytest.mark.parametrize("build", [gated_conv, gated_conv_direct])
def test_a_hand_built_short_filter_longer_than_n_is_refused(build: Any) -> None:
    """``gated_conv_weights`` refuses ``short_len > N``, and a long filter of more than N taps is
    refused; a hand-built short filter of 6 taps at N = 4 had its last two silently dropped."""
    w = hyena_weights(4, 1, filters=[[[1, 2, 3, 4]]], short_filter=[[1, 0, 0]] * 3)
    with pytest.raises(IRError, match=r"hyena short\[0\]: expected at most N = 4 taps .*, found 6"):
        dataclasses.replace(w, short=((1, 0, 0, 0, 0, 7),) * 3)  # weights made for N = 4 know it
    v = dataclasses.replace(w, short=((1, 0, 0, 0, 0, 7),) * 3, N=None)
    with pytest.raises((IRError, CompileError), match=r"hyena: a short filter has more than N = 4 taps"):
        build(4, v)
    ragged = dataclasses.replace(w, short=((1,), (1, 2), (1, 2, 3, 4)))  # at most N taps each: read as given
    assert sv.verify(gated_conv(4, ragged), gated_conv_direct(4, ragged)).proved


def test_hand_built_weights_are_normalised() -> None:
    w = hyena_weights(2, 1, filters=[[[1, 2]]], filter_bias=[[0]], in_proj=[[1, 2, 3]], in_bias=[0, 0, 0], short_filter=[[1]] * 3,
                      short_bias=[0, 0, 0], out_proj=[[1]], out_bias=[0])
    v = dataclasses.replace(w, b_out=[Fraction(2, 4)], W_out=[["3/1"]])
    assert v.b_out == (Fraction(1, 2),) and type(v.W_out[0][0]) is int and v.W_out == ((3,),)
    assert isinstance(v, GatedConvWeights) and sv.verify(gated_conv(2, v), gated_conv_direct(2, v)).proved


# ---- the circuit against zoology's forward, written out literally ------------------------------


def _conv1d_depthwise(x: list[list[Any]], weight: list[list[Any]], bias: list[Any], K: int) -> list[list[Any]]:
    """``nn.Conv1d(C, C, K, groups=C, padding=K-1)(x)[..., :l]``: cross-correlation over the input padded
    with K−1 zeros on both sides, the first l outputs (x is ``[c][t]``)."""
    out = []
    for c, row in enumerate(x):
        pad = [0] * (K - 1) + row + [0] * (K - 1)
        out.append([sum(weight[c][j] * pad[t + j] for j in range(K)) + bias[c] for t in range(len(row))])
    return out


def _linear_conv(u: list[Any], k: list[Any]) -> list[Any]:
    """``irfft(rfft(u, 2l)·rfft(k, 2l))[:l]``: the linear convolution's first l terms."""
    return [sum(k[j] * u[t - j] for j in range(t + 1) if j < len(k)) for t in range(len(u))]


def _zoology_hyena(u: list[list[Any]], p: dict[str, Any], K: int) -> list[list[Any]]:
    """zoology's ``Hyena.forward`` (num_heads = num_blocks = 1) step by step, exact arithmetic."""
    N, d = len(u), len(u[0])
    z = [[sum(p["in_w"][c][r] * u[t][r] for r in range(d)) + p["in_b"][c] for t in range(N)] for c in range(3 * d)]  # b d l
    uc = _conv1d_depthwise(z, p["sf_w"], p["sf_b"], K)
    x1, x2, v = uc[:d], uc[d:2 * d], uc[2 * d:]
    v = [[v[q][t] * x1[q][t] for t in range(N)] for q in range(d)]
    k = [[p["filt"][t][q] for t in range(N)] for q in range(d)]  # filter(l): (1, l, d) -> "c l d -> c d l"
    y = [[a + b * p["D"][q] for a, b in zip(_linear_conv(v[q], k[q]), v[q])] for q in range(d)]
    y = [[y[q][t] * x2[q][t] for t in range(N)] for q in range(d)]
    return [[sum(p["out_w"][o][q] * y[q][t] for q in range(d)) + p["out_b"][o] for o in range(d)] for t in range(N)]


def _zoology_h3(u: list[list[Any]], p: dict[str, Any], Lk: int) -> list[list[Any]]:
    """zoology's ``H3.forward`` (head_dim = 1, no fast fftconv) step by step, exact arithmetic."""
    N, d = len(u), len(u[0])

    def proj(w: str, b: str) -> list[list[Any]]:
        return [[sum(p[w][h][r] * u[t][r] for r in range(d)) + p[b][h] for t in range(N)] for h in range(d)]

    q, k, v = proj("q_w", "q_b"), proj("k_w", "k_b"), proj("v_w", "v_b")
    k = [[a + p["ssm_k_D"][h] * b for a, b in zip(_linear_conv(k[h], p["shift"][h][:Lk]), k[h])] for h in range(d)]
    kv = [[k[h][t] * v[h][t] for t in range(N)] for h in range(d)]
    y = [[a + b * p["D"][h] for a, b in zip(_linear_conv(kv[h], p["kernel"][h][:Lk]), kv[h])] for h in range(d)]
    y = [[y[h][t] * q[h][t] for t in range(N)] for h in range(d)]
    return [[sum(p["out_w"][o][h] * y[h][t] for h in range(d)) + p["out_b"][o] for o in range(d)] for t in range(N)]


_Q = st.fractions(min_value=-4, max_value=4, max_denominator=8)


def _mat(draw: Any, r: int, c: int) -> list[list[Fraction]]:
    return [[draw(_Q) for _ in range(c)] for _ in range(r)]


@settings(max_examples=25, deadline=None)
@given(st.data(), st.integers(1, 5), st.integers(1, 2), st.integers(1, 6))
def test_hyena_is_zoologys_forward(data: Any, N: int, d: int, K: int) -> None:
    """Tap order (``weight[c, 0, K−1−k]``), padding and cropping, the split ``x1, x2, v``, the D skip
    and the bias placement, against zoology's forward written out line by line; any short filter
    length K, also K > N (its taps beyond the sequence are never read)."""
    draw = data.draw
    p = {"in_w": _mat(draw, 3 * d, d), "in_b": _mat(draw, 1, 3 * d)[0], "sf_w": _mat(draw, 3 * d, K), "sf_b": _mat(draw, 1, 3 * d)[0],
         "filt": _mat(draw, N, d), "D": _mat(draw, 1, d)[0], "out_w": _mat(draw, d, d), "out_b": _mat(draw, 1, d)[0]}
    u = _mat(draw, N, d)
    Ks = min(K, N)
    w = dict(in_proj=[[p["in_w"][c][r] for c in range(3 * d)] for r in range(d)], in_bias=p["in_b"],
             short_filter=[[p["sf_w"][c][K - 1 - k] for k in range(Ks)] for c in range(3 * d)], short_bias=p["sf_b"],
             filters=[[[p["filt"][t][q] for t in range(N)] for q in range(d)]], filter_bias=[p["D"]],
             out_proj=[[p["out_w"][o][r] for o in range(d)] for r in range(d)], out_bias=p["out_b"])
    c = hyena(N, d, short_len=Ks, **w)
    want = _zoology_hyena(u, p, K)
    assert execute(c, u).tolist() == want
    assert execute(hyena_direct(N, d, short_len=Ks, **w).model, u).tolist() == want


@settings(max_examples=25, deadline=None)
@given(st.data(), st.integers(1, 5), st.integers(1, 2), st.integers(1, 7))
def test_h3_is_zoologys_forward(data: Any, N: int, d: int, l_max: int) -> None:
    """H3 with its kernels of ``L_kernel = min(L, l_max)`` taps, ``x_1 = k``, ``x_2 = q``, both skips."""
    draw = data.draw
    Lk = min(N, l_max)
    p = {n: _mat(draw, d, d) for n in ("q_w", "k_w", "v_w", "out_w")}
    p.update({n: _mat(draw, 1, d)[0] for n in ("q_b", "k_b", "v_b", "out_b", "ssm_k_D", "D")})
    p.update(shift=_mat(draw, d, Lk), kernel=_mat(draw, d, Lk))
    u = _mat(draw, N, d)

    def T(m: list[list[Fraction]]) -> list[list[Fraction]]:
        return [list(r) for r in zip(*m)]

    w = dict(W_q=T(p["q_w"]), b_q=p["q_b"], W_k=T(p["k_w"]), b_k=p["k_b"], W_v=T(p["v_w"]), b_v=p["v_b"], shift_kernel=p["shift"],
             shift_D=p["ssm_k_D"], ssm_kernel=p["kernel"], D=p["D"], W_out=T(p["out_w"]), b_out=p["out_b"])
    want = _zoology_h3(u, p, Lk)
    assert execute(h3(N, d, **w), u).tolist() == want
    assert execute(h3_direct(N, d, **w).model, u).tolist() == want


@pytest.mark.parametrize(("N", "d", "order"), [(1, 1, 2), (1, 1, 4), (2, 1, 7), (1, 3, 2)])
def test_tiny_sizes_and_high_orders_are_proved(N: int, d: int, order: int) -> None:
    assert sv.verify(hyena(N, d, order), hyena_direct(N, d, order)).proved
    if order == 2:
        assert sv.verify(h3(N, d), h3_direct(N, d)).proved


@pytest.mark.parametrize("bad", [0.1, np.float64(0.5), np.float32(0.25), float("nan"), 1j])
def test_inexact_weights_are_refused_naming_the_weight(bad: object) -> None:
    for build, kw in ((hyena_direct, {"filter_bias": [[bad]]}), (h3_direct, {"shift_D": [bad]})):
        with pytest.raises(CompileError, match=r"(long_skip\[0\]|shift_D)\[0\]: expected an exact value"):
            build(2, 1, **kw)


# ---- against zoology's own modules (ZOOLOGY_SRC) ---------------------------------------------------


def _zoology() -> Any:
    src = os.environ.get("ZOOLOGY_SRC")
    if not src:
        pytest.skip("ZOOLOGY_SRC is not set (a checkout of github.com/HazyResearch/zoology)")
    if src not in sys.path:
        sys.path.insert(0, src)
    try:
        from zoology.mixers.h3 import H3
        from zoology.mixers.hyena import Hyena
    except ImportError as e:  # einops, pydantic, opt_einsum, scipy
        pytest.skip(f"zoology's modules do not import here: {e}")
    return Hyena, H3


_HYENA = [({}, 8, 8), ({}, 5, 8), ({"short_filter_order": 1}, 6, 6), ({"short_filter_order": 6}, 4, 8), ({"bias": False}, 6, 6),
          ({"normalized": True}, 6, 6), ({"shift": 0.5}, 6, 6), ({"emb_dim": 5}, 6, 6), ({"return_state": True}, 4, 4), ({}, 1, 4)]
_H3 = [({}, 8, 8), ({}, 8, None), ({}, 8, 3), ({"d_state": 16}, 6, 6), ({"kernel_args": {"mode": "shift"}}, 6, 6), ({}, 1, 4)]


@pytest.mark.parametrize(("kind", "kw", "N", "l_max"), [("hyena", *c) for c in _HYENA] + [("h3", *c) for c in _H3])
def test_zoologys_own_modules_are_read_exactly(kind: str, kw: dict[str, Any], N: int, l_max: int | None) -> None:
    import torch

    Hyena, H3 = _zoology()
    torch.manual_seed(N)
    lm = {} if l_max is None else {"l_max": l_max}  # H3's l_max=None (every length) is its default; pydantic refuses None
    mod = (Hyena(d_model=2, **lm, **kw) if kind == "hyena" else H3(d_model=2, **lm, **{"d_state": 8, **kw})).double().eval()
    circuit, compiled = sv.gated_from_zoology(mod, N)
    assert sv.verify(circuit, compiled).proved
    u = torch.randn(2, N, 2, dtype=torch.float64)
    with torch.no_grad():
        ref = mod(u)
    ref = ref[0] if isinstance(ref, tuple) else ref
    got = execute(compiled.model, u, backend="torch", dtype="float64")
    # zoology's H3 runs its FFTs in float32 (its SSM kernels are float32 in a float64 module)
    assert ((got - ref).abs().max() / ref.abs().max()).item() < (1e-12 if kind == "hyena" else 1e-5)


@pytest.mark.parametrize(("kind", "kw", "train", "match"), [
    ("hyena", {"num_heads": 2}, False, r"num_heads: expected 1"),
    ("hyena", {"num_blocks": 2}, False, r"num_blocks: expected 1"),
    ("hyena", {"bidirectional": True}, False, r"bidirectional: expected False"),
    ("hyena", {"dropout": 0.5}, True, r"active dropout"),
    ("h3", {"head_dim": 2}, False, r"head_dim: expected 1"),
])
def test_zoology_variants_outside_the_forms_are_refused(kind: str, kw: dict[str, Any], train: bool, match: str) -> None:
    Hyena, H3 = _zoology()
    mod = Hyena(d_model=2, l_max=8, **kw) if kind == "hyena" else H3(d_model=2, d_state=8, l_max=8, **kw)
    mod.train(train)
    with pytest.raises(CompileError, match=match):
        sv.gated_from_zoology(mod, 8)
    if kind == "hyena":
        with pytest.raises(CompileError, match=r"sequence length 9 exceeds Hyena\.l_max = 8"):
            sv.gated_from_zoology(Hyena(d_model=2, l_max=8).eval(), 9)


# ---- modules of other shapes: a CompileError naming the attribute, never another exception ------


def _local(kind: str) -> Any:
    import torch

    from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

    torch.manual_seed(0)
    return (ZoologyHyena(2, 6) if kind == "hyena" else ZoologyH3(2, 4, 6)).double().eval()


def _set(path: str, value: Any) -> Any:
    def go(m: Any) -> None:
        *head, last = path.split(".")
        for h in head:
            m = getattr(m, h)
        setattr(m, last, value.make() if isinstance(value, _Param) else value)
    return go


@dataclasses.dataclass
class _Param:
    shape: tuple[int, ...]

    def make(self) -> Any:
        import torch
        from torch import nn

        return nn.Parameter(torch.randn(*self.shape, dtype=torch.float64) if self.shape else torch.tensor(1.0, dtype=torch.float64))


def _param(*shape: int) -> _Param:
    return _Param(shape)


def _raises(*args: Any, **kwargs: Any) -> Any:
    raise ZeroDivisionError("division by zero")


@pytest.mark.parametrize(("kind", "path", "value", "match"), [
    ("hyena", "short_filter", None, r"Hyena\.short_filter: expected an attribute 'weight'"),
    ("hyena", "short_filter.weight", _param(), r"short_filter\.weight: expected a tensor of shape \(6, 1, K\), found \(\)"),
    ("hyena", "short_filter.bias", _param(7), r"short_filter\.bias: expected shape \(6,\), found \(7,\)"),
    ("hyena", "filter_fn.filter", _raises, r"filter_fn\.filter\(6\) raised ZeroDivisionError"),
    ("hyena", "filter_fn.filter", lambda L, *a, **k: [[1.0]], r"filter_fn\.filter\(6\): expected shape .* found list"),
    ("hyena", "filter_fn.bias", _param(3), r"filter_fn\.bias: expected shape \(2,\), found \(3,\)"),
    ("hyena", "out_proj.bias", _param(3), r"out_proj\.bias: expected shape \(2,\), found \(3,\)"),
    ("hyena", "l_max", None, r"Hyena\.l_max: expected a positive int, found None"),
    ("hyena", "l_max", "8", r"Hyena\.l_max: expected a positive int, found '8'"),
    ("h3", "L", 0, r"H3\.L \(l_max\): expected a positive int or None, found 0"),
    ("h3", "L", 4.0, r"H3\.L \(l_max\): expected a positive int or None, found 4\.0"),
    ("h3", "ssm_k_D", _param(2, 1), r"ssm_k_D: expected shape \(2,\), found \(2, 1\)"),
    ("h3", "D", _param(3), r"from zoology: D: expected shape \(2,\), found \(3,\)"),
    ("h3", "kernel.forward", _raises, r"kernel\(L=6\) raised ZeroDivisionError"),
])
def test_modules_of_other_shapes_are_compile_errors(kind: str, path: str, value: Any, match: str) -> None:
    """These raised AttributeError, TypeError, IndexError or the filter's own exception (H3's ``L = 0``
    was read as kernels of no taps; a 2-D ``ssm_k_D`` was an IRError about ``shift_D[0]``)."""
    m = _local(kind)
    _set(path, value)(m)
    with pytest.raises(CompileError, match=match):
        sv.gated_from_zoology(m, 6)


def test_an_int_padding_equal_to_k_minus_1_is_read() -> None:
    m = _local("hyena")
    c = sv.gated_from_zoology(m, 6)[0]
    m.short_filter.padding = 2  # a duck-typed conv may keep an int
    c2, out2 = sv.gated_from_zoology(m, 6)
    assert c2.gates == c.gates and sv.verify(c2, out2).proved
    m.short_filter.padding = 3
    with pytest.raises(CompileError, match=r"short_filter\.padding: expected 2 \(causal after truncation\), found 3"):
        sv.gated_from_zoology(m, 6)


@pytest.mark.parametrize("kind", ["hyena", "h3"])
def test_a_huge_sequence_is_refused_before_any_filter_is_materialised(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _local(kind)
    if kind == "hyena":
        m.l_max = 10**7
        monkeypatch.setattr(m.filter_fn, "filter", _no_weights)
    else:
        monkeypatch.setattr(m.kernel, "forward", _no_weights)
        monkeypatch.setattr(m.ssm_k_kernel, "forward", _no_weights)
    with pytest.raises(LimitError, match=rf"from zoology: {kind}\(N=10000000, d=2\) state N·3·d: 60000000 cells"):
        sv.gated_from_zoology(m, 10**7)


@pytest.mark.parametrize("cls", ["Dropout1d", "AlphaDropout", "FeatureAlphaDropout"])
def test_every_kind_of_active_dropout_is_refused(cls: str) -> None:
    """Only ``nn.Dropout`` (and its subclasses) counted: a Hyena-shaped module in training mode with an
    ``nn.Dropout1d(0.5)`` (random, not a function of the input) was read as if it were inactive."""
    from torch import nn

    m = _local("hyena")
    m.dropout = getattr(nn, cls)(0.5)
    m.train()
    with pytest.raises(CompileError, match=r"has active dropout \(training mode, p > 0\)"):
        sv.gated_from_zoology(m, 6)
    m.eval()
    assert sv.verify(*sv.gated_from_zoology(m, 6)).proved


@pytest.mark.parametrize("build", [hyena, h3, hyena_direct, h3_direct])
def test_a_wide_model_is_refused_before_its_projection_is_made(build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hyena(1, 3000)`` passed the state limit (9000 cells) and made its 3000×9000 symbolic
    in-projection (still running after a minute); the projections' entries are bounded by ``MAX_CELLS``
    before any weight is made."""
    import symverify.library_gated as lg

    monkeypatch.setattr(lg, "sym", _no_weights)
    with pytest.raises(LimitError, match=r"\(N=1, d=3000(, order=2)?\) (in-projection W_in: d·\(order\+1\)·d|projections W_q, W_k, W_v: 3·d·d): "
                                         r"27000000 cells is more than symverify\.ir\.limits\.MAX_CELLS"):
        build(1, 3000)
