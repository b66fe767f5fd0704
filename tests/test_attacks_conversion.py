"""Model conversion under attack: weights a converter must not drop, change or read otherwise
than the module runs them (from_zoology, to_zoology, to_torch, from_torch)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import CompileError, ShapeError
from symverify.executors import execute
from symverify.executors.export import BaseConvLayer, grid_from_tensor, to_torch
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


def _square_module() -> Any:
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.grid import Grid

    return to_torch(Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),)))


@pytest.mark.parametrize(("name", "bad", "grad"), [
    ("W", torch.tensor([[1 + 2j]]), False), ("W", torch.tensor([[1 + 2j]]), True), ("h", torch.tensor([[1j], [0j]]), False),
    ("h", torch.tensor([[1j], [0j]]), True), ("b2", torch.tensor([[True], [False]]), False),  # torch refuses bool data with grad
])
def test_a_module_refuses_a_weight_replaced_by_a_complex_or_bool_one(grad: bool, name: str, bad: torch.Tensor) -> None:
    """A complex weight set through ``.data`` ran as its real part (torch's cast warns, no more),
    so the module computed another function than its weights state; from_torch refused it."""
    mod = _square_module().requires_grad_(grad)
    getattr(mod.layers[0], name).data = bad
    with pytest.raises(CompileError, match=rf"{name}: expected real weights, found a (complex64|bool) tensor"):
        mod(torch.ones(2, 1, dtype=torch.float64))
    with pytest.raises(CompileError, match=rf"{name}: expected real weights"):
        BaseConvLayer(*(bad if n == name else getattr(mod.layers[0], n).detach() for n in ("W", "b1", "h", "b2")))


@pytest.mark.parametrize("grad", [False, True])
def test_a_module_refuses_a_weight_replaced_by_one_of_another_shape(grad: bool) -> None:
    """A weight set through ``.data`` to another shape failed inside torch (RuntimeError: mat1 and
    mat2 shapes cannot be multiplied)."""
    mod = _square_module().requires_grad_(grad)
    mod.layers[0].W.data = torch.ones(2, 2, dtype=torch.float64)
    with pytest.raises(ShapeError, match=r"b1: expected shape \(N', 2\) \(d' = 2 from W\), found \(2, 1\)"):
        mod(torch.ones(2, 1, dtype=torch.float64))


def _odd_tensor(kind: str) -> torch.Tensor:
    dense = torch.tensor([[1.0, 0.5], [0.25, 2.0]])
    if kind == "sparse":
        return dense.to_sparse()
    if kind == "nested":
        return torch.nested.nested_tensor([torch.ones(2), torch.ones(2)])
    return torch.quantize_per_tensor(dense, 0.25, 0, torch.qint8)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("kind", "match"), [
    ("sparse", r"expected a dense tensor, found a torch.sparse_coo tensor; convert it first \(t.to_dense\(\)\)"),
    ("nested", r"a nested tensor \(rows of different lengths\) has no single shape"),
    ("quantized", r"a quantized torch.qint8 tensor, whose module computes in quantized arithmetic"),
])
def test_sparse_nested_and_quantized_weights_are_refused_by_name(kind: str, match: str) -> None:
    """They raised torch's own TypeError or RuntimeError ("can't convert Sparse layout tensor to
    numpy", "Creation of quantized tensor requires quantized dtype") from deep inside the reader."""
    sd = {"projection.weight": _odd_tensor(kind), "projection.bias": torch.zeros(2), "conv.filter": torch.zeros(2, 3)}
    with pytest.raises(CompileError, match=r"from_zoology: layer 0 projection.weight: " + match):
        from_zoology(sd)
    with pytest.raises(CompileError, match=r"layer 0 W: " + match):
        grid_from_tensor(_odd_tensor(kind), "layer 0 W")


def test_from_zoology_reads_taps_beyond_twice_seq_len_as_the_module_drops_them() -> None:
    """zoology's FFT of size 2·seq_len trims the filter there, so taps at positions ≥ 2·seq_len
    reach no output; they were refused as wrapping into the outputs. Taps in
    [seq_len + 1, 2·seq_len) do wrap, and are still refused."""
    z = ZoologyBaseConv(1, 10, dtype=torch.float64)
    with torch.no_grad():
        z.projection.weight.fill_(2.0)
        z.projection.bias.fill_(1.0)
        z.conv.filter.zero_()
        z.conv.filter[0, :2] = torch.tensor([3.0, -1.0])
        z.conv.filter[0, 4] = 5.0  # the tap L itself reaches no output either
        z.conv.filter[0, 8:] = 7.0
    m = from_zoology(z, seq_len=4)
    u = torch.tensor([[[1.0], [-2.0], [3.0], [4.0]]], dtype=torch.float64)
    assert torch.allclose(z(u), torch.as_tensor(execute(m, u.long().tolist()).astype(float)), atol=1e-9)
    with torch.no_grad():
        z.conv.filter[0, 7] = 1.0
    assert not torch.allclose(z(u), torch.as_tensor(execute(m, u.long().tolist()).astype(float)), atol=1e-9)
    with pytest.raises(CompileError, match=r"layer 0: the filter \(l_max = 10\) has a nonzero tap at position 7, in "
                                           r"\[seq_len \+ 1, 2·seq_len\) = \[5, 8\)"):
        from_zoology(z, seq_len=4)
