"""Deadlines inside long loops: a cheap checker that raises :class:`DeadlineExceededError`.

A verification method must come back within about its timeout even when a single step (one
interpreter pass over a large model, one certificate stage) takes longer than the whole budget.
Loops that may run long accept ``check``: a callable taking no arguments that returns ``None``
while time is left and raises :class:`DeadlineExceededError` once the deadline has passed. They call it
every :data:`CHECK_EVERY` elementary operations or so (cells, gates, butterfly pairs), and between
layers, so a pass stops within a few milliseconds of the deadline and the checks cost well under
1 % of the work. ``check=None`` (the default everywhere) means no deadline and no overhead.

:class:`DeadlineExceededError` is internal: a method that passes a checker catches it and answers
``unknown`` (with a note saying where the time ran out); it is never a user-facing error.

>>> import time
>>> Deadline.at(None) is None
True
>>> late = Deadline(time.monotonic() - 1)
>>> try:
...     late()
... except DeadlineExceededError as e:
...     print("stopped:", e)
stopped: the deadline passed
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable

__all__ = ["CHECK_EVERY", "Check", "Deadline", "DeadlineExceededError", "as_check"]

CHECK_EVERY = 512
"""About how many elementary operations a checked loop performs between two calls of ``check``."""

Check = Callable[[], None]


class DeadlineExceededError(Exception):
    """The deadline passed inside a checked computation (internal: callers answer ``unknown``)."""

    def __init__(self, detail: str = "the deadline passed") -> None:
        super().__init__(detail)
        self.detail = detail


class Deadline:
    """A ``time.monotonic()`` deadline; calling it raises :class:`DeadlineExceededError` once it has passed."""

    __slots__ = ("when",)

    def __init__(self, when: float) -> None:
        if when != when:  # NaN: every comparison with it is False, so it would never expire
            from symverify.errors import UsageError

            raise UsageError("deadline: expected a time.monotonic() deadline, found NaN (a deadline that never passes)")
        self.when = when

    @staticmethod
    def at(when: float | None) -> Deadline | None:
        """The checker for a ``time.monotonic()`` value, or None (no deadline) for None."""
        return None if when is None else Deadline(when)

    def __call__(self) -> None:
        if time.monotonic() > self.when:
            raise DeadlineExceededError()

    def expired(self) -> bool:
        return time.monotonic() > self.when

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.when - time.monotonic()

    def __repr__(self) -> str:
        return f"Deadline(in {self.remaining():.3g} s)"


def as_check(deadline: float | Check | None) -> Check | None:
    """A checker from a ``time.monotonic()`` deadline (a real number, not a bool or NaN), an
    existing checker, or None; anything else is a :class:`~symverify.errors.UsageError`."""
    if deadline is None or callable(deadline):
        return deadline
    if isinstance(deadline, bool) or not isinstance(deadline, numbers.Real):
        from symverify.errors import UsageError

        raise UsageError(f"deadline: expected a time.monotonic() deadline (a number), a checker or None, found "
                         f"{type(deadline).__name__}")
    return Deadline(float(deadline))
