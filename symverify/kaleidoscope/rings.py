"""Rings for butterfly application: exact IR scalars and sparse linear forms.

:class:`ScalarRing` computes with the IR's own exact scalars (``int``, ``Fraction``, canonical
:class:`~symverify.ir.scalar.Sym` polynomials in the parameters), so symbolic diagonals need no
parameter values. :class:`LinearForms` computes with sparse linear forms ``Σ c_j·x_j`` over such a
coefficient ring: running any linear program (a factor list, a linear circuit) on the unit forms
``x_j`` yields the columns of its matrix in one pass. Both follow the interpreter's ring protocol
(``zero``, ``coerce``, ``reduce``; ``semantics/evaluate.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from symverify.ir.scalar import Scalar

__all__ = ["ScalarRing", "LinearForm", "LinearForms"]


@dataclass(frozen=True)
class ScalarRing:
    """Exact IR scalars; values are canonical, so ``==`` decides equality (also for ``Sym``)."""

    falsy_is_zero: ClassVar[bool] = True

    zero: Any = 0

    def coerce(self, x: Scalar) -> Scalar:
        return x

    def reduce(self, x: Any) -> Any:
        if isinstance(x, Fraction) and x.denominator == 1:
            return int(x)
        return x


def _nonzero(v: Any) -> bool:
    return not (v == 0)


class LinearForm:
    """A sparse linear form ``Σ terms[j]·x_j`` with nonzero coefficients; immutable by convention.

    >>> x0, x1 = LinearForm.unit(0), LinearForm.unit(1)
    >>> f = 2 * x0 + 3 * x1 + (-2) * x0
    >>> f.terms
    {1: 3}
    """

    __slots__ = ("terms",)

    def __init__(self, terms: Mapping[int, Any] | None = None) -> None:
        self.terms: dict[int, Any] = dict(terms) if terms else {}

    @staticmethod
    def unit(j: int) -> LinearForm:
        return LinearForm({j: 1})

    def __add__(self, other: LinearForm) -> LinearForm:
        if not isinstance(other, LinearForm):
            return NotImplemented
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
        return LinearForm(acc)

    def __rmul__(self, c: Any) -> LinearForm:
        if isinstance(c, LinearForm):
            return NotImplemented
        if not _nonzero(c):
            return LinearForm()
        out = {}
        for j, v in self.terms.items():
            p = c * v
            if _nonzero(p):
                out[j] = p
        return LinearForm(out)

    __mul__ = __rmul__

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        return iter(sorted(self.terms.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LinearForm) and self.terms == other.terms

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LinearForm({dict(sorted(self.terms.items()))!r})"


@dataclass(frozen=True)
class LinearForms:
    """Sparse linear forms over ``coeffs`` (default: exact IR scalars)."""

    falsy_is_zero: ClassVar[bool] = False

    coeffs: Any = field(default_factory=ScalarRing)
    zero: Any = field(default_factory=LinearForm)

    def coerce(self, x: Scalar) -> Any:
        return self.coeffs.coerce(x)

    def reduce(self, x: LinearForm) -> LinearForm:
        red = self.coeffs.reduce
        return LinearForm({j: red(v) for j, v in x.terms.items()})
