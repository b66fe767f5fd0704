"""``verify(numeric=...)``: a float cross-check that compared nothing (every side skipped) says
``not run``, never ``passed`` (``str``, ``to_json``, the HTML report, the command line), and each
message names the float format the check used."""

from __future__ import annotations

import json

import pytest

import symverify as sv
from symverify.cli import main
from symverify.ir.serialize import dump_file
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.outcome import NumericSide, NumericSummary

pytest.importorskip("torch")

HUGE = Circuit(1, 1, (Gate.scale(0, 10**400),), (1,))  # a weight beyond float64: neither side runs


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_a_check_with_every_side_skipped_is_not_run_and_names_its_dtype(dtype):
    rep = sv.verify(HUGE, HUGE, method="exact", numeric=dtype)
    num = rep.numeric
    assert rep.proved and num is not None and num.sides == () and len(num.skipped) == 2
    assert num.status == "not run" and num.passed is None and not num.ran
    assert num.max_abs_err is None and num.bound is None
    text = str(num)
    assert f"numeric cross-check ({dtype}, 2 points; not a proof): not run (every side skipped, nothing compared)" in text
    assert "passed" not in text
    assert all(f"does not fit in {dtype}" in why for why in num.skipped)
    if dtype != "float64":
        assert all("nor in float64" in why for why in num.skipped)
    data = rep.to_json()["numeric"]
    assert data["status"] == "not run" and data["passed"] is None
    assert data["max_abs_err"] is None and data["bound"] is None
    assert not any("exceeded its own error bound" in n for n in rep.notes)  # not run is no executor bug


def test_the_html_report_shows_not_run():
    html = sv.verify(HUGE, HUGE, method="exact", numeric=True)._repr_html_()
    assert "not run (every side skipped, nothing compared)" in html and ": passed" not in html


def test_the_command_line_shows_not_run(tmp_path, capsys):
    a = tmp_path / "a.json"
    dump_file(HUGE, a)
    assert main(["verify", str(a), str(a), "--method", "exact", "--numeric", "float32"]) == 0
    out = capsys.readouterr().out
    assert "numeric cross-check (float32, 2 points; not a proof): not run" in out and ": passed" not in out
    assert main(["verify", str(a), str(a), "--method", "exact", "--numeric", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["numeric"]
    assert data["status"] == "not run" and data["passed"] is None


def _side(name: str, ok: bool) -> NumericSide:
    return NumericSide(name, "circuit", "auto", "cpu", 0.5 if not ok else 0.0, 0.1, 0.25, ok)


def test_the_status_of_compared_sides():
    both = NumericSummary("float64", 2, (_side("lhs", True), _side("rhs", True)))
    assert both.status == "passed" and both.passed is True and str(both).endswith(
        "not a proof): passed: lhs circuit max abs error 0 ≤ bound 0.25; rhs circuit max abs error 0 ≤ bound 0.25")
    one = NumericSummary("float64", 2, (_side("rhs", True),), ("lhs kaleidoscope: no float executor",))
    assert one.status == "passed" and one.passed is True and "passed on rhs only:" in str(one)
    assert "lhs kaleidoscope: no float executor (skipped)" in str(one)
    bad = NumericSummary("float32", 2, (_side("lhs", False),), ("rhs circuit: why",))
    assert bad.status == "failed" and bad.passed is False and "FAILED (executor error above its bound)" in str(bad)
    assert bad.to_json()["max_abs_err"] == 0.5 and bad.to_json()["bound"] == 0.25
    none = NumericSummary("float64", 2, ())
    assert none.status == "not run" and none.passed is None and str(none).endswith("nothing compared)")
