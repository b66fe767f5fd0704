"""Attacks on proof-run records: the runner's reading of a script's result file, the JUnit writer,
and the readers of a written run (``load_run``, ``golden_diff``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import SerializationError
from symverify.scripts import runner
from symverify.scripts.protocol import Instance, ProofResult
from symverify.scripts.runner import RunSummary, Script, ScriptOutcome, golden_diff, junit_xml, load_run, merge

SCRIPT = Script("s", Path("s.py"), "builtin", "T")


def _inst(**kw: Any) -> dict[str, Any]:
    base = {"name": "x", "verdict": "proved", "method": "exact", "resources": {"layers": 1}, "bounds": {"layers": 1},
            "detail": "", "kind": "prover", "basis": "", "checks": None, "over_bound": [], "ok": True}
    if kw.get("kind", "prover") == "prover":  # a prover's claim names what it is about (run format version 4)
        base["digests"] = [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]
    return {**base, **kw}


def _row(*instances: dict[str, Any]) -> ScriptOutcome:
    return merge(SCRIPT, [{"status": "done", "seconds": 0.1, "error": "",
                           "result": {"name": "s", "title": "T", "ok": True, "instances": list(instances)}}])


@pytest.mark.parametrize("resources, bounds", [
    ({"layers": 5}, {"layers": 1}),          # over its bound, over_bound left empty
    ({}, {"layers": 1}),                     # a bound without a value
    ({"layers": "8/5"}, {"layers": "3/2"}),  # exact rationals
    ({"layers": 1.5}, {"layers": 1}),
])
def test_a_script_cannot_hide_a_resource_over_its_bound(resources, bounds):
    row = _row(_inst(resources=resources, bounds=bounds))
    assert row.status == "crashed" and not row.ok and "over_bound" in row.error
    listed = _row(_inst(resources=resources, bounds=bounds, over_bound=["layers"], ok=True))
    assert listed.status == "failed" and not listed.instances()[0]["ok"]


def test_the_runs_the_runner_writes_are_read_back(tmp_path):
    for row in (_row(_inst(resources={"layers": 5}, over_bound=["layers"])), _row(_inst(resources={"layers": 5}))):
        path = tmp_path / "run.json"
        path.write_text(json.dumps(RunSummary(True, (row,)).to_json()), encoding="utf-8")
        assert load_run(path)["scripts"][0]["ok"] is False


def test_a_bound_that_is_not_a_number_makes_the_row_crashed():
    row = _row(_inst(bounds={"layers": "0x10"}))
    assert row.status == "crashed" and "bounds.layers" in row.error


def test_within_bounds_stays_ok():
    row = _row(_inst(resources={"layers": 1, "width": "3/2"}, bounds={"layers": 1, "width": 2}))
    assert row.ok and row.instances()[0]["ok"]


def test_the_cli_does_not_call_an_over_bound_script_ok(tmp_path, capsys):
    from symverify.cli import main

    d = tmp_path / "d"
    d.mkdir()
    inst = _inst(resources={"layers": 5})
    (d / "liar.py").write_text(
        'TITLE = "liar"\nimport json, sys\nout = sys.argv[sys.argv.index("--json") + 1]\n'
        f'json.dump({{"format": "symverify.proof-result", "version": 1, "name": "liar", "title": TITLE, "ok": True, "instances": [{inst!r}]}}, open(out, "w"))\n'
        , encoding="utf-8")
    assert main(["prove", "--dir", str(d), "liar", "-j", "1"]) == 1
    capsys.readouterr()


NASTY = ["a\x00b", "\x1b[31mred\x1b[0m", "]]>", "line\nbreak", "\ud800", "\x07\x0b\x0c", "x\ufffe", "é∀"]


@pytest.mark.parametrize("text", NASTY)
def test_junit_stays_well_formed_whatever_the_names(text):
    inst = _inst(name=f"i {text}", detail=text, basis=text)
    bad = _inst(name=text, verdict="refuted", ok=False, detail=text)
    rows = (ScriptOutcome(f"s{text}", f"t{text}", "failed", 0.0, {"instances": [inst, bad]}),
            ScriptOutcome("c", text, "crashed", 0.0, None, error=f"Traceback {text}"))
    xml = junit_xml(RunSummary(True, rows))
    root = ET.fromstring(xml.encode("utf-8", "surrogatepass"))
    cases = root.findall(".//testcase")
    assert len(cases) == 3 and root.get("failures") == "1" and root.get("errors") == "1"
    if text == "é∀":  # characters XML can hold are kept as they are
        assert cases[0].get("name") == "i é∀"
    assert all("\x00" not in (c.get("name") or "") for c in cases)


def test_junit_shows_control_characters_instead_of_dropping_them():
    row = ScriptOutcome("c", "t", "crashed", 0.0, None, error="\x1b[31mboom\x00")
    root = ET.fromstring(junit_xml(RunSummary(True, (row,))))
    assert root.find(".//error").text == "\\x1b[31mboom\\x00"


# ---- round trips: what the writers emit, the readers take ----------------------------------------

_names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
_numbers = st.one_of(st.integers(-10**6, 10**6), st.fractions(max_denominator=50),
                     st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))


@st.composite
def _instances(draw: Any) -> Instance:
    keys = draw(st.lists(st.sampled_from(["layers", "width", "params"]), unique=True, max_size=3))
    res = {k: draw(_numbers) for k in keys}
    bounds = {k: draw(_numbers) for k in draw(st.lists(st.sampled_from(keys or ["layers"]), unique=True, max_size=3))}
    kind = draw(st.sampled_from(["computed", "argued"]))
    name = draw(_names)
    if kind == "computed":
        return Instance.computed(name, draw(st.sampled_from([True, False, None])), "exact rank", "rank",
                                 resources=res, bounds=bounds, detail=draw(_names))
    return Instance.argued(name, "docs/theory.md § 1", checks=draw(st.sampled_from([True, False, None])),
                           resources=res, bounds=bounds)


@settings(max_examples=60, deadline=None)
@given(st.lists(_instances(), max_size=4))
def test_written_runs_are_read_back_and_match_themselves(tmp_path_factory, instances):
    result = ProofResult("s", "T", list(instances)).to_json()
    row = merge(SCRIPT, [{"status": "done", "seconds": 0.0, "error": "", "result": result}])
    assert row.status in ("ok", "failed")
    assert [i["ok"] for i in row.instances()] == [i.ok for i in instances]  # the runner re-derives what the script says
    data = RunSummary(True, (row,)).to_json()
    path = tmp_path_factory.mktemp("rt") / "run.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    back = load_run(path)
    assert back == data and golden_diff(back, back) == "" and golden_diff(data, back) == ""
    ET.fromstring(junit_xml(RunSummary(True, (row,))))


def test_a_forged_proved_record_in_a_golden_is_refused(tmp_path):
    data = RunSummary(True, (_row(_inst()),)).to_json()
    data["scripts"][0]["result"]["instances"][0].update(kind="argued")
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SerializationError, match=r"instances\[0\].*argued"):
        load_run(path)


@pytest.mark.parametrize("content", [b"", b"{", b"\xef\xbb\xbf{}", b'{"format": "\xff"}', b"[" * 5000,
                                     b'{"format": "symverify.proof-run", "format": 1, "scripts": []}',
                                     b'{"format": "symverify.proof-run", "scripts": [], "x": ' + b"9" * 5000 + b"}"])
def test_broken_golden_files_are_serialization_errors(tmp_path, content):
    path = tmp_path / "g.json"
    path.write_bytes(content)
    with pytest.raises(SerializationError, match=r"g\.json"):
        load_run(path)


def test_golden_paths_that_are_not_files(tmp_path):
    import os

    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for p in (tmp_path, fifo, Path("/dev/zero"), loop, tmp_path / "missing.json"):
        with pytest.raises(SerializationError):
            load_run(p)


def test_update_golden_on_a_failing_run_writes_nothing(tmp_path, capsys):
    from symverify.cli import main

    d = tmp_path / "d"
    d.mkdir()
    (d / "bad.py").write_text(
        'TITLE = "bad"\nimport json, sys\nout = sys.argv[sys.argv.index("--json") + 1]\n'
        'json.dump({"format": "symverify.proof-result", "version": 1, "name": "bad", "title": TITLE, "ok": False, "instances": '
        + json.dumps([_inst(verdict="refuted", ok=False)]).replace("null", "None") + '}, open(out, "w"))\n',
        encoding="utf-8")
    golden = tmp_path / "g.json"
    assert main(["prove", "--dir", str(d), "bad", "-j", "1", "--golden", str(golden), "--update-golden"]) == 1
    assert not golden.exists() and "not written" in capsys.readouterr().out
    assert main(["prove", "--dir", str(d), "bad", "--golden", str(tmp_path / "no" / "g.json"), "--update-golden"]) != 0
    assert "does not exist" in capsys.readouterr().err


def test_a_golden_of_the_other_tier_differs():
    quick = RunSummary(True, (_row(_inst()),)).to_json()
    full = {**quick, "quick": False}
    assert golden_diff(quick, quick) == ""
    assert golden_diff(full, quick).startswith("run: quick: true → false\n")
    assert golden_diff(quick, full).startswith("run: quick: false → true\n")


def test_a_golden_compares_scripts_by_name_not_position():
    """``prove b a --golden G`` with G written by ``prove a b``: each script is compared with its
    own (by position, both differed); a real difference is still found and named."""
    ab = RunSummary(False, (_row(_inst(name="x")), _row(_inst(name="y", verdict="unknown", ok=False)))).to_json()
    ab["scripts"][0]["name"], ab["scripts"][1]["name"] = "a", "b"
    ba = {**ab, "scripts": list(reversed(ab["scripts"]))}
    assert golden_diff(ab, ba) == "" and golden_diff(ba, ab) == ""
    changed = json.loads(json.dumps(ba))
    changed["scripts"][1]["result"]["instances"][0]["verdict"] = "unknown"  # script a
    assert golden_diff(ab, changed) != ""


_ = runner  # the module under attack


# ---- a float literal is the double it reads as -------------------------------------------------------------
def _forged_run(resource: str) -> str:
    """A run file whose one instance is proved, ok and within its bound 1, with ``resource`` as the literal
    text of its resource ``layers``."""
    row = _row(_inst())
    text = json.dumps(RunSummary(True, (row,)).to_json())
    assert text.count('"resources": {"layers": 1}') == 1
    return text.replace('"resources": {"layers": 1}', f'"resources": {{"layers": {resource}}}')


@pytest.mark.parametrize("literal, reads", [("1.00000000000000001", "1.0"), ("1.0000000000000000000000001e0", "1.0"),
                                            ("1e400", "inf"), ("-1e400", "-inf"), ("1e-400", "0.0")])
def test_a_float_literal_that_is_not_its_double_is_refused_naming_the_field(tmp_path, literal, reads):
    """A forged run with the resource ``1.00000000000000001`` over the bound 1 was read by Python's float as
    1.0, within the bound: ``--golden`` and ``symverify report`` took it as a pass. A float literal must be
    the double it reads as (its shortest decimal, up to trailing zeros and exponent form)."""
    from symverify.viz.resources import load_run as report_run

    path = tmp_path / "run.json"
    path.write_text(_forged_run(literal), encoding="utf-8")
    where = r"scripts\[0\]\.result\.instances\[0\]\.resources\.layers"
    for read in (load_run, report_run):
        with pytest.raises(SerializationError, match=rf"run\.json: cannot read the (golden|proof) run: {where}: expected a float "
                                                     rf"written as the double it reads as, found {literal} \(it reads as {reads}\)"):
            read(path)


@pytest.mark.parametrize("literal", ["1.0", "1.000", "1e0", "10E-1", "0.5", "1e-05", "1.5e-300", "-0.0", "0.123457"])
def test_a_float_literal_of_its_double_is_read(tmp_path, literal):
    path = tmp_path / "run.json"
    path.write_text(_forged_run(literal), encoding="utf-8")
    inst = load_run(path)["scripts"][0]["result"]["instances"][0]
    assert inst["resources"]["layers"] == float(literal)


def test_a_script_result_file_with_an_inexact_float_makes_the_row_crashed(tmp_path, capsys):
    """The same forged resource in a script's own result file gave an ok row (``layers=1.0≤1``)."""
    from symverify.cli import main

    d = tmp_path / "d"
    d.mkdir()
    payload = tmp_path / "payload.json"
    result = {"format": "symverify.proof-result", "version": 1, "name": "liar", "title": "liar", "ok": True,
              "instances": [_inst()]}
    payload.write_text(json.dumps(result).replace('"resources": {"layers": 1}', '"resources": {"layers": 1.00000000000000001}'),
                       encoding="utf-8")
    (d / "liar.py").write_text(
        'TITLE = "liar"\nimport shutil, sys\n'
        f'shutil.copy({str(payload)!r}, sys.argv[sys.argv.index("--json") + 1])\n', encoding="utf-8")
    assert main(["prove", "--dir", str(d), "liar", "-j", "1"]) == 1
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "crashed" in text and "expected a float written as the double it reads as" in text


def test_a_run_given_as_a_dict_reads_its_numbers_by_the_one_rule():
    """A run handed over as a dict (``report_page``) read a resource by its own rule (an int or a float): a
    ``Fraction`` or a numpy integer was refused, a float32 refused as 'a float'. It is read by the rule of every
    table of resources (``plain_resource``): exact numbers by value, a float32 or a bool still refused."""
    from fractions import Fraction

    import numpy as np

    from symverify.viz.resources import load_run as report_run
    from symverify.viz.run_format import run_value

    assert run_value(Fraction(3, 2), "r") == Fraction(3, 2) and run_value(np.int64(3), "r") == 3
    run = {"scripts": [{"name": "s", "result": {"instances": [
        _inst(resources={"layers": np.int64(3)}, bounds={"layers": Fraction(5, 2)}, over_bound=["layers"], ok=False)]}}]}
    assert report_run(run)["scripts"][0]["result"]["instances"][0]["over_bound"] == ["layers"]
    for bad in (np.float32(1.5), np.True_, True, float("nan")):
        with pytest.raises(SerializationError, match=r"^r: expected an int, a float or an exact rational such as '-12/5', found"):
            run_value(bad, "r")


def test_a_result_file_without_digests_is_named_by_its_own_format_and_version(tmp_path, capsys):
    """``symverify report`` on a script's result file of version 2 whose prover claim has no digests
    called the file "a run of version 4"; the message names the result file and its version."""
    from symverify.viz.run_format import check_run

    inst = _inst()
    del inst["digests"]
    result = {"format": "symverify.proof-result", "version": 2, "name": "s", "title": "T", "ok": True, "instances": [inst]}
    with pytest.raises(SerializationError, match=r"^r\.json\.instances\[0\]\.digests: a prover's claim in a result file "
                                                 r"of version 2 names what it is about; found no digests \(a version 1 "
                                                 r"result file may leave them out\)$"):
        check_run(result, "r.json")
    assert check_run({**result, "version": 1}, "r.json")  # a version 1 result file may lack them

    from symverify.cli import main

    path = tmp_path / "result.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) != 0
    text = " ".join(capsys.readouterr().err.split())
    assert "a result file of version 2" in text and "version 4" not in text
