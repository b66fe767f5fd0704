"""Every prover outcome names what it is about: certificate checks (``CompositionalResult``, local
and on Dask), matrix checks (``KaleidoscopeCheck``) and ∀ proofs (``ForallResult``) carry sealed
``digests`` of exactly the objects checked, the same on every machine, run and hash seed;
``Instance.from_report`` keeps them and refuses an outcome whose digests were changed after it was
made (docs/formats.md, "Proof run")."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import ProverError
from symverify.kaleidoscope import linear_circuit_to_kaleidoscope, permutation_to_kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.parametric.expr import Bin, Lit, Var
from symverify.kernel.parametric.gadget import NODE_TYPES
from symverify.kernel.provers.compositional import CompositionalResult, check_certificate
from symverify.kernel.provers.fingerprint import content_digest, matrix_digest, tree_digest
from symverify.kernel.provers.forall import ForallResult, claim_digests, prove_forall
from symverify.kernel.provers.matrix import KaleidoscopeCheck, verify_circuit, verify_matrix, verify_permutation
from symverify.kernel.provers.outcome import is_sealed
from symverify.parametric import library as forall_library
from symverify.scripts.protocol import Instance

ROOT = Path(__file__).resolve().parents[1]
SUM_A = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0]], n=1, d=2)
PROD_A = sv.Circuit.trace(lambda u: [u[0][0] * (u[0][1] + 1)], n=1, d=2)
SUM_B = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][1]], n=1, d=2)


def _ranges(g):
    return {p.name: (p.lo, p.hi) for p in g.params}


# ---- certificate checks ----------------------------------------------------------------------------


def test_a_certificate_check_names_its_circuit_and_model():
    """The digests are the sides' ``side_digest``s, as a ``verify`` report of the same pair gives them
    (the certificate is evidence, not part of the claim); another circuit gives other digests."""
    ca, cb = sv.compile(SUM_A), sv.compile(SUM_B)
    a = check_certificate(SUM_A, ca.model, ca.certificate)
    b = check_certificate(SUM_B, cb.model, cb.certificate)
    assert a.ok and b.ok
    assert a.digests == (content_digest(SUM_A), content_digest(ca.model))
    report = sv.verify(SUM_A, ca.model, method="compositional", certificate=ca.certificate)
    assert a.digests == (report.lhs["digest"], report.rhs["digest"])
    assert b.digests is not None and a.digests[0] != b.digests[0] and a.digests[1] != b.digests[1]
    inst = Instance.from_report("c", a)
    assert inst.digests == (a.digests,)
    assert inst.to_json()["digests"] == [{"lhs": a.digests[0], "rhs": a.digests[1]}]


def test_a_certificate_check_stopped_by_its_deadline_still_names_what_it_is_about():
    comp = sv.compile(SUM_A)
    res = check_certificate(SUM_A, comp.model, comp.certificate, deadline=time.monotonic() - 1)
    assert res.stopped == "timeout" and res.verdict is sv.Verdict.UNKNOWN
    assert res.digests == (content_digest(SUM_A), content_digest(comp.model))
    assert Instance.from_report("c", res).digests == (res.digests,)


def test_a_failed_stage_names_the_model_that_failed():
    from symverify.mutate import weight_mutant

    comp = sv.compile(PROD_A)
    bad = weight_mutant(comp.model, 0, ("inc",)).obj
    res = check_certificate(PROD_A, bad, comp.certificate)
    assert not res.ok and res.digests == (content_digest(PROD_A), content_digest(bad))
    assert res.digests[1] != content_digest(comp.model)


def test_dask_and_local_certificate_checks_give_identical_digests():
    pytest.importorskip("distributed")
    from conftest import local_dask_client

    from symverify.kernel.provers.stages_dask import check_certificate_dask
    from symverify.library import random_circuit

    c = random_circuit(4, 2, 30, 6, seed=3, num_outputs=4)
    comp = sv.compile(c)
    local = check_certificate(c, comp.model, comp.certificate)
    with local_dask_client(2) as client:
        remote = check_certificate_dask(c, comp.model, comp.certificate, scheduler=client, stages_per_task=2)
        late = check_certificate_dask(c, comp.model, comp.certificate, scheduler=client, deadline=time.monotonic() - 1)
    assert local.ok and remote.ok and is_sealed(remote)
    assert remote.digests == local.digests == (content_digest(c), content_digest(comp.model))
    assert dataclasses.replace(remote, seconds=0.0) == dataclasses.replace(local, seconds=0.0)
    assert late.stopped == "timeout" and late.digests == local.digests


# ---- matrix checks ---------------------------------------------------------------------------------


def test_a_matrix_check_names_its_kaleidoscope_and_target():
    f, g = permutation_to_kaleidoscope([1, 0, 2]), permutation_to_kaleidoscope([2, 0, 1])
    p = verify_permutation(f, [1, 0, 2])
    m = verify_matrix(f, [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    assert p.proved and m.proved
    assert p.digests == m.digests  # one claim, however the target was given
    assert p.digests == (content_digest(f.kaleidoscope), matrix_digest(3, 3, {(0, 1): 1, (1, 0): 1, (2, 2): 1}))
    q = verify_permutation(g, [2, 0, 1])
    assert q.digests is not None and q.digests[0] != p.digests[0] and q.digests[1] != p.digests[1]
    wrong = verify_matrix(f, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])  # a refutation names its target too
    assert wrong.verdict is sv.Verdict.REFUTED and wrong.digests[0] == p.digests[0] and wrong.digests[1] != p.digests[1]
    assert Instance.from_report("p", p, resources=f.resources, bounds=f.bounds).digests == (p.digests,)


def test_a_circuit_check_names_the_circuit_as_verify_does():
    c = Circuit(1, 2, (Gate.lin(1, 1, 0, 1), Gate.lin(0, 1, 1, -1)), (2, 3))
    other = Circuit(1, 2, (Gate.lin(0, 1, 1, 1), Gate.lin(0, 1, 1, -1)), (2, 3))  # the same matrix, another circuit
    k = linear_circuit_to_kaleidoscope(c)
    kal = k.kaleidoscope
    one, two = verify_circuit(k, c), verify_circuit(k, other)
    assert one.proved and two.proved
    report = sv.verify(kal, c, method="exact")
    assert one.digests == (report.lhs["digest"], report.rhs["digest"]) == (content_digest(kal), content_digest(c))
    assert one.digests != two.digests


def test_a_circuit_check_refuses_a_circuit_subclass_as_verify_does():
    from symverify.kernel.provers.fingerprint import EncodingError

    class Other(Circuit):
        pass

    c = Other(1, 2, (Gate.lin(1, 1, 0, 1), Gate.lin(0, 1, 1, -1)), (2, 3))
    k = linear_circuit_to_kaleidoscope(Circuit(1, 2, c.gates, c.outputs))
    with pytest.raises(EncodingError, match=r"kaleidoscope check: the circuit: expected a Circuit, Model or Kaleidoscope "
                                            r"exactly, found an instance of .*Other"):
        verify_circuit(k, c)


def test_a_matrix_digest_reads_the_exact_entries():
    assert matrix_digest(2, 2, {(0, 0): 1, (1, 1): 0}) == matrix_digest(2, 2, {(0, 0): 1})  # zeros listed or not
    base = matrix_digest(2, 2, {(0, 0): 1})
    assert len({base, matrix_digest(2, 2, {(0, 1): 1}), matrix_digest(3, 3, {(0, 0): 1}),
                matrix_digest(2, 2, {(0, 0): Fraction(1, 2)})}) == 4


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.permutations(range(n))))
def test_a_permutation_s_digest_is_its_matrix_s(perm):
    from symverify.kernel.provers.fingerprint import permutation_digest

    n = len(perm)
    assert permutation_digest(perm) == matrix_digest(n, n, {(t, i): 1 for i, t in enumerate(perm)})
    f = permutation_to_kaleidoscope(perm)
    assert verify_permutation(f, perm).digests == verify_matrix(f, {(t, i): 1 for i, t in enumerate(perm)}).digests


# ---- ∀ proofs --------------------------------------------------------------------------------------


def test_a_forall_proof_names_its_statement_and_construction():
    g = forall_library.shift_down()
    r = prove_forall(g)
    assert r.proved and r.digests == claim_digests(g, _ranges(g))
    first = g.params[0]
    narrow = prove_forall(g, ranges={first.name: (first.lo, first.lo)})
    assert narrow.digests[0] != r.digests[0] and narrow.digests[1] == r.digests[1]  # another statement, one construction
    renamed = dataclasses.replace(g, name="renamed", doc="other words")
    assert claim_digests(renamed, _ranges(g)) == r.digests  # the name and the prose are not the definition
    assert Instance.from_report("∀", r).digests == (r.digests,)


def test_gadgets_that_differ_anywhere_in_their_definition_differ_in_a_digest():
    """``str()`` of two gadgets may agree where their trees differ: the digest reads the trees."""
    right, wrong = forall_library.user_cyclic_shift(False), forall_library.user_cyclic_shift(True)
    assert right != wrong
    assert claim_digests(right, _ranges(right)) != claim_digests(wrong, _ranges(wrong))
    for make in (forall_library.shift_down, forall_library.shift_up, forall_library.running_add, forall_library.mask):
        g = make()
        assert claim_digests(g, _ranges(g)) == claim_digests(make(), _ranges(g))
    digests = {claim_digests(g, _ranges(g)) for g in (forall_library.shift_down(), forall_library.shift_up(),
                                                      forall_library.running_add(), forall_library.mask())}
    assert len(digests) == 4


_leaf = st.one_of(st.integers(0, 5).map(Lit), st.sampled_from(["a", "b", "ab"]).map(Var))
_iexpr = st.recursive(_leaf, lambda inner: st.tuples(st.sampled_from(["+", "*", "-"]), inner, inner)
                      .map(lambda t: Bin(*t)), max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(_iexpr, _iexpr)
def test_expression_digests_are_equal_exactly_for_equal_trees(x, y):
    dx, dy = tree_digest("t", x, NODE_TYPES), tree_digest("t", y, NODE_TYPES)
    assert (dx == dy) == (x == y)
    assert tree_digest("t", (x, y), NODE_TYPES) != tree_digest("t", ((x, y),), NODE_TYPES)


def test_a_tree_digest_refuses_what_it_cannot_encode():
    from symverify.kernel.provers.fingerprint import EncodingError

    with pytest.raises(EncodingError, match=r"t digest: expected .*found builtins\.float"):
        tree_digest("t", (Lit(1), 0.5), NODE_TYPES)


# ---- sealed: changed digests are refused -------------------------------------------------------------


def _outcomes():
    comp = sv.compile(SUM_A)
    f = permutation_to_kaleidoscope([1, 0, 2])
    return {"certificate": check_certificate(SUM_A, comp.model, comp.certificate),
            "matrix": verify_permutation(f, [1, 0, 2]),
            "forall": prove_forall(forall_library.shift_down())}


@pytest.mark.parametrize("kind", ["certificate", "matrix", "forall"])
def test_digests_changed_after_sealing_are_refused(kind):
    res = _outcomes()[kind]
    assert is_sealed(res) and res.digests is not None
    other = ("sha256:" + "0" * 64, res.digests[1])
    object.__setattr__(res, "digests", other)
    assert not is_sealed(res)
    with pytest.raises(ProverError, match=rf"instance 'x': this {type(res).__name__} \(\w+\) was not made by its prover"):
        Instance.from_report("x", res)


@pytest.mark.parametrize("make, what", [
    (lambda d: CompositionalResult(True, 1, 1, digests=d), r"certificate check: digests: expected None or \(circuit, model\)"),
    (lambda d: KaleidoscopeCheck(sv.Verdict.PROVED, "exact-matrix", 2, 2, 1, False, digests=d),
     r"kaleidoscope check: digests: expected None or \(kaleidoscope, target\)"),
    (lambda d: ForallResult("g", sv.Verdict.PROVED, "N ∈ [1, 2]", digests=d),
     r"∀ result 'g': digests: expected None or \(statement, construction\)"),
])
def test_outcomes_refuse_digests_of_another_form(make, what):
    with pytest.raises(ProverError, match=what + r" digests 'sha256:<64 hex digits>', found \('sha256:00'"):
        make(("sha256:00", "sha256:" + "1" * 64))
    with pytest.raises(ProverError, match=what):
        make(["sha256:" + "1" * 64] * 2)  # a list is not the sealed pair


# ---- the same on every process and hash seed ---------------------------------------------------------


_PRINT = textwrap.dedent("""
    import json
    import symverify as sv
    from symverify.kaleidoscope import linear_circuit_to_kaleidoscope, permutation_to_kaleidoscope
    from symverify.kernel.provers.compositional import check_certificate
    from symverify.kernel.provers.forall import prove_forall
    from symverify.kernel.provers.matrix import verify_permutation
    from symverify.parametric import library as L
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0]], n=1, d=2)
    comp = sv.compile(c)
    f = permutation_to_kaleidoscope([3, 1, 0, 2])
    print(json.dumps([check_certificate(c, comp.model, comp.certificate).digests,
                      verify_permutation(f, [3, 1, 0, 2]).digests,
                      prove_forall(L.mul_stage(), timeout=120).digests]))
""")


def test_digests_are_the_same_in_processes_of_different_hash_seeds():
    outs = []
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", _PRINT], capture_output=True, text=True, env=env, timeout=600,
                              check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        outs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outs[0] == outs[1] == outs[2]
    assert all(d is not None for d in outs[0])
    here = _outcomes()
    assert outs[0][0] == list(here["certificate"].digests) and outs[0][1] != list(here["matrix"].digests)
