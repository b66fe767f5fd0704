"""A read-only mapping for the resource and bound tables of frozen results.

A frozen dataclass keeps its fields from being rebound, not a ``dict`` field from being changed:
``frag.bounds["layers"] = 99`` would change what ``over_bound()`` says of a result after it was
made. :class:`ReadOnlyMapping` is what :class:`~symverify.kernel.gadgets.fragment.Fragment`,
:class:`~symverify.kernel.kaleidoscope.factorization.Factorization` and
:class:`~symverify.compiler.result.Compiled` hold instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

__all__ = ["ReadOnlyMapping"]

V = TypeVar("V")


class ReadOnlyMapping(Mapping[str, V], Generic[V]):
    """A mapping that cannot be changed after it is made: no item assignment, deletion, ``update``
    or attribute to swap (``__slots__``).

    Unlike :class:`types.MappingProxyType` it pickles and deep-copies (as its items: results
    cross process boundaries, ``symverify prove -j N`` and Dask) and equals any mapping with the
    same items (``collections.abc.Mapping.__eq__``), a plain ``dict`` included. It is unhashable,
    as a dict is. ``dict(m)`` gives a mutable copy.
    """

    __slots__ = ("_items",)
    _items: dict[str, V]

    def __init__(self, items: Mapping[str, V]) -> None:
        object.__setattr__(self, "_items", dict(items))

    def __getitem__(self, key: str) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ReadOnlyMapping: cannot set attribute {name!r}; the mapping is read-only (copy it with dict(...))")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ReadOnlyMapping: cannot delete attribute {name!r}; the mapping is read-only")

    def __reduce__(self) -> tuple[type[ReadOnlyMapping[V]], tuple[dict[str, V]]]:
        return (ReadOnlyMapping, (dict(self._items),))

    def __repr__(self) -> str:
        return repr(self._items)
