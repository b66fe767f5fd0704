"""Measured resources against stated bounds, from a proof run or from compiled models.

A *proof run* is what ``symverify prove --json RUN.json`` writes (``{"format":
"symverify.proof-run", "scripts": [{"name", "title", "status", "result": {"instances": [...]}}]}``),
or one script's result (``python -m symverify.proofs.NAME --json OUT``: ``{"name", "title", "instances"}``).
:func:`resource_records` flattens either (a dict, or the path of the JSON file), or a list of
:class:`~symverify.compiler.result.Compiled`, into :class:`Record` rows: one per instance, with
its resources and bounds as floats (``"8/5"`` read exactly, then converted).

:func:`plot_resources` draws three panels, one point per instance that reports the keys, coloured
by script (or by compiler):

* ``layers`` against ``max(Δ, 1)·a`` with ``a = ⌈log2 max(w, 2)⌉`` (needs ``depth``, ``width``,
  ``layers``); Theorem H.21's stated ``L ≤ 24·max(Δ,1)·a + 27`` is a straight line in this variable;
* ``inner_n`` (N') against the cut width ``w``;
* ``params`` (dense count) and ``nonzero_params`` against the circuit size ``s``.

Each stated bound of the plotted resource (``layers`` and ``layers_c21``; ``inner_n``;
``params``) is drawn per script as a dashed line through the instances' bounds (at each x the
largest, where instances at one x state different bounds), so a point under its line is within
its bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symverify.errors import UsageError
from symverify.viz.run_format import check_instance, check_run, exceeded_bounds, instance_ok, run_value  # noqa: F401 (importable by name)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["Record", "resource_records", "load_run", "check_instance", "run_value", "numbers", "plot_resources", "PANELS"]


@dataclass(frozen=True)
class Record:
    """One instance of a proof run (or one compiled model)."""

    script: str
    title: str
    name: str
    verdict: str
    ok: bool
    resources: Mapping[str, float] = field(default_factory=dict)
    bounds: Mapping[str, float] = field(default_factory=dict)
    detail: str = ""


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float, Fraction)):
        try:
            f = float(v)
        except OverflowError:
            return math.inf if v > 0 else -math.inf
        return f if not math.isnan(f) else None
    if isinstance(v, str):
        try:
            return _number(Fraction(v))
        except (ValueError, ZeroDivisionError):
            return None
    return None


def numbers(d: Any) -> dict[str, float]:
    """The numeric entries of a JSON mapping as floats (``"8/5"`` read exactly first); others dropped."""
    if not isinstance(d, Mapping):
        return {}
    out = {}
    for k, v in d.items():
        f = _number(v)
        if isinstance(k, str) and f is not None:
            out[k] = f
    return out


def _plain(v: Any, depth: int = 0, done: dict[int, Any] | None = None) -> Any:
    """A run given as Python objects with every mapping a plain ``dict`` of its items and every
    list a plain ``list`` (the checks then read what a file would hold: a mapping whose ``get``
    disagrees with its items is not taken at its word); the values are checked by the reader.
    A container met twice (shared) is converted once."""
    from symverify.errors import SerializationError
    from symverify.ir import limits

    done = {} if done is None else done
    if depth > limits.MAX_JSON_DEPTH:
        raise SerializationError(f"proof run: nested more than symverify.ir.limits.MAX_JSON_DEPTH = "
                                 f"{limits.MAX_JSON_DEPTH} levels deep")
    if not isinstance(v, (Mapping, list)):
        return v
    if id(v) not in done:
        done[id(v)] = ({k: _plain(x, depth + 1, done) for k, x in v.items()} if isinstance(v, Mapping)
                       else [_plain(x, depth + 1, done) for x in v])
    return done[id(v)]


def load_run(run: Any) -> dict[str, Any]:
    """A proof run as a dict in the ``symverify.proof-run`` form: ``run`` is that dict, one
    script's result dict (wrapped as a run of one script), or the path of either as JSON; checked
    as docs/formats.md § Proof run says (:func:`~symverify.viz.run_format.check_run`).

    Raises:
        SerializationError: the file cannot be read or is not valid JSON, or the document is neither
            form, or a field of it is refused.
        UsageError: ``run`` is neither a dict nor a path.
    """
    if isinstance(run, (str, Path)):
        from symverify.ir.serialize import read_json_file

        path = Path(run)
        data = read_json_file(run, "the proof run")  # a regular file, strict JSON (no repeated keys, no NaN)
        return check_run(data, str(path), from_file=True)
    if isinstance(run, Mapping):
        return check_run(_plain(run), "proof run")
    raise UsageError(f"expected a proof run (a dict or the path of its JSON file), found {type(run).__name__}")


def resource_records(run: Any) -> list[Record]:
    """One :class:`Record` per instance of a proof run (see :func:`load_run`), or per compiled
    model of a list of ``Compiled`` (script = the compiler, name = the model's name).

    Raises:
        UsageError: a list holding something other than ``Compiled`` objects.
        SerializationError: see :func:`load_run`.
    """
    from symverify.compiler.result import Compiled

    if isinstance(run, Compiled):
        run = [run]
    if isinstance(run, (list, tuple)):
        out = []
        for k, c in enumerate(run):
            if not isinstance(c, Compiled):
                raise UsageError(f"resource records: item {k}: expected a Compiled, found {type(c).__name__}")
            out.append(Record(c.method, f"{c.method} compiler", c.model.name or f"model {k}", "compiled",
                              not c.over_bound(), numbers(c.resources), numbers(c.bounds)))
        return out
    data = load_run(run)
    out = []
    for s in data["scripts"]:
        name = str(s.get("name", "?"))
        title = str(s.get("title", ""))
        for inst in (s.get("result") or {}).get("instances", []):  # objects: load_run checked each one
            out.append(Record(name, title, str(inst.get("name", "")), str(inst.get("verdict", "unknown")),
                              instance_ok(inst), numbers(inst.get("resources")),
                              numbers(inst.get("bounds")), str(inst.get("detail", ""))))
    return out


def x_layers(r: Mapping[str, float]) -> float:
    """``max(Δ, 1)·⌈log2 max(w, 2)⌉``: the variable of Theorem H.21's layer bound."""
    return max(r["depth"], 1) * math.ceil(math.log2(max(r["width"], 2)))


# (panel id, title, x label, x of a record's resources, y key, extra hollow y key, bound keys)
PANELS: tuple[tuple[str, str, str, Any, str, str | None, tuple[str, ...]], ...] = (
    ("layers", "layers L vs Δ·⌈log2 w⌉", "max(Δ,1)·⌈log2 max(w,2)⌉", ("depth", "width"), "layers", None,
     ("layers", "layers_c21")),
    ("inner_n", "N' vs cut width w", "w (cut width)", ("width",), "inner_n", None, ("inner_n",)),
    ("params", "parameters vs circuit size", "s (gates)", ("size",), "params", "nonzero_params", ("params",)),
)

_COLORS = ("#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
           "#bab0ac")
_BOUND_MARKERS = ("_", "1", "2")  # one marker per bound key: a bar at each instance's own bound
ANNOTATE_AT_MOST = 8
"""Panels with at most this many points name each point's instance next to it."""


def _x_of(panel: str, r: Mapping[str, float]) -> float:
    if panel == "layers":
        return x_layers(r)
    return r["width"] if panel == "inner_n" else r["size"]


def _panel(ax: Axes, panel: tuple[str, str, str, Any, str, str | None, tuple[str, ...]],
           records: Sequence[Record], colors: Mapping[str, str]) -> int:
    from symverify.viz._figure import plain

    pid, title, xlabel, xkeys, ykey, hollow, bkeys = panel
    rows = [r for r in records if all(k in r.resources for k in (*xkeys, ykey))]
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ykey, fontsize=8)
    ax.tick_params(labelsize=7)
    if not rows:
        ax.text(0.5, 0.5, f"no instance reports {', '.join((*xkeys, ykey))}", transform=ax.transAxes, ha="center",
                va="center", fontsize=8, color="#777777")
        return 0
    ys_all: list[float] = []
    for script in dict.fromkeys(r.script for r in rows):
        mine = [r for r in rows if r.script == script]
        xs = [_x_of(pid, r.resources) for r in mine]
        ys = [r.resources[ykey] for r in mine]
        ys_all += ys
        ax.scatter(xs, ys, s=16, color=colors[script], label=plain(script), gid=f"measured {pid} {script}", zorder=3,
                   edgecolors=["black" if not r.ok else "none" for r in mine])
        if hollow:
            hx = [x for x, r in zip(xs, mine) if hollow in r.resources]
            hy = [r.resources[hollow] for r in mine if hollow in r.resources]
            if hx:
                ax.scatter(hx, hy, s=16, facecolors="none", edgecolors=colors[script], gid=f"{hollow} {pid} {script}",
                           zorder=3, label=plain(f"{script}: {hollow} (hollow)"))
                ys_all += hy
        for marker, key in zip(_BOUND_MARKERS, bkeys):
            # each instance's own stated bound, as a bar at its x: bounds of different instances are never
            # joined into a line (they need not be one function of x)
            pairs = sorted((x, r.bounds[key]) for x, r in zip(xs, mine) if key in r.bounds)
            if pairs:
                ax.plot([x for x, _ in pairs], [b for _, b in pairs], linestyle="none", marker=marker, markersize=11,
                        markeredgewidth=1.4, color=colors[script], gid=f"bound {key} {script}",
                        label=plain(f"{script}: stated {key} (per instance)"))
                ys_all += [b for _, b in pairs]
    if len(rows) <= ANNOTATE_AT_MOST:
        for r in rows:
            label = r.name if len(r.name) <= 28 else r.name[:27] + "…"
            ax.annotate(plain(label), (_x_of(pid, r.resources), r.resources[ykey]), xytext=(4, 3), textcoords="offset points",
                        fontsize=6, color="#444444", gid=f"name {pid} {r.script}")
    positive = [y for y in ys_all if y > 0 and math.isfinite(y)]
    if positive and max(positive) / min(positive) > 50:
        ax.set_yscale("log")
    xs_all = [_x_of(pid, r.resources) for r in rows]
    if min(xs_all) > 0 and max(xs_all) / min(xs_all) > 50:
        ax.set_xscale("log")
    ax.margins(0.12)  # a single instance stays clear of the frame
    ax.grid(True, linewidth=0.3, alpha=0.5)
    return len(rows)


def plot_resources(run: Any, *, title: str | None = None) -> Figure:
    """Layers, N' and parameters of every instance against the stated bounds (module docstring).

    ``run`` is a proof run (dict or JSON path) or a list of ``Compiled``. Artists carry ``gid``s:
    ``"measured PANEL SCRIPT"`` (one point per instance) and ``"bound KEY SCRIPT"`` (the line),
    ``PANEL`` in ``layers``, ``inner_n``, ``params``.

    Raises:
        UsageError / SerializationError: see :func:`resource_records`; also when no record has
            anything to plot.
    """
    from symverify.viz._figure import new_figure, wrap

    records = resource_records(run)
    usable = [r for r in records if any(all(k in r.resources for k in (*p[3], p[4])) for p in PANELS)]
    if not usable:
        raise UsageError(
            f"plot_resources: none of the {len(records)} instances reports layers/inner_n/params together with "
            "depth, width or size; nothing to plot"
        )
    scripts = list(dict.fromkeys(r.script for r in usable))
    colors = {s: _COLORS[k % len(_COLORS)] for k, s in enumerate(scripts)}
    fig = new_figure(15.0, 4.6)
    axes = fig.subplots(1, len(PANELS))
    for ax, panel in zip(axes, PANELS):
        _panel(ax, panel, usable, colors)
    handles, labels = [], []
    for ax in axes:
        for hnd, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(hnd)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(labels)), fontsize=7, frameon=False)
    fig.suptitle(wrap(title if title is not None else f"measured resources vs stated bounds ({len(usable)} instances; "
                      "points under their line are within the bound; black edge: not ok)", fig), fontsize=10)
    return fig


