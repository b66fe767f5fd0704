"""The readers of a proof run (``symverify report`` and ``plot_resources``:
``viz.resources.load_run``; ``prove --golden``: ``scripts.runner.load_run``) given malformed or
forged files: each is a :class:`SerializationError` naming what is wrong, never a crash, never a
page or a golden comparison that shows a pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import SerializationError
from symverify.scripts.runner import load_run as golden_run
from symverify.viz.resources import load_run as report_run

READERS: list[Callable[[Any], dict[str, Any]]] = [golden_run, report_run]

INSTANCE = {"name": "i", "verdict": "proved", "method": "exact", "resources": {"layers": 1}, "bounds": {"layers": 2},
            "detail": "", "kind": "prover", "basis": "", "checks": None, "over_bound": [], "ok": True}
RANDOMIZED = {**INSTANCE, "method": "exact+randomized", "failure_bound": "1/1024"}


def _run(inst: dict[str, Any] = INSTANCE, version: int = 3) -> str:
    counts = {"proved": 1, "refuted": 0, "unknown": 0, "argued": 0}
    return json.dumps({"format": "symverify.proof-run", "version": version, "quick": True, "ok": True, "interrupted": False,
                       "scripts": [{"name": "s", "title": "", "source": "builtin", "status": "ok", "ok": True, "counts": counts,
                                    "over_bound": [], "error": "",
                                    "result": {"name": "s", "title": "", "ok": True, "counts": counts, "instances": [inst]}}]})


GOOD = _run()
DIGITS = "9" * 5000

FORGED: list[tuple[str, str | bytes, str]] = [
    ("a repeated key", GOOD.replace('"quick": true', '"quick": true, "quick": false'), "duplicate key 'quick'"),
    ("a repeated resource", GOOD.replace('"resources": {"layers": 1}', '"resources": {"layers": 9, "layers": 1}'),
     "duplicate key 'layers'"),
    ("a version as text", GOOD.replace('"version": 3', '"version": "3"'), r"\.version: expected 2, 3 or 4, found '3'"),
    ("a version as a float", GOOD.replace('"version": 3', '"version": 3.0'), r"\.version: expected 2, 3 or 4, found 3\.0"),
    ("a version of true", GOOD.replace('"version": 3', '"version": true'), r"\.version: expected 2, 3 or 4, found True"),
    ("a huge version", GOOD.replace('"version": 3', f'"version": {DIGITS}'), r"version: expected an integer of at most \d+ digits"),
    ("a huge resource", GOOD.replace('"layers": 1}', f'"layers": {DIGITS}}}'), r"resources\.layers: expected an integer of at most \d+ digits"),
    ("a resource of 1e400", GOOD.replace('"layers": 1}', '"layers": 1e400}'), r"1e400 \(it reads as inf\)"),
    ("NaN", GOOD.replace('"layers": 1}', '"layers": NaN}'), "NaN is not a JSON number"),
    ("Infinity", GOOD.replace('"layers": 2}', '"layers": Infinity}'), "Infinity is not a JSON number"),
    ("-Infinity", GOOD.replace('"layers": 1}', '"layers": -Infinity}'), "-Infinity is not a JSON number"),
    ("deep nesting", GOOD[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested 100001 levels deep"),
    ("a byte order mark", "\ufeff" + GOOD, r"byte order mark \(U\+FEFF\)"),
    ("UTF-16", GOOD.encode("utf-16"), "not UTF-8 text"),
    ("a truncated file", GOOD[: len(GOOD) // 2], r"not valid JSON \(truncated\?\)"),
    ("an empty file", "", r"not valid JSON \(truncated\?\)"),
    ("two documents", GOOD + GOOD, "Extra data"),
    ("a lone surrogate", GOOD.replace('"detail": ""', '"detail": "\\ud800"'), "a lone surrogate"),
    ("a list", "[1, 2]", "expected a"),
    ("scripts as an object", json.dumps({**json.loads(GOOD), "scripts": {}}), r"\.scripts: expected a list"),
    ("ok as text", _run({**INSTANCE, "ok": "true"}), r"\.ok: expected true or false, found 'true'"),
    ("a name as a number", _run({**INSTANCE, "name": 3}), r"\.name: expected a string, found 3"),
    ("a resource of true", _run({**INSTANCE, "resources": {"layers": True}}), r"resources\.layers: expected an int"),
    ("ok over its bound", _run({**INSTANCE, "resources": {"layers": 5}}), "layers=5 is over its bound 2"),
    ("ok over its bound, listed", _run({**INSTANCE, "resources": {"layers": 5}, "over_bound": ["layers"]}),
     "'ok' is true, but over_bound lists layers"),
    ("ok with a bound and no value", _run({**INSTANCE, "resources": {}}), r"layers \(no value\) is over its bound 2"),
    ("ok far over its bound", _run({**INSTANCE, "resources": {"layers": "9" * 400}}), "is over its bound 2"),
    ("ok just over its bound", _run({**INSTANCE, "resources": {"layers": 2.0000000000000004}}), "is over its bound 2"),
    ("a version 2 run with failure_bound", _run(RANDOMIZED, version=2),
     r"instances\[0\]\.failure_bound: a field of version 3, found in a run of version 2"),
    ("a version 3 randomized proof without its bound", _run({**INSTANCE, "method": "exact+randomized"}),
     "states its randomized error bound; found none"),
    ("a failure bound of 1", _run({**RANDOMIZED, "failure_bound": "1/1"}), r"error bound in \[0, 1\), found 1/1"),
]


@pytest.mark.parametrize("reader", READERS, ids=["golden", "report"])
@pytest.mark.parametrize(("what", "text", "match"), FORGED, ids=[w for w, _, _ in FORGED])
def test_a_malformed_run_file_is_refused_naming_what_is_wrong(tmp_path: Path, reader: Callable[[Any], Any], what: str,
                                                              text: str | bytes, match: str) -> None:
    path = tmp_path / "run.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(SerializationError, match=match):
        reader(path)


@pytest.mark.parametrize("reader", READERS, ids=["golden", "report"])
def test_the_same_runs_of_their_own_versions_are_read(tmp_path: Path, reader: Callable[[Any], Any]) -> None:
    for text in (GOOD, _run(version=2), _run(RANDOMIZED)):
        path = tmp_path / "run.json"
        path.write_text(text, encoding="utf-8")
        assert reader(path)["scripts"][0]["result"]["instances"][0]["ok"] is True


@pytest.mark.parametrize("reader", READERS, ids=["golden", "report"])
def test_a_version_2_run_read_as_a_dict_refuses_failure_bound_too(reader: Callable[[Any], Any]) -> None:
    if reader is golden_run:
        return  # reads files only
    data = json.loads(_run(RANDOMIZED, version=2))
    with pytest.raises(SerializationError, match="a field of version 3, found in a run of version 2"):
        reader(data)


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(st.integers(-10**6, 10**6), st.fractions(max_denominator=10**4)), bound=st.integers(-10**6, 10**6))
def test_an_ok_instance_is_read_only_within_its_bound(value: Any, bound: int) -> None:
    """``ok: true`` with every ``over_bound`` written as the writer would: read only when the
    resource is within its bound, whatever the file's ``over_bound`` says."""
    from fractions import Fraction

    shown = str(value) if isinstance(value, Fraction) else value
    for over in ([], ["layers"]):
        data = json.loads(_run({**INSTANCE, "resources": {"layers": shown}, "bounds": {"layers": bound}, "over_bound": over}))
        if value <= bound and not over:
            assert report_run(data)["ok"] is True
        else:
            with pytest.raises(SerializationError):
                report_run(data)


@pytest.mark.parametrize("reader", READERS, ids=["golden", "report"])
def test_a_script_row_holding_another_scripts_result_is_refused(tmp_path: Path, reader: Callable[[Any], Any]) -> None:
    """A row ``a`` whose result is named ``b`` (no run writes one: each row's result is its own
    script's) was read, and compared by ``--golden`` as ``a``'s."""
    data = json.loads(GOOD)
    data["scripts"][0]["result"]["name"] = "another"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SerializationError, match=r"scripts\[0\]\.result\.name: expected the script's own name 's', "
                                                 r"found 'another'"):
        reader(path)
