"""Export to torch modules and the zoology BaseConv variant: round trips and refusals."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings

from symverify.errors import CompileError
from symverify.executors import (
    BaseConvStack,
    ZoologyBaseConv,
    execute,
    from_torch,
    from_zoology,
    to_torch,
    to_zoology,
)
from symverify.executors.export import grid_from_tensor
from symverify.executors.synthetic import dense_model
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.testing import models


def same_model(a: Model, b: Model) -> bool:
    """Equal signatures, modes and every weight (cell by cell, whatever the rectangles)."""
    return a.signature == b.signature and all(
        x.mode == y.mode and all(g.to_rows() == h.to_rows() for (_, g), (_, h) in zip(x.grids(), y.grids()))
        for x, y in zip(a.layers, b.layers)
    )


@settings(max_examples=30)
@given(models(max_n=4, max_d=3, max_layers=3, pad=2))
def test_to_torch_from_torch_round_trip(m):
    mod = to_torch(m)
    assert isinstance(mod, BaseConvStack) and same_model(from_torch(mod), m)
    u = torch.randint(-3, 4, (2, m.n, m.d), generator=torch.Generator().manual_seed(m.n * 7 + m.d))
    exact = torch.tensor(execute(m, u).astype(float))
    for path in ("fft", "direct"):
        mod.path = path
        got = mod(u.double())
        want = execute(m, u, backend="torch", path=path)
        assert torch.allclose(got, want, rtol=1e-12, atol=1e-9)
        assert torch.allclose(got, exact, rtol=1e-12, atol=1e-9)


def test_from_torch_reads_floats_exactly():
    third = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.full(1, 1, Fraction(1, 3)), b2=Grid.full(2, 1, Fraction(5, 4))),))
    back = from_torch(to_torch(third))
    assert back.layers[0].W.get(0, 0) == Fraction(1 / 3) != Fraction(1, 3)
    assert back.layers[0].b2.get(1, 0) == Fraction(5, 4)
    assert same_model(from_torch(to_torch(third, dtype="float32")), from_torch(to_torch(third, dtype="float32")))


def test_grid_from_tensor_merges_masks():
    t = torch.zeros(64, 8, dtype=torch.float64)
    t[10:40, 2:6] = 1
    g = grid_from_tensor(t, "b1")
    assert g.storage_size() == 1 and g.get(10, 2) == 1 and g.get(40, 2) == 0


def test_from_torch_refusals():
    mod = to_torch(dense_model(4, 2, 1))
    with torch.no_grad():
        mod.layers[0].h[1, 0] = float("nan")
    with pytest.raises(CompileError, match=r"layer 0 h\[1, 0\] is nan: not a finite number"):
        from_torch(mod)
    with pytest.raises(CompileError, match="expected a BaseConvStack"):
        from_torch(torch.nn.Linear(2, 2))


# ---- zoology -----------------------------------------------------------------------------


def _reference_zoology(z: ZoologyBaseConv, u: np.ndarray) -> np.ndarray:
    """The zoology layer written out with loops: (k ⊛ u + u) ⊙ (u·Wᵀ + c) + u, causal, exact in float64."""
    W = z.projection.weight.detach().numpy()
    c = z.projection.bias.detach().numpy()
    k = z.conv.filter.detach().numpy()
    n = u.shape[1]
    conv = np.zeros_like(u)
    for i in range(n):
        for j in range(min(i + 1, k.shape[1])):
            conv[:, i, :] += k[:, j] * u[:, i - j, :]
    return (conv + u) * (u @ W.T + c) + u


def _random_zoology(d: int, l_max: int, seed: int) -> ZoologyBaseConv:
    g = torch.Generator().manual_seed(seed)
    z = ZoologyBaseConv(d, l_max)
    with torch.no_grad():
        for p in z.parameters():
            p.copy_(torch.randint(-3, 4, p.shape, generator=g) / 4)
    return z


def test_zoology_module_matches_its_definition():
    z = _random_zoology(3, 6, 0)
    u = np.random.default_rng(0).integers(-3, 4, size=(2, 6, 3)).astype(float)
    assert np.allclose(z(torch.from_numpy(u)).detach().numpy(), _reference_zoology(z, u), atol=1e-10)
    assert set(z.state_dict()) == {"projection.weight", "projection.bias", "conv.filter"}


def _representable_layer(rng: random.Random, n: int, d: int) -> Layer:
    """A random layer whose every column is one of the forms to_zoology recognises."""
    W = [[0] * d for _ in range(d)]
    b1, h, b2 = ([[0] * d for _ in range(n)] for _ in range(3))
    for q in range(d):
        form = rng.randrange(5)
        if form == 0:  # gate
            beta, h0 = rng.randint(-2, 2), rng.choice([1, 2, -1])
            for p in range(d):
                W[p][q] = rng.randint(-2, 2)
            h[0][q] = h0
            for i in range(n):
                b1[i][q] = beta
        elif form == 1:  # convolution
            beta = rng.choice([1, -1, 2])
            for i in range(n):
                b1[i][q], h[i][q] = beta, rng.randint(-2, 2)
        elif form == 2:  # self-scaled with w·γ = 1
            w = rng.choice([1, -1, 2])
            W[q][q] = w
            for i in range(n):
                b2[i][q], h[i][q] = Fraction(1, w), rng.randint(-2, 2)
        elif form == 3:  # self-scaled with an impulse at 0
            w, g = rng.choice([1, -1, 2]), rng.randint(-2, 2)
            W[q][q], h[0][q] = w, rng.choice([0, 1, 2])
            for i in range(n):
                b2[i][q] = g
    return Layer(*(Grid.from_rows(t) for t in (W, b1, h, b2)))


@pytest.mark.parametrize("seed", range(12))
def test_to_zoology_round_trip(seed):
    rng = random.Random(seed)
    n, d = rng.randint(1, 5), rng.randint(1, 3)
    m = Model(n, d, n, d, tuple(_representable_layer(rng, n, d) for _ in range(rng.randint(1, 3))))
    z = to_zoology(m)
    u = np.random.default_rng(seed).integers(-3, 4, size=(3, n, d))
    exact = execute(m, u.tolist())
    got = z(torch.tensor(u, dtype=torch.float64)).detach().numpy()
    assert np.allclose(got, exact.astype(float), rtol=1e-12, atol=1e-9)
    for form in ("auto", "single", "pair"):
        back = from_zoology(z, form=form)
        assert back.signature == (m.signature if form != "pair" else (n, 2 * len(m.layers), d, n, 2 * d))
        assert (execute(back, u.tolist()) == exact).all()
    assert same_model(from_zoology(to_zoology(from_zoology(z))), from_zoology(z))


@pytest.mark.parametrize("seed", range(4))
def test_from_zoology_general_layers(seed):
    """Random zoology stacks are two paper layers each; the exact model matches the module."""
    n, d = 5, 2
    zs = torch.nn.Sequential(*(_random_zoology(d, n, seed * 10 + i) for i in range(2)))
    m = from_zoology(zs)
    assert m.signature == (n, 4, d, n, 2 * d)
    u = np.random.default_rng(seed).integers(-2, 3, size=(2, n, d))
    exact = execute(m, u.tolist()).astype(float)
    assert np.allclose(zs(torch.tensor(u, dtype=torch.float64)).detach().numpy(), exact, rtol=1e-12, atol=1e-9)
    with pytest.raises(CompileError, match="use form='pair'"):
        from_zoology(zs, form="single")


def test_from_zoology_refuses_aliasing_filters():
    z = _random_zoology(2, 8, 3)
    u = torch.randint(-2, 3, (1, 4, 2)).double()
    aliased = z(u).detach().numpy()
    assert not np.allclose(aliased, _reference_zoology(z, u.numpy()))  # the wrap-around is real
    with pytest.raises(CompileError, match="wraps such taps into the outputs"):
        from_zoology(z, seq_len=4)
    with torch.no_grad():
        z.conv.filter[:, 4:] = 0
    m = from_zoology(z, seq_len=4)
    assert np.allclose(execute(m, u.long().tolist()).astype(float), z(u).detach().numpy(), atol=1e-9)


N, D = 4, 2


def _gate_model(**kw: object) -> Model:
    return Model(N, D, N, D, (Layer.make(N, D, W=Grid.identity(D), h=Grid.zeros(N, D).paint(0, 1, 0, D, 1), **kw),))


def test_to_zoology_refusals():
    with pytest.raises(CompileError, match="layer 0 is cyclic; zoology's fft_conv is causal"):
        to_zoology(Model(N, D, N, D, (Layer.make(N, D, b1=Grid.full(N, D, 1), h=Grid.full(N, D, 1), mode=Mode.CYCLIC),)))
    with pytest.raises(CompileError, match=r"inner size N'×d' = 5×2 differs from the input size N×d = 4×2"):
        to_zoology(Model(N, D, N + 1, D, ()))
    positional = Grid.zeros(N, D).paint(0, 2, 0, D, 1)
    with pytest.raises(CompileError, match=r"column 0: .*gate: b1 varies with position \(rows 0 and 2: 1 ≠ 0\)"):
        to_zoology(_gate_model(b1=positional))
    with pytest.raises(CompileError, match=r"gate: h has lags \[0, 1, 2, 3\], not just 0, b2 is not 0; convolution: W column is not 0, b2 is not 0; self-scaled: w·b2 = 2 ≠ 1"):
        to_zoology(Model(N, D, N, D, (Layer.make(N, D, W=Grid.identity(D), h=Grid.full(N, D, 1), b2=Grid.full(N, D, 2)),)))
    with pytest.raises(CompileError, match="symbolic weights a need values"):
        to_zoology(_gate_model(b1=Grid.full(N, D, sym("a"))))
    with pytest.raises(CompileError, match=r"projection.bias: .* not exactly numbers of torch.float64, e.g. -2/3"):
        to_zoology(_gate_model(b1=Grid.full(N, D, Fraction(1, 3))))
    rounded = to_zoology(_gate_model(b1=Grid.full(N, D, Fraction(1, 3))), exact=False)
    assert float(rounded[0].projection.bias.detach()[0]) == float(Fraction(-2, 3))
    with pytest.raises(CompileError, match="element 0 is a Linear"):
        from_zoology([torch.nn.Linear(2, 2)])


def test_module_and_converter_guards():
    from symverify.errors import ShapeError
    from symverify.executors.export import BaseConvLayer

    with pytest.raises(ShapeError, match=r"W: expected a square d'×d' matrix, found shape \(2, 3\)"):
        BaseConvLayer(torch.zeros(2, 3), torch.zeros(4, 2), torch.zeros(4, 2), torch.zeros(4, 2))
    with pytest.raises(ShapeError, match=r"h: expected shape \(N', 2\) like b1 \(4, 2\), found \(5, 2\)"):
        BaseConvLayer(torch.zeros(2, 2), torch.zeros(4, 2), torch.zeros(5, 2), torch.zeros(4, 2))
    mod = to_torch(dense_model(4, 2, 1))
    with pytest.raises(ShapeError, match=r"input: expected shape \(B, 4, 2\) or \(4, 2\), found \(4, 3\)"):
        mod(torch.zeros(4, 3, dtype=torch.float64))
    mod.path = "sparse"
    with pytest.raises(ShapeError, match="path: expected 'fft' or 'direct'"):
        mod(torch.zeros(4, 2, dtype=torch.float64))
    z = ZoologyBaseConv(2, 4)
    with pytest.raises(CompileError, match="form: expected 'auto', 'single' or 'pair'"):
        from_zoology(z, form="triple")
    with pytest.raises(ShapeError, match="seq_len: expected a positive int"):
        from_zoology(z, seq_len=0)
    with pytest.raises(ShapeError, match="layer 1: d_model = 3, but layer 0 has 2"):
        from_zoology([z, ZoologyBaseConv(3, 4)])
    with pytest.raises(CompileError, match="expected at least one ZoologyBaseConv"):
        from_zoology([])
