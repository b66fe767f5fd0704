"""Attacks on user-facing surfaces: golden runs of `symverify prove`, and the other user tools."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

import symverify as sv
from symverify.cli import main
from symverify.errors import CompileError

ARGUED = '''
TITLE = "A hand proof {name}"
from symverify.scripts.protocol import Instance, ProofResult, script_main

def run(quick=False):
    return ProofResult("{name}", TITLE, [Instance.argued("it holds", "docs/theory.md § 1", checks=True)])

if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def _scripts(d: Path, *names: str) -> None:
    d.mkdir(exist_ok=True)
    for name in names:
        (d / f"{name}.py").write_text(textwrap.dedent(ARGUED.format(name=name)), encoding="utf-8")


def test_a_script_gone_from_a_run_of_every_script_differs_from_the_golden_run(tmp_path, capsys):
    d, golden = tmp_path / "proofs", str(tmp_path / "golden.json")
    _scripts(d, "alpha", "beta")
    assert main(["prove", "--dir", str(d), "-j", "1", "--golden", golden, "--update-golden"]) == 0
    (d / "beta.py").unlink()  # a proof script deleted (or renamed): its claims are no longer run
    capsys.readouterr()
    assert main(["prove", "--dir", str(d), "-j", "1", "--golden", golden]) == 1
    out = capsys.readouterr().out
    assert "differs from the golden run" in out and 'beta: script: "beta" → (none)' in out
    # named scripts are still compared with their part of the golden run
    assert main(["prove", "--dir", str(d), "alpha", "-j", "1", "--golden", golden]) == 0


def test_a_golden_record_of_an_argued_claim_keeps_whether_its_checks_ran():
    from symverify.scripts.protocol import Instance, ProofResult
    from symverify.testing import golden_record

    held = Instance.argued("it holds", "docs/theory.md § 1", checks=True)
    not_run = Instance.argued("it holds", "docs/theory.md § 1")  # still ok: nothing failed, nothing was checked
    assert held.ok and not_run.ok
    assert golden_record(held)["checks"] is True and "checks" not in golden_record(not_run)
    assert golden_record(ProofResult("p", "t", [held])) != golden_record(ProofResult("p", "t", [not_run]))
    assert golden_record({"claim": held}) != golden_record({"claim": not_run})


def _hyena_and_h3():
    from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

    torch.manual_seed(0)
    return ZoologyHyena(2, l_max=4).eval(), ZoologyH3(2).eval()


def test_a_torch_stack_with_a_forward_hook_is_not_read_as_its_weights():
    from symverify.executors.export import from_torch, to_torch
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.grid import Grid

    m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    mod = to_torch(m)
    handle = mod.register_forward_hook(lambda module, args, out: 2 * out)  # mod(u) is now 2·m(u)
    u = torch.tensor([[3.0], [-2.0]], dtype=torch.float64)
    assert mod(u).tolist() == [[18.0], [8.0]]
    with pytest.raises(CompileError, match=r"from_torch: the module \(BaseConvStack\) has a forward hook"):
        from_torch(mod)  # it was read as m and proved equal to it
    handle.remove()
    assert sv.verify(from_torch(mod), m).proved


@pytest.mark.parametrize("hook", ["forward", "forward_pre", "state_dict_pre", "state_dict_post"])
def test_zoology_modules_with_hooks_are_refused(hook):
    from symverify.compiler.gated import gated_from_zoology
    from symverify.executors.zoology import ZoologyBaseConv, from_zoology

    z = ZoologyBaseConv(2, 3)
    fns = {"forward": lambda mod, args, out: out + 1, "forward_pre": lambda mod, args: None,
           "state_dict_pre": lambda mod, prefix, keep_vars: None, "state_dict_post": lambda mod, sd, prefix, local: None}
    handle = getattr(z.projection, f"register_{hook}_hook")(fns[hook])
    with pytest.raises(CompileError, match=r"from_zoology: submodule 'projection' \(Linear\) has a"):
        from_zoology(z)
    with pytest.raises(CompileError, match=r"from_zoology: submodule '1.projection' \(Linear\) has a"):
        from_zoology(torch.nn.Sequential(ZoologyBaseConv(2, 3), z))
    with pytest.raises(CompileError, match=r"from_zoology: element 1: submodule 'projection' \(Linear\) has a"):
        from_zoology([ZoologyBaseConv(2, 3), z])
    handle.remove()
    from_zoology(z)
    for module in _hyena_and_h3():
        handle = getattr(module, f"register_{hook}_hook")(fns[hook])
        with pytest.raises(CompileError, match=r"from zoology: the module \(Zoology(Hyena|H3)\) has a"):
            gated_from_zoology(module, 3)
        handle.remove()


def test_a_container_or_global_forward_hook_is_refused():
    from symverify.executors.zoology import ZoologyBaseConv, from_zoology

    seq = torch.nn.Sequential(ZoologyBaseConv(2, 3))
    handle = seq.register_forward_hook(lambda mod, args, out: 3 * out)
    with pytest.raises(CompileError, match=r"from_zoology: the module \(Sequential\) has a forward hook"):
        from_zoology(seq)
    handle.remove()
    handle = torch.nn.modules.module.register_module_forward_hook(lambda mod, args, out: out)
    try:
        with pytest.raises(CompileError, match="a global forward hook is registered"):
            from_zoology(seq)
    finally:
        handle.remove()
    assert from_zoology(seq).signature[0] == 3


def test_from_torch_leaves_the_module_running_the_weights_it_read():
    from symverify.executors import execute
    from symverify.executors.export import from_torch, to_torch
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.grid import Grid

    m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    mod = to_torch(m)
    u = torch.tensor([[3.0], [-2.0]], dtype=torch.float64)
    assert mod(u).tolist() == [[9.0], [4.0]]
    mod.layers[0].W.data[0, 0] = 5.0  # `.data` changes no version: the module kept running W = 1
    read = from_torch(mod)
    assert read.layers[0].W.to_rows() == [[5]]
    assert mod(u).tolist() == [[45.0], [20.0]] == execute(read, [[3], [-2]]).tolist()


def _zoology_with(**extra):
    from symverify.executors.zoology import ZoologyBaseConv

    class WithExtras(ZoologyBaseConv):  # a user's variant: the same state-dict keys, more in its forward
        def __init__(self) -> None:
            super().__init__(2, 3)
            for name, sub in extra.items():
                setattr(self, name, sub)

        def forward(self, u):
            y = self.conv(u) * self.projection(u)
            for name in extra:
                y = getattr(self, name)(y)
            return y + u

    return WithExtras()


def test_zoology_layers_with_an_activation_or_active_dropout_are_refused():
    from symverify.executors.zoology import from_zoology

    z = _zoology_with(act=torch.nn.SiLU())
    assert sorted(z.state_dict()) == ["conv.filter", "projection.bias", "projection.weight"]
    with pytest.raises(CompileError, match=r"from_zoology: element 0: submodule 'act' \(SiLU\) applies SiLU"):
        from_zoology(z)  # it was read as the polynomial layer without the SiLU
    z = _zoology_with(drop=torch.nn.Dropout(0.25))
    with pytest.raises(CompileError, match=r"from_zoology: element 1 \(WithExtras\) has active dropout"):
        from_zoology([_zoology_with(), z])
    assert from_zoology(z.eval()).signature == from_zoology(_zoology_with()).signature


def test_from_torch_refuses_subclasses_with_their_own_forward_pass():
    from symverify.executors.export import BaseConvLayer, BaseConvStack, from_torch, to_torch
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.grid import Grid

    m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))

    class Residual(BaseConvStack):  # u + the stack: not the model its weights describe
        def forward(self, u):
            return super().forward(u) + u

    mod = to_torch(m)
    mod.__class__ = Residual
    assert mod(torch.tensor([[3.0], [-2.0]], dtype=torch.float64)).tolist() == [[12.0], [2.0]]
    with pytest.raises(CompileError, match=r"the module \(Residual\) overrides BaseConvStack.forward"):
        from_torch(mod)

    class OwnPlan(BaseConvLayer):
        def plan(self, dtype, device):
            return super().plan(dtype, device)

    mod = to_torch(m)
    mod.layers[0].__class__ = OwnPlan
    with pytest.raises(CompileError, match=r"layer 0 \(OwnPlan\) overrides BaseConvLayer.plan"):
        from_torch(mod)
    mod = to_torch(m)
    mod.layers = torch.nn.ModuleList([torch.nn.Identity()])
    with pytest.raises(CompileError, match="layer 0: expected a BaseConvLayer, found Identity"):
        from_torch(mod)


def test_an_unknown_report_in_a_numpy_object_array_is_refused(tmp_path):
    import numpy as np

    from symverify.pytest_plugin import GoldenFile, _unsettled

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    unknown = sv.verify(c, c, timeout=1e-9)
    assert unknown.verdict.value == "unknown"
    value = {"reports": np.array([[unknown]], dtype=object)}
    assert "verdict is unknown" in _unsettled(value)
    assert _unsettled({"reports": np.array([sv.verify(c, c)], dtype=object), "n": np.arange(3)}) == ""
    for update in (True, False):
        golden = GoldenFile(tmp_path, "t", update)
        with pytest.raises(pytest.fail.Exception, match="verdict is unknown"):
            golden.check(value)  # it was stored, and then matched on every run
    assert not list(tmp_path.iterdir())


def test_mutation_options_an_operator_does_not_read_are_refused():
    from symverify import mutate
    from symverify.errors import UsageError
    from symverify.kernel.ir.circuit import Circuit, Gate

    c = Circuit(1, 3, (Gate.mul(0, 1), Gate.lin(3, 1, 2, 1)), (4,))
    with pytest.raises(UsageError, match="symbol='x' is the parameter of operator 'coeff_sym' only; found operator 'coeff'"):
        mutate.mutate_gate(c, 1, "coeff", which=1, symbol="x")  # the coefficient became 2, not x
    with pytest.raises(UsageError, match=r"which=1 picks the coefficient or operand .* found operator 'op'"):
        mutate.mutate_gate(c, 0, "op", which=1)
    assert mutate.mutate_gate(c, 1, "coeff_sym", which=1, symbol="x").gates[1].coeffs == (1, sv.sym("x"))
    model = sv.compile(c).model
    site = mutate.weight_sites(model)[0]
    with pytest.raises(UsageError, match="symbol='q' is the parameter of operator 'sym' only; found operator 'inc'"):
        mutate.mutate_weight(model, site, "inc", symbol="q")
    assert mutate.get_weight(mutate.mutate_weight(model, site, "sym", symbol="q"), site) == sv.sym("q")
    for seed in range(6):  # the campaigns pass symbol to the operators that read it only
        mutate.weight_mutant(model, seed, ("inc", "sym"), symbol="q")
        mutate.gate_mutant(c, seed, ("op", "coeff", "coeff_sym"), symbol="q")


@pytest.mark.parametrize("act", ["ReLU", "LeakyReLU", "Tanh", "Sigmoid", "Softplus", "Hardswish", "Mish", "SELU"])
def test_common_activations_are_named_as_not_polynomial(act):
    from symverify.compiler.gated import gated_from_zoology
    from symverify.executors.zoology import from_zoology

    z = _zoology_with(act=getattr(torch.nn, act)())
    with pytest.raises(CompileError, match=rf"from_zoology: element 0: submodule 'act' \({act}\) applies .* not polynomial"):
        from_zoology(z)  # read as the polynomial layer without the activation
    hyena, _ = _hyena_and_h3()
    hyena.act = getattr(torch.nn, act)()
    with pytest.raises(CompileError, match=rf"submodule 'act' \({act}\) applies .* not polynomial"):
        gated_from_zoology(hyena, 3)
