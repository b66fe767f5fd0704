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

from symverify.parametric.expr import WIDTH, Bin, IExpr, Ite, Lit, ParametricError, Var, lt  # noqa: E402
from symverify.provers.forall import _Enc, _IntEnc, _is_linear_expr  # noqa: E402

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
        if kind is _IntEnc and not _is_linear_expr(e):
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
