"""The result every kaleidoscope construction returns: the factorization plus its resources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from symverify.errors import IRError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.butterfly import Kaleidoscope
from symverify.kernel.ir.frozen import ReadOnlyMapping
from symverify.kernel.ir.scalar import number_table, plain_str

__all__ = ["Factorization", "Number"]

Number = int | Fraction


@dataclass(frozen=True)
class Factorization:
    """``M = S·E·Sᵀ`` with ``E ∈ (BB*)^w`` at size ``N``, as built by a cited construction.

    ``garbage_free`` is the construction's claim that ``E`` maps ``(x, 0)`` to ``(M·x, 0)``
    (nothing outside the corner), which :mod:`symverify.kernel.provers.matrix` checks.
    ``resources`` always holds ``w`` (BB* factors), ``N``, ``n`` and ``e = N/n``, read off the
    kaleidoscope itself (never taken from the caller: a ``resources`` entry for one of these keys
    must equal the kaleidoscope's value, else :class:`IRError`, never silently replaced); ``bounds``
    holds what the cited result promises for the same keys (a resource must be ``≤`` its bound).
    """

    kaleidoscope: Kaleidoscope
    theorem: str
    garbage_free: bool
    resources: Mapping[str, Number] = field(default_factory=dict)
    bounds: Mapping[str, Number] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Factorization({self.theorem!r:.60}, {self.kaleidoscope!r}, garbage_free={self.garbage_free})"

    def _repr_html_(self) -> str:
        """A compact table for notebooks (:func:`symverify.viz.html.factorization_html`)."""
        from symverify.viz.html import factorization_html  # display is a lazily loaded view

        return factorization_html(self)

    def __post_init__(self) -> None:
        k = self.kaleidoscope
        if not isinstance(k, Kaleidoscope):
            raise IRError(f"factorization: expected a Kaleidoscope, found {type(k).__name__}")
        if not isinstance(self.garbage_free, bool):
            raise IRError(f"factorization garbage_free: expected a bool, found {self.garbage_free!r:.80}")
        if not isinstance(self.theorem, str):
            raise IRError(f"factorization theorem: expected a str, found {type(self.theorem).__name__}")
        object.__setattr__(self, "theorem", plain_str(self.theorem))
        given = number_table(self.resources, "factorization resources")
        derived = {"w": k.width, "N": k.size, "n": k.n, "e": k.expansion}
        for key, value in derived.items():
            if key in given and given[key] != value:
                raise IRError(f"factorization resources[{key!r}]: the kaleidoscope's {key} is {value}, found {safe_repr(given[key], 60)} "
                              "(w, N, n and e are read off the kaleidoscope; give them its values or leave them out)")
        res = {**given, **derived}
        object.__setattr__(self, "resources", ReadOnlyMapping(res))
        object.__setattr__(self, "bounds", ReadOnlyMapping(number_table(self.bounds, "factorization bounds")))

    @property
    def w(self) -> int:
        return self.kaleidoscope.width

    @property
    def N(self) -> int:
        return self.kaleidoscope.size

    @property
    def e(self) -> Fraction:
        return self.kaleidoscope.expansion

    def over_bound(self) -> list[str]:
        """Resources above their stated bound (empty when the construction kept its promise)."""
        return [key for key, b in self.bounds.items() if key not in self.resources or self.resources[key] > b]
