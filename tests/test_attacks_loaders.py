"""Attacks on the file loaders that tests/test_loader_robustness.py and test_robustness_holes.py do
not already make: the strict reader of proof runs and golden runs (:func:`read_json_file`), and
documents that load but must not verify (a model too large to hold, a certificate that lies)."""

import json

import pytest

import symverify as sv
from symverify.errors import IRError, LimitError, SerializationError, UsageError
from symverify.ir.serialize import loads, read_json_file, to_json
from symverify.scripts.runner import load_run
from symverify.viz.resources import load_run as load_run_for_plots

RUN = {"format": "symverify.proof-run", "version": 2, "quick": True, "ok": False, "interrupted": False, "scripts": []}


@pytest.fixture
def circuit():
    return sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)


# ---- read_json_file: what json.loads alone accepted silently -------------------------------------
@pytest.mark.parametrize("text, message", [
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ('{"a": NaN}', "NaN is not a JSON number"),
    ('{"a": -Infinity}', "-Infinity is not a JSON number"),
    ('{"a": [' + "[" * 100 + "]" * 100 + "]}", "nested 102 levels deep"),
    ('{"a": ' + "9" * 5000 + "}", "a: expected an integer of at most"),
    ('{"a": 1', "not valid JSON (truncated?)"),
])
def test_read_json_file_is_strict(tmp_path, text, message):
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SerializationError, match=r"x\.json: cannot read the thing: ") as e:
        read_json_file(path, "the thing")
    assert message in str(e.value)


def test_read_json_file_keeps_what_proof_runs_hold(tmp_path):
    """Floats (6-digit resources) and ints beyond 2^63 (jsonable writes ints up to ~480 digits) stay readable."""
    path = tmp_path / "x.json"
    path.write_text('{"f": 0.123456, "big": ' + "9" * 100 + ', "s": "é"}', encoding="utf-8")
    assert read_json_file(path, "x") == {"f": 0.123456, "big": int("9" * 100), "s": "é"}


@pytest.mark.parametrize("loader", [load_run, load_run_for_plots])
def test_run_loaders_refuse_repeated_keys(tmp_path, loader):
    """A golden or plotted run with a repeated key used to keep the last value without a word."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN)[:-1] + ', "scripts": [{"name": "x"}]}', encoding="utf-8")
    with pytest.raises(SerializationError, match="duplicate key 'scripts'"):
        loader(path)
    path.write_text(json.dumps(RUN), encoding="utf-8")
    assert loader(path)["scripts"] == []


def test_plot_loader_refuses_a_character_device():
    """``plot_resources``/``write_report`` read ``/dev/zero`` forever before."""
    with pytest.raises(SerializationError, match="expected a regular file, found a character device"):
        load_run_for_plots("/dev/zero")


# ---- documents that load but cannot be verified --------------------------------------------------
HUGE = 10**15


def test_a_huge_lazy_model_loads_but_verify_refuses_it_by_limit():
    grid = {"shape": [HUGE, HUGE], "fill": "1", "rects": []}
    model = loads(json.dumps({"format": "symverify.model", "version": 1, "name": "m", "n": 1, "d": 2,
                              "inner_n": HUGE, "inner_d": HUGE,
                              "layers": [{"mode": "causal", "W": grid, "b1": grid, "h": grid, "b2": grid}]}))
    c = sv.Circuit.trace(lambda u: [u[0][0], u[0][1]], n=1, d=2)
    for method in ("auto", "randomized"):
        with pytest.raises(LimitError, match="MAX_CELLS"):
            sv.verify(c, model, method=method)


def _certificate_doc(compiled):
    return to_json(compiled.certificate)


@pytest.mark.parametrize("forge, message", [
    (lambda b: b[1]["cells"].append(b[1]["cells"][0]), "is listed twice"),
    (lambda b: b[-1].update(layer=99), "boundaries must run from layer 0 to layer L"),
    (lambda b: b[1]["cells"].append([10**9, 0, 0]), "outside the 9×2 state"),
])
def test_forged_certificate_files_load_and_fail_compositional(circuit, forge, message):
    """The file format admits these; the prover's rules refuse them, and ``auto`` proves without them."""
    compiled = sv.compile(circuit)
    doc = _certificate_doc(compiled)
    forge(doc["boundaries"])
    cert = loads(json.dumps(doc))
    with pytest.raises((IRError, UsageError), match=message):
        sv.verify(circuit, compiled.model, certificate=cert, method="compositional")
    report = sv.verify(circuit, compiled.model, certificate=cert)
    assert report.proved and report.method != "compositional"
    assert any(message in n for n in report.notes)


def test_a_certificate_file_whose_layers_decrease_is_refused_when_read(circuit):
    """The file format refuses it (docs/formats.md): it was read, and only the prover refused it."""
    compiled = sv.compile(circuit)
    doc = _certificate_doc(compiled)
    doc["boundaries"][2].update(layer=0)
    with pytest.raises(SerializationError, match=r"certificate boundaries\[2\]\.layer: expected a layer ≥ \d+ .*found 0"):
        loads(json.dumps(doc))


def test_a_symbolic_exponent_of_10_18_is_decided_honestly():
    """``a^(10^18)`` loads (exponents are ints ≤ 2^63 − 1) and verify refutes it from a^(10^18+1)."""
    def doc(e):
        return json.dumps({"format": "symverify.circuit", "version": 1, "name": "e", "n": 1, "d": 1,
                           "gates": [["const", [], [{"sym": [[1, {"a": e}]]}]], ["mul", [0, 1], []]], "outputs": [2]})
    report = sv.verify(loads(doc(10**18)), loads(doc(10**18 + 1)), timeout=30)
    assert report.refuted


def test_rational_strings_as_docs_formats_states() -> None:
    """docs/formats.md, "Exact values": decimal or ``0x`` + lowercase hex parts, a sign directly
    before the numerator, spaces around the number and the ``/``; anything else is refused."""
    from fractions import Fraction

    from symverify.errors import IRError
    from symverify.ir.bigint import parse_rational

    assert parse_rational("0x1f/3") == Fraction(31, 3)
    assert parse_rational(" +1 ") == 1 and parse_rational("-1 / 2") == Fraction(-1, 2)
    for bad in ("- 1", "0X1F", "0x1F", "1e3", "1.5", "½", "1/-2", "0x"):
        with pytest.raises(IRError, match="expected a rational"):
            parse_rational(bad)
