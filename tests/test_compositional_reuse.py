"""The certificate checker and the provers around it compute each thing once where it used to be
computed twice: a stage's gates to expand (its plan and its check), a symbol's polynomial within a
stage, the pair's structural bounds after a failed stage, the output pairs of a bounds pass, a
fragment proof's digests. Each test spies on the computation and fails on the code that repeated
it; the verdicts and values are the ones computed the old way."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from symverify.compiler import compile
from symverify.compiler.gated import hyena_direct
from symverify.gadgets.primitives import shift_down
from symverify.kernel.ir.circuit import Circuit as CircuitIR
from symverify.kernel.ir.scalar import Sym
from symverify.kernel.provers import bounds as bounds_mod
from symverify.kernel.provers import certified as certified_mod
from symverify.kernel.provers import compositional as comp
from symverify.kernel.provers import fragment as fragment_mod
from symverify.kernel.provers import registry
from symverify.kernel.provers.fragment import prove_fragment
from symverify.kernel.provers.sides import as_side
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.verification import verify
from symverify.library import hyena, walsh_hadamard
from symverify.mutate import get_weight, set_weight, weight_sites


def test_each_stage_expands_the_gates_its_plan_found_without_searching_again(monkeypatch: pytest.MonkeyPatch) -> None:
    c = walsh_hadamard(8)
    out = compile(c, method="kaleidoscope")
    calls: list[int] = []
    real = comp._needed

    def spy(*args: Any) -> list[int]:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(comp, "_needed", spy)
    res = comp.check_certificate(c, out.model, out.certificate)
    assert res.ok
    assert len(calls) == res.stages_total  # the plan's search only (it was the plan's and the check's)


def test_a_stage_whose_node_is_missing_is_still_reported() -> None:
    from symverify.kernel.ir.certificate import Boundary

    c = walsh_hadamard(4)
    out = compile(c, method="kaleidoscope")
    last = out.certificate.boundaries[-1]
    empty = Boundary(0, (), "nothing")  # its stage needs the inputs, which it does not hold
    run = comp.StageRun.of(c, out.model)
    outcome = run.stage(c, out.model, 0, empty, last, True, None, {})  # planned, then checked
    assert outcome.failure is not None
    assert "is needed but boundary 0 does not hold it" in outcome.failure.reason


def test_a_symbol_is_converted_once_per_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    c, direct = hyena(4, 2), hyena_direct(4, 2)
    stage = [0]
    seen: list[tuple[int, int]] = []
    real_coerce, real_check = PolyRing.coerce, comp._check_stage

    def coerce(self: PolyRing, x: Any) -> Any:
        if type(x) is Sym:
            seen.append((stage[0], id(x)))
        return real_coerce(self, x)

    def check_stage(*args: Any, **kwargs: Any) -> Any:
        stage[0] += 1
        return real_check(*args, **kwargs)

    monkeypatch.setattr(PolyRing, "coerce", coerce)
    monkeypatch.setattr(comp, "_check_stage", check_stage)
    res = comp.check_certificate(c, direct.model, direct.certificate)
    assert res.ok
    assert seen and len(seen) == len(set(seen))  # each symbol object once in each stage


def test_a_failed_stage_searches_with_the_bounds_verify_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    c, direct = hyena(2, 1), hyena_direct(2, 1)
    site = weight_sites(direct.model)[0]
    mutant = replace(direct, model=set_weight(direct.model, site, get_weight(direct.model, site) + 1))
    calls: list[int] = []
    real = bounds_mod.structure_bounds

    def spy(lhs: Any, rhs: Any, **kwargs: Any) -> Any:
        if lhs.obj is not rhs.obj:  # the pair's pass (compositional also bounds the circuit alone)
            calls.append(1)
        return real(lhs, rhs, **kwargs)

    monkeypatch.setattr(bounds_mod, "structure_bounds", spy)  # the search's import
    monkeypatch.setattr(registry, "structure_bounds", spy)  # verify's lazily computed bounds
    for method in ("auto", "compositional"):
        calls.clear()
        rep = verify(c, mutant, method=method)
        assert rep.verdict.value == "refuted" and rep.counterexample is not None
        assert len(calls) == 1, method  # the pair's pass once (the search made its own second pass)


def test_structure_bounds_reads_each_distinct_output_pair_once(monkeypatch: pytest.MonkeyPatch) -> None:
    c = walsh_hadamard(8)
    out = compile(c, method="dense")
    lhs, rhs = as_side(out.model, "model"), as_side(c, "circuit")
    want = bounds_mod.structure_bounds(lhs, rhs)
    made: list[int] = []
    real = bounds_mod.UB

    def counted(*args: Any) -> Any:
        made.append(1)
        return real(*args)

    monkeypatch.setattr(bounds_mod, "UB", counted)
    got = bounds_mod.structure_bounds(lhs, rhs)
    assert got == want
    assert 0 < len(made) < c.num_inputs  # the old loop made one per output cell


def test_a_fragment_proof_names_the_pair_by_its_certificate_check_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = fragment_mod.content_digest

    def spy(obj: Any) -> str:
        calls.append(1)
        return real(obj)

    monkeypatch.setattr(fragment_mod, "content_digest", spy)
    proof = prove_fragment(shift_down(3, 1, 1))
    assert proof.proved
    assert calls == []  # the certificate check's digests are the proof's (they were computed again)
    circuit, model, _ = fragment_mod.standalone(shift_down(3, 1, 1))
    assert proof.digests == (real(circuit), real(model))


def test_the_certificate_check_compares_each_side_once_within_verify(monkeypatch: pytest.MonkeyPatch) -> None:
    from symverify.kernel.provers import fingerprint

    c = walsh_hadamard(8)
    out = compile(c, method="kaleidoscope")
    inside: list[list[int]] = []
    running = [False]
    real_state, real_still, real_check = fingerprint._state, fingerprint._still, comp.check_certificate

    def state(obj: Any) -> Any:
        if running[0]:
            inside[-1].append(id(obj))
        return real_state(obj)

    def still(kept: Any, obj: Any) -> Any:  # a kept circuit's comparison without a new snapshot
        if running[0] and type(obj) is CircuitIR:  # other sides' go through _state
            inside[-1].append(id(obj))
        return real_still(kept, obj)

    def check(*args: Any, **kwargs: Any) -> Any:
        inside.append([])
        running[0] = True
        try:
            return real_check(*args, **kwargs)
        finally:
            running[0] = False

    monkeypatch.setattr(fingerprint, "_state", state)
    monkeypatch.setattr(fingerprint, "_still", still)
    monkeypatch.setattr(certified_mod, "check_certificate", check)
    rep = verify(c, out, method="compositional")
    assert rep.proved
    (seen,) = inside
    # check_plain's comparison of each side only (a new snapshot, or the kept circuit's compared by
    # `_still`; the digests took a second one); verify's block compares what the memos stored when it ends
    assert seen.count(id(c)) == 1 and seen.count(id(out.model)) == 1


def test_a_side_rewritten_during_a_direct_check_loses_what_was_kept_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.semantics.straightline import program

    c = walsh_hadamard(4)
    out = compile(c, method="kaleidoscope")
    gates = c.gates
    real = comp._check_stage
    done: list[int] = []

    def check_stage(circuit: Circuit, *args: Any, **kwargs: Any) -> Any:
        res = real(circuit, *args, **kwargs)
        if not done:  # the program is kept by now (the plan's count read it); rewrite the circuit in place
            done.append(1)
            object.__setattr__(circuit, "gates", (Gate.mul(0, 0), *gates[1:]))
        return res

    monkeypatch.setattr(comp, "_check_stage", check_stage)
    kept = program(c)
    comp.check_certificate(c, out.model, out.certificate)
    assert program(c) is not kept  # the block's end compared the snapshot and dropped it
    object.__setattr__(c, "gates", gates)
