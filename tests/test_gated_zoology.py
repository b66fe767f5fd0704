"""zoology Hyena / H3 modules (local faithful forms) read exactly, proved, and cross-checked in floats."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
from torch import nn

import symverify as sv
from symverify.compiler.gated import gated_from_zoology
from symverify.errors import CompileError
from symverify.executors import execute
from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena, gated_kind, gated_weights_from_zoology
from symverify.semantics.exact import evaluate


def _module(kind: str, d: int, n: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    mod = ZoologyHyena(d, n) if kind == "hyena" else ZoologyH3(d, 4, n)
    return mod.double().eval()


@pytest.mark.parametrize("kind", ["hyena", "h3"])
@pytest.mark.parametrize("seed", range(2))
def test_module_is_proved_and_agrees(kind, seed):
    n, d = 12, 2
    mod = _module(kind, d, n, seed)
    circuit, compiled = gated_from_zoology(mod, n)
    assert not circuit.params()
    assert sv.verify(circuit, compiled).verdict.value == "proved"
    u = torch.randn(3, n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        want = mod(u).numpy()
    got = execute(compiled.model, u, backend="torch", dtype="float64").numpy()
    assert np.abs(got - want).max() <= 1e-10 * max(1.0, np.abs(want).max())
    # the circuit, exactly, on the (dyadic) input agrees with the float forward to float64 error
    exact = np.array(evaluate(circuit, [[Fraction(float(x)) for x in row] for row in u[0].tolist()]), dtype=float)
    assert np.abs(exact - want[0]).max() <= 1e-10 * max(1.0, np.abs(want).max())


def test_weights_are_exact_module_values():
    mod = _module("hyena", 2, 8, 0)
    w = gated_weights_from_zoology(mod, 8)
    assert w.W_in[1][4] == Fraction(mod.in_proj.weight[4, 1].item())
    assert w.short[5][0] == Fraction(mod.short_filter.weight[5, 0, 2].item())  # causal tap 0 = last kernel entry
    assert w.long_skip[0][1] == Fraction(mod.filter_fn.bias[1].item())
    assert gated_kind(mod) == "hyena" and gated_kind(_module("h3", 2, 8, 0)) == "h3"


def test_float32_module_is_read_without_rounding():
    torch.manual_seed(3)
    mod = ZoologyHyena(2, 6).eval()
    w = gated_weights_from_zoology(mod, 6)
    assert all(Fraction(torch.tensor(float(x), dtype=torch.float32).item()) == x for x in w.b_in)


def test_h3_kernel_shorter_than_sequence():
    torch.manual_seed(1)
    mod = ZoologyH3(2, 3, l_max=5).double().eval()
    circuit, compiled = gated_from_zoology(mod, 8)
    assert sv.verify(circuit, compiled).verdict.value == "proved"
    u = torch.randn(1, 8, 2, dtype=torch.float64)
    with torch.no_grad():
        want = mod(u).numpy()
    assert np.allclose(execute(compiled.model, u, backend="torch").numpy(), want, atol=1e-10)


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(2, 2)


class Mamba(nn.Module):
    pass


class HyenaWithNorm(ZoologyHyena):
    def __init__(self) -> None:
        super().__init__(2, 4)
        self.norm = nn.LayerNorm(2)


@pytest.mark.parametrize(("obj", "match"), [
    (Attention(), "softmax"),
    (Mamba(), "selection"),
    (HyenaWithNorm(), "normalisation"),
    (nn.GELU(), "GELU"),
    (nn.Linear(2, 2), "expected a Hyena module"),
    ("hyena", "expected a Hyena module"),
])
def test_non_polynomial_modules_are_refused(obj, match):
    with pytest.raises(CompileError, match=match):
        gated_from_zoology(obj, 4)


def test_variants_outside_the_forms_are_refused():
    mod = _module("hyena", 2, 4, 0)
    with pytest.raises(CompileError, match="seq_len must be a positive int"):
        gated_from_zoology(mod, 0)
    with pytest.raises(CompileError, match=r"exceeds .*l_max"):
        gated_from_zoology(mod, 5)
    mod.bidirectional = True
    with pytest.raises(CompileError, match="bidirectional"):
        gated_from_zoology(mod, 4)
    mod.bidirectional, mod.num_heads = False, 2
    with pytest.raises(CompileError, match="num_heads: expected 1"):
        gated_from_zoology(mod, 4)
    mod.num_heads = 1
    mod.dropout = nn.Dropout(0.1)
    mod.train()
    with pytest.raises(CompileError, match="active dropout"):
        gated_from_zoology(mod, 4)
    h3 = _module("h3", 2, 4, 0)
    h3.head_dim = 2
    with pytest.raises(CompileError, match="head_dim: expected 1"):
        gated_from_zoology(h3, 4)
    h3 = _module("h3", 2, 4, 0)
    with torch.no_grad():
        h3.D[0] = float("nan")
    with pytest.raises(CompileError, match=r"D\[0\]: expected a finite number"):
        gated_from_zoology(h3, 4)


def test_benchmark_quick_runs(monkeypatch, capsys):
    """``benchmarks/gated_zoology.py``'s rows (local forms, a small size) prove and agree in float64."""
    import importlib.util
    import pathlib

    monkeypatch.delenv("ZOOLOGY_SRC", raising=False)
    path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "gated_zoology.py"
    spec = importlib.util.spec_from_file_location("bench_gated_zoology", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.repo_classes() == ({}, "ZOOLOGY_SRC is not set: the repository's Hyena and H3 are skipped (local forms only)")
    assert mod.run_one("local Hyena", lambda N, d: ZoologyHyena(d, N), 8, 2)
    assert mod.run_one("local H3", lambda N, d: ZoologyH3(d, 4, N), 8, 2)
    out = capsys.readouterr().out
    assert out.count(" ok") == 2 and "FAIL" not in out
