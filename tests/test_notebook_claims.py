"""What the notebooks' text states is what the code does: the Theorem H.21 walkthrough states the
compiler's own bounds, with ``a = ⌈log2 max(w, 2)⌉`` (at cut width 1, ``⌈log2 w⌉ = 0`` gave a
smaller "stated" bound than the one the compiler states, and ``L ≤ 35, at most 27``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import symverify as sv

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _markdown(name: str) -> str:
    """The notebook's markdown cells (jupytext percent format: comment lines), joined into one line."""
    lines = (NOTEBOOKS / name).read_text(encoding="utf-8").splitlines()
    return " ".join(line[2:] for line in lines if line.startswith("# ") and not line.startswith("# %%"))


def test_the_walkthrough_states_the_bounds_with_a_at_least_one():
    text = _markdown("02_theorem_h21_walkthrough.py")
    for claim in ("`a = ⌈log2 max(w, 2)⌉`", "`L ≤ 8·(Δ+1)·(a + 2) + 3`", "`24·max(Δ,1)·a + 27`", "`N_k ≤ 4·2^a`",
                  "`max(Δ,1)·a`"):
        assert claim in text, claim
    assert "⌈log2 w⌉ +" not in text and "24·Δ·" not in text


@pytest.mark.parametrize(("f", "n", "d"), [
    (lambda u: [u[0][0] * u[0][0]], 1, 1),                                     # Δ = 1, w = 1
    (lambda u: [(u[0][0] * u[0][0]) * (u[0][0] * u[0][0])], 1, 1),             # Δ = 2, w = 2
    (lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1] * u[1][1] - 3], 2, 2),    # the tour's circuit
])
def test_the_stated_formulas_are_the_compilers_bounds(f, n, d):
    c = sv.Circuit.trace(f, n=n, d=d)
    s = sv.stats(c)
    a = math.ceil(math.log2(max(s.width, 2)))
    b = sv.compile(c).bounds
    assert b["layers_thm"] == 8 * (s.depth + 1) * (a + 2) + 3
    assert b["layers_c21"] == 24 * max(s.depth, 1) * a + 27
    assert b["N_k"] == 4 * 2**a
    assert b["layers_thm"] <= b["layers_c21"]  # "at most": true for every a ≥ 1, false at a = 0 for Δ ≥ 1


def test_the_walkthrough_says_what_proves_the_causal_limit_and_shows_it():
    """§5 said the causal limit was "proved with every weight a symbol" and showed only the lemma's
    citation; the lemma (induction on the layers) proves it for every size, a symbolic model checks it
    at one size, and the notebook now says so and shows that check."""
    from symverify.gadgets.causal import exact_row_dependence, later_row_reads, symbolic_model

    text = _markdown("02_theorem_h21_walkthrough.py")
    assert "proved with every weight a symbol" not in text
    assert "proves it by induction on the layers" in text and "reads no later row when causal" in text
    code = (NOTEBOOKS / "02_theorem_h21_walkthrough.py").read_text(encoding="utf-8")
    assert "exact_row_dependence(symbolic_model(2, 2, 3, n=2, d=1, mode=mode))" in code
    causal = exact_row_dependence(symbolic_model(2, 2, 3, n=2, d=1, mode="causal"))
    cyclic = exact_row_dependence(symbolic_model(2, 2, 3, n=2, d=1, mode="cyclic"))
    assert later_row_reads(causal) == [] and later_row_reads(cyclic) == [(0, 1)]
    assert len(symbolic_model(2, 2, 3, n=2, d=1).params()) == 48  # the number the notebook's comment states
