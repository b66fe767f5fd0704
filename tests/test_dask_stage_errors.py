"""An exception raised inside a compositional stage check is an error wherever the stages run:
``verify(..., scheduler=...)`` raises it as the local ``verify`` does (exit 3 on the command line),
never ``unknown``; a task lost for good (its workers died) stays ``unknown``."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.cli import main
from symverify.ir.serialize import dump_file
from symverify.kernel.provers import compositional
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
    with pytest.raises(ZeroDivisionError, match="in the task"):
        check_certificate_dask(c, comp.model, comp.certificate, scheduler=_Client(dask_client, ZeroDivisionError("in the task")))
