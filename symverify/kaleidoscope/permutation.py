"""Every permutation is one BB* element (Dao et al. 2020, Theorem 2; docs/kaleidoscope.md §2.1).

Convention: the element at position ``i`` ends at position ``π(i)``, i.e. the matrix ``P`` with
``P[π(i), i] = 1`` and ``(P·x)[π(i)] = x[i]``. The construction is the Beneš network in
butterfly layout routed by the looping algorithm (Beneš 1964; Waksman 1968; Opferman–Tsao-Wu
1971): at block size ``m`` (stride ``h = m/2``) the elements are 2-coloured so that the two
inputs of every stride-``h`` input switch and the two elements bound for every output pair
``{t, t+h}`` get different colours (the constraint graph is a union of even cycles); colour 1
crosses to the upper half, both halves are routed recursively, and the stride-``h`` output switch
swaps exactly when the lower half delivers an element bound for ``t + h``. Input switches are the
``B*`` half (strides ``N/2 … 1``), output switches the ``B`` half (``1 … N/2``), so the result is
exactly one BB* element whose 2×2 blocks are all ``I`` or ``X = [[0, 1], [1, 0]]``.
Time ``O(N log² N)`` element operations, in numpy (:func:`benes_swaps`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from operator import attrgetter, is_

import numpy as np

from symverify.errors import IRError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.butterfly import (
    BBStar,
    ButterflyFactor,
    Kaleidoscope,
    check_size_limit,
    is_power_of_two,
    next_power_of_two,
)
from symverify.kernel.ir.scalar import as_index, plain_index
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import check_permutation

__all__ = ["check_permutation", "complete_permutation", "route_permutation", "benes_swaps", "permutation_to_kaleidoscope", "bit_reversal", "reversal"]


def _switch_factor(size: int, stride: int, swaps: list[int]) -> ButterflyFactor:
    keep = tuple(map((1).__sub__, swaps))
    cross = tuple(swaps)
    return ButterflyFactor(size, stride, keep, cross, cross, keep)


def route_permutation(perm: Sequence[int]) -> BBStar:
    """The BB* element ``P`` with ``(P·x)[perm[i]] = x[i]``; ``len(perm)`` a power of two ≥ 2.

    >>> from symverify.kernel.kaleidoscope.apply import apply
    >>> apply(route_permutation([2, 0, 3, 1]), ["a", "b", "c", "d"])
    ['b', 'd', 'a', 'c']
    """
    perm = check_permutation(perm)
    size = len(perm)
    if not is_power_of_two(size) or size < 2:
        raise IRError(f"route_permutation: expected a length that is a power of two ≥ 2, found {size}; pad with fixed points")
    return _route(perm)


def _route(perm: tuple[int, ...]) -> BBStar:
    """:func:`route_permutation` of a permutation already checked (:func:`check_permutation`: plain ints,
    a bijection) whose length is a power of two ≥ 2."""
    size = len(perm)
    switch = _shared_switch if size <= _SHARED_UP_TO else _switch
    return BBStar(size, tuple(switch(size, h, mask) for h, mask in _benes_swaps(perm)))


def _switch(size: int, h: int, mask: int) -> ButterflyFactor:
    """The switch factor of stride ``h`` swapping the pairs whose lower position is a set bit of ``mask``
    (:func:`_benes_swaps` sets no other bit). Pair ``m`` has the lower position ``2h·(m // h) + m % h``
    (:func:`~symverify.kernel.ir.butterfly.pair_index`), so the bits of ``mask`` by position, read as
    rows of ``2h`` (blocks) whose first ``h`` are the lower positions, give the swaps in pair order:
    numpy's bit unpacking, no Python step per bit."""
    bits = np.unpackbits(np.frombuffer(mask.to_bytes(max(1, size // 8), "little"), dtype=np.uint8), bitorder="little")
    return _switch_factor(size, h, bits[:size].reshape(-1, 2, h)[:, 0, :].ravel().tolist())


_SHARED_UP_TO = 64
"""Sizes whose switch factors are shared (:func:`_shared_switch`): at ``N ≤ 64`` a stride has at most
``2^32`` masks but a sweep over small permutations meets few of them again and again (all ``8!``
permutations of length 8 use 3·16 factors), so one object serves every network while it holds what it
was built with."""

_CONTENT = attrgetter("size", "stride", "d1", "d2", "d3", "d4", "all_int")
"""The fields of a factor every reader takes its matrix from (its plan's mark is the planner's own, read
only for these fields: :func:`symverify.kernel.kaleidoscope.apply._plan`)."""


@lru_cache(maxsize=4096)
def _switch_entry(size: int, h: int, mask: int) -> tuple[ButterflyFactor, tuple[object, ...]]:
    f = _switch(size, h, mask)
    return f, _CONTENT(f)


def _shared_switch(size: int, h: int, mask: int) -> ButterflyFactor:
    """:func:`_switch`, the one factor kept for ``(size, h, mask)`` while its content fields still hold
    the objects it was built with (plain ints and tuples of ints, which cannot change): a factor a caller
    rewrote in place (``object.__setattr__(f, "d2", ...)`` on one result) is never handed to the next
    caller; the table is emptied and the factor built afresh."""
    f, held = _switch_entry(size, h, mask)
    if all(map(is_, held, _CONTENT(f))):
        return f
    _switch_entry.cache_clear()
    return _switch_entry(size, h, mask)[0]


_NUMPY_FROM = 64  # the size from which the numpy colouring is the faster one (measured per call, N = 8 … 1024)


def benes_swaps(perm: Sequence[int]) -> list[tuple[int, int]]:
    """The switches of the Beneš network for ``perm``, a permutation (:func:`check_permutation`: each of
    ``0 … N−1`` once, else :class:`IRError`) whose length ``N`` is a power of two ≥ 2 (else
    :class:`IRError`); see :func:`_benes_swaps`."""
    perm = check_permutation(perm, "benes_swaps: permutation")
    if not is_power_of_two(len(perm)) or len(perm) < 2:
        raise IRError(f"benes_swaps: expected a permutation whose length is a power of two ≥ 2, found length {len(perm)}; "
                      "pad with fixed points")
    return _benes_swaps(perm)


def _benes_swaps(perm: Sequence[int]) -> list[tuple[int, int]]:
    """The switches of the Beneš network for ``perm`` (a permutation of a length that is a power of two ≥ 2,
    checked by the caller), by the looping algorithm: per factor in application order, ``(stride h, mask)``
    where bit ``q`` of ``mask`` is set when the pair ``(q, q + h)`` (``q`` its lower position) swaps.
    Level ``k`` (``h = N/2^(k+1)``) colours every alternating cycle of input and output partners so
    the two halves of each block receive the elements bound for them; its input switches are factor
    ``k``, its output switches factor ``2·log2 N − 1 − k``. :func:`route_permutation` builds the
    factors from these masks; the planner counts routes from them without building factors.

    The colouring is the one of the looping algorithm that walks the cycles from their least
    position (that position coloured 0): with ``step(p)`` the output partner of the input partner
    ``p ⊕ h`` of ``p``, an alternating cycle is ``P ∪ (P ⊕ h)`` for the ``step``-orbit ``P`` of any
    of its positions (the orbit of ``p ⊕ h`` is ``P ⊕ h``, walked backwards), so ``p`` is coloured 0
    exactly when ``min orbit(p) < min orbit(p ⊕ h)``. The orbit minima come from pointer doubling
    (``log2 h`` rounds of ``m ← min(m, m∘s); s ← s∘s``), every level in numpy: ``O(N log² N)``
    element operations, none of them a Python step per position; below ``N = 64`` the walk one
    position at a time (:func:`_benes_swaps_loop`) is faster and used."""
    size = len(perm)
    if size < _NUMPY_FROM:
        return _benes_swaps_loop(perm)
    levels = size.bit_length() - 1
    stages: list[tuple[int, int]] = [(0, 0)] * (2 * levels)
    pos = np.arange(size, dtype=np.int64)
    dest = np.asarray(perm, dtype=np.int64)  # destination of the element now at each position, local to its block
    for k in range(levels):
        m, h = size >> k, size >> (k + 1)
        base = pos & ~(m - 1)
        inv = np.empty(size, dtype=np.int64)
        inv[base | dest] = pos
        out_partner = inv[base | (dest ^ h)]  # of each position
        step = out_partner[pos ^ h]
        low = pos.copy()
        rounds = 1
        while rounds < h:  # an orbit lies in one block: at most h = m/2 positions
            np.minimum(low, low[step], out=low)
            step = step[step]
            rounds *= 2
        colour = low > low[pos ^ h]  # 1: crosses to the upper half
        upper = (pos & h) != 0
        sw_in = colour & ~upper
        sw_out = np.zeros(size, dtype=bool)
        sw_out[(base | (dest & (h - 1)))[~colour & ((dest & h) != 0)]] = True
        new = np.empty(size, dtype=np.int64)
        new[(pos & ~h) | np.where(colour, h, 0)] = dest & (h - 1)
        dest = new
        stages[k] = (h, _bits_to_int(sw_in))
        stages[2 * levels - 1 - k] = (h, _bits_to_int(sw_out))
    return stages


def _benes_swaps_loop(perm: Sequence[int]) -> list[tuple[int, int]]:
    """:func:`benes_swaps` walked one position at a time (faster below ``N = 64``, where numpy's
    per-call cost dominates)."""
    size = len(perm)
    levels = size.bit_length() - 1
    stages: list[tuple[int, int]] = [(0, 0)] * (2 * levels)
    dest = list(perm)  # destination of the element now at each position, local to its block
    for k in range(levels):
        m, h = size >> k, size >> (k + 1)
        block = ~(m - 1)
        inv = [0] * size
        for pos, t in enumerate(dest):
            inv[(pos & block) | t] = pos
        colour = [-1] * size
        for start in range(size):
            p = start
            while colour[p] < 0:  # walk one alternating cycle
                colour[p] = 0
                q = p ^ h  # input partner
                colour[q] = 1
                p = inv[(q & block) | (dest[q] ^ h)]  # output partner of q
        # the masks as binary digits, most significant first (digit ``size - 1 - pos`` is bit ``pos``),
        # converted once: OR-ing ``1 << pos`` into a growing int costs O(size) per bit
        sw_in, sw_out = bytearray(b"0") * size, bytearray(b"0") * size
        top = size - 1
        new = [0] * size
        for pos, t in enumerate(dest):
            c = colour[pos]
            if c and not pos & h:
                sw_in[top - pos] = 49  # "1"
            if not c and t & h:
                sw_out[top - ((pos & block) | (t & (h - 1)))] = 49
            new[(pos & ~h) | (h if c else 0)] = t & (h - 1)
        dest = new
        stages[k] = (h, int(sw_in, 2))
        stages[2 * levels - 1 - k] = (h, int(sw_out, 2))
    return stages


def _bits_to_int(bits: np.ndarray) -> int:
    """The int whose bit ``i`` is ``bits[i]``."""
    return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")


def permutation_to_kaleidoscope(perm: Sequence[int]) -> Factorization:
    """Theorem 2 for any length ``n``: pad with fixed points to ``N = 2^⌈log2 max(n, 2)⌉``.

    The result is ``(BB*)^1`` with ``e = N/n`` and is garbage-free (padding stays fixed and 0).
    """
    perm = check_permutation(perm)
    n = len(perm)
    if n == 0:
        raise IRError("permutation_to_kaleidoscope: expected a non-empty permutation")
    size = max(2, next_power_of_two(n))
    bb = _route(perm + tuple(range(n, size)))  # a bijection of 0 … size−1 in plain ints: checked above, padded with fixed points
    return Factorization(
        Kaleidoscope(n, size, (bb,)),
        "Dao et al. 2020, Theorem 2 (Beneš routing)",
        garbage_free=True,
        bounds={"w": 1, "N": size},
    )


def bit_reversal(n: int) -> tuple[int, ...]:
    """Position ``i`` goes to the index whose ``log2 n`` bits are those of ``i`` reversed.

    >>> bit_reversal(8)
    (0, 4, 2, 6, 1, 5, 3, 7)
    """
    n = plain_index(n)  # type: ignore[assignment]  # a numpy integer by its value, as the IR reads a size
    if not is_power_of_two(n):
        raise IRError(f"bit_reversal: expected a power of two, found {n!r}")
    check_size_limit(n, f"bit_reversal({n})")
    bits = n.bit_length() - 1
    return tuple(int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n))


def reversal(n: int) -> tuple[int, ...]:
    """``i ↦ n − 1 − i``."""
    n = plain_index(n)  # type: ignore[assignment]
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise IRError(f"reversal: expected a non-negative int, found {n!r}")
    check_size_limit(n, f"reversal({n})")
    return tuple(n - 1 - i for i in range(n))


def complete_permutation(size: int, partial: Mapping[int, int]) -> list[int]:
    """Extend an injective partial map on ``0 … size−1`` to a permutation (free points in order).

    ``size`` is an int ``≥ 0`` (a numpy integer by its value) within
    :data:`~symverify.ir.limits.MAX_CELLS`; ``partial`` a mapping of ints in ``0 … size−1`` to ints in
    ``0 … size−1``, no two keys mapped to one value. Anything else is an :class:`IRError` naming what
    was found: a map that is not injective would complete to no permutation.
    """
    n = plain_index(size)
    if type(n) is not int or n < 0:
        raise IRError(f"complete_permutation: expected a size, an int ≥ 0, found {safe_repr(size, 40)}")
    check_size_limit(n, f"complete_permutation of size {n}")
    size = n
    if not isinstance(partial, Mapping):
        raise IRError(f"complete_permutation: expected a mapping {{position: destination}}, found {type(partial).__name__}")
    clean: dict[int, int] = {}
    owner: dict[int, int] = {}
    for key, value in partial.items():
        i, t = as_index(key), as_index(value)
        if i is None or t is None or not (0 <= i < size and 0 <= t < size):
            raise IRError(f"complete_permutation: entry {safe_repr(key, 40)} ↦ {safe_repr(value, 40)}: expected ints in 0 … {size - 1}")
        if t in owner:
            raise IRError(f"complete_permutation: positions {owner[t]} and {i} both map to {t}; expected an injective map")
        clean[i], owner[t] = t, i
    partial = clean
    used = set(partial.values())
    free_src = (i for i in range(size) if i not in partial)
    free_dst = (t for t in range(size) if t not in used)
    perm = [0] * size
    for i, t in partial.items():
        perm[i] = t
    for i, t in zip(free_src, free_dst):
        perm[i] = t
    return perm
