"""Proof runs on a Dask cluster (``symverify prove/sweep --scheduler ADDRESS|local``).

The unit of work is a :class:`~symverify.scripts.tasks.Task` (script, case set, tier): a script
that is not ``SHARDABLE`` is one task; a ``SHARDABLE`` one is first counted (a ``--count-cases``
task) and then split into tasks of several cases (``--cases …``; with ``cases_per_task = c``, ``⌈n/c⌉``
tasks, by default about two per worker thread, :func:`auto_groups`; their case sets interleave:
``i mod ⌈n/c⌉``), so a sweep of hundreds of instances spreads over every worker without paying the
~0.2 s process start of a task per case. A row's time is the sum of its tasks' run times. Each task runs :func:`run_task` on a worker: the script's process is a child of the worker
(a FLINT abort ends that process, not the worker), and the task returns plain JSON, the same on
any machine. The rows are merged exactly as the process pool merges its shards
(:func:`~symverify.scripts.runner.merge`): instances in the order of a one-process run, so the
run's JSON is the same serially, on the process pool and on a cluster.

**Failures.** A task whose process dies of a signal nobody here sent (:class:`TaskLostError`), or whose
task raises, is retried once (``retries=1``); a task whose worker dies is moved to another worker
by the scheduler: the local cluster allows one such failure (``allowed_failures=1``), a cluster of
your own its scheduler's ``distributed.scheduler.allowed-failures`` (Dask's default: 3). After
that the script's row is ``crashed`` with the reason; the run goes on and never hangs on a lost
task. A worker with another version of symverify, or another build of it (its trusted base's
sources differ: :func:`~symverify.kernel.build.build_identity`), makes its rows ``crashed``. Ctrl-C (or SIGTERM)
sets a Dask ``Event`` that makes running tasks kill their processes within a second, cancels every
future and returns the partial run. On Linux a task's process is killed when its worker dies.

Workers need only ``pip install symverify`` (plus ``distributed``, which ``dask worker`` brings):
a user's scripts (``--dir DIR``) travel with their tasks (the ``*.py`` files of ``DIR``).
Only this module imports ``distributed``; the CLI imports it only when ``--scheduler`` is given.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from symverify._version import __version__
from symverify.errors import UsageError
from symverify.kernel.build import build_identity
from symverify.provers.dask_address import check_address as _check
from symverify.provers.dask_address import open_client
from symverify.scripts.runner import RunSummary, Script, ScriptOutcome, costs, merge, rows
from symverify.scripts.tasks import Task, execute

__all__ = ["TaskLostError", "run_task", "connect", "run_scripts"]

class TaskLostError(RuntimeError):
    """A task's process was killed by a signal that the task did not send (retried once)."""


def run_task(task: Task, stop: str | None = None) -> dict[str, Any]:
    """Run ``task`` on a Dask worker: :func:`~symverify.scripts.tasks.execute` in a child process
    that dies with the worker; ``stop`` names a Dask ``Event`` that, once set, kills it."""
    should_stop: Callable[[], bool] | None = None
    if stop is not None:
        from distributed import Event

        should_stop = Event(stop).is_set
    part = execute(task, should_stop=should_stop, guard=True)
    if part["status"] == "lost":
        raise TaskLostError(f"on {part['host']}: {part['error']}")
    return part


def check_address(scheduler: str) -> None:
    """Refuse a ``--scheduler`` value that is neither ``local``, an address (``tcp://host:8786``,
    ``host:8786``) nor an existing scheduler file (``*.json``)."""
    _check(scheduler, "--scheduler", clients=False)


@contextmanager
def connect(scheduler: str, workers: int | None = None, *, timeout: float = 10.0) -> Iterator[tuple[Any, str, int]]:
    """``(client, label, threads)`` for ``scheduler``: ``local`` starts a LocalCluster of
    ``workers`` one-thread worker processes (default: the cores), closed on exit; anything else is
    a running scheduler's address or scheduler file. Waits up to ``timeout`` seconds for the
    scheduler and its first worker, then raises :class:`UsageError`."""
    check_address(scheduler)
    with open_client(scheduler, workers, timeout, what="--scheduler",
                     cluster_options={"scheduler_kwargs": {"allowed_failures": 1}}) as client:
        info = client.scheduler_info()
        threads = sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()) or 1
        n = len(info.get("workers", {}))
        label = f"dask {'local' if scheduler == 'local' else scheduler} ({n} worker{'s' if n != 1 else ''})"
        yield client, label, threads


def _part(fut: Any, task: Task) -> dict[str, Any]:
    """A finished future as a task result; a lost or failed task (after its retry) is a crash."""
    from distributed.scheduler import KilledWorker

    try:
        part = fut.result()
        if isinstance(part, dict):
            return {**part, "part": task.part()}  # named in messages (shards that met different cases)
        why = f"expected a task result, found {type(part).__name__}"
    except KilledWorker as e:
        tries = getattr(e, "allowed_failures", 1) + 1
        why = f"lost: the {tries} workers that ran it died"
    except CancelledError:
        why = "cancelled by the scheduler"
    except TaskLostError as e:
        why = f"{e} (retried once)"
    except Exception as e:
        why = f"failed (retried once): {type(e).__name__}: {' '.join(str(e).split())[:300]}"
    return {"status": "crashed", "result": None, "error": f"{task.name} ({task.part()}): {why}", "seconds": 0.0}


def auto_groups(cases: int, threads: int) -> int:
    """How many tasks a shardable script of ``cases`` cases becomes when ``cases_per_task`` is not
    given: about two per worker thread (enough to balance the load, few enough that the ~0.2 s
    process start of a task does not dominate small cases), never more than the cases.

    >>> auto_groups(100, 4), auto_groups(3, 4), auto_groups(0, 4)
    (8, 3, 0)
    """
    return min(cases, 2 * max(1, threads))


def task_seconds(parts: Sequence[Mapping[str, Any]]) -> float:
    """A row's time on a cluster: the sum of its tasks' own run times (counting included), not the
    time since the run started (tasks wait in the scheduler's queue)."""
    return float(sum(p.get("seconds", 0.0) or 0.0 for p in parts))


def run_scripts(scripts: dict[str, Script], names: Sequence[str], *, scheduler: str = "local", quick: bool = False,
                workers: int | None = None, timeout: float | None = None, env: Mapping[str, str] | None = None,
                on_start: Callable[[str], None] | None = None, on_done: Callable[[ScriptOutcome], None] | None = None,
                cases_per_task: int | None = None, connect_timeout: float = 10.0) -> RunSummary:
    """Run the scripts ``names`` on the Dask cluster ``scheduler`` (``local``: a LocalCluster of
    ``workers`` processes); the same rows, in the same order, as
    :func:`symverify.scripts.runner.run_scripts`. ``timeout`` limits each task's process;
    ``cases_per_task=None`` chooses the split by :func:`auto_groups`. A row's time is the sum of its
    tasks' run times (:func:`task_seconds`). The scripts are submitted costliest first (their ``COST``,
    :func:`symverify.scripts.runner.costs`), so the longest do not start last."""
    for what, value in (("workers", workers), ("cases_per_task", cases_per_task)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise UsageError(f"{what}: expected a positive int, found {value!r}")
    if workers is not None and scheduler != "local":
        raise UsageError(f"workers={workers}: the size of the local cluster, for scheduler 'local' only; the workers "
                         f"of the running scheduler {scheduler!r:.60} are its own")
    start = time.perf_counter()
    with connect(scheduler, workers, timeout=connect_timeout) as (client, label, threads):
        from distributed import Event, as_completed

        token = uuid.uuid4().hex[:12]
        stop = f"symverify-stop-{token}"
        pending: dict[Any, tuple[str, Task]] = {}
        parts: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        counted: dict[str, float] = {}  # the counting task's own time
        expected: dict[str, int] = {}
        n_cases: dict[str, int] = {}  # the cases each counting task met: every part must meet as many
        done: dict[str, ScriptOutcome] = {}
        futures = as_completed()
        serial = iter(range(1 << 62))

        def submit(name: str, task: Task) -> None:
            fut = client.submit(run_task, task, stop, key=f"symverify-{token}-{next(serial)}-{name}", pure=False, retries=1)
            pending[fut] = (name, task)
            futures.add(fut)

        def finish(name: str, row_parts: list[dict[str, Any]]) -> None:
            row = merge(scripts[name], row_parts, local_version=__version__, cases=n_cases.get(name),
                        local_build=build_identity())
            done[name] = replace(row, seconds=counted.get(name, 0.0) + task_seconds(row_parts))
            if on_done:
                on_done(done[name])

        interrupted = False
        try:
            cost = costs(scripts, names)
            for name in sorted(names, key=lambda n: -cost[n]):  # costliest first (stable): rows keep the order of names
                s = scripts[name]
                if on_start:
                    on_start(name)
                submit(name, s.task(quick, count=s.shardable, timeout=timeout, env=env, shipped=True))
            for fut in futures:
                name, task = pending.pop(fut)
                part = _part(fut, task)
                if task.count:
                    if part["status"] != "done" or part.get("version") != __version__ or part.get("build") != build_identity():
                        finish(name, [part])
                        continue
                    s, n = scripts[name], part["result"]["cases"]
                    n_cases[name] = n
                    counted[name] = task_seconds([part])
                    groups = auto_groups(n, threads) if cases_per_task is None else -(-n // cases_per_task)
                    todo = [s.task(quick, cases=range(g, n, groups), timeout=timeout, env=env, shipped=True)
                            for g in range(groups)] or [s.task(quick, timeout=timeout, env=env, shipped=True)]
                    expected[name] = len(todo)
                    for t in todo:
                        submit(name, t)
                    continue
                parts[name].append(part)
                if len(parts[name]) == expected.get(name, 1):
                    finish(name, parts[name])
        except KeyboardInterrupt:
            interrupted = True
            try:
                Event(stop, client=client).set()
                client.cancel(list(pending), force=True)
            except Exception:  # the cluster may be the thing that failed; the partial run is still returned
                pass
    return RunSummary(quick, tuple(rows(scripts, names, done)), time.perf_counter() - start, interrupted, threads, label)
