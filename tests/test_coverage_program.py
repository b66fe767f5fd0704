"""symverify.executors.program: the convolution's first two terms in one call (both unit taps:
one add; a unit then another tap: one addcmul), a first term that is not a unit tap (one mul), and
a sparse channel map with two entries per column (a gather into the scratch buffer, then addcmul).

The models below are built so that the program takes exactly these paths (full-support cyclic
layers with a projection of 2: every lag spans the same rows and unit taps stay units; ``d' = 64`` so that a ``W`` with two entries per column is
planned as sparse). The oracle is exact evaluation (``execute(..., backend="exact")``) on integer
inputs, and the generic layer loop on real inputs (bit for bit).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from symverify.executors import execute  # noqa: E402
from symverify.executors.program import model_program  # noqa: E402
from symverify.executors.torch_float import FloatArithmetic, run_model  # noqa: E402
from symverify.kernel.engines.kernels import Pool  # noqa: E402
from symverify.kernel.engines.numbers import float_numbers  # noqa: E402
from symverify.kernel.engines.plan import model_plan  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402
from symverify.kernel.semantics import layer as loop  # noqa: E402


def _loop(m: Model, x):
    plan = model_plan(m, float_numbers(None))
    return loop.run_model(m, plan.on(x.device, x.dtype), x, FloatArithmetic("auto", Pool()))


def check(m: Model, b: int = 3) -> None:
    plan = model_plan(m, float_numbers(None))
    u = torch.randint(-3, 4, (b, m.n, m.d), generator=torch.Generator().manual_seed(b)).double()
    assert model_program(plan.on(u.device, u.dtype), m.layers, m.n, m.d, m.inner_n, m.inner_d, u, "auto") is not None
    got = run_model(plan, u)
    exact = execute(m, u.long().tolist(), backend="exact")
    assert got.tolist() == [[[float(v) for v in row] for row in pt] for pt in exact.tolist()]
    real = torch.randn(b, m.n, m.d, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    assert torch.equal(run_model(plan, real), _loop(m, real))


def conv(n: int, d: int, taps: dict[int, int]) -> Layer:
    """A full-support cyclic convolution: projection b1 = 2 everywhere (not 0/±1, so it is not folded
    into the taps and unit taps stay units), h with ``taps`` on every channel."""
    h = Grid.from_cells(n, d, {(k, j): v for k, v in taps.items() for j in range(d)})
    return Layer.make(n, d, b1=Grid.full(n, d, 2), h=h, mode="cyclic")


@pytest.mark.parametrize("taps", [{0: 1, 1: 1}, {0: 1, 2: 3}, {0: 2, 1: 1}, {1: -1, 3: 1, 2: 1}])
def test_first_two_terms_of_a_full_support_convolution(taps):
    """_Builder.convolve: unit+unit (add), unit+other (addcmul), other first (mul), each followed by
    another layer of the same kind so the terms read a state of full support."""
    n, d = 4, 2
    m = Model(n, d, n, d, (conv(n, d, taps), conv(n, d, taps)))
    check(m)


def test_sparse_channel_map_with_two_entries_per_column():
    """_Builder.project: d' = 64 and W = I + (j ↦ j ⊕ 1) has two entries per column, planned as
    sparse: the second term is gathered into the scratch buffer."""
    n, d = 2, 64
    W = Grid.from_cells(d, d, {**{(j, j): 1 for j in range(d)}, **{(j ^ 1, j): 2 for j in range(d)}})
    mix = Layer.make(n, d, W=W, b2=Grid.full(n, d, 1))
    plan = model_plan(Model(n, d, n, d, (mix,)), float_numbers(None))
    assert plan.on(torch.device("cpu"), torch.float64)[0].w_kind == "sparse"
    check(Model(n, d, n, d, (mix, mix)), b=2)
