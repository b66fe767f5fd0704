"""Results of pure functions of immutable IR objects, kept for the last few objects.

Circuits, models, grids and kaleidoscopes are immutable, so anything computed from one of them
(its straight-line code, its structural bounds, its fingerprint, an execution plan) can be reused
while the object lives. :class:`IdentityMemo` finds an entry by the object's identity plus a
hashable key (the other inputs of the function) and keeps the object itself alive in the entry,
so its ``id`` cannot be reused by another object while the entry exists. The least recently used
entry goes first. A memo may be shared by threads (``verify`` from several threads, Dask's
threaded workers): every read and write holds its lock, so one thread's eviction never meets
another's lookup half done.

>>> memo: IdentityMemo[int] = IdentityMemo(2)
>>> a, b, c = [1], [2], [3]
>>> memo(a, lambda: 10), memo(b, lambda: 20), memo(a, lambda: 99)
(10, 20, 10)
>>> _ = memo(c, lambda: 30)          # evicts b, the least recently used
>>> memo.get(b) is None, memo.get(a)
(True, 10)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from symverify.errors import UsageError

__all__ = ["IdentityMemo"]

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """The values computed for the last ``size`` (object, key) pairs, found by identity.

    ``size`` is a plain ``int`` ≥ 1; anything else (0, a bool, a float, a numpy integer) raises
    :class:`~symverify.errors.UsageError` naming what was found.
    """

    def __init__(self, size: int = 16) -> None:
        if type(size) is not int or size < 1:  # a bool, float or numpy int is no size
            raise UsageError(f"IdentityMemo size: expected an int ≥ 1, found {type(size).__name__} {size!r:.40}")
        self.size = size
        self._entries: OrderedDict[tuple[int, Hashable], tuple[object, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, obj: object, key: Hashable = ()) -> V | None:
        """The value stored for ``obj`` (this very object) and ``key``, or None."""
        k = (id(obj), key)
        with self._lock:
            hit = self._entries.get(k)
            if hit is None or hit[0] is not obj:
                return None
            self._entries.move_to_end(k)
            return hit[1]

    def put(self, obj: object, value: V, key: Hashable = ()) -> V:
        """Store ``value`` for ``obj`` and ``key`` (evicting the least recently used entry). The
        entries it drops are released after the lock: a finalizer they run may use this memo."""
        k = (id(obj), key)
        dropped: list[object] = []
        with self._lock:
            dropped.append(self._entries.get(k))
            self._entries[k] = (obj, value)
            self._entries.move_to_end(k)
            while len(self._entries) > self.size:
                dropped.append(self._entries.popitem(last=False))
        del dropped
        return value

    def __call__(self, obj: object, compute: Callable[[], V], key: Hashable = ()) -> V:
        """The stored value, or ``compute()`` stored and returned."""
        hit = self.get(obj, key)
        return self.put(obj, compute(), key) if hit is None else hit

    def clear(self) -> None:
        with self._lock:
            entries, self._entries = self._entries, OrderedDict()
        entries.clear()  # released after the lock, as in put

    def __getstate__(self) -> dict[str, int]:
        """Pickled empty: entries are found by ``id``, which means nothing in another process."""
        return {"size": self.size}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__(state["size"])  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._entries)
