"""Gadget constructors refuse a state over ``MAX_CELLS`` at once, naming their arguments, the size and the limit."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import LimitError, ShapeError
from symverify.gadgets import primitives as prim
from symverify.gadgets.causal import symbolic_model
from symverify.gadgets.compose import compose, pad, pad_layer
from symverify.gadgets.layout import channels_to_rows, rows_to_channels
from symverify.gadgets.remember import ChannelF, remember_channels, remember_rows
from symverify.ir import limits
from symverify.kernel.ir.grid import Grid

LIMIT = 64


def _message(what: str, names: tuple[str, str], n: int, d: int) -> str:
    return (rf"^{re.escape(what)}: the N'×d' state {re.escape(names[0])}·{re.escape(names[1])} = {n}·{d}: {n * d} cells "
            rf"is more than symverify\.ir\.limits\.MAX_CELLS = {LIMIT} ")


def _makers(n: int, d: int) -> list[tuple[str, tuple[str, str], object]]:
    """``(what, argument names, thunk)`` for every gadget constructor that takes a state size."""
    base = prim.identity(1, 1)
    return [
        ("pad", ("inner_n", "inner_d"), lambda: pad(base, n, d)),
        ("pad", ("inner_n", "inner_d"), lambda: pad_layer(base.layers[0], n, d)),
        ("identity", ("inner_n", "inner_d"), lambda: prim.identity(n, d)),
        ("linear_map", ("inner_n", "W.rows"), lambda: prim.linear_map(Grid.zeros(d, d), n)),
        ("affine_map", ("inner_n", "W.rows"), lambda: prim.affine_map(Grid.zeros(d, d), n)),
        ("convolution", ("h.rows", "h.cols"), lambda: prim.convolution(Grid.zeros(n, d))),
        ("fixed_gate", ("B.rows", "B.cols"), lambda: prim.fixed_gate(Grid.zeros(n, d))),
        ("constant", ("R.rows", "R.cols"), lambda: prim.constant(Grid.zeros(n, d))),
        ("shift_down", ("inner_n", "inner_d"), lambda: prim.shift_down(n, d, 1)),
        ("shift_up", ("inner_n", "inner_d"), lambda: prim.shift_up(n, d, 1)),
        ("cyclic_shift", ("inner_n", "inner_d"), lambda: prim.cyclic_shift(n, d, 1)),
        ("running_add", ("inner_n", "inner_d"), lambda: prim.running_add(1, n, d)),
        ("move_rows", ("inner_n", "inner_d"), lambda: prim.move_rows(n, d, 0, 1, 1)),
        ("move_cols", ("inner_n", "inner_d"), lambda: prim.move_cols(n, d, 0, 1, 1)),
        ("generic_layer", ("inner_n", "inner_d"), lambda: prim.generic_layer(n, d)),
        ("generic_layer", ("inner_n", "inner_d"), lambda: symbolic_model(n, d, 1)),
        ("remember_rows", ("inner_n", "inner_d"), lambda: remember_rows(n, d, 1, 1, Grid.from_rows([[1]]), ChannelF((1,)), cols=[0])),
        ("remember_channels", ("inner_n", "inner_d"), lambda: remember_channels(n, d, 1, 1, Grid.from_rows([[1]]), ChannelF((2,)))),
        ("rows_to_channels", ("inner_n", "inner_d"), lambda: rows_to_channels(2, 1, n, d)),
        ("channels_to_rows", ("inner_n", "inner_d"), lambda: channels_to_rows(2, 1, n, d)),
    ]


CASES = [(k, what) for k, (what, _, _) in enumerate(_makers(8, 8))]


@pytest.mark.parametrize(("k", "what"), CASES)
def test_a_state_one_cell_over_the_limit_is_refused_at_once(monkeypatch: pytest.MonkeyPatch, k: int, what: str) -> None:
    monkeypatch.setattr(limits, "MAX_CELLS", LIMIT)
    _, names, make = _makers(8, 8)[k]
    make()  # 8·8 = 64 cells: at the limit, built
    for n, d in ((13, 5), (5, 13)):  # 65 cells, either way round
        _, names, make = _makers(n, d)[k]
        with pytest.raises(LimitError, match=_message(what, names, n, d)):
            make()


def test_pad_to_a_billion_squared_is_refused_at_once() -> None:
    """The reported case: ``pad(frag, 10**9, 10**9)`` built a fragment whose state no executor could hold."""
    with pytest.raises(LimitError, match=r"^pad: the N'×d' state inner_n·inner_d = 1000000000·1000000000: 10{18} cells "
                                         r"is more than symverify\.ir\.limits\.MAX_CELLS = 4194304 "):
        pad(prim.identity(1, 1), 10**9, 10**9)
    with pytest.raises(LimitError, match=r"^convolution: the N'×d' state h\.rows·h\.cols = 1000000000·1000000000"):
        prim.convolution(Grid.zeros(10**9, 10**9))  # walked every cell before
    with pytest.raises(ShapeError, match="expected a positive int inner_d, found 0"):  # the type check still comes first
        pad(prim.identity(1, 1), 10**9, 0)


def test_compose_refuses_parts_whose_common_padding_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_CELLS", LIMIT)
    tall, wide = prim.identity(16, 1), prim.identity(1, 16)  # each 16 cells, padded together 16·16
    with pytest.raises(LimitError, match=r"^compose: the N'×d' state max inner_n·max inner_d = 16·16: 256 cells"):
        compose(tall, wide, check_interfaces=False)
    assert compose(prim.identity(8, 1), prim.identity(1, 8), check_interfaces=False).inner_n == 8  # 64 cells


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), d=st.integers(1, 40))
def test_pad_refuses_exactly_the_states_over_the_limit(n: int, d: int) -> None:
    old = limits.MAX_CELLS
    limits.MAX_CELLS = 300
    try:
        if n * d > 300:
            with pytest.raises(LimitError, match=rf"= {n}·{d}: {n * d} cells is more than"):
                pad(prim.identity(1, 1), n, d)
        else:
            out = pad(prim.identity(1, 1), n, d)
            assert (out.inner_n, out.inner_d) == (n, d)
    finally:
        limits.MAX_CELLS = old
