"""Dao et al. 2020, Theorem 2: every permutation is one BB* element (docs/kaleidoscope.md §2.1).

Each permutation is routed through a Beneš network (looping algorithm) and the resulting BB*
element is compared exactly with the permutation matrix (materialized first n columns, plus the
garbage-free check). Exhaustive for every length n ≤ 8 (≤ 4 in the quick tier), random up to
N = 4096 (≤ 256 in the quick tier), and the structured ones: identity, reversal, bit reversal,
cyclic shift, perfect shuffle. Stated bounds: w = 1 BB* factor at N = 2^⌈log2 max(n, 2)⌉.
"""

from __future__ import annotations

import itertools
import random

from symverify.kaleidoscope import bit_reversal, permutation_to_kaleidoscope, reversal
from symverify.kernel.provers.matrix import KaleidoscopeCheck, verify_permutation
from symverify.kernel.provers.outcome import Verdict
from symverify.scripts.instances import kaleidoscope_instance
from symverify.scripts.protocol import Instance, ProofResult, script_main, timed

TITLE = "Dao et al. 2020, Theorem 2 (every permutation is in BB*)"
COST = 5.3  # CPU seconds of the full tier, measured (orders and splits a parallel run)


def _one(name: str, perm: list[int] | tuple[int, ...]) -> Instance:
    with timed() as t:
        f = permutation_to_kaleidoscope(perm)
        check = verify_permutation(f, perm)
    return kaleidoscope_instance(name, f, check, t[0])


def _exhaustive(n: int) -> Instance:
    """All n! permutations of length n as one instance: proved when every one is proved within its
    bounds, with the resources of the first (every permutation of length n has the same size, so the
    same resources and bounds), or those of the first that fails.

    Every permutation is routed and checked (:func:`verify_permutation`); its instance row is built
    only when its claim could differ from the first's: a ``proved`` check by the same method and
    garbage-free check, with the same resources and bounds as the first (ok) row, is ok too
    (``Instance.ok`` reads only the verdict, the resources and the bounds), so for such a
    permutation only its check is kept. The row is made from every check kept (up to the first
    failure), each of whose seals ``Instance.from_report`` verifies, and names them all by one digest
    pair (``one_digest``): :func:`~symverify.scripts.protocol.combined_digest` of the checks'
    kaleidoscope digests and of their permutation digests, in the order of
    ``itertools.permutations(range(n))`` (recomputed by checking the permutations in that order and
    combining their ``digests``), so a change to any one permutation's kaleidoscope changes it."""
    with timed() as t:
        checks: list[KaleidoscopeCheck] = []
        worst: Instance | None = None
        for perm in itertools.permutations(range(n)):
            f = permutation_to_kaleidoscope(perm)
            check = verify_permutation(f, perm)
            checks.append(check)
            first = checks[0]
            if (worst is not None and check.verdict is Verdict.PROVED and check.method == first.method
                    and check.garbage_free_checked == first.garbage_free_checked
                    and dict(f.resources) == worst.resources and dict(f.bounds) == worst.bounds):
                continue
            inst = kaleidoscope_instance(f"perm {perm}", f, check)
            if worst is None or not inst.ok:
                worst = inst
            if not inst.ok:
                break
    assert worst is not None
    detail = f"{len(checks)} permutations" + ("" if worst.ok else f"; first failure {worst.name}: {worst.detail}")
    return Instance.from_report(f"all permutations of length {n}", *checks, method=worst.method, resources=worst.resources,
                                bounds=worst.bounds, seconds=t[0], detail=detail, one_digest=True)


def _structured(N: int) -> list[tuple[str, list[int]]]:
    shuffle = [(2 * i) % (N - 1) if i < N - 1 else N - 1 for i in range(N)] if N > 2 else list(range(N))
    return [
        (f"identity N={N}", list(range(N))),
        (f"reversal N={N}", list(reversal(N))),
        (f"bit reversal N={N}", list(bit_reversal(N))),
        (f"cyclic shift N={N}", [(i + 1) % N for i in range(N)]),
        (f"perfect shuffle N={N}", shuffle),
    ]


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("dao_thm2_permutations", TITLE)
    for n in range(1, 5 if quick else 9):
        result.instances.append(_exhaustive(n))
    for N in (4, 256) if quick else (16, 256, 4096):
        result.instances.extend(_one(name, perm) for name, perm in _structured(N))
    rng = random.Random(2020)
    plan = [(16, 3), (100, 2), (256, 2)] if quick else [(16, 40), (64, 20), (100, 10), (256, 10), (1000, 3), (1024, 5), (4096, 3)]
    for N, k in plan:
        for t in range(k):
            result.instances.append(_one(f"random N={N} #{t}", rng.sample(range(N), N)))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
