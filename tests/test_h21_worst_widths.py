"""Theorem H.21 at widths whose ``d`` is not a power of two: the copy network from the first read
source (gaps filled between the sources only) and the placements one butterfly factor from the
read-out cells. Each compiled model is proved by its certificate; a perturbed weight is refuted."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from symverify.compiler import compile
from symverify.compiler.h21.placement import _broadcast_options
from symverify.compiler.h21.stages import _normalise
from symverify.compiler.layout import track_position, track_width
from symverify.kaleidoscope.selection import _copy_candidates
from symverify.kernel.ir.layered import layered_form
from symverify.kernel.provers.compositional import check_certificate
from symverify.library import wired_circuit


def _copies(factors, size: int, sources) -> list[dict[int, Fraction]]:
    """The factors applied to unit forms at ``sources``."""
    x: list[dict[int, Fraction]] = [{} for _ in range(size)]
    for j in sources:
        x[j] = {j: Fraction(1)}
    for f in factors:
        y: list[dict[int, Fraction]] = [{} for _ in range(size)]
        for m, (p, q) in enumerate(f.pairs()):
            for tgt, a, b in ((p, f.d1[m], f.d2[m]), (q, f.d3[m], f.d4[m])):
                acc: dict[int, Fraction] = {}
                for c, src in ((a, x[p]), (b, x[q])):
                    for k, v in src.items():
                        acc[k] = acc.get(k, 0) + c * v
                y[tgt] = {k: v for k, v in acc.items() if v != 0}
        x = y
    return x


def test_copy_network_from_the_first_source_fits_where_filling_from_zero_does_not():
    # sources 4, 5, 7 read twice each: filling 0 … 7 needs 4 + 2 + 2 + 1 + 2 = 11 > 8 slots
    uses = {4: 2, 5: 2, 7: 2}
    cands = {name: (fs, dest) for name, fs, dest in _copy_candidates(8, uses)}
    assert "compact, gaps filled" not in cands
    fs, dest = next(v for k, v in cands.items() if k.startswith("compact from 4"))
    assert len(fs) == 3  # log2 N broadcast factors, not the 2·log2 N − 1 of concentrate + compact
    got = _copies(fs, 8, uses)
    for src, slots in dest.items():
        assert len(slots) == uses[src]
        assert all(got[t] == {src: 1} for t in slots)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.integers(1, 15), st.integers(1, 3), min_size=1, max_size=6))
def test_every_copy_candidate_copies_each_source_to_its_slots(uses):
    assume(sum(uses.values()) <= 16)  # the route's size is at least nnz (selection_size)
    for name, fs, dest in _copy_candidates(16, uses):
        got = _copies(fs, 16, uses)
        for src, slots in dest.items():
            assert len(slots) == uses[src], name
            assert all(got[t] == {src: 1} for t in slots), (name, src, slots)


@pytest.mark.parametrize("w,wiring,d,most", [(3, "permutation", 3, 18), (28, "hubs", 7, 45), (12, "hubs", 6, 36)])
def test_worst_widths_at_depth_one_within_nine_and_proved(w, wiring, d, most):
    """``L ≤ 9·⌈log2 w⌉`` at Δ = 1 (it was 22 layers at d = 3 and 50 at d = 7), proved exactly."""
    c = wired_circuit(w, 1, wiring, d=d)
    out = compile(c, method="kaleidoscope")
    assert len(out.model.layers) <= most
    assert not out.over_bound()
    assert check_certificate(c, out.model, out.certificate).ok


def test_perturbed_weight_of_a_near_read_out_model_is_refuted():
    from dataclasses import replace

    from symverify import verify

    c = wired_circuit(3, 1, "permutation", d=3)
    out = compile(c, method="kaleidoscope")
    assert verify(c, out.model).verdict == "proved"
    layers = list(out.model.layers)
    k = len(layers) - 3  # the last copy stage's factor, before the scatter
    name = "W" if layers[k].W.nonzero() else "h"
    g = getattr(layers[k], name)
    bumped = dict(g.nonzero())
    cell = next(iter(bumped))
    bumped[cell] = bumped[cell] + 1
    from symverify.compiler.layout import grid

    layers[k] = replace(layers[k], **{name: grid(g.rows, g.cols, bumped)})
    bad = replace(out.model, layers=tuple(layers))
    assert verify(c, bad).verdict == "refuted"


def test_near_read_out_options_put_every_read_value_at_its_cell_or_one_stride_away():
    c = wired_circuit(3, 1, "permutation", d=3)
    stages = _normalise(layered_form(c), c)
    tw = track_width(c.d)

    def io(k: int) -> int:
        return track_position(k, c.n, c.d)

    pos = tuple(io(i) for i in range(c.num_inputs))
    opts = _broadcast_options(stages, 0, pos, tw, 16, io)
    cells = {io(k) for k in range(len(c.outputs))}
    near = [o for o in opts if o.cand is not None and all(any(q ^ s in cells for s in (0, 1, 2, 4, 8)) for q in o.next_in())]
    assert near, opts
