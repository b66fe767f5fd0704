"""``verify(..., method="compositional", scheduler=...)`` where coefficients may exceed
``IN_PROCESS_BITS`` (2^20) bits: each Dask task checks its stages in a memory-limited child
process, as the local check then runs whole in one. Stages are planned by monomial counts, blind to
coefficient size, so a huge constant was expanded in the worker itself: a FLINT abort killed the
worker (and, retried, the next ones) instead of ending as ``unknown``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import symverify as sv
from symverify.kernel.provers import guard
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.provers.exact import IN_PROCESS_BITS
from symverify.kernel.provers.stages_dask import check_certificate_dask

pytest.importorskip("distributed")
from conftest import local_dask_client
from test_robustness_holes import squared_constant

TESTS = str(Path(__file__).parent)

@pytest.fixture(scope="module")
def client():
    with local_dask_client(1) as c:  # in-process workers: the spy below sees their calls
        yield c


@pytest.fixture(scope="module")
def pair():
    c = squared_constant(21)  # one monomial, a coefficient of 2^21 + 1 bits: past the threshold
    return c, sv.compile(c)


def _running(dask_worker) -> int:  # type: ignore[no-untyped-def]
    """Tasks the worker's threads still run, those the scheduler cancelled included (they are no
    longer in ``client.processing()`` but go on in their thread)."""
    return len(dask_worker.state.executing) + len(dask_worker.state.long_running)


def _idle(client) -> None:
    """Wait until the worker runs no task: a run cancelled after a stage that did not prove may still
    be running in it, and would call the next test's spy."""
    end = time.monotonic() + 120
    while (any(client.processing().values()) or any(client.run(_running).values())) and time.monotonic() < end:
        time.sleep(0.05)


@pytest.fixture
def children(monkeypatch, client):
    """What each memory-limited child started is for (``what``), the children still started."""
    _idle(client)
    started: list[str] = []
    real = guard.run_limited

    def spy(fn, args, **kw):
        started.append(kw.get("what", ""))
        return real(fn, args, **kw)

    monkeypatch.setattr(guard, "run_limited", spy)
    return started


def test_each_task_checks_its_stages_in_a_memory_limited_child(client, pair, children):
    c, comp = pair
    report = sv.verify(c, comp, method="compositional", timeout=60, scheduler=client)
    assert report.proved, report.notes
    assert children and all(w.startswith("the check of stages [") for w in children), children
    assert sv.verify(c, comp, method="compositional", timeout=60).proved


def test_a_child_that_stops_makes_the_check_unknown(client, pair, monkeypatch):
    c, comp = pair
    monkeypatch.setattr(guard, "run_limited", lambda fn, args, **kw: guard.Limited("memory", detail="out of memory"))
    report = sv.verify(c, comp, method="compositional", timeout=60, scheduler=client)
    _idle(client)
    assert report.verdict.value == "unknown"
    assert ("ran in a memory-limited process (their coefficients may exceed 2^20 bits) that stopped (memory): "
            "out of memory") in " | ".join(report.notes)


def test_small_coefficients_or_isolate_false_start_no_child(client, pair, children):
    c, comp = pair
    assert sv.verify(c, comp, method="compositional", isolate=False, timeout=60, scheduler=client).proved
    small = squared_constant(3)
    assert sv.verify(small, sv.compile(small), method="compositional", timeout=60, scheduler=client).proved
    assert children == []


def test_a_direct_call_guards_with_the_bound_it_is_given(client, pair, children):
    c, comp = pair
    args = (c, comp.model, comp.certificate)
    assert check_certificate_dask(*args, scheduler=client, peak_height_bits=IN_PROCESS_BITS).ok
    assert children == []
    assert check_certificate_dask(*args, scheduler=client, peak_height_bits=IN_PROCESS_BITS + 1).ok
    assert children and check_certificate(*args).ok


def test_a_coarse_certificate_over_a_constant_squared_64_times_ends_unknown():
    """In a fresh interpreter (an abort would end the test run): the one stage over the whole model
    ends in its limited child, the worker and the caller live on."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, TESTS)
        import symverify as sv
        from conftest import local_dask_client
        from symverify.kernel.ir.certificate import Certificate
        from test_robustness_holes import squared_constant
        c = squared_constant(64)
        comp = sv.compile(c)
        coarse = Certificate((comp.certificate.boundaries[0], comp.certificate.boundaries[-1]))
        with local_dask_client(1) as client:
            r = sv.verify(c, comp.model, certificate=coarse, method="compositional", timeout=5, scheduler=client,
                          memory_limit=1 << 30)
            print(r.verdict.value, " | ".join(r.notes))
    """).replace("TESTS", repr(TESTS))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("unknown certificate check stopped"), out.stdout
