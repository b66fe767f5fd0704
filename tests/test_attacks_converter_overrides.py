"""The converters read weights only, so a module whose computation is changed elsewhere is refused.

A method replaced on an *instance* (``module.forward = lambda u: 2 * u``) runs in the module's
forward pass (``nn.Module.__call__`` looks ``forward`` up on the instance) while ``from_torch``,
``from_zoology`` and ``gated_from_zoology`` read the weights: the model proved would not be the
module's function. So is a ``BaseConvLayer`` subclass whose ``refresh`` keeps stale plans (the
module then runs its old weights after an edit through ``.data`` while the new ones are read), and
a ``named_modules`` replaced to hide a hooked submodule.
"""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")

import symverify as sv  # noqa: E402
from symverify.errors import CompileError  # noqa: E402
from symverify.executors.export import BaseConvLayer, from_torch, to_torch  # noqa: E402
from symverify.executors.zoology import ZoologyBaseConv, from_zoology  # noqa: E402
from symverify.executors.zoology_gated import ZoologyHyena  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.circuit import Circuit, Gate  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402

SQUARE = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
U = torch.tensor([[3.0], [-2.0]], dtype=torch.float64)


def _double(self: object, u: object) -> object:
    return 2 * u  # type: ignore[operator]


@pytest.mark.parametrize(("where", "name"), [("stack", "forward"), ("stack", "_forward"), ("stack", "_call_impl"),
                                             ("layer", "forward"), ("layer", "plan"), ("stack", "state_dict")])
def test_a_method_replaced_on_a_torch_module_instance_is_refused(where: str, name: str) -> None:
    mod = to_torch(SQUARE)
    target = mod if where == "stack" else mod.layers[0]
    real = getattr(target, name)
    setattr(target, name, types.MethodType(_double, target) if name in ("forward", "_forward", "_call_impl") else real)
    if (where, name) == ("stack", "forward"):
        assert mod(U).tolist() == [[6.0], [-4.0]]  # the module computes 2u, its weights say u²
    with pytest.raises(CompileError, match=rf"has its method \w+\.{name} replaced on the instance .*del module\.{name}"):
        from_torch(mod)
    delattr(target, name)
    assert from_torch(mod) == SQUARE  # the class's method again: read


def test_a_layer_subclass_that_keeps_stale_plans_is_refused() -> None:
    """``from_torch`` refreshes the module so that it runs the weights read; a layer whose
    ``refresh`` does nothing after the first call kept running the weights before a ``.data`` edit
    while the edited ones were read (and proved)."""

    class Lazy(BaseConvLayer):
        def refresh(self) -> None:
            if not hasattr(self, "plans"):
                super().refresh()

    mod = to_torch(SQUARE)
    old = mod.layers[0]
    mod.layers[0] = Lazy(old.W.detach().clone(), old.b1.detach().clone(), old.h.detach().clone(), old.b2.detach().clone())
    with torch.no_grad():
        mod(U)  # plans built
        mod.layers[0].W.data[0, 0] = 5.0  # no version change: the module keeps its old plans
    with pytest.raises(CompileError, match=r"layer 0 \(Lazy\) overrides BaseConvLayer\.refresh"):
        from_torch(mod)


def test_a_named_modules_replaced_to_hide_a_hooked_layer_is_refused() -> None:
    mod = to_torch(SQUARE)
    mod.layers[0].register_forward_hook(lambda m, args, out: 2 * out)
    mod.named_modules = lambda *a, **k: iter([("", mod)])  # type: ignore[method-assign]
    with pytest.raises(CompileError, match=r"named_modules replaced on the instance"):
        from_torch(mod)
    del mod.named_modules
    with pytest.raises(CompileError, match=r"submodule 'layers\.0' \(BaseConvLayer\) has a forward hook"):
        from_torch(mod)


@pytest.mark.parametrize("name", ["forward", "state_dict"])
def test_from_zoology_refuses_a_method_replaced_on_the_instance(name: str) -> None:
    torch.manual_seed(0)
    z = ZoologyBaseConv(2, 4, dtype=torch.float64)
    real = getattr(z, name)
    setattr(z, name, types.MethodType(_double, z) if name == "forward" else real)
    with pytest.raises(CompileError, match=rf"from_zoology: element 0: the module \(ZoologyBaseConv\) has its method "
                                           rf"ZoologyBaseConv\.{name} replaced on the instance"):
        from_zoology([z])
    delattr(z, name)
    assert isinstance(from_zoology([z]), Model)


def test_gated_from_zoology_refuses_a_replaced_forward_but_reads_a_replaced_filter() -> None:
    """The filter generator is run by the converter itself (``filter_fn.filter(N)``), so a filter
    replaced on its instance is what both compute; the module's own ``forward`` is not run."""
    torch.manual_seed(0)
    m = ZoologyHyena(2, 6).double().eval()
    m.forward = types.MethodType(_double, m)
    with pytest.raises(CompileError, match=r"from zoology: the module \(ZoologyHyena\) has its method ZoologyHyena\.forward replaced"):
        sv.gated_from_zoology(m, 6)
    del m.forward
    real = m.filter_fn.filter
    m.filter_fn.filter = lambda L, *a, **k: 2 * real(L, *a, **k)
    circuit, out = sv.gated_from_zoology(m, 6)
    assert sv.verify(circuit, out).proved


def test_a_module_converted_back_from_a_compiled_model_still_proves() -> None:
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    out = sv.compile(c, method="dense")
    assert sv.verify(c, from_torch(to_torch(out.model))).proved
