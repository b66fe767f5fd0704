"""Butterfly factor matrices, BB* elements and kaleidoscope matrices (docs/theory.md §3, docs/kaleidoscope.md §1).

Conventions (docs/kaleidoscope.md §1, fixed here once for the whole toolkit):

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
* A :class:`FactorList` is any ordered sequence of factors of one size (application order, no
  stride pattern imposed). It is where general products live: transposes, merged products and
  hand-built sequences are re-read as BB* groups with :meth:`FactorList.to_bbstars`, which pads
  with identity factors and never reorders. :class:`BBStar` itself stays strict.

Operations (all exact, all return new objects): transpose (reverse the order, transpose every
2×2 block; the BB* stride pattern is a palindrome, so the transpose of a BB* element is again one),
lifting to a larger power-of-two size as ``diag(E, I)`` (docs/kaleidoscope.md §1.6), products of kaleidoscopes
(lift to a common size, absorb the projector ``diag(I_n, 0)``), and absorbing a diagonal into a
neighbouring factor (docs/kaleidoscope.md §1.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from symverify.errors import IRError, ShapeError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr, show_int
from symverify.kernel.ir.scalar import (
    Scalar,
    all_int,
    as_index,
    as_scalar,
    is_zero,
    plain_fields,
    plain_index,
    plain_items,
    plain_str,
    unordered,
)

__all__ = [
    "ButterflyFactor",
    "BBStar",
    "FactorList",
    "Kaleidoscope",
    "product",
    "is_power_of_two",
    "check_size_limit",
    "next_power_of_two",
    "bbstar_strides",
    "pair_index",
    "pair_number",
]

Side = Literal["before", "after"]
Block = tuple[tuple[Scalar, Scalar], tuple[Scalar, Scalar]]


def is_power_of_two(n: int) -> bool:
    """``n`` is an ``int`` (not a ``bool``) equal to ``2^k``, ``k ≥ 0``."""
    return isinstance(n, int) and not isinstance(n, bool) and n >= 1 and n & (n - 1) == 0


def check_size_limit(size: int, what: str) -> None:
    """Refuse a butterfly size above :data:`symverify.ir.limits.MAX_CELLS` (:class:`LimitError`)
    before anything of that size is allocated: every vector a product of size ``N`` maps has ``N``
    entries."""
    limits.check(size, "MAX_CELLS", what)


def bbstar_strides(size: int) -> tuple[int, ...]:
    """The stride pattern of one BB* element of ``size`` in application order."""
    k = size.bit_length() - 1
    down = tuple(1 << (k - 1 - i) for i in range(k))
    return down + tuple(reversed(down))


def next_power_of_two(n: int) -> int:
    """The least power of two ``≥ n`` (1 for ``n ≤ 1``).

    >>> [next_power_of_two(k) for k in (0, 1, 2, 3, 5, 8)]
    [1, 1, 2, 4, 8, 8]
    """
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def pair_index(size: int, stride: int, m: int) -> int:
    """The lower position ``p`` of pair ``m`` of a stride-``stride`` factor."""
    return 2 * stride * (m // stride) + (m % stride)


def pair_number(stride: int, p: int) -> int:
    """The pair index ``m`` whose lower position is ``p`` (inverse of :func:`pair_index`)."""
    return stride * (p // (2 * stride)) + (p % stride)


def _mul(a: Scalar, b: Scalar) -> Scalar:
    if is_zero(a) or is_zero(b):
        return 0
    if type(a) is int and a == 1:
        return b
    if type(b) is int and b == 1:
        return a
    return a * b


def _add(a: Scalar, b: Scalar) -> Scalar:
    return b if is_zero(a) else (a if is_zero(b) else a + b)


def _diagonal(diag: object, name: str) -> tuple[object, ...]:
    """A factor's diagonal as a tuple, read in order: a mapping (iterating it gives its keys), a set
    (no order), a str or bytes (characters) or no iterable at all is refused."""
    if unordered(diag):
        raise IRError(f"butterfly factor {name}: expected a sequence of entries in order, found {type(diag).__name__}")
    return tuple(plain_items(diag))  # type: ignore[arg-type]  # a subclass as the items it stores
def _row(x: object) -> bool:
    """``x`` is a sequence read in order: not a str or bytes (its characters); a numpy array of one
    dimension counts (its rows and entries are read in order)."""
    return (isinstance(x, Sequence) and not isinstance(x, (str, bytes))) or getattr(x, "ndim", None) in (1, 2)


def _check_size(size: int, what: str, at_least: int = 2) -> None:
    if not is_power_of_two(size) or size < at_least:
        raise ShapeError(f"{what}: expected a power of two ≥ {at_least}, found {safe_repr(size)}")
    check_size_limit(size, what)


def _check_side(side: str) -> Side:
    """``side`` as the plain ``'before'`` or ``'after'`` it spells (a ``str`` subclass by its characters:
    its own ``==`` could answer both); anything else is an :class:`IRError`."""
    side = plain_str(side)
    if type(side) is not str or side not in ("before", "after"):
        raise IRError(f"absorbing a diagonal: side must be 'before' (applied first) or 'after', found {safe_repr(side)}")
    return side  # type: ignore[return-value]


def _check_diag(diag: Sequence[object], size: int, what: str) -> tuple[Scalar, ...]:
    """The ``size`` entries of a diagonal, in order; a mapping (its keys), a set, a str or anything
    without a length is a :class:`ShapeError`; a list or tuple subclass is read as the items it stores."""
    if unordered(diag, sized=True):
        raise ShapeError(f"{what}: expected a diagonal as a sequence of {size} entries, found {type(diag).__name__}")
    diag = plain_items(diag)
    if len(diag) != size:
        raise ShapeError(f"{what}: expected a diagonal of {size} entries, found {len(diag)}")
    return tuple(as_scalar(v, f"{what} diagonal[{i}]") for i, v in enumerate(diag))


@dataclass(frozen=True, slots=True)
class ButterflyFactor:
    """One butterfly factor matrix ``B^{(N)}_{2s}`` with explicit size, stride and diagonals.

    ``all_int`` is derived, never given: it is True exactly when every entry of ``d1 … d4`` (as
    stored, after canonicalization) is a plain ``int``. The constructor sets it from the diagonals it
    has just read (the scan it makes anyway), so the readers that need it (the plans of
    :func:`~symverify.kernel.kaleidoscope.apply.materialize` and ``apply``, the digest encoding) do not
    scan the diagonals again. It is no parameter of ``__init__`` (``dataclasses.replace`` refuses it
    and recomputes it), the object is frozen, it takes no part in ``==`` or ``hash``, and a copy or
    pickle is rebuilt through the constructor (:meth:`__reduce__`), so it cannot disagree with the
    diagonals.

    ``_plan_cache`` is private to :mod:`symverify.kernel.kaleidoscope.apply`: None, or the plan of a
    small factor whose entries are all the ints 0 and 1, which is the same for every ring (an entry
    0 or 1 is never coerced), stored there on first use so a factor shared by many products (the
    switch factors of small Beneš networks) is planned once. Like ``all_int`` it is no argument, takes
    no part in ``==`` or ``hash``, and a copy, pickle or ``replace`` starts without it. It holds the
    size, stride and diagonals the plan was made from and is read only while they are still the
    factor's (by identity): a diagonal rewritten by ``object.__setattr__`` is planned again.
    """

    size: int
    stride: int
    d1: tuple[Scalar, ...]
    d2: tuple[Scalar, ...]
    d3: tuple[Scalar, ...]
    d4: tuple[Scalar, ...]
    all_int: bool = field(init=False, repr=False, compare=False)
    _plan_cache: object = field(default=None, init=False, repr=False, compare=False)

    def __repr__(self) -> str:
        """Size, stride and each diagonal abbreviated (long diagonals and huge integers shortened:
        :func:`~symverify.ir.bigint.safe_repr`, so printing never fails)."""
        diags = ", ".join(f"d{k}={safe_repr(getattr(self, f'd{k}'), 120)}" for k in range(1, 5))
        return f"ButterflyFactor(size={self.size}, stride={self.stride}, {diags})"

    def __post_init__(self) -> None:
        plain_fields(self, "size", "stride")
        _check_size(self.size, "butterfly factor size")
        if not is_power_of_two(self.stride) or self.stride > self.size // 2:
            raise ShapeError(
                f"butterfly factor stride: expected a power of two ≤ size/2 = {self.size // 2}, found {safe_repr(self.stride)}"
            )
        half = self.size // 2
        ints = True
        for name in ("d1", "d2", "d3", "d4"):
            diag = getattr(self, name)
            if type(diag) is not tuple:
                diag = _diagonal(diag, name)
            if len(diag) != half:
                raise ShapeError(f"butterfly factor {name}: expected {half} entries (size/2), found {len(diag)}")
            if not all_int(diag):  # plain ints are already canonical scalars
                diag = tuple(as_scalar(v, f"butterfly factor (stride {self.stride}) {name}[{m}]") for m, v in enumerate(diag))
                ints = ints and all_int(diag)  # a numpy integer or a Fraction n/1 canonicalizes to an int
            object.__setattr__(self, name, diag)
        object.__setattr__(self, "all_int", ints)

    def __reduce__(self) -> tuple[type[ButterflyFactor], tuple[int, int, tuple[Scalar, ...], tuple[Scalar, ...], tuple[Scalar, ...], tuple[Scalar, ...]]]:
        """Copies and pickles are rebuilt by the constructor from the fields given to it, which
        checks them and derives ``all_int`` again (a pickled flag is never read back)."""
        return ButterflyFactor, (self.size, self.stride, self.d1, self.d2, self.d3, self.d4)

    @staticmethod
    def identity(size: int, stride: int) -> ButterflyFactor:
        """The factor of ``size`` and ``stride`` whose every 2×2 block is ``I``.

        Built without the constructor's scan of the diagonals, which holds here by construction (as
        :meth:`lift`): the size and the stride are read and checked as the constructor reads and
        checks them (a numpy integer by its value; a power of two ≥ 2 within the limit, a power of
        two ≤ ``size/2``, the same errors), each diagonal is ``size/2`` plain ints 1 or 0, so
        ``all_int`` is True. The result equals ``ButterflyFactor(size, stride, ones, zeros, zeros,
        ones)`` field for field (tests/test_butterfly_fast_paths.py)."""
        size = plain_index(size)  # type: ignore[assignment]  # a numpy integer by its value, as the constructor reads it
        _check_size(size, "butterfly factor size")
        stride = plain_index(stride)  # type: ignore[assignment]
        if not is_power_of_two(stride) or stride > size // 2:
            raise ShapeError(f"butterfly factor stride: expected a power of two ≤ size/2 = {size // 2}, found {safe_repr(stride)}")
        half = size // 2
        one, zero = (1,) * half, (0,) * half
        out = object.__new__(ButterflyFactor)
        for name, value in (("size", size), ("stride", stride), ("d1", one), ("d2", zero), ("d3", zero), ("d4", one),
                            ("all_int", True), ("_plan_cache", None)):
            object.__setattr__(out, name, value)
        return out

    def block(self, m: int) -> tuple[tuple[Scalar, Scalar], tuple[Scalar, Scalar]]:
        """The 2×2 block ``((d1[m], d2[m]), (d3[m], d4[m]))`` of pair ``m``, an int in ``[0, size/2)``
        (a numpy integer by its value; a negative ``m`` is no pair: :class:`IRError`)."""
        i = as_index(m)
        if i is None or not 0 <= i < self.size // 2:
            raise IRError(f"butterfly factor block: expected a pair index, an int in [0, {self.size // 2}), found {safe_repr(m, 40)}")
        return ((self.d1[i], self.d2[i]), (self.d3[i], self.d4[i]))

    def pairs(self) -> list[tuple[int, int]]:
        """``[(p, p + stride)]`` for every pair index ``m`` in order, ``p = pair_index(size, stride, m)``.

        Written block by block: ``m = b + r`` with ``b`` a multiple of ``stride`` and
        ``0 ≤ r < min(stride, size/2 − b)`` has ``m // stride = b / stride`` and ``m % stride = r``, so
        ``pair_index`` is ``2·b + r``; ``m`` runs through ``0 … size/2 − 1`` in order, each ``p`` computed once."""
        s, half = self.stride, self.size // 2
        return [(p, p + s) for b in range(0, half, s) for p in range(2 * b, 2 * b + min(s, half - b))]

    @staticmethod
    def from_blocks(size: int, stride: int, blocks: Sequence[Block]) -> ButterflyFactor:
        """The factor whose pair ``m`` carries ``blocks[m] = ((d1, d2), (d3, d4))``; a block or a
        block row that is a str or bytes (``("57", "91")`` would read as its characters) is refused.
        ``blocks`` may be a numpy array of shape ``(size/2, 2, 2)`` and a block a ``2×2`` array (their
        entries read as every diagonal entry is: integers by value, floats refused)."""
        size = plain_index(size)  # type: ignore[assignment]
        _check_size(size, "butterfly factor size")
        if unordered(blocks, sized=True) or len(blocks) != size // 2:
            found = type(blocks).__name__ if unordered(blocks, sized=True) else len(blocks)
            raise ShapeError(f"butterfly factor blocks: expected {size // 2} 2×2 blocks (size/2), found {found}")
        for m, blk in enumerate(blocks):  # a numpy array of blocks, or a block given as a 2×2 array, reads row by row
            if not (_row(blk) and getattr(blk, "ndim", 2) == 2 and len(blk) == 2 and all(_row(r) and getattr(r, "ndim", 1) == 1 and len(r) == 2 for r in blk)):
                raise ShapeError(f"butterfly factor block {m}: expected a 2×2 block ((d1, d2), (d3, d4)), found {safe_repr(blk, 80)}")
        cols = list(zip(*[(a, b, c, d) for (a, b), (c, d) in blocks])) or [(), (), (), ()]
        return ButterflyFactor(size, stride, *cols)

    def is_identity(self) -> bool:
        """True when every 2×2 block is exactly ``[[1, 0], [0, 1]]``."""
        return all(a == 1 and type(a) is int for a in self.d1 + self.d4) and all(is_zero(b) for b in self.d2 + self.d3)

    def transpose(self) -> ButterflyFactor:
        """The transposed factor: same stride, every block transposed (``d2`` and ``d3`` swap).

        >>> f = ButterflyFactor(2, 1, (1,), (2,), (3,), (4,))
        >>> f.transpose().block(0)
        ((1, 3), (2, 4))
        """
        return ButterflyFactor(self.size, self.stride, self.d1, self.d3, self.d2, self.d4)

    def then(self, other: ButterflyFactor) -> ButterflyFactor:
        """``other · self`` (``self`` applied first): factors of one stride form an algebra (docs/kaleidoscope.md §1.2)."""
        if not isinstance(other, ButterflyFactor):
            raise IRError(f"multiplying butterfly factors: expected a ButterflyFactor, found {type(other).__name__}")
        if (other.size, other.stride) != (self.size, self.stride):
            raise ShapeError(
                f"multiplying butterfly factors: both need size {self.size} and stride {self.stride}, "
                f"found size {other.size} and stride {other.stride}"
            )
        s1, s2, s3, s4 = self.d1, self.d2, self.d3, self.d4
        o1, o2, o3, o4 = other.d1, other.d2, other.d3, other.d4
        r = range(self.size // 2)
        return ButterflyFactor(
            self.size,
            self.stride,
            tuple(_add(_mul(o1[m], s1[m]), _mul(o2[m], s3[m])) for m in r),
            tuple(_add(_mul(o1[m], s2[m]), _mul(o2[m], s4[m])) for m in r),
            tuple(_add(_mul(o3[m], s1[m]), _mul(o4[m], s3[m])) for m in r),
            tuple(_add(_mul(o3[m], s2[m]), _mul(o4[m], s4[m])) for m in r),
        )

    def absorb(self, diag: Sequence[object], side: Side) -> ButterflyFactor:
        """``F·D`` (``side='before'``: D is applied first) or ``D·F`` (``'after'``), again a factor.

        >>> f = ButterflyFactor.identity(2, 1).absorb((5, 7), "after")
        >>> f.block(0)
        ((5, 0), (0, 7))
        """
        side = _check_side(side)
        dg = _check_diag(diag, self.size, f"butterfly factor (stride {self.stride})")
        s, half = self.stride, self.size // 2
        lo = [dg[pair_index(self.size, s, m)] for m in range(half)]
        hi = [dg[pair_index(self.size, s, m) + s] for m in range(half)]
        if side == "before":  # scale columns: column p of every block by D[p], column p+s by D[p+s]
            cols = (lo, hi, lo, hi)
        else:  # scale rows
            cols = (lo, lo, hi, hi)
        d = (self.d1, self.d2, self.d3, self.d4)
        new = [tuple(_mul(x[m], c[m]) for m in range(half)) for x, c in zip(d, cols)]
        return ButterflyFactor(self.size, s, *new)

    def lift(self, size: int) -> ButterflyFactor:
        """``diag(F, I)`` at a larger power-of-two ``size`` (same stride; docs/kaleidoscope.md §1.6).

        Built without the constructor's scan of the diagonals, which holds here by construction: the
        new size is checked (a power of two ≥ this one, within the limit), the stride is this
        factor's (a power of two ≤ ``self.size/2 ≤ size/2``), each diagonal is this factor's (plain
        tuples of canonical scalars, checked when it was made) followed by the plain ints 1 or 0 of
        the identity, ``size/2`` entries in all, and ``all_int`` is this factor's (the padding is all
        ``int``). The result equals ``ButterflyFactor(size, stride, d1 + ones, …)`` field for field,
        ``all_int`` included (tests/test_butterfly_fast_paths.py); a lift is made for every factor of a
        kaleidoscope brought to a common size, millions of entries rescanned for nothing."""
        size = plain_index(size)  # type: ignore[assignment]
        _check_size(size, f"lifting a butterfly factor of size {self.size}", self.size)
        extra = (size - self.size) // 2
        one, zero = (1,) * extra, (0,) * extra
        out = object.__new__(ButterflyFactor)
        for name, value in (("size", size), ("stride", self.stride), ("d1", self.d1 + one), ("d2", self.d2 + zero),
                            ("d3", self.d3 + zero), ("d4", self.d4 + one), ("all_int", self.all_int), ("_plan_cache", None)):
            object.__setattr__(out, name, value)
        return out


@dataclass(frozen=True, slots=True)
class BBStar:
    """One element of BB*: ``2·log2 N`` factors, strides ``N/2 … 1, 1 … N/2`` in application order."""

    size: int
    factors: tuple[ButterflyFactor, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "factors", _items(self.factors, "BB* factors"))
        plain_fields(self, "size")
        _check_size(self.size, "BB* size")
        for i, f in enumerate(self.factors):
            if not isinstance(f, ButterflyFactor):
                raise IRError(f"BB* of size {self.size}: factor {i}: expected a ButterflyFactor, found {type(f).__name__}")
        want = bbstar_strides(self.size)
        got = tuple(f.stride for f in self.factors)
        if any(f.size != self.size for f in self.factors):
            raise ShapeError(f"BB* of size {self.size}: factor sizes {[f.size for f in self.factors]} differ")
        if got != want:
            raise IRError(
                f"BB* of size {self.size}: expected strides {list(want)} in application order "
                f"(B* half decreasing, then B half increasing), found {list(got)}"
            )

    @staticmethod
    def identity(size: int) -> BBStar:
        size = plain_index(size)  # type: ignore[assignment]
        _check_size(size, "BB* size")
        return BBStar(size, tuple(ButterflyFactor.identity(size, s) for s in bbstar_strides(size)))

    def transpose(self) -> BBStar:
        """``(M₁M₂*)ᵀ = M₂M₁ᵀ``: reversed order, blocks transposed; the stride pattern is a palindrome."""
        return BBStar(self.size, tuple(f.transpose() for f in reversed(self.factors)))

    def lift(self, size: int) -> BBStar:
        """``diag(E, I)`` at a larger power-of-two size: old stages lifted, strides ≥ old size identity."""
        size = plain_index(size)  # type: ignore[assignment]
        _check_size(size, f"lifting a BB* of size {self.size}", self.size)
        k = len(self.factors) // 2
        down = {f.stride: f.lift(size) for f in self.factors[:k]}
        up = {f.stride: f.lift(size) for f in self.factors[k:]}
        pat = bbstar_strides(size)
        kk = len(pat) // 2
        out = [
            (down if j < kk else up).get(s) or ButterflyFactor.identity(size, s)  # strides ≥ old size: identity
            for j, s in enumerate(pat)
        ]
        return BBStar(size, tuple(out))


@dataclass(frozen=True, slots=True)
class FactorList:
    """Any ordered product of butterfly factor matrices of one size; ``factors[0]`` is applied first.

    No stride pattern is imposed. :meth:`to_bbstars` re-reads the sequence as BB* groups.

    >>> fl = FactorList(4, (ButterflyFactor.identity(4, 1), ButterflyFactor.identity(4, 2)))
    >>> [[f.stride for f in g.factors] for g in fl.to_bbstars()]
    [[2, 1, 1, 2]]
    >>> fl.transpose().strides()
    (2, 1)
    """

    size: int
    factors: tuple[ButterflyFactor, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "factors", _items(self.factors, "factor list factors"))
        plain_fields(self, "size")
        _check_size(self.size, "factor list size")
        for i, f in enumerate(self.factors):
            if not isinstance(f, ButterflyFactor):
                raise IRError(f"factor list entry {i}: expected a ButterflyFactor, found {type(f).__name__}")
            if f.size != self.size:
                raise ShapeError(f"factor list entry {i}: expected size {self.size}, found {f.size}")

    @staticmethod
    def from_bbstars(size: int, groups: Sequence[BBStar]) -> FactorList:
        return FactorList(size, tuple(f for g in groups for f in g.factors))

    def strides(self) -> tuple[int, ...]:
        return tuple(f.stride for f in self.factors)

    def transpose(self) -> FactorList:
        return FactorList(self.size, tuple(f.transpose() for f in reversed(self.factors)))

    def then(self, other: FactorList) -> FactorList:
        """``other · self``: the factors of ``self``, then those of ``other`` (common size by lifting)."""
        if not isinstance(other, FactorList):
            raise IRError(f"multiplying factor lists: expected a FactorList, found {type(other).__name__}")
        size = max(self.size, other.size)
        return FactorList(size, self.lift(size).factors + other.lift(size).factors)

    def lift(self, size: int) -> FactorList:
        size = plain_index(size)  # type: ignore[assignment]
        return FactorList(size, tuple(f.lift(size) for f in self.factors)) if size != self.size else self

    def to_bbstars(self, *, strict: bool = False, merge: bool = False) -> tuple[BBStar, ...]:
        """Read the sequence as consecutive BB* groups, in order.

        Each factor takes the next slot of the repeated pattern ``N/2 … 1, 1 … N/2`` with its
        stride; skipped slots become identity factors (``strict=True`` forbids skipping and
        requires whole groups). With ``merge=True`` a factor whose stride equals that of the slot
        just filled is multiplied into it. Greedy placement is optimal: it uses the fewest groups
        among all order-preserving placements.
        """
        pat = bbstar_strides(self.size)
        per = len(pat)
        slots: list[ButterflyFactor] = []
        for i, f in enumerate(self.factors):
            if merge and slots and pat[(len(slots) - 1) % per] == f.stride:
                slots[-1] = slots[-1].then(f)
                continue
            while pat[len(slots) % per] != f.stride:
                if strict:
                    g, j = divmod(len(slots), per)
                    raise IRError(
                        f"factor list entry {i}: has stride {f.stride}, but slot {j} of BB* group {g} needs "
                        f"stride {pat[j]} (pattern {list(pat)} in application order)"
                    )
                slots.append(ButterflyFactor.identity(self.size, pat[len(slots) % per]))
            slots.append(f)
        if len(slots) % per:
            if strict:
                raise IRError(
                    f"factor list of {len(self.factors)} factors: expected a multiple of {per} "
                    f"(whole BB* groups of size {self.size})"
                )
            while len(slots) % per:
                slots.append(ButterflyFactor.identity(self.size, pat[len(slots) % per]))
        return tuple(BBStar(self.size, tuple(slots[k : k + per])) for k in range(0, len(slots), per))


@dataclass(frozen=True, slots=True)
class Kaleidoscope:
    """``M ∈ (BB*)^w_e``: ``groups`` applied in order to ``(x, 0)``; the first ``n`` entries are read."""

    n: int
    size: int
    groups: tuple[BBStar, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", _items(self.groups, "kaleidoscope groups"))
        plain_fields(self, "n", "size")
        if not is_power_of_two(self.size):
            raise ShapeError(f"kaleidoscope size: expected a power of two, found {safe_repr(self.size)}")
        check_size_limit(self.size, f"kaleidoscope of size {show_int(self.size)}")
        if not isinstance(self.n, int) or isinstance(self.n, bool) or self.n < 1 or self.n > self.size:
            raise ShapeError(f"kaleidoscope: expected 1 ≤ n ≤ size = {self.size}, found n = {safe_repr(self.n)} (an int)")
        for i, g in enumerate(self.groups):
            if not isinstance(g, BBStar):
                raise IRError(f"kaleidoscope group {i}: expected a BBStar, found {type(g).__name__}")
            if g.size != self.size:
                raise ShapeError(f"kaleidoscope group {i}: expected size {self.size}, found {g.size}")

    def __repr__(self) -> str:
        """A short summary; the factors are in ``groups``."""
        factors = sum(len(g.factors) for g in self.groups)
        return f"Kaleidoscope(n={self.n}, size={self.size}, width={len(self.groups)} BB* groups, {factors} factors)"

    @property
    def width(self) -> int:
        """``w``: the number of BB* factors."""
        return len(self.groups)

    @property
    def expansion(self) -> Fraction:
        """``e = N/n`` (may be fractional when n is not a power of two)."""
        return Fraction(self.size, self.n)

    @property
    def num_params(self) -> int:
        """``4·w·N·log2 N`` (Dao et al. Observation E.1: 2·log2 N factors of 2N entries per BB*)."""
        return 4 * self.width * self.size * (self.size.bit_length() - 1)

    @staticmethod
    def identity(n: int, size: int | None = None) -> Kaleidoscope:
        """The ``n×n`` identity as the empty product (w = 0) at ``size`` (default: ``n`` padded)."""
        n = plain_index(n)  # type: ignore[assignment]  # a numpy integer by its value, as the constructor reads it
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ShapeError(f"kaleidoscope identity: expected an int n ≥ 1, found n = {safe_repr(n)}")
        return Kaleidoscope(n, size if size is not None else max(2, next_power_of_two(n)), ())

    def factor_list(self) -> FactorList:
        return FactorList.from_bbstars(self.size, self.groups)

    def lift(self, size: int) -> Kaleidoscope:
        """The same ``n×n`` corner at a larger size: every group becomes ``diag(E, I)`` (docs/kaleidoscope.md §1.6)."""
        size = plain_index(size)  # type: ignore[assignment]  # its value: an int subclass's == could call any size this one
        if type(size) is int and size == self.size:
            return self
        _check_size(size, f"lifting a kaleidoscope of size {self.size}", self.size)
        return Kaleidoscope(self.n, size, tuple(g.lift(size) for g in self.groups))

    def transpose(self) -> Kaleidoscope:
        """``Mᵀ``: the corner of ``Eᵀ`` (groups reversed, each transposed)."""
        return Kaleidoscope(self.n, self.size, tuple(g.transpose() for g in reversed(self.groups)))

    def absorb_diagonal(self, diag: Sequence[object], side: Side) -> Kaleidoscope:
        """``E·D`` (``'before'``, into the first stage) or ``D·E`` (``'after'``, into the last stage).

        The width stays ``w``; with no groups there is no stage to absorb into (IRError).
        """
        side = _check_side(side)
        if not self.groups:
            raise IRError("absorbing a diagonal: the kaleidoscope has no BB* group (w = 0) to absorb it into")
        gi, fi = (0, 0) if side == "before" else (len(self.groups) - 1, -1)
        g = self.groups[gi]
        fs = list(g.factors)
        fs[fi] = fs[fi].absorb(diag, side)
        groups = list(self.groups)
        groups[gi] = BBStar(self.size, tuple(fs))
        return Kaleidoscope(self.n, self.size, tuple(groups))

    def then(self, other: Kaleidoscope) -> Kaleidoscope:
        """The corner product ``M_other · M_self`` (``self`` applied first) in ``(BB*)^{w₁+w₂}``.

        Both are lifted to the larger size; the projector ``diag(I_n, 0)`` between them
        (docs/kaleidoscope.md §1.6: ``S E₂ SᵀS E₁ Sᵀ``) is absorbed into the last stage of ``self``, so the
        result is exact even when ``self`` leaves values outside the corner.
        """
        if not isinstance(other, Kaleidoscope):
            raise IRError(f"kaleidoscope product: expected a Kaleidoscope, found {type(other).__name__}")
        if other.n != self.n:
            raise ShapeError(f"kaleidoscope product: both factors must be n×n with one n, found n = {self.n} and {other.n}")
        size = max(self.size, other.size)
        first, second = self.lift(size), other.lift(size)
        if first.groups and second.groups and self.n < size:
            first = first.absorb_diagonal((1,) * self.n + (0,) * (size - self.n), "after")
        return Kaleidoscope(self.n, size, first.groups + second.groups)


def _items(xs: object, what: str) -> tuple[object, ...]:
    """``xs`` as a tuple; anything but a list, tuple or other ordered iterable is refused (:class:`IRError`)."""
    if unordered(xs):
        raise IRError(f"{what}: expected a sequence, found {type(xs).__name__}")
    return tuple(plain_items(xs))  # type: ignore[call-overload, arg-type]  # a subclass as the items it stores


def product(*ks: Kaleidoscope) -> Kaleidoscope:
    """``ks[0]`` applied first, then ``ks[1]``, … (see :meth:`Kaleidoscope.then`)."""
    if not ks:
        raise IRError("kaleidoscope product: expected at least one factor")
    if not isinstance(ks[0], Kaleidoscope):
        raise IRError(f"kaleidoscope product: expected a Kaleidoscope, found {type(ks[0]).__name__}")
    out = ks[0]
    for k in ks[1:]:
        out = out.then(k)
    return out
