"""Number rings for the interpreter: exact rationals, integers mod p, and degree bounds.

Polynomial rings (python-flint, sympy) live in :mod:`symverify.semantics.poly`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from symverify.errors import IRError
from symverify.ir.scalar import Scalar, Sym

__all__ = ["FractionRing", "ModRing", "Deg", "DegreeRing", "eval_sym"]


def eval_sym(x: Sym, params: Mapping[str, Any], where: str = "weight") -> Any:
    """Evaluate a parameter expression at ``params`` (values of any ring with ``+``/``*``)."""
    total: Any = 0
    for mono, c in x.terms:
        term: Any = c
        for name, e in mono:
            if name not in params:
                raise IRError(f"{where} uses the parameter {name!r}, but no value was given for it")
            term = term * params[name] ** e
        total = total + term
    return total


@dataclass(frozen=True)
class FractionRing:
    """Exact rationals; symbolic weights need values in ``params``."""

    params: Mapping[str, Any] = field(default_factory=dict)
    zero: Any = 0
    falsy_is_zero = True

    def coerce(self, x: Scalar) -> Any:
        if isinstance(x, Sym):
            v = eval_sym(x, self.params)
            return Fraction(v) if not isinstance(v, int) else v
        return x

    def reduce(self, x: Any) -> Any:
        if isinstance(x, Fraction) and x.denominator == 1:
            return int(x)
        return x


@dataclass(frozen=True)
class ModRing:
    """Integers mod a prime ``p`` (Python ints); rationals are mapped through their inverse mod p."""

    p: int
    params: Mapping[str, int] = field(default_factory=dict)
    zero: Any = 0
    falsy_is_zero = True

    def coerce(self, x: Scalar) -> int:
        if isinstance(x, Sym):
            return self._sym_frac(x)
        if isinstance(x, Fraction):
            if x.denominator % self.p == 0:
                from symverify.ir.bigint import show_rational

                raise IRError(f"the denominator of {show_rational(x)} is divisible by the prime {self.p}; pick another prime")
            return x.numerator * pow(x.denominator, -1, self.p) % self.p
        return x % self.p

    def _sym_frac(self, x: Sym) -> int:
        total = 0
        for mono, c in x.terms:
            term = self.coerce(c)
            for name, e in mono:
                if name not in self.params:
                    raise IRError(f"weight uses the parameter {name!r}, but no value was given for it")
                term = term * pow(self.params[name], e, self.p) % self.p
            total += term
        return total % self.p

    def reduce(self, x: int) -> int:
        return x % self.p


class Deg:
    """An upper bound on the total degree of a value; ``-inf`` means structurally zero.

    ``+`` is ``max`` and ``*`` is ``+``, so running the interpreter on :class:`Deg` values
    propagates a certified per-cell degree bound (a zero branch does not raise the degree).
    """

    __slots__ = ("d",)

    def __init__(self, d: float) -> None:
        self.d = d

    def __add__(self, other: Deg) -> Deg:
        return Deg(max(self.d, other.d))

    def __mul__(self, other: Deg) -> Deg:
        if self.d == -math.inf or other.d == -math.inf:
            return Deg(-math.inf)
        return Deg(self.d + other.d)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deg) and self.d == other.d

    def __hash__(self) -> int:
        return hash(self.d)

    def __repr__(self) -> str:
        return f"Deg({self.d})"


class DegreeRing:
    """Degrees in the input variables (symbolic weights count as constants)."""

    zero = Deg(-math.inf)

    def coerce(self, x: Scalar) -> Deg:
        return Deg(-math.inf) if (not isinstance(x, Sym) and x == 0) else Deg(0)

    def reduce(self, x: Deg) -> Deg:
        return x
