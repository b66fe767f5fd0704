"""Adversarial inputs to the all-sizes machinery, seventh round: hypotheses (``entry``, ``assume``)
that restrict a proof without showing in its verdict, an ``entry`` true at no cell (a statement about
the zero input only), a sealed verdict relabelled after it was made, and an ``assume`` whose own
definedness was checked with itself as a premise (docs/forall.md §1, §3)."""

from __future__ import annotations

import copy

import pytest

import symverify as sv
from symverify.errors import ProverError
from symverify.kernel.provers.outcome import is_sealed
from symverify.parametric import Gadget, Param, ParametricError, PLayer, inp, instantiate, lt, pred, tap, var, where
from symverify.scripts.instances import forall_instance
from symverify.scripts.protocol import Instance

i, q, N, a = (var(x) for x in "iqNa")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)


# ---- the hypotheses are part of the printed statement ---------------------------------------------------
def test_an_entry_true_at_no_cell_is_refused_as_vacuous() -> None:
    """``entry = i < 0`` lets no input cell be nonzero: the statement is about the zero input only, and
    any linear spec (here twice the input) was "proved for all N ∈ [1, 2^40]", printed as if every input
    were meant. It is refused as vacuous, as a ``care`` true at no cell is."""
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, 2 * inp(i, q), entry=lt(i, 0))
    with pytest.raises(ParametricError, match=r"vacuous statement: .*entry i < 0 holds at no cell.*zero input"):
        sv.prove_forall(g)


def test_an_entry_is_printed_with_the_verdict() -> None:
    """``entry = i < a`` with ``a ∈ [0, 3]``: at ``a = 0`` no input cell may be nonzero (there the claim is
    about the zero input only: the output is twice the spec there, which ``0 = 0`` cannot see). The verdict
    now says which inputs it is about, in its text and in the detail of its proof-script row; the row's
    name (the ranges) is unchanged."""
    ps = (Param("N", 4, 8), Param("a", 0, 3))
    g = Gadget("g", ps, N, 1, _COPY, inp(i, q), entry=lt(i, a))
    r = sv.prove_forall(g)
    assert r.proved and r.ranges == "N ∈ [4, 8], a ∈ [0, 3]", r
    assert r.hypotheses == "input nonzero only where i < a", r
    assert "proved for all N ∈ [4, 8], a ∈ [0, 3], given input nonzero only where i < a" in str(r), r
    assert "input nonzero only where i < a" in repr(r)
    row = forall_instance(g)
    assert row.name == "∀ g: N ∈ [4, 8], a ∈ [0, 3]" and row.detail == "given input nonzero only where i < a", row
    plain = sv.prove_forall(Gadget("g", ps, N, 1, _COPY, inp(i, q)))
    assert plain.hypotheses == "" and "given" not in str(plain) and forall_instance(Gadget("g", ps, N, 1, _COPY, inp(i, q))).detail == ""


def test_an_assume_is_printed_with_the_verdict() -> None:
    """``b1 = [P]``, ``assume = P``: the copy is proved only for the placements with ``P`` at every cell;
    the verdict read "proved for all N" with no word of it."""
    p = pred("P", i, q)
    g = Gadget("g", (Param("N", 1, 8),), N, 1, (PLayer(b1=where(p, 1, 0), h=(tap(0),), mode="causal"),), inp(i, q), assume=p)
    r = sv.prove_forall(g)
    assert r.proved and r.hypotheses == "a placement with P(i, q) at every cell", r
    assert str(r).startswith("g: proved for all N ∈ [1, 8], given a placement with P(i, q) at every cell ("), r
    both = Gadget("g", (Param("N", 1, 8),), N, 1, g.layers, inp(i, q), entry=lt(i, 5), assume=p)
    assert sv.prove_forall(both).hypotheses == "input nonzero only where i < 5 and a placement with P(i, q) at every cell"


# ---- the seal binds the statement ----------------------------------------------------------------------
def test_a_relabelled_forall_result_is_not_sealed() -> None:
    """A ``ForallResult``'s seal bound its class, verdict and method only: the proof of ``N ∈ [1, 4]``
    with its ``ranges`` (or gadget name) rewritten to ``N ∈ [1, 2^40]`` still passed ``is_sealed`` and
    ``Instance.from_report`` put it in a table as proved. The statement (gadget, ranges, hypotheses) and
    a refutation's counterexample (parameters, cell, detail) are now bound into the seal."""
    g = Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, inp(i, q))
    r = sv.prove_forall(g)
    assert is_sealed(r) and Instance.from_report("∀ g: N ∈ [1, 4]", r).verdict is sv.Verdict.PROVED
    for name, value in (("ranges", "N ∈ [1, 2^40]"), ("gadget", "other"), ("hypotheses", "")):
        forged = copy.copy(r)
        object.__setattr__(forged, name, value if value != getattr(r, name) else "x")
        assert not is_sealed(forged), name
        with pytest.raises(ProverError, match=r"ForallResult \(proved\) was not made by its prover"):
            Instance.from_report("∀ g: N ∈ [1, 2^40]", forged)
    bad = sv.prove_forall(Gadget("g", (Param("N", 1, 4),), N, 1, _COPY, 2 * inp(i, q)))
    assert bad.verdict is sv.Verdict.REFUTED and is_sealed(bad)
    bad.params["N"] = 3  # the mapping is mutable: the counterexample a table would show changed
    assert not is_sealed(bad)


# ---- assume's definedness, both encodings ----------------------------------------------------------------
@pytest.mark.parametrize("linear", [True, False])
def test_an_assume_undefined_where_its_predicate_is_false_is_refused_by_both_encodings(linear: bool) -> None:
    """``assume = P ∨ N < i − 1``: at ``i = 0`` with ``P`` false, ``i − 1`` is undefined, and ``instantiate``
    (which evaluates ``assume`` at every cell) raises there. Its definedness was checked with ``assume``
    itself as a premise: the integer encoding read ``N < −1`` as false, so the premise forced ``P`` and the
    gadget was proved; the bit-vector encoding (``i ^ 0`` leaves the linear fragment) wrapped ``i − 1`` and
    refused it. Both now refuse it."""
    p = pred("P", i, q)
    row = i if linear else i ^ 0
    g = Gadget("g", (Param("N", 1, 8),), N, 1, _COPY, inp(row, q), assume=p | lt(N, i - 1))
    with pytest.raises(ParametricError, match=r"undefined or out of range at \{'N': \d+, 'i': 0, 'q': 0\}: assume \(P\(i, q\) or N < \(i - 1\)\)"):
        sv.prove_forall(g)
    with pytest.raises(ParametricError, match=r"i - 1"):
        instantiate(g, {"N": 2}, placement={"P": set()})
