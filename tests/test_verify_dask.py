"""``verify(..., scheduler=...)``: the compositional stage checks as Dask tasks give the local run's
report (verdict, evidence, failing stage and cell, notes), whatever the cut into tasks; a lost task
is ``unknown``, never ``proved``; a killed worker is survived; bad schedulers are refused."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.cli import main
from symverify.errors import UsageError
from symverify.ir.serialize import dump_file
from symverify.kernel.ir.certificate import Boundary, Certificate
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.provers.stages_dask import check_certificate_dask, stage_runs
from symverify.library import random_circuit
from symverify.mutate import weight_mutant

distributed = pytest.importorskip("distributed")
from conftest import local_dask_client  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with local_dask_client(2) as c:
        yield c


@pytest.fixture(scope="module")
def pair():
    c = random_circuit(4, 2, 40, 8, seed=1, num_outputs=4)
    return c, sv.compile(c)


@pytest.mark.parametrize("method", ["compositional", "auto"])
def test_the_report_is_the_local_one(client, pair, method):
    c, comp = pair
    local = sv.verify(c, comp, method=method)
    remote = sv.verify(c, comp, method=method, scheduler=client)
    assert remote.proved and remote.method == "compositional"
    assert local == remote  # every field but the times (Report's ==)


@pytest.mark.parametrize("seed", range(3))
def test_a_mutant_fails_at_the_same_stage_and_cell(client, pair, seed):
    c, comp = pair
    bad = weight_mutant(comp.model, seed, ("inc", "neg", "zero")).obj
    local = sv.verify(c, bad, method="compositional", certificate=comp.certificate)
    remote = sv.verify(c, bad, method="compositional", certificate=comp.certificate, scheduler=client)
    assert not local.proved and not remote.proved
    assert local == remote  # every field but the times (Report's ==)
    assert remote.evidence["failed_stage"] == local.evidence["failed_stage"]


@settings(max_examples=5, deadline=None)
@given(st.integers(1, 12))
def test_any_cut_into_tasks_gives_the_local_result(client, pair, per_task):
    c, comp = pair
    cert = comp.certificate
    local = check_certificate(c, comp.model, cert)
    remote = check_certificate_dask(c, comp.model, cert, scheduler=client, stages_per_task=per_task)
    assert replace(remote, seconds=0.0) == replace(local, seconds=0.0)
    bad = weight_mutant(comp.model, per_task, ("inc",)).obj
    assert replace(check_certificate_dask(c, bad, cert, scheduler=client, stages_per_task=per_task), seconds=0.0) == \
        replace(check_certificate(c, bad, cert), seconds=0.0)


@given(st.lists(st.integers(0, 5), min_size=1, max_size=30), st.integers(1, 9), st.one_of(st.none(), st.integers(1, 7)))
def test_stage_runs_cover_every_stage_once_in_order(gaps, tasks, per_task):
    layers = [0]
    for g in gaps:
        layers.append(layers[-1] + g)
    bs = [Boundary(layer=x, cells=()) for x in layers]
    runs = stage_runs(bs, tasks, per_task)
    flat = [k for a, b in runs for k in range(a, b)]
    assert flat == list(range(len(bs) - 1)) and all(a < b for a, b in runs)
    if per_task is not None:
        assert all(b - a <= per_task for a, b in runs)


class KilledWorker(Exception):  # noqa: N818 - the name Dask gives the error
    """Stands for ``distributed.scheduler.KilledWorker``: a task whose workers all died."""


class _LostFuture:
    def __init__(self, ok):
        self.ok = ok

    def result(self, timeout=None):
        if self.ok is not None:
            return self.ok
        raise KilledWorker("symverify-stages-x: the 4 workers that ran it died")


class _FlakyClient:
    """A client whose second task is lost for good (its workers all died)."""

    def __init__(self, real):
        self.real, self.n = real, 0

    def scheduler_info(self):
        return self.real.scheduler_info()

    def scatter(self, objs, **kw):
        return objs

    def submit(self, fn, *args, **kw):
        self.n += 1
        return _LostFuture(fn(*args) if self.n != 2 else None)

    def cancel(self, futures):
        pass


def test_a_task_lost_for_good_is_unknown_never_proved(client, pair):
    c, comp = pair
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=_FlakyClient(client), stages_per_task=5)
    assert not res.ok and res.failure is None and res.stopped == "crashed" and res.stages_checked == 5
    assert "KilledWorker" in res.notes[0] and "stages [5, 10)" in res.notes[0]


def test_a_killed_worker_is_survived(pair):
    c, comp = pair
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.CRITICAL) as cluster, distributed.Client(cluster) as cl:
        pids = cl.run(os.getpid)
        killed: list[str] = []

        def kill_a_busy_worker() -> None:
            end = time.monotonic() + 60
            while time.monotonic() < end and not killed:
                for addr, keys in cl.processing().items():
                    if any(str(k).startswith("symverify-stages") for k in keys):
                        os.kill(pids[addr], signal.SIGKILL)
                        killed.append(addr)
                        return
                time.sleep(0.002)

        t = threading.Thread(target=kill_a_busy_worker)
        t.start()
        res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=cl, stages_per_task=1)
        t.join()
    assert killed, "no stage task was seen running"
    assert res.ok and res.stages_checked == res.stages_total


@pytest.mark.parametrize(("scheduler", "match"), [
    ("not an address!", "expected 'local', an address"),
    ("missing.json", "no such scheduler file"),
    (42, "expected 'local', an address .* found int 42"),
])
def test_bad_schedulers_are_refused(pair, scheduler, match):
    c, comp = pair
    with pytest.raises(UsageError, match=match):
        sv.verify(c, comp, scheduler=scheduler)


def test_a_scheduler_for_another_method_is_refused(pair):
    c, comp = pair
    with pytest.raises(UsageError, match="applies to methods 'compositional' and 'auto'; found method 'exact'"):
        sv.verify(c, comp, method="exact", scheduler="local")


def test_auto_without_a_certificate_says_the_scheduler_was_not_used(client):
    c = random_circuit(2, 2, 6, 3, seed=0, num_outputs=2)
    rep = sv.verify(c, c, scheduler=client)
    assert rep.proved and any("scheduler was not used" in n for n in rep.notes)


def test_bad_task_sizes_are_refused(client, pair):
    c, comp = pair
    with pytest.raises(UsageError, match="stages_per_task: expected a positive int, found 0"):
        check_certificate_dask(c, comp.model, comp.certificate, scheduler=client, stages_per_task=0)


def test_an_unreachable_scheduler_is_a_usage_error(pair):
    c, comp = pair
    with pytest.raises(UsageError, match=r"cannot connect|no worker joined"):
        check_certificate_dask(c, comp.model, comp.certificate, scheduler="tcp://127.0.0.1:9", connect_timeout=0.5)


def test_a_malformed_certificate_raises_before_any_task(client, pair):
    c, comp = pair
    bs = comp.certificate.boundaries
    with pytest.raises(sv.IRError, match="boundaries must run from layer 0"):
        check_certificate_dask(c, comp.model, Certificate(bs[1:]), scheduler=client)


def test_cli_scheduler(client, pair, tmp_path, capsys):
    c, comp = pair
    for name, obj in (("c.json", c), ("m.json", comp.model), ("cert.json", comp.certificate)):
        dump_file(obj, tmp_path / name)
    args = ["verify", str(tmp_path / "c.json"), str(tmp_path / "m.json"), "--certificate", str(tmp_path / "cert.json")]
    assert main([*args, "--scheduler", client.scheduler.address]) == 0
    assert "PROVED by compositional" in capsys.readouterr().out
    assert main([*args, "--scheduler", "bad address!"]) != 0
    assert "expected 'local', an address" in capsys.readouterr().err


def test_no_large_graph_warning_for_the_data_kept_in_the_graph(client, pair):
    """Tasks carry their layers and boundaries inside the graph (so a killed worker's task can run
    again); Dask's large-graph hint is silenced for exactly that submission, nothing else."""
    import warnings

    import dask

    c, comp = pair
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1B"}), warnings.catch_warnings():
        warnings.simplefilter("error")
        res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=client, stages_per_task=5)
        assert res.ok
        with pytest.warns(UserWarning, match="Sending large graph"):
            client.submit(len, [0] * 1000).result()
