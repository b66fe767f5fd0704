"""The float paths' defects fixed here, each pinned against exact evaluation:

- ``numeric_check`` on a model whose weight rounds to 0 in float64 (``|w| < 2^-1075``): the
  executor skips the branch that weight multiplies, and the bound was 0 where the error is not.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.executors import execute, numeric_check
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate
from symverify.kernel.ir.grid import Grid

DTYPES = ("float64", "float32", "bfloat16")
PATHS = ("auto", "fft", "direct", "sparse")
LOST = Fraction(1, 10**400)  # rounds to 0 in float64, hence in every dtype


def _err(y: torch.Tensor, exact: np.ndarray) -> Fraction:
    """max |y − exact|, exactly (a float is a dyadic rational)."""
    a = y.detach().double().numpy()
    return max((abs(Fraction(float(v)) - Fraction(e)) for v, e in zip(a.flat, exact.flat)), default=Fraction(0))


def _one(**grids: Grid) -> Model:
    return Model(1, 1, 1, 1, (Layer.make(1, 1, **grids),))


ONE = Grid.full(1, 1, 1)
LOST_CASES = {
    "W": {"W": Grid.full(1, 1, LOST), "h": ONE},
    "h": {"W": ONE, "h": Grid.full(1, 1, LOST)},
    "b1": {"b1": Grid.full(1, 1, LOST), "h": ONE},
    "b2": {"W": ONE, "b2": Grid.full(1, 1, LOST)},
    "b1 and b2": {"b1": Grid.full(1, 1, LOST), "b2": Grid.full(1, 1, LOST)},
    "W and h": {"W": Grid.full(1, 1, LOST), "h": Grid.full(1, 1, LOST)},
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(LOST_CASES))
def test_a_weight_rounded_to_zero_is_within_a_nonzero_bound(dtype, case):
    """The float output is 0, the exact one is not: the error (rounded up, 5e-324 at least) must
    be within the bound; it was reported as EXCEEDS against a bound of 0."""
    m = _one(**LOST_CASES[case])
    big = 2**200 if dtype == "float64" else 2**30
    u = [[[1]], [[Fraction(1, 3)]], [[big]]]
    exact = execute(m, u)
    assert all(v != 0 for v in exact.flat)
    for path in PATHS:
        chk = numeric_check(m, u, dtype=dtype, path=path)
        assert chk.max_abs_err > 0 and chk.tolerance > 0, (path, chk)
        assert chk.ok and chk.max_abs_err <= chk.tolerance, (path, chk)
        y = execute(m, u, backend="torch", dtype=dtype, path=path)
        assert _err(y, exact) <= Fraction(chk.tolerance), (path, chk)
        assert chk.tolerance < 2.0**-60  # η·(1 + Σ|x|)·|Ĉ|: an underflow term, not a vacuous bound


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_weight_rounded_to_zero_before_a_second_layer(dtype):
    """The lost branch's bound propagates through a following layer (with a large weight)."""
    layers = (Layer.make(1, 1, W=Grid.full(1, 1, LOST), h=ONE, b2=ONE),
              Layer.make(1, 1, W=Grid.full(1, 1, 2**60), h=ONE, b1=ONE))
    m = Model(1, 1, 1, 1, layers)
    u = [[[3]], [[Fraction(-5, 7)]]]
    for path in PATHS:
        chk = numeric_check(m, u, dtype=dtype, path=path)
        assert chk.ok and 0 < chk.max_abs_err <= chk.tolerance, (path, chk)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layers_whose_exact_weights_are_zero_keep_bound_zero(dtype):
    """Only a weight that rounded to 0 makes the bound of an identically zero branch nonzero:
    exact zeros stay exact (bound 0, bit-exact output)."""
    m = Model(1, 2, 1, 2, (Layer.make(1, 2, h=Grid.full(1, 2, 1)),
                           Layer.make(1, 2, W=Grid.identity(2))))
    for path in PATHS:
        chk = numeric_check(m, [[[Fraction(1, 3), 5]]], dtype=dtype, path=path)
        assert chk.ok and chk.tolerance == 0 and chk.max_abs_err == 0, (path, chk)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(e=st.integers(1060, 1400), k=st.integers(-3, 3).filter(bool), x=st.integers(-2**100, 2**100),
       where=st.sampled_from(["W", "h", "b1", "b2"]), dtype=st.sampled_from(DTYPES))
def test_weights_near_and_below_float64s_range_are_within_the_bound(e, k, x, where, dtype):
    """``k·2^-e``: rounded to a subnormal (e ≤ 1074), to the smallest one or to 0 (e ≥ 1076):
    the bound holds on every path, and is nonzero where the output's error is."""
    grids = {"W": ONE, "h": ONE, where: Grid.full(1, 1, Fraction(k, 2**e))}
    m = _one(**grids)
    if dtype != "float64":
        x = max(-(2**60), min(2**60, x))
    u = [[[x]], [[Fraction(x, 3) + 1]]]
    for path in PATHS:
        chk = numeric_check(m, u, dtype=dtype, path=path)
        assert chk.ok and chk.max_abs_err <= chk.tolerance, (path, chk)


@pytest.mark.parametrize("dtype", DTYPES)
def test_circuit_coefficients_rounded_to_zero_are_within_the_bound(dtype):
    """Circuits: a linear coefficient and a constant that round to 0; the coefficient's error
    multiplies the exact input (|â| + E_a)."""
    for c in (Circuit(1, 1, (Gate.lin(0, LOST, 0, 0),), (1,)), Circuit(1, 1, (Gate.const(LOST),), (1,)),
              Circuit(1, 1, (Gate.const(LOST), Gate.mul(0, 1)), (2,))):
        for x in (1, Fraction(1, 3), 2**30):
            chk = numeric_check(c, [[[x]]], dtype=dtype)
            assert chk.ok and 0 < chk.max_abs_err <= chk.tolerance, (c, x, chk)
