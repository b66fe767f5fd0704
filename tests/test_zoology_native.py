"""The float executor runs zoology's BaseConv pair form natively; it agrees with the paper layers
and with the zoology module, and the exact paths still run the paper layers."""

from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch

from symverify import verify
from symverify.errors import CompileError, IRError, ShapeError
from symverify.executors import ZoologyBaseConv, execute, from_zoology, modular_eval, numeric_check, to_torch
from symverify.executors.zoology_native import DIRECT_MAX_N, fft_size, native_layers
from symverify.kernel.engines.numbers import float_numbers
from symverify.kernel.engines.plan import model_plan
from symverify.kernel.ir.baseconv import Model

TOL = {torch.float64: 1e-10, torch.float32: 1e-4}


def _zoology(d: int, l_max: int, seed: int, scale: float = 0.25) -> ZoologyBaseConv:
    """A layer with seeded weights: multiples of ``scale`` (dyadic, so exact in float32 and float64)."""
    g = torch.Generator().manual_seed(seed)
    z = ZoologyBaseConv(d, l_max)
    with torch.no_grad():
        for p in z.parameters():
            p.copy_(torch.randint(-3, 4, p.shape, generator=g) * scale)
    return z


def _native(m: Model, dtype: torch.dtype = torch.float64) -> list | None:
    return native_layers(model_plan(m, float_numbers(None)).on(torch.device("cpu"), dtype), m)


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double(), b.double()
    return float((a - b).abs().max() / b.abs().max().clamp(min=1e-300))


SHAPES = [  # (B, L, d, layers): odd L and d, both convolution routes (L ≤ 32: Toeplitz, else FFT)
    (1, 1, 1, 1), (3, 7, 3, 1), (2, 8, 4, 2), (4, DIRECT_MAX_N, 5, 1), (2, DIRECT_MAX_N + 1, 5, 1),
    (3, 65, 7, 2), (2, 100, 16, 1),
]


@pytest.mark.parametrize(("bsz", "n", "d", "depth"), SHAPES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_native_agrees_with_paper_layers_and_zoology(bsz, n, d, depth, dtype):
    zs = torch.nn.Sequential(*(_zoology(d, n, seed=100 * n + 10 * d + i, scale=0.5 / n) for i in range(depth))).to(dtype)
    m = from_zoology(zs, form="pair")
    assert m.signature == (n, 2 * depth, d, n, 2 * d)
    assert _native(m, dtype) is not None
    u = torch.randn(bsz, n, d, generator=torch.Generator().manual_seed(n + d), dtype=torch.float64).to(dtype)
    name = str(dtype).removeprefix("torch.")
    native = execute(m, u, backend="torch", dtype=name)
    paper = execute(m, u, backend="torch", dtype=name, path="fft")  # a forced path runs the paper layers
    with torch.no_grad():
        zoo = zs(u)
    assert native.dtype == dtype and native.shape == (bsz, n, d)
    assert _rel(native, paper) < TOL[dtype]
    assert _rel(native, zoo) < TOL[dtype]
    with torch.no_grad():
        assert torch.equal(to_torch(m, dtype=name)(u), native)  # the module runs the same plan


def test_native_matches_exact_evaluation():
    """On dyadic weights and inputs the float64 result is within round-off of the exact one."""
    zs = torch.nn.Sequential(_zoology(3, 40, 1), _zoology(3, 40, 2))
    m = from_zoology(zs)
    u = torch.randint(-3, 4, (2, 40, 3), generator=torch.Generator().manual_seed(0))
    exact = torch.tensor(execute(m, u.tolist()).astype(float))
    assert _rel(execute(m, u.double(), backend="torch"), exact) < 1e-12


@pytest.mark.parametrize("n", [6, 40])
def test_sparse_filter_is_exact_on_integers(n):
    """A filter with few taps runs as shifts, as the paper layers do: integer data stays exact."""
    z = _zoology(4, n, 3, scale=1.0)
    with torch.no_grad():
        z.conv.filter.zero_()
        z.conv.filter[:, 2] = torch.tensor([1.0, -2.0, 0.0, 3.0])
    m = from_zoology(z, form="pair")
    layers = _native(m)
    assert layers is not None and layers[0].shifts and layers[0].lags == (0, 2)
    u = torch.randint(-5, 6, (3, n, 4), generator=torch.Generator().manual_seed(n))
    exact = torch.tensor(execute(m, u.tolist()).astype(float))
    assert torch.equal(execute(m, u.double(), backend="torch"), exact)


@pytest.mark.parametrize("part", ["no projection", "no bias", "no filter", "no convolution"])
def test_degenerate_layers(part):
    """Zero A, zero c, zero k (D-skip only) and k = −e0 (the convolution branch vanishes)."""
    z = _zoology(3, 9, 4)
    with torch.no_grad():
        if part == "no projection":
            z.projection.weight.zero_()
        elif part == "no bias":
            z.projection.bias.zero_()
        else:
            z.conv.filter.zero_()
            if part == "no convolution":
                z.conv.filter[:, 0] = -1.0
    m = from_zoology(z, form="pair")
    assert _native(m) is not None
    u = torch.randint(-3, 4, (2, 9, 3), generator=torch.Generator().manual_seed(1)).double()
    exact = torch.tensor(execute(m, u.long().tolist()).astype(float))
    with torch.no_grad():
        assert torch.allclose(z(u), exact, rtol=1e-12, atol=1e-12)
    assert torch.allclose(execute(m, u, backend="torch"), exact, rtol=1e-12, atol=1e-12)


def test_only_the_pair_form_runs_natively():
    z = _zoology(2, 5, 5)
    with torch.no_grad():
        z.conv.filter.zero_()
    assert _native(from_zoology(z, form="single")) is None  # one paper layer: nothing to fuse
    assert _native(from_zoology(z, form="pair"), torch.bfloat16) is None  # bfloat16 runs the paper layers
    m = from_zoology(_zoology(2, 5, 6))
    first, second = m.layers
    edited = Model(m.n, m.d, m.inner_n, m.inner_d, (first, dataclasses.replace(second, b2=first.b2)))
    assert _native(edited) is None
    u = torch.randn(2, 5, 2, dtype=torch.float64)
    assert _rel(execute(edited, u, backend="torch"), execute(edited, u, backend="torch", path="fft")) < 1e-12


def test_exact_paths_and_verify_use_the_paper_layers():
    z = _zoology(3, 6, 7)
    with torch.no_grad():
        z.conv.filter.zero_()  # the single form exists too: two exact models of one layer
    pair, single = from_zoology(z, form="pair"), from_zoology(z, form="single")
    assert verify(pair, single).verdict.name == "PROVED"
    u = torch.randint(-3, 4, (2, 6, 3), generator=torch.Generator().manual_seed(2))
    assert (execute(pair, u.tolist()) == execute(single, u.tolist())).all()
    assert torch.equal(modular_eval(pair, u % 101, 101), modular_eval(single, u % 101, 101))
    assert numeric_check(from_zoology(_zoology(3, 6, 8)), u.tolist()).ok


def test_bad_input_is_refused():
    m = from_zoology(_zoology(3, 8, 9))
    with pytest.raises(ShapeError, match=r"expected shape \(B, 8, 3\) or \(8, 3\), found \(2, 8, 4\)"):
        execute(m, torch.zeros(2, 8, 4), backend="torch")
    with pytest.raises(IRError, match="path: expected one of"):
        execute(m, torch.zeros(2, 8, 3), backend="torch", path="fast")
    with pytest.raises(IRError, match="expected a float64, float32 or bfloat16 tensor, found int64"):
        to_torch(m)(torch.zeros(2, 8, 3, dtype=torch.long))
    with pytest.raises(CompileError, match="form: expected 'auto', 'single' or 'pair', found 'native'"):
        from_zoology(_zoology(3, 8, 9), form="native")


def test_single_input_and_fft_size():
    m = from_zoology(_zoology(2, 40, 10))
    u = torch.randn(40, 2, dtype=torch.float64)
    assert torch.equal(execute(m, u, backend="torch"), execute(m, u[None], backend="torch")[0])
    for n in (1, 2, 7, 33, 100, 4095, 4096):
        size = fft_size(n)
        assert size >= 2 * n and size % 2 == 0


@pytest.mark.parametrize("n", [20, 40])
def test_to_torch_module_traces(n):
    """Recognition and the filter's cached form are built with the module: a trace records only the run."""
    m = from_zoology(torch.nn.Sequential(_zoology(3, n, 1), _zoology(3, n, 2)))
    mod = to_torch(m)
    u = torch.randn(2, n, 3, dtype=torch.float64)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = torch.jit.trace(mod, (u,))
    assert not [w for w in caught if "zoology_native" in w.filename]
    v = torch.randn(2, n, 3, dtype=torch.float64)
    with torch.no_grad():
        assert _rel(traced(v), execute(m, v, backend="torch")) < 1e-12


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_fast_path_is_the_general_path_bit_for_bit(dtype, monkeypatch):
    """``execute(model, tensor, backend="torch")`` on a contiguous CPU tensor of the dtype runs the
    fused layers found by the model's identity; the result is the general path's, bit for bit, and
    every other input still takes the general path (and its checks)."""
    import symverify.executors.zoology_native as zn

    zs = torch.nn.Sequential(_zoology(4, 40, 11, scale=0.01), _zoology(4, 40, 12, scale=0.01)).to(dtype)
    m = from_zoology(zs)
    name = str(dtype).removeprefix("torch.")
    u = torch.randn(3, 40, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64).to(dtype)
    general = execute(m, u, backend="torch", dtype=name, device="cpu")  # a device argument skips the fast path
    calls = []
    monkeypatch.setattr(zn, "run_float_model", lambda *a, **k: calls.append(a) or general)
    fast = execute(m, u, backend="torch", dtype=name)
    assert not calls and torch.equal(fast, general)
    assert torch.equal(execute(m, u, backend="torch", dtype=dtype), general)  # a torch dtype as well
    # not contiguous, another dtype, one (N, d) input: the general path
    execute(m, u.transpose(0, 1).contiguous().transpose(0, 1), backend="torch", dtype=name)
    other = torch.float32 if dtype == torch.float64 else torch.float64
    execute(m, u.to(other), backend="torch", dtype=name)
    execute(m, u[0], backend="torch", dtype=name)
    assert len(calls) == 3


def test_fast_path_steps_aside_for_other_models_and_bad_input():
    import symverify.executors as ex

    z = _zoology(2, 5, 5)
    with torch.no_grad():
        z.conv.filter.zero_()
    single = from_zoology(z, form="single")  # not the pair form: remembered as such, general path
    u = torch.randn(2, 5, 2, dtype=torch.float64)
    assert ex._native_fast(single, u, None) is None and ex._NATIVE.get(single, torch.float64) is False
    assert torch.equal(execute(single, u, backend="torch"), execute(single, u, backend="torch", device="cpu"))
    m = from_zoology(_zoology(3, 8, 9))
    for bad in (torch.zeros(2, 8, 4, dtype=torch.float64), torch.zeros(2, 9, 3, dtype=torch.float64), [[0.0] * 3] * 8):
        assert ex._native_fast(m, bad, None) is None
    with pytest.raises(ShapeError, match=r"expected shape \(B, 8, 3\) or \(8, 3\), found \(2, 8, 4\)"):
        execute(m, torch.zeros(2, 8, 4, dtype=torch.float64), backend="torch")
    with pytest.raises(IRError, match="dtype: expected 'float64', 'float32' or 'bfloat16'"):
        execute(m, torch.zeros(2, 8, 3, dtype=torch.float64), backend="torch", dtype="float16")


def test_fast_path_leaves_symbolic_weights_to_the_general_check():
    import symverify.executors as ex
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.ir.scalar import sym

    m = from_zoology(_zoology(2, 4, 3))
    first, second = m.layers
    sym = Model(m.n, m.d, m.inner_n, m.inner_d, (dataclasses.replace(first, b1=Grid.from_rows([[sym("c"), 0, 0, 0]] * 4)), second))
    u = torch.zeros(1, 4, 2, dtype=torch.float64)
    assert ex._native_fast(sym, u, None) is None
    with pytest.raises(IRError, match="c"):
        execute(sym, u, backend="torch")
