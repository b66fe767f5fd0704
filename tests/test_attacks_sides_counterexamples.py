"""Attacks on the three things a ``refuted`` verdict rests on besides the provers: the straight-line
programs the python engine evaluates circuits with (:mod:`symverify.kernel.semantics.straightline`),
the reading of each side (:mod:`symverify.kernel.provers.sides`) and the counterexamples and their
exact re-check (:mod:`symverify.kernel.provers.counterexample`).

Everything is compared with an evaluator written here from docs/theory.md §1–§2 alone (Fractions,
gate by gate; the layer ``(u·W + b1) ⊙ (h ⊛ u + b2)`` cell by cell), never with the package's own
interpreter. Defects these tests found: ``recheck`` passed a forged counterexample whose float
parameter was computed in float arithmetic (``a²`` ≠ ``a·a`` at ``a = 0.1``); ``FractionRing`` and
``ModRing`` took inexact parameter values; an object with both ``.kaleidoscope`` and ``.model`` was
read as the kaleidoscope; a kaleidoscope side read any input with ``n·d`` entries; ``evaluate``,
``execute`` and ``twiddles`` raised bare TypeErrors on symbolic or rational parameter values."""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.deadline import DeadlineExceededError
from symverify.errors import IRError, ProverError, ShapeError
from symverify.ir.bigint import parse_rational
from symverify.kaleidoscope import permutation_to_kaleidoscope
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, sym
from symverify.kernel.provers.counterexample import M61, confirm, recheck, search_or_stop
from symverify.kernel.provers.modular import BatchModRing, PythonEngine, eval_mod_batch
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.outcome import Counterexample
from symverify.kernel.provers.sides import CircuitSide, KaleidoscopeSide, ModelSide, as_side, pair_sides
from symverify.kernel.semantics.evaluate import eval_circuit, eval_circuit_nodes, eval_model
from symverify.kernel.semantics.rings import FractionRing, ModRing
from symverify.kernel.semantics.straightline import eval_mod, eval_mod_lanes, program
from symverify.kernel.verification import verify

A, B = sym("a"), sym("b")
HUGE = 10**400
PRIMES = (M61, 2, 3, 5, 7, (1 << 31) - 1)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---- the independent evaluator (docs/theory.md §1–§2) ------------------------------------------------
def value_of(c: Any, params: dict[str, Any]) -> Fraction:
    """A coefficient's value: a rational, or a polynomial in the parameters (``Sym.terms``)."""
    if isinstance(c, Sym):
        total = Fraction(0)
        for mono, coeff in c.terms:
            term = Fraction(coeff)
            for name, e in mono:
                term *= Fraction(params[name]) ** e
            total += term
        return total
    assert type(c) in (int, Fraction), c
    return Fraction(c)


def ref_nodes(c: Circuit, u: list[list[Any]], params: dict[str, Any]) -> list[Fraction]:
    vals = [Fraction(x) for row in u for x in row]
    for g in c.gates:
        if g.op is Op.CONST:
            vals.append(value_of(g.coeffs[0], params))
        elif g.op is Op.LIN:
            (x, y), (al, be) = g.args, g.coeffs
            vals.append(value_of(al, params) * vals[x] + value_of(be, params) * vals[y])
        else:
            vals.append(vals[g.args[0]] * vals[g.args[1]])
    return vals


def ref_circuit(c: Circuit, u: list[list[Any]], params: dict[str, Any]) -> list[list[Fraction]]:
    vals = ref_nodes(c, u, params)
    flat = [vals[o] for o in c.outputs] + [Fraction(0)] * (c.n * c.d - len(c.outputs))
    return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)]


def ref_model(m: Model, u: list[list[Any]], params: dict[str, Any]) -> list[list[Fraction]]:
    nn, dd = m.inner_n, m.inner_d
    s = [[Fraction(0)] * dd for _ in range(nn)]
    for i, row in enumerate(u):
        for j, x in enumerate(row):
            s[i][j] = Fraction(x)
    for layer in m.layers:
        W = [[value_of(layer.W.get(p, q), params) for q in range(dd)] for p in range(dd)]
        b1, h, b2 = ([[value_of(g.get(i, q), params) for q in range(dd)] for i in range(nn)] for g in (layer.b1, layer.h, layer.b2))
        out = [[Fraction(0)] * dd for _ in range(nn)]
        for i in range(nn):
            for q in range(dd):
                proj = sum((s[i][p] * W[p][q] for p in range(dd)), Fraction(0)) + b1[i][q]
                conv = Fraction(0)
                for k in range(nn):
                    if i - k >= 0:
                        conv += h[k][q] * s[i - k][q]
                    elif layer.mode is Mode.CYCLIC:
                        conv += h[k][q] * s[(i - k) % nn][q]
                out[i][q] = proj * (conv + b2[i][q])
        s = out
    return [row[: m.d] for row in s[: m.n]]


def ref_side(obj: Any, u: list[list[Any]], params: dict[str, Any]) -> list[list[Fraction]]:
    return ref_circuit(obj, u, params) if isinstance(obj, Circuit) else ref_model(obj, u, params)


def residue(x: Fraction, p: int) -> int:
    return x.numerator * pow(x.denominator, -1, p) % p


def denominators(c: Any) -> list[int]:
    """Every denominator a coefficient brings (a Sym's coefficients included)."""
    if isinstance(c, Sym):
        return [Fraction(k).denominator for _, k in c.terms]
    return [Fraction(c).denominator]


# ---- random circuits: every op, awkward constants, reuse, repeated outputs ----------------------------
COEFFS = [0, 1, -1, 2, HUGE, -HUGE, Fraction(1, 2), Fraction(-2, 3), Fraction(7, 5), Fraction(1, 3**300 * 7),
          Fraction(HUGE + 1, 2**61 - 1), A, B, 2 * A - 1, A * B * Fraction(1, 3), A**2 + Fraction(1, 5)]
NUMERIC_COEFFS = [x for x in COEFFS if not isinstance(x, Sym)]


@st.composite
def circuits(draw: Any, symbolic: bool = True, max_gates: int = 14) -> Circuit:
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    nd = n * d
    pool = COEFFS if symbolic else NUMERIC_COEFFS
    coeff = st.sampled_from(pool)
    gates: list[Gate] = []
    for _ in range(draw(st.integers(0, max_gates))):
        nodes = nd + len(gates)
        # favour the newest and the first node: long chains and nodes read many times
        node = st.one_of(st.integers(0, nodes - 1), st.just(nodes - 1), st.just(0))
        op = draw(st.sampled_from(["const", "lin", "lin", "mul", "mul", "zero", "scale_a", "scale_b", "add", "sub"]))
        if op == "add":
            gates.append(Gate.add(draw(node), draw(node)))
        elif op == "sub":
            gates.append(Gate.sub(draw(node), draw(node)))
        elif op == "const":
            gates.append(Gate.const(draw(coeff)))
        elif op == "mul":
            gates.append(Gate.mul(draw(node), draw(node)))
        elif op == "zero":
            gates.append(Gate.lin(draw(node), 0, draw(node), 0))
        elif op == "scale_a":
            gates.append(Gate.lin(draw(node), draw(coeff), draw(node), 0))
        elif op == "scale_b":
            gates.append(Gate.lin(draw(node), 0, draw(node), draw(coeff)))
        else:
            gates.append(Gate.lin(draw(node), draw(coeff), draw(node), draw(coeff)))
    total = nd + len(gates)
    outs = draw(st.lists(st.integers(0, total - 1), max_size=nd))
    return Circuit(n, d, tuple(gates), tuple(outs))


def int_point(draw: Any, c: Any) -> tuple[list[list[int]], dict[str, int]]:
    big = st.one_of(st.integers(-3, 3), st.integers(-(2**70), 2**70))
    u = [[draw(big) for _ in range(c.d)] for _ in range(c.n)]
    return u, {k: draw(big) for k in sorted(c.params())}


def bad_primes(c: Circuit, params: dict[str, Any]) -> set[int]:
    """The primes mod which some coefficient of ``c`` has no value (its denominator vanishes)."""
    dens = [q for g in c.gates for x in g.coeffs for q in denominators(x)]
    return {p for p in PRIMES if any(q % p == 0 for q in dens)}


# ---- 1. straight-line programs against the interpreter and the independent evaluator ---------------
@FAST
@given(st.data())
def test_programs_and_interpreter_match_the_definition_over_fractions_and_mod_primes(data):
    c = data.draw(circuits())
    u, params = int_point(data.draw, c)
    want_nodes = ref_nodes(c, u, params)
    want = ref_circuit(c, u, params)
    assert eval_circuit(c, u, FractionRing(params)) == want
    prog = program(c)
    assert prog.size == len(c.gates)
    bad = bad_primes(c, params)
    for p in PRIMES:
        ring = ModRing(p, {k: v % p for k, v in params.items()})
        if p in bad:  # a constant has no residue mod p: a clear error on every path, never a residue
            with pytest.raises(IRError, match=f"divisible by the prime {p}"):
                [ring.coerce(x) for x in prog.scalars]
            with pytest.raises(IRError, match=f"divisible by the prime {p}"):
                eval_circuit(c, u, ring)
            with pytest.raises(IRError, match=f"divisible by the prime {p}"):
                PythonEngine().evaluate(CircuitSide(c, c.n, c.d), [[[x % p for x in r] for r in u]], p, ring.params)
            if p < 1 << 31:
                with pytest.raises(IRError, match=f"{p}"):
                    torch_mod(c, u, p, params)
            continue
        coeffs = [ring.coerce(x) for x in prog.scalars]
        flat = [x for row in u for x in row]
        nodes = eval_mod(prog, flat, p, coeffs)
        assert nodes == [residue(v, p) for v in want_nodes]
        assert [x % p for x in eval_circuit_nodes(c, [x % p for x in flat], ring)] == nodes
        got = PythonEngine().evaluate(CircuitSide(c, c.n, c.d), [[[x % p for x in r] for r in u]], p, ring.params)
        assert got == [[[residue(v, p) for v in row] for row in want]]
        if p < 1 << 31:
            lanes = eval_mod_lanes(prog, np.array([[x % p, (x + 1) % p] for x in flat], dtype=np.int64).reshape(-1, 2),
                                   [p, p], np.array([[x, x] for x in coeffs], dtype=np.int64).reshape(-1, 2))
            assert lanes[:, 0].tolist() == nodes
            assert torch_mod(c, u, p, params) == [[residue(v, p) for v in row] for row in want]


def torch_mod(obj: Any, u: list[list[int]], p: int, params: dict[str, int]) -> list[list[int]]:
    """The torch engine's entry point (circuits through ``eval_mod_lanes``) at one point."""
    torch = pytest.importorskip("torch")
    from symverify.kernel.engines.modular import modular_eval

    x = torch.tensor([[[v % p for v in row] for row in u]], dtype=torch.int64)
    return modular_eval(obj, x, p, params=params)[0].tolist()


def scanned_code(c: Circuit) -> tuple[list[Any], list[tuple[int, int, int, int, int]]]:
    """The program of ``c`` by a gate-by-gate scan of the module docstring's rules: distinct
    coefficients by ``(type, value)`` in order of first use, one ``(kind, a, b, i, j)`` per gate."""
    scalars: list[Any] = []
    index: dict[Any, int] = {}
    code = []
    for g in c.gates:
        idx = []
        for x in g.coeffs:
            if (type(x), x) not in index:
                index[(type(x), x)] = len(scalars)
                scalars.append(x)
            idx.append(index[(type(x), x)])
        if g.op is Op.MUL:
            code.append((0, g.args[0], g.args[1], -1, -1))
        elif g.op is Op.CONST:
            code.append((4, -1, -1, idx[0], -1))
        else:
            (x, y), (al, be) = g.args, g.coeffs
            if al == 0 and be == 0:
                code.append((3, -1, -1, -1, -1))
            elif be == 0:
                code.append((2, x, x, idx[0], -1))
            elif al == 0:
                code.append((2, y, y, idx[1], -1))
            else:
                code.append((1, x, y, idx[0], idx[1]))
    return scalars, code


@FAST
@given(circuits(max_gates=20))
def test_program_code_is_the_gate_by_gate_scan(c):
    scalars, code = scanned_code(c)
    prog = program(c)
    assert list(prog.scalars) == scalars and [type(x) for x in prog.scalars] == [type(x) for x in scalars]
    assert prog.code == tuple(code)  # handed out as a tuple: what the next verify reads cannot be changed through it


def test_program_code_with_node_ids_beyond_int64():
    """``n·d = 2^70``: the ids do not fit the int64 array and take the Python-int path."""
    n, d = 2**40, 2**30
    nd = n * d
    c = Circuit(n, d, (Gate.mul(nd - 1, 0), Gate.lin(nd, Fraction(1, 3), nd - 2, 0), Gate.lin(nd + 1, 0, 5, 2),
                       Gate.sub(nd + 2, nd), Gate.const(7), Gate.lin(3, 0, 4, 0), Gate.add(nd + 4, nd - 7)), (nd + 5, nd + 3))
    prog = program(c)
    assert prog.args is None
    scalars, code = scanned_code(c)
    assert list(prog.scalars) == scalars and prog.code == tuple(code)
    kinds, a, b, _, _ = prog.mod_code
    assert kinds[3] == 6 and kinds[6] == 5 and (a[6], b[6]) == (nd + 4, nd - 7)  # 1·x − 1·y and 1·x + 1·y


@FAST
@given(st.data())
def test_programs_at_rational_points_match_the_definition(data):
    """Fractions with huge denominators at the inputs and in the parameters (exact paths only)."""
    c = data.draw(circuits())
    q = st.one_of(st.fractions(max_denominator=10), st.sampled_from([Fraction(1, 3**200), Fraction(-HUGE, 7), Fraction(HUGE)]))
    u = [[data.draw(q) for _ in range(c.d)] for _ in range(c.n)]
    params = {k: data.draw(q) for k in sorted(c.params())}
    assert eval_circuit(c, u, FractionRing(params)) == ref_circuit(c, u, params)


@pytest.mark.parametrize("p", PRIMES)
def test_a_deep_chain_and_a_wide_fan_in(p):
    """400 gates each reading the one before (and input 0), then 300 gates all reading one node."""
    gates = [Gate.lin(0, 1, 0, Fraction(1, 11))]
    for k in range(400):
        prev = 1 + k
        gates.append(Gate.mul(prev, 0) if k % 7 == 3 else Gate.lin(prev, 3 if k % 2 else -1, 0, Fraction(2, 13)))
    hub = len(gates)
    gates += [Gate.lin(hub, k, hub, 1) for k in range(300)]
    c = Circuit(1, 1, tuple(gates), (len(gates),))
    u = [[p - 2]]
    want = ref_circuit(c, u, {})
    prog = program(c)
    ring = ModRing(p)
    assert eval_mod(prog, [u[0][0]], p, [ring.coerce(x) for x in prog.scalars])[-1] == residue(want[0][0], p)


@pytest.mark.parametrize("outs", [(), (0,), (0, 0), (3, 0, 3)])
def test_n_1_circuits_with_no_gates_or_only_a_constant(outs):
    gates = (Gate.const(HUGE), Gate.lin(0, 0, 0, 0), Gate.const(Fraction(1, 2)))
    c = Circuit(1, 3, gates if outs and max(outs) >= 3 else (), outs)
    u = [[5, -7, 2**80]]
    want = ref_circuit(c, u, {})
    assert eval_circuit(c, u, FractionRing()) == want
    for p in (M61, 3):
        got = PythonEngine().evaluate(CircuitSide(c, 1, 3), [[[x % p for x in u[0]]]], p, {})
        assert got == [[[residue(v, p) for v in want[0]]]]
    with pytest.raises(IRError, match="divisible by the prime 2") if c.gates else nullcontext():
        PythonEngine().evaluate(CircuitSide(c, 1, 3), [[[x % 2 for x in u[0]]]], 2, {})


@FAST
@given(st.data())
def test_models_mod_primes_match_the_definition(data):
    """The python engine's model path (tensor form) and the interpreter, against §1 cell by cell."""
    n, d = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    nn, dd = n + data.draw(st.integers(0, 2)), d + data.draw(st.integers(0, 1))
    w = st.sampled_from([0, 0, 0, 1, -1, 2, Fraction(1, 3), HUGE, A, A * B - 2])

    def grid(r, cols):
        return Grid.from_rows([[data.draw(w) for _ in range(cols)] for _ in range(r)])

    layers = tuple(Layer(grid(dd, dd), grid(nn, dd), grid(nn, dd), grid(nn, dd), data.draw(st.sampled_from(list(Mode))))
                   for _ in range(data.draw(st.integers(0, 3))))
    m = Model(n, d, nn, dd, layers)
    u, params = int_point(data.draw, m)
    want = ref_model(m, u, params)
    assert eval_model(m, u, FractionRing(params)) == want
    for p in (M61, 3, 5):
        ps = {k: v % p for k, v in params.items()}
        if p == 3 and any(layer_has_third(layer) for layer in layers):
            with pytest.raises(IRError, match="divisible by the prime 3"):
                PythonEngine().evaluate(ModelSide(m, n, d), [[[x % p for x in r] for r in u]], p, ps)
            with pytest.raises(IRError, match="3"):
                torch_mod(m, u, p, params)
            continue
        got = PythonEngine().evaluate(ModelSide(m, n, d), [[[x % p for x in r] for r in u]], p, ps)
        assert got == [[[residue(v, p) for v in row] for row in want]]
        if p < 1 << 31:
            assert [torch_mod(m, u, p, params)] == got
        ring = BatchModRing([p], [ps])
        assert eval_mod_batch(ModelSide(m, n, d), [u], ring, tensor=False) == got


def layer_has_third(layer: Layer) -> bool:
    return any(Fraction(v).denominator == 3 for g in (layer.W, layer.b1, layer.h, layer.b2) for v in g.values() if not isinstance(v, Sym))


# ---- 2. reading the sides ----------------------------------------------------------------------------
SQUARE = Circuit(1, 1, (Gate.mul(0, 0),), (1,), "square")
CUBE = Circuit(1, 1, (Gate.mul(0, 0), Gate.mul(1, 0)), (2,), "cube")


def square_model(weight: Any = 1) -> Model:
    """``y = (u·w)·(u)``: one layer, ``W = w``, ``h = e_0``."""
    one = Grid.from_rows([[1]])
    return Model(1, 1, 1, 1, (Layer(Grid.from_rows([[weight]]), Grid.zeros(1, 1), one, Grid.zeros(1, 1)),), "sq")


class Shifty:
    """A compiled object whose ``.model`` and ``.certificate`` are properties that hand out a
    different object on every access (the first one is ``first``)."""

    def __init__(self, first: Model, later: Model) -> None:
        self.first, self.later, self.reads = first, later, {"model": 0, "certificate": 0}

    @property
    def model(self) -> Model:
        self.reads["model"] += 1
        return self.first if self.reads["model"] == 1 else self.later

    @property
    def certificate(self) -> None:
        self.reads["certificate"] += 1
        return None


@pytest.mark.parametrize("first_is_square", [True, False])
def test_a_compiled_object_is_read_once(first_is_square):
    """Whatever ``.model`` returns later, the verdict, the counterexample and the report are about
    the model read first."""
    good, bad = square_model(1), square_model(2)
    obj = Shifty(good, bad) if first_is_square else Shifty(bad, good)
    report = verify(SQUARE, obj, method="exact")
    assert obj.reads == {"model": 1, "certificate": 1}
    assert report.rhs["name"] == "sq"
    if first_is_square:
        assert report.proved
    else:
        cex = report.counterexample
        assert report.refuted and cex is not None
        u = [list(r) for r in cex.inputs]
        assert (ref_circuit(SQUARE, u, {})[0][0], ref_model(bad, u, {})[0][0]) == (cex.lhs_value, cex.rhs_value)
        assert cex.lhs_value != cex.rhs_value


class Holder:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


@pytest.mark.parametrize("inner, found", [(SQUARE, "Circuit"), (None, "NoneType"), (3, "int"), ([square_model()], "list")])
def test_a_compiled_object_whose_model_is_not_a_model(inner, found):
    """``.model`` a circuit, None or anything else: an IRError saying that ``.model`` must be a
    Model and what it was (a circuit in ``.model`` is not silently read as a circuit side)."""
    with pytest.raises(IRError, match=rf"rhs: .*\.model.*Model.*found {found}"):
        verify(SQUARE, Holder(model=inner, certificate=None))


def test_a_compiled_object_without_a_certificate_is_its_model():
    report = verify(SQUARE, Holder(model=square_model()), method="exact")
    assert report.proved


def test_a_certificate_that_is_not_one_is_refused():
    with pytest.raises(IRError, match=r"rhs: .*certificate must be a Certificate, found dict"):
        verify(SQUARE, Holder(model=square_model(), certificate={}))


def test_an_object_with_both_a_model_and_a_kaleidoscope_is_ambiguous():
    """A kaleidoscope and a model on one object: which one is the side? Neither is chosen silently."""
    k = permutation_to_kaleidoscope([0]).kaleidoscope
    with pytest.raises(IRError, match=r"lhs: .*both.*\.kaleidoscope.*\.model"):
        verify(Holder(model=square_model(), certificate=None, kaleidoscope=k), SQUARE)


class BrokenCertificate:
    """A compiled object whose ``certificate`` property has a bug (reads a missing attribute)."""

    def __init__(self) -> None:
        self.model = square_model()

    @property
    def certificate(self) -> Any:
        return self.not_there  # type: ignore[attr-defined]


class ProxyCompiled:
    """Attributes served by ``__getattr__`` only: an AttributeError there is absence."""

    def __getattr__(self, name: str) -> Any:
        if name == "model":
            return square_model()
        raise AttributeError(name)


def test_an_attribute_error_inside_a_property_is_not_absence():
    """An AttributeError raised while reading ``.certificate`` (or ``.model``) that exists is an
    IRError naming it, not a compiled object read without its certificate."""
    with pytest.raises(IRError, match=r"rhs: reading \.certificate of BrokenCertificate raised AttributeError \(.*not_there"):
        verify(SQUARE, BrokenCertificate(), method="exact")
    assert verify(SQUARE, ProxyCompiled(), method="exact").proved
    from symverify import evaluate

    class BrokenModel:
        @property
        def model(self) -> Any:
            return self.not_there  # type: ignore[attr-defined]

    with pytest.raises(IRError, match=r"compiled object: reading \.model of BrokenModel raised AttributeError"):
        evaluate(BrokenModel(), [[2]])


PERM = (2, 0, 3, 1)  # y[PERM[i]] = x[i]


def perm_circuit(n: int, d: int, perm: tuple[int, ...] = PERM) -> Circuit:
    inv = [perm.index(j) for j in range(len(perm))]
    return Circuit(n, d, (), tuple(inv))


@pytest.mark.parametrize("n, d", [(2, 2), (4, 1), (1, 4)])
def test_a_kaleidoscope_takes_the_other_sides_shape(n, d):
    k = permutation_to_kaleidoscope(PERM)
    a, b = pair_sides(k, perm_circuit(n, d))
    assert isinstance(a, KaleidoscopeSide) and a.shape == b.shape == (n, d)
    assert verify(k, perm_circuit(n, d), method="exact").proved
    assert verify(perm_circuit(n, d), k, method="randomized").proved
    wrong = perm_circuit(n, d, (0, 2, 3, 1))
    report = verify(k, wrong, method="exact")
    cex = report.counterexample
    assert report.refuted and cex is not None and len(cex.inputs) == n and len(cex.inputs[0]) == d
    x = [v for row in cex.inputs for v in row]
    y = [Fraction(0)] * 4
    for i, t in enumerate(PERM):
        y[t] = Fraction(x[i])
    want = [y[i * d : (i + 1) * d] for i in range(n)]
    got = ref_circuit(wrong, [list(r) for r in cex.inputs], {})
    i, j = cex.cell
    assert (want[i][j], got[i][j]) == (cex.lhs_value, cex.rhs_value) and want[i][j] != got[i][j]
    assert all(want[r][s] == got[r][s] for r in range(n) for s in range(d) if r * d + s < i * d + j)


@pytest.mark.parametrize("u", [[[1, 2, 3], [4]], [[1, 2, 3, 4]], [[1], [2], [3], [4]], {0: [1, 2], 1: [3, 4]},
                               [[1, 2], "ab"], [[1, 2], {3: 0, 4: 0}]], ids=repr)
def test_a_kaleidoscope_side_reads_only_its_own_shape(u):
    """Read as 2×2, a kaleidoscope took any input with four entries in all (``[[1, 2, 3], [4]]``,
    ``1×4``, ``4×1``), a str row as its characters and a dict as a bare TypeError; it is a
    ShapeError now, as for circuits and models."""
    k, c = pair_sides(permutation_to_kaleidoscope(PERM), Circuit(2, 2, (), ()))
    assert k.shape == (2, 2)
    with pytest.raises(ShapeError, match=r"kaleidoscope input: expected shape 2×2"):
        k.evaluate(u, FractionRing())
    with pytest.raises(ShapeError, match=r"circuit input: expected shape 2×2"):
        c.evaluate(u, FractionRing())
    assert k.evaluate([[1, 2], [3, 4]], FractionRing()) == [[2, 4], [1, 3]]


@pytest.mark.parametrize("n, d", [(2, 2), (1, 4)])
def test_a_kaleidoscope_takes_a_models_shape(n, d):
    """Against a compiled model of shape ``n×d`` (``n·d = 4``): the model's own ``n×d`` reading, and
    the counterexample is a difference of the kaleidoscope's ``y[PERM[i]] = x[i]`` and §1's model."""
    from symverify import compile as compile_circuit

    k = permutation_to_kaleidoscope(PERM)
    assert verify(k, compile_circuit(perm_circuit(n, d)), method="exact").proved
    wrong = compile_circuit(perm_circuit(n, d, (1, 0, 2, 3))).model
    report = verify(wrong, k, method="auto")
    cex = report.counterexample
    assert report.refuted and cex is not None and (len(cex.inputs), len(cex.inputs[0])) == (n, d)
    u = [list(r) for r in cex.inputs]
    x = [v for row in u for v in row]
    y = [Fraction(0)] * 4
    for i, t in enumerate(PERM):
        y[t] = Fraction(x[i])
    got = ref_model(wrong, u, {})
    i, j = cex.cell
    assert (got[i][j], y[i * d + j]) == (cex.lhs_value, cex.rhs_value) and cex.lhs_value != cex.rhs_value


@pytest.mark.parametrize("n, d", [(3, 1), (2, 3), (1, 5), (8, 1)])
def test_a_kaleidoscope_of_another_size_is_a_shape_error(n, d):
    k = permutation_to_kaleidoscope(PERM)
    with pytest.raises(ShapeError, match=r"lhs kaleidoscope.*\(4×1\), rhs circuit.*\(" + f"{n}×{d}"):
        verify(k, Circuit(n, d, (), ()))


def test_a_kaleidoscope_of_size_1():
    k = permutation_to_kaleidoscope([0])
    assert verify(k, Circuit(1, 1, (), (0,)), method="exact").proved
    report = verify(k, Circuit(1, 1, (), ()), method="exact")
    assert report.refuted and report.counterexample.cell == (0, 0) and report.counterexample.lhs_value != 0


@pytest.mark.parametrize("lhs, rhs", [(Circuit(2, 1, (), ()), Circuit(1, 2, (), ())), (SQUARE, Circuit(1, 2, (), ())),
                                      (square_model(), Circuit(2, 2, (), ()))])
def test_sides_of_different_shapes_are_named(lhs, rhs):
    with pytest.raises(ShapeError, match=r"different shapes: lhs .*\(\d×\d\), rhs .*\(\d×\d\)"):
        verify(lhs, rhs)


@pytest.mark.parametrize("name", ["a", "x0", "u", "lhs", "D1[3]", "rhs.b"])
def test_parameters_on_one_side_only_and_shared_names(name):
    """``name`` is a circuit coefficient on the left and a model weight on the right: one value for
    both. ``x·s²`` vs ``(u·s)·u`` differ (at s = 0 they agree, so the value of s matters)."""
    s = sym(name)
    lhs = Circuit(1, 1, (Gate.const(s * s), Gate.mul(0, 1)), (2,))
    rhs = square_model(s)
    report = verify(lhs, rhs, method="exact")
    cex = report.counterexample
    assert report.refuted and cex is not None and set(cex.param_dict()) == {name}
    u, ps = [list(r) for r in cex.inputs], cex.param_dict()
    assert type(ps[name]) in (int, Fraction)
    assert (ref_circuit(lhs, u, ps)[0][0], ref_model(rhs, u, ps)[0][0]) == (cex.lhs_value, cex.rhs_value)
    # symbols on the right only: every one gets a value, the left has none
    only = verify(SQUARE, square_model(s + 1), method="randomized")
    assert only.refuted and set(only.counterexample.param_dict()) == {name}


def test_empty_circuits_are_the_zero_map():
    empty = Circuit(2, 2, (), ())
    assert verify(empty, Circuit(2, 2, (Gate.const(0), Gate.lin(0, 0, 1, 0)), (4, 5, 4)), method="exact").proved
    zero_model = Model(2, 2, 2, 2, (Layer(Grid.zeros(2, 2), Grid.zeros(2, 2), Grid.zeros(2, 2), Grid.zeros(2, 2)),))
    assert verify(empty, zero_model, method="exact").proved
    identity = Model(2, 2, 2, 2, ())
    report = verify(empty, identity, method="randomized")
    assert report.refuted and report.counterexample.lhs_value == 0
    u = [list(r) for r in report.counterexample.inputs]
    i, j = report.counterexample.cell
    assert u[i][j] == report.counterexample.rhs_value != 0
    assert all(u[r][s] == 0 for r in range(2) for s in range(2) if (r, s) < (i, j))


# ---- 3. counterexamples --------------------------------------------------------------------------------
def mutate_gate(c: Circuit, k: int, how: int) -> Circuit:
    """``c`` with gate ``k`` changed: another op, another coefficient or another argument."""
    g = c.gates[k]
    nd = c.n * c.d
    if g.op is Op.CONST:
        new = Gate.const(g.coeffs[0] + 1) if how % 2 else Gate.lin(0, 1, 0, 0)
    elif g.op is Op.LIN:
        (x, y), (al, be) = g.args, g.coeffs
        new = Gate.lin(x, al + 1, y, be) if how % 2 else Gate.mul(x, y)
    else:
        x, y = g.args
        new = Gate.lin(x, 1, y, 1) if how % 2 else Gate.mul(x, (y + 1) % (nd + k))
    return Circuit(c.n, c.d, (*c.gates[:k], new, *c.gates[k + 1 :]), c.outputs)


def reads(c: Circuit, k: int) -> Circuit:
    """``c`` with gate ``k`` among its outputs (at a random-looking place), so a change there shows."""
    outs = list(c.outputs[: c.n * c.d - 1])
    outs.insert(k % (len(outs) + 1), c.n * c.d + k)
    return Circuit(c.n, c.d, c.gates, tuple(outs))


def changed_pair(data: Any, max_gates: int) -> tuple[Circuit, Circuit] | None:
    """A drawn circuit with a drawn gate among its outputs (:func:`reads`) and the same circuit with
    that gate changed (:func:`mutate_gate`); None when the circuit has no gate."""
    c = data.draw(circuits(max_gates=max_gates))
    if not c.gates:
        return None
    k = data.draw(st.integers(0, len(c.gates) - 1))
    c = reads(c, k)
    return c, mutate_gate(c, k, data.draw(st.integers(0, 1)))


def check_counterexample(lhs: Any, rhs: Any, cex: Counterexample) -> None:
    """``cex`` is a point where the two sides differ, by the independent evaluator: its cell is the
    first (row-major) differing entry, with exactly the claimed values; every symbol has a value."""
    names = set(lhs.params() if isinstance(lhs, Circuit) else as_side(lhs).params()) | set(as_side(rhs).params())
    ps = cex.param_dict()
    assert set(ps) == names
    for x in [v for row in cex.inputs for v in row] + list(ps.values()) + [cex.lhs_value, cex.rhs_value]:
        assert type(x) in (int, Fraction)
    u = [list(r) for r in cex.inputs]
    a, b = ref_side(lhs, u, ps), ref_side(rhs, u, ps)
    diff = [(i, j) for i in range(len(a)) for j in range(len(a[0])) if a[i][j] != b[i][j]]
    assert diff and diff[0] == cex.cell
    i, j = cex.cell
    assert (a[i][j], b[i][j]) == (cex.lhs_value, cex.rhs_value)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_refutation_of_a_changed_circuit_is_a_real_difference(data):
    pair = changed_pair(data, 8)
    if pair is None:
        return
    c, other = pair
    method = data.draw(st.sampled_from(["auto", "randomized", "exact"]))
    report = verify(c, other, method=method, seed=data.draw(st.integers(0, 3)))
    if report.refuted:
        check_counterexample(c, other, report.counterexample)
    else:
        assert report.counterexample is None


def commuted(c: Circuit) -> Circuit:
    """``c`` with the operands of every gate swapped (``a·b`` as ``b·a``, ``α·a + β·b`` as
    ``β·b + α·a``) and a zero gate appended: the same map, another program."""
    gates = []
    for g in c.gates:
        if g.op is Op.MUL:
            gates.append(Gate.mul(g.args[1], g.args[0]))
        elif g.op is Op.LIN:
            gates.append(Gate.lin(g.args[1], g.coeffs[1], g.args[0], g.coeffs[0]))
        else:
            gates.append(g)
    gates.append(Gate.lin(0, 0, 0, 0))
    return Circuit(c.n, c.d, tuple(gates), c.outputs)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_rewritten_circuit_is_never_refuted(data):
    """The same map in another program: ``proved`` by every method (never ``refuted``: a
    counterexample there could not survive the evaluator below)."""
    c = data.draw(circuits(max_gates=8))
    method = data.draw(st.sampled_from(["auto", "randomized", "exact"]))
    report = verify(c, commuted(c), method=method, seed=data.draw(st.integers(0, 3)))
    assert report.proved, report
    u, params = int_point(data.draw, c)
    assert ref_circuit(c, u, params) == ref_circuit(commuted(c), u, params)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_refutation_of_a_changed_model_weight_is_a_real_difference(data):
    n, d = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    nn, dd = n + data.draw(st.integers(0, 1)), d + data.draw(st.integers(0, 1))
    w = st.sampled_from([0, 0, 1, -1, 2, Fraction(1, 2), A, B + 1])
    rows = {name: [[data.draw(w) for _ in range(dd)] for _ in range(dd if name == "W" else nn)]
            for name in ("W", "b1", "h", "b2")}
    mode = data.draw(st.sampled_from(list(Mode)))
    m = Model(n, d, nn, dd, (Layer(*(Grid.from_rows(rows[x]) for x in ("W", "b1", "h", "b2")), mode),
                              Layer(Grid.identity(dd), Grid.zeros(nn, dd), Grid.zeros(nn, dd), Grid.full(nn, dd, 1), mode)))
    which = data.draw(st.sampled_from(["W", "b1", "h", "b2"]))
    grid = rows[which]
    i, j = data.draw(st.integers(0, len(grid) - 1)), data.draw(st.integers(0, dd - 1))
    grid = [list(r) for r in grid]
    grid[i][j] = grid[i][j] + data.draw(st.sampled_from([1, -2, A]))
    changed = dict(rows, **{which: grid})
    m2 = Model(n, d, nn, dd, (Layer(*(Grid.from_rows(changed[x]) for x in ("W", "b1", "h", "b2")), mode), *m.layers[1:]))
    report = verify(m, m2, method=data.draw(st.sampled_from(["auto", "randomized", "exact"])))
    if report.refuted:
        check_counterexample(m, m2, report.counterexample)


def forged(**kw: Any) -> Counterexample:
    base: dict[str, Any] = {"inputs": ((2,),), "params": (), "cell": (0, 0), "lhs_value": 4, "rhs_value": 8, "found_by": "forged"}
    return Counterexample(**{**base, **kw})


def test_an_honest_counterexample_passes_its_recheck():
    again = recheck(as_side(SQUARE), as_side(CUBE), forged())
    assert (again.inputs, again.cell, again.lhs_value, again.rhs_value) == (((2,),), (0, 0), 4, 8)


@pytest.mark.parametrize("kw", [
    {"inputs": ((1,),), "lhs_value": 1, "rhs_value": 1},  # equal outputs there
    {"inputs": ((0,),), "lhs_value": 1, "rhs_value": 0},
    {"lhs_value": 5},  # a forged value
    {"rhs_value": Fraction(8, 3)},
    {"cell": (0, 1)},  # a forged cell (outside the 1×1 output)
    {"cell": (1, 0)},
    {"cell": [0, 0]},
    {"cell": (True, False)},
    {"cell": (0.0, 0)},
    {"inputs": ((2, 0),)},  # the wrong shape
    {"inputs": ((2,), (0,))},
    {"inputs": ()},
    {"inputs": [[2]]},
    {"inputs": ((2.0,),)},  # values of the wrong type
    {"inputs": ((np.float64(2),),)},
    {"inputs": ((np.int64(2),),)},
    {"inputs": (("2",),)},
    {"inputs": ((None,),)},
    {"lhs_value": 4.0},
    {"rhs_value": np.float64(8)},
    {"lhs_value": "4"},
    {"params": (("zz", 1),)},  # a parameter neither side has
], ids=lambda kw: repr(kw)[:40])
def test_recheck_refuses_a_forged_counterexample(kw):
    with pytest.raises(ProverError, match="counterexample re-check"):
        recheck(as_side(SQUARE), as_side(CUBE), forged(**kw))


def test_recheck_refuses_true_as_an_input():
    """``True`` is not the number 1 in a counterexample (a bool is no exact rational)."""
    x_plus = Circuit(1, 1, (Gate.lin(0, 1, 0, 0), Gate.const(1)), (1,))  # x vs 1: equal at x = 1 only
    one = Circuit(1, 1, (Gate.const(1),), (1,))
    with pytest.raises(ProverError, match="counterexample re-check"):
        recheck(as_side(x_plus), as_side(one), forged(inputs=((True,),), lhs_value=1, rhs_value=1))
    with pytest.raises(ProverError, match="counterexample re-check"):
        recheck(as_side(SQUARE), as_side(CUBE), forged(inputs=((True,),), lhs_value=1, rhs_value=1))


A_SQUARED = Circuit(1, 1, (Gate.const(A * A),), (1,))
A_TIMES_A = Circuit(1, 1, (Gate.const(A), Gate.mul(1, 1)), (2,))


@pytest.mark.parametrize("value", [0.1, np.float64(0.1), "1/2", True, None, np.int64(3), [1]],
                         ids=lambda v: f"{type(v).__name__}:{v!r}")
def test_recheck_refuses_parameter_values_that_are_not_exact(value):
    """``a²`` and ``a·a`` are equal. A parameter value 0.1 (a float) was evaluated in float arithmetic
    inside the symbolic weight (``0.1**2`` rounds), so a forged counterexample "a = 0.1" passed the
    re-check, and was returned with the exact value of 0.1, at which the sides agree."""
    lhs, rhs = as_side(A_SQUARED), as_side(A_TIMES_A)
    # what float arithmetic claims: the values a float-fed evaluation reproduces
    claim = {"lhs_value": Fraction(1, 100), "rhs_value": Fraction(1, 100)}
    if isinstance(value, float):
        claim = {"lhs_value": Fraction(value**2), "rhs_value": Fraction(value) ** 2}
        assert claim["lhs_value"] != claim["rhs_value"]
    with pytest.raises(ProverError, match=r"counterexample re-check.*a"):
        recheck(lhs, rhs, forged(inputs=((0,),), params=(("a", value),), **claim))


def test_recheck_refuses_a_missing_or_repeated_parameter():
    lhs, rhs = as_side(A_SQUARED), as_side(Circuit(1, 1, (Gate.const(A),), (1,)))
    with pytest.raises(ProverError, match=r"without values"):
        recheck(lhs, rhs, forged(inputs=((0,),), params=(), lhs_value=4, rhs_value=2))
    with pytest.raises(ProverError, match=r"counterexample re-check.*'a'"):
        recheck(lhs, rhs, forged(inputs=((0,),), params=(("a", 1), ("a", 2)), lhs_value=4, rhs_value=2))
    assert recheck(lhs, rhs, forged(inputs=((0,),), params=(("a", 2),), lhs_value=4, rhs_value=2)).param_dict() == {"a": 2}


def test_search_past_its_deadline_stops_quickly():
    """A deadline stops the search early: measured in this process's CPU time against the whole search
    of the same pair (which finds the counterexample), not against a wall-clock constant."""
    gates = [Gate.lin(0, 1, 1, 1)]
    for k in range(20_000):
        gates.append(Gate.mul(4 + k, k % 4) if k % 3 else Gate.lin(4 + k, 1, 0, 1))
    big = Circuit(2, 2, tuple(gates), (len(gates) + 3,))
    other = mutate_gate(big, 5, 1)
    t = time.process_time()
    whole = search_or_stop(as_side(big), as_side(other), Options(), found_by="test")
    whole_cpu = time.process_time() - t
    assert whole is not None
    check_counterexample(big, other, whole)
    t = time.process_time()
    with pytest.raises(DeadlineExceededError):  # the deadline has passed: a stop, never "nothing found"
        search_or_stop(as_side(big), as_side(other), Options(deadline=time.monotonic() - 1), found_by="test")
    assert time.process_time() - t < whole_cpu / 4
    t = time.process_time()
    try:  # the deadline passes during the search (or the search ends first: every candidate too large to confirm)
        found = search_or_stop(as_side(big), as_side(other), Options(deadline=time.monotonic() + 0.05), found_by="test")
    except DeadlineExceededError:
        found = None
    assert found is None and time.process_time() - t < whole_cpu / 2


def test_search_gives_every_symbol_an_exact_value():
    lhs = Circuit(1, 2, (Gate.lin(0, A * B, 1, sym("c")),), (2,))
    rhs = Circuit(1, 2, (Gate.lin(0, B * A, 1, sym("c") + Fraction(1, 3**100)),), (2,))
    cex = search_or_stop(as_side(lhs), as_side(rhs), Options(), found_by="test", degree=3)
    assert cex is not None
    check_counterexample(lhs, rhs, cex)
    assert set(cex.param_dict()) == {"a", "b", "c"}


def test_confirm_and_search_agree_with_the_evaluator_at_huge_points():
    u = [[HUGE, Fraction(-1, 3**300)]]
    lhs = Circuit(1, 2, (Gate.mul(0, 1), Gate.lin(2, A, 0, 1)), (3, 2))
    rhs = Circuit(1, 2, (Gate.mul(1, 0), Gate.lin(2, A, 0, 1)), (3, 1))
    cex = confirm(as_side(lhs), as_side(rhs), u, {"a": Fraction(5, 7)}, "test")
    assert cex is not None and cex.cell == (0, 1)
    check_counterexample(lhs, rhs, cex)


# ---- 4. what a refutation's report says -----------------------------------------------------------------
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_reports_text_and_json_name_the_differing_cell(data):
    pair = changed_pair(data, 6)
    if pair is None:
        return
    c, other = pair
    report = verify(c, other, method="randomized")
    if not report.refuted:
        return
    cex = report.counterexample
    check_counterexample(c, other, cex)
    doc = json.loads(json.dumps(report.to_json()))
    assert doc["verdict"] == "refuted" and doc["format"] == "symverify.report"
    j = doc["counterexample"]
    inputs = [[parse_rational(x) for x in row] for row in j["inputs"]]
    params = {k: parse_rational(v) for k, v in j["params"].items()}
    a, b = ref_circuit(c, inputs, params), ref_circuit(other, inputs, params)
    first = next((r, s) for r in range(c.n) for s in range(c.d) if a[r][s] != b[r][s])
    assert j["cell"] == list(first)
    assert (parse_rational(j["lhs_value"]), parse_rational(j["rhs_value"])) == (a[first[0]][first[1]], b[first[0]][first[1]])
    text = report.text(timings=False)
    assert text.startswith("REFUTED by ") and f"entry {first}" in text


@pytest.mark.parametrize("value", [sym("b"), sym("a") + 1], ids=["b", "a+1"])
def test_the_public_evaluator_refuses_a_symbolic_parameter_value(value):
    """``symverify.evaluate(c, u, params={"a": sym("b")})`` raised a bare TypeError from inside the
    Fraction ring; a parameter's value must be an exact rational."""
    import symverify as sv

    with pytest.raises(IRError, match=r"parameter a: expected an exact rational .* found the symbolic value"):
        sv.evaluate(A_SQUARED, [[1]], {"a": value})
    assert sv.evaluate(A_SQUARED, [[1]], {"a": "2/3"}) == [[Fraction(4, 9)]]


@pytest.mark.parametrize("big", [HUGE, 2**70000 + 1, Fraction(-1, 3**9000)], ids=["10^400", "2^70000+1", "-1/3^9000"])
def test_a_refutation_with_huge_values_is_exact_in_json(big):
    """Text abbreviates huge values; the JSON holds them exactly (decimal or ``0x`` text) and they
    are the evaluator's values at the reported cell."""
    lhs = Circuit(1, 2, (Gate.const(big), Gate.lin(0, 1, 2, 1)), (1, 3))
    rhs = Circuit(1, 2, (Gate.const(big), Gate.lin(0, 1, 2, -1)), (1, 3))
    report = verify(lhs, rhs, method="exact")
    assert report.refuted
    j = json.loads(json.dumps(report.to_json()))["counterexample"]
    u = [[parse_rational(x) for x in row] for row in j["inputs"]]
    a, b = ref_circuit(lhs, u, {}), ref_circuit(rhs, u, {})
    assert j["cell"] == [0, 1] and a[0][0] == b[0][0]
    assert (parse_rational(j["lhs_value"]), parse_rational(j["rhs_value"])) == (a[0][1], b[0][1])
    assert "entry (0, 1)" in report.text(timings=False) and len(report.text(timings=False)) < 2000


@pytest.mark.parametrize("value", [0.1, np.float64(0.5), True, "1/2", sym("b"), np.int64(3), None],
                         ids=lambda v: f"{type(v).__name__}:{v!r}")
def test_the_fraction_ring_takes_exact_parameter_values_only(value):
    """The ring every exact re-check evaluates in: ``FractionRing({"a": 0.1})`` computed ``a²`` in
    float arithmetic (and ``confirm`` then found ``a²`` ≠ ``a·a``); a Sym or a str raised a bare
    TypeError inside a weight. Each is an IRError naming the parameter, before any evaluation."""
    with pytest.raises(IRError, match=r"parameter 'a': expected an exact rational value \(int or Fraction\), found"):
        FractionRing({"a": value})
    with pytest.raises(IRError, match=r"parameter 'a': expected an exact rational value"):
        confirm(as_side(A_SQUARED), as_side(A_TIMES_A), [[0]], {"a": value}, "test")
    assert FractionRing({"a": Fraction(1, 10), "b": -(10**400)}).coerce(A * A) == Fraction(1, 100)


@pytest.mark.parametrize("backend", ["exact", "torch", "modular"])
def test_the_executors_refuse_a_symbolic_parameter_value(backend):
    """``execute(c, u, params={"a": sym("b")})``: a bare TypeError (exact, torch) or a complaint that
    ``b`` has no value (modular); an IRError saying that a value must be a rational."""
    from symverify.executors import execute

    if backend != "exact":
        pytest.importorskip("torch")
    kw: dict[str, Any] = {"p": 7} if backend == "modular" else {}
    with pytest.raises(IRError, match=r"params\['a'\]: expected an exact rational .* found the symbolic value"):
        execute(A_SQUARED, [[1]], backend=backend, params={"a": sym("b")}, **kw)



def symbolic_bbstar() -> Any:
    from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor

    f = ButterflyFactor(2, 1, (A,), (1,), (0,), (1,))
    return BBStar(2, (f, ButterflyFactor(2, 1, (1,), (0,), (0,), (1,))))


@pytest.mark.parametrize("value, p, want", [(Fraction(1, 2), 7, 4), ("1/2", 7, 4), (np.int64(3), 7, 3), (2, None, 2.0),
                                            (Fraction(1, 2), None, 0.5), (np.int64(3), None, 3.0)])
def test_twiddles_take_every_exact_parameter_value(value, p, want):
    """``twiddles(k, p=7, params={"a": Fraction(1, 2)})`` raised a bare TypeError (``pow`` of a
    Fraction mod p): a rational weight value is mapped into ``F_p`` like every weight."""
    from symverify.kaleidoscope.numeric import twiddles

    (_, t0, _), = twiddles(symbolic_bbstar(), p=p, params={"a": value})
    assert t0.tolist() == [[[want], [0]]]


@pytest.mark.parametrize("value, p, match", [(0.5, 7, "float"), (True, 7, "bool"), (sym("b"), 7, "symbolic value"),
                                             (sym("b"), None, "symbolic value"), (Fraction(1, 7), 7, "divisible by the prime 7")])
def test_twiddles_refuse_inexact_parameter_values(value, p, match):
    from symverify.kaleidoscope.numeric import twiddles

    with pytest.raises(IRError, match=rf"params\['a'\]: .*{match}"):
        twiddles(symbolic_bbstar(), p=p, params={"a": value})


@pytest.mark.parametrize("value", [Fraction(1, 2), 0.5, True, "3", np.int64(3)], ids=repr)
def test_the_mod_ring_takes_int_parameter_values_only(value):
    with pytest.raises(IRError, match=r"parameter 'a' mod 7: expected an int \(a residue\), found"):
        ModRing(7, {"a": value})
    assert ModRing(7, {"a": -4}).coerce(A * A) == 2


@pytest.mark.parametrize("method", ["exact", "randomized", "auto"])
def test_a_symbol_shared_by_a_kaleidoscope_and_a_circuit(method):
    """``a`` is a butterfly weight on the left and a circuit coefficient on the right: one value for
    both. The kaleidoscope is ``y0 = a·x0 + x1, y1 = x1`` (``M = [[a, 1], [0, 1]]``)."""
    from symverify.kernel.ir.butterfly import Kaleidoscope

    k = Kaleidoscope(2, 2, (symbolic_bbstar(),))
    same = Circuit(2, 1, (Gate.lin(0, A, 1, 1),), (2, 1))
    assert verify(k, same, method=method).proved
    other = Circuit(2, 1, (Gate.lin(0, A * A, 1, 1),), (2, 1))  # a² instead of a: equal at a ∈ {0, 1} only
    report = verify(k, other, method=method)
    cex = report.counterexample
    assert report.refuted and cex is not None and set(cex.param_dict()) == {"a"}
    (x0,), (x1,) = cex.inputs
    a = Fraction(cex.param_dict()["a"])
    want = [[a * x0 + x1], [Fraction(x1)]]
    got = ref_circuit(other, [list(r) for r in cex.inputs], cex.param_dict())
    assert cex.cell == (0, 0) and (want[0][0], got[0][0]) == (cex.lhs_value, cex.rhs_value) and a not in (0, 1)


class Fickle:
    """``.model`` is a model on the first access and ``later`` after that."""

    def __init__(self, first: Model, later: Any) -> None:
        self.first, self.later, self.reads = first, later, 0

    @property
    def model(self) -> Any:
        self.reads += 1
        return self.first if self.reads == 1 else self.later


@pytest.mark.parametrize("later", [None, SQUARE, square_model(3)], ids=["None", "circuit", "other model"])
def test_evaluate_execute_and_polynomials_read_a_compiled_object_once(later):
    """``model_of`` checked the first ``.model`` and returned a second read: ``evaluate`` ran the
    later object (a circuit, another model) or failed on None."""
    import symverify as sv
    from symverify.executors import execute
    from symverify.kernel.semantics.poly import polynomials

    for run in (lambda o: sv.evaluate(o, [[5]]), lambda o: execute(o, [[5]]).tolist()):
        obj = Fickle(square_model(1), later)
        assert run(obj) == [[25]] and obj.reads == 1
    obj = Fickle(square_model(1), later)
    assert str(polynomials(obj)[0][0]) == str(polynomials(square_model(1))[0][0]) and obj.reads == 1


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_compositional_refutation_is_a_real_difference(data):
    """A compiled circuit (its certificate checked stage by stage) against a changed circuit: the
    counterexample, stage or not, is a difference of the circuit and §1's model."""
    from symverify import compile as compile_circuit

    c = data.draw(circuits(symbolic=False, max_gates=6))
    if not c.gates:
        return
    k = data.draw(st.integers(0, len(c.gates) - 1))
    c = reads(c, k)
    compiled = compile_circuit(c)
    other = mutate_gate(c, k, data.draw(st.integers(0, 1)))
    report = verify(other, compiled, method="auto")
    assert report.method.startswith("compositional")
    if report.refuted:
        check_counterexample(other, compiled.model, report.counterexample)
    else:
        u, _ = int_point(data.draw, c)
        assert ref_circuit(other, u, {}) == ref_model(compiled.model, u, {})
