"""The semantics of the layered form (:mod:`symverify.kernel.ir.layered`) in any ring, and its check.

A linear stage computes ``out[r] = Σ coeff·in[slot] + offset[r]``; a multiplicative stage routes
with ``perm`` and multiplies ``v1 ⊙ v2`` (keeping ``v3``). :func:`check_layered` evaluates every
stage against the circuit (:func:`~symverify.kernel.semantics.evaluate.eval_circuit_nodes`): each slot
must hold the node that labels it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symverify.errors import IRError
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.layered import LayeredForm, LinearStage, MulStage, Stage
from symverify.kernel.ir.scalar import is_zero, show_scalar
from symverify.kernel.semantics.evaluate import eval_circuit_nodes
from symverify.kernel.semantics.rings import Ring

__all__ = ["apply_stage", "check_layered"]


def apply_stage(st: Stage, z: Sequence[Any], ring: Ring) -> list[Any]:
    """One stage on the state ``z``; ``st`` neither a :class:`LinearStage` nor a :class:`MulStage` is
    an :class:`IRError` (it returned None)."""
    match st:
        case LinearStage():
            out = []
            for row, off in zip(st.rows, st.offset):
                acc = ring.coerce(off) if not is_zero(off) else ring.zero
                for slot, co in row:
                    acc = acc + ring.coerce(co) * z[slot]
                out.append(ring.reduce(acc))
            return out
        case MulStage():
            r = [z[p] for p in st.perm]
            k = st.k
            return [ring.reduce(r[i] * r[k + i]) for i in range(k)] + r[2 * k :]
        case _:
            raise IRError(f"apply_stage: expected a LinearStage or MulStage, found {type(st).__name__}")


def check_layered(c: Circuit, lf: LayeredForm, ring: Ring, inputs: Sequence[Any]) -> None:
    """Evaluate both on ``inputs``; every slot must equal the value of the node that labels it.
    ``c`` not a :class:`Circuit`, ``lf`` not a :class:`LayeredForm` or ``inputs`` not a list or tuple
    is an :class:`IRError` too."""
    for what, v, cls in (("c", c, Circuit), ("lf", lf, LayeredForm), ("inputs", inputs, (list, tuple))):
        if not isinstance(v, cls):
            want = "a list or tuple" if cls == (list, tuple) else f"a {cls.__name__}"  # type: ignore[union-attr]
            raise IRError(f"check_layered: {what}: expected {want}, found {type(v).__name__}")
    vals = eval_circuit_nodes(c, list(inputs), ring)
    z = list(inputs)
    for i, st in enumerate(lf.stages):
        z = apply_stage(st, z, ring)
        for slot, (label, got) in enumerate(zip(st.outputs, z)):
            if got != vals[label]:
                raise IRError(f"layered form stage {i}: slot {slot} should hold node %{label} = {show_scalar(vals[label])}, "
                              f"holds {show_scalar(got)}")
    if list(z) != [vals[o] for o in c.outputs]:
        raise IRError("layered form: the last state is not the circuit's output list")
