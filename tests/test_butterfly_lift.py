"""``ButterflyFactor.lift`` builds ``diag(F, I)`` without rescanning the diagonals: the result must be
the factor the constructor makes from the same fields, ``all_int`` included, and the constructor's
checks of the new size still apply."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import ShapeError
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.scalar import sym

_entries = st.one_of(st.integers(-5, 5), st.fractions(max_denominator=4), st.sampled_from([sym("a"), sym("b") * 2]),
                     st.integers(-(2**70), 2**70))


@st.composite
def factors(draw: st.DrawFn) -> ButterflyFactor:
    size = 1 << draw(st.integers(1, 4))
    stride = 1 << draw(st.integers(0, size.bit_length() - 2))
    diags = [draw(st.lists(_entries, min_size=size // 2, max_size=size // 2)) for _ in range(4)]
    return ButterflyFactor(size, stride, *diags)


@settings(max_examples=60, deadline=None)
@given(factors(), st.integers(0, 3))
def test_lift_equals_the_factor_the_constructor_makes(f: ButterflyFactor, k: int) -> None:
    size = f.size << k
    extra = (size - f.size) // 2
    want = ButterflyFactor(size, f.stride, f.d1 + (1,) * extra, f.d2 + (0,) * extra, f.d3 + (0,) * extra, f.d4 + (1,) * extra)
    got = f.lift(size)
    assert type(got) is ButterflyFactor and got == want and hash(got) == hash(want)
    assert got.all_int is want.all_int and got._plan_cache is None
    assert all(type(getattr(got, n)) is tuple for n in ("d1", "d2", "d3", "d4"))


def test_lift_does_not_rescan_the_diagonals(monkeypatch: pytest.MonkeyPatch) -> None:
    f = ButterflyFactor(4, 2, (1, Fraction(1, 2)), (0, 3), (sym("x"), 0), (1, 1))
    calls: list[int] = []
    post = ButterflyFactor.__post_init__

    def counted(self: ButterflyFactor) -> None:
        calls.append(self.size)
        post(self)

    monkeypatch.setattr(ButterflyFactor, "__post_init__", counted)
    g = f.lift(64)
    assert calls == [] and g.size == 64 and not g.all_int
    assert ButterflyFactor(2, 1, (1,), (0,), (0,), (1,)).lift(8).all_int


@pytest.mark.parametrize("size", [2, 6, 3, 0])
def test_lift_still_refuses_a_bad_size(size: int) -> None:
    with pytest.raises(ShapeError, match=r"lifting a butterfly factor of size 4: expected a power of two ≥ 4, found"):
        ButterflyFactor.identity(4, 1).lift(size)
