"""The structural bounds of :mod:`symverify.kernel.provers.bounds` on a circuit, level by level with numpy.

Every node is one row of :mod:`symverify.kernel.provers.bound_rules`' numpy backend. Zero is
``(−∞, −∞, −∞, −∞)`` and one is ``(0, 0, 0, 0)`` in all four semirings at once, so every circuit
gate is the one formula ``x1·y1 + x2·y2`` (a product has ``x2 = y2 = 0``, a linear gate
``x1, x2`` its coefficients, a constant ``y1 = 1``): :func:`~.bound_rules.otimes` twice and
:func:`~.bound_rules.oplus` once, all gates of a level in a few array operations.

Rounding. ``deg`` and ``s`` are integers below ``2^51``: exact in float64 (the pass gives up,
answering ``None``, above that). Every computed ``h`` and ``c`` is rounded up by at least the
rounding error of the operations that made it (relatively, plus ``2^-48`` after a ``logaddexp2``
of two terms, see :func:`_level`), so every ``h`` and ``c`` is at least the exact value;
:func:`~.bound_rules.to_exact` rounds the conversion back to integers up as well. The results are
therefore never below the exact pass's, and above it only by the relative ``2^-50`` per level
accumulated along a path (far below a bit).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from symverify.deadline import Check
from symverify.kernel.provers.bound_rules import (
    EXACT_LIMIT,
    NEG,
    ONE,
    VAR,
    cap_counts,
    count_caps,
    oplus,
    otimes,
    round_up,
)
from symverify.kernel.semantics.straightline import Program

__all__ = ["usable", "peak_of", "magnitude", "circuit_rows", "total_count"]

WIDTH = 8
"""A circuit is evaluated level by level only when its levels hold this many gates on average."""
_CHUNK = 4096


def _refs(prog: Program, scalars_at: int) -> Any | None:
    """Every gate as four row indices ``(x1, y1, x2, y2)`` with value ``x1·y1 + x2·y2``: node ``k``
    is row ``k``, scalar ``k`` row ``scalars_at + k``, then come the zero row and the one row. A
    product is ``(a, b, 0, 0)``, a linear gate ``(α, a, β, b)``, a constant ``(c, 1, 0, 0)``.
    None when node ids do not fit in int64."""
    if prog.args is None:
        return None
    zero = scalars_at + len(prog.scalars)
    ops = np.frombuffer(prog.ops, dtype=np.uint8).astype(np.intp)  # 0 const, 1 lin, 2 mul
    args = np.frombuffer(prog.args, dtype="<i8").astype(np.intp)
    coeffs = np.frombuffer(prog.coeff_index, dtype="<i8").astype(np.intp) + scalars_at
    n_args = np.where(ops == 0, 0, 2)
    n_coeffs = np.choose(ops, [1, 2, 0])
    arg_at = np.cumsum(n_args) - n_args
    coeff_at = np.cumsum(n_coeffs) - n_coeffs
    refs = np.full((len(ops), 4), zero, dtype=np.intp)
    mul, lin, const = (np.flatnonzero(ops == k) for k in (2, 1, 0))
    refs[mul, 0], refs[mul, 1] = args[arg_at[mul]], args[arg_at[mul] + 1]
    refs[lin, 0], refs[lin, 1] = coeffs[coeff_at[lin]], args[arg_at[lin]]
    refs[lin, 2], refs[lin, 3] = coeffs[coeff_at[lin] + 1], args[arg_at[lin] + 1]
    refs[const, 0], refs[const, 1] = coeffs[coeff_at[const]], zero + 1
    return refs


def _levels(refs: Any, nd: int, rows: int, check: Check | None) -> Any | None:
    """Every gate's level (longest path from the inputs and scalars, which are level 0), by
    relaxing ``level = max(levels read) + 1`` over chunks of gates in order: earlier chunks are
    final, so a chunk settles after its longest internal chain. None when a chunk needs more than
    ``_CHUNK / WIDTH`` rounds (a circuit too deep and narrow to gain from levels)."""
    g = refs.shape[0]
    # The nodes a gate reads: y1 always (``b`` of a product, ``a`` of a linear gate, the one row of
    # a constant) and x1 of a product or y2 of a linear gate (the zero row of a constant).
    first = refs[:, 1]
    second = np.where(refs[:, 0] < nd + g, refs[:, 0], refs[:, 3])
    level = np.zeros(rows, dtype=np.int64)
    for start in range(0, g, _CHUNK):
        if check is not None:
            check()
        stop = min(g, start + _CHUNK)
        a, b = first[start:stop], second[start:stop]
        cur = level[nd + start : nd + stop]
        for _ in range(_CHUNK // WIDTH + 1):
            new = np.maximum(level[a], level[b])
            new += 1
            if np.array_equal(new, cur):
                break
            cur[:] = new
        else:
            return None
    return level[nd : nd + g]


def circuit_rows(prog: Program, scalars: Any, variables: int, q: int, check: Check | None = None, *,
                 width: int = WIDTH, summary: list[float] | None = None) -> tuple[Any, Any] | None:
    """The four bounds of every node of ``prog``'s circuit on independent variables: ``(rows of
    the outputs, count row of every node)``, or None when the circuit is too deep for levels or a
    degree or scalar count reaches ``2^51`` (then the exact pass answers). ``scalars``:
    :func:`~.bound_rules.scalar_rows` of ``prog.scalars``; ``check`` runs before every level; ``width``: the
    fewest gates per level on average worth the levels (:data:`WIDTH`); ``summary``, when given,
    receives :func:`peak_of` over every node."""
    nd, g = prog.circuit.num_inputs, prog.size
    at = nd + g
    refs = _refs(prog, at)
    if refs is None:
        return None
    rows = at + len(scalars) + 2
    if check is not None:
        check()
    level = _levels(refs, nd, rows, check)
    if level is None or (g and int(level.max()) * width > g):
        return None
    order = np.argsort(level, kind="stable")
    place = np.arange(rows, dtype=np.intp)
    place[nd + order] = nd + np.arange(g, dtype=np.intp)
    refs = place[refs[order]]
    if check is not None:
        check()
    ends = np.cumsum(np.bincount(level, minlength=1)[1:]) if g else np.zeros(0, dtype=np.int64)
    E = np.full((rows, 4), NEG)
    E[:nd] = VAR
    E[at : at + len(scalars)] = scalars
    E[rows - 1] = ONE
    caps = count_caps(variables)
    lq = math.log2(q) + 1.0
    bound = magnitude(scalars, lq) if bool((scalars[:, 2] < 0).any()) else None
    summed = np.where(np.frombuffer(prog.ops, dtype=np.uint8)[order] == 1, 2.0**-48, 0.0)[:, None]
    lo = 0
    with np.errstate(invalid="ignore", over="ignore"):  # the degree −∞ of a zero row casts to any index; take clips it
        for hi in ends.tolist():
            if check is not None:
                check()
            _level(E, refs[lo:hi], nd + lo, nd + hi, caps, summed[lo:hi], bound)
            if bound is not None:
                bound = max(bound, magnitude(E[nd + lo : nd + hi], lq))
            lo = hi
    if not usable(E[nd:at]):  # a degree past 2^53 leaves every later one there; inf or NaN likewise
        return None
    if summary is not None:
        summary[:] = peak_of(E[:at], lq)
    outs = place[np.asarray(prog.circuit.outputs, dtype=np.intp)]
    return E[outs], E[:at, 3]


def peak_of(rows: Any, lq: float) -> list[float]:
    """``[max (h + s·lq), max deg]`` over :func:`usable` rows (``lq ≥ log2 q``), at least 0: the
    largest ``log2 ℓ1(Q^s·f)`` and degree of any value, for the size guards of exact
    expansion and exact evaluation (:attr:`symverify.kernel.provers.bounds.Bounds.peak_height_bits`)."""
    if not rows.size:
        return [0.0, 0.0]
    live = rows[rows[:, 0] > NEG]
    if not live.size:
        return [0.0, 0.0]
    return [max(float((live[:, 2] + live[:, 1] * lq).max()), 0.0), max(float(live[:, 0].max()), 0.0)]


LOG_LIMIT = 2.0**1000
"""Heights and counts (``log2``) stay below this: rounding them up once more and adding ``s·log2 Q``
(:func:`~.bound_rules.to_exact`, :func:`peak_of`) then stays far from float64's ``2^1024``."""


def usable(rows: Any) -> bool:
    """Whether the float64 pass may answer for ``rows``: every degree and scalar count below
    :data:`EXACT_LIMIT` and every height and count below :data:`LOG_LIMIT` (or ``−∞``, zero): a
    finite height just below float64's largest overflows when it is rounded up again. Written as
    ``not (x < limit)`` tests, which are true for NaN: a height that overflowed to ``inf`` meets
    a zero branch's ``−∞`` as ``inf + (−∞) = NaN``, and NaN compares false with everything."""
    if not rows.size:
        return True
    top = rows.max(axis=0)  # NaN anywhere in a column makes its max NaN
    return bool(top[0] < EXACT_LIMIT and top[1] < EXACT_LIMIT and top[2] < LOG_LIMIT and top[3] < LOG_LIMIT)


def magnitude(rows: Any, lq: float) -> float:
    """A bound on ``|h|`` over ``rows``: ``h ≤ max h``, and ``h ≥ −s·log2 q`` (``Q^s·f`` has integer
    coefficients, so ``ℓ1(f) ≥ q^−s`` unless ``f = 0``); ``lq ≥ log2 q``."""
    top = rows[:, 1:3].max(axis=0, initial=0.0)
    return max(float(top[1]), float(top[0]) * lq, 0.0) + 1.0


def _level(E: Any, refs: Any, lo: int, hi: int, caps: Any, summed: Any, bound: float | None) -> None:
    """Evaluate the gates ``refs`` (rows ``lo … hi−1`` of ``E``) from earlier rows.

    Rounding (``h`` and ``c``): a product gate's two sums and the rounding step err by at most
    ``5·2^-53·|x|`` (every operand is at most the result when heights are ``≥ 0``); a linear gate
    adds ``2^-50`` for its ``logaddexp2`` (``summed``: ``2^-48``). With negative heights (rational
    coefficients), operands can exceed the result: then every error is at most ``5·2^-53`` times
    ``2·bound + 2`` (``bound``: ``|h|`` over earlier rows; operands and results are below twice
    that), and ``(2·bound + 4)·2^-50`` is added instead of the relative step."""
    terms = E.take(refs, axis=0)  # (k, 4 refs, 4 fields)
    prod = otimes(terms[:, 0::2], terms[:, 1::2])  # (k, 2 products, 4 fields)
    out = oplus(prod[:, 0], prod[:, 1], E[lo:hi])
    if bound is None:
        round_up(out[:, 2:], 2.0**-50, summed)
    else:
        round_up(out[:, 2:], 0.0, summed + (2 * bound + 4) * 2.0**-50)
    cap_counts(out, caps)


def total_count(counts: Any) -> int:
    """``Σ 2^c`` over the rows, rounded up, as an integer capped at ``2^62``."""
    total = float(np.exp2(counts).sum()) * (1 + 2.0**-30)
    return 1 << 62 if not total < 2.0**62 else min(math.floor(total), 1 << 62)
