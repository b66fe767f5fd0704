"""One interpreter for circuits and BaseConv models, generic over the number ring.

The same code computes exact rational outputs, canonical polynomials, values mod p and certified
degree bounds: a :class:`Ring` supplies ``zero``, ``coerce`` (IR scalar → ring element) and
``reduce`` (applied to each freshly computed value), and the interpreter uses only ``+`` and
``*``. Semantics follow THEORY §1–§2 exactly.

Every entry point takes an optional ``check`` (:mod:`symverify.deadline`): a callable that raises
:class:`~symverify.deadline.DeadlineExceededError` once a deadline has passed. It is called before
every layer and every :data:`~symverify.deadline.CHECK_EVERY` gates or so inside a layer's cells
(counted in multiply-adds), so a pass over any model or circuit stops within a few milliseconds
of its deadline, one ring operation excepted (a single huge polynomial product cannot be
interrupted). ``check=None`` costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from symverify.deadline import CHECK_EVERY, Check
from symverify.errors import ShapeError
from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.circuit import Circuit, Op
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar, is_zero
from symverify.semantics.rings import Ring

__all__ = ["Ring", "eval_circuit_nodes", "eval_circuit", "eval_layer", "eval_layers", "eval_model", "embed", "crop"]

T = TypeVar("T")
State = list[list[Any]]


def eval_circuit_nodes(c: Circuit, inputs: Sequence[Any], ring: Ring, check: Check | None = None) -> list[Any]:
    """Values of every node (inputs first, then one per gate); ``check`` runs every
    :data:`~symverify.deadline.CHECK_EVERY` gates."""
    if len(inputs) != c.num_inputs:
        raise ShapeError(f"circuit input: expected n·d = {c.num_inputs} values, found {len(inputs)}")
    vals = list(inputs)
    co, red = ring.coerce, ring.reduce
    gates = c.gates
    step = CHECK_EVERY if check is not None else max(len(gates), 1)
    for start in range(0, len(gates), step):
        if check is not None:
            check()
        for g in gates[start : start + step]:
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


def eval_circuit(c: Circuit, u: Sequence[Sequence[Any]], ring: Ring, check: Check | None = None) -> State:
    """The circuit's ``n×d`` output: outputs row-major, the remaining entries zero."""
    _check_input(u, c.n, c.d, "circuit")
    vals = eval_circuit_nodes(c, [x for row in u for x in row], ring, check)
    flat = [vals[o] for o in c.outputs] + [ring.zero] * (c.num_inputs - len(c.outputs))
    return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)]


def _check_input(u: Sequence[Sequence[Any]], n: int, d: int, what: str) -> None:
    if not hasattr(u, "__len__") or any(not hasattr(row, "__len__") or isinstance(row, str) for row in u):
        raise ShapeError(f"{what} input: expected an {n}×{d} nested list (rows of values), found {type(u).__name__} {str(u)[:40]}")
    if len(u) != n or any(len(row) != d for row in u):
        found = f"{len(u)}×{len(u[0]) if len(u) else 0}" if all(len(r) == len(u[0]) for r in u) else "a ragged array"
        raise ShapeError(f"{what} input: expected an {n}×{d} array, found {found}")


def _columns(g: Grid, co: Callable[[Scalar], Any], dd: int) -> list[dict[int, Any]]:
    """Nonzero entries of an N'×d' grid, per column: ``cols[q][i] = coerce(g[i, q])``."""
    cols: list[dict[int, Any]] = [{} for _ in range(dd)]
    cache: dict[Any, Any] = {}
    for (i, q), v in g.nonzero().items():
        key = (type(v), v)
        if key not in cache:
            cache[key] = co(v)
        cols[q][i] = cache[key]
    return cols


def _blocks(rows: Any, per_cell: int, work: int, check: Check | None) -> tuple[int, Any]:
    """``(work carried over, row blocks)`` for one column: with ``check``, once about
    :data:`CHECK_EVERY` multiply-adds have accumulated (this column's ``len(rows)·per_cell``
    included), the rows come in slices of that size and ``check`` runs before each slice."""
    if check is None:
        return 0, (rows,)
    work += len(rows) * per_cell
    if work < CHECK_EVERY:
        return work, (rows,)
    step = max(1, CHECK_EVERY // per_cell)
    return 0, _checked_slices(rows, step, check)


def _checked_slices(rows: Any, step: int, check: Check) -> Any:
    for start in range(0, len(rows), step):
        check()
        yield rows[start : start + step]


def eval_layer(layer: Layer, u: State, ring: Ring, check: Check | None = None) -> State:
    """``(u·W + b1) ⊙ (h ⊛ u + b2)`` on an ``N'×d'`` state (THEORY §1.1).

    Work is skipped only where a factor is exactly zero: a column with no filter taps and no
    ``b2`` (or no ``W`` column and no ``b1``); and, for rings that declare
    ``falsy_is_zero = True`` (exact numbers, residues, polynomials), a zero source value or a zero
    convolution branch. ``check`` runs every :data:`~symverify.deadline.CHECK_EVERY`
    multiply-adds or so (see the module docstring).
    """
    nn, dd = layer.inner_n, layer.inner_d
    co, red, zero = ring.coerce, ring.reduce, ring.zero
    w_cols: list[list[tuple[int, Any]]] = [[] for _ in range(dd)]
    for (p, q), w in layer.W.nonzero().items():
        w_cols[q].append((p, co(w)))
    taps: list[list[tuple[int, Any]]] = [[] for _ in range(dd)]
    for (k, q), w in layer.h.nonzero().items():
        taps[q].append((k, co(w)))
    b1c, b2c = _columns(layer.b1, co, dd), _columns(layer.b2, co, dd)
    cyclic = layer.mode is Mode.CYCLIC
    if not ring.falsy_is_zero:
        return _eval_layer_plain(u, nn, dd, w_cols, taps, b1c, b2c, cyclic, zero, red, check)
    out: State = [[zero] * dd for _ in range(nn)]
    work = 0
    for q in range(dd):
        wq, tq, b1q, b2q = w_cols[q], taps[q], b1c[q], b2c[q]
        if (not tq and not b2q) or (not wq and not b1q):
            continue  # one branch is identically zero in this column
        rows: Any = range(nn) if tq else sorted(b2q)
        if not wq:
            rows = [i for i in rows if i in b1q]
        work, blocks = _blocks(rows, len(tq) + len(wq) + 1, work, check)
        for block in blocks:
            for i in block:
                conv = zero
                for k, hv in tq:
                    src = i - k
                    if src < 0:
                        if not cyclic:
                            continue
                        src %= nn
                    x = u[src][q]
                    if x:
                        conv = conv + hv * x
                if i in b2q:
                    conv = conv + b2q[i]
                if not conv:
                    continue
                proj = zero
                row = u[i]
                for p, wv in wq:
                    x = row[p]
                    if x:
                        proj = proj + x * wv
                if i in b1q:
                    proj = proj + b1q[i]
                out[i][q] = red(proj * conv)
    return out


def _eval_layer_plain(u: State, nn: int, dd: int, w_cols: list[list[tuple[int, Any]]], taps: list[list[tuple[int, Any]]],
                      b1c: list[dict[int, Any]], b2c: list[dict[int, Any]], cyclic: bool, zero: Any, red: Any,
                      check: Check | None = None) -> State:
    """The same layer for rings whose elements have no usable truth value (z3 terms, degrees)."""
    out: State = [[zero] * dd for _ in range(nn)]
    work = 0
    for q in range(dd):
        wq, tq, b1q, b2q = w_cols[q], taps[q], b1c[q], b2c[q]
        if (not tq and not b2q) or (not wq and not b1q):
            continue
        rows: Any = range(nn) if tq else sorted(b2q)
        work, blocks = _blocks(rows, len(tq) + len(wq) + 1, work, check)
        for block in blocks:
            for i in block:
                conv = zero
                for k, hv in tq:
                    src = i - k
                    if src >= 0 or cyclic:
                        conv = conv + hv * u[src % nn][q]
                if i in b2q:
                    conv = conv + b2q[i]
                proj = zero
                for p, wv in wq:
                    proj = proj + u[i][p] * wv
                if i in b1q:
                    proj = proj + b1q[i]
                out[i][q] = red(proj * conv)
    return out


def eval_layers(layers: Sequence[Layer], state: State, ring: Ring, check: Check | None = None) -> State:
    """Apply ``layers`` in order; ``check`` runs before every layer and inside each (see :func:`eval_layer`)."""
    for layer in layers:
        if check is not None:
            check()
        state = eval_layer(layer, state, ring, check)
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


def eval_model(m: Model, u: Sequence[Sequence[Any]], ring: Ring, check: Check | None = None) -> State:
    """The model's ``N×d`` output (embed, apply every layer, crop; THEORY §1.2); ``check`` as in
    :func:`eval_layers`."""
    _check_input(u, m.n, m.d, "model")
    state = embed(u, m.inner_n, m.inner_d, ring.zero)
    return crop(eval_layers(m.layers, state, ring, check), m.n, m.d)
