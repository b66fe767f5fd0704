"""The index and value expressions of the parametric DSL (docs/forall.md §1).

**Index expressions** (:class:`IExpr`) are unsigned integers built from literals, named variables
(the size parameters, the cell indices ``i`` (row) and ``q`` (channel)) and the operations
``+ − · << >> & | ^ // %`` plus :func:`pow2`, :func:`mod_pow2`, :func:`ite`. **Conditions**
(:class:`Cond`) compare index expressions (``lt``, ``le``, ``eq`` …), test bits (:func:`bit`) and
combine with ``&``, ``|``, ``~`` (short-circuit: the right operand of ``&`` is only evaluated where
the left one holds).

Every index expression denotes an integer in ``[0, 2^WIDTH)`` (``WIDTH = 64``). An operation
whose exact integer result would leave that range — a subtraction below 0, an addition, product or
left shift reaching ``2^WIDTH``, a shift by ``WIDTH`` or more — or a division by zero is
*undefined*: the concrete interpretation raises :class:`ParametricError` and the ∀-prover refuses
a gadget in which it can happen for some parameter value (nothing is wrapped silently).

**Value expressions** (:class:`Value`) are polynomials: rational constants, input cells
``inp(r, c)`` (the state a gadget starts from), members of weight families ``fam("d1", p)``
(free symbols: a statement proved with them holds for every value), sums, products and
``where(cond, a, b)``.

>>> i, s = var("i"), var("s")
>>> e = (i + s) % pow2(var("m"))
>>> e.eval({"i": 5, "s": 4, "m": 3})
1
>>> (i - s).eval({"i": 1, "s": 2})
Traceback (most recent call last):
...
symverify.kernel.parametric.expr.ParametricError: index expression (i - s): subtraction below 0 (1 - 2) at i=1, s=2
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import TypeGuard, Union

from symverify.errors import IRError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.scalar import as_scalar, is_bool, is_canonical, plain_int, plain_str

__all__ = [
    "WIDTH", "ParametricError", "IExpr", "Lit", "Var", "Bin", "Ite", "Cond", "Cmp", "BoolOp", "Not", "TRUE", "FALSE",
    "Pred", "pred", "predicates", "call_predicate", "Value", "Num", "Inp", "Fam", "VSum", "VProd", "VIf",
    "var", "lit", "as_iexpr", "pow2", "mod_pow2", "ite", "bit", "lt", "le", "gt", "ge", "eq", "ne", "all_of", "any_of",
    "inp", "fam", "where", "as_value", "ZERO", "ONE", "MAX_NESTING", "nesting", "MAX_NODES", "node_count", "env_value", "is_name", "name_note",
]

WIDTH = 64
_TOP = 1 << WIDTH


class ParametricError(IRError):
    """A parametric gadget or expression is malformed or undefined somewhere in its range."""


IntLike = Union["IExpr", int]


def is_name(x: object) -> TypeGuard[str]:
    """Whether ``x`` is a name of the language: a ``str`` that is an identifier as Python reads one in
    source, i.e. already in Unicode normal form NFKC (``"ｉ"`` and ``"ℕ"`` pass ``str.isidentifier`` but
    Python reads them as ``i`` and ``N``: a parameter ``ｉ`` printed as the cell's row and was not it)."""
    if not isinstance(x, str) or not x.isidentifier():
        return False
    if x.isascii():
        return True
    import unicodedata

    return unicodedata.normalize("NFKC", x) == x


def name_note(x: object) -> str:
    """What an error about the name ``x`` adds when ``x`` is an identifier not in NFKC form (:func:`is_name`)."""
    if isinstance(x, str) and x.isidentifier() and not is_name(x):
        import unicodedata

        return f" (not in NFKC form: Python reads it as {unicodedata.normalize('NFKC', x)!r})"
    return ""


def _env(env: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(env.items()))


class IExpr:
    """An unsigned index expression (module docstring); build with :func:`var`, :func:`lit` and operators."""

    __slots__ = ()

    def __bool__(self) -> bool:
        # ``N and M`` would be M, ``if N:`` always taken: an expression is not a number yet
        raise ParametricError(f"{self}: an index expression has no Python truth value; compare it (lt, eq, ne, ...) "
                              "or evaluate it with .eval(env)")

    def __add__(self, o: IntLike) -> IExpr:
        return Bin("+", self, as_iexpr(o))

    def __radd__(self, o: int) -> IExpr:
        return Bin("+", as_iexpr(o), self)

    def __sub__(self, o: IntLike) -> IExpr:
        return Bin("-", self, as_iexpr(o))

    def __rsub__(self, o: int) -> IExpr:
        return Bin("-", as_iexpr(o), self)

    def __mul__(self, o: IntLike) -> IExpr:
        return Bin("*", self, as_iexpr(o))

    def __rmul__(self, o: int) -> IExpr:
        return Bin("*", as_iexpr(o), self)

    def __lshift__(self, o: IntLike) -> IExpr:
        return Bin("<<", self, as_iexpr(o))

    def __rshift__(self, o: IntLike) -> IExpr:
        return Bin(">>", self, as_iexpr(o))

    def __and__(self, o: IntLike) -> IExpr:
        return Bin("&", self, as_iexpr(o))

    def __or__(self, o: IntLike) -> IExpr:
        return Bin("|", self, as_iexpr(o))

    def __xor__(self, o: IntLike) -> IExpr:
        return Bin("^", self, as_iexpr(o))

    def __floordiv__(self, o: IntLike) -> IExpr:
        return Bin("//", self, as_iexpr(o))

    def __mod__(self, o: IntLike) -> IExpr:
        return Bin("%", self, as_iexpr(o))

    def __rlshift__(self, o: int) -> IExpr:
        return Bin("<<", as_iexpr(o), self)

    def __rrshift__(self, o: int) -> IExpr:
        return Bin(">>", as_iexpr(o), self)

    def __rand__(self, o: int) -> IExpr:
        return Bin("&", as_iexpr(o), self)

    def __ror__(self, o: int) -> IExpr:
        return Bin("|", as_iexpr(o), self)

    def __rxor__(self, o: int) -> IExpr:
        return Bin("^", as_iexpr(o), self)

    def __rfloordiv__(self, o: int) -> IExpr:
        return Bin("//", as_iexpr(o), self)

    def __rmod__(self, o: int) -> IExpr:
        return Bin("%", as_iexpr(o), self)

    # Python's comparisons would give a bool (or a TypeError), never a condition: refuse them with
    # the function to use (``==`` stays structural equality of expressions).
    def __lt__(self, o: object) -> bool:
        raise ParametricError(f"{self} < {o}: Python comparisons do not build conditions; write lt(a, b)")

    def __le__(self, o: object) -> bool:
        raise ParametricError(f"{self} <= {o}: Python comparisons do not build conditions; write le(a, b)")

    def __gt__(self, o: object) -> bool:
        raise ParametricError(f"{self} > {o}: Python comparisons do not build conditions; write gt(a, b)")

    def __ge__(self, o: object) -> bool:
        raise ParametricError(f"{self} >= {o}: Python comparisons do not build conditions; write ge(a, b)")

    def __truediv__(self, o: object) -> IExpr:
        raise ParametricError(f"{self} / {o}: index expressions are integers; write // (floor division)")

    def __rtruediv__(self, o: object) -> IExpr:
        raise ParametricError(f"{o} / {self}: index expressions are integers; write // (floor division)")

    def __pow__(self, o: object) -> IExpr:
        raise ParametricError(f"{self} ** {o}: no power of index expressions; write a product, or pow2(k) for 2^k")

    def __rpow__(self, o: object) -> IExpr:
        raise ParametricError(f"{o} ** {self}: no power of index expressions; write pow2(k) for 2^k")

    def __neg__(self) -> IExpr:
        raise ParametricError(f"-{self}: index expressions are unsigned; write a subtraction a - b")

    def eval(self, env: Mapping[str, int]) -> int:
        """The value at the variable assignment ``env``; :class:`ParametricError` where undefined.
        ``env`` maps each variable read to an ``int`` in ``[0, 2^WIDTH)`` (an ``int`` subclass by its
        plain value); anything else read (a negative int, a bool, a float, a numpy integer) is a
        :class:`ParametricError` naming the variable, never computed with. Each node is evaluated
        once (by identity), so the cost is linear in the nodes held in memory however often a
        subexpression is shared."""
        return _eval_i(self, _env_mapping(env))


@dataclass(frozen=True, slots=True)
class Lit(IExpr):
    value: int

    def __post_init__(self) -> None:
        # an int subclass is stored as its plain value: z3 reads the stored integer, while the concrete
        # interpretation's ``+``, ``*``, … would call the subclass's own operators
        object.__setattr__(self, "value", plain_int(self.value))
        if not isinstance(self.value, int) or isinstance(self.value, bool) or not 0 <= self.value < _TOP:
            raise ParametricError(f"index literal: expected an int in [0, 2^{WIDTH}), found {safe_repr(self.value)}")

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Var(IExpr):
    name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", plain_str(self.name))  # a str subclass as its characters
        if not is_name(self.name):
            raise ParametricError(f"index variable: expected an identifier, found {safe_repr(self.name)}{name_note(self.name)}")

    def __str__(self) -> str:
        return self.name


_OPS = ("+", "-", "*", "<<", ">>", "&", "|", "^", "//", "%")


def _plain_tuple(xs: object, what: str) -> tuple[object, ...]:
    """``xs`` as a plain tuple, read once: a tuple subclass could iterate differently for each walk
    (the z3 encoding, the concrete and the bulk evaluation each iterate the children)."""
    if type(xs) is tuple:
        return xs
    if not isinstance(xs, (tuple, list)):
        raise ParametricError(f"{what}: expected a tuple, found {type(xs).__name__} {safe_repr(xs, 60)}")
    return tuple(xs)


@dataclass(frozen=True, slots=True)
class Bin(IExpr):
    op: str
    a: IExpr
    b: IExpr

    def __post_init__(self) -> None:
        # a str subclass as its characters: each interpretation compares ``op`` its own way (==, a dict)
        object.__setattr__(self, "op", plain_str(self.op))
        if self.op not in _OPS:
            raise ParametricError(f"index operation: expected one of {_OPS}, found {safe_repr(self.op)}")
        for x in (self.a, self.b):
            if not isinstance(x, IExpr):
                raise ParametricError(f"index operation {self.op}: expected index expressions, found {type(x).__name__}")

    def __str__(self) -> str:
        return f"({self.a} {self.op} {self.b})"


@dataclass(frozen=True, slots=True)
class Ite(IExpr):
    """``a`` where ``cond`` holds, else ``b`` (only the chosen branch is evaluated)."""

    cond: Cond
    a: IExpr
    b: IExpr

    def __str__(self) -> str:
        return f"({self.a} if {self.cond} else {self.b})"


class Cond:
    """A condition on index expressions; combine with ``&`` (short-circuit), ``|``, ``~``."""

    __slots__ = ()

    def __and__(self, o: Cond) -> Cond:
        return _flat("and", self, o)

    def __or__(self, o: Cond) -> Cond:
        return _flat("or", self, o)

    def __rand__(self, o: Cond) -> Cond:  # ``True & c``: refused by BoolOp, as ``c & True`` is
        return _flat("and", o, self)

    def __ror__(self, o: Cond) -> Cond:
        return _flat("or", o, self)

    def __invert__(self) -> Cond:
        return Not(self)

    def __bool__(self) -> bool:
        # ``c1 and c2`` would be c2 (c1 silently dropped), ``not c`` False, ``if c:`` always taken
        raise ParametricError(f"{self}: a condition has no Python truth value; combine conditions with & | ~, "
                              "evaluate one with .eval(env)")

    def eval(self, env: Mapping[str, int]) -> bool:
        """The truth value at ``env`` (short-circuit), each node evaluated once; ``env`` as
        :meth:`IExpr.eval` reads it."""
        return _eval_c(self, _env_mapping(env))


_CMPS = ("<", "<=", "==", "!=")


@dataclass(frozen=True, slots=True)
class Cmp(Cond):
    op: str
    a: IExpr
    b: IExpr

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", plain_str(self.op))  # a str subclass as its characters (as Bin's)
        if self.op not in _CMPS:
            raise ParametricError(f"comparison: expected one of {_CMPS}, found {safe_repr(self.op)}")

    def __str__(self) -> str:
        return f"{self.a} {self.op} {self.b}"


@dataclass(frozen=True, slots=True)
class BoolOp(Cond):
    op: str  # "and" | "or"
    items: tuple[Cond, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", plain_str(self.op))  # a str subclass as its characters (as Bin's)
        object.__setattr__(self, "items", _plain_tuple(self.items, "boolean operation items"))
        if self.op not in ("and", "or"):
            raise ParametricError(f"boolean operation: expected 'and' or 'or', found {safe_repr(self.op)}")
        for c in self.items:
            if not isinstance(c, Cond):
                raise ParametricError(f"boolean operation {self.op}: expected conditions (lt, eq, bit, ...), found {type(c).__name__} {safe_repr(c, 60)}")

    def __str__(self) -> str:
        if not self.items:
            return "true" if self.op == "and" else "false"
        return "(" + f" {self.op} ".join(map(str, self.items)) + ")"


@dataclass(frozen=True, slots=True)
class Not(Cond):
    c: Cond

    def __str__(self) -> str:
        return f"not {self.c}"


@dataclass(frozen=True, slots=True)
class Pred(Cond):
    """A free predicate ``name(idx…)`` on cells (e.g. "this cell holds an operand"): a proof holds for
    every predicate satisfying the gadget's ``assume``; concretely it is the callable given in
    :func:`predicates`."""

    name: str
    idx: tuple[IExpr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "idx", _plain_tuple(self.idx, f"predicate {safe_repr(self.name)} arguments"))
        object.__setattr__(self, "name", plain_str(self.name))  # a str subclass as its characters
        if not is_name(self.name):
            raise ParametricError(f"predicate: expected an identifier name, found {safe_repr(self.name)}{name_note(self.name)}")

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.idx))})"


def _flat(op: str, a: Cond, b: Cond) -> BoolOp:
    """``a op b`` as one flat operation: the items of an operand with the same ``op`` are spliced
    in, in order (the same short-circuit order), so that a chain ``c1 & c2 & … & ck`` stays one
    level deep."""
    def items(c: Cond) -> tuple[Cond, ...]:
        return c.items if isinstance(c, BoolOp) and c.op == op else (c,)

    return BoolOp(op, items(a) + items(b))


MAX_NESTING = 128
"""The deepest nesting of expression nodes (index expressions, conditions, values) a gadget may
hold (:func:`nesting`): every walk over expressions (evaluation, substitution, the z3 encoding,
printing) recurses on their depth, a few Python frames per level. Sums and ``&``/``|`` chains
built operator by operator stay flat and do not count against it."""


MAX_NODES = 1_000_000
"""The most expression nodes a gadget may hold, a subexpression counted once per use
(:func:`node_count`): every walk over expressions (evaluation, substitution, hashing, the z3
encoding) visits a shared subexpression once per use, so ``e = e & e`` repeated 40 times, 41
nodes in memory, is ``2^40`` nodes to each walk. The library's gadgets hold at most about 750."""


def node_count(x: object, limit: int) -> int:
    """The expression nodes in ``x`` (each walk but :func:`nesting` visits a subexpression once per use),
    counted up to ``limit + 1`` (the walk stops there, so it costs at most that many steps)."""
    n = 0
    stack: list[object] = [x]
    while stack and n <= limit:
        y = stack.pop()
        if isinstance(y, (tuple, list)):
            stack.extend(y)
        elif dataclasses.is_dataclass(y) and not isinstance(y, type):
            if isinstance(y, (IExpr, Cond, Value)):
                n += 1
            stack.extend(getattr(y, f.name) for f in dataclasses.fields(y))
    return n


def nesting(x: object) -> int:
    """The depth of the deepest chain of expression nodes (:class:`IExpr`, :class:`Cond`,
    :class:`Value`) in ``x``: expressions, or dataclasses and tuples holding them (walked without
    recursion; containers add no depth).

    The depth is a function of the object alone, ``h(y) = [y is an expression node] + max h(z)``
    over its fields or items (0 for anything else), so each object is visited once, by identity,
    and its depth kept: a subexpression shared by many terms (the rows a layer reads, substituted
    into every term of the layer before) is walked once, not once per use. Every object walked is
    held by ``x`` for the whole call, so no identity is reused while it is kept."""
    depth: dict[int, int] = {}
    stack: list[tuple[object, bool]] = [(x, False)]
    while stack:
        y, ready = stack.pop()
        if not ready and id(y) in depth:
            continue
        if isinstance(y, (tuple, list)):
            parts: list[object] | tuple[object, ...] = y
            own = 0
        elif dataclasses.is_dataclass(y) and not isinstance(y, type):
            parts = [getattr(y, f.name) for f in dataclasses.fields(y)]
            own = 1 if isinstance(y, (IExpr, Cond, Value)) else 0
        else:
            depth[id(y)] = 0
            continue
        if ready:
            depth[id(y)] = own + max((depth[id(z)] for z in parts), default=0)
        else:
            stack.append((y, True))
            stack.extend((z, False) for z in parts if id(z) not in depth)
    return depth[id(x)]


_PREDICATES: contextvars.ContextVar[Mapping[str, Callable[..., bool]]] = contextvars.ContextVar("predicates", default=MappingProxyType({}))


@contextlib.contextmanager
def predicates(preds: Mapping[str, Callable[..., bool]]) -> Iterator[None]:
    """Evaluate :class:`Pred` conditions with these predicates inside the ``with`` block: each a
    callable on points (:func:`call_predicate`) or a set of points, true exactly at its members."""
    token = _PREDICATES.set({**_PREDICATES.get(), **preds})
    try:
        yield
    finally:
        _PREDICATES.reset(token)


def call_predicate(name: str, fn: Callable[..., object], idx: tuple[int, ...]) -> bool:
    """``fn(*idx)``: predicate ``name`` at the point ``idx``, as a placement's callable gives it. It
    must return a bool (``numpy.bool_`` included): anything else, or an exception the callable
    raises, is a :class:`ParametricError` naming the predicate and the point (never read as a truth
    value: ``None`` or ``"no"`` would be silently false or true)."""
    try:
        r = fn(*idx)
    except Exception as e:
        raise ParametricError(f"placement {name} at {idx}: the callable raised {type(e).__name__}: {safe_repr(str(e), 120)}") from e
    if is_bool(r):
        return bool(r)
    raise ParametricError(f"placement {name} at {idx}: expected True or False, found {type(r).__name__} {safe_repr(r, 60)}")


def pred(name: str, *idx: IntLike) -> Cond:
    return Pred(name, tuple(as_iexpr(x) for x in idx))


TRUE: Cond = BoolOp("and", ())
FALSE: Cond = BoolOp("or", ())


def var(name: str) -> Var:
    return Var(name)


def lit(v: int) -> Lit:
    return Lit(v)


def as_iexpr(x: object) -> IExpr:
    if isinstance(x, IExpr):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return Lit(x)
    raise ParametricError(f"index expression: expected an IExpr or a non-negative int, found {type(x).__name__} {safe_repr(x)}")


def pow2(k: IntLike) -> IExpr:
    """``2^k`` (undefined for ``k ≥ WIDTH``)."""
    return Bin("<<", Lit(1), as_iexpr(k))


def mod_pow2(a: IntLike, k: IntLike) -> IExpr:
    """``a mod 2^k`` (the low ``k`` bits)."""
    return Bin("%", as_iexpr(a), pow2(k))


def ite(cond: Cond, a: IntLike, b: IntLike) -> IExpr:
    if not isinstance(cond, Cond):
        raise ParametricError(f"ite: expected a Cond (lt, eq, bit, ...), found {type(cond).__name__} {safe_repr(cond, 60)}")
    return Ite(cond, as_iexpr(a), as_iexpr(b))


def bit(a: IntLike, k: IntLike) -> Cond:
    """Bit ``k`` of ``a`` is 1."""
    return Cmp("==", Bin("&", Bin(">>", as_iexpr(a), as_iexpr(k)), Lit(1)), Lit(1))


def lt(a: IntLike, b: IntLike) -> Cond:
    return Cmp("<", as_iexpr(a), as_iexpr(b))


def le(a: IntLike, b: IntLike) -> Cond:
    return Cmp("<=", as_iexpr(a), as_iexpr(b))


def gt(a: IntLike, b: IntLike) -> Cond:
    return Cmp("<", as_iexpr(b), as_iexpr(a))


def ge(a: IntLike, b: IntLike) -> Cond:
    return Cmp("<=", as_iexpr(b), as_iexpr(a))


def eq(a: IntLike, b: IntLike) -> Cond:
    return Cmp("==", as_iexpr(a), as_iexpr(b))


def ne(a: IntLike, b: IntLike) -> Cond:
    return Cmp("!=", as_iexpr(a), as_iexpr(b))


def all_of(*cs: Cond) -> Cond:
    return BoolOp("and", tuple(cs))


def any_of(*cs: Cond) -> Cond:
    return BoolOp("or", tuple(cs))


# ---- values ------------------------------------------------------------------------------------


class Value:
    """A polynomial value expression (module docstring); ``+``, ``−`` and ``*`` build sums and products."""

    __slots__ = ()

    def __bool__(self) -> bool:
        # ``v or 0`` would be v, ``if v:`` always taken: a value is a polynomial, not a number
        raise ParametricError("a value expression has no Python truth value; use where(cond, a, b) for a choice")

    def __add__(self, o: object) -> Value:
        return _sum(self, as_value(o))

    def __radd__(self, o: object) -> Value:
        return _sum(as_value(o), self)

    def __sub__(self, o: object) -> Value:
        return _sum(self, VProd(Num(-1), as_value(o)))

    def __rsub__(self, o: object) -> Value:
        return _sum(as_value(o), VProd(Num(-1), self))

    def __neg__(self) -> Value:
        return VProd(Num(-1), self)

    def __mul__(self, o: object) -> Value:
        return VProd(self, as_value(o))

    def __rmul__(self, o: object) -> Value:
        return VProd(as_value(o), self)

    def __truediv__(self, o: object) -> Value:
        raise ParametricError(f"value / {safe_repr(o, 40)}: values are polynomials; multiply by Fraction(1, k) instead")

    def __rtruediv__(self, o: object) -> Value:
        raise ParametricError(f"{safe_repr(o, 40)} / value: values are polynomials; there is no division by a value")

    def __pow__(self, o: object) -> Value:
        raise ParametricError(f"value ** {safe_repr(o, 40)}: write the product (v * v) instead")


@dataclass(frozen=True, slots=True)
class Num(Value):
    value: int | Fraction

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, (int, Fraction)):
            raise ParametricError(f"value constant: expected an int or Fraction, found {safe_repr(self.value)}")
        if not is_canonical(self.value):  # plain ints inside, as the IR stores scalars (an int subclass, a
            object.__setattr__(self, "value", as_scalar(self.value, "value constant"))  # Fraction(IntSub(5), 3))

    def __repr__(self) -> str:  # a constant of more than 4300 digits has no repr of its own
        return f"Num({safe_repr(self.value, 1 << 30)})"


@dataclass(frozen=True, slots=True)
class Inp(Value):
    """The input state's cell ``(row, col)``."""

    row: IExpr
    col: IExpr


@dataclass(frozen=True, slots=True)
class Fam(Value):
    """Member ``idx`` of the weight family ``name`` (a free symbol)."""

    name: str
    idx: tuple[IExpr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", plain_str(self.name))  # a str subclass as its characters
        object.__setattr__(self, "idx", _plain_tuple(self.idx, f"weight family {safe_repr(self.name)} indices"))
        if not is_name(self.name):
            raise ParametricError(f"weight family: expected an identifier name, found {safe_repr(self.name)}{name_note(self.name)}")
        if self.name == "in":
            raise ParametricError("weight family: the name 'in' is reserved for the input cells; choose another name")


@dataclass(frozen=True, slots=True)
class VSum(Value):
    items: tuple[Value, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _plain_tuple(self.items, "sum items"))


def _sum(a: Value, b: Value) -> VSum:
    """``a + b`` as one flat sum: the items of a sum operand are spliced in, in order, so that a
    sum built term by term (``sum(fam("w", k) for k in ...)``) stays one level deep however many
    terms it has (every walk over values recurses on their depth)."""
    return VSum((a.items if isinstance(a, VSum) else (a,)) + (b.items if isinstance(b, VSum) else (b,)))


@dataclass(frozen=True, slots=True)
class VProd(Value):
    a: Value
    b: Value


@dataclass(frozen=True, slots=True)
class VIf(Value):
    cond: Cond
    a: Value
    b: Value


ZERO: Value = Num(0)
ONE: Value = Num(1)


def as_value(x: object) -> Value:
    if isinstance(x, Value):
        return x
    if isinstance(x, (int, Fraction)) and not isinstance(x, bool):
        return Num(x)
    raise ParametricError(f"value expression: expected a Value, int or Fraction, found {type(x).__name__} {safe_repr(x)}")


def inp(row: IntLike, col: IntLike) -> Value:
    return Inp(as_iexpr(row), as_iexpr(col))


def fam(name: str, *idx: IntLike) -> Value:
    return Fam(name, tuple(as_iexpr(x) for x in idx))


def where(cond: Cond, a: object, b: object = 0) -> Value:
    """``a`` where ``cond`` holds, else ``b`` (default 0)."""
    if not isinstance(cond, Cond):
        raise ParametricError(f"where: expected a Cond, found {type(cond).__name__}")
    return VIf(cond, as_value(a), as_value(b))


# ---- concrete evaluation -------------------------------------------------------------------------


def _env_mapping(env: object) -> Mapping[str, int]:
    """``env`` if it is a mapping (of variable names to values), else :class:`ParametricError`."""
    if not isinstance(env, Mapping):
        raise ParametricError(f"variable assignment: expected a mapping {{name: int}}, found {type(env).__name__} {safe_repr(env, 60)}")
    return env


def env_value(name: str, v: object) -> int:
    """The value ``v`` an assignment gives the index variable ``name``, as the ``int`` an index
    expression denotes: an ``int`` in ``[0, 2^WIDTH)`` (an ``int`` subclass by its plain value),
    else :class:`ParametricError` naming the variable. A value outside the language was computed
    with as it came: ``i + 1`` at ``i = -5`` was ``-4``, at ``i = 0.5`` ``1.5``, and at a numpy
    ``int64`` near ``2^63`` the sum wrapped to a negative number."""
    x = plain_int(v)
    if type(x) is int and 0 <= x < _TOP:
        return x
    raise ParametricError(f"index variable {name}: expected an int in [0, 2^{WIDTH}) as its value, found "
                          f"{type(v).__name__} {safe_repr(v, 60)}")


def _eval_i(e: IExpr, env: Mapping[str, int], memo: dict[int, object] | None = None) -> int:
    """``e`` at ``env``; ``memo`` holds the value of every node already evaluated in this walk, by
    identity, so a subexpression shared ``k`` times is evaluated once: the walk is linear in the
    nodes held in memory (``e = e & e`` forty times is 41 of them), not in their uses (``2^40``)."""
    if isinstance(e, Lit):
        return e.value
    if isinstance(e, Var):
        try:
            v = env[e.name]
        except KeyError:
            raise ParametricError(f"index variable {e.name!r} has no value (known: {sorted(env)})") from None
        return v if type(v) is int and 0 <= v < _TOP else env_value(e.name, v)
    if memo is None:
        memo = {}
    hit = memo.get(id(e))
    if hit is not None:
        return hit  # type: ignore[return-value]
    if isinstance(e, Ite):
        r = _eval_i(e.a, env, memo) if _eval_c(e.cond, env, memo) else _eval_i(e.b, env, memo)
        memo[id(e)] = r
        return r
    if not isinstance(e, Bin):
        raise ParametricError(f"index expression: unknown node {type(e).__name__}")
    a, b = _eval_i(e.a, env, memo), _eval_i(e.b, env, memo)
    op = e.op

    def bad(why: str) -> ParametricError:
        return ParametricError(f"index expression {e}: {why} at {_env(env)}")

    if op == "+":
        r = a + b
    elif op == "-":
        if a < b:
            raise bad(f"subtraction below 0 ({a} - {b})")
        r = a - b
    elif op == "*":
        r = a * b
    elif op in ("<<", ">>"):
        if b >= WIDTH:
            raise bad(f"shift by {b} ≥ {WIDTH}")
        r = a << b if op == "<<" else a >> b
    elif op == "&":
        r = a & b
    elif op == "|":
        r = a | b
    elif op == "^":
        r = a ^ b
    else:
        if b == 0:
            raise bad("division by zero")
        r = a // b if op == "//" else a % b
    if r >= _TOP:
        raise bad(f"overflow of the {WIDTH}-bit width ({r})")
    memo[id(e)] = r
    return r


def _eval_c(c: Cond, env: Mapping[str, int], memo: dict[int, object] | None = None) -> bool:
    """``c`` at ``env`` (short-circuit ``and``/``or``), each node evaluated once per walk (:func:`_eval_i`)."""
    if memo is None:
        memo = {}
    hit = memo.get(id(c))
    if hit is not None:
        return hit  # type: ignore[return-value]
    if isinstance(c, Cmp):
        a, b = _eval_i(c.a, env, memo), _eval_i(c.b, env, memo)
        r = {"<": a < b, "<=": a <= b, "==": a == b, "!=": a != b}[c.op]
    elif isinstance(c, BoolOp):
        if c.op == "and":
            r = all(_eval_c(x, env, memo) for x in c.items)
        else:
            r = any(_eval_c(x, env, memo) for x in c.items)
    elif isinstance(c, Not):
        r = not _eval_c(c.c, env, memo)
    elif isinstance(c, Pred):
        fn = _PREDICATES.get().get(c.name)
        if fn is None:
            raise ParametricError(f"predicate {c.name} has no value (give it as instantiate(..., placement={{...}}))")
        point = tuple(_eval_i(x, env, memo) for x in c.idx)
        # a set of points holds exactly at its members, as the bulk evaluation reads it (a set in a
        # ``predicates`` block was called: "'set' object is not callable")
        r = (point in fn) if isinstance(fn, AbstractSet) else call_predicate(c.name, fn, point)
    else:
        raise ParametricError(f"condition: unknown node {type(c).__name__}")
    memo[id(c)] = r
    return r


# ---- substitution and variables ----------------------------------------------------------------


def subst_i(e: IExpr, sub: Mapping[str, IExpr], visit: Callable[[], None] | None = None) -> IExpr:
    """``e`` with each variable named in ``sub`` replaced by its expression; ``visit`` (if given) is
    called at every node walked, so a caller can bound the walk (the result is a tree: a variable
    used ``k`` times is replaced ``k`` times, and a composition of substitutions grows geometrically)."""
    if visit is not None:
        visit()
    if isinstance(e, Var):
        return sub.get(e.name, e)
    if isinstance(e, Bin):
        return Bin(e.op, subst_i(e.a, sub, visit), subst_i(e.b, sub, visit))
    if isinstance(e, Ite):
        return Ite(subst_c(e.cond, sub, visit), subst_i(e.a, sub, visit), subst_i(e.b, sub, visit))
    return e


def subst_c(c: Cond, sub: Mapping[str, IExpr], visit: Callable[[], None] | None = None) -> Cond:
    """:func:`subst_i` for a condition."""
    if visit is not None:
        visit()
    if isinstance(c, Cmp):
        return Cmp(c.op, subst_i(c.a, sub, visit), subst_i(c.b, sub, visit))
    if isinstance(c, BoolOp):
        return BoolOp(c.op, tuple(subst_c(x, sub, visit) for x in c.items))
    if isinstance(c, Not):
        return Not(subst_c(c.c, sub, visit))
    if isinstance(c, Pred):
        return Pred(c.name, tuple(subst_i(x, sub, visit) for x in c.idx))
    raise ParametricError(f"condition: unknown node {type(c).__name__}")


def vars_i(e: IExpr) -> frozenset[str]:
    if isinstance(e, Var):
        return frozenset({e.name})
    if isinstance(e, Bin):
        return vars_i(e.a) | vars_i(e.b)
    if isinstance(e, Ite):
        return vars_c(e.cond) | vars_i(e.a) | vars_i(e.b)
    return frozenset()


def vars_c(c: Cond) -> frozenset[str]:
    if isinstance(c, Cmp):
        return vars_i(c.a) | vars_i(c.b)
    if isinstance(c, BoolOp):
        return frozenset().union(*(vars_c(x) for x in c.items)) if c.items else frozenset()
    if isinstance(c, Not):
        return vars_c(c.c)
    if isinstance(c, Pred):
        return frozenset().union(*(vars_i(x) for x in c.idx)) if c.idx else frozenset()
    raise ParametricError(f"condition: unknown node {type(c).__name__}")


def vars_v(v: Value) -> frozenset[str]:
    if isinstance(v, Inp):
        return vars_i(v.row) | vars_i(v.col)
    if isinstance(v, Fam):
        return frozenset().union(*(vars_i(x) for x in v.idx)) if v.idx else frozenset()
    if isinstance(v, VSum):
        return frozenset().union(*(vars_v(x) for x in v.items)) if v.items else frozenset()
    if isinstance(v, VProd):
        return vars_v(v.a) | vars_v(v.b)
    if isinstance(v, VIf):
        return vars_c(v.cond) | vars_v(v.a) | vars_v(v.b)
    return frozenset()
