"""Settings shared by the verification methods (budgets, seed, deadline)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from fractions import Fraction

from symverify.deadline import Deadline, DeadlineExceededError

__all__ = ["Options", "default_memory_limit", "DEFAULT_MAX_MONOMIALS", "DEFAULT_ERROR_BOUND", "Deadline",
           "DeadlineExceededError"]

DEFAULT_MAX_MONOMIALS = 5_000_000
DEFAULT_ERROR_BOUND = Fraction(1, 2**100)


def default_memory_limit() -> int:
    """A quarter of physical memory (PERFORMANCE.md: the exact guard's memory budget), ≥ 1 GiB."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return max(1 << 30, int(line.split()[1]) * 1024 // 4)
    except OSError:
        pass
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return max(1 << 30, total // 4)
    except (ValueError, OSError, AttributeError):
        return 4 << 30


@dataclass(frozen=True)
class Options:
    """What every method may read.

    ``deadline`` is a ``time.monotonic()`` value (None: no timeout); ``trials`` fixes the number
    of randomized points (None: enough for ``error_bound``); ``backend`` picks the exact engine
    (``flint`` or ``sympy``); ``max_monomials`` caps any one expanded polynomial and the total of
    the compared outputs; ``memory_limit`` (bytes) bounds the isolated expansion process;
    ``isolate`` forces (True) or forbids (False) running exact expansion in a subprocess;
    ``modular`` picks the randomized method's engine: ``"torch"`` (int64 mod 31-bit primes),
    ``"python"`` (Python ints mod primes ``≥ 2^61``) or ``"auto"`` (see
    :func:`symverify.provers.randomized.choose_engine`).

    Long loops poll the deadline through :meth:`checker` (every few hundred operations) and stop
    with :class:`DeadlineExceededError`, which the methods turn into ``unknown``; :meth:`check` is the
    same test for use between steps.
    """

    seed: int = 0
    trials: int | None = None
    deadline: float | None = None
    backend: str = "flint"
    max_monomials: int = DEFAULT_MAX_MONOMIALS
    memory_limit: int | None = None
    error_bound: Fraction = DEFAULT_ERROR_BOUND
    isolate: bool | None = None
    modular: str = "auto"

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: unlimited)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def checker(self) -> Deadline | None:
        """The deadline checker for interpreter loops (:mod:`symverify.deadline`): pass it as
        ``check=`` to :func:`~symverify.provers.modular.eval_mod_batch`, ``Side.evaluate`` or
        ``eval_model``; it raises :class:`DeadlineExceededError` once the deadline has passed. None
        when there is no deadline (the loops then skip every check)."""
        return Deadline.at(self.deadline)

    def check(self) -> None:
        """Raise :class:`DeadlineExceededError` if the deadline has passed (between the steps of a method)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlineExceededError()

    def memory(self) -> int:
        return self.memory_limit if self.memory_limit is not None else default_memory_limit()
