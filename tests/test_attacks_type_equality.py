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

from symverify.kernel.parametric.expr import Var


def _equal_to(target: type) -> type:
    """A metaclass whose classes compare and hash equal to ``target`` (``kind in {target}`` holds)."""

    def eq(cls: type, other: object) -> bool:
        return other is target or type.__eq__(cls, other) is True

    def h(cls: type) -> int:
        return type.__hash__(target)

    return type(f"Says{target.__name__.title()}", (type,), {"__eq__": eq, "__hash__": h})


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
