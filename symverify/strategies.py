"""Hypothesis strategies for random circuits and BaseConv models (used by tests and users' CI).

Needs hypothesis (``pip install 'symverify[dev]'``); :mod:`symverify.testing` re-exports them.

>>> from hypothesis import given
>>> @given(circuits())
... def test_roundtrip(c): ...
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - exercised only without the dev extra
    from symverify.errors import BackendUnavailableError

    raise BackendUnavailableError(
        "symverify.testing needs hypothesis: pip install hypothesis (or pip install 'symverify[dev]')"
    ) from None

from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym

__all__ = ["coefficients", "circuits", "models", "rational_inputs"]


def coefficients(allow_sym: bool = False) -> st.SearchStrategy[Any]:
    """Small exact coefficients (0 included), optionally symbolic parameters ``a``, ``b``."""
    base = st.sampled_from([0, 1, -1, 2, -3, Fraction(1, 2), Fraction(-2, 3)])
    if allow_sym:
        return st.one_of(base, st.sampled_from([sym("a"), sym("b"), sym("a") * 2 - 1]))
    return base


@st.composite
def circuits(draw: Any, max_n: int = 3, max_d: int = 2, max_gates: int = 12, *, linear: bool = False,
             allow_const: bool = True, allow_sym: bool = False, min_outputs: int = 0) -> Circuit:
    """A random valid circuit: gates read earlier nodes; outputs may repeat or be inputs."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    nd = n * d
    gates: list[Gate] = []
    for _ in range(draw(st.integers(0, max_gates))):
        nodes = nd + len(gates)
        kinds = ["lin"] if linear else ["lin", "mul"]
        if allow_const and not linear:
            kinds.append("const")
        kind = draw(st.sampled_from(kinds))
        if kind == "const":
            gates.append(Gate(Op.CONST, (), (draw(coefficients(allow_sym)),)))
            continue
        a, b = draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1))
        if kind == "mul":
            gates.append(Gate(Op.MUL, (a, b), ()))
        else:
            gates.append(Gate(Op.LIN, (a, b), (draw(coefficients(allow_sym)), draw(coefficients(allow_sym)))))
    total = nd + len(gates)
    m = draw(st.integers(min(min_outputs, nd), nd))
    outs = tuple(draw(st.lists(st.integers(0, total - 1), min_size=m, max_size=m)))
    return Circuit(n, d, tuple(gates), outs, "hypothesis")


def rational_inputs(n: int, d: int) -> st.SearchStrategy[list[list[Fraction]]]:
    """An ``n×d`` array of small rationals."""
    q = st.builds(Fraction, st.integers(-5, 5), st.integers(1, 3))
    return st.lists(st.lists(q, min_size=d, max_size=d), min_size=n, max_size=n)


@st.composite
def models(draw: Any, max_n: int = 3, max_d: int = 2, max_layers: int = 2, *, pad: int = 1,
           modes: tuple[Mode, ...] = (Mode.CAUSAL, Mode.CYCLIC)) -> Model:
    """A random small BaseConv model with sparse small-integer weights."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    nn = n + draw(st.integers(0, pad))
    dd = d + draw(st.integers(0, pad))
    weight = st.sampled_from([0, 0, 0, 1, -1, 2])

    def grid(rows: int, cols: int) -> Grid:
        return Grid.from_rows([[draw(weight) for _ in range(cols)] for _ in range(rows)])

    layers = []
    for _ in range(draw(st.integers(0, max_layers))):
        layers.append(Layer(grid(dd, dd), grid(nn, dd), grid(nn, dd), grid(nn, dd), draw(st.sampled_from(modes))))
    return Model(n, d, nn, dd, tuple(layers), "hypothesis")
