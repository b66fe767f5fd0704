"""Measured resources against stated bounds, from a proof run or from compiled models.

A *proof run* is what ``symverify prove --json RUN.json`` writes (``{"format":
"symverify.proof-run", "scripts": [{"name", "title", "status", "result": {"instances": [...]}}]}``),
or one script's result (``python -m symverify.proofs.NAME --json OUT``: ``{"name", "title", "instances"}``).
:func:`resource_records` flattens either (a dict, or the path of the JSON file), or a list of
:class:`~symverify.compiler.result.Compiled`, into :class:`Record` rows: one per instance, with
its resources and bounds as floats (``"8/5"`` read exactly, then converted).

:func:`plot_resources` draws three panels, one point per instance that reports the keys, coloured
by script (or by compiler):

* ``layers`` against ``max(Δ, 1)·⌈log2 max(w, 2)⌉`` (needs ``depth``, ``width``, ``layers``);
  Theorem H.21's stated ``L ≤ 24·max(Δ,1)·⌈log2 w⌉ + 27`` is a straight line in this variable;
* ``inner_n`` (N') against the cut width ``w``;
* ``params`` (dense count) and ``nonzero_params`` against the circuit size ``s``.

Each stated bound of the plotted resource (``layers`` and ``layers_c21``; ``inner_n``;
``params``) is drawn per script as a dashed line through the instances' bounds (at each x the
largest, where instances at one x state different bounds), so a point under its line is within
its bound.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symverify.errors import SerializationError, UsageError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Record", "resource_records", "load_run", "check_instance", "exceeded_bounds", "run_value", "numbers", "plot_resources", "PANELS", "x_layers"]


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


def load_run(run: Any) -> dict[str, Any]:
    """A proof run as a dict in the ``symverify.proof-run`` form: ``run`` is that dict, one
    script's result dict (wrapped as a run of one script), or the path of either as JSON.

    Raises:
        SerializationError: the file cannot be read or is not valid JSON, or the document is neither form.
        UsageError: ``run`` is neither a dict nor a path.
    """
    if isinstance(run, (str, Path)):
        from symverify.ir.serialize import read_json_file

        path = Path(run)
        data = read_json_file(path, "the proof run")  # a regular file, strict JSON (no repeated keys, no NaN)
        return _as_run(data, str(path), from_file=True)
    if isinstance(run, Mapping):
        return _as_run(run, "proof run")
    raise UsageError(f"expected a proof run (a dict or the path of its JSON file), found {type(run).__name__}")


_KINDS = ("prover", "computed", "argued")
_EXACT = re.compile(r"-?[0-9]+(?:/[0-9]+)?\Z", re.ASCII)


def run_value(v: Any, where: str) -> Fraction:
    """A resource or bound of a proof run, exactly: a JSON int, a finite float, or the exact text
    ``"-12/5"`` that ``stable_number`` writes (nothing else: not ``" 1"``, ``"0x10"``, ``"1e9"``)."""
    from symverify.errors import SymverifyError
    from symverify.ir.bigint import str_to_int

    if isinstance(v, int) and not isinstance(v, bool):
        return Fraction(v)
    if isinstance(v, float) and math.isfinite(v):
        return Fraction(v)
    if isinstance(v, str) and _EXACT.match(v):
        num, _, den = v.partition("/")
        try:
            q, d = str_to_int(num, where), str_to_int(den, where) if den else 1
        except SymverifyError as e:
            raise SerializationError(str(e)) from None
        if d:
            return Fraction(q, d)
    shown = repr(v) if not isinstance(v, str) or len(v) <= 40 else repr(v[:40]) + "…"
    raise SerializationError(f"{where}: expected an int, a float or an exact rational such as '-12/5', found {shown}")


def exceeded_bounds(inst: Mapping[str, Any], where: str) -> list[str]:
    """The resources of an instance record over their bounds, derived from its ``resources`` and
    ``bounds`` (a bound without a value counts, as :meth:`~symverify.scripts.protocol.Instance.over_bound`
    counts it), never read from its ``over_bound``. Every bound, and every resource held to one,
    must be an exact number (:func:`run_value`; a resource without a bound is information only).

    Raises:
        SerializationError: ``resources`` or ``bounds`` not an object, or a value not an exact number.
    """
    raw_res, raw_bounds = inst.get("resources", {}), inst.get("bounds", {})
    for part, got in (("resources", raw_res), ("bounds", raw_bounds)):
        if not isinstance(got, Mapping):
            raise SerializationError(f"{where}.{part}: expected an object, found {type(got).__name__}")
    bounds = {str(k): run_value(v, f"{where}.bounds.{k}") for k, v in raw_bounds.items()}
    res = {str(k): run_value(v, f"{where}.resources.{k}") for k, v in raw_res.items() if str(k) in bounds}
    return [k for k, b in bounds.items() if k not in res or res[k] > b]


def check_instance(inst: Any, where: str) -> None:
    """Refuse an instance record of a proof run that no run writes (docs/formats.md § Proof run):
    a verdict, kind, ``checks`` or ``ok`` of the wrong type or value, an argued claim with a
    verdict, ``checks`` on a claim that is not argued, ``ok`` for an instance that is not proved
    (or not argued), that is an argued claim whose checks failed, or that is over a bound (a
    resource above its bound, or a bound without a value, whether or not ``over_bound`` is
    written), an ``over_bound`` that does not list exactly the resources over their bounds, or a
    bound (or a resource held to one) that is not an exact number (:func:`run_value`). A forged
    file is an error, never a page or a golden run that shows a pass.

    Raises:
        SerializationError: naming the field and what was found.
    """
    if not isinstance(inst, Mapping):
        raise SerializationError(f"{where}: expected an object, found {type(inst).__name__}")
    if not isinstance(inst.get("name"), str):
        raise SerializationError(f"{where}.name: expected a string, found {type(inst.get('name')).__name__}")
    verdict, kind = inst.get("verdict"), inst.get("kind", "prover")
    if not isinstance(verdict, str) or verdict not in ("proved", "refuted", "unknown"):
        raise SerializationError(f"{where}.verdict: expected one of proved, refuted, unknown, found {verdict!r:.40}")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise SerializationError(f"{where}.kind: expected one of {', '.join(_KINDS)}, found {kind!r:.40}")
    if kind == "argued" and verdict != "unknown":
        raise SerializationError(f"{where}: an argued claim is not decided by the tool; its verdict must be unknown, "
                                 f"found {verdict}")
    raw_res, raw_bounds = inst.get("resources", {}), inst.get("bounds", {})
    exceeded = exceeded_bounds(inst, where)
    over = inst.get("over_bound", [])
    if not isinstance(over, list) or not all(isinstance(k, str) for k in over):
        raise SerializationError(f"{where}.over_bound: expected a list of resource names")
    for k in over:
        if k not in raw_bounds:
            raise SerializationError(f"{where}: over_bound names {k!r}, which has no stated bound")
    if "over_bound" in inst:
        for k in exceeded:
            if k not in over:
                shown = f"{k}={raw_res[k]}" if k in raw_res else f"{k} (no value)"
                raise SerializationError(f"{where}: {shown} is over its bound {raw_bounds[k]} but not listed in over_bound")
        for k in over:
            if k not in exceeded:
                raise SerializationError(f"{where}: over_bound names {k!r}, but {k}={raw_res[k]} is within its bound "
                                         f"{raw_bounds[k]}")
    checks = inst.get("checks")
    if checks is not None and (not isinstance(checks, bool) or kind != "argued"):
        raise SerializationError(f"{where}.checks: expected null, or true or false on an argued claim, found {checks!r:.40} "
                                 f"on a {kind} claim")
    ok = inst.get("ok", False)
    if not isinstance(ok, bool):
        raise SerializationError(f"{where}.ok: expected true or false, found {ok!r:.40}")
    if ok and (over or exceeded or (kind != "argued" and verdict != "proved") or checks is False):
        k = (over or exceeded or [""])[0]
        why = (f"over_bound lists {', '.join(over)}" if over else
               f"{k}={raw_res[k]} is over its bound {raw_bounds[k]}" if k in raw_res else
               f"{k} has a bound {raw_bounds[k]} and no value" if k else
               "the argued claim's checks failed" if checks is False else f"the verdict is {verdict}")
        raise SerializationError(f"{where}: 'ok' is true, but {why}")


def _as_run(data: Any, where: str, from_file: bool = False) -> dict[str, Any]:
    """``data`` as a run, checked as docs/formats.md § Proof run says its readers check it (a file
    in the run form must say its ``format``; a dict built in memory need not)."""
    if not isinstance(data, Mapping):
        raise SerializationError(f"{where}: expected a JSON object, found {type(data).__name__}")
    if "scripts" in data and from_file and data.get("format") != "symverify.proof-run":
        raise SerializationError(f"{where}.format: expected 'symverify.proof-run' (a run written by symverify prove "
                                 f"--json), found {data.get('format')!r:.40}")
    if isinstance(data.get("scripts"), list):
        for k, s in enumerate(data["scripts"]):
            if not isinstance(s, Mapping):
                raise SerializationError(f"{where}: scripts[{k}]: expected an object, found {type(s).__name__}")
            if not isinstance(s.get("name"), str):
                raise SerializationError(f"{where}: scripts[{k}].name: expected a string, found {s.get('name')!r:.40}")
            res = s.get("result")
            if res is not None and not (isinstance(res, Mapping) and isinstance(res.get("instances"), list)):
                raise SerializationError(f"{where}: scripts[{k}].result: expected an object with a list 'instances'")
            for j, inst in enumerate((res or {}).get("instances", [])):
                check_instance(inst, f"{where}: scripts[{k}].result.instances[{j}]")
        return dict(data)
    if isinstance(data.get("instances"), list):
        for j, inst in enumerate(data["instances"]):
            check_instance(inst, f"{where}: instances[{j}]")
        name = str(data.get("name", "script"))
        ok = bool(data.get("ok"))
        script = {"name": name, "title": data.get("title", ""), "status": "ok" if ok else "failed", "ok": ok,
                  "seconds": data.get("seconds", 0), "error": "", "result": dict(data)}
        return {"format": "symverify.proof-run", "version": 1, "ok": ok, "seconds": data.get("seconds", 0),
                "scripts": [script]}
    raise SerializationError(
        f"{where}: expected a proof run ({{'scripts': [...]}}, from `symverify prove --json`) or one script's "
        f"result ({{'instances': [...]}}, from `python -m symverify.proofs.NAME --json`); found keys {sorted(map(str, data))[:8]}"
    )


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
                              bool(inst.get("ok", inst.get("verdict") == "proved")), numbers(inst.get("resources")),
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
        ax.scatter(xs, ys, s=16, color=colors[script], label=script, gid=f"measured {pid} {script}", zorder=3,
                   edgecolors=["black" if not r.ok else "none" for r in mine])
        if hollow:
            hx = [x for x, r in zip(xs, mine) if hollow in r.resources]
            hy = [r.resources[hollow] for r in mine if hollow in r.resources]
            if hx:
                ax.scatter(hx, hy, s=16, facecolors="none", edgecolors=colors[script], gid=f"{hollow} {pid} {script}",
                           zorder=3, label=f"{script}: {hollow} (hollow)")
                ys_all += hy
        for marker, key in zip(_BOUND_MARKERS, bkeys):
            # each instance's own stated bound, as a bar at its x: bounds of different instances are never
            # joined into a line (they need not be one function of x)
            pairs = sorted((x, r.bounds[key]) for x, r in zip(xs, mine) if key in r.bounds)
            if pairs:
                ax.plot([x for x, _ in pairs], [b for _, b in pairs], linestyle="none", marker=marker, markersize=11,
                        markeredgewidth=1.4, color=colors[script], gid=f"bound {key} {script}",
                        label=f"{script}: stated {key} (per instance)")
                ys_all += [b for _, b in pairs]
    if len(rows) <= ANNOTATE_AT_MOST:
        for r in rows:
            label = r.name if len(r.name) <= 28 else r.name[:27] + "…"
            ax.annotate(label, (_x_of(pid, r.resources), r.resources[ykey]), xytext=(4, 3), textcoords="offset points",
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


