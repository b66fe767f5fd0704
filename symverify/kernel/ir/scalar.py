"""Exact scalars: ``int``, :class:`fractions.Fraction`, or a symbolic parameter expression.

Every coefficient and weight in symverify's IR is exact. A :class:`Sym` is a canonical sparse
polynomial in named parameters with rational coefficients (``a``, ``2*a*b - 1/3``); it lets a
statement hold "for all values of the parameters". Arithmetic between scalars stays canonical:
a ``Sym`` whose only term is constant collapses back to ``int``/``Fraction``, so equality of
scalars is structural equality. Floats are rejected (see :func:`as_scalar`).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from fractions import Fraction
from itertools import chain, repeat
from numbers import Integral
from typing import Any, TypeVar, Union, cast

from symverify.errors import IRError
from symverify.ir.bigint import parse_rational, rational_to_str, safe_repr, show_rational
from symverify.kernel.ir.memo import fields_now

__all__ = ["power", "Sym", "MAX_SYM_TERMS", "Scalar", "sym", "as_scalar", "is_canonical", "canonical", "is_zero", "show_scalar", "scalar_text", "parse_scalar", "param_names", "unordered", "plain_str", "plain_items", "plain_float", "plain_number", "plain_resource", "number_table", "plain_index", "scalars_held", "type_ids", "all_of", "all_int"]

Monomial = tuple[tuple[str, int], ...]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\[\]]*\Z")


_FRACTION_NUM, _FRACTION_DEN = Fraction.__dict__["_numerator"], Fraction.__dict__["_denominator"]
"""The slots that hold a ``Fraction``'s numerator and denominator, read past any property of a subclass."""


def _norm_rational(q: Fraction, where: str = "value") -> int | Fraction:
    """``q`` as a canonical scalar: a ``Fraction`` in lowest terms with a denominator ≥ 2, or the
    ``int`` it equals. A ``Fraction`` subclass or one not in lowest terms (Python 3.11 still builds
    ``Fraction(2, 4, _normalize=False)`` and ``Fraction(1, -2, _normalize=False)``) is rebuilt: such
    a value compared unequal to its normal form, and its encoding did not decode. So is a
    ``Fraction`` whose numerator or denominator is an ``int`` subclass (``Fraction(IntSub(5), 3)``
    keeps the subclass): its value ``a/b`` is the stored integers, which flint, sympy and the
    encoding read, while Fraction arithmetic and residues mod ``p`` would call the subclass's
    ``*`` and could compute another number. A subclass's integers are read from the slots, not
    through its ``numerator``/``denominator``, which it may redefine. A ``Fraction`` of numpy integers
    (``Fraction(np.int64(1), 3)`` keeps them) is read by their values (:func:`as_index`); one holding
    anything but integers is an :class:`IRError` naming ``where``."""
    if type(q) is not Fraction:  # the stored integers: a subclass's numerator and denominator properties may lie
        num, den = _FRACTION_NUM.__get__(q), _FRACTION_DEN.__get__(q)
    else:
        num, den = q.numerator, q.denominator  # each read once (properties)
    if type(q) is not Fraction or type(num) is not int or type(den) is not int or den < 2 or math.gcd(num, den) != 1:
        a, b = as_index(num), as_index(den)  # an int subclass by its stored value, a numpy integer by its value
        if a is None or b is None:
            raise IRError(f"{where}: expected a Fraction of integers, found one of {type(num).__name__} / {type(den).__name__}")
        q = Fraction(a, b)
        if q.denominator == 1:
            return q.numerator
    return q


def is_canonical(x: object) -> bool:
    """Whether ``x`` is an exact scalar in canonical form, as :func:`as_scalar` returns it: an ``int``
    (not a subclass: an ``IntEnum`` member becomes its int), a :class:`Sym`, or a ``Fraction`` in
    lowest terms with a denominator ≥ 2, numerator and denominator plain ints. The fast paths of gates and grids keep
    such values as they are and send everything else through :func:`as_scalar`."""
    t = type(x)
    if t is int or t is Sym:
        return True
    if t is not Fraction:
        return False
    num, den = x.numerator, x.denominator  # type: ignore[attr-defined]  # each read once (properties)
    return type(num) is int and type(den) is int and den > 1 and math.gcd(num, den) == 1


def canonical(x: object, where: str = "value") -> Scalar:
    """``x`` when it is canonical (:func:`is_canonical`), else :func:`as_scalar` of it (a refusal names
    ``where``): the one form in which a value keys a cache as ``(type(x), x)``. Two such keys are
    equal only when both values are of one class, ``int``, ``Fraction`` or :class:`Sym` (whose
    metaclass is ``type``: classes compare and hash by identity), and equal as that class compares
    them, reading plain ints and strs only. A key of any other class could take another value's
    slot: a class whose metaclass compares and hashes equal to ``int``, an ``int`` subclass whose
    ``__eq__`` and ``__hash__`` lie, or a ``Fraction`` of one; :func:`as_scalar` reads such a value as
    the plain value it stores, or refuses it."""
    return cast(Scalar, x) if is_canonical(x) else as_scalar(x, where)


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    exps = dict(a)
    for name, e in b:
        exps[name] = exps.get(name, 0) + e
    return tuple(sorted(exps.items()))


MAX_SYM_TERMS = 100_000
"""The most terms a :class:`Sym` power may produce (``s ** k`` is refused above this estimate)."""


def _raw(items: tuple[tuple[Monomial, Fraction], ...]) -> Sym:
    """A Sym from terms already known to be canonical (no validation: internal use only)."""
    s = object.__new__(Sym)
    object.__setattr__(s, "terms", items)
    return s


def _check_terms(terms: object) -> None:
    """Refuse anything but canonical terms (see :class:`Sym`); the message names the term."""
    if type(terms) is not tuple:  # plain tuples throughout: a subclass could iterate otherwise than it was checked
        raise IRError(f"Sym terms: expected a tuple of (monomial, coefficient) pairs, found {type(terms).__name__}")
    if len(terms) == 0:
        raise IRError("Sym terms: expected at least one term (zero is the int 0, not an empty Sym)")
    prev: Monomial | None = None
    for k, term in enumerate(terms):
        where = f"Sym term {k}"
        if not (type(term) is tuple and len(term) == 2):
            raise IRError(f"{where}: expected a (monomial, coefficient) pair, found {safe_repr(term, 80)}")
        mono, c = term
        if (type(c) is not Fraction or type(num := c.numerator) is not int or type(den := c.denominator) is not int
                or num == 0 or den < 1 or math.gcd(num, den) != 1):
            raise IRError(f"{where}: expected a nonzero Fraction coefficient in lowest terms, found {safe_repr(c, 80)}")
        if type(mono) is not tuple:
            raise IRError(f"{where}: expected a monomial tuple of (name, exponent) pairs, found {safe_repr(mono, 80)}")
        last = None
        for item in mono:
            if not (type(item) is tuple and len(item) == 2):
                raise IRError(f"{where}: expected (name, exponent) pairs in the monomial, found {safe_repr(item, 80)}")
            name, e = item
            if type(name) is not str or not _NAME.match(name):
                raise IRError(f"{where}: a parameter name must be an identifier such as 'a' or 'D1[3]'; found {safe_repr(name, 80)}")
            if type(e) is not int or e < 1:
                raise IRError(f"{where}: the exponent of {name!r} must be a positive int, found {safe_repr(e, 80)}")
            if last is not None and name <= last:
                raise IRError(f"{where}: monomial names must be sorted and distinct, found {name!r} after {last!r}")
            last = name
        if prev is not None and mono <= prev:
            raise IRError(f"{where}: terms must be sorted by monomial with no repeats, found {safe_repr(mono, 80)} after {safe_repr(prev, 80)}")
        prev = mono
    if len(terms) == 1 and terms[0][0] == ():
        raise IRError("Sym terms: a lone constant term is not canonical (use the int or Fraction itself)")


@dataclass(frozen=True, slots=True)
class Sym:
    """A polynomial in named parameters: ``terms`` maps sorted monomials to nonzero coefficients.

    Build one with :func:`sym` and ordinary arithmetic:

    >>> a, b = sym("a"), sym("b")
    >>> str(2 * a * b - Fraction(1, 3))
    '2*a*b - 1/3'
    >>> (a + 1) - a
    1

    The terms are validated on construction (canonical form: sorted distinct monomials of
    identifier names with positive int exponents, nonzero Fraction coefficients, not a lone
    constant); anything else raises :class:`IRError`. Negative, zero or non-integer exponents are
    refused everywhere: a Sym is a polynomial, never a rational function.

    >>> a ** -1
    Traceback (most recent call last):
    ...
    symverify.errors.IRError: Sym ** k: expected an int exponent k ≥ 0, found -1 (a Sym is a polynomial; negative powers are not allowed)
    """

    terms: tuple[tuple[Monomial, Fraction], ...]

    def __post_init__(self) -> None:
        _check_terms(self.terms)

    @property
    def degree(self) -> int:
        """The total degree: the largest exponent sum of a monomial (``(a*b + a**3).degree == 3``)."""
        return max(sum(e for _, e in mono) for mono, _ in self.terms)

    @staticmethod
    def _make(acc: dict[Monomial, Fraction]) -> Scalar:
        items = tuple(sorted((m, c) for m, c in acc.items() if c != 0))
        if not items:
            return 0
        if len(items) == 1 and items[0][0] == ():
            return _norm_rational(items[0][1])
        return _raw(items)

    def _acc(self) -> dict[Monomial, Fraction]:
        return dict(self.terms)

    def __add__(self, other: object) -> Scalar:
        o = _lift(other)
        if o is None:
            return NotImplemented
        acc = self._acc()
        for m, c in o.terms:
            acc[m] = acc.get(m, Fraction(0)) + c
        return Sym._make(acc)

    __radd__ = __add__

    def __neg__(self) -> Scalar:
        return Sym._make({m: -c for m, c in self.terms})

    def __sub__(self, other: object) -> Scalar:
        o = _lift(other)
        if o is None:
            return NotImplemented
        return self + (-o)

    def __rsub__(self, other: object) -> Scalar:
        o = _lift(other)
        if o is None:
            return NotImplemented
        return o - self

    def __mul__(self, other: object) -> Scalar:
        if type(other) is int:
            # c·p for a plain int c: 0, p itself, or every coefficient times c with the monomials
            # unchanged (already sorted and distinct, none constant-only, so the result is canonical
            # as it stands); the general product below lifts c and rebuilds the same terms
            if other == 0:
                return 0
            if other == 1:
                return self
            return _raw(tuple([(m, c * other) for m, c in self.terms]))
        o = _lift(other)
        if o is None:
            return NotImplemented
        acc: dict[Monomial, Fraction] = {}
        for m1, c1 in self.terms:
            for m2, c2 in o.terms:
                m = _mono_mul(m1, m2)
                acc[m] = acc.get(m, Fraction(0)) + c1 * c2
        return Sym._make(acc)

    __rmul__ = __mul__

    def __pow__(self, k: int) -> Scalar:
        """``self ** k`` by repeated squaring, for an int ``k ≥ 0``; a single term is raised
        directly (exponents multiply), and a power whose term count could exceed
        :data:`MAX_SYM_TERMS` (``C(k + t − 1, t − 1)`` for ``t`` terms) is refused."""
        if type(k) is not int or k < 0:
            raise IRError(f"Sym ** k: expected an int exponent k ≥ 0, found {safe_repr(k, 40)} "
                          "(a Sym is a polynomial; negative powers are not allowed)")
        if k == 0:
            return 1
        if len(self.terms) == 1:
            mono, c = self.terms[0]
            return _raw(((tuple((name, e * k) for name, e in mono), c**k),))
        t = len(self.terms)
        if k > 1 and math.comb(k + t - 1, t - 1) > MAX_SYM_TERMS:
            raise IRError(f"Sym ** k: ({self}) ** {k} could have up to C({k + t - 1}, {t - 1}) terms, more than "
                          f"MAX_SYM_TERMS = {MAX_SYM_TERMS}; expand it another way or use a circuit")
        return power(self, k)

    def names(self) -> frozenset[str]:
        """The parameter names this expression mentions."""
        return frozenset(name for m, _ in self.terms for name, _ in m)

    def __str__(self) -> str:
        """``'2*a*b - 1/3'``; huge integers abbreviated (:func:`show_scalar`)."""
        return show_scalar(self)

    def __repr__(self) -> str:
        return f"Sym({str(self)!r})"


Scalar = Union[int, Fraction, Sym]


def _lift(x: object) -> Sym | None:
    if isinstance(x, Sym):
        return x
    if isinstance(x, (int, Fraction)) and not isinstance(x, bool):
        v = _norm_rational(x) if isinstance(x, Fraction) else int.__index__(x)  # plain ints inside (as_scalar)
        return _raw((((), Fraction(v)),) if v != 0 else ())
    return None


def sym(name: str) -> Sym:
    """The parameter called ``name`` (an identifier; dots and brackets allowed, e.g. ``D1[3]``)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise IRError(f"a parameter name must be an identifier such as 'a' or 'D1[3]'; found {safe_repr(name)}")
    return _raw(((((plain_str(name), 1),), Fraction(1)),))  # a plain str, as Sym terms require


def as_scalar(x: object, where: str = "value") -> Scalar:
    """Validate and normalise an exact scalar; ``where`` names the field for the error message.

    Accepts ``int`` (and numpy integers), ``Fraction``, :class:`Sym`, rational strings such as
    ``"-3/4"``, and sympy rationals/symbols. Floats are refused, because they are not exact:

    >>> as_scalar("3/6")
    Fraction(1, 2)
    >>> as_scalar(0.5, "gate 3 coefficient alpha")
    Traceback (most recent call last):
    ...
    symverify.errors.IRError: gate 3 coefficient alpha: expected an exact value (int, Fraction, Sym or a string like '1/2'), found the float 0.5; pass Fraction(1, 2) or '1/2' instead
    """
    if isinstance(x, bool):
        raise IRError(f"{where}: expected an exact number, found the bool {x!r}")
    if isinstance(x, int):
        return x if type(x) is int else int.__index__(x)  # the int value of a subclass (an IntEnum member)
    if isinstance(x, Fraction):
        return _norm_rational(x, where)
    if isinstance(x, Sym):  # a subclass as the plain Sym of its stored terms (its methods may answer otherwise)
        return x if type(x) is Sym else Sym(_SYM_TERMS.__get__(x))
    if isinstance(x, Integral) and not isinstance(x, float) and type(x).__name__ != "timedelta64":
        try:
            return int(x)  # not a float subclass registered as Integral (int() truncates), nor numpy's duration (a signedinteger)
        except TypeError:  # no integer: a class that equals a registered one (its metaclass says so) passes isinstance
            pass
    if isinstance(x, str):
        try:
            return parse_scalar(x, where)
        except IRError as e:
            if x.strip()[:1].isalpha() or x.strip()[:1] == "_":  # a name, e.g. "a": meant as a symbol
                raise IRError(f"{e}; a symbolic value is sym({x.strip()!r}), not a string") from None
            raise
    if isinstance(x, float) or type(x).__name__ in ("float16", "float32", "float64", "longdouble"):
        f = float(x)  # type: ignore[arg-type]
        hint = Fraction(f).limit_denominator(10**6) if f == f and abs(f) != float("inf") else None
        tip = f"; pass Fraction({hint.numerator}, {hint.denominator}) or '{hint}' instead" if hint is not None else ""
        raise IRError(
            f"{where}: expected an exact value (int, Fraction, Sym or a string like '1/2'), "
            f"found the float {x!r}{tip}"
        )
    mod = type(x).__module__ or ""
    if mod.startswith("sympy"):
        return _from_sympy_number(x, where)
    raise IRError(f"{where}: expected an exact value (int, Fraction, Sym or a string like '1/2'), found {type(x).__name__} {safe_repr(x)}")


_SYM_TERMS = Sym.__dict__["terms"]
"""The slot of a :class:`Sym`'s terms, read past any property of a subclass."""


def scalars_held(values: Iterable[object]) -> list[object]:
    """Every object ``values`` hold that a field written past its class's checks
    (``object.__setattr__``, a ``Fraction``'s ``_numerator`` slot) could change in place: each value
    that is not a plain ``int`` (ints cannot change), with its fields
    (:func:`~symverify.kernel.ir.memo.fields_now`: a ``Fraction``'s numerator and denominator, a
    :class:`Sym`'s terms) and, for a :class:`Sym`, each of its terms' coefficients with theirs (its
    monomials are tuples of strs and ints). Two lists of the same values whose items are the same
    objects, item by item (``is``), mean no value changed in between."""
    odd: list[object] = [x for x in values if type(x) is not int]
    if not odd:
        return odd
    fractions = [x for x in odd if type(x) is Fraction]  # the common kind: its two slots read by C-level maps
    rest = [x for x in odd if type(x) is not Fraction] if len(fractions) < len(odd) else []
    try:
        slots = [*map(_NUMERATOR_SLOT, fractions), *map(_DENOMINATOR_SLOT, fractions)]
    except AttributeError:  # a slot deleted past the class: every value read as fields_now reads it
        slots, rest = [], odd
    out = [*odd, *slots]
    coefficients = _sym_coefficients(rest, out)
    if coefficients is None:
        coefficients = []  # of the Syms' terms (their monomials are tuples of strs and ints)
        for x in rest:
            out.extend(fields_now(x))
            terms = getattr(x, "terms", None) if type(x) is Sym else None  # a slot deleted past the class: none
            if type(terms) is tuple:
                coefficients.extend([t[1] for t in terms if type(t) is tuple and len(t) == 2])
    out.extend(coefficients)
    if all_of(Fraction, coefficients):  # by identity
        try:
            out.extend([*map(_NUMERATOR_SLOT, coefficients), *map(_DENOMINATOR_SLOT, coefficients)])
            return out
        except AttributeError:
            pass
    for c in coefficients:
        out.append(c)
        out.extend(fields_now(c))
    return out


_NUMERATOR_SLOT, _DENOMINATOR_SLOT = operator.attrgetter("_numerator"), operator.attrgetter("_denominator")
_TERMS_SLOT, _COEFFICIENT = operator.attrgetter("terms"), operator.itemgetter(1)


def _sym_coefficients(rest: list[object], out: list[object]) -> list[object] | None:
    """The common case of :func:`scalars_held`'s loop over ``rest``, by C-level maps: every value a
    :class:`Sym` itself with its ``terms`` slot set to a tuple of ``(monomial, coefficient)`` pairs.
    Then each value's fields (:func:`~symverify.kernel.ir.memo.fields_now` of a ``Sym`` is its one
    slot, ``(terms,)``) are appended to ``out`` and the terms' coefficients returned, as the loop
    would; otherwise None, ``out`` untouched (the loop reads each value in turn)."""
    if not rest or {*map(type, rest)} != {Sym}:
        return None
    try:
        terms = list(map(_TERMS_SLOT, rest))  # the slot itself: the type is Sym, no subclass's property
    except AttributeError:  # a slot deleted past the class
        return None
    if {*map(type, terms)} != {tuple}:
        return None
    pairs = list(chain.from_iterable(terms))
    if not pairs or {*map(type, pairs)} != {tuple} or {*map(len, pairs)} != {2}:
        return None
    out.extend(terms)
    return list(map(_COEFFICIENT, pairs))


def _from_sympy_number(x: object, where: str) -> Scalar:
    import sympy

    e = sympy.sympify(x)
    if e.is_Rational:
        return _norm_rational(Fraction(int(e.p), int(e.q)))
    if e.is_Symbol:
        return sym(str(e))
    if e.free_symbols and e.is_polynomial():
        poly = sympy.Poly(e, *sorted(e.free_symbols, key=str))
        out: Scalar = 0
        gens = [sym(str(g)) for g in poly.gens]
        for exps, c in poly.terms():
            term: Scalar = _from_sympy_number(c, where)
            for g, k in zip(gens, exps):
                term = term * (g**k if k else 1)
            out = out + term
        return out
    raise IRError(f"{where}: expected a rational number or a polynomial in parameters, found the sympy value {e}")


def parse_scalar(text: str, where: str = "value") -> Scalar:
    """Parse ``"3"``, ``"-1/2"`` (a rational, ASCII digits, any size up to
    :data:`symverify.ir.limits.MAX_INT_DIGITS`) exactly; anything else, a zero denominator
    included, raises :class:`IRError`."""
    return parse_rational(text, where)


def is_zero(x: Scalar) -> bool:
    """True when ``x`` is exactly zero (a Sym is never zero: it is canonical; ``Sym == 0`` is False
    anyway, the type test only runs on values equal to 0)."""
    return x == 0 and not isinstance(x, Sym)


def show_scalar(x: Any) -> str:
    """A scalar for people, like ``str(x)`` (``'3'``, ``'-1/2'``, ``'2*a*b - 1/3'``) but with huge
    integers abbreviated (:func:`show_int`); anything else falls back to ``str``."""
    return _scalar_text(x, show_rational)


def scalar_text(x: Any) -> str:
    """``str(x)`` of a scalar, exact whatever the size of its integers (for JSON reports)."""
    return _scalar_text(x, lambda q: rational_to_str(q, bounded=False))


def _scalar_text(x: Any, rat: Any) -> str:
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, Fraction)):
        return str(rat(x))
    if isinstance(x, Sym):
        parts: list[str] = []
        for m, c in reversed(x.terms):  # the same layout as Sym.__str__
            mono = "*".join(name if e == 1 else f"{name}^{rat(e)}" for name, e in m)
            mag = abs(c)
            if not mono:
                body = rat(mag)
            elif mag == 1:
                body = mono
            else:
                body = f"{rat(mag)}*{mono}"
            sign = "-" if c < 0 else "+"
            parts.append(body if not parts and sign == "+" else (f"-{body}" if not parts else f"{sign} {body}"))
        return " ".join(parts)
    try:
        return str(x)
    except Exception:  # a value that cannot print itself still gets a name
        return f"<{type(x).__name__}>"


def param_names(values: object) -> frozenset[str]:
    """All parameter names in an iterable of scalars."""
    names: set[str] = set()
    for v in values:  # type: ignore[attr-defined]
        if isinstance(v, Sym):
            names |= v.names()
    return frozenset(names)


def power(base: Any, k: int) -> Any:
    """``base ** k`` for an int ``k ≥ 1`` by repeated squaring (``⌊log2 k⌋`` squarings and at most
    as many products), for any value with ``*``: scalars, bounds, wires. Another ``k`` is an
    :class:`IRError` (a negative one looped forever, ``-1 >> 1`` being ``-1``; 0 returned None)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise IRError(f"power: expected an int exponent k ≥ 1, found {type(k).__name__} {safe_repr(k, 40)}")
    result: Any = None
    while k:
        if k & 1:
            result = base if result is None else result * base
        k >>= 1
        if k:
            base = base * base
    return result


def is_bool(x: object) -> bool:
    """Whether ``x`` is a bool, Python's or numpy's (``np.bool`` in numpy 2, ``np.bool_``), or a 0-d array
    or tensor of bool dtype (``torch.tensor(True)`` has ``__index__``, so it would read as the index 1):
    a truth value, never a number or an index here."""
    if isinstance(x, bool) or (type(x).__module__ == "numpy" and type(x).__name__ in ("bool", "bool_")):
        return True
    return str(getattr(x, "dtype", "")) in ("bool", "torch.bool") and getattr(x, "ndim", None) == 0


def plain_int(x: object) -> object:
    """An ``int`` subclass (not a bool) as the plain ``int`` of its stored value, read without calling
    any of its methods (:func:`operator.index` copies it); anything else as it is. The IR keeps its
    sizes, node ids and positions as plain ints, so its checks, the interpreter and the encoding all
    read one value (a subclass could answer ``*``, ``<`` or ``__index__`` differently to each)."""
    return operator.index(x) if type(x) is not int and isinstance(x, int) and not isinstance(x, bool) else x


def plain_float(x: object) -> object:
    """A ``float`` subclass as the plain ``float`` it stores (``float.__float__`` reads the double,
    not the subclass's ``>``, ``+`` or ``as_integer_ratio``); anything else as it is."""
    return float.__float__(x) if type(x) is not float and isinstance(x, float) else x


def plain_number(x: object) -> object:
    """An ``int``, ``float`` or ``Fraction`` subclass (or a ``Fraction`` holding an ``int`` subclass or a
    numpy integer) as the plain number it stores, of the same kind (:func:`plain_index`, :func:`plain_float`,
    a ``Fraction``'s slots as :func:`as_scalar` reads them; ``Fraction(8)`` stays a ``Fraction``), a numpy
    integer as the plain ``int`` of its value (as a size is read); anything else, a bool (numpy's too) or
    a numpy float other than ``float64`` included, as it is. A table of resources and bounds is compared
    by ``>``, which a subclass could answer otherwise."""
    if isinstance(x, Fraction):
        if type(x) is Fraction and type(x.numerator) is int and type(x.denominator) is int:
            return x
        return Fraction(_norm_rational(x))
    return plain_float(plain_index(x))


def plain_resource(v: object, where: str) -> int | Fraction | float:
    """A resource or bound (compared by ``>``) as a plain number (:func:`plain_number`): an ``int``, a
    ``Fraction`` or a finite ``float`` (NaN is never over a bound, nor under one). Anything else is an
    :class:`IRError` ``{where}: …`` saying what was found, shortened (:func:`safe_repr`). The one rule
    for resources and bounds: :func:`number_table`, proof-script instances and proof-run records."""
    v = plain_number(v)
    if isinstance(v, bool) or not isinstance(v, (int, Fraction, float)):
        raise IRError(f"{where}: expected a number, found {type(v).__name__} {safe_repr(v, 40)} "
                      "(an int, a Fraction or a finite float)")
    if isinstance(v, float) and not math.isfinite(v):
        raise IRError(f"{where}: expected a finite number, found {v}")
    return v


def number_table(table: object, what: str) -> dict[str, int | Fraction | float]:
    """``table`` (resources or bounds, compared by ``>``) as a plain ``dict`` of plain ``str`` keys and
    plain numbers (:func:`plain_resource`); a ``dict`` subclass as the items it stores. Anything else is an
    :class:`IRError` ``{what}…`` naming the key and what was found, shortened (:func:`safe_repr`). A
    plain ``int`` value is taken as it is, which is what :func:`plain_resource` returns for it, without
    building the label of an error it cannot raise (a ``safe_repr`` of the key per entry: a third of
    the cost of a ``Factorization`` of a small permutation). Two keys that read as one name (a ``str``
    subclass hashing otherwise than its characters, beside the plain name) are an :class:`IRError`:
    keeping either would drop the other, a bound loosened without a word."""
    if not isinstance(table, Mapping):
        raise IRError(f"{what}: expected a mapping of str to numbers, found {type(table).__name__}")
    out: dict[str, int | Fraction | float] = {}
    for k, v in (plain_items(table) if isinstance(table, dict) else dict(table)).items():
        if not isinstance(k, str):
            raise IRError(f"{what}: keys must be strings, found {type(k).__name__} {safe_repr(k, 40)}")
        k = plain_str(k)
        if k in out:  # two keys of one name (a str subclass hashing otherwise than its characters): one would be dropped
            raise IRError(f"{what}: the key {safe_repr(k, 60)} is given twice (a str subclass reads as its characters); "
                          "expected each name once")
        out[k] = v if type(v) is int else plain_resource(v, f"{what}[{safe_repr(k, 60)}]")
    return out


_T = TypeVar("_T")


def type_ids(*classes: type) -> frozenset[int]:
    """The identities of ``classes``, for a test of an object's exact class by identity:
    ``id(type(x)) in type_ids(A, B)`` (for every item of a list against one class, :func:`all_of`
    is the faster C-level form: ``all_of(int, xs)``).
    A test over the classes themselves (``type(x) in {A, B}``, ``type(x) in (A, B)``,
    ``set(map(type, xs)) <= {int}``, ``TABLE[type(x)]``) uses ``==`` and hash, which a metaclass
    defines: a class whose metaclass compares and hashes equal to ``int`` passes for ``int`` there.
    An identity cannot be made equal to another (the classes named live as long as their modules,
    so their ids are never reused)."""
    return frozenset(map(id, classes))


_REPEAT_INT = repeat(int)
"""``int`` without end, shared by every :func:`all_int` (``repeat`` keeps no position: any number of
readers, in any thread, read the same ``int``)."""


def all_of(kind: type, xs: Iterable[object]) -> bool:
    """Every item of ``xs`` is exactly of class ``kind``, compared by identity, in C:
    ``all(type(x) is kind for x in xs)`` (no ``id`` object made per item, unlike a test over
    :func:`type_ids`, which costs about twice as much on long lists)."""
    return all(map(operator.is_, map(type, xs), repeat(kind)))


def all_int(xs: Iterable[object]) -> bool:
    """Every item of ``xs`` is exactly an ``int``, its class compared by identity (:func:`all_of`; one
    ``repeat(int)`` shared by every call: the diagonals of a kaleidoscope are tested four per factor)."""
    return all(map(operator.is_, map(type, xs), _REPEAT_INT))


def plain_str(x: _T) -> _T:
    """A ``str`` subclass as the plain ``str`` of its characters; anything else as it is. A name is
    compared, hashed, sorted and encoded: a subclass could answer each otherwise than its characters
    (``'a'`` hashing and comparing as ``'b'`` made the parameters ``a`` and ``b`` one variable)."""
    return cast(_T, str.__str__(x)) if type(x) is not str and isinstance(x, str) else x


def plain_items(x: _T) -> _T:
    """A ``tuple``, ``list`` or ``dict`` subclass as the plain ``tuple``, ``list`` or ``dict`` of the items
    it stores, read without calling any of its methods; anything else as it is. The IR reads a
    sequence more than once (its length, then its items; by iteration here and by index there): a
    subclass could answer each otherwise (``len`` 3 and two items, ``items()`` empty), so only what
    it stores is read."""
    t = type(x)
    if t is tuple or t is list or t is dict:
        return x
    if isinstance(x, tuple):
        return cast(_T, tuple(tuple.__iter__(x)))
    if isinstance(x, list):
        return cast(_T, list(list.__iter__(x)))
    if isinstance(x, dict):
        return cast(_T, dict(dict.items(x)))
    return x


def plain_fields(obj: object, *names: str) -> None:
    """:func:`plain_index` on the named fields (sizes, indices) of a frozen IR object, before its checks read them."""
    for name in names:
        v = getattr(obj, name)
        if type(v) is not int:
            object.__setattr__(obj, name, plain_index(v))


def plain_index(x: object) -> object:
    """``x`` as the plain ``int`` :func:`as_index` reads (an ``int`` subclass or a numpy integer by its
    value, ``np.uint64(2**64 - 1)`` exactly), or ``x`` as it is when it is no integer (a bool, a float:
    left for the caller's check to refuse with its own message)."""
    i = as_index(x)
    return x if i is None else i


def as_index(x: object) -> int | None:
    """``x`` as a Python int when it is an integer (``int`` or a numpy integer, as ``np.argsort``
    gives), None otherwise: bools and floats are no index (``1.0`` would read between positions)."""
    if type(x) is int:
        return x
    if is_bool(x):
        return None
    try:
        return operator.index(x)  # type: ignore[arg-type]
    except TypeError:
        return None


def unordered(x: object, *, sized: bool = False) -> bool:
    """Whether ``x`` cannot be read as an ordered sequence of entries: a mapping (iterating it gives
    its keys: ``{0: 1, 1: 0}`` would read as ``[0, 1]``), a set (no order), a str or bytes (its
    characters), or no iterable at all (with ``sized``, also no length: a generator, which a check
    would use up), and a 0-d array (numpy's has ``__iter__`` and ``__len__``, both raising
    ``TypeError``). The one test behind every "expected a sequence" refusal of the IR and its builders."""
    if isinstance(x, (Mapping, AbstractSet, str, bytes)) or not hasattr(x, "__iter__") or getattr(x, "ndim", None) == 0:
        return True
    return sized and not hasattr(x, "__len__")
