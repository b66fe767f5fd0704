"""The matrix of a linear circuit: exact-matrix's other side (docs/theory.md §2).

A linear circuit (inputs and ``lin`` gates only) on ``n = n_rows·d`` inputs computes
``vec(y) = M·vec(u)`` for an ``n×n`` matrix ``M`` (rows past the output list are 0);
:func:`circuit_matrix` reads ``M`` from the circuit's linear forms, evaluated over affine forms by the
circuit interpreter. Compiling the circuit into a kaleidoscope (Theorem H.19) is
:mod:`symverify.kaleidoscope.linear`, outside the trusted base.
"""

from __future__ import annotations

from symverify.deadline import Check
from symverify.errors import CompileError
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.kaleidoscope.matrix import SparseMatrix
from symverify.kernel.semantics.rings import AffineRing

__all__ = ["check_linear", "circuit_matrix"]

def check_linear(c: Circuit, what: str = "linear circuit") -> None:
    """Raise :class:`CompileError` listing every gate that is not a ``lin`` gate (or saying that
    ``c`` is no :class:`Circuit`)."""
    if not isinstance(c, Circuit):
        raise CompileError(f"{what}: expected a Circuit, found {type(c).__name__}")
    bad = [f"gate {k} (node %{c.num_inputs + k}) is {g.op.value}" for k, g in enumerate(c.gates) if g.op is not Op.LIN]
    if bad:
        raise CompileError(f"{what} {c.name or '<unnamed>'}: expected only inputs and lin gates; " + "; ".join(bad))


def circuit_matrix(c: Circuit, check: Check | None = None) -> SparseMatrix:
    """The exact ``n×n`` matrix of a linear circuit (``n = n_rows·d``), from its linear forms;
    ``check`` (a deadline checker, :mod:`symverify.deadline`) runs between blocks of gates.

    >>> from symverify.kernel.ir.circuit import Gate
    >>> circuit_matrix(Circuit(2, 1, (Gate.add(0, 1), Gate.sub(0, 1)), (2, 3))).to_dense()
    [[1, 1], [1, -1]]
    """
    from symverify.kernel.semantics.evaluate import eval_circuit_nodes

    check_linear(c)
    nd = c.num_inputs
    ring = AffineRing()
    vals = eval_circuit_nodes(c, [Affine.unit(j) for j in range(nd)], ring, check)
    return SparseMatrix(nd, nd, tuple((i, j, v) for i, o in enumerate(c.outputs) for j, v in vals[o]))
