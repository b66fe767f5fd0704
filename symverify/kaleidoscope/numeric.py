"""Batched float (numpy, torch) and int64-mod-p (numpy) application of butterfly products.

A factor of stride ``s`` on ``N`` points pairs ``x[p]`` with ``x[p+s]`` (``ir/butterfly.py``).
Viewing a batch ``X`` of shape ``(B, N)`` as ``(B, N/(2s), 2, s)``, pair ``m = s·j + t`` sits at
``X[:, j, 0, t]`` and ``X[:, j, 1, t]``, so the whole factor is two broadcast multiply-adds::

    Y[:, j, i, t] = T0[j, i, t]·X[:, j, 0, t] + T1[j, i, t]·X[:, j, 1, t]

with the twiddles ``T0[j] = (d1, d3)`` and ``T1[j] = (d2, d4)`` (the first and second columns
of the 2×2 blocks, each of shape ``(N/(2s), 2, s)``). No Python loop runs over pairs, only over
the stages. At compile time identity factors are dropped and consecutive factors of one stride
are multiplied exactly into one (factors of one stride form an algebra: the middle ``1, 1`` of
a BB* element, and ``N/2, N/2`` between groups), so one BB* costs ``2·log2 N − 1`` stages.

Inputs have shape ``(n,)`` or ``(B, n)`` (``n`` the kaleidoscope corner, else ``N``); a
kaleidoscope pads with zeros to ``N`` and reads the first ``n`` outputs. A float result is a
cross-check of the exact :func:`~symverify.kernel.kaleidoscope.apply.apply`, never a proof.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from symverify.errors import BackendUnavailableError, IRError, LimitError, ShapeError
from symverify.ir.bigint import safe_repr
from symverify.ir.limits import device_memory
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.scalar import as_index
from symverify.kernel.kaleidoscope.apply import Butterflies, corner, factors_of, params_of
from symverify.kernel.primes import is_prime
from symverify.kernel.semantics.rings import FractionRing, ModRing, Ring

__all__ = ["NumpyProgram", "compile_numpy", "compile_torch", "stages_of", "twiddles", "check_range"]

FloatDType = Literal["float64", "float32"]
Stage = tuple[int, Any, Any]  # (stride s, T0, T1), T0 and T1 of shape (N/(2s), 2, s)


def _values(diag: tuple[Any, ...], ring: Ring, p: int | None) -> list[Any]:
    """Exact diagonal entries as Python ints mod ``p`` or floats (rounded once to float64)."""
    if all(type(v) is int for v in diag):  # fast path: no per-entry coercion
        return [v % p for v in diag] if p else list(diag)
    vals = [ring.coerce(v) for v in diag]
    if p:
        return vals
    out = []
    for v in vals:
        try:
            out.append(float(v))
        except OverflowError:
            raise IRError(f"butterfly entry {safe_repr(v, 40)} is beyond the range of float64") from None
    return out


def _fits_float64(v: int) -> bool:
    try:
        float(v)
    except OverflowError:
        return False
    return True


def _stage(f: ButterflyFactor, ring: Ring, p: int | None, dtype: Any) -> Stage:
    """``(s, T0, T1)`` of one factor: ``T0[j, 0] = d1``, ``T0[j, 1] = d3``, ``T1[j, 0] = d2``,
    ``T1[j, 1] = d4`` on the pairs ``m = s·j + t`` (each diagonal read as shape ``(N/(2s), s)``)."""
    import numpy as np

    s, shape = f.stride, (f.size // (2 * f.stride), 1, f.stride)
    with np.errstate(over="ignore"):  # an entry beyond float32's range: refused below, with its value
        try:
            d1, d2, d3, d4 = (np.asarray(_values(d, ring, p), dtype=dtype).reshape(shape) for d in (f.d1, f.d2, f.d3, f.d4))
        except OverflowError:  # an int entry beyond float64's range (the fast path of _values keeps ints)
            big = next(v for d in (f.d1, f.d2, f.d3, f.d4) for v in d if type(v) is int and not _fits_float64(v))
            raise IRError(f"butterfly entry {safe_repr(big, 40)} is beyond the range of float64") from None
    stage = s, np.concatenate((d1, d3), axis=1), np.concatenate((d2, d4), axis=1)
    if not p:
        check_range([stage], str(np.dtype(dtype)))
    return stage


def check_range(stages: Sequence[Stage], dtype: str) -> None:
    """:class:`~symverify.errors.IRError` when a stage's entry is infinite in ``dtype``
    (``'float64'`` or ``'float32'``): an exact entry beyond that format's range. Rounding an entry
    is the float forms' error; an infinite one is not (``0·inf`` makes NaN of the other entry of its pair).
    ``stages`` is a list of ``(stride, T0, T1)`` triples of arrays of numbers (else an ``IRError``)."""
    import numpy as np

    dtype = _float_dtype(dtype, "check_range")
    if not isinstance(stages, (list, tuple)):
        raise IRError(f"check_range: stages: expected a list of (stride, T0, T1) triples, found {type(stages).__name__}")
    with np.errstate(over="ignore"):
        for k, stage in enumerate(stages):
            if not (isinstance(stage, (list, tuple)) and len(stage) == 3):
                raise IRError(f"check_range: stages[{k}]: expected a (stride, T0, T1) triple, found {safe_repr(stage, 40)}")
            s, t0, t1 = stage
            for t in (t0, t1):
                try:
                    cast = np.asarray(t, dtype=dtype)
                except (TypeError, ValueError, OverflowError):
                    raise IRError(f"check_range: stages[{k}]: expected twiddles of numbers, found {safe_repr(t, 40)}") from None
                if np.isinf(cast).any():
                    at = [int(i) for i in np.argwhere(np.isinf(cast))[0]]
                    raise IRError(f"the butterfly stage of stride {s}: entry {at} of its twiddles ({float(np.asarray(t)[tuple(at)])!r}) "
                                  f"is beyond the range of {dtype}; use float64 or scale the factors")


def stages_of(fs: Sequence[ButterflyFactor]) -> list[ButterflyFactor]:
    """``fs`` without identity factors, each run of one stride multiplied exactly into one factor
    (:meth:`ButterflyFactor.then`); the product is unchanged. ``fs`` is a sequence of factors of one
    size (else :class:`IRError`, or :class:`ShapeError` for another size)."""
    from symverify.kaleidoscope.simplify import _factors

    out: list[ButterflyFactor] = []
    for f in _factors(fs, "stages_of"):
        if f.is_identity():
            continue
        if out and out[-1].stride == f.stride:
            out[-1] = out[-1].then(f)
        else:
            out.append(f)
    return [f for f in out if not f.is_identity()]


def twiddles(obj: Butterflies, *, p: int | None = None, params: Mapping[str, Any] | None = None,
             dtype: str = "float64") -> tuple[Stage, ...]:
    """The stages of ``obj`` (:func:`stages_of`) in application order, as numpy ``(s, T0, T1)``.

    Entries are exact values mod ``p`` (int64) when ``p`` is given, else rounded to float64 and
    then to ``dtype``. Symbolic entries take their values from ``params``; a name that is no
    parameter of ``obj`` is an IRError.
    """
    import numpy as np

    if p is not None:
        p = _check_prime(p, "twiddles")
    if params is not None and not isinstance(params, Mapping):
        raise IRError(f"params: expected a mapping from parameter names to exact values, found {type(params).__name__}")
    unknown = sorted(map(repr, set(params or ()) - set(params_of(obj))))
    if unknown:
        raise IRError(f"params: {', '.join(unknown)} not among the parameters of the kaleidoscope ({', '.join(params_of(obj)) or 'none'})")
    values = {k: _param_value(k, v) for k, v in (params or {}).items()}
    ring: Ring = ModRing(p, {k: _residue(k, v, p) for k, v in values.items()}) if p else FractionRing(values)
    np_dtype = np.int64 if p else np.dtype(dtype)
    _, fs = factors_of(obj)
    return tuple(_stage(f, ring, p, np_dtype) for f in stages_of(fs))


def _param_value(name: str, v: object) -> int | Fraction:
    """A parameter's exact value (:func:`~symverify.kernel.ir.scalar.as_scalar`: ints, Fractions,
    numpy integers, ``"p/q"`` text); a float, a bool or a symbol is an :class:`IRError`."""
    from symverify.kernel.ir.scalar import as_scalar

    x = as_scalar(v, f"params[{name!r}]")
    if not isinstance(x, (int, Fraction)):
        raise IRError(f"params[{name!r}]: expected an exact rational (int, Fraction or a string like '1/2'), "
                      f"found the symbolic value {safe_repr(x, 60)}")
    return x


def _residue(name: str, v: int | Fraction, p: int) -> int:
    """``v`` mod ``p``; a denominator divisible by ``p`` is an :class:`IRError` naming the parameter."""
    try:
        return ModRing(p).coerce(v)
    except IRError as e:
        raise IRError(f"params[{name!r}]: {e}") from None


def _check_prime(p: object, where: str) -> int:
    """``p`` as the ``int`` of its value (a numpy integer read by value): residues mod ``p`` are int64
    and their products must fit, so ``p`` is a prime below ``2^31`` (a composite modulus has no
    inverses for some denominators; a float or bool is no modulus)."""
    q = as_index(p)
    if q is None or not 2 <= q < 2**31 or not is_prime(q):
        raise IRError(f"{where}: expected a prime 2 ≤ p < 2**31, found p = {safe_repr(p, 40)}")
    return q


def _float_dtype(dtype: object, where: str) -> FloatDType:
    if dtype not in ("float64", "float32"):
        raise IRError(f"{where}: dtype must be 'float64' or 'float32', found {dtype!r}")
    return dtype  # type: ignore[return-value]


# ---- numpy ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NumpyProgram:
    """A compiled butterfly product; :meth:`apply` takes ``(n,)`` or ``(batch, n)``.

    ``stages`` holds ``(s, T0, T1)`` per stage (:func:`stages_of`, module docstring); ``dtype`` is
    ``'float64'``, ``'float32'`` (``kind='float'``) or ``'int64'`` (``kind='mod'``, values mod ``p``).
    """

    size: int
    n: int
    kind: Literal["float", "mod"]
    p: int | None
    stages: tuple[Stage, ...]
    dtype: str = "float64"

    def __repr__(self) -> str:
        return f"NumpyProgram(n={self.n}, size={self.size}, {len(self.stages)} stages, {self.dtype}{f' mod {self.p}' if self.p else ''})"

    def apply(self, x: Any) -> Any:
        """``M·x`` for every row of ``x`` (a new array; ``x`` is not modified).

        Two ``(B, N)`` buffers alternate as stage input and output and a third holds one product,
        so a stage allocates nothing: ``Y = T0·X0``, ``tmp = T1·X1``, ``Y += tmp`` (``Y mod p``).
        Buffers larger than the machine's memory, or refused by it, are a
        :class:`~symverify.errors.LimitError` (a broadcast view as ``x`` takes no memory; they do).
        A float input holding NaN or ±inf is an :class:`~symverify.errors.IRError` naming the entry
        (:func:`refuse_non_finite`: the exact product has none, and ``0·inf = NaN`` would spread).
        """
        import numpy as np

        arr = np.asarray(x)
        single = arr.ndim == 1
        arr = arr.reshape(1, -1) if single else arr
        if arr.ndim != 2 or arr.shape[1] != self.n:
            raise ShapeError(f"numpy butterfly apply: expected shape ({self.n},) or (batch, {self.n}), found {np.shape(x)}")
        if arr.dtype.kind not in "iufO":
            raise IRError(f"numpy butterfly apply: expected real numbers, found a {arr.dtype} array")
        if arr.dtype == object and not all(isinstance(v, (int, float, Fraction, np.number)) and not isinstance(v, (bool, np.bool_, complex, np.complexfloating)) for v in arr.flat):
            bad = next(v for v in arr.flat if not isinstance(v, (int, float, Fraction, np.number)) or isinstance(v, (bool, np.bool_, complex, np.complexfloating)))
            raise IRError(f"numpy butterfly apply: expected real numbers, found {type(bad).__name__} {bad!r:.40} in an object array")
        if self.p and not (arr.dtype.kind in "iu" or (arr.dtype == object and all(
                isinstance(v, int) and not isinstance(v, bool) for v in arr.flat))):
            raise IRError(f"numpy butterfly apply (mod {self.p}): expected integers (residues), found a {arr.dtype} array; "
                          "a float or a fraction has no residue here (map fractions through their inverse mod p first)")
        B, N = arr.shape[0], self.size
        need, have = 3 * B * N * np.dtype(self.dtype).itemsize, device_memory()
        try:
            if have is not None and need > have:
                raise MemoryError
            cur = np.zeros((B, N), dtype=self.dtype)
            cur[:, : self.n] = arr % self.p if self.p else self._floats(arr, single)
            nxt, tmp = np.empty_like(cur), np.empty_like(cur)
        except MemoryError:
            raise LimitError(f"numpy butterfly apply: a batch of {B} rows needs three {B}×{N} {self.dtype} buffers "
                             f"({need / 2**30:.3g} GiB), more than this machine's memory{'' if have is None else f' ({have / 2**30:.3g} GiB)'}"
                             "; run it in smaller batches") from None
        for s, t0, t1 in self.stages:
            shape = (B, N // (2 * s), 2, s)
            v, y, t = cur.reshape(shape), nxt.reshape(shape), tmp.reshape(shape)
            np.multiply(t0, v[:, :, 0:1], out=y)
            np.multiply(t1, v[:, :, 1:2], out=t)
            np.add(y, t, out=y)
            if self.p:  # each product is below p² < 2**62, so the sum fits in int64
                np.remainder(y, self.p, out=y)
            cur, nxt = nxt, cur
        out = cur[:, : self.n]
        return out[0] if single else out


    def _floats(self, arr: Any, single: bool = False) -> Any:
        """``arr`` in the program's float dtype, refusing entries beyond its range (0·inf would turn
        the other entries of their pairs into NaN: an overflow before the first stage is no rounding)
        and entries that are NaN or ±inf (:func:`refuse_non_finite`). ``single``: ``arr`` is a 1-D
        input read as one row, and a refused entry is named by its position in that input."""
        import numpy as np

        src = arr
        if arr.dtype == object:
            src = np.empty(arr.shape, dtype=np.float64)
            for idx, v in np.ndenumerate(arr):
                try:
                    src[idx] = float(v)
                except OverflowError:
                    raise IRError(f"numpy butterfly apply: entry {list(idx)} ({safe_repr(v, 40)}) is beyond the range of float64") from None
        refuse_non_finite(src, "numpy butterfly apply", single)
        with np.errstate(over="ignore"):
            out = src.astype(self.dtype)
        lost = np.isinf(out) & ~np.isinf(src)
        if lost.any():
            at = [int(i) for i in np.argwhere(lost)[0]]
            raise IRError(f"numpy butterfly apply: entry {at} ({safe_repr(src[tuple(at)], 40)}) is beyond the range of "
                          f"{self.dtype}; scale the input or use float64")
        return out


def refuse_non_finite(src: Any, where: str, single: bool = False) -> None:
    """Refuse a float input that holds NaN or ±inf (an :class:`IRError` naming its first such entry,
    by its index in ``src``, or in the row of a 1-D input when ``single``).

    The product is defined on numbers: the exact :func:`~symverify.kernel.kaleidoscope.apply.apply`
    has no NaN or infinity, and IEEE arithmetic would spread one through the zero coefficients of
    every stage it meets (``0·inf = NaN``), so outputs that do not depend on that entry would be NaN
    too; that is no rounding of the exact result, so the float path refuses it rather than return it."""
    import numpy as np

    if src.dtype.kind != "f":
        return
    finite = np.isfinite(src)
    if finite.all():
        return
    at = [int(i) for i in np.argwhere(~finite)[0]]
    v = float(src[tuple(at)])
    shown = at[1:] if single else at
    raise IRError(f"{where}: entry {shown} is {v!r}: expected finite numbers (the exact product has no NaN or infinity, "
                  "and 0·inf = NaN would reach outputs that do not depend on it)")


def compile_numpy(
    obj: Butterflies,
    kind: Literal["float", "mod"] = "float",
    p: int | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    dtype: FloatDType = "float64",
) -> NumpyProgram:
    """A :class:`NumpyProgram` applying ``obj`` (identity factors dropped, runs of one stride merged).

    Args:
        obj: a factor, BB* element, factor list, kaleidoscope, or the :class:`Factorization` a
            construction returns (applied as its kaleidoscope).
        kind: ``'float'`` rounds every exact entry to float64, then to ``dtype``; ``'mod'``
            computes in int64 modulo the prime ``p < 2**31`` (so ``d·x + d'·x'`` fits), mapping
            rationals through their inverse mod ``p``.
        p: the prime of ``kind='mod'`` (given with ``kind='float'``: an IRError).
        params: values of the symbolic parameters in the diagonals.
        dtype: ``'float64'`` or ``'float32'`` for ``kind='float'``.

    Raises:
        IRError: an unknown kind or dtype, a bad ``p``, a parameter without a value, or an
            ``obj`` that is no butterfly object. The program's ``apply`` refuses a float input
            holding NaN or ±inf (:func:`refuse_non_finite`).

    >>> from symverify.kernel.ir.butterfly import ButterflyFactor
    >>> compile_numpy(ButterflyFactor(2, 1, (1,), (2,), (3,), (4,))).apply([1.0, 1.0]).tolist()
    [3.0, 7.0]
    """
    if kind == "mod":
        p = _check_prime(p, "compile_numpy(kind='mod')")
        np_dtype = "int64"
    elif kind == "float":
        if p is not None:
            raise IRError(f"compile_numpy: p={p!r} applies to kind='mod' only (kind is 'float')")
        np_dtype = _float_dtype(dtype, "compile_numpy")
    else:
        raise IRError(f"compile_numpy: kind must be 'float' or 'mod', found {kind!r}")
    size, n = corner(obj)
    return NumpyProgram(size, n, kind, p, twiddles(obj, p=p, params=params, dtype=np_dtype), np_dtype)


# ---- torch ---------------------------------------------------------------------------------


def compile_torch(obj: Butterflies, *, dtype: FloatDType = "float64", device: Any = None,
                  params: Mapping[str, Any] | None = None) -> Any:
    """A ``torch.nn.Module`` applying ``obj`` to a tensor of shape ``(..., n)``.

    The module holds the twiddles of every stage (:func:`stages_of`) as buffers (so
    ``.to(device)`` moves them) and runs the reshape scheme of the module docstring: a view, a
    split, a multiply and an in-place multiply-add per stage, device-agnostic, traceable by
    ``torch.jit.trace``. Inputs are cast to ``dtype``; they must already be on the module's
    device. Entries are rounded to float64, then to ``dtype``.

    Args:
        obj: as for :func:`compile_numpy` (a :class:`Factorization` is applied as its kaleidoscope).
        dtype: ``'float64'`` or ``'float32'``.
        device: where the twiddles live (``None``: CPU).
        params: values of the symbolic parameters in the diagonals.

    Raises:
        BackendUnavailableError: torch is not installed.
        IRError: an unknown dtype, a parameter without a value, or no butterfly object. The module
            refuses an input holding NaN or ±inf, naming the entry in the input's shape (checked
            after the product, one sum over the input; on a GPU that waits for the result; a trace
            records no such check).
    """
    dt = _float_dtype(dtype, "compile_torch")
    size, n = corner(obj)
    stages = twiddles(obj, params=params)
    check_range(stages, dt)  # the module rounds the float64 twiddles to dt
    try:
        from symverify.kaleidoscope._torch_module import ButterflyProduct
    except ImportError:
        raise BackendUnavailableError(
            "compile_torch needs PyTorch, which is not installed; install the extra with `pip install 'symverify[torch]'`"
        ) from None
    from symverify.kernel.engines._torch import resolve_device

    return ButterflyProduct(size, n, stages, dt, resolve_device(device))  # CUDA without CUDA: a clear error
