"""The ∀-prover's encodings of index expressions agree with their concrete meaning.

Random expression trees (hypothesis) are evaluated concretely (:meth:`IExpr.eval`, which raises
where an expression is undefined) and through both z3 encodings at the same point: where the
concrete value exists the encoding's definedness condition holds and its term has that value;
where it does not, the condition is false. This is the link between what the prover decides and
what the builders compute.
"""

from __future__ import annotations

import pytest

z3 = pytest.importorskip("z3")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symverify.kernel.parametric.expr import WIDTH, Bin, IExpr, Ite, Lit, ParametricError, Var, lt  # noqa: E402
from symverify.kernel.provers.forall import _Enc, _IntEnc, _linear_ok  # noqa: E402

OPS = ("+", "-", "*", "<<", ">>", "&", "|", "^", "//", "%")


def _exprs() -> st.SearchStrategy[IExpr]:
    leaves = st.one_of(st.integers(0, 70).map(Lit), st.sampled_from(["a", "b"]).map(Var),
                       st.sampled_from([0, 1, 63, 64, (1 << 63), (1 << 64) - 1]).map(Lit))

    def grow(children: st.SearchStrategy[IExpr]) -> st.SearchStrategy[IExpr]:
        return st.one_of(
            st.tuples(st.sampled_from(OPS), children, children).map(lambda t: Bin(*t)),
            st.tuples(children, children, children, children).map(lambda t: Ite(lt(t[0], t[1]), t[2], t[3])),
        )

    return st.recursive(leaves, grow, max_leaves=6)


def _check(enc: _Enc, e: IExpr, env: dict[str, int]) -> None:
    term, ok = enc.ix(e)
    sub = [(enc.vars[n], enc.const(v)) for n, v in env.items()]
    ok_v = z3.simplify(z3.substitute(ok, *sub))
    try:
        want = e.eval(env)
    except ParametricError:
        assert z3.is_false(ok_v), (str(e), env)
        return
    assert z3.is_true(ok_v), (str(e), env)
    got = z3.simplify(z3.substitute(term, *sub))
    assert got.as_long() == want, (str(e), env)


@settings(max_examples=150, deadline=None)
@given(_exprs(), st.integers(0, 1 << 66), st.integers(0, 200), st.booleans())
def test_encodings_agree_with_concrete_evaluation(e: IExpr, a: int, b: int, fast: bool) -> None:
    env = {"a": a % (1 << WIDTH), "b": b}
    for kind in (_Enc, _IntEnc):
        if kind is _IntEnc and not _linear_ok(e):
            continue
        if fast is False and kind is _IntEnc:
            continue
        enc = kind(z3, ["a", "b"], fast_mod=fast)
        if fast and any(isinstance(x, Bin) and x.op == "%" for x in _nodes(e)):
            # the conditional subtraction is the remainder exactly where its extra condition holds
            term, ok = enc.ix(e)
            sub = [(enc.vars[n], enc.const(v)) for n, v in env.items()]
            if z3.is_true(z3.simplify(z3.substitute(ok, *sub))):
                assert z3.simplify(z3.substitute(term, *sub)).as_long() == e.eval(env)
            continue
        _check(enc, e, env)


def _nodes(e: IExpr) -> list[IExpr]:
    out = [e]
    if isinstance(e, Bin):
        out += _nodes(e.a) + _nodes(e.b)
    if isinstance(e, Ite):
        out += _nodes(e.a) + _nodes(e.b) + _nodes(e.cond.a) + _nodes(e.cond.b)  # type: ignore[attr-defined]
    return out


def test_case_split_is_validated() -> None:
    import dataclasses

    from symverify.kernel.parametric.expr import ParametricError, lt, var
    from symverify.parametric import library as lib

    g = lib.shift_down()
    with pytest.raises(ParametricError, match="case 0: expected a Cond, found int"):
        dataclasses.replace(g, cases=(1,))
    with pytest.raises(ParametricError, match=r"case 0: unknown variables \['zz'\]"):
        dataclasses.replace(g, cases=(lt(var("zz"), 1),))


def test_case_split_proves_and_refutes_as_without_it() -> None:
    """A split is a hint: the verdicts with and without it agree, a refutation in any part (here in the
    cells no case covers) is found and re-checked."""
    import dataclasses

    from symverify.kernel.parametric.expr import ge, lt, var
    from symverify.kernel.parametric.gadget import PLayer, tap
    from symverify.kernel.provers.forall import prove_forall
    from symverify.parametric import library as lib

    i, s = var("i"), var("s")
    g = dataclasses.replace(lib.shift_down(), cases=(lt(i, s), ge(i, 2 * s)))
    res = prove_forall(g)
    assert res.verdict == "proved" and "identity3.2" in res.stats["timings"]
    wrong = dataclasses.replace(g, layers=(PLayer(b1=1, h=(tap(s + 1, 1, lt(s + 1, var("N"))),), mode="causal"),))
    bad = prove_forall(wrong, ranges={"N": (1 << 10, 1 << 40)})
    assert bad.verdict == "refuted" and bad.params["N"] >= 1 << 10


def test_witness_placement_reads_predicates_as_the_concrete_interpretation() -> None:
    """A predicate behind a false conjunct (or after a true disjunct) is not read, so z3's value for it
    (unconstrained by the hypotheses) does not enter the witness's placement; a predicate in an
    index expression, or in a term's atoms where its guard holds, is read."""
    from symverify.kernel.parametric.expr import ge, pred, var
    from symverify.kernel.provers.forall import _pred_points

    i, q = var("i"), var("q")
    conds = [ge(i, 5) & pred("P", i, q), pred("Q", i, q) | pred("P", i + 1, q), ~pred("Q", q, i)]
    seen = _pred_points(conds, [], [], {"i": 2, "q": 1}, ["P", "Q"], lambda name, idx: name == "Q")
    assert seen == {"Q": {(2, 1), (1, 2)}}
    seen = _pred_points(conds, [], [], {"i": 7, "q": 1}, ["P", "Q"], lambda name, idx: False)
    assert seen == {"P": {(7, 1), (8, 1)}, "Q": {(7, 1), (1, 7)}}
    from fractions import Fraction

    from symverify.kernel.parametric.expr import ite, lt
    from symverify.kernel.parametric.symbolic import Atom, Term

    atom = Atom("in", (ite(pred("R", i), i, q), q))
    terms = [Term(pred("Q", q, q), Fraction(1), (atom,)), Term(lt(i, 0), Fraction(1), (Atom("in", (ite(pred("S", i), i, q), q)),))]
    seen = _pred_points([], [ite(pred("P", q), i, q)], terms, {"i": 2, "q": 1}, ["P", "Q", "R", "S"], lambda name, idx: True)
    assert seen == {"P": {(1,)}, "Q": {(1, 1)}, "R": {(2,)}}


@settings(max_examples=150, deadline=None)
@given(_exprs())
def test_linear_fragment_is_what_the_integer_encoding_takes(e: IExpr) -> None:
    """Where ``_linear_ok`` admits an expression, ``_IntEnc`` encodes it (the prover picks the
    linear encoding by ``_linear_ok`` alone, with no fallback: this is why none is needed)."""
    from symverify.kernel.provers.forall import _NotLinearError

    enc = _IntEnc(z3, ["a", "b"], fast_mod=True)
    try:
        enc.ix(e)
    except _NotLinearError:
        assert not _linear_ok(e), str(e)


@pytest.mark.parametrize("e", [Bin("<<", Lit(0), Lit(64)), Bin(">>", Var("a"), Lit(70)), Bin("//", Var("a"), Lit(0))])
def test_shifts_beyond_the_width_and_division_by_zero_are_outside_the_linear_fragment(e: IExpr) -> None:
    assert not _linear_ok(e)
