"""The float executors' stated claims against an exact oracle written here.

The oracle is a plain BaseConv interpreter over Fractions, ``y = (u·W + b1) ⊙ (h ⊛ u + b2)``
with the causal and cyclic convolutions of docs/theory.md §1.1 and the embed/crop of §1.2, and
the same interpreter over residues mod p (Fractions mapped by the inverse of the denominator);
circuits are evaluated gate by gate (§2). It shares no code with the package.

Claims checked (README "Running models fast", the executors' docstrings):

- ``numeric_check``: the measured error is the oracle's, is at most the stated bound, and a bound
  0 means bit-exact output; an overflow is never passed off as a finite error within a bound;
- ``execute(..., backend="torch")`` on every path is within that bound too;
- ``modular_eval`` and ``backend="modular"`` equal the oracle mod p (p up to 2^31 − 1, residues
  up to p − 1: the 16-bit limb argument of the dense contractions);
- ``to_torch(model)`` equals ``execute`` bit for bit, except a dense projection where ``execute``
  runs a compiled program (within the stated bound);
- ``verify(..., numeric=...)`` never changes the verdict.

``SYMVERIFY_FLOAT_CLAIMS_EXAMPLES=N`` runs N hypothesis examples per property (default 6).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError
from symverify.executors import execute, modular_eval, numeric_check, to_torch
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.testing import circuits

EXAMPLES = int(os.environ.get("SYMVERIFY_FLOAT_CLAIMS_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PATHS = ("auto", "fft", "direct", "sparse")
DTYPES = ("float64", "float32", "bfloat16")
PRIMES = (2**31 - 1, 2147483629, 65521, 7)  # 2147483629: the largest prime below 2^31 − 1


# --------------------------------------------------------------------------------------------
# The oracle


def _rows(g: Grid) -> list[list[Fraction]]:
    return [[Fraction(v) for v in row] for row in g.to_rows()]  # type: ignore[arg-type]


def oracle_layer(layer: Layer, x: list[list[Fraction]]) -> list[list[Fraction]]:
    """``(x·W + b1) ⊙ (h ⊛ x + b2)`` over Fractions, term by term."""
    W, b1, h, b2 = _rows(layer.W), _rows(layer.b1), _rows(layer.h), _rows(layer.b2)
    n, d = len(x), len(x[0])
    cyclic = layer.mode == Mode.CYCLIC
    y = [[Fraction(0)] * d for _ in range(n)]
    for i in range(n):
        for j in range(d):
            proj = sum((x[i][k] * W[k][j] for k in range(d)), Fraction(0)) + b1[i][j]
            lags = range(n) if cyclic else range(i + 1)
            conv = sum((h[k][j] * x[(i - k) % n][j] for k in lags), Fraction(0)) + b2[i][j]
            y[i][j] = proj * conv
    return y


def oracle_model(m: Model, u: list[list[object]]) -> list[list[Fraction]]:
    """Embed ``u`` top-left in a zero ``N'×d'`` state, run the layers, crop to ``N×d``."""
    x = [[Fraction(0)] * m.inner_d for _ in range(m.inner_n)]
    for i in range(m.n):
        for j in range(m.d):
            x[i][j] = Fraction(u[i][j])  # type: ignore[arg-type]
    for layer in m.layers:
        x = oracle_layer(layer, x)
    return [row[: m.d] for row in x[: m.n]]


def oracle_circuit(c: Circuit, u: list[list[object]]) -> list[list[Fraction]]:
    vals = [Fraction(v) for row in u for v in row]  # type: ignore[arg-type]
    for g in c.gates:
        if g.op == Op.CONST:
            vals.append(Fraction(g.coeffs[0]))  # type: ignore[arg-type]
        elif g.op == Op.LIN:
            vals.append(Fraction(g.coeffs[0]) * vals[g.args[0]] + Fraction(g.coeffs[1]) * vals[g.args[1]])  # type: ignore[arg-type]
        else:
            vals.append(vals[g.args[0]] * vals[g.args[1]])
    flat = [vals[o] for o in c.outputs] + [Fraction(0)] * (c.n * c.d - len(c.outputs))
    return [flat[i * c.d:(i + 1) * c.d] for i in range(c.n)]


def oracle(obj: Model | Circuit, u: list[list[object]]) -> list[list[Fraction]]:
    return oracle_model(obj, u) if isinstance(obj, Model) else oracle_circuit(obj, u)


def mod(v: Fraction, p: int) -> int:
    return v.numerator % p * pow(v.denominator, -1, p) % p


def oracle_mod(m: Model, u: list[list[int]], p: int) -> list[list[int]]:
    """The oracle over residues mod p, reduced after every operation."""
    def grid(g: Grid) -> list[list[int]]:
        return [[mod(v, p) for v in row] for row in _rows(g)]

    x = [[0] * m.inner_d for _ in range(m.inner_n)]
    for i in range(m.n):
        for j in range(m.d):
            x[i][j] = u[i][j] % p
    n, d = m.inner_n, m.inner_d
    for layer in m.layers:
        W, b1, h, b2 = grid(layer.W), grid(layer.b1), grid(layer.h), grid(layer.b2)
        cyclic = layer.mode == Mode.CYCLIC
        y = [[0] * d for _ in range(n)]
        for i in range(n):
            for j in range(d):
                proj = (sum(x[i][k] * W[k][j] for k in range(d)) + b1[i][j]) % p
                lags = range(n) if cyclic else range(i + 1)
                conv = (sum(h[k][j] * x[(i - k) % n][j] for k in lags) + b2[i][j]) % p
                y[i][j] = proj * conv % p
        x = y
    return [row[: m.d] for row in x[: m.n]]


def abs_error(approx: torch.Tensor, exact: list[list[list[Fraction]]]) -> float:
    """max |approx − exact| over every entry, exactly (a float is a dyadic rational), rounded up to
    a float (a nonzero error never reads 0); inf where ``approx`` is not finite."""
    a = approx.detach().double().cpu().numpy()
    worst = Fraction(0)
    for idx in np.ndindex(a.shape):
        v = float(a[idx])
        if not math.isfinite(v):
            return math.inf
        worst = max(worst, abs(Fraction(v) - exact[idx[0]][idx[1]][idx[2]]))
    f = float(worst)
    return math.nextafter(f, math.inf) if Fraction(f) < worst else f


def bit_exact(approx: torch.Tensor, exact: list[list[list[Fraction]]]) -> bool:
    a = approx.detach().double().cpu().numpy()
    return all(math.isfinite(float(a[i])) and Fraction(float(a[i])) == exact[i[0]][i[1]][i[2]] for i in np.ndindex(a.shape))


def check_claims(obj: Model | Circuit, u: list, dtype: str, path: str = "auto") -> None:
    """numeric_check against the oracle, and the executor's own output against the bound."""
    exact = [oracle(obj, pt) for pt in u]
    chk = numeric_check(obj, u, dtype=dtype, path=path)
    kw = {"path": path} if isinstance(obj, Model) else {}
    y = execute(obj, u, backend="torch", dtype=dtype, **kw)
    err = abs_error(y, exact)
    assert chk.points == len(u) and chk.dtype == dtype
    assert chk.ok, chk
    assert chk.max_abs_err <= chk.tolerance, chk
    assert err <= chk.tolerance, (err, chk)  # the executor's own output is within the stated bound
    top = max((abs(v) for pt in exact for row in pt for v in row), default=Fraction(0))
    assert chk.max_abs_exact == float(top)
    if chk.tolerance == 0:  # a stated bound 0 means bit-exact
        assert chk.max_abs_err == 0 and err == 0 and bit_exact(y, exact), (err, chk)


# --------------------------------------------------------------------------------------------
# Draws

WEIGHTS = st.sampled_from([0, 0, 0, 1, -1, 2, 7, Fraction(1, 2), Fraction(-3, 4), Fraction(1, 3), Fraction(-2, 5)])
INTEGER_WEIGHTS = st.sampled_from([0, 0, 0, 1, -1, 2, -3])


@st.composite
def models(draw: st.DrawFn, integral: bool = False, max_layers: int = 3) -> Model:
    n, d = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    nn, dd = n + draw(st.integers(0, 2)), d + draw(st.integers(0, 1))
    w = INTEGER_WEIGHTS if integral else WEIGHTS

    def grid(r: int, c: int) -> Grid:
        return Grid.from_rows([[draw(w) for _ in range(c)] for _ in range(r)])

    layers = tuple(Layer(grid(dd, dd), grid(nn, dd), grid(nn, dd), grid(nn, dd), draw(st.sampled_from(list(Mode))))
                   for _ in range(draw(st.integers(1, max_layers))))
    return Model(n, d, nn, dd, layers, "drawn")


def inputs(draw: st.DrawFn, n: int, d: int, integral: bool = False) -> list:
    bsz = draw(st.sampled_from([1, 3]))
    v = st.integers(-4, 4) if integral else st.one_of(st.integers(-4, 4), st.builds(Fraction, st.integers(-5, 5), st.sampled_from([2, 3, 7])))
    return [[[draw(v) for _ in range(d)] for _ in range(n)] for _ in range(bsz)]


# --------------------------------------------------------------------------------------------
# Drawn models and compiled circuits


@SETTINGS
@given(st.data())
def test_oracle_is_the_exact_executor(data):
    """The oracle and ``execute(backend="exact")`` agree (so the oracle reads the IR correctly)."""
    m = data.draw(models())
    u = inputs(data.draw, m.n, m.d)
    assert execute(m, u).tolist() == [oracle_model(m, pt) for pt in u]


@SETTINGS
@given(st.data())
def test_drawn_models_within_the_stated_bound_on_every_path_and_dtype(data):
    integral = data.draw(st.booleans())
    m = data.draw(models(integral=integral))
    u = inputs(data.draw, m.n, m.d, integral)
    for path in PATHS:
        for dtype in DTYPES:
            check_claims(m, u, dtype, path)


@SETTINGS
@given(st.data())
def test_integer_models_on_small_integers_are_bit_exact_in_float64(data):
    """The stated bound 0 (sparse and direct paths, float64, integers below 2^53) holds, and the
    output is the oracle's exactly."""
    m = data.draw(models(integral=True, max_layers=2))
    u = inputs(data.draw, m.n, m.d, integral=True)
    exact = [oracle_model(m, pt) for pt in u]
    for path in ("sparse", "direct"):
        chk = numeric_check(m, u, path=path)
        assert chk.tolerance == 0 and chk.max_abs_err == 0, chk
        assert bit_exact(execute(m, u, backend="torch", path=path), exact)


@SETTINGS
@given(st.data())
def test_compiled_circuits_within_the_stated_bound(data):
    c = data.draw(circuits(max_n=2, max_d=2, max_gates=6))
    u = inputs(data.draw, c.n, c.d)
    model = sv.compile(c).model
    exact = [oracle_circuit(c, pt) for pt in u]
    assert [oracle_model(model, pt) for pt in u] == exact  # the compiled model is the circuit
    for dtype in DTYPES:
        check_claims(c, u, dtype)
        check_claims(model, u, dtype)


@SETTINGS
@given(st.data())
def test_modular_eval_is_the_oracle_mod_p(data):
    m = data.draw(models())
    p = data.draw(st.sampled_from(PRIMES))
    bsz = data.draw(st.sampled_from([1, 2]))
    pts = [[[data.draw(st.sampled_from([0, 1, p - 1, p - 2, p // 2, data.draw(st.integers(0, p - 1))]))
             for _ in range(m.d)] for _ in range(m.n)] for _ in range(bsz)]
    want = [oracle_mod(m, pt, p) for pt in pts]
    for path in PATHS:
        assert modular_eval(m, torch.tensor(pts, dtype=torch.int64), p, path=path).tolist() == want, path
        assert execute(m, pts, backend="modular", p=p, path=path).tolist() == want, path


@pytest.mark.parametrize("p", [2**31 - 1, 2147483629])
def test_modular_dense_contractions_at_the_top_of_the_residues(p):
    """Dense W and dense kernels (the limb contractions) with every residue and weight near p:
    the largest products the limb argument must carry."""
    n, d = 12, 6
    top = [p - 1 - k for k in range(n * d)]
    g = [[top[(i * d + j) % len(top)] for j in range(d)] for i in range(n)]
    big = Grid.from_rows(g)
    W = Grid.from_rows([row[:d] for row in g[:d]])
    m = Model(n, d, n, d, (Layer(W, big, big, big, Mode.CAUSAL), Layer(W, big, big, big, Mode.CYCLIC)))
    pts = [[[p - 1] * d for _ in range(n)], g]
    want = [oracle_mod(m, pt, p) for pt in pts]
    for path in PATHS:
        assert modular_eval(m, torch.tensor(pts, dtype=torch.int64), p, path=path).tolist() == want, path


def _dense_w(m: Model) -> bool:
    """Some layer's ``W`` has a column with two or more nonzero entries (a dense projection)."""
    return any(any(sum(1 for i in range(ly.W.rows) if ly.W.get(i, j) != 0) >= 2 for j in range(ly.W.cols)) for ly in m.layers)


@SETTINGS
@given(st.data())
def test_to_torch_is_execute_bit_for_bit(data):
    """Bit for bit, except the one documented case: ``execute`` runs a model whose convolutions
    are all shifts as a compiled program, whose dense projection is one ``mm`` of ``Wᵀ`` with the
    channels-first state (natively: fused multiply-adds in order) where the module runs torch's
    ``matmul`` of the state with ``W``; the two may sum in different orders (with
    ``SYMVERIFY_NATIVE=0`` too); both are then within the executor's stated error bound of the
    exact value."""
    from symverify.executors.program import compilable
    from symverify.kernel.engines.numbers import float_numbers
    from symverify.kernel.engines.plan import model_plan

    m = data.draw(models())
    bsz = data.draw(st.sampled_from([1, 4]))
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 2**16)))
    for dtype in (torch.float64, torch.float32):
        x = (torch.randn(bsz, m.n, m.d, generator=g, dtype=torch.float64) * 3).to(dtype)
        for path in ("auto", "fft", "direct"):
            got = to_torch(m, dtype=dtype, path=path)(x)
            want = execute(m, x, backend="torch", dtype=dtype, path=path)
            assert got.dtype == want.dtype
            if torch.equal(got, want):
                continue
            program = compilable(model_plan(m, float_numbers(None)).layers, path)
            assert program and _dense_w(m), (dtype, path)
            u = [[[Fraction(v) for v in row] for row in pt] for pt in x.double().tolist()]
            exact = [oracle_model(m, pt) for pt in u]
            tol = numeric_check(m, u, path=path, dtype=str(dtype).removeprefix("torch.")).tolerance
            assert abs_error(got, exact) <= tol and abs_error(want, exact) <= tol, (dtype, path)


@SETTINGS
@given(st.data())
def test_to_torch_with_gradients_stays_within_the_executors_bound(data):
    """``requires_grad=True`` runs out-of-place torch operations: on the direct path their sums may
    round otherwise than ``execute`` (last bits), so not bit for bit, but within the same stated bound,
    and bit-exact wherever that bound is 0."""
    m = data.draw(models())
    halves = st.builds(Fraction, st.integers(-8, 8), st.sampled_from([1, 2, 4]))  # exact in float64
    u = [[[data.draw(halves) for _ in range(m.d)] for _ in range(m.n)] for _ in range(data.draw(st.sampled_from([1, 3])))]
    x = torch.tensor([[[float(v) for v in row] for row in pt] for pt in u], dtype=torch.float64)
    exact = [oracle_model(m, pt) for pt in u]
    for path in ("auto", "fft", "direct"):
        chk = numeric_check(m, u, path=path)
        y = to_torch(m, path=path, requires_grad=True)(x).detach()
        assert abs_error(y, exact) <= chk.tolerance, path
        if chk.tolerance == 0:
            assert bit_exact(y, exact) and torch.equal(y, execute(m, x, backend="torch", path=path))


@pytest.mark.parametrize("n", [8, 40])
def test_fused_zoology_layers_are_within_the_paper_layers_bound(n):
    """``execute`` runs zoology's pair form fused (one FFT of a 5-smooth size, or a Toeplitz
    product); ``numeric_check`` bounds the paper layers. The fused output is within that bound too."""
    from symverify.executors import ZoologyBaseConv, from_zoology

    g = torch.Generator().manual_seed(n)
    z = ZoologyBaseConv(3, n)
    with torch.no_grad():
        for prm in z.parameters():
            prm.copy_(torch.randint(-3, 4, prm.shape, generator=g) * 0.25)
    m = from_zoology(z, form="pair")
    x = torch.randint(-8, 9, (2, n, 3), generator=g).double() / 4
    u = [[[Fraction(v) for v in row] for row in pt] for pt in x.tolist()]
    exact = [oracle_model(m, pt) for pt in u]
    for dtype in (torch.float64, torch.float32):
        chk = numeric_check(m, u, dtype=dtype)
        assert abs_error(execute(m, x.to(dtype), backend="torch", dtype=dtype), exact) <= chk.tolerance


@pytest.mark.parametrize("numeric", [True, "float32", "bfloat16"])
def test_numeric_never_changes_the_verdict(numeric):
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    good = sv.compile(c).model
    last = good.layers[-1]
    moved = Layer(last.W, last.b1, last.h, Grid.from_rows([[v + 1 for v in row] for row in last.b2.to_rows()]),  # type: ignore[operator]
                  last.mode)
    bad = Model(good.n, good.d, good.inner_n, good.inner_d, (*good.layers[:-1], moved))
    for other in (good, bad):
        plain = sv.verify(c, other)
        with_float = sv.verify(c, other, numeric=numeric)
        assert with_float.verdict == plain.verdict and with_float.method == plain.method
        assert with_float.numeric is not None
    assert sv.verify(c, bad).verdict != sv.verify(c, good).verdict


def _dense_bf16_model(n: int, d: int) -> Model:
    """``y = u·W`` with every weight of ``W`` (``d×d``) equal to 2^60: a dense projection, one
    matrix product ``(n, d) @ (d, d)`` of the executor."""
    W = sv.Grid.zeros(d, d).paint(0, d, 0, d, 2**60)
    return Model(n, d, n, d, (Layer.make(n, d, W=W, b2=sv.Grid.zeros(n, d).paint(0, n, 0, d, 1)),))


@pytest.mark.filterwarnings("ignore:TF32 acceleration on top of oneDNN")
def test_a_cpu_whose_bfloat16_matrix_products_flush_subnormals_is_refused_not_reported_as_an_executor_bug():
    """oneDNN's bfloat16 products on AVX512-BF16/AMX CPUs read subnormal inputs as 0 whatever the
    flush mode, for large products only (here ``512×8 @ 8×8``; ``32×8 @ 8×8`` keeps them): the
    elementwise probe passed and the result (0 for ``8·(tiny/2)·2^60``) was reported as EXCEEDS. It
    is an IRError naming oneDNN; with oneDNN off the same check is within its bound."""
    from symverify.executors.numeric import gemm_flushes_subnormals

    if not gemm_flushes_subnormals(torch.bfloat16, torch.device("cpu")):
        pytest.skip("this CPU's bfloat16 matrix products keep subnormal numbers")
    u = [[[Fraction(torch.finfo(torch.bfloat16).tiny) / 2] * 8 for _ in range(512)]]
    with pytest.raises(IRError, match=r"oneDNN bfloat16 matrix products read subnormal numbers as 0 .*mkldnn\.flags\(enabled=False\)"):
        numeric_check(_dense_bf16_model(512, 8), u, dtype="bfloat16")
    chk = numeric_check(_dense_bf16_model(32, 8), [row[:32] for row in u], dtype="bfloat16")  # a product below oneDNN's size
    assert chk.ok and chk.max_abs_err == 0
    with torch.backends.mkldnn.flags(enabled=False):
        assert not gemm_flushes_subnormals(torch.bfloat16, torch.device("cpu"))
        chk = numeric_check(_dense_bf16_model(512, 8), u, dtype="bfloat16")
    assert chk.ok and chk.max_abs_err <= chk.tolerance
    for dt in (torch.float64, torch.float32):
        assert not gemm_flushes_subnormals(dt, torch.device("cpu"))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
def test_a_cpu_flushing_subnormals_is_refused_not_reported_as_an_executor_bug(dtype):
    """With ``torch.set_flush_denormal(True)`` a subnormal input is read as 0: ``x·y`` with
    ``x = tiny/2^8`` and ``y = 2^60`` came out 0, off by far more than the stated bound, and was
    reported as an executor bug (EXCEEDS). Under flushing ``numeric_check`` refuses to state a bound;
    ``verify(numeric=...)`` lists the side as not run and keeps its verdict; gradual underflow again
    gives a bound that holds."""
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    tiny = Fraction(torch.finfo(dtype).tiny)
    u = [[[tiny / 2**8, 2**60]]]
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU cannot flush subnormal numbers")
    try:
        for obj in (c, sv.compile(c).model):
            with pytest.raises(IRError, match=r"cpu flushes subnormal .* numbers to zero .*set_flush_denormal\(False\)"):
                numeric_check(obj, u, dtype=dtype)
        rep = sv.verify(c, sv.compile(c), numeric=True)
        assert rep.proved and not rep.numeric.sides and len(rep.numeric.skipped) == 2
        assert all("flushes subnormal" in why for why in rep.numeric.skipped)
    finally:
        torch.set_flush_denormal(False)
    chk = numeric_check(c, u, dtype=dtype)
    assert chk.ok and chk.max_abs_err <= chk.tolerance


@pytest.mark.parametrize("precision", ["high", "medium"])
def test_float32_matrix_products_below_highest_precision_are_refused(precision):
    """Under ``torch.set_float32_matmul_precision("medium")`` float32 products may run in bfloat16 (on
    the CPU too), outside the float32 bound ("high": TF32 on CUDA): ``numeric_check`` refuses to
    state a bound it does not hold and says how to get one; at "highest" it checks."""
    rng = np.random.default_rng(0)
    n = d = 64
    W = Grid.from_rows(rng.integers(-3, 4, size=(d, d)).tolist())
    m = Model(n, d, n, d, (Layer.make(n, d, W=W, h=Grid.zeros(n, d).paint(0, 1, 0, d, 1)),))
    u = [[[Fraction(int(x), 7) for x in row] for row in rng.integers(-9, 10, size=(n, d))]]
    chk = numeric_check(m, u, dtype="float32")
    assert chk.ok and chk.tolerance > 0
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        with pytest.raises(IRError, match=rf"precision '{precision}' .*set_float32_matmul_precision\('highest'\)"):
            numeric_check(m, u, dtype="float32")
        numeric_check(m, u, dtype="float64")  # float64 products are not affected
        if precision == "medium":
            # Where the CPU honours "medium" (CPUs with AVX512-BF16 or AMX), the product is no longer
            # float32's: one bfloat16 pass breaks float32's γ_k bound, a split into several bfloat16
            # passes changes the bits while staying near it; elsewhere torch runs the float32
            # product unchanged. The refusal never depends on which: only "highest" is held to the
            # bound below (a probe of what the CPU does, printed for the log).
            g = torch.Generator().manual_seed(0)
            a, b = torch.randn(256, 256, generator=g), torch.randn(256, 256, generator=g)
            medium = a @ b
            torch.set_float32_matmul_precision("highest")
            highest = a @ b
            err = (medium.double() - a.double() @ b.double()).abs()
            k, u32 = 256, 2.0**-24
            broken = bool((err > k * u32 / (1 - k * u32) * (a.double().abs() @ b.double().abs())).any())
            print(f"float32 'medium' on this CPU: {'breaks the float32 bound' if broken else 'within the float32 bound'}, "
                  f"{'the same bits as' if torch.equal(medium, highest) else 'other bits than'} 'highest'")
            assert not bool((highest.double() - a.double() @ b.double()).abs().gt(
                k * u32 / (1 - k * u32) * (a.double().abs() @ b.double().abs())).any())
    finally:
        torch.set_float32_matmul_precision(old)


# --------------------------------------------------------------------------------------------
# Adversarial models


def _square(n: int = 1, d: int = 1, w: object = 1) -> Layer:
    """``x ↦ (w·x)·x`` on every channel (W = w·I, h = δ_0)."""
    return Layer.make(n, d, W=Grid.identity(d).paint(0, d, 0, d, 0).paint_cells((j, j, w) for j in range(d)),
                      h=Grid.zeros(n, d).paint(0, 1, 0, d, 1))


def _chain(depth: int, w: object = 1) -> Model:
    return Model(1, 1, 1, 1, tuple(_square(w=w) for _ in range(depth)))


@pytest.mark.parametrize("path", PATHS)
def test_integers_beyond_2_53_get_a_nonzero_bound_that_holds(path):
    """3^(2^6) = 3^64 > 2^53: float64 is no longer exact on this integer model, so the bound is
    not 0, the error is real and within it."""
    m = _chain(6)
    u = [[[3]], [[-3]], [[1]]]
    chk = numeric_check(m, u, path=path)
    y = execute(m, u, backend="torch", path=path)
    err = abs_error(y, [oracle_model(m, pt) for pt in u])
    assert err > 0 and chk.max_abs_err == err
    assert 0 < err <= chk.tolerance and chk.ok
    small = numeric_check(_chain(5), u, path=path)  # 3^32 < 2^53: exact where no FFT rounds
    assert small.max_abs_err == 0 and (small.tolerance == 0) == (path != "fft")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_integer_models_in_low_precision_round_and_say_so(dtype):
    m = _chain(3)
    u = [[[131]], [[-7]]]  # 131^8 needs 57 bits
    chk = numeric_check(m, u, dtype=dtype, path="sparse")
    assert 0 < chk.max_abs_err <= chk.tolerance and chk.ok


def test_cancellation_large_plus_minus_large_plus_small():
    """(2^60 + (−2^60) + 1)·1: float64 sums the large terms exactly here, float32 loses the 1
    in (2^60 + 1) before the cancellation; the bound must cover the lost 1 (relative error 1)."""
    W = Grid.from_rows([[1, 0, 0], [1, 0, 0], [1, 0, 0]])
    layer = Layer.make(1, 3, W=W, b2=Grid.full(1, 3, 1))
    m = Model(1, 3, 1, 3, (layer,))
    for u in ([[[2**60, -(2**60), 1]]], [[[2**60, 1, -(2**60)]]], [[[Fraction(1, 3) * 2**60, -Fraction(1, 3) * 2**60, Fraction(1, 3)]]]):
        for dtype in DTYPES:
            check_claims(m, u, dtype, "sparse")
    # exact float64 inputs, one layer, relative error 1: "doubles per layer" holds relative to the
    # magnitudes summed, not to the result
    chk = numeric_check(m, [[[2**60, 1, -(2**60)]]], path="sparse")
    assert chk.max_rel_err == 1 and chk.max_abs_err == 1 <= chk.tolerance


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_non_dyadic_weights_and_inputs(path, dtype):
    third = Layer.make(4, 2, W=Grid.full(2, 2, Fraction(1, 3)), b1=Grid.full(4, 2, Fraction(-1, 7)),
                       h=Grid.from_rows([[Fraction(1, 3), 1], [0, Fraction(2, 5)], [1, 0], [Fraction(-1, 3), 3]]),
                       b2=Grid.full(4, 2, Fraction(1, 10)))
    m = Model(3, 2, 4, 2, (third, Layer(third.W, third.b1, third.h, third.b2, Mode.CYCLIC)))
    u = [[[Fraction(i - j, 3) for j in range(2)] for i in range(3)], [[Fraction(1, 3)] * 2] * 3]
    check_claims(m, u, dtype, path)


@pytest.mark.parametrize("path", PATHS)
def test_dyadic_weights_beyond_float32_precision(path):
    """1 + 2^-30 is exact in float64, rounded in float32 and bfloat16 (ω = u there)."""
    w = 1 + Fraction(1, 2**30)
    m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.full(1, 1, w), h=Grid.from_rows([[w], [1]])),))
    u = [[[3], [Fraction(5, 4)]]]
    for dtype in DTYPES:
        check_claims(m, u, dtype, path)


def test_an_exact_output_beyond_float64_is_a_clear_error():
    """2^600 squared is 2^1200: no float64 to compare with, so an error, never a small one."""
    with pytest.raises(IRError, match="beyond the range of float64"):
        numeric_check(_chain(1), [[[2**600]]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("path", PATHS)
def test_overflow_in_the_float_computation_is_never_within_a_finite_bound(dtype, path):
    """Values at the top of the dtype's range: ``2^e + 2^e`` (e = 1023, or 127 for float32 and
    bfloat16) overflows to inf in the projection, while the exact output ``2^(e+1)·2^-2`` fits. An
    infinite error within a finite bound would be a false claim; a stated "no bound" (inf) or a
    clear error is not."""
    e = 1023 if dtype == "float64" else 127
    layer = Layer.make(1, 2, W=Grid.from_rows([[1, 0], [1, 0]]), h=Grid.from_rows([[0, 1]]),
                       b2=Grid.from_rows([[Fraction(1, 4), 0]]))
    m = Model(1, 2, 1, 2, (layer,))
    u = [[[2**e, 2**e]]]
    assert oracle_model(m, u[0])[0][0] == 2 ** (e - 1)
    with pytest.raises(IRError, match=f"beyond the range of {dtype}.*overflowed.*no bound"):
        numeric_check(m, u, dtype=dtype, path=path)


def test_verify_reports_an_overflowing_side_as_skipped_not_as_an_executor_bug():
    """float32 overflows on (2^100·x)·(2^100·x): the side is skipped with the reason, the verdict
    stays and no executor bug is reported (an overflow is none, and no finite bound holds there);
    with both sides skipped nothing was compared: ``not run``, never ``passed``."""
    big = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.full(1, 1, 2**100), h=Grid.full(1, 1, 2**100)),))
    same = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.full(1, 1, 2**200), h=Grid.full(1, 1, 1)),))
    plain = sv.verify(big, same)
    r = sv.verify(big, same, numeric="float32")
    assert r.verdict == plain.verdict == "proved"
    assert r.numeric is not None and r.numeric.passed is None and r.numeric.status == "not run" and not r.numeric.sides
    assert all("float32 computation overflowed" in s for s in r.numeric.skipped) and len(r.numeric.skipped) == 2


def test_a_vacuous_bound_reads_inf():
    """The docstring: a bound is inf (vacuous) where (k+1)·u ≥ 1, e.g. a bfloat16 sum of 256
    terms; it must read inf, not the largest float."""
    d = 256
    m = Model(1, d, 1, d, (Layer.make(1, d, W=Grid.full(d, d, 1), b2=Grid.full(1, d, Fraction(1, 3))),))
    chk = numeric_check(m, [[[Fraction(1, 3)] * d]], dtype="bfloat16")
    assert chk.tolerance == math.inf and chk.ok


@pytest.mark.parametrize("dtype", DTYPES)
def test_underflow_is_within_the_bound(dtype):
    """Products below the smallest subnormal flush to 0 (gradual underflow breaks the relative
    model fl(ab) = ab(1 + δ)): the error is tiny but must still be within the stated bound."""
    e = {"float64": 600, "float32": 80, "bfloat16": 80}[dtype]
    for path in PATHS:
        check_claims(_chain(1), [[[Fraction(1, 2**e)]], [[Fraction(3, 2**e)]]], dtype, path)


@pytest.mark.parametrize("path", PATHS)
def test_inputs_rounded_below_the_range_are_within_the_bound(path):
    """An input 3·2^-1076 is 2^-1074 in float64, an error of 2^-1076, which itself is below float64's
    range (its nearest float64 is 0); a weight 2^500 magnifies it to 2^-576, far above every
    rounding and underflow term of the layer. The input's error must enter the bound rounded up."""
    m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.full(1, 1, 2**500), b2=Grid.full(1, 1, 1)),))
    check_claims(m, [[[Fraction(3, 2**1076)]], [[Fraction(-5, 2**1077)]]], "float64", path)
    c = Circuit(1, 1, (Gate.lin(0, 2**500, 0, 0),), (1,))
    check_claims(c, [[[Fraction(3, 2**1076)]]], "float64")


@pytest.mark.parametrize("dtype", DTYPES)
def test_weights_rounded_below_the_range_are_within_the_bound(dtype):
    """A weight that rounds to a subnormal (3·2^-151 in float32 and bfloat16, 3·2^-1076 in float64)
    has an absolute rounding error, not a relative one; a large input magnifies it."""
    e = 1076 if dtype == "float64" else 151
    w = Fraction(3, 2**e)
    m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.full(1, 1, w), h=Grid.full(1, 1, w)),))
    big = 2 ** (e // 2 + 10)
    for path in PATHS:
        check_claims(m, [[[big]], [[Fraction(big, 3)]]], dtype, path)
    c = Circuit(1, 2, (Gate.lin(0, w, 1, 1), Gate.mul(0, 1), Gate.const(w)), (2, 3, 4)[:2])
    check_claims(c, [[[big, Fraction(1, 3)]], [[Fraction(1, 2**(e // 2 + 10)), Fraction(3, 2**(e // 2 + 10))]]], dtype)
    # the constant alone (the bound is a max over a point's outputs, so next to the others its
    # term is never read): rounded below the range, its error is η, not u·|w|
    check_claims(Circuit(1, 1, (Gate.const(w),), (1,)), [[[0]]], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_circuit_gates_below_the_range_are_within_the_bound(dtype):
    """Each gate's underflow term alone (the bound is a max over a point's outputs, so one output
    per circuit, and inputs whose relative terms are far below the underflow): a product that
    flushes to 0 (η), a linear gate whose products flush (2η), and a coefficient rounded to a
    subnormal times a large input (η·(|a| + |b|))."""
    e = 600 if dtype == "float64" else 80  # (2^-e)^2 is below the smallest subnormal
    small = Fraction(1, 2**e)
    check_claims(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), [[[small, small]], [[3 * small, -small]]], dtype)
    a, f = (Fraction(1, 2**1050), Fraction(1, 2**30)) if dtype == "float64" else (Fraction(1, 2**120), Fraction(1, 2**30))
    check_claims(Circuit(1, 2, (Gate.lin(0, f, 1, f),), (2,)), [[[a, a]], [[3 * a, -a]]], dtype)
    e = 1076 if dtype == "float64" else 151
    w, big = Fraction(3, 2**e), 2 ** (e // 2 + 10)
    check_claims(Circuit(1, 2, (Gate.lin(0, w, 1, 0),), (2,)), [[[big, 0]], [[-big, 5]]], dtype)


@pytest.mark.parametrize("backend", ["torch", "modular", "exact"])
def test_zero_size_batches(backend):
    m = _chain(2)
    y = execute(m, np.zeros((0, 1, 1), dtype=np.int64), backend=backend)
    assert tuple(y.shape) == (0, 1, 1)
    chk = numeric_check(m, np.zeros((0, 1, 1), dtype=np.int64))
    assert chk.points == 0 and chk.max_abs_err == 0 and chk.tolerance == 0 and chk.ok


def test_a_model_with_no_layers_is_the_identity_exactly():
    m = Model(2, 2, 3, 3, ())
    u = [[[Fraction(1, 3), 5], [-2, Fraction(7, 2)]]]
    for dtype in DTYPES:
        check_claims(m, u, dtype)


# --------------------------------------------------------------------------------------------
# The oracle catches planted bugs


def _lag_plus_one(monkeypatch: pytest.MonkeyPatch, only_modular: bool) -> None:
    """Plant a bug in the plans of the torch executors: every kernel lag read one too far."""
    import symverify.kernel.engines.plan as plan

    real = plan.kernel_taps

    def wrong(g, conv, dtype):  # type: ignore[no-untyped-def]
        lags, taps = real(g, conv, dtype)
        if only_modular and dtype != torch.int64:
            return lags, taps
        keep = [k for k, lag in enumerate(lags) if lag + 1 < g.rows]
        return tuple(lags[k] + 1 for k in keep), taps[keep]

    monkeypatch.setattr(plan, "kernel_taps", wrong)


def _shift_model() -> Model:  # a fresh object each time: plans are cached by the model's identity
    return Model(3, 1, 3, 1, (Layer.make(3, 1, b1=Grid.full(3, 1, 1), h=Grid.from_rows([[0], [1], [0]])),))


def test_the_oracle_catches_a_wrong_lag_in_the_float_executor(monkeypatch):
    u = [[[1], [2], [3]]]
    check_claims(_shift_model(), u, "float64", "sparse")
    _lag_plus_one(monkeypatch, only_modular=False)
    m = _shift_model()
    assert execute(m, u, backend="torch", path="sparse").tolist() == [[[0.0], [0.0], [1.0]]]  # the planted bug
    with pytest.raises(AssertionError):
        check_claims(m, u, "float64", "sparse")


def test_the_oracle_catches_a_wrong_lag_in_the_modular_executor(monkeypatch):
    """numeric_check never runs the modular path: only the oracle mod p sees this one."""
    p = 2**31 - 1
    pts = [[[1], [2], [p - 1]]]
    assert modular_eval(_shift_model(), torch.tensor(pts), p).tolist() == [oracle_mod(_shift_model(), pts[0], p)]
    _lag_plus_one(monkeypatch, only_modular=True)
    m = _shift_model()
    assert numeric_check(m, pts).ok  # the float path is untouched
    assert modular_eval(m, torch.tensor(pts), p).tolist() != [oracle_mod(m, pts[0], p)]


def test_the_oracle_catches_a_dropped_rounding_term(monkeypatch):
    """γ_k set to 0 (the dot product's rounding term dropped): float32 rounds
    1 + 2^-25 + 2^-25 + 2^-25 to 1, an error of 1.5·u that the gate's own u·|P̂Ĉ| does not cover; the
    oracle's measured error then exceeds the stated bound."""
    import symverify.executors.numeric as nm

    W = Grid.from_rows([[1, 0, 0, 0]] * 4)
    m = Model(1, 4, 1, 4, (Layer.make(1, 4, W=W, b2=Grid.full(1, 4, 1)),))
    small = Fraction(1, 2**25)
    u = [[[1, small, small, small]]]
    check_claims(m, u, "float32", "sparse")
    monkeypatch.setattr(nm, "_gamma", lambda k, u: 0.0)
    chk = numeric_check(m, u, dtype="float32", path="sparse")
    err = abs_error(execute(m, u, backend="torch", dtype="float32", path="sparse"), [oracle_model(m, u[0])])
    assert err == 1.5 * 2.0**-24 > chk.tolerance and not chk.ok
    with pytest.raises(AssertionError):
        check_claims(m, u, "float32", "sparse")
