"""Optional native kernels: a small C source compiled once with the system C compiler, loaded with ``ctypes``.

Two float kernels (the butterfly stages of :mod:`symverify.kaleidoscope._native_butterfly` and the
program interpreter of :mod:`symverify.executors._native_program`) are plain C with a C ABI and no
headers beyond ``<stdint.h>``: no torch or Python headers, so a compile takes well under a second.
Nothing here is required: when no compiler is found, the compile fails, the library does not load,
or ``SYMVERIFY_NATIVE=0`` is set, :func:`load` returns None (and :func:`why_not` says why) and the
callers run their pure-torch form. Installing symverify compiles nothing.

The library is cached under ``$SYMVERIFY_CACHE_DIR`` (default ``$XDG_CACHE_HOME/symverify`` or
``~/.cache/symverify``), named by a hash of the source, the compiler command and flags, the machine
and the CPU's feature flags (the code is built with ``-march=native``), and written atomically
(compiled to a temporary name, then renamed), so concurrent processes never load a partial file.
Next to each library a ``.sha256`` file holds the SHA-256 of its bytes, written before the library
is renamed into place; a cached library is loaded only when its bytes have that digest, else it is
built again (a truncated or corrupt file in the cache would otherwise be mapped by the dynamic
loader, which can kill the process with SIGBUS or run other code).
``$CC`` may hold a command with arguments (``CC="ccache gcc"``), split as a shell would. The
``native`` folder is made private to this user (mode ``0700``; a group- or world-writable one of
this user is made so), and a folder of another user is not used.

Kernels are compiled with ``-ffp-contract=off``: the compiler fuses nothing, every product and sum
is rounded on its own, and a fused multiply-add happens only where the source asks for one
(``__builtin_fma``, for torch's ``addcmul``, which is one on the CPU). So a kernel that performs
torch's operations in torch's order returns torch's bits.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

__all__ = ["load", "why_not", "enabled", "torch_addcmul_fuses", "FLAGS"]

FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fPIC", "-shared", "-std=c99")

_lock = threading.Lock()
_libs: dict[str, ctypes.CDLL | None] = {}
_why: dict[str, str] = {}


def enabled() -> bool:
    """False when ``SYMVERIFY_NATIVE`` is set to ``0``, ``false``, ``no`` or ``off``; True when it is
    unset, empty, ``1``, ``true``, ``yes`` or ``on`` (any case, surrounding spaces ignored), read by
    :func:`symverify.progress.env_switch`, the one parser of on/off settings. Any other value is a
    :class:`~symverify.errors.UsageError`: it is not guessed either way."""
    from symverify.progress import env_switch

    return env_switch("SYMVERIFY_NATIVE", "use the native kernels", "disable them", "use them") is not False


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return line
    except OSError:
        pass
    return platform.processor()


def _cache_dir() -> str:
    root = os.environ.get("SYMVERIFY_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "symverify")
    return os.path.join(root, "native")


def _digest(path: str) -> str | None:
    """The SHA-256 of the file's bytes (hex), or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _intact(path: str) -> bool:
    """Does ``path`` hold the bytes its ``.sha256`` file names (both present and readable)?"""
    try:
        with open(path + ".sha256", encoding="ascii") as fh:
            want = fh.read().strip()
    except (OSError, ValueError):
        return False
    return len(want) == 64 and _digest(path) == want


def _private(folder: str) -> None:
    """OSError unless ``folder`` (the ``native`` folder of the cache) is a directory of this user
    that no other user can write: a library loaded from it runs in this process, and another user
    who could write it could replace a library and its digest together. A folder of this user that
    is group- or world-writable (made under a permissive umask) is made private first."""
    st = os.stat(folder)
    if not hasattr(os, "getuid"):
        return
    if st.st_uid != os.getuid():
        raise OSError(f"{folder} belongs to another user (uid {st.st_uid}); native libraries are loaded only from "
                      "a folder of this user")
    if st.st_mode & 0o022:
        os.chmod(folder, st.st_mode & 0o755)


def _build(name: str, source: str) -> ctypes.CDLL:
    cc_env = os.environ.get("CC", "").strip()
    cc = shlex.split(cc_env) if cc_env else [w for w in (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang"),) if w]
    if not cc:
        raise OSError("no C compiler found (cc, gcc or clang on PATH, or $CC)")
    key = hashlib.sha256("\0".join((source, *cc, *FLAGS, platform.machine(), sys.platform, _cpu_flags())).encode()).hexdigest()[:20]
    folder = _cache_dir()
    path = os.path.join(folder, f"{name}-{key}.so")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    _private(folder)
    if not _intact(path):
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            src = os.path.join(tmp, f"{name}.c")
            with open(src, "w", encoding="utf-8") as fh:
                fh.write(source)
            out = os.path.join(tmp, f"{name}.so")
            proc = subprocess.run([*cc, *FLAGS, src, "-o", out], capture_output=True, text=True, timeout=120, check=False)
            if proc.returncode != 0:
                raise OSError(f"{shlex.join(cc)} exited with {proc.returncode}: {proc.stderr.strip()[:300]}")
            with open(out + ".sha256", "w", encoding="ascii") as fh:
                fh.write(_digest(out) or "")
            os.replace(out + ".sha256", path + ".sha256")  # the digest first: a reader never trusts a partial library
            os.replace(out, path)
    return ctypes.CDLL(path)


def load(name: str, source: str, void_functions: tuple[str, ...] = ()) -> ctypes.CDLL | None:
    """The compiled library of ``source`` (cached per process and on disk), or None when native
    kernels are disabled or cannot be built here (:func:`why_not` gives the reason). The functions
    named in ``void_functions`` get ``restype = None`` once, when the library is loaded (no argtypes:
    callers pass ctypes objects, ``c_void_p`` and ``c_int64``, the fastest call)."""
    if not enabled():
        _why[name] = "disabled by SYMVERIFY_NATIVE"
        return None
    with _lock:
        if name in _libs:
            return _libs[name]
        try:
            if not torch_addcmul_fuses():
                raise OSError("torch's addcmul does not round as one fused multiply-add on this CPU, "
                              "so the kernels would not return torch's bits")
            lib: ctypes.CDLL | None = _build(name, source)
            for fn in void_functions:
                getattr(lib, fn).restype = None
        except Exception as e:  # optional: any failure means the pure-torch form runs
            lib = None
            _why[name] = f"{type(e).__name__}: {e}"
        _libs[name] = lib
        return lib


def torch_addcmul_fuses() -> bool:
    """True when torch's CPU ``addcmul`` rounds ``a + b·c`` once (a fused multiply-add) in float64
    and float32, on vector lengths that reach its vectorised body and its scalar tail.

    The kernels compute ``fma`` where torch's stage form calls ``addcmul``; they are loaded only
    when the two round alike, so a native result is torch's result bit for bit on every CPU.
    Probe: ``-1 + (1 + ε)²`` is ``2ε + ε²`` when fused and ``2ε`` when the product is rounded
    first (``ε = 2^-30`` in float64, ``2^-12`` in float32)."""
    global _fuses
    if _fuses is None:
        import torch  # the callers are torch's kernels: torch is present

        ok = True
        for dtype, eps in ((torch.float64, 2.0 ** -30), (torch.float32, 2.0 ** -12)):
            for n in (1, 3, 8, 17, 64, 1031):
                a = torch.full((n,), -1.0, dtype=dtype)
                b = torch.full((n,), 1.0 + eps, dtype=dtype)
                fused = torch.full((n,), 2 * eps + eps * eps, dtype=dtype)
                ok = ok and bool(torch.equal(torch.addcmul(a, b, b), fused)) and bool(torch.equal(a.clone().addcmul_(b, b), fused))
        _fuses = ok
    return _fuses


_fuses: bool | None = None


def why_not(name: str) -> str | None:
    """Why :func:`load` returned None for ``name`` (None when it loaded or was not asked)."""
    if not enabled():
        return "disabled by SYMVERIFY_NATIVE"
    return _why.get(name)
