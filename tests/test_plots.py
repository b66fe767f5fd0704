"""Plots a reader trusts: per-instance bound markers (never a line joining different instances' bounds), legends for
every marker kind, instance names on small panels, log scales across decades, integer layer ticks, labelled channel
bands, figure sizes that fit the content, square weight cells."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.library import determinant, walsh_hadamard

pytest.importorskip("matplotlib")

from symverify.viz import plot_model, plot_resources, plot_weights

SMALL = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)


def _artist(ax, gid):
    found = [a for a in (*ax.collections, *ax.lines) if a.get_gid() == gid]
    assert len(found) == 1, gid
    return found[0]


def test_bounds_are_per_instance_markers_not_a_line():
    cs = [sv.compile(walsh_hadamard(n, 2), method="dense") for n in (2, 4, 8)]
    fig = plot_resources(cs)
    layers_ax = fig.axes[0]
    bound = _artist(layers_ax, "bound layers dense")
    assert bound.get_linestyle() == "None" and bound.get_marker() not in (None, "None", "")
    assert len(bound.get_xdata()) == len(cs)  # one marker per instance
    labels = fig.legends[0].get_texts()
    assert any("(per instance)" in t.get_text() for t in labels)
    assert any("nonzero_params (hollow)" in t.get_text() for t in labels)


def test_one_circuit_is_named_and_not_degenerate():
    fig = plot_resources([sv.compile(SMALL)])
    names = [t for ax in fig.axes for t in ax.texts if (t.get_gid() or "").startswith("name ")]
    assert names and all(t.get_text() for t in names)
    lo, hi = fig.axes[0].get_xlim()
    assert hi > lo


def test_sizes_spanning_decades_get_log_scales():
    cs = [sv.compile(walsh_hadamard(n, 1), method="dense") for n in (2, 256)]
    fig = plot_resources(cs)
    n_ax = fig.axes[1]
    assert n_ax.get_xscale() == "log" and n_ax.get_yscale() == "log"


def test_plot_model_integer_layer_ticks_labelled_cells_and_fitting_size():
    fig = plot_model(sv.compile(SMALL))
    ax, strip = fig.axes[0], fig.axes[1]
    ticks = [t for t in strip.get_xticks() if strip.get_xlim()[0] <= t <= strip.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "row 0, ch 0" in labels and "row 0, ch 1" in labels
    big = plot_model(sv.compile(determinant(3)))
    w, h = big.get_size_inches()
    assert h <= 10 and w <= 16
    band_labels = [t.get_text() for t in big.axes[0].get_yticklabels()]
    assert all("ch 0–" in t for t in band_labels if t)


def test_plot_weights_keeps_small_matrices_square():
    fig = plot_weights(sv.compile(determinant(3)), 3)
    w_ax = fig.axes[0]
    assert w_ax.get_aspect() == 1.0  # "equal": a 3×3 W is not stretched to the biases' 72 rows
