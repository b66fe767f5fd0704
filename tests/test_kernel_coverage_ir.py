"""Coverage of ``symverify/kernel/ir/`` (scalar.py, affine.py, baseconv.py, circuit.py, grid.py,
certificate.py): constructor refusals, sympy values read as exact scalars, the operators'
``NotImplemented`` paths, and grid access paths the suite never took. Each test names the functions
it reaches.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

from symverify.errors import IRError, SerializationError, ShapeError
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.baseconv import Layer
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.gate import Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, as_scalar, show_scalar, sym


@pytest.mark.parametrize(("terms", "message"), [
    # scalar.py _check_terms
    ((5,), r"Sym term 0: expected a \(monomial, coefficient\) pair, found 5"),
    ((("a", Fraction(1)),), "expected a monomial tuple of .* found 'a'"),
    (((("a",), Fraction(1)),), r"expected \(name, exponent\) pairs in the monomial, found 'a'"),
    ((((("a",),), Fraction(1)),), r"expected \(name, exponent\) pairs in the monomial, found \('a',\)"),
])
def test_sym_refuses_malformed_terms(terms, message) -> None:
    with pytest.raises(IRError, match=message):
        Sym(terms)


def test_sym_arithmetic_with_a_float_is_not_implemented() -> None:
    """scalar.py ``Sym.__add__``, ``Sym.__sub__``, ``Sym.__rsub__``: a float is not lifted (it would
    not be exact): Python's TypeError."""
    a = sym("a")
    with pytest.raises(TypeError):
        a + 0.5
    with pytest.raises(TypeError):
        a - 0.5
    with pytest.raises(TypeError):
        0.5 - a
    assert 2 - a == -a + 2 and (2 - a) + a == 2


def test_sympy_values_are_read_exactly() -> None:
    """scalar.py ``as_scalar`` and ``_from_sympy_number``: sympy rationals, symbols and polynomials
    in symbols become the same exact values as the native construction; an irrational or float sympy
    value is refused."""
    a, b = sympy.symbols("a b")
    assert as_scalar(sympy.Rational(3, 6)) == Fraction(1, 2)
    assert as_scalar(sympy.Integer(4)) == 4 and type(as_scalar(sympy.Integer(4))) is int
    assert as_scalar(a) == sym("a")
    got = as_scalar(a * b + sympy.Rational(1, 2) * a**2 - 3)
    assert got == sym("a") * sym("b") + Fraction(1, 2) * sym("a") ** 2 - 3
    for bad in (sympy.sqrt(2), sympy.Float(0.5), 1 / a):
        with pytest.raises(IRError, match="expected a rational number or a polynomial in parameters"):
            as_scalar(bad, "gate 0 coefficient")


def test_show_scalar_of_a_bool_and_of_an_unprintable_value() -> None:
    """scalar.py ``_scalar_text``: a bool prints as itself, a value whose ``__str__`` fails gets a name."""

    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert show_scalar(True) == "True"
    assert show_scalar(Unprintable()) == "<Unprintable>"


def test_affine_sub_neg_and_constants() -> None:
    """affine.py ``Affine.__add__``, ``Affine.__neg__``, ``Affine.__sub__`` and ``Affine.scaled``:
    ``x + 3``, ``−x``, ``x − 2``, ``x − x`` and a zero scale (every term dropped)."""
    x = Affine.unit(0) + Affine.unit(1)
    assert x + 3 == Affine({0: 1, 1: 1}, 3)
    assert -x == Affine({0: -1, 1: -1})
    assert x - 2 == Affine({0: 1, 1: 1}, -2)
    assert x - x == Affine()
    assert x.scaled(0) == Affine()


def test_layer_mode_of_an_unhashable_value() -> None:
    """baseconv.py ``Layer.__post_init__``: a mode that is no Mode value (a list) is refused by name."""
    with pytest.raises(IRError, match=r"layer mode: expected 'causal' or 'cyclic', found \[1\]"):
        Layer.make(1, 1, mode=[1])


def test_gate_args_not_a_sequence() -> None:
    """circuit.py ``_check``: a gate whose node ids are a bare int."""
    from symverify.kernel.ir.circuit import Circuit

    with pytest.raises(IRError, match="mul args: expected a sequence of node ids, found int 5"):
        Circuit(1, 2, (Gate(Op.MUL, 5, ()),), (2,))  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [lambda: Grid.identity(2.0), lambda: Grid.symbolic("w", 2, 2.5)])
def test_grid_builders_refuse_a_float_size(make) -> None:
    """grid.py ``Grid.identity`` and ``Grid.symbolic`` (the branches for a size that is not an int):
    a ShapeError from the constructor's size check (it was a TypeError from ``range``)."""
    with pytest.raises(ShapeError, match="a grid needs non-negative integer sizes"):
        make()


def test_grid_access_paths() -> None:
    """grid.py ``Grid.from_rows`` (row count), ``Grid.paint`` (empty paint is a no-op),
    ``Grid.cells`` (cells of an array-backed grid) and ``Grid.get`` (on a grid too large to expand,
    outside every rectangle)."""
    with pytest.raises(ShapeError, match="expected 2 rows, found 1"):
        Grid.from_rows([[1, 2]], rows=2)
    g = Grid(2, 2, 0)
    assert g.paint(1, 1, 0, 2, 5) is g and g.paint(0, 2, 1, 1, 5) is g
    arr = Grid.from_array(np.array([[0.5, 0.0], [0.0, 1.0]]))
    assert arr.cells() == {(0, 0): Fraction(1, 2), (1, 1): 1}
    big = Grid(1 << 30, 1 << 30, 7, ((0, 1 << 29, 0, 1 << 29, 1), (5, 6, 5, 6, 2)))
    assert (big.get(3, 3), big.get(5, 5), big.get((1 << 30) - 1, 0)) == (1, 2, 7)


def test_certificate_refusals() -> None:
    """certificate.py ``Certificate.__post_init__`` (boundaries not a sequence) and
    ``Certificate.from_json`` (JSON not an object)."""
    with pytest.raises(IRError, match="certificate: expected a sequence of Boundary objects, found int"):
        Certificate(5)  # type: ignore[arg-type]
    with pytest.raises(SerializationError, match="certificate: expected a JSON object, found"):
        Certificate.from_json([1])


@pytest.mark.parametrize(("cell", "message"), [
    ([0, 0, [[0, 1]], "1/0"], r"cells\[0\]\[3\] \(const\): the denominator of '1/0' is 0"),
    ([0, 0, [[-1, 1]], 0], r"cells\[0\]\[2\]\[0\]\[0\] \(node\): expected an int ≥ 0, found -1"),
    ([0, -2, 3], r"cells\[0\]\[1\] \(col\): expected an int ≥ 0, found -2"),
    ([0, 0, [[0, {"sym": [[1, {"1a": 1}]]}]], 0], r"cells\[0\]\[2\]\[0\]\[1\].sym\[0\]\[1\]"),
])
def test_certificate_cells_from_json_are_checked_field_by_field(cell, message) -> None:
    """certificate.py ``from_json`` (the removed ``except IRError`` around the cell constructors):
    every field a Cell would check is checked first, as a SerializationError naming the field;
    a valid cell still round-trips."""
    data = {"format": "symverify.certificate", "version": 1, "meta": {},
            "boundaries": [{"layer": 1, "label": "b", "cells": [cell]}]}
    with pytest.raises(SerializationError, match=message):
        Certificate.from_json(data)
    ok = Certificate((Boundary(1, (Cell(0, 1, ((0, Fraction(1, 2)), (2, sym("a"))), 3),), "b"),))
    assert Certificate.from_json(ok.to_json()) == ok
