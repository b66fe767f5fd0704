"""Compact HTML views for notebooks: ``_repr_html_`` of Model, Circuit, Certificate, Compiled, Report and Factorization.

Each function returns one small ``<table>`` (a few lines: signature, resources against bounds,
verdict), never a page of text: long values are abbreviated and long lists cut with "… k more".
Everything is escaped. This module imports neither matplotlib nor any other optional package, so
the display methods that call it stay cheap.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from symverify.kernel.ir.scalar import show_scalar

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["model_html", "circuit_html", "certificate_html", "compiled_html", "report_html", "factorization_html", "value_text", "MAX_ROWS"]

MAX_ROWS = 16
"""The most resource rows a view lists before "… k more"."""

_TABLE = ('<table class="symverify" style="border-collapse:collapse;font-size:0.85em;'
          'font-family:system-ui,sans-serif;margin:0.2em 0">')
_TH = '<th style="text-align:left;padding:0.15em 0.6em;border-bottom:1px solid #bbb" colspan="{span}">{text}</th>'
_TD = '<td style="text-align:{align};padding:0.1em 0.6em;vertical-align:top">{text}</td>'
_COLORS = {"proved": "#1a7f37", "refuted": "#cf222e", "unknown": "#9a6700", "ok": "#1a7f37", "over": "#cf222e"}


def value_text(v: Any, limit: int = 60) -> str:
    """A value for people, abbreviated to ``limit`` characters (huge integers as ``<N-digit …>``)."""
    if isinstance(v, float):
        text = f"{v:.4g}"
    elif isinstance(v, (int, Fraction)) and not isinstance(v, bool):
        text = show_scalar(v)
    else:
        text = str(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with every control character but tab and newline written as its escape (``\\x00``,
    ``\\x1b``): HTML has no place for them (a NUL is a parse error, an ESC shows nothing), and a
    name that holds one is shown as it is, not as what a terminal or a browser makes of it."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def escape(text: str) -> str:
    """``text`` for HTML text and attribute values: :func:`visible`, then ``html.escape`` (quotes included)."""
    return html.escape(visible(text))


def _esc(v: Any, limit: int = 60) -> str:
    return escape(value_text(v, limit))


def _badge(word: str, color_key: str | None = None) -> str:
    color = _COLORS.get(color_key or word, "#57606a")
    return f'<span style="color:{color};font-weight:600">{escape(word)}</span>'


def _table(title: str, rows: Iterable[tuple[str, str]], extra: str = "") -> str:
    out = [_TABLE, "<tr>", _TH.format(span=2, text=escape(title)), "</tr>"]
    for key, val in rows:
        out.append(f"<tr>{_TD.format(align='left', text=escape(key))}{_TD.format(align='left', text=val)}</tr>")
    out.append("</table>")
    return "".join(out) + extra


def _resources_table(resources: Mapping[str, Any], bounds: Mapping[str, Any], keys: Iterable[str] | None = None) -> str:
    """Resource | value | stated bound | status, bounded keys first, at most MAX_ROWS rows."""
    order = list(dict.fromkeys([*(k for k in bounds), *(keys if keys is not None else resources)]))
    rows = []
    for key in order[:MAX_ROWS]:
        val = resources.get(key)
        if key in bounds:
            over = val is None or val > bounds[key]
            status = _badge("over" if over else "✓", "over" if over else "ok")
            bound = "≤ " + _esc(bounds[key])
        else:
            status, bound = "", ""
        cells = [_TD.format(align="left", text=escape(key)), _TD.format(align="right", text="—" if val is None else _esc(val)),
                 _TD.format(align="left", text=bound), _TD.format(align="left", text=status)]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = len(order) - MAX_ROWS
    if more > 0:
        rows.append(f'<tr><td colspan="4" style="padding:0.1em 0.6em;color:#57606a">… {more} more</td></tr>')
    head = "".join(_TH.format(span=1, text=t) for t in ("resource", "value", "stated bound", ""))
    return f"{_TABLE}<tr>{head}</tr>{''.join(rows)}</table>"


def _signature(model: Any) -> str:
    n, L, d, nn, dd = model.signature
    return escape(f"(N={value_text(n)}, L={L}, d={value_text(d)}, N'={value_text(nn)}, d'={value_text(dd)})")


class _NoClass:
    """Of which nothing is an instance: the class of a view whose module is not loaded."""


def _expect(value: Any, cls: type, where: str, what: str) -> None:
    """``value`` must be a ``cls`` (the object the view reads); anything else is a
    :class:`~symverify.errors.UsageError` naming ``where``, what was expected and the type found, not an
    ``AttributeError`` from deep inside the view."""
    if not isinstance(value, cls):
        from symverify.errors import UsageError

        raise UsageError(f"{where}: expected {what}, found {type(value).__name__} {value_text(value, 40)}")


def model_html(model: Any) -> str:
    """A :class:`~symverify.kernel.ir.baseconv.Model`: name, signature, modes, parameter counts, symbols.
    Any other argument is a :class:`~symverify.errors.UsageError`."""
    from symverify.errors import LimitError
    from symverify.kernel.ir.baseconv import Model

    _expect(model, Model, "model_html", "a BaseConv Model")

    modes = Counter(layer.mode.value for layer in model.layers)
    try:
        nonzero = value_text(model.nonzero_param_count())
    except LimitError:
        nonzero = "(too many overlapping rectangles to count)"
    params = sorted(model.params())
    rows = [
        ("signature", _signature(model)),
        ("layers", escape(", ".join(f"{v} {k}" for k, v in sorted(modes.items())) or "none")),
        ("parameters", escape(f"{value_text(model.param_count())} dense, {nonzero} nonzero, "
                                   f"{sum(len(g.rects) for layer in model.layers for _, g in layer.grids())} stored rectangles")),
    ]
    if params:
        shown = ", ".join(params[:6]) + (f", … {len(params) - 6} more" if len(params) > 6 else "")
        rows.append(("symbolic weights", escape(shown)))
    return _table(f"BaseConv model {model.name or '<unnamed>'}", rows)


def circuit_html(circuit: Any) -> str:
    """A :class:`~symverify.kernel.ir.circuit.Circuit`: name, input shape, gate counts, outputs.
    Any other argument is a :class:`~symverify.errors.UsageError`."""
    from symverify.kernel.ir.circuit import Circuit

    _expect(circuit, Circuit, "circuit_html", "a Circuit")
    counts = Counter(g.op.value for g in circuit.gates)
    rows = [("circuit", circuit.name or "(unnamed)"), ("input u", f"{circuit.n} × {circuit.d}"),
            ("gates", f"{len(circuit.gates)} (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"),
            ("outputs", str(len(circuit.outputs)))]
    body = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f"<table class='symverify-circuit'>{body}</table>"


MAX_BOUNDARIES = 50
"""The most boundaries :func:`certificate_html` lists before "… k more boundaries"."""


def certificate_html(cert: Any) -> str:
    """A :class:`~symverify.kernel.ir.certificate.Certificate`: one row per boundary (layer, label,
    listed cells), at most :data:`MAX_BOUNDARIES`. Any other argument is a :class:`~symverify.errors.UsageError`."""
    from symverify.kernel.ir.certificate import Certificate

    _expect(cert, Certificate, "certificate_html", "a Certificate")
    rows = "".join(f"<tr><td>{b.layer}</td><td>{escape(b.label)}</td><td>{len(b.cells)}</td></tr>"
                   for b in cert.boundaries[:MAX_BOUNDARIES])
    more = (f"<tr><td colspan='3'>… {len(cert.boundaries) - MAX_BOUNDARIES} more boundaries</td></tr>"
            if len(cert.boundaries) > MAX_BOUNDARIES else "")
    return (f"<table class='symverify-certificate'><caption>{escape(repr(cert))}</caption>"
            f"<tr><th>layer</th><th>label</th><th>cells</th></tr>{rows}{more}</table>")


def compiled_html(compiled: Any) -> str:
    """A :class:`~symverify.compiler.result.Compiled`: method, signature, certificate, and every
    stated bound next to the resource it bounds. Any other argument is a :class:`~symverify.errors.UsageError`."""
    import sys

    # Read from the loaded module, not imported: the view sits below the compiler for the kernel's lazy
    # display edge (a Compiled exists only once symverify.compiler.result is loaded).
    compiled_cls = getattr(sys.modules.get("symverify.compiler.result"), "Compiled", _NoClass)
    _expect(compiled, compiled_cls, "compiled_html", "a Compiled (from symverify.compile)")
    over = compiled.over_bound()
    cert = compiled.certificate
    rows = [
        ("model", escape(compiled.model.name or "<unnamed>") + " " + _signature(compiled.model)),
        ("certificate", "none" if cert is None else escape(f"{cert.num_stages} stages")),
        ("bounds", _badge("over bound: " + ", ".join(over), "over") if over
         else _badge(f"within all {len(compiled.bounds)} stated bounds", "ok")),
    ]
    main = [k for k in ("layers", "inner_n", "inner_d", "params", "nonzero_params", "depth", "width", "size")
            if k in compiled.resources]
    return _table(f"{compiled.method} compilation", rows, _resources_table(compiled.resources, compiled.bounds, main))


def report_html(report: Any) -> str:
    """A :class:`~symverify.kernel.verification.Report`: verdict, method, time, the summary lines of
    ``str(report)`` and the counterexample, if any (longer than :data:`_CEX_WIDTH` characters: the
    differing entry with both values, then, in a row of its own, the input and weights it was found
    at, so a long input never hides the entry). Any other argument is a :class:`~symverify.errors.UsageError`."""
    from symverify.kernel.verification import Report

    _expect(report, Report, "report_html", "a Report (from symverify.verify)")
    verdict = getattr(report.verdict, "value", str(report.verdict))
    total = report.timings.get("total") if isinstance(report.timings, Mapping) else None
    head = f"{_badge(verdict.upper(), verdict)} by {escape(str(report.method))}"
    if isinstance(total, (int, float)):
        head += escape(f" [{total:.3g} s]")
    rows = [("verdict", head)]
    cex = getattr(report, "counterexample", None)
    lines = [ln.strip() for ln in str(report).splitlines()[1:] if ln.strip()]
    if cex is not None:  # shown in its own row
        lines = [ln for ln in lines if not ln.startswith("counterexample ")]
    for ln in lines[:8]:
        key, sep, rest = ln.partition(": ")
        if sep and key in ("note", "first failing stage"):
            rows.append((key, _esc(rest, 300)))
        else:
            rows.append(("evidence", _esc(ln, 300)))
    if len(lines) > 8:
        rows.append(("", escape(f"… {len(lines) - 8} more lines (str(report))")))
    if cex is not None:
        text = str(cex)
        where, sep, entry = text.rpartition(": entry ")
        if len(text) <= _CEX_WIDTH or not sep:
            rows.append(("counterexample", _esc(text, _CEX_WIDTH)))
        else:  # the differing entry first: a long input or many weights must not push it out of view
            rows.append(("counterexample", _esc(f"entry {entry}", _CEX_WIDTH)))
            rows.append(("at", _esc(where, _CEX_WIDTH)))
    for side in ("lhs", "rhs"):
        info = getattr(report, side, None)
        if isinstance(info, Mapping) and info:
            rows.append((side, _esc(", ".join(f"{k}={value_text(v, 30)}" for k, v in list(info.items())[:8]), 200)))
    return _table("symverify report", rows)


_CEX_WIDTH = 400
"""The most characters of a counterexample one row of :func:`report_html` shows."""


def factorization_html(fact: Any) -> str:
    """A :class:`~symverify.kernel.kaleidoscope.factorization.Factorization`: theorem, shape, whether it
    is garbage-free, and the resources against the cited result's bounds. Any other argument is a
    :class:`~symverify.errors.UsageError`."""
    from symverify.kernel.kaleidoscope.factorization import Factorization

    _expect(fact, Factorization, "factorization_html", "a Factorization (from symverify.kaleidoscope)")
    k = fact.kaleidoscope
    over = fact.over_bound()
    rows = [
        ("kaleidoscope", escape(f"(BB*)^{k.width} of size N={k.size}, n={k.n}, "
                                     f"{sum(len(g.factors) for g in k.groups)} butterfly factors")),
        ("garbage-free", "yes" if fact.garbage_free else "no"),
        ("bounds", _badge("over bound: " + ", ".join(over), "over") if over
         else _badge(f"within all {len(fact.bounds)} stated bounds", "ok")),
    ]
    return _table(f"Factorization: {value_text(fact.theorem, 100)}", rows, _resources_table(fact.resources, fact.bounds))
