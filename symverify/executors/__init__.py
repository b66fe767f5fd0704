"""Fast executors for BaseConv models and circuits: exact, float (torch) and modular (torch int64).

One call runs either side of a verification on a batch of inputs ``(B, N, d)`` (or one ``(N, d)``):

- ``backend="exact"``: the generic interpreter (:mod:`symverify.kernel.semantics.evaluate`) over
  :class:`~symverify.kernel.semantics.rings.FractionRing`, point by point. Returns a numpy **object**
  array of ints and Fractions of shape ``(B, N, d)`` (``(N, d)`` for a single input).
- ``backend="torch"``: float64 (default), float32 or bfloat16 on CPU or CUDA; returns a tensor.
  Convolutions run as shifts, FFTs or blocked direct products (``path=``); see
  :mod:`symverify.executors.torch_float`. Its error is bounded by :mod:`symverify.executors.numeric`
  and measured by :func:`numeric_check`. A model in the pair form of zoology's BaseConv (as
  :func:`from_zoology` writes it) runs as one fused operation per zoology layer with
  ``path="auto"`` in float64 and float32 (:mod:`symverify.executors.zoology_native`); it agrees
  with its paper layers, which :func:`numeric_check` runs, to round-off.
- ``backend="modular"``: exact arithmetic mod a prime ``p < 2^31`` in int64
  (:mod:`symverify.kernel.engines.torch_modular`); returns an int64 tensor of residues.

Symbolic weights need ``params={name: value}``. The executors are cross-checks: a float result is
never a proof (docs/theory.md §5). torch is imported only when a torch backend runs.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from symverify.deadline import Check
from symverify.errors import IRError, SymverifyError
from symverify.kernel.engines.modular import check_kind as _kind
from symverify.kernel.engines.modular import check_path as _check_path
from symverify.kernel.engines.modular import modular_eval
from symverify.kernel.engines.modular import run_mod as _run_mod
from symverify.kernel.ir.analysis import check_known, model_of, params_of
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.provers.options import NUMERIC_DTYPES, numeric_dtype
from symverify.kernel.semantics.evaluate import eval_circuit, eval_model
from symverify.kernel.semantics.rings import FractionRing

if TYPE_CHECKING:
    import torch

    from symverify.executors.numeric import NumericCheck

__all__ = [
    "execute", "modular_eval", "numeric_check", "NumericCheck", "DEFAULT_PRIME", "cross_check", "numeric_dtype",
    "NUMERIC_DTYPES",
    "to_torch", "from_torch", "BaseConvStack", "to_zoology", "from_zoology", "ZoologyBaseConv",
]

DEFAULT_PRIME = 2**31 - 1
_BACKENDS = ("exact", "torch", "modular")

_LAZY = {
    "NumericCheck": "numeric",
    "to_torch": "export",
    "from_torch": "export",
    "BaseConvStack": "export",
    "to_zoology": "zoology",
    "from_zoology": "zoology",
    "ZoologyBaseConv": "zoology",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The package's names, the lazily loaded ones included (``dir``, ``help``, tab completion)."""
    return sorted(set(globals()) | set(__all__))


def _check_params(obj: Model | Circuit, params: Mapping[str, object] | None) -> dict[str, Any]:
    """The exact parameter values; IRError naming every symbolic weight without one."""
    from symverify.kernel.engines.numbers import check_params, float_numbers

    nums = float_numbers(params)
    check_params(obj, nums)
    return dict(nums.params)


def _exact(obj: Model | Circuit, u: Any, params: Mapping[str, object] | None) -> tuple[np.ndarray, np.ndarray, bool]:
    from symverify.executors.inputs import exact_array
    from symverify.ir import limits

    ring = FractionRing(_check_params(obj, params), max_bits=limits.MAX_VALUE_BITS)
    arr, single = exact_array(u, obj.n, obj.d, _kind(obj))
    run = eval_model if isinstance(obj, Model) else eval_circuit
    out = np.empty(arr.shape, dtype=object)
    for b in range(arr.shape[0]):
        out[b] = np.asarray(run(obj, arr[b].tolist(), ring), dtype=object).reshape(obj.n, obj.d)  # type: ignore[arg-type,type-var]
    return arr, out, single


_NATIVE: IdentityMemo[Any] = IdentityMemo(32)
"""Per model and dtype: its fused zoology layers (:mod:`symverify.executors.zoology_native`), or
False when the model is not in the pair form (the fast path of :func:`execute` then steps aside)."""


_FAST_DTYPES: dict[object, Any] = {}  # dtype argument → torch dtype, filled once torch is loaded


def _native_fast(model: Model, u: Any, dtype: object) -> Any:
    """The output of ``execute(model, u, backend="torch", dtype=dtype)`` when ``u`` is already a
    contiguous CPU ``(B, N, d)`` tensor of that dtype and the model is a zoology stack in the pair
    form with no symbolic weights: its fused layers found by the model's identity (the general
    path's validation, plan look-ups and pair recognition are done once per model); else None, and
    the general path runs (and raises what it raises)."""
    torch = sys.modules.get("torch")
    if torch is None or type(u) is not torch.Tensor:
        return None
    if not _FAST_DTYPES:
        _FAST_DTYPES.update({None: torch.float64, "float64": torch.float64, "float32": torch.float32,
                             torch.float64: torch.float64, torch.float32: torch.float32})
    dt = _FAST_DTYPES.get(dtype) if isinstance(dtype, (str, type(None), torch.dtype)) else None
    if (dt not in (torch.float64, torch.float32) or u.dtype is not dt or u.dim() != 3 or u.shape[1] != model.n
            or u.shape[2] != model.d or u.device.type != "cpu" or not u.is_contiguous() or u.requires_grad):
        return None
    layers = _NATIVE.get(model, dt)
    if layers is None:
        from symverify.executors.zoology_native import check_range, native_layers
        from symverify.kernel.engines.numbers import check_params, float_numbers
        from symverify.kernel.engines.plan import model_plan

        try:
            nums = float_numbers(None)
            check_params(model, nums)
        except SymverifyError:
            return None
        plan = model_plan(model, nums)
        planned = plan.on(u.device, dt)
        check_range(planned)
        layers = _NATIVE.put(model, native_layers(planned, plan.model) or False, dt)
    if layers is False:
        return None
    from symverify.executors.zoology_native import run_native

    return run_native(layers, u)


def _grad_enabled() -> bool:
    import torch

    return bool(torch.is_grad_enabled())


def _empty(obj: Model | Circuit, x: Any, params: Mapping[str, object] | None) -> Any:
    """The output of an empty batch ``(0, N, d)``: nothing to run (the kernels assume a batch of at
    least one), but the parameters are checked as for any batch."""
    _check_params(obj, params)
    return x.new_zeros((0, obj.n, obj.d))


def _run_float(obj: Model | Circuit, x: Any, params: Mapping[str, object] | None, path: str) -> Any:
    if isinstance(obj, Model):  # one import on this branch: it is on every call's path
        from symverify.executors.zoology_native import run_float_model

        return run_float_model(obj, x, params, path)
    from symverify.executors.circuit_plan import circuit_plan
    from symverify.executors.torch_float import run_circuit
    from symverify.kernel.engines.numbers import float_numbers

    return run_circuit(circuit_plan(obj, float_numbers(params)), x)


@overload
def execute(obj: Model | Circuit, u: object, *, backend: Literal["exact"] = "exact", dtype: None = None,
            device: None = None, p: None = None, params: Mapping[str, object] | None = None,
            path: str = "auto") -> np.ndarray: ...
@overload
def execute(obj: Model | Circuit, u: object, *, backend: Literal["torch", "modular"],
            dtype: str | torch.dtype | None = None, device: str | torch.device | None = None, p: int | None = None,
            params: Mapping[str, object] | None = None, path: str = "auto") -> torch.Tensor: ...
@overload
def execute(obj: Model | Circuit, u: object, *, backend: str, dtype: str | torch.dtype | None = None,
            device: str | torch.device | None = None, p: int | None = None, params: Mapping[str, object] | None = None,
            path: str = "auto") -> np.ndarray | torch.Tensor: ...
def execute(obj: Model | Circuit, u: object, *, backend: str = "exact", dtype: str | torch.dtype | None = None,
            device: str | torch.device | None = None, p: int | None = None, params: Mapping[str, object] | None = None,
            path: str = "auto") -> np.ndarray | torch.Tensor:
    """Run a model or a circuit on a batch of inputs.

    Args:
        obj: a :class:`~symverify.kernel.ir.baseconv.Model` or :class:`~symverify.kernel.ir.circuit.Circuit`.
        u: ``(B, N, d)`` inputs, or one ``(N, d)`` input (the result then has no batch axis): a
            tensor, a numpy array or nested lists. Exact and modular backends need exact values
            (ints, Fractions); the float backend converts to ``dtype``. Non-finite float inputs
            (NaN, ±inf) run in IEEE arithmetic, unchecked: a model multiplies every cell by its
            weights, zeros included (``0·inf = NaN``), so one infinite or NaN entry can make NaN
            outputs that the circuit's value does not depend on, and how far it spreads differs
            between paths (the compiled program skips structural zeros; ``fft`` and ``direct`` do
            not). Finite values near the dtype's range may overflow inside an FFT (NaN outputs).
        backend: ``"exact"`` (object array of ints/Fractions), ``"torch"`` (float tensor) or
            ``"modular"`` (int64 tensor of residues mod ``p``).
        dtype: float backend only: ``"float64"`` (default), ``"float32"``, ``"bfloat16"``.
        device: torch backends: ``"cpu"`` (default) or ``"cuda"``; CUDA without CUDA is an error.
        p: modular backend: a prime below 2^31 (default 2^31 − 1).
        params: values of symbolic weights (exact numbers); a name that is none of them is an error.
            The float backend returns values: a model's run records no gradients, so a model
            input that requires grad (with grad mode on) is an IRError (``to_torch(model)`` is the
            differentiable module); a circuit's run is recorded by autograd as usual.
        path: models on the torch backends: ``"auto"`` (per layer: shifts for a few lags,
            else FFT; zoology's pair form fused), ``"fft"``, ``"direct"`` or ``"sparse"`` for
            every layer with a kernel.
            The modular backend has no FFT: ``"fft"`` and ``"direct"`` both run the exact
            blocked direct product there. Any other path than ``"auto"`` on the exact backend or
            for a circuit (no convolutions) is an IRError.

    >>> from symverify.kernel.ir.baseconv import Layer, Model
    >>> from symverify.kernel.ir.grid import Grid
    >>> square = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    >>> execute(square, [[3], [-2]]).tolist()
    [[9], [4]]
    >>> execute(square, [[[3], [-2]]], backend="torch").tolist()
    [[[9.0], [4.0]]]
    >>> execute(square, [[3], [-2]], backend="modular", p=7).tolist()
    [[2], [4]]

    A batch whose state (``B·N'·d'`` values for a model, ``B·nodes`` for a circuit) needs more
    bytes than the device has in all is a :class:`~symverify.errors.LimitError` before anything is
    allocated, and so is an allocation the device refuses during the run.

    The torch and modular backends keep each object's plan (its weights converted, its fused
    layers), found by the object's identity. A field rewritten in place *inside* the object after a
    run (``object.__setattr__`` on a gate, a layer or a grid, past their frozen dataclasses) is not
    seen by that look-up: the next run reads the old plan until the object is checked again
    (``verify``, :func:`numeric_check`, ``content_digest``) or
    :func:`symverify.kernel.ir.memo.forget` drops what is kept for it. Comparing a snapshot of the
    whole object on every call would cost more than a small batch's run (about 20 ms per 100 000
    gates, against 1.3 ms for one point; 13× the run of a dense 256×16 model at ``B = 4``). The
    exact backend reads the object as it is.
    """
    from symverify.ir.limits import allocation_limit

    with allocation_limit("execute"):
        return _execute(obj, u, backend, dtype, device, p, params, path)


def _execute(obj: Model | Circuit, u: object, backend: str, dtype: str | torch.dtype | None,
             device: str | torch.device | None, p: int | None, params: Mapping[str, object] | None,
             path: str) -> np.ndarray | torch.Tensor:
    obj = model_of(obj)  # a compiled object: its model
    if backend == "torch" and type(obj) is Model and params is None and path == "auto" and device is None:
        y = _native_fast(obj, u, dtype)  # the fused zoology stack, with no per-call look-ups
        if y is not None:
            return y
    kind = _kind(obj)
    check_known(obj, params)
    _check_path(path, kind)
    if backend not in _BACKENDS:
        raise IRError(f"backend: expected one of {', '.join(map(repr, _BACKENDS))}, found {backend!r}")
    if backend == "exact" and path != "auto":
        raise IRError(f"path={path!r} applies to backends 'torch' and 'modular' only (backend is 'exact', which has no paths)")
    if backend != "torch" and dtype is not None:
        raise IRError(f"dtype={dtype!r} applies to backend='torch' only (backend is {backend!r})")
    if backend != "modular" and p is not None:
        raise IRError(f"p={p!r} applies to backend='modular' only (backend is {backend!r})")
    if backend == "exact":
        if device is not None:
            raise IRError(f"device={device!r} applies to the torch backends only (backend is 'exact')")
        _, out, single = _exact(obj, u, params)
        return out[0] if single else out
    from symverify.executors.inputs import batch_shape, check_batch_memory
    from symverify.kernel.engines._torch import require_torch, resolve_device, resolve_dtype

    dev = resolve_device(device)
    bsz, _ = batch_shape(u, obj.n, obj.d, kind)
    cells = obj.inner_n * obj.inner_d if isinstance(obj, Model) else obj.num_nodes
    if backend == "torch":
        from symverify.executors.inputs import float_tensor

        dt = resolve_dtype(dtype)
        check_batch_memory(bsz, cells, dt, dev, kind)
        x, single = float_tensor(u, obj.n, obj.d, dt, dev, kind)
        if isinstance(obj, Model) and x.requires_grad and _grad_enabled():
            raise IRError("model input: a tensor that requires grad; the float executor runs a model with in-place "
                          "and native operations that record no gradients, so its gradients would be wrong: pass "
                          "u.detach() for values, or use to_torch(model) for a differentiable module")
        y = _run_float(obj, x, params, path) if x.shape[0] else _empty(obj, x, params)
    else:
        from symverify.executors.inputs import residue_tensor
        from symverify.kernel.engines.torch_modular import check_prime

        q = check_prime(DEFAULT_PRIME if p is None else p)
        check_batch_memory(bsz, cells, require_torch().int64, dev, kind)
        x, single = residue_tensor(u, obj.n, obj.d, q, dev, kind)
        y = _run_mod(obj, x, q, params, path) if x.shape[0] else _empty(obj, x, params)
    return y[0] if single else y


def numeric_check(obj: Model | Circuit, u: object, *, dtype: str | torch.dtype = "float64", device: str | torch.device | None = None,
                  params: Mapping[str, object] | None = None, path: str = "auto") -> NumericCheck:
    """Run the float executor on exact inputs ``u`` and compare with exact evaluation. ``obj`` is a
    model, a circuit or a compiled object (its model), as for :func:`execute`.

    Returns a :class:`~symverify.executors.numeric.NumericCheck` with the measured max absolute and
    relative errors and the error model's bound (see :mod:`symverify.executors.numeric`). It is a
    check of the executor, not a proof; ``.raise_if_failed()`` raises ``NumericMismatchError``.
    ``path`` is a model's convolution path (:func:`execute`); for a circuit only ``"auto"``.

    >>> from symverify.kernel.ir.baseconv import Layer, Model
    >>> from symverify.kernel.ir.grid import Grid
    >>> square = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    >>> chk = numeric_check(square, [[[3], [-2]]], dtype="float32")
    >>> chk.ok, chk.max_abs_err, chk.tolerance
    (True, 0.0, 0.0)
    """
    from symverify.executors.numeric import assess
    from symverify.kernel.engines._torch import dtype_name, resolve_device, resolve_dtype
    from symverify.kernel.engines.numbers import float_numbers

    obj = model_of(obj)  # a compiled object: its model, as execute reads it
    if not isinstance(obj, (Model, Circuit)):
        raise IRError(f"numeric_check: expected a Model, a Circuit or a compiled object, found {type(obj).__name__}")
    from symverify.kernel.provers.fingerprint import refresh

    refresh(obj)  # the float plans kept for obj are read only while it holds what it held then (O(size), as the exact evaluation)
    kind = _kind(obj)
    check_known(obj, params)
    _check_path(path, kind)  # a circuit has no paths
    dt, dev = resolve_dtype(dtype), resolve_device(device)
    arr, exact, _ = _exact(obj, u, params)
    try:
        return assess(obj, float_numbers(params, dtype_name(dt)), arr, exact, dt, dev, path)
    except OverflowError as e:  # an exact input or output beyond float64's range: no float to compare
        raise IRError(f"numeric_check: a value beyond the range of {dtype_name(dt)} ({e})") from None


def cross_check(sides: Sequence[tuple[str, str, object]], n: int, d: int, params: Collection[str], *, dtype: str,
                seed: int, points: int, check: Check | None = None) -> list[tuple[str, str, NumericCheck | str]]:
    """The float executor on each side at ``points`` seeded small-rational ``n×d`` inputs
    (entries and weights ``i/q``, ``|i| ≤ 4``, ``q ∈ {1, 2, 3}``; the same points for every side),
    each against exact evaluation of that side (:func:`numeric_check`). A cross-check of the
    executor, never a proof.

    ``sides`` are ``(name, kind, object)``; ``params`` the names of every symbolic weight. Returns,
    per side, ``(name, kind, result)``: the :class:`~symverify.executors.numeric.NumericCheck`, or
    why the side was not run (an object with no float executor, such as a kaleidoscope; a weight
    beyond the float format's range, or an output beyond it: an ``OverflowError`` is reported there,
    never raised). ``check`` (a deadline checker) runs before each side.

    Raises:
        UsageError: ``n``, ``d`` or ``points`` not a positive int, ``seed`` not an int, ``dtype``
            not a str, ``sides`` not a list or tuple of ``(name, kind, object)`` triples, ``params``
            not a collection of names, or ``check`` neither None nor callable.
        LimitError: ``points·n·d`` input entries over ``MAX_CELLS``.
    """
    from symverify.errors import UsageError
    from symverify.ir import limits
    from symverify.ir.bigint import safe_repr

    for what, v, least in (("n", n, 1), ("d", d, 1), ("points", points, 1), ("seed", seed, None)):
        if type(v) is not int or (least is not None and v < least):
            raise UsageError(f"cross_check: {what}: expected {'a positive' if least else 'an'} int, found "
                             f"{type(v).__name__} {safe_repr(v, 40)}")
    if type(dtype) is not str:
        raise UsageError(f"cross_check: dtype: expected a str, found {type(dtype).__name__} {safe_repr(dtype, 40)}")
    if not isinstance(sides, (list, tuple)) or not all(isinstance(s, tuple) and len(s) == 3 for s in sides):
        raise UsageError(f"cross_check: sides: expected a list of (name, kind, object) triples, found {safe_repr(sides, 60)}")
    if isinstance(params, str) or not isinstance(params, Collection) or not all(isinstance(p, str) for p in params):
        raise UsageError(f"cross_check: params: expected a collection of parameter names, found {safe_repr(params, 60)}")
    if check is not None and not callable(check):
        raise UsageError(f"cross_check: check: expected None or a deadline checker, found {type(check).__name__}")
    limits.check(points * n * d, "MAX_CELLS", lambda: f"cross_check: {points} points of {n}×{d} inputs")
    rng = random.Random(f"symverify-numeric-{seed}")

    def q() -> Fraction:
        return Fraction(rng.randint(-4, 4), rng.choice((1, 2, 3)))

    u = [[[q() for _ in range(d)] for _ in range(n)] for _ in range(points)]
    values = {name: q() for name in sorted(params)}
    out: list[tuple[str, str, NumericCheck | str]] = []
    for name, kind, obj in sides:
        if not isinstance(obj, (Model, Circuit)):
            out.append((name, kind, "no float executor"))
            continue
        if check is not None:
            check()
        try:
            own = params_of(obj)  # the names of this side's weights (a side may lack some of the other's)
            out.append((name, kind, numeric_check(obj, u, dtype=dtype, params={k: v for k, v in values.items() if k in own})))
        except SymverifyError as e:  # e.g. a weight beyond float64's range: report it, keep the verdict
            out.append((name, kind, str(e)))
        except OverflowError as e:  # an exact value beyond the float format's range
            out.append((name, kind, f"a value beyond the range of {dtype} ({e})"))
    return out
