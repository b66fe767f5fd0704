"""Circuits as straight-line programs: flat gate code, evaluated without per-gate ring dispatch.

:func:`program` turns a :class:`~symverify.kernel.ir.circuit.Circuit` into a :class:`Program`: one tuple
``(kind, a, b, i, j)`` per gate (node ids ``a``, ``b``; indices ``i``, ``j`` into the program's
distinct coefficients ``scalars``), in gate order. The kinds follow the generic interpreter
(:func:`symverify.kernel.semantics.evaluate.eval_circuit_nodes`) case by case, so a pass over the code
computes exactly what the interpreter computes, in the same order:

* ``MUL``: ``x[a]·x[b]``;
* ``LIN``: ``c_i·x[a] + c_j·x[b]`` (both coefficients nonzero);
* ``SCALE``: ``c_i·x[a]`` (a ``LIN`` gate with one zero coefficient; ``a`` is the other argument);
* ``ZERO``: a ``LIN`` gate with both coefficients zero (the ring's zero);
* ``CONST``: ``c_i``.

:func:`eval_mod` runs the code over the integers mod ``p`` on plain Python ints (one list of node
values, one tuple per gate): the same residues as the interpreter over
:class:`~symverify.kernel.semantics.rings.ModRing`, at the speed of a bare loop. The tests compare the two
on random circuits.

Programs are cached per circuit object (circuits are immutable), so repeated passes over one
circuit (the bounds pass, every trial) build the code once.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from symverify.deadline import CHECK_EVERY, Check
from symverify.errors import ShapeError
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.ir.scalar import Scalar, is_zero

__all__ = ["Program", "program", "eval_mod", "Schedule", "schedule", "eval_mod_lanes", "MUL", "LIN", "SCALE", "ZERO", "CONST"]

MUL, LIN, SCALE, ZERO, CONST = 0, 1, 2, 3, 4
# Kinds of the mod-p code only (specialisations of LIN by its exact coefficients).
_ADD, _SUB = 5, 6

Code = list[tuple[int, int, int, int, int]]


@dataclass(frozen=True, eq=False)
class Program:
    """A circuit's straight-line code (see the module docstring).

    ``code``: one ``(kind, a, b, i, j)`` per gate; ``scalars``: the distinct coefficients in order
    of first use (``i``/``j`` index them, ``-1`` where unused); ``mod_chunks``: the same gates
    with ``LIN`` gates of coefficients ``(1, 1)`` and ``(1, −1)`` marked as additions and
    subtractions, in chunks of :data:`~symverify.deadline.CHECK_EVERY` gates.

    ``ops``, ``args``, ``coeff_index``: the circuit itself, flat: one byte per gate (``0`` const,
    ``1`` lin, ``2`` mul), every gate's node ids in order (int64, little-endian; None when an id
    does not fit), every gate's coefficients in order as indices into ``scalars`` (int64,
    little-endian). With ``n``, ``d``, ``scalars`` and the outputs they determine the circuit
    (what a fingerprint hashes).
    """

    circuit: Circuit
    code: Code
    scalars: tuple[Scalar, ...]
    mod_chunks: tuple[Code, ...]
    ops: bytes
    args: bytes | None
    coeff_index: bytes


_PROGRAMS: IdentityMemo[Program] = IdentityMemo(16)


def program(c: Circuit) -> Program:
    """The straight-line program of ``c`` (cached per circuit object)."""
    return _PROGRAMS(c, lambda: _build(c))


def _build(c: Circuit) -> Program:
    index: dict[Any, int] = {}
    scalars: list[Scalar] = []

    def idx(x: Scalar) -> int:
        key = (type(x), x)
        k = index.get(key)
        if k is None:
            k = index[key] = len(scalars)
            scalars.append(x)
        return k

    code: Code = []
    mod: Code = []
    ops = bytearray()
    args: list[int] = []
    cidx = array("q")
    for g in c.gates:
        args.extend(g.args)
        if g.op is Op.MUL:
            ops.append(2)
            a, b = g.args
            ins = (MUL, a, b, -1, -1)
            code.append(ins)
            mod.append(ins)
        elif g.op is Op.LIN:
            ops.append(1)
            (a, b), (al, be) = g.args, g.coeffs
            ia, ib = idx(al), idx(be)
            cidx.append(ia)
            cidx.append(ib)
            if is_zero(be):
                ins = (SCALE, a, a, ia, -1) if not is_zero(al) else (ZERO, -1, -1, -1, -1)
            elif is_zero(al):
                ins = (SCALE, b, b, ib, -1)
            else:
                ins = (LIN, a, b, ia, ib)
            code.append(ins)
            if ins[0] == LIN and type(al) is int and al == 1 and type(be) is int and be in (1, -1):
                mod.append((_ADD if be == 1 else _SUB, a, b, -1, -1))
            else:
                mod.append(ins)
        else:
            ops.append(0)
            ins = (CONST, -1, -1, idx(g.coeffs[0]), -1)
            cidx.append(ins[3])
            code.append(ins)
            mod.append(ins)
    chunks = tuple(mod[k : k + CHECK_EVERY] for k in range(0, len(mod), CHECK_EVERY))
    return Program(c, code, tuple(scalars), chunks, bytes(ops), _le_int64(args), _le_bytes(cidx))


def _le_bytes(arr: array[int]) -> bytes:
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        arr.byteswap()
    return arr.tobytes()


def _le_int64(values: list[int]) -> bytes | None:
    try:
        return _le_bytes(array("q", values))
    except OverflowError:  # a node id of 2^63 or more (astronomical n·d)
        return None


def eval_mod(prog: Program, inputs: Sequence[int], p: int, coeffs: Sequence[int], check: Check | None = None) -> list[int]:
    """Every node's value mod ``p`` (inputs first, then one per gate), as the interpreter computes
    it over :class:`~symverify.kernel.semantics.rings.ModRing`.

    ``inputs``: the ``n·d`` input residues (row-major); ``coeffs``: ``prog.scalars`` mapped into
    ``F_p`` (``ModRing.coerce``); ``check`` runs every :data:`~symverify.deadline.CHECK_EVERY` gates.
    """
    if len(inputs) != prog.circuit.num_inputs:
        raise ShapeError(f"circuit input: expected n·d = {prog.circuit.num_inputs} values, found {len(inputs)}")
    v = [x % p for x in inputs]
    ap: Callable[[int], None] = v.append
    cv = list(coeffs)
    for chunk in prog.mod_chunks:
        if check is not None:
            check()
        for k, a, b, i, j in chunk:
            if k == MUL:
                ap(v[a] * v[b] % p)
            elif k == LIN:
                ap((cv[i] * v[a] + cv[j] * v[b]) % p)
            elif k == _ADD:
                ap((v[a] + v[b]) % p)
            elif k == _SUB:
                ap((v[a] - v[b]) % p)
            elif k == SCALE:
                ap(cv[i] * v[a] % p)
            elif k == CONST:
                ap(cv[i])
            else:
                ap(0)
    return v


@dataclass(frozen=True, eq=False)
class Schedule:
    """A program's gates grouped by level (longest path from the inputs) and kind, for batched
    evaluation: every gate of a level reads only earlier levels, so a level is a few array
    operations. ``steps``: per level, per kind present, ``(kind, out, a, b, i, j)`` as int64 arrays
    (node ids written, node ids read, coefficient indices)."""

    program: Program
    steps: tuple[tuple[tuple[int, Any, Any, Any, Any, Any], ...], ...]


_SCHEDULES: IdentityMemo[Schedule] = IdentityMemo(16)


def schedule(prog: Program) -> Schedule:
    """The level schedule of ``prog`` (cached per program)."""
    return _SCHEDULES(prog, lambda: _schedule(prog))


def _schedule(prog: Program) -> Schedule:
    import numpy as np

    nd = prog.circuit.num_inputs
    level = [0] * nd
    groups: dict[tuple[int, int], list[tuple[int, int, int, int, int]]] = {}
    for k, (kind, a, b, i, j) in enumerate(ins for chunk in prog.mod_chunks for ins in chunk):
        if kind in (CONST, ZERO):
            lv = 1
        elif kind == SCALE:
            lv = level[a] + 1
        else:
            la, lb = level[a], level[b]
            lv = (la if la >= lb else lb) + 1
        level.append(lv)
        groups.setdefault((lv, kind), []).append((nd + k, a, b, i, j))
    steps: dict[int, list[tuple[int, Any, Any, Any, Any, Any]]] = {}
    for (lv, kind), rows in sorted(groups.items()):
        cols = np.array(rows, dtype=np.int64).reshape(-1, 5).T
        steps.setdefault(lv, []).append((kind, cols[0], cols[1], cols[2], cols[3], cols[4]))
    return Schedule(prog, tuple(tuple(steps[lv]) for lv in sorted(steps)))


def eval_mod_lanes(prog: Program, inputs: Any, primes: Any, coeffs: Any, check: Check | None = None) -> Any:
    """Every node's value in ``B`` lanes at once, lane ``t`` mod ``primes[t] < 2^31`` (numpy int64):
    the residues :func:`eval_mod` computes lane by lane.

    ``inputs``: ``(n·d, B)`` residues; ``primes``: ``(B,)``; ``coeffs``: ``(len(prog.scalars), B)``
    (each scalar mapped into ``F_p`` lane by lane). Returns ``(nodes, B)``. Every product of two
    residues is below ``2^62``, every sum of two products below ``2^63``: int64 is exact. ``check``
    runs before every level.
    """
    import numpy as np

    P = np.asarray(primes, dtype=np.int64)
    if P.size and int(P.max()) >= 1 << 31:
        raise ValueError("eval_mod_lanes: every prime must be below 2^31")
    X = np.asarray(inputs, dtype=np.int64)
    C = np.asarray(coeffs, dtype=np.int64).reshape(len(prog.scalars), P.shape[0])
    nd = prog.circuit.num_inputs
    V = np.zeros((nd + len(prog.code), P.shape[0]), dtype=np.int64)
    V[:nd] = X % P
    for level in schedule(prog).steps:
        if check is not None:
            check()
        for kind, out, a, b, i, j in level:
            if kind == MUL:
                V[out] = V[a] * V[b] % P
            elif kind == _ADD:
                V[out] = (V[a] + V[b]) % P
            elif kind == _SUB:
                V[out] = (V[a] - V[b]) % P
            elif kind == LIN:
                V[out] = (C[i] * V[a] + C[j] * V[b]) % P
            elif kind == SCALE:
                V[out] = C[i] * V[a] % P
            elif kind == CONST:
                V[out] = C[i]
            # ZERO: the rows stay 0
    return V
