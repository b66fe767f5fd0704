"""The ∀-prover: a parametric gadget equals its specification for every size in its ranges.

Decision procedure (docs/forall.md §3, docs/trusted-base.md "The symbolic interpretation").
The symbolic interpretation (:mod:`symverify.kernel.parametric.symbolic`) writes the output cell
``(i, q)`` and the specification as sums of guarded terms ``[g]·c·a_1⋯a_k`` over *atoms* (input
cells and weight-family members, each named by a tag and index expressions). Their difference
``Δ`` is the zero polynomial in the atoms for a given parameter value and cell exactly when, for
every multiset ``K`` of at most ``D`` atoms (``D`` the largest term degree), the coefficients of
the terms whose guard holds and whose atoms equal ``K`` as a multiset sum to 0 — a polynomial over
Q is zero iff all its coefficients are, and two atoms are the same variable iff their tags and
index values agree. So the claim "for all parameters in range, all cells, all inputs and all
family values, output = spec" is equivalent to the unsatisfiability of

    ranges(P) ∧ where(P) ∧ i < N' ∧ q < d' ∧ care(i, q) ∧ Σ_t ite(g_t ∧ atoms_t ≅ K, c_t, 0) ≠ 0

over the parameters, the cell and a free key ``K`` (``D`` slots of a tag and indices; a term
matches when some permutation of its atoms, padded with the unit atom, equals ``K`` slot by
slot). Every multiset of atoms has an ordering with non-decreasing tags (the unit atom's tag is
0), so ``K`` is restricted to those, and a term is matched only through the permutations of its
atoms whose tags are non-decreasing (a permutation equal to such a ``K`` slot by slot has its
tags): the same statement, with about half the alternatives for terms of atoms of distinct
families. Index expressions are unsigned 64-bit bit-vectors (first narrower ones, :data:`NARROW_WIDTH`,
where every value stays below ``2^w``: definedness there implies the same integers at 64 bits)
and the coefficient sum a bit-vector wide enough never to wrap (coefficients scaled to integers
by a common denominator): a quantifier-free bit-vector problem, which z3 decides (by bit-blasting).
``unsat`` is the verdict *proved for all* (printed with the ranges); ``sat`` gives a parameter
value, a cell and the key of a nonzero coefficient, which is **re-checked** by instantiating the
gadget at that size and evaluating it exactly (the instance evaluator of
:mod:`symverify.kernel.semantics.layer` on the built model when it has at most
:data:`RECHECK_CELLS` cells, else the cell-by-cell concrete interpretation) against the spec on
symbolic inputs: only a confirmed difference is *refuted* (an unconfirmed one raises
:class:`~symverify.errors.ProverError`). z3's ``unknown`` (or a timeout) is *unknown*.

Before that, **definedness** is decided the same way: every index expression must stay in
``[0, 2^64)`` without wrapping (no subtraction below 0, no overflow, shift < 64, no division by
zero) wherever it is evaluated (under its guard, with short-circuit ``and``/``or``/``ite``;
``care`` and ``entry`` at every cell),
every tap source must lie in ``[0, d')``, every lag in ``[0, N')``, every input cell the spec
reads in the state and every family index in its declared size. A gadget for which z3 finds a
violation is refused with a :class:`~symverify.kernel.parametric.expr.ParametricError` naming the
expression, the parameter values and the cell.

The whole range is decided first, one query per part of the gadget's case split; all unsat is
*proved*. Where a part is not unsat, the counterexample is searched first with the sizes
restricted to ``N' ≤ 16, d' ≤ 4``, then to ``N', d' ≤ 128`` (``N'·d' ≤ RECHECK_CELLS``) (so the
witness is small and can be rebuilt as a model); only when none exists there is the part's own
witness taken (a proof implies both small searches are unsat, so they run only on the way to a
refutation or an unknown).

With placement predicates the existence checks take finitely many instances of ``assume``; a proof
also needs a placement satisfying ``assume`` at every cell of some state, with ``care`` and ``entry``
at a cell (:func:`_placement_found`; a chain of instances may forbid every one), else it is unknown.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import math
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

from symverify.errors import BackendUnavailableError, ProverError
from symverify.ir.bigint import int_to_str, safe_repr, show_int
from symverify.kernel.ir.scalar import plain_float, plain_int, plain_str
from symverify.kernel.parametric.expr import (
    _PREDICATES,
    WIDTH,
    Bin,
    BoolOp,
    Cmp,
    Cond,
    IExpr,
    Ite,
    Lit,
    Not,
    ParametricError,
    Pred,
    Var,
    predicates,
    subst_c,
    subst_i,
)
from symverify.kernel.parametric.gadget import NODE_TYPES, Gadget, Param
from symverify.kernel.parametric.normal import Poly, cell_vars, constant, monomial, normal, reads, split, to_iexpr
from symverify.kernel.parametric.symbolic import (
    ExpansionLimitError,
    Term,
    expansion_budget,
    obligations,
    output_terms,
    spec_terms,
    value_terms,
)
from symverify.kernel.provers.fingerprint import check_digests, tree_digest
from symverify.kernel.provers.options import timeout_refusal, timeout_seconds
from symverify.kernel.provers.outcome import Sealed, Verdict, exact_comparison, seal_outcome

__all__ = ["ForallResult", "prove_forall", "claim_digests", "RECHECK_CELLS"]

NARROW_WIDTH = 48
"""The widest narrow bit-vector encoding (:class:`_Enc`), used when every parameter bound is below
``2^NARROW_WIDTH``; before it, the least width holding the bounds and the state's size at the top
of the ranges (:func:`_narrow_widths`). Narrower vectors are faster to decide: 48 bits about 1.4×
against ``WIDTH`` on the H.16 sequence axis, 41 bits a further 1.1–1.3×
(``benchmarks/forall_split.py``). Where a value may reach ``2^w`` its definedness check fails at
width ``w`` and the next width is tried, up to ``WIDTH`` bits, so the statement is the same."""
BV_TACTIC = ("simplify", "propagate-values", "solve-eqs", "elim-uncnstr", "ackermannize_bv", "bit-blast", "sat")
"""The z3 tactic pipeline for bit-vector queries (all of them use z3's default solver when this is
empty). Free predicates (uninterpreted functions over bit-vectors) do not bit-blast:
``ackermannize_bv`` first replaces each application by a fresh constant with the functional
consistency constraints (``a = b → P(a) = P(b)``), an equisatisfiable QF_BV problem whose model
converter gives the predicates back for a witness (a pipeline without it leaves the queries with
predicates to the default solver; ``benchmarks/forall_split.py`` compares the two); where the
pipeline fails on such a query, the default solver decides it (:class:`_Fallback`). The budget is the tactic's ``TryFor``: a
solver timeout set on a tactic's solver makes z3 fall back to its general strategy, which is what
this avoids."""
RECHECK_CELLS = 1 << 14  # 128 × 128
Z3_MAX_MS = (1 << 32) - 1
"""z3's longest timeout in milliseconds (about 49.7 days): z3 reads its ``timeout`` parameter (and a
``TryFor``'s) as an unsigned 32-bit number, so ``2^32 + 2`` ms was a 2 ms timeout (:func:`_ms`)."""


def _ms(left: float) -> int:
    """The z3 timeout, in milliseconds, of a query with ``left`` seconds of the budget left: at least
    1 and at most :data:`Z3_MAX_MS` (more wrapped modulo ``2^32`` in z3, and a budget of ``1e308`` s
    overflowed ``int``); a query that exhausts ``Z3_MAX_MS`` is ``unknown``, as at any timeout."""
    return max(1, int(min(left * 1000, Z3_MAX_MS)))
_Z3_LOCK = threading.RLock()
"""Held by :func:`prove_forall` while it uses z3: z3's Python API shares one context, which is not
thread-safe (two threads proving at once crashed the process with a segmentation fault, or hung it past
both timeouts). Calls from several threads are decided one at a time; each waits for it within its own
budget."""
FLAT_CHAIN = 32
"""The longest ``&``/``|`` chain whose definedness is encoded flat (:func:`_chain_ok`); longer ones
are split in halves (the flat form has one prefix per item: quadratic in the length). Every chain
of the library's gadgets is shorter (``mul_stage``'s terms: 26), so their statements are unchanged."""


@dataclass(frozen=True)
class ForallResult(Sealed):
    """The verdict of :func:`prove_forall`, made by :func:`~symverify.kernel.provers.outcome.exact_comparison`
    from z3's decision: ``proved`` (unsat: for every parameter value in ``ranges``), ``refuted``
    (``params`` and ``cell`` a counterexample re-checked by instantiating the gadget, ``detail`` the
    two values) or ``unknown`` (``detail`` says why). ``method`` is ``"z3"``. ``==`` leaves out
    ``seconds`` (the time taken, not sealed): two runs of one proof compare equal; the hash leaves out
    ``params`` and ``stats`` besides (dicts), so a result is hashable and equal results hash alike."""

    gadget: str
    verdict: Verdict
    ranges: str
    params: Mapping[str, int] = field(default_factory=dict, hash=False)
    cell: tuple[int, int] | None = None
    detail: str = ""
    seconds: float = field(default=0.0, compare=False)
    stats: Mapping[str, Any] = field(default_factory=dict, hash=False)
    method: str = "z3"
    hypotheses: str = ""
    """The gadget's ``entry`` and ``assume`` where not true (:func:`_hypotheses`): a proof is about the
    inputs nonzero only where ``entry`` holds and the placements satisfying ``assume`` at every cell."""
    digests: tuple[str, str] | None = field(default=None, kw_only=True)
    """What the claim is about, ``(statement, construction)`` (:func:`claim_digests`): the digest of
    the gadget's ``spec``, ``where``, ``care``, ``entry`` and ``assume`` with the parameter ranges
    decided, and that of its ``params``, ``rows``, ``cols``, ``layers`` and ``families``, each its
    exact definition (:func:`~symverify.kernel.provers.fingerprint.tree_digest`, never ``str()``).
    Set by :func:`prove_forall` and sealed with the rest (None: an outcome made otherwise states none)."""
    _seal: str = field(default="", init=False, repr=False, compare=False)  # set by seal_outcome
    SEALED = ("gadget", "ranges", "hypotheses", "params", "cell", "detail", "digests")
    """The fields bound into the seal besides the verdict and method (the statement, its digests and a
    refutation's counterexample): one of them changed after the prover made the result unseals it."""

    def __post_init__(self) -> None:
        check_digests(self.digests, f"∀ result {safe_repr(self.gadget, 60)}", "(statement, construction)")

    @property
    def proved(self) -> bool:
        """Proved for every parameter value in ``ranges``."""
        return self.verdict is Verdict.PROVED

    def __str__(self) -> str:
        if self.verdict is Verdict.PROVED:
            given = f", given {self.hypotheses}" if self.hypotheses else ""
            return f"{self.gadget}: proved for all {self.ranges}{given} ({self.seconds:.2f} s)"
        if self.verdict is Verdict.REFUTED:
            return f"{self.gadget}: refuted at {dict(self.params)}, cell {self.cell}: {self.detail}"
        return f"{self.gadget}: unknown ({self.detail})"


def _z3() -> Any:
    try:
        import z3
    except ImportError:
        raise BackendUnavailableError("the ∀-prover needs z3: pip install z3-solver") from None
    return z3


class _Enc:
    """Index expressions as ``width``-bit vectors (``width ≤ WIDTH``), each with its definedness
    condition ``ok``: no wrap in ``[0, 2^width)``. A value defined below ``2^width`` is the same
    integer below ``2^WIDTH``, so where definedness holds at the narrow width, both widths denote the
    exact integers of the concrete interpretation and decide the same identity. A literal that
    does not fit sets ``unfit`` (the width is then not used; it is never wrapped)."""

    def __init__(self, z3: Any, names: list[str], fast_mod: bool = False, width: int = WIDTH) -> None:
        self.z3 = z3
        self.fast_mod = fast_mod
        self.width = width
        self.unfit = False
        self.deadline = math.inf  # :meth:`tick` raises once ``time.perf_counter()`` passes it
        self.vars = {n: self.fresh(n) for n in names}
        self._ix: dict[IExpr, tuple[Any, Any]] = {}
        self._c: dict[Cond, tuple[Any, Any]] = {}
        self.preds: dict[str, Any] = {}
        self._built = 0  # nodes encoded: the budget is asked every 1024 (:meth:`_node`)

    def fresh(self, name: str) -> Any:
        return self.z3.BitVec(name, self.width)

    def tick(self, what: str) -> None:
        """Raise :class:`_EncodingTimeoutError` once the deadline has passed (building the z3 terms of
        a large gadget takes time before any query runs)."""
        if time.perf_counter() > self.deadline:
            raise _EncodingTimeoutError(what)

    def _node(self) -> None:
        """Count one node encoded and ask the budget every 1024: a term's index expressions may be
        trees of millions of nodes (a row read through many cyclic layers), whose encoding ran the
        budget over several times between two terms' checks."""
        self._built += 1
        if self._built % 1024 == 0:
            self.tick("the index expressions")

    def const(self, v: int) -> Any:
        if not 0 <= v < 1 << self.width:
            self.unfit = True
            v = 0
        return self.z3.BitVecVal(v, self.width)

    def lt(self, a: Any, b: Any) -> Any:
        return self.z3.ULT(a, b)

    def le(self, a: Any, b: Any) -> Any:
        return self.z3.ULE(a, b)

    def total(self, parts: list[tuple[int, Any]]) -> Any:
        """``Σ ite(cond, c, 0)`` as a bit-vector wide enough never to wrap (``|Σ| ≤ Σ|c| < 2^(w−1)``)."""
        z3 = self.z3
        cw = max(8, (sum(abs(c) for c, _ in parts) + 1).bit_length() + 1)
        out = z3.BitVecVal(0, cw)
        for c, cond in parts:
            out = out + z3.If(cond, z3.BitVecVal(_numeral(c), cw), z3.BitVecVal(0, cw))
        return out, z3.BitVecVal(0, cw)

    def ix(self, e: IExpr) -> tuple[Any, Any]:
        hit = self._ix.get(e)
        if hit is not None:
            return hit
        self._node()
        z3 = self.z3
        if isinstance(e, Lit):
            r = (self.const(e.value), z3.BoolVal(True))
        elif isinstance(e, Var):
            if e.name not in self.vars:
                raise ParametricError(f"index variable {e.name!r} is not a parameter or cell index")
            r = (self.vars[e.name], z3.BoolVal(True))
        elif isinstance(e, Ite):
            c, okc = self.cond(e.cond)
            (a, oka), (b, okb) = self.ix(e.a), self.ix(e.b)
            r = (z3.If(c, a, b), z3.And(okc, z3.If(c, oka, okb)))
        elif isinstance(e, Bin):
            (a, oka), (b, okb) = self.ix(e.a), self.ix(e.b)
            t, ok = self._bin(e, a, b)
            r = (t, z3.And(oka, okb, *ok))
        else:
            raise ParametricError(f"index expression: unknown node {type(e).__name__}")
        self._ix[e] = r
        return r

    def cond(self, c: Cond) -> tuple[Any, Any]:
        hit = self._c.get(c)
        if hit is not None:
            return hit
        self._node()
        z3 = self.z3
        if isinstance(c, Cmp):
            (a, oka), (b, okb) = self.ix(c.a), self.ix(c.b)
            t = {"<": self.lt(a, b), "<=": self.le(a, b), "==": a == b, "!=": a != b}[c.op]
            r = (t, z3.And(oka, okb))
        elif isinstance(c, Not):
            t0, ok0 = self.cond(c.c)
            r = (z3.Not(t0), ok0)
        elif isinstance(c, Pred):
            args = [self.ix(x) for x in c.idx]
            fn = self.preds.get(c.name)
            if fn is None:
                fn = z3.Function(f"pred_{c.name}", *[a.sort() for a, _ in args], z3.BoolSort())
                self.preds[c.name] = fn
            r = (fn(*[a for a, _ in args]), z3.And(*[ok for _, ok in args]))
        elif isinstance(c, BoolOp):
            parts = [self.cond(x) for x in c.items]
            ts = [t0 for t0, _ in parts]
            r = (z3.And(*ts) if c.op == "and" else z3.Or(*ts), _chain_ok(z3, c.op, parts, lambda: self.tick("a chain of conditions")))
        else:
            raise ParametricError(f"condition: unknown node {type(c).__name__}")
        self._c[c] = r
        return r

    def _bin(self, e: Bin, a: Any, b: Any) -> tuple[Any, list[Any]]:
        z3 = self.z3
        op = e.op
        w = self.const(self.width)
        if op == "+":
            return a + b, [z3.BVAddNoOverflow(a, b, False)]
        if op == "-":
            return a - b, [z3.UGE(a, b)]
        if op == "*":
            return a * b, [z3.BVMulNoOverflow(a, b, False)]
        if op == "<<":
            t = a << b
            return t, [z3.ULT(b, w), z3.LShR(t, b) == a]
        if op == ">>":
            return z3.LShR(a, b), [z3.ULT(b, w)]
        if op == "&":
            return a & b, []
        if op == "|":
            return a | b, []
        if op == "^":
            return a ^ b, []
        if op == "//":
            return z3.UDiv(a, b), [b != 0]
        if self.fast_mod:
            # a mod b as one conditional subtraction; sound where a < 2b, which is made part of
            # the definedness condition (checked wherever the expression is evaluated)
            return z3.If(z3.ULT(a, b), a, a - b), [b != 0, z3.Or(z3.ULT(a, b), z3.ULT(a - b, b))]
        return z3.URem(a, b), [b != 0]


def _chain_ok(z3: Any, op: str, parts: list[tuple[Any, Any]], tick: Callable[[], None]) -> Any:
    """Definedness of the short-circuit chain ``x_0 op … op x_(k−1)`` (``parts``: each item's value
    and definedness as z3 Booleans): item ``j`` is evaluated, so must be defined, where the items
    before it did not decide (all true for ``and``, all false for ``or``). Up to :data:`FLAT_CHAIN`
    items it is ``∧_j (undecided(x_<j) → ok_j)``; a longer chain is split in halves, ``ok(L ++ R) =
    ok(L) ∧ (undecided(L) → ok(R))``: the same condition in ``O(k log k)`` nodes instead of
    ``O(k²)`` (a flat chain of 2000 items took two minutes to encode, past any budget). ``tick`` is
    called once per part (it raises when the budget has run out)."""

    def undecided(ts: list[Any]) -> Any:
        return z3.And(*ts) if op == "and" else z3.Not(z3.Or(*ts))

    def ok(lo: int, hi: int) -> Any:
        tick()
        if hi - lo > FLAT_CHAIN:
            mid = (lo + hi) // 2
            return z3.And(ok(lo, mid), z3.Implies(undecided([t0 for t0, _ in parts[lo:mid]]), ok(mid, hi)))
        oks: list[Any] = []
        seen: list[Any] = []
        for t0, ok0 in parts[lo:hi]:
            oks.append(z3.Implies(undecided(seen), ok0) if seen else ok0)
            seen.append(t0)
        return z3.And(*oks)

    return ok(0, len(parts))


class _IntEnc(_Enc):
    """The same over the integers (linear arithmetic), for gadgets whose index expressions are
    linear: ``+``, ``−``, products and shifts with a constant side, ``mod`` as one conditional
    subtraction (``fast_mod``). Every value is asserted in ``[0, 2^64)`` through ``ok`` exactly
    as the bit-vector encoding does, so both decide the same statement."""

    def fresh(self, name: str) -> Any:
        return self.z3.Int(name)

    def const(self, v: int) -> Any:
        return self.z3.IntVal(v)

    def lt(self, a: Any, b: Any) -> Any:
        return a < b

    def le(self, a: Any, b: Any) -> Any:
        return a <= b

    def total(self, parts: list[tuple[int, Any]]) -> Any:
        z3 = self.z3
        return z3.Sum(*[z3.If(cond, z3.IntVal(_numeral(c)), z3.IntVal(0)) for c, cond in parts]) if parts else z3.IntVal(0), z3.IntVal(0)

    def _bin(self, e: Bin, a: Any, b: Any) -> tuple[Any, list[Any]]:
        z3 = self.z3
        top = z3.IntVal(1 << WIDTH)
        op = e.op
        if op == "+":
            return a + b, [a + b < top]
        if op == "-":
            return a - b, [a >= b]
        if op == "*":
            return a * b, [a * b < top]
        if op in ("<<", ">>"):
            k = _const_value(e.b)
            if k is None or k >= WIDTH:
                raise _NotLinearError
            return (a * (1 << k), [a * (1 << k) < top]) if op == "<<" else (a / (1 << k), [])
        if op == "%" and self.fast_mod:
            return z3.If(a < b, a, a - b), [b != 0, z3.Or(a < b, a - b < b)]
        if op in ("//", "%") and _const_value(e.b) not in (None, 0):
            return (a / b if op == "//" else a % b), []
        if op in ("//", "%") and _const_value(e.b) == 0:
            # undefined, as the bit-vector encoding's ``b != 0`` says: ``_linear_ok`` admits no such
            # expression of the gadget, but an instance of ``assume`` unwound through a product by 0
            # (``P(i·0, q)`` reaches ``a`` at ``a // 0``) is one, and is then not asserted
            return z3.IntVal(0), [z3.BoolVal(False)]
        raise _NotLinearError


class _NotLinearError(Exception):
    """An index expression outside the linear fragment (use the bit-vector encoding)."""


def _const_value(e: IExpr) -> int | None:
    try:
        from symverify.kernel.parametric.expr import vars_i

        return e.eval({}) if not vars_i(e) else None
    except ParametricError:
        return None


def _linear_ok(e: IExpr) -> bool:
    if isinstance(e, Bin):
        if e.op == "*" and _const_value(e.a) is None and _const_value(e.b) is None:
            return False
        if e.op in ("<<", ">>", "//") and _const_value(e.b) is None:
            return False
        if (e.op in ("<<", ">>") and (_const_value(e.b) or 0) >= WIDTH) or (e.op == "//" and _const_value(e.b) == 0):
            return False  # outside what _IntEnc._bin encodes (constant shifts below WIDTH, // by a nonzero constant)
        if e.op in ("&", "|", "^"):
            return False
        return _linear_ok(e.a) and _linear_ok(e.b)
    if isinstance(e, Ite):
        return _linear_c(e.cond) and _linear_ok(e.a) and _linear_ok(e.b)
    return True


def _linear_c(c: Cond) -> bool:
    if isinstance(c, Cmp):
        return _linear_ok(c.a) and _linear_ok(c.b)
    if isinstance(c, Pred):
        return all(_linear_ok(x) for x in c.idx)
    if isinstance(c, BoolOp):
        return all(_linear_c(x) for x in c.items)
    if isinstance(c, Not):
        return _linear_c(c.c)
    return True


def _is_linear(g: Gadget, terms: list[Term]) -> bool:
    """Every index expression of ``g`` (and of its terms, its case split and its families' sizes,
    which the range obligations read) is in :class:`_IntEnc`'s fragment. ``terms`` must hold the
    spec's terms with ``keep_zero`` and the layers' are read so (:func:`value_terms`): the
    definedness checks read those, and ``where(c, 0)`` has no term of its value but its ``c``."""
    es: list[IExpr] = [g.rows, g.cols, *(x for size in g.families.values() for x in size)]
    cs: list[Cond] = [g.where, g.care, g.entry, g.assume, *g.cases]
    for pl in g.layers:
        for tp in pl.W + pl.h:
            es.append(tp.src)
            cs.append(tp.guard)
            terms = terms + value_terms(tp.value, None, keep_zero=True)
        terms = terms + value_terms(pl.b1, None, keep_zero=True) + value_terms(pl.b2, None, keep_zero=True)
    for t in terms:
        cs.append(t.guard)
        es += [x for a in t.atoms for x in a.idx]
    return all(_linear_ok(e) for e in es) and all(_linear_c(c) for c in cs)


def _defined_terms(enc: _Enc, ts: list[Term]) -> list[tuple[Any, str]]:
    """Definedness of each term: its guard, and its atoms' indices where the guard holds."""
    z3 = enc.z3
    out = []
    for t in ts:
        enc.tick("definedness of the terms")
        g, okg = enc.cond(t.guard)
        oks = [enc.ix(x)[1] for a in t.atoms for x in a.idx]
        out.append((z3.And(okg, z3.Implies(g, z3.And(*oks))), f"term guard {t.guard} with atoms {[(a.kind, [str(x) for x in a.idx]) for a in t.atoms]}"))
    return out


def _layer_definedness(enc: _Enc, g: Gadget) -> list[tuple[Any, str]]:
    z3 = enc.z3
    out = []
    for k, pl in enumerate(g.layers):
        for name, taps in (("W", pl.W), ("h", pl.h)):
            for n, t in enumerate(taps):
                enc.tick("definedness of the layers")
                c, okc = enc.cond(t.guard)
                oks = [enc.ix(t.src)[1]] + [ok for ok, _ in _defined_terms(enc, value_terms(t.value, None, keep_zero=True))]
                out.append((z3.And(okc, z3.Implies(c, z3.And(*oks))), f"layer {k} {name} tap {n} ({t.src} where {t.guard})"))
        for name in ("b1", "b2"):
            out += [(ok, f"layer {k} {name}: {what}") for ok, what in _defined_terms(enc, value_terms(getattr(pl, name), None, keep_zero=True))]
    return out


def _check_arities(g: Gadget, ts: list[Term]) -> None:
    """Each weight family is used with one number of indices (its declared one, if declared):
    the key encoding pads shorter index tuples with zeros, so ``B[x]`` and ``B[x, 0]`` must not
    both occur — they are different symbols in the instances."""
    seen: dict[str, int] = {k: len(v) for k, v in g.families.items()}
    for pl in g.layers:  # with ``keep_zero``: ``fam("B", i, q) * 0`` reads its member too
        for tp in pl.W + pl.h:
            ts = ts + value_terms(tp.value, None, keep_zero=True)
        ts = ts + value_terms(pl.b1, None, keep_zero=True) + value_terms(pl.b2, None, keep_zero=True)
    for t in ts:
        for a in t.atoms:
            n = seen.setdefault(a.kind, len(a.idx))
            if n != len(a.idx):
                raise ParametricError(f"gadget {g.name}: family {a.kind} is used with {len(a.idx)} indices and with {n}; "
                                      "expected one number of indices per family")


def _assignment(z3: Any, model: Any, enc: _Enc, names: list[str]) -> dict[str, int]:
    return {n: model.eval(enc.vars[n], model_completion=True).as_long() for n in names}


def _scale(ts: list[Term]) -> int:
    den = 1
    for t in ts:
        den = den * t.coef.denominator // math.gcd(den, t.coef.denominator)
    return den


def _recheck(g: Gadget, params: dict[str, int], i: int, q: int,
             preds: Mapping[str, Any] | None = None) -> tuple[bool | None, str]:
    """Instantiate at ``params`` and compare output cell ``(i, q)`` with the spec exactly, on
    symbolic inputs and family members, each atom its own free symbol (``in[r][c]``, ``name[i]…``).
    With free predicates (``preds``: callables read off z3's model) the instance must satisfy
    ``assume`` at every cell, else the witness cannot be confirmed (None). Every read of the
    instance (its sizes, the check of ``assume``, the spec, the layers) goes through one view of
    ``preds`` and of the input read once per point (``concrete.read_once``): all of them read the
    one placement and the one input that the comparison is about."""
    from symverify.kernel.ir.scalar import is_zero, sym
    from symverify.kernel.parametric.concrete import (
        cell_value,
        entry_state,
        failing_cells,
        instance_model,
        read_once,
        sizes,
        spec_at,
    )
    from symverify.kernel.parametric.expr import predicates

    # distinct atoms get distinct symbols: ``in[r][c]`` for the input, ``name[i][j]…`` for a family
    # member (``family_symbol``; names are identifiers and ``in`` is reserved: no two atoms share one)
    def atoms(r: int, c: int) -> Any:
        return sym(f"in[{r}][{c}]")

    state = read_once({"in": atoms})["in"]  # type: ignore[index]
    with predicates(read_once(preds) or {}):  # the sizes and ``where`` may read predicates too
        env, nn, dd = sizes(g, params)
        if preds and (nn * dd > RECHECK_CELLS or failing_cells(g, env, nn, dd, first=True)):
            return None, "the witness's placement does not satisfy the assumptions at every cell"
        want = spec_at(g, params, i, q, state)
        if want is None:  # care fails at the witness cell with this placement: nothing to confirm
            return None, "care does not hold at the witness's cell with its placement"
        if nn * dd <= RECHECK_CELLS:
            from symverify.kernel.semantics.evaluate import eval_model
            from symverify.kernel.semantics.rings import ScalarRing

            model = instance_model(g, params)
            u = entry_state(g, env, state)
            got = eval_model(model, [[u(r, c) for c in range(dd)] for r in range(nn)], ScalarRing())[i][q]
            how = "instance model, exact evaluation"
        else:
            got = cell_value(g, params, i, q, state)
            how = "cell-by-cell concrete interpretation"
    return not is_zero(got - want), f"output {got} ≠ spec {want} ({how})"


def _assume_nowhere(z3: Any, enc: _Enc, g: Gadget, base: list[Any], cell: list[Any], hyp: list[Any],
                    solver: Callable[[], Any], deadline: float) -> dict[str, int] | str | None:
    """A parameter value and a cell at which the instances of ``assume`` the statement reads
    (``hyp``: at the cell ``(i, q)``, at every cell its terms read and at the cells reached through
    an offset, :func:`_assumptions`: every premise of the identity query) hold for
    no predicate that also satisfies ``where`` and the cell's bounds there (``base``, ``cell``: a
    predicate may be read by them too) — a dict: no placement satisfies ``where`` and ``assume`` at
    every cell at that size, and a statement "for every placement" is about nothing there (an
    identity query could be unsat only because ``hyp`` is); None when there is none, or z3's answer
    when undecided.

    First the placement with every predicate false (valid at every cell for the library's gadgets:
    one query without quantifiers). Where that fails, each application of a predicate in those
    conditions is made a Boolean ``b_k`` of its own, tied to the others by functional consistency
    — ``args_k = args_l → b_k = b_l`` for two applications of one predicate (Ackermann's reduction:
    the valuations consistent so are exactly those some predicate gives) — and z3 decides
    ``∃ params, i, q: base ∧ cell ∧ ∀ b: ¬(consistent(b) ∧ (base ∧ cell ∧ hyp)[b])`` (outside the
    quantifier the predicates are free: some predicate satisfies ``where`` there, so the size is one
    the statement is about; an ``unknown`` is the verdict unknown). So ``P(i, q) ∧ ¬P(i + 0, q)``
    (one point written twice), instances closing an odd cycle ``P(r) ≠ P(r + 1 mod N)`` over the
    cells read, and ``where = P(0, 0)`` against ``assume = ¬P(i, q)`` are found. A placement is not
    shown to exist at every size (``assume`` at cells no term reads is not asked): what is shown is
    that no proof rests on a contradiction among the conditions it reads."""
    preds = {fn.get_id() for fn in enc.preds.values()}
    whole = z3.And(*base, *cell, *hyp)
    # every application of a predicate (z3 terms are hash-consed: one per distinct application)
    apps = [x for x in _subterms(z3, whole) if z3.is_app(x) and x.decl().get_id() in preds]
    s = solver()
    s.add(*cell, z3.Not(z3.substitute(whole, *[(x, z3.BoolVal(False)) for x in apps]) if apps else whole))
    r = s.check()
    if r == z3.unsat:
        return None
    def tick(n: int) -> None:  # the building below is quadratic in the applications: inside the budget
        if n % 1024 == 0 and time.perf_counter() > deadline:
            raise _DeadlineError("the time budget ran out while building the vacuity check of the assumptions")

    bs = [z3.Bool(f"assume!{k}") for k in range(len(apps))]  # not identifiers: no predicate or parameter has these names
    sub = list(zip(apps, bs))
    body = z3.substitute(whole, *sub) if sub else whole
    ids = {x.get_id() for x in apps}
    args: list[list[Any]] = []
    for n_app, x in enumerate(apps):  # an argument is rewritten only where an application is nested in it
        tick(n_app)
        args.append([z3.substitute(a, *sub) if any(y.get_id() in ids for y in _subterms(z3, a)) else a for a in x.children()])
    same: list[Any] = []
    for n_pair, (k1, k2) in enumerate(itertools.combinations(range(len(apps)), 2)):
        tick(n_pair)
        if apps[k1].decl().get_id() == apps[k2].decl().get_id():
            same.append(z3.Implies(z3.And(*[a == b for a, b in zip(args[k1], args[k2])]), bs[k1] == bs[k2]))
    if any(z3.is_app(x) and x.decl().get_id() in preds for x in _subterms(z3, body)):
        raise ProverError(f"∀-prover: an application of a predicate of {g.name} was left in its assumptions' vacuity check")
    left = deadline - time.perf_counter()
    if left <= 0:
        raise _DeadlineError("the time budget ran out before the next z3 query")
    s = z3.Solver()
    s.set("timeout", _ms(left))
    inner = z3.Not(z3.And(*same, body))
    s.add(*base, *cell, z3.ForAll(bs, inner) if bs else inner)
    r = s.check()
    if r == z3.unsat:
        return None
    if r == z3.sat:
        return _assignment(z3, s.model(), enc, [*enc.vars])
    return f"{r} ({s.reason_unknown()})"


_MAX_GAP_POINTS = 4
"""The most points :func:`_gap_free` takes free (each doubles the copies of ``care`` it asks about)."""


def _gap_free(z3: Any, enc: _Enc, g: Gadget, solver: Callable[[], Any], given: list[Any], care: Any,
              gaps: list[tuple[str, Pred]]) -> str | None:
    """None when ``care`` holds at some cell, and ``entry`` at some cell, under the instances of
    ``assume`` taken (``given``) **whatever** the predicates ``gaps`` name are at every point ``care``
    and ``entry`` read (``gaps``: points they read whose cells in ``assume`` :func:`_reaching` does not
    all find, each with why): each application of those predicates in ``care`` and ``entry`` is
    replaced by true and by false, every combination asked at once (at most :data:`_MAX_GAP_POINTS`
    applications). An instance not taken can fix only points some application of ``assume`` reaches
    incompletely, which are among those: such a cell is one that the instances read there allow,
    whatever the others say (``care = P(i, q) ∨ ¬P(i, q)`` is about something, whatever ``assume``
    reads). Else why not (the caller's verdict is then unknown)."""
    shown = "; ".join(why for why, _ in gaps[:3]) + (" …" if len(gaps) > 3 else "")
    reason = f"the cells at which {shown} are not all found (an argument not unwound: a bit operation, a remainder, " \
             "a cell variable read twice or by no argument, a product by a parameter that may be 0)"
    names = {p.name for _, p in gaps}
    apps = {x.get_id(): x for c in (g.care, g.entry) for p in _nodes(c) if isinstance(p, Pred) and p.name in names
            for x in (enc.cond(p)[0],)}
    if len(apps) > _MAX_GAP_POINTS:
        return f"{reason}; care and entry read those predicates at {len(apps)} points (at most {_MAX_GAP_POINTS} are taken free)"
    free = list(apps.values())
    for what, c in (("care", care), ("entry", None if str(g.entry) == "true" else enc.cond(g.entry)[0])):
        if c is None:
            continue
        every = z3.And(*[z3.substitute(c, *[(x, z3.BoolVal(bool(bits >> k & 1))) for k, x in enumerate(free)])
                         for bits in range(1 << len(free))])
        s = solver()
        s.add(*given, every)
        r = s.check()
        if r != z3.sat:
            return f"{reason}; no cell has {what} whatever those predicates are at the points it reads (z3 {r})"
    return None


def _witnessed(z3: Any, solver: Callable[[], Any], base: list[Any], extra: list[Any], care: Any, entry: Any) -> set[str]:
    """The existence checks of :func:`_decide` that one z3 model answers. ``given`` = ``base`` (the
    ranges and ``where``, which ``solver()`` asserts) ∧ ``extra`` (the cell's bounds and, with
    predicates, the instances of ``assume``); ``given ∧ care ∧ entry`` is asked once. Where z3 gives a
    model ``m`` that **satisfies** it (evaluated on ``m`` with ``model_completion``: a witness checked,
    not taken on trust), ``m`` satisfies ``given`` (a placement exists), ``given ∧ care`` (a care cell
    exists) and ``given ∧ entry`` (an entry cell exists): ``{"care", "entry"}``, the checks whose
    queries are sat, which are not asked again. Each check states the same as before. Anything else
    (unsat, unknown, a model that does not satisfy the formula) answers nothing (the empty set):
    every check then runs its own query, with its own verdict and message. This saves two z3 queries
    per gadget with predicates and one per gadget with an ``entry`` (about 0.2 s each on the H.16
    factor gadgets)."""
    s = solver()
    s.add(*extra, care, entry)
    if s.check() != z3.sat:
        return set()
    if not z3.is_true(s.model().eval(z3.And(*base, *extra, care, entry), model_completion=True)):
        return set()
    return {"care", "entry"}


def _subterms(z3: Any, e: Any) -> Iterator[Any]:
    """Every subterm of the z3 term ``e``, each once."""
    seen: set[int] = set()
    todo = [e]
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        yield x
        if z3.is_app(x):
            todo.extend(x.children())


def _assumptions(enc: _Enc, g: Gadget, terms: list[Term], nn: Any, dd: Any, low: Mapping[str, int],
                 mod_checked: bool) -> tuple[list[Any], Any, list[Any], list[tuple[str, Pred]]]:
    """Instances of ``assume`` at the cell ``(i, q)``, at every input cell the terms read (under
    the term's guard, inside the state) and at every cell whose instance reads a predicate point
    read in the terms (their guards and their atoms' indices), in ``care`` or in ``entry`` —
    wherever it stands in them, an ``ite`` inside a comparison's operand or a predicate's argument
    included (:func:`_cells_of`): sound, since ``assume`` holds at every cell of the state (an
    instance is asserted only where its cell is defined and inside the state). A cell read by
    ``care`` or ``entry`` gets its instance unconditionally, even where a term reads it under a guard
    first. Also the definedness of ``assume`` at ``(i, q)``. Third, apart: the instances at the
    cells whose application in ``assume`` reads a point ``care`` or ``entry`` reads through an offset
    (``assume = P(i + 1, q)`` reads ``(a, b)`` at ``(a − 1, b)``; :func:`_reaching`, ``low`` the
    least value of each parameter, ``mod_checked`` whether the encoding's definedness check is the one
    that holds every ``a mod b`` below ``2b``), unconditionally, for the existence checks and the identity query (sound, as every instance):
    without them a ``care`` that ``assume`` allows at no cell through such an application passed the
    existence checks, and the statement about nothing was proved; and the identity query's witness
    could sit at such a cell, which no placement has, so a wrong spec was ``unknown`` where another
    cell refutes it. The points only the terms read get no such instances (fewer true premises can
    only make the identity harder to prove): a gadget whose ``assume`` reads a predicate at an offset
    (``mul_stage``: ``V1(i − k, q)``) pays for a few instances only (8 there: its 1.6 s CPU, unchanged
    within the noise). Fourth: for each application of ``assume`` whose cells reaching such a point
    :func:`_reaching` does not all find, why (the existence checks may then miss an instance that
    forbids ``care``: :func:`_decide` asks for a cell where ``care`` and ``entry`` hold whatever the
    predicate is at those points, else makes a proof ``unknown``), with the point."""
    z3 = enc.z3
    a0, ok0 = enc.cond(g.assume)
    out = [a0]
    extra: list[Any] = []
    # the cells instantiated, each with whether its instance holds unconditionally (``care`` and
    # ``entry`` need one at the cells their predicates read: the existence checks ask for a cell
    # where they hold, and an instance under a term's guard is none where that guard is false)
    seen: dict[tuple[IExpr, IExpr], bool] = {}
    def at_cell(r: IExpr, c: IExpr, gz: Any, always: bool = False, into: list[Any] = out) -> None:
        if (r, c) in seen and (seen[r, c] or not always):
            return
        seen[r, c] = always
        enc.tick("the instances of assume")  # one copy of assume per cell read
        at, ok = enc.cond(subst_c(g.assume, {"i": r, "q": c}))
        (rz, okr), (cz, okc) = enc.ix(r), enc.ix(c)
        into.append(z3.Implies(z3.And(gz, okr, okc, enc.lt(rz, nn), enc.lt(cz, dd), ok), at))

    def preds_in(*xs: object) -> list[Pred]:
        """Every predicate application under ``xs``, nested ones too (``eq(ite(P(i + 1, q), 1, 0), 0)``
        reads ``P`` at ``(i + 1, q)`` as ``not P(i + 1, q)`` does)."""
        return [x for c in xs for x in _nodes(c) if isinstance(x, Pred)]

    patterns = [(x, _cell_vars(x)) for x in preds_in(g.assume)]
    for t in terms:
        for a in t.atoms:
            if a.kind == "in":
                at_cell(a.idx[0], a.idx[1], enc.cond(t.guard)[0])
        for p in preds_in(t.guard, *(a.idx for a in t.atoms)):
            for r, c in _cells_of(p, patterns):
                at_cell(r, c, z3.BoolVal(True))
    stated = preds_in(g.care, g.entry)
    for p in stated:
        for r, c in _cells_of(p, patterns):
            at_cell(r, c, z3.BoolVal(True), always=True)
    assume_reads = _cell_vars(g.assume)
    gaps: list[tuple[str, Pred]] = []
    for p in stated:  # after every cell above: the cells reached only through an offset go to ``extra``
        for pat in dict.fromkeys(x for x, _ in patterns):
            if pat.name != p.name or len(pat.idx) != len(p.idx):
                continue
            enc.tick("the cells reaching the points care and entry read")  # each pair inside the budget
            cells, complete = _reaching(p, pat, assume_reads, low, mod_checked)
            for r, c in cells:
                at_cell(r, c, z3.BoolVal(True), always=True, into=extra)
            if not complete and (gap := (f"assume's {pat} at the cells reading {p}", p)) not in gaps:
                gaps.append(gap)
    return out, ok0, extra, gaps


def _cells_of(p: Pred, patterns: list[tuple[Pred, set[str]]]) -> list[tuple[IExpr, IExpr]]:
    """The cells at which an instance of ``assume`` is taken for the application ``p`` read by the
    statement (``patterns``: the applications in ``assume``, each with the cell variables it reads). The arguments of a predicate of two
    arguments are a cell: ``(a, b)``. And for each application ``p.name(x_1, …, x_k)`` in
    ``assume`` of ``p``'s arity where some ``x_j`` is the row ``i`` or the channel ``q`` itself,
    the cell at which that application reads ``p``'s point: ``i = a_j`` at the first position that
    names it, 0 where no ``x_j`` is ``i``, ``q`` likewise (so ``assume = P(i)`` is instantiated at
    ``(r, 0)`` for ``P(r)``, ``assume = P(q, i)`` at ``(b, a)`` for ``P(a, b)``). Any cell would be sound
    (an instance is asserted only where its cell is defined and inside the state): these are the ones
    that constrain ``p``; :func:`_reaching` finds the others for the points ``care`` and ``entry`` read."""
    out = [(p.idx[0], p.idx[1])] if len(p.idx) == 2 else []
    for pat, used in patterns:
        if pat.name != p.name or len(pat.idx) != len(p.idx):
            continue
        at: dict[str, IExpr] = {}
        for x, a in zip(pat.idx, p.idx):
            if isinstance(x, Var) and x.name in ("i", "q"):
                at.setdefault(x.name, a)
        if at and used <= at.keys():  # each of ``i`` and ``q`` it reads named somewhere
            cell = (at.get("i", Lit(0)), at.get("q", Lit(0)))
            if cell not in out:
                out.append(cell)
    return out


_MAX_SOLUTIONS = 8
"""The most cells :func:`_reaching` takes for one point through one application of ``assume`` (and
the most values it takes of one variable, and the largest literal divisor whose remainders it enumerates);
past it the cells found are incomplete."""


def _reaching(p: Pred, pat: Pred, assume_reads: set[str], low: Mapping[str, int],
              mod_checked: bool = False) -> tuple[list[tuple[IExpr, IExpr]], bool]:
    """The cells ``(r, c)`` at which the application ``pat`` of ``assume`` may read the point ``p``
    (same name and arity), and whether they are *all* of them: for every parameter value and every
    cell ``(r0, c0)`` of the state at which ``pat``'s arguments equal ``p``'s, a cell returned is
    defined there and equal to ``(r0, c0)`` in the variables ``assume`` reads (``assume_reads``; a variable it
    does not read is put at 0, where its instance is the same). An instance at any cell is sound (it is
    asserted only where its cell is defined and inside the state); completeness is what lets the
    existence checks refuse a ``care`` that ``assume`` allows at no cell. Each cell variable is solved
    from an argument reading no other unsolved one (:func:`_unwind`, which normalises it first:
    ``i + i − i + 1`` is ``i + 1``); the variables already solved are put in (``P(i + q + 1, q)``). Not
    complete: a variable ``assume`` reads that no argument determines (``P(q)`` with ``i`` read
    elsewhere in ``assume``, ``P(i·0, q)``), unless an argument reading no cell variable differs from the
    point's by a nonzero constant (``P(0, q)`` never reaches ``(2, b)``), or one :func:`_unwind` finds
    incomplete (``P(i ^ 1, q)``), or more than :data:`_MAX_SOLUTIONS` cells."""
    forms = [normal(x) for x in pat.idx]
    for f, a in zip(forms, p.idx):  # a point no cell reaches: an argument constant in the cell off by a constant
        fa = normal(a)
        if f is not None and fa is not None and not cell_vars(f) and (k := constant(_sub(f, fa))) is not None and k != 0:
            return [], True
    need = assume_reads | _cell_vars(pat)
    cells: list[tuple[IExpr, IExpr]] = []

    def go(known: dict[str, IExpr]) -> bool:
        unsolved = need - known.keys()
        if not unsolved:
            cell = (known.get("i", Lit(0)), known.get("q", Lit(0)))
            if cell not in cells:
                cells.append(cell)
            return len(cells) <= _MAX_SOLUTIONS
        best: tuple[list[IExpr], bool, str] | None = None
        for x, f, a in zip(pat.idx, forms, p.idx):
            vs = (cell_vars(f) if f is not None else _cell_vars(x)) - known.keys()
            if len(vs) != 1:
                continue
            (v,) = vs
            rows, complete = _unwind(x, a, v, known, low, mod_checked)
            if best is None or (complete and not best[1]):
                best = (rows, complete, v)
            if complete:
                break
        if best is None:
            return False
        rows, complete, v = best
        for r in rows[:_MAX_SOLUTIONS]:
            complete = go({**known, v: r}) and complete
        return complete and len(rows) <= _MAX_SOLUTIONS

    complete = go({})
    return cells[:_MAX_SOLUTIONS], complete and len(cells) <= _MAX_SOLUTIONS


def _sub(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, 0) - c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def _unwind(x: IExpr, a: IExpr, v: str, known: Mapping[str, IExpr], low: Mapping[str, int],
            mod_checked: bool = False) -> tuple[list[IExpr], bool]:
    """Values ``r`` of the cell variable ``v`` at which the argument ``x`` (reading no unsolved cell
    variable but ``v``; ``known`` the solved ones) may equal ``a``, and whether they are all of them
    (every ``r0`` with ``x(r0) = a``, defined, is one of them where it is defined). ``x`` is first
    normalised (:func:`~symverify.kernel.parametric.normal.normal`): ``x = Q·v + R`` with ``Q``, ``R``
    not reading ``v`` gives ``r = (a − R) // Q`` (the numerator written ``(a + R⁻) − R⁺``, undefined exactly
    where it is negative; ``//`` left out where ``Q = 1``, negated where ``Q``'s coefficients are all negative;
    complete where ``Q`` is a nonzero constant, or a sum of positive multiples of parameters whose
    range starts at 1 or more: ``Q ≠ 0`` there); ``x = Q·A + R`` with ``A`` an atom reading ``v`` is ``A``
    unwound at ``t = (a − R) // Q``: an ``ite`` is each branch put in its place (both complete: complete),
    ``u // k`` and ``u >> log2 k`` with a literal ``k ≤`` :data:`_MAX_SOLUTIONS` are ``u`` at ``t·k + j``
    for every ``j < k`` (complete), by another ``e`` not reading ``i`` or ``q`` ``u`` at ``t·e`` (not
    complete); ``u mod e`` (``e`` not reading ``i`` or ``q``) is ``u`` at ``t`` and at ``t + e``, complete where
    ``mod_checked``: the definedness check then showed ``u < 2e`` wherever it is evaluated (the conditional
    subtraction's condition), so ``u`` is one of the two (``P((i + 1) % N, q)`` reads ``(a, b)`` at ``a − 1``
    and ``a + N − 1``). ``Q`` with coefficients of both signs (``(N − 1)·i``) gives the cell where ``Q > 0``, not
    complete; a coefficient no literal holds (``≥ 2^64``) gives nothing. Anything else (``v`` in two atoms or squared, a bit operation): nothing,
    not complete. Where ``x`` at ``r`` is not ``a`` (``2·i`` at ``a // 2`` for an odd ``a``) the instance
    reads another point and only constrains less."""
    f = normal(x)
    if f is None:
        return [], False
    on = {m: c for m, c in f.items() if any(v in reads(y) for y in m)}
    rest = {m: c for m, c in f.items() if m not in on}
    ites = [y for m in on for y in m if isinstance(y, Ite) and v in reads(y)]
    if ites:  # each branch in its place
        rows: list[IExpr] = []
        complete = True
        for branch in (ites[0].a, ites[0].b):
            got, ok = _unwind(_replace(x, ites[0], branch, {}), a, v, known, low, mod_checked)
            rows += [r for r in got if r not in rows]
            complete = complete and ok
            if len(rows) > _MAX_SOLUTIONS:  # past the cap: not complete, and not explored further
                return rows, False
        return rows, complete
    atoms = {y for m in on for y in m if v in reads(y)}
    if len(atoms) != 1:
        return [], False
    (atom,) = atoms
    coef: Poly = {}
    for m, c in on.items():
        others = list(m)
        others.remove(atom)
        if atom in others:  # squared
            return [], False
        coef[monomial(*others)] = c
    if any(abs(c) >= 1 << WIDTH for c in (*rest.values(), *coef.values())):  # no literal holds it (x is undefined
        return [], False  # wherever such a term is not cancelled: the definedness check says where)
    sub = dict(known)
    rp, rn = split(rest)
    cp, cn = split(coef)
    if not cn:  # t = ((a + R⁻) − R⁺) // Q
        num, den, complete = _minus(_plus(a, rn, sub), rp, sub), to_iexpr(cp, sub), _nonzero(cp, low)
    elif not cp:  # t = (R⁺ − (a + R⁻)) // (−Q)
        num, den, complete = Bin("-", to_iexpr(rp, sub), _plus(a, rn, sub)), to_iexpr(cn, sub), _nonzero(cn, low)
    else:  # Q of either sign (``(N − 1)·i``): the cell where Q > 0 (undefined elsewhere), not known complete
        num, den, complete = _minus(_plus(a, rn, sub), rp, sub), Bin("-", to_iexpr(cp, sub), to_iexpr(cn, sub)), False
    t = num if den == Lit(1) else Bin("//", num, den)
    if isinstance(atom, Var):
        return [t], complete
    if isinstance(atom, Bin) and atom.op in ("//", ">>") and not _cell_vars(atom.b):
        fb = normal(atom.b)
        kb = None if fb is None else constant(fb)
        k = kb if atom.op == "//" else None if kb is None or not 0 <= kb < WIDTH else 1 << kb
        if k is not None and 1 <= k <= _MAX_SOLUTIONS:
            rows = []
            for j in range(k):
                got, ok = _unwind(atom.a, Bin("+", Bin("*", t, Lit(k)), Lit(j)) if j else Bin("*", t, Lit(k)), v, known, low,
                                  mod_checked)
                rows += [r for r in got if r not in rows]
                complete = complete and ok
                if len(rows) > _MAX_SOLUTIONS:
                    return rows, False
            return rows, complete
        scale = atom.b if atom.op == "//" else Bin("<<", Lit(1), atom.b)
        got, _ = _unwind(atom.a, Bin("*", t, subst_i(scale, sub) if sub else scale), v, known, low, mod_checked)
        return got, False
    if isinstance(atom, Bin) and atom.op == "%" and not _cell_vars(atom.b):  # u mod e = t: u = t, or u = t + e where u < 2e
        e = subst_i(atom.b, sub) if sub else atom.b
        rows = []
        for target in (t, Bin("+", t, e)):
            got, ok = _unwind(atom.a, target, v, known, low, mod_checked)
            rows += [r for r in got if r not in rows]
            complete = complete and ok
        return rows, complete and mod_checked and len(rows) <= _MAX_SOLUTIONS
    return [], False


def _plus(a: IExpr, p: Poly, sub: Mapping[str, IExpr]) -> IExpr:
    return a if not p else Bin("+", a, to_iexpr(p, sub))


def _minus(a: IExpr, p: Poly, sub: Mapping[str, IExpr]) -> IExpr:
    return a if not p else Bin("-", a, to_iexpr(p, sub))


def _nonzero(p: Poly, low: Mapping[str, int]) -> bool:
    """Whether ``p`` (nonnegative coefficients) is at least 1 for every parameter value: a positive
    constant term, or a monomial whose atoms are all parameters with ranges starting at 1 or more."""
    return any(all(isinstance(y, Var) and low.get(y.name, 0) >= 1 for y in m) for m in p)


def _replace(x: IExpr, old: IExpr, new: IExpr, memo: dict[int, IExpr]) -> IExpr:
    """``x`` with each subexpression equal to ``old`` (outside conditions) replaced by ``new``; each
    node once (by identity: ``memo``), so shared subexpressions stay shared."""
    hit = memo.get(id(x))
    if hit is not None:
        return hit
    if x is old or x == old:
        out = new
    elif isinstance(x, Bin):
        out = Bin(x.op, _replace(x.a, old, new, memo), _replace(x.b, old, new, memo))
    elif isinstance(x, Ite):
        out = Ite(x.cond, _replace(x.a, old, new, memo), _replace(x.b, old, new, memo))
    else:
        out = x
    memo[id(x)] = out
    return out


def _cell_vars(x: object) -> set[str]:
    """Which of ``i`` and ``q`` the expression ``x`` reads (each node visited once)."""
    return reads(x)


def _repaired(g: Gadget, params: dict[str, int], preds: Mapping[str, Any]) -> dict[str, Any] | None:
    """``preds`` (cell predicates) made False at every cell of the instance where ``assume`` fails
    with them, or None when there is no such cell or the instance is too large to scan. Every
    ``assume`` of the library only forbids cells, so the repaired placement usually satisfies it;
    :func:`_recheck` decides that again, and a refutation is reported only when it confirms."""
    from symverify.kernel.parametric.concrete import failing_cells, sizes
    from symverify.kernel.parametric.expr import predicates

    with predicates(dict(preds)):
        env, nn, dd = sizes(g, params)
        if nn * dd > RECHECK_CELLS:
            return None
        bad = set(failing_cells(g, env, nn, dd))
    if not bad:
        return None

    def drop(fn: Any) -> Any:
        return lambda *idx: idx not in bad and bool(fn(*idx))

    return {name: drop(fn) for name, fn in preds.items()}


def _completed(z3: Any, g: Gadget, params: dict[str, int], preds: Mapping[str, Any], points: Mapping[str, set[tuple[int, ...]]],
               deadline: float) -> dict[str, Any] | None:
    """A placement that agrees with ``preds`` (z3's witness) at ``points`` (every point its sizes,
    ``where``, ``care`` and terms read) and satisfies ``assume`` at every cell of the instance at
    ``params``, found by one SAT query: each point a predicate is read at is a Boolean, ``assume``
    at each cell a formula over them (the concrete interpretation of its index expressions, with
    its short-circuits: an operand is evaluated, and must be defined, only where those before it
    did not decide). None where no such placement exists, the instance has more than
    :data:`RECHECK_CELLS` cells, a predicate is read inside an index expression of ``assume``, or
    the budget is spent (no query is started after the deadline). Whatever it returns is only a
    candidate: :func:`_recheck` checks ``assume`` at every cell and the difference exactly."""
    from symverify.kernel.parametric.concrete import sizes
    from symverify.kernel.parametric.expr import predicates

    if any(isinstance(x, Ite) and _has_pred(x.cond) for x in _nodes(g.assume)):
        return None
    try:
        with predicates(dict(preds)):
            env, nn, dd = sizes(g, params)
    except ParametricError:
        return None
    if nn * dd > RECHECK_CELLS:
        return None
    atoms: dict[tuple[str, tuple[int, ...]], Any] = {}

    def tick() -> None:  # the building is inside the budget too: cells × the size of assume
        if time.perf_counter() > deadline:
            raise _DeadlineError("the time budget ran out while completing the witness's placement")

    def atom(name: str, idx: tuple[int, ...]) -> Any:
        if (name, idx) not in atoms:
            atoms[name, idx] = z3.Bool(f"place!{len(atoms)}")  # not identifiers: no other z3 constant has these names
        return atoms[name, idx]

    def enc(c: Cond, e: dict[str, int]) -> tuple[Any, Any]:
        """``c`` at ``e`` as (value, defined), over the predicate Booleans."""
        if isinstance(c, Cmp):
            try:
                return z3.BoolVal(c.eval(e)), z3.BoolVal(True)
            except ParametricError:
                return z3.BoolVal(False), z3.BoolVal(False)
        if isinstance(c, Pred):
            try:
                idx = tuple(x.eval(e) for x in c.idx)
            except ParametricError:
                return z3.BoolVal(False), z3.BoolVal(False)
            return atom(c.name, idx), z3.BoolVal(True)
        if isinstance(c, Not):
            v, ok = enc(c.c, e)
            return z3.Not(v), ok
        if isinstance(c, BoolOp):
            parts = [enc(x, e) for x in c.items]
            vals = [v for v, _ in parts]
            return (z3.And(*vals) if c.op == "and" else z3.Or(*vals)), _chain_ok(z3, c.op, parts, tick)
        raise ParametricError(f"condition: unknown node {type(c).__name__}")

    s = z3.Solver()
    for name, pts in points.items():
        for idx in pts:
            s.add(atom(name, idx) == z3.BoolVal(bool(preds[name](*idx))))
    try:
        for r in range(nn):
            for c in range(dd):
                tick()
                v, ok = enc(g.assume, {**env, "i": r, "q": c})
                s.add(ok, v)
    except _DeadlineError:
        return None
    left = deadline - time.perf_counter()
    if left <= 0:
        return None
    s.set("timeout", _ms(left))
    if s.check() != z3.sat:
        return None
    m = s.model()
    chosen = {key for key, b in atoms.items() if z3.is_true(m.eval(b, model_completion=True))}
    return {name: _member(chosen, name) for name in preds}


COMPLETION_SIZES = ((16, 4), (64, 64))
"""The sizes at which :func:`_placement_found` completes a placement cell by cell, smallest first:
``N' ≤ 16, d' ≤ 4``, then ``N', d' ≤ 64`` (at most 4096 cells, one instance of ``assume`` each). Beyond
them only a placement constant but at finitely many points is tried (:func:`_finitely_changed`)."""
_MAX_COMPLETIONS = 3
"""The most parameter values :func:`_placement_found` tries at each stage (each bound of
:data:`COMPLETION_SIZES`, then any size), per condition (``care``, ``entry``)."""


def _placement_found(z3: Any, enc: _Enc, g: Gadget, names: list[str], solver: Callable[[], Any], base: list[Any],
                     nn: Any, dd: Any, cell: list[Any], given: list[Any], care: Any, entry: Any | None,
                     deadline: float) -> str | None:
    """None when some parameter value in the ranges has a **placement satisfying ``assume`` at every
    cell** of its state (and ``where``) with ``care`` at some cell and ``entry`` at some cell (one
    placement for both, or one each); else why none was found (the caller's verdict is then unknown).

    The existence checks of :func:`_decide` take the instances of ``assume`` at finitely many cells
    (``given``): those show that some predicate satisfies them with ``care`` at a cell, not that it
    extends to every cell. A chain of instances may forbid it — ``(Q(i, q) ∨ ¬P(i, q)) ∧ (P(i + 1, q) ∨
    i + 1 ≥ N)`` forces ``P``, hence ``Q``, at every row from 1 on, and ``care = (i ≥ 1) ∧ ¬Q(i, q)`` holds
    in no placement, while the instances at the cells ``care`` reads and at those reaching them allow
    it. So a *candidate* is asked first: a model of ``given`` with the conditions at the cell ``(i, q)``
    (all of them at one cell where it can, else the first one left), its state at most
    :data:`COMPLETION_SIZES`, then of any size. Each candidate is extended to a placement either way:

    * :func:`_finitely_changed`: a placement constant but at finitely many points, refined round by
      round from the cells where ``assume`` fails, at any size;
    * :func:`_complete_at` (states of at most 4096 cells): each predicate an unknown table, ``assume``
      asserted at every cell of the state, the conditions at cells left free.

    A candidate neither extends is blocked and another is asked, at most :data:`_MAX_COMPLETIONS`
    per stage and condition; none left, or the time budget spent (no query starts after the deadline:
    :class:`_DeadlineError`), the answer says what was tried."""
    v = enc.vars
    a0, ok_a = enc.cond(g.assume)
    pending = {"care": care, **({"entry": entry} if entry is not None else {})}
    tried: list[str] = []
    blocked: dict[str, list[Any]] = {what: [] for what in pending}  # the candidates that did not extend
    for bound in (*COMPLETION_SIZES, None):
        fails = dict.fromkeys(pending, 0)
        while pending:
            what = next(iter(pending))
            if fails[what] >= _MAX_COMPLETIONS:
                break
            small = [] if bound is None else [enc.le(nn, enc.const(bound[0])), enc.le(dd, enc.const(bound[1]))]
            m, at = None, [what]
            for group in ([list(pending), [what]] if len(pending) > 1 else [[what]]):
                s = solver()
                s.add(*cell, *given, *[pending[w] for w in group], *small, *blocked[what])
                r = s.check()
                if r == z3.sat:
                    m, at = s.model(), group
                    break
                if r != z3.unsat:
                    within = "" if bound is None else f" at N' ≤ {bound[0]}, d' ≤ {bound[1]}"
                    tried.append(f"no candidate for {what}{within}: z3 {r}")
            if m is None:
                break
            params = _assignment(z3, m, enc, names)
            size = (m.eval(nn, model_completion=True).as_long(), m.eval(dd, model_completion=True).as_long())
            cell_at = (m.eval(v["i"], model_completion=True).as_long(), m.eval(v["q"], model_completion=True).as_long())
            got = at if _finitely_changed(z3, enc, g, params, size, cell_at, (a0, ok_a), {w: pending[w] for w in at}, base,
                                          deadline) else []
            if not got and bound is not None:
                got = _complete_at(z3, enc, g, params, size, base, (a0, ok_a), {w: pending[w] for w in pending}, deadline)
            for w in got:
                pending.pop(w, None)
            if what in pending:
                fails[what] += 1
                tried.append(f"{params} ({size[0]}×{size[1]})")
                blocked[what].append(z3.Or(*[v[n] != enc.const(x) for n, x in params.items()]) if params else z3.BoolVal(False))
        if not pending:
            return None
    preds = ", ".join(sorted(enc.preds)) or "none"
    wants = " and ".join(f"{w} {g.care if w == 'care' else g.entry}" for w in pending)
    return (f"no placement of {preds} satisfying assume {g.assume} at every cell with {wants} at some cell was found "
            f"(parameter values tried: {'; '.join(tried) or 'none'}; completed cell by cell up to N' ≤ {COMPLETION_SIZES[-1][0]}, "
            f"d' ≤ {COMPLETION_SIZES[-1][1]}, beyond as a constant placement changed at the points read): the instances of "
            "assume at the cells the statement reads allow one, but a chain of its instances may forbid it")


_MAX_ROUNDS = 8
"""The most rounds :func:`_finitely_changed` refines its placement in (each one z3 query for the
values, one for a cell where ``assume`` fails)."""


def _finitely_changed(z3: Any, enc: _Enc, g: Gadget, params: dict[str, int], size: tuple[int, int],
                      cell_at: tuple[int, int], assume: tuple[Any, Any], conds: Mapping[str, Any], base: list[Any],
                      deadline: float) -> bool:
    """Whether a placement constant except at finitely many points satisfies ``assume`` at every cell
    of the state at ``params`` (of ``size``) and ``where``, with ``conds`` (z3 conditions over the
    cell) at ``cell_at``; found at any size. Each predicate is ``Π_P(x) = b_x`` at the points ``x``
    *noted*, ``d_P`` elsewhere (Booleans of z3). The formulas ``F`` the placement must satisfy
    (``where`` and the sizes with the parameters put in, the conditions at ``cell_at``, the instances of
    ``assume`` at the cells found below), with ``Π`` put for each predicate, are ground: z3 gives
    values to the ``b`` and ``d`` (none: no such placement, where no point of ``F`` is left un-noted; else
    every point of ``F`` is noted and the round is asked again). Then "``assume`` at every cell" with
    those values is one quantifier-free query, the cell free: unsat is the claim; a cell where it fails
    joins ``F`` (its points un-noted first, so the constants change before the points do). At most
    :data:`_MAX_ROUNDS` rounds. What is accepted is then checked by the concrete interpretation:
    ``where`` and the sizes, the conditions at ``cell_at`` and, on a state of at most 4096 cells,
    ``assume`` at every cell (:func:`failing_cells`); beyond, "at every cell" rests on the z3
    encoding of ``assume``, as the identity query does."""
    v = enc.vars
    fix = [(v[n], enc.const(x)) for n, x in params.items()]
    names = {fn.get_id(): name for name, fn in enc.preds.items()}
    a0, ok_a = assume
    whole = z3.And(ok_a, a0)
    nv, dv = size
    rows_, cols_ = enc.ix(g.rows)[0], enc.ix(g.cols)[0]
    here = [*fix, (v["i"], enc.const(cell_at[0])), (v["q"], enc.const(cell_at[1]))]
    formulas = [z3.substitute(x, *fix) if fix else x for x in (*base, rows_ == enc.const(nv), cols_ == enc.const(dv))]
    formulas += [z3.substitute(c, *here) for c in conds.values()]
    noted: dict[tuple[str, tuple[int, ...]], Any] = {}
    defaults = {name: z3.Bool(f"place!default!{name}") for name in enc.preds}  # not identifiers: no other constant has these names

    def points(f: Any) -> Iterator[tuple[str, tuple[int, ...]]]:
        """The points at which the ground formula ``f`` applies a predicate to values."""
        for x in _subterms(z3, f):
            name = names.get(x.decl().get_id()) if z3.is_app(x) else None
            if name is not None:
                args = [z3.simplify(a) for a in x.children()]
                if all(z3.is_int_value(a) or z3.is_bv_value(a) for a in args):
                    yield name, tuple(a.as_long() for a in args)

    def note(fs: list[Any]) -> bool:
        new = False
        for f in fs:
            for key in points(f):
                if key not in noted:
                    noted[key] = z3.Bool(f"place!{len(noted)}")
                    new = True
        return new

    def placed(f: Any, value: Callable[[Any], Any]) -> Any:
        """``f`` with each predicate ``Π`` (``value`` maps its Booleans to what is put for them)."""
        bodies = []
        for name, fn in enc.preds.items():
            args = [z3.Var(k, fn.domain(k)) for k in range(fn.arity())]
            body = value(defaults[name])
            for (n, idx), b in noted.items():
                if n == name:
                    body = z3.If(z3.And(*[a == enc.const(x) for a, x in zip(args, idx)]), value(b), body)
            bodies.append((fn, body))
        return z3.substitute_funs(f, *bodies) if bodies else f

    note(formulas)
    fixed = z3.substitute(whole, *fix) if fix else whole
    inside = [enc.le(enc.const(0), v["i"]), enc.le(enc.const(0), v["q"]), enc.lt(v["i"], enc.const(nv)), enc.lt(v["q"], enc.const(dv))]
    for _ in range(_MAX_ROUNDS):
        left = deadline - time.perf_counter()
        if left <= 0:
            raise _DeadlineError("the time budget ran out while extending a placement to every cell")
        s = z3.Solver()
        s.set("timeout", _ms(left))
        s.add(*[placed(f, lambda b: b) for f in formulas])
        r = s.check()
        if r != z3.sat:
            if r == z3.unsat and note(formulas):  # the points of the cells found get values of their own
                continue
            return False
        m = s.model()
        values = {key: bool(z3.is_true(m.eval(b, model_completion=True))) for key, b in noted.items()}
        consts = {name: bool(z3.is_true(m.eval(d, model_completion=True))) for name, d in defaults.items()}

        def fixed_value(b: Any, m: Any = m) -> Any:
            return z3.BoolVal(bool(z3.is_true(m.eval(b, model_completion=True))))

        left = deadline - time.perf_counter()
        if left <= 0:
            raise _DeadlineError("the time budget ran out while extending a placement to every cell")
        s = z3.Solver()
        s.set("timeout", _ms(left))
        s.add(*inside, z3.Not(placed(fixed, fixed_value)))
        r = s.check()
        if r == z3.sat:  # a cell where assume fails: its instance joins the formulas
            c = s.model()
            at = [(v["i"], c.eval(v["i"], model_completion=True)), (v["q"], c.eval(v["q"], model_completion=True))]
            formulas.append(z3.substitute(fixed, *at))
            continue
        if r != z3.unsat:
            return False
        place = {name: _valued(values, name, consts[name]) for name in enc.preds}
        return _placement_checks(g, params, size, place, dict.fromkeys(conds, cell_at))
    return False


def _valued(values: Mapping[tuple[str, tuple[int, ...]], bool], name: str, default: bool) -> Callable[..., bool]:
    """Predicate ``name`` as ``values`` gives it, ``default`` at the points it does not list."""
    return lambda *idx: values.get((name, idx), default)


def _complete_at(z3: Any, enc: _Enc, g: Gadget, params: dict[str, int], size: tuple[int, int], base: list[Any],
                 assume: tuple[Any, Any], conds: Mapping[str, Any], deadline: float) -> list[str]:
    """The names in ``conds`` (z3 conditions over the cell ``(i, q)``) for which a placement
    satisfying ``assume`` at every cell of the state at ``params`` (of ``size`` rows and channels, with
    ``where``: ``base``) has a cell where they hold: all of them in one placement, else the first alone
    (:func:`_placement_found`). Each found placement is re-checked by the concrete interpretation; one
    that does not check answers nothing."""
    v = enc.vars
    nv, dv = size
    if nv * dv > COMPLETION_SIZES[-1][0] * COMPLETION_SIZES[-1][1]:
        return []
    fix = [(v[n], enc.const(x)) for n, x in params.items()]
    a0, ok_a = assume
    s = z3.Solver()
    s.add(*[z3.substitute(x, *fix) if fix else x for x in base])
    rows_, cols_ = (enc.ix(g.rows)[0], enc.ix(g.cols)[0])
    s.add(*[z3.substitute(x, *fix) if fix else x for x in (rows_ == enc.const(nv), cols_ == enc.const(dv))])
    whole = z3.And(ok_a, a0)
    for r in range(nv):
        if time.perf_counter() > deadline:
            raise _DeadlineError("the time budget ran out while completing a placement at every cell")
        for c in range(dv):
            s.add(z3.substitute(whole, *fix, (v["i"], enc.const(r)), (v["q"], enc.const(c))))
    at: dict[str, tuple[Any, Any]] = {}
    targets: dict[str, Any] = {}
    for what, cond in conds.items():
        ci, cq = enc.fresh(f"place!{what}!i"), enc.fresh(f"place!{what}!q")  # not identifiers: no parameter has these names
        at[what] = (ci, cq)
        targets[what] = z3.And(enc.le(enc.const(0), ci), enc.le(enc.const(0), cq), enc.lt(ci, enc.const(nv)),
                               enc.lt(cq, enc.const(dv)), z3.substitute(cond, *fix, (v["i"], ci), (v["q"], cq)))
    names = list(conds)
    for group in ([names, names[:1]] if len(names) > 1 else [names]):
        left = deadline - time.perf_counter()
        if left <= 0:
            raise _DeadlineError("the time budget ran out before completing a placement at every cell")
        s.push()
        s.set("timeout", _ms(left))
        s.add(*[targets[w] for w in group])
        r = s.check()
        m = s.model() if r == z3.sat else None
        s.pop()
        if m is None:
            continue
        place = {name: _modelled(z3, m, enc, fn) for name, fn in enc.preds.items()}
        cells = {w: (m.eval(at[w][0], model_completion=True).as_long(), m.eval(at[w][1], model_completion=True).as_long())
                 for w in group}
        if _placement_checks(g, params, size, place, cells):
            return group
    return []


def _placement_checks(g: Gadget, params: dict[str, int], size: tuple[int, int], place: Mapping[str, Callable[..., bool]],
                      at: Mapping[str, tuple[int, int]]) -> bool:
    """Whether the placement ``place`` satisfies, by the concrete interpretation, ``where`` and the
    state's ``size`` at ``params``, ``care`` / ``entry`` (``at``'s names) at their cells ``at`` and, on a
    state of at most 4096 cells, ``assume`` at every cell (:func:`failing_cells`)."""
    from symverify.kernel.parametric.concrete import failing_cells, read_once, sizes

    try:
        with predicates(read_once(place) or {}):
            env, nv, dv = sizes(g, params)
            if (nv, dv) != size or not all((g.care if w == "care" else g.entry).eval({**env, "i": r, "q": c})
                                           for w, (r, c) in at.items()):
                return False
            small = nv * dv <= COMPLETION_SIZES[-1][0] * COMPLETION_SIZES[-1][1]
            return not (small and failing_cells(g, env, nv, dv, first=True))
    except ParametricError:
        return False


def _modelled(z3: Any, m: Any, enc: _Enc, fn: Any) -> Callable[..., bool]:
    """The predicate ``fn`` as z3's model ``m`` interprets it, at every point."""
    return lambda *idx: bool(z3.is_true(m.eval(fn(*[enc.const(x) for x in idx]), model_completion=True)))


def _member(chosen: set[tuple[str, tuple[int, ...]]], name: str) -> Callable[..., bool]:
    """Predicate ``name`` holding exactly at the points ``chosen`` lists for it."""
    return lambda *idx: (name, idx) in chosen


def _nodes(c: object) -> Iterator[object]:
    """Every expression node under ``c`` (a condition, an index expression or a tuple of them; each use once), without recursion."""
    todo: list[object] = [c]
    while todo:
        x = todo.pop()
        if isinstance(x, (tuple, list)):
            todo.extend(x)
        elif isinstance(x, (IExpr, Cond)):
            yield x
            todo.extend(getattr(x, f.name) for f in dataclasses.fields(x))  # type: ignore[arg-type]


def _has_pred(c: Cond) -> bool:
    return any(isinstance(x, Pred) for x in _nodes(c))


def _pred_fn(z3: Any, m: Any, enc: _Enc, fn: Any, points: set[tuple[int, ...]]) -> Any:
    """The predicate of z3's model at the points the witness's terms read, False elsewhere (a
    placement with fewer cells: every ``assume`` of the library only forbids cells)."""
    def value(*idx: int) -> bool:
        return idx in points and bool(z3.is_true(m.eval(fn(*[enc.const(x) for x in idx]), model_completion=True)))

    return value


def _pred_points(conds: list[Cond], exprs: list[IExpr], terms: list[Term], env: dict[str, int], names: list[str],
                 holds: Callable[[str, tuple[int, ...]], bool]) -> dict[str, set[tuple[int, ...]]]:
    """The points at which the predicates ``names`` are read at ``env`` by ``conds``, ``exprs`` and
    each term (its guard, then its atoms' indices where the guard holds), found by evaluating them
    with the concrete interpretation, each predicate answering ``holds`` and recording its point: so
    exactly as it reads them — ``&``, ``|`` and ``ite`` short-circuit (a predicate behind a false
    conjunct is not read: z3 leaves it unconstrained), a predicate inside an index expression is
    read. What is undefined at ``env`` is skipped."""
    out: dict[str, set[tuple[int, ...]]] = {}

    def reader(name: str) -> Callable[..., bool]:
        def read(*idx: int) -> bool:
            out.setdefault(name, set()).add(idx)
            return holds(name, idx)

        return read

    def visit(x: Cond | IExpr) -> bool:
        """Evaluate ``x`` (recording the points read): whether it is a condition that holds, or an
        index expression that is defined."""
        try:
            return x.eval(env) is not False
        except ParametricError:
            return False

    with predicates({name: reader(name) for name in names}):
        for c in conds:
            visit(c)
        for e in exprs:
            visit(e)
        for t in terms:
            if visit(t.guard):
                for a in t.atoms:
                    for y in a.idx:
                        visit(y)
    return out


def _sorted_perms(tags: list[int]) -> Iterator[tuple[int, ...]]:
    """Every permutation of ``range(len(tags))`` under which the tags are non-decreasing, in
    lexicographic order: the only permutations of a term's atoms that can equal a key whose slots
    are in non-decreasing tag order (module docstring). They list the slots of the least tag first
    (in any order among themselves), then the next tag's, and so on: generated group by group
    (the last group varying fastest, which is lexicographic order), not by filtering all ``deg!``
    permutations.

    >>> list(_sorted_perms([2, 1, 2]))
    [(1, 0, 2), (1, 2, 0)]
    """
    order = sorted(range(len(tags)), key=lambda k: tags[k])
    groups = [tuple(g) for _, g in itertools.groupby(order, key=lambda k: tags[k])]

    def perms(at: int) -> Iterator[tuple[int, ...]]:  # lazily (itertools.product would list each group's deg! first)
        if at == len(groups):
            yield ()
            return
        for head in itertools.permutations(groups[at]):
            for rest in perms(at + 1):
                yield head + rest

    yield from perms(0)


def _num(v: int) -> str:
    """``v`` as printed in a range: ``2^k`` or ``2^k − 1`` for large powers of two."""
    for k in range(10, WIDTH + 1):
        if v == 1 << k:
            return f"2^{k}"
        if v == (1 << k) - 1:
            return f"2^{k}−1"
    return str(v)


def _narrow_widths(g: Gadget, bounds: Mapping[str, tuple[int, int]]) -> list[int]:
    """The bit-vector widths tried before ``WIDTH`` (:data:`NARROW_WIDTH`): the least (at least 8)
    holding every parameter bound and the state's rows and channels at the top of the ranges, then
    ``NARROW_WIDTH``; none when a bound is not below ``2^NARROW_WIDTH``. Only a guess at what
    suffices: a width is used only where the definedness check shows that no value reaches ``2^w``."""
    top = {n: hi for n, (_, hi) in bounds.items()}
    if any(hi >= 1 << NARROW_WIDTH for hi in top.values()):
        return []
    try:
        size = max(g.rows.eval(top), g.cols.eval(top), *top.values())
    except ParametricError:
        size = 0
    w = max(8, size.bit_length())
    return [w, NARROW_WIDTH] if w < NARROW_WIDTH else [NARROW_WIDTH]


def _numeral(c: int) -> str:
    """``c`` as z3 reads a numeral: exact decimal text of any size up to
    :data:`symverify.ir.limits.MAX_INT_DIGITS` digits (z3's own ``str(c)`` stops at Python's 4300)."""
    return int_to_str(c, "a coefficient of the ∀ identity")


def prove_forall(g: Gadget, *, ranges: Mapping[str, tuple[int, int]] | None = None, timeout: float | None = None,
                 timeout_s: float | None = None) -> ForallResult:
    """Decide ``output(i, q) = spec(i, q)`` for every parameter value, cell, input and family value.

    ``ranges`` may narrow parameter ranges (e.g. to sizes outside an instance sweep). ``timeout``
    (seconds, default 60; ``timeout_s`` is the same bound under its older name) bounds all the z3
    queries of the call together: a positive, finite int, float or ``Fraction``, as ``verify`` reads
    its timeout (:func:`~symverify.kernel.provers.options.timeout_seconds`). The gadget is refused with :class:`ParametricError` where its
    definition is undefined or reads outside its ranges (module docstring).
    """
    if type(g) is not Gadget:  # a subclass could skip the checks its __post_init__ makes, or answer its fields otherwise
        sub = " (a subclass of Gadget: not the gadget its checks were made on)" if isinstance(g, Gadget) else ""
        raise ParametricError(f"prove_forall: expected a parametric Gadget, found {type(g).__name__}{sub}")
    # the gadget as its fields are now, checked by its constructor: one whose field was changed by
    # object.__setattr__ after it was built skipped those checks and kept the predicate names it had
    # cached (an assume read no predicate, or one never true, was then ignored: a refutation of a vacuous claim)
    g = dataclasses.replace(g)
    if timeout is not None and timeout_s is not None:
        raise ParametricError(f"prove_forall: give timeout or timeout_s (the same bound), not both; found {timeout!r} and {timeout_s!r}")
    named, asked = ("timeout_s", timeout_s) if timeout_s is not None else ("timeout", 60.0 if timeout is None else timeout)
    # verify's rule (timeout_seconds): an int, float or Fraction by its plain value (a subclass's own <, > and +,
    # NaN read as positive, decided the budget), finite here (the budget of every z3 query; None is 60 s)
    seconds = timeout_seconds(asked)
    if seconds is None:
        raise ParametricError(f"prove_forall {named}: {timeout_refusal(asked)}")
    if seconds == math.inf:
        raise ParametricError(f"prove_forall {named}: expected a positive, finite number of seconds (it bounds every z3 "
                              f"query; None is 60 s), found {safe_repr(plain_float(plain_int(asked)), 60)}")
    timeout_s = seconds
    try:  # the deadline is a float: an int past the largest float (10**400) overflowed in the sum below
        timeout_s = float(timeout_s)
    except OverflowError:
        raise ParametricError(f"prove_forall {named}: expected a positive number of seconds below 2^1024 (a float), "
                              f"found {show_int(cast(int, timeout_s))}") from None
    z3 = _z3()
    t0 = time.perf_counter()
    deadline = t0 + timeout_s
    names = [p.name for p in g.params]
    bounds = {p.name: (p.lo, p.hi) for p in g.params}
    try:  # a mapping, or a list or tuple of (name, (lo, hi)) pairs, read pair by pair (dict() kept the last of two)
        pairs = ([] if ranges is None else list(ranges.items()) if isinstance(ranges, Mapping)
                 else [tuple(x) for x in ranges] if isinstance(ranges, (list, tuple)) else None)
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or any(len(x) != 2 for x in pairs):
        raise ParametricError(f"prove_forall ranges: expected a mapping {{name: (lo, hi)}}, found {type(ranges).__name__} {safe_repr(ranges, 60)}")
    given: set[str] = set()
    for n, rng in pairs:
        n = plain_str(n)  # a str subclass as its characters: its own == and hash could name another parameter
        if n not in bounds:
            raise ParametricError(f"prove_forall ranges: unknown parameter {n!r} (parameters: {names})")
        if n in given:  # one of the two would be dropped silently
            raise ParametricError(f"prove_forall ranges: parameter {n!r} given twice; expected one range per parameter")
        given.add(n)
        if not (isinstance(rng, tuple) and len(rng) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in rng)):
            raise ParametricError(f"prove_forall ranges: {n} expected a pair (lo, hi) of ints, found {safe_repr(rng, 60)}")
        # an int subclass as its plain value: z3 reads a numeral's str(), which a subclass may answer otherwise
        lo, hi = (cast(int, plain_int(x)) for x in rng)
        if lo > hi:  # not "outside the declared range": a statement about no value of n
            raise ParametricError(f"prove_forall ranges: {n} ∈ [{show_int(lo)}, {show_int(hi)}] is empty; expected lo ≤ hi "
                                  f"inside the declared [{bounds[n][0]}, {bounds[n][1]}]")
        if not (bounds[n][0] <= lo <= hi <= bounds[n][1]):
            raise ParametricError(f"prove_forall ranges: {n} ∈ [{show_int(lo)}, {show_int(hi)}] is not inside the declared [{bounds[n][0]}, {bounds[n][1]}]")
        bounds[n] = (lo, hi)
    # the parts joined: a gadget without parameters showed ", at the cells where …" (and nothing at all)
    parts = [f"{n} ∈ [{_num(lo)}, {_num(hi)}]" for n, (lo, hi) in bounds.items()] or ["cells of the one instance (no parameters)"]
    if str(g.where) != "true":
        parts.append(str(g.where))
    if str(g.care) != "true":  # the claim is about these cells only: a care false at a whole size claims nothing there
        parts.append(f"at the cells where {g.care}")
    shown = ", ".join(parts)
    # the statement is the gadget's: no predicate of a caller's ``with predicates(...)`` block is read
    # (one made ``i << ite(P(0, 0), 0, 1)`` a constant shift to the choice of the integer encoding)
    token = _PREDICATES.set({})
    try:
        with expansion_budget(lambda: time.perf_counter() > deadline):  # the building of the terms is inside the budget too
            r = _locked_decide(g, z3, names, bounds, shown, t0, deadline)
    except (_EncodingTimeoutError, ExpansionLimitError) as e:
        why = (f"timeout: {e}" if isinstance(e, _DeadlineError) else f"timeout while encoding the statement for z3 ({e})"
               if isinstance(e, _EncodingTimeoutError) else str(e))
        r = ForallResult(g.name, exact_comparison(None), shown, detail=why, seconds=time.perf_counter() - t0)
    finally:
        _PREDICATES.reset(token)
    # the hypotheses are part of what is stated: sealed with it (dataclasses.replace leaves the copy unsealed),
    # and so are the digests of the statement and construction decided
    return seal_outcome(dataclasses.replace(r, hypotheses=_hypotheses(g), digests=claim_digests(g, bounds)))


def claim_digests(g: Gadget, ranges: Mapping[str, tuple[int, int]]) -> tuple[str, str]:
    """``(statement, construction)``: what a ∀ claim about ``g`` for the parameter ``ranges``
    (``{name: (lo, hi)}`` for every parameter, in the gadget's order) is about, each a
    :func:`~symverify.kernel.provers.fingerprint.tree_digest` of the exact expression trees. The
    statement is ``spec``, ``where``, ``care``, ``entry``, ``assume`` and the ranges; the
    construction ``params`` (names and declared ranges), ``rows``, ``cols``, ``layers`` and
    ``families``. Left out: the gadget's ``name`` and ``doc`` (a side's digest has no name either)
    and its ``cases``, a hint to the prover that changes how the claim is decided, not what it says.
    Equal digests mean equal definitions, the same on every machine, run and seed."""
    nodes = NODE_TYPES | {Param}
    statement = (g.spec, g.where, g.care, g.entry, g.assume, tuple((n, lo, hi) for n, (lo, hi) in ranges.items()))
    return (tree_digest("gadget statement", statement, nodes),
            tree_digest("gadget construction", (g.params, g.rows, g.cols, g.layers, g.families), nodes))


def _locked_decide(g: Gadget, z3: Any, names: list[str], bounds: Mapping[str, tuple[int, int]], shown: str, t0: float,
                   deadline: float) -> ForallResult:
    """:func:`_decide` holding :data:`_Z3_LOCK` (waited for until the deadline: then
    :class:`_DeadlineError`). Every z3 reference of the call is dropped before the lock is released:
    the locals of the frames an exception carries are cleared and, while other threads run, the
    call's reference cycles are collected (a full collection: skipped in a single-threaded process,
    where it would only cost time), so no other thread's garbage collection frees a z3 term while a
    proof runs."""
    if not _Z3_LOCK.acquire(timeout=min(max(0.0, deadline - time.perf_counter()), threading.TIMEOUT_MAX)):
        raise _DeadlineError("the time budget ran out while another prove_forall call was using z3 "
                             "(z3 is not thread-safe: calls from several threads are decided one at a time)")
    try:
        return _decide(g, z3, names, bounds, shown, t0, deadline)
    except BaseException as e:
        traceback.clear_frames(e.__traceback__)  # the message and the lines stay, the z3 locals go
        raise
    finally:
        if threading.active_count() > 1:
            gc.collect()
        _Z3_LOCK.release()


def _hypotheses(g: Gadget) -> str:
    """What a verdict about ``g`` assumes besides its ranges, ``where`` and ``care`` (printed with them):
    the inputs are nonzero only where ``entry`` holds, the placements satisfy ``assume`` at every cell;
    "" when both are true."""
    parts = [f"input nonzero only where {g.entry}"] if str(g.entry) != "true" else []
    if str(g.assume) != "true":
        parts.append(f"a placement with {g.assume} at every cell")
    return " and ".join(parts)


class _Fallback:
    """A tactic solver for a query with predicates that hands the query to z3's default solver
    (with the time left) when the tactic fails rather than runs out of time (``reason_unknown``
    other than ``canceled`` or ``timeout``; e.g. a predicate the ackermannization cannot remove):
    the pipeline is then never less complete than the default solver it replaced."""

    def __init__(self, z3: Any, first: Any, default: Callable[[], Any]) -> None:
        self.z3, self.s, self.default = z3, first, default
        self.asserted: list[Any] = []

    def add(self, *xs: Any) -> None:
        self.asserted.extend(xs)
        self.s.add(*xs)

    def check(self) -> Any:
        r = self.s.check()
        if r == self.z3.unknown and self.s.reason_unknown() not in ("canceled", "timeout"):
            self.s = self.default()  # z3's default solver, nothing asserted, the time left as its timeout
            self.s.add(*self.asserted)
            r = self.s.check()
        return r

    def model(self) -> Any:
        return self.s.model()

    def reason_unknown(self) -> str:
        return str(self.s.reason_unknown())


class _EncodingTimeoutError(Exception):
    """The budget ran out while the statement was being built (before or between z3 queries)."""


class _DeadlineError(_EncodingTimeoutError):
    """The budget ran out before a z3 query was started: none is (the verdict is unknown)."""


def _decide(g: Gadget, z3: Any, names: list[str], bounds: Mapping[str, tuple[int, int]], shown: str, t0: float,
            deadline: float) -> ForallResult:
    """:func:`prove_forall` once its arguments are checked: the definedness checks, then the
    identity. Raises :class:`_EncodingTimeoutError` when the deadline passes while the z3 terms are built."""

    out, spec = output_terms(g), spec_terms(g)
    spec_read = spec_terms(g, keep_zero=True)  # what evaluating the spec reads (its definedness)
    has_preds = bool(g.predicate_names)  # anywhere: a predicate in ``where``, a size or a case is free too
    _check_arities(g, out + spec + spec_read)
    # First with ``a mod b`` as a conditional subtraction (fast to decide), valid only if every
    # ``mod`` has a < 2b where it is evaluated; when that fails, with the full bit-vector remainder.
    # Bit-vectors first NARROW_WIDTH bits wide where every bound fits (faster to bit-blast), then
    # WIDTH bits wide when a value (or a literal) does not fit there.
    linear = _is_linear(g, out + spec + spec_read)
    # the identity encodes every atom kind as a tag 1 … kinds (below): a narrow width holds those too
    tag_bits = (1 + len({a.kind for t in out + spec for a in t.atoms} - {"in"})).bit_length()
    narrow = sorted({max(w, tag_bits) for w in _narrow_widths(g, bounds)})
    encodings = ([(_IntEnc, True, WIDTH)] if linear else []) + [(_Enc, True, w) for w in narrow]
    encodings += [(_Enc, True, WIDTH), (_Enc, False, WIDTH)]
    for n_enc, (kind, fast, width) in enumerate(encodings):
        last = n_enc == len(encodings) - 1
        enc = kind(z3, [*names, "i", "q"], fast_mod=fast, width=width)
        enc.deadline = deadline
        v = enc.vars
        # ``_IntEnc`` is tried only when ``_is_linear`` admitted every expression, rows and
        # columns included, and it encodes whatever ``_linear_ok`` admits: no fallback here
        (nn, ok_n), (dd, ok_d) = enc.ix(g.rows), enc.ix(g.cols)
        (where, ok_w) = enc.cond(g.where)
        base = [z3.And(enc.le(enc.const(lo), v[n]), enc.le(v[n], enc.const(hi))) for n, (lo, hi) in bounds.items()]
        base += [ok_w, where]
        cell = [enc.le(enc.const(0), v["i"]), enc.le(enc.const(0), v["q"]), enc.lt(v["i"], nn), enc.lt(v["q"], dd)]

        def solver(base: list[Any] = base, kind: type[_Enc] = kind, tactic: bool = True) -> Any:
            # one budget for all queries together: each gets the time left; none is started once the
            # deadline has passed (the verdict is then unknown, never a query cut to nothing)
            left = deadline - time.perf_counter()
            if left <= 0:
                raise _DeadlineError("the time budget ran out before the next z3 query")
            ms = _ms(left)
            s: Any
            if tactic and kind is _Enc and BV_TACTIC and (not has_preds or "ackermannize_bv" in BV_TACTIC):
                # bit-vectors (predicates ackermannized): simplify, then bit-blast to SAT (faster
                # than z3's default strategy on the H.16 sequence axis; benchmarks/forall_split.py)
                s = z3.TryFor(z3.Then(*BV_TACTIC), ms).solver()
                if has_preds:
                    s = _Fallback(z3, s, lambda: solver([], kind, False))
            else:
                s = z3.Solver() if kind is _Enc else z3.SolverFor("QF_UFLIA" if has_preds else "QF_LIA")
                s.set("timeout", ms)
            s.add(*base)
            return s

        # ``where`` must be defined at every parameter value in the ranges (it is not a filter
        # that silently drops the values where it is undefined)
        s = solver(base[:len(bounds)])
        s.add(z3.Not(ok_w))
        r = s.check()
        if r != z3.unsat:
            if not last:
                continue
            if r == z3.sat:
                raise ParametricError(f"gadget {g.name}: its condition {g.where} is undefined at "
                                      f"{_assignment(z3, s.model(), enc, names)}")
            return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=f"definedness of the condition: z3 {r}",
                                seconds=time.perf_counter() - t0))
        s = solver()
        s.add(z3.Or(z3.Not(ok_n), z3.Not(ok_d), nn == 0, dd == 0))
        r = s.check()
        if r != z3.unsat:  # z3's unknown is no answer: the cells below would range over a wrapped size
            if not last:
                continue
            if r == z3.sat:
                raise ParametricError(f"gadget {g.name}: its state size {g.rows}×{g.cols} is undefined or 0 at "
                                      f"{_assignment(z3, s.model(), enc, names)}")
            return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=f"definedness of the state size: z3 {r} ({s.reason_unknown()})",
                                seconds=time.perf_counter() - t0))
        care, ok_care = enc.cond(g.care)
        # ``entry`` at every cell (as ``care``), read or not: the re-check builds the whole input
        # ``care`` at every cell on its own too: the spec terms below carry it only where the spec has terms
        checks = [(enc.cond(g.entry)[1], f"entry {g.entry}"), (ok_care, f"care {g.care}"), *_layer_definedness(enc, g),
                  *_defined_terms(enc, out)]
        checks += [(z3.And(ok_care, z3.Implies(care, ok)), f"spec {what}") for ok, what in _defined_terms(enc, spec_read)]
        for o in obligations(g):
            enc.tick("the obligations")
            gz, okg = enc.cond(o.guard)
            cz, okc = enc.cond(o.ok)
            checks.append((z3.And(okg, z3.Implies(gz, z3.And(okc, cz))), o.what))
        hyp, ok_assume, hyp_offsets, gaps = (_assumptions(enc, g, out + spec, nn, dd, {n: lo for n, (lo, _) in bounds.items()}, fast)
                                             if has_preds else ([], z3.BoolVal(True), [], []))
        checks.append((ok_assume, f"assume {g.assume}"))
        if enc.unfit and not last:  # a literal does not fit this width: its queries would read it as 0
            continue
        # the existence checks (a placement, a care cell, an entry cell) answered by one model where it can
        # the existence checks (and the identity) take the instances reached through an offset in ``assume`` too
        known = _witnessed(z3, solver, base, [*cell, *hyp, *hyp_offsets], care, enc.cond(g.entry)[0]) if has_preds else set()
        asked = 1 if has_preds else 0
        if has_preds and "care" not in known:
            asked += 1
            s = solver()
            s.add(*cell, *hyp, *hyp_offsets)
            if s.check() == z3.unsat:
                raise ParametricError(f"gadget {g.name}: its assumptions {g.assume} hold for no placement")
        s = solver()
        # ``assume`` at the cell is a premise only where it is defined: its own definedness is checked
        # for every placement (``instantiate`` evaluates it at every cell; the integer encoding read an
        # undefined ``i − 1 < …`` as a value, which made the premise hide the check)
        s.add(*cell, *([z3.Implies(ok_assume, hyp[0]), *hyp[1:]] if hyp else []))
        s.add(z3.Or(*[z3.Not(ok) for ok, _ in checks]))
        r = s.check()
        if r == z3.unsat and not enc.unfit:
            break
        if not last:
            continue
        if r == z3.sat:
            m = s.model()
            bad = next(what for ok, what in checks if z3.is_false(m.eval(ok, model_completion=True)))
            at = _assignment(z3, m, enc, [*names, "i", "q"])
            raise ParametricError(f"gadget {g.name}: undefined or out of range at {at}: {bad}")
        return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=f"definedness check: z3 {r} ({s.reason_unknown()})",
                            seconds=time.perf_counter() - t0))

    timings = {"definedness": round(time.perf_counter() - t0, 3)}
    if has_preds:  # ``assume`` must hold for some placement at every cell (else none exists at that size)
        # the instances reached through an offset too: the identity query takes them as premises,
        # so a contradiction among them must be refused here, not decide the identity
        nowhere = _assume_nowhere(z3, enc, g, base, cell, [*hyp, *hyp_offsets], solver, deadline)
        if isinstance(nowhere, dict):
            raise ParametricError(f"gadget {g.name}: vacuous statement: its assumptions {g.assume} hold for no placement "
                                  f"at cell ({nowhere['i']}, {nowhere['q']}) at {dict((n, nowhere[n]) for n in names)} (there and at the cells the "
                                  f"statement reads from it{f', with its condition {g.where}' if _has_pred(g.where) else ''}), "
                                  "so no placement exists at those sizes (restrict them with where=)")
        if nowhere is not None:
            return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=f"vacuity check of the assumptions: z3 {nowhere}",
                                seconds=time.perf_counter() - t0))
    # a statement about no parameter value or no cell is vacuous: refused, never "proved for all"
    if not has_preds:  # the model of the care check may show an entry cell too
        known = _witnessed(z3, solver, base, cell, care, enc.cond(g.entry)[0])
        asked += 1

    def vacuous(extra: Any, check: str, refusal: str, name: str) -> ForallResult | None:
        """Refuse the statement (``refusal``) when no cell with ``extra`` exists under the instances of
        ``assume``; an unknown verdict when z3 cannot tell; None when one exists (``name`` in
        ``known``: a model of the query is in hand, :func:`_witnessed`)."""
        nonlocal asked
        if name in known:
            return None
        asked += 1
        s = solver()
        s.add(*cell, *hyp, *hyp_offsets, extra)
        r = s.check()
        if r == z3.unsat:
            raise ParametricError(f"gadget {g.name}: vacuous statement: {refusal}")
        if r != z3.sat:
            return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=f"{check}: z3 {r} ({s.reason_unknown()})",
                                seconds=time.perf_counter() - t0))
        return None

    # with the instances of assume: no placement it allows may make care hold
    empty = vacuous(care, "vacuity check", f"no parameter value in {shown} and no cell with care {g.care} exist "
                    "(empty ranges, a condition never true, or care only where assume forbids)", "care")
    if empty is None and str(g.entry) != "true":  # an entry true at no cell of any size: a statement about the zero input only
        empty = vacuous(enc.cond(g.entry)[0], "vacuity check of the entry", f"its entry {g.entry} holds at no cell at any "
                        f"parameter value in {shown} (no input cell may be nonzero: a statement about the zero input only)", "entry")
    if empty is not None:
        return empty
    # the identity
    terms = out + [Term(t.guard, -t.coef, t.atoms) for t in spec]
    tags = {"in": 1}
    for t in terms:
        for a in t.atoms:
            tags.setdefault(a.kind, len(tags) + 1)
    deg = max((len(t.atoms) for t in terms), default=0)
    arity = max((len(a.idx) for t in terms for a in t.atoms), default=0)
    scale = _scale(terms)
    # the key's names are not identifiers, so no parameter (an identifier) can be the same z3 constant
    key = [[enc.fresh(f"key!{s_}!{k}") for k in range(arity + 1)] for s_ in range(deg)]

    def atom_vec(a: Any) -> list[Any]:
        if a is None:
            return [enc.const(0)] * (arity + 1)
        idx = [enc.ix(x)[0] for x in a.idx]
        return [enc.const(tags[a.kind]), *idx, *([enc.const(0)] * (arity - len(idx)))]

    summands: list[Any] = []
    coefs: list[int] = []
    for t in terms:
        enc.tick("the identity")
        padded = list(t.atoms) + [None] * (deg - len(t.atoms))
        vecs = [atom_vec(a) for a in padded]
        alts, seen_perm = [], set()
        tag_of = [0 if a is None else tags[a.kind] for a in padded]
        for n_perm, perm in enumerate(_sorted_perms(tag_of)):
            if n_perm % 256 == 0:  # a term of high degree in one family has up to deg! orderings
                enc.tick(f"the identity, terms of degree {deg}")
            sig = tuple(id(padded[k]) if padded[k] is not None else None for k in perm)
            if sig in seen_perm:
                continue
            seen_perm.add(sig)
            alts.append(z3.And(*[x == y for s_ in range(deg) for x, y in zip(vecs[perm[s_]], key[s_])]))
        gz = enc.cond(t.guard)[0]
        coefs.append(int(t.coef * scale))
        summands.append(z3.And(gz, z3.Or(*alts)) if alts else gz)
    diff, zero = enc.total(list(zip(coefs, summands)))
    # the key's slots in non-decreasing tag order (module docstring)
    key_sorted = [enc.le(key[k][0], key[k + 1][0]) for k in range(deg - 1)]
    if enc.unfit:  # never: the definedness checks encoded every literal, and the width holds every tag
        raise ProverError(f"∀-prover: a constant of {g.name} does not fit the {enc.width}-bit encoding")
    stats: dict[str, Any] = {"encoding": ("int" if kind is _IntEnc else f"bv{width}") + ("" if fast else "-urem"), "terms": len(terms), "degree": deg, "spec_terms": len(spec), "output_terms": len(out), "timings": timings,
                             "existence_queries": asked}
    def within(rows: int, cols: int) -> list[Any]:
        return [enc.le(nn, enc.const(rows)), enc.le(dd, enc.const(cols))]

    # the whole range is decided case by case when the gadget gives a split (``Gadget.cases``): each
    # case, then the cells none covers; the parts cover every model, so all unsat is unsat
    split = [enc.cond(c)[0] for c in g.cases]
    parts = [*split, z3.Not(z3.Or(*split))] if split else [z3.BoolVal(True)]

    def query(extra: list[Any], name: str) -> tuple[Any, Any]:
        s = solver()
        s.add(*cell, *hyp, *hyp_offsets, care, diff != zero, *key_sorted, *extra)
        r = s.check()
        timings[name] = round(time.perf_counter() - t0, 3)
        return s, r

    def refuted(m: Any) -> ForallResult:
        at = _assignment(z3, m, enc, [*names, "i", "q"])
        params = {n: at[n] for n in names}
        def holds(name: str, idx: tuple[int, ...], m: Any = m) -> bool:
            fn = enc.preds[name]
            return bool(z3.is_true(m.eval(fn(*[enc.const(x) for x in idx]), model_completion=True)))

        # the points the sizes, ``where``, ``care`` (the witness cell must stay a care cell) and the terms read
        points = _pred_points([g.where, g.care], [g.rows, g.cols], terms, at, list(enc.preds), holds)
        preds = {name: _pred_fn(z3, m, enc, fn, points.get(name, set())) for name, fn in enc.preds.items()}
        differs, detail = _recheck(g, params, at["i"], at["q"], preds)
        if differs is None and (repaired := _repaired(g, params, preds)) is not None:
            # z3 left the predicates free at cells no query constrained; the placement with those
            # cells removed is tried once, and only a confirmed difference is taken (a removed cell
            # may be one ``where`` or the sizes read: that placement is then no instance at all)
            try:
                again, why = _recheck(g, params, at["i"], at["q"], repaired)
            except ParametricError:
                again = None
            if again:
                differs, detail = again, why
        if differs is None and (completed := _completed(z3, g, params, preds, points, deadline)) is not None:
            # an ``assume`` that needs predicates true at cells no term reads (``P ∨ Q`` at every
            # cell): the witness's values at the points read, completed by one SAT query over the
            # instance's cells; again only a confirmed difference is taken
            again, why = _recheck(g, params, at["i"], at["q"], completed)
            if again:
                differs, detail = again, why
        if differs is None:
            return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=f"z3's witness {at} could not be confirmed: {detail}",
                                seconds=time.perf_counter() - t0, stats=stats))
        if not differs:
            raise ProverError(f"∀-prover: z3's counterexample {at} for {g.name} failed its exact re-check: {detail}")
        return seal_outcome(ForallResult(g.name, exact_comparison(False), shown, params, (at["i"], at["q"]), detail,
                            time.perf_counter() - t0, stats))

    # Each part of the whole range first: when all are unsat the gadget is proved, and the searches
    # at small sizes (which a proof implies are unsat too) are not run. At the first part that is
    # not unsat, the counterexample is searched at small sizes first (a small witness can be rebuilt
    # as a model), then that part's own model is taken; a part undecided with no small witness is
    # unknown: the verdicts of running the small searches first.
    for n_p, part in enumerate(parts):
        s, r = query([part], "identity3" if len(parts) == 1 else f"identity3.{n_p}")
        if r == z3.unsat:
            continue
        for n_q, (rows, cols) in enumerate(((16, 4), (128, 128))):
            try:  # no query after the deadline: the witness in hand, if any, is re-checked
                s_small, r_small = query(within(rows, cols), f"identity{n_q + 1}")
            except _DeadlineError:
                break
            if r_small == z3.sat:
                return refuted(s_small.model())
        if r == z3.sat:
            return refuted(s.model())
        what = "" if len(parts) == 1 else f" on case {n_p} of {len(parts)}"
        return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=f"z3 {r}{what}", seconds=time.perf_counter() - t0, stats=stats))
    if gaps and (why := _gap_free(z3, enc, g, solver, [*cell, *hyp, *hyp_offsets], care, gaps)) is not None:
        # the identity holds, but care (or entry) may hold only where an instance not taken forbids it
        return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=(
            f"the identity holds, but whether care and entry hold at some cell that assume allows is not decided: {why}; "
            "a statement about nothing is never proved"), seconds=time.perf_counter() - t0, stats=stats))
    if has_preds and str(g.assume) != "true":
        # the existence checks took the instances of assume at the cells the statement reads: a placement
        # satisfying it at every cell is completed at a small size (a chain of instances may forbid care)
        why = _placement_found(z3, enc, g, names, solver, base, nn, dd, cell, [*hyp, *hyp_offsets], care,
                               None if str(g.entry) == "true" else enc.cond(g.entry)[0], deadline)
        timings["placement"] = round(time.perf_counter() - t0, 3)
        if why is not None:
            return seal_outcome(ForallResult(g.name, exact_comparison(None), shown, detail=(
                f"the identity holds, but {why}; a statement about no placement is never proved"),
                seconds=time.perf_counter() - t0, stats=stats))
    return seal_outcome(ForallResult(g.name, exact_comparison(True), shown, seconds=time.perf_counter() - t0, stats=stats))


_ = Fraction
