""":meth:`CellState.values` and :func:`track_factor` (cell and position arithmetic written out)
against the definitions they replace: every position some cell holds, its value by
:meth:`CellState.value` (the buffers summed in block order when pending), and each pair's two
outputs placed with :meth:`Layout.cell`. Same keys in the same order and the same forms, term order
included (certificates are serialized from them), on random states and factors."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from symverify.compiler.layout import (
    BUFFERS,
    CellState,
    Layout,
    add_forms,
    axis_of,
    scale,
    track_factor,
)
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.butterfly import ButterflyFactor, pair_number


def reference_values(st: CellState) -> dict[int, Affine]:
    ps = {st.lay.position(c)[0] for c in st.cells}
    out = {p: st.value(p) for p in sorted(ps)}
    return {p: f for p, f in out.items() if f}


def reference_track_factor(st: CellState, f: ButterflyFactor) -> CellState:
    lay, s = st.lay, f.stride
    axis = axis_of(f, lay.tw)
    vals = reference_values(st)
    new: dict[tuple[int, int], Affine] = {}
    zero = Affine()
    for lo in sorted({p & ~s for p in vals}):
        m = pair_number(s, lo)
        hi = lo + s
        zp, zq = vals.get(lo, zero), vals.get(hi, zero)
        for cell, form in ((lay.cell(lo), add_forms(scale(f.d1[m], zp), scale(f.d2[m], zq))),
                           (lay.cell(hi, 1 if axis == "channel" else 0), add_forms(scale(f.d3[m], zp), scale(f.d4[m], zq)))):
            if form:
                new[cell] = form
    return CellState(lay, new, pending=axis == "channel")


def _coeff(rng: random.Random) -> object:
    return rng.choice([0, 0, 1, 1, -1, 2, Fraction(1, 3)])


def _form(rng: random.Random) -> Affine:
    terms = {rng.randrange(12): _coeff(rng) for _ in range(rng.randrange(4))}
    return Affine({j: c for j, c in terms.items() if c}, rng.choice([0, 0, 1, Fraction(-1, 2)]))


def _state(rng: random.Random, lay: Layout, pending: bool) -> CellState:
    cells = {}
    for _ in range(rng.randrange(1, lay.size)):
        p, b = rng.randrange(lay.size), rng.randrange(BUFFERS if pending else 1)
        cells[lay.cell(p, b)] = _form(rng)
    return CellState(lay, cells, pending)


def _same(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(a[k] == b[k] and list(a[k].terms) == list(b[k].terms) for k in a)


@pytest.mark.parametrize("seed", range(40))
def test_values_and_track_factor_match_the_definitions(seed: int) -> None:
    rng = random.Random(seed)
    lay = Layout.choose(rng.randint(1, 3), rng.choice([1, 2, 3, 4, 5, 8]), rng.choice([8, 16, 32]))
    for pending in (False, True):
        st = _state(rng, lay, pending)
        assert _same(st.values(), reference_values(st))
        for _ in range(3):
            stride = 1 << rng.randrange(lay.size.bit_length() - 1)
            half = lay.size // 2
            f = ButterflyFactor(lay.size, stride, *(tuple(_coeff(rng) for _ in range(half)) for _ in range(4)))
            got, want = track_factor(st, f), reference_track_factor(st, f)
            assert got.pending == want.pending and _same(got.cells, want.cells)


def test_track_factor_with_given_values_is_track_factor() -> None:
    rng = random.Random(99)
    lay = Layout.choose(2, 4, 16)
    st = _state(rng, lay, True)
    f = ButterflyFactor(16, 4, *(tuple(_coeff(rng) for _ in range(8)) for _ in range(4)))
    assert _same(track_factor(st, f, st.values()).cells, track_factor(st, f).cells)
    wrong = {p: v for p, v in st.values().items() if p % 2}  # values the state does not have: used as given
    assert not _same(track_factor(st, f, wrong).cells, track_factor(st, f).cells)
