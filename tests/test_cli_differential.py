"""The ``symverify`` command line against the Python API, its oracle.

Part 1 draws inputs (hypothesis circuits and models, compiled models, one-weight and one-gate
mutants), writes them with the library's own writer, runs ``symverify verify/info/compile`` (in
process through :func:`symverify.cli.main`, and a few real subprocesses) with each method and
budget flag, and asserts that the exit code is the API's verdict (0 proved, 1 refuted, 2 unknown),
that the printed text and ``--json`` are the API report's, and that a printed counterexample is the
API's and holds when re-evaluated here with plain Fraction arithmetic (the cell-by-cell definition
of docs/theory.md §1.1–§1.2 and §2, written out below, nothing shared with the library).
``prove --quick primitives --json`` is compared with the script's ``run(quick=True)`` called
in process, and ``report`` renders that run.

Part 2: every bad invocation is exit 3, one line ``symverify: error: …`` on stderr, no traceback,
no output file, and the message says what was expected, what was found and where.

Part 3: SIGTERM and Ctrl-C on a long ``prove`` subprocess exit 130 without a traceback, and the
``--json`` file left behind does not claim success.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.cli import main
from symverify.ir.serialize import dump_file, load_file, loads, to_json
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.grid import Grid
from symverify.mutate import gate_mutant, weight_mutant
from symverify.strategies import circuits, models

EXIT = {"proved": 0, "refuted": 1, "unknown": 2}
# Mutation operators without symbolic weights: a counterexample then assigns no parameters, and the
# Fraction re-check below needs none.
WEIGHT_OPS = ("inc", "neg", "zero", "one", "add_p", "frac_p", "mode")
GATE_OPS = ("op", "coeff", "coeff_p", "rewire", "outputs")
FEW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                      HealthCheck.too_slow])


def cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``main``'s exit code (returned, or argparse's ``SystemExit``), stdout and stderr."""
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code  # type: ignore[assignment]
    out = capsys.readouterr()
    return code, out.out, out.err


# ---- the definitions, written out (docs/theory.md §2 circuits, §1.1–§1.2 BaseConv) ----------------


def eval_circuit(c: Circuit, u: list[list[Fraction]]) -> list[list[Fraction]]:
    """Nodes ``0 … n·d−1`` are ``vec(u)`` row-major; gate ``k`` is node ``n·d + k``; the outputs
    fill ``y`` row-major, the rest of ``y`` is 0."""
    x = [Fraction(v) for row in u for v in row]
    for g in c.gates:
        if g.op is Op.CONST:
            x.append(Fraction(g.coeffs[0]))
        elif g.op is Op.LIN:
            x.append(Fraction(g.coeffs[0]) * x[g.args[0]] + Fraction(g.coeffs[1]) * x[g.args[1]])
        else:
            assert g.op is Op.MUL
            x.append(x[g.args[0]] * x[g.args[1]])
    flat = [x[o] for o in c.outputs] + [Fraction(0)] * (c.n * c.d - len(c.outputs))
    return [flat[i * c.d:(i + 1) * c.d] for i in range(c.n)]


def eval_model(m: Model, u: list[list[Fraction]]) -> list[list[Fraction]]:
    """Embed ``u`` in ``N'×d'``; per layer and cell ``(Σ_p x[i,p]·W[p,j] + b1[i,j]) ·
    (Σ_k h[k,j]·x[i−k,j] + b2[i,j])`` with ``k ≤ i`` (causal) or ``i − k mod N'`` (cyclic); crop."""

    def dense(g: Grid) -> list[list[Fraction]]:
        return [[Fraction(v) for v in row] for row in g.to_rows()]

    nn, dd = m.inner_n, m.inner_d
    x = [[Fraction(u[i][j]) if i < m.n and j < m.d else Fraction(0) for j in range(dd)] for i in range(nn)]
    for layer in m.layers:
        W, b1, h, b2 = dense(layer.W), dense(layer.b1), dense(layer.h), dense(layer.b2)
        lags = (lambda i: range(nn)) if layer.mode is Mode.CYCLIC else (lambda i: range(i + 1))
        x = [[sum((x[i][p] * W[p][j] for p in range(dd)), b1[i][j])
              * sum((h[k][j] * x[(i - k) % nn][j] for k in lags(i)), b2[i][j]) for j in range(dd)] for i in range(nn)]
    return [row[: m.d] for row in x[: m.n]]


def evaluate(obj: Any, u: list[list[Fraction]]) -> list[list[Fraction]]:
    return eval_circuit(obj, u) if isinstance(obj, Circuit) else eval_model(obj, u)


def recheck_counterexample(cex: dict[str, Any], lhs: Any, rhs: Any) -> None:
    """The printed counterexample holds: at its input the sides differ first (row-major) at its
    cell, with its values."""
    assert cex["params"] == {}
    u = [[Fraction(str(v)) for v in row] for row in cex["inputs"]]
    a, b = evaluate(lhs, u), evaluate(rhs, u)
    diffs = [(i, j) for i in range(len(a)) for j in range(len(a[0])) if a[i][j] != b[i][j]]
    assert diffs and list(diffs[0]) == cex["cell"], (diffs, cex)
    i, j = diffs[0]
    assert a[i][j] == Fraction(str(cex["lhs_value"])) and b[i][j] == Fraction(str(cex["rhs_value"]))


# ---- part 1: verify against sv.verify ----------------------------------------------------------


def _untimed(report_json: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report_json.items() if k != "timings"}


def _text_untimed(text: str) -> str:
    """The CLI's text with the time of its first line (``PROVED by exact [0.02 s]``) left out."""
    head, _, rest = text.rstrip("\n").partition("\n")
    head = re.sub(r" \[[^\]]*\]$", "", head)
    return head + ("\n" + rest if rest else "")


@st.composite
def pairs(draw: Any) -> tuple[str, Any, Any]:
    """Two sides of one shape: a circuit and itself or a one-gate mutant; a model and itself or a
    one-weight mutant; a circuit and its dense compilation or a one-weight mutant of that."""
    kind = draw(st.sampled_from(["circuit/circuit", "model/model", "circuit/compiled"]))
    seed = draw(st.integers(0, 2**16))
    mutate = draw(st.booleans())
    if kind == "circuit/circuit":
        c = draw(circuits(max_n=2, max_d=2, max_gates=5, min_outputs=1))
        other = gate_mutant(c, seed, GATE_OPS).obj if mutate and c.gates else c
        return kind, c, other
    if kind == "model/model":
        m = draw(models(max_n=2, max_d=2, max_layers=2))
        other = weight_mutant(m, seed, WEIGHT_OPS).obj if mutate and m.layers else m
        return kind, m, other
    c = draw(circuits(max_n=2, max_d=2, max_gates=4, min_outputs=1))
    model = sv.compile(c, method="dense").model
    other = weight_mutant(model, seed, WEIGHT_OPS).obj if mutate else model
    return kind, c, other


# (CLI flags, the API's keyword arguments, the methods they go with)
FLAGS: list[tuple[list[str], dict[str, Any], tuple[str, ...]]] = [
    ([], {}, ("auto", "exact", "exact-sympy", "randomized", "z3")),
    (["--seed", "7"], {"seed": 7}, ("auto", "randomized")),
    (["--seed", "-3"], {"seed": -3}, ("randomized",)),
    (["--trials", "5"], {"trials": 5}, ("auto", "randomized")),
    (["--timeout", "60"], {"timeout": 60.0}, ("auto", "exact", "randomized", "z3")),
    (["--backend", "python"], {"backend": "python"}, ("randomized",)),
    (["--backend", "sympy"], {"backend": "sympy"}, ("auto", "exact")),
]
COMBOS = [(flags, kw, method) for flags, kw, methods in FLAGS for method in methods]


@FEW
@given(pair=pairs(), combo=st.sampled_from(COMBOS))
def test_verify_exit_code_text_and_json_are_the_apis(tmp_path_factory, capsys, pair, combo):
    kind, lhs, rhs = pair
    flags, kw, method = combo
    d = tmp_path_factory.mktemp("v")
    a, b = str(d / "a.json"), str(d / "b.json")
    dump_file(lhs, a)
    dump_file(rhs, b)
    api = sv.verify(load_file(a), load_file(b), method=method, **kw)
    code, out, err = cli(capsys, "verify", a, b, "--method", method, *flags, "--json")
    assert err == "" and code == EXIT[api.verdict.value], (kind, out, err)
    data = json.loads(out)
    assert _untimed(data) == _untimed(api.to_json())
    code_text, text, _ = cli(capsys, "verify", a, b, "--method", method, *flags)
    assert code_text == code and _text_untimed(text) == api.text(timings=False)
    assert text.startswith(f"{api.verdict.value.upper()} by {api.method} [")
    if "bound" in api.evidence:  # the randomized bound is printed as the report states it
        assert f"error ≤ {api.evidence['bound']}" in text
    if api.counterexample is not None:
        assert data["counterexample"] == api.counterexample.to_json()
        recheck_counterexample(data["counterexample"], lhs, rhs)
        assert f"counterexample {api.counterexample}" in text
    else:
        assert data["counterexample"] is None and code != 1


def test_a_refutation_is_found_and_rechecked_end_to_end(tmp_path, capsys):
    """A pinned refutation (so the property above is not the only route to exit 1): x·y against a
    one-gate mutant x + y, every method that decides it."""
    c = Circuit(1, 2, (sv.Gate.mul(0, 1),), (2,))
    other = gate_mutant(c, 0, ("op",)).obj
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    dump_file(c, a)
    dump_file(other, b)
    for method in ("auto", "exact", "exact-sympy", "randomized", "z3"):
        api = sv.verify(c, other, method=method)
        code, out, err = cli(capsys, "verify", a, b, "--method", method, "--json")
        assert api.refuted and code == 1 and err == ""
        data = json.loads(out)
        assert data["verdict"] == "refuted" and data["counterexample"] == api.counterexample.to_json()
        recheck_counterexample(data["counterexample"], c, other)


def test_seed_fresh_is_recorded_and_reproduces_the_apis_report(tmp_path, capsys):
    """``--seed fresh`` draws a seed and records it; the API with that seed gives the same report."""
    from cases import QUARTIC_C, QUARTIC_M

    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    dump_file(QUARTIC_C, a)
    dump_file(QUARTIC_M, b)
    seeds = set()
    for _ in range(2):
        code, out, _ = cli(capsys, "verify", a, b, "--method", "randomized", "--seed", "fresh", "--json")
        data = json.loads(out)
        seeds.add(data["seed"])
        api = sv.verify(QUARTIC_C, QUARTIC_M, method="randomized", seed=data["seed"])
        assert code == 0 and _untimed(data) == _untimed(api.to_json())
    assert len(seeds) == 2


def test_trials_numeric_and_progress_flags_are_the_apis(tmp_path, capsys):
    """``--trials`` reaches the trial count (``k``), ``--numeric [DTYPE]`` adds the API's float
    cross-check, and ``--progress`` draws on stderr only: stdout is the API's report either way."""
    from cases import QUARTIC_C, QUARTIC_M

    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    dump_file(QUARTIC_C, a)
    dump_file(QUARTIC_M, b)
    for flags, kw in ((["--trials", "9"], {"trials": 9}), (["--numeric"], {"numeric": "float64"}),
                      (["--numeric", "float32"], {"numeric": "float32"}), (["--progress"], {}), (["--no-progress"], {})):
        api = sv.verify(QUARTIC_C, QUARTIC_M, method="randomized", **kw)
        code, out, err = cli(capsys, "verify", a, b, "--method", "randomized", *flags, "--json")
        assert code == 0 and _untimed(json.loads(out)) == _untimed(api.to_json()), flags
        assert "error" not in err and (err == "" or flags == ["--progress"])
    assert api.evidence["k"] == 2 and sv.verify(QUARTIC_C, QUARTIC_M, method="randomized", trials=9).evidence["k"] == 9


def test_an_expired_timeout_is_unknown_exit_2_as_in_the_api(tmp_path, capsys):
    from cases import QUARTIC_C, QUARTIC_M

    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    dump_file(QUARTIC_C, a)
    dump_file(QUARTIC_M, b)
    for method in ("auto", "exact", "randomized", "z3"):
        api = sv.verify(QUARTIC_C, QUARTIC_M, method=method, timeout=1e-9)
        code, out, _ = cli(capsys, "verify", a, b, "--method", method, "--timeout", "1e-9", "--json")
        data = json.loads(out)
        assert api.verdict.value == data["verdict"] == "unknown" and code == 2
        assert data["notes"] == list(api.notes) and data["method"] == api.method


def test_compositional_with_a_certificate_file_is_the_apis(tmp_path, capsys):
    """``--certificate``: the compiled certificate proves; a one-weight mutant of the model is
    refuted with a counterexample naming the first failing stage, as the API says."""
    from symverify.library import determinant

    c = determinant(2)
    comp = sv.compile(c, method="dense")
    mutant = weight_mutant(comp.model, 3, ("inc",)).obj
    paths = {k: str(tmp_path / f"{k}.json") for k in ("c", "m", "mut", "cert")}
    for k, obj in (("c", c), ("m", comp.model), ("mut", mutant), ("cert", comp.certificate)):
        dump_file(obj, paths[k])
    for model, obj in (("m", comp.model), ("mut", mutant)):
        api = sv.verify(c, obj, method="compositional", certificate=comp.certificate)
        code, out, _ = cli(capsys, "verify", paths["c"], paths[model], "--certificate", paths["cert"],
                           "--method", "compositional", "--json")
        data = json.loads(out)
        assert code == EXIT[api.verdict.value] and _untimed(data) == _untimed(api.to_json())
        if api.counterexample is not None:
            assert data["counterexample"]["stage"] == api.counterexample.stage
            recheck_counterexample(data["counterexample"], c, obj)
    assert code == 1  # the mutant is refuted


def test_subprocess_exit_codes_and_json_match_the_api(tmp_path):
    """The installed entry point (a real process): the same exit codes and JSON as in process."""
    from cases import QUARTIC_C, QUARTIC_M, SQUARE_C, SQUARE_M

    paths = {}
    for k, obj in (("qc", QUARTIC_C), ("qm", QUARTIC_M), ("sc", SQUARE_C), ("sm", SQUARE_M)):
        paths[k] = str(tmp_path / f"{k}.json")
        dump_file(obj, paths[k])
    cmd = [sys.executable, "-m", "symverify.cli", "verify"]
    for lhs, rhs, extra in (("qc", "qm", ["--method", "randomized", "--trials", "4"]), ("sc", "qm", ["--method", "exact"]),
                            ("qc", "qm", ["--timeout", "1e-9"])):
        api = sv.verify(load_file(paths[lhs]), load_file(paths[rhs]), method=extra[1] if extra[0] == "--method" else "auto",
                        trials=4 if "--trials" in extra else None, timeout=1e-9 if "--timeout" in extra else None)
        p = subprocess.run([*cmd, paths[lhs], paths[rhs], *extra, "--json"], capture_output=True, text=True, timeout=120)
        assert p.returncode == EXIT[api.verdict.value] and p.stderr == "", p.stderr
        assert _untimed(json.loads(p.stdout)) == _untimed(api.to_json())


# ---- info and compile against the API ------------------------------------------------------------


@FEW
@given(obj=st.one_of(circuits(max_n=3, max_d=2, max_gates=8), models(max_n=2, max_d=2, max_layers=2)))
def test_info_is_the_apis_statistics(tmp_path_factory, capsys, obj):
    path = str(tmp_path_factory.mktemp("i") / "x.json")
    dump_file(obj, path)
    code, out, err = cli(capsys, "info", path, "--json")
    data = json.loads(out)
    assert code == 0 and err == ""
    if isinstance(obj, Circuit):
        stats = sv.stats(obj).to_json()
        assert data["kind"] == "circuit" and {k: data[k] for k in stats} == json.loads(json.dumps(stats))
    else:
        assert data["kind"] == "model" and data["signature"] == list(obj.signature) and data["layers"] == obj.depth
        assert data["param_count"] == obj.param_count() and data["nonzero_params"] == obj.nonzero_param_count()
    if isinstance(obj, Circuit):  # --compile adds the API's compilation, resources against bounds
        code, out, _ = cli(capsys, "info", path, "--compile", "dense", "--json")
        compiled = json.loads(out).pop("compiled")
        assert code == 0 and compiled == json.loads(json.dumps(sv.compile(obj, method="dense").to_json()))
    code, text, _ = cli(capsys, "info", path)
    lines = text.splitlines()
    assert code == 0 and lines[0] == f"{path}: {data['kind']}"
    assert lines[1:] == [f"  {k}: {v}" for k, v in data.items() if k != "kind"]


def test_info_of_a_certificate_is_the_apis(tmp_path, capsys):
    from symverify.library import determinant

    cert = sv.compile(determinant(2), method="dense").certificate
    path = str(tmp_path / "cert.json")
    dump_file(cert, path)
    code, out, _ = cli(capsys, "info", path, "--json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "certificate" and data["stages"] == cert.num_stages
    assert data["boundaries"] == len(cert.boundaries) and data["layers"] == [b.layer for b in cert.boundaries]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(c=circuits(max_n=2, max_d=2, max_gates=4, min_outputs=1),
       how=st.sampled_from([("dense", "auto"), ("kaleidoscope", "auto"), ("kaleidoscope", "greedy"), ("kaleidoscope", "exact")]))
def test_compile_writes_what_the_api_compiles_and_it_proves(tmp_path_factory, capsys, c, how):
    method, plan = how
    d = tmp_path_factory.mktemp("c")
    cpath, mpath, certpath = str(d / "c.json"), str(d / "m.json"), str(d / "cert.json")
    dump_file(c, cpath)
    code, out, err = cli(capsys, "compile", cpath, "--method", method, "--plan", plan, "-o", mpath, "--certificate", certpath,
                         "--json")
    assert code == 0 and err == ""
    api = sv.compile(c, method=method, **({"plan": plan} if method == "kaleidoscope" else {}))
    assert json.loads(out) == json.loads(json.dumps(api.to_json()))
    model, cert = load_file(mpath), load_file(certpath)
    assert model == api.model and to_json(cert) == to_json(api.certificate)
    assert sv.verify(c, model, certificate=cert, method="compositional").proved
    code, out, _ = cli(capsys, "verify", cpath, mpath, "--method", "randomized")
    assert code == 0 and out.startswith("PROVED by randomized")


def test_compile_to_stdout_is_the_model(tmp_path, capsys):
    from symverify.library import determinant

    c = determinant(2)
    path = str(tmp_path / "c.json")
    dump_file(c, path)
    code, out, err = cli(capsys, "compile", path, "--method", "dense")
    assert code == 0 and loads(out) == sv.compile(c, method="dense").model
    assert err.startswith("dense compilation → BaseConv model")


# ---- prove and report against running the script through the API ---------------------------------


def _script_module(name: str) -> Any:
    from symverify.scripts.runner import builtin_dir

    spec = importlib.util.spec_from_file_location(f"_cli_differential_{name}", builtin_dir() / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


KEYS = ("name", "verdict", "method", "resources", "bounds", "kind", "over_bound", "ok")


def test_prove_quick_json_is_the_scripts_run_and_report_renders_it(tmp_path, capsys):
    out_json, page = tmp_path / "run.json", tmp_path / "page.html"
    code, _, err = cli(capsys, "prove", "--quick", "primitives", "-j", "1", "--json", str(out_json))
    run = json.loads(out_json.read_text(encoding="utf-8"))
    api = _script_module("primitives").run(True)
    assert code == (0 if api.ok else 1) and run["ok"] is api.ok and run["interrupted"] is False
    (script,) = run["scripts"]
    assert script["name"] == "primitives" and script["ok"] is api.ok and "primitives: ok" in err
    want = [{k: v for k, v in i.items() if k in KEYS} for i in json.loads(json.dumps(api.to_json()))["instances"]]
    got = [{k: v for k, v in i.items() if k in KEYS} for i in script["result"]["instances"]]
    assert got == want and script["counts"] == api.counts()
    code, out, _ = cli(capsys, "report", str(out_json), "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert code == 0 and out == f"wrote {page}\n" and "primitives" in html and html.lstrip().lower().startswith("<!doctype html")


# ---- part 2: every bad invocation is exit 3, one line, no traceback ---------------------------------


@pytest.fixture
def files(tmp_path):
    from cases import QUARTIC_C, QUARTIC_CERT, QUARTIC_M, SQUARE_C, SQUARE_M

    paths = {"dir": str(tmp_path / "adir"), "tmp": str(tmp_path), "missing": str(tmp_path / "missing.json")}
    os.mkdir(paths["dir"])
    for k, obj in (("c", SQUARE_C), ("m", SQUARE_M), ("qc", QUARTIC_C), ("qm", QUARTIC_M), ("cert", QUARTIC_CERT)):
        paths[k] = str(tmp_path / f"{k}.json")
        dump_file(obj, paths[k])
    text = Path(paths["c"]).read_bytes()
    paths["run"] = str(tmp_path / "run.json")
    Path(paths["run"]).write_text('{"format": "symverify.proof-run", "version": 2, "scripts": []}', encoding="utf-8")
    for k, data in (("empty", b""), ("binary", bytes(range(256))), ("truncated", text[: len(text) // 2]),
                    ("list", b"[1, 2]"), ("kind", b'{"format": "symverify.nope", "version": 1}')):
        paths[k] = str(tmp_path / f"{k}.json")
        Path(paths[k]).write_bytes(data)
    return paths


def one_line_error(capsys: Any, *argv: str) -> str:
    code, out, err = cli(capsys, *argv)
    assert code == 3, (code, out, err)
    assert err.startswith("symverify: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


BAD = [
    # unreadable inputs: each says which file and what is wrong with it
    (("verify", "{c}", "{dir}"), r"cannot read .*adir: expected a regular file, found a directory"),
    (("verify", "{c}", "/dev/null"), r"cannot read /dev/null: expected a regular file, found a character device"),
    (("verify", "{empty}", "{m}"), r"empty.json: not valid JSON"),
    (("verify", "{c}", "{binary}"), r"binary.json: not UTF-8 text: byte 0x80 at offset 128"),
    (("verify", "{c}", "{truncated}"), r"truncated.json: not valid JSON \(truncated\?\)"),
    (("verify", "{c}", "{list}"), r"list.json: document: expected a JSON object, found list"),
    (("verify", "{c}", "{kind}"), r"kind.json: document.format: expected one of 'symverify.circuit'"),
    (("info", "{dir}"), r"expected a regular file, found a directory"),
    (("info", "{truncated}"), r"not valid JSON"),
    (("compile", "{missing}"), r"cannot read .*missing.json"),
    (("compile", "{binary}"), r"not UTF-8 text"),
    (("report", "{c}"), r"c.json: expected a proof run"),
    (("report", "{dir}"), r"expected a regular file, found a directory"),
    (("verify", "{c}", "{m}", "--certificate", "{truncated}"), r"truncated.json: not valid JSON"),
    # the wrong kind of file
    (("compile", "{cert}"), r"cert.json: expected a circuit to compile, found a Certificate"),
    (("info", "{m}", "--compile", "dense"), r"m.json: expected a circuit to compile, found a Model"),
    (("verify", "{qc}", "{cert}"), r"cert.json is a certificate; pass it with --certificate"),
    (("prove", "--quick", "primitives", "--golden", "{c}"), r"c.json: expected a run written by symverify prove --json"),
    # unknown flags and values
    (("verify", "{c}", "{m}", "--bogus"), r"unrecognized arguments: --bogus"),
    (("info", "{c}", "--compile", "magic"), r"argument --compile: invalid choice: 'magic'"),
    (("compile", "{c}", "--method", "exact"), r"argument --method: invalid choice: 'exact'"),
    (("verify", "{c}", "{m}", "--backend", "gpu"), r"argument --backend: invalid choice: 'gpu'"),
    (("verify", "{c}", "{m}", "--numeric", "float16"), r"argument --numeric: invalid choice: 'float16'"),
    (("verify", "{c}", "{m}", "--seed", "nan"), r"expected an integer \(digits 0-9, an optional sign\) or 'fresh', found 'nan'"),
    (("report",), r"the following arguments are required: RUN.json"),
    (("prove", "--quick", "nope"), r"unknown proof script\(s\) nope; available: "),
    (("sweep", "nope"), r"no sweep 'nope'; available: thm_h21"),
    (("prove", "--quick", "{missing_py}"), r"missing.py: no such proof script file"),
    # budgets out of range
    (("verify", "{c}", "{m}", "--trials", "0"), r"trials: expected a positive int, found 0"),
    (("verify", "{c}", "{m}", "--method", "randomized", "--trials", "-4"), r"trials: expected a positive int, found -4"),
    (("verify", "{c}", "{m}", "--trials", "nan"), r"argument --trials: expected an integer \(digits 0-9, an optional sign\), found 'nan'"),
    (("prove", "--quick", "primitives", "-j", "0"), r"-j: expected a positive number of processes, found 0"),
    (("prove", "--quick", "cor_h20_linear", "-j", "99999999999"),  # built 10^11 shards before running any (hung)
     r"-j: expected at most 1024 processes at once .*found 99999999999"),
    (("sweep", "thm_h21", "-j", "1025"), r"-j: expected at most 1024 processes"),
    (("prove", "--quick", "primitives", "--scheduler", "local", "--cases-per-task", "0"),
     r"--cases-per-task: expected a positive number, found 0"),
    (("sweep", "thm_h21", "--depths", "0"), r"--depths: expected positive integers, found '0'"),
    # flags that do not go together
    (("verify", "{c}", "{m}", "--method", "exact", "--backend", "python"), r"backend='python' picks the randomized engine"),
    (("verify", "{c}", "{m}", "--method", "exact", "--scheduler", "local"), r"scheduler: runs the compositional stage checks"),
    (("prove", "--quick", "primitives", "--cases-per-task", "2"), r"--cases-per-task is for Dask runs \(--scheduler\)"),
    (("prove", "--quick", "primitives", "--update-golden"), r"--update-golden needs --golden RUN.json"),
    # outputs that cannot be written, refused before any work
    (("compile", "{c}", "-o", "{dir}"), r"-o .*adir: expected a file path, found a directory"),
    (("prove", "--quick", "primitives", "--junit", "{tmp}/nope/j.xml"), r"--junit .*j.xml: the directory .*nope does not exist"),
    (("prove", "--quick", "primitives", "--golden", "{tmp}/nope/g.json", "--update-golden"),
     r"--golden .*g.json: the directory .*nope does not exist"),
    (("sweep", "thm_h21", "--json", "{dir}"), r"--json .*adir: expected a file path, found a directory"),
    # were ignored or misread: --trials and an exact --backend on methods that never read them, two
    # outputs on one file (the second write replaced the first), --list with a run's outputs, a file as --dir
    (("verify", "{qc}", "{qm}", "--certificate", "{cert}", "--method", "exact"),
     r"--certificate .*cert.json: only methods auto and compositional check a stage certificate; found --method exact"),
    (("verify", "{qc}", "{qm}", "--certificate", "{cert}", "--method", "randomized"), r"found --method randomized"),
    (("verify", "{qc}", "{qc}", "--certificate", "{cert}"),  # named the Python keyword: "verify certificate=: ..."
     r"--certificate .*cert.json: a stage certificate belongs to a model, but neither .*qc.json \(Circuit\) nor "
     r".*qc.json \(Circuit\) is a model"),
    (("verify", "{c}", "{m}", "--method", "exact", "--trials", "5"),
     r"--trials 5: sets the randomized trials, which only methods auto and randomized run; found --method exact"),
    (("verify", "{c}", "{m}", "--method", "z3", "--trials", "3"), r"--trials 3: .* found --method z3"),
    (("verify", "{qc}", "{qm}", "--certificate", "{cert}", "--method", "compositional", "--trials", "2"),
     r"--trials 2: .* found --method compositional"),
    (("verify", "{c}", "{m}", "--method", "randomized", "--backend", "flint"),
     r"--backend flint: an exact engine, which only methods auto, exact, exact-sympy, compositional use; found --method "
     r"randomized"),
    (("verify", "{c}", "{m}", "--method", "z3", "--backend", "sympy"), r"--backend sympy: an exact engine, .* found --method z3"),
    (("compile", "{c}", "-o", "{tmp}/x.json", "--certificate", "{tmp}/./x.json"),
     r"-o and --certificate name the same file .*x.json: expected two different paths"),
    (("prove", "--quick", "primitives", "--json", "{tmp}/r.json", "--junit", "{tmp}/r.json"),
     r"--json and --junit name the same file"),
    (("prove", "--quick", "primitives", "--json", "{tmp}/g.json", "--golden", "{tmp}/g.json", "--update-golden"),
     r"--json and --golden name the same file"),
    (("prove", "--quick", "primitives", "--json", "{tmp}/g.json", "--golden", "{tmp}/g.json"),
     r"--json and --golden name the same file"),  # the run replaced the golden file it was compared with
    (("compile", "{c}", "-o", "{c}"), r"CIRCUIT.json and -o name the same file .*c.json"),
    (("compile", "{c}", "-o", "{tmp}/out.json", "--certificate", "{c}"), r"CIRCUIT.json and --certificate name the same file"),
    (("report", "{run}", "-o", "{run}"), r"RUN.json and -o name the same file .*run.json"),
    (("prove", "--quick", "primitives", "--timings"), r"--timings keeps times in the run JSON, and this run writes none"),
    (("sweep", "thm_h21", "--timings", "--junit", "{tmp}/j.xml"), r"--timings keeps times in the run JSON"),
    (("prove", "--quick", "primitives", "-j", "4", "--scheduler", "tcp://127.0.0.1:1"),
     r"-j 4: sets the processes here or the workers of --scheduler local; the cluster at --scheduler tcp://127.0.0.1:1 "
     r"has its own workers"),
    (("prove", "--list", "--json", "{tmp}/l.json"), r"--list prints the scripts and runs none, so it writes no run: leave out --json"),
    (("prove", "--list", "--golden", "{c}", "--junit", "{tmp}/j.xml"), r"leave out --junit, --golden"),
    (("prove", "--quick", "primitives", "--dir", "{c}"), r"proof directory .*c.json: expected a directory of NAME.py scripts, "
                                                         r"found a file"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_invocations_are_one_line_errors(files, capsys, tmp_path, argv, message):
    fmt = {**files, "missing_py": str(tmp_path / "missing.py")}
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    err = one_line_error(capsys, *(a.format(**fmt) for a in argv))
    assert re.search(message, err), err
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before  # nothing written or changed


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files without read permission")
def test_an_unreadable_file_is_a_one_line_error(files, capsys):
    os.chmod(files["m"], 0)
    try:
        err = one_line_error(capsys, "verify", files["c"], files["m"])
    finally:
        os.chmod(files["m"], 0o644)
    assert "cannot read" in err and "m.json" in err and "Permission denied" in err


# ---- part 3: Ctrl-C and SIGTERM on a long prove ------------------------------------------------------


def _children(pid: int) -> list[str]:
    """The processes that any thread of ``pid`` started (the runner starts scripts from a thread)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += (task / "children").read_text(encoding="utf-8").split()
        except OSError:
            pass
    return found


def _default_sigint() -> None:
    """``preexec_fn`` of a child that a test interrupts: SIGINT as a terminal's foreground job has it.
    A launcher that ignores SIGINT (a shell's background job, ``pytest ... &``) passes SIG_IGN on to
    its children, and Python installs no KeyboardInterrupt handler where SIGINT is ignored at startup."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_the_interrupted_child_gets_pythons_sigint_handler_even_when_the_tests_ignore_sigint():
    code = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        inherited = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        reset = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                               preexec_fn=_default_sigint).stdout
    finally:
        signal.signal(signal.SIGINT, previous)
    assert inherited.strip() == "False" and reset.strip() == "True"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see when the run has started")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_interrupted_prove_exits_130_and_leaves_no_json_claiming_success(tmp_path, signum):
    """The CLI promises (``_interrupt``, the exit-code table): SIGTERM and Ctrl-C stop the run, exit
    130, print no traceback, and write the partial run, marked ``interrupted`` and not ok, over
    whatever the ``--json`` path held (here: a stale run that claimed success)."""
    out = tmp_path / "run.json"
    out.write_text('{"format": "symverify.proof-run", "version": 2, "ok": true, "scripts": []}', encoding="utf-8")
    p = subprocess.Popen([sys.executable, "-m", "symverify.cli", "prove", "thm_h21_general", "cor_h20_linear", "-j", "1", "--json", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)
    deadline = time.monotonic() + 30
    while not _children(p.pid) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)  # until the runner has started the script's process (the handler is installed)
    assert _children(p.pid), "the run did not start a script process"
    time.sleep(0.3)
    p.send_signal(signum)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, (p.returncode, stderr)
    assert "Traceback" not in stderr and stderr.rstrip().endswith("symverify: interrupted; the table and files above "
                                                                  "hold the scripts that finished")
    assert "INTERRUPTED" in stdout
    run = json.loads(out.read_text(encoding="utf-8"))
    assert run["ok"] is False and run["interrupted"] is True
    assert [s["status"] for s in run["scripts"]] == ["interrupted", "interrupted"]


# ---- the fixes found here, beyond the table above ------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc, where no file can be created")
@pytest.mark.parametrize("argv", [("compile", "{c}", "-o", "/proc/m.json"), ("compile", "{c}", "-o", "{tmp}/out.json", "--certificate", "/proc/c.json"),
                                  ("prove", "--quick", "primitives", "--junit", "/proc/j.xml"),
                                  ("sweep", "thm_h21", "--json", "/proc/r.json")])
def test_an_output_the_system_refuses_is_refused_before_any_work(files, capsys, argv):
    """Only a missing directory was caught before the run; a path that cannot be created (here in
    /proc, refused even to root) failed after the compilation or the whole proof run, naming no flag."""
    err = one_line_error(capsys, *(a.format(**files) for a in argv))
    flag = argv[-2]
    assert re.search(rf"{flag} /proc/\w+\.\w+: cannot write there \(", err), err
    assert not Path(files["tmp"], "out.json").exists()


def test_checking_that_an_output_can_be_written_leaves_it_as_it_was(files, capsys, tmp_path):
    from symverify.cli import _writable

    existing = tmp_path / "old.json"
    existing.write_text("keep me", encoding="utf-8")
    _writable(str(existing), "-o")
    _writable(str(tmp_path / "new.json"), "-o")
    assert existing.read_text(encoding="utf-8") == "keep me" and not (tmp_path / "new.json").exists()


def test_run_files_are_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    """``prove --json/--junit/--golden`` write through a temporary file renamed over the target: a
    write that fails (or is interrupted) leaves the previous file whole and no temporary behind,
    and the error names the flag."""
    from symverify import cli as cli_module
    from symverify.errors import UsageError

    target = tmp_path / "run.json"
    target.write_text("previous", encoding="utf-8")
    cli_module._write(str(target), "new", "--json")
    assert target.read_text(encoding="utf-8") == "new"

    def refuse(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    link = tmp_path / "link.json"
    link.symlink_to(target)
    cli_module._write(str(link), "through the link", "--json")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "through the link"
    link.unlink()
    cli_module._write(str(target), "new", "--json")

    monkeypatch.setattr(cli_module.os, "replace", refuse)
    with pytest.raises(UsageError, match=r"--json .*run.json: cannot write there \(No space left on device\)"):
        cli_module._write(str(target), "newer", "--json")
    assert target.read_text(encoding="utf-8") == "new" and [p.name for p in tmp_path.iterdir()] == ["run.json"]


@pytest.mark.parametrize("method", ["z3", "exact"])
def test_a_huge_finite_timeout_is_no_limit_as_in_the_api(files, capsys, method):
    """``--timeout 1e300`` (and anything above ~24.8 days) crashed the methods that wait for a child
    process (one poll(2) of that long overflows): an internal error, exit 3, where no limit was meant."""
    isolated = {"isolate": True} if method == "exact" else {}  # z3 always runs in a child process
    api = sv.verify(load_file(files["c"]), load_file(files["m"]), method=method, timeout=1e300, **isolated)
    assert api.proved
    code, out, err = cli(capsys, "verify", files["c"], files["m"], "--method", method, "--timeout", "1e300")
    assert code == 0 and out.startswith(f"PROVED by {method}") and err == ""


def test_the_guard_waits_in_slices(monkeypatch):
    """The child process is waited for in slices (here 0.05 s): a result after several slices is
    still received, and the timeout still strikes between slices."""
    from symverify.kernel.provers import guard

    monkeypatch.setattr(guard, "_SLICE", 0.05)
    assert guard.run_limited(time.sleep, (0.3,), memory=1 << 30, timeout=1e300).status == "ok"
    assert guard.run_limited(time.sleep, (5,), memory=1 << 30, timeout=0.2).status == "timeout"


def test_ctrl_c_while_the_command_line_is_read_is_exit_130_without_traceback(capsys, monkeypatch):
    """Ctrl-C during the imports of ``_parser`` escaped ``main`` as a KeyboardInterrupt traceback."""
    from symverify import cli as cli_module

    def interrupted() -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "_parser", interrupted)
    code, out, err = cli(capsys, "verify", "a.json", "b.json")
    assert code == 130 and out == "" and err == "symverify: interrupted\n"
