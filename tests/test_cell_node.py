"""``Cell.node``: a cell holding ``1·node``, built without re-checking three plain non-negative ints."""

from __future__ import annotations

import numpy as np
import pytest
from cases import Sneaky
from hypothesis import given
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kernel.ir.certificate import Cell


def _outcome(fn):
    try:
        c = fn()
    except IRError as e:
        return ("IRError", str(e))
    return ("cell", c.row, c.col, c.terms, c.const, tuple(type(x) for x in (c.row, c.col, c.terms[0][0], c.terms[0][1], c.const)))


index = st.one_of(st.integers(-3, 2**70), st.booleans(), st.integers(0, 9).map(np.int64), st.integers(0, 9).map(Sneaky))


@given(row=index, col=index, node=index)
def test_node_is_the_checked_cell(row, col, node):
    """Every argument, plain or not, gives what the checked constructor gives: the same cell with
    plain-int fields, or the same IRError."""
    assert _outcome(lambda: Cell.node(row, col, node)) == _outcome(lambda: Cell(row, col, ((node, 1),), 0))


@pytest.fixture
def calls(monkeypatch):
    """One entry per run of ``Cell``'s checks (``__post_init__``) from here on."""
    seen: list[int] = []
    real = Cell.__post_init__

    def counting(self):
        seen.append(1)
        real(self)

    monkeypatch.setattr(Cell, "__post_init__", counting)
    return seen


def test_node_of_plain_ints_skips_the_checks_and_other_values_do_not(calls):
    cells = [Cell.node(i, i + 1, 2 * i) for i in range(10)]
    assert calls == []
    assert cells[3] == Cell(3, 4, ((6, 1),), 0) and hash(cells[3]) == hash(Cell(3, 4, ((6, 1),), 0))
    calls.clear()
    converted = Cell.node(np.int64(1), 2, 3)  # a numpy integer: checked, stored as its plain int
    assert calls == [1] and converted == Cell.node(1, 2, 3) and type(converted.row) is int
    with pytest.raises(IRError, match=r"expected int row and column \(non-negative\), found \(-1, 0\)"):
        Cell.node(-1, 0, 4)
    with pytest.raises(IRError, match=r"expected int node ids \(non-negative\), found -4"):
        Cell.node(0, 0, -4)


# ---- Cell.of_form: the same rule for a cell holding an affine form --------------------------------------


def _form_outcome(fn):
    try:
        c = fn()
    except IRError as e:
        return ("IRError", str(e))
    types = tuple(type(x) for x in (c.row, c.col, c.const)) + tuple((type(v), type(co)) for v, co in c.terms)
    return ("cell", c.row, c.col, c.terms, c.const, type(c.terms), types)


coefficient = st.one_of(st.integers(-5, 2**70), st.booleans(), st.integers(-3, 3).map(np.int64),
                        st.integers(-3, 3).map(Sneaky), st.fractions(max_denominator=4))


@given(row=index, col=index, terms=st.dictionaries(index, coefficient, max_size=4), const=coefficient)
def test_of_form_is_the_checked_cell(row, col, terms, const):
    """Every row, column and form, plain or not (int subclasses, bools, numpy ints, negatives,
    fractions), gives what the checked constructor gives for the sorted terms: the same cell with
    the same field types, or the same IRError."""
    from symverify.kernel.ir.affine import Affine

    f = Affine(terms, const)
    assert _form_outcome(lambda: Cell.of_form(row, col, f)) == _form_outcome(
        lambda: Cell(row, col, tuple(sorted(f.terms.items())), f.const))


def test_of_form_of_plain_ints_skips_the_checks_and_other_values_do_not(calls):
    from fractions import Fraction

    from symverify.kernel.ir.affine import Affine

    cell = Cell.of_form(2, 3, Affine({7: -2, 1: 5}, 4))
    assert calls == [] and cell == Cell(2, 3, ((1, 5), (7, -2)), 4) and hash(cell) == hash(Cell(2, 3, ((1, 5), (7, -2)), 4))
    for row, form in ((np.int64(2), Affine({1: 1})), (2, Affine({1: Fraction(1, 2)})), (2, Affine({1: 1}, Fraction(1, 2)))):
        calls.clear()
        Cell.of_form(row, 0, form)
        assert calls == [1]
    with pytest.raises(IRError, match=r"expected int node ids \(non-negative\), found -4"):
        Cell.of_form(0, 0, Affine({-4: 1}))
