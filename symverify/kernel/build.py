"""The build of this process's trusted base: :func:`build_identity`, a SHA-256 of the sources of
``symverify/kernel``. A Dask worker's stage outcomes (:mod:`symverify.kernel.provers.stages_dask`)
and a proof script's rows run on a Dask worker (:mod:`symverify.scripts.dask_backend`) are taken only
from a worker whose version and build are this process's: one version string may name several
builds (an edited checkout, another development install). Standard library only."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

__all__ = ["build_identity"]


@cache
def build_identity() -> str:
    """The build of this process's trusted base: the SHA-256 (hex) over the source files of the
    package ``symverify/kernel`` (every ``*.py`` under it, sorted by their path relative to it, each
    entered as its path and its bytes, both length-prefixed), computed once per process (cached;
    about 7 ms for the kernel's 1 MB). Two processes with one version string but another trusted
    base have other identities; a kernel installed without its sources has the identity of none (the
    same everywhere: then the version alone tells builds apart). It names the files as they are at
    the first call, not the code imported: a source edited in between, in a long-lived process, is
    not seen, and neither is an edit made after the kernel's modules were imported and before this first
    call (the identity then names files the process does not run). It covers the sources under
    ``symverify/kernel`` only: the leaves they import (``symverify.errors``, ``symverify.deadline``, …),
    third-party libraries and Python are in no build. A worker's build is its own report: it tells an
    honest mismatch apart (a forgotten reinstall), never a worker that answers another build's string
    while running other code; the workers are trusted as the process that runs their answers is."""
    root = Path(__file__).resolve().parent  # symverify/kernel
    h = hashlib.sha256(b"symverify-trusted-base\n")
    for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        name = path.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
        data = path.read_bytes()
        h.update(b"%d:%s\n%d:" % (len(name), name, len(data)))
        h.update(data)
    return h.hexdigest()
