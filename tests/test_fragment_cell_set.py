"""A fragment's interface cells: plain ``(int, int)`` tuples are taken as given, anything else is
converted and checked cell by cell, with the same set or the same error either way."""

from __future__ import annotations

import numpy as np
from cases import Sneaky
from hypothesis import given
from hypothesis import strategies as st

import symverify.kernel.gadgets.fragment as fragment
from symverify.errors import IRError


def _outcome(fn):
    try:
        out = fn()
    except IRError as e:  # ShapeError too
        return (type(e).__name__, str(e))
    return ("set", type(out), out, sorted((type(i), type(j)) for i, j in out))


index = st.one_of(st.integers(-2, 7), st.just(2**70), st.booleans(), st.integers(0, 6).map(np.int64),
                  st.integers(0, 6).map(Sneaky), st.just(1.0))
cell = st.one_of(st.tuples(index, index), st.tuples(index, index).map(list), st.tuples(index), st.tuples(index, index, index),
                 index)
collection = st.one_of(st.lists(cell, max_size=6), st.lists(cell, max_size=6).map(tuple),
                       st.lists(st.tuples(index, index), max_size=6).map(set),
                       st.lists(st.tuples(index, index), max_size=6).map(frozenset))


@given(cells=collection, n=st.integers(1, 6), d=st.integers(1, 6))
def test_cell_set_is_the_cell_by_cell_set(cells, n, d):
    """Every collection (plain, numpy, bool, subclass, float or negative coordinates, cells outside,
    malformed cells) gives what the cell-by-cell check gives."""
    assert _outcome(lambda: fragment._cell_set(cells, "w", n, d)) == _outcome(lambda: fragment._cell_set_checked(cells, "w", n, d))


def test_plain_cells_are_taken_without_converting_each(monkeypatch):
    calls = []
    real = fragment.as_index

    def counting(x):
        calls.append(x)
        return real(x)

    monkeypatch.setattr(fragment, "as_index", counting)
    cells = [(i, j) for i in range(4) for j in range(3)]
    assert fragment._cell_set(cells, "w", 4, 3) == frozenset(cells) and calls == []
    assert fragment._cell_set([(np.int64(1), 2)], "w", 4, 3) == {(1, 2)} and calls  # converted
