"""Differential attacks on the trusted evaluation engines (docs/trusted-base.md).

Every engine that evaluates a side mod a prime is compared with exact ``Fraction`` evaluation
reduced mod p, on adversarial weights: huge integers (``±10^400``), multiples of the prime,
Fractions whose denominator is ``2^k`` or a multiple of the prime, symbols (also ones whose value
is 0 mod p or makes a weight vanish), zero weights, nonzero fills, both modes, ``n = 1``,
``d = 1`` and long convolutions. The engines:

* the python engine: :class:`ModRing` through the generic interpreter, the tensor form
  (:func:`model_mod_batch`), the generic batch form (:func:`eval_mod_batch`), straight-line code
  (:func:`eval_mod`, through :class:`PythonEngine`);
* the torch engine: :func:`modular_eval` on every convolution path, circuits in int64 lanes
  (:func:`eval_mod_lanes`), through :class:`TorchEngine`;
* the compositional checker's sparse evaluator (:mod:`symverify.kernel.semantics.sparse`) and the
  zero-support analysis it relies on (:mod:`symverify.kernel.semantics.support`), against the dense
  exact interpreter.

A weight whose denominator is divisible by the prime has no residue: an engine must say so
(``IRError`` naming the prime), never reduce it as 0 and never raise a bare ``ZeroDivisionError``.

Then the verdicts: a compiled model perturbed in one weight (also a weight the support analysis
sees as dead, by a multiple of a prime the engines use, or by ``2^-200``) is never ``proved``
equal to its circuit by any method when the two differ at some exact point, and an unperturbed
one is never ``refuted``.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, sym
from symverify.kernel.provers.modular import BatchModRing, PythonEngine, TorchEngine, eval_mod_batch, model_mod_batch
from symverify.kernel.provers.sides import as_side
from symverify.kernel.semantics.evaluate import embed, eval_circuit, eval_layers, eval_model
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.semantics.rings import AffineRing, FractionRing, ModRing
from symverify.kernel.semantics.sparse import eval_layers_sparse, to_cells
from symverify.kernel.semantics.support import model_supports, prune_layer, support_of_cells

try:  # the torch engine's checks run where torch is installed; the rest everywhere
    import torch

    from symverify.executors import modular_eval
except ImportError:  # pragma: no cover - torch is in the test environment
    torch = None

M61 = 2**61 - 1
SMALL_PRIMES = [2, 3, 101, 1_073_741_827, 2_147_483_629, 2**31 - 1]  # the torch engine's range
PRIMES = [*SMALL_PRIMES, M61, 2**89 - 1]
PATHS = ["auto", "sparse", "direct", "fft"]
NAMES = ("a", "b")
HUGE = 10**400


# ---- exact reference ----------------------------------------------------------------------------


def residue(x: int | Fraction, p: int) -> int:
    x = Fraction(x)
    return x.numerator * pow(x.denominator, -1, p) % p


def _denominators(x: Any) -> list[int]:
    if isinstance(x, Sym):
        return [Fraction(c).denominator for _, c in x.terms]
    return [Fraction(x).denominator]


def _no_residue(values: Any, p: int) -> bool:
    """Some weight (or a coefficient of a symbolic one) has a denominator divisible by ``p``."""
    return any(den % p == 0 for v in values for den in _denominators(v))


def model_values(m: Model) -> list[Any]:
    return [v for layer in m.layers for _, g in layer.grids() for v in g.values()]


def exact_mod(outputs: list[list[list[Any]]], p: int) -> list[list[list[int]]] | None:
    """The exact outputs reduced mod p; None when one has no residue (its denominator is divisible by p)."""
    try:
        return [[[residue(v, p) for v in row] for row in out] for out in outputs]
    except ValueError:
        return None


def agree_or_refuse(got: Any, want: list[list[list[int]]] | None, bad: bool, p: int, what: str) -> None:
    """``got`` (a result, or the exception an engine raised) is the exact residue; an engine may
    refuse only with an IRError naming the prime, and only when some weight has no residue mod p."""
    if isinstance(got, BaseException):
        assert isinstance(got, IRError), f"{what}: raised {type(got).__name__}: {got}"
        assert bad and f"divisible by the prime {p}" in str(got), f"{what}: refused without cause: {got}"
        return
    assert want is not None or bad, f"{what}: the exact value has no residue mod {p}, yet no weight lacks one"
    if want is not None:
        assert got == want, f"{what} mod {p}: {got} != exact {want}"


def attempt(f: Any) -> Any:
    try:
        return f()
    except Exception as e:  # the caller decides which exceptions are acceptable
        return e


# ---- strategies ---------------------------------------------------------------------------------


@st.composite
def weights(draw: Any, p: int, names: tuple[str, ...]) -> Any:
    """Adversarial exact weights for the prime ``p``."""
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        return 0
    if kind == 4:
        return draw(st.sampled_from([1, -1, 2, HUGE, -HUGE, HUGE + 1, p, -p, 2 * p + 1, M61, M61 + 1]))
    if kind == 5:
        return Fraction(draw(st.sampled_from([1, -1, 3, p, HUGE])), 2 ** draw(st.sampled_from([1, 31, 64, 200])))
    if kind == 6:  # a denominator divisible by p (no residue mod p), or by another prime
        return Fraction(draw(st.sampled_from([1, -2, 5])), draw(st.sampled_from([p, 3 * p, 7, 2**31 - 1])))
    if kind == 7 and names:
        s = sym(draw(st.sampled_from(names)))
        return draw(st.sampled_from([s, s * s - 1, -s + 2, s * Fraction(1, 2), s * p + 1, s * HUGE]))
    return draw(st.integers(-5, 5))


@st.composite
def grids(draw: Any, rows: int, cols: int, p: int, names: tuple[str, ...], density: float = 0.5) -> Grid:
    cells = {}
    for i in range(rows):
        for j in range(cols):
            if draw(st.floats(0, 1)) < density:
                cells[(i, j)] = draw(weights(p, names))
    fill = draw(weights(p, names)) if draw(st.integers(0, 9)) == 0 else 0
    g = Grid.from_cells(rows, cols, cells, fill)
    if draw(st.integers(0, 4)) == 0:  # a painted rectangle over the cells (later rectangles win)
        r0, c1 = draw(st.integers(0, rows - 1)), draw(st.integers(1, cols))
        g = g.paint(r0, rows, 0, c1, draw(st.sampled_from([0, 1, p, Fraction(1, 2)])))
    return g


@st.composite
def models(draw: Any, p: int, names: tuple[str, ...], max_pad: int = 2, max_layers: int = 3) -> Model:
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    nn, dd = n + draw(st.integers(0, max_pad)), d + draw(st.integers(0, max_pad))
    layers = []
    for _ in range(draw(st.integers(0, max_layers))):
        W, b1, h, b2 = (draw(grids(r, dd, p, names)) for r in (dd, nn, nn, nn))
        layers.append(Layer(W, b1, h, b2, draw(st.sampled_from([Mode.CAUSAL, Mode.CYCLIC]))))
    return Model(n, d, nn, dd, tuple(layers))


def param_values(draw: Any, names: frozenset[str], p: int) -> dict[str, int]:
    """Integer parameter values, among them 0, 1 and p (0 mod p: a symbol that vanishes)."""
    return {k: draw(st.sampled_from([0, 1, p, p + 1, 2, HUGE])) for k in sorted(names)}


def points(draw: Any, n: int, d: int, p: int, batch: int) -> list[list[list[int]]]:
    cell = st.one_of(st.sampled_from([0, 1, p - 1]), st.integers(0, p - 1))
    return [[[draw(cell) for _ in range(d)] for _ in range(n)] for _ in range(batch)]


# ---- models: every engine against exact evaluation ----------------------------------------------


def _check_model(m: Model, params: dict[str, int], pts: list[list[list[int]]], p: int) -> None:
    B = len(pts)
    bad = _no_residue(model_values(m), p)
    want = exact_mod([eval_model(m, u, FractionRing(params)) for u in pts], p)
    res = {k: v % p for k, v in params.items()}
    agree_or_refuse(attempt(lambda: [eval_model(m, u, ModRing(p, res)) for u in pts]), want, bad, p, "ModRing")
    agree_or_refuse(attempt(lambda: model_mod_batch(m, pts, BatchModRing([p] * B, [res] * B))), want, bad, p, "tensor")
    agree_or_refuse(attempt(lambda: eval_mod_batch(as_side(m), pts, BatchModRing([p] * B, [res] * B), tensor=False)),
                    want, bad, p, "generic")
    agree_or_refuse(attempt(lambda: PythonEngine().evaluate(as_side(m), pts, p, res)), want, bad, p, "PythonEngine")
    if p < 2**31 and torch is not None:
        x = torch.tensor(pts, dtype=torch.int64)
        for path in PATHS:
            agree_or_refuse(attempt(lambda path=path: modular_eval(m, x, p, params=params, path=path).tolist()), want, bad, p,
                            f"modular_eval path={path}")
        agree_or_refuse(attempt(lambda: TorchEngine().evaluate(as_side(m), np.array(pts, dtype=np.int64), p, res).tolist()),
                        want, bad, p, "TorchEngine")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_model_engines_agree_with_exact_fractions(data: st.DataObject) -> None:
    p = data.draw(st.sampled_from(PRIMES))
    names = data.draw(st.sampled_from([(), ("a",), NAMES]))
    m = data.draw(models(p, names))
    params = param_values(data.draw, m.params(), p)
    _check_model(m, params, points(data.draw, m.n, m.d, p, data.draw(st.integers(1, 3))), p)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_long_convolutions_agree_on_every_path(data: st.DataObject) -> None:
    """Dense kernels over ``N' > 64`` rows: the blocked Toeplitz path (a block size dividing N', or
    the doubling when N' is prime), the FFT request and the shifts, against exact evaluation."""
    p = data.draw(st.sampled_from(SMALL_PRIMES[2:]))
    nn = data.draw(st.sampled_from([65, 67, 96, 130]))
    dd = data.draw(st.integers(1, 3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    values = [1, -1, 2, p - 1, HUGE, Fraction(1, 2**40), 0]

    def dense(rows: int, cols: int, density: float) -> Grid:
        return Grid.from_rows([[values[rng.integers(len(values))] if rng.random() < density else 0 for _ in range(cols)]
                               for _ in range(rows)])

    layers = tuple(Layer(dense(dd, dd, 0.8), dense(nn, dd, 0.3), dense(nn, dd, 0.9), dense(nn, dd, 0.2),
                         data.draw(st.sampled_from([Mode.CAUSAL, Mode.CYCLIC]))) for _ in range(data.draw(st.integers(1, 2))))
    m = Model(nn, dd, nn, dd, layers)  # the whole state is read out: every row is seen
    _check_model(m, {}, rng.integers(0, p, size=(2, nn, dd)).tolist(), p)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_sparse_projection_plans_agree(data: st.DataObject) -> None:
    """A wide ``W`` with at most ``d'/32`` nonzeros per column runs as gathers (the plan's sparse
    kind, asserted), other layers as a matmul on limbs; both against exact evaluation."""
    pytest.importorskip("torch")
    from symverify.kernel.engines.numbers import mod_numbers
    from symverify.kernel.engines.plan import model_plan

    p = data.draw(st.sampled_from([101, 2**31 - 1]))
    dd, nn = data.draw(st.sampled_from([64, 96])), data.draw(st.integers(1, 3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    values = [1, -1, p, p + 2, HUGE, Fraction(1, 3)]

    def wide(dense: bool) -> Grid:
        cells = {}
        for q in range(dd):
            for _ in range(dd // 2 if dense else int(rng.integers(0, dd // 32 + 1))):
                cells[(int(rng.integers(dd)), q)] = values[rng.integers(len(values))]
        return Grid.from_cells(dd, dd, cells)

    def col(density: float) -> Grid:
        return Grid.from_cells(nn, dd, {(i, j): values[rng.integers(4)] for i in range(nn) for j in range(dd)
                                        if rng.random() < density})

    kinds = [data.draw(st.booleans()) for _ in range(data.draw(st.integers(1, 3)))]
    layers = tuple(Layer(wide(k), col(0.2), col(0.5), col(0.2), data.draw(st.sampled_from([Mode.CAUSAL, Mode.CYCLIC])))
                   for k in kinds)
    m = Model(nn, dd, nn, dd, layers)  # the whole state is read out: every column is seen
    planned = [lp.w_kind for lp in model_plan(m, mod_numbers(p, None)).layers]
    assert all(kind in ("sparse", "zero") for kind, dense in zip(planned, kinds) if not dense)
    _check_model(m, {}, rng.integers(0, p, size=(2, nn, dd)).tolist(), p)


def test_denominators_divisible_by_the_prime_are_refused_by_every_engine() -> None:
    """``1/p``, ``a/p`` and a parameter value ``1/p`` have no residue mod p: every engine says so,
    naming the prime, and none reduces them as 0."""
    pytest.importorskip("torch")
    p = 101
    a = sym("a")
    one = Grid.full(1, 1, 1)
    for w, params in [(Fraction(1, p), {}), (Fraction(3, 2 * p), {}), (a * Fraction(1, p), {"a": 1}),
                      (a, {"a": Fraction(1, p)})]:
        m = Model(1, 1, 1, 1, (Layer(Grid.full(1, 1, w), Grid.zeros(1, 1), one, Grid.zeros(1, 1)),))
        pts = [[[5]]]
        with pytest.raises(IRError, match=f"divisible by the prime {p}"):
            modular_eval(m, torch.tensor(pts), p, params=params)
        with pytest.raises(IRError, match=f"divisible by the prime {p}"):  # the parameter's residue, or the weight's
            eval_model(m, pts[0], ModRing(p, {k: ModRing(p).coerce(v) for k, v in params.items()}))
        with pytest.raises(IRError, match=f"divisible by the prime {p}"):
            model_mod_batch(m, pts, BatchModRing([p], [{k: ModRing(p).coerce(v) for k, v in params.items()}]))
        c = Circuit(1, 1, (Gate(Op.CONST, (), (w,)), Gate.mul(0, 1)), (2,))
        with pytest.raises(IRError, match=f"divisible by the prime {p}"):
            modular_eval(c, torch.tensor(pts), p, params=params)
        if not params:
            with pytest.raises(IRError, match=f"divisible by the prime {p}"):
                PythonEngine().evaluate(as_side(c), pts, p, {})
    # the same weights have residues mod every other prime, and the engines compute them
    m = Model(1, 1, 1, 1, (Layer(Grid.full(1, 1, Fraction(1, p)), Grid.zeros(1, 1), one, Grid.zeros(1, 1)),))
    assert modular_eval(m, torch.tensor([[[5]]]), 103).tolist() == [[[residue(Fraction(25, p), 103)]]]


# ---- circuits -----------------------------------------------------------------------------------


@st.composite
def circuits(draw: Any, p: int, names: tuple[str, ...]) -> Circuit:
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    gates: list[Gate] = []
    coeff = st.one_of(st.sampled_from([0, 1, -1]), weights(p, names))
    for _ in range(draw(st.integers(0, 12))):
        nodes = n * d + len(gates)
        kind = draw(st.sampled_from(["mul", "lin", "lin", "const"]))
        if kind == "const":
            gates.append(Gate(Op.CONST, (), (draw(coeff),)))
        elif kind == "mul":
            gates.append(Gate.mul(draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1))))
        else:
            gates.append(Gate(Op.LIN, (draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1))),
                              (draw(coeff), draw(coeff))))
    total = n * d + len(gates)
    outs = tuple(draw(st.lists(st.integers(0, total - 1), max_size=n * d)))
    return Circuit(n, d, tuple(gates), outs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_circuit_engines_agree_with_exact_fractions(data: st.DataObject) -> None:
    p = data.draw(st.sampled_from(PRIMES))
    names = data.draw(st.sampled_from([(), ("a",), NAMES]))
    c = data.draw(circuits(p, names))
    params = param_values(data.draw, c.params(), p)
    pts = points(data.draw, c.n, c.d, p, data.draw(st.integers(1, 3)))
    coeffs = [co for g in c.gates for co in g.coeffs]
    bad = _no_residue(coeffs, p)
    want = exact_mod([eval_circuit(c, u, FractionRing(params)) for u in pts], p)
    res = {k: v % p for k, v in params.items()}
    agree_or_refuse(attempt(lambda: [eval_circuit(c, u, ModRing(p, res)) for u in pts]), want, bad, p, "ModRing")
    agree_or_refuse(attempt(lambda: PythonEngine().evaluate(as_side(c), pts, p, res)), want, bad, p, "eval_mod")
    B = len(pts)
    agree_or_refuse(attempt(lambda: eval_mod_batch(as_side(c), pts, BatchModRing([p] * B, [res] * B))), want, bad, p,
                    "BatchModRing")
    if p < 2**31 and torch is not None:
        agree_or_refuse(attempt(lambda: modular_eval(c, torch.tensor(pts, dtype=torch.int64), p, params=params).tolist()),
                        want, bad, p, "eval_mod_lanes")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_affine_forms_mod_p_match_residues(data: st.DataObject) -> None:
    """A circuit run on the unit forms over :class:`ModRing` coefficients gives each node's affine
    form mod p: in normal form (no zero coefficient, falsy exactly when zero) and, at a point, the
    residue the circuit has there. A product with a form that is zero mod p is not a product of two
    non-constant forms."""
    p = data.draw(st.sampled_from([3, 7]))
    n, d = 1, data.draw(st.integers(1, 2))  # few variables: chains of gates cancel often
    small = st.sampled_from([1, -1, 2, 3, 4, p - 1, p, Fraction(1, 2)])
    gates: list[Gate] = []
    for _ in range(data.draw(st.integers(1, 8))):
        nodes = st.integers(0, n * d + len(gates) - 1)
        if data.draw(st.integers(0, 7)) == 0:  # rare: most products of forms are not affine
            gates.append(Gate.mul(data.draw(nodes), data.draw(nodes)))
        else:
            gates.append(Gate(Op.LIN, (data.draw(nodes), data.draw(nodes)), (data.draw(small), data.draw(small))))
    c = Circuit(n, d, tuple(gates), tuple(data.draw(st.lists(st.integers(0, n * d + len(gates) - 1), max_size=n * d))))
    ring = AffineRing(ModRing(p))
    forms = [[Affine.unit(i * c.d + j) for j in range(c.d)] for i in range(c.n)]
    got = attempt(lambda: eval_circuit(c, forms, ring))
    if isinstance(got, IRError):
        assert _no_residue([co for g in c.gates for co in g.coeffs], p)
        return
    u = points(data.draw, c.n, c.d, p, 1)[0]
    flat = [x for row in u for x in row]
    want = attempt(lambda: eval_circuit(c, u, ModRing(p)))
    if isinstance(got, ArithmeticError):  # genuinely not affine: some product of two forms nonzero mod p
        return
    for row, wrow in zip(got, want):
        for f, w in zip(row, wrow):
            f = f if isinstance(f, Affine) else Affine.constant(f)
            assert all(v % p for v in f.terms.values()), f"a zero coefficient kept: {f!r}"
            assert bool(f) == (f.terms != {} or f.const % p != 0)
            assert (sum(v * flat[j] for j, v in f.terms.items()) + f.const) % p == w


def test_affine_ring_drops_coefficients_that_vanish_mod_p() -> None:
    """Over F_7, ``3·x + 4·x`` is the zero form: falsy, equal to zero, and its square is 0, not a
    product of two non-constant forms."""
    ring = AffineRing(ModRing(7))
    assert ring.reduce(Affine({0: 7, 1: 3})) == Affine({1: 3})
    zero = ring.reduce(Affine({0: 7}))
    assert not zero and zero == ring.zero
    c = Circuit(1, 1, (Gate(Op.LIN, (0, 0), (3, 4)), Gate.mul(1, 1), Gate(Op.LIN, (2, 0), (1, 2))), (3,))
    assert eval_circuit(c, [[Affine.unit(0)]], ring) == [[Affine({0: 2})]]


# ---- the sparse evaluator and the zero-support analysis -----------------------------------------


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_sparse_evaluator_and_support_match_the_dense_interpreter(data: st.DataObject) -> None:
    """The sparse evaluator holds exactly the dense interpreter's nonzero cells (exact rationals and
    polynomials in symbolic inputs and parameters); every nonzero cell lies in the support, and
    pruning by the support changes no cell."""
    p = data.draw(st.sampled_from([101, 2**31 - 1]))
    names = data.draw(st.sampled_from([(), ("a",)]))
    m = data.draw(models(p, names, max_pad=3))
    params = param_values(data.draw, m.params(), p)
    u = [[data.draw(st.sampled_from([0, 0, 1, -3, Fraction(1, 2), HUGE])) for _ in range(m.d)] for _ in range(m.n)]
    start = embed(u, m.inner_n, m.inner_d, 0)
    dense = to_cells(eval_layers(m.layers, start, FractionRing(params)))
    assert eval_layers_sparse(m.layers, to_cells(start), FractionRing(params)) == dense
    # symbolic: inputs and parameters as polynomial generators
    ring = PolyRing(m.n * m.d, tuple(sorted(m.params())))
    ustart = embed(ring.grid_input(m.n, m.d), m.inner_n, m.inner_d, ring.zero)
    poly_dense = to_cells(eval_layers(m.layers, ustart, ring))
    assert eval_layers_sparse(m.layers, to_cells(ustart), ring) == poly_dense
    sup = support_of_cells(to_cells(ustart), m.inner_d)
    sups = model_supports(m.layers, sup)
    for k in range(len(m.layers) + 1):
        cells = to_cells(eval_layers(m.layers[:k], ustart, ring))
        assert all(i in sups[k][q] for i, q in cells), f"after layer {k}: a nonzero cell outside the support"
    pruned = []
    for layer in m.layers:
        new, sup = prune_layer(layer, sup)
        pruned.append(new)
    assert to_cells(eval_layers(pruned, ustart, ring)) == poly_dense
    assert sup == sups[-1]


# ---- verdicts -----------------------------------------------------------------------------------


def _perturb(m: Model, li: int, name: str, cell: tuple[int, int], delta: Any) -> Model:
    layer = m.layers[li]
    g = getattr(layer, name)
    cells = dict(g.nonzero())
    v = g.get(*cell) + delta
    if v == 0:
        cells.pop(cell, None)
    else:
        cells[cell] = v
    layers = list(m.layers)
    layers[li] = replace(layer, **{name: Grid.from_cells(g.rows, g.cols, cells)})
    return replace(m, layers=tuple(layers))


def _differs(m: Model, c: Circuit, draw: Any) -> bool:
    """The model and the circuit differ at some exact integer point (parameters included)."""
    names = sorted(m.params() | c.params())
    for _ in range(4):
        params = {k: draw(st.integers(-50, 50)) for k in names}
        u = [[draw(st.integers(-50, 50)) for _ in range(c.d)] for _ in range(c.n)]
        if eval_model(m, u, FractionRing(params)) != eval_circuit(c, u, FractionRing(params)):
            return True
    return False


METHODS: list[tuple[str, dict[str, Any]]] = [
    ("randomized", {"backend": "python"}), *([("randomized", {"backend": "torch"})] if torch is not None else []),
    ("compositional", {}), ("exact", {}), ("auto", {}),
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_perturbed_models_are_never_proved(data: st.DataObject) -> None:
    a = sym("a")
    c = data.draw(st.sampled_from([
        Circuit(2, 1, (Gate.mul(0, 1),), (2, 0)),
        Circuit(1, 2, (Gate.mul(0, 1), Gate(Op.LIN, (2, 0), (Fraction(1, 3), 2))), (3, 2)),
        Circuit(1, 1, (Gate(Op.CONST, (), (a,)), Gate.mul(0, 1), Gate.mul(2, 0)), (3,)),
        Circuit(2, 1, (Gate(Op.LIN, (0, 1), (1, -1)), Gate.mul(2, 2)), (3,)),
    ]))
    comp = sv.compile(c, method=data.draw(st.sampled_from(["kaleidoscope", "dense"])))
    m = comp.model
    for method, kw in METHODS:
        cert = {"certificate": comp.certificate} if method in ("compositional", "auto") else {}
        r = sv.verify(m, c, method=method, **kw, **cert)
        assert r.verdict != sv.Verdict.REFUTED, (method, kw)
    li = data.draw(st.integers(0, len(m.layers) - 1))
    name = data.draw(st.sampled_from(["W", "b1", "h", "b2"]))
    g = getattr(m.layers[li], name)
    live = sorted(g.nonzero())
    if live and data.draw(st.booleans()):
        cell = data.draw(st.sampled_from(live))
    else:  # any cell: often one the support analysis sees as dead
        cell = (data.draw(st.integers(0, g.rows - 1)), data.draw(st.integers(0, g.cols - 1)))
    delta = data.draw(st.sampled_from([1, -1, M61, 2**31 - 1, M61 * (2**31 - 1), Fraction(1, 2**200), HUGE,
                                       Fraction(1, M61), sym("a"), sym("b")]))
    pm = _perturb(m, li, name, cell, delta)
    differs = _differs(pm, c, data.draw)
    for method, kw in METHODS:
        for cert in ({"certificate": comp.certificate}, {}) if method in ("compositional", "auto") else ({},):
            if method == "compositional" and not cert:
                continue
            r = sv.verify(pm, c, method=method, **kw, **cert)
            if differs:
                assert r.verdict != sv.Verdict.PROVED, (method, kw, li, name, cell, delta)
