"""Model fragments: a few BaseConv layers on a fixed inner state, with a clean interface.

A :class:`Fragment` is a stack of layers acting on ``N'×d'`` states (rows = sequence positions,
columns = channels) together with

* its **clean interface** (Lemma H.11, docs/theory.md §4): ``entry`` is the set of cells that may be
  nonzero when the fragment starts (every other cell must be 0), ``exit`` the set of cells that
  may be nonzero when it ends (every other cell *is* 0);
* its **specification**, built on demand by :meth:`Fragment.spec`: a small circuit over the whole
  state (node ``i·d' + j`` is the entry value of cell ``(i, j)``) whose ``N'·d'`` outputs list the
  exit state row-major (cells outside ``exit`` output the constant 0). It reads only entry cells.
  Optional checkpoints name the state after some inner layers (cells → spec nodes).

The claim a fragment makes is: *for every state that is 0 outside ``entry``, its layers produce
exactly the spec's outputs* (so in particular 0 outside ``exit``). :func:`standalone` turns the
claim into a circuit, a model and a stage certificate, which :mod:`symverify.kernel.provers.fragment`
checks compositionally and by exact polynomials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.affine import Affine, NotAffineError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, as_scalar, is_zero

__all__ = [
    "CellSet",
    "Spec",
    "SpecBuilder",
    "Fragment",
    "all_cells",
    "block",
    "check_spec",
    "standalone",
    "fragment_boundaries",
    "describe_cells",
]

CellSet = frozenset[tuple[int, int]]
Number = int | Fraction


def all_cells(inner_n: int, inner_d: int) -> CellSet:
    """Every cell of an ``N'×d'`` state."""
    return frozenset((i, j) for i in range(inner_n) for j in range(inner_d))


def block(rows: Iterable[int], cols: Iterable[int]) -> CellSet:
    """The cells ``rows × cols``."""
    cs = tuple(cols)
    return frozenset((i, j) for i in rows for j in cs)


def describe_cells(cells: Iterable[tuple[int, int]], limit: int = 6) -> str:
    """``'(0, 1), (2, 3) and 5 more'`` for error messages."""
    cs = sorted(cells)
    head = ", ".join(f"({i}, {j})" for i, j in cs[:limit])
    return head + (f" and {len(cs) - limit} more" if len(cs) > limit else "")


@dataclass(frozen=True)
class Spec:
    """A fragment's function as a circuit over the whole state (see the module docstring).

    ``checkpoints`` are ``(layer, cells)`` pairs: after ``layer`` of the fragment's layers the
    listed cells hold the given spec nodes and every other cell is 0.
    """

    circuit: Circuit
    checkpoints: tuple[tuple[int, tuple[Cell, ...]], ...] = ()


class SpecBuilder:
    """Emits the gates of a fragment's spec circuit; node ``i·d' + j`` is cell ``(i, j)`` on entry."""

    def __init__(self, inner_n: int, inner_d: int) -> None:
        self.n, self.d = inner_n, inner_d
        self.gates: list[Gate] = []
        self._consts: dict[tuple[type, Scalar], int] = {}

    def cell(self, i: int, j: int) -> int:
        """The entry value of cell ``(i, j)``."""
        return i * self.d + j

    def emit(self, gate: Gate) -> int:
        self.gates.append(gate)
        return self.n * self.d + len(self.gates) - 1

    def const(self, value: object) -> int:
        v = as_scalar(value, "spec constant")
        key = (type(v), v)
        if key not in self._consts:
            self._consts[key] = self.emit(Gate(Op.CONST, (), (v,)))
        return self._consts[key]

    def zero(self) -> int:
        return self.const(0)

    def mul(self, a: int, b: int) -> int:
        return self.emit(Gate.mul(a, b))

    def affine(self, terms: Sequence[tuple[object, int]], const: object = 0) -> int:
        """``Σ coeff·node + const`` as a chain of fan-in-2 linear gates (zero terms dropped)."""
        live = [(as_scalar(c, "spec coefficient"), v) for c, v in terms]
        live = [(c, v) for c, v in live if not is_zero(c)]
        k = as_scalar(const, "spec constant")
        if not is_zero(k):
            live.append((1, self.const(k)))
        if not live:
            return self.zero()
        c0, acc = live[0]
        if c0 != 1:
            acc = self.emit(Gate.lin(acc, c0, acc, 0))
        for c, v in live[1:]:
            acc = self.emit(Gate.lin(acc, 1, v, c))
        return acc

    def circuit(self, exit_nodes: Mapping[tuple[int, int], int], name: str) -> Circuit:
        """The spec circuit: output ``i·d' + j`` is ``exit_nodes[(i, j)]`` (0 when absent)."""
        zero = self.zero() if len(exit_nodes) < self.n * self.d else None
        outs = tuple(exit_nodes.get((i, j), zero) for i in range(self.n) for j in range(self.d))  # type: ignore[misc]
        return Circuit(self.n, self.d, tuple(self.gates), outs, name)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Fragment:
    """Layers on an ``N'×d'`` state with a clean interface and a lazily built spec.

    ``bounds`` are the resource bounds the construction states (e.g. ``{"layers": 2}``); the proof
    scripts fail when :meth:`resources` exceeds them.
    """

    name: str
    inner_n: int
    inner_d: int
    layers: tuple[Layer, ...]
    entry: CellSet
    exit: CellSet
    bounds: Mapping[str, Number] = field(default_factory=dict)
    build_spec: Callable[[], Spec] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "entry", frozenset(self.entry))
        object.__setattr__(self, "exit", frozenset(self.exit))
        object.__setattr__(self, "bounds", dict(self.bounds))
        for fname in ("inner_n", "inner_d"):
            v = getattr(self, fname)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ShapeError(f"fragment {self.name!r} {fname}: expected a positive int, found {v!r}")
        for k, layer in enumerate(self.layers):
            if not isinstance(layer, Layer):
                raise IRError(f"fragment {self.name!r} layer {k}: expected a Layer, found {type(layer).__name__}")
            if (layer.inner_n, layer.inner_d) != (self.inner_n, self.inner_d):
                raise ShapeError(
                    f"fragment {self.name!r} layer {k}: expected inner shape {self.inner_n}×{self.inner_d}, "
                    f"found {layer.inner_n}×{layer.inner_d}"
                )
        for what in ("entry", "exit"):
            bad = [c for c in getattr(self, what) if not (0 <= c[0] < self.inner_n and 0 <= c[1] < self.inner_d)]
            if bad:
                raise ShapeError(
                    f"fragment {self.name!r} {what} interface: cells {describe_cells(bad)} are outside the "
                    f"{self.inner_n}×{self.inner_d} state"
                )

    @property
    def depth(self) -> int:
        return len(self.layers)

    def spec(self) -> Spec:
        """Build the spec circuit (raises :class:`IRError` when the fragment has none)."""
        if self.build_spec is None:
            raise IRError(f"fragment {self.name!r} has no specification")
        return self.build_spec()

    def resources(self) -> dict[str, int]:
        """Layers, inner sizes, dense and nonzero parameter counts, cyclic layers."""
        nn, dd, L = self.inner_n, self.inner_d, len(self.layers)
        return {
            "layers": L,
            "inner_n": nn,
            "inner_d": dd,
            "params": L * (dd * dd + 3 * nn * dd),
            "nonzero_params": sum(g.nonzero_count() for layer in self.layers for _, g in layer.grids()),
            "cyclic_layers": sum(1 for layer in self.layers if layer.mode is Mode.CYCLIC),
        }

    def over_bound(self) -> list[str]:
        """Resources that exceed a stated bound."""
        res = self.resources()
        return [k for k, b in self.bounds.items() if k not in res or res[k] > b]

    def model(self) -> Model:
        """The fragment alone as an ``(N', L, d', N', d')`` model (the whole state is the input)."""
        return Model(self.inner_n, self.inner_d, self.inner_n, self.inner_d, self.layers, self.name)


def _mask_layer(inner_n: int, inner_d: int, cells: CellSet) -> Layer:
    """The fixed gate ``B ⊙ u`` with ``B`` = indicator of ``cells`` (W = 0, b1 = B, h = e_0, b2 = 0)."""
    b1 = Grid.from_cells(inner_n, inner_d, {c: 1 for c in cells})
    h = Grid.zeros(inner_n, inner_d).paint(0, 1, 0, inner_d, 1)
    return Layer.make(inner_n, inner_d, b1=b1, h=h)


def check_spec(frag: Fragment, spec: Spec) -> None:
    """Structural agreement of a spec with its fragment: shapes, inputs read, zero outside ``exit``."""
    from symverify.kernel.ir.analysis import needed_nodes

    c, nn, dd = spec.circuit, frag.inner_n, frag.inner_d
    if (c.n, c.d) != (nn, dd) or len(c.outputs) != nn * dd:
        raise ShapeError(
            f"fragment {frag.name!r}: the spec must read and list the whole {nn}×{dd} state; found a "
            f"{c.n}×{c.d} circuit with {len(c.outputs)} outputs"
        )
    read = {(v // dd, v % dd) for v in needed_nodes(c) if v < nn * dd}
    if not read <= frag.entry:
        raise IRError(f"fragment {frag.name!r}: the spec reads cells {describe_cells(read - frag.entry)} outside the entry interface")
    for k, o in enumerate(c.outputs):
        g = c.gate(o)
        is_const_zero = g is not None and g.op is Op.CONST and is_zero(g.coeffs[0])
        if (k // dd, k % dd) not in frag.exit and not is_const_zero:
            raise IRError(f"fragment {frag.name!r}: cell ({k // dd}, {k % dd}) is outside the exit interface but the spec gives it node %{o}")
    for layer, _cells in spec.checkpoints:
        if not 0 <= layer <= len(frag.layers):
            raise IRError(f"fragment {frag.name!r}: checkpoint after layer {layer} is outside [0, {len(frag.layers)}]")


def standalone(frag: Fragment) -> tuple[Circuit, Model, Certificate]:
    """The fragment's claim as (spec circuit, model, stage certificate) for the provers.

    The model is ``(N', L, d', N', d')``: a masking gate that zeroes every cell outside ``entry``
    (only when ``entry`` is not the whole state), then the fragment's layers. The certificate's
    boundaries are: the input; after the mask, the entry cells holding their own input node and
    everything else 0 (the clean entry interface); each checkpoint; the spec's outputs at the end.
    Its check therefore proves exactly the fragment's claim on clean inputs.
    """
    spec = frag.spec()
    check_spec(frag, spec)
    nn, dd = frag.inner_n, frag.inner_d
    full = all_cells(nn, dd)
    prefix: tuple[Layer, ...] = () if frag.entry == full else (_mask_layer(nn, dd, frag.entry),)
    model = Model(nn, dd, nn, dd, prefix + frag.layers, f"{frag.name} (standalone)")
    bounds = [Boundary(0, tuple(Cell.node(i, j, i * dd + j) for i, j in sorted(full)), "input")]
    off = len(prefix)
    if prefix:
        bounds.append(Boundary(off, tuple(Cell.node(i, j, i * dd + j) for i, j in sorted(frag.entry)), "clean entry"))
    for layer, cells in spec.checkpoints:
        bounds.append(Boundary(off + layer, tuple(cells), f"{frag.name} after layer {layer}"))
    outs = spec.circuit.outputs
    bounds.append(Boundary(off + len(frag.layers), tuple(Cell.node(k // dd, k % dd, o) for k, o in enumerate(outs)), "exit"))
    return spec.circuit, model, Certificate(tuple(bounds), (("fragment", frag.name),))


def fragment_boundaries(frag: Fragment, entry: Iterable[Cell], first_layer: int) -> list[Boundary]:
    """Certificate boundaries for ``frag`` placed after layer ``first_layer`` of a larger model.

    ``entry`` says which (affine combination of) circuit nodes each listed entry cell holds; every
    unlisted cell is 0. The result lists the state after
    each checkpoint and at the exit, in terms of the same circuit nodes, by evaluating the spec on
    affine forms; a spec value that is a product of two non-constant values has no such form and
    raises :class:`IRError` (name a circuit node for it instead).
    """
    from symverify.kernel.semantics.evaluate import eval_circuit_nodes
    from symverify.kernel.semantics.rings import AffineRing

    spec = frag.spec()
    check_spec(frag, spec)
    nn, dd = frag.inner_n, frag.inner_d
    state = [Affine() for _ in range(nn * dd)]
    for c in entry:
        if (c.row, c.col) not in frag.entry:
            raise IRError(f"fragment {frag.name!r}: entry cell ({c.row}, {c.col}) is outside its entry interface")
        state[c.row * dd + c.col] = c.form()
    try:
        vals = eval_circuit_nodes(spec.circuit, state, AffineRing())
    except NotAffineError:
        raise IRError(f"fragment {frag.name!r}: a value is a product of two non-constant values; it has no affine form over the circuit's nodes") from None

    def listed(forms: Iterable[tuple[tuple[int, int], Affine]]) -> tuple[Cell, ...]:
        return tuple(Cell.of_form(i, j, f) for (i, j), f in sorted(forms) if f)

    out = []
    for layer, cells in spec.checkpoints:
        forms = []
        for c in cells:
            acc = Affine.constant(c.const)
            for v, x in c.terms:
                acc = acc + vals[v].scaled(x)
            forms.append(((c.row, c.col), acc))
        out.append(Boundary(first_layer + layer, listed(forms), f"{frag.name} after layer {layer}"))
    exit_forms = [((k // dd, k % dd), vals[o]) for k, o in enumerate(spec.circuit.outputs)]
    out.append(Boundary(first_layer + len(frag.layers), listed(exit_forms), frag.name))
    return out
