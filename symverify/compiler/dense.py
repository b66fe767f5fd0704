"""The dense baseline compiler (docs/appendix-h.md §2.5, "easy construction"; docs/theory.md §4): any circuit → BaseConv.

Working layout ("feature memory"): every live value of the layered form
(:func:`symverify.kernel.ir.layered.layered_form`) of the circuit's needed part
(:func:`~symverify.compiler.needed.needed_part`: gates no output depends on set to 0, so their reads
keep nothing live; ``Δ``, ``w`` and the bounds stay the circuit's) sits in its own channel of **row 0**; every other
cell is 0. The model is ``(n, L, d, N' = n, d')`` with ``d' = max(n·d, widest state)`` and is
the composition (Lemma H.11, :func:`symverify.gadgets.compose.compose`) of proved gadgets:

1. :func:`~symverify.gadgets.layout.rows_to_channels` (2 layers: a row-local one, then a cyclic one; none when n = 1):
   input ``u[r, j]`` goes to channel ``r·d + j`` of row 0, so channel i holds input node i;
2. per level ℓ = 1 … Δ of the layered form:

   * its linear stage as **one** :func:`~symverify.gadgets.primitives.affine_map` layer on row 0:
     dense ``W`` (``W[col(a), col(z)] = α`` for every term ``α·a`` of target z, copies included)
     and the constants folded into ``b1[0, col(z)]``;
   * its multiplication stage (when the level has products) as **one**
     :func:`~symverify.gadgets.remember.remember_channels` layer (Proposition H.10 with
     ``h = e_0``): the linear stage places the operands as channel blocks ``[v2 | v3 | v1]``, and
     the layer yields ``[v1 ⊙ v2 | v3 | 0]`` (``W`` carries v1 to the projection branch);
   * a final linear stage, when the form has one, lists the outputs in order in channels ``[0, m)``;
3. :func:`~symverify.gadgets.layout.channels_to_rows` (2 causal layers; none when m ≤ d): output
   k moves from channel k of row 0 to the read-out cell ``(k // d, k % d)``.

**Stated bounds** (checked by ``proofs/thm_h21_dense_baseline.py``): ``L ≤ 2Δ + 5`` (2 per level,
1 final linear stage, 2 + 2 layout), ``N' = n``, ``d' ≤ 2w`` (the layered form's states hold at
most ``w + m_ℓ ≤ 2w`` values), dense parameters ``≤ L_max·((2w)² + 3·n·2w)``. Every nonzero weight
moves a live value, so perturbing any one of them changes a stage's function (the mutation tests).
The certificate has a boundary after every layer, each cell naming the circuit node it holds
(the layout fragments' boundaries are derived from their specs by
:func:`~symverify.kernel.gadgets.fragment.fragment_boundaries`).
"""

from __future__ import annotations

from dataclasses import dataclass

from symverify.compiler.needed import needed_part
from symverify.compiler.result import Compiled, check_counts, source_meta
from symverify.errors import CompileError
from symverify.gadgets.compose import compose
from symverify.gadgets.layout import channels_to_rows, rows_to_channels
from symverify.gadgets.primitives import affine_map
from symverify.gadgets.remember import ChannelF, remember_channels
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.kernel.gadgets.fragment import Fragment, fragment_boundaries
from symverify.kernel.ir.analysis import stats
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.layered import LinearStage, MulStage, layered_form
from symverify.kernel.ir.scalar import Scalar, is_zero

__all__ = ["compile_dense", "dense_bounds"]

METHOD = "dense"


@dataclass
class _Plan:
    """Fragments and certificate boundaries accumulated while walking the layered form."""

    nn: int
    dd: int
    frags: list[Fragment]
    bounds: list[Boundary]
    layers: int = 0

    def add_affine(self, frag: Fragment, entry: tuple[Cell, ...]) -> None:
        """Append an affine fragment; its boundaries come from its spec (:func:`fragment_boundaries`).

        A fragment without layers (the layout moves when ``n = 1`` or ``m ≤ d``) adds no boundary:
        every one :func:`fragment_boundaries` would derive lies at the current layer, which the
        certificate already has, so its spec is neither built nor evaluated (both cost a Python
        object per state cell: most of the time of a wide gate-free circuit); the entry cells are
        still checked against its entry interface."""
        if frag.depth == 0:
            outside = next(((c.row, c.col) for c in entry if (c.row, c.col) not in frag.entry), None)
            if outside is not None:
                raise CompileError(f"internal: entry cell {outside} is outside the entry interface of {frag.name}")
            self.add(frag, [])
            return
        bounds = [b for b in fragment_boundaries(frag, entry, self.layers) if b.layer > self.layers]
        self.add(frag, [(b.cells, f"layout: {b.label}") for b in bounds])

    def add(self, frag: Fragment, after: list[tuple[tuple[Cell, ...], str]]) -> None:
        """Append ``frag``; ``after[k]`` lists the cells after its layer k + 1 (one per layer)."""
        if len(after) != frag.depth:
            raise CompileError(f"internal: {frag.name} has {frag.depth} layers but {len(after)} boundaries")
        self.frags.append(frag)
        for cells, label in after:
            self.layers += 1
            self.bounds.append(Boundary(self.layers, cells, label))


def _placement(lin: LinearStage, mul: MulStage | None) -> list[int]:
    """Channel of each slot of ``lin``'s output: in order, or ``[v2 | v3 | v1]`` before ``mul``."""
    size = len(lin.outputs)
    if mul is None:
        return list(range(size))
    if tuple(mul.inputs) != tuple(lin.outputs) or sorted(mul.perm) != list(range(size)) or 2 * mul.k > size:
        raise CompileError(f"dense: the multiplication stage of level {mul.level} does not route a permutation of the linear stage's slots")
    k, keep = mul.k, size - 2 * mul.k
    col = [0] * size
    for j, slot in enumerate(mul.perm):
        col[slot] = k + keep + j if j < k else j - k
    return col


def _linear(plan: _Plan, lin: LinearStage, src_cols: list[int], place: list[int]) -> None:
    W: dict[tuple[int, int], Scalar] = {}
    bias: dict[tuple[int, int], Scalar] = {}
    for t, (row, off) in enumerate(zip(lin.rows, lin.offset)):
        for slot, co in row:
            key = (src_cols[slot], place[t])
            v = W.get(key, 0) + co
            if is_zero(v):
                W.pop(key, None)
            else:
                W[key] = v
        if not is_zero(off):
            bias[(0, place[t])] = off
    frag = affine_map(Grid.from_cells(plan.dd, plan.dd, W), plan.nn, Grid.from_cells(plan.nn, plan.dd, bias), rows=[0])
    cells = tuple(Cell.node(0, place[t], v) for t, v in enumerate(lin.outputs))
    plan.add(frag, [(cells, f"level {lin.level} linear")])


def _multiply(plan: _Plan, mul: MulStage) -> None:
    k, keep = mul.k, len(mul.inputs) - 2 * mul.k
    e0 = Grid.from_cells(1, k, {(0, t): 1 for t in range(k)})
    frag = remember_channels(plan.nn, plan.dd, k, keep, e0, ChannelF(tuple(range(k + keep, 2 * k + keep))), m=1)
    cells = tuple(Cell.node(0, t, v) for t, v in enumerate(mul.outputs))
    plan.add(frag, [(cells, f"level {mul.level} multiply (remember)")])


def dense_bounds(delta: int, width: int, n: int) -> dict[str, int]:
    """The bounds the dense compiler states for a circuit of depth Δ and cut width w on n rows
    (each a non-negative int, else :class:`CompileError`)."""
    check_counts("dense_bounds", delta=delta, width=width, n=n)
    delta, width, n = int(delta), int(width), int(n)
    layers = 2 * delta + 5
    dd = 2 * width
    return {"layers": layers, "inner_n": n, "inner_d": dd, "params": layers * (dd * dd + 3 * n * dd)}


def compile_dense(circuit: Circuit, *, name: str = "") -> Compiled:
    """Compile ``circuit`` with the dense baseline construction (see the module docstring).

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> out = compile_dense(Circuit(2, 1, (Gate.mul(0, 1),), (2,)))
    >>> out.model.signature, out.over_bound()
    ((2, 4, 1, 2, 2), [])
    """
    if not isinstance(circuit, Circuit):
        raise CompileError(f"compile(method='dense'): expected a Circuit, found {type(circuit).__name__}")
    if not isinstance(name, str):
        raise CompileError(f"compile(method='dense'): name: expected a str, found {type(name).__name__} {safe_repr(name, 40)}")
    n, d, nd, m = circuit.n, circuit.d, circuit.num_inputs, len(circuit.outputs)
    limits.check(n * max(nd, d, m), "MAX_CELLS", f"compile(method='dense') {circuit.name or '<unnamed>'}: the state N'·d' ≥ n·(n·d)")
    lf = layered_form(needed_part(circuit))  # gates no output depends on keep nothing live
    stages = list(lf.stages)
    if not stages:
        raise CompileError("dense: the layered form has no stages")
    nn = n
    dd = max([nd, d, m] + [len(st.outputs) for st in stages])
    limits.check(nn * dd, "MAX_CELLS", f"compile(method='dense') {circuit.name or '<unnamed>'}: the state N'·d' = {nn}·{dd}")
    plan = _Plan(nn, dd, [], [Boundary(0, tuple(Cell.node(i // d, i % d, i) for i in range(nd)), "input")])

    # With n = 1 the input already sits in row 0, channel i holding input i: rows_to_channels has
    # no layers, and its interfaces (every input cell) would only meet the first linear stage's
    # entry, which is every cell; it is left out rather than built cell by cell.
    in_layers = 0
    if n > 1:
        f_in = rows_to_channels(n, d, nn, dd)
        plan.add_affine(f_in, plan.bounds[0].cells)
        in_layers = f_in.depth

    cols = list(range(nd))
    for idx, st in enumerate(stages):
        if isinstance(st, LinearStage):
            nxt = stages[idx + 1] if idx + 1 < len(stages) and isinstance(stages[idx + 1], MulStage) else None
            place = _placement(st, nxt)  # type: ignore[arg-type]
            _linear(plan, st, cols, place)
            cols = place
        else:
            if idx == 0 or not isinstance(stages[idx - 1], LinearStage):
                raise CompileError(f"dense: the multiplication stage of level {st.level} is not preceded by a linear stage")
            _multiply(plan, st)
            cols = list(range(len(st.outputs)))
    if cols[:m] != list(range(m)) or tuple(stages[-1].outputs) != tuple(circuit.outputs):
        raise CompileError("dense: the layered form's last state is not the output list in order")

    f_out = channels_to_rows(m, d, nn, dd)
    plan.add_affine(f_out, tuple(Cell.node(0, k, o) for k, o in enumerate(circuit.outputs)))

    stacked = compose(*plan.frags, name=name or circuit.name or "dense")
    model = Model(n, d, nn, dd, stacked.layers, name or f"dense({circuit.name or 'circuit'})")
    cert = Certificate(tuple(plan.bounds), (("method", METHOD), *source_meta(circuit)))
    st_ = stats(circuit)
    layout = in_layers + f_out.depth
    resources: dict[str, int] = {
        "layers": model.depth,
        "inner_n": nn,
        "inner_d": dd,
        "params": model.param_count(),
        "nonzero_params": model.nonzero_param_count(),
        "layout_layers": layout,
        "level_layers": model.depth - layout,
        "cyclic_layers": sum(1 for layer in model.layers if layer.mode is Mode.CYCLIC),
        "depth": st_.depth,
        "width": st_.width,
        "size": st_.size,
    }
    return Compiled(model, cert, resources, METHOD, dense_bounds(st_.depth, st_.width, n))
