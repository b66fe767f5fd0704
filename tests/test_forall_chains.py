"""A ``care`` (or ``entry``) that ``assume`` forbids only through a chain of its instances is never
proved. The existence checks take the instances of ``assume`` at the cells the statement reads and
at the cells reaching its points, one level deep; ``assume = (Q(i, q) ∨ ¬P(i, q)) ∧ (P(i + 1, q) ∨
i + 1 ≥ N)`` forces ``P``, hence ``Q``, at every row from 1 on, yet those instances allow
``care = (i ≥ 1) ∧ ¬Q(i, q)``, and the statement about no placement was proved. A proof now needs a
placement satisfying ``assume`` at **every** cell of some state, with ``care`` (and ``entry``) at a
cell: completed cell by cell at small sizes, or a constant placement changed at the points read,
at any size; where none is found the verdict is unknown, naming the predicates (docs/forall.md §3)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.parametric import Gadget, Param, ParametricError, PLayer, eq, ge, inp, ite, ne, pred, tap, var

i, q, N = var("i"), var("q"), var("N")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)  # output cell = input cell


def P(*a: object) -> Any:
    return pred("P", *a)


def Q(*a: object) -> Any:
    return pred("Q", *a)


def R(*a: object) -> Any:
    return pred("R", *a)


def _copy(assume: object, care: object = None, lo: int = 2, hi: int = 8, spec: object = None, **kw: object) -> Gadget:
    """``y = u`` on ``lo ≤ N ≤ hi`` rows, one channel."""
    more = {"care": care} if care is not None else {}
    return Gadget("copy", (Param("N", lo, hi),), N, 1, _COPY, inp(i, q) if spec is None else spec,  # type: ignore[arg-type]
                  assume=assume, **more, **kw)  # type: ignore[arg-type]


_DOC = (Q(i, q) | ~P(i, q)) & (P(i + 1, q) | ge(i + 1, N))
# each: (assume, care, least N); every one was proved before, about no placement at all
_CHAINS = {
    "the documented example": (_DOC, ge(i, 1) & ~Q(i, q), 2),
    "P → Q → R, P forced through i + 1": (
        (Q(i, q) | ~P(i, q)) & (R(i, q) | ~Q(i, q)) & (P(i + 1, q) | ge(i + 1, N)), ge(i, 1) & ~R(i, q), 2),
    "P → Q through i + 1, Q → R through i + 2": (
        (ge(i + 1, N) | Q(i + 1, q) | ~P(i, q)) & (ge(i + 2, N) | R(i + 2, q) | ~Q(i, q)) & P(i, q), ge(i, 3) & ~R(i, q), 4),
    "P(i − 1) → P(i) from P(0)": ((ne(i, 0) | P(i, q)) & (eq(i, 0) | ~P(i - 1, q) | P(i, q)), ge(i, 2) & ~P(i, q), 3),
    "cyclic: P(i) → P((i + 1) mod N) from P(0)": ((ne(i, 0) | P(i, q)) & (~P(i, q) | P((i + 1) % N, q)), eq(i, 2) & ~P(i, q), 3),
    "cyclic through two predicates": (
        (ne(i, 0) | P(i, q)) & (~P(i, q) | Q((i + 1) % N, q)) & (~Q(i, q) | P((i + 1) % N, q)), eq(i, 2) & ~P(i, q), 3),
    "P(i) of one argument → Q(i, 0) of two": ((Q(i, 0) | ~P(i)) & (P(i + 1) | ge(i + 1, N)), ge(i, 1) & ~Q(i, 0), 2),
    "P(i) of one argument → Q(i, 0, 1) of three": ((Q(i, 0, 1) | ~P(i)) & (P(i + 1) | ge(i + 1, N)), ge(i, 1) & ~Q(i, 0, 1), 2),
    "read inside index expressions": ((ge(i + 1, N) | P(i + 1, q)) & (eq(ite(P(i, q), 1, 0), 1) | ~Q(i, q)) & (Q(i, q) | ~P(i, q)),
                                      ge(i, 1) & eq(ite(Q(i, q), 1, 0), 0), 2),
}


@pytest.mark.parametrize("hi", [8, 2**40])
@pytest.mark.parametrize("name", sorted(_CHAINS))
def test_a_care_a_chain_of_instances_forbids_is_unknown_not_proved(name: str, hi: int) -> None:
    assume, care, lo = _CHAINS[name]
    r = sv.prove_forall(_copy(assume, care, lo=lo, hi=hi), timeout=120)
    assert r.verdict is sv.Verdict.UNKNOWN, r
    names = ", ".join(sorted(_copy(assume, care, lo=lo).predicate_names))
    assert f"no placement of {names} satisfying assume" in r.detail, r.detail
    assert "at every cell with care" in r.detail and "never proved" in r.detail, r.detail


@pytest.mark.parametrize("name", sorted(_CHAINS))
def test_a_wrong_spec_at_such_a_care_is_not_refuted_either(name: str) -> None:
    """No placement has a cell with ``care``: no counterexample exists, and none is reported."""
    assume, care, lo = _CHAINS[name]
    r = sv.prove_forall(_copy(assume, care, lo=lo, spec=2 * inp(i, q)), timeout=120)
    assert r.verdict is sv.Verdict.UNKNOWN, r


def test_a_where_a_chain_of_instances_forbids_is_unknown_not_proved() -> None:
    """``where = P(0, 0)``: ``P`` at a row forces ``Q`` at the next, which ``assume`` forbids everywhere, so
    no placement satisfies ``where`` at any size (``P(0, 0) → Q(1, 0)``, and ``¬Q(1, 0)``)."""
    r = sv.prove_forall(_copy((~P(i, q) | ge(i + 1, N) | Q(i + 1, q)) & ~Q(i, q), lo=4, where=P(0, 0)), timeout=120)
    assert r.verdict is sv.Verdict.UNKNOWN and "no placement of P, Q" in r.detail, r


def test_an_entry_a_chain_of_instances_forbids_is_unknown_not_proved() -> None:
    r = sv.prove_forall(_copy(_DOC, ge(i, 0), entry=ge(i, 1) & ~Q(i, q)), timeout=120)
    assert r.verdict is sv.Verdict.UNKNOWN, r
    assert "at every cell with entry" in r.detail, r.detail


@pytest.mark.parametrize("ranges", [None, {"N": (2**20, 2**40)}])
@pytest.mark.parametrize("care", [ge(i, 1) & Q(i, q), eq(i, 0) & ~Q(i, q), eq(i, 0) & ~P(i, q) & ~Q(i, q)],
                         ids=["Q at a row from 1 on", "not Q at row 0", "neither at row 0"])
def test_a_care_some_placement_allows_is_proved_at_any_size(care: Any, ranges: Any) -> None:
    """The same ``assume`` with a ``care`` that a placement allows: proved, also where every size is
    far beyond the cell-by-cell completion (``N ≥ 2^20``: a constant placement changed at the points read)."""
    r = sv.prove_forall(_copy(_DOC, care, hi=2**40), ranges=ranges, timeout=120)
    assert r.proved, r
    assert "placement" in r.stats["timings"], r.stats


def test_a_placement_found_only_by_completing_every_cell_is_proved() -> None:
    """``P`` alternates along the rows from ``P(0)`` (no constant placement changed at a few points
    satisfies it); at ``N ≤ 64`` the table of every cell is completed."""
    assume = (ne(i, 0) | P(i, q)) & (ge(i + 1, N) | P(i, q) | P(i + 1, q)) & (ge(i + 1, N) | ~P(i, q) | ~P(i + 1, q))
    r = sv.prove_forall(_copy(assume, eq(i, 3) & ~P(i, q), lo=4, hi=2**40), timeout=120)
    assert r.proved, r
    # beyond 64 rows no completion is tried: unknown, never proved
    r = sv.prove_forall(_copy(assume, eq(i, 3) & ~P(i, q), lo=4, hi=2**40), ranges={"N": (100, 2**40)}, timeout=120)
    assert r.verdict is sv.Verdict.UNKNOWN and "no placement of P" in r.detail, r


# --- random chains over the rows, against every placement of small states -------------------------

_LIT = st.tuples(st.sampled_from("PQ"), st.sampled_from([-1, 0, 1, "mod"]), st.booleans())


def _lit(name: str, off: object, pos: bool) -> tuple[Any, Any]:
    """A literal ``[¬]name(row, q)`` at the row ``i + off`` (``(i + 1) mod N`` for ``mod``), with the
    condition under which its row is outside ``[0, N)`` (the clause then holds: guarded, so defined)."""
    row = {-1: i - 1, 0: i, 1: i + 1, "mod": (i + 1) % N}[off]  # type: ignore[index]
    out = {-1: eq(i, 0), 0: None, 1: ge(i + 1, N), "mod": None}[off]  # type: ignore[index]
    a = pred(name, row, q)
    return (a if pos else ~a), out


def _row(r: int, off: object, n: int) -> int | None:
    x = {-1: r - 1, 0: r, 1: r + 1}.get(off, (r + 1) % n)  # type: ignore[call-overload]
    return x if 0 <= x < n else None


_NAME = st.sampled_from("PQ")
_STEP = st.tuples(_NAME, st.booleans(), _NAME, st.sampled_from([-1, 0, 1, "mod"]), st.booleans()).map(
    lambda t: ((t[0], 0, not t[1]), (t[2], t[3], t[4])))  # a(i) → b(row at the offset), each of either sign
_CLAUSES = st.tuples(st.lists(_STEP, min_size=1, max_size=3), st.lists(st.tuples(_LIT, _LIT), max_size=1)).map(lambda t: t[0] + t[1])
_UNITS = st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 3)), _NAME, st.booleans()), min_size=1, max_size=2)


@settings(max_examples=100, deadline=None)
@given(_CLAUSES, st.tuples(_NAME, st.booleans()), st.integers(0, 3), st.booleans(), _UNITS)
def test_random_chains_are_proved_exactly_where_a_placement_allows_care(
        clauses: list[Any], care_lit: tuple[str, bool], k: int, from_k: bool, units: list[Any]) -> None:
    """``assume`` a conjunction of implications from a row to rows ``i − 1``, ``i``, ``i + 1`` and
    ``(i + 1) mod N`` (chains), a clause or none, and units fixing a predicate at one row or every row
    (the chains' starts), ``care`` a literal at rows ``≥ k`` (or
    ``= k``), ``N ∈ [4, 6]``: an oracle enumerating every placement of every state says whether some
    placement satisfies ``assume`` at every cell with ``care`` at a cell. Where none does, the statement
    is never proved (unknown, or refused as vacuous); where one does, it is proved (the states are
    small enough to complete cell by cell)."""
    lo, hi = 4, 6
    parts = []
    for (a, b) in clauses:
        la, oa = _lit(*a)
        lb, ob = _lit(*b)
        guards = [x for x in (oa, ob) if x is not None]  # first: a row outside the state is never read
        clause = la | lb
        for x in reversed(guards):
            clause = x | clause
        parts.append(clause)
    for (row, name, pos) in units:  # the predicate fixed at one row (at every row: None)
        unit = pred(name, i, q) if pos else ~pred(name, i, q)
        parts.append(unit if row is None else ne(i, row) | unit)
    assume = parts[0]
    for x in parts[1:]:
        assume = assume & x
    cl = pred(care_lit[0], i, q) if care_lit[1] else ~pred(care_lit[0], i, q)
    care = (ge(i, k) if from_k else eq(i, k)) & cl

    def holds(lit: Any, r: int, n: int, table: dict[str, list[bool]]) -> bool:
        name, off, pos = lit
        x = _row(r, off, n)
        return True if x is None else table[name][x] == pos

    exists = False
    for n in range(lo, hi + 1):
        for bits in itertools.product([False, True], repeat=2 * n):
            table = {"P": list(bits[:n]), "Q": list(bits[n:])}
            ok = all(all(holds(a, r, n, table) or holds(b, r, n, table) for a, b in clauses)
                     and all(row not in (None, r) or table[name][r] == pos for row, name, pos in units) for r in range(n))
            if ok and any((r >= k if from_k else r == k) and table[care_lit[0]][r] == care_lit[1] for r in range(n)):
                exists = True
                break
        if exists:
            break
    g = _copy(assume, care, lo=lo, hi=hi)
    try:
        r = sv.prove_forall(g, timeout=120)
        event(f"placement exists: {exists}; {r.verdict.name}")
    except ParametricError as e:  # a refusal is never a proof; it is right only where nothing exists
        event(f"placement exists: {exists}; refused")
        assert "vacuous" in str(e) or "hold for no placement" in str(e), e
        assert not exists or "hold for no placement" in str(e), e
        return
    if exists:
        assert r.proved, (assume, care, r)
    else:
        assert r.verdict is sv.Verdict.UNKNOWN, (assume, care, r)
