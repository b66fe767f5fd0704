"""Differential soundness test of the ∀-prover, second part: what ``test_forall_differential`` leaves out.

The random gadgets, the oracle and the judge are those of :mod:`test_forall_differential` (every
instance of small ranges evaluated exactly by an interpreter written in the test; ``proved`` must mean
every instance agrees, a refutation's witness must disagree there and re-check by the package's exact
evaluation, a refusal must point at an undefined or out-of-range evaluation). Drawn here besides:

* index expressions outside the linear fragment: products of two expressions (``N·s``, ``i·q``),
  divisions, remainders and shifts by expressions (the integer encoding refuses them, the bit-vector
  one decides them);
* free predicates of other arities beside the cell predicate ``P``: ``Q(r)`` on rows and ``Z()`` with
  no argument, in conditions and inside index expressions (``ite(Q(i), …)``); the oracle tries every
  placement of the three;
* ``prove_forall(g, ranges=…)``: a narrowed range must decide exactly the gadget whose parameters are
  declared with that range (the same oracle, on the narrowed instances).

``SYMVERIFY_DIFF_EXAMPLES=n`` runs ``n`` gadgets per test with a fresh seed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("z3")

import test_forall_differential as base
from hypothesis import assume, given
from hypothesis import strategies as st

from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric.concrete import entry_state, instance_model, spec_at
from symverify.kernel.parametric.expr import Cond, IExpr, Inp, Lit, Num, Value, VIf, any_of, ite, lt, pred, predicates
from symverify.kernel.parametric.gadget import Gadget, Param
from symverify.kernel.provers.forall import prove_forall
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.rings import ScalarRing

_iexprs, _conds, _mutate = base.iexprs, base.conds, base.mutate


def iexprs(draw: base.Draw, names: tuple[str, ...], depth: int) -> IExpr:
    """:func:`base.iexprs`, and a third of the time an operation with two drawn sides."""
    if depth > 0 and draw(st.integers(0, 2)) == 0:
        a, b = _iexprs(draw, names, depth - 1), _iexprs(draw, names, depth - 1)
        op = draw(st.sampled_from(["*", "//", "//+1", "<<", ">>", "%+1"]))
        if op == "<<":
            return a << ite(lt(b, 3), b, Lit(0))  # a shift by an expression, kept below 2^64
        return {"*": lambda: a * b, "//": lambda: a // b, "//+1": lambda: a // (b + 1), ">>": lambda: a >> b,
                "%+1": lambda: a % (b + 1)}[op]()
    if depth > 0 and draw.placed and draw(st.integers(0, 3)) == 0:  # a placement read inside an index expression
        return ite(conds(draw, names, 0), _iexprs(draw, names, depth - 1), _iexprs(draw, names, depth - 1))
    return _iexprs(draw, names, depth)


def conds(draw: base.Draw, names: tuple[str, ...], depth: int) -> Cond:
    """:func:`base.conds`, and (placed) the row predicate ``Q`` or the predicate ``Z`` without arguments."""
    if draw.placed and draw(st.integers(0, 3)) == 0:
        assert draw.setup is not None
        if draw(st.booleans()):
            return pred("Z")
        row = base.i if "i" in names and draw(st.booleans()) else base.wrap(draw, _iexprs(draw, names, 1), draw.setup.rows)
        return pred("Q", row)
    return _conds(draw, names, depth)


def placements(g: Gadget, env: base.Env) -> list[base.Env]:
    """``env`` with every placement of ``P`` (cells), ``Q`` (rows) and ``Z`` (no argument) the gadget
    reads that satisfies ``assume`` at every cell (:func:`base.placements`, three predicates)."""
    names = g.predicate_names
    if not names:
        return [{**env, "@P": frozenset()}]
    nn, dd = base.ix(g.rows, env), base.ix(g.cols, env)
    points = ([("P", r, c) for r in range(nn) for c in range(dd)] if "P" in names else []) + \
             ([("Q", r) for r in range(nn)] if "Q" in names else []) + ([("Z",)] if "Z" in names else [])
    out = []
    for bits in itertools.product((False, True), repeat=len(points)):
        e = {**env, "@P": frozenset(x for x, b in zip(points, bits) if b)}
        if all([base.cond(g.assume, {**e, "i": r, "q": c}) for r in range(nn) for c in range(dd)]):
            out.append(e)
    return out


def package_cell(g: Gadget, env: base.Env, cell: tuple[int, int]) -> tuple[base.Poly, base.Poly]:
    """:func:`base.package_cell` with the three predicates."""
    params = {n: v for n, v in env.items() if n != "@P"}
    placed = env.get("@P", frozenset())
    with predicates({n: (lambda *idx, n=n: (n, *idx) in placed) for n in ("P", "Q", "Z")}):
        model = instance_model(g, params, base._Families())
        u = entry_state(g, params, lambda r, c: sym(f"in[{r}][{c}]"))
        out = eval_model(model, [[u(r, c) for c in range(model.inner_d)] for r in range(model.inner_n)], ScalarRing())
        want = spec_at(g, params, *cell, lambda r, c: sym(f"in[{r}][{c}]"), base._Families())
    return base._sym_poly(out[cell[0]][cell[1]]), base._sym_poly(want)


def mutate(draw: base.Draw, v: Value, setup: base.Setup) -> Value:
    """:func:`base.mutate`; a spec with nothing it can change (no input read, constant or ``where``
    left by the drawing above) is no example."""
    if not any(isinstance(x, (Inp, Num, VIf)) for x in base._nodes_v(v)):
        assume(False)
    return _mutate(draw, v, setup)


@contextlib.contextmanager
def drawn_here() -> Iterator[None]:
    """The base module's generator and oracle with the additions above (its module globals, restored after)."""
    saved = base.iexprs, base.conds, base.mutate, base.placements, base.package_cell
    base.iexprs, base.conds, base.mutate, base.placements, base.package_cell = iexprs, conds, mutate, placements, package_cell
    try:
        yield
    finally:
        base.iexprs, base.conds, base.mutate, base.placements, base.package_cell = saved


def _draw(wrong: bool, placed: bool) -> Any:
    @st.composite
    def gadget(draw: Any) -> Gadget:
        with drawn_here():
            g = draw(base.gadgets(wrong=wrong, heavy=False, placed=placed))
        if placed and draw(st.booleans()):  # an assume that also reads Q and Z
            g = dataclasses.replace(g, assume=any_of(g.assume, pred("Q", base.i), pred("Z")))
        return g

    return gadget()


def _judge(g: Gadget, prove: Any = None) -> str:
    with drawn_here():
        return base.judge(g, prove)


@base._settings(4)
@given(st.booleans().flatmap(lambda wrong: _draw(wrong, placed=False)))
def test_nonlinear_index_expressions_agree_with_every_instance(g: Gadget) -> None:
    _judge(g)


@base._settings(4)
@given(st.booleans().flatmap(lambda wrong: _draw(wrong, placed=True)))
def test_predicates_of_every_arity_agree_with_every_instance_and_placement(g: Gadget) -> None:
    """``P(r, c)``, ``Q(r)`` and ``Z()`` in conditions and index expressions, under a random ``assume``:
    every placement of the (at most 3×2) state satisfying it is tried."""
    _judge(g)


@base._settings(4)
@given(st.data())
def test_a_narrowed_range_decides_the_gadget_declared_with_it(data: st.DataObject) -> None:
    """``prove_forall(g, ranges=R)`` is judged against the oracle of ``g`` with its parameters declared
    as ``R``: its verdict, witness and refusals are about those instances only."""
    g = data.draw(st.booleans().flatmap(lambda wrong: _draw(wrong, placed=False)))
    narrowed = {}
    for p in g.params:
        lo = data.draw(st.integers(p.lo, p.hi))
        narrowed[p.name] = (lo, data.draw(st.integers(lo, p.hi)))
    g_narrow = dataclasses.replace(g, params=tuple(Param(p.name, *narrowed[p.name]) for p in g.params))
    _judge(g_narrow, lambda _: prove_forall(g, ranges=narrowed, timeout=base.TIMEOUT_S))
