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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any

from symverify.deadline import CHECK_EVERY, Check
from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.ir.scalar import Scalar, canonical, is_zero

__all__ = ["Program", "program", "keep_checked", "eval_mod", "Schedule", "schedule", "eval_mod_lanes", "MUL", "LIN", "SCALE", "ZERO", "CONST"]

MUL, LIN, SCALE, ZERO, CONST = 0, 1, 2, 3, 4
# Kinds of the mod-p code only (specialisations of LIN by its exact coefficients).
_ADD, _SUB = 5, 6

Code = tuple[tuple[int, int, int, int, int], ...]
Columns = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True, eq=False, slots=True)
class Program:
    """A circuit's straight-line code (see the module docstring).

    ``ops``, ``args``, ``coeff_index``: the circuit itself, flat: one byte per gate (``0`` const,
    ``1`` lin, ``2`` mul), every gate's node ids in order (int64, little-endian; None when an id
    does not fit), every gate's coefficients in order as indices into ``scalars`` (int64,
    little-endian); ``scalars``: the distinct coefficients (by type and value) in order of first
    use. With ``n``, ``d`` and the outputs they determine the circuit (what a fingerprint hashes).

    ``code`` (one ``(kind, a, b, i, j)`` per gate, ``-1`` where unused) and ``mod_code`` (the
    same gates with ``LIN`` gates of coefficients ``(1, 1)`` and ``(1, −1)`` marked as additions
    and subtractions, as five columns: kinds, ``a``, ``b``, ``i``, ``j``) are computed from those
    arrays in bulk on first use, as tuples: the program is kept for its circuit
    (:func:`program`) and every method reads it, so code that changes what it was handed (a list
    sorted or assigned in place) would change what the next ``verify`` of that circuit evaluates.
    For the same reason the fields are slots and the columns are kept in this module's table
    (:data:`_COLUMNS`), not on the object: a field or column set on a handed-out program
    (``object.__setattr__``, its ``__dict__``) made :func:`program` hand it out again, and
    ``randomized`` proved ``x·y ≡ x·x``; a program whose fields changed is never handed out again.
    """

    circuit: Circuit
    scalars: tuple[Scalar, ...]
    ops: bytes
    args: bytes | None
    coeff_index: bytes

    @property
    def size(self) -> int:
        """The number of gates."""
        return len(self.ops)

    @property
    def code(self) -> Code:
        return _COLUMNS(self, lambda: tuple(zip(*_columns(self, False))), False)  # type: ignore[return-value]

    @property
    def mod_code(self) -> Columns:
        return _COLUMNS(self, lambda: _columns(self, True), True)  # type: ignore[return-value]


_PROGRAMS: IdentityMemo[Program] = IdentityMemo(16, validate=True, kept_fields=True)  # program(c) is public: a writer outside a check
_COLUMNS: IdentityMemo[Code | Columns] = IdentityMemo(32)
"""A program's ``code`` (key False) and ``mod_code`` (key True), found while its fields are unchanged."""
_OPCODE = bytes((2, 0, 1)) + bytes(253)  # by the number of coefficients: MUL none, CONST one, LIN two (the circuit checked the arity)


def program(c: Circuit) -> Program:
    """The straight-line program of ``c`` (cached per circuit object)."""
    return _PROGRAMS(c, lambda: _build(c))


def keep_checked(c: Circuit, coeffs: list[tuple[Scalar, ...]], args: Any) -> Program:
    """Keep for ``c`` (as :func:`program` would) the program :func:`_build` makes, from what a check of
    ``c`` has just read: ``coeffs``, each gate's coefficient tuple, and ``args``, every gate's node ids
    in order as an int64 numpy array, both read from ``c.gates`` in gate order, as :func:`_build` reads
    them. The check of a side (:func:`~symverify.kernel.provers.fingerprint.check_plain`) calls it once
    those lists passed, so a side it walks is not read a second time for its program; it stores the
    program in a block of its own (:func:`~symverify.kernel.ir.memo.checked_scope`) since the lists are
    the very snapshot it keeps for ``c``: comparing ``c`` with that snapshot again could not find
    anything the program was not made from."""
    return _PROGRAMS.put(c, _assemble(c, coeffs, args))


def _build(c: Circuit) -> Program:
    """The flat arrays in bulk (:func:`_assemble`) from the circuit's gates."""
    import numpy as np

    gates = c.gates
    coeffs = list(map(attrgetter("coeffs"), gates))
    try:
        args = np.fromiter(chain.from_iterable(map(attrgetter("args"), gates)), dtype=np.int64)
    except OverflowError:  # a node id of 2^63 or more (astronomical n·d)
        args = None
    return _assemble(c, coeffs, args)


def _assemble(c: Circuit, coeffs: list[tuple[Scalar, ...]], args: Any) -> Program:
    """The program of ``c`` from its gates' coefficient tuples and node ids (an int64 numpy array in
    gate order; None when an id does not fit). The coefficients are deduplicated by object identity
    first (``numpy.unique`` of their ids), then the distinct objects, taken in order of first use, by
    ``(type, value)`` of its canonical form (:func:`canonical`: a gate's coefficients are canonical;
    any other is read as the plain value it stores, or refused). The first object of each value is the first use of that value, so the order
    of ``scalars`` and every index are those of a gate-by-gate scan (the tests compare the two)."""
    import numpy as np

    ops = bytes(map(len, coeffs)).translate(_OPCODE)
    flat = list(chain.from_iterable(coeffs))
    ids = np.fromiter(map(id, flat), dtype=np.uint64, count=len(flat))
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    index: dict[Any, int] = {}
    scalars: list[Scalar] = []
    value = np.zeros(len(first), dtype="<i8")
    for u in np.argsort(first, kind="stable").tolist():
        x = flat[first[u]]
        if type(x) is not int:
            x = canonical(x, "gate coefficient")
        k = index.setdefault((type(x), x), len(scalars))
        if k == len(scalars):
            scalars.append(x)
        value[u] = k
    flat_args = None if args is None else args.astype("<i8").tobytes()
    return Program(c, tuple(scalars), ops, flat_args, value[inverse.reshape(-1)].tobytes())


def _columns(prog: Program, mod: bool) -> Columns:
    """The gates' ``(kind, a, b, i, j)`` (module docstring) as five tuples, from the flat arrays;
    with ``mod``, ``LIN`` gates of coefficients ``(1, 1)`` and ``(1, −1)`` become ``_ADD``, ``_SUB``."""
    import numpy as np

    g = prog.size
    ops = np.frombuffer(prog.ops, dtype=np.uint8)
    if prog.args is not None:
        args = np.frombuffer(prog.args, dtype="<i8").astype(np.int64)
    else:  # node ids beyond int64: the same array of Python ints
        args = np.array(list(chain.from_iterable(gate.args for gate in prog.circuit.gates)), dtype=object)
    cidx = np.frombuffer(prog.coeff_index, dtype="<i8").astype(np.int64)
    n_args = np.where(ops == 0, 0, 2)
    n_coeffs = np.choose(ops, [1, 2, 0])
    arg_at = np.cumsum(n_args) - n_args
    coeff_at = np.cumsum(n_coeffs) - n_coeffs
    has_args = ops != 0
    has_coeffs = ops != 2
    none = np.full(g, -1, dtype=np.int64)
    a = np.where(has_args, args[np.where(has_args, arg_at, 0)] if len(args) else none, -1)
    b = np.where(has_args, args[np.where(has_args, arg_at + 1, 0)] if len(args) else none, -1)
    i = np.where(has_coeffs, cidx[np.where(has_coeffs, coeff_at, 0)] if len(cidx) else none, -1)
    j = np.where(ops == 1, cidx[np.where(ops == 1, coeff_at + 1, 0)] if len(cidx) else none, -1)
    zero = np.array([is_zero(x) for x in prog.scalars] + [False], dtype=bool)  # index -1: no coefficient
    kind = np.where(ops == 2, MUL, np.where(ops == 0, CONST, LIN))
    lin = ops == 1
    zi, zj = lin & zero[i], lin & zero[j]
    kind[zi & zj] = ZERO
    a[zi & zj], b[zi & zj], i[zi & zj], j[zi & zj] = -1, -1, -1, -1
    only_a = zj & ~zi  # SCALE c_i·x[a]
    b[only_a], j[only_a] = a[only_a], -1
    only_b = zi & ~zj  # SCALE c_j·x[b]
    a[only_b], i[only_b], j[only_b] = b[only_b], j[only_b], -1
    kind[only_a | only_b] = SCALE
    if mod:
        one = np.array([type(x) is int and x == 1 for x in prog.scalars] + [False], dtype=bool)
        minus = np.array([type(x) is int and x == -1 for x in prog.scalars] + [False], dtype=bool)
        plain = (kind == LIN) & one[i]
        add, sub = plain & one[j], plain & minus[j]
        kind[add], kind[sub] = _ADD, _SUB
        i[add | sub], j[add | sub] = -1, -1
    return tuple(kind.tolist()), tuple(a.tolist()), tuple(b.tolist()), tuple(i.tolist()), tuple(j.tolist())


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
    kinds, aa, bb, ii, jj = prog.mod_code
    for s in range(0, prog.size, CHECK_EVERY):
        if check is not None:
            check()
        e = s + CHECK_EVERY
        for k, a, b, i, j in zip(kinds[s:e], aa[s:e], bb[s:e], ii[s:e], jj[s:e]):
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


@dataclass(frozen=True, eq=False, slots=True)
class Schedule:
    """A program's gates grouped by level (longest path from the inputs) and kind, for batched
    evaluation: every gate of a level reads only earlier levels, so a level is a few array
    operations. ``steps``: per level, per kind present, ``(kind, out, a, b, i, j)`` as read-only int64
    arrays over ``bytes`` (node ids written, node ids read, coefficient indices). Kept for its program
    (:func:`schedule`) while its fields are the objects it was made with (a ``steps`` set on a
    handed-out schedule is never read again)."""

    program: Program
    steps: tuple[tuple[tuple[int, Any, Any, Any, Any, Any], ...], ...]


_SCHEDULES: IdentityMemo[Schedule] = IdentityMemo(16, kept_fields=True)


def schedule(prog: Program) -> Schedule:
    """The level schedule of ``prog`` (cached per program)."""
    return _SCHEDULES(prog, lambda: _schedule(prog))


def _schedule(prog: Program) -> Schedule:
    import numpy as np

    nd = prog.circuit.num_inputs
    level = [0] * nd
    groups: dict[tuple[int, int], list[tuple[int, int, int, int, int]]] = {}
    for k, (kind, a, b, i, j) in enumerate(zip(*prog.mod_code)):
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
        # each column read-only over a bytes object (no flag can make it writable): the schedule is kept
        # for its program and read by every later trial, so a node id written into an array handed
        # out (``b[0] = 0``: ``x·y`` read as ``x·x``) would change what the next ``verify`` evaluates
        cols = [np.frombuffer(col.tobytes(), dtype=np.int64) for col in np.array(rows, dtype=np.int64).reshape(-1, 5).T]
        steps.setdefault(lv, []).append((kind, cols[0], cols[1], cols[2], cols[3], cols[4]))
    return Schedule(prog, tuple(tuple(steps[lv]) for lv in sorted(steps)))


def eval_mod_lanes(prog: Program, inputs: Any, primes: Any, coeffs: Any, check: Check | None = None) -> Any:
    """Every node's value in ``B`` lanes at once, lane ``t`` mod ``primes[t] < 2^31`` (numpy int64):
    the residues :func:`eval_mod` computes lane by lane.

    ``inputs``: ``(n·d, B)`` residues; ``primes``: ``(B,)``; ``coeffs``: ``(len(prog.scalars), B)``
    (each scalar mapped into ``F_p`` lane by lane: residues ``0 ≤ c < p``, checked). Returns ``(nodes, B)``. Every product of two
    residues is below ``2^62``, every sum of two products below ``2^63``: int64 is exact. ``check``
    runs before every level.
    """
    import numpy as np

    P = np.asarray(primes, dtype=np.int64)
    if P.size and int(P.max()) >= 1 << 31:
        raise IRError(f"eval_mod_lanes: expected every prime below 2^31, found {int(P.max())} in lane {int(P.argmax())}")
    X = np.asarray(inputs, dtype=np.int64)
    C = np.asarray(coeffs, dtype=np.int64).reshape(len(prog.scalars), P.shape[0])
    if C.size and bool((bad := (C < 0) | (C >= P)).any()):  # a product of unreduced values could wrap in int64
        k, t = (int(x) for x in np.argwhere(bad)[0])
        raise IRError(f"eval_mod_lanes: expected every coefficient a residue 0 ≤ c < p of its lane's prime, found "
                      f"{int(C[k, t])} for scalar {k} in lane {t} (p = {int(P[t])})")
    nd = prog.circuit.num_inputs
    V = np.zeros((nd + prog.size, P.shape[0]), dtype=np.int64)
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
