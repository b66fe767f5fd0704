"""Model conversion under attack: weights a converter must not drop, change or read otherwise
than the module runs them (from_zoology, to_zoology, to_torch, from_torch)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import CompileError
from symverify.executors.zoology import ZoologyBaseConv, from_zoology


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize(("l_max", "pos"), [(3, 2), (5, 3)])
def test_from_zoology_refuses_a_non_finite_tap_beyond_seq_len(bad: float, l_max: int, pos: int) -> None:
    """A NaN or infinite tap at a position ≥ seq_len makes every output of the module NaN (the FFT
    spreads it): reading the filter only up to seq_len made a finite model of it."""
    z = ZoologyBaseConv(1, l_max, dtype=torch.float64)
    with torch.no_grad():
        z.projection.weight.fill_(1.0)
        z.conv.filter[0, 0] = 1.0
        z.conv.filter[0, pos] = bad
    assert bool(torch.isnan(z(torch.ones(1, 2, 1, dtype=torch.float64))).all())  # what the module computes
    with pytest.raises(CompileError, match=rf"layer 0 conv.filter\[0, {pos}\] is -?(nan|inf): not a finite number"):
        from_zoology(z, seq_len=2)


@settings(max_examples=40, deadline=None)
@given(scale_exp=st.integers(-1074, 1023), tap_exp=st.integers(-1074, 1023), odd=st.integers(0, 2**20),
       self_scaled=st.booleans())
def test_from_zoology_reads_a_scaled_tap_exactly_beyond_float64s_range(scale_exp: int, tap_exp: int, odd: int,
                                                                      self_scaled: bool) -> None:
    """A single-form kernel row is ``scale·k`` (``c_q·k`` or ``w·k``). A product beyond float64's range
    (2^1000·2^100) was inf in the float64 array, read as a cell, and refused as "not a finite
    number" although both weights are finite; it is the exact product, as one below the range is."""
    scale = math.ldexp(1.0, scale_exp)
    tap = math.ldexp(2 * odd + 1, tap_exp - 21) if tap_exp - 21 >= -1074 else math.ldexp(1.0, tap_exp)
    z = ZoologyBaseConv(1, 3, dtype=torch.float64)
    with torch.no_grad():
        z.projection.weight.fill_(scale if self_scaled else 0.0)
        z.projection.bias.fill_(0.0 if self_scaled else scale)
        z.conv.filter.copy_(torch.tensor([[0.0, tap, 3.0]], dtype=torch.float64))
    h = from_zoology(z, form="single").layers[0].h
    assert Fraction(h.get(1, 0)) == Fraction(scale) * Fraction(tap)
    assert Fraction(h.get(2, 0)) == Fraction(scale) * 3
