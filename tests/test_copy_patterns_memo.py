"""The memo of :func:`~symverify.kaleidoscope.selection._copy_patterns`: equal to the copy networks
computed afresh (:func:`_copy_patterns_routed`) for random sources in any item order, and every call
gets its own lists and dictionaries (changing one answer changes no later one)."""

from __future__ import annotations

import random

import pytest

from symverify.kaleidoscope.selection import _copy_patterns, _copy_patterns_memo, _copy_patterns_routed


def _uses(rng: random.Random, N: int) -> dict[int, int]:
    srcs = rng.sample(range(N // 2), rng.randint(1, max(1, N // 4)))
    return {j: rng.randint(1, 3) for j in srcs}


@pytest.mark.parametrize("N", [4, 8, 16, 32, 64])
def test_memo_equals_the_fresh_computation_in_any_item_order(N: int) -> None:
    rng = random.Random(N)
    _copy_patterns_memo.cache_clear()
    for _ in range(15):
        uses = _uses(rng, N)
        items = list(uses.items())
        rng.shuffle(items)
        want = _copy_patterns_routed(N, uses)
        assert _copy_patterns(N, dict(items)) == want
        assert _copy_patterns(N, uses) == want  # from the memo now
    assert _copy_patterns_memo.cache_info().hits >= 15


def test_answers_are_independent_copies() -> None:
    uses = {0: 2, 3: 1}
    first = _copy_patterns(8, uses)
    _, pats, slots = first[0]
    pats.append((1, 0, 0, 0, 0))
    next(iter(slots.values())).append(99)
    slots[42] = [1]
    assert _copy_patterns(8, uses) == _copy_patterns_routed(8, uses)
