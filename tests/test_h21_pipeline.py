"""The H.21 compiler as a pipeline (symverify.compiler.h21): a pure planner whose frozen plan
carries every linear stage's route, emission that never routes, memoised routes, one stated size,
and BB* groups counted in the resources."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify import library as lib
from symverify.compiler import compile
from symverify.compiler.h21 import emit, planner, routes
from symverify.compiler.h21.size import stated_size
from symverify.compiler.kaleidoscope import kaleidoscope_bounds
from symverify.kaleidoscope.simplify import is_diagonal
from symverify.kaleidoscope.structured import pack_bbstars
from symverify.kernel.ir.butterfly import ButterflyFactor


def test_the_plan_is_frozen_and_carries_every_linear_stages_route():
    c = lib.wired_circuit(4, 2, "hubs", seed=0)
    pre = planner.prepare(c)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pre.layout = None  # type: ignore[misc]
    assert len(pre.routes) == len(pre.plans)
    for p, r in zip(pre.plans, pre.routes):
        assert (r is None) == p.is_mul
        if r is not None:
            assert all(f.size == pre.layout.size for f in r.factors)


def test_emission_never_routes(monkeypatch):
    """Once planned, building the model calls no route builder (and gives the same model)."""
    c = lib.determinant(3)
    pre = planner.prepare(c)
    want = emit.build_model(c, prepared=pre).model

    def refuse(*args, **kwargs):
        raise AssertionError("emission routed a stage")

    monkeypatch.setattr(routes, "stage_factors", refuse)
    monkeypatch.setattr(routes, "_routed", refuse)
    assert emit.build_model(c, prepared=pre).model == want


def test_routes_are_memoised_by_their_inputs(monkeypatch):
    """Planning a circuit a second time builds no route: every route is found by its inputs."""
    c = lib.wired_circuit(4, 2, "random", seed=3)
    first = planner.prepare(c)
    calls = []
    real = routes.stage_factors

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(routes, "stage_factors", counting)
    again = planner.prepare(c)
    assert calls == [] and again == first


def test_a_route_keyed_by_coefficient_types():
    """``1`` and ``Fraction(1)`` are equal but only the former makes an identity stage: the memo
    keys them apart."""
    from fractions import Fraction

    from symverify.compiler.h21.stages import StagePlan
    from symverify.kernel.ir.layered import LinearStage

    one = LinearStage(1, (0, 1), (0, 1), (((0, 1),), ((1, 1),)), (0, 0))
    frac = LinearStage(1, (0, 1), (0, 1), (((0, Fraction(1)),), ((1, Fraction(1)),)), (0, 0))
    assert one == frac
    assert routes.stage_route(StagePlan(one, (0, 1), (0, 1)), 4).route == "identity"
    assert routes.stage_route(StagePlan(frac, (0, 1), (0, 1)), 4).route == "diagonal"


@pytest.mark.parametrize("w", [1, 2, 3, 5, 8, 9, 17, 100, 491])
def test_one_stated_size_for_planner_and_bounds(w):
    a = max(0, (max(w, 2) - 1).bit_length())
    assert stated_size(w) == 4 * 2**a == kaleidoscope_bounds(2, w, 1, 8, 3, 2)["N_k"]


def test_every_stage_fits_the_one_stated_size():
    from symverify.kernel.ir.analysis import cut_width

    for c in (lib.wired_circuit(5, 3, "permutation", seed=0, shuffle_outputs=True), lib.determinant(3)):
        pre = planner.prepare(c)
        assert pre.layout.size <= stated_size(cut_width(c))


def _groups_by_packing(factors):
    live = [f for f in factors if not is_diagonal(f)]
    return len(pack_bbstars(live, live[0].size)) if live else 0


def test_resources_count_the_bbstar_groups_of_every_linear_stage():
    """Linear stages are butterfly chains: each record counts the BB* groups its emitted chain
    fits (as many as :func:`pack_bbstars` builds), and the resources sum them (no longer 0 for
    the selection route)."""
    for c in (lib.wired_circuit(8, 3, "hubs", seed=1), lib.determinant(3), lib.walsh_hadamard(16)):
        pre = planner.prepare(c)
        b = emit.build_model(c, prepared=pre)
        lin = [r for r in b.stages if r["kind"] == "linear"]
        got = [r["bbstar"] for r in lin]
        want = [_groups_by_packing(r.factors) for r in pre.routes if r is not None]
        assert got == want, c.name
        assert sum(got) == compile(c).resources["bbstar"] > 0
        assert all(g >= 1 for r, g in zip(lin, got) if r["route"] == "selection")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1, 2, 4, 8]), st.booleans()), max_size=20))
def test_bbstar_groups_agrees_with_packing(chain):
    fs = [ButterflyFactor(16, s, (1,) * 8, (0,) * 8, (0,) * 8, (2,) * 8) if diag
          else ButterflyFactor(16, s, (0,) * 8, (1,) * 8, (1,) * 8, (0,) * 8) for s, diag in chain]
    assert routes.bbstar_groups(fs) == _groups_by_packing(fs)


def test_wired_circuits_take_any_divisor_of_w_as_d():
    from symverify.errors import UsageError

    c = lib.wired_circuit(10, 1, "reversal", d=5)
    assert (c.n, c.d) == (2, 5)
    assert lib.wired_circuit(8, 2, "random", seed=1) == lib.wired_circuit(8, 2, "random", seed=1, d=4)
    for bad in (3, 0, -5, 2.5):
        with pytest.raises(UsageError, match=r"d: expected a positive divisor of w = 10, found"):
            lib.wired_circuit(10, 1, "reversal", d=bad)  # type: ignore[arg-type]
