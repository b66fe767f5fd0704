"""symverify.viz: the rarer lines of the HTML views (many resources, an uncountable model, many
symbolic weights, a report without a total time, a stage line), the run report's counterexample
text (a string, an object JSON cannot write, a long one), resource records refusing what is not
compiled, numbers that are not numbers, and weight plots with huge or only symbolic values.

Each test names the function it is for and why its assertion bites.
"""

import pytest

import symverify as sv
from symverify.errors import LimitError, UsageError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.library import determinant
from symverify.mutate import weight_mutant
from symverify.viz import html as vhtml
from symverify.viz import report as vreport
from symverify.viz import resources as vres
from symverify.viz import weights as vweights


def test_resources_table_counts_the_rows_it_leaves_out():
    """html._resources_table: more than MAX_ROWS resources end with '… k more'."""
    res = {f"r{k}": k for k in range(vhtml.MAX_ROWS + 5)}
    text = vhtml._resources_table(res, {})
    assert "… 5 more" in text and text.count("<tr>") == vhtml.MAX_ROWS + 2


def test_model_view_of_a_model_too_large_to_count(monkeypatch):
    """html.model_html: a nonzero count over the limits is shown as such, not raised; more than six
    symbolic weights are listed as six and a count."""
    m = Model(1, 1, 2, 2, (Layer(Grid.symbolic("W", 2, 2), Grid.symbolic("b", 2, 2), Grid.zeros(2, 2), Grid.zeros(2, 2)),))

    def too_many(self):
        raise LimitError("too many")

    monkeypatch.setattr(Model, "nonzero_param_count", too_many)
    text = vhtml.model_html(m)
    assert "(too many overlapping rectangles to count)" in text
    assert "… 2 more" in text  # 8 symbolic weights, 6 shown


def test_report_view_without_a_total_time_and_with_a_failing_stage():
    """html.report_html: no total time (no '[… s]'), the 'first failing stage' line in its own row,
    and more than 8 lines (8 shown and a count)."""
    c = determinant(2)
    comp = sv.compile(c, method="dense")
    mutant = weight_mutant(comp.model, 3, ("inc",)).obj
    r = sv.verify(c, mutant, method="compositional", certificate=comp.certificate)
    text = vhtml.report_html(r)
    assert ">first failing stage<" in text and "stage 2" in text

    class Bare(sv.Report):
        def __str__(self):
            return "proved (exact)\n  note: n1"

    def unsealed(cls):  # the view reads these fields only; a Report's seal is no concern of the display
        obj = object.__new__(cls)
        for k, v in {"verdict": sv.Verdict.PROVED, "method": "exact", "timings": {}, "counterexample": None,
                     "lhs": None, "rhs": {}}.items():
            object.__setattr__(obj, k, v)
        return obj

    bare = vhtml.report_html(unsealed(Bare))
    assert " s]" not in bare and ">note<" in bare and ">lhs<" not in bare

    class Long(Bare):
        def __str__(self):
            return "proved (exact)\n" + "\n".join(f"  line {k}" for k in range(11))

    long = vhtml.report_html(unsealed(Long))
    assert "line 7" in long and "line 8" not in long and "… 3 more lines (str(report))" in long


def test_run_report_counterexample_text():
    """report._counterexample: a string is shown as is, an object json cannot write (a circular one)
    is shown by str, more than 20000 characters are cut."""
    assert "u = [1 2]" in vreport._counterexample({"counterexample": "u = [1 2]"})
    loop: dict = {}
    loop["self"] = loop
    assert "{&#x27;self&#x27;: {...}}" in vreport._counterexample({"counterexample": loop})
    long = vreport._counterexample({"counterexample": "z" * 30000})
    assert "… (cut)" in long and long.count("z") == 20000
    assert vreport._counterexample({}) == ""


def test_number_of_text_that_is_not_a_number():
    """resources._number: text that is not a fraction (or divides by 0) is no number."""
    assert vres._number("8/5") == 1.6
    assert vres._number("abc") is None and vres._number("1/0") is None
    assert vres._number(None) is None and vres._number([1]) is None


def test_resource_records_refuse_a_list_of_other_objects():
    """resources.resource_records: a list holds Compiled objects only."""
    comp = sv.compile(determinant(2), method="dense")
    assert len(vres.resource_records([comp])) == 1
    assert vres.resource_records(comp) == vres.resource_records([comp])  # one Compiled is a list of one
    with pytest.raises(UsageError, match="resource records: item 1: expected a Compiled, found Model"):
        vres.resource_records([comp, comp.model])


def test_weight_arrays_of_huge_and_symbolic_values():
    """weights._float: a value beyond float range is drawn at ±1e308 (not an OverflowError); a
    symbolic cell is marked, not given a number."""
    g = Grid.from_cells(1, 3, {(0, 0): 10**400, (0, 1): -(10**400), (0, 2): sym("a")})
    values, symbolic, nz = vweights.grid_arrays(g)
    assert values[0, 0] == 1e308 and values[0, 1] == -1e308
    assert symbolic.tolist() == [[False, False, True]] and len(nz) == 3
    with pytest.raises(TypeError):
        vweights._float(sym("a"))


def test_plot_of_a_layer_with_only_symbolic_weights():
    """plot_weights (the colour scale is always drawn; the branch without one was unreachable): a
    layer of symbolic weights only plots its four panels and the scale, the symbolic cells counted
    in the titles; a weight beyond float range or near its end plots too (it raised OverflowError,
    then ValueError from the colour bar's span of 2·1e308)."""
    pytest.importorskip("matplotlib")
    s = Grid.symbolic("w", 2, 2)
    fig = vweights.plot_weights(Layer(s, s, s, s))
    assert len(fig.axes) == 5 and all("4 symbolic" in ax.get_title() for ax in fig.axes[:4])
    for big in (10**400, 10**308, -(10**308)):  # beyond float range, and near its end
        n = Grid.from_cells(2, 2, {(0, 0): big, (1, 1): 1})
        assert len(vweights.plot_weights(Layer(n, n, n, n)).axes) == 5
