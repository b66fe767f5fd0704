"""symverify.executors.zoology: state dicts with zoology's keys but values that are not tensors, or a
projection that is not square, are refused with the element and key named.

Each test names the function it is for; reading such a dict anyway would build a model of another
function or fail deep inside torch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from symverify.errors import CompileError, ShapeError  # noqa: E402
from symverify.executors import ZoologyBaseConv, from_zoology  # noqa: E402


def state(d: int = 2, n: int = 4) -> dict:
    return dict(ZoologyBaseConv(d, n).double().state_dict())


def test_values_that_are_not_tensors():
    """_weights: every value under the three keys is a tensor."""
    sd = state()
    sd["conv.filter"] = sd["conv.filter"].tolist()
    with pytest.raises(CompileError, match=r"from_zoology: element 0: expected tensors under projection\.weight, "):
        from_zoology(sd)


def test_a_projection_that_is_not_square():
    """_weights: projection.weight is (d, d)."""
    sd = state()
    sd["projection.weight"] = torch.zeros(2, 3, dtype=torch.float64)
    with pytest.raises(ShapeError, match=r"layer 0 projection.weight: expected a square \(d, d\) matrix, found shape \(2, 3\)"):
        from_zoology(sd)
    sd["projection.weight"] = torch.zeros(2, dtype=torch.float64)
    with pytest.raises(ShapeError, match=r"found shape \(2,\)"):
        from_zoology(sd)
