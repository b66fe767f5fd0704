"""A ``Compiled`` cannot state fewer resources than its model has.

``over_bound()`` compares the *stated* resources with the stated bounds, and proof scripts copy
``out.resources`` into their tables; a result whose ``layers`` (or ``inner_n``, ``nonzero_params``,
``cyclic_layers``, …) is below the model's own count would report a model within a bound it
exceeds. Every compiler states the model's own values (checked here on random circuits), and
``Compiled`` refuses a value below them, ``dataclasses.replace(out, model=…)`` included.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.compiler import compile
from symverify.compiler.result import MODEL_RESOURCES, Compiled, _model_value
from symverify.errors import CompileError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.mutate import mutate_weight, weight_sites
from symverify.strategies import circuits

SQUARE = Circuit(1, 2, (Gate.mul(0, 1),), (2,))


def test_a_longer_model_under_a_shorter_result_s_resources_is_refused() -> None:
    out = compile(SQUARE, method="dense")
    longer = Model(out.model.n, out.model.d, out.model.inner_n, out.model.inner_d, out.model.layers * 3)
    with pytest.raises(CompileError, match=r"resources\['layers'\]: expected at least the model's \d+ layers, found \d+"):
        dataclasses.replace(out, model=longer)


@pytest.mark.parametrize("key", ["layers", "layers_thm", "layers_c21", "inner_n", "inner_d", "params", "nonzero_params"])
def test_each_model_resource_stated_one_below_is_refused(key: str) -> None:
    out = compile(SQUARE, method="kaleidoscope")
    assert out.resources[key] == _model_value(out.model, key)
    with pytest.raises(CompileError, match=rf"resources\['{key}'\]: expected at least the model's"):
        Compiled(out.model, out.certificate, {**out.resources, key: out.resources[key] - 1}, out.method, out.bounds)
    more = Compiled(out.model, out.certificate, {**out.resources, key: out.resources[key] + 1}, out.method, out.bounds)
    assert more.resources[key] == out.resources[key] + 1  # stating more is conservative: allowed


def test_a_cyclic_model_cannot_claim_no_cyclic_layers() -> None:
    """The direct constructions state ``cyclic_layers ≤ 0`` (causal stacks); a cyclic layer under
    that claim would be within the bound on paper only."""
    cyclic = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]]), mode=Mode.CYCLIC),))
    with pytest.raises(CompileError, match=r"resources\['cyclic_layers'\]: expected at least the model's 1 cyclic layers, found 0"):
        Compiled(cyclic, None, {"cyclic_layers": 0}, "direct", {"cyclic_layers": 0})


def test_a_mutant_with_a_new_nonzero_weight_is_refused_under_the_old_count() -> None:
    out = compile(SQUARE, method="dense")
    zero = next(s for s in weight_sites(out.model, nonzero=False))
    mutant = mutate_weight(out.model, zero, "one")
    with pytest.raises(CompileError, match="nonzero parameters"):
        dataclasses.replace(out, model=mutant)
    assert Compiled(mutant, None, {}, "mutant").model == mutant  # the bare model, or no count, is fine


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(circuits(max_n=3, max_d=3, max_gates=8, allow_sym=True), st.sampled_from(["dense", "auto", "exact", "greedy"]))
def test_every_compiler_states_the_model_s_own_values(c: Circuit, how: str) -> None:
    out = compile(c, method="dense") if how == "dense" else compile(c, plan=how)
    stated = {k: out.resources[k] for k in MODEL_RESOURCES if k in out.resources}
    assert {"layers", "inner_n", "inner_d", "params", "nonzero_params"} <= stated.keys()
    assert stated == {k: _model_value(out.model, k) for k in stated}


@pytest.mark.parametrize(("W_A", "found"), [
    ("ab", r"found str 'ab'"),
    ([[1, 0]], r"found 1 rows \(2 entries\)"),
    ([[1], [0, 1]], r"found 2 rows \(1 entries, 2 entries\)"),
    ([{0: 1, 1: 0}, [0, 1]], r"found 2 rows \(a dict, 2 entries\)"),
])
def test_retnet_direct_says_what_matrix_it_found(W_A: object, found: str) -> None:
    """The refusal said only "expected a 2×2 matrix", not what was given."""
    from symverify.compiler.retnet import retnet_direct

    with pytest.raises(CompileError, match=r"retnet W_A: expected a 2×2 matrix \(a list of 2 rows of 2 entries\), " + found):
        retnet_direct(3, 2, W_A=W_A)


def test_a_model_subclass_cannot_answer_its_own_counts() -> None:
    """The model's values are the IR's own counts, not what a subclass's methods say."""
    out = compile(SQUARE, method="dense")

    class Small(Model):
        def param_count(self) -> int:
            return 0

        def nonzero_param_count(self) -> int:
            return 0

    m = out.model
    small = Small(m.n, m.d, m.inner_n, m.inner_d, m.layers, m.name)
    for key in ("params", "nonzero_params"):
        with pytest.raises(CompileError, match=rf"resources\['{key}'\]: expected at least the model's [1-9]"):
            Compiled(small, None, {key: 0}, "dense")
