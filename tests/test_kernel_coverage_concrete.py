"""Coverage of ``symverify/kernel/parametric/concrete.py`` (the concrete interpretation of a
gadget): state sizes below 1, cells outside the state, the layer memo, bias cut points of sums
and of comparisons undefined at the parameters, and the scalar fallback of the ``assume`` check.
The built grids are checked cell by cell against a direct evaluation of the bias expression.
"""

from __future__ import annotations

import pytest

from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric.concrete import _bias, _cuts_c, cell_value, instantiate, sizes, spec_at
from symverify.kernel.parametric.expr import ParametricError, inp, lt, pred, var, where
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap

i, q, N = var("i"), var("q"), var("N")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="cyclic"),)


def _u(r: int, c: int) -> object:
    return sym(f"u{r}_{c}")


def test_state_size_below_one_is_refused() -> None:
    """concrete.py ``sizes``: ``N − 2`` rows at ``N = 2`` is an empty state."""
    g = Gadget("g", (Param("N", 2, 8),), N - 2, 1, _COPY, inp(i, q))
    assert sizes(g, {"N": 3})[1:] == (1, 1)
    with pytest.raises(ParametricError, match=r"state size 0×1 at \{'N': 2\} \(expected N', d' ≥ 1\)"):
        instantiate(g, {"N": 2})


def test_cells_outside_the_state_are_refused() -> None:
    """concrete.py ``spec_at`` and ``cell_value``: either one at a cell outside ``N'×d'``."""
    g = Gadget("g", (Param("N", 1, 8),), N, 1, _COPY, inp(i, q))
    for fn in (spec_at, cell_value):
        with pytest.raises(ParametricError, match=r"cell \(3, 0\) outside the 3×1 state"):
            fn(g, {"N": 3}, 3, 0, _u)
        with pytest.raises(ParametricError, match=r"cell \(0, -1\) outside"):
            fn(g, {"N": 3}, 0, -1, _u)


def test_cell_value_reuses_a_shared_subcell() -> None:
    """concrete.py ``cell_value`` (the memo hit in its inner ``at``): three causal layers
    ``x ↦ x(r) + x(r − 1)``; at row 2 the third reads the second at rows 2 and 1, and both of those
    read the first at row 1, which is then taken from the memo. The value must be the layer
    formula's: ``Σ_k C(3, k)·u_{2−k}`` truncated at row 0, i.e. ``u2 + 3·u1 + 3·u0``."""
    step = PLayer(b1=1, h=(tap(0), tap(1)), mode="causal")
    g = Gadget("g", (Param("N", 3, 8),), N, 1, (step, step, step), inp(i, q))
    u = _u
    assert cell_value(g, {"N": 3}, 2, 0, u) == u(2, 0) + 3 * u(1, 0) + 3 * u(0, 0)
    assert cell_value(g, {"N": 4}, 3, 0, u) == u(3, 0) + 3 * u(2, 0) + 3 * u(1, 0) + u(0, 0)


def _grid_cells(grid, nn: int, dd: int) -> list[list[object]]:
    return [[grid.get(r, c) for c in range(dd)] for r in range(nn)]


def test_bias_of_a_sum_is_cut_at_every_term() -> None:
    """concrete.py ``_cuts_v`` (cut points of a sum): ``1 + (i < s ? 2 : 0)`` is 3 above row ``s``
    and 1 below; a sum whose cut points were dropped would give one block."""
    v = 1 + where(lt(i, var("s")), 2)
    for s_ in (0, 2, 5):
        grid = _bias(v, {"N": 5, "s": s_}, 5, 2, None)
        assert _grid_cells(grid, 5, 2) == [[3 if r < s_ else 1] * 2 for r in range(5)]


def test_bias_with_a_comparison_undefined_at_the_parameters() -> None:
    """concrete.py ``_cuts_c``: ``i < N − 8`` has no cut point at ``N = 4`` (undefined); the bias
    ``8 < N ∧ i < N − 8`` is then evaluated row by row, where the first conjunct is false, so it is
    0 everywhere; at ``N = 12`` it is 1 on rows 0..3."""
    c = lt(8, N) & lt(i, N - 8)
    assert _cuts_c(c, "i", {"N": 4}) is None
    assert _cuts_c(c, "i", {"N": 12}) == {4, 5}
    v = where(c, 1)
    assert _grid_cells(_bias(v, {"N": 4}, 4, 1, None), 4, 1) == [[0]] * 4
    assert _grid_cells(_bias(v, {"N": 12}, 12, 1, None), 12, 1) == [[1]] * 4 + [[0]] * 8


def test_assume_check_falls_back_to_cell_by_cell() -> None:
    """concrete.py ``_violation``: ``assume = ¬P(i, q) ∨ i·2^61 < 2^62`` leaves int64's exact range,
    so the vectorised check gives up and the cell-by-cell one (Python ints) finds the first
    violation: ``P`` is allowed on rows 0 and 1 only."""
    g = Gadget("g", (Param("N", 1, 8),), N, 1, (PLayer(b1=where(pred("P", i, q), 1), h=(tap(0),), mode="cyclic"),),
               where(pred("P", i, q), inp(i, q)), assume=~pred("P", i, q) | lt(i * (1 << 61), 1 << 62))
    with pytest.raises(ParametricError, match=r"the placement violates .* at cell \(2, 0\)"):
        instantiate(g, {"N": 4}, placement={"P": {(1, 0), (2, 0), (3, 0)}})
    layers = instantiate(g, {"N": 4}, placement={"P": {(1, 0)}})
    assert _grid_cells(layers[0].b1, 4, 1) == [[0], [1], [0], [0]]
