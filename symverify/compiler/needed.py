"""The needed part of a circuit: what the compilers plan (Theorem H.21 and the dense baseline).

A gate no output depends on changes no output, but its reads keep values live in the circuit's
layered form (``live_ℓ`` counts every read, docs/theory.md §2), so the stages would carry values
nothing needed reads. Both compilers plan :func:`needed_part` instead; the depth ``Δ``, the cut
width ``w`` and the stated bounds stay those of the circuit as given, and the certificate, which
names only needed nodes (whose gates are the circuit's own), is checked against that circuit.
"""

from __future__ import annotations

from symverify.errors import CompileError
from symverify.kernel.ir.analysis import needed_nodes
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.gate import Gate

__all__ = ["needed_part"]


def needed_part(c: Circuit) -> Circuit:
    """``c`` with every gate no output depends on replaced by the constant 0 (``c`` itself when there
    is none): the same node numbers and outputs, so the same output polynomials.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> needed_part(Circuit(1, 2, (Gate.mul(0, 1), Gate.add(0, 1)), (3,))).gates[0].op.name
    'CONST'

    Anything but a :class:`Circuit` is a :class:`~symverify.errors.CompileError`.
    """
    if not isinstance(c, Circuit):
        raise CompileError(f"needed_part: expected a Circuit, found {type(c).__name__}")
    need = needed_nodes(c)
    nd = c.num_inputs
    if all(nd + k in need for k in range(len(c.gates))):
        return c
    zero = Gate.const(0)
    return Circuit(c.n, c.d, tuple(g if nd + k in need else zero for k, g in enumerate(c.gates)), c.outputs, c.name)
