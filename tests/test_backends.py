"""Every backend of the one layer loop (:mod:`symverify.kernel.semantics.layer`) on the same cases.

The matrix is backends × cases. Each case is a model with exact inputs and parameter values;
each backend runs it through its public entry point and must agree with :func:`reference`, the
definition of docs/theory.md §1.1–§1.2 written out cell by cell (dense, no skipping, nothing shared with
the backends): exactly for the ring interpreter in every ring, modulo the prime for the modular
backends, exactly for float64 where the arithmetic is exact (integer data on the shift and direct
paths), and within the float error bound (``numeric_check``) everywhere else.

Cases cover causal and cyclic layers, a dense, sparse (one entry per column) and zero ``W``, few
taps (shifts), many taps (FFT under ``path='auto'``) and no taps, biases of every structure the
float plan detects (zero, per channel, per position, an outer-product mask, dense), padding,
symbolic weights with parameters, fractional weights and inputs, a layer whose convolution branch
is identically zero, and compiled and synthetic models.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pytest
import torch

import symverify as sv
from symverify.executors import execute, modular_eval, numeric_check
from symverify.executors.synthetic import impulse_model
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, Sym, sym
from symverify.kernel.provers.modular import BatchModRing, eval_mod_batch, model_mod_batch
from symverify.kernel.provers.sides import as_side
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.semantics.rings import FractionRing, ModRing, eval_sym
from symverify.library import random_circuit

P31 = 2**31 - 1  # the torch modular backend's default prime
P61 = 2**61 - 1
P62 = 2**62 - 57  # the batch gives each point its own prime
A, B = sym("a"), sym("b")


# ---- the definition, written out ---------------------------------------------------------------


def reference(m: Model, u: Sequence[Sequence[Any]], params: dict[str, Any]) -> list[list[Fraction]]:
    """docs/theory.md §1.1–§1.2 cell by cell: embed, then for every layer and every cell
    ``(Σ_p x[i,p]·W[p,j] + b1[i,j]) · (Σ_k h[k,j]·x[i−k,j] + b2[i,j])`` with ``k ≤ i`` (causal)
    or ``i − k`` mod N' (cyclic), then crop."""

    def dense(g: Grid) -> list[list[Fraction]]:
        return [[Fraction(eval_sym(v, params)) if isinstance(v, Sym) else Fraction(v) for v in row] for row in g.to_rows()]

    nn, dd = m.inner_n, m.inner_d
    x = [[Fraction(u[i][j]) if i < m.n and j < m.d else Fraction(0) for j in range(dd)] for i in range(nn)]
    for layer in m.layers:
        W, b1, h, b2 = dense(layer.W), dense(layer.b1), dense(layer.h), dense(layer.b2)
        cyclic = layer.mode is Mode.CYCLIC
        y = [[Fraction(0)] * dd for _ in range(nn)]
        for i in range(nn):
            for j in range(dd):
                proj = sum((x[i][p] * W[p][j] for p in range(dd)), b1[i][j])
                lags = range(nn) if cyclic else range(i + 1)
                conv = sum((h[k][j] * x[(i - k) % nn][j] for k in lags), b2[i][j])
                y[i][j] = proj * conv
        x = y
    return [row[: m.d] for row in x[: m.n]]


def residue(x: Fraction, p: int) -> int:
    return x.numerator * pow(x.denominator, -1, p) % p


# ---- the cases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A model, a few exact input points and the parameter values of its symbolic weights."""

    id: str
    model: Model
    inputs: list[list[list[Any]]]
    params: dict[str, Fraction] = field(default_factory=dict)

    @property
    def integral(self) -> bool:
        """Integer weights, parameters and inputs (float64 is then exact off the FFT path)."""
        weights = (v for layer in self.model.layers for _, g in layer.grids() for v in g.values())
        values = [*weights, *self.params.values(), *(x for pt in self.inputs for row in pt for x in row)]
        return all(not isinstance(v, Sym) and Fraction(v).denominator == 1 for v in values) and not self.model.params()


def _grid(rng: random.Random, rows: int, cols: int, density: float, values: Sequence[Scalar]) -> Grid:
    return Grid.from_cells(rows, cols, {(i, j): rng.choice(values) for i in range(rows) for j in range(cols) if rng.random() < density})


def _bias(kind: str, rng: random.Random, nn: int, dd: int, values: Sequence[Scalar]) -> Grid:
    """A bias of each structure the float plan tells apart (:func:`~symverify.kernel.engines.plan.compact_bias`)."""
    if kind == "zero":
        return Grid.zeros(nn, dd)
    if kind == "chan":  # one value per channel
        return Grid.from_rows([[values[j % len(values)] for j in range(dd)] for _ in range(nn)])
    if kind == "pos":  # one value per position
        return Grid.from_rows([[values[i % len(values)]] * dd for i in range(nn)])
    if kind == "outer":  # a rectangle mask: rows × columns
        return Grid(nn, dd, 0, ((1, nn, 0, max(1, dd - 1), values[0]),))
    return _grid(rng, nn, dd, 0.7, values)


def _layer(rng: random.Random, nn: int, dd: int, *, w: str, taps: str, b1: str, b2: str, mode: Mode,
           values: Sequence[Scalar]) -> Layer:
    if w == "dense":
        W = _grid(rng, dd, dd, 1.0, values)
    elif w == "sparse":  # one entry per column: a signed permutation times weights
        perm = list(range(dd))
        rng.shuffle(perm)
        W = Grid.from_cells(dd, dd, {(perm[q], q): rng.choice(values) for q in range(dd)})
    else:
        W = Grid.zeros(dd, dd)
    if taps == "many":
        h = _grid(rng, nn, dd, 1.0, values)
    elif taps == "few":
        lags = rng.sample(range(nn), 2)
        h = Grid(nn, dd, 0, tuple((k, k + 1, 0, dd, rng.choice(values)) for k in lags))
    else:
        h = Grid.zeros(nn, dd)
    return Layer(W, _bias(b1, rng, nn, dd, values), h, _bias(b2, rng, nn, dd, values), mode)


def _points(rng: random.Random, n: int, d: int, count: int = 2, fractional: bool = False) -> list[list[list[Any]]]:
    def one() -> Any:
        v = rng.randint(-3, 3)
        return Fraction(v, rng.choice([1, 2, 3])) if fractional else v

    return [[[one() for _ in range(d)] for _ in range(n)] for _ in range(count)]


INTS: tuple[Scalar, ...] = (1, -1, 2, -2, 3)
FRACS: tuple[Scalar, ...] = (1, -1, Fraction(1, 2), Fraction(-2, 3), Fraction(3, 4))
SYMS: tuple[Scalar, ...] = (1, -1, A, A * B - 1, 2 * B)


def _cases() -> list[Case]:
    rng = random.Random(20251203)
    C, Y = Mode.CAUSAL, Mode.CYCLIC
    out = []

    def model(nn: int, dd: int, n: int, d: int, specs: Sequence[dict[str, Any]], values: Sequence[Scalar] = INTS) -> Model:
        return Model(n, d, nn, dd, tuple(_layer(rng, nn, dd, values=values, **s) for s in specs))

    dense = {"w": "dense", "taps": "many", "b1": "dense", "b2": "dense"}
    out.append(Case("causal-dense", model(8, 3, 8, 3, [dict(dense, mode=C)] * 2), _points(rng, 8, 3)))
    out.append(Case("cyclic-dense", model(8, 3, 8, 3, [dict(dense, mode=Y)] * 2), _points(rng, 8, 3)))
    out.append(Case("sparse-W-few-taps", model(9, 4, 7, 3, [
        {"w": "sparse", "taps": "few", "b1": "chan", "b2": "pos", "mode": C},
        {"w": "sparse", "taps": "few", "b1": "pos", "b2": "chan", "mode": Y},
        {"w": "sparse", "taps": "few", "b1": "zero", "b2": "outer", "mode": C},
    ]), _points(rng, 7, 3)))
    out.append(Case("zero-W-mask-bias", model(8, 4, 6, 4, [
        {"w": "zero", "taps": "few", "b1": "outer", "b2": "zero", "mode": C},
        {"w": "zero", "taps": "many", "b1": "dense", "b2": "chan", "mode": Y},
    ]), _points(rng, 6, 4)))
    out.append(Case("no-taps", model(6, 3, 6, 2, [
        {"w": "dense", "taps": "none", "b1": "pos", "b2": "dense", "mode": C},
        {"w": "sparse", "taps": "few", "b1": "chan", "b2": "chan", "mode": Y},
    ]), _points(rng, 6, 2)))
    out.append(Case("zero-conv-branch", model(5, 3, 4, 3, [
        {"w": "dense", "taps": "few", "b1": "dense", "b2": "zero", "mode": C},
        {"w": "dense", "taps": "none", "b1": "dense", "b2": "zero", "mode": C},  # h ⊛ x + b2 = 0
        {"w": "zero", "taps": "none", "b1": "chan", "b2": "outer", "mode": Y},
    ]), _points(rng, 4, 3)))
    out.append(Case("padding-mixed", model(9, 4, 6, 2, [
        {"w": "dense", "taps": "few", "b1": "outer", "b2": "pos", "mode": C},
        {"w": "sparse", "taps": "many", "b1": "chan", "b2": "dense", "mode": Y},
        {"w": "sparse", "taps": "few", "b1": "zero", "b2": "chan", "mode": C},
    ]), _points(rng, 6, 2)))
    out.append(Case("symbolic", model(6, 3, 5, 3, [
        {"w": "dense", "taps": "few", "b1": "dense", "b2": "pos", "mode": C},
        {"w": "sparse", "taps": "many", "b1": "chan", "b2": "dense", "mode": Y},
    ], SYMS), _points(rng, 5, 3), {"a": Fraction(3), "b": Fraction(-1, 2)}))
    out.append(Case("fractional", model(7, 3, 7, 3, [
        {"w": "dense", "taps": "many", "b1": "dense", "b2": "chan", "mode": Y},
        {"w": "sparse", "taps": "few", "b1": "outer", "b2": "dense", "mode": C},
    ], FRACS), _points(rng, 7, 3, fractional=True)))
    compiled = sv.compile(random_circuit(2, 2, 10, 3, seed=7)).model
    out.append(Case("compiled", compiled, _points(rng, compiled.n, compiled.d)))
    impulse = impulse_model(32, 4, 6, seed=5, n=24, d=3)
    out.append(Case("impulse", impulse, [[[rng.choice([-1, 1]) for _ in range(3)] for _ in range(24)] for _ in range(2)]))
    return out


CASES = _cases()
_WANT: dict[str, list[list[list[Fraction]]]] = {}


def want(case: Case) -> list[list[list[Fraction]]]:
    """The reference outputs of a case (computed once)."""
    if case.id not in _WANT:
        _WANT[case.id] = [reference(case.model, u, case.params) for u in case.inputs]
    return _WANT[case.id]


# ---- the backends ---------------------------------------------------------------------------------


class PlainFractionRing(FractionRing):
    """Exact rationals through the interpreter's other strategy (no value is tested for zero)."""

    falsy_is_zero: ClassVar[bool] = False


def _ring_points(case: Case, ring: Any, convert: Callable[[Any], Any] = lambda x: x) -> list[Any]:
    return [eval_model(case.model, [[convert(x) for x in row] for row in u], ring) for u in case.inputs]


def _poly(case: Case) -> list[Any]:
    m = case.model
    ring = PolyRing(m.n * m.d, tuple(sorted(m.params())))
    polys = eval_model(m, ring.grid_input(m.n, m.d), ring)
    out = []
    for u in case.inputs:
        values = [x for row in u for x in row] + [case.params[name] for name in ring.params]
        out.append([[ring.evaluate(p, values) for p in row] for row in polys])
    return out


def _z3(case: Case) -> list[Any]:
    import z3

    from symverify.kernel.provers.z3_backend import Z3Ring

    ring = Z3Ring({k: z3.RealVal(str(v)) for k, v in case.params.items()})
    out = []
    for u in case.inputs:
        terms = eval_model(case.model, [[z3.RealVal(str(x)) for x in row] for row in u], ring)
        out.append([[z3.simplify(t).as_fraction() for t in row] for row in terms])
    return out


def _batch(case: Case, tensor: bool) -> list[Any]:
    primes = [P61, P62][: len(case.inputs)]
    params = [{k: residue(v, p) for k, v in case.params.items()} for p in primes]
    pts = [[[residue(Fraction(x), p) for x in row] for row in u] for u, p in zip(case.inputs, primes)]
    ring = BatchModRing(primes, params)
    if tensor:
        return model_mod_batch(case.model, pts, ring)
    return eval_mod_batch(as_side(case.model), pts, ring, tensor=False)


def _torch_mod(case: Case, path: str) -> list[Any]:
    pts = torch.tensor([[[residue(Fraction(x), P31) for x in row] for row in u] for u in case.inputs], dtype=torch.int64)
    return modular_eval(case.model, pts, P31, params=case.params, path=path).tolist()


@dataclass(frozen=True)
class Backend:
    """How to run a case, and what its numbers are: ``exact`` (rationals), a modulus (one per
    point), or ``float``."""

    id: str
    run: Callable[[Case], list[Any]]
    modulus: Callable[[int], int] | None = None
    kind: str = "exact"


def _float(path: str) -> Backend:
    return Backend(f"torch-float64-{path}", lambda c: execute(c.model, c.inputs, backend="torch", path=path, params=c.params).tolist(),
                   kind=f"float:{path}")


BACKENDS = [
    Backend("ring-fraction", lambda c: _ring_points(c, FractionRing(c.params))),
    Backend("ring-fraction-plain", lambda c: _ring_points(c, PlainFractionRing(c.params))),
    Backend("ring-mod", lambda c: _ring_points(c, ModRing(P61, {k: residue(v, P61) for k, v in c.params.items()}),
                                                 lambda x: residue(Fraction(x), P61)), modulus=lambda t: P61),
    Backend("ring-poly", _poly),
    Backend("ring-z3", _z3),
    Backend("numpy-batch", lambda c: _batch(c, tensor=True), modulus=lambda t: (P61, P62)[t]),
    Backend("numpy-batch-interpreter", lambda c: _batch(c, tensor=False), modulus=lambda t: (P61, P62)[t]),
    Backend("exact-executor", lambda c: execute(c.model, c.inputs, params=c.params).tolist()),
    *(_float(path) for path in ("auto", "fft", "direct", "sparse")),
    *(Backend(f"torch-mod-{path}", lambda c, path=path: _torch_mod(c, path), modulus=lambda t: P31) for path in ("auto", "fft", "direct", "sparse")),
]


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.id)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_backend_matches_the_definition(case: Case, backend: Backend) -> None:
    ref = want(case)
    got = backend.run(case)
    if backend.modulus is not None:
        assert got == [[[residue(x, backend.modulus(t)) for x in row] for row in pt] for t, pt in enumerate(ref)]
    elif backend.kind == "exact":
        assert got == ref
    else:
        path = backend.kind.split(":")[1]
        approx = np.array([[[float(x) for x in row] for row in pt] for pt in ref])
        if case.integral and path in ("sparse", "direct") and float(np.abs(approx).max(initial=0)) < 2**50:
            assert got == approx.tolist()  # integer data: every sum is exact in float64
        else:
            chk = numeric_check(case.model, case.inputs, dtype="float64", path=path, params=case.params)
            assert chk.ok, chk  # the tracked run: within its running error bound
            assert float(np.abs(np.array(got) - approx).max(initial=0)) <= chk.tolerance


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("path", ["auto", "fft", "direct", "sparse"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_float_error_bound_holds(case: Case, path: str, dtype: str) -> None:
    """The float backend in lower precisions, tracked (:mod:`symverify.executors.numeric`): every
    point within its running error bound (float64 is checked in the matrix above)."""
    chk = numeric_check(case.model, case.inputs, dtype=dtype, path=path, params=case.params)
    assert chk.ok, chk


def test_every_backend_runs_the_one_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """No backend keeps a layer loop of its own: each runs every layer through :func:`run_layer`."""
    from symverify.kernel.semantics import layer as loop

    calls: list[str] = []
    real = loop.run_layer

    def counted(plan: Any, x: Any, arith: Any) -> Any:
        calls.append(type(arith).__name__)
        return real(plan, x, arith)

    monkeypatch.setattr(loop, "run_layer", counted)
    case = CASES[0]
    depth = case.model.depth
    runs = {
        "RingArithmetic": lambda: _ring_points(case, FractionRing()),
        "_BatchArithmetic": lambda: _batch(case, tensor=True),
        "FloatArithmetic": lambda: execute(case.model, case.inputs, backend="torch", path="direct"),
        "ModularArithmetic": lambda: _torch_mod(case, "direct"),
        "TrackedArithmetic": lambda: numeric_check(case.model, case.inputs, dtype="float32"),
    }
    for name, run in runs.items():
        calls.clear()
        run()
        assert calls.count(name) >= depth, (name, calls)


def test_every_backend_stops_at_a_past_deadline() -> None:
    """The loop runs ``check`` before every layer, whichever backend does the arithmetic."""
    import time

    from symverify.deadline import Deadline, DeadlineExceededError
    from symverify.executors.torch_float import run_model
    from symverify.kernel.engines.numbers import float_numbers
    from symverify.kernel.engines.plan import model_plan

    case = CASES[0]
    m = case.model
    past = Deadline(time.monotonic() - 1)
    pts = torch.tensor([[[residue(Fraction(x), P31) for x in row] for row in u] for u in case.inputs], dtype=torch.int64)
    calls: dict[str, Callable[[], object]] = {
        "ring": lambda: eval_model(m, case.inputs[0], FractionRing(), past),
        "numpy-batch": lambda: model_mod_batch(m, [[[x % P61 for x in row] for row in case.inputs[0]]], BatchModRing([P61], [{}]), past),
        "torch-float": lambda: run_model(model_plan(m, float_numbers(None)), torch.tensor(case.inputs, dtype=torch.float64), "auto", past),
        "torch-mod": lambda: modular_eval(m, pts, P31, check=past),
    }
    for name, call in calls.items():
        try:
            call()
        except DeadlineExceededError:
            continue
        pytest.fail(f"{name}: ran past the deadline")
