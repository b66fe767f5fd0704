"""Attacks on the circuit helpers users call on their own circuits (``Circuit.gate``, ``Circuit.pretty``)
with node ids and windows outside the circuit: each is an :class:`IRError` naming the range, never a
silently wrong answer (``None``, "an input", for a negative node; an empty listing) or a bare
``IndexError``/``TypeError``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify import Circuit, Gate
from symverify.errors import IRError

_C = Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3,))


@given(st.one_of(st.integers(min_value=-(2**80), max_value=-1), st.integers(min_value=4, max_value=2**80)))
@settings(max_examples=40, database=None, deadline=None)
def test_circuit_gate_refuses_a_node_outside_the_circuit(node):
    """``c.gate(-5)`` said None, "an input", and ``c.gate(2**70)`` raised ``IndexError``; both name the range."""
    with pytest.raises(IRError, match=r"Circuit.gate: expected a node id, an int in \[0, 4\), found"):
        _C.gate(node)


@pytest.mark.parametrize("node", [None, 1.0, True, "1", np.array([1, 2])])
def test_circuit_gate_refuses_what_is_no_node_id(node):
    with pytest.raises(IRError, match=r"Circuit.gate: expected a node id"):
        _C.gate(node)


def test_circuit_gate_reads_every_node_of_the_circuit():
    assert [_C.gate(v) for v in range(4)] == [None, None, *_C.gates]
    assert _C.gate(np.int64(3)) is _C.gates[1]


@pytest.mark.parametrize("around, window, message", [
    (-5, 3, r"Circuit.pretty: around: expected None or a gate index, an int in \[0, 2\), found -5"),
    (2, 3, r"around: .* found 2"),
    (math.inf, 3, r"around: .* found inf"),
    (np.array([1, 2]), 3, r"around: .* found array"),
    (0, -1, r"Circuit.pretty: window: expected an int ≥ 0, found -1"),
    (0, None, r"window: expected an int ≥ 0, found None"),
])
def test_circuit_pretty_refuses_a_window_outside_the_gates(around, window, message):
    """``pretty(around=-5)`` printed nothing at all (an empty window), ``around=inf`` raised ``TypeError``."""
    with pytest.raises(IRError, match=message):
        _C.pretty(around, window)


def test_circuit_pretty_marks_the_gate_asked_for():
    assert _C.pretty(np.int64(1), 0) == ">> gate 1: %3 = lin (1)·%2 + (1)·%0"
    assert "gate 0" in _C.pretty(1, np.uint8(1))
