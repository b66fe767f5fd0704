"""The concrete interpretation: a parametric gadget at given sizes as ordinary BaseConv layers.

:func:`instantiate` evaluates every weight expression of :mod:`symverify.kernel.parametric.gadget` at
the given parameter values and builds :class:`~symverify.kernel.ir.baseconv.Layer` s: ``W[p, q]`` and
``h[k, q]`` are the sums of the taps of channel ``q`` that land on ``p`` (resp. ``k``); ``b1`` and
``b2`` are evaluated per cell, except that a bias whose dependence on ``i`` (or ``q``) is only
through comparisons with expressions free of ``i`` and ``q`` is evaluated once per block between
consecutive cut points (it is constant there) and painted as a rectangle — so a mask on ``2^20``
rows costs one rectangle, not ``2^20`` cells. Past a few blocks the blocks are evaluated together
(:mod:`symverify.kernel.parametric.bulk`: numpy over the row and channel index arrays, falling back to
this cell-by-cell evaluation for any operation int64 cannot do exactly), and so is the check of a
placement against ``assume``; a placement may be a set of cells. Family members become the values ``families[name]``
returns, by default the free symbol ``name[i][j]…`` (:func:`family_symbol`).

:func:`spec_at` evaluates the specification of one output cell on a given input state, and
:func:`cell_value` the gadget's own output cell, recursively through its layers, reading only the
cells it needs (the per-cell re-check of a counterexample at sizes too large to build).

**One value per point.** The ∀ theorem is about one value per family member, one truth value per
predicate point and one value per input cell. Every consumer here (:func:`instantiate`,
:func:`failing_cells`, :func:`spec_at`, :func:`cell_value`, :func:`eval_value`) reads each callable
it is given — a family, a placement, a ``with predicates(...)`` block's predicate, the input
``state`` — once per point (:func:`read_once`: its first answer is kept), so a callable answering
otherwise at a second read (random, or counting its calls) cannot make two reads of one point
disagree. The view is idempotent: a view of :func:`read_once` passed to several calls (or held in a
``predicates`` block around them) is read through, not wrapped again, so all those calls read one
value per point — what the ∀-prover's re-check of a counterexample does, and what a caller comparing
:func:`spec_at` with :func:`cell_value` on random families does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import weakref
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from fractions import Fraction
from operator import is_
from typing import Any, TypeVar, cast

from symverify.errors import IRError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr, show_int
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid, Rect
from symverify.kernel.ir.memo import IdentityMemo, fields_now
from symverify.kernel.ir.scalar import (
    Scalar,
    Sym,
    all_int,
    all_of,
    as_index,
    as_scalar,
    is_canonical,
    is_zero,
    sym,
    type_ids,
)
from symverify.kernel.parametric.bulk import _LIMIT as _INT64_EXACT
from symverify.kernel.parametric.bulk import CellSet, Placement
from symverify.kernel.parametric.expr import (
    _PREDICATES,
    TRUE,
    WIDTH,
    BoolOp,
    Cmp,
    Cond,
    Fam,
    IExpr,
    Inp,
    Not,
    Num,
    ParametricError,
    Pred,
    Value,
    Var,
    VIf,
    VProd,
    VSum,
    predicates,
    vars_i,
)
from symverify.kernel.parametric.gadget import Gadget, PLayer, Tap

__all__ = ["Families", "family_symbol", "instantiate", "instance_model", "failing_cells", "eval_value", "spec_at", "cell_value", "sizes",
           "entry_state", "read_once"]

Families = Mapping[str, Callable[..., Scalar]]
T = TypeVar("T")


def family_symbol(name: str, *idx: int) -> Scalar:
    """The free symbol standing for ``name[idx…]``: ``name[i][j]…``, an injective naming (family
    names are identifiers, so no two members of two families share a symbol; ``name_i_j`` gave
    ``B[1][2]`` and ``B_1[2]`` the one symbol ``B_1_2``, two weights merged into one)."""
    return sym(name + "".join(f"[{x}]" for x in idx))


def _family(fams: Families | None, name: str, idx: tuple[int, ...]) -> Scalar:
    """Member ``idx`` of family ``name``: :func:`family_symbol` without a callable, else the exact
    scalar the callable returns (an int or ``Sym`` as it is, anything else through :func:`as_scalar`:
    a ``Fraction`` as the canonical number it equals, since one holding numpy integers multiplies
    them modulo 2^64 and one not in lowest terms compares unequal to its value); a value that is
    not one, or an exception the callable raises, is a :class:`ParametricError` naming the family
    and the index. The reading of :func:`_member_reader`."""
    return _member_reader(fams, name)(idx)


def _member_reader(fams: Families | None, name: str) -> Callable[[tuple[int, ...]], Scalar]:
    """The reader of family ``name``'s members: ``idx ↦ _family(fams, name, idx)`` (the rule of its
    docstring), with the family looked up once. The bulk evaluation reads a family once per cell
    through it (:func:`symverify.kernel.parametric.bulk.value`): one Python frame per member read
    instead of three (a lambda, :func:`_family`, the lookup)."""
    if fams is None or name not in fams:
        return lambda idx: family_symbol(name, *idx)
    fn = fams[name]

    def member(idx: tuple[int, ...]) -> Scalar:
        try:
            v = fn(*idx)
        except _OutsideSizeError:
            raise
        except Exception as e:
            raise ParametricError(f"family {name} at {idx}: the callable raised {type(e).__name__}: {safe_repr(str(e), 120)}") from e
        if id(type(v)) in _AS_GIVEN:  # kept as given (a bias grid stores what it is given)
            return v
        try:
            return as_scalar(v, f"family {name} at {idx}")
        except IRError as e:
            raise ParametricError(str(e)) from None

    return member


class _OutsideSizeError(ParametricError):
    """A family member read outside its family's declared size (:func:`_sized`), passed on as it is."""


def _sized(g: Gadget, env: Mapping[str, int], fams: Families | None) -> Families | None:
    """``fams`` with each member of a family the gadget declares checked against its declared size at
    the parameters ``env`` (evaluated at the family's first read): the ∀ theorem is about the members
    inside it, and the prover refuses a gadget that reads one outside, so an instance reading one is
    refused too, naming the member and the size (``B[2]`` of a family of size 2 was read silently, as
    its free symbol or as whatever the callable answered)."""
    if not g.families:
        return fams
    out = dict(fams or {})
    for name, size in g.families.items():
        out[name] = _checked(g, name, size, env, out.get(name))
    return out


def _checked(g: Gadget, name: str, size: tuple[Any, ...], env: Mapping[str, int],
             fn: Callable[..., Scalar] | None) -> Callable[..., Scalar]:
    dims: list[tuple[int, ...]] = []
    get: Callable[..., Scalar] = fn if fn is not None else functools.partial(family_symbol, name)

    def read(*idx: int) -> Scalar:
        if not dims:
            try:
                dims.append(tuple(x.eval(env) for x in size))
            except ParametricError as e:
                raise _OutsideSizeError(f"gadget {g.name}: family {name}: its declared size "
                                        f"{', '.join(map(str, size))} is undefined at {env}: {e}") from None
        n = dims[0]
        # indices are values of index expressions, never negative; one and two indices compared
        # directly (a family of a large layer is read once per cell: the generic test cost 4× the read)
        k = len(idx)
        if k != len(n) or not (idx[0] < n[0] if k == 1 else idx[0] < n[0] and idx[1] < n[1] if k == 2
                               else all(0 <= x < m for x, m in zip(idx, n))):
            raise _OutsideSizeError(f"gadget {g.name}: family {name} read at {idx}, outside its declared size {n} at {env} "
                                    f"(expected {len(n)} indices, each below its size)")
        return get(*idx)

    return read


def _input(v: Any, r: int, c: int, where: str) -> Scalar:
    """Input cell ``(r, c)``'s value ``v`` as an exact scalar, as a family member is read
    (:func:`_family`: an int or ``Sym`` as it is, anything else, a ``Fraction`` too, through :func:`as_scalar`);
    a float (numpy's too: not an exact value), a bool or another type is a :class:`ParametricError`
    naming the cell and what was found."""
    if id(type(v)) in _AS_GIVEN:
        return cast(Scalar, v)
    try:
        return as_scalar(v, f"{where}input cell ({r}, {c})")
    except IRError as e:
        raise ParametricError(f"{e} (of type {type(v).__name__})") from None


def eval_value(v: Value, env: Mapping[str, int], fams: Families | None = None,
               state: Callable[[int, int], Any] | None = None) -> Any:
    """``v`` at ``env``; input cells read ``state(r, c)`` (an error when ``state`` is None), whose
    values must be exact (an int, Fraction or ``Sym``, or what :func:`as_scalar` reads as one; a
    float is a :class:`ParametricError` naming the cell). Each family member, predicate point and
    input cell is read once (module docstring)."""
    with _block_once(None):
        return _eval_value(v, env, read_once(fams), None if state is None else _read_once(_state(state, "eval_value")))


def _state(state: object, where: str) -> Callable[[int, int], Any]:
    """``state`` if it is callable (the input on cells ``(r, c)``), else :class:`ParametricError`
    (``functools.cache`` raised a bare ``TypeError`` for ``None`` or a list of rows)."""
    if not callable(state):
        raise ParametricError(f"{where}: state: expected a callable on cells (r, c) giving the input value, "
                              f"found {type(state).__name__} {safe_repr(state, 60)}")
    return cast(Callable[[int, int], Any], state)


def _eval_value(v: Value, env: Mapping[str, int], fams: Families | None = None,
                state: Callable[[int, int], Any] | None = None) -> Any:
    """:func:`eval_value` on views already read once."""
    if isinstance(v, Num):
        return v.value
    if isinstance(v, Fam):
        return _family(fams, v.name, tuple(x.eval(env) for x in v.idx))
    if isinstance(v, Inp):
        if state is None:  # a weight (never reads the input), or eval_value given no state
            raise ParametricError(f"value expression: input cell ({v.row}, {v.col}) read with no input state; expected "
                                  "state= (eval_value), and no input cell in a weight expression")
        r, c = v.row.eval(env), v.col.eval(env)
        return _input(state(r, c), r, c, "")
    if isinstance(v, VSum):
        total: Any = 0
        for x in v.items:
            total = total + _eval_value(x, env, fams, state)
        return total
    if isinstance(v, VProd):
        a = _eval_value(v.a, env, fams, state)
        return 0 if is_zero(a) else a * _eval_value(v.b, env, fams, state)
    if isinstance(v, VIf):
        return _eval_value(v.a if v.cond.eval(env) else v.b, env, fams, state)
    raise ParametricError(f"value expression: unknown node {type(v).__name__}")


def sizes(g: Gadget, params: Mapping[str, int]) -> tuple[dict[str, int], int, int]:
    """The checked parameters and ``(N', d')``."""
    env = g.check_params(params)
    nn, dd = g.rows.eval(env), g.cols.eval(env)
    if nn < 1 or dd < 1:
        raise ParametricError(f"gadget {g.name}: state size {nn}×{dd} at {env} (expected N', d' ≥ 1)")
    return env, nn, dd


def _taps(taps: tuple[Tap, ...], env: dict[str, int], q: int, bound: int, what: str,
          fams: Families | None) -> dict[int, Scalar]:
    """``{src: Σ value}`` of the taps of channel ``q`` (``src`` checked against ``[0, bound)``)."""
    out: dict[int, Scalar] = {}
    e = {**env, "q": q}
    for k, t in enumerate(taps):
        if not t.guard.eval(e):
            continue
        s = t.src.eval(e)
        if s >= bound:
            raise ParametricError(f"{what} tap {k} ({t.src}) = {s} at {e}: outside [0, {bound})")
        out[s] = out.get(s, 0) + _eval_value(t.value, e, fams)
    return {s: v for s, v in out.items() if not is_zero(v)}


def _cuts_c(c: Cond, v: str, env: Mapping[str, int]) -> set[int] | None:
    """Cut points of ``v`` in ``c`` (the truth value is constant between them), None when ``v``
    is used otherwise than compared with an expression free of ``i`` and ``q``."""
    if isinstance(c, Cmp):
        ua, ub = vars_i(c.a), vars_i(c.b)
        if v not in ua | ub:
            return set()
        for x, y in ((c.a, c.b), (c.b, c.a)):
            if isinstance(x, Var) and x.name == v and not (vars_i(y) & {"i", "q"}):
                try:
                    t = y.eval(env)
                except ParametricError:
                    return None
                return {t, t + 1}
        return None
    if isinstance(c, BoolOp):
        out: set[int] = set()
        for item in c.items:
            s = _cuts_c(item, v, env)
            if s is None:
                return None
            out |= s
        return out
    if isinstance(c, Not):
        return _cuts_c(c.c, v, env)
    return None


def _cuts_v(x: Value, v: str, env: Mapping[str, int]) -> set[int] | None:
    if isinstance(x, Num):
        return set()
    if isinstance(x, Fam):
        return None if any(v in vars_i(e) for e in x.idx) else set()
    if isinstance(x, VSum):
        out: set[int] = set()
        for y in x.items:
            s = _cuts_v(y, v, env)
            if s is None:
                return None
            out |= s
        return out
    if isinstance(x, VProd):
        a, b = _cuts_v(x.a, v, env), _cuts_v(x.b, v, env)
        return None if a is None or b is None else a | b
    if isinstance(x, VIf):
        parts = [_cuts_c(x.cond, v, env), _cuts_v(x.a, v, env), _cuts_v(x.b, v, env)]
        if any(p is None for p in parts):
            return None
        return set().union(*parts)  # type: ignore[arg-type]
    return None


def _intervals(cuts: AbstractSet[int] | None, size: int) -> list[tuple[int, int]]:
    if cuts is None:
        return [(k, k + 1) for k in range(size)]
    pts = sorted({0, size} | {c for c in cuts if 0 < c < size})
    return list(itertools.pairwise(pts))


_CUTS: IdentityMemo[tuple[tuple[object, ...], frozenset[int] | None]] = IdentityMemo(4096)
"""Room for the (expression, variable, sizes) of a compile: ``thm_h21_general``'s kaleidoscope compiles
use 2 560. Each entry holds the expression's :func:`_held` snapshot it was computed from."""
_PRED_FREE: IdentityMemo[tuple[tuple[object, ...], bool]] = IdentityMemo(512)
_LEAVES = type_ids(int, str, Fraction, Sym)
"""The values a node's field may hold, besides nodes and plain tuples, for its cut points to be kept
(none of them changes under its identity in a way the cut points read: they never read a constant's value)."""
_NODES = (IExpr, Cond, Value)


def _held(v: Value) -> tuple[object, ...] | None:
    """Every node of ``v`` (each once, in a fixed walk order) followed by what each of its fields holds
    now (:func:`~symverify.kernel.ir.memo.fields_now`), all by identity; None when a field holds
    anything but a node, a plain tuple or a value of :data:`_LEAVES` (a list, or an unset slot: its
    content could change with no field assigned). Two snapshots holding the same objects item by item
    are one content: the walks agree up to the first field assigned in between (``object.__setattr__``
    on a node, past its frozen dataclass), where they differ. Linear in the nodes held."""
    out: list[object] = []
    seen: set[int] = set()
    todo: list[object] = [v]
    while todo:
        x = todo.pop()
        if type(x) is tuple:
            todo.extend(x)  # a plain tuple's items never change: it is held by its node's snapshot
            continue
        if not isinstance(x, _NODES):
            if id(type(x)) in _LEAVES:
                continue
            return None
        if id(x) in seen:
            continue
        seen.add(id(x))
        fields = fields_now(x)
        out.append(x)
        out.extend(fields)
        todo.extend(f for f in fields if id(type(f)) not in _LEAVES)
    return tuple(out)


def _same_held(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def _cut_points(v: Value, var: str, env: Mapping[str, int], held: tuple[object, ...] | None) -> frozenset[int] | None:
    """:func:`_cuts_v`, kept for the last few (expression, variable, parameter values) when
    computing it reads no predicate (:func:`_cuts_read_no_predicate`): it is then a pure function of
    them (one reading a predicate depends on the placement too, and is computed each time), and a
    compiler instantiates the same few shared definitions at the same sizes once per gadget it emits.
    An entry is found by the expression's identity and used only while the expression still holds
    what it held then (``held``, its :func:`_held` snapshot now, compared with the entry's): a node
    inside it rewritten in place (``object.__setattr__`` on a comparison's operand) would otherwise
    paint a block with one row's value across a cut point the new content has. ``held`` None: nothing
    is kept."""
    def compute() -> frozenset[int] | None:
        cuts = _cuts_v(v, var, env)
        return None if cuts is None else frozenset(cuts)

    if held is None:
        return compute()
    free = _PRED_FREE.get(v)
    if free is None or not _same_held(free[0], held):
        free = _PRED_FREE.put(v, (held, _cuts_read_no_predicate(v)))
    if not free[1]:
        return compute()  # a cut point may read a predicate (``eq(i, ite(P(0, 0), 1, 2))``): the placement decides it
    key = (var, tuple(sorted(env.items())))
    hit = _CUTS.get(v, key)
    if hit is None or not _same_held(hit[0], held):
        hit = _CUTS.put(v, (held, compute()), key)
    return hit[1]


def _cuts_read_no_predicate(v: Value) -> bool:
    """Whether :func:`_cuts_v` of ``v`` reads no predicate, whatever the variable and parameters:
    it evaluates nothing but the operands of comparisons (``y.eval(env)`` in :func:`_cuts_c`), and
    so reads a predicate only through a comparison whose operand holds one (an ``ite`` on it). A
    predicate used as a condition is never read there: :func:`_cuts_c` answers None for it (cut
    points unknown) from its form alone. So: no comparison in ``v`` has an operand naming a
    predicate (:func:`_nodes`)."""
    return not any(isinstance(x, Cmp) and _pred_names((x.a, x.b)) for x in _nodes(v))


def _bias(v: Value, env: dict[str, int], nn: int, dd: int, fams: Families | None,
          preds: Mapping[str, Placement] | None = None, where: str = "a bias") -> Grid:
    rcuts: frozenset[int] | None
    ccuts: frozenset[int] | None
    if type(v) is Num:  # a constant: no cut points (nothing kept, nothing to snapshot)
        rcuts = ccuts = frozenset()
    else:
        held = _held(v)  # one snapshot for both variables' kept cut points
        rcuts, ccuts = _cut_points(v, "i", env, held), _cut_points(v, "q", env, held)
    blocks = (nn if rcuts is None else len(rcuts) + 1) * (dd if ccuts is None else len(ccuts) + 1)
    # each block is evaluated on its own (a bias varying per row at N' = 2^40 is 2^40 of them): at
    # most MAX_PAINT, the cells symverify expands one by one, refused before anything is allocated
    limits.check(blocks, "MAX_PAINT", lambda: f"{where} at {env}: a {show_int(nn)}×{show_int(dd)} bias evaluated block by block")
    if blocks > _BULK_FROM and max(nn, dd) <= _BULK_LIMIT:  # bounds as int64 arrays (_BULK_LIMIT)
        bulk_rects = _bias_bulk(v, env, (rcuts, nn), (ccuts, dd), fams, preds or {})
        if bulk_rects is not None:
            return _block_grid(nn, dd, bulk_rects)
    rects = []
    for r0, r1 in _intervals(rcuts, nn):
        for c0, c1 in _intervals(ccuts, dd):
            val = _eval_value(v, {**env, "i": r0, "q": c0}, fams)
            if not is_zero(val):
                rects.append((r0, r1, c0, c1, val))
    return Grid(nn, dd, 0, tuple(rects))


_BULK_FROM = 16  # blocks; fewer are evaluated one by one
_BULK_LIMIT = _INT64_EXACT
"""The largest ``N'`` and ``d'`` whose blocks are evaluated in bulk (their bounds are int64 arrays, exact
below ``2^62``: numpy raised ``OverflowError`` on a state of ``2^63`` rows); a larger state's few blocks are
evaluated one by one."""
_AS_GIVEN = type_ids(int, Sym)  # by identity (type_ids)
"""The values a family member or an input cell is taken as given: a ``Fraction`` is read through
``as_scalar`` (its numerator and denominator may be numpy integers, or not in lowest terms)."""


def _block_grid(nn: int, dd: int, rects: tuple[Rect, ...]) -> Grid:
    """The ``nn × dd`` grid of the blocks :func:`_bias_bulk` gives. Their bounds are cut points
    clipped to ``[0, nn]`` / ``[0, dd]`` with ``start < stop`` (they fit by construction), so when
    every value is already canonical (:func:`~symverify.kernel.ir.scalar.is_canonical`: an ``int``, a
    ``Sym``, a ``Fraction`` of plain ints in lowest terms) the grid is built without ``Grid``'s
    per-rectangle checks; any other value goes through them (normalised or refused: a family may
    give ``Fraction(6)``, ``Fraction(2, 4, _normalize=False)`` or ``Fraction(IntSub(5), 3)``)."""
    if not all(is_canonical(r[4]) for r in rects):
        return Grid(nn, dd, 0, rects)
    out = object.__new__(Grid)
    for name, value in (("rows", nn), ("cols", dd), ("fill", 0), ("rects", rects)):
        object.__setattr__(out, name, value)
    return out


def _bounds(cuts: AbstractSet[int] | None, size: int) -> tuple[Any, Any]:
    """The starts and ends of :func:`_intervals` as int64 arrays."""
    import numpy as np

    if cuts is None:
        starts = np.arange(size, dtype=np.int64)
        return starts, starts + 1
    pts = np.array(sorted({0, size} | {c for c in cuts if 0 < c < size}), dtype=np.int64)
    return pts[:-1], pts[1:]


def _bias_bulk(v: Value, env: dict[str, int], rows: tuple[AbstractSet[int] | None, int], cols: tuple[AbstractSet[int] | None, int],
               fams: Families | None, preds: Mapping[str, Placement]) -> tuple[Rect, ...] | None:
    """The blocks of :func:`_bias` evaluated together (:mod:`symverify.kernel.parametric.bulk`, one block per
    representative cell, the block's first); None when an operation needs the exact cell-by-cell
    evaluation. Blocks of one cell are merged down each column into runs of equal values."""
    import numpy as np

    from symverify.kernel.parametric import bulk

    rs, re_ = _bounds(*rows)
    cs, ce = _bounds(*cols)
    nc = len(cs)
    rows_ = np.repeat(rs, nc)
    chans = np.tile(cs, len(rs))
    try:
        vals = bulk.value(v, env, rows_, chans, preds, functools.partial(_member_reader, fams))
    except bulk.FallbackError:
        return None
    if not isinstance(vals, np.ndarray):
        if is_zero(vals):
            return ()
        box = np.empty((), dtype=object)
        box[()] = vals
        vals = np.full(len(rows_), box, dtype=object)
    nz = np.flatnonzero(bulk.nonzero(vals))
    ri, ci = nz // nc, nz % nc
    order = np.lexsort((ri, ci))  # column-major: runs down a column are adjacent
    out: list[Rect] = []
    for r0, r1, c0, c1, val in zip(rs[ri[order]].tolist(), re_[ri[order]].tolist(), cs[ci[order]].tolist(),
                                   ce[ci[order]].tolist(), vals[nz[order]].tolist()):
        if out:
            p0, p1, pc0, pc1, pv = out[-1]
            if pc0 == c0 and pc1 == c1 and p1 == r0 and pv == val and type(pv) is type(val):
                out[-1] = (p0, r1, c0, c1, val)
                continue
        out.append((r0, r1, c0, c1, val))
    return tuple(out)


def _layer(pl: PLayer, env: dict[str, int], nn: int, dd: int, fams: Families | None, where: str,
           preds: Mapping[str, Placement] | None = None) -> Layer:
    W: dict[tuple[int, int], Scalar] = {}
    h: dict[tuple[int, int], Scalar] = {}
    if pl.W or pl.h:  # the taps are evaluated channel by channel
        limits.check(dd, "MAX_PAINT", lambda: f"{where} at {env}: the taps of {show_int(dd)} channels evaluated one by one")
    for q in range(dd) if pl.W or pl.h else ():
        for p, val in _taps(pl.W, env, q, dd, f"{where} W", fams).items():
            W[(p, q)] = val
        for k, val in _taps(pl.h, env, q, nn, f"{where} h", fams).items():
            h[(k, q)] = val
    return Layer(Grid.from_cells(dd, dd, W), _bias(pl.b1, env, nn, dd, fams, preds, f"{where} b1"), Grid.from_cells(nn, dd, h),
                 _bias(pl.b2, env, nn, dd, fams, preds, f"{where} b2"), Mode(pl.mode))


def instantiate(g: Gadget, params: Mapping[str, int], families: Families | None = None,
                placement: Mapping[str, Placement] | None = None) -> tuple[Layer, ...]:
    """The gadget's layers at the parameter values ``params`` (module docstring); ``placement``
    gives the free predicates — each a callable on cells or a set of cells (tuples of ints; the
    predicate holds exactly on its members) — which must satisfy ``assume`` at every cell (so must
    predicates a ``with predicates(...)`` block gives: the ∀ theorem holds only for those)."""
    once = _families_once(g, families)
    if placement is not None and not isinstance(placement, Mapping):
        raise ParametricError(f"gadget {g.name}: placement: expected a mapping from predicate names to placements, found {type(placement).__name__}")
    _known_names(g, placement, "placement", "predicates", g.predicate_names)
    # a callable is read once per point, the placement given and a ``with predicates(...)`` block's
    # alike: the answers checked against ``assume`` are the ones the layers are built from
    preds = _placement_once(g, placement or {})
    with predicates({**_block_view(g, preds.keys()), **preds}):
        env, nn, dd = sizes(g, params)
        # a placement from a caller's ``with predicates(...)`` block is held to ``assume`` too, where it
        # gives a predicate ``assume`` reads (none given: the layers cannot read them either)
        if placement is not None or _pred_names(g.assume) & set(_PREDICATES.get()):
            bad = _violation(g, env, nn, dd, preds)
            if bad is not None:
                raise ParametricError(f"gadget {g.name}: the placement violates {g.assume} at cell {bad}")
        _check_entry(g, env, nn, dd, preds)
        # each member read once: the ∀ theorem is about one value per member (a callable drawing random
        # weights gave ``B[0]`` two values in one instance)
        sized = _sized(g, env, once)
        return tuple(_layer(pl, env, nn, dd, sized, f"gadget {g.name} layer {k}", preds) for k, pl in enumerate(g.layers))


def _nodes(c: object) -> Iterator[object]:
    """Every node of ``c`` (a condition or value, or a tuple of them; index expressions too), walked without recursion."""
    todo: list[object] = [c]
    while todo:
        x = todo.pop()
        if isinstance(x, tuple):
            todo.extend(x)
        elif dataclasses.is_dataclass(x):
            yield x
            todo.extend(getattr(x, f.name) for f in dataclasses.fields(x))


def _pred_names(c: object) -> set[str]:
    """The names of the predicates ``c`` (a condition or value) reads (in index expressions too)."""
    return {x.name for x in _nodes(c) if isinstance(x, Pred)}


_ENTRY: IdentityMemo[VIf] = IdentityMemo(64)


def _check_entry(g: Gadget, env: dict[str, int], nn: int, dd: int, preds: Mapping[str, Placement]) -> None:
    """``entry`` (which input cells may be nonzero: the hypothesis of every ∀ theorem about ``g``)
    evaluated at every cell of the ``nn × dd`` state, block by block as a bias (at most ``MAX_PAINT``
    blocks): a :class:`ParametricError` naming the gadget, the sizes and the cell where it is
    undefined (the ∀-prover refuses such a gadget; its instances are refused the same way)."""
    if g.entry == TRUE:
        return
    try:  # one indicator value per gadget (its cut points are then found once per size)
        _bias(_ENTRY(g, lambda: VIf(g.entry, Num(1), Num(0))), env, nn, dd, None, preds, f"gadget {g.name} entry")
    except ParametricError as e:
        raise ParametricError(f"gadget {g.name}: its entry {g.entry} must be defined at every cell of the "
                              f"{show_int(nn)}×{show_int(dd)} state at {env}, found: {e}") from None


def _cells(g: Gadget, name: str, cells: AbstractSet[Any]) -> CellSet:
    """The set placement of predicate ``name`` frozen, once each member is checked to be a point the
    predicate can be read at: a tuple of as many ints in ``[0, 2^64)`` as it has arguments (any
    other member would never match, silently)."""
    n = g.predicate_arities[name]
    members = list(cells)  # read once: the members checked are the members frozen
    # the test of the loop below by C-level passes (a compiled layer's placement has thousands of
    # cells): every member exactly a tuple of n members, each exactly an int (a bool or an int
    # subclass fails, as below), all in [0, 2^WIDTH); the loop then only finds the first bad member
    # the types by identity: a class whose metaclass hashes and compares equal to int is no int
    if all_of(tuple, members) and set(map(len, members)) <= {n}:
        flat = list(itertools.chain.from_iterable(members))
        if all_int(flat) and (not flat or (min(flat) >= 0 and max(flat) < 1 << WIDTH)):
            return CellSet(members)
    for x in members:
        if not (type(x) is tuple and len(x) == n and all(type(k) is int and 0 <= k < 1 << WIDTH for k in x)):
            raise ParametricError(f"gadget {g.name}: placement {name}: expected tuples of {n} ints in [0, 2^{WIDTH}) "
                                  f"(the predicate's arguments), found {type(x).__name__} {safe_repr(x, 60)}")
    return CellSet(members)


_CACHED = type(functools.cache(abs))
_ONCE: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()
"""The views :func:`_read_once` made (weakly held: a view lives as long as its caller keeps it)."""


def _read_once(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` answering each point with its first answer (kept; an exception is not): a placement
    callable that answered otherwise at a second read (random, or counting its calls) passed the
    check against ``assume`` with one placement and built the layers from another, and a family's
    member had several values in one instance, outside the ∀ theorem. ``functools.cache``: its C
    lookup costs the bulk evaluation, which reads a callable once per cell, little. A view this made
    is returned as it is (so several calls given one view share its answers), a :class:`CellSet`
    too (frozen: each point has one answer already)."""
    if type(fn) is CellSet or (type(fn) is _CACHED and fn in _ONCE):
        return cast(Callable[..., T], fn)
    view = functools.cache(fn)
    _ONCE.add(view)
    return view


def read_once(callables: Mapping[str, Callable[..., T]] | None) -> dict[str, Callable[..., T]] | None:
    """The view of ``callables`` (families or placement callables, by name) that reads each point
    once: each callable answering every point with its first answer (None for None). Pass one view
    to every call about one instance (:func:`instantiate`, :func:`spec_at`, :func:`cell_value`, or a
    ``with predicates(view)`` block around them) and they all read one value per point; each of
    them reads its arguments through such a view anyway (module docstring). Anything but a mapping
    of callables is a :class:`ParametricError`."""
    if callables is None:
        return None
    if not isinstance(callables, Mapping):
        raise ParametricError(f"read_once: expected a mapping from names to callables, found {type(callables).__name__}")
    out: dict[str, Callable[..., T]] = {}
    for k, fn in callables.items():
        if not callable(fn):
            raise ParametricError(f"read_once: {safe_repr(k, 60)}: expected a callable on points, found {type(fn).__name__} {safe_repr(fn, 60)}")
        out[k] = _read_once(fn)
    return out


def _known_names(g: Gadget, given: Mapping[str, Any] | None, what: str, kind: str, known: AbstractSet[str]) -> None:
    """Every name ``given`` is one of the gadget's ``known`` (a misspelt name would be ignored while
    the one meant stays unset)."""
    unknown = sorted(map(repr, set(given or ()) - known)) if given else ()
    if unknown:
        has = ", ".join(sorted(known)) or "none"
        raise ParametricError(f"gadget {g.name}: {what}: {', '.join(unknown)} not among its {kind} ({has})")


def _families_once(g: Gadget, families: Families | None) -> dict[str, Callable[..., Scalar]] | None:
    """``families`` checked (a mapping from the gadget's family names to callables) and read once."""
    if families is None:
        return None
    if not isinstance(families, Mapping):
        raise ParametricError(f"gadget {g.name}: families: expected a mapping from names to callables on indices, found {type(families).__name__}")
    for k, fn in families.items():
        if not callable(fn):
            raise ParametricError(f"gadget {g.name}: family {k!r}: expected a callable on its indices (e.g. lambda p: ...), found {type(fn).__name__}")
    _known_names(g, families, "families", "families", g.family_names)
    return read_once(families)


def _placement_once(g: Gadget, placement: Mapping[str, Placement]) -> dict[str, Callable[..., bool]]:
    """Each predicate's placement as read: a set of cells checked and frozen (:func:`_cells`; its packed
    keys are then computed once for every read; a ``CellSet`` given is checked too: it is only a
    frozenset, its members never checked), a callable read once (:func:`_read_once`)."""
    return {k: _cells(g, k, v) if isinstance(v, AbstractSet) else _read_once(_as_callable(v, f"gadget {g.name}: placement {k}"))
            for k, v in placement.items()}


def _block_view(g: Gadget | None, given: AbstractSet[str] = frozenset()) -> dict[str, Callable[..., bool]]:
    """The predicates of the ``with predicates(...)`` block around the call that ``g`` reads (every one
    without a gadget), but those ``given``, as :func:`_placement_once` reads them (a set of cells in
    the block is a placement too: it was refused by the read-once wrapper)."""
    block = _PREDICATES.get()
    if g is None:  # no arity to check a set against: frozen as it is (a member that is no point never matches)
        return {k: CellSet(v) if isinstance(v, AbstractSet) else _read_once(v) if callable(v) else v for k, v in block.items()}
    return _placement_once(g, {k: v for k, v in block.items() if k in g.predicate_names and k not in given})


@contextlib.contextmanager
def _block_once(g: Gadget | None) -> Iterator[None]:
    """The block around the call replaced by its view read once (:func:`_block_view`) inside."""
    with predicates(_block_view(g)):
        yield


def _as_callable(p: Placement, where: str = "placement") -> Callable[..., bool]:
    """``p`` as a callable on points: a set as its membership test; ``where`` names it in the error
    (the gadget and the predicate: a dict or an int given for one was refused without either)."""
    if isinstance(p, CellSet):
        return p
    if isinstance(p, AbstractSet):
        return lambda *idx: idx in p
    if not callable(p):
        raise ParametricError(f"{where}: expected a callable on cells or a set of cells, found {type(p).__name__} {safe_repr(p, 60)}")
    return p


def _violation(g: Gadget, env: dict[str, int], nn: int, dd: int, preds: Mapping[str, Placement]) -> tuple[int, int] | None:
    """The first cell (row-major) where the placement violates ``assume``, or None."""
    bad = _failing(g, env, nn, dd, preds, first=True)
    return bad[0] if bad else None


def failing_cells(g: Gadget, env: Mapping[str, int], nn: int, dd: int, preds: Mapping[str, Placement] | None = None,
                  first: bool = False) -> list[tuple[int, int]]:
    """The cells (row-major) of the ``nn × dd`` state where ``assume`` fails (predicates from ``preds``,
    else from the ``predicates`` block around the call; with ``first``, at most the first one), every
    cell checked (at most ``MAX_PAINT`` of them) for all cells at once (:mod:`~symverify.kernel.parametric.bulk`,
    each node once; cell by cell where int64 cannot hold a value). The one check of a placement against
    ``assume``: an instance's (:func:`instantiate`) and a ∀-witness's (its re-check and repair). Each
    predicate point is read once (module docstring)."""
    sizes_ = [as_index(n) for n in (nn, dd)]  # the state's size, as ints ≥ 0 (numpy's negative dimensions
    if any(n is None or n < 0 for n in sizes_):  # error, or a float's TypeError, otherwise)
        raise ParametricError(f"gadget {g.name}: failing_cells: expected the state's rows and columns as ints ≥ 0, "
                              f"found {safe_repr(nn, 40)}×{safe_repr(dd, 40)}")
    if preds is not None and not isinstance(preds, Mapping):  # as instantiate's placement (was an AttributeError)
        raise ParametricError(f"gadget {g.name}: failing_cells: expected the placement as a mapping from predicate names "
                              f"to placements, found {type(preds).__name__} {safe_repr(preds, 60)}")
    view = _placement_once(g, preds or {})
    with predicates({**_block_view(g, view.keys()), **view}):
        return _failing(g, env, cast(int, sizes_[0]), cast(int, sizes_[1]), view, first)


def _failing(g: Gadget, env: Mapping[str, int], nn: int, dd: int, preds: Mapping[str, Placement], first: bool) -> list[tuple[int, int]]:
    """:func:`failing_cells` with the placement read once, inside a ``predicates`` block holding it."""
    import numpy as np

    limits.check(nn * dd, "MAX_PAINT", lambda: f"gadget {g.name} at {env}: the placement checked against assume at every cell of the {show_int(nn)}×{show_int(dd)} state")

    from symverify.kernel.parametric import bulk

    rows_ = np.repeat(np.arange(nn, dtype=np.int64), dd)
    chans = np.tile(np.arange(dd, dtype=np.int64), nn)
    try:
        ok = bulk.cond(g.assume, env, rows_, chans, preds)
    except bulk.FallbackError:
        out = []
        for r, c in itertools.product(range(nn), range(dd)):
            if not g.assume.eval({**env, "i": r, "q": c}):
                out.append((r, c))
                if first:
                    break
        return out
    bad = np.flatnonzero(~ok)[:1 if first else None]
    return list(zip(rows_[bad].tolist(), chans[bad].tolist()))


def instance_model(g: Gadget, params: Mapping[str, int], families: Families | None = None) -> Model:
    """The gadget at ``params`` as a model whose input is the whole ``N'×d'`` state."""
    env, nn, dd = sizes(g, params)
    return Model(nn, dd, nn, dd, instantiate(g, env, families), name=f"{g.name}{env}")


def _check_cell(g: Gadget, i: object, q: object, nn: int, dd: int) -> tuple[int, int]:
    """The cell ``(i, q)`` as Python ints; refused unless both are integers (``int`` or numpy
    integers, not bools: a float index would read between cells) inside the ``nn×dd`` state."""
    r, c = as_index(i), as_index(q)
    if r is None or c is None:
        raise ParametricError(f"gadget {g.name}: cell: expected int row and column, found "
                              f"({safe_repr(i, 40)}, {safe_repr(q, 40)}) of types {type(i).__name__}, {type(q).__name__}")
    if not (0 <= r < nn and 0 <= c < dd):
        raise ParametricError(f"gadget {g.name}: cell ({r}, {c}) outside the {nn}×{dd} state")
    return r, c


def spec_at(g: Gadget, params: Mapping[str, int], i: int, q: int, state: Callable[[int, int], Any],
            families: Families | None = None) -> Any:
    """The specified value of output cell ``(i, q)`` on the input ``state``; None where ``care`` fails.
    Each family member, predicate point (``families``; a ``with predicates(...)`` block) and input cell
    is read once (module docstring)."""
    fams = _families_once(g, families)
    with _block_once(g):
        env, nn, dd = sizes(g, params)
        i, q = _check_cell(g, i, q, nn, dd)
        e = {**env, "i": i, "q": q}
        if not g.care.eval(e):
            return None
        return _eval_value(g.spec, e, _sized(g, env, fams), entry_state(g, env, state))


def entry_state(g: Gadget, env: Mapping[str, int], state: Callable[[int, int], Any]) -> Callable[[int, int], Any]:
    """``state`` on the cells where the gadget's ``entry`` holds, 0 elsewhere; each cell read once
    (``state`` and ``entry`` alike: its first answer is kept). A value read must be exact (an int,
    Fraction or ``Sym``, or what :func:`as_scalar` reads as one): a float is a
    :class:`ParametricError` naming the gadget, the cell and the type."""
    state = _read_once(_state(state, f"gadget {g.name}"))
    where = f"gadget {g.name}: "

    def read(r: int, c: int) -> Any:
        return _input(state(r, c), r, c, where) if g.entry.eval({**env, "i": r, "q": c}) else 0

    return _read_once(read)


def cell_value(g: Gadget, params: Mapping[str, int], i: int, q: int, state: Callable[[int, int], Any],
               families: Families | None = None) -> Any:
    """Output cell ``(i, q)`` of the gadget on ``state``, through the layer formula
    ``(u·W + b1) ⊙ (h ⊛ u + b2)`` cell by cell (only the cells it reads are computed). Each family
    member, predicate point and input cell is read once (module docstring)."""
    fams = _families_once(g, families)
    with _block_once(g):
        return _cell_value(g, params, i, q, state, fams)


def _cell_value(g: Gadget, params: Mapping[str, int], i: int, q: int, state: Callable[[int, int], Any],
                families: Families | None) -> Any:
    """:func:`cell_value` with the families read once, inside a block read once."""
    env, nn, dd = sizes(g, params)
    i, q = _check_cell(g, i, q, nn, dd)
    families = _sized(g, env, families)
    memo: dict[tuple[int, int, int], Any] = {}
    inp = entry_state(g, env, state)
    taps: dict[tuple[int, int, str], list[tuple[int, Any]]] = {}

    def reads(level: int, r: int, c: int, kind: str) -> list[tuple[Any, int]]:
        """``(weight, row)`` of each ``h`` tap (``kind = "h"``: the row read, in channel ``c``) or
        ``(weight, channel)`` of each ``W`` tap (the channel read, in row ``r``) of layer ``level``'s
        cell ``(r, c)``; the taps of a channel are evaluated once."""
        key = (level, c, kind)
        if key not in taps:
            pl = g.layers[level - 1]
            where = f"gadget {g.name} layer {level - 1} {kind}"
            taps[key] = list(_taps(pl.h, env, c, nn, where, families).items() if kind == "h"
                             else _taps(pl.W, env, c, dd, where, families).items())
        if kind == "W":
            return [(w, p) for p, w in taps[key]]
        pl = g.layers[level - 1]
        out = []
        for k, hv in taps[key]:
            src = r - k
            if src < 0:
                if pl.mode == "causal":
                    continue  # the zero padding
                src %= nn
            out.append((hv, src))
        return out

    def below(level: int, r: int, c: int) -> Any:
        return inp(r, c) if level == 0 else memo[(level, r, c)]

    # Each cell of layer ``level`` from the cells it reads in the layer below: ``h ⊛ u + b2`` first,
    # and ``u·W + b1`` only where that is not 0. Walked with an explicit stack (a cell waits on top
    # of the cells it reads until they are known): a recursion one frame per layer raised
    # RecursionError on a gadget of 1500 layers.
    conv_of: dict[tuple[int, int, int], Any] = {}
    todo = [(len(g.layers), i, q)]
    while todo:
        key = todo[-1]
        level, r, c = key
        if level == 0 or key in memo:
            todo.pop()
            continue
        pl = g.layers[level - 1]
        if key not in conv_of:
            hs = reads(level, r, c, "h")
            missing = [(level - 1, src, c) for _, src in hs if level > 1 and (level - 1, src, c) not in memo]
            if missing:
                todo.extend(missing)
                continue
            conv: Any = _eval_value(pl.b2, {**env, "i": r, "q": c}, families)
            for hv, src in hs:
                conv = conv + hv * below(level - 1, src, c)
            if is_zero(conv):
                memo[key] = 0
                todo.pop()
                continue
            conv_of[key] = conv
        ws = reads(level, r, c, "W")
        missing = [(level - 1, r, p) for _, p in ws if level > 1 and (level - 1, r, p) not in memo]
        if missing:
            todo.extend(missing)
            continue
        proj: Any = _eval_value(pl.b1, {**env, "i": r, "q": c}, families)
        for wv, p in ws:
            proj = proj + wv * below(level - 1, r, p)
        memo[key] = proj * conv_of.pop(key)
        todo.pop()
    return below(len(g.layers), i, q)

