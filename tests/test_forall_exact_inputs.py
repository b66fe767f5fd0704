"""The ∀ interpretation reads exact input states only: ``spec_at``, ``cell_value`` and
``eval_value`` took a float (or a bool) as an input cell's value and computed with it (or crashed
with a ``TypeError``): a float is not an exact value. Such a cell is a ``ParametricError`` naming
the cell and the type, as a family member's value is."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.parametric.concrete import cell_value, eval_value, spec_at
from symverify.kernel.parametric.expr import fam
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


@pytest.mark.parametrize("value", [Fraction(np.int64(2**62), np.int64(1)),
                                   Fraction(2 * 2**62, 2, _normalize=False)])
def test_a_fraction_cell_is_read_by_its_value_not_computed_with_as_stored(value):
    # Fraction(np.int64(...)) keeps numpy integers, whose products wrap past 2^63 (4·2^62 was 0);
    # Fraction(2a, 2, _normalize=False) compared unequal to a; both are read as the plain number they equal
    state = lambda r, c: value  # noqa: E731
    assert eval_value(inp(i, q) * 4, {"i": 0, "q": 0}, state=state) == 2**64
    assert spec_at(COPY, {"N": 3}, 1, 0, state) == 2**62 == cell_value(COPY, {"N": 3}, 1, 0, state)


def test_a_family_member_that_is_a_fraction_of_numpy_integers_is_read_by_its_value():
    fams = {"w": lambda k: Fraction(np.int64(2**62), np.int64(1))}
    assert eval_value(fam("w", 0) * 4, {"i": 0, "q": 0}, fams) == 2**64


def test_a_float_subclass_registered_as_integral_is_still_a_float():
    # as_scalar asked numbers.Integral before float: int() of such a subclass truncated 2.5 to 2
    import numbers

    class Counted(float):
        pass

    numbers.Integral.register(Counted)
    with pytest.raises(ParametricError, match=r"^input cell \(0, 0\): expected an exact value .*found the float 2\.5; "
                                              r"pass Fraction\(5, 2\) or '5/2' instead \(of type Counted\)$"):
        eval_value(inp(i, q), {"i": 0, "q": 0}, state=lambda r, c: Counted(2.5))
