"""Batched float / mod-p application (numpy, torch) against the exact kernel; Factorization inputs."""

from __future__ import annotations

import importlib.util
import itertools
import pathlib
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import BackendUnavailableError, IRError, ShapeError
from symverify.kaleidoscope import (
    Factorization,
    SparseMatrix,
    apply,
    apply_batch,
    compile_numpy,
    compile_torch,
    materialize,
    permutation_to_kaleidoscope,
    sparse_to_kaleidoscope,
    to_matrix,
)
from symverify.kaleidoscope.numeric import stages_of
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope, bbstar_strides
from symverify.kernel.kaleidoscope.apply import corner, factors_of
from symverify.kernel.semantics.rings import ModRing

P = 2**31 - 1
SMALL_INTS = st.integers(-3, 3)
RATIONALS = st.sampled_from([0, 1, -1, 2, 3, Fraction(1, 2), Fraction(-5, 3), Fraction(7, 4)])
SIZES = st.sampled_from([2, 4, 8, 16])


def factor(draw, size: int, stride: int, values) -> ButterflyFactor:
    return ButterflyFactor(size, stride, *[tuple(draw(st.lists(values, min_size=size // 2, max_size=size // 2))) for _ in range(4)])


@st.composite
def butterflies(draw, values=SMALL_INTS):
    """A random BB* element, factor list (any strides, any length) or kaleidoscope, N = 2 … 16."""
    size = draw(SIZES)
    strides = [1 << k for k in range(size.bit_length() - 1)]
    shape = draw(st.sampled_from(["bbstar", "factors", "kaleidoscope"]))
    if shape == "factors":
        picked = draw(st.lists(st.sampled_from(strides), min_size=0, max_size=6))
        return FactorList(size, tuple(factor(draw, size, s, values) for s in picked))
    groups = [BBStar(size, tuple(factor(draw, size, s, values) for s in bbstar_strides(size)))
              for _ in range(draw(st.integers(1, 2)))]
    if shape == "bbstar":
        return groups[0]
    return Kaleidoscope(draw(st.integers(1, size)), size, tuple(groups))


def inputs(draw, n: int, batch: int, values=SMALL_INTS) -> list[list]:
    return [draw(st.lists(values, min_size=n, max_size=n)) for _ in range(batch)]


@settings(max_examples=40)
@given(butterflies(), st.integers(1, 3), st.data())
def test_small_integers_are_exact_in_float64(obj, batch, data):
    """|entries| ≤ 3, ≤ 8 stages of N ≤ 16: every intermediate is an integer below 2**53."""
    xs = inputs(data.draw, corner(obj)[1], batch)
    want = apply_batch(obj, xs)
    assert compile_numpy(obj).apply(np.array(xs)).tolist() == want
    got = compile_torch(obj)(torch.tensor(xs, dtype=torch.float64))
    assert got.tolist() == want


@settings(max_examples=40)
@given(butterflies(RATIONALS), st.data())
def test_rationals_agree_to_round_off(obj, data):
    xs = inputs(data.draw, corner(obj)[1], 2, RATIONALS)
    want = np.array([[float(v) for v in row] for row in apply_batch(obj, xs)])
    x = np.array([[float(v) for v in row] for row in xs])
    scale = max(1.0, float(np.max(np.abs(want))))
    for got, tol in (
        (compile_numpy(obj).apply(x), 1e-12),
        (compile_torch(obj)(torch.tensor(x)).numpy(), 1e-12),
        (compile_numpy(obj, dtype="float32").apply(x), 1e-4),
        (compile_torch(obj, dtype="float32")(torch.tensor(x)).numpy(), 1e-4),
    ):
        assert got.shape == want.shape
        assert np.max(np.abs(got - want), initial=0.0) <= tol * scale


@settings(max_examples=25)
@given(butterflies(RATIONALS), st.data())
def test_modular_path_is_exact(obj, data):
    xs = inputs(data.draw, corner(obj)[1], 3, st.integers(-50, 50))
    ring = ModRing(P)
    assert compile_numpy(obj, "mod", p=P).apply(np.array(xs)).tolist() == apply_batch(obj, [[v % P for v in x] for x in xs], ring)


def test_size_two_and_dtypes():
    f = ButterflyFactor(2, 1, (1,), (2,), (3,), (4,))
    assert compile_numpy(f).apply([1, 1]).tolist() == [3.0, 7.0]
    assert compile_numpy(f, dtype="float32").apply(np.ones((4, 2))).dtype == np.float32
    out = compile_torch(f, dtype="float32")(torch.ones(2, 2, 2, dtype=torch.float64))
    assert out.dtype == torch.float32 and out.shape == (2, 2, 2) and out[1, 1].tolist() == [3.0, 7.0]
    assert compile_torch(f)(torch.ones(2)).tolist() == [3.0, 7.0]


def test_inputs_are_not_modified_and_identities_cost_nothing():
    k = Kaleidoscope(3, 4, (BBStar.identity(4),))
    prog = compile_numpy(k)
    assert prog.stages == () and repr(prog) == "NumpyProgram(n=3, size=4, 0 stages, float64)"
    x = np.array([[1.0, 2.0, 3.0]])
    assert prog.apply(x).tolist() == [[1.0, 2.0, 3.0]]
    bb = BBStar(4, (ButterflyFactor(4, 2, (2, 2), (1, 0), (0, 1), (1, 1)), *BBStar.identity(4).factors[1:]))
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert compile_numpy(bb).apply(y).tolist() == [float(v) for v in apply(bb, [1, 2, 3, 4])]
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0]


@settings(max_examples=20)
@given(butterflies(RATIONALS))
def test_stages_merge_runs_of_one_stride_exactly(obj):
    merged = stages_of(factors_of(obj)[1])
    assert all(a.stride != b.stride for a, b in itertools.pairwise(merged))
    assert not any(f.is_identity() for f in merged)
    size = corner(obj)[0]
    assert to_matrix(FactorList(size, tuple(merged))) == to_matrix(FactorList(size, factors_of(obj)[1]))
    if isinstance(obj, BBStar):
        assert len(merged) <= 2 * (size.bit_length() - 1) - 1


def factorizations() -> list[Factorization]:
    return [
        sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2, 0], [0, 3, 0], [4, 0, Fraction(1, 2)]])),
        permutation_to_kaleidoscope([2, 0, 3, 1, 4]),
    ]


@pytest.mark.parametrize("f", factorizations(), ids=["sparse", "permutation"])
def test_every_path_takes_a_factorization(f):
    """A Factorization is applied as its kaleidoscope: same corner, same values on every path."""
    k = f.kaleidoscope
    n = k.n
    xs = [[j + 1 for j in range(n)], [(-1) ** j * j for j in range(n)]]
    want = apply_batch(k, xs)
    assert apply_batch(f, xs) == want and apply(f, xs[0]) == want[0]
    assert to_matrix(f) == to_matrix(k) and materialize(f) == materialize(k)
    assert np.allclose(compile_numpy(f).apply(np.array(xs)), np.array(want, dtype=float), rtol=1e-12, atol=0)
    assert compile_numpy(f, "mod", p=P).apply(np.array(xs)).tolist() == apply_batch(k, [[v % P for v in x] for x in xs], ModRing(P))
    assert np.allclose(compile_torch(f)(torch.tensor(xs, dtype=torch.float64)).numpy(), np.array(want, dtype=float), rtol=1e-12, atol=0)


def test_torch_module_traces_and_moves():
    f = factorizations()[0]
    m = compile_torch(f, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch ≥ 2.9 deprecates jit.trace itself
        warnings.simplefilter("error", torch.jit.TracerWarning)  # the traced graph is generic in the batch
        traced = torch.jit.trace(m, torch.ones(4, f.kaleidoscope.n, dtype=torch.float64))
    x = torch.randn(7, f.kaleidoscope.n, dtype=torch.float64)
    assert torch.equal(traced(x), m(x))
    stages = compile_numpy(f).stages
    # one buffer per stage; stages of small stride are stored in the transposed layout they run in
    assert [b.numel() for name, b in m.named_buffers() if name.startswith("t0_")] == [t0.size for _, t0, _ in stages]
    assert "n=3, size=16" in repr(m)
    assert m.to(torch.float32)(x).dtype == torch.float32  # .to() moves and casts the twiddle buffer


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_torch_module_on_cuda():
    f = factorizations()[0]
    x = torch.randn(5, f.kaleidoscope.n, dtype=torch.float64)
    got = compile_torch(f, device="cuda")(x.cuda()).cpu()
    assert torch.allclose(got, compile_torch(f)(x), rtol=1e-12, atol=1e-12)


def test_missing_torch_is_a_backend_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "symverify.kaleidoscope._torch_module", raising=False)
    with pytest.raises(BackendUnavailableError, match="compile_torch needs PyTorch"):
        compile_torch(BBStar.identity(2))


@pytest.mark.parametrize(
    "call, err, match",
    [
        (lambda: apply(3, [1]), IRError, "expected a ButterflyFactor, BBStar, FactorList, Kaleidoscope or Factorization, found int"),
        (lambda: compile_numpy("bb"), IRError, "Kaleidoscope or Factorization, found str"),
        (lambda: compile_torch([ButterflyFactor.identity(2, 1)]), IRError, "Kaleidoscope or Factorization, found list"),
        (lambda: compile_numpy(BBStar.identity(4), dtype="float16"), IRError, "dtype must be 'float64' or 'float32', found 'float16'"),
        (lambda: compile_torch(BBStar.identity(4), dtype="bfloat16"), IRError, "compile_torch: dtype must be"),
        (lambda: compile_torch(Kaleidoscope.identity(3, 4))(torch.zeros(2, 4)), ShapeError, r"last axis of length 3, found shape \(2, 4\)"),
        (lambda: compile_numpy(BBStar.identity(4)).apply(np.zeros((2, 2, 4))), ShapeError, r"expected shape \(4,\) or \(batch, 4\), found \(2, 2, 4\)"),
    ],
)
def test_numeric_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


def load_benchmark():
    path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "butterfly.py"
    spec = importlib.util.spec_from_file_location("butterfly_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_reference_is_the_same_product(capsys, monkeypatch):
    """The torch_butterfly-layout reference computes exactly our BB* on small integers; the table runs."""
    bench = load_benchmark()
    for N in (2, 8):
        bb = bench.random_bbstar(N, seed=N)
        xs = [[j - 2 for j in range(N)], [1] * N]
        got = bench.reference_multiply(torch.from_numpy(bench.reference_twiddle(bb)), torch.tensor(xs, dtype=torch.float64))
        assert got.tolist() == apply_batch(bb, xs)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the benchmark puts BUTTERFLY_SRC on the path
    monkeypatch.setenv("BUTTERFLY_SRC", "/nonexistent/butterfly")
    bench.batched_table(range(2, 3), [1])
    out = capsys.readouterr().out
    assert "np/ref" in out and "No module named 'torch_butterfly'" in out
