"""The Dask stage checks' answers under attack: what a worker sends back is taken only when it is
this version's answer for the stages asked; anything else leaves the verdict unknown, never proved."""

from __future__ import annotations

import pytest

import symverify as sv
import symverify._version
from symverify.errors import UsageError
from symverify.kernel.provers import stages_dask
from symverify.kernel.provers.stages_dask import check_certificate_dask

distributed = pytest.importorskip("distributed")


def test_a_worker_with_another_version_is_unknown_not_proved(dask_client, dask_pair, monkeypatch):
    """Each worker checks its stages with its own installed symverify: one of another version (older,
    without a soundness fix) answered ``proved`` for its stages, and that was taken as this
    version's proof. The worker's version is read where the task runs (here: in-process)."""
    c, comp = dask_pair
    assert check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client).ok  # the same version
    monkeypatch.setattr(symverify._version, "__version__", "0.0.1+other")
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client, stages_per_task=1)
    assert not res.ok and res.failure is None and res.stopped == "crashed"
    assert res.stages_checked == 0
    assert "symverify 0.0.1+other" in res.notes[0] and f"has {stages_dask.__version__}" in res.notes[0]
    report = sv.verify(c, comp, method="compositional", scheduler=dask_client)
    assert report.verdict.value == "unknown" and not report.proved
    assert any("0.0.1+other" in n for n in report.notes)


@pytest.mark.parametrize("answer", [None, [], ("0.1.0",), {"stage": 0}])
def test_a_malformed_answer_is_unknown_not_proved(dask_client, dask_pair, monkeypatch, answer):
    c, comp = dask_pair
    monkeypatch.setattr(stages_dask, "versioned_stages", lambda *args: answer)
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client)
    assert not res.ok and res.failure is None and res.stopped == "crashed"


def test_workers_for_a_running_scheduler_is_refused_not_ignored(dask_client, dask_pair):
    """``workers`` sizes the local cluster; with a client or an address it was silently ignored."""
    from symverify.scripts.dask_backend import run_scripts

    c, comp = dask_pair
    for scheduler in (dask_client, "tcp://127.0.0.1:1"):
        with pytest.raises(UsageError, match=r"workers=2: the size of the local cluster, for scheduler='local' only"):
            check_certificate_dask(c, comp.model, comp.certificate, scheduler=scheduler, workers=2)
    with pytest.raises(UsageError, match=r"workers=2: the size of the local cluster, for scheduler 'local' only"):
        run_scripts({}, [], scheduler="tcp://127.0.0.1:1", workers=2)


@pytest.mark.parametrize("body", ["none", "empty", "text", "dicts", "short", "next", "long", "early", "tuple", "subclass",
                                  "failure"])
def test_a_malformed_body_under_this_version_is_unknown(dask_client, dask_pair, monkeypatch, body):
    """An answer with this version's string but a body that is not the run's outcomes in order (none,
    another type, a stage of the next run, a stage too many, a short answer, a stage that did not prove
    followed by more) was added to the outcomes as it came: ``combine`` raised ``ProverError``, or an
    ``AttributeError`` or ``TypeError`` escaped the check. It is a stopped stage (unknown) now."""
    from symverify.kernel.provers.compositional import StageOutcome

    class Proved(StageOutcome):
        pass

    c, comp = dask_pair
    real = stages_dask.check_stages

    def answer(circuit, model, first, packed, last, run, wall, guard=False):  # versioned_stages's arguments
        part = real(circuit, model, first, packed, last, run, wall)
        assert len(part) >= 2 and all(o.ok for o in part)  # all proved
        return stages_dask.__version__, stages_dask.build_identity(), {
            "none": None, "empty": [], "text": "ab", "dicts": [{"stage": first}], "short": part[:1],
            "next": [StageOutcome(first + 1)], "long": [*part, StageOutcome(first + len(part))],
            "early": [StageOutcome(first, stopped="budget"), *part[1:]], "tuple": tuple(part),
            "subclass": [Proved(o.stage) for o in part],
            "failure": [StageOutcome(first, failure="no such stage")]}[body]

    monkeypatch.setattr(stages_dask, "versioned_stages", answer)
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client, stages_per_task=2)
    assert not res.ok and res.failure is None and res.stopped == "crashed", res
    assert res.stages_checked == 0
    assert "stages [0, 2) ran as a Dask task whose answer is malformed" in res.notes[0]
    report = sv.verify(c, comp, method="compositional", scheduler=dask_client)
    assert report.verdict.value == "unknown" and not report.proved


def test_answers_read_with_their_run():
    """What is taken of an answer: the run's stages in order, up to the first that did not prove."""
    from dataclasses import replace

    from symverify.kernel.provers.compositional import StageFailure, StageOutcome

    v, b = stages_dask.__version__, stages_dask.build_identity()
    ok = [StageOutcome(3), StageOutcome(4)]
    assert stages_dask._answered((v, b, ok), 3, 5) == ok
    assert stages_dask._answered([v, b, [*ok[:1], StageOutcome(4, stopped="timeout")]], 3, 5)[1].stopped == "timeout"
    assert stages_dask._answered((v, b, [StageOutcome(3, stopped="memory")]), 3, 5)[0].stopped == "memory"
    assert "stage 4 is missing" in stages_dask._answered((v, b, ok[:1]), 3, 5)
    assert "stages 4 to 5 are missing" in stages_dask._answered((v, b, ok[:1]), 3, 6)
    assert "expected stage 3 at place 0, found stage 4" in stages_dask._answered((v, b, ok[1:]), 3, 5)
    assert "the run ends at stage 3" in stages_dask._answered((v, b, ok), 3, 4)
    assert "stage 3 failed with 'wrong', no failure of that stage" in stages_dask._answered(
        (v, b, [StageOutcome(3, failure="wrong")]), 3, 5)
    other = StageFailure(4, (0, 1), "input", (0, 0), "1", "2", "differs")
    assert "no failure of that stage" in stages_dask._answered((v, b, [StageOutcome(3, failure=other)]), 3, 5)
    assert stages_dask._answered((v, b, [StageOutcome(3, failure=replace(other, stage=3))]), 3, 5)[0].failure.stage == 3
    assert "no reason in words" in stages_dask._answered((v, b, [StageOutcome(3, stopped=1)]), 3, 5)
    assert "ran on a worker with symverify b'x'" in stages_dask._answered((b"x", b, ok), 3, 5)
    assert "ran on a worker with symverify 0.0.1" in stages_dask._answered(("0.0.1", ok), 3, 5)  # a worker before builds
    assert "expected (version, build, outcomes)" in stages_dask._answered((v, ok), 3, 5)  # this version, no build


def test_a_worker_with_another_build_of_this_version_is_unknown_not_proved(dask_client, dask_pair, monkeypatch):
    """A worker's stage outcomes were taken when its version string was this one's: an edited checkout
    or another development install under one version (another trusted base) answered ``proved`` for
    its stages. The answer now carries the worker's build (a SHA-256 of its ``symverify/kernel``
    sources); another one is a stopped stage naming both, and the verdict unknown."""
    c, comp = dask_pair
    real = stages_dask.check_stages
    other = "0123456789ab" + "f" * 52

    def answer(circuit, model, first, packed, last, run, wall, guard=False):  # a worker of another build
        return stages_dask.__version__, other, real(circuit, model, first, packed, last, run, wall)

    monkeypatch.setattr(stages_dask, "versioned_stages", answer)
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client, stages_per_task=1)
    assert not res.ok and res.failure is None and res.stopped == "crashed" and res.stages_checked == 0
    mine = stages_dask.build_identity()[:12]
    assert f"trusted base (symverify/kernel) is build 0123456789ab, this process's is build {mine}" in res.notes[0]
    report = sv.verify(c, comp, method="compositional", scheduler=dask_client)
    assert report.verdict.value == "unknown" and not report.proved
    assert any("build 0123456789ab" in n for n in report.notes)


@pytest.mark.parametrize("build", [None, "", b"x" * 64, "F" * 64, 7])
def test_an_answer_without_this_build_is_not_taken(build):
    from symverify.kernel.provers.compositional import StageOutcome

    why = stages_dask._answered((stages_dask.__version__, build, [StageOutcome(0)]), 0, 1)
    assert isinstance(why, str) and "so they are not taken; install one build on every worker" in why


def test_the_build_is_the_kernel_sources(tmp_path, monkeypatch):
    """The identity hashes each kernel source file's path and bytes: a byte changed, a file renamed or
    added gives another one; it is computed once per process."""
    import shutil
    from pathlib import Path

    from symverify.kernel import build

    kernel = Path(build.__file__).resolve().parent
    copy = tmp_path / "kernel"
    shutil.copytree(kernel, copy, ignore=shutil.ignore_patterns("__pycache__"))
    fake = copy / "build.py"

    def identity():
        monkeypatch.setattr(build, "__file__", str(fake))
        stages_dask.build_identity.cache_clear()
        try:
            return stages_dask.build_identity()
        finally:
            monkeypatch.undo()
            stages_dask.build_identity.cache_clear()

    same = identity()
    assert same == stages_dask.build_identity() and len(same) == 64
    target = copy / "provers" / "outcome.py"
    target.write_bytes(target.read_bytes() + b"\n")
    edited = identity()
    assert edited != same
    target.rename(copy / "provers" / "outcome2.py")
    assert identity() not in (same, edited)
    assert stages_dask.build_identity() is stages_dask.build_identity()  # cached: one computation per process



def test_a_worker_that_cannot_read_its_kernel_sources_is_unknown_not_an_error(dask_client, dask_pair, monkeypatch):
    """The build was read inside what marks the stage check's own errors: an ``OSError`` reading the
    worker's sources was raised to the caller as a stage check's error (exit 3). No stage of a known
    build ran: the check stops, unknown."""
    c, comp = dask_pair

    def unreadable():
        raise PermissionError(13, "Permission denied", "symverify/kernel/provers/outcome.py")

    monkeypatch.setattr(stages_dask, "build_identity", unreadable)  # the worker's (one process here)
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client)
    assert not res.ok and res.failure is None and res.stopped == "crashed" and res.stages_checked == 0
    assert "could not be loaded or run on its worker (PermissionError" in res.notes[0]
