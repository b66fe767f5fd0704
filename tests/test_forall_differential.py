"""Differential soundness test of the ∀-prover on random gadgets (docs/forall.md §3).

Random one- and two-layer gadgets of the user language (index expressions mixing sums, products
and shifts with constants, ``mod``, ``//``, bit tests, ``XOR``, ``2^k`` with a symbolic ``k``,
``ite``; conditions with and/or/not; causal and cyclic taps at lags given by index expressions;
biases; a weight family; ``where``, ``care``, ``entry`` and case splits; in one test a free
predicate ``P`` under a random ``assume``) over parameter ranges small enough (``N' ≤ 16``,
every parameter ≤ 6) that **every** instance in range is checked. Each is paired with a
specification derived from the gadget's own meaning (the layer formula
``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` written as a value expression, layer 2 reading layer 1 by
substitution), then either rewritten in ways that preserve its meaning (``e + 0``, ``(2e) // 2``,
``e mod (e + 1)``, reordered sums, ``where`` negated or split into cases, a lag written with
``ite`` or with ``mod``) or mutated (a read off by one, a coefficient changed, a guard weakened at
one parameter value, a ``mod`` that wraps only at the top of the range).

The oracle is written here, independently of the package: index expressions, conditions and
values are evaluated by the naive interpreter below (Python integers, the language's rule that a
value outside ``[0, 2^64)``, a shift by 64 or more or a division by zero is undefined) and the
layers by the layer formula over exact polynomials (dicts of monomials, one variable per input
cell and family member). For every parameter value (and every placement of ``P`` satisfying
``assume``) it gives the output and the spec at every ``care`` cell, or the reason the definition
is undefined or out of range there — evaluated twice: *eager* (both factors of every product:
everything the prover's definedness check may ask for) and *lazy* (as the concrete
interpretation evaluates). Then (:func:`judge`):

* ``proved`` ⇒ every instance agrees;
* ``refuted`` ⇒ its parameter value is in range and its cell a ``care`` cell where the oracle
  disagrees, and the package's exact evaluation (instance model on symbolic inputs, the spec by
  :func:`spec_at`) gives the same two values there;
* some instance disagrees ⇒ ``refuted``; every instance agrees ⇒ ``proved`` (z3 decides these
  statements: ``unknown`` is allowed only with its reason — z3 gave up, or a witness whose
  placement could not be completed);
* refused (``ParametricError``) ⇒ the eager oracle finds an undefined or out-of-range
  evaluation ("vacuous": no ``care`` cell in any instance, or for its ``entry`` no cell where
  ``entry`` holds; "no placement": none satisfies ``assume``); accepted ⇒ the lazy oracle finds
  none, and some ``care`` cell and some ``entry`` cell.

The default run draws *light* gadgets (each ``mod`` with an argument below twice the modulus, so
they are decided at the narrow width or over the integers, a fraction of a second each);
``SYMVERIFY_DIFF_EXAMPLES=n`` runs ``n`` gadgets per test, light and heavy (any ``mod``: decided
with the full 64-bit remainder, seconds each), with a fresh seed. Ranges crossing ``2^48`` (the
narrow width must fall back to 64 bits) are covered by hand-picked gadgets whose claim differs
only at the top of the range, checked at those large values by the oracle and the concrete
interpretation. The judge is itself tested: a prover patched to answer ``proved``, a narrow
encoding patched to wrap, and forged verdicts are all caught.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest

z3 = pytest.importorskip("z3")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symverify.kernel.ir.scalar import Sym, sym  # noqa: E402
from symverify.kernel.parametric.concrete import cell_value, entry_state, instance_model, spec_at  # noqa: E402
from symverify.kernel.parametric.expr import (  # noqa: E402
    TRUE,
    Bin,
    BoolOp,
    Cmp,
    Cond,
    Fam,
    IExpr,
    Inp,
    Ite,
    Lit,
    Not,
    Num,
    ParametricError,
    Pred,
    Value,
    Var,
    VIf,
    VProd,
    VSum,
    all_of,
    any_of,
    bit,
    eq,
    fam,
    ge,
    inp,
    ite,
    le,
    lt,
    mod_pow2,
    ne,
    pow2,
    pred,
    predicates,
    subst_c,
    subst_i,
    var,
    where,
)
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap  # noqa: E402
from symverify.kernel.parametric.symbolic import output_terms, spec_terms  # noqa: E402
from symverify.kernel.provers import forall  # noqa: E402
from symverify.kernel.provers.forall import NARROW_WIDTH, prove_forall  # noqa: E402
from symverify.kernel.semantics.evaluate import eval_model  # noqa: E402
from symverify.kernel.semantics.rings import ScalarRing  # noqa: E402

i, q, N, d, s, k = (var(x) for x in "iqNdsk")
TOP = 1 << 64
EXAMPLES = int(os.environ.get("SYMVERIFY_DIFF_EXAMPLES", "0"))
TIMEOUT_S = 10.0


# ---- the independent oracle ---------------------------------------------------------------------


Env = dict[str, Any]  # parameter and cell values; "@P": the placement (a set of cells) of the predicate P


class UndefinedError(Exception):
    """An index expression undefined, or a tap, lag, input cell or family index out of range."""


def ix(e: IExpr, env: Env) -> int:
    """``e`` at ``env`` with Python integers; :class:`UndefinedError` outside ``[0, 2^64)``, on a shift
    by 64 or more or a division by zero (docs/forall.md §1)."""
    if isinstance(e, Lit):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Ite):
        return ix(e.a, env) if cond(e.cond, env) else ix(e.b, env)
    assert isinstance(e, Bin)
    a, b = ix(e.a, env), ix(e.b, env)
    if e.op in ("<<", ">>") and b >= 64:
        raise UndefinedError(f"shift by {b} in {e}")
    if e.op in ("//", "%") and b == 0:
        raise UndefinedError(f"division by zero in {e}")
    r = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "<<": lambda: a << b, ">>": lambda: a >> b,
         "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b, "//": lambda: a // b, "%": lambda: a % b}[e.op]()
    if not 0 <= r < TOP:
        raise UndefinedError(f"{e} = {r} outside [0, 2^64)")
    return r


def cond(c: Cond, env: Env) -> bool:
    if isinstance(c, Cmp):
        a, b = ix(c.a, env), ix(c.b, env)
        return {"<": a < b, "<=": a <= b, "==": a == b, "!=": a != b}[c.op]
    if isinstance(c, BoolOp):  # short-circuit, as the language defines
        if c.op == "and":
            return all(cond(x, env) for x in c.items)
        return any(cond(x, env) for x in c.items)
    if isinstance(c, Pred):
        return (c.name, *(ix(x, env) for x in c.idx)) in env["@P"]
    assert isinstance(c, Not), c
    return not cond(c.c, env)


Poly = dict[tuple[tuple[str, int], ...], Fraction]  # monomial (sorted (variable, exponent)) → coefficient


def p_const(c: int | Fraction) -> Poly:
    return {(): Fraction(c)} if c else {}


def p_var(name: str) -> Poly:
    return {((name, 1),): Fraction(1)}


def p_add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) + c
        if not out[m]:
            del out[m]
    return out


def p_mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for (ma, ca), (mb, cb) in itertools.product(a.items(), b.items()):
        exps = dict(ma)
        for n, x in mb:
            exps[n] = exps.get(n, 0) + x
        m = tuple(sorted(exps.items()))
        out[m] = out.get(m, Fraction(0)) + ca * cb
        if not out[m]:
            del out[m]
    return out


def value(v: Value, env: Env, read: Callable[[int, int], Poly] | None, fam_size: dict[str, tuple[IExpr, ...]],
          eager: bool) -> Poly:
    """``v`` at ``env`` as a polynomial; input cells through ``read``. ``eager``: both factors of a
    product are evaluated (every evaluation the prover's definedness check can ask for); else the
    right one only where the left one is nonzero (the concrete interpretation)."""
    if isinstance(v, Num):
        return p_const(v.value)
    if isinstance(v, Fam):
        idx = [ix(x, env) for x in v.idx]
        for x, n in zip(idx, fam_size.get(v.name, ())):
            if x >= ix(n, env):
                raise UndefinedError(f"family index {v.name}{idx} outside its size")
        return p_var(v.name + "".join(f"[{x}]" for x in idx))
    if isinstance(v, Inp):
        assert read is not None
        return read(ix(v.row, env), ix(v.col, env))
    if isinstance(v, VSum):
        out: Poly = {}
        for x in v.items:
            out = p_add(out, value(x, env, read, fam_size, eager))
        return out
    if isinstance(v, VProd):
        a = value(v.a, env, read, fam_size, eager)
        if not a and not eager:
            return {}
        return p_mul(a, value(v.b, env, read, fam_size, eager))
    assert isinstance(v, VIf), v
    return value(v.a if cond(v.cond, env) else v.b, env, read, fam_size, eager)


@dataclass
class Instance:
    """The oracle at one parameter value (and placement, ``env["@P"]``): ``error`` (undefined / out
    of range), or the cells where ``care`` holds (``cares``) and those among them where output ≠
    spec (``wrong``, with both)."""

    env: Env
    error: str = ""
    cares: int = 0
    wrong: dict[tuple[int, int], tuple[Poly, Poly]] | None = None
    entries: int = 0  # the cells where ``entry`` holds (input cells that may be nonzero)


def run_instance(g: Gadget, env: Env, eager: bool) -> Instance:
    try:
        return _run(g, env, eager)
    except UndefinedError as e:
        return Instance(env, error=str(e))


def _run(g: Gadget, env: Env, eager: bool) -> Instance:
    nn, dd = ix(g.rows, env), ix(g.cols, env)
    if nn == 0 or dd == 0:
        raise UndefinedError(f"state {nn}×{dd}")

    def entry_read(r: int, c: int) -> Poly:
        if not (r < nn and c < dd):
            raise UndefinedError(f"input cell ({r}, {c}) outside the {nn}×{dd} state")
        return p_var(f"in[{r}][{c}]") if cond(g.entry, {**env, "i": r, "q": c}) else {}

    state = [[entry_read(r, c) for c in range(dd)] for r in range(nn)]
    entries = sum(1 for row in state for x in row if x)
    for pl in g.layers:
        w_taps: list[dict[int, Poly]] = []
        h_taps: list[dict[int, Poly]] = []
        for c in range(dd):
            e = {**env, "q": c}
            for taps, bound, out in ((pl.W, dd, w_taps), (pl.h, nn, h_taps)):
                acc: dict[int, Poly] = {}
                for t in taps:
                    if not cond(t.guard, e):
                        continue
                    src = ix(t.src, e)
                    if src >= bound:
                        raise UndefinedError(f"tap {t.src} = {src} outside [0, {bound})")
                    acc[src] = p_add(acc.get(src, {}), value(t.value, e, None, g.families, eager))
                out.append(acc)
        new = []
        for r in range(nn):
            row = []
            for c in range(dd):
                e = {**env, "i": r, "q": c}
                proj = value(pl.b1, e, None, g.families, eager)
                for p, wv in w_taps[c].items():
                    proj = p_add(proj, p_mul(wv, state[r][p]))
                conv = value(pl.b2, e, None, g.families, eager)
                for lag, hv in h_taps[c].items():
                    if r < lag and pl.mode == "causal":
                        continue
                    conv = p_add(conv, p_mul(hv, state[(r - lag) % nn][c]))
                row.append(p_mul(proj, conv))
            new.append(row)
        state = new
    inst = Instance(env, wrong={}, entries=entries)
    for r in range(nn):
        for c in range(dd):
            e = {**env, "i": r, "q": c}
            if not cond(g.care, e):
                continue
            inst.cares += 1
            want = value(g.spec, e, entry_read, g.families, eager)
            if want != state[r][c]:
                assert inst.wrong is not None
                inst.wrong[(r, c)] = (state[r][c], want)
    return inst


def param_values(g: Gadget, ranges: dict[str, tuple[int, int]] | None = None) -> list[dict[str, int]]:
    rs = [range(lo, hi + 1) for lo, hi in ((ranges or {}).get(p.name, (p.lo, p.hi)) for p in g.params)]
    return [dict(zip([p.name for p in g.params], vs)) for vs in itertools.product(*rs)]


@dataclass
class Oracle:
    """Every instance in range: ``undefined`` (eager evaluation: what the prover must refuse) and
    ``lazy_undefined`` (the concrete interpretation's evaluation: what an accepted gadget must
    never hit), the instances that disagree, and the number of ``care`` cells."""

    undefined: list[Instance]
    lazy_undefined: list[Instance]
    wrong: list[Instance]
    cares: int
    instances: dict[tuple[tuple[str, int], ...], list[Instance]]  # by parameter value: one per placement
    entries: int = 0  # the cells where ``entry`` holds, over every instance


def placements(g: Gadget, env: Env) -> list[Env]:
    """``env`` with every placement of the predicate ``P`` (a set of cells of the state) that
    satisfies ``assume`` at every cell; just ``env`` (no cell holds) for a gadget without one. An
    ``assume`` undefined somewhere raises :class:`UndefinedError`."""
    if "Pred(" not in repr((g.layers, g.spec, g.entry, g.care, g.assume, g.cases)):
        return [{**env, "@P": frozenset()}]
    nn, dd = ix(g.rows, env), ix(g.cols, env)
    cells = [("P", r, c) for r in range(nn) for c in range(dd)]
    out = []
    for bits in itertools.product((False, True), repeat=len(cells)):
        e = {**env, "@P": frozenset(x for x, b in zip(cells, bits) if b)}
        if all([cond(g.assume, {**e, "i": r, "q": c}) for r in range(nn) for c in range(dd)]):
            out.append(e)
    return out


def oracle(g: Gadget, envs: list[Env] | None = None) -> Oracle:
    """Every parameter value in range (or ``envs``) and every placement satisfying ``assume``."""
    undefined, lazy_undefined, wrong, cares, entries, by_env = [], [], [], 0, 0, {}
    for env in param_values(g) if envs is None else envs:
        try:
            if not cond(g.where, env):
                continue
            placed = placements(g, env)
        except UndefinedError as e:
            undefined.append(Instance(env, error=f"where, state or assume: {e}"))
            lazy_undefined.append(Instance(env, error=f"where, state or assume: {e}"))
            continue
        for e in placed:
            eager = run_instance(g, e, eager=True)
            lazy = eager if not eager.error else run_instance(g, e, eager=False)
            if eager.error:
                undefined.append(eager)
            if lazy.error:
                lazy_undefined.append(lazy)
                continue
            by_env.setdefault(tuple(sorted(env.items())), []).append(lazy)
            cares += lazy.cares
            entries += lazy.entries
            if lazy.wrong:
                wrong.append(lazy)
    return Oracle(undefined, lazy_undefined, wrong, cares, by_env, entries)


def _sym_poly(x: Any) -> Poly:
    if isinstance(x, Sym):
        return {m: Fraction(c) for m, c in x.terms}
    return p_const(x)


class _Families(dict):  # type: ignore[type-arg]
    """Every family: member ``name[i]…`` is the free symbol of that name (the oracle's naming)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str)

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return lambda *idx: sym(name + "".join(f"[{x}]" for x in idx))


def package_cell(g: Gadget, env: Env, cell: tuple[int, int]) -> tuple[Poly, Poly]:
    """Output and spec of ``cell`` by the package: the instance model evaluated exactly on
    symbolic inputs (the prover's re-check) and :func:`spec_at`, as polynomials (the placement
    ``env["@P"]``, if any, given as the predicate ``P``)."""
    params = {n: v for n, v in env.items() if n != "@P"}
    placed = env.get("@P", frozenset())
    with predicates({"P": lambda *idx: ("P", *idx) in placed}):
        model = instance_model(g, params, _Families())
        u = entry_state(g, params, lambda r, c: sym(f"in[{r}][{c}]"))
        out = eval_model(model, [[u(r, c) for c in range(model.inner_d)] for r in range(model.inner_n)], ScalarRing())
        want = spec_at(g, params, *cell, lambda r, c: sym(f"in[{r}][{c}]"), _Families())
    return _sym_poly(out[cell[0]][cell[1]]), _sym_poly(want)


# ---- the judge: a verdict against the oracle ------------------------------------------------------


def judge(g: Gadget, prove: Callable[[Gadget], Any] | None = None) -> str:
    """Run the ∀-prover on ``g`` and check its answer against the oracle (module docstring);
    returns the verdict (or ``"refused"``)."""
    o = oracle(g)
    try:
        res = (prove or (lambda h: prove_forall(h, timeout_s=TIMEOUT_S)))(g)
    except ParametricError as e:
        if "vacuous" in str(e) and "its entry" in str(e):  # no input cell may be nonzero in any instance
            assert not o.lazy_undefined and o.entries == 0, (str(e), o.lazy_undefined[:1], o.entries)
        elif "vacuous" in str(e):
            assert not o.lazy_undefined and o.cares == 0, (str(e), o.lazy_undefined[:1], o.cares)
        elif "hold for no placement" in str(e):
            assert not o.instances, f"refused, but a placement satisfies the assumptions at {next(iter(o.instances))}"
        else:
            assert o.undefined, f"refused, but every instance is defined: {e}"
        return "refused"
    if res.verdict == "unknown" and (res.detail.startswith("timeout") or "(timeout)" in res.detail or "(canceled)" in res.detail):
        return "unknown"  # the budget ran out (under load, at EXAMPLES' heavy gadgets): no claim, whatever the oracle says
    assert not o.lazy_undefined, f"{res.verdict} for a gadget undefined at {o.lazy_undefined[0].env}: {o.lazy_undefined[0].error}"
    assert o.cares > 0, f"{res.verdict} for a vacuous statement"
    assert o.entries > 0, f"{res.verdict} for a statement about the zero input only (entry holds at no cell)"
    if res.verdict == "proved":
        assert not o.wrong, f"FALSE PROOF: proved, but at {o.wrong[0].env} cells {o.wrong[0].wrong}"
    elif res.verdict == "refuted":
        params = dict(res.params)
        assert res.cell is not None, f"refuted without a witness cell: {res}"
        insts = o.instances.get(tuple(sorted(params.items())))
        assert insts is not None, f"refuted at {params}: not a parameter value in range"
        inst = next((x for x in insts if x.wrong and res.cell in x.wrong), None)
        assert inst is not None and inst.wrong is not None, f"BOGUS COUNTEREXAMPLE {params} {res.cell}: the oracle agrees there"
        got, want = package_cell(g, inst.env, res.cell)
        assert got != want and (got, want) == inst.wrong[res.cell], (params, res.cell, got, want, inst.wrong[res.cell])
    else:
        # z3 gave up, or (with a placement) its witness could not be completed to one satisfying assume
        assert res.verdict == "unknown" and ("z3 unknown" in res.detail or "could not be confirmed" in res.detail), str(res)
        return "unknown"
    if o.wrong:
        assert res.verdict == "refuted", f"{res.verdict}, but the oracle disagrees at {o.wrong[0].env}"
    else:
        assert res.verdict == "proved", f"{res.verdict}, but every instance agrees"
    return str(res.verdict)


# ---- random gadgets -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    """The parameters (``N``, ``d``, ``s`` and ``k``, each in a small range) and the state size."""

    params: tuple[Param, ...]
    rows: IExpr
    cols: IExpr
    nmax: int


@st.composite
def setups(draw: Any, placed: bool = False) -> Setup:
    """``placed``: a state of at most 3×2 cells (the oracle tries every placement of ``P``)."""
    if placed:
        nh, dh, sh, kh = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(0, 1)), draw(st.integers(0, 1))
        return Setup((Param("N", 1, nh), Param("d", 1, dh), Param("s", 0, sh), Param("k", 0, kh)), N, d, nh)
    nh, dh, sh, kh = draw(st.integers(2, 6)), draw(st.integers(1, 3)), draw(st.integers(0, 3)), draw(st.integers(0, 2))
    params = (Param("N", draw(st.integers(1, 2)), nh), Param("d", 1, dh), Param("s", 0, sh), Param("k", 0, kh))
    rows, nmax = draw(st.sampled_from([(N, nh), (N + s, nh + sh), (pow2(k) + N // 2, (1 << kh) + nh // 2)]))
    cols = draw(st.sampled_from([d, d + (k & 1)]))
    return Setup(params, rows, cols, nmax)


class Draw:
    """Hypothesis's ``draw`` and the kind of gadget drawn: ``heavy`` ones take every ``mod`` as it
    comes (the prover's conditional-subtraction ``mod`` then fails and it decides them with the full
    64-bit remainder, seconds each); light ones give each ``mod`` an argument below twice the modulus
    (decided at the narrow width or over the integers, a fraction of a second)."""

    def __init__(self, draw: Any, heavy: bool, placed: bool = False) -> None:
        self.draw, self.heavy, self.placed = draw, heavy, placed
        self.setup: Setup | None = None

    def __call__(self, strategy: Any) -> Any:
        return self.draw(strategy)


def clip(e: IExpr, bound: IExpr) -> IExpr:
    """``e`` where it is below ``bound``, else 0."""
    return ite(lt(e, bound), e, Lit(0))


def wrap(draw: Draw, e: IExpr, bound: IExpr) -> IExpr:
    """``e mod bound`` (with an argument below ``2·bound`` unless heavy)."""
    return e % bound if draw.heavy else clip(e, bound * 2) % bound


def iexprs(draw: Draw, names: tuple[str, ...], depth: int) -> IExpr:
    """An index expression over ``names`` mixing the language's operations (mostly defined)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(st.sampled_from(names).map(var), st.integers(0, 5).map(Lit)))
    a = iexprs(draw, names, depth - 1)
    op = draw(st.sampled_from(["+", "+c", "*c", "<<c", ">>c", "//c", "%c", "%v", "&", "|", "^", "pow2", "mod_pow2",
                               "ite", "-", "bit"]))
    c = draw(st.integers(1, 3))
    if op in ("+", "&", "|", "^", "-"):
        b = iexprs(draw, names, depth - 1)
        if op == "-" and not draw.heavy and draw(st.integers(0, 3)):
            return ite(le(b, a), a - b, a)  # defined (a light gadget is rarely refused)
        return {"+": a + b, "&": a & b, "|": a | b, "^": a ^ b, "-": a - b}[op]
    if op == "+c":
        return a + c
    if op == "*c":
        return a * c if draw(st.booleans()) else c * a
    if op == "<<c":
        return a << c
    if op == ">>c":
        return a >> c
    if op == "//c":
        return a // (c + 1)
    if op == "%c":
        return wrap(draw, a, Lit(c + 1))
    if op == "%v":
        v = draw(st.sampled_from([N, d, N + s]))
        return a % v if draw.heavy else (clip(a, v) + clip(iexprs(draw, names, depth - 1), v)) % v
    if op == "pow2":
        return a * pow2(k) if draw(st.booleans()) else a << k
    if op == "mod_pow2":
        return mod_pow2(a if draw.heavy else clip(a, pow2(k + 1)), k)
    if op == "bit":
        return ite(bit(a, draw(st.sampled_from([k, Lit(0), Lit(1)]))), Lit(1), Lit(0))
    return ite(conds(draw, names, depth - 1), a, iexprs(draw, names, depth - 1))


def conds(draw: Draw, names: tuple[str, ...], depth: int) -> Cond:
    kinds = ["cmp", "cmp", "bit", "and", "or", "not"] if depth > 0 else ["cmp", "bit"]
    kind = draw(st.sampled_from([*kinds, "pred", "pred"] if draw.placed else kinds))
    if kind == "pred":  # the placement P at a cell of the state
        assert draw.setup is not None
        row = i if "i" in names and draw(st.booleans()) else wrap(draw, iexprs(draw, names, 1), draw.setup.rows)
        col = q if draw(st.booleans()) else wrap(draw, iexprs(draw, names, 1), draw.setup.cols)
        return pred("P", row, col)
    if kind == "cmp":
        a, b = iexprs(draw, names, min(depth, 1)), iexprs(draw, names, min(depth, 1))
        return draw(st.sampled_from([lt, le, eq, ne]))(a, b)
    if kind == "bit":
        return bit(iexprs(draw, names, min(depth, 1)), draw(st.sampled_from([k, Lit(0), Lit(1)])))
    if kind == "not":
        return ~conds(draw, names, depth - 1)
    x, y = conds(draw, names, depth - 1), conds(draw, names, depth - 1)
    return all_of(x, y) if kind == "and" else any_of(x, y)


PQ = ("N", "d", "s", "k", "q")
PIQ = ("N", "d", "s", "k", "i", "q")


def nums(draw: Draw) -> Num:
    return Num(draw(st.sampled_from([1, 2, 3, -1, -2, Fraction(1, 2)])))


def values(draw: Draw, names: tuple[str, ...], families: bool) -> Value:
    kind = draw(st.sampled_from(["num", "num", "where", "fam"] if families else ["num", "num", "where"]))
    if kind == "num":
        return nums(draw)
    if kind == "fam":  # B[p] (one index) or, in a bias, C[r, q] (two: the key pads B's with 0)
        if "i" in names and draw(st.booleans()):
            assert draw.setup is not None
            return fam("C", wrap(draw, iexprs(draw, names, 1), draw.setup.rows), q)
        return fam("B", wrap(draw, iexprs(draw, names, 1), d)) * nums(draw) if draw(st.booleans()) else fam("B", q)
    other = nums(draw) if draw(st.booleans()) else Num(0)
    return where(conds(draw, names, 1), values(draw, names, families), other)


def guards(draw: Draw) -> Cond:
    return TRUE if draw(st.booleans()) else conds(draw, PQ, 1)


def layers(draw: Draw, setup: Setup, one_side: bool, families: bool) -> PLayer:
    """A random layer; ``one_side``: only one of its factors reads the state (two-layer gadgets keep
    their degree ≤ 4)."""
    reads = draw(st.sampled_from(["W", "h"])) if one_side else "Wh"
    w = tuple(tap(wrap(draw, iexprs(draw, PQ, 2), setup.cols), values(draw, PQ, families), guards(draw))
              for _ in range(draw(st.integers(0 if "h" in reads else 1, 2 if "W" in reads else 0))))
    h = tuple(tap(wrap(draw, iexprs(draw, PQ, 2), setup.rows), values(draw, PQ, families), guards(draw))
              for _ in range(draw(st.integers(0 if "W" in reads else 1, 2 if "h" in reads else 0))))
    return PLayer(W=w, b1=values(draw, PIQ, families), h=h, b2=values(draw, PIQ, families),
                  mode=draw(st.sampled_from(["causal", "cyclic"])))


# ---- specifications derived from the gadget's meaning --------------------------------------------


def subst_v(v: Value, sub: dict[str, IExpr]) -> Value:
    if isinstance(v, Inp):
        return Inp(subst_i(v.row, sub), subst_i(v.col, sub))
    if isinstance(v, Fam):
        return Fam(v.name, tuple(subst_i(x, sub) for x in v.idx))
    if isinstance(v, VSum):
        return VSum(tuple(subst_v(x, sub) for x in v.items))
    if isinstance(v, VProd):
        return VProd(subst_v(v.a, sub), subst_v(v.b, sub))
    if isinstance(v, VIf):
        return VIf(subst_c(v.cond, sub), subst_v(v.a, sub), subst_v(v.b, sub))
    return v


def meaning(g_layers: tuple[PLayer, ...], rows: IExpr, cyclic_as_mod: bool, causal_total: bool) -> Value:
    """The output cell ``(i, q)`` as a value over the input cells: the layer formula, each layer
    reading the previous one's value with its row and channel substituted. A lag is read as
    ``(i + N' − k) mod N'`` or with ``ite`` (cyclic), as ``i − k`` under ``i ≥ k`` or as the total
    ``ite(i ≥ k, i − k, 0)`` (causal: still defined where a mutation weakens the guard)."""
    read: Callable[[IExpr, IExpr], Value] = inp
    for pl in g_layers:
        def proj_conv(pl: PLayer = pl, read: Callable[[IExpr, IExpr], Value] = read) -> Value:
            proj = VSum((*(where(t.guard, t.value * read(i, t.src)) for t in pl.W), pl.b1))
            conv: list[Value] = []
            for t in pl.h:
                if pl.mode == "causal":
                    row = ite(ge(i, t.src), i - t.src, Lit(0)) if causal_total else i - t.src
                    conv.append(where(all_of(t.guard, ge(i, t.src)), t.value * read(row, q)))
                else:
                    row = (i + rows - t.src) % rows if cyclic_as_mod else ite(ge(i, t.src), i - t.src, i + rows - t.src)
                    conv.append(where(t.guard, t.value * read(row, q)))
            return proj * VSum((*conv, pl.b2))

        prev = proj_conv()
        read = lambda r, c, prev=prev: subst_v(prev, {"i": r, "q": c})  # noqa: E731
    return read(i, q)


def rewrite_i(draw: Draw, e: IExpr) -> IExpr:
    """``e`` with one semantics-preserving rewrite at a random node (values ≤ 2^20 here, so no
    rewrite below overflows)."""
    if isinstance(e, Bin) and draw(st.booleans()):
        if draw(st.booleans()):
            return Bin(e.op, rewrite_i(draw, e.a), e.b)
        return Bin(e.op, e.a, rewrite_i(draw, e.b))
    kind = draw(st.sampled_from(["+0", "*1", "2//2", "<<>>", "+-", "mod+1", "|0", "^0", "swap"]))
    if kind == "swap" and isinstance(e, Bin) and e.op in ("+", "*", "&", "|", "^"):
        return Bin(e.op, e.b, e.a)
    return {"+0": lambda: e + 0, "*1": lambda: 1 * e, "2//2": lambda: (e * 2) // 2, "<<>>": lambda: (e << 1) >> 1,
            "+-": lambda: (e + 3) - 3, "mod+1": lambda: e % (e + 1), "|0": lambda: e | 0, "^0": lambda: e ^ 0,
            "swap": lambda: 0 + e}[kind]()


def rewrite_c(draw: Draw, c: Cond) -> Cond:
    kind = draw(st.sampled_from(["notnot", "and1", "flip", "inside"]))
    if kind == "notnot":
        return ~~c
    if kind == "and1":
        return all_of(c, TRUE)
    if isinstance(c, Cmp):
        if kind == "flip" and c.op in ("==", "!="):
            return Cmp(c.op, c.b, c.a)
        if kind == "flip" and c.op == "<":
            return le(c.a + 1, c.b)
        return Cmp(c.op, rewrite_i(draw, c.a), c.b) if draw(st.booleans()) else Cmp(c.op, c.a, rewrite_i(draw, c.b))
    if isinstance(c, BoolOp) and c.items:
        n = draw(st.integers(0, len(c.items) - 1))
        return BoolOp(c.op, (*c.items[:n], rewrite_c(draw, c.items[n]), *c.items[n + 1:]))
    if isinstance(c, Not):
        return Not(rewrite_c(draw, c.c))
    return c


def rewrite_v(draw: Draw, v: Value, depth: int = 0) -> Value:
    """``v`` with semantics-preserving rewrites: of its index expressions and conditions, sums
    reordered, ``where`` negated or split into cases (``a ∧ b``: nested; ``a ∨ b``: two branches)."""
    if isinstance(v, Inp):
        return Inp(rewrite_i(draw, v.row), v.col) if draw(st.booleans()) else Inp(v.row, rewrite_i(draw, v.col))
    if isinstance(v, Fam):
        return Fam(v.name, tuple(rewrite_i(draw, x) for x in v.idx))
    if isinstance(v, VSum):
        items = [rewrite_v(draw, x, depth + 1) if draw(st.booleans()) else x for x in v.items]
        return VSum(tuple(draw(st.permutations(items)))) if draw(st.booleans()) else VSum((*items, Num(0)))
    if isinstance(v, VProd):
        return VProd(rewrite_v(draw, v.a, depth + 1), v.b) if draw(st.booleans()) else VProd(v.a, rewrite_v(draw, v.b, depth + 1))
    if isinstance(v, VIf):
        kind = draw(st.sampled_from(["neg", "split", "cond", "sum", "deeper"]))
        if kind == "neg":
            return VIf(~v.cond, v.b, v.a)
        if kind == "split" and isinstance(v.cond, BoolOp) and len(v.cond.items) == 2:
            x, y = v.cond.items
            if v.cond.op == "and":
                return VIf(x, VIf(y, v.a, v.b), v.b)
            return VIf(x, v.a, VIf(y, v.a, v.b))
        if kind == "cond":
            return VIf(rewrite_c(draw, v.cond), v.a, v.b)
        if kind == "sum":
            return VIf(v.cond, v.a, Num(0)) + VIf(v.cond, Num(0), v.b)
        return VIf(v.cond, rewrite_v(draw, v.a, depth + 1), rewrite_v(draw, v.b, depth + 1))
    if isinstance(v, Num):
        return VProd(Num(1), v) if v.value else v
    return v


def _nodes_v(v: Value) -> list[Value]:
    out = [v]
    for x in (v.items if isinstance(v, VSum) else (v.a, v.b) if isinstance(v, (VProd, VIf)) else ()):
        out += _nodes_v(x)
    return out


def mutate(draw: Draw, v: Value, setup: Setup) -> Value:
    """``v`` with one change that usually makes it wrong: a read off by one (wrapped, so it stays
    in the state), a coefficient changed, a guard weakened at one parameter value, or a row read
    through a ``mod`` that wraps only at the top of ``N'``'s range."""
    nodes = _nodes_v(v)
    kinds = [kd for kd, t in (("read", Inp), ("top", Inp), ("coef", Num), ("guard", VIf)) if any(isinstance(x, t) for x in nodes)]
    kind = draw(st.sampled_from(kinds))
    target = draw(st.sampled_from([x for x in nodes if isinstance(x, {"read": Inp, "top": Inp, "coef": Num, "guard": VIf}[kind])]))
    if kind == "read":
        new: Value = (Inp((target.row + 1) % setup.rows, target.col) if draw(st.booleans())  # type: ignore[union-attr]
                      else Inp(target.row, (target.col + 1) % setup.cols))  # type: ignore[union-attr]
    elif kind == "top":
        new = Inp(target.row % max(setup.nmax - 1, 1), target.col)  # type: ignore[union-attr]
    elif kind == "coef":
        c = target.value + 1  # type: ignore[union-attr]
        new = Num(c if c else 2)
    else:
        p = draw(st.sampled_from(setup.params))
        at = draw(st.integers(p.lo, p.hi))
        new = VIf(any_of(target.cond, eq(var(p.name), at)), target.a, target.b)  # type: ignore[union-attr]
    return _replace(v, target, new)


def _replace(v: Value, old: Value, new: Value) -> Value:
    if v is old:
        return new
    if isinstance(v, VSum):
        return VSum(tuple(_replace(x, old, new) for x in v.items))
    if isinstance(v, VProd):
        return VProd(_replace(v.a, old, new), _replace(v.b, old, new))
    if isinstance(v, VIf):
        return VIf(v.cond, _replace(v.a, old, new), _replace(v.b, old, new))
    return v


MAX_TERMS = 160  # terms of output and spec together (keeps each z3 query well under a second)


@st.composite
def gadgets(draw_: Any, wrong: bool, heavy: bool | None = None, placed: bool = False) -> Gadget:
    """A random gadget and a spec derived from its meaning, rewritten (``wrong``: then mutated);
    ``heavy``: see :class:`Draw` (None: drawn); ``placed``: conditions read a free predicate ``P``
    on cells, constrained by a random ``assume``, on a state of at most 3×2 cells."""
    draw = Draw(draw_, draw_(st.booleans()) if heavy is None else heavy, placed)
    setup = draw.setup = draw(setups(placed))
    two = draw(st.booleans())
    ls = (layers(draw, setup, True, False), layers(draw, setup, False, True)) if two else (layers(draw, setup, False, True),)
    spec = meaning(ls, setup.rows, draw(st.booleans()), wrong or draw(st.booleans()))
    for _ in range(draw(st.integers(1, 3))):
        spec = rewrite_v(draw, spec)
    if wrong:
        spec = mutate(draw, spec, setup)
    where_ = draw(st.sampled_from([TRUE, TRUE, le(s, N), ne(k, 1), lt(N, s + 3)]))
    care = draw(st.sampled_from([TRUE, TRUE, lt(i, N), ne(q, 0), conds(draw, PIQ, 1)]))
    entry = draw(st.sampled_from([TRUE, TRUE, lt(i, N), ne(q, 1), ~bit(i, 0), conds(draw, PIQ, 1)]))
    cases = tuple(conds(draw, PIQ, 1) for _ in range(draw(st.integers(0, 2))))
    here = pred("P", i, q)
    assumed = draw(st.sampled_from([TRUE, any_of(~here, lt(i, s + 1)), any_of(~here, ~bit(i + q, 0)),
                                   ~all_of(here, pred("P", (i + 1) % N, q))])) if placed else TRUE
    g = Gadget("rand", setup.params, setup.rows, setup.cols, ls, spec, where=where_, care=care, entry=entry,
               families={"B": (setup.cols,), "C": (setup.rows, setup.cols)}, cases=cases, assume=assumed)
    assume(len(output_terms(g)) + len(spec_terms(g)) <= MAX_TERMS)
    return g


def _settings(default: int) -> Any:
    return settings(max_examples=EXAMPLES or default, deadline=None, derandomize=not EXAMPLES,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])


@_settings(6)
@given(gadgets(wrong=False, heavy=None if EXAMPLES else False))
def test_equivalent_specs_agree_with_every_instance(g: Gadget) -> None:
    judge(g)


@_settings(6)
@given(gadgets(wrong=True, heavy=None if EXAMPLES else False))
def test_mutated_specs_agree_with_every_instance(g: Gadget) -> None:
    judge(g)


@_settings(4)
@given(st.booleans().flatmap(lambda wrong: gadgets(wrong=wrong, heavy=False, placed=True)))
def test_placed_gadgets_agree_with_every_instance_and_placement(g: Gadget) -> None:
    """Conditions reading a free predicate ``P`` (a placement) under a random ``assume``: the oracle
    tries every placement of the (at most 3×2) state that satisfies it."""
    judge(g)


# ---- the width logic: ranges and values crossing 2^48 (hand-picked; checked at the large values) ----


def _copy_gadget(params: tuple[Param, ...], factor: Cond) -> Gadget:
    """The identity (one cyclic layer, lag 0) on a 2×1 state, claimed to be ``u`` where ``factor``
    holds and ``2u`` elsewhere: false exactly at the parameter values where ``factor`` fails."""
    return Gadget("wide", params, 2, 1, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),),
                  where(factor, inp(i, q), 2 * inp(i, q)))


def _agrees_at(g: Gadget, env: Env) -> bool:
    """Every cell at ``env`` by the oracle, and by the package's concrete interpretation (cell by
    cell and the instance model), which must say the same."""
    inst = run_instance(g, env, eager=False)
    assert not inst.error, inst.error
    u = lambda r, c: sym(f"in[{r}][{c}]")  # noqa: E731
    for r, c in itertools.product(range(2), range(1)):
        got, want = _sym_poly(cell_value(g, env, r, c, u)), _sym_poly(spec_at(g, env, r, c, u))
        assert (got != want) == ((r, c) in (inst.wrong or {}))
        assert package_cell(g, env, (r, c)) == (got, want)
    return not inst.wrong


M = var("M")
NARROW_TOP = 1 << (NARROW_WIDTH - 1)  # 2M reaches 2^48 at M = 2^47 only


def _width_case(case: str) -> tuple[Gadget, Gadget, list[dict[str, int]], list[dict[str, int]]]:
    """A claim false only at the top of its range (``tops``), where a value reaches ``2^48``, the
    same claim made true, and values below the top where both hold."""
    if case == "narrow-overflow-at-top":
        # bounds below 2^48; (M ^ 0)·2 reaches 2^48 at the top; 2M − 1 < M + 2^47 − 1 ⇔ M < 2^47
        params: tuple[Param, ...] = (Param("M", 1, NARROW_TOP),)
        return (_copy_gadget(params, lt((M ^ 0) * 2 - 1, M + (NARROW_TOP - 1))),
                _copy_gadget(params, lt((M ^ 0) * 2 - 1, M + NARROW_TOP)),
                [{"M": NARROW_TOP}], [{"M": NARROW_TOP - 1}, {"M": 1}])
    if case == "crossing-mod-at-top":
        # the range crosses 2^48; M mod (2^48 + 3) < M only at M = 2^48 + 3
        hi = (1 << NARROW_WIDTH) + 3
        params = (Param("M", (1 << NARROW_WIDTH) - 4, hi),)
        return (_copy_gadget(params, ~lt((M ^ 0) % hi, M)), _copy_gadget(params, ~lt((M ^ 0) % (hi + 1), M)),
                [{"M": hi}], [{"M": hi - 1}, {"M": 1 << NARROW_WIDTH}, {"M": (1 << NARROW_WIDTH) - 4}])
    # bounds below 2^48, M·2^k reaches 3·2^47 at k = 47: below 2^48 − 1 except there (M ≥ 2)
    params = (Param("M", 1, 3), Param("k", 0, NARROW_WIDTH - 1))
    return (_copy_gadget(params, lt(M << k, (1 << NARROW_WIDTH) - 1)), _copy_gadget(params, eq((M << k) >> k, M)),
            [{"M": 2, "k": NARROW_WIDTH - 1}, {"M": 3, "k": NARROW_WIDTH - 1}],
            [{"M": m, "k": kk} for m in (1, 2, 3) for kk in (0, NARROW_WIDTH - 2)] + [{"M": 1, "k": NARROW_WIDTH - 1}])


WIDTH_CASES = ["narrow-overflow-at-top", "crossing-mod-at-top", "shift-at-top-k"]


def _check_width_case(case: str) -> None:
    bad, good, tops, below = _width_case(case)
    assert all(not _agrees_at(bad, env) for env in tops) and all(_agrees_at(bad, env) for env in below)
    assert all(_agrees_at(good, env) for env in tops + below)
    res = prove_forall(bad, timeout_s=TIMEOUT_S)
    assert res.verdict == "refuted", str(res)
    assert dict(res.params) in tops and res.stats["encoding"].startswith("bv64"), (res.params, res.stats)
    assert not _agrees_at(bad, dict(res.params))
    proof = prove_forall(good, timeout_s=TIMEOUT_S)
    assert proof.verdict == "proved" and proof.stats["encoding"].startswith("bv64"), (str(proof), proof.stats)


@pytest.mark.parametrize("case", WIDTH_CASES)
def test_width_fallback_with_a_claim_false_only_at_the_top(case: str) -> None:
    """Each claim is false only at the top of its range, where a value reaches ``2^48``: the narrow
    encoding must not decide it (its definedness fails there, or a bound or literal does not fit)
    and the 64-bit one must refute it exactly there; the corrected claim is proved at 64 bits."""
    _check_width_case(case)


def test_a_planted_wrap_at_the_narrow_width_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The narrow encoding patched to forget that a left shift may overflow: ``M·2^k`` wraps at
    48 bits, the false claim is proved there, and the check above fails."""
    bin_ = forall._Enc._bin

    def no_shift_overflow(self: Any, e: Bin, a: Any, b: Any) -> Any:
        t, ok = bin_(self, e, a, b)
        return (t, ok[:1]) if e.op == "<<" and self.width == NARROW_WIDTH else (t, ok)

    monkeypatch.setattr(forall._Enc, "_bin", no_shift_overflow)
    assert prove_forall(_width_case("shift-at-top-k")[0]).verdict == "proved"  # the planted false proof
    with pytest.raises(AssertionError, match="refuted"):
        _check_width_case("shift-at-top-k")


# ---- every check of the judge can fail ------------------------------------------------------------


def _shift(lag: IExpr) -> Gadget:
    """The user example (docs/forall.md §2) at small sizes: right with lag ``s``, wrong with ``s + 1``."""
    return Gadget("shift", (Param("N", 1, 6), Param("d", 1, 2), Param("s", 0, 5)), N, d,
                  (PLayer(b1=1, h=(tap(lag),), mode="cyclic"),), inp((i + N - s) % N, q), where=lt(s, N))


def test_the_judge_accepts_the_prover_on_the_user_example() -> None:
    assert judge(_shift(s)) == "proved"
    assert judge(_shift((s + 1) % N)) == "refuted"


def test_a_planted_false_proof_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prover patched to turn every verdict into ``proved``: the oracle catches the wrong gadget."""
    from symverify.kernel.provers.outcome import Verdict

    monkeypatch.setattr(forall, "exact_comparison", lambda equal: Verdict.PROVED)
    assert judge(_shift(s)) == "proved"
    with pytest.raises(AssertionError, match="FALSE PROOF"):
        judge(_shift((s + 1) % N))
    # and the other way: every decided comparison turned into ``refuted``
    monkeypatch.setattr(forall, "exact_comparison", lambda equal: Verdict.UNKNOWN if equal is None else Verdict.REFUTED)
    with pytest.raises(AssertionError, match="without a witness"):
        judge(_shift(s))


def _forged(verdict: str, params: dict[str, int] | None = None, cell: tuple[int, int] | None = None, detail: str = "") -> Any:
    from symverify.kernel.provers.outcome import Verdict

    def prove(g: Gadget) -> Any:
        return forall.ForallResult(g.name, Verdict(verdict), g.ranges(), params or {}, cell, detail)

    return prove


def test_forged_verdicts_are_caught() -> None:
    wrong, right = _shift((s + 1) % N), _shift(s)
    with pytest.raises(AssertionError, match="BOGUS COUNTEREXAMPLE"):
        judge(right, _forged("refuted", {"N": 3, "d": 1, "s": 1}, (0, 0)))
    with pytest.raises(AssertionError, match="not a parameter value in range"):
        judge(wrong, _forged("refuted", {"N": 2, "d": 1, "s": 4}, (0, 0)))  # s < N fails
    with pytest.raises(AssertionError, match="unknown"):
        judge(wrong, _forged("unknown", detail="gave up"))
    with pytest.raises(AssertionError, match="BOGUS COUNTEREXAMPLE"):  # a wrong gadget, but right at N = 1
        judge(wrong, _forged("refuted", {"N": 1, "d": 1, "s": 0}, (0, 0)))
    assert judge(wrong, _forged("unknown", detail="z3 unknown")) == "unknown"


def test_forged_definedness_answers_are_caught() -> None:
    """A gadget undefined at one instance must not be accepted; a defined one must not be refused."""
    undefined = Gadget("u", (Param("N", 1, 4),), N, 1, (PLayer(b1=1, h=(tap(N - 2),), mode="cyclic"),), inp(i, q))
    with pytest.raises(AssertionError, match="undefined at"):
        judge(undefined, _forged("proved"))
    with pytest.raises(ParametricError):
        prove_forall(undefined)
    assert judge(undefined) == "refused"

    def refuse(g: Gadget) -> Any:
        raise ParametricError("gadget u: undefined or out of range (forged)")

    with pytest.raises(AssertionError, match="every instance is defined"):
        judge(_shift(s), refuse)


# ---- found by the random gadgets ---------------------------------------------------------------


def test_a_nonlinear_case_split_of_a_linear_gadget_is_decided() -> None:
    """A linear gadget whose case split (a hint) is not linear — ``bit(N, k)`` — was encoded over
    the integers and the case raised the encoder's internal ``_NotLinearError`` out of
    :func:`prove_forall`; it is decided with bit-vectors like every non-linear condition."""
    g = Gadget("g", (Param("N", 1, 4), Param("k", 0, 2)), N, 1, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),),
               inp(i, q), cases=(bit(N, k),))
    assert judge(g) == "proved"
    assert judge(dataclasses.replace(g, spec=where(bit(N, k), inp(i, q), 2 * inp(i, q)))) == "refuted"


def test_an_entry_undefined_at_a_cell_never_read_is_refused() -> None:
    """``entry`` undefined at the last row, which the causal lag 1 never reads: the right claim was
    proved and the wrong one raised ``ParametricError`` from the re-check (the instance model
    reads every input cell). The definition is undefined there: both are refused up front."""
    ent = le(0, (N - 2) - i)
    g = Gadget("g", (Param("N", 2, 5),), N, 1, (PLayer(b1=1, h=(tap(1),), mode="causal"),),
               where(ge(i, 1), inp(i - 1, q)), entry=ent)
    for spec in (g.spec, 2 * g.spec):
        with pytest.raises(ParametricError, match=r"entry"):
            prove_forall(dataclasses.replace(g, spec=spec))
        assert judge(dataclasses.replace(g, spec=spec)) == "refused"


def test_a_care_condition_reading_a_placement_is_refuted_not_a_crash() -> None:
    """``care`` reading the predicate ``P``: the re-check's placement kept only the points the
    terms read, so ``P`` was false at the witness cell, ``spec_at`` gave None and ``prove_forall``
    raised ``TypeError``. The points ``care`` reads at the witness are kept too."""
    g = Gadget("g", (Param("N", 1, 2),), N, 1, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),), 2 * inp(i, q),
               care=pred("P", i, q))
    assert judge(g) == "refuted"
    assert judge(dataclasses.replace(g, spec=inp(i, q))) == "proved"
    # a witness cell where care fails with the placement is not confirmed (unknown), not a crash
    assert forall._recheck(g, {"N": 2}, 1, 0, {"P": lambda r, c: False}) == (
        None, "care does not hold at the witness's cell with its placement")
    assert forall._recheck(g, {"N": 2}, 1, 0, {"P": lambda r, c: True})[0] is True


def test_a_care_that_no_allowed_placement_satisfies_is_refused_as_vacuous() -> None:
    """``care`` holds only where ``P`` does and ``assume`` forbids ``P`` everywhere: the statement
    is about no cell, but the vacuity check ignored ``assume`` and the claim was proved. Found by
    the random placements with ``assume = ¬(P(i, q) ∧ P((i + 1) mod N, q))`` at ``N = 1``."""
    g = Gadget("g", (Param("N", 1, 1),), N, 1, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),), 2 * inp(i, q),
               care=pred("P", i, q), assume=~pred("P", i, q))
    with pytest.raises(ParametricError, match="vacuous"):
        prove_forall(g)
    assert judge(g) == "refused"
    cyclic = dataclasses.replace(g, care=pred("P", i, 0), assume=~all_of(pred("P", i, q), pred("P", (i + 1) % N, q)))
    assert judge(cyclic) == "refused"
    assert judge(dataclasses.replace(cyclic, params=(Param("N", 1, 2),))) == "refuted"  # P((0, 0)) allowed at N = 2
