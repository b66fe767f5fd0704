"""Large and deep parametric gadgets: long sums and condition chains stay flat, nesting beyond
``MAX_NESTING`` is refused when the gadget is built, and the ∀-prover's narrow encodings hold every
atom kind's tag (a gadget with more than 255 weight families is decided, not refused).

Before: a sum of 300 families built with ``+`` was a chain 300 deep, and the prover died with
``RecursionError``; with the sum flat, it raised ``ProverError`` ("a constant does not fit the
8-bit encoding"); an index expression nested a few hundred deep crashed in whichever walk
recursed first.
"""

from __future__ import annotations

import pytest

z3 = pytest.importorskip("z3")

from symverify.kernel.parametric.expr import (  # noqa: E402
    MAX_NESTING,
    BoolOp,
    ParametricError,
    VSum,
    bit,
    fam,
    inp,
    lt,
    nesting,
    var,
    where,
)
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap  # noqa: E402
from symverify.kernel.provers.forall import prove_forall  # noqa: E402

i, q = var("i"), var("q")


def _families(k: int, *, drop: int | None = None) -> Gadget:
    """One layer ``y = (Σ_k f_k)·u`` against the spec ``u·Σ_k f_k`` (the spec leaves out ``f_drop``
    when given: a false claim). The bit test keeps it out of the linear fragment (bit-vectors)."""
    names = [f"f{n}" for n in range(k)]
    total = sum((fam(n) for n in names[1:]), fam(names[0]))
    spec_sum = sum((fam(n) for j, n in enumerate(names) if j != drop), fam(names[0]) * 0)
    spec = where(bit(i, 0) | ~bit(i, 0), inp(i, q) * spec_sum)
    return Gadget("many", (Param("N", 1, 8),), var("N"), 1, (PLayer(b1=total, h=(tap(0),)),), spec,
                  families={n: () for n in names})


def test_a_sum_built_term_by_term_is_one_flat_sum() -> None:
    total = sum((fam(f"f{n}") for n in range(1, 500)), fam("f0"))
    assert isinstance(total, VSum) and len(total.items) == 500
    assert [x.name for x in total.items] == [f"f{n}" for n in range(500)]  # order kept
    assert nesting(total) == 2  # the sum, then its members
    assert nesting(fam("a") - fam("b")) == 3  # a − b is a + (−1)·b


def test_condition_chains_are_flat_and_keep_their_order() -> None:
    c = lt(i, 1)
    for k in range(2, 300):
        c = c & lt(i, k)
    assert isinstance(c, BoolOp) and c.op == "and" and len(c.items) == 299
    assert str(c.items[0]) == "i < 1" and str(c.items[-1]) == "i < 299"
    mixed = (lt(i, 1) & lt(q, 1)) | lt(i, 2)  # different operations still nest
    assert mixed.op == "or" and isinstance(mixed.items[0], BoolOp) and mixed.items[0].op == "and"
    assert (lt(i, 1) & lt(q, 1)).eval({"i": 0, "q": 0}) and not c.eval({"i": 1, "q": 0})


def test_more_than_255_families_are_decided() -> None:
    """300 atom kinds need 9-bit tags: the narrow encoding is widened to hold them."""
    res = prove_forall(_families(300))
    assert res.verdict == "proved", res
    assert res.stats["encoding"] == "bv9"


def test_a_false_claim_with_300_families_is_refuted() -> None:
    res = prove_forall(_families(300, drop=257))  # a family whose tag does not fit in 8 bits
    assert res.verdict == "refuted", res
    assert res.cell is not None and 0 <= res.cell[0] < res.params["N"]


def _deep(depth: int) -> object:
    e = var("N")
    for _ in range(depth):
        e = e + 1
    for _ in range(depth):
        e = e - 1
    return e


def test_nesting_beyond_the_limit_is_refused_when_built() -> None:
    spec = where(bit(i, 0) | ~bit(i, 0), inp(i, q))
    rows = _deep(MAX_NESTING // 2)  # 2·(MAX/2) binary nodes over the variable: MAX + 1 deep
    assert nesting(rows) == MAX_NESTING + 1
    with pytest.raises(ParametricError, match=rf"gadget deep rows: expressions nested {MAX_NESTING + 1} deep, more than MAX_NESTING = {MAX_NESTING}"):
        Gadget("deep", (Param("N", 1, 8),), rows, 1, (PLayer(b1=1, h=(tap(0),)),), spec)
    with pytest.raises(ParametricError, match="gadget deep spec: expressions nested 2002 deep"):  # VIf, VProd per level, Inp, its Var
        deep_spec = inp(i, q)
        for _ in range(1000):
            deep_spec = where(lt(i, 1 << 20), deep_spec * 1)
        Gadget("deep", (Param("N", 1, 8),), var("N"), 1, (PLayer(b1=1, h=(tap(0),)),), deep_spec)


def _call_at_depth(frames: int, fn: object) -> object:
    return fn() if frames == 0 else _call_at_depth(frames - 1, fn)  # type: ignore[operator]


@pytest.mark.parametrize("false", [False, True])
def test_the_deepest_gadget_allowed_is_decided_from_a_deep_stack(false: bool) -> None:
    """At the limit (rows nested ``MAX_NESTING`` deep), called 300 frames down: proved, or a false
    variant refuted with its re-checked counterexample, never a ``RecursionError``."""
    rows = _deep((MAX_NESTING - 2) // 2) + 0  # MAX − 1 binary nodes over the variable: MAX deep
    assert nesting(rows) == MAX_NESTING
    out = inp(i, q) * (2 if false else 1)
    spec = where(bit(i, 0) | ~bit(i, 0), out)
    g = Gadget("deep", (Param("N", 1, 8),), rows, 1, (PLayer(b1=1, h=(tap(0),)),), spec)
    res = _call_at_depth(300, lambda: prove_forall(g))
    assert res.verdict == ("refuted" if false else "proved"), res


def test_the_nesting_walk_visits_a_shared_subexpression_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``x = ite(x < 1, x, x)`` ten times is 31 nodes in memory and ``3^10`` uses: the depth is read
    once per node (the fields of each expression asked once), and is the depth of the tree. Before,
    the walk went once per use (59 049 visits here; the terms of the H.16 sequence axis, whose rows
    are shared by every term of a layer, cost it about 0.1 s per layer)."""
    import dataclasses

    from symverify.kernel.parametric.expr import ite

    x = i
    for _ in range(10):
        x = ite(lt(x, 1), x, x)
    asked: list[object] = []
    fields = dataclasses.fields

    def counted(y: object) -> tuple[dataclasses.Field[object], ...]:
        asked.append(y)
        return fields(y)  # type: ignore[arg-type]

    monkeypatch.setattr(dataclasses, "fields", counted)
    assert nesting(x) == 21  # ten Ite over ten Cmp over the variable
    assert len(asked) == 2 * 31  # each node once (its fields read on the way down and on the way up)
    asked.clear()
    assert nesting((x, [x, (x,)], 5, "text")) == 21  # containers add no depth
    assert len(asked) == 2 * 31
