"""Index expressions as integer polynomials over atoms: the normal form the ∀-prover unwinds.

``normal(e)`` writes ``e`` as ``Σ c_m · m``: each ``m`` a product of *atoms* (a :class:`Var`, or a
node the form does not open: a bit operation, a remainder, an ``ite`` whose branches differ, a shift
or quotient by an expression, a quotient that is not exact), each ``c_m`` a nonzero ``int``. The rule,
node by node: a literal is its value; ``+``, ``−``, ``*`` are those of integer polynomials; ``a << k``
with a literal ``k < 64`` is ``a · 2^k``; ``a // b`` is the polynomial quotient ``C`` where ``b`` is one
monomial ``c·m`` that divides every monomial of ``a`` (so ``a = b·C`` and ``a // b = C`` wherever ``b ≠ 0``,
the only values where it is defined), ``a >> k`` likewise as ``a // 2^k``; ``ite(c, a, b)`` is the
form of ``a`` where ``a`` and ``b`` have one form; an operation on two constants is its value where
defined. So ``i + i − i + 1``, ``2·i − i + 1``, ``(i·N) // N + 1`` and ``((i + 1) << 3) >> 3`` are
all ``i + 1``.

**What it claims.** Wherever ``e`` is defined (its unsigned evaluation raises nothing), ``e`` equals
its form evaluated in exact integers with each atom at its own value (:func:`evaluate`). The form says
nothing where ``e`` is undefined (``N − N − 1 + 2`` is ``1`` and undefined everywhere). The ∀-prover
uses it to choose the cells at which it instantiates ``assume`` (any cell is sound: the instance is
the original expression, asserted where it is defined) and to tell whether those are all the cells
reaching a point, which the vacuity checks rest on (``tests/test_forall_normal_form.py`` compares the
form with the expression at many points of random expressions, and the cells said complete with
every cell of a grid). Pure functions; ``None`` where the form would exceed
:data:`MAX_MONOMIALS` (products of sums, :data:`MAX_PRODUCT`) or the expression :data:`MAX_FORM_NODES`,
which a consumer reads as "not normalised"."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from symverify.kernel.parametric.expr import (
    WIDTH,
    Bin,
    Cond,
    IExpr,
    Ite,
    Lit,
    ParametricError,
    Var,
    node_count,
    subst_i,
)

Monomial = tuple[IExpr, ...]
"""Atoms multiplied, in a fixed order (:func:`_order`), with repetition: ``()`` is the constant 1."""

Poly = dict[Monomial, int]
"""``Σ c_m · m`` (no zero coefficient; ``{}`` is 0). Each call returns a new dict."""

MAX_MONOMIALS = 64
"""The most monomials a form may have; past it :func:`normal` is None."""

MAX_PRODUCT = 256
"""The most pairs of monomials a product multiplies; past it :func:`normal` is None."""

MAX_FORM_NODES = 2000
"""The most expression nodes (a shared subexpression once per use) an expression :func:`normal` opens
may have; past it the form is None. Each atom is hashed and ordered by its structure, so the bound keeps
a form of a large expression (a tree of ``ite`` sharing its branches) from costing its size times the
products it takes part in (an argument of ``assume`` is a few nodes)."""


def _order(atom: IExpr) -> tuple[str, str]:
    return type(atom).__name__, str(atom)


def monomial(*atoms: IExpr) -> Monomial:
    """The monomial of ``atoms`` (in the fixed order)."""
    return tuple(sorted(atoms, key=_order))


def _add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, 0) + sign * c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def _mul(a: Poly, b: Poly) -> Poly | None:
    if len(a) * len(b) > MAX_PRODUCT:
        return None
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            out = _add(out, {monomial(*ma, *mb): ca * cb})
    return out if len(out) <= MAX_MONOMIALS else None


def constant(p: Poly) -> int | None:
    """The value of ``p`` where it is a constant (0 for ``{}``), else None."""
    if not p:
        return 0
    return p[()] if set(p) == {()} else None


def _quotient(a: Poly, b: Poly) -> Poly | None:
    """``C`` with ``a = b·C`` exactly, where ``b`` is one monomial dividing every monomial of ``a``; else None."""
    if len(b) != 1:
        return None
    ((mb, cb),) = b.items()
    out: Poly = {}
    for ma, ca in a.items():
        rest = list(ma)
        for x in mb:
            if x not in rest:
                return None
            rest.remove(x)
        if ca % cb:
            return None
        out[monomial(*rest)] = ca // cb
    return out


def normal(e: IExpr) -> Poly | None:
    """The form of ``e`` (module docstring); None past :data:`MAX_MONOMIALS`. Each node is normalised
    once per call (by identity), so a subexpression shared ``k`` times costs once, not ``k`` times; None
    past :data:`MAX_FORM_NODES` too."""
    if node_count(e, MAX_FORM_NODES) > MAX_FORM_NODES:
        return None
    out = _normal(e, {})
    return None if out is None else dict(out)


def _normal(e: IExpr, memo: dict[int, Poly | None]) -> Poly | None:
    hit = memo.get(id(e), memo)
    if hit is not memo:
        return hit  # type: ignore[return-value]
    out = _normal_node(e, memo)
    memo[id(e)] = out
    return out


def _normal_node(e: IExpr, memo: dict[int, Poly | None]) -> Poly | None:
    if isinstance(e, Lit):
        return {(): e.value} if e.value else {}
    if isinstance(e, Var):
        return {(e,): 1}
    if isinstance(e, Ite):
        a, b = _normal(e.a, memo), _normal(e.b, memo)
        return a if a is not None and a == b else {(e,): 1}
    if not isinstance(e, Bin):
        return {(e,): 1}
    a, b = _normal(e.a, memo), _normal(e.b, memo)
    if a is None or b is None:
        return None
    if e.op == "+":
        out: Poly | None = _add(a, b)
    elif e.op == "-":
        out = _add(a, b, -1)
    elif e.op == "*":
        out = _mul(a, b)
    else:
        ka, kb = constant(a), constant(b)
        if ka is not None and kb is not None and ka >= 0 and kb >= 0:
            try:  # both operands constant: the operation's own value, where defined
                v = Bin(e.op, Lit(ka), Lit(kb)).eval({})
            except ParametricError:  # undefined (a division by 0, a value past 2^64): an atom
                return {(e,): 1}
            return {(): v} if v else {}
        shift = kb if e.op in ("<<", ">>") and kb is not None and 0 <= kb < WIDTH else None
        if e.op == "<<" and shift is not None:
            out = _mul(a, {(): 1 << shift})
        elif e.op in ("//", ">>"):
            d: Poly | None = ({(): 1 << shift} if shift is not None else None) if e.op == ">>" else b
            out = _quotient(a, d) if d else None
            if out is None:
                return {(e,): 1}
        else:
            return {(e,): 1}
    if out is None or len(out) > MAX_MONOMIALS:
        return None
    return out


def cell_vars(p: Poly, names: tuple[str, ...] = ("i", "q")) -> set[str]:
    """Which of ``names`` the atoms of ``p`` read."""
    return {n for m in p for x in m for n in reads(x, names)}


def reads(x: object, names: tuple[str, ...] = ("i", "q")) -> set[str]:
    """Which of ``names`` the expression or condition ``x`` reads as variables (in an ``ite``'s condition
    and a predicate's arguments too); each node visited once (by identity), without recursion."""
    out: set[str] = set()
    seen: set[int] = set()
    todo: list[object] = [x]
    while todo:
        y = todo.pop()
        if id(y) in seen:
            continue
        seen.add(id(y))
        if isinstance(y, (tuple, list)):
            todo.extend(y)
        elif isinstance(y, Var):
            if y.name in names:
                out.add(y.name)
        elif isinstance(y, (IExpr, Cond)):
            todo.extend(getattr(y, f.name) for f in dataclasses.fields(y))  # type: ignore[arg-type]
    return out


def evaluate(p: Poly, env: Mapping[str, int]) -> int:
    """``p`` in exact integers, each atom at its value under ``env`` (its evaluation's errors propagate)."""
    total = 0
    for m, c in p.items():
        v = c
        for x in m:
            v *= x.eval(env)
        total += v
    return total


def to_iexpr(p: Poly, sub: Mapping[str, IExpr] | None = None) -> IExpr:
    """``p`` with nonnegative coefficients as an expression (``sub`` put in each atom): ``Σ c·m``
    from left to right, ``c·`` left out where ``c = 1``; ``0`` for ``{}``. Equal to ``p`` wherever defined."""
    if any(c < 0 for c in p.values()):
        raise ValueError("to_iexpr: a negative coefficient has no unsigned expression")
    out: IExpr | None = None
    for m, c in sorted(p.items(), key=lambda mc: [_order(x) for x in mc[0]]):
        term: IExpr | None = None if c == 1 and m else Lit(c)
        for x in m:
            x = subst_i(x, sub) if sub else x
            term = x if term is None else Bin("*", term, x)
        assert term is not None
        out = term if out is None else Bin("+", out, term)
    return Lit(0) if out is None else out


def split(p: Poly) -> tuple[Poly, Poly]:
    """``(P⁺, P⁻)`` with nonnegative coefficients and ``p = P⁺ − P⁻``."""
    return {m: c for m, c in p.items() if c > 0}, {m: -c for m, c in p.items() if c < 0}
