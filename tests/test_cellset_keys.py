"""A set placement's packed keys (``CellSet.keys``, read by the bulk evaluation's membership test) are
``np.unique`` of the packed members in range, computed as a sort and a drop of repeats: the same
array for any members (checked ints, and the unchecked floats and bools a ``predicates`` block may
hold, whose packed keys can repeat)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.parametric.bulk import _KEY, _LIMIT, CellSet
from symverify.parametric import Gadget, Param, PLayer, inp, instantiate, pred, tap, var, where

_small = st.sets(st.tuples(st.integers(0, 25), st.integers(0, 3)), max_size=40)
_wide = st.sets(st.tuples(st.sampled_from([0, 3, _LIMIT // _KEY - 1, _LIMIT // _KEY, 2**63, 2**64 - 1, -1]),
                          st.sampled_from([0, 5, _KEY - 1, _KEY, 2**40, 2**64 - 1, -2])), max_size=20)
_loose = st.sets(st.tuples(st.sampled_from([0, 1, True, 0.5, 1.5, 2.0]), st.sampled_from([0, 1, False, 2**20, 3 * 2**19])),
                 max_size=12)  # packed keys repeat: (0.5, 0) and (0, 2^20) both give 2^20


def _unique(cells: set[tuple[object, object]]) -> list[int]:
    ks = [r * _KEY + c for r, c in cells if 0 <= r < _LIMIT // _KEY and 0 <= c < _KEY]  # type: ignore[operator]
    return np.unique(np.fromiter(ks, dtype=np.int64, count=len(ks))).tolist()


@settings(max_examples=80, deadline=None)
@given(st.one_of(_small, _wide, _loose))
def test_keys_are_the_unique_packed_members_in_range(cells: set[tuple[object, object]]) -> None:
    got = CellSet(cells).keys()
    assert got.dtype == np.int64 and got.ndim == 1 and got.tolist() == _unique(cells)


def test_repeated_keys_are_dropped_and_the_array_is_kept() -> None:
    c = CellSet({(0.5, 0), (0, 2**20), (1, 0), (True, 1), (0, 0)})
    assert c.keys().tolist() == [0, 2**20, _KEY, _KEY + 1] and c.keys() is c.keys()
    assert CellSet().keys().tolist() == [] and CellSet({(Fraction(1), 2)}).keys().tolist() == [_KEY + 2]


def test_keys_do_not_go_through_np_unique(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*a: object, **k: object) -> None:
        raise AssertionError("np.unique called")

    monkeypatch.setattr(np, "unique", refused)
    assert CellSet({(2, 1), (0, 3), (2, 0)}).keys().tolist() == [3, 2 * _KEY, 2 * _KEY + 1]


@settings(max_examples=30, deadline=None)
@given(_small)
def test_the_layers_hold_the_placement(cells: set[tuple[int, int]]) -> None:
    N, i, q = var("N"), var("i"), var("q")
    g = Gadget("g", (Param("N", 1, 40),), N, 2, (PLayer(b1=where(pred("P", i, q), 1), h=(tap(0),)),), inp(i, q))
    (layer,) = instantiate(g, {"N": 26}, placement={"P": set(cells)})
    assert [(r, c) for r in range(26) for c in range(2) if layer.b1.get(r, c) == 1] == sorted(p for p in cells if p[1] < 2)
