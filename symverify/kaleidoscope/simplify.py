"""Butterfly factor lists in their cheapest equal form (docs/kaleidoscope.md §1.2).

:func:`simplify_factors` drops identity factors, absorbs diagonal factors into a neighbour and
multiplies adjacent factors of equal stride; the product is unchanged. Every compiled gadget
chain (Lemmas H.16, H.18) and every factor count the routes report goes through it.
"""

from __future__ import annotations

from collections.abc import Sequence

from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.scalar import Scalar, is_zero, plain_items, unordered

__all__ = ["is_diagonal", "diagonal_factor", "simplify_factors"]


def _factors(fs: object, what: str) -> list[ButterflyFactor]:
    """``fs`` as a list of :class:`ButterflyFactor` of one size, in order; anything else is an
    :class:`IRError` (a :class:`ShapeError` for factors of different sizes) naming the entry."""
    if unordered(fs):
        raise IRError(f"{what}: expected a sequence of ButterflyFactor in application order, found {type(fs).__name__}")
    work = list(fs)  # type: ignore[call-overload]
    for i, f in enumerate(work):
        if not isinstance(f, ButterflyFactor):
            raise IRError(f"{what}: entry {i}: expected a ButterflyFactor, found {type(f).__name__}")
        if f.size != work[0].size:
            raise ShapeError(f"{what}: entry {i} has size {f.size}, entry 0 has size {work[0].size}; a product needs one size")
    return work


def is_diagonal(f: ButterflyFactor) -> bool:
    """True when every 2×2 block is diagonal (``d2 = d3 = 0``); ``f`` must be a :class:`ButterflyFactor`
    (else :class:`IRError`)."""
    if not isinstance(f, ButterflyFactor):
        raise IRError(f"is_diagonal: expected a ButterflyFactor, found {type(f).__name__}")
    return all(is_zero(v) for v in f.d2) and all(is_zero(v) for v in f.d3)


def _diag(f: ButterflyFactor) -> list[Scalar]:
    out: list[Scalar] = [0] * f.size
    for m, (p, q) in enumerate(f.pairs()):
        out[p], out[q] = f.d1[m], f.d4[m]
    return out


def diagonal_factor(diag: Sequence[Scalar]) -> ButterflyFactor:
    """The stride-1 factor of ``diag(diag)``: ``diag`` a sequence of exact entries whose length is a
    power of two ≥ 2 (else :class:`ShapeError`; a mapping, set, str or no sequence is an :class:`IRError`)."""
    if unordered(diag, sized=True):
        raise IRError(f"diagonal_factor: expected a sequence of exact entries, found {type(diag).__name__}")
    diag = plain_items(diag)
    n = len(diag)
    return ButterflyFactor(n, 1, tuple(diag[0::2]), (0,) * (n // 2), (0,) * (n // 2), tuple(diag[1::2]))


def _mul_diag(a: list[Scalar] | None, b: list[Scalar]) -> list[Scalar]:
    return list(b) if a is None else [x * y for x, y in zip(a, b)]


def simplify_factors(factors: Sequence[ButterflyFactor]) -> tuple[ButterflyFactor, ...]:
    """The same product with identity factors dropped, diagonal factors absorbed into a
    neighbour and adjacent equal-stride factors multiplied (docs/kaleidoscope.md §1.2); application order kept.

    >>> I = ButterflyFactor.identity(4, 1)
    >>> D = ButterflyFactor(4, 2, (2, 1), (0, 0), (0, 0), (1, 1))
    >>> X = ButterflyFactor(4, 1, (0, 0), (1, 1), (1, 1), (0, 0))
    >>> [(f.stride, f.d2) for f in simplify_factors([I, D, X, X])]
    [(1, (0, 0))]
    """
    work = _factors(factors, "simplify_factors")
    out: list[ButterflyFactor] = []
    diag: list[Scalar] | None = None
    while work:
        f = work.pop(0)
        if f.is_identity():
            continue
        if is_diagonal(f):
            diag = _mul_diag(diag, _diag(f))
            continue
        if diag is not None:
            f, diag = f.absorb(diag, "before"), None
        if out and out[-1].stride == f.stride:
            work.insert(0, out.pop().then(f))  # the product may be diagonal or identity: re-examine
            continue
        out.append(f)
    if diag is not None and not all(type(v) is int and v == 1 for v in diag):
        if out:
            out[-1] = out[-1].absorb(diag, "after")
        else:
            out.append(diagonal_factor(diag))
    return tuple(out)


