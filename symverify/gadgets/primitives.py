"""The one- and two-layer BaseConv primitives (docs/appendix-h.md §2.3, ``lmm:primitives``, ``prim-shift``, ``prim-add``).

Every function returns a :class:`~symverify.kernel.gadgets.fragment.Fragment` on an ``N'×d'`` state
(rows = positions, columns = channels). A layer is ``y = (u·W + b1) ⊙ (h ⊛ u + b2)``; ``e_s`` is
the impulse at lag s (``h[k, j] = 1`` iff ``k = s``), ``1`` the all-ones matrix. The weights each
primitive uses are stated in its docstring; weights may be symbolic (:class:`~symverify.kernel.ir.scalar.Sym`),
which is how "for all W / h / B / R" statements are proved.

The shifts and the running sum are built from their parametric definitions
(:mod:`symverify.parametric.library`, proved for all sizes by :func:`symverify.prove_forall`).

Errata followed (docs/appendix-h.md §2.3, docs/theory.md §4): ``shift_down(s)`` uses the kernel ``X^s`` (not
``X^{s+1}``); ``shift_up(s)`` is the one-layer cyclic construction (the printed three-layer proof
relies on "the identity filter reverses the sequence", which is false).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet

from symverify.errors import IRError, ShapeError
from symverify.ir import limits
from symverify.ir.bigint import show_int
from symverify.kernel.gadgets.fragment import CellSet, Fragment, Spec, SpecBuilder, all_cells, block
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero
from symverify.kernel.parametric.concrete import instantiate
from symverify.parametric import definitions

__all__ = [
    "linear_map",
    "identity",
    "affine_map",
    "convolution",
    "fixed_gate",
    "constant",
    "shift_down",
    "shift_up",
    "cyclic_shift",
    "running_add",
    "move_rows",
    "move_cols",
    "generic_layer",
    "impulse",
    "as_mode",
]  # conv_terms is internal (called per cell with the gadgets' own grids): importable, not checked


def impulse(inner_n: int, inner_d: int, lag: int, cols: Sequence[int] | None = None) -> Grid:
    """The filter ``e_lag`` on the columns ``cols`` (all by default) and 0 elsewhere: an
    ``inner_n × inner_d`` grid, so ``0 ≤ lag < inner_n`` and every column in ``[0, inner_d)``
    (else a :class:`ShapeError` naming the argument)."""
    _check_size(inner_n, inner_d, "impulse")
    _check_ints("impulse", lag=lag)
    if not 0 <= lag < inner_n:
        raise ShapeError(f"impulse: expected a lag with 0 ≤ lag < inner_n = {inner_n}, found {lag}")
    _check_index_list(cols, "impulse cols")
    if cols is not None and any(not 0 <= c < inner_d for c in cols):
        raise ShapeError(f"impulse cols: expected columns in [0, {inner_d}), found {list(cols)}")
    cs = range(inner_d) if cols is None else cols
    return Grid.from_cells(inner_n, inner_d, {(lag, c): 1 for c in cs})


def conv_terms(h: Grid, i: int, j: int, mode: Mode) -> list[tuple[Scalar, int]]:
    """``(h ⊛ u)[i, j] = Σ coeff·u[row, j]`` as ``(coeff, row)`` pairs (docs/theory.md §1.1)."""
    nn = h.rows
    out: list[tuple[Scalar, int]] = []
    for k in range(nn):
        hv = h.get(k, j)
        if is_zero(hv):
            continue
        src = i - k
        if src < 0:
            if mode is not Mode.CYCLIC:
                continue
            src %= nn
        out.append((hv, src))
    return out


def as_mode(mode: object, what: str) -> Mode:
    """``Mode(mode)`` with an :class:`IRError` that names the gadget instead of a ValueError."""
    try:
        return Mode(mode)
    except ValueError:
        raise IRError(f"{what}: expected mode 'causal' or 'cyclic', found {mode!r}") from None


def _check_size(inner_n: int, inner_d: int, what: str, names: tuple[str, str] = ("inner_n", "inner_d")) -> None:
    """Refuse a state size before anything is built: each of ``inner_n``, ``inner_d`` (called
    ``names`` in the message, the gadget's own arguments) must be a positive int
    (:class:`ShapeError`), and the ``N'·d'`` state at most :data:`symverify.ir.limits.MAX_CELLS`
    cells (:class:`~symverify.errors.LimitError` naming both arguments, their product and the
    limit): such a fragment could never be evaluated, verified or compiled, and building its
    interfaces and spec walks every cell."""
    for name, v in zip(names, (inner_n, inner_d)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ShapeError(f"{what}: expected a positive int {name}, found {v!r}")
    _check_state(inner_n, inner_d, what, names)


def _check_state(inner_n: int, inner_d: int, what: str, names: tuple[str, str] = ("inner_n", "inner_d")) -> None:
    """:class:`~symverify.errors.LimitError` when the ``inner_n × inner_d`` state has more than
    :data:`symverify.ir.limits.MAX_CELLS` cells (``names`` are the arguments the sizes came from)."""
    limits.check(inner_n * inner_d, "MAX_CELLS",
                 lambda: f"{what}: the N'×d' state {names[0]}·{names[1]} = {show_int(inner_n)}·{show_int(inner_d)}")


def _check_ints(what: str, **values: object) -> None:
    """Raise :class:`ShapeError` unless every value is an int (not a bool)."""
    for name, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool):
            raise ShapeError(f"{what}: expected an int {name}, found {v!r}")


def _check_index_list(xs: Sequence[int] | None, what: str) -> None:
    """Raise :class:`ShapeError` unless ``xs`` (when given) is a non-empty list of ints (not bools)."""
    if xs is None:
        return
    if not isinstance(xs, Sequence) or isinstance(xs, str) or not xs:
        raise ShapeError(f"{what}: expected a non-empty list of ints, found {xs!r}")
    for x in xs:
        if not isinstance(x, int) or isinstance(x, bool):
            raise ShapeError(f"{what}: expected a non-empty list of ints, found {list(xs)!r}")


def _check_grid(g: Grid, rows: int, cols: int, what: str) -> None:
    if not isinstance(g, Grid):
        raise IRError(f"{what}: expected a Grid, found {type(g).__name__}")
    if (g.rows, g.cols) != (rows, cols):
        raise ShapeError(f"{what}: expected shape {rows}×{cols}, found {g.rows}×{g.cols}")


CheckpointFn = Callable[[SpecBuilder, dict[tuple[int, int], int]], tuple[tuple[int, tuple[Cell, ...]], ...]]


def _frag(name: str, nn: int, dd: int, layers: Sequence[Layer], entry: CellSet, exit_cells: CellSet,
          exit_nodes_fn: Callable[[SpecBuilder], dict[tuple[int, int], int]], bound: int,
          checkpoints_fn: CheckpointFn | None = None) -> Fragment:
    """Assemble a fragment whose spec is ``exit_nodes_fn(builder) -> {cell: node}`` (built lazily).

    ``checkpoints_fn(builder, exit_nodes)`` may name inner states in terms of the same nodes.
    """

    def build() -> Spec:
        b = SpecBuilder(nn, dd)
        nodes = exit_nodes_fn(b)
        cps = checkpoints_fn(b, nodes) if checkpoints_fn is not None else ()
        return Spec(b.circuit(nodes, name), cps)

    return Fragment(name, nn, dd, tuple(layers), entry, exit_cells, {"layers": bound}, build)


# ---- row-local maps ------------------------------------------------------------------------


def linear_map(W: Grid, inner_n: int) -> Fragment:
    """``y = u·W`` in one layer: ``W``, ``b1 = 0``, ``h = 0``, ``b2 = 1`` (docs/appendix-h.md §2.3).

    >>> frag = linear_map(Grid.from_rows([[1, 2], [0, 1]]), 1)
    >>> frag.depth, sorted(frag.exit)
    (1, [(0, 0), (0, 1)])
    """
    if not isinstance(W, Grid):
        raise IRError(f"linear_map W: expected a Grid, found {type(W).__name__}")
    _check_grid(W, W.rows, W.rows, "linear_map W")
    dd = W.rows
    _check_size(inner_n, dd, "linear_map", ("inner_n", "W.rows"))
    layer = Layer(W, Grid.zeros(inner_n, dd), Grid.zeros(inner_n, dd), Grid.full(inner_n, dd, 1))
    cells = W.cells() if is_zero(W.fill) else {(p, q): W.get(p, q) for p in range(dd) for q in range(dd)}

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(i, q): b.affine([(cells.get((p, q), 0), b.cell(i, p)) for p in range(dd)]) for i in range(inner_n) for q in range(dd)}

    wcols = {q for (_, q), v in cells.items() if not is_zero(v)}
    return _frag("linear_map", inner_n, dd, [layer], all_cells(inner_n, dd), block(range(inner_n), wcols), spec, 1)


def identity(inner_n: int, inner_d: int) -> Fragment:
    """The identity (padding) layer: ``W = I``, ``b1 = 0``, ``h = 0``, ``b2 = 1`` (docs/appendix-h.md §2.3)."""
    _check_size(inner_n, inner_d, "identity")
    frag = linear_map(Grid.identity(inner_d), inner_n)
    return Fragment("identity", frag.inner_n, frag.inner_d, frag.layers, frag.entry, frag.exit, frag.bounds, frag.build_spec)


def affine_map(W: Grid, inner_n: int, bias: Grid | None = None, rows: Sequence[int] | None = None) -> Fragment:
    """``y[i] = u[i]·W + bias[i]`` on the rows ``rows`` (all by default) and 0 elsewhere, one layer.

    Weights: ``W``, ``b1 = bias``, ``h = 0``, ``b2 = 1`` on ``rows × live columns`` and 0 elsewhere,
    where a column is live in row i when W's column or ``bias[i]`` is nonzero there. This is the
    linear-map primitive with a constant (the constant primitive's ``b1``) and a positional gate on
    ``b2``; every nonzero weight matters, which the dense compiler's mutation tests rely on.
    """
    if not isinstance(W, Grid):  # before its shape is read
        raise IRError(f"affine_map W: expected a Grid, found {type(W).__name__}")
    _check_grid(W, W.rows, W.rows, "affine_map W")
    dd = W.rows
    _check_size(inner_n, dd, "affine_map", ("inner_n", "W.rows"))
    bias = Grid.zeros(inner_n, dd) if bias is None else bias
    _check_grid(bias, inner_n, dd, "affine_map bias")
    if rows is not None and (isinstance(rows, (str, bytes)) or not isinstance(rows, (Sequence, AbstractSet))
                             or any(not isinstance(r, int) or isinstance(r, bool) for r in rows)):
        # an iterator would be used up by this check (every row dropped), a mapping read as its keys
        raise ShapeError(f"affine_map rows: expected a list of ints, found {type(rows).__name__} {rows!r:.60}")
    rs = sorted(set(range(inner_n) if rows is None else rows))
    if any(not 0 <= r < inner_n for r in rs):
        raise ShapeError(f"affine_map rows: expected rows in [0, {inner_n}), found {rs}")
    bias_cells = bias.nonzero()
    stray = [c for c in bias_cells if c[0] not in set(rs)]
    if stray:
        raise IRError(f"affine_map bias: nonzero at cells {stray[:4]} outside the rows {rs}")
    wcells = W.nonzero()
    wcols = {q for _, q in wcells}
    live = {(i, q) for i in rs for q in range(dd) if q in wcols or (i, q) in bias_cells}
    b2 = Grid.from_cells(inner_n, dd, {c: 1 for c in live})
    layer = Layer(W, bias, Grid.zeros(inner_n, dd), b2)

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {
            (i, q): b.affine([(wcells.get((p, q), 0), b.cell(i, p)) for p in range(dd)], bias_cells.get((i, q), 0))
            for i, q in sorted(live)
        }

    return _frag("affine_map", inner_n, dd, [layer], all_cells(inner_n, dd), frozenset(live), spec, 1)


# ---- sequence-axis primitives ------------------------------------------------------------


def convolution(h: Grid, mode: Mode | str = Mode.CAUSAL) -> Fragment:
    """``y = h ⊛ u`` in one layer: ``W = 0``, ``b1 = 1``, ``h``, ``b2 = 0`` (docs/appendix-h.md §2.3)."""
    _check_grid(h, getattr(h, "rows", 0), getattr(h, "cols", 0), "convolution h")
    _check_size(h.rows, h.cols, "convolution", ("h.rows", "h.cols"))
    m = as_mode(mode, "convolution")
    nn, dd = h.rows, h.cols
    layer = Layer.make(nn, dd, b1=Grid.full(nn, dd, 1), h=h, mode=m)

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(i, j): b.affine([(c, b.cell(r, j)) for c, r in conv_terms(h, i, j, m)]) for i in range(nn) for j in range(dd)}

    live = frozenset((i, j) for i in range(nn) for j in range(dd) if conv_terms(h, i, j, m))
    return _frag(f"convolution[{m.value}]", nn, dd, [layer], all_cells(nn, dd), live, spec, 1)


def fixed_gate(B: Grid) -> Fragment:
    """``y = B ⊙ u`` (masks, positional scaling): ``W = 0``, ``b1 = B``, ``h = e_0``, ``b2 = 0``."""
    _check_grid(B, getattr(B, "rows", 0), getattr(B, "cols", 0), "fixed_gate B")
    _check_size(B.rows, B.cols, "fixed_gate", ("B.rows", "B.cols"))
    nn, dd = B.rows, B.cols
    layer = Layer.make(nn, dd, b1=B, h=impulse(nn, dd, 0))
    cells = B.nonzero()

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(i, j): b.affine([(v, b.cell(i, j))]) for (i, j), v in cells.items()}

    return _frag("fixed_gate", nn, dd, [layer], all_cells(nn, dd), frozenset(cells), spec, 1)


def constant(R: Grid) -> Fragment:
    """``y = R`` whatever the input: ``W = 0``, ``b1 = R``, ``h = 0``, ``b2 = 1`` (docs/appendix-h.md §2.3)."""
    _check_grid(R, getattr(R, "rows", 0), getattr(R, "cols", 0), "constant R")
    _check_size(R.rows, R.cols, "constant", ("R.rows", "R.cols"))
    nn, dd = R.rows, R.cols
    layer = Layer.make(nn, dd, b1=R, b2=Grid.full(nn, dd, 1))
    cells = R.nonzero()

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {c: b.const(v) for c, v in cells.items()}

    return _frag("constant", nn, dd, [layer], all_cells(nn, dd), frozenset(cells), spec, 1)


def _check_shift(inner_n: int, s: int, what: str) -> None:
    """Refuse a shift ``s`` that is not an int (a bool, float, numpy integer: named with its type)
    or not in ``[0, N')`` (:class:`IRError`)."""
    if not isinstance(s, int) or isinstance(s, bool):
        raise IRError(f"{what}: expected an int shift s with 0 ≤ s < N' = {inner_n}, found {type(s).__name__} {s!r}")
    if not 0 <= s < inner_n:
        raise IRError(f"{what}: expected a shift s with 0 ≤ s < N' = {inner_n}, found {s!r}")


def shift_down(inner_n: int, inner_d: int, s: int) -> Fragment:
    """``y[i] = u[i − s]`` for ``i ≥ s``, else 0 (causal): ``W = 0``, ``b1 = 1``, ``h = e_s``, ``b2 = 0``.

    The kernel is ``X^s`` (the printed proof's ``s + 1`` is an erratum, docs/appendix-h.md §2.3).
    """
    _check_size(inner_n, inner_d, "shift_down")
    _check_shift(inner_n, s, "shift_down")
    (layer,) = instantiate(definitions.shift_down(), {"N": inner_n, "d": inner_d, "s": s})

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(i, j): b.cell(i - s, j) for i in range(s, inner_n) for j in range(inner_d)}

    out = block(range(s, inner_n), range(inner_d))
    return _frag(f"shift_down({s})", inner_n, inner_d, [layer], all_cells(inner_n, inner_d), out, spec, 1)


def shift_up(inner_n: int, inner_d: int, s: int) -> Fragment:
    """``y[i] = u[i + s]`` for ``i + s < N'``, else 0 (cyclic mode, one layer).

    Weights: ``W = 0``, ``h = e_{(−s) mod N'}``, ``b1 = 1`` on rows ``i + s < N'`` (rows that
    wrapped around are zeroed), ``b2 = 0``. Causal stacks cannot do this (see :mod:`symverify.gadgets.causal`).
    """
    _check_size(inner_n, inner_d, "shift_up")
    _check_shift(inner_n, s, "shift_up")
    (layer,) = instantiate(definitions.shift_up(), {"N": inner_n, "d": inner_d, "s": s})

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(i, j): b.cell(i + s, j) for i in range(inner_n - s) for j in range(inner_d)}

    out = block(range(inner_n - s), range(inner_d))
    return _frag(f"shift_up({s})", inner_n, inner_d, [layer], all_cells(inner_n, inner_d), out, spec, 1)


def cyclic_shift(inner_n: int, inner_d: int, s: int) -> Fragment:
    """``y[i] = u[(i − s) mod N']`` (cyclic): ``W = 0``, ``b1 = 1``, ``h = e_{s mod N'}``, ``b2 = 0``.

    ``s`` may be negative (a cyclic shift up).
    """
    _check_size(inner_n, inner_d, "cyclic_shift")
    if not isinstance(s, int) or isinstance(s, bool):
        raise IRError(f"cyclic_shift: expected an int shift, found {s!r}")
    (layer,) = instantiate(definitions.cyclic_shift(), {"N": inner_n, "d": inner_d, "s": s % inner_n})

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(i, j): b.cell((i - s) % inner_n, j) for i in range(inner_n) for j in range(inner_d)}

    full = all_cells(inner_n, inner_d)
    return _frag(f"cyclic_shift({s})", inner_n, inner_d, [layer], full, full, spec, 1)


def running_add(n: int, inner_n: int, inner_d: int) -> Fragment:
    """``prim-add`` (the running sum): rows ``[0,n) = x``, ``[n,2n) = S`` ↦ rows ``[0,n) = 1``, ``[n,2n) = S + x``.

    Two causal layers (docs/appendix-h.md §2.3): layer 1 ``W = 0``, ``h = e_0 + e_n``, ``b1 = 1`` on rows
    ``[n, 2n)`` and 0 elsewhere, ``b2 = 0`` (rows ``[n,2n)`` become ``S + x``, the rest 0);
    layer 2 ``W = 0``, ``h = e_0``, ``b1 = 1``, ``b2 = 1`` on rows ``[0, n)`` (adds the all-ones
    block the stated output has). Needs ``N' ≥ 2n``; rows from ``2n`` on are ignored and end 0.
    """
    _check_size(inner_n, inner_d, "running_add")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or 2 * n > inner_n:
        raise ShapeError(f"running_add: expected 1 ≤ n and 2n ≤ N' = {inner_n}, found n = {n!r}")
    dd = inner_d
    l1, l2 = instantiate(definitions.running_add(), {"N": inner_n, "d": dd, "n": n})

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        out = {(i, j): b.affine([(1, b.cell(i, j)), (1, b.cell(i - n, j))]) for i in range(n, 2 * n) for j in range(dd)}
        one = b.const(1)
        out.update({(i, j): one for i in range(n) for j in range(dd)})
        return out

    def checkpoints(b: SpecBuilder, nodes: dict[tuple[int, int], int]) -> tuple[tuple[int, tuple[Cell, ...]], ...]:
        """After layer 1: rows [n, 2n) hold S + x, everything else is 0."""
        return ((1, tuple(Cell.node(i, j, nodes[(i, j)]) for i in range(n, 2 * n) for j in range(dd))),)

    out = block(range(2 * n), range(dd))
    return _frag(f"running_add({n})", inner_n, dd, [l1, l2], all_cells(inner_n, dd), out, spec, 2, checkpoints)


# ---- moving blocks -----------------------------------------------------------------------


def move_rows(inner_n: int, inner_d: int, src: int, dst: int, count: int, cols: Sequence[int] | None = None) -> Fragment:
    """Rows ``[dst, dst+count) ← [src, src+count)`` on the columns ``cols``; every other cell 0.

    One layer: ``W = 0``, ``h = e_{(dst − src) mod N'}`` on ``cols``, ``b1 = 1`` on the destination
    rows × ``cols``, ``b2 = 0``. Causal when moving down (``dst ≥ src``), cyclic when moving up.
    """
    _check_size(inner_n, inner_d, "move_rows")
    _check_ints("move_rows", src=src, dst=dst, count=count)
    _check_index_list(cols, "move_rows cols")
    if count < 1 or not (0 <= src and src + count <= inner_n and 0 <= dst and dst + count <= inner_n):
        raise ShapeError(f"move_rows: rows [{src}, {src + count}) → [{dst}, {dst + count}) do not fit in N' = {inner_n}")
    cs = tuple(range(inner_d)) if cols is None else tuple(sorted(set(cols)))
    if any(not 0 <= c < inner_d for c in cs):
        raise ShapeError(f"move_rows cols: expected columns in [0, {inner_d}), found {list(cs)}")
    delta = dst - src
    mode = Mode.CAUSAL if delta >= 0 else Mode.CYCLIC
    b1 = Grid.from_cells(inner_n, inner_d, {(dst + t, c): 1 for t in range(count) for c in cs})
    layer = Layer.make(inner_n, inner_d, b1=b1, h=impulse(inner_n, inner_d, delta % inner_n, cs), mode=mode)

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(dst + t, c): b.cell(src + t, c) for t in range(count) for c in cs}

    out = block(range(dst, dst + count), cs)
    return _frag(f"move_rows({src}→{dst}, {count})", inner_n, inner_d, [layer], all_cells(inner_n, inner_d), out, spec, 1)


def move_cols(inner_n: int, inner_d: int, src: int, dst: int, count: int, rows: Sequence[int] | None = None) -> Fragment:
    """Channels ``[dst, dst+count) ← [src, src+count)`` on the rows ``rows``; every other cell 0.

    One row-local layer: ``W[src+t, dst+t] = 1``, ``b1 = 0``, ``h = 0``, ``b2 = 1`` on ``rows ×``
    the destination channels.
    """
    _check_size(inner_n, inner_d, "move_cols")
    _check_ints("move_cols", src=src, dst=dst, count=count)
    _check_index_list(rows, "move_cols rows")
    if count < 1 or not (0 <= src and src + count <= inner_d and 0 <= dst and dst + count <= inner_d):
        raise ShapeError(f"move_cols: channels [{src}, {src + count}) → [{dst}, {dst + count}) do not fit in d' = {inner_d}")
    rs = tuple(range(inner_n)) if rows is None else tuple(sorted(set(rows)))
    if any(not 0 <= r < inner_n for r in rs):
        raise ShapeError(f"move_cols rows: expected rows in [0, {inner_n}), found {list(rs)}")
    W = Grid.from_cells(inner_d, inner_d, {(src + t, dst + t): 1 for t in range(count)})
    b2 = Grid.from_cells(inner_n, inner_d, {(r, dst + t): 1 for r in rs for t in range(count)})
    layer = Layer.make(inner_n, inner_d, W=W, b2=b2)

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        return {(r, dst + t): b.cell(r, src + t) for r in rs for t in range(count)}

    out = block(rs, range(dst, dst + count))
    return _frag(f"move_cols({src}→{dst}, {count})", inner_n, inner_d, [layer], all_cells(inner_n, inner_d), out, spec, 1)


# ---- the general layer ---------------------------------------------------------------------


def generic_layer(inner_n: int, inner_d: int, mode: Mode | str = Mode.CAUSAL, prefix: str = "L") -> Fragment:
    """One layer whose every ``W, b1, h, b2`` entry is its own symbol (``L.W[p][q]``, ``L.h[k][j]``, …).

    Its spec is docs/theory.md §1.1's formula ``(u·W + b1) ⊙ (h ⊛ u + b2)`` written out gate by gate, so
    statements proved about it hold for *all* weights (used for padding and the causal limit).
    """
    _check_size(inner_n, inner_d, "generic_layer")
    m = as_mode(mode, "generic_layer")
    nn, dd = inner_n, inner_d

    W, b1, h, b2 = (Grid.symbolic(f"{prefix}.{name}", r, c) for name, r, c in (("W", dd, dd), ("b1", nn, dd), ("h", nn, dd), ("b2", nn, dd)))
    layer = Layer(W, b1, h, b2, m)

    def spec(b: SpecBuilder) -> dict[tuple[int, int], int]:
        out = {}
        for i in range(nn):
            for q in range(dd):
                proj = b.affine([(W.get(p, q), b.cell(i, p)) for p in range(dd)], b1.get(i, q))
                conv = b.affine([(c, b.cell(r, q)) for c, r in conv_terms(h, i, q, m)], b2.get(i, q))
                out[(i, q)] = b.mul(proj, conv)
        return out

    full = all_cells(nn, dd)
    return _frag(f"generic_layer[{m.value}]", nn, dd, [layer], full, full, spec, 1)
