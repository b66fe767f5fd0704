"""The compositional prover (THEORY §5): check a stage certificate layer range by layer range.

For each stage (boundary k → k+1) the checker

1. gives every circuit node mentioned at boundary k a fresh variable ``t_v`` and builds the state
   the certificate claims (listed cells = their affine combinations, every other cell 0);
2. runs the stage's layers exactly (canonical polynomials over Q in the ``t_v`` and any weight
   parameters);
3. derives what every cell claimed at boundary k+1 must hold by expanding the circuit's own gates
   down to the nodes available at boundary k, and compares polynomial by polynomial; every
   unlisted cell must be exactly 0 (at the last boundary only inside the N×d read-out block).

The first boundary must be the embedded input and the last the output placement (see
:mod:`symverify.ir.certificate`). By induction over stages, each listed cell holds its claimed
value for every input and every unlisted cell is 0 (Lemma H.11 for clean interfaces), so the
model's read-out block equals the circuit's output: a proof. Each stage is low degree on fresh
variables, so the cost is linear in layers × inner size rather than in the output degree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from symverify.errors import IRError
from symverify.ir.baseconv import Model
from symverify.ir.certificate import Boundary, Cell, Certificate
from symverify.ir.circuit import Circuit, Gate, Op
from symverify.ir.scalar import is_zero
from symverify.semantics.evaluate import eval_layers
from symverify.semantics.poly import PolyBackend, PolyRing

__all__ = ["StageFailure", "CompositionalResult", "check_certificate", "validate_certificate"]


@dataclass(frozen=True)
class StageFailure:
    """Why a stage did not check: the stage, its layers, the cell and both sides."""

    stage: int
    layers: tuple[int, int]
    label: str
    cell: tuple[int, int] | None
    expected: str
    found: str
    reason: str

    def __str__(self) -> str:
        where = f" cell {self.cell}" if self.cell is not None else ""
        return (
            f"stage {self.stage} ({self.label or 'unlabelled'}, layers [{self.layers[0]}, {self.layers[1]})){where}: "
            f"{self.reason}; expected {self.expected}, found {self.found}"
        )


@dataclass(frozen=True)
class CompositionalResult:
    """``ok`` means every stage was proved; otherwise ``failure`` names the first failing stage."""

    ok: bool
    stages_checked: int
    stages_total: int
    failure: StageFailure | None = None
    max_stage_layers: int = 0
    seconds: float = 0.0
    monomials: int = 0
    notes: tuple[str, ...] = field(default=())


def validate_certificate(circuit: Circuit, model: Model, cert: Certificate) -> None:
    """Structural rules (raise :class:`IRError`): ends, order, ranges, duplicates, node ids."""
    if (model.n, model.d) != (circuit.n, circuit.d):
        raise IRError(
            f"certificate: the model reads {model.n}×{model.d} inputs but the circuit reads {circuit.n}×{circuit.d}"
        )
    bs = cert.boundaries
    known = circuit.params() | model.params()
    if len(bs) < 2:
        raise IRError(f"certificate: expected at least 2 boundaries (input and output), found {len(bs)}")
    if bs[0].layer != 0 or bs[-1].layer != len(model.layers):
        raise IRError(
            f"certificate: boundaries must run from layer 0 to layer L = {len(model.layers)}; "
            f"found {bs[0].layer} … {bs[-1].layer} (a certificate for another model?)"
        )
    for k, b in enumerate(bs):
        if k and b.layer < bs[k - 1].layer:
            raise IRError(f"certificate boundary {k}: layer {b.layer} comes before boundary {k - 1}'s layer {bs[k - 1].layer}")
        seen: set[tuple[int, int]] = set()
        for c in b.cells:
            if not (0 <= c.row < model.inner_n and 0 <= c.col < model.inner_d):
                raise IRError(f"certificate boundary {k}: cell ({c.row}, {c.col}) is outside the {model.inner_n}×{model.inner_d} state")
            if (c.row, c.col) in seen:
                raise IRError(f"certificate boundary {k}: cell ({c.row}, {c.col}) is listed twice")
            seen.add((c.row, c.col))
            extra = c.params() - known
            if extra:
                raise IRError(
                    f"certificate boundary {k}: cell ({c.row}, {c.col}) uses the parameter(s) {sorted(extra)}, "
                    "which neither the circuit nor the model has"
                )
            for v in c.nodes():
                if not 0 <= v < circuit.num_nodes:
                    raise IRError(f"certificate boundary {k}: cell ({c.row}, {c.col}) names node %{v}, which the circuit lacks")
    d = circuit.d
    want0 = {(i // d, i % d): i for i in range(circuit.num_inputs)}
    got0 = {(c.row, c.col): c.single_node() for c in bs[0].cells}
    if got0 != want0:
        raise IRError("certificate boundary 0: must list exactly the embedded input (node i at (i // d, i % d))")
    last = {(c.row, c.col): c for c in bs[-1].cells}
    for k, o in enumerate(circuit.outputs):
        cell = last.get((k // d, k % d))
        if cell is None or cell.single_node() != o:
            raise IRError(f"certificate last boundary: output {k} (node %{o}) must sit alone at cell ({k // d}, {k % d})")
    for r, col in last:
        if r < circuit.n and col < d and r * d + col >= len(circuit.outputs):
            raise IRError(f"certificate last boundary: read-out cell ({r}, {col}) is past the outputs and must be 0")


def _expected(circuit: Circuit, frontier: dict[int, Any], targets: set[int], ring: PolyRing) -> dict[int, Any]:
    """Polynomials of ``targets`` in the frontier variables, expanding the circuit's gates."""
    need: set[int] = set()
    stack = [v for v in targets if v not in frontier]
    while stack:
        v = stack.pop()
        if v in need:
            continue
        need.add(v)
        g = circuit.gate(v)
        if g is None:
            raise _MissingNodeError(v)
        stack.extend(a for a in _read_args(g) if a not in frontier and a not in need)
    vals = dict(frontier)
    for v in sorted(need):
        g = circuit.gate(v)
        assert g is not None
        if g.op is Op.CONST:
            vals[v] = ring.coerce(g.coeffs[0])
        elif g.op is Op.MUL:
            vals[v] = vals[g.args[0]] * vals[g.args[1]]
        else:
            acc = ring.zero
            for a, co in zip(g.args, g.coeffs):
                if not is_zero(co):
                    acc = acc + ring.coerce(co) * vals[a]
            vals[v] = acc
    return vals


def _read_args(g: Gate) -> tuple[int, ...]:
    """The operands a gate's value depends on syntactically (a LIN operand with coefficient 0 is not read)."""
    if g.op is Op.LIN:
        return tuple(a for a, co in zip(g.args, g.coeffs) if not is_zero(co))
    return g.args


class _MissingNodeError(Exception):
    def __init__(self, node: int) -> None:
        self.node = node


def _cell_value(c: Cell, vals: dict[int, Any], ring: PolyRing) -> Any:
    acc = ring.coerce(c.const) if not is_zero(c.const) else ring.zero
    for v, co in c.terms:
        acc = acc + ring.coerce(co) * vals[v]
    return acc


def _check_stage(circuit: Circuit, model: Model, k: int, b0: Boundary, b1: Boundary, last: bool, backend: PolyBackend, params: tuple[str, ...]) -> tuple[StageFailure | None, int]:
    lo, hi = b0.layer, b1.layer
    nodes = sorted({v for c in b0.cells for v in c.nodes()})
    ring = PolyRing(len(nodes), params, backend)
    gens = ring.inputs()
    frontier = {v: gens[i] for i, v in enumerate(nodes)}

    def fail(cell: tuple[int, int] | None, exp: Any, got: Any, reason: str) -> tuple[StageFailure, int]:
        return StageFailure(k, (lo, hi), b1.label, cell, _short(exp), _short(got), reason), 0

    state = [[ring.zero] * model.inner_d for _ in range(model.inner_n)]
    for c in b0.cells:
        state[c.row][c.col] = _cell_value(c, frontier, ring)
    out = eval_layers(model.layers[lo:hi], state, ring)
    targets = {v for c in b1.cells for v in c.nodes()}
    try:
        vals = _expected(circuit, frontier, targets, ring)
    except _MissingNodeError as e:
        return fail(None, f"node %{e.node}", "not available", f"node %{e.node} is needed but boundary {k} does not hold it")
    listed = set()
    mono = 0
    for c in b1.cells:
        listed.add((c.row, c.col))
        exp = _cell_value(c, vals, ring)
        got = out[c.row][c.col]
        if got != exp:
            return fail((c.row, c.col), exp, got, "the layers do not produce the claimed value")
        mono += ring.nterms(got)
    for i in range(model.inner_n):
        for j in range(model.inner_d):
            if (i, j) in listed or (last and not (i < circuit.n and j < circuit.d)):
                continue
            if out[i][j] != 0:
                return fail((i, j), 0, out[i][j], "a cell the certificate leaves out is not 0")
    return None, mono


def _short(p: Any, limit: int = 120) -> str:
    s = str(p)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def check_certificate(circuit: Circuit, model: Model, cert: Certificate, *, backend: PolyBackend = "flint", deadline: float | None = None) -> CompositionalResult:
    """Prove ``model ≡ circuit`` stage by stage; see the module docstring.

    Structural problems with the certificate raise :class:`IRError`; a stage whose claim does not
    hold yields ``ok=False`` with the first :class:`StageFailure`. With ``deadline`` (a
    ``time.monotonic()`` value) the check stops early and reports ``ok=False`` with a note.
    """
    start = time.perf_counter()
    validate_certificate(circuit, model, cert)
    params = tuple(sorted(circuit.params() | model.params()))
    bs = cert.boundaries
    total = len(bs) - 1
    mono = 0
    widest = 0
    for k in range(total):
        if deadline is not None and time.monotonic() > deadline:
            return CompositionalResult(False, k, total, None, widest, time.perf_counter() - start, mono, ("timeout",))
        widest = max(widest, bs[k + 1].layer - bs[k].layer)
        failure, m = _check_stage(circuit, model, k, bs[k], bs[k + 1], k == total - 1, backend, params)
        mono += m
        if failure is not None:
            return CompositionalResult(False, k, total, failure, widest, time.perf_counter() - start, mono)
    return CompositionalResult(True, total, total, None, widest, time.perf_counter() - start, mono)
