""":func:`~symverify.kaleidoscope.permutation.benes_swaps` (numpy, orbit minima by pointer doubling)
against the looping algorithm walked one position at a time: the same masks on random permutations
of every ``N = 2 … 1024``, and the factors built from them route the permutation."""

from __future__ import annotations

import random

import pytest

from symverify.kaleidoscope.permutation import benes_swaps, route_permutation
from symverify.kernel.kaleidoscope.apply import apply


def reference_swaps(perm: list[int]) -> list[tuple[int, int]]:
    """The looping algorithm as first written: walk each alternating cycle from its least position."""
    size = len(perm)
    levels = size.bit_length() - 1
    stages: list[tuple[int, int]] = [(0, 0)] * (2 * levels)
    dest = list(perm)
    for k in range(levels):
        m, h = size >> k, size >> (k + 1)
        block = ~(m - 1)
        inv = [0] * size
        for pos, t in enumerate(dest):
            inv[(pos & block) | t] = pos
        colour = [-1] * size
        for start in range(size):
            p = start
            while colour[p] < 0:
                colour[p] = 0
                q = p ^ h
                colour[q] = 1
                p = inv[(q & block) | (dest[q] ^ h)]
        sw_in = sw_out = 0
        new = [0] * size
        for pos, t in enumerate(dest):
            c = colour[pos]
            if c and not pos & h:
                sw_in |= 1 << pos
            if not c and t & h:
                sw_out |= 1 << ((pos & block) | (t & (h - 1)))
            new[(pos & ~h) | (h if c else 0)] = t & (h - 1)
        dest = new
        stages[k] = (h, sw_in)
        stages[2 * levels - 1 - k] = (h, sw_out)
    return stages


@pytest.mark.parametrize("size", [2 ** e for e in range(1, 11)])
def test_masks_equal_the_looping_algorithm(size: int) -> None:
    rng = random.Random(size)
    perms = [list(range(size)), list(range(size))[::-1]] + [rng.sample(range(size), size) for _ in range(12)]
    for perm in perms:
        assert benes_swaps(perm) == reference_swaps(perm)


@pytest.mark.parametrize("size", [2, 4, 8, 64, 512])
def test_factors_route_the_permutation(size: int) -> None:
    rng = random.Random(7 * size)
    for _ in range(4):
        perm = rng.sample(range(size), size)
        out = apply(route_permutation(perm), list(range(size)))
        assert all(out[perm[i]] == i for i in range(size))

