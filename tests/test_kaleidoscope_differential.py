"""Differential test of the butterfly / kaleidoscope semantics against an oracle written here.

The oracle (:func:`factor_dense`, :func:`product_dense`) uses no package code: it builds the dense
``N×N`` matrix of every butterfly factor straight from docs/kaleidoscope.md §1.2 (stride ``s``: the
pairs ``(p, p+s)`` with ``p mod 2s < s``, numbered by increasing ``p``, pair ``m`` carrying the 2×2
block ``[[d1[m], d2[m]], [d3[m], d4[m]]]``), multiplies the factors in application order
(``factors[0]`` first, so ``E = F_last ⋯ F_0``) with plain Fraction (or sympy, for symbolic
weights) matrix products, and reads the ``n×n`` corner (§1.5). The package's objects are only read
for their data (size, stride, diagonals); every matrix compared is computed here.

Checked against it: the exact-matrix prover (``verify_matrix`` proved ⇔ the corner equals the
target, also for targets one entry, one row swap, one missing row or column or a transpose away;
``verify_permutation`` proved ⇔ the corner is that permutation, never for one of another length;
the garbage-free claim; ``verify_circuit`` and ``verify(K, circuit)``), ``apply`` /
``materialize`` / ``to_matrix`` and the int64 mod-p numpy path, the IR operations (transpose,
lift, products, absorbed diagonals, ``to_bbstars``, ``simplify_factors``), the constructions
(Beneš routing, both sparse constructions, selection routes, the three modes of linear circuits,
with their garbage-free claims and stated bounds) and the BaseConv models of Lemmas H.16/H.18 and
Theorem H.21, evaluated exactly and verified (and, once a weight is perturbed, verified again:
proved exactly when the perturbed model still computes the matrix).
``test_the_oracle_catches_planted_bugs`` shows that every check fails on a planted bug.

Examples per property are few by default (the file runs in seconds); set
``SYMVERIFY_MATDIFF_EXAMPLES=500`` for a long run.
"""

from __future__ import annotations

import functools
import os
import random
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.compiler.butterfly_to_baseconv import factor_model, kaleidoscope_model
from symverify.errors import ShapeError, SymverifyError
from symverify.ir.build import from_matrix
from symverify.kaleidoscope import (
    SparseMatrix,
    apply,
    linear_circuit_to_kaleidoscope,
    materialize,
    permutation_to_kaleidoscope,
    route_permutation,
    sparse_to_kaleidoscope,
    sparse_to_kaleidoscope_thm3,
    to_matrix,
)
from symverify.kaleidoscope.selection import direct_route, selection_route
from symverify.kaleidoscope.simplify import simplify_factors
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope, product
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.provers.matrix import verify_circuit, verify_matrix, verify_permutation
from symverify.mutate import mutate_weight, weight_sites
from symverify.semantics.exact import evaluate

EXAMPLES = int(os.environ.get("SYMVERIFY_MATDIFF_EXAMPLES", "0"))


def cfg(default: int):
    return settings(max_examples=EXAMPLES or default, deadline=None)


HUGE = 2**200
SYMBOLS = ("a", "b", "c")

# ---- the oracle ----------------------------------------------------------------------------------


def to_oracle(x):
    """An exact package scalar as an oracle value: ints and Fractions as they are, a symbolic
    weight as the sympy polynomial of its terms (read from its data, not computed by the package)."""
    if isinstance(x, (int, Fraction)):
        return x
    expr = sympy.Integer(0)
    for mono, coeff in x.terms:
        t = sympy.Rational(coeff.numerator, coeff.denominator)
        for name, e in mono:
            t *= sympy.Symbol(name) ** e
        expr += t
    return expr


def same(a, b) -> bool:
    if isinstance(a, sympy.Basic) or isinstance(b, sympy.Basic):
        return sympy.expand(sympy.sympify(a) - sympy.sympify(b)) == 0
    return a == b


def same_matrix(A, B) -> bool:
    return len(A) == len(B) and all(len(r) == len(s) and all(same(x, y) for x, y in zip(r, s)) for r, s in zip(A, B))


def identity(N):
    return [[1 if i == j else 0 for j in range(N)] for i in range(N)]


def factor_dense(size, stride, d1, d2, d3, d4):
    """The ``size×size`` matrix of a butterfly factor (docs/kaleidoscope.md §1.2)."""
    lows = [p for p in range(size) if p % (2 * stride) < stride]
    assert len(lows) == size // 2 == len(d1) == len(d2) == len(d3) == len(d4)
    F = [[0] * size for _ in range(size)]
    for m, p in enumerate(lows):
        q = p + stride
        F[p][p], F[p][q], F[q][p], F[q][q] = d1[m], d2[m], d3[m], d4[m]
    return F


def matmul(A, B):
    """``A·B`` by the schoolbook formula (zero entries of ``A`` skipped)."""
    n, m = len(A), len(B[0]) if B else 0
    out = []
    for i in range(n):
        row = [0] * m
        for k, a in enumerate(A[i]):
            if isinstance(a, int) and a == 0:
                continue
            Bk = B[k]
            for j in range(m):
                b = Bk[j]
                if not (isinstance(b, int) and b == 0):
                    row[j] = row[j] + a * b
        out.append(row)
    return out


def dense_of(f) -> list[list]:
    """The oracle matrix of a package factor, read from its data."""
    return factor_dense(f.size, f.stride, *[[to_oracle(v) for v in getattr(f, d)] for d in ("d1", "d2", "d3", "d4")])


def product_dense(size, factors):
    """``F_last ⋯ F_0`` for factors in application order."""
    M = identity(size)
    for f in factors:
        M = matmul(dense_of(f), M)
    return M


def factors_in_order(obj):
    if isinstance(obj, ButterflyFactor):
        return obj.size, [obj]
    if isinstance(obj, (BBStar, FactorList)):
        return obj.size, list(obj.factors)
    k = oracle_kaleidoscope(obj)
    return k.size, [f for g in k.groups for f in g.factors]


def oracle_full(obj):
    size, fs = factors_in_order(obj)
    return product_dense(size, fs)


def oracle_kaleidoscope(obj):
    """A construction's kaleidoscope, or ``obj`` itself."""
    return obj.kaleidoscope if hasattr(obj, "kaleidoscope") else obj


def oracle_corner(obj):
    k = oracle_kaleidoscope(obj)
    E = oracle_full(k)
    return [row[: k.n] for row in E[: k.n]]


def garbage_free(obj) -> bool:
    """Rows ``≥ n`` of the first ``n`` columns of ``E`` are 0."""
    k = oracle_kaleidoscope(obj)
    E = oracle_full(k)
    return all(same(E[i][j], 0) for i in range(k.n, k.size) for j in range(k.n))


def transpose(A):
    return [list(r) for r in zip(*A)] if A else []


def perm_dense(perm):
    n = len(perm)
    P = [[0] * n for _ in range(n)]
    for i, t in enumerate(perm):
        P[t][i] = 1
    return P


# ---- random objects ------------------------------------------------------------------------------


def bbstar_strides(N):
    down = [N >> k for k in range(1, N.bit_length())]
    return down + down[::-1]


def draw_entry(rnd: random.Random, symbolic: bool):
    r = rnd.random()
    if symbolic and r < 0.15:
        name = rnd.choice(SYMBOLS)
        return sv.sym(name) if rnd.random() < 0.7 else sv.sym(name) * rnd.choice([2, -1, Fraction(1, 3)]) + rnd.choice([0, 1])
    if r < 0.35:
        return rnd.choice([0, 0, 1, -1])
    if r < 0.45:
        return rnd.choice([HUGE, -HUGE, HUGE + 1])
    if r < 0.75:
        return rnd.randint(-4, 4)
    return Fraction(rnd.randint(-6, 6), rnd.randint(1, 7))


def draw_factor(rnd: random.Random, N: int, s: int, symbolic: bool, kind: str | None = None) -> ButterflyFactor:
    """A factor of one kind: identity, 0/1 switches, diagonal, general or sparse blocks."""
    half = N // 2
    kind = kind or rnd.choice(["identity", "switch", "diagonal", "general", "sparse"])
    d = [[], [], [], []]
    for _ in range(half):
        if kind == "identity":
            blk = (1, 0, 0, 1)
        elif kind == "switch":
            blk = rnd.choice([(1, 0, 0, 1), (0, 1, 1, 0), (1, 0, 1, 0), (0, 1, 0, 1)])
        elif kind == "diagonal":
            blk = (draw_entry(rnd, symbolic), 0, 0, draw_entry(rnd, symbolic))
        elif kind == "general":
            blk = tuple(draw_entry(rnd, symbolic) for _ in range(4))
        else:
            blk = tuple(draw_entry(rnd, symbolic) if rnd.random() < 0.3 else rnd.choice([0, 1]) for _ in range(4))
        for k in range(4):
            d[k].append(blk[k])
    if kind == "identity" and rnd.random() < 0.5:
        return ButterflyFactor.identity(N, s)
    return ButterflyFactor(N, s, *d)


def draw_bbstar(rnd: random.Random, N: int, symbolic: bool) -> BBStar:
    return BBStar(N, tuple(draw_factor(rnd, N, s, symbolic) for s in bbstar_strides(N)))


@st.composite
def kaleidoscopes(draw, max_size=32, max_w=3, symbolic=False):
    """A random ``(BB*)^w`` kaleidoscope: ``N = 1 … max_size`` (a power of two; 1 only for w = 0),
    any corner ``1 ≤ n ≤ N`` (not only powers of two), ``w = 0 … max_w``."""
    N = draw(st.sampled_from([k for k in (1, 2, 4, 8, 16, 32) if k <= max_size]))
    w = 0 if N == 1 else draw(st.integers(0, max_w))
    n = draw(st.integers(1, N))
    rnd = draw(st.randoms(use_true_random=False))
    sym_on = symbolic and draw(st.booleans())
    return Kaleidoscope(n, N, tuple(draw_bbstar(rnd, N, sym_on) for _ in range(w)))


@st.composite
def factor_lists(draw, max_size=32, symbolic=False):
    """Any stride order (increasing, decreasing, random), 0 … 8 factors."""
    N = draw(st.sampled_from([k for k in (2, 4, 8, 16, 32) if k <= max_size]))
    strides = [N >> k for k in range(1, N.bit_length())]
    order = draw(st.sampled_from(["up", "down", "random"]))
    count = draw(st.integers(0, 8))
    rnd = draw(st.randoms(use_true_random=False))
    if order == "up":
        ss = [strides[::-1][k % len(strides)] for k in range(count)]
    elif order == "down":
        ss = [strides[k % len(strides)] for k in range(count)]
    else:
        ss = [rnd.choice(strides) for _ in range(count)]
    sym_on = symbolic and draw(st.booleans())
    return FactorList(N, tuple(draw_factor(rnd, N, s, sym_on) for s in ss))


def rational_vector(rnd: random.Random, n: int):
    return [rnd.choice([0, 1, -1, HUGE, rnd.randint(-9, 9), Fraction(rnd.randint(-9, 9), rnd.randint(1, 9))]) for _ in range(n)]


def matvec(A, x):
    return [sum((a * b for a, b in zip(row, x)), 0) for row in A]


# ---- the checks (each raises AssertionError on a disagreement) ---------------------------------------


def check_verify_matrix(K, rnd: random.Random) -> None:
    """``verify_matrix`` proved ⇔ the oracle corner equals the target, for the corner and its
    neighbours; a refutation names the first differing entry in row-major order."""
    C = oracle_corner(K)
    n = K.n
    pkg = to_matrix(K)  # target in package scalars (its values are compared with the oracle too)
    assert same_matrix([[to_oracle(v) for v in r] for r in pkg], C)

    def decide(target, claim):
        got = verify_matrix(K, target)
        assert got.proved is claim, (got, claim)
        if not claim:
            i, j, kv, _ = got.first_difference
            want = next((i2, j2) for i2 in range(n) for j2 in range(n)
                        if not same(C[i2][j2], to_oracle(target[i2][j2]) if i2 < len(target) and j2 < len(target[i2]) else 0))
            assert (i, j) == want and same(to_oracle(kv), C[i][j])

    decide(pkg, True)
    i, j = rnd.randrange(n), rnd.randrange(n)
    off = [list(r) for r in pkg]
    off[i][j] = off[i][j] + rnd.choice([1, -1, Fraction(1, 3), HUGE])
    decide(off, False)
    if n >= 2:
        a, b = rnd.sample(range(n), 2)
        swapped = [list(r) for r in pkg]
        swapped[a], swapped[b] = swapped[b], swapped[a]
        decide(swapped, same_matrix([C[a], C[b]], [C[b], C[a]]))
        missing = [r[:-1] for r in pkg]  # an n×(n−1) target is padded with a zero column
        decide(missing, all(same(C[r][n - 1], 0) for r in range(n)))
        short = [list(r) for r in pkg[:-1]]  # and an (n−1)×n one with a zero row
        decide(short, all(same(C[n - 1][c], 0) for c in range(n)))
    as_dict = {(i, j): v for i, r in enumerate(off) for j, v in enumerate(r)}  # the other target forms
    assert not verify_matrix(K, as_dict).proved and not verify_matrix(K, SparseMatrix.from_dense(off)).proved
    assert verify_matrix(K, SparseMatrix.from_dense(pkg)).proved
    tr = [list(r) for r in zip(*pkg)]
    decide(tr, same_matrix(transpose(C), C))
    gf = garbage_free(K)
    assert verify_matrix(K, pkg, garbage_free=True).proved is gf


def check_apply(obj, rnd: random.Random) -> None:
    """``apply`` (corner and full), ``apply_batch``, ``materialize`` and ``to_matrix`` agree with the oracle."""
    size, _ = factors_in_order(obj)
    E = oracle_full(obj)
    k = oracle_kaleidoscope(obj)
    n = k.n if isinstance(k, Kaleidoscope) else size
    x = rational_vector(rnd, n)
    got = apply(obj, x)
    assert all(same(to_oracle(g), w) for g, w in zip(got, matvec([r[:n] for r in E[:n]], x), strict=True))
    xf = rational_vector(rnd, size)
    got = apply(obj, xf, full=True)
    assert all(same(to_oracle(g), w) for g, w in zip(got, matvec(E, xf), strict=True))
    rows = materialize(obj)
    assert len(rows) == size
    for i, r in enumerate(rows):
        assert set(r.terms) <= set(range(n))
        assert all(same(to_oracle(r.terms.get(j, 0)), E[i][j]) for j in range(n)), i
    assert same_matrix([[to_oracle(v) for v in r] for r in to_matrix(obj)], [r[:n] for r in E[:n]])
    cols = sorted(rnd.sample(range(size), rnd.randint(0, size)))
    for i, r in enumerate(materialize(obj, cols)):
        assert set(r.terms) <= set(cols) and all(same(to_oracle(r.terms.get(j, 0)), E[i][j]) for j in cols), i


def check_permutation_claims(K, perm) -> None:
    """``verify_permutation(K, perm)`` proved ⇔ the oracle corner is exactly ``P[perm[i], i] = 1``
    (an ``n×n`` matrix: a permutation of another length is never proved, it may be refused)."""
    try:
        got = verify_permutation(K, perm).proved
    except SymverifyError:
        assert len(perm) != oracle_kaleidoscope(K).n
        got = False
    assert got is same_matrix(oracle_corner(K), perm_dense(perm))
    if got:
        assert verify_permutation(K, perm, garbage_free=True).proved is garbage_free(K)


def check_construction(f, target, n) -> None:
    """A construction's corner is ``target`` padded to ``n×n``; its garbage-free claim and its
    stated bounds hold."""
    C = oracle_corner(f)
    assert f.kaleidoscope.n == n
    want = [[0] * n for _ in range(n)]
    for i, row in enumerate(target):
        for j, v in enumerate(row):
            want[i][j] = to_oracle(v)
    assert same_matrix(C, want)
    if f.garbage_free:
        assert garbage_free(f)
    assert verify_matrix(f, target).proved
    assert not f.over_bound(), (f.resources, f.bounds)


# ---- properties --------------------------------------------------------------------------------------


@cfg(25)
@given(kaleidoscopes(), st.randoms(use_true_random=False))
def test_verify_matrix_proves_exactly_the_oracle_corner(K, rnd):
    check_verify_matrix(K, rnd)


@cfg(8)
@given(kaleidoscopes(max_size=8, max_w=2, symbolic=True), st.randoms(use_true_random=False))
def test_verify_matrix_on_symbolic_weights(K, rnd):
    check_verify_matrix(K, rnd)


@cfg(20)
@given(kaleidoscopes(symbolic=True, max_size=16, max_w=2), st.randoms(use_true_random=False))
def test_apply_and_materialize_match_the_oracle(K, rnd):
    check_apply(K, rnd)


@cfg(20)
@given(factor_lists(symbolic=True, max_size=16), st.randoms(use_true_random=False))
def test_factor_lists_in_any_stride_order_match_the_oracle(fl, rnd):
    check_apply(fl, rnd)
    if fl.factors:
        check_apply(fl.factors[0], rnd)
    E = oracle_full(fl)
    for merge in (False, True):
        groups = fl.to_bbstars(merge=merge)
        assert same_matrix(product_dense(fl.size, [f for g in groups for f in g.factors]), E)
    assert same_matrix(product_dense(fl.size, simplify_factors(fl.factors)), E)
    assert same_matrix(oracle_full(fl.transpose()), transpose(E))
    big = FactorList(2 * fl.size, (draw_factor(rnd, 2 * fl.size, fl.size, True),))
    E2 = oracle_full(big)
    assert same_matrix(oracle_full(fl.then(big)), matmul(E2, oracle_full(fl.lift(2 * fl.size))))
    assert same_matrix(oracle_full(big.then(fl)), matmul(oracle_full(fl.lift(2 * fl.size)), E2))
    same_stride = [f for f in fl.factors if f.stride == fl.factors[-1].stride] if fl.factors else []
    if len(same_stride) >= 2:  # factors of one stride form an algebra: ``g.then(f)`` is ``f·g``
        f, g = same_stride[-1], same_stride[0]
        assert same_matrix(oracle_full(g.then(f)), matmul(oracle_full(f), oracle_full(g)))


def check_ir(K1, K2, rnd: random.Random) -> None:
    """transpose, lift, absorb_diagonal and the corner product ``then`` (with the projector)."""
    C1 = oracle_corner(K1)
    assert same_matrix(oracle_corner(K1.transpose()), transpose(C1))
    big = K1.size * rnd.choice([1, 2, 4])
    if big >= 2:
        L = K1.lift(big)
        assert same_matrix(oracle_corner(L), C1)
        E, EL = oracle_full(K1), oracle_full(L)
        assert same_matrix([r[: K1.size] for r in EL[: K1.size]], E)
        assert all(same(EL[i][j], 1 if i == j else 0) for i in range(big) for j in range(big) if max(i, j) >= K1.size)
    if K1.groups:
        diag = rational_vector(rnd, K1.size)
        D = [[diag[i] if i == j else 0 for j in range(K1.size)] for i in range(K1.size)]
        E = oracle_full(K1)
        assert same_matrix(oracle_full(K1.absorb_diagonal(diag, "before")), matmul(E, D))
        assert same_matrix(oracle_full(K1.absorb_diagonal(diag, "after")), matmul(D, E))
    K2 = Kaleidoscope(K1.n, K2.size, K2.groups) if K2.size >= K1.n else Kaleidoscope.identity(K1.n)
    prod = K1.then(K2)
    assert same_matrix(oracle_corner(prod), matmul(oracle_corner(K2), C1))
    assert same_matrix(oracle_corner(product(K1, K2, K1)), matmul(matmul(C1, oracle_corner(K2)), C1))


@cfg(20)
@given(kaleidoscopes(max_size=16, max_w=2), kaleidoscopes(max_size=16, max_w=2), st.randoms(use_true_random=False))
def test_ir_operations_match_the_oracle(K1, K2, rnd):
    check_ir(K1, K2, rnd)


@cfg(20)
@given(st.integers(1, 32), st.randoms(use_true_random=False))
def test_permutation_routing_and_verify_permutation(n, rnd):
    perm = list(range(n))
    rnd.shuffle(perm)
    f = permutation_to_kaleidoscope(perm)
    check_construction(f, perm_dense(perm), n)
    check_permutation_claims(f, perm)
    assert f.w == 1 and f.N == max(2, 1 << (n - 1).bit_length())
    if n >= 2:  # a transposition or a 3-cycle away: refuted
        other = list(perm)
        a, b = rnd.sample(range(n), 2)
        other[a], other[b] = other[b], other[a]
        check_permutation_claims(f, other)
        assert not verify_permutation(f, other).proved
    if n >= 2:  # the corner is a shorter permutation padded with zeros: never proved (the old false proof)
        short = [t for t in perm if t < n - 1]
        padded = sparse_to_kaleidoscope(SparseMatrix.from_dict(n, n, {(t, i): 1 for i, t in enumerate(short)}))
        check_permutation_claims(padded, short)
        check_permutation_claims(padded, [*short, n - 1])
    if n & (n - 1) == 0 and n >= 2:
        bb = route_permutation(perm)
        assert same_matrix(oracle_full(bb), perm_dense(perm))


@cfg(20)
@given(kaleidoscopes(max_size=8, max_w=1), st.randoms(use_true_random=False))
def test_verify_permutation_on_random_switch_networks(K, rnd):
    """Random kaleidoscopes whose corner is sometimes a permutation (0/1 switches)."""
    perm = list(range(K.n))
    rnd.shuffle(perm)
    check_permutation_claims(K, perm)
    C = oracle_corner(K)
    found = [next((i for i in range(K.n) if same(C[i][j], 1)), 0) for j in range(K.n)]
    if sorted(found) == list(range(K.n)):
        check_permutation_claims(K, found)


P31 = 2**31 - 1


def residue(x, p: int, params) -> int:
    """An oracle value modulo ``p``: a rational through the inverse of its denominator, a symbolic
    one at the integer point ``params``."""
    if isinstance(x, sympy.Basic):
        x = sympy.Rational(x.subs({sympy.Symbol(k): v for k, v in params.items()}))
        x = Fraction(int(x.p), int(x.q))
    x = Fraction(x)
    return x.numerator * pow(x.denominator, -1, p) % p


@cfg(15)
@given(kaleidoscopes(max_size=16, max_w=2, symbolic=True), st.randoms(use_true_random=False))
def test_modular_numpy_application_matches_the_oracle(K, rnd):
    """``compile_numpy(kind='mod')`` (int64 modulo a prime) is the oracle's corner modulo that prime."""
    from symverify.kaleidoscope import compile_numpy
    from symverify.kernel.kaleidoscope.apply import params_of

    params = {name: rnd.randrange(P31) for name in SYMBOLS}
    prog = compile_numpy(K, "mod", p=P31, params={k: v for k, v in params.items() if k in params_of(K)})
    C = oracle_corner(K)
    x = [rnd.randrange(P31) for _ in range(K.n)]
    want = [sum(residue(c, P31, params) * v for c, v in zip(row, x)) % P31 for row in C]
    assert [int(v) for v in prog.apply(x)] == want


@cfg(10)
@given(kaleidoscopes(max_size=8, max_w=2), st.integers(1, 3), st.randoms(use_true_random=False))
def test_kaleidoscope_against_a_linear_circuit(K, d, rnd):
    """``verify_circuit`` and ``verify(K, circuit)`` (exact-matrix, then the generic methods): proved
    for the circuit of the oracle corner, refuted for the circuit of a matrix one entry away."""
    d = d if K.n % d == 0 else 1
    n_rows = K.n // d
    C = oracle_corner(K)
    good = from_matrix(C, n_rows, d)
    assert verify_circuit(K, good).proved and sv.verify(K, good).proved and sv.verify(good, K).proved
    off = [list(r) for r in C]
    i, j = rnd.randrange(K.n), rnd.randrange(K.n)
    off[i][j] += rnd.choice([1, -1, Fraction(1, 2)])
    bad = from_matrix(off, n_rows, d)
    got = verify_circuit(K, bad)
    assert not got.proved and got.first_difference[:2] == (i, j)
    rep = sv.verify(K, bad)
    assert rep.refuted and not rep.proved


@st.composite
def sparse_matrices(draw, max_n=12):
    rows = draw(st.integers(0, max_n))
    cols = draw(st.integers(0, max_n))
    rnd = draw(st.randoms(use_true_random=False))
    shape = draw(st.sampled_from(["random", "dense column", "dense row", "diagonal", "empty", "full"]))
    symbolic = draw(st.booleans())
    ents = {}
    for i in range(rows):
        for j in range(cols):
            if shape == "random":
                on = rnd.random() < 0.3
            elif shape == "dense column":
                on = j == 0 or rnd.random() < 0.1
            elif shape == "dense row":
                on = i == 0 or rnd.random() < 0.1
            elif shape == "diagonal":
                on = i == j
            elif shape == "full":
                on = True
            else:
                on = False
            if on:
                v = draw_entry(rnd, symbolic)
                if v != 0:
                    ents[(i, j)] = v
    return SparseMatrix.from_dict(rows, cols, ents)


@cfg(20)
@given(sparse_matrices())
def test_sparse_constructions_build_the_requested_matrix(S):
    n = max(S.rows, S.cols)
    for build in (sparse_to_kaleidoscope, sparse_to_kaleidoscope_thm3):
        if n == 0:  # a 0×0 matrix has no n×n corner with n ≥ 1
            with pytest.raises(ShapeError, match=r"found a 0×0 SparseMatrix"):
                build(S)
            continue
        check_construction(build(S), S.to_dense(), n)


@st.composite
def selections(draw):
    """``{(out position, in position): coeff}`` with at most two entries per row."""
    rnd = draw(st.randoms(use_true_random=False))
    span = draw(st.integers(1, 16))
    outs = draw(st.integers(0, span))
    symbolic = draw(st.booleans())
    fan = draw(st.sampled_from(["any", "few sources"]))
    sources = list(range(span)) if fan == "any" else rnd.sample(range(span), min(span, 2))
    ents = {}
    for o in rnd.sample(range(span), outs):
        for j in rnd.sample(sources, min(len(sources), rnd.choice([1, 1, 2]))):
            v = draw_entry(rnd, symbolic)
            ents[(o, j)] = v if v != 0 else 1
    return ents


def check_selection(route, ents) -> None:
    """The route's matrix is the stage matrix on the columns below the size it was built at
    (``need``): outputs at their rows, every other row 0 (garbage-free), also on the columns the
    stage does not read. (A route lifted to ``size > need`` is ``diag(F, I)``.)"""
    fl = FactorList(route.size, route.factors)
    E = oracle_full(fl)
    for i in range(route.size):
        for j in range(route.need):
            assert same(E[i][j], to_oracle(ents.get((i, j), 0))), (i, j)


@cfg(25)
@given(selections(), st.lists(st.integers(0, 20), max_size=3), st.lists(st.integers(0, 20), max_size=3), st.booleans())
def test_selection_routes_build_the_stage_matrix(ents, in_pos, out_pos, room):
    route = selection_route(ents, in_pos, out_pos)
    check_selection(route, ents)
    direct = direct_route(ents, in_pos, out_pos)
    if direct is not None:
        check_selection(direct, ents)
    check_selection(selection_route(ents, in_pos, out_pos, size=2 * route.size, room=room), ents)


def circuit_dense(c: Circuit):
    """The matrix of a linear circuit, from its gates (``lin``: ``α·x_a + β·x_b``)."""
    n = c.num_inputs
    vals = [[1 if i == j else 0 for j in range(n)] for i in range(n)]
    for g in c.gates:
        assert g.op is Op.LIN
        (a, b), (al, be) = g.args, g.coeffs
        vals.append([to_oracle(al) * x + to_oracle(be) * y for x, y in zip(vals[a], vals[b])])
    M = [vals[o] for o in c.outputs]
    return M + [[0] * n for _ in range(n - len(M))]


@st.composite
def linear_circuits(draw):
    rnd = draw(st.randoms(use_true_random=False))
    n_rows, d = draw(st.integers(1, 4)), draw(st.integers(1, 2))
    n = n_rows * d
    gates = []
    for k in range(draw(st.integers(0, 10))):
        nodes = n + k
        gates.append(Gate.lin(rnd.randrange(nodes), draw_entry(rnd, False), rnd.randrange(nodes), draw_entry(rnd, False)))
    outs = tuple(rnd.randrange(n + len(gates)) for _ in range(rnd.randint(1, n)))
    return Circuit(n_rows, d, tuple(gates), outs)


@st.composite
def butterfly_circuits(draw):
    """Levels that mix the pairs ``(p, p ⊕ s)`` of one stride each (what the structured mode
    routes as one factor per level), coefficients 0 and cancelling ones included."""
    rnd = draw(st.randoms(use_true_random=False))
    N = draw(st.sampled_from([2, 4, 8]))
    d = draw(st.sampled_from([x for x in (1, 2, 4) if x <= N]))
    cur = list(range(N))
    gates: list[Gate] = []
    for _ in range(draw(st.integers(1, 3))):
        s = rnd.choice([N >> k for k in range(1, N.bit_length())])
        nxt = []
        for p in range(N):
            kind = rnd.random()
            a, b = cur[p], cur[p ^ s]
            if kind < 0.15:
                g = Gate.lin(a, 0, b, 0)
            elif kind < 0.25:
                g = Gate.lin(a, 2, a, -2)
            else:
                g = Gate.lin(a, draw_entry(rnd, False), b, draw_entry(rnd, False))
            gates.append(g)
            nxt.append(N + len(gates) - 1)
        cur = nxt
    outs = tuple(cur[: rnd.randint(1, N)]) if rnd.random() < 0.5 else tuple(cur)
    return Circuit(N // d, d, tuple(gates), outs)


@cfg(15)
@given(butterfly_circuits())
def test_structured_mode_on_butterfly_levels(c):
    check_construction(linear_circuit_to_kaleidoscope(c, "structured"), circuit_dense(c), c.num_inputs)


@cfg(15)
@given(linear_circuits(), st.sampled_from(["live", "size", "structured"]))
def test_linear_circuit_constructions_build_the_circuit_matrix(c, mode):
    f = linear_circuit_to_kaleidoscope(c, mode)
    check_construction(f, circuit_dense(c), c.num_inputs)


# ---- compiled BaseConv models --------------------------------------------------------------------------


def model_matrix(model, n_rows, d):
    """The exact matrix of an affine model (``vec`` order ``i·d + j``) and its value at 0."""
    zero = [[0] * d for _ in range(n_rows)]
    f0 = [v for row in evaluate(model, zero) for v in row]
    cols = []
    for k in range(n_rows * d):
        u = [[1 if i * d + j == k else 0 for j in range(d)] for i in range(n_rows)]
        fk = [v for row in evaluate(model, u) for v in row]
        cols.append([a - b for a, b in zip(fk, f0)])
    return transpose(cols), f0


def check_model(model, circuit, n_rows, d, C, rnd: random.Random, perturb: int = 2, tries: int = 8) -> None:
    """The model computes ``C`` exactly and ``verify`` proves it against ``circuit``. Then random
    nonzero weights are perturbed one at a time (``v → v + 1``; ``tries`` of them, fewer once
    ``perturb`` changed the function, more while none did and ``C ≠ 0``): ``verify`` is proved
    exactly when the perturbed model still computes ``C`` (a weight that only moves values nobody
    reads changes nothing), else refuted; when ``C ≠ 0`` some perturbation must be refuted."""
    M, f0 = model_matrix(model, n_rows, d)
    assert same_matrix(M, C) and all(v == 0 for v in f0)
    assert sv.verify(circuit, model).proved
    sites = weight_sites(model)
    rnd.shuffle(sites)
    zero = all(same(v, 0) for r in C for v in r)
    changed = 0
    for tried, site in enumerate(sites):
        if changed >= perturb or (tried >= tries and (changed or zero)):
            break
        bad = mutate_weight(model, site, "inc")
        Mb, fb = model_matrix(bad, n_rows, d)
        equal = same_matrix(Mb, C) and all(v == 0 for v in fb)
        rep = sv.verify(circuit, bad)
        assert rep.proved is equal and rep.refuted is not equal, (site, rep.verdict)
        changed += not equal
    assert changed or zero or not sites  # a model of 0 layers (the identity) has no weight


@cfg(6)
@given(kaleidoscopes(max_size=8, max_w=2), st.integers(1, 3), st.randoms(use_true_random=False))
def test_kaleidoscope_models_compute_the_oracle_matrix(K, d, rnd):
    """Lemma H.18: ``kaleidoscope_model`` of a random kaleidoscope (``n·d`` = its corner)."""
    n_rows = K.n // d
    if n_rows == 0:
        d, n_rows = 1, K.n
    K = Kaleidoscope(n_rows * d, K.size, K.groups)
    C = oracle_corner(K)
    circuit = from_matrix(C, n_rows, d)
    ch = kaleidoscope_model(K, n_rows, d, circuit)
    check_model(ch.model, circuit, n_rows, d, C, rnd)


@cfg(6)
@given(st.sampled_from([2, 4, 8]), st.data(), st.randoms(use_true_random=False))
def test_factor_models_compute_the_oracle_matrix(N, data, rnd):
    """Lemma H.16: ``factor_model`` of one random factor, every stride and track width."""
    s = data.draw(st.sampled_from([N >> k for k in range(1, N.bit_length())]))
    d = data.draw(st.sampled_from([x for x in (1, 2, 4) if x <= N]))
    f = draw_factor(rnd, N, s, False)
    c, ch = factor_model(f, d)
    C = oracle_full(f)
    assert same_matrix(circuit_dense(c), C)
    check_model(ch.model, c, N // d, d, C, rnd)


@cfg(4)
@given(linear_circuits(), st.randoms(use_true_random=False))
def test_compiled_linear_circuits_compute_their_matrix(c, rnd):
    """Theorem H.21 on random linear circuits (zero and cancelling coefficients, repeated outputs)."""
    out = sv.compile(c, method="kaleidoscope")
    check_model(out.model, c, c.n, c.d, circuit_dense(c), rnd, perturb=1)


@cfg(4)
@given(kaleidoscopes(max_size=4, max_w=1), st.integers(1, 3), st.randoms(use_true_random=False))
def test_compiled_kaleidoscope_circuits_compute_the_oracle_matrix(K, d, rnd):
    """Theorem H.21 (``compile(..., method='kaleidoscope')``) on the circuit of a kaleidoscope's corner."""
    d = d if K.n % d == 0 else 1
    C = oracle_corner(K)
    circuit = from_matrix(C, K.n // d, d)
    out = sv.compile(circuit, method="kaleidoscope")
    check_model(out.model, circuit, K.n // d, d, C, rnd, perturb=1)


# ---- regressions found by the properties above ------------------------------------------------------


@pytest.mark.parametrize(
    "c",
    [
        Circuit(1, 1, (Gate.lin(0, 0, 0, 0),), (1,)),  # 0·x + 0·x: the level is the zero map
        Circuit(2, 1, (Gate.lin(0, 1, 1, -1), Gate.lin(2, 0, 2, 0)), (3, 0)),  # a later level is zero
        Circuit(1, 2, (Gate.lin(0, 2, 0, -2),), (2, 1)),  # the coefficients cancel
    ],
)
def test_structured_mode_keeps_a_level_that_is_the_zero_map(c):
    """``linear_circuit_to_kaleidoscope(c, 'structured')`` skipped a level whose entries all cancel
    (no factor was emitted for it, so the level acted as the identity): ``0·x`` came out as ``x``."""
    f = linear_circuit_to_kaleidoscope(c, "structured")
    check_construction(f, circuit_dense(c), c.num_inputs)


# ---- every check can fail: planted bugs ---------------------------------------------------------------


def _general(seed: int, N: int = 8, n: int = 5, w: int = 2) -> Kaleidoscope:
    rnd = random.Random(seed)
    return Kaleidoscope(n, N, tuple(BBStar(N, tuple(draw_factor(rnd, N, s, False, "general") for s in bbstar_strides(N)))
                                    for _ in range(w)))


def _plan_patch(mp, change):
    """Wrap the stage kernel's per-factor plan (``symverify.kernel.kaleidoscope.apply._plan``)."""
    import symverify.kernel.kaleidoscope.apply as ap

    orig = ap._plan
    mp.setattr(ap, "_plan", lambda f, ring: change(orig, f, ring))


def _plant_block_entry(mp):  # every 2×2 block transposed (d2 and d3 exchanged)
    _plan_patch(mp, lambda orig, f, ring: [(p, q, a, c, b, d) for p, q, a, b, c, d in orig(f, ring)])


def _plant_stride(mp):  # strides 1 and 2 exchanged
    import dataclasses

    _plan_patch(mp, lambda orig, f, ring: orig(dataclasses.replace(f, stride={1: 2, 2: 1}.get(f.stride, f.stride)), ring))


def _plant_pair_numbering(mp):  # block m applied to the pair of block m + 1
    import symverify.kernel.kaleidoscope.apply as ap

    orig = ap.pair_index
    mp.setattr(ap, "pair_index", lambda size, stride, m: orig(size, stride, (m + 1) % (size // 2)))


def _plant_prover_compares_nothing(mp):
    import symverify.kernel.provers.matrix as pm

    mp.setattr(pm, "_first_difference", lambda rows, want: None)


def _plant_prover_skips_garbage(mp):  # rows ≥ n reported empty
    import types

    import symverify.kernel.provers.matrix as pm

    orig = pm.materialize
    mp.setattr(pm, "materialize", lambda k, **kw: [r if i < k.n else types.SimpleNamespace(terms={})
                                                   for i, r in enumerate(orig(k, **kw))])


def _plant_short_permutation(mp):  # verify_permutation before the fix: a short permutation padded with zero rows
    mp.setattr(__import__(__name__), "verify_permutation",
               lambda obj, perm, garbage_free=None: verify_matrix(obj, SparseMatrix.permutation(perm), garbage_free=garbage_free))


def _plant_routing(mp):  # the first switch of every factor flipped
    import symverify.kaleidoscope.permutation as pp

    orig = pp._switch_factor
    mp.setattr(pp, "_switch_factor", lambda size, stride, swaps: orig(size, stride, [1 - swaps[0], *swaps[1:]]))
    # small networks share their switch factors (a cache): an empty one while the bug is planted,
    # so the planted factors are built, and none of them outlives the plant
    mp.setattr(pp, "_shared_switch", functools.lru_cache(maxsize=None)(pp._switch))


def _plant_sparse(mp):  # the sparse construction routes a wrong permutation
    import symverify.kaleidoscope.sparse as sp

    orig = sp.route_permutation
    mp.setattr(sp, "route_permutation", lambda perm: orig(list(perm)[::-1]))


def _plant_selection(mp):  # the combine factor scales its outputs by 2
    import symverify.kaleidoscope.selection as sel

    orig = sel._combine
    mp.setattr(sel, "_combine", lambda N, K, rows, second: orig(N, K, rows, second).absorb((2,) * N, "after"))


def _plant_model(mp):  # the compiled chain drops its last factor
    import symverify.compiler.butterfly_to_baseconv as bc

    orig = bc.simplify_factors
    mp.setattr(bc, "simplify_factors", lambda fs: orig(fs)[:-1])


def _plant_verify_proves_all(mp):
    class Proved:
        proved, refuted, verdict = True, False, "proved"

    mp.setattr(sv, "verify", lambda *a, **k: Proved())


def _plant_transpose_order(mp):  # the transpose keeps the order of the BB* groups
    mp.setattr(Kaleidoscope, "transpose", lambda self: Kaleidoscope(self.n, self.size, tuple(g.transpose() for g in self.groups)))


def _run_apply():
    check_apply(_general(1), random.Random(1))


def _run_verify_matrix():
    check_verify_matrix(_general(2), random.Random(2))


def _run_permutation():
    short = [1, 0]
    check_permutation_claims(sparse_to_kaleidoscope(SparseMatrix.from_dict(3, 3, {(1, 0): 1, (0, 1): 1})), short)


def _run_routing():
    perm = [3, 0, 4, 1, 2]
    check_construction(permutation_to_kaleidoscope(perm), perm_dense(perm), 5)


def _run_sparse():
    S = SparseMatrix.from_dense([[1, 2, 0], [0, 0, 3], [Fraction(1, 2), 0, 0]])
    check_construction(sparse_to_kaleidoscope(S), S.to_dense(), 3)


def _run_selection():
    ents = {(0, 1): 2, (1, 0): 3, (1, 1): 1, (3, 2): -1}
    check_selection(selection_route(ents), ents)


def _run_model():
    K = _general(3, N=4, n=4, w=1)
    C = oracle_corner(K)
    c = from_matrix(C, 2, 2)
    check_model(kaleidoscope_model(K, 2, 2, c).model, c, 2, 2, C, random.Random(3))


def _run_ir():
    check_ir(_general(4), _general(5), random.Random(4))


PLANTS = {
    "block entry (apply)": (_plant_block_entry, _run_apply),
    "block entry (verify_matrix)": (_plant_block_entry, _run_verify_matrix),
    "stride": (_plant_stride, _run_apply),
    "pair numbering": (_plant_pair_numbering, _run_apply),
    "prover compares nothing": (_plant_prover_compares_nothing, _run_verify_matrix),
    "prover skips the garbage-free rows": (_plant_prover_skips_garbage, _run_verify_matrix),
    "short permutation proved": (_plant_short_permutation, _run_permutation),
    "Beneš switch flipped": (_plant_routing, _run_routing),
    "sparse construction misrouted": (_plant_sparse, _run_sparse),
    "selection combine scaled": (_plant_selection, _run_selection),
    "compiled chain drops a factor": (_plant_model, _run_model),
    "verify proves everything": (_plant_verify_proves_all, _run_model),
    "transpose keeps the group order": (_plant_transpose_order, _run_ir),
}


@pytest.mark.parametrize("name", list(PLANTS))
def test_the_oracle_catches_planted_bugs(name, monkeypatch):
    """Each check passes on the package as it is and fails once the bug is planted."""
    plant, run = PLANTS[name]
    run()
    with monkeypatch.context() as mp:
        plant(mp)
        with pytest.raises(AssertionError):
            run()
