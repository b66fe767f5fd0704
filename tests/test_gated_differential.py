"""Differential tests of the gated-convolution constructions (Hyena, H3; docs/gated-convolutions.md)
against an independent exact oracle.

The oracle is the doc's layer formula (§1), written here with Fractions for any d and order m:
``P = u·W_in + b_in`` (blocks ``x_1 … x_m, v``), ``P̃_c = s_c ⊛ P_c + β_c``, ``w_1 = x̃_1 ⊙ ṽ``,
``w_{i+1} = x̃_{i+1} ⊙ ((h_i + D_i·e_0) ⊛ w_i)``, ``y = w_m·W_out + b_out``, with causal
``(f ⊛ x)[t] = Σ_{0≤k≤t} f[k]·x[t−k]``. H3 has its own oracle from the doc's H3 table
(``k̃ = hs ⊛ k + Ds·k``, ``y = (q ⊙ (h1 ⊛ (k̃ ⊙ v) + D·(k̃ ⊙ v)))·W_out + b_out``), and the zoology
converter is checked against an oracle that reads the module's parameters itself (``Conv1d`` with
left padding ``K − 1``, the kernels its modules materialise). Models run on the BaseConv interpreter
of ``tests/test_retnet_differential.py`` (docs/theory.md §1.1–1.2), not symverify's evaluators.

A planted lag or a dropped skip in the construction is caught by the oracle (``test_planted_*``).
More examples: ``SYMVERIFY_GATEDDIFF_EXAMPLES=200``.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_retnet_differential import run_model

import symverify as sv
import symverify.compiler.gated as gated_mod
from symverify.compiler.gated import gated_conv_direct, h3_direct, hyena_direct
from symverify.kernel.verification import verify
from symverify.library import gated_conv_weights, h3, hyena
from symverify.library_gated import gated_conv
from symverify.mutate import get_weight, set_weight, weight_sites

EXAMPLES = int(os.environ.get("SYMVERIFY_GATEDDIFF_EXAMPLES", "0"))


def _settings(default: int):
    return settings(max_examples=EXAMPLES or default, deadline=None)


# ---- the oracles --------------------------------------------------------------------------------


def _conv(f, x, t):
    return sum((Fraction(f[k]) * x[t - k] for k in range(min(t + 1, len(f)))), Fraction(0))


def oracle_gated(u, m, W_in, b_in, short, beta, long, skip, W_out, b_out):
    """docs/gated-convolutions.md §1, order m, any d."""
    N, d = len(u), len(u[0])
    width = (m + 1) * d
    P = [[sum((Fraction(u[t][r]) * W_in[r][c] for r in range(d)), Fraction(0)) + b_in[c] for c in range(width)] for t in range(N)]
    Pf = [[_conv(short[c], [P[i][c] for i in range(N)], t) + beta[c] for c in range(width)] for t in range(N)]

    def block(j, t, q):
        return Pf[t][j * d + q]

    w = [[block(0, t, q) * block(m, t, q) for q in range(d)] for t in range(N)]
    for i in range(1, m):
        w = [[block(i, t, q) * (_conv(long[i - 1][q], [w[s][q] for s in range(N)], t) + skip[i - 1][q] * w[t][q])
              for q in range(d)] for t in range(N)]
    return [[sum((w[t][r] * W_out[r][q] for r in range(d)), Fraction(0)) + b_out[q] for q in range(d)] for t in range(N)]


def oracle_h3(u, Wq, bq, Wk, bk, Wv, bv, hs, Ds, h1, D, W_out, b_out):
    """The doc's H3 table: ``k̃ = hs ⊛ k + Ds·k``, ``y = (q ⊙ (h1 ⊛ (k̃ ⊙ v) + D·(k̃ ⊙ v)))·W_out + b_out``."""
    N, d = len(u), len(u[0])

    def proj(W, b):
        return [[sum((Fraction(u[t][r]) * W[r][c] for r in range(d)), Fraction(0)) + b[c] for c in range(d)] for t in range(N)]

    q, k, v = proj(Wq, bq), proj(Wk, bk), proj(Wv, bv)
    kt = [[_conv(hs[c], [k[s][c] for s in range(N)], t) + Ds[c] * k[t][c] for c in range(d)] for t in range(N)]
    kv = [[kt[t][c] * v[t][c] for c in range(d)] for t in range(N)]
    y = [[q[t][c] * (_conv(h1[c], [kv[s][c] for s in range(N)], t) + D[c] * kv[t][c]) for c in range(d)] for t in range(N)]
    return [[sum((y[t][r] * W_out[r][c] for r in range(d)), Fraction(0)) + b_out[c] for c in range(d)] for t in range(N)]


# ---- strategies ---------------------------------------------------------------------------------

small_q = st.fractions(min_value=-3, max_value=3, max_denominator=3)


def _vec(n):
    return st.lists(small_q, min_size=n, max_size=n)


def _mat(r, c):
    return st.lists(_vec(c), min_size=r, max_size=r)


@st.composite
def gated_instances(draw, max_n=8, max_d=3, max_order=3):
    N = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    m = draw(st.integers(2, max_order))
    K = draw(st.integers(1, min(3, N)))
    width = (m + 1) * d
    raw = dict(
        W_in=draw(_mat(d, width)), b_in=draw(_vec(width)),
        short=[draw(st.lists(small_q, min_size=1, max_size=K)) for _ in range(width)], short_bias=draw(_vec(width)),
        long=[[draw(st.lists(small_q, min_size=1, max_size=N)) for _ in range(d)] for _ in range(m - 1)],
        long_skip=[draw(_vec(d)) for _ in range(m - 1)], W_out=draw(_mat(d, d)), b_out=draw(_vec(d)))
    u = draw(_mat(N, d))
    return N, d, m, K, raw, u


def _oracle_of(raw, m, u):
    return oracle_gated(u, m, raw["W_in"], raw["b_in"], raw["short"], raw["short_bias"], raw["long"], raw["long_skip"],
                        raw["W_out"], raw["b_out"])


def _rand_u(rng, N, d):
    return [[Fraction(rng.randint(-5, 5), rng.randint(1, 3)) for _ in range(d)] for _ in range(N)]


def _exact(rows):
    return [[Fraction(v) for v in row] for row in rows]


# ---- the general gated convolution --------------------------------------------------------------


def check_gated(N, d, m, K, raw, u):
    w = gated_conv_weights(N, d, m, short_len=K, **raw)
    want = _oracle_of(raw, m, u)
    assert _exact(sv.evaluate(gated_conv(N, w), u)) == want
    out = gated_conv_direct(N, w)
    assert run_model(out.model, u) == want
    return w, out


@given(gated_instances())
@_settings(40)
def test_gated_circuit_and_direct_model_match_oracle(inst):
    check_gated(*inst)


@given(gated_instances(max_n=5, max_d=2, max_order=3), st.data())
@_settings(8)
def test_gated_is_proved_and_a_moved_weight_is_never_proved(inst, data):
    N, d, m, K, raw, u = inst
    w, out = check_gated(N, d, m, K, raw, u)
    circuit = gated_conv(N, w)
    assert verify(circuit, out).verdict.value == "proved"
    sites = weight_sites(out.model)
    site = sites[data.draw(st.integers(0, len(sites) - 1))]
    moved = set_weight(out.model, site, get_weight(out.model, site) + data.draw(st.sampled_from([1, Fraction(-1, 2), 3])))
    rng = random.Random(N * 17 + d)
    differs = any(run_model(moved, v) != _oracle_of(raw, m, v) for v in [u] + [_rand_u(rng, N, d) for _ in range(3)])
    event(f"moved weight changes the output: {differs}")
    if differs:
        assert verify(circuit, replace(out, model=moved)).verdict.value == "refuted", site


# ---- Hyena and H3 by their own keywords ---------------------------------------------------------


def test_hyena_keywords_match_oracle_d2_order3():
    rng = random.Random(1)
    N, d, m = 5, 2, 3
    width = (m + 1) * d

    def r():
        return Fraction(rng.randint(-3, 3), rng.randint(1, 2))

    raw = dict(W_in=[[r() for _ in range(width)] for _ in range(d)], b_in=[r() for _ in range(width)],
               short=[[r() for _ in range(3)] for _ in range(width)], short_bias=[r() for _ in range(width)],
               long=[[[r() for _ in range(N)] for _ in range(d)] for _ in range(m - 1)],
               long_skip=[[r() for _ in range(d)] for _ in range(m - 1)], W_out=[[r() for _ in range(d)] for _ in range(d)],
               b_out=[r() for _ in range(d)])
    kw = dict(in_proj=raw["W_in"], in_bias=raw["b_in"], short_filter=raw["short"], short_bias=raw["short_bias"],
              filters=raw["long"], filter_bias=raw["long_skip"], out_proj=raw["W_out"], out_bias=raw["b_out"])
    out = hyena_direct(N, d, m, **kw)
    c = hyena(N, d, m, **kw)
    assert verify(c, out).verdict.value == "proved"
    for _ in range(3):
        u = _rand_u(rng, N, d)
        want = _oracle_of(raw, m, u)
        assert run_model(out.model, u) == want
        assert _exact(sv.evaluate(c, u)) == want


@given(st.integers(1, 7), st.integers(1, 3), st.data())
@_settings(25)
def test_h3_matches_its_oracle(N, d, data):
    Wq, Wk, Wv, Wo = (data.draw(_mat(d, d)) for _ in range(4))
    bq, bk, bv, bo, Ds, D = (data.draw(_vec(d)) for _ in range(6))
    hs = [data.draw(st.lists(small_q, min_size=1, max_size=N)) for _ in range(d)]  # may be shorter than N
    h1 = [data.draw(st.lists(small_q, min_size=1, max_size=N)) for _ in range(d)]
    u = data.draw(_mat(N, d))
    kw = dict(W_q=Wq, b_q=bq, W_k=Wk, b_k=bk, W_v=Wv, b_v=bv, shift_kernel=hs, shift_D=Ds, ssm_kernel=h1, D=D,
              W_out=Wo, b_out=bo)
    want = oracle_h3(u, Wq, bq, Wk, bk, Wv, bv, hs, Ds, h1, D, Wo, bo)
    assert run_model(h3_direct(N, d, **kw).model, u) == want
    assert _exact(sv.evaluate(h3(N, d, **kw), u)) == want


# ---- edge values --------------------------------------------------------------------------------


def _edge_raw(N, d, m, value):
    width = (m + 1) * d
    return dict(W_in=[[value(r, c) for c in range(width)] for r in range(d)], b_in=[value(9, c) for c in range(width)],
                short=[[value(c, k) for k in range(min(3, N))] for c in range(width)], short_bias=[value(c, 7) for c in range(width)],
                long=[[[value(q, k) for k in range(N)] for q in range(d)] for _ in range(m - 1)],
                long_skip=[[value(q, 5) for q in range(d)] for _ in range(m - 1)], W_out=[[value(r, q) for q in range(d)] for r in range(d)],
                b_out=[value(3, q) for q in range(d)])


@pytest.mark.parametrize("name,value", [
    ("zeros", lambda a, b: 0),
    ("ones", lambda a, b: 1),
    ("huge", lambda a, b: (-1) ** (a + b) * (10**30 + 7 * a + b) if (a + b) % 3 else Fraction(2**90 + a, 3**40 + b)),
])
@pytest.mark.parametrize("N,d,m", [(1, 1, 2), (1, 2, 3), (4, 2, 2), (6, 1, 4)])
def test_gated_edge_values(name, value, N, d, m):
    raw = _edge_raw(N, d, m, value)
    u = [[Fraction(10**35 * (t + 1) - q, 1 + q) for q in range(d)] for t in range(N)]
    w, out = check_gated(N, d, m, min(3, N), raw, u)
    assert verify(gated_conv(N, w), out).verdict.value == "proved"


# ---- the zoology converter ----------------------------------------------------------------------


def _frac(t):
    return [_frac(x) for x in t] if isinstance(t, list) else Fraction(t)


def _oracle_hyena_module(mod, u):
    """Hyena's forward read off the module: ``Conv1d(padding=K−1)[..., :L]`` means
    ``out[c, t] = Σ_j weight[c, 0, j]·x[c, t + j − (K−1)]`` (0 outside), then the doc's gating."""
    import torch

    N, d = len(u), len(u[0])
    Win = _frac(mod.in_proj.weight.detach().tolist())  # (3d, d): P = u·Wᵀ + b
    b = _frac(mod.in_proj.bias.detach().tolist())
    P = [[sum((u[t][r] * Win[c][r] for r in range(d)), Fraction(0)) + b[c] for c in range(3 * d)] for t in range(N)]
    sw = _frac(mod.short_filter.weight.detach().tolist())
    sb = _frac(mod.short_filter.bias.detach().tolist())
    K = len(sw[0][0])
    Pf = [[sum((sw[c][0][j] * P[t + j - (K - 1)][c] for j in range(K) if 0 <= t + j - (K - 1)), Fraction(0)) + sb[c]
           for c in range(3 * d)] for t in range(N)]
    with torch.no_grad():
        k = _frac(mod.filter_fn.filter(N)[0].tolist())  # (N, d)
    D = _frac(mod.filter_fn.bias.detach().tolist())
    w1 = [[Pf[t][q] * Pf[t][2 * d + q] for q in range(d)] for t in range(N)]
    z = [[sum((k[s][q] * w1[t - s][q] for s in range(t + 1)), Fraction(0)) + D[q] * w1[t][q] for q in range(d)] for t in range(N)]
    y = [[z[t][q] * Pf[t][d + q] for q in range(d)] for t in range(N)]
    Wo = _frac(mod.out_proj.weight.detach().tolist())
    bo = _frac(mod.out_proj.bias.detach().tolist())
    return [[sum((y[t][r] * Wo[q][r] for r in range(d)), Fraction(0)) + bo[q] for q in range(d)] for t in range(N)]


def _oracle_h3_module(mod, u):
    import torch

    N = len(u)

    def lin(m):
        return [list(r) for r in zip(*_frac(m.weight.detach().tolist()))], _frac(m.bias.detach().tolist())

    with torch.no_grad():
        hs = _frac(mod.ssm_k_kernel(L=N)[0][0].tolist())
        h1 = _frac(mod.kernel(L=N)[0][0].tolist())
    (Wq, bq), (Wk, bk), (Wv, bv), (Wo, bo) = (lin(m) for m in (mod.q_proj, mod.k_proj, mod.v_proj, mod.output_linear))
    return oracle_h3(u, Wq, bq, Wk, bk, Wv, bv, hs, _frac(mod.ssm_k_D.detach().tolist()), h1,
                     _frac(mod.D.detach().tolist()), Wo, bo)


@pytest.mark.parametrize("kind", ["hyena", "h3"])
def test_zoology_converter_matches_module_oracle(kind):
    torch = pytest.importorskip("torch")
    from symverify.compiler.gated import gated_from_zoology
    from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

    N, d = 5, 2
    torch.manual_seed(4)
    mod = (ZoologyHyena(d, N) if kind == "hyena" else ZoologyH3(d, 3, N)).double().eval()
    circuit, compiled = gated_from_zoology(mod, N)
    u = _rand_u(random.Random(4), N, d)
    want = (_oracle_hyena_module if kind == "hyena" else _oracle_h3_module)(mod, u)
    assert run_model(compiled.model, u) == want
    assert _exact(sv.evaluate(circuit, u)) == want


# ---- planted bugs: the oracle catches them ------------------------------------------------------


def _plant(monkeypatch, change):
    """Rewrite the filter grid ``h`` of every layer the direct construction builds (``change(W, h)``)."""
    real = gated_mod._layer

    def layer(nn, dd, W, b1, h, b2):
        return real(nn, dd, W, b1, change(W, dict(h)), b2)

    monkeypatch.setattr(gated_mod, "_layer", layer)


def _lag(h):  # taps at k ≥ 1 one step later (past N = 4 they fall off)
    return {(k + (k >= 1), c): v for (k, c), v in h.items() if k + (k >= 1) < 4}


def _lag_long(W, h):  # the gate layers (W nonzero) with a long filter
    return _lag(h) if W else h


def _lag_short(W, h):  # the pre-filter layer (W = 0, taps beyond 0)
    return h if W else _lag(h)


@pytest.mark.parametrize("change", [
    pytest.param(_lag_long, id="long-filter-lag"),
    pytest.param(_lag_short, id="short-filter-lag"),
])
def test_planted_lag_is_caught_by_the_oracle(monkeypatch, change):
    rng = random.Random(2)
    N, d, m = 4, 1, 2
    raw = _edge_raw(N, d, m, lambda a, b: rng.choice([1, 2, -1, 3, Fraction(1, 2)]))
    u = [[Fraction(1)], [Fraction(-2)], [Fraction(3)], [Fraction(1, 2)]]
    check_gated(N, d, m, 3, raw, u)  # honest: passes
    _plant(monkeypatch, change)
    with pytest.raises(AssertionError):
        check_gated(N, d, m, 3, raw, u)


def test_planted_dropped_skip_is_caught_by_the_oracle(monkeypatch):
    """The construction puts ``D_i`` at tap 0 of the long filter; dropping it must be caught."""
    N, d, m = 3, 1, 2
    raw = _edge_raw(N, d, m, lambda a, b: 1 + a + b)
    u = [[Fraction(1)], [Fraction(2)], [Fraction(-1)]]
    check_gated(N, d, m, 3, raw, u)
    real = gated_mod._layers

    def layers(N_, w):
        return real(N_, replace(w, long_skip=tuple(tuple(0 for _ in g) for g in w.long_skip)))

    monkeypatch.setattr(gated_mod, "_layers", layers)
    with pytest.raises(AssertionError):
        check_gated(N, d, m, 3, raw, u)
