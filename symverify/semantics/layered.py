"""The layered form's semantic check: every slot of every stage holds the node that labels it.

:func:`symverify.ir.layered.layered_form` builds the stages; this module evaluates them against the
circuit (:func:`~symverify.semantics.evaluate.eval_circuit_nodes`) in any ring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symverify.errors import IRError
from symverify.ir.circuit import Circuit
from symverify.ir.layered import LayeredForm
from symverify.ir.scalar import show_scalar
from symverify.semantics.evaluate import eval_circuit_nodes

__all__ = ["check_layered"]


def check_layered(c: Circuit, lf: LayeredForm, ring: Any, inputs: Sequence[Any]) -> None:
    """Evaluate both on ``inputs``; every slot must equal the value of the node that labels it."""
    vals = eval_circuit_nodes(c, list(inputs), ring)
    z = list(inputs)
    for i, st in enumerate(lf.stages):
        z = st.apply(z, ring)
        for slot, (label, got) in enumerate(zip(st.outputs, z)):
            if got != vals[label]:
                raise IRError(f"layered form stage {i}: slot {slot} should hold node %{label} = {show_scalar(vals[label])}, "
                              f"holds {show_scalar(got)}")
    if list(z) != [vals[o] for o in c.outputs]:
        raise IRError("layered form: the last state is not the circuit's output list")
