"""What ``verify(..., scheduler=...)`` and ``symverify prove --scheduler`` accept: ``"local"``, a Dask
scheduler's address or scheduler file, or (``verify`` only) a ``distributed.Client``. Checked when the
options are made, before anything imports ``distributed``; :func:`open_client` connects (one way for
:mod:`symverify.kernel.provers.stages_dask` and :mod:`symverify.scripts.dask_backend`)."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from symverify.errors import SerializationError, UsageError
from symverify.ir.files import read_file

__all__ = ["check_address", "is_client", "open_client"]

# scheme://host:port, the host a name, an IPv4 address or a bracketed IPv6 one ([::1], with a zone:
# [fe80::1%eth0]); or distributed's in-process address inproc://HOST/PID/N (a scheduler of
# LocalCluster(processes=False), reachable from the same process); matched whole (fullmatch: "$"
# would also take a line break at the end)
_ADDRESS = re.compile(r"inproc://[^\s/:\[\]]+/\d+/\d+|"
                      r"([a-z][a-z0-9+.-]*://)?(\[[0-9a-f:.]+(%[a-z0-9_.-]+)?\]|[^\s/:\[\]]+)(:\d+)?/?", re.IGNORECASE)


def check_address(scheduler: object, what: str = "scheduler", *, clients: bool = True) -> None:
    """Refuse a ``scheduler`` that is neither ``"local"``, an address (``tcp://host:8786``,
    ``host:8786``), a scheduler file nor (with ``clients``) a ``distributed.Client``; ``what``
    names the argument in the message. A scheduler file is a name ending in ``.json`` or any other
    path that exists (``dask scheduler --scheduler-file`` takes any name), see :func:`_is_file`."""
    if clients and is_client(scheduler):
        return
    if not isinstance(scheduler, str):
        raise UsageError(f"{what}: expected 'local', an address such as tcp://HOST:8786, a scheduler file or a "
                         f"distributed.Client; found {type(scheduler).__name__} {scheduler!r}")
    if scheduler == "local":
        return
    if _is_file(scheduler):
        _check_scheduler_file(scheduler, what)
        return
    if not _is_address(scheduler):
        raise UsageError(f"{what} {scheduler!r}: expected 'local', an address such as tcp://HOST:8786 "
                         "or a scheduler file (dask scheduler --scheduler-file FILE.json)")


_SCHEDULER_FILE_BYTES = 1 << 20
"""The most bytes of a scheduler file read (Dask writes a few hundred)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError(f"duplicate key {next(k for k in out if sum(k == j for j, _ in pairs) > 1)!r:.60}")
    return out


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def _check_scheduler_file(path: str, what: str) -> None:
    """Refuse a scheduler file that is missing, not a regular file (a FIFO would block), or not what
    ``dask scheduler --scheduler-file`` writes: UTF-8 JSON of at most 1 MiB without a byte order
    mark, a repeated key or ``NaN``, an object whose ``address`` is an address as above. A path not
    ending in ``.json`` is a file only because it exists here, so its refusal says how to mean the
    host of that name instead (``tcp://NAME:PORT``). (Only the
    standard library and :func:`symverify.ir.files.read_file` here: this module and that one are leaves of the
    trusted kernel, docs/trusted-base.md.)"""
    hint = "" if path.endswith(".json") else (f" (read as a scheduler file: a path of that name exists here; "
                                               f"for a host of that name write tcp://{path[:60]}:PORT)")

    def refuse(why: str) -> UsageError:
        return UsageError(f"{what} {path}: {why}{hint}")

    if not os.path.lexists(path):
        raise refuse("no such scheduler file")
    prefix = f"cannot read {Path(path)}: "  # read_file names the path as a Path
    try:
        raw = read_file(path, _SCHEDULER_FILE_BYTES)  # a regular file (a FIFO would block), at most 1 MiB
    except SerializationError as e:
        why = str(e)
        raise refuse(f"cannot read the scheduler file: {why[len(prefix):] if why.startswith(prefix) else why}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise refuse(f"cannot read the scheduler file: not UTF-8 text (byte {e.start}: {e.reason})") from None
    if text.startswith("\ufeff"):
        raise refuse("cannot read the scheduler file: found a byte order mark (U+FEFF) at offset 0")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise refuse(f"cannot read the scheduler file: not valid JSON: {' '.join(str(e).split())[:120]}") from None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or not _is_address(address):
        found = (f"a JSON {type(data).__name__}" if not isinstance(data, dict) else "no 'address'" if "address" not in data
                 else f"address {address!r:.60}")
        raise refuse(f"expected a scheduler file (dask scheduler --scheduler-file FILE.json: a JSON object with an "
                     f"'address' such as tcp://HOST:8786), found {found}")


def _is_file(scheduler: str) -> bool:
    """Whether ``scheduler`` names a scheduler file: it ends in ``.json`` (whether or not it exists:
    a missing one is refused as such), or it is a path that exists and has no ``://`` (``sched``,
    ``/shared/sched.txt``). A host name that is also the name of a file here is read as the file:
    give ``tcp://HOST`` to mean the host."""
    return scheduler.endswith(".json") or ("://" not in scheduler and os.path.lexists(scheduler))


def _is_address(text: str) -> bool:
    """Whether ``text`` is an address as :data:`_ADDRESS` says, all of it printable text."""
    return text.isprintable() and _ADDRESS.fullmatch(text) is not None


def is_client(x: object) -> bool:
    """Whether ``x`` looks like a ``distributed.Client`` (``submit``, ``scatter``, ``scheduler_info``)."""
    return all(callable(getattr(x, name, None)) for name in ("submit", "scatter", "scheduler_info"))


HANDSHAKE_SLACK = 5.0
"""Seconds a new client may take past its connect ``timeout``, at most that ``timeout`` again (:func:`_bounded`)."""


def _bounded(make: Callable[[], Any], timeout: float) -> Any:
    """``make()`` (a ``distributed.Client`` that connects), given up after ``timeout`` +
    min(:data:`HANDSHAKE_SLACK`, ``timeout``) seconds with a ``TimeoutError``: distributed bounds the connection by
    ``timeout`` but not the handshake after it, so a peer that accepts the connection and never
    answers (a stopped scheduler, another program on that port) held the caller for ever. The
    thread making it is left waiting; should the client come after all, that thread closes it."""
    done: dict[str, Any] = {}
    lock = threading.Lock()

    def run() -> None:
        try:
            client = make()
        except BaseException as e:  # given back to the caller below
            with lock:
                done["error"] = e
            return
        with lock:
            late = "abandoned" in done
            done["client"] = client
        if late:
            with suppress(Exception):
                client.close()

    thread = threading.Thread(target=run, name="symverify dask connect", daemon=True)
    thread.start()
    limit = timeout + min(HANDSHAKE_SLACK, timeout)
    thread.join(limit)
    with lock:
        if "client" not in done and "error" not in done:
            done["abandoned"] = True
            raise TimeoutError(f"no answer within {limit:g} s: something accepts connections "
                               "there but does not answer as a Dask scheduler")
    if "error" in done:
        raise done["error"]
    return done["client"]


_STAND_IN = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)", re.S)


def text_only_error(error: BaseException) -> tuple[str, str] | None:
    """``(type name, message)`` of the exception a Dask task raised where ``error`` is the stand-in
    Dask sends for one that does not pickle (``distributed.core.error_message``: a bare
    ``Exception(repr(original))``, so its class, attributes and traceback are lost); None for any
    other error. The message is the original's one string argument where its repr shows one, else
    the text of its arguments as shown.

    >>> text_only_error(Exception("Locked('a bug holding a lock')"))
    ('Locked', 'a bug holding a lock')
    >>> text_only_error(ValueError("Locked('x')")) is None
    True
    """
    import ast

    if type(error) is not Exception or len(error.args) != 1 or type(error.args[0]) is not str:
        return None
    m = _STAND_IN.fullmatch(error.args[0])
    if m is None:
        return None
    name, inner = m.group(1), m.group(2)
    try:
        args: Any = ast.literal_eval(f"({inner},)") if inner else ()
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return name, inner
    one = args[0] if type(args) is tuple and len(args) == 1 else None
    return name, one if type(one) is str else inner


STOP_WAIT = 0.5
"""Seconds a local worker process is given to stop at the end of :func:`open_client` before it is
killed. ``LocalCluster.close`` gives each nanny's worker 4 s (0.8 of its 5 s close timeout) to finish
gracefully, and a worker still running a task past the run's deadline used them all: a
``verify(..., scheduler="local", timeout=2)`` took 6 s. The run's answers are in by then."""


def _stop_workers(cluster: Any) -> None:
    """Close the nannies of ``cluster`` (a LocalCluster this module made) all at once, each giving
    its worker process :data:`STOP_WAIT` seconds to stop before killing it (``Nanny.close``); the
    cluster's own close then finds them closed."""
    import asyncio

    async def close_all(nannies: list[Any]) -> None:
        await asyncio.gather(*(n.close(timeout=STOP_WAIT) for n in nannies), return_exceptions=True)

    cluster.sync(close_all, list(cluster.workers.values()))


@contextmanager
def open_client(scheduler: str, workers: int | None, timeout: float, *, what: str = "scheduler",
                wait_for: int | None = None, cluster_options: Mapping[str, Any] | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` for ``scheduler`` (checked by :func:`check_address` first): a
    LocalCluster of ``workers`` one-thread processes (default: the cores) for ``"local"``, else the
    running scheduler at that address or scheduler file; closed on exit with its cluster. Waits up to
    ``timeout`` seconds for ``wait_for`` workers (default: every local worker, or one), then raises
    :class:`UsageError` naming ``what``."""

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
        elif _is_file(scheduler):
            client = _bounded(lambda: Client(scheduler_file=scheduler, timeout=timeout), timeout)
        else:
            client = _bounded(lambda: Client(scheduler, timeout=timeout), timeout)
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
                _stop_workers(cluster)
            with suppress(Exception):
                cluster.close()
