"""Attacks through a butterfly factor's fields set after construction (``object.__setattr__`` past the
frozen dataclass): a diagonal of another length or kind, an entry that is no exact scalar, a derived
``all_int`` that disagrees with the entries. The methods crashed on some (a string entry) and read
others in part (a longer diagonal); every method refuses them with an :class:`IRError` naming the
factor (:func:`symverify.kernel.provers.fingerprint.check_plain`)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope

METHODS = ["randomized", "auto"]


def _k(d1: tuple[object, ...] = (1,)) -> Kaleidoscope:
    """A 2×2 kaleidoscope: ``diag(d1, 1)`` then the identity."""
    f = ButterflyFactor(2, 1, d1, (0,), (0,), (1,))
    return Kaleidoscope(2, 2, (BBStar(2, (f, ButterflyFactor.identity(2, 1))),))


@pytest.mark.parametrize(("field", "value", "match"), [
    ("d1", ("x",), r"butterfly factor 0: expected every d1 entry an exact scalar .* found builtins\.str"),
    ("d1", (1, 1), r"butterfly factor 0: expected d1 a tuple of 1 entries \(size/2\), found tuple of 2"),
    ("d1", [1], r"butterfly factor 0: expected d1 a tuple of 1 entries \(size/2\), found list of 1"),
    ("d2", (Fraction(0, 2, _normalize=False),), r"butterfly factor 0: expected every d2 entry an exact scalar .* found fractions\.Fraction"),
    ("all_int", False, r"butterfly factor 0: its all_int is False but its entries are all plain ints"),
    ("stride", 2, r"butterfly factor 0: expected a power-of-two size ≥ 2 and stride ≤ size/2, found size 2, stride 2"),
])
@pytest.mark.parametrize("method", METHODS)
def test_a_factor_field_out_of_form_is_refused(field, value, match, method):
    k = _k()
    object.__setattr__(k.groups[0].factors[0], field, value)
    with pytest.raises(IRError, match=r"lhs: " + match):
        sv.verify(k, _k(), method=method)


@pytest.mark.parametrize("method", METHODS)
def test_entries_that_are_no_plain_ints_under_all_int_are_refused(method):
    """``all_int`` is derived by the constructor and read by the plans: a Fraction written in with the
    flag left True is refused, not read by the all-int path."""
    k = _k()
    object.__setattr__(k.groups[0].factors[0], "d1", (Fraction(1, 2),))
    with pytest.raises(IRError, match=r"lhs: butterfly factor 0: its all_int is True but its entries are not all plain ints"):
        sv.verify(k, _k((Fraction(1, 2),)), method=method)
    assert sv.verify(_k((Fraction(1, 2),)), _k((Fraction(1, 2),)), method=method).proved
