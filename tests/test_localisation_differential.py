"""The compositional prover's failure localisation against an independent oracle.

``verify(c, compile(c), method="compositional")`` checks a stage certificate stage by stage
(Lemma H.11, docs/theory.md §5) and, when a stage does not check, names the first failing stage,
its layer range, its end boundary's label and a cell. This file recomputes all of that without
the prover:

* an interpreter of BaseConv written here over sympy polynomials (``y = (u·W + b1) ⊙ (h ⊛ u +
  b2)``, causal or cyclic, docs/theory.md §1.1; the input embedded in the top-left corner and
  the output read from there, §1.2);
* a reader of a boundary's cells (``Σ coeff·node + const``, every unlisted cell 0; at the last
  boundary only the ``N×d`` read-out block, ``symverify.kernel.ir.certificate``) that says whether
  a state equals the claim, with node values either

  - the circuit's own polynomials in the inputs (the *semantic* oracle: is boundary ``k+1``
    the model's state, given that boundary ``k`` is), or
  - fresh variables for the nodes the start boundary mentions (``0·node`` included: a
    declaration that the node is available), the circuit's gates expanded down to them (the
    *stage* oracle: the claim docs/theory.md §5 says each stage is checked for).

The stage oracle's first failing stage (and its first failing cell: the end boundary's listed
cells in order, then unlisted nonzero cells row by row; no cell when a claimed node cannot be
derived from the start boundary's nodes) must be what the prover reports, locally and through
the Dask task function on layer windows. Stage-wise soundness makes the semantic oracle's first
false boundary no earlier. Verdicts: ``refuted`` only with a counterexample this interpreter
confirms; ``proved`` only when every boundary is the model's true state; ``unknown`` only when
the stage oracle finds a failing stage. Planted localisation bugs (stage number shifted, another
cell named) are caught.

``SYMVERIFY_LOCDIFF_EXAMPLES`` raises the number of drawn examples (default a few seconds);
``SYMVERIFY_LOCDIFF_DASK=1`` also runs ``scheduler="local"`` (starts a local cluster).
"""

from __future__ import annotations

import dataclasses
import os
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sympy import QQ
from sympy.polys.rings import ring

import symverify as sv
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.certificate import Boundary, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import Sym, is_zero
from symverify.kernel.provers import compositional
from symverify.kernel.provers.compositional import StageRun, check_certificate, combine
from symverify.kernel.provers.outcome import Verdict
from symverify.kernel.provers.stages_dask import LayerWindow, check_stages, pack, stage_runs
from symverify.library import random_circuit
from symverify.mutate import mutate_cell, weight_mutant
from symverify.strategies import circuits

EXAMPLES = int(os.environ.get("SYMVERIFY_LOCDIFF_EXAMPLES", "0"))
DASK = os.environ.get("SYMVERIFY_LOCDIFF_DASK", "") == "1"
WEIGHT_OPS = ("inc", "neg", "zero", "one", "mode", "sym")


# ---- the oracle: exact values --------------------------------------------------------------------


def q(x: Any) -> Any:
    """A rational number as an element of QQ."""
    f = Fraction(x)
    return QQ(f.numerator, f.denominator)


def params_of(c: Circuit, model: Model, cert: Certificate | None = None) -> list[str]:
    """Every weight symbol's parameter names (circuit, model and certificate)."""
    names = set(c.params()) | set(model.params())
    if cert is not None:
        for b in cert.boundaries:
            for cell in b.cells:
                names |= set(cell.params())
    return sorted(names)


class Poly:
    """A polynomial ring over QQ in ``names`` and the parameters ``params`` (sympy's sparse
    polynomials: equality is exact); ``const`` turns a weight (a number or a :class:`Sym`) into
    an element."""

    def __init__(self, names: list[str], params: list[str] = ()) -> None:  # type: ignore[assignment]
        every = [*names, *(f"p_{p}" for p in params)]
        self.R, *gens = ring(every or ["_unused"], QQ)
        self.gens = gens[: len(names)] if every else []
        self.params = dict(zip(params, gens[len(names):]))
        self.zero = self.R(0)

    def const(self, x: Any) -> Any:
        if not isinstance(x, Sym):
            return self.R(q(x))
        acc = self.zero
        for mono, co in x.terms:
            t = self.R(q(co))
            for name, e in mono:
                t *= self.params[name] ** e
            acc += t
        return acc
def run_layer(layer: Any, u: list[list[Any]], P: Poly) -> list[list[Any]]:
    """``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` (docs/theory.md §1.1), ``⊛`` per column, causal or cyclic."""
    nn, dd = len(u), len(u[0])
    cyclic = layer.mode is Mode.CYCLIC
    W = [[P.const(layer.W.get(k, j)) for j in range(dd)] for k in range(dd)]
    h = [[P.const(layer.h.get(k, j)) for j in range(dd)] for k in range(nn)]
    out = []
    for i in range(nn):
        row = []
        for j in range(dd):
            left = P.const(layer.b1.get(i, j))
            for k in range(dd):
                if W[k][j]:
                    left += u[i][k] * W[k][j]
            right = P.const(layer.b2.get(i, j))
            for k in range(nn if cyclic else i + 1):
                if h[k][j]:
                    right += u[(i - k) % nn][j] * h[k][j]
            row.append(left * right)
        out.append(row)
    return out


def run_layers(model: Model, lo: int, hi: int, state: list[list[Any]], P: Poly) -> list[list[Any]]:
    for layer in model.layers[lo:hi]:
        state = run_layer(layer, state, P)
    return state


def node_values(c: Circuit, P: Poly) -> list[Any]:
    """Every node of ``c`` as a polynomial in the inputs (``P``'s generators)."""
    vals = list(P.gens[: c.num_inputs])
    for v in range(c.num_inputs, c.num_nodes):
        g = c.gate(v)
        if g.op.name == "CONST":
            vals.append(P.const(g.coeffs[0]))
        elif g.op.name == "MUL":
            vals.append(vals[g.args[0]] * vals[g.args[1]])
        else:
            acc = P.zero
            for a, co in zip(g.args, g.coeffs):
                acc += vals[a] * P.const(co)
            vals.append(acc)
    return vals


def cell_value(cell: Any, vals: Any, P: Poly) -> Any:
    acc = P.const(cell.const)
    for v, co in cell.terms:
        if not is_zero(co):
            acc += vals[v] * P.const(co)
    return acc


def claimed_state(b: Boundary, vals: Any, P: Poly, nn: int, dd: int) -> list[list[Any]]:
    s = [[P.zero] * dd for _ in range(nn)]
    for cell in b.cells:
        s[cell.row][cell.col] = cell_value(cell, vals, P)
    return s


def wrong_cells(b: Boundary, vals: Any, state: list[list[Any]], P: Poly, last: bool, n: int, d: int) -> list[tuple[int, int]]:
    """The cells where ``state`` is not what boundary ``b`` claims: its listed cells in their
    order, then the unlisted nonzero cells row by row (at the last boundary only those inside
    the ``n×d`` read-out block)."""
    bad = [(c.row, c.col) for c in b.cells if state[c.row][c.col] != cell_value(c, vals, P)]
    listed = {(c.row, c.col) for c in b.cells}
    for i, row in enumerate(state):
        for j, x in enumerate(row):
            if (i, j) not in listed and x and (not last or (i < n and j < d)):
                bad.append((i, j))
    return bad


@dataclasses.dataclass(frozen=True)
class Where:
    """A located failure: stage, layer range, end label, cell (None: a node is missing)."""

    stage: int
    layers: tuple[int, int]
    label: str
    cell: tuple[int, int] | None

    def text(self) -> str:
        """The report's prefix for it (``StageFailure.__str__``'s documented form)."""
        where = f" cell {self.cell}" if self.cell is not None else ""
        return f"stage {self.stage} ({self.label or 'unlabelled'}, layers [{self.layers[0]}, {self.layers[1]})){where}: "


def semantic_first_false(c: Circuit, model: Model, cert: Certificate) -> Where | None:
    """The first stage whose end boundary is not the model's state though its start is (node
    values: the circuit's polynomials in the inputs); None when every boundary is true."""
    P = Poly([f"x{i}" for i in range(c.num_inputs)], params_of(c, model, cert))
    vals = node_values(c, P)
    bs = cert.boundaries
    nn, dd = model.inner_n, model.inner_d
    for k in range(len(bs) - 1):
        b0, b1 = bs[k], bs[k + 1]
        out = run_layers(model, b0.layer, b1.layer, claimed_state(b0, vals, P, nn, dd), P)
        bad = wrong_cells(b1, vals, out, P, k == len(bs) - 2, c.n, c.d)
        if bad:
            return Where(k, (b0.layer, b1.layer), b1.label, bad[0])
    return None


class MissingError(Exception):
    pass


def stage_first_false(c: Circuit, model: Model, cert: Certificate) -> Where | None:
    """The first stage whose claim fails on fresh variables for the start boundary's nodes (the
    circuit's gates expanded down to them; a zero LIN coefficient does not read its operand)."""
    bs = cert.boundaries
    nn, dd = model.inner_n, model.inner_d
    for k in range(len(bs) - 1):
        b0, b1 = bs[k], bs[k + 1]
        # every node the start boundary mentions, ``0·node`` included (a declaration that the node
        # is available: ``symverify.compiler.layout.mention``), is a fresh variable
        front = sorted({v for cell in b0.cells for v, _ in cell.terms})
        P = Poly([f"t{v}" for v in front], params_of(c, model, cert))
        vals: dict[int, Any] = dict(zip(front, P.gens))

        def value(v: int, P: Poly = P, vals: dict[int, Any] = vals) -> Any:
            if v not in vals:
                g = c.gate(v)
                if g is None:
                    raise MissingError(v)
                if g.op.name == "CONST":
                    vals[v] = P.const(g.coeffs[0])
                elif g.op.name == "MUL":
                    vals[v] = value(g.args[0]) * value(g.args[1])
                else:
                    acc = P.zero
                    for a, co in zip(g.args, g.coeffs):
                        if not is_zero(co):
                            acc += value(a) * P.const(co)
                    vals[v] = acc
            return vals[v]

        where = Where(k, (b0.layer, b1.layer), b1.label, None)
        try:
            for cell in b1.cells:
                for v, _ in cell.terms:  # a mentioned node must be derivable, even as 0·node
                    value(v)
        except MissingError:
            return where
        out = run_layers(model, b0.layer, b1.layer, claimed_state(b0, vals, P, nn, dd), P)
        bad = wrong_cells(b1, vals, out, P, k == len(bs) - 2, c.n, c.d)
        if bad:
            return dataclasses.replace(where, cell=bad[0])
    return None


def exact_outputs(c: Circuit, model: Model, u: list[list[Any]], params: dict[str, Any]) -> tuple[list[list[Any]], list[list[Any]]]:
    """Both sides at the input ``u`` and the parameter values ``params`` (exact rationals): the
    circuit's ``n×d`` output and the model's read-out block."""
    P = Poly([])
    P.params = {k: P.R(q(v)) for k, v in params.items()}
    flat = [P.const(x) for row in u for x in row]
    P.gens = flat  # the circuit's inputs, at the point
    vals = node_values(c, P)
    want = [[P.zero] * c.d for _ in range(c.n)]
    for k, o in enumerate(c.outputs):
        want[k // c.d][k % c.d] = vals[o]
    s = [[P.zero] * model.inner_d for _ in range(model.inner_n)]
    for i in range(c.num_inputs):
        s[i // c.d][i % c.d] = flat[i]
    s = run_layers(model, 0, len(model.layers), s, P)
    return want, [row[: c.d] for row in s[: c.n]]


# ---- the differential check ----------------------------------------------------------------------

LAST: dict[str, Any] = {}  # what the last assert_localised saw (for hypothesis' statistics)


def local_failure(c: Circuit, model: Model, cert: Certificate) -> Where | None:
    res = check_certificate(c, model, cert, isolate=False)
    assert res.failure is not None or res.ok, res
    f = res.failure
    return None if f is None else Where(f.stage, f.layers, f.label, f.cell)


def windowed_failure(c: Circuit, model: Model, cert: Certificate, tasks: int) -> Where | None:
    """The Dask path's task function (:func:`check_stages`) on layer windows, cut into ``tasks``
    runs, combined as ``check_certificate_dask`` combines them."""
    bs = cert.boundaries
    run = StageRun.of(c, model, isolate=False)
    outcomes = []
    for a, b in stage_runs(bs, tasks):
        part = check_stages(c, LayerWindow.of(model, bs[a].layer, bs[b].layer), a, pack(bs[a:b + 1]), len(bs) - 2, run,
                            None)
        outcomes.extend(part)
        if not part[-1].ok:
            break
    res = combine(outcomes, len(bs) - 1, 0.0)
    f = res.failure
    assert res.ok or f is not None, res
    return None if f is None else Where(f.stage, f.layers, f.label, f.cell)


def assert_localised(c: Circuit, model: Model, cert: Certificate, *, report: bool = True) -> Where | None:
    """The prover's localisation (local, windowed, and in ``verify``'s report) against the oracles."""
    oracle = stage_first_false(c, model, cert)
    semantic = semantic_first_false(c, model, cert)
    if oracle is None:  # every stage claim holds on fresh variables: so does every boundary
        assert semantic is None, (oracle, semantic)
    if semantic is not None:
        assert oracle is not None and oracle.stage <= semantic.stage, (oracle, semantic)
    LAST.update(verdict=None, agree=oracle == semantic)
    got = local_failure(c, model, cert)
    assert got == oracle, f"prover {got}, oracle {oracle} (semantic {semantic})"
    for tasks in (1, 3):
        assert windowed_failure(c, model, cert, tasks) == oracle, tasks
    if not report:
        return oracle
    r = sv.verify(c, model, method="compositional", certificate=cert, isolate=False)
    LAST["verdict"] = r.verdict.value
    if oracle is None:
        assert r.verdict is Verdict.PROVED, str(r)
        return oracle
    assert r.verdict is not Verdict.PROVED, str(r)
    assert r.evidence["failed_stage"] == oracle.stage
    assert r.evidence["failure"].startswith(oracle.text()), (r.evidence["failure"], oracle.text())
    if r.verdict is Verdict.REFUTED:
        cex = r.counterexample
        assert cex.stage.startswith(oracle.text())
        want, got_y = exact_outputs(c, model, [list(row) for row in cex.inputs], cex.param_dict())
        i, j = cex.cell
        assert want != got_y and want[i][j] == q(cex.lhs_value) and got_y[i][j] == q(cex.rhs_value)
        assert want[i][j] != got_y[i][j]
    else:
        assert r.verdict is Verdict.UNKNOWN, str(r)
    return oracle


# ---- mutants ------------------------------------------------------------------------------------


def drop_boundary(cert: Certificate, k: int) -> Certificate:
    """``cert`` without interior boundary ``k`` (two stages merged into one)."""
    bs = cert.boundaries
    assert 0 < k < len(bs) - 1
    return Certificate(bs[:k] + bs[k + 1:], cert.meta)


def compiled(c: Circuit, method: str) -> Any:
    return sv.compile(c, method=method)


@pytest.fixture(scope="module")
def small():
    c = random_circuit(2, 2, 6, 3, seed=1, num_outputs=2)
    return c, {m: compiled(c, m) for m in ("kaleidoscope", "dense")}


@pytest.mark.parametrize("method", ["kaleidoscope", "dense"])
def test_compiled_models_hold_at_every_boundary(small, method):
    c, comps = small
    comp = comps[method]
    assert semantic_first_false(c, comp.model, comp.certificate) is None
    assert assert_localised(c, comp.model, comp.certificate) is None


@pytest.mark.parametrize("method", ["kaleidoscope", "dense"])
def test_weight_mutants_fail_where_the_oracle_says(small, method):
    c, comps = small
    comp = comps[method]
    failed = 0
    for seed in range(6):
        mut = weight_mutant(comp.model, seed=seed, operators=WEIGHT_OPS).obj
        failed += assert_localised(c, mut, comp.certificate, report=seed < 3) is not None
    assert failed  # the mutants are not all harmless


@pytest.mark.parametrize("method", ["kaleidoscope", "dense"])
def test_edited_and_dropped_boundaries_fail_where_the_oracle_says(small, method):
    c, comps = small
    comp = comps[method]
    cert, model = comp.certificate, comp.model
    bs = cert.boundaries
    seen = set()
    for k in range(1, len(bs) - 1):
        for t in range(len(bs[k].cells)):
            for op in ("const", "coeff", "drop"):
                w = assert_localised(c, model, mutate_cell(cert, k, t, op), report=t == 0)
                assert w is not None and w.stage in (k - 1, k)  # the lie shows at its own boundary's stages
                seen.add(w.stage)
        other = bs[k].cells[0].terms[0][0] + 1
        assert_localised(c, model, mutate_cell(cert, k, 0, "node", to=other % c.num_nodes), report=False)
    # a dropped boundary merges two stages: still true on the honest model, renumbered on a mutant
    for k in range(1, len(bs) - 1):
        assert assert_localised(c, model, drop_boundary(cert, k), report=False) is None
        mut = weight_mutant(model, seed=k, operators=WEIGHT_OPS).obj
        assert_localised(c, mut, drop_boundary(cert, k), report=False)
    assert len(seen) > 1


def repeat_boundary(cert: Certificate, k: int, edit: Any = None) -> Certificate:
    """``cert`` with boundary ``k`` listed twice (a stage of no layers between the copies), the
    copy changed by ``edit`` (a function of the boundary)."""
    bs = cert.boundaries
    copy = bs[k] if edit is None else edit(bs[k])
    return Certificate((*bs[:k + 1], copy, *bs[k + 1:]), cert.meta)


@pytest.mark.parametrize("method", ["kaleidoscope", "dense"])
def test_stages_of_no_layers_are_located(small, method):
    c, comps = small
    comp = comps[method]
    cert, model = comp.certificate, comp.model
    k = len(cert.boundaries) // 2
    assert assert_localised(c, model, repeat_boundary(cert, k)) is None
    shifted = repeat_boundary(cert, k, lambda b: Boundary(b.layer, tuple(
        dataclasses.replace(x, const=x.const + 1) if n == len(b.cells) - 1 else x for n, x in enumerate(b.cells)), "copy"))
    w = assert_localised(c, model, shifted)
    last = shifted.boundaries[k + 1].cells[-1]
    assert w == Where(k, (shifted.boundaries[k].layer,) * 2, "copy", (last.row, last.col))


def with_term(cert: Certificate, k: int, node: int, coeff: Any) -> Certificate:
    """``cert`` with the term ``coeff·node`` added to the first cell of boundary ``k``."""
    bs = cert.boundaries
    b = bs[k]
    first = b.cells[0]
    cell = dataclasses.replace(first, terms=(*first.terms, (node, coeff)))
    return Certificate((*bs[:k], Boundary(b.layer, (cell, *b.cells[1:]), b.label), *bs[k + 1:]), cert.meta)


@pytest.mark.parametrize("method", ["kaleidoscope", "dense"])
def test_a_term_with_coefficient_zero_declares_its_node(small, method):
    # ``0·%v`` leaves every boundary the model's true state (the semantic oracle), but the checker
    # reads it as "%v is available here": needed from the stage before, a fresh variable in the
    # stage after. So such a term can fail a stage of a true certificate (never refuted: the
    # model is right), and the prover locates that failure where the stage oracle does.
    c, comps = small
    comp = comps[method]
    cert, model = comp.certificate, comp.model
    bs = cert.boundaries
    failed = 0
    for k in range(1, len(bs) - 1):
        for v in range(c.num_nodes):
            zero = with_term(cert, k, v, 0)
            assert semantic_first_false(c, model, zero) is None
            w = assert_localised(c, model, zero, report=v == c.num_nodes - 1)
            failed += w is not None
            if w is not None:
                assert LAST["verdict"] in (None, "unknown"), LAST
    assert failed


def test_the_compiler_mentions_the_nodes_a_cancelling_gate_reads():
    # %2 = %1 − %1 is 0 but its gate reads %1: the compiler mentions %1 as ``0·%1``
    # (``symverify.compiler.layout.mention``); without that term every boundary is still true, yet
    # the stage that derives %2 cannot (a missing node, no cell)
    c = Circuit(1, 2, (Gate.lin(1, 1, 1, -1), Gate.mul(0, 0), Gate.lin(2, 1, 3, -1), Gate.mul(3, 2), Gate.mul(4, 4)),
                (6, 5))
    comp = sv.compile(c)
    assert assert_localised(c, comp.model, comp.certificate) is None
    bs = comp.certificate.boundaries
    bare = Certificate(tuple(Boundary(b.layer, tuple(dataclasses.replace(x, terms=tuple(t for t in x.terms if t[1] != 0))
                                                     for x in b.cells), b.label) for b in bs), comp.certificate.meta)
    assert bare != comp.certificate
    assert semantic_first_false(c, comp.model, bare) is None
    w = assert_localised(c, comp.model, bare)
    assert w is not None and w.cell is None and LAST["verdict"] == "unknown"


def test_a_missing_node_is_located_without_a_cell(small):
    c, comps = small
    cert = comps["dense"].certificate
    bs = cert.boundaries
    # the next-to-last boundary claims input %1 (not available there) where node %0 sits: its stage cannot derive it
    lie = mutate_cell(cert, len(bs) - 2, 0, "node", to=1)
    w = assert_localised(c, comps["dense"].model, lie)
    assert w is not None and w.stage == len(bs) - 3 and w.cell is None


@settings(max_examples=EXAMPLES or 8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=circuits(max_n=3, max_d=2, max_gates=10, min_outputs=1, allow_sym=True), method=st.sampled_from(["kaleidoscope", "dense"]),
       seed=st.integers(0, 2**16), edit=st.sampled_from(["weight", "cell", "drop", "none"]))
def test_drawn_circuits_and_mutants(c, method, seed, edit):
    comp = compiled(c, method)
    model, cert = comp.model, comp.certificate
    bs = cert.boundaries
    if edit == "weight" and model.layers:
        model = weight_mutant(model, seed=seed, operators=WEIGHT_OPS).obj
    elif edit == "cell" and len(bs) > 2:
        spots = [(k, t) for k in range(1, len(bs) - 1) for t in range(len(bs[k].cells))]
        if spots:
            k, t = spots[seed % len(spots)]
            op = ("const", "coeff", "drop", "node")[seed % 4]
            cell = bs[k].cells[t]
            if op == "node" and cell.terms:
                to = (cell.terms[0][0] + 1 + seed % c.num_nodes) % c.num_nodes
                cert = mutate_cell(cert, k, t, op, to=to) if to != cell.terms[0][0] else cert
            elif op != "node":
                cert = mutate_cell(cert, k, t, op)
    elif edit == "drop" and len(bs) > 2:
        cert = drop_boundary(cert, 1 + seed % (len(bs) - 2))
        if model.layers:
            model = weight_mutant(model, seed=seed, operators=WEIGHT_OPS).obj
    w = assert_localised(c, model, cert)
    event(f"{edit}: {'holds' if w is None else 'fails'}, {len(cert.boundaries) - 1} stages, symbols: {bool(params_of(c, model, cert))}")
    event(f"verdict {LAST['verdict']}; semantic oracle {'agrees' if LAST['agree'] else 'later'}")


# ---- the oracle catches planted localisation bugs -------------------------------------------------


def _planted(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    real = compositional._check_stage

    def wrong(*args: Any, **kwargs: Any) -> Any:
        failure, m = real(*args, **kwargs)
        return (None if failure is None else change(failure)), m

    monkeypatch.setattr(compositional, "_check_stage", wrong)


@pytest.mark.parametrize("bug", ["stage", "cell", "label"])
def test_a_planted_localisation_bug_is_caught(small, monkeypatch, bug):
    c, comps = small
    comp = comps["kaleidoscope"]
    lie = mutate_cell(comp.certificate, 2, 0, "const")
    assert assert_localised(c, comp.model, lie, report=False) is not None
    change = {
        "stage": lambda f: dataclasses.replace(f, stage=f.stage + 1),
        "cell": lambda f: dataclasses.replace(f, cell=(f.cell[0] + 1, f.cell[1]) if f.cell else (0, 0)),
        "label": lambda f: dataclasses.replace(f, label=f.label + "?"),
    }[bug]
    _planted(monkeypatch, change)
    with pytest.raises(AssertionError, match="prover"):
        assert_localised(c, comp.model, lie, report=False)


@pytest.mark.skipif(not DASK, reason="starts a local Dask cluster: SYMVERIFY_LOCDIFF_DASK=1")
def test_dask_local_scheduler_localises_the_same(small):
    c, comps = small
    comp = comps["kaleidoscope"]
    for seed in range(3):
        mut = weight_mutant(comp.model, seed=seed, operators=WEIGHT_OPS).obj
        oracle = stage_first_false(c, mut, comp.certificate)
        r = sv.verify(c, mut, method="compositional", certificate=comp.certificate, scheduler="local", isolate=False)
        if oracle is None:
            assert r.proved, str(r)
        else:
            assert r.evidence["failed_stage"] == oracle.stage and r.evidence["failure"].startswith(oracle.text())
