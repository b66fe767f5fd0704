"""The matrix prover: exact verification of kaleidoscope factorizations (docs/theory.md §5, method *exact*; docs/kaleidoscope.md §5 item 11).

A kaleidoscope ``S·E·Sᵀ`` is a linear map, so it equals a target matrix iff all ``n²`` entries
agree. :func:`verify_matrix` materializes the first ``n`` columns of ``E`` exactly (one pass of
the stage kernel over sparse linear forms, :func:`~symverify.kernel.kaleidoscope.apply.materialize`),
checks the garbage-free claim (rows ``≥ n`` of those columns are 0) when it is made, and compares
the ``n×n`` corner entry by entry. Entries are exact scalars; symbolic ones are canonical
polynomials in the parameters, so ``==`` is polynomial identity. A mismatch is a verdict
(``refuted``, with the first differing entry in row-major order), never an exception; that entry
is re-checked first by applying ``E`` to the unit vector of its column (:func:`_recheck`).

:func:`prove_kaleidoscope_circuit` is the same check as a verification method (``exact-matrix``)
for a kaleidoscope side against a linear circuit side: ``exact`` and ``auto`` try it first. A
difference becomes ``refuted`` only with a counterexample re-checked by exact evaluation (a
small-integer search, else the unit input ``e_j`` of the first differing column ``j``); without
one the pair is left to the generic methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Union

from symverify.deadline import Check, DeadlineExceededError
from symverify.errors import IRError, ProverError, ShapeError, UsageError
from symverify.kernel.ir.butterfly import Kaleidoscope
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.memo import checked_scope
from symverify.kernel.ir.scalar import Scalar, as_scalar, is_bool, show_scalar
from symverify.kernel.kaleidoscope.apply import apply, materialize
from symverify.kernel.kaleidoscope.circuits import circuit_matrix
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import SparseMatrix, check_permutation
from symverify.kernel.provers import outcome
from symverify.kernel.provers.counterexample import (
    MAX_CONFIRM_BITS,
    confirm_in_time,
    search_or_stop,
    stopped_note,
    value_bits,
)
from symverify.kernel.provers.fingerprint import (
    check_digests,
    check_plain,
    checked_digest,
    content_digest,
    matrix_digest,
    permutation_digest,
    same_snapshot,
    snapshot,
)
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.outcome import Counterexample, MethodResult, Sealed, Verdict, seal_outcome
from symverify.kernel.provers.sides import CircuitSide, KaleidoscopeSide, Side

__all__ = ["KaleidoscopeCheck", "verify_matrix", "verify_circuit", "verify_permutation", "prove_kaleidoscope_circuit"]

Target = Union[SparseMatrix, Sequence[Sequence[object]], Mapping[tuple[int, int], object]]
Difference = tuple[int, int, Scalar, Scalar]


@dataclass(frozen=True)
class KaleidoscopeCheck(Sealed):
    """The verdict of an exact check: :attr:`Verdict.PROVED` or :attr:`Verdict.REFUTED` (an exact
    matrix comparison always decides).

    ``first_difference`` is ``(row, col, kaleidoscope value, target value)`` when refuted; for a
    failed garbage-free check the row is ``≥ n`` and the target value is 0.

    ``digests`` names what was compared: ``(kaleidoscope, target)``, the kaleidoscope's content
    digest (:func:`~symverify.kernel.provers.fingerprint.content_digest`, its ``side_digest``) and
    the target's: :func:`verify_circuit`'s circuit's content digest (the ``side_digest`` of that
    circuit), else the exact ``n×n`` target matrix's
    (:func:`~symverify.kernel.provers.fingerprint.matrix_digest`, a permutation's as its matrix).
    Set by the checks and sealed with the rest (None: an outcome made otherwise states none).

    ``target_shape`` is the shape ``(rows, cols)`` of the target as given: the claim is about that
    matrix padded with zeros to ``n×n``, and ``str`` says so when it was smaller than the corner
    (a ``2×2`` target proved for a ``3×3`` corner is ``diag(T, 0)``, not ``T``). Sealed with the rest
    (None: an outcome made otherwise states none).
    """

    verdict: Verdict
    method: str
    n: int
    size: int
    width: int
    garbage_free_checked: bool
    first_difference: Difference | None = None
    digests: tuple[str, str] | None = field(default=None, kw_only=True)
    target_shape: tuple[int, int] | None = field(default=None, kw_only=True)
    _seal: str = field(default="", init=False, repr=False, compare=False)  # set by seal_outcome
    SEALED = ("n", "size", "width", "garbage_free_checked", "first_difference", "digests", "target_shape")
    """The fields bound into the seal besides the verdict and method (the sizes, a refutation's
    first differing entry, the target's shape and the digests, which ``Instance.from_report`` records): one changed after the check unseals it."""

    def __post_init__(self) -> None:
        check_digests(self.digests, "kaleidoscope check", "(kaleidoscope, target)")
        shape = self.target_shape
        if shape is not None and not (type(shape) is tuple and len(shape) == 2 and all(type(x) is int and 0 <= x <= self.n for x in shape)):
            raise IRError(f"kaleidoscope check target_shape: expected None or (rows, cols), plain ints in 0 … n = {self.n}, "
                          f"found {shape!r:.80}")

    @property
    def proved(self) -> bool:
        return self.verdict is Verdict.PROVED

    def padding(self) -> str:
        """``"; target r×c padded with zeros to n×n"`` when the target was smaller than the corner, else ``""``."""
        if self.target_shape is None or self.target_shape == (self.n, self.n):
            return ""
        r, c = self.target_shape
        return f"; target {r}×{c} padded with zeros to {self.n}×{self.n}"

    def __str__(self) -> str:
        head = f"{self.verdict.value} ({self.method}): n={self.n} N={self.size} w={self.width}"
        if self.first_difference is None:
            return head + (", garbage-free" if self.garbage_free_checked else "") + self.padding()
        i, j, got, want = self.first_difference
        return head + f"; entry ({i}, {j}) is {show_scalar(got)}, expected {show_scalar(want)}" + self.padding()


def _target_dict(target: Target, n: int) -> tuple[dict[tuple[int, int], Scalar], tuple[int, int]]:
    """The target's nonzero entries and its shape ``(rows, cols)``: a :class:`SparseMatrix` (exactly
    that class: a subclass is an :class:`IRError`), a mapping ``{(row, col): value}`` (``n×n``), or
    dense rows read by :meth:`SparseMatrix.from_dense` (which refuses rows without an order: a mapping
    would read as its keys, a str as its characters)."""
    if isinstance(target, SparseMatrix):
        if type(target) is not SparseMatrix:  # its as_dict() could answer otherwise than its entries say
            kind = type(target)
            raise IRError(f"kaleidoscope check: target: expected a SparseMatrix exactly, found an instance of "
                          f"{kind.__module__}.{kind.__qualname__} (a subclass may read otherwise than its entries say)")
        m = target
    elif isinstance(target, Mapping):
        m = SparseMatrix.from_dict(n, n, target)
    else:
        m = SparseMatrix.from_dense(target, "kaleidoscope check: target")  # refuses unordered rows
    if m.rows > n or m.cols > n:
        raise ShapeError(f"kaleidoscope check: the target is {m.rows}×{m.cols}, larger than the corner n×n = {n}×{n}")
    return m.as_dict(), (m.rows, m.cols)


def _first_difference(rows: list[dict[int, Scalar]], want: dict[tuple[int, int], Scalar]) -> Difference | None:
    by_row: dict[int, dict[int, Scalar]] = {}
    for (i, j), v in want.items():
        by_row.setdefault(i, {})[j] = v
    for i, got in enumerate(rows):
        exp = by_row.get(i, {})
        if got == exp:
            continue
        for j in sorted(set(got) | set(exp)):
            a, b = got.get(j, 0), exp.get(j, 0)
            if a != b:
                return (i, j, a, b)
    return None


def _checker(check: object) -> None:
    """``check`` is None or a deadline checker (a callable, :mod:`symverify.deadline`); anything else is a
    :class:`UsageError` before any work (it is called before every factor)."""
    if check is not None and not callable(check):
        raise UsageError(f"kaleidoscope check: check: expected None or a deadline checker (a callable), "
                         f"found {type(check).__name__} {check!r:.40}")


def _kaleidoscope(obj: object) -> Kaleidoscope:
    """The kaleidoscope checked: ``obj`` itself or a factorization's (else :class:`ShapeError`); one
    that is or holds an instance of a subclass of the IR's classes is an :class:`IRError`
    (:func:`~symverify.kernel.provers.fingerprint.check_plain`, as for ``verify``'s sides)."""
    k = obj.kaleidoscope if isinstance(obj, Factorization) else obj
    if not isinstance(k, Kaleidoscope):
        raise ShapeError(f"kaleidoscope check: expected a Kaleidoscope or Factorization, found {type(obj).__name__}")
    check_plain(k, "kaleidoscope check")  # a subclass could state another width, or matrix, than its factors'
    return k


def verify_matrix(obj: Kaleidoscope | Factorization, target: Target, *, garbage_free: bool | None = None,
                  check: Check | None = None) -> KaleidoscopeCheck:
    """Decide ``S·E·Sᵀ = target`` exactly (target padded with zeros to ``n×n``: a target smaller than
    the corner is compared with zero rows and columns added, its shape recorded in the check's
    ``target_shape`` and written by ``str``, so a proof about the padded matrix never reads as one
    about a corner of the target's shape).

    ``target`` is a :class:`SparseMatrix`, a mapping ``{(row, col): value}`` or a sequence of rows,
    each a sequence of entries in order (a row that is a mapping, a set, a str or a generator is an
    :class:`IRError`: it has no row order to read).

    ``garbage_free`` (True, False or None: the factorization's claim, else False; anything else is
    a :class:`~symverify.errors.UsageError`, never read by its truth value) also requires
    ``E·(x, 0) = (target·x, 0)``, the property that lets pieces be chained without projectors
    (:func:`~symverify.kaleidoscope.linear.chain`).

    ``check`` (a deadline checker, :mod:`symverify.deadline`) runs before every factor applied; the
    :class:`~symverify.deadline.DeadlineExceededError` it raises stops the check (no verdict).

    >>> from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    >>> str(verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), [[0, 1, 0], [1, 0, 0], [0, 0, 1]]))
    'proved (exact-matrix): n=3 N=4 w=1, garbage-free'
    >>> str(verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]))
    'refuted (exact-matrix): n=3 N=4 w=1; entry (0, 0) is 0, expected 1'

    The factorization's ``garbage_free`` claim and the target's entries (whose conversion may run the
    caller's code) are read first, the kaleidoscope checked before (its ``n`` sizes the target, and
    a subclass is refused before the target is read) and again after (:func:`_again`); from there
    :func:`_checked` compares."""
    _checker(check)
    garbage_free = _claim(obj, garbage_free)
    n = _kaleidoscope(obj).n
    want, shape = _entries(target, n)
    return _checked(_again(obj, n), garbage_free, want, shape, None, check)


def _entries(target: Target, n: int) -> tuple[dict[tuple[int, int], Scalar], tuple[int, int]]:
    """The target's nonzero entries as exact scalars (:func:`_target_dict`, each value read by
    :func:`~symverify.kernel.ir.scalar.as_scalar`) and its shape."""
    given, shape = _target_dict(target, n)
    return {key: as_scalar(v, f"target entry {key}") for key, v in given.items()}, shape


def _again(obj: Kaleidoscope | Factorization, n: int) -> Kaleidoscope:
    """The kaleidoscope checked again (:func:`_kaleidoscope`) after the caller's code ran (a target's
    conversion, a deadline checker), its corner still the ``n×n`` the target was read for."""
    k = _kaleidoscope(obj)
    if k.n != n:
        raise ShapeError(f"kaleidoscope check: the corner changed from {n}×{n} to {k.n}×{k.n} while the target was read")
    return k


def _claim(obj: Kaleidoscope | Factorization, garbage_free: bool | None) -> bool:
    """The garbage-free claim to check: ``garbage_free`` when given (True or False; anything else is a
    :class:`UsageError`), else a factorization's own claim, else False."""
    if garbage_free is not None and not is_bool(garbage_free):  # bool('no') is True, bool(0) False: no guessing
        raise UsageError(f"kaleidoscope check garbage_free: expected True, False or None (the factorization's claim), "
                         f"found {type(garbage_free).__name__} {garbage_free!r:.40}")
    if isinstance(obj, Factorization) and garbage_free is None:
        garbage_free = obj.garbage_free
    return bool(garbage_free)


def _checked(k: Kaleidoscope, garbage_free: bool, want: dict[tuple[int, int], Scalar], shape: tuple[int, int],
             about: str | None, check: Check | None) -> KaleidoscopeCheck:
    """The comparison of the kaleidoscope ``k`` with the exact corner entries ``want`` (the target's
    ``shape`` as given), ``k`` checked by :func:`_kaleidoscope` just before this call with only the
    kernel's own code run since (no object of the caller's read in between).

    Its digest is taken first, within :func:`~symverify.kernel.ir.memo.checked_scope` without the
    comparison after: between the check, which compared ``k``'s snapshot, and the digest's store only
    the encoder runs, so a second comparison of the same snapshot (``refresh``, which a digest stored
    outside a check runs) would compare the same objects again and could not differ. The deadline
    checker ``check`` is the caller's code and runs while ``k`` is applied (:func:`materialize`,
    :func:`_recheck`): when one is given, ``k``'s snapshot is taken after the check and compared when
    the comparison is done, and a kaleidoscope rewritten in between is a :class:`ProverError` (its
    digest names the content checked, its rows may be another's)."""
    with checked_scope(k, compare_after=False):  # only the encoder runs in it, just after k's check
        digest = checked_digest(k)
    before = snapshot(k) if check is not None else None
    rows = [r.terms for r in materialize(k, check=check)]
    digests = (digest, about if about is not None else matrix_digest(k.n, k.n, want))

    def result(method: str, diff: Difference | None) -> KaleidoscopeCheck:
        if diff is not None:
            _recheck(k, diff, check)
        if before is not None and not same_snapshot(before, snapshot(k)):
            raise ProverError("kaleidoscope check: the kaleidoscope was rewritten in place while it was compared (by the "
                              "deadline checker's code); expected it unchanged from its check to its verdict")
        verdict = outcome.exact_comparison(diff is None)
        return seal_outcome(KaleidoscopeCheck(verdict, method, k.n, k.size, k.width, garbage_free, diff, digests=digests,
                                              target_shape=shape))

    if garbage_free:
        for i in range(k.n, k.size):
            if rows[i]:
                j = min(rows[i])
                return result("garbage-free", (i, j, rows[i][j], 0))
    return result("exact-matrix", _first_difference(rows[: k.n], want))


def _recheck(k: Kaleidoscope, diff: Difference, check: Check | None) -> None:
    """Re-evaluate a refutation's differing entry ``(i, j, got, want)`` on its own: entry ``i`` of
    ``E·e_j`` (the unit vector of column ``j``, :func:`~symverify.kernel.kaleidoscope.apply.apply` over
    exact scalars: values, not the linear forms :func:`materialize` carries) must be ``got``, and
    ``got ≠ want``; otherwise :class:`ProverError` (no refutation is reported unconfirmed)."""
    i, j, got, want = diff
    col = apply(k, [1 if r == j else 0 for r in range(k.size)], full=True, check=check)
    if col[i] != got or got == want:
        raise ProverError(f"kaleidoscope check: the first differing entry ({i}, {j}) did not re-check: E·e_{j} has "
                          f"{show_scalar(col[i])} there, the comparison read {show_scalar(got)} against {show_scalar(want)}")


def verify_circuit(obj: Kaleidoscope | Factorization, c: Circuit, *, garbage_free: bool | None = None,
                   check: Check | None = None) -> KaleidoscopeCheck:
    """Decide that the kaleidoscope computes the linear circuit ``c`` (its exact matrix).

    ``c`` must be a :class:`Circuit` exactly, holding the IR's own classes (as ``verify`` reads a
    side: :func:`~symverify.kernel.provers.fingerprint.check_plain`); a subclass is an :class:`IRError`."""
    _checker(check)
    k = _kaleidoscope(obj)
    if not isinstance(c, Circuit):
        raise IRError(f"kaleidoscope check: expected a linear Circuit to compare with, found {type(c).__name__}")
    check_plain(c, "kaleidoscope check: the circuit")  # a subclass could state another num_inputs or gates; the digest names exactly what is compared
    if k.n != c.num_inputs:
        raise ShapeError(f"kaleidoscope check: the corner is {k.n}×{k.n}, the circuit has n·d = {c.num_inputs} inputs")
    target = circuit_matrix(c, check)  # runs the deadline checker, the caller's code: the kaleidoscope is checked again after
    about = content_digest(c)
    garbage_free = _claim(obj, garbage_free)
    want, shape = _entries(target, k.n)
    return _checked(_again(obj, k.n), garbage_free, want, shape, about, check)


def verify_permutation(obj: Kaleidoscope | Factorization, perm: Sequence[int], *, garbage_free: bool | None = None,
                       check: Check | None = None) -> KaleidoscopeCheck:
    """Decide that the kaleidoscope is ``P`` with ``P[perm[i], i] = 1``; ``perm`` must have length
    ``n`` (a shorter one padded with zero rows would not be a permutation of ``0 … n−1``).

    ``perm`` and the garbage-free claim are read first (the caller's objects), then the kaleidoscope
    is checked once and compared (:func:`_checked`): no code of the caller's runs in between."""
    _checker(check)
    perm = check_permutation(perm)  # a sequence of ints first (a 0-d array has a len() that raises)
    garbage_free = _claim(obj, garbage_free)
    k = _kaleidoscope(obj)
    if len(perm) != k.n:
        raise ShapeError(f"kaleidoscope check: the corner is {k.n}×{k.n}, the permutation has length {len(perm)}")
    # P[perm[i], i] = 1 (SparseMatrix.permutation's entries), built directly: check_permutation made
    # perm a bijection of 0 … n−1 in plain ints, so every entry is inside the corner and listed once
    return _checked(k, garbage_free, {(t, i): 1 for i, t in enumerate(perm)}, (k.n, k.n), permutation_digest(perm), check)


def prove_kaleidoscope_circuit(a: Side, b: Side, opts: Options) -> MethodResult | None:
    """Kaleidoscope vs linear circuit (either order): compare the exact ``n×n`` matrices
    (:func:`verify_circuit`). ``proved`` when they are equal; ``refuted`` with a counterexample
    re-checked by exact evaluation; None when the pair is not a kaleidoscope and a linear circuit,
    or when the matrices differ but no counterexample was found (the entries differ as
    polynomials in the weights: the generic methods look for a point).

    The counterexample is searched for and confirmed as every method's is: values past
    :data:`~symverify.kernel.provers.counterexample.GUARD_BITS` bits under a timeout in a child
    limited to the time left and ``opts.memory()``
    (:func:`~symverify.kernel.provers.counterexample.confirm_in_time`), a point whose values may
    exceed :data:`~symverify.kernel.provers.counterexample.MAX_CONFIRM_BITS` bits not at all. When
    the timeout, or that child's memory limit or crash, stopped them: ``unknown``, with a note
    naming the stop; so too when the timeout ends the comparison of the matrices itself (the deadline
    checker runs before every factor and between blocks of the circuit's gates)."""
    match a, b:
        case (KaleidoscopeSide() as k, CircuitSide() as c) | (CircuitSide() as c, KaleidoscopeSide() as k):
            if not c.obj.is_linear():
                return None
        case _:
            return None
    try:
        check = verify_circuit(k.obj, c.obj, check=opts.checker())
    except DeadlineExceededError as e:  # the timeout, while the matrices were built or compared
        ev0 = {"n": k.obj.n, "size": k.obj.size, "width": k.obj.width, "compared": "exact n×n matrices"}
        return outcome.unknown("exact-matrix", ev0, notes=(stopped_note(opts, e, "before the exact matrices were compared"),))
    ev = {"n": check.n, "size": check.size, "width": check.width, "compared": "exact n×n matrices"}
    if check.proved:
        return outcome.proved("exact-matrix", ev)
    if check.first_difference is not None:  # str() of an int of 70 000 bits raises ValueError
        i, j, got, want = check.first_difference
        ev["first_difference"] = f"({i}, {j}, {show_scalar(got)}, {show_scalar(want)})"
    try:
        cex = _counterexample(a, b, opts, check.first_difference)
    except DeadlineExceededError as e:  # the timeout, or a confirmation child's memory limit or crash
        return outcome.unknown("exact-matrix", ev, notes=(
            "the exact matrices differ, but " + stopped_note(opts, e, "before a counterexample was found and confirmed by "
                                                              "exact evaluation"),))
    if cex is None:
        return None
    return outcome.refuted("exact-matrix", ev, cex)


def _counterexample(a: Side, b: Side, opts: Options, diff: Difference | None) -> Counterexample | None:
    """A counterexample for sides whose exact matrices differ (first in ``diff``): the small-integer
    search, else the unit input ``e_j`` of the first differing column ``j`` (parameters 0), confirmed
    by :func:`~symverify.kernel.provers.counterexample.confirm_in_time` when its values stay within
    ``MAX_CONFIRM_BITS``; :class:`DeadlineExceededError` when a stop (the timeout, a confirmation
    child's memory limit or crash) ended both before one was found."""
    from symverify.kernel.provers.bounds import structure_bounds

    check = opts.checker()
    bounds = structure_bounds(a, b, deadline=check)
    degree = max(1, bounds.peak_degree)
    stop: DeadlineExceededError | None = None
    try:
        cex = search_or_stop(a, b, opts, found_by="exact-matrix",
                             sizes=(bounds.peak_height_bits, bounds.peak_degree))
    except DeadlineExceededError as e:
        cex, stop = None, e
    if cex is None and diff is not None:  # column j differs: the unit input e_j may separate
        j = diff[1]
        u = [[1 if i * a.d + col == j else 0 for col in range(a.d)] for i in range(a.n)]
        ps: dict[str, Fraction | int] = {name: 0 for name in a.params() | b.params()}
        bits = value_bits(u, ps, degree, bounds.peak_height_bits)
        if bits <= MAX_CONFIRM_BITS:
            cex = confirm_in_time(a, b, u, ps, "exact-matrix", opts, bits, check=check)
    if cex is None and stop is not None:
        raise stop
    return cex
