"""A node built directly (``Fam("w", (0,))``, ``Tap(TRUE, 0, Num(1))``, ``Ite(...)``), not through
the constructors that convert its fields (``fam``, ``tap``, ``ite`` …), holding a plain number or
another kind of expression where an index expression, a condition or a value belongs, is refused
when the gadget is built, naming the node, the field and what was found (the checks read a plain
``0`` as an expression with no variable, and ``instantiate`` then crashed with AttributeError)."""

from __future__ import annotations

from typing import Any

import pytest

from symverify.kernel.parametric.expr import TRUE, Cmp, Fam, Inp, Ite, Lit, Not, Num, Pred, VIf, VProd, VSum
from symverify.kernel.parametric.gadget import Tap
from symverify.parametric import Gadget, Param, ParametricError, PLayer, inp, instantiate, lt, tap, var

i, q, N = var("i"), var("q"), var("N")


def _gadget(*, spec: Any = None, care: Any = TRUE, h: Any = None, W: Any = None) -> Gadget:
    """``y = u`` on ``N ≤ 8`` rows, one channel, with the node under test in its spec, care or taps
    (a tap given as ``W`` is added to the layer's ``W``)."""
    layer = PLayer(W=() if W is None else (W,), b1=1, h=(tap(0),) if h is None else (h,), mode="causal")
    return Gadget("copy", (Param("N", 1, 8),), N, 1, (layer,), inp(i, q) if spec is None else spec, care=care)


CASES: dict[str, tuple[dict[str, Any], str]] = {
    "Tap src an int": ({"h": Tap(TRUE, 0, Num(1))}, r"Tap src: expected an index expression, found int 0"),  # type: ignore[arg-type]
    "Tap value an int": ({"h": Tap(TRUE, Lit(0), 1)}, r"Tap value: expected a value expression, found int 1"),  # type: ignore[arg-type]
    "Tap value None": ({"h": Tap(TRUE, Lit(0), None)}, r"Tap value: expected a value expression, found NoneType"),  # type: ignore[arg-type]
    "Tap guard a bool": ({"h": Tap(True, Lit(0), Num(1))}, r"Tap guard: expected a condition, found bool True"),  # type: ignore[arg-type]
    "Tap guard an index": ({"h": Tap(i, Lit(0), Num(1))}, r"Tap guard: expected a condition, found Var"),  # type: ignore[arg-type]
    "W tap guard a bool": ({"W": Tap(False, Lit(0), Num(1))}, r"Tap guard: expected a condition, found bool False"),  # type: ignore[arg-type]
    "Tap src a condition": ({"h": Tap(TRUE, lt(q, 1), Num(1))}, r"Tap src: expected an index expression, found Cmp"),  # type: ignore[arg-type]
    "Fam index an int": ({"spec": inp(i, q) * Fam("w", (0,))}, r"Fam idx\[0\]: expected an index expression, found int 0"),  # type: ignore[arg-type]
    "Inp row an int": ({"spec": Inp(0, q)}, r"Inp row: expected an index expression, found int 0"),  # type: ignore[arg-type]
    "Cmp operand an int": ({"care": Cmp("<", i, 3)}, r"Cmp b: expected an index expression, found int 3"),  # type: ignore[arg-type]
    "Ite branch an int": ({"care": lt(i, Ite(lt(i, 2), Lit(1), 2))}, r"Ite b: expected an index expression, found int 2"),  # type: ignore[arg-type]
    "Not of an index": ({"care": Not(i)}, r"Not c: expected a condition, found Var"),  # type: ignore[arg-type]
    "Pred argument an int": ({"care": Pred("P", (i, 0))}, r"Pred idx\[1\]: expected an index expression, found int 0"),  # type: ignore[arg-type]
    "sum item an int": ({"spec": VSum((inp(i, q), 0))}, r"VSum items\[1\]: expected a value expression, found int 0"),  # type: ignore[arg-type]
    "product factor a Fraction": ({"spec": VProd(inp(i, q), 1.5)}, r"VProd b: expected a value expression, found float"),  # type: ignore[arg-type]
    "where branch an index": ({"spec": VIf(lt(i, 2), inp(i, q), i)}, r"VIf b: expected a value expression, found Var"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_ill_typed_field_is_refused_when_the_gadget_is_built(name: str) -> None:
    kw, message = CASES[name]
    with pytest.raises(ParametricError, match=r"gadget copy: " + message):
        _gadget(**kw)


def test_the_same_fields_built_through_the_constructors_are_taken() -> None:
    g = _gadget(h=tap(0, 1), spec=VSum((inp(i, q), Num(0))), care=lt(i, Ite(lt(i, 2), Lit(1), Lit(2))))
    assert len(instantiate(g, {"N": 3})) == 1
