"""A refuted row with ``"counterexample": null``: no version of the run or result format ever wrote
it (a refutation without a counterexample, a fragment proof's or a computed claim's, leaves the field
out), yet every reader took it, so a forged run showed a refutation whose counterexample field was
there and empty. It is refused, naming the file, the row and the field; a refuted row without the
field still reads, in every version, and is shown without a counterexample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from symverify.cli import main
from symverify.errors import SerializationError
from symverify.scripts.runner import RunSummary, Script, load_run, merge
from symverify.viz.report import report_page

SCRIPT = Script("s", Path("s.py"), "builtin", "T")


def _refuted(**kw: Any) -> dict[str, Any]:
    return {"name": "x", "verdict": "refuted", "method": "exact", "resources": {}, "bounds": {}, "detail": "",
            "kind": "prover", "basis": "", "checks": None, "over_bound": [], "ok": False,
            "digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}], **kw}


def _run_file(tmp_path: Path, version: int, **kw: Any) -> Path:
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "",
                          "result": {"name": "s", "title": "T", "ok": False, "instances": [_refuted()]}}])
    data = RunSummary(True, (row,)).to_json(False)
    data["version"] = version
    inst = data["scripts"][0]["result"]["instances"][0]
    inst.update(kw)
    if version == 2:
        del inst["digests"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_scripts_json_with_a_null_counterexample_makes_its_row_crashed():
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "",
                          "result": {"name": "s", "title": "T", "ok": False, "instances": [_refuted(counterexample=None)]}}])
    assert row.status == "crashed" and row.result is None
    assert "instances[0].counterexample: expected the refutation's re-checked counterexample (a JSON value), found null" in row.error


@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_run_file_with_a_null_counterexample_is_refused_naming_file_row_and_field(tmp_path, capsys, version):
    path = _run_file(tmp_path, version, counterexample=None)
    with pytest.raises(SerializationError, match=rf"^{path}\.scripts\[0\]\.result\.instances\[0\]\.counterexample: "
                                                 r"expected the refutation's re-checked counterexample .* found null"):
        load_run(path)
    assert main(["report", str(path), "-o", str(tmp_path / "page.html")]) == 3
    assert "instances[0].counterexample: expected the refutation's re-checked counterexample" in capsys.readouterr().err
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_refuted_row_without_the_field_reads_and_shows_no_counterexample(tmp_path, version):
    run = load_run(_run_file(tmp_path, version))
    assert "counterexample" not in run["scripts"][0]["result"]["instances"][0]
    assert "counterexample:" not in report_page(run)
    with_one = load_run(_run_file(tmp_path, version, counterexample={"cell": [0, 0]}))
    assert "counterexample:" in report_page(with_one)
