"""The HTML report (``symverify report``) cut an instance's detail at 400 characters in its table
(4000 under Failures) and its name and claim at 300: a ∀ row's hypotheses (``given input nonzero
only where …``, part of what is proved) and ranges (``∀ NAME: RANGES``) were shown in part. Each is
shown whole, escaped; a long one folded in a ``<details>`` element."""

from __future__ import annotations

import html
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.scripts.runner import RunSummary, Script, merge
from symverify.viz.report import report_page

SHOWN_AT_ONCE = 400  # symverify.viz.report.SHOWN_AT_ONCE

SCRIPT = Script("s", Path("s.py"), "builtin", "T")


def _page(name: str, detail: str, verdict: str = "proved") -> str:
    inst = {"name": name, "verdict": verdict, "method": "z3", "resources": {}, "bounds": {}, "detail": detail,
            "kind": "prover", "basis": "", "checks": None, "over_bound": [], "ok": verdict == "proved",
            "digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]}
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "",
                          "result": {"name": "s", "title": "T", "ok": verdict == "proved", "instances": [inst]}}])
    return report_page(RunSummary(True, (row,)).to_json(False))


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_a_long_forall_hypothesis_is_shown_whole_in_the_table_and_under_failures():
    ranges = ", ".join(f"p{k} ∈ [0, {k}]" for k in range(60))
    hypotheses = "given input nonzero only where " + " ∧ ".join(f"i{k} < a{k} <&> q" for k in range(400))
    assert len(hypotheses) > 4000 and len(ranges) > 300
    for verdict in ("proved", "refuted"):
        page = _page(f"∀ g: {ranges}", hypotheses, verdict)
        text = _text(page)
        assert text.count(hypotheses) == (1 if verdict == "proved" else 2)  # the table, and Failures
        assert f"∀ g: {ranges}" in text
        assert "<&>" not in page and "&lt;&amp;&gt;" in page  # escaped
        assert f"… ({len(hypotheses)} characters: all of them below)</summary>" in page


def test_a_short_detail_is_shown_as_it_is():
    page = _page("∀ g: N ∈ [4, 8]", "given input nonzero only where i < a")
    assert "<td class=\"detail\">given input nonzero only where i &lt; a</td>" in page
    assert "<details" not in page


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=SHOWN_AT_ONCE - 5, max_size=SHOWN_AT_ONCE * 3))
def test_every_detail_is_on_the_page_whole(detail):
    page = _page("∀ g: N ∈ [4, 8]", detail)
    from symverify.viz.html import escape

    assert escape(detail) in page
