"""The kaleidoscope builders read their input once: ``permutation_to_kaleidoscope`` checked its
permutation twice (once more to route it), and ``SparseMatrix`` read every entry of a plain tuple
of plain entries in Python; it now reads those by C-level scans, with the same entries and the same
refusals as the reading entry by entry."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spies import count_calls

from symverify.errors import IRError, ShapeError
from symverify.kaleidoscope import permutation
from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.kernel.ir.scalar import sym
from symverify.kernel.kaleidoscope import matrix as sparse
from symverify.kernel.kaleidoscope.matrix import SparseMatrix
from symverify.kernel.provers.matrix import verify_permutation


def test_permutation_to_kaleidoscope_reads_its_permutation_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_calls(monkeypatch, permutation, "check_permutation")
    f = permutation_to_kaleidoscope([2, 0, 1])
    assert calls[0] == 1
    assert verify_permutation(f, [2, 0, 1]).proved
    with pytest.raises(IRError, match="both map to 1"):
        permutation_to_kaleidoscope([1, 1, 0])


def test_sparse_matrix_reads_plain_entries_without_a_python_step_each(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_calls(monkeypatch, sparse, "as_index")
    m = SparseMatrix(3, 4, ((2, 3, 5), (0, 1, 0), (0, 0, -1)))
    assert calls[0] == 0
    assert m.entries == ((0, 0, -1), (2, 3, 5))


_ENTRY = st.tuples(st.integers(0, 4), st.integers(0, 4),
                   st.one_of(st.integers(-3, 3), st.fractions(max_denominator=4), st.sampled_from([sym("a"), "1/2", "0"])))


@settings(max_examples=200, deadline=None)
@given(st.lists(_ENTRY, max_size=12), st.integers(1, 6), st.integers(1, 6))
def test_sparse_matrix_reads_plain_entries_as_the_entry_by_entry_reading(entries: list, rows: int, cols: int) -> None:
    def read(es: object) -> object:
        try:
            return SparseMatrix(rows, cols, es).entries  # type: ignore[arg-type]
        except (IRError, ShapeError) as e:
            return type(e), str(e)

    fast = read(tuple(entries))
    slow = read([list(e) for e in entries])  # lists: read entry by entry
    assert fast == slow


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8).flatmap(lambda k: st.permutations(range(2 ** k))))
def test_switch_factors_are_the_pairs_the_mask_names(perm: list[int]) -> None:
    """The switch factor of stride ``h`` swaps exactly the pairs whose lower position is a set bit of
    the mask (read by numpy's bit unpacking): the definition bit by bit."""
    from symverify.kernel.ir.butterfly import pair_number

    size = len(perm)
    for h, mask in permutation._benes_swaps(tuple(perm)):
        swaps = [0] * (size // 2)
        for pos in range(size):
            if mask >> pos & 1:
                assert not pos & h  # only lower positions are named
                swaps[pair_number(h, pos)] = 1
        f = permutation._switch(size, h, mask)
        keep = tuple(1 - x for x in swaps)
        assert (f.size, f.stride, f.d1, f.d2, f.d3, f.d4, f.all_int) == (size, h, keep, tuple(swaps), tuple(swaps), keep, True)


_ENTRIES = st.sampled_from([0, 1, -1, 2, 2**70, -(2**70)])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5).flatmap(lambda k: st.tuples(st.just(2 ** k), st.integers(0, k - 1), st.data())))
def test_moved_pairs_are_those_with_an_entry_off_the_identity(shape: tuple) -> None:
    """The plans skip exactly the pairs whose block is the identity (``d1 = d4 = 1``, ``d2 = d3 = 0``)."""
    from symverify.kernel.ir.butterfly import ButterflyFactor
    from symverify.kernel.kaleidoscope.apply import _moved

    size, k, data = shape
    half = size // 2

    def diagonal(base: int) -> tuple[int, ...]:
        plain = data.draw(st.booleans())
        return (base,) * half if plain else tuple(data.draw(st.one_of(st.just(base), _ENTRIES)) for _ in range(half))

    f = ButterflyFactor(size, 2**k, diagonal(1), diagonal(0), diagonal(0), diagonal(1))
    want = [m for m in range(half) if (f.d1[m], f.d2[m], f.d3[m], f.d4[m]) != (1, 0, 0, 1)]
    assert list(_moved(f)) == want
