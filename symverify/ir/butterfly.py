"""Butterfly factor matrices, BB* elements and kaleidoscope matrices (THEORY §3, notes §1).

Conventions (notes-kaleidoscope §1, fixed here once for the whole toolkit):

* A :class:`ButterflyFactor` of size ``N = 2^k`` and stride ``s`` (block size ``2s``) acts on the
  ``N/2`` coordinate pairs ``(p, p + s)`` with ``p = 2s·⌊m/s⌋ + (m mod s)``, ``m = 0 … N/2−1``::

      out[p]     = d1[m]·x[p] + d2[m]·x[p+s]
      out[p + s] = d3[m]·x[p] + d4[m]·x[p+s]

  so pair ``m`` carries the 2×2 block ``[[d1[m], d2[m]], [d3[m], d4[m]]]``.
* A :class:`BBStar` element is ``2·log2 N`` factors listed in **application order**: strides
  ``N/2, …, 2, 1`` (the ``B*`` half, decreasing), then ``1, 2, …, N/2`` (the ``B`` half,
  increasing). ``factors[0]`` is applied to the vector first.
* A :class:`Kaleidoscope` ``(BB*)^w_e`` is ``w`` BB* elements of size ``N``, again in application
  order (``groups[0]`` first), acting on ``(x, 0, …, 0)`` with the first ``n`` entries read out;
  ``e = N/n``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from symverify.errors import IRError, ShapeError
from symverify.ir.scalar import Scalar, as_scalar

__all__ = ["ButterflyFactor", "BBStar", "Kaleidoscope", "is_power_of_two", "bbstar_strides"]


def is_power_of_two(n: int) -> bool:
    return isinstance(n, int) and n >= 1 and n & (n - 1) == 0


def bbstar_strides(size: int) -> tuple[int, ...]:
    """The stride pattern of one BB* element of ``size`` in application order."""
    k = size.bit_length() - 1
    down = tuple(1 << (k - 1 - i) for i in range(k))
    return down + tuple(reversed(down))


def pair_index(size: int, stride: int, m: int) -> int:
    """The lower position ``p`` of pair ``m`` of a stride-``stride`` factor."""
    return 2 * stride * (m // stride) + (m % stride)


@dataclass(frozen=True, slots=True)
class ButterflyFactor:
    """One butterfly factor matrix ``B^{(N)}_{2s}`` with explicit size, stride and diagonals."""

    size: int
    stride: int
    d1: tuple[Scalar, ...]
    d2: tuple[Scalar, ...]
    d3: tuple[Scalar, ...]
    d4: tuple[Scalar, ...]

    def __post_init__(self) -> None:
        if not is_power_of_two(self.size) or self.size < 2:
            raise ShapeError(f"butterfly factor size: expected a power of two ≥ 2, found {self.size!r}")
        if not is_power_of_two(self.stride) or self.stride > self.size // 2:
            raise ShapeError(
                f"butterfly factor stride: expected a power of two ≤ size/2 = {self.size // 2}, found {self.stride!r}"
            )
        half = self.size // 2
        for name in ("d1", "d2", "d3", "d4"):
            diag = tuple(getattr(self, name))
            if len(diag) != half:
                raise ShapeError(f"butterfly factor {name}: expected {half} entries (size/2), found {len(diag)}")
            object.__setattr__(
                self, name, tuple(as_scalar(v, f"butterfly factor (stride {self.stride}) {name}[{m}]") for m, v in enumerate(diag))
            )

    @staticmethod
    def identity(size: int, stride: int) -> ButterflyFactor:
        half = size // 2
        return ButterflyFactor(size, stride, (1,) * half, (0,) * half, (0,) * half, (1,) * half)

    def block(self, m: int) -> tuple[tuple[Scalar, Scalar], tuple[Scalar, Scalar]]:
        return ((self.d1[m], self.d2[m]), (self.d3[m], self.d4[m]))

    def pairs(self) -> list[tuple[int, int]]:
        """``[(p, p + stride)]`` for every pair index ``m`` in order."""
        return [(pair_index(self.size, self.stride, m), pair_index(self.size, self.stride, m) + self.stride) for m in range(self.size // 2)]


@dataclass(frozen=True, slots=True)
class BBStar:
    """One element of BB*: ``2·log2 N`` factors, strides ``N/2 … 1, 1 … N/2`` in application order."""

    size: int
    factors: tuple[ButterflyFactor, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "factors", tuple(self.factors))
        if not is_power_of_two(self.size) or self.size < 2:
            raise ShapeError(f"BB* size: expected a power of two ≥ 2, found {self.size!r}")
        want = bbstar_strides(self.size)
        got = tuple(f.stride for f in self.factors)
        if any(f.size != self.size for f in self.factors):
            raise ShapeError(f"BB* of size {self.size}: factor sizes {[f.size for f in self.factors]} differ")
        if got != want:
            raise IRError(
                f"BB* of size {self.size}: expected strides {list(want)} in application order "
                f"(B* half decreasing, then B half increasing), found {list(got)}"
            )


@dataclass(frozen=True, slots=True)
class Kaleidoscope:
    """``M ∈ (BB*)^w_e``: ``groups`` applied in order to ``(x, 0)``; the first ``n`` entries are read."""

    n: int
    size: int
    groups: tuple[BBStar, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(self.groups))
        if not isinstance(self.n, int) or self.n < 1 or self.n > self.size:
            raise ShapeError(f"kaleidoscope: expected 1 ≤ n ≤ size = {self.size}, found n = {self.n!r}")
        if not is_power_of_two(self.size):
            raise ShapeError(f"kaleidoscope size: expected a power of two, found {self.size!r}")
        for i, g in enumerate(self.groups):
            if g.size != self.size:
                raise ShapeError(f"kaleidoscope group {i}: expected size {self.size}, found {g.size}")

    @property
    def width(self) -> int:
        """``w``: the number of BB* factors."""
        return len(self.groups)

    @property
    def expansion(self) -> Fraction:
        """``e = N/n`` (may be fractional when n is not a power of two)."""
        return Fraction(self.size, self.n)
