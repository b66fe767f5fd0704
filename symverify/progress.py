"""A progress display for long calls (``compile``, ``verify``): what runs and for how long.

:func:`activity` shows a spinner, a label and the elapsed time on standard error while a block runs
(rich, transient: the line disappears when the block ends). It is on when the display is
interactive (standard error is a terminal, or a Jupyter kernel) and off otherwise, so logs and
pipes stay clean; ``enabled=True`` or the environment variable ``SYMVERIFY_PROGRESS=1`` (or
``true``, ``yes``, ``on``) asks for it anyway, ``enabled=False`` or ``SYMVERIFY_PROGRESS=0`` (or ``false``,
``no``, ``off``) turns it off; unset or empty leaves the choice to the display, and any other value
is a :class:`~symverify.errors.UsageError` rather than a guess. A terminal without cursor
control (``TERM=dumb`` or ``unknown``) gets two plain lines instead: the label, then the label
with the elapsed time. Nothing is computed differently: only the display changes. rich is imported
only when the display is on.

:func:`tolerant_output` keeps the command line and proof scripts from crashing where standard output
or error is ASCII-only: symbols they cannot encode are written as ``\\u2192``-style escapes.

    >>> from symverify.progress import activity, wanted
    >>> with activity("compiling", enabled=False):
    ...     pass
    >>> wanted(False), wanted(True)
    (False, True)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from typing import Any

__all__ = ["activity", "wanted", "ENV", "tolerant_output"]  # encodes and env_switch: internal

ENV = "SYMVERIFY_PROGRESS"


def _interactive(stream: Any) -> bool:
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):
        return False
    return "ipykernel" in sys.modules and type(stream).__module__.startswith("ipykernel")


_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def env_switch(name: str, on: str, off: str, unset: str, hint: str = "") -> bool | None:
    """The on/off setting held by the environment variable ``name``: True for ``1``, ``true``, ``yes``,
    ``on``; False for ``0``, ``false``, ``no``, ``off`` (any case, surrounding spaces ignored); None when
    unset or empty. Any other value is a :class:`~symverify.errors.UsageError` naming the variable, the
    value and the accepted words (``on``, ``off`` and ``unset`` say what each choice does, ``hint`` is
    added at the end): a misspelt setting is never guessed to be on, off or the default."""
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if value == "":
        return None
    if value in _ON or value in _OFF:
        return value in _ON
    from symverify.errors import UsageError

    raise UsageError(f"{name}: expected 1, true, yes or on ({on}), 0, false, no or off ({off}), or empty "
                     f"({unset}), found {raw[:40]!r} in the environment{hint}")


def _from_env() -> bool | None:
    """``SYMVERIFY_PROGRESS`` read by :func:`env_switch`: a value other than the on and off words or
    empty is a :class:`~symverify.errors.UsageError`, never taken as "automatic"."""
    return env_switch(ENV, "show progress", "hide it", "show it when interactive",
                      " (progress=True or False, or --progress / --no-progress, decides without reading it)")


def wanted(enabled: bool | None = None, stream: Any = None) -> bool:
    """Whether to show progress: ``enabled`` when given, else ``SYMVERIFY_PROGRESS`` (``1``/``0`` and
    their word forms, :func:`_from_env`), else whether ``stream`` (default standard error) is interactive."""
    if enabled is not None:
        if not isinstance(enabled, bool):
            from symverify.errors import UsageError

            raise UsageError(f"progress: expected True, False or None (automatic), found {enabled!r}")
        return enabled
    env = _from_env()
    if env is not None:
        return env
    return _interactive(sys.stderr if stream is None else stream)


@contextmanager
def activity(label: str, enabled: bool | None = None, *, stream: Any = None) -> Iterator[None]:
    """Show ``label`` with a spinner and the elapsed time while the block runs (see the module docstring)."""
    if not wanted(enabled, stream):
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    class _Quiet(Console):
        def on_broken_pipe(self) -> None:
            """The reader of the spinner's stream has gone (``2>&1 | head -1``): draw nothing more and go on.
            rich's own raised ``SystemExit(1)``: ``verify`` exited with refuted's code for a proved identity."""
            self.quiet = True
            stream_to_devnull(self.file)

    asked = enabled is True or (enabled is None and _from_env() is True)
    console = _Quiet(file=sys.stderr if stream is None else stream, force_terminal=True if asked else None)
    if console.is_dumb_terminal:  # TERM=dumb or unknown: rich draws no live line there, so two plain lines
        start = time.monotonic()
        console.print(f"{label} ...", markup=False, highlight=False, soft_wrap=True)
        try:
            yield
        finally:
            elapsed = timedelta(seconds=max(0, int(time.monotonic() - start)))
            console.print(f"{label}: {elapsed}", markup=False, highlight=False, soft_wrap=True)
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True) as bar:
        bar.add_task(label, total=None)
        yield


_SYMBOLS = "→⊙×Δ≤…"
"""Symbols symverify prints (titles, formulas, help): a stream that cannot encode them is ASCII-only."""


def encodes(stream: Any, text: str) -> bool:
    """Whether ``stream`` (a text stream) can write ``text`` in its encoding."""
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


@contextmanager
def tolerant_output() -> Iterator[None]:
    """Standard output and error that cannot encode the symbols symverify prints (an ASCII-only
    locale such as ``LC_ALL=C`` with UTF-8 mode off, ``PYTHONIOENCODING=ascii``) write each of them as
    a ``\\u2192``-style escape instead of failing with ``UnicodeEncodeError``; the streams' error
    handlers are restored on exit (the command line and proof scripts also run in-process, in tests and notebooks)."""
    changed: list[tuple[Any, str]] = []
    for stream in dict.fromkeys((sys.stdout, sys.stderr)):
        if stream is None or encodes(stream, _SYMBOLS) or not hasattr(stream, "reconfigure"):
            continue
        try:
            old = stream.errors or "strict"
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):  # not an io.TextIOWrapper, or closed
            continue
        changed.append((stream, old))
    try:
        yield
    finally:
        for stream, old in changed:
            with suppress(AttributeError, ValueError, OSError):
                stream.reconfigure(errors=old)


def stream_to_devnull(stream: Any) -> None:
    """Point ``stream``'s file descriptor at the null device (its reader has gone: a broken pipe), so
    what is still written to it goes nowhere; a stream without a file descriptor is left as it is."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def stdout_to_devnull() -> None:
    """Point standard output's file descriptor at the null device: the reader of a pipe has gone
    (``| head``), so what is still to be printed (and Python's flush at exit) goes nowhere instead
    of raising ``BrokenPipeError``; the run goes on to write its files and exit with its own code.
    A stream without a file descriptor is left as it is (nothing flushes it at exit)."""
    stream_to_devnull(sys.stdout)
