"""Attacks through a class whose *metaclass* defines ``==`` and hash so that the class compares and
hashes equal to one of the kernel's (``int``, ``tuple``, ``Var``): ``type(x) in {int}``,
``type(x) in (tuple, list)``, ``set(map(type, xs)) <= {int}``, ``frozenset({int}).issuperset(map(type,
xs))`` and ``TABLE[type(x)]`` all use ``==`` and hash, and took such a class for the kernel's own.
The kernel tests an object's exact class by identity
(:func:`symverify.kernel.ir.scalar.type_ids`, :func:`~symverify.kernel.ir.scalar.all_int`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import symverify as sv
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.kaleidoscope.apply import apply
from symverify.kernel.parametric.concrete import eval_value
from symverify.kernel.parametric.expr import Fam, Inp, Lit, Var
from symverify.kernel.parametric.gadget import NODE_TYPES
from symverify.kernel.provers.fingerprint import EncodingError, tree_digest


def _equal_to(target: type) -> type:
    """A metaclass whose classes compare and hash equal to ``target`` (``kind in {target}`` holds)."""

    def eq(cls: type, other: object) -> bool:
        return other is target or type.__eq__(cls, other) is True

    def h(cls: type) -> int:
        return type.__hash__(target)

    return type(f"Says{target.__name__.title()}", (type,), {"__eq__": eq, "__hash__": h})


class _FakeInt(int, metaclass=_equal_to(int)):  # type: ignore[misc]
    """An int subclass that passes for ``int`` by ``==`` and hash, whose ``*`` and ``+`` add one."""

    def __mul__(self, o: Any) -> Any:
        return int(self) * o + 1

    __rmul__ = __mul__

    def __add__(self, o: Any) -> Any:
        return int(self) + o + 1

    __radd__ = __add__


class _FakeTuple(tuple, metaclass=_equal_to(tuple)):  # type: ignore[misc]
    """A tuple subclass that passes for ``tuple`` by ``==`` and hash."""


def test_the_trick_works_on_a_test_by_equality_and_not_by_identity() -> None:
    from symverify.kernel.ir.scalar import all_int, type_ids

    assert _FakeInt in {int} and {type(_FakeInt(1))} <= {int}
    assert not all_int([_FakeInt(1)]) and all_int([1, 2]) and all_int([])
    assert id(type(_FakeInt(1))) not in type_ids(int, str)


def test_a_gate_reads_such_node_ids_as_the_plain_ints_they_are() -> None:
    """``Gate`` kept node ids whose class equals ``int`` as given (the check of a side then refused
    them); they are converted to plain ints, as an int subclass is."""
    g = Gate(Op.MUL, (_FakeInt(0), _FakeInt(1)))
    assert all(type(a) is int for a in g.args)  # by identity: == would take _FakeInt for int
    c = Circuit(2, 1, (g,), (2,))
    assert sv.verify(c, Circuit(2, 1, (Gate.mul(0, 1),), (2,)), method="exact").proved


def test_a_butterfly_diagonal_is_read_as_plain_ints() -> None:
    """A diagonal entry whose class equals ``int`` was kept as given (and the factor flagged all-int):
    applying the factor multiplied by its lying ``*`` (``2·3`` read as 7)."""
    f = ButterflyFactor(2, 1, (_FakeInt(2),), (0,), (0,), (1,))
    assert type(f.d1[0]) is int and f.all_int
    assert apply(f, [3, 5]) == [6, 5]


def test_a_vector_applied_to_a_butterfly_is_read_as_plain_ints() -> None:
    """An entry of the vector whose class equals ``int`` was taken as given: ``2·3`` read as 7."""
    f = ButterflyFactor(2, 1, (2,), (0,), (0,), (1,))
    assert apply(f, [_FakeInt(3), 5]) == apply(f, [3, 5]) == [6, 5]


def test_a_grid_holding_such_a_value_is_not_served_another_grids_cells() -> None:
    """The cell memo took a rectangle value whose class equals ``int`` for a plain int (nothing held
    that can change) and served the cells of an equal grid of plain ints; the grid's own value is read."""
    assert Grid(2, 2, 0, ((0, 1, 0, 1, 2),)).cells() == {(0, 0): 2}
    g = Grid(2, 2, 0, ((0, 1, 0, 1, 2),))
    object.__setattr__(g, "rects", ((0, 1, 0, 1, _FakeInt(2)),))
    assert type(g.cells()[(0, 0)]) is _FakeInt


def test_a_fragment_interface_cell_is_read_as_a_tuple_of_plain_ints() -> None:
    """A cell whose class equals ``tuple``, or whose coordinates' class equals ``int``, was kept as given."""
    from symverify.kernel.gadgets.fragment import _cell_set

    cells = _cell_set([(_FakeInt(0), 1)], "cells", 2, 2)
    assert cells == {(0, 1)} and all(type(x) is int for c in cells for x in c)
    cells = _cell_set([_FakeTuple((0, 1))], "cells", 2, 2)
    assert cells == {(0, 1)} and all(type(c) is tuple for c in cells)


def test_a_family_member_and_an_input_cell_are_read_as_plain_ints() -> None:
    """A family member or an input cell whose class equals ``int`` was taken as given, lying ``*`` and all."""
    assert type(eval_value(Fam("W", (Lit(0),)), {}, {"W": lambda *idx: _FakeInt(2)})) is int
    assert type(eval_value(Inp(Lit(0), Lit(0)), {}, None, lambda r, c: _FakeInt(2))) is int


def test_a_class_equal_to_a_node_class_has_no_claim_digest() -> None:
    """``tree_digest`` took a class equal to ``Var`` (and named ``Var``) for ``Var``: its digest was a
    real ``Var``'s, two different trees one claim."""

    @dataclasses.dataclass(frozen=True)
    class Var2(metaclass=_equal_to(Var)):  # type: ignore[misc]
        name: str

    Var2.__qualname__ = "Var"
    assert tree_digest("t", Var("s"), NODE_TYPES).startswith("sha256:")
    with pytest.raises(EncodingError, match=r"t digest: expected .*found .*\.Var$"):
        tree_digest("t", Var2("s"), NODE_TYPES)


def test_a_dask_answer_of_a_class_equal_to_tuple_is_malformed() -> None:
    """An answer whose class equals ``tuple`` was read as the triple it holds; it is refused."""
    from symverify.kernel.provers.stages_dask import _answered

    assert "another version" in str(_answered(("x", None, []), 0, 1))
    assert "answer is malformed" in str(_answered(_FakeTuple(("x", None, [])), 0, 1))


def test_a_node_of_a_class_equal_to_var_is_refused_when_the_gadget_is_built() -> None:
    """``Gadget`` refused a class not the language's own by ``type(x) not in`` a set of the node
    classes: a class equal to ``Var`` passed. A variable ``t`` of it, equal to and hashing as ``s``
    (the z3 encoding caches by ``==`` and hash), had ``prove_forall`` prove a shift by ``s`` to be the
    spec's shift by the independent ``t`` (the concrete interpretation reads ``t``)."""
    from symverify.kernel.parametric.expr import IExpr
    from symverify.parametric import Gadget, Param, ParametricError, PLayer, ge, inp, lt, tap, var, where

    @dataclasses.dataclass(frozen=True, eq=False)
    class EvilVar(IExpr, metaclass=_equal_to(Var)):  # type: ignore[misc]
        name: str

        def __eq__(self, o: object) -> bool:
            return isinstance(o, (Var, EvilVar)) and o.name in ("s", self.name)

        def __hash__(self) -> int:
            return hash(Var("s"))

        def eval(self, env: Any) -> Any:
            return env[self.name]

        def vars(self) -> frozenset[str]:
            return frozenset({self.name})

    i, q, n, s = (var(x) for x in "iqNs")
    t = EvilVar("t")
    ps = (Param("N", 1, 10), Param("s", 0, 9), Param("t", 0, 9))
    with pytest.raises(ParametricError, match=r"own node classes, found EvilVar \(a subclass of IExpr\)"):
        Gadget("g", ps, n, 1, (PLayer(b1=1, h=(tap(s),), mode="causal"),), where(ge(i, t), inp(i - t, q)),
               where=lt(s, n) & lt(t, n))


def test_such_a_value_set_after_construction_is_refused_by_the_check_of_a_side() -> None:
    """A node id or a diagonal entry whose class equals ``int``, set past the frozen dataclass, is
    refused by the check of a side (its all-int tests compare classes by identity)."""
    from symverify.kernel.ir.butterfly import BBStar, Kaleidoscope
    from symverify.kernel.provers.matrix import verify_matrix

    c = Circuit(2, 1, (Gate.mul(0, 1),), (2,))
    object.__setattr__(c.gates[0], "args", (_FakeInt(0), 1))
    with pytest.raises(EncodingError, match=r"expected every node id of type int exactly, found .*_FakeInt"):
        sv.verify(c, Circuit(2, 1, (Gate.mul(0, 1),), (2,)), method="randomized")
    f = ButterflyFactor(2, 1, (2,), (0,), (0,), (1,))
    object.__setattr__(f, "d1", (_FakeInt(2),))
    k = Kaleidoscope(2, 2, (BBStar(2, (f, ButterflyFactor(2, 1, (1,), (0,), (0,), (1,)))),))
    with pytest.raises(EncodingError, match=r"butterfly factor 0: expected every d1 entry an exact scalar .*_FakeInt 2"):
        verify_matrix(k, [[2, 0], [0, 1]])


def test_a_constant_of_a_class_equal_to_int_is_no_leaf_of_a_kept_snapshot() -> None:
    """The snapshot the cut-point memo keeps an expression by took a field of a class equal to ``int``
    (set past the frozen dataclass) for a plain int leaf; such an expression has no snapshot."""
    from symverify.kernel.parametric.concrete import _held
    from symverify.kernel.parametric.expr import Num

    n = Num(2)
    assert _held(n) == (n, 2)
    object.__setattr__(n, "value", _FakeInt(2))
    assert _held(n) is None
