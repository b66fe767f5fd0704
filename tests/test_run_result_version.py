"""The file a proof script's process writes for the runner (``script_main --json OUT``) says its
``format`` and ``version``, as a run file does: the runner refuses one without them or of another
version (the row is ``crashed``, naming the field), ``symverify report`` refuses an unknown one."""

from __future__ import annotations

import json
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from symverify.errors import SerializationError
from symverify.scripts.protocol import Instance, ProofResult, each, script_main
from symverify.scripts.tasks import Task, execute
from symverify.viz.resources import load_run
from symverify.viz.run_format import RESULT_FORMAT, RESULT_VERSION

INSTANCE = {"name": "x", "verdict": "proved", "kind": "computed", "method": "exact", "basis": "b", "resources": {},
            "bounds": {}, "over_bound": [], "ok": True, "seconds": 0}


def _run(quick: bool = False) -> ProofResult:
    made = [Instance.computed(f"case {k}", True, "a comparison", "exact") for k in each(range(3))]
    return ProofResult("versioned", "Versioned", made)


def _written(*argv: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        assert script_main(_run, ["--json", str(out), *argv]) == 0
        return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("argv", [(), ("--shard", "1/2"), ("--cases", "0,2"), ("--count-cases",)])
def test_script_main_writes_the_format_and_version(argv: tuple[str, ...]) -> None:
    data = _written(*argv)
    assert (data["format"], data["version"]) == (RESULT_FORMAT, RESULT_VERSION) == ("symverify.proof-result", 2)


def _task(tmp_path: Path, text: str, **kw: Any) -> Task:
    path = tmp_path / "s.py"
    path.write_text(textwrap.dedent(f"""
        import sys
        TITLE = "writes its own result file"
        open(sys.argv[sys.argv.index("--json") + 1], "w").write({text!r})
        """), encoding="utf-8")
    return Task("s", source=str(tmp_path), path=str(path), **kw)


def _result(**head: Any) -> str:
    return json.dumps({**head, "name": "s", "title": "t", "ok": True, "instances": [INSTANCE]})


@pytest.mark.parametrize(("head", "error"), [
    ({}, "result JSON: format: expected 'symverify.proof-result' (a result written by script_main of this symverify), "
         "found nothing"),
    ({"version": 1}, "result JSON: format: expected 'symverify.proof-result'"),
    ({"format": "symverify.proof-run", "version": 1}, "result JSON: format: expected 'symverify.proof-result' (a result "
                                                     "written by script_main of this symverify), found 'symverify.proof-run'"),
    ({"format": RESULT_FORMAT}, "result JSON: version: expected 1 or 2, found nothing"),
    ({"format": RESULT_FORMAT, "version": 3}, "result JSON: version: expected 1 or 2, found 3 (a result of a newer symverify?)"),
    ({"format": RESULT_FORMAT, "version": 0}, "result JSON: version: expected 1 or 2, found 0"),
    ({"format": RESULT_FORMAT, "version": True}, "result JSON: version: expected 1 or 2, found True"),
    ({"format": RESULT_FORMAT, "version": "1"}, "result JSON: version: expected 1 or 2, found '1'"),
    ({"format": RESULT_FORMAT, "version": 1.0}, "result JSON: version: expected 1 or 2, found 1.0"),
])
def test_the_runner_refuses_a_result_without_its_format_and_version(tmp_path: Path, head: dict[str, Any], error: str) -> None:
    answer = execute(_task(tmp_path, _result(**head)))
    assert answer["status"] == "crashed" and answer["result"] is None
    assert answer["error"].startswith(error), answer["error"]


def test_the_runner_reads_a_result_of_its_format_and_version(tmp_path: Path) -> None:
    answer = execute(_task(tmp_path, _result(format=RESULT_FORMAT, version=RESULT_VERSION)))
    assert answer["status"] == "done", answer["error"]
    assert "format" not in answer["result"] and "version" not in answer["result"]  # the run JSON's result has neither
    count = execute(_task(tmp_path, json.dumps({"cases": 3}), count=True))
    assert count["status"] == "crashed" and "format: expected 'symverify.proof-result'" in count["error"]


@pytest.mark.parametrize(("cases", "found"), [(None, "nothing"), (True, "true"), ("2", '"2"'), (-1, "-1")])
def test_a_part_says_how_many_cases_it_met(tmp_path: Path, cases: Any, found: str) -> None:
    """A part of a script (``--cases``, ``--shard``) whose result left ``cases`` out, or wrote it as
    text or a bool, was merged without the runner comparing the cases the parts met."""
    head = {"format": RESULT_FORMAT, "version": RESULT_VERSION, **({} if cases is None else {"cases": cases})}
    for kw in ({"cases": (0, 2)}, {"shard": (1, 2)}):
        answer = execute(_task(tmp_path, _result(**head), **kw))
        assert answer["status"] == "crashed"
        assert answer["error"] == ("result JSON: cases: expected the number of cases this part met (an int ≥ 0), "
                                   f"found {found}")


def _report(tmp_path: Path, data: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_run(path)


def test_report_reads_a_result_file_of_its_version_and_one_written_before_the_field(tmp_path: Path) -> None:
    for data in (_written(), _written("--cases", "0,1"),
                 {k: v for k, v in _written().items() if k not in ("format", "version")}):
        run = _report(tmp_path, data)
        result = run["scripts"][0]["result"]
        assert run["ok"] and "format" not in result and "version" not in result and len(result["instances"]) >= 2


@pytest.mark.parametrize(("head", "match"), [
    ({"format": RESULT_FORMAT, "version": 3}, r"result\.json\.version: expected 1 or 2, found 3 \(a result of a newer symverify\?\)"),
    ({"format": RESULT_FORMAT}, r"result\.json\.version: expected 1 or 2, found nothing"),
    ({"version": 1}, r"result\.json\.format: expected 'symverify\.proof-result' .*, found nothing"),
    ({"format": "symverify.proof-run", "version": 1}, r"result\.json\.format: expected 'symverify\.proof-result'"),
])
def test_report_refuses_a_result_file_of_another_format_or_version(tmp_path: Path, head: dict[str, Any], match: str) -> None:
    data = {**_written(), **head}
    if "format" not in head:
        del data["format"]
    if "version" not in head:
        del data["version"]
    with pytest.raises(SerializationError, match=match):
        _report(tmp_path, data)
