"""symverify.executors.zoology_gated and symverify.library (RetNet): the refusals of modules that
are not in the forms followed (a weight that is not a tensor, a projection of another shape, a
short filter that is not depthwise or not causal, a long filter or kernel of another shape), and
of RetNet layouts with malformed arguments.

Each test names the function it is for; a module read anyway would give a circuit of another
function, so the refusal is the behaviour that matters.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from symverify.compiler.gated import gated_from_zoology  # noqa: E402
from symverify.errors import CompileError, IRError  # noqa: E402
from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena  # noqa: E402
from symverify.library import retnet_layout, retnet_weights  # noqa: E402


def hyena(d: int = 2, n: int = 4) -> nn.Module:
    torch.manual_seed(0)
    return ZoologyHyena(d, n).double().eval()


def h3(d: int = 2, n: int = 4) -> nn.Module:
    torch.manual_seed(0)
    return ZoologyH3(d, 4, n).double().eval()


def test_a_weight_that_is_not_a_tensor():
    """_exact: D given as a list is refused, not read."""
    m = h3()
    del m.D
    m.D = [1.0, 2.0]
    with pytest.raises(CompileError, match="from zoology: D: expected a tensor, found list"):
        gated_from_zoology(m, 4)


def test_a_projection_of_another_shape():
    """_linear: in_proj must map d to 3d."""
    m = hyena()
    m.in_proj = nn.Linear(2, 5).double()
    with pytest.raises(CompileError, match=r"from zoology: in_proj.weight: expected shape \(6, 2\), found \(5, 2\)"):
        gated_from_zoology(m, 4)


def test_a_short_filter_that_is_not_depthwise():
    """_hyena: a Conv1d mixing channels is not the depthwise short filter."""
    m = hyena()
    m.short_filter = nn.Conv1d(6, 6, kernel_size=3, groups=3, padding=2).double()
    with pytest.raises(CompileError, match=r"short_filter: expected a depthwise Conv1d of weight shape \(6, 1, K\)"):
        gated_from_zoology(m, 4)


def test_a_short_filter_with_other_padding():
    """_hyena: padding other than K − 1 is not the causal filter after truncation."""
    m = hyena()
    m.short_filter = nn.Conv1d(6, 6, kernel_size=3, groups=6, padding=1).double()
    with pytest.raises(CompileError, match=r"short_filter.padding: expected 2 \(causal after truncation\), found \(1,\)"):
        gated_from_zoology(m, 4)


def test_a_long_filter_of_another_shape(monkeypatch):
    """_hyena: the implicit filter must give (1, N, d)."""
    m = hyena()
    monkeypatch.setattr(m.filter_fn, "filter", lambda L: torch.zeros(1, L, 3, dtype=torch.float64))
    with pytest.raises(CompileError, match=r"filter_fn.filter\(4\): expected shape \(1, 4, 2\), found \(1, 4, 3\)"):
        gated_from_zoology(m, 4)


def test_an_ssm_kernel_of_another_shape(monkeypatch):
    """_kernel: an H3 kernel must be (1, H, L)."""
    m = h3()
    monkeypatch.setattr(m.kernel, "forward", lambda L, state=None, rate=1.0: torch.zeros(1, 2, L + 1, dtype=torch.float64))
    with pytest.raises(CompileError, match=r"kernel\(L=4\): expected a kernel of shape \(1, 2, 4\), found \(1, 2, 5\)"):
        gated_from_zoology(m, 4)


def test_retnet_weights_need_a_positive_int_d():
    """library.retnet_weights."""
    for d in (0, -1, 2.0, True):
        with pytest.raises(IRError, match="retnet: expected a positive int d"):
            retnet_weights(d)


def test_retnet_layout_refuses_other_layers_and_names():
    """library.retnet_layout: a layer that is not RetNetWeights; a name that is not a str is refused
    before the memo, naming the function; a str name is memoised (same object)."""
    w = retnet_weights(1, gamma=1, W_A=[[1]], W_C=[[2]], W_V=[[3]])
    with pytest.raises(IRError, match="retnet layer 1: expected RetNetWeights, found dict"):
        retnet_layout(2, 1, [w, {"gamma": 1}])  # type: ignore[list-item]
    with pytest.raises(IRError, match="retnet: expected a str name or None, found int 5"):
        retnet_layout(2, 1, [w], 5)  # type: ignore[arg-type]
    assert retnet_layout(2, 1, [w], "r")[0] is retnet_layout(2, 1, [w], "r")[0]
