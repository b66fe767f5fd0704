"""LayerWindow: a Dask task's stages are checked from the layers they read alone, with the same
outcomes (layer numbers, failures, notes) as from the whole model."""

from __future__ import annotations

import pickle

import pytest

import symverify as sv
from symverify.kernel.provers.compositional import StageRun
from symverify.kernel.provers.stages_dask import LayerWindow, check_stages, pack, stage_runs
from symverify.library import random_circuit
from symverify.mutate import weight_mutant


@pytest.fixture(scope="module")
def pair():
    c = random_circuit(2, 2, 16, 4, seed=1, num_outputs=2)
    return c, sv.compile(c)


def _outcomes(c, model, cert, windowed: bool):
    bs = cert.boundaries
    run = StageRun.of(c, model, isolate=False)
    out = []
    for a, b in stage_runs(bs, 4):
        m = LayerWindow.of(model, bs[a].layer, bs[b].layer) if windowed else model
        out.extend(check_stages(c, m, a, pack(bs[a:b + 1]), len(bs) - 2, run, None))
    return out


def test_windows_give_the_whole_models_outcomes(pair):
    c, comp = pair
    whole = _outcomes(c, comp.model, comp.certificate, False)
    assert all(o.ok for o in whole) and whole == _outcomes(c, comp.model, comp.certificate, True)


def test_a_mutant_fails_at_the_same_stage_and_cell_through_a_window(pair):
    c, comp = pair
    mutant = weight_mutant(comp.model, seed=3).obj
    whole = _outcomes(c, mutant, comp.certificate, False)
    windowed = _outcomes(c, mutant, comp.certificate, True)
    assert any(not o.ok for o in whole)
    first = next(o for o in whole if not o.ok)
    assert first == next(o for o in windowed if not o.ok)


def test_a_window_holds_only_its_layers(pair):
    _, comp = pair
    m = comp.model
    bs = comp.certificate.boundaries
    a, b = bs[1].layer, bs[2].layer
    w = LayerWindow.of(m, a, b)
    assert w.layers[a:b] == tuple(m.layers[a:b]) and len(w.window) == b - a
    assert len(pickle.dumps(w)) < len(pickle.dumps(m))
    with pytest.raises(IndexError, match=r"outside this window"):
        w.layers[a:b + 1]
    with pytest.raises(IndexError, match=r"outside this window"):
        w.layers[a - 1:b]
    with pytest.raises(IndexError, match=r"\[lo:hi\] slices only"):
        w.layers[a]
