"""A certificate :class:`~symverify.kernel.ir.certificate.Cell` already in normal form (``int`` row, column,
nodes, coefficients and constant, tuples) is taken as given; every other input still goes through
the checks and the normalisation. A near-plain bad cell must still be refused."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.scalar import sym

TERMS = st.lists(st.tuples(st.integers(0, 50), st.integers(-5, 5)), max_size=4)


@given(st.integers(0, 9), st.integers(0, 9), TERMS, st.integers(-3, 3))
def test_plain_cell_equals_the_normalised_one(row: int, col: int, terms: list[tuple[int, int]], const: int) -> None:
    plain = Cell(row, col, tuple(terms), const)
    via_lists = Cell(row, col, [list(t) for t in terms], Fraction(const))  # type: ignore[arg-type]
    assert plain == via_lists and type(via_lists.terms) is tuple and type(via_lists.const) is int
    assert plain.terms == tuple(terms)


@pytest.mark.parametrize(("args", "match"), [
    ((-1, 0, ((0, 1),), 0), "expected int row and column"),
    ((0, -2, ((0, 1),), 0), "expected int row and column"),
    ((True, 0, ((0, 1),), 0), "expected int row and column"),
    ((0, 0, ((-1, 1),), 0), "expected int node ids"),
    ((0, 0, ((True, 1),), 0), "expected int node ids"),
    ((0, 0, ((0, True),), 0), "expected an exact number, found the bool"),
    ((0, 0, ((0, 1),), True), "expected an exact number, found the bool"),
    ((0, 0, ((0, 1, 2),), 0), r"expected \(node, coefficient\) pairs"),
    ((0, 0, ((0, 0.5),), 0), "coefficient: expected an exact value"),
])
def test_near_plain_bad_cells_are_refused(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(IRError, match=match):
        Cell(*args)  # type: ignore[arg-type]


def test_other_scalars_are_normalised() -> None:
    c = Cell(1, 2, ((3, Fraction(4, 2)), (5, sym("a")), (6, np.int64(7))), Fraction(1, 3))  # type: ignore[arg-type]
    assert c.terms == ((3, 2), (5, sym("a")), (6, 7)) and c.const == Fraction(1, 3)
    assert type(c.terms[0][1]) is int and type(c.terms[2][1]) is int
