"""The ∀ interpretation reads exact input states only: ``spec_at``, ``cell_value`` and
``eval_value`` took a float (or a bool) as an input cell's value and computed with it (or crashed
with a ``TypeError``): a float is not an exact value. Such a cell is a ``ParametricError`` naming
the cell and the type, as a family member's value is."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.parametric.concrete import cell_value, eval_value, spec_at
from symverify.parametric import Gadget, Param, ParametricError, PLayer, inp, tap, var

i, q, N = (var(x) for x in "iqN")
COPY = Gadget("copy", (Param("N", 1, 8),), N, 1, (PLayer(b1=1, h=(tap(0),), mode="causal"),), inp(i, q))


@pytest.mark.parametrize(("value", "kind"), [(1.5, "float"), (np.float64(0.25), "float64"), (np.float32(2.0), "float32"),
                                             (True, "bool"), (Decimal("0.1"), "Decimal")])
@pytest.mark.parametrize("read", ["spec_at", "cell_value"])
def test_an_inexact_input_cell_is_refused_naming_the_cell_and_its_type(value, kind, read):
    fn = {"spec_at": spec_at, "cell_value": cell_value}[read]
    state = lambda r, c: value if (r, c) == (1, 0) else 0  # noqa: E731
    with pytest.raises(ParametricError, match=rf"^gadget copy: input cell \(1, 0\): expected an exact .*\(of type {kind}\)$"):
        fn(COPY, {"N": 3}, 1, 0, state)


def test_eval_value_refuses_a_float_input_cell_too():
    with pytest.raises(ParametricError, match=r"^input cell \(2, 0\): expected an exact value .*found the float 0\.5; "
                                              r"pass Fraction\(1, 2\) or '1/2' instead \(of type float\)$"):
        eval_value(inp(i, q), {"i": 2, "q": 0}, state=lambda r, c: 0.5)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.integers(-10**30, 10**30), st.fractions()), min_size=4, max_size=4), st.integers(0, 3))
def test_exact_input_cells_are_read_as_given(values, row):
    state = lambda r, c: values[r]  # noqa: E731
    want = spec_at(COPY, {"N": 4}, row, 0, state)
    assert want == values[row] == cell_value(COPY, {"N": 4}, row, 0, state)
    assert eval_value(inp(i, q), {"i": row, "q": 0}, state=state) == values[row]
