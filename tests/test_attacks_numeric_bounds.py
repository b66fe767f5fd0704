"""The float error bounds of numeric_check under attack: inputs and weights searched for an
execution whose error exceeds the bound it reports (an understated bound is a false claim)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.executors import numeric_check
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.grid import Grid

PATHS = ("auto", "sparse", "direct", "fft")
SMALLEST = {"float32": -149, "bfloat16": -133}  # log2 of the dtype's smallest subnormal


def _bias_gate(b1: Fraction) -> Model:
    """``y = b1 ⊙ (e_0 ⊛ x)``: the projection branch is its bias alone."""
    return Model(1, 1, 1, 1, (Layer.make(1, 1, b1=Grid.full(1, 1, b1), h=Grid.full(1, 1, 1)),))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("dtype", "b1", "x"), [("float32", Fraction(1, 2**160), 2**100),
                                               ("bfloat16", Fraction(-1, 2**140), 2**32)])
def test_a_float64_weight_that_underflows_in_the_dtype_is_bounded(path: str, dtype: str, b1: Fraction, x: int) -> None:
    """A weight exact in float64 but below the dtype's range rounds to 0 there: the output is 0
    against ``b1·x``. The weight's underflow term was left out (the bound read the run's plan,
    whose weights are rounded already, as exact), so the bound was far below that error."""
    chk = numeric_check(_bias_gate(b1), [[x]], dtype=dtype, path=path)
    assert chk.max_abs_err == float(abs(b1) * x)
    assert chk.ok, chk


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(sorted(SMALLEST)), below=st.integers(1, 40), sign=st.sampled_from([1, -1]),
       mantissa=st.integers(1, 2**20), scale=st.integers(0, 100), path=st.sampled_from(PATHS))
def test_weights_at_and_below_the_dtype_range_stay_within_the_bound(dtype: str, below: int, sign: int, mantissa: int,
                                                                   scale: int, path: str) -> None:
    b1 = sign * Fraction(mantissa, 2**20) * Fraction(2) ** (SMALLEST[dtype] - below + 20)
    x = 2**scale if dtype == "float32" else 2**min(scale, 60)
    assert numeric_check(_bias_gate(b1), [[x]], dtype=dtype, path=path).ok
