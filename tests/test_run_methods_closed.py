"""A proof run's readers (``--golden``, ``symverify report``) take an instance's ``method`` only as
words of the closed set ``METHOD_TOKENS`` joined by ``+``, what every run writes: ``"trust me"`` or
``"randomised"`` (a randomized proof renamed, its ``failure_bound`` then not asked for) was read and
shown as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.cli import main
from symverify.errors import SerializationError
from symverify.scripts.protocol import METHOD_TOKENS
from symverify.viz.run_format import check_run


def _run(method: str) -> dict:
    inst = {"name": "c", "verdict": "proved", "method": method, "resources": {}, "bounds": {}, "detail": "",
            "kind": "computed", "basis": "a comparison", "checks": None, "over_bound": [], "ok": True}
    counts = {"proved": 1, "refuted": 0, "unknown": 0, "argued": 0}
    result = {"name": "s", "title": "t", "ok": True, "counts": counts, "instances": [inst]}
    script = {"name": "s", "title": "t", "source": "d", "status": "ok", "ok": True, "counts": counts,
              "over_bound": [], "error": "", "result": result}
    return {"format": "symverify.proof-run", "version": 4, "quick": False, "ok": True, "interrupted": False,
            "scripts": [script]}


@pytest.mark.parametrize("method", ["trust me", "randomised", "exact+", "randomized (pre-check)", "Exact"])
def test_a_method_outside_the_closed_set_is_refused(method):
    with pytest.raises(SerializationError, match=r"run\.json\.scripts\[0\]\.result\.instances\[0\]\.method: expected "
                                                 r"words from auto, .* joined by '\+' \(what a run writes\), found"):
        check_run(_run(method), "run.json")


def test_report_refuses_it_naming_the_file(tmp_path: Path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_run("randomised")), encoding="utf-8")
    assert main(["report", str(path), "-o", str(tmp_path / "page.html")]) == 3
    assert "instances[0].method: expected words from" in capsys.readouterr().err
    assert not (tmp_path / "page.html").exists()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(sorted(METHOD_TOKENS - {"randomized"})), min_size=1, max_size=3))
def test_words_of_the_set_joined_by_plus_are_read(words):
    check_run(_run("+".join(words)), "run.json")
