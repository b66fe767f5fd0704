"""Exact rational evaluation of circuits and models (the oracle every other backend is checked against)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from symverify.errors import IRError
from symverify.ir import limits
from symverify.kernel.ir.analysis import check_known, check_state, model_of
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import as_scalar, show_scalar
from symverify.kernel.semantics.evaluate import check_input, eval_circuit, eval_model
from symverify.kernel.semantics.rings import FractionRing

__all__ = ["evaluate"]


def evaluate(obj: Circuit | Model, u: Sequence[Sequence[object]], params: Mapping[str, object] | None = None) -> list[list[int | Fraction]]:
    """The exact ``n×d`` output of a circuit or model on the rational input ``u``.

    Symbolic weights or coefficients need a value in ``params`` (an exact rational: a symbolic value is an
    :class:`IRError`), and every name there must be one. Circuits of more than
    ``MAX_INPUTS`` inputs and models whose state has more than ``MAX_CELLS`` cells are refused
    (:mod:`symverify.ir.limits`), and so is a value whose numerator or denominator would have more
    than ``MAX_VALUE_BITS`` bits (``2^20``): a :class:`~symverify.errors.LimitError` naming the gate
    (in a model, the layer), raised at the first gate beyond it (``x^(2^100000)`` at ``x = 2`` would never finish); set
    ``symverify.ir.limits.MAX_VALUE_BITS`` higher to compute larger values.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> evaluate(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), [[3, "1/2"]])
    [[Fraction(3, 2), 0]]
    """
    obj = model_of(obj)  # a compiled object: its model
    if not isinstance(obj, (Circuit, Model)):
        raise IRError(f"evaluate: expected a Circuit, Model or compiled object, found {type(obj).__name__}")
    check_state(obj, "evaluate")
    check_known(obj, params)
    u = check_input(u, obj.n, obj.d, "circuit" if isinstance(obj, Circuit) else "model")  # before the entries are read
    exact_u = [[as_scalar(x, f"input ({i}, {j})") for j, x in enumerate(row)] for i, row in enumerate(u)]
    ring = FractionRing({k: _rational(v, f"parameter {k}") for k, v in (params or {}).items()}, max_bits=limits.MAX_VALUE_BITS)
    run = eval_circuit if isinstance(obj, Circuit) else eval_model
    return run(obj, exact_u, ring)  # type: ignore[arg-type]


def _rational(x: object, where: str) -> int | Fraction:
    """A parameter's value: an exact rational (:func:`as_scalar`); a ``Sym`` is refused with an
    :class:`IRError` (the weights are evaluated in Fractions, where it has no value)."""
    v = as_scalar(x, where)
    if not isinstance(v, (int, Fraction)):
        raise IRError(f"{where}: expected an exact rational (int, Fraction or a string like '1/2'), found the symbolic value {show_scalar(v)[:80]}")
    return v
