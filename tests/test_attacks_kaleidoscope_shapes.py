"""Attacks on the shapes the kaleidoscope constructions and the matrix prover read: empty matrices,
targets smaller than the corner, resources a factorization is handed, huge sparse matrices. Each
ends in a clear ``SymverifyError`` or in a verdict that states what it is about."""

import copy
import dataclasses
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError, LimitError, ProverError, ShapeError, SymverifyError, UsageError
from symverify.kaleidoscope import (
    SparseMatrix,
    apply,
    apply_batch,
    materialize,
    permutation_to_kaleidoscope,
    route_permutation,
    sparse_to_kaleidoscope,
    sparse_to_kaleidoscope_thm3,
    to_matrix,
)
from symverify.kaleidoscope.numeric import stages_of
from symverify.kaleidoscope.permutation import benes_swaps, complete_permutation
from symverify.kaleidoscope.simplify import diagonal_factor, is_diagonal, simplify_factors
from symverify.kernel.ir.butterfly import ButterflyFactor, FactorList, Kaleidoscope
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.provers.matrix import KaleidoscopeCheck, verify_circuit, verify_matrix, verify_permutation
from symverify.kernel.provers.outcome import Verdict, is_sealed
from symverify.kernel.verification import verify
from symverify.scripts.instances import kaleidoscope_instance


# ---- empty matrices ------------------------------------------------------------------------------------
@pytest.mark.parametrize("construct", [sparse_to_kaleidoscope, sparse_to_kaleidoscope_thm3])
def test_a_0x0_matrix_is_no_kaleidoscope(construct):
    """A ``0×0`` matrix was built as the ``1×1`` zero kaleidoscope, and ``verify_matrix`` then proved it
    equal to the ``0×0`` matrix: a corner of another shape than the matrix given."""
    with pytest.raises(ShapeError, match=r"expected a matrix with at least one row or column .* found a 0×0 SparseMatrix"):
        construct(SparseMatrix(0, 0, ()))


@pytest.mark.parametrize("construct", [sparse_to_kaleidoscope, sparse_to_kaleidoscope_thm3])
@pytest.mark.parametrize("rows, cols", [(0, 3), (2, 0)])
def test_a_matrix_with_no_rows_or_no_columns_is_the_zero_corner(construct, rows, cols):
    f = construct(SparseMatrix(rows, cols, ()))
    assert f.kaleidoscope.n == max(rows, cols)


# ---- a target smaller than the corner ------------------------------------------------------------------
def test_a_proof_for_a_smaller_target_states_the_padding():
    """``verify_matrix`` proved the ``3×3`` corner ``diag(1, 0, 0)`` equal to the ``1×1`` target ``[[1]]``
    and said ``proved … n=3``, nothing telling that the claim was about ``[[1]]`` padded with zeros."""
    K = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 0, 0], [0, 0, 0], [0, 0, 0]]))
    check = verify_matrix(K, [[1]])
    assert check.proved and check.target_shape == (1, 1)
    assert str(check) == "proved (exact-matrix): n=3 N=4 w=5, garbage-free; target 1×1 padded with zeros to 3×3"
    refuted = verify_matrix(Kaleidoscope.identity(3, 4), SparseMatrix.identity(2))
    assert str(refuted).endswith("entry (2, 2) is 1, expected 0; target 2×2 padded with zeros to 3×3")


@pytest.mark.parametrize("target", [
    [[1, 2, 3], [4, 5, 6]],
    SparseMatrix.from_dense([[1, 2, 3], [4, 5, 6]]),
])
def test_a_non_square_target_is_stated_with_its_shape(target):
    S = SparseMatrix.from_dense([[1, 2, 3], [4, 5, 6]])
    check = verify_matrix(sparse_to_kaleidoscope(S), target)
    assert check.proved and check.target_shape == (2, 3)
    assert "target 2×3 padded with zeros to 3×3" in str(check)


def test_a_target_of_the_corners_shape_states_no_padding():
    f = permutation_to_kaleidoscope([1, 0, 2])
    for check in (verify_matrix(f, [[0, 1, 0], [1, 0, 0], [0, 0, 1]]), verify_matrix(f, {(1, 0): 1, (0, 1): 1, (2, 2): 1}),
                  verify_permutation(f, [1, 0, 2])):
        assert check.proved and check.target_shape == (3, 3) and "padded" not in str(check)


def test_the_targets_shape_is_sealed():
    check = verify_matrix(Kaleidoscope.identity(3, 4), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert is_sealed(check) and not is_sealed(dataclasses.replace(check, target_shape=(2, 2)))
    object.__setattr__(check, "target_shape", (2, 2))
    with pytest.raises(ProverError, match=r"sealed fields .*target_shape.* replaced or changed"):
        copy.copy(check)
    with pytest.raises(IRError, match=r"target_shape: expected None or \(rows, cols\), plain ints in 0 … n = 3, found \(4, 1\)"):
        KaleidoscopeCheck(Verdict.PROVED, "exact-matrix", 3, 4, 0, False, target_shape=(4, 1))


# ---- resources a factorization is handed ---------------------------------------------------------------
@pytest.mark.parametrize("key, value, shown", [("w", 5, "w is 0, found 5"), ("N", 8, "N is 4, found 8"),
                                                ("n", 4.0, "n is 3, found 4.0"), ("e", 1, "e is 4/3, found 1")])
def test_a_resource_the_kaleidoscope_states_otherwise_is_refused(key, value, shown):
    """``Factorization(K, …, resources={"w": 5})`` replaced the caller's ``w`` by the kaleidoscope's
    without a word: the figure the caller stated was dropped, not checked."""
    with pytest.raises(IRError, match=rf"factorization resources\['{key}'\]: the kaleidoscope's {shown} \(w, N, n and e are read off"):
        Factorization(Kaleidoscope.identity(3, 4), "t", False, resources={key: value})


def test_a_resource_given_with_the_kaleidoscopes_value_is_kept():
    f = Factorization(Kaleidoscope.identity(3, 4), "t", False, resources={"w": 0, "N": 4, "n": 3, "e": Fraction(4, 3), "s": 7})
    assert dict(f.resources) == {"w": 0, "N": 4, "n": 3, "e": Fraction(4, 3), "s": 7}


# ---- huge sparse matrices ------------------------------------------------------------------------------
@pytest.mark.parametrize("call, match", [
    (lambda S: S.to_dense(), r"the dense form of a 1000000000000000000000000000000×3 sparse matrix: 3000000000000000000000000000000 cells"),
    (lambda S: S.row_counts(), r"the row counts of a 1000000000000000000000000000000×3 sparse matrix"),
    (lambda S: S.transpose().col_counts(), r"the column counts of a 3×1000000000000000000000000000000 sparse matrix"),
])
def test_a_huge_sparse_matrix_is_a_limit_error_before_its_dense_forms_are_allocated(call, match):
    """A sparse matrix may be huge (it stores its nonzeros only); its dense rows and its counts raised
    ``OverflowError`` past ``sys.maxsize`` and ran out of memory below it."""
    S = SparseMatrix(10**30, 3, ((10**29, 1, 5),))
    with pytest.raises(LimitError, match=match):
        call(S)


def test_dense_forms_within_the_limit_are_exact():
    S = SparseMatrix(2, 3, ((1, 2, Fraction(1, 3)),))
    assert S.to_dense() == [[0, 0, 0], [0, 0, Fraction(1, 3)]] and S.row_counts() == [0, 1] and S.col_counts() == [0, 0, 1]


# ---- completing and routing permutations ---------------------------------------------------------------
@pytest.mark.parametrize("size, partial, match", [
    (4, {0: 1, 1: 1}, r"positions 0 and 1 both map to 1; expected an injective map"),
    (4, {0: 4}, r"entry 0 ↦ 4: expected ints in 0 … 3"),
    (4, {-1: 0}, r"entry -1 ↦ 0: expected ints in 0 … 3"),
    (4, {True: 1}, r"entry True ↦ 1: expected ints in 0 … 3"),
    (4, {0: 1.0}, r"entry 0 ↦ 1.0: expected ints in 0 … 3"),
    (4, [1, 0], r"expected a mapping \{position: destination\}, found list"),
    (None, {}, r"expected a size, an int ≥ 0, found None"),
    (-1, {}, r"expected a size, an int ≥ 0, found -1"),
])
def test_complete_permutation_refuses_what_completes_to_no_permutation(size, partial, match):
    """``complete_permutation(4, {0: 1, 1: 1})`` returned ``[1, 1, 0, 2]``, no permutation, without a
    word; the other inputs raised ``AttributeError``, ``TypeError`` or ``IndexError``."""
    with pytest.raises(IRError, match=rf"complete_permutation: {match}"):
        complete_permutation(size, partial)


def test_complete_permutation_fills_the_free_points_in_order():
    assert complete_permutation(np.int64(4), {0: 2, np.int64(3): 0}) == [2, 1, 3, 0]
    with pytest.raises(LimitError, match=r"complete_permutation of size 1099511627776"):
        complete_permutation(2**40, {})


@pytest.mark.parametrize("perm, match", [
    ([0, 0], r"benes_swaps: permutation: positions 0 and 1 both map to 0"),
    ([2, 0, 1], r"benes_swaps: expected a permutation whose length is a power of two ≥ 2, found length 3"),
    ([], r"found length 0"),
    (5, r"benes_swaps: permutation: expected a sequence of ints, found int"),
    (np.array([1.0, 0.0]), r"position 0 maps to np.float64\(1.0\) of type float64"),
    ({1, 0}, r"expected a sequence of ints, found set"),
])
def test_benes_swaps_refuses_what_is_no_permutation(perm, match):
    """``benes_swaps`` (public, "checked by the caller") routed ``[0, 0]`` as if it were a permutation
    and raised ``TypeError`` or ``IndexError`` on the rest."""
    with pytest.raises(IRError, match=match):
        benes_swaps(perm)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7).flatmap(lambda k: st.permutations(range(2**k))))
def test_benes_swaps_route_the_permutation(perm):
    """The switches ``benes_swaps`` states are those of ``route_permutation``'s factors, which move
    ``x[i]`` to ``perm[i]``."""
    swaps = benes_swaps(perm)
    net = route_permutation(perm)
    assert [h for h, _ in swaps] == [f.stride for f in net.factors]
    x = list(range(100, 100 + len(perm)))
    y = apply(net, x)
    assert all(y[t] == x[i] for i, t in enumerate(perm))


# ---- batches -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs, found", [(5, "int"), (None, "NoneType"), ({0: [1, 2, 3]}, "dict"), ({(1, 2, 3)}, "set"),
                                       (np.array(3), "ndarray"), ("123", "str")])
def test_a_batch_that_is_no_sequence_of_vectors_is_refused(xs, found):
    """``apply_batch(K, 5)`` raised ``TypeError``; a mapping was read as its keys (``0``, "no vector")."""
    with pytest.raises(ShapeError, match=rf"to a batch: expected a sequence of vectors, found {found}"):
        apply_batch(permutation_to_kaleidoscope([1, 0, 2]), xs)


def test_a_batch_in_order_is_applied_vector_by_vector():
    k = permutation_to_kaleidoscope([1, 0, 2])
    want = [[2, 1, 3], [5, 4, 6]]
    assert apply_batch(k, [[1, 2, 3], [4, 5, 6]]) == want == apply_batch(k, np.array([[1, 2, 3], [4, 5, 6]]))
    assert apply_batch(k, (v for v in ([1, 2, 3], [4, 5, 6]))) == want and apply_batch(k, []) == []


class _OtherHash(str):
    """A name whose hash is not its characters' hash: a dict keeps it beside the plain name."""

    def __hash__(self) -> int:
        return 12345


@pytest.mark.parametrize("table, key", [("bounds", "w"), ("resources", "s")])
def test_a_name_given_twice_through_a_str_subclass_is_refused(table, key):
    """``bounds={"w": 2, _OtherHash("w"): 99}`` holds two keys that both read as ``"w"``; the later one
    replaced the other, so a construction with ``w = 5`` was within its bound (``over_bound() == []``)."""
    f = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2], [3, 4]]))
    twice = {key: 2, _OtherHash(key): 99}
    assert len(twice) == 2 and f.w == 5
    with pytest.raises(IRError, match=rf"factorization {table}: the key '{key}' is given twice \(a str subclass reads as its characters\)"):
        Factorization(f.kaleidoscope, "t", True, **{table: twice})
    assert Factorization(f.kaleidoscope, "t", True, bounds={_OtherHash("w"): 2}).over_bound() == ["w"]


# ---- the claim a construction states -------------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 5, 13])
def test_theorem_3_at_n_no_power_of_two_does_not_claim_expansion_4(n):
    """``sparse_to_kaleidoscope_thm3`` of a 13×13 matrix stated ``(BB*)^{4⌈s/n⌉}_4`` (``e ≤ 4``) in its
    ``theorem`` while its expansion is ``64/13``; its bounds said ``e ≤ 64/13``, its claim did not."""
    f = sparse_to_kaleidoscope_thm3(SparseMatrix(n, n, tuple((i, (i + 1) % n, 1) for i in range(n))))
    assert (f.e > 4) is (n == 13)
    assert "_4" not in f.theorem and "N ≤ 4·2^⌈log2 n⌉, so e ≤ 4·2^⌈log2 n⌉/n, which may exceed 4" in f.theorem
    assert verify_matrix(f, SparseMatrix(n, n, tuple((i, (i + 1) % n, 1) for i in range(n)))).proved and not f.over_bound()


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_theorem_3_at_n_a_power_of_two_keeps_its_claim(n):
    f = sparse_to_kaleidoscope_thm3(SparseMatrix(n, n, tuple((i, i, 2) for i in range(n))))
    assert "(BB*)^{4⌈s/n⌉}_4" in f.theorem and f.e <= 4 and not f.over_bound()


# ---- kaleidoscopes rewritten after construction --------------------------------------------------------
_SWAPS = [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]


def _reordered(K):
    g = K.groups[0]
    fs = list(g.factors)
    fs[0], fs[1] = fs[1], fs[0]  # strides 1, 2, 1, 2: no BB* element
    object.__setattr__(g, "factors", tuple(fs))


def _foreign_factor(K):
    g = K.groups[0]
    object.__setattr__(g, "factors", (ButterflyFactor.identity(8, 4), *g.factors[1:]))


def _corner_past_size(K):
    object.__setattr__(K, "n", 8)


def _group_size(K):
    object.__setattr__(K.groups[0], "size", 8)


@pytest.mark.parametrize("rewrite, match", [
    (_reordered, r"BB\* group 0: expected size 4 and strides \[2, 1, 1, 2\] in application order, found size 4, "
                 r"factor sizes \[4, 4, 4, 4\], strides \[1, 2, 1, 2\]"),
    (_foreign_factor, r"BB\* group 0: .* factor sizes \[8, 4, 4, 4\], strides \[4, 1, 1, 2\]"),
    (_corner_past_size, r"expected 1 ≤ n ≤ size, size a power of two, found n = 8, size = 4"),
    (_group_size, r"BB\* group 0: expected size 4 .* found size 8, factor sizes \[4, 4, 4, 4\], strides \[2, 1, 1, 2\]"),
])
@pytest.mark.parametrize("check", [
    lambda K: verify_matrix(K, _SWAPS),
    lambda K: verify(K, K, method="exact"),
    lambda K: verify(K, K, method="randomized"),
])
def test_a_kaleidoscope_rewritten_past_its_constructors_is_refused(rewrite, match, check):
    """A group whose factors were put in another order (``object.__setattr__``) is no BB* element, yet
    ``verify_matrix`` said ``proved … w=1`` (``w`` counts groups); so with a factor of size 8 in a
    size-4 group, a corner ``n = 8`` of a size-4 kaleidoscope (``verify`` proved it) or a group of
    another size. Every method refuses such a side."""
    K = permutation_to_kaleidoscope([1, 0, 3, 2]).kaleidoscope
    rewrite(K)
    with pytest.raises(IRError, match=rf"{match} \(a field set after construction\?\)"):
        check(K)


# ---- the deadline checker ------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda f, check: verify_matrix(f, [[0, 1, 0], [1, 0, 0], [0, 0, 1]], check=check),
    lambda f, check: verify_circuit(f, Circuit(3, 1, (), (1, 0, 2)), check=check),
    lambda f, check: verify_permutation(f, [1, 0, 2], check=check),
])
def test_a_deadline_checker_that_is_no_callable_is_a_usage_error(call):
    """``verify_matrix(..., check=5)`` raised ``TypeError: 'int' object is not callable`` from inside the
    stage kernel."""
    f = permutation_to_kaleidoscope([1, 0, 2])
    with pytest.raises(UsageError, match=r"kaleidoscope check: check: expected None or a deadline checker \(a callable\), found int 5"):
        call(f, 5)
    assert call(f, lambda: None).proved and call(f, None).proved


# ---- applying: rings, columns and entries --------------------------------------------------------------
_TWO = ButterflyFactor(2, 1, (2,), (0,), (0,), (1,))  # x ↦ (2·x0, x1)


@pytest.mark.parametrize("f, block", [
    (_TWO, r"\(\(2, 0\), \(0, 1\)\)"),
    (ButterflyFactor(2, 1, (1,), (1,), (0,), (1,)), r"\(\(1, 1\), \(0, 1\)\)"),
])
def test_a_string_entry_is_refused_where_the_product_would_compute_with_it(f, block):
    """``apply(F, ['1/2', '3'])`` multiplied the string: ``2·'1/2'`` was ``'1/21/2'``, and a sum of two
    entries concatenated them; a str is a label that only 0/1 routing blocks move."""
    with pytest.raises(IRError, match=rf"entry 0 is the str '1/2', a label that only 0/1 routing blocks move; "
                                      rf"factor 0 \(stride 1\) pair 0 has the block {block}"):
        apply(f, ["1/2", "3"])


def test_string_labels_are_moved_by_a_routing_product():
    assert apply(route_permutation([2, 0, 3, 1]), ["a", "b", "c", "d"]) == ["b", "d", "a", "c"]
    assert apply(ButterflyFactor(2, 1, (1,), (0,), (0,), (0,)), ["a", "b"]) == ["a", 0]


@pytest.mark.parametrize("x", [True, np.bool_(True), b"1"])
def test_a_bool_or_bytes_entry_is_refused(x):
    with pytest.raises(IRError, match=r"applying a butterfly product: entry 0: expected a number, found"):
        apply(_TWO, [x, 1])


def test_numbers_of_other_types_are_applied_as_before():
    assert apply(_TWO, [np.int64(3), Fraction(1, 3)]) == [6, Fraction(1, 3)] and apply(_TWO, [1.5, 2]) == [3.0, 2]


@pytest.mark.parametrize("call, match", [
    (lambda f: apply(f, [1, 2, 3], ring=5), r"applying a butterfly product: ring: expected a ring \(with zero, coerce and reduce"),
    (lambda f: materialize(f, coeffs=5), r"materialize: coeffs: expected a ring .* found int 5"),
    (lambda f: to_matrix(f, coeffs="x"), r"to_matrix: coeffs: expected a ring .* found str 'x'"),
])
def test_a_ring_that_is_no_ring_is_refused(call, match):
    """``apply(..., ring=5)`` raised ``AttributeError`` and ``materialize(..., coeffs=5)`` of a 0/1
    kaleidoscope returned a matrix, the ring never read."""
    with pytest.raises(IRError, match=match):
        call(permutation_to_kaleidoscope([1, 0, 2]))


def test_columns_that_are_no_sequence_are_refused():
    with pytest.raises(ShapeError, match=r"materialize: expected a sequence of columns \(ints in 0 … 3\), found int"):
        materialize(permutation_to_kaleidoscope([1, 0, 2]), columns=5)


# ---- simplifying factor lists --------------------------------------------------------------------------
@pytest.mark.parametrize("call, err, match", [
    (lambda: simplify_factors(5), IRError, r"simplify_factors: expected a sequence of ButterflyFactor in application order, found int"),
    (lambda: simplify_factors({ButterflyFactor.identity(2, 1)}), IRError, r"simplify_factors: expected a sequence .* found set"),
    (lambda: is_diagonal(None), IRError, r"is_diagonal: expected a ButterflyFactor, found NoneType"),
    (lambda: diagonal_factor(5), IRError, r"diagonal_factor: expected a sequence of exact entries, found int"),
    (lambda: diagonal_factor({0: 1, 1: 2}), IRError, r"diagonal_factor: expected a sequence of exact entries, found dict"),
    (lambda: stages_of(None), IRError, r"stages_of: expected a sequence of ButterflyFactor in application order, found NoneType"),
    (lambda: stages_of([ButterflyFactor.identity(2, 1), _TWO.lift(4)]), ShapeError, r"stages_of: entry 1 has size 4, entry 0 has size 2"),
])
def test_factor_list_functions_refuse_what_is_no_factor_list(call, err, match):
    """Each raised ``TypeError`` or ``AttributeError``; ``diagonal_factor({0: 1, 1: 2})`` read the dict's
    keys as the diagonal, and ``stages_of`` returned factors of two sizes as one product."""
    with pytest.raises(err, match=match):
        call()


def test_factor_list_functions_keep_the_product():
    fs = [ButterflyFactor.identity(4, 1), diagonal_factor(np.array([1, 2, 3, 4])), _TWO.lift(4)]
    for out in (simplify_factors(fs), tuple(stages_of(fs))):
        assert to_matrix(FactorList(4, out)) == to_matrix(FactorList(4, tuple(fs)))
    assert is_diagonal(fs[1]) and not is_diagonal(ButterflyFactor(2, 1, (0,), (1,), (1,), (0,)))


# ---- blocks given as arrays ----------------------------------------------------------------------------
@pytest.mark.parametrize("blocks", [
    np.array([[[1, 0], [0, 1]], [[0, 1], [1, 0]]]),
    [np.array([[1, 0], [0, 1]]), np.array([[0, 1], [1, 0]])],
    [[np.array([1, 0]), (0, 1)], ((0, 1), (1, 0))],
])
def test_blocks_given_as_numpy_arrays_are_read_row_by_row(blocks):
    """A ``2×2`` numpy block was refused as "expected a 2×2 block …, found array([[1, 0], [0, 1]])"."""
    f = ButterflyFactor.from_blocks(4, 1, blocks)
    assert (f.d1, f.d2, f.d3, f.d4) == ((1, 0), (0, 1), (0, 1), (1, 0)) and f.all_int


@pytest.mark.parametrize("blocks, match", [
    (np.array([[1, 0], [0, 1]]), r"block 0: expected a 2×2 block"),
    (np.array([[[0.5, 0], [0, 1]], [[0, 1], [1, 0]]]), r"found the float np.float64\(0.5\)"),
    ([np.zeros((2, 2, 1), dtype=int), ((0, 1), (1, 0))], r"block 0: expected a 2×2 block"),
])
def test_arrays_of_other_shapes_or_floats_are_still_refused(blocks, match):
    with pytest.raises(SymverifyError, match=match):
        ButterflyFactor.from_blocks(4, 1, blocks)


def test_an_array_with_no_rows_keeps_its_column_count():
    """``SparseMatrix.from_dense(np.zeros((0, 5)))`` was ``0×0``: a ``0×5`` target was stated as ``0×0``
    and ``sparse_to_kaleidoscope`` refused it as the ``0×0`` matrix it is not."""
    empty = np.zeros((0, 5), dtype=int)
    assert (SparseMatrix.from_dense(empty).rows, SparseMatrix.from_dense(empty).cols) == (0, 5)
    assert sparse_to_kaleidoscope(SparseMatrix.from_dense(empty)).kaleidoscope.n == 5
    check = verify_matrix(sparse_to_kaleidoscope(SparseMatrix(5, 5, ())), empty)
    assert check.proved and check.target_shape == (0, 5)
    assert (SparseMatrix.from_dense([]).rows, SparseMatrix.from_dense([]).cols) == (0, 0)


# ---- a factorization whose kaleidoscope was replaced ---------------------------------------------------
def test_an_instance_refuses_resources_of_another_kaleidoscope():
    """A permutation's factorization (``w = 1 ≤ 1``, ``N = 2 ≤ 2``) given another kaleidoscope by
    ``object.__setattr__`` (``w = 5``, ``N = 4``) was recorded as ``proved`` with ``w=1, N=2`` within
    its bounds: the check was of the new kaleidoscope, the resources of the old one."""
    S = SparseMatrix.from_dense([[0, 1], [1, 0]])
    f = permutation_to_kaleidoscope([1, 0])
    assert kaleidoscope_instance("swap", f, verify_matrix(f, S)).verdict is Verdict.PROVED
    object.__setattr__(f, "kaleidoscope", sparse_to_kaleidoscope(S).kaleidoscope)
    check = verify_matrix(f, S)
    assert check.proved and check.width == 5
    with pytest.raises(UsageError, match=r"the factorization's resources state \(w, N, n, e\) = \('1', '2', '2', '1'\), "
                                         r"its kaleidoscope has \('5', '4', '2', '2'\)"):
        kaleidoscope_instance("swap", f, check)
