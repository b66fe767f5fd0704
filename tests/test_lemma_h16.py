"""Lemma H.16 (butterfly factors as BaseConv gadgets) and Lemma H.18 (kaleidoscope chains)."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.compiler.butterfly_to_baseconv import (
    C16,
    C18,
    axis_of,
    chain_layer_bound,
    factor_layers,
    factor_model,
    kaleidoscope_factors,
    kaleidoscope_model,
    simplify_factors,
)
from symverify.compiler.layout import Layout, grid
from symverify.errors import CompileError
from symverify.ir.build import from_matrix
from symverify.kernel.ir.baseconv import Mode
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.scalar import sym
from symverify.kernel.kaleidoscope.apply import to_matrix
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics.poly import polynomials, shared_ring


def sym_factor(size: int, stride: int) -> ButterflyFactor:
    half = size // 2
    return ButterflyFactor(size, stride, *[tuple(sym(f"d{k}_{m}") for m in range(half)) for k in range(1, 5)])


def proved_exactly(circuit, model) -> bool:
    ring = shared_ring(circuit, model)
    return polynomials(circuit, ring) == polynomials(model, ring)


CASES = [(N, s, d) for d in (1, 2, 4) for N in (2, 4, 8, 16) if N >= d for s in [1 << k for k in range(N.bit_length() - 1)]]


@pytest.mark.parametrize(("size", "stride", "d"), CASES, ids=[f"N{N}-s{s}-d{d}" for N, s, d in CASES])
def test_every_stride_symbolic_diagonals(size, stride, d):
    f = sym_factor(size, stride)
    circ, ch = factor_model(f, d)
    axis = axis_of(f, d)
    assert axis == ("sequence" if stride >= d else "channel")
    assert len(ch.model.layers) == {"sequence": 2, "channel": 3}[axis] <= C16
    assert ch.model.modes() == {Mode.CYCLIC}
    rows = size // d
    assert ch.model.signature == (size // d, len(ch.model.layers), d, 3 * (rows + rows // 2), d)
    assert check_certificate(circ, ch.model, ch.certificate).ok
    assert proved_exactly(circ, ch.model)


def test_larger_sequence_factor_rows_64():
    f = sym_factor(256, 64)
    circ, ch = factor_model(f, 4)
    assert (ch.model.inner_n, ch.model.inner_d) == (3 * (64 + 32), 4)
    assert check_certificate(circ, ch.model, ch.certificate).ok
    assert proved_exactly(circ, ch.model)


def test_diagonal_factor_is_one_layer():
    f = ButterflyFactor(8, 2, (sym("a"), 2, 3, 4), (0,) * 4, (0,) * 4, (5, 6, 7, sym("b")))
    circ, ch = factor_model(f, 2)
    assert len(ch.model.layers) == 1
    assert check_certificate(circ, ch.model, ch.certificate).ok and proved_exactly(circ, ch.model)


def test_identity_factor_costs_nothing():
    circ, ch = factor_model(ButterflyFactor.identity(8, 4), 2)
    assert len(ch.model.layers) == 0
    assert check_certificate(circ, ch.model, ch.certificate).ok


def test_zero_and_one_coefficients_still_check():
    # d1 = d3 = 0 on a pair: the lower input is never read, yet the circuit mentions it
    f = ButterflyFactor(4, 2, (0, 1), (1, 1), (0, 2), (1, 0))
    circ, ch = factor_model(f, 1)
    assert check_certificate(circ, ch.model, ch.certificate).ok and proved_exactly(circ, ch.model)


@pytest.mark.parametrize(("size", "stride", "d"), [(8, 4, 1), (8, 1, 4), (8, 2, 2)])
def test_mutating_any_gadget_weight_is_refuted(size, stride, d):
    """Every nonzero W, h and G entry of a standalone gadget moves an input: perturbing it must fail."""
    f = ButterflyFactor(size, stride, *[tuple(k + 2 + m for m in range(size // 2)) for k in range(4)])
    circ, ch = factor_model(f, d)
    model = ch.model
    tried = 0
    for li, layer in enumerate(model.layers):
        for name in ("W", "b1", "h", "b2"):
            g = getattr(layer, name)
            if g.fill != 0:
                continue  # the all-ones biases: perturbing a cell that only ever multiplies 0 is harmless
            for (i, j), v in sorted(g.nonzero().items())[:6]:
                cells = g.cells() | {(i, j): v + 1}
                bad = replace(layer, **{name: grid(g.rows, g.cols, cells)})
                mutant = replace(model, layers=(*model.layers[:li], bad, *model.layers[li + 1:]))
                assert not proved_exactly(circ, mutant), (li, name, i, j)
                assert not check_certificate(circ, mutant, ch.certificate).ok
                tried += 1
    assert tried >= 10


def _rand_factor(rng: random.Random, size: int, stride: int, kind: str) -> ButterflyFactor:
    half = size // 2
    vals = [0, 1, 1, -1, 2, Fraction(1, 2)]
    if kind == "identity":
        return ButterflyFactor.identity(size, stride)
    d = [tuple(rng.choice(vals) for _ in range(half)) for _ in range(4)]
    if kind == "diagonal":
        d[1] = d[2] = (0,) * half
    return ButterflyFactor(size, stride, *d)


@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(0, 7))
def test_simplify_factors_keeps_the_product(seed, logn, count):
    rng = random.Random(seed)
    size = 1 << logn
    fs = [_rand_factor(rng, size, 1 << rng.randrange(logn), rng.choice(["general", "diagonal", "identity"])) for _ in range(count)]
    simp = simplify_factors(fs)
    assert len(simp) <= len(fs) or (not fs and not simp)
    assert not any(f.is_identity() for f in simp)
    assert all(a.stride != b.stride for a, b in itertools.pairwise(simp))
    ident = [[int(i == j) for j in range(size)] for i in range(size)]
    want = to_matrix(FactorList(size, tuple(fs))) if fs else ident
    got = to_matrix(FactorList(size, tuple(simp))) if simp else ident
    assert got == want


def _rand_bb(rng: random.Random, size: int) -> BBStar:
    vals = [0, 1, -1, 2, Fraction(1, 3)]
    return BBStar(size, tuple(ButterflyFactor(size, s, *[tuple(rng.choice(vals) for _ in range(size // 2)) for _ in range(4)])
                              for s in bbstar_strides(size)))


@pytest.mark.parametrize(("n", "d", "size", "w"), [(4, 1, 4, 1), (2, 2, 8, 2), (3, 1, 4, 1), (2, 3, 8, 1), (4, 4, 16, 1), (3, 3, 16, 2)])
def test_lemma_h18_chain(n, d, size, w):
    rng = random.Random(n * 100 + d * 10 + size + w)
    K = Kaleidoscope(n * d, size, tuple(_rand_bb(rng, size) for _ in range(w)))
    circ = from_matrix(to_matrix(K), n, d)
    ch = kaleidoscope_model(K, n, d, circ)
    lay, fs = kaleidoscope_factors(K, n, d)
    assert len(ch.model.layers) <= chain_layer_bound(fs, lay.gathered)
    groups = w if not lay.gathered else w + 2
    assert len(ch.model.layers) <= C18 * groups * (lay.size.bit_length() - 1) + 1 + (4 if lay.gathered else 0)
    assert ch.model.inner_d == d and ch.model.inner_n == lay.rows
    assert check_certificate(circ, ch.model, ch.certificate).ok
    assert proved_exactly(circ, ch.model)


def test_lemma_h18_symbolic_entries():
    size = 4
    fs = [sym_factor(size, s) for s in bbstar_strides(size)]
    K = Kaleidoscope(4, size, (BBStar(size, tuple(fs)),))
    circ = from_matrix(to_matrix(K), 2, 2)
    ch = kaleidoscope_model(K, 2, 2, circ)
    assert check_certificate(circ, ch.model, ch.certificate).ok and proved_exactly(circ, ch.model)


def test_errors_name_the_problem():
    f = sym_factor(8, 2)
    with pytest.raises(CompileError, match="power of two"):
        factor_model(f, 3)
    with pytest.raises(CompileError, match="differs from the layout size"):
        factor_layers(Layout(4, 1, 4), f)
    K = Kaleidoscope(4, 4, ())
    with pytest.raises(CompileError, match=r"corner is 4×4, expected n·d = 6"):
        kaleidoscope_model(K, 2, 3, from_matrix([[1] * 6] * 6, 2, 3))
    with pytest.raises(CompileError, match="reference circuit must read 2×2 inputs"):
        kaleidoscope_model(K, 2, 2, from_matrix([[1]], 1, 1))
    with pytest.raises(CompileError, match=r"power-of-two size ≥ 8 .* width 2\); found n = 2, d = 3, size = 12"):
        Layout(2, 3, 12)
    with pytest.raises(CompileError, match=r"size ≥ 16 .*found n = 4, d = 4, size = 8"):
        Layout(4, 4, 8)
    with pytest.raises(CompileError, match=r"size ≥ 8 .*found n = 2, d = 3, size = 4"):
        Layout(2, 3, 4)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 3), st.sampled_from([1, 2, 3, 4, 5, 6]), st.integers(0, 2), st.integers(0, 2))
def test_lemma_h18_models_meet_the_bounds_stated_before_building(seed, n, d, extra, w):
    """Random ``(BB*)^w_e`` (rational entries, ``e`` up to 4, any ``d``): the model is proved equal to
    the circuit of its exact matrix, within the bounds proofs/lemma_h18_kaleidoscope.py states from
    ``N = e·n·d``, ``n`` and ``d`` alone: ``N_k``, ``L ≤ 4·w'·log2 N_k + 1 (+4)``, ``N' ≤ 3·(R + ⌊R/2⌋)``,
    ``d' = d``."""
    rng = random.Random(seed)
    size = max(2, 1 << (n * d - 1).bit_length()) << extra
    K = Kaleidoscope(n * d, size, tuple(_rand_bb(rng, size) for _ in range(w)))
    circ = from_matrix(to_matrix(K), n, d)
    ch = kaleidoscope_model(K, n, d, circ)
    tw = 1 << (d.bit_length() - 1)
    gathered = tw != d
    n_k = max(size, 1 << (2 * n * tw - 1).bit_length()) if gathered else size
    R = n_k // tw
    m = ch.model
    assert ch.layout.size <= n_k
    assert len(m.layers) <= C18 * (w + 2 * gathered) * (n_k.bit_length() - 1) + 1 + 4 * gathered
    assert m.inner_n <= 3 * (R + R // 2) and m.inner_d == d
    assert check_certificate(circ, m, ch.certificate).ok
    assert proved_exactly(circ, m)
