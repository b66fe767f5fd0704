"""Lazy torch access, device and dtype resolution for the executors.

Nothing here imports torch at module import time: :func:`require_torch` does, and turns a missing
installation into :class:`~symverify.errors.BackendUnavailableError` with an install hint.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING

from symverify.errors import BackendUnavailableError, IRError

if TYPE_CHECKING:
    import torch

__all__ = ["INSTALL_HINT", "require_torch", "one_thread_if_small", "SMALL_STATE", "resolve_device", "resolve_dtype", "dtype_name", "unit_roundoff", "significand_bits"]

INSTALL_HINT = (
    "install the extra with `pip install 'symverify[torch]'` (or `pip install torch`; CPU wheels: "
    "--index-url https://download.pytorch.org/whl/cpu)"
)
"""How to get torch: the ``torch`` extra. Proving, the proof scripts and the pytest plugin do not need it."""

# Significand bits (including the implicit bit) of the float formats the executor supports.
_BITS = {"float64": 53, "float32": 24, "bfloat16": 8}


def require_torch() -> ModuleType:
    """The torch module, or BackendUnavailableError saying how to install it."""
    try:
        import torch
    except ImportError:
        raise BackendUnavailableError(f"the torch executor needs PyTorch, which is not installed; {INSTALL_HINT}") from None
    return torch


SMALL_STATE = 1 << 15
"""States of at most this many entries run on one CPU thread (torch's own grain size for splitting
an elementwise operation across threads)."""


@contextmanager
def one_thread_if_small(entries: int, device: torch.device | str) -> Iterator[None]:
    """Run the block on one torch thread when its states have at most :data:`SMALL_STATE` entries on the CPU.

    A compiled model is a long chain of layers on a small state: each operation is microseconds of
    work, and handing it to a thread pool costs more than the work, far more when other processes
    share the cores (a waiting pool thread is descheduled). The previous thread count is restored
    on exit. Numbers are unaffected: only the scheduling changes.
    """
    torch = require_torch()
    before = torch.get_num_threads()
    small = torch.device(device).type == "cpu" and entries <= SMALL_STATE and before > 1
    if small:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if small:
            torch.set_num_threads(before)


def resolve_device(device: object = None) -> torch.device:
    """A ``torch.device``; ``None`` means CPU. CUDA requested without CUDA is an error, not a fallback."""
    torch = require_torch()
    if device is None:
        return torch.device("cpu")
    try:
        dev = torch.device(device)  # type: ignore[arg-type]
    except (RuntimeError, TypeError):
        raise IRError(f"device: expected 'cpu', 'cuda' or 'cuda:K', found {device!r}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise BackendUnavailableError(
                f"device {str(device)!r} was requested, but CUDA is not available to this torch "
                f"({torch.__version__}, torch.cuda.is_available() is False); pass device='cpu' or install a CUDA build of torch"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise BackendUnavailableError(
                f"device {str(device)!r} was requested, but only {torch.cuda.device_count()} CUDA device(s) exist"
            )
    elif dev.type != "cpu":
        raise BackendUnavailableError(f"device {str(device)!r}: only 'cpu' and 'cuda' devices are supported")
    return dev


def resolve_dtype(dtype: object = None) -> torch.dtype:
    """``torch.float64`` (default), ``torch.float32`` or ``torch.bfloat16``, from a name or a dtype."""
    torch = require_torch()
    if dtype is None:
        return torch.float64
    table = {"float64": torch.float64, "float32": torch.float32, "bfloat16": torch.bfloat16}
    if isinstance(dtype, str) and dtype in table:
        return table[dtype]
    for name, t in table.items():
        if dtype is t:
            return table[name]
    raise IRError(f"dtype: expected 'float64', 'float32' or 'bfloat16' (or the torch dtype), found {dtype!r}")


def dtype_name(dtype: torch.dtype | str) -> str:
    return str(dtype).replace("torch.", "")


def significand_bits(dtype: torch.dtype | str) -> int:
    """Significand precision t (integers of magnitude ≤ 2^t are exact)."""
    return _BITS[dtype_name(dtype)]


def unit_roundoff(dtype: torch.dtype | str) -> float:
    """``u = 2^-t``: one rounding changes a value by a relative amount ≤ u."""
    return 2.0 ** -significand_bits(dtype)
