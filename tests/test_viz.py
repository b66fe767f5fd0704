"""symverify.viz: the figures show what the objects hold (live cells, edges, points, bounds)."""

from __future__ import annotations

import importlib.util
import random
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import symverify as sv  # noqa: E402
from symverify.compiler.kaleidoscope import C0, C21  # noqa: E402
from symverify.errors import LimitError, SerializationError, ShapeError, UsageError  # noqa: E402
from symverify.kaleidoscope import (  # noqa: E402
    SparseMatrix,
    linear_circuit_to_kaleidoscope,
    permutation_to_kaleidoscope,
    sparse_to_kaleidoscope,
)
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList  # noqa: E402
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate  # noqa: E402
from symverify.kernel.ir.circuit import Circuit, Gate  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402
from symverify.kernel.ir.scalar import Sym, is_zero, sym  # noqa: E402
from symverify.kernel.semantics.evaluate import embed, eval_layer  # noqa: E402
from symverify.kernel.semantics.rings import ScalarRing  # noqa: E402
from symverify.library import determinant, walsh_hadamard  # noqa: E402
from symverify.viz import (  # noqa: E402
    Role,
    occupancy,
    plot_butterfly,
    plot_model,
    plot_resources,
    plot_weights,
    resource_records,
    wiring,
    write_report,
)

PROOFS = Path(__file__).resolve().parent.parent / "proofs"


def _proof_module(name: str):
    spec = importlib.util.spec_from_file_location(f"viz_proofs_{name}", PROOFS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def sweep():
    """Every circuit of the quick tiers of both Theorem H.21 scripts, compiled by both compilers."""
    general = _proof_module("thm_h21_general").circuits(True)
    dense = _proof_module("thm_h21_dense_baseline")
    circuits = general + dense.edge_cases()
    return [(c, sv.compile(c, method=m)) for c in circuits for m in ("kaleidoscope", "dense")]


def _last_boundaries(cert: Certificate) -> dict[int, Boundary]:
    return {b.layer: b for b in cert.boundaries}


# ---- occupancy maps ------------------------------------------------------------------------


def test_occupancy_map_draws_exactly_the_certificates_cells(sweep):
    for c, out in sweep:
        fig = plot_model(out)
        drawn = fig.axes[0].images[0].get_array()
        occ = occupancy(out)
        nn, dd = out.model.inner_n, out.model.inner_d
        assert drawn.shape == (nn * dd, out.model.depth + 1)
        assert (drawn == occ.roles.T).all()
        for layer, b in _last_boundaries(out.certificate).items():
            cells = {(x.row, x.col) for x in b.cells}
            assert int((drawn[:, layer] != Role.ZERO).sum()) == len(b.cells), (c.name, layer)
            assert occ.cells(layer) == cells, (c.name, b.label)
            assert not occ.cells(layer, Role.WORKSPACE), "a certificate boundary has no workspace"
        assert occ.kinds[0] == "input" and len(occ.kinds) == out.model.depth + 1


def test_occupancy_kinds_name_the_gadgets():
    occ = occupancy(sv.compile(determinant(3)))  # d = 3: gathered onto a track of width 2
    assert {"sequence", "channel", "layout", "remember"} <= set(occ.kinds)
    dense = occupancy(sv.compile(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1], u[1][0]], n=2, d=2), method="dense"))
    assert {"layout", "linear", "remember"} <= set(dense.kinds)


def _states(model: Model, seed: int):
    rng = random.Random(seed)
    u = [[rng.randint(-9, 9) or 1 for _ in range(model.d)] for _ in range(model.n)]
    ring = ScalarRing()
    state = embed(u, model.inner_n, model.inner_d, 0)
    out = [state]
    for layer in model.layers:
        state = eval_layer(layer, state, ring)
        out.append(state)
    return out


@pytest.mark.parametrize("use_certificate", [True, False])
def test_occupancy_is_sound_on_real_states(sweep, use_certificate):
    """Every cell that is nonzero on a random input is drawn live, and every cell drawn as
    remembered holds the value it held one layer (or one certificate boundary) before."""
    picked = [(c, out) for c, out in sweep if out.model.inner_n * out.model.inner_d * out.model.depth <= 6000][:12]
    assert len(picked) >= 6
    for c, out in picked:
        occ = occupancy(out) if use_certificate else occupancy(out.model)
        assert occ.source == ("certificate" if use_certificate else "support")
        states = _states(out.model, seed=len(c.gates))
        bounds = sorted(_last_boundaries(out.certificate)) if use_certificate else []
        for t, st in enumerate(states):
            nonzero = {(i, q) for i, row in enumerate(st) for q, v in enumerate(row) if not is_zero(v)}
            assert nonzero <= occ.cells(t), (c.name, t)
            if t == 0:
                continue
            ref = t - 1
            if t in bounds:
                ref = max(b for b in bounds if b < t)
            for i, q in occ.cells(t, Role.REMEMBERED):
                assert st[i][q] == states[ref][i][q], (c.name, t, (i, q))


def test_occupancy_without_certificate_marks_input_and_readout():
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    out = sv.compile(c, method="dense")
    occ = occupancy(out.model)
    assert occ.cells(0, Role.TRACK) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert occ.boundaries == ()
    last = occ.cells(occ.layers, Role.TRACK)
    assert last and all(i < 2 and q < 2 for i, q in last)
    fig = plot_model(out.model, order="channel")
    assert fig.axes[0].images[0].get_array().shape == (out.model.inner_n * out.model.inner_d, out.model.depth + 1)


def test_plot_model_refuses_what_it_cannot_draw(monkeypatch):
    out = sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)))
    with pytest.raises(UsageError, match="expected a Model or a Compiled, found int"):
        plot_model(42)
    with pytest.raises(UsageError, match="order must be 'row' or 'channel'"):
        plot_model(out, order="diagonal")
    late = Certificate((Boundary(out.model.depth + 3, ()),))
    with pytest.raises(ShapeError, match=r"at layer \d+, but the model has \d+ layers"):
        occupancy(out.model, certificate=late)
    outside = Certificate((Boundary(0, (Cell.node(out.model.inner_n, 0, 0),)),))
    with pytest.raises(ShapeError, match="outside the model's"):
        plot_model(out.model, certificate=outside)
    import symverify.viz.model as vm

    monkeypatch.setattr(vm, "MAX_PIXELS", 10)
    with pytest.raises(LimitError, match="MAX_PIXELS"):
        occupancy(out)


# ---- weights -------------------------------------------------------------------------------


def _panel_counts(fig):
    counts = []
    for ax in fig.axes[:4]:
        import numpy as np

        numeric = int(np.isfinite(np.asarray(ax.images[0].get_array(), dtype=float)).sum())
        symbolic = 0
        if len(ax.images) > 1:
            symbolic = int(np.isfinite(np.asarray(ax.images[1].get_array(), dtype=float)).sum())
        counts.append((numeric, symbolic))
    return counts


def test_plot_weights_draws_every_nonzero_weight(sweep):
    for _, out in sweep[::5]:
        m = out.model
        for k in {0, m.depth // 2, m.depth - 1} if m.depth else set():
            layer = m.layers[k]
            fig = plot_weights(out, k)
            want = [g.nonzero_count() for _, g in layer.grids()]
            assert [a + b for a, b in _panel_counts(fig)] == want


def test_plot_weights_symbolic_and_values():
    a = sym("a")
    layer = Layer.make(2, 2, W=Grid.from_cells(2, 2, {(0, 0): a, (1, 0): Fraction(-1, 2)}), b2=Grid.full(2, 2, 3),
                       mode="cyclic")
    fig = plot_weights(layer)
    assert _panel_counts(fig) == [(1, 1), (0, 0), (0, 0), (4, 0)]
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {"a", "-1/2"} <= texts
    assert "3" in {t.get_text() for t in fig.axes[3].texts}
    assert any(isinstance(v, Sym) for v in layer.W.values())


def test_plot_weights_refusals():
    m = sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense").model
    with pytest.raises(UsageError, match="pass index=k"):
        plot_weights(m)
    with pytest.raises(UsageError, match="out of range"):
        plot_weights(m, m.depth)
    with pytest.raises(UsageError, match="expected a Layer"):
        plot_weights("W")


# ---- butterfly diagrams ----------------------------------------------------------------------


def _segments(fig):
    ax = fig.axes[0]
    return {c.get_gid(): c.get_segments() for c in ax.collections if (c.get_gid() or "").startswith("factor ")}


def _nonzero_entries(f: ButterflyFactor) -> int:
    return sum(not is_zero(v) for v in f.d1 + f.d2 + f.d3 + f.d4)


@pytest.mark.parametrize("perm", [[0], [1, 0], [2, 0, 3, 1], [3, 1, 2, 0, 4], [5, 2, 7, 0, 1, 6, 3, 4],
                                  list(reversed(range(16)))])
def test_benes_routing_is_drawn_as_a_switching_network(perm):
    fact = permutation_to_kaleidoscope(perm)
    fig = plot_butterfly(fact)
    segs = _segments(fig)
    factors = wiring(fact).factors
    assert len(segs) == len(factors)
    size = fact.kaleidoscope.size
    for k, f in enumerate(factors):
        assert len(segs[f"factor {k}"]) == _nonzero_entries(f) == size  # one edge pair per factor pair
    for i, target in enumerate(perm):  # following the drawn edges routes x[i] to perm[i]
        pos = i
        for k in range(len(factors)):
            nxt = [round(b[1]) for a, b in segs[f"factor {k}"] if round(a[1]) == pos]
            assert len(nxt) == 1
            pos = nxt[0]
        assert pos == target


def test_butterfly_diagrams_of_the_sweeps_objects():
    objs = [
        sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2, 0], [0, 3, 0], [4, 0, 5]])),
        linear_circuit_to_kaleidoscope(walsh_hadamard(4), mode="live"),
        linear_circuit_to_kaleidoscope(walsh_hadamard(4), mode="size"),
        permutation_to_kaleidoscope([1, 0, 3, 2]).kaleidoscope,
        BBStar.identity(8),
        FactorList(4, (ButterflyFactor.identity(4, 1), ButterflyFactor(4, 2, (1, 2), (0, 1), (3, 0), (1, 1)))),
        ButterflyFactor(2, 1, (1,), (2,), (3,), (4,)),
    ]
    for obj in objs:
        fig = plot_butterfly(obj)
        segs = _segments(fig)
        factors = wiring(obj).factors
        assert [len(segs[f"factor {k}"]) for k in range(len(factors))] == [_nonzero_entries(f) for f in factors]


def test_butterfly_labels():
    f = ButterflyFactor(2, 1, (1,), (2,), (0,), (Fraction(-1, 3),))
    texts = {t.get_text() for t in plot_butterfly(f).axes[0].texts}
    assert {"2", "-1/3"} <= texts and "1" not in texts
    assert "1" in {t.get_text() for t in plot_butterfly(f, labels="all").axes[0].texts}
    assert not {"2", "-1/3"} & {t.get_text() for t in plot_butterfly(f, labels="none").axes[0].texts}


def test_plot_butterfly_refusals(monkeypatch):
    with pytest.raises(UsageError, match="expected a ButterflyFactor, BBStar, FactorList, Kaleidoscope or Factorization"):
        plot_butterfly([1, 2])
    with pytest.raises(UsageError, match="labels must be"):
        plot_butterfly(BBStar.identity(2), labels="some")
    import symverify.viz.butterfly as vb

    monkeypatch.setattr(vb, "MAX_EDGES", 3)
    with pytest.raises(LimitError, match="MAX_EDGES"):
        plot_butterfly(BBStar.identity(4))


# ---- resources and the report --------------------------------------------------------------


@pytest.fixture(scope="module")
def run():
    """A real proof run (the runner's JSON form): the quick tiers of both Theorem H.21 scripts and
    the permutations script, run in this process."""
    from symverify.scripts.runner import RunSummary, ScriptOutcome

    outcomes = []
    for name in ("thm_h21_general", "thm_h21_dense_baseline", "dao_thm2_permutations"):
        mod = _proof_module(name)
        result = mod.run(True)
        outcomes.append(ScriptOutcome(name, mod.TITLE, "ok" if result.ok else "failed", 0.0, result.to_json()))
    return RunSummary(True, tuple(outcomes)).to_json()


def _gid(ax, gid):
    found = [a for a in (*ax.collections, *ax.lines) if a.get_gid() == gid]
    assert len(found) == 1, gid
    return found[0]


def test_plot_resources_draws_every_instance_and_the_stated_line(run):
    import math

    fig = plot_resources(run)
    layers_ax, n_ax, params_ax = fig.axes[:3]
    for script in ("thm_h21_general", "thm_h21_dense_baseline"):
        insts = next(s for s in run["scripts"] if s["name"] == script)["result"]["instances"]
        pts = _gid(layers_ax, f"measured layers {script}").get_offsets()
        want = sorted((max(i["resources"]["depth"], 1) * math.ceil(math.log2(max(i["resources"]["width"], 2))),
                       i["resources"]["layers"]) for i in insts)
        assert sorted(map(tuple, pts.tolist())) == want
        assert len(_gid(n_ax, f"measured inner_n {script}").get_offsets()) == len(insts)
        assert len(_gid(params_ax, f"measured params {script}").get_offsets()) == len(insts)
    line = _gid(layers_ax, "bound layers_c21 thm_h21_general")
    for x, y in zip(line.get_xdata(), line.get_ydata()):
        assert y == C21 * x + C0  # Theorem H.21's stated L ≤ C21·max(Δ,1)·⌈log2 w⌉ + C0 is a straight line
    dense_line = _gid(layers_ax, "bound layers thm_h21_dense_baseline")
    assert len(dense_line.get_xdata()) >= 2
    recs = [r for r in resource_records(run) if r.script == "dao_thm2_permutations"]
    assert recs and all("layers" not in r.resources for r in recs)  # no layer counts: not drawn


def test_plot_resources_of_compiled_models():
    cs = [sv.compile(c, method=m) for c in (walsh_hadamard(4, 2), Circuit(1, 2, (Gate.mul(0, 1),), (2,)))
          for m in ("dense", "kaleidoscope")]
    fig = plot_resources(cs)
    assert len(_gid(fig.axes[0], "measured layers kaleidoscope").get_offsets()) == 2
    assert len(_gid(fig.axes[1], "measured inner_n dense").get_offsets()) == 2


def test_plot_resources_refusals(tmp_path):
    with pytest.raises(UsageError, match="expected a Compiled"):
        plot_resources([1, 2])
    with pytest.raises(UsageError, match="expected a proof run"):
        plot_resources(3.5)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(SerializationError, match="cannot read the proof run: not valid JSON"):
        plot_resources(bad)
    with pytest.raises(SerializationError, match="cannot read"):
        plot_resources(tmp_path / "missing.json")
    with pytest.raises(SerializationError, match="expected a proof run"):
        plot_resources({"hello": 1})
    empty = {"scripts": [{"name": "x", "result": {"instances": [{"name": "i", "verdict": "proved", "resources": {"w": 1}}]}}]}
    with pytest.raises(UsageError, match="nothing to plot"):
        plot_resources(empty)


class _Page:
    """The parts of a report page the tests read."""

    def __init__(self, text: str) -> None:
        from html.parser import HTMLParser

        self.rows: list[dict[str, str]] = []
        self.failures: list[dict[str, str]] = []
        self.imgs: list[str] = []
        self.links: list[str] = []
        self.script_rows: list[str] = []
        self.tags: Counter[str] = Counter()
        page = self

        class P(HTMLParser):
            def handle_starttag(self, tag, attrs):
                a = {k: v or "" for k, v in attrs}
                page.tags[tag] += 1
                cls = a.get("class", "")
                if tag == "tr" and cls == "instance":
                    page.rows.append(a)
                if tag == "tr" and cls == "script":
                    page.script_rows.append(a["data-script"])
                if tag == "div" and cls == "failure":
                    page.failures.append(a)
                if tag == "img":
                    page.imgs.append(a.get("src", ""))
                for key in ("src", "href"):
                    if key in a:
                        page.links.append(a[key])

        P().feed(text)
        self.text = text


def test_report_page_lists_every_instance_and_embeds_the_plots(run, tmp_path):
    import base64

    out = write_report(run, tmp_path / "report.html")
    page = _Page(out.read_text(encoding="utf-8"))
    want = Counter((s["name"], i["name"]) for s in run["scripts"] for i in s["result"]["instances"])
    assert Counter((r["data-script"], r["data-instance"]) for r in page.rows) == want
    assert page.script_rows == [s["name"] for s in run["scripts"]]
    assert page.imgs and all(src.startswith("data:image/png;base64,") for src in page.imgs)
    assert base64.b64decode(page.imgs[0].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(link.startswith(("#", "data:")) for link in page.links)  # self-contained
    assert page.tags["script"] == 0 and page.tags["link"] == 0
    assert "all ok" in page.text and not page.failures


def test_report_page_shows_failures_and_counterexamples(tmp_path):
    cex = {"inputs": [["1", "2"]], "params": {}, "cell": [0, 0], "lhs_value": "2", "rhs_value": "3", "stage": None}
    run = {
        "format": "symverify.proof-run", "version": 2, "quick": True, "ok": False, "seconds": 1.0,
        "scripts": [
            {"name": "good", "title": "fine", "status": "failed", "seconds": 0.1, "error": "", "result": {
                "name": "good", "title": "fine", "instances": [
                    {"name": "<script>alert(1)</script>", "verdict": "proved", "method": "exact",
                     "resources": {"layers": 3}, "bounds": {"layers": 4}, "over_bound": [], "ok": True, "detail": ""},
                    {"name": "too deep", "verdict": "proved", "method": "exact", "resources": {"layers": 9, "depth": 1},
                     "bounds": {"layers": 4}, "over_bound": ["layers"], "ok": False, "detail": "L grew"},
                    {"name": "wrong", "verdict": "refuted", "method": "randomized", "resources": {}, "bounds": {},
                     "over_bound": [], "ok": False, "detail": "differs at (0, 0)", "counterexample": cex},
                ]}},
            {"name": "broken", "title": "crashes", "status": "crashed", "seconds": 0.2, "error": "exit code 1: boom",
             "result": None},
        ],
    }
    page = _Page(write_report(run, tmp_path / "r.html").read_text(encoding="utf-8"))
    assert "FAILED" in page.text
    assert {(f["data-script"], f.get("data-instance")) for f in page.failures} == {
        ("good", "too deep"), ("good", "wrong"), ("broken", None)}
    assert '"rhs_value": "3"' in page.text.replace("&quot;", '"')
    assert "exit code 1: boom" in page.text and "over bound: layers" in page.text
    assert "<script>alert" not in page.text and page.tags["script"] == 0
    run["ok"] = True  # a run that claims ok but lists failing instances is refused, never shown as a pass
    with pytest.raises(SerializationError, match=r"proof run\.ok: expected false \(a script is not ok\), found true"):
        write_report(run, tmp_path / "r2.html")
    run["scripts"][0]["status"] = "ok"
    with pytest.raises(SerializationError, match=r"scripts\[0\]\.result: 'ok' is true, but instance 'too deep' is not ok"):
        write_report(run, tmp_path / "r2.html")
    assert not (tmp_path / "r2.html").exists()
    assert len(page.rows) == 3
    assert "No resource plots" in page.text  # nothing reports depth, width or size with layers


def test_report_of_one_script_result_and_refusals(tmp_path, monkeypatch):
    import json

    result = {"name": "solo", "title": "one script", "ok": True, "instances": [
        {"name": "a", "verdict": "proved", "method": "exact", "resources": {"depth": 1, "width": 2, "layers": 3},
         "bounds": {"layers": 7}, "ok": True}]}
    path = tmp_path / "solo.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    page = _Page(write_report(path, tmp_path / "solo.html").read_text(encoding="utf-8"))
    assert [(r["data-script"], r["data-instance"]) for r in page.rows] == [("solo", "a")] and page.imgs
    import symverify.viz._figure as vf
    from symverify.errors import BackendUnavailableError

    def no_matplotlib(*a, **k):
        raise BackendUnavailableError("plotting needs matplotlib, which is not installed")

    monkeypatch.setattr(vf, "new_figure", no_matplotlib)
    page = _Page(write_report(result, tmp_path / "nompl.html").read_text(encoding="utf-8"))
    assert not page.imgs and "No resource plots: plotting needs matplotlib" in page.text and len(page.rows) == 1
    with pytest.raises(SerializationError, match="expected a JSON object"):
        write_report(_json(tmp_path, [1, 2]), tmp_path / "x.html")
    with pytest.raises(UsageError, match="cannot write the report"):
        write_report(result, tmp_path / "no" / "such" / "dir" / "r.html")


def _json(tmp_path, data):
    import json

    p = tmp_path / "data.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


# ---- rich display --------------------------------------------------------------------------


def _cells(html_text: str) -> list[str]:
    from html.parser import HTMLParser

    cells: list[str] = []

    class P(HTMLParser):
        def handle_data(self, data):
            if data.strip():
                cells.append(data.strip())

    P().feed(html_text)
    return cells


def test_repr_html_is_a_compact_table(sweep):
    from symverify.viz.html import report_html, value_text

    c, out = max(sweep, key=lambda co: co[1].model.depth)
    for text in (out.model._repr_html_(), out._repr_html_()):
        assert text.startswith("<table") and len(text) < 12000
        assert f"L={out.model.depth}" in "".join(_cells(text))
    cells = _cells(out._repr_html_())
    for key, bound in out.bounds.items():
        assert key in cells and f"≤ {value_text(bound)}" in cells
    assert f"within all {len(out.bounds)} stated bounds" in cells
    over = replace(out, bounds={**out.bounds, "layers": 1})
    assert "over bound: layers" in _cells(over._repr_html_())
    rep = sv.verify(c, out)
    assert _cells(report_html(rep))[:3] == ["symverify report", "verdict", "PROVED"]
    fact = permutation_to_kaleidoscope([2, 0, 3, 1])
    cells = _cells(fact._repr_html_())
    assert "Factorization: Dao et al. 2020, Theorem 2 (Beneš routing)" in cells and "garbage-free" in cells


def test_repr_html_of_a_refutation_shows_the_counterexample():
    from symverify.viz.html import report_html

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    model = sv.compile(c, method="dense").model
    layer = model.layers[-1]
    (i, j), w = next(iter(layer.W.nonzero().items()))
    bad = replace(model, layers=(*model.layers[:-1], replace(layer, W=layer.W.paint_cells([(i, j, w + 1)]))))
    rep = sv.verify(c, bad)
    assert rep.refuted
    cells = _cells(report_html(rep))
    assert "REFUTED" in cells and "counterexample" in cells and str(rep.counterexample) in cells


def test_repr_html_escapes_names():
    m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.identity(1), b2=Grid.full(1, 1, 1)),), name="<b>x</b>")
    assert "<b>x</b>" not in m._repr_html_() and "&lt;b&gt;x&lt;/b&gt;" in m._repr_html_()


def test_display_needs_no_matplotlib():
    import subprocess
    import sys

    code = ("import sys, symverify as sv, symverify.viz\n"
            "c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)\n"
            "out = sv.compile(c)\n"
            "assert out._repr_html_() and out.model._repr_html_()\n"
            "from symverify.kaleidoscope import permutation_to_kaleidoscope\n"
            "assert permutation_to_kaleidoscope([1, 0])._repr_html_()\n"
            "from symverify.viz.html import report_html\n"
            "assert report_html(sv.verify(c, out))\n"
            "print('matplotlib' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"


def test_resource_records_read_exact_numbers():
    run = {"scripts": [{"name": "s", "result": {"instances": [
        {"name": "i", "verdict": "proved", "ok": True, "resources": {"a": "8/5", "b": 10**400}, "bounds": {"a": 2}}]}}]}
    (rec,) = resource_records(run)
    assert rec.resources == {"a": 1.6, "b": float("inf")} and rec.bounds == {"a": 2.0}
    assert (rec.script, rec.name, rec.verdict, rec.ok) == ("s", "i", "proved", True)
    for bad in (True, "x"):  # a resource is a number even where no bound holds it (no run writes another)
        run["scripts"][0]["result"]["instances"][0]["resources"]["c"] = bad
        with pytest.raises(SerializationError, match=r"instances\[0\]\.resources\.c: expected an int, a float or an exact"):
            resource_records(run)


def test_a_long_stage_label_is_cut_at_a_word_with_an_ellipsis_and_kept_whole():
    """A certificate label past 24 characters was cut mid-term (``x0*x1 + 3*x2 - 7*x3*x4 +``);
    the legend's name ends at a word with ``…`` and ``Occupancy.labels`` keeps the whole label."""
    from symverify.kernel.ir.certificate import Boundary, Certificate
    from symverify.viz.model import gadget_kind

    long = "x0*x1 + 3*x2 - 7*x3*x4 + 12*x5*x6"
    assert gadget_kind(long) == "x0*x1 + 3*x2 - 7*x3*x4…"
    assert gadget_kind("a" * 30) == "a" * 23 + "…"  # no space to cut at: cut and marked
    assert gadget_kind("sum of all inputs") == "sum of all inputs"  # short enough: whole
    comp = sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense")
    cert = Certificate(tuple(Boundary(b.layer, b.cells, long if b.layer else b.label) for b in comp.certificate.boundaries),
                       comp.certificate.meta)
    occ = occupancy(comp.model, certificate=cert)
    assert occ.kinds[-1] == "x0*x1 + 3*x2 - 7*x3*x4…" and all(len(k) <= 24 for k in occ.kinds)
    assert occ.labels[-1] == long and len(occ.labels) == occ.layers + 1
    assert occupancy(comp.model).labels == ()  # no certificate: no labels


def test_the_readme_documents_the_full_labels_with_an_example():
    """``Occupancy.labels`` (the uncut certificate labels behind the legend's names) was documented in
    its docstring only; the README's Pictures section says what it holds, and shows it in a block
    that ``tests/test_docs.py`` runs."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    pictures = readme.split("\n## Pictures\n", 1)[1].split("\n## ", 1)[0]
    assert "`labels[t]`" in pictures and "`kinds[t]`" in pictures and "`Occupancy`" in pictures
    blocks = pictures.split("```python\n")[1:]
    assert any("occupancy(" in b and ".labels" in b.split("```", 1)[0] for b in blocks)
