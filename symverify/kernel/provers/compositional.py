"""The compositional prover (docs/theory.md §5): check a stage certificate layer range by layer range.

For each stage (boundary k → k+1) the checker

1. gives every circuit node mentioned at boundary k a fresh variable ``t_v`` and builds the state
   the certificate claims (listed cells = their affine combinations, every other cell 0);
2. runs the stage's layers exactly (canonical polynomials over Q in the ``t_v`` and any weight
   parameters), on sparse states: only the nonzero cells, visited through each layer's taps,
   ``W`` columns and biases (:mod:`symverify.kernel.semantics.sparse`; every cell as the ring
   interpreter computes it);
3. derives what every cell claimed at boundary k+1 must hold by expanding the circuit's own gates
   down to the nodes available at boundary k, and compares polynomial by polynomial; every
   unlisted cell must be exactly 0 (at the last boundary only inside the N×d read-out block).

The first boundary must be the embedded input and the last the output placement (see
:mod:`symverify.kernel.ir.certificate`). By induction over stages, each listed cell holds its claimed
value for every input and every unlisted cell is 0 (Lemma H.11 for clean interfaces), so the
model's read-out block equals the circuit's output: a proof. Each stage is low degree on fresh
variables, so the cost is linear in layers × inner size rather than in the output degree.

The certificate is untrusted, and so is its choice of stages: one stage spanning the whole model
would make the checker expand the whole model. Before a stage is expanded, :func:`plan_stage`
bounds its size from structure (certified monomial counts); a stage too large for this process
runs in a memory-limited child process or is not expanded at all, and the deadline is polled
inside every stage (see :func:`check_certificate` for the guarantees).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, ClassVar

from symverify.deadline import CHECK_EVERY, Check, Deadline, DeadlineExceededError
from symverify.errors import IRError, ProverError, UsageError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate, check_form, field_kinds
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.memo import IdentityMemo, checked_scope, in_checked_scope
from symverify.kernel.ir.scalar import Scalar, Sym, is_canonical, is_zero
from symverify.kernel.provers import exact as _exact
from symverify.kernel.provers.bound_rules import COUNT_CAP, VAR, VAR_VAL, capped, scalar_parts, scalar_rows
from symverify.kernel.provers.bounds import BoundRing, bound_rows, eval_code, layers_peak
from symverify.kernel.provers.bounds_layers import model_rows, read_rects
from symverify.kernel.provers.fingerprint import check_digests, check_plain, checked_digest, content_digest
from symverify.kernel.provers.guard import run_limited
from symverify.kernel.provers.options import DEFAULT_MAX_MONOMIALS, default_memory_limit
from symverify.kernel.provers.outcome import Sealed, Verdict, exact_comparison, seal_outcome
from symverify.kernel.semantics.poly import PolyBackend, PolyRing, reused_ring
from symverify.kernel.semantics.rings import Ring
from symverify.kernel.semantics.sparse import eval_layers_sparse
from symverify.kernel.semantics.straightline import program

__all__ = ["StageFailure", "CompositionalResult", "StagePlan", "StageOutcome", "StageRun", "combine", "check_certificate",
           "claim_digests", "check_form", "check_settings",
           "validate_certificate", "plan_stage",
           "STAGE_IN_PROCESS_MONOMIALS", "STAGE_REFUSE_FACTOR"]

STAGE_IN_PROCESS_MONOMIALS = _exact.IN_PROCESS_MONOMIALS
"""Largest certified stage size (live monomials) expanded in this process: the exact method's guard."""
STAGE_REFUSE_FACTOR = _exact.REFUSE_FACTOR
"""A stage whose certified size exceeds this many times ``max_monomials`` is not expanded at all (the exact method's factor)."""


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
class CompositionalResult(Sealed):
    """``ok`` means every stage was proved; otherwise ``failure`` names the first failing stage, or
    (``failure=None``) ``stopped`` says why the check stopped before deciding: ``"timeout"``,
    ``"budget"`` (a stage too large to expand), ``"memory"`` or ``"crashed"`` (its memory-limited
    process). ``stages_isolated`` counts the stages run in such a process; ``largest_estimate`` is
    the largest certified stage size (live monomials) seen. ``digests`` names what was checked:
    ``(circuit, model)``, their content digests
    (:func:`~symverify.kernel.provers.fingerprint.content_digest`, the ``side_digest`` a ``verify``
    report gives the same sides; the certificate is evidence, not part of the claim), set by
    :func:`check_certificate` (and its Dask form) and sealed with the rest (None: an outcome made
    otherwise states none). ``meta_note`` is :func:`certificate_meta_note`'s advisory note (the
    certificate's ``meta`` names another circuit, by name or digest; None when it names none or this
    one), the note ``verify`` adds to its report; it decides nothing. ``seconds`` (the time taken)
    is left out of ``==`` and the hash, as out of the seal: two runs of the same check, here and on
    Dask, compare equal; it is still pickled and shown."""

    ok: bool
    stages_checked: int
    stages_total: int
    failure: StageFailure | None = None
    max_stage_layers: int = 0
    seconds: float = field(default=0.0, compare=False)
    monomials: int = 0
    notes: tuple[str, ...] = field(default=())
    stopped: str | None = None
    stages_isolated: int = 0
    largest_estimate: int = 0
    digests: tuple[str, str] | None = field(default=None, kw_only=True)
    meta_note: str | None = field(default=None, kw_only=True)
    _seal: str = field(default="", init=False, repr=False, compare=False)  # set by seal_outcome
    SEALED = ("ok", "stages_checked", "stages_total", "failure", "max_stage_layers", "monomials", "notes", "stopped",
              "stages_isolated", "largest_estimate", "digests", "meta_note")  # all but the time: a seal copied onto another result unseals it

    def __post_init__(self) -> None:
        check_digests(self.digests, "certificate check", "(circuit, model)")

    method: ClassVar[str] = "compositional"

    @property
    def verdict(self) -> Verdict:
        """``proved`` when every stage was proved, else ``unknown``: a failing stage refutes nothing
        (a certificate may be wrong about a correct model)."""
        return exact_comparison(True if self.ok else None)


def validate_certificate(circuit: Circuit, model: Model, cert: Certificate, check: Check | None = None) -> None:
    """Structural rules (raise :class:`IRError`): ends, order, ranges, duplicates, node ids;
    ``check`` (a deadline checker) is polled before every boundary and every
    :data:`~symverify.deadline.CHECK_EVERY` cells and terms within one (a cell of millions of terms
    cannot overrun the timeout: :func:`check_certificate` then says ``unknown``, stopped by the timeout). The certificate must be a
    :class:`Certificate` itself, not a subclass: the rules and the stages read its boundaries
    separately, and a property could give each another list. The circuit and the model must hold
    no instance of a subclass of the IR's classes either
    (:func:`~symverify.kernel.provers.fingerprint.check_plain`, as for ``verify``'s sides: a grid
    whose ``nonzero()`` is not its rectangles would be proved for what the stages read).

    The certificate's contents are read again here in the form its constructors give them
    (:func:`_plain_cell`): a tuple of :class:`Boundary` objects, each with a plain ``int`` layer, a
    ``str`` label and a tuple of :class:`Cell` objects, each with plain ``int`` row, column and
    nodes, a tuple of ``(node, coefficient)`` tuples and canonical exact scalars
    (:func:`~symverify.kernel.ir.scalar.is_canonical`). Construction checks the same, but a field set
    afterwards (``object.__setattr__`` on the frozen objects) skips it, and a value that answers
    ``==`` otherwise than its value (an ``int`` subclass equal to 1 and read as 2) would pass these
    rules while the stages compute with another number: the identity proved equal to its double."""
    check_form(cert)
    for what, obj, kind in (("circuit", circuit, Circuit), ("model", model, Model)):
        if not isinstance(obj, kind):  # a compiled object is not its model: pass its .model and .certificate
            raise IRError(f"certificate check: expected a {kind.__name__} as the {what}, found {type(obj).__name__}")
        check_plain(obj, f"certificate check: the {what}")  # as verify's sides: no subclass of the IR's classes
    if (model.n, model.d) != (circuit.n, circuit.d):
        raise IRError(
            f"certificate: the model reads {model.n}×{model.d} inputs but the circuit reads {circuit.n}×{circuit.d}"
        )
    bs = cert.boundaries
    known: frozenset[str] | None = None  # the circuit's and the model's parameters, once a cell has a symbol
    if len(bs) < 2:
        raise IRError(f"certificate: expected at least 2 boundaries (input and output), found {len(bs)}")
    if bs[0].layer != 0 or bs[-1].layer != len(model.layers):
        raise IRError(
            f"certificate: boundaries must run from layer 0 to layer L = {len(model.layers)}; "
            f"found {bs[0].layer} … {bs[-1].layer} (a certificate for another model?)"
        )
    nn, dd, num_nodes = model.inner_n, model.inner_d, circuit.num_nodes
    work = 0  # cells and terms read since the deadline was last polled
    for k, b in enumerate(bs):
        if check is not None:
            check()
        if k and b.layer < bs[k - 1].layer:
            raise IRError(f"certificate boundary {k}: layer {b.layer} comes before boundary {k - 1}'s layer {bs[k - 1].layer}")
        seen: set[tuple[int, int]] = set()
        for c in b.cells:
            if not _plain_cell(c):
                raise IRError(f"certificate boundary {k}: expected Cells of plain ints and canonical exact scalars, as "
                              f"their constructor makes them, found {field_kinds(c, 'row', 'col', 'terms', 'const')} "
                              "(a field set after construction?)")
            terms = c.terms
            if check is not None:  # a boundary of millions of cells, or a cell of millions of terms, is polled too
                work += 1 + len(terms)
                if work >= CHECK_EVERY:
                    work = 0
                    check()
            where = (c.row, c.col)
            if not (0 <= where[0] < nn and 0 <= where[1] < dd):
                raise IRError(f"certificate boundary {k}: cell {where} is outside the {nn}×{dd} state")
            if where in seen:
                raise IRError(f"certificate boundary {k}: cell {where} is listed twice")
            seen.add(where)
            if len(terms) == 1:  # the usual cell: the loop below on its one term, without slicing
                t = terms[0]
                if not (type(t) is tuple and len(t) == 2 and type(t[0]) is int and type(t[1]) is int and 0 <= t[0] < num_nodes):
                    _check_term(t, k, where, num_nodes)  # the full check: a non-int coefficient, or the error
            else:
                for j in range(0, len(terms), CHECK_EVERY):
                    if j and check is not None:
                        check()
                    for t in terms[j:j + CHECK_EVERY]:
                        _check_term(t, k, where, num_nodes)
            extra = None
            if _symbolic(c):
                known = known if known is not None else circuit.params() | model.params()
                extra = c.params() - known
            if extra:
                raise IRError(
                    f"certificate boundary {k}: cell {where} uses the parameter(s) {sorted(extra)}, "
                    "which neither the circuit nor the model has"
                )
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


def _check_term(t: object, k: int, where: tuple[int, int], num_nodes: int) -> None:
    """Raise :class:`IRError` unless ``t`` is a ``(node, coefficient)`` tuple of a plain ``int`` node of
    the circuit and a canonical exact scalar (the term of boundary ``k``'s cell ``where``)."""
    if type(t) is not tuple or len(t) != 2 or type(t[0]) is not int or (type(t[1]) is not int and not is_canonical(t[1])):
        raise IRError(f"certificate boundary {k}: cell {where}: expected (node, coefficient) tuples of "
                      "an int and a canonical exact scalar, as the Cell constructor makes them, found "
                      f"{type(t).__name__} {safe_repr(t, 80)}"
                      + (f" of types {', '.join(type(x).__name__ for x in t)}" if type(t) is tuple else ""))
    v = t[0]
    if not 0 <= v < num_nodes:
        raise IRError(f"certificate boundary {k}: cell {where} names node %{v}, which the circuit lacks")


def _plain_cell(c: object) -> bool:
    """Whether ``c`` is a :class:`Cell` itself whose row, column, terms (the tuple) and constant are
    what its constructor leaves (plain ``int`` row and column, a ``tuple`` of terms, a canonical
    constant); each term is checked where the terms are read (:func:`validate_certificate`, polled
    for the deadline)."""
    return (type(c) is Cell and type(c.row) is int and type(c.col) is int and type(c.terms) is tuple
            and (type(c.const) is int or is_canonical(c.const)))


def _symbolic(c: Cell) -> bool:
    """Whether a coefficient or the constant of the cell is a symbol (only then can it name parameters)."""
    terms = c.terms
    if len(terms) == 1:
        return type(terms[0][1]) is Sym or type(c.const) is Sym
    return type(c.const) is Sym or any(type(co) is Sym for _, co in terms)


def _needed(circuit: Circuit, frontier: dict[int, Any], targets: set[int]) -> list[int]:
    """The gates to expand (ascending) so that every target is a polynomial in the frontier."""
    need: set[int] = set()
    stack = [v for v in targets if v not in frontier]
    gates, nd, nn, gate = circuit.gates, circuit.num_inputs, circuit.num_nodes, circuit.gate
    LIN = Op.LIN
    while stack:
        v = stack.pop()
        if v in need:
            continue
        need.add(v)
        g = gates[v - nd] if nd <= v < nn else gate(v)  # circuit.gate(v), its usual case read directly
        if g is None:
            raise _MissingNodeError(v)
        if g.op is LIN:  # _read_args inlined: a LIN operand with coefficient 0 is not read
            for a, co in zip(g.args, g.coeffs):
                if not (co == 0 and not isinstance(co, Sym)) and a not in frontier and a not in need:
                    stack.append(a)
        else:
            stack.extend(a for a in g.args if a not in frontier and a not in need)
    return sorted(need)


def _needed_once(circuit: Circuit, frontier: dict[int, Any], b0: Boundary, b1: Boundary, cache: dict[Any, Any]) -> list[int]:
    """:func:`_needed` for the stage ``b0 → b1``: the list :func:`plan_stage` computed for this very
    circuit and these very boundaries in the same run, else computed here.

    Equivalent to computing it again: :func:`_needed` is a function of the circuit's gates, the
    frontier's nodes and the target nodes alone; the plan read both node sets from the same
    per-run boundary memo (:func:`_boundary`: ``frontier``'s keys are ``b0``'s nodes, the targets
    ``b1``'s), found by identity, and between the plan and the check of a stage only the checker's
    own code runs (no caller's code that could rewrite the circuit, already checked by
    :func:`~symverify.kernel.provers.fingerprint.check_plain`). A missing node is never kept: the
    check computes it again and reports it."""
    kept = cache.pop("needed", None)
    if kept is not None and kept[0] is circuit and kept[1] is b0 and kept[2] is b1:
        return kept[3]  # type: ignore[no-any-return]
    return _needed(circuit, frontier, set(_boundary(b1, cache).nodes))


def _expected(circuit: Circuit, frontier: dict[int, Any], need: list[int], ring: Ring, check: Check | None = None) -> dict[int, Any]:
    """Polynomials of the ``need`` gates in the frontier variables, expanding the circuit's gates:
    ``Σ co·vals[a]`` over the nonzero coefficients of a LIN gate (a coefficient 1 adds ``vals[a]``
    itself, an empty sum is the ring's zero), ``vals[a]·vals[b]`` for MUL."""
    vals = dict(frontier)
    red, coerce, gate = ring.reduce, ring.coerce, circuit.gate
    gates, nd, nn = circuit.gates, circuit.num_inputs, circuit.num_nodes
    CONST, MUL = Op.CONST, Op.MUL
    for n, v in enumerate(need):
        if check is not None and not n % CHECK_EVERY:
            check()
        g = gates[v - nd] if nd <= v < nn else gate(v)  # circuit.gate(v), its usual case read directly
        assert g is not None
        op = g.op
        if op is CONST:
            vals[v] = coerce(g.coeffs[0])
        elif op is MUL:
            vals[v] = red(vals[g.args[0]] * vals[g.args[1]])
        else:
            acc = None
            for a, co in zip(g.args, g.coeffs):
                if type(co) is int:
                    if co == 0:
                        continue
                    t = vals[a] if co == 1 else coerce(co) * vals[a]
                else:  # a Sym or a non-integral Fraction (Gate normalises), never 0
                    t = coerce(co) * vals[a]
                acc = t if acc is None else acc + t
            vals[v] = red(ring.zero if acc is None else acc)
    return vals


def _read_args(g: Gate) -> tuple[int, ...]:
    """The operands a gate's value depends on syntactically (a LIN operand with coefficient 0 is not read)."""
    if g.op is Op.LIN:
        return tuple(a for a, co in zip(g.args, g.coeffs) if not (co == 0 and not isinstance(co, Sym)))  # is_zero inlined
    return g.args


class _MissingNodeError(Exception):
    def __init__(self, node: int) -> None:
        self.node = node


class _BudgetError(Exception):
    """A stage polynomial exceeded ``max_monomials`` (one ``str`` argument, so it pickles)."""


class _StageRing:
    """A stage's :class:`PolyRing` whose ``reduce`` enforces ``max_monomials`` on every value."""

    falsy_is_zero: ClassVar[bool] = True

    def __init__(self, ring: PolyRing, max_terms: int) -> None:
        self.zero, self._coerce, self.max_terms = ring.zero, ring.coerce, max_terms
        self._consts: dict[tuple[type, Any], Any] = {}
        self._syms: dict[int, tuple[Sym, Any]] = {}

    def coerce(self, x: Scalar) -> Any:
        """``ring.coerce``, each distinct number converted once per stage (the layers of a
        compiled model repeat a few weights), and each symbol object once per stage (a circuit's
        gates share the weight object they multiply by: ``W[r][c]`` in every row of a projection).

        A symbol is found by identity, the entry holding it (so its ``id`` is not reused while the
        stage runs): the polynomials handed out never change in place (the stage only builds new
        ones), a :class:`Sym` is immutable and only the checker's own code runs during a stage, so
        the entry is what converting it again would give."""
        if type(x) is Sym:
            hit = self._syms.get(id(x))
            if hit is not None and hit[0] is x:
                return hit[1]
            value = self._coerce(x)
            self._syms[id(x)] = (x, value)
            return value
        key = (type(x), x)
        hit = self._consts.get(key)
        if hit is None:
            hit = self._consts[key] = self._coerce(x)
        return hit

    def reduce(self, x: Any) -> Any:
        if len(x) > self.max_terms:
            raise _BudgetError(f"a stage polynomial has {len(x)} monomials > max_monomials = {self.max_terms}")
        return x


def _cell_value(c: Cell, vals: dict[int, Any], ring: Ring) -> Any:
    """``Σ coeff·vals[node] + const`` for the cell's affine form (the usual cell, ``1·node``, is ``vals[node]``)."""
    terms = c.terms
    if len(terms) == 1 and type(c.const) is int and c.const == 0:
        v, co = terms[0]
        if type(co) is int and co == 1:
            return vals[v]
    acc = ring.coerce(c.const) if not is_zero(c.const) else ring.zero
    for v, co in c.terms:
        acc = acc + ring.coerce(co) * vals[v]
    return acc


# ---- size estimates (the memory guard) -----------------------------------------------------------


def _size(x: Scalar) -> tuple[int, int]:
    """``(terms, degree)`` of a weight or coefficient (a number: ``(1, 0)``; zero: ``(0, -1)``)."""
    parts = scalar_parts(x)
    return (0, -1) if parts is None else (parts[3], parts[0])


@dataclass(frozen=True)
class _LayerShape:
    """Per-column maxima of a layer's term counts (``w``: Σ over a ``W`` column, ``h``: Σ over a
    filter column, ``b1``/``b2``: one cell) and the largest degree of each (−1: none)."""

    w: int
    w_deg: int
    h: int
    h_deg: int
    b1: int
    b1_deg: int
    b2: int
    b2_deg: int

    @staticmethod
    def of(layer: Layer, grids: dict[Grid, tuple[int, int]] | None = None) -> _LayerShape:
        """The shape of ``layer``; ``grids`` caches each grid's ``(terms, degree)`` (compiled
        models repeat the same grids across layers)."""
        cache = grids if grids is not None else {}
        w, w_deg = _grid_size(layer.W, True, cache)
        h, h_deg = _grid_size(layer.h, True, cache)
        b1, b1_deg = _grid_size(layer.b1, False, cache)
        b2, b2_deg = _grid_size(layer.b2, False, cache)
        return _LayerShape(w, w_deg, h, h_deg, b1, b1_deg, b2, b2_deg)


def _grid_size(grid: Grid, column_sum: bool, cache: dict[Any, tuple[int, int]]) -> tuple[int, int]:
    """``(terms, degree)``: the largest column sum (or, without ``column_sum``, the largest single
    entry) of the entries' term counts, and the largest degree of an entry (−1: no entry)."""
    key = (grid, column_sum)
    hit = cache.get(key)
    if hit is not None:
        return hit
    nz = grid.cells() if is_zero(grid.fill) else grid.nonzero()  # with a zero fill, cells() lists the nonzeros
    if not nz:
        out = (0, -1)
    elif not any(type(x) is Sym for x in nz.values()):  # numbers: one term of degree 0 each
        out = ((max(Counter(q for _, q in nz).values()) if column_sum else 1), 0)
    else:
        cols: dict[int, int] = {}
        top, deg = 0, -1
        for (_, q), x in nz.items():
            t, dg = _size(x)
            deg = max(deg, dg)
            cols[q] = cols.get(q, 0) + t
            top = max(top, t)
        out = ((max(cols.values()) if column_sum else top), deg)
    cache[key] = out
    return out


def _branch(m: int, d: int, a: int, a_deg: int, b: int, b_deg: int) -> tuple[int, int]:
    """Terms and degree bound of ``Σ a_k·x_k + b`` for values ``x`` of ≤ m terms and degree ≤ d."""
    cnt = a * m + b
    if cnt == 0:
        return 0, -1
    return cnt, max(d + a_deg if a * m else -1, b_deg if b else -1)


def _coarse_layers(shapes: list[_LayerShape], cells: int, m: int, d: int, variables: int) -> int:
    """A certified bound on the monomials alive in two consecutive states while the layers run,
    from per-layer maxima only: every cell is assumed to hold the largest value (O(layers))."""
    peak = cells * m
    for sh in shapes:
        pc, pd = _branch(m, d, sh.w, sh.w_deg, sh.b1, sh.b1_deg)
        cc, cd = _branch(m, d, sh.h, sh.h_deg, sh.b2, sh.b2_deg)
        if pc == 0 or cc == 0:
            m2, d2 = 0, -1
        else:
            d2 = pd + cd
            m2 = capped(pc * cc, d2, variables)
        peak = max(peak, cells * (m + m2))
        m, d = m2, d2
        if peak >= COUNT_CAP:
            return COUNT_CAP
    return peak


_PROGRAM_SCALARS: IdentityMemo[list[Any]] = IdentityMemo(8)
"""Per straight-line program and denominator ``q``: ``ExactRules.scalar`` of its ``scalars``."""


def _circuit_count(circuit: Circuit, frontier: set[int], need: list[int], variables: int) -> tuple[int, dict[int, int]]:
    """A certified bound on the monomials of all expanded circuit values of the stage together
    (frontier variables included), and per node: the count rule of
    :class:`~symverify.kernel.provers.bound_rules.ExactRules` (sums add, products multiply, capped by ``C(V+D, D)``)."""
    ring, prog, nd = BoundRing(variables), program(circuit), circuit.num_inputs
    vals = dict.fromkeys(frontier, VAR_VAL)
    # a coefficient's value depends on it and on the denominator q only (not on ``variables``):
    # computed once per program for every stage
    sc = _PROGRAM_SCALARS(prog, lambda: [ring.scalar(x) for x in prog.scalars], ring.q)
    code = prog.code  # read once: the property looks the columns up in their memo on every read
    eval_code(((v, code[v - nd]) for v in need), vals, sc, ring)
    return min(sum(x[4] for x in vals.values()), COUNT_CAP), {v: x[4] for v, x in vals.items()}


@dataclass(frozen=True)
class _BoundaryInfo:
    """What the size bounds need from one boundary: its nodes (ascending), the most terms a cell's
    value can have when every node value is one term (``width``), and its degree then (``deg``)."""

    nodes: tuple[int, ...]
    width: int
    deg: int

    @staticmethod
    def of(b: Boundary) -> _BoundaryInfo:
        nodes: set[int] = set()
        width, deg = 0, -1
        for c in b.cells:
            terms = c.terms
            if len(terms) == 1:  # the usual cell: one node, coefficient 1
                v, co = terms[0]
                nodes.add(v)
                symbolic = type(co) is Sym
            else:
                nodes.update(v for v, _ in terms)
                symbolic = any(type(co) is Sym for _, co in terms)
            if not symbolic and type(c.const) is not Sym:
                w, dg = len(terms) + 1, 1 if terms else 0
            else:
                w = sum(_size(co)[0] for _, co in terms) + _size(c.const)[0]
                dg = max([_size(c.const)[1]] + [1 + _size(co)[1] for _, co in terms])
            if w > width:
                width = w
            if dg > deg:
                deg = dg
        return _BoundaryInfo(tuple(sorted(nodes)), width, deg)


_MEMO_SIZE = 1 << 16  # entries per run's memo: a run's boundaries and layers, found by identity


def _boundary(b: Boundary, cache: dict[Any, Any]) -> _BoundaryInfo:
    """:meth:`_BoundaryInfo.of`, once per boundary (each is the end of one stage and the start of the next)."""
    memo: IdentityMemo[_BoundaryInfo] = cache.setdefault("boundaries", IdentityMemo(_MEMO_SIZE))
    return memo(b, lambda: _BoundaryInfo.of(b))


def _refined_layers(model: Model, lo: int, hi: int, b0: Boundary, variables: int, check: Check | None) -> int:
    """The same bound cell by cell: the :class:`BoundRing` values of the boundary's cells on fresh
    variables (a plain cell ``1·t_v`` is one variable), then the stage's layers in numpy
    (:func:`~symverify.kernel.provers.bounds_layers.model_rows`, whose counts are at least
    :func:`~symverify.kernel.provers.bounds.layers_peak`'s), or, beyond that module's limits, one
    :class:`BoundRing` pass through the interpreter."""
    import numpy as np

    ring = BoundRing(variables)
    dd = model.inner_d
    layers = model.layers[lo:hi]
    start = np.full((model.inner_n * dd, 4), -math.inf)
    plain: list[int] = []
    other: list[Cell] = []
    for c in b0.cells:
        if _plain(c):
            plain.append(c.row * dd + c.col)
        else:
            other.append(c)
    start[plain] = VAR
    if other:
        values = [_cell_value(c, dict.fromkeys(c.nodes(), ring.var), ring) for c in other]
        start[[c.row * dd + c.col for c in other]] = bound_rows([values])
    fast = model_rows(layers, read_rects(layers), 1, 1, model.inner_n, dd, scalar_rows, ring.variables, 1, check,
                      start=start)
    if fast is not None:
        peak = fast[1]
        return COUNT_CAP if not peak < COUNT_CAP else min(math.ceil(peak), COUNT_CAP)
    state: list[list[Any]] = [[ring.zero] * dd for _ in range(model.inner_n)]
    for c in b0.cells:
        state[c.row][c.col] = _cell_value(c, dict.fromkeys(c.nodes(), ring.var), ring)
    return layers_peak(layers, state, ring, check)[1]


def _plain(c: Cell) -> bool:
    """Whether the cell is the usual ``1·node`` (its value is the node's variable)."""
    terms = c.terms
    return len(terms) == 1 and type(terms[0][1]) is int and terms[0][1] == 1 and type(c.const) is int and c.const == 0


@dataclass(frozen=True)
class StagePlan:
    """Where a stage runs: ``in-process``, ``isolated`` (a memory-limited child process) or
    ``refused``; ``estimate`` bounds the monomials alive at once while it runs."""

    where: str
    estimate: int
    refined: bool


def plan_stage(circuit: Circuit, model: Model, b0: Boundary, b1: Boundary, params: tuple[str, ...], *,
               max_monomials: int = DEFAULT_MAX_MONOMIALS, isolate: bool | None = None, check: Check | None = None,
               shapes: dict[Any, Any] | None = None) -> StagePlan:
    """Decide where a stage may be expanded, from a certified bound on its size.

    The bound counts both states of every layer (padding cells included), every expanded circuit
    value and every claimed cell. A coarse bound (per-layer maxima, O(layers)) settles the usual
    small stage; above :data:`STAGE_IN_PROCESS_MONOMIALS` a cell-by-cell :class:`BoundRing` pass
    refines it. Then: ``≤ STAGE_IN_PROCESS_MONOMIALS`` → in-process; ``> STAGE_REFUSE_FACTOR ×
    max_monomials`` → refused; otherwise isolated (``isolate=False`` keeps it in-process, at the
    risk of FLINT aborting the whole process when memory runs out). Raises
    :class:`~symverify.deadline.DeadlineExceededError` via ``check``; :class:`IRError` never (a
    missing node is reported by the stage check itself).
    """
    lo, hi = b0.layer, b1.layer
    cache = shapes if shapes is not None else {}
    start, end = _boundary(b0, cache), _boundary(b1, cache)
    variables = max(1, len(start.nodes) + len(params))
    frontier = dict.fromkeys(start.nodes)
    try:
        need = _needed(circuit, frontier, set(end.nodes))
    except _MissingNodeError:
        need = []
    else:  # the stage check expands the same gates next (:func:`_needed_once`)
        cache["needed"] = (circuit, b0, b1, need)
    circ, counts = _circuit_count(circuit, set(start.nodes), need, variables)
    # one claimed value Σ coeff·value + const is alive at a time
    claims = end.width * max((counts.get(v, 1) for v in end.nodes), default=1)
    grids: dict[Any, tuple[int, int]] = cache.setdefault("grids", {})
    layer_shapes = []
    by_layer: IdentityMemo[_LayerShape] = cache.setdefault("layer_shapes", IdentityMemo(_MEMO_SIZE))
    for layer in model.layers[lo:hi]:
        sh = by_layer.get(layer)
        layer_shapes.append(sh if sh is not None else by_layer.put(layer, _LayerShape.of(layer, grids)))
    cells = model.inner_n * model.inner_d
    side = min(circ + claims, COUNT_CAP)
    est = min(_coarse_layers(layer_shapes, cells, start.width if b0.cells else 0, start.deg, variables) + side,
              COUNT_CAP)
    refined = False
    if est > STAGE_IN_PROCESS_MONOMIALS:
        est = min(est, _refined_layers(model, lo, hi, b0, variables, check) + side)
        refined = True
    if est <= STAGE_IN_PROCESS_MONOMIALS:
        return StagePlan("in-process", est, refined)
    if est > STAGE_REFUSE_FACTOR * max_monomials:
        return StagePlan("refused", est, refined)
    return StagePlan("in-process" if isolate is False else "isolated", est, refined)


# ---- one stage ------------------------------------------------------------------------------------


def _check_stage(circuit: Circuit, model: Model, k: int, b0: Boundary, b1: Boundary, last: bool, backend: PolyBackend,
                 params: tuple[str, ...], check: Check | None = None, max_terms: int = DEFAULT_MAX_MONOMIALS,
                 cache: dict[Any, Any] | None = None) -> tuple[StageFailure | None, int]:
    lo, hi = b0.layer, b1.layer
    cache = cache if cache is not None else {}
    nodes = _boundary(b0, cache).nodes
    base = reused_ring(len(nodes), params, backend)  # never handed out, never changed in place
    ring = _StageRing(base, max_terms)
    gens = base.inputs()
    frontier = {v: gens[i] for i, v in enumerate(nodes)}

    def fail(cell: tuple[int, int] | None, exp: Any, got: Any, reason: str) -> tuple[StageFailure, int]:
        return StageFailure(k, (lo, hi), b1.label, cell, _short(exp), _short(got), reason), 0

    state = {(c.row, c.col): _cell_value(c, frontier, ring) for c in b0.cells}
    out = eval_layers_sparse(model.layers[lo:hi], state, ring, check)
    try:
        vals = _expected(circuit, frontier, _needed_once(circuit, frontier, b0, b1, cache), ring, check)
    except _MissingNodeError as e:
        return fail(None, f"node %{e.node}", "not available", f"node %{e.node} is needed but boundary {k} does not hold it")
    listed = set()
    mono = 0
    for n, c in enumerate(b1.cells):
        if check is not None and not n % CHECK_EVERY:
            check()
        listed.add((c.row, c.col))
        exp = _cell_value(c, vals, ring)
        got = out.get((c.row, c.col), base.zero)
        if got != exp:
            return fail((c.row, c.col), exp, got, "the layers do not produce the claimed value")
        mono += base.nterms(got)
    for n, (i, j) in enumerate(sorted(out)):  # the nonzero cells, row by row
        if check is not None and not n % CHECK_EVERY:
            check()
        if (i, j) not in listed and not (last and not (i < circuit.n and j < circuit.d)):
            return fail((i, j), 0, out[(i, j)], "a cell the certificate leaves out is not 0")
    return None, mono


def _stage_in_child(circuit: Circuit, model: Model, k: int, b0: Boundary, b1: Boundary, last: bool, backend: PolyBackend,
                    params: tuple[str, ...], deadline: float | None, max_terms: int) -> tuple[StageFailure | None, int]:
    """:func:`_check_stage` in the memory-limited child (:func:`~symverify.kernel.provers.guard.run_limited`)."""
    return _check_stage(circuit, model, k, b0, b1, last, backend, params, Deadline.at(deadline), max_terms)


def _short(p: Any, limit: int = 120) -> str:
    s = str(p)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def check_settings(deadline: object, max_monomials: object, memory_limit: object,
                   isolate: object) -> tuple[float | None, int, int | None, bool | None]:
    """The settings of a certificate check called directly, read as plain values (the rules of
    ``verify``'s options): ``deadline`` None or a ``time.monotonic()`` value, an int or a float (a
    subclass by the value it stores) that a float holds, ``math.inf`` for none, never NaN or a bool;
    ``max_monomials`` an int ``≥ 0`` and ``memory_limit`` None or an int ``≥ 1`` (numpy integers by
    their values, never a bool or a float); ``isolate`` None, True or False. Anything else is a
    :class:`~symverify.errors.UsageError` naming the argument: a NaN compares false with everything,
    so it would switch the deadline, or every stage's budget, off without a word."""
    from symverify.kernel.ir.scalar import plain_float, plain_index

    d = plain_float(plain_index(deadline))
    if d is not None:
        if type(d) is int:
            d = float(d) if d.bit_length() <= 1023 else d
        if type(d) is not float or math.isnan(d):
            shown = f"an int of {d.bit_length()} bits" if type(d) is int else safe_repr(d, 60)
            raise UsageError(f"deadline: expected a time.monotonic() value (an int or a float, math.inf for none) or "
                             f"None, found {shown}")
    budget, memory = plain_index(max_monomials), plain_index(memory_limit)
    if type(budget) is not int or budget < 0:
        raise UsageError(f"max_monomials: expected an int ≥ 0, found {safe_repr(budget, 60)}")
    if memory is not None and (type(memory) is not int or memory < 1):
        raise UsageError(f"memory_limit: expected None or an int ≥ 1, found {safe_repr(memory, 60)}")
    if isolate is not None and type(isolate) is not bool:
        raise UsageError(f"isolate: expected True, False or None (automatic), found {safe_repr(isolate, 60)}")
    return d, budget, memory, isolate


def check_certificate(circuit: Circuit, model: Model, cert: Certificate, *, backend: PolyBackend = "flint",
                      deadline: float | None = None, max_monomials: int = DEFAULT_MAX_MONOMIALS,
                      memory_limit: int | None = None, isolate: bool | None = None) -> CompositionalResult:
    """Prove ``model ≡ circuit`` stage by stage; see the module docstring.

    A setting that :func:`check_settings` refuses raises :class:`~symverify.errors.UsageError`
    before anything is checked. Structural problems with the certificate raise :class:`IRError`; a stage whose claim does not
    hold yields ``ok=False`` with the first :class:`StageFailure`. Otherwise ``ok=False`` with
    ``failure=None`` means the check stopped: ``stopped`` says why and ``notes`` give details.
    When the certificate's ``meta`` names another circuit than ``circuit`` (its ``"circuit"`` name,
    or its ``"circuit_digest"``), ``meta_note`` says so (:func:`certificate_meta_note`, the note
    ``verify`` and ``symverify verify`` give): advisory only, every stage is checked against
    ``circuit`` and the result is about it. A certificate that does not fit ``circuit`` raises its
    :class:`IRError` alone (``verify`` adds the note to that error's message).

    Guarantees:

    * **Deadline.** With ``deadline`` (a ``time.monotonic()`` value) the deadline is polled between
      stages, between layers and every few hundred cell operations inside a stage, so the check
      returns within milliseconds of it (one polynomial operation excepted) with
      ``stopped="timeout"`` and the note ``"timeout"``.
    * **Memory.** No stage is expanded in this process unless a certified bound on its size
      (:func:`plan_stage`) is at most :data:`STAGE_IN_PROCESS_MONOMIALS` monomials. A larger stage
      runs in a child process limited to ``memory_limit`` bytes (default: a quarter of physical
      memory, :func:`~symverify.kernel.provers.options.default_memory_limit`) and to the time left
      (:func:`~symverify.kernel.provers.guard.run_limited`): FLINT aborting there ends only the child
      (``stopped="memory"`` or ``"crashed"``). A stage whose bound exceeds
      ``STAGE_REFUSE_FACTOR × max_monomials`` is not expanded at all (``stopped="budget"``), and
      every stage polynomial is checked against ``max_monomials`` as it is computed.
      ``isolate=False`` runs every stage in-process (no child process; FLINT may then abort the
      whole process on a stage that does not fit in memory); ``isolate=True`` is the same as
      None here (a child process per small stage would cost more than the stage).
    """
    deadline, max_monomials, memory_limit, isolate = check_settings(deadline, max_monomials, memory_limit, isolate)
    start = time.perf_counter()
    check = Deadline.at(deadline)
    try:
        validate_certificate(circuit, model, cert, check)
    except DeadlineExceededError:
        digests = claim_digests(circuit, model)
        return combine([StageOutcome(0, stopped="timeout", note="timeout")], cert.num_stages, time.perf_counter() - start,
                       digests=digests, meta_note=certificate_meta_note(circuit, cert, digests[0]))
    # validate_certificate has just compared both sides' snapshots (check_plain), and from here on
    # only the checker's own code runs: their digests need no second snapshot (checked_digest), and
    # what the memos store for them while the stages run is compared once, when the block ends
    # (checked_scope, as verify does for its sides; within verify's own block, verify's end compares)
    scope = nullcontext() if in_checked_scope(circuit, model) else checked_scope(circuit, model)
    with scope:
        digests = checked_digest(circuit), checked_digest(model)
        run = StageRun.of(circuit, model, backend=backend, deadline=deadline, max_monomials=max_monomials,
                          memory_limit=memory_limit, isolate=isolate)
        bs = cert.boundaries
        outcomes = []
        shapes: dict[Any, Any] = {}
        for k in range(len(bs) - 1):
            outcome = run.stage(circuit, model, k, bs[k], bs[k + 1], k == len(bs) - 2, check, shapes)
            outcomes.append(outcome)
            if not outcome.ok:
                break
        return combine(outcomes, len(bs) - 1, time.perf_counter() - start, digests=digests,
                       meta_note=certificate_meta_note(circuit, cert, digests[0]))


def claim_digests(circuit: Circuit, model: Model) -> tuple[str, str]:
    """What a certificate check is about: the content digests of the circuit and the model
    (:func:`~symverify.kernel.provers.fingerprint.content_digest`, the sides' ``side_digest``),
    computed after :func:`validate_certificate` accepted them (plain IR classes only)."""
    return content_digest(circuit), content_digest(model)


def certificate_meta_note(circuit: Circuit, cert: Certificate, digest: str | None = None) -> str | None:
    """A note when ``cert``'s ``meta`` names, as its ``"circuit"`` (the compilers write the name of
    the circuit they compiled there), a circuit other than ``circuit`` (by name; ``''``, which the
    compilers write for an unnamed circuit, names none and is never noted; an unnamed ``circuit`` is
    said to be one); else, when the meta has a ``"circuit_digest"`` (the compilers write the compiled
    circuit's ``"sha256:<hex>"`` side digest there) other than ``circuit``'s (``digest``, computed when
    None), a note naming both digests (another circuit under the same name, or none); None otherwise.
    Where the meta names another circuit but gives ``circuit``'s own digest (the digest leaves the
    name out), the note says so: the same circuit under another name.

    It changes no verdict: ``meta`` is free text and every stage is checked against ``circuit``, so
    the verdict is about that circuit (a proof stays a proof of it); the note says why a certificate
    written for another circuit fails. ``verify`` (through
    :func:`~symverify.kernel.provers.certified.meta_circuit_note`) and :func:`check_certificate` give it."""
    check_form(cert)
    meta = dict(cert.meta)
    named, written = meta.get("circuit"), meta.get("circuit_digest")
    name = circuit.name
    against = f"circuit {safe_repr(name, 60)}" if name else "an unnamed circuit"
    tail = ("every stage is checked against this circuit, so the verdict is about it (a certificate written for "
            "another circuit fails its stages)")
    if named and named != name:  # '' names no circuit
        if type(written) is str and written == (actual := content_digest(circuit) if digest is None else digest):
            return (f"the certificate's meta names circuit {safe_repr(named, 60)}, and it is checked against {against} "
                    f"of the same digest {actual}: the same circuit under another name (every stage is checked "
                    "against this circuit, so the verdict is about it)")
        return f"the certificate's meta names circuit {safe_repr(named, 60)}, but it is checked against {against}: {tail}"
    if written is None:
        return None
    actual = content_digest(circuit) if digest is None else digest
    if written == actual:
        return None
    whose = f"circuit {safe_repr(named, 60)}" if named else "a circuit"
    shown = repr(written) if len(written) <= 100 else repr(written[:100]) + "…"  # meta text: a digest in full, never more
    return (f"the certificate's meta names {whose} of digest {shown}, but it is checked against {against} "
            f"of digest {actual}: {tail}")


@dataclass(frozen=True)
class StageOutcome:
    """What checking one stage found: ``failure`` (the claim does not hold) or ``stopped`` (why
    it was not decided: ``"timeout"``, ``"budget"``, ``"memory"``, ``"crashed"``, with ``note``),
    else proved; ``layers`` its layer count (0 if the deadline passed before it started),
    ``estimate`` its certified size, ``isolated`` whether it ran in a memory-limited process,
    ``monomials`` the monomials compared. Plain data: it travels back from a Dask worker."""

    stage: int
    layers: int = 0
    estimate: int = 0
    isolated: bool = False
    monomials: int = 0
    failure: StageFailure | None = None
    stopped: str | None = None
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.failure is None and self.stopped is None


def combine(outcomes: list[StageOutcome], total: int, seconds: float, *,
            digests: tuple[str, str] | None = None, meta_note: str | None = None) -> CompositionalResult:
    """The :class:`CompositionalResult` of stage outcomes listed in stage order from stage 0
    (every stage up to the first that did not prove, or all ``total``): what the stage-by-stage
    loop of :func:`check_certificate` reports, wherever the stages ran; ``digests`` the circuit's
    and model's (:func:`claim_digests`) and ``meta_note`` (:func:`certificate_meta_note`), sealed with it."""
    mono = widest = isolated = largest = 0
    for k, o in enumerate(outcomes):
        if o.stage != k:
            raise ProverError(f"stage outcomes out of order: expected stage {k}, found {o.stage}")
        widest = max(widest, o.layers)
        largest = max(largest, o.estimate)
        isolated += o.isolated
        mono += o.monomials
        if o.failure is not None:
            return seal_outcome(CompositionalResult(False, k, total, o.failure, widest, seconds, mono, (), None, isolated, largest,
                                                    digests=digests, meta_note=meta_note))
        if o.stopped is not None:
            return seal_outcome(CompositionalResult(False, k, total, None, widest, seconds, mono, (o.note,), o.stopped, isolated,
                                                    largest, digests=digests, meta_note=meta_note))
    if len(outcomes) != total:
        raise ProverError(f"stage outcomes: expected {total} stages, found {len(outcomes)}")
    return seal_outcome(CompositionalResult(True, total, total, None, widest, seconds, mono, (), None, isolated, largest,
                                            digests=digests, meta_note=meta_note))


@dataclass(frozen=True)
class StageRun:
    """How every stage is checked (:func:`check_certificate`'s settings, and the parameters of
    both sides): :meth:`stage` checks one, here or on a Dask worker."""

    backend: PolyBackend
    params: tuple[str, ...]
    deadline: float | None
    max_monomials: int
    memory: int
    isolate: bool | None

    @staticmethod
    def of(circuit: Circuit, model: Model, *, backend: PolyBackend = "flint", deadline: float | None = None,
           max_monomials: int = DEFAULT_MAX_MONOMIALS, memory_limit: int | None = None,
           isolate: bool | None = None) -> StageRun:
        memory = memory_limit if memory_limit is not None else default_memory_limit()
        return StageRun(backend, tuple(sorted(circuit.params() | model.params())), deadline, max_monomials, memory,
                        isolate)

    def stage(self, circuit: Circuit, model: Model, k: int, b0: Boundary, b1: Boundary, last: bool,
              check: Deadline | None, shapes: dict[Any, Any]) -> StageOutcome:
        """Plan stage ``k`` (``b0 → b1``; ``last``: the final one, :func:`plan_stage`) and check it
        in this process, in a memory-limited child process, or not at all (refused)."""
        width = b1.layer - b0.layer
        params, deadline, max_monomials = self.params, self.deadline, self.max_monomials
        estimate, isolated, started = 0, False, False
        try:
            if check is not None:
                check()
            started = True
            plan = plan_stage(circuit, model, b0, b1, params, max_monomials=max_monomials, isolate=self.isolate,
                              check=check, shapes=shapes)
            estimate = plan.estimate
            if plan.where == "refused":
                return StageOutcome(k, width, estimate, stopped="budget", note=(
                    f"stage {k} (layers [{b0.layer}, {b1.layer})) not expanded: the certified estimate of "
                    f"{plan.estimate} live monomials exceeds {STAGE_REFUSE_FACTOR}× max_monomials = {max_monomials}"))
            if plan.where == "isolated":
                isolated = True
                PolyRing(0, (), self.backend)  # import the engine here: a missing one raises here, not in the child
                remaining = None if check is None else max(check.remaining(), 0.0)
                lim = run_limited(_stage_in_child, (circuit, model, k, b0, b1, last, self.backend, params, deadline,
                                                    max_monomials), memory=self.memory, timeout=remaining,
                                  what=f"the check of stage {k}")
                if lim.status == "timeout":
                    return StageOutcome(k, width, estimate, True, stopped="timeout", note="timeout")
                if lim.status != "ok":
                    return StageOutcome(k, width, estimate, True, stopped=lim.status, note=(
                        f"stage {k} (layers [{b0.layer}, {b1.layer}), certified estimate {plan.estimate} live "
                        f"monomials) ran in a memory-limited process that stopped ({lim.status}): {lim.detail}"))
                failure, m = lim.value
            else:
                failure, m = _check_stage(circuit, model, k, b0, b1, last, self.backend, params, check, max_monomials,
                                          shapes)
        except DeadlineExceededError:
            return StageOutcome(k, width if started else 0, estimate, isolated, stopped="timeout", note="timeout")
        except _BudgetError as e:
            return StageOutcome(k, width, estimate, isolated, stopped="budget",
                                note=f"stage {k} (layers [{b0.layer}, {b1.layer})): {e}")
        return StageOutcome(k, width, estimate, isolated, m, failure)
