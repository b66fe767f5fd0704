"""``Sym * int``: a polynomial times a plain int is every coefficient times it, the monomials as they
are (0 and 1 read directly); the result is the general product's canonical form, term for term."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.scalar import Sym, _check_terms, sym

NAMES = st.sampled_from(["a", "b", "c", "D1[3]"])
COEFFS = st.one_of(st.integers(-5, 5), st.integers(-(2**80), 2**80), st.fractions(max_denominator=50))
MULTIPLIERS = st.one_of(st.integers(-3, 3), st.integers(-(2**70), 2**70), st.sampled_from([2**63, -(2**63) - 1]))


@st.composite
def polynomials(draw: Any) -> Any:
    p: Any = 0
    for _ in range(draw(st.integers(1, 4))):
        term: Any = draw(COEFFS)
        for name in draw(st.lists(NAMES, min_size=0, max_size=3)):
            term = term * sym(name)
        p = p + term
    return p + draw(COEFFS) * sym(draw(NAMES))


def _general(p: Sym, k: int) -> Any:
    """The product by the general path: ``k`` lifted to a constant polynomial, terms multiplied
    pairwise and rebuilt by ``Sym._make``."""
    acc = {m: c * Fraction(k) for m, c in p.terms}
    return Sym._make(acc)


@settings(max_examples=300, deadline=None)
@given(polynomials(), MULTIPLIERS)
def test_a_polynomial_times_an_int_is_the_general_product(p: Any, k: int) -> None:
    if not isinstance(p, Sym):  # the terms drawn cancelled to a number
        return
    got, want = p * k, _general(p, k)
    assert type(got) is type(want) and got == want
    assert k * p == got
    if isinstance(got, Sym):
        _check_terms(got.terms)  # canonical: sorted distinct monomials, nonzero Fraction coefficients
        assert got.terms == want.terms


def test_zero_and_one_are_read_directly() -> None:
    a = sym("a") + 2 * sym("b")
    assert a * 0 == 0 and type(a * 0) is int
    assert a * 1 is a and 1 * a is a
    assert (a * 3).terms == (((("a", 1),), Fraction(3)), ((("b", 1),), Fraction(6)))


@pytest.mark.parametrize("other", [True, 2.0])
def test_a_bool_or_a_float_is_not_an_int_multiplier(other: Any) -> None:
    """Only a plain ``int`` takes the direct path: a bool or a float is no exact scalar here."""
    with pytest.raises(TypeError, match="unsupported operand"):
        sym("a") * other
