"""Two runs of one check give equal results: the time taken (``seconds``) is left out of ``==`` and
the hash of a prover's outcome (``CompositionalResult``, ``FragmentProof``, ``ForallResult``), as
it is left out of their seals; every field that states something still decides equality, and the
time is still kept (pickled, shown)."""

from __future__ import annotations

import pickle
from dataclasses import fields, replace

import pytest

import symverify as sv
from symverify.kernel.provers.compositional import CompositionalResult, check_certificate
from symverify.kernel.provers.forall import ForallResult
from symverify.kernel.provers.fragment import FragmentProof
from symverify.kernel.provers.outcome import is_sealed
from symverify.parametric import Gadget, Param, PLayer, inp, tap, var


def _pair():
    from symverify.library import random_circuit

    c = random_circuit(3, 2, 8, 3, seed=5, num_outputs=2)
    return c, sv.compile(c)


def test_two_runs_of_a_certificate_check_compare_equal():
    c, comp = _pair()
    a = check_certificate(c, comp.model, comp.certificate)
    b = replace(a, seconds=a.seconds + 7.5)  # another run, slower
    assert a.ok and a == b and hash(a) == hash(b)
    assert a.seconds != b.seconds  # kept, only not compared
    back = pickle.loads(pickle.dumps(a))
    assert back == a and back.seconds == a.seconds and is_sealed(back)


@pytest.mark.parametrize("name", [f.name for f in fields(CompositionalResult)
                                  if f.name not in ("seconds", "_seal")])
def test_every_stated_field_still_decides_equality(name):
    """The fields a result states (all but the time and its seal) still make results unequal."""
    c, comp = _pair()
    a = check_certificate(c, comp.model, comp.certificate)
    other = {"ok": False, "stages_checked": 99, "stages_total": 99, "failure": "x", "max_stage_layers": 99,
             "monomials": -1, "notes": ("x",), "stopped": "timeout", "stages_isolated": 9, "largest_estimate": 9,
             "digests": ("sha256:" + "0" * 64, "sha256:" + "1" * 64), "meta_note": "x"}[name]
    assert a != replace(a, **{name: other})


def test_two_runs_of_a_fragment_proof_and_a_forall_proof_compare_equal():
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.provers.fragment import prove_fragment

    f = prove_fragment(shift_down(3, 1, 1))
    assert isinstance(f, FragmentProof) and f == replace(f, seconds=f.seconds + 1) and hash(f) == hash(replace(f, seconds=9.0))
    assert f != replace(f, name="another")
    i, q = var("i"), var("q")
    g = Gadget("g", (Param("N", 1, 4),), var("N"), 1, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),), inp(i, q))
    r = sv.prove_forall(g)
    assert isinstance(r, ForallResult) and r.verdict is sv.Verdict.PROVED
    assert r == replace(r, seconds=r.seconds + 1) and r != replace(r, ranges="N in [1, 5]")
