"""One interpreter for circuits and BaseConv models, generic over the number ring.

The same code computes exact rational outputs, canonical polynomials, values mod p and certified
degree bounds: a :class:`Ring` supplies ``zero``, ``coerce`` (IR scalar → ring element) and
``reduce`` (applied to each freshly computed value), and the interpreter uses only ``+`` and
``*``. Semantics follow docs/theory.md §1–§2 exactly. Models run through the one layer loop of
:mod:`symverify.kernel.semantics.layer`, with :class:`RingArithmetic` (nested lists of ring values, cell
by cell) as its backend.

Every entry point takes an optional ``check`` (:mod:`symverify.deadline`): a callable that raises
:class:`~symverify.deadline.DeadlineExceededError` once a deadline has passed. It is called before
every layer and every :data:`~symverify.deadline.CHECK_EVERY` gates or so inside a layer's cells
(counted in multiply-adds), so a pass over any model or circuit stops within a few milliseconds
of its deadline, one ring operation excepted (a single huge polynomial product cannot be
interrupted). ``check=None`` costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, NamedTuple, TypeVar

from symverify.deadline import CHECK_EVERY, Check
from symverify.errors import LimitError, ShapeError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, canonical, is_zero, plain_items, unordered
from symverify.kernel.semantics.layer import Shape, run_layer, run_layers, run_model
from symverify.kernel.semantics.rings import Ring

__all__ = ["Ring", "RingArithmetic", "RingLayer", "check_input", "eval_circuit_nodes", "eval_circuit", "eval_layer", "eval_layers", "eval_model",
           "embed", "crop"]

T = TypeVar("T")
State = list[list[Any]]


def eval_circuit_nodes(c: Circuit, inputs: Sequence[Any], ring: Ring, check: Check | None = None) -> list[Any]:
    """Values of every node (inputs first, then one per gate); ``check`` runs every
    :data:`~symverify.deadline.CHECK_EVERY` gates. A list or tuple subclass is read as the values it
    stores (its own length and iteration could disagree); a mapping, set, str or unsized iterable is a
    :class:`ShapeError`."""
    if type(inputs) is not list and unordered(inputs, sized=True):
        raise ShapeError(f"circuit input: expected a sequence of n·d = {c.num_inputs} values, found {type(inputs).__name__}")
    vals = list(plain_items(inputs))
    if len(vals) != c.num_inputs:
        raise ShapeError(f"circuit input: expected n·d = {c.num_inputs} values, found {len(vals)}")
    co, red = ring.coerce, ring.reduce
    gates = c.gates
    step = CHECK_EVERY if check is not None else max(len(gates), 1)
    try:
        _gates(gates, vals, co, red, ring, step, check)
    except LimitError as e:  # a ring's size guard (FractionRing.reduce): name the gate
        k = len(vals) - c.num_inputs
        g = gates[k]
        of = f" of nodes {', '.join(f'%{a}' for a in g.args)}" if g.args else ""
        raise LimitError(f"evaluating gate {k} (node %{len(vals)}, {g.op.name.lower()}{of})"
                         f"{' of ' + c.name if c.name else ''}: {e}") from None
    return vals


def _gates(gates: Sequence[Any], vals: list[Any], co: Any, red: Any, ring: Ring, step: int, check: Check | None) -> None:
    """The gate loop of :func:`eval_circuit_nodes`: appends each gate's value to ``vals``."""
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


def eval_circuit(c: Circuit, u: Sequence[Sequence[Any]], ring: Ring, check: Check | None = None) -> State:
    """The circuit's ``n×d`` output: outputs row-major, the remaining entries zero."""
    u = check_input(u, c.n, c.d, "circuit")
    vals = eval_circuit_nodes(c, [x for row in u for x in row], ring, check)
    flat = [vals[o] for o in c.outputs] + [ring.zero] * (c.num_inputs - len(c.outputs))
    return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)]


def check_input(u: Sequence[Sequence[Any]], n: int, d: int, what: str) -> Sequence[Sequence[Any]]:
    """``u`` is ``n`` rows of ``d`` values, each row a sequence in order (a dict row would read as its
    keys, a str as its characters): else :class:`ShapeError`. Returns ``u`` as the caller must read
    it: a ``list`` or ``tuple`` subclass (``u`` or a row) as the items it stores (``plain_items``),
    since its length, iteration and indexing could disagree between this check and the evaluation."""
    if unordered(u, sized=True):
        raise ShapeError(f"{what} input: expected shape {n}×{d}, a nested list (rows of values), found {type(u).__name__} {str(u)[:40]}")
    given = u  # the error below names what was passed, not the list read from it
    u = [plain_items(row) for row in plain_items(u)]
    if any(unordered(row, sized=True) for row in u):  # a dict row would read as its keys
        raise ShapeError(f"{what} input: expected shape {n}×{d}, a nested list (rows of values), found {type(given).__name__} {str(given)[:40]}")
    if len(u) != n or any(len(row) != d for row in u):
        found = f"{len(u)}×{len(u[0]) if len(u) else 0}" if all(len(r) == len(u[0]) for r in u) else "a ragged array"
        raise ShapeError(f"{what} input: expected shape {n}×{d} (n rows of d values), found {found}")
    return u


def _columns(g: Grid, co: Callable[[Scalar], Any], dd: int) -> list[dict[int, Any]]:
    """Nonzero entries of an N'×d' grid, per column: ``cols[q][i] = coerce(g[i, q])``. Each distinct
    value is coerced once, keyed by ``(type, value)`` of its canonical form (:func:`canonical`: a
    grid's values are canonical; any other is read as the plain value it stores, or refused)."""
    cols: list[dict[int, Any]] = [{} for _ in range(dd)]
    cache: dict[Any, Any] = {}
    for (i, q), v in g.nonzero().items():
        if type(v) is not int:
            v = canonical(v, "grid value")
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


_Column = tuple[int, Sequence[int], list[tuple[int, Any]], list[tuple[int, Any]], dict[int, Any], dict[int, Any]]
"""``(q, rows, w, taps, b1, b2)``: channel ``q`` of a layer where neither branch is identically
zero, its weights coerced: ``w`` the nonzero ``(p, W[p, q])``, ``taps`` the nonzero
``(k, h[k, q])``, ``b1``/``b2`` the nonzero biases by row. ``rows``: the rows whose output may be
nonzero (every row when the filter has a tap, else the rows of ``b2``; for rings with
``falsy_is_zero``, only rows of ``b1`` when the ``W`` column is zero). A plain tuple: compiled
models have hundreds of layers of a few cells, where building a richer object per column shows."""

Cells = Iterator[tuple[int, _Column, Any]]
"""The convolution branch of :class:`RingArithmetic`: a lazy stream of ``(i, column, value)``."""

Projection = Callable[[int, _Column], Any]
"""The projection branch of :class:`RingArithmetic`: its value at a cell, computed when asked."""


class RingLayer(NamedTuple):
    """A layer prepared for :class:`RingArithmetic`: its live columns (see :data:`_Column`)."""

    inner_n: int
    inner_d: int
    cyclic: bool
    columns: tuple[_Column, ...]


@dataclass(frozen=True)
class RingArithmetic:
    """The layer ``(u·W + b1) ⊙ (h ⊛ u + b2)`` (docs/theory.md §1.1) for :mod:`symverify.kernel.semantics.layer`,
    on nested lists of ``ring`` values, cell by cell.

    Work is skipped only where a factor is exactly zero: a column with no filter taps and no
    ``b2`` (or no ``W`` column and no ``b1``); and, for rings that declare
    ``falsy_is_zero = True`` (exact numbers, residues, polynomials), a zero source value or a zero
    convolution value (then the cell's projection is not computed). Rings whose elements have no
    usable truth value (z3 terms, degree bounds) take every term. That flag is the only
    difference between the two; both run this one code.

    Both branches are lazy: the convolution is a stream of cells and the projection a function
    of the cell, and :meth:`combine` computes one cell's convolution, then its projection, then
    their product before moving on. So a cell's two factors live only until their product (two
    whole states at a time, as the memory guard assumes) and the ring sees its operations cell by
    cell, columns in order. ``check`` runs every :data:`~symverify.deadline.CHECK_EVERY`
    multiply-adds or so (see the module docstring).
    """

    ring: Ring
    check: Check | None = None

    def prepare(self, layer: Layer) -> RingLayer:
        """The layer's live columns, weights coerced into the ring."""
        nn, dd = layer.inner_n, layer.inner_d
        co, skip = self.ring.coerce, self.ring.falsy_is_zero
        w_cols: list[list[tuple[int, Any]]] = [[] for _ in range(dd)]
        for (p, q), w in layer.W.nonzero().items():
            w_cols[q].append((p, co(w)))
        taps: list[list[tuple[int, Any]]] = [[] for _ in range(dd)]
        for (k, q), w in layer.h.nonzero().items():
            taps[q].append((k, co(w)))
        b1c, b2c = _columns(layer.b1, co, dd), _columns(layer.b2, co, dd)
        columns = []
        for q in range(dd):
            wq, tq, b1q, b2q = w_cols[q], taps[q], b1c[q], b2c[q]
            if (not tq and not b2q) or (not wq and not b1q):
                continue  # one branch is identically zero in this column
            rows: Sequence[int] = range(nn) if tq else sorted(b2q)
            if skip and not wq:
                rows = [i for i in rows if i in b1q]
            columns.append((q, rows, wq, tq, b1q, b2q))
        return RingLayer(nn, dd, layer.mode is Mode.CYCLIC, tuple(columns))

    def convolve(self, plan: RingLayer, u: State) -> Cells | None:
        """``(h ⊛ u + b2)[i, q]`` over the live cells, column by column, as a lazy stream of
        ``(i, column, value)`` (nonzero values only, for rings with ``falsy_is_zero``); ``check``
        runs between blocks of cells. None when no column is live."""
        return self._convolve(plan, u) if plan.columns else None

    def _convolve(self, plan: RingLayer, u: State) -> Cells:
        zero, skip, check = self.ring.zero, self.ring.falsy_is_zero, self.check
        nn, cyclic = plan.inner_n, plan.cyclic
        work = 0
        for col in plan.columns:
            q, rows, w, taps, _, b2 = col
            work, blocks = _blocks(rows, len(taps) + len(w) + 1, work, check)
            for block in blocks:
                for i in block:
                    conv = zero
                    for k, hv in taps:
                        src = i - k
                        if src < 0:
                            if not cyclic:
                                continue
                            src %= nn
                        x = u[src][q]
                        if skip and not x:
                            continue
                        conv = conv + hv * x
                    if i in b2:
                        conv = conv + b2[i]
                    if skip and not conv:
                        continue
                    yield i, col, conv

    def project(self, plan: RingLayer, u: State, conv: Cells) -> Projection:
        """``(u·W + b1)[i, q]`` as a function of the cell ``(i, column)``, computed when called
        (:meth:`combine` calls it at the cells of ``conv`` only)."""
        zero, skip = self.ring.zero, self.ring.falsy_is_zero

        def at(i: int, col: _Column) -> Any:
            _, _, w, _, b1, _ = col
            proj = zero
            row = u[i]
            for p, wv in w:
                x = row[p]
                if skip and not x:
                    continue
                proj = proj + x * wv
            if i in b1:
                proj = proj + b1[i]
            return proj

        return at

    def combine(self, plan: RingLayer, u: State, proj: Projection | None, conv: Cells | None) -> State:
        """The new state: ``reduce(proj·conv)`` at each cell of the convolution stream (its
        projection computed there, after its convolution), zero elsewhere."""
        zero, red = self.ring.zero, self.ring.reduce
        out: State = list(map(list.copy, repeat([zero] * plan.inner_d, plan.inner_n)))
        if proj is not None and conv is not None:
            for i, col, c in conv:
                out[i][col[0]] = red(proj(i, col) * c)
        return out

    def embed(self, u: Sequence[Sequence[Any]], shape: Shape) -> State:
        return embed(u, shape.inner_n, shape.inner_d, self.ring.zero)

    def crop(self, state: State, shape: Shape) -> State:
        return crop(state, shape.n, shape.d)

    def retire(self, old: State, new: State) -> None:
        return None


def eval_layer(layer: Layer, u: State, ring: Ring, check: Check | None = None) -> State:
    """``(u·W + b1) ⊙ (h ⊛ u + b2)`` on an ``N'×d'`` state (docs/theory.md §1.1), in ``ring``
    (:class:`RingArithmetic` under :func:`~symverify.kernel.semantics.layer.run_layer`).

    Work is skipped only where a factor is exactly zero (see :class:`RingArithmetic`). ``check``
    runs every :data:`~symverify.deadline.CHECK_EVERY` multiply-adds or so (see the module
    docstring).
    """
    arith = RingArithmetic(ring, check)
    return run_layer(arith.prepare(layer), u, arith)


def eval_layers(layers: Sequence[Layer], state: State, ring: Ring, check: Check | None = None) -> State:
    """Apply ``layers`` in order; ``check`` runs before every layer and inside each (see :func:`eval_layer`)."""
    return run_layers(layers, state, RingArithmetic(ring, check), check)


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
    """The model's ``N×d`` output (embed, apply every layer, crop; docs/theory.md §1.2); ``check`` as in
    :func:`eval_layers`."""
    u = check_input(u, m.n, m.d, "model")
    at = [0]

    def layers() -> Iterator[Layer]:
        for at[0], layer in enumerate(m.layers):
            yield layer

    try:
        return run_model(m, layers(), u, RingArithmetic(ring, check), check)
    except LimitError as e:  # a ring's size guard (FractionRing.reduce): name the layer
        raise LimitError(f"evaluating layer {at[0]} of the model{' ' + m.name if m.name else ''}: {e}") from None
