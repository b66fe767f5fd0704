"""The compiled program (symverify.executors.program) against the generic layer loop and exact evaluation."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

from symverify.compiler import compile  # noqa: E402
from symverify.executors import execute  # noqa: E402
from symverify.executors.program import model_program  # noqa: E402
from symverify.executors.torch_float import FloatArithmetic, run_model  # noqa: E402
from symverify.kernel.engines.kernels import Pool  # noqa: E402
from symverify.kernel.engines.numbers import float_numbers  # noqa: E402
from symverify.kernel.engines.plan import model_plan  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402
from symverify.kernel.semantics import layer as loop  # noqa: E402
from symverify.library import random_circuit  # noqa: E402


def _mask(rng: random.Random, n: int, d: int, density: float = 0.3) -> Grid:
    """A 0/1 positional mask whose nonzero rows lie in a random row range (sometimes none)."""
    r0 = rng.randrange(n)
    r1 = rng.randint(r0, n) if rng.random() > 0.05 else r0
    return Grid.from_cells(n, d, {(i, j): 1 for i in range(r0, r1) for j in range(d) if rng.random() < density})


def _conv_layer(rng: random.Random, n: int, d: int, mode: str) -> Layer:
    """``W = 0``, ``b1`` a mask, ``h`` 1–3 taps (the same on every channel, or per channel), ``b2`` 0 or sparse."""
    lags = rng.sample(range(n), rng.randint(1, min(3, n)))
    same = rng.random() < 0.5
    cells: dict[tuple[int, int], object] = {}
    for k in lags:
        v = rng.choice((1, 1, 2, -1))
        for j in range(d):
            cells[(k, j)] = v if same else rng.choice((0, 1, 1, 3))
    b2 = Grid.from_cells(n, d, {(rng.randrange(n), rng.randrange(d)): rng.choice((1, -2))}) if rng.random() < 0.3 else None
    return Layer.make(n, d, b1=_mask(rng, n, d), h=Grid.from_cells(n, d, cells), b2=b2, mode=mode)


def _channel_map(rng: random.Random, d: int) -> Grid:
    kind = rng.choice(("identity", "xor", "gather"))
    if kind == "identity":
        return Grid.identity(d)
    if kind == "xor":
        s = rng.randrange(1, d) if d > 1 else 0
        cells = {(j, j): 1 for j in range(d)}
        for j in range(d):
            if j ^ s < d:
                cells[(j ^ s, j)] = 1
        return Grid.from_cells(d, d, cells)
    return Grid.from_cells(d, d, {(rng.randrange(d), j): 1 for j in range(d) if rng.random() < 0.8})


def _mix_layer(rng: random.Random, n: int, d: int, mode: str) -> Layer:
    """``h = 0``, ``b2`` a mask, ``W`` a sparse channel map, ``b1`` mostly 0."""
    b1 = Grid.from_cells(n, d, {(rng.randrange(n), rng.randrange(d)): 1}) if rng.random() < 0.2 else None
    return Layer.make(n, d, W=_channel_map(rng, d), b1=b1, b2=_mask(rng, n, d), mode=mode)


def _general_layer(rng: random.Random, n: int, d: int, mode: str) -> Layer:
    """Both branches on the state (a product), a dense ``W``, or both branches constant."""
    kind = rng.choice(("product", "dense", "constants"))
    if kind == "constants":
        return Layer.make(n, d, b1=_mask(rng, n, d, 0.8), b2=Grid.full(n, d, 1), mode=mode)
    h = Grid.from_cells(n, d, {(0, j): 1 for j in range(d)})
    W = _channel_map(rng, d)
    if kind == "dense":
        W = Grid.from_cells(d, d, {(i, j): rng.choice((0, 1, -1)) for i in range(d) for j in range(d)})
        h = Grid.zeros(n, d)
    return Layer.make(n, d, W=W, h=h if kind == "product" else None, b2=Grid.full(n, d, 1) if kind == "dense" else None, mode=mode)


def synthetic(seed: int, n: int, d: int, inner_n: int, layers: int, mode: str) -> Model:
    """A model of conv and mix layers (the shapes the compiler writes), with a few general ones."""
    rng = random.Random(seed)
    out = []
    for i in range(layers):
        m = mode if mode != "mixed" else rng.choice(("cyclic", "causal"))
        pick = rng.random()
        make = _conv_layer if pick < 0.45 else _mix_layer if pick < 0.9 or i > 3 else _general_layer
        out.append(make(rng, inner_n, d, m))
    return Model(n, d, inner_n, d, tuple(out))


def _loop(m: Model, x: torch.Tensor) -> torch.Tensor:
    plan = model_plan(m, float_numbers(None))
    return loop.run_model(m, plan.on(x.device, x.dtype), x, FloatArithmetic("auto", Pool()))


def _ints(seed: int, b: int, n: int, d: int) -> torch.Tensor:
    return torch.randint(-3, 4, (b, n, d), generator=torch.Generator().manual_seed(seed)).double()


@pytest.mark.parametrize("mode", ["cyclic", "causal", "mixed"])
@pytest.mark.parametrize("seed", range(4))
def test_synthetic_program_equals_loop_and_exact(mode, seed):
    m = synthetic(seed, 5, 3, 16, 24, mode)
    plan = model_plan(m, float_numbers(None))
    for b in (1, 3, 1):  # a batch size again: the cached program's buffers are reused
        u = _ints(seed * 10 + b, b, 5, 3)
        assert model_program(plan.on(u.device, u.dtype), m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto") is not None
        got = run_model(plan, u)
        assert torch.equal(got, _loop(m, u))
        exact = execute(m, u.long().tolist(), backend="exact")
        assert got.tolist() == [[[float(v) for v in row] for row in pt] for pt in exact.tolist()]
        real = torch.randn(b, 5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(seed + b))
        assert torch.equal(run_model(plan, real), _loop(m, real))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_program_float_dtypes_equal_loop(dtype):
    m = synthetic(7, 6, 4, 32, 40, "mixed")
    plan = model_plan(m, float_numbers(None))
    u = torch.randn(4, 6, 4, generator=torch.Generator().manual_seed(1)).to(dtype)
    assert torch.equal(run_model(plan, u), _loop(m, u))


def test_compiled_model_program_equals_loop_and_exact():
    m = compile(random_circuit(4, 2, 24, 4, seed=3)).model
    plan = model_plan(m, float_numbers(None))
    for b in (1, 5):
        u = _ints(b, b, m.n, m.d)
        assert model_program(plan.on(u.device, u.dtype), m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto") is not None
        got = execute(m, u, backend="torch")
        assert torch.equal(got, _loop(m, u))
        exact = torch.tensor([[[float(v) for v in row] for row in pt] for pt in execute(m, u.long().tolist(), backend="exact").tolist()],
                             dtype=torch.float64)
        assert torch.allclose(got, exact, rtol=1e-12, atol=1e-9)  # rational weights: float64 rounds
        real = torch.randn(b, m.n, m.d, dtype=torch.float64, generator=torch.Generator().manual_seed(b))
        assert torch.equal(execute(m, real, backend="torch"), _loop(m, real))


def test_fft_layers_do_not_compile():
    m = synthetic(1, 5, 3, 16, 8, "cyclic")
    u = _ints(0, 2, 5, 3)
    layers = model_plan(m, float_numbers(None)).on(u.device, u.dtype)
    assert model_program(layers, m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "fft") is None
    assert model_program(layers, m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "sparse") is not None


def test_causal_layer_after_cyclic_halo_reads_zeros():
    """A cyclic shift fills a buffer's halo with wrapped rows; a later causal shift of that buffer reads zeros there."""
    n = 6
    ones = Grid.full(n, 1, 1)
    shift = Grid.from_cells(n, 1, {(2, 0): 1})
    cyc = Layer.make(n, 1, b1=ones, h=shift, mode="cyclic")
    mix = Layer.make(n, 1, W=Grid.identity(1), b2=ones, mode="cyclic")
    cau = Layer.make(n, 1, b1=ones, h=shift, mode="causal")
    m = Model(n, 1, n, 1, (cyc, mix, cau, mix, cyc, mix, cau))
    u = torch.arange(1.0, n + 1, dtype=torch.float64).reshape(1, n, 1)
    for _ in range(2):
        got = run_model(model_plan(m, float_numbers(None)), u)
        assert torch.equal(got, _loop(m, u))
        assert got.flatten().tolist() == [0.0, 0.0, 1.0, 2.0, 0.0, 0.0]


def blocks(seed: int, s: int, d: int, layers: int, mode: str) -> Model:
    """The compiler's layout: three row blocks at 0, S, 2S (R = 2S/3 rows, then zero gap rows); conv
    layers with taps at multiples of S or S ± t and masks over block rows (0/±1 or other
    coefficients), mix layers ``W = I + P`` (channel XOR) or a 0/1 gather, gated by a mask."""
    rng = random.Random(seed)
    n, r = 3 * s, 2 * s // 3
    live = [i for b in range(3) for i in range(b * s, b * s + r)]

    def mask(values: tuple[object, ...]) -> Grid:
        rows = rng.sample(live, rng.randint(0, len(live) // 2))
        return Grid.from_cells(n, d, {(i, j): rng.choice(values) for i in rows for j in range(d) if rng.random() < 0.7})

    out = []
    for _ in range(layers):
        m = mode if mode != "mixed" else rng.choice(("cyclic", "causal"))
        if rng.random() < 0.5:
            lags = rng.sample([0, s, 2 * s, s + 1, s - 2], rng.randint(1, 3))
            h = Grid.from_cells(n, d, {(k, j): rng.choice((1, 1, 0, 2)) for k in lags for j in range(d)})
            b1 = mask((1, 1, -1) if rng.random() < 0.6 else (1, -2, 3))
            b2 = Grid.from_cells(n, d, {(rng.choice(live), rng.randrange(d)): 1}) if rng.random() < 0.2 else None
            out.append(Layer.make(n, d, b1=b1, h=h, b2=b2, mode=m))
        else:
            out.append(Layer.make(n, d, W=_channel_map(rng, d), b2=mask((1,)), mode=m))
    return Model(s // 2, d, n, d, tuple(out))


@pytest.mark.parametrize("mode", ["cyclic", "causal", "mixed"])
@pytest.mark.parametrize("seed", range(3))
def test_block_layout_program_equals_loop_and_exact(mode, seed):
    m = blocks(seed, 12, 4, 40, mode)
    plan = model_plan(m, float_numbers(None))
    for b in (1, 6):
        u = _ints(seed + b, b, m.n, m.d)
        assert model_program(plan.on(u.device, u.dtype), m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto") is not None
        got = run_model(plan, u)
        assert torch.equal(got, _loop(m, u))
        exact = execute(m, u.long().tolist(), backend="exact")
        assert got.tolist() == [[[float(v) for v in row] for row in pt] for pt in exact.tolist()]
        for dtype in (torch.float32, torch.float64):
            real = torch.randn(b, m.n, m.d, generator=torch.Generator().manual_seed(seed)).to(dtype)
            assert torch.equal(run_model(plan, real), _loop(m, real))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compiled_model_program_dtypes_equal_loop(dtype):
    m = compile(random_circuit(8, 4, 48, 6, seed=5)).model
    plan = model_plan(m, float_numbers(None))
    for b in (1, 16):
        u = torch.randn(b, m.n, m.d, generator=torch.Generator().manual_seed(b)).to(dtype)
        assert model_program(plan.on(u.device, u.dtype), m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto") is not None
        assert torch.equal(run_model(plan, u), _loop(m, u))
