"""Pruning weights that only multiply structural zeros: values kept, certificates kept, and on
small circuits every remaining weight of a compiled model matters."""

from dataclasses import replace

import pytest
from hypothesis import given

from symverify import Circuit, Gate, Grid, Layer, Model
from symverify.compiler import compile
from symverify.compiler.dense import compile_dense
from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.compiler.prune import prune_structural_zeros
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics.evaluate import embed, eval_layer
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.verification import verify
from symverify.library import determinant, poly_mult, retnet
from symverify.testing import circuits


def test_dead_projection_and_bias_are_removed():
    # column 1 of the input is always 0, so W[1, 0] multiplies a structural zero; b1 on row 1 meets a
    # convolution branch that is 0 there (b2 only on row 0, no taps)
    layer = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(0, 0): 1, (1, 0): 5}), b1=Grid.from_cells(2, 2, {(1, 0): 7}),
                       b2=Grid.from_cells(2, 2, {(0, 0): 1}))
    pruned = prune_structural_zeros(Model(2, 1, 2, 2, (layer,))).layers[0]
    assert pruned.W.nonzero() == {(0, 0): 1} and pruned.b1.nonzero() == {} and pruned.b2.nonzero() == {(0, 0): 1}


def _states(model, ring):
    state = embed(ring.grid_input(model.n, model.d), model.inner_n, model.inner_d, ring.zero)
    out = []
    for layer in model.layers:
        state = eval_layer(layer, state, ring)
        out.append(state)
    return out


@pytest.mark.parametrize("build", [compile_dense, compile_kaleidoscope], ids=["dense", "kaleidoscope"])
@given(c=circuits(max_gates=10))
def test_pruning_keeps_every_cell_and_the_certificate(build, c):
    raw = build(c)
    pruned = prune_structural_zeros(raw.model, raw.certificate)
    ring = PolyRing(c.num_inputs)
    assert _states(pruned, ring) == _states(raw.model, ring)
    assert check_certificate(c, pruned, raw.certificate).ok
    assert pruned.nonzero_param_count() <= raw.model.nonzero_param_count()


def _bump(model, li, name, cell):
    layer = model.layers[li]
    g = getattr(layer, name)
    new = replace(layer, **{name: g.paint_cells([(cell[0], cell[1], g.get(*cell) + 1)])})
    return replace(model, layers=(*model.layers[:li], new, *model.layers[li + 1 :]))


@pytest.mark.parametrize("circuit", [determinant(2), poly_mult(2), Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3, 2))],
                         ids=lambda c: c.name or "small")
def test_every_remaining_weight_of_a_compiled_model_matters(circuit):
    model = compile(circuit).model
    for li, layer in enumerate(model.layers):
        for name, grid in layer.grids():
            for cell in grid.nonzero():
                report = verify(circuit, _bump(model, li, name, cell), method="randomized", backend="python")
                assert report.refuted, f"layer {li} {name}{cell}: {report}"


def _counting_prune_layer(monkeypatch):
    import symverify.compiler.prune as prune_mod

    calls = []
    real = prune_mod.prune_layer

    def counted(layer, sup):
        calls.append(layer)
        return real(layer, sup)

    monkeypatch.setattr(prune_mod, "prune_layer", counted)
    return calls


@given(c=circuits(max_gates=8))
def test_the_notes_of_the_emitter_change_no_pruned_model(c):
    """The whole-model pass with the kaleidoscope emitter's notes gives the model pruning from scratch gives."""
    import symverify.compiler.prune as prune_mod

    out = compile_kaleidoscope(c)
    fast = prune_structural_zeros(out.model, out.certificate)
    prune_mod._NOTED.clear()
    assert prune_structural_zeros(out.model, out.certificate) == fast


@pytest.mark.parametrize("circuit", [determinant(2), poly_mult(2), retnet(2, 2)], ids=lambda c: c.name)
def test_the_kaleidoscope_emitter_notes_what_it_pruned(circuit):
    """Every layer of these kaleidoscope models was pruned by the emitter on the support the
    whole-model pass reaches it with: the pass keeps each as it is, pruning none again."""
    import symverify.compiler.prune as prune_mod

    out = compile_kaleidoscope(circuit)
    assert set(prune_mod._NOTED.get(out.model) or ()) == set(range(len(out.model.layers)))
    with pytest.MonkeyPatch.context() as mp:
        calls = _counting_prune_layer(mp)
        assert prune_structural_zeros(out.model, out.certificate) == out.model
    assert calls == []


def test_a_note_is_used_only_for_its_layer_and_support(monkeypatch):
    """A note about another layer object, or about another support, is ignored: the layer is pruned."""
    from symverify.compiler.prune import note_pruned

    layer = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(0, 0): 1, (1, 0): 5}), b2=Grid.from_cells(2, 2, {(0, 0): 1}))
    model = Model(2, 1, 2, 2, (layer,))
    full = (frozenset({0, 1}), frozenset({0, 1}))
    calls = _counting_prune_layer(monkeypatch)
    note_pruned(model, {0: (layer, full, full)})  # the pass reaches it with column 1 empty: not this support
    assert prune_structural_zeros(model).layers[0].W.nonzero() == {(0, 0): 1} and len(calls) == 1
    other = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(0, 0): 1}))
    note_pruned(model, {0: (other, (frozenset({0, 1}), frozenset()), full)})  # another layer object
    assert prune_structural_zeros(model).layers[0].W.nonzero() == {(0, 0): 1} and len(calls) == 2
    note_pruned(model, {0: (layer, (frozenset({0, 1}), frozenset()), full)})  # this layer on this support: kept as noted
    assert prune_structural_zeros(model).layers[0] is layer and len(calls) == 2
