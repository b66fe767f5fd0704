"""Attacks on the parametric user API (``symverify.parametric``, docs/forall.md §1–2): expressions
from bad Python values, names, ranges, taps, gadget fields of the wrong shape, odd calls of
``prove_forall`` and ``instantiate``. Each is a clear ``ParametricError`` or a verdict that is
right; the ∀-prover's semantic refusals are tests/test_attacks_forall.py."""

from __future__ import annotations

from fractions import Fraction

import pytest

import symverify as sv
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    all_of,
    fam,
    inp,
    instantiate,
    ite,
    lit,
    lt,
    tap,
    var,
    where,
)

i, q, N, d, s = (var(x) for x in "iqNds")
R = (Param("N", 1, 64), Param("d", 1, 4))
COPY = (PLayer(b1=1, h=(tap(0),), mode="cyclic"),)


def _g(spec: object = None, layers: object = COPY, params: object = R, **kw: object) -> Gadget:
    return Gadget("g", params, N, d, layers, inp(i, q) if spec is None else spec, **kw)  # type: ignore[arg-type]


# ---- index expressions and conditions -------------------------------------------------------------
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: N < 5, r"N < 5: Python comparisons do not build conditions; write lt\(a, b\)"),
        (lambda: N <= 5, r"write le\(a, b\)"),
        (lambda: N > 5, r"write gt\(a, b\)"),
        (lambda: N >= s, r"write ge\(a, b\)"),
        (lambda: N / 2, r"index expressions are integers; write //"),
        (lambda: 2 / N, r"index expressions are integers; write //"),
        (lambda: N**2, r"no power of index expressions"),
        (lambda: 2**N, r"write pow2\(k\) for 2\^k"),
        (lambda: -N, r"index expressions are unsigned"),
        (lambda: N + 0.5, r"expected an IExpr or a non-negative int, found float 0.5"),
        (lambda: N + True, r"found bool True"),
        (lambda: N * 2**70, r"index literal: expected an int in \[0, 2\^64\)"),
        (lambda: lit(-1), r"index literal: expected an int in \[0, 2\^64\), found -1"),
    ],
)
def test_index_expressions_from_bad_python_values(make, match):
    """``N < 5`` raised Python's TypeError, ``N / 2``, ``N ** 2`` and ``-N`` TypeErrors."""
    with pytest.raises(ParametricError, match=match):
        make()


def test_reflected_index_operations_build_expressions():
    """``1 << N``, ``5 % N`` and the other reflected operations raised TypeError."""
    env = {"N": 3}
    assert (1 << N).eval(env) == 8
    assert (64 >> N).eval(env) == 8
    assert (6 & N).eval(env) == 2 and (4 | N).eval(env) == 7 and (5 ^ N).eval(env) == 6
    assert (7 // N).eval(env) == 2 and (7 % N).eval(env) == 1


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ite(N == 5, 1, 0), r"ite: expected a Cond \(lt, eq, bit, ...\), found bool False"),
        (lambda: ite(True, 1, 0), r"ite: expected a Cond .*found bool True"),
        (lambda: lt(N, 2) & 1, r"boolean operation and: expected conditions .*found int 1"),
        (lambda: lt(N, 2) | True, r"boolean operation or: expected conditions .*found bool True"),
        (lambda: all_of(True), r"found bool True"),
        (lambda: where(N == 5, 1), r"where: expected a Cond, found bool"),
        (lambda: tap(0, 1, True), r"tap guard: expected a Cond, found bool"),
    ],
)
def test_conditions_that_are_python_bools(make, match):
    """``ite(N == 5, …)`` was accepted (``N == 5`` is the bool False) and failed later with
    'condition: unknown node bool'; ``lt(…) & 1`` said "expected 'and'/'or', found 'and'"."""
    with pytest.raises(ParametricError, match=match):
        make()


# ---- values ------------------------------------------------------------------------------------------
def test_values_negate_and_subtract_from_numbers():
    """``1 - inp(i, q)`` and ``-inp(i, q)`` raised TypeError; both are proved equal to what they mean."""
    g = _g(spec=-(1 - inp(i, q)) + 1)
    assert sv.prove_forall(g).proved
    wrong = _g(spec=1 - inp(i, q))
    assert sv.prove_forall(wrong).verdict is sv.Verdict.REFUTED


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: inp(i, q) / 2, r"values are polynomials; multiply by Fraction\(1, k\)"),
        (lambda: 2 / inp(i, q), r"no division by a value"),
        (lambda: inp(i, q) ** 2, r"write the product \(v \* v\)"),
        (lambda: inp(i, q) * 0.5, r"expected a Value, int or Fraction, found float 0.5"),
        (lambda: inp(i, q) + "1", r"found str '1'"),
        (lambda: inp(i, q) * True, r"found bool True"),
        (lambda: fam("B", 0.5), r"found float 0.5"),
        (lambda: fam(3, 0), r"weight family: expected an identifier name, found 3"),
    ],
)
def test_values_from_bad_python_values(make, match):
    with pytest.raises(ParametricError, match=match):
        make()


def test_constants_of_more_than_4300_digits_are_decided():
    """A ``Fraction(10**5000, 3)`` weight raised ValueError (Python's int-to-str limit, first in a
    ``repr`` of the gadget, then in z3's numerals); now the right statement is proved and the wrong
    one refuted."""
    big = Fraction(10**5000, 3)
    layers = (PLayer(b1=big, h=(tap(0),), mode="cyclic"),)
    assert sv.prove_forall(_g(spec=inp(i, q) * big, layers=layers)).proved
    assert sv.prove_forall(_g(spec=inp(i, q) * (big + 1), layers=layers)).verdict is sv.Verdict.REFUTED


# ---- names and ranges -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Param("N", 1.0, 4), r"expected ints 0 ≤ lo ≤ hi < 2\^64, found lo=1.0"),
        (lambda: Param("N", 5, 4), r"found lo=5, hi=4"),
        (lambda: Param("N", 0, 2**64), r"hi < 2\^64"),
        (lambda: Param("1N", 1, 4), r"expected an identifier other than i, q; found '1N'"),
        (lambda: Param("q", 1, 4), r"found 'q'"),
        (lambda: _g(params=(Param("N", 1, 4), Param("N", 1, 8), Param("d", 1, 2))), r"parameter names repeat"),
        (lambda: var(""), r"index variable: expected an identifier, found ''"),
    ],
)
def test_bad_names_and_ranges(make, match):
    with pytest.raises(ParametricError, match=match):
        make()


# ---- gadget fields of the wrong shape --------------------------------------------------------------
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: _g(params=(("N", 1, 4), ("d", 1, 4))), r"param 0: expected a Param\(name, lo, hi\), found tuple"),
        (lambda: _g(params=Param("N", 1, 4)), r"params: expected a list or tuple of Params, found Param"),
        (lambda: _g(layers=COPY[0]), r"layers: expected a list or tuple of PLayers, found PLayer"),
        (lambda: PLayer(b1=1, h=tap(0), mode="cyclic"), r"layer h: expected a list or tuple of taps, found Tap"),
        (lambda: PLayer(W=tap(0), b1=1), r"layer W: expected a list or tuple of taps, found Tap"),
        (lambda: _g(cases=lt(i, 2)), r"cases: expected a list or tuple of conditions, found Cmp"),
        (lambda: _g(families={"B": N}), r"family B size: expected a list or tuple of index expressions, found Var"),
        (lambda: _g(families={3: (N,)}), r"families: expected identifier names other than .in. \(the input cells\), found 3"),
        (lambda: _g(families=[("B", (N,))]), r"families: expected a mapping"),
        (lambda: Gadget(3, R, N, d, COPY, inp(i, q)), r"gadget name: expected a str, found int 3"),  # type: ignore[arg-type]
        (lambda: _g(doc=3), r"doc: expected a str, found int"),
        (lambda: _g(spec=[inp(i, q)]), r"value expression: expected a Value, int or Fraction, found list"),
        (lambda: _g(spec=lt(i, q)), r"found Cmp"),
    ],
)
def test_gadget_fields_of_the_wrong_shape(make, match):
    """Each raised TypeError or AttributeError, or (families with the name 3, a gadget named 3) was
    accepted."""
    with pytest.raises(ParametricError, match=match):
        make()


@pytest.mark.parametrize("field", ["where", "care", "entry", "assume"])
@pytest.mark.parametrize("value", [True, False, 1, N == 5])
def test_conditions_of_a_gadget_must_be_conds(field, value):
    """``where=(N == 5)`` (a bool) failed at prove time with 'condition: unknown node bool';
    ``assume=1`` was accepted and the gadget proved."""
    with pytest.raises(ParametricError, match=rf"gadget g {field}: expected a Cond \(lt, eq, bit, ...\), found (bool|int)"):
        _g(**{field: value})


def test_a_declared_family_size_list_is_accepted_and_proved():
    g = _g(spec=fam("B", q) * inp(i, q), layers=(PLayer(b1=fam("B", q), h=(tap(0),), mode="cyclic"),), families={"B": [d]})
    assert sv.prove_forall(g).proved


# ---- prove_forall and instantiate with odd options ---------------------------------------------------
def test_prove_forall_ranges_given_as_pairs_and_narrowed_are_proved():
    r = sv.prove_forall(_g(), ranges=[("N", (1, 2))])  # type: ignore[arg-type]
    assert r.proved and "N ∈ [1, 2]" in r.ranges
    with pytest.raises(ParametricError, match=r"N ∈ \[5, 2\] is empty; expected lo ≤ hi inside the declared \[1, 64\]"):
        sv.prove_forall(_g(), ranges={"N": (5, 2)})
    with pytest.raises(ParametricError, match=r"N ∈ \[0, 2\] is not inside the declared \[1, 64\]"):
        sv.prove_forall(_g(), ranges={"N": (0, 2)})


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda g: instantiate(g, [("N", 4), ("d", 1)]), r"expected the parameter values as a mapping \{name: int\}, found list"),  # type: ignore[arg-type]
        (lambda g: instantiate(g, {"N": 4.0, "d": 1}), r"parameter N needs an int value, found 4.0"),
        (lambda g: instantiate(g, {"N": True, "d": 1}), r"parameter N needs an int value, found True"),
        (lambda g: instantiate(g, {"N": 4, "d": 1}, families={"B": [1, 2]}), r"family 'B': expected a callable on its indices"),
        (lambda g: instantiate(g, {"N": 4, "d": 1}, families=[1]), r"families: expected a mapping"),  # type: ignore[arg-type]
        (lambda g: instantiate(g, {"N": 4, "d": 1}, placement=[1]), r"placement: expected a mapping"),  # type: ignore[arg-type]
        # a misspelt or foreign name was ignored, while the name meant stayed unset
        (lambda g: instantiate(g, {"N": 4, "d": 1}, families={"B": lambda q: 1, "b": lambda q: 2}),
         r"gadget g: families: 'b' not among its families \(B\)"),
        (lambda g: instantiate(g, {"N": 4, "d": 1}, placement={"KEEP": set()}), r"gadget g: placement: 'KEEP' not among its predicates \(none\)"),
    ],
)
def test_instantiate_with_odd_arguments(call, match):
    """A list of parameter values raised AttributeError ('get'); a list as a family TypeError
    ('list' object is not callable)."""
    g = _g(spec=fam("B", q) * inp(i, q), layers=(PLayer(b1=fam("B", q), h=(tap(0),), mode="cyclic"),), families={"B": (d,)})
    with pytest.raises(ParametricError, match=match):
        call(g)


def test_predicate_names_are_every_predicate_the_gadget_reads():
    """``Gadget.predicate_names``: the free predicates in biases, tap guards, the spec and
    ``assume`` (the names a placement may give); an instance with exactly those names builds."""
    from symverify.parametric import pred, where

    g = _g(spec=where(pred("S", i), inp(i, q)), layers=(PLayer(b1=where(pred("B1", i, q), 1), h=(tap(0, guard=pred("G", q)),),
                                                                 mode="cyclic"),),
           assume=pred("A", i) | ~pred("A", i))
    assert g.predicate_names == {"S", "B1", "G", "A"}
    every = {name: (lambda *idx: True) for name in ("S", "B1", "G", "A")}
    assert len(instantiate(g, {"N": 4, "d": 1}, placement=every)) == 1
    with pytest.raises(ParametricError, match=r"'Z' not among its predicates \(A, B1, G, S\)"):
        instantiate(g, {"N": 4, "d": 1}, placement={**every, "Z": set()})


def test_predicate_names_include_predicates_nested_in_index_expressions_and_family_sizes():
    """A predicate read only inside an ``ite`` condition (an input's row, a tap's source, a family
    size, ``where``) or a case split is a name a placement may give, so ``instantiate`` accepts it."""
    from symverify.parametric import ite, lt, pred

    g = _g(spec=inp(ite(pred("P", i), i, i), q), layers=(PLayer(b1=1, h=(tap(ite(pred("Q", q), 0, 0)),), mode="cyclic"),),
           families={"B": (ite(pred("F", N), d, d),)}, cases=(pred("C", i),), where=lt(0, ite(pred("W", N), N, N)))
    assert g.predicate_names == {"P", "Q", "F", "C", "W"}
    every = {name: (lambda *idx: True) for name in g.predicate_names}
    assert len(instantiate(g, {"N": 4, "d": 1}, families={"B": lambda k: 1}, placement=every)) == 1
