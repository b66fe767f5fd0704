"""Arithmetic circuits (docs/theory.md §2) as a flat, topologically ordered IR.

A circuit reads ``u ∈ F^{n×d}``. Node ids ``0 … n·d−1`` are the inputs ``x_i = vec(u)[i]``
(row-major: ``x_{i·d+j} = u[i, j]``); node ``n·d + k`` is gate ``k``. Gates only read earlier
nodes. Three ops exist: ``CONST c``, ``LIN α·a + β·b`` and ``MUL a·b``. The ordered outputs
(at most ``n·d``, repeats allowed) are written row-major into ``y ∈ F^{n×d}``; the rest of ``y`` is 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from symverify.errors import IRError
from symverify.ir.bigint import safe_repr, short_name, show_int
from symverify.kernel.ir.gate import _ARITY, Gate, Op
from symverify.kernel.ir.scalar import as_index, plain_fields, plain_index, plain_items, plain_str, unordered

if TYPE_CHECKING:
    from symverify.ir.trace import Wire

__all__ = ["Op", "Gate", "Circuit"]


@dataclass(frozen=True, slots=True)
class Circuit:
    """An arithmetic circuit on ``u ∈ F^{n×d}``; validated on construction.

    >>> c = Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3, 2))
    >>> c.size, c.num_inputs, c.outputs
    (2, 2, (3, 2))
    """

    n: int
    d: int
    gates: tuple[Gate, ...]
    outputs: tuple[int, ...]
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        plain_fields(self, "n", "d")
        for fname in ("gates", "outputs"):
            val = getattr(self, fname)
            if unordered(val):  # a dict reads as its keys, a set in no order
                raise IRError(f"circuit {fname}: expected a sequence, found {type(val).__name__} {safe_repr(val, 40)}")
            object.__setattr__(self, fname, tuple(plain_items(val)))  # a subclass as the items it stores
        if not all(type(o) is int for o in self.outputs):  # an int subclass or numpy integer as its value, as gate args
            object.__setattr__(self, "outputs", tuple(o if (i := as_index(o)) is None else i for o in self.outputs))
        if type(self.name) is not str:  # a str subclass as its characters (reports and labels print it)
            object.__setattr__(self, "name", plain_str(self.name))
        _check(self)

    def __repr__(self) -> str:
        """A short summary (shape, gate counts, outputs); the full gate list is ``self.gates`` or ``to_json``.

        >>> Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3, 2), "c")
        Circuit('c', n=1, d=2, gates=2 (lin 1, mul 1), outputs=(3, 2))
        """
        counts: dict[str, int] = {}
        for g in self.gates:
            counts[g.op.value] = counts.get(g.op.value, 0) + 1
        ops = ", ".join(f"{k} {show_int(v)}" for k, v in sorted(counts.items()))
        outs = self.outputs
        shown = ", ".join(map(str, outs[:8])) + (f", … ({len(outs)} in all)" if len(outs) > 8 else ("," if len(outs) == 1 else ""))
        return (f"Circuit({short_name(self.name)}, n={show_int(self.n)}, d={show_int(self.d)}, "
                f"gates={len(self.gates)}{f' ({ops})' if ops else ''}, outputs=({shown}))")

    def _repr_html_(self) -> str:
        """A compact table for notebooks (:func:`symverify.viz.html.circuit_html`)."""
        from symverify.viz.html import circuit_html  # display is a lazily loaded view, not a dependency of the IR

        return circuit_html(self)

    @property
    def num_inputs(self) -> int:
        return self.n * self.d

    @property
    def num_nodes(self) -> int:
        return self.n * self.d + len(self.gates)

    @property
    def size(self) -> int:
        """Number of gates, inputs and constants not counted (docs/theory.md §2)."""
        return sum(1 for g in self.gates if g.op is not Op.CONST)

    @staticmethod
    def trace(fn: Callable[[list[list[Wire]]], object], n: int, d: int, name: str = "") -> Circuit:
        """Record ``fn(u)`` on an ``n×d`` array of wire handles (:mod:`symverify.ir.trace`): ``+``,
        ``-``, ``*`` between wires and exact scalars record gates; the result (a wire, scalar or
        nested list) is flattened row-major into the output list.

        >>> Circuit.trace(lambda u: [u[0][0] * u[1][0]], n=2, d=1).size
        1
        >>> c = Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1, u[0][0]], n=1, d=2)
        >>> len(c.gates), c.outputs
        (3, (4, 0))
        """
        from symverify.ir.trace import record  # the tracer builds gates; the circuit is validated here

        n, d = plain_index(n), plain_index(d)  # type: ignore[assignment]  # the recorder computes with them (n·d inputs)
        gates, outputs = record(fn, n, d)
        return Circuit(n, d, gates, outputs, name or getattr(fn, "__name__", ""))

    def gate(self, node: int) -> Gate | None:
        """The gate that defines ``node``, or None for an input; ``node`` is a node id, an int in
        ``[0, num_nodes)`` (a numpy integer by its value), else :class:`IRError`."""
        i = as_index(node)
        if i is None or not 0 <= i < self.num_nodes:
            raise IRError(f"Circuit.gate: expected a node id, an int in [0, {show_int(self.num_nodes)}), found {safe_repr(node, 40)}")
        k = i - self.num_inputs
        return self.gates[k] if k >= 0 else None

    def is_linear(self) -> bool:
        """True when the circuit has only inputs and linear gates (docs/theory.md §2: a linear circuit)."""
        return all(g.op is Op.LIN for g in self.gates)

    def params(self) -> frozenset[str]:
        """Names of the symbolic parameters in the coefficients."""
        from symverify.kernel.ir.scalar import param_names

        return param_names(c for g in self.gates for c in g.coeffs)

    def pretty(self, around: int | None = None, window: int = 3) -> str:
        """Text listing, optionally only ``window`` gates either side of gate ``around``: ``around`` a
        gate index in ``[0, len(gates))``, ``window`` an int ≥ 0 (numpy integers by their values), else
        :class:`IRError`."""
        if around is not None:
            a = as_index(around)
            if a is None or not 0 <= a < len(self.gates):
                raise IRError(f"Circuit.pretty: around: expected None or a gate index, an int in [0, {len(self.gates)}), "
                              f"found {safe_repr(around, 40)}")
            around = a
        w = as_index(window)
        if w is None or w < 0:
            raise IRError(f"Circuit.pretty: window: expected an int ≥ 0, found {safe_repr(window, 40)}")
        window = w
        nd = self.num_inputs
        lo, hi = 0, len(self.gates)
        if around is not None:
            lo, hi = max(0, around - window), min(len(self.gates), around + window + 1)
        lines = [f"circuit {self.name or '<unnamed>'}: n={show_int(self.n)} d={show_int(self.d)} inputs %0..%{show_int(nd - 1)}"] if around is None else []
        for k in range(lo, hi):
            mark = ">> " if k == around else "   "
            lines.append(f"{mark}gate {k}: %{show_int(nd + k)} = {self.gates[k]}")
        if around is None:
            lines.append(f"outputs: {', '.join('%' + show_int(o) for o in self.outputs)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.pretty()


def _check(c: Circuit) -> None:
    """Raise IRError on the first violated invariant, naming the gate and showing a window."""
    for name in ("n", "d"):
        v = getattr(c, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise IRError(f"circuit {name}: expected a positive int, found {safe_repr(v)}")
    if not isinstance(c.name, str):
        raise IRError(f"circuit name: expected a str, found {type(c.name).__name__} {safe_repr(c.name, 40)}")
    nd = c.n * c.d
    for k, g in enumerate(c.gates):
        where = f"gate {k} (node %{show_int(nd + k)})"
        if not isinstance(g, Gate):
            raise IRError(f"{where}: expected a Gate, found {type(g).__name__}")
        if not isinstance(g.op, Op):
            raise IRError(f"{where}: unknown op {safe_repr(g.op)}; expected one of {[o.value for o in Op]}")
        for fname in ("args", "coeffs"):
            val = getattr(g, fname)
            if isinstance(val, (str, bytes)) or not hasattr(val, "__len__"):
                raise IRError(f"{where}: expected a sequence of {fname}, found {type(val).__name__} {safe_repr(val, 40)}")
        nargs, ncoeffs = _ARITY[g.op]
        if len(g.args) != nargs or len(g.coeffs) != ncoeffs:
            raise IRError(
                f"{where} ({g.op.value}): expected {nargs} args and {ncoeffs} coefficients, "
                f"found {len(g.args)} args and {len(g.coeffs)} coefficients"
            )
        for a in g.args:
            if not isinstance(a, int) or isinstance(a, bool) or a < 0:
                raise IRError(f"{where}: argument {safe_repr(a)} is not a node id (a non-negative int)")
            if a >= nd + k:
                later = f"defined later at gate {show_int(a - nd)}" if a < c.num_nodes else "never defined"
                raise IRError(f"{where} ({g.op.value}) reads node %{show_int(a)}, which is {later}\n{c.pretty(k)}")
    if len(c.outputs) > nd:
        raise IRError(f"circuit outputs: at most n·d = {show_int(nd)} outputs fit in y, found {len(c.outputs)}")
    for k, o in enumerate(c.outputs):
        if not isinstance(o, int) or isinstance(o, bool) or not 0 <= o < c.num_nodes:
            kind = "" if isinstance(o, int) and not isinstance(o, bool) else f" (a {type(o).__name__}, not an int)"
            raise IRError(f"output {k}: expected an int node id in [0, {show_int(c.num_nodes)}), found {safe_repr(o)}{kind}")
