"""One self-contained HTML page for a proof run (``symverify prove --json RUN.json``).

:func:`write_report` writes, with no external file, script, stylesheet or font:

* a summary (all ok or not; scripts; instances by verdict; tier; time; for one part of a script's
  run, read from its result file, that only that part ran: :func:`~symverify.viz.run_format.part_title`);
* the resource plots of :func:`symverify.viz.resources.plot_resources`, embedded as a PNG
  ``data:`` URI (or a note saying why there is none: matplotlib missing, nothing to plot);
* a table of every script (status, verdict counts, tightest resource against its bound, time,
  the last line of a crashed script's error);
* *Failures*: an interrupted run, every instance that is not ok and every script that is not ok (its
  error whole, a traceback's last line included), with the
  over-bound resources, the detail text and the counterexample when the instance carries one
  (a ``counterexample`` field, as :meth:`Counterexample.to_json` writes it, or text);
* one table per script listing every instance: verdict (with a randomized proof's error bound;
  ``argued`` for an argued claim, whose verdict the tool does not decide), the claim's kind and
  basis (``prover``, ``computed: …``, ``argued: …; checks held``), method, resources against bounds,
  time, detail. An instance's name, claim and detail (a ∀ row's ranges and hypotheses) are part of
  what is claimed and shown whole, never cut; one longer than :data:`SHOWN_AT_ONCE` characters is
  folded in a ``<details>`` element.

Every instance row is ``<tr class="instance" data-script="NAME" data-instance="NAME"
data-verdict="VERDICT" data-kind="KIND">``, so the page can be checked by a parser. All text is escaped, control characters written as their escapes
(``\\x00``, :func:`symverify.viz.html.visible`); each script's section has an id unique on the page.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from symverify._version import __version__
from symverify.errors import BackendUnavailableError, UsageError
from symverify.viz.html import escape, value_text
from symverify.viz.resources import load_run
from symverify.viz.run_format import PART_NOTE, count_claims, exceeded_bounds, instance_ok, run_ok, run_value, script_ok

__all__ = ["write_report", "report_page"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1400px;
       color: #1f2328; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.0em; margin-top: 1.4em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0; }
th, td { padding: 0.2em 0.6em; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.proved, .ok { color: #1a7f37; font-weight: 600; } .refuted, .failed, .crashed, .timeout, .over { color: #cf222e; font-weight: 600; }
.unknown { color: #9a6700; font-weight: 600; } .argued { color: #57606a; font-weight: 600; }
.res { font-family: ui-monospace, monospace; font-size: 0.95em; }
.detail { color: #57606a; max-width: 40em; }
pre { background: #f6f8fa; padding: 0.5em; white-space: pre-wrap; font-size: 0.85em; }
img { max-width: 100%; border: 1px solid #eaeef2; }
.failure { border-left: 3px solid #cf222e; padding-left: 0.8em; margin: 0.8em 0; }
"""


def _e(v: Any, limit: int = 200) -> str:
    return escape(value_text(v, limit))


SHOWN_AT_ONCE = 400
"""The most characters of a claim's text (an instance's name, claim, detail) a row shows at once: a
longer one is shown whole all the same, in a ``<details>`` element whose ``<summary>`` is its first
:data:`SHOWN_AT_ONCE` characters (:func:`_whole`)."""


def _whole(v: Any) -> str:
    """``v``'s text whole, escaped: an instance's name (``∀ NAME: RANGES``), claim and detail (a ∀
    row's hypotheses, ``given input nonzero only where …``) are part of what is claimed, so none is
    ever cut. A text longer than :data:`SHOWN_AT_ONCE` characters is folded: ``<details>`` with its
    first characters and its length as the ``<summary>``, and all of it inside."""
    text = str(v)
    if len(text) <= SHOWN_AT_ONCE:
        return escape(text)
    return (f'<details class="long"><summary>{escape(text[:SHOWN_AT_ONCE])}… ({len(text)} characters: all of them '
            f"below)</summary>{escape(text)}</details>")


def _cls(word: str) -> str:
    return "".join(c for c in word if c.isalnum() or c in "-_") or "unknown"


def _anchor(k: int, name: str) -> str:
    """The id of the ``k``-th script's section: its position makes it unique (names that differ only
    in characters an id leaves out, ``a<b`` and ``ab``, would share one), its name makes it readable."""
    return f"script-{k}-{_cls(name)}"


def _number(v: Any, limit: int = 40) -> str:
    """A resource or bound as the run writes it: a float by its shortest exact text (``repr``:
    ``2.0000001``, never ``2`` beside a bound ``2`` it exceeds), anything else by :func:`value_text`
    (a huge int by its size)."""
    return repr(v) if isinstance(v, float) else value_text(v, limit)


def _resources_cell(inst: Mapping[str, Any]) -> str:
    """Each resource with its bound, ``value≤bound``; the ones over it (as :func:`exceeded_bounds`
    derives them, a run may leave ``over_bound`` out) written ``value>bound`` and marked ``over``
    (the text says it, not the colour alone)."""
    res: Mapping[str, Any] = inst["resources"] if isinstance(inst.get("resources"), Mapping) else {}
    bounds: Mapping[str, Any] = inst["bounds"] if isinstance(inst.get("bounds"), Mapping) else {}
    over = set(inst.get("over_bound") or []) | set(exceeded_bounds(inst, str(inst.get("name", ""))))
    parts = []
    for key in dict.fromkeys([*res, *bounds]):
        val = res.get(key, "—")
        text = f"{value_text(key, 40)}={_number(val)}"
        if key in bounds:
            text += f"{'>' if key in over else '≤'}{_number(bounds[key])}"
        part = escape(text)
        parts.append(f'<span class="over">{part}</span>' if key in over else part)
    return ", ".join(parts)


def _error_line(error: Any, limit: int = 500) -> str:
    """A script's error for a table cell: its last nonempty line (where a traceback states the
    exception), saying how many lines the whole error has (the *Failures* section shows it whole)."""
    lines = [ln for ln in str(error).splitlines() if ln.strip()]
    if len(lines) <= 1:
        return _e(error, limit)
    return _e(f"{lines[-1].strip()} (the last of {len(lines)} lines: the whole error is under Failures)", limit)


def _error_block(error: Any) -> str:
    """A script's error whole, as preformatted text (a traceback keeps its lines and its last one,
    the exception)."""
    return f'<pre class="error">{escape(str(error))}</pre>'


def _counterexample(inst: Mapping[str, Any]) -> str:
    cex = inst.get("counterexample")
    if cex is None:
        return ""
    if isinstance(cex, str):
        body = cex
    else:
        try:
            body = json.dumps(cex, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            body = str(cex)
    if len(body) > 20000:
        body = body[:20000] + "\n… (cut)"
    return f"<p>counterexample:</p><pre class=\"counterexample\">{escape(body)}</pre>"


def _tightest(instances: list[Mapping[str, Any]]) -> str:
    """The resource nearest its bound, or furthest past it, among ``instances``: a bound without a
    value first, then the resources over their bound, then the largest ``value / bound``, compared
    exactly (:func:`~symverify.viz.run_format.run_value`: an int of 400 digits and a rational
    ``"1/3"`` are read as they are, never as floats that overflow to ``inf / inf``)."""
    best: tuple[tuple[int, Fraction], str] | None = None
    for inst in instances:
        res = inst["resources"] if isinstance(inst.get("resources"), Mapping) else {}
        bounds = inst["bounds"] if isinstance(inst.get("bounds"), Mapping) else {}
        for key, raw in bounds.items():
            b = run_value(raw, f"bounds.{key}")  # the run was checked: exact numbers
            if key not in res:
                rank: tuple[int, Fraction] = (2, Fraction(0))
            else:
                v = run_value(res[key], f"resources.{key}")
                rank = (1 if v > b else 0, v / b if b > 0 else Fraction(0))
            if best is None or rank > best[0]:
                shown = _number(res[key], 30) if key in res else "—"
                best = (rank, f"{key}={shown}{'>' if rank[0] == 1 else '≤'}{_number(raw, 30)}")
    return "" if best is None else best[1]


def _plots(run: Mapping[str, Any]) -> str:
    try:
        from symverify.viz._figure import png_bytes
        from symverify.viz.resources import plot_resources

        fig = plot_resources(run)
    except BackendUnavailableError as e:
        return f'<p class="note">No resource plots: {escape(str(e))}.</p>'
    except UsageError as e:
        return f'<p class="note">No resource plots: {escape(str(e))}.</p>'
    data = base64.b64encode(png_bytes(fig, dpi=90)).decode("ascii")
    return (f'<img class="plot" alt="measured resources against stated bounds" src="data:image/png;base64,{data}">'
            "<p class=\"detail\">One point per instance that reports the resource; the dashed lines are the stated "
            "bounds (at each x the largest an instance states); a black edge marks an instance that is not ok.</p>")


def _instances(script: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    result = script.get("result")
    if not isinstance(result, Mapping):
        return []
    return [i for i in result.get("instances", []) if isinstance(i, Mapping)]


def _error_bound(inst: Mapping[str, Any]) -> str:
    """A randomized proof's error bound as the table shows it (`` (ε ≤ 2^-100.0)``, rounded up,
    never understated), or ''."""
    if "failure_bound" not in inst:
        return ""
    from symverify.kernel.provers.randomized import pow2_text
    from symverify.viz.run_format import run_value

    bound = run_value(inst["failure_bound"], "failure_bound")  # the run was checked: an exact rational
    return f" (ε ≤ {pow2_text(bound)})" if bound else ""


def _verdict_text(inst: Mapping[str, Any]) -> tuple[str, str]:
    """The verdict as the page shows it and its CSS class: ``argued`` for an argued claim (its
    verdict is ``unknown``: the tool does not decide it; as :meth:`Instance.verdict_text` shows it),
    else the verdict, with a randomized proof's error bound."""
    if inst.get("kind") == "argued":
        return "argued", "argued"
    verdict = str(inst.get("verdict", "unknown"))
    return verdict + _error_bound(inst), verdict


def _claim(inst: Mapping[str, Any]) -> str:
    """What the verdict rests on, as the text table and ``symverify prove --details`` say it: the
    claim's kind (``prover``; ``computed``, an exact computation in the script; ``argued``, a hand
    proof the tool does not check, with whether its checks on the instances run held) and its
    ``basis``."""
    kind = str(inst.get("kind", "prover"))
    text = kind + (f": {inst['basis']}" if inst.get("basis") else "")
    if kind == "argued":
        checks = inst.get("checks")
        text += "; checks " + ("held" if checks is True else "failed" if checks is False else "not run")
    return text


def _inst_ok(inst: Mapping[str, Any]) -> bool:
    return instance_ok(inst)  # "ok left out is false" (docs/formats.md § Proof run)


def report_page(run: Any, *, title: str = "symverify proof run") -> str:
    """The HTML page for ``run`` (a run dict, one script's result dict, or the path of either as
    JSON; see :func:`symverify.viz.resources.load_run`) as a string.

    Raises:
        SerializationError: the file is missing, not JSON, or not a proof run.
        UsageError: ``run`` is neither a dict nor a path, or ``title`` is not a str.
    """
    if not isinstance(title, str):
        raise UsageError(f"report_page: title: expected a str, found {type(title).__name__} {title!r:.40}")
    data = load_run(run)
    scripts = [s for s in data["scripts"] if isinstance(s, Mapping)]
    all_inst = [(s, i) for s in scripts for i in _instances(s)]
    counts = count_claims([i for _, i in all_inst])
    failing = [i for _, i in all_inst if not _inst_ok(i)]
    ok = run_ok(data) and not failing  # as check_run read the file: a summary left out is derived, never assumed
    status = "ok" if ok else "failed"
    tier = "quick tier" if data.get("quick") else "full tier" if "quick" in data else ""
    # one part of a script's run (--shard, --cases), read from its result file: said in the summary too
    parts = [str(s.get("name")) for s in scripts if str(s.get("title", "")).startswith(f"[{PART_NOTE}")]
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p id="summary">Result: <span class="{status}">{"all ok" if ok else "FAILED"}</span> — '
        f"{len(scripts)} scripts, {len(all_inst)} instances "
        f"(<span class=\"proved\">{counts.get('proved', 0)} proved</span>, "
        f"<span class=\"refuted\">{counts.get('refuted', 0)} refuted</span>, "
        f"<span class=\"unknown\">{counts.get('unknown', 0)} unknown</span>, {counts.get('argued', 0)} argued)"
        + (f", {escape(tier)}" if tier else "")
        + (f", <span class=\"part\">only a part of the run of {escape(', '.join(parts))} (--shard or --cases): "
           "its other cases did not run</span>" if parts else "")
        + (f", {_e(data.get('seconds'))} s" if isinstance(data.get("seconds"), (int, float)) else "")
        + f". symverify {escape(__version__)}"
        + ".</p>",
        "<h2>Resources against stated bounds</h2>",
        _plots(data),
        "<h2>Scripts</h2>",
        '<table id="scripts"><tr><th>script</th><th>result</th><th>status</th><th>instances</th>'
        "<th>proved / refuted / unknown</th><th>tightest resource vs bound</th><th>time</th><th>error</th></tr>",
    ]
    for k, s in enumerate(scripts):
        insts = _instances(s)
        c = count_claims(insts)
        st = str(s.get("status", "ok" if s.get("ok") else "failed"))
        if st == "ok" and not all(_inst_ok(i) for i in insts):
            st = "failed"  # the page never calls a script ok that lists a failing instance
        name = str(s.get("name", "?"))
        secs = s.get("seconds")
        out.append(
            f'<tr class="script" data-script="{escape(name)}"><td><a href="#{_anchor(k, name)}">{escape(name)}</a></td>'
            f"<td>{_e(s.get('title', ''), 120)}</td><td class=\"{_cls(st)}\">{escape(st)}</td>"
            f"<td class=\"num\">{len(insts)}</td><td class=\"num\">{c.get('proved', 0)} / {c.get('refuted', 0)} / "
            f"{c.get('unknown', 0)}</td><td class=\"res\">{escape(_tightest(insts))}</td>"
            f"<td class=\"num\">{'' if not isinstance(secs, (int, float)) else f'{secs:.1f} s'}</td>"
            f"<td class=\"detail\">{_error_line(s.get('error', ''))}</td></tr>"
        )
    out.append("</table>")
    failures = []
    if data.get("interrupted") is True:
        failures.append('<div class="failure"><b>the run was interrupted</b>: scripts that had not finished are '
                        "<span class=\"interrupted\">interrupted</span></div>")
    for s in scripts:
        name = str(s.get("name", "?"))
        st = str(s.get("status", ""))
        if st == "crashed" or (st not in ("ok", "") and not _instances(s)):
            failures.append(f'<div class="failure" data-script="{escape(name)}"><b>{escape(name)}</b>: '
                            f'<span class="{_cls(st)}">{escape(st)}</span> — '
                            + (_error_block(s["error"]) if s.get("error") else "no result") + "</div>")
        elif not script_ok(s) and all(_inst_ok(i) for i in _instances(s)):  # the page says why it is not all ok
            shown = st or ("not ok" if "ok" in s else "neither status nor ok")
            failures.append(f'<div class="failure" data-script="{escape(name)}"><b>{escape(name)}</b>: '
                            f'<span class="failed">{escape(shown)}</span> — '
                            + (_error_block(s["error"]) if s.get("error")
                               else "the script is not ok, though no instance listed fails") + "</div>")
        for inst in _instances(s):
            if _inst_ok(inst):
                continue
            verdict = str(inst.get("verdict", "unknown"))
            shown, css = _verdict_text(inst)
            over = exceeded_bounds(inst, f"{name}: {inst.get('name', '')}")  # derived: a run may leave over_bound out
            failures.append(
                f'<div class="failure" data-script="{escape(name)}" data-instance="{escape(str(inst.get("name", "")))}">'
                f"<b>{escape(name)}</b> · {_whole(inst.get('name', ''))}: <span class=\"{_cls(css)}\">{escape(shown)}</span>"
                f" ({_whole(_claim(inst))})"
                + (f' — <span class="over">over bound: {_e(", ".join(map(str, over)))}</span>' if over else "")
                + (" — not ok, though proved within its bounds: the run says ok: "
                   f"{_e(json.dumps(inst['ok']) if 'ok' in inst else 'nothing')} (an inconsistent run)"
                   if not over and verdict == "proved" and inst.get("kind", "prover") != "argued" else "")
                + f"<p class=\"res\">{_resources_cell(inst)}</p>"
                + (f"<div class=\"detail\">{_whole(inst.get('detail', ''))}</div>" if inst.get("detail") else "")
                + _counterexample(inst) + "</div>"
            )
    out.append(f'<h2 id="failures">Failures ({len(failures)})</h2>')
    out.append("".join(failures) if failures else "<p>None: every instance of every script is proved within its bounds.</p>")
    out.append("<h2>Instances</h2>")
    for k, s in enumerate(scripts):
        name = str(s.get("name", "?"))
        insts = _instances(s)
        out.append(f'<h3 id="{_anchor(k, name)}">{escape(name)}: {_e(s.get("title", ""), 300)}</h3>')
        if not insts:
            out.append(f"<p>No instances ({_error_line(s.get('error', '')) if s.get('error') else _e(s.get('status', ''))}).</p>")
            continue
        out.append("<table><tr><th>instance</th><th>verdict</th><th>claim</th><th>method</th>"
                   "<th>resources (≤ stated bound)</th><th>time</th><th>detail</th></tr>")
        for inst in insts:
            verdict = str(inst.get("verdict", "unknown"))
            shown, css = _verdict_text(inst)
            secs = inst.get("seconds")
            mark = "" if _inst_ok(inst) else ' <span class="over">✗</span>'
            out.append(
                f'<tr class="instance" data-script="{escape(name)}" data-instance="{escape(str(inst.get("name", "")))}" '
                f'data-verdict="{escape(verdict)}" data-kind="{escape(str(inst.get("kind", "prover")))}">'
                f'<td>{_whole(inst.get("name", ""))}</td><td class="{_cls(css)}">{escape(shown)}{mark}</td>'
                f'<td class="claim">{_whole(_claim(inst))}</td><td>{_e(inst.get("method", ""))}</td>'
                f'<td class="res">{_resources_cell(inst)}</td>'
                f"<td class=\"num\">{'' if not isinstance(secs, (int, float)) else f'{secs:.2f} s'}</td>"
                f"<td class=\"detail\">{_whole(inst.get('detail', ''))}</td></tr>"
            )
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)


def write_report(run: Any, out_path: str | Path) -> Path:
    """Write :func:`report_page` of ``run`` to ``out_path`` (UTF-8) and return the path.

    Raises:
        SerializationError: the run cannot be read (see :func:`report_page`).
        UsageError: ``run`` is neither a dict nor a path, ``out_path`` is no path, or the page
            cannot be written (the message names the path).
    """
    if not isinstance(out_path, (str, Path)) or not str(out_path):
        raise UsageError(f"write_report: out_path must be a file path (a non-empty str or Path), found {out_path!r:.60}")
    page = report_page(run)
    path = Path(out_path)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot write the report: {e.strerror or e}") from None
    return path
