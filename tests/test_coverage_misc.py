"""Small modules outside the kernel: whether progress is shown on streams that cannot say if they
are terminals, the deadline's repr, ``Compiled`` refusing resources that are not a mapping, and
the structured synthetic model (one rectangle per bias row and per tap).

Each test names the function it is for and why its assertion bites.
"""

import io
from dataclasses import replace

import pytest

import symverify as sv
from symverify import progress
from symverify.deadline import Deadline
from symverify.errors import CompileError
from symverify.executors.synthetic import dense_model
from symverify.library import determinant


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_streams_that_cannot_answer(monkeypatch):
    """progress._interactive: a terminal shows progress; a closed stream (isatty raises ValueError)
    or an object without isatty does not, and neither raises."""
    monkeypatch.delenv(progress.ENV, raising=False)
    assert progress.wanted(stream=_Tty()) is True
    closed = io.StringIO()
    closed.close()
    assert progress.wanted(stream=closed) is False
    assert progress.wanted(stream=object()) is False
    assert progress.wanted(stream=io.StringIO()) is False


def test_deadline_repr_says_how_long_is_left():
    """Deadline.__repr__."""
    import time

    text = repr(Deadline(time.monotonic() + 100))
    assert text.startswith("Deadline(in ") and text.endswith(" s)")
    assert 99 <= float(text[len("Deadline(in "):-3]) <= 100


@pytest.mark.parametrize("field", ["resources", "bounds"])
def test_compiled_refuses_resources_that_are_not_a_mapping(field):
    """compiler.result._check_numbers: resources and bounds are mappings."""
    comp = sv.compile(determinant(2), method="dense")
    with pytest.raises(CompileError, match=f"Compiled {field}: expected a mapping of str to numbers, found list"):
        replace(comp, **{field: [("layers", 3)]})


def test_structured_synthetic_model_shares_rows_across_channels():
    """executors.synthetic._per_row and dense_model: structured=True gives b1, h and b2 one
    full-width rectangle per row (every channel shares the row's value); the default draws cell by
    cell."""
    m = dense_model(8, 4, 3, structured=True, seed=2)
    for layer in m.layers:
        for name in ("b1", "h", "b2"):
            g = getattr(layer, name)
            rows = g.to_rows()
            assert len(g.rects) == g.rows and all(len(set(r)) == 1 and r[0] != 0 for r in rows)
    dense = dense_model(8, 4, 3, seed=2)
    assert any(len(set(r)) > 1 for layer in dense.layers for r in layer.b1.to_rows())


def test_occupancy_counts_are_the_live_cells_by_role():
    """viz.model.Occupancy.counts: per role, the cells over all layers; the non-zero roles add up to
    the live cells of every layer, and the zero role to the rest."""
    from symverify.viz.model import occupancy

    comp = sv.compile(determinant(2), method="dense")
    occ = occupancy(comp)
    counts = occ.counts()
    assert set(counts) == {"zero", "track", "remembered", "workspace"}
    live = sum(occ.live(k) for k in range(occ.layers + 1))
    assert counts["track"] + counts["remembered"] + counts["workspace"] == live > 0
    m = comp.model
    assert counts["zero"] + live == (occ.layers + 1) * m.inner_n * m.inner_d


def test_a_missing_dependency_of_the_kaleidoscope_compiler_is_not_hidden(monkeypatch):
    """compiler._kaleidoscope: a ModuleNotFoundError for another module (a dependency the compiler
    imports) propagates; only the compiler module itself missing is the 'unavailable'
    CompileError."""
    import importlib

    from symverify import compiler

    def missing(name):
        raise ModuleNotFoundError(f"No module named {missing.mod!r}", name=missing.mod)

    monkeypatch.setattr(importlib, "import_module", missing)
    missing.mod = "some_dependency"
    with pytest.raises(ModuleNotFoundError, match="some_dependency"):
        compiler._kaleidoscope()
    missing.mod = "symverify.compiler.kaleidoscope"
    with pytest.raises(CompileError, match="method 'kaleidoscope' is unavailable"):
        compiler._kaleidoscope()
