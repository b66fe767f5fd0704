"""Structured linear maps: one butterfly factor per level, packed into as few BB* as possible.

A level of a linear circuit is often *one* butterfly factor once its outputs are placed well: every
row reads at most the two positions ``{q, q ⊕ s}`` of one pair of stride ``s`` (a Walsh–Hadamard
level, a single mixing of pairs). :func:`butterfly_positions` finds such a placement and
:func:`single_factor` reads the factor off the level's matrix. :func:`structured_factorization`
applies this level by level (Theorem H.19's stages, each exactly one factor instead of ``(BB*)^5``),
routes the outputs to their read-out positions with one Beneš permutation (Dao et al. Theorem 2)
when they are not already there, and packs the factors, in application order, into the stride slots
``N/2 … 1, 1 … N/2`` of consecutive BB* elements (:func:`pack_bbstars`): a Walsh–Hadamard
transform on N points is one BB*, its ``log2 N`` factors in the ``B`` half. The compiler
(:mod:`symverify.compiler.h21`) uses the same two functions for its linear stages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symverify.errors import IRError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.butterfly import (
    BBStar,
    ButterflyFactor,
    Kaleidoscope,
    bbstar_strides,
    next_power_of_two,
    pair_number,
)
from symverify.kernel.ir.layered import LinearStage, Stage
from symverify.kernel.ir.scalar import Scalar, is_zero

__all__ = ["butterfly_positions", "single_factor", "pack_bbstars", "structured_stages", "structured_kaleidoscope"]


def butterfly_positions(st: Stage, in_pos: Sequence[int]) -> tuple[int, ...] | None:
    """Output positions that make the linear stage ``st`` one butterfly factor, or None.

    For a stride ``s``, a row at position ``q`` may read only positions ``q`` and ``q ⊕ s``; so a
    row reading ``{a, a ⊕ s}`` or ``{a}`` goes to ``a`` or ``a ⊕ s``, and each pair holds at most two
    rows (a row reading nothing takes any free position). The smallest stride that works is used;
    positions stay below ``2^⌈log2 (max input position + 1)⌉``.
    """
    if not isinstance(st, LinearStage) or not st.rows:
        return None
    bound = next_power_of_two(max([*in_pos, len(st.outputs) - 1, 1]) + 1)
    reads = [sorted({in_pos[slot] for slot, co in row if not is_zero(co)}) for row in st.rows]
    s = 1
    while 2 * s <= bound:
        taken: dict[int, int] = {}
        ok = True
        for r, rd in enumerate(reads):
            if not rd:
                continue
            a = rd[0]
            if len(rd) > 2 or (len(rd) == 2 and rd[1] != a ^ s):
                ok = False
                break
            choices = [a, a ^ s] if len(rd) == 1 else [min(rd), max(rd)]
            q = next((q for q in choices if q not in taken), None)
            if q is None:
                ok = False
                break
            taken[q] = r
        if ok:
            free = (q for q in range(bound + len(reads)) if q not in taken)
            out = {r: q for q, r in taken.items()}
            for r, rd in enumerate(reads):
                if not rd:
                    out[r] = next(free)
            return tuple(out[r] for r in range(len(reads)))
        s *= 2
    return None


def _size(size: object, where: str) -> int:
    """``size`` as a butterfly size: an int (not a bool) that is a power of two ≥ 2 (else :class:`IRError`)."""
    if type(size) is not int or size < 2 or size & (size - 1):
        raise IRError(f"{where}: size: expected a power of two ≥ 2, found {type(size).__name__} {safe_repr(size, 40)}")
    return size


def _count(v: object, name: str, where: str) -> int:
    """``v`` as a number of positions: an int (not a bool) in ``[0, MAX_INPUTS]`` (else :class:`IRError`,
    or :class:`~symverify.errors.LimitError` past the limit)."""
    from symverify.ir import limits

    if type(v) is not int or v < 0:
        raise IRError(f"{where}: {name}: expected a non-negative int, found {type(v).__name__} {safe_repr(v, 40)}")
    limits.check(v, "MAX_INPUTS", f"{where}: {name}")
    return v


def single_factor(ents: Mapping[tuple[int, int], Scalar], size: int) -> ButterflyFactor | None:
    """The stage matrix as one butterfly factor of size ``size``, when it is one: every entry
    ``(i, j)`` has ``i = j`` or ``|i − j| = s`` for one stride ``s`` with ``i`` and ``j`` in the same
    pair ``(p, p + s)`` (``p`` with bit ``s`` clear). Rows without entries are zero rows. Such a
    stage is exactly one Lemma H.16 gadget (a Walsh–Hadamard level, a single mixing of pairs).
    ``ents`` maps ``(row, column)`` pairs of ints in ``[0, size)`` to entries; anything else is an
    :class:`IRError` naming what was found."""
    size = _size(size, "single_factor")
    if not isinstance(ents, Mapping):
        raise IRError(f"single_factor: ents: expected a mapping of (row, column) to entries, found {type(ents).__name__}")
    for key in ents:
        if not (type(key) is tuple and len(key) == 2 and all(type(k) is int and 0 <= k < size for k in key)):
            raise IRError(f"single_factor: ents: expected (row, column) keys of ints in [0, {size}), found {safe_repr(key, 40)}")
    strides = {abs(i - j) for i, j in ents if i != j}
    if len(strides) != 1:
        return None
    (s,) = strides
    if not (s & (s - 1) == 0 and 2 * s <= size):
        return None
    half = size // 2
    d1: list[Scalar] = [0] * half
    d2: list[Scalar] = [0] * half
    d3: list[Scalar] = [0] * half
    d4: list[Scalar] = [0] * half
    for (i, j), v in ents.items():
        if i != j and i ^ j != s:  # partners differ exactly in bit s
            return None
        m = pair_number(s, i & ~s)
        if i == j:
            (d1 if not i & s else d4)[m] = v
        elif not i & s:
            d2[m] = v  # row p reads column p + s
        else:
            d3[m] = v  # row p + s reads column p
    return ButterflyFactor(size, s, tuple(d1), tuple(d2), tuple(d3), tuple(d4))


def pack_bbstars(factors: Sequence[ButterflyFactor], size: int) -> list[BBStar]:
    """``factors`` (applied first to last, all of ``size``) as consecutive BB* elements: each
    factor takes the next free slot of its stride in the pattern ``N/2 … 1, 1 … N/2``, a new
    element starting when no later slot of the current one has that stride; empty slots are
    identities. The product is unchanged. Anything but a sequence of factors of ``size`` (a power of
    two) is an :class:`IRError` naming the entry."""
    size = _size(size, "pack_bbstars")
    if not isinstance(factors, (list, tuple)):
        raise IRError(f"pack_bbstars: factors: expected a list of ButterflyFactor, found {type(factors).__name__}")
    for k, f in enumerate(factors):
        if not isinstance(f, ButterflyFactor) or f.size != size:
            found = f"a factor of size {f.size}" if isinstance(f, ButterflyFactor) else type(f).__name__
            raise IRError(f"pack_bbstars: factors[{k}]: expected a ButterflyFactor of size {size}, found {found}")
    pattern = bbstar_strides(size)
    groups: list[list[ButterflyFactor | None]] = []
    slot = len(pattern)  # the current group is full
    for f in factors:
        nxt = next((k for k in range(slot, len(pattern)) if pattern[k] == f.stride), None)
        if nxt is None:
            groups.append([None] * len(pattern))
            nxt = pattern.index(f.stride)
        groups[-1][nxt] = f
        slot = nxt + 1
    return [BBStar(size, tuple(f if f is not None else ButterflyFactor.identity(size, pattern[k]) for k, f in enumerate(g)))
            for g in groups]


def structured_stages(stages: Sequence[Stage], n: int, n_out: int) -> tuple[list[ButterflyFactor], int] | None:
    """One factor per stage (and a final Beneš routing of the outputs to ``0 … n_out − 1``) at a
    common size, or None when some stage is not one butterfly factor under any placement. A stage
    whose entries all cancel is the zero map: a factor of zero blocks, never the identity. ``stages``
    is a list of stages and ``n``, ``n_out`` non-negative ints (else :class:`IRError`)."""
    from symverify.kaleidoscope.permutation import route_permutation

    if not isinstance(stages, (list, tuple)):
        raise IRError(f"structured_stages: stages: expected a list of stages, found {type(stages).__name__}")
    n, n_out = _count(n, "n", "structured_stages"), _count(n_out, "n_out", "structured_stages")

    pos: tuple[int, ...] = tuple(range(n))
    placed: list[tuple[dict[tuple[int, int], Scalar], tuple[int, ...]]] = []
    for st in stages:
        if not isinstance(st, LinearStage) or any(not is_zero(o) for o in st.offset):
            return None
        out = butterfly_positions(st, pos)
        if out is None:
            return None
        ents: dict[tuple[int, int], Scalar] = {}
        for r, row in enumerate(st.rows):
            for slot, co in row:
                key = (out[r], pos[slot])
                ents[key] = ents.get(key, 0) + co
        placed.append(({k: v for k, v in ents.items() if not is_zero(v)}, out))
        pos = out
    extent = max([n, n_out, 2, *(q + 1 for _, out in placed for q in out)])
    size = next_power_of_two(extent)
    factors = []
    for ents, _ in placed:
        if not ents:  # every entry cancelled: the level is the zero map, not the identity
            factors.append(ButterflyFactor(size, 1, *([(0,) * (size // 2)] * 4)))
            continue
        f = single_factor(ents, size)
        if f is None:
            return None
        factors.append(f)
    if tuple(pos) != tuple(range(len(pos))):
        perm = [-1] * size
        for k, q in enumerate(pos):
            perm[q] = k
        free = iter(sorted(set(range(size)) - set(perm)))
        perm = [p if p >= 0 else next(free) for p in perm]
        factors.extend(route_permutation(perm).factors)
    return factors, size


def structured_kaleidoscope(stages: Sequence[Stage], n: int, n_out: int) -> Kaleidoscope | None:
    """:func:`structured_stages` packed into a kaleidoscope with corner ``n`` (None as there)."""
    got = structured_stages(stages, n, n_out)
    if got is None:
        return None
    factors, size = got
    groups = pack_bbstars(factors, size) or [BBStar.identity(size)]
    return Kaleidoscope(n, size, tuple(groups))

