"""Model conversion under attack: weights a converter must not drop, change or read otherwise
than the module runs them (from_zoology, to_zoology, to_torch, from_torch)."""

from __future__ import annotations

import math

import pytest
import torch

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
