"""The causal-limit helpers (:mod:`symverify.gadgets.causal`) refuse what they cannot read with an
:class:`~symverify.errors.IRError` naming the function and what it expected, instead of an
``AttributeError`` or ``TypeError`` from deep inside."""

from __future__ import annotations

from typing import Any

import pytest

from symverify.errors import IRError
from symverify.gadgets.causal import (
    causal_obstruction,
    exact_row_dependence,
    later_row_reads,
    row_support,
    symbolic_model,
)
from symverify.kernel.ir.circuit import Circuit


@pytest.mark.parametrize("call, match", [
    (lambda: row_support("x"), r"^row_support: expected a Model, found str"),
    (lambda: row_support(Circuit(2, 1, (), (1,))), r"^row_support: expected a Model, found Circuit"),
    (lambda: exact_row_dependence(None), r"^exact_row_dependence: expected a Model, found NoneType"),
    (lambda: causal_obstruction(symbolic_model(2, 1, 1)), r"^causal_obstruction: expected a Circuit, found Model"),
    (lambda: later_row_reads({0: {1}}), r"^later_row_reads: expected a sequence of sets of input rows .*found dict"),
    (lambda: later_row_reads([1, 2]), r"^later_row_reads: deps\[0\]: expected a set of input rows .*found int 1"),
    (lambda: later_row_reads([frozenset(), {"a"}]), r"^later_row_reads: deps\[1\]: expected a set of input rows"),
    (lambda: later_row_reads([{-1}]), r"^later_row_reads: deps\[0\]: expected a set of input rows"),
    (lambda: later_row_reads([{True}]), r"^later_row_reads: deps\[0\]: expected a set of input rows"),
])
def test_bad_arguments_are_refused_naming_the_function(call: Any, match: str) -> None:
    with pytest.raises(IRError, match=match):
        call()


def test_the_helpers_agree_on_a_causal_stack_and_find_a_later_row_read() -> None:
    m = symbolic_model(3, 1, 2)
    deps = exact_row_dependence(m)
    assert deps == row_support(m) == (frozenset({0}), frozenset({0, 1}), frozenset({0, 1, 2}))
    assert later_row_reads(deps) == [] and later_row_reads([frozenset({1}), frozenset()]) == [(0, 1)]
    assert causal_obstruction(Circuit(2, 1, (), (0, 1))) is None
    assert causal_obstruction(Circuit(2, 1, (), (1,))) is not None
