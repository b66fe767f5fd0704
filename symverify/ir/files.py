"""Reading input files safely: regular files only, at most :data:`~symverify.ir.limits.MAX_FILE_BYTES`.

A path may name a character device (``/dev/zero`` never ends), a FIFO (blocks until a writer
comes, then may never end), a directory or a file larger than any valid document. Every
symverify loader reads through :func:`read_file`, which opens without blocking, checks with
``fstat`` that the open file is a regular file, and reads at most the limit plus one byte: a file
that is not regular, or longer than the limit (also one that grows while it is read), raises
:class:`~symverify.errors.SerializationError` saying what was expected, what was found and where.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from symverify.errors import SerializationError
from symverify.ir import limits

__all__ = ["read_file", "file_path"]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def file_path(path: object, verb: str) -> Path:
    """``Path(path)`` for a ``str`` or ``os.PathLike`` of text; anything else (None, bytes, a
    number) raises :class:`SerializationError` ``cannot {verb}: expected a file path …``."""
    try:
        return Path(path)  # type: ignore[arg-type]
    except TypeError:
        raise SerializationError(f"cannot {verb}: expected a file path (str or os.PathLike), found "
                                 f"{type(path).__name__}") from None


def read_file(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (default
    ``limits.MAX_FILE_BYTES``, read at the call).

    Raises:
        SerializationError: the path is empty (``""``, which ``Path`` reads as the current directory),
            cannot be opened, is not a regular file, or holds more than
            ``symverify.ir.limits.MAX_FILE_BYTES`` bytes.
    """
    if isinstance(path, str) and not path:  # Path("") is the current directory
        raise SerializationError("cannot read '': expected a file path, found an empty string")
    p = file_path(path, "read")
    named = "symverify.ir.limits.MAX_FILE_BYTES = " if limit is None else "the limit of "
    limit = limits.MAX_FILE_BYTES if limit is None else limit
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise SerializationError(f"cannot read {p}: {e.strerror or e}") from None
    except ValueError:  # an embedded NUL (os.open's own error): no file has such a name
        raise SerializationError(f"cannot read {str(p)!r}: expected a file path, found one holding a NUL character") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SerializationError(f"cannot read {p}: expected a regular file, found {_kind(st.st_mode)}")
        if st.st_size > limit:
            raise SerializationError(f"cannot read {p}: {st.st_size} bytes is more than "
                                     f"{named}{limit} bytes")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise SerializationError(f"cannot read {p}: more than {named}{limit} bytes (the file grew while "
                                     "it was read)")
        return b"".join(chunks)
    except OSError as e:
        raise SerializationError(f"cannot read {p}: {e.strerror or e}") from None
    finally:
        os.close(fd)
