"""Attacks on the provers for false proofs, third round: stage cuts, Dask outcomes, names, re-checks.

Each test builds a pair that is *not* equivalent (checked here independently, by exact
evaluation written in the test or by the circuit it was built from) and tries to get ``proved``,
a ``refuted`` whose counterexample is not a real difference, or an exception that is not a
:class:`~symverify.errors.SymverifyError`:

* the compositional checker at its stage cuts: a stage whose layers read a cell the boundary
  before it leaves out, a causal layer where the certificate's claims assume the cyclic wrap, a
  bias on the wrong side of a cut, models of 0 layers, boundaries repeated at one layer, the last
  boundary listing another node at an output cell;
* the Dask path: stage outcomes combined out of order, repeated or missing, a task answering with
  another task's outcomes;
* the exact methods and ``z3``: parameters named like the backends' reserved names (``I``, ``E``,
  ``pi``, ``oo``, ``S``, ``N``, ``x0``, the ring's own prefix ``p_``), names that NFKC-normalise
  to one identifier, coefficients with huge denominators that differ in one unit;
* counterexamples: a refutation that exists only through a parameter's value is re-checked on
  both sides with that value, and a re-check refuses values moved to another parameter.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError, ProverError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import as_scalar, sym
from symverify.kernel.provers import stages_dask
from symverify.kernel.provers.compositional import StageOutcome, check_certificate, combine
from symverify.kernel.provers.counterexample import recheck
from symverify.kernel.provers.sides import pair_sides

PROVED = sv.Verdict.PROVED
REFUTED = sv.Verdict.REFUTED

IDENTITY = Circuit(1, 1, (), (0,))
"""``y = x``."""
PLUS_ONE = Circuit(1, 1, (Gate.const(1), Gate.add(0, 1)), (2,))
"""``y = x + 1`` (node 1 the constant, node 2 the sum)."""


def _shift(mode: Mode, *, taps: tuple[int, ...] = (1,), b2: dict[tuple[int, int], int] | None = None) -> Layer:
    """A layer on a ``2×1`` state whose projection is the constant 1 (``W = 0``, ``b1 = 1``), so the
    layer is its convolution ``Σ_k u[i − k] + b2[i]`` over ``taps`` (wrapping when cyclic)."""
    return Layer.make(2, 1, b1=Grid.full(2, 1, 1), h=Grid.from_cells(2, 1, {(k, 0): 1 for k in taps}),
                      b2=Grid.from_cells(2, 1, b2 or {}), mode=mode)


def _model(*layers: Layer) -> Model:
    return Model(1, 1, 2, 1, layers)


def _exact_output(model: Model, x: Fraction) -> Fraction:
    """The model's output at ``x``, by the layer formula written out here (2×1 state, W = 0)."""
    u = [x, Fraction(0)]
    for layer in model.layers:
        cyclic = layer.mode is Mode.CYCLIC
        new = []
        for i in range(2):
            conv = Fraction(layer.b2.get(i, 0))
            for k in range(2):
                hk = layer.h.get(k, 0)
                if hk and (i - k >= 0 or cyclic):
                    conv += hk * u[(i - k) % 2]
            new.append(Fraction(layer.b1.get(i, 0)) * conv)
        u = new
    return u[0]


def _cert(*boundaries: tuple[int, dict[tuple[int, int], int]]) -> Certificate:
    """Boundaries ``(layer, {cell: node})``, each cell holding its node with coefficient 1."""
    return Certificate(tuple(Boundary(layer, tuple(Cell.node(r, c, v) for (r, c), v in cells.items()))
                             for layer, cells in boundaries))


SHIFT_BACK = _cert((0, {(0, 0): 0}), (1, {(1, 0): 0}), (2, {(0, 0): 0}))
"""``x`` moves to row 1, then (cyclic) back to row 0: the identity when the second layer wraps."""


def _not_proved(circuit: Circuit, model: Model, cert: Certificate) -> None:
    """No certificate method proves the pair, and a refutation's counterexample is a real difference."""
    for method in ("compositional", "auto"):
        rep = sv.verify(circuit, model, method=method, certificate=cert)
        assert rep.verdict is not PROVED, method
        if rep.verdict is REFUTED:
            (x,), = rep.counterexample.inputs
            assert _exact_output(model, Fraction(x)) != sv.evaluate(circuit, [[x]])[0][0]


# ---- the compositional checker at its stage cuts -----------------------------------------------

def test_the_mode_at_a_stage_cut_is_the_layers_own() -> None:
    wraps = _model(_shift(Mode.CAUSAL), _shift(Mode.CYCLIC))
    drops = _model(_shift(Mode.CAUSAL), _shift(Mode.CAUSAL))
    assert _exact_output(wraps, Fraction(3)) == 3 and _exact_output(drops, Fraction(3)) == 0
    assert sv.verify(IDENTITY, wraps, method="compositional", certificate=SHIFT_BACK).verdict is PROVED
    _not_proved(IDENTITY, drops, SHIFT_BACK)
    res = check_certificate(IDENTITY, drops, SHIFT_BACK)
    assert not res.ok and res.failure is not None and res.failure.stage == 1


def test_a_cell_the_boundary_leaves_out_and_the_next_stage_reads_is_caught() -> None:
    # layer 0 also puts 5 at row 0; layer 1 adds row 0 and row 1 (cyclic): the output is x + 5.
    # The boundary lists row 1 only; were its unlisted cells not proved 0, stage 1 would read x.
    model = _model(_shift(Mode.CAUSAL, b2={(0, 0): 5}), _shift(Mode.CYCLIC, taps=(0, 1)))
    assert _exact_output(model, Fraction(2)) == 7
    _not_proved(IDENTITY, model, SHIFT_BACK)
    res = check_certificate(IDENTITY, model, SHIFT_BACK)
    assert res.failure is not None and res.failure.stage == 0 and res.failure.cell == (0, 0)
    assert "leaves out" in res.failure.reason


@pytest.mark.parametrize("row, proved", [(0, True), (1, False)])
def test_a_bias_after_the_cut_counts_only_where_it_lands(row: int, proved: bool) -> None:
    model = _model(_shift(Mode.CAUSAL), _shift(Mode.CYCLIC, b2={(row, 0): 1}))
    assert (_exact_output(model, Fraction(4)) == 5) is proved
    cert = _cert((0, {(0, 0): 0}), (1, {(1, 0): 0}), (2, {(0, 0): 2}))
    if proved:
        assert sv.verify(PLUS_ONE, model, method="compositional", certificate=cert).verdict is PROVED
    else:
        _not_proved(PLUS_ONE, model, cert)


def test_boundaries_repeated_at_one_layer_prove_nothing_new() -> None:
    drops = _model(_shift(Mode.CAUSAL), _shift(Mode.CAUSAL))
    b = SHIFT_BACK.boundaries
    for extra in ([b[0], b[0], b[1], b[2]], [b[0], b[1], b[1], b[2]], [b[0], b[1], b[2], b[2]], [b[0], b[1], b[1], b[1], b[2]]):
        _not_proved(IDENTITY, drops, Certificate(tuple(extra)))
    wraps = _model(_shift(Mode.CAUSAL), _shift(Mode.CYCLIC))
    assert sv.verify(IDENTITY, wraps, method="compositional", certificate=Certificate((b[0], b[1], b[1], b[2], b[2]))).verdict is PROVED


def test_a_zero_width_stage_must_hold_its_claims_already() -> None:
    # At layer 1 the state holds x at row 1; a second boundary at layer 1 claims x at row 0 instead
    wraps = _model(_shift(Mode.CAUSAL), _shift(Mode.CYCLIC))
    b = SHIFT_BACK.boundaries
    moved = Boundary(1, (Cell.node(0, 0, 0),))
    res = check_certificate(IDENTITY, wraps, Certificate((b[0], b[1], moved, b[2])))
    assert res.failure is not None and res.failure.stage == 1 and res.failure.layers == (1, 1)


ZERO_LAYERS = Model(1, 2, 1, 2, ())
INPUT_1x2 = Boundary(0, (Cell.node(0, 0, 0), Cell.node(0, 1, 1)))


def test_a_model_of_no_layers_is_proved_only_equal_to_the_identity() -> None:
    ident, swap = Circuit(1, 2, (), (0, 1)), Circuit(1, 2, (), (1, 0))
    double = Circuit(1, 2, (Gate.scale(0, 2),), (2, 1))
    for bs in ([INPUT_1x2, INPUT_1x2], [INPUT_1x2, INPUT_1x2, INPUT_1x2]):
        cert = Certificate(tuple(bs))
        assert sv.verify(ident, ZERO_LAYERS, method="compositional", certificate=cert).verdict is PROVED
        for wrong in (swap, double):
            with pytest.raises(IRError, match=r"certificate last boundary: output 0 \(node %[12]\) must sit alone at cell \(0, 0\)"):
                sv.verify(wrong, ZERO_LAYERS, method="compositional", certificate=cert)
            assert sv.verify(wrong, ZERO_LAYERS, method="auto", certificate=cert).verdict is REFUTED
    # the output boundary naming the swapped nodes: a claim the 0 layers do not make
    swapped = Certificate((INPUT_1x2, Boundary(0, (Cell.node(0, 0, 1), Cell.node(0, 1, 0)))))
    rep = sv.verify(swap, ZERO_LAYERS, method="compositional", certificate=swapped)
    assert rep.verdict is REFUTED and rep.counterexample.lhs_value != rep.counterexample.rhs_value
    with pytest.raises(IRError, match="at least 2 boundaries"):
        sv.verify(ident, ZERO_LAYERS, method="compositional", certificate=Certificate((INPUT_1x2,)))


def test_an_output_cell_listing_an_equal_valued_other_node_is_refused() -> None:
    # node 2 = x0 + 0·x1 has x0's value; the output is node 2, the last boundary lists node 0 there
    c = Circuit(1, 2, (Gate.lin(0, 1, 1, 0),), (2, 1))
    with pytest.raises(IRError, match=r"output 0 \(node %2\) must sit alone at cell \(0, 0\)"):
        check_certificate(c, ZERO_LAYERS, Certificate((INPUT_1x2, INPUT_1x2)))
    with pytest.raises(IRError, match=r"boundaries must run from layer 0 to layer L = 2"):
        check_certificate(IDENTITY, _model(_shift(Mode.CAUSAL), _shift(Mode.CYCLIC)),
                          Certificate(SHIFT_BACK.boundaries[:2]))


# ---- the Dask path: outcomes are combined in stage order or not at all ------------------------

def _ok(k: int) -> StageOutcome:
    return StageOutcome(k, layers=1)


@pytest.mark.parametrize("stages, match", [
    ([1, 0], "out of order: expected stage 0, found 1"),
    ([0, 0], "out of order: expected stage 1, found 0"),
    ([0, 2], "out of order: expected stage 1, found 2"),
    ([0], "expected 2 stages, found 1"),
    ([], "expected 2 stages, found 0"),
    ([0, 1, 2], "expected 2 stages, found 3"),
])
def test_combine_takes_stages_zero_one_in_order_only(stages: list[int], match: str) -> None:
    with pytest.raises(ProverError, match=match):
        combine([_ok(k) for k in stages], 2, 0.0)
    assert combine([_ok(0), _ok(1)], 2, 0.0).verdict is PROVED


def test_a_failed_stage_decides_even_when_later_outcomes_are_proved() -> None:
    stopped = StageOutcome(0, 1, stopped="crashed", note="lost")
    res = combine([stopped, _ok(1)], 2, 0.0)
    assert res.verdict is not PROVED and res.stopped == "crashed"


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    from conftest import local_dask_client

    with local_dask_client(1) as c:
        yield c


def test_dask_matches_the_local_check_at_cuts_and_repeats(client) -> None:
    drops = _model(_shift(Mode.CAUSAL), _shift(Mode.CAUSAL))
    wraps = _model(_shift(Mode.CAUSAL), _shift(Mode.CYCLIC))
    b = SHIFT_BACK.boundaries
    for bs in ([b[0], b[1], b[2]], [b[0], b[1], b[1], b[2], b[2]]):
        cert = Certificate(tuple(bs))
        for per in (1, 2, None):
            assert stages_dask.check_certificate_dask(IDENTITY, wraps, cert, scheduler=client, stages_per_task=per).ok
            res = stages_dask.check_certificate_dask(IDENTITY, drops, cert, scheduler=client, stages_per_task=per)
            local = check_certificate(IDENTITY, drops, cert)
            assert not res.ok and res.failure == local.failure
    cert = Certificate((INPUT_1x2, INPUT_1x2, INPUT_1x2))
    assert stages_dask.check_certificate_dask(Circuit(1, 2, (), (0, 1)), ZERO_LAYERS, cert, scheduler=client).ok


def test_a_task_answering_with_another_tasks_outcomes_is_never_proved(client, monkeypatch) -> None:
    wraps = _model(_shift(Mode.CAUSAL), _shift(Mode.CYCLIC))
    honest = stages_dask.check_stages

    def first_run_only(circuit, model, first, packed, last_stage, run, wall):  # type: ignore[no-untyped-def]
        out = honest(circuit, model, first, packed, last_stage, run, wall)
        return [replace(o, stage=o.stage - first) for o in out]  # every run answers as stages 0, 1, …

    monkeypatch.setattr(stages_dask, "check_stages", first_run_only)
    res = stages_dask.check_certificate_dask(IDENTITY, wraps, SHIFT_BACK, scheduler=client, stages_per_task=1)
    assert not res.ok and res.stopped == "crashed" and "malformed" in " ".join(res.notes), res

    def drop_last(circuit, model, first, packed, last_stage, run, wall):  # type: ignore[no-untyped-def]
        out = honest(circuit, model, first, packed, last_stage, run, wall)
        return out if first == 0 else []  # a partial result: the last run answers nothing

    monkeypatch.setattr(stages_dask, "check_stages", drop_last)
    res = stages_dask.check_certificate_dask(IDENTITY, wraps, SHIFT_BACK, scheduler=client, stages_per_task=1)
    assert not res.ok and res.stopped == "crashed" and "malformed" in " ".join(res.notes), res


# ---- names and coefficients in the exact methods and z3 ---------------------------------------

RESERVED = ["I", "E", "pi", "oo", "S", "N", "O", "Q", "x", "x0", "x1", "p_x0", "p_a", "a", "_unused",
            "zoo", "nan", "beta", "lambda", "True", "None", "a.b", "a[1]", "D1[3]"]
"""Names that sympy, flint or z3 read specially, that equal the rings' own generator names
(``x0``, ``_unused``) or that carry the prefix the rings give parameters (``p_``)."""
METHODS = ("exact", "exact-sympy", "z3", "randomized")


def _scaled(name: str) -> Circuit:
    return Circuit(1, 1, (Gate.scale(0, sym(name)),), (1,))


def test_two_reserved_names_are_two_parameters_in_every_method() -> None:
    for a, b in itertools.combinations(RESERVED, 2):
        for method in METHODS:
            rep = sv.verify(_scaled(a), _scaled(b), method=method)
            assert rep.verdict is REFUTED, (a, b, method)
            cex = rep.counterexample
            vals = dict(cex.params)
            assert set(vals) == {a, b} and cex.lhs_value == cex.inputs[0][0] * vals[a]
            assert cex.rhs_value == cex.inputs[0][0] * vals[b] and cex.lhs_value != cex.rhs_value


@pytest.mark.parametrize("name", RESERVED)
def test_a_reserved_name_equals_itself_in_every_method(name: str) -> None:
    x_a = Circuit(1, 1, (Gate.mul(0, 0), Gate.scale(1, sym(name))), (2,))
    a_x = Circuit(1, 1, (Gate.scale(0, sym(name)), Gate.mul(1, 0)), (2,))
    for method in METHODS:
        assert sv.verify(x_a, a_x, method=method).verdict is PROVED, method


@pytest.mark.parametrize("name", ["\uff41", "\u210c", "\ufb01", "\u017f", "\u212a", "a\u0301", "a\n", "\uff41b", "\u0430"])
def test_names_that_normalise_to_an_identifier_are_refused(name: str) -> None:
    with pytest.raises(IRError, match="a parameter name must be an identifier"):
        sym(name)
    with pytest.raises(IRError, match="parameter name must be an identifier"):
        Gate.scale(0, sv.Sym(((((name, 1),), Fraction(1)),)))



@pytest.mark.parametrize("text", ["\uff41", "2*\uff41", "a+\u212a", "\u0663", "1/\u0663", "\uff11", "\u00bd", "\u00b2"])
def test_weights_written_with_characters_that_normalise_to_ascii_are_refused(text: str) -> None:
    # NFKC reads "\uff11" as "1" and "\u0663" (Arabic-Indic three) as "3"; Fraction(text) would accept the latter
    with pytest.raises(IRError, match="expected a rational such as"):
        as_scalar(text)
    with pytest.raises(IRError, match="expected a rational such as"):
        Gate.scale(0, text)

BIG = [2**200 + 1, 2**200 + 3, 2**61 - 1, 2**61 + 1, 3**500, 2**4000 + 1]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(BIG), st.integers(-3, 3).filter(bool), st.integers(-2, 2).filter(bool))
def test_coefficients_one_unit_apart_over_huge_denominators_are_refuted(den: int, num: int, delta: int) -> None:
    a, b = Fraction(num, den), Fraction(num * den + delta, den * den)  # b − a = delta / den²
    lhs = Circuit(1, 1, (Gate.scale(0, a * sym("t")),), (1,))
    rhs = Circuit(1, 1, (Gate.scale(0, b * sym("t")),), (1,))
    same = Circuit(1, 1, (Gate.scale(0, Fraction(num * den, den * den) * sym("t")),), (1,))
    for method in ("exact", "exact-sympy", "z3", "randomized"):
        rep = sv.verify(lhs, rhs, method=method)
        assert rep.verdict is REFUTED, method
        cex = rep.counterexample
        t, x = dict(cex.params)["t"], cex.inputs[0][0]
        assert (cex.lhs_value, cex.rhs_value) == (a * t * x, b * t * x)
        assert sv.verify(lhs, same, method=method).verdict is PROVED, method


# ---- counterexamples: re-checked with the parameters, on both sides ---------------------------

def test_a_difference_only_through_a_parameter_is_rechecked_with_its_value() -> None:
    # y = a·x² − a·x·x + (a − a²)·x: zero only where a ∈ {0, 1}
    lhs = Circuit(1, 1, (Gate.mul(0, 0), Gate.scale(1, sym("a")), Gate.scale(0, sym("a") - sym("a") ** 2),
                         Gate.add(2, 3)), (4,))
    rhs = Circuit(1, 1, (Gate.mul(0, 0), Gate.scale(1, sym("a"))), (2,))
    for method in ("exact", "exact-sympy", "z3", "randomized", "auto"):
        rep = sv.verify(lhs, rhs, method=method)
        assert rep.verdict is REFUTED, method
        cex = rep.counterexample
        a, x = dict(cex.params)["a"], cex.inputs[0][0]
        assert a not in (0, 1) and x != 0
        assert cex.lhs_value == a * x * x + (a - a * a) * x and cex.rhs_value == a * x * x
    a_side, b_side = pair_sides(lhs, rhs)
    cex = sv.verify(lhs, rhs, method="exact").counterexample
    for moved in ((("a", 0),), (("a", 1),), (("a", dict(cex.params)["a"]), ("b", 1)), ()):
        with pytest.raises(ProverError, match="counterexample re-check"):
            recheck(a_side, b_side, replace(cex, params=moved))


# ---- random models, their transcription as circuits, honest certificates, then a model changed ---

def _transcribe(model: Model, cuts: list[int]) -> tuple[Circuit, Certificate]:
    """The model written out as a circuit, cell by cell and layer by layer from the layer formula
    (a cell's node, or None where every term of the formula is absent), and the certificate listing
    every such cell at the layers ``cuts`` (0 and L among them) with its node."""
    n, d, nn, dd = model.n, model.d, model.inner_n, model.inner_d
    gates: list[Gate] = []
    nd = n * d

    def add(g: Gate) -> int:
        gates.append(g)
        return nd + len(gates) - 1

    def form(terms: list[tuple[int, object]], const: object) -> int | None:
        acc = None if const == 0 else add(Gate.const(const))
        for v, co in terms:
            acc = add(Gate.scale(v, co)) if acc is None else add(Gate.lin(acc, 1, v, co))
        return acc

    state: dict[tuple[int, int], int] = {(i // d, i % d): i for i in range(nd)}
    boundaries = [Boundary(0, tuple(Cell.node(r, c, v) for (r, c), v in sorted(state.items())))]
    for t, layer in enumerate(model.layers, 1):
        new: dict[tuple[int, int], int] = {}
        for i, q in itertools.product(range(nn), range(dd)):
            conv_terms = []
            for k in range(nn):
                src = i - k if i >= k or layer.mode is Mode.CYCLIC else None
                hk = layer.h.get(k, q)
                if src is not None and hk != 0 and (src % nn, q) in state:
                    conv_terms.append((state[(src % nn, q)], hk))
            conv = form(conv_terms, layer.b2.get(i, q))
            if conv is None:
                continue
            proj_terms = [(state[(i, p)], layer.W.get(p, q)) for p in range(dd) if (i, p) in state and layer.W.get(p, q) != 0]
            proj = form(proj_terms, layer.b1.get(i, q))
            if proj is not None:
                new[(i, q)] = add(Gate.mul(proj, conv))
        state = new
        if t in cuts:
            boundaries.append(Boundary(t, tuple(Cell.node(r, c, v) for (r, c), v in sorted(state.items()))))
    zero = None
    outs = []
    for k in range(nd):
        if (k // d, k % d) not in state:
            zero = zero if zero is not None else add(Gate.const(0))
            state[(k // d, k % d)] = zero
        outs.append(state[(k // d, k % d)])
    last = boundaries.pop() if boundaries[-1].layer == len(model.layers) and len(boundaries) > 1 else None
    listed = {(c.row, c.col) for c in last.cells} if last is not None else set()
    cells = tuple(Cell.node(r, c, v) for (r, c), v in sorted(state.items())
                  if (r, c) in listed or (r < n and c < d))
    boundaries.append(Boundary(len(model.layers), cells))
    return Circuit(n, d, tuple(gates), tuple(outs)), Certificate(tuple(boundaries))


WEIGHTS = st.sampled_from([0, 0, 0, 1, 1, -1, 2, Fraction(1, 3)])


@st.composite
def _models(draw: st.DrawFn) -> Model:
    n, d = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    nn, dd = n + draw(st.integers(0, 1)), d + draw(st.integers(0, 1))
    layers = []
    for _ in range(draw(st.integers(1, 3))):
        def grid(rows: int, cols: int) -> Grid:
            fill = draw(st.sampled_from([0, 0, 0, 1]))
            return Grid.from_cells(rows, cols, {(r, c): draw(WEIGHTS) for r in range(rows) for c in range(cols)}, fill)
        layers.append(Layer(grid(dd, dd), grid(nn, dd), grid(nn, dd), grid(nn, dd), draw(st.sampled_from(list(Mode)))))
    return Model(n, d, nn, dd, tuple(layers))


@settings(max_examples=40, deadline=None)
@given(_models(), st.data())
def test_random_models_with_honest_certificates_and_one_weight_changed(model: Model, data: st.DataObject) -> None:
    L = len(model.layers)
    cuts = [0, *sorted(data.draw(st.sets(st.integers(1, L))) | {L})]
    circuit, cert = _transcribe(model, cuts)
    assert check_certificate(circuit, model, cert).ok  # the honest certificate checks
    assert sv.verify(circuit, model, method="compositional", certificate=cert).verdict is PROVED
    layer = data.draw(st.integers(0, L - 1))
    name = data.draw(st.sampled_from(["W", "b1", "h", "b2", "mode"]))
    old = model.layers[layer]
    if name == "mode":
        new = replace(old, mode=Mode.CYCLIC if old.mode is Mode.CAUSAL else Mode.CAUSAL)
    else:
        g: Grid = getattr(old, name)
        r, c = data.draw(st.integers(0, g.rows - 1)), data.draw(st.integers(0, g.cols - 1))
        cells = {(i, j): g.get(i, j) for i in range(g.rows) for j in range(g.cols)}
        cells[(r, c)] = g.get(r, c) + data.draw(st.sampled_from([1, -1, Fraction(1, 2)]))
        new = replace(old, **{name: Grid.from_cells(g.rows, g.cols, cells)})
    changed = Model(model.n, model.d, model.inner_n, model.inner_d, (*model.layers[:layer], new, *model.layers[layer + 1:]))
    equal = sv.verify(circuit, changed, method="exact").verdict is PROVED
    backend = data.draw(st.sampled_from(["flint", "sympy"]))
    for method in ("compositional", "auto"):
        rep = sv.verify(circuit, changed, method=method, certificate=cert, backend=backend)
        if rep.verdict is PROVED:
            assert equal, method
        if rep.verdict is REFUTED:
            cex = rep.counterexample
            assert not equal and sv.evaluate(circuit, cex.inputs) != sv.evaluate(changed, cex.inputs)


@settings(max_examples=15, deadline=None)
@given(_models(), st.data())
def test_random_models_through_dask_give_the_local_result(client, model: Model, data: st.DataObject) -> None:
    L = len(model.layers)
    circuit, cert = _transcribe(model, [0, *sorted(data.draw(st.sets(st.integers(1, L))) | {L})])
    layer = data.draw(st.integers(0, L - 1))
    old = model.layers[layer]
    changed = Model(model.n, model.d, model.inner_n, model.inner_d,
                    (*model.layers[:layer], replace(old, b2=Grid.full(old.b2.rows, old.b2.cols, 1)), *model.layers[layer + 1:]))
    per = data.draw(st.sampled_from([1, 2, None]))
    for m in (model, changed):
        local = check_certificate(circuit, m, cert)
        far = stages_dask.check_certificate_dask(circuit, m, cert, scheduler=client, stages_per_task=per)
        assert (far.ok, far.stages_checked, far.failure) == (local.ok, local.stages_checked, local.failure)
        if far.ok:
            assert sv.verify(circuit, m, method="exact").verdict is PROVED
