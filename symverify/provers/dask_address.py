"""What ``verify(..., scheduler=...)`` and ``symverify prove --scheduler`` accept: ``"local"``, a Dask
scheduler's address or scheduler file, or (``verify`` only) a ``distributed.Client``. Checked when the
options are made, before anything imports ``distributed``; :func:`open_client` connects (one way for
:mod:`symverify.kernel.provers.stages_dask` and :mod:`symverify.scripts.dask_backend`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from symverify.errors import UsageError

__all__ = ["check_address", "is_client", "open_client"]

_ADDRESS = re.compile(r"^([a-z][a-z0-9+.-]*://)?[^\s/:]+(:\d+)?/?$", re.IGNORECASE)


def check_address(scheduler: object, what: str = "scheduler", *, clients: bool = True) -> None:
    """Refuse a ``scheduler`` that is neither ``"local"``, an address (``tcp://host:8786``,
    ``host:8786``), an existing scheduler file (``*.json``) nor (with ``clients``) a
    ``distributed.Client``; ``what`` names the argument in the message."""
    if clients and is_client(scheduler):
        return
    if not isinstance(scheduler, str):
        raise UsageError(f"{what}: expected 'local', an address such as tcp://HOST:8786, a scheduler file or a "
                         f"distributed.Client; found {type(scheduler).__name__} {scheduler!r}")
    if scheduler == "local" or (scheduler.endswith(".json") and Path(scheduler).is_file()):
        return
    if scheduler.endswith(".json"):
        raise UsageError(f"{what} {scheduler}: no such scheduler file")
    if not _ADDRESS.match(scheduler):
        raise UsageError(f"{what} {scheduler!r}: expected 'local', an address such as tcp://HOST:8786 "
                         "or a scheduler file (dask scheduler --scheduler-file FILE.json)")


def is_client(x: object) -> bool:
    """Whether ``x`` looks like a ``distributed.Client`` (``submit``, ``scatter``, ``scheduler_info``)."""
    return all(callable(getattr(x, name, None)) for name in ("submit", "scatter", "scheduler_info"))


@contextmanager
def open_client(scheduler: str, workers: int | None, timeout: float, *, what: str = "scheduler",
                wait_for: int | None = None, cluster_options: Mapping[str, Any] | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` for ``scheduler`` (checked by :func:`check_address` first): a
    LocalCluster of ``workers`` one-thread processes (default: the cores) for ``"local"``, else the
    running scheduler at that address or scheduler file; closed on exit with its cluster. Waits up to
    ``timeout`` seconds for ``wait_for`` workers (default: every local worker, or one), then raises
    :class:`UsageError` naming ``what``."""
    import os

    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(f"{what} {scheduler}: needs Dask's distributed (pip install 'symverify[dask]')") from None
    cluster = None
    try:
        if scheduler == "local":
            cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=logging.CRITICAL, **dict(cluster_options or {}))
            client = Client(cluster, timeout=timeout)
        elif scheduler.endswith(".json"):
            client = Client(scheduler_file=scheduler, timeout=timeout)
        else:
            client = Client(scheduler, timeout=timeout)
    except Exception as e:
        if cluster is not None:
            cluster.close()
        raise UsageError(f"{what} {scheduler}: cannot connect: {' '.join(str(e).split()) or type(e).__name__}") from None
    try:
        need = wait_for if wait_for is not None else (len(cluster.workers) if cluster is not None else 1)
        try:
            client.wait_for_workers(need, timeout=timeout)
        except Exception:
            raise UsageError(f"{what} {scheduler}: no worker joined within {timeout:g} s "
                             "(start some with: dask worker ADDRESS)") from None
        yield client
    finally:
        # best effort: the run's rows are complete (or interrupted) by now, and a scheduler still
        # cancelling a task may not answer within the close timeout; that must not replace them
        with suppress(Exception):
            client.close()
        if cluster is not None:
            with suppress(Exception):
                cluster.close()
