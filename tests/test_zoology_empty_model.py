"""A model with no layers and the zoology round trip: ``to_zoology`` gave an empty
``nn.Sequential``, which ``from_zoology`` refuses (it holds no weights, so neither ``N`` nor ``d``);
``to_zoology`` now refuses such a model too, saying why, so what it writes is always read back."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import symverify as sv
from symverify.errors import CompileError
from symverify.executors.zoology import from_zoology, to_zoology
from symverify.kernel.ir.baseconv import Model

IDENTITY = sv.Circuit.trace(lambda u: [u[0][0], u[0][1], u[1][0], u[1][1]], n=2, d=2, name="identity")


def test_a_model_with_no_layers_is_refused_saying_why():
    empty = Model(2, 2, 2, 2, (), "empty")
    assert sv.verify(IDENTITY, empty, method="exact").proved  # a model with no layers reads out its input
    with pytest.raises(CompileError, match=r"the model has no layers: an empty nn\.Sequential holds no weights, so neither "
                                           r"N×d = 2×2 nor the model is stated in it, and from_zoology refuses it"):
        to_zoology(empty)


def test_from_zoology_refuses_the_empty_sequential_it_was_given():
    import torch.nn as nn

    with pytest.raises(CompileError, match=r"from_zoology: expected at least one ZoologyBaseConv layer"):
        from_zoology(nn.Sequential())


def test_a_compiled_model_with_no_layers_is_refused_with_every_reason():
    compiled = sv.compile(IDENTITY, method="kaleidoscope")
    assert not compiled.model.layers
    with pytest.raises(CompileError, match=r"(?s)the model has no layers.*the inner size"):
        to_zoology(compiled.model)


def test_what_to_zoology_writes_from_zoology_reads_back():
    from symverify.kernel.ir.baseconv import Layer
    from symverify.kernel.ir.grid import Grid

    gate = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    back = from_zoology(to_zoology(gate), seq_len=gate.n)
    assert sv.verify(gate, back, method="exact").proved
