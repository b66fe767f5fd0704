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

from symverify.errors import UsageError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym

__all__ = ["coefficients", "circuits", "models", "rational_inputs"]


def _size(value: object, what: str, low: int) -> int:
    """``value`` if it is an int ≥ ``low`` (not a bool); else a :class:`UsageError` naming the argument,
    raised when the strategy is made rather than deep inside hypothesis when it is drawn."""
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise UsageError(f"{what}: expected an int ≥ {low}, found {safe_repr(value, 40)}")
    return value


def _flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{what}: expected True or False, found {safe_repr(value, 40)}")
    return value


def coefficients(allow_sym: bool = False) -> st.SearchStrategy[Any]:
    """Small exact coefficients (0 included), optionally symbolic parameters ``a``, ``b``."""
    _flag(allow_sym, "coefficients(allow_sym)")
    base = st.sampled_from([0, 1, -1, 2, -3, Fraction(1, 2), Fraction(-2, 3)])
    if allow_sym:
        return st.one_of(base, st.sampled_from([sym("a"), sym("b"), sym("a") * 2 - 1]))
    return base


def circuits(max_n: int = 3, max_d: int = 2, max_gates: int = 12, *, linear: bool = False,
             allow_const: bool = True, allow_sym: bool = False, min_outputs: int = 0) -> st.SearchStrategy[Circuit]:
    """Random valid circuits on ``u`` of at most ``max_n × max_d``: gates read earlier nodes; outputs
    may repeat or be inputs; at least ``min(min_outputs, n·d)`` outputs (``min_outputs ≤ max_n·max_d``).
    Bad arguments raise :class:`UsageError` here, not when hypothesis draws."""
    _size(max_n, "circuits(max_n)", 1)
    _size(max_d, "circuits(max_d)", 1)
    _size(max_gates, "circuits(max_gates)", 0)
    if _size(min_outputs, "circuits(min_outputs)", 0) > max_n * max_d:
        raise UsageError(f"circuits(min_outputs): at most max_n·max_d = {max_n * max_d} outputs fit, found {min_outputs}")
    for flag in ("linear", "allow_const", "allow_sym"):
        _flag(locals()[flag], f"circuits({flag})")
    return _circuits(max_n, max_d, max_gates, linear, allow_const, allow_sym, min_outputs)


@st.composite
def _circuits(draw: Any, max_n: int, max_d: int, max_gates: int, linear: bool, allow_const: bool, allow_sym: bool,
              min_outputs: int) -> Circuit:
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
    # one draw per output, as per gate: a fixed-size list of thousands is refused by hypothesis
    outs = tuple(draw(st.integers(0, total - 1)) for _ in range(m))
    return Circuit(n, d, tuple(gates), outs, "hypothesis")


MAX_INPUT_CELLS = 1024
"""The most entries :func:`rational_inputs` draws (32×32 passes hypothesis' health checks)."""


def rational_inputs(n: int, d: int) -> st.SearchStrategy[list[list[Fraction]]]:
    """An ``n×d`` array of small rationals; at most :data:`MAX_INPUT_CELLS` entries (hypothesis draws
    each one from a buffer of a few kilobytes: larger arrays cannot be generated)."""
    _size(n, "rational_inputs(n)", 1)
    _size(d, "rational_inputs(d)", 1)
    if n * d > MAX_INPUT_CELLS:
        raise UsageError(f"rational_inputs: expected n·d ≤ MAX_INPUT_CELLS = {MAX_INPUT_CELLS} (hypothesis cannot draw "
                         f"larger fixed-size arrays), found {n}×{d}; draw a smaller input, or build it with numpy from a drawn seed")
    return _rational_inputs(n, d)


@st.composite
def _rational_inputs(draw: Any, n: int, d: int) -> list[list[Fraction]]:
    q = st.builds(Fraction, st.integers(-5, 5), st.integers(1, 3))
    return [[draw(q) for _ in range(d)] for _ in range(n)]  # one draw per entry (no fixed-size lists)


def models(max_n: int = 3, max_d: int = 2, max_layers: int = 2, *, pad: int = 1,
           modes: tuple[Mode, ...] = (Mode.CAUSAL, Mode.CYCLIC)) -> st.SearchStrategy[Model]:
    """Random small BaseConv models with sparse small-integer weights (``N ≤ max_n``, ``d ≤ max_d``,
    inner sizes up to ``pad`` larger, layers in ``modes``). Bad arguments raise :class:`UsageError` here."""
    _size(max_n, "models(max_n)", 1)
    _size(max_d, "models(max_d)", 1)
    _size(max_layers, "models(max_layers)", 0)
    _size(pad, "models(pad)", 0)
    if isinstance(modes, str) or not isinstance(modes, (tuple, list)) or not modes:
        raise UsageError(f"models(modes): expected a non-empty tuple of modes ('causal', 'cyclic'), found {safe_repr(modes, 40)}")
    try:
        chosen = tuple(Mode(m) for m in modes)
    except ValueError:
        raise UsageError(f"models(modes): expected modes among 'causal', 'cyclic', found {safe_repr(modes, 40)}") from None
    return _models(max_n, max_d, max_layers, pad, chosen)


@st.composite
def _models(draw: Any, max_n: int, max_d: int, max_layers: int, pad: int, modes: tuple[Mode, ...]) -> Model:
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
