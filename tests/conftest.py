"""Shared pytest configuration: a deterministic, bounded hypothesis profile for CI, and an in-process
Dask cluster for the tests that verify on one."""

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


@pytest.fixture(autouse=True)
def _no_forced_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich colours a pipe where FORCE_COLOR or TTY_COMPATIBLE asks (many CI services set FORCE_COLOR),
    and pytest (pytester) where PY_COLORS does: the tests read plain text, so they run without these;
    a test of the coloured case sets them itself (test_output.py)."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PY_COLORS"):
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
