"""The ring protocol, and the number rings of the interpreter: exact rationals, integers mod p.

Every ring the interpreter (:mod:`symverify.kernel.semantics.evaluate`) runs in follows :class:`Ring`:
``zero``, ``coerce`` (IR scalar → ring element), ``reduce`` (applied to each freshly computed
value) and its capabilities as typed class attributes. Other rings live with their users
(polynomials in :mod:`symverify.kernel.semantics.poly`, supports in :mod:`symverify.gadgets.causal`, the
provers' rings in :mod:`symverify.provers`); all of them implement this one protocol.

:class:`ScalarRing` computes with the IR's own exact scalars (so symbolic weights need no values);
:class:`AffineRing` with affine forms over such a coefficient ring (running a linear program on the
unit forms ``x_j`` yields the columns of its matrix in one pass; running a circuit on forms over
its nodes yields each value's affine form, or :class:`~symverify.kernel.ir.affine.NotAffineError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Protocol

from symverify.errors import IRError, LimitError
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.scalar import Scalar, Sym

__all__ = ["Ring", "ScalarRing", "AffineRing", "FractionRing", "ModRing", "eval_sym"]


class Ring(Protocol):
    """What the interpreter needs from a number ring.

    ``falsy_is_zero``: ``bool(x)`` is False exactly when ``x`` is the ring's zero (exact numbers,
    residues, polynomials, linear forms), so the interpreter may skip work whose factor is zero.
    Rings whose elements have no usable truth value (z3 terms, the bounds pass's values) declare False.
    """

    falsy_is_zero: ClassVar[bool]

    @property
    def zero(self) -> Any: ...

    def coerce(self, x: Scalar) -> Any: ...

    def reduce(self, x: Any) -> Any: ...


@dataclass(frozen=True)
class ScalarRing:
    """Exact IR scalars; values are canonical, so ``==`` decides equality (also for ``Sym``)."""

    falsy_is_zero: ClassVar[bool] = True
    zero: Any = 0

    def coerce(self, x: Scalar) -> Scalar:
        return x

    def reduce(self, x: Any) -> Any:
        return _integral(x)


@dataclass(frozen=True)
class AffineRing:
    """Affine forms (:class:`~symverify.kernel.ir.affine.Affine`) over ``coeffs`` (default: exact IR
    scalars). Weights and constants are coefficients; a form is falsy exactly when it is zero.

    :meth:`reduce` reduces every coefficient and drops the terms it makes zero (over
    :class:`ModRing`, ``3·x + 4·x`` is ``7·x``, the zero form mod 7), so a reduced form is in the
    normal form of :class:`~symverify.kernel.ir.affine.Affine`: ``==`` and truth are exact."""

    falsy_is_zero: ClassVar[bool] = True
    coeffs: Ring = field(default_factory=ScalarRing)
    zero: Any = field(default_factory=Affine)

    def coerce(self, x: Scalar) -> Any:
        return self.coeffs.coerce(x)

    def reduce(self, x: Any) -> Any:
        red = self.coeffs.reduce
        if not isinstance(x, Affine):
            return Affine.constant(red(x))
        terms = {}
        for j, v in x.terms.items():
            r = red(v)
            if not (r == 0):  # a coefficient that reduces to 0 is no term (Affine keeps nonzero ones only)
                terms[j] = r
        return Affine(terms, red(x.const))


def eval_sym(x: Sym, params: Mapping[str, Any], where: str = "a weight or coefficient") -> Any:
    """Evaluate a parameter expression at ``params`` (values of any ring with ``+``/``*``)."""
    total: Any = 0
    for mono, c in x.terms:
        term: Any = c
        for name, e in mono:
            if name not in params:
                raise IRError(f"{where} uses the parameter {name!r}, but no value was given for it "
                              f"(symbolic weights need values: params={{{name!r}: ...}})")
            term = term * params[name] ** e
        total = total + term
    return total


UNBOUNDED_BITS = 1 << 63
"""The default ``max_bits`` of a :class:`FractionRing`: no value has that many bits, so no guard."""


@dataclass(frozen=True)
class FractionRing:
    """Exact rationals; symbolic weights need values in ``params``.

    **Size guard.** With ``max_bits`` given (``symverify.evaluate`` and the exact executor pass
    :data:`symverify.ir.limits.MAX_VALUE_BITS`, ``2^20``, read when they start: raise it there to
    compute larger values), no value is kept whose numerator or denominator has more than
    ``max_bits`` bits: :meth:`reduce`, which the interpreter applies to every value it computes,
    raises :class:`~symverify.errors.LimitError` naming the size and the limit (the interpreter adds
    the gate). Every value kept is within the limit, so the gate that first goes over it has cost at
    most one product (or sum) of two values within it (a ``2^20``-bit product takes about 0.1 s):
    ``a^(2^100000)`` at ``a = 2`` stops at its 20th squaring instead of running for ever. A symbolic
    coefficient is checked before its powers are computed (:meth:`coerce`: the bits of
    ``c·Π wᵢ^eᵢ`` are at most those of ``c`` plus ``eᵢ·bits(wᵢ)`` for each ``|wᵢ| > 1``, numerator
    and denominator alike). The default, :data:`UNBOUNDED_BITS`, keeps every value: the provers'
    own exact evaluations (a counterexample's confirmation and re-check) bound their sizes
    themselves (:mod:`symverify.kernel.provers.counterexample`: ``value_bits``, timed children), and
    a guard there would turn their ``refuted`` or ``unknown`` into an error."""

    falsy_is_zero: ClassVar[bool] = True

    params: Mapping[str, Any] = field(default_factory=dict)
    zero: Any = 0
    max_bits: int = field(default=UNBOUNDED_BITS, compare=False)

    def __post_init__(self) -> None:
        """Every parameter value is an exact rational, an ``int`` (not a bool) or a ``Fraction``: a
        float would be computed with in float arithmetic inside a symbolic weight (``a²`` and
        ``a·a`` then differ at ``a = 0.1``), and a ``Sym`` or a string has no value here; anything
        else is an :class:`IRError` naming the parameter."""
        for name, v in self.params.items():
            if isinstance(v, bool) or not isinstance(v, (int, Fraction)):
                from symverify.ir.bigint import safe_repr

                raise IRError(f"parameter {name!r}: expected an exact rational value (int or Fraction), found "
                              f"{type(v).__name__} {safe_repr(v, 60)}")

    def coerce(self, x: Scalar) -> Any:
        if isinstance(x, Sym):
            if self.max_bits < UNBOUNDED_BITS:
                self._check_powers(x)
            v = eval_sym(x, self.params)
            return Fraction(v) if not isinstance(v, int) else v
        return x

    def _check_powers(self, x: Sym) -> None:
        """Refuse a symbolic coefficient one of whose terms ``c·Π wᵢ^eᵢ`` would have more than
        ``max_bits`` bits in its numerator or denominator, before any power is computed."""
        for mono, c in x.terms:
            q = Fraction(c)
            num, den = q.numerator.bit_length(), q.denominator.bit_length()
            for name, e in mono:
                w = self.params.get(name)
                if w is None:
                    continue  # eval_sym names the missing value
                w = Fraction(w)
                if abs(w.numerator) > 1:  # 0, 1 and -1 keep their size in every power
                    num += e * w.numerator.bit_length()
                if w.denominator > 1:
                    den += e * w.denominator.bit_length()
            if max(num, den) > self.max_bits:
                raise self._too_big(max(num, den), f"a term of the symbolic coefficient {str(x)[:80]} would have up to")

    def reduce(self, x: Any) -> Any:
        """``x`` in canonical form (a rational that is an integer as an ``int``), refused when its
        numerator or denominator has more than ``max_bits`` bits (the size guard)."""
        kind = type(x)
        if kind is int:
            if x.bit_length() > self.max_bits:
                raise self._too_big(x.bit_length(), "an exact value of")
            return x
        if kind is Fraction:
            num, den = x.numerator, x.denominator
            if num.bit_length() > self.max_bits or den.bit_length() > self.max_bits:
                raise self._too_big(max(num.bit_length(), den.bit_length()), "an exact value of")
            return num if den == 1 else x
        x = _integral(x)  # an int or Fraction subclass (by its value), or another ring's element
        bits = max(x.numerator.bit_length(), x.denominator.bit_length()) if isinstance(x, (int, Fraction)) else 0
        if bits > self.max_bits:
            raise self._too_big(bits, "an exact value of")
        return x

    def _too_big(self, bits: int, what: str) -> LimitError:
        return LimitError(f"{what} {bits} bits is more than the {self.max_bits} bits exact evaluation keeps "
                          f"(symverify.ir.limits.MAX_VALUE_BITS; raise it to compute larger values)")


def _integral(x: Any) -> Any:
    """A rational that is an integer as an ``int`` (the canonical form of exact values)."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return int(x)
    return x


@dataclass(frozen=True)
class ModRing:
    """Integers mod a prime ``p`` (Python ints); rationals are mapped through their inverse mod p."""

    falsy_is_zero: ClassVar[bool] = True

    p: int
    params: Mapping[str, int] = field(default_factory=dict)
    zero: Any = 0

    def __post_init__(self) -> None:
        """Every parameter value is an ``int`` (a residue, or an integer reduced here; not a bool):
        a Fraction, a float or a str has no ``pow(·, e, p)``, so it is an :class:`IRError` naming
        the parameter, never a bare TypeError inside a weight (map a rational with :meth:`coerce`)."""
        for name, v in self.params.items():
            if isinstance(v, bool) or not isinstance(v, int):
                from symverify.ir.bigint import safe_repr

                raise IRError(f"parameter {name!r} mod {self.p}: expected an int (a residue), found "
                              f"{type(v).__name__} {safe_repr(v, 60)}")

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
                    raise IRError(f"a weight or coefficient uses the parameter {name!r}, but no value was given for it "
                                  f"(symbolic weights need values: params={{{name!r}: ...}})")
                term = term * pow(self.params[name], e, self.p) % self.p
            total += term
        return total % self.p

    def reduce(self, x: int) -> int:
        return x % self.p
