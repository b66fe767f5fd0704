"""Theorem H.21 compiler: no scatter layers when the outputs already sit at their model cells.

When ``d`` is not a power of two the model ends with two scatter layers moving output ``k`` from
its track position to cell ``(k // d, k % d)``. If every output has ``k % d < tw`` and the final
state holds nothing else, those cells coincide and the scatter is the identity on that state; the
compiler then leaves it out and the last node boundary is the certificate's last boundary.
"""

from __future__ import annotations

import pytest

from symverify import library as lib
from symverify.compiler.h21 import emit
from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.kernel.verification import verify
from symverify.mutate import mutate_weight, weight_sites


def test_single_output_model_ends_without_scatter(monkeypatch: pytest.MonkeyPatch) -> None:
    c = lib.determinant(3)  # d = 3, tw = 2, one output at cell (0, 0)
    short = compile_kaleidoscope(c)
    monkeypatch.setattr(emit, "_outputs_in_place", lambda st, outputs: False)
    full = compile_kaleidoscope(c)
    assert len(short.model.layers) == len(full.model.layers) - 2
    assert short.model.layers == full.model.layers[:-2]
    assert full.certificate.boundaries[-1].label == "layout: outputs scattered to their cells"
    last = short.certificate.boundaries[-1]
    assert last.layer == len(short.model.layers) and last.label.endswith("linear stage")
    assert [(x.row, x.col) for x in last.cells] == [(0, 0)]
    for out in (short, full):
        assert verify(c, out.model, certificate=out.certificate, method="compositional").proved
    assert verify(c, short).proved


def test_shorter_model_mutations_are_refuted() -> None:
    c = lib.determinant(3)
    model = compile_kaleidoscope(c).model
    last = len(model.layers) - 1
    sites = [s for s in weight_sites(model) if s.layer == last]
    assert sites
    for site in sites:
        assert verify(c, mutate_weight(model, site, "inc"), method="randomized").refuted, site


def test_outputs_off_the_track_keep_the_scatter() -> None:
    c = lib.random_circuit(3, 3, 24, 4, seed=2, num_outputs=4)  # output 2 is at channel 2 ≥ tw = 2
    out = compile_kaleidoscope(c)
    assert out.certificate.boundaries[-1].label == "layout: outputs scattered to their cells"
    assert verify(c, out.model, certificate=out.certificate, method="compositional").proved
