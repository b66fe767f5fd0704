""":func:`~symverify.kaleidoscope.permutation.benes_swaps` (numpy, orbit minima by pointer doubling)
against the looping algorithm walked one position at a time (``_benes_swaps_loop``, used below
``N = 64``): the same masks on random permutations of every ``N = 2 … 1024``; and the factors built
from either route the permutation (the check that does not rely on either algorithm)."""

from __future__ import annotations

import random

import pytest

from symverify.kaleidoscope import permutation
from symverify.kaleidoscope.permutation import benes_swaps, route_permutation
from symverify.kernel.kaleidoscope.apply import apply


@pytest.mark.parametrize("size", [2 ** e for e in range(1, 11)])
def test_numpy_masks_equal_the_looping_algorithm(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The numpy colouring, forced at every size, against the walk one position at a time (which
    the routing test below checks on its own)."""
    monkeypatch.setattr(permutation, "_NUMPY_FROM", 2)
    rng = random.Random(size)
    perms = [list(range(size)), list(range(size))[::-1]] + [rng.sample(range(size), size) for _ in range(12)]
    for perm in perms:
        assert benes_swaps(perm) == permutation._benes_swaps_loop(perm)


@pytest.mark.parametrize("numpy_from", [2, 1 << 20])  # the numpy colouring, or the loop, at every size
@pytest.mark.parametrize("size", [2, 4, 8, 16, 32, 64, 512])
def test_factors_route_the_permutation(size: int, numpy_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(permutation, "_NUMPY_FROM", numpy_from)
    rng = random.Random(7 * size)
    for _ in range(4):
        perm = rng.sample(range(size), size)
        out = apply(route_permutation(perm), list(range(size)))
        assert all(out[perm[i]] == i for i in range(size))

