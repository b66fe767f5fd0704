"""Attacks on the tools users run their checks with: the pytest plugin's golden files, the
assertions of ``symverify.testing``, the truth values of outcomes, the mutation operators of
``symverify.mutate`` and the HTML views of ``symverify.viz``. A golden file never keeps an unsettled
verdict or a failed check, no assertion passes on ``refuted`` or ``unknown``, a mutant is never a
change that cannot alter what the object computes, and a page never shows a claim as another kind
than it is, nor hides a number or an error it was given."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.testing import golden_text

pytest_plugins = ["pytester"]

_X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
_Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0] ** 3], n=1, d=2)
golden_text(sv.verify(_X, _X, method="exact"))  # the in-process pytester runs forget what they import


# ---- golden files ---------------------------------------------------------------------------------

_BARE_VERDICT = '''
import symverify as sv

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[0][0] ** 3], n=1, d=2)

def test_verdict(symverify_golden):
    symverify_golden.check({"verdict": sv.verify(X, Y, method="z3", timeout=1e-9).verdict})
'''


def test_a_bare_unknown_verdict_is_neither_written_nor_matched(pytester: pytest.Pytester) -> None:
    """``check({"verdict": report.verdict})`` of an unknown report wrote ``"unknown"`` with
    ``--symverify-update``, and every later run whose check ran out of time again passed: a golden
    file kept a verdict that depends on the time the check had, as it refuses to keep the report."""
    pytester.makepyfile(test_user=_BARE_VERDICT)
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*'verdict': a verdict is unknown*neither compared nor written*"])
    assert not (pytester.path / "golden").exists()
    stored = pytester.path / "golden" / "test_user"
    stored.mkdir(parents=True)
    from symverify.pytest_plugin import golden_stem

    (stored / f"{golden_stem('test_user.py::test_verdict')}.json").write_text('{\n  "verdict": "unknown"\n}\n')
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)


# ---- mutants that cannot change what the object computes --------------------------------------------


@pytest.fixture(scope="module")
def det2():
    from symverify import library

    c = library.determinant(2)
    return c, sv.compile(c, method="dense")


def test_a_mode_flip_of_a_layer_with_taps_at_lag_zero_only_is_refused(det2) -> None:
    """``flip_mode`` of a layer whose filter is the impulse ``e_0`` (4 of the 5 layers of the dense
    ``det(2)``) made a model computing exactly what the original does, and ``weight_mutant(...,
    ("mode",))`` drew such layers: a mutation test of the mode caught a "mutant" it never could."""
    from symverify import mutate
    from symverify.errors import UsageError

    c, comp = det2
    model = comp.model
    lag0 = [k for k, layer in enumerate(model.layers) if not mutate.mode_matters(layer)]
    assert lag0 and len(lag0) < len(model.layers)
    for k in lag0:
        with pytest.raises(UsageError, match=rf"flip_mode: expected a layer whose filter h has a tap at a lag ≥ 1 .*found "
                                             rf"layer {k} with taps at lag 0 only"):
            mutate.flip_mode(model, k)
    for m in mutate.mutants(lambda s: mutate.weight_mutant(model, s, ("mode",)), 8, fewer=True):
        assert sv.verify(c, m.obj, method="exact").refuted, str(m)


def test_a_mode_mutant_of_a_model_whose_modes_cannot_matter_is_refused() -> None:
    from symverify import mutate
    from symverify.errors import UsageError
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.grid import Grid

    impulse = Grid.zeros(3, 1).paint(0, 1, 0, 1, 1)
    model = Model(3, 1, 3, 1, [Layer.make(3, 1, W=Grid.identity(1), h=impulse, mode="causal")])
    with pytest.raises(UsageError, match=r"weight_mutant: none of the operators \['mode'\] applies"):
        mutate.weight_mutant(model, 0, ("mode",))
    tap = Grid.zeros(3, 1).paint(1, 2, 0, 1, 1)  # lag 1: the cyclic mode wraps the last row to the first
    shifted = Model(3, 1, 3, 1, [Layer.make(3, 1, W=Grid.identity(1), h=tap, mode="causal")])
    flipped = mutate.weight_mutant(shifted, 0, ("mode",)).obj
    assert sv.verify(shifted, flipped, method="exact").refuted


def test_rewiring_an_operand_of_coefficient_zero_is_refused() -> None:
    """``rewire`` of the operand ``0·a`` of a LIN gate left its value as it was, and ``gate_mutant``
    drew it: the mutant computed what the circuit computes."""
    from symverify import mutate
    from symverify.errors import UsageError
    from symverify.kernel.ir.circuit import Circuit, Gate

    c = Circuit(1, 3, (Gate.lin(0, 0, 1, 1),), (3,))  # 0·u0 + 1·u1
    with pytest.raises(UsageError, match=r"gate operator 'rewire': expected an operand with a nonzero coefficient, found "
                                         r"operand 0 of gate 0 .* with coefficient 0"):
        mutate.mutate_gate(c, 0, "rewire", which=0, to=2)
    for m in mutate.mutants(lambda s: mutate.gate_mutant(c, s, ("rewire",)), 12, fewer=True):
        assert m.obj.gates[0].args[0] == 0, str(m)  # operand 1 moved, never the one of coefficient 0
        assert sv.verify(c, m.obj, method="exact").refuted, str(m)
    dead = Circuit(1, 2, (Gate.lin(0, 0, 1, 0),), (2,))  # both coefficients 0
    with pytest.raises(UsageError, match=r"gate_mutant: none of the operators \['rewire'\] applies"):
        mutate.gate_mutant(dead, 0, ("rewire",))


def _certificate():
    from symverify.kernel.ir.certificate import Boundary, Cell, Certificate

    mid = (Cell(0, 0, ((0, 1),)), Cell(0, 1, ((1, 0),)), Cell(1, 0, ()))  # x0; 0·x1 (claims 0); 0
    return Certificate((Boundary(0, (Cell(0, 0, ((0, 1),)),), "in"), Boundary(1, mid, "mid"),
                        Boundary(2, (Cell(0, 0, ((2, 1),)),), "out")), ())


def test_certificate_mutants_that_keep_every_claim_are_refused() -> None:
    """``drop`` of a cell claiming 0 (an unlisted cell is claimed 0 too) and ``node`` on a term of
    coefficient 0 left the certificate claiming what it did; ``certificate_mutant`` drew them."""
    from symverify import mutate
    from symverify.errors import UsageError

    cert = _certificate()
    for t in (1, 2):
        with pytest.raises(UsageError, match=r"certificate operator 'drop': expected a cell claiming a nonzero value, "
                                             rf"found cell {t} .* claiming 0"):
            mutate.mutate_cell(cert, 1, t, "drop")
    with pytest.raises(UsageError, match=r"certificate operator 'node': expected a term with a nonzero coefficient, "
                                         r"found term 0 \(%1\) of cell \(0, 1\) with coefficient 0"):
        mutate.mutate_cell(cert, 1, 1, "node", to=2)
    claims = [{(x.row, x.col): x.form() for x in b.cells if x.form()} for b in cert.boundaries]
    for ops in (("drop",), ("node",), ("drop", "node", "const"), tuple(mutate.CERTIFICATE_OPERATORS)):
        for m in mutate.mutants(lambda s, ops=ops: mutate.certificate_mutant(cert, 3, s, ops), 16, fewer=True):
            after = [{(x.row, x.col): x.form() for x in b.cells if x.form()} for b in m.obj.boundaries]
            assert after != claims, str(m)


# ---- HTML pages -----------------------------------------------------------------------------------


def _rows(page: str) -> dict[str, list[tuple[str, str]]]:
    """The instance rows of a report page: instance name → its cells as (class, text)."""
    from html.parser import HTMLParser

    rows: dict[str, list[tuple[str, str]]] = {}

    class Rows(HTMLParser):
        row: list[tuple[str, str]] | None = None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "tr" and a.get("class") == "instance":
                self.row = rows.setdefault(a["data-instance"], [])
            elif tag == "td" and self.row is not None:
                self.row.append((a.get("class") or "", ""))

        def handle_endtag(self, tag):
            if tag == "tr":
                self.row = None

        def handle_data(self, data):
            if self.row:
                cls, text = self.row[-1]
                self.row[-1] = (cls, text + data)

    Rows().feed(page)
    return rows


def test_the_report_page_shows_argued_and_computed_claims_as_such() -> None:
    """The page showed an argued claim as ``unknown`` (the text table and ``--details`` say
    ``argued``, with the docs section it cites) and a computed claim as ``proved`` with nothing
    saying that the script's own computation, not a prover, decided it."""
    from symverify.scripts.protocol import Instance, ProofResult
    from symverify.viz.report import report_page

    insts = [Instance.argued("held", "docs/theory.md § 5", checks=True),
             Instance.argued("broke", "docs/theory.md § 5", checks=False),
             Instance.computed("counted", True, "exact rank over Q", "rank"),
             Instance.from_report("verified", sv.verify(_X, _X, method="exact"))]
    page = report_page(ProofResult("s", "t", insts).to_json())
    rows = _rows(page)
    assert rows["held"][1:3] == [("argued", "argued"), ("claim", "argued: docs/theory.md § 5; checks held")]
    assert rows["broke"][1][0] == "argued" and rows["broke"][1][1].startswith("argued")
    assert rows["broke"][2] == ("claim", "argued: docs/theory.md § 5; checks failed")
    assert rows["counted"][1:3] == [("proved", "proved"), ("claim", "computed: exact rank over Q")]
    assert rows["verified"][1:3] == [("proved", "proved"), ("claim", "prover")]
    failure = page[page.index('data-instance="broke">'):]
    assert failure.split("</div>")[0].count(">argued</span> (argued: docs/theory.md § 5; checks failed)") == 1
    assert ">unknown<" not in page.split('id="failures"')[1]


def test_the_report_page_writes_float_resources_and_bounds_as_the_run_does() -> None:
    """A resource of 2.0000001 over its bound 2 read ``layers=2≤2`` on the page (4 significant
    digits), ``3.00004 ≤ 3.00005`` read ``3≤3``, though the run and the text table write them in
    full; and a run without ``over_bound`` marked no resource over its bound."""
    import re

    from symverify.scripts.protocol import Instance, ProofResult
    from symverify.viz.report import report_page

    inst = Instance.computed("i", True, "exact count", "counting", resources={"layers": 2.0000001, "width": 3.00004},
                             bounds={"layers": 2, "width": 3.00005})
    page = report_page(ProofResult("s", "t", [inst]).to_json())
    assert re.findall(r'<td class="res">(.*?)</td>', page) == [
        "layers=2.0000001&gt;2", '<span class="over">layers=2.0000001&gt;2</span>, width=3.00004≤3.00005']
    run = {"scripts": [{"name": "s", "result": {"instances": [
        {"name": "i", "verdict": "proved", "method": "exact", "resources": {"layers": 3}, "bounds": {"layers": 2}}]}}]}
    assert '<td class="res"><span class="over">layers=3&gt;2</span></td>' in report_page(run)


def test_gate_mutants_leave_dead_gates_alone_by_default() -> None:
    """``gate_mutant(c, seed)`` drew dead gates (no output reads them) unless ``live=True`` was
    passed: 6 of 30 default mutants of a random circuit computed what it computes."""
    from symverify import library, mutate
    from symverify.kernel.ir.analysis import needed_nodes

    c = library.random_circuit(3, 2, 20, 4, seed=1)
    alive = needed_nodes(c)
    assert any(c.num_inputs + k not in alive for k in range(len(c.gates)))  # the circuit has dead gates
    for m in mutate.mutants(lambda s: mutate.gate_mutant(c, s), 30, fewer=True):
        changed = [k for k, (a, b) in enumerate(zip(c.gates, m.obj.gates)) if a != b]
        assert all(c.num_inputs + k in alive for k in changed), str(m)
        assert sv.verify(c, m.obj, method="exact").refuted, str(m)
    dead = {mutate.gate_mutant(c, s, ("coeff",), live=False).site for s in range(60)}
    assert any(f"gate {k} " in site for site in dead for k in range(len(c.gates)) if c.num_inputs + k not in alive)


def test_the_scripts_table_names_a_resource_over_its_bound_as_the_tightest() -> None:
    """The "tightest resource vs bound" column compared value / bound as floats: 10^400 / 10^401
    read ``inf / inf = nan``, and no later ratio compared greater than nan, so the column named that
    resource, within its bound, and not ``depth = 1/3`` over its bound 0."""
    import re

    from symverify.viz.report import report_page

    run = {"scripts": [{"name": "s", "result": {"instances": [
        {"name": "a", "verdict": "proved", "method": "exact", "resources": {"layers": 10**400}, "bounds": {"layers": 10**401}},
        {"name": "b", "verdict": "proved", "method": "exact", "resources": {"width": 9}, "bounds": {"width": 10}},
        {"name": "c", "verdict": "proved", "method": "exact", "resources": {"depth": "1/3"}, "bounds": {"depth": 0}}]}}]}
    tightest = re.findall(r'<tr class="script".*?<td class="res">(.*?)</td>', report_page(run))
    assert tightest == ["depth=1/3&gt;0"]  # over: written so, not by its colour alone
    run["scripts"][0]["result"]["instances"].pop()
    assert re.findall(r'<tr class="script".*?<td class="res">(.*?)</td>', report_page(run)) == ["width=9≤10"]


def test_the_report_page_keeps_the_exception_of_a_long_traceback() -> None:
    """A crashed script's error was cut to its first 500 (table) and 2000 (Failures) characters:
    a traceback longer than that lost its last line, the exception, from the whole page."""
    import html
    import re

    from symverify.viz.report import report_page

    frames = "".join(f'  File "/x/y{i}.py", line {i}, in f\n    call()\n' for i in range(80))
    error = f"Traceback (most recent call last):\n{frames}ValueError: the real <reason>"
    page = report_page({"scripts": [{"name": "s", "status": "crashed", "error": error, "result": None}]})
    cell = re.findall(r'<tr class="script".*?<td class="detail">(.*?)</td>', page)
    assert cell == ["ValueError: the real &lt;reason&gt; (the last of 162 lines: the whole error is under Failures)"]
    block = re.findall(r'<div class="failure" data-script="s">.*?<pre class="error">(.*?)</pre>', page, re.S)
    assert block == [html.escape(error)]


def test_a_reports_notebook_view_shows_the_differing_entry_of_a_long_counterexample() -> None:
    """``report._repr_html_()`` cut the counterexample's text at 400 characters, input and weights
    first: with 40 symbolic weights the entry and both values (``… (lhs) vs … (rhs)``) were cut away."""
    from symverify.kernel.ir.circuit import Circuit, Gate, Op
    from symverify.kernel.ir.scalar import sym

    gates = tuple(Gate.lin(i, sym(f"coefficient_{i}"), 0, 0) for i in range(40))
    c = Circuit(1, 1, gates, (40,), "c")
    other = Circuit(1, 1, (*gates, Gate(Op.CONST, (), (1,)), Gate.lin(40, 1, 41, 1)), (42,), "other")
    report = sv.verify(c, other)
    assert report.refuted and len(str(report.counterexample)) > 400
    cex = report.counterexample
    view = report._repr_html_()
    assert f"entry {cex.cell} is {cex.lhs_value} (lhs) vs {cex.rhs_value} (rhs)" in view
    assert ">at</td>" in view and "coefficient_0=" in view


# ---- assertions -------------------------------------------------------------------------------------


def _failing_cross_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The float executors made to err beyond their bounds (an executor bug)."""
    import types

    import symverify.executors as executors

    real = executors.cross_check

    def wrong(*args, **kwargs):
        return [(name, kind, types.SimpleNamespace(path=r.path, device=r.device, max_abs_err=1.0, max_rel_err=1.0,
                                                   tolerance=r.tolerance, ok=False))
                for name, kind, r in real(*args, **kwargs)]

    monkeypatch.setattr(executors, "cross_check", wrong)


def test_assertions_fail_when_the_numeric_cross_check_asked_for_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """``assert_proved(a, b, numeric=True)`` passed while the float executor erred beyond its own
    bound (the report's ``numeric.status`` was ``failed``, a note said so): a test asking for the
    cross-check passed on an executor bug."""
    pytest.importorskip("torch")
    from symverify.testing import assert_proved, assert_refuted

    model = sv.compile(_X).model
    assert assert_proved(_X, model, numeric=True).numeric.status == "passed"
    _failing_cross_check(monkeypatch)
    with pytest.raises(AssertionError, match=r"expected proved with the numeric cross-check asked for passing, found "
                                             r"proved \(method \w+\) but the cross-check failed: .*FAILED"):
        assert_proved(_X, model, numeric=True)
    with pytest.raises(AssertionError, match=r"expected refuted with the numeric cross-check asked for passing"):
        assert_refuted(_X, _Y, numeric=True)
    assert assert_proved(_X, model).numeric is None  # not asked for: nothing to fail


def test_circuit_and_certificate_views_write_control_characters_as_escapes() -> None:
    """``Circuit._repr_html_`` and ``Certificate._repr_html_`` escaped names with ``html.escape``
    alone, so an ESC or NUL in a circuit's name or a boundary's label reached the page raw (a NUL is
    an HTML parse error), where every other view writes it as ``\\x1b``."""
    from symverify.kernel.ir.certificate import Boundary, Cell, Certificate

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2, name="a\x1b[31m<b>\x00")
    view = c._repr_html_()
    assert "a\\x1b[31m&lt;b&gt;\\x00" in view and "\x1b" not in view and "\x00" not in view
    cert = Certificate((Boundary(0, (Cell(0, 0, ((0, 1),)),), "in\x00<i>"), Boundary(1, (Cell(0, 0, ((1, 1),)),), "out")), ())
    view = cert._repr_html_()
    assert "<td>in\\x00&lt;i&gt;</td>" in view and "\x00" not in view


def test_a_golden_file_keeps_no_report_whose_numeric_cross_check_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``symverify_golden.check(verify(a, b, numeric=True))`` stored and matched a proof whose float
    cross-check failed (its record holds no numeric part), as ``assert_proved`` passed it."""
    pytest.importorskip("torch")
    from symverify.pytest_plugin import _unsettled

    model = sv.compile(_X).model
    assert _unsettled(sv.verify(_X, model, numeric=True)) == ""
    _failing_cross_check(monkeypatch)
    report = sv.verify(_X, model, numeric=True)
    assert report.proved and report.numeric.status == "failed"
    assert _unsettled({"r": [report]}).startswith("'r': verify's numeric cross-check asked for failed (method")


_VERDICT_ASSERT = '''
import symverify as sv

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
Y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2)

def test_wrong_identity():
    assert sv.verify(X, Y).verdict

def test_unknown():
    assert sv.verify(X, Y, method="z3", timeout=1e-9).verdict
'''


def test_asserting_a_verdict_never_passes(pytester: pytest.Pytester) -> None:
    """``assert sv.verify(a, b).verdict`` passed on a refutation and on ``unknown``: a ``Verdict``
    is a nonempty ``str``, so every verdict was true (``assert sv.verify(a, b)`` already raised)."""
    pytester.makepyfile(test_user=_VERDICT_ASSERT)
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(["*TypeError: the truth value of a Verdict is ambiguous (this one is refuted)*",
                              "*TypeError: the truth value of a Verdict is ambiguous (this one is unknown)*"])
    with pytest.raises(TypeError, match=r"truth value of a Verdict is ambiguous \(this one is proved\); compare it"):
        bool(sv.verify(_X, _X).verdict)
    assert sv.verify(_X, _X).verdict is sv.Verdict.PROVED and sv.Verdict.PROVED == "proved"


def test_asserting_a_provers_outcome_or_a_claim_never_passes(det2) -> None:
    """``assert check_certificate(c, wrong_model, cert)`` (or ``prove_forall``, ``verify_matrix``, a
    ``MethodResult``, a proof script's ``Instance`` or ``ProofResult``) passed
    whatever the verdict: these objects had no ``__bool__``, so every one was true, refuted and
    unknown ones included."""
    from symverify import mutate
    from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
    from symverify.kernel.provers import outcome
    from symverify.kernel.provers.compositional import check_certificate
    from symverify.kernel.provers.forall import prove_forall
    from symverify.kernel.provers.matrix import verify_matrix
    from symverify.parametric import library as plib
    from symverify.scripts.protocol import Instance, ProofResult

    c, comp = det2
    wrong = mutate.weight_mutant(comp.model, 0, ("inc",)).obj
    spread = ButterflyFactor(2, 1, (1,), (0,), (1,), (0,))
    k = Kaleidoscope(1, 2, (BBStar(2, (spread, ButterflyFactor.identity(2, 1))),))
    refuted = Instance.from_report("wrong", sv.verify(_X, _Y, method="exact"))
    outcomes = [
        (check_certificate(c, wrong, comp.certificate), "CompositionalResult", "unknown"),
        (verify_matrix(k, [[1]], garbage_free=True), "KaleidoscopeCheck", "refuted"),
        (prove_forall(plib.user_cyclic_shift(off_by_one=True)), "ForallResult", "refuted"),
        (outcome.unknown("exact", notes=("budget",)), "MethodResult", "unknown"),
        (refuted, "Instance", "refuted"),
        (ProofResult("s", "t", [refuted]), "ProofResult", None),
    ]
    for obj, name, verdict in outcomes:
        shown = f"this one is {verdict}" if verdict else "test it by its fields"
        with pytest.raises(TypeError, match=rf"the truth value of a {name} is ambiguous \({shown}\); test \.proved or \.ok"):
            assert obj
    with pytest.raises(TypeError, match=r"the truth value of a CompositionalResult is ambiguous \(this one is proved\)"):
        bool(check_certificate(c, comp.model, comp.certificate))


def test_asserting_a_numeric_cross_check_never_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``assert report.numeric`` passed on a failed cross-check: a ``NumericSummary`` had no
    ``__bool__`` and was true whatever it said."""
    pytest.importorskip("torch")
    model = sv.compile(_X).model
    _failing_cross_check(monkeypatch)
    report = sv.verify(_X, model, numeric=True)
    assert report.numeric.passed is False
    with pytest.raises(TypeError, match=r"the truth value of a NumericSummary is ambiguous \(this one failed\); test \.passed"):
        assert report.numeric
