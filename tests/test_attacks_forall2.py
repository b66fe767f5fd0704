"""More adversarial inputs to ``prove_forall``: each is
refused with a :class:`ParametricError` saying what was expected and found, refuted, or decided as
an exact argument allows — never a false "proved for all", never a bare Python exception
(docs/forall.md §1, §3)."""

from __future__ import annotations

import pytest
from test_attacks_parametric2 import _COPY, HUGE, N, _g, i, q

import symverify as sv
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    eq,
    fam,
    ge,
    inp,
    instantiate,
    ite,
    lt,
    pred,
    tap,
    var,
    where,
)


# ---- false proofs ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["key_0_0", "key_0_1", "K"])
def test_a_parameter_named_like_the_provers_key_is_not_the_key(name: str) -> None:
    """The key's slots were z3 constants named ``key_<slot>_<k>``: a parameter of that name was the
    same constant, so ``key_0_0 ∈ [7, 7]`` pinned the key's first tag to 7 (no atom's tag) and the
    wrong claim ``output = 2·input`` was "proved for all"."""
    g = _g(inp(i, q) * 2, params=(Param("N", 1, 8), Param(name, 7, 7)))
    r = sv.prove_forall(g, timeout=30)
    assert r.verdict is sv.Verdict.REFUTED, r
    assert sv.prove_forall(_g(inp(i, q), params=(Param("N", 1, 8), Param(name, 7, 7))), timeout=30).proved


# ---- undefined expressions whose value is 0 ------------------------------------------------------------
@pytest.mark.parametrize(
    "g, cell_var",
    [
        (_g(inp(i, q) + where(lt(i - 1, 3), 0)), "i"),
        (_g(inp(i, q) + inp(i - 1, q) * 0), "i"),
        (_g(inp(i, q), layers=(PLayer(b1=1 + where(lt(i - 1, 3), 0), h=(tap(0),), mode="cyclic"),)), "i"),
        (_g(inp(i, q), layers=(PLayer(b1=1, h=(tap(0),), b2=fam("B", i - 1) * 0, mode="cyclic"),)), "i"),
        (_g(inp(i, q), layers=(PLayer(b1=1, h=(tap(0, value=1 + where(lt(q - 1, 3), 0)),), mode="cyclic"),)), "q"),
    ],
    ids=["spec-where", "spec-read-times-0", "b1-where", "b2-family-times-0", "tap-value-where"],
)
def test_an_undefined_expression_with_value_zero_is_refused(g: Gadget, cell_var: str) -> None:
    """``where(lt(i − 1, 3), 0)`` (or a read of row ``i − 1`` times 0) is undefined at ``i = 0``: the
    concrete interpretation raises there, but its value has no term, so the definedness check never
    saw ``i − 1`` and the gadget was "proved for all" while ``instantiate`` (or ``spec_at``) refused
    every size."""
    with pytest.raises(ParametricError, match=rf"undefined or out of range at .*'{cell_var}': 0.*(\({cell_var} - 1\)|h tap 0)"):
        sv.prove_forall(g, timeout=30)
    if g.spec == inp(i, q):
        with pytest.raises(ParametricError, match=r"subtraction below 0"):
            instantiate(g, {"N": 3})


def test_a_zero_constant_defined_everywhere_is_still_proved() -> None:
    # keeping the zero terms for the definedness check changes nothing else
    g = _g(inp(i, q) + where(lt(i, 3), 0) + inp(i, q) * 0, layers=(PLayer(b1=where(lt(N, 3), 0) + 1, h=(tap(0),), mode="cyclic"),))
    assert sv.prove_forall(g, timeout=30).proved


def test_a_read_outside_entry_is_still_evaluated_and_refused_where_undefined() -> None:
    """The concrete interpretation evaluates an input cell's indices before it asks ``entry``: the
    spec ``inp(i − 1, q)`` read at ``i = 0`` raises in ``spec_at``, but its term's guard (``entry``
    at the cell read) was false there, so the gadget was proved."""
    g = Gadget("g", (Param("N", 1, 8), Param("d", 1, 3)), N, var("d"), _COPY, inp(i - 1, q), entry=lt(q, 1), care=ge(q, 1))
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*'i': 0.*\(i - 1\)"):
        sv.prove_forall(g, timeout=30)


def test_a_product_reads_its_right_factor_only_where_the_left_is_not_zero() -> None:
    # as the concrete interpretation evaluates it: where(0 < i, 1) * inp(i - 1, q) is defined at i = 0
    g = _g(inp(i, q) + where(lt(0, i), 1) * inp(i - 1, q) - where(lt(0, i), inp(i - 1, q)))
    assert sv.prove_forall(g, timeout=30).proved
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*'i': 0.*\(i - 1\)"):
        sv.prove_forall(_g(inp(i, q) + inp(i - 1, q) * where(lt(0, i), 1) - where(lt(0, i), inp(i - 1, q))), timeout=30)


# ---- prove_forall options --------------------------------------------------------------------------------
@pytest.mark.parametrize("rng", ["ab", 5, [1], [("N", 1, 2)], {1, 2}], ids=["str", "int", "list-of-int", "triples", "set"])
def test_ranges_that_are_not_a_mapping_are_refused(rng: object) -> None:
    # dict(rng) raised ValueError or TypeError
    with pytest.raises(ParametricError, match=r"prove_forall ranges: expected a mapping \{name: \(lo, hi\)\}"):
        sv.prove_forall(_g(inp(i, q)), ranges=rng)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: sv.prove_forall(_g(inp(i, q)), ranges=HUGE), r"ranges: expected a mapping \{name: \(lo, hi\)\}, found int <5001-digit"),
        (lambda: sv.prove_forall(_g(inp(i, q)), ranges={"N": (1, HUGE)}), r"N ∈ \[1, <5001-digit integer ≡ 0 mod 10\^9>\] is not inside"),
    ],
)
def test_a_huge_integer_in_the_ranges_is_named_in_the_message(make, match: str) -> None:  # type: ignore[no-untyped-def]
    # the messages formatted it with repr or str: ValueError (the 4300-digit limit of int-to-str)
    with pytest.raises(ParametricError, match=match):
        make()


# ---- predicates outside the layers ------------------------------------------------------------
@pytest.mark.parametrize("field", ["where", "rows"])
def test_a_predicate_in_the_condition_or_the_size_is_decided(field: str) -> None:
    """A predicate only in ``where`` or in ``rows`` was not seen as one: the query went to the
    bit-blasting tactic, which cannot take a free function, and every such gadget was unknown (and
    the re-check evaluated the sizes without the predicates: 'predicate P has no value')."""
    def make(spec: object) -> Gadget:
        if field == "where":
            return _g(spec, where=pred("P", N))
        return Gadget("g", (Param("N", 1, 8),), ite(pred("P", N), N, N + 1), 1, _COPY, spec)  # type: ignore[arg-type]

    assert sv.prove_forall(make(inp(i, q)), timeout=30).proved
    assert sv.prove_forall(make(inp(i, q) * 2), timeout=30).verdict is sv.Verdict.REFUTED


@pytest.mark.parametrize(
    "make",
    [
        lambda: Gadget("g", (Param("N", 2, 8),), N, 1, _COPY, inp(ite(pred("P", i), (i + 1) % N, i), q)),
        lambda: Gadget("g", (Param("N", 2, 8),), ite(pred("P", N), N + 1, N), 1, _COPY, where(lt(i, N), inp(i, q), 0)),
        lambda: Gadget("g", (Param("N", 2, 8),), N, 1, _COPY, inp(i, q) * 2, care=eq(ite(pred("P", i), 1, 0), 1)),
    ],
    ids=["in-a-spec-index", "in-the-rows", "in-care-through-ite"],
)
def test_a_predicate_inside_an_index_expression_is_read_by_the_recheck(make) -> None:  # type: ignore[no-untyped-def]
    """The witness's placement held z3's values only at the predicates read by the conditions, so a
    predicate inside an index expression read False in the re-check: a true counterexample raised
    ProverError ('failed its exact re-check'), ParametricError ('cell (2, 0) outside the 2×1 state')
    or came back unknown."""
    r = sv.prove_forall(make(), timeout=30)
    assert r.verdict is sv.Verdict.REFUTED, r


# ---- edges that are decided correctly (pinned) ---------------------------------------------------------
def test_a_single_size_at_the_top_of_the_width_is_proved_or_refuted_there() -> None:
    # lo = hi = 2^64 − 1: no narrow width, no instance model (the re-check goes cell by cell)
    top = (Param("N", 2**64 - 1, 2**64 - 1),)
    assert sv.prove_forall(_g(inp(i, q), params=top), timeout=30).proved
    r = sv.prove_forall(_g(inp(i, q) * 2, params=top), timeout=30)
    assert r.verdict is sv.Verdict.REFUTED and r.params == {"N": 2**64 - 1}
    with pytest.raises(ParametricError, match="undefined or 0"):
        sv.prove_forall(Gadget("g", top, N + 1, 1, _COPY, inp(i, q)), timeout=30)


@pytest.mark.parametrize("t", [1e300, 2**80])
def test_a_huge_timeout_is_a_plain_bound(t: float) -> None:
    # the milliseconds handed to z3 (far beyond its unsigned range) must not overflow or wrap to 0
    assert sv.prove_forall(_g(inp(i, q)), timeout=t).proved
    assert sv.prove_forall(_g(inp(i, q) * 2), timeout=t).verdict is sv.Verdict.REFUTED


def test_the_definedness_terms_of_a_long_product_stay_linear_in_its_length() -> None:
    # reading a product's right factor under each nonzero term of its left one doubled them per factor
    from symverify.kernel.parametric.symbolic import value_terms

    product = fam("f", 0)
    for k in range(1, 24):
        product = product * fam("f", k)
    assert len(value_terms(product, None, keep_zero=True)) <= 2 * 24


@pytest.mark.parametrize("k, verdict", [(1, "proved"), (2, "refuted")])
def test_a_predicate_a_family_and_parameters_may_share_names(k: int, verdict: str) -> None:
    # predicate V (the z3 function pred_V), family V (an atom tag) and parameters V and pred_V stay four things
    params = (Param("N", 1, 8), Param("V", 0, 3), Param("pred_V", 0, 3))
    g = Gadget("g", params, N, 1, (PLayer(b1=where(pred("V", i, q), fam("V"), 1), h=(tap(0),), mode="cyclic"),),
               where(pred("V", i, q), fam("V"), k) * inp(i, q))
    assert sv.prove_forall(g, timeout=30).verdict == verdict
    (layer,) = instantiate(g, {"N": 2, "V": 1, "pred_V": 2}, families={"V": lambda: 7}, placement={"V": {(0, 0)}})
    assert (layer.b1.get(0, 0), layer.b1.get(1, 0)) == (7, 1)
