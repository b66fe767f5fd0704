"""The state layout of the kaleidoscope compiler (Lemmas H.16/H.18, Theorem H.21).

The live vector ``z ∈ F^{N_k}`` (``N_k`` = the common kaleidoscope size, a power of two) sits
row-major in channel block ``B0`` of the ``N'×d'`` inner state: position ``p`` is cell
``(p // dp, p % dp)`` with ``dp`` = ``d`` padded to a power of two, ``N' = N_k/dp`` and
``d' = 3·dp``. Blocks ``B1`` (channels ``[dp, 2dp)``) and ``B2`` (``[2dp, 3dp)``) are the
workspace of one butterfly gadget. The model embeds ``u[i, j]`` at cell ``(i, j)``, i.e. position
``i·dp + j``; output ``k`` must end at cell ``(k // d, k % d)``. When ``d`` is a power of two both
are plain ``vec`` positions; otherwise the first and last linear stages absorb the reindexing.

What the compiler knows about a state is a :class:`CellState`: each nonzero cell holds a sparse
affine form over circuit nodes (:class:`~symverify.ir.affine.Affine`), and ``pending`` says whether
the value of position ``p`` is split over the three buffers (``B0 + B1 + B2``, not yet summed).
Certificates (:mod:`symverify.ir.certificate`) are read off these forms. :func:`track_factor`
and :func:`track_sum` apply the algebra of the Lemma H.16 gadgets (see
:mod:`symverify.compiler.butterfly_to_baseconv`) to a :class:`CellState`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from symverify.errors import CompileError
from symverify.ir.affine import Affine
from symverify.ir.butterfly import ButterflyFactor, next_power_of_two, pair_number
from symverify.ir.certificate import Boundary, Cell
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar, is_zero

__all__ = [
    "BUFFERS",
    "Axis",
    "Layout",
    "CellState",
    "grid",
    "form_cell",
    "state_boundary",
    "mention",
    "gate_support",
    "is_diagonal",
    "axis_of",
    "track_factor",
    "track_sum",
]

BUFFERS = 3  # B0 (live state), B1, B2 (gadget workspace)
Axis = Literal["sequence", "channel", "diagonal"]


@dataclass(frozen=True, slots=True)
class Layout:
    """``z[p]`` at cell ``(p // dp, p % dp)`` of an ``N'×3dp`` state; ``size = N_k = N'·dp``.

    >>> lay = Layout.choose(n=2, d=3, need=10)
    >>> (lay.dp, lay.size, lay.rows, lay.width, lay.input_position(4))
    (4, 16, 4, 12, 5)
    """

    n: int
    d: int
    dp: int
    size: int

    def __post_init__(self) -> None:
        if self.dp != next_power_of_two(self.d) or self.size % self.dp or self.size < self.dp * self.n:
            raise CompileError(
                f"layout: expected dp = {next_power_of_two(self.d)} (d = {self.d} padded) and a size that is a "
                f"multiple of dp with size ≥ n·dp = {self.n * self.dp}; found dp = {self.dp}, size = {self.size}"
            )

    @staticmethod
    def choose(n: int, d: int, need: int) -> Layout:
        """The smallest layout with ``N_k ≥ need`` (a power of two) that holds the ``n×d`` input."""
        dp = next_power_of_two(d)
        return Layout(n, d, dp, next_power_of_two(max(need, n * dp, 2)))

    @property
    def rows(self) -> int:
        """``N'``, the inner length."""
        return self.size // self.dp

    @property
    def width(self) -> int:
        """``d' = 3·dp``, the inner width."""
        return BUFFERS * self.dp

    def cell(self, p: int, buffer: int = 0) -> tuple[int, int]:
        """The cell of position ``p`` in buffer ``buffer`` (0, 1 or 2)."""
        return p // self.dp, buffer * self.dp + p % self.dp

    def input_position(self, i: int) -> int:
        """Where the model's embedding puts input node ``i`` (cell ``(i // d, i % d)``)."""
        return (i // self.d) * self.dp + i % self.d

    output_position = input_position  # output k must be read at cell (k // d, k % d)


def grid(rows: int, cols: int, cells: Mapping[tuple[int, int], Scalar]) -> Grid:
    """A zero-filled grid with ``cells`` set; runs of equal values down a column share a rectangle."""
    rects: list[tuple[int, int, int, int, Scalar]] = []
    for j, i0, v in sorted((j, i, v) for (i, j), v in cells.items() if not is_zero(v)):
        if rects and rects[-1][2] == j and rects[-1][1] == i0 and rects[-1][4] == v:
            r = rects[-1]
            rects[-1] = (r[0], i0 + 1, j, j + 1, v)
        else:
            rects.append((i0, i0 + 1, j, j + 1, v))
    return Grid(rows, cols, 0, tuple(rects))


@dataclass
class CellState:
    """The tracked content of an inner state (mutable builder state; see the module docstring)."""

    lay: Layout
    cells: dict[tuple[int, int], Affine] = field(default_factory=dict)
    pending: bool = False

    @staticmethod
    def at_positions(lay: Layout, nodes: Iterable[tuple[int, int]]) -> CellState:
        """A clean state holding node ``v`` at position ``p`` for every ``(p, v)``."""
        return CellState(lay, {lay.cell(p): Affine.unit(v) for p, v in nodes})

    def value(self, p: int) -> Affine:
        """The value of position ``p`` (the buffers summed when ``pending``)."""
        if not self.pending:
            return self.cells.get(self.lay.cell(p), _ZERO)
        acc = _ZERO
        for b in range(BUFFERS):
            f = self.cells.get(self.lay.cell(p, b))
            if f is not None:
                acc = acc + f
        return acc

    def values(self) -> dict[int, Affine]:
        """Every position with a nonzero value."""
        dp = self.lay.dp
        ps = {r * dp + c % dp for (r, c) in self.cells}
        out = {p: self.value(p) for p in sorted(ps)}
        return {p: f for p, f in out.items() if f}


_ZERO = Affine()


def form_cell(row: int, col: int, f: Affine) -> Cell:
    """The certificate cell holding the affine form ``f``."""
    return Cell.of_form(row, col, f)


def state_boundary(layer: int, st: CellState, label: str) -> Boundary:
    """A boundary listing every nonzero cell of ``st`` (all others are claimed 0)."""
    cells = tuple(form_cell(r, c, f) for (r, c), f in sorted(st.cells.items()) if f)
    return Boundary(layer, cells, label)


def add_forms(a: Affine, b: Affine) -> Affine:
    return b if not a else (a if not b else a + b)


def scale(c: Scalar, f: Affine) -> Affine:
    """``c·f`` with the cheap cases (0, 1) short-cut."""
    if is_zero(c) or not f:
        return _ZERO
    if type(c) is int and c == 1:
        return f
    return f.scaled(c)


def mention(b: Boundary, nodes: Iterable[int]) -> Boundary:
    """``b`` with every node of ``nodes`` it does not mention added as a ``0·node`` term.

    The compositional checker gives a fresh variable to each node a boundary mentions and, to
    derive the next boundary's values, walks every argument of the circuit's gates that has a
    nonzero coefficient, even when its terms cancel (``x − x``). Such an argument must therefore
    be mentioned although it contributes nothing; a ``0·node`` term does exactly that and leaves
    the cell's value unchanged. The terms go on the first listed cell (or on a listed zero cell
    ``(0, 0)`` when the boundary lists none).
    """
    have = {v for c in b.cells for v in c.nodes()}
    extra = tuple((v, 0) for v in sorted(set(nodes) - have))
    if not extra:
        return b
    cells = list(b.cells)
    if cells:
        first = cells[0]
        cells[0] = Cell(first.row, first.col, first.terms + extra, first.const)
    else:
        cells = [Cell(0, 0, extra, 0)]
    return Boundary(b.layer, tuple(cells), b.label)


def gate_support(circuit: Any, targets: Iterable[int], frontier: set[int]) -> set[int]:
    """The frontier nodes the checker reaches when it expands ``targets`` through the gates."""
    out: set[int] = set()
    seen: set[int] = set()
    stack = list(targets)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in frontier:
            out.add(v)
            continue
        g = circuit.gate(v)
        if g is not None:
            stack.extend(g.args)
    return out


def is_diagonal(f: ButterflyFactor) -> bool:
    """True when every 2×2 block is diagonal (``d2 = d3 = 0``)."""
    return all(is_zero(v) for v in f.d2) and all(is_zero(v) for v in f.d3)


def axis_of(f: ButterflyFactor, dp: int) -> Axis:
    """Which gadget computes ``f`` when channels are padded to ``dp``."""
    if is_diagonal(f):
        return "diagonal"
    return "sequence" if f.stride >= dp else "channel"


def track_factor(st: CellState, f: ButterflyFactor) -> CellState:
    """The cell contents after the gadget of ``f`` (the same algebra, on linear forms)."""
    lay, s = st.lay, f.stride
    axis = axis_of(f, lay.dp)
    vals = st.values()
    new: dict[tuple[int, int], Affine] = {}

    def put(cell: tuple[int, int], form: Affine) -> None:
        if form:
            new[cell] = form

    zero = Affine()
    for lo in sorted({p & ~s for p in vals}):
        m = pair_number(s, lo)
        hi = lo + s
        zp, zq = vals.get(lo, zero), vals.get(hi, zero)
        put(lay.cell(lo), scale(f.d1[m], zp))
        put(lay.cell(hi), scale(f.d4[m], zq))
        if axis == "sequence":
            put(lay.cell(lo, 1), scale(f.d2[m], zq))
            put(lay.cell(hi, 2), scale(f.d3[m], zp))
        elif axis == "channel":
            put(lay.cell(lo, 1), scale(f.d2[m], zq))
            put(lay.cell(hi, 1), scale(f.d3[m], zp))
    return CellState(lay, new, pending=axis != "diagonal")


def track_sum(st: CellState, offset: Mapping[int, Scalar]) -> CellState:
    """The clean state after the sum layer ``B0 + B1 + B2 (+ offset) → B0``."""
    vals = st.values()
    for p, v in offset.items():
        if not is_zero(v):
            vals[p] = add_forms(vals.get(p, _ZERO), Affine.constant(v))
    return CellState(st.lay, {st.lay.cell(p): f for p, f in vals.items() if f}, pending=False)
