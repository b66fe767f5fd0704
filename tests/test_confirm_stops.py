"""A counterexample's confirmation held to the timeout and the memory limit, wherever a method makes
it (the search, the exact-matrix method's unit input, z3's model): a stop there is ``unknown`` with a
note naming it, never "nothing found" and never a verdict from an evaluation past the limits."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.deadline import DeadlineExceededError
from symverify.ir.build import from_matrix
from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.kernel.provers import guard
from symverify.kernel.provers.counterexample import GUARD_BITS, search_or_stop
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.sides import as_side

BIG = 2 ** (GUARD_BITS + 4000)  # values past GUARD_BITS: under a timeout, confirmed in a limited child
MEMORY = "memory limit: the child process reached its limit of 1073741824 bytes"


@pytest.fixture
def out_of_memory(monkeypatch):
    """Every limited confirmation child reaches its memory limit (planted: which allocation fails in a
    real one depends on what the forked heap holds)."""
    detail = "MemoryError in the process running the exact confirmation of a counterexample"
    monkeypatch.setattr(guard, "run_limited", lambda *a, **k: guard.Limited("memory", detail=detail))


def _scaled(c: int, power: int = 1) -> sv.Circuit:
    def f(u):
        y = u[0][0]
        for _ in range(power - 1):
            y = y * u[0][0]
        return [c * y]
    return sv.Circuit.trace(f, n=1, d=1)


def test_the_search_tells_a_memory_stop_from_nothing_found(out_of_memory):
    a, b = as_side(_scaled(BIG), "lhs"), as_side(_scaled(BIG + 1), "rhs")
    opts = Options.from_call("exact", timeout=60, memory_limit=1 << 30)
    with pytest.raises(DeadlineExceededError, match=r"^memory: MemoryError in the process running the exact confirmation"):
        search_or_stop(a, b, opts, found_by="test")


def test_a_randomized_search_stopped_by_memory_is_noted_as_such(out_of_memory):
    """The lifted trial point (61-bit entries to the 100th power, on a 4.19 Mbit constant) is too large
    to confirm, so the search was the only way: its memory stop was noted "every counterexample found
    is too large to re-check"."""
    big = 2**4_190_000
    rep = sv.verify(_scaled(big, 100), _scaled(big + 1, 100), method="randomized", timeout=60, memory_limit=1 << 30)
    assert str(rep.verdict) == "unknown", rep
    (note,) = rep.notes
    assert f"but {MEMORY} before a counterexample small enough" in note, note
    assert "too large" not in note, note


def test_exact_matrix_confirms_within_the_limits(out_of_memory):
    """The exact matrices differ; the search's confirmation and the unit input's (in process, past the
    memory limit, whatever the timeout) were both to be held to the limits: ``unknown`` with the stop."""
    k = permutation_to_kaleidoscope([1, 0])
    c = from_matrix([[0, BIG], [1, 0]], 2, 1)
    rep = sv.verify(k, c, method="exact", timeout=60, memory_limit=1 << 30)
    assert (str(rep.verdict), rep.method) == ("unknown", "exact-matrix"), rep
    (note,) = rep.notes
    assert note.startswith(f"the exact matrices differ, but {MEMORY} before a counterexample was found"), note
    assert rep.evidence["first_difference"].startswith("(0, 1, 1, <"), rep.evidence


def test_exact_matrix_shows_a_huge_first_difference():
    """The evidence's first difference was ``str()`` of the entries: an entry of 70 kbit raised
    ValueError (Python's limit on int to str conversion) instead of giving a verdict."""
    k = permutation_to_kaleidoscope([1, 0])
    rep = sv.verify(k, from_matrix([[0, BIG], [1, 0]], 2, 1), method="exact")
    assert (str(rep.verdict), rep.method) == ("refuted", "exact-matrix"), rep
    assert rep.evidence["first_difference"].startswith("(0, 1, 1, <"), rep.evidence


def test_z3_confirms_its_model_within_the_limits(out_of_memory):
    """z3's rational model was confirmed in process whatever its size: past the timeout, and past
    the memory limit of the confirmation child every other method uses."""
    z3 = pytest.importorskip("z3")
    from symverify.kernel.provers import z3_backend

    a, b = as_side(_scaled(BIG), "lhs"), as_side(_scaled(BIG + 1), "rhs")
    res = z3_backend._decide(z3, a, b, Options.from_call("z3", timeout=60, memory_limit=1 << 30), 1)
    assert str(res.verdict) == "unknown", res
    (note,) = res.notes
    assert note.startswith(f"z3 found the sides different (sat), but {MEMORY} while z3's model was confirmed"), note
    assert f"; {MEMORY} while a counterexample was searched for" in note, note


def test_a_compositional_search_stopped_by_memory_is_noted_as_such(out_of_memory):
    """The certificate of ``(BIG + 1)·u`` does not check against ``BIG·u``; the search after the failed
    stage stopped at its confirmation child's memory limit, noted "no counterexample was found"."""
    from symverify.kernel.ir.circuit import Circuit, Gate

    lhs = Circuit(1, 1, (Gate.const(BIG), Gate.mul(0, 1)), (2,))
    compiled = sv.compile(Circuit(1, 1, (Gate.const(BIG + 1), Gate.mul(0, 1)), (2,)))
    rep = sv.verify(lhs, compiled.model, certificate=compiled.certificate, method="compositional", timeout=60,
                    memory_limit=1 << 30)
    assert str(rep.verdict) == "unknown", rep
    # the certificate was compiled from another (unnamed) circuit: its meta's digest is noted too
    (note,) = [n for n in rep.notes if not n.startswith("the certificate's meta names")]
    assert len(rep.notes) == 2 and any("circuit_digest" in n or "digest" in n for n in rep.notes if n != note), rep.notes
    assert note.startswith("the certificate does not check (stage 1"), note
    assert note.endswith(f") and {MEMORY} while a counterexample was searched for (MemoryError in the process running "
                         "the exact confirmation of a counterexample)"), note
