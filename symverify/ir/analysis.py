"""Circuit measures of THEORY §2: size, depth Δ, cut width w, gate width, degrees.

Levels: inputs and constants are at level 0; a gate is at 1 + the max level of its operands.
Cut width (**Choice**, THEORY §2): ``live_ℓ`` is the set of nodes of level ≤ ℓ that are outputs
or are read by a gate of level > ℓ, with all n·d inputs live at ℓ = 0; ``w = max_ℓ |live_ℓ|``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from symverify.errors import IRError
from symverify.ir.circuit import Circuit, Op
from symverify.ir.scalar import is_zero

__all__ = ["levels", "depth", "live_sets", "cut_width", "degree_bounds", "needed_nodes", "CircuitStats", "stats"]


def _need_circuit(c: object, what: str) -> None:
    if not isinstance(c, Circuit):
        raise IRError(f"{what}: expected a Circuit, found {type(c).__name__} (models have a signature, not circuit measures)")


def levels(c: Circuit) -> list[int]:
    """The level of every node (inputs first)."""
    _need_circuit(c, "levels")
    lv = [0] * c.num_inputs
    for g in c.gates:
        lv.append(1 + max(lv[a] for a in g.args) if g.args else 0)
    return lv


def depth(c: Circuit) -> int:
    """Δ = the max level over the outputs (0 when every output is an input or constant)."""
    lv = levels(c)
    return max((lv[o] for o in c.outputs), default=0)


def _last_read(c: Circuit, lv: list[int]) -> list[int]:
    """For every node, the max level of a gate reading it (−1 if none)."""
    last = [-1] * c.num_nodes
    nd = c.num_inputs
    for k, g in enumerate(c.gates):
        for a in g.args:
            last[a] = max(last[a], lv[nd + k])
    return last


def live_sets(c: Circuit) -> list[frozenset[int]]:
    """``live_ℓ`` for ℓ = 0 … Δ, exactly as THEORY §2 defines it."""
    lv = levels(c)
    delta = max((lv[o] for o in c.outputs), default=0)
    last = _last_read(c, lv)
    outs = set(c.outputs)
    sets: list[set[int]] = [set() for _ in range(delta + 1)]
    sets[0].update(range(c.num_inputs))
    for v in range(c.num_nodes):
        lo = lv[v]
        if lo > delta:
            continue
        hi = delta if v in outs else min(last[v] - 1, delta)
        for ell in range(lo, hi + 1):
            sets[ell].add(v)
    return [frozenset(s) for s in sets]


def cut_width(c: Circuit) -> int:
    """w = max_ℓ |live_ℓ| (≥ n·d)."""
    return max(len(s) for s in live_sets(c))


def needed_nodes(c: Circuit) -> set[int]:
    """Nodes an output depends on (the outputs included)."""
    need = set(c.outputs)
    nd = c.num_inputs
    for v in range(c.num_nodes - 1, nd - 1, -1):
        if v in need:
            need.update(c.gates[v - nd].args)
    return need


def degree_bounds(c: Circuit) -> list[int]:
    """A cheap upper bound on the degree of every node (−1 for a structurally zero value)."""
    deg = [1] * c.num_inputs
    for g in c.gates:
        if g.op is Op.CONST:
            deg.append(-1 if is_zero(g.coeffs[0]) else 0)
        elif g.op is Op.MUL:
            a, b = deg[g.args[0]], deg[g.args[1]]
            deg.append(-1 if a < 0 or b < 0 else a + b)
        else:
            parts = [deg[a] for a, co in zip(g.args, g.coeffs) if not is_zero(co)]
            deg.append(max(parts, default=-1))
    return deg


@dataclass(frozen=True)
class CircuitStats:
    """The measures THEORY §2 asks the toolkit to report."""

    n: int
    d: int
    inputs: int
    size: int
    size_with_inputs: int
    depth: int
    width: int
    gate_width: int
    muls: int
    lins: int
    consts: int
    outputs: int
    degree_bound: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"n={self.n} d={self.d} size={self.size} (with inputs {self.size_with_inputs}) depth={self.depth} "
            f"width={self.width} gate_width={self.gate_width} muls={self.muls} outputs={self.outputs} "
            f"degree≤{self.degree_bound}"
        )


def stats(c: Circuit) -> CircuitStats:
    """All measures of ``c``.

    >>> from symverify.ir.circuit import Circuit, Gate
    >>> s = stats(Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3,)))
    >>> (s.size, s.depth, s.width, s.gate_width, s.degree_bound)
    (2, 2, 2, 1, 2)
    """
    _need_circuit(c, "stats")
    lv = levels(c)
    ops = Counter(g.op for g in c.gates)
    per_level = Counter(lv[c.num_inputs + k] for k, g in enumerate(c.gates) if g.op is not Op.CONST)
    deg = degree_bounds(c)
    return CircuitStats(
        n=c.n,
        d=c.d,
        inputs=c.num_inputs,
        size=c.size,
        size_with_inputs=c.size + c.num_inputs,
        depth=max((lv[o] for o in c.outputs), default=0),
        width=cut_width(c),
        gate_width=max(per_level.values(), default=0),
        muls=ops[Op.MUL],
        lins=ops[Op.LIN],
        consts=ops[Op.CONST],
        outputs=len(c.outputs),
        degree_bound=max((deg[o] for o in c.outputs), default=-1),
    )
