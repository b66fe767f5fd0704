"""Lemma H.11 (stacking layers) for fragments with clean interfaces, and padding to a larger state.

**Composition.** If fragment A computes f and B computes g on the same ``N'×d'`` state, the
stack A;B computes ``g∘f`` with ``L_A + L_B`` layers, *provided the interfaces are clean*
(docs/theory.md §4 **Choice**): every cell A may leave nonzero must be one B accepts, ``A.exit ⊆
B.entry``. Otherwise B's assumption "every other cell is 0" fails and the stack can compute
something else (see ``proofs/lemma_h11_composition.py`` for a proved example); :func:`compose`
refuses such a stack and names the cells.

**Padding.** :func:`pad` embeds a fragment on ``N×d`` into ``N'×d'`` (``N' ≥ N``, ``d' ≥ d``):
``W`` gets zero rows and columns, ``b1``, ``b2`` and ``h`` zero rows and columns. On a state that
is 0 outside the top-left ``N×d`` block the padded layer computes the original layer there and 0
elsewhere:

* a new column q ≥ d has a zero W column and zero b1, so its projection (and output) is 0;
* a new row i ≥ N has a zero input row and zero b1, so its projection (and output) is 0;
* an old cell's projection only reads old columns of its own row, and its causal convolution
  only reads rows ≤ i < N, so it is unchanged.

A *cyclic* layer wraps modulo N, not N': tap k also serves the negative lag ``k − N``, which in
``N'`` rows lives at index ``N' − N + k``. :func:`pad` therefore copies every cyclic tap ``h[k]``
(k ≥ 1) to ``N' − N + k`` as well, and then checks, for every old row and column, that the padded
convolution reads exactly the same old rows with the same taps (new rows are 0). When
``N' ≥ 2N − 1`` this always holds: a tap at position k reads row ``i − k + N' ≥ N`` (zero) when it
wraps, and its copy at ``N' − N + k ≥ N`` only ever reads the intended row ``i + N − k``. For
smaller N' it can fail, and :func:`pad` raises. The proof script proves padded generic layers
(every weight a symbol) equal to the original on the block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from symverify.errors import IRError, ShapeError
from symverify.gadgets.primitives import _check_size, _check_state
from symverify.ir.bigint import safe_repr
from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder, check_spec, describe_cells
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_bool, is_zero

__all__ = ["compose", "pad", "pad_layer", "interface_mismatch"]


def _embed(g: Grid, rows: int, cols: int) -> Grid:
    if not is_zero(g.fill):
        return Grid.from_cells(rows, cols, g.nonzero())
    return Grid(rows, cols, 0, g.rects)


def _reads(h: Grid, i: int, j: int, rows: int, live: int) -> dict[int, object]:
    """Source row → tap of the cyclic convolution at ``(i, j)`` over ``rows`` rows, sources < ``live``."""
    out: dict[int, object] = {}
    for (k, c), v in h.nonzero().items():
        src = (i - k) % rows
        if c == j and src < live:
            out[src] = out.get(src, 0) + v  # type: ignore[operator]
    return out


def pad_layer(layer: Layer, inner_n: int, inner_d: int) -> Layer:
    """``layer`` on a larger ``N'×d'`` state, exact on states that are 0 outside the old block
    (sizes checked as in :func:`pad`)."""
    _check_size(inner_n, inner_d, "pad")
    nn, dd = layer.inner_n, layer.inner_d
    if inner_n < nn or inner_d < dd:
        raise ShapeError(f"pad: cannot shrink a {nn}×{dd} layer to {inner_n}×{inner_d}")
    h = _embed(layer.h, inner_n, inner_d)
    if layer.mode is Mode.CYCLIC and inner_n > nn:
        taps = layer.h.nonzero()
        moved = {(inner_n - nn + k, j): v for (k, j), v in taps.items() if k >= 1}
        h = Grid.from_cells(inner_n, inner_d, {**moved, **taps})
        for j in sorted({j for _, j in taps}):
            for i in range(nn):
                if _reads(layer.h, i, j, nn, nn) != _reads(h, i, j, inner_n, nn):
                    raise IRError(
                        f"pad: the cyclic layer's filter in column {j} (taps at lags "
                        f"{sorted(k for k, c in taps if c == j)}) wraps modulo N = {nn}; in N' = {inner_n} rows "
                        f"row {i} would read other rows (N' ≥ 2N − 1 = {2 * nn - 1} always works)"
                    )
    return Layer(_embed(layer.W, inner_d, inner_d), _embed(layer.b1, inner_n, inner_d), h, _embed(layer.b2, inner_n, inner_d), layer.mode)


def _renumber(c: Circuit, nn: int, dd: int, inputs: Mapping[int, int], builder: SpecBuilder) -> list[int]:
    """Copy ``c``'s gates into ``builder``; ``inputs[i]`` is the node for ``c``'s input i."""
    node = [inputs.get(i, -1) for i in range(c.num_inputs)]
    for g in c.gates:
        if g.op is Op.CONST:
            node.append(builder.const(g.coeffs[0]))
        else:
            args = tuple(node[a] for a in g.args)
            if min(args) < 0:
                raise IRError("internal: a spec read an input outside its entry interface")
            node.append(builder.emit(Gate(g.op, args, g.coeffs)))
    return node


def _checkpoint_cell(builder: SpecBuilder, row: int, col: int, terms: Iterable[tuple[int, Scalar]], const: Scalar) -> Cell | None:
    """A checkpoint cell over ``builder``'s nodes, with every constant node folded into the cell's
    constant (None when the cell is then 0: it is left unlisted). A constant node is shared by every
    use of its value (:meth:`SpecBuilder.const`), and the certificate checker gives each node a
    checkpoint names a fresh variable, so a listed constant node would stand for "any value" at
    every later use (a cell that is 0, or 1, then fails to check)."""
    nd = builder.n * builder.d
    kept: list[tuple[int, Scalar]] = []
    for v, x in terms:
        g = builder.gates[v - nd] if v >= nd else None
        if g is not None and g.op is Op.CONST:
            const = const + x * g.coeffs[0]
        else:
            kept.append((v, x))
    if not kept and is_zero(const):
        return None
    return Cell(row, col, tuple(kept), const)


def _checkpoint(builder: SpecBuilder, layer: int, cells: Iterable[tuple[int, int, Iterable[tuple[int, Scalar]], Scalar]]) -> tuple[int, tuple[Cell, ...]]:
    """A checkpoint after ``layer`` from ``(row, col, terms, const)`` (see :func:`_checkpoint_cell`)."""
    out = (_checkpoint_cell(builder, r, c, terms, k) for r, c, terms, k in cells)
    return (layer, tuple(c for c in out if c is not None))


def pad(frag: Fragment, inner_n: int, inner_d: int) -> Fragment:
    """``frag`` embedded top-left in an ``N'×d'`` state (see the module docstring).

    ``inner_n``, ``inner_d`` are positive ints (:class:`ShapeError`) whose product is at most
    :data:`symverify.ir.limits.MAX_CELLS` (:class:`~symverify.errors.LimitError` naming both, at
    once: a larger state could never be evaluated or verified), not below the fragment's own.
    """
    if not isinstance(frag, Fragment):
        raise IRError(f"pad: expected a Fragment, found {type(frag).__name__}")
    _check_size(inner_n, inner_d, "pad")
    nn, dd = frag.inner_n, frag.inner_d
    if (inner_n, inner_d) == (nn, dd):
        return frag
    layers = tuple(pad_layer(layer, inner_n, inner_d) for layer in frag.layers)

    def build() -> Spec:
        inner = frag.spec()
        check_spec(frag, inner)  # its checkpoints name nodes it has, its outputs respect its interfaces
        b = SpecBuilder(inner_n, inner_d)
        node = _renumber(inner.circuit, nn, dd, {i * dd + j: b.cell(i, j) for i in range(nn) for j in range(dd)}, b)
        outs = {(k // dd, k % dd): node[o] for k, o in enumerate(inner.circuit.outputs)}
        cps = tuple(_checkpoint(b, layer, ((c.row, c.col, ((node[v], x) for v, x in c.terms), c.const) for c in cells))
                    for layer, cells in inner.checkpoints)
        return Spec(b.circuit(outs, f"{frag.name} padded"), cps)

    return Fragment(f"{frag.name} padded to {inner_n}×{inner_d}", inner_n, inner_d, layers, frag.entry, frag.exit, frag.bounds, build)


def interface_mismatch(first: Fragment, second: Fragment) -> frozenset[tuple[int, int]]:
    """Cells ``first`` may leave nonzero that ``second`` requires to be 0 (empty when clean).
    Either argument not a :class:`Fragment` is an :class:`IRError`."""
    for k, f in enumerate((first, second)):
        if not isinstance(f, Fragment):
            raise IRError(f"interface_mismatch: argument {k} is a {type(f).__name__}, not a Fragment")
    return frozenset(first.exit - second.entry)


def compose(*frags: Fragment, name: str | None = None, check_interfaces: bool = True) -> Fragment:
    """Stack fragments in order (Lemma H.11), padding each to the largest inner size.

    Raises :class:`IRError` naming the cells when one fragment's exit is not inside the next
    one's entry, :class:`~symverify.errors.LimitError` when the padded state (the largest ``N'``
    by the largest ``d'``) has more than :data:`symverify.ir.limits.MAX_CELLS` cells. The result's stated layer bound is the sum of the parts' bounds.
    ``check_interfaces=False`` skips that check; it exists only to exhibit (and prove) that an
    unclean stack computes something other than ``g∘f``. It is ``True`` or ``False`` (a numpy bool
    by its value); anything else is an :class:`IRError`, not read by its truth value.

    >>> from symverify.gadgets.primitives import shift_down, identity
    >>> compose(shift_down(3, 1, 1), identity(3, 1)).depth
    2
    """
    if not is_bool(check_interfaces):
        raise IRError(f"compose: check_interfaces: expected True or False, found {type(check_interfaces).__name__} "
                      f"{safe_repr(check_interfaces, 40)}")
    if not frags:
        raise IRError("compose: expected at least one fragment")
    for k, f in enumerate(frags):
        if not isinstance(f, Fragment):
            raise IRError(f"compose: argument {k} is a {type(f).__name__}, not a Fragment")
    nn = max(f.inner_n for f in frags)
    dd = max(f.inner_d for f in frags)
    _check_state(nn, dd, "compose", ("max inner_n", "max inner_d"))  # each part fits, their common padding may not
    parts = [pad(f, nn, dd) for f in frags]
    for k in range(len(parts) - 1 if bool(check_interfaces) else 0):
        bad = interface_mismatch(parts[k], parts[k + 1])
        if bad:
            raise IRError(
                f"compose: {parts[k].name!r} (part {k}) may leave cells {describe_cells(bad)} nonzero, but "
                f"{parts[k + 1].name!r} (part {k + 1}) requires them to be 0 on entry; insert a masking gate "
                f"or move the block (Lemma H.11 needs clean interfaces)"
            )
    layers = tuple(layer for p in parts for layer in p.layers)
    bounds: dict[str, int] = {}
    if all("layers" in p.bounds for p in parts):
        bounds["layers"] = sum(int(p.bounds["layers"]) for p in parts)
    label = name or " ; ".join(p.name for p in parts)

    def build() -> Spec:
        b = SpecBuilder(nn, dd)
        current = {(i, j): b.cell(i, j) for i in range(nn) for j in range(dd)}
        cps: list[tuple[int, tuple[Cell, ...]]] = []
        offset = 0
        for p in parts:
            spec = p.spec()
            check_spec(p, spec)  # each part's own claim is well formed (its checkpoints name nodes it has)
            inputs = {i * dd + j: current[(i, j)] for i in range(nn) for j in range(dd)}
            node = _renumber(spec.circuit, nn, dd, inputs, b)
            for layer, cells in spec.checkpoints:
                cps.append(_checkpoint(b, offset + layer, ((c.row, c.col, ((node[v], x) for v, x in c.terms), c.const) for c in cells)))
            current = {(k // dd, k % dd): node[o] for k, o in enumerate(spec.circuit.outputs)}
            offset += len(p.layers)
            if offset < len(layers):
                cps.append(_checkpoint(b, offset, ((i, j, ((v, 1),), 0) for (i, j), v in sorted(current.items()))))
        return Spec(b.circuit(current, label), tuple(cps))

    return Fragment(label, nn, dd, layers, parts[0].entry, parts[-1].exit, bounds, build)
