"""The native program interpreter: each operation kind as torch computes it, whole programs as the layer loop."""

from __future__ import annotations

from functools import partial

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symverify import _native  # noqa: E402
from symverify.compiler import compile  # noqa: E402
from symverify.executors import execute  # noqa: E402
from symverify.executors._native_program import library, segments  # noqa: E402
from symverify.executors.program import model_program  # noqa: E402
from symverify.kernel.engines.numbers import float_numbers  # noqa: E402
from symverify.kernel.engines.plan import model_plan  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402
from symverify.library import random_circuit  # noqa: E402

needs_native = pytest.mark.skipif(library() is None, reason=f"no native kernels here: {_native.why_not('program')}")


def run_native(ops: list, dtype: torch.dtype) -> None:
    calls = segments(ops, dtype)
    assert calls is not None
    for call in calls:
        call()


def native_count(ops: list, dtype: torch.dtype) -> int:
    """How many torch calls are left after conversion (every elementwise kind is native)."""
    calls = segments(ops, dtype)
    assert calls is not None
    return sum(1 for c in calls if getattr(c, "func", None).__name__ != "_call")


@needs_native
@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["zero_", "copy_", "add", "mul", "addcmul", "add_", "mul_", "addcmul_", "gather"]),
       st.integers(1, 5), st.integers(1, 9), st.integers(1, 6), st.sampled_from(["chan", "row", "full"]),
       st.sampled_from([torch.float64, torch.float32]), st.integers(0, 10**6))
def test_each_kind_gives_torchs_bits(kind: str, d: int, rows: int, B: int, factor: str, dtype: torch.dtype, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    buf = torch.randn(d, 3 * rows, B, generator=g).to(dtype)
    src = torch.randn(d, 3 * rows, B, generator=g).to(dtype)
    c = {"chan": torch.randn(d, 1, 1, generator=g), "row": torch.randn(d, rows, 1, generator=g),
         "full": torch.randn(d, rows, B, generator=g)}[factor].to(dtype)
    views = (buf[:, rows : 2 * rows], src[:, 2:2 + rows], src[:, rows - 1 : 2 * rows - 1])

    def ops(dst: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> list:
        if kind in ("zero_",):
            return [(dst.zero_, ())]
        if kind in ("copy_", "add_", "mul_"):
            return [(getattr(dst, kind), (a if kind == "copy_" else c,))]
        if kind == "addcmul_":
            return [(dst.addcmul_, (a, c))]
        if kind == "add":
            return [(partial(torch.add, out=dst), (a, b))]
        if kind == "mul":
            return [(partial(torch.mul, out=dst), (a, c))]
        if kind == "addcmul":
            return [(partial(torch.addcmul, out=dst), (a, b, c))]
        idx = torch.randint(0, d, (d,), generator=g).view(-1, 1, 1).expand(dst.shape)
        return [(partial(torch.gather, out=dst), (src[:, 2:2 + rows], 0, idx))]

    want_buf = buf.clone()
    w_views = (want_buf[:, rows : 2 * rows], *views[1:])
    for fn, args in ops(*w_views):
        fn(*args)
    got_ops = ops(*views)
    assert native_count(got_ops, dtype) == 0
    run_native(got_ops, dtype)
    assert torch.equal(buf, want_buf)


@needs_native
@settings(max_examples=20, deadline=None)
@given(st.integers(0, 8), st.integers(1, 8), st.integers(1, 300), st.integers(0, 10**6))
def test_projection_is_exact_on_integers_and_within_its_bound(k: int, dout: int, m: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    w = torch.randint(-3, 4, (k, dout), generator=g).double()
    x = torch.randint(-5, 6, (k, m), generator=g).double()
    got = torch.full((dout, m), float("nan"), dtype=torch.float64)
    run_native([(partial(torch.mm, out=got), (w.T, x))], torch.float64)
    assert torch.equal(got, w.T @ x)  # integer sums below 2^53: every order is exact
    xr = torch.randn(k, m, generator=g, dtype=torch.float64)
    wr = torch.randn(k, dout, generator=g, dtype=torch.float64)
    run_native([(partial(torch.mm, out=got), (wr.T, xr))], torch.float64)
    u = 2.0**-53
    gamma = (k + 1) * u / (1 - (k + 1) * u)  # the error model's bound per dot product of k terms
    exact = (wr.T.to(torch.float64) @ xr)  # float64 too; compare through the absolute computation
    bound = 2 * gamma * (wr.T.abs() @ xr.abs()) + 1e-300
    assert bool(((got - exact).abs() <= bound).all())


def _dense_model(seed: int, L: int = 12) -> Model:
    """A chain of small dense projections, convolutions and products (every op kind of a program)."""
    n, d = 24, 4
    g = torch.Generator().manual_seed(seed)
    layers = []
    for i in range(L):
        W = Grid.from_cells(d, d, {(a, b): int(v) for a in range(d) for b in range(d) if (v := torch.randint(-2, 3, (), generator=g))})
        h = Grid.from_cells(n, d, {(k, j): 1 for k in (0, 1 + i % 3) for j in range(d)})
        layers.append(Layer.make(n, d, W=W, h=h if i % 2 else None, b2=None if i % 2 else Grid.full(n, d, 1), mode="causal"))
    return Model(n, d, n, d, tuple(layers))


@needs_native
@pytest.mark.parametrize("B", [1, 7])
def test_programs_with_and_without_native_segments_agree(B: int, monkeypatch: pytest.MonkeyPatch) -> None:
    for m in (compile(random_circuit(4, 2, 24, 4, seed=3)).model, _dense_model(B)):
        plan = model_plan(m, float_numbers(None))
        u = torch.randint(-2, 3, (B, m.n, m.d), generator=torch.Generator().manual_seed(B)).double()
        prog = model_program(plan.on(u.device, u.dtype), m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto")
        assert prog is not None and prog.calls is not None
        assert len(prog.calls) < len(prog.ops) // 4  # runs of elementwise operations became single calls
        native = prog.run(u)
        calls, prog.calls = prog.calls, None
        plain = prog.run(u)
        prog.calls = calls
        assert torch.equal(native, plain)  # integers: exact either way
        real = torch.randn(B, m.n, m.d, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
        native, prog.calls = prog.run(real), None
        plain, prog.calls = prog.run(real), calls
        torch.testing.assert_close(native, plain, rtol=1e-12, atol=1e-12)


@needs_native
def test_a_changed_weight_changes_the_native_result() -> None:
    m = _dense_model(3, L=6)  # three products: every value an integer far below 2^53
    u = torch.randint(-1, 2, (2, m.n, m.d), generator=torch.Generator().manual_seed(0)).double()
    base = execute(m, u, backend="torch")
    layer = m.layers[4]
    cells = dict(layer.W.nonzero())
    cells[(0, 0)] = layer.W.get(0, 0) + 1  # type: ignore[operator]
    changed = Layer.make(m.inner_n, m.d, W=Grid.from_cells(m.d, m.d, cells), h=layer.h, b1=layer.b1, b2=layer.b2, mode=layer.mode)
    m2 = Model(m.n, m.d, m.inner_n, m.inner_d, (*m.layers[:4], changed, *m.layers[5:]))
    got = execute(m2, u, backend="torch")
    want = execute(m2, u.long().tolist(), backend="exact")
    assert not torch.equal(got, base)
    assert got.tolist() == [[[float(v) for v in row] for row in pt] for pt in want]


def test_without_the_native_library_programs_run_op_by_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMVERIFY_NATIVE", "0")
    assert segments([], torch.float64) is None
    m = compile(random_circuit(4, 2, 24, 4, seed=3)).model
    plan = model_plan(m, float_numbers(None))
    u = torch.randint(-2, 3, (3, m.n, m.d), generator=torch.Generator().manual_seed(2)).double()
    prog = model_program(plan.on(u.device, u.dtype), m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto")
    assert prog is not None and prog.calls is None
    assert segments([], torch.int64) is None
