"""The symbolic interpretation: every output cell as a guarded polynomial in symbolic sizes.

For a gadget with parameters ``P`` and the cell variables ``i`` (row), ``q`` (channel),
:func:`output_terms` returns the output cell ``(i, q)`` as a list of :class:`Term` s
``[guard]·coef·a_1⋯a_k`` — ``guard`` a condition on ``P, i, q``, ``coef`` a rational, each
``a_t`` an :class:`Atom`: an input cell ``in(r, c)`` or a family member ``name(idx…)`` with index
expressions for its indices. The value of the cell at any parameter value, cell and input is the
sum of the terms whose guard holds. It is read off the layer formula (docs/theory.md §1.1)

    y[i, q] = (Σ_p u[i, p]·W[p, q] + b1[i, q]) · (Σ_k h[k, q]·u[i − k, q] + b2[i, q]),

with the sums over the taps of channel ``q`` (a tap contributes exactly where its guard holds;
channels it does not name have ``W = 0``, lags it does not name ``h = 0``): a ``W`` tap
``(g, p(q), w(q))`` gives ``[g]·w·u[i, p(q)]``; an ``h`` tap ``(g, k(q), v(q))`` gives
``[g ∧ i ≥ k]·v·u[i − k, q]`` (causal; the row ``i − k < 0`` reads the zero padding) or
``[g]·v·u[(i + N' − k) mod N', q]`` (cyclic; written ``i − k`` if ``i ≥ k`` else ``i + (N' − k)``,
the same number since ``i, k < N'``, and below ``N'``: ``(i + N') − k`` passed ``2^64`` for ``N'`` near
it, where the concrete interpretation reads a row inside the state, and such a gadget was refused). The next layer reads the previous one's cells by
substituting the row and channel it reads for ``i`` and ``q`` in the previous terms. Products
expand term by term (guards conjoined, coefficients multiplied, atoms concatenated).

:func:`obligations` lists what must hold for every cell and parameter value for the definition
to be meaningful: every tap's source channel in ``[0, d')`` and lag in ``[0, N')``, every input
cell the spec reads inside the state, every family index inside the family's declared size —
wherever the concrete interpretation reads the atom, a factor of a product with 0 included
(``inp(r, c) * 0`` reads the cell: :func:`value_terms` with ``keep_zero``).
Definedness of the arithmetic itself (no subtraction below 0, no overflow, no division by zero)
is checked by the prover's encoding of each expression under the guard it is evaluated under.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from symverify.kernel.parametric.expr import (
    MAX_NESTING,
    MAX_NODES,
    TRUE,
    BoolOp,
    Cond,
    Fam,
    IExpr,
    Inp,
    Ite,
    Not,
    Num,
    ParametricError,
    Value,
    Var,
    VIf,
    VProd,
    VSum,
    ge,
    lt,
    nesting,
    subst_c,
    subst_i,
)
from symverify.kernel.parametric.gadget import Gadget, PLayer

__all__ = ["Atom", "Term", "Obligation", "output_terms", "spec_terms", "value_terms", "obligations", "eval_terms", "MAX_TERMS", "MAX_TERM_NESTING", "ExpansionLimitError",
           "expansion_budget"]


@dataclass(frozen=True, slots=True)
class Atom:
    """An input cell (``kind = "in"``, ``idx = (row, col)``) or a family member (``kind`` = its name)."""

    kind: str
    idx: tuple[IExpr, ...]


@dataclass(frozen=True, slots=True)
class Term:
    guard: Cond
    coef: Fraction
    atoms: tuple[Atom, ...]


@dataclass(frozen=True, slots=True)
class Obligation:
    """Where ``guard`` holds, ``ok`` must hold (``what`` says which expression and range)."""

    guard: Cond
    ok: Cond
    what: str


Reader = Callable[[IExpr, IExpr], list[Term]]


def _and(a: Cond, b: Cond) -> Cond:
    if a == TRUE:
        return b
    if b == TRUE:
        return a
    items = (a.items if isinstance(a, BoolOp) and a.op == "and" else (a,)) + (b.items if isinstance(b, BoolOp) and b.op == "and" else (b,))
    return BoolOp("and", items)


MAX_TERMS = 100_000
"""The most terms a product may expand to, or a sum collect (:class:`ExpansionLimitError` beyond):
products of sums expand multiplicatively (20 factors ``(a_k + b_k)`` are ``2^20`` terms), a layer
reading a large previous layer through many taps adds a copy of its terms per tap, and an identity
of that many terms is beyond what the ∀-prover decides in useful time anyway."""


class ExpansionLimitError(ParametricError):
    """A product or a sum would expand to more than :data:`MAX_TERMS` terms, or the expansion ran
    past the budget of :func:`expansion_budget`."""


_EXPIRED: contextvars.ContextVar[Callable[[], bool]] = contextvars.ContextVar("expansion_expired", default=lambda: False)


@contextlib.contextmanager
def expansion_budget(expired: Callable[[], bool]) -> Iterator[None]:
    """Inside the ``with`` block, the expansion raises :class:`ExpansionLimitError` once
    ``expired()`` is true (asked every :data:`_TICK` terms built): the ∀-prover's time budget
    bounds the building of its statement too."""
    token = _EXPIRED.set(expired)
    try:
        yield
    finally:
        _EXPIRED.reset(token)


_TICK = 4096


def _tick(n: int) -> None:
    if n % _TICK == 0 and _EXPIRED.get()():
        raise ExpansionLimitError("the time budget ran out while expanding the terms of the statement (timeout)")


def _capped(ts: list[Term], what: str) -> list[Term]:
    if len(ts) > MAX_TERMS:
        raise ExpansionLimitError(f"{what} collects {len(ts)} terms, more than MAX_TERMS = {MAX_TERMS}")
    return ts


def _mul(xs: list[Term], ys: list[Term]) -> list[Term]:
    if len(xs) * len(ys) > MAX_TERMS:
        raise ExpansionLimitError(f"a product of {len(xs)} by {len(ys)} terms expands to more than MAX_TERMS = {MAX_TERMS} terms")
    out: list[Term] = []
    for x in xs:
        for y in ys:
            _tick(len(out))
            out.append(Term(_and(x.guard, y.guard), x.coef * y.coef, x.atoms + y.atoms))
    return out


def _guarded(ts: list[Term], g: Cond) -> list[Term]:
    return [Term(_and(g, t.guard), t.coef, t.atoms) for t in ts]


def value_terms(v: Value, read: Reader | None, keep_zero: bool = False) -> list[Term]:
    """The terms of a value expression; input cells are read through ``read`` (None: not allowed).

    With ``keep_zero``, instead, the terms whose index expressions the concrete interpretation
    evaluates, for the definedness check only (not the value): the constant 0 is a term too, an
    input cell's indices are evaluated whatever ``entry`` says there, and a product evaluates its
    right factor only where its left one is not 0 (under the guards of the left factor's nonzero
    terms). So ``where(lt(i − 1, 3), 0)`` and ``inp(i − 1, q) * 0`` are undefined at
    ``i = 0``, though their value has no term, and ``where(lt(0, i), 1) * inp(i − 1, q)`` is defined.
    Every value has at least one such term (the empty sum too), so the condition of every ``where``
    it is under is evaluated where the concrete interpretation evaluates it."""
    if isinstance(v, Num):
        return [] if v.value == 0 and not keep_zero else [Term(TRUE, Fraction(v.value), ())]
    if isinstance(v, Fam):
        return [Term(TRUE, Fraction(1), (Atom(v.name, v.idx),))]
    if isinstance(v, Inp):
        if read is None:
            raise ParametricError("a weight expression reads an input cell")
        return read(v.row, v.col) + ([Term(TRUE, Fraction(0), (Atom("in", (v.row, v.col)),))] if keep_zero else [])
    if isinstance(v, VSum):
        if not v.items and keep_zero:  # the empty sum is the constant 0: a term, as Num(0) is
            return [Term(TRUE, Fraction(0), ())]
        out: list[Term] = []
        for x in v.items:
            out += value_terms(x, read, keep_zero)
            _capped(out, "a sum")
        return out
    if isinstance(v, VProd):
        ta, tb = value_terms(v.a, read, keep_zero), value_terms(v.b, read, keep_zero)
        if not keep_zero:
            return _mul(ta, tb)
        # ``b`` is evaluated where ``a ≠ 0``: where the guard of one of a's nonzero terms holds (one
        # disjunction, not a product: the terms of a product chain stay linear in its length)
        nz = tuple(dict.fromkeys(t.guard for t in ta if t.coef != 0))
        return ta + (_guarded(tb, TRUE if TRUE in nz else BoolOp("or", nz)) if nz else [])
    if isinstance(v, VIf):
        return _guarded(value_terms(v.a, read, keep_zero), v.cond) + _guarded(value_terms(v.b, read, keep_zero), Not(v.cond))
    raise ParametricError(f"value expression: unknown node {type(v).__name__}")


def _visitor() -> Callable[[], None]:
    """A node counter that asks the budget every :data:`_TICK` nodes (raising as :func:`_tick`): a
    substitution builds a tree, and the row a layer reads through ``k`` cyclic layers before it is
    ``3^k`` nodes (each ``ite(i ≥ lag, i − lag, i + (N' − lag))`` uses the previous row three times),
    so one term of one layer could run the budget over several times before the next term's check."""
    n = 0
    expired = _EXPIRED.get()

    def visit() -> None:
        nonlocal n
        n += 1
        if n % _TICK == 0:
            if expired():
                raise ExpansionLimitError("the time budget ran out while expanding the terms of the statement (timeout)")
            if n > MAX_NODES:  # every later walk (hashing, encoding, messages) is over these trees
                raise ExpansionLimitError(f"the terms of a layer read the previous one through index expressions of more than "
                                          f"MAX_NODES = {MAX_NODES} nodes in all (a row used k times is copied k times: through "
                                          "k cyclic layers about 3^k nodes per term)")

    return visit


def _subst_terms(ts: list[Term], r: IExpr, c: IExpr) -> list[Term]:
    sub = {"i": r, "q": c}
    visit = _visitor()
    out: list[Term] = []
    for t in ts:
        _tick(len(out))
        out.append(Term(subst_c(t.guard, sub, visit), t.coef, tuple(Atom(a.kind, tuple(subst_i(x, sub, visit) for x in a.idx)) for a in t.atoms)))
    return out


def _layer_terms(pl: PLayer, rows: IExpr, read: Reader) -> list[Term]:
    i, q = Var("i"), Var("q")
    proj = value_terms(pl.b1, None)
    for t in pl.W:
        proj += _guarded(_mul(value_terms(t.value, None), read(i, t.src)), t.guard)
        _capped(proj, "a layer's u·W + b1")
    conv = value_terms(pl.b2, None)
    for t in pl.h:
        if pl.mode == "causal":
            src, g = i - t.src, _and(t.guard, ge(i, t.src))
        else:
            src, g = Ite(ge(i, t.src), i - t.src, i + (rows - t.src)), t.guard
        conv += _guarded(_mul(value_terms(t.value, None), read(src, q)), g)
        _capped(conv, "a layer's h ⊛ u + b2")
    return _mul(proj, conv)


def _reader(g: Gadget) -> Reader:
    """The input state: cell ``(r, c)`` is the atom ``in(r, c)`` where ``entry(r, c)`` holds, else 0."""

    def read(r: IExpr, c: IExpr) -> list[Term]:
        return [Term(subst_c(g.entry, {"i": r, "q": c}), Fraction(1), (Atom("in", (r, c)),))]

    return read


MAX_TERM_NESTING = MAX_NESTING + MAX_NESTING // 2
"""The deepest a layer's terms (their guards and atoms' indices) may nest (:func:`output_terms`):
each layer substitutes the row and channel it reads into the previous layer's terms, so their index
expressions deepen with every layer read through (the row read through ``k`` causal shifts is
``k + 2`` deep), and every walk over them recurses on their depth — the z3 encoding's lookups
compare them field by field, a few frames per level: 450 shifts raised ``RecursionError``. Beyond
it the statement is ``unknown`` (:class:`ExpansionLimitError`), as past :data:`MAX_TERMS`; the
gadget's own expressions are held to ``MAX_NESTING``, and the library's terms nest at most 19 deep."""


def output_terms(g: Gadget) -> list[Term]:
    """The gadget's output cell ``(i, q)`` as terms (module docstring); :class:`ExpansionLimitError`
    when a layer's terms nest deeper than :data:`MAX_TERM_NESTING`."""
    terms: list[Term] = _reader(g)(Var("i"), Var("q"))
    for k, pl in enumerate(g.layers):
        prev = terms

        def read(r: IExpr, c: IExpr, prev: list[Term] = prev) -> list[Term]:
            return _subst_terms(prev, r, c)

        terms = _layer_terms(pl, g.rows, read)
        depth = nesting(tuple((t.guard, t.atoms) for t in terms))
        if depth > MAX_TERM_NESTING:
            raise ExpansionLimitError(f"the terms of layer {k} nest {depth} deep, more than MAX_TERM_NESTING = {MAX_TERM_NESTING} "
                                      "(each layer read through deepens the index expressions it reads; every walk over them "
                                      "recurses on their depth)")
    return terms


def spec_terms(g: Gadget, keep_zero: bool = False) -> list[Term]:
    """The specification of cell ``(i, q)`` as terms over the input cells and families (``keep_zero``: :func:`value_terms`)."""
    return value_terms(g.spec, _reader(g), keep_zero)


def _atom_obligations(ts: list[Term], g: Gadget, where: str) -> list[Obligation]:
    """The range obligations of the atoms of ``ts``: the terms of :func:`value_terms` with
    ``keep_zero``, i.e. every atom the concrete interpretation reads, a factor of a product with 0
    included. An input cell's zero-coefficient term only says its indices are evaluated: the state
    itself is read where ``entry`` holds there, which its term with coefficient 1 carries."""
    out = []
    for t in ts:
        for a in t.atoms:
            if a.kind == "in":
                if t.coef == 0:
                    continue
                r, c = a.idx
                out.append(Obligation(t.guard, _and(lt(r, g.rows), lt(c, g.cols)), f"{where}: input cell ({r}, {c}) inside the {g.rows}×{g.cols} state"))
                continue
            dims = g.families.get(a.kind)
            if dims is None:
                continue
            if len(dims) != len(a.idx):
                raise ParametricError(f"gadget {g.name} {where}: family {a.kind} has {len(dims)} indices, used with {len(a.idx)}")
            for x, n in zip(a.idx, dims):
                out.append(Obligation(t.guard, lt(x, n), f"{where}: family index {a.kind}[{x}] below its size {n}"))
    return out


def obligations(g: Gadget) -> list[Obligation]:
    """The range obligations of the gadget (module docstring); ``i < N'``, ``q < d'`` are assumed."""
    out: list[Obligation] = []
    for k, pl in enumerate(g.layers):
        for t in pl.W:
            out.append(Obligation(t.guard, lt(t.src, g.cols), f"layer {k} W tap source {t.src} inside [0, {g.cols})"))
        for t in pl.h:
            out.append(Obligation(t.guard, lt(t.src, g.rows), f"layer {k} h tap lag {t.src} inside [0, {g.rows})"))
        for t in pl.W + pl.h:  # a tap's value is evaluated where its guard holds
            out += _atom_obligations(_guarded(value_terms(t.value, None, keep_zero=True), t.guard), g, f"layer {k} tap value")
        for name in ("b1", "b2"):
            out += _atom_obligations(value_terms(getattr(pl, name), None, keep_zero=True), g, f"layer {k} {name}")
    spec = _atom_obligations(spec_terms(g, keep_zero=True), g, "spec")
    out += [Obligation(_and(g.care, o.guard), o.ok, o.what) for o in spec]
    return out



def eval_terms(ts: list[Term], env: dict[str, int], state: Callable[[int, int], object],
               family: Callable[..., object]) -> object:
    """The terms' value at ``env`` (parameters and ``i``, ``q``): the sum over the terms whose guard
    holds of ``coef · Π atoms``, input atoms read from ``state`` and family members from
    ``family(name, *idx)`` (how the symbolic interpretation is tested against the concrete one)."""
    total: object = 0
    for t in ts:
        if not t.guard.eval(env):
            continue
        v: object = t.coef if t.coef.denominator != 1 else int(t.coef)
        for a in t.atoms:
            idx = tuple(x.eval(env) for x in a.idx)
            v = v * (state(*idx) if a.kind == "in" else family(a.kind, *idx))  # type: ignore[operator]
        total = total + v  # type: ignore[operator]
    return total
