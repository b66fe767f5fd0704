"""Results of pure builders kept for the last few equal inputs (compared by value and by type).

A construction and the reference circuit it is proved against are often built from equal
weights: ``hyena(N, d)`` and ``hyena_direct(N, d)`` both build the same circuit, and a proof
script builds each several times. :class:`ValueMemo` returns the circuit built the first time for
an equal key. Equal is not enough for scalars (``1 == Fraction(1) == True``, and only an ``int`` 1
makes an identity coefficient), so :func:`typed_key` adds the exact type of every leaf of the key:
two keys are the same only when every value and every type agree. The values kept are
immutable IR objects, so sharing one is safe (and identity-keyed memos downstream hit too).

>>> from fractions import Fraction
>>> typed_key(2, (1, 0)) == typed_key(2, (Fraction(1), 0))
False
>>> memo: ValueMemo[str] = ValueMemo(2)
>>> memo(typed_key(1), lambda: "a"), memo(typed_key(1), lambda: "b")
('a', 'a')
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from symverify.errors import UsageError

__all__ = ["ValueMemo", "typed_key"]

V = TypeVar("V")


def _types(x: Any) -> Any:
    """The exact types of ``x``'s leaves, in the shape of ``x`` (tuples, lists and frozen dataclasses walked)."""
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_types(v) for v in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x), tuple(_types(getattr(x, f.name)) for f in dataclasses.fields(x)))
    return type(x)


def typed_key(*parts: Any) -> Hashable:
    """A memo key equal for two calls only when their ``parts`` are equal and every leaf has the
    same type; lists are keyed as tuples. Raises ``TypeError`` for a part that cannot be hashed."""
    frozen = tuple(tuple(p) if isinstance(p, list) else p for p in parts)
    key = (frozen, _types(parts))
    hash(key)
    return key


class ValueMemo(Generic[V]):
    """The values computed for the last ``size`` keys (least recently used first out).

    ``size`` is a plain ``int`` ≥ 1; anything else (0, a bool, a float, a numpy integer) raises
    :class:`~symverify.errors.UsageError` naming what was found.
    """

    def __init__(self, size: int = 8) -> None:
        if type(size) is not int or size < 1:  # a bool, float or numpy int is no size
            raise UsageError(f"ValueMemo size: expected an int ≥ 1, found {type(size).__name__} {size!r:.40}")
        self.size = size
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()  # threads may share a memo: a lookup never meets an eviction half done

    def __call__(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The value stored for ``key``, or ``compute()`` stored and returned (nothing is stored
        when it raises; ``compute`` runs outside the lock)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        value = compute()
        dropped: list[object] = []  # released after the lock: a finalizer they run may use this memo
        with self._lock:
            dropped.append(self._entries.get(key))
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                dropped.append(self._entries.popitem(last=False))
        del dropped
        return value

    def __getstate__(self) -> dict[str, int]:
        """Pickled empty (a cache, rebuilt where it is used)."""
        return {"size": self.size}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__(state["size"])  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._entries)
