"""A predicate read inside an index expression (an ``ite`` in a comparison's operand, deep inside
sums and products, or in another predicate's argument) is read at a cell as a predicate standing
alone is: the instances of ``assume`` there are premises of the existence checks, so a ``care`` or
``entry`` that no placement allowed by ``assume`` makes true is refused as vacuous, never proved.
So is a predicate of one or three arguments, or of two in another order than ``(i, q)``: the
instance of ``assume`` is taken at the cell whose application in ``assume`` reads the point."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.parametric import Gadget, Param, ParametricError, PLayer, eq, inp, ite, lt, pred, tap, var, where

i, q, N = var("i"), var("q"), var("N")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)  # output cell = input cell


def P(r: object, c: object) -> object:
    return pred("P", r, c)


def _copy(assume: object, **kw: object) -> Gadget:
    """``y = u`` on ``2 ≤ N ≤ 8`` rows, one channel."""
    return Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, inp(i, q), assume=assume, **kw)  # type: ignore[arg-type]


# each is "P is false at the next row": false at every cell under ``assume = P(i, q)``
_NEXT_FALSE = {
    "ite in a comparison": lt(i + 1, N) & eq(ite(P(i + 1, q), 1, 0), 0),
    "ite deep in sums and products": lt(i + 1, N) & eq((ite(P(i + 1, q), 1, 0) + N) * 3, N * 3),
    "ite in a comparison under not": lt(i + 1, N) & ~eq(ite(P(i + 1, q), 0, 1), 0),
    "ite in an ite's condition": lt(i + 1, N) & eq(ite(eq(ite(P(i + 1, q), 1, 0), 1), 5, 7), 7),
    "predicate in a predicate's argument": lt(i + 1, N) & ~P(ite(P(i + 1, q), i + 1, i + 1), q),
}


@pytest.mark.parametrize("name", sorted(_NEXT_FALSE))
def test_a_care_only_assume_forbids_is_refused_wherever_its_predicate_stands(name: str) -> None:
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(_copy(P(i, q), care=_NEXT_FALSE[name]), timeout=60)


@pytest.mark.parametrize("name", sorted(_NEXT_FALSE))
def test_an_entry_only_assume_forbids_is_refused_wherever_its_predicate_stands(name: str) -> None:
    with pytest.raises(ParametricError, match=r"vacuous statement: its entry .* holds at no cell"):
        sv.prove_forall(_copy(P(i, q), entry=_NEXT_FALSE[name]), timeout=60)


@pytest.mark.parametrize("name", sorted(_NEXT_FALSE))
def test_the_same_care_and_entry_are_proved_where_assume_allows_them(name: str) -> None:
    """With ``assume = not P(i, q)`` the same cells exist: the instances only add true premises."""
    r = sv.prove_forall(_copy(~P(i, q), care=_NEXT_FALSE[name], entry=_NEXT_FALSE[name]), timeout=60)
    assert r.proved, r


# ``assume`` names the cell through its predicate's arguments in another order or number: the
# point read is "P is false at the next row", which ``assume`` makes true at every row
_OTHER_ARITIES = {
    "one argument": (pred("P", i), lt(i + 1, N) & ~pred("P", i + 1)),
    "three arguments": (pred("P", i, q, 0), lt(i + 1, N) & ~pred("P", i + 1, q, 0)),
    "the channel first": (pred("P", q, i), lt(i + 1, N) & ~pred("P", q, i + 1)),
    "one argument, nested": (pred("P", i), lt(i + 1, N) & eq(ite(pred("P", i + 1), 1, 0), 0)),
}


@pytest.mark.parametrize("name", sorted(_OTHER_ARITIES))
def test_a_care_assume_forbids_through_a_predicate_of_another_shape_is_refused(name: str) -> None:
    assume, care = _OTHER_ARITIES[name]
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(_copy(assume, care=care), timeout=60)


@pytest.mark.parametrize("name", sorted(_OTHER_ARITIES))
def test_the_same_care_is_proved_where_assume_allows_it(name: str) -> None:
    assume, care = _OTHER_ARITIES[name]
    r = sv.prove_forall(_copy(~assume, care=care), timeout=60)  # type: ignore[operator]
    assert r.proved, r


def test_a_wrong_spec_behind_such_a_care_is_not_proved() -> None:
    """The copy claimed to double its input, at cells where ``P`` is false at the next row: with
    ``assume = P(i)`` there are none (refused as vacuous), with ``assume = not P(i)`` it is refuted."""
    care = lt(i + 1, N) & ~pred("P", i + 1)
    wrong = {"spec": 2 * inp(i, q), "care": care}
    with pytest.raises(ParametricError, match="vacuous statement"):
        sv.prove_forall(Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, assume=pred("P", i), **wrong), timeout=60)  # type: ignore[arg-type]
    r = sv.prove_forall(Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, assume=~pred("P", i), **wrong), timeout=60)  # type: ignore[arg-type]
    assert r.verdict is sv.Verdict.REFUTED, r


def test_a_cell_read_under_a_guard_still_gets_the_instance_care_needs() -> None:
    """The spec reads the input at the next row under a guard false at every size in the ranges
    (``N = 100``), so the instance of ``assume`` taken there holds only under that guard; ``care``
    reads ``P`` at that cell too and needs it whatever the guard: refused as vacuous, as without the
    guarded read."""
    spec = inp(i, q) + where(lt(i + 1, N) & eq(N, 100), inp(i + 1, q), 0)
    care = lt(i + 1, N) & ~P(i + 1, q)
    for s in (spec, inp(i, q)):
        g = Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, s, assume=P(i, q), care=care)
        with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
            sv.prove_forall(g, timeout=60)
    g = Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, spec, assume=P(i, q), entry=care)
    with pytest.raises(ParametricError, match=r"vacuous statement: its entry .* holds at no cell"):
        sv.prove_forall(g, timeout=60)


_SHAPES: dict[str, Any] = {
    "alone": lambda a: ~a,
    "ite in a comparison": lambda a: eq(ite(a, 1, 0), 0),
    "ite under sums and products": lambda a: eq((ite(a, 2, 0) + N) * 3, N * 3),
    "ite in an ite's condition": lambda a: eq(ite(eq(ite(a, 1, 0), 1), 5, 7), 7),
}
_ORDERS: dict[str, Any] = {  # assume's application at the cell, and the point k rows further on
    "(i, q)": (lambda r, c: pred("P", r, c)),
    "(q, i)": (lambda r, c: pred("P", c, r)),
    "(i)": (lambda r, c: pred("P", r)),
    "(i, q, 0)": (lambda r, c: pred("P", r, c, 0)),
}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(_SHAPES)), st.sampled_from(sorted(_ORDERS)), st.integers(1, 3), st.booleans())
def test_a_care_reading_p_false_k_rows_on_is_refused_exactly_where_assume_forbids_it(shape: str, order: str, k: int,
                                                                                      forbidden: bool) -> None:
    """``care``: row ``i + k`` exists and ``P`` is false there, written in any shape and argument
    order; refused as vacuous under ``assume = P`` at every cell, proved under ``assume = not P``."""
    app = _ORDERS[order]
    care = lt(i + k, N) & _SHAPES[shape](app(i + k, q))
    assume = app(i, q) if forbidden else ~app(i, q)
    g = Gadget("copy", (Param("N", 4, 8),), N, 1, _COPY, inp(i, q), assume=assume, care=care)
    if forbidden:
        with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
            sv.prove_forall(g, timeout=60)
    else:
        assert sv.prove_forall(g, timeout=60).proved


# ``assume`` constrains ``P`` only through an offset: ``P(i + k, q)`` at the cell ``(i, q)`` is ``P`` at
# row ``i + k``, so ``P`` holds at every row from ``k`` on. A ``care`` (or ``entry``) reading ``P`` false at a row
# ``≥ k`` is about nothing: its point is read by ``assume``'s instance at ``(i − k, q)``, which the existence
# checks did not take (only a bare ``i`` in ``assume`` named the cell), so it was proved (or unknown).
_THROUGH_OFFSET = {
    "i + 1": (lambda r, c, k: pred("P", r + k, c), 1),
    "1 + i": (lambda r, c, k: pred("P", k + r, c), 1),
    "(q, i + 2)": (lambda r, c, k: pred("P", c, r + k), 2),
    "i + K (a parameter)": (lambda r, c, k: pred("P", r + var("K"), c), None),
    "(i + 1) and (q + 0)": (lambda r, c, k: pred("P", r + k, c + 0), 1),
}


def _offset_gadget(name: str, forbidden: bool, spec: object = None, **kw: object) -> Gadget:
    app, k = _THROUGH_OFFSET[name]
    K = var("K") if k is None else k
    assume = app(i, q, K) | ~lt(i + K, N) if forbidden else ~app(i, q, K) | ~lt(i + K, N)
    params = (Param("N", 2, 8), Param("K", 1, 2)) if k is None else (Param("N", 2, 8),)
    return Gadget("copy", params, N, 1, _COPY, inp(i, q) if spec is None else spec, assume=assume,  # type: ignore[arg-type]
                  where=lt(K, N), **kw)


def _late_p_false(name: str) -> object:
    """``P`` is false at this cell, a row that ``assume`` reaches through its offset (``i ≥ K``)."""
    k = _THROUGH_OFFSET[name][1]
    K = var("K") if k is None else k
    at = pred("P", q, i) if name == "(q, i + 2)" else pred("P", i, q + 0) if "q + 0" in name else P(i, q)
    return ~lt(i, K) & ~at


@pytest.mark.parametrize("name", sorted(_THROUGH_OFFSET))
@pytest.mark.parametrize("field", ["care", "entry"])
def test_a_care_or_entry_assume_forbids_through_an_offset_is_refused(name: str, field: str) -> None:
    match = "no cell with care" if field == "care" else "holds at no cell"
    with pytest.raises(ParametricError, match=f"vacuous statement: .*{match}"):
        sv.prove_forall(_offset_gadget(name, True, **{field: _late_p_false(name)}), timeout=60)
    with pytest.raises(ParametricError, match="vacuous statement"):  # a wrong spec too: refused, not unknown
        sv.prove_forall(_offset_gadget(name, True, spec=2 * inp(i, q), **{field: _late_p_false(name)}), timeout=60)


@pytest.mark.parametrize("name", sorted(_THROUGH_OFFSET))
def test_the_same_care_is_proved_where_assume_allows_it_through_the_offset(name: str) -> None:
    r = sv.prove_forall(_offset_gadget(name, False, care=_late_p_false(name), entry=_late_p_false(name)), timeout=60)
    assert r.proved, r
    r = sv.prove_forall(_offset_gadget(name, False, spec=2 * inp(i, q), care=_late_p_false(name)), timeout=60)
    assert r.verdict is sv.Verdict.REFUTED, r


def test_a_row_the_offset_never_reaches_is_not_refused() -> None:
    """``P(i + 1, q)`` never constrains row 0: ``care = not P(i, q)`` holds there, a statement about
    something (proved, as is its wrong spec refuted), not refused as vacuous."""
    assume = P(i + 1, q) | ~lt(i + 1, N)
    g = Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, inp(i, q), assume=assume, care=~P(i, q))  # type: ignore[arg-type]
    assert sv.prove_forall(g, timeout=60).proved
    bad = Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, 2 * inp(i, q), assume=assume, care=~P(i, q))  # type: ignore[arg-type]
    assert sv.prove_forall(bad, timeout=60).verdict is sv.Verdict.REFUTED


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(sorted(_SHAPES)), st.integers(1, 3), st.integers(0, 3), st.booleans())
def test_a_care_reading_p_at_a_row_an_offset_assume_reaches_is_refused_exactly_there(shape: str, k: int, row: int,
                                                                                    forbidden: bool) -> None:
    """``assume = P(i + k, q) or i + k ≥ N`` (``not P`` with ``forbidden`` false); ``care``: the cell is row
    ``row`` and ``P`` is false there, in any shape. Vacuous exactly when ``forbidden`` and ``row ≥ k``."""
    app = pred("P", i + k, q)
    assume = (app if forbidden else ~app) | ~lt(i + k, N)
    care = eq(i, row) & _SHAPES[shape](pred("P", i, q))
    g = Gadget("copy", (Param("N", 4, 8),), N, 1, _COPY, inp(i, q), assume=assume, care=care)  # type: ignore[arg-type]
    if forbidden and row >= k:
        with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
            sv.prove_forall(g, timeout=60)
    else:
        assert sv.prove_forall(g, timeout=60).proved


@pytest.mark.parametrize("forbidden", [True, False])
def test_an_assume_reading_the_row_before_reaches_a_care_point_from_the_row_after(forbidden: bool) -> None:
    """``assume = i = 0 or P(i − 1, q)``: ``P`` at every row but the last; its point ``(a, b)`` is read at
    the cell ``(a + 1, b)``, inside the state only for ``a + 1 < N``."""
    app = P(i - 1, q)
    assume = ~lt(0, i) | (app if forbidden else ~app)
    care = lt(i + 1, N) & ~P(i, q)
    for spec, verdict in ((inp(i, q), sv.Verdict.PROVED), (2 * inp(i, q), sv.Verdict.REFUTED)):
        g = Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, spec, assume=assume, care=care)  # type: ignore[arg-type]
        if forbidden:
            with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
                sv.prove_forall(g, timeout=60)
        else:
            assert sv.prove_forall(g, timeout=60).verdict is verdict


@pytest.mark.parametrize("arity", [1, 3])
@pytest.mark.parametrize("forbidden", [True, False])
def test_an_offset_assume_of_another_arity_reaches_the_care_point(arity: int, forbidden: bool) -> None:
    """``assume = P(i + 1)`` (or ``P(i + 1, q, 0)``): ``P`` at every row but the first; ``care`` reads it false
    at a row ``≥ 1``: refused when ``assume`` forbids it, proved otherwise."""
    def app(r: object) -> object:
        return pred("P", r) if arity == 1 else pred("P", r, q, 0)

    assume = (app(i + 1) if forbidden else ~app(i + 1)) | ~lt(i + 1, N)
    g = Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, inp(i, q), assume=assume, care=lt(0, i) & ~app(i))  # type: ignore[arg-type]
    if forbidden:
        with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
            sv.prove_forall(g, timeout=60)
    else:
        assert sv.prove_forall(g, timeout=60).proved


def test_instances_through_an_offset_that_contradict_the_others_are_refused_not_proved() -> None:
    """At ``N = 3`` ``assume`` makes ``P`` true at row 2 (through ``P(i + 1, q)`` at row 1) and false
    there (at row 2 itself): no placement exists at that size. ``care`` reads ``P`` at ``(i + 2, q)``,
    so the identity query takes the instance at ``(i + 1, q)`` reached through the offset; a spec wrong
    only at ``N = 3`` was proved, resting on that contradiction. The vacuity check of the assumptions
    takes the same instances: refused."""
    assume = (P(i + 1, q) | ~lt(i + 1, N)) & (~P(i, q) | ~eq(N, 3) | ~eq(i, 2))
    care = lt(i + 2, N) & (P(i + 2, q) | ~P(i + 2, q))
    spec = inp(i, q) + where(eq(N, 3), inp(i, q), 0)
    g = Gadget("copy", (Param("N", 3, 4),), N, 1, _COPY, spec, assume=assume, care=care)  # type: ignore[arg-type]
    with pytest.raises(ParametricError, match=r"vacuous statement: its assumptions .* hold for no placement .* at \{'N': 3\}"):
        sv.prove_forall(g, timeout=60)
    # from N = 4 on a placement exists (P true from row 1 on) and the spec is right: proved
    ok = Gadget("copy", (Param("N", 4, 5),), N, 1, _COPY, spec, assume=assume, care=care)  # type: ignore[arg-type]
    assert sv.prove_forall(ok, timeout=60).proved


# ``assume`` reaches the point ``care`` reads through an argument unwound step by step: a sum, a
# difference on either side, a product or a quotient by a term reading neither ``i`` nor ``q``; each
# makes ``P`` true at the row ``care`` reads false (``where`` keeps that row inside the state)
_UNWOUND = {  # assume's application, the rows where it must hold (None: every row), care
    "N - 1 - i (a mirror)": (P(N - 1 - i, q), None, ~P(0, q)),
    "2·i": (P(2 * i, q), lt(2 * i, N), ~P(2, q)),
    "i·2, read at a parameter's row": (P(i * 2, q), lt(i * 2, N), ~P(var("K") * 2, q) & lt(var("K") * 2, N)),
    "(i + 1)·1": (P((i + 1) * 1, q), lt(i + 1, N), ~lt(i, 1) & ~P(i, q)),
    "2·(i + 1)": (P(2 * (i + 1), q), lt(2 * (i + 1), N), ~P(4, q)),
    "(i + 2) // 2": (P((i + 2) // 2, q), None, ~P(3, q)),
    "ite(i < 2, i + 1, i)": (P(ite(lt(i, 2), i + 1, i), q), lt(i + 1, N), ~lt(i, 1) & lt(i, 3) & ~P(i, q)),
    "i + q + 1 (q solved from the other argument)": (P(i + q + 1, q), lt(i + q + 1, N), ~lt(i, 1) & ~P(i, q)),
    "i + ite(Z, 1, 1), a predicate in the offset": (P(i + ite(pred("Z"), 1, 1), q), lt(i + 1, N), ~lt(i, 1) & ~P(i, q)),
}


def _unwound(name: str, forbidden: bool, spec: object) -> Gadget:
    """``assume``: ``P`` true (``forbidden``) or false at the point its application reads, where it must hold."""
    app, bound, care = _UNWOUND[name]
    at = app if forbidden else ~app  # type: ignore[operator]
    assume = at if bound is None else at | ~bound  # type: ignore[operator]
    return Gadget("copy", (Param("N", 6, 8), Param("K", 1, 2)), N, 1, _COPY, spec, assume=assume, care=care)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(_UNWOUND))
@pytest.mark.parametrize("spec", ["right", "wrong"])
def test_a_care_assume_forbids_through_an_unwound_argument_is_refused(name: str, spec: str) -> None:
    """Each was proved (its spec right) or unknown (wrong): no instance of ``assume`` was taken at the
    row whose application reaches the point ``care`` reads."""
    g = _unwound(name, True, inp(i, q) if spec == "right" else 2 * inp(i, q))
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(g, timeout=60)


@pytest.mark.parametrize("name", sorted(_UNWOUND))
def test_the_same_care_is_decided_where_assume_allows_it_through_the_unwound_argument(name: str) -> None:
    assert sv.prove_forall(_unwound(name, False, inp(i, q)), timeout=60).proved
    r = sv.prove_forall(_unwound(name, False, 2 * inp(i, q)), timeout=60)
    assert r.verdict is sv.Verdict.REFUTED, r


@pytest.mark.parametrize("app", ["i*0", "0*i"])
def test_an_argument_multiplied_by_zero_is_decided_not_a_crash(app: str) -> None:
    """``P(i·0, q)`` in ``assume`` (a linear gadget: the integer encoding) unwound to ``a // 0`` for the
    point ``P(2, q)`` that ``care`` reads: that instance is undefined, so not asserted, as in the
    bit-vector encoding; the integer encoding raised its internal ``_NotLinearError`` instead."""
    x = {"i*0": i * 0, "0*i": 0 * i}[app]  # type: ignore[operator]
    assume = P(x, q) | ~lt(i, N)  # type: ignore[operator]
    right = Gadget("copy", (Param("N", 6, 8),), N, 1, _COPY, inp(i, q), assume=assume, care=~P(2, q))  # type: ignore[arg-type]
    assert sv.prove_forall(right, timeout=60).proved
    wrong = Gadget("copy", (Param("N", 6, 8),), N, 1, _COPY, 2 * inp(i, q), assume=assume, care=~P(2, q))  # type: ignore[arg-type, operator]
    assert sv.prove_forall(wrong, timeout=60).verdict is sv.Verdict.REFUTED
