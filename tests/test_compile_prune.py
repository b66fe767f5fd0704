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
from symverify.library import determinant, poly_mult
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
