"""Kaleidoscope helpers outside the kernel: ``structured_stages`` declines circuits that are not
linear (a product stage, or an affine offset), and ``side_seconds`` prices a kaleidoscope side by
its own cost on python ints whatever the engine asked for.

Each test names the function it is for and why its assertion bites.
"""

import pytest

from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.kaleidoscope.structured import structured_kaleidoscope, structured_stages
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.layered import layered_form
from symverify.kernel.provers.sides import as_side
from symverify.provers.engine_cost import COSTS, side_seconds


@pytest.mark.parametrize("c", [
    Circuit(1, 2, (Gate.mul(0, 1),), (2,)),  # a product stage
    Circuit(1, 2, (Gate.const(1), Gate.add(0, 2)), (3, 1)),  # x0 + 1: an affine offset
])
def test_structured_stages_decline_what_is_not_linear(c):
    """structured_stages: None, so the caller takes a general construction (a factor built for x·y
    or x + 1 would compute another function)."""
    lf = layered_form(c)
    assert structured_stages(lf.stages, c.n * c.d, len(c.outputs)) is None
    assert structured_kaleidoscope(lf.stages, c.n * c.d, len(c.outputs)) is None


def test_structured_stages_of_a_linear_circuit():
    """The same function on a linear circuit gives factors (the decline above is not a blanket None)."""
    c = Circuit(1, 2, (Gate.add(0, 1), Gate.sub(0, 1)), (2, 3))
    lf = layered_form(c)
    assert structured_stages(lf.stages, 2, 2) is not None


@pytest.mark.parametrize("engine", ["python", "torch"])
def test_a_kaleidoscope_side_is_priced_by_its_cost(engine):
    """side_seconds: a kaleidoscope runs on python ints only: cost × PY_CELL for either engine and
    any batch."""
    side = as_side(permutation_to_kaleidoscope([1, 0, 3, 2]))
    assert side_seconds(side, engine, batch=64) == side.cost() * COSTS["PY_CELL"] > 0
