"""Adversarial use of ``verify(..., scheduler=...)``: forged or mismatched certificates, garbage
schedulers and deadlines never give ``proved`` and never a raw Python exception."""

from __future__ import annotations

from dataclasses import replace

import pytest

import symverify as sv
from symverify.errors import UsageError
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.provers.stages_dask import check_certificate_dask
from symverify.library import random_circuit

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(dask_client):
    return dask_client


@pytest.fixture(scope="module")
def pair(dask_pair):
    return dask_pair


@pytest.fixture(scope="module")
def other():
    return sv.compile(random_circuit(3, 2, 10, 4, seed=4, num_outputs=3))


def _tampered(cert: Certificate) -> Certificate:
    """The certificate with one boundary cell's constant changed (a forged stage claim)."""
    bs = list(cert.boundaries)
    for k in range(1, len(bs) - 1):
        if bs[k].cells:
            cell = bs[k].cells[0]
            bs[k] = replace(bs[k], cells=(replace(cell, const=cell.const + 1), *bs[k].cells[1:]))
            return replace(cert, boundaries=tuple(bs))
    raise AssertionError("the fixture compiles to a certificate with no inner boundary cell to forge")


def test_a_forged_stage_claim_is_not_proved(client, pair):
    c, comp = pair
    rep = sv.verify(c, comp.model, method="compositional", certificate=_tampered(comp.certificate), scheduler=client)
    assert not rep.proved


def test_the_certificate_of_another_circuit_is_not_proved(client, pair, other):
    c, comp = pair
    try:
        rep = sv.verify(c, comp.model, method="compositional", certificate=other.certificate, scheduler=client)
    except sv.SymverifyError:
        return  # refused as malformed for this pair: fine
    assert not rep.proved


def test_the_right_certificate_for_another_model_is_not_proved(client, pair, other):
    c, comp = pair
    try:
        rep = sv.verify(c, other.model, method="compositional", certificate=comp.certificate, scheduler=client)
    except sv.SymverifyError:
        return
    assert not rep.proved


def test_an_expired_deadline_is_unknown_not_proved(client, pair):
    c, comp = pair
    rep = sv.verify(c, comp.model, method="compositional", certificate=comp.certificate, scheduler=client, timeout=1e-9)
    assert rep.verdict is sv.Verdict.UNKNOWN


@pytest.mark.parametrize("scheduler", ["", "tcp://", "local ", "tcp://h:1/x/y", b"local", 3.5, ["local"]])
def test_garbage_schedulers_are_usage_errors(pair, scheduler):
    c, comp = pair
    with pytest.raises(UsageError, match="scheduler"):
        sv.verify(c, comp, scheduler=scheduler)


def test_an_impossible_port_is_a_usage_error(pair):
    c, comp = pair
    with pytest.raises(UsageError, match="scheduler"):
        check_certificate_dask(c, comp.model, comp.certificate, scheduler="tcp://127.0.0.1:99999999", connect_timeout=0.5)


def test_a_client_that_does_not_close_in_time_does_not_replace_the_result(monkeypatch):
    """Closing the client is best effort: a scheduler still cancelling tasks (after Ctrl-C) may not
    answer within Dask's close timeout, and that TimeoutError must not replace the run's outcome."""
    pytest.importorskip("distributed")
    import distributed

    from symverify.provers.dask_address import open_client

    closed = []

    class SlowClient:
        def __init__(self, *a, **kw):
            pass

        def wait_for_workers(self, n, timeout=None):
            return None

        def close(self):
            closed.append(True)
            raise TimeoutError("timed out after 20 s.")

    monkeypatch.setattr(distributed, "Client", SlowClient)
    with open_client("tcp://127.0.0.1:8786", None, 1.0) as client:
        result = isinstance(client, SlowClient)
    assert result and closed == [True]
    with pytest.raises(KeyError, match="the run's own error"), open_client("tcp://127.0.0.1:8786", None, 1.0):
        raise KeyError("the run's own error")


# ---- a deadline beyond what a wait can take: inf ("no limit") and 1e10 s were a lost task ---------
@pytest.mark.parametrize("timeout", [float("inf"), 1e10, 1e308])
def test_a_far_deadline_is_the_local_result_not_a_lost_task(client, pair, timeout):
    """The wait for each task was given the whole time left: beyond ``threading.TIMEOUT_MAX``
    (about 292 years) it raised ``OverflowError`` (``KeyError`` for ``inf``), read as a lost task:
    ``unknown`` where the local run proves."""
    c, comp = pair
    local = sv.verify(c, comp, method="compositional", timeout=timeout)
    remote = sv.verify(c, comp, method="compositional", timeout=timeout, scheduler=client)
    assert local.proved and remote.proved, remote.notes
    assert local == remote  # every field but the times (Report's ==)


class _SlowFuture:
    """A future whose waits time out ``slices`` times before its result is there."""

    def __init__(self, slices: int) -> None:
        self.slices, self.waits = slices, []

    def result(self, timeout=None):
        self.waits.append(timeout)
        if len(self.waits) <= self.slices:
            raise TimeoutError
        return ["done"]

    def done(self) -> bool:
        return len(self.waits) > self.slices


def test_a_far_deadline_is_waited_for_in_slices(monkeypatch):
    import time

    from symverify.kernel.provers import stages_dask

    monkeypatch.setattr(stages_dask, "WAIT_SLICE", 0.001)
    fut = _SlowFuture(3)
    assert stages_dask._result(fut, float("inf")) == ["done"]
    assert fut.waits == [0.001] * 4
    fut = _SlowFuture(3)
    assert stages_dask._result(fut, time.monotonic() + 3600) == ["done"] and max(fut.waits) == 0.001
    with pytest.raises(TimeoutError):  # the deadline itself still stops the wait
        stages_dask._result(_SlowFuture(10**9), time.monotonic() + 0.05)
    with pytest.raises(TimeoutError):  # a task that raised TimeoutError itself is not waited for again
        stages_dask._result(type("F", (_SlowFuture,), {"done": lambda self: True})(5), float("inf"))


def test_a_scheduler_not_reached_before_the_deadline_is_a_timeout(pair):
    """With a ``timeout``, an unreachable scheduler was waited for the whole ``connect_timeout``
    (10 s by default) past the deadline and then a usage error (exit 3); the wait stops at the
    deadline, and the check is ``unknown`` with ``timeout``, as the local check at its deadline."""
    import time

    c, comp = pair
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler="tcp://127.0.0.1:9",
                                 deadline=time.monotonic() + 0.5, connect_timeout=30)
    assert not res.ok and res.failure is None and res.stopped == "timeout" and res.stages_checked == 0
    report = sv.verify(c, comp, method="compositional", scheduler="tcp://127.0.0.1:9", timeout=0.5)
    assert report.verdict == sv.Verdict.UNKNOWN and "timeout" in " ".join(report.notes)
