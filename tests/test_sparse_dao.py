"""Dao et al. Theorem 3 as stated: an s-sparse matrix in (BB*)^{4⌈s/n⌉}_4 (symverify.kaleidoscope.sparse_dao)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kaleidoscope import SparseMatrix, sparse_to_kaleidoscope_thm3, to_matrix
from symverify.kaleidoscope.sparse_dao import _copy_half, _gather_half, _route_b_then_bstar, thm3_size
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, next_power_of_two
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.matrix import verify_matrix


def _check(M: SparseMatrix):
    f = sparse_to_kaleidoscope_thm3(M)
    n, s = max(M.rows, M.cols, 1), M.nnz
    n_pad = next_power_of_two(n)
    check = verify_matrix(f, M)
    assert check.proved and check.garbage_free_checked, str(check)
    dense = M.to_dense()
    want = [[dense[i][j] if i < M.rows and j < M.cols else 0 for j in range(n)] for i in range(n)]
    assert to_matrix(f.kaleidoscope) == want
    assert not f.over_bound(), (dict(f.resources), dict(f.bounds))
    assert f.w <= (4 * -(-s // n) if s else 1)
    assert f.N <= 4 * n_pad and f.resources["e_pad"] <= 4
    if n == n_pad:  # the paper's (BB*)^w_4 is defined for these n: e ≤ 4 exactly
        assert f.e <= 4
    if s:
        assert f.N > 2 * n and f.w == 2 * -(-s // (f.N - 2 * n))
    return f


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_sparse_matrices_meet_theorem_3(data):
    n = data.draw(st.integers(1, 9), label="n")
    rows, cols = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    if max(rows, cols) < n:
        rows = n
    cells: set[tuple[int, int]] = set()
    if rows and cols:
        cells = data.draw(st.sets(st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1)), max_size=rows * cols))
    if rows and cols and data.draw(st.booleans(), label="dense row"):
        i = data.draw(st.integers(0, rows - 1))
        cells |= {(i, j) for j in range(cols)}
    if rows and cols and data.draw(st.booleans(), label="dense column"):
        j = data.draw(st.integers(0, cols - 1))
        cells |= {(i, j) for i in range(rows)}
    vals = st.integers(-3, 3)  # zeros included: they are dropped by SparseMatrix
    _check(SparseMatrix(rows, cols, tuple((i, j, data.draw(vals)) for i, j in sorted(cells))))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 12, 16])
def test_structured_matrices(n):
    _check(SparseMatrix(n, n, ()))
    _check(SparseMatrix.from_dense([[i * n + j + 1 for j in range(n)] for i in range(n)]))  # s = n²
    _check(SparseMatrix(n, n, tuple((i, n - 1, i + 2) for i in range(n))))  # one dense column
    _check(SparseMatrix(n, n, tuple((0, j, Fraction(1, j + 1)) for j in range(n))))  # one dense row
    _check(SparseMatrix.identity(n))


def test_widths_and_sizes_at_the_paper_constants():
    # n a power of two: N = 4n (e = 4); 2 BB* per piece of up to 2n nonzeros
    f = _check(SparseMatrix.from_dense([[1] * 8 for _ in range(8)]))
    assert (f.N, f.w, f.e) == (32, 8, 4) and f.bounds["w"] == 32
    # n = 5: N = 16 < 4n (e = 16/5), capacity 6 per piece
    f = _check(SparseMatrix(5, 5, tuple((i, i, 2) for i in range(5))))
    assert (f.N, f.w, f.e) == (16, 2, Fraction(16, 5))
    # n = 7, s = 7: N = 16 would need 2⌈7/2⌉ = 8 > 4 BB*, so N = 32 = 4·8 (e = 32/7 > 4, e_pad = 4)
    assert thm3_size(7, 7) == 32 and thm3_size(7, 2) == 16


def test_symbolic_entries():
    a, b = sym("a"), sym("b")
    _check(SparseMatrix(3, 3, ((0, 1, a), (1, 1, a * b - 1), (2, 0, b), (2, 2, Fraction(1, 3)))))


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_copy_and_gather_networks_never_block(data):
    """The interval lemma behind the copy stage: any disjoint, increasing, non-empty intervals."""
    N = data.draw(st.sampled_from([2, 4, 8, 16, 32]))
    m = data.draw(st.integers(1, N))
    slots = sorted(data.draw(st.sets(st.integers(0, N - 1), min_size=2 * m, max_size=2 * m)) if 2 * m <= N else [])
    if not slots:  # each interval a single slot, or contiguous runs
        starts = sorted(data.draw(st.sets(st.integers(0, N - 1), min_size=m, max_size=m)))
        ivs = [(a, a) for a in starts]
    else:
        ivs = [(slots[2 * u], slots[2 * u + 1]) for u in range(m)]
    ident = BBStar.identity(N).factors
    L = len(ident) // 2
    copy = to_matrix(Kaleidoscope(N, N, (BBStar(N, tuple(_copy_half(N, ivs)) + ident[L:]),)))
    assert copy == [[int(u < m and ivs[u][0] <= q <= ivs[u][1]) for u in range(N)] for q in range(N)]
    gather = to_matrix(Kaleidoscope(N, N, (BBStar(N, ident[:L] + tuple(_gather_half(N, ivs))),)))
    assert gather == [list(r) for r in zip(*copy)]


def test_permutation_as_b_then_bstar():
    perm = [5, 2, 7, 0, 1, 6, 3, 4]
    first, second = _route_b_then_bstar(perm)
    assert [f.stride for f in first + second] == [1, 2, 4, 4, 2, 1]
    ident = BBStar.identity(8).factors
    k = Kaleidoscope(8, 8, (BBStar(8, ident[:3] + tuple(first)), BBStar(8, tuple(second) + ident[3:])))
    assert to_matrix(k) == [[int(perm[c] == r) for c in range(8)] for r in range(8)]


@pytest.mark.parametrize("bad, match", [([[1, 2], [3, 4]], "expected a SparseMatrix, found list"), (None, "found NoneType")])
def test_invalid_input_is_refused(bad, match):
    with pytest.raises(IRError, match=match):
        sparse_to_kaleidoscope_thm3(bad)


def test_perturbing_a_coefficient_changes_the_matrix():
    M = SparseMatrix(6, 6, ((0, 3, 7), (2, 3, -5), (4, 1, 11), (5, 5, 13), (1, 0, 17)))
    f = _check(M)
    k = f.kaleidoscope
    values = {v for _, _, v in M.entries}
    seen = 0
    for gi, g in enumerate(k.groups):
        for fi, fac in enumerate(g.factors):
            for name in ("d1", "d2", "d3", "d4"):
                diag = getattr(fac, name)
                for m, v in enumerate(diag):
                    if v not in values:
                        continue
                    seen += 1
                    bumped: ButterflyFactor = dataclasses.replace(fac, **{name: (*diag[:m], v + 1, *diag[m + 1:])})
                    factors = (*g.factors[:fi], bumped, *g.factors[fi + 1:])
                    groups = (*k.groups[:gi], BBStar(k.size, factors), *k.groups[gi + 1:])
                    check = verify_matrix(Kaleidoscope(k.n, k.size, groups), M)
                    assert not check.proved and check.first_difference, (gi, fi, name, m)
    assert seen == M.nnz  # every coefficient sits on exactly one weight
