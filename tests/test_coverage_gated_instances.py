"""symverify.scripts.gated_instances.mutation_instance: a weight whose +1 leaves the function
unchanged is a missed mutant, and the instance is then refuted with the count.

The model is the identity on one input, ``(0·u + b1) ⊙ (h ⊛ u)`` with ``b1[0] = h[0] = 1``, padded
to N' = 2 with ``b1[1] = 5``: row 1 of the state is never an output and its convolution reads only
the zero padding, so ``b1[1] + 1`` is invisible (checked here by exact evaluation) while the
other two mutants double the output.
"""

import symverify as sv
from symverify.executors import execute
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.scripts.gated_instances import mutation_instance

IDENTITY = Circuit(1, 1, (), (0,))
MODEL = Model(1, 1, 2, 1, (Layer.make(2, 1, b1=Grid.from_rows([[1], [5]]), h=Grid.from_rows([[1], [0]])),))


def build(N, d, order):
    return IDENTITY, sv.Compiled(MODEL, None, {"inner_n": MODEL.inner_n}, "direct")


def test_an_invisible_mutant_is_missed():
    harmless = Model(1, 1, 2, 1, (Layer.make(2, 1, b1=Grid.from_rows([[1], [6]]), h=Grid.from_rows([[1], [0]])),))
    assert execute(harmless, [[[3]]]).tolist() == execute(MODEL, [[[3]]]).tolist() == [[[3]]]
    inst = mutation_instance("id", build, 1, 1)
    assert inst.verdict is sv.Verdict.REFUTED and not inst.ok
    assert inst.resources == {"mutants": 3, "missed": 1}
