"""The existence checks of ``prove_forall`` (a placement satisfying ``assume``, a care cell, an
entry cell) share one z3 model where it satisfies them: the statement and verdicts are those of
one query per check, with fewer queries (``stats["existence_queries"]``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.parametric import Gadget, Param, ParametricError, PLayer, ge, inp, library, lt, pred, tap, var, where

i, q, N, K = (var(x) for x in "iqNK")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)  # output cell = input cell


def _copy(entry: object, care: object = None, assume: object = None) -> Gadget:
    """``y = u`` on ``N ≤ 8`` rows, one channel; the input nonzero only where ``entry`` holds."""
    extra = {} if care is None else {"care": care}
    if assume is not None:
        extra["assume"] = assume
    return Gadget("copy", (Param("N", 1, 8), Param("K", 0, 8)), N, 1, _COPY, inp(i, q), entry=entry, **extra)  # type: ignore[arg-type]


def test_one_model_answers_the_placement_care_and_entry_checks() -> None:
    """``block_scale`` (predicate ``KEEP``, an ``entry``): one query where three were made."""
    r = sv.prove_forall(library.block_scale(), timeout=60)
    assert r.proved and r.stats["existence_queries"] == 1, r.stats


def test_one_model_answers_care_and_entry_without_predicates() -> None:
    r = sv.prove_forall(_copy(entry=lt(i, N)), timeout=60)
    assert r.proved and r.stats["existence_queries"] == 1, r.stats


def test_an_entry_cell_the_model_misses_is_asked_on_its_own() -> None:
    """``care`` only at rows ≥ K, ``entry`` only at rows < K: no cell has both, so the shared query
    answers nothing and the care and entry checks run their own queries (and find cells)."""
    r = sv.prove_forall(_copy(entry=lt(i, K), care=ge(i, K)), timeout=60)
    assert r.proved and r.stats["existence_queries"] == 3, r.stats


def test_an_entry_true_nowhere_is_still_refused() -> None:
    with pytest.raises(ParametricError, match=r"vacuous statement: its entry .* holds at no cell"):
        sv.prove_forall(_copy(entry=lt(i, 0)), timeout=60)


def test_a_care_true_nowhere_is_still_refused_with_predicates() -> None:
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(_copy(entry=lt(i, N), care=pred("P", i, q) & lt(i, 0), assume=~pred("P", i, q) | lt(i, N)), timeout=60)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 9), st.integers(0, 9))
def test_the_shared_model_never_hides_an_empty_check(e: int, c: int) -> None:
    """``entry``: rows < e; ``care``: rows ≥ c, on N ≤ 8 rows (K free): the statement is refused as
    vacuous exactly when no cell with care (c ≥ 8) or no entry cell (e = 0) exists, whichever the
    checks, shared model or not, meet first (care first); one query where a cell has both."""
    g = _copy(entry=lt(i, e), care=ge(i, c))
    if c >= 8:
        with pytest.raises(ParametricError, match="no cell with care"):
            sv.prove_forall(g, timeout=60)
    elif e == 0:
        with pytest.raises(ParametricError, match="holds at no cell"):
            sv.prove_forall(g, timeout=60)
    else:
        r = sv.prove_forall(g, timeout=60)
        assert r.proved and r.stats["existence_queries"] == (1 if c < min(e, 8) else 3), r.stats


def test_the_spec_shown_on_a_wrong_copy_is_still_refuted() -> None:
    wrong = Gadget("copy", (Param("N", 1, 8),), N, 1, _COPY, where(lt(i, 3), inp(i, q), 2 * inp(i, q)), entry=lt(i, N))
    r = sv.prove_forall(wrong, timeout=60)
    assert r.verdict is sv.Verdict.REFUTED and r.stats["existence_queries"] == 1, r
