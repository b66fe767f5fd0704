"""The butterfly IR (ir/butterfly.py): validation rules, transpose, lifting, products, absorption."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.butterfly import (
    BBStar,
    ButterflyFactor,
    FactorList,
    Kaleidoscope,
    bbstar_strides,
    next_power_of_two,
    pair_index,
    pair_number,
    product,
)
from symverify.kernel.ir.scalar import sym
from symverify.kernel.kaleidoscope.apply import to_matrix

RATIONALS = [0, 0, 1, 1, -1, 2, 3, Fraction(1, 2), Fraction(-2, 3)]
VALUES = st.sampled_from([*RATIONALS, sym("a"), sym("b") - 1])


def matmul(A, B):
    return [[sum((A[i][k] * B[k][j] for k in range(len(B))), start=0) for j in range(len(B[0]))] for i in range(len(A))]


def transpose(A):
    return [list(r) for r in zip(*A)]


def diag(d):
    return [[d[i] if i == j else 0 for j in range(len(d))] for i in range(len(d))]


@st.composite
def factors(draw, size=None, stride=None, values=VALUES):
    size = size or draw(st.sampled_from([2, 4, 8]))
    stride = stride or draw(st.sampled_from([1 << k for k in range(size.bit_length() - 1)]))
    d = [tuple(draw(st.lists(values, min_size=size // 2, max_size=size // 2))) for _ in range(4)]
    return ButterflyFactor(size, stride, *d)


@st.composite
def bbstars(draw, size=None, values=VALUES):
    size = size or draw(st.sampled_from([2, 4, 8]))
    return BBStar(size, tuple(draw(factors(size, s, values)) for s in bbstar_strides(size)))


@st.composite
def kaleidoscopes(draw, values=VALUES):
    size = draw(st.sampled_from([2, 4, 8]))
    n = draw(st.integers(1, size))
    return Kaleidoscope(n, size, tuple(draw(bbstars(size, values)) for _ in range(draw(st.integers(0, 2)))))


# ---- helpers --------------------------------------------------------------------------------


def test_next_power_of_two_and_pair_number():
    assert [next_power_of_two(k) for k in (1, 2, 3, 4, 5, 1000, 1024)] == [1, 2, 4, 4, 8, 1024, 1024]
    for size in (2, 8, 32):
        for s in (1 << k for k in range(size.bit_length() - 1)):
            assert [pair_number(s, pair_index(size, s, m)) for m in range(size // 2)] == list(range(size // 2))
    assert bbstar_strides(8) == (4, 2, 1, 1, 2, 4)


def test_factor_semantics_follow_the_pair_convention():
    f = ButterflyFactor(4, 2, (1, 2), (3, 4), (5, 6), (7, 8))
    # pair 0 acts on (0, 2), pair 1 on (1, 3): out[p] = d1 x[p] + d2 x[p+s], out[p+s] = d3 x[p] + d4 x[p+s]
    assert to_matrix(f) == [[1, 0, 3, 0], [0, 2, 0, 4], [5, 0, 7, 0], [0, 6, 0, 8]]


def test_integer_fast_path_keeps_scalars_canonical():
    f = ButterflyFactor(2, 1, (np.int64(3),), (Fraction(4, 2),), ("1/2",), (0,))
    assert f.d1 == (3,) and type(f.d1[0]) is int and type(f.d2[0]) is int and f.d3 == (Fraction(1, 2),)


def test_all_int_is_derived_from_the_diagonals_and_cannot_be_set_otherwise():
    """``all_int`` is True exactly when every stored diagonal entry is a plain ``int`` (after
    canonicalization); it is no constructor or ``replace`` argument, cannot be assigned, plays no
    part in equality or hashing, and copies and pickles derive it again."""
    import copy
    import dataclasses
    import pickle

    ints = ButterflyFactor(4, 1, (1, 2), (0, 0), (0, 3), (1, 1))
    assert ints.all_int is True
    assert ButterflyFactor(2, 1, (np.int64(3),), (Fraction(4, 2),), (0,), (1,)).all_int is True  # canonicalized to ints
    assert ButterflyFactor(2, 1, (1,), (Fraction(1, 2),), (0,), (1,)).all_int is False
    assert ButterflyFactor(2, 1, (1,), (0,), (sym("a"),), (1,)).all_int is False
    with pytest.raises(TypeError):
        ButterflyFactor(2, 1, (1,), (0,), (0,), (1,), False)  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ints.all_int = False  # type: ignore[misc]
    with pytest.raises(ValueError, match="init=False"):
        dataclasses.replace(ints, all_int=False)  # type: ignore[call-arg]
    assert dataclasses.replace(ints, d2=(Fraction(1, 3), 0)).all_int is False
    assert dataclasses.replace(ints, d2=(Fraction(1, 3), 0)).__class__ is ButterflyFactor
    forged = ButterflyFactor(4, 1, (1, 2), (0, 0), (0, 3), (1, 1))
    object.__setattr__(forged, "all_int", False)  # only by bypassing the frozen dataclass
    assert forged == ints and hash(forged) == hash(ints)
    for again in (copy.copy(forged), copy.deepcopy(forged), pickle.loads(pickle.dumps(forged))):
        assert again == ints and again.all_int is True  # rebuilt by the constructor, never copied


def test_the_plans_read_the_factors_flag_instead_of_scanning():
    """:func:`_moved` takes the fast (moved pairs only) path exactly when the factor says
    ``all_int``; with the flag off it lists every pair (the generic path, still exact)."""
    from symverify.kernel.kaleidoscope.apply import _moved

    f = ButterflyFactor(8, 1, (1, 1, 5, 1), (0, 0, 0, 0), (0, 2, 0, 0), (1, 1, 1, 1))
    assert list(_moved(f)) == [1, 2]
    object.__setattr__(f, "all_int", False)
    assert list(_moved(f)) == [0, 1, 2, 3]
    assert to_matrix(f) == to_matrix(ButterflyFactor(8, 1, (1, 1, 5, 1), (0, 0, 0, 0), (0, 2, 0, 0), (1, 1, 1, 1)))


# ---- validation rules (every rule broken once) ----------------------------------------------


@pytest.mark.parametrize(
    "make, err, match",
    [
        (lambda: ButterflyFactor(3, 1, (1,), (0,), (0,), (1,)), ShapeError, "butterfly factor size: expected a power of two"),
        (lambda: ButterflyFactor(1, 1, (), (), (), ()), ShapeError, "butterfly factor size"),
        (lambda: ButterflyFactor(4, 4, (1, 1), (0, 0), (0, 0), (1, 1)), ShapeError, r"stride: expected a power of two ≤ size/2 = 2, found 4"),
        (lambda: ButterflyFactor(8, 3, (1,) * 4, (0,) * 4, (0,) * 4, (1,) * 4), ShapeError, "butterfly factor stride"),
        (lambda: ButterflyFactor(4, 1, (1,), (0, 0), (0, 0), (1, 1)), ShapeError, r"d1: expected 2 entries \(size/2\), found 1"),
        (lambda: ButterflyFactor(2, 1, (0.5,), (0,), (0,), (1,)), IRError, r"stride 1\) d1\[0\].*float 0.5"),
        (lambda: ButterflyFactor.from_blocks(4, 1, [((1, 0), (0, 1))]), ShapeError, "expected 2 2×2 blocks"),
        (lambda: ButterflyFactor.identity(4, 1).then(ButterflyFactor.identity(4, 2)), ShapeError, "both need size 4 and stride 1"),
        (lambda: ButterflyFactor.identity(4, 1).absorb((1, 1, 1, 1), "left"), IRError, "side must be 'before'"),
        (lambda: ButterflyFactor.identity(4, 1).absorb((1, 1), "after"), ShapeError, "expected a diagonal of 4 entries, found 2"),
        (lambda: ButterflyFactor.identity(4, 1).absorb((1, 1, 1, 0.5), "after"), IRError, r"diagonal\[3\].*float"),
        (lambda: ButterflyFactor.identity(4, 1).lift(2), ShapeError, "lifting a butterfly factor of size 4"),
        (lambda: BBStar(6, ()), ShapeError, "BB\\* size: expected a power of two"),
        (lambda: BBStar(4, (ButterflyFactor.identity(4, 2), ButterflyFactor.identity(4, 1), ButterflyFactor.identity(8, 1), ButterflyFactor.identity(4, 2))), ShapeError, "factor sizes"),
        (lambda: BBStar(4, ()), IRError, r"expected strides \[2, 1, 1, 2\].*found \[\]"),
        (lambda: BBStar.identity(4).lift(2), ShapeError, "lifting a BB\\* of size 4"),
        (lambda: FactorList(3, ()), ShapeError, "factor list size"),
        (lambda: FactorList(4, ("x",)), IRError, "factor list entry 0: expected a ButterflyFactor"),
        (lambda: FactorList(4, (ButterflyFactor.identity(2, 1),)), ShapeError, "factor list entry 0: expected size 4"),
        (lambda: FactorList(4, (ButterflyFactor.identity(4, 1),)).to_bbstars(strict=True), IRError, "slot 0 of BB\\* group 0 needs stride 2"),
        (lambda: FactorList(4, (ButterflyFactor.identity(4, 2),)).to_bbstars(strict=True), IRError, "expected a multiple of 4"),
        (lambda: Kaleidoscope(0, 4, ()), ShapeError, "expected 1 ≤ n ≤ size = 4, found n = 0"),
        (lambda: Kaleidoscope(5, 4, ()), ShapeError, "found n = 5"),
        (lambda: Kaleidoscope(3, 6, ()), ShapeError, "kaleidoscope size: expected a power of two"),
        (lambda: Kaleidoscope(2, 4, (BBStar.identity(2),)), ShapeError, "group 0: expected size 4, found 2"),
        (lambda: Kaleidoscope.identity(2, 4).lift(2), ShapeError, "lifting a kaleidoscope of size 4"),
        (lambda: Kaleidoscope.identity(2, 4).absorb_diagonal((1, 1, 1, 1), "after"), IRError, "no BB\\* group"),
        (lambda: Kaleidoscope(2, 4, (BBStar.identity(4),)).absorb_diagonal((1, 1, 1, 1), "inside"), IRError, "side must be"),
        (lambda: Kaleidoscope.identity(2, 4).then(Kaleidoscope.identity(3, 4)), ShapeError, "found n = 2 and 3"),
        (lambda: product(), IRError, "at least one factor"),
    ],
)
def test_validation_rules(make, err, match):
    with pytest.raises(err, match=match):
        make()


def test_application_order_cannot_be_reversed_silently():
    """A BB* listed in product order (B half first) is rejected, not reinterpreted."""
    size = 8
    product_order = tuple(ButterflyFactor.identity(size, s) for s in (1, 2, 4, 4, 2, 1))
    with pytest.raises(IRError, match=r"expected strides \[4, 2, 1, 1, 2, 4\] in application order.*found \[1, 2, 4, 4, 2, 1\]"):
        BBStar(size, product_order)
    # the same factors as a general list are re-read with identity padding (two groups), never reordered
    groups = FactorList(size, product_order).to_bbstars()
    assert len(groups) == 2


# ---- algebra --------------------------------------------------------------------------------


@settings(max_examples=25)
@given(factors())
def test_factor_transpose_is_the_matrix_transpose(f):
    assert to_matrix(f.transpose()) == transpose(to_matrix(f))
    assert f.transpose().transpose() == f


@settings(max_examples=25)
@given(st.data())
def test_factor_then_is_the_matrix_product(data):
    f = data.draw(factors())
    g = data.draw(factors(f.size, f.stride))
    assert to_matrix(f.then(g)) == matmul(to_matrix(g), to_matrix(f))


@settings(max_examples=25)
@given(st.data())
def test_absorbing_a_diagonal(data):
    f = data.draw(factors())
    d = data.draw(st.lists(VALUES, min_size=f.size, max_size=f.size))
    assert to_matrix(f.absorb(d, "before")) == matmul(to_matrix(f), diag(d))
    assert to_matrix(f.absorb(d, "after")) == matmul(diag(d), to_matrix(f))


@settings(max_examples=20)
@given(bbstars())
def test_bbstar_transpose_and_lift(bb):
    M = to_matrix(bb)
    assert to_matrix(bb.transpose()) == transpose(M)
    big = to_matrix(bb.lift(2 * bb.size))
    N = bb.size
    assert [row[:N] for row in big[:N]] == M
    assert [row[N:] for row in big[N:]] == [[int(i == j) for j in range(N)] for i in range(N)]
    assert all(v == 0 for row in big[:N] for v in row[N:]) and all(v == 0 for row in big[N:] for v in row[:N])


@settings(max_examples=20)
@given(st.data())
def test_factor_list_rereads_any_order_as_bbstar_groups(data):
    size = data.draw(st.sampled_from([2, 4, 8]))
    strides = [1 << k for k in range(size.bit_length() - 1)]
    fl = FactorList(size, tuple(data.draw(factors(size, s)) for s in data.draw(st.lists(st.sampled_from(strides), max_size=6))))
    M = to_matrix(fl)
    for merge in (False, True):
        groups = fl.to_bbstars(merge=merge)
        assert to_matrix(FactorList.from_bbstars(size, groups)) == M
        assert len(groups) <= max(1, len(fl.factors))
    assert to_matrix(fl.transpose()) == transpose(M)


def test_factor_list_round_trip_and_greedy_counts():
    bb = BBStar.identity(8)
    fl = FactorList.from_bbstars(8, (bb, bb.transpose()))
    assert fl.to_bbstars(strict=True) == (bb, bb.transpose())
    up_then_down = FactorList(8, tuple(ButterflyFactor.identity(8, s) for s in (1, 2, 4, 4, 2, 1)))
    assert len(up_then_down.to_bbstars()) == 2
    same_stride = FactorList(8, tuple(ButterflyFactor.identity(8, 2) for _ in range(5)))
    assert len(same_stride.to_bbstars()) == 3 and len(same_stride.to_bbstars(merge=True)) == 1


@settings(max_examples=20)
@given(kaleidoscopes())
def test_kaleidoscope_transpose_is_the_corner_transpose(k):
    assert to_matrix(k.transpose()) == transpose(to_matrix(k))
    assert to_matrix(k.lift(2 * k.size)) == to_matrix(k)
    assert k.num_params == 4 * k.width * k.size * (k.size.bit_length() - 1)


@settings(max_examples=25)
@given(st.data())
def test_kaleidoscope_product_is_the_corner_product(data):
    values = st.sampled_from(RATIONALS)  # symbolic products are covered by the smaller tests
    a = data.draw(kaleidoscopes(values))
    size = data.draw(st.sampled_from([a.size, 2 * a.size]))
    b = Kaleidoscope(a.n, size, tuple(data.draw(bbstars(size, values)) for _ in range(data.draw(st.integers(0, 2)))))
    ab = a.then(b)
    assert ab.width == a.width + b.width and ab.size == max(a.size, b.size)
    assert to_matrix(ab) == matmul(to_matrix(b), to_matrix(a))
    assert to_matrix(product(a, b, a)) == matmul(matmul(to_matrix(a), to_matrix(b)), to_matrix(a))


def test_kaleidoscope_product_needs_the_projector():
    """Concatenating groups without absorbing diag(I_n, 0) is wrong when the first factor leaves garbage."""
    spread = ButterflyFactor(2, 1, (1,), (0,), (1,), (0,))  # copies x0 into position 1 (garbage for n = 1)
    read = ButterflyFactor(2, 1, (1,), (1,), (0,), (1,))  # adds position 1 into position 0
    a = Kaleidoscope(1, 2, (BBStar(2, (spread, ButterflyFactor.identity(2, 1))),))
    b = Kaleidoscope(1, 2, (BBStar(2, (read, ButterflyFactor.identity(2, 1))),))
    naive = Kaleidoscope(1, 2, a.groups + b.groups)
    assert to_matrix(a) == [[1]] and to_matrix(b) == [[1]]
    assert to_matrix(naive) == [[2]]
    assert to_matrix(a.then(b)) == [[1]]


def test_kaleidoscope_absorb_diagonal():
    k = Kaleidoscope(2, 4, (BBStar.identity(4), BBStar.identity(4)))
    a = sym("a")
    assert to_matrix(k.absorb_diagonal((2, a, 5, 7), "before")) == [[2, 0], [0, a]]
    assert to_matrix(k.absorb_diagonal((3, 0, 1, 1), "after")) == [[3, 0], [0, 0]]
    assert k.absorb_diagonal((3, 0, 1, 1), "after").width == 2


def test_diagonal_entries_other_than_plain_ints_are_canonicalised_or_refused():
    """Only diagonals of plain ints skip the scalar check: a Fraction equal to an int becomes
    that int, and a bool (an int subclass) or a float is refused, naming the entry."""
    f = ButterflyFactor(4, 1, (Fraction(2), 1), (0, 0), (0, 0), (1, 1))
    assert f.d1 == (2, 1) and all(type(v) is int for v in f.d1)
    with pytest.raises(IRError, match=r"d2\[0\]: expected an exact number, found the bool True"):
        ButterflyFactor(2, 1, (1,), (True,), (0,), (1,))
    with pytest.raises(IRError, match=r"d4\[1\].*float 1.5"):
        ButterflyFactor(4, 2, (1, 1), (0, 0), (0, 0), (1, 1.5))


def test_pairs_are_the_pair_indices_each_computed_once(monkeypatch):
    """``pairs()`` is ``[(pair_index(m), pair_index(m) + stride)]`` for every size and stride, with
    each pair's position computed once (it called ``pair_index`` twice per pair)."""
    import symverify.kernel.ir.butterfly as bf

    real = bf.pair_index
    calls = []

    def counting(size, stride, m):
        calls.append(m)
        return real(size, stride, m)

    monkeypatch.setattr(bf, "pair_index", counting)
    for k in range(1, 9):
        size = 2**k
        for j in range(k):
            stride = 2**j
            calls.clear()
            got = bf.ButterflyFactor.identity(size, stride).pairs()
            assert len(calls) <= size // 2
            assert got == [(real(size, stride, m), real(size, stride, m) + stride) for m in range(size // 2)]
