"""Coverage of rare paths of ``symverify/kernel/provers/forall.py`` (the ∀-prover).

Each test names the function it is for. Verdicts are checked independently: a ``proved`` identity
gadget against instantiation and exact evaluation at small sizes with every placement of its
predicates, a ``refuted`` one by evaluating its counterexample's instance exactly.
"""

from __future__ import annotations

import itertools

import pytest

from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric.concrete import cell_value, spec_at
from symverify.kernel.parametric.expr import Lit, ParametricError, inp, lt, pred, predicates, var, where
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap
from symverify.kernel.provers import forall

pytest.importorskip("z3")

i, q, N, K = var("i"), var("q"), var("N"), var("K")
_CYCLIC_COPY = (PLayer(b1=1, h=(tap(0),), mode="cyclic"),)


def _u(r: int, c: int) -> object:
    return sym(f"u{r}_{c}")


def test_refuses_what_is_not_a_gadget() -> None:
    """forall.py ``prove_forall``'s first check: a non-Gadget argument is a ParametricError naming its type."""
    with pytest.raises(ParametricError, match="expected a parametric Gadget, found str"):
        forall.prove_forall("shift_down")  # type: ignore[arg-type]


def test_constant_index_undefined_is_refused() -> None:
    """forall.py ``_const_value``: ``1 − 2`` has no variables but no value (subtraction below 0), so
    it is not a constant shift: the expression is not linear, and the definedness check
    (bit-vectors) refuses the gadget where it is read. A ``_const_value`` that let the error escape
    would crash with another message; one that returned a number would encode a shift."""
    assert forall._const_value(Lit(1) - Lit(2)) is None
    assert forall._const_value(Lit(5) - Lit(2)) == 3
    g = Gadget("g", (Param("N", 1, 1 << 20), Param("d", 1, 8)), N, var("d"), (PLayer(b1=1, h=(tap(0),)),),
               inp(i >> (Lit(1) - Lit(2)), q))
    with pytest.raises(ParametricError, match="undefined or out of range"):
        forall.prove_forall(g)


def test_narrow_width_guess_with_rows_undefined_at_the_top() -> None:
    """forall.py ``_narrow_widths``: the rows ``(N·(4 − K)) // (4 − K)`` are undefined at the top of
    the ranges (``K = 4``), which ``where`` excludes; the width guess falls back to the bounds and
    the identity is proved with bit-vectors (checked at every ``N ≤ 4``, ``K < 4``)."""
    g = Gadget("g", (Param("N", 1, 16), Param("K", 0, 4)), (N * (4 - K)) // (4 - K), 1, _CYCLIC_COPY, inp(i, q),
               where=lt(K, 4))
    assert forall._narrow_widths(g, {"N": (1, 16), "K": (0, 4)}) == [8, forall.NARROW_WIDTH]
    res = forall.prove_forall(g)
    assert res.verdict == "proved" and res.stats["encoding"].startswith("bv")
    for n, k in itertools.product(range(1, 5), range(4)):
        for r in range(n):
            assert cell_value(g, {"N": n, "K": k}, r, 0, _u) == spec_at(g, {"N": n, "K": k}, r, 0, _u) == _u(r, 0)


@pytest.mark.parametrize("rows", [N - K, N * K])
def test_state_size_undefined_or_zero_is_refused(rows) -> None:
    """forall.py ``prove_forall``: ``N − K`` is undefined where ``K > N`` and ``N·K`` is 0 at
    ``K = 0``; every encoding but the last moves on to the next, and the last refuses with the
    witness."""
    g = Gadget("g", (Param("N", 1, 16), Param("K", 0, 4)), rows, 1, _CYCLIC_COPY, inp(i, q))
    with pytest.raises(ParametricError, match=r"its state size .* is undefined or 0 at \{'N': \d+, 'K': \d+\}"):
        forall.prove_forall(g)


def test_assumptions_that_no_placement_satisfies_are_refused() -> None:
    """forall.py ``prove_forall``: ``assume = P(i, q) ∧ ¬P(i, q)`` holds for no placement: refused,
    since every statement under it would be vacuously proved."""
    g = Gadget("g", (Param("N", 1, 4),), N, 1, _CYCLIC_COPY, inp(i, q), care=pred("P", i, q),
               assume=pred("P", i, q) & ~pred("P", i, q))
    with pytest.raises(ParametricError, match="hold for no placement"):
        forall.prove_forall(g)


def _one_arg(spec):
    return Gadget("g", (Param("N", 1, 1 << 20),), N, 1,
                  (PLayer(b1=where(pred("S", i), 1), h=(tap(0),), mode="cyclic"),), spec,
                  care=pred("R", i), assume=pred("R", i) | ~pred("S", i))


def test_one_argument_predicates_are_not_cells() -> None:
    """forall.py ``_assumptions``: predicates of one argument (``S(i)`` in a term's guard, ``R(i)``
    in ``care``) name no cell, so ``assume`` is not instantiated at them. The gadget keeps ``u``
    where ``S`` holds and zeroes it elsewhere; ``assume`` makes every care row an ``S`` row, so
    ``spec = S ? u : 0`` is proved and ``spec = u`` is refuted. Oracle: every placement of ``R`` and
    ``S`` at ``N ≤ 3``, evaluated exactly."""
    good = _one_arg(where(pred("S", i), inp(i, q)))
    assert forall.prove_forall(good).verdict == "proved"
    for n in range(1, 4):
        for rs, ss in itertools.product(itertools.product((False, True), repeat=n), repeat=2):
            if not all(r or not s for r, s in zip(rs, ss)):
                continue  # assume fails somewhere: not an allowed placement
            with predicates({"R": lambda r, rs=rs: rs[r], "S": lambda r, ss=ss: ss[r]}):
                for r in range(n):
                    if rs[r]:
                        assert cell_value(good, {"N": n}, r, 0, _u) == spec_at(good, {"N": n}, r, 0, _u)
    bad = _one_arg(inp(i, q))
    res = forall.prove_forall(bad)
    assert res.verdict == "refuted" and res.cell is not None
    differs, _ = forall._recheck(bad, dict(res.params), *res.cell, {"R": lambda r: True, "S": lambda r: False})
    assert differs is True


def _no_two_adjacent(n_hi: int) -> Gadget:
    """``care = P(i, q)``, ``assume``: no two cyclically adjacent rows both hold ``P``."""
    return Gadget("g", (Param("N", 1, n_hi),), N, 1, _CYCLIC_COPY, 2 * inp(i, q), care=pred("P", i, q),
                  assume=~(pred("P", i, q) & pred("P", (i + 1) % N, q)))


def test_recheck_refuses_a_placement_that_breaks_assume() -> None:
    """forall.py ``_recheck``: z3's placement ``P`` true everywhere violates ``assume`` at
    ``N = 2``: the witness is not confirmed (None), never checked on an instance the statement is
    not about. The allowed placement confirms it."""
    g = _no_two_adjacent(4)
    assert forall._recheck(g, {"N": 2}, 0, 0, {"P": lambda r, c: True}) == (
        None, "the witness's placement does not satisfy the assumptions at every cell")
    assert forall._recheck(g, {"N": 2}, 0, 0, {"P": lambda r, c: r == 0})[0] is True


def test_repaired_placement_drops_exactly_the_bad_cells() -> None:
    """forall.py ``_repaired``: the cells where ``assume`` fails are made False, the others keep
    their value; no bad cell (or an instance above RECHECK_CELLS) gives None."""
    g = _no_two_adjacent(1 << 20)
    every = {"P": lambda r, c: True}
    fixed = forall._repaired(g, {"N": 3}, every)
    assert fixed is not None
    assert [fixed["P"](r, 0) for r in range(3)] == [False, False, False]  # each row has a P neighbour
    some = {"P": lambda r, c: r in (0, 1)}  # assume fails at row 0 only (P(0) ∧ P(1)): only it is dropped
    fixed = forall._repaired(g, {"N": 4}, some)
    assert fixed is not None and [fixed["P"](r, 0) for r in range(4)] == [False, True, False, False]
    assert forall._repaired(g, {"N": 4}, {"P": lambda r, c: r == 0}) is None
    assert forall._repaired(g, {"N": forall.RECHECK_CELLS + 1}, every) is None


def test_pred_points_skip_undefined_reads() -> None:
    """forall.py ``_pred_points``: a predicate whose index is undefined at the witness (``i − 5`` at
    ``i = 0``) is not read, and a condition undefined there is not evaluated further (the concrete
    interpretation raises; the definedness check keeps witnesses away from such points)."""
    seen = forall._pred_points([pred("P", i - 5, q)], [], [], {"i": 0, "q": 0}, ["P"], lambda name, idx: True)
    assert seen == {}
    undefined = lt(i - 5, 3)
    seen = forall._pred_points([undefined & pred("P", i, q)], [], [], {"i": 0, "q": 0}, ["P"], lambda name, idx: True)
    assert seen == {}
    seen = forall._pred_points([undefined | pred("P", i, q), pred("P", i, q)], [], [], {"i": 0, "q": 0}, ["P"], lambda name, idx: True)
    assert seen == {"P": {(0, 0)}}
