"""Stated size limits: what symverify refuses to materialise, read or write.

Every limit is a module-level constant, read when it is checked (so a caller may raise or lower
one with ``symverify.ir.limits.MAX_CELLS = ...``). Going over a limit raises
:class:`~symverify.errors.LimitError` (or, while loading a file,
:class:`~symverify.errors.SerializationError`) whose message names the limit, the size found and
where; nothing is truncated or rounded instead.

* :data:`MAX_CELLS` (``2^22``): cells of one dense array: a model's ``N'×d'`` state when it is
  evaluated, verified or compiled, ``Grid.to_rows()``, the nonzero cells of a grid with a nonzero
  fill, ``Grid.identity``/``Grid.symbolic``, the ``N'×d'`` state of a gadget built by
  :mod:`symverify.gadgets` (``pad``, ``compose``, the primitives, ``remember_*``, the layout moves),
  refused when the gadget is made. (The kaleidoscope compiler's ``max_cells`` defaults
  to it.)
* :data:`MAX_INPUTS` (``2^22``): the ``n·d`` inputs of a circuit or model that is evaluated,
  verified or compiled (``stats``/``symverify info`` do not need them and have no such limit).
* :data:`MAX_GATES` (``2^24``): the gates of a circuit symverify generates
  (:func:`~symverify.library.random_circuit`, :func:`~symverify.library.wired_circuit`, the
  ``w·Δ`` gates of each circuit of ``symverify sweep thm_h21``, the convolution terms of
  :func:`~symverify.library_gated.hyena`, :func:`~symverify.library_gated.h3` and the direct
  models built from them, whose sizes grow as ``N²``), so a size typed by mistake is refused at once
  instead of running until the timeout.
* :data:`MAX_TRIALS` (``2^16``): the randomized trials a caller may ask for (``verify(trials=...)``,
  ``symverify verify --trials``; a :class:`~symverify.errors.UsageError` above it), so a count typed
  by mistake is refused at once instead of running until the timeout (without one, forever). A
  caller's trials only add to the ``k`` that ``error_bound`` needs, which the method computes itself;
  each trial fails with probability at most ``2^-10`` (the most either engine runs with), so ``2^16``
  trials state ``2^-655360``, and the least positive float error bound, ``2^-1074``, needs at most 108.
* :data:`MAX_ERROR_BITS` (``2^16``): how small a randomized ``error_bound`` may be: at least
  ``2^-65536`` (about ``10^-19728``; a :class:`~symverify.errors.UsageError` below it). Meeting a
  bound ``2^-b`` takes exact arithmetic on numbers of about ``b`` bits and up to ``b/10`` trials, so a
  bound typed by mistake (``Fraction(1, 2**10**9)``) is refused at once instead of computing for
  minutes in gigabytes.
* :data:`MAX_PAINT` (``2^26``): the total area of a grid's rectangles that may be expanded cell
  by cell (``Grid.cells()``, ``Grid.nonzero()``; ``Grid.get`` scans the rectangles instead), and
  the block visits :meth:`Grid.nonzero_count` may spend resolving overlapping rectangles (counts
  come from the rectangles: one 10^5×10^5 mask is one block).
* :data:`MAX_INT_DIGITS` (``100 000``): decimal digits of one integer (a numerator or a
  denominator) in a JSON document, read or written. Exact conversion is quadratic in the digits,
  so this bounds the time a hostile file can cost; it is far above Python's own 4300-digit
  ``int``/``str`` limit, which symverify's exact conversions (:mod:`symverify.ir.bigint`) bypass.
* :data:`MAX_JSON_INT` (``2^63 − 1``): the magnitude of a JSON integer literal (sizes, node ids,
  layer indices, exponents); exact values are written as strings, never as JSON numbers.
* :data:`MAX_JSON_DEPTH` (``64``): nesting of arrays and objects in a JSON document (valid
  documents need at most 11).
* :data:`MAX_VALUE_BITS` (``2^20``): bits of the numerator or denominator of one value that exact
  evaluation computes (``symverify.evaluate`` and the exact executor; the provers bound their own):
  every value is checked as it is computed, so ``a^(2^100000)`` at ``a = 2`` is refused at the gate
  that first goes over it, naming the gate, instead of running for ever; the gate's own product of
  two values within the limit takes about 0.1 s (a ``gcd`` of fractions about 1 s). Read when the
  evaluation starts (:class:`~symverify.kernel.semantics.rings.FractionRing`).
* :data:`MAX_FILE_BYTES` (``2^30``): bytes of one file that symverify reads (documents, golden
  runs); only regular files are read (:func:`symverify.ir.files.read_file`), so ``/dev/zero`` or
  a FIFO is refused instead of read forever.

Memory is no constant but the device's own (:func:`device_memory`): the float and modular
executors refuse a batch one of whose states needs more bytes than the device has, before
allocating, and report an allocation the device refuses (:func:`out_of_memory`) as a
:class:`~symverify.errors.LimitError` too, never the allocator's ``RuntimeError`` or ``MemoryError``.
"""

from __future__ import annotations

import numbers
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from symverify.errors import LimitError, UsageError

__all__ = [
    "MAX_CELLS",
    "MAX_INPUTS",
    "MAX_GATES",
    "MAX_TRIALS",
    "MAX_ERROR_BITS",
    "MAX_PAINT",
    "MAX_INT_DIGITS",
    "MAX_JSON_INT",
    "MAX_JSON_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_VALUE_BITS",
    "check",
    "device_memory",
    "out_of_memory",
    "allocation_limit",
]

MAX_CELLS = 1 << 22
MAX_INPUTS = 1 << 22
MAX_GATES = 1 << 24
MAX_TRIALS = 1 << 16
MAX_ERROR_BITS = 1 << 16
MAX_PAINT = 1 << 26
MAX_INT_DIGITS = 100_000
MAX_JSON_INT = (1 << 63) - 1
MAX_JSON_DEPTH = 64
MAX_FILE_BYTES = 1 << 30
MAX_VALUE_BITS = 1 << 20

_WHAT = {
    "MAX_CELLS": "the largest dense state or grid symverify materialises",
    "MAX_INPUTS": "the most inputs n·d symverify evaluates, compiles or verifies",
    "MAX_GATES": "the most gates of a circuit symverify generates",
    "MAX_PAINT": "the most grid cells symverify expands one by one",
}


def check(count: int, limit: str, where: str | Callable[[], str]) -> None:
    """Raise :class:`LimitError` when ``count`` exceeds the limit called ``limit`` (e.g. ``"MAX_CELLS"``);
    ``where`` (or, on hot paths, a function returning it) names the object in the message.

    >>> check(10, "MAX_CELLS", "test")
    >>> check(MAX_CELLS + 1, "MAX_CELLS", "Grid.to_rows of a 4194305×1 grid")
    Traceback (most recent call last):
    ...
    symverify.errors.LimitError: Grid.to_rows of a 4194305×1 grid: 4194305 cells is more than symverify.ir.limits.MAX_CELLS = 4194304 (the largest dense state or grid symverify materialises)

    A ``limit`` that names no limit (it read any global of this module) or a ``count`` that is no
    real number is a :class:`~symverify.errors.UsageError`.
    """
    if type(limit) is not str or limit not in _WHAT:
        raise UsageError(f"limits.check: limit: expected one of {', '.join(_WHAT)}, found {limit!r:.60}")
    value = globals()[limit]
    if type(count) is not int:
        if isinstance(count, int) and not isinstance(count, bool):  # an int subclass by its value: its own > could pass any count
            count = int.__index__(count)
        elif isinstance(count, bool) or not isinstance(count, numbers.Real):
            raise UsageError(f"limits.check: count: expected a number, found {type(count).__name__} (checking {limit})")
    if count > value:
        unit = {"MAX_INPUTS": "inputs", "MAX_GATES": "gates"}.get(limit, "cells")
        raise LimitError(
            f"{where() if callable(where) else where}: {_count(count)} {unit} is more than symverify.ir.limits.{limit} = {value} ({_WHAT[limit]})"
        )


def _count(x: int) -> str:
    """``x`` in decimal, or its order of magnitude when the text would be long (this module sits
    below the big-integer printer, :mod:`symverify.ir.bigint`)."""
    return str(x) if x.bit_length() <= 200 else f"about 2^{x.bit_length() - 1}"


def device_memory(device: Any = None) -> int | None:
    """Bytes of memory of ``device``: a CUDA device's total memory, else (the CPU, ``None``) the
    machine's physical memory; None where the platform does not say. torch is not imported here:
    a CUDA device exists only where it is loaded."""
    if getattr(device, "type", None) == "cuda":
        return int(sys.modules["torch"].cuda.get_device_properties(device).total_memory)
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        return None


def out_of_memory(e: BaseException, what: str) -> LimitError | None:
    """The :class:`LimitError` naming ``what`` for an allocator's failure (``MemoryError``; torch on
    the CPU: ``RuntimeError`` ``can't allocate memory``; CUDA: ``torch.OutOfMemoryError``); None for
    any other error."""
    torch = sys.modules.get("torch")
    oom = getattr(torch, "OutOfMemoryError", None) if torch is not None else None
    if not (isinstance(e, MemoryError) or (oom is not None and isinstance(e, oom))
            or (isinstance(e, RuntimeError) and "can't allocate memory" in str(e))):
        return None
    first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
    return LimitError(f"{what}: the run needs more memory than the device has ({first}); run it in smaller batches")


@contextmanager
def allocation_limit(what: str) -> Iterator[None]:
    """Run the block with :func:`out_of_memory`'s conversion: an allocation the device refuses is a
    :class:`LimitError` naming ``what``; any other error passes unchanged."""
    try:
        yield
    except (RuntimeError, MemoryError) as e:
        err = out_of_memory(e, what)
        if err is None:
            raise
        raise err from None
