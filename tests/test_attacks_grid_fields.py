"""Attacks through a model's fields set after construction (``object.__setattr__`` past the frozen
dataclasses): sizes, modes, a grid's fill and rectangles the constructors would refuse. The methods
crashed on them (a numpy shape, an index past an array, ``math.log`` of a zero numerator) or read a
value ``evaluate`` reads otherwise (an unnormalised ``Fraction``); every method refuses them with an
:class:`IRError` naming the field (:func:`symverify.kernel.provers.fingerprint.check_plain`)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid

METHODS = ["exact", "randomized", "auto"]
_TWICE = Circuit(1, 1, (Gate.scale(0, 2),), (1,))


def _scale(v: int) -> Model:
    """``y = u ⊙ v`` on one cell (``W = 1``, ``b2 = v``)."""
    return Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.from_rows([[1]]), b2=Grid.from_rows([[v]])),))


def _b2_rects(rects: object) -> Model:
    m = _scale(2)
    object.__setattr__(m.layers[0].b2, "rects", rects)
    return m


@pytest.mark.parametrize(("rects", "match"), [
    (((0, 1, 0, 1, Fraction(0, 2, _normalize=False)),), r"rectangle 0: expected .* found tuple \(0, 1, 0, 1, Fraction\(0, 2\)\)"),
    (((0, 1, 0, 1, Fraction(4, 2, _normalize=False)),), r"rectangle 0: expected .* found tuple \(0, 1, 0, 1, Fraction\(4, 2\)\)"),
    (((0, 2, 0, 1, 2),), r"rectangle 0: expected .* inside the 1×1 grid .* found tuple \(0, 2, 0, 1, 2\)"),
    (([0, 1, 0, 1, 2],), r"rectangle 0: expected .* found list \[0, 1, 0, 1, 2\]"),
    (((0, 1, 0, 1, True),), r"rectangle 0: expected .* found tuple \(0, 1, 0, 1, True\)"),
    (((0, 1, 0, 1),), r"rectangle 0: expected \(row_start, row_stop, col_start, col_stop, value\)"),
])
@pytest.mark.parametrize("method", METHODS)
def test_a_rectangle_out_of_form_is_refused(rects, match, method):
    with pytest.raises(IRError, match=r"rhs: layer 0 b2: " + match):
        sv.verify(_TWICE, _b2_rects(rects), method=method)


@pytest.mark.parametrize("method", METHODS)
def test_a_fill_out_of_form_is_refused(method):
    m = _scale(2)
    object.__setattr__(m.layers[0].h, "fill", Fraction(0, 3, _normalize=False))  # b1 may be the same zero grid
    with pytest.raises(IRError, match=r"rhs: layer 0 (b1|h): expected the fill an exact scalar .* found fractions\.Fraction"):
        sv.verify(_TWICE, m, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_a_grid_size_out_of_form_is_refused(method):
    m = _scale(2)
    object.__setattr__(m.layers[0].b2, "rows", 2)
    with pytest.raises(IRError, match=r"rhs: layer 0: expected W 1×1 and b1, h, b2 1×1 .* found 1×1, 1×1, 1×1, 2×1"):
        sv.verify(_TWICE, m, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_a_model_size_out_of_form_is_refused(method):
    m = _scale(2)
    object.__setattr__(m, "inner_n", 2)
    with pytest.raises(IRError, match=r"rhs: layer 0: expected W 1×1 and b1, h, b2 2×1"):
        sv.verify(_TWICE, m, method=method)
    object.__setattr__(m, "inner_n", 1)
    object.__setattr__(m, "d", 0)
    with pytest.raises(IRError, match=r"rhs: expected sizes n, d ≥ 1 .* found n=1, d=0"):
        sv.verify(Circuit(1, 1, (Gate.scale(0, 2),), (1,)), m, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_a_mode_that_is_a_string_is_refused(method):
    m = _scale(2)
    object.__setattr__(m.layers[0], "mode", "causal")
    with pytest.raises(IRError, match=r"rhs: expected every layer mode of type Mode exactly, found an instance of builtins\.str"):
        sv.verify(_TWICE, m, method=method)


def test_the_same_models_in_form_are_proved():
    assert sv.verify(_TWICE, _scale(2)).proved
    assert sv.verify(_TWICE, _b2_rects(((0, 1, 0, 1, 2),))).proved
