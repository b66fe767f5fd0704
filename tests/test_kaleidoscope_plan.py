"""The plan of one butterfly factor (:func:`symverify.kernel.kaleidoscope.apply._plan`): the pairs that are
not the identity, found by scanning plain ``int`` diagonals at C level, are exactly those of the
pair-by-pair definition (``d1 = d4 = 1`` as ``int``, ``d2 = d3 = 0`` exactly), with the same
coefficients, for integer, rational and symbolic entries."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.butterfly import ButterflyFactor, pair_index
from symverify.kernel.ir.scalar import sym
from symverify.kernel.kaleidoscope import apply as apply_module
from symverify.kernel.kaleidoscope.apply import _classify, _moved, _plan
from symverify.kernel.semantics.rings import ScalarRing

INTS = st.sampled_from([0, 1, 1, 1, -1, 2])
ANY = st.sampled_from([0, 1, -1, 2, Fraction(0), Fraction(1), Fraction(1, 2), sym("a")])


def _reference(f: ButterflyFactor, ring: Any) -> list[tuple[Any, ...]]:
    """The pair-by-pair plan: every pair visited, the identity ones skipped."""
    out = []
    for m in range(f.size // 2):
        a, b, c, d = f.d1[m], f.d2[m], f.d3[m], f.d4[m]
        if type(a) is int and type(d) is int and a == 1 and d == 1 and b == 0 and c == 0:
            continue
        p = pair_index(f.size, f.stride, m)
        out.append((p, p + f.stride, *(_classify(x, ring) for x in (a, b, c, d))))
    return out


@st.composite
def factors(draw: Any, entries: Any) -> ButterflyFactor:
    size = draw(st.sampled_from([2, 4, 8, 16]))
    stride = draw(st.sampled_from([s for s in (1, 2, 4, 8) if s <= size // 2]))
    diag = st.lists(entries, min_size=size // 2, max_size=size // 2).map(tuple)
    return ButterflyFactor(size, stride, draw(diag), draw(diag), draw(diag), draw(diag))


@settings(max_examples=150, deadline=None)
@given(factors(INTS))
def test_plan_of_int_diagonals_is_the_pairwise_plan(f: ButterflyFactor) -> None:
    assert _plan(f, ScalarRing()) == _reference(f, ScalarRing())


@settings(max_examples=150, deadline=None)
@given(factors(ANY))
def test_plan_of_any_diagonals_is_the_pairwise_plan(f: ButterflyFactor) -> None:
    assert _plan(f, ScalarRing()) == _reference(f, ScalarRing())


def test_each_diagonal_alone_moves_a_pair() -> None:
    """A single off-identity entry on any one diagonal makes its pair (and only it) part of the plan."""
    ident = ((1, 1, 1, 1), (0, 0, 0, 0), (0, 0, 0, 0), (1, 1, 1, 1))
    assert _plan(ButterflyFactor(8, 2, *ident), ScalarRing()) == []
    for k, value in ((0, 3), (1, 5), (2, -1), (3, 0), (0, Fraction(1, 2)), (2, sym("a"))):
        diags = [list(d) for d in ident]
        diags[k][2] = value
        f = ButterflyFactor(8, 2, *(tuple(d) for d in diags))
        plan = _plan(f, ScalarRing())
        assert [row[0] for row in plan] == [pair_index(8, 2, 2)] and plan == _reference(f, ScalarRing())


def _trivial_or(entries: Any, trivial: int, half: int) -> Any:
    """A diagonal of ``half`` entries: all ``trivial`` (the identity's value), or drawn from ``entries``."""
    return st.one_of(st.just((trivial,) * half), st.lists(entries, min_size=half, max_size=half).map(tuple))


@st.composite
def mostly_identity(draw: Any) -> ButterflyFactor:
    size = draw(st.sampled_from([2, 4, 8, 16]))
    stride = draw(st.sampled_from([s for s in (1, 2, 4, 8) if s <= size // 2]))
    half, big = size // 2, st.sampled_from([0, 1, 2, -1, 2**70, 1 - 2**70])
    return ButterflyFactor(size, stride, draw(_trivial_or(big, 1, half)), draw(_trivial_or(big, 0, half)),
                           draw(_trivial_or(big, 0, half)), draw(_trivial_or(big, 1, half)))


@settings(max_examples=200, deadline=None)
@given(mostly_identity())
def test_moved_pairs_of_whole_identity_diagonals_are_the_pairwise_ones(f: ButterflyFactor) -> None:
    """Diagonals that are all 1 (``d1``, ``d4``) or all 0 (``d2``, ``d3``) are told by a count and not
    scanned; the pairs found are still exactly the non-identity ones (big ints included)."""
    assert _moved(f) == [m for m in range(f.size // 2) if (f.d1[m], f.d2[m], f.d3[m], f.d4[m]) != (1, 0, 0, 1)]
    assert _plan(f, ScalarRing()) == _reference(f, ScalarRing())


def test_an_identity_diagonal_is_not_scanned_entry_by_entry(monkeypatch: Any) -> None:
    """Only the diagonals with an entry off the identity are scanned pair by pair (most diagonals of a
    lifted kaleidoscope are all 1 or all 0): the identity factor scans none, one off-diagonal entry
    scans one diagonal."""
    scanned: list[int] = []
    real = apply_module.compress

    def counting(data: Any, selectors: Any) -> Any:
        scanned.append(len(data))
        return real(data, selectors)

    monkeypatch.setattr(apply_module, "compress", counting)
    half = 512
    assert _moved(ButterflyFactor.identity(2 * half, 1)) == [] and scanned == []
    d2 = (0,) * 7 + (3,) + (0,) * (half - 8)
    assert _moved(ButterflyFactor(2 * half, 1, (1,) * half, d2, (0,) * half, (1,) * half)) == [7]
    assert scanned == [half]


def test_a_small_zero_one_factor_is_planned_once_for_every_ring() -> None:
    """A factor of size ≤ ``_CACHED_UP_TO`` whose entries are all 0 or 1 keeps its plan (the same for
    every ring: nothing is coerced) on first use; other factors keep none; the cached plan is what
    the factor's own plan is, and the matrices read through it are unchanged."""
    from symverify.kernel.kaleidoscope.apply import apply, materialize, to_matrix
    from symverify.kernel.semantics.rings import AffineRing, ModRing

    swap = ButterflyFactor(8, 2, (0, 1, 1, 0), (1, 0, 0, 1), (1, 0, 0, 1), (0, 1, 1, 0))
    assert swap._plan_cache is None
    first = _plan(swap, ScalarRing())
    assert first == _reference(swap, ScalarRing()) and apply_module._KEPT[swap._plan_cache][1] == tuple(first)
    assert _plan(swap, AffineRing(ScalarRing())) == first == _reference(swap, ModRing(7))
    assert apply(swap, [10, 11, 12, 13, 14, 15, 16, 17]) == [12, 11, 10, 13, 14, 17, 16, 15]
    assert to_matrix(swap) == [[1 if swap_of(i) == j else 0 for j in range(8)] for i in range(8)]
    assert materialize(swap, [0])[2].terms == {0: 1}
    twice = ButterflyFactor(8, 2, (0, 1, 1, 0), (2, 0, 0, 1), (1, 0, 0, 1), (0, 1, 1, 0))  # an entry 2: coerced per ring
    _plan(twice, ScalarRing())
    big = ButterflyFactor(2 * apply_module._CACHED_UP_TO, 1, *((1,) * apply_module._CACHED_UP_TO,) * 4)
    _plan(big, ScalarRing())
    symbolic = ButterflyFactor(2, 1, (1,), (sym("a"),), (0,), (1,))
    _plan(symbolic, ScalarRing())
    assert twice._plan_cache is None and big._plan_cache is None and symbolic._plan_cache is None
    import copy
    import dataclasses
    import pickle

    for again in (copy.copy(swap), pickle.loads(pickle.dumps(swap)), dataclasses.replace(swap, stride=1)):
        assert again._plan_cache is None  # a copy is planned again (the cache holds this module's markers)
    assert swap == copy.copy(swap) and hash(swap) == hash(ButterflyFactor(8, 2, *(swap.d1, swap.d2, swap.d3, swap.d4)))


def swap_of(i: int) -> int:
    """The position whose entry the stride-2 factor of the test above moves to ``i``: its pairs 0
    (positions 0, 2) and 3 (positions 5, 7) swap."""
    return {0: 2, 2: 0, 5: 7, 7: 5}.get(i, i)
