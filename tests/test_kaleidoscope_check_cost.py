"""The kaleidoscope checks do each piece of work once, and keep every check.

``verify_permutation`` checked its kaleidoscope twice and compared its snapshot a third time when
the digest was stored; a sweep of small permutations walked the switch factors its kaleidoscopes
share once per kaleidoscope; ``forget`` copied a weak set of every memo and took each memo's lock.
Each test here counts the work, and the soundness tests rewrite what was kept (``object.__setattr__``
past the frozen dataclasses) and find it refused or walked again; a deadline checker that rewrites
the kaleidoscope while it is compared is refused.
"""

from __future__ import annotations

import gc
import itertools
from fractions import Fraction

import pytest
from spies import count_calls

from symverify.errors import IRError, ProverError, ShapeError
from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.kernel.ir import memo
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.memo import IdentityMemo, forget
from symverify.kernel.kaleidoscope.matrix import SparseMatrix
from symverify.kernel.provers import fingerprint
from symverify.kernel.provers.matrix import verify_matrix, verify_permutation


def test_verify_permutation_snapshots_a_fresh_kaleidoscope_once(monkeypatch: pytest.MonkeyPatch) -> None:
    perm = (3, 0, 2, 1, 4)
    f = permutation_to_kaleidoscope(perm)
    states = count_calls(monkeypatch, fingerprint, "_state")
    check = verify_permutation(f, perm)
    assert check.proved and check.digests is not None
    assert states[0] == 1  # one check; the digest stored within it compares no second snapshot
    assert check.digests[0] == fingerprint.content_digest(f.kaleidoscope)


def test_a_deadline_checker_rewriting_the_kaleidoscope_is_refused() -> None:
    perm = (1, 0, 3, 2)
    f = permutation_to_kaleidoscope(perm)
    k = f.kaleidoscope

    def rewrite() -> None:  # the caller's code, run before every factor applied
        object.__setattr__(k, "groups", (BBStar.identity(k.size),))

    with pytest.raises(ProverError, match="rewritten in place while it was compared"):
        verify_permutation(f, perm, check=rewrite)


def test_verify_matrix_refuses_a_checker_rewriting_between_factors() -> None:
    perm = (2, 3, 0, 1)
    f = permutation_to_kaleidoscope(perm)
    k = f.kaleidoscope
    calls = [0]

    def rewrite_once() -> None:
        calls[0] += 1
        if calls[0] == 2:  # between two factors: the rows mix both contents
            object.__setattr__(k, "groups", (BBStar.identity(k.size),))

    with pytest.raises(ProverError, match="rewritten in place"):
        verify_matrix(f, SparseMatrix.permutation(perm), check=rewrite_once)


def test_a_checker_that_changes_nothing_gives_the_verdict() -> None:
    perm = (2, 0, 1)
    assert verify_permutation(permutation_to_kaleidoscope(perm), perm, check=lambda: None).proved
    assert not verify_permutation(permutation_to_kaleidoscope(perm), (0, 1, 2), check=lambda: None).proved


def _factors(size: int, seed: int) -> tuple[ButterflyFactor, ...]:
    half = size // 2
    out = []
    for t, s in enumerate(bbstar_strides(size)):
        swap = [(seed >> ((t * half + m) % 20)) & 1 for m in range(half)]
        keep = tuple(1 - x for x in swap)
        out.append(ButterflyFactor(size, s, keep, tuple(swap), tuple(swap), keep))
    return tuple(out)


def test_factors_shared_by_kaleidoscopes_are_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fs = _factors(8, 0b1011_0110)
    first, second = Kaleidoscope(8, 8, (BBStar(8, fs),)), Kaleidoscope(5, 8, (BBStar(8, fs),))
    walks = count_calls(monkeypatch, fingerprint, "_factor_form")
    fingerprint.check_plain(first, "test")
    assert walks[0] == len(fs)
    fingerprint.check_plain(second, "test")
    assert walks[0] == len(fs)  # the same factors, holding the same tuples of ints: not walked again


def test_a_shared_factor_rewritten_in_place_is_walked_again_and_refused() -> None:
    fs = _factors(8, 0b0110_1001)
    first = Kaleidoscope(8, 8, (BBStar(8, fs),))
    fingerprint.check_plain(first, "test")
    d1 = fs[2].d1
    object.__setattr__(fs[2], "d1", list(d1))  # a list: no longer as the constructor leaves it
    with pytest.raises(IRError, match="butterfly factor 2: expected d1 a tuple"):
        fingerprint.check_plain(Kaleidoscope(8, 8, (BBStar(8, fs),)), "test")
    object.__setattr__(fs[2], "d1", (*d1[:2], "1", *d1[3:]))  # a str entry, all_int still True
    with pytest.raises(IRError, match="butterfly factor 2"):
        fingerprint.check_plain(Kaleidoscope(8, 8, (BBStar(8, fs),)), "test")


def test_a_factor_with_fractions_is_walked_at_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    half = 2
    f = ButterflyFactor(4, 1, (Fraction(1, 2),) * half, (0,) * half, (0,) * half, (1,) * half)
    fs = tuple(f if s == 1 and i == 1 else ButterflyFactor.identity(4, s) for i, s in enumerate(bbstar_strides(4)))
    walks = count_calls(monkeypatch, fingerprint, "_factor_form")
    fingerprint.check_plain(Kaleidoscope(4, 4, (BBStar(4, fs),)), "test")
    fingerprint.check_plain(Kaleidoscope(4, 4, (BBStar(4, fs),)), "test")
    assert walks[0] == len(fs) + 1  # the identities once, the factor of fractions at each check


def test_a_sweep_of_permutations_keeps_its_claims() -> None:
    for perm in itertools.permutations(range(4)):
        f = permutation_to_kaleidoscope(perm)
        assert verify_permutation(f, perm).proved
        other = perm[1:] + perm[:1]
        assert not verify_permutation(f, other).proved


def test_forget_reaches_every_live_memo_and_a_collected_one_leaves_the_registry() -> None:
    a, b = IdentityMemo[int](4), IdentityMemo[int](4)
    key = id(a)
    assert memo._MEMOS[key]() is a
    del a
    gc.collect()
    assert key not in memo._MEMOS or memo._MEMOS[key]() is not None  # its entry went with it (or the id was reused)
    obj = [1]
    later = IdentityMemo[int](4)
    later.put(obj, 1)
    b.put(obj, 2, key="k")
    forget(obj)
    assert later.get(obj) is None and b.get(obj, "k") is None




def test_a_target_whose_reading_changes_the_corner_is_refused() -> None:
    """``verify_matrix`` reads the caller's target after a first check of the kaleidoscope (its ``n``
    sizes the target) and checks the kaleidoscope again after: a corner changed in between is refused,
    never compared with a target read for the other one."""
    f = permutation_to_kaleidoscope((1, 0, 3, 2))
    k = f.kaleidoscope

    class Rows(list):  # type: ignore[type-arg]
        @property
        def ndim(self) -> None:  # read while the target is checked for a row order: the caller's code
            object.__setattr__(k, "n", 3)
            return None

    with pytest.raises(ShapeError, match="the corner changed from 4×4 to 3×3"):
        verify_matrix(f, Rows([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]))
