"""Affine forms ``Σ c_j·x_j + c`` over numbered variables: the one type for them.

An :class:`Affine` is a sparse map from variable ids (circuit nodes, matrix columns) to nonzero
coefficients, plus a constant. Coefficients are values of any commutative ring with ``+``, ``*``
and ``== 0``: exact IR scalars (``int``, ``Fraction``, canonical :class:`~symverify.kernel.ir.scalar.Sym`
polynomials in the parameters), residues, polynomials. Forms add, scale by a coefficient, and
multiply when one factor is constant; a product of two non-constant forms is not affine and raises
:class:`NotAffineError`.

Uses: the kaleidoscope's linear forms (running a linear program on the unit forms ``x_j`` yields
its matrix, :mod:`symverify.kernel.kaleidoscope.apply`), the compiler's cell tracking
(:mod:`symverify.compiler.layout`), the gadget checker's affine spec values
(:mod:`symverify.kernel.gadgets.fragment`), and certificate cells (:meth:`Cell.form
<symverify.kernel.ir.certificate.Cell.form>`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Affine", "NotAffineError"]


class NotAffineError(ArithmeticError):
    """A product of two non-constant affine forms (it has no affine form)."""


def _nonzero(v: Any) -> bool:
    return not (v == 0)


class Affine:
    """``Σ terms[j]·x_j + const`` with nonzero coefficients; immutable by convention.

    >>> x0, x1 = Affine.unit(0), Affine.unit(1)
    >>> f = 2 * x0 + 3 * x1 + (-2) * x0
    >>> f.terms, f.const
    ({1: 3}, 0)
    >>> (f + Affine.constant(5)) * Affine.constant(2)
    Affine({1: 6}, 10)
    >>> bool(Affine()), bool(Affine.constant(1))
    (False, True)
    """

    __slots__ = ("const", "terms")

    def __init__(self, terms: Mapping[int, Any] | None = None, const: Any = 0) -> None:
        self.terms: dict[int, Any] = dict(terms) if terms else {}
        self.const = const

    @staticmethod
    def unit(j: int) -> Affine:
        """The form ``x_j``."""
        return Affine({j: 1})

    @staticmethod
    def constant(c: Any) -> Affine:
        """The constant form ``c``."""
        return Affine(None, c)

    def __bool__(self) -> bool:
        """False exactly for the zero form."""
        return bool(self.terms) or _nonzero(self.const)

    def __add__(self, other: Any) -> Affine:
        """The sum; a coefficient ``c`` is the constant form ``c``."""
        if not isinstance(other, Affine):
            other = Affine.constant(other)
        const = self.const + other.const if _nonzero(other.const) else self.const
        if len(self.terms) < len(other.terms):
            self, other = other, self
        acc = dict(self.terms)
        for j, v in other.terms.items():
            if j in acc:
                s = acc[j] + v
                if _nonzero(s):
                    acc[j] = s
                else:
                    del acc[j]
            else:
                acc[j] = v
        return Affine(acc, const)

    __radd__ = __add__

    def __neg__(self) -> Affine:
        return Affine({j: -v for j, v in self.terms.items()}, -self.const)

    def __sub__(self, other: Any) -> Affine:
        return self + (-other)

    def scaled(self, c: Any) -> Affine:
        """``c·self`` for a coefficient ``c`` (terms that vanish are dropped)."""
        if not _nonzero(c):
            return Affine()
        out = {}
        for j, v in self.terms.items():
            p = c * v
            if _nonzero(p):
                out[j] = p
        return Affine(out, c * self.const if _nonzero(self.const) else self.const)

    def __mul__(self, other: Any) -> Affine:
        """A product with a coefficient, or with a constant form; two non-constant forms raise
        :class:`NotAffineError`."""
        if not isinstance(other, Affine):
            return self.scaled(other)
        if self.terms and other.terms:
            raise NotAffineError("a product of two non-constant affine forms")
        return other.scaled(self.const) if not self.terms else self.scaled(other.const)

    __rmul__ = __mul__

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        """The ``(variable, coefficient)`` pairs in variable order (the constant not included)."""
        return iter(sorted(self.terms.items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Affine):
            return NotImplemented
        return self.terms == other.terms and self.const == other.const

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        terms = dict(sorted(self.terms.items()))
        return f"Affine({terms!r})" if not _nonzero(self.const) else f"Affine({terms!r}, {self.const!r})"
