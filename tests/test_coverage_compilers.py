"""Compilers outside the kernel: ``planned_size`` (the H.21 layout without emitting a gadget) is
the inner size the kaleidoscope compiler then builds, and ``retnet_stack_direct`` refuses an empty
stack.

Each test names the function it is for; the oracle for ``planned_size`` is the compiled model
itself.
"""

import pytest

import symverify as sv
from symverify.compiler.h21 import planned_size
from symverify.compiler.retnet import retnet_stack_direct
from symverify.errors import CompileError
from symverify.library import determinant, random_circuit


@pytest.mark.parametrize("c", [determinant(2), random_circuit(3, 2, 12, 3, seed=1)])
def test_planned_size_is_the_compiled_inner_size(c):
    """compiler.h21.planner.planned_size."""
    lay = planned_size(c)
    model = sv.compile(c, method="kaleidoscope").model
    assert (model.inner_n, model.inner_d) == (lay.rows, lay.width)


@pytest.mark.parametrize("layers", [[], 0])
def test_retnet_stack_direct_needs_a_layer(layers):
    """compiler.retnet.retnet_stack_direct: no layers is refused (an empty model would compute the
    zero map, not a RetNet)."""
    with pytest.raises(CompileError, match="retnet_stack_direct: "):
        retnet_stack_direct(2, 1, layers)
