"""Writing a file whole or not at all: the one way ``symverify prove``/``compile``/``report`` write
their outputs (``--json``, ``--junit``, ``--golden``, ``-o``, ``--certificate``) and a proof script
writes its ``--json`` result (:func:`symverify.scripts.protocol.script_main`).

The rule (:func:`write_whole`): the text goes into a new file beside the target, which is then
renamed over it (``os.replace``, atomic on one file system). A reader, an interruption (a second
Ctrl-C, SIGTERM) or a full disk therefore sees either the previous file, untouched, or the whole
new one, never a file cut short (``open(path, "w")`` empties it first). Every failure is a
:class:`~symverify.errors.UsageError` ``WHAT PATH: cannot write there (REASON)``, and the new file
is removed again."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path

from symverify.errors import UsageError

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(path: str) -> str:
    """``path`` on one line, as messages show it: a line break and a tab as ``\\n`` and ``\\t``, other
    control characters as ``\\xNN`` (a message is cut at its first line break; a terminal never runs
    a path's escape sequence)."""
    one = path.replace("\n", "\\n").replace("\t", "\\t")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", one)


def write_whole(path: str, text: str, what: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all; ``what`` names the output in messages
    (the flag: ``--json``, ``-o``).

    - A regular file, existing or new: ``text`` goes into a new file beside it
      (:func:`new_temporary`: ``O_EXCL`` under a name of its own, so a file or a link planted under
      that name is never written through), which is renamed over ``path``. The new file keeps the
      read, write and execute bits of the file it replaces (a ``chmod 600`` file stays private; no
      set-id bit), or has those the umask gives a new file.
    - A symbolic link is followed: the file it names (at the end of a chain of links) is replaced,
      the link kept. A loop of links is refused.
    - A FIFO or a device (``/dev/stdout``) cannot be renamed over: it is written directly.
    - A hard link the user made (``ln run.json latest.json``) is another name of the old file, which
      the rename does not change: that name keeps the previous content. Writing through it in place
      would give up the whole-or-nothing rule, so the replacement stays and a
      ``symverify: warning:`` line on standard error says how many other names keep the old content.

    Raises :class:`~symverify.errors.UsageError` ``WHAT PATH: cannot write there (REASON)`` for any
    ``OSError``; the new file is removed on any failure or interruption, the old one stays."""
    p = Path(path)
    if p.is_symlink():  # replace the file it points to, not the link
        try:
            p = p.resolve()
        except (OSError, RuntimeError):  # a loop of links
            raise UsageError(f"{what} {shown(path)}: cannot write there (a loop of symbolic links)") from None
    if p.exists() and not p.is_file():  # a device or a FIFO: no rename over it
        try:
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as e:
            raise UsageError(f"{what} {shown(path)}: cannot write there ({e.strerror or e})") from None
        return
    tmp: Path | None = None
    links = 0
    try:
        mode: int | None = None
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(p)
            mode = st.st_mode & 0o777  # rwx bits: no set-id bit carried over
            links = st.st_nlink - 1
        fd, tmp = new_temporary(p)
        try:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            write_all(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, p)
        tmp = None
    except OSError as e:
        raise UsageError(f"{what} {shown(path)}: cannot write there ({e.strerror or e})") from None
    finally:  # an interruption too: the new file goes, the old one stays
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
    if links > 0:
        warn(f"symverify: warning: {what} {shown(path)}: written whole as a new file; "
             f"{'its other hard link keeps' if links == 1 else f'its {links} other hard links keep'} the previous "
             "content (a symbolic link would follow it)")


def new_temporary(p: Path) -> tuple[int, Path]:
    """A new file beside ``p`` (``.NAME.PID.RANDOM.tmp``, NAME cut to 100 characters so the name stays
    within the file system's limit) opened for writing: created with ``O_EXCL``, so an existing file
    or link of that name is never opened (another name is drawn, up to a hundred times; then the
    ``FileExistsError`` is raised); mode ``0o666`` less the umask."""
    import secrets

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for tries in range(100, 0, -1):
        tmp = p.with_name(f".{p.name[:100]}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            if tries == 1:  # a hundred names drawn, each taken: said as the error it is
                raise
    raise AssertionError("unreachable")


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the file descriptor ``fd`` (``os.write`` may write part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def warn(line: str) -> None:
    """``line`` on standard error, never raising: a standard error that is closed or cannot take it
    (a full disk) is left silent and pointed at the null device (the output was written all the same)."""
    from symverify.progress import stream_to_devnull

    stream = sys.stderr
    if stream is None:
        return
    try:
        print(line, file=stream, flush=True)
    except (OSError, ValueError):
        stream_to_devnull(stream)
