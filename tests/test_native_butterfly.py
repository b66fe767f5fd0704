"""The native butterfly kernel: the same bits as the torch stage form, and a clean fallback without it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify import _native
from symverify.errors import ShapeError
from symverify.kaleidoscope import compile_numpy, compile_torch
from symverify.kaleidoscope._native_butterfly import SOURCE, bind, library
from symverify.kaleidoscope._torch_module import _run_stages
from symverify.kaleidoscope.numeric import twiddles
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides

needs_native = pytest.mark.skipif(library() is None, reason=f"no native kernels here: {_native.why_not('butterfly')}")


def random_bbstar(N: int, seed: int, lo: int = -3, hi: int = 4) -> BBStar:
    rng = np.random.default_rng(seed)
    fs = [ButterflyFactor(N, s, *map(tuple, rng.integers(lo, hi, size=(4, N // 2)).tolist())) for s in bbstar_strides(N)]
    return BBStar(N, tuple(fs))


def stage_form(obj: object, x: torch.Tensor) -> torch.Tensor:
    """The natural torch stage form (a multiply and a multiply-add per stage) in ``x``'s dtype."""
    st_ = [(s, torch.from_numpy(t0).to(x.dtype), torch.from_numpy(t1).to(x.dtype)) for s, t0, t1 in twiddles(obj)]  # type: ignore[arg-type]
    return _run_stages(st_, x)


@needs_native
@settings(max_examples=20, deadline=None)
@given(st.integers(1, 11), st.integers(0, 9), st.sampled_from(["float64", "float32"]), st.integers(0, 10**6))
def test_native_equals_the_stage_form_bit_for_bit(k: int, B: int, dtype: str, seed: int) -> None:
    N = 1 << k
    bb = random_bbstar(N, seed)
    m = compile_torch(bb, dtype=dtype)  # type: ignore[arg-type]
    assert m.native(getattr(torch, dtype)) is not None
    x = torch.from_numpy(np.random.default_rng(seed).standard_normal((B, N))).to(getattr(torch, dtype))
    got = m(x)
    assert got.dtype == x.dtype and got.shape == (B, N)
    assert torch.equal(got, stage_form(bb, x))


@needs_native
def test_native_kaleidoscope_corner_and_leading_axes() -> None:
    N, n = 64, 37
    k = Kaleidoscope(n, N, (random_bbstar(N, 1), random_bbstar(N, 2)))
    m = compile_torch(k)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((2, 3, n)))
    got = m(x)
    padded = torch.nn.functional.pad(x.reshape(6, n), (0, N - n))
    assert got.shape == (2, 3, n) and torch.equal(got.reshape(6, n), stage_form(k, padded)[:, :n])
    np.testing.assert_allclose(got.numpy(), compile_numpy(k).apply(x.numpy().reshape(6, n)).reshape(2, 3, n), rtol=1e-12, atol=1e-9)
    assert torch.equal(m(x.float()), m(x.float().double()))  # inputs are cast to the module's dtype first
    assert torch.equal(m(x[0, 1]), got[0, 1])


@needs_native
def test_native_on_integers_is_exact_and_a_changed_twiddle_shows() -> None:
    bb = random_bbstar(32, 3)  # entries in -3..3 over 9 stages: every value an integer below 2^53
    xs = torch.randint(-5, 6, (4, 32), generator=torch.Generator().manual_seed(0)).double()
    want = stage_form(bb, xs)
    assert torch.equal(compile_torch(bb)(xs), want)
    f = bb.factors[0]
    mutated = BBStar(32, (ButterflyFactor(32, f.stride, (f.d1[0] + 1, *f.d1[1:]), f.d2, f.d3, f.d4), *bb.factors[1:]))
    eye = torch.eye(32, dtype=torch.float64)
    assert not torch.equal(stage_form(mutated, eye), stage_form(bb, eye))  # the change reaches the output
    assert torch.equal(compile_torch(mutated)(eye), stage_form(mutated, eye))
    assert not torch.equal(compile_torch(mutated)(eye), compile_torch(bb)(eye))


@needs_native
def test_kernel_rejects_a_wrong_buffer() -> None:
    bb = random_bbstar(16, 0)
    kern = bind(16, [s for s, _, _ in twiddles(bb)], [(a, b) for _, a, b in twiddles(bb)], torch.float64)
    assert kern is not None
    y = torch.zeros(3, 16, dtype=torch.float64)
    kern(y)  # a right buffer is fine
    for bad in (torch.zeros(3, 8, dtype=torch.float64), torch.zeros(3, 16), torch.zeros(16, 3, dtype=torch.float64).t()):
        with pytest.raises(ShapeError, match=r"native butterfly kernel: expected a contiguous CPU \(16-column\)"):
            kern(bad)
    assert bind(16, [s for s, _, _ in twiddles(bb)], [(a, b) for _, a, b in twiddles(bb)], torch.int64) is None


def test_disabled_native_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMVERIFY_NATIVE", "0")
    assert not _native.enabled() and _native.why_not("anything") == "disabled by SYMVERIFY_NATIVE"
    bb = random_bbstar(64, 5)
    m = compile_torch(bb)
    assert m.native(torch.float64) is None
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((3, 64)))
    np.testing.assert_allclose(m(x).numpy(), compile_numpy(bb).apply(x.numpy()), rtol=1e-12, atol=1e-9)


def test_a_failing_compiler_is_a_clean_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("SYMVERIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert _native.load("test_missing_cc", SOURCE) is None
    assert "FileNotFoundError" in (_native.why_not("test_missing_cc") or "")
    monkeypatch.setenv("CC", "false")  # a compiler that fails
    assert _native.load("test_failing_cc", SOURCE) is None
    assert "exited with 1" in (_native.why_not("test_failing_cc") or "")


@needs_native
def test_hooks_traces_and_gradients_still_work() -> None:
    bb = random_bbstar(16, 7)
    m = compile_torch(bb)
    x = torch.from_numpy(np.random.default_rng(2).standard_normal((2, 16)))
    seen = []
    handle = m.register_forward_hook(lambda mod, args, out: seen.append(out))
    out = m(x)
    handle.remove()
    assert len(seen) == 1 and torch.equal(seen[0], out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit.trace is deprecated in torch 2.13, still supported
        traced = torch.jit.trace(m, x)
    torch.testing.assert_close(traced(x), out, rtol=1e-12, atol=1e-9)
    xg = x.clone().requires_grad_(True)
    yg = m(xg)  # a differentiable input runs the torch stage form
    assert yg.requires_grad
    yg.sum().backward()
    assert xg.grad is not None and xg.grad.shape == x.shape


@needs_native
def test_a_large_batch_split_over_threads_gives_the_same_bits() -> None:
    bb = random_bbstar(1024, 4)
    m = compile_torch(bb)
    x = torch.from_numpy(np.random.default_rng(3).standard_normal((203, 1024)))  # 1.6 MiB: split when threads > 1
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        split = m(x)
        torch.set_num_threads(1)
        whole = m(x)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(split, whole) and torch.equal(whole, stage_form(bb, x))


def test_a_used_module_pickles_copies_and_saves() -> None:
    import copy
    import io
    import pickle

    bb = random_bbstar(64, 6)
    m = compile_torch(bb)
    x = torch.from_numpy(np.random.default_rng(4).standard_normal((2, 64)))
    y = m(x)  # binds the native kernel where there is one
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    for other in (copy.deepcopy(m), pickle.loads(pickle.dumps(m)), torch.load(buf, weights_only=False)):
        assert torch.equal(other(x), y)


def test_kernels_load_only_when_torch_addcmul_fuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a CPU where torch rounds the product first, the kernels stay unloaded (torch's bits rule)."""
    monkeypatch.setattr(_native, "_fuses", False)
    monkeypatch.setattr(_native, "_libs", {})
    monkeypatch.setattr(_native, "_why", {})
    assert _native.load("test_no_fma", "int f(void) { return 1; }") is None
    assert "fused multiply-add" in (_native.why_not("test_no_fma") or "")


def test_fma_probe_agrees_with_torch() -> None:
    """The probe says "fuses" only if torch's float64 addcmul really rounds once here."""
    a, b = torch.tensor([-1.0], dtype=torch.float64), torch.tensor([1.0 + 2.0 ** -30], dtype=torch.float64)
    fused = bool(torch.equal(torch.addcmul(a, b, b), torch.tensor([2.0 ** -29 + 2.0 ** -60], dtype=torch.float64)))
    if not fused:
        assert not _native.torch_addcmul_fuses()
    if _native.torch_addcmul_fuses():
        assert (fused and library() is not None) or _native.why_not("butterfly") is not None
