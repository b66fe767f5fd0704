"""Tracing: Python arithmetic on wire handles records circuit gates.

:meth:`Circuit.trace <symverify.kernel.ir.circuit.Circuit.trace>` hands ``fn`` an ``n×d`` array of
:class:`Wire` handles; ``+``, ``-`` and ``*`` between wires and exact scalars (int, Fraction, Sym)
record gates. Adding 0 and multiplying by 1 record nothing; a scalar operand of ``+`` becomes a
``CONST`` node (one per distinct value). This module knows gates, not circuits, so the circuit
module can use it without a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from symverify.errors import IRError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr, show_int
from symverify.kernel.ir.gate import Gate, Op
from symverify.kernel.ir.scalar import Scalar, Sym, as_scalar, is_zero, plain_index, power

__all__ = ["Recorder", "Wire", "record"]  # sum_tree: internal (the builders call it with their own recorder)


class Recorder:
    """Accumulates gates for a circuit on ``u ∈ F^{n×d}``; wires record into it.

    At most :data:`~symverify.ir.limits.MAX_INPUTS` inputs ``n·d`` and
    :data:`~symverify.ir.limits.MAX_GATES` gates (:class:`~symverify.errors.LimitError`, before the
    inputs are allocated and at the gate past the limit): a runaway trace ends with a clear error,
    not with the machine's memory."""

    def __init__(self, n: int, d: int) -> None:
        n, d = plain_index(n), plain_index(d)  # type: ignore[assignment]  # the inputs are n·d: an int subclass's * could say otherwise
        if not (isinstance(n, int) and isinstance(d, int)) or isinstance(n, bool) or isinstance(d, bool) or n < 1 or d < 1:
            raise IRError(f"circuit size: expected positive ints n, d; found n={safe_repr(n)}, d={safe_repr(d)}")
        limits.check(n * d, "MAX_INPUTS", lambda: f"a circuit on {show_int(n)}×{show_int(d)} inputs")
        self.n, self.d = n, d
        self.gates: list[Gate] = []
        self._consts: dict[tuple[type, Scalar], int] = {}

    def inputs(self) -> list[list[Wire]]:
        """``u`` as :class:`InputArray`: ``u[i][j]`` and ``u[i, j]`` are the wire of ``x_{i·d+j}``."""
        rows = [_InputRow((Wire(self, i * self.d + j) for j in range(self.d)), i, self.n, self.d) for i in range(self.n)]
        return InputArray(rows, self.n, self.d)

    def emit(self, gate: Gate) -> Wire:
        if len(self.gates) >= limits.MAX_GATES:
            limits.check(len(self.gates) + 1, "MAX_GATES", lambda: f"a circuit on {self.n}×{self.d} inputs")
        self.gates.append(gate)
        return Wire(self, self.n * self.d + len(self.gates) - 1)

    def const(self, value: object) -> Wire:
        v = as_scalar(value, "constant")
        key = (type(v), v)
        if key not in self._consts:
            self._consts[key] = self.emit(Gate(Op.CONST, (), (v,))).node
        return Wire(self, self._consts[key])

    def lift(self, x: object) -> Wire:
        if isinstance(x, Wire):
            if x.builder is not self:
                raise IRError("cannot combine wires from two different traces")
            return x
        return self.const(x)

    def finish(self, outputs: Sequence[object]) -> tuple[tuple[Gate, ...], tuple[int, ...]]:
        """The recorded gates and the output node ids (a scalar output adds its ``CONST`` gate)."""
        nodes = tuple(self.lift(o).node for o in outputs)  # may add constant gates: before the gate list
        return tuple(self.gates), nodes


class Wire:
    """A handle on one node of a circuit being traced."""

    __slots__ = ("builder", "node")

    def __init__(self, builder: Recorder, node: int) -> None:
        self.builder, self.node = builder, node

    def _lin(self, alpha: Scalar, other: Wire, beta: Scalar) -> Wire:
        return self.builder.emit(Gate(Op.LIN, (self.node, other.node), (alpha, beta)))

    def __add__(self, other: object) -> Wire:
        if not isinstance(other, Wire) and is_zero(as_scalar(other, "added scalar")):
            return self
        return self._lin(1, self.builder.lift(other), 1)

    def __radd__(self, other: object) -> Wire:
        return self.__add__(other)

    def __sub__(self, other: object) -> Wire:
        if not isinstance(other, Wire) and is_zero(as_scalar(other, "subtracted scalar")):
            return self
        return self._lin(1, self.builder.lift(other), -1)

    def __rsub__(self, other: object) -> Wire:
        return self.builder.lift(other)._lin(1, self, -1)

    def __neg__(self) -> Wire:
        return self._lin(-1, self, 0)

    def __pos__(self) -> Wire:
        """``+x`` is ``x`` (no gate)."""
        return self

    def __mul__(self, other: object) -> Wire:
        if isinstance(other, Wire):
            if other.builder is not self.builder:
                raise IRError("cannot combine wires from two different traces")
            return self.builder.emit(Gate(Op.MUL, (self.node, other.node), ()))
        c = as_scalar(other, "scalar factor")
        if not isinstance(c, Sym) and c == 1:
            return self
        return self._lin(c, self, 0)

    def __rmul__(self, other: object) -> Wire:
        return self.__mul__(other)

    def __truediv__(self, other: object) -> Wire:
        """Division by a nonzero exact constant (``x / 2`` is ``Fraction(1, 2)·x``); circuits have no
        division gate, so dividing by a wire is refused."""
        if isinstance(other, Wire):
            raise IRError("a circuit has no division gate: a wire can only be divided by a nonzero exact constant")
        c = as_scalar(other, "divisor")
        if isinstance(c, Sym) or c == 0:
            raise IRError(f"divisor: expected a nonzero rational constant, found {c}")
        return self.__mul__(Fraction(1) / c)

    def __rtruediv__(self, other: object) -> Wire:
        """``c / x`` is not a polynomial in ``x``: refused (a circuit has no division gate)."""
        raise IRError(f"a circuit has no division gate: {safe_repr(other, 40)} / {self!r} divides by a wire; "
                      "only division by a nonzero exact constant is allowed")

    def __rpow__(self, other: object) -> Wire:
        """``c ** x`` is not a polynomial in ``x``: refused."""
        raise IRError(f"{safe_repr(other, 40)} ** {self!r} raises to a wire's power, which is not a polynomial; "
                      "exponents must be positive int constants")

    def __pow__(self, k: int) -> Wire:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise IRError(f"wire power: expected a positive int exponent, found {k!r}")
        result: Wire = power(self, k)
        return result

    def __repr__(self) -> str:
        return f"Wire(%{self.node})"

    # A wire has no value while tracing: a branch on it (``if x``, ``x == 0``, ``x < y``) would
    # silently record one branch for every input, so it is refused, as are operations that are
    # not polynomials and conversions to a number (below the class). Wires hash by identity (a
    # dict or set of wires is bookkeeping of the trace, never a comparison of values).
    __hash__ = object.__hash__

    def _no_value(self, what: str) -> IRError:
        return IRError(f"{what} on {self!r}: a traced wire has no value (a branch on it would record one branch for "
                       "every input); a circuit has only +, −, × of wires and constants, with no data-dependent control flow")


def _refuse(what: str) -> Callable[..., Any]:
    def method(self: Wire, *_: object) -> Any:
        raise self._no_value(what)

    return method


# truth values, comparisons, conversions to a number and the operations that are not polynomials
# (set on the class after it is made, so that ``__eq__`` does not reset ``__hash__``)
for _dunder, _what in (("__bool__", "truth value"), ("__eq__", "=="), ("__ne__", "!="), ("__lt__", "<"), ("__le__", "<="),
                       ("__gt__", ">"), ("__ge__", ">="), ("__abs__", "abs"), ("__floordiv__", "//"),
                       ("__rfloordiv__", "//"), ("__mod__", "%"), ("__rmod__", "%"),
                       ("__int__", "int()"), ("__float__", "float()"), ("__complex__", "complex()"),
                       ("__index__", "an index"), ("__round__", "round()"), ("__trunc__", "math.trunc"),
                       ("__floor__", "math.floor"), ("__ceil__", "math.ceil"), ("__matmul__", "@"), ("__rmatmul__", "@")):
    setattr(Wire, _dunder, _refuse(_what))


def _flatten_outputs(out: Any) -> list[object]:
    """Flatten nested lists, tuples and arrays (anything with ``tolist``) of wires and scalars."""
    if hasattr(out, "tolist") and not isinstance(out, Wire):
        out = out.tolist()
    if isinstance(out, Wire) or not isinstance(out, (list, tuple)):
        return [out]
    flat: list[object] = []
    for item in out:
        flat.extend(_flatten_outputs(item))
    return flat


def _index(k: object, size: int, what: str, n: int, d: int) -> None:
    """Refuse an index of ``u`` outside ``range(-size, size)`` with an :class:`IRError` saying the shape."""
    if isinstance(k, int) and not isinstance(k, bool) and not -size <= k < size:
        raise IRError(f"traced input u: {what} index {k} is outside u ∈ F^{{n×d}} with n={n}, d={d} "
                      f"({what}s 0..{size - 1}); pass the n and d your function reads")


class _InputRow(list):  # type: ignore[type-arg]
    """Row ``i`` of the traced input: a list of ``d`` wires whose indices are checked."""

    def __init__(self, wires: Any, i: int, n: int, d: int) -> None:
        super().__init__(wires)
        self._shape = (i, n, d)

    def __getitem__(self, k: Any) -> Any:
        _, n, d = self._shape
        _index(k, d, "column", n, d)
        return super().__getitem__(k)


class InputArray(list):  # type: ignore[type-arg]
    """The traced input ``u``: a list of ``n`` rows of ``d`` wires that also takes ``u[i, j]`` (the
    notation of the docs, ``x_{i·d+j} = u[i, j]``) and refuses an index outside ``n×d`` with an
    :class:`IRError` naming the shape, instead of a bare ``IndexError`` from inside the tracer.

    >>> from symverify.kernel.ir.circuit import Circuit
    >>> Circuit.trace(lambda u: [u[0, 1] * u[1][0]], n=2, d=2).gates[0].args
    (1, 2)
    """

    def __init__(self, rows: list[_InputRow], n: int, d: int) -> None:
        super().__init__(rows)
        self.n, self.d = n, d

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, tuple):
            if len(k) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in k):
                raise IRError(f"traced input u: expected u[i, j] with two int indices, found u[{', '.join(map(safe_repr, k))}]")
            return self[k[0]][k[1]]
        _index(k, self.n, "row", self.n, self.d)
        return super().__getitem__(k)


def record(fn: Callable[[list[list[Wire]]], object], n: int, d: int) -> tuple[tuple[Gate, ...], tuple[int, ...]]:
    """Run ``fn`` on an ``n×d`` array of wires; the recorded gates and the output node ids (the
    result flattened row-major). The circuit is :meth:`symverify.kernel.ir.circuit.Circuit.trace`."""
    b = Recorder(n, d)
    outs = _flatten_outputs(fn(b.inputs()))
    for k, o in enumerate(outs):
        if not isinstance(o, Wire):
            try:
                as_scalar(o, "")
            except IRError:
                raise IRError(
                    f"traced output {k}: expected a wire or an exact scalar, found {type(o).__name__} {str(o)[:40]}; "
                    "return a (nested) list of wires and exact numbers"
                ) from None
    return b.finish(outs)


def sum_tree(b: Recorder, terms: Sequence[tuple[Scalar, Wire]]) -> Wire:
    """``Σ coeff·wire`` as a balanced tree of LIN gates (depth ⌈log2 len⌉; scale gate if one term)."""
    if not terms:
        return b.emit(Gate(Op.LIN, (0, 0), (0, 0)))
    level: list[tuple[Scalar, Wire]] = list(terms)
    if len(level) == 1:
        c, w = level[0]
        return w if (not isinstance(c, Sym) and c == 1) else w._lin(c, w, 0)
    while len(level) > 1:
        nxt: list[tuple[Scalar, Wire]] = []
        for i in range(0, len(level) - 1, 2):
            (a, wa), (bb, wb) = level[i], level[i + 1]
            nxt.append((1, wa._lin(a, wb, bb)))
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    c, w = level[0]
    return w if (not isinstance(c, Sym) and c == 1) else w._lin(c, w, 0)
