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
from typing import Any, cast

from symverify.errors import IRError, ShapeError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.affine import Affine, NotAffineError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.frozen import ReadOnlyMapping
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import (
    Scalar,
    all_int,
    all_of,
    as_index,
    as_scalar,
    is_bool,
    is_zero,
    plain_fields,
    plain_index,
    plain_items,
    plain_str,
    type_ids,
    unordered,
)

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

    ``checkpoints`` are ``(layer, cells)`` pairs, in order of ``layer``: after ``layer`` of the
    fragment's layers the listed cells (:class:`Cell`, each holding an affine combination of spec
    nodes) hold their values and every other cell is 0. Construction checks the types (a
    :class:`Circuit`; a sequence of pairs, each an int layer ≥ 0, numpy integers converted, never a
    bool or a float, and a collection of cells) and raises :class:`IRError`; :func:`check_spec`
    checks them against the fragment.
    """

    circuit: Circuit
    checkpoints: tuple[tuple[int, tuple[Cell, ...]], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.circuit, Circuit):
            raise IRError(f"spec circuit: expected a Circuit, found {type(self.circuit).__name__}")
        cps = self.checkpoints
        if unordered(cps):  # a dict would read as its keys, a set in no order
            raise IRError(f"spec checkpoints: expected a sequence of (layer, cells) pairs, found {type(cps).__name__}")
        out = []
        for k, cp in enumerate(cps):
            if not isinstance(cp, (tuple, list)) or len(cp) != 2:
                raise IRError(f"spec checkpoint {k}: expected a (layer, cells) pair, found {safe_repr(cp, 80)}")
            layer, cells = as_index(cp[0]), cp[1]
            if layer is None or layer < 0:
                raise IRError(f"spec checkpoint {k}: expected an int layer ≥ 0, found {safe_repr(cp[0], 40)}")
            if isinstance(cells, (Mapping, str, bytes)) or not hasattr(cells, "__iter__"):  # a set is fine: each cell names itself
                raise IRError(f"spec checkpoint {k} (after layer {layer}): expected a collection of Cells, found {type(cells).__name__}")
            cells = tuple(cells)
            bad = next((c for c in cells if not isinstance(c, Cell)), None)
            if bad is not None:
                raise IRError(f"spec checkpoint {k} (after layer {layer}): expected Cell objects, found {type(bad).__name__} {safe_repr(bad, 40)}")
            out.append((layer, cells))
        object.__setattr__(self, "checkpoints", tuple(out))


class SpecBuilder:
    """Emits the gates of a fragment's spec circuit; node ``i·d' + j`` is cell ``(i, j)`` on entry."""

    def __init__(self, inner_n: int, inner_d: int) -> None:
        self.n, self.d = inner_n, inner_d
        self.gates: list[Gate] = []
        self._consts: dict[tuple[type, Scalar], int] = {}

    def cell(self, i: int, j: int) -> int:
        """The entry value of cell ``(i, j)``; a cell outside the state (which would name another
        cell's node, or a gate's) or a coordinate that is not an int raises :class:`IRError`."""
        if type(i) is int and type(j) is int and 0 <= i < self.n and 0 <= j < self.d:
            return i * self.d + j
        ii, jj = as_index(i), as_index(j)  # numpy integers
        if ii is not None and jj is not None and 0 <= ii < self.n and 0 <= jj < self.d:
            return ii * self.d + jj
        raise IRError(f"spec builder: cell ({safe_repr(i, 20)}, {safe_repr(j, 20)}) is not a cell of the {self.n}×{self.d} state")

    def emit(self, gate: Gate) -> int:
        self.gates.append(gate)
        return self.n * self.d + len(self.gates) - 1

    def const(self, value: object) -> int:
        v = as_scalar(value, "spec constant")
        key = (type(v), v)  # sound: as_scalar's value is canonical (an exact int, Fraction of plain ints or Sym; scalar.canonical)
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
        """The spec circuit: output ``i·d' + j`` is ``exit_nodes[(i, j)]`` (0 when absent); a key
        that is not a cell of the state raises :class:`IRError` (it would be dropped)."""
        if not isinstance(exit_nodes, Mapping):
            raise IRError(f"spec builder: expected a mapping of cells to nodes, found {type(exit_nodes).__name__}")
        stray = [c for c in exit_nodes if not (isinstance(c, tuple) and len(c) == 2 and None not in map(as_index, c)
                                               and 0 <= c[0] < self.n and 0 <= c[1] < self.d)]
        if stray:
            raise IRError(f"spec builder: {safe_repr(stray[0], 40)} is not a cell of the {self.n}×{self.d} state")
        zero = self.zero() if len(exit_nodes) < self.n * self.d else None
        outs = tuple(exit_nodes.get((i, j), zero) for i in range(self.n) for j in range(self.d))  # type: ignore[misc]
        return Circuit(self.n, self.d, tuple(self.gates), outs, name)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Fragment:
    """Layers on an ``N'×d'`` state with a clean interface and a lazily built spec.

    ``bounds`` are the resource bounds the construction states (e.g. ``{"layers": 2}``); the proof
    scripts fail when :meth:`resources` exceeds them.

    Equality compares the name, sizes, layers, interfaces and bounds, never the spec; the hash
    leaves out the bounds (a read-only mapping, unhashable as a dict is; ``frag.bounds[k] = …`` raises ``TypeError``). So two fragments with the same layers but different claims
    are equal; nothing is wrong by it, as no result is found by a fragment's value: ``prove_fragment``
    builds the spec anew on every call and its memos key the circuit and model it builds by identity,
    a pickled copy carries its own spec, and no value-keyed memo (``ValueMemo``) holds fragments. A
    cache of anything that depends on the spec must not be keyed by fragment equality
    (``tests/test_fragment_equality.py``). A fragment pickles (and copies) with its spec built: the copy's
    ``build_spec`` returns that :class:`Spec`, so a spec built by a local function travels too.
    Construction checks every field and raises :class:`IRError` (:class:`ShapeError` for sizes and
    cells outside the state): ``entry`` and ``exit`` are collections of ``(row, col)`` int pairs
    (numpy integers converted; a mapping, a bool or a float is refused), ``layers`` a sequence.
    """

    name: str
    inner_n: int
    inner_d: int
    layers: tuple[Layer, ...]
    entry: CellSet
    exit: CellSet
    bounds: Mapping[str, Number] = field(default_factory=dict, hash=False)
    build_spec: Callable[[], Spec] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise IRError(f"fragment name: expected a str, found {type(self.name).__name__} {safe_repr(self.name, 40)}")
        object.__setattr__(self, "name", plain_str(self.name))  # its characters (a subclass could print otherwise)
        plain_fields(self, "inner_n", "inner_d")
        for fname in ("inner_n", "inner_d"):
            v = getattr(self, fname)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ShapeError(f"fragment {self.name!r} {fname}: expected a positive int, found {v!r}")
        if unordered(self.layers):  # a dict reads as its keys, a set in no order
            raise IRError(f"fragment {self.name!r} layers: expected a sequence of layers in order, found {type(self.layers).__name__}")
        object.__setattr__(self, "layers", tuple(plain_items(self.layers)))  # a subclass as the items it stores
        for k, layer in enumerate(self.layers):
            if not isinstance(layer, Layer):
                raise IRError(f"fragment {self.name!r} layer {k}: expected a Layer, found {type(layer).__name__}")
            if (layer.inner_n, layer.inner_d) != (self.inner_n, self.inner_d):
                raise ShapeError(
                    f"fragment {self.name!r} layer {k}: expected inner shape {self.inner_n}×{self.inner_d}, "
                    f"found {layer.inner_n}×{layer.inner_d}"
                )
        for what in ("entry", "exit"):
            object.__setattr__(self, what, _cell_set(getattr(self, what), f"fragment {self.name!r} {what} interface",
                                                     self.inner_n, self.inner_d))
        if not isinstance(self.bounds, Mapping):
            raise IRError(f"fragment {self.name!r} bounds: expected a mapping of resource names to numbers, found "
                          f"{type(self.bounds).__name__}")
        plain: dict[str, int | Fraction] = {}
        for key, given in plain_items(self.bounds).items():
            b: object = plain_index(given)  # a numpy integer by its value, as every table of resources reads one
            if not isinstance(key, str) or is_bool(b) or not isinstance(b, (int, Fraction)):
                raise IRError(f"fragment {self.name!r} bounds: expected resource name (str) → int or Fraction, found "
                              f"{safe_repr(key, 40)} → {type(b).__name__} {safe_repr(b, 40)}")
            # plain values: a bound is compared with the resources (over_bound), by the bound's own < if a subclass
            plain[plain_str(key)] = b if type(b) is int or type(b) is Fraction else as_scalar(b, "fragment bound")  # type: ignore[assignment]
        object.__setattr__(self, "bounds", ReadOnlyMapping(plain))
        if self.build_spec is not None and not callable(self.build_spec):
            raise IRError(f"fragment {self.name!r} build_spec: expected a function returning a Spec (or None), found "
                          f"{type(self.build_spec).__name__}")

    def __reduce__(self) -> tuple[Any, ...]:
        built = None if self.build_spec is None else _Built(self.spec())
        return (Fragment, (self.name, self.inner_n, self.inner_d, self.layers, self.entry, self.exit, dict(self.bounds), built))

    @property
    def depth(self) -> int:
        return len(self.layers)

    def spec(self) -> Spec:
        """Build the spec circuit (raises :class:`IRError` when the fragment has none)."""
        if self.build_spec is None:
            raise IRError(f"fragment {self.name!r} has no specification")
        spec = self.build_spec()
        if not isinstance(spec, Spec):
            raise IRError(f"fragment {self.name!r}: expected build_spec to return a Spec, found {type(spec).__name__}")
        return spec

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


@dataclass(frozen=True)
class _Built:
    """A built spec as a ``build_spec`` (what a pickled or copied :class:`Fragment` carries)."""

    spec: Spec

    def __call__(self) -> Spec:
        return self.spec


def _cell_set(cells: object, where: str, inner_n: int, inner_d: int) -> CellSet:
    """``cells`` as a set of ``(row, col)`` int pairs inside the ``inner_n×inner_d`` state: any
    collection of pairs (a set's order does not matter; duplicates mean the cell once), numpy
    integers converted; a mapping (it would read as its keys), a string, a bool or a float
    coordinate, or a cell outside the state raises :class:`IRError` (:class:`ShapeError`)."""
    if isinstance(cells, (Mapping, str, bytes)) or not hasattr(cells, "__iter__"):
        raise IRError(f"{where}: expected a collection of (row, col) cells, found {type(cells).__name__} {safe_repr(cells, 40)}")
    if id(type(cells)) in _PLAIN_COLLECTIONS and all_of(tuple, cells) and set(map(len, cells)) <= _TWO:
        rows, cols = zip(*cast(Iterable[tuple[int, int]], cells)) if cells else ((), ())
        if all_int(rows) and all_int(cols) and (
                not cells or (min(rows) >= 0 and max(rows) < inner_n and min(cols) >= 0 and max(cols) < inner_d)):
            # every cell a tuple of two plain ints inside the state: the loop below would convert
            # nothing (as_index keeps an int) and find no cell outside, so the set is the cells as given
            return frozenset(cells)
    return _cell_set_checked(cells, where, inner_n, inner_d)


_PLAIN_COLLECTIONS = type_ids(frozenset, set, tuple, list)  # iterated more than once: only these exact types
_TWO = frozenset({2})


def _cell_set_checked(cells: Iterable[object], where: str, inner_n: int, inner_d: int) -> CellSet:
    """:func:`_cell_set` cell by cell: each converted by ``as_index``, then the bounds checked."""
    out: set[tuple[int, int]] = set()
    for c in cells:
        i, j = (as_index(c[0]), as_index(c[1])) if isinstance(c, (tuple, list)) and len(c) == 2 else (None, None)
        if i is None or j is None:
            raise IRError(f"{where}: expected cells (row, col) of two ints, found {safe_repr(c, 40)}")
        out.add((i, j))
    bad = [c for c in out if not (0 <= c[0] < inner_n and 0 <= c[1] < inner_d)]
    if bad:
        raise ShapeError(f"{where}: cells {describe_cells(bad)} are outside the {inner_n}×{inner_d} state")
    return frozenset(out)


def _mask_layer(inner_n: int, inner_d: int, cells: CellSet) -> Layer:
    """The fixed gate ``B ⊙ u`` with ``B`` = indicator of ``cells`` (W = 0, b1 = B, h = e_0, b2 = 0)."""
    b1 = Grid.from_cells(inner_n, inner_d, {c: 1 for c in cells})
    h = Grid.zeros(inner_n, inner_d).paint(0, 1, 0, inner_d, 1)
    return Layer.make(inner_n, inner_d, b1=b1, h=h)


def _reads(c: Circuit, roots: Iterable[int]) -> set[int]:
    """The nodes ``roots`` depend on (themselves included)."""
    need, stack, nd = set(), list(roots), c.num_inputs
    while stack:
        v = stack.pop()
        if v not in need:
            need.add(v)
            if v >= nd:
                stack.extend(a for a in c.gates[v - nd].args if a not in need)
    return need


def check_spec(frag: Fragment, spec: Spec) -> None:
    """Structural agreement of a spec with its fragment (raises :class:`IRError`): shapes, inputs
    read (by the outputs and by every checkpoint: entry cells only), zero outside ``exit``, and
    checkpoints after layers in ``[0, L]`` in order, naming cells inside the state once each,
    nodes the spec has and parameters of the spec or the layers only."""
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
    prev = 0
    for k, (layer, cells) in enumerate(spec.checkpoints):
        where = f"fragment {frag.name!r}: checkpoint {k} (after layer {layer})"
        if not 0 <= layer <= len(frag.layers):
            raise IRError(f"fragment {frag.name!r}: checkpoint after layer {layer} is outside [0, {len(frag.layers)}]")
        if layer < prev:
            raise IRError(f"{where}: checkpoints must come in order of layer; found it after a checkpoint after layer {prev}")
        prev = layer
        seen: set[tuple[int, int]] = set()
        for cell in cells:
            at = (cell.row, cell.col)
            if not (cell.row < nn and cell.col < dd):
                raise IRError(f"{where}: cell {at} is outside the {nn}×{dd} state")
            if at in seen:
                raise IRError(f"{where}: cell {at} is listed twice")
            seen.add(at)
            for v in cell.nodes():
                if v >= c.num_nodes:
                    raise IRError(f"{where}: cell {at} names node %{v}, but the spec has {c.num_nodes} nodes")
        roots = [v for cell in cells for v in cell.nodes()]
        read = {(v // dd, v % dd) for v in _reads(c, roots) if v < nn * dd}
        if not read <= frag.entry:
            raise IRError(f"{where}: reads cells {describe_cells(read - frag.entry)} outside the entry interface")
        named = frozenset().union(*(cell.params() for cell in cells))
        if named:
            extra = named - c.params() - frag.model().params()
            if extra:
                raise IRError(f"{where}: uses the parameter(s) {sorted(extra)}, which neither the spec nor the layers have")


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
    raises :class:`IRError` (name a circuit node for it instead). ``entry`` is a collection of
    :class:`Cell` objects, each cell at most once; ``first_layer`` an int ≥ 0 (numpy integers
    converted, never a bool); anything else raises :class:`IRError`.
    """
    from symverify.kernel.semantics.evaluate import eval_circuit_nodes
    from symverify.kernel.semantics.rings import AffineRing

    start = as_index(first_layer)
    if start is None or start < 0:
        raise IRError(f"fragment {frag.name!r} boundaries: expected an int first_layer ≥ 0, found {safe_repr(first_layer, 40)}")
    first_layer = start
    if isinstance(entry, (Mapping, str, bytes)) or not hasattr(entry, "__iter__"):
        raise IRError(f"fragment {frag.name!r} boundaries: expected a collection of entry Cells, found {type(entry).__name__}")
    spec = frag.spec()
    check_spec(frag, spec)
    nn, dd = frag.inner_n, frag.inner_d
    state = [Affine() for _ in range(nn * dd)]
    seen: set[tuple[int, int]] = set()
    for c in entry:
        if not isinstance(c, Cell):
            raise IRError(f"fragment {frag.name!r} boundaries: expected entry Cells, found {type(c).__name__} {safe_repr(c, 40)}")
        if (c.row, c.col) not in frag.entry:
            raise IRError(f"fragment {frag.name!r}: entry cell ({c.row}, {c.col}) is outside its entry interface")
        if (c.row, c.col) in seen:
            raise IRError(f"fragment {frag.name!r} boundaries: entry cell ({c.row}, {c.col}) is listed twice")
        seen.add((c.row, c.col))
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
