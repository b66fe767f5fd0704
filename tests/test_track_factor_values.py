""":func:`track_factor` with the state's values given by the caller (the emitter computes them
once per factor for the support and the tracking): the same cells as computing them itself, and the
given values are the ones used."""

from __future__ import annotations

import random
from fractions import Fraction

from symverify.compiler.layout import (
    BUFFERS,
    CellState,
    Layout,
    track_factor,
)
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.butterfly import ButterflyFactor


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


def test_track_factor_with_given_values_is_track_factor() -> None:
    rng = random.Random(99)
    lay = Layout.choose(2, 4, 16)
    st = _state(rng, lay, True)
    f = ButterflyFactor(16, 4, *(tuple(_coeff(rng) for _ in range(8)) for _ in range(4)))
    assert _same(track_factor(st, f, st.values()).cells, track_factor(st, f).cells)
    wrong = {p: v for p, v in st.values().items() if p % 2}  # values the state does not have: used as given
    assert not _same(track_factor(st, f, wrong).cells, track_factor(st, f).cells)
