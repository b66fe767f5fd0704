"""Builders that emit the flat circuit IR: tracing, sympy expressions, rational matrices.

Tracing itself (wires recording gates) is :mod:`symverify.ir.trace`; :func:`trace` here is
:meth:`Circuit.trace <symverify.kernel.ir.circuit.Circuit.trace>`. :class:`CircuitBuilder` is a recorder
that also assembles its circuit, for builders that place gates by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from symverify.errors import IRError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.ir.trace import Recorder, Wire, sum_tree
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import Sym, as_scalar, is_zero, plain_items, sym, unordered

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["Wire", "CircuitBuilder", "trace", "from_sympy", "from_matrix"]


class CircuitBuilder(Recorder):
    """A :class:`~symverify.ir.trace.Recorder` that builds its circuit."""

    def build(self, outputs: Sequence[object], name: str = "") -> Circuit:
        """The circuit with the recorded gates and ``outputs``."""
        return Circuit(self.n, self.d, *self.finish(outputs), name)


def trace(fn: Callable[[list[list[Wire]]], object], n: int, d: int, name: str = "") -> Circuit:
    """Trace ``fn(u)`` on an ``n×d`` array of wires (:meth:`Circuit.trace`).

    >>> c = trace(lambda u: [u[0][0] * u[0][1] + 1, u[0][0]], n=1, d=2)
    >>> len(c.gates), c.outputs
    (3, (4, 0))
    """
    return Circuit.trace(fn, n, d, name)


def _ordered(x: Any, what: str) -> list[Any]:
    """``x`` as a list, read in order: a mapping (iterating it gives its keys), a set (no order), a
    str or bytes (characters) and anything without a length are refused. A list or tuple subclass is
    read as the items it stores (:func:`plain_items`), not through its own iteration."""
    if unordered(x, sized=True):
        raise IRError(f"{what}: expected a sequence (a list, tuple or array), found {type(x).__name__}")
    return list(plain_items(x))


def from_matrix(M: Sequence[Sequence[object]], n: int, d: int, name: str = "") -> Circuit:
    """The linear circuit ``x ↦ M·x`` (``M`` is m×(n·d) with m ≤ n·d; exact entries), one balanced
    adder tree per row. Output k is row k; a row that is ``1·x_j`` outputs the input itself. A matrix whose
    trees would exceed :data:`~symverify.ir.limits.MAX_GATES` gates is refused (``LimitError``) before any gate is
    built, as the library's builders are (:func:`symverify.library.matvec` is this function).

    >>> from_matrix([[1, 1], [1, -1]], n=1, d=2).outputs
    (2, 3)
    """
    b = CircuitBuilder(n, d)
    flat = [w for row in b.inputs() for w in row]
    rows: list[list[Any]] = []

    def terms(i: int, row: list[Any]) -> list[tuple[Any, int]]:
        if len(row) != n * d:
            raise IRError(f"matrix row {i}: expected n·d = {n * d} entries, found {len(row)}")
        out = [(as_scalar(v, f"matrix entry ({i}, {j})"), j) for j, v in enumerate(row)]
        return [(c, j) for c, j in out if not is_zero(c)]

    # The gates sum_tree emits, counted (and refused beyond MAX_GATES) before any is built: one for a row of no
    # term, none for a row 1·x_j, one to scale a single other term, k − 1 for k ≥ 2 terms.
    gates = 0
    for i, row in enumerate(_ordered(M, "from_matrix: the matrix (its rows)")):
        rows.append(_ordered(row, f"from_matrix: matrix row {i}"))
        t = terms(i, rows[-1])
        gates += len(t) - 1 if len(t) >= 2 else int(not t or isinstance(t[0][0], Sym) or t[0][0] != 1)
    where = f"from_matrix {name}" if name else "from_matrix"
    limits.check(gates, "MAX_GATES", lambda: f"{where}: the adder trees of a {len(rows)}×{n * d} matrix")
    outs = [sum_tree(b, [(c, flat[j]) for c, j in terms(i, row)]) for i, row in enumerate(rows)]
    return b.build(outs, name)


def from_sympy(exprs: Sequence[Any], inputs: Sequence[Any], n: int, d: int, name: str = "") -> Circuit:
    """A circuit computing sympy polynomial ``exprs`` in the n·d ``inputs`` symbols (row-major).

    Other free symbols become symbolic parameters (:class:`~symverify.kernel.ir.scalar.Sym`) named by
    their names; rational numbers become exact constants. Refused (:class:`~symverify.errors.IRError`,
    naming the offending part): floats (not exact), constants that are not rational (``sympy.I``,
    ``pi``, ``oo``, ``nan``, ``zoo``), non-commutative symbols (a parameter commutes, so ``A*B - B*A``
    would read as 0), two distinct sympy symbols of one name (``Symbol("w")`` and
    ``Symbol("w", positive=True)``, or two ``Dummy("w")``: one parameter would stand for both),
    non-polynomial expressions (functions ``f(x)``, ``Piecewise``, matrix symbols, negative or
    fractional powers), ``exprs`` and ``inputs`` that are not ordered sequences (a dict, a set) and
    inputs that are not n·d distinct symbols. A string among ``exprs`` or ``inputs`` is read by
    ``sympy.sympify``, which evaluates it as Python code: pass strings you wrote, never text from
    an untrusted file (no loader of symverify's reads through this function).

    >>> import sympy
    >>> x, y = sympy.symbols("x y")
    >>> from_sympy([x * y + 2 * x], [x, y], n=1, d=2).size
    3
    """
    import sympy

    exprs = _ordered(exprs, "from_sympy: the expressions")
    b = CircuitBuilder(n, d)  # n and d checked (positive ints, within MAX_INPUTS) before they are computed with
    inputs = [sympy.sympify(x) for x in _ordered(inputs, "from_sympy: the input symbols")]
    if len(inputs) != b.n * b.d:
        raise IRError(f"from_sympy: expected n·d = {b.n * b.d} input symbols, found {len(inputs)}")
    first: dict[Any, int] = {}
    named: dict[str, Any] = {}  # each name to the one sympy symbol it stands for

    def own_name(x: Any, where: str) -> str:
        """``x``'s name, refused when ``x`` is non-commutative or another symbol has the name."""
        if x.is_commutative is not True:
            raise IRError(f"from_sympy: {where}: the symbol {safe_repr(x, 40)} is non-commutative; expected "
                          "commutative symbols (a circuit's inputs and parameters commute)")
        text = str(x)
        other = named.setdefault(text, x)
        if other != x:
            raise IRError(f"from_sympy: {where}: two distinct sympy symbols are named {text!r} "
                          f"({sympy.srepr(other)[:80]} and {sympy.srepr(x)[:80]}); expected one "
                          "symbol per name")
        return text

    for k, x in enumerate(inputs):
        if not x.is_Symbol:  # a number there would stand for an input wherever the expressions hold it
            raise IRError(f"from_sympy: input {k}: expected a sympy Symbol, found {safe_repr(x, 40)}")
        own_name(x, f"input {k}")
        if first.setdefault(x, k) != k:  # the later one would never be read
            raise IRError(f"from_sympy: inputs {first[x]} and {k} are both {x}; expected n·d distinct symbols")
    flat = [w for row in b.inputs() for w in row]
    env = {s: w for s, w in zip(inputs, flat)}
    memo: dict[Any, Any] = {}

    def go(e: Any) -> Any:
        if e in memo:
            return memo[e]
        if e in env:
            r: Any = env[e]
        elif e.is_Symbol:
            r = sym(own_name(e, "parameter"))
        elif e.is_Rational:
            r = Fraction(int(e.p), int(e.q))
        elif e.is_Float:
            raise IRError(f"from_sympy: the number {e} is not exact; use sympy.Rational")
        elif e.is_Add:
            r = _combine([go(a) for a in e.args], lambda x, y: x + y)
        elif e.is_Mul:
            r = _combine([go(a) for a in e.args], lambda x, y: x * y)
        elif e.is_Pow and e.exp.is_Integer and e.exp > 0:
            base = go(e.base)
            r = base ** int(e.exp)
        elif getattr(e, "is_number", False) is True:
            raise IRError(f"from_sympy: the constant {safe_repr(e, 60)} is not a finite rational number; expected "
                          "exact rationals (int, sympy.Rational) as constants")
        else:
            raise IRError(f"from_sympy: {safe_repr(e, 80)} is not a polynomial (only +, *, positive integer powers)")
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
