"""Gates of the circuit IR (docs/theory.md §2): ``CONST c``, ``LIN α·a + β·b`` and ``MUL a·b``.

A :class:`Gate` normalises its coefficients when it is made and is never changed afterwards; the
:class:`~symverify.kernel.ir.circuit.Circuit` that holds it checks arity and node ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from symverify.errors import IRError
from symverify.ir.bigint import field_repr, safe_repr, show_int
from symverify.kernel.ir.scalar import (
    Scalar,
    all_int,
    as_index,
    as_scalar,
    is_canonical,
    plain_items,
    show_scalar,
    unordered,
)

__all__ = ["Op", "Gate"]


class Op(str, Enum):
    """The gate kinds of docs/theory.md §2."""

    CONST = "const"
    LIN = "lin"
    MUL = "mul"


_ARITY = {Op.CONST: (0, 1), Op.LIN: (2, 2), Op.MUL: (2, 0)}
_COEFF_NAMES = {Op.CONST: ("value",), Op.LIN: ("alpha", "beta"), Op.MUL: ()}


@dataclass(frozen=True, slots=True)
class Gate:
    """One gate: ``op``, the node ids it reads (``args``) and its exact coefficients."""

    op: Op
    args: tuple[int, ...] = ()
    coeffs: tuple[Scalar, ...] = ()

    def __repr__(self) -> str:
        return field_repr(self)  # the generated repr, with huge integers abbreviated (never fails)

    def __post_init__(self) -> None:
        """Normalise the coefficients (``"2/4"`` becomes ``Fraction(1, 2)``, ``Fraction(3)`` becomes 3)
        on this new gate; a value that is not exact raises :class:`IRError` naming the coefficient.
        A node id given as an integer (an int subclass, a numpy integer) is stored as the plain int of
        its value; any other node id (a bool, a float) is an :class:`IRError` naming its type. Arity
        and the range of node ids are checked by the :class:`Circuit` that holds the gate."""
        a = self.args
        if (type(a) is tuple and type(self.coeffs) is tuple
                and ((len(a) == 2 and type(a[0]) is int and type(a[1]) is int) or all_int(a))
                and all(map(is_canonical, self.coeffs))):
            return  # already normal (plain int node ids; an int, a Sym, a Fraction in lowest terms as coefficients)
        names = _COEFF_NAMES.get(self.op, ()) if isinstance(self.op, Op) else ()
        label = self.op.value if isinstance(self.op, Op) else "gate"
        if unordered(self.args):  # a dict reads as its keys
            raise IRError(f"{label} args: expected a sequence of node ids, found {type(self.args).__name__} {safe_repr(self.args, 40)}")
        if unordered(self.coeffs):
            raise IRError(f"{label} coefficients: expected a sequence, found {type(self.coeffs).__name__} {safe_repr(self.coeffs, 40)}")
        # a tuple or list subclass as the items it stores, an int subclass or numpy integer as its value
        # (plain_items, as_index); a bool, a float or any other non-integer is refused here: True == 1.0 == 1,
        # so Gate.mul(0, True) would equal (and hash as) Gate.mul(0, 1) until a Circuit refused it
        args = tuple(plain_items(self.args))
        ids = tuple(map(as_index, args))
        for arg, node in zip(args, ids):
            if node is None:
                raise IRError(f"{label} args: argument {safe_repr(arg, 40)} is not a node id (a {type(arg).__name__}, not an int)")
        object.__setattr__(self, "args", ids)
        object.__setattr__(self, "coeffs", tuple(
            as_scalar(x, f"{label} coefficient {names[i] if i < len(names) else i}") for i, x in enumerate(plain_items(self.coeffs))))

    @staticmethod
    def const(value: object) -> Gate:
        return Gate(Op.CONST, (), (as_scalar(value, "constant"),))

    @staticmethod
    def lin(a: int, alpha: object, b: int, beta: object) -> Gate:
        return Gate(Op.LIN, (a, b), (as_scalar(alpha, "alpha"), as_scalar(beta, "beta")))

    @staticmethod
    def add(a: int, b: int) -> Gate:
        return Gate(Op.LIN, (a, b), (1, 1))

    @staticmethod
    def sub(a: int, b: int) -> Gate:
        return Gate(Op.LIN, (a, b), (1, -1))

    @staticmethod
    def scale(a: int, alpha: object) -> Gate:
        return Gate(Op.LIN, (a, a), (as_scalar(alpha, "alpha"), 0))

    @staticmethod
    def mul(a: int, b: int) -> Gate:
        return Gate(Op.MUL, (a, b), ())

    def __str__(self) -> str:
        """``const 3``, ``lin (1)·%0 + (-1/2)·%1``, ``mul %0 · %1``; integers of more than
        :data:`~symverify.ir.bigint.SHOW_DIGITS` digits are abbreviated (:func:`~symverify.ir.bigint.show_int`)."""
        if self.op is Op.CONST:
            return f"const {show_scalar(self.coeffs[0])}"
        if self.op is Op.LIN:
            (a, b), (al, be) = self.args, self.coeffs
            return f"lin ({show_scalar(al)})·%{show_int(a)} + ({show_scalar(be)})·%{show_int(b)}"
        return f"mul %{show_int(self.args[0])} · %{show_int(self.args[1])}"
