"""The per-process reuse inside ``instantiate`` and ``stats``: a set placement checked by C-level
passes refuses exactly what the member-by-member check refuses, cut points kept per (expression,
parameter values) never leak from one size to another, and a circuit's measures are kept per
circuit object."""

from __future__ import annotations

import pytest

from symverify.kernel.ir.analysis import _STATS, stats
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.parametric import concrete
from symverify.kernel.parametric.expr import VIf, ite
from symverify.parametric import Gadget, Param, ParametricError, PLayer, inp, instantiate, lt, pred, tap, var, where

i, q, N = var("i"), var("q"), var("N")
# b1 is 1 on the placement's cells and on the rows below N − 2 (a cut point that moves with N), else 2
_PG = Gadget("g", (Param("N", 2, 64),), N, 2, (PLayer(b1=where(pred("V", i, q) | lt(i, N - 2), 1, 2), h=(tap(0),)),),
             inp(i, q))


class _Int(int):
    pass


class _Pair(tuple):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize("member", [(_Int(1), 0), _Pair((1, 0)), (1, True), (0, 2**64), (1,)],
                         ids=["int-subclass", "tuple-subclass", "bool", "2^64", "short"])
def test_a_set_placement_refuses_what_the_member_check_refuses(member: object) -> None:
    cells = {(0, 0), (2, 1), member}
    with pytest.raises(ParametricError, match=r"placement V: expected tuples of 2 ints in \[0, 2\^64\).*found"):
        instantiate(_PG, {"N": 4}, placement={"V": cells})


def test_a_set_placement_at_the_largest_index_is_read() -> None:
    (layer,) = instantiate(_PG, {"N": 4}, placement={"V": {(3, 1), (2**64 - 1, 0)}})
    assert [layer.b1.get(r, 1) for r in range(4)] == [1, 1, 2, 1]  # rows 0, 1 below N − 2; row 3 placed


# b1 is 1 on the rows below N − 2, else 2: its cut points {N − 2, N − 1} move with N
_CG = Gadget("c", (Param("N", 2, 64),), N, 2, (PLayer(b1=where(lt(i, N - 2), 1, 2), h=(tap(0),)),), inp(i, q))


def test_cut_points_are_kept_per_size() -> None:
    """The same definition at alternating sizes gives the layers of a fresh evaluation at each
    (a cut point of one size read at another paints a whole block with one row's value)."""
    fresh = {}
    for n in (4, 40, 6):
        concrete._CUTS.clear()
        fresh[n] = instantiate(_CG, {"N": n})
    for n in (4, 40, 6, 40, 4):
        got = instantiate(_CG, {"N": n})
        assert got == fresh[n]
        assert [got[0].b1.get(r, c) for r in range(n) for c in range(2)] == [1 if r < n - 2 else 2 for r in range(n) for _ in range(2)]


def _counting_cuts(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    real = concrete._cuts_v

    def counted(v, var_, env):  # type: ignore[no-untyped-def]
        if isinstance(v, VIf):  # the biases' own expressions, not the recursion into their parts
            calls.append(v)
        return real(v, var_, env)

    monkeypatch.setattr(concrete, "_cuts_v", counted)
    return calls


def test_cut_points_of_a_predicate_condition_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A predicate used as a condition is never read by the cut points (they are unknown there,
    whatever the placement): they are computed once per size and variable, and every placement
    still gives the layers of a fresh evaluation."""
    concrete._CUTS.clear()
    concrete._PRED_FREE.clear()
    calls = _counting_cuts(monkeypatch)
    placements = [{(0, 0)}, {(3, 1), (1, 0)}, set()]
    got = [instantiate(_PG, {"N": 4}, placement={"V": p}) for p in placements]
    assert len(calls) == 2  # b1's cut points in i and q, once; b2 (a number) has none to find
    for p, layers in zip(placements, got):
        want = [1 if (r, c) in p or r < 2 else 2 for r in range(4) for c in range(2)]
        assert [layers[0].b1.get(r, c) for r in range(4) for c in range(2)] == want


# b1 is 1 on the rows below ite(V(0, 0), 1, 3), else 2: the cut point is read off the placement
_RG = Gadget("r", (Param("N", 4, 64),), N, 2, (PLayer(b1=where(lt(i, ite(pred("V", 0, 0), 1, 3)), 1, 2), h=(tap(0),)),),
             inp(i, q))


def test_cut_points_reading_a_predicate_are_computed_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A comparison whose operand reads a predicate has cut points the placement decides: they
    are computed at every instantiation, never taken from another placement's."""
    concrete._CUTS.clear()
    concrete._PRED_FREE.clear()
    calls = _counting_cuts(monkeypatch)
    for placed, cut in (({(0, 0)}, 1), (set(), 3), ({(0, 0)}, 1)):
        (layer,) = instantiate(_RG, {"N": 4}, placement={"V": placed})
        assert [layer.b1.get(r, 0) for r in range(4)] == [1 if r < cut else 2 for r in range(4)]
    assert len(calls) == 6


def test_stats_are_kept_per_circuit_object() -> None:
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3,))
    _STATS.clear()
    s = stats(c)
    assert (s.size, s.depth, s.degree_bound) == (2, 2, 2)
    assert stats(c) == s and stats(c) is not s and len(_STATS) == 1  # kept once, each caller its own copy
    other = Circuit(1, 2, (Gate.mul(0, 1), Gate.mul(2, 0)), (3,))  # equal shape, another circuit
    assert stats(other).degree_bound == 3 and stats(c).degree_bound == 2


def test_factor_layers_read_a_support_of_any_integers_alike() -> None:
    """The supported cells are read off the support; a support of numpy integers selects the same
    positions as the plain ints (it is tested position by position)."""
    import numpy as np

    from symverify.compiler.butterfly_to_baseconv import factor_layers
    from symverify.compiler.layout import Layout
    from symverify.kernel.ir.butterfly import ButterflyFactor

    lay = Layout(1, 2, 16)
    for stride in (1, 4):
        f = ButterflyFactor(16, stride, (1,) * 8, (2,) * 8, (3,) * 8, (4,) * 8)
        plain = factor_layers(lay, f, support={0, 1, 5, 9, 99})
        assert factor_layers(lay, f, support={np.int64(p) for p in (0, 1, 5, 9, 99)}) == plain
        assert plain != factor_layers(lay, f, support=None)


def test_shared_switch_factors_route_every_permutation() -> None:
    """Switch factors are shared between the networks of small permutations: each network still
    moves ``x[i]`` to ``perm[i]``, with the factors it would build alone."""
    import itertools
    import random

    from symverify.kaleidoscope.permutation import _switch, benes_swaps, route_permutation
    from symverify.kernel.kaleidoscope.apply import apply

    perms = [list(p) for p in itertools.permutations(range(4))]
    rng = random.Random(7)
    perms += [rng.sample(range(n), n) for n in (8, 8, 64, 128) for _ in range(3)]
    for perm in perms:
        bb = route_permutation(perm)
        assert list(bb.factors) == [_switch(len(perm), h, mask) for h, mask in benes_swaps(perm)]
        out = apply(bb, list(range(len(perm))))
        assert all(out[perm[i]] == i for i in range(len(perm)))


def test_a_cut_point_that_reads_a_predicate_follows_the_placement() -> None:
    """``where(i = ite(P(0, 0), 1, 2), 5, 0)`` is 5 at row 1 or at row 2, as ``P(0, 0)`` decides: its
    cut points depend on the placement, so they are not kept from one instance to the next (kept, the
    second instance painted 5 on rows 2 and 3, the block of the first instance's cuts)."""
    from symverify.parametric import eq, ite

    g = Gadget("g", (Param("N", 4, 4),), N, 1, (PLayer(b1=where(eq(i, ite(pred("P", 0, 0), 1, 2)), 5, 0), h=(tap(0),)),),
               inp(i, q))
    for _ in range(2):
        (on,) = instantiate(g, {"N": 4}, placement={"P": {(0, 0)}})
        (off,) = instantiate(g, {"N": 4}, placement={"P": set()})
        assert [on.b1.get(r, 0) for r in range(4)] == [0, 5, 0, 0]
        assert [off.b1.get(r, 0) for r in range(4)] == [0, 0, 5, 0]


class _SaysInt(type):
    """A metaclass whose classes compare and hash equal to ``int`` (``{kind} <= {int}`` holds)."""

    def __eq__(cls, other: object) -> bool:
        return other is int or type.__eq__(cls, other)

    def __hash__(cls) -> int:
        return type.__hash__(int)


class _LikeOne(metaclass=_SaysInt):
    """No int: equal to 1 and hashing as 1, ordered as 1."""

    def __eq__(self, other: object) -> bool:
        return other == 1

    def __hash__(self) -> int:
        return 1

    def __lt__(self, other: object) -> bool:
        return 1 < other  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        return 1 > other  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        return 1 >= other  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        return 1 <= other  # type: ignore[operator]


def test_a_placement_member_of_a_class_equal_to_int_is_refused() -> None:
    """A set placement's members were taken as ints when ``set(map(type, ...)) <= {int}``: a class
    whose metaclass compares and hashes equal to ``int`` passed, and its object was frozen as a
    cell; types are compared by identity, so it is refused as any other non-int."""
    g = Gadget("g", (Param("N", 1, 40),), N, 1, (PLayer(b1=where(pred("P", i, q), 1), h=(tap(0),)),), inp(i, q))
    with pytest.raises(ParametricError, match=r"placement P: expected tuples of 2 ints in \[0, 2\^64\) \(the predicate's arguments\), found tuple"):
        instantiate(g, {"N": 4}, placement={"P": {(_LikeOne(), 0)}})
