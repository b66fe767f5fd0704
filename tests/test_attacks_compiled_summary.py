"""``str(Compiled)``, the summary ``symverify compile`` prints, states each resource against its
bound as ``over_bound()`` judges it: a resource over its bound is never written as within it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.compiler.result import Compiled
from symverify.kernel.ir.circuit import Circuit, Gate

_COMPILED = sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense")


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    return _COMPILED


def test_a_resource_over_its_bound_is_not_written_as_within_it(compiled: Compiled) -> None:
    """The summary wrote ``layers=2 (≤ 1)`` for a result whose ``over_bound()`` is ``['layers']``."""
    over = replace(compiled, bounds={**compiled.bounds, "layers": 1})
    assert over.over_bound() == ["layers"]
    text = str(over)
    assert "layers=2 (> 1: over bound)" in text and "(≤ 1)" not in text.split("inner_n")[0]


def test_a_stated_bound_without_a_resource_is_listed(compiled: Compiled) -> None:
    """A bound with no resource (``over_bound()`` lists it) was left out of the summary."""
    over = replace(compiled, bounds={**compiled.bounds, "stages": 3})
    assert "stages" in over.over_bound()
    assert "stages: no value (bound 3)" in str(over)


def test_resources_within_their_bounds_read_as_before(compiled: Compiled) -> None:
    assert compiled.over_bound() == []
    text = str(compiled)
    assert text.startswith("dense compilation → BaseConv model")
    assert "layers=2 (≤ 7)" in text and "over bound" not in text and "no value" not in text


def test_a_factorizations_wiring_title_marks_a_resource_over_its_bound() -> None:
    """``plot_butterfly``'s title for a factorization wrote ``w=1 (≤ 0)`` for one whose ``over_bound()``
    is ``['w']``."""
    from symverify.kaleidoscope import permutation_to_kaleidoscope
    from symverify.viz.butterfly import wiring

    f = permutation_to_kaleidoscope([1, 0, 3, 2])
    assert "w=1 (≤ 1), N=4 (≤ 4)" in wiring(f).title
    over = replace(f, bounds={**f.bounds, "w": 0})
    assert over.over_bound() == ["w"]
    assert "w=1 (> 0: over bound), N=4 (≤ 4)" in wiring(over).title


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["layers", "inner_n", "inner_d", "params", "width", "absent"]),
                       st.one_of(st.integers(0, 200), st.fractions(0, 200)), max_size=6))
def test_the_summary_judges_every_bound_as_over_bound_does(bounds: dict[str, object]) -> None:
    out = replace(_COMPILED, bounds=bounds)
    text = str(out)
    over = set(out.over_bound())
    for key, b in out.bounds.items():
        if key not in out.resources:
            assert f"{key}: no value (bound {b})" in text and key in over
        else:
            within, beyond = f"{key}={out.resources[key]} (≤ {b})", f"{key}={out.resources[key]} (> {b}: over bound)"
            assert (beyond in text, within in text) == ((True, False) if key in over else (False, True)), key
