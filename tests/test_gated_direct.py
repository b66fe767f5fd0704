"""Hyena and H3 circuits, their direct causal BaseConv models, and exact proofs for all weights."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.compiler.gated import gated_conv_direct, h3_direct, hyena_direct
from symverify.errors import CompileError, IRError
from symverify.kernel.ir.baseconv import Mode
from symverify.library import gated_conv_weights, h3, hyena
from symverify.library_gated import gated_conv, hyena_weights
from symverify.mutate import get_weight, set_weight, weight_sites
from symverify.semantics.exact import evaluate


def _conv(f, x, t):
    return sum(f[k] * x[t - k] for k in range(min(t + 1, len(f))))


def _hyena_reference(u, W_in, b_in, s, beta, h, D, W_out, b_out):
    """Hyena's forward pass written out directly (d = 1): projections, short filter, gate, long
    filter with skip, gate, out-projection."""
    N = len(u)
    P = [[W_in[0][c] * u[t][0] + b_in[c] for c in range(3)] for t in range(N)]
    Pf = [[_conv(s[c], [P[i][c] for i in range(N)], t) + beta[c] for c in range(3)] for t in range(N)]
    w1 = [Pf[t][0] * Pf[t][2] for t in range(N)]
    z = [_conv(h, w1, t) + D * w1[t] for t in range(N)]
    y = [Pf[t][1] * z[t] for t in range(N)]
    return [[W_out[0][0] * y[t] + b_out[0]] for t in range(N)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=28, max_size=28), st.lists(st.integers(-3, 3), min_size=4, max_size=4))
def test_hyena_circuit_is_the_forward_pass(vals, u):
    N = 4
    it = iter(vals)
    W_in = [[next(it) for _ in range(3)]]
    b_in = [next(it) for _ in range(3)]
    s = [[next(it) for _ in range(3)] for _ in range(3)]
    beta = [next(it) for _ in range(3)]
    h = [next(it) for _ in range(4)]
    D, wo, bo = next(it), next(it), next(it)
    c = hyena(N, 1, in_proj=W_in, in_bias=b_in, short_filter=s, short_bias=beta, filters=[[h]], filter_bias=[[D]],
              out_proj=[[wo]], out_bias=[bo])
    uu = [[x] for x in u]
    want = _hyena_reference(uu, W_in, b_in, s, beta, h, D, [[wo]], [bo])
    assert evaluate(c, uu) == want


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=19, max_size=19), st.lists(st.integers(-3, 3), min_size=4, max_size=4))
def test_h3_circuit_is_the_forward_pass(vals, u):
    """H3 (d = 1): q, k, v projections; k̃ = hs ⊛ k + Ds·k; y = q ⊙ (h ⊛ (k̃ ⊙ v) + D·k̃ ⊙ v); out."""
    N = 4
    it = iter(vals)
    wq, bq, wk, bk, wv, bv = (next(it) for _ in range(6))
    hs = [next(it) for _ in range(3)]  # a kernel shorter than N
    Ds = next(it)
    h = [next(it) for _ in range(4)]
    D, wo, bo = next(it), next(it), next(it)
    c = h3(N, 1, W_q=[[wq]], b_q=[bq], W_k=[[wk]], b_k=[bk], W_v=[[wv]], b_v=[bv], shift_kernel=[hs], shift_D=[Ds],
           ssm_kernel=[h], D=[D], W_out=[[wo]], b_out=[bo])
    q = [wq * x + bq for x in u]
    k = [wk * x + bk for x in u]
    v = [wv * x + bv for x in u]
    kt = [_conv(hs, k, t) + Ds * k[t] for t in range(N)]
    kv = [kt[t] * v[t] for t in range(N)]
    y = [q[t] * (_conv(h, kv, t) + D * kv[t]) for t in range(N)]
    assert evaluate(c, [[x] for x in u]) == [[wo * y[t] + bo] for t in range(N)]


@pytest.mark.parametrize(("N", "d"), [(1, 1), (3, 2), (5, 3), (16, 2)])
def test_hyena_direct_is_proved_for_all_weights(N, d):
    out = hyena_direct(N, d)
    c = hyena(N, d)
    assert c.params() and len(c.params()) >= N * d
    report = sv.verify(c, out)
    assert report.verdict.value == "proved", report
    assert out.model.signature == (N, 5, d, N, 3 * d)
    assert all(layer.mode is Mode.CAUSAL for layer in out.model.layers)


@pytest.mark.parametrize(("N", "d"), [(1, 1), (3, 2), (6, 2), (16, 3)])
def test_h3_direct_is_proved_for_all_weights(N, d):
    out = h3_direct(N, d)
    report = sv.verify(h3(N, d), out)
    assert report.verdict.value == "proved", report
    assert out.model.signature == (N, 5, d, N, 3 * d)


@pytest.mark.parametrize("order", [3, 4])
def test_higher_order_hyena_is_proved(order):
    out = hyena_direct(4, 2, order)
    assert sv.verify(hyena(4, 2, order), out).verdict.value == "proved"
    assert out.model.signature == (4, order + 3, 2, 4, (order + 1) * 2)


def test_n64_is_proved():
    assert sv.verify(hyena(64, 2), hyena_direct(64, 2)).verdict.value == "proved"
    assert sv.verify(h3(64, 2), h3_direct(64, 2)).verdict.value == "proved"


def test_numeric_weights_and_exact_agreement():
    kw = dict(in_proj=[[1, 2, -1, Fraction(1, 2), 0, 3]] * 2, filters=[[[1, Fraction(1, 3)], [2]]])
    out = hyena_direct(4, 2, **kw)
    c = hyena(4, 2, **kw)
    assert sv.verify(c, out).verdict.value == "proved"


@pytest.mark.parametrize("which", ["hyena", "h3"])
def test_every_single_weight_perturbation_is_refuted(which):
    c, out = (hyena(3, 1), hyena_direct(3, 1)) if which == "hyena" else (h3(3, 1), h3_direct(3, 1))
    sites = weight_sites(out.model)
    assert len(sites) > 20
    for site in sites:
        model = set_weight(out.model, site, get_weight(out.model, site) + 1)
        report = sv.verify(c, replace(out, model=model))
        assert report.verdict.value == "refuted", (site, report)
        assert report.counterexample is not None


def test_long_filter_tap_perturbation_at_n64_is_refuted():
    out = hyena_direct(64, 2)
    c = hyena(64, 2)
    site = next(s for s in weight_sites(out.model) if s.layer == 3 and s.grid == "h" and s.row == 63)
    model = set_weight(out.model, site, get_weight(out.model, site) * 2)
    assert sv.verify(c, replace(out, model=model), method="compositional").verdict.value == "refuted"


def test_wrong_circuit_is_refuted():
    assert sv.verify(hyena(3, 1, out_bias=[0]), hyena_direct(3, 1)).verdict.value == "refuted"


def test_exported_lazily():
    assert sv.hyena_direct is hyena_direct and sv.h3_direct is h3_direct and sv.gated_conv_direct is gated_conv_direct
    assert sv.library.hyena is hyena


@pytest.mark.parametrize(("call", "match"), [
    (lambda: hyena(0, 1), "N"),
    (lambda: hyena(4, 0), "d"),
    (lambda: hyena(4, 1, order=1), "order"),
    (lambda: hyena(2, 1, short_len=3), "short_len"),
    (lambda: hyena(4, 1, in_proj=[[1, 2]]), "W_in"),
    (lambda: hyena(4, 1, in_bias=[1, 2]), "b_in"),
    (lambda: hyena(4, 1, short_filter=[[1]] * 2), "short"),
    (lambda: hyena(4, 1, short_filter=[[1, 2, 3, 4]] * 3), "at most 3"),
    (lambda: hyena(4, 1, filters=[[[1] * 5]]), "at most 4"),
    (lambda: hyena(4, 1, filters=[[[1]], [[1]]]), "filter banks"),
    (lambda: hyena(4, 1, filter_bias=[[1], [1]]), "skip"),
    (lambda: hyena(4, 1, out_proj=[[0.1]]), "exact"),
    (lambda: h3(4, 1, shift_kernel=[[1], [2]]), "shift_kernel"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(IRError, match=match):
        call()


def test_direct_refuses_bad_input():
    with pytest.raises(CompileError, match="N must be a positive int"):
        gated_conv_direct(0, gated_conv_weights(2, 1))
    with pytest.raises(CompileError, match="expected GatedConvWeights"):
        gated_conv_direct(2, "w")  # type: ignore[arg-type]
    with pytest.raises(CompileError, match=r"hyena_direct: .*order"):
        hyena_direct(4, 1, 1)
    with pytest.raises(CompileError, match=r"h3_direct: .*W_q"):
        h3_direct(4, 1, W_q=[[1, 2]])
    with pytest.raises(CompileError, match=r"expected weights for sequence length N = 2, found weights built for N = 4"):
        gated_conv_direct(2, gated_conv_weights(4, 1, short_len=2))
    with pytest.raises(CompileError, match="more than N"):
        gated_conv_direct(2, dataclasses.replace(gated_conv_weights(4, 1, short_len=2), N=None))


@pytest.mark.parametrize("build", [gated_conv, gated_conv_direct])
@pytest.mark.parametrize(("made", "asked"), [(4, 8), (2, 3), (8, 4)])
def test_weights_built_for_another_sequence_length_are_refused(build, made, asked):
    """``gated_conv_direct(8, hyena_weights(4, 1))`` was accepted: the symbolic long filters of 4 taps
    were padded with 0 on both sides, so the proof held for filters of 4 taps where 8 were asked for.
    Weights record the N they were built for; another N is refused, padding is asked for by name."""
    w = hyena_weights(made, 1)
    with pytest.raises((IRError, CompileError), match=rf"hyena: expected weights for sequence length N = {asked}, found "
                                                       rf"weights built for N = {made} .*dataclasses.replace\(weights, N=None\)"):
        build(asked, w)
    assert build(made, w) is not None
    if made < asked:  # padding asked for by name: both sides pad alike, and the proof is of the padded filters
        padded = dataclasses.replace(w, N=None)
        assert sv.verify(gated_conv(asked, padded), gated_conv_direct(asked, padded)).proved
        assert sv.verify(gated_conv(asked, padded), gated_conv_direct(asked, dataclasses.replace(w, N=asked))).proved


@pytest.mark.parametrize(("N", "match"), [(0, r"expected an int N .* ≥ 1, found 0"), (True, "found True"),
                                          ("4", "found '4'"), (2, r"hyena short\[0\]: expected at most N = 2 taps .*found 3")])
def test_the_recorded_sequence_length_is_checked(N, match):
    with pytest.raises(IRError, match=match):
        dataclasses.replace(hyena_weights(4, 1), N=N)


@pytest.mark.parametrize("seed", range(10))
def test_certificate_mutants_are_never_proved(seed):
    from symverify.mutate import certificate_mutant

    out = hyena_direct(3, 1)
    c = hyena(3, 1)
    m = certificate_mutant(out.certificate, c.num_nodes, seed)
    try:
        report = sv.verify(c, out.model, method="compositional", certificate=m.obj)
    except IRError:
        return  # a structurally invalid certificate is refused outright
    assert report.verdict.value != "proved", (m, report)
