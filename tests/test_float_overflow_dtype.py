"""A weight beyond float64 executed in float32 is named with float32 (the message said float64 for
every dtype on the torch executor)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import CompileError
from symverify.executors.synthetic import dense_model
from symverify.kernel.ir.grid import Grid

pytest.importorskip("torch")


@pytest.mark.parametrize(("dtype", "says"), [("float32", r"does not fit in float32 \(nor in float64"),
                                             ("float64", r"does not fit in float64$")])
def test_the_overflow_error_names_the_dtype_run(dtype: str, says: str) -> None:
    m = dense_model(4, 2, 1)
    huge = dataclasses.replace(m.layers[0], b2=Grid(4, 2, Fraction(10**400)))
    model = dataclasses.replace(m, layers=(huge,))
    with pytest.raises(CompileError, match=says):
        sv.execute(model, [[1, 2]] * 4, backend="torch", dtype=dtype)
