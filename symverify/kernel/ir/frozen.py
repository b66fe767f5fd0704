"""A read-only mapping for the resource and bound tables of frozen results.

A frozen dataclass keeps its fields from being rebound, not a ``dict`` field from being changed:
``frag.bounds["layers"] = 99`` would change what ``over_bound()`` says of a result after it was
made. :class:`ReadOnlyMapping` is what :class:`~symverify.kernel.gadgets.fragment.Fragment`,
:class:`~symverify.kernel.kaleidoscope.factorization.Factorization` and
:class:`~symverify.compiler.result.Compiled` hold instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeVar

__all__ = ["ReadOnlyMapping"]

V = TypeVar("V")


class ReadOnlyMapping(dict[str, V]):
    """A ``dict`` that cannot be changed after it is made: item assignment and deletion, ``update``,
    ``pop``, ``popitem``, ``clear``, ``setdefault`` and ``|=`` raise ``TypeError``, and calling
    ``__init__`` again changes nothing (the items are set once, by ``__new__``).

    Being a ``dict``, it is what callers already handle: ``json.dumps``, ``{**m}``, ``m | {...}``
    (a plain dict), ``m.copy()`` and ``dict(m)`` (mutable copies), equality with any dict; it pickles
    and copies as itself (results cross process boundaries: ``symverify prove -j N``, Dask). It is
    unhashable, as a dict is. Only ``dict``'s own methods called on it by name
    (``dict.__setitem__(m, …)``) get around it, as ``object.__setattr__`` does around a frozen
    dataclass: it guards against mistakes, not against code set on forging.
    """

    __slots__ = ()

    def __new__(cls, items: Mapping[str, V] | Iterable[tuple[str, V]] = (), /) -> ReadOnlyMapping[V]:
        self = super().__new__(cls)
        dict.update(self, items)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # the items were set by __new__, once
        pass

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("'ReadOnlyMapping' object does not support item assignment: the table is read-only "
                        "(copy it with dict(...))")

    __setitem__ = _refuse  # type: ignore[assignment]

    def __delitem__(self, key: str) -> NoReturn:
        raise TypeError("'ReadOnlyMapping' object does not support item deletion: the table is read-only")

    update = pop = popitem = clear = setdefault = _refuse  # type: ignore[assignment]

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc,override]
        self._refuse()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ReadOnlyMapping: cannot set attribute {name!r}; the mapping is read-only (copy it with dict(...))")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ReadOnlyMapping: cannot delete attribute {name!r}; the mapping is read-only")

    def __reduce__(self) -> tuple[type[ReadOnlyMapping[V]], tuple[dict[str, V]]]:
        return (ReadOnlyMapping, (dict(self),))
