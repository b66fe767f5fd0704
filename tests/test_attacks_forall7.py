"""Adversarial inputs to the all-sizes machinery, seventh round: hypotheses (``entry``, ``assume``)
that restrict a proof without showing in its verdict, an ``entry`` true at no cell (a statement about
the zero input only), a sealed verdict relabelled after it was made, an ``assume`` whose own
definedness was checked with itself as a premise, and a set placement of the bulk evaluator's own
type taken unchecked (docs/forall.md §1, §3). The differential attack on ``instantiate`` (one gadget
at several sizes and placements in a row, against cell-by-cell evaluation) found nothing and is kept
as a regression test."""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import ProverError
from symverify.kernel.parametric.concrete import eval_value
from symverify.kernel.parametric.expr import TRUE, predicates
from symverify.kernel.provers.outcome import is_sealed
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    bit,
    eq,
    fam,
    ge,
    inp,
    instantiate,
    ite,
    le,
    lt,
    ne,
    pred,
    tap,
    var,
    where,
)
from symverify.scripts.instances import forall_instance
from symverify.scripts.protocol import Instance

i, q, N, a = (var(x) for x in "iqNa")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)


# ---- the hypotheses are part of the printed statement ---------------------------------------------------
def test_an_entry_true_at_no_cell_is_refused_as_vacuous() -> None:
    """``entry = i < 0`` lets no input cell be nonzero: the statement is about the zero input only, and
    any linear spec (here twice the input) was "proved for all N ∈ [1, 2^40]", printed as if every input
    were meant. It is refused as vacuous, as a ``care`` true at no cell is."""
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, 2 * inp(i, q), entry=lt(i, 0))
    with pytest.raises(ParametricError, match=r"vacuous statement: .*entry i < 0 holds at no cell.*zero input"):
        sv.prove_forall(g)


def test_an_entry_is_printed_with_the_verdict() -> None:
    """``entry = i < a`` with ``a ∈ [0, 3]``: at ``a = 0`` no input cell may be nonzero (there the claim is
    about the zero input only: the output is twice the spec there, which ``0 = 0`` cannot see). The verdict
    now says which inputs it is about, in its text and in the detail of its proof-script row; the row's
    name (the ranges) is unchanged."""
    ps = (Param("N", 4, 8), Param("a", 0, 3))
    g = Gadget("g", ps, N, 1, _COPY, inp(i, q), entry=lt(i, a))
    r = sv.prove_forall(g)
    assert r.proved and r.ranges == "N ∈ [4, 8], a ∈ [0, 3]", r
    assert r.hypotheses == "input nonzero only where i < a", r
    assert "proved for all N ∈ [4, 8], a ∈ [0, 3], given input nonzero only where i < a" in str(r), r
    assert "input nonzero only where i < a" in repr(r)
    row = forall_instance(g)
    assert row.name == "∀ g: N ∈ [4, 8], a ∈ [0, 3]" and row.detail == "given input nonzero only where i < a", row
    plain = sv.prove_forall(Gadget("g", ps, N, 1, _COPY, inp(i, q)))
    assert plain.hypotheses == "" and "given" not in str(plain) and forall_instance(Gadget("g", ps, N, 1, _COPY, inp(i, q))).detail == ""


def test_an_assume_is_printed_with_the_verdict() -> None:
    """``b1 = [P]``, ``assume = P``: the copy is proved only for the placements with ``P`` at every cell;
    the verdict read "proved for all N" with no word of it."""
    p = pred("P", i, q)
    g = Gadget("g", (Param("N", 1, 8),), N, 1, (PLayer(b1=where(p, 1, 0), h=(tap(0),), mode="causal"),), inp(i, q), assume=p)
    r = sv.prove_forall(g)
    assert r.proved and r.hypotheses == "a placement with P(i, q) at every cell", r
    assert str(r).startswith("g: proved for all N ∈ [1, 8], given a placement with P(i, q) at every cell ("), r
    both = Gadget("g", (Param("N", 1, 8),), N, 1, g.layers, inp(i, q), entry=lt(i, 5), assume=p)
    assert sv.prove_forall(both).hypotheses == "input nonzero only where i < 5 and a placement with P(i, q) at every cell"


# ---- the seal binds the statement ----------------------------------------------------------------------
def test_a_relabelled_forall_result_is_not_sealed() -> None:
    """A ``ForallResult``'s seal bound its class, verdict and method only: the proof of ``N ∈ [1, 4]``
    with its ``ranges`` (or gadget name) rewritten to ``N ∈ [1, 2^40]`` still passed ``is_sealed`` and
    ``Instance.from_report`` put it in a table as proved. The statement (gadget, ranges, hypotheses) and
    a refutation's counterexample (parameters, cell, detail) are now bound into the seal."""
    g = Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, inp(i, q))
    r = sv.prove_forall(g)
    assert is_sealed(r) and Instance.from_report("∀ g: N ∈ [1, 4]", r).verdict is sv.Verdict.PROVED
    for name, value in (("ranges", "N ∈ [1, 2^40]"), ("gadget", "other"), ("hypotheses", "")):
        forged = copy.copy(r)
        object.__setattr__(forged, name, value if value != getattr(r, name) else "x")
        assert not is_sealed(forged), name
        with pytest.raises(ProverError, match=r"ForallResult \(proved\) was not made by its prover"):
            Instance.from_report("∀ g: N ∈ [1, 2^40]", forged)
    bad = sv.prove_forall(Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, 2 * inp(i, q)))
    assert bad.verdict is sv.Verdict.REFUTED and is_sealed(bad)
    bad.params["N"] = 3  # the mapping is mutable: the counterexample a table would show changed
    assert not is_sealed(bad)


# ---- assume's definedness, both encodings ----------------------------------------------------------------
@pytest.mark.parametrize("linear", [True, False])
def test_an_assume_undefined_where_its_predicate_is_false_is_refused_by_both_encodings(linear: bool) -> None:
    """``assume = P ∨ N < i − 1``: at ``i = 0`` with ``P`` false, ``i − 1`` is undefined, and ``instantiate``
    (which evaluates ``assume`` at every cell) raises there. Its definedness was checked with ``assume``
    itself as a premise: the integer encoding read ``N < −1`` as false, so the premise forced ``P`` and the
    gadget was proved; the bit-vector encoding (``i ^ 0`` leaves the linear fragment) wrapped ``i − 1`` and
    refused it. Both now refuse it."""
    p = pred("P", i, q)
    row = i if linear else i ^ 0
    g = Gadget("g", (Param("N", 1, 8),), N, 1, _COPY, inp(row, q), assume=p | lt(N, i - 1))
    with pytest.raises(ParametricError, match=r"undefined or out of range at \{'N': \d+, 'i': 0, 'q': 0\}: assume \(P\(i, q\) or N < \(i - 1\)\)"):
        sv.prove_forall(g)
    with pytest.raises(ParametricError, match=r"i - 1"):
        instantiate(g, {"N": 2}, placement={"P": set()})


# ---- regressions: attacks that found nothing -----------------------------------------------------------
_D, _S = var("D"), var("s")


def _ix(draw: st.DrawFn, depth: int = 0) -> object:
    kinds = ["lit", "var", "i"] + (["add", "ite", "mod", "sub", "xor"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "lit":
        return draw(st.integers(0, 5))
    if kind == "var":
        return draw(st.sampled_from([q, N, _D, _S]))
    if kind == "i":
        return i
    if kind == "add":
        return _ix(draw, depth + 1) + _ix(draw, depth + 1)
    if kind == "ite":
        return ite(_cond(draw, depth + 1), _ix(draw, depth + 1), _ix(draw, depth + 1))
    if kind == "mod":
        return (_ix(draw, depth + 1) + 1) % draw(st.sampled_from([N, _D, 3]))
    if kind == "sub":
        return draw(st.sampled_from([N, _S, i])) - draw(st.sampled_from([i, _S, 1, q]))
    return _ix(draw, depth + 1) ^ draw(st.integers(0, 3))


def _cond(draw: st.DrawFn, depth: int = 0) -> object:
    kinds = ["cmp_cell", "cut_pred", "cut_pred", "pred2", "pred1", "cmp", "bit"] + (["and", "or", "not"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "cut_pred":  # a cut point the placement decides (a memo keyed without it painted the wrong blocks)
        at = ite(pred("P", draw(st.sampled_from([_S, 0])), 0), draw(st.sampled_from([1, 2, 9])), draw(st.sampled_from([5, 15])))
        return draw(st.sampled_from([lt, eq, ge]))(draw(st.sampled_from([i, q])), at)
    if kind == "cmp_cell":
        return draw(st.sampled_from([lt, le, eq, ne, ge]))(draw(st.sampled_from([i, q])), _ix(draw, depth + 1))
    if kind == "pred2":
        return pred("P", draw(st.sampled_from([i, q, i + 1, 0, _S])), draw(st.sampled_from([q, 0, i % _D])))
    if kind == "pred1":
        return pred("Q", draw(st.sampled_from([i, _S, q, i // 2])))
    if kind == "cmp":
        return draw(st.sampled_from([lt, eq]))(_ix(draw, depth + 1), _ix(draw, depth + 1))
    if kind == "bit":
        return bit(draw(st.sampled_from([i, q, i + _S])), draw(st.integers(0, 2)))
    if kind == "not":
        return ~_cond(draw, depth + 1)
    a, b = _cond(draw, depth + 1), _cond(draw, depth + 1)
    return a & b if kind == "and" else a | b


def _val(draw: st.DrawFn, depth: int = 0) -> object:
    kinds = ["num", "fam", "where"] + (["add", "mul", "ifv"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "num":
        return draw(st.integers(-2, 3))
    if kind == "fam":
        return fam("B", draw(st.sampled_from([i, q, _S, i % 3])))
    if kind == "where":
        return where(_cond(draw, depth + 1), draw(st.integers(1, 3)), draw(st.sampled_from([0, 2])))
    if kind == "add":
        return _val(draw, depth + 1) + _val(draw, depth + 1)
    if kind == "mul":
        return _val(draw, depth + 1) * _val(draw, depth + 1)
    return where(_cond(draw, depth + 1), _val(draw, depth + 1), _val(draw, depth + 1))


@st.composite
def _biased_gadgets(draw: st.DrawFn) -> Gadget:
    ps = (Param("N", 1, 40), Param("D", 1, 3), Param("s", 0, 5))
    b1, b2 = (where(_cond(draw), draw(st.integers(1, 3))) if draw(st.booleans()) else _val(draw) for _ in range(2))
    layer = PLayer(b1=b1, h=(tap(0),), b2=b2)
    entry = _cond(draw) if draw(st.booleans()) else TRUE
    return Gadget("g", ps, N, _D, (layer,), inp(i, q), entry=entry, families={"B": (64,)})


@st.composite
def _uses(draw: st.DrawFn, g: Gadget) -> tuple[dict[str, int], dict[str, object]]:
    nn, dd, s_ = draw(st.sampled_from([3, 20, 33])), draw(st.integers(1, 2)), draw(st.integers(0, 1))  # often a size met before
    place: dict[str, object] = {}
    for name, cells in (("P", [(r, c) for r in range(nn + 2) for c in range(dd + 1)]), ("Q", [(r,) for r in range(nn + 6)])):
        if name in g.predicate_names:
            rnd = random.Random(draw(st.integers(0, 2**32)))  # each cell in or out with probability 1/2
            chosen = frozenset(x for x in cells if rnd.random() < 0.5)
            place[name] = set(chosen) if draw(st.booleans()) else (lambda *idx, chosen=chosen: idx in chosen)
    return {"N": nn, "D": dd, "s": s_}, place


def _cell_by_cell(v: object, env: dict[str, int], nn: int, dd: int, place: dict[str, object]) -> dict[tuple[int, int], object] | None:
    fns = {k: (p if callable(p) else (lambda *idx, p=p: idx in p)) for k, p in place.items()}
    out = {}
    with predicates(fns):  # type: ignore[arg-type]
        for r in range(nn):
            for c in range(dd):
                try:
                    out[(r, c)] = eval_value(v, {**env, "i": r, "q": c})  # type: ignore[arg-type]
                except ParametricError:
                    return None
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_one_gadget_instantiated_at_several_sizes_and_placements_matches_cell_by_cell(data: st.DataObject) -> None:
    """Biases reading placements at shifted cells, cut points that depend on the parameters and an
    ``entry`` reading placements, instantiated several times in a row at other sizes and placements
    (the per-process memos of :mod:`symverify.kernel.parametric.concrete`: cut points, the entry
    indicator), in bulk (more than 16 blocks) and block by block: every cell of each instance equals
    the expression evaluated at that cell with that placement, and an instance is refused only where
    some cell is undefined. (Thousands of such gadgets found no difference.)"""
    g = data.draw(_biased_gadgets())
    for _ in range(4):
        env, place = data.draw(_uses(g))
        nn, dd = env["N"], env["D"]
        want = [_cell_by_cell(getattr(g.layers[0], b), env, nn, dd, place) for b in ("b1", "b2")]
        try:
            layers = instantiate(g, env, placement=place)  # type: ignore[arg-type]
        except ParametricError:
            entry_ok = _cell_by_cell(where(g.entry, 1), env, nn, dd, place) is not None
            assert None in want or not entry_ok, (g, env, place)
            continue
        for grid, cells in zip((layers[0].b1, layers[0].b2), want):
            assert cells is not None, (g, env, place)
            for (r, c), w in cells.items():
                assert grid.get(r, c) == w, (g.layers[0], env, place, (r, c), grid.get(r, c), w)


# ---- placements given as the bulk evaluator's own set type ----------------------------------------------
@pytest.mark.parametrize("member", [(True, 0), (-1, 0), ("a", 0)])
def test_a_cellset_placement_is_checked_like_any_set(member: tuple[object, int]) -> None:
    """``instantiate`` checks every member of a set placement (tuples of ints in ``[0, 2^64)``) and
    freezes it as the bulk evaluator's ``CellSet``; a ``CellSet`` given directly skipped the check:
    ``(True, 0)`` was read as the cell ``(1, 0)`` (a bool, refused in any other set), ``(-1, 0)`` was
    silently never matched and ``("a", 0)`` raised a bare TypeError."""
    from symverify.kernel.parametric.bulk import CellSet

    g = Gadget("g", (Param("N", 1, 40),), N, 1, (PLayer(b1=where(pred("P", i, q), 1), h=(tap(0),)),), inp(i, q))
    with pytest.raises(ParametricError, match=r"placement P: expected tuples of 2 ints in \[0, 2\^64\) \(the predicate's arguments\), found tuple"):
        instantiate(g, {"N": 20}, placement={"P": CellSet({member})})
    layers = instantiate(g, {"N": 20}, placement={"P": CellSet({(1, 0)})})
    assert [layers[0].b1.get(r, 0) for r in range(3)] == [0, 1, 0]
