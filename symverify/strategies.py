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
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym

__all__ = ["coefficients", "circuits", "models", "rational_inputs"]


def _size(value: object, what: str, low: int) -> int:
    """``value`` if it is an int ≥ ``low`` (not a bool); else a :class:`UsageError` naming the argument,
    raised when the strategy is made rather than deep inside hypothesis when it is drawn."""
    if not isinstance(value, int) or isinstance(value, bool) or int.__index__(value) < low:
        raise UsageError(f"{what}: expected an int ≥ {low}, found {safe_repr(value, 40)}")
    return int.__index__(value)  # the plain value: an int subclass's own comparisons and products are not used


def _flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{what}: expected True or False, found {safe_repr(value, 40)}")
    return value


def coefficients(allow_sym: bool = False) -> st.SearchStrategy[Any]:
    """Small exact coefficients, simplest first (``0, 1, −1, 2, −3, 1/2, −2/3``: a failing example
    shrinks toward 0); with ``allow_sym`` also the symbolic ``a``, ``b`` and ``2·a − 1``."""
    _flag(allow_sym, "coefficients(allow_sym)")
    base = st.sampled_from(_coefficient_values(False))
    if allow_sym:
        return st.one_of(base, st.sampled_from(_coefficient_values(True)[len(_coefficient_values(False)):]))
    return base


def circuits(max_n: int = 3, max_d: int = 2, max_gates: int = 12, *, linear: bool = False,
             allow_const: bool = True, allow_sym: bool = False, min_outputs: int = 0) -> st.SearchStrategy[Circuit]:
    """Random valid circuits on ``u`` of at most ``max_n × max_d``: gates read earlier nodes; outputs
    may repeat or be inputs; at least ``min(min_outputs, n·d)`` outputs (``min_outputs ≤ max_n·max_d``
    and ``≤`` :data:`MAX_INPUT_CELLS`). Gates are ``LIN``, ``MUL`` and (``allow_const``) ``CONST``;
    ``linear`` draws ``LIN`` gates only (no ``CONST`` either, whatever ``allow_const``: a linear
    circuit); coefficients and constants are :func:`coefficients` ``(allow_sym)``, so ``allow_sym``
    adds the parameters ``a``, ``b``. Bad arguments raise :class:`UsageError` here, not when
    hypothesis draws; ``max_n·max_d`` over :data:`symverify.ir.limits.MAX_INPUTS` or ``max_gates`` over
    :data:`~symverify.ir.limits.MAX_GATES` (circuits ``verify`` would refuse) raise :class:`LimitError`.

    Gates and outputs are drawn as lists whose elements name earlier nodes relative to what is drawn
    (a gate reads ``k mod (nodes so far)`` nodes back), so every shrink is a valid circuit and a failing example shrinks
    toward fewer gates, fewer outputs and smaller ``n``, ``d`` (a property that needs one
    multiplication reports a one-gate circuit). Gate counts are small on average (hypothesis' list
    sizes), whatever ``max_gates``."""
    max_n = _size(max_n, "circuits(max_n)", 1)
    max_d = _size(max_d, "circuits(max_d)", 1)
    max_gates = _size(max_gates, "circuits(max_gates)", 0)
    min_outputs = _size(min_outputs, "circuits(min_outputs)", 0)
    for flag in ("linear", "allow_const", "allow_sym"):
        _flag(locals()[flag], f"circuits({flag})")
    limits.check(max_n * max_d, "MAX_INPUTS", f"circuits(max_n={max_n}, max_d={max_d})")
    limits.check(max_gates, "MAX_GATES", f"circuits(max_gates={max_gates})")
    if min_outputs > max_n * max_d:
        raise UsageError(f"circuits(min_outputs): at most max_n·max_d = {max_n * max_d} outputs fit, found {min_outputs}")
    if min_outputs > MAX_INPUT_CELLS:
        raise UsageError(f"circuits(min_outputs): expected at most MAX_INPUT_CELLS = {MAX_INPUT_CELLS} (hypothesis cannot "
                         f"draw more outputs per example), found {min_outputs}")
    return _circuits(max_n, max_d, max_gates, linear, allow_const, allow_sym, min_outputs)


def _coefficient_values(allow_sym: bool) -> tuple[Any, ...]:
    """The values :func:`coefficients` draws from, in its order (simplest first)."""
    base: tuple[Any, ...] = (0, 1, -1, 2, -3, Fraction(1, 2), Fraction(-2, 3))
    return (*base, sym("a"), sym("b"), sym("a") * 2 - 1) if allow_sym else base


@st.composite
def _circuits(draw: Any, max_n: int, max_d: int, max_gates: int, linear: bool, allow_const: bool, allow_sym: bool,
              min_outputs: int) -> Circuit:
    """Each gate is one list element of two draws, its kind and one integer holding its two node
    references and two coefficient indices, so that every element has the same shape (hypothesis
    deletes such elements readily; elements of different shapes it often keeps). A reference ``r``
    reads the node ``r mod (nodes so far)`` places back from the newest one, so a gate keeps reading
    the gate before it when an earlier, unrelated gate is deleted."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    nd = n * d
    span = nd + max_gates  # at least the number of nodes any gate or output may read
    kinds = ("lin",) if linear else (("lin", "mul", "const") if allow_const else ("lin", "mul"))
    values = _coefficient_values(allow_sym)
    c = len(values)
    rest = st.integers(0, span * span * c * c - 1)
    gates: list[Gate] = []
    for kind, code in draw(st.lists(st.tuples(st.sampled_from(kinds), rest), max_size=max_gates)):
        code, c2 = divmod(code, c)
        a, c1 = divmod(code, c)
        a, b = divmod(a, span)
        last = nd + len(gates) - 1  # the newest node
        if kind == "const":
            gates.append(Gate(Op.CONST, (), (values[c1],)))
        elif kind == "mul":
            gates.append(Gate(Op.MUL, (last - a % (last + 1), last - b % (last + 1)), ()))
        else:
            gates.append(Gate(Op.LIN, (last - a % (last + 1), last - b % (last + 1)), (values[c1], values[c2])))
    total = nd + len(gates)
    # one draw per output (hypothesis refuses a fixed-size list of thousands), shrinking toward fewer
    outs = draw(st.lists(st.integers(0, span - 1), min_size=min(min_outputs, nd), max_size=nd))
    return Circuit(n, d, tuple(gates), tuple(o % total for o in outs), "hypothesis")


MAX_INPUT_CELLS = 1024
"""The most entries :func:`rational_inputs` draws (32×32 passes hypothesis' health checks)."""


def rational_inputs(n: int, d: int) -> st.SearchStrategy[list[list[Fraction]]]:
    """An ``n×d`` array of small rationals; at most :data:`MAX_INPUT_CELLS` entries (hypothesis draws
    each one from a buffer of a few kilobytes: larger arrays cannot be generated) and at most
    :data:`symverify.ir.limits.MAX_INPUTS` (:class:`LimitError`, should a user lower it)."""
    n = _size(n, "rational_inputs(n)", 1)
    d = _size(d, "rational_inputs(d)", 1)
    limits.check(n * d, "MAX_INPUTS", f"rational_inputs({n}, {d})")
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
    inner sizes up to ``pad`` larger, layers in ``modes``). Bad arguments raise :class:`UsageError` here;
    ``max_n·max_d`` over :data:`symverify.ir.limits.MAX_INPUTS` or an inner state
    ``(max_n+pad)·(max_d+pad)`` over :data:`~symverify.ir.limits.MAX_CELLS` (models ``verify`` would
    refuse) raise :class:`LimitError`.

    Layers and each grid's nonzero weights are drawn as lists (a weight as its cell and value), so
    large sizes draw as cheaply as small ones and a failing example shrinks toward fewer layers,
    fewer nonzero weights and smaller sizes."""
    max_n = _size(max_n, "models(max_n)", 1)
    max_d = _size(max_d, "models(max_d)", 1)
    max_layers = _size(max_layers, "models(max_layers)", 0)
    pad = _size(pad, "models(pad)", 0)
    if isinstance(modes, str) or not isinstance(modes, (tuple, list)) or not modes:
        raise UsageError(f"models(modes): expected a non-empty tuple of modes ('causal', 'cyclic'), found {safe_repr(modes, 40)}")
    try:
        chosen = tuple(Mode(m) for m in modes)
    except ValueError:
        raise UsageError(f"models(modes): expected modes among 'causal', 'cyclic', found {safe_repr(modes, 40)}") from None
    limits.check(max_n * max_d, "MAX_INPUTS", f"models(max_n={max_n}, max_d={max_d})")
    limits.check((max_n + pad) * (max_d + pad), "MAX_CELLS",
                 f"models(max_n={max_n}, max_d={max_d}, pad={pad}): the inner state (max_n+pad)·(max_d+pad)")
    return _models(max_n, max_d, max_layers, pad, chosen)


@st.composite
def _grid(draw: Any, rows: int, cols: int) -> Grid:
    """A ``rows×cols`` grid of zeros with a few cells set to 1, −1 or 2 (a later draw of a cell wins)."""
    cell = st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1), st.sampled_from([1, -1, 2]))
    return Grid.from_cells(rows, cols, {(i, j): v for i, j, v in draw(st.lists(cell, max_size=rows * cols))})


@st.composite
def _models(draw: Any, max_n: int, max_d: int, max_layers: int, pad: int, modes: tuple[Mode, ...]) -> Model:
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    nn = n + draw(st.integers(0, pad))
    dd = d + draw(st.integers(0, pad))
    layer = st.builds(Layer, _grid(dd, dd), _grid(nn, dd), _grid(nn, dd), _grid(nn, dd), st.sampled_from(modes))
    return Model(n, d, nn, dd, tuple(draw(st.lists(layer, max_size=max_layers))), "hypothesis")
