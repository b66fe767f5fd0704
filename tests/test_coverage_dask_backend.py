"""symverify.scripts.dask_backend._part: a finished future that holds no task result, was
cancelled, or failed becomes a crashed row naming the script, its part and why (never an
exception out of the run).
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

from symverify.scripts import dask_backend
from symverify.scripts.tasks import Task


class Done:
    def __init__(self, value=None, error=None):
        self.value, self.error = value, error

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value


TASK = Task("s", shard=(1, 3))


@pytest.mark.parametrize("fut, why", [
    (Done(value=[1, 2]), "expected a task result, found list"),  # _part
    (Done(error=dask_backend.CancelledError()), "cancelled by the scheduler"),  # _part
    (Done(error=ValueError("bad\n  value")), "failed (retried once): ValueError: bad value"),  # _part
])
def test_a_future_without_a_result_is_a_crashed_part(fut, why):
    part = dask_backend._part(fut, TASK)
    assert part == {"status": "crashed", "result": None, "error": f"s (shard 1/3): {why}", "seconds": 0.0}


def test_a_future_with_a_result_is_passed_through():
    result = {"status": "done", "result": {"instances": []}}
    assert dask_backend._part(Done(value=result), TASK) == {**result, "part": TASK.part()}  # named in messages
