"""Stage normalisation for the H.21 compiler: the layered form's stages as the pipeline plans them.

Every multiplicative stage is preceded by a linear one and the last stage is linear
(:func:`_normalise`, adding copy stages); :class:`StagePlan` is one stage with the positions of its
input and output slots. The helpers here read a stage's rows: which rows have two entries, how
often a stage reads each slot, which rows become a multiplicative stage's ``v1``, ``v2``, ``v3``.
"""

from __future__ import annotations

from dataclasses import dataclass

from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.layered import LayeredForm, LinearStage, MulStage, Stage
from symverify.kernel.ir.scalar import is_zero

__all__ = ["StagePlan"]


@dataclass(frozen=True)
class StagePlan:
    """One stage with the positions of its input and output slots (``k_rows`` for products)."""

    stage: Stage
    in_pos: tuple[int, ...]
    out_pos: tuple[int, ...]
    k_rows: int = 0

    @property
    def is_mul(self) -> bool:
        return isinstance(self.stage, MulStage)


def _copy_stage(level: int, inputs: tuple[int, ...], outputs: tuple[int, ...]) -> LinearStage:
    slot = {v: i for i, v in enumerate(inputs)}
    rows = tuple(((slot[v], 1),) for v in outputs)
    return LinearStage(level, inputs, outputs, rows, (0,) * len(outputs))


def _normalise(lf: LayeredForm, c: Circuit) -> list[Stage]:
    """Every multiplicative stage preceded by a linear one; a linear stage last."""
    out: list[Stage] = []
    state: tuple[int, ...] = tuple(range(c.num_inputs))
    for st in lf.stages:
        if isinstance(st, MulStage) and (not out or isinstance(out[-1], MulStage)):
            out.append(_copy_stage(st.level, state, st.inputs))
        out.append(st)
        state = st.outputs
    if not out or isinstance(out[-1], MulStage):
        out.append(_copy_stage(out[-1].level if out else 0, state, tuple(c.outputs)))
    return out


def _mul_rows(mul: MulStage) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The rows of the linear stage before ``mul`` that become its ``v1``, ``v2`` and ``v3``
    (input slot ``i`` of ``mul`` reads row ``perm[i]``)."""
    k = mul.k
    return tuple(mul.perm[:k]), tuple(mul.perm[k:2 * k]), tuple(mul.perm[2 * k:])


def _two_entry(st: LinearStage) -> set[int]:
    """The rows of ``st`` with two entries: their combine needs a free partner position."""
    return {r for r, row in enumerate(st.rows) if sum(1 for _, co in row if not is_zero(co)) == 2}


def _counts(nxt: Stage | None, count: int) -> list[int]:
    """How often the linear stage ``nxt`` reads each of its ``count`` input slots (1 each when
    ``nxt`` is not such a stage)."""
    from symverify.kaleidoscope.selection import column_counts

    if not isinstance(nxt, LinearStage) or len(nxt.inputs) != count:
        return [1] * count
    return column_counts(nxt.rows, count)


def _reads(p: StagePlan) -> list[int]:
    """How often the linear stage ``p`` reads each of its input slots."""
    from symverify.kaleidoscope.selection import column_counts

    assert isinstance(p.stage, LinearStage)
    return column_counts(p.stage.rows, len(p.stage.inputs))


def _bijective_copy(st: LinearStage) -> dict[int, int] | None:
    """``{input slot: row}`` when every row of ``st`` copies a different input slot (coefficient 1,
    no offset) and every slot is copied; else None."""
    src = {row[0][0]: r for r, row in enumerate(st.rows) if len(row) == 1 and row[0][1] == 1}
    ok = len(src) == len(st.rows) == len(st.inputs) and set(src) == set(range(len(st.inputs))) and not any(st.offset)
    return src if ok else None
