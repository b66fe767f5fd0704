"""The torch engine's entry point: a model or circuit evaluated exactly mod a prime ``p < 2^31``.

:func:`modular_eval` is what the randomized method's torch engine (:mod:`symverify.kernel.provers.modular`)
calls: it checks the object, the path, the prime (:func:`~symverify.kernel.engines.torch_modular.check_prime`)
and the residues, then runs the plans of :mod:`.plan` and :mod:`.numbers` through :mod:`.torch_modular`.
:func:`symverify.executors.execute` (``backend="modular"``) and the package name
``symverify.executors.modular_eval`` reach the same functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from symverify.deadline import Check
from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.analysis import check_known, check_state
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit

if TYPE_CHECKING:
    import torch

__all__ = ["modular_eval", "check_kind", "check_path", "run_mod"]


def check_kind(obj: object) -> str:
    """``"model"`` or ``"circuit"``; anything else, or one over the size limits
    (:func:`symverify.kernel.ir.analysis.check_state`), is refused."""
    if isinstance(obj, (Model, Circuit)):
        check_state(obj, "execute")
        return "model" if isinstance(obj, Model) else "circuit"
    raise IRError(f"execute: expected a Model or a Circuit, found {type(obj).__name__}")


def check_path(path: str, kind: str = "model") -> None:
    """``path`` names a convolution path (:data:`~symverify.kernel.engines.plan.PATHS`); one other
    than ``"auto"`` is refused for a circuit (``kind``), which has no convolutions to route."""
    if path == "auto":  # the default needs no look-up (this runs on every call)
        return
    from symverify.kernel.engines.plan import PATHS

    if path not in PATHS:
        raise IRError(f"path: expected one of {', '.join(map(repr, PATHS))}, found {path!r}")
    if kind == "circuit":
        raise IRError(f"path={path!r} applies to models only (their convolutions); found a circuit, which has none")


def run_mod(obj: Model | Circuit, x: Any, p: int, params: Mapping[str, object] | None, path: str,
             check: Check | None = None) -> Any:
    from symverify.kernel.engines.numbers import mod_numbers
    from symverify.kernel.engines.plan import model_plan
    from symverify.kernel.engines.torch_modular import run_circuit_mod, run_model_mod

    nums = mod_numbers(p, params)
    if isinstance(obj, Model):
        return run_model_mod(model_plan(obj, nums, check), x, path, check)
    return run_circuit_mod(obj, x, nums, check)


def modular_eval(obj: Model | Circuit, points: torch.Tensor, p: int, *, params: Mapping[str, object] | None = None,
                 path: str = "auto", check: Check | None = None) -> torch.Tensor:
    """Evaluate ``obj`` exactly mod ``p`` at a batch of points (the randomized verifier's entry point).

    Args:
        obj: a Model or a Circuit.
        points: int64 tensor ``(B, N, d)`` of residues in ``[0, p)``, on any device.
        p: a prime ``< 2^31``.
        params: symbolic weight values (ints or Fractions; mapped mod p).
        path: model convolution path (see :func:`symverify.executors.execute`); every path is exact.
            A circuit has none: a path other than ``"auto"`` is an IRError there.
        check: a deadline checker (:mod:`symverify.deadline`), run before planning and before
            running every layer of a model or every level of a circuit.

    Returns:
        int64 tensor ``(B, N, d)`` of residues on ``points.device``: the outputs mod p.

    An allocation the device refuses (a batch too large for its memory) is a
    :class:`~symverify.errors.LimitError`, never the allocator's ``RuntimeError`` or ``MemoryError``.
    The plan of ``obj`` is kept by its identity: the randomized method checks each side first
    (:func:`~symverify.kernel.provers.fingerprint.check_plain`, which drops the plans of a side
    rewritten in place); another caller of an object rewritten in place since its last run calls
    :func:`~symverify.kernel.provers.fingerprint.refresh` first (``execute``'s note).

    >>> import torch
    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> c = Circuit(1, 2, (Gate.mul(0, 1),), (2, 0))
    >>> modular_eval(c, torch.tensor([[[5, 6]]]), 7).tolist()
    [[[2, 5]]]
    """
    from symverify.kernel.engines.torch_modular import check_prime, check_residues

    kind = check_kind(obj)
    check_known(obj, params)
    check_path(path, kind)
    q = check_prime(p)
    check_residues(points, q)
    if points.dim() != 3 or tuple(points.shape[1:]) != (obj.n, obj.d):
        raise ShapeError(f"points: expected shape (B, {obj.n}, {obj.d}), found {tuple(points.shape)}")
    from symverify.ir.limits import allocation_limit

    with allocation_limit("modular_eval"):  # an allocation the device refuses: a LimitError, as execute's
        return run_mod(obj, points, q, params, path, check)
