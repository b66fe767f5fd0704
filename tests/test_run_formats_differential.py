"""Proof-run files and golden runs against an independent reader written from docs/formats.md alone.

:func:`oracle` below reads a ``symverify.proof-run`` file by the rules docs/formats.md § Proof run
states (types, kinds, the verdict/``ok`` rules, bounds against resources, ``over_bound``), with
Python's ``json`` and none of symverify's readers. The tests

1. run ``symverify prove --quick primitives lemma_h11_composition --json RUN`` once and check every
   field of every script and instance of the file against the doc (what is written, beyond what
   the readers must accept: ``counts``, ``ok`` and ``status`` derived from the instances);
2. read the golden file that ``--update-golden`` writes with the oracle, compare a run with it
   (a pass), and with a copy whose one claim field changed (exit 1, a diff line naming the
   script, the instance and the field);
3. mutate the run file (drop, rename or repeat a key, wrong types, NaN, huge numbers, a proved
   instance over its bound, an argued claim marked proved, ...) and require both readers of runs,
   ``--golden`` (:func:`symverify.scripts.runner.load_run`, and the command for what it refuses)
   and ``symverify report``, to accept exactly what the oracle accepts, or to fail with a
   :class:`SerializationError` (exit 3, one line, no traceback) naming the field.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cases import int_digit_limit

from symverify.cli import main
from symverify.errors import SerializationError
from symverify.ir import limits
from symverify.scripts import runner

SCRIPTS = ("primitives", "lemma_h11_composition")
PROVE = ["prove", "--quick", *SCRIPTS, "-j", "1"]

# ==== the oracle: docs/formats.md § Proof run, read literally =======================================


class RefusedError(Exception):
    """The docs do not allow this file; ``args[0]`` is the field (``scripts[0].result.instances[2]``)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):  # "duplicate fields are refused"
        raise RefusedError("")
    return dict(pairs)


def _constant(text: str) -> Any:
    raise RefusedError("")  # "Floats ..., NaN and Infinity are refused" (as values of JSON: NaN, Infinity)


KINDS = ("prover", "computed", "argued")
VERDICTS = ("proved", "refuted", "unknown")
_EXACT = re.compile(r"-?[0-9]+(?:/[0-9]+)?", re.ASCII)


def _value(v: Any, where: str) -> Fraction:
    """A resource or bound: an integer, an exact decimal or rational string (``"8/5"``, at most
    MAX_INT_DIGITS digits per integer), or a (finite) float; nothing else (``" 1"``, ``"0x10"``,
    ``"1e9"``, ``true``)."""
    if type(v) is int:
        return Fraction(v)
    if type(v) is float:
        if not math.isfinite(v):
            raise RefusedError(where)
        return Fraction(v)
    if isinstance(v, str) and _EXACT.fullmatch(v):
        num, _, den = v.partition("/")
        if max(len(num.lstrip("-")), len(den)) > limits.MAX_INT_DIGITS or (den.strip("0") == "" and den):
            raise RefusedError(where)
        with int_digit_limit():
            return Fraction(int(num), int(den) if den else 1)
    raise RefusedError(where)


def check_instance(inst: Any, where: str) -> None:
    if not isinstance(inst, dict) or not isinstance(inst.get("name"), str):
        raise RefusedError(where)
    verdict, kind = inst.get("verdict"), inst.get("kind", "prover")  # "kind left out is prover"
    if verdict not in VERDICTS or not isinstance(verdict, str):
        raise RefusedError(f"{where}.verdict")
    if kind not in KINDS or not isinstance(kind, str):
        raise RefusedError(f"{where}.kind")
    if kind == "argued" and verdict != "unknown":  # "an argued claim with a verdict"
        raise RefusedError(where)
    res, bounds = inst.get("resources", {}), inst.get("bounds", {})
    if not isinstance(res, dict):
        raise RefusedError(f"{where}.resources")
    if not isinstance(bounds, dict):
        raise RefusedError(f"{where}.bounds")
    b = {k: _value(v, f"{where}.bounds.{k}") for k, v in bounds.items()}
    r = {k: _value(v, f"{where}.resources.{k}") for k, v in res.items() if k in b}  # "a resource held to one"
    over = [k for k in b if k not in r or r[k] > b[k]]
    if "over_bound" in inst:  # "an over_bound that does not list exactly the resources over their bounds"
        listed = inst["over_bound"]
        if not isinstance(listed, list) or not all(isinstance(k, str) for k in listed):
            raise RefusedError(f"{where}.over_bound")
        if set(listed) != set(over):
            raise RefusedError(where)
    checks = inst.get("checks")
    if checks is not None and (type(checks) is not bool or kind != "argued"):
        raise RefusedError(f"{where}.checks")
    ok = inst.get("ok", False)  # "ok left out is false"
    if type(ok) is not bool:
        raise RefusedError(f"{where}.ok")
    if ok and ((kind != "argued" and verdict != "proved") or checks is False or over):
        raise RefusedError(where)


def oracle(text: str) -> dict[str, Any]:
    """The run in ``text``, or :class:`RefusedError` naming where the docs refuse it."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except ValueError:
        raise RefusedError("") from None
    if not isinstance(data, dict) or data.get("format") != "symverify.proof-run":
        raise RefusedError("format")
    if not isinstance(data.get("scripts"), list):
        raise RefusedError("scripts")
    for k, s in enumerate(data["scripts"]):
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            raise RefusedError(f"scripts[{k}]")
        result = s.get("result")
        if result is None:
            continue
        if not isinstance(result, dict) or not isinstance(result.get("instances"), list):
            raise RefusedError(f"scripts[{k}].result")
        for j, inst in enumerate(result["instances"]):
            check_instance(inst, f"scripts[{k}].result.instances[{j}]")
    return data


def _exact(v: Any) -> Fraction:
    return _value(v, "")


# ==== 1. what `prove --json` writes, field by field ================================================


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("runfmt")
    run, golden = d / "run.json", d / "golden.json"
    assert main([*PROVE, "--json", str(run), "--golden", str(golden), "--update-golden"]) == 0
    return run, golden


def test_every_field_of_a_written_run_is_as_documented(files):
    text = files[0].read_text(encoding="utf-8")
    data = oracle(text)
    assert list(data) == ["format", "version", "quick", "ok", "interrupted", "scripts"]  # no times without --timings
    assert (data["version"], data["quick"], data["ok"], data["interrupted"]) == (2, True, True, False)
    assert [s["name"] for s in data["scripts"]] == list(SCRIPTS)  # "in the order asked for"
    for s in data["scripts"]:
        assert set(s) == {"name", "title", "source", "status", "ok", "counts", "over_bound", "error", "result"}
        assert s["source"] == "builtin" and isinstance(s["title"], str) and s["title"]
        insts = s["result"]["instances"]
        assert insts and s["result"]["name"] == s["name"] and s["result"]["title"] == s["title"]
        counts = {"proved": 0, "refuted": 0, "unknown": 0, "argued": 0}
        for inst in insts:
            assert set(inst) == {"name", "verdict", "method", "resources", "bounds", "detail", "kind", "basis",
                                 "checks", "over_bound", "ok"}, inst["name"]
            assert inst["kind"] in KINDS and inst["verdict"] in VERDICTS
            assert all(isinstance(inst[k], str) for k in ("name", "method", "detail", "basis"))
            assert inst["checks"] is None if inst["kind"] != "argued" else inst["checks"] in (None, True, False)
            for part in ("resources", "bounds"):  # integers, exact strings or 6-digit floats
                for key, v in inst[part].items():
                    assert isinstance(key, str) and type(v) in (int, str, float), (inst["name"], part, key, v)
                    if type(v) is int:
                        assert v.bit_length() <= 1590
                    if type(v) is float:
                        assert float(f"{v:.6g}") == v
            over = [k for k, b in inst["bounds"].items()
                    if k not in inst["resources"] or _exact(inst["resources"][k]) > _exact(b)]
            assert inst["over_bound"] == over
            argued_ok = inst["kind"] == "argued" and inst["checks"] is not False
            assert inst["ok"] == ((inst["verdict"] == "proved" or argued_ok) and not over), inst["name"]
            counts["argued" if inst["kind"] == "argued" else inst["verdict"]] += 1
        assert s["counts"] == s["result"]["counts"] == counts
        assert s["over_bound"] == [f"{i['name']}: {k}" for i in insts for k in i["over_bound"]]
        every = all(i["ok"] for i in insts)
        assert s["ok"] == s["result"]["ok"] == every and s["status"] == ("ok" if every else "failed")
        assert s["error"] == ""
    assert data["ok"] == all(s["ok"] for s in data["scripts"])
    assert {i["kind"] for s in data["scripts"] for i in s["result"]["instances"]} >= {"prover", "computed"}
    assert text == json.dumps(data, indent=2, ensure_ascii=False) + "\n"  # written as the doc's readers read it


# ==== 2. golden runs ================================================================================


def test_the_golden_file_is_the_run_and_a_run_matches_it(files, capsys):
    run, golden = files
    assert golden.read_bytes() == run.read_bytes()  # "--update-golden writes the run there"
    oracle(golden.read_text(encoding="utf-8"))
    capsys.readouterr()
    assert main([*PROVE, "--golden", str(golden)]) == 0
    assert "matches the golden run" in capsys.readouterr().out


def test_changed_claim_fields_fail_with_a_line_naming_instance_and_field(files, tmp_path, capsys):
    data = oracle(files[1].read_text(encoding="utf-8"))
    insts = data["scripts"][1]["result"]["instances"]  # deep in the file: far from their names in the diff
    other = {"prover": "computed", "computed": "prover"}
    changes = [(insts[-1], "verdict", "unknown"), (insts[-2], "method", "dense"),
               (insts[-3], "kind", other[insts[-3]["kind"]])]
    bounded = next(i for i in insts[:-3] if i["bounds"] and all(type(v) is int for v in i["bounds"].values()))
    changes.append((bounded, "bounds", {k: v + 1 for k, v in bounded["bounds"].items()}))  # looser: still ok
    expected = []
    for inst, field, change in changes:
        was, now = (json.dumps(v, sort_keys=True) for v in (change, inst[field]))
        expected.append(f"{SCRIPTS[1]}: {inst['name']}: {field}: {was} → {now}")
        inst[field] = change
    expected.append(f"{SCRIPTS[1]}: {insts[-1]['name']}: ok: false → true")
    insts[-1]["ok"] = False
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    oracle(path.read_text(encoding="utf-8"))  # still a run the doc allows
    capsys.readouterr()
    assert main([*PROVE, "--golden", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert all(line in lines for line in expected), (expected, lines)


# ==== 3. mutations: both readers take exactly what the oracle takes ================================


class Raw:
    """JSON text written as is (``NaN``, ``1e400``, a repeated key)."""

    def __init__(self, text: str) -> None:
        self.text = text


def dump(v: Any) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {dump(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(map(dump, v)) + "]"
    return json.dumps(v)


def _copy(v: Any) -> Any:
    return json.loads(json.dumps(v))


BAD_TYPES = (None, True, 1.5, "x", [], {"a": 1}, ["layers"])
VALUES = (None, True, False, 1.5, -1, 0, "1", "8/5", "-12/5", "1/0", " 1", "0x10", "1e9", "+1", "1.0", "", [],
          {}, Raw("NaN"), Raw("Infinity"), Raw("1e400"), Raw("1" + "0" * 400), "1" + "0" * 2000,
          "1" * (limits.MAX_INT_DIGITS + 1))


def mutations(run: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, mutated document) for drops, renames, repeats, wrong types and forged claims."""
    out: list[tuple[str, Any]] = []

    def inst_of(doc: Any, k: int, j: int) -> dict[str, Any]:
        return doc["scripts"][k]["result"]["instances"][j]

    picks = [(0, 0)]
    computed = [(k, j) for k, s in enumerate(run["scripts"]) for j, i in enumerate(s["result"]["instances"])
                if i["kind"] == "computed"]
    picks += computed[:1]
    for k, j in picks:
        keys = list(inst_of(run, k, j))
        for key in keys:
            doc = _copy(run)
            del inst_of(doc, k, j)[key]
            out.append((f"[{k}][{j}] drop {key}", doc))
            doc = _copy(run)
            inst = inst_of(doc, k, j)
            doc["scripts"][k]["result"]["instances"][j] = {(f"{x}_" if x == key else x): v for x, v in inst.items()}
            out.append((f"[{k}][{j}] rename {key}", doc))
            doc = _copy(run)
            inst = inst_of(doc, k, j)
            doc["scripts"][k]["result"]["instances"][j] = {**inst, key: Raw(f"{dump(inst[key])}, {json.dumps(key)}: "
                                                                              f"{dump(inst[key])}")}
            out.append((f"[{k}][{j}] repeat {key}", doc))
            for bad in BAD_TYPES:
                doc = _copy(run)
                inst_of(doc, k, j)[key] = bad
                out.append((f"[{k}][{j}] {key}={bad!r}", doc))
        for part in ("bounds", "resources") if (k, j) == picks[0] else ():
            for v in VALUES:
                doc = _copy(run)
                inst = inst_of(doc, k, j)
                inst[part]["layers"] = v
                out.append((f"[{k}][{j}] {part}.layers={dump(v)[:20]}", doc))
                doc = _copy(run)  # the same value, with ok and over_bound as a writer would state them
                inst = inst_of(doc, k, j)
                inst[part]["layers"] = v
                inst["ok"], inst["over_bound"] = False, ["layers"]
                out.append((f"[{k}][{j}] {part}.layers={dump(v)[:20]} not ok", doc))
    # forged claims
    k, j = picks[0]
    inst = inst_of(run, k, j)
    layers = inst["bounds"]["layers"]
    forged = {
        "proved over its bound": {"resources": {**inst["resources"], "layers": layers + 1}},
        "proved over its bound, listed": {"resources": {**inst["resources"], "layers": layers + 1},
                                          "over_bound": ["layers"]},
        "over its bound, not ok, listed": {"resources": {**inst["resources"], "layers": layers + 1},
                                           "over_bound": ["layers"], "ok": False},
        "over its bound, over_bound left out": {"resources": {**inst["resources"], "layers": layers + 1},
                                                "over_bound": Raw("DROP")},
        "bound without a value": {"bounds": {**inst["bounds"], "width": 3}},
        "bound without a value, not ok": {"bounds": {**inst["bounds"], "width": 3}, "over_bound": ["width"],
                                          "ok": False},
        "over_bound names an unbounded key": {"over_bound": ["params"]},
        "huge bound": {"bounds": {"layers": Raw("9" * 600)}},
        "huge exact bound": {"bounds": {"layers": "9" * 5000}},
        "argued marked proved": {"kind": "argued"},
        "argued unknown ok": {"kind": "argued", "verdict": "unknown", "checks": True},
        "argued unknown, checks left null": {"kind": "argued", "verdict": "unknown"},
        "argued, checks failed, ok": {"kind": "argued", "verdict": "unknown", "checks": False},
        "argued, checks failed": {"kind": "argued", "verdict": "unknown", "checks": False, "ok": False},
        "checks on a prover claim": {"checks": True},
        "refuted ok": {"verdict": "refuted"},
        "refuted": {"verdict": "refuted", "ok": False},
        "unknown kind": {"kind": "hand"},
        "unknown verdict": {"verdict": "Proved"},
        "an extra field": {"seconds": 0.5, "note": [1, 2]},
    }
    for label, change in forged.items():
        doc = _copy(run)
        target = inst_of(doc, k, j)
        for key, v in change.items():
            if isinstance(v, Raw) and v.text == "DROP":
                del target[key]
            else:
                target[key] = v
        out.append((label, doc))
    # run and script level
    for key in list(run):
        doc = _copy(run)
        del doc[key]
        out.append((f"drop {key}", doc))
    for label, change in [("format", "symverify.circuit"), ("format", None), ("version", 99), ("version", "2"),
                          ("scripts", {}), ("scripts", None), ("ok", "yes")]:
        out.append((f"{label}={change!r}", {**_copy(run), label: change}))
    for key in list(run["scripts"][0]):
        doc = _copy(run)
        del doc["scripts"][0][key]
        out.append((f"script drop {key}", doc))
        for bad in (None, 7, "x", []):
            doc = _copy(run)
            doc["scripts"][0][key] = bad
            out.append((f"script {key}={bad!r}", doc))
    for label, change in [("result without instances", {"name": "x"}), ("instances not a list", {"instances": {}}),
                          ("an instance not an object", {"instances": [7]})]:
        doc = _copy(run)
        doc["scripts"][0]["result"] = change
        out.append((label, doc))
    doc = _copy(run)
    doc["scripts"].append(7)
    out.append(("a script not an object", doc))
    out.append(("no scripts", {**_copy(run), "scripts": []}))
    out.append(("repeated top key", {**_copy(run), "ok": Raw('true, "ok": true')}))
    return out


@pytest.fixture(scope="module")
def cases(files) -> list[tuple[str, str, str | None]]:
    """(label, text, the field the oracle refuses, or None where it accepts)."""
    run = json.loads(files[0].read_text(encoding="utf-8"))
    out = []
    for label, doc in mutations(run):
        text = dump(doc)
        try:
            oracle(text)
            where = None
        except RefusedError as e:
            where = e.args[0]
        out.append((label, text, where))
    return out


def test_the_mutations_cover_both_answers(cases):
    refused = [c for c in cases if c[2] is not None]
    assert len(cases) > 250 and 0.2 < len(refused) / len(cases) < 0.9
    labels = {label for label, _, where in cases if where is None}
    # written as the doc allows: every one of these is read
    assert {"over its bound, not ok, listed", "argued unknown ok", "argued, checks failed", "refuted", "an extra field",
            "drop version", "[0][0] drop kind", "[0][0] drop ok", "huge bound", "huge exact bound", "no scripts"} <= labels
    assert not {"proved over its bound", "argued marked proved", "argued, checks failed, ok",
                "checks on a prover claim", "drop format", "[0][0] bounds.layers=NaN"} & labels


def test_golden_reader_takes_exactly_what_the_oracle_takes(cases, tmp_path):
    path = tmp_path / "run.json"
    for label, text, where in cases:
        path.write_text(text, encoding="utf-8")
        if where is None:
            assert runner.load_run(path) == json.loads(text), label
            continue
        with pytest.raises(SerializationError) as e:
            runner.load_run(path)
        msg = str(e.value)
        assert "\n" not in msg and str(path) in msg, (label, msg)
        assert where in msg.replace(": scripts", ".scripts"), (label, where, msg)


def test_report_takes_exactly_what_the_oracle_takes(cases, tmp_path, capsys):
    path, page = tmp_path / "run.json", tmp_path / "r.html"
    for label, text, where in cases:
        path.write_text(text, encoding="utf-8")
        code = main(["report", str(path), "-o", str(page)])
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, label
        if where is None:
            assert code == 0 and out.startswith("wrote "), (label, err)
            continue
        assert code == 3 and out == "", (label, code, err)
        assert err.startswith("symverify: error: ") and err.count("\n") == 1, (label, err)
        assert where in err.replace(": scripts", ".scripts"), (label, where, err)


def test_golden_command_refuses_what_the_oracle_refuses_before_running(cases, tmp_path, capsys, monkeypatch):
    def no_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a refused golden run must be refused before any script runs")

    monkeypatch.setattr(runner, "run_scripts", no_run)
    path = tmp_path / "golden.json"
    refused = [c for c in cases if c[2] is not None]
    for label, text, where in refused[::8]:
        path.write_text(text, encoding="utf-8")
        code = main([*PROVE, "--golden", str(path)])
        out, err = capsys.readouterr()
        assert code == 3 and "Traceback" not in out + err, (label, code, err)
        assert err.startswith("symverify: error: ") and err.count("\n") == 1, (label, err)
        assert where in err.replace(": scripts", ".scripts"), (label, where, err)
