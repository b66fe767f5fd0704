"""Attacks on the float paths as a user would make them: odd dtypes, strided, expanded, reversed
and empty inputs, inputs on other devices, integer tensors, batches too large for the machine,
inference mode, values at the edges of the float range, NaN and infinities.

Each attack ends in a clear ``SymverifyError`` naming what was expected and what was found, or in
a result: the same bits as the plain contiguous input gives, and within ``numeric_check``'s bound
of the exact value where the input is exact."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.errors import BackendUnavailableError, CompileError, IRError, LimitError, ShapeError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate
from symverify.kernel.ir.grid import Grid

torch = pytest.importorskip("torch")

from symverify import executors  # noqa: E402
from symverify.executors import execute, numeric_check, to_torch  # noqa: E402
from symverify.ir.limits import allocation_limit, out_of_memory  # noqa: E402

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
DTYPES = ("float64", "float32", "bfloat16")
HUGE_B = 10**13  # an expanded view: no memory of its own, states of 10^13·N'·d' values


def _model(pad: int = 0) -> Model:
    """Two layers on a 3×2 input (state (3 + pad)×(2 + pad)), dense W, shifts and a bias."""
    nn, dd = 3 + pad, 2 + pad
    W = Grid.from_rows([[1 if i == j else Fraction(1, 3) for j in range(dd)] for i in range(dd)])
    h = Grid.from_rows([[1] * dd, [Fraction(-1, 2)] * dd] + [[0] * dd for _ in range(nn - 2)])
    b2 = Grid.full(nn, dd, Fraction(1, 7))
    return Model(3, 2, nn, dd, (Layer.make(nn, dd, W=W, h=h, b2=b2), Layer.make(nn, dd, W=W, h=h, mode=Mode.CYCLIC)))


M, MP = _model(), _model(1)
SQUARE = Model(2, 2, 2, 2, (Layer.make(2, 2, W=Grid.identity(2), h=Grid.from_rows([[1, 1], [0, 0]])),))
CIRCUIT = Circuit(3, 2, (Gate.mul(0, 1), Gate.lin(6, Fraction(1, 3), 2, 1)), (6, 7))


def _x(b: int = 4, dtype=torch.float64, n: int = 3, d: int = 2):
    g = torch.Generator().manual_seed(b * 31 + n)
    return (torch.randn(b, n, d, generator=g, dtype=torch.float64) * 2).to(dtype)


# --------------------------------------------------------------------------------------------
# batches too large for the machine: LimitError, not the allocator's RuntimeError


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("obj", [M, MP, CIRCUIT], ids=["model", "padded", "circuit"])
def test_a_batch_larger_than_the_machine_is_a_limit_error(obj, dtype):
    x = torch.zeros(1, 3, 2, dtype=torch.float64).expand(HUGE_B, 3, 2)
    with pytest.raises(LimitError, match=rf"input: a batch of {HUGE_B} points needs states of .*{dtype}.*GiB.*smaller batches"):
        execute(obj, x, backend="torch", dtype=dtype)


def test_a_batch_larger_than_the_machine_is_a_limit_error_mod_p():
    x = torch.zeros(1, 3, 2, dtype=torch.int64).expand(HUGE_B, 3, 2)
    with pytest.raises(LimitError, match=r"int64 values .* smaller batches"):
        execute(M, x, backend="modular", p=7)


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_the_module_refuses_a_batch_larger_than_the_machine(grad, dtype):
    x = torch.zeros(1, 3, 2, dtype=dtype).expand(HUGE_B, 3, 2)
    with pytest.raises(LimitError, match=rf"module input: a batch of {HUGE_B} points"):
        to_torch(MP, dtype=dtype, requires_grad=grad)(x)


def test_an_allocation_refused_during_the_run_is_a_limit_error(monkeypatch):
    """A batch within the machine's memory whose run still cannot allocate (several states, other
    processes): the allocator's RuntimeError becomes a LimitError; any other error passes unchanged."""
    def oom(*a: object, **k: object) -> None:
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
                           "you tried to allocate 123 bytes. Error code 12 (Cannot allocate memory)")

    monkeypatch.setattr(executors, "_run_float", oom)
    with pytest.raises(LimitError, match=r"execute: the run needs more memory than the device has \(.*can't allocate"):
        execute(M, _x(), backend="torch")

    def other(*a: object, **k: object) -> None:
        raise RuntimeError("something else")

    monkeypatch.setattr(executors, "_run_float", other)
    with pytest.raises(RuntimeError, match="something else"):
        execute(M, _x(), backend="torch")
    with pytest.raises(LimitError, match=r"^here: .*CUDA out of memory"):
        with allocation_limit("here"):
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
    assert out_of_memory(ValueError("can't allocate memory"), "x") is None
    err = out_of_memory(MemoryError(), "numpy")
    assert isinstance(err, LimitError) and "numpy: the run needs more memory" in str(err)


def test_the_module_turns_an_allocation_failure_into_a_limit_error(monkeypatch):
    from symverify.executors import export

    mod = to_torch(MP)

    def oom(*a: object, **k: object) -> None:
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes")

    monkeypatch.setattr(export.loop, "run_model", oom)
    monkeypatch.setattr(export, "run_native", oom)
    with pytest.raises(LimitError, match=r"BaseConvStack: the run needs more memory"):
        mod(_x())


def test_butterfly_programs_refuse_a_batch_larger_than_the_machine():
    """compile_numpy and compile_torch on a broadcast or expanded batch of 10^13 rows: a
    LimitError (numpy: before allocating; torch: the allocator's failure), not MemoryError or the
    allocator's RuntimeError; an ordinary batch still runs."""
    from symverify.kaleidoscope import compile_numpy, compile_torch, permutation_to_kaleidoscope

    k = permutation_to_kaleidoscope([2, 0, 3, 1])
    prog, mod = compile_numpy(k), compile_torch(k)
    with pytest.raises(LimitError, match=r"numpy butterfly apply: a batch of 10000000000000 rows needs three .* smaller batches"):
        prog.apply(np.broadcast_to(np.zeros(4), (HUGE_B, 4)))
    with pytest.raises(LimitError, match=r"torch butterfly apply: the run needs more memory than the device has"):
        mod(torch.zeros(1, 4, dtype=torch.float64).expand(HUGE_B, 4))
    assert prog.apply(np.arange(4.0)).tolist() == [1.0, 3.0, 0.0, 2.0]
    assert mod(torch.arange(4.0, dtype=torch.float64)).tolist() == [1.0, 3.0, 0.0, 2.0]


# --------------------------------------------------------------------------------------------
# strides: transposed, expanded, reversed, sliced inputs give the contiguous input's bits


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view=st.sampled_from(["transpose", "expand", "step", "flip_np", "channels_last", "offset"]),
       dtype=st.sampled_from(["float64", "float32"]), path=st.sampled_from(["auto", "fft", "direct", "sparse"]),
       seed=st.integers(0, 1000))
def test_strided_views_give_the_bits_of_their_contiguous_copy(view, dtype, path, seed):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(6, 4, 3, 3, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
    m = Model(3, 3, 3, 3, (Layer.make(3, 3, W=Grid.full(3, 3, Fraction(1, 3)), h=Grid.from_rows([[1] * 3, [2] * 3, [0] * 3])),))
    u: object = {
        "transpose": base[:, 0].transpose(1, 2),
        "expand": base[:1, 0].expand(5, 3, 3),
        "step": base[::2, 1],
        "flip_np": np.flip(base[:, 2].numpy(), axis=(0, 1)),
        "channels_last": base[:, :, :, :].permute(0, 2, 3, 1)[..., 0],
        "offset": base[2:5, 3, :, :],
    }[view]
    dense = torch.as_tensor(np.ascontiguousarray(u)) if isinstance(u, np.ndarray) else u.contiguous()  # type: ignore[attr-defined]
    before = dense.clone()
    want = execute(m, dense, backend="torch", dtype=dtype, path=path)
    got = execute(m, u, backend="torch", dtype=dtype, path=path)
    assert torch.equal(got, want)
    if isinstance(u, torch.Tensor) and path != "sparse":
        assert torch.equal(to_torch(m, dtype=dtype, path=path)(u), to_torch(m, dtype=dtype, path=path)(dense))
        assert torch.equal(to_torch(m, dtype=dtype, path=path, requires_grad=True)(u),
                           to_torch(m, dtype=dtype, path=path, requires_grad=True)(dense))
    assert torch.equal(dense, before)  # nothing written into the input


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_input_is_never_written_nor_aliased(dtype):
    """A model with no layers whose state is its input (and a one-layer one): the output is a new
    tensor, and writing into it leaves the input alone; the run does not write into the input."""
    x = _x(3, getattr(torch, dtype), 2, 2)
    for m in (Model(2, 2, 2, 2, ()), SQUARE):
        keep = x.clone()
        for y in (execute(m, x, backend="torch", dtype=dtype), to_torch(m, dtype=dtype)(x),
                  to_torch(m, dtype=dtype, requires_grad=True)(x).detach()):
            y.add_(1)
            assert torch.equal(x, keep)


# --------------------------------------------------------------------------------------------
# sizes: empty batches and empty axes


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("path", ["auto", "fft", "direct", "sparse"])
def test_empty_batches_on_every_path_and_dtype(dtype, path):
    x = torch.zeros(0, 3, 2, dtype=getattr(torch, dtype))
    y = execute(MP, x, backend="torch", dtype=dtype, path=path)
    assert y.shape == (0, 3, 2) and y.dtype == getattr(torch, dtype)
    chk = numeric_check(MP, np.zeros((0, 3, 2), dtype=np.int64), dtype=dtype, path=path)
    assert chk.points == 0 and chk.ok and chk.tolerance == 0
    if path != "sparse":
        for grad in (False, True):
            assert to_torch(MP, path=path, requires_grad=grad)(x).shape == (0, 3, 2)


@pytest.mark.parametrize("shape", [(2, 0, 2), (2, 3, 0), (0,), (3, 2, 1), ()])
def test_inputs_with_a_wrong_or_empty_axis_are_shape_errors(shape):
    x = torch.zeros(shape, dtype=torch.float64)
    with pytest.raises(ShapeError, match=r"input: expected shape \(B, 3, 2\) or \(3, 2\), found"):
        execute(M, x, backend="torch")
    with pytest.raises(ShapeError, match=r"input: expected shape \(B, 3, 2\) or \(3, 2\), found"):
        to_torch(M)(x)


# --------------------------------------------------------------------------------------------
# dtypes


@pytest.mark.parametrize("dtype", ["float16", "double", "torch.float32", "f4", np.float64, torch.float16, torch.int64,
                                   torch.complex64, True, 32])
def test_dtypes_outside_the_three_are_refused_everywhere(dtype):
    pat = r"dtype: expected 'float64', 'float32' or 'bfloat16' \(or the torch dtype\), found"
    with pytest.raises(IRError, match=pat):
        execute(M, _x(), backend="torch", dtype=dtype)
    with pytest.raises(IRError, match=pat):
        numeric_check(M, [[[1, 2], [3, 4], [5, 6]]], dtype=dtype)
    with pytest.raises(IRError, match=pat):
        to_torch(M, dtype=dtype)


@pytest.mark.parametrize("src", [torch.float16, torch.float8_e4m3fn, torch.float8_e5m2, torch.int8, torch.uint8,
                                 torch.int32, torch.int64])
def test_narrow_float_and_integer_inputs_are_read_exactly_by_execute(src):
    """execute converts: float16, float8 and small integers are exact in float64, so the result is
    the one of the same values given as float64; the module (which runs in its input's dtype) refuses
    them, saying which dtypes it runs."""
    x = (_x() * 4).round().clamp(-8, 8).to(src)
    want = execute(M, x.double(), backend="torch")
    assert torch.equal(execute(M, x, backend="torch"), want)
    with pytest.raises(IRError, match=r"input: expected a float64, float32 or bfloat16 tensor, found " + str(src).removeprefix("torch.")):
        to_torch(M)(x)


def test_integers_beyond_2_53_are_rounded_as_documented_not_wrapped():
    """An int64 input 2^60 + 1 is rounded to float64 (the documented input rounding), a uint64
    2^63 + 2^11 is read as its value, not wrapped negative."""
    x = torch.full((1, 3, 2), 2**60 + 1, dtype=torch.int64)
    assert torch.equal(execute(M, x, backend="torch"), execute(M, torch.full((1, 3, 2), 2.0**60, dtype=torch.float64), backend="torch"))
    big = torch.full((1, 2, 2), 2**63 + 2**11, dtype=torch.uint64)
    y = execute(SQUARE, big, backend="torch")
    assert float(y[0, 0, 0]) == float(2**63 + 2**11) ** 2 and float(y[0, 0, 0]) > 0


def test_complex_bool_and_conjugate_inputs():
    x = _x()
    with pytest.raises(IRError, match=r"expected real numbers, found a torch.complex128 tensor"):
        execute(M, x.to(torch.complex128), backend="torch")
    with pytest.raises(IRError, match=r"a bool is not a number"):
        execute(M, x > 0, backend="torch")
    with pytest.raises(IRError, match=r"found complex128"):
        to_torch(M)(x.to(torch.complex128))
    assert torch.equal(execute(M, torch._neg_view(x), backend="torch"), execute(M, -x, backend="torch"))


# --------------------------------------------------------------------------------------------
# devices


@NO_CUDA
@pytest.mark.parametrize("device", ["cuda", "cuda:1", torch.device("cuda")])
def test_cuda_requested_without_cuda_is_refused_by_every_entry(device):
    for call in (lambda: execute(M, _x(), backend="torch", device=device),
                 lambda: numeric_check(M, [[[1, 2], [3, 4], [5, 6]]], device=device),
                 lambda: to_torch(M, device=device)):
        with pytest.raises(BackendUnavailableError, match=r"CUDA is not available"):
            call()


@pytest.mark.parametrize("device", ["meta", "mps", "xpu"])
def test_devices_other_than_cpu_and_cuda_are_refused(device):
    with pytest.raises(BackendUnavailableError, match=rf"device '{device}': only 'cpu' and 'cuda' devices are supported"):
        execute(M, _x(), backend="torch", device=device)
    with pytest.raises(BackendUnavailableError, match=r"only 'cpu' and 'cuda'"):
        to_torch(M, device=device)


@pytest.mark.parametrize("device", ["gpu", 5, "cpu:x", object()])
def test_device_names_that_are_no_device_are_ir_errors(device):
    with pytest.raises(IRError, match=r"device: expected 'cpu', 'cuda' or 'cuda:K', found"):
        execute(M, _x(), backend="torch", device=device)


def test_meta_inputs_have_no_values():
    x = _x().to("meta")
    with pytest.raises(IRError, match=r"expected values, found a meta tensor of shape \(4, 3, 2\)"):
        execute(M, x, backend="torch")
    with pytest.raises(IRError, match=r"the input is a meta tensor, which has no values"):
        to_torch(M)(x)


# --------------------------------------------------------------------------------------------
# inference mode


def test_to_torch_builds_and_runs_under_inference_mode():
    """Built under ``torch.inference_mode()`` the module used to fail at once (``Inference
    tensors do not track version counter``); its weights are normal tensors now: it runs there and
    outside, equals the module built outside, trains afterwards, and sees weights edited under
    inference mode."""
    x = _x()
    want = to_torch(MP)(x)
    with torch.inference_mode():
        mod = to_torch(MP)
        trainable = to_torch(MP, requires_grad=True)
        assert torch.equal(mod(x), want)
        assert torch.equal(trainable(x), want)  # no gradients there: the plain path runs
    assert torch.equal(mod(x), want)
    xg = x.clone().requires_grad_(True)
    trainable(xg).sum().backward()
    assert xg.grad is not None and trainable.layers[0].W.grad is not None
    with torch.inference_mode():
        with torch.no_grad():
            mod.layers[0].W.mul_(2)
        edited = mod(x)
    assert not torch.equal(edited, want)
    assert torch.equal(edited, mod(x))


def test_inference_tensors_as_inputs():
    with torch.inference_mode():
        x = _x()
    assert torch.equal(execute(M, x, backend="torch"), execute(M, x.clone(), backend="torch"))
    assert torch.equal(to_torch(M)(x), to_torch(M)(x.clone()))
    assert torch.equal(to_torch(M, requires_grad=True)(x), to_torch(M, requires_grad=True)(x.clone()))


# --------------------------------------------------------------------------------------------
# values: the edges of the range, NaN and infinities


def test_non_finite_inputs_run_in_ieee_arithmetic_and_are_not_exact():
    """execute documents NaN and ±inf inputs as run unchecked in IEEE arithmetic; numeric_check
    needs exact inputs and refuses them."""
    x = _x(1)
    x[0, 0, 0] = math.nan
    y = execute(M, x, backend="torch")
    assert bool(torch.isnan(y).any())
    with pytest.raises(IRError, match=r"input entry \[0, 0, 0\]: expected an exact value .* found the float nan"):
        numeric_check(M, [[[math.nan, 1], [1, 1], [1, 1]]])
    with pytest.raises(IRError, match=r"the exact backend needs exact values, found a float64 array"):
        numeric_check(M, np.full((1, 3, 2), np.inf))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_inputs_beyond_a_narrow_dtype_are_refused_not_made_infinite(dtype):
    x = torch.full((1, 3, 2), 1e300, dtype=torch.float64)
    with pytest.raises(IRError, match=rf"input entry \[0, 0, 0\]: 1e\+300 is beyond the range of torch.{dtype}"):
        execute(M, x, backend="torch", dtype=dtype)
    with pytest.raises(IRError, match=r"is beyond the range of float64"):
        execute(M, [[[10**400, 1], [1, 1], [1, 1]]], backend="torch")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dtype=st.sampled_from(DTYPES), path=st.sampled_from(["auto", "fft", "direct", "sparse"]),
       exps=st.lists(st.integers(-1100, 1000), min_size=6, max_size=6), signs=st.lists(st.booleans(), min_size=6, max_size=6),
       w=st.integers(-1100, 600))
def test_exact_inputs_across_the_range_are_within_the_bound_or_refused(dtype, path, exps, signs, w):
    """Inputs and a weight ``±2^e`` anywhere from far below the smallest subnormal to far above the
    largest number of the dtype: numeric_check either answers ok (the error within its bound) or
    refuses with an IRError naming the range; never a bound below the error."""
    u = [[[(-1 if s else 1) * Fraction(2) ** e for s, e in zip(signs[i * 2:i * 2 + 2], exps[i * 2:i * 2 + 2])] for i in range(3)]]
    m = Model(3, 2, 3, 2, (Layer.make(3, 2, W=Grid.full(2, 2, Fraction(2) ** w), h=Grid.from_rows([[1, 1], [Fraction(1, 3)] * 2, [0, 0]]),
                                      b2=Grid.full(3, 2, Fraction(1, 5))),))
    try:
        chk = numeric_check(m, u, dtype=dtype, path=path)
    except IRError as e:
        assert "beyond the range" in str(e)
        return
    assert chk.ok and chk.max_abs_err <= chk.tolerance, chk



@pytest.mark.parametrize("dtype", DTYPES)
def test_symbolic_weights_given_values_below_or_beyond_float64(dtype):
    """``params`` that round to 0 in float64 (10^-400) are bounded like literal weights (the error
    within a nonzero bound); values beyond float64 (10^400), floats, NaN and bools are refused."""
    from symverify.kernel.ir.scalar import sym

    m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.full(1, 1, sym("a")), h=Grid.full(1, 1, 1)),))
    chk = numeric_check(m, [[[3]], [[Fraction(-1, 3)]]], params={"a": Fraction(1, 10**400)}, dtype=dtype)
    assert chk.ok and 0 < chk.max_abs_err <= chk.tolerance and math.isfinite(chk.max_rel_err), chk
    with pytest.raises(CompileError, match=rf"the weight <401-digit integer .*> does not fit in {dtype}"):
        numeric_check(m, [[[3]]], params={"a": 10**400}, dtype=dtype)
    for bad, msg in ((0.1, r"found the float 0.1; pass Fraction\(1, 10\)"), (math.nan, r"found the float nan"),
                     (True, r"expected an exact number, found the bool True")):
        with pytest.raises(IRError, match=rf"params\['a'\]: .*{msg}"):
            execute(m, [[[3.0]]], backend="torch", dtype=dtype, params={"a": bad})
        with pytest.raises(IRError, match=rf"params\['a'\]: .*{msg}"):
            to_torch(m, params={"a": bad})


def test_modular_eval_turns_an_allocation_failure_into_a_limit_error(monkeypatch):
    """The kernel's ``modular_eval`` (the randomized prover's torch engine) raised the allocator's
    RuntimeError for a batch its device could not hold; it is a LimitError as ``execute``'s, and any
    other error passes unchanged."""
    import torch

    from symverify.kernel.engines import modular as kmod

    def oom(*a: object, **k: object) -> None:
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes")

    monkeypatch.setattr(kmod, "run_mod", oom)
    pts = torch.zeros((1, M.n, M.d), dtype=torch.int64)
    with pytest.raises(LimitError, match=r"^modular_eval: the run needs more memory than the device has"):
        kmod.modular_eval(M, pts, 7)

    def other(*a: object, **k: object) -> None:
        raise RuntimeError("something else")

    monkeypatch.setattr(kmod, "run_mod", other)
    with pytest.raises(RuntimeError, match="something else"):
        kmod.modular_eval(M, pts, 7)
