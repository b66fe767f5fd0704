"""verify() on the shared case table: every method, agreement, mutations, certificates, budgets."""

import json
from dataclasses import replace
from fractions import Fraction

import pytest
from cases import BY_ID, CASES, MUTATIONS, QUARTIC_C, QUARTIC_CERT, QUARTIC_M, SQUARE_C, SQUARE_M, dense_model

from symverify.errors import IRError, ProverError, ShapeError
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.options import CERTIFICATE_METHODS
from symverify.kernel.provers.outcome import UsageError
from symverify.kernel.verification import METHODS, Report, Verdict, verify
from symverify.semantics.exact import evaluate

GENERIC = ("exact", "exact-sympy", "randomized", "z3", "auto")


def _runs(case):
    methods = GENERIC + (("compositional",) if case.certificate is not None else ())
    return [(case, m) for m in methods]


def _cert(case, method):
    """The case's certificate for the methods that check one (the others refuse it)."""
    return case.certificate if method in CERTIFICATE_METHODS else None


def _sides(x):
    """What semantics.exact.evaluate can evaluate (kaleidoscopes are checked through verify's own re-check)."""
    return x if isinstance(x, (Circuit, Model)) else None


def assert_separates(lhs, rhs, cex):
    """The counterexample really separates the sides, by an exact evaluation independent of verify."""
    assert cex is not None
    u = [list(r) for r in cex.inputs]
    a, b = _sides(lhs), _sides(rhs)
    if a is None or b is None:
        return
    ya, yb = evaluate(a, u, cex.params_for(a)), evaluate(b, u, cex.params_for(b))
    i, j = cex.cell
    assert ya[i][j] == cex.lhs_value and yb[i][j] == cex.rhs_value
    assert ya[i][j] != yb[i][j]
    assert all(ya[r][c] == yb[r][c] for r in range(len(ya)) for c in range(len(ya[0])) if (r, c) < (i, j))


@pytest.mark.parametrize("case,method", [r for c in CASES for r in _runs(c)], ids=lambda x: getattr(x, "id", x))
def test_case_table_every_method(case, method):
    report = verify(case.lhs, case.rhs, method=method, certificate=_cert(case, method))
    assert report.verdict is case.expected, str(report)
    if case.expected is Verdict.REFUTED:
        assert_separates(case.lhs, case.rhs, report.counterexample)
    else:
        assert report.counterexample is None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_methods_agree_and_sides_commute(case):
    verdicts = {m: verify(case.lhs, case.rhs, method=m).verdict for m in ("exact", "randomized", "z3")}
    assert set(verdicts.values()) == {case.expected}, verdicts
    assert verify(case.rhs, case.lhs, method="exact").verdict is case.expected


@pytest.mark.parametrize("cid,desc,lhs,rhs", MUTATIONS, ids=[f"{m[0]}: {m[1]}" for m in MUTATIONS])
@pytest.mark.parametrize("method", ["exact", "randomized", "z3", "auto"])
def test_mutations_are_refuted_with_a_separating_input(cid, desc, lhs, rhs, method):
    report = verify(lhs, rhs, method=method)
    assert report.verdict is Verdict.REFUTED, f"{cid} ({desc}): {report}"
    assert_separates(lhs, rhs, report.counterexample)


def test_symbolic_counterexample_assigns_every_parameter():
    case = BY_ID["W-vs-W-transposed"]
    report = verify(case.lhs, case.rhs, method="exact")
    assert set(report.counterexample.param_dict()) == {"W0_0", "W0_1", "W1_0", "W1_1"}


def test_counterexample_params_for_each_side():
    """A counterexample assigns the weights of both sides; ``params_for(side)`` picks that side's
    own, which ``evaluate`` accepts, while the union is refused by a side lacking a name (with a
    message pointing at ``params_for``)."""
    from symverify.kernel.ir.circuit import Op
    from symverify.kernel.ir.scalar import sym

    lhs = Circuit(1, 1, (Gate(Op.LIN, (0, 0), (sym("a"), 0)),), (1,), "a·x")
    rhs = Circuit(1, 1, (Gate(Op.LIN, (0, 0), (sym("b"), 0)),), (1,), "b·x")
    rep = verify(lhs, rhs, method="exact")
    cex = rep.counterexample
    assert rep.refuted and cex.param_dict().keys() == {"a", "b"}
    assert cex.params_for(lhs).keys() == {"a"} and cex.params_for(rhs).keys() == {"b"}
    u = [list(r) for r in cex.inputs]
    assert evaluate(lhs, u, cex.params_for(lhs))[0][0] == cex.lhs_value
    assert evaluate(rhs, u, cex.params_for(rhs))[0][0] == cex.rhs_value
    with pytest.raises(IRError, match=r"'b' is not a symbolic weight of the circuit \(its symbolic weights are a\).*cex\.params_for"):
        evaluate(lhs, u, cex.param_dict())


def test_counterexample_params_for_takes_every_kind_of_side():
    """``params_for`` takes what ``verify`` compares: a compiled object (its model's weights) and a
    kaleidoscope (it raised AttributeError: no ``.params()``); anything else is an IRError."""
    import symverify as sv
    from symverify.kaleidoscope import linear_circuit_to_kaleidoscope
    from symverify.kernel.ir.circuit import Op
    from symverify.kernel.ir.scalar import sym

    a_x = Circuit(1, 2, (Gate(Op.LIN, (0, 1), (1, sym("a"))),), (2, 1), "x0 + a·x1")
    three = Circuit(1, 2, (Gate(Op.LIN, (0, 1), (1, 3)),), (2, 1), "x0 + 3·x1")
    compiled, kal = sv.compile(a_x), linear_circuit_to_kaleidoscope(three)
    cex = verify(three, compiled).counterexample
    assert cex.params_for(compiled) == cex.param_dict() and cex.param_dict().keys() == {"a"} and cex.params_for(three) == {}
    u = [list(r) for r in cex.inputs]
    assert evaluate(compiled, u, cex.params_for(compiled)) != evaluate(three, u, cex.params_for(three))
    cex = verify(a_x, kal).counterexample
    assert cex.params_for(kal) == {} and cex.params_for(a_x).keys() == {"a"}
    with pytest.raises(IRError, match=r"params_for: expected a Circuit, Model, Kaleidoscope .* found str"):
        cex.params_for("a_x")


# ---- certificates ---------------------------------------------------------------------------


def _lie(cert: Certificate, boundary: int, cell: int, node: int) -> Certificate:
    b = cert.boundaries[boundary]
    cells = list(b.cells)
    old = cells[cell]
    cells[cell] = Cell.node(old.row, old.col, node)
    bs = list(cert.boundaries)
    bs[boundary] = Boundary(b.layer, tuple(cells), b.label)
    return Certificate(tuple(bs), cert.meta)


def test_certificate_that_lies_about_a_cell_is_not_proved():
    # boundary 1 claims cell (0, 0) holds x1², not x0²; the model is right, so no counterexample
    liar = _lie(QUARTIC_CERT, 1, 0, QUARTIC_CERT.boundaries[1].cells[1].single_node())
    report = verify(QUARTIC_C, QUARTIC_M, method="compositional", certificate=liar)
    assert report.verdict is Verdict.UNKNOWN, str(report)
    assert report.evidence["failed_stage"] == 0
    assert "no counterexample" in report.notes[0]
    # auto does not trust the failed certificate either: it decides by another method and says so
    report = verify(QUARTIC_C, QUARTIC_M, method="auto", certificate=liar)
    assert report.proved and report.method != "compositional", str(report)
    assert "compositional was inconclusive: stage 0" in report.notes[0]
    assert verify(QUARTIC_C, QUARTIC_M, method="compositional", certificate=QUARTIC_CERT).proved


def test_certificate_on_a_wrong_model_is_refuted_with_the_failing_stage():
    wrong = MUTATIONS[1][3]  # quartic with a perturbed second layer
    report = verify(QUARTIC_C, wrong, method="compositional", certificate=QUARTIC_CERT)
    assert report.verdict is Verdict.REFUTED
    assert report.counterexample.stage.startswith("stage 1")
    assert report.evidence["failed_stage"] == 1
    assert_separates(QUARTIC_C, wrong, report.counterexample)


def test_compiled_object_carries_its_certificate():
    class Compiled:
        model, certificate = QUARTIC_M, QUARTIC_CERT

    report = verify(QUARTIC_C, Compiled(), method="auto")
    assert report.proved and report.method == "compositional"
    assert report.evidence["stages_total"] == 2


def test_structurally_malformed_certificate_raises():
    bad = Certificate(QUARTIC_CERT.boundaries[1:])
    with pytest.raises(IRError, match="boundaries must run from layer 0"):
        verify(QUARTIC_C, QUARTIC_M, method="compositional", certificate=bad)


# ---- budgets and timeouts --------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_tiny_timeout_is_unknown(method):
    case = BY_ID["quartic-two-layer"]
    report = verify(case.lhs, case.rhs, method=method, timeout=1e-9, certificate=_cert(case, method))
    assert report.verdict is Verdict.UNKNOWN
    assert "timeout" in report.notes[0]


def test_tiny_monomial_budget_is_unknown():
    case = BY_ID["conv-cyclic-symbolic"]  # outputs have 3 monomials each
    report = verify(case.lhs, case.rhs, method="exact", max_monomials=2)
    assert report.verdict is Verdict.UNKNOWN
    assert "max_monomials = 2" in report.notes[0]
    refused = verify(case.lhs, case.rhs, method="exact", max_monomials=0)
    assert refused.verdict is Verdict.UNKNOWN and refused.notes[0].startswith("refused")


def test_isolated_expansion_over_its_memory_limit_is_unknown_not_a_crash():
    m = dense_model(8, 4, 2)
    assert verify(m, m, method="exact", isolate=True).proved
    big = dense_model(16, 4, 2)  # ~1.8·10^6 monomials: FLINT aborts at a 1 MiB address-space margin
    report = verify(big, big, method="exact", isolate=True, memory_limit=1 << 20)
    assert report.verdict is Verdict.UNKNOWN
    assert report.evidence["ran"] == "subprocess"
    assert "crashed" in report.notes[0] or "memory" in report.notes[0]


def test_randomized_pass_reports_p_k_degree_and_bound():
    r = verify(QUARTIC_C, QUARTIC_M, method="randomized")
    ev = r.evidence
    assert ev["p"] == "2^61-1" and ev["degree_bound"] == 4 and ev["k"] == 2
    assert ev["bound"] == "2^-117.9" and -118 < ev["bound_log2"] <= -100  # (4 / (2^61 − 1))^2, rounded up
    # trials only add trials: fewer than the bound needs still runs the needed number
    assert verify(QUARTIC_C, QUARTIC_M, method="randomized", trials=1).evidence["k"] == 2
    more = verify(QUARTIC_C, QUARTIC_M, method="randomized", trials=5)
    assert more.proved and more.evidence["k"] == 5 and more.evidence["bound"] == "2^-294.9"


# ---- the prover's own mistakes -----------------------------------------------------------------


def test_broken_modular_evaluator_is_caught_by_the_exact_recheck(monkeypatch):
    from symverify.kernel.provers.modular import PythonEngine

    real = PythonEngine.evaluate

    def broken(self, side, points, p, params, check=None):
        out = real(self, side, points, p, params, check)
        if side.kind == "model":
            out[0][0][0] = (out[0][0][0] + 1) % p
        return out

    monkeypatch.setattr(PythonEngine, "evaluate", broken)
    with pytest.raises(ProverError, match="agree under exact evaluation"):
        verify(SQUARE_C, SQUARE_M, method="randomized")


def test_fabricated_counterexample_raises_prover_error(monkeypatch):
    import symverify.kernel.provers.exact as ex
    from symverify.kernel.provers.outcome import Counterexample

    fake = Counterexample(((1, 0), (0, 0), (0, 0)), (), (0, 0), 1, 2, None, "broken prover")
    monkeypatch.setattr(ex, "search_or_stop", lambda *a, **k: fake)
    with pytest.raises(ProverError, match="re-check failed"):
        verify(SQUARE_C, QUARTIC_M, method="exact")
    wrong_values = replace(fake, inputs=((2, 0), (0, 0), (0, 0)), lhs_value=4, rhs_value=17)
    monkeypatch.setattr(ex, "search_or_stop", lambda *a, **k: wrong_values)
    with pytest.raises(ProverError, match="claimed entry"):
        verify(SQUARE_C, QUARTIC_M, method="exact")


# ---- malformed input and the report --------------------------------------------------------------


def test_shape_mismatch_names_both_shapes():
    other = Circuit(2, 2, (), (0,))
    with pytest.raises(ShapeError, match=r"lhs circuit u⊙u \(3×2\), rhs circuit \(2×2\)"):
        verify(SQUARE_C, other)


def test_bad_arguments():
    with pytest.raises(UsageError, match="method: expected one of auto"):
        verify(SQUARE_C, SQUARE_M, method="magic")
    with pytest.raises(UsageError, match="backend: expected 'flint' or 'sympy'"):
        verify(SQUARE_C, SQUARE_M, method="exact", backend="maple")
    with pytest.raises(UsageError, match="needs a circuit and a model with a stage certificate"):
        verify(SQUARE_C, SQUARE_M, method="compositional")
    with pytest.raises(UsageError, match="trials: expected a positive int"):
        verify(SQUARE_C, SQUARE_M, trials=0)
    with pytest.raises(IRError, match="expected a Circuit, Model, Kaleidoscope"):
        verify(SQUARE_C, [[1, 2]])
    with pytest.raises(IRError, match="neither side is a model"):
        verify(SQUARE_C, SQUARE_C, certificate=QUARTIC_CERT)
    # two models: auto compared them by another method and never read the certificate, without a word
    for method in ("auto", "compositional"):
        with pytest.raises(IRError, match="one side must be the circuit; found two models"):
            verify(SQUARE_M, SQUARE_M, certificate=QUARTIC_CERT, method=method)


def test_report_text_and_json():
    proved = verify(SQUARE_C, SQUARE_M, method="exact")
    assert isinstance(proved, Report) and proved.verdict == "proved"
    text = str(proved)
    assert text.startswith("PROVED by exact") and "monomials compared" in text
    refuted = verify(SQUARE_C, QUARTIC_M, method="exact")
    data = json.loads(json.dumps(refuted.to_json()))
    assert data["verdict"] == "refuted" and data["method"] == "exact"
    assert data["counterexample"]["cell"] == list(refuted.counterexample.cell)
    assert data["lhs"]["kind"] == "circuit" and data["rhs"]["signature"] == [3, 2, 2, 3, 2]
    assert data["rhs"]["param_count"] == QUARTIC_M.param_count()
    assert "total" in data["timings"] and data["evidence"]["structure"]["degree"] == 4
    assert "counterexample u = " in str(refuted)


def test_auto_names_the_deciding_method():
    assert verify(SQUARE_C, QUARTIC_M).method == "randomized (pre-check)"
    assert verify(QUARTIC_C, QUARTIC_M).method == "exact"
    assert verify(QUARTIC_C, QUARTIC_M, certificate=QUARTIC_CERT).method == "compositional"


def test_rational_weights_and_circuit_vs_itself():
    c = Circuit(1, 1, (Gate.scale(0, Fraction(1, 3)), Gate.mul(1, 1)), (2,))
    for m in ("exact", "exact-sympy", "randomized", "z3"):
        assert verify(c, c, method=m).proved


@pytest.mark.parametrize("method", [m for m in METHODS if m not in CERTIFICATE_METHODS])
def test_a_certificate_given_to_a_method_that_never_reads_it_is_refused(method):
    """``certificate=`` with a method that does not check certificates would be ignored: refused,
    as the command line refuses ``--certificate`` there; a compiled object carrying its own
    certificate stays accepted by every method."""
    with pytest.raises(UsageError, match=rf"certificate: only methods 'auto' and 'compositional' check a stage certificate; found method '{method}'"):
        verify(QUARTIC_C, QUARTIC_M, method=method, certificate=QUARTIC_CERT)
    from types import SimpleNamespace

    compiled = SimpleNamespace(model=QUARTIC_M, certificate=QUARTIC_CERT)
    assert verify(QUARTIC_C, compiled, method=method, timeout=30).verdict is not Verdict.REFUTED


@pytest.mark.parametrize("method", CERTIFICATE_METHODS)
def test_a_certificate_is_taken_by_the_methods_that_check_it(method):
    rep = verify(QUARTIC_C, QUARTIC_M, method=method, certificate=QUARTIC_CERT)
    assert rep.verdict is Verdict.PROVED and rep.method == "compositional"
