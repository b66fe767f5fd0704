"""Attacks on ``Circuit.trace`` with functions that turn a wire into a number (``int``, ``float``, an
index, ``round``, ``math.floor``) or use ``@``: a traced wire has no value, so each is an ``IRError``
saying so, as a branch on a wire is, never a bare ``TypeError`` from Python."""

from __future__ import annotations

import math

import pytest

from symverify import Circuit
from symverify.errors import IRError


@pytest.mark.parametrize("fn, what", [
    (lambda u: [int(u[0][0])], r"int\(\)"),
    (lambda u: [float(u[0][0])], r"float\(\)"),
    (lambda u: [complex(u[0][0])], r"complex\(\)"),
    (lambda u: [[7, 8, 9][u[0][0]]], r"an index"),
    (lambda u: [round(u[0][0])], r"round\(\)"),
    (lambda u: [math.trunc(u[0][0])], r"math.trunc"),
    (lambda u: [math.floor(u[0][0])], r"math.floor"),
    (lambda u: [math.ceil(u[0][0])], r"math.ceil"),
    (lambda u: [u[0][0] @ u[0][1]], r"@"),
])
def test_a_wire_turned_into_a_number_is_refused(fn, what):
    with pytest.raises(IRError, match=rf"{what} on Wire\(%0\): a traced wire has no value"):
        Circuit.trace(fn, 1, 2)
