"""Attacks on the ∀-prover, round 9 (docs/forall.md §3): budgets at the edges of what z3 and a float hold,
and claims cross-checked against their instances at the edges of the ranges."""

from __future__ import annotations

from typing import Any

import pytest

z3 = pytest.importorskip("z3")

from symverify.kernel.parametric.expr import ParametricError, inp, lt, var  # noqa: E402
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap  # noqa: E402
from symverify.kernel.provers.forall import prove_forall  # noqa: E402

i, q, N, d, s = (var(x) for x in "iqNds")


def _shift(lag: object) -> Gadget:
    return Gadget("shift", (Param("N", 1, 8), Param("d", 1, 3), Param("s", 0, 7)), N, d,
                  (PLayer(b1=1, h=(tap(lag),), mode="cyclic"),), inp((i + N - s) % N, q), where=lt(s, N))


def test_a_budget_past_z3s_32_bit_timeout_is_not_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """z3 reads a timeout as an unsigned 32-bit number of milliseconds: a budget of ``(2^32 + 2)`` ms
    (about 49.7 days) gave each query 2 ms. Every timeout handed to z3 is now at most ``2^32 − 1`` ms."""
    seen: list[int] = []
    set_, try_for = z3.Solver.set, z3.TryFor

    def spy_set(self: Any, *args: Any, **kw: Any) -> Any:
        if args and args[0] == "timeout":
            seen.append(args[1])
        return set_(self, *args, **kw)

    def spy_try_for(t: Any, ms: int, ctx: Any = None) -> Any:
        seen.append(ms)
        return try_for(t, ms, ctx)

    monkeypatch.setattr(z3.Solver, "set", spy_set)
    monkeypatch.setattr(z3, "TryFor", spy_try_for)
    r = prove_forall(_shift(s), timeout=(2**32 + 10**6) / 1000)
    assert r.verdict == "proved", str(r)
    assert seen and max(seen) <= 2**32 - 1 and min(seen) >= 1, seen


@pytest.mark.parametrize("timeout", [1e308, 1e9, 2.0**1000])
def test_a_large_finite_budget_is_a_budget(timeout: float) -> None:
    """``timeout=1e308`` raised ``OverflowError`` (its milliseconds are no ``int``)."""
    assert prove_forall(_shift(s), timeout=timeout).verdict == "proved"
    assert prove_forall(_shift((s + 1) % N), timeout=timeout).verdict == "refuted"


@pytest.mark.parametrize("timeout", [10**400, 2**1024])
def test_a_budget_past_the_largest_float_is_refused(timeout: int) -> None:
    """An int past the largest float raised ``OverflowError`` from the deadline's sum."""
    with pytest.raises(ParametricError, match=r"prove_forall timeout: expected a positive number of seconds below 2\^1024 \(a float\), found <\d+-digit integer"):
        prove_forall(_shift(s), timeout=timeout)
    with pytest.raises(ParametricError, match=r"prove_forall timeout_s: expected a positive number of seconds below 2\^1024"):
        prove_forall(_shift(s), timeout_s=timeout)


def test_a_tiny_budget_is_unknown() -> None:
    r = prove_forall(_shift((s + 1) % N), timeout=1e-9)
    assert r.verdict == "unknown" and "time budget ran out" in r.detail, str(r)


TOP = 2**64


def test_a_cyclic_lag_near_the_top_of_the_range_is_decided() -> None:
    """A cyclic tap at lag ``s`` read row ``(i + N') − s`` in the symbolic interpretation where
    ``i < s``: past ``2^64`` for ``N'`` near it, so a true gadget was refused as undefined although
    every row the instance reads is inside the state. It is written ``i + (N' − s)`` (below ``N'``):
    proved, and the concrete interpretation agrees at the top of the range; a spec wrong only at the
    last row is refuted there."""
    from symverify.kernel.ir.scalar import sym
    from symverify.kernel.parametric.concrete import cell_value, spec_at
    from symverify.kernel.parametric.expr import eq, ite, where

    ranges = (Param("N", 1, TOP - 1), Param("s", 0, TOP - 2))
    layer = PLayer(b1=1, h=(tap(s),), mode="cyclic")

    def g(spec: object) -> Gadget:
        return Gadget("top", ranges, N, 1, (layer,), spec, where=lt(s, N))

    right = inp(ite(lt(i, s), i + (N - s), i - s), q)
    assert prove_forall(g(right)).verdict == "proved"
    u = lambda r, c: sym(f"u{r}")  # noqa: E731
    for env, row in (({"N": TOP - 1, "s": TOP - 2}, TOP - 3), ({"N": TOP - 1, "s": TOP - 2}, 0), ({"N": TOP - 1, "s": 1}, 0)):
        want = sym(f"u{(row - env['s']) % env['N']}")
        assert cell_value(g(right), env, row, 0, u) == want == spec_at(g(right), env, row, 0, u)
    r = prove_forall(g(where(eq(i, TOP - 2), 0, right)))
    assert r.verdict == "refuted" and r.cell == (TOP - 2, 0) and r.params["N"] == TOP - 1, str(r)


def _cyclic_layers(n: int) -> Gadget:
    """``n`` cyclic shifts by one: the row layer ``n`` reads is a tree of about ``3^n`` nodes."""
    return Gadget("many", (Param("N", 2, 5),), N, 1, (PLayer(b1=1, h=(tap(1),), mode="cyclic"),) * n,
                  inp((i + N * n - n) % N, q))


def test_the_expansion_asks_the_budget_inside_a_term(monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget was asked once per 4096 terms only: one term whose rows are substituted through 14
    cyclic layers is millions of nodes, built whole (seconds) after the deadline had passed. With a
    budget that runs out after 20 000 index nodes are built, the expansion now stops within a few
    thousand more (counted, not timed)."""
    from symverify.kernel.parametric import expr
    from symverify.kernel.parametric.symbolic import ExpansionLimitError, expansion_budget, output_terms

    built = 0
    init = expr.Bin.__post_init__

    def counting(self: Any) -> None:
        nonlocal built
        built += 1
        init(self)

    monkeypatch.setattr(expr.Bin, "__post_init__", counting)
    g = _cyclic_layers(14)
    with expansion_budget(lambda: built > 20_000), pytest.raises(ExpansionLimitError, match=r"time budget ran out while expanding"):
        output_terms(g)
    assert built < 30_000, built


def test_the_encoding_asks_the_budget_inside_an_expression() -> None:
    """The encoding asked the budget once per term: a term's index expression of many nodes was
    encoded whole after the deadline. It is asked every 1024 nodes."""
    from symverify.kernel.provers import forall

    parts: list[Any] = [i + k for k in range(2048)]  # a balanced sum of 4095 distinct nodes (no two equal)
    while len(parts) > 1:
        parts = [a + b for a, b in zip(parts[::2], parts[1::2])]
    row = parts[0]
    enc = forall._Enc(z3, ["N", "i", "q"])
    enc.deadline = -1.0  # passed
    with pytest.raises(forall._EncodingTimeoutError, match="the index expressions"):
        enc.ix(row)


def test_a_gadget_without_parameters_states_its_ranges_plainly() -> None:
    """``ranges`` began with ", " (``"proved for all , at the cells where i < 2"``) or was empty."""
    layers = (PLayer(b1=1, h=(tap(1),), mode="cyclic"),)
    r = prove_forall(Gadget("fixed", (), 3, 2, layers, inp((i + 2) % 3, q), care=lt(i, 2)))
    assert r.ranges == "cells of the one instance (no parameters), at the cells where i < 2", r.ranges
    assert str(r).startswith("fixed: proved for all cells of the one instance (no parameters), at the cells where i < 2 (")
    assert prove_forall(Gadget("fixed", (), 3, 2, layers, inp((i + 2) % 3, q))).ranges == "cells of the one instance (no parameters)"
    assert prove_forall(_shift(s)).ranges == "N ∈ [1, 8], d ∈ [1, 3], s ∈ [0, 7], s < N"


def test_a_substitution_past_max_nodes_is_unknown_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The row read through ``k`` cyclic layers is a tree of about ``3^k`` nodes, which every later walk
    (hashing, the encoding, messages) visits whole: past ``MAX_NODES`` nodes in one layer's substitution
    the statement is unknown at once, as past ``MAX_TERMS`` terms (the limit lowered here to keep the
    test small; the library's largest substitution is about 10 000 nodes)."""
    from symverify.kernel.parametric import symbolic
    from symverify.kernel.parametric.symbolic import ExpansionLimitError, output_terms

    monkeypatch.setattr(symbolic, "MAX_NODES", 50_000)
    with pytest.raises(ExpansionLimitError, match=r"index expressions of more than MAX_NODES = 50000 nodes in all"):
        output_terms(_cyclic_layers(12))
    assert len(output_terms(_cyclic_layers(6))) > 0
    r = prove_forall(_cyclic_layers(12))
    assert r.verdict == "unknown" and "more than MAX_NODES = 50000 nodes" in r.detail, str(r)
