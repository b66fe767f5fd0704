"""zoology's Hyena with ``filter_fn.use_bias`` off: its forward adds ``0 · bias`` (``Filter.forward``:
``bias if self.use_bias else 0 * bias``), which is 0 for a finite bias and NaN for a NaN or infinite
one. The converter read the skip as 0 without looking at the bias, so a module whose forward gives NaN
everywhere was converted into a model computing finite values; such a bias is refused, naming it."""

from __future__ import annotations

import math

import pytest
from cases import assert_forward_matches

import symverify as sv
from symverify.compiler.gated import gated_from_zoology
from symverify.errors import CompileError

torch = pytest.importorskip("torch")

from symverify.executors.zoology_gated import ZoologyHyena, gated_weights_from_zoology  # noqa: E402


def _module(use_bias: bool, bad: float | None = None, where: int = 1):
    torch.manual_seed(0)
    module = ZoologyHyena(2, 6).double().eval()
    module.filter_fn.use_bias = use_bias
    if bad is not None:
        with torch.no_grad():
            module.filter_fn.bias[where] = bad
    return module


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("where", [0, 1])
def test_a_non_finite_filter_bias_is_refused_even_without_use_bias(bad, where):
    module = _module(False, bad, where)
    with torch.no_grad():  # the reference: zoology's forward is NaN there, not the finite values a model computes
        out = module(torch.randn(1, 6, 2, dtype=torch.float64))
    assert torch.isnan(out).any()
    with pytest.raises(CompileError, match=rf"filter_fn\.bias\[{where}\]: expected a finite number, found {bad}.*"
                                           r"use_bias is False.*0 · bias"):
        gated_weights_from_zoology(module, 6)
    with pytest.raises(CompileError, match=r"filter_fn\.bias"):
        gated_from_zoology(module, 6)


def test_with_use_bias_a_non_finite_bias_is_refused_as_before():
    with pytest.raises(CompileError, match=r"filter_fn\.bias\[1\]: expected a finite number, found nan"):
        gated_weights_from_zoology(_module(True, math.nan), 6)


def test_a_finite_bias_without_use_bias_is_still_no_skip():
    """``0 · bias`` is 0 for a finite bias: the model and the module agree, and the skip read is 0."""

    module = _module(False, 1e300)
    weights = gated_weights_from_zoology(module, 6)
    assert all(x == 0 for row in weights.long_skip for x in row)
    circuit, compiled = gated_from_zoology(module, 6)
    assert sv.verify(circuit, compiled).proved
    assert_forward_matches(module, compiled, 6, 2)


def test_a_filter_without_a_bias_is_refused_whatever_use_bias():
    """zoology's forward reads ``filter_fn.bias`` either way (``0 * bias``): a filter with none fails there."""
    module = _module(False)
    del module.filter_fn.bias
    with pytest.raises(CompileError, match=r"expected an attribute 'bias'"):
        gated_weights_from_zoology(module, 6)
