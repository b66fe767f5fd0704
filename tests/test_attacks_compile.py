"""Attacks on ``symverify.compile(circuit, method=..., **options)`` from Python: options of the wrong
type or range, degenerate and extreme circuits. Each ends in a model that verifies as proved or in a
clear ``SymverifyError``, never a model that verify refutes nor a bare Python exception
(tests/test_compile_dense.py and test_compile_kaleidoscope.py hold the ordinary option checks)."""

import re
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import CompileError, IRError
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit, Gate

METHODS = ("dense", "kaleidoscope")


@pytest.fixture(scope="module")
def small():
    return sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)


# ---- options ------------------------------------------------------------------------------------
@pytest.mark.parametrize("max_cells", [True, 0, -1, 2.0, "5"])
def test_max_cells_must_be_a_positive_int(small, max_cells):
    """``max_cells='5'`` was compared with an int (TypeError); ``True``, ``0``, ``-1`` and ``2.0``
    were taken as limits and blamed the circuit ("more than max_cells = True")."""
    with pytest.raises(CompileError, match=r"max_cells: expected a positive int, found "):
        sv.compile(small, method="kaleidoscope", max_cells=max_cells)


def test_a_huge_max_cells_is_no_limit(small):
    assert sv.verify(small, sv.compile(small, max_cells=10**100)).proved


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", [3, None, b"x"])
def test_the_model_name_must_be_a_str(small, method, name):
    """A non-str name made a model that could not be written (SerializationError at dump time)."""
    with pytest.raises(CompileError, match=r"name: expected a str, found "):
        sv.compile(small, method=method, name=name)


def test_circuit_and_model_names_must_be_str(small):
    """``Circuit(..., name=3)`` was accepted and its repr raised TypeError."""
    with pytest.raises(IRError, match=r"circuit name: expected a str, found int 3"):
        Circuit(1, 2, (Gate.mul(0, 1),), (2,), name=3)  # type: ignore[arg-type]
    m = sv.compile(small).model
    with pytest.raises(IRError, match=r"model name: expected a str, found NoneType None"):
        Model(m.n, m.d, m.inner_n, m.inner_d, m.layers, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", [None, 1, ["dense"], "Dense"])
def test_methods_that_are_not_names(small, method):
    with pytest.raises(CompileError, match=r"unknown method .*; expected one of \['dense', 'kaleidoscope'\]"):
        sv.compile(small, method=method)


# ---- tracing what has no circuit ------------------------------------------------------------------
def test_dividing_by_a_wire_or_raising_to_one_is_refused():
    """``1 / x`` and ``2 ** x`` raised Python's TypeError ("unsupported operand"); ``x ** True``
    was ``x``."""
    with pytest.raises(IRError, match=r"no division gate: 1 / Wire\(%0\) divides by a wire"):
        sv.Circuit.trace(lambda u: [1 / u[0][0]], n=1, d=1)
    with pytest.raises(IRError, match=r"2 \*\* Wire\(%0\) raises to a wire's power"):
        sv.Circuit.trace(lambda u: [2 ** u[0][0]], n=1, d=1)
    with pytest.raises(IRError, match=r"positive int exponent, found True"):
        sv.Circuit.trace(lambda u: [u[0][0] ** True], n=1, d=1)


@pytest.mark.parametrize("fn, what", [
    (lambda u: [u[0][0] * u[0][1] if u[0][0] else u[0][1]], "truth value"),
    (lambda u: [u[0][1] if u[0][0] == 0 else 2 * u[0][0]], "=="),
    (lambda u: [u[0][1] if u[0][0] != u[0][1] else u[0][0]], "!="),
    (lambda u: [max(u[0])], ">"),
    (lambda u: [u[0][0] if u[0][0] <= 1 else u[0][1]], "<="),
    (lambda u: [abs(u[0][0])], "abs"),
    (lambda u: [u[0][0] // 2], "//"),
    (lambda u: [7 % u[0][0]], "%"),
])
def test_branches_and_comparisons_on_wires_are_refused(fn, what):
    """``x * y if x else y`` traced as ``x * y`` (a wire was always true) and ``y if x == 0 else 2x``
    as ``2x`` (``==`` was identity): circuits that differ from the function at ``x = 0``, with no
    error; ``abs``, ``//``, ``%`` and ``<`` raised Python's TypeError."""
    with pytest.raises(IRError, match=rf"{re.escape(what)} on Wire\(%\d\): a traced wire has no value"):
        sv.Circuit.trace(fn, n=1, d=2)


def test_wires_still_hash_and_compare_by_identity_in_containers():
    seen = {}

    def fn(u):
        x = u[0][0]
        seen[x] = 1
        return [x * x, x] if x in [x] else []

    assert sv.Circuit.trace(fn, n=1, d=2).outputs == (2, 0) and len(seen) == 1


# ---- degenerate and extreme circuits: compiled and proved by both methods -----------------------
def _squarings(k: int, start: Gate | None = None) -> Circuit:
    """``x^(2^k)`` (or ``c^(2^k)`` for a constant start): k squarings in a row."""
    first = [start] if start is not None else []
    base = 1 if start is not None else 0
    gates = first + [Gate.mul(base + i, base + i) for i in range(k)]
    return Circuit(1, 1, tuple(gates), (len(gates),))


CIRCUITS = {
    "no outputs": Circuit(1, 2, (Gate.mul(0, 1),), ()),
    "outputs are inputs": Circuit(2, 2, (), (3, 0, 2)),
    "constant only": Circuit(1, 2, (Gate.const(5),), (2,)),
    "zero constant twice": Circuit(1, 2, (Gate.const(0),), (2, 2)),
    "one output four times": Circuit(2, 2, (Gate.mul(0, 1),), (4, 4, 4, 4)),
    "coefficient 2^4000": Circuit(1, 2, (Gate.lin(0, 2**4000, 1, 1),), (2,)),
    "coefficient 1/3^500": Circuit(1, 2, (Gate.lin(0, Fraction(1, 3**500), 1, 1),), (2,)),
    "x^(2^64)": _squarings(64),
    "3^(2^64)": _squarings(64, Gate.const(3)),
    "n·d = 1": Circuit(1, 1, (Gate.mul(0, 0),), (1,)),
    "d = 3, not a power of two": Circuit(2, 3, (Gate.mul(0, 5), Gate.lin(6, 1, 2, -1)), (7, 6, 4)),
    "symbolic coefficient squared": Circuit(1, 2, (Gate.lin(0, sv.sym("a") * sv.sym("a"), 1, 1), Gate.mul(2, 2)), (3,)),
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(CIRCUITS))
def test_degenerate_and_extreme_circuits_compile_to_proved_models(name, method):
    c = CIRCUITS[name]
    out = sv.compile(c, method=method)
    assert out.over_bound() == []
    assert sv.verify(c, out).proved
    assert sv.verify(c, out.model, method="randomized").proved
