"""Attacks on the kaleidoscope and butterfly API (``symverify.kaleidoscope``, the IR of
``symverify.kernel.ir.butterfly`` and ``symverify.kernel.kaleidoscope``, Lemma H.16/H.18 models):
sizes, strides, entries, permutations, matrices and selections of the wrong kind. Each ends in a
clear ``SymverifyError`` or in a result proved equal to the exact matrix, never a bare Python
exception, a ``MemoryError`` or a wrong object that is proved."""

from fractions import Fraction

import numpy as np
import pytest

import symverify as sv
from symverify.compiler.butterfly_to_baseconv import (
    factor_circuit,
    factor_model,
    kaleidoscope_factors,
    kaleidoscope_model,
)
from symverify.errors import CompileError, IRError, LimitError, ShapeError
from symverify.ir.build import from_matrix
from symverify.kaleidoscope import (
    SparseMatrix,
    apply,
    bit_reversal,
    compile_numpy,
    materialize,
    permutation_to_kaleidoscope,
    reversal,
    route_permutation,
    sparse_to_kaleidoscope,
    sparse_to_kaleidoscope_thm3,
    to_matrix,
)
from symverify.kaleidoscope.selection import (
    BroadcastPlacer,
    column_counts,
    direct_route,
    preferred_positions,
    selection_route,
    selection_size,
)
from symverify.kaleidoscope.simplify import simplify_factors
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.provers.matrix import verify_circuit, verify_matrix, verify_permutation

HUGE = 2**40


# ---- sizes ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [2.0, np.float64(4.0), True, np.True_, "4"])
def test_identity_constructors_refuse_sizes_that_are_not_ints(size):
    """``BBStar.identity(2.0)`` raised AttributeError (``bit_length``), ``ButterflyFactor.identity(2.0, 1)`` a
    TypeError; ``bit_reversal(True)`` was ``(0,)`` and a stride of ``True`` was kept as the bool. (A numpy
    integer is read by its value: ``test_identity_constructors_read_a_numpy_integer_size_by_its_value``.)"""
    with pytest.raises(ShapeError, match=r"expected a power of two ≥ 2, found"):
        ButterflyFactor.identity(size, 1)
    with pytest.raises(ShapeError, match=r"BB\* size: expected a power of two ≥ 2, found"):
        BBStar.identity(size)
    with pytest.raises(ShapeError, match=r"kaleidoscope identity: expected an int n ≥ 1, found n = "):
        Kaleidoscope.identity(size)
    with pytest.raises(IRError, match=r"bit_reversal: expected a power of two, found"):
        bit_reversal(size)
    with pytest.raises(ShapeError, match=r"stride: expected a power of two ≤ size/2 = 2, found True"):
        ButterflyFactor(4, True, (1, 1), (0, 0), (0, 0), (1, 1))


def test_identity_constructors_read_a_numpy_integer_size_by_its_value():
    """``Kaleidoscope.identity(np.int64(4))`` raised AttributeError (``bit_length``), then was refused, though
    ``Kaleidoscope(np.int64(3), 4, ())`` reads its sizes by value; every size reader takes it as the plain int."""
    size = np.int64(4)
    assert ButterflyFactor.identity(size, np.int64(1)) == ButterflyFactor.identity(4, 1)
    assert BBStar.identity(size) == BBStar.identity(4) and type(BBStar.identity(size).size) is int
    assert Kaleidoscope.identity(np.int64(3)) == Kaleidoscope.identity(3)
    assert Kaleidoscope.identity(3).lift(np.uint8(8)) == Kaleidoscope.identity(3).lift(8)
    assert bit_reversal(size) == bit_reversal(4) and reversal(np.int64(3)) == (2, 1, 0)


def test_a_bool_corner_or_reversal_length_is_refused():
    with pytest.raises(ShapeError, match=r"expected 1 ≤ n ≤ size = 4, found n = True"):
        Kaleidoscope(True, 4, ())
    for n in (-2, 2.0, True):
        with pytest.raises(IRError, match=r"reversal: expected a non-negative int, found"):
            reversal(n)
    assert reversal(0) == () and reversal(3) == (2, 1, 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ButterflyFactor.identity(HUGE, 1),
        lambda: BBStar.identity(HUGE),
        lambda: Kaleidoscope.identity(HUGE),
        lambda: Kaleidoscope(4, 4, (BBStar.identity(4),)).lift(HUGE),
        lambda: FactorList(HUGE, ()),
        lambda: bit_reversal(HUGE),
        lambda: reversal(HUGE),
        lambda: SparseMatrix.identity(HUGE),
        lambda: route_permutation(range(HUGE)),
        lambda: permutation_to_kaleidoscope(range(HUGE)),
        lambda: sparse_to_kaleidoscope(SparseMatrix(HUGE, 2, ())),
        lambda: sparse_to_kaleidoscope_thm3(SparseMatrix(HUGE, 2, ())),
        lambda: selection_size({(HUGE, 0): 1}),
        lambda: selection_route({(0, 1): 1}, in_pos=(HUGE,)),
        lambda: direct_route({(HUGE, 0): 1}),
        lambda: BroadcastPlacer(HUGE),
    ],
)
def test_sizes_of_2_to_the_40_are_a_limit_error_before_allocating(make):
    """Each of these allocated 2^40 entries (MemoryError, or minutes of work) before any check."""
    with pytest.raises(LimitError, match=r"is more than symverify\.ir\.limits\.MAX_CELLS"):
        make()


@pytest.mark.parametrize("size", [3, 0, -2, 6])
def test_sizes_that_are_not_powers_of_two(size):
    with pytest.raises(ShapeError, match=r"expected a power of two"):
        ButterflyFactor.identity(size, 1)
    with pytest.raises(ShapeError, match=r"expected a power of two"):
        FactorList(size, ())
    with pytest.raises(CompileError, match=r"expected a size N that is a power of two ≥ 2"):
        BroadcastPlacer(size)


# ---- objects of the wrong kind where the IR expects factors, groups, kaleidoscopes ---------------
@pytest.mark.parametrize(
    "make, err, match",
    [
        (lambda: Kaleidoscope(2, 2, (ButterflyFactor.identity(2, 1),)), IRError, r"kaleidoscope group 0: expected a BBStar, found ButterflyFactor"),
        (lambda: Kaleidoscope(2, 2, None), IRError, r"kaleidoscope groups: expected a sequence, found NoneType"),
        (lambda: BBStar(2, (1,)), IRError, r"BB\* of size 2: factor 0: expected a ButterflyFactor, found int"),
        (lambda: FactorList(4, None), IRError, r"factor list factors: expected a sequence, found NoneType"),
        (lambda: Kaleidoscope.identity(2).then(3), IRError, r"kaleidoscope product: expected a Kaleidoscope, found int"),
        (lambda: ButterflyFactor.identity(4, 1).then(3), IRError, r"multiplying butterfly factors: expected a ButterflyFactor, found int"),
        (lambda: FactorList(4, ()).then(3), IRError, r"multiplying factor lists: expected a FactorList, found int"),
        (lambda: Factorization(3, "x", True), IRError, r"factorization: expected a Kaleidoscope, found int"),
        (lambda: Factorization(Kaleidoscope.identity(2), "x", "no"), IRError, r"garbage_free: expected a bool, found 'no'"),
        (lambda: simplify_factors([3]), IRError, r"simplify_factors: entry 0: expected a ButterflyFactor, found int"),
        (lambda: simplify_factors([ButterflyFactor.identity(4, 1), ButterflyFactor(2, 1, (0,), (1,), (1,), (0,))]),
         ShapeError, r"entry 1 has size 2, entry 0 has size 4"),
        (lambda: ButterflyFactor.from_blocks(4, 1, [((1, 2), (3, 4)), ((1,), (3, 4))]), ShapeError, r"block 1: expected a 2×2 block"),
        (lambda: ButterflyFactor.from_blocks(4, 1, [((1, 2, 5), (3, 4)), ((1, 2), (3, 4))]), ShapeError, r"block 0: expected a 2×2 block"),
        (lambda: Kaleidoscope(4, 4, (BBStar.identity(4),)).absorb_diagonal(iter((1, 2, 3, 4)), "after"),
         ShapeError, r"expected a diagonal as a sequence of 4 entries, found tuple_iterator"),
    ],
)
def test_wrong_objects_in_the_ir(make, err, match):
    """Each raised AttributeError, TypeError or ValueError (or, for ``garbage_free='no'``, was kept)."""
    with pytest.raises(err, match=match):
        make()


def test_entries_that_are_not_exact_are_refused_and_odd_exact_ones_are_kept_exactly():
    for v, match in [(0.5, "float 0.5"), (float("nan"), "float nan"), (float("inf"), "float inf"), (1j, "complex"),
                     (True, "bool True"), (np.float16(1), "float")]:
        with pytest.raises(IRError, match=match):
            ButterflyFactor(2, 1, (v,), (0,), (0,), (1,))
    big = np.uint64(2**63 + 1)
    f = ButterflyFactor(2, 1, (big,), (np.int8(-3),), (Fraction(10**5000, 7),), (1,))
    assert f.d1 == (2**63 + 1,) and f.d2 == (-3,) and f.d3 == (Fraction(10**5000, 7),)
    assert to_matrix(f) == [[2**63 + 1, -3], [Fraction(10**5000, 7), 1]]


# ---- permutations -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "perm, match",
    [
        ([0, 0], "both map to 0"),
        ([0, 2], "maps to 2"),
        ([True, False], "maps to True"),
        ([0.0, 1.0], "maps to 0.0"),
        (np.array([1.0, 0.0]), r"maps to np.float64\(1.0\) of type float64"),
        (np.array([True, False]), r"maps to np.True_ of type bool_?,"),
        (np.array([2, 0]), "maps to np.int64"),
        ((x for x in [1, 0]), "expected a sequence of ints, found generator"),
        ({0, 1}, "expected a sequence of ints, found set"),
        ("10", "expected a sequence of ints, found str"),
    ],
)
def test_permutations_that_are_not_permutations(perm, match):
    with pytest.raises(IRError, match=match):
        permutation_to_kaleidoscope(perm)


def test_numpy_integer_permutations_are_read_as_ints():
    """``np.argsort`` output is a permutation: its entries are read as Python ints (they were refused
    as "maps to np.int64(1), expected an int in 0 … 3", though in range)."""
    perm = np.argsort(np.array([3.0, 1.0, 4.0, 0.5]))
    f = permutation_to_kaleidoscope(perm)
    assert verify_permutation(f, perm).proved and verify_permutation(f, [int(v) for v in perm]).proved
    assert route_permutation(perm) == route_permutation([int(v) for v in perm])
    assert not verify_permutation(f, perm[::-1].copy()).proved


def test_a_permutation_of_odd_length_is_padded_and_proved():
    f = permutation_to_kaleidoscope([2, 0, 1])
    assert (f.N, f.kaleidoscope.n) == (4, 3)
    assert verify_permutation(f, [2, 0, 1]).proved


def test_a_shorter_permutation_is_not_proved_for_a_larger_corner():
    """``verify_permutation`` padded a length-2 permutation with zero rows: the 3×3 corner
    ``diag([[0, 1], [1, 0]], 0)``, which is no permutation, was *proved* to be ``[1, 0]``."""
    S = SparseMatrix.from_dense([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    f = sparse_to_kaleidoscope(S)
    assert verify_matrix(f, S).proved
    with pytest.raises(ShapeError, match=r"the corner is 3×3, the permutation has length 2"):
        verify_permutation(f, [1, 0])
    assert not verify_permutation(f, [1, 0, 2]).proved


def test_a_sparse_matrix_subclass_target_is_refused():
    """``verify_matrix`` read a ``SparseMatrix`` target through its own ``as_dict``, so a subclass
    whose entries are the swap but whose ``as_dict`` says the identity had the identity *proved*
    equal to the swap; such a target is refused, as a ``Kaleidoscope`` subclass is."""

    class Liar(SparseMatrix):
        __slots__ = ()

        def as_dict(self):
            return {(0, 0): 1, (1, 1): 1}

    swap = Liar(2, 2, ((0, 1, 1), (1, 0, 1)))
    assert swap.to_dense() == [[0, 1], [1, 0]]
    with pytest.raises(IRError, match=r"target: expected a SparseMatrix exactly, found an instance of .*Liar"):
        verify_matrix(Kaleidoscope.identity(2), swap)
    plain = SparseMatrix(2, 2, swap.entries)
    assert not verify_matrix(Kaleidoscope.identity(2), plain).proved
    assert verify_matrix(permutation_to_kaleidoscope([1, 0]), plain).proved


def test_a_circuit_subclass_is_refused_by_verify_circuit():
    """``verify_circuit`` read a ``Circuit`` subclass that ``verify`` refuses: one whose
    ``num_inputs`` said 2 for a 1×1 circuit had a 2×2 corner *proved* to compute it."""

    class Sneaky(Circuit):
        @property
        def num_inputs(self):
            return 2

    c = Sneaky(1, 1, (), (0,))
    K = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 0], [0, 0]]))
    with pytest.raises(IRError, match=r"kaleidoscope check: the circuit: expected a Circuit, Model or Kaleidoscope exactly"):
        verify_circuit(K, c)
    with pytest.raises(IRError, match="expected a Circuit, Model or Kaleidoscope exactly"):
        sv.verify(K, c)
    with pytest.raises(ShapeError, match=r"the corner is 2×2, the circuit has n·d = 1 inputs"):
        verify_circuit(K, Circuit(1, 1, (), (0,)))


def test_a_refutation_is_rechecked_by_applying_the_kaleidoscope(monkeypatch):
    """``verify_matrix`` reported its first differing entry as ``materialize`` read it, with no
    other evaluation: a wrong entry there was a sealed refutation naming a value the kaleidoscope
    does not have. The entry is re-checked on ``E·e_j``; a disagreement is a ``ProverError``."""
    import symverify.kernel.provers.matrix as matrix_prover
    from symverify.errors import ProverError

    k = permutation_to_kaleidoscope([1, 0, 2]).kaleidoscope
    swap = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    a = sv.sym("a")
    assert verify_matrix(k, [[0, a, 0], [1, 0, 0], [0, 0, 1]]).first_difference == (0, 1, 1, a)
    assert verify_matrix(k, swap).proved
    real = matrix_prover.materialize

    def corrupted(obj, **kw):
        rows = real(obj, **kw)
        rows[0] = type(rows[0])({**rows[0].terms, 1: 5})  # entry (0, 1) read as 5 instead of 1
        return rows

    monkeypatch.setattr(matrix_prover, "materialize", corrupted)
    with pytest.raises(ProverError, match=r"first differing entry \(0, 1\) did not re-check: E·e_1 has 1 there, "
                                          r"the comparison read 5 against 1"):
        verify_matrix(k, swap)


def test_a_kaleidoscope_instance_refuses_a_check_of_another_kaleidoscope():
    """``kaleidoscope_instance(name, f, check)`` recorded ``f``'s resources next to the verdict of a
    ``check`` made on another kaleidoscope: a (BB*)^5 proof became an ok row stating ``w = 1``."""
    from symverify.errors import UsageError
    from symverify.scripts.instances import kaleidoscope_instance

    swap = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    f = permutation_to_kaleidoscope([1, 0, 2])
    g = sparse_to_kaleidoscope(SparseMatrix.from_dense(swap))
    other = verify_matrix(g, swap)
    assert other.proved and g.w == 5 and f.w == 1
    with pytest.raises(UsageError, match=r"the check is of a kaleidoscope with n=3, N=\d+, w=5; the factorization has n=3, N=4, w=1"):
        kaleidoscope_instance("swap", f, other)
    with pytest.raises(UsageError, match=r"expected a Factorization, found Kaleidoscope"):
        kaleidoscope_instance("swap", f.kaleidoscope, verify_matrix(f, swap))
    inst = kaleidoscope_instance("swap", f, verify_matrix(f, swap))
    assert inst.ok and inst.resources["w"] == 1


def test_the_exact_matrix_check_stops_at_its_deadline():
    """``exact-matrix`` built and compared the matrices with no deadline: ``verify(K, c, timeout=3)``
    on a (BB*)^2 of size 1024 ran 10 s, and a passed deadline still gave ``proved``. The deadline
    checker now runs before every factor (and between blocks of the circuit's gates): the method
    says ``unknown``, naming the timeout, and ``verify_matrix(check=…)`` stops."""
    import time

    from symverify.deadline import DeadlineExceededError
    from symverify.kernel.provers.matrix import prove_kaleidoscope_circuit
    from symverify.kernel.provers.options import Options
    from symverify.kernel.provers.sides import pair_sides

    def stop():
        raise DeadlineExceededError()

    f = permutation_to_kaleidoscope([1, 0, 3, 2])
    c = Circuit(4, 1, (), (1, 0, 3, 2))
    assert verify_circuit(f, c).proved
    for run in (lambda: verify_matrix(f, SparseMatrix.permutation([1, 0, 3, 2]), check=stop),
                lambda: verify_circuit(f, c, check=stop), lambda: verify_permutation(f, [1, 0, 3, 2], check=stop)):
        with pytest.raises(DeadlineExceededError):
            run()
    opts = Options.from_call("exact", timeout=1e-9)
    time.sleep(0.001)  # the deadline has passed
    r = prove_kaleidoscope_circuit(*pair_sides(f.kaleidoscope, c), opts)
    assert r is not None and r.verdict is sv.Verdict.UNKNOWN
    assert r.notes == ("timeout: 1e-09 s ran out before the exact matrices were compared",)


# ---- sparse matrices --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, err, match",
    [
        (lambda: SparseMatrix(2, 2, ((True, 0, 1),)), ShapeError, r"position \(True, 0\) is outside 2×2"),
        (lambda: SparseMatrix(2, 2, (5,)), IRError, r"entry 0: expected \(row, col, value\), found 5"),
        (lambda: SparseMatrix(2, 2, None), IRError, r"entries: expected a sequence of \(row, col, value\), found NoneType"),
        (lambda: SparseMatrix(2, 2, ((0, 0, 1), (0, 0, 2))), IRError, r"position \(0, 0\) is given twice"),
        (lambda: SparseMatrix.from_dict(2, 2, {(0,): 1}), IRError, r"expected keys \(row, col\) of ints, found \(0,\)"),
        (lambda: SparseMatrix.from_dict(2, 2, {0: 1}), IRError, r"expected keys \(row, col\) of ints, found 0"),
        (lambda: SparseMatrix.from_dict(2, 2, [((0, 0), 1)]), IRError, r"expected a mapping"),
        (lambda: SparseMatrix.identity(2.0), ShapeError, r"sparse identity: expected a non-negative int n, found 2.0"),
        (lambda: SparseMatrix.from_dense([[1, 2], [3]]), ShapeError, r"row 1: expected 2 entries like row 0, found 1"),
        (lambda: SparseMatrix.from_dense([[float("nan")]]), IRError, r"float nan"),
        (lambda: SparseMatrix.from_dense(np.array([[1, 2], [3, "x"]], dtype=object)), IRError, r"found 'x'"),
        (lambda: sparse_to_kaleidoscope([[1, 2], [3, 4]]), IRError, r"sparse_to_kaleidoscope: expected a SparseMatrix, found list"),
    ],
)
def test_malformed_sparse_matrices(make, err, match):
    """The bool row was read as row 1; the others raised TypeError, ValueError or AttributeError."""
    with pytest.raises(err, match=match):
        make()


@pytest.mark.parametrize(
    "dense",
    [
        np.array([[1, 2], [3, 127]], dtype=np.int8),
        np.array([[2**63 + 5, 2], [3, 4]], dtype=np.uint64),
        [[Fraction(10**3000, 7), 0, 1], [0, 0, 0]],
        [["1/2", "-3"], ["0", "7"]],
    ],
)
@pytest.mark.parametrize("construct", [sparse_to_kaleidoscope, sparse_to_kaleidoscope_thm3])
def test_odd_exact_matrices_are_built_and_proved(dense, construct):
    S = SparseMatrix.from_dense(dense)
    assert verify_matrix(construct(S), S).proved


# ---- applying and materializing ---------------------------------------------------------------------
def test_apply_and_materialize_refuse_what_is_no_vector_or_column():
    """``apply(K, 5)`` raised TypeError; ``materialize(K, [0.5])`` TypeError and ``[True]`` was column 1."""
    K = permutation_to_kaleidoscope([1, 0, 2])
    with pytest.raises(ShapeError, match=r"expected a vector \(a sequence of values\), found int"):
        apply(K, 5)
    for col, kind in ((0.5, "float"), (True, "bool"), ("1", "str"), (None, "NoneType")):
        with pytest.raises(ShapeError, match=rf"materialize: expected every column as an int in 0 … 3, found .* of type {kind}"):
            materialize(K, [col])
    for col in (4, -1, np.int64(4)):
        with pytest.raises(ShapeError, match=r"materialize: column (4|-1) is outside 0 … 3"):
            materialize(K, [col])


def test_materialize_reads_numpy_integer_columns_by_their_value():
    """``materialize(K, np.arange(2))`` was refused as 'column np.int64(0) is outside 0 … 3'."""
    K = permutation_to_kaleidoscope([1, 0, 2])
    assert materialize(K, np.arange(2)) == materialize(K, [0, 1])
    assert materialize(K, [np.uint8(2)]) == materialize(K, [2])
    with pytest.raises(ShapeError, match=r"expected a Kaleidoscope or Factorization, found int"):
        verify_matrix(3, [[1]])


def test_the_numpy_program_refuses_strings_and_reads_odd_dtypes():
    """A str array raised numpy's ValueError; integer dtypes of every width are read exactly mod p."""
    K = permutation_to_kaleidoscope([1, 0, 2])
    prog = compile_numpy(K)
    for arr in (np.array(["a", "b", "c"]), np.array([1, "b", 3], dtype=object), np.array([1, 2j, 3], dtype=object)):
        with pytest.raises(IRError, match=r"expected real numbers"):
            prog.apply(arr)
    assert prog.apply(np.array([1, 2, 3], dtype=np.float16)).tolist() == [2.0, 1.0, 3.0]
    mod = compile_numpy(K, kind="mod", p=7)
    assert mod.apply(np.array([2**63 + 1, 2, 3], dtype=np.uint64)).tolist() == [2, (2**63 + 1) % 7, 3]
    assert mod.apply(np.array([100, -100, 3], dtype=np.int8)).tolist() == [(-100) % 7, 100 % 7, 3]


# ---- selections ---------------------------------------------------------------------------------------
def _selection_matrix_is(ents, **kw):
    r = selection_route(ents, **kw)
    M = to_matrix(FactorList(r.size, r.factors))
    got = {(i, j): M[i][j] for i in range(r.size) for j in range(r.size) if M[i][j]}
    return got == {k: v for k, v in ents.items() if v}


@pytest.mark.parametrize(
    "ents, kw, match",
    [
        ({(-1, 0): 1}, {}, r"keys \(out position, in position\) of non-negative ints, found \(-1, 0\)"),
        ({(0, -1): 1}, {}, r"found \(0, -1\)"),
        ({(0.0, 1): 1}, {}, r"found \(0.0, 1\)"),
        ({(True, 0): 1}, {}, r"found \(True, 0\)"),
        ({0: 1}, {}, r"found 0"),
        ([((0, 1), 1)], {}, r"expected a mapping"),
        ({(0, 1): 1}, {"in_pos": (-5,)}, r"in_pos: expected non-negative int positions, found -5"),
        ({(0, 1): 1}, {"out_pos": (1.5,)}, r"out_pos: expected non-negative int positions, found 1.5"),
        ({(0, 1): 1, (1, 0): 1}, {"max_K": 0}, r"max_K: expected a positive int, found 0"),
        ({(0, 1): 1, (1, 0): 1}, {"max_K": 1.5}, r"max_K: expected a positive int, found 1.5"),
        ({(0, 1): 1}, {"size": 3}, r"size: expected a power of two, found 3"),
        ({(0, 3): 1}, {"size": 2}, r"the stage needs size 4 > 2"),
        ({(0, 1): 1, (0, 2): 1, (0, 0): 1}, {}, r"output position 0 has 3 entries, expected at most 2"),
    ],
)
def test_malformed_selections(ents, kw, match):
    """Negative positions raised ValueError, float ones TypeError, a bool position was read as 1,
    ``max_K=0`` tried every stride and ``max_K=1.5`` raised TypeError."""
    with pytest.raises(CompileError, match=match):
        selection_route(ents, **kw)


def test_selection_helpers_refuse_bad_counts_and_slots():
    with pytest.raises(CompileError, match=r"counts\[0\]: expected a non-negative int, found -1"):
        preferred_positions([-1, 2])
    with pytest.raises(CompileError, match=r"counts\[0\]: expected a non-negative int, found 1.5"):
        preferred_positions([1.5, 2])
    with pytest.raises(CompileError, match=r"a row reads slot 5, expected an int in 0 … 1"):
        column_counts([[(5, 1)]], 2)


@pytest.mark.parametrize(
    "ents, kw",
    [
        ({(0, 1): 2, (1, 0): 3, (1, 1): 1}, {}),
        ({(0, 1): 1}, {"in_pos": (1, 1), "out_pos": (0, 0)}),  # repeated positions: only the size reads them
        ({(0, 0): 1, (1, 0): 1, (2, 0): 1, (3, 0): Fraction(1, 3)}, {}),  # fan-out 4
        ({(0, 0): 0, (1, 1): 0}, {}),  # the zero map
        ({(0, 1): 1, (1, 0): 1}, {"max_K": 1}),
    ],
)
def test_edge_selections_are_exact(ents, kw):
    assert _selection_matrix_is(ents, **kw)


# ---- (BB*)^w with w = 0, Lemma H.16 and H.18 models ---------------------------------------------------
def _proved_model(K, n, d, target=None):
    c = from_matrix(to_matrix(K) if target is None else target, n, d)
    ch = kaleidoscope_model(K, n, d, c)
    return sv.verify(ch.model, c, certificate=ch.certificate).proved


@pytest.mark.parametrize("n, d", [(3, 1), (1, 3), (2, 2)])
def test_w_0_kaleidoscopes_compile_to_proved_models(n, d):
    K = Kaleidoscope.identity(n * d)
    assert K.width == 0 and _proved_model(K, n, d)


def test_kaleidoscope_models_take_a_factorization_and_refuse_other_objects():
    """A Factorization (what every construction returns) raised AttributeError ('no attribute n')."""
    f = permutation_to_kaleidoscope([2, 0, 1])
    assert _proved_model(f, 3, 1, target=to_matrix(f.kaleidoscope))
    c = from_matrix(to_matrix(f), 3, 1)
    with pytest.raises(CompileError, match=r"Lemma H.18: expected a Kaleidoscope .*, found int"):
        kaleidoscope_model(3, 3, 1, c)  # type: ignore[arg-type]
    with pytest.raises(CompileError, match=r"the reference circuit: expected a Circuit, found list"):
        kaleidoscope_model(f, 3, 1, [[1]])  # type: ignore[arg-type]


@pytest.mark.parametrize("d, match", [
    (2.0, r"expected d to be a positive int, found 2.0 of type float"),
    (True, r"expected d to be a positive int, found True of type bool"),
    (0, r"expected d to be a positive int, found 0 of type int"),
    (-1, r"expected d to be a positive int, found -1 of type int"),
    (3, r"expected d to be a power of two .*, found d = 3"),
])
def test_factor_models_refuse_d_that_is_no_power_of_two(d, match):
    """``d=2.0`` raised AttributeError; ``d=True`` reached the circuit check ('circuit d')."""
    f = ButterflyFactor(4, 2, (1, 2), (3, 0), (0, 5), (1, 1))
    with pytest.raises(CompileError, match=r"Lemma H.16 factor model: " + match):
        factor_model(f, d)


@pytest.mark.parametrize("perm, n, d", [([1, 0], 2, 1), ([1, 0, 3, 2, 5, 4], 2, 3), ([0, 1, 2], 1, 3), ([2, 0, 1, 4, 3], 1, 5)])
def test_a_lemma_h18_model_keeps_the_rows_past_the_circuit_outputs(perm, n, d):
    """For ``d`` no power of two, ``kaleidoscope_model`` scattered only the circuit's outputs, so a
    permutation compiled against a circuit reading out its first row alone dropped the other rows
    and was *proved* to compute that circuit: the model was no longer ``M·vec(u)``. Every row is
    read out now, and the rows past the outputs must be 0 (as for ``d`` a power of two)."""
    from symverify.kaleidoscope import linear_circuit_to_kaleidoscope
    from symverify.library import random_linear_circuit

    K = permutation_to_kaleidoscope(perm)
    first = Circuit(n, d, (), (perm.index(0),))  # output 0 = row 0 of M, the other rows left out
    ch = kaleidoscope_model(K, n, d, first)
    assert sv.verify(first, ch.model, certificate=ch.certificate).verdict is sv.Verdict.REFUTED
    assert sv.verify(first, ch.model, method="exact").verdict is sv.Verdict.REFUTED
    full = from_matrix(to_matrix(K), n, d)
    assert sv.verify(full, kaleidoscope_model(K, n, d, full).model, method="exact").proved
    c = random_linear_circuit(n, d, 6, 2, seed=len(perm), num_outputs=1)  # its matrix is 0 past row 0
    ch = kaleidoscope_model(linear_circuit_to_kaleidoscope(c), n, d, c)
    assert sv.verify(c, ch.model, certificate=ch.certificate).proved
    assert sv.verify(c, ch.model, method="exact").proved


def test_factor_models_read_a_numpy_integer_d_by_its_value():
    """``d=np.int64(2)`` was refused as 'expected d to be a power of two, found d = 2'."""
    f = ButterflyFactor(4, 2, (1, 2), (3, 0), (0, 5), (1, 1))
    c, ch = factor_model(f, np.int64(2))
    assert (c.n, c.d) == (2, 2) and factor_circuit(f, np.int64(2)) == c
    assert sv.verify(ch.model, c, certificate=ch.certificate).proved


@pytest.mark.parametrize("n, d, match", [
    (3.0, 1, r"expected n to be a positive int, found 3.0 of type float"),
    (3, 0, r"expected d to be a positive int, found 0 of type int"),
    (3, None, r"expected d to be a positive int, found None of type NoneType"),
    (True, 3, r"expected n to be a positive int, found True of type bool"),
])
def test_kaleidoscope_models_refuse_sizes_that_are_no_positive_ints(n, d, match):
    """``n=3.0`` raised TypeError from the layout; ``d=0`` was named as 'must read 3×0 inputs'."""
    f = permutation_to_kaleidoscope([1, 0, 2])
    c = from_matrix(to_matrix(f), 3, 1)
    with pytest.raises(CompileError, match="Lemma H.18: " + match):
        kaleidoscope_model(f, n, d, c)
    with pytest.raises(CompileError, match="Lemma H.18: " + match):
        kaleidoscope_factors(f.kaleidoscope, n, d)
    ch = kaleidoscope_model(f, np.int64(3), np.int64(1), c)
    assert sv.verify(ch.model, c, certificate=ch.certificate).proved


def test_factor_models_refuse_what_is_no_factor_and_prove_symbolic_ones():
    with pytest.raises(CompileError, match=r"factor_circuit: expected a ButterflyFactor, found int"):
        factor_model(3, 1)  # type: ignore[arg-type]
    f = ButterflyFactor(4, 1, (sv.sym("a"), 1), (0, 2), (1, 0), (1, sv.sym("b")))
    c, ch = factor_model(f, 2)
    assert sv.verify(ch.model, c, certificate=ch.certificate).proved


@pytest.mark.parametrize("p", [8, 1, -7, 7.0, True, 2**31 + 11, 2**61 - 1])
def test_twiddles_refuse_a_modulus_that_is_no_small_prime(p):
    """``twiddles(obj, p=8)`` returned residues mod a composite (and ``p=7.0``, ``True`` or ``-7``
    were taken as moduli); it now checks ``p`` as ``compile_numpy(kind='mod')`` does."""
    from symverify.kaleidoscope.numeric import twiddles

    f = permutation_to_kaleidoscope([1, 0, 3, 2])
    with pytest.raises(IRError, match=r"twiddles: expected a prime 2 ≤ p < 2\*\*31, found p = "):
        twiddles(f, p=p)
    assert len(twiddles(f, p=7)) == len(twiddles(f))


def test_a_numpy_integer_modulus_is_read_by_its_value():
    """``compile_numpy(kind='mod', p=np.int64(7))`` was refused as 'expected a prime 2 ≤ p < 2**31,
    found p = np.int64(7)'; the program keeps the plain int."""
    from symverify.kaleidoscope.numeric import twiddles

    f = permutation_to_kaleidoscope([1, 0, 3, 2])
    prog = compile_numpy(f, "mod", np.int64(7))
    assert type(prog.p) is int and prog.p == 7
    assert prog.apply([1, 2, 3, 9]).tolist() == [2, 1, 2, 3]
    assert len(twiddles(f, p=np.uint32(7))) == len(twiddles(f, p=7))
    with pytest.raises(IRError, match=r"expected a prime 2 ≤ p < 2\*\*31, found p = np.int64\(8\)"):
        compile_numpy(f, "mod", np.int64(8))


@pytest.mark.parametrize("rows, match", [
    ([{1: 7, 0: 3}, {0: 9, 1: 1}], r"dense matrix row 0: expected a sequence of entries in order, found dict"),
    (["10", "01"], r"dense matrix row 0: expected a sequence of entries in order, found str"),
    ([{0, 1}, {1, 0}], r"dense matrix row 0: expected a sequence of entries in order, found set"),
    ((r for r in [[1, 0], [0, 1]]), r"dense matrix: expected a sequence of rows, found generator"),
    ({0: [1, 0]}, r"dense matrix: expected a sequence of rows, found dict"),
])
def test_dense_matrices_refuse_rows_without_an_order(rows, match):
    """``SparseMatrix.from_dense([{1: 7, 0: 3}, {0: 9, 1: 1}])`` was the identity (each dict row read
    as its keys) and ``["10", "01"]`` too (characters): what ``sparse_to_kaleidoscope`` then built
    and ``verify_matrix`` compared against. Rows without an order are refused where they are read."""
    with pytest.raises(IRError, match=match):
        SparseMatrix.from_dense(rows)
    assert SparseMatrix.from_dense(np.array([[0, 2], [3, 0]])).entries == ((0, 1, 2), (1, 0, 3))


def test_sparse_matrix_keys_are_integer_positions():
    """``from_dict`` keys: numpy integers are positions (they were "outside 3×3" though inside);
    floats, bools and keys of the wrong length are refused with the key shown."""
    assert SparseMatrix.from_dict(3, 3, {(np.int64(2), np.int32(1)): 5}).entries == ((2, 1, 5),)
    for key in ((0.0, 0), (True, 0), (0,), "ab"):
        with pytest.raises(IRError, match=r"sparse matrix: expected keys \(row, col\) of ints, found"):
            SparseMatrix.from_dict(3, 3, {key: 1})


def test_a_kaleidoscope_instance_refuses_a_check_of_another_kaleidoscope_of_the_same_sizes():
    """Sizes alone let a check of another kaleidoscope of equal ``n``, ``N`` and ``w`` through (the
    identity's proof recorded under the swap's factorization); the check's sealed digest of what it
    checked must be ``f.kaleidoscope``'s."""
    from symverify.errors import UsageError
    from symverify.scripts.instances import kaleidoscope_instance

    f, g = permutation_to_kaleidoscope([1, 0, 2]), permutation_to_kaleidoscope([0, 1, 2])
    assert (f.kaleidoscope.n, f.N, f.w) == (g.kaleidoscope.n, g.N, g.w)
    identity = verify_matrix(g, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert identity.proved
    with pytest.raises(UsageError, match=r"the check is of another kaleidoscope of the same sizes \(digest sha256:"):
        kaleidoscope_instance("identity", f, identity)
    assert kaleidoscope_instance("identity", g, identity).ok


def test_a_kaleidoscope_instance_refuses_a_factorization_subclass():
    """A ``Factorization`` subclass could state resources that are not its kaleidoscope's."""
    from symverify.errors import UsageError
    from symverify.kernel.kaleidoscope.factorization import Factorization
    from symverify.scripts.instances import kaleidoscope_instance

    class Stated(Factorization):
        pass

    f = permutation_to_kaleidoscope([1, 0, 2])
    sub = object.__new__(Stated)
    for name, value in vars(f).items():
        object.__setattr__(sub, name, value)
    with pytest.raises(UsageError, match=r"expected a Factorization, found Stated \(a subclass of Factorization"):
        kaleidoscope_instance("swap", sub, verify_matrix(f, [[0, 1, 0], [1, 0, 0], [0, 0, 1]]))
