"""from_zoology reads any module or state dict with the zoology BaseConv keys (duck-typed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from symverify.errors import CompileError, ShapeError
from symverify.executors import ZoologyBaseConv, execute, from_zoology, numeric_check
from symverify.executors.zoology import zoology_fft_conv


class _Long(nn.Module):
    def __init__(self, d: int, l_max: int) -> None:
        super().__init__()
        self.filter = nn.Parameter(torch.zeros(d, l_max))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return zoology_fft_conv(x.transpose(1, 2), self.filter).transpose(1, 2)


class ForeignBaseConv(nn.Module):
    """Shaped like zoology's own BaseConv (another class, float32, a use_act flag)."""

    def __init__(self, d: int, l_max: int, use_act: bool = False) -> None:
        super().__init__()
        self.d_model, self.l_max, self.use_act = d, l_max, use_act
        self.projection = nn.Linear(d, d)
        self.conv = _Long(d, l_max)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return self.conv(u) * self.projection(u) + u


def _filled(mod: nn.Module, seed: int) -> nn.Module:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in mod.parameters():
            p.copy_(torch.randint(-3, 4, p.shape, generator=g) / 4)
    return mod


@pytest.mark.parametrize("seed", range(3))
def test_foreign_module_and_state_dict(seed):
    n, d = 6, 3
    foreign = _filled(ForeignBaseConv(d, n), seed)
    ours = ZoologyBaseConv(d, n)
    ours.load_state_dict({k: v.double() for k, v in foreign.state_dict().items()})
    want = from_zoology(ours)
    for obj in (foreign, foreign.state_dict(), [foreign], nn.Sequential(foreign), [foreign.state_dict()]):
        got = from_zoology(obj)
        assert got.signature == want.signature
        assert all(x.W.to_rows() == y.W.to_rows() and x.h.to_rows() == y.h.to_rows() for x, y in zip(got.layers, want.layers))
    u = np.random.default_rng(seed).integers(-2, 3, size=(2, n, d))
    exact = execute(from_zoology(foreign), u.tolist()).astype(float)
    got = foreign.double()(torch.tensor(u, dtype=torch.float64)).detach().numpy()
    assert np.allclose(got, exact, rtol=1e-12, atol=1e-9)


def test_refusals_name_the_keys():
    with pytest.raises(CompileError, match=r"use_act=True: its SiLU activations are not polynomials"):
        from_zoology(ForeignBaseConv(2, 4, use_act=True))
    short = nn.Module()
    short.projection = nn.Linear(2, 2)
    short.conv = nn.Module()
    short.conv.conv = nn.Conv1d(2, 2, 3, groups=2, padding=2)
    with pytest.raises(CompileError, match=r"element 0 is a Module with state-dict keys \['conv.conv.bias', .*short convolution"):
        from_zoology(short)
    with pytest.raises(CompileError, match=r"a state dict with state-dict keys \['projection.bias', 'projection.weight'\].*implicit"):
        from_zoology({"projection.weight": torch.zeros(2, 2), "projection.bias": torch.zeros(2)})
    with pytest.raises(CompileError, match="element 1 is a int, expected a zoology BaseConv module or its state dict"):
        from_zoology([ZoologyBaseConv(2, 4), 3])
    with pytest.raises(ShapeError, match=r"layer 0 conv.filter: expected shape \(2, l_max\), found \(3, 4\)"):
        from_zoology({"projection.weight": torch.zeros(2, 2), "projection.bias": torch.zeros(2), "conv.filter": torch.zeros(3, 4)})
    with pytest.raises(ShapeError, match=r"projection.bias: expected shape \(2,\), found \(3,\)"):
        from_zoology({"projection.weight": torch.zeros(2, 2), "projection.bias": torch.zeros(3), "conv.filter": torch.zeros(2, 4)})


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pair_form_runs_on_half_the_channels(dtype):
    """The pair form's first layer has taps and W rows on channels [0, d) only: the executor
    transforms and contracts just those, and still agrees with exact evaluation."""
    from symverify.kernel.engines.numbers import float_numbers
    from symverify.kernel.engines.plan import model_plan

    n, d = 16, 4
    zs = nn.Sequential(*(_filled(ZoologyBaseConv(d, n), 20 + i) for i in range(2)))
    m = from_zoology(zs, form="pair")
    first = model_plan(m, float_numbers(None)).layers[0]
    assert first.auto_path == "fft" and first.tap_channels() == (0, d) and first.w_rows() == (0, d)
    u = np.random.default_rng(3).integers(-2, 3, size=(3, n, d))
    exact = torch.tensor(execute(m, u.tolist()).astype(float))
    got = execute(m, u, backend="torch", dtype=dtype).double()
    tol = 1e-9 if dtype == "float64" else 1e-2
    assert torch.allclose(got, exact, rtol=tol, atol=tol)
    assert torch.allclose(got, zs.double()(torch.tensor(u, dtype=torch.float64)).detach(), rtol=tol, atol=tol)
    chk = numeric_check(m, u.tolist(), dtype=dtype)
    assert chk.ok, chk
