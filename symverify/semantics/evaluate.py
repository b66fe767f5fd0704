"""One interpreter for circuits and BaseConv models, generic over the number ring.

The same code computes exact rational outputs, canonical polynomials, values mod p and certified
degree bounds: a :class:`Ring` supplies ``zero``, ``coerce`` (IR scalar → ring element) and
``reduce`` (applied to each freshly computed value), and the interpreter uses only ``+`` and
``*``. Semantics follow THEORY §1–§2 exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from symverify.errors import ShapeError
from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.circuit import Circuit, Op
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar, is_zero

__all__ = ["Ring", "eval_circuit_nodes", "eval_circuit", "eval_layer", "eval_layers", "eval_model", "embed", "crop"]

T = TypeVar("T")
State = list[list[Any]]


class Ring(Protocol):
    """What the interpreter needs from a number ring."""

    zero: Any

    def coerce(self, x: Scalar) -> Any: ...

    def reduce(self, x: Any) -> Any: ...


def eval_circuit_nodes(c: Circuit, inputs: Sequence[Any], ring: Ring) -> list[Any]:
    """Values of every node (inputs first, then one per gate)."""
    if len(inputs) != c.num_inputs:
        raise ShapeError(f"circuit input: expected n·d = {c.num_inputs} values, found {len(inputs)}")
    vals = list(inputs)
    co, red = ring.coerce, ring.reduce
    for g in c.gates:
        if g.op is Op.MUL:
            v = vals[g.args[0]] * vals[g.args[1]]
        elif g.op is Op.LIN:
            (a, b), (al, be) = g.args, g.coeffs
            if is_zero(be):
                v = co(al) * vals[a] if not is_zero(al) else ring.zero
            elif is_zero(al):
                v = co(be) * vals[b]
            else:
                v = co(al) * vals[a] + co(be) * vals[b]
        else:
            v = co(g.coeffs[0])
        vals.append(red(v))
    return vals


def eval_circuit(c: Circuit, u: Sequence[Sequence[Any]], ring: Ring) -> State:
    """The circuit's ``n×d`` output: outputs row-major, the remaining entries zero."""
    _check_input(u, c.n, c.d, "circuit")
    vals = eval_circuit_nodes(c, [x for row in u for x in row], ring)
    flat = [vals[o] for o in c.outputs] + [ring.zero] * (c.num_inputs - len(c.outputs))
    return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)]


def _check_input(u: Sequence[Sequence[Any]], n: int, d: int, what: str) -> None:
    if len(u) != n or any(len(row) != d for row in u):
        found = f"{len(u)}×{len(u[0]) if len(u) else 0}" if all(len(r) == len(u[0]) for r in u) else "a ragged array"
        raise ShapeError(f"{what} input: expected an {n}×{d} array, found {found}")


def _dense(g: Grid, co: Callable[[Scalar], Any]) -> list[list[Any]]:
    cache: dict[Any, Any] = {}

    def c(x: Scalar) -> Any:
        k = (type(x), x)
        if k not in cache:
            cache[k] = co(x)
        return cache[k]

    return [[c(v) for v in row] for row in g.to_rows()]


def eval_layer(layer: Layer, u: State, ring: Ring) -> State:
    """``(u·W + b1) ⊙ (h ⊛ u + b2)`` on an ``N'×d'`` state (THEORY §1.1)."""
    nn, dd = layer.inner_n, layer.inner_d
    co, red, zero = ring.coerce, ring.reduce, ring.zero
    w_cols: list[list[tuple[int, Any]]] = [[] for _ in range(dd)]
    for (p, q), w in layer.W.nonzero().items():
        w_cols[q].append((p, co(w)))
    taps: list[list[tuple[int, Any]]] = [[] for _ in range(dd)]
    for (k, q), w in layer.h.nonzero().items():
        taps[q].append((k, co(w)))
    b1d = _dense(layer.b1, co) if not layer.b1.is_zero() else None
    b2d = _dense(layer.b2, co) if not layer.b2.is_zero() else None
    cyclic = layer.mode is Mode.CYCLIC
    out: State = [[zero] * dd for _ in range(nn)]
    for q in range(dd):
        wq, tq = w_cols[q], taps[q]
        for i in range(nn):
            conv = zero
            for k, hv in tq:
                src = i - k
                if src < 0:
                    if not cyclic:
                        continue
                    src %= nn
                conv = conv + hv * u[src][q]
            if b2d is not None:
                conv = conv + b2d[i][q]
            if not tq and b2d is None:
                continue
            proj = zero
            row = u[i]
            for p, wv in wq:
                proj = proj + row[p] * wv
            if b1d is not None:
                proj = proj + b1d[i][q]
            out[i][q] = red(proj * conv)
    return out


def eval_layers(layers: Sequence[Layer], state: State, ring: Ring) -> State:
    for layer in layers:
        state = eval_layer(layer, state, ring)
    return state


def embed(u: Sequence[Sequence[Any]], inner_n: int, inner_d: int, zero: Any) -> State:
    """Zero-pad ``u`` into the top-left corner of an ``N'×d'`` state."""
    state: State = [[zero] * inner_d for _ in range(inner_n)]
    for i, row in enumerate(u):
        for j, x in enumerate(row):
            state[i][j] = x
    return state


def crop(state: State, n: int, d: int) -> State:
    return [row[:d] for row in state[:n]]


def eval_model(m: Model, u: Sequence[Sequence[Any]], ring: Ring) -> State:
    """The model's ``N×d`` output (embed, apply every layer, crop; THEORY §1.2)."""
    _check_input(u, m.n, m.d, "model")
    state = embed(u, m.inner_n, m.inner_d, ring.zero)
    return crop(eval_layers(m.layers, state, ring), m.n, m.d)
