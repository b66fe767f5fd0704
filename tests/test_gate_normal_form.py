"""A :class:`~symverify.kernel.ir.gate.Gate` whose args and ``int`` coefficients are already tuples is kept
as given; any other input is still normalised or refused as before."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symverify.errors import IRError
from symverify.kernel.ir.gate import Gate, Op
from symverify.kernel.ir.scalar import sym


def test_plain_gate_is_kept_and_others_are_normalised() -> None:
    g = Gate(Op.LIN, (0, 1), (2, -3))
    assert g.args == (0, 1) and g.coeffs == (2, -3)
    h = Gate(Op.LIN, [0, 1], [Fraction(4, 2), np.int64(-3)])  # type: ignore[arg-type]
    assert h == g and type(h.args) is tuple and all(type(c) is int for c in h.coeffs)
    assert Gate(Op.CONST, (), ("2/4",)).coeffs == (Fraction(1, 2),)  # type: ignore[arg-type]
    assert Gate(Op.LIN, (0, 0), (sym("a"), 0)).coeffs == (sym("a"), 0)
    half, a = Fraction(1, 2), sym("a")
    k = Gate(Op.LIN, (0, 1), (half, a))  # already normal: the very objects are kept
    assert k.coeffs[0] is half and k.coeffs[1] is a
    m = Gate(Op.LIN, (0, 1), (half, Fraction(6, 3)))  # an integral Fraction among them is still made an int
    assert m.coeffs == (half, 2) and type(m.coeffs[1]) is int


@pytest.mark.parametrize(("coeffs", "match"), [
    ((True, 1), "coefficient alpha: expected an exact number, found the bool"),
    ((1, 0.5), "coefficient beta: expected an exact value"),
])
def test_near_plain_bad_coefficients_are_refused(coeffs: tuple[object, ...], match: str) -> None:
    with pytest.raises(IRError, match=match):
        Gate(Op.LIN, (0, 1), coeffs)  # type: ignore[arg-type]


def test_bad_args_and_coefficient_containers_are_refused() -> None:
    with pytest.raises(IRError, match="args: expected a sequence of node ids"):
        Gate(Op.MUL, "01", ())  # type: ignore[arg-type]
    with pytest.raises(IRError, match="coefficients: expected a sequence"):
        Gate(Op.CONST, (), 3)  # type: ignore[arg-type]
