"""The symverify command: exit codes 0/1/2/3, one-line errors, --json, info, --version."""

import json
import subprocess
import sys

import pytest
from cases import QUARTIC_C, QUARTIC_CERT, QUARTIC_M, SQUARE_C, SQUARE_M

from symverify import __version__
from symverify.cli import main
from symverify.ir.serialize import dump_file
from symverify.kernel.ir.circuit import Circuit


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, obj in {"square_c": SQUARE_C, "square_m": SQUARE_M, "quartic_c": QUARTIC_C, "quartic_m": QUARTIC_M,
                      "cert": QUARTIC_CERT, "small": Circuit(2, 2, (), (0,))}.items():
        paths[name] = str(tmp_path / f"{name}.json")
        dump_file(obj, paths[name])
    (tmp_path / "broken.json").write_text('{"format": "symverify.circuit", "version": 1, "n": 1', encoding="utf-8")
    paths["broken"] = str(tmp_path / "broken.json")
    return paths


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_exit_0_proved(files, capsys):
    code, out, err = run(capsys, "verify", files["square_c"], files["square_m"])
    assert code == 0 and out.startswith("PROVED") and err == ""


def test_exit_1_refuted_with_json(files, capsys):
    code, out, _ = run(capsys, "verify", files["square_c"], files["quartic_m"], "--method", "exact", "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "refuted" and data["counterexample"]["cell"] == [0, 0]


def test_exit_2_unknown(files, capsys):
    code, out, _ = run(capsys, "verify", files["quartic_c"], files["quartic_m"], "--timeout", "1e-9")
    assert code == 2 and out.startswith("UNKNOWN")


def test_certificate_option(files, capsys):
    code, out, _ = run(capsys, "verify", files["quartic_c"], files["quartic_m"], "--certificate", files["cert"], "--json")
    assert code == 0 and json.loads(out)["method"] == "compositional"


@pytest.mark.parametrize(
    "argv,message",
    [
        (("verify", "{square_c}", "{small}"), "different shapes: lhs circuit u⊙u (3×2), rhs circuit (2×2)"),
        (("verify", "{square_c}", "{missing}"), "cannot read"),
        (("verify", "{square_c}", "{broken}"), "not valid JSON"),
        (("verify", "{cert}", "{square_m}"), "is a certificate; pass it with --certificate"),
        (("verify", "{square_c}", "{square_m}", "--certificate", "{square_c}"), "expected a certificate file"),
        (("verify", "{square_c}", "{square_m}", "--method", "compositional"), "--method compositional checks a stage certificate: pass --certificate CERT.json"),
        (("verify", "{quartic_m}", "{quartic_m}", "--certificate", "{cert}"),  # was proved by exact, the certificate unread
         "a stage certificate places a circuit's values in a model, so one side must be the circuit; found two models"),
        (("verify", "{square_c}", "{square_c}", "--certificate", "{cert}"), "a stage certificate belongs to a model, but neither"),
        (("info", "{missing}"), "cannot read"),
        (("prove", "nope", "--dir", "{dir}"), "unknown proof script(s) nope; available: "),
    ],
)
def test_exit_3_one_line_error(files, capsys, tmp_path, argv, message):
    fmt = {**files, "missing": str(tmp_path / "missing.json"), "dir": str(tmp_path)}
    code, out, err = run(capsys, *(a.format(**fmt) for a in argv))
    assert code == 3 and out == ""
    assert err.startswith("symverify: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert message in err


@pytest.mark.parametrize("argv", [(), ("verify", "only_one.json"), ("verify", "a", "b", "--method", "magic"), ("frobnicate",)])
def test_usage_errors_exit_3(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(list(argv))
    assert e.value.code == 3
    assert "symverify: error:" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"symverify {__version__}"


def test_info(files, capsys):
    code, out, _ = run(capsys, "info", files["quartic_m"])
    assert code == 0 and "model" in out and "signature: [3, 2, 2, 3, 2]" in out and "param_count" in out
    code, out, _ = run(capsys, "info", files["square_c"], "--json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "circuit" and data["size"] == 6 and data["depth"] == 1
    code, out, _ = run(capsys, "info", files["cert"])
    assert code == 0 and "certificate" in out and "stages: 2" in out


def test_console_script_exit_codes(files):
    cmd = [sys.executable, "-m", "symverify.cli"]
    refuted = subprocess.run([*cmd, "verify", files["square_c"], files["quartic_m"]], capture_output=True, text=True)
    assert refuted.returncode == 1 and "REFUTED" in refuted.stdout
    bad = subprocess.run([*cmd, "verify", files["square_c"], files["small"]], capture_output=True, text=True)
    assert bad.returncode == 3 and bad.stderr.startswith("symverify: error: ") and bad.stderr.count("\n") == 1


def test_backend_and_numeric_options(files, capsys):
    code, out, _ = run(capsys, "verify", files["square_c"], files["square_m"], "--method", "randomized",
                       "--backend", "python", "--numeric", "--json")
    data = json.loads(out)
    assert code == 0 and data["evidence"]["backend"].startswith("python")
    assert data["numeric"]["dtype"] == "float64" and data["verdict"] == "proved"
    code, _, err = run(capsys, "verify", files["square_c"], files["square_m"], "--method", "exact", "--backend", "torch")
    assert code == 3 and err.startswith("symverify: error:")


def test_compile_then_verify_round_trip(tmp_path, capsys):
    from symverify.library import determinant

    circuit, model, cert = (str(tmp_path / f) for f in ("c.json", "m.json", "cert.json"))
    dump_file(determinant(2), circuit)
    for method in ("dense", "kaleidoscope"):
        code, out, _ = run(capsys, "compile", circuit, "--method", method, "-o", model, "--certificate", cert, "--json")
        data = json.loads(out)
        assert code == 0 and data["method"] == method and data["over_bound"] == []
        code, out, _ = run(capsys, "verify", circuit, model, "--certificate", cert, "--method", "compositional")
        assert code == 0 and out.startswith("PROVED")
    code, _, err = run(capsys, "compile", model, "-o", str(tmp_path / "x.json"))
    assert code == 3 and "expected a circuit to compile, found a Model" in err


def test_compile_plan_option(tmp_path, capsys):
    """``--plan`` reaches the kaleidoscope compiler; the exact plan is never more layers than the
    greedy one; the dense method has no plan, and says so instead of ignoring it."""
    from symverify.library import wired_circuit

    circuit, model = str(tmp_path / "c.json"), str(tmp_path / "m.json")
    dump_file(wired_circuit(4, 2, "reversal", seed=0), circuit)
    layers = {}
    for plan in ("greedy", "exact", "auto"):
        code, out, _ = run(capsys, "compile", circuit, "--plan", plan, "-o", model, "--json")
        data = json.loads(out)
        assert code == 0 and data["over_bound"] == []
        layers[plan] = data["resources"]["layers"]
    assert layers["exact"] == layers["auto"] < layers["greedy"], layers
    code, _, err = run(capsys, "compile", circuit, "--method", "dense", "--plan", "exact", "-o", model)
    assert code == 3 and "--plan exact: only the kaleidoscope method plans layouts" in err and "Traceback" not in err


def test_info_with_compile(files, capsys):
    code, out, _ = run(capsys, "info", files["square_c"], "--compile", "kaleidoscope")
    assert code == 0 and "compiled (kaleidoscope): signature" in out and "stated bound" in out
    code, out, _ = run(capsys, "info", files["square_c"], "--compile", "dense", "--json")
    assert code == 0 and json.loads(out)["compiled"]["method"] == "dense"


@pytest.mark.parametrize("argv_tail, message", [
    (["-o", "{tmp}/nope/m.json"], r"-o .*/nope/m.json: the directory .*/nope does not exist"),
    (["-o", "{tmp}"], r"-o .*: expected a file path, found a directory"),
    (["-o", "{tmp}/m.json", "--certificate", "{tmp}/nope/c.json"], r"--certificate .*: the directory .* does not exist"),
])
def test_compile_refuses_unwritable_outputs_before_work(files, capsys, tmp_path, argv_tail, message):
    import re

    argv = ["compile", files["square_c"], *(a.format(tmp=tmp_path) for a in argv_tail)]
    code, _, err = run(capsys, *argv)
    assert code == 3 and re.search(message, err) and err.count("\n") == 1
    assert not (tmp_path / "m.json").exists()


def test_prove_refuses_unwritable_json_before_running(capsys, tmp_path):
    code, _, err = run(capsys, "prove", "primitives", "--quick", "--json", str(tmp_path / "nope" / "p.json"))
    assert code == 3 and "does not exist" in err


def test_python_dash_m_symverify_is_the_command(tmp_path):
    """``python -m symverify`` ran nothing ("No module named symverify.__main__"); it is the CLI, with
    its output and exit codes."""
    run = [sys.executable, "-m", "symverify"]
    ok = subprocess.run([*run, "--version"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and __version__ in ok.stdout, (ok.stdout, ok.stderr)
    c, m = tmp_path / "c.json", tmp_path / "m.json"
    dump_file(SQUARE_C, c)
    dump_file(SQUARE_M, m)
    proved = subprocess.run([*run, "verify", str(c), str(m)], capture_output=True, text=True, timeout=120)
    assert proved.returncode == 0 and "PROVED" in proved.stdout, (proved.stdout, proved.stderr)
    bad = subprocess.run([*run, "verify", str(tmp_path / "missing.json"), str(m)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 3 and bad.stderr.startswith("symverify: error: ") and "Traceback" not in bad.stderr


def test_the_trials_help_states_the_default_and_the_limit_read_from_the_constants(monkeypatch):
    """``--trials`` said only "(default: error bound 2^-100)": not that the count only adds to those the bound
    needs, nor its limit. Its help names both, read from the constants."""
    from fractions import Fraction

    from symverify.cli import _parser
    from symverify.ir import limits
    from symverify.kernel.provers.options import DEFAULT_ERROR_BOUND

    def trials_help() -> str:
        verify = _parser()._subparsers._group_actions[0].choices["verify"]  # type: ignore[union-attr]
        return " ".join(next(a.help for a in verify._actions if "--trials" in a.option_strings).split())

    assert DEFAULT_ERROR_BOUND == Fraction(1, 2**100)
    assert trials_help() == ("run at least K randomized trials (default: as many as the error bound 2^-100 needs; "
                             "K only adds to those); at most symverify.ir.limits.MAX_TRIALS = 65536")
    monkeypatch.setattr(limits, "MAX_TRIALS", 7)
    assert trials_help().endswith("MAX_TRIALS = 7")
