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

# scheme://host:port, the host a name, an IPv4 address or a bracketed IPv6 one ([::1]); matched whole
# (fullmatch: "$" would also take a line break at the end)
_ADDRESS = re.compile(r"([a-z][a-z0-9+.-]*://)?(\[[0-9a-f:.]+\]|[^\s/:\[\]]+)(:\d+)?/?", re.IGNORECASE)


def check_address(scheduler: object, what: str = "scheduler", *, clients: bool = True) -> None:
    """Refuse a ``scheduler`` that is neither ``"local"``, an address (``tcp://host:8786``,
    ``host:8786``), an existing scheduler file (``*.json``) nor (with ``clients``) a
    ``distributed.Client``; ``what`` names the argument in the message."""
    if clients and is_client(scheduler):
        return
    if not isinstance(scheduler, str):
        raise UsageError(f"{what}: expected 'local', an address such as tcp://HOST:8786, a scheduler file or a "
                         f"distributed.Client; found {type(scheduler).__name__} {scheduler!r}")
    if scheduler == "local":
        return
    if scheduler.endswith(".json"):
        _check_scheduler_file(scheduler, what)
        return
    if not _ADDRESS.fullmatch(scheduler):
        raise UsageError(f"{what} {scheduler!r}: expected 'local', an address such as tcp://HOST:8786 "
                         "or a scheduler file (dask scheduler --scheduler-file FILE.json)")


def _check_scheduler_file(path: str, what: str) -> None:
    """Refuse a scheduler file that is missing, not a regular file, or not what ``dask scheduler
    --scheduler-file`` writes: strict JSON (:func:`symverify.ir.serialize.read_json_file`), an
    object whose ``address`` is an address as above."""
    from symverify.errors import SerializationError
    from symverify.ir.bigint import safe_repr
    from symverify.ir.serialize import read_json_file

    if not Path(path).exists():
        raise UsageError(f"{what} {path}: no such scheduler file")
    try:
        data = read_json_file(path, "the scheduler file")
    except SerializationError as e:
        raise UsageError(f"{what}: {e}") from None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or not _ADDRESS.fullmatch(address):
        found = (f"a JSON {type(data).__name__}" if not isinstance(data, dict) else "no 'address'" if "address" not in data
                 else f"address {safe_repr(address, 60)}")
        raise UsageError(f"{what} {path}: expected a scheduler file (dask scheduler --scheduler-file FILE.json: a JSON "
                         f"object with an 'address' such as tcp://HOST:8786), found {found}")


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
