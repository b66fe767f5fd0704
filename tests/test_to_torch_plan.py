"""to_torch runs the executor's plan: exact where execute is exact, the input's dtype, traceable."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given, settings

from symverify.errors import IRError, ShapeError, SymverifyError
from symverify.executors import execute, from_torch, to_torch
from symverify.executors.synthetic import dense_model, impulse_model
from symverify.testing import models


def _signs(shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 2, shape, generator=g) * 2 - 1).double()


@settings(max_examples=30, deadline=None)
@given(models(max_n=4, max_d=3, max_layers=3, pad=2))
def test_to_torch_equals_execute_bit_for_bit(m):
    u = torch.randint(-3, 4, (2, m.n, m.d), generator=torch.Generator().manual_seed(m.n * 7 + m.d)).double()
    mod = to_torch(m)
    for dtype in ("float64", "float32"):
        x = u.to(getattr(torch, dtype))
        got = mod(x)
        assert got.dtype == x.dtype
        assert torch.equal(got, execute(m, x, backend="torch", dtype=dtype))


def test_to_torch_is_exact_where_execute_is():
    m = impulse_model(256, 8, 6, seed=3)  # values stay in {−1, 1}: the shift path is exact, an FFT is not
    u = _signs((3, m.n, m.d))
    exact = torch.tensor(execute(m, u.long()).astype(float))
    assert torch.equal(to_torch(m)(u), exact)
    assert torch.equal(to_torch(m)(u.float()), exact.float())
    assert not torch.equal(to_torch(m, path="fft")(u), exact)  # the FFT rounds: the test can tell


def test_to_torch_follows_dtype_and_refuses_others():
    m = dense_model(8, 2, 2, seed=1)
    mod = to_torch(m)
    u = torch.randint(-2, 3, (2, m.n, m.d))
    assert mod(u.float()).dtype == torch.float32
    assert mod(u.bfloat16()).dtype == torch.bfloat16
    with pytest.raises(IRError, match=r"input: expected a float64, float32 or bfloat16 tensor, found int64; convert it"):
        mod(u)
    with pytest.raises(SymverifyError, match="found float16"):
        mod(u.half())
    with pytest.raises(IRError, match="found list"):
        mod(u.tolist())
    with pytest.raises(IRError, match=r"path: expected one of 'auto', 'fft', 'direct', found 'sparse'"):
        to_torch(m, path="sparse")


def test_to_torch_gradients_and_edits():
    m = impulse_model(32, 4, 3, seed=2)
    u = _signs((2, m.n, m.d), 1)
    mod = to_torch(m, requires_grad=True)
    y = mod(u)
    assert torch.equal(y, execute(m, u, backend="torch"))  # the out-of-place form, same values
    y.square().sum().backward()
    assert all(ly.h.grad is not None and ly.b2.grad is not None for ly in mod.layers)
    frozen = to_torch(m)
    before = frozen(u)
    with torch.no_grad():
        frozen.layers[1].h[5] = 0.5  # a new lag: the plan is rebuilt from the edited weights
    after = frozen(u)
    assert not torch.equal(after, before)
    assert torch.equal(after, execute(from_torch(frozen), u, backend="torch"))


def test_to_torch_traces():
    m = impulse_model(64, 4, 3, seed=4)
    u = _signs((2, m.n, m.d), 2)
    mod = to_torch(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(mod, u)
    assert torch.equal(traced(u), mod(u))
    with pytest.raises(ShapeError, match="path: expected 'fft' or 'direct'"):
        mod.path = "sparse"
        mod(u)


def test_to_torch_compiles_without_graph_breaks():
    m = impulse_model(32, 4, 2, seed=5)
    u = _signs((2, m.n, m.d), 3)
    mod = to_torch(m)
    got = torch.compile(mod, fullgraph=True, backend="eager")(u)
    assert torch.equal(got, execute(m, u, backend="torch"))
