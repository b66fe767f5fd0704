"""A matrix with s nonzeros in ``(BB*)^{4⌈s/n⌉}_4`` (Dao et al. 2020, Theorem 3, as stated).

Statement built and checked here. Let ``S`` be ``rows × cols`` with ``s ≥ 1`` nonzeros,
``n = max(rows, cols)`` (``S`` is padded to ``n×n``) and ``n' = 2^⌈log2 n⌉``. Then ``S`` is the
``n×n`` leading corner of ``E ∈ (BB*)^w`` at size ``N`` with, exactly,

* ``N`` = the least power of two ``N > 2n`` with ``2⌈s/(N − 2n)⌉ ≤ 4⌈s/n⌉``; always ``N ≤ 4n'``
  (at ``N = 4n'`` the capacity ``N − 2n ≥ 2n``), so ``e = N/n ≤ 4n'/n``, i.e. ``e ≤ 4`` for every
  ``n`` that is a power of two (the only ``n`` for which the paper's ``(BB*)^w_4`` is defined) and
  ``N/n' ≤ 4`` for every ``n``;
* ``w = 2K`` with ``K = ⌈s/(N − 2n)⌉`` pieces, hence ``w ≤ 4⌈s/n⌉``;
* ``E·(x, 0) = (S·x, 0)`` (garbage-free).

For ``s = 0`` the paper's figure ``w = 0`` is wrong: ``(BB*)^0`` is the empty product ``{I}``,
whose corner is ``I_n``, so the zero matrix is one BB* element with an all-zero first factor
(``w = 1``, ``N = 2^⌈log2 max(n, 2)⌉``) and the stated bound is ``w ≤ max(1, 4⌈s/n⌉)``
(:func:`thm3_width_bound`; docs/kaleidoscope.md §2.2).

Construction (our own; the paper's Lemma I.1 and Lemma H.5 were not available, and neither is
reproduced: no piece is factored into two butterflies, and pieces are not added by a closure
lemma but accumulated in a register). Split the nonzeros, sorted by (column, row), into ``K``
pieces ``S_1 … S_K`` of at most ``cap = N − 2n`` entries. The state between pieces is the vector
``(x, y, 0, …)`` with ``x`` on positions ``0 … n−1`` and the accumulator ``y`` on ``n … 2n−1``
(``y = 0`` on input). Piece ``k`` maps ``(x, y) ↦ (x, y + S_k·x)``; the last piece maps
``(x, y) ↦ (y + S_K·x)`` onto positions ``0 … n−1`` and leaves zeros elsewhere. With ``c_j`` /
``r_i`` the nonzeros of column ``j`` / row ``i`` in the piece, one piece is exactly two BB*
elements:

1. **Copy** (the ``B*`` half of the first element, strides ``N/2 … 1``): input ``u`` (``u < 2n``)
   is copied onto a contiguous interval ``I_u`` of slots; the intervals are disjoint, non-empty
   and in the order of ``u``: ``x_j`` gets ``c_j + 1`` slots (one keeps ``x_j``; the last piece
   has no keep slot and gives ``max(c_j, 1)`` slots), ``y_i`` gets one; ``Σ|I_u| ≤ s_k + 2n ≤ N``.
   This is the interval-splitting copy network (Lee 1988): at stride ``2^b`` a copy whose
   interval straddles bit ``b`` splits in two, otherwise it moves to the half its interval lies
   in. It never blocks: two copies meeting at a stride-``2^b`` switch come from inputs
   ``u < u'`` with ``u' − u ≥ 2^b`` whose sub-intervals lie in one aligned window of ``2^{b+1}``
   slots; the ``≥ 2^b − 1`` non-empty intervals of the inputs between them lie in that window
   too, so if ``u`` reached its upper half, or ``u'`` its lower half, that half would hold
   ``≥ 2^b + 1`` slots. So ``u`` goes down, ``u'`` up, and neither splits.
2. The diagonal ``D`` (``S[i, j]`` on a copy of ``x_j`` meant for row ``i``, 1 on keep and
   accumulator slots, 0 on the unused slots of the last piece) is absorbed into the last copy
   stage.
3. **Route** (the ``B`` half of the first element, strides ``1 … N/2``, then the ``B*`` half of the
   second, strides ``N/2 … 1``): a permutation ``Π`` that takes every slot to its row slot. The
   Beneš network routes any permutation as ``B*`` then ``B`` (Theorem 2, :mod:`.permutation`);
   conjugating every stage by the bit reversal turns stride ``2^b`` into ``2^{log2 N − 1 − b}``,
   so ``β·Π_β·β`` (``Π_β`` routed for ``β∘Π∘β``) is ``Π`` as ``B`` then ``B*``.
4. **Gather** (the ``B`` half of the second element, strides ``1 … N/2``): the transpose of the
   copy network for the row intervals sums each interval ``J_v`` into output ``v`` and drops
   every other slot: for a non-last piece output ``j < n`` is ``x_j`` (one slot) and output
   ``n + i`` is ``y_i`` (``r_i + 1`` slots: the old ``y_i`` and the products for row ``i``); for the
   last piece output ``i < n`` is ``y_i``.

Chaining is free: a gather leaves the state concentrated on ``0 … 2n−1`` in input order, which is
exactly what the next copy expects. Why ``w ≤ 4⌈s/n⌉``: ``N = 4n'`` already satisfies the defining
inequality (``⌈s/(N − 2n)⌉ ≤ ⌈s/(2n)⌉ ≤ 2⌈s/n⌉``), so the least such ``N`` exists and is at most
``4n'``. ``sparse_to_kaleidoscope_thm3`` records ``w``, ``N``, ``e`` and ``N/n'`` with these bounds;
every instance is compared exactly with ``S`` (``proofs/dao_thm3_sparse.py``).
"""

from __future__ import annotations

from fractions import Fraction

from symverify.errors import IRError
from symverify.kaleidoscope.permutation import bit_reversal, complete_permutation, route_permutation
from symverify.kaleidoscope.sparse import corner_size
from symverify.kernel.ir.butterfly import (
    BBStar,
    ButterflyFactor,
    Kaleidoscope,
    bbstar_strides,
    check_size_limit,
    next_power_of_two,
    pair_index,
    pair_number,
)
from symverify.kernel.ir.scalar import Scalar
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import Entry, SparseMatrix

__all__ = ["thm3_size", "thm3_width_bound", "sparse_to_kaleidoscope_thm3"]

THEOREM = "Dao et al. 2020, Theorem 3 (as stated: (BB*)^{4⌈s/n⌉}_4; docs/kaleidoscope.md §2.2)"
THEOREM_PADDED = ("Dao et al. 2020, Theorem 3 at n no power of two ((BB*)^{4⌈s/n⌉} with N ≤ 4·2^⌈log2 n⌉, "
                  "so e ≤ 4·2^⌈log2 n⌉/n, which may exceed 4; docs/kaleidoscope.md §2.2)")
"""The claim for ``n`` that is no power of two, where the paper's ``(BB*)^w_4`` is not defined and
``e = N/n`` may exceed 4 (64/13 at ``n = 13``): :data:`THEOREM` would state an expansion the
construction does not meet."""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def thm3_width_bound(n: int, s: int) -> int:
    """The stated ``w ≤ max(1, 4⌈s/n⌉)``: the paper's ``4⌈s/n⌉`` for ``s ≥ 1``; 1 for ``s = 0``, since
    ``(BB*)^0 = {I}`` (the empty product) has the corner ``I_n``, never the zero matrix.

    >>> [thm3_width_bound(4, s) for s in (0, 1, 4, 5)]
    [1, 4, 4, 8]
    """
    return max(1, 4 * _ceil_div(s, n))


def thm3_size(n: int, s: int) -> int:
    """``N``: the least power of two ``> 2n`` with ``2⌈s/(N − 2n)⌉ ≤ 4⌈s/n⌉`` (``≤ 4·2^⌈log2 n⌉``).

    >>> [thm3_size(n, n) for n in (1, 2, 4, 5, 7, 8)]
    [4, 8, 16, 16, 32, 32]
    """
    if s == 0:
        return next_power_of_two(max(n, 2))
    N = next_power_of_two(2 * n + 1)
    while 2 * _ceil_div(s, N - 2 * n) > thm3_width_bound(n, s):
        N *= 2
    return N


def _copy_half(size: int, intervals: list[tuple[int, int]]) -> list[ButterflyFactor]:
    """The ``B*`` half (strides ``N/2 … 1``) copying input ``u`` (at position ``u``) onto the slots
    ``intervals[u] = (lo, hi)`` (inclusive); disjoint, non-empty and increasing in ``u``."""
    half = size // 2
    packets = [(u, lo, hi) for u, (lo, hi) in enumerate(intervals)]
    out = []
    for sigma in bbstar_strides(size)[: len(bbstar_strides(size)) // 2]:
        d = [[0] * half for _ in range(4)]
        taken: set[int] = set()
        moved = []
        for pos, lo, hi in packets:
            base = pos & ~sigma
            src = 1 if pos & sigma else 0
            if (lo & sigma) == (hi & sigma):
                targets = [(base | (lo & sigma), lo, hi)]
            else:  # the interval straddles bit b: split at its middle
                mid = hi & ~(sigma - 1)
                targets = [(base, lo, mid - 1), (base | sigma, mid, hi)]
            for t, a, b in targets:
                if t in taken:  # excluded by the interval argument in the module docstring
                    raise IRError(f"copy network of size {size}: two copies need slot {t} at stride {sigma}")
                taken.add(t)
                d[2 * (1 if t & sigma else 0) + src][pair_number(sigma, base)] = 1
                moved.append((t, a, b))
        packets = moved
        out.append(ButterflyFactor(size, sigma, *map(tuple, d)))
    if any(not pos == lo == hi for pos, lo, hi in packets):
        raise IRError(f"copy network of size {size}: a copy did not reach its slot")
    return out


def _gather_half(size: int, intervals: list[tuple[int, int]]) -> list[ButterflyFactor]:
    """The ``B`` half (strides ``1 … N/2``) summing the slots of ``intervals[v]`` into position ``v``."""
    return [f.transpose() for f in reversed(_copy_half(size, intervals))]


def _conjugate(f: ButterflyFactor, rev: tuple[int, ...]) -> ButterflyFactor:
    """``R·F·R`` for the bit reversal ``R``: stride ``σ`` becomes ``N/(2σ)``, same blocks."""
    size = f.size
    stride = size // (2 * f.stride)
    d: list[list[Scalar]] = [[0] * (size // 2) for _ in range(4)]
    for m in range(size // 2):
        m2 = pair_number(stride, rev[pair_index(size, f.stride, m)])
        for k, src in enumerate((f.d1, f.d2, f.d3, f.d4)):
            d[k][m2] = src[m]
    return ButterflyFactor(size, stride, *map(tuple, d))


def _route_b_then_bstar(perm: list[int]) -> tuple[list[ButterflyFactor], list[ButterflyFactor]]:
    """The permutation ``(P·x)[perm[i]] = x[i]`` as a ``B`` half followed by a ``B*`` half."""
    size = len(perm)
    rev = bit_reversal(size)
    routed = route_permutation([rev[perm[rev[q]]] for q in range(size)])
    fs = [_conjugate(f, rev) for f in routed.factors]
    k = len(fs) // 2
    return fs[:k], fs[k:]


def _piece(n: int, size: int, entries: list[Entry], last: bool) -> tuple[BBStar, BBStar]:
    """Two BB* elements mapping ``(x, y)`` to ``(x, y + P·x)`` (``last``: to ``y + P·x``)."""
    by_col: list[list[Entry]] = [[] for _ in range(n)]
    rows = [0] * n
    for e in entries:
        by_col[e[1]].append(e)
        rows[e[0]] += 1
    keep = 0 if last else 1
    coeff: list[Scalar] = [0] * size  # D on the column slots
    col_iv: list[tuple[int, int]] = []
    spare: dict[int, int] = {}  # column slot → output (the kept x_j or the old y_i)
    products: list[tuple[int, int]] = []  # (column slot, row) of every product S[i, j]·x_j
    start = 0
    for j in range(n):
        width = max(len(by_col[j]) + keep, 1)
        col_iv.append((start, start + width - 1))
        if keep:
            spare[start], coeff[start] = j, 1
        for t, (i, _, v) in enumerate(by_col[j]):
            coeff[start + keep + t] = v
            products.append((start + keep + t, i))
        start += width
    for i in range(n):
        col_iv.append((start, start))
        spare[start], coeff[start] = (n + i if keep else i), 1
        start += 1
    row_iv: list[tuple[int, int]] = [(j, j) for j in range(n)] if keep else []  # the kept x_j
    first = len(row_iv)
    for i in range(n):
        row_iv.append((first, first + rows[i]))
        first += rows[i] + 1
    if max(start, first) > size:
        raise IRError(f"sparse piece of {len(entries)} nonzeros: needs {max(start, first)} slots, the size is {size}")
    move = {slot: row_iv[v][0] for slot, v in spare.items()}
    nxt = [row_iv[(n if keep else 0) + i][0] + 1 for i in range(n)]
    for slot, i in products:
        move[slot], nxt[i] = nxt[i], nxt[i] + 1
    copy = _copy_half(size, col_iv)
    copy[-1] = copy[-1].absorb(coeff, "after")
    route_b, route_bstar = _route_b_then_bstar(complete_permutation(size, move))
    gather = _gather_half(size, row_iv)
    return BBStar(size, tuple(copy + route_b)), BBStar(size, tuple(route_bstar + gather))


def sparse_to_kaleidoscope_thm3(M: SparseMatrix) -> Factorization:
    """``M`` (padded to ``n×n``, ``n = max(rows, cols)``) in ``(BB*)^{4⌈s/n⌉}_4`` (module docstring).
    A ``0×0`` matrix is a :class:`~symverify.errors.ShapeError` (no ``n×n`` corner with ``n ≥ 1`` is it).

    >>> from symverify.kernel.kaleidoscope.apply import to_matrix
    >>> f = sparse_to_kaleidoscope_thm3(SparseMatrix.from_dense([[1, 2], [0, 3]]))
    >>> (f.w, f.N, f.e), to_matrix(f.kaleidoscope)
    ((2, 8, Fraction(4, 1)), [[1, 2], [0, 3]])
    """
    if not isinstance(M, SparseMatrix):
        raise IRError(f"sparse_to_kaleidoscope_thm3: expected a SparseMatrix, found {type(M).__name__}")
    n = corner_size(M, "sparse_to_kaleidoscope_thm3")
    s = M.nnz
    n_pad = next_power_of_two(n)
    size = thm3_size(n, s)
    check_size_limit(size, f"sparse_to_kaleidoscope_thm3 of a {M.rows}×{M.cols} matrix with {s} nonzeros: size N")
    groups: list[BBStar] = []
    if s == 0:
        zero = ButterflyFactor(size, size // 2, *([(0,) * (size // 2)] * 4))
        groups.append(BBStar(size, (zero, *BBStar.identity(size).factors[1:])))
    else:
        cap = size - 2 * n
        ents = sorted(M.entries, key=lambda e: (e[1], e[0]))
        chunks = [ents[k : k + cap] for k in range(0, s, cap)]
        for k, chunk in enumerate(chunks):
            groups.extend(_piece(n, size, chunk, k == len(chunks) - 1))
    return Factorization(
        Kaleidoscope(n, size, tuple(groups)),
        THEOREM if n == n_pad else THEOREM_PADDED,
        garbage_free=True,
        resources={"s": s, "pieces": _ceil_div(s, size - 2 * n) if s else 0, "e_pad": Fraction(size, n_pad)},
        bounds={
            "w": thm3_width_bound(n, s),
            "N": 4 * n_pad,
            "e": Fraction(4 * n_pad, n),
            "e_pad": 4,
        },
    )
