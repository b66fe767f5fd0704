"""Forged stage certificates against wrong models: never ``proved`` (Lemma H.11's checker).

A certificate is untrusted input (``verify(..., certificate=...)``, JSON files, the CLI's
``--certificate``). Each attack takes a small compiled circuit, changes one weight of its model,
checks independently (``method="exact"``, no certificate) that the model is now wrong, and then
forges certificates that are as consistent as possible with the wrong model:

* *recomputed*: every intermediate claim is re-derived from the wrong model by exact evaluation
  at random rational points: a cell is listed as ``a·node + b`` for a circuit node that matches
  it at every point, a cell that is 0 in the wrong model is left out, and a cell no node matches
  keeps its old claim (or is left out, i.e. claimed 0, when it had none);
* the same with the stages coarsened, merged into one, a stage duplicated, boundaries moved,
  reordered or dropped, cells dropped from a boundary's support (the mutated cell among them),
  fewer output cells, the declared sizes changed, another circuit's certificate of the same shape,
  and the mutation operators of :mod:`symverify.mutate` on the claims;
* the JSON form edited by hand (extra and missing keys, huge ints, negative indices, bools);
* the same through ``verify`` (a compiled object carrying the forgery too), the CLI, Dask (every
  cut into tasks), both polynomial backends, memory-limited stage processes, and a weight made
  the symbol ``m`` with claims in ``m``.

Every forged pair is either refused as malformed (an :class:`~symverify.errors.SymverifyError`
with a message) or not proved; a refutation's counterexample is re-evaluated here exactly.
"""

from __future__ import annotations

import copy
import json
import random
from fractions import Fraction
from types import SimpleNamespace

import pytest

import symverify as sv
from symverify.errors import IRError, SerializationError, SymverifyError
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics.evaluate import embed, eval_circuit_nodes, eval_layers
from symverify.kernel.semantics.rings import FractionRing
from symverify.library import random_circuit, random_linear_circuit
from symverify.mutate import (
    WeightSite,
    certificate_mutant,
    flip_mode,
    get_weight,
    mode_matters,
    mutate_weight,
    weight_sites,
)

PROVED = sv.Verdict.PROVED
REFUTED = sv.Verdict.REFUTED


# ---- the instances ------------------------------------------------------------------------------

def _instances() -> dict[str, tuple[Circuit, sv.Compiled]]:
    cases = {
        "random_h21": random_circuit(2, 2, 8, 3, seed=1),
        "random_h21_b": random_circuit(2, 1, 6, 3, seed=4),
        "linear_h19": random_linear_circuit(2, 2, 6, 2, seed=3),
    }
    out = {k: (c, sv.compile(c)) for k, c in cases.items()}
    dense = random_circuit(2, 1, 5, 2, seed=2)
    out["random_dense"] = (dense, sv.compile(dense, "dense"))
    return out


INSTANCES = _instances()


UNLISTED = {
    "random_h21": (WeightSite(9, "b1", 24, 0), WeightSite(17, "h", 1, 1)),
    "random_h21_b": (WeightSite(1, "b1", 13, 0), WeightSite(3, "b1", 24, 0)),
    "linear_h19": (WeightSite(1, "b1", 7, 0),),
}
"""Zero weights that, set to 1, put a nonzero value into a cell the certificate claims is 0 (and
change the output): found by scanning every zero weight of the compiled models."""


def _sites(model: Model, name: str = "") -> list[tuple[str, object]]:
    """Mutation sites spread over the model: first, middle and last layer, a bias, a filter tap,
    a projection weight, a zero bias, the zero weights of :data:`UNLISTED` (their change lands in
    a cell the certificate leaves out), and a convolution mode; each as ``(description, site or
    layer)``."""
    nz = weight_sites(model)
    L = len(model.layers)
    picks: list[tuple[str, object]] = []

    def first(pred, what):
        for s in nz:
            if pred(s):
                picks.append((what, s))
                return

    first(lambda s: s.layer == 0, "first layer")
    first(lambda s: s.layer == L // 2, "middle layer")
    first(lambda s: s.layer == L - 1, "last layer (read-out)")
    first(lambda s: s.grid in ("b1", "b2") and 0 < s.layer < L - 1, "a bias")
    first(lambda s: s.grid == "h" and 0 < s.layer < L - 1, "a filter tap")
    first(lambda s: s.grid == "W" and 0 < s.layer < L - 1, "a projection weight")
    zeros = [s for s in weight_sites(model, nonzero=False) if s.grid in ("b1", "b2")]
    if zeros:
        picks.append(("a zero cell", zeros[len(zeros) // 2]))
    picks += [("a zero cell", s) for s in UNLISTED.get(name, ())]
    flippable = [k for k, layer in enumerate(model.layers) if mode_matters(layer)]  # a flip of the others is no change
    if flippable:
        picks.append(("mode", min(flippable, key=lambda k: abs(k - L // 2))))
    return picks


def _mutants(c: Circuit, model: Model, name: str = "") -> list[tuple[str, Model, int]]:
    """``(description, wrong model, mutated layer)`` for every site whose change the exact method
    (no certificate) refutes; changes that leave the function alone are skipped."""
    out = []
    for what, site in _sites(model, name):
        if what == "mode":
            bad, layer = flip_mode(model, site), site
        else:
            op = "one" if what == "a zero cell" else "inc"
            bad, layer = mutate_weight(model, site, op), site.layer
            what = f"{what}: {site} {op} (was {get_weight(model, site)})"
        if sv.verify(c, bad, method="exact").verdict is REFUTED:
            out.append((what, bad, layer))
    return out


# ---- the forger ---------------------------------------------------------------------------------

def _points(n: int, d: int, k: int, seed: int) -> list[list[list[Fraction]]]:
    rng = random.Random(seed)
    return [[[Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 97)) for _ in range(d)] for _ in range(n)]
            for _ in range(k)]


def _match(y: list[Fraction], xs: dict[int, list[Fraction]], prefer: list[int]) -> tuple[int, Fraction, Fraction] | None:
    """A node ``v`` and ``a ≠ 0, b`` with ``y = a·x_v + b`` at every point (the preferred nodes first)."""
    for v in prefer + [v for v in xs if v not in prefer]:
        x = xs[v]
        if x[1] == x[0]:
            continue
        a = (y[1] - y[0]) / (x[1] - x[0])
        b = y[0] - a * x[0]
        if a != 0 and all(yi == a * xi + b for xi, yi in zip(x, y)):
            return v, a, b
    return None


def recomputed(c: Circuit, model: Model, cert: Certificate, seed: int = 0) -> Certificate:
    """The certificate rewritten to be true of ``model`` wherever a circuit node can say so: at
    every intermediate boundary each nonzero cell of ``model``'s state (evaluated exactly at
    random points) is listed as ``a·node + b`` for a matching node (the old claim's node first),
    a zero cell is left out, and an unmatched cell keeps its old claim (or stays out)."""
    pts = _points(c.n, c.d, 6, seed)
    ring = FractionRing()
    nodes = [eval_circuit_nodes(c, [x for row in u for x in row], ring) for u in pts]
    xs = {v: [Fraction(vals[v]) for vals in nodes] for v in range(c.num_nodes)}
    bs = cert.boundaries
    states = [embed(u, model.inner_n, model.inner_d, 0) for u in pts]
    at = 0
    out = [bs[0]]
    for b in bs[1:-1]:
        states = [eval_layers(model.layers[at:b.layer], s, ring) for s in states]
        at = b.layer
        old = {(x.row, x.col): x for x in b.cells}
        cells = []
        for i in range(model.inner_n):
            for j in range(model.inner_d):
                y = [Fraction(s[i][j]) for s in states]
                if all(v == 0 for v in y):
                    continue
                prev = old.get((i, j))
                m = _match(y, xs, prev.nodes() if prev is not None else [])
                if m is not None:
                    v, a, b0 = m
                    cells.append(Cell(i, j, ((v, a),), b0))
                elif prev is not None:
                    cells.append(prev)
        out.append(Boundary(b.layer, tuple(cells), b.label))
    out.append(bs[-1])
    return Certificate(tuple(out))


def _drop(cert: Certificate, k: int) -> Certificate:
    return Certificate(cert.boundaries[:k] + cert.boundaries[k + 1:])


def _with(cert: Certificate, k: int, b: Boundary) -> Certificate:
    return Certificate((*cert.boundaries[:k], b, *cert.boundaries[k + 1:]))


def forgeries(c: Circuit, model: Model, cert: Certificate, layer: int,
              other: Certificate | None = None) -> list[tuple[str, Certificate]]:
    """Certificates to hand with the wrong ``model`` (mutated at ``layer``)."""
    bs = cert.boundaries
    rec = recomputed(c, model, cert)
    rb = rec.boundaries
    out = [("original", cert), ("recomputed", rec),
           ("one stage", Certificate((bs[0], bs[-1]))),
           ("recomputed, every other boundary", Certificate((*rb[:-1:2], rb[-1]))),
           ("recomputed, a stage duplicated", Certificate(rb[:2] + rb[1:])),
           ("recomputed, reversed middle", Certificate((rb[0], *rb[-2:0:-1], rb[-1])))]
    # the boundary right after the mutated layer (the first claim the change can reach)
    after = next(k for k, b in enumerate(rb) if b.layer > layer)
    out.append(("recomputed, boundary after the mutation dropped", _drop(rec, after) if after < len(rb) - 1 else rec))
    b = rb[after]
    for j in range(len(b.cells)):
        if after < len(rb) - 1:
            out.append((f"recomputed, cell {j} dropped after the mutation",
                        _with(rec, after, Boundary(b.layer, b.cells[:j] + b.cells[j + 1:], b.label))))
    if after < len(rb) - 1:
        out.append(("recomputed, boundary after the mutation emptied", _with(rec, after, Boundary(b.layer, (), b.label))))
    for k in (1, len(bs) // 2, len(bs) - 2):
        if 0 < k < len(bs) - 1:
            for dl in (-1, 1):
                moved = bs[k].layer + dl
                if 0 <= moved <= bs[-1].layer:
                    out.append((f"boundary {k} moved by {dl}", _with(cert, k, Boundary(moved, bs[k].cells, bs[k].label))))
                    out.append((f"recomputed boundary {k} moved by {dl}",
                                _with(rec, k, Boundary(moved, rb[k].cells, rb[k].label))))
    # the claims re-labelled with another stage's cells at the same layer
    if len(bs) > 3:
        out.append(("boundary 1's cells at boundary 2's layer", _with(cert, 2, Boundary(bs[2].layer, bs[1].cells))))
    for s in range(6):
        out.append((f"certificate_mutant seed {s}", certificate_mutant(cert, c.num_nodes, s).obj))
    if other is not None:
        out.append(("another circuit's certificate", other))
    return out


# ---- the checks ---------------------------------------------------------------------------------

def _not_proved(c: Circuit, model: Model, cert: Certificate, what: str) -> str:
    """The checker's outcome on a forged pair: ``"refused"`` (malformed, with a message) or
    ``"failed"``/``"stopped"``; a ``proved`` fails the test naming the forgery."""
    return _not_proved_on(c, model, cert, what, "flint")


def _not_proved_on(c: Circuit, model: Model, cert: Certificate, what: str, backend: str) -> str:
    try:
        res = check_certificate(c, model, cert, backend=backend)
    except IRError as e:
        assert str(e)
        return "refused"
    assert not res.ok, f"FALSE PROOF: {what}"
    return "failed" if res.failure is not None else "stopped"


def _recheck(c: Circuit, model: Model, rep: sv.Report) -> None:
    """A refutation's counterexample makes the two sides differ, evaluated here exactly."""
    cex = rep.counterexample
    assert cex is not None
    u = [list(r) for r in cex.inputs]
    i, j = cex.cell
    lhs, rhs = sv.evaluate(c, u, cex.params_for(c)), sv.evaluate(model, u, cex.params_for(model))
    assert lhs != rhs and lhs[i][j] != rhs[i][j]
    assert {lhs[i][j], rhs[i][j]} == {cex.lhs_value, cex.rhs_value}


def _other_certificate(name: str, c: Circuit, comp: sv.Compiled) -> Certificate | None:
    """The certificate of another circuit of the same shape whose model has as many layers."""
    L = len(comp.model.layers)
    for seed in range(40, 60):
        o = random_circuit(c.n, c.d, c.size, 3, seed=seed, num_outputs=len(c.outputs))
        oc = sv.compile(o, "dense" if name.endswith("dense") else "kaleidoscope")
        if len(oc.model.layers) == L and oc.model.inner_n == comp.model.inner_n and oc.model.inner_d == comp.model.inner_d:
            return oc.certificate
    return None


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_forged_certificates_never_prove_a_wrong_model(name):
    c, comp = INSTANCES[name]
    assert check_certificate(c, comp.model, comp.certificate).ok  # the attack has a target
    assert check_certificate(c, comp.model, recomputed(c, comp.model, comp.certificate)).ok  # the forger is faithful
    other = _other_certificate(name, c, comp)
    muts = _mutants(c, comp.model, name)
    assert len(muts) >= 4, [m[0] for m in muts]
    for site in UNLISTED.get(name, ()):  # these changes are wrong, and first show in a cell claimed 0
        res = check_certificate(c, mutate_weight(comp.model, site, "one"), comp.certificate)
        assert res.failure is not None and "leaves out is not 0" in res.failure.reason, (site, res.failure)
        assert any(str(site) in what for what, _, _ in muts), site
    seen = set()
    for what, bad, layer in muts:
        for how, cert in forgeries(c, bad, comp.certificate, layer, other):
            seen.add(_not_proved(c, bad, cert, f"{name}, {what}, {how}"))
    assert "failed" in seen and "refused" in seen


def _weak_zero_rule(check_stage):
    """A checker that forgets the clean-interface rule (every stage read as the last one)."""
    def weak(circuit, model, k, b0, b1, last, *a, **kw):
        return check_stage(circuit, model, k, b0, b1, True, *a, **kw)
    return weak


def _weak_last_stage(check_stage):
    """A checker that stops one stage short (the read-out stage is never compared)."""
    def weak(circuit, model, k, b0, b1, last, *a, **kw):
        return (None, 0) if last else check_stage(circuit, model, k, b0, b1, last, *a, **kw)
    return weak


@pytest.mark.parametrize("weaken", [_weak_zero_rule, _weak_last_stage])
def test_the_attack_catches_a_weakened_checker(monkeypatch, weaken):
    """The forgeries above have teeth: with one rule of the checker broken, some forged pair on a
    wrong model is ``proved`` (and the harness reports it as a false proof)."""
    from symverify.kernel.provers import compositional

    monkeypatch.setattr(compositional, "_check_stage", weaken(compositional._check_stage))
    name = "random_h21"
    c, comp = INSTANCES[name]
    with pytest.raises(AssertionError, match="FALSE PROOF"):
        for what, bad, layer in _mutants(c, comp.model, name):
            for how, cert in forgeries(c, bad, comp.certificate, layer):
                _not_proved(c, bad, cert, f"{what}, {how}")


@pytest.mark.parametrize("name", ["random_h21", "linear_h19"])
def test_verify_refutes_or_is_unknown_and_the_counterexample_rechecks(name):
    c, comp = INSTANCES[name]
    verdicts = []
    for what, bad, layer in _mutants(c, comp.model)[:3]:
        for how, cert in forgeries(c, bad, comp.certificate, layer)[:3]:
            for method in ("compositional", "auto"):
                compiled = SimpleNamespace(model=bad, certificate=cert)  # a compiled object carrying the forgery
                for rep in (sv.verify(c, bad, certificate=cert, method=method), sv.verify(compiled, c, method=method)):
                    assert rep.verdict is not PROVED, f"FALSE PROOF: {name}, {what}, {how}, {method}"
                    if rep.verdict is REFUTED:
                        _recheck(c, bad, rep)  # either order: the two values, as a set
                    verdicts.append(rep.verdict)
    assert REFUTED in verdicts


@pytest.mark.parametrize("name", ["random_h21", "linear_h19"])
def test_symbolic_weight_with_claims_in_the_symbol(name):
    """A weight turned into the symbol ``m`` (right only for some values of ``m``), and claims
    after it that use ``m`` as a coefficient or constant (a parameter the model has, so the
    certificate is well-formed): never proved, on either polynomial backend; ``verify`` refutes
    with a value of ``m`` that re-checks."""
    c, comp = INSTANCES[name]
    m = sv.sym("m")
    site = next(s for s in weight_sites(comp.model) if s.layer == 0 and s.grid == "b1")
    bad = mutate_weight(comp.model, site, "sym", symbol="m")
    assert sv.verify(c, bad, method="exact").verdict is REFUTED
    cert = comp.certificate
    k = next(k for k, b in enumerate(cert.boundaries) if b.layer > 0)
    b = cert.boundaries[k]
    claims = [("original", cert)]
    for j, x in enumerate(b.cells):
        for cell in (Cell(x.row, x.col, tuple((v, m * co) for v, co in x.terms), x.const),
                     Cell(x.row, x.col, x.terms, x.const + m - 1),
                     Cell(x.row, x.col, (*x.terms, (x.nodes()[0], m - 1)), x.const)):
            claims.append((f"cell {j} in m", _with(cert, k, Boundary(b.layer, (*b.cells[:j], cell, *b.cells[j + 1:]), b.label))))
    claims.append(("recomputed", recomputed(c, mutate_weight(comp.model, site, "inc"), cert)))
    for how, forged in claims:
        for backend in ("flint", "sympy"):
            _not_proved_on(c, bad, forged, f"{name}, {site} = m, {how}", backend)
    rep = sv.verify(c, bad, certificate=claims[1][1])
    assert rep.verdict is REFUTED and dict(rep.counterexample.params).keys() == {"m"}
    _recheck(c, bad, rep)


def test_forgeries_checked_in_memory_limited_processes(monkeypatch):
    """Every stage planned into its memory-limited child process (the in-process limit set to 0):
    the stages run there, the right certificate still proves and no forgery does."""
    from symverify.kernel.provers import compositional

    monkeypatch.setattr(compositional, "STAGE_IN_PROCESS_MONOMIALS", 0)
    name = "linear_h19"
    c, comp = INSTANCES[name]
    good = check_certificate(c, comp.model, comp.certificate)
    assert good.ok and good.stages_isolated == good.stages_total
    for what, bad, layer in _mutants(c, comp.model, name)[:3]:
        for how, cert in forgeries(c, bad, comp.certificate, layer)[:6]:
            _not_proved(c, bad, cert, f"{name}, isolated, {what}, {how}")


def test_the_mutated_cell_marked_zero_or_unlisted_is_caught():
    """The cell a changed bias writes, claimed 0 (left out) at the next boundary, on a model
    where every other claim was recomputed from the wrong model: never proved."""
    c, comp = INSTANCES["random_h21"]
    model, cert = comp.model, comp.certificate
    L = len(model.layers)
    tried = 0
    for site in [s for s in weight_sites(model) if s.grid in ("b1", "b2") and 0 < s.layer < L - 1][::3]:
        bad = mutate_weight(model, site, "inc")
        if sv.verify(c, bad, method="exact").verdict is not REFUTED:
            continue
        rec = recomputed(c, bad, cert)
        k = next(k for k, b in enumerate(rec.boundaries) if b.layer > site.layer)
        b = rec.boundaries[k]
        if k == len(rec.boundaries) - 1:
            continue
        cells = tuple(x for x in b.cells if (x.row, x.col) != (site.row, site.col))
        assert _not_proved(c, bad, _with(rec, k, Boundary(b.layer, cells, b.label)), f"{site} unlisted") == "failed"
        tried += 1
    assert tried >= 3


# ---- structurally malformed forgeries ----------------------------------------------------------

def _bs():
    c, comp = INSTANCES["random_h21"]
    return c, comp, comp.certificate.boundaries


@pytest.mark.parametrize("edit, match", [
    (lambda bs: (*bs[:-1], Boundary(bs[-1].layer, bs[-1].cells[1:])), r"output 0 \(node %\d+\) must sit alone"),
    (lambda bs: (*bs[:-1], Boundary(bs[-1].layer + 1, bs[-1].cells)), r"from layer 0 to layer L = \d+"),
    (lambda bs: (Boundary(0, bs[0].cells[1:]), *bs[1:]), r"boundary 0: must list exactly the embedded input"),
    (lambda bs: (Boundary(0, (*bs[0].cells, Cell.node(5, 0, 0))), *bs[1:]), r"boundary 0: must list exactly"),
    (lambda bs: (*bs[:1], bs[2], bs[1], *bs[3:]), r"boundary 2: layer \d+ comes before boundary 1"),
    (lambda bs: (*bs[:1], Boundary(bs[1].layer, (*bs[1].cells, Cell.node(10 ** 6, 0, 0))), *bs[2:]),
     r"cell \(1000000, 0\) is outside the \d+×2 state"),
    (lambda bs: (*bs[:1], Boundary(bs[1].layer, (*bs[1].cells, Cell.node(0, 2, 0))), *bs[2:]),
     r"cell \(0, 2\) is outside the \d+×2 state"),
    (lambda bs: (*bs[:1], Boundary(bs[1].layer, (*bs[1].cells, Cell.node(30, 0, 10 ** 30))), *bs[2:]),
     r"names node %1000000000000000000000000000000, which the circuit lacks"),
    (lambda bs: (*bs[:1], Boundary(bs[1].layer, bs[1].cells + bs[1].cells[:1]), *bs[2:]), r"is listed twice"),
    (lambda bs: (*bs[:1], Boundary(bs[1].layer, (Cell(30, 0, ((0, sv.sym("forged")),)),)), *bs[2:]),
     r"uses the parameter\(s\) \['forged'\]"),
    (lambda bs: bs[:1], r"at least 2 boundaries"),
    (lambda bs: tuple(Boundary(b.layer + 1, b.cells) for b in bs), r"from layer 0 to layer L"),
])
def test_malformed_forgeries_raise_a_clear_error(edit, match):
    c, comp, bs = _bs()
    bad = mutate_weight(comp.model, weight_sites(comp.model)[0], "inc")
    with pytest.raises(IRError, match=match):
        check_certificate(c, bad, Certificate(edit(bs)))
    with pytest.raises(SymverifyError, match=match):
        sv.verify(c, bad, certificate=Certificate(edit(bs)), method="compositional")


def test_a_certificate_for_another_shape_is_refused():
    c, comp = INSTANCES["random_h21"]
    _o, ocomp = INSTANCES["random_h21_b"]  # 2×1, not 2×2
    with pytest.raises(IRError, match=r"from layer 0 to layer L|boundary 0|names node|outside"):
        check_certificate(c, comp.model, ocomp.certificate)
    with pytest.raises(IRError, match=r"the model reads 2×1 inputs but the circuit reads 2×2"):
        check_certificate(c, ocomp.model, comp.certificate)


def test_model_shapes_changed_under_the_certificate():
    """The certificate of the model, handed with a model of more layers (one appended that changes
    the output) or a wider inner state: refused or not proved."""
    c, comp = INSTANCES["random_h21"]
    m = comp.model
    extra = Model(m.n, m.d, m.inner_n, m.inner_d, m.layers + m.layers[-1:], m.name)
    assert sv.verify(c, extra, method="exact").verdict is REFUTED
    with pytest.raises(IRError, match=r"from layer 0 to layer L"):
        check_certificate(c, extra, comp.certificate)
    shifted = Certificate((*comp.certificate.boundaries[:-1], Boundary(len(extra.layers), comp.certificate.boundaries[-1].cells)))
    assert _not_proved(c, extra, shifted, "a layer appended, the last boundary moved") in ("failed", "refused")


# ---- the JSON form edited by hand ---------------------------------------------------------------

def _doc():
    return copy.deepcopy(INSTANCES["random_h21"][1].certificate.to_json())


def _set(path, value):
    def edit(doc):
        at = doc
        for p in path[:-1]:
            at = at[p]
        at[path[-1]] = value
        return doc
    return edit


def _delete(path):
    def edit(doc):
        at = doc
        for p in path[:-1]:
            at = at[p]
        del at[path[-1]]
        return doc
    return edit


@pytest.mark.parametrize("edit, match", [
    (_set(["extra"], 1), r"certificate.*'extra'"),
    (_set(["boundaries", 1, "extra"], 1), r"certificate boundaries\[1\].*'extra'"),
    (_delete(["boundaries"]), r"boundaries"),
    (_delete(["boundaries", 1, "layer"]), r"certificate boundaries\[1\].*layer"),
    (_delete(["boundaries", 1, "cells"]), r"certificate boundaries\[1\].*cells"),
    (_delete(["format"]), r"certificate field 'format'"),
    (_set(["version"], True), r"certificate field 'version'"),
    (_set(["version"], 2), r"certificate field 'version': expected 1, found 2"),
    (_set(["boundaries", 1, "layer"], True), r"certificate boundaries\[1\]\.layer"),
    (_set(["boundaries", 1, "layer"], -1), r"certificate boundaries\[1\]\.layer"),
    (_set(["boundaries", 1, "layer"], 10**400), r"certificate boundaries\[1\]\.layer"),
    (_set(["boundaries", 1, "layer"], 2.0), r"certificate boundaries\[1\]\.layer"),
    (_set(["boundaries", 1, "layer"], "2"), r"certificate boundaries\[1\]\.layer"),
    (_set(["boundaries", 1, "cells", 0, 0], -1), r"certificate boundaries\[1\]\.cells\[0\]\[0\] \(row\)"),
    (_set(["boundaries", 1, "cells", 0, 1], False), r"certificate boundaries\[1\]\.cells\[0\]\[1\] \(col\)"),
    (_set(["boundaries", 1, "cells", 0, 2], -3), r"certificate boundaries\[1\]\.cells\[0\]\[2\] \(node\)"),
    (_set(["boundaries", 1, "cells", 0, 2], True), r"certificate boundaries\[1\]\.cells\[0\]\[2\] \(node\)"),
    (_set(["boundaries", 1, "cells", 0, 2], 10**400), r"certificate boundaries\[1\]\.cells\[0\]\[2\] \(node\)"),
    (_set(["boundaries", 1, "cells", 0], [0, 0]), r"certificate boundaries\[1\]\.cells\[0\]: expected \[row, col, node\]"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, 1, "0", 5]), r"certificate boundaries\[1\]\.cells\[0\]: expected"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, "1/0"]], "0"]), r"certificate boundaries\[1\]\.cells\[0\]\[2\]\[0\]\[1\]"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, 0.5]], "0"]), r"certificate boundaries\[1\]\.cells\[0\]\[2\]\[0\]\[1\]"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, True]], "0"]), r"certificate boundaries\[1\]\.cells\[0\]\[2\]\[0\]\[1\]"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[-1, "1"]], "0"]), r"certificate boundaries\[1\]\.cells\[0\]\[2\]\[0\]\[0\] \(node\)"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1]], "0"]), r"certificate boundaries\[1\]\.cells\[0\]\[2\]\[0\]: expected \[node, coeff\]"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, "1"]], None]), r"certificate boundaries\[1\]\.cells\[0\]\[3\] \(const\)"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, "1" * 200_000]], "0"]), r"\[2\]\[0\]\[1\]: an integer of 200000 digits"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, "1"]], "1/" + "3" * 200_000]), r"\[3\] \(const\): an integer of 200000 digits"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, {"sym": "m", "x": 1}]], "0"]), r"\[2\]\[0\]\[1\]: unknown field 'x'"),
    (_set(["boundaries", 1, "cells", 0], [0, 0, [[1, "1e5"]], "0"]), r"\[2\]\[0\]\[1\]: expected a rational"),
    (_set(["boundaries", 1, "label"], 7), r"certificate boundaries\[1\]\.label"),
    (_set(["meta"], []), r"certificate field 'meta'"),
    (_set(["meta"], {"k": 1}), r"certificate meta"),
    (_set(["boundaries"], {}), r"certificate field 'boundaries': expected a list"),
    (_set(["boundaries", 1], [1, []]), r"certificate boundaries\[1\]: expected"),
])
def test_hand_edited_json_is_refused_with_the_field_named(edit, match):
    with pytest.raises(SerializationError, match=match):
        Certificate.from_json(edit(_doc()))


def test_hand_edited_json_that_parses_is_still_not_a_proof():
    """Edits the file format accepts (a cell's node, coefficient or constant changed, an output
    moved) on a wrong model: refused by the checker or not proved."""
    c, comp = INSTANCES["random_h21"]
    bad = mutate_weight(comp.model, weight_sites(comp.model)[0], "inc")
    assert sv.verify(c, bad, method="exact").verdict is REFUTED
    edits = [
        _set(["boundaries", 1, "cells", 0], [0, 0, [[0, "1"]], "1"]),
        _set(["boundaries", 1, "cells", 0], [0, 0, [[0, "2"], [0, "-1"]], "0"]),
        _set(["boundaries", 1, "cells", 0], [0, 0, [], "0"]),
        _set(["boundaries", -1, "cells", 0, 2], 0),
        _set(["boundaries", -1, "cells", 0], [0, 0, [[11, "1"], [4, "0"]], "0"]),
        _set(["meta"], {"verified": "yes", "proved": "true"}),
    ]
    for n, edit in enumerate(edits):
        cert = Certificate.from_json(json.loads(json.dumps(edit(_doc()))))
        assert _not_proved(c, bad, cert, f"JSON edit {n}") in ("failed", "refused")


def test_cli_with_a_forged_certificate_file(tmp_path, capsys):
    """The CLI reads the recomputed forgery from a file: not proved (exit code not 0), and a
    malformed file is refused naming the field."""
    from symverify.cli import main
    from symverify.ir.serialize import dump_file as save

    c, comp = INSTANCES["random_h21"]
    muts = _mutants(c, comp.model)
    _what, bad, _layer = muts[1]
    paths = {k: str(tmp_path / f"{k}.json") for k in ("c", "m", "cert", "broken")}
    save(c, paths["c"])
    save(bad, paths["m"])
    save(recomputed(c, bad, comp.certificate), paths["cert"])
    doc = _set(["boundaries", 1, "cells", 0, 2], -3)(_doc())
    with open(paths["broken"], "w") as f:
        json.dump(doc, f)
    code = main(["verify", paths["c"], paths["m"], "--certificate", paths["cert"], "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code != 0 and out["verdict"] != "proved", out
    code = main(["verify", paths["c"], paths["m"], "--certificate", paths["broken"]])
    err = capsys.readouterr().err
    assert code != 0 and r"cells[0][2] (node)" in err


# ---- the Dask path --------------------------------------------------------------------------------

def test_forged_certificates_through_dask_are_not_proved():
    distributed = pytest.importorskip("distributed")  # noqa: F841
    from conftest import local_dask_client

    from symverify.kernel.provers.stages_dask import check_certificate_dask

    c, comp = INSTANCES["random_h21"]
    muts = _mutants(c, comp.model)[:2]
    with local_dask_client(1) as client:
        for what, bad, _layer in muts:  # every cut into tasks, one stage per task included
            rec = recomputed(c, bad, comp.certificate)
            for per_task in (1, 2, 5):
                res = check_certificate_dask(c, bad, rec, scheduler=client, stages_per_task=per_task)
                assert not res.ok and res.failure is not None, f"FALSE PROOF (dask): {what}, recomputed, {per_task}"
        for what, bad, layer in muts:
            for how, cert in forgeries(c, bad, comp.certificate, layer)[:4]:
                try:
                    rep = sv.verify(c, bad, certificate=cert, method="compositional", scheduler=client)
                except IRError:
                    continue
                assert rep.verdict is not PROVED, f"FALSE PROOF (dask): {what}, {how}"
                if rep.verdict is REFUTED:
                    _recheck(c, bad, rep)


def test_boundaries_whose_layers_decrease_are_refused_where_made_and_where_read(tmp_path):
    """A certificate file whose boundary layers went back (0, 4, 2, 4) was read without a word, and
    ``symverify info`` showed it as fine; only verify refused it (as it still refuses such an object
    made in memory: test_malformed_forgeries_raise_a_clear_error)."""
    import json

    from symverify.ir.serialize import dumps, load_file
    from symverify.kernel.ir.certificate import Boundary, Certificate

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0]], n=1, d=1)
    cert = sv.compile(c).certificate
    layers = [b.layer for b in cert.boundaries]
    assert layers == sorted(layers) and len(set(layers)) > 2, layers
    data = json.loads(dumps(cert))
    k = next(i for i in range(1, len(layers)) if layers[i] > layers[i - 1])
    data["boundaries"][k]["layer"] = layers[k - 1] - 1 if layers[k - 1] else 0
    data["boundaries"][k - 1]["layer"] = layers[k]
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SerializationError, match=rf"certificate boundaries\[{k}\]\.layer: expected a layer ≥ {layers[k]} "
                                                 r"\(that of boundaries\[\d+\]: layers never decrease\), found"):
        load_file(path)
    data["boundaries"][k]["layer"] = data["boundaries"][k - 1]["layer"]  # equal layers stay allowed
    path.write_text(json.dumps(data), encoding="utf-8")
    assert [b.layer for b in load_file(path).boundaries][k - 1:k + 1] == [layers[k]] * 2
    assert "label 'input'" in repr(Certificate((Boundary(0, (), "input"), Boundary(2, ()))))
