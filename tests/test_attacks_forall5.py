"""Adversarial inputs to the all-sizes machinery, fifth round: an ``assume`` contradictory only
across cells or through one point written twice, a product with 0 reading a cell or a family
member outside its range, a tap value read outside its guard, and a refutation that needs a
predicate true at cells no term reads (docs/forall.md §1, §3). The strongest attacks that found
no false proof are kept as regression tests at the end."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.kernel.parametric.concrete import spec_at
from symverify.kernel.parametric.expr import predicates
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

i, q, N, d, s = (var(x) for x in "iqNds")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)


def P(r: object, c: object = q) -> object:
    return pred("P", r, c)  # type: ignore[arg-type]


_ANY = P(i) | ~P(i)  # a care true at every cell, reading P (so the gadget has a predicate)
_NEXT = (i + 1) % N
_ALTERNATE = (P(i) & ~P(_NEXT)) | (~P(i) & P(_NEXT))  # type: ignore[operator]  # P(i) ≠ P(i + 1 mod N)


# ---- vacuous proofs: assume contradictory across cells ------------------------------------------------
def test_an_assume_contradictory_only_across_cells_is_refused_as_vacuous() -> None:
    """``P(i) ≠ P(i + 1 mod N)`` at every cell has no placement at odd ``N`` (an odd cycle), but at
    each cell on its own it holds for some values of its two applications: the vacuity check, which
    read ``assume`` at one cell, passed. A spec wrong only at ``N = 3`` reading rows ``i + 1`` and
    ``i + 2`` put the instances of ``assume`` at three cells closing the cycle into the identity
    query, which was then unsat there: "proved for all N ∈ [1, 10]". The instances the statement
    reads are now required to hold together for some predicate, with two applications at one point
    one value (functional consistency)."""
    spec = inp(i, q) + where(eq(N, 3), inp((i + 1) % N, q) + inp((i + 2) % N, q))
    g = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, spec, assume=_ALTERNATE, care=_ANY)
    with pytest.raises(ParametricError, match=r"vacuous statement: its assumptions .* hold for no placement at cell \(\d+, 0\) at \{'N': [13]\}"):
        sv.prove_forall(g)
    # without N = 1 (where i + 1 mod N is i: one point written twice) only the cycle over three cells is left
    with pytest.raises(ParametricError, match=r"vacuous statement: its assumptions .* hold for no placement at cell \(\d+, 0\) at \{'N': 3\}"):
        sv.prove_forall(g, ranges={"N": (2, 10)})
    for cells in itertools.product((False, True), repeat=3):  # indeed no placement at N = 3
        with pytest.raises(ParametricError, match="the placement violates"):
            instantiate(g, {"N": 3}, placement={"P": {(r, 0) for r in range(3) if cells[r]}})


def test_an_assume_across_cells_is_decided_where_placements_exist() -> None:
    # at even N the alternating placement exists: a true claim is proved, a false one refuted, with a
    # placement completed over every cell (the witness fixes P only at the cells the terms read)
    ps = (Param("N", 2, 10),)
    even = eq(N % 2, 0)
    assert sv.prove_forall(Gadget("g", ps, N, 1, _COPY, inp(i, q), assume=_ALTERNATE, care=_ANY, where=even)).proved
    wrong = Gadget("g", ps, N, 1, _COPY, where(P(i), inp(i, q), 2 * inp(i, q)), assume=_ALTERNATE, care=_ANY, where=even)
    r = sv.prove_forall(wrong)
    assert r.verdict is sv.Verdict.REFUTED and r.params["N"] % 2 == 0, r


@pytest.mark.parametrize("same", ["i + 0", "i * 1", "i + N - N", "(i + N) % N"])
def test_one_point_written_twice_in_assume_is_refused_as_vacuous(same: str) -> None:
    """``i ≠ 0 ∨ (P(i, q) ∧ ¬P(i + 0, q))`` holds for no placement at row 0 (the two applications are
    one point), but the vacuity check took each application as a Boolean of its own: a spec wrong
    only at row 0 was "proved for all N"."""
    other = {"i + 0": i + 0, "i * 1": i * 1, "i + N - N": i + N - N, "(i + N) % N": (i + N) % N}[same]
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, where(eq(i, 0), 2 * inp(i, q), inp(i, q)),
               assume=ne(i, 0) | (P(i) & ~P(other)), care=_ANY)  # type: ignore[operator]
    with pytest.raises(ParametricError, match=r"vacuous statement: its assumptions .* hold for no placement at cell \(0, 0\)"):
        sv.prove_forall(g)


def test_a_where_reading_a_predicate_that_assume_forbids_is_refused_as_vacuous() -> None:
    """``where = P(0, 0)`` with ``assume = ¬P(i, q)``: no placement satisfies both, at any size. The
    identity query read ``where`` and the instance of ``assume`` at the cell ``(0, 0)`` together, so
    that cell dropped out of it and a spec wrong only there was "proved for all N"; the vacuity
    check read ``assume`` alone (every predicate false satisfies it). It now reads the conditions on
    the predicates together."""
    g = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, where(eq(i, 0) & eq(q, 0), 2 * inp(i, q), inp(i, q)),
               where=P(0, 0), assume=~P(i))  # type: ignore[arg-type, operator]
    with pytest.raises(ParametricError, match=r"hold for no placement at cell \(0, 0\) .* with its condition P\(0, 0\)"):
        sv.prove_forall(g)
    with pytest.raises(ParametricError, match="the placement violates"):
        instantiate(g, {"N": 3}, placement={"P": {(0, 0)}})
    # where P(0, 0) and assume ¬P(i, q) off row 0: a placement exists, and the wrong spec is refuted
    fine = Gadget("g", g.params, N, 1, _COPY, g.spec, where=P(0, 0), assume=eq(i, 0) | ~P(i))  # type: ignore[arg-type, operator]
    assert sv.prove_forall(fine).verdict is sv.Verdict.REFUTED


def test_a_narrowed_range_decides_the_vacuity_of_its_own_sizes() -> None:
    # no placement at N = 1 only (the point written twice): refused over [1, 10] and over [1, 1],
    # decided over [2, 10], where placements exist
    assume = ne(N, 1) | (P(i) & ~P(i + 0))  # type: ignore[operator]
    g = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, inp(i, q), assume=assume, care=_ANY)
    with pytest.raises(ParametricError, match=r"hold for no placement at cell \(0, 0\) at \{'N': 1\}"):
        sv.prove_forall(g)
    with pytest.raises(ParametricError, match="hold for no placement"):  # at every size left: found at once
        sv.prove_forall(g, ranges={"N": (1, 1)})
    assert sv.prove_forall(g, ranges={"N": (2, 10)}).proved
    wrong = Gadget("g", g.params, N, 1, _COPY, where(eq(i, 0), 2 * inp(i, q), inp(i, q)), assume=assume, care=_ANY)
    assert sv.prove_forall(wrong, ranges={"N": (2, 10)}).verdict is sv.Verdict.REFUTED


# ---- obligations and evaluation agree on a product with 0 -----------------------------------------------
def test_a_spec_cell_read_in_a_product_with_zero_must_be_inside_the_state() -> None:
    """``inp(i + N, q) * 0`` has no term (its value is 0), so no in-range obligation, but evaluating
    the spec reads the cell: "proved for all N", then ``spec_at`` on a state stored as a list raised
    ``IndexError`` from the user's code. Every atom the evaluation reads is now range-checked; a
    product whose left factor is 0 does not read its right one (``0 * inp(i + N, q)``)."""
    g = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, inp(i, q) + inp(i + N, q) * 0)
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*spec: input cell \(\(i \+ N\), q\) inside the N×1 state"):
        sv.prove_forall(g)
    ok = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, inp(i, q) + 0 * inp(i + N, q))
    assert sv.prove_forall(ok).proved
    grid = [[5], [6], [7]]
    assert spec_at(ok, {"N": 3}, 2, 0, lambda r, c: grid[r][c]) == 7
    # the cell is read only where entry holds there: a read outside the state where entry is false is 0
    fenced = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, inp(i, q) + inp(i + N, q) * 0, entry=lt(i, N))
    assert sv.prove_forall(fenced).proved
    assert spec_at(fenced, {"N": 3}, 1, 0, lambda r, c: grid[r][c]) == 6


@pytest.mark.parametrize("where_", ["b1", "b2", "tap", "spec"])
def test_a_family_member_read_in_a_product_with_zero_must_be_inside_its_size(where_: str) -> None:
    """``fam("B", N) * 0`` with ``B`` declared of size ``N``: no obligation, "proved", while
    ``instantiate`` calls the family's callable at ``N`` (a list-backed one raised): it now refuses the
    member outside the declared size before any call."""
    extra = fam("B", N) * 0
    b1 = 1 + extra if where_ == "b1" else 1
    b2 = extra if where_ == "b2" else 0
    h = (tap(0, 1 + extra),) if where_ == "tap" else (tap(0),)
    spec = inp(i, q) + (extra if where_ == "spec" else 0)
    g = Gadget("g", (Param("N", 1, 10),), N, 1, (PLayer(b1=b1, h=h, b2=b2, mode="causal"),), spec, families={"B": (N,)})
    with pytest.raises(ParametricError, match=r"family index B\[N\] below its size N"):
        sv.prove_forall(g)
    if where_ != "spec":
        with pytest.raises(ParametricError, match=r"family B read at \(4,\), outside its declared size \(4,\)"):
            instantiate(g, {"N": 4}, families={"B": lambda p: [1, 2, 3, 4][p]})


def test_a_tap_value_is_range_checked_only_where_its_guard_holds() -> None:
    """A tap's value is evaluated only on the channels where its guard holds, but its family
    indices were required in range on every channel: ``tap(0, B[q − 1], guard=q ≥ 1)`` was refused
    at channel 0, where it is never read."""
    layers = (PLayer(b1=1, h=(tap(0, fam("B", q - 1), guard=ge(q, 1)),), mode="causal"),)
    ps = (Param("N", 1, 10), Param("d", 1, 10))
    spec = where(ge(q, 1), fam("B", q - 1) * inp(i, q))
    g = Gadget("g", ps, N, d, layers, spec, families={"B": (d - 1,)})
    assert sv.prove_forall(g).proved
    (layer,) = instantiate(g, {"N": 2, "d": 3}, families={"B": lambda p: [7, 8][p]})
    assert layer.h.to_rows() == [[0, 7, 8], [0, 0, 0]]
    wrong = Gadget("g", ps, N, d, layers, where(ge(q, 1), fam("B", q - 1) * inp(i, q) * 2), families={"B": (d - 1,)})
    assert sv.prove_forall(wrong).verdict is sv.Verdict.REFUTED
    short = Gadget("g", ps, N, d, layers, spec, families={"B": (d - 2 + 0 * N,)}, where=ge(d, 2))
    with pytest.raises(ParametricError, match=r"layer 0 tap value: family index B\[\(q - 1\)\] below its size"):
        sv.prove_forall(short)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 3), st.booleans(), st.booleans())
def test_a_read_is_checked_exactly_where_evaluation_makes_it(k: int, zero_left: bool, guarded: bool) -> None:
    """Random placements of a read of row ``i + k`` in a product with 0: refused exactly when
    evaluation reads it outside the state at some size (``k ≥ 1``, the read not behind a 0 on its
    left, nor behind a guard ``i + k < N``), else proved; and ``spec_at`` on a list-backed state
    never raises where the gadget is proved."""
    read = inp(i + k, q)
    zero = 0 * read if zero_left else read * 0
    extra = where(lt(i + k, N), zero) if guarded else zero
    g = Gadget("g", (Param("N", 1, 6),), N, 1, _COPY, inp(i, q) + extra)
    reads_outside = k >= 1 and not zero_left and not guarded
    if reads_outside:
        with pytest.raises(ParametricError, match="input cell"):
            sv.prove_forall(g)
        return
    assert sv.prove_forall(g).proved
    for n in range(1, 7):
        grid = [[10 + r] for r in range(n)]
        for r in range(n):
            assert spec_at(g, {"N": n}, r, 0, lambda a, b, grid=grid: grid[a][b]) == 10 + r


# ---- a refutation needing predicates true at cells no term reads -----------------------------------
def test_a_refutation_needing_a_predicate_true_at_every_cell_is_confirmed() -> None:
    """``assume = P ∨ Q`` at every cell: z3's witness fixes ``P`` and ``Q`` only at the cells the
    terms read, and the placement "false elsewhere" violates ``assume``, so a false claim ended
    ``unknown``. The witness is now completed over the instance's cells by one SAT query and the
    completion re-checked exactly."""
    pq = P(i) | pred("Q", i, q)  # type: ignore[operator]
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, where(P(i), inp(i, q), 2 * inp(i, q)), assume=pq, care=_ANY)
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED and r.cell is not None, r
    # the refutation is real: with Q everywhere and P nowhere, the claim fails at every cell
    n = r.params["N"]
    with predicates({"P": lambda *a: False, "Q": lambda *a: True}):
        assert spec_at(g, r.params, r.cell[0], 0, lambda a, b: 1) == 2
    (layer,) = instantiate(g, {"N": n}, placement={"P": set(), "Q": {(x, 0) for x in range(n)}})
    assert layer.h.to_rows()[0] == [1]


def test_a_completion_never_changes_what_the_witness_read() -> None:
    # P must be true at exactly one row in every pair (i, i + 1 mod N), at odd N too where no placement
    # exists: the claim wrong only at odd N has no placement to complete: never refuted, never proved
    spec = where(eq(N % 2, 1), 2 * inp(i, q), inp(i, q))
    g = Gadget("g", (Param("N", 2, 9),), N, 1, _COPY, spec, assume=_ALTERNATE, care=_ANY)
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.UNKNOWN and "could not be confirmed" in r.detail, r


# ---- attacks that found no false proof (regressions) ---------------------------------------------------
@pytest.mark.parametrize("bv", [False, True])
def test_a_witness_above_2_63_is_read_back_unsigned(bv: bool) -> None:
    # a claim false only at s ≥ 2^63 + 7: the parameter is read back as the unsigned value (integer
    # and 64-bit encodings), and the instance at that value confirms it
    sx = s ^ 0 if bv else s
    g = Gadget("g", (Param("s", 0, 2**64 - 1),), 4, 1, _COPY, where(lt(sx, 2**63 + 7), inp(i, q), 2 * inp(i, q)))
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED and 2**63 + 7 <= r.params["s"] < 2**64, r
    assert r.stats["encoding"].startswith("bv64" if bv else "int"), r.stats


def test_no_verdict_is_carried_from_one_call_to_the_next() -> None:
    # the same gadget object: narrowed to where it holds, over the whole range, with a budget too
    # short to decide, then again with time: each call decides its own statement
    g = Gadget("g", (Param("N", 1, 2**40),), N ^ 0, 1, _COPY, where(lt(N, 2**20), inp(i, q), 2 * inp(i, q)))
    assert sv.prove_forall(g, ranges={"N": (1, 2**20 - 1)}).proved
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED and r.params["N"] >= 2**20, r
    assert sv.prove_forall(g, ranges={"N": (1, 2**20 - 1)}).proved
    assert sv.prove_forall(g, timeout=1e-9).verdict is sv.Verdict.UNKNOWN
    assert sv.prove_forall(g, ranges={"N": (2**20, 2**21)}).verdict is sv.Verdict.REFUTED


def test_a_parameter_shared_by_where_and_a_family_size() -> None:
    # B has s members, s < N: read under i < s it is inside; under i ≤ s it is read at s, outside
    ps = (Param("N", 1, 2**30), Param("s", 0, 2**30))
    layers = (PLayer(b1=where(lt(i, s), fam("B", i), 1), h=(tap(0),), mode="causal"),)
    g = Gadget("g", ps, N, 1, layers, where(lt(i, s), fam("B", i) * inp(i, q), inp(i, q)), where=lt(s, N), families={"B": (s,)})
    assert sv.prove_forall(g).proved
    off = Gadget("g", ps, N, 1, (PLayer(b1=where(lt(i, s + 1), fam("B", i), 1), h=(tap(0),), mode="causal"),),
                 where(lt(i, s + 1), fam("B", i) * inp(i, q), inp(i, q)), where=lt(s, N), families={"B": (s,)})
    with pytest.raises(ParametricError, match=r"family index B\[i\] below its size s"):
        sv.prove_forall(off)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.booleans())
def test_distinct_nodes_equal_in_value_never_share_a_memo_entry(a: int, b: int, same_node: bool) -> None:
    """``IExpr.eval`` memoises by node identity within one call: two applications of one predicate at
    different points, or one node shared, each read at their own point, and a second call reads
    afresh (a placement changed between calls is seen)."""
    x = ite(pred("P", var("a")), var("a"), var("b"))
    y = x if same_node else ite(pred("P", var("b")), var("a"), var("b"))
    c = eq(x + y, var("a") + var("b"))
    for truth in ({a}, {b}, set(), {a, b}):
        with predicates({"P": lambda p, t=truth: p in t}):  # type: ignore[misc]
            vx = a if a in truth else b
            vy = vx if same_node else (a if b in truth else b)
            assert (x + y).eval({"a": a, "b": b}) == vx + vy
            assert c.eval({"a": a, "b": b}) is (vx + vy == a + b)


def _offset(k: int) -> object:
    return [i, (i + 1) % N, i + 0, (i + N - 1) % N, i * 1][k]


_ATOM = st.builds(lambda name, k, neg: ~pred(name, _offset(k), q) if neg else pred(name, _offset(k), q),
                  st.sampled_from("PQ"), st.integers(0, 4), st.booleans())
_LEAF = _ATOM | st.builds(lambda k: ne(i, k), st.integers(0, 3)) | st.builds(lambda k: lt(i, k), st.integers(0, 4))
_FORMULA = st.recursive(_LEAF, lambda f: st.builds(lambda a, b, conj: a & b if conj else a | b, f, f, st.booleans()), max_leaves=6)


@settings(max_examples=40, deadline=None)
@given(_FORMULA, _FORMULA, st.integers(1, 4))
def test_verdicts_with_placements_agree_with_every_placement_of_small_sizes(assume: object, guard: object, wrong_at: int) -> None:
    """Random ``assume`` over two predicates read at shifted rows (one point written several ways), a
    spec wrong at one size under a random guard: every placement of every size ``N ≤ 4`` decides the
    claim. Proved: no placement satisfying ``assume`` everywhere has a difference; refuted: one has;
    refused as vacuous: some size has no placement at all."""
    bad = guard & eq(N, wrong_at)  # type: ignore[operator]
    g = Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, where(bad, 2 * inp(i, q), inp(i, q)), assume=assume,  # type: ignore[arg-type]
               care=P(i) | ~P(i) | pred("Q", i, q))  # type: ignore[operator]
    differs, empty = False, False
    for n in range(1, 5):
        placed = False
        for bits in itertools.product((False, True), repeat=2 * n):
            sets = {"P": {(r, 0) for r in range(n) if bits[r]}, "Q": {(r, 0) for r in range(n) if bits[n + r]}}
            with predicates({k: (lambda *a, c=c: a in c) for k, c in sets.items()}):
                if not all(assume.eval({"N": n, "i": r, "q": 0}) for r in range(n)):  # type: ignore[attr-defined]
                    continue
                placed = True
                differs |= any(bad.eval({"N": n, "i": r, "q": 0}) for r in range(n))
        empty |= not placed
    try:
        r = sv.prove_forall(g, timeout=30)
    except ParametricError as e:
        assert "no placement" in str(e) and empty, e
        return
    assert r.verdict is not sv.Verdict.PROVED or not differs, r
    assert r.verdict is not sv.Verdict.REFUTED or differs, r
