"""Kaleidoscope constructions (Dao et al. Theorems 2 and 3, Theorem H.19) and their exact verifier."""

from __future__ import annotations

import dataclasses
import itertools
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import CompileError, IRError, ShapeError
from symverify.kaleidoscope import (
    SparseMatrix,
    apply,
    bit_reversal,
    circuit_matrix,
    compile_numpy,
    linear_circuit_to_kaleidoscope,
    permutation_to_kaleidoscope,
    reversal,
    route_permutation,
    sparse_to_kaleidoscope,
    to_matrix,
)
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.matrix import verify_circuit, verify_matrix, verify_permutation
from symverify.library import prefix_sums, random_circuit, walsh_hadamard
from symverify.testing import circuits

X = ((0, 1), (1, 0))
I2 = ((1, 0), (0, 1))


def assert_routes(bb: BBStar, perm) -> None:
    """Fast exact check on a vector with distinct entries (numpy int64 and the generic kernel)."""
    N = len(perm)
    y = compile_numpy(bb, "mod", p=2**31 - 1).apply(np.arange(N))
    assert np.array_equal(y[np.asarray(perm)], np.arange(N))
    z = apply(bb, list(range(N)))
    assert [z[perm[i]] for i in range(N)] == list(range(N))


# ---- Theorem 2: permutations ----------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_every_permutation_of_small_length_is_one_bbstar(n):
    for perm in itertools.permutations(range(n)):
        f = permutation_to_kaleidoscope(perm)
        assert f.w == 1 and f.N == max(2, 1 << (n - 1).bit_length()) and not f.over_bound()
        assert verify_permutation(f, perm).proved


@pytest.mark.parametrize("N", [2, 8, 64, 4096])
@pytest.mark.parametrize("name", ["identity", "reversal", "bit reversal", "random"])
def test_structured_and_random_permutations(N, name):
    perm = {
        "identity": list(range(N)),
        "reversal": list(reversal(N)),
        "bit reversal": list(bit_reversal(N)),
        "random": random.Random(N).sample(range(N), N),
    }[name]
    bb = route_permutation(perm)
    assert [f.stride for f in bb.factors] == [N >> k for k in range(1, N.bit_length())] + [1 << k for k in range(N.bit_length() - 1)]
    assert all(f.block(m) in (I2, X) for f in bb.factors for m in range(N // 2))
    assert_routes(bb, perm)
    if N <= 64:
        P = [[int(perm[j] == i) for j in range(N)] for i in range(N)]
        assert to_matrix(bb) == P


def test_permutation_of_4096_is_verified_exactly():
    perm = random.Random(7).sample(range(4096), 4096)
    f = permutation_to_kaleidoscope(perm)
    check = verify_permutation(f, perm)
    assert check.proved and check.garbage_free_checked and check.size == 4096


@settings(max_examples=30)
@given(st.permutations(list(range(37))) | st.permutations(list(range(16))))
def test_random_permutations_hypothesis(perm):
    f = permutation_to_kaleidoscope(perm)
    assert verify_permutation(f, perm).proved
    assert_routes(route_permutation(list(perm) + list(range(len(perm), f.N))), list(perm) + list(range(len(perm), f.N)))


@pytest.mark.parametrize(
    "perm, match",
    [
        ([0, 0], "positions 0 and 1 both map to 0"),
        ([0, 2], "position 1 maps to 2, expected an int in 0 … 1"),
        ([0, "1"], "position 1 maps to '1'"),
        ([], "non-empty"),
    ],
)
def test_permutation_validation(perm, match):
    with pytest.raises(IRError, match=match):
        permutation_to_kaleidoscope(perm)


def test_route_needs_a_power_of_two_and_bit_reversal_too():
    with pytest.raises(IRError, match="power of two ≥ 2, found 3; pad with fixed points"):
        route_permutation([2, 0, 1])
    with pytest.raises(IRError, match="bit_reversal: expected a power of two, found 6"):
        bit_reversal(6)


# ---- Theorem 3: sparse matrices -------------------------------------------------------------


def _check_sparse(S: SparseMatrix):
    f = sparse_to_kaleidoscope(S)
    assert f.w == 5 and not f.over_bound(), (dict(f.resources), dict(f.bounds))
    assert f.resources["paper_w"] == max(1, 4 * -(-S.nnz // max(S.rows, S.cols, 1))) and f.resources["paper_e"] == 4
    check = verify_matrix(f, S)
    assert check.proved and check.garbage_free_checked, str(check)
    return f


@pytest.mark.parametrize("n", [1, 2, 7, 16])
def test_dense_column_and_dense_row(n):
    col = SparseMatrix(n, n, tuple((i, n - 1, i + 1) for i in range(n)))  # fan-out n
    row = SparseMatrix(n, n, tuple((0, j, Fraction(1, j + 1)) for j in range(n)))  # fan-in n
    for S in (col, row):
        f = _check_sparse(S)
        assert f.e <= max(2, Fraction(4 * S.nnz, n))


def test_identity_reversal_and_symbolic_sparse():
    a, b = sym("a"), sym("b")
    _check_sparse(SparseMatrix.identity(8))
    _check_sparse(SparseMatrix.permutation(reversal(8)))
    _check_sparse(SparseMatrix(3, 3, ((0, 1, a), (1, 1, a * b - 1), (2, 0, b), (2, 2, Fraction(1, 3)))))
    _check_sparse(SparseMatrix(5, 5, ()))


def test_rectangular_matrix_is_padded_to_square():
    S = SparseMatrix(2, 5, ((0, 4, 3), (1, 0, -1), (1, 4, 2)))
    f = _check_sparse(S)
    assert f.kaleidoscope.n == 5


@settings(max_examples=60)
@given(st.data())
def test_random_sparse_matrices(data):
    n = data.draw(st.integers(1, 16))
    cells = data.draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    vals = st.sampled_from([1, -1, 2, Fraction(3, 2), Fraction(-1, 3), sym("a")])
    S = SparseMatrix(n, n, tuple((i, j, data.draw(vals)) for i, j in sorted(cells)))
    _check_sparse(S)


@pytest.mark.parametrize(
    "make, err, match",
    [
        (lambda: SparseMatrix(2, 2, ((2, 0, 1),)), ShapeError, r"position \(2, 0\) is outside 2×2"),
        (lambda: SparseMatrix(2, 2, ((0, 0, 1), (0, 0, 2))), IRError, r"position \(0, 0\) is given twice"),
        (lambda: SparseMatrix(2, 2, ((0, 0),)), IRError, r"expected \(row, col, value\)"),
        (lambda: SparseMatrix(-1, 2, ()), ShapeError, "sparse matrix rows: expected a non-negative int"),
        (lambda: SparseMatrix(2, 2, ((0, 0, 0.25),)), IRError, r"entry \(0, 0\).*float"),
        (lambda: SparseMatrix.from_dense([[1, 2], [3]]), ShapeError, "row 1: expected 2 entries like row 0, found 1"),
    ],
)
def test_sparse_matrix_validation(make, err, match):
    with pytest.raises(err, match=match):
        make()


# ---- Theorem H.19: linear circuits ----------------------------------------------------------


def hadamard(N):
    return [[(-1) ** bin(i & j).count("1") for j in range(N)] for i in range(N)]


@pytest.mark.parametrize("mode", ["live", "size"])
@pytest.mark.parametrize("n, d", [(2, 1), (4, 2), (16, 1)])
def test_walsh_hadamard_as_a_linear_circuit(mode, n, d):
    c = walsh_hadamard(n, d)
    N = n * d
    assert circuit_matrix(c).to_dense() == hadamard(N)
    f = linear_circuit_to_kaleidoscope(c, mode)
    assert not f.over_bound(), (dict(f.resources), dict(f.bounds))
    delta = f.resources["depth"]
    assert f.w == (5 * delta if mode == "live" else 5 * (delta + 1))
    assert to_matrix(f.kaleidoscope) == hadamard(N)
    assert verify_circuit(f, c).proved


def test_prefix_sums_and_bounds_in_both_modes():
    c = prefix_sums(8, 2)
    live, size = linear_circuit_to_kaleidoscope(c, "live"), linear_circuit_to_kaleidoscope(c, "size")
    w, n = live.resources["cut_width"], 16
    assert live.N < 8 * (w + n) and live.e < Fraction(8 * (w + n), n) and live.resources["live_width"] <= w
    assert size.N < 8 * c.num_nodes and size.e < Fraction(8 * c.num_nodes, n)
    assert verify_circuit(live, c).proved and verify_circuit(size, c).proved


@settings(max_examples=60)
@given(circuits(max_n=3, max_d=2, max_gates=14, linear=True, allow_sym=True))
def test_random_linear_circuits_both_modes(c):
    for mode in ("live", "size"):
        f = linear_circuit_to_kaleidoscope(c, mode)
        assert not f.over_bound(), (mode, dict(f.resources), dict(f.bounds))
        assert verify_circuit(f, c).proved


def test_nonlinear_circuits_are_refused_with_every_offending_gate():
    c = random_circuit(2, 1, 8, 3, 0.5, seed=4)
    bad = [k for k, g in enumerate(c.gates) if g.op.value != "lin"]
    with pytest.raises(CompileError, match=f"gate {bad[0]} .*is (mul|const)") as info:
        linear_circuit_to_kaleidoscope(c)
    assert all(f"gate {k} " in str(info.value) for k in bad)
    with pytest.raises(CompileError, match="mode must be 'live', 'size' or 'structured'"):
        linear_circuit_to_kaleidoscope(walsh_hadamard(2), "fast")  # type: ignore[arg-type]


# ---- every construction on the same structured permutations -----------------------------------


def _perm(name, N):
    return {
        "identity": list(range(N)),
        "reversal": list(reversal(N)),
        "bit reversal": list(bit_reversal(N)),
        "random": random.Random(N + 1).sample(range(N), N),
    }[name]


@pytest.mark.parametrize("name", ["identity", "reversal", "bit reversal", "random"])
def test_every_construction_on_permutations(name):
    N = 16
    perm = _perm(name, N)
    P = SparseMatrix.permutation(perm)
    inverse = [0] * N
    for i, t in enumerate(perm):
        inverse[t] = i
    selection = Circuit(N, 1, (), tuple(inverse), f"select_{name}")  # y[perm[i]] = x[i]
    assert circuit_matrix(selection) == P
    built = [permutation_to_kaleidoscope(perm), sparse_to_kaleidoscope(P)]
    built += [linear_circuit_to_kaleidoscope(selection, mode) for mode in ("live", "size")]
    for f in built:
        assert not f.over_bound(), (f.theorem, dict(f.resources), dict(f.bounds))
        assert verify_permutation(f, perm).proved, f.theorem


@pytest.mark.parametrize("name", ["reversal", "bit reversal", "random"])
def test_sparse_construction_routes_a_permutation_of_4096(name):
    N = 4096
    perm = _perm(name, N)
    f = sparse_to_kaleidoscope(SparseMatrix.permutation(perm))
    assert f.w == 5 and f.N == 2 * N and not f.over_bound()
    y = compile_numpy(f.kaleidoscope, "mod", p=2**31 - 1).apply(np.arange(N))
    assert np.array_equal(y[np.asarray(perm)], np.arange(N))


def test_chaining_refuses_pieces_with_garbage():
    from symverify.kaleidoscope.linear import chain

    f = dataclasses.replace(permutation_to_kaleidoscope([1, 0]), garbage_free=False)
    with pytest.raises(CompileError, match="chaining needs garbage-free pieces"):
        chain([f], 2, "test")


# ---- the verifier refutes ---------------------------------------------------------------------


def test_a_mutated_factor_is_refuted_with_the_first_differing_entry():
    S = SparseMatrix.from_dense([[1, 2, 0], [0, 3, 0], [4, 0, 5]])
    k = sparse_to_kaleidoscope(S).kaleidoscope
    bcast = k.groups[1]
    last = bcast.factors[-1]
    m = next(m for m in range(last.size // 2) if last.d3[m] != 0 or last.d1[m] != 0)
    col = "d1" if last.d1[m] != 0 else "d3"
    bad_last = dataclasses.replace(last, **{col: tuple(v + 1 if i == m else v for i, v in enumerate(getattr(last, col)))})
    bad = Kaleidoscope(k.n, k.size, (k.groups[0], BBStar(k.size, (*bcast.factors[:-1], bad_last)), *k.groups[2:]))
    check = verify_matrix(bad, S)
    assert check.verdict == "refuted" and check.method == "exact-matrix"
    i, j, got, want = check.first_difference
    assert got != want and to_matrix(bad)[i][j] == got and S.to_dense()[i][j] == want
    assert f"entry ({i}, {j})" in str(check)


def test_a_misordered_product_is_refuted():
    """Groups listed in product order (rightmost first) compute the reversed product: caught."""
    c = walsh_hadamard(4)
    f = linear_circuit_to_kaleidoscope(c)
    assert verify_circuit(f, c).proved
    k = f.kaleidoscope
    flipped = Kaleidoscope(k.n, k.size, tuple(reversed(k.groups)))
    assert verify_circuit(flipped, c, garbage_free=False).verdict == "refuted"


def test_garbage_outside_the_corner_is_refuted_when_claimed_free():
    spread = ButterflyFactor(2, 1, (1,), (0,), (1,), (0,))
    k = Kaleidoscope(1, 2, (BBStar(2, (spread, ButterflyFactor.identity(2, 1))),))
    assert verify_matrix(k, [[1]]).proved
    check = verify_matrix(k, [[1]], garbage_free=True)
    assert check.verdict == "refuted" and check.method == "garbage-free" and check.first_difference == (1, 0, 1, 0)


def test_symbolic_entries_are_compared_as_polynomials():
    a, b = sym("a"), sym("b")
    S = SparseMatrix(2, 2, ((0, 0, a * b), (1, 0, a + 1)))
    f = sparse_to_kaleidoscope(S)
    assert verify_matrix(f, {(0, 0): b * a, (1, 0): 1 + a}).proved
    check = verify_matrix(f, {(0, 0): a * b, (1, 0): a})
    assert check.verdict == "refuted" and check.first_difference == (1, 0, a + 1, a)


def test_verifier_shape_errors():
    f = permutation_to_kaleidoscope([1, 0])
    with pytest.raises(ShapeError, match="target is 3×3, larger than the corner n×n = 2×2"):
        verify_matrix(f, SparseMatrix.identity(3))
    with pytest.raises(ShapeError, match="the circuit has n·d = 4 inputs"):
        verify_circuit(f, walsh_hadamard(4))
    with pytest.raises(CompileError, match="expected only inputs and lin gates"):
        verify_circuit(f, Circuit(2, 1, (Gate.mul(0, 1),), (2,)))
