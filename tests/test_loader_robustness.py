"""Every malformed file is a located SerializationError, never another exception or a silent fix.

One negative test per validation rule of :mod:`symverify.ir.serialize` and
:meth:`Certificate.from_json` (and of the IR constructors they rely on), then hypothesis fuzzing
of every loader over raw bytes and over structured mutations of valid documents, then the
command line on malformed files (exit 3, one line, no traceback).
"""

import copy
import json
import subprocess
import sys
from fractions import Fraction
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify import Circuit, Gate, Grid, IRError, Model, SerializationError, ShapeError
from symverify.cli import main
from symverify.ir.serialize import dump_file, dumps, from_json, load_file, loads, to_json
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.library import prefix_sums, symbolic_mixing, walsh_hadamard

FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@cache
def _valid_texts():
    """JSON texts of valid documents: library circuits, compiled models and their certificates."""
    square = Circuit(1, 2, (Gate.mul(0, 1), Gate.lin(2, "-1/2", 0, sv.sym("a"))), (3, 2), "square")
    texts = [dumps(square), dumps(prefix_sums(4)), dumps(symbolic_mixing(2))]
    for c, method in ((square, "dense"), (walsh_hadamard(2), "kaleidoscope")):
        comp = sv.compile(c, method=method)
        texts += [dumps(comp.model), dumps(comp.certificate)]
    return tuple(texts)


CIRCUIT = json.loads(dumps(Circuit(1, 2, (Gate.mul(0, 1), Gate.lin(2, "-1/2", 0, sv.sym("a"))), (3,), "c")))
GRID = {"shape": [2, 2], "fill": "0", "rects": [[0, 1, 0, 2, "1"]]}
W = {"shape": [2, 2], "fill": "0", "rects": [[0, 2, 0, 2, "1"]]}
MODEL = json.loads(json.dumps({"format": "symverify.model", "version": 1, "name": "m", "n": 1, "d": 1, "inner_n": 2,
                               "inner_d": 2, "layers": [{"mode": "causal", "W": W, "b1": GRID, "h": GRID, "b2": GRID}]}))
CERT = {"format": "symverify.certificate", "version": 1, "meta": {"k": "v"},
        "boundaries": [{"layer": 0, "label": "in", "cells": [[0, 0, 0]]},
                       {"layer": 1, "cells": [[0, 1, [[0, "2"], [1, "-1/3"]], "5"]]}]}


def test_the_templates_are_valid():
    assert isinstance(from_json(copy.deepcopy(CIRCUIT)), Circuit)
    assert isinstance(from_json(copy.deepcopy(MODEL)), Model)
    assert isinstance(from_json(copy.deepcopy(CERT)), Certificate)


def _set(doc, path, value):
    """A deep copy of ``doc`` with ``path`` (keys/indices) set to ``value`` (``...`` deletes it)."""
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


# ---- negative tests: one per rule ---------------------------------------------------------------
TEXT_CASES = [
    # (text or bytes, message)
    (b'{"format": "symverify.circuit", "name": "\xff"}', r"not UTF-8 text: byte 0xff at offset 41 \(invalid start byte\)"),
    ('{"format": "symverify.circuit", "version": 1, "n": 1,', r"not valid JSON \(truncated\?\)"),
    ("[" * 100_000 + "]" * 100_000, r"JSON nested 100000 levels deep, more than symverify.ir.limits.MAX_JSON_DEPTH = 64"),
    ('{"a": ' * 65 + "1" + "}" * 65, r"JSON nested 65 levels deep"),
    (json.dumps(CIRCUIT).replace('"n": 1', '"n": ' + "1" * 5000), r"document.n: expected int, found an integer literal of 5000 digits"),
    (json.dumps(CIRCUIT).replace('"n": 1', '"n": 9223372036854775808'), r"document.n: expected int, found an integer literal of 19 digits \(beyond ±\(2\^63 − 1\)"),
    (json.dumps(CIRCUIT).replace('"n": 1', '"n": NaN'), r"document.n: expected int, found NaN \(not a JSON number\)"),
    (json.dumps(CIRCUIT).replace('"n": 1', '"n": -Infinity'), r"document.n: expected int, found -Infinity"),
    (json.dumps(CIRCUIT).replace('"n": 1', '"n": 1, "n": 2'), r"duplicate key 'n' in a JSON object"),
    (json.dumps(CIRCUIT).replace('"name": "c"', '"name": "\\ud800"'), r"document.name: not valid Unicode text \(a lone surrogate \\ud800"),
]


@pytest.mark.parametrize("text, match", TEXT_CASES, ids=range(len(TEXT_CASES)))
def test_malformed_text(text, match):
    with pytest.raises(SerializationError, match=match):
        loads(text)


def test_loads_needs_text():
    with pytest.raises(SerializationError, match=r"loads: expected JSON text \(str or bytes\), found int"):
        loads(3)


DOC_CASES = [
    # (document, message): circuits
    ([], r"document: expected a JSON object, found list"),
    (_set(CIRCUIT, ["format"], ...), r"document: missing field 'format'"),
    (_set(CIRCUIT, ["format"], 1), r"document.format: expected str, found int"),
    (_set(CIRCUIT, ["format"], "symverify.other"), r"document.format: expected one of"),
    (_set(CIRCUIT, ["version"], ...), r"document: missing field 'version'"),
    (_set(CIRCUIT, ["version"], True), r"document.version: expected 1, found bool true"),
    (_set(CIRCUIT, ["version"], 2), r"document.version: expected 1, found 2"),
    (_set(CIRCUIT, ["extra"], 1), r"document: unknown field 'extra'; expected only"),
    (_set(CIRCUIT, ["name"], 7), r"document.name: expected str, found int"),
    (_set(CIRCUIT, ["n"], 1.0), r"document.n: expected int, found float 1.0"),
    (_set(CIRCUIT, ["n"], True), r"document.n: expected int, found bool true"),
    (_set(CIRCUIT, ["n"], 0), r"document.n: expected a positive int, found 0"),
    (_set(CIRCUIT, ["d"], -2), r"document.d: expected a positive int, found -2"),
    (_set(CIRCUIT, ["n"], 2**64), r"document.n: expected (a positive int, found 18446744073709551616|int, found an integer literal of 20 digits)"),
    (_set(CIRCUIT, ["gates"], ...), r"document: missing field 'gates'"),
    (_set(CIRCUIT, ["gates"], {}), r"document.gates: expected a list, found dict"),
    (_set(CIRCUIT, ["gates", 0], "mul"), r"gates\[0\]: expected \[op, \[args\], \[coeffs\]\], found str"),
    (_set(CIRCUIT, ["gates", 0, 0], "pow"), r"gates\[0\]: unknown op 'pow'"),
    (_set(CIRCUIT, ["gates", 0, 0], ["mul"]), r"gates\[0\]: unknown op \['mul'\]"),
    (_set(CIRCUIT, ["gates", 0, 1], [0, True]), r"gates\[0\].args\[1\]: expected node ids \(ints\), found bool true"),
    (_set(CIRCUIT, ["gates", 0, 1], [0, 1.0]), r"gates\[0\].args\[1\]: expected node ids \(ints\), found float"),
    (_set(CIRCUIT, ["gates", 0, 1], [0, -1]), r"gates\[0\].args\[1\]: expected an int ≥ 0, found -1"),
    (_set(CIRCUIT, ["gates", 0, 1], [0, 7]), r"gates\[0\].args\[1\]: expected a node id below n·d \+ 0 = 2 \(an input or an earlier gate\), found 7"),
    (_set(CIRCUIT, ["gates", 0, 1], [0]), r"gates\[0\]: expected 2 args and 0 coeffs for 'mul', found 1 args and 0 coeffs"),
    (_set(CIRCUIT, ["gates", 1, 2], [True, "1"]), r"gates\[1\].coeffs\[0\]: expected an integer, a rational string such as '-1/2' or \{'sym': \[...\]\}, found bool true"),
    (_set(CIRCUIT, ["gates", 1, 2], [0.5, "1"]), r"gates\[1\].coeffs\[0\]: expected an integer, a rational string .*, found float"),
    (_set(CIRCUIT, ["gates", 1, 2], [2**63, "1"]), r"gates\[1\].coeffs\[0\]: (a JSON integer coefficient must be within ±\(2\^63 − 1\)|.*integer literal of 19 digits)"),
    (_set(CIRCUIT, ["gates", 1, 2], ["1/0", "1"]), r"gates\[1\].coeffs\[0\]: the denominator of '1/0' is 0"),
    (_set(CIRCUIT, ["gates", 1, 2], ["0.5", "1"]), r"gates\[1\].coeffs\[0\]: expected a rational such as '3' or '-1/2', found '0.5'"),
    (_set(CIRCUIT, ["gates", 1, 2], ["1" * 100_001, "1"]), r"gates\[1\].coeffs\[0\]: an integer of 100001 digits is more than symverify.ir.limits.MAX_INT_DIGITS"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": {}}), r"gates\[1\].coeffs\[1\].sym: expected a list, found dict"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [], "x": 1}), r"gates\[1\].coeffs\[1\]: unknown field 'x'"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [["1"]]}), r"gates\[1\].coeffs\[1\].sym\[0\]: expected \[coeff, \{name: exponent\}\]"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [[1.5, {"a": 1}]]}), r"gates\[1\].coeffs\[1\].sym\[0\]\[0\]: expected an integer or a rational string such as '-1/2', found float 1.5$"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [["1/0", {"a": 1}]]}), r"the denominator of '1/0' is 0"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [["1", ["a"]]]}), r"sym\[0\]\[1\]: a symbolic term needs \{name: positive int exponent\}, found list"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [["1", {"a": 0}]]}), r"sym\[0\]\[1\].a: expected a positive int, found 0"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [["1", {"a": True}]]}), r"sym\[0\]\[1\].a: expected int, found bool"),
    (_set(CIRCUIT, ["gates", 1, 2, 1], {"sym": [["1", {"a b": 1}]]}), r"parameter name must be an identifier"),
    (_set(CIRCUIT, ["outputs"], "3"), r"document.outputs: expected a list, found str"),
    (_set(CIRCUIT, ["outputs"], [True]), r"document.outputs: expected a list of node ids \(ints\), found bool true at index 0"),
    (_set(CIRCUIT, ["outputs"], [-1]), r"document.outputs\[0\]: expected an int ≥ 0, found -1"),
    (_set(CIRCUIT, ["outputs"], [9]), r"document.outputs\[0\]: expected a node id below n·d \+ #gates = 4, found 9"),
    (_set(CIRCUIT, ["outputs"], [0, 1, 2]), r"document.outputs: expected at most n·d = 2 node ids, found 3"),
    # models
    (_set(MODEL, ["inner_n"], ...), r"document: missing field 'inner_n'"),
    (_set(MODEL, ["inner_n"], 2.5), r"document.inner_n: expected int, found float 2.5"),
    (_set(MODEL, ["inner_d"], False), r"document.inner_d: expected int, found bool false"),
    (_set(MODEL, ["n"], 3), r"document.inner_n: expected an int ≥ n = 3 \(the state holds the input\), found 2"),
    (_set(MODEL, ["layers"], {}), r"document.layers: expected a list, found dict"),
    (_set(MODEL, ["layers", 0], []), r"layers\[0\]: expected a JSON object, found list"),
    (_set(MODEL, ["layers", 0, "h"], ...), r"layers\[0\]: missing field 'h'"),
    (_set(MODEL, ["layers", 0, "x"], 1), r"layers\[0\]: unknown field 'x'"),
    (_set(MODEL, ["layers", 0, "mode"], "sideways"), r"layers\[0\].mode: expected 'causal' or 'cyclic', found 'sideways'"),
    (_set(MODEL, ["layers", 0, "mode"], 1), r"layers\[0\].mode: expected 'causal' or 'cyclic', found int"),
    (_set(MODEL, ["layers", 0, "W"], [2, 2]), r"layers\[0\].W: expected a JSON object, found list"),
    (_set(MODEL, ["layers", 0, "W", "shape"], ...), r"layers\[0\].W: missing field 'shape'"),
    (_set(MODEL, ["layers", 0, "W", "shape"], [2]), r"layers\[0\].W.shape: expected \[rows, cols\], found a list of 1"),
    (_set(MODEL, ["layers", 0, "W", "shape"], [2.0, 2]), r"layers\[0\].W.shape\[0\] \(rows\): expected int, found float 2.0"),
    (_set(MODEL, ["layers", 0, "W", "shape"], [2, True]), r"layers\[0\].W.shape\[1\] \(cols\): expected int, found bool true"),
    (_set(MODEL, ["layers", 0, "W", "shape"], [-2, 2]), r"layers\[0\].W.shape\[0\] \(rows\): expected an int ≥ 0, found -2"),
    (_set(MODEL, ["layers", 0, "W", "shape"], [3, 3]), r"layers\[0\]: layer W: expected shape 2×2 \(d'×d', from b1, h and b2"),
    (_set(MODEL, ["layers", 0, "W", "rects"], {}), r"layers\[0\].W.rects: expected a list, found dict"),
    (_set(MODEL, ["layers", 0, "W", "rects", 0], [0, 2, 0, 2]), r"layers\[0\].W.rects\[0\]: expected \[row_start, row_stop, col_start, col_stop, value\]"),
    (_set(MODEL, ["layers", 0, "W", "rects", 0, 1], 1.5), r"layers\[0\].W.rects\[0\]\[1\]: expected int, found float 1.5"),
    (_set(MODEL, ["layers", 0, "W", "rects", 0, 2], False), r"layers\[0\].W.rects\[0\]\[2\]: expected int, found bool false"),
    (_set(MODEL, ["layers", 0, "W", "rects", 0, 0], -1), r"layers\[0\].W.rects\[0\]\[0\]: expected an int ≥ 0, found -1"),
    (_set(MODEL, ["layers", 0, "W", "rects", 0, 1], 3), r"layers\[0\].W: grid rectangle 0: rows \[0, 3\) × cols \[0, 2\) do not fit in a 2×2 grid"),
    (_set(MODEL, ["layers", 0, "W", "rects", 0, 4], "1/0"), r"layers\[0\].W.rects\[0\]\[4\]: the denominator of '1/0' is 0"),
    (_set(MODEL, ["layers", 0, "W", "fill"], 0.0), r"layers\[0\].W.fill: expected an integer, a rational string"),
    (_set(MODEL, ["layers", 0, "W", "extra"], 0), r"layers\[0\].W: unknown field 'extra'"),
    (_set(MODEL, ["layers", 0, "b1", "shape"], [3, 2]), r"layers\[0\]: layer h: expected shape 3×2"),
    (_set(MODEL, ["inner_n"], 3), r"layers\[0\]: expected the shape inner_n × inner_d = 3×2 for b1, h and b2 \(W: inner_d × inner_d\), found b1, h and b2 of 2×2"),
    # certificates
    (_set(CERT, ["version"], 2), r"certificate field 'version': expected 1, found 2"),
    (_set(CERT, ["version"], True), r"certificate field 'version': expected 1, found True"),
    (_set(CERT, ["extra"], 1), r"certificate: unknown field 'extra'"),
    (_set(CERT, ["boundaries"], ...), r"certificate: missing field 'boundaries'"),
    (_set(CERT, ["boundaries"], {}), r"certificate field 'boundaries': expected a list, found dict"),
    (_set(CERT, ["meta"], ["k", "v"]), r"certificate field 'meta': expected an object of strings, found list"),
    (_set(CERT, ["meta", "k"], 3), r"certificate meta\['k'\]: expected str, found int"),
    (_set(CERT, ["boundaries", 0], [0]), r"certificate boundaries\[0\]: expected \{'layer': int, 'cells': \[...\]\}, found list"),
    (_set(CERT, ["boundaries", 0, "layer"], ...), r"certificate boundaries\[0\]: missing field 'layer'"),
    (_set(CERT, ["boundaries", 0, "layer"], True), r"certificate boundaries\[0\].layer: expected int, found bool true"),
    (_set(CERT, ["boundaries", 0, "layer"], 1.0), r"certificate boundaries\[0\].layer: expected int, found float"),
    (_set(CERT, ["boundaries", 0, "layer"], -1), r"certificate boundaries\[0\].layer: expected an int ≥ 0, found -1"),
    (_set(CERT, ["boundaries", 0, "label"], 5), r"certificate boundaries\[0\].label: expected str, found int"),
    (_set(CERT, ["boundaries", 0, "cells"], {}), r"certificate boundaries\[0\].cells: expected a list, found dict"),
    (_set(CERT, ["boundaries", 0, "other"], 1), r"certificate boundaries\[0\]: unknown field 'other'"),
    (_set(CERT, ["boundaries", 0, "cells", 0], {"row": 0}), r"cells\[0\]: expected \[row, col, node\] or \[row, col, \[\[node, coeff\], ...\], const\], found dict"),
    (_set(CERT, ["boundaries", 0, "cells", 0], [0, 0]), r"cells\[0\]: expected \[row, col, node\]"),
    (_set(CERT, ["boundaries", 0, "cells", 0], [0, 0, [[0, "1"]]]), r"cells\[0\]: expected \[row, col, node\]"),
    (_set(CERT, ["boundaries", 0, "cells", 0], [0, 0, 0, "1"]), r"cells\[0\]: expected \[row, col, node\]"),
    (_set(CERT, ["boundaries", 0, "cells", 0, 0], 0.5), r"cells\[0\]\[0\] \(row\): expected int, found float 0.5"),
    (_set(CERT, ["boundaries", 0, "cells", 0, 1], -3), r"cells\[0\]\[1\] \(col\): expected an int ≥ 0, found -3"),
    (_set(CERT, ["boundaries", 0, "cells", 0, 2], True), r"cells\[0\]\[2\] \(node\): expected int, found bool true"),
    (_set(CERT, ["boundaries", 1, "cells", 0, 2, 0], [0]), r"cells\[0\]\[2\]\[0\]: expected \[node, coeff\], found list"),
    (_set(CERT, ["boundaries", 1, "cells", 0, 2, 0, 0], "0"), r"cells\[0\]\[2\]\[0\]\[0\] \(node\): expected int, found str"),
    (_set(CERT, ["boundaries", 1, "cells", 0, 2, 0, 1], "1/0"), r"cells\[0\]\[2\]\[0\]\[1\]: the denominator of '1/0' is 0"),
    (_set(CERT, ["boundaries", 1, "cells", 0, 2, 0, 1], 2.0), r"cells\[0\]\[2\]\[0\]\[1\]: expected an integer, a rational string"),
    (_set(CERT, ["boundaries", 1, "cells", 0, 3], "x"), r"cells\[0\]\[3\] \(const\): expected a rational such as"),
]


@pytest.mark.parametrize("doc, match", DOC_CASES, ids=range(len(DOC_CASES)))
def test_malformed_documents(doc, match):
    with pytest.raises(SerializationError, match=match):
        from_json(doc)
    with pytest.raises(SerializationError, match=match):  # the same through the text loader
        loads(json.dumps(doc))


def test_files(tmp_path):
    with pytest.raises(SerializationError, match=r"cannot read .*nope.json: No such file"):
        load_file(tmp_path / "nope.json")
    with pytest.raises(SerializationError, match=r"cannot read .*: expected a regular file, found a directory"):
        load_file(tmp_path)
    (tmp_path / "bad.json").write_bytes(b"\xfe\xff{}")
    with pytest.raises(SerializationError, match=r"bad.json: not UTF-8 text"):
        load_file(tmp_path / "bad.json")
    with pytest.raises(SerializationError, match=r"cannot write .*: Is a directory"):
        dump_file(Circuit(1, 1, (), (0,)), tmp_path)


# ---- the writer refuses what the loader would refuse ------------------------------------------
def test_writer_checks():
    with pytest.raises(IRError, match=r"circuit name: expected a str, found int 5"):
        Circuit(1, 1, (), (0,), name=5)  # type: ignore[arg-type]
    named = Circuit(1, 1, (), (0,))
    object.__setattr__(named, "name", 5)  # past the constructor's check: the writer checks again
    with pytest.raises(SerializationError, match=r"circuit name: cannot write a name that is not a str \(found int\)"):
        dumps(named)
    with pytest.raises(SerializationError, match=r"model name: not valid Unicode text"):
        dumps(Model(1, 1, 1, 1, (), name="\ud800"))
    with pytest.raises(SerializationError, match=r"cannot write circuit size = 18446744073709551616"):
        dumps(Circuit(2**64, 1, (), (0,)))
    with pytest.raises(SerializationError, match=r"cannot write circuit output node id = 9223372036854775808"):
        dumps(Circuit(2**62, 2, (Gate.const(1),), (2**63,)))
    with pytest.raises(SerializationError, match=r"cannot write circuit node id = 9223372036854775808"):
        dumps(Circuit(2**62, 2, (Gate.const(1), Gate.mul(0, 2**63)), (0,)))
    ok = Circuit(2**62, 2, (Gate.const(1), Gate.mul(0, 2**63 - 1)), (2**63 - 1,))
    assert loads(dumps(ok)) == ok
    with pytest.raises(SerializationError, match=r"cannot write certificate boundaries\[0\].layer = "):
        dumps(Certificate((Boundary(2**64, ()),)))
    with pytest.raises(SerializationError, match=r"cannot write certificate boundaries\[0\].cells\[0\] index"):
        dumps(Certificate((Boundary(0, (Cell.node(0, 0, 2**70),)),)))
    with pytest.raises(SerializationError, match=r"to_json: expected a Circuit, Model or Certificate, found str"):
        to_json("circuit")  # type: ignore[arg-type]


# ---- the IR constructors the loaders rely on ----------------------------------------------------
@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: Grid(True, 2), ShapeError, r"non-negative integer sizes; found rows = True"),
        (lambda: Grid(2, -1), ShapeError, r"found cols = -1"),
        (lambda: Grid(2.0, 1), ShapeError, r"found rows = 2.0"),
        (lambda: Grid(1, 1, 0, 5), IRError, r"grid rectangles: expected a sequence of rectangles \(painted in order\), found int"),
        (lambda: Grid(1, 1, 0, ((0, 1, 0, True, 1),)), IRError, r"grid rectangle 0: expected int bounds"),
        (lambda: Grid(1, 1, 0, ((0, 1, 0, 1),)), IRError, r"grid rectangle 0: expected \(row_start"),
        (lambda: Grid(1, 1, True), IRError, r"grid fill: expected an exact number, found the bool True"),
        (lambda: Cell(-1, 0, ()), IRError, r"expected int row and column \(non-negative\), found \(-1, 0\)"),
        (lambda: Cell(0, True, ()), IRError, r"expected int row and column \(non-negative\), found \(0, True\)"),
        (lambda: Cell(0, 0, 5), IRError, r"expected a sequence of \(node, coefficient\) pairs, found int"),
        (lambda: Cell(0, 0, ((1, 2, 3),)), IRError, r"expected \(node, coefficient\) pairs, found \(1, 2, 3\)"),
        (lambda: Cell(0, 0, ((-1, 1),)), IRError, r"expected int node ids \(non-negative\), found -1"),
        (lambda: Cell(0, 0, ((True, 1),)), IRError, r"expected int node ids \(non-negative\), found True"),
        (lambda: Boundary(-1, ()), IRError, r"expected an int layer index \(non-negative\), found -1"),
        (lambda: Boundary(0, (), 5), IRError, r"expected a str label, found int"),
        (lambda: Boundary(0, 5), IRError, r"expected a sequence of Cells, found int"),
        (lambda: Certificate((5,)), IRError, r"certificate boundary 0: expected a Boundary, found int"),
        (lambda: Certificate((), (("k", 1),)), IRError, r"certificate meta: expected \(key, value\) string pairs, found \('k', 1\)"),
        (lambda: Certificate((), (("k", "a"), ("k", "b"))), IRError, r"certificate meta: the key 'k' appears twice"),
        (lambda: Certificate((), "kv"), IRError, r"certificate meta: expected \(key, value\) string pairs, found str"),
    ],
)
def test_constructors_refuse(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_constructors_normalise():
    g = Grid(2, 2, 0, [(0, 1, 0, 1, "1/2")])  # a list of rectangles becomes a tuple: the grid stays hashable
    assert g.rects == ((0, 1, 0, 1, Fraction(1, 2)),) and hash(g) == hash(Grid(2, 2, 0, ((0, 1, 0, 1, Fraction(1, 2)),)))
    assert Certificate((), {"b": "1", "a": "2"}).meta == (("b", "1"), ("a", "2"))
    assert Cell(0, 0, [[3, "1/2"]]).terms == ((3, Fraction(1, 2)),)


def test_messages_about_huge_values_do_not_fail():
    with pytest.raises(IRError, match=r"reads node %<5001-digit integer ≡ 0 mod 10\^9>, which is never defined"):
        Circuit(1, 1, (Gate.mul(0, 10**5000),), (1,))
    with pytest.raises(ShapeError, match=r"rows \[0, <5001-digit integer"):
        Grid(1, 1, 0, ((0, 10**5000, 0, 1, 1),))


# ---- fuzzing ------------------------------------------------------------------------------------
def _outcome(load, arg):
    """The loaded object, or None for a SerializationError; any other exception fails the test."""
    try:
        obj = load(arg)
    except SerializationError as e:
        assert str(e) and "\n" not in str(e).split("\n")[0]
        return None
    assert isinstance(obj, (Circuit, Model, Certificate))
    assert loads(dumps(obj)) == obj  # whatever loads, round-trips exactly
    return obj


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_raw_bytes(data):
    _outcome(loads, data)


@FUZZ
@given(st.data())
def test_fuzz_byte_edits_of_valid_documents(data):
    raw = bytearray(data.draw(st.sampled_from(_valid_texts())).encode())
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["set", "insert", "delete", "truncate"]))
        if op == "set":
            raw[pos] = data.draw(st.integers(0, 255))
        elif op == "insert":
            raw[pos:pos] = data.draw(st.binary(min_size=1, max_size=4))
        elif op == "delete":
            del raw[pos]
        else:
            del raw[pos:]
            break
    _outcome(loads, bytes(raw))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.sampled_from(["", "0", "1", "-1/2", "1/0", "0.5", "x", "a b", "\ud800", "causal", "mul", "1" * 5000,
                       "symverify.circuit", "symverify.model", "symverify.certificate"])
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["sym", "a", "shape", "rects", "fill", "x"]), inner, max_size=3),
    max_leaves=6,
)


def _locations(doc):
    out = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                out.append((*path, k))
                walk(v, (*path, k))
        elif isinstance(x, list):
            for i, v in enumerate(x):
                out.append((*path, i))
                walk(v, (*path, i))

    walk(doc, ())
    return out


@FUZZ
@given(st.data())
def test_fuzz_structured_mutations_of_valid_documents(data):
    doc = json.loads(data.draw(st.sampled_from(_valid_texts())))
    for _ in range(data.draw(st.integers(1, 3))):
        locs = _locations(doc)
        if not locs:
            break
        path = data.draw(st.sampled_from(locs))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = data.draw(st.sampled_from(["replace", "replace", "delete", "add", "wrap"]))
        if op == "replace":
            parent[path[-1]] = data.draw(JSON_VALUES)
        elif op == "delete":
            del parent[path[-1]]
        elif op == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["extra", "name", "meta", "label", "fill"]))] = data.draw(JSON_VALUES)
        else:
            parent.insert(path[-1], data.draw(JSON_VALUES))
    _outcome(loads, json.dumps(doc))  # floats nan/inf become NaN/Infinity tokens, refused by the loader
    _outcome(from_json, doc)  # the same document as Python data (large ints stay ints)


@FUZZ
@given(st.sampled_from(["n", "d", "inner_n", "inner_d", "version"]), st.one_of(
    st.integers(-(2**80), 2**80), st.floats(), st.booleans(), st.text(max_size=3), st.none()))
def test_fuzz_size_fields(field, value):
    for text in _valid_texts():
        doc = json.loads(text)
        if field in doc:
            doc[field] = value
            _outcome(from_json, doc)


# ---- the command line ---------------------------------------------------------------------------
BAD_FILES = {
    "not_utf8": b'{"format": "symverify.circuit", "name": "\xc3\x28"}',
    "truncated": b'{"format": "symverify.circuit", "version": 1',
    "deep": b"[" * 50_000 + b"]" * 50_000,
    "huge_int": json.dumps(CIRCUIT).replace('"n": 1', '"n": ' + "9" * 5000).encode(),
    "nan": json.dumps(CIRCUIT).replace('"n": 1', '"n": NaN').encode(),
    "div_zero": json.dumps(_set(CIRCUIT, ["gates", 1, 2], ["1/0", "1"])).encode(),
    "float_shape": json.dumps(_set(MODEL, ["layers", 0, "W", "shape"], [2.0, 2])).encode(),
    "meta_list": json.dumps(_set(CERT, ["meta"], [])).encode(),
    "cell_object": json.dumps(_set(CERT, ["boundaries", 0, "cells", 0], {"row": 0})).encode(),
    "cell_infinity": json.dumps(CERT).replace("[0, 0, 0]", "[Infinity, 0, 0]").encode(),
    "empty": b"",
}


@pytest.fixture
def bad_files(tmp_path):
    paths = {}
    for name, data in BAD_FILES.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_bytes(data)
    dump_file(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), tmp_path / "good.json")
    paths["good"] = tmp_path / "good.json"
    return paths


@pytest.mark.parametrize("name", sorted(BAD_FILES))
@pytest.mark.parametrize("command", ["info", "verify", "compile", "certificate"])
def test_cli_malformed_files_exit_3(bad_files, capsys, tmp_path, name, command):
    bad, good = str(bad_files[name]), str(bad_files["good"])
    argv = {"info": ["info", bad], "verify": ["verify", good, bad], "compile": ["compile", bad, "-o", str(tmp_path / "o.json")],
            "certificate": ["verify", good, good, "--certificate", bad]}[command]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 3 and out.out == ""
    assert out.err.startswith("symverify: error: ") and out.err.count("\n") == 1 and "Traceback" not in out.err
    assert bad in out.err
    assert not (tmp_path / "o.json").exists()


def test_cli_subprocess_prints_no_traceback(bad_files):
    for name in ("deep", "huge_int", "div_zero", "not_utf8"):
        proc = subprocess.run([sys.executable, "-m", "symverify.cli", "info", str(bad_files[name])], capture_output=True, text=True)
        assert proc.returncode == 3, proc.stderr
        assert proc.stderr.startswith("symverify: error: ") and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_cli_internal_errors_are_one_line(monkeypatch, capsys, bad_files):
    import symverify.cli as cli

    def boom(path):
        raise KeyError("unexpected")

    monkeypatch.setattr(cli, "_load", boom)
    monkeypatch.delenv("SYMVERIFY_TRACEBACK", raising=False)
    code = main(["info", str(bad_files["good"])])
    err = capsys.readouterr().err
    assert code == 3 and err.startswith("symverify: error: internal error (please report it") and "KeyError" in err
    assert err.count("\n") == 1
    monkeypatch.setenv("SYMVERIFY_TRACEBACK", "1")
    with pytest.raises(KeyError):
        main(["info", str(bad_files["good"])])


def test_grid_rectangles_must_come_in_order():
    """Rectangles are painted in order: a set of overlapping ones was painted in hash order
    (``{(0, 2, 0, 2, 1), (0, 1, 0, 1, 5)}`` gave ``[[5, 1], [1, 1]]`` or the reverse), a dict read
    as its keys. Both refused; a generator is an order."""
    for rects in ({(0, 2, 0, 2, 1), (0, 1, 0, 1, 5)}, {(0, 2, 0, 2, 1): "x"}):
        with pytest.raises(IRError, match=r"grid rectangles: expected a sequence of rectangles \(painted in order\)"):
            Grid(2, 2, 0, rects)
    assert Grid(2, 2, 0, (r for r in [(0, 2, 0, 2, 1), (0, 1, 0, 1, 5)])).to_rows() == [[5, 1], [1, 1]]
