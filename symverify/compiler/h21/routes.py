"""Routes for the H.21 compiler: a linear stage's matrix on positions as butterfly factors.

:func:`stage_factors` chooses the cheapest route (identity, diagonal, one butterfly factor, a
scaled permutation or the direct broadcast, the selection route, the general sparse route);
:func:`stage_route` is the same routes memoised by their inputs (the
stage, its positions, the size), so that planning and emission never route a stage twice;
:func:`_stage_layers` counts the layers a route becomes, from its shape (:func:`_stage_shape`:
a selection route is counted without building its factors), and :func:`_stage_need` the size a
stage needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from symverify.compiler.butterfly_to_baseconv import complete_permutation, diagonal_factor, simplify_factors
from symverify.compiler.h21.stages import StagePlan
from symverify.errors import CompileError
from symverify.kaleidoscope.simplify import is_diagonal
from symverify.kaleidoscope.structured import single_factor
from symverify.kernel.ir.butterfly import ButterflyFactor, bbstar_strides, next_power_of_two
from symverify.kernel.ir.layered import LinearStage
from symverify.kernel.ir.scalar import Scalar, is_zero

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["Route", "StageRoute"]


Route = Literal["identity", "diagonal", "butterfly", "permutation", "selection", "sparse"]


def stage_matrix(p: StagePlan) -> tuple[dict[tuple[int, int], Scalar], dict[int, Scalar]]:
    """The entries ``{(out position, in position): coeff}`` and the offsets of a linear stage."""
    st = p.stage
    assert isinstance(st, LinearStage)
    ents: dict[tuple[int, int], Scalar] = {}
    for r, row in enumerate(st.rows):
        for slot, co in row:
            key = (p.out_pos[r], p.in_pos[slot])
            ents[key] = ents.get(key, 0) + co
    ents = {k: v for k, v in ents.items() if not is_zero(v)}
    off = {p.out_pos[r]: o for r, o in enumerate(st.offset) if not is_zero(o)}
    return ents, off


def stage_factors(ents: Mapping[tuple[int, int], Scalar], in_pos: Sequence[int], out_pos: Sequence[int],
                  size: int, room: bool = False) -> tuple[Route, int, list[ButterflyFactor]]:
    """The cheapest butterfly route for a stage matrix: ``(route, BB* count, factors at size)``;
    with ``room`` a selection route may use the room up to ``size`` (:func:`selection_route`)."""
    from symverify.kaleidoscope.permutation import route_permutation
    from symverify.kaleidoscope.selection import direct_route, is_selection, selection_route, selection_size
    from symverify.kaleidoscope.sparse import sparse_to_kaleidoscope
    from symverify.kernel.kaleidoscope.matrix import SparseMatrix

    shape, one = _shape(ents, size)
    if shape == "diagonal":
        diag: list[Scalar] = [0] * size
        for (i, _), v in ents.items():
            diag[i] = v
        if set(in_pos) == set(out_pos) and all(type(diag[q]) is int and diag[q] == 1 for q in out_pos):
            return "identity", 0, []
        return "diagonal", 0, [diagonal_factor(diag)]
    if one is not None:
        return "butterfly", 1, [one]
    dim = max([q + 1 for q in (*in_pos, *out_pos)] + [2])  # every live position, or it would pass through
    if shape == "permutation":
        sub = next_power_of_two(dim)
        perm = complete_permutation(sub, {j: i for i, j in ents})
        scale_after: list[Scalar] = [0] * sub
        for (i, _), v in ents.items():
            scale_after[i] = v
        fs = list(route_permutation(perm).factors)
        fs[-1] = fs[-1].absorb(scale_after, "after")
        direct = direct_route(ents, in_pos, out_pos, size)  # a permutation is a selection too
        if direct is not None and direct.count < len(simplify_factors(fs)):
            return "selection", 0, list(direct.factors)
        return "permutation", 1, [f.lift(size) for f in fs]
    if is_selection(ents) and selection_size(ents, in_pos, out_pos) <= size:
        route = selection_route(ents, in_pos, out_pos, size, room=room)
        return "selection", 0, list(route.factors)
    K = sparse_to_kaleidoscope(SparseMatrix.from_dict(dim, dim, ents)).kaleidoscope
    if K.size > size:
        raise CompileError(f"internal: a stage needs kaleidoscope size {K.size} > N_k = {size}")
    return "sparse", K.width, list(K.lift(size).factor_list().factors)


def _shape(ents: Mapping[tuple[int, int], Scalar], size: int) -> tuple[str, ButterflyFactor | None]:
    """Which route a stage matrix takes: ``diagonal``, ``butterfly`` (with its one factor at
    ``size``), ``permutation`` (one entry per row and per column) or ``sparse``."""
    if all(i == j for i, j in ents):
        return "diagonal", None
    one = single_factor(ents, size)
    if one is not None:
        return "butterfly", one
    rows, cols = [i for i, _ in ents], [j for _, j in ents]
    if len(set(rows)) == len(rows) and len(set(cols)) == len(cols):
        return "permutation", None
    return "sparse", None


def _sparse_need(ents: Mapping[tuple[int, int], Scalar], in_pos: Sequence[int], out_pos: Sequence[int], extent: int) -> int:
    """The size a stage's route needs beyond the positions: the selection route's size for rows of
    ≤ 2 entries (:func:`~symverify.kaleidoscope.selection.selection_size`), ``2·nnz`` for the
    general sparse route (Theorem 3's expansion), nothing for a diagonal, one butterfly factor or
    a scaled permutation."""
    from symverify.kaleidoscope.selection import is_selection, selection_size

    if _shape(ents, next_power_of_two(extent))[0] != "sparse":
        return 0
    return selection_size(ents, in_pos, out_pos) if is_selection(ents) else 2 * len(ents)


@dataclass(frozen=True)
class StageRoute:
    """The route chosen for a linear stage at a size: its kind, its BB* count (:func:`stage_factors`)
    and its simplified factors (what emission turns into Lemma H.16 gadgets)."""

    route: Route
    bbstar: int
    factors: tuple[ButterflyFactor, ...]

    @property
    def groups(self) -> int:
        """The BB* groups the emitted chain fits (:func:`bbstar_groups`)."""
        return bbstar_groups(self.factors)


def bbstar_groups(factors: Sequence[ButterflyFactor]) -> int:
    """How many consecutive BB* elements (strides ``N/2 … 1, 1 … N/2`` in application order,
    :mod:`symverify.kernel.ir.butterfly`) the chain ``factors`` fits, each factor taking the next free
    slot of its stride (the placement of
    :func:`~symverify.kaleidoscope.structured.pack_bbstars`, which is optimal among
    order-preserving ones), counted without building the groups. A diagonal factor takes no slot:
    it multiplies into a neighbouring factor (docs/kaleidoscope.md §1.2); a chain of diagonals
    only is 0 groups.

    >>> from symverify.kernel.ir.butterfly import ButterflyFactor as F
    >>> def swap(s): return F(8, s, (0,) * 4, (1,) * 4, (1,) * 4, (0,) * 4)
    >>> bbstar_groups([swap(s) for s in (4, 2, 1, 1, 2, 4)]), bbstar_groups([swap(s) for s in (1, 2, 1)])
    (1, 2)
    >>> bbstar_groups([F.identity(8, 1)])
    0
    """
    groups, slot = 0, 0
    pattern: tuple[int, ...] = ()
    for f in factors:
        if is_diagonal(f):
            continue
        if not pattern:
            pattern = bbstar_strides(f.size)
            slot = len(pattern)
        nxt = next((k for k in range(slot, len(pattern)) if pattern[k] == f.stride), None)
        if nxt is None:
            groups += 1
            nxt = pattern.index(f.stride)
        slot = nxt + 1
    return groups


def _types(st: LinearStage) -> tuple[type, ...]:
    """The types of a stage's coefficients: part of a route's memo key, since ``1`` and
    ``Fraction(1)`` are equal but only the former makes an identity stage."""
    return tuple(type(co) for row in st.rows for _, co in row) + tuple(type(o) for o in st.offset)


@lru_cache(maxsize=2048)
def _routed(st: LinearStage, in_pos: tuple[int, ...], out_pos: tuple[int, ...], size: int | None,
            types: tuple[type, ...], room: bool = False) -> StageRoute:
    """The memoised route of ``st`` from ``in_pos`` to ``out_pos`` at ``size`` (None: the stage's own
    size, the power of two above its positions and its route's need); ``types`` only keys the memo;
    ``room``: see :func:`stage_route`."""
    ents, _ = stage_matrix(StagePlan(st, in_pos, out_pos))
    if size is None:
        top = max([q + 1 for q in (*in_pos, *out_pos)] + [2])
        size = next_power_of_two(max(top, _sparse_need(ents, in_pos, out_pos, top)))
    route, w, fs = stage_factors(ents, in_pos, out_pos, size, room)
    return StageRoute(route, w, tuple(simplify_factors(fs)))


def stage_route(p: StagePlan, size: int, room: bool = False) -> StageRoute:
    """The route of the linear stage ``p`` at ``size`` (the layout's ``N_k``), memoised by its inputs.
    With ``room`` a selection route that needs an expensive copy network at its own size may be
    routed at up to ``size`` in fewer factors (:func:`~symverify.kaleidoscope.selection.selection_route`).
    Each call hands out its own :class:`StageRoute` (of the memo's fields: a route's kind, count and
    tuple of frozen factors), so one set on it past the frozen dataclass is no later caller's."""
    assert isinstance(p.stage, LinearStage)
    r = _routed(p.stage, tuple(p.in_pos), tuple(p.out_pos), size, _types(p.stage), room)
    return StageRoute(r.route, r.bbstar, r.factors)


def expensive_copy(p: StagePlan) -> bool:
    """Whether the linear stage ``p`` routes, at its own size, through a selection route whose copy
    network is an expensive one (:data:`~symverify.kaleidoscope.selection.EXPENSIVE_COPIES`)."""
    from symverify.kaleidoscope.selection import EXPENSIVE_COPIES, is_selection, selection_size, selection_strategy

    ents, _ = stage_matrix(p)
    top = max([q + 1 for q in (*p.in_pos, *p.out_pos)] + [2])
    size = next_power_of_two(max(top, _sparse_need(ents, p.in_pos, p.out_pos, top)))
    if _shape(ents, size) != ("sparse", None) or not is_selection(ents) or selection_size(ents, p.in_pos, p.out_pos) > size:
        return False
    return selection_strategy(ents, p.in_pos, p.out_pos).startswith(EXPENSIVE_COPIES)


def route_layers(r: StageRoute) -> int:
    """The layers a route's factors become (1 per diagonal factor, 2 per other; Lemma H.16)."""
    return sum(1 if is_diagonal(f) else 2 for f in r.factors)


@lru_cache(maxsize=8192)
def _shaped(st: LinearStage, in_pos: tuple[int, ...], out_pos: tuple[int, ...], types: tuple[type, ...]) -> tuple[tuple[int, bool], ...]:
    """``(stride, diagonal)`` of every simplified factor of the route of ``st`` at its own size
    (:func:`_routed` with ``size=None``), memoised by the same inputs. A selection route, what
    most stages take, is counted without building a factor
    (:func:`~symverify.kaleidoscope.selection.selection_shape`: exact, the same choice among the
    same candidates); every other route is built (:func:`_routed`)."""
    from symverify.kaleidoscope.selection import is_selection, selection_shape, selection_size

    ents, _ = stage_matrix(StagePlan(st, in_pos, out_pos))
    top = max([q + 1 for q in (*in_pos, *out_pos)] + [2])
    size = next_power_of_two(max(top, _sparse_need(ents, in_pos, out_pos, top)))
    kind, one = _shape(ents, size)
    if kind == "sparse" and one is None and is_selection(ents) and selection_size(ents, in_pos, out_pos) <= size:
        return selection_shape(ents, in_pos, out_pos)  # the branch stage_factors takes
    return tuple((f.stride, is_diagonal(f)) for f in _routed(st, in_pos, out_pos, None, types).factors)


def _stage_shape(p: StagePlan) -> tuple[tuple[int, bool], ...]:
    """``(stride, diagonal)`` of every factor of :func:`_stage_route` (memoised; see :func:`_shaped`)."""
    assert isinstance(p.stage, LinearStage)
    return _shaped(p.stage, tuple(p.in_pos), tuple(p.out_pos), _types(p.stage))


def _stage_cost(p: StagePlan) -> int:
    """The number of butterfly factors the route of the linear stage ``p`` takes at its own size."""
    return len(_stage_shape(p))


def _stage_layers(p: StagePlan, tw: int, fused: bool) -> int:
    """The layers the linear stage ``p`` becomes (:mod:`.butterfly_to_baseconv`): 1 per diagonal
    factor, 2 per other factor, and the closing sum when the stage is not ``fused`` into a
    multiplicative stage and ends pending (a channel factor, stride ``< tw``) or adds constants.
    Counted from the route's shape (:func:`_stage_shape`), so the routes the exact planner only
    weighs are never built."""
    assert isinstance(p.stage, LinearStage)
    axes = ["diagonal" if diag else "sequence" if stride >= tw else "channel" for stride, diag in _stage_shape(p)]  # axis_of
    layers = sum(1 if a == "diagonal" else 2 for a in axes)
    if not fused and ((axes and axes[-1] == "channel") or any(not is_zero(v) for v in p.stage.offset)):
        layers += 1
    return layers


def _stage_need(p: StagePlan) -> int:
    """The size the linear stage ``p`` needs: the power of two above its positions, its route's
    size (:func:`_sparse_need`) and ``p.k_rows`` (twice the shift of a multiplicative stage after it)."""
    top = max([q + 1 for q in (*p.in_pos, *p.out_pos)] + [2])
    return max(next_power_of_two(top), _sparse_need(stage_matrix(p)[0], p.in_pos, p.out_pos, top), p.k_rows)
