"""Memos release what they drop only after their lock, so a finalizer of a dropped entry may use
the memo again (a non-reentrant lock held then would block that thread forever); entries found by
identity are that object's under concurrent use; Lemma H.16's per-axis layer constants."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

from symverify.errors import UsageError
from symverify.ir.value_memo import ValueMemo
from symverify.kernel.ir.memo import IdentityMemo


class _Probe:
    """A value whose finalizer records whether ``lock`` was free when it ran."""

    def __init__(self, lock: threading.Lock, seen: list[bool]) -> None:
        self.lock, self.seen = lock, seen

    def __del__(self) -> None:
        free = self.lock.acquire(blocking=False)
        if free:
            self.lock.release()
        self.seen.append(free)


def test_identity_memo_drops_evicted_and_replaced_entries_after_its_lock() -> None:
    memo: IdentityMemo[object] = IdentityMemo(1)
    seen: list[bool] = []
    a, b = object(), object()
    memo.put(a, _Probe(memo._lock, seen))
    memo.put(b, 1)  # evicts a's entry
    memo.put(b, _Probe(memo._lock, seen))
    memo.put(b, 2)  # replaces b's entry
    memo.put(a, _Probe(memo._lock, seen))
    memo.clear()
    assert seen == [True, True, True]
    assert len(memo) == 0 and memo.get(a) is None


def test_value_memo_drops_evicted_entries_after_its_lock() -> None:
    memo: ValueMemo[object] = ValueMemo(1)
    seen: list[bool] = []
    memo("a", lambda: _Probe(memo._lock, seen))
    assert memo("b", lambda: 7) == 7  # evicts "a"
    assert seen == [True]


def test_a_finalizer_of_an_evicted_entry_may_use_the_memo() -> None:
    memo: IdentityMemo[object] = IdentityMemo(1)
    found: list[object] = []

    class Reader:
        def __del__(self) -> None:
            found.append(memo.get(key_obj))

    key_obj, other = object(), object()
    memo.put(key_obj, Reader())
    # the finalizer runs in put: with the lock held there it would block forever (a daemon thread,
    # so a regression fails here instead of hanging the run)
    t = threading.Thread(target=memo.put, args=(other, "other"), daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "put blocked: the evicted entry's finalizer met the memo's lock held"
    assert found == [None]
    assert memo.get(other) == "other"


def test_identity_memo_hits_are_the_objects_own_under_threads() -> None:
    memo: IdentityMemo[int] = IdentityMemo(3)
    objs = [object() for _ in range(12)]
    wrong: list[tuple[int, object]] = []

    def work(start: int) -> None:
        for step in range(3000):
            k = (start + step) % len(objs)
            got = memo(objs[k], lambda k=k: k)  # type: ignore[misc]
            if got != k:
                wrong.append((k, got))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
    assert len(memo) <= 3


@pytest.mark.parametrize(("size", "found"), [(0, "int 0"), (-3, "int -3"), (True, "bool True"), (2.0, "float 2.0"),
                                             (1.5, "float 1.5"), (np.int64(3), "int64 "), ("4", "str '4'"), (None, "NoneType None")])
@pytest.mark.parametrize("memo", [IdentityMemo, ValueMemo])
def test_memos_refuse_a_size_that_is_not_an_int_of_at_least_one(memo: type, size: object, found: str) -> None:
    """A size below 1, a bool, a float or a numpy integer is a UsageError naming the class, what it
    expected and what it found (a float 1.5 would keep one entry, True one, silently)."""
    with pytest.raises(UsageError, match=rf"^{memo.__name__} size: expected an int ≥ 1, found {re.escape(found)}"):
        memo(size)


@pytest.mark.parametrize("memo", [IdentityMemo, ValueMemo])
def test_memos_take_every_int_size_from_one(memo: type) -> None:
    assert memo(1).size == 1 and memo(7).size == 7 and type(memo(7).size) is int


def test_lemma_h16_axis_constants_are_the_theorys() -> None:
    """docs/theory.md §4: one factor alone takes 2 layers on the sequence axis, 3 on the channel
    axis (C16, with its closing sum) and 1 when diagonal."""
    import importlib.util
    from pathlib import Path

    from symverify.compiler.butterfly_to_baseconv import C16

    path = Path(__file__).resolve().parents[1] / "proofs" / "lemma_h16_butterfly.py"
    spec = importlib.util.spec_from_file_location("lemma_h16_butterfly_script", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert C16 == 3
    assert mod.AXIS_LAYERS == {"sequence": 2, "channel": 3, "diagonal": 1}
    inst = mod._instance(4, 2, 4)  # N = 8, tw = 2: stride 4 moves rows (sequence axis)
    assert inst.bounds["layers"] == 2 and inst.resources["layers"] <= 2 and not inst.over_bound()
    inst = mod._instance(4, 2, 1)  # stride 1 < tw: channel axis
    assert inst.bounds["layers"] == 3 and not inst.over_bound()
