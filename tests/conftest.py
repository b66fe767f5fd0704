"""Shared pytest configuration: a deterministic, bounded hypothesis profile for CI, tests run without the
machine's colour and symverify settings (:data:`HOST_SETTINGS`), and an in-process Dask cluster for the
tests that verify on one."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci")


HOST_SETTINGS = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PY_COLORS", "SYMVERIFY_PROGRESS", "SYMVERIFY_TRACEBACK",
                 "SYMVERIFY_NATIVE", "SYMVERIFY_CUDA_GRAPHS", "SYMVERIFY_SWEEP", "PYTEST_ADDOPTS")
"""Environment variables of the machine that change what the tests read: rich colours a pipe where
FORCE_COLOR or TTY_COMPATIBLE asks (many CI services set FORCE_COLOR), pytest (pytester) where
PY_COLORS does; ``SYMVERIFY_PROGRESS=1`` adds a progress line to stderr, ``SYMVERIFY_TRACEBACK``
turns one-line errors into tracebacks, ``SYMVERIFY_NATIVE``/``SYMVERIFY_CUDA_GRAPHS`` pick kernels
and ``SYMVERIFY_SWEEP`` is a sweep's grid; ``PYTEST_ADDOPTS`` (read by this run already) would
change the pytest runs that tests start in subprocesses."""


@pytest.fixture(autouse=True)
def _without_host_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test (and the processes it starts) runs without :data:`HOST_SETTINGS`; a test of one of
    them sets it itself (test_output.py, test_environment.py)."""
    for name in HOST_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@contextmanager
def local_dask_client(n_workers: int) -> Iterator[Any]:
    """A ``distributed.Client`` on an in-process LocalCluster of ``n_workers`` one-thread workers
    (tcp, no dashboard port), closed on exit."""
    import distributed

    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  silence_logs=logging.CRITICAL, protocol="tcp") as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    """A client of a one-worker in-process cluster for a test module (skipped without distributed)."""
    pytest.importorskip("distributed")
    with local_dask_client(1) as c:
        yield c


@pytest.fixture(scope="module")
def dask_pair() -> tuple[Any, Any]:
    """A small random circuit and its compiled model (the Dask stage tests' pair)."""
    import symverify as sv
    from symverify.library import random_circuit

    c = random_circuit(3, 2, 10, 4, seed=3, num_outputs=3)
    return c, sv.compile(c)


@pytest.fixture(params=["exact", "numpy"])
def forced(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """:func:`~symverify.kernel.provers.bounds.structure_bounds` with its exact passes only, or its
    numpy passes at every size (the bounds attacks run under both)."""
    from symverify.kernel.provers import bounds as bd

    if request.param == "exact":
        monkeypatch.setattr(bd, "_model_vector", lambda m, ring, check: None)
        monkeypatch.setattr(bd, "VECTOR_GATES", 1 << 60)
    else:
        monkeypatch.setattr(bd, "VECTOR_GATES", 0)
        real = bd.circuit_rows
        monkeypatch.setattr(bd, "circuit_rows", lambda *a, **k: real(*a, **{**k, "width": 0}))
    for memo in (bd._CIRCUIT_BOUNDS, bd._MODEL_BOUNDS, bd._PEAKS):
        memo.clear()
    return str(request.param)
