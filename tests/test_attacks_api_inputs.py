"""Attacks on the IR's constructors and the helpers users call on their own circuits, grids and models
with odd arguments (huge integers, numpy values, 1-d arrays, None): each ends
in a ``SymverifyError`` naming what was expected and what was found, never in a bare Python error
(``ValueError`` from printing a 100 000-bit integer, ``IndexError``, ``AttributeError``) nor in a
silently wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

from symverify import Circuit, Gate, Grid, Layer, Model, sym
from symverify.errors import IRError, LimitError, ShapeError

HUGE = 2**100_000  # its decimal text is beyond Python's 4300-digit limit: str() or repr() raise ValueError


@pytest.mark.parametrize("make, error, message", [
    (lambda: Gate("lin", HUGE, (1, 1)), IRError, r"gate args: expected a sequence of node ids, found int <100001-bit integer"),
    (lambda: Gate("lin", (0, 0), HUGE), IRError, r"gate coefficients: expected a sequence, found int <100001-bit integer"),
    (lambda: sym(HUGE), IRError, r"a parameter name must be an identifier .*; found <100001-bit integer"),
    (lambda: Grid.symbolic(HUGE, 1, 1), IRError, r"Grid.symbolic: expected a str name, found int <100001-bit integer"),
    (lambda: Grid.symbolic(5, 1, 1), IRError, r"Grid.symbolic: expected a str name, found int 5"),
    (lambda: Grid.from_rows([[1]], rows=HUGE), ShapeError, r"Grid.from_rows: expected <100001-bit integer .*> rows, found 1"),
    (lambda: Grid.from_rows([[1]], cols=HUGE), ShapeError, r"Grid.from_rows: row 0: expected <100001-bit integer .*> entries, found 1"),
    (lambda: Grid.from_rows([[1]], rows=1.5), ShapeError, r"Grid.from_rows: rows: expected a non-negative int \(or None: counted\), found 1.5"),
    (lambda: Grid.from_rows([[1]], cols=-1), ShapeError, r"Grid.from_rows: cols: expected a non-negative int .*found -1"),
    (lambda: Grid.from_rows(np.array([1, 2])), IRError, r"Grid.from_rows: row 0: expected a sequence, found int64"),
    (lambda: Grid.from_rows([5, [1]]), IRError, r"Grid.from_rows: row 0: expected a sequence, found int"),
    (lambda: Model(1, 1, 1, 1, ()).then(None), IRError, r"Model.then: expected a Model, found NoneType None"),
])
def test_odd_constructor_arguments_are_refused_by_name(make, error, message):
    """Each odd argument is refused with a message naming the argument and showing what was found,
    a huge integer abbreviated (its ``repr`` raised ``ValueError`` in the message itself)."""
    with pytest.raises(error, match=message):
        make()


def test_a_huge_trace_size_is_refused_by_the_limit_with_its_size_abbreviated():
    """``Circuit.trace(fn, 2^100000, 1)`` passes the type check and meets ``MAX_INPUTS``, whose
    message printed ``n`` in full (a ``ValueError``)."""
    with pytest.raises(LimitError, match=r"a circuit on <100001-bit integer .*>×1 inputs"):
        Circuit.trace(lambda u: [u[0][0]], HUGE, 1)


def test_grid_identity_reads_a_numpy_size_by_its_value():
    """``Grid.identity(np.int64(2))`` raised ``AttributeError`` (the limit check read the numpy integer);
    it is the 2×2 identity."""
    assert Grid.identity(np.int64(2)) == Grid.identity(2)
    assert Grid.from_rows([[1, 0], [0, 1]], rows=np.int64(2), cols=np.uint8(2)) == Grid.identity(2)


def test_model_then_stacks_models_of_one_shape():
    layer = Layer.make(1, 1)
    one = Model(1, 1, 1, 1, (layer,))
    assert one.then(one).depth == 2


@pytest.mark.parametrize("n, d, error, message", [
    (None, 2, IRError, r"circuit size: expected positive ints n, d; found n=None, d=2"),
    (1, 2.0, IRError, r"circuit size: expected positive ints n, d; found n=1, d=2.0"),
    (HUGE, 2, LimitError, r"a circuit on <100001-bit integer .*>×2 inputs"),
], ids=["None", "float", "huge"])
def test_from_sympy_checks_its_sizes_before_computing_with_them(n, d, error, message):
    """``from_sympy(exprs, inputs, n=None, d=2)`` raised ``TypeError`` (``None * 2``) and a 100 000-bit
    ``n`` ``ValueError`` (printing ``n·d``); the sizes are checked first, as ``Circuit.trace`` checks them."""
    sympy = pytest.importorskip("sympy")
    from symverify import from_sympy

    x, y = sympy.symbols("x y")
    with pytest.raises(error, match=message):
        from_sympy([x * y], [x, y], n, d)
