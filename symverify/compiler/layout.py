"""The state layout of the kaleidoscope compiler (Lemmas H.16/H.18, Theorem H.21).

The inner state has the paper's signature: ``d' = d`` channels. The live vector
``z ∈ F^{N_k}`` (``N_k`` = the common kaleidoscope size, a power of two) runs row-major along the
*track*, the first ``tw`` channels, ``tw`` = the largest power of two ``≤ d``: position ``p`` is
local row ``p // tw``, channel ``p % tw`` of row block ``B0``. The workspace of the butterfly
gadgets is two more row blocks, so the state has three blocks of ``R = N_k/tw`` rows, each followed
by a gap of ``G = ⌊R/2⌋`` zero rows (room for the shifts of a sequence gadget)::

    rows [0, R)          B0  the live vector
    rows [R, S)          gap (S = R + G)
    rows [S, S + R)      B1  workspace
    rows [S + R, 2S)     gap
    rows [2S, 2S + R)    B2  workspace
    rows [2S + R, 3S)    gap            N' = 3·S = 3·(R + ⌊R/2⌋),  d' = d

(channels ``[tw, d)`` hold nothing on the track). Cell of position ``p`` in block ``b``:
``(b·S + p // tw, p % tw)``. The model embeds ``u[i, j]`` at cell ``(i, j)``: when ``d = tw`` that
is position ``i·d + j`` (plain ``vec``); otherwise two *gather* layers first move channel
``j ≥ tw`` to rows ``n + i`` of channel ``j − tw``, so input ``(i, j)`` is at position
``i·tw + j`` (``j < tw``) or ``(n + i)·tw + j − tw`` (``j ≥ tw``), and two *scatter* layers at the
end do the reverse for the outputs (:func:`track_position`).

What the compiler knows about a state is a :class:`CellState`: each nonzero cell holds a sparse
affine form over circuit nodes (:class:`~symverify.kernel.ir.affine.Affine`), and ``pending`` says whether
the value of position ``p`` is split over the blocks (``B0 + B1 + B2``, not yet summed).
Certificates (:mod:`symverify.kernel.ir.certificate`) are read off these forms. :func:`track_factor`
and :func:`track_sum` apply the algebra of the Lemma H.16 gadgets (see
:mod:`symverify.compiler.butterfly_to_baseconv`) to a :class:`CellState`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from symverify.errors import CompileError
from symverify.kaleidoscope.simplify import is_diagonal
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.butterfly import ButterflyFactor, next_power_of_two, pair_number
from symverify.kernel.ir.certificate import Boundary, Cell
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["BUFFERS", "Axis"]

BUFFERS = 3  # B0 (live state), B1, B2 (gadget workspace)
Axis = Literal["sequence", "channel", "diagonal"]


def inner_length(track_rows: int) -> int:
    """``N' = 3·(R + ⌊R/2⌋)`` for blocks of ``R = N_k/tw`` rows (module docstring): ``4.5·R`` for
    every ``R ≥ 2`` (a power of two), but 3 at ``R = 1``, where the gap ``⌊R/2⌋`` is empty (a
    one-row block has no sequence-axis factor to make room for).

    >>> [inner_length(r) for r in (1, 2, 4, 8)]
    [3, 9, 18, 36]
    """
    return BUFFERS * (track_rows + track_rows // 2)


def track_width(d: int) -> int:
    """``tw``: the largest power of two ``≤ d`` (the channels the track runs along)."""
    return 1 << (max(d, 1).bit_length() - 1)


def track_position(k: int, n: int, d: int) -> int:
    """The track position of the value at model cell ``(k // d, k % d)`` (input ``k`` after the
    gather layers, output ``k`` before the scatter layers; see the module docstring)."""
    tw = track_width(d)
    r, c = divmod(k, d)
    return r * tw + c if c < tw else (n + r) * tw + c - tw


@dataclass(frozen=True, slots=True)
class Layout:
    """``z[p]`` at cell ``(p // tw, p % tw)`` of block ``B0`` of an ``N'×d`` state (module docstring).

    >>> lay = Layout.choose(n=2, d=3, need=10)
    >>> (lay.tw, lay.size, lay.track_rows, lay.rows, lay.width, lay.input_position(5))
    (2, 16, 8, 36, 3, 6)
    >>> lay.cell(6), lay.cell(6, 1), lay.position((15, 0))
    ((3, 0), (15, 0), (6, 1))
    """

    n: int
    d: int
    size: int
    # Derived once in ``__post_init__`` (the compiler reads them for every cell it places); not
    # part of equality, hashing or the repr, which stay those of ``(n, d, size)``.
    tw: int = field(init=False, repr=False, compare=False)
    """The track width (channels ``[0, tw)`` carry positions): :func:`track_width` of ``d``."""
    track_rows: int = field(init=False, repr=False, compare=False)
    """``R = N_k/tw``, the rows of one block."""
    block: int = field(init=False, repr=False, compare=False)
    """``S = R + G``, the row offset between blocks (``G`` = :attr:`gap`)."""

    def __post_init__(self) -> None:
        tw = track_width(self.d)
        need = self.n * tw * (1 if tw == self.d else 2)
        if self.n < 1 or self.d < 1 or self.size != next_power_of_two(self.size) or self.size < max(need, tw):
            raise CompileError(
                f"layout: expected n, d ≥ 1 and a power-of-two size ≥ {max(need, tw)} (the {self.n}×{self.d} input on a "
                f"track of width {tw}); found n = {self.n}, d = {self.d}, size = {self.size}"
            )
        object.__setattr__(self, "tw", tw)
        object.__setattr__(self, "track_rows", self.size // tw)
        object.__setattr__(self, "block", self.track_rows + self.track_rows // 2)

    @staticmethod
    def choose(n: int, d: int, need: int) -> Layout:
        """The smallest layout with ``N_k ≥ need`` (a power of two) that holds the ``n×d`` input."""
        tw = track_width(d)
        return Layout(n, d, next_power_of_two(max(need, n * tw * (1 if tw == d else 2), tw, 2)))

    @property
    def gathered(self) -> bool:
        """Whether the model needs the gather and scatter layers (``d`` not a power of two)."""
        return self.tw != self.d

    @property
    def gap(self) -> int:
        """``G = ⌊R/2⌋`` zero rows after every block (the largest sequence shift)."""
        return self.track_rows // 2

    @property
    def rows(self) -> int:
        """``N' = 3·S``, the inner length."""
        return BUFFERS * self.block

    @property
    def width(self) -> int:
        """``d' = d``, the inner width."""
        return self.d

    def cell(self, p: int, buffer: int = 0) -> tuple[int, int]:
        """The cell of position ``p`` in block ``buffer`` (0, 1 or 2)."""
        return buffer * self.block + p // self.tw, p % self.tw

    def position(self, cell: tuple[int, int]) -> tuple[int, int]:
        """``(p, block)`` of a track cell (the inverse of :meth:`cell`)."""
        b, r = divmod(cell[0], self.block)
        return r * self.tw + cell[1], b

    def input_position(self, i: int) -> int:
        """The track position of input node ``i`` (cell ``(i // d, i % d)``) after the gather."""
        return track_position(i, self.n, self.d)

    output_position = input_position  # output k is read at cell (k // d, k % d) after the scatter


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
        ps = {self.lay.position(c)[0] for c in self.cells}
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


def axis_of(f: ButterflyFactor, tw: int) -> Axis:
    """Which gadget computes ``f`` on a track of width ``tw``."""
    if is_diagonal(f):
        return "diagonal"
    return "sequence" if f.stride >= tw else "channel"


def track_factor(st: CellState, f: ButterflyFactor, vals: Mapping[int, Affine] | None = None) -> CellState:
    """The cell contents after the gadget of ``f`` (the same algebra, on linear forms).

    Sequence and diagonal gadgets leave a clean state (``out`` in ``B0``); a channel gadget leaves
    ``out[p]`` in ``B0`` and ``out[q]`` in ``B1`` (pending, summed by the next gadget). ``vals``:
    ``st.values()`` when the caller has it already (not recomputed then).
    """
    lay, s = st.lay, f.stride
    axis = axis_of(f, lay.tw)
    if vals is None:
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
        put(lay.cell(lo), add_forms(scale(f.d1[m], zp), scale(f.d2[m], zq)))
        put(lay.cell(hi, 1 if axis == "channel" else 0), add_forms(scale(f.d3[m], zp), scale(f.d4[m], zq)))
    return CellState(lay, new, pending=axis == "channel")


def track_sum(st: CellState, offset: Mapping[int, Scalar]) -> CellState:
    """The clean state after the sum layer ``B0 + B1 + B2 (+ offset) → B0``."""
    vals = st.values()
    for p, v in offset.items():
        if not is_zero(v):
            vals[p] = add_forms(vals.get(p, _ZERO), Affine.constant(v))
    return CellState(st.lay, {st.lay.cell(p): f for p, f in vals.items() if f}, pending=False)
