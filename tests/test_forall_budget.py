"""The ∀-prover's budget covers building the statement, not only the z3 queries.

Before: the identity's terms were matched through every one of ``deg!`` permutations of their
atoms (filtered afterwards), and the definedness and identity terms were built for z3 without
looking at the clock: a product of 9 families took 32 s under ``timeout=5``, of 11 members of one
family hours; a product of 20 two-term sums expanded to 2^20 terms before anything was checked.
"""

from __future__ import annotations

import itertools

import pytest

z3 = pytest.importorskip("z3")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symverify.kernel.parametric.expr import Value, bit, fam, inp, var, where  # noqa: E402
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap  # noqa: E402
from symverify.kernel.parametric.symbolic import MAX_TERMS, ExpansionLimitError, value_terms  # noqa: E402
from symverify.kernel.provers.forall import _sorted_perms, prove_forall  # noqa: E402

i, q = var("i"), var("q")


def _gadget(b1: Value, spec_factor: Value, families: dict[str, tuple[int, ...]]) -> Gadget:
    """``y = b1 · u`` against ``u · spec_factor``; the bit test keeps it in bit-vectors."""
    spec = where(bit(i, 0) | ~bit(i, 0), inp(i, q) * spec_factor)
    return Gadget("budget", (Param("N", 1, 8),), var("N"), 1, (PLayer(b1=b1, h=(tap(0),)),), spec, families=families)


def _product(factors: list[Value]) -> Value:
    out = factors[0]
    for f in factors[1:]:
        out = out * f
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=6))
def test_sorted_perms_are_exactly_the_tag_sorted_permutations_in_order(tags: list[int]) -> None:
    want = [p for p in itertools.permutations(range(len(tags))) if all(tags[a] <= tags[b] for a, b in itertools.pairwise(p))]
    assert list(_sorted_perms(tags)) == want


def test_a_product_of_ten_families_is_decided_within_its_budget() -> None:
    """Ten distinct families: one ordering per term (10! before)."""
    fs = [fam(f"f{k}") for k in range(10)]
    fams: dict[str, tuple[int, ...]] = {f"f{k}": () for k in range(10)}
    assert prove_forall(_gadget(_product(fs), _product(fs[::-1]), fams), timeout=60).verdict == "proved"
    res = prove_forall(_gadget(_product(fs), _product(fs[:-1]) * 2, fams), timeout=60)  # a false claim
    assert res.verdict == "refuted", res


def test_a_high_degree_in_one_family_ends_at_the_timeout() -> None:
    """Twelve members of one family in one term: 12! orderings; the budget stops the encoding."""
    fs = [fam("f", k) for k in range(11)]
    res = prove_forall(_gadget(_product(fs), _product(fs), {"f": (11,)}), timeout=1)
    assert res.verdict == "unknown"
    assert "timeout while encoding the statement for z3" in res.detail


def test_an_expansion_beyond_max_terms_is_unknown_not_a_crash() -> None:
    factors = [fam("a", k) + fam("b", k) for k in range(20)]  # 2^20 terms
    with pytest.raises(ExpansionLimitError, match=rf"expands to more than MAX_TERMS = {MAX_TERMS} terms"):
        value_terms(_product(factors), None)
    res = prove_forall(_gadget(_product(factors), _product(factors), {"a": (20,), "b": (20,)}), timeout=60)
    assert res.verdict == "unknown"
    assert f"more than MAX_TERMS = {MAX_TERMS} terms" in res.detail
    assert len(value_terms(_product(factors[:16]), None)) == 1 << 16  # below the limit: expanded


def test_a_failed_tactic_on_a_query_with_predicates_falls_back_to_the_default_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries with free predicates are ackermannized and bit-blasted; where the pipeline fails
    (here made to: z3's ``fail`` tactic) rather than runs out of time, the query goes to z3's
    default solver, so the gadget is still proved. A pure bit-vector query has no such fallback."""
    from symverify.kernel.provers import forall
    from symverify.parametric import library

    channel = library.factor_channel()  # bit-vector encoded (not linear), predicates SUP and LIVE
    small = {"r": (0, 3), "j": (0, 3), "d": (1, 16), "e": (0, 3)}
    assert channel.predicate_names and prove_forall(channel, ranges=small).stats["encoding"].startswith("bv")
    monkeypatch.setattr(forall, "BV_TACTIC", ("simplify", "ackermannize_bv", "fail"))
    assert prove_forall(channel, ranges=small).verdict == "proved"
    pure = library.butterfly_channel()
    assert not pure.predicate_names
    res = prove_forall(pure, timeout_s=20)
    assert res.verdict == "unknown" and "fail tactic" in res.detail, str(res)
