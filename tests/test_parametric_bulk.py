"""The bulk (numpy) evaluation of parametric biases equals the cell-by-cell one, exactly."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric import bulk, concrete
from symverify.kernel.parametric.concrete import instantiate
from symverify.kernel.parametric.expr import ParametricError, bit, fam, ge, ite, lt, pow2, pred, var, where
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap
from symverify.parametric import library as lib

i, q = var("i"), var("q")


def _cellwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(concrete, "_BULK_FROM", 1 << 62)


def _rows(layers: Any) -> list[Any]:
    return [(la.mode, [g.to_rows() for _, g in la.grids()]) for la in layers]


_SPARSE = {(r, c) for r in range(9) for c in range(6) if (r + 2 * c) % 3}
CASES = [
    (lib.butterfly_sequence, {"r": 3, "tw": 2, "e": 1}, None),
    (lib.butterfly_channel, {"r": 2, "j": 2, "e": 1}, None),
    (lib.remember_rows, {"N": 40, "d": 3, "a": 7, "b": 11}, None),
    (lib.gather, {"N": 24, "d": 6, "n": 9, "tw": 4}, {"IN": _SPARSE}),
    (lib.scatter, {"N": 24, "d": 6, "n": 9, "tw": 4}, {"OUT": _SPARSE}),
    (lib.factor_sequence, {"r": 3, "tw": 2, "d": 3, "e": 1, "pend": 1, "x1": 1, "x2": 1},
     {"SUP": {(r, c) for r in range(8) for c in range(2) if r != 3}, "LIVE": {(r, 1) for r in range(8)}}),
    (lib.block_scale, {"R": 8, "tw": 2, "d": 3, "pend": 1}, {"KEEP": {(r, c) for r in range(8) for c in range(2) if r % 3}}),
    (lib.gate, {"N": 9, "d": 5}, None),
]


@pytest.mark.parametrize(("make", "params", "placement"), CASES, ids=[c[0].__name__ for c in CASES])
def test_bulk_equals_cell_by_cell_on_library_gadgets(make: Any, params: dict[str, int], placement: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    g = make()
    fams = None
    if g.families and set(g.families) <= {"d1", "d2", "d3", "d4", "g", "C"}:
        fams = {"d1": lambda r, c: r + c, "d2": lambda r, c: 2, "d3": lambda r, c: sym("a"), "d4": lambda r, c: r - c,
                "g": lambda r, c: r * c + 1, "C": lambda r, c: c}
        fams = {k: f for k, f in fams.items() if k in g.families}  # a gadget refuses names it lacks
    fast = instantiate(g, params, fams, placement)
    _cellwise(monkeypatch)
    assert _rows(fast) == _rows(instantiate(g, params, fams, placement))


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(1, 3), st.integers(1, 3), st.integers(0, 10**6))
def test_mul_stage_placements_as_sets_callables_and_cell_by_cell_agree(R2: int, tw: int, k: int, seed: int) -> None:
    """Random placements satisfying ``assume``: a set of cells, a callable and the cell-by-cell
    interpretation give the same layers."""
    R = 2 * R2
    k = min(k, R // 2)
    rng = random.Random(seed)
    cells = [(r, c) for r in range(R) for c in range(tw)]
    rng.shuffle(cells)
    v1: set[tuple[int, int]] = set()
    v3: set[tuple[int, int]] = set()
    for r, c in cells:
        taken = v1 | v3 | {(a + k, b) for a, b in v1}
        if (r, c) in taken or rng.random() < 0.4:
            continue
        if rng.random() < 0.5 and r + k < R and (r + k, c) not in taken and (r - k, c) not in v1:
            v1.add((r, c))
        elif (r - k, c) not in v1:
            v3.add((r, c))
    params = {"R": R, "tw": tw, "d": tw, "k": k, "pend": seed % 2}
    fams = {"C": lambda r, c: (r * 7 + c) % 3 - 1}
    g = lib.mul_stage()
    as_sets = instantiate(g, params, fams, {"V1": frozenset(v1), "V3": frozenset(v3)})
    as_calls = instantiate(g, params, fams, {"V1": lambda r, c: (r, c) in v1, "V3": lambda r, c: (r, c) in v3})
    assert _rows(as_sets) == _rows(as_calls)
    with pytest.MonkeyPatch.context() as mp:
        _cellwise(mp)
        assert _rows(as_sets) == _rows(instantiate(g, params, fams, {"V1": frozenset(v1), "V3": frozenset(v3)}))


def _one_bias(b1: Any, n: int = 40, d: int = 3) -> Gadget:
    return Gadget("probe", (Param("N", 1, 1 << 40), Param("d", 1, 8)), var("N"), var("d"),
                  (PLayer(b1=b1, h=(tap(0),)),), fam("x", i, q))


def test_undefined_operation_falls_back_to_the_exact_error() -> None:
    """``i − 5`` below 0 outside a guard is undefined: the bulk path hands over to the cell-by-cell
    one, which names the operation and the cell."""
    g = _one_bias(where(bit(i, 1), fam("f", i - 5, q)))
    with pytest.raises(ParametricError, match=r"subtraction below 0 \(2 - 5\)"):
        instantiate(g, {"N": 40, "d": 3})


def test_guarded_subtraction_is_only_evaluated_where_the_guard_holds() -> None:
    g = _one_bias(where(ge(i, 5) & bit(i, 1), fam("f", i - 5, q)))
    layer = instantiate(g, {"N": 40, "d": 3})[0]
    assert layer.b1.get(6, 2) == concrete.family_symbol("f", 1, 2)
    assert layer.b1.get(2, 0) == 0 and layer.b1.get(5, 0) == 0


def test_large_values_fall_back_and_stay_exact() -> None:
    """Index values near ``2^63`` (beyond int64's exact range) are evaluated cell by cell."""
    big = var("N") * pow2(40)
    g = _one_bias(where(lt(i * pow2(22) + big, big + 3 * pow2(22)) & bit(i, 0), 5))
    layer = instantiate(g, {"N": 1 << 20, "d": 2})[0]
    assert [layer.b1.get(r, 0) for r in range(5)] == [0, 5, 0, 0, 0]


def test_index_arrays_raise_fallback_instead_of_wrapping() -> None:
    rows_ = np.arange(4, dtype=np.int64)
    with pytest.raises(bulk.FallbackError):
        bulk.index(i * pow2(61), {}, rows_, rows_, {})
    with pytest.raises(bulk.FallbackError):
        bulk.index(i - 2, {}, rows_, rows_, {})
    with pytest.raises(bulk.FallbackError):
        bulk.index(i // q, {}, rows_, rows_, {})


def test_placement_of_a_wrong_type_is_rejected() -> None:
    g = _one_bias(where(pred("P", i, q), 1))
    with pytest.raises(ParametricError, match="gadget probe: placement P: expected a callable on cells or a set of cells, found int 3"):
        instantiate(g, {"N": 40, "d": 3}, placement={"P": 3})  # type: ignore[dict-item]


def test_predicate_without_value_is_an_error() -> None:
    g = _one_bias(where(pred("P", i, q), 1))
    with pytest.raises(ParametricError, match="predicate P has no value"):
        instantiate(g, {"N": 40, "d": 3})


def test_placement_violating_assume_names_the_first_cell() -> None:
    g = lib.mul_stage()
    params = {"R": 4, "tw": 1, "d": 1, "k": 1, "pend": 0}
    with pytest.raises(ParametricError, match=r"violates .* at cell \(3, 0\)"):
        instantiate(g, params, None, {"V1": frozenset({(3, 0)}), "V3": frozenset()})


def _exact_or_error(f: Any) -> Any:
    try:
        return f()
    except ParametricError:
        return "error"


@pytest.mark.parametrize("e", [
    var("a") * var("b") + i,  # a constant sum with a cell-dependent one
    (var("a") << var("b")) - var("b"),  # constant all the way
    ite(lt(var("a"), var("b")), i + var("a"), q * var("b")),  # a constant choice
    ite(lt(var("b"), var("a")), i + var("a"), q * var("b")),
    ite(lt(i, var("b")), var("a") - var("b"), q),  # a constant undefined off the guard
    var("b") - var("a"),  # undefined at every cell
    var("a") // (var("b") - var("b")),  # division by a constant zero
    pow2(var("b") * 20) * pow2(var("b") * 20),  # a constant beyond int64
])
def test_constant_index_parts_equal_the_cell_by_cell_values(e: Any) -> None:
    env = {"a": 3, "b": 2}
    rows_, chans = np.arange(6, dtype=np.int64), np.array([0, 1, 2, 0, 1, 2], dtype=np.int64)
    want = [_exact_or_error(lambda r=r, c=c: e.eval({**env, "i": r, "q": c})) for r, c in zip(rows_.tolist(), chans.tolist())]
    try:
        got = bulk.index(e, env, rows_, chans, {}).tolist()
    except bulk.FallbackError:
        return  # the caller evaluates cell by cell (the exact values or the exact error)
    assert got == want


@pytest.mark.parametrize("c", [
    lt(var("a"), var("b")) | lt(i, 2),  # a constant false item, then a cell-dependent one
    lt(var("b"), var("a")) | lt(i, 2),  # a constant true item decides every cell
    ge(i, 2) & lt(var("b"), var("a")) & lt(q, 2),  # a constant true item between cell-dependent ones
    ge(i, 2) & lt(var("a"), var("b")),  # a constant false item after a cell-dependent one
    ~(lt(var("b"), var("a")) & ge(var("a"), 1)),  # constant all the way
    lt(var("a"), var("b")) & lt(i - 4, 1),  # the undefined item is never reached
])
def test_constant_conditions_equal_the_cell_by_cell_values(c: Any) -> None:
    env = {"a": 3, "b": 2}
    rows_, chans = np.arange(6, dtype=np.int64), np.array([0, 1, 2, 0, 1, 2], dtype=np.int64)
    want = [c.eval({**env, "i": r, "q": ch}) for r, ch in zip(rows_.tolist(), chans.tolist())]
    assert bulk.cond(c, env, rows_, chans, {}).tolist() == want


def test_a_family_node_asks_for_its_reader_once_and_reads_every_cell_through_it():
    """``bulk.value`` asks ``family(name)`` for the reader of a family node's members once, then
    reads each cell's member through it in cell order (one Python frame per member read); the
    instantiation's reader is :func:`concrete._member_reader`, whose values and errors are
    :func:`concrete._family`'s."""
    from fractions import Fraction

    rows_, chans = np.array([0, 1, 2, 3]), np.array([1, 0, 1, 0])
    asked, read = [], []

    def family(name):
        asked.append(name)

        def member(idx):
            read.append(idx)
            return idx[0] + 10 * idx[1]

        return member

    got = bulk.value(fam("B", var("i"), var("q")), {}, rows_, chans, {}, family)
    assert asked == ["B"] and read == [(0, 1), (1, 0), (2, 1), (3, 0)] and got.tolist() == [10, 1, 12, 3]
    fams = {"B": lambda i: Fraction(2 * i, 4) if i else "x"}
    assert concrete._member_reader(fams, "B")((3,)) == concrete._family(fams, "B", (3,)) == Fraction(3, 2)
    assert concrete._member_reader(None, "B")((1, 2)) == concrete._family(None, "B", (1, 2)) == concrete.family_symbol("B", 1, 2)
    with pytest.raises(ParametricError, match=r"family B at \(0,\)") as bad:
        concrete._member_reader(fams, "B")((0,))
    with pytest.raises(ParametricError) as also:
        concrete._family(fams, "B", (0,))
    assert str(bad.value) == str(also.value)
