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

import copy
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
from symverify.scripts.protocol import METHOD_TOKENS

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


STATUSES = ("ok", "failed", "crashed", "timeout", "interrupted")
COUNT_KEYS = {"proved", "refuted", "unknown", "argued"}


def _seconds(v: Any) -> bool:
    """"a number ≥ 0 that is a finite float (below 2^1024)"."""
    return type(v) in (int, float) and 0 <= v < 2**1024 and (type(v) is int or math.isfinite(v))


def _cex(v: Any, depth: int = 0) -> bool:
    """"a JSON value with finite numbers nested at most 58 deep" (a file holds no NaN or non-text key)."""
    if isinstance(v, list):
        return depth < 58 and all(_cex(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return depth < 58 and all(_cex(x, depth + 1) for x in v.values())
    return not (type(v) is float and not math.isfinite(v))


# "the fields are those of the example, plus seconds, jobs and scheduler of a run, seconds of a
# script, a result and an instance, and counterexample of a refuted instance", with their types
TYPES: dict[str, dict[str, Any]] = {
    "run": {"format": str, "version": lambda v: type(v) is int and v in (2, 3, 4), "quick": bool, "ok": bool,
            "interrupted": bool, "scripts": list, "seconds": _seconds,
            "jobs": lambda v: type(v) is int and v >= 1, "scheduler": str},
    "script": {"name": str, "title": str, "source": str, "status": lambda v: isinstance(v, str) and v in STATUSES,
               "ok": bool, "counts": "counts", "over_bound": "names", "error": str,
               "result": lambda v: v is None or isinstance(v, dict), "seconds": _seconds},
    "result": {"name": str, "title": str, "ok": bool, "counts": "counts", "seconds": _seconds, "instances": list},
    "instance": {"name": str, "verdict": lambda v: isinstance(v, str) and v in VERDICTS,
                 "method": lambda v: isinstance(v, str) and set(v.split("+")) <= METHOD_TOKENS,  # "a closed set of words"
                 "resources": dict, "bounds": dict, "seconds": _seconds, "detail": str,
                 "kind": lambda v: isinstance(v, str) and v in KINDS, "basis": str,
                 "checks": lambda v: v is None or type(v) is bool, "over_bound": "names", "ok": bool,
                 "counterexample": _cex, "failure_bound": lambda v: isinstance(v, str) and _EXACT.fullmatch(v) is not None,
                 "digests": lambda v: isinstance(v, list) and len(v) > 0},
}
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _digests(inst: dict[str, Any], where: str) -> None:
    """"digests other than a non-empty list of {"lhs", "rhs"} objects of "sha256:" and 64 lowercase
    hex digits (the item and key named), or on a claim that is not a prover's" are refused."""
    if "digests" not in inst:
        return
    if inst.get("kind", "prover") != "prover":
        raise RefusedError(f"{where}.digests")
    for j, pair in enumerate(inst["digests"]):
        if not isinstance(pair, dict) or set(pair) != {"lhs", "rhs"}:
            raise RefusedError(f"{where}.digests[{j}]")
        for side in ("lhs", "rhs"):
            if not (isinstance(pair[side], str) and _DIGEST.fullmatch(pair[side])):
                raise RefusedError(f"{where}.digests[{j}].{side}")


def _fields(d: dict[str, Any], level: str, where: str) -> None:
    for key, v in d.items():
        if key not in TYPES[level]:
            raise RefusedError(where)
        t = TYPES[level][key]
        good = (isinstance(v, list) and all(isinstance(k, str) for k in v) if t == "names" else
                isinstance(v, dict) and set(v) in (COUNT_KEYS, COUNT_KEYS - {"argued"})
                and all(type(n) is int and n >= 0 for n in v.values())
                if t == "counts" else type(v) is t if isinstance(t, type) else t(v))
        if not good:
            raise RefusedError(f"{where}.{key}")


def counted(instances: list[dict[str, Any]], keys: Any = COUNT_KEYS) -> dict[str, int]:
    """"counts counts the instances by verdict, argued claims apart (argued)"; "a run of symverify
    0.1.0 writes no argued" (``keys`` without it: there is then no argued claim to count)."""
    out = dict.fromkeys(("proved", "refuted", "unknown", "argued"), 0)
    for i in instances:
        out["argued" if i.get("kind") == "argued" else i["verdict"]] += 1
    if "argued" not in keys and out["argued"] == 0:
        del out["argued"]
    return out


def check_instance(inst: Any, where: str) -> None:
    if not isinstance(inst, dict) or not isinstance(inst.get("name"), str):
        raise RefusedError(where)
    if "verdict" not in inst:
        raise RefusedError(f"{where}.verdict")
    _fields(inst, "instance", where)
    verdict, kind = inst["verdict"], inst.get("kind", "prover")  # "kind left out is prover"
    if kind == "argued" and verdict != "unknown":  # "an argued claim with a verdict"
        raise RefusedError(where)
    if "counterexample" in inst and verdict != "refuted":
        raise RefusedError(f"{where}.counterexample")
    _digests(inst, where)
    # "a failure_bound that is not an exact rational string in [0, 1), or on an instance that is not a
    # prover's proved claim with the word randomized in its method"
    if "failure_bound" in inst and not (0 <= _value(inst["failure_bound"], f"{where}.failure_bound") < 1
                                        and verdict == "proved" and kind == "prover" and _randomized(inst)):
        raise RefusedError(f"{where}.failure_bound")
    res, bounds = inst.get("resources", {}), inst.get("bounds", {})
    b = {k: _value(v, f"{where}.bounds.{k}") for k, v in bounds.items()}
    r = {k: _value(v, f"{where}.resources.{k}") for k, v in res.items()}  # "a resource or bound"
    over = [k for k in b if k not in r or r[k] > b[k]]
    if "over_bound" in inst and len(set(inst["over_bound"])) < len(inst["over_bound"]):  # "lists ... twice"
        raise RefusedError(f"{where}.over_bound")
    if "over_bound" in inst and set(inst["over_bound"]) != set(over):  # "does not list exactly the resources ..."
        raise RefusedError(where)
    checks = inst.get("checks")
    if checks is not None and kind != "argued":
        raise RefusedError(f"{where}.checks")
    if inst.get("ok", False) and ((kind != "argued" and verdict != "proved") or checks is False or over):
        raise RefusedError(where)


def _randomized(inst: dict[str, Any]) -> bool:
    return "randomized" in str(inst.get("method", "")).split("+")


def _all_ok(instances: list[dict[str, Any]], where: str) -> None:
    if not instances or not all(i.get("ok") is True for i in instances):
        raise RefusedError(where)


def check_result(result: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(result, dict) or not isinstance(result.get("instances"), list):
        raise RefusedError(where)
    _fields(result, "result", where)
    for j, inst in enumerate(result["instances"]):
        check_instance(inst, f"{where}.instances[{j}]")
    if "counts" in result and result["counts"] != counted(result["instances"], set(result["counts"])):
        raise RefusedError(f"{where}.counts")
    if result.get("ok") is True:
        _all_ok(result["instances"], where)
    return result["instances"]


def passes(s: dict[str, Any]) -> bool:
    """"an ok script (by status, or by ok where status is left out)"."""
    return s["status"] == "ok" if "status" in s else s.get("ok") is True


def check_script(s: Any, where: str) -> None:
    if not isinstance(s, dict) or not isinstance(s.get("name"), str):
        raise RefusedError(where)
    _fields(s, "script", where)
    result = s.get("result")
    insts = [] if result is None else check_result(result, f"{where}.result")
    if s.get("status") in ("crashed", "timeout", "interrupted") and result is not None:
        raise RefusedError(f"{where}.result")
    if result is not None and "name" in result and result["name"] != s["name"]:  # "a result named after another script"
        raise RefusedError(f"{where}.result.name")
    if "status" in s and "ok" in s and s["ok"] != (s["status"] == "ok"):
        raise RefusedError(f"{where}.ok")
    if passes(s):
        if result is None:
            raise RefusedError(where)
        _all_ok(insts, f"{where}.result")
    if "counts" in s and s["counts"] != counted(insts, set(s["counts"])):
        raise RefusedError(f"{where}.counts")
    if "over_bound" in s and s["over_bound"] != [f"{i['name']}: {k}" for i in insts for k in i.get("over_bound", [])]:
        raise RefusedError(f"{where}.over_bound")


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
    if "version" not in data:  # "a file says format symverify.proof-run and version 2"
        raise RefusedError("version")
    _fields(data, "run", "")
    names = set()
    for k, s in enumerate(data["scripts"]):
        check_script(s, f"scripts[{k}]")
        for j, i in enumerate((s.get("result") or {}).get("instances", [])):  # "(in a run of version 3) such a
            if (data["version"] >= 3 and "failure_bound" not in i and i["verdict"] == "proved"  # claim without it"
                    and i.get("kind", "prover") == "prover" and _randomized(i)):
                raise RefusedError(f"scripts[{k}].result.instances[{j}].failure_bound")
            if data["version"] == 4 and "digests" not in i and i.get("kind", "prover") == "prover":  # "a prover's
                raise RefusedError(f"scripts[{k}].result.instances[{j}].digests")  # claim without digests in version 4"
            for key in ("failure_bound", "digests"):  # "written before failure_bound and digests, which a version 2
                if data["version"] == 2 and key in i:  # file therefore may not hold"
                    raise RefusedError(f"scripts[{k}].result.instances[{j}].{key}")
        if s["name"] in names:  # "no two of one name"
            raise RefusedError(f"scripts[{k}].name")
        names.add(s["name"])
    ok = bool(data["scripts"]) and data.get("interrupted") is not True and all(map(passes, data["scripts"]))
    if "ok" in data and data["ok"] != ok:
        raise RefusedError("ok")
    return data


def all_ok(data: dict[str, Any]) -> bool:
    """"a run is all ok only when it has a script, was not interrupted, and every script and
    instance is ok" (a summary left out is derived: "ok left out is false")."""
    insts = [i for s in data["scripts"] for i in ((s.get("result") or {}).get("instances", []))]
    return (bool(data["scripts"]) and data.get("interrupted") is not True and all(map(passes, data["scripts"]))
            and all(i.get("ok") is True for i in insts))


def restate(doc: Any) -> Any:
    """``doc`` with every summary (a result's and a script's ``ok``, ``counts``, a script's
    ``status`` and ``over_bound``, the run's ``ok``) restated from its instances as a writer states
    them, where the instances allow it; so that a mutated instance is judged by the instance rules."""
    scripts = doc.get("scripts") if isinstance(doc, dict) else None
    if not isinstance(scripts, list):
        return doc
    for s in scripts:
        result = s.get("result") if isinstance(s, dict) else None
        insts = result.get("instances") if isinstance(result, dict) else None
        if not isinstance(insts, list) or not all(isinstance(i, dict) for i in insts):
            continue
        ok = bool(insts) and all(i.get("ok") is True for i in insts)
        result["ok"] = ok
        if all(i.get("verdict") in VERDICTS for i in insts):
            result["counts"] = s["counts"] = counted(insts)
        if all(isinstance(i.get("over_bound", []), list) for i in insts):
            s["over_bound"] = [f"{i.get('name')}: {k}" for i in insts for k in i.get("over_bound", [])]
        s["ok"], s["status"] = ok, "ok" if ok else "failed"
    doc["ok"] = bool(scripts) and all(isinstance(s, dict) and s.get("ok") is True for s in scripts)
    return doc


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
    assert (data["version"], data["quick"], data["ok"], data["interrupted"]) == (4, True, True, False)
    assert [s["name"] for s in data["scripts"]] == list(SCRIPTS)  # "in the order asked for"
    for s in data["scripts"]:
        assert set(s) == {"name", "title", "source", "status", "ok", "counts", "over_bound", "error", "result"}
        assert s["source"] == "builtin" and isinstance(s["title"], str) and s["title"]
        insts = s["result"]["instances"]
        assert insts and s["result"]["name"] == s["name"] and s["result"]["title"] == s["title"]
        counts = {"proved": 0, "refuted": 0, "unknown": 0, "argued": 0}
        for inst in insts:
            assert set(inst) - {"failure_bound", "digests"} == {"name", "verdict", "method", "resources", "bounds", "detail",
                                                     "kind", "basis", "checks", "over_bound", "ok"}, inst["name"]
            assert ("failure_bound" in inst) == (inst["verdict"] == "proved" and _randomized(inst)), inst["name"]
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
    if insts[-3]["kind"] == "prover":  # "digests of a prover's claim": a computed claim names none
        del insts[-3]["digests"]
    else:  # a prover's claim in a run of version 4 names what it is about
        insts[-3]["digests"] = [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]
    for inst, field, change in changes:
        was, now = (json.dumps(v, sort_keys=True) for v in (change, inst[field]))
        expected.append(f"{SCRIPTS[1]}: {inst['name']}: {field}: {was} → {now}")
        inst[field] = change
    expected.append(f"{SCRIPTS[1]}: {insts[-1]['name']}: ok: false → true")
    insts[-1]["ok"] = False
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(restate(data), indent=2), encoding="utf-8")  # its summaries as a writer states them
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
            out.append((f"[{k}][{j}] drop {key}", restate(doc)))
            doc = _copy(run)
            inst = inst_of(doc, k, j)
            doc["scripts"][k]["result"]["instances"][j] = {(f"{x}_" if x == key else x): v for x, v in inst.items()}
            out.append((f"[{k}][{j}] rename {key}", restate(doc)))
            doc = _copy(run)
            inst = inst_of(doc, k, j)
            doc["scripts"][k]["result"]["instances"][j] = {**inst, key: Raw(f"{dump(inst[key])}, {json.dumps(key)}: "
                                                                              f"{dump(inst[key])}")}
            out.append((f"[{k}][{j}] repeat {key}", restate(doc)))
            for bad in BAD_TYPES:
                doc = _copy(run)
                inst_of(doc, k, j)[key] = bad
                out.append((f"[{k}][{j}] {key}={bad!r}", restate(doc)))
        for part in ("bounds", "resources") if (k, j) == picks[0] else ():
            for v in VALUES:
                doc = _copy(run)
                inst = inst_of(doc, k, j)
                inst[part]["layers"] = v
                out.append((f"[{k}][{j}] {part}.layers={dump(v)[:20]}", restate(doc)))
                doc = _copy(run)  # the same value, with ok and over_bound as a writer would state them
                inst = inst_of(doc, k, j)
                inst[part]["layers"] = v
                inst["ok"], inst["over_bound"] = False, ["layers"]
                out.append((f"[{k}][{j}] {part}.layers={dump(v)[:20]} not ok", restate(doc)))
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
        "argued marked proved": {"kind": "argued", "digests": Raw("DROP")},
        "argued unknown ok": {"kind": "argued", "verdict": "unknown", "checks": True, "digests": Raw("DROP")},
        "argued unknown, checks left null": {"kind": "argued", "verdict": "unknown", "digests": Raw("DROP")},
        "argued, checks failed, ok": {"kind": "argued", "verdict": "unknown", "checks": False, "digests": Raw("DROP")},
        "argued, checks failed": {"kind": "argued", "verdict": "unknown", "checks": False, "ok": False, "digests": Raw("DROP")},
        "checks on a prover claim": {"checks": True},
        "refuted ok": {"verdict": "refuted"},
        "refuted": {"verdict": "refuted", "ok": False},
        "unknown kind": {"kind": "hand"},
        "unknown verdict": {"verdict": "Proved"},
        "over_bound listed twice": {"resources": {**inst["resources"], "layers": layers + 1},
                                    "over_bound": ["layers", "layers"], "ok": False},
        "an extra field": {"seconds": 0.5, "note": [1, 2]},
        "randomized with its bound": {"method": "randomized", "failure_bound": "1/1024"},
        "randomized without its bound": {"method": "randomized"},
        "randomized with a bound of 1": {"method": "randomized", "failure_bound": "1"},
        "randomized with a float bound": {"method": "randomized", "failure_bound": 0.5},
        "a bound on an exact claim": {"failure_bound": "1/1024"},
        "digests of another identity": {"digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "f" * 64}]},
        "digests of two reports": {"digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}] * 2},
        "digests empty": {"digests": []},
        "digests in upper case": {"digests": [{"lhs": "sha256:" + "A" * 64, "rhs": "sha256:" + "1" * 64}]},
        "digests as a pair": {"digests": [["sha256:" + "0" * 64, "sha256:" + "1" * 64]]},
        "digests without rhs": {"digests": [{"lhs": "sha256:" + "0" * 64}]},
        "digests on an argued claim": {"kind": "argued", "verdict": "unknown", "checks": True,
                                       "digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]},
    }
    for label, change in forged.items():
        doc = _copy(run)
        target = inst_of(doc, k, j)
        for key, v in change.items():
            if isinstance(v, Raw) and v.text == "DROP":
                del target[key]
            else:
                target[key] = v
        out.append((label, restate(copy.deepcopy(doc))))
        out.append((f"{label} (summaries as written)", doc))
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
    # summaries against their instances, unknown fields and types at every level
    first = run["scripts"][0]
    scripted: dict[str, Any] = {
        "script status ok, an instance refuted": lambda d: d["scripts"][0]["result"]["instances"][0].update(
            verdict="refuted", ok=False),
        "script counts off by one": lambda d: d["scripts"][0]["counts"].update(proved=first["counts"]["proved"] + 1),
        "result counts off by one": lambda d: d["scripts"][0]["result"]["counts"].update(proved=0),
        "script over_bound forged": lambda d: d["scripts"][0].update(over_bound=["x: layers"]),
        "script ok without status agreeing": lambda d: d["scripts"][0].update(ok=False),
        "script status failed, ok true": lambda d: d["scripts"][0].update(status="failed"),
        "script status failed, ok false": lambda d: (d["scripts"][0].update(status="failed", ok=False), d.update(ok=False)),
        "crashed script with a result": lambda d: d["scripts"][0].update(status="crashed", ok=False),
        "ok script without a result": lambda d: d["scripts"][0].update(result=None),
        "ok script without instances": lambda d: d["scripts"][0]["result"].update(instances=[]),
        "status left out, ok false": lambda d: (d["scripts"][0].pop("status"), d["scripts"][0].update(ok=False),
                                                d.update(ok=False)),
        "run ok false although every script is": lambda d: d.update(ok=False),
        "run ok though interrupted": lambda d: d.update(interrupted=True),
        "interrupted, not ok": lambda d: d.update(interrupted=True, ok=False),
        "interrupted, run ok left out": lambda d: (d.update(interrupted=True), d.pop("ok")),
        "script status and ok left out": lambda d: (d["scripts"][0].pop("status"), d["scripts"][0].pop("ok"), d.pop("ok")),
        "over its bound, every summary left out": lambda d: (
            d.pop("ok"), [d["scripts"][0].pop(k) for k in ("status", "ok", "counts", "over_bound")],
            [d["scripts"][0]["result"].pop(k) for k in ("ok", "counts")],
            [d["scripts"][0]["result"]["instances"][0].pop(k) for k in ("ok", "over_bound")],
            d["scripts"][0]["result"]["instances"][0]["resources"].update(
                layers=d["scripts"][0]["result"]["instances"][0]["bounds"]["layers"] + 1)),
        "two scripts of one name": lambda d: d["scripts"].append(copy.deepcopy(d["scripts"][0])),
        "version 1": lambda d: d.update(version=1),
        "version 5": lambda d: d.update(version=5),
        "version 3": lambda d: d.update(version=3),
        "version 4, a prover's claim without digests": lambda d: d["scripts"][0]["result"]["instances"][0].pop("digests"),
        "version 3, a prover's claim without digests": lambda d: (d.update(version=3),
                                                                 d["scripts"][0]["result"]["instances"][0].pop("digests")),
        "version true": lambda d: d.update(version=True),
        "unknown run field": lambda d: d.update(directory="/tmp"),
        "unknown script field": lambda d: d["scripts"][0].update(note=""),
        "unknown result field": lambda d: d["scripts"][0]["result"].update(note=""),
        "timings": lambda d: (d.update(seconds=1.5, jobs=2, scheduler="dask local"),
                              d["scripts"][0].update(seconds=0), d["scripts"][0]["result"].update(seconds=0.1),
                              d["scripts"][0]["result"]["instances"][0].update(seconds=0.0)),
        "negative seconds": lambda d: d.update(seconds=-5),
        "seconds as text": lambda d: d["scripts"][0].update(seconds="1"),
        "jobs 0": lambda d: d.update(jobs=0),
        "jobs 1.0": lambda d: d.update(jobs=1.0),
        "quick as text": lambda d: d.update(quick="yes"),
        "method a number": lambda d: d["scripts"][0]["result"]["instances"][0].update(method=3),
        "counts with a fifth key": lambda d: d["scripts"][0]["counts"].update(argued2=0),
        "counts negative": lambda d: d["scripts"][0]["counts"].update(argued=-1),
        "counterexample on a proved instance": lambda d: d["scripts"][0]["result"]["instances"][0].update(
            counterexample={"cell": [0, 0]}),
        "counterexample on a refuted instance": lambda d: d["scripts"][0]["result"]["instances"][0].update(
            verdict="refuted", ok=False, counterexample={"cell": [0, 0]}),
    }
    for label, change in scripted.items():
        doc = _copy(run)
        change(doc)
        out.append((label, doc))
        if label in ("script status ok, an instance refuted", "counterexample on a refuted instance"):
            out.append((f"{label}, restated", restate(copy.deepcopy(doc))))
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
    assert {"over its bound, not ok, listed", "argued unknown ok", "argued, checks failed", "refuted",
            "[0][0] drop kind", "[0][0] drop ok", "huge bound", "huge exact bound", "script status failed, ok false",
            "interrupted, not ok", "timings", "counterexample on a refuted instance, restated",
            "script status ok, an instance refuted, restated", "status left out, ok false",
            "interrupted, run ok left out", "script status and ok left out", "over its bound, every summary left out",
            "randomized with its bound", "digests of another identity", "digests of two reports", "version 3",
            "version 3, a prover's claim without digests"} <= labels
    assert not {"proved over its bound", "argued marked proved", "argued, checks failed, ok",
                "checks on a prover claim", "drop format", "[0][0] bounds.layers=NaN", "an extra field", "drop version",
                "no scripts", "refuted (summaries as written)", "script status ok, an instance refuted",
                "script counts off by one", "result counts off by one", "script over_bound forged",
                "script ok without status agreeing", "script status failed, ok true", "crashed script with a result",
                "ok script without a result", "ok script without instances", "run ok false although every script is",
                "run ok though interrupted", "two scripts of one name", "version 1", "version 5", "version true",
                "version 4, a prover's claim without digests",
                "unknown run field", "unknown script field", "unknown result field", "negative seconds",
                "seconds as text", "jobs 0", "jobs 1.0", "quick as text", "method a number", "counts with a fifth key",
                "counts negative", "counterexample on a proved instance", "over_bound listed twice", "counterexample on a refuted instance",
                "[0][0] resources.layers=true not ok", "randomized without its bound", "randomized with a bound of 1",
                "randomized with a float bound", "a bound on an exact claim", "digests empty", "digests in upper case",
                "digests as a pair", "digests without rhs", "digests on an argued claim"} & labels


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
            summary = re.search(r'id="summary">Result: <span class="(ok|failed)">', page.read_text(encoding="utf-8"))
            assert summary is not None and (summary.group(1) == "ok") == all_ok(json.loads(text)), label
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
