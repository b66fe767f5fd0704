"""Attacks with lying subclasses of built-in types and of the IR's own classes, in every position of the public API.

A value of a subclass of ``int``, ``str``, ``float``, ``Fraction``, ``tuple``, ``list`` or ``dict``
(``bool`` cannot be subclassed) may answer ``==``, ``hash``, ``<``, ``%``, ``*``, ``str``,
``len``, iteration or indexing otherwise than the value it stores. The IR's defence is to read
such a value as its plain built-in value where it enters (:func:`~symverify.kernel.ir.scalar.plain_int`,
:func:`~symverify.kernel.ir.scalar.plain_str`, :func:`~symverify.kernel.ir.scalar.plain_items`) or
to refuse it. The harness below makes lying subclasses (:func:`lying`: a subclass of a built-in type
whose chosen methods lie) and, for each constructor and parameter, passes one in each position
and asserts: either the result is the result with the plain value (compared through
:func:`plain_form`, which also fails on any subclass left inside the result), or a
:class:`~symverify.errors.SymverifyError` is raised; and ``verify`` never proves a pair that is not
equivalent, whatever lying option it is given.

Defects this round found (each now read as its plain value):

- a layer ``mode`` given as a ``str`` subclass was looked up by its hash (``'causal'`` hashing as
  ``'cyclic'`` built a cyclic layer);
- ``verify``'s ``method``, ``backend`` and ``numeric`` given as ``str`` subclasses: the prover was
  picked by hash, the options by ``==`` (a method spelled ``'exact'`` ran ``randomized``, a backend
  spelled ``'python'`` ran torch);
- a ``timeout`` given as an ``int`` or ``float`` subclass passed the ``> 0`` check by its own ``>``
  and set the deadline by its own ``+`` (``-1.0`` ran without a limit);
- an ``error_bound`` given as a ``float`` subclass was read by its own ``as_integer_ratio``
  (``1e-30`` was taken as ``1/2``: proved with a failure bound of up to one half);
- a :class:`~symverify.kernel.ir.scalar.Sym` subclass was kept as a coefficient (the exact and z3
  methods read it through its own methods, the encoding refused it);
- ``tuple``/``list``/``dict`` subclasses whose length, iteration, indexing or ``items`` disagree
  with what they store were read through those methods (certificate cells, sparse-matrix entries,
  dense rows, grid rows, permutations, circuit gates and outputs, model layers, butterfly diagonals);
- circuit and model names given as ``str`` subclasses were stored as such;
- ``Grid.from_cells`` read a ``dict`` subclass by its own ``items()`` and crashed (``ValueError``) on a
  key that is not a pair, ``Grid.paint_cells`` likewise on a cell that is not a triple;
  ``Kaleidoscope.lift`` compared the new size by its own ``==``; ``evaluate`` checked an input's
  shape through its ``len`` and read it through its iteration (a crash, ``TypeError``);
- ``from_zoology``'s ``form`` was compared by its own ``!=`` (``'auto'`` built the pair form) and
  ``seq_len`` by its own ``<``; a :class:`Factorization` kept its theorem, resource and bound keys and
  values as given, so ``over_bound`` compared by a subclass's ``>`` and ``items()``; the gated builders
  (``hyena``, ``h3``, ``gated_conv``) computed with a size's own ``*``, ``+`` and ``str``; a compile
  result (``Compiled``) kept its method, notes and resource and bound tables as given.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import SymverifyError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.butterfly import ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.frozen import ReadOnlyMapping
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, sym
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import SparseMatrix, check_permutation
from symverify.kernel.provers.options import Options

# ---- the factory of lying subclasses ------------------------------------------------------------


def _other(x: Any) -> Any:
    """A plain value of the same kind as ``x`` but different (what a lie answers)."""
    if isinstance(x, bool):
        return not x
    if isinstance(x, int):
        return int.__index__(x) + 1
    if isinstance(x, float):
        return float.__float__(x) * 2 + 1
    if isinstance(x, Fraction):
        return Fraction(x.numerator + 1, x.denominator)
    if isinstance(x, str):
        return str.__str__(x) + "x"
    return x


def _first_half(x: Any) -> Any:
    return iter(list(type(x).__mro__[1].__iter__(x))[: max(0, len(list(type(x).__mro__[1].__iter__(x))) - 1)])


LIES: dict[type, dict[str, Callable[..., Any]]] = {
    int: {
        "__eq__": lambda s, o: True, "__ne__": lambda s, o: False, "__hash__": lambda s: 0,
        "__index__": lambda s: int.__int__(s) + 1, "__int__": lambda s: int.__index__(s) + 1,
        "__str__": lambda s: "7", "__repr__": lambda s: "7", "__format__": lambda s, f: "7",
        "__lt__": lambda s, o: True, "__le__": lambda s, o: True, "__gt__": lambda s, o: False, "__ge__": lambda s, o: True,
        "__mod__": lambda s, o: 0, "__rmod__": lambda s, o: 0, "__mul__": lambda s, o: 1, "__rmul__": lambda s, o: 1,
        "__add__": lambda s, o: 0, "__radd__": lambda s, o: float("inf"), "__sub__": lambda s, o: 0,
        "__bool__": lambda s: not int.__bool__(s), "__floordiv__": lambda s, o: 1,
    },
    float: {
        "__eq__": lambda s, o: True, "__hash__": lambda s: 0, "__gt__": lambda s, o: True, "__lt__": lambda s, o: False,
        "__le__": lambda s, o: False, "__ge__": lambda s, o: True,
        "__add__": lambda s, o: float("inf"), "__radd__": lambda s, o: float("inf"),
        "__float__": lambda s: 0.5, "as_integer_ratio": lambda s: (1, 2), "__repr__": lambda s: "0.5",
        "__str__": lambda s: "0.5", "__format__": lambda s, f: "0.5", "__bool__": lambda s: False,
    },
    Fraction: {
        "__eq__": lambda s, o: True, "__hash__": lambda s: 0, "__lt__": lambda s, o: False, "__gt__": lambda s, o: True,
        "__le__": lambda s, o: True, "__ge__": lambda s, o: True, "__str__": lambda s: "1/2", "__repr__": lambda s: "Fraction(1, 2)",
        "__mul__": lambda s, o: 1, "__rmul__": lambda s, o: 1, "__add__": lambda s, o: 0, "__radd__": lambda s, o: 0,
        "__mod__": lambda s, o: 0, "__rmod__": lambda s, o: 0, "__bool__": lambda s: False,
        "numerator": property(lambda s: 1), "denominator": property(lambda s: 2),
    },
    str: {
        "__eq__": lambda s, o: True, "__ne__": lambda s, o: False, "__hash__": lambda s: hash("causal"),
        "__str__": lambda s: "cyclic", "__repr__": lambda s: "'cyclic'", "__format__": lambda s, f: "cyclic",
        "__len__": lambda s: 0, "__iter__": lambda s: iter("cyclic"), "__getitem__": lambda s, k: "c",
        "__lt__": lambda s, o: True, "__bool__": lambda s: False, "strip": lambda s, *a: "cyclic",
        "lower": lambda s: "cyclic", "__contains__": lambda s, o: True,
    },
    tuple: {
        "__len__": lambda s: 3, "__iter__": _first_half, "__getitem__": lambda s, k: 0,
        "__eq__": lambda s, o: True, "__hash__": lambda s: 0, "__bool__": lambda s: True,
        "__contains__": lambda s, o: True,
    },
    list: {
        "__len__": lambda s: 3, "__iter__": _first_half, "__getitem__": lambda s, k: 0,
        "__eq__": lambda s, o: True, "__bool__": lambda s: True, "__contains__": lambda s, o: True,
    },
    dict: {
        "items": lambda s: [], "keys": lambda s: [], "values": lambda s: [], "__iter__": lambda s: iter(()),
        "__len__": lambda s: 0, "__getitem__": lambda s, k: 0, "__contains__": lambda s, o: False,
    },
}

_CLASSES: dict[tuple[type, frozenset[str]], type] = {}


def lying(value: Any, lies: frozenset[str] | None = None) -> Any:
    """``value`` as an instance of a subclass of its type whose methods named in ``lies`` (all of
    :data:`LIES` for the type when None) answer otherwise than the value it stores."""
    base = next(t for t in (int, float, Fraction, str, tuple, list, dict) if type(value) is t)
    lies = frozenset(LIES[base]) if lies is None else lies
    key = (base, lies)
    if key not in _CLASSES:
        ns = {k: LIES[base][k] for k in lies}
        ns.setdefault("__hash__", base.__hash__)  # defining __eq__ alone would make the value unhashable
        _CLASSES[key] = type(f"Lying{base.__name__.title()}", (base,), ns)
    cls = _CLASSES[key]
    if base is Fraction:
        return cls(value.numerator, value.denominator)
    return cls(value)


def lies_for(value: Any) -> st.SearchStrategy[frozenset[str]]:
    """The subsets of lies a subclass of ``value``'s type may tell (at least one)."""
    base = next(t for t in (int, float, Fraction, str, tuple, list, dict) if type(value) is t)
    return st.frozensets(st.sampled_from(sorted(LIES[base])), min_size=1)


# ---- reading a result as plain data -------------------------------------------------------------

_LEAVES = (int, float, str, bool, type(None), Fraction, bytes)


def plain_form(x: Any) -> Any:
    """``x`` as nested plain tuples, read without calling any overridable method of the values: the
    IR's objects by their dataclass fields, built-in containers by their built-in iteration. A value
    of a subclass of a built-in type, or of a subclass of an IR class, anywhere inside gives a marker
    that no plain result has, so ``plain_form(a) == plain_form(b)`` says the two hold the same plain values."""
    t = type(x)
    if isinstance(x, enum.Enum):
        return ("enum", t.__qualname__, x.name)
    if t in _LEAVES:
        if t is Fraction:
            n, d = x.numerator, x.denominator
            return ("Fraction", plain_form(n), plain_form(d))
        return (t.__name__, x)
    if t is Sym:
        return ("Sym", plain_form(Sym.__dict__["terms"].__get__(x)))
    if t is tuple or t is list:
        return (t.__name__, tuple(plain_form(v) for v in t.__iter__(x)))
    if t is dict or t is ReadOnlyMapping:
        return (t.__name__, tuple((plain_form(k), plain_form(v)) for k, v in dict.items(x)))
    if dataclasses.is_dataclass(x) and t.__module__.startswith("symverify") and not any(
            b.__module__ == t.__module__ and b.__qualname__ == t.__qualname__ for b in t.__mro__[1:]):
        # an IR object of a subclass defined in a test is marked by its type (it is not in the package)
        return (t.__qualname__, tuple(plain_form(getattr(x, f.name)) for f in dataclasses.fields(x)))
    if t.__module__.startswith("symverify") and hasattr(x, "rows") and hasattr(x, "cols"):  # a CellArray
        return (t.__qualname__, repr(x))
    return ("NOT PLAIN", t.__module__, t.__qualname__)


def outcome(build: Callable[[], Any]) -> Any:
    """``plain_form`` of ``build()``, or the error type when it raises a :class:`SymverifyError`."""
    try:
        return plain_form(build())
    except SymverifyError as e:
        return ("error", type(e).__name__)


def check_position(build: Callable[[Any], Any], value: Any, lies: frozenset[str]) -> None:
    """``build(lying(value))`` is ``build(value)`` read as plain, or a :class:`SymverifyError`
    (any other exception fails the test)."""
    want = outcome(lambda: build(value))
    got = outcome(lambda: build(lying(value, lies)))
    assert got == want or got[0] == "error", (got, want)


HYP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---- constructors: every position, every lie ------------------------------------------------------

A, B = sym("a"), sym("b")


def _fact(theorem: Any = "t", resources: Any = None, bounds: Any = None) -> Any:
    """A factorization of the identity with the given fields, and what ``over_bound`` says of it."""
    f = Factorization(Kaleidoscope.identity(2), theorem, True, {"s": 2} if resources is None else resources,
                      {"s": 1} if bounds is None else bounds)
    return f, tuple(f.over_bound())


def _compiled(method: Any = "m", resources: Any = None, bounds: Any = None, notes: Any = ()) -> Any:
    """A compile result with the given fields, and what ``over_bound`` says of it."""
    from symverify.compiler.result import Compiled

    c = Compiled(Model(1, 1, 1, 1, (), "m"), None, {"layers": 2} if resources is None else resources, method,
                 {"layers": 1} if bounds is None else bounds, notes)
    return c.method, c.resources, c.bounds, c.notes, tuple(c.over_bound())

G0 = (Gate.mul(0, 1),)

POSITIONS: dict[str, tuple[Callable[[Any], Any], Any]] = {
    # Gate
    "Gate.const value int": (lambda v: Gate.const(v), 3),
    "Gate.const value Fraction": (lambda v: Gate.const(v), Fraction(2, 3)),
    "Gate.const value str": (lambda v: Gate.const(v), "5/7"),
    "Gate.lin a": (lambda v: Gate.lin(v, 2, 1, 3), 0),
    "Gate.lin alpha": (lambda v: Gate.lin(0, v, 1, 3), Fraction(1, 3)),
    "Gate.scale alpha str": (lambda v: Gate.scale(0, v), "-4"),
    "Gate.mul b": (lambda v: Gate.mul(0, v), 1),
    "Gate args tuple": (lambda v: Gate(Gate.mul(0, 1).op, v), (0, 1)),
    "Gate coeffs tuple": (lambda v: Gate(Gate.scale(0, 2).op, (0, 0), v), (2, 0)),
    # Circuit
    "Circuit n": (lambda v: Circuit(v, 2, G0, (2,)), 1),
    "Circuit d": (lambda v: Circuit(1, v, G0, (2,)), 2),
    "Circuit gates tuple": (lambda v: Circuit(1, 2, v, (2,)), (Gate.mul(0, 1), Gate.add(0, 2))),
    "Circuit gates list": (lambda v: Circuit(1, 2, v, (2,)), [Gate.mul(0, 1), Gate.add(0, 2)]),
    "Circuit outputs tuple": (lambda v: Circuit(1, 2, G0, v), (2, 0)),
    "Circuit outputs list": (lambda v: Circuit(1, 2, G0, v), [2, 0]),
    "Circuit output": (lambda v: Circuit(1, 2, G0, (v,)), 2),
    "Circuit name": (lambda v: Circuit(1, 2, G0, (2,), v), "c"),
    "Circuit.trace n": (lambda v: Circuit.trace(lambda u: [u[0][0] * u[-1][0]], n=v, d=1), 2),
    # Grid
    "Grid rows": (lambda v: Grid(v, 2, 0, ((0, 1, 0, 2, 1),)), 2),
    "Grid cols": (lambda v: Grid(2, v), 3),
    "Grid fill": (lambda v: Grid(2, 2, v), Fraction(1, 2)),
    "Grid fill int": (lambda v: Grid(2, 2, v), 4),
    "Grid rects tuple": (lambda v: Grid(2, 2, 0, v), ((0, 1, 0, 1, 5), (1, 2, 0, 2, 3))),
    "Grid rect": (lambda v: Grid(2, 2, 0, (v,)), (0, 1, 0, 2, 7)),
    "Grid rect bound": (lambda v: Grid(4, 4, 0, ((0, v, 0, 1, 1),)), 3),
    "Grid rect value": (lambda v: Grid(2, 2, 0, ((0, 1, 0, 1, v),)), 9),
    "Grid.full value": (lambda v: Grid.full(2, 1, v), Fraction(3, 4)),
    "Grid.identity size": (lambda v: Grid.identity(v), 3),
    "Grid.from_rows rows": (lambda v: Grid.from_rows(v), [[1, 0], [0, 2], [3, 4]]),
    "Grid.from_rows row": (lambda v: Grid.from_rows([v, [4, 5, 6]]), [1, 2, 3]),
    "Grid.paint bound": (lambda v: Grid.zeros(3, 3).paint(0, v, 0, 1, 1), 2),
    "Grid.symbolic name": (lambda v: Grid.symbolic(v, 1, 2), "W"),
    # Layer and Model
    "Layer mode": (lambda v: Layer.make(2, 1, mode=v), "causal"),
    "Layer mode cyclic": (lambda v: Layer.make(2, 1, mode=v), "cyclic"),
    "Model n": (lambda v: Model(v, 1, 2, 1, (Layer.make(2, 1),)), 1),
    "Model inner_n": (lambda v: Model(1, 1, v, 1, (Layer.make(2, 1),)), 2),
    "Model layers tuple": (lambda v: Model(1, 1, 2, 1, v), (Layer.make(2, 1), Layer.make(2, 1, mode="cyclic"))),
    "Model layers list": (lambda v: Model(1, 1, 2, 1, v), [Layer.make(2, 1), Layer.make(2, 1, mode="cyclic")]),
    "Model name": (lambda v: Model(1, 1, 1, 1, (), v), "m"),
    # certificates
    "Cell row": (lambda v: Cell(v, 0, ((0, 1),)), 1),
    "Cell terms tuple": (lambda v: Cell(0, 0, v), ((0, 1), (3, 2))),
    "Cell term": (lambda v: Cell(0, 0, (v,)), (2, 5)),
    "Cell node": (lambda v: Cell(0, 0, ((v, 1),)), 2),
    "Cell coefficient": (lambda v: Cell(0, 0, ((0, v),)), Fraction(1, 2)),
    "Cell const": (lambda v: Cell(0, 0, ((0, 1),), v), 3),
    "Boundary layer": (lambda v: Boundary(v, (Cell.node(0, 0, 0),)), 1),
    "Boundary cells tuple": (lambda v: Boundary(0, v), (Cell.node(0, 0, 0), Cell.node(1, 0, 1))),
    "Boundary label": (lambda v: Boundary(0, (), v), "stage"),
    "Certificate boundaries": (lambda v: Certificate(v), (Boundary(0, ()), Boundary(1, ()))),
    "Certificate meta": (lambda v: Certificate((Boundary(0, ()),), v), {"by": "hand", "on": "paper"}),
    "Certificate meta pair": (lambda v: Certificate((Boundary(0, ()),), (v,)), ("by", "hand")),
    "Certificate meta key": (lambda v: Certificate((Boundary(0, ()),), ((v, "x"),)), "by"),
    # butterflies
    "ButterflyFactor size": (lambda v: ButterflyFactor(v, 1, (1,), (0,), (0,), (1,)), 2),
    "ButterflyFactor stride": (lambda v: ButterflyFactor(4, v, (1, 1), (0, 0), (0, 0), (1, 1)), 2),
    "ButterflyFactor diagonal": (lambda v: ButterflyFactor(4, 1, v, (0, 0), (0, 0), (1, 1)), (1, 2)),
    "ButterflyFactor diagonal list": (lambda v: ButterflyFactor(4, 1, v, (0, 0), (0, 0), (1, 1)), [1, 2]),
    "ButterflyFactor entry": (lambda v: ButterflyFactor(2, 1, (v,), (0,), (0,), (1,)), Fraction(5, 2)),
    "Kaleidoscope.identity n": (lambda v: Kaleidoscope.identity(v), 3),
    "Kaleidoscope n": (lambda v: Kaleidoscope(v, 4, ()), 3),
    "Kaleidoscope groups": (lambda v: Kaleidoscope(2, 2, v), tuple(Kaleidoscope.identity(2).groups) * 2),
    # sparse matrices and permutations
    "SparseMatrix rows": (lambda v: SparseMatrix(v, 3, ((1, 2, 5),)), 2),
    "SparseMatrix entries": (lambda v: SparseMatrix(3, 3, v), ((0, 1, 1), (2, 2, 4))),
    "SparseMatrix entry": (lambda v: SparseMatrix(3, 3, (v,)), (2, 1, 9)),
    "SparseMatrix entry list": (lambda v: SparseMatrix(3, 3, (v,)), [2, 1, 9]),
    "SparseMatrix value": (lambda v: SparseMatrix(3, 3, ((2, 1, v),)), Fraction(9, 4)),
    "SparseMatrix.from_dense rows": (lambda v: SparseMatrix.from_dense(v), [[0, 1, 0], [1, 0, 0], [0, 0, 2]]),
    "SparseMatrix.from_dense row": (lambda v: SparseMatrix.from_dense([v, [1, 0, 0], [0, 0, 2]]), [0, 1, 0]),
    "SparseMatrix.from_dict": (lambda v: SparseMatrix.from_dict(3, 3, v), {(0, 1): 1, (2, 2): 4}),
    "SparseMatrix.from_dict key": (lambda v: SparseMatrix.from_dict(3, 3, {v: 1}), (2, 1)),
    "SparseMatrix.permutation": (lambda v: SparseMatrix.permutation(v), [1, 0, 2]),
    "check_permutation": (lambda v: check_permutation(v), (2, 0, 1)),
    "Grid.from_cells cells": (lambda v: Grid.from_cells(2, 2, v), {(0, 1): 3, (1, 1): 4}),
    "Grid.from_cells key": (lambda v: Grid.from_cells(3, 3, {v: 3}), (2, 1)),
    "Grid.paint_cells cells": (lambda v: Grid.zeros(3, 3).paint_cells(v), [(0, 1, 3), (2, 2, 5)]),
    "Grid.paint_cells cell": (lambda v: Grid.zeros(3, 3).paint_cells([v]), (2, 1, 3)),
    "Kaleidoscope.lift size": (lambda v: Kaleidoscope.identity(4).lift(v), 8),
    # factorizations (over_bound compares each resource with its bound)
    "Factorization theorem": (lambda v: _fact(theorem=v), "Theorem 2"),
    "Factorization resources": (lambda v: _fact(resources=v), {"s": 2, "t": Fraction(1, 2)}),
    "Factorization bounds": (lambda v: _fact(bounds=v), {"s": 1, "w": 0}),
    "Factorization resource int": (lambda v: _fact(resources={"s": v}), 3),
    "Factorization resource Fraction": (lambda v: _fact(resources={"s": v}), Fraction(5, 2)),
    "Factorization resource float": (lambda v: _fact(resources={"s": v}), 2.5),
    "Factorization bound int": (lambda v: _fact(bounds={"s": v}), 2),
    "Factorization bound Fraction": (lambda v: _fact(bounds={"s": v}), Fraction(3, 2)),
    "Factorization bound float": (lambda v: _fact(bounds={"s": v}), 2.25),
    "Factorization bound key": (lambda v: _fact(bounds={v: 1}), "s"),
    "Compiled method": (lambda v: _compiled(method=v), "kaleidoscope"),
    "Compiled resources": (lambda v: _compiled(resources=v), {"layers": 2, "params": 3}),
    "Compiled bounds": (lambda v: _compiled(bounds=v), {"layers": 1}),
    "Compiled resource int": (lambda v: _compiled(resources={"layers": v}), 2),
    "Compiled bound int": (lambda v: _compiled(bounds={"layers": v}), 1),
    "Compiled bound Fraction": (lambda v: _compiled(bounds={"layers": v}), Fraction(3, 2)),
    "Compiled bound float": (lambda v: _compiled(bounds={"layers": v}), 1.5),
    "Compiled bound key": (lambda v: _compiled(bounds={v: 1}), "layers"),
    "Compiled notes": (lambda v: _compiled(notes=v), ("a", "b")),
    # evaluation inputs
    "evaluate circuit input": (lambda v: sv.evaluate(Circuit(2, 1, (Gate.mul(0, 1),), (2,)), v), [[3], [4]]),
    "evaluate circuit row": (lambda v: sv.evaluate(Circuit(2, 1, (Gate.mul(0, 1),), (2,)), [v, [4]]), [3]),
    "evaluate model input": (lambda v: sv.evaluate(Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.full(1, 1, 2), b2=Grid.full(2, 1, 1)),)), v),
                             [[3], [4]]),
    # symbols
    "sym name": (lambda v: sym(v), "a"),
}


LIBRARY: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "walsh_hadamard": (lambda v: sv.library.walsh_hadamard(v), 4),
    "prefix_sums": (lambda v: sv.library.prefix_sums(v), 3),
    "product_tree": (lambda v: sv.library.product_tree(v), 4),
    "poly_mult": (lambda v: sv.library.poly_mult(v), 2),
    "elementary_symmetric": (lambda v: sv.library.elementary_symmetric(3, v), 2),
    "determinant": (lambda v: sv.library.determinant(v), 2),
    "matvec_bilinear": (lambda v: sv.library.matvec_bilinear(v), 2),
    "random_circuit seed": (lambda v: sv.library.random_circuit(2, 1, 4, 2, seed=v), 3),
    "random_circuit size": (lambda v: sv.library.random_circuit(2, 1, v, 2, seed=1), 4),
    "hyena N": (lambda v: sv.library.hyena(v, 1), 2),
    "hyena d": (lambda v: sv.library.hyena(2, v), 1),
    "hyena order": (lambda v: sv.library.hyena(2, 1, v), 2),
    "hyena short_len": (lambda v: sv.library.hyena(3, 1, short_len=v), 2),
    "h3 N": (lambda v: sv.library.h3(v, 1), 2),
    "h3 d": (lambda v: sv.library.h3(2, v), 1),
    "gated_conv N": (lambda v: sv.library.gated_conv(v, sv.library.gated_conv_weights(2, 1)), 2),
    "gated_conv_weights order": (lambda v: sv.library.gated_conv(2, sv.library.gated_conv_weights(2, 1, v)), 3),
}


@pytest.mark.parametrize("position", sorted(POSITIONS) + sorted(LIBRARY))
@HYP
@given(data=st.data())
def test_a_lying_value_in_a_constructor_or_library_size_is_read_as_its_plain_value_or_refused(
        position: str, data: st.DataObject) -> None:
    build, value = POSITIONS[position] if position in POSITIONS else LIBRARY[position]
    check_position(build, value, data.draw(lies_for(value)))


@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_a_value_that_tells_every_lie_at_once_is_read_as_its_plain_value_or_refused(position: str) -> None:
    build, value = POSITIONS[position]
    check_position(build, value, frozenset(LIES[type(value)]))


# ---- subclasses of the IR's own classes ----------------------------------------------------------


class _SymSub(Sym):
    """The parameter ``a`` that equals every value and hashes as ``b``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash(sym("b"))

    def names(self) -> frozenset[str]:
        return frozenset({"b"})


@pytest.mark.parametrize("build", [
    lambda v: Gate.const(v), lambda v: Gate.scale(0, v), lambda v: Grid.full(1, 1, v), lambda v: Grid(1, 1, v),
    lambda v: Grid(2, 2, 0, ((0, 1, 0, 1, v),)), lambda v: Cell(0, 0, ((0, v),), v), lambda v: SparseMatrix(1, 1, ((0, 0, v),)),
    lambda v: ButterflyFactor(2, 1, (v,), (0,), (0,), (1,)),
], ids=["const", "scale", "Grid.full", "fill", "rectangle", "cell", "sparse", "factor"])
def test_a_sym_subclass_is_stored_as_the_plain_sym_of_its_terms(build: Callable[[Any], Any]) -> None:
    """A ``Sym`` subclass was kept as a coefficient: the exact and z3 methods read it through its own
    methods (``==``, ``hash``, ``names``), the encoding refused it. It is now the plain ``Sym`` of the
    terms it stores."""
    assert plain_form(build(_SymSub(A.terms))) == plain_form(build(A))


def test_a_sym_subclass_coefficient_is_its_own_parameter_in_every_method() -> None:
    lhs = Circuit(1, 1, (Gate.scale(0, _SymSub(A.terms)),), (1,))
    rhs = Circuit(1, 1, (Gate.scale(0, B),), (1,))
    assert lhs.params() == {"a"}
    for method in ("exact", "exact-sympy", "z3", "randomized", "auto"):
        assert sv.verify(lhs, rhs, method=method).refuted, method
        assert sv.verify(lhs, Circuit(1, 1, (Gate.scale(0, A),), (1,)), method=method).proved, method


# ---- verify's options: never proved for a pair that differs ---------------------------------------

SQUARE = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
IDENT = Circuit(1, 1, (), (0,))
DOUBLE = Circuit(1, 1, (Gate.add(0, 0),), (1,))
TWICE = Circuit(1, 1, (Gate.scale(0, 2),), (1,))

OPTION_VALUES: dict[str, list[tuple[str, Any]]] = {
    "method": [(m, m) for m in ("auto", "exact", "exact-sympy", "randomized", "z3")],
    "backend": [("randomized", "python"), ("randomized", "torch"), ("exact", "sympy"), ("auto", "flint")],
    "seed": [("randomized", 5), ("auto", 0)],
    "trials": [("randomized", 3), ("auto", 2)],
    "error_bound": [("randomized", Fraction(1, 2**40)), ("randomized", 1e-30), ("auto", "1/1000"), ("randomized", 0.25)],
    "timeout": [("exact", 30), ("randomized", 30.0), ("z3", 0.5)],
    "max_monomials": [("exact", 1000)],
    "memory_limit": [("exact", 1 << 30)],
    "numeric": [("auto", "float64"), ("exact", "float32")],
}
_OPTION_CASES = [(name, m, v) for name, vs in OPTION_VALUES.items() for m, v in vs]


def _options(method: str, name: str, value: Any) -> Any:
    kwargs = {name: value} if name != "method" else {}
    return Options.from_call(value if name == "method" else method, **kwargs)


def _option_form(o: Options) -> Any:
    return plain_form(dataclasses.replace(o, deadline=None)) if isinstance(o, Options) else o


@pytest.mark.parametrize(("name", "method", "value"), _OPTION_CASES)
@HYP
@given(data=st.data())
def test_a_lying_option_is_read_as_its_plain_value_or_refused(name: str, method: str, value: Any, data: st.DataObject) -> None:
    if name == "numeric":
        pytest.importorskip("torch")
    lies = data.draw(lies_for(value))
    want = outcome(lambda: _option_form(_options(method, name, value)))
    got = outcome(lambda: _option_form(_options(method, name, lying(value, lies))))
    assert got == want or got[0] == "error", (got, want)


@pytest.mark.parametrize(("name", "method", "value"), _OPTION_CASES)
def test_verify_with_a_lying_option_never_proves_a_pair_that_differs(name: str, method: str, value: Any) -> None:
    """Every lie at once, on ``u ↦ u²`` against ``u ↦ u`` and on ``u ↦ u + u`` against ``u ↦ 2u``:
    the first is never proved, the second is proved as with the plain option (or the call is refused)."""
    if name in ("numeric",) or value == "torch":
        pytest.importorskip("torch")
    liar = lying(value)
    kwargs: dict[str, Any] = {} if name == "method" else {name: liar}
    m = liar if name == "method" else method
    try:
        bad = sv.verify(SQUARE, IDENT, method=m, **kwargs)
    except SymverifyError:
        return
    assert not bad.proved, bad
    good = sv.verify(DOUBLE, TWICE, method=m, **kwargs)
    plain = sv.verify(DOUBLE, TWICE, method=value if name == "method" else method, **({} if name == "method" else {name: value}))
    assert (good.verdict, good.method) == (plain.verdict, plain.method)


def test_a_timeout_that_compares_as_positive_is_read_at_its_value() -> None:
    """``timeout=-1.0`` of a float subclass whose ``>`` says yes and whose ``+`` gives infinity ran
    without a limit; it is refused as the plain ``-1.0`` is."""
    for t in (lying(-1.0, frozenset({"__gt__", "__radd__"})), lying(-5, frozenset({"__gt__", "__radd__"}))):
        with pytest.raises(sv.UsageError, match=r"timeout: expected a positive number of seconds, found -(1\.0|5)"):
            sv.verify(SQUARE, IDENT, timeout=t)
    o = Options.from_call("exact", timeout=lying(2.5, frozenset({"__radd__"})))
    assert type(o.timeout) is float and o.timeout == 2.5 and o.deadline is not None and o.deadline < float("inf")


def test_an_error_bound_float_subclass_is_read_at_the_double_it_stores() -> None:
    """``error_bound=1e-30`` of a float subclass whose ``as_integer_ratio`` says ``(1, 2)`` was taken as
    ``1/2``: a proof with a failure bound of up to one half for a caller who asked for ``1e-30``."""
    eb = lying(1e-30, frozenset({"as_integer_ratio"}))
    assert Options.from_call("randomized", error_bound=eb).error_bound == Fraction(1e-30)
    rep = sv.verify(DOUBLE, TWICE, method="randomized", error_bound=eb)
    assert rep.proved and Fraction(rep.evidence["bound_log2"]) < -99


def test_a_method_or_backend_str_subclass_is_the_method_it_spells() -> None:
    """A method spelled ``'exact'`` that equals ``'randomized'`` and hashes as ``'exact'`` ran the
    randomized method; a backend spelled ``'python'`` equal to ``'torch'`` ran torch."""
    meth = type("M", (str,), {"__eq__": lambda s, o: str.__eq__("randomized", o), "__hash__": lambda s: hash("exact")})("exact")
    assert sv.verify(DOUBLE, TWICE, method=meth).method == "exact"
    be = type("B", (str,), {"__eq__": lambda s, o: str.__eq__("torch", o), "__hash__": lambda s: hash("python")})("python")
    assert Options.from_call("randomized", backend=be).modular == "python"


def test_a_layer_mode_str_subclass_is_the_mode_it_spells() -> None:
    both = type("Both", (str,), {"__eq__": lambda s, o: o in ("causal", "cyclic"), "__hash__": lambda s: hash("cyclic")})
    assert Layer.make(2, 1, mode=both("causal")).mode.value == "causal"


def test_a_fraction_subclass_is_read_by_the_integers_it_stores() -> None:
    """``Fraction(3, 4)`` of a subclass whose ``numerator``/``denominator`` say ``1``/``2`` was stored as ``1/2``."""
    f = lying(Fraction(3, 4), frozenset({"numerator", "denominator"}))
    assert plain_form(Grid.full(1, 1, f)) == plain_form(Grid.full(1, 1, Fraction(3, 4)))
    assert plain_form(Gate.const(f)) == plain_form(Gate.const(Fraction(3, 4)))


# ---- targets, permutations and library circuits ---------------------------------------------------


def _kal() -> Any:
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope

    return permutation_to_kaleidoscope([1, 0, 2])


@pytest.mark.parametrize("target", [
    [[0, 1, 0], [1, 0, 0], [0, 0, 1]], [[0, 1, 0], [1, 0, 0], [0, 0, 2]], {(0, 1): 1, (1, 0): 1, (2, 2): 1}, {(0, 1): 1},
], ids=["right rows", "wrong rows", "right dict", "wrong dict"])
@HYP
@given(data=st.data())
def test_a_lying_matrix_target_is_read_as_what_it_stores(target: Any, data: st.DataObject) -> None:
    from symverify.kernel.provers.matrix import verify_matrix

    k = _kal().kaleidoscope
    want = verify_matrix(k, target)
    liar = lying(target, data.draw(lies_for(target)))
    try:
        got = verify_matrix(k, liar)
    except SymverifyError:
        return
    assert (got.verdict, got.first_difference) == (want.verdict, want.first_difference)


@pytest.mark.parametrize("perm", [[1, 0, 2], [0, 1, 2], [2, 0, 1]])
def test_a_lying_permutation_is_read_as_what_it_stores(perm: list[int]) -> None:
    from symverify.kernel.provers.matrix import verify_permutation

    k = _kal().kaleidoscope
    for lies in ({"__len__"}, {"__iter__"}, {"__getitem__"}, set(LIES[list])):
        try:
            got = verify_permutation(k, lying(perm, frozenset(lies)))
        except SymverifyError:
            continue
        assert got.verdict == verify_permutation(k, perm).verdict, lies


def _builder(n: Any) -> Circuit:
    from symverify.ir.build import CircuitBuilder

    b = CircuitBuilder(n, 1)
    u = b.inputs()
    return b.build([u[0][0] * u[-1][0]], "x")


def _compile(method: Any = "kaleidoscope", plan: Any = "auto") -> Any:
    return sv.compile(sv.library.prefix_sums(3), method, plan=plan).model


BUILDERS: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "CircuitBuilder n": (_builder, 2),
    "compile method": (lambda v: _compile(method=v), "kaleidoscope"),
    "compile method dense": (lambda v: _compile(method=v), "dense"),
    "compile plan": (lambda v: _compile(plan=v), "greedy"),
}


@pytest.mark.parametrize("position", sorted(BUILDERS))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_lying_argument_of_a_builder_or_the_compiler_is_read_as_its_plain_value_or_refused(position: str, data: st.DataObject) -> None:
    build, value = BUILDERS[position]
    check_position(build, value, data.draw(lies_for(value)))


def _zoology(seq_len: Any = None, form: Any = "auto") -> Any:
    """``from_zoology`` of one fixed layer with a zero filter, so it is one paper layer and ``auto`` (one
    layer) and ``pair`` (two) differ: a lying ``form != 'pair'`` built the pair form for ``'auto'``."""
    torch = pytest.importorskip("torch")
    from symverify.executors.zoology import ZoologyBaseConv, from_zoology

    z = ZoologyBaseConv(2, 4)
    with torch.no_grad():
        for name, p in z.named_parameters():
            p.fill_(0.0 if "filter" in name else 0.5)
    return from_zoology(z, seq_len=seq_len, form=form)


ZOOLOGY: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "from_zoology seq_len": (lambda v: _zoology(seq_len=v), 3),
    "from_zoology form auto": (lambda v: _zoology(form=v), "auto"),
    "from_zoology form single": (lambda v: _zoology(form=v), "single"),
    "from_zoology form pair": (lambda v: _zoology(form=v), "pair"),
}


@pytest.mark.parametrize("position", sorted(ZOOLOGY))
def test_a_lying_seq_len_or_form_of_from_zoology_is_read_as_its_plain_value_or_refused(position: str) -> None:
    """``from_zoology(..., form=s)`` compared a ``str`` subclass by its own ``==`` and ``!=`` (``'auto'`` with
    ``!=`` always false built the two-layer pair form), ``seq_len`` by its own ``<`` and ``*``. Each lie
    alone, then all at once (a lying ``==`` alone turned the pair form into an error, hiding ``!=``)."""
    build, value = ZOOLOGY[position]
    for lie in sorted(LIES[type(value)]):
        check_position(build, value, frozenset({lie}))
    check_position(build, value, frozenset(LIES[type(value)]))


def test_a_fragment_stores_its_name_layers_and_bounds_as_plain_values() -> None:
    """A fragment's bound given as an ``int`` subclass was kept: ``over_bound`` compared the resources
    with it by its own ``<``; its name and layers likewise as given. They are now plain values."""
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.gadgets.fragment import Fragment
    from symverify.kernel.provers.fragment import prove_fragment

    f = shift_down(3, 1, 1)
    bounds = {lying(k): lying(v) for k, v in f.bounds.items()}
    g = Fragment(lying(f.name), f.inner_n, f.inner_d, lying(list(f.layers), frozenset({"__iter__", "__len__"})), f.entry, f.exit,
                 bounds, f.build_spec)
    assert plain_form((g.name, g.layers, tuple(g.bounds.items()))) == plain_form((f.name, f.layers, tuple(f.bounds.items())))
    assert prove_fragment(g).proved


def test_grid_cells_are_pairs_and_triples_of_ints_each_named_once() -> None:
    """``Grid.from_cells`` and ``Grid.paint_cells`` crashed (``ValueError``) on a key that is not a pair
    or a cell that is not a triple; two keys naming one cell (one an int subclass hashing as another
    number) were both painted, the later winning by the subclass's ordering."""
    with pytest.raises(sv.IRError, match=r"Grid.from_cells: expected a cell \(i, j\) of two ints, found \(1,\)"):
        Grid.from_cells(2, 2, {(1,): 3})
    with pytest.raises(sv.IRError, match=r"Grid.from_cells: expected a cell \(i, j\) of two ints, found \(1, 0.5\)"):
        Grid.from_cells(2, 2, {(1, 0.5): 3})
    with pytest.raises(sv.IRError, match=r"Grid.paint_cells: expected \(i, j, value\) triples, found \(1, 1\)"):
        Grid.zeros(2, 2).paint_cells([(1, 1)])
    other = lying(1, frozenset({"__hash__", "__eq__"}))
    with pytest.raises(sv.IRError, match="two keys name the same cell"):
        Grid.from_cells(2, 2, {(other, 0): 3, (1, 0): 4})
    assert Grid.from_cells(2, 2, {(1, 1): 2, (0, 1): 3}).rects == ((0, 1, 1, 2, 3), (1, 2, 1, 2, 2))
    with pytest.raises(sv.IRError, match=r"Grid.from_cells: expected a mapping \{\(i, j\): value\}, found list"):
        Grid.from_cells(2, 2, [((0, 1), 4)])  # a list of pairs: it has no items() (an AttributeError before)


@pytest.mark.parametrize("build", [
    lambda n: Grid.identity(n), lambda n: SparseMatrix.identity(n), lambda n: Grid.symbolic("W", n, 1), lambda n: Grid(n, 1).to_rows(),
], ids=["Grid.identity", "SparseMatrix.identity", "Grid.symbolic", "to_rows"])
def test_a_size_limit_is_checked_against_the_plain_value(build: Callable[[Any], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """``limits.check`` compared an int-subclass count by its own ``>``: a size "not above" the limit
    was expanded cell by cell (out of memory instead of a ``LimitError``)."""
    from symverify.ir import limits

    monkeypatch.setattr(limits, "MAX_CELLS", 8)
    with pytest.raises(sv.LimitError, match=r"9 cells is more than symverify.ir.limits.MAX_CELLS = 8"):
        build(lying(9, frozenset({"__gt__", "__lt__", "__ge__", "__le__"})))


def test_an_absorbed_diagonal_goes_on_the_side_it_spells() -> None:
    """``absorb_diagonal(d, side)`` with a ``str`` subclass spelling ``'after'`` but equal to ``'before'``
    absorbed ``D`` on the wrong side (``E·D`` for ``D·E``); a diagonal given as a mapping was read as its keys."""
    from symverify.kernel.ir.butterfly import BBStar

    f = ButterflyFactor(4, 2, (1, 2), (3, 4), (5, 6), (7, 8))
    k = Kaleidoscope(4, 4, (BBStar(4, (f, *BBStar.identity(4).factors[1:])),))
    both = type("Both", (str,), {"__eq__": lambda s, o: o in ("before", "after"), "__hash__": lambda s: hash("before")})
    diag = (2, 3, 5, 7)
    assert plain_form(k.absorb_diagonal(diag, both("after"))) == plain_form(k.absorb_diagonal(diag, "after"))
    assert plain_form(k.absorb_diagonal(diag, "after")) != plain_form(k.absorb_diagonal(diag, "before"))
    assert plain_form(f.absorb(lying(list(diag), frozenset({"__iter__"})), "before")) == plain_form(f.absorb(diag, "before"))
    with pytest.raises(sv.ShapeError, match="expected a diagonal as a sequence of 4 entries, found dict"):
        f.absorb({0: 2, 1: 3, 2: 5, 3: 7}, "before")


class _Reversed(list):  # type: ignore[type-arg]
    """A list whose iteration yields its items in reverse (what it stores is read by ``list.__iter__``)."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(list.__iter__(self))[::-1])


def test_a_matrix_row_subclass_is_read_as_the_entries_it_stores() -> None:
    """``matvec`` and ``from_matrix`` read a row inside a plain matrix by its own iteration, so a row
    storing ``[1, 2]`` that iterates as ``[2, 1]`` built the circuit of another matrix than the one named."""
    from symverify.ir.build import from_matrix

    want = plain_form(sv.library.matvec([[1, 2], [0, 1]], 1, 2))
    assert plain_form(sv.library.matvec([_Reversed([1, 2]), [0, 1]], 1, 2)) == want
    assert plain_form(from_matrix(_Reversed([[1, 2], [0, 1]]), 1, 2, "matvec")) == want
