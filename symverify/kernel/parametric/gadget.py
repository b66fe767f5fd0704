"""Parametric gadgets: a BaseConv gadget defined once for all sizes (docs/forall.md §2).

A :class:`Gadget` names its size parameters (:class:`Param`, each with an inclusive range, plus
a condition ``where`` relating them), gives the state size ``rows = N'`` and ``cols = d'`` as
index expressions, its layers (:class:`PLayer`) and its specification ``spec``: the value every
output cell ``(i, q)`` must hold, as a :class:`~symverify.kernel.parametric.expr.Value` over the input
cells ``inp(r, c)`` and the weight families, wherever ``care(i, q)`` holds (elsewhere the output
is free). The input state is arbitrary on the cells where ``entry(i, q)`` holds and 0 elsewhere.
Free predicates (:func:`~symverify.kernel.parametric.expr.pred`) describe placements (which cells hold
an operand); ``assume(i, q)`` states what they satisfy at every cell.

A layer ``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` is given by

* ``W``: :class:`Tap` s ``(guard, src, value)`` over the output channel ``q``:
  ``W[p, q] = Σ value(q)`` over the taps with ``guard(q)`` and ``src(q) = p``;
* ``h``: taps over the channel ``q``: ``h[k, q] = Σ value(q)`` over the taps with ``guard(q)``
  and ``lag(q) = k`` (``src`` holds the lag);
* ``b1``, ``b2``: values over ``(i, q)``.

The variables ``i`` (row) and ``q`` (channel) are reserved for the cell; weights use no input
cells. Both interpretations (:mod:`symverify.kernel.parametric.concrete`,
:mod:`symverify.kernel.parametric.symbolic`) read exactly these fields.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn

from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.scalar import plain_fields, plain_int, plain_str, type_ids
from symverify.kernel.parametric.expr import (
    MAX_NESTING,
    MAX_NODES,
    TRUE,
    WIDTH,
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
    as_iexpr,
    as_value,
    is_name,
    name_note,
    nesting,
    node_count,
    vars_c,
    vars_i,
    vars_v,
)

__all__ = ["Param", "Tap", "PLayer", "Gadget", "tap", "CELL_VARS", "NODE_TYPES"]

CELL_VARS = frozenset({"i", "q"})


@dataclass(frozen=True, slots=True)
class Param:
    """A size parameter ``name ∈ [lo, hi]`` (inclusive)."""

    name: str
    lo: int
    hi: int

    def __post_init__(self) -> None:
        plain_fields(self, "lo", "hi")  # an int subclass as its plain value: z3 and the concrete checks read one number
        object.__setattr__(self, "name", plain_str(self.name))  # a str subclass as its characters
        if not is_name(self.name) or self.name in CELL_VARS:
            raise ParametricError(f"parameter: expected an identifier other than i, q; found {safe_repr(self.name)}{name_note(self.name)}")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (self.lo, self.hi)) or not 0 <= self.lo <= self.hi < 1 << WIDTH:
            raise ParametricError(f"parameter {self.name}: expected ints 0 ≤ lo ≤ hi < 2^{WIDTH}, found lo={safe_repr(self.lo)}, hi={safe_repr(self.hi)}")


@dataclass(frozen=True, slots=True)
class Tap:
    """One tap of ``W`` (``src`` = the source channel p) or ``h`` (``src`` = the lag k) on channel ``q``."""

    guard: Cond
    src: IExpr
    value: Value


def _seq(xs: object, what: str, items: str) -> tuple[object, ...]:
    """``xs`` as a tuple: a list or tuple of ``items``; a single object (a Tap, a PLayer, a Param,
    a Cond, an IExpr) where a sequence of them belongs is refused with :class:`ParametricError`."""
    if not isinstance(xs, (list, tuple)):
        raise ParametricError(f"{what}: expected a list or tuple of {items}, found {type(xs).__name__} {safe_repr(xs, 60)}")
    return tuple(xs)


def tap(src: object, value: object = 1, guard: Cond = TRUE) -> Tap:
    if not isinstance(guard, Cond):
        raise ParametricError(f"tap guard: expected a Cond, found {type(guard).__name__}")
    return Tap(guard, as_iexpr(src), as_value(value))


def _has_inp(v: Value) -> bool:
    if isinstance(v, Inp):
        return True
    if isinstance(v, VSum):
        return any(_has_inp(x) for x in v.items)
    if isinstance(v, VProd):
        return _has_inp(v.a) or _has_inp(v.b)
    if isinstance(v, VIf):
        return _has_inp(v.a) or _has_inp(v.b)
    return False


@dataclass(frozen=True, slots=True)
class PLayer:
    """One parametric layer (module docstring); ``mode`` is ``"causal"`` or ``"cyclic"``. A tap
    whose fields are not of their kinds (``Tap(True, ...)`` built directly, not through :func:`tap`)
    is left to the gadget that holds the layer, which refuses it naming itself, the node and the
    field (``gadget g: Tap guard: expected a condition, found bool True``), as for every node."""

    W: tuple[Tap, ...] = ()
    b1: Value = field(default_factory=lambda: as_value(0))
    h: tuple[Tap, ...] = ()
    b2: Value = field(default_factory=lambda: as_value(0))
    mode: str = "causal"

    def __post_init__(self) -> None:
        object.__setattr__(self, "W", _seq(self.W, "layer W", "taps"))
        object.__setattr__(self, "h", _seq(self.h, "layer h", "taps"))
        object.__setattr__(self, "b1", as_value(self.b1))
        object.__setattr__(self, "b2", as_value(self.b2))
        # a str subclass as its characters: the symbolic interpretation compares ``mode`` with ==, the
        # instance reads it through Mode(...) (a dict): a subclass answering each otherwise was proved
        # causal and built cyclic
        object.__setattr__(self, "mode", plain_str(self.mode))
        if self.mode not in ("causal", "cyclic"):
            raise ParametricError(f"layer mode: expected 'causal' or 'cyclic', found {safe_repr(self.mode)}")
        for name in ("W", "h", "b1", "b2"):  # the gadget's limits, before the recursive walks below
            x = getattr(self, name)
            if node_count(x, MAX_NODES) > MAX_NODES:
                raise ParametricError(f"layer {name}: more than MAX_NODES = {MAX_NODES} expression nodes, a shared "
                                      "subexpression counted once per use (every walk over them visits it once per use)")
            depth = nesting(x)
            if depth > MAX_NESTING:
                raise ParametricError(f"layer {name}: expressions nested {depth} deep, more than MAX_NESTING = "
                                      f"{MAX_NESTING} (every walk over them recurses; sums and &/| chains stay flat)")
        for name in ("W", "h"):
            for k, t in enumerate(getattr(self, name)):
                if not isinstance(t, Tap):
                    raise ParametricError(f"layer {name} tap {k}: expected a Tap, found {type(t).__name__}")
                if _ill_typed(t) is not None:  # Tap(True, ...) built directly: the gadget refuses it, naming itself
                    continue                   # and the node's field (Gadget._nodes), not "unknown node bool" here
                if "i" in vars_c(t.guard) | vars_i(t.src) | vars_v(t.value):
                    raise ParametricError(f"layer {name} tap {k}: a tap depends on the channel q only, found the row i in it")
                if _has_inp(t.value):
                    raise ParametricError(f"layer {name} tap {k}: a weight cannot read input cells")
        for name in ("b1", "b2"):
            if _has_inp(getattr(self, name)):
                raise ParametricError(f"layer {name}: a weight cannot read input cells")


_NODE_TYPES = frozenset({Lit, Var, Bin, Ite, Cmp, BoolOp, Not, Pred, Num, Inp, Fam, VSum, VProd, VIf, Tap, PLayer})
"""The classes a gadget's expressions and layers are made of (:meth:`Gadget._nodes`); no subclass."""
NODE_TYPES = _NODE_TYPES
_NODE_IDS = type_ids(*_NODE_TYPES)
"""Their identities: a node's class is tested by identity (:func:`~symverify.kernel.ir.scalar.type_ids`)."""

_FIELD_KINDS: dict[type, tuple[tuple[str, type], ...]] = {
    Ite: (("cond", Cond), ("a", IExpr), ("b", IExpr)),
    Cmp: (("a", IExpr), ("b", IExpr)),
    Not: (("c", Cond),),
    Pred: (("idx", IExpr),),
    Inp: (("row", IExpr), ("col", IExpr)),
    Fam: (("idx", IExpr),),
    VSum: (("items", Value),),
    VProd: (("a", Value), ("b", Value)),
    VIf: (("cond", Cond), ("a", Value), ("b", Value)),
    Tap: (("guard", Cond), ("src", IExpr), ("value", Value)),
}
"""What each field of a node holds (each member, for a tuple field), for the nodes whose constructor
does not check it (``Ite(cond, a, b)``, ``Tap(guard, src, value)`` … built directly, not through
:func:`~symverify.kernel.parametric.expr.ite` or :func:`tap`): a plain ``0`` where an index
expression belongs was read as no variable by the checks and then crashed ``instantiate``.
``Lit``, ``Var``, ``Bin``, ``BoolOp``, ``Num`` and ``PLayer`` check their own fields."""
_FIELD_KINDS_BY_ID = {id(k): v for k, v in _FIELD_KINDS.items()}  # read by the class's identity (type_ids)
_KIND_NAMES: dict[type, str] = {IExpr: "an index expression", Cond: "a condition", Value: "a value expression"}


def _ill_typed(x: object) -> str | None:
    """What is wrong with the fields of node ``x`` (:data:`_FIELD_KINDS`), or None."""
    for fname, kind in _FIELD_KINDS_BY_ID.get(id(type(x)), ()):
        y = getattr(x, fname)
        for k, item in enumerate(y) if isinstance(y, tuple) else ((None, y),):
            if not isinstance(item, kind):
                at = fname if k is None else f"{fname}[{k}]"
                return (f"{type(x).__name__} {at}: expected {_KIND_NAMES[kind]}, found {type(item).__name__} "
                        f"{safe_repr(item, 60)} in {safe_repr(x, 60)}")
    return None
"""The same classes, for the digest of a gadget's definition (:func:`~symverify.kernel.provers.forall.claim_digests`)."""


class Families(dict[str, tuple[IExpr, ...]]):
    """A gadget's validated ``families`` (name → index sizes): a dict that refuses every change
    after the gadget has checked it (a change would bypass that check); it pickles and copies as
    the dict it holds. Build a new gadget to change them (``dataclasses.replace(g, families=...)``)."""

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise ParametricError("gadget families are read-only once the gadget is built (they were validated then); "
                              "build a new gadget, e.g. dataclasses.replace(g, families={...})")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __reduce__(self) -> tuple[type[Families], tuple[dict[str, tuple[IExpr, ...]]]]:
        return (type(self), (dict(self),))


@dataclass(frozen=True)
class Gadget:
    """A parametric gadget (module docstring)."""

    name: str
    params: tuple[Param, ...]
    rows: IExpr
    cols: IExpr
    layers: tuple[PLayer, ...]
    spec: Value
    where: Cond = TRUE
    care: Cond = TRUE
    entry: Cond = TRUE
    assume: Cond = TRUE
    families: Mapping[str, tuple[IExpr, ...]] = field(default_factory=dict)
    doc: str = ""
    cases: tuple[Cond, ...] = ()
    """A case split for the prover (a hint, not part of the statement): the identity is decided on
    each case and on the cells no case covers, one query each (what holds on every part holds
    everywhere, whatever the cases are)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ParametricError(f"gadget name: expected a str, found {type(self.name).__name__} {safe_repr(self.name, 60)}")
        # the name heads every verdict and ∀ row about the gadget (``NAME: proved for all RANGES``,
        # ``∀ NAME: RANGES``): read as its characters (a str subclass printed another name), and one
        # identifier or several joined by dots (``lib.shift``), so that no space, colon or line break
        # in it can write ranges the claim was not proved for
        object.__setattr__(self, "name", plain_str(self.name))
        if not all(is_name(part) for part in self.name.split(".")):
            raise ParametricError(f"gadget name: expected an identifier, or identifiers joined by dots (lib.shift), "
                                  f"found {safe_repr(self.name, 60)}{name_note(self.name)}: it heads every verdict about the gadget")
        if not isinstance(self.doc, str):
            raise ParametricError(f"gadget {self.name} doc: expected a str, found {type(self.doc).__name__}")
        object.__setattr__(self, "params", _seq(self.params, f"gadget {self.name} params", "Params"))
        object.__setattr__(self, "cases", _seq(self.cases, f"gadget {self.name} cases", "conditions"))
        object.__setattr__(self, "layers", _seq(self.layers, f"gadget {self.name} layers", "PLayers"))
        object.__setattr__(self, "rows", as_iexpr(self.rows))
        object.__setattr__(self, "cols", as_iexpr(self.cols))
        object.__setattr__(self, "spec", as_value(self.spec))
        for k, p in enumerate(self.params):
            if type(p) is not Param:
                raise ParametricError(f"gadget {self.name} param {k}: expected a Param(name, lo, hi), found {type(p).__name__} {safe_repr(p, 60)}")
        for what in ("where", "care", "entry", "assume"):
            c = getattr(self, what)
            if not isinstance(c, Cond):
                raise ParametricError(f"gadget {self.name} {what}: expected a Cond (lt, eq, bit, ...), found {type(c).__name__} {safe_repr(c, 60)}")
        if not isinstance(self.families, Mapping):
            raise ParametricError(f"gadget {self.name} families: expected a mapping from names to index sizes, found {type(self.families).__name__}")
        # read once: the names checked are the names kept (a mapping iterating otherwise at a second
        # read declared a family "a b" past the check), each name once as its characters
        declared: dict[str, tuple[IExpr, ...]] = {}
        for fname, size in list(self.families.items()):
            fname = plain_str(fname)
            if not is_name(fname) or fname == "in":
                raise ParametricError(f"gadget {self.name} families: expected identifier names other than 'in' (the input "
                                      f"cells), found {safe_repr(fname, 60)}{name_note(fname)}")
            if fname in declared:
                raise ParametricError(f"gadget {self.name} families: family {fname} declared twice; expected one size per family")
            declared[fname] = tuple(as_iexpr(x) for x in _seq(size, f"gadget {self.name} family {fname} size", "index expressions"))
        object.__setattr__(self, "families", Families(declared))
        fields = ("rows", "cols", "where", "care", "entry", "assume", "spec", "layers", "cases", "families")
        # before any walk over them (the nesting's included): a shared subexpression is walked once per use
        count = node_count(tuple(tuple(self.families.values()) if what == "families" else getattr(self, what) for what in fields), MAX_NODES)
        if count > MAX_NODES:
            raise ParametricError(f"gadget {self.name}: more than MAX_NODES = {MAX_NODES} expression nodes, a shared "
                                  "subexpression counted once per use (every walk over them visits it once per use)")
        for what in fields:
            x = getattr(self, what)
            depth = nesting(tuple(x.values()) if what == "families" else x)
            if depth > MAX_NESTING:
                raise ParametricError(f"gadget {self.name} {what}: expressions nested {depth} deep, more than MAX_NESTING = "
                                      f"{MAX_NESTING} (every walk over them recurses; sums and &/| chains stay flat)")
        for x in self._nodes():
            if id(type(x)) not in _NODE_IDS:
                # each interpretation reads the nodes its own way (the z3 encoding caches them by ==
                # and hash): a subclass of Var equal to another variable was encoded as that one
                raise ParametricError(f"gadget {self.name}: expected the parametric language's own node classes, found "
                                      f"{type(x).__name__} (a subclass of {type(x).__mro__[1].__name__}) in {safe_repr(x, 60)}")
            if (bad := _ill_typed(x)) is not None:
                raise ParametricError(f"gadget {self.name}: {bad}")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ParametricError(f"gadget {self.name}: parameter names repeat: {names}")
        known = set(names)
        for what, vs in (("rows", vars_i(self.rows)), ("cols", vars_i(self.cols)), ("where", vars_c(self.where)),
                         *((f"family {k} size", frozenset().union(*(vars_i(x) for x in v)) if v else frozenset())
                           for k, v in self.families.items())):
            if not vs <= known:
                raise ParametricError(f"gadget {self.name} {what}: unknown variables {sorted(vs - known)} (parameters: {names})")
        cell = known | CELL_VARS
        for k, layer in enumerate(self.layers):
            if not isinstance(layer, PLayer):
                raise ParametricError(f"gadget {self.name} layer {k}: expected a PLayer, found {type(layer).__name__}")
            used = vars_v(layer.b1) | vars_v(layer.b2)
            for t in layer.W + layer.h:
                used |= vars_c(t.guard) | vars_i(t.src) | vars_v(t.value)
            if not used <= cell:
                raise ParametricError(f"gadget {self.name} layer {k}: unknown variables {sorted(used - cell)}")
        for k, c in enumerate(self.cases):
            if not isinstance(c, Cond):
                raise ParametricError(f"gadget {self.name} case {k}: expected a Cond, found {type(c).__name__}")
        cases = [(f"case {k}", vars_c(c)) for k, c in enumerate(self.cases)]
        for what, vs in (("spec", vars_v(self.spec)), ("care", vars_c(self.care)), ("entry", vars_c(self.entry)), ("assume", vars_c(self.assume)), *cases):
            if not vs <= cell:
                raise ParametricError(f"gadget {self.name} {what}: unknown variables {sorted(vs - cell)}")
        if not self.layers:
            raise ParametricError(f"gadget {self.name}: expected at least one layer")
        _ = self.predicate_arities  # one arity per predicate
        if self.assume != TRUE and not self.predicate_names:
            # ``assume`` states what the free predicates satisfy; without any it would only make
            # the statement vacuous where it fails (the prover and ``instantiate`` do not read it)
            raise ParametricError(f"gadget {self.name} assume: {self.assume} constrains free predicates, and the gadget "
                                  "has none; restrict the parameters with where= or the checked cells with care=")

    def __hash__(self) -> int:  # ``families`` is a dict: hashed as the set of its items (== compares it so)
        return hash((self.name, self.params, self.rows, self.cols, self.layers, self.spec, self.where, self.care,
                     self.entry, self.assume, frozenset(self.families.items()), self.cases))

    @functools.cached_property
    def predicate_names(self) -> frozenset[str]:
        """The names of the free predicates (:class:`~symverify.kernel.parametric.expr.Pred`) that
        occur anywhere in the gadget: the names a placement may give."""
        return frozenset(self.predicate_arities)

    @functools.cached_property
    def family_names(self) -> frozenset[str]:
        """The weight families declared in ``families`` or read anywhere in the gadget (a family
        need not be declared): the names ``instantiate(..., families=...)`` may give."""
        return frozenset(self.families) | {x.name for x in self._nodes() if isinstance(x, Fam)}

    @functools.cached_property
    def predicate_arities(self) -> Mapping[str, int]:
        """The number of arguments of each free predicate: one per name (a z3 function and a
        placement have one arity), else :class:`ParametricError`."""
        out: dict[str, int] = {}
        for x in self._nodes():
            if isinstance(x, Pred) and out.setdefault(x.name, len(x.idx)) != len(x.idx):
                raise ParametricError(f"gadget {self.name}: predicate {x.name} is used with {len(x.idx)} arguments and with "
                                      f"{out[x.name]}; expected one number of arguments per predicate")
        return out

    def _nodes(self) -> list[object]:
        """Every expression node of the gadget (each shared node once), walked without recursion."""
        seen: set[int] = set()
        out: list[object] = []
        todo: list[object] = [self.rows, self.cols, self.layers, self.spec, self.where, self.care, self.entry,
                              self.assume, self.cases, tuple(self.families.values())]
        while todo:
            x = todo.pop()
            if isinstance(x, tuple):
                todo.extend(x)
            elif dataclasses.is_dataclass(x) and id(x) not in seen:
                seen.add(id(x))
                out.append(x)
                todo.extend(getattr(x, f.name) for f in dataclasses.fields(x))
        return out

    def check_params(self, values: Mapping[str, int]) -> dict[str, int]:
        """``values`` restricted to the parameters, checked against their ranges and ``where``."""
        if not isinstance(values, Mapping):
            raise ParametricError(f"gadget {self.name}: expected the parameter values as a mapping {{name: int}}, found {type(values).__name__}")
        out: dict[str, int] = {}
        for p in self.params:
            if p.name not in values:  # not "found None": a value of None given is another mistake
                given = ", ".join(sorted(map(repr, values))) or "none"
                raise ParametricError(f"gadget {self.name}: parameter {p.name} is missing; expected an int in "
                                      f"[{p.lo}, {p.hi}] (given: {given})")
            v = plain_int(values[p.name])  # an int subclass as its plain value (its own <=, + … could lie)
            if not isinstance(v, int) or isinstance(v, bool):
                raise ParametricError(f"gadget {self.name}: parameter {p.name} needs an int value, found {safe_repr(v)}")
            if not p.lo <= v <= p.hi:
                raise ParametricError(f"gadget {self.name}: parameter {p.name} = {safe_repr(v)} outside its range [{p.lo}, {p.hi}]")
            out[p.name] = v
        extra = set(values) - set(out)
        if extra:  # by their reprs: names of several types (a str and an int) have no order among them
            raise ParametricError(f"gadget {self.name}: unknown parameters {', '.join(sorted(map(repr, extra)))} "
                                  f"(parameters: {', '.join(out) or 'none'})")
        if not self.where.eval(out):
            raise ParametricError(f"gadget {self.name}: parameters {out} violate its condition {self.where}")
        return out

    def ranges(self) -> str:
        """The parameter ranges and condition, as printed with a ∀ verdict."""
        rs = ", ".join(f"{p.name} ∈ [{p.lo}, {p.hi}]" for p in self.params)
        return rs if self.where == TRUE else f"{rs}, {self.where}"
