"""The causal limit: row i of a causal stack depends only on rows ≤ i; the obstruction circuits."""

import pytest
from hypothesis import given, settings

from symverify.compiler import compile
from symverify.errors import IRError
from symverify.gadgets import causal
from symverify.gadgets.causal import (
    CausalObstruction,
    causal_obstruction,
    exact_row_dependence,
    later_row_reads,
    row_support,
    symbolic_model,
)
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics.poly import polynomials
from symverify.testing import models


@pytest.mark.parametrize("nn,dd,L", [(2, 1, 1), (2, 1, 3), (2, 2, 2), (3, 1, 2), (3, 2, 2)])
def test_row_zero_of_a_symbolic_causal_stack_has_no_later_row_variable(nn, dd, L):
    model = symbolic_model(nn, dd, L)
    assert len(model.params()) == L * (dd * dd + 3 * nn * dd)
    polys = polynomials(model)
    for p in polys[0]:
        degs = p.degrees()
        assert all(degs[v] <= 0 for v in range(dd, nn * dd))  # no variable of rows ≥ 1
        assert any(degs[v] > 0 for v in range(dd))  # it does depend on row 0
    deps = exact_row_dependence(model)
    assert later_row_reads(deps) == []
    assert deps == tuple(frozenset(range(i + 1)) for i in range(nn))


def test_cyclic_stacks_do_read_later_rows():
    deps = exact_row_dependence(symbolic_model(2, 1, 1, mode=Mode.CYCLIC))
    assert later_row_reads(deps) == [(0, 1)]


def test_support_analysis_over_approximates_the_exact_dependence():
    for mode in (Mode.CAUSAL, Mode.CYCLIC):
        model = symbolic_model(3, 1, 2, mode=mode)
        exact, approx = exact_row_dependence(model), row_support(model)
        assert all(e <= a for e, a in zip(exact, approx))
    assert later_row_reads(row_support(symbolic_model(12, 2, 6))) == []


@settings(max_examples=30)
@given(models(max_n=3, max_d=2, max_layers=3, modes=(Mode.CAUSAL,)))
def test_random_causal_models_never_read_later_rows(model):
    assert later_row_reads(row_support(model)) == []
    assert later_row_reads(exact_row_dependence(model)) == []


def test_the_obstruction_circuits():
    obs = causal_obstruction(Circuit(2, 1, (), (1,)))
    assert obs == CausalObstruction(0, (0, 0), 1, (1, 0))
    assert "no causal stack" in str(obs)
    every = causal_obstruction(Circuit(2, 1, (), (1, 1)))
    assert every is not None and every.output_cell == (0, 0)
    assert causal_obstruction(Circuit(2, 1, (), (0, 0))) is None  # every row := x_0 is causal


def test_obstruction_uses_exact_dependence_not_structure():
    # output 0 = x_1 − x_1 reads x_1 structurally but does not depend on it
    c = Circuit(2, 1, (Gate.sub(1, 1), Gate.mul(0, 2)), (3,))
    assert causal_obstruction(c) is None
    c2 = Circuit(2, 1, (Gate.mul(0, 1),), (2,))
    assert causal_obstruction(c2).input_node == 1


def test_the_dense_model_of_an_obstructed_circuit_is_cyclic_and_proved():
    c = Circuit(2, 1, (), (1, 1))
    out = compile(c, method="dense")
    assert Mode.CYCLIC in out.model.modes()
    assert check_certificate(c, out.model, out.certificate).ok


def test_symbolic_model_validation():
    with pytest.raises(IRError, match="layer count ≥ 0"):
        symbolic_model(2, 1, -1)
    with pytest.raises(IRError, match="mode 'causal' or 'cyclic'"):
        symbolic_model(2, 1, 1, mode="both")
    m = symbolic_model(3, 2, 1, n=2, d=1)
    assert m.signature == (2, 1, 1, 3, 2)
    assert later_row_reads(exact_row_dependence(m)) == []


def _cancelling_model() -> Model:
    """n = 2, d = 1, d' = 2, cyclic: layer 1 copies ``x_i`` into both channels, layer 2 makes each
    ``x_i(x_i + x_{i-1})``, layer 3 multiplies their difference (exactly 0) by a symbol ``s``; the
    support analysis still sees both rows in each output."""
    ones, zeros = Grid.from_rows([[1, 1], [1, 1]]), Grid.zeros(2, 2)
    copy = Layer(Grid.from_rows([[1, 1], [0, 0]]), zeros, zeros, ones, Mode.CYCLIC)
    square = Layer(Grid.from_rows([[1, 0], [0, 1]]), zeros, ones, zeros, Mode.CYCLIC)
    s = sym("s")
    cancel = Layer(Grid.from_rows([[1, 0], [-1, 0]]), zeros, zeros, Grid.from_rows([[s, 0], [s, 0]]), Mode.CYCLIC)
    return Model(2, 1, 2, 2, (copy, square, cancel), "cancelling")


@pytest.mark.parametrize("mode", [Mode.CAUSAL, Mode.CYCLIC])
@pytest.mark.parametrize("nn,dd,L", [(2, 1, 1), (2, 1, 3), (2, 2, 2), (3, 1, 3), (3, 2, 2), (2, 1, 4)])
def test_exact_row_dependence_equals_the_expanded_polynomials(nn, dd, L, mode):
    model = symbolic_model(nn, dd, L, mode=mode)
    assert exact_row_dependence(model) == causal._expanded_row_dependence(model, "flint")


def test_exact_row_dependence_expands_where_the_support_over_approximates():
    model = _cancelling_model()
    assert row_support(model) == (frozenset({0, 1}), frozenset({0, 1}))
    assert exact_row_dependence(model) == (frozenset(), frozenset())
    assert later_row_reads(exact_row_dependence(model)) == []


def test_exact_row_dependence_needs_the_integer_witness_to_match(monkeypatch):
    model = symbolic_model(2, 1, 2, mode=Mode.CYCLIC)
    calls = []

    def expanded(m, backend):
        calls.append(m)
        return (frozenset({0}), frozenset({1}))

    monkeypatch.setattr(causal, "_rows_at_integer_weights", lambda m, backend: (frozenset({0}), frozenset({0, 1})))
    monkeypatch.setattr(causal, "_expanded_row_dependence", expanded)
    assert exact_row_dependence(model) == (frozenset({0}), frozenset({1}))
    assert calls == [model]


def test_rows_at_integer_weights_are_a_subset_of_the_exact_dependence():
    for mode in (Mode.CAUSAL, Mode.CYCLIC):
        model = symbolic_model(3, 1, 2, mode=mode)
        low, exact = causal._rows_at_integer_weights(model, "flint"), causal._expanded_row_dependence(model, "flint")
        assert all(lo <= e for lo, e in zip(low, exact)) and low == exact
