"""Coverage of ``symverify/kernel/provers/forall.py``'s confirmation of a z3 witness (the
``refuted`` closure of ``prove_forall``): the repaired placement taken when z3's model of a free
predicate breaks ``assume`` at a cell no query constrained, an unconfirmed witness reported as
``unknown``, and a witness the exact re-check contradicts raised as ``ProverError``. Whether z3
leaves a predicate free at such a cell depends on its random seed (``test_forall_moves`` sweeps
seeds), so here the model's predicate is made true at every cell it leaves free: the same
situation, every time. The mutant is the gather with a wrong tap (refuted, re-checked exactly).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from symverify.errors import ProverError
from symverify.kernel.parametric.expr import lt, var
from symverify.kernel.parametric.gadget import Gadget, tap
from symverify.kernel.provers import forall
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import library as lib

i, q = var("i"), var("q")
n, tw = var("n"), var("tw")
SIZES = {"N": (1 << 10, 1 << 11), "d": (3, 7)}


def _mutant() -> Gadget:
    lo = lt(q, tw)
    g = lib.gather()
    layers = list(g.layers)
    layers[0] = dataclasses.replace(layers[0], h=(tap(0, 1, lo), tap(n + 1, 1, ~lo)))
    return dataclasses.replace(g, name="gather_mutant", layers=tuple(layers))


def test_a_placement_true_at_every_free_cell_is_repaired_and_the_refutation_confirmed(monkeypatch) -> None:
    """forall.py ``differs is None and _repaired(...)`` in ``prove_forall``'s inner ``refuted``: the
    first re-check refuses the placement (``IN`` true at rows ≥ n breaks
    ``(not IN(i, q) or i < n)``), the repaired one confirms the difference, and the verdict is
    ``refuted`` at the witness. Without the repair (or taking the first re-check's None) the verdict
    would be ``unknown``."""
    real_fn, real_recheck = forall._pred_fn, forall._recheck
    results: list[bool | None] = []

    def free_true(z3: Any, m: Any, enc: Any, fn: Any, points: set[tuple[int, ...]]) -> Any:
        inner = real_fn(z3, m, enc, fn, points)
        return lambda *idx: True if idx not in points else inner(*idx)

    def spy(*a: Any, **k: Any) -> tuple[bool | None, str]:
        out = real_recheck(*a, **k)
        results.append(out[0])
        return out

    monkeypatch.setattr(forall, "_pred_fn", free_true)
    monkeypatch.setattr(forall, "_recheck", spy)
    res = prove_forall(_mutant(), ranges=SIZES)
    assert res.verdict == "refuted", str(res)
    assert results == [None, True]


def test_an_unconfirmed_witness_is_unknown(monkeypatch) -> None:
    """forall.py ``prove_forall`` (its inner ``refuted``): when neither re-check confirms, the
    verdict is ``unknown`` with the reason (never ``refuted`` on z3's word alone)."""
    monkeypatch.setattr(forall, "_recheck", lambda *a, **k: (None, "the stand-in cannot tell"))
    res = prove_forall(_mutant(), ranges=SIZES)
    assert res.verdict == "unknown"
    assert "could not be confirmed: the stand-in cannot tell" in res.detail


def test_a_witness_the_exact_re_check_contradicts_is_a_prover_error(monkeypatch) -> None:
    """forall.py ``prove_forall`` (its inner ``refuted``): z3's counterexample agreeing with the
    spec on exact re-check means the encoding is wrong: ProverError, never a verdict."""
    monkeypatch.setattr(forall, "_recheck", lambda *a, **k: (False, "both sides are in[0][0]"))
    with pytest.raises(ProverError, match="failed its exact re-check: both sides are in"):
        prove_forall(_mutant(), ranges=SIZES)
