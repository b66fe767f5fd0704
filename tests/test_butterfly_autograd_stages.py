"""``compile_torch``'s module on an input that requires grad, where it runs its stage form (N > 1024 at
B = 1, or beyond the block form's size): torch's RuntimeError ("functions with out=... arguments don't
support automatic differentiation") came out; the stage form follows autograd with the same bits."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from symverify.kaleidoscope import compile_torch
from symverify.kernel.ir.butterfly import ButterflyFactor, FactorList


def _upper(N: int) -> FactorList:
    strides = [1 << k for k in range(N.bit_length() - 1)]
    h = N // 2
    return FactorList(N, tuple(ButterflyFactor(N, s, (1,) * h, (1,) * h, (0,) * h, (2,) * h) for s in strides))


@pytest.mark.parametrize("N", [2048, 32768])
def test_the_stage_form_follows_autograd_with_the_same_bits(monkeypatch, N):
    monkeypatch.setenv("SYMVERIFY_NATIVE", "0")
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope

    mod = compile_torch(permutation_to_kaleidoscope([(3 * i + 1) % N for i in range(N)]) if N <= 2048 else _upper(N))
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, N)))
    plain = mod(x)
    xg = x.clone().requires_grad_(True)
    y = mod(xg)
    assert y.requires_grad and torch.equal(y.detach(), plain)
    y.sum().backward()
    assert xg.grad is not None and xg.grad.shape == x.shape and bool(torch.isfinite(xg.grad).all())
