"""The zoology repository's ``BaseConv`` variant, and exact converters to and from it.

:class:`ZoologyBaseConv` re-implements ``zoology/mixers/base_conv.py`` with an explicit long filter
(``kernel_size=-1, implicit_long_conv=False, use_act=False``; docs/appendix-h.md §1.3):

    z = (k ⊛ u + u) ⊙ (u·A + c) + u,      A = projection.weight.T

with ``projection = nn.Linear(d, d)`` (it stores ``Aᵀ`` and a per-channel bias ``c``), a filter
``conv.filter`` of shape ``(d, l_max)``, ``fft_conv`` of size 2·seq_len that adds the D-skip ``u``,
and the residual ``+u``. Its state-dict keys (``projection.weight``, ``projection.bias``,
``conv.filter``) match the repository's module. It differs from the paper layer (docs/theory.md §1.1) in
the residual, the per-channel bias, the D-skip, causal-only convolution, no padding, and FFT
aliasing of filters longer than seq_len + 1.

:func:`to_zoology` maps each paper layer to one zoology layer. With ``A = Wᵀ_torch`` (``u·A``) the
zoology layer is ``(u·A + c) ⊙ (k ⊛ u + u) + u``, so column q of the paper layer ``Y_q =
(u·W + b1)_q·(h ⊛ u + b2)_q`` is representable when ``Y_q − u_q`` factors that way. The
recognised column forms (each identity is checked by expanding both sides):

- *zero*: ``W_q = 0, b1_q = 0`` or ``h_q = 0, b2_q = 0``  →  ``A_q = 0, c_q = −1, k_q = 0``;
- *gate*: ``h_q = h0·e_0`` (h0 ≠ 0), ``b2_q = 0``, ``b1_q ≡ β``  →  ``A_q = h0·W_q, c_q = h0·β − 1, k_q = 0``;
- *convolution*: ``W_q = 0``, ``b1_q ≡ β``, ``b2_q = 0``  →  ``A_q = 0, c_q = −1, k_q = −β·h_q``;
- *self-scaled*: ``W_q = w·e_q`` (w ≠ 0), ``b1_q = 0``, ``b2_q ≡ γ``, and ``w·γ = 1`` (→ ``A_q = W_q,
  c_q = 0, k_q = h_q − e_0``), or ``h_q = h0·e_0`` with h0 possibly 0 (then ``Y_q = (w·h0·u_q + w·γ)·u_q``
  → ``A_q = w·h0·e_q, c_q = w·γ − 1, k_q = 0``).

Comparing the degree-2, 1 and 0 parts of both sides row by row (unique factorisation of products
of linear forms) leaves only these forms, except for layers where a branch vanishes on some rows
only, which can leave a bias free on those rows; such layers are refused as well, so a refusal
says "not in the recognised forms" and gives the reason for each form. Model-level refusals: cyclic layers, inner size ≠ input size, symbolic
weights without values, and (with ``exact=True``) weights that are not numbers of the dtype.

:func:`from_zoology` reads weights exactly (each float is the dyadic rational ``Fraction(float)``),
in bulk: long filters become :class:`~symverify.kernel.ir.cellarray.CellArray` grids (float64 arrays, plus
exact scalars for the few products and sums that are not float64 numbers), constant columns one
rectangle each, so a 16384×64 layer converts in a fraction of a second. A zoology layer whose every column
is of the inverse forms (``k_q = 0``; ``A_q = 0``; ``A_q = w·e_q`` with ``c_q = 0``) becomes one paper
layer; otherwise every layer becomes two paper layers on inner width 2d: layer 1 computes
``[(u·A + c) ⊙ ((k + e_0) ⊛ u) | u]``, layer 2 adds the two halves.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from symverify.errors import CompileError, ShapeError
from symverify.executors.inputs import exact_weights, refuse_hooks
from symverify.ir import limits
from symverify.ir.bigint import safe_repr
from symverify.kernel.engines._torch import require_torch, resolve_device, resolve_dtype
from symverify.kernel.engines.numbers import FloatNumbers, float_numbers
from symverify.kernel.ir.analysis import check_known
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.cellarray import CellArray, dyadic_parts
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, as_index, is_zero, plain_str

try:
    import torch
    from torch import nn
except ImportError:  # torch is the extra symverify[torch]: BackendUnavailableError naming it
    require_torch()

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["ZoologyBaseConv", "to_zoology", "from_zoology"]


def zoology_fft_conv(u: Any, k: Any) -> Any:
    """zoology's ``fft_conv(u, k, dropout_mask=None, gelu=False)`` on ``u (b, d, l)``, ``k (d, l_max)``:
    causal convolution through an FFT of size 2l (the filter is not truncated), plus ``u``."""
    seqlen = u.shape[-1]
    fft_size = 2 * seqlen
    k_f = torch.fft.rfft(k, n=fft_size) / fft_size
    u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=fft_size)
    y = torch.fft.irfft(u_f * k_f, n=fft_size, norm="forward")[..., :seqlen]
    return (y + u).to(dtype=u.dtype)


class _LongConvolution(nn.Module):
    def __init__(self, d_model: int, l_max: int, dtype: Any) -> None:
        super().__init__()
        self.filter = nn.Parameter(torch.zeros(d_model, l_max, dtype=dtype))

    def forward(self, x: Any) -> Any:
        return zoology_fft_conv(x.transpose(1, 2), self.filter).transpose(1, 2)


class ZoologyBaseConv(nn.Module):
    """zoology's ``BaseConv`` (explicit long filter, no activation): ``conv(u) ⊙ projection(u) + u``."""

    def __init__(self, d_model: int, l_max: int, dtype: Any = None) -> None:
        """``d_model`` and ``l_max`` are positive ints (a numpy integer by its value), else a
        :class:`ShapeError`; a module of more than ``MAX_CELLS`` weights is a ``LimitError``."""
        sizes = {"d_model": as_index(d_model), "l_max": as_index(l_max)}
        for name, v in sizes.items():
            if v is None or v < 1:
                given = d_model if name == "d_model" else l_max
                raise ShapeError(f"ZoologyBaseConv: {name}: expected a positive int, found {type(given).__name__} "
                                 f"{safe_repr(given, 40)}")
        d_model, l_max = sizes["d_model"], sizes["l_max"]  # type: ignore[assignment]
        limits.check(d_model * (d_model + l_max), "MAX_CELLS", lambda: f"ZoologyBaseConv(d_model={d_model}, l_max={l_max}) weights")
        super().__init__()
        dt = resolve_dtype(dtype)
        self.d_model, self.l_max = d_model, l_max
        self.projection = nn.Linear(d_model, d_model, dtype=dt)
        self.conv = _LongConvolution(d_model, l_max, dt)

    def forward(self, u: Any) -> Any:
        return self.conv(u) * self.projection(u) + u


# ---- paper → zoology ---------------------------------------------------------------------


def _const(col: list[Scalar]) -> bool:
    return all(v == col[0] for v in col)


def _zero(col: list[Scalar]) -> bool:
    return all(is_zero(v) for v in col)


def _where_varies(col: list[Scalar]) -> str:
    j = next(i for i, v in enumerate(col) if v != col[0])
    return f"varies with position (rows 0 and {j}: {col[0]} ≠ {col[j]})"


def _column(q: int, Wq: list[Scalar], b1: list[Scalar], h: list[Scalar], b2: list[Scalar]) -> tuple[list[Any], Any, list[Any]] | str:
    """``(A_q, c_q, k_q)`` for one column, or the reason no recognised form applies."""
    dd, nn_ = len(Wq), len(h)
    e0 = [1] + [0] * (nn_ - 1)
    zeros_d, zeros_n = [0] * dd, [0] * nn_
    if (_zero(Wq) and _zero(b1)) or (_zero(h) and _zero(b2)):
        return zeros_d, -1, zeros_n
    lags = [k for k, v in enumerate(h) if not is_zero(v)]
    impulse0 = lags == [0]
    why: list[str] = []
    # gate
    fails = ([] if impulse0 else [f"h has lags {lags}, not just 0"]) + ([] if _zero(b2) else ["b2 is not 0"]) \
        + ([] if _const(b1) else [f"b1 {_where_varies(b1)}"])
    if not fails:
        h0, beta = h[0], b1[0]
        return [h0 * w for w in Wq], h0 * beta - 1, zeros_n
    why.append("gate: " + ", ".join(fails))
    # convolution
    fails = ([] if _zero(Wq) else ["W column is not 0"]) + ([] if _const(b1) else [f"b1 {_where_varies(b1)}"]) \
        + ([] if _zero(b2) else ["b2 is not 0"])
    if not fails:
        return zeros_d, -1, [-b1[0] * v for v in h]
    why.append("convolution: " + ", ".join(fails))
    # self-scaled
    others = [p for p, v in enumerate(Wq) if p != q and not is_zero(v)]
    w = Wq[q]
    fails = ([] if not others and not is_zero(w) else [f"W column is not a multiple of e_{q}"]) \
        + ([] if _zero(b1) else ["b1 is not 0"]) + ([] if _const(b2) else [f"b2 {_where_varies(b2)}"])
    if not fails:
        gamma = b2[0]
        if w * gamma == 1:
            return list(Wq), 0, [v - e for v, e in zip(h, e0)]
        if not lags or impulse0:  # w·u_q·(h0·u_q + γ) = (w·h0·u_q + w·γ)·u_q, a gate
            return [w * h[0] if p == q else 0 for p in range(dd)], w * gamma - 1, zeros_n
        fails = [f"w·b2 = {w * gamma} ≠ 1 and h has lags {lags}"]
    why.append("self-scaled: " + ", ".join(fails))
    return "; ".join(why)


def _exact_rows(g: Grid, nums: FloatNumbers) -> list[list[Scalar]]:
    return [[nums.exact(v) for v in row] for row in g.to_rows()]


def to_zoology(model: Model, *, params: Mapping[str, object] | None = None, dtype: str | torch.dtype | None = None,
               device: str | torch.device | None = None, exact: bool = True) -> nn.Sequential:
    """An ``nn.Sequential`` of :class:`ZoologyBaseConv` computing the same function as ``model``.

    Raises :class:`~symverify.errors.CompileError` listing every reason when some layer is not
    representable (see the module docstring), or when the model has no layers (an empty
    ``nn.Sequential`` states no sizes, and :func:`from_zoology` refuses it); with ``exact=True`` also when a zoology weight
    would not be exactly a number of ``dtype`` (default float64).

    >>> from symverify.kernel.ir.grid import Grid
    >>> gate = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    >>> to_zoology(gate)(torch.tensor([[[3.0], [-2.0]]], dtype=torch.float64)).tolist()
    [[[9.0], [4.0]]]
    """
    if not isinstance(model, Model):
        raise CompileError(f"to_zoology: expected a Model, found {type(model).__name__}"
                           + ("; pass its .model" if hasattr(model, "model") else ""))
    if not isinstance(exact, bool):
        raise CompileError(f"to_zoology: exact: expected True or False, found {safe_repr(exact, 40)}")
    check_known(model, params)
    dt, dev = resolve_dtype(dtype), resolve_device(device)
    nums = float_numbers(params)
    problems: list[str] = []
    if not model.layers:  # an empty nn.Sequential holds no weights: from_zoology could not read its N and d back
        problems.append(
            f"the model has no layers: an empty nn.Sequential holds no weights, so neither N×d = {model.n}×{model.d} "
            "nor the model is stated in it, and from_zoology refuses it (a model with no layers reads out its input; "
            "the zoology BaseConv with zero weights computes that too)"
        )
    if (model.inner_n, model.inner_d) != (model.n, model.d):
        problems.append(
            f"the inner size N'×d' = {model.inner_n}×{model.inner_d} differs from the input size N×d = "
            f"{model.n}×{model.d}: the zoology layer works on the input itself, with no padding"
        )
    missing = sorted(model.params() - {k for k, _ in nums.params})
    if missing:
        problems.append(f"symbolic weights {', '.join(missing)} need values (params=)")
    for i, ly in enumerate(model.layers):
        if ly.mode is Mode.CYCLIC:
            problems.append(f"layer {i} is cyclic; zoology's fft_conv is causal")
    if problems:
        raise CompileError("cannot convert to the zoology BaseConv variant:\n- " + "\n- ".join(problems))
    mods = []
    for i, ly in enumerate(model.layers):
        W, b1, h, b2 = (_exact_rows(g, nums) for g in (ly.W, ly.b1, ly.h, ly.b2))
        A = [[0] * model.d for _ in range(model.d)]
        c: list[Any] = [0] * model.d
        k = [[0] * model.n for _ in range(model.d)]
        for q in range(model.d):
            col = _column(q, [r[q] for r in W], [r[q] for r in b1], [r[q] for r in h], [r[q] for r in b2])
            if isinstance(col, str):
                problems.append(f"layer {i}, column {q}: (u·W + b1) ⊙ (h ⊛ u + b2) − u is in none of the forms (u·A + c) ⊙ (k ⊛ u + u) recognised: {col}")
                continue
            for p in range(model.d):
                A[p][q] = col[0][p]
            c[q], k[q] = col[1], col[2]
        mods.append(_zoology_layer(i, A, c, k, dt, dev, exact, problems))
    if problems:
        raise CompileError("cannot convert to the zoology BaseConv variant:\n- " + "\n- ".join(problems))
    return nn.Sequential(*mods)


def _float_or_inf(v: Any) -> float:
    """``float(v)``, or ±inf for an exact value beyond float64's range (which ``float`` refuses)."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _zoology_layer(i: int, A: list[list[Any]], c: list[Any], k: list[list[Any]], dt: Any, dev: Any, exact: bool,
                   problems: list[str]) -> ZoologyBaseConv:
    d, n = len(c), len(k[0]) if k else 0
    mod = ZoologyBaseConv(d, n, dt).to(dev)
    tensors = {"projection.weight": [[A[p][q] for p in range(d)] for q in range(d)], "projection.bias": c, "conv.filter": k}
    with torch.no_grad():
        for name, vals in tensors.items():
            shape = tuple(mod.get_parameter(name).shape)
            flat = np.asarray(vals, dtype=object).ravel()
            t64 = torch.tensor([_float_or_inf(v) for v in flat], dtype=torch.float64)
            t = t64.to(dt)
            lost = torch.isinf(t).nonzero().flatten().tolist()
            if lost:  # rounding is what exact=False allows; a weight beyond the format's range has no float
                j = lost[0]
                where = [int(a) for a in np.unravel_index(j, shape)]
                problems.append(f"layer {i} {name}{where}: {safe_repr(flat[j], 40)} is beyond the range of "
                                f"{'float64' if math.isinf(float(t64[j])) else dt} ({len(lost)} value(s) so)")
                continue
            if exact:
                bad = [(j, v) for j, (v, f) in enumerate(zip(flat, t.double().tolist())) if Fraction(f) != Fraction(v)]
                if bad:
                    problems.append(f"layer {i} {name}: {len(bad)} value(s) are not exactly numbers of {dt}, e.g. {bad[0][1]} (pass exact=False to round)")
            mod.get_parameter(name).copy_(t.reshape(mod.get_parameter(name).shape))
    return mod


# ---- zoology → paper ---------------------------------------------------------------------


_KEYS = ("projection.weight", "projection.bias", "conv.filter")


@dataclass(frozen=True)
class _Weights:
    """One zoology layer's tensors: ``weight (d, d)`` (nn.Linear: ``Aᵀ``), ``bias (d,)``, ``filter (d, l_max)``."""

    weight: Any
    bias: Any
    filter: Any

    @property
    def d_model(self) -> int:
        return int(self.weight.shape[0])

    @property
    def l_max(self) -> int:
        return int(self.filter.shape[1])


def _key_hint(keys: set[str]) -> str:
    if any(k.startswith("conv.conv.") for k in keys):
        return ("; it has a short convolution (kernel_size ≥ 1: nn.Conv1d with its own bias and no D-skip), "
                "which from_zoology does not read")
    if "projection.weight" in keys and "conv.filter" not in keys:
        return "; its long filter is implicit (implicit_long_conv=True): copy the filter it generates into conv.filter first"
    return ""


def _weights(obj: Any, i: int) -> _Weights:
    """A zoology layer's weights from any module or state dict with zoology's keys (duck-typed)."""
    if isinstance(obj, Mapping):
        sd, what = obj, "a state dict"
    elif isinstance(obj, nn.Module):
        if getattr(obj, "use_act", False):
            raise CompileError(
                f"from_zoology: element {i} ({type(obj).__name__}) has use_act=True: its SiLU activations are not "
                "polynomials, so no BaseConv model computes it"
            )
        refuse_hooks(obj, f"from_zoology: element {i}")  # a hook's change to the forward pass is in no weight
        from symverify.executors.zoology_gated import _dropout_active, _refuse_nonpolynomial

        try:  # an activation or a norm has no weight either: the keys do not show it
            _refuse_nonpolynomial(obj, ())
        except CompileError as e:
            raise CompileError(f"from_zoology: element {i}: {str(e).removeprefix('from zoology: ')}") from None
        if _dropout_active(obj):
            raise CompileError(f"from_zoology: element {i} ({type(obj).__name__}) has active dropout (training mode, "
                               "p > 0): random, not a function of the input; call .eval() first")
        sd, what = obj.state_dict(), f"a {type(obj).__name__}"
    else:
        raise CompileError(f"from_zoology: element {i} is a {type(obj).__name__}, expected a zoology BaseConv module or its state dict")
    keys = {str(k) for k in sd}
    if keys != set(_KEYS):
        raise CompileError(
            f"from_zoology: element {i} is {what} with state-dict keys {sorted(keys)}; expected exactly "
            f"{', '.join(_KEYS)} (zoology's BaseConv with kernel_size=-1, implicit_long_conv=False, or ZoologyBaseConv)"
            + _key_hint(keys)
        )
    w, c, k = (sd[key] for key in _KEYS)
    if not all(isinstance(t, torch.Tensor) for t in (w, c, k)):
        raise CompileError(f"from_zoology: element {i}: expected tensors under {', '.join(_KEYS)}")
    w, c, k = (exact_weights(t, f"from_zoology: layer {i} {key}") for key, t in zip(_KEYS, (w, c, k)))
    d = w.shape[0] if w.dim() == 2 else -1
    if w.dim() != 2 or w.shape[1] != d:
        raise ShapeError(f"layer {i} projection.weight: expected a square (d, d) matrix, found shape {tuple(w.shape)}")
    if tuple(c.shape) != (d,):
        raise ShapeError(f"layer {i} projection.bias: expected shape ({d},), found {tuple(c.shape)}")
    if k.dim() != 2 or k.shape[0] != d or k.shape[1] < 1:
        raise ShapeError(f"layer {i} conv.filter: expected shape ({d}, l_max), found {tuple(k.shape)}")
    return _Weights(w, c, k)


def _layers_of(modules: Any) -> list[_Weights]:
    refuse_hooks(modules, "from_zoology")  # a container's own hooks (nn.Sequential)
    if isinstance(modules, Mapping) or (isinstance(modules, nn.Module) and not isinstance(modules, Iterable)):
        items = [modules]
    else:
        items = list(modules if isinstance(modules, Iterable) else [modules])
    if not items:
        raise CompileError("from_zoology: expected at least one ZoologyBaseConv layer (or zoology BaseConv module or state dict)")
    return [_weights(m, i) for i, m in enumerate(items)]


def _finite(t: Any, where: str) -> Any:
    """A float tensor as a float64 numpy array (exact: every float widens exactly), refusing NaN and ±inf."""
    a = t.detach().to("cpu", torch.float64).numpy()
    bad = np.argwhere(~np.isfinite(a))
    if len(bad):
        i, j = (int(v) for v in bad[0])
        raise CompileError(f"{where}[{i}, {j}] is {a[i, j]}: not a finite number, so it has no exact value")
    return a


def _read(mod: _Weights, i: int, seq_len: int) -> tuple[Any, Any, Any]:
    """``A`` (u·A, ``(d, d)``), ``c`` ``(d,)`` and the filter ``k (d, seq_len)`` as float64 arrays
    (each float the exact dyadic rational it is), refusing aliasing filters (a nonzero tap at a
    position in ``[seq_len + 1, 2·seq_len)``; taps beyond never reach an output). Every tap of the
    filter must be finite, those beyond ``seq_len`` too: zoology's FFT reads the first ``2·seq_len``
    taps, and one NaN or infinity among them makes every output NaN, although a finite tap at
    positions ``≥ seq_len`` never reaches an output (a non-finite tap further on is no number either)."""
    A = _finite(mod.weight.T, f"layer {i} projection.weight")
    c = _finite(mod.bias[None, :], f"layer {i} projection.bias")[0]
    filt = torch.from_numpy(_finite(mod.filter, f"layer {i} conv.filter"))
    l_max = filt.shape[1]
    # zoology's transform of size 2L (L = seq_len) reads the taps 0 … 2L − 1 (rfft trims the rest): a
    # tap j ≥ L + 1 meets u[m] in output (j + m) mod 2L = j + m − 2L < L, a wrap-around; tap L reaches
    # no output below L, and taps ≥ 2L none at all
    if bool(filt[:, seq_len + 1 : 2 * seq_len].any()):
        j = seq_len + 1 + int(torch.nonzero(filt[:, seq_len + 1 : 2 * seq_len].any(dim=0))[0])
        raise CompileError(
            f"layer {i}: the filter (l_max = {l_max}) has a nonzero tap at position {j}, in [seq_len + 1, 2·seq_len) = "
            f"[{seq_len + 1}, {2 * seq_len}); zoology's size-2·seq_len FFT wraps such taps into the outputs, which is "
            "not a causal convolution"
        )
    k = torch.zeros(filt.shape[0], seq_len, dtype=filt.dtype)
    m = min(seq_len, l_max)
    k[:, :m] = filt[:, :m]
    return A, c, _finite(k, f"layer {i} conv.filter")


def _exact(x: float) -> Scalar:
    q = Fraction(x)
    return int(q) if q.denominator == 1 else q


def _columns(n: int, width: int, values: Any) -> Grid:
    """The ``n × width`` grid whose column q is the constant ``values[q]`` (one rectangle per nonzero column)."""
    return Grid(n, width, 0, tuple((0, n, q, q + 1, v) for q, v in enumerate(values) if not is_zero(v)))


def _exact_products(scale: Any, K: Any) -> tuple[Any, Any]:
    """``scale[q]·K[:, q]`` in float64 and the mask of products that are exact there.

    With ``x = m·2^e`` (``m`` odd, :func:`~symverify.kernel.ir.cellarray.dyadic_parts`), the exact product
    is ``(m1·m2)·2^(e1+e2)`` with ``m1·m2`` odd; it is a float64 when ``|m1·m2| < 2^53`` (computed in
    int64 where ``bits(m1) + bits(m2) ≤ 63``, else it has at least 63 bits) and its exponent is in
    float64's range, and then IEEE multiplication returns it unrounded."""
    m1, e1 = dyadic_parts(scale)
    m2, e2 = dyadic_parts(K)
    bits1 = np.frexp(np.abs(m1).astype(np.float64))[1]  # |m| < 2^53: the conversion is exact
    bits2 = np.frexp(np.abs(m2).astype(np.float64))[1]
    bits, e = bits1[None, :] + bits2, e1[None, :] + e2
    fits = bits <= 63
    prod = np.where(fits, m1[None, :], 0) * np.where(fits, m2, 0)
    ok = fits & (np.abs(prod) < 2**53) & (e >= -1074) & (bits + e <= 1024)
    with np.errstate(over="ignore", under="ignore"):  # such products are not exact there: ok is False for them
        prod_f = scale[None, :] * K
    return prod_f, ok | (m1[None, :] == 0) | (m2 == 0)


def _kernel(n: int, width: int, row0: list[Scalar], scale: Any | None, K: Any) -> Grid:
    """The kernel grid with exact first row ``row0`` and rows 1… equal to ``scale[q]·K[:, q]`` (float64
    where that product is exact in float64, an exact scalar elsewhere); columns beyond ``K``'s are zero."""
    factor = np.ones(K.shape[1]) if scale is None else scale
    if scale is None:  # the rows are K itself
        P, ok = K, np.ones(K.shape, dtype=bool)
    else:
        P, ok = _exact_products(scale, K)
    r, q = np.nonzero(np.where(ok, P, 0.0))  # not P·ok: a product beyond float64's range is inf there, and inf·0 is NaN
    extra: list[tuple[int, int, object]] = [(0, j, v) for j, v in enumerate(row0) if not is_zero(v)]
    rr, qq = np.nonzero(~ok)
    for i, j in zip(rr.tolist(), qq.tolist()):  # only products that are not float64 numbers
        v = Fraction(float(factor[j])) * Fraction(float(K[i, j]))
        extra.append((i + 1, j, int(v) if v.denominator == 1 else v))
    return Grid(n, width, 0, CellArray(r + 1, q, P[r, q], extra, where="kernel"))


def _single(A: Any, c: Any, k: Any) -> tuple[Grid, Grid, Grid, Grid] | None:
    """One paper layer ``(W, b1, h, b2)`` for a zoology layer, if every column is of an inverse form:
    ``k_q = 0``: ``(u·A + c + 1) ⊙ u``; ``A_q = 0``: ``c·((k + e0) ⊛ u) + u``; ``A_q = w·e_q, c_q = 0``:
    ``u_q ⊙ (w·(k + e0) ⊛ u + 1)``."""
    d, n = len(c), k.shape[1]
    kzero = ~k.any(axis=1)
    azero = ~A.any(axis=0)
    off = A.copy()
    np.fill_diagonal(off, 0)
    selfs = ~kzero & ~azero & (c == 0) & ~off.any(axis=0)
    conv = ~kzero & azero
    if not (kzero | conv | selfs).all():
        return None
    W = A.copy()
    W[:, selfs] = 0
    W[np.flatnonzero(selfs), np.flatnonzero(selfs)] = 1
    cs = [_exact(float(x)) for x in c]
    b1 = [cs[q] + 1 if kzero[q] else 1 if conv[q] else 0 for q in range(d)]
    w = np.diagonal(A)
    scale = np.where(conv, c, np.where(selfs, w, 0.0))
    row0: list[Scalar] = []
    for q in range(d):
        k0 = _exact(float(k[q, 0]))
        row0.append(1 if kzero[q] else cs[q] * k0 + cs[q] + 1 if conv[q] else _exact(float(w[q])) * (k0 + 1))
    h = _kernel(n, d, row0, scale, k[:, 1:].T)
    return Grid.from_array(W), _columns(n, d, b1), h, _columns(n, d, [int(bool(x)) for x in selfs])


def _pair(A: Any, c: Any, k: Any) -> tuple[Layer, Layer]:
    """Two paper layers on width 2d: ``[(u·A + c) ⊙ ((k + e0) ⊛ u) | u]``, then the sum of the halves."""
    d, n = len(c), k.shape[1]
    W1 = np.zeros((2 * d, 2 * d))
    W1[:d, :d] = A
    W1[np.arange(d), np.arange(d, 2 * d)] = 1
    W2 = np.zeros((2 * d, 2 * d))
    W2[np.arange(d), np.arange(d)] = 1
    W2[np.arange(d, 2 * d), np.arange(d)] = 1
    row0: list[Scalar] = [_exact(float(x)) + 1 for x in k[:, 0]]
    h1 = _kernel(n, 2 * d, row0, None, k[:, 1:].T)
    zero = Grid.zeros(n, 2 * d)
    b1 = _columns(n, 2 * d, [_exact(float(x)) for x in c])
    b21 = _columns(n, 2 * d, [int(q >= d) for q in range(2 * d)])
    b22 = _columns(n, 2 * d, [1] * (2 * d))
    return (Layer(Grid.from_array(W1), b1, h1, b21, Mode.CAUSAL), Layer(Grid.from_array(W2), zero, zero, b22, Mode.CAUSAL))


def from_zoology(modules: Any, *, seq_len: int | None = None, form: str = "auto") -> Model:
    """The exact paper model of a zoology BaseConv stack on sequences of length ``seq_len`` (default l_max).

    ``modules``: one layer or a sequence of layers (``nn.Sequential``, a list), each a
    :class:`ZoologyBaseConv`, the zoology repository's own ``BaseConv`` (``kernel_size=-1,
    implicit_long_conv=False, use_act=False``), any other module, or a state dict, whose state-dict
    keys are exactly ``projection.weight``, ``projection.bias``, ``conv.filter`` (duck-typed);
    anything else is a :class:`~symverify.errors.CompileError` saying which keys it has. A module
    with forward or state-dict hooks (on it, a submodule, or global), a non-polynomial submodule
    (an activation or a norm, named as ``gated_from_zoology`` names them) or active dropout is
    refused: none of them shows in the weights, which are all that is read.

    ``form``: ``"single"`` (one paper layer per zoology layer, else CompileError), ``"pair"`` (two
    layers per zoology layer on inner width 2d, always possible) or ``"auto"`` (single if possible).

    >>> z = ZoologyBaseConv(1, 2)
    >>> m = from_zoology(z)
    >>> m.signature
    (2, 1, 1, 2, 1)
    """
    mods = _layers_of(modules)
    d = mods[0].d_model
    # plain values: a str or int subclass could answer the checks below by its own ==, < or * otherwise
    # than the value it stores; an integer (an int subclass, a numpy integer) is read by its value
    form = plain_str(form)
    given = mods[0].l_max if seq_len is None else seq_len
    if form not in ("auto", "single", "pair"):
        raise CompileError(f"form: expected 'auto', 'single' or 'pair', found {form!r}")
    n = as_index(given)  # type: ignore[assignment]
    if n is None or n < 1:
        raise ShapeError(f"seq_len: expected a positive int, found {safe_repr(given, 40)}")
    limits.check(n * d, "MAX_CELLS", lambda: f"from_zoology: the state N·d = {n}·{d}")  # before the filters are read
    read = []
    for i, m in enumerate(mods):
        if m.d_model != d:
            raise ShapeError(f"layer {i}: d_model = {m.d_model}, but layer 0 has {d}")
        read.append(_read(m, i, n))
    singles = [_single(*r) for r in read] if form != "pair" else [None]
    if form != "pair" and all(s is not None for s in singles):
        one = [Layer(*s, Mode.CAUSAL) for s in singles if s is not None]
        return Model(n, d, n, d, tuple(one), "from_zoology")
    if form == "single":
        bad = [i for i, s in enumerate(singles) if s is None]
        raise CompileError(
            f"from_zoology(form='single'): layers {bad} have a column with k ≠ 0, A ≠ 0 and not (A = w·e_q, c = 0), "
            "so (u·A + c) ⊙ (k ⊛ u + u) + u is not one paper layer; use form='pair'"
        )
    limits.check(n * 2 * d, "MAX_CELLS", lambda: f"from_zoology (pair form): the state N·2d = {n}·{2 * d}")
    return Model(n, d, n, 2 * d, tuple(ly for r in read for ly in _pair(*r)), "from_zoology")
