"""``ButterflyFactor.lift`` (``diag(F, I)``) and ``ButterflyFactor.identity`` build their factor
without rescanning the diagonals: the result must be the factor the constructor makes from the same
fields, ``all_int`` included, and the constructor's checks of the size and the stride still apply,
with the same errors."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import LimitError, ShapeError
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


@pytest.fixture
def post_init_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the factors whose constructor check (``__post_init__``) runs from now on."""
    calls: list[int] = []
    post = ButterflyFactor.__post_init__

    def counted(self: ButterflyFactor) -> None:
        calls.append(self.size)
        post(self)

    monkeypatch.setattr(ButterflyFactor, "__post_init__", counted)
    return calls


def test_lift_does_not_rescan_the_diagonals(post_init_calls: list[int]) -> None:
    f = ButterflyFactor(4, 2, (1, Fraction(1, 2)), (0, 3), (sym("x"), 0), (1, 1))
    assert post_init_calls == [4]
    post_init_calls.clear()
    g = f.lift(64)
    assert post_init_calls == [] and g.size == 64 and not g.all_int
    assert ButterflyFactor(2, 1, (1,), (0,), (0,), (1,)).lift(8).all_int


@pytest.mark.parametrize("size", [2, 6, 3, 0])
def test_lift_still_refuses_a_bad_size(size: int) -> None:
    with pytest.raises(ShapeError, match=r"lifting a butterfly factor of size 4: expected a power of two ≥ 4, found"):
        ButterflyFactor.identity(4, 1).lift(size)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.data())
def test_identity_equals_the_factor_the_constructor_makes(k: int, data: st.DataObject) -> None:
    size = 1 << k
    stride = 1 << data.draw(st.integers(0, k - 1))
    wrap = data.draw(st.sampled_from([int, np.int64, np.uint32]))
    half = size // 2
    want = ButterflyFactor(size, stride, (1,) * half, (0,) * half, (0,) * half, (1,) * half)
    got = ButterflyFactor.identity(wrap(size), wrap(stride))
    assert type(got) is ButterflyFactor and got == want and hash(got) == hash(want) and got.is_identity()
    assert type(got.size) is int and type(got.stride) is int
    assert got.all_int is want.all_int is True and got._plan_cache is None
    assert all(type(getattr(got, n)) is tuple for n in ("d1", "d2", "d3", "d4"))


def test_identity_does_not_rescan_the_diagonals(post_init_calls: list[int]) -> None:
    f = ButterflyFactor.identity(1024, 8)
    assert post_init_calls == [] and f.size == 1024 and f.stride == 8 and f.all_int


@pytest.mark.parametrize("stride", [3, 0, 8, 16, 2.0, True, "2", -2])
def test_identity_refuses_a_bad_stride_as_the_constructor_does(stride: object) -> None:
    with pytest.raises(ShapeError, match=r"butterfly factor stride: expected a power of two ≤ size/2 = 4, found ") as got:
        ButterflyFactor.identity(8, stride)  # type: ignore[arg-type]
    with pytest.raises(ShapeError) as want:
        ButterflyFactor(8, stride, (1,) * 4, (0,) * 4, (0,) * 4, (1,) * 4)  # type: ignore[arg-type]
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("size", [0, 1, 6, 2.0, True])
def test_identity_refuses_a_bad_size(size: object) -> None:
    with pytest.raises(ShapeError, match=r"butterfly factor size: expected a power of two ≥ 2, found"):
        ButterflyFactor.identity(size, 1)  # type: ignore[arg-type]


def test_identity_refuses_a_size_above_the_limit() -> None:
    with pytest.raises(LimitError, match="butterfly factor size"):
        ButterflyFactor.identity(1 << 62, 1)
