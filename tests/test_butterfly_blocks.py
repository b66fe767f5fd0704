"""compile_torch's three forms of one butterfly product: stage by stage, fused into dense blocks, one dense matrix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kaleidoscope import apply_batch, compile_numpy, compile_torch
from symverify.kaleidoscope._torch_module import BLOCK_MAX_N, _run_layout, _run_stages, use_blocks, use_dense
from symverify.kaleidoscope.numeric import twiddles
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides


def random_bbstar(N: int, seed: int, lo: int = -3, hi: int = 4) -> BBStar:
    rng = np.random.default_rng(seed)
    fs = [ButterflyFactor(N, s, *map(tuple, rng.integers(lo, hi, size=(4, N // 2)).tolist())) for s in bbstar_strides(N)]
    return BBStar(N, tuple(fs))


def stage_form(m: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The module's stage form on ``x (B, N)`` (the path a trace takes)."""
    bufs = dict(m.named_buffers())
    return _run_layout([(tr, s, bufs[f"t0_{k}"], bufs[f"t1_{k}"]) for k, (tr, s) in enumerate(m._layout)], x, m.size)


def natural_stage_form(bb: BBStar, x: torch.Tensor) -> torch.Tensor:
    """The stages in the natural layout (every stage on the untransposed state)."""
    st = [(s, torch.from_numpy(t0), torch.from_numpy(t1)) for s, t0, t1 in twiddles(bb)]
    return _run_stages(st, x)


def forms(m: torch.nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    """The module's call, and each of its three forms run explicitly."""
    out = [m(x), stage_form(m, x), m._run_blocks(x)]
    return [*out, x @ m.dense(x.dtype, x.device)] if m.size <= 512 else out


def test_the_block_rule() -> None:
    assert use_blocks(256, 1) and use_blocks(1024, 1) and not use_blocks(1024, 16) and not use_blocks(4096, 16)
    assert not use_blocks(16384, 16) and use_blocks(16384, 256) and not use_blocks(2 * BLOCK_MAX_N, 10**6)
    assert not use_blocks(2, 100)
    assert use_dense(64, 10**4) and use_dense(512, 8) and not use_dense(512, 9) and not use_dense(1024, 1)


@pytest.mark.parametrize(("N", "B"), [(4, 3), (8, 1), (64, 5), (2048, 1), (2048, 16), (512, 2)])
def test_blocks_agree_with_stages_and_numpy(N: int, B: int) -> None:
    bb = random_bbstar(N, seed=N + B, lo=-2, hi=3)
    m = compile_torch(bb)
    x = torch.from_numpy(np.random.default_rng(B).standard_normal((B, N)))
    want = compile_numpy(bb).apply(x.numpy())
    scale = max(1.0, float(np.abs(want).max()))
    for got in forms(m, x):
        assert float(np.abs(got.numpy() - want).max()) <= 1e-12 * scale
    assert torch.equal(stage_form(m, x), natural_stage_form(bb, x))  # the transposed layout rounds identically
    got32 = compile_torch(bb, dtype="float32")(x)
    assert got32.dtype == torch.float32 and float(np.abs(got32.double().numpy() - want).max()) <= 1e-4 * scale


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([4, 16, 64]), st.integers(1, 4), st.integers(0, 10**6))
def test_blocks_are_exact_on_small_integers(N: int, B: int, seed: int) -> None:
    """Entries in {-1, 0, 1}, N ≤ 64: every block entry and partial sum is an integer below 2^53."""
    bb = random_bbstar(N, seed, -1, 2)
    xs = np.random.default_rng(seed).integers(-5, 6, size=(B, N)).tolist()
    want = apply_batch(bb, xs)
    for got in forms(compile_torch(bb), torch.tensor(xs, dtype=torch.float64)):
        assert got.tolist() == want


def test_a_changed_twiddle_changes_the_block_result() -> None:
    bb = random_bbstar(64, 1)
    f = bb.factors[3]
    d1 = (f.d1[0] + 1, *f.d1[1:])
    mutated = BBStar(64, (*bb.factors[:3], ButterflyFactor(64, f.stride, d1, f.d2, f.d3, f.d4), *bb.factors[4:]))
    x = torch.eye(64, dtype=torch.float64)
    for a, b in zip(forms(compile_torch(bb), x), forms(compile_torch(mutated), x)):
        assert not torch.equal(a, b)


def test_kaleidoscope_corner_and_cast_and_trace() -> None:
    k = Kaleidoscope(5, 8, (random_bbstar(8, 2), random_bbstar(8, 3)))
    m = compile_torch(k)
    x = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    want = np.array(apply_batch(k, x.tolist()), dtype=float)
    assert np.allclose(m(x).numpy(), want, rtol=1e-12, atol=1e-12)
    assert np.allclose(m.to(torch.float32)(x).double().numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())  # float32: error relative to the largest entry
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("error", torch.jit.TracerWarning)
        traced = torch.jit.trace(compile_torch(k), torch.ones(4, 5, dtype=torch.float64))
    assert torch.allclose(traced(x), m.double()(x), rtol=1e-12, atol=1e-12)


def test_unknown_parameter_names_are_errors():
    """A name that is no parameter of the product was ignored; now twiddles (and the compilers on
    it) refuse it and list the product's parameters."""
    from symverify.errors import IRError
    from symverify.kernel.ir.scalar import sym

    f = ButterflyFactor(2, 1, (sym("a"),), (1,), (0,), (1,))
    bb = BBStar(2, (f, ButterflyFactor(2, 1, (1,), (0,), (0,), (1,))))
    twiddles(bb, params={"a": 2})
    with pytest.raises(IRError, match=r"params: 'aa' not among the parameters of the kaleidoscope \(a\)"):
        twiddles(bb, params={"a": 2, "aa": 3})
    with pytest.raises(IRError, match=r"params: 'aa' not among"):
        compile_numpy(bb, params={"a": 2, "aa": 3})
    with pytest.raises(IRError, match=r"'x' not among the parameters of the kaleidoscope \(none\)"):
        twiddles(random_bbstar(4, 0), params={"x": 1})
