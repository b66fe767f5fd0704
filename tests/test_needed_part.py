"""Both compilers: gates no output depends on are dropped before the stages are planned.

Their reads would keep values live in the layered form (``live_ℓ`` counts every read), so stages
carried values nothing needed reads. :func:`symverify.compiler.h21.planner.needed_part` turns each
such gate into the constant 0 (node numbers unchanged); the Theorem H.21 planner and the dense
baseline plan that part, and the model is still proved against the circuit as given, with the
stated bounds of that circuit's ``Δ`` and ``w``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify import library as lib
from symverify.compiler import compile
from symverify.compiler.h21 import planner
from symverify.kernel.ir.analysis import cut_width, needed_nodes, stats
from symverify.kernel.ir.circuit import Gate, Op
from symverify.kernel.ir.layered import layered_form
from symverify.kernel.verification import verify
from symverify.mutate import mutate_weight, weight_sites


def test_dead_gates_become_zero_and_the_rest_is_unchanged() -> None:
    c = lib.random_circuit(4, 4, 200, 8, seed=2)
    core = planner.needed_part(c)
    need = needed_nodes(c)
    nd = c.num_inputs
    dead = [nd + k for k in range(len(c.gates)) if nd + k not in need]
    assert dead  # the random circuits leave gates unread
    for k, (g, h) in enumerate(zip(c.gates, core.gates)):
        assert h == (g if nd + k in need else Gate.const(0))
    assert (core.n, core.d, core.outputs, core.name) == (c.n, c.d, c.outputs, c.name)
    assert verify(c, core, method="exact").proved


def test_a_circuit_without_dead_gates_is_returned_as_is() -> None:
    c = lib.poly_mult(3)
    assert planner.needed_part(c) is c


def test_dead_reads_no_longer_widen_the_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    c = lib.random_circuit(4, 4, 200, 8, seed=2)
    pruned = compile(c, method="kaleidoscope")
    core = planner.needed_part(c)
    monkeypatch.setattr(planner, "needed_part", lambda c: c)  # the layered form of the circuit as given
    full = compile(c, method="kaleidoscope")
    assert full.resources["live_width"] == layered_form(c).width == 42
    assert pruned.resources["live_width"] == layered_form(core).width == 28
    assert (full.resources["layers"], pruned.resources["layers"]) == (187, 169)
    assert (full.resources["N_k"], pruned.resources["N_k"]) == (128, 64)
    # Δ, w and the stated bounds are those of the circuit as given
    st_ = stats(c)
    assert pruned.resources["width"] == cut_width(c) == st_.width and pruned.resources["depth"] == st_.depth
    assert pruned.bounds == {**full.bounds, "layers": pruned.bounds["layers"]} and not pruned.over_bound()
    assert verify(c, pruned.model, certificate=pruned.certificate, method="compositional").proved


def test_a_mutant_of_the_pruned_model_is_refuted() -> None:
    c = lib.random_circuit(3, 2, 40, 4, seed=3)
    assert planner.needed_part(c) is not c
    out = compile(c, method="kaleidoscope")
    sites = weight_sites(out.model)
    for s in sites[:: max(1, len(sites) // 12)]:
        res = verify(c, mutate_weight(out.model, s, "inc"), certificate=out.certificate, method="auto")
        assert res.refuted, (str(s), res.verdict)


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 4), st.integers(1, 2), st.integers(6, 30), st.integers(1, 4), st.integers(0, 10_000))
def test_circuits_with_dead_gates_compile_and_are_proved(n: int, d: int, gates: int, depth: int, seed: int) -> None:
    c = lib.random_circuit(n, d, gates, depth, seed=seed)
    out = compile(c, method="kaleidoscope")
    assert verify(c, out.model, certificate=out.certificate, method="compositional").proved
    assert not out.over_bound()
    core = planner.needed_part(c)
    need = needed_nodes(c)
    assert all((g.op is Op.CONST) if c.num_inputs + k not in need else g == c.gates[k] for k, g in enumerate(core.gates))


def test_the_dense_baseline_plans_the_needed_part_too() -> None:
    """The dense baseline keeps every live value in a channel: reads by dead gates no longer widen
    ``d'`` (42 → 28 here), and the model is proved against the circuit as given; a mutant is refuted."""
    c = lib.random_circuit(4, 4, 200, 8, seed=2)
    out = compile(c, method="dense")
    assert out.resources["inner_d"] == layered_form(planner.needed_part(c)).width == 28 < layered_form(c).width
    assert out.resources["width"] == cut_width(c) and not out.over_bound()
    assert verify(c, out.model, certificate=out.certificate, method="compositional").proved
    site = weight_sites(out.model)[len(weight_sites(out.model)) // 2]
    assert verify(c, mutate_weight(out.model, site, "inc"), method="randomized").refuted
