"""Results of pure builders kept for the last few equal inputs (compared by value and by type).

A construction and the reference circuit it is proved against are often built from equal
weights: ``hyena(N, d)`` and ``hyena_direct(N, d)`` both build the same circuit, and a proof
script builds each several times. :class:`ValueMemo` returns the circuit built the first time for
an equal key. Equal is not enough for scalars (``1 == Fraction(1) == True``, and only an ``int`` 1
makes an identity coefficient), so :func:`typed_key` adds the exact type of every leaf of the key:
two keys are the same only when every value and every type agree, read when the key is made (it
holds no object of the caller's that could change later). The values kept are IR objects, shared
(so identity-keyed memos downstream hit too) while they hold what they held when made: a memo given
``held`` and ``same`` compares a snapshot before handing one out.

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
from fractions import Fraction
from operator import is_
from typing import Any, Generic, TypeVar

from symverify.errors import UsageError

__all__ = ["ValueMemo", "typed_key"]  # layout_snapshot and same_layout serve the library's layout memos only

V = TypeVar("V")


def _frozen(x: Any) -> Any:
    """``x`` as a tree of ``(type, …)`` nodes whose leaves are the values of ``x``'s leaves that cannot
    change in place: tuples, lists and dataclasses walked, a ``Fraction`` as its two ints, any other
    leaf as it is, each with its exact type."""
    kind = type(x)
    if kind is tuple or kind is list:
        return (kind, tuple(map(_frozen, x)))
    if kind is Fraction:
        return (kind, x.numerator, x.denominator)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (kind, tuple(_frozen(getattr(x, f.name)) for f in dataclasses.fields(x)))
    return (kind, x)


def typed_key(*parts: Any) -> Hashable:
    """A memo key equal for two calls only when their ``parts`` are equal and every leaf has the
    same type (lists are read as their items). Raises ``TypeError`` for a part that cannot be hashed.

    The key holds none of the caller's tuples, dataclasses or fractions, only what they held when it
    was made: a weights object used as a key and rewritten in place afterwards (``object.__setattr__``,
    a ``Fraction``'s slot; to content of the same hash, ``5 → 5 + 2^61 − 1``) would otherwise be the
    stored key, equal to a later caller's new weights, and hand them the circuit of the old ones."""
    key = _frozen(parts)
    hash(key)
    return key


class ValueMemo(Generic[V]):
    """The values computed for the last ``size`` keys (least recently used first out).

    ``size`` is a plain ``int`` ≥ 1; anything else (0, a bool, a float, a numpy integer) raises
    :class:`~symverify.errors.UsageError` naming what was found.

    ``held`` (with ``same``): a snapshot of what a value holds (for an IR object, the objects it
    refers to, by identity), taken when it is stored and compared with ``same`` before each hit is
    handed out. "Immutable" is a convention Python does not enforce: one caller's result rewritten
    in place (``object.__setattr__`` on a gate of the circuit it got) would otherwise be every later
    caller's result; a value whose snapshot changed is computed again and replaces it.
    """

    def __init__(self, size: int = 8, held: Callable[[V], object] | None = None,
                 same: Callable[[object, object], bool] | None = None) -> None:
        if type(size) is not int or size < 1:  # a bool, float or numpy int is no size
            raise UsageError(f"ValueMemo size: expected an int ≥ 1, found {type(size).__name__} {size!r:.40}")
        if (held is None) != (same is None):
            raise UsageError("ValueMemo: held and same go together (a snapshot and its comparison); found one of them")
        self.size = size
        self._held, self._same = held, same
        self._entries: OrderedDict[Hashable, tuple[V, object]] = OrderedDict()
        self._lock = threading.Lock()  # threads may share a memo: a lookup never meets an eviction half done

    def __call__(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The value stored for ``key`` (while its snapshot is unchanged), or ``compute()`` stored and
        returned (nothing is stored when it raises; ``compute`` runs outside the lock)."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
        if hit is not None and (self._same is None or self._same(hit[1], self._held(hit[0]))):  # type: ignore[misc]
            return hit[0]
        value = compute()
        kept = None if self._held is None else self._held(value)
        dropped: list[object] = []  # released after the lock: a finalizer they run may use this memo
        with self._lock:
            dropped.append(self._entries.get(key))
            self._entries[key] = (value, kept)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                dropped.append(self._entries.popitem(last=False))
        del dropped
        return value

    def __getstate__(self) -> dict[str, Any]:
        """Pickled empty (a cache, rebuilt where it is used), with its snapshot functions."""
        return {"size": self.size, "held": self._held, "same": self._same}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["size"], state.get("held"), state.get("same"))  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._entries)


def layout_snapshot(value: tuple[Any, Any]) -> tuple[object, ...]:
    """The snapshot of a kept ``(circuit, nodes)`` layout: the circuit's
    (:func:`~symverify.kernel.provers.fingerprint.snapshot`) and each node-table dataclass's fields,
    by identity (node ids are tuples of ints, which cannot change)."""
    from symverify.kernel.ir.memo import fields_now
    from symverify.kernel.provers.fingerprint import snapshot

    circuit, nodes = value
    tables = nodes if type(nodes) is tuple else (nodes,)
    return (snapshot(circuit), tuple(tables), tuple(fields_now(t) for t in tables))


def same_layout(a: object, b: object) -> bool:
    """Whether two :func:`layout_snapshot` s hold the same objects."""
    from symverify.kernel.provers.fingerprint import same_snapshot

    if type(a) is not tuple or type(b) is not tuple or len(a) != 3 or len(b) != 3:
        return False
    return (same_snapshot(a[0], b[0]) and len(a[1]) == len(b[1]) and all(map(is_, a[1], b[1]))
            and len(a[2]) == len(b[2]) and all(len(x) == len(y) and all(map(is_, x, y)) for x, y in zip(a[2], b[2])))
