"""Builders that emit the flat circuit IR: tracing, sympy expressions, rational matrices.

Tracing (``Circuit.trace``) hands ``fn`` an ``n×d`` array of :class:`Wire` handles; ``+``, ``-``
and ``*`` between wires and exact scalars (int, Fraction, Sym) record gates. Adding 0 and
multiplying by 1 record nothing; a scalar operand of ``+`` becomes a ``CONST`` node (one per
distinct value).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from symverify.errors import IRError
from symverify.ir.circuit import Circuit, Gate, Op
from symverify.ir.scalar import Scalar, Sym, as_scalar, is_zero, sym

__all__ = ["Wire", "CircuitBuilder", "trace", "from_sympy", "from_matrix", "sum_tree"]


class CircuitBuilder:
    """Accumulates gates for a circuit on ``u ∈ F^{n×d}``."""

    def __init__(self, n: int, d: int) -> None:
        if not (isinstance(n, int) and isinstance(d, int)) or n < 1 or d < 1:
            raise IRError(f"circuit size: expected positive ints n, d; found n={n!r}, d={d!r}")
        self.n, self.d = n, d
        self.gates: list[Gate] = []
        self._consts: dict[tuple[type, Scalar], int] = {}

    def inputs(self) -> list[list[Wire]]:
        return [[Wire(self, i * self.d + j) for j in range(self.d)] for i in range(self.n)]

    def emit(self, gate: Gate) -> Wire:
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

    def build(self, outputs: Sequence[object], name: str = "") -> Circuit:
        nodes = tuple(self.lift(o).node for o in outputs)  # may add constant gates: before the gate list
        return Circuit(self.n, self.d, tuple(self.gates), nodes, name)


class Wire:
    """A handle on one node of a circuit being traced."""

    __slots__ = ("builder", "node")

    def __init__(self, builder: CircuitBuilder, node: int) -> None:
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

    def __pow__(self, k: int) -> Wire:
        if not isinstance(k, int) or k < 1:
            raise IRError(f"wire power: expected a positive int exponent, found {k!r}")
        result: Wire | None = None
        base = self
        while k:
            if k & 1:
                result = base if result is None else result * base
            k >>= 1
            if k:
                base = base * base
        assert result is not None
        return result

    def __repr__(self) -> str:
        return f"Wire(%{self.node})"


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


def trace(fn: Callable[[list[list[Wire]]], Any], n: int, d: int, name: str = "") -> Circuit:
    """Trace ``fn(u)`` on an ``n×d`` array of wires; its result (a wire, scalar or nested list)
    is flattened row-major into the output list.

    >>> c = trace(lambda u: [u[0][0] * u[0][1] + 1, u[0][0]], n=1, d=2)
    >>> len(c.gates), c.outputs
    (3, (4, 0))
    """
    b = CircuitBuilder(n, d)
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
    return b.build(outs, name or getattr(fn, "__name__", ""))


def sum_tree(b: CircuitBuilder, terms: Sequence[tuple[Scalar, Wire]]) -> Wire:
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


def from_matrix(M: Sequence[Sequence[object]], n: int, d: int, name: str = "") -> Circuit:
    """The linear circuit ``x ↦ M·x`` (``M`` is m×(n·d) with m ≤ n·d; exact entries), one balanced
    adder tree per row. Output k is row k; a row that is ``1·x_j`` outputs the input itself.

    >>> from_matrix([[1, 1], [1, -1]], n=1, d=2).outputs
    (2, 3)
    """
    b = CircuitBuilder(n, d)
    flat = [w for row in b.inputs() for w in row]
    outs = []
    for i, row in enumerate(M):
        if len(row) != n * d:
            raise IRError(f"matrix row {i}: expected n·d = {n * d} entries, found {len(row)}")
        terms = [(as_scalar(v, f"matrix entry ({i}, {j})"), flat[j]) for j, v in enumerate(row)]
        outs.append(sum_tree(b, [(c, w) for c, w in terms if not is_zero(c)]))
    return b.build(outs, name)


def from_sympy(exprs: Sequence[Any], inputs: Sequence[Any], n: int, d: int, name: str = "") -> Circuit:
    """A circuit computing sympy polynomial ``exprs`` in the n·d ``inputs`` symbols (row-major).

    Other free symbols become symbolic parameters (:class:`~symverify.ir.scalar.Sym`); rational
    numbers become exact constants; floats and non-polynomial expressions are refused.

    >>> import sympy
    >>> x, y = sympy.symbols("x y")
    >>> from_sympy([x * y + 2 * x], [x, y], n=1, d=2).size
    3
    """
    import sympy

    if len(inputs) != n * d:
        raise IRError(f"from_sympy: expected n·d = {n * d} input symbols, found {len(inputs)}")
    b = CircuitBuilder(n, d)
    flat = [w for row in b.inputs() for w in row]
    env = {s: w for s, w in zip(inputs, flat)}
    memo: dict[Any, Any] = {}

    def go(e: Any) -> Any:
        if e in memo:
            return memo[e]
        if e in env:
            r: Any = env[e]
        elif e.is_Symbol:
            r = sym(str(e))
        elif e.is_Rational:
            r = Fraction(int(e.p), int(e.q))
        elif e.is_Number:
            raise IRError(f"from_sympy: the number {e} is not exact; use sympy.Rational")
        elif e.is_Add:
            r = _combine([go(a) for a in e.args], lambda x, y: x + y)
        elif e.is_Mul:
            r = _combine([go(a) for a in e.args], lambda x, y: x * y)
        elif e.is_Pow and e.exp.is_Integer and e.exp > 0:
            base = go(e.base)
            r = base ** int(e.exp)
        else:
            raise IRError(f"from_sympy: {e} is not a polynomial (only +, *, positive integer powers)")
        memo[e] = r
        return r

    outs = [go(sympy.sympify(e)) for e in exprs]
    return b.build(outs, name)


def _combine(items: list[Any], op: Callable[[Any, Any], Any]) -> Any:
    """Fold scalars first (exact), then combine with wires as a balanced tree."""
    scal = [x for x in items if not isinstance(x, Wire)]
    wires = [x for x in items if isinstance(x, Wire)]
    acc_s: Any = None
    for s in scal:
        acc_s = s if acc_s is None else op(acc_s, s)
    while len(wires) > 1:
        wires = [op(wires[i], wires[i + 1]) for i in range(0, len(wires) - 1, 2)] + ([wires[-1]] if len(wires) % 2 else [])
    if not wires:
        return acc_s
    return wires[0] if acc_s is None else op(wires[0], acc_s)
