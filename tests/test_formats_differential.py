"""The file formats against an independent reader written from docs/formats.md alone.

:func:`oracle` below parses circuit, model and certificate files by the rules docs/formats.md
states (and the limits of :mod:`symverify.ir.limits` it points to), with Python's ``json`` and
none of symverify's readers. The tests

1. write drawn objects with the library (hypothesis strategies, compiled models with their
   certificates, weights that are fractions, huge, negative or symbolic, empty and 1×1 shapes),
   parse the text with the oracle and compare it field by field with the object in memory, and
   paint every grid cell by cell against ``Grid.get``;
2. check round trips: save → load is equal, with the same fingerprint and the same ``sv.verify``
   verdict, and load → save gives back the very bytes the library wrote (docs: "a file holds the
   same text on every Python");
3. mutate real files (drop, repeat or rename a key, change a type, huge integers, floats, NaN,
   deep nesting, indices out of range, shapes that disagree with the data, wrong versions, a BOM,
   bytes that are not UTF-8) and require the library to load exactly what the oracle reads, or to
   raise a one-line :class:`SerializationError` that names the field, what was expected and what
   was found, within a hang guard.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
from cases import int_digit_limit
from hypothesis import given, settings

import symverify as sv
from symverify import Circuit, Gate, Grid, Model, SerializationError
from symverify.ir import limits
from symverify.ir.serialize import dump_file, dumps, load_file, loads
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.scalar import Sym
from symverify.kernel.provers.fingerprint import fingerprint
from symverify.strategies import circuits, models

# ==== the oracle: docs/formats.md, read literally ==================================================


class RefusedError(Exception):
    """The docs do not allow this file (the oracle's own verdict, never symverify's)."""


class _Marker:
    """A JSON token no field of these formats admits (a float, NaN, an integer literal beyond 2^63 − 1)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):  # "unknown or duplicate fields are refused"
        raise RefusedError("a repeated key")
    return dict(pairs)


def _int_literal(text: str) -> Any:
    if len(text.lstrip("-")) > 19:  # never convert a huge literal: it is refused anyway
        return _Marker(text)
    v = int(text)
    return v if abs(v) <= limits.MAX_JSON_INT else _Marker(text)


def _depth(v: Any) -> int:
    if isinstance(v, dict):
        return 1 + max(map(_depth, v.values()), default=0)
    if isinstance(v, list):
        return 1 + max(map(_depth, v), default=0)
    return 0


def parse_json(raw: bytes) -> Any:
    """UTF-8 JSON, strictly: no BOM, no repeated key, nesting within MAX_JSON_DEPTH, markers for
    floats, NaN/Infinity and integer literals beyond ±(2^63 − 1)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RefusedError("not UTF-8") from None
    if text.count("[") + text.count("{") > 10_000:
        raise RefusedError("nested too deeply (or too large for this oracle)")
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_int=_int_literal, parse_float=_Marker,
                          parse_constant=_Marker)
    except (ValueError, RecursionError):
        raise RefusedError("not JSON") from None
    if _depth(data) > limits.MAX_JSON_DEPTH:
        raise RefusedError("nested too deeply")
    return data


def _obj(v: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(v, dict) or not set(required) <= set(v) or not set(v) <= set(required) | set(optional):
        raise RefusedError(f"expected an object with {required} and some of {optional}")
    return v


def _index(v: Any, least: int = 0) -> int:
    if type(v) is not int or v < least:
        raise RefusedError(f"expected an int ≥ {least}")
    return v


def _text(v: Any) -> str:
    if not isinstance(v, str) or any(0xD800 <= ord(ch) <= 0xDFFF for ch in v):
        raise RefusedError("expected text")
    return v


_NUMBER = r"(0x[0-9a-f]+|[0-9]+)"
_RATIONAL = re.compile(rf"\s*([+-]?){_NUMBER}(?:\s*/\s*{_NUMBER})?\s*", re.ASCII)  # "spaces (ASCII whitespace)"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\[\]]*", re.ASCII)


def _part(text: str) -> int:
    if text.startswith("0x"):
        v = int(text, 16)
        if v.bit_length() > limits.MAX_INT_DIGITS * 3.3219:  # beyond MAX_INT_DIGITS decimal digits
            raise RefusedError("a hexadecimal integer beyond MAX_INT_DIGITS")
        return v
    if len(text) > limits.MAX_INT_DIGITS:
        raise RefusedError("more than MAX_INT_DIGITS digits")
    with int_digit_limit():
        return int(text)


def _rational(v: Any) -> Fraction:
    if type(v) is int:  # within ±(2^63 − 1): larger literals are markers
        return Fraction(v)
    if not isinstance(v, str) or (m := _RATIONAL.fullmatch(v)) is None:
        raise RefusedError("expected an exact rational")
    sign, num, den = m.groups()
    q = _part(den) if den is not None else 1
    if q == 0:
        raise RefusedError("a zero denominator")
    return Fraction(-_part(num) if sign == "-" else _part(num), q)


def value(v: Any) -> Fraction | tuple[Any, ...]:
    """An exact value: a Fraction, or a polynomial as its sorted nonzero terms ``((monomial, coeff), ...)``
    (a constant polynomial is its Fraction)."""
    if not isinstance(v, dict):
        return _rational(v)
    terms: dict[tuple[tuple[str, int], ...], Fraction] = {}
    for term in _obj(v, ("sym",))["sym"] if isinstance(v.get("sym"), list) else _refuse("sym: expected a list"):
        if not isinstance(term, list) or len(term) != 2 or not isinstance(term[1], dict):
            raise RefusedError("expected [coeff, {name: exponent}]")
        coeff = _rational(term[0])
        for name, e in term[1].items():
            if not _NAME.fullmatch(name):
                raise RefusedError("a parameter name must be an identifier")
            _index(e, 1)
        mono = tuple(sorted(term[1].items()))
        terms[mono] = terms.get(mono, Fraction(0)) + coeff  # "repeated monomials add up"
    nonzero = tuple(sorted((m, c) for m, c in terms.items() if c != 0))
    if not nonzero:
        return Fraction(0)
    if len(nonzero) == 1 and nonzero[0][0] == ():
        return nonzero[0][1]
    return nonzero


def _refuse(why: str) -> Any:
    raise RefusedError(why)


def _version(doc: dict[str, Any], version: int = 1) -> None:
    if type(doc.get("version")) is not int or doc["version"] != version:
        raise RefusedError("wrong version")


_ARITY = {"const": (0, 1), "lin": (2, 2), "mul": (2, 0)}


def _circuit(doc: dict[str, Any]) -> dict[str, Any]:
    _obj(doc, ("format", "version", "n", "d", "gates", "outputs"), ("name",))
    _version(doc)
    n, d = _index(doc["n"], 1), _index(doc["d"], 1)
    if not isinstance(doc["gates"], list) or not isinstance(doc["outputs"], list):
        raise RefusedError("gates and outputs are lists")
    gates = []
    for k, g in enumerate(doc["gates"]):
        if not (isinstance(g, list) and len(g) == 3 and isinstance(g[0], str) and g[0] in _ARITY
                and isinstance(g[1], list) and isinstance(g[2], list)):
            raise RefusedError("expected [op, [args], [coeffs]]")
        if (len(g[1]), len(g[2])) != _ARITY[g[0]]:
            raise RefusedError("wrong arity")
        if any(_index(a) >= n * d + k for a in g[1]):  # "a gate reads only inputs and earlier gates"
            raise RefusedError("a gate reads a later node")
        gates.append((g[0], tuple(g[1]), tuple(value(c) for c in g[2])))
    outputs = [_index(o) for o in doc["outputs"]]
    if len(outputs) > n * d or any(o >= n * d + len(gates) for o in outputs):
        raise RefusedError("outputs: at most n·d node ids")
    return {"name": _text(doc.get("name", "")), "n": n, "d": d, "gates": gates, "outputs": tuple(outputs)}


def _grid(v: Any, rows: int, cols: int) -> tuple[int, int, Any, list[tuple[int, int, int, int, Any]]]:
    _obj(v, ("shape", "rects"), ("fill",))
    if v["shape"] != [rows, cols] or not isinstance(v["rects"], list):  # ints compare equal to bools: checked below
        raise RefusedError("a shape that disagrees with the model")
    if any(type(x) is not int for x in v["shape"]):
        raise RefusedError("a shape of ints")
    rects = []
    for r in v["rects"]:
        if not isinstance(r, list) or len(r) != 5:
            raise RefusedError("expected [row0, row1, col0, col1, value]")
        r0, r1, c0, c1 = (_index(x) for x in r[:4])
        if not (r0 < r1 <= rows and c0 < c1 <= cols):
            raise RefusedError("a rectangle that is empty or outside the grid")
        rects.append((r0, r1, c0, c1, value(r[4])))
    return rows, cols, value(v.get("fill", "0")), rects


def _model(doc: dict[str, Any]) -> dict[str, Any]:
    _obj(doc, ("format", "version", "n", "d", "inner_n", "inner_d", "layers"), ("name",))
    _version(doc)
    n, d, nn, dd = (_index(doc[k], 1) for k in ("n", "d", "inner_n", "inner_d"))
    if nn < n or dd < d or not isinstance(doc["layers"], list):
        raise RefusedError("the state holds the input; layers is a list")
    layers = []
    for lj in doc["layers"]:
        _obj(lj, ("mode", "W", "b1", "h", "b2"))
        if lj["mode"] not in ("causal", "cyclic"):
            raise RefusedError("mode")
        shapes = {"W": (dd, dd), "b1": (nn, dd), "h": (nn, dd), "b2": (nn, dd)}
        layers.append((lj["mode"], {k: _grid(lj[k], *shapes[k]) for k in ("W", "b1", "h", "b2")}))
    return {"name": _text(doc.get("name", "")), "n": n, "d": d, "inner_n": nn, "inner_d": dd, "layers": layers}


def _certificate(doc: dict[str, Any]) -> dict[str, Any]:
    _obj(doc, ("format", "version", "boundaries"), ("meta",))
    _version(doc)
    meta = doc.get("meta", {})
    if not isinstance(meta, dict) or not isinstance(doc["boundaries"], list):
        raise RefusedError("meta is an object, boundaries a list")
    boundaries = []
    for b in doc["boundaries"]:
        _obj(b, ("layer", "cells"), ("label",))
        if not isinstance(b["cells"], list):
            raise RefusedError("cells is a list")
        cells = []
        for c in b["cells"]:
            if isinstance(c, list) and len(c) == 3 and not isinstance(c[2], list):
                cells.append((_index(c[0]), _index(c[1]), ((_index(c[2]), Fraction(1)),), Fraction(0)))
            elif isinstance(c, list) and len(c) == 4 and isinstance(c[2], list):
                if not all(isinstance(t, list) and len(t) == 2 for t in c[2]):
                    raise RefusedError("expected [node, coeff]")
                terms = tuple((_index(t[0]), value(t[1])) for t in c[2])
                cells.append((_index(c[0]), _index(c[1]), terms, value(c[3])))
            else:
                raise RefusedError("a cell")
        if boundaries and _index(b["layer"]) < boundaries[-1][0]:
            raise RefusedError("boundary layers never decrease")
        boundaries.append((_index(b["layer"]), _text(b.get("label", "")), cells))
    return {"meta": [(_text(k), _text(v)) for k, v in meta.items()], "boundaries": boundaries}


def oracle(raw: bytes) -> tuple[str, dict[str, Any]]:
    """``(format, fields)`` of a circuit, model or certificate file; :class:`RefusedError` if the docs forbid it."""
    doc = parse_json(raw)
    if not isinstance(doc, dict):
        raise RefusedError("a document is an object")
    fmt = doc.get("format")
    readers = {"symverify.circuit": _circuit, "symverify.model": _model, "symverify.certificate": _certificate}
    if not isinstance(fmt, str) or fmt not in readers:
        raise RefusedError("format")
    return fmt, readers[fmt](doc)


# ---- comparing the oracle's reading with symverify's objects ------------------------------------
def _same_value(ours: Fraction | tuple[Any, ...], x: Any) -> bool:
    if isinstance(x, Sym):
        return isinstance(ours, tuple) and ours == x.terms
    return isinstance(ours, Fraction) and type(x) in (int, Fraction) and ours == x


def _paint(grid: tuple[int, int, Any, list[Any]]) -> dict[tuple[int, int], Any]:
    rows, cols, fill, rects = grid
    cells = {(i, j): fill for i in range(rows) for j in range(cols)}
    for r0, r1, c0, c1, v in rects:  # later rectangles win
        for i in range(r0, r1):
            for j in range(c0, c1):
                cells[i, j] = v
    return cells


def assert_matches(read: tuple[str, dict[str, Any]], obj: Any) -> None:
    """The oracle's reading ``read`` is the object ``obj``, field by field."""
    fmt, f = read
    if fmt == "symverify.circuit":
        assert isinstance(obj, Circuit)
        assert (f["name"], f["n"], f["d"], f["outputs"]) == (obj.name, obj.n, obj.d, obj.outputs)
        assert len(f["gates"]) == len(obj.gates)
        for (op, args, coeffs), g in zip(f["gates"], obj.gates):
            assert (op, args) == (g.op.value, g.args) and len(coeffs) == len(g.coeffs)
            assert all(_same_value(a, b) for a, b in zip(coeffs, g.coeffs)), (coeffs, g.coeffs)
    elif fmt == "symverify.model":
        assert isinstance(obj, Model)
        assert (f["name"], f["n"], f["d"], f["inner_n"], f["inner_d"]) == (obj.name, obj.n, obj.d, obj.inner_n, obj.inner_d)
        assert len(f["layers"]) == len(obj.layers)
        for (mode, grids), layer in zip(f["layers"], obj.layers):
            assert mode == layer.mode.value
            for name, g in layer.grids():
                rows, cols, fill, rects = grids[name]
                assert (rows, cols) == (g.rows, g.cols) and _same_value(fill, g.fill) and len(rects) == len(g.rects)
                for ours, theirs in zip(rects, g.rects):
                    assert ours[:4] == theirs[:4] and _same_value(ours[4], theirs[4]), (name, ours, theirs)
                if rows * cols <= 256:  # the matrix itself: the oracle paints, the library's grid answers
                    painted = _paint(grids[name])
                    assert all(_same_value(v, g.get(i, j)) for (i, j), v in painted.items()), name
    else:
        assert isinstance(obj, Certificate)
        assert f["meta"] == list(obj.meta)
        assert len(f["boundaries"]) == len(obj.boundaries)
        for (layer, label, cells), b in zip(f["boundaries"], obj.boundaries):
            assert (layer, label, len(cells)) == (b.layer, b.label, len(b.cells))
            for (row, col, terms, const), c in zip(cells, b.cells):
                assert (row, col, [t[0] for t in terms]) == (c.row, c.col, [t[0] for t in c.terms])
                assert all(_same_value(t[1], u[1]) for t, u in zip(terms, c.terms)) and _same_value(const, c.const)


# ==== 1. what the library writes is what the docs describe ========================================
def _written(obj: Any) -> tuple[str, dict[str, Any]]:
    raw = dumps(obj).encode()
    assert raw.isascii()  # "symverify itself always writes strings": the same text on every Python
    return oracle(raw)


@settings(max_examples=60)
@given(circuits(allow_sym=True))
def test_drawn_circuits_read_by_the_docs(c):
    assert_matches(_written(c), c)


@settings(max_examples=60)
@given(models())
def test_drawn_models_read_by_the_docs(m):
    assert_matches(_written(m), m)


A, B = sv.sym("a"), sv.sym("b")
HUGE = 10**4000 + 7  # beyond Python's default 4300-digit int/str limit once squared
ODD = [Fraction(-7, 3), Fraction(1, 10**30), -(10**25), HUGE * HUGE, -Fraction(HUGE, 3), A * A * Fraction(1, 2) + B,
       A * B - Fraction(1, 3), 3 * A - 3 * A + 2, -B]


def _odd_model() -> Model:
    """1×1 input, a 2×2 state, weights of every kind the docs allow, painted over each other."""
    W = Grid(2, 2, ODD[0], ((0, 2, 0, 1, ODD[1]), (1, 2, 0, 2, ODD[2]), (0, 1, 1, 2, ODD[5])))
    b1 = Grid(2, 2, 0, ((0, 1, 0, 1, ODD[3]), (0, 2, 1, 2, ODD[4])))
    h = Grid(2, 2, ODD[6], ((1, 2, 1, 2, ODD[8]),))
    b2 = Grid.full(2, 2, ODD[7])
    return Model(1, 1, 2, 2, (Layer(W, b1, h, b2, Mode.CYCLIC), Layer(W, b2, b1, h, Mode.CAUSAL)), "odd ⊙ weights")


def _float_model() -> Model:
    """Grids read from a float array: cells stored as a ``CellArray``, written as exact dyadic rationals."""
    import numpy as np

    g = Grid.from_array(np.array([[0.5, -1.25], [0.0, 2.0**-60]]))
    return Model(1, 1, 2, 2, (Layer(g, g, g, g, Mode.CAUSAL),), "floats")


def _edge_objects() -> list[Any]:
    """Empty and 1×1 shapes, and values of every kind the docs allow."""
    return [
        Circuit(1, 1, (), ()),  # no gate, no output
        Circuit(1, 1, (), (0,), ""),  # the input read out as it is
        Circuit(1, 1, (*(Gate.const(v) for v in ODD), Gate.lin(0, ODD[3], 1, ODD[5]), Gate.mul(10, 0)), (11,), "c"),
        Model(1, 1, 1, 1, ()),  # no layer
        Model(1, 1, 1, 1, (Layer(Grid(1, 1), Grid(1, 1), Grid(1, 1), Grid(1, 1), Mode.CAUSAL),)),  # 1×1, all zero
        _odd_model(),
        _float_model(),
        Certificate(()),
        Certificate((Boundary(0, ()), Boundary(3, (Cell(0, 0, (), 0),), "")), (("z", "last"), ("a", "ü"))),
        Certificate((Boundary(0, (Cell.node(0, 0, 0), Cell(1, 2, ((3, 1), (3, ODD[5])), ODD[3]))),), {"b": "1", "a": "2"}),
    ]


@pytest.mark.parametrize("k", range(len(_edge_objects())))
def test_edge_objects_read_by_the_docs(k):
    obj = _edge_objects()[k]
    assert_matches(_written(obj), obj)


@cache
def _compiled() -> list[Any]:
    """Compiled models (both compilers) with their certificates, and their circuits."""
    c = Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1] - u[0][0] / 2], n=2, d=2)
    square = Circuit(1, 2, (Gate.mul(0, 1), Gate.lin(2, "-1/2", 0, A)), (3, 2), "square")
    out = []
    for circuit, method in ((c, "dense"), (c, "kaleidoscope"), (square, "dense")):
        out.append((circuit, sv.compile(circuit, method=method)))
    return out


@pytest.mark.parametrize("k", range(3))
def test_compiled_models_and_certificates_read_by_the_docs(k):
    circuit, comp = _compiled()[k]
    for obj in (circuit, comp.model, comp.certificate):
        assert_matches(_written(obj), obj)


# ==== 2. round trips ===============================================================================
def _round_trip(obj: Any, tmp_path: Any) -> Any:
    path = tmp_path / "doc.json"
    dump_file(obj, path)
    back = load_file(path)
    assert back == obj and type(back) is type(obj)
    dump_file(back, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()  # load → save: the same bytes
    return back


@pytest.mark.parametrize("k", range(len(_edge_objects())))
def test_edge_objects_round_trip(k, tmp_path):
    obj = _edge_objects()[k]
    back = _round_trip(obj, tmp_path)
    if not isinstance(obj, Certificate):
        assert fingerprint(back) == fingerprint(obj)


@pytest.mark.parametrize("k", range(3))
def test_compiled_round_trip_same_digest_and_verdict(k, tmp_path):
    circuit, comp = _compiled()[k]
    model, cert = _round_trip(comp.model, tmp_path), _round_trip(comp.certificate, tmp_path)
    assert fingerprint(model) == fingerprint(comp.model)
    assert _round_trip(circuit, tmp_path) == circuit
    for method, kwargs in (("exact", {}), ("compositional", {"certificate": cert})):
        before = sv.verify(circuit, comp.model, method=method, **{k: comp.certificate for k in kwargs})
        after = sv.verify(circuit, model, method=method, **kwargs)
        assert (after.verdict, after.method) == (before.verdict, before.method) and after.proved


def test_a_certificate_keeps_the_order_of_its_meta():
    """``Certificate.meta`` keeps the order it was given (a mapping's order); the reader used to sort
    it, so a compiled model's certificate (``method`` before ``circuit``) did not load back equal."""
    cert = Certificate((Boundary(0, ()),), {"method": "dense", "circuit": "c"})
    assert loads(dumps(cert)) == cert and loads(dumps(cert)).meta == (("method", "dense"), ("circuit", "c"))


@settings(max_examples=40)
@given(models(max_layers=2, pad=2), circuits(allow_sym=True))
def test_drawn_objects_round_trip_with_digest(m, c):
    for obj in (m, c):
        back = loads(dumps(obj))
        assert back == obj and dumps(back) == dumps(obj) and fingerprint(back) == fingerprint(obj)


# ==== 3. mutated files =============================================================================
class Raw:
    """Text put into the JSON verbatim (a token the writer cannot produce: NaN, 1e400, a huge literal)."""

    def __init__(self, text: str) -> None:
        self.text = text


class Pairs:
    """A JSON object written from its pairs, so a key may repeat."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def emit(v: Any) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Pairs):
        return "{" + ",".join(f"{json.dumps(k)}:{emit(x)}" for k, x in v.pairs) + "}"
    if isinstance(v, dict):
        return emit(Pairs(list(v.items())))
    if isinstance(v, list):
        return "[" + ",".join(map(emit, v)) + "]"
    return json.dumps(v)


def _locations(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        yield (*path, k)
        yield from _locations(v, (*path, k))


def _sample(doc: Any, per_pattern: int = 1) -> list[tuple[Any, ...]]:
    """Locations, the first ``per_pattern`` of each shape (the path with its indices blurred)."""
    seen: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for path in _locations(doc):
        seen.setdefault(tuple("#" if isinstance(k, int) else k for k in path), []).append(path)
    return [p for paths in seen.values() for p in paths[:per_pattern]]


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _with(doc: Any, path: tuple[Any, ...], change: Any) -> Any:
    """A copy of ``doc`` whose location ``path`` is changed by ``change(parent, key)``."""
    doc = json.loads(json.dumps(doc))
    parent = _get(doc, path[:-1])
    change(parent, path[-1])
    return doc


def _set(value: Any) -> Any:
    def change(parent: Any, key: Any) -> None:
        parent[key] = value
    return change


def _drop(parent: Any, key: Any) -> None:
    del parent[key]


def _duplicate(parent: Any, key: Any) -> None:
    if isinstance(parent, dict):
        items = list(parent.items())
        pos = list(parent).index(key)
        parent.clear()
        parent["\0pairs"] = Pairs([*items[: pos + 1], (key, items[pos][1]), *items[pos + 1 :]])
    else:
        parent.insert(key, parent[key])


def _rename(parent: Any, key: Any) -> None:
    if isinstance(parent, dict):
        items = [(k + "_" if k == key else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)


def _emit_doc(doc: Any) -> str:
    """``emit``, where an object replaced by ``{"\\0pairs": Pairs}`` is written from its pairs."""
    def fix(v: Any) -> Any:
        if isinstance(v, dict):
            if "\0pairs" in v:
                return Pairs([(k, fix(x)) for k, x in v["\0pairs"].pairs])
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return emit(fix(doc))


HUGE_LITERAL = "9" * 100_000
REPLACEMENTS: list[Any] = [
    "1", 1, 0, -1, True, None, [], {}, "x", Raw("0.5"), Raw("1.0"), Raw("1e400"), Raw("NaN"), Raw("-Infinity"),
    Raw(HUGE_LITERAL), Raw(str(limits.MAX_JSON_INT)), Raw(str(limits.MAX_JSON_INT + 1)), 10**6,
    "9" * limits.MAX_INT_DIGITS, "1" + "0" * limits.MAX_INT_DIGITS, "1/0", " -6 / 4 ", "1\t/\n2", "+3", "0x1f/3",
    "0X1F", "1.5", "1e3", "½", "-0", {"sym": [["1/2", {"a": 2}], [1, {"b": 1}], ["-1/2", {"a": 2}]]},
    {"sym": [[1, {"a b": 1}]]}, {"sym": [[1, {"a": 0}]]}, {"sym": []}, Raw("[" * 65 + "]" * 65), Raw("[" * 64 + "]" * 64),
]
"""What a location's value is replaced with: other types, exact values written every allowed and
refused way, integer literals at and beyond the bounds, floats, NaN, Infinity, deep nesting."""


def _mutations(text: str) -> Iterator[tuple[str, tuple[Any, ...], bytes]]:
    """``(what, path, bytes)`` for every mutation of the document ``text`` (a valid file)."""
    doc = json.loads(text)
    raw = text.encode()
    yield "BOM", (), b"\xef\xbb\xbf" + raw
    yield "not UTF-8", (), raw.replace(b'"', b'"\xff', 1)
    yield "overlong UTF-8", (), raw.replace(b'"', b'"\xc0\xaf', 1)
    yield "an encoded surrogate", (), raw.replace(b'"', b'"\xed\xa0\x80', 1)
    yield "truncated", (), raw[: len(raw) // 2]
    yield "deep nesting", (), ("[" * 100_000 + "]" * 100_000).encode()
    for version in (0, 2, "1", Raw("1.0"), True):
        yield f"version {version}", ("version",), _emit_doc(_with(doc, ("version",), _set(version))).encode()
    for path in _sample(doc):
        changes = [("drop", _drop), ("duplicate", _duplicate), ("rename", _rename), ("wrap", _set([_get(doc, path)]))]
        old = _get(doc, path)
        if type(old) is int:  # an index, a size or a shape: off by one, negative, beyond the data
            changes += [(f"int {v}", _set(v)) for v in (old + 1, old - 1, old * 2 + 3)]
        changes += [(f"set {r.text[:12] if isinstance(r, Raw) else str(r)[:20]!s}", _set(r)) for r in REPLACEMENTS]
        for what, change in changes:
            yield what, path, _emit_doc(_with(doc, path, change)).encode()


class HangError(Exception):
    pass


@contextmanager
def _guard(seconds: int = 20) -> Iterator[None]:
    """A hang guard (not a timing check): a load that runs this long fails the test."""
    def alarm(signum: int, frame: Any) -> None:
        raise HangError(f"a load ran for {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


_MESSAGE_WORDS = ("expected", "must be", "needs", "more than", "the denominator", "do not fit in", "missing field", "unknown field", "duplicate key",
                  "not UTF-8", "not valid JSON", "nested")


def _path_names(path: tuple[Any, ...]) -> list[str]:
    """How a message may name the location: a key of the path or ``key[i]``."""
    out = []
    for j, k in enumerate(path):
        if isinstance(k, str):
            out.append(k)
        elif j and isinstance(path[j - 1], str):
            out.append(f"{path[j - 1]}[{k}]")
    return out


def check_mutation(what: str, path: tuple[Any, ...], raw: bytes) -> None:
    """The library loads exactly what the oracle reads, or refuses what the oracle refuses with a
    located one-line SerializationError; never another exception, never something else."""
    try:
        read: tuple[str, dict[str, Any]] | None = oracle(raw)
    except RefusedError:
        read = None
    with _guard():
        try:
            obj = loads(raw)
        except SerializationError as e:
            msg = str(e)
            assert read is None, f"{what} at {path}: the docs allow it, the library refuses: {msg}"
            assert "\n" not in msg and any(w in msg for w in _MESSAGE_WORDS), f"{what} at {path}: {msg}"
            names = [] if "nested" in msg else _path_names(path)  # the depth is checked before parsing
            assert not names or any(n in msg for n in names), f"{what} at {path}: the message names no field: {msg}"
            assert " at 0x" not in msg, msg  # a value is shown as written, never as a Python object
            return
    assert read is not None, f"{what} at {path}: the docs refuse it, the library loads {obj!r:.200}"
    assert_matches(read, obj)


@cache
def _real_files() -> list[str]:
    _, dense = _compiled()[2]
    circuit, kal = _compiled()[0]
    odd = _odd_model()
    return [dumps(circuit), dumps(dense.model), dumps(dense.certificate), dumps(kal.certificate),
            dumps(Model(1, 1, 2, 2, odd.layers[:1])), dumps(_edge_objects()[-1])]


@pytest.mark.parametrize("k", range(6))
def test_mutated_files_load_as_the_docs_read_them_or_fail_located(k):
    text = _real_files()[k]
    for what, path, raw in _mutations(text):
        check_mutation(what, path, raw)


# ---- the findings, one by one ---------------------------------------------------------------------
@pytest.mark.parametrize("text, match", [
    # a BOM was "not valid JSON (truncated?)"
    ('\ufeff{"format": "symverify.circuit"}', r"expected JSON text, found a byte order mark \(U\+FEFF\) at offset 0"),
    # a NaN or a huge literal in a certificate was shown as a Python object with its address
    ('{"format": "symverify.certificate", "version": NaN, "boundaries": []}', r"'version': expected 1, found NaN$"),
    ('{"format": "symverify.certificate", "version": 1, "boundaries": [{"layer": 0, "cells": [[0, 0, 1, ' + "9" * 30 + ']]}]}',
     r"cells\[0\]: expected \[row, col, node\] .*found list \[0, 0, 1, <integer literal of 30 digits>\]$"),
    # a bad parameter name did not say where it was
    ('{"format": "symverify.circuit", "version": 1, "n": 1, "d": 1, "gates": [["const", [], [{"sym": [[1, {"a b": 1}]]}]]], '
     '"outputs": []}', r"^gates\[0\]\.coeffs\[0\]\.sym\[0\]\[1\]: a parameter name must be an identifier .*found 'a b'$"),
    # a gate reading a later node, a wrong arity, an output out of range: no key path, several lines
    ('{"format": "symverify.circuit", "version": 1, "n": 1, "d": 2, "gates": [["mul", [0, 2], []]], "outputs": []}',
     r"^gates\[0\]\.args\[1\]: expected a node id below n·d \+ 0 = 2 \(an input or an earlier gate\), found 2$"),
    ('{"format": "symverify.circuit", "version": 1, "n": 1, "d": 2, "gates": [["lin", [0, 1], ["1"]]], "outputs": []}',
     r"^gates\[0\]: expected 2 args and 2 coeffs for 'lin', found 2 args and 1 coeffs$"),
    ('{"format": "symverify.circuit", "version": 1, "n": 1, "d": 2, "gates": [], "outputs": [2]}',
     r"^document\.outputs\[0\]: expected a node id below n·d \+ #gates = 2, found 2$"),
    # a model whose state cannot hold the input, or whose layers disagree with inner_n × inner_d
    ('{"format": "symverify.model", "version": 1, "n": 1, "d": 3, "inner_n": 1, "inner_d": 2, "layers": []}',
     r"^document\.inner_d: expected an int ≥ d = 3 \(the state holds the input\), found 2$"),
], ids=["bom", "nan-version", "huge-literal-in-cell", "sym-name", "later-node", "arity", "output", "inner-size"])
def test_findings_are_located_one_line_errors(text, match):
    with pytest.raises(SerializationError, match=match):
        loads(text)
    with pytest.raises(RefusedError):
        oracle(text.encode())


def test_a_bom_is_refused_by_name_in_proof_runs_too(tmp_path):
    from symverify.ir.serialize import read_json_file

    (tmp_path / "run.json").write_bytes(b'\xef\xbb\xbf{"format": "symverify.proof-run"}')
    with pytest.raises(SerializationError, match=r"run\.json: cannot read the run: expected JSON text, found a byte order mark"):
        read_json_file(tmp_path / "run.json", "the run")


def test_the_examples_of_docs_formats_md_read_alike():
    """Every circuit, model and certificate example of docs/formats.md: the oracle and the library agree."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "formats.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```json\n(.*?)```", text, re.S)
              if '"symverify.proof-run"' not in b and '"symverify.report"' not in b]  # runs and reports: no IR files
    assert len(blocks) == 3
    for block in blocks:
        assert_matches(oracle(block.encode()), loads(block))
