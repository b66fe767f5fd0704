"""What ``verify(..., scheduler=...)`` accepts (:mod:`symverify.provers.stages_dask` runs it):
``"local"``, a Dask scheduler's address or scheduler file, or a ``distributed.Client``. Checked when
the options are made, before anything imports ``distributed``."""

from __future__ import annotations

import re
from pathlib import Path

from symverify.errors import UsageError

__all__ = ["check_address", "is_client"]

_ADDRESS = re.compile(r"^([a-z][a-z0-9+.-]*://)?[^\s/:]+(:\d+)?/?$", re.IGNORECASE)


def check_address(scheduler: object) -> None:
    """Refuse a ``scheduler`` that is neither ``"local"``, an address (``tcp://host:8786``,
    ``host:8786``), an existing scheduler file (``*.json``) nor a ``distributed.Client``."""
    if is_client(scheduler):
        return
    if not isinstance(scheduler, str):
        raise UsageError(f"scheduler: expected 'local', an address such as tcp://HOST:8786, a scheduler file or a "
                         f"distributed.Client; found {type(scheduler).__name__} {scheduler!r}")
    if scheduler == "local" or (scheduler.endswith(".json") and Path(scheduler).is_file()):
        return
    if scheduler.endswith(".json"):
        raise UsageError(f"scheduler {scheduler}: no such scheduler file")
    if not _ADDRESS.match(scheduler):
        raise UsageError(f"scheduler {scheduler!r}: expected 'local', an address such as tcp://HOST:8786 "
                         "or a scheduler file (dask scheduler --scheduler-file FILE.json)")


def is_client(x: object) -> bool:
    """Whether ``x`` looks like a ``distributed.Client`` (``submit``, ``scatter``, ``scheduler_info``)."""
    return all(callable(getattr(x, name, None)) for name in ("submit", "scatter", "scheduler_info"))
