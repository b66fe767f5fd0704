"""The execution plans' caches: typed attributes filled once, reused by identity, bounded, and
never changing a result (symverify.kernel.engines.plan, .program, .numeric, .zoology_native)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from symverify.executors import execute, numeric_check  # noqa: E402
from symverify.executors.numeric import _abs_plan, _representable  # noqa: E402
from symverify.executors.program import _CACHED_BATCHES, model_program  # noqa: E402
from symverify.executors.torch_float import run_model  # noqa: E402
from symverify.kernel.engines.numbers import float_numbers  # noqa: E402
from symverify.kernel.engines.plan import LayerPlan, model_plan  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402


def _model(n: int = 8, d: int = 3, lags: int = 2, mode: str = "cyclic") -> Model:
    """Two layers: a kernel with ``lags`` nonzero lags (per-channel taps) and a dense ``W``."""
    h = Grid.from_cells(n, d, {(k, j): (k + j) % 3 + 1 for k in range(lags) for j in range(d)})
    W = Grid.from_cells(d, d, {(i, j): i - j + 1 for i in range(d) for j in range(d)})
    b2 = Grid.from_cells(n, d, {(i, j): 1 for i in range(n) for j in range(d) if (i + j) % 2})
    first = Layer.make(n, d, W=W, h=h, b2=b2, mode=mode)
    second = Layer.make(n, d, W=Grid.identity(d), h=h, mode=mode)
    return Model(n, d, n, d, (first, second))


def _layers(m: Model, dtype=torch.float64) -> list[LayerPlan]:
    return model_plan(m, float_numbers(None)).on(torch.device("cpu"), dtype)


def test_derived_tensors_are_computed_once():
    lp = _layers(_model())[0]
    assert lp.kernel_dense() is lp.kernel_dense()
    assert lp.rows() is lp.rows()
    assert lp.tap_channels() == lp.tap_channels()
    dense = lp.kernel_dense()
    assert dense.shape == (lp.inner_n, lp.taps.shape[1])
    assert torch.equal(dense[torch.tensor(lp.lags)], lp.taps)


def test_moved_plan_starts_with_empty_caches():
    lp = _layers(_model())[0]
    lp.exact_in["float32"] = True
    moved = lp.to(torch.device("cpu"), torch.float32)
    assert moved.exact_in == {} and moved.fft_kernels == {} and moved.programs == {}
    assert moved.abs_plan is None and moved.native is None
    assert moved.kernel_dense().dtype == torch.float32


def test_fft_kernel_transforms_are_cached_per_size_and_reused():
    m = _model(n=16, lags=9)
    plan = model_plan(m, float_numbers(None))
    u = torch.randn(2, m.n, m.d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    first = run_model(plan, u, "fft")
    lp = plan.on(u.device, u.dtype)[0]
    cache = lp.fft_kernels if lp.tap_channels() is None else lp.fft_span_kernels
    assert list(cache) == [("fft", m.inner_n, torch.float64)]  # cyclic: a transform of size N'
    held = cache[("fft", m.inner_n, torch.float64)]
    again = run_model(plan, u, "fft")
    assert cache[("fft", m.inner_n, torch.float64)] is held
    assert torch.equal(first, again)
    direct = run_model(plan, u, "direct")
    assert torch.allclose(first, direct, rtol=1e-12, atol=1e-12)


def test_programs_are_cached_per_batch_and_bounded():
    m = _model(lags=1, mode="causal")
    layers = _layers(m)
    progs = []
    for b in range(1, _CACHED_BATCHES + 3):
        u = torch.zeros(b, m.n, m.d, dtype=torch.float64)
        progs.append(model_program(layers, m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto"))
    assert all(p is not None for p in progs), "expected a program for every batch size of this model"
    cache = layers[0].programs
    assert len(cache) == _CACHED_BATCHES
    last = _CACHED_BATCHES + 2
    assert all(k[0] == "program" and k[1] == "auto" and k[3] == "torch.float64" for k in cache)
    assert sorted(k[2] for k in cache) == list(range(last - _CACHED_BATCHES + 1, last + 1))  # the oldest went first
    u = torch.zeros(last, m.n, m.d, dtype=torch.float64)
    assert model_program(layers, m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto") is progs[-1]
    other = [lp.to(torch.device("cpu"), torch.float64) for lp in layers]  # equal weights, other plan objects
    other[0].programs.update(cache)
    assert model_program(other, m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto") is not progs[-1]


def test_error_model_caches_are_keyed_by_dtype_and_reused():
    m = _model()
    lp = _layers(m)[0]
    assert _representable(lp, torch.float32) is True  # small integers
    assert lp.exact_in == {"torch.float32": True}
    assert _abs_plan(lp) is _abs_plan(lp) is lp.abs_plan
    assert lp.abs_plan is not None and bool((lp.abs_plan.taps >= 0).all())
    check = numeric_check(m, [[[1, 0, -1]] * m.n], dtype="float32")
    assert check.ok
    assert check == numeric_check(m, [[[1, 0, -1]] * m.n], dtype="float32")


def test_cached_runs_equal_fresh_runs():
    m = _model(n=16, lags=9)
    u = torch.randint(-3, 4, (3, m.n, m.d), generator=torch.Generator().manual_seed(1)).double()
    first = execute(m, u, backend="torch")
    second = execute(m, u, backend="torch")  # every cache filled
    assert torch.equal(first, second)
    exact = execute(m, u.long().tolist())
    want = torch.tensor([[[float(v) for v in row] for row in pt] for pt in exact.tolist()], dtype=torch.float64)
    assert torch.allclose(first, want, rtol=1e-12, atol=1e-9)  # FFT rounding only
