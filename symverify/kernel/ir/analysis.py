"""Circuit measures of docs/theory.md §2: size, depth Δ, cut width w, gate width, degrees.

Levels: inputs and constants are at level 0; a gate is at 1 + the max level of its operands.
Cut width (**Choice**, docs/theory.md §2): ``live_ℓ`` is the set of nodes of level ≤ ℓ that are outputs
or are read by a gate of level > ℓ, with all n·d inputs live at ℓ = 0; ``w = max_ℓ |live_ℓ|``.

:func:`stats` (and so ``symverify info``) costs ``O(gates + outputs)``: inputs are never listed
one by one, so a circuit with ``n·d = 10^9`` inputs and a few gates is measured at once. The
functions that return one entry per node (:func:`levels`, :func:`live_sets`,
:func:`degree_bounds`) refuse circuits of more than :data:`symverify.ir.limits.MAX_INPUTS` inputs
(:class:`~symverify.errors.LimitError`).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from itertools import chain
from operator import attrgetter, is_
from typing import Any

from symverify.errors import IRError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr, show_int
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.memo import IdentityMemo, fields_now
from symverify.kernel.ir.scalar import is_zero, scalars_held

__all__ = ["model_of", "read_attribute", "levels", "depth", "live_sets", "cut_width", "degree_bounds", "needed_nodes", "CircuitStats", "stats", "checked_stats", "params_of", "reread_params", "check_known"]


def read_attribute(obj: Any, name: str, default: Any, what: str) -> Any:
    """``obj.name``, or ``default`` when ``obj`` has no such attribute. An ``AttributeError`` raised
    while reading an attribute that exists (inside a property) is an :class:`IRError`, not read as
    its absence (a compiled object's certificate or model silently dropped). Attributes only
    ``__getattr__`` knows cannot be told apart: there an ``AttributeError`` is absence."""
    import inspect

    try:
        inspect.getattr_static(obj, name)
    except AttributeError:
        return getattr(obj, name, default)
    try:
        return getattr(obj, name)
    except AttributeError as e:
        raise IRError(f"{what}: reading .{name} of {type(obj).__name__} raised AttributeError ({e}); expected the "
                      "attribute's value or no such attribute") from e


def model_of(obj: Any) -> Any:
    """A compiled object (its ``.model`` a :class:`Model`, as ``verify`` reads it) stands for its model
    in ``evaluate``, ``polynomials`` and ``execute``; anything else is returned unchanged. ``.model``
    is read once (:func:`read_attribute`): the model returned is the one checked (a property may
    hand out another object on the next access)."""
    if isinstance(obj, (Circuit, Model)):
        return obj
    model = read_attribute(obj, "model", None, "compiled object")
    return model if isinstance(model, Model) else obj


def _need_circuit(c: object, what: str) -> None:
    if not isinstance(c, Circuit):
        raise IRError(f"{what}: expected a Circuit, found {type(c).__name__} (models have a signature, not circuit measures)")


def _check_inputs(c: Circuit, what: str) -> None:
    limits.check(c.num_inputs, "MAX_INPUTS", f"{what}: circuit {c.name or '<unnamed>'} (one entry per input)")


def _gate_levels(c: Circuit) -> list[int]:
    """The level of every gate (node ``n·d + k`` is entry ``k``); inputs are at level 0."""
    nd = c.num_inputs
    gl: list[int] = []
    for g in c.gates:
        top = -1
        for a in g.args:
            la = gl[a - nd] if a >= nd else 0
            if la > top:
                top = la
        gl.append(top + 1)  # a constant (no args) is at level 0
    return gl


def levels(c: Circuit) -> list[int]:
    """The level of every node (inputs first; refused beyond ``MAX_INPUTS`` inputs)."""
    _need_circuit(c, "levels")
    _check_inputs(c, "levels")
    return [0] * c.num_inputs + _gate_levels(c)


def depth(c: Circuit) -> int:
    """Δ = the max level over the outputs (0 when every output is an input or constant)."""
    _need_circuit(c, "depth")
    return _depth(c, _gate_levels(c))


def _depth(c: Circuit, gl: list[int]) -> int:
    nd = c.num_inputs
    return max((gl[o - nd] for o in c.outputs if o >= nd), default=0)


def _live_intervals(c: Circuit, gl: list[int]) -> tuple[int, dict[int, tuple[int, int]]]:
    """Δ and, for every node that is live at some level ≥ 1 or is a live non-input at level 0,
    its live levels ``[lo, hi]`` (docs/theory.md §2); inputs not listed are live at level 0 only."""
    nd = c.num_inputs
    delta = _depth(c, gl)
    last: dict[int, int] = {}
    for k, g in enumerate(c.gates):
        lvl = gl[k]
        for a in g.args:
            if last.get(a, -1) < lvl:
                last[a] = lvl
    outs = set(c.outputs)
    spans: dict[int, tuple[int, int]] = {}
    for v in outs | set(last) | set(range(nd, c.num_nodes)):
        lo = gl[v - nd] if v >= nd else 0
        if lo > delta:
            continue
        hi = delta if v in outs else min(last.get(v, -1) - 1, delta)
        if lo <= hi:
            spans[v] = (lo, hi)
    return delta, spans


def live_sets(c: Circuit) -> list[frozenset[int]]:
    """``live_ℓ`` for ℓ = 0 … Δ, exactly as docs/theory.md §2 defines it (refused beyond ``MAX_INPUTS`` inputs)."""
    _need_circuit(c, "live_sets")
    _check_inputs(c, "live_sets")
    delta, spans = _live_intervals(c, _gate_levels(c))
    sets: list[set[int]] = [set() for _ in range(delta + 1)]
    sets[0].update(range(c.num_inputs))
    for v, (lo, hi) in spans.items():
        for ell in range(lo, hi + 1):
            sets[ell].add(v)
    return [frozenset(s) for s in sets]


def _live_counts(c: Circuit, gl: list[int]) -> list[int]:
    """``|live_ℓ|`` for ℓ = 0 … Δ without listing the inputs."""
    nd = c.num_inputs
    delta, spans = _live_intervals(c, gl)
    diff = [0] * (delta + 2)
    inputs_at_0 = 0
    for v, (lo, hi) in spans.items():
        diff[lo] += 1
        diff[hi + 1] -= 1
        if v < nd:
            inputs_at_0 += 1
    counts, run = [], 0
    for ell in range(delta + 1):
        run += diff[ell]
        counts.append(run)
    counts[0] += nd - inputs_at_0  # every input is live at level 0
    return counts


def cut_width(c: Circuit) -> int:
    """w = max_ℓ |live_ℓ| (≥ n·d); counted, not listed, so any number of inputs is fine."""
    _need_circuit(c, "cut_width")
    return max(_live_counts(c, _gate_levels(c)))


def needed_nodes(c: Circuit) -> set[int]:
    """Nodes an output depends on (the outputs included)."""
    need = set(c.outputs)
    nd = c.num_inputs
    for v in range(c.num_nodes - 1, nd - 1, -1):
        if v in need:
            need.update(c.gates[v - nd].args)
    return need


def degree_bounds(c: Circuit) -> list[int]:
    """A cheap upper bound on the degree of every node (−1 for a structurally zero value);
    refused beyond ``MAX_INPUTS`` inputs."""
    _need_circuit(c, "degree_bounds")
    _check_inputs(c, "degree_bounds")
    return [1] * c.num_inputs + _gate_degrees(c)


def _gate_degrees(c: Circuit) -> list[int]:
    """:func:`degree_bounds` of the gates only (inputs have degree 1)."""
    nd = c.num_inputs
    deg: list[int] = []

    def of(a: int) -> int:
        return deg[a - nd] if a >= nd else 1

    for g in c.gates:
        if g.op is Op.CONST:
            deg.append(-1 if is_zero(g.coeffs[0]) else 0)
        elif g.op is Op.MUL:
            a, b = of(g.args[0]), of(g.args[1])
            deg.append(-1 if a < 0 or b < 0 else a + b)
        else:
            parts = [of(a) for a, co in zip(g.args, g.coeffs) if not is_zero(co)]
            deg.append(max(parts, default=-1))
    return deg


@dataclass(frozen=True)
class CircuitStats:
    """The measures docs/theory.md §2 asks the toolkit to report."""

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
            f"degree≤{show_int(self.degree_bound)}"
        )


def stats(c: Circuit) -> CircuitStats:
    """All measures of ``c``.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> s = stats(Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3,)))
    >>> (s.size, s.depth, s.width, s.gate_width, s.degree_bound)
    (2, 2, 2, 1, 2)

    Kept for the last few circuits (``verify`` describes its circuit side in every report, once per
    call on the same circuit), each with what its gates held when measured (:func:`_gates_now`): a
    gate rewritten in place since (``object.__setattr__`` on its args, past its frozen dataclass) is
    measured again, never given the old gates' depth or degree. Each call hands out its own copy of
    the kept measures: a field set on one (``object.__setattr__``) is never another caller's.
    """
    _need_circuit(c, "stats")
    held = _gates_now(c)
    if held is None:  # gates not in a plain tuple (set past the dataclass): nothing is kept for them
        return _stats(c)
    hit = _STATS.get(c)
    if hit is None or not _same_gates(hit[0], held):
        hit = _STATS.put(c, (held, _stats(c)))
    return copy.copy(hit[1])


def checked_stats(c: Circuit) -> CircuitStats:
    """:func:`stats` of a circuit that :func:`~symverify.kernel.provers.fingerprint.check_plain`
    accepted in the same call (``verify``'s sides): a kept entry is taken without comparing what the
    gates hold, since the check dropped every entry of a circuit found changed."""
    hit = _STATS.get(c)
    return copy.copy(hit[1]) if hit is not None else stats(c)


_STATS: IdentityMemo[tuple[tuple[object, ...], CircuitStats]] = IdentityMemo(8, validate=True)
_OP_ARGS_COEFFS = attrgetter("op"), attrgetter("args"), attrgetter("coeffs")


def _gates_now(c: Circuit) -> tuple[object, ...] | None:
    """What the measures read, by identity: the circuit's own fields, each gate's op, node-id tuple and
    coefficient tuple, and every coefficient that is not an int with its fields
    (:func:`~symverify.kernel.ir.scalar.scalars_held`: a ``Fraction``'s numerator, a ``Sym``'s terms;
    a coefficient's zero-ness decides a degree). Read by C-level maps: about 20 ms per 100 000 gates.
    None when the gates are not in a plain tuple (a list could change with no field assigned)."""
    gates = c.gates
    if type(gates) is not tuple:
        return None
    ops, args, coeffs = (list(map(get, gates)) for get in _OP_ARGS_COEFFS)
    return (*fields_now(c), ops, args, coeffs, scalars_held(chain.from_iterable(coeffs)))


def _same_gates(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(x is y or (type(x) is list and type(y) is list and len(x) == len(y) and all(map(is_, x, y)))
                                    for x, y in zip(a, b))


def _stats(c: Circuit) -> CircuitStats:
    nd = c.num_inputs
    gl = _gate_levels(c)
    ops = Counter(g.op for g in c.gates)
    per_level = Counter(gl[k] for k, g in enumerate(c.gates) if g.op is not Op.CONST)
    deg = _gate_degrees(c)
    return CircuitStats(
        n=c.n,
        d=c.d,
        inputs=nd,
        size=c.size,
        size_with_inputs=c.size + nd,
        depth=_depth(c, gl),
        width=max(_live_counts(c, gl)),
        gate_width=max(per_level.values(), default=0),
        muls=ops[Op.MUL],
        lins=ops[Op.LIN],
        consts=ops[Op.CONST],
        outputs=len(c.outputs),
        degree_bound=max(((deg[o - nd] if o >= nd else 1) for o in c.outputs), default=-1),
    )


def check_state(obj: object, where: str) -> None:
    """Refuse a circuit or model whose dense input (``n·d``) or state (``N'·d'``) exceeds the limits
    of :mod:`symverify.ir.limits`.

    Call it before anything that allocates one value per input or per state cell (evaluation,
    compilation, verification). Objects of other kinds are left alone.
    """
    # The messages are built only on failure: this check runs on every execute call.
    if isinstance(obj, (Circuit, Model)):
        kind = "circuit" if isinstance(obj, Circuit) else "model"
        limits.check(obj.n * obj.d, "MAX_INPUTS",
                     lambda: f"{where}: {kind} {obj.name or '<unnamed>'} has n·d = {show_int(obj.n)}·{show_int(obj.d)}")
    if isinstance(obj, Model):
        limits.check(obj.inner_n * obj.inner_d, "MAX_CELLS",
                     lambda: f"{where}: model {obj.name or '<unnamed>'} has state N'·d' = {show_int(obj.inner_n)}·{show_int(obj.inner_d)}")


_PARAMS: IdentityMemo[frozenset[str]] = IdentityMemo(8, validate=True)


def params_of(obj: Circuit | Model) -> frozenset[str]:
    """``obj.params()`` (the names of its symbolic weights), kept for the last few objects: reading
    them walks every weight, which costs more than running a small model."""
    return _PARAMS(obj, lambda: frozenset(obj.params()))


def reread_params(obj: Circuit | Model) -> frozenset[str]:
    """:func:`params_of` read again from ``obj`` and kept: before a name is refused as unknown, or a
    weight as missing its value, since the kept names are of the content ``obj`` held when they
    were read (a coefficient rewritten in place past its frozen dataclass since is not seen by the
    memo)."""
    return _PARAMS.put(obj, frozenset(obj.params()))


def check_known(obj: Circuit | Model, params: Mapping[str, object] | None, where: str = "params") -> None:
    """IRError when ``params`` names something other than a symbolic weight of ``obj``
    (:func:`params_of`): a misspelt name would otherwise be ignored, unnoticed whenever the weight
    it was meant for has a value or no use. The names are read once per object (a memo look-up per
    call). Anything but None or a mapping from names (str) is an IRError too."""
    if params is None:
        return
    if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
        raise IRError(f"{where}: expected a mapping from weight names (str) to exact values, found {safe_repr(params, 60)}")
    if not params:  # no names to check: the object's weights are not read
        return
    known = params_of(obj)
    if any(k not in known for k in params):  # the kept names may be of content rewritten in place since: read them again
        known = reread_params(obj)
    unknown = sorted(repr(k) for k in params if k not in known)
    if unknown:
        what = "model" if isinstance(obj, Model) else "circuit"
        has = f"its symbolic weights are {', '.join(sorted(known))}" if known else "it has no symbolic weights"
        verb = "is not a symbolic weight" if len(unknown) == 1 else "are not symbolic weights"
        raise IRError(f"{where}: {', '.join(unknown)} {verb} of the {what} ({has}); pass only its own names"
                      " (for a counterexample's values: `cex.params_for(obj)`)")
