"""The layered form of a circuit (docs/theory.md §2, the proof of Theorem H.21).

The circuit becomes stages acting on a state ``z`` whose slots are labelled by circuit nodes.
The first state is ``vec(u)`` (slot i = input i). For each level ℓ = 1 … Δ:

* a :class:`LinearStage` ``z ↦ M·z + c``: its rows compute the level's linear gates, copy every
  value still live, and place the operands of the level's multiplication gates as
  ``[v1; v2; v3]`` (first operands, second operands, everything else live after ℓ). Constants are
  folded into the offset ``c``, so no slot ever holds a constant;
* a :class:`MulStage` (only when level ℓ has multiplications): a routing permutation ``R`` and
  ``z ↦ [v1 ⊙ v2; v3; 0]``. Forms built by :func:`layered_form` already place the operands, so
  their ``R`` is the identity; the field exists for forms built otherwise.

The last stage's slots hold the outputs in order (repeats, inputs and constants allowed). Only
gates an output depends on are computed. Between levels the state has at most ``w`` (cut width)
slots; inside a level at most ``w + m_ℓ ≤ 2w`` (the operand copies), which is reported as
``width``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from symverify.errors import IRError
from symverify.ir.bigint import field_repr
from symverify.kernel.ir.analysis import levels, live_sets, needed_nodes
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.scalar import Scalar, is_zero

__all__ = ["LinearStage", "MulStage", "Stage", "LayeredForm", "layered_form"]


@dataclass(frozen=True, slots=True)
class LinearStage:
    """``out[r] = Σ coeff·in[slot] + offset[r]`` for ``(slot, coeff)`` in ``rows[r]``."""

    level: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    rows: tuple[tuple[tuple[int, Scalar], ...], ...]
    offset: tuple[Scalar, ...]

    def __repr__(self) -> str:
        return field_repr(self)  # the generated repr, with huge integers abbreviated (never fails)


@dataclass(frozen=True, slots=True)
class MulStage:
    """Route with ``perm`` (slot i ← input slot ``perm[i]``), then ``[v1 ⊙ v2; v3]`` with ``|v1| = k``."""

    level: int
    inputs: tuple[int, ...]
    perm: tuple[int, ...]
    k: int
    outputs: tuple[int, ...]


Stage = Union[LinearStage, MulStage]


@dataclass(frozen=True, slots=True)
class LayeredForm:
    """A circuit as alternating linear and multiplicative stages on a labelled state."""

    n: int
    d: int
    width: int
    stages: tuple[Stage, ...]


def _row_for(c: Circuit, v: int, slot_of: dict[int, int], level: int) -> tuple[tuple[tuple[int, Scalar], ...], Scalar]:
    """The affine row that yields node ``v`` from the current state (copy, constant, or lin gate)."""
    if v in slot_of:
        return ((slot_of[v], 1),), 0
    g = c.gate(v)
    if g is None or g.op is Op.MUL:
        raise IRError(f"layered form: node %{v} is needed at level {level} but is not live")
    if g.op is Op.CONST:
        return (), g.coeffs[0]
    acc: dict[int, Scalar] = {}
    off: Scalar = 0
    for a, co in zip(g.args, g.coeffs):
        if is_zero(co):
            continue
        ga = c.gate(a)
        if ga is not None and ga.op is Op.CONST:
            off = off + co * ga.coeffs[0]
        elif a in slot_of:
            acc[slot_of[a]] = acc.get(slot_of[a], 0) + co
        else:
            raise IRError(f"layered form: operand %{a} of node %{v} is not live at level {level}")
    return tuple((s, x) for s, x in sorted(acc.items()) if not is_zero(x)), off


def layered_form(c: Circuit) -> LayeredForm:
    """Rewrite ``c`` into stages (docs/theory.md §2); see the module docstring for the layout.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> lf = layered_form(Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3,)))
    >>> [type(s).__name__ for s in lf.stages], lf.width
    (['LinearStage', 'MulStage', 'LinearStage'], 3)
    """
    if not isinstance(c, Circuit):
        raise IRError(f"layered_form: expected a Circuit, found {type(c).__name__}")
    lv = levels(c)
    live = live_sets(c)
    need = needed_nodes(c)
    delta = len(live) - 1
    nd = c.num_inputs

    def is_const(v: int) -> bool:
        g = c.gate(v)
        return g is not None and g.op is Op.CONST

    state: tuple[int, ...] = tuple(range(nd))
    stages: list[Stage] = []
    for ell in range(1, delta + 1):
        muls = [v for v in range(nd, c.num_nodes) if lv[v] == ell and v in need and c.gates[v - nd].op is Op.MUL]
        mul_set = set(muls)
        keep = [v for v in sorted(live[ell]) if v in need and not is_const(v) and v not in mul_set]
        if ell == delta and not muls:
            targets = list(c.outputs)
        else:
            v1 = [c.gates[v - nd].args[0] for v in muls]
            v2 = [c.gates[v - nd].args[1] for v in muls]
            targets = v1 + v2 + keep
        slot_of = {v: i for i, v in enumerate(state)}
        rows, offs = zip(*[_row_for(c, v, slot_of, ell) for v in targets]) if targets else ((), ())
        stages.append(LinearStage(ell, state, tuple(targets), tuple(rows), tuple(offs)))
        state = tuple(targets)
        if muls:
            out = tuple(muls) + tuple(keep)
            stages.append(MulStage(ell, state, tuple(range(len(state))), len(muls), out))
            state = out
    # every stage's outputs became ``state``, so the last stage already yields the outputs exactly
    # when ``state`` is them; with Δ = 0 there is no stage and the outputs get one linear stage
    if delta == 0 or tuple(c.outputs) != state:
        slot_of = {v: i for i, v in enumerate(state)}
        rows, offs = zip(*[_row_for(c, v, slot_of, delta) for v in c.outputs]) if c.outputs else ((), ())
        stages.append(LinearStage(delta + 1 if delta else 0, state, tuple(c.outputs), tuple(rows), tuple(offs)))
    width = max(len(b) for b in [tuple(range(nd)), *[s.outputs for s in stages]])
    return LayeredForm(c.n, c.d, width, tuple(stages))

