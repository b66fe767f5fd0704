"""Input normalisation for :func:`symverify.executors.execute`: ``(B, N, d)`` or one ``(N, d)`` array.

Exact inputs are ints and Fractions (floats are refused: they are not exact). Float inputs may be
anything numeric; they are converted to the requested dtype (that rounding is part of the error
model). Modular inputs are exact values mapped to residues (a Fraction through its inverse mod p).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from symverify.errors import CompileError, IRError, LimitError, ShapeError
from symverify.ir.bigint import safe_repr
from symverify.ir.limits import device_memory
from symverify.kernel.engines._torch import require_torch
from symverify.kernel.ir.scalar import as_scalar
from symverify.kernel.semantics.rings import ModRing

if TYPE_CHECKING:
    import torch

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["batch_shape", "exact_array", "float_tensor", "residue_tensor", "exact_weights", "refuse_hooks"]


def _is_tensor(u: Any) -> bool:
    return type(u).__module__.startswith("torch") and hasattr(u, "shape")


def _refuse_kind(u: Any, what: str) -> None:
    """Refuse complex and boolean arrays and tensors: casting a complex value to a float drops its
    imaginary part, and a bool is not a number (as :func:`~symverify.kernel.ir.scalar.as_scalar` says);
    datetime and timedelta arrays (numpy would read them as counts of days or seconds); masked arrays
    (reading them drops the mask); meta tensors, which have a shape but no values; and sparse tensors (other layouts than strided),
    which the executors' reshapes and copies do not read."""
    if _is_tensor(u) and getattr(u, "is_meta", False):
        raise IRError(f"{what} input: expected values, found a meta tensor of shape {tuple(u.shape)} (it has no data)")
    if _is_tensor(u) and str(getattr(u, "layout", "torch.strided")) != "torch.strided":
        raise IRError(f"{what} input: expected a dense tensor, found a {u.layout} tensor of shape {tuple(u.shape)}; "
                      "convert it first (u.to_dense())")
    if isinstance(u, np.ma.MaskedArray):
        raise IRError(f"{what} input: a masked array; its masked entries would be read as the values under the mask: "
                      "fill them first (u.filled(value))")
    if isinstance(u, np.ndarray) and u.dtype.kind in "Mm":
        raise IRError(f"{what} input: expected real numbers, found a {u.dtype} array (dates and durations are not numbers)")
    if _is_tensor(u):
        kind = "complex" if u.is_complex() else "bool" if str(u.dtype) == "torch.bool" else ""
    elif isinstance(u, np.ndarray):
        kind = "complex" if u.dtype.kind == "c" else "bool" if u.dtype.kind == "b" else ""
    else:
        return
    if kind:
        raise IRError(f"{what} input: expected real numbers, found a {u.dtype} {'tensor' if _is_tensor(u) else 'array'}; "
                      + ("casting it would drop the imaginary parts" if kind == "complex" else
                         "a bool is not a number: convert it first (e.g. u.int() or u.astype(int))"))


def batch_shape(u: Any, n: int, d: int, what: str) -> tuple[int, bool]:
    """``(B, single)``: the batch size, and whether a single ``(n, d)`` input was given."""
    shape = tuple(u.shape) if hasattr(u, "shape") else np.shape(np.asarray(u, dtype=object))
    if len(shape) == 2 and shape == (n, d):
        return 1, True
    if len(shape) == 3 and shape[1:] == (n, d):
        return shape[0], False
    raise ShapeError(f"{what} input: expected shape (B, {n}, {d}) or ({n}, {d}), found {shape}")


def check_batch_memory(bsz: int, cells: int, dtype: torch.dtype, device: torch.device, what: str) -> None:
    """:class:`~symverify.errors.LimitError` before anything is allocated when one state of the
    batch (``bsz`` points of ``cells`` values each, in ``dtype``) needs more bytes than ``device``
    has in all (:func:`~symverify.ir.limits.device_memory`): such a run cannot succeed, and the allocator would fail
    (or the system run out of memory) only after the input had been converted. A batch given as
    an expanded view (stride 0) takes no memory of its own, but the executor's states do."""
    torch = require_torch()
    need = bsz * cells * (torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits) // 8
    have = device_memory(device)  # the CPU's physical memory, or the CUDA device's
    if have is not None and need > have:
        raise LimitError(f"{what} input: a batch of {bsz} points needs states of {bsz}·{cells} {str(dtype).removeprefix('torch.')} "
                         f"values ({need / 2**30:.3g} GiB each), more than the {have / 2**30:.3g} GiB of memory of {device}; "
                         "run it in smaller batches")


def exact_array(u: Any, n: int, d: int, what: str) -> tuple[np.ndarray, bool]:
    """An object array ``(B, n, d)`` of exact scalars, and whether the input was a single ``(n, d)``."""
    _, single = batch_shape(u, n, d, what)
    _refuse_kind(u, what)
    hint = "pass ints or Fractions (e.g. u.astype(int) when the floats are whole numbers), or use backend='torch'"
    if _is_tensor(u):
        if u.is_floating_point() or u.is_complex():
            raise IRError(f"{what} input: the exact backend needs exact values, found a {u.dtype} tensor; {hint}")
        u = u.detach().cpu().tolist()
    if isinstance(u, np.ndarray) and u.dtype.kind in "fc":
        raise IRError(f"{what} input: the exact backend needs exact values, found a {u.dtype} array; {hint}")
    arr = np.asarray(u, dtype=object).reshape(-1, n, d)
    out = np.empty(arr.shape, dtype=object)
    for idx, x in np.ndenumerate(arr):
        out[idx] = as_scalar(x, f"{what} input entry {list(idx)}")
    return out, single


def _to_float64(u: Any, what: str) -> np.ndarray:
    arr = np.asarray(u, dtype=object) if not isinstance(u, np.ndarray) else u
    if arr.dtype.kind in "iuf":
        return arr.astype(np.float64)
    arr = arr.astype(object)  # text and anything else: entry by entry, as the exact backends read them
    out = np.empty(arr.shape, dtype=np.float64)
    for idx, x in np.ndenumerate(arr):
        try:
            v = x if isinstance(x, (float, np.floating)) else as_scalar(x, f"{what} input entry {list(idx)}")
            if not isinstance(v, (int, float, Fraction, np.floating)):
                raise IRError(f"{what} input entry {list(idx)}: the symbolic value {safe_repr(v, 40)} has no float value; "
                              "pass numbers (a model's symbolic weights take params=)")
            out[idx] = float(v)
        except OverflowError:
            raise IRError(f"{what} input entry {list(idx)}: {safe_repr(x, 40)} is beyond the range of float64") from None
    return out


def _refuse_overflow(src: torch.Tensor, t: torch.Tensor, what: str) -> None:
    """Refuse finite entries of ``src`` that became ±inf in ``t``'s narrower float dtype (rounding is
    the float executor's error model; an overflow before the first layer is not)."""
    torch = require_torch()
    if not (src.is_floating_point() and torch.finfo(t.dtype).max < torch.finfo(src.dtype).max):
        return
    lost = torch.isinf(t) & torch.isfinite(src.to(t.device))
    if bool(lost.any()):
        idx = [int(i) for i in lost.nonzero()[0]]
        raise IRError(f"{what} input entry {idx}: {float(src[tuple(idx)])!r} is beyond the range of {t.dtype}; "
                      "scale the input or use float64")


def float_tensor(u: Any, n: int, d: int, dtype: torch.dtype, device: torch.device, what: str) -> tuple[torch.Tensor, bool]:
    """A ``(B, n, d)`` tensor of ``dtype`` on ``device``."""
    torch = require_torch()
    _, single = batch_shape(u, n, d, what)
    _refuse_kind(u, what)
    t = u if _is_tensor(u) else torch.from_numpy(_to_float64(u, what))
    if t.dtype != dtype or t.device != device:  # tested first: .to costs more than the test on every call
        src, t = t, t.to(device=device, dtype=dtype)
        _refuse_overflow(src, t, what)
    return (t if t.dim() == 3 else t.reshape(-1, n, d)), single


def residue_tensor(u: Any, n: int, d: int, p: int, device: torch.device, what: str) -> tuple[torch.Tensor, bool]:
    """A ``(B, n, d)`` int64 tensor of residues mod p of exact inputs."""
    torch = require_torch()
    _, single = batch_shape(u, n, d, what)
    _refuse_kind(u, what)
    if _is_tensor(u) and not (u.is_floating_point() or u.is_complex()) and u.dtype != torch.uint64:  # uint64 would wrap in int64
        return (u.to(device=device, dtype=torch.int64) % p).reshape(-1, n, d), single
    arr, _ = exact_array(u, n, d, what)
    ring = ModRing(p)
    vals = [ring.coerce(x) if isinstance(x, (int, Fraction)) else ring.coerce(as_scalar(x)) for x in arr.ravel()]
    return torch.tensor(vals, dtype=torch.int64, device=device).reshape(-1, n, d), single


def exact_weights(t: Any, where: str) -> torch.Tensor:
    """A weight tensor (or numpy array) as a detached CPU float64 tensor holding exactly its values.

    Every float widens exactly to float64; an integer tensor is read only when its entries lie within
    ``±2^53`` (beyond, float64 would round them). Meta tensors (no values), complex tensors (reading
    them as real drops the imaginary parts), bool tensors, sparse, nested and quantized tensors
    (which the module runs in its own arithmetic) and anything that is not a real tensor are
    refused with a :class:`~symverify.errors.CompileError` naming ``where``; NaN and infinities are
    left to the caller, which names the cell.
    """
    torch = require_torch()
    if isinstance(t, np.ndarray):
        if t.dtype.kind not in "iuf":
            raise CompileError(f"{where}: expected real numbers, found a {t.dtype} array")
        t = torch.from_numpy(np.ascontiguousarray(t))
    if not isinstance(t, torch.Tensor):
        raise CompileError(f"{where}: expected a tensor, found {type(t).__name__}")
    if t.is_meta:
        raise CompileError(f"{where}: a meta tensor of shape {tuple(t.shape)} has no values; materialise the weights first "
                           "(e.g. module.to_empty(device='cpu') and load_state_dict)")
    if t.is_nested:
        raise CompileError(f"{where}: a nested tensor (rows of different lengths) has no single shape; expected a dense "
                           "weight tensor")
    if t.layout != torch.strided:
        raise CompileError(f"{where}: expected a dense tensor, found a {t.layout} tensor; convert it first (t.to_dense())")
    if t.is_quantized:
        raise CompileError(f"{where}: a quantized {t.dtype} tensor, whose module computes in quantized arithmetic; "
                           "expected float weights (t.dequantize() gives them, if that float model is the one meant)")
    if t.is_complex() or t.dtype == torch.bool:
        raise CompileError(f"{where}: expected real numbers, found a {t.dtype} tensor"
                           + (" (reading it as real would drop the imaginary parts)" if t.is_complex() else ""))
    t = t.detach().to("cpu")
    if not t.is_floating_point() and t.numel():
        ints = t.numpy() if t.dtype == torch.uint64 else t.to(torch.int64)  # torch has no max of uint64
        if int(ints.max()) > 2**53 or int(ints.min()) < -(2**53):
            raise CompileError(f"{where}: a {t.dtype} entry beyond ±2^53 would be rounded in float64, where the "
                               "weights are read; pass a float64 tensor of the values you mean")
    return t.to(torch.float64)


_HOOKS = (("_forward_hooks", "a forward hook"), ("_forward_pre_hooks", "a forward pre-hook"),
          ("_state_dict_hooks", "a state-dict hook"), ("_state_dict_pre_hooks", "a state-dict pre-hook"))


def refuse_hooks(module: Any, where: str, called: tuple[str, ...] = ()) -> None:
    """Refuse a torch module whose forward pass or state dict other code may change: a forward or
    forward pre-hook on it or on a submodule, or registered globally for every module, can change
    what it computes (``lambda m, args, out: 2 * out``) and a state-dict hook the weights it hands
    out, while a converter reads the weights alone; so the model read would not be the module's
    function. So is a method replaced on the instance (``module.forward = lambda u: 2 * u``, or
    ``state_dict``, ``_call_impl``, …: an instance attribute shadowing a method of its class), on it
    or on a submodule. Submodules are found through each module's own ``_modules`` table (a
    ``named_modules`` replaced on the instance could hide them). ``called`` names submodules the
    converter runs itself (the filter generators of a gated module): a method replaced on them, or
    under them, runs for the module and the converter alike, so it is not refused. A
    :class:`~symverify.errors.CompileError` names the submodule; objects that are no torch module
    have none."""
    torch = require_torch()
    if not isinstance(module, torch.nn.Module):
        return
    from torch.nn.modules import module as torch_module

    for attr, what in (("_global_forward_hooks", "forward hook"), ("_global_forward_pre_hooks", "forward pre-hook")):
        if getattr(torch_module, attr, None):
            raise CompileError(f"{where}: a global {what} is registered (torch.nn.modules.module.register_module_"
                               f"{what.replace(' ', '_').replace('-', '_')}): it runs in every module's forward pass and "
                               "may change what the module computes, which the weights read do not show; remove it first")
    for name, sub in _submodules(module):
        whose = f"submodule {name!r} ({type(sub).__name__})" if name else f"the module ({type(sub).__name__})"
        own = vars(sub)
        runs = any(name == c or name.startswith(c + ".") for c in called)
        shadowed = [] if runs else sorted(k for k in own if callable(getattr(type(sub), k, None)))
        if shadowed:
            raise CompileError(f"{where}: {whose} has its method {type(sub).__name__}.{shadowed[0]} replaced on the "
                               f"instance (by a {type(own[shadowed[0]]).__name__}), which may change what the module computes "
                               f"or the weights it hands out, while only its weights are read; remove it first "
                               f"(del module.{shadowed[0]})")
        for attr, what in _HOOKS:
            if getattr(sub, attr, None):
                raise CompileError(f"{where}: {whose} has {what}, which may change what the module computes or the "
                                   "weights it hands out, while only its weights are read; remove it first "
                                   "(the handle register_*_hook returned: handle.remove())")


def _submodules(module: Any) -> list[tuple[str, Any]]:
    """``module`` and every module under it (each once), with dotted names, read from each module's
    own ``_modules`` table (not through ``named_modules``, which an instance may replace)."""
    out: list[tuple[str, Any]] = []
    seen: set[int] = set()
    todo = [("", module)]
    while todo:
        name, sub = todo.pop()
        if id(sub) in seen:
            continue
        seen.add(id(sub))
        out.append((name, sub))
        children = vars(sub).get("_modules") or {}
        todo.extend((f"{name}.{k}" if name else str(k), child) for k, child in reversed(list(children.items()))
                    if child is not None)
    return out
