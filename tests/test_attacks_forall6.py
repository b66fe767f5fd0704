"""Adversarial inputs to the all-sizes machinery, sixth round: ``prove_forall`` and ``instantiate``
inside a ``predicates(...)`` block, expressions read only beside a zero (``where(c, 0)``,
``x * 0``) choosing the encoding or hiding a family's second arity, long chains of conditions or of
predicate applications that ran far past the budget, a predicate without arguments read in bulk, a
lying timeout and a witness whose repaired placement broke ``where`` (docs/forall.md §1, §3). The
strongest attacks that found no false proof are kept as regression tests at the end."""

from __future__ import annotations

import time

import pytest

import symverify as sv
from symverify.kernel.parametric.concrete import failing_cells, spec_at
from symverify.kernel.parametric.expr import BoolOp, predicates
from symverify.kernel.provers.forall import _recheck
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    eq,
    fam,
    ge,
    inp,
    instantiate,
    ite,
    lt,
    ne,
    pred,
    tap,
    var,
    where,
)

i, q, N = (var(x) for x in "iqN")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)


# ---- the statement is the gadget's, whatever predicates the caller's context gives ---------------------
def test_a_predicate_of_the_callers_context_does_not_decide_the_statement() -> None:
    """``i << ite(P(0, 0), 0, 1)`` reads a free predicate: the shift is 0 or 1 depending on the
    placement. The choice of the integer encoding evaluated the shift amount to see whether it is a
    constant, and did so with the predicates of the caller's ``with predicates(...)`` block: inside
    one giving ``P`` true, the amount was the constant 0 and the integer encoding read ``i << k`` as
    ``i·1`` whatever z3's ``P``, so a spec wrong wherever ``P(0, 0)`` is false (``2·in`` at row 1) was
    "proved for all N". The prover now reads no predicate of the caller's context."""
    g = Gadget("g", (Param("N", 1, 8),), N, 1, _COPY, where(eq(i << ite(pred("P", 0, 0), 0, 1), i), inp(i, q), 2 * inp(i, q)))
    outside = sv.prove_forall(g)
    assert outside.verdict is sv.Verdict.REFUTED, outside
    with predicates({"P": lambda *a: True}):
        inside = sv.prove_forall(g)
    assert inside.verdict is sv.Verdict.REFUTED, inside
    with predicates({"P": lambda *a: False}):  # the claim is indeed false where P(0, 0) is false
        assert spec_at(g, {"N": 2}, 1, 0, lambda r, c: 1) == 2


def test_a_division_by_a_predicate_reaching_zero_is_refused_inside_a_predicates_block() -> None:
    """``i // ite(P(0, 0), 1, 0)`` divides by 0 where ``P(0, 0)`` is false: refused outside a
    ``predicates`` block, but inside one giving ``P`` true the divisor was taken for the constant 1
    and the integer encoding asked no ``divisor ≠ 0``: "proved for all N"."""
    g = Gadget("g", (Param("N", 1, 8),), N, 1, _COPY, inp(i, q) + where(eq(i // ite(pred("P", 0, 0), 1, 0), 0), 0))
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*\(i // \(1 if P\(0, 0\) else 0\)\)"):
        sv.prove_forall(g)
    with predicates({"P": lambda *a: True}), pytest.raises(ParametricError, match=r"undefined or out of range at .*\(i // "):
        sv.prove_forall(g)


def test_an_instance_under_a_predicates_block_is_held_to_assume() -> None:
    """The ∀ theorem holds for the placements satisfying ``assume``; ``instantiate`` checked a
    ``placement=`` against it, but predicates given by a ``with predicates(...)`` block were taken
    unchecked: ``b1 = [P]`` with ``assume = P`` is proved to copy its input, and the instance built
    with ``P`` false everywhere was the zero layer."""
    p = pred("P", i, q)
    g = Gadget("g", (Param("N", 1, 8),), N, 1, (PLayer(b1=where(p, 1, 0), h=(tap(0),), mode="causal"),), inp(i, q), assume=p)
    assert sv.prove_forall(g).proved
    with predicates({"P": lambda *a: False}), pytest.raises(ParametricError, match=r"the placement violates P\(i, q\) at cell \(0, 0\)"):
        instantiate(g, {"N": 2})
    with predicates({"P": lambda *a: True}):
        (layer,) = instantiate(g, {"N": 2})
    assert layer.b1.to_rows() == [[1], [1]]


# ---- the encoding is chosen from every expression the checks read --------------------------------------
@pytest.mark.parametrize("field", ["b1", "b2", "tap", "spec"])
@pytest.mark.parametrize("op", ["//", "&"])
def test_a_nonlinear_index_read_only_beside_a_zero_is_decided(field: str, op: str) -> None:
    """``where(eq(i // (s + 1), 0), 0)`` has no term of its own (its value is 0), so the choice of
    the integer (linear) encoding, which looked at the terms, did not see its ``//`` by a variable
    (or a bit operation ``&``); the definedness check, which reads the condition, then met it inside
    the integer encoding and raised the prover's internal ``_NotLinearError`` out of
    ``prove_forall``. The choice now reads every expression the checks read: decided with
    bit-vectors, proved, and refused where the condition is undefined (division by ``s`` reaching 0)."""
    s = var("s")

    def zero(div: object) -> object:
        return where(eq(i // div if op == "//" else i & div, 0), 0)

    def gadget(div: object) -> Gadget:
        extra = zero(div)
        b1 = 1 + extra if field == "b1" else 1
        b2 = extra if field == "b2" else 0
        # a tap's value depends on the channel only
        h = (tap(0, 1 + where(eq(q // div if op == "//" else q & div, 0), 0)),) if field == "tap" else (tap(0),)
        spec = inp(i, q) + (extra if field == "spec" else 0)
        return Gadget("g", (Param("N", 1, 8), Param("s", 0, 3)), N, 1, (PLayer(b1=b1, h=h, b2=b2, mode="causal"),), spec)

    r = sv.prove_forall(gadget(s + 1))
    assert r.verdict is sv.Verdict.PROVED and r.stats["encoding"].startswith("bv"), r
    if op == "//":
        with pytest.raises(ParametricError, match=r"undefined or out of range at \{'N': \d, 's': 0"):
            sv.prove_forall(gadget(s))


@pytest.mark.parametrize("field", ["b1", "spec"])
def test_a_family_used_with_another_arity_beside_a_zero_is_refused(field: str) -> None:
    """``fam("B", i) + fam("B", i, q) * 0``: the second use has no term of its value, so the check
    that a family has one number of indices did not see it and the gadget was proved, while
    ``instantiate`` calls ``B``'s callable with two indices as well as with one."""
    extra = fam("B", i) + fam("B", i, q) * 0
    b1 = extra if field == "b1" else fam("B", i)
    spec = (extra if field == "spec" else fam("B", i)) * inp(i, q)
    g = Gadget("g", (Param("N", 1, 8),), N, 1, (PLayer(b1=b1, h=(tap(0),), mode="causal"),), spec)
    with pytest.raises(ParametricError, match=r"family B is used with 2 indices and with 1"):
        sv.prove_forall(g)
    if field == "b1":
        with pytest.raises(ParametricError, match=r"family B at \(0, 0\): the callable raised TypeError"):
            instantiate(g, {"N": 2}, families={"B": lambda r: r + 1})


# ---- long chains of conditions stay inside the budget ---------------------------------------------------
def _chain(k: int, last: object) -> BoolOp:
    """``i = N ∨ i = N + 1 ∨ … ∨ last``: ``k`` conditions false at every cell, then ``last``."""
    return BoolOp("or", (*(eq(i, N + x) for x in range(k)), last))  # type: ignore[arg-type]


def test_a_long_chain_of_conditions_is_encoded_within_the_budget() -> None:
    """A flat ``|`` chain is one condition however long (docs/forall.md §1), but its short-circuit
    definedness was encoded with one prefix per item, ``O(k²)`` z3 nodes built outside any deadline
    check: a ``care`` of 2000 items took two minutes before the first query, so ``timeout=60`` ended
    ``unknown`` (a budget of 5 s, after minutes). It is now ``O(k log k)`` and inside the budget."""
    care = _chain(2000, lt(i, N))
    wrong = Gadget("g", (Param("N", 1, 64),), N, 1, _COPY, where(ge(N, 5), 2 * inp(i, q), inp(i, q)), care=care)
    r = sv.prove_forall(wrong, timeout=60)
    assert r.verdict is sv.Verdict.REFUTED and r.params["N"] >= 5, r
    assert sv.prove_forall(Gadget("g", (Param("N", 1, 64),), N, 1, _COPY, inp(i, q), care=care), timeout=60).proved


def test_the_vacuity_check_of_many_predicate_applications_keeps_the_budget() -> None:
    """``assume = P(N, q) ∨ P(N + 1, q) ∨ …`` (1500 applications): the vacuity check's functional
    consistency pairs (quadratic in the applications) and a substitution of every application into
    every argument were built with no deadline check: ``timeout=5`` answered after four minutes. The
    building is inside the budget (and substitutes only arguments holding an application)."""
    g = Gadget("g", (Param("N", 1, 4096),), N, 1, _COPY, inp(i, q),
               assume=BoolOp("or", tuple(pred("P", N + x, q) for x in range(1500))))
    t0 = time.perf_counter()
    r = sv.prove_forall(g, timeout=5)
    # the budget may run out in the vacuity check or, on a loaded machine, while encoding before it
    assert r.verdict is sv.Verdict.UNKNOWN and r.detail.startswith("timeout"), r
    assert time.perf_counter() - t0 < 60


def test_assume_is_checked_at_every_cell_of_a_witness_in_bulk() -> None:
    """The re-check of a witness with placements evaluated ``assume`` cell by cell (and again to
    repair the placement): a chain of 6000 conditions at 8000 cells took minutes after the verdict
    was found. It is evaluated for all cells at once, and finds exactly the cells where it fails."""
    p = pred("P", i, q)
    g = Gadget("g", (Param("N", 1, 16384),), N, 1, _COPY, where(ge(N, 8000), 2 * inp(i, q), inp(i, q)),
               assume=_chain(6000, p | ~p))
    t0 = time.perf_counter()
    differs, why = _recheck(g, {"N": 8000}, 0, 0, {"P": lambda *a: True})
    assert differs is True and "2*in[0][0]" in why, why
    assert time.perf_counter() - t0 < 30
    # and the cells where assume fails are found exactly: P required on the even rows
    even = Gadget("g", (Param("N", 1, 64),), N, 1, _COPY, inp(i, q), assume=_chain(40, ne(i % 2, 0) | p))
    with predicates({"P": lambda r, c: r < 3}):
        assert failing_cells(even, {"N": 9}, 9, 1) == [(4, 0), (6, 0), (8, 0)]
    assert _recheck(even, {"N": 9}, 0, 0, {"P": lambda r, c: r < 3})[0] is None


# ---- an instance agrees with the theorem at every size --------------------------------------------------
@pytest.mark.parametrize("placement", [set(), {()}, "false", "true"])
def test_a_predicate_without_arguments_is_read_at_every_cell_in_bulk(placement: object) -> None:
    """``pred("P")`` has no arguments (a placement holds ``()`` or not). A bias of more than 16 blocks
    is evaluated for all cells at once, and a predicate there was read over its argument columns:
    with none, the set placement gave an empty array, which ``where`` took for "true at every cell"
    (``P = ∅`` built ``b1 = 2``, the value for ``P``, so the instance at ``N = 40`` disagreed with the
    proved ``where(P, 2·in, in)``), and a callable raised numpy's ValueError. The predicate is read once
    for all cells; so is ``assume``, which ``P = ∅`` violates."""
    p0 = pred("P")
    holds = placement in ({()}, "true")
    given = placement if isinstance(placement, set) else {"false": lambda: False, "true": lambda: True}[placement]  # type: ignore[index]
    layers = (PLayer(b1=where(p0, 2, 1), h=(tap(0),), mode="causal"),)
    g = Gadget("g", (Param("N", 1, 64),), N, 1, layers, where(p0, 2 * inp(i, q), inp(i, q)))
    assert sv.prove_forall(g).proved
    for n in (3, 40):  # cell by cell, then in bulk
        (layer,) = instantiate(g, {"N": n}, placement={"P": given})
        assert layer.b1.to_rows() == [[2 if holds else 1]] * n
    required = Gadget("g", g.params, N, 1, layers, 2 * inp(i, q), assume=p0)
    assert sv.prove_forall(required).proved
    if holds:
        instantiate(required, {"N": 40}, placement={"P": given})
    else:
        with pytest.raises(ParametricError, match=r"the placement violates P\(\) at cell \(0, 0\)"):
            instantiate(required, {"N": 40}, placement={"P": given})


class _Lying(float):
    """A float whose comparisons all say yes: NaN, infinity and -1 pass ``0 < t < inf``."""

    def __lt__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return True


class _LyingInt(int):
    def __lt__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return True


@pytest.mark.parametrize("t", [_Lying("nan"), _Lying("inf"), _Lying(-1.0), _LyingInt(-5), _LyingInt(0)])
def test_a_timeout_given_as_a_lying_number_is_read_as_its_value(t: float) -> None:
    """The timeout's range check used the number's own comparisons: a float subclass holding NaN or
    infinity passed it and ``prove_forall`` crashed with ValueError or OverflowError (``int(nan·1000)``)
    when it set z3's timeout; -1 passed too. The timeout is read as the value it stores."""
    g = Gadget("g", (Param("N", 1, 8),), N, 1, _COPY, inp(i, q))
    with pytest.raises(ParametricError, match=r"prove_forall timeout: expected a positive(, finite)? number of seconds.*, found (nan|inf|-1\.0|-5|0)$"):
        sv.prove_forall(g, timeout=t)
    assert sv.prove_forall(g, timeout=_Lying(30.0)).proved


def test_a_witness_whose_repair_breaks_where_is_completed_not_a_crash() -> None:
    """``where = P(0, 0)``, ``assume = ¬P(i, q) ∨ Q(i, q)`` and a spec wrong at row 1: z3's witness
    fixes ``P(0, 0)`` (``where`` reads it) but not ``Q(0, 0)`` (no term reads it), so ``assume``
    fails at ``(0, 0)``; the repair made the predicates false there, ``where`` with them, and the
    re-check raised "parameters {'N': 2} violate its condition P(0, 0)" out of ``prove_forall``. A
    repair that leaves no instance is no witness: the completion (``Q(0, 0)`` true) confirms it."""
    g = Gadget("g", (Param("N", 2, 4),), N, 1, _COPY, where(eq(i, 1), 2 * inp(i, q), inp(i, q)), where=pred("P", 0, 0),
               assume=~pred("P", i, q) | pred("Q", i, q))  # type: ignore[operator]
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED and r.cell == (1, 0), r
    (layer,) = instantiate(g, r.params, placement={"P": {(0, 0)}, "Q": {(0, 0)}})  # the refutation is real
    assert layer.h.to_rows()[0] == [1]
    with predicates({"P": lambda *a: a == (0, 0), "Q": lambda *a: a == (0, 0)}):
        assert spec_at(g, r.params, 1, 0, lambda a, b: 1) == 2


# ---- attacks that found no false proof (regressions) ---------------------------------------------------
@pytest.mark.parametrize("other", ["i * (N // N)", "(i * N) // N", "(i ^ N) ^ N", "(i << 3) >> 3"])
def test_one_point_written_twice_through_bit_vector_arithmetic_is_refused_as_vacuous(other: str) -> None:
    # the vacuity check's functional consistency under the bit-vector encodings (products of
    # indices, XOR, shifts): P(i, q) ∧ ¬P(x, q) with x = i is no placement at row 0. ``(i * N) // N``
    # is normalised to ``i`` before it is unwound, so no nonlinear instance reaches z3 (unwound as
    # ``(a * N) // N``, its time varied from 0.2 to 22 s of CPU): the default budget
    x = {"i * (N // N)": i * (N // N), "(i * N) // N": (i * N) // N, "(i ^ N) ^ N": (i ^ N) ^ N, "(i << 3) >> 3": (i << 3) >> 3}[other]
    p = pred("P", i, q)
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, where(eq(i, 0), 2 * inp(i, q), inp(i, q)),
               assume=ne(i, 0) | (p & ~pred("P", x, q)), care=p | ~p)  # type: ignore[operator]
    with pytest.raises(ParametricError, match=r"vacuous statement: its assumptions .* hold for no placement at cell \(0, 0\)"):
        sv.prove_forall(g)


def test_an_odd_cycle_across_cells_is_refused_under_the_bit_vector_encoding() -> None:
    # P(i) ≠ P(i + 1 mod N) read at three cells, with N ^ 0 forcing bit-vectors: refused at N = 3
    nx = N ^ 0
    nxt = (i + 1) % nx
    alternate = (pred("P", i, q) & ~pred("P", nxt, q)) | (~pred("P", i, q) & pred("P", nxt, q))  # type: ignore[operator]
    spec = inp(i, q) + where(eq(N, 3), inp((i + 1) % nx, q) + inp((i + 2) % nx, q))
    g = Gadget("g", (Param("N", 2, 10),), N, 1, _COPY, spec, assume=alternate, care=pred("P", i, q) | ~pred("P", i, q))
    with pytest.raises(ParametricError, match=r"hold for no placement at cell \(\d, 0\) at \{'N': 3\}"):
        sv.prove_forall(g)
