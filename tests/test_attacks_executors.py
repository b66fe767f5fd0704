"""Attacks on the executors and the conversions: ``execute``, ``modular_eval``, ``to_torch``,
``to_zoology``/``from_zoology`` and the butterfly ``compile_torch``/``compile_numpy`` with wrong
dtypes, shapes and devices, empty batches, non-dyadic or out-of-range weights. Each ends in a
result or in a clear ``SymverifyError``: nothing silently rounded, truncated or ignored, and no
bare Python exception (tests/test_execute*.py hold the ordinary checks)."""

from fractions import Fraction

import numpy as np
import pytest

import symverify as sv
from symverify.errors import BackendUnavailableError, CompileError, IRError, LimitError, ShapeError

torch = pytest.importorskip("torch")

from symverify.executors import (  # noqa: E402
    ZoologyBaseConv,
    execute,
    from_zoology,
    modular_eval,
    to_torch,
    to_zoology,
)
from symverify.kaleidoscope import compile_numpy, compile_torch, permutation_to_kaleidoscope  # noqa: E402

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
BACKENDS = ("exact", "torch", "modular")


@pytest.fixture(scope="module")
def pair():
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    return c, sv.compile(c).model


@pytest.fixture(scope="module")
def zoo():
    torch.manual_seed(0)
    z = ZoologyBaseConv(2, 4).eval()
    return {k: torch.randn_like(v) for k, v in z.state_dict().items()}  # a filter of nonzero taps too


# ---- execute ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path, side, backend", [  # a path routes a model's convolutions on the torch backends
    (path, side, backend) for path in ("auto", "fft", "sparse") for side in ("circuit", "model") for backend in BACKENDS
    if path == "auto" or (side == "model" and backend != "exact")])
def test_an_empty_batch_gives_an_empty_result(pair, backend, side, path):
    """B = 0: the float path raised IndexError (model, auto/sparse) or an MKL error (fft), the
    modular path on a circuit ValueError (reshape of 0 elements)."""
    obj = pair[0] if side == "circuit" else pair[1]
    u = torch.zeros(0, 2, 2, dtype=torch.float64 if backend == "torch" else torch.int64)
    y = execute(obj, u, backend=backend, path=path)
    assert tuple(y.shape) == (0, 2, 2)


def test_modular_eval_of_a_circuit_on_an_empty_batch(pair):
    assert tuple(modular_eval(pair[0], torch.zeros(0, 2, 2, dtype=torch.int64), 7).shape) == (0, 2, 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("u", [
    torch.tensor([[1j, 2], [3, 4]]),
    np.array([[1j, 2], [3, 4]]),
    torch.tensor([[True, False], [True, True]]),
    np.array([[True, False], [True, True]]),
], ids=["complex tensor", "complex array", "bool tensor", "bool array"])
def test_complex_and_bool_inputs_are_refused(pair, backend, u):
    """The float backend dropped imaginary parts (with only torch's warning), and the float and
    modular backends read bool tensors as 0 and 1 where the exact backend refused them."""
    with pytest.raises(IRError, match=r"model input: expected real numbers, found a .*(complex|bool)"):
        execute(pair[1], u, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", [[1], ("a", 1), {1: 2}], ids=["list", "tuple", "int key"])
def test_params_must_be_a_mapping_of_names(pair, backend, params):
    """A list of params raised AttributeError ('list' object has no attribute 'items')."""
    with pytest.raises(IRError, match=r"params: expected a mapping from weight names \(str\) to exact values"):
        execute(pair[1], [[1, 2], [3, 4]], backend=backend, params=params)


def test_non_contiguous_inputs_give_the_contiguous_results(pair):
    c, m = pair
    base = torch.arange(16, dtype=torch.float64).reshape(2, 2, 4)[:, :, ::2]  # a strided view
    assert not base.is_contiguous()
    want = execute(m, base.contiguous(), backend="torch")
    assert torch.equal(execute(m, base, backend="torch"), want)
    assert torch.equal(execute(c, base, backend="torch"), want)
    assert torch.equal(execute(m, base.long(), backend="modular"), execute(m, base.long().contiguous(), backend="modular"))


def test_nan_inputs_propagate_through_the_float_executor(pair):
    """A float executor runs IEEE arithmetic: a NaN input gives NaN outputs where it is read,
    never a finite number in its place (the exact backends refuse floats)."""
    u = torch.tensor([[float("nan"), 1.0], [1.0, 1.0]], dtype=torch.float64)
    for obj in pair:
        assert bool(torch.isnan(execute(obj, u, backend="torch")[0, 0]))
    with pytest.raises(IRError, match="the exact backend needs exact values"):
        execute(pair[1], u, backend="exact")


# ---- to_torch / from_torch / to_zoology -------------------------------------------------------
def test_to_torch_refuses_what_is_not_a_model(pair):
    """A circuit, a compiled object or None raised AttributeError; requires_grad='yes' TypeError."""
    c, m = pair
    with pytest.raises(IRError, match=r"to_torch: expected a Model, found Circuit$"):
        to_torch(c)
    with pytest.raises(IRError, match=r"to_torch: expected a Model, found Compiled; pass its \.model"):
        to_torch(sv.compile(c))
    with pytest.raises(IRError, match=r"requires_grad: expected True or False, found 'yes'"):
        to_torch(m, requires_grad="yes")
    with pytest.raises(CompileError, match=r"to_zoology: expected a Model, found Circuit"):
        to_zoology(c)
    with pytest.raises(CompileError, match=r"to_zoology: exact: expected True or False, found 1"):
        to_zoology(from_zoology(ZoologyBaseConv(2, 4)), exact=1)


@pytest.mark.parametrize("path", ["auto", "fft", "direct"])
@pytest.mark.parametrize("grad", [False, True])
def test_the_torch_module_runs_an_empty_batch(pair, path, grad):
    """``path='fft'`` raised MKL's "Inconsistent configuration parameters" on B = 0."""
    y = to_torch(pair[1], path=path, requires_grad=grad)(torch.zeros(0, 2, 2, dtype=torch.float64))
    assert tuple(y.shape) == (0, 2, 2)


@NO_CUDA
def test_cuda_on_a_cpu_machine_is_a_clear_error_everywhere(pair):
    """compile_torch(device='cuda') raised torch's AssertionError "Torch not compiled with CUDA
    enabled", and a device such as 'tpu' torch's RuntimeError."""
    f = permutation_to_kaleidoscope([2, 0, 3, 1])
    for make in (lambda: to_torch(pair[1], device="cuda"), lambda: compile_torch(f, device="cuda"),
                 lambda: to_zoology(from_zoology(ZoologyBaseConv(2, 4)), device="cuda")):
        with pytest.raises(BackendUnavailableError, match=r"device 'cuda' was requested, but CUDA is not available"):
            make()
    with pytest.raises(IRError, match=r"device: expected 'cpu', 'cuda' or 'cuda:K', found 'tpu'"):
        compile_torch(f, device="tpu")


# ---- from_zoology -----------------------------------------------------------------------------
def test_from_zoology_refuses_a_bool_seq_len_and_a_huge_one(zoo):
    """``seq_len=True`` was taken as 1 (and blamed the model: "model n: … found True");
    ``seq_len=10**9`` allocated the filter d × 10^9 before any check (killed for memory)."""
    with pytest.raises(ShapeError, match=r"seq_len: expected a positive int, found True"):
        from_zoology(zoo, seq_len=True)
    with pytest.raises(LimitError, match=r"from_zoology: the state N·d = 1000000000·2: 2000000000 cells is more than symverify\.ir\.limits\.MAX_CELLS"):
        from_zoology(zoo, seq_len=10**9)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.bool])
def test_from_zoology_refuses_complex_and_bool_weights(zoo, dtype):
    """A complex projection lost its imaginary part (only torch's warning said so)."""
    sd = dict(zoo, **{"projection.weight": zoo["projection.weight"].to(dtype)})
    with pytest.raises(CompileError, match=r"layer 0 projection\.weight: expected real numbers, found a torch\.(complex64|bool)"):
        from_zoology(sd)


def test_from_zoology_refuses_integers_that_float64_would_round(zoo):
    """An int64 weight 2^60 + 1 became 2^60: it was read through float64."""
    sd = dict(zoo, **{"projection.weight": torch.tensor([[2**60 + 1, 0], [0, 1]])})
    with pytest.raises(CompileError, match=r"layer 0 projection\.weight: a torch\.int64 entry beyond ±2\^53 would be rounded"):
        from_zoology(sd)
    sd = dict(zoo, **{"projection.weight": torch.tensor([[2**53, 0], [0, -(2**53)]])})
    assert from_zoology(sd).layers[0].W.get(0, 0) == 2**53  # exact within ±2^53


def test_from_zoology_reads_non_dyadic_floats_exactly(zoo):
    """0.1 is no dyadic rational: the weight is the float's own exact value, and the model agrees
    with zoology's forward pass to round-off."""
    sd = dict(zoo, **{"projection.bias": torch.tensor([0.1, -1 / 3], dtype=torch.float64)})
    m = from_zoology(sd)
    u = torch.randn(3, 4, 2, dtype=torch.float64)
    z = ZoologyBaseConv(2, 4, torch.float64)
    z.load_state_dict({k: v.to(torch.float64) for k, v in sd.items()})
    assert torch.allclose(execute(m, u, backend="torch"), z(u), rtol=1e-12, atol=1e-12)
    assert sv.verify(m, from_zoology(sd, form="pair")).proved


# ---- the butterfly module and the numpy program -----------------------------------------------
def test_the_butterfly_module_refuses_what_it_cannot_read_as_real_numbers():
    """A list or a numpy array raised AttributeError; a complex tensor lost its imaginary part and a
    bool tensor was read as 0 and 1."""
    m = compile_torch(permutation_to_kaleidoscope([2, 0, 3, 1]))
    for x, what in (([[1.0, 2.0, 3.0, 4.0]], "found list"), (np.ones((1, 4)), "found ndarray"),
                    (torch.tensor([[1j, 2, 3, 4]]), "found a torch.complex64 tensor"),
                    (torch.tensor([[True, False, True, True]]), "found a torch.bool tensor"),
                    (torch.tensor(1.0, dtype=torch.float64), "last axis of length 4")):
        with pytest.raises(IRError, match=what):
            m(x)
    assert tuple(m(torch.zeros(0, 4, dtype=torch.float64)).shape) == (0, 4)
    with pytest.raises(IRError, match=r"params: expected a mapping from parameter names to exact values, found list"):
        compile_torch(permutation_to_kaleidoscope([2, 0, 3, 1]), params=[1])


def test_compile_numpy_needs_a_prime_and_integer_residues():
    """``p=4`` was accepted although the message says "expected a prime"; a float input mod p was
    truncated (1.5 → 1) and a Fraction's residue taken as 0."""
    f = permutation_to_kaleidoscope([2, 0, 3, 1])
    with pytest.raises(IRError, match=r"expected a prime 2 ≤ p < 2\*\*31, found p = 4"):
        compile_numpy(f, "mod", p=4)
    prog = compile_numpy(f, "mod", p=7)
    for x in (np.array([[1.5, 2, 3, 4]]), np.array([[Fraction(1, 2), 2, 3, 4]], dtype=object)):
        with pytest.raises(IRError, match=r"mod 7\): expected integers \(residues\)"):
            prog.apply(x)
    assert prog.apply(np.array([[2**70, -1, 2, 3]], dtype=object)).tolist() == [[6, 3, 2, 2]]
    with pytest.raises(IRError, match=r"expected real numbers, found a complex128 array"):
        compile_numpy(f).apply(np.array([[1j, 2, 3, 4]]))


# ---- values beyond a float format's range -----------------------------------------------------
def test_inputs_beyond_the_float_range_are_refused_not_made_infinite(pair):
    """``execute(..., dtype='float32')`` on 2^200 ran on inf (NaN outputs, no word); an exact input
    beyond float64 raised OverflowError from ``float()``, in ``execute`` and in ``numeric_check``."""
    c, m = pair
    with pytest.raises(IRError, match=r"model input entry \[0, 0\]: 1\.60693804425899\d*e\+60 is beyond the range of torch\.float32"):
        execute(m, [[2**200, 2], [3, 4]], backend="torch", dtype="float32")
    with pytest.raises(IRError, match=r"model input entry \[0, 0, 0\]: 1e\+300 is beyond the range of torch\.bfloat16"):
        execute(m, torch.tensor([[[1e300, 2], [3, 4]]], dtype=torch.float64), backend="torch", dtype="bfloat16")
    with pytest.raises(IRError, match=r"circuit input entry \[0, 0\]: <.*> is beyond the range of float64"):
        execute(c, [[2**2000, 2], [3, 4]], backend="torch")
    with pytest.raises(IRError, match=r"numeric_check: a value beyond the range of float64"):
        sv.executors.numeric_check(m, [[2**2000, 2], [3, 4]])
    assert bool(torch.isinf(execute(c, torch.tensor([[float("inf"), 2.0], [3.0, 4.0]]), backend="torch")[0, 0]))  # inf in, inf out
