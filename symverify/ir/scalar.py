"""Exact scalars: ``int``, :class:`fractions.Fraction`, or a symbolic parameter expression.

Every coefficient and weight in symverify's IR is exact. A :class:`Sym` is a canonical sparse
polynomial in named parameters with rational coefficients (``a``, ``2*a*b - 1/3``); it lets a
statement hold "for all values of the parameters". Arithmetic between scalars stays canonical:
a ``Sym`` whose only term is constant collapses back to ``int``/``Fraction``, so equality of
scalars is structural equality. Floats are rejected (see :func:`as_scalar`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral
from typing import Union

from symverify.errors import IRError

__all__ = ["Sym", "Scalar", "sym", "as_scalar", "is_zero", "scalar_str", "parse_scalar", "param_names"]

Monomial = tuple[tuple[str, int], ...]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\[\]]*\Z")


def _norm_rational(q: Fraction) -> int | Fraction:
    return int(q) if q.denominator == 1 else q


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    exps = dict(a)
    for name, e in b:
        exps[name] = exps.get(name, 0) + e
    return tuple(sorted(exps.items()))


@dataclass(frozen=True, slots=True)
class Sym:
    """A polynomial in named parameters: ``terms`` maps sorted monomials to nonzero coefficients.

    Build one with :func:`sym` and ordinary arithmetic:

    >>> a, b = sym("a"), sym("b")
    >>> str(2 * a * b - Fraction(1, 3))
    '2*a*b - 1/3'
    >>> (a + 1) - a
    1
    """

    terms: tuple[tuple[Monomial, Fraction], ...]

    @staticmethod
    def _make(acc: dict[Monomial, Fraction]) -> Scalar:
        items = tuple(sorted((m, c) for m, c in acc.items() if c != 0))
        if not items:
            return 0
        if len(items) == 1 and items[0][0] == ():
            return _norm_rational(items[0][1])
        return Sym(items)

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
        out: Scalar = 1
        for _ in range(k):
            out = out * self
        return out

    def names(self) -> frozenset[str]:
        """The parameter names this expression mentions."""
        return frozenset(name for m, _ in self.terms for name, _ in m)

    def __str__(self) -> str:
        parts: list[str] = []
        for m, c in reversed(self.terms):
            mono = "*".join(name if e == 1 else f"{name}^{e}" for name, e in m)
            mag = abs(c)
            if not mono:
                body = str(mag)
            elif mag == 1:
                body = mono
            else:
                body = f"{mag}*{mono}"
            sign = "-" if c < 0 else "+"
            parts.append(body if not parts and sign == "+" else (f"-{body}" if not parts else f"{sign} {body}"))
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Sym({str(self)!r})"


Scalar = Union[int, Fraction, Sym]


def _lift(x: object) -> Sym | None:
    if isinstance(x, Sym):
        return x
    if isinstance(x, (int, Fraction)) and not isinstance(x, bool):
        return Sym((((), Fraction(x)),) if x != 0 else ())
    return None


def sym(name: str) -> Sym:
    """The parameter called ``name`` (an identifier; dots and brackets allowed, e.g. ``D1[3]``)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise IRError(f"a parameter name must be an identifier such as 'a' or 'D1[3]'; found {name!r}")
    return Sym((((((name, 1),), Fraction(1))),))


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
        return x
    if isinstance(x, Fraction):
        return _norm_rational(x)
    if isinstance(x, Sym):
        return x
    if isinstance(x, Integral):
        return int(x)
    if isinstance(x, str):
        return parse_scalar(x, where)
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
    raise IRError(f"{where}: expected an exact value (int, Fraction, Sym or a string like '1/2'), found {type(x).__name__} {x!r}")


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


_RATIONAL = re.compile(r"\s*[+-]?\d+(\s*/\s*\d+)?\s*\Z")


def parse_scalar(text: str, where: str = "value") -> Scalar:
    """Parse ``"3"``, ``"-1/2"`` (a rational) exactly; anything else raises :class:`IRError`."""
    if not _RATIONAL.match(text):
        raise IRError(f"{where}: expected a rational such as '3' or '-1/2', found {text!r}")
    q = Fraction(text.replace(" ", ""))
    return _norm_rational(q)


def is_zero(x: Scalar) -> bool:
    """True when ``x`` is exactly zero (a Sym is never zero: it is canonical)."""
    return not isinstance(x, Sym) and x == 0


def scalar_str(x: Scalar) -> str:
    """A short text form: ``'3'``, ``'-1/2'``, ``'2*a*b - 1/3'``."""
    return str(x)


def param_names(values: object) -> frozenset[str]:
    """All parameter names in an iterable of scalars."""
    names: set[str] = set()
    for v in values:  # type: ignore[attr-defined]
        if isinstance(v, Sym):
            names |= v.names()
    return frozenset(names)
