"""More adversarial inputs to the parametric language and ``instantiate``: each is refused with a
:class:`ParametricError` saying what was expected and found, or read exactly as written — never a
bare Python exception, never a value silently read as something else (docs/forall.md §1)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symverify.kernel.parametric.expr import Num
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    fam,
    inp,
    instantiate,
    lit,
    lt,
    pred,
    tap,
    var,
    where,
)

i, q, N = var("i"), var("q"), var("N")
HUGE = 10**5000  # more digits than Python's int-to-str limit (4300)
_COPY = (PLayer(b1=1, h=(tap(0),), mode="cyclic"),)


def _g(spec: object, params: tuple[Param, ...] = (Param("N", 1, 8),), layers: tuple[PLayer, ...] = _COPY, **kw: object) -> Gadget:
    return Gadget("g", params, N, 1, layers, spec, **kw)  # type: ignore[arg-type]


# ---- predicates -------------------------------------------------------------------------------------
def test_a_predicate_used_with_two_arities_is_refused_when_built() -> None:
    # z3 raised Z3Exception('index out of bounds') from the second use
    with pytest.raises(ParametricError, match=r"predicate V is used with [12] arguments and with [12]; expected one number of arguments"):
        _g(where(pred("V", i) | pred("V", i, q), inp(i, q), inp(i, q)))


_PG = _g(inp(i, q), params=(Param("N", 1, 64),), layers=(PLayer(b1=where(pred("V", i, q), 1, 2), h=(tap(0),)),))


def _raise(r: int, c: int) -> bool:
    raise ZeroDivisionError("boom")


@pytest.mark.parametrize("n", [2, 40], ids=["cell-by-cell", "bulk"])
@pytest.mark.parametrize(
    "fn, match",
    [
        (_raise, r"placement V at \(0, 0\): the callable raised ZeroDivisionError: 'boom'"),
        (lambda r, c: None, r"placement V at \(0, 0\): expected True or False, found NoneType None"),
        (lambda r, c: "no", r"placement V at \(0, 0\): expected True or False, found str 'no'"),
        (lambda r, c: 1, r"placement V at \(0, 0\): expected True or False, found int 1"),
        (lambda r, c: np.array([1, 2]), r"placement V at \(0, 0\): expected True or False, found ndarray"),
        (lambda r: True, r"placement V at \(0, 0\): the callable raised TypeError"),
    ],
    ids=["raises", "none", "str", "int", "array", "arity"],
)
def test_a_placement_callable_must_return_a_bool(n: int, fn, match: str) -> None:  # type: ignore[no-untyped-def]
    """``None`` was read as False and ``"no"`` as True (silently); an exception, an array or a wrong
    arity escaped as ZeroDivisionError, ValueError or TypeError."""
    with pytest.raises(ParametricError, match=match):
        instantiate(_PG, {"N": n}, placement={"V": fn})


@pytest.mark.parametrize("n", [2, 40])
def test_a_placement_callable_returning_bools_is_used(n: int) -> None:
    a = instantiate(_PG, {"N": n}, placement={"V": lambda r, c: r == 1})[0].b1
    b = instantiate(_PG, {"N": n}, placement={"V": lambda r, c: np.bool_(r == 1)})[0].b1
    assert a == b and a.get(1, 0) == 1 and a.get(0, 0) == 2


@pytest.mark.parametrize("n", [2, 40])
@pytest.mark.parametrize(
    "member",
    [(1.0, 0), (1.5, 0), "ab", (1,), (1, 0, 0), (np.int64(1), 0), (True, 0), (-1, 0), (2**64, 0)],
    ids=["float-equal", "float", "str", "short", "long", "numpy-int", "bool", "negative", "2^64"],
)
def test_a_placement_set_holds_tuples_of_ints(n: int, member: object) -> None:
    """A member that no index tuple can equal (a string, a wrong length, a negative or 2^64 index)
    was silently never matched, or raised TypeError / ValueError in the bulk membership test;
    ``(1.0, 0)`` and ``(np.int64(1), 0)`` matched the cell ``(1, 0)`` by hash equality."""
    with pytest.raises(ParametricError, match=r"placement V: expected tuples of 2 ints in \[0, 2\^64\)"):
        instantiate(_PG, {"N": n}, placement={"V": {member, (0, 0)}})


def test_a_family_read_but_not_declared_can_be_given_values() -> None:
    # a family need not be declared, but instantiate(families=...) refused the one the gadget reads
    g = _g(inp(i, q) * fam("B"), layers=(PLayer(b1=fam("B"), h=(tap(0),)),))
    (layer,) = instantiate(g, {"N": 2}, families={"B": lambda: 3})
    assert layer.b1.get(0, 0) == 3
    with pytest.raises(ParametricError, match=r"families: 'C' not among its families \(B\)"):
        instantiate(g, {"N": 2}, families={"C": lambda: 3})


# ---- integers beyond the int-to-str limit in messages and repr ------------------------------------------
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: lit(HUGE), r"index literal: expected an int in \[0, 2\^64\), found <5001-digit integer"),
        (lambda: var(HUGE), r"index variable: expected an identifier, found <5001-digit integer"),
        (lambda: Param("N", 0, HUGE), r"parameter N: expected ints 0 ≤ lo ≤ hi < 2\^64, found lo=0, hi=<5001-digit integer"),
        (lambda: instantiate(_g(inp(i, q)), {"N": HUGE}), r"parameter N = <5001-digit integer ≡ 0 mod 10\^9> outside its range \[1, 8\]"),
        (lambda: inp(i, q) / HUGE, r"value / <5001-digit integer"),
        (lambda: PLayer(mode=HUGE), r"layer mode: expected 'causal' or 'cyclic', found <5001-digit integer"),
    ],
)
def test_a_huge_integer_is_named_in_the_message_not_a_value_error(make, match: str) -> None:  # type: ignore[no-untyped-def]
    """Each message formatted the integer with ``repr``, which raised ValueError (Python's 4300-digit
    limit for int-to-str) instead of the ParametricError."""
    with pytest.raises(ParametricError, match=match):
        make()


def test_a_gadget_with_a_huge_constant_has_a_repr() -> None:
    g = _g(inp(i, q) + HUGE + Fraction(1, HUGE))
    text = repr(g)
    assert "Num(<5001-digit integer ≡ 0 mod 10^9>)" in text and "Fraction(1, <5001-digit integer" in text
    assert str(g) == text and repr(Num(3)) == "Num(3)" and repr(Num(Fraction(1, 2))) == "Num(Fraction(1, 2))"


# ---- hashing ----------------------------------------------------------------------------------------
def test_a_gadget_is_hashable_consistently_with_equality() -> None:
    # a frozen dataclass with a dict field: hash(g) raised TypeError (unhashable type: 'dict')
    a = _g(inp(i, q) * fam("B"), families={"B": (), "C": (N,)})
    b = _g(inp(i, q) * fam("B"), families={"C": (N,), "B": ()})
    assert a == b and hash(a) == hash(b) and len({a, b, _g(inp(i, q))}) == 2


# ---- family callables ---------------------------------------------------------------------------------
def _boom() -> object:
    raise ZeroDivisionError("boom")


@pytest.mark.parametrize("n", [2, 40], ids=["cell-by-cell", "bulk"])
@pytest.mark.parametrize("where_", ["b1", "tap"])
@pytest.mark.parametrize(
    "fn, match",
    [
        (_boom, r"family B at \(\): the callable raised ZeroDivisionError: 'boom'"),
        (lambda a: 1, r"family B at \(\): the callable raised TypeError"),
        (lambda: None, r"family B at \(\): expected an exact value .*found NoneType None"),
        (lambda: [1], r"family B at \(\): expected an exact value .*found list \[1\]"),
        (lambda: "x", r"family B at \(\): expected a rational .*a symbolic value is sym\('x'\)"),
        (lambda: 0.5, r"family B at \(\): expected an exact value .*found the float 0.5"),
    ],
    ids=["raises", "arity", "none", "list", "str", "float"],
)
def test_a_family_callable_must_give_an_exact_scalar(n: int, where_: str, fn, match: str) -> None:  # type: ignore[no-untyped-def]
    """An exception, a wrong arity or a non-number escaped as ZeroDivisionError or TypeError (from
    adding it to the bias); a float was refused only by the grid, without naming the family."""
    layer = PLayer(b1=fam("B"), h=(tap(0),)) if where_ == "b1" else PLayer(b1=1, h=(tap(0, value=fam("B")),))
    g = _g(inp(i, q), params=(Param("N", 1, 64),), layers=(layer,))
    with pytest.raises(ParametricError, match=match):
        instantiate(g, {"N": n}, families={"B": fn})
    (ok,) = instantiate(g, {"N": n}, families={"B": lambda: "3/6"})
    assert (ok.b1 if where_ == "b1" else ok.h).get(0, 0) == Fraction(1, 2)


def test_a_predicate_without_a_placement_names_the_argument_to_give() -> None:
    # the message pointed at predicates=..., which instantiate does not take
    g = _g(inp(i, q), where=pred("P", N))
    with pytest.raises(ParametricError, match=r"predicate P has no value \(give it as instantiate\(\.\.\., placement=\{\.\.\.\}\)\)"):
        instantiate(g, {"N": 2})
    assert instantiate(g, {"N": 2}, placement={"P": lambda n: True})


# ---- conditions and Python's own operators ----------------------------------------------------------------
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: True & lt(i, 3), r"boolean operation and: expected conditions .*found bool True"),
        (lambda: 1 | lt(i, 3), r"boolean operation or: expected conditions .*found int 1"),
        (lambda: lt(i, 3) and lt(i, 5), r"i < 3: a condition has no Python truth value; combine conditions with & \| ~"),
        (lambda: lt(i, 3) or lt(i, 5), r"i < 3: a condition has no Python truth value"),
        (lambda: not lt(i, 3), r"i < 3: a condition has no Python truth value"),
        (lambda: where(lt(i, 3) and lt(N, 5), 1), r"i < 3: a condition has no Python truth value"),
    ],
    ids=["true-and", "one-or", "and", "or", "not", "where-and"],
)
def test_python_boolean_operators_on_conditions_are_refused(make, match: str) -> None:  # type: ignore[no-untyped-def]
    """``lt(i, 3) and lt(N, 5)`` was ``lt(N, 5)`` (a condition is truthy: the first one was silently
    dropped), ``not c`` was False and ``if c:`` always taken; ``True & c`` raised TypeError."""
    with pytest.raises(ParametricError, match=match):
        make()
    assert (lt(i, 3) & lt(i, 5)).eval({"i": 4}) is False and (~lt(i, 3) | lt(i, 5)).eval({"i": 4}) is True


def test_default_family_symbols_are_injective() -> None:
    """Without ``families=``, member ``name[i][j]`` is the symbol ``name[i][j]``: ``B[1][2]`` and
    ``B_1[2]`` are two weights (``name_i_j`` made both ``B_1_2``, merging them in the instance)."""
    from symverify.kernel.parametric.concrete import family_symbol, instance_model
    from symverify.kernel.parametric.expr import fam, inp, var
    from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap

    assert family_symbol("B", 1, 2) != family_symbol("B_1", 2)
    assert str(family_symbol("B", 1, 2)) == "B[1][2]" and str(family_symbol("w")) == "w"
    i, q = var("i"), var("q")
    g = Gadget("g", (Param("N", 1, 4),), var("N"), 1, (PLayer(b1=fam("B", 1, 2) + fam("B_1", 2), h=(tap(0),), mode="cyclic"),),
               inp(i, q), families={"B": (2, 3), "B_1": (3,)})
    m = instance_model(g, {"N": 2})
    assert {str(s) for s in m.params()} == {"B[1][2]", "B_1[2]"}


def test_assume_without_any_predicate_is_refused() -> None:
    """``assume`` constrains the free predicates; in a gadget without any it constrained nothing
    that was checked (a false ``assume`` made the statement vacuous, yet it was refuted, and
    ``instantiate`` ignored it): refused when the gadget is built, naming the alternatives."""
    from symverify.kernel.parametric.expr import inp, lt, pred, var
    from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap

    i, q, N = var("i"), var("q"), var("N")
    with pytest.raises(ParametricError, match=r"gadget vac assume: i < 0 constrains free predicates, and the gadget has none; .*where= .*care="):
        Gadget("vac", (Param("N", 2, 8),), N, 1, (PLayer(b1=1, h=(tap(0),)),), inp(i, q) * 2, assume=lt(i, 0))
    g = Gadget("ok", (Param("N", 2, 8),), N, 1, (PLayer(b1=1, h=(tap(0),)),), inp(i, q), assume=~pred("P", i, q) | lt(i, N))
    assert g.predicate_names == {"P"}


def test_index_expressions_and_values_have_no_truth_value() -> None:
    """``N and M`` was M and ``v or 0`` was v, silently; like conditions, both now refuse."""
    from symverify.kernel.parametric.expr import fam, var

    N, M = var("N"), var("M")
    with pytest.raises(ParametricError, match=r"N: an index expression has no Python truth value; compare it"):
        _ = N and M
    with pytest.raises(ParametricError, match=r"\(N \+ 1\): an index expression has no Python truth value"):
        bool(N + 1)
    with pytest.raises(ParametricError, match=r"a value expression has no Python truth value; use where"):
        _ = fam("w") or 0
    assert (N + 1).eval({"N": 2}) == 3  # evaluation stays the way to a number


def test_families_are_read_only_after_validation():
    """A gadget's families were validated when it was built: changing them in place (which would
    bypass that check) is refused; the gadget still pickles, copies, hashes and compares."""
    import copy
    import dataclasses
    import pickle

    from symverify.parametric.library import gate

    g = gate()
    for change in (lambda f: f.__setitem__("B", ("x",)), lambda f: f.update(C=(1,)), lambda f: f.pop("B"),
                   lambda f: f.clear(), lambda f: f.setdefault("C", ()), lambda f: f.__delitem__("B"),
                   lambda f: f.popitem(), lambda f: f.__ior__({"C": ()})):
        with pytest.raises(ParametricError, match="families are read-only once the gadget is built"):
            change(g.families)
    assert set(g.families) == {"B"}
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g), copy.copy(g)):
        assert h == g and hash(h) == hash(g) and dict(h.families) == dict(g.families)
        with pytest.raises(ParametricError, match="families are read-only"):  # a copy's stay read-only
            h.families["C"] = ()
    h = dataclasses.replace(g, families={"B": (g.rows, g.cols), "C": (3,)})
    assert set(h.families) == {"B", "C"} and h != g
    with pytest.raises(ParametricError, match="unknown variables"):
        dataclasses.replace(g, families={"B": (var("zz"),)})


@pytest.mark.parametrize("cell", [(1.0, 0), (1.5, 0), (True, 0), (0, "1"), (Fraction(1), 0)])
def test_spec_and_cell_value_refuse_non_integer_cells(cell):
    """A float cell read between cells (``(1.5, 0)`` gave 35.0 on a cyclic shift): refused by both
    interpretations; numpy integers are ints."""
    from symverify.kernel.parametric.concrete import cell_value, spec_at
    from symverify.parametric.library import cyclic_shift

    g, ps = cyclic_shift(), {"N": 4, "d": 2, "s": 2}
    state = lambda r, c: 10 * r + c  # noqa: E731
    for f in (spec_at, cell_value):
        with pytest.raises(ParametricError, match=r"cell: expected int row and column"):
            f(g, ps, *cell, state)
        with pytest.raises(ParametricError, match=r"cell \(4, 0\) outside the 4×2 state"):
            f(g, ps, 4, 0, state)
        assert f(g, ps, np.int64(1), np.int32(0), state) == f(g, ps, 1, 0, state) == 30
