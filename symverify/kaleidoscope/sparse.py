"""A matrix with s nonzeros in (BB*)^5 (Dao et al. 2020, Theorem 3; docs/kaleidoscope.md §2.2).

Constructive replacement with explicit constants: an ``n×n`` matrix ``S`` (``n = max(rows,
cols)``) with ``s`` nonzeros is the ``n×n`` corner of ``E = Π₃·R·Π₂·D·C·Π₁ ∈ (BB*)^5`` at size
``N = 2^⌈log2 max(n, 2s, 2)⌉``, and ``E = diag(S, 0)`` exactly (garbage-free), so
``e = N/n ≤ max(2, 4s/n)``. Let ``c_j`` / ``r_i`` count the nonzeros of column ``j`` / row ``i``.

1. Column layout: column ``j`` owns an aligned block of ``p_j = 2^⌈log2 c_j⌉`` slots (blocks
   sorted by decreasing size and laid out from 0, so each starts at a multiple of its size;
   ``Σ p_j ≤ 2s − 1 < N``); its nonzeros take the first ``c_j`` slots. The row layout is the same
   with ``r_i``.
2. ``Π₁`` (one BB*, Theorem 2) moves ``x_j`` to the start of its column block.
3. ``C`` (↓ half identity, ↑ half strides 1 … N/2): inside every column block, the pair
   ``(p, p+σ)`` gets ``[[1, 0], [1, 0]]``, which broadcasts the block's start to the whole block;
   the diagonal ``D`` (the coefficient on each nonzero's slot, 0 elsewhere) is absorbed into the
   last stage and kills padding and stray values. This handles any fan-out (a dense column).
4. ``Π₂`` moves each nonzero from its column slot to its row slot.
5. ``R`` (↑ half): inside every row block ``[[1, 1], [0, 0]]`` sums the block into its start;
   this handles any fan-in (a dense row).
6. ``Π₃`` moves the start of row ``i``'s block to ``i``.

The paper's figure, ``(BB*)^{4⌈s/n⌉}_4``, is recorded next to it (``paper_w = max(1, 4⌈s/n⌉)``:
1 at ``s = 0``, where ``(BB*)^0 = {I}`` holds no zero matrix; ``paper_e``); a
construction meeting those constants is :func:`~symverify.kaleidoscope.sparse_dao.sparse_to_kaleidoscope_thm3`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from symverify.errors import IRError, ShapeError
from symverify.kaleidoscope.permutation import complete_permutation, route_permutation
from symverify.kernel.ir.butterfly import (
    BBStar,
    ButterflyFactor,
    Kaleidoscope,
    bbstar_strides,
    check_size_limit,
    next_power_of_two,
    pair_number,
)
from symverify.kernel.ir.scalar import Scalar
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import SparseMatrix

__all__ = ["corner_size", "sparse_size", "sparse_to_kaleidoscope"]


def corner_size(S: SparseMatrix, what: str) -> int:
    """``n = max(rows, cols)``, the corner a ``rows×cols`` matrix is padded to; a ``0×0`` matrix has no
    corner (a kaleidoscope's ``n`` is at least 1): :class:`ShapeError`."""
    n = max(S.rows, S.cols)
    if n == 0:
        raise ShapeError(f"{what}: expected a matrix with at least one row or column (a kaleidoscope's corner is n×n "
                         "with n ≥ 1), found a 0×0 SparseMatrix")
    return n


def sparse_size(n: int, s: int) -> int:
    """``N = 2^⌈log2 max(n, 2s, 2)⌉``."""
    return next_power_of_two(max(n, 2 * s, 2))


def _layout(counts: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Aligned dyadic blocks: index → (start, block size) for every nonzero count."""
    sizes = sorted(((next_power_of_two(c), k) for k, c in enumerate(counts) if c), key=lambda t: (-t[0], t[1]))
    out, start = {}, 0
    for p, k in sizes:
        out[k] = (start, p)
        start += p
    return out


def _tree_group(size: int, blocks: Sequence[tuple[int, int]], switch: tuple[int, int, int, int]) -> list[ButterflyFactor]:
    """A BB* group whose ↓ half is identity and whose ↑ stride-σ stage puts the 2×2 ``switch``
    ``(d1, d2, d3, d4)`` on every pair ``(p, p+σ)`` inside a block ``[a, a+P)`` with ``P > σ``
    (all other pairs identity)."""
    half = size // 2
    strides = bbstar_strides(size)
    out = [ButterflyFactor.identity(size, s) for s in strides[: len(strides) // 2]]
    for sigma in strides[len(strides) // 2 :]:
        d = [[1] * half, [0] * half, [0] * half, [1] * half]
        for a, p in blocks:
            if p <= sigma:
                continue
            for q in range(a, a + p):
                if not q & sigma:
                    m = pair_number(sigma, q)
                    for k in range(4):
                        d[k][m] = switch[k]
        out.append(ButterflyFactor(size, sigma, *map(tuple, d)))
    return out


def sparse_to_kaleidoscope(S: SparseMatrix) -> Factorization:
    """``S`` (padded to ``n×n``, ``n = max(rows, cols)``) as ``(BB*)^5`` (docs/kaleidoscope.md §2.2).

    A ``0×0`` matrix is a :class:`ShapeError`: a kaleidoscope's corner is ``n×n`` with ``n ≥ 1``, and the
    ``1×1`` zero it would be read as is no matrix of that shape. A ``0×c`` or ``r×0`` matrix is the zero
    ``c×c`` or ``r×r`` corner, padded as every non-square matrix is.

    >>> from symverify.kernel.kaleidoscope.apply import to_matrix
    >>> f = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2], [0, 3]]))
    >>> (f.w, f.N), to_matrix(f.kaleidoscope)
    ((5, 8), [[1, 2], [0, 3]])
    """
    if not isinstance(S, SparseMatrix):
        raise IRError(f"sparse_to_kaleidoscope: expected a SparseMatrix, found {type(S).__name__}")
    n = corner_size(S, "sparse_to_kaleidoscope")
    s = S.nnz
    N = sparse_size(n, s)
    check_size_limit(N, f"sparse_to_kaleidoscope of a {S.rows}×{S.cols} matrix with {s} nonzeros: size N")
    cols, rows = _layout(S.col_counts()), _layout(S.row_counts())
    col_next = {j: a for j, (a, _) in cols.items()}
    row_next = {i: b for i, (b, _) in rows.items()}
    coeff: list[Scalar] = [0] * N  # D: the coefficient on each nonzero's column slot, 0 elsewhere
    row_of: dict[int, int] = {}  # column slot → row of its nonzero
    for i, j, v in sorted(S.entries, key=lambda e: (e[1], e[0])):
        a, col_next[j] = col_next[j], col_next[j] + 1
        coeff[a], row_of[a] = v, i
    move: dict[int, int] = {}  # Π₂: column slot → row slot
    for a in sorted(row_of, key=lambda a: (row_of[a], a)):
        i = row_of[a]
        move[a], row_next[i] = row_next[i], row_next[i] + 1

    pi1 = route_permutation(complete_permutation(N, {j: a for j, (a, _) in cols.items()}))
    bcast = _tree_group(N, list(cols.values()), (1, 0, 1, 0))
    bcast[-1] = bcast[-1].absorb(coeff, "after")
    pi2 = route_permutation(complete_permutation(N, move))
    reduce = _tree_group(N, list(rows.values()), (1, 1, 0, 0))
    pi3 = route_permutation(complete_permutation(N, {b: i for i, (b, _) in rows.items()}))
    groups = (pi1, BBStar(N, tuple(bcast)), pi2, BBStar(N, tuple(reduce)), pi3)
    paper_w = max(1, 4 * -(-s // n))  # (BB*)^0 = {I}: the zero matrix needs one BB* (docs/kaleidoscope.md §2.2)
    return Factorization(
        Kaleidoscope(n, N, groups),
        "Dao et al. 2020, Theorem 3 (constructive (BB*)^5 form, docs/kaleidoscope.md §2.2)",
        garbage_free=True,
        resources={"s": s, "paper_w": paper_w, "paper_e": 4},
        bounds={"w": 5, "N": sparse_size(n, s), "e": max(Fraction(2), Fraction(4 * s, n))},
    )
