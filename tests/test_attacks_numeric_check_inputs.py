"""``numeric_check`` reads what ``execute`` reads: a compiled object stands for its model."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from symverify.compiler import compile
from symverify.errors import IRError
from symverify.executors import execute, numeric_check
from symverify.kernel.ir.circuit import Circuit, Gate

SQUARE = Circuit(1, 2, (Gate.mul(0, 1),), (2,))


@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
def test_a_compiled_object_is_checked_as_its_model(method: str) -> None:
    """``execute(out, u)`` ran the model while ``numeric_check(out, u)`` said
    "execute: expected a Model or a Circuit, found Compiled"."""
    out = compile(SQUARE, method=method)
    u = [[[2, 3]], [[-1, 5]]]
    chk = numeric_check(out, u, dtype="float32")
    assert chk == numeric_check(out.model, u, dtype="float32") and chk.ok
    assert execute(out, u).tolist() == [[[6, 0]], [[-5, 0]]]


def test_anything_else_is_refused_naming_numeric_check() -> None:
    with pytest.raises(IRError, match=r"^numeric_check: expected a Model, a Circuit or a compiled object, found str"):
        numeric_check("model", [[[1, 2]]])
