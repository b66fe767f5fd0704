"""The plotting functions' arguments as a careless user passes them: each wrong type or size is a
UsageError naming the argument, before matplotlib sees it (a TypeError, a ValueError, a size
silently replaced by the default, or a figure too large to save); numpy integers are read by value."""

from __future__ import annotations

import numpy as np
import pytest

import symverify as sv
from symverify.errors import UsageError
from symverify.kaleidoscope import permutation_to_kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.viz import occupancy, plot_butterfly, plot_model, plot_weights, report_page

pytest.importorskip("matplotlib")

COMPILED = sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense")
RUN = {"name": "s", "title": "one script", "instances": [
    {"name": "i", "verdict": "proved", "method": "exact", "resources": {}, "bounds": {}, "over_bound": [], "ok": True,
     "detail": ""}]}


@pytest.mark.parametrize("cert", ["cert.json", COMPILED, COMPILED.model, {}])
@pytest.mark.parametrize("draw", [occupancy, plot_model])
def test_a_certificate_that_is_no_certificate_is_refused(draw, cert):
    """``occupancy(model, certificate="cert.json")`` raised AttributeError ('str' object has no
    attribute 'boundaries'), and a Compiled passed as its certificate the same."""
    with pytest.raises(UsageError, match=rf"certificate: expected a Certificate .*found {type(cert).__name__}"):
        draw(COMPILED.model, certificate=cert)


def test_a_certificate_still_draws():
    assert occupancy(COMPILED.model, certificate=COMPILED.certificate).source == "certificate"


@pytest.mark.parametrize("index", [np.int64(1), np.int32(-1), np.uint8(1)])
def test_plot_weights_reads_a_numpy_layer_index_by_its_value(index):
    """A numpy integer index was refused as 'out of range for a model of L layers'."""
    fig = plot_weights(COMPILED, index)
    want = plot_weights(COMPILED, int(index))
    assert [ax.get_title() for ax in fig.axes] == [ax.get_title() for ax in want.axes]


@pytest.mark.parametrize(("index", "message"), [
    (True, r"plot_weights: index: expected an int layer index, found bool True"),
    (1.0, r"plot_weights: index: expected an int layer index, found float 1.0"),
    ("0", r"plot_weights: index: expected an int layer index, found str '0'"),
    (99, r"plot_weights: layer index 99 is out of range for a model of \d+ layers"),
])
def test_plot_weights_names_what_is_wrong_with_an_index(index, message):
    """``True`` was 'out of range' (it is no index at all)."""
    with pytest.raises(UsageError, match=message):
        plot_weights(COMPILED, index)


@pytest.mark.parametrize("annotate", [1, "yes", "no", np.float64(1.0)])
def test_plot_weights_refuses_an_annotate_that_is_no_bool(annotate):
    """``annotate="no"`` annotated every cell (a non-empty string is true)."""
    with pytest.raises(UsageError, match=r"plot_weights: annotate: expected True, False or None"):
        plot_weights(COMPILED, 0, annotate=annotate)


@pytest.mark.parametrize("annotate", [True, False, None, np.bool_(True)])
def test_plot_weights_takes_a_bool_annotate(annotate):
    assert plot_weights(COMPILED, 0, annotate=annotate).axes


K = permutation_to_kaleidoscope([1, 0, 3, 2])


@pytest.mark.parametrize("name", ["width", "height"])
@pytest.mark.parametrize("value", [0, -1, "5", float("nan"), float("inf"), 1e4, 10**400, 10**5000, True],
                         ids=["0", "-1", "str", "nan", "inf", "1e4", "10**400", "10**5000", "True"])
def test_plot_butterfly_refuses_a_size_that_is_not_inches(name, value):
    """``width=-1`` and ``height=nan`` raised matplotlib's ValueError, ``width="5"`` a TypeError,
    ``width=0`` was replaced by the default without a word, and ``width=1e4`` made a figure whose
    ``savefig`` ran out of memory; plot_model refused all of them already."""
    with pytest.raises(UsageError, match=rf"plot_butterfly: {name} must be None \(sized by the content\) or inches in \(0, 500\]"):
        plot_butterfly(K, **{name: value})


def test_plot_butterfly_takes_inches():
    fig = plot_butterfly(K, width=np.float32(5.0), height=3)
    assert tuple(fig.get_size_inches()) == (5.0, 3.0)


def test_plot_model_sizes_are_checked_as_before():
    with pytest.raises(UsageError, match=r"plot_model: height must be None \(sized by the content\) or inches in \(0, 500\]"):
        plot_model(COMPILED, height=501)
    assert tuple(plot_model(COMPILED, width=7, height=np.int64(4)).get_size_inches()) == (7.0, 4.0)


def test_report_page_refuses_a_title_that_is_no_str():
    """``report_page(run, title=3)`` raised TypeError from the HTML escaping."""
    with pytest.raises(UsageError, match=r"report_page: title: expected a str, found int 3"):
        report_page(RUN, title=3)
    assert "<title>mine</title>" in report_page(RUN, title="mine")


@pytest.mark.parametrize(("view", "expected"), [
    ("model_html", "a BaseConv Model"),
    ("compiled_html", r"a Compiled \(from symverify.compile\)"),
    ("report_html", r"a Report \(from symverify.verify\)"),
    ("factorization_html", r"a Factorization \(from symverify.kaleidoscope\)"),
])
@pytest.mark.parametrize(("arg", "found"), [("model.json", "str"), (None, "NoneType"), ({}, "dict"), (3, "int")])
def test_html_views_refuse_an_argument_of_another_type(view, expected, arg, found):
    """Each notebook view names what it expected and the type it found (it raised AttributeError)."""
    from symverify.viz import html as vhtml

    with pytest.raises(UsageError, match=rf"^{view}: expected {expected}, found {found} "):
        getattr(vhtml, view)(arg)


def test_html_views_refuse_each_others_objects():
    from symverify.viz import html as vhtml

    with pytest.raises(UsageError, match=r"model_html: expected a BaseConv Model, found Compiled"):
        vhtml.model_html(COMPILED)
    with pytest.raises(UsageError, match=r"compiled_html: expected a Compiled .*, found Model"):
        vhtml.compiled_html(COMPILED.model)
    assert "dense compilation" in vhtml.compiled_html(COMPILED) and "BaseConv model" in vhtml.model_html(COMPILED.model)
