"""Every timeout follows one rule (``timeout_seconds``). ``prove_forall`` refused a ``Fraction``
timeout (and a numpy integer, a numpy ``float32``), as ``verify`` refused a ``Fraction`` and a
``float32``, while ``error_bound`` takes all of them: both take every positive int, float and
``Fraction`` now, and refuse the rest in the same words."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import symverify as sv
from symverify.kernel.provers.options import timeout_seconds
from symverify.parametric import Gadget, Param, ParametricError, PLayer, inp, tap, var

i, q, N = (var(x) for x in "iqN")
COPY = Gadget("copy", (Param("N", 1, 8),), N, 1, (PLayer(b1=1, h=(tap(0),), mode="causal"),), inp(i, q))
SQUARE = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0]], n=1, d=1)


ACCEPTED = [Fraction(1, 2), Fraction(5), np.int64(30), np.float32(20.0), np.float64(2.5), 20, 2.5]
REFUSED = [(Decimal("20"), r"Decimal\('20'\)"), ("5", "'5'"), (True, "True"), (0, "0"), (-Fraction(1, 2), r"Fraction\(-1, 2\)"),
           (float("nan"), "nan"), (np.bool_(True), r"(np\.)?True_?")]
UNREPRESENTABLE = [(Fraction(1, 10**400), r"Fraction\(1, <401-digit integer.*>\)"),
                   (Fraction(10**400, 3), r"Fraction\(<401-digit integer.*>, 3\)")]


@pytest.mark.parametrize("t", ACCEPTED, ids=repr)
def test_verify_and_prove_forall_take_the_same_timeouts(t):
    assert sv.verify(SQUARE, SQUARE, method="exact", timeout=t).proved
    assert sv.prove_forall(COPY, timeout=t).proved
    assert timeout_seconds(t) == float(t) and timeout_seconds(t) > 0


@pytest.mark.parametrize(("t", "shown"), REFUSED, ids=lambda x: repr(x)[:20])
def test_verify_and_prove_forall_refuse_the_same_timeouts_in_the_same_words(t, shown):
    assert timeout_seconds(t) is None
    with pytest.raises(sv.UsageError, match=rf"^timeout: expected a positive number of seconds, found {shown}$"):
        sv.verify(SQUARE, SQUARE, method="exact", timeout=t)
    with pytest.raises(ParametricError, match=rf"^prove_forall timeout: expected a positive number of seconds, found {shown}$"):
        sv.prove_forall(COPY, timeout=t)


@pytest.mark.parametrize(("t", "shown"), UNREPRESENTABLE, ids=lambda x: repr(x)[:20])
def test_a_positive_fraction_no_float_holds_is_refused_as_such_not_as_not_positive(t, shown):
    """A ``Fraction`` becomes the nearest float (the clock's type): one that rounds to 0 or past the
    largest float is refused, saying so (it is a positive number of seconds)."""
    assert timeout_seconds(t) is None
    why = r"expected a positive number of seconds that a float holds \(more than 0 and below 2\^1024 once rounded\)"
    with pytest.raises(sv.UsageError, match=rf"^timeout: {why}, found {shown}$"):
        sv.verify(SQUARE, SQUARE, method="exact", timeout=t)
    with pytest.raises(ParametricError, match=rf"^prove_forall timeout: {why}, found {shown}$"):
        sv.prove_forall(COPY, timeout=t)


def test_no_limit_is_verify_s_alone():
    """``verify`` takes ``math.inf`` (or None) for no limit; ``prove_forall`` bounds every z3 query (None: 60 s)."""
    assert sv.verify(SQUARE, SQUARE, method="exact", timeout=float("inf")).proved
    with pytest.raises(ParametricError, match=r"prove_forall timeout: expected a positive, finite number of seconds "
                                              r"\(it bounds every z3 query; None is 60 s\), found inf$"):
        sv.prove_forall(COPY, timeout=float("inf"))


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max, reason="longdouble is a double here")
def test_a_finite_longdouble_past_the_largest_float_is_no_endless_timeout():
    """``np.longdouble('1e4000')`` is finite: as the nearest float it was ``inf``, which ``verify``
    read as no limit; it is refused as a ``Fraction`` no float holds is."""
    t = np.longdouble("1e4000")
    assert timeout_seconds(t) is None
    with pytest.raises(sv.UsageError, match=r"^timeout: expected a positive number of seconds that a float holds .*1e\+4000"):
        sv.verify(SQUARE, SQUARE, method="exact", timeout=t)
    assert timeout_seconds(np.longdouble("inf")) == float("inf")  # no limit, as math.inf
