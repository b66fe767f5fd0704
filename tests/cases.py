"""The shared case table for verification: (lhs, rhs, expected verdict), hand-built.

Every case is small enough for every method (exact flint and sympy, randomized, z3, auto, and
compositional where a certificate is given). Models are written by hand from docs/appendix-h.md §2.3
table (causal and cyclic, symbolic weights, padding, several layers); circuits with the
builder. ``MUTATIONS`` lists weight perturbations, output swaps and mode flips that provably
change a proved case; :func:`trace_model` turns any model into an equivalent circuit by running
the interpreter on circuit wires (an independent route for property tests).
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from symverify.ir.build import CircuitBuilder, Wire, sum_tree
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, sym
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.verification import Verdict

PROVED, REFUTED = Verdict.PROVED, Verdict.REFUTED


class Sneaky(int):
    """An int subclass whose ``==`` answers True to everything: a fast path that trusts a value's own
    comparisons instead of its stored integer takes it for any number."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


@dataclass(frozen=True)
class Case:
    """One row: ``lhs`` vs ``rhs`` should give ``expected``; ``certificate`` goes with the model."""

    id: str
    lhs: Any
    rhs: Any
    expected: Verdict
    certificate: Certificate | None = None
    tags: frozenset[str] = frozenset()


# ---- builders -------------------------------------------------------------------------------


def circuit(n: int, d: int, name: str, cell: Callable[[CircuitBuilder, list[list[Wire]], int, int], object]) -> Circuit:
    b = CircuitBuilder(n, d)
    u = b.inputs()
    return b.build([cell(b, u, i, j) for i in range(n) for j in range(d)], name)


def sym_grid(rows: int, cols: int, name: str) -> Grid:
    return Grid.from_cells(rows, cols, {(i, j): sym(f"{name}{i}_{j}") for i in range(rows) for j in range(cols)})


def impulse(n: int, d: int, lag: int) -> Grid:
    return Grid.zeros(n, d).paint(lag, lag + 1, 0, d, 1)


def square_layer(n: int, d: int, mode: Mode = Mode.CAUSAL) -> Layer:
    """``u ⊙ u``: W = I, h = e_0 (product of features with the identity selection)."""
    return Layer.make(n, d, W=Grid.identity(d), h=impulse(n, d, 0), mode=mode)


def input_boundary(n: int, d: int) -> Boundary:
    return Boundary(0, tuple(Cell.node(i // d, i % d, i) for i in range(n * d)), "input")


def output_boundary(c: Circuit, layer: int) -> Boundary:
    return Boundary(layer, tuple(Cell.node(k // c.d, k % c.d, o) for k, o in enumerate(c.outputs)), "output")


def trace_model(m: Model, name: str = "traced") -> Circuit:
    """The circuit that records every ring operation of ``eval_model(m, ·)`` (same polynomials)."""
    b = CircuitBuilder(m.n, m.d)

    class WireRing:
        falsy_is_zero = False  # a wire is always truthy
        zero = b.const(0)

        @staticmethod
        def coerce(x: Scalar) -> Wire:
            return b.const(x)

        @staticmethod
        def reduce(x: Wire) -> Wire:
            return x

    out = eval_model(m, b.inputs(), WireRing())
    return b.build([w for row in out for w in row], name)


def dense_model(n: int, d: int, layers: int, seed: int = 0, mode: Mode = Mode.CAUSAL) -> Model:
    """A dense random BaseConv stack with small nonzero integer weights (no padding)."""
    import random

    rng = random.Random(seed)

    def g(r: int, c: int) -> Grid:
        return Grid.from_rows([[rng.choice([1, -1, 2, 3, -2]) for _ in range(c)] for _ in range(r)])

    return Model(n, d, n, d, tuple(Layer(g(d, d), g(n, d), g(n, d), g(n, d), mode) for _ in range(layers)), f"dense {n}x{d} L={layers}")


# ---- the cases --------------------------------------------------------------------------------

N, D = 3, 2
SQUARE_C = circuit(N, D, "u⊙u", lambda b, u, i, j: u[i][j] * u[i][j])
SQUARE_M = Model(N, D, N, D, (square_layer(N, D),), "square")
SQUARE_CERT = Certificate((input_boundary(N, D), output_boundary(SQUARE_C, 1)))

def _fourth(b: CircuitBuilder, u: list[list[Wire]], i: int, j: int) -> Wire:
    s = u[i][j] * u[i][j]
    return s * s


QUARTIC_C = circuit(N, D, "u^4", _fourth)
QUARTIC_M = Model(N, D, N, D, (square_layer(N, D), square_layer(N, D)), "quartic")


def _quartic_cert(c: Circuit) -> Certificate:
    nd = c.num_inputs
    square_of: dict[int, int] = {}  # input node → the first gate computing its square
    for v in range(nd, c.num_nodes):
        a, b = c.gate(v).args
        if a == b and a < nd:
            square_of.setdefault(a, v)
    mid = Boundary(1, tuple(Cell.node(k // D, k % D, square_of[k]) for k in range(nd)), "squares")
    return Certificate((input_boundary(N, D), mid, output_boundary(c, 2)))


QUARTIC_CERT = _quartic_cert(QUARTIC_C)

LIN_W = Model(N, D, N, D, (Layer.make(N, D, W=sym_grid(D, D, "W"), b2=Grid.full(N, D, 1)),), "u·W")
LIN_C = circuit(N, D, "u·W", lambda b, u, i, q: sum_tree(b, [(sym(f"W{p}_{q}"), u[i][p]) for p in range(D)]))
LIN_CT = circuit(N, D, "u·Wᵀ", lambda b, u, i, q: sum_tree(b, [(sym(f"W{q}_{p}"), u[i][p]) for p in range(D)]))


def conv_model(mode: Mode) -> Model:
    return Model(N, D, N, D, (Layer.make(N, D, b1=Grid.full(N, D, 1), h=sym_grid(N, D, "h"), mode=mode),), f"h⊛u {mode.value}")


def conv_circuit(cyclic: bool) -> Circuit:
    def cell(b: CircuitBuilder, u: list[list[Wire]], i: int, j: int) -> object:
        ks = range(N) if cyclic else range(i + 1)
        return sum_tree(b, [(sym(f"h{k}_{j}"), u[(i - k) % N][j]) for k in ks])

    return circuit(N, D, "h⊛u", cell)


SHIFT_M = Model(N, D, N, D, (Layer.make(N, D, b1=Grid.full(N, D, 1), h=impulse(N, D, 1)),), "shift_down 1")
SHIFT_C = circuit(N, D, "shift_down 1", lambda b, u, i, j: u[i - 1][j] if i >= 1 else b.const(0))
ROT_M = Model(N, D, N, D, (Layer.make(N, D, b1=Grid.full(N, D, 1), h=impulse(N, D, N - 1), mode=Mode.CYCLIC),), "rotate up 1")
ROT_C = circuit(N, D, "rotate up 1", lambda b, u, i, j: u[(i + 1) % N][j])

CONST_M = Model(N, D, N, D, (Layer.make(N, D, b1=sym_grid(N, D, "R"), b2=Grid.full(N, D, 1)),), "constant R")
CONST_C = circuit(N, D, "R", lambda b, u, i, j: b.const(sym(f"R{i}_{j}")))

# Padding: d = 1 inside d' = 2. Layer 1 copies u into column 1; layer 2 multiplies column 0 by it.
_copy = Layer.make(N, 2, W=Grid.from_rows([[1, 1], [0, 0]]), b2=Grid.full(N, 2, 1))
_mul = Layer.make(N, 2, W=Grid.from_rows([[0, 0], [1, 0]]), h=Grid.zeros(N, 2).paint(0, 1, 0, 1, 1))
PAD_M = Model(N, 1, N, 2, (_copy, _mul), "padded square")
PAD_C = circuit(N, 1, "x^2", lambda b, u, i, j: u[i][0] * u[i][0])
PAD_CERT = Certificate((
    input_boundary(N, 1),
    Boundary(1, tuple(Cell.node(i, j, i) for i in range(N) for j in range(2)), "copied"),
    output_boundary(PAD_C, 2),
))

# Running sum (prop prim-add): rows [x; S] → [1; S + x], two causal layers.
_n = 2
ADD_M = Model(2 * _n, 1, 2 * _n, 1, (
    Layer.make(2 * _n, 1, b1=Grid.zeros(2 * _n, 1).paint(_n, 2 * _n, 0, 1, 1), h=impulse(2 * _n, 1, 0).paint(_n, _n + 1, 0, 1, 1)),
    Layer.make(2 * _n, 1, b1=Grid.full(2 * _n, 1, 1), h=impulse(2 * _n, 1, 0), b2=Grid.zeros(2 * _n, 1).paint(0, _n, 0, 1, 1)),
), "add")
ADD_C = circuit(2 * _n, 1, "add", lambda b, u, i, j: b.const(1) if i < _n else u[i][0] + u[i - _n][0])

# Circuit vs circuit: (x + y)^2 = x^2 + 2xy + y^2.
BINOM_A = circuit(1, 2, "(x+y)^2", lambda b, u, i, j: (u[0][0] + u[0][1]) * (u[0][0] + u[0][1]) if j == 0 else u[0][1])
BINOM_B = circuit(1, 2, "x^2+2xy+y^2", lambda b, u, i, j: u[0][0] * u[0][0] + 2 * (u[0][0] * u[0][1]) + u[0][1] * u[0][1] if j == 0 else u[0][1])

# Kaleidoscope: the swap of two entries as one BB* element of size 2, vs the linear circuit.
_swap = ButterflyFactor(2, 1, (0,), (1,), (1,), (0,))
SWAP_K = Kaleidoscope(2, 2, (BBStar(2, (_swap, ButterflyFactor.identity(2, 1))),))
SWAP_C = circuit(1, 2, "swap", lambda b, u, i, j: u[0][1 - j])
IDENT_C = circuit(1, 2, "identity", lambda b, u, i, j: u[0][j])

CASES: tuple[Case, ...] = (
    Case("square-causal", SQUARE_C, SQUARE_M, PROVED, SQUARE_CERT, frozenset({"causal", "certificate"})),
    Case("quartic-two-layer", QUARTIC_C, QUARTIC_M, PROVED, QUARTIC_CERT, frozenset({"multilayer", "certificate"})),
    Case("linear-symbolic-W", LIN_C, LIN_W, PROVED, None, frozenset({"symbolic"})),
    Case("conv-causal-symbolic", conv_circuit(False), conv_model(Mode.CAUSAL), PROVED, None, frozenset({"symbolic", "causal"})),
    Case("conv-cyclic-symbolic", conv_circuit(True), conv_model(Mode.CYCLIC), PROVED, None, frozenset({"symbolic", "cyclic"})),
    Case("shift-down-causal", SHIFT_C, SHIFT_M, PROVED, None, frozenset({"causal"})),
    Case("rotate-up-cyclic", ROT_C, ROT_M, PROVED, None, frozenset({"cyclic"})),
    Case("constant-symbolic", CONST_C, CONST_M, PROVED, None, frozenset({"symbolic"})),
    Case("padded-two-layer", PAD_C, PAD_M, PROVED, PAD_CERT, frozenset({"multilayer", "padded", "certificate"})),
    Case("add-running-sum", ADD_C, ADD_M, PROVED, None, frozenset({"multilayer"})),
    Case("circuit-vs-circuit", BINOM_A, BINOM_B, PROVED),
    Case("kaleidoscope-swap", SWAP_K, SWAP_C, PROVED, None, frozenset({"kaleidoscope"})),
    # refuted rows
    Case("square-vs-quartic", SQUARE_C, QUARTIC_M, REFUTED, None, frozenset({"multilayer"})),
    Case("cyclic-circuit-vs-causal-model", conv_circuit(True), conv_model(Mode.CAUSAL), REFUTED, None, frozenset({"symbolic"})),
    Case("W-vs-W-transposed", LIN_CT, LIN_W, REFUTED, None, frozenset({"symbolic"})),
    Case("shift-vs-rotate", SHIFT_C, ROT_M, REFUTED, None, frozenset({"cyclic"})),
    Case("kaleidoscope-swap-vs-identity", SWAP_K, IDENT_C, REFUTED, None, frozenset({"kaleidoscope"})),
)

BY_ID = {c.id: c for c in CASES}


# ---- mutations that provably change a proved case ---------------------------------------------


def perturb(m: Model, layer: int, grid: str, cell: tuple[int, int], delta: Scalar = 1) -> Model:
    """``m`` with one weight moved by ``delta``."""
    lay = m.layers[layer]
    g: Grid = getattr(lay, grid)
    new = g.paint_cells([(cell[0], cell[1], g.get(*cell) + delta)])
    layers = list(m.layers)
    layers[layer] = replace(lay, **{grid: new})
    return Model(m.n, m.d, m.inner_n, m.inner_d, tuple(layers), m.name + " (perturbed)")


def flip_mode(m: Model, layer: int) -> Model:
    lay = m.layers[layer]
    mode = Mode.CYCLIC if lay.mode is Mode.CAUSAL else Mode.CAUSAL
    layers = list(m.layers)
    layers[layer] = replace(lay, mode=mode)
    return Model(m.n, m.d, m.inner_n, m.inner_d, tuple(layers), m.name + " (mode flipped)")


def swap_outputs(c: Circuit, k1: int, k2: int) -> Circuit:
    outs = list(c.outputs)
    outs[k1], outs[k2] = outs[k2], outs[k1]
    return Circuit(c.n, c.d, c.gates, tuple(outs), c.name + " (swapped)")


# (case id, description, mutated lhs, mutated rhs)
MUTATIONS: tuple[tuple[str, str, Any, Any], ...] = (
    ("square-causal", "W[0][0] += 1", SQUARE_C, perturb(SQUARE_M, 0, "W", (0, 0))),
    ("quartic-two-layer", "layer 1 h[0][1] += 1", QUARTIC_C, perturb(QUARTIC_M, 1, "h", (0, 1))),
    ("linear-symbolic-W", "b1[2][1] += 1", LIN_C, perturb(LIN_W, 0, "b1", (2, 1))),
    ("conv-causal-symbolic", "mode causal → cyclic", conv_circuit(False), flip_mode(conv_model(Mode.CAUSAL), 0)),
    ("rotate-up-cyclic", "mode cyclic → causal", ROT_C, flip_mode(ROT_M, 0)),
    ("shift-down-causal", "swap outputs 0 and 5", swap_outputs(SHIFT_C, 0, 5), SHIFT_M),
    ("padded-two-layer", "layer 0 W[0][1] += 1", PAD_C, perturb(PAD_M, 0, "W", (0, 1))),
    ("add-running-sum", "layer 1 b2[0][0] += 1", ADD_C, perturb(ADD_M, 1, "b2", (0, 0))),
    ("constant-symbolic", "b1[1][1] += R0_0", CONST_C, perturb(CONST_M, 0, "b1", (1, 1), sym("R0_0"))),
)


def replace_expr(obj: Any, old: Any, new: Any) -> Any:
    """``obj`` with every sub-expression equal to ``old`` replaced by ``new`` (frozen dataclasses, tuples)."""
    if obj == old:
        return new
    if isinstance(obj, tuple):
        return tuple(replace_expr(x, old, new) for x in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return type(obj)(**{f.name: replace_expr(getattr(obj, f.name), old, new) for f in dataclasses.fields(obj)})
    return obj


@contextlib.contextmanager
def int_digit_limit(n: int = 0) -> Iterator[None]:
    """Python's int/str conversion limit set to ``n`` digits (0: none; 640 is the smallest limit
    it allows) inside the ``with`` block."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(n)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def assert_forward_matches(module: Any, compiled: Any, seq_len: int, width: int) -> None:
    """The compiled model's float64 run equals ``module``'s forward on random inputs (3 × seq_len ×
    width) within 1e-12 of the output's scale: the model read from a torch module computes what it does."""
    import torch

    from symverify.executors import execute

    u = torch.randn(3, seq_len, width, dtype=torch.float64)
    with torch.no_grad():
        want = module(u)
    got = execute(compiled.model, u, backend="torch", dtype="float64")
    assert float((got - want).abs().max()) <= 1e-12 * max(1.0, float(want.abs().max()))
