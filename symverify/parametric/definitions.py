"""The library's gadgets built once and shared (the builders instantiate these objects).

Each name is a cached call of the function of the same name in
:mod:`symverify.parametric.library`.
"""

from __future__ import annotations

from functools import cache

from symverify.kernel.parametric.gadget import Gadget
from symverify.parametric import library

__all__ = ["shift_down", "shift_up", "cyclic_shift", "running_add", "mul_stage", "gather", "scatter", "factor_sequence", "factor_channel", "block_scale",
           "remember_rows", "remember_rows_two", "remember_channels"]


@cache
def shift_down() -> Gadget:
    return library.shift_down()


@cache
def shift_up() -> Gadget:
    return library.shift_up()


@cache
def cyclic_shift() -> Gadget:
    return library.cyclic_shift()


@cache
def running_add() -> Gadget:
    return library.running_add()


@cache
def mul_stage() -> Gadget:
    return library.mul_stage()


@cache
def gather() -> Gadget:
    return library.gather()


@cache
def scatter() -> Gadget:
    return library.scatter()


@cache
def factor_sequence() -> Gadget:
    return library.factor_sequence()


@cache
def factor_channel() -> Gadget:
    return library.factor_channel()


@cache
def block_scale() -> Gadget:
    return library.block_scale()


@cache
def remember_rows() -> Gadget:
    return library.remember_rows()


@cache
def remember_rows_two() -> Gadget:
    return library.remember_rows_two()


@cache
def remember_channels() -> Gadget:
    return library.remember_channels()
