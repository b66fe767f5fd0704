"""The executors on hand-made models and circuits: exact, float (every path) and modular agree."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch
from cases import CASES

from symverify.errors import BackendUnavailableError, CompileError, IRError, NumericMismatchError, ShapeError
from symverify.executors import DEFAULT_PRIME, execute, modular_eval, numeric_check
from symverify.executors.synthetic import dense_model, impulse_model
from symverify.kernel.engines.numbers import float_numbers
from symverify.kernel.engines.plan import model_plan
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.semantics.evaluate import eval_circuit, eval_model
from symverify.kernel.semantics.rings import ModRing

PATHS = ("auto", "fft", "direct", "sparse")


def _impulse(n: int, d: int, lag: int, value: object = 1) -> Grid:
    return Grid.zeros(n, d).paint(lag, lag + 1, 0, d, value)


N, D = 5, 2
IDENT = Model(N, D, N, D, (Layer.make(N, D, W=Grid.identity(D), b2=Grid.full(N, D, 1)),), "identity")
SHIFT2 = Model(N, D, N, D, (Layer.make(N, D, b1=Grid.full(N, D, 1), h=_impulse(N, D, 2)),), "shift_down 2")
ROT2 = Model(N, D, N, D, (Layer.make(N, D, b1=Grid.full(N, D, 1), h=_impulse(N, D, 2), mode=Mode.CYCLIC),), "cyclic 2")
GATE_B = Grid.from_rows([[i - j for j in range(D)] for i in range(N)])
GATE = Model(N, D, N, D, (Layer.make(N, D, b1=GATE_B, h=_impulse(N, D, 0)),), "gate")
SYM = Model(N, D, N + 1, D + 1, (Layer.make(N + 1, D + 1, W=Grid.identity(D + 1).paint(0, 1, 0, 1, sym("a")),
                                             b2=Grid.full(N + 1, D + 1, sym("b"))),), "symbolic")
HAND = [IDENT, SHIFT2, ROT2, GATE, SYM, dense_model(6, 3, 3, seed=2), impulse_model(16, 4, 5, n=12, d=3, seed=3)]
PARAMS = {"a": 3, "b": Fraction(-1, 2)}


def params_for(m):
    """The values in PARAMS of the model's own symbolic weights (other names are refused)."""
    return {k: v for k, v in PARAMS.items() if k in m.params()}
U = np.arange(-4, 6).reshape(1, N, D).repeat(2, axis=0) * np.array([1, -1]).reshape(2, 1, 1)


def _expected(m: Model, u: np.ndarray) -> np.ndarray:
    """Closed forms of the hand-made models (independent of the interpreter)."""
    if m is IDENT:
        return u
    if m is SHIFT2:
        return np.concatenate([np.zeros_like(u[:, :2]), u[:, :-2]], axis=1)
    if m is ROT2:
        return np.roll(u, 2, axis=1)
    if m is GATE:
        return np.asarray(GATE_B.to_rows()) * u
    if m is SYM:
        out = u * Fraction(-1, 2)
        out[:, :, 0] = u[:, :, 0] * 3 * Fraction(-1, 2)
        return out
    raise KeyError(m.name)


@pytest.mark.parametrize("m", [IDENT, SHIFT2, ROT2, GATE, SYM], ids=lambda m: m.name)
def test_hand_models_closed_form(m):
    got = execute(m, U.tolist(), params=params_for(m))
    assert got.dtype == object and got.shape == U.shape
    assert (got == _expected(m, U)).all()


@pytest.mark.parametrize("m", HAND, ids=lambda m: m.name)
@pytest.mark.parametrize("path", PATHS)
def test_hand_models_all_backends(m, path):
    rng = np.random.default_rng(1)
    u = rng.integers(-3, 4, size=(3, m.n, m.d))
    exact = execute(m, u.tolist(), params=params_for(m))
    got = execute(m, torch.tensor(u), backend="torch", params=params_for(m), path=path)
    assert got.dtype == torch.float64 and got.shape == u.shape
    chk = numeric_check(m, u.tolist(), params=params_for(m), path=path)
    assert chk.ok, chk
    assert np.allclose(got.numpy(), exact.astype(float), rtol=0, atol=chk.tolerance)
    p = 10007
    mod = execute(m, u.tolist(), backend="modular", p=p, params=params_for(m), path=path)
    ring = ModRing(p, {k: ModRing(p).coerce(v) for k, v in PARAMS.items()})
    for b in range(3):
        assert mod[b].tolist() == eval_model(m, [[x % p for x in r] for r in u[b].tolist()], ring)


def _sides():
    seen = []
    for case in CASES:
        for side in (case.lhs, case.rhs):
            if isinstance(side, (Model, Circuit)) and all(side is not s for s in seen):
                seen.append(side)
    return seen


@pytest.mark.parametrize("obj", _sides(), ids=lambda o: o.name or type(o).__name__)
def test_shared_case_table(obj):
    """Every model and circuit of tests/cases.py: float within its bound, modular = ModRing."""
    params = {name: k + 2 for k, name in enumerate(sorted(obj.params()))}
    u = np.random.default_rng(7).integers(-5, 6, size=(4, obj.n, obj.d)).tolist()
    for dtype in ("float64", "float32", "bfloat16"):
        chk = numeric_check(obj, u, dtype=dtype, params=params)
        assert chk.ok and chk.dtype == dtype, chk
    p = DEFAULT_PRIME
    pts = torch.tensor(u) % p
    got = modular_eval(obj, pts, p, params=params)
    ring = ModRing(p, params)
    run = eval_model if isinstance(obj, Model) else eval_circuit
    for b in range(4):
        assert got[b].tolist() == run(obj, pts[b].tolist(), ring)


def test_single_input_and_batch_shapes():
    single = execute(SHIFT2, U[0].tolist(), backend="torch")
    assert single.shape == (N, D)
    batch = execute(SHIFT2, torch.tensor(U), backend="torch")
    assert torch.equal(batch[0], single)
    assert execute(SHIFT2, U[0].tolist()).shape == (N, D)
    assert execute(SHIFT2, U[0].tolist(), backend="modular").shape == (N, D)


def test_exact_backend_returns_fractions():
    half = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.full(1, 1, Fraction(1, 3)), b2=Grid.full(1, 1, 1)),))
    out = execute(half, [[[2]], [[3]]])
    assert out[0, 0, 0] == Fraction(2, 3) and out[1, 0, 0] == 1 and isinstance(out[1, 0, 0], int)


def test_modular_large_residues_dense_limbs():
    """Dense W (limb matmul) and dense kernels (blocked limbs) at p = 2^31 − 1 with residues near p."""
    m = dense_model(80, 24, 2, seed=5)
    assert {lp.w_kind for lp in model_plan(m, float_numbers(None)).layers} == {"dense"}
    p = DEFAULT_PRIME
    g = torch.Generator().manual_seed(0)
    pts = p - 1 - torch.randint(0, 1000, (2, 80, 24), generator=g)
    ring = ModRing(p)
    for path in ("auto", "sparse", "direct"):
        got = modular_eval(m, pts, p, path=path)
        assert got[1].tolist() == eval_model(m, pts[1].tolist(), ring), path


def test_auto_path_choice_and_plan_cache():
    imp = model_plan(impulse_model(256, 8, 4, seed=1), float_numbers(None))
    assert {lp.auto_path for lp in imp.layers} == {"sparse"}
    dense = dense_model(32, 2, 1)
    plan = model_plan(dense, float_numbers(None))
    assert plan.layers[0].auto_path == "fft" and plan.layers[0].path("direct") == "direct"
    assert model_plan(dense, float_numbers(None)) is plan
    assert model_plan(dense, float_numbers({"unused": 1})) is not plan


def test_bias_forms_from_rectangles():
    m = Model(8, 4, 8, 4, (Layer.make(8, 4, b1=Grid(8, 4, 0, ((2, 5, 0, 4, 1),)), h=_impulse(8, 4, 1),
                                      b2=Grid(8, 4, 0, ((2, 5, 1, 3, 2),))),))
    lp = model_plan(m, float_numbers(None)).layers[0]
    assert lp.b1.kind == "pos" and lp.b2.kind == "outer" and lp.lags == (1,) and lp.w_kind == "zero"


def test_numeric_check_reports_low_precision_error():
    m = dense_model(16, 3, 2, seed=4)
    u = [[[Fraction(i - j, 3) for j in range(3)] for i in range(16)]]
    c64 = numeric_check(m, u)
    c32 = numeric_check(m, u, dtype="float32")
    c16 = numeric_check(m, u, dtype="bfloat16", path="fft")
    assert c64.ok and c32.ok and c16.ok
    assert 0 < c64.max_abs_err < c32.max_abs_err < c16.max_abs_err
    assert c64.tolerance < c32.tolerance < c16.tolerance
    assert c16.dtype == "bfloat16" and c16.path == "fft" and "within the bound" in str(c16)


@pytest.mark.parametrize("path", ["fft", "sparse"])
def test_numeric_check_catches_a_wrong_executor(monkeypatch, path):
    """Mutation: a convolution off by one part in 10^9 must exceed the float64 bound."""
    import symverify.executors.torch_float as tf

    m = dense_model(16, 2, 2, seed=8)
    u = np.random.default_rng(0).integers(-3, 4, size=(2, 16, 2)).tolist()
    assert numeric_check(m, u, path=path).ok
    if path == "fft":
        real = tf.conv_fft
        monkeypatch.setattr(tf, "conv_fft", lambda x, h, cyc, cache=None: real(x, h, cyc, cache) * (1 + 1e-9))
    else:
        real_mac = tf._mac
        monkeypatch.setattr(tf, "_mac", lambda acc, src, tap, one, first: real_mac(acc, src * (1 + 1e-9), tap, one, first))
    bad = numeric_check(m, u, path=path)
    assert not bad.ok and bad.max_abs_err > bad.tolerance
    with pytest.raises(NumericMismatchError, match="EXCEEDS the bound"):
        bad.raise_if_failed()


def test_integer_models_are_exact_in_float64():
    m = impulse_model(64, 4, 6, seed=9)
    u = np.random.default_rng(3).integers(-1, 2, size=(3, 64, 4)).tolist()
    for path in ("auto", "sparse", "direct"):
        chk = numeric_check(m, u, path=path)
        assert chk.ok and chk.tolerance == 0 and chk.max_abs_err == 0


def test_cuda_request():
    if torch.cuda.is_available():
        got = execute(SHIFT2, torch.tensor(U), backend="torch", device="cuda")
        assert got.device.type == "cuda" and torch.equal(got.cpu(), execute(SHIFT2, torch.tensor(U), backend="torch"))
    else:
        with pytest.raises(BackendUnavailableError, match="CUDA is not available"):
            execute(SHIFT2, U.tolist(), backend="torch", device="cuda")
        with pytest.raises(BackendUnavailableError, match="CUDA is not available"):
            execute(SHIFT2, U.tolist(), backend="modular", device="cuda:0")


def test_missing_torch_gives_install_hint(monkeypatch):
    from symverify.kernel.engines._torch import require_torch

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(BackendUnavailableError, match="pip install torch"):
        require_torch()


def test_import_is_lazy():
    code = "import sys, symverify.executors; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_unknown_param_names_are_errors():
    """A misspelt name in params is refused with the object's weight names, even when every weight
    has its value (it used to be ignored); every public entry taking params says so."""
    from symverify.executors import to_torch, to_zoology
    from symverify.semantics.exact import evaluate

    u, good = U.tolist(), {"a": 1, "b": 2}
    typo = {**good, "aa": 3}
    msg = r"params: 'aa' is not a symbolic weight of the model \(its symbolic weights are a, b\)"
    for backend in ("exact", "torch", "modular"):
        with pytest.raises(IRError, match=msg):
            execute(SYM, u, backend=backend, params=typo)
        execute(SYM, u, backend=backend, params=good)  # the right names still run
    with pytest.raises(IRError, match=msg):
        execute(SYM, np.zeros((0, 5, 2), dtype=int), backend="torch", params=typo)  # an empty batch too
    with pytest.raises(IRError, match=msg):
        evaluate(SYM, u, typo)
    with pytest.raises(IRError, match=msg):
        numeric_check(SYM, [u], params=typo)
    with pytest.raises(IRError, match=msg):
        modular_eval(SYM, torch.zeros((1, 5, 2), dtype=torch.int64), 7, params=typo)
    with pytest.raises(IRError, match=msg):
        to_torch(SYM, params=typo)
    with pytest.raises(IRError, match=msg):
        to_zoology(SYM, params=typo)
    with pytest.raises(IRError, match=r"'x', 'y' are not symbolic weights of the model \(it has no symbolic weights\)"):
        execute(IDENT, u, params={"y": 1, "x": 2})
    c = Circuit(1, 2, (), (0, 1))
    with pytest.raises(IRError, match=r"'a' is not a symbolic weight of the circuit \(it has no symbolic weights\)"):
        execute(c, [[1, 2]], params={"a": 1})


def test_validation_errors():
    u = U.tolist()
    with pytest.raises(IRError, match="symbolic weights a, b; pass their values"):
        execute(SYM, u)
    with pytest.raises(IRError, match=r"'c' is not a symbolic weight of the model \(its symbolic weights are a, b\)"):
        execute(SYM, u, backend="torch", params={"c": 1})
    with pytest.raises(IRError, match="symbolic weights b; pass their values"):
        execute(SYM, u, backend="torch", params={"a": 1})
    with pytest.raises(IRError, match="expected an exact value"):
        execute(SYM, u, params={"a": 0.5, "b": 1})
    with pytest.raises(ShapeError, match=r"expected shape \(B, 5, 2\) or \(5, 2\), found \(5, 3\)"):
        execute(IDENT, np.zeros((5, 3), dtype=int), backend="torch")
    with pytest.raises(IRError, match=r"exact backend needs exact values, found a torch.float32 tensor; pass ints"):
        execute(IDENT, torch.zeros(5, 2))
    with pytest.raises(IRError, match=r"found a float64 array; pass ints or Fractions \(e.g. u.astype\(int\)"):
        execute(IDENT, np.ones((5, 2)))
    with pytest.raises(IRError, match=r"found the float 0\.5"):
        execute(IDENT, [[0.5, 0]] * 5)
    with pytest.raises(IRError, match="backend: expected one of"):
        execute(IDENT, u, backend="numpy")
    with pytest.raises(IRError, match="path: expected one of"):
        execute(IDENT, u, backend="torch", path="conv1d")
    with pytest.raises(IRError, match="dtype: expected 'float64'"):
        execute(IDENT, u, backend="torch", dtype="float16")
    with pytest.raises(IRError, match="applies to backend='torch' only"):
        execute(IDENT, u, dtype="float32")
    with pytest.raises(IRError, match="applies to backend='modular' only"):
        execute(IDENT, u, backend="torch", p=7)
    with pytest.raises(IRError, match="expected a Model or a Circuit"):
        execute("model", u)
    with pytest.raises(IRError, match="expected a prime 2 ≤ p < 2"):
        execute(IDENT, u, backend="modular", p=2**31 + 11)
    with pytest.raises(IRError, match="expected a prime"):
        execute(IDENT, u, backend="modular", p=91)


def test_modular_eval_validation():
    p = 101
    with pytest.raises(IRError, match=r"expected residues in \[0, 101\)"):
        modular_eval(IDENT, torch.full((1, N, D), 101), p)
    with pytest.raises(IRError, match="expected an int64 tensor"):
        modular_eval(IDENT, torch.zeros((1, N, D)), p)
    with pytest.raises(ShapeError, match=r"points: expected shape \(B, 5, 2\)"):
        modular_eval(IDENT, torch.zeros((N, D), dtype=torch.int64), p)
    with pytest.raises(IRError, match=r"params\['b'\]: the denominator of -1/2 is divisible by the prime 2"):
        modular_eval(SYM, torch.zeros((1, N, D), dtype=torch.int64), 2, params=PARAMS)


def test_device_and_backend_guards():
    from symverify.kernel.engines.torch_modular import limb_contract

    u = U.tolist()
    with pytest.raises(BackendUnavailableError, match="only 'cpu' and 'cuda' devices are supported"):
        execute(IDENT, u, backend="torch", device="meta")
    with pytest.raises(IRError, match="device: expected 'cpu', 'cuda' or 'cuda:K'"):
        execute(IDENT, u, backend="torch", device="gpu0")
    with pytest.raises(IRError, match="applies to the torch backends only"):
        execute(IDENT, u, device="cpu")
    huge = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.full(1, 1, 10**400), b2=Grid.full(1, 1, 1)),))
    with pytest.raises(CompileError, match="does not fit in float64"):
        execute(huge, [[1]], backend="torch")
    assert execute(huge, [[1]], backend="modular", p=7).tolist() == [[10**400 % 7]]
    with pytest.raises(ShapeError, match="at most 2\\^20 keep float64 limb sums exact"):
        limb_contract(torch.zeros(1, dtype=torch.int64), torch.zeros(1, dtype=torch.int64), 7, torch.mul, 2**20 + 1)
