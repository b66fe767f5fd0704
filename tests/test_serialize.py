"""Versioned JSON: exact round trips and a located error for every malformed input."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify import Circuit, Gate, Model, SerializationError, dump_file, load_file, sym
from symverify.ir.serialize import dumps, loads, to_json
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.semantics.exact import evaluate
from symverify.testing import circuits, models, rational_inputs


@given(circuits(allow_sym=True), st.data())
def test_circuit_trace_serialize_load_evaluate(c, data):
    back = loads(dumps(c))
    assert back == c
    if not c.params():
        u = data.draw(rational_inputs(c.n, c.d))
        assert evaluate(back, u) == evaluate(c, u)


@given(models())
def test_model_round_trip(m):
    assert loads(dumps(m)) == m


def test_file_round_trip_with_symbols(tmp_path):
    c = Circuit(1, 2, (Gate.lin(0, sym("a") * sym("b") - 1, 1, "2/3"),), (2,), "t")
    dump_file(c, tmp_path / "c.json")
    assert load_file(tmp_path / "c.json") == c


def test_certificate_round_trip():
    cert = Certificate((Boundary(0, (Cell.node(0, 0, 0),)), Boundary(2, (Cell(1, 0, ((3, 2), (1, -1)), 5),), "x")))
    assert loads(json.dumps(cert.to_json())) == cert


GOOD = to_json(Circuit(1, 2, (Gate.mul(0, 1),), (2,)))


def _bad(**changes):
    doc = json.loads(json.dumps(GOOD))
    doc.update(changes)
    return json.dumps(doc)


@pytest.mark.parametrize(
    "text, match",
    [
        ('{"format": "symverify.circuit", "version": 1, "n": 1,', r"not valid JSON \(truncated\?\)"),
        (_bad(version=7), r"document.version: expected 1, found 7"),
        (_bad(format="other"), r"document.format: expected one of"),
        (_bad(n="1"), r"document.n: expected int, found str"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "gates"}), r"document: missing field 'gates'"),
        (_bad(gates=[["pow", [0, 1], []]]), r"gates\[0\]: unknown op 'pow'"),
        (_bad(gates=[["lin", [0, 1], ["0.5", "1"]]]), r"gates\[0\].coeffs\[0\]: expected a rational such as '3' or '-1/2', found '0.5'"),
        (_bad(gates=[["mul", [0, 5], []]]), r"gates\[0\].args\[1\]: expected a node id below n·d \+ 0 = 2 \(an input or an earlier gate\), found 5"),
        (_bad(gates=[["mul", [0, 1]]]), r"gates\[0\]: expected \[op, \[args\], \[coeffs\]\]"),
        (_bad(outputs=["2"]), r"document.outputs: expected a list of node ids"),
        ("[1, 2]", r"document: expected a JSON object, found list"),
    ],
)
def test_malformed_circuit_documents(text, match):
    with pytest.raises(SerializationError, match=match):
        loads(text)


def test_malformed_model_documents():
    m = json.loads(dumps(Model(1, 1, 1, 1, ())))
    m["layers"] = [{"mode": "sideways", "W": {}, "b1": {}, "h": {}, "b2": {}}]
    with pytest.raises(SerializationError, match=r"layers\[0\].mode: expected 'causal' or 'cyclic', found 'sideways'"):
        loads(json.dumps(m))
    m["layers"] = [{"mode": "causal", "W": {"shape": [1, 1], "rects": [[0, 2, 0, 1, "1"]]}, "b1": {}, "h": {}, "b2": {}}]
    with pytest.raises(SerializationError, match=r"layers\[0\].W: .*do not fit"):
        loads(json.dumps(m))


def test_missing_file(tmp_path):
    with pytest.raises(SerializationError, match="cannot read"):
        load_file(tmp_path / "nope.json")


def test_bad_certificate_documents():
    with pytest.raises(SerializationError, match=r"certificate field 'version': expected 1, found 2"):
        Certificate.from_json({"format": "symverify.certificate", "version": 2, "boundaries": []})
    with pytest.raises(SerializationError, match=r"boundaries\[0\].cells\[0\]: expected \[row, col, node\]"):
        Certificate.from_json({"format": "symverify.certificate", "version": 1, "boundaries": [{"layer": 0, "cells": [[0]]}]})


def test_symbolic_terms_add_and_names_are_checked():
    from symverify.ir.serialize import scalar_from_json

    assert scalar_from_json({"sym": [["1", {"a": 1}], ["2", {"a": 1}]]}, "w") == 3 * sym("a")
    with pytest.raises(SerializationError, match="parameter name must be an identifier"):
        scalar_from_json({"sym": [["1", {"a b": 1}]]}, "w")
