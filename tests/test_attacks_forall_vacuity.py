"""The vacuity check of ``assume`` (``prove_forall``) must reach the joint instances of ``assume``:
a placement satisfies it at every cell at once. Two cells whose demands contradict each other (row
1 needs ``P`` at row 0, row 0 needs ``¬P`` there) leave no placement at any size while each cell
alone is satisfiable; a check cell by cell let a spec wrong at row 1 be "proved for all N"."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    eq,
    ge,
    inp,
    instantiate,
    ite,
    ne,
    pred,
    tap,
    var,
    where,
)

i, q, N = (var(x) for x in "iqN")
_SHIFT = (PLayer(b1=1, h=(tap(1),), mode="causal"),)  # output row i is input row i − 1, row 0 is 0
_PREV = ite(ge(i, 1), i - 1, 0)
_P = pred("P", i, q)
# odd rows need P on the row before, even rows need ¬P on their own: rows 1 and 0 contradict
_ASSUME = (ne(i % 2, 1) | pred("P", _PREV, q)) & (ne(i % 2, 0) | ~_P)
_RIGHT = where(eq(i, 0), 0, inp(_PREV, q))


def _gadget(spec: object) -> Gadget:
    return Gadget("g", (Param("N", 2, 8),), N, 1, _SHIFT, spec, assume=_ASSUME, care=_P | ~_P)  # type: ignore[arg-type]


def test_no_placement_exists_at_any_size() -> None:
    for n in (2, 3, 8):
        for placement in (set(), {(0, 0)}, {(r, 0) for r in range(n)}):
            with pytest.raises(ParametricError, match="the placement violates"):
                instantiate(_gadget(_RIGHT), {"N": n}, placement={"P": placement})


def test_a_wrong_spec_under_assumptions_no_placement_meets_is_not_proved() -> None:
    wrong = where(eq(i, 1), 2 * inp(_PREV, q), _RIGHT)
    try:
        r = sv.prove_forall(_gadget(wrong), timeout=60)
    except ParametricError as e:
        assert "vacuous" in str(e)
        return
    assert not r.proved, r
