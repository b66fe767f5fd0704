"""Results of pure functions of immutable IR objects, kept for the last few objects.

Circuits, models, grids and kaleidoscopes are immutable, so anything computed from one of them
(its straight-line code, its structural bounds, its fingerprint, an execution plan) can be reused
while the object lives. :class:`IdentityMemo` finds an entry by the object's identity plus a
hashable key (the other inputs of the function) and keeps the object itself alive in the entry,
so its ``id`` cannot be reused by another object while the entry exists. The least recently used
entry goes first.

An entry also records what the object's own fields held when it was stored (:func:`fields_now`: the
objects its slots and instance dict refer to, by identity), and a lookup that finds them changed is
a miss. "Immutable" is a convention Python does not enforce: ``object.__setattr__(circuit, "gates",
...)`` rewrites a frozen dataclass after its checks and after a ``verify`` filled the memos, and a hit
would then hand the new content the old content's program, bounds, fingerprint or plainness check
(a randomized ``proved`` of the old gates). A field written in place *inside* an object the key
refers to (a gate of the circuit's tuple, a coefficient's numerator) is not seen by a lookup, which
would have to walk the whole object: the kernel's checks of a side
(:func:`~symverify.kernel.provers.fingerprint.check_plain`, at the start of every ``verify``,
certificate and kaleidoscope check) compare such a snapshot of everything the side holds and, where
it changed, :func:`forget` what every memo keeps for the side before anything is read from one.
A memo that a reader outside such a check also writes (a circuit's ``program``, its measures, bounds
and weight names, the executors' plans: ``validate=True``) runs that comparison before it stores a
value (:func:`set_validator`), except for the objects of a check's own call (:func:`checked_scope`),
compared once when that call ends if a value was stored for them in it: a value computed while the
side held other content, kept next to a snapshot its restored objects match again, would otherwise
be read as the restored content's.
A memo may be shared by threads (``verify`` from several threads, Dask's
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

import contextlib
import threading
import types
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from functools import partial
from itertools import chain
from operator import attrgetter, is_
from typing import Generic, TypeVar

from symverify.errors import UsageError

__all__ = ["IdentityMemo", "fields_now", "forget", "set_validator", "checked_scope", "in_checked_scope"]

V = TypeVar("V")

_UNSET = object()
_MEMOS: dict[int, weakref.ReferenceType[IdentityMemo[object]]] = {}
"""Every memo made, for :func:`forget`: a weak reference by the memo's ``id`` (a memo of a prover run
goes with it). The reference's callback removes the entry; it runs before the memo's memory, and so
its ``id``, is freed, so it never removes a later memo's entry. Read and written by single dict
operations (atomic under the interpreter lock), never under a lock the callback could wait for."""
_READERS: dict[type, tuple[tuple[types.MemberDescriptorType, ...], Callable[[object], tuple[object, ...]] | None]] = {}


def _reader(kind: type) -> tuple[tuple[types.MemberDescriptorType, ...], Callable[[object], tuple[object, ...]] | None]:
    """The slot descriptors of ``kind`` and its bases, and (kept per class) a C-level reader of all of
    them (``attrgetter`` of their names) where each name reaches its own slot on ``kind`` (no property
    or other slot of a subclass shadows it), else None."""
    found = _READERS.get(kind)
    if found is None:
        slots = tuple(v for c in kind.__mro__ for v in vars(c).values() if isinstance(v, types.MemberDescriptorType))
        names = [s.__name__ for s in slots]
        direct = len(set(names)) == len(names) and all(getattr(kind, n, None) is s for n, s in zip(names, slots))
        read: Callable[[object], tuple[object, ...]] | None = None
        if direct and len(names) > 1:
            read = attrgetter(*names)
        elif direct and names:
            one = attrgetter(names[0])
            read = lambda obj: (one(obj),)  # noqa: E731
        found = _READERS[kind] = (slots, read)
    return found


def fields_now(obj: object) -> tuple[object, ...]:
    """The objects ``obj``'s own fields refer to now: the value of each of its slots (``_UNSET`` where
    unset), then each key and value of its instance dict, in order. Two snapshots of one object whose
    items are the same objects (``is``) mean no field of it was assigned in between.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> c = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    >>> before = fields_now(c)
    >>> object.__setattr__(c, "gates", (Gate.add(0, 0),))
    >>> _same(before, fields_now(c))
    False
    """
    kind = type(obj)
    slots, read = _reader(kind)
    state: tuple[object, ...] = ()
    if slots:
        try:
            state = read(obj) if read is not None else tuple(slot.__get__(obj, kind) for slot in slots)
        except AttributeError:  # a slot not set
            state = tuple(_slot_value(slot, obj, kind) for slot in slots)
    if kind.__dictoffset__:
        own = getattr(obj, "__dict__", None)
        if type(own) is dict and own:
            state += tuple(chain.from_iterable(own.items()))
    return state


def _slot_value(slot: types.MemberDescriptorType, obj: object, kind: type) -> object:
    try:
        return slot.__get__(obj, kind)
    except AttributeError:
        return _UNSET


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Whether two :func:`fields_now` snapshots hold the same objects, item by item."""
    return len(a) == len(b) and all(map(is_, a, b))


_VALIDATOR: list[Callable[[object], None]] = []
"""The check a memo made with ``validate=True`` runs on an object before storing a value for it (set by
:mod:`symverify.kernel.provers.fingerprint`: :func:`~symverify.kernel.provers.fingerprint.refresh`)."""


def set_validator(check: Callable[[object], None]) -> None:
    """Make ``check(obj)`` run before a ``validate=True`` memo stores a value for ``obj``: it drops what
    every memo keeps for ``obj`` when ``obj`` no longer holds what the kept snapshot of it says
    (:func:`forget`), so a value computed from content rewritten in place never sits next to a snapshot
    of other content (restoring the old objects afterwards would make that snapshot match again)."""
    _VALIDATOR[:] = [check]


_SCOPE = threading.local()
"""Per thread: the open :func:`checked_scope` blocks, innermost last, each its objects and a list of
those a memo stored a value for within it."""


@contextlib.contextmanager
def checked_scope(*objs: object, compare_after: bool = True) -> Iterator[None]:
    """Within this block, this thread's ``validate=True`` memos store values for ``objs`` without
    running the validator: a check of each (``verify``'s sides, checked when read) has just compared
    its snapshot. Code the block runs may still rewrite one in place (a progress display, a callback,
    a finalizer, another thread), so on leaving the block the validator runs once for each that a
    memo stored a value for within it (``compare_after``): a value stored from content that is gone
    by then is dropped with everything else kept for it, never read as the content a later check
    finds. ``compare_after=False`` only where the block runs the kernel's own code alone (the
    encoder); an enclosing block still compares. A side rewritten and put back both while the block
    runs (two callbacks, another thread) is not seen, as by the check itself."""
    frames: list[tuple[tuple[object, ...], list[object]]] = getattr(_SCOPE, "frames", [])
    _SCOPE.frames = frames
    stored: list[object] = []
    frames.append((objs, stored))
    try:
        yield
    finally:
        frames.pop()
        if compare_after and _VALIDATOR:
            for obj in objs:
                if any(x is obj for x in stored):
                    _VALIDATOR[0](obj)


def in_checked_scope(*objs: object) -> bool:
    """Whether an open :func:`checked_scope` of this thread holds every one of ``objs`` (its end
    compares the snapshot of each that a memo stored a value for within it). Notes nothing."""
    frames = getattr(_SCOPE, "frames", ())
    return all(any(any(x is obj for x in held) for held, _ in frames) for obj in objs)


def _in_scope(obj: object) -> bool:
    """Whether an open :func:`checked_scope` of this thread holds ``obj``; each that does notes that a
    value is stored for it."""
    found = False
    for objs, stored in getattr(_SCOPE, "frames", ()):
        if any(x is obj for x in objs):
            stored.append(obj)
            found = True
    return found


def forget(obj: object) -> None:
    """Drop what every memo keeps for ``obj`` (any key): the kernel calls it when ``obj``'s content
    changed under its identity (a field written inside it past its frozen dataclass), so no program,
    bound, plan, digest or finding of the old content is read for the new one. A memo whose count of
    entries by ``id`` (``_ids``) has none for ``obj`` holds none for it (an entry keeps its object alive,
    so no other object has that ``id``) and is skipped; that count is read without the memo's lock, as
    :meth:`IdentityMemo.drop` reads it under the lock: an entry another thread stores at that moment
    is kept either way.

    >>> memo: IdentityMemo[int] = IdentityMemo(4)
    >>> a = [1]
    >>> memo(a, lambda: 10), memo(a, lambda: 11, key="k")
    (10, 11)
    >>> forget(a)
    >>> memo.get(a), memo.get(a, "k")
    (None, None)
    """
    key = id(obj)
    for ref in list(_MEMOS.values()):
        memo = ref()
        if memo is not None and key in memo._ids:  # a memo holding nothing for obj has nothing to drop
            memo.drop(obj)


def _unregister(key: int, _ref: object) -> None:
    """The callback of a memo's weak reference in :data:`_MEMOS`: its entry goes with it."""
    _MEMOS.pop(key, None)


class IdentityMemo(Generic[V]):
    """The values computed for the last ``size`` (object, key) pairs, found by identity.

    ``size`` is a plain ``int`` ≥ 1; anything else (0, a bool, a float, a numpy integer) raises
    :class:`~symverify.errors.UsageError` naming what was found.
    """

    def __init__(self, size: int = 16, validate: bool = False, kept_fields: bool = False) -> None:
        if type(size) is not int or size < 1:  # a bool, float or numpy int is no size
            raise UsageError(f"IdentityMemo size: expected an int ≥ 1, found {type(size).__name__} {size!r:.40}")
        self.size = size
        self.validate = validate is True
        self.kept_fields = kept_fields is True
        self._entries: OrderedDict[tuple[int, Hashable], tuple[object, tuple[object, ...], V, tuple[object, ...]]] = OrderedDict()
        self._ids: dict[int, int] = {}  # how many entries each object's id has (drop skips the others)
        self._lock = threading.Lock()
        _MEMOS[id(self)] = weakref.ref(self, partial(_unregister, id(self)))  # type: ignore[arg-type]

    def get(self, obj: object, key: Hashable = ()) -> V | None:
        """The value stored for ``obj`` (this very object, its fields unchanged since: :func:`fields_now`)
        and ``key``, or None. With ``kept_fields``, also only while the value's own fields are the
        objects they were when stored: a value handed out (a program, a schedule) and rewritten by its
        holder (``object.__setattr__`` past its frozen dataclass) is a miss, never read again."""
        k = (id(obj), key)
        state = fields_now(obj)
        with self._lock:
            hit = self._entries.get(k)
            if hit is None or hit[0] is not obj or not _same(hit[1], state):
                return None
            if self.kept_fields and not _same(hit[3], fields_now(hit[2])):
                return None
            self._entries.move_to_end(k)
            return hit[2]

    def put(self, obj: object, value: V, key: Hashable = ()) -> V:
        """Store ``value`` for ``obj`` as its fields are now (:func:`fields_now`) and ``key`` (evicting
        the least recently used entry). The entries it drops are released after the lock: a finalizer
        they run may use this memo."""
        if not _in_scope(obj) and self.validate and _VALIDATOR:  # a writer outside a check: the snapshot first
            _VALIDATOR[0](obj)
        k = (id(obj), key)
        state = fields_now(obj)
        dropped: list[object] = []
        with self._lock:
            old = self._entries.get(k)
            if old is None:
                self._ids[k[0]] = self._ids.get(k[0], 0) + 1
            dropped.append(old)
            self._entries[k] = (obj, state, value, fields_now(value) if self.kept_fields else ())
            self._entries.move_to_end(k)
            while len(self._entries) > self.size:
                dropped.append(self._pop(next(iter(self._entries))))
        del dropped
        return value

    def _pop(self, k: tuple[int, Hashable]) -> object:
        """Remove the entry at ``k`` (under the lock) and count it off its object's entries."""
        entry = self._entries.pop(k)
        left = self._ids[k[0]] - 1
        if left:
            self._ids[k[0]] = left
        else:
            del self._ids[k[0]]
        return entry

    def __call__(self, obj: object, compute: Callable[[], V], key: Hashable = ()) -> V:
        """The stored value, or ``compute()`` stored and returned."""
        hit = self.get(obj, key)
        return self.put(obj, compute(), key) if hit is None else hit

    def drop(self, obj: object) -> None:
        """Forget every entry stored for ``obj`` (this very object, under any key)."""
        with self._lock:
            if not self._ids.get(id(obj)):  # nothing stored for it (the common case: a side seen first)
                return
            gone = [k for k, entry in self._entries.items() if entry[0] is obj]
            dropped = [self._pop(k) for k in gone]
        del dropped  # released after the lock, as in put

    def clear(self) -> None:
        with self._lock:
            entries, self._entries = self._entries, OrderedDict()
            self._ids = {}
        entries.clear()  # released after the lock, as in put

    def __getstate__(self) -> dict[str, int | bool]:
        """Pickled empty: entries are found by ``id``, which means nothing in another process."""
        return {"size": self.size, "validate": self.validate, "kept_fields": self.kept_fields}

    def __setstate__(self, state: dict[str, int | bool]) -> None:
        self.__init__(int(state["size"]), state.get("validate") is True, state.get("kept_fields") is True)  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._entries)
