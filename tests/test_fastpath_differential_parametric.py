"""Differential tests of the parametric fast paths: the bulk bias evaluation (values every cell
shares computed once as plain ints and bools) against the cell-by-cell semantics of
:mod:`symverify.kernel.parametric.expr`, and the ∀-prover's 48-bit encoding against the verdict
the exact integers give (docs/trusted-base.md, "The symbolic interpretation and the ∀-prover").
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric import bulk
from symverify.kernel.parametric.concrete import _member_reader, eval_value
from symverify.kernel.parametric.expr import (
    Bin,
    BoolOp,
    Cmp,
    Cond,
    Fam,
    IExpr,
    Ite,
    Lit,
    Not,
    Num,
    ParametricError,
    Value,
    Var,
    VIf,
    VProd,
    VSum,
)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPS = ("+", "-", "*", "<<", ">>", "&", "|", "^", "//", "%")
# literals at the edges of the bulk range [0, 2^62) and of the shift widths
EDGE_LITS = [0, 1, 2, 3, 47, 48, 61, 62, 63, (1 << 31), (1 << 62) - 1, 1 << 62, 1 << 63, (1 << 64) - 1]


def _iexprs() -> st.SearchStrategy[IExpr]:
    """Index expressions mixing the cell variables with constant subtrees (literals and the
    parameter ``n``), so that constant folding and array evaluation meet at every operation."""
    leaves = st.one_of(st.sampled_from(EDGE_LITS).map(Lit), st.integers(0, 9).map(Lit),
                       st.sampled_from(["i", "q", "n", "i"]).map(Var))

    def grow(children: st.SearchStrategy[IExpr]) -> st.SearchStrategy[IExpr]:
        return st.one_of(
            st.tuples(st.sampled_from(OPS), children, children).map(lambda t: Bin(*t)),
            st.tuples(_conds_of(children), children, children).map(lambda t: Ite(*t)),
        )

    return st.recursive(leaves, grow, max_leaves=5)


def _conds_of(ix: st.SearchStrategy[IExpr]) -> st.SearchStrategy[Cond]:
    cmp = st.tuples(st.sampled_from(["<", "<=", "==", "!="]), ix, ix).map(lambda t: Cmp(*t))
    consts = st.sampled_from([BoolOp("and", ()), BoolOp("or", ())])

    def grow(children: st.SearchStrategy[Cond]) -> st.SearchStrategy[Cond]:
        return st.one_of(
            st.tuples(st.sampled_from(["and", "or"]), st.lists(children, max_size=3)).map(lambda t: BoolOp(t[0], tuple(t[1]))),
            children.map(Not),
        )

    return st.recursive(st.one_of(cmp, consts), grow, max_leaves=4)


SIMPLE_IX = st.one_of(st.sampled_from([0, 1, 2, 5, 62, 63, 1 << 62]).map(Lit), st.sampled_from(["i", "q", "n"]).map(Var),
                      st.tuples(st.sampled_from(OPS), st.sampled_from(["i", "q", "n"]).map(Var),
                                st.sampled_from([0, 1, 2, 62, 1 << 62]).map(Lit)).map(lambda t: Bin(*t)))


def _values() -> st.SearchStrategy[Value]:
    leaves = st.one_of(st.sampled_from([Num(0), Num(1), Num(-1), Num(Fraction(1, 2)), Num(2**4000), Num(Fraction(0))]),
                       st.lists(SIMPLE_IX, min_size=1, max_size=2).map(lambda ix: Fam("f", tuple(ix))))
    conds = _conds_of(SIMPLE_IX)

    def grow(children: st.SearchStrategy[Value]) -> st.SearchStrategy[Value]:
        return st.one_of(
            st.lists(children, max_size=3).map(lambda xs: VSum(tuple(xs))),
            st.tuples(children, children).map(lambda t: VProd(*t)),
            st.tuples(conds, children, children).map(lambda t: VIf(*t)),
        )

    return st.recursive(leaves, grow, max_leaves=6)


def _family(name: str, *idx: int) -> Any:
    """A weight family with zeros, ones of two types, negatives, rationals and symbols."""
    k = sum((j + 1) * x for j, x in enumerate(idx)) % 7
    return [0, 1, Fraction(1), -2, Fraction(3, 5), sym("a"), 2**4000][k]


CELLS = st.one_of(st.just([]), st.lists(st.tuples(st.integers(0, 70), st.integers(0, 9)), min_size=1, max_size=8))
ENV_N = st.sampled_from([0, 1, 5, 62, 63, (1 << 62) - 1, 1 << 62, (1 << 64) - 1])


def _arrays(cells: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([r for r, _ in cells], dtype=np.int64), np.array([c for _, c in cells], dtype=np.int64))


def _cellwise(f: Any, cells: list[tuple[int, int]], n: int) -> list[Any]:
    out = []
    for r, c in cells:
        try:
            out.append(("ok", f({"n": n, "i": r, "q": c})))
        except ParametricError:
            out.append(("undefined", None))
    return out


def _check_bulk(bulk_fn: Any, node: Any, cells: list[tuple[int, int]], n: int, dtype: Any, cast: Any,
                undefined_ok_when_empty: bool) -> None:
    """Where the bulk pass answers (no :class:`FallbackError`), every cell is defined and has the
    cell-by-cell value, of the array type ``dtype``; a refusal only where some cell is undefined."""
    rows_, chans = _arrays(cells)
    want = _cellwise(node.eval, cells, n)
    try:
        got = bulk_fn(node, {"n": n}, rows_, chans, {})
    except bulk.FallbackError:
        return
    except ParametricError:
        assert any(w[0] == "undefined" for w in want) or (undefined_ok_when_empty and not cells)
        return
    assert isinstance(got, np.ndarray) and got.shape == (len(cells),) and got.dtype == dtype
    assert want == [("ok", cast(x)) for x in got.tolist()]


@SETTINGS
@given(_iexprs(), CELLS, ENV_N)
def test_bulk_index_equals_cell_by_cell(e: IExpr, cells: list[tuple[int, int]], n: int) -> None:
    """Index expressions, empty cell lists included."""
    _check_bulk(bulk.index, e, cells, n, np.int64, int, True)


@SETTINGS
@given(_conds_of(_iexprs()), CELLS, ENV_N)
def test_bulk_cond_equals_cell_by_cell(c: Cond, cells: list[tuple[int, int]], n: int) -> None:
    """Short-circuit ``and``/``or`` with items constant over all cells, over some, or over none."""
    _check_bulk(bulk.cond, c, cells, n, np.bool_, bool, False)


@SETTINGS
@given(_values(), CELLS, ENV_N)
def test_bulk_value_equals_cell_by_cell_in_value_and_type(v: Value, cells: list[tuple[int, int]], n: int) -> None:
    """Values (sums, products short-circuited at 0, choices, family members) equal the cell-by-cell
    ones exactly, with the same Python type (a bias grid stores what it is given), family members
    read by the reader the instantiation hands both paths (``concrete._member_reader``: a ``Fraction`` as
    the canonical number it equals)."""
    rows_, chans = _arrays(cells)
    fams = {"f": lambda *idx: _family("f", *idx)}
    want = _cellwise(lambda env: eval_value(v, env, fams), cells, n)
    try:
        got = bulk.value(v, {"n": n}, rows_, chans, {}, lambda name: _member_reader(fams, name))
    except bulk.FallbackError:
        return
    except ParametricError:
        assert any(w[0] == "undefined" for w in want)
        return
    vals = got.tolist() if isinstance(got, np.ndarray) else [got] * len(cells)
    assert [w[0] for w in want] == ["ok"] * len(cells)
    assert [w[1] for w in want] == vals
    assert [type(w[1]) for w in want] == [type(x) for x in vals]
    if isinstance(got, np.ndarray):
        assert bulk.nonzero(got).tolist() == [not (x == 0 and not isinstance(x, type(sym("a")))) for x in vals]


@pytest.mark.parametrize(("op", "a", "b"), [("<<", 1, 61), ("<<", 1, 62), ("<<", 2, 61), (">>", 5, 62), (">>", 5, 61),
                                            ("-", 3, 4), ("*", 1 << 31, 1 << 31), ("*", (1 << 31) - 1, 1 << 31),
                                            ("+", (1 << 62) - 1, 1), ("//", 5, 0), ("%", 5, 0), ("%", 5, 3)])
def test_bulk_constant_folding_refuses_exactly_where_the_arrays_do(op: str, a: int, b: int) -> None:
    """A constant ``a op b`` and the same operation with one side read from the cells (``i + a``
    at row 0) fall back together or give the same value."""
    rows_, chans = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    results = []
    for e in (Bin(op, Lit(a), Lit(b)), Bin(op, Bin("+", Var("i"), Lit(a)), Lit(b)), Bin(op, Lit(a), Bin("+", Var("q"), Lit(b)))):
        try:
            results.append(bulk.index(e, {}, rows_, chans, {}).tolist())
        except bulk.FallbackError:
            results.append("fallback")
    assert results[0] == results[1] == results[2]


def test_bulk_and_with_a_constant_false_item_does_not_evaluate_the_rest() -> None:
    """``(i < 2) and (1 < 0) and (5 // i > 0)``: the division by zero at row 0 is never reached."""
    c = BoolOp("and", (Cmp("<", Var("i"), Lit(2)), Cmp("<", Lit(1), Lit(0)), Cmp("<", Lit(0), Bin("//", Lit(5), Var("i")))))
    rows_, chans = np.array([0, 1, 3], dtype=np.int64), np.zeros(3, dtype=np.int64)
    assert bulk.cond(c, {}, rows_, chans, {}).tolist() == [False, False, False]
    c2 = BoolOp("or", (Cmp("<", Var("i"), Lit(2)), BoolOp("and", ()), Cmp("<", Lit(0), Bin("//", Lit(5), Var("i")))))
    assert bulk.cond(c2, {}, rows_, chans, {}).tolist() == [True, True, True]


# ---- the ∀-prover's 48-bit encoding (b09bc51) -----------------------------------------------------

def _shift_gadget(kmax: int, spec_cond: Cond) -> Any:
    from symverify.kernel.parametric.expr import bit, inp, var, where
    from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap

    i, q = var("i"), var("q")
    ps = (Param("N", 1, 1 << 10), Param("k", 0, kmax))
    out = where(bit(i, 0) | ~bit(i, 0), inp(i, q))  # a bit test: decided with bit-vectors
    return Gadget("g", ps, var("N"), 1, (PLayer(b1=1, h=(tap(0),)),), where(spec_cond, out))  # type: ignore[arg-type]


def test_a_right_shift_by_48_to_63_bits_is_decided_at_the_full_width() -> None:
    """``x >> k`` is defined for every ``k < 64``; at 48 bits a shift by ``k ≥ 48`` is not
    representable, so the claim (true only for ``k ≤ 46``) must be decided at 64 bits and refuted
    at a ``k`` the narrow encoding cannot express, never proved from the narrow width alone."""
    pytest.importorskip("z3")
    from symverify.kernel.parametric.expr import var
    from symverify.kernel.provers.forall import NARROW_WIDTH, WIDTH, prove_forall

    # (2^47 >> k) ≥ 2 holds for k ≤ 46 only
    claim = Cmp("<=", Lit(2), Bin(">>", Lit(1 << 47), var("k")))
    res = prove_forall(_shift_gadget(46, claim))
    assert res.proved and res.stats["encoding"] == f"bv{NARROW_WIDTH}"
    res = prove_forall(_shift_gadget(63, claim))
    assert res.verdict == "refuted" and res.params["k"] >= 47
    # true for every k ≤ 63 (2^47 >> k is 0 from k = 48 on): proved, at the full width
    claim_all = Cmp("<", Bin(">>", Lit(1 << 47), var("k")), Lit((1 << 47) + 1))
    res = prove_forall(_shift_gadget(63, claim_all))
    assert res.proved and res.stats["encoding"] == f"bv{WIDTH}"
