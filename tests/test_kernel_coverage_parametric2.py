"""Coverage of ``symverify/kernel/parametric/bulk.py``: the refusals of the bulk evaluator
(an index variable with no value, a node of no known kind, a weight reading an input cell), ``^``
over arrays, and predicates given as a plain set of cells (not a ``CellSet``: the packed-key
``isin`` path for two indices, the per-cell path otherwise). Every verdict-relevant result is
compared with the cell-by-cell semantics of ``expr`` (``IExpr.eval`` / ``Cond.eval`` under
``predicates``), the module's own oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

from symverify.kernel.parametric import bulk
from symverify.kernel.parametric.expr import ParametricError, inp, lit, lt, pred, predicates, var, where

ROWS = np.array([0, 1, 2, 3, 5, 6, 7, 9], dtype=np.int64)
CHANS = np.array([3, 0, 2, 1, 7, 4, 5, 6], dtype=np.int64)
ENV = {"n": 4}


def _cells() -> list[tuple[int, int]]:
    return list(zip(ROWS.tolist(), CHANS.tolist()))


def test_xor_over_arrays_matches_the_cell_by_cell_value() -> None:
    """bulk.py ``_index``: ``a ^ b`` on arrays (a wrong operator there, e.g. ``|``, differs at
    (1, 0)… (3, 1) where both bits are set)."""
    e = (var("i") ^ var("q")) + (var("i") ^ var("n"))
    got = bulk.index(e, ENV, ROWS, CHANS, {})
    assert got.tolist() == [e.eval({**ENV, "i": i, "q": q}) for i, q in _cells()]
    assert got.tolist() != [((i | q) + (i | 4)) for i, q in _cells()]


def test_index_variable_without_a_value_is_refused() -> None:
    """bulk.py ``_index``: like ``IExpr.eval``, a parameter missing from ``env`` is a ParametricError."""
    with pytest.raises(ParametricError, match=r"index variable 'm' has no value \(known: \['n'\]\)"):
        bulk.index(var("i") + var("m"), ENV, ROWS, CHANS, {})


@pytest.mark.parametrize("cells", [frozenset, set])
def test_a_plain_set_placement_matches_membership(cells) -> None:
    """bulk.py ``_member``: a two-index predicate given as a set (not a CellSet) is tested with
    packed keys; a one-index predicate, per cell. Both against Python membership and against
    ``Cond.eval`` with the same predicate as a callable."""
    two = cells({(1, 0), (5, 7), (9, 6), (4, 4), (2, 99)})
    one = cells({(2,), (7,)})
    c2 = pred("placed", var("i"), var("q"))
    c1 = pred("row", var("i"))
    got2 = bulk.cond(c2, ENV, ROWS, CHANS, {"placed": two})
    got1 = bulk.cond(c1, ENV, ROWS, CHANS, {"row": one})
    assert got2.tolist() == [(i, q) in two for i, q in _cells()] == [False, True, False, False, True, False, False, True]
    assert got1.tolist() == [(i,) in one for i, _ in _cells()]
    with predicates({"placed": lambda i, q: (i, q) in two, "row": lambda i: (i,) in one}):
        assert got2.tolist() == [c2.eval({**ENV, "i": i, "q": q}) for i, q in _cells()]
        assert got1.tolist() == [c1.eval({**ENV, "i": i, "q": q}) for i, q in _cells()]


def test_unknown_nodes_and_input_cells_are_refused() -> None:
    """bulk.py ``_index``, ``_cond``, ``value``: an object of no expression kind; ``value``: a
    weight that reads an input cell (weights are functions of the parameters and the cell only)."""
    with pytest.raises(ParametricError, match="index expression: unknown node str"):
        bulk.index("i", ENV, ROWS, CHANS, {})  # type: ignore[arg-type]
    with pytest.raises(ParametricError, match="condition: unknown node bool"):
        bulk.cond(True, ENV, ROWS, CHANS, {})  # type: ignore[arg-type]
    with pytest.raises(ParametricError, match="value expression: unknown node int"):
        bulk.value(3, ENV, ROWS, CHANS, {}, lambda name: lambda idx: 1)  # type: ignore[arg-type]
    with pytest.raises(ParametricError, match="a weight expression reads an input cell"):
        bulk.value(where(lt(var("i"), lit(5)), inp(0, 0)), ENV, ROWS, CHANS, {}, lambda name: lambda idx: 1)
