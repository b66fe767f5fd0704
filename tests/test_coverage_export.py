"""symverify.executors.export: a layer's plan for integer dtypes, a layer that notices an edited
weight, a bad path, a stack of layers of another inner shape, the stack's refresh, and a tensor
that is not 2-d.

Each test names the function of ``symverify/executors/export.py`` it is for; the oracle for edited
weights is a module built afresh from the edited model (and ``execute`` on it).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from symverify.errors import ShapeError  # noqa: E402
from symverify.executors import BaseConvStack, execute, to_torch  # noqa: E402
from symverify.executors.export import BaseConvLayer, grid_from_tensor  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402


def model(w: int = 1) -> Model:
    """One layer on (2, 1) inputs: (u·w) ⊙ (u shifted by 0 and 1)."""
    return Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.full(1, 1, w), h=Grid.from_rows([[1], [1]])),))


U = torch.tensor([[[3.0], [-2.0]]], dtype=torch.float64)


def test_integer_dtypes_plan_in_float64():
    """BaseConvLayer.plan: an integer dtype gets the float64 plan (the same cached one)."""
    ly = to_torch(model()).layers[0]
    assert ly.plan(torch.int64, torch.device("cpu")) is ly.plan(torch.float64, torch.device("cpu"))


def test_a_layer_called_directly_notices_an_edited_weight():
    """BaseConvLayer.forward: after an in-place edit of W the layer re-reads its structure; its
    output is that of a module built from the edited model."""
    m = to_torch(model(1))
    ly = m.layers[0]
    with torch.no_grad():
        ly.W.fill_(2.0)
    got = ly(U)
    want = to_torch(model(2)).layers[0](U)
    assert torch.equal(got, want)
    assert got.flatten().tolist() == [18.0, -4.0]


def test_a_layer_refuses_an_unknown_path():
    """BaseConvLayer.forward: path is 'fft', 'direct' or 'auto'."""
    ly = to_torch(model()).layers[0]
    with pytest.raises(ShapeError, match=r"path: expected 'fft' or 'direct' or 'auto' .*found 'fast'"):
        ly(U, "fast")


def test_a_stack_refuses_layers_of_another_inner_shape():
    """BaseConvStack.__init__: every layer has the stack's inner shape N'×d'."""
    z = torch.zeros(3, 1, dtype=torch.float64)
    ly = BaseConvLayer(torch.eye(1, dtype=torch.float64), z, z, z)
    with pytest.raises(ShapeError, match=r"layer 0: expected inner shape 2×1, found \(3, 1\)"):
        BaseConvStack(2, 1, 2, 1, [ly])


def test_stack_refresh_after_editing_weights():
    """BaseConvStack.refresh: after editing a weight and refreshing, the stack computes what execute
    computes on the edited model."""
    m = to_torch(model(1))
    with torch.no_grad():
        m.layers[0].W.fill_(-3.0)
    m.refresh()
    assert torch.equal(m(U), execute(model(-3), U, backend="torch"))
    assert m(U).flatten().tolist() == [-27.0, 6.0]


@pytest.mark.parametrize("shape", [(3,), (1, 2, 2)])
def test_grid_from_tensor_needs_a_matrix(shape):
    """grid_from_tensor: a weight is a 2-d tensor."""
    with pytest.raises(ShapeError, match=r"layer 0 W: expected a 2-d tensor, found shape"):
        grid_from_tensor(torch.zeros(shape), "layer 0 W")
