"""Attacks on the modular and randomized side of the kernel, fourth round: residues, bounds, matrices.

Each test builds a pair (or a matrix claim) and tries to get ``proved`` for one that does not
hold, a stated failure bound below what Schwartz–Zippel gives for the true degree and the prime
used, a ``refuted`` whose difference is not real, or an exception that is not a
:class:`~symverify.errors.SymverifyError`.

**Sparse targets with int-subclass positions.** :class:`~symverify.kernel.kaleidoscope.matrix.SparseMatrix`
kept a position or a size given as an ``int`` subclass as that object: its bounds check read the
subclass's comparisons, the comparison of :func:`~symverify.kernel.provers.matrix.verify_matrix` its
hash and equality. An entry at row 7 of a ``3×3`` target whose position "compared" inside the
matrix passed the check and was never looked up (``proved`` for a target holding an entry the
corner lacks), and an entry hashing as row 0 was compared in row 0 (a ``refuted`` naming an entry
that does not differ). Positions and sizes are now stored as the plain ``int`` of their value, as
every other IR field (:func:`~symverify.kernel.ir.scalar.plain_int`).

**``garbage_free`` read by its truth value.** ``verify_matrix(..., garbage_free="no")`` ran the
garbage-free check (``bool("no")`` is True) and answered ``refuted`` for a correct corner whose
kaleidoscope writes outside it; ``garbage_free=0`` skipped the check a factorization claims. It
takes True, False or None now (else :class:`~symverify.errors.UsageError`), as ``Factorization``.

**Crashes and misread arguments.** A 0-d numpy array passed the IR's "is a sequence" test
(:func:`~symverify.kernel.ir.scalar.unordered`), so ``verify_matrix``, ``verify_permutation``,
``Circuit`` and ``Grid.from_rows`` raised ``TypeError``; ``verify_circuit`` read ``num_inputs`` of
anything (``AttributeError``); ``modular_eval`` and ``execute(..., backend="modular")`` used a
modulus given as an ``int`` subclass as that object, whose ``__rmod__`` answered every ``x % p``
(wrong residues, no error). Each is now an :class:`~symverify.errors.IRError`, or the plain value.

Further attacks kept as regression tests (each already answered correctly): weights whose
denominator is a prime either engine may draw (``2^31 − 1``, a random-range 31-bit prime,
``2^61 − 1``) in every grid position and in a circuit; weights congruent to another modulo those
primes (``p + 1`` against 1, ``−p + 1``); symbolic weights whose degree in the parameters exceeds
the degree in the inputs, against the exact degree of the difference and the stated bound; a
degree beyond the torch engine's range; cyclic against causal convolutions with and without
padding; every kind of ``error_bound`` (vacuous, tiny, a float, a string, NaN, 0, 1, negative,
above 1) and ``trials``; malformed ``verify_matrix`` targets; and fragments whose layers read
cells outside the entry interface or write cells outside the exit interface.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import symverify as sv
from symverify.errors import IRError, ShapeError, UsageError
from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, sym
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import SparseMatrix
from symverify.kernel.provers.matrix import verify_circuit, verify_matrix, verify_permutation
from symverify.kernel.provers.outcome import Verdict
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.poly import PolyRing

M61 = 2**61 - 1
P31 = 2**31 - 1
P30 = 1_073_741_827  # a prime in [2^30, 2^31): the torch engine may draw it
A, B = sym("a"), sym("b")
ENGINES = ["python", "torch"]
SWAP = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]  # the matrix of permutation_to_kaleidoscope([1, 0, 2])


# ---- the defect: int-subclass positions in a sparse target ----------------------------------------


class _Inside(int):
    """An int that answers every comparison as if it were inside any range."""

    def __lt__(self, other: object) -> bool:
        return True

    __le__ = __lt__

    def __ge__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return False


class _Zeroish(int):
    """An int that hashes as 0 and equals everything: a dict would file it under key 0."""

    def __hash__(self) -> int:
        return hash(0)

    def __eq__(self, other: object) -> bool:
        return True

    __ne__ = int.__ne__


def test_a_target_entry_outside_the_corner_is_refused_whatever_its_position_answers() -> None:
    """Row 7 of a 3×3 target: was stored, passed the bounds check and was never compared (proved)."""
    with pytest.raises(ShapeError, match=r"position \(7, 0\) is outside 3×3"):
        SparseMatrix(3, 3, ((_Inside(7), 0, 5), (0, 1, 1), (1, 0, 1), (2, 2, 1)))
    with pytest.raises(ShapeError, match=r"position \(0, 7\) is outside 3×3"):
        SparseMatrix(3, 3, ((0, _Inside(7), 5),))
    with pytest.raises(ShapeError, match=r"position \(3, 0\) is outside 2×2"):
        SparseMatrix(_Inside(2), 2, ((3, 0, 1),))


def test_sparse_matrix_positions_and_sizes_are_plain_ints() -> None:
    m = SparseMatrix(_Inside(3), _Inside(3), ((_Zeroish(2), _Zeroish(1), 9), (0, 1, 1)))
    assert all(type(x) is int for x in (m.rows, m.cols)) and all(type(x) is int for i, j, _ in m.entries for x in (i, j))
    assert m == SparseMatrix(3, 3, ((2, 1, 9), (0, 1, 1)))


def test_a_target_entry_is_compared_at_its_own_position() -> None:
    """(2, 1) = 9 hashing as row 0: was compared in row 0 and reported as '(0, 1) is 0, expected 9'
    though the corner's (0, 1) is 1; the difference is at (2, 1)."""
    k = permutation_to_kaleidoscope([1, 0, 2])
    target = SparseMatrix(3, 3, ((0, 1, 1), (1, 0, 1), (2, 2, 1), (_Zeroish(2), _Zeroish(1), 9)))
    check = verify_matrix(k, target)
    assert check.verdict is Verdict.REFUTED and check.first_difference == (2, 1, 0, 9)
    assert verify_matrix(k, SparseMatrix(3, 3, ((0, 1, 1), (1, 0, 1), (2, 2, 1)))).proved


# ---- the defect: garbage_free read by its truth value -------------------------------------------


@pytest.mark.parametrize("flag", ["no", "false", "", 0, 1, np.int64(1), [], Fraction(0)])
def test_garbage_free_is_true_false_or_none(flag: Any) -> None:
    f = permutation_to_kaleidoscope([1, 0, 2])
    k = f.kaleidoscope
    c = Circuit(3, 1, (), (1, 0, 2))
    for call in (lambda: verify_matrix(k, SWAP, garbage_free=flag), lambda: verify_matrix(f, SWAP, garbage_free=flag),
                 lambda: verify_permutation(k, [1, 0, 2], garbage_free=flag), lambda: verify_circuit(k, c, garbage_free=flag)):
        with pytest.raises(UsageError, match=r"garbage_free: expected True, False or None"):
            call()


def test_garbage_free_flags_that_are_bools_keep_their_meaning() -> None:
    k = permutation_to_kaleidoscope([1, 0, 2]).kaleidoscope
    assert verify_matrix(k, SWAP, garbage_free=True).garbage_free_checked
    assert not verify_matrix(k, SWAP, garbage_free=np.False_).garbage_free_checked
    assert verify_matrix(Factorization(k, "test", True), SWAP).garbage_free_checked  # None: the factorization's claim
    assert not verify_matrix(Factorization(k, "test", True), SWAP, garbage_free=False).garbage_free_checked


# ---- regression: residues of weights the primes do not reduce ------------------------------------


def _model(where: str, w: Scalar) -> Model:
    """A one-layer 2×1 model reading ``w`` in ``where``: ``u·w·u`` (W, h), ``w·u`` (b1), ``u·w`` (b2)."""
    impulse = Grid.zeros(2, 1).paint(0, 1, 0, 1, 1)
    layer = {
        "W": Layer.make(2, 1, W=Grid.full(1, 1, w), h=impulse),
        "h": Layer.make(2, 1, W=Grid.identity(1), h=Grid.zeros(2, 1).paint(0, 1, 0, 1, w)),
        "b1": Layer.make(2, 1, b1=Grid.full(2, 1, w), h=impulse),
        "b2": Layer.make(2, 1, W=Grid.identity(1), b2=Grid.full(2, 1, w)),
    }[where]
    return Model(2, 1, 2, 1, (layer,))


def _verify(lhs: Any, rhs: Any, engine: str, **kw: Any) -> sv.Report:
    return sv.verify(lhs, rhs, method="randomized", backend=engine, timeout=120, **kw)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("where", ["W", "h", "b1", "b2"])
@pytest.mark.parametrize("den", [P31, P30, M61, P31 * M61])
def test_a_denominator_one_of_the_primes_is_avoided_never_reduced(engine: str, where: str, den: int) -> None:
    """``a/den`` equals itself (proved: the prime is never ``den``'s factor) and differs from
    ``(a + 1)/den`` and from 0 (refuted, never a residue of 1/p read as 0)."""
    w = A * Fraction(1, den)
    same = _verify(_model(where, w), _model(where, A * Fraction(1, den)), engine)
    assert same.verdict is sv.Verdict.PROVED, same
    for other in (w + Fraction(1, den), A * Fraction(1, den + 2)):
        assert _verify(_model(where, w), _model(where, other), engine).verdict is sv.Verdict.REFUTED


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("den", [P31, M61])
def test_a_circuit_constant_with_a_prime_denominator_is_avoided(engine: str, den: int) -> None:
    def circuit(c: Scalar) -> Circuit:
        return Circuit(1, 1, (Gate.const(c), Gate.mul(0, 1)), (2,))

    assert _verify(circuit(Fraction(1, den)), circuit(Fraction(1, den)), engine).verdict is sv.Verdict.PROVED
    assert _verify(circuit(Fraction(1, den)), circuit(Fraction(2, den)), engine).verdict is sv.Verdict.REFUTED


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("where", ["W", "h", "b1", "b2"])
@pytest.mark.parametrize("w", [P31 + 1, P30 + 1, M61 + 1, -M61 + 1, 2 * P31 * M61 + 1])
def test_weights_congruent_to_one_modulo_a_prime_are_refuted(engine: str, where: str, w: int) -> None:
    report = _verify(_model(where, w), _model(where, 1), engine)
    assert report.verdict is sv.Verdict.REFUTED, report


# ---- regression: the stated bound against the true degree ----------------------------------------


def _true_degree(m: Model) -> int:
    """The largest total degree (inputs and parameters) of an output entry, by exact expansion."""
    ring = PolyRing(m.n * m.d, tuple(sorted(m.params())))
    x = ring.inputs()
    u = [[x[i * m.d + j] for j in range(m.d)] for i in range(m.n)]
    return max(int(v.total_degree()) for row in eval_model(m, u, ring) for v in row if v)


@pytest.mark.parametrize("engine", ENGINES)
def test_parameter_degree_counts_in_the_stated_bound(engine: str) -> None:
    """``u·a^5·b^2·u`` has degree 2 in the inputs but 9 in all: the bound is Schwartz–Zippel's
    with ``D ≥ 9`` for the prime used, and ``u·a^5·b^2·u`` against ``u·a^5·b·u`` is refuted."""
    m = _model("W", A**5 * B**2)
    assert _true_degree(m) == 9
    report = _verify(m, _model("W", A**5 * B**2), engine)
    assert report.verdict is sv.Verdict.PROVED
    ev = report.evidence
    assert ev["degree_bound"] >= 9
    low = M61 if engine == "python" else 2**30  # the least prime a trial can draw
    assert ev["bound_log2"] >= ev["k"] * math.log2(Fraction(9, low)) - 0.01
    assert _verify(m, _model("W", A**5 * B), engine).verdict is sv.Verdict.REFUTED


def test_a_degree_beyond_the_torch_range_is_refused_not_run() -> None:
    m = _model("W", A ** (2**20))
    with pytest.raises(UsageError, match=r"degree bound D = 1048578 exceeds 2\^20"):
        _verify(m, m, "torch")
    report = sv.verify(m, _model("W", A ** (2**20)), method="randomized", timeout=120)
    assert report.verdict is sv.Verdict.PROVED and report.evidence["backend"].startswith("python")


@pytest.mark.parametrize("engine", ENGINES)
def test_cyclic_and_causal_differ_only_where_the_wrap_reads_input(engine: str) -> None:
    def conv(n: int, inner: int, mode: str) -> Model:
        h = Grid.zeros(inner, 1).paint(1, 2, 0, 1, 1)  # the tap 1 at lag 1
        return Model(n, 1, inner, 1, (Layer.make(inner, 1, W=Grid.identity(1), h=h, mode=mode),))

    assert _verify(conv(4, 4, "cyclic"), conv(4, 4, "causal"), engine).verdict is sv.Verdict.REFUTED
    # the wrap reads padding rows (zero): equal on the 2×1 output
    assert _verify(conv(2, 4, "cyclic"), conv(2, 4, "causal"), engine).verdict is sv.Verdict.PROVED


# ---- regression: error bounds and trials ---------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("error_bound", [Fraction(999, 1000), "1/3", Fraction(1, 2**2000), 1e-300])
def test_the_stated_bound_is_at_most_the_request_and_needs_every_trial(engine: str, error_bound: Any) -> None:
    m = _model("W", A)
    report = _verify(m, m, engine, error_bound=error_bound)
    assert report.verdict is sv.Verdict.PROVED
    ev = report.evidence
    target = Fraction(error_bound) if not isinstance(error_bound, float) else Fraction(*error_bound.as_integer_ratio())
    per_trial = Fraction(ev["degree_bound"], M61 if engine == "python" else 2**30)
    assert per_trial ** ev["k"] <= target < per_trial ** (ev["k"] - 1) if ev["k"] > 1 else per_trial <= target
    assert ev["bound_log2"] is not None and 2 ** ev["bound_log2"] >= float(per_trial) ** ev["k"] * (1 - 1e-9)


@pytest.mark.parametrize("error_bound", [0, 1, -1, Fraction(3, 2), float("nan"), float("inf"), True, "2", 1.0])
def test_an_error_bound_outside_zero_one_is_refused(error_bound: Any) -> None:
    m = _model("W", A)
    with pytest.raises(UsageError, match=r"error_bound: expected a number strictly between 0 and 1"):
        sv.verify(m, m, method="randomized", error_bound=error_bound)


@pytest.mark.parametrize("trials", [0, -1, True, 2.0, "3"])
def test_trials_that_are_no_positive_int_are_refused(trials: Any) -> None:
    m = _model("W", A)
    with pytest.raises(UsageError, match=r"trials: expected a positive int"):
        sv.verify(m, m, method="randomized", trials=trials)


def test_more_trials_only_lower_the_stated_bound() -> None:
    m = _model("W", A)
    few, many = _verify(m, m, "python"), _verify(m, m, "python", trials=7)
    assert many.evidence["k"] == 7 > few.evidence["k"] and many.evidence["bound_log2"] < few.evidence["bound_log2"]


# ---- regression: malformed matrix targets -------------------------------------------------------


@pytest.mark.parametrize("target, err, match", [
    ({(-1, 0): 1}, ShapeError, r"position \(-1, 0\) is outside 3×3"),
    ({(0, 1): 1, (1, 0): 1, (2, 2): 1, (3, 3): 0}, ShapeError, r"position \(3, 3\) is outside 3×3"),
    (np.array(SWAP, dtype=float), IRError, r"expected an exact value"),
    ({(0, 1): True, (1, 0): 1, (2, 2): 1}, IRError, r"expected an exact number, found the bool True"),
    ([[0, 1, 0, 0]] * 4, ShapeError, r"the target is 4×4, larger than the corner n×n = 3×3"),
])
def test_malformed_targets_are_refused(target: Any, err: type[Exception], match: str) -> None:
    with pytest.raises(err, match=match):
        verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), target)


def test_a_smaller_target_is_padded_with_zeros_and_so_refuted() -> None:
    """The 2×2 swap is the 3×3 target with a zero row and column: the corner's (2, 2) = 1 differs."""
    check = verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), [[0, 1], [1, 0]])
    assert check.verdict is Verdict.REFUTED and check.first_difference == (2, 2, 1, 0)


# ---- the defect: crashes on a 0-d array or a non-circuit -----------------------------------------


@pytest.mark.parametrize("call, err, match", [
    (lambda: verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), np.array(3)), IRError, r"target: expected a sequence of rows, found ndarray"),
    (lambda: verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), [np.array(1)] * 3), IRError, r"target row 0: expected a sequence of entries"),
    (lambda: verify_permutation(permutation_to_kaleidoscope([1, 0, 2]), np.array(0)), IRError, r"permutation: expected a sequence of ints, found ndarray"),
    (lambda: SparseMatrix.permutation(np.array(1)), IRError, r"permutation: expected a sequence of ints, found ndarray"),
    (lambda: Circuit(1, 1, (), np.array(0)), IRError, r"circuit outputs: expected a sequence, found ndarray"),
    (lambda: Circuit(1, 1, np.array(0), (0,)), IRError, r"circuit gates: expected a sequence, found ndarray"),
    (lambda: Grid.from_rows(np.array(3)), IRError, r"rows: expected a sequence, found ndarray"),
    (lambda: verify_circuit(permutation_to_kaleidoscope([1, 0, 2]), "x"), IRError, r"expected a linear Circuit to compare with, found str"),
    (lambda: verify_circuit(permutation_to_kaleidoscope([1, 0, 2]), Model(3, 1, 3, 1, ())), IRError,
     r"expected a linear Circuit to compare with, found Model"),
])
def test_a_zero_dimensional_array_or_a_non_circuit_is_refused_not_crashed(call: Any, err: type[Exception], match: str) -> None:
    """A 0-d numpy array has ``__iter__`` and ``__len__`` (both raise ``TypeError``): it passed the
    "is a sequence" test and crashed the reader; ``verify_circuit`` read ``num_inputs`` of anything."""
    with pytest.raises(err, match=match):
        call()


def test_arrays_of_one_or_more_dimensions_are_still_read() -> None:
    k = permutation_to_kaleidoscope([1, 0, 2])
    assert verify_matrix(k, np.array(SWAP)).proved and verify_permutation(k, np.array([1, 0, 2])).proved
    assert SparseMatrix.from_dense(np.zeros((0,))).rows == 0


# ---- the defect: a modulus given as an int subclass ----------------------------------------------


class _ModZero(int):
    """An int whose ``x % self`` is 0: Python asks a subclass on the right first."""

    def __rmod__(self, other: object) -> int:
        return 0


def test_the_torch_engine_reads_a_modulus_at_its_value() -> None:
    """``modular_eval(c, x, p)`` with ``p`` an int subclass reduced the constant 12 to 0 mod "7"
    (and ``execute(..., backend='modular')`` a whole model to zeros): every ``x % p`` of the plans
    asked the subclass. The modulus is checked and used as the plain int of its value."""
    torch = pytest.importorskip("torch")
    from symverify.executors import execute
    from symverify.kernel.engines.modular import modular_eval
    from symverify.kernel.engines.torch_modular import check_prime

    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.const(12)), (2, 3))
    x = torch.tensor([[[5, 6]]])
    assert modular_eval(c, x, _ModZero(7)).tolist() == modular_eval(c, x, 7).tolist() == [[[2, 5]]]
    m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.full(1, 1, 10), h=Grid.zeros(2, 1).paint(0, 1, 0, 1, 1), b2=Grid.full(2, 1, 11)),))
    assert execute(m, [[5], [6]], backend="modular", p=_ModZero(7)).tolist() == [[2], [5]]
    assert type(check_prime(_ModZero(7))) is int


# ---- regression: fragments whose interfaces do not cover what the layers read or write -----------


def _fragment(entry: set[tuple[int, int]], exit: set[tuple[int, int]], outputs: Any, name: str) -> Any:
    """One causal layer on a 2×1 state, ``y = u ⊙ (lag-1 shift of u)``: ``y[0] = 0``, ``y[1] = u0·u1``;
    the spec's exit cells are ``outputs(builder)``."""
    from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder

    layer = Layer.make(2, 1, W=Grid.identity(1), h=Grid.zeros(2, 1).paint(1, 2, 0, 1, 1))

    def build() -> Spec:
        sb = SpecBuilder(2, 1)
        return Spec(sb.circuit(outputs(sb), name))

    return Fragment(name, 2, 1, (layer,), frozenset(entry), frozenset(exit), {}, build)


def test_fragments_are_proved_only_for_what_their_layers_do_on_clean_inputs() -> None:
    from symverify.kernel.provers.fragment import prove_fragment

    both = {(0, 0), (1, 0)}
    honest = prove_fragment(_fragment(both, {(1, 0)}, lambda sb: {(1, 0): sb.mul(sb.cell(0, 0), sb.cell(1, 0))}, "honest"))
    assert honest.verdict is Verdict.PROVED and honest.exact is True
    # the layer reads (0, 0), outside the entry: it is 0 on clean inputs, so the output is 0
    assert prove_fragment(_fragment({(1, 0)}, {(1, 0)}, lambda sb: {}, "masked")).verdict is Verdict.PROVED
    false = prove_fragment(_fragment({(1, 0)}, {(1, 0)}, lambda sb: {(1, 0): sb.mul(sb.cell(1, 0), sb.cell(1, 0))}, "false"))
    assert false.verdict is Verdict.REFUTED and not false.compositional
    # the layer writes (1, 0), outside the exit: the claim "0 there" is false
    outside = prove_fragment(_fragment(both, {(0, 0)}, lambda sb: {}, "writes outside"))
    assert outside.verdict is Verdict.REFUTED and "cell (1, 0) differs" in outside.failure
    with pytest.raises(IRError, match=r"the spec reads cells \(0, 0\) outside the entry interface"):
        prove_fragment(_fragment({(1, 0)}, {(1, 0)}, lambda sb: {(1, 0): sb.mul(sb.cell(0, 0), sb.cell(1, 0))}, "reads"))
