"""Differential tests of the RetNet constructions (Corollary H.22, docs/retnet.md) against an
independent exact oracle.

The oracle is written here from docs/retnet.md alone, in the doc's two forms, with Fractions:
the recurrence ``z^n = γ·z^{n−1} + A[n]ᵀV[n]`` (``z^{−1} = 0``), ``y[n] = C[n]·z^n`` with
``A = u·W_A``, ``C = u·W_C``, ``V = u·W_V``, and the unrolled parallel form
``y[n] = Σ_{i≤n} γ^{n−i}·(C[n]·A[i]ᵀ)·V[i]``. The BaseConv models run on a BaseConv interpreter
also written here from docs/theory.md §1.1–1.2: ``y = (u·W + b1) ⊙ (h ⊛ u + b2)``, causal
``(h ⊛ u)[i, j] = Σ_{k≤i} h[k, j]·u[i−k, j]`` or cyclic, input in the top-left corner of a zero
``N'×d'`` state, output the top-left ``N×d`` block. Neither uses symverify's evaluators.

Compared: :func:`retnet_direct` (every group), :func:`retnet_stack_direct` (fused or not), the
Theorem H.21 compilations, the circuit :func:`symverify.library.retnet` itself, and ``verify``
(proved on the honest model, never proved on a model the interpreter shows to differ). A planted
lag or decay bug in the construction is caught by the oracle (``test_planted_*``).

More examples: ``SYMVERIFY_RETDIFF_EXAMPLES=200``.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import symverify as sv
import symverify.compiler.retnet as retnet_mod
from symverify.compiler import compile as sv_compile
from symverify.compiler.retnet import retnet_direct, retnet_stack_direct
from symverify.kernel.ir.baseconv import Mode
from symverify.kernel.verification import verify
from symverify.library import retnet, retnet_stack, retnet_weights
from symverify.mutate import get_weight, set_weight, weight_sites

EXAMPLES = int(os.environ.get("SYMVERIFY_RETDIFF_EXAMPLES", "0"))


def _settings(default: int):
    return settings(max_examples=EXAMPLES or default, deadline=None)


# ---- the oracle (docs/retnet.md) ---------------------------------------------------------------


def _matmul(u, W):
    return [[sum((Fraction(row[r]) * W[r][c] for r in range(len(W))), Fraction(0)) for c in range(len(W[0]))] for row in u]


def oracle_recurrent(u, gamma, WA, WC, WV):
    """``z^n = γ·z^{n−1} + A[n]ᵀV[n]``, ``y[n] = C[n]·z^n``."""
    d = len(WA)
    A, C, V = _matmul(u, WA), _matmul(u, WC), _matmul(u, WV)
    z = [[Fraction(0)] * d for _ in range(d)]
    y = []
    for n in range(len(u)):
        z = [[gamma * z[p][q] + A[n][p] * V[n][q] for q in range(d)] for p in range(d)]
        y.append([sum((C[n][p] * z[p][q] for p in range(d)), Fraction(0)) for q in range(d)])
    return y


def oracle_parallel(u, gamma, WA, WC, WV):
    """``y[n] = Σ_{i≤n} γ^{n−i}·(C[n]·A[i]ᵀ)·V[i]`` (the decay-mask form; ``γ^0 = 1``)."""
    d = len(WA)
    A, C, V = _matmul(u, WA), _matmul(u, WC), _matmul(u, WV)
    y = []
    for n in range(len(u)):
        row = [Fraction(0)] * d
        for i in range(n + 1):
            s = Fraction(gamma) ** (n - i) * sum((C[n][p] * A[i][p] for p in range(d)), Fraction(0))
            for q in range(d):
                row[q] += s * V[i][q]
        y.append(row)
    return y


def oracle(u, gamma, WA, WC, WV):
    a, b = oracle_recurrent(u, gamma, WA, WC, WV), oracle_parallel(u, gamma, WA, WC, WV)
    assert a == b, "the two oracle forms disagree"
    return a


# ---- a BaseConv interpreter (docs/theory.md §1.1–1.2) ------------------------------------------


def run_model(model, u):
    """``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` layer by layer, exactly."""
    N, _L, d, nn, dd = model.signature
    x = [[Fraction(0)] * dd for _ in range(nn)]
    for i in range(N):
        for j in range(d):
            x[i][j] = Fraction(u[i][j])
    for layer in model.layers:
        W, b1, h, b2 = (g.to_rows() for g in (layer.W, layer.b1, layer.h, layer.b2))
        cyclic = layer.mode is Mode.CYCLIC
        lin = _matmul(x, W)
        conv = [[Fraction(0)] * dd for _ in range(nn)]
        for i in range(nn):
            for j in range(dd):
                s = Fraction(0)
                for k in range(nn if cyclic else i + 1):
                    hk = h[k][j]
                    if hk:
                        s += hk * x[(i - k) % nn][j]
                conv[i][j] = s
        x = [[(lin[i][j] + b1[i][j]) * (conv[i][j] + b2[i][j]) for j in range(dd)] for i in range(nn)]
    return [row[:d] for row in x[:N]]


# ---- strategies ---------------------------------------------------------------------------------

small_q = st.fractions(min_value=-3, max_value=3, max_denominator=3)
gammas = st.one_of(st.sampled_from([Fraction(0), Fraction(1), Fraction(-1), Fraction(1, 2), Fraction(-2, 3)]), small_q)


@st.composite
def instances(draw, max_n=8, max_d=3):
    N = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    mat = st.lists(st.lists(small_q, min_size=d, max_size=d), min_size=d, max_size=d)
    gamma = draw(gammas)
    WA, WC, WV = draw(mat), draw(mat), draw(mat)
    u = draw(st.lists(st.lists(small_q, min_size=d, max_size=d), min_size=N, max_size=N))
    return N, d, gamma, WA, WC, WV, u


def _rand_u(rng, N, d):
    return [[Fraction(rng.randint(-5, 5), rng.randint(1, 3)) for _ in range(d)] for _ in range(N)]


# ---- the oracle against itself and against the circuit ------------------------------------------


@given(instances())
@_settings(40)
def test_circuit_matches_oracle(inst):
    N, d, gamma, WA, WC, WV, u = inst
    got = sv.evaluate(retnet(N, d, gamma, WA, WC, WV), u)
    assert [[Fraction(v) for v in row] for row in got] == oracle(u, gamma, WA, WC, WV)


# ---- the direct construction -------------------------------------------------------------------


def check_direct(N, d, gamma, WA, WC, WV, u, group=None):
    out = retnet_direct(N, d, gamma, WA, WC, WV, group=group)
    assert run_model(out.model, u) == oracle(u, gamma, WA, WC, WV)
    return out


@given(instances(), st.data())
@_settings(40)
def test_direct_matches_oracle(inst, data):
    N, d, gamma, WA, WC, WV, u = inst
    group = data.draw(st.integers(1, d))
    check_direct(N, d, gamma, WA, WC, WV, u, group)


@given(instances(max_n=5, max_d=2), st.data())
@_settings(8)
def test_direct_is_proved_and_a_moved_weight_is_never_proved(inst, data):
    """``verify`` proves the honest model; after one weight is moved, whenever the interpreter
    shows the model differs from the oracle on a sampled input, ``verify`` does not prove it."""
    N, d, gamma, WA, WC, WV, u = inst
    group = data.draw(st.integers(1, d))
    circuit = retnet(N, d, gamma, WA, WC, WV)
    out = check_direct(N, d, gamma, WA, WC, WV, u, group)
    assert verify(circuit, out).verdict.value == "proved"
    sites = weight_sites(out.model)
    site = sites[data.draw(st.integers(0, len(sites) - 1))]
    delta = data.draw(st.sampled_from([Fraction(1), Fraction(-1, 2), Fraction(3)]))
    moved = set_weight(out.model, site, get_weight(out.model, site) + delta)
    rng = random.Random(N * 31 + d)
    want = oracle(u, gamma, WA, WC, WV)
    differs = run_model(moved, u) != want or any(
        run_model(moved, v) != oracle(v, gamma, WA, WC, WV) for v in (_rand_u(rng, N, d) for _ in range(3)))
    event(f"moved weight changes the output: {differs}")
    if differs:
        assert verify(circuit, replace(out, model=moved)).verdict.value == "refuted", site


def test_generic_weights_every_moved_weight_differs_and_is_refuted():
    N, d, gamma = 4, 2, Fraction(-2, 3)
    WA, WC, WV = [[1, 2], [-1, 1]], [[2, 1], [1, -1]], [[1, -1], [2, 3]]
    circuit = retnet(N, d, gamma, WA, WC, WV)
    u = [[1, 2], [-1, 3], [2, -2], [Fraction(1, 2), 1]]
    out = check_direct(N, d, gamma, WA, WC, WV, u)
    assert verify(circuit, out).verdict.value == "proved"
    want = oracle(u, gamma, WA, WC, WV)
    for site in weight_sites(out.model):
        moved = set_weight(out.model, site, get_weight(out.model, site) + 1)
        assert run_model(moved, u) != want, site
        assert verify(circuit, replace(out, model=moved)).verdict.value == "refuted", site


# ---- edge values --------------------------------------------------------------------------------

ID2 = [[1, 0], [0, 1]]
WA2, WC2, WV2 = [[1, 2], [-1, 1]], [[2, 1], [1, -1]], [[1, -1], [2, 3]]


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1), Fraction(-1), Fraction(-5, 2), Fraction(7, 3)])
@pytest.mark.parametrize("group", [1, 2])
def test_edge_gammas(gamma, group):
    u = [[1, -2], [3, 1], [0, 2], [-1, 1], [2, 2]]
    out = check_direct(5, 2, gamma, WA2, WC2, WV2, u, group)
    assert verify(retnet(5, 2, gamma, WA2, WC2, WV2), out).verdict.value == "proved"


def test_gamma_zero_is_memoryless_and_gamma_one_is_a_prefix_sum():
    """γ = 0: ``y[n] = (C[n]·A[n]ᵀ)·V[n]``; γ = 1 with identity weights: ``y[n] = Σ_{i≤n} (u[n]·u[i])·u[i]``."""
    u = [[1, 2], [3, -1], [2, 2]]
    y0 = run_model(retnet_direct(3, 2, 0, ID2, ID2, ID2).model, u)
    assert y0 == [[Fraction(sum(a * a for a in row) * x) for x in row] for row in u]
    y1 = run_model(retnet_direct(3, 2, 1, ID2, ID2, ID2).model, u)
    want = [[Fraction(sum(sum(a * b for a, b in zip(u[n], u[i])) * u[i][q] for i in range(n + 1))) for q in range(2)] for n in range(3)]
    assert y1 == want


def test_zero_weights_give_zero():
    Z = [[0, 0], [0, 0]]
    u = [[1, 2], [3, 4], [5, 6]]
    for WA, WC, WV in ((Z, WC2, WV2), (WA2, Z, WV2), (WA2, WC2, Z)):
        assert check_direct(3, 2, Fraction(1, 2), WA, WC, WV, u).model.depth == 4
        assert oracle(u, Fraction(1, 2), WA, WC, WV) == [[0, 0]] * 3


@pytest.mark.parametrize("d", [1, 2, 3])
def test_sequence_length_one(d):
    rng = random.Random(d)
    W = [[[rng.randint(-3, 3) for _ in range(d)] for _ in range(d)] for _ in range(3)]
    u = _rand_u(rng, 1, d)
    for gamma in (0, Fraction(-3, 2)):  # γ is never used at N = 1
        check_direct(1, d, gamma, *W, u)
        assert oracle(u, gamma, *W) == oracle(u, 5, *W)


def test_huge_integers():
    big = 10**40
    gamma = Fraction(-(10**25) + 7, 3)
    WA, WC, WV = [[big, -1], [3, big + 1]], [[-big, 2], [big * 7, 1]], [[1, big], [-big, 2]]
    u = [[big, -big], [2**100, 5], [-(3**70), Fraction(big, 7)], [1, -1]]
    out = check_direct(4, 2, gamma, WA, WC, WV, u, group=1)
    assert verify(retnet(4, 2, gamma, WA, WC, WV), out).verdict.value == "proved"


# ---- stacks (Lemma H.11) ------------------------------------------------------------------------


@given(st.integers(1, 6), st.integers(1, 2), st.integers(2, 3), st.booleans(), st.data())
@_settings(15)
def test_stack_matches_oracle(N, d, k, fuse, data):
    mat = st.lists(st.lists(small_q, min_size=d, max_size=d), min_size=d, max_size=d)
    ws = [(data.draw(gammas), data.draw(mat), data.draw(mat), data.draw(mat)) for _ in range(k)]
    u = data.draw(st.lists(st.lists(small_q, min_size=d, max_size=d), min_size=N, max_size=N))
    group = data.draw(st.integers(1, d))
    want = u
    for w in ws:
        want = oracle(want, *w)
    weights = [retnet_weights(d, *w) for w in ws]
    out = retnet_stack_direct(N, d, weights, group=group, fuse=fuse)
    assert run_model(out.model, u) == want
    assert [[Fraction(v) for v in row] for row in sv.evaluate(retnet_stack(N, d, weights), u)] == want


def test_stack_is_proved_and_matches_oracle():
    ws = [(Fraction(1, 2), WA2, WC2, WV2), (Fraction(-3), WV2, WA2, ID2)]
    weights = [retnet_weights(2, *w) for w in ws]
    u = [[1, 2], [0, -1], [2, 1]]
    for fuse in (False, True):
        out = retnet_stack_direct(3, 2, weights, fuse=fuse)
        assert run_model(out.model, u) == oracle(oracle(u, *ws[0]), *ws[1])
        assert verify(retnet_stack(3, 2, weights), out).verdict.value == "proved"


# ---- the Theorem H.21 route ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
def test_h21_compilations_match_oracle(method):
    N, d, gamma = 3, 2, Fraction(-1, 2)
    model = sv_compile(retnet(N, d, gamma, WA2, WC2, WV2), method=method).model
    rng = random.Random(5)
    for _ in range(2):
        u = _rand_u(rng, N, d)
        assert run_model(model, u) == oracle(u, gamma, WA2, WC2, WV2)


# ---- planted bugs: the oracle catches them ------------------------------------------------------


def _plant(monkeypatch, change):
    """Rewrite every long filter (more than one tap) of the direct construction by ``change``."""
    real = retnet_mod._gated

    def gated(nn, dd, W, keep, taps):
        return real(nn, dd, W, keep, {c: (change(list(ks)) if len(ks) > 1 else ks) for c, ks in taps.items()})

    monkeypatch.setattr(retnet_mod, "_gated", gated)


@pytest.mark.parametrize("change", [
    pytest.param(lambda ks: [0, *ks[:-1]], id="lag-by-one"),
    pytest.param(lambda ks: [1] + [v * ks[1] for v in ks[1:]], id="decay-gamma^(k+1)"),
    pytest.param(lambda ks: ks[:1] + [ks[1]] * (len(ks) - 1), id="decay-constant-gamma"),
])
def test_planted_decay_or_lag_bug_is_caught_by_the_oracle(monkeypatch, change):
    gamma, u = Fraction(-2, 3), [[1, 2], [-1, 3], [2, -2], [1, 1]]
    check_direct(4, 2, gamma, WA2, WC2, WV2, u)  # honest: passes
    _plant(monkeypatch, change)
    with pytest.raises(AssertionError):
        check_direct(4, 2, gamma, WA2, WC2, WV2, u)
