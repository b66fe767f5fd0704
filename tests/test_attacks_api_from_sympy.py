"""Attacks on :func:`symverify.ir.build.from_sympy`: every sympy object it cannot read exactly as a
polynomial over commuting inputs and parameters is refused with an ``IRError`` naming it, never read
as something else (a non-commutative product as a commutative one, two symbols of one name as one)."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.ir.build import from_sympy
from symverify.semantics.exact import evaluate

x, y = sympy.symbols("x y")
A, B = sympy.symbols("A B", commutative=False)
M = sympy.MatrixSymbol("M", 2, 2)
f = sympy.Function("f")

REFUSED = {
    "non-commutative parameters": (A * B - B * A + x, r"parameter: the symbol A is non-commutative"),
    "non-commutative power": (A**2 * x, r"the symbol A is non-commutative"),
    "two symbols of one name": (sympy.Symbol("w") - sympy.Symbol("w", positive=True) + x,
                                r"two distinct sympy symbols are named 'w' \(Symbol\('w'\) and Symbol\('w', positive=True\)\)"),
    "two dummies of one name": (sympy.Dummy("w") - sympy.Dummy("w") + x, r"two distinct sympy symbols are named '_w'"),
    "a parameter named as an input": (sympy.Symbol("x", positive=True) * x, r"two distinct sympy symbols are named 'x'"),
    "a float": (sympy.Float(0.1) * x, r"the number 0\.1000* is not exact; use sympy\.Rational"),
    "the imaginary unit": (sympy.I * x, r"the constant I is not a finite rational number"),
    "pi": (sympy.pi * x, r"the constant pi is not a finite rational number"),
    "oo": (sympy.oo * x, r"the constant oo is not a finite rational number"),
    "nan": (sympy.nan, r"the constant nan is not a finite rational number"),
    "zoo": (sympy.zoo, r"the constant zoo is not a finite rational number"),
    "sqrt(2)": (sympy.sqrt(2) * x, r"the constant sqrt\(2\) is not a finite rational number"),
    "a matrix entry": (M[0, 0] * x, r"M\[0, 0\] is not a polynomial"),
    "a matrix symbol": (M, r"M is not a polynomial"),
    "a function": (f(x) + y, r"f\(x\) is not a polynomial"),
    "Piecewise": (sympy.Piecewise((x, x > 0), (y, True)), r"Piecewise\(.*\) is not a polynomial"),
    "a negative power": (1 / x, r"1/x is not a polynomial"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_from_sympy_cannot_read_exactly_is_refused(name):
    expr, message = REFUSED[name]
    with pytest.raises(IRError, match=rf"from_sympy: .*{message}"):
        from_sympy([expr], [x, y], n=1, d=2)


def test_a_non_commutative_input_is_refused():
    with pytest.raises(IRError, match=r"input 0: the symbol A is non-commutative"):
        from_sympy([A * x], [A, x], n=1, d=2)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 3), st.integers(0, 3), st.booleans()), max_size=4),
       st.integers(-5, 5), st.integers(-5, 5), st.integers(-5, 5))
def test_the_same_symbol_twice_is_one_parameter(terms, a, b, wv):
    """Equal symbols (same name and assumptions) are one parameter; the circuit's value is sympy's."""
    w = sympy.Symbol("w", positive=True)
    expr = sum((c * x**i * y**j * (w if pw else sympy.Symbol("w", positive=True)) for c, i, j, pw in terms),
               sympy.Integer(0))
    c = from_sympy([expr], [x, y], n=1, d=2)
    params = {"w": wv} if "w" in c.params() else {}
    assert evaluate(c, [[a, b]], params)[0][0] == expr.subs({x: a, y: b, w: wv})
