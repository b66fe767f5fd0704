"""Coverage of ``symverify/kernel/parametric/`` (expr.py, gadget.py, symbolic.py): the validation
paths of the expression and gadget constructors, the reflected operators, and the unknown-node
refusals. Each test names the functions it reaches; every refusal is matched on the message that
names the rule.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from symverify.kernel.parametric.expr import (
    Bin,
    BoolOp,
    Cmp,
    Cond,
    IExpr,
    Lit,
    Num,
    ParametricError,
    Var,
    fam,
    gt,
    inp,
    lt,
    pred,
    subst_c,
    var,
    vars_c,
    where,
)
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap
from symverify.kernel.parametric.symbolic import obligations, value_terms

i, q, N = var("i"), var("q"), var("N")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="cyclic"),)


def test_reflected_index_operators_keep_the_order() -> None:
    """expr.py ``IExpr.__radd__`` and ``IExpr.__rsub__``: ``1 − N`` is ``Bin('-', 1, N)``, not
    ``N − 1`` (a swapped ``__rsub__`` gives 2 at N = 3 instead of being undefined)."""
    assert 1 + N == Bin("+", Lit(1), N) and (1 + N).eval({"N": 3}) == 4
    assert 5 - N == Bin("-", Lit(5), N) and (5 - N).eval({"N": 3}) == 2
    with pytest.raises(ParametricError, match="subtraction below 0"):
        (1 - N).eval({"N": 3})


def test_gt_is_the_swapped_lt() -> None:
    """expr.py ``gt``: ``gt(a, b)`` is ``b < a``: true only above."""
    c = gt(N, 3)
    assert [c.eval({"N": n}) for n in (2, 3, 4)] == [False, False, True]


def test_reflected_value_operators() -> None:
    """expr.py ``Value.__radd__`` and ``Value.__sub__``: ``1 + v`` and ``v − 2`` as values (checked
    through their terms: constant 1 then the input; the input then −2)."""
    plus, minus = 1 + inp(i, q), inp(i, q) - 2
    t = value_terms(plus, lambda r, c: value_terms(fam("U", r, c), None))
    assert sorted((x.coef, len(x.atoms)) for x in t) == [(Fraction(1), 0), (Fraction(1), 1)]
    t = value_terms(minus, lambda r, c: value_terms(fam("U", r, c), None))
    assert sorted((x.coef, len(x.atoms)) for x in t) == [(Fraction(-2), 0), (Fraction(1), 1)]


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Bin("**", N, N), r"index operation: expected one of .* found '\*\*'"),  # expr.py Bin.__post_init__
    (lambda: Bin("+", 1, N), "index operation \\+: expected index expressions, found int"),  # Bin.__post_init__
    (lambda: Cmp(">", N, N), "comparison: expected one of .* found '>'"),  # Cmp.__post_init__
    (lambda: BoolOp("xor", ()), "boolean operation: expected 'and' or 'or', found 'xor'"),  # BoolOp.__post_init__
    (lambda: pred("1x", i), "predicate: expected an identifier name, found '1x'"),  # Pred.__post_init__
    (lambda: Num(1.5), "value constant: expected an int or Fraction, found 1.5"),  # Num.__post_init__
    (lambda: Num(True), "value constant: expected an int or Fraction, found True"),  # Num.__post_init__
    (lambda: (N + 1).eval({}), r"index variable 'N' has no value \(known: \[\]\)"),  # _eval_i
    (lambda: lt(IExpr(), 1).eval({}), "index expression: unknown node IExpr"),  # _eval_i
    (lambda: pred("P", i).eval({"i": 0}), "predicate P has no value"),  # _eval_c
    (lambda: Cond().eval({}), "condition: unknown node Cond"),  # _eval_c
    (lambda: subst_c(Cond(), {"i": Var("q")}), "condition: unknown node Cond"),  # subst_c
    (lambda: vars_c(Cond()), "condition: unknown node Cond"),  # vars_c
], ids=["binop", "bin-operand", "cmp", "boolop", "pred-name", "num-float", "num-bool", "unbound-var",
        "unknown-iexpr", "pred-unset", "unknown-cond", "subst-unknown", "vars-unknown"])
def test_expression_refusals(make, message) -> None:
    with pytest.raises(ParametricError, match=message):
        make()


def test_a_foreign_condition_is_refused_when_the_gadget_is_built() -> None:
    """expr.py ``subst_c`` and ``vars_c`` used to return the condition unchanged and no variables; a
    bare ``Cond`` as ``where`` is now refused when the gadget collects its variables, not at
    evaluation."""
    with pytest.raises(ParametricError, match="condition: unknown node Cond"):
        Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, inp(i, q), where=Cond())
    # the four condition kinds keep their behaviour
    c = (lt(i, N) & ~pred("P", i)) | lt(0, N)
    assert vars_c(c) == {"i", "N"}
    assert vars_c(subst_c(c, {"i": Var("q")})) == {"q", "N"}


@pytest.mark.parametrize(("make", "message"), [
    # gadget.py PLayer.__post_init__ (the weight that reads input cells through _has_inp)
    (lambda: PLayer(mode="sideways"), "layer mode: expected 'causal' or 'cyclic', found 'sideways'"),
    (lambda: PLayer(h=(0,)), "layer h tap 0: expected a Tap, found int"),
    (lambda: PLayer(h=(tap(0, 2 + inp(0, q)),)), "layer h tap 0: a weight cannot read input cells"),
    # gadget.py Gadget.__post_init__
    (lambda: Gadget("g", (Param("N", 1, 4),), N, 1, (1,), inp(i, q)), "layer 0: expected a PLayer, found int"),
    (lambda: Gadget("g", (Param("N", 1, 4),), N, 1, (PLayer(b1=where(lt(var("zz"), 1), 1), h=(tap(0),)),), inp(i, q)),
     r"layer 0: unknown variables \['zz'\]"),
    (lambda: Gadget("g", (Param("N", 1, 4),), N, 1, (), inp(i, q)), "expected at least one layer"),
    (lambda: Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, inp(i, q)).check_params({"N": 2, "M": 3}),
     r"unknown parameters 'M' \(parameters: N\)"),  # Gadget.check_params
    (lambda: obligations(Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, fam("B", i, q), families={"B": (N,)})),
     "spec: family B has 1 indices, used with 2"),  # symbolic.py _atom_obligations
], ids=["mode", "tap-type", "weight-reads-input", "layer-type", "layer-vars", "no-layers", "extra-param", "family-arity"])
def test_gadget_refusals(make, message) -> None:
    with pytest.raises(ParametricError, match=message):
        make()


def test_a_weight_sum_without_inputs_is_accepted() -> None:
    """gadget.py ``_has_inp`` (of a sum): a sum of a constant and a family member is a valid weight;
    only a sum that reads an input cell is refused (previous test)."""
    layer = PLayer(h=(tap(0, 2 + fam("B", q)),))
    assert len(layer.h) == 1
