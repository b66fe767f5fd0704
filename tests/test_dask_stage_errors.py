"""An exception raised inside a compositional stage check is an error wherever the stages run:
``verify(..., scheduler=...)`` raises it as the local ``verify`` does (exit 3 on the command line),
never ``unknown``; a task lost for good (its workers died) stays ``unknown``."""

from __future__ import annotations

import pickle
import threading

import pytest

import symverify as sv
from symverify.cli import main
from symverify.ir.serialize import dump_file
from symverify.kernel.provers import compositional, stages_dask
from symverify.kernel.provers.stages_dask import check_certificate_dask

distributed = pytest.importorskip("distributed")


@pytest.fixture
def broken_stage_check(monkeypatch):
    """Every stage check raises (the in-process workers share this module)."""
    def boom(*args, **kwargs):
        raise ValueError("a bug in the stage check")

    monkeypatch.setattr(compositional, "_check_stage", boom)


@pytest.mark.parametrize("method", ["compositional", "auto"])
def test_an_error_in_a_stage_check_is_raised_on_dask_as_locally(dask_client, dask_pair, broken_stage_check, method):
    c, comp = dask_pair
    with pytest.raises(ValueError, match="a bug in the stage check"):
        sv.verify(c, comp, method=method)
    with pytest.raises(ValueError, match="a bug in the stage check"):
        sv.verify(c, comp, method=method, scheduler=dask_client)


def test_the_command_line_exits_3_on_dask_as_locally(dask_client, dask_pair, broken_stage_check, tmp_path, capsys):
    c, comp = dask_pair
    for name, obj in (("c.json", c), ("m.json", comp.model), ("cert.json", comp.certificate)):
        dump_file(obj, tmp_path / name)
    args = ["verify", str(tmp_path / "c.json"), str(tmp_path / "m.json"), "--certificate", str(tmp_path / "cert.json")]
    assert main(args) == 3
    local = capsys.readouterr().err
    assert main([*args, "--scheduler", dask_client.scheduler.address]) == 3
    remote = capsys.readouterr().err
    assert "internal error" in local and "ValueError: a bug in the stage check" in local
    assert remote == local


class _Erred:
    """A finished future whose task erred with ``error`` (its status ``"error"``, as Dask sets it)."""

    status = "error"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def result(self, timeout=None):
        raise self.error


class _Client:
    """A client whose first task erred with ``error``."""

    def __init__(self, real, error):
        self.real, self.error = real, error

    def scheduler_info(self):
        return self.real.scheduler_info()

    def scatter(self, objs, **kw):
        return objs

    def submit(self, fn, *args, **kw):
        return _Erred(self.error)

    def cancel(self, futures):
        pass


def test_a_killed_worker_stays_unknown(dask_client, dask_pair):
    c, comp = dask_pair
    from types import SimpleNamespace

    lost = distributed.KilledWorker("symverify-stages-x", SimpleNamespace(address="tcp://w:1"), 3)
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=_Client(dask_client, lost))
    assert not res.ok and res.failure is None and res.stopped == "crashed" and "KilledWorker" in res.notes[0]


def test_a_task_that_raised_is_raised(dask_client, dask_pair):
    c, comp = dask_pair
    raised = ZeroDivisionError("in the task")
    setattr(raised, stages_dask.RAISED_HERE, True)  # as versioned_stages marks its stage check's errors
    with pytest.raises(ZeroDivisionError, match="in the task"):
        check_certificate_dask(c, comp.model, comp.certificate, scheduler=_Client(dask_client, raised))


def _old_worker_load():
    """What unpickling the task does on a worker whose older symverify lacks ``versioned_stages``."""
    raise AttributeError("Can't get attribute 'versioned_stages' on <module 'symverify.kernel.provers.stages_dask'>")


class _NotLoadable:
    """A task function that pickles but cannot be loaded where it runs (the worker unpickles it)."""

    def __reduce__(self):
        return _old_worker_load, ()

    def __call__(self, *args):  # never reached: the worker fails to load it
        raise AssertionError("a task that cannot be loaded ran")


@pytest.mark.parametrize("error", [AttributeError("Can't get attribute 'versioned_stages' on <module>"),
                                   ModuleNotFoundError("No module named 'symverify.kernel.provers.stages_dask'"),
                                   pickle.UnpicklingError("invalid load key, 'x'.")])
def test_a_task_not_loadable_on_its_worker_is_unknown(dask_client, dask_pair, error):
    """A worker running an older symverify, without ``versioned_stages``, fails to load the task: the
    future errs with that ``AttributeError`` (``ImportError`` without the module, an unpickling
    error), which ``verify(..., scheduler=...)`` raised instead of stopping the check as ``unknown``."""
    c, comp = dask_pair
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=_Client(dask_client, error))
    assert not res.ok and res.failure is None and res.stopped == "crashed" and res.stages_checked == 0
    assert "could not be loaded or run on its worker" in res.notes[0] and type(error).__name__ in res.notes[0]


def test_a_task_failing_to_load_on_a_real_worker_is_unknown(dask_client, dask_pair, monkeypatch):
    """The same through a real cluster: the task's function fails to unpickle there (the scheduler,
    which unpickles the graph in this Dask, answers a ``RuntimeError`` naming the deserialization)."""
    c, comp = dask_pair
    monkeypatch.setattr(stages_dask, "versioned_stages", _NotLoadable())
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client)
    assert not res.ok and res.failure is None and res.stopped == "crashed"
    assert "could not be loaded or run on its worker" in res.notes[0]  # Dask: "Error during deserialization"
    report = sv.verify(c, comp, method="compositional", scheduler=dask_client)
    assert report.verdict.value == "unknown" and not report.proved
    assert any("could not be loaded or run on its worker" in n for n in report.notes)


class _LockedError(Exception):
    """An exception that does not pickle (it holds a lock): Dask sends its text only."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


def test_a_stage_exception_that_does_not_pickle_is_unknown_with_its_type_and_message(dask_client, dask_pair, monkeypatch):
    """Dask replaces an exception that does not pickle by ``Exception(repr(e))``, unmarked: the check
    stopped as ``unknown`` (right) with a note blaming the task's loading (``could not be loaded or
    run on its worker ... is the same symverify installed``) and naming the type ``Exception``. The
    note names the exception's own type and message now."""
    c, comp = dask_pair

    def boom(*args, **kwargs):
        raise _LockedError("a bug holding a lock")

    monkeypatch.setattr(compositional, "_check_stage", boom)
    res = check_certificate_dask(c, comp.model, comp.certificate, scheduler=dask_client)
    assert not res.ok and res.failure is None and res.stopped == "crashed" and res.stages_checked == 0
    assert "raised _LockedError: a bug holding a lock (on its worker; an exception that does not pickle" in res.notes[0]
    assert "could not be loaded" not in res.notes[0]
    report = sv.verify(c, comp, method="compositional", scheduler=dask_client)
    assert report.verdict.value == "unknown" and not report.proved
    assert any("raised _LockedError: a bug holding a lock" in n for n in report.notes)


@pytest.mark.parametrize(("error", "text"), [
    (Exception("Locked('a bug holding a lock')"), ("Locked", "a bug holding a lock")),
    (Exception("pkg.mod.Err('it\\'s (odd)')"), ("pkg.mod.Err", "it's (odd)")),
    (Exception("Err(1, 'two')"), ("Err", "1, 'two'")),
    (Exception("Err()"), ("Err", "")),
    (Exception("Err('cut short by Dask's length lim"), None),
    (Exception("Err('unclosed)"), ("Err", "'unclosed")),
    (ValueError("Err('x')"), None),
    (Exception("no repr here"), None),
    (Exception("Err('x')", 2), None),
])
def test_dask_stand_ins_for_exceptions_that_do_not_pickle(error, text):
    from symverify.provers.dask_address import text_only_error

    assert text_only_error(error) == text


def test_a_local_cluster_kills_a_busy_worker_without_the_graceful_wait(monkeypatch):
    """``verify(..., scheduler="local", timeout=2)`` took 6 s: closing the cluster gave a worker still
    running a stage past the deadline 4 s (0.8 of each nanny's 5 s close timeout) to stop on its
    own. Each nanny is closed with ``STOP_WAIT`` now, all at once, before the cluster closes."""
    import time

    from distributed import Nanny

    from symverify.provers import dask_address

    timeouts: list[float] = []
    real = Nanny.close

    async def close(self, timeout: float = 5, reason: str = "nanny-close"):
        timeouts.append(timeout)
        return await real(self, timeout=timeout, reason=reason)

    monkeypatch.setattr(Nanny, "close", close)
    with dask_address.open_client("local", 2, 60) as client:
        busy = [client.submit(time.sleep, 600, pure=False) for _ in range(2)]
        for _ in range(600):  # until the scheduler has handed the tasks to the workers (at most 30 s)
            if sum(len(keys) for keys in client.processing().values()) == len(busy):
                break
            time.sleep(0.05)
    assert timeouts[:2] == [dask_address.STOP_WAIT] * 2
