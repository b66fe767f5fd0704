"""A stage certificate's ``meta`` names the circuit it was written for (``"circuit"``: the
compilers write the circuit's name), and ``verify`` compares it with the circuit it is checked
against: a certificate of another circuit was checked silently, its failing stage unexplained. The
report (and ``symverify verify``) now says so in a note; the verdict is the stages' alone, about
the circuit given (a proof of an equal circuit under another name stays a proof)."""

from __future__ import annotations

import json

import pytest

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.certificate import Certificate

SQUARE = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0]], n=1, d=1, name="square")
DOUBLE = sv.Circuit.trace(lambda u: [u[0][0] + u[0][0]], n=1, d=1, name="double")  # its nodes are the square's
CUBE = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0] * u[0][0]], n=1, d=1, name="cube")  # another output node


def _note(report: sv.Report) -> list[str]:
    return [n for n in report.notes if "the certificate's meta names circuit" in n]


@pytest.mark.parametrize("method", ["compositional", "auto"])
def test_a_certificate_of_another_circuit_is_named_in_a_note(method):
    square = sv.compile(SQUARE, method="dense")
    assert dict(square.certificate.meta)["circuit"] == "square"
    report = sv.verify(DOUBLE, square.model, certificate=square.certificate, method=method)
    assert report.verdict is sv.Verdict.REFUTED  # x² ≠ 2x: the stages and the counterexample decide, not the note
    assert _note(report) == ["the certificate's meta names circuit 'square', but it is checked against circuit 'double': "
                             "every stage is checked against this circuit, so the verdict is about it (a certificate "
                             "written for another circuit fails its stages)"]
    assert report.to_json()["notes"][-1] == _note(report)[0] and _note(report)[0] in str(report)


def test_a_certificate_that_does_not_fit_the_circuit_it_is_checked_against_says_whose_it_is():
    square = sv.compile(SQUARE, method="dense")
    with pytest.raises(IRError, match=r"^certificate last boundary: output 0 \(node %2\) must sit alone at cell \(0, 0\); "
                                      r"the certificate's meta names circuit 'square', but it is checked against circuit 'cube'"):
        sv.verify(CUBE, square.model, certificate=square.certificate, method="compositional")


def test_the_circuit_it_names_gets_no_note_and_a_renamed_equal_circuit_is_still_proved():
    square = sv.compile(SQUARE, method="dense")
    same = sv.verify(SQUARE, square.model, certificate=square.certificate, method="compositional")
    assert same.proved and not _note(same)
    renamed = sv.Circuit(SQUARE.n, SQUARE.d, SQUARE.gates, SQUARE.outputs, "x²")
    other = sv.verify(renamed, square.model, certificate=square.certificate, method="compositional")
    assert other.proved and _note(other) == [
        f"the certificate's meta names circuit 'square', and it is checked against circuit 'x²' of the same digest "
        f"{other.lhs['digest']}: the same circuit under another name (every stage is checked against this circuit, so the "
        "verdict is about it)"]  # not "a certificate written for another circuit fails its stages": it is this one's
    assert "fails its stages" not in _note(other)[0]
    bare = Certificate(square.certificate.boundaries)  # no meta: nothing to compare
    assert not _note(sv.verify(DOUBLE, square.model, certificate=bare, method="compositional"))


def test_the_cli_prints_the_note(tmp_path, capsys):
    from symverify.cli import main
    from symverify.ir.serialize import dumps

    square = sv.compile(SQUARE, method="dense")
    files = {"double.json": DOUBLE, "model.json": square.model, "cert.json": square.certificate}
    for name, obj in files.items():
        (tmp_path / name).write_text(dumps(obj), encoding="utf-8")
    code = main(["verify", str(tmp_path / "double.json"), str(tmp_path / "model.json"), "--certificate",
                 str(tmp_path / "cert.json"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code != 0 and any("meta names circuit 'square'" in n and "'double'" in n for n in out["notes"])


@pytest.mark.parametrize("method", ["exact", "randomized", "z3"])
def test_a_method_that_does_not_read_the_certificate_makes_no_note_about_its_stages(method):
    # a compiled object's own certificate is read by compositional and auto only: another method checks
    # no stage, so a note saying "every stage is checked against this circuit" would state a check not made
    square = sv.compile(SQUARE, method="dense")
    renamed = sv.Circuit(SQUARE.n, SQUARE.d, SQUARE.gates, SQUARE.outputs, "x²")
    report = sv.verify(renamed, square, method=method)
    assert report.proved and not _note(report)
    assert _note(sv.verify(renamed, square, method="auto"))  # auto reads it: the note stays


def test_a_certificate_of_an_unnamed_circuit_names_none_and_an_unnamed_circuit_is_said_to_be_one():
    # the compilers write meta circuit '' for an unnamed circuit: that names no circuit, so nothing is noted;
    # checked against an unnamed circuit, a certificate naming one says so in words, not as circuit ''
    unnamed = sv.Circuit(SQUARE.n, SQUARE.d, SQUARE.gates, SQUARE.outputs, "")
    of_unnamed = sv.compile(unnamed, method="dense")
    assert dict(of_unnamed.certificate.meta)["circuit"] == ""
    assert not _note(sv.verify(SQUARE, of_unnamed, method="compositional"))
    report = sv.verify(unnamed, sv.compile(SQUARE, method="dense"), method="compositional")
    assert report.proved and _note(report) == [
        f"the certificate's meta names circuit 'square', and it is checked against an unnamed circuit of the same digest "
        f"{report.lhs['digest']}: the same circuit under another name (every stage is checked against this circuit, so "
        "the verdict is about it)"]


def test_another_circuit_of_the_same_name_is_noted_by_its_digest():
    # the compilers wrote the name alone: a certificate of another circuit called "square" got no note
    square = sv.compile(SQUARE, method="dense")
    meta = dict(square.certificate.meta)
    assert meta["circuit_digest"] == sv.verify(SQUARE, square.model, method="exact").lhs["digest"]
    impostor = sv.Circuit(DOUBLE.n, DOUBLE.d, DOUBLE.gates, DOUBLE.outputs, "square")
    report = sv.verify(impostor, square.model, certificate=square.certificate, method="compositional")
    assert report.verdict is sv.Verdict.REFUTED  # the stages decide, not the note
    digest = report.lhs["digest"]
    assert _note(report) == [f"the certificate's meta names circuit 'square' of digest '{meta['circuit_digest']}', but it is "
                             f"checked against circuit 'square' of digest {digest}: every stage is checked against this "
                             "circuit, so the verdict is about it (a certificate written for another circuit fails its stages)"]
    assert not _note(sv.verify(SQUARE, square.model, certificate=square.certificate, method="compositional"))
    assert not _note(sv.verify(impostor, square, method="exact"))  # a method that reads no stage makes no note


@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
def test_every_compiler_records_the_digest_and_the_certificate_file_keeps_it(method):
    from symverify.ir.serialize import dumps, loads

    compiled = sv.compile(CUBE, method=method)
    meta = dict(compiled.certificate.meta)
    assert meta["circuit"] == "cube"
    assert meta["circuit_digest"] == sv.verify(CUBE, compiled.model, method="exact").lhs["digest"]
    text = dumps(compiled.certificate)
    assert loads(text) == compiled.certificate
    old = json.loads(text)
    del old["meta"]["circuit_digest"]  # a certificate written before the digest was recorded
    legacy = loads(json.dumps(old))
    assert "circuit_digest" not in dict(legacy.meta)
    assert sv.verify(CUBE, compiled.model, certificate=legacy, method="compositional").proved
    impostor = sv.Circuit(SQUARE.n, SQUARE.d, SQUARE.gates, SQUARE.outputs, "cube")
    with pytest.raises(IRError):  # the cube's certificate does not fit the square's nodes, with or without the digest
        sv.verify(impostor, compiled.model, certificate=legacy, method="compositional")


def _direct_note(circuit: sv.Circuit, certificate: Certificate) -> str | None:
    """What ``verify`` notes for the pair, as ``check_certificate`` should state it."""
    from symverify.kernel.provers.certified import meta_circuit_note
    from symverify.kernel.provers.sides import pair_sides

    return meta_circuit_note(*pair_sides(circuit, sv.compile(SQUARE, method="dense").model, certificate))


@pytest.mark.parametrize("case", ["another name", "same name, another digest", "its own circuit", "renamed", "no meta"])
def test_check_certificate_called_directly_gives_the_note_verify_gives(case):
    # check_certificate gave no note at all: a certificate of another circuit failed its stages unexplained,
    # or proved a renamed one silently, where verify and the CLI said whose certificate it was
    from symverify.kernel.provers.compositional import check_certificate

    square = sv.compile(SQUARE, method="dense")
    circuit, cert = {
        "another name": (DOUBLE, square.certificate),
        "same name, another digest": (sv.Circuit(DOUBLE.n, DOUBLE.d, DOUBLE.gates, DOUBLE.outputs, "square"),
                                      square.certificate),
        "its own circuit": (SQUARE, square.certificate),
        "renamed": (sv.Circuit(SQUARE.n, SQUARE.d, SQUARE.gates, SQUARE.outputs, "x²"), square.certificate),
        "no meta": (DOUBLE, Certificate(square.certificate.boundaries)),
    }[case]
    res = check_certificate(circuit, square.model, cert)
    report = sv.verify(circuit, square.model, certificate=cert, method="compositional")
    expected = _direct_note(circuit, cert)
    assert res.meta_note == expected
    assert (expected is None) == (case in ("its own circuit", "no meta"))
    assert [n for n in report.notes if n == expected] == ([] if expected is None else [expected])
    assert res.ok is (case in ("its own circuit", "renamed"))  # the stages decide, not the note
    assert res.verdict is (sv.Verdict.PROVED if case in ("its own circuit", "renamed") else sv.Verdict.UNKNOWN)


def test_the_note_of_check_certificate_is_sealed():
    from dataclasses import replace

    from symverify.kernel.provers.compositional import check_certificate
    from symverify.kernel.provers.outcome import is_sealed

    square = sv.compile(SQUARE, method="dense")
    renamed = sv.Circuit(SQUARE.n, SQUARE.d, SQUARE.gates, SQUARE.outputs, "x²")
    res = check_certificate(renamed, square.model, square.certificate)
    assert res.ok and res.meta_note and is_sealed(res)
    assert not is_sealed(replace(res, meta_note=None))  # a note dropped (or changed) after the check unseals it


def test_check_certificate_dask_gives_the_same_note():
    pytest.importorskip("distributed")
    from dataclasses import replace

    from conftest import local_dask_client

    from symverify.kernel.provers.compositional import check_certificate
    from symverify.kernel.provers.stages_dask import check_certificate_dask

    square = sv.compile(SQUARE, method="dense")
    renamed = sv.Circuit(SQUARE.n, SQUARE.d, SQUARE.gates, SQUARE.outputs, "x²")
    with local_dask_client(1) as client:
        for circuit in (renamed, DOUBLE, SQUARE):
            local = check_certificate(circuit, square.model, square.certificate)
            remote = check_certificate_dask(circuit, square.model, square.certificate, scheduler=client)
            assert remote.meta_note == local.meta_note == _direct_note(circuit, square.certificate)
            assert replace(remote, seconds=0.0) == replace(local, seconds=0.0)


def test_a_check_stopped_by_its_deadline_still_gives_the_note():
    import time

    from symverify.kernel.provers.compositional import check_certificate

    square = sv.compile(SQUARE, method="dense")
    res = check_certificate(DOUBLE, square.model, square.certificate, deadline=time.monotonic() - 1)
    assert res.stopped == "timeout" and res.verdict is sv.Verdict.UNKNOWN
    assert res.meta_note == _direct_note(DOUBLE, square.certificate) and "names circuit 'square'" in res.meta_note
