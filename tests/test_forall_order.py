"""The order of the ∀-prover's identity queries (:func:`~symverify.kernel.provers.forall.prove_forall`): the
parts of the whole range first — a proof runs no search at small sizes (a proof implies those are
unsat) — and, at the first part that is not unsat, the searches at ``N' ≤ 16, d' ≤ 4`` and
``N', d' ≤ 128`` before that part's own witness, so a refutation's witness is a small instance
whenever one exists."""

from __future__ import annotations

import dataclasses
from typing import Any

from cases import replace_expr

from symverify.kernel.parametric.concrete import sizes
from symverify.kernel.parametric.expr import bit, var
from symverify.kernel.parametric.gadget import Gadget
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import library as lib

q = var("q")


def _mutate(g: Gadget, k: int, **fields: Any) -> Gadget:
    layers = list(g.layers)
    layers[k] = dataclasses.replace(layers[k], **fields)
    return dataclasses.replace(g, name=g.name + "_mutant", layers=tuple(layers))


def test_proof_runs_only_the_whole_range_parts() -> None:
    res = prove_forall(lib.factor_channel())
    assert res.verdict == "proved", str(res)
    phases = set(res.stats["timings"])
    assert "identity1" not in phases and "identity2" not in phases
    assert any(k.startswith("identity3") for k in phases)


def test_refutation_takes_the_small_witness_first() -> None:
    """A wrong bit test in ``factor_channel`` shows at every size: the witness is the one of the
    search at ``N' ≤ 16, d' ≤ 4`` (run after the whole range was found not unsat)."""
    g = lib.factor_channel()
    e = var("e")
    mutant = _mutate(g, 1, b2=replace_expr(g.layers[1].b2, bit(q, e), bit(q, e + 1)))
    res = prove_forall(mutant)
    assert res.verdict == "refuted", str(res)
    assert "identity1" in res.stats["timings"]
    _, nn, dd = sizes(mutant, dict(res.params))
    assert nn <= 16 and dd <= 4, (res.params, nn, dd)


def test_refutation_at_a_huge_size_after_the_small_searches() -> None:
    """Restricted to ``R ≥ 2^9`` no instance has ``N' ≤ 128``: both small searches run, are unsat, and
    the witness is the whole-range part's own (re-checked cell by cell)."""
    g = lib.factor_channel()
    e = var("e")
    mutant = _mutate(g, 1, b2=replace_expr(g.layers[1].b2, bit(q, e), bit(q, e + 1)))
    res = prove_forall(mutant, ranges={"r": (9, 9), "j": (2, 2), "d": (4, 7), "e": (0, 0)})
    assert res.verdict == "refuted" and res.params["r"] == 9, str(res)
    assert {"identity1", "identity2"} <= set(res.stats["timings"])


def test_key_order_keeps_the_permutations_of_non_decreasing_tags() -> None:
    """A key's slots are in non-decreasing tag order, so a term is matched only through the
    permutations of its atoms with non-decreasing tags (the unit atom's tag is 0); reversing this
    order makes every mixed term unmatchable, and the mutation tests of tests/test_forall*.py
    are then proved instead of refuted."""
    from symverify.kernel.provers.forall import _sorted_perms

    assert list(_sorted_perms([0, 2])) == [(0, 1)] and list(_sorted_perms([2, 0])) == [(1, 0)]
    assert list(_sorted_perms([2, 2])) == [(0, 1), (1, 0)] and list(_sorted_perms([])) == [()]
    assert list(_sorted_perms([1, 3, 2])) == [(0, 2, 1)]  # the unit atom (tag 0) and equal tags
    assert list(_sorted_perms([1, 0, 1])) == [(1, 0, 2), (1, 2, 0)]
