"""zoology's ``Hyena`` and ``H3`` mixers, read exactly into gated-convolution weights.

:func:`gated_weights_from_zoology` takes a module shaped like ``zoology/mixers/hyena.py``'s
``Hyena`` (attributes ``in_proj``, ``short_filter``, ``filter_fn``, ``out_proj``) or
``zoology/mixers/h3/h3.py``'s ``H3`` (``q_proj``, ``k_proj``, ``v_proj``, ``ssm_k_kernel``,
``ssm_k_D``, ``kernel``, ``D``, ``output_linear``), duck-typed, materialises its filters for the
sequence length asked (Hyena: ``filter_fn.filter(l)``; H3: the two SSM kernels called with
``L = min(l, l_max)``), and returns :class:`~symverify.library_gated.GatedConvWeights` whose every
entry is the module's float value as an exact rational (``Fraction(float)``: floats are dyadic, so
nothing is rounded). The forms followed are stated in :mod:`symverify.library_gated`.

Only what the forward pass applies to the input has to be polynomial: the implicit filter's MLP
(sine activations, exponential modulation, optional normalisation) and the SSM kernels' ``exp``
act on parameters and are materialised. Modules whose forward applies a non-polynomial operation
to the input (softmax attention, exponential feature maps, layer normalisation, Mamba's
data-dependent selection, GELU/SiLU activations) are refused with a :class:`CompileError` naming
the operation, as are variants outside the forms (several heads or blocks, bidirectional filters,
H3 with ``head_dim > 1``, active dropout).

:class:`ZoologyHyena` and :class:`ZoologyH3` are local torch forms with the same attribute names and
forward passes (an implicit sine-MLP filter with exponential modulation; a shift SSM and a real
diagonal SSM), for tests and examples without the zoology repository.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, cast

from symverify.errors import CompileError
from symverify.executors.inputs import exact_weights, refuse_hooks
from symverify.ir import limits
from symverify.kernel.engines._torch import require_torch
from symverify.library_gated import GatedConvWeights, gated_conv_weights

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - torch is a dependency; this keeps the install hint
    require_torch()

__all__ = ["ZoologyHyena", "ZoologyH3", "gated_weights_from_zoology", "gated_kind", "NON_POLYNOMIAL"]

#: Type-name fragments of modules whose forward is not polynomial in the input, and the operation.
NON_POLYNOMIAL: tuple[tuple[str, str], ...] = (
    ("mamba", "data-dependent selection (softplus(Δ(u)) and exp(Δ·A) depend on the input)"),
    ("selective", "data-dependent selection (softplus(Δ(u)) and exp(Δ·A) depend on the input)"),
    ("based", "an exponential (Taylor) feature map with a normalising division"),
    ("attention", "softmax"),
    ("mha", "softmax"),
    ("rwkv", "exp (data-dependent decay and a normalising division)"),
    ("gla", "data-dependent gating (logsigmoid, exp)"),
    ("deltanet", "normalisation (L2-normalised keys) and data-dependent β"),
    ("layernorm", "normalisation (LayerNorm)"),
    ("rmsnorm", "normalisation (RMSNorm)"),
    ("softmax", "softmax"),
    ("gelu", "GELU"),
    ("silu", "SiLU"),
    ("relu", "ReLU"),  # ReLU, LeakyReLU, PReLU, RReLU, ReLU6
    ("tanh", "tanh"),  # Tanh, Hardtanh, Tanhshrink
    ("sigmoid", "a sigmoid"),  # Sigmoid, Hardsigmoid, LogSigmoid
    ("softplus", "softplus"),
    ("softsign", "softsign"),
    ("hardswish", "hard swish"),
    ("mish", "Mish"),
    ("selu", "SELU"),
    ("celu", "CELU"),
    ("threshold", "a threshold"),
)


def _exact(t: Any, where: str) -> list[Any]:
    """A tensor's values as nested lists of exact Fractions (finite real floats only)."""
    if not isinstance(t, torch.Tensor):
        raise CompileError(f"from zoology: {where}: expected a tensor, found {type(t).__name__}")
    if t.is_complex():
        raise CompileError(f"from zoology: {where}: expected real weights, found dtype {t.dtype} (reading it as real "
                           "would drop the imaginary part)")
    vals = exact_weights(t, f"from zoology: {where}").tolist()  # no meta tensor, no int rounded in float64

    def conv(x: Any, path: str) -> Any:
        if isinstance(x, list):
            return [conv(v, f"{path}[{i}]") for i, v in enumerate(x)]
        if not math.isfinite(x):
            raise CompileError(f"from zoology: {path}: expected a finite number, found {x}")
        return Fraction(x)

    return conv(vals, where)  # type: ignore[no-any-return]


def _vector(t: Any, n: int, where: str) -> list[Any]:
    """A 1-D tensor of n entries, exactly (a bias or skip of another shape named as itself, not as the
    gated-convolution field it becomes)."""
    if isinstance(t, torch.Tensor) and tuple(t.shape) != (n,):
        raise CompileError(f"from zoology: {where}: expected shape ({n},), found {tuple(t.shape)}")
    return _exact(t, where)


def _get(obj: Any, path: str, where: str) -> Any:
    """``obj.a.b`` for ``path = "a.b"``, a missing attribute being a CompileError naming it."""
    for name in path.split("."):
        if not hasattr(obj, name):
            raise CompileError(f"from zoology: {where}: expected an attribute {path!r} (the form followed), "
                               f"found none on {type(obj).__name__}")
        obj = getattr(obj, name)
    return obj


def _materialise(where: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a module's filter or kernel under ``torch.no_grad()``; whatever it raises (a module of
    another shape: no such method, other arguments) is a CompileError naming the call."""
    try:
        with torch.no_grad():
            return fn(*args, **kwargs)
    except MemoryError:
        raise
    except Exception as e:  # any failure of foreign code is reported, with its type
        raise CompileError(f"from zoology: {where} raised {type(e).__name__}: {e}") from e


def _length(v: Any, what: str, none_ok: bool) -> int | None:
    if v is None and none_ok:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise CompileError(f"from zoology: {what}: expected a positive int{' or None' if none_ok else ''}, found {v!r}")
    return v


def _refuse_nonpolynomial(module: Any, skip: tuple[str, ...]) -> None:
    """Raise naming the first non-polynomial submodule outside ``skip`` (the materialised filters)."""
    for name, sub in module.named_modules():
        if any(name == s or name.startswith(s + ".") for s in skip):
            continue
        tname = type(sub).__name__.lower()
        for frag, op in NON_POLYNOMIAL:
            if frag in tname:
                where = f"submodule {name!r} ({type(sub).__name__})" if name else type(sub).__name__
                raise CompileError(f"from zoology: {where} applies {op} to its input: not polynomial, so no circuit "
                                   f"or BaseConv computes it exactly")


def gated_kind(module: Any) -> str:
    """``"hyena"`` or ``"h3"`` for a module of either shape.

    Raises:
        CompileError: any other object; the message names the non-polynomial operation when the
            module is a known mixer that applies one (softmax, selection, …).
    """
    if all(hasattr(module, a) for a in ("in_proj", "short_filter", "filter_fn", "out_proj")):
        return "hyena"
    if all(hasattr(module, a) for a in ("q_proj", "k_proj", "v_proj", "ssm_k_kernel", "kernel", "output_linear")):
        return "h3"
    if hasattr(module, "named_modules"):
        _refuse_nonpolynomial(module, ())
    raise CompileError(f"from zoology: expected a Hyena module (in_proj, short_filter, filter_fn, out_proj) or an H3 "
                       f"module (q_proj, k_proj, v_proj, ssm_k_kernel, kernel, output_linear), found {type(module).__name__}")


_DROPOUTS = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
"""Every torch dropout (``Dropout1d`` and the alpha dropouts are not subclasses of ``nn.Dropout``)."""


def _dropout_active(module: Any) -> bool:
    return any(isinstance(m, _DROPOUTS) and m.p > 0 and m.training for m in module.modules())


def _linear(lin: Any, d_in: int, d_out: int, where: str) -> tuple[list[list[Any]], list[Any]]:
    """``u·W + b`` of an ``nn.Linear`` (``W = weight.T``), exactly; a missing bias is 0."""
    w = getattr(lin, "weight", None)
    if not isinstance(w, torch.Tensor) or tuple(w.shape) != (d_out, d_in):
        raise CompileError(f"from zoology: {where}.weight: expected shape ({d_out}, {d_in}), found "
                           f"{tuple(w.shape) if isinstance(w, torch.Tensor) else None if w is None else type(w).__name__}")
    W = _exact(w, f"{where}.weight")
    bias = getattr(lin, "bias", None)
    b = _vector(bias, d_out, f"{where}.bias") if bias is not None else [0] * d_out
    return [[W[c][r] for c in range(d_out)] for r in range(d_in)], b


def _d_model(module: Any) -> int:
    d = getattr(module, "d_model", None)
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise CompileError(f"from zoology: {type(module).__name__}.d_model: expected a positive int, found {d!r}")
    return d


def _hyena(module: Any, N: int) -> GatedConvWeights:
    d = _d_model(module)
    where = type(module).__name__
    for attr, want in (("num_heads", 1), ("num_blocks", 1)):
        if getattr(module, attr, 1) != want:
            raise CompileError(f"from zoology: {where}.{attr}: expected {want} (the form followed), found {getattr(module, attr)}")
    if getattr(module, "bidirectional", False):
        raise CompileError(f"from zoology: {where}.bidirectional: expected False (a bidirectional filter is not causal)")
    l_max = _length(getattr(module, "l_max", N), f"{where}.l_max", False)
    assert l_max is not None
    if N > l_max:
        raise CompileError(f"from zoology: sequence length {N} exceeds {where}.l_max = {l_max}")
    W_in, b_in = _linear(module.in_proj, d, 3 * d, "in_proj")
    conv = _get(module, "short_filter", where)
    cw = _get(conv, "weight", where + ".short_filter")
    if not isinstance(cw, torch.Tensor) or cw.dim() != 3:
        raise CompileError(f"from zoology: short_filter.weight: expected a tensor of shape ({3 * d}, 1, K), found "
                           f"{tuple(cw.shape) if isinstance(cw, torch.Tensor) else type(cw).__name__}")
    K = int(cw.shape[-1])
    if tuple(conv.weight.shape) != (3 * d, 1, K) or getattr(conv, "groups", 3 * d) != 3 * d:
        raise CompileError(f"from zoology: short_filter: expected a depthwise Conv1d of weight shape ({3 * d}, 1, K), "
                           f"found {tuple(conv.weight.shape)} with groups={getattr(conv, 'groups', None)}")
    pad = getattr(conv, "padding", (K - 1,))
    if (tuple(pad) if isinstance(pad, (tuple, list)) else (pad,)) != (K - 1,):
        raise CompileError(f"from zoology: short_filter.padding: expected {K - 1} (causal after truncation), found {conv.padding}")
    plain: tuple[tuple[str, object], ...] = (("stride", (1,)), ("dilation", (1,)), ("padding_mode", "zeros"))
    for name, expect in plain:
        got = getattr(conv, name, expect)
        if (tuple(got) if isinstance(got, (tuple, list)) else got) != expect:
            raise CompileError(f"from zoology: short_filter.{name}: expected {expect!r} (the form followed), found {got!r}")
    sw = _exact(conv.weight, "short_filter.weight")
    short = [[sw[c][0][K - 1 - k] for k in range(min(K, N))] for c in range(3 * d)]
    cb = getattr(conv, "bias", None)
    sb = _vector(cb, 3 * d, "short_filter.bias") if cb is not None else [0] * (3 * d)
    filter_fn = _get(module, "filter_fn", where)
    k = _materialise(f"filter_fn.filter({N})", _get(filter_fn, "filter", where + ".filter_fn"), N)
    k = k[0] if isinstance(k, tuple) else k
    if not isinstance(k, torch.Tensor) or tuple(k.shape) != (1, N, d):
        raise CompileError(f"from zoology: filter_fn.filter({N}): expected shape (1, {N}, {d}), found "
                           f"{tuple(k.shape) if isinstance(k, torch.Tensor) else type(k).__name__}")
    taps = _exact(k[0].transpose(0, 1), "filter_fn.filter")
    D = _skip(filter_fn, d, where)
    W_out, b_out = _linear(module.out_proj, d, d, "out_proj")
    return gated_conv_weights(N, d, 2, short_len=min(K, N), W_in=W_in, b_in=b_in, short=short, short_bias=sb,
                              long=[taps], long_skip=[D], W_out=W_out, b_out=b_out, kind="hyena")


def _skip(filter_fn: Any, d: int, where: str) -> list[Any]:
    """The D skip of Hyena's long convolution: ``filter_fn.bias``, exactly, or 0 when ``filter_fn.use_bias``
    is false. zoology's ``Filter.forward`` adds ``bias if self.use_bias else 0 * bias``, reading the
    bias either way: ``0 · bias`` is 0 for a finite bias, but NaN for a NaN or infinite one, which
    turns the whole output NaN where a model would compute finite values. So the bias is read (a
    missing one is refused, as zoology's forward fails on it) and a non-finite entry refused whatever
    ``use_bias`` says; without ``use_bias`` the skip is then exactly 0."""
    bias = _get(filter_fn, "bias", where + ".filter_fn")
    if getattr(filter_fn, "use_bias", True):
        return _vector(bias, d, "filter_fn.bias")
    try:
        _vector(bias, d, "filter_fn.bias")
    except CompileError as e:
        raise CompileError(f"{e} (filter_fn.use_bias is False, but zoology's forward still adds 0 · bias, which is NaN "
                           "for a non-finite bias: no model computes that)") from None
    return [0] * d


def _kernel(mod: Any, L: int, H: int, where: str) -> list[list[Any]]:
    out = _materialise(f"{where}(L={L})", mod, L=L, state=None, rate=1.0)
    k = out[0] if isinstance(out, tuple) else out
    if not isinstance(k, torch.Tensor) or tuple(k.shape) != (1, H, L):
        raise CompileError(f"from zoology: {where}(L={L}): expected a kernel of shape (1, {H}, {L}), found "
                           f"{tuple(k.shape) if isinstance(k, torch.Tensor) else type(k).__name__}")
    return _exact(k[0], where)  # type: ignore[no-any-return]


def _h3(module: Any, N: int) -> GatedConvWeights:
    from symverify.library_gated import h3_weights

    d = _d_model(module)
    where = type(module).__name__
    if getattr(module, "head_dim", 1) != 1:
        raise CompileError(f"from zoology: {where}.head_dim: expected 1 (the form followed), found {module.head_dim}")
    l_max = _length(getattr(module, "L", None), f"{where}.L (l_max)", True)
    Lk = N if l_max is None else min(N, l_max)
    Wq, bq = _linear(module.q_proj, d, d, "q_proj")
    Wk, bk = _linear(module.k_proj, d, d, "k_proj")
    Wv, bv = _linear(module.v_proj, d, d, "v_proj")
    hs = _kernel(_get(module, "ssm_k_kernel", where), Lk, d, "ssm_k_kernel")
    h1 = _kernel(_get(module, "kernel", where), Lk, d, "kernel")
    Ds = _vector(_get(module, "ssm_k_D", where), d, "ssm_k_D")
    D = _vector(_get(module, "D", where), d, "D")
    W_out, b_out = _linear(module.output_linear, d, d, "output_linear")
    return h3_weights(N, d, W_q=Wq, b_q=bq, W_k=Wk, b_k=bk, W_v=Wv, b_v=bv, shift_kernel=hs, shift_D=Ds, ssm_kernel=h1,
                      D=D, W_out=W_out, b_out=b_out)


def gated_weights_from_zoology(module: Any, seq_len: int) -> GatedConvWeights:
    """The exact :class:`~symverify.library_gated.GatedConvWeights` of a zoology ``Hyena`` or ``H3``
    module (duck-typed; module docstring) for sequence length ``seq_len``.

    Raises:
        CompileError: not a Hyena/H3 shape (naming the non-polynomial operation of a known mixer),
            a variant outside the forms followed, active dropout, forward or state-dict hooks (they
            may change what the module computes), a non-finite weight (Hyena's ``filter_fn.bias``
            also with ``use_bias`` off: zoology still adds ``0 · bias``, NaN for it), a missing
            attribute or a weight of another shape (naming it), a filter or kernel call that raises
            or returns something else than a tensor of the shape expected, ``l_max`` not a positive
            int (H3: or None), or ``seq_len`` not a positive int (or beyond Hyena's ``l_max``).
        LimitError: a state ``seq_len·3·d`` over :data:`~symverify.ir.limits.MAX_CELLS`, before any
            filter is materialised.
    """
    if not isinstance(seq_len, int) or isinstance(seq_len, bool) or seq_len < 1:
        raise CompileError(f"from zoology: seq_len must be a positive int, found {seq_len!r}")
    kind = gated_kind(module)
    d = _d_model(module)
    limits.check(seq_len * 3 * d, "MAX_CELLS", lambda: f"from zoology: {kind}(N={seq_len}, d={d}) state N·3·d")  # before any filter is materialised
    _refuse_nonpolynomial(module, ("filter_fn", "ssm_k_kernel", "kernel"))
    refuse_hooks(module, "from zoology", ("filter_fn", "ssm_k_kernel", "kernel"))  # a hook's change to the forward pass is in no weight
    if _dropout_active(module):
        raise CompileError(f"from zoology: {type(module).__name__} has active dropout (training mode, p > 0): random, "
                           "not a function of the input; call .eval() first")
    return _hyena(module, seq_len) if kind == "hyena" else _h3(module, seq_len)


# ---- local forms --------------------------------------------------------------------------------


def _fftconv(u: Any, k: Any, D: Any) -> Any:
    """``fftconv_ref(u, k, D, None, gelu=False)``: causal convolution of ``u (b, d, l)`` with ``k (d, l)``
    through an FFT of size 2l, plus ``u·D``."""
    seqlen = u.shape[-1]
    n = 2 * seqlen
    k_f = torch.fft.rfft(k, n=n) / n
    u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=n)
    y = torch.fft.irfft(u_f * k_f, n=n, norm="forward")[..., :seqlen]
    return (y + u * D.unsqueeze(-1)).to(dtype=u.dtype)


class _Sin(nn.Module):
    def __init__(self, dim: int, w: float = 1.0) -> None:
        super().__init__()
        self.freq = nn.Parameter(w * torch.ones(1, dim))

    def forward(self, x: Any) -> Any:
        return torch.sin(self.freq * x)


class _ImplicitFilter(nn.Module):
    """Hyena's implicit long filter: positional features ``(t, cos, sin)`` → Linear → sin → Linear →
    sin → Linear, times the exponential modulation ``exp(−t·|δ_c|)``; ``bias`` is the D skip."""

    def __init__(self, d_model: int, l_max: int, order: int = 16, emb_dim: int = 3) -> None:
        super().__init__()
        self.d_model, self.use_bias = d_model, True
        self.bias = nn.Parameter(torch.randn(d_model))
        t = torch.linspace(0, 1, l_max)[None, :, None]
        bands = (emb_dim - 1) // 2
        w = 2 * math.pi * torch.linspace(0, l_max - 1, l_max)[None, :, None] / l_max
        f = torch.linspace(1e-4, bands - 1, bands)[None, None]
        z = torch.exp(-1j * f * w)
        self.register_buffer("z", torch.cat([t, z.real, z.imag], dim=-1))
        self.register_buffer("t", t)
        act = _Sin(order)
        self.implicit_filter = nn.Sequential(nn.Linear(emb_dim, order), act, nn.Linear(order, order), act,
                                             nn.Linear(order, d_model, bias=False))
        self.deltas = nn.Parameter(torch.linspace(math.log(1e-2) / 1.5, math.log(1e-2) / 0.3, d_model)[None, None])

    def filter(self, L: int, *args: Any, **kwargs: Any) -> Any:
        z: Any = self.z
        t: Any = self.t
        h = self.implicit_filter(z[:, :L])
        return h * torch.exp(-t[:, :L] * self.deltas.abs())


def _module_sizes(where: str, **sizes: object) -> None:
    """Refuse a size that is not a positive int (:class:`ShapeError`) and a module whose largest
    weight or buffer (``d_model × max(3·d_model, l_max)`` entries) is over ``MAX_CELLS``
    (:class:`~symverify.errors.LimitError`), before torch allocates anything."""
    from symverify.errors import ShapeError

    for name, v in sizes.items():
        if v is None and name == "l_max":
            continue
        if type(v) is not int or v < 1:
            raise ShapeError(f"{where}: {name}: expected a positive int, found {type(v).__name__} {v!r:.40}")
    d, length = cast(int, sizes["d_model"]), cast("int | None", sizes.get("l_max")) or 1
    limits.check(d * max(3 * d, length), "MAX_CELLS", lambda: f"{where}(d_model={d}, l_max={length}) weights")


class ZoologyHyena(nn.Module):
    """A local form of zoology's ``Hyena`` (``num_heads = num_blocks = 1``, not bidirectional):
    the same attributes and forward pass (``in_proj`` → depthwise causal ``short_filter`` → split
    ``x1, x2, v`` → ``v ⊙ x1`` → long FFT convolution with the implicit filter plus ``D`` skip →
    ``⊙ x2`` → ``out_proj``)."""

    def __init__(self, d_model: int, l_max: int, filter_order: int = 16, short_filter_order: int = 3) -> None:
        _module_sizes("ZoologyHyena", d_model=d_model, l_max=l_max, filter_order=filter_order,
                      short_filter_order=short_filter_order)
        super().__init__()
        self.d_model, self.l_max, self.short_filter_order = d_model, l_max, short_filter_order
        self.num_heads, self.num_blocks, self.bidirectional = 1, 1, False
        self.dropout = nn.Dropout(0.0)
        self.in_proj = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.short_filter = nn.Conv1d(3 * d_model, 3 * d_model, kernel_size=short_filter_order, groups=3 * d_model,
                                      padding=short_filter_order - 1)
        self.filter_fn = _ImplicitFilter(d_model, l_max, filter_order)

    def forward(self, u: Any) -> Any:
        L = u.size(1)
        x = self.in_proj(u).transpose(1, 2)
        uc = self.short_filter(x)[..., :L]
        x1, x2, v = uc.split(self.d_model, dim=1)
        v = self.dropout(v * x1)
        k = self.filter_fn.filter(L)[0].transpose(0, 1)
        bias = self.filter_fn.bias
        v = _fftconv(v, k, bias if self.filter_fn.use_bias else 0 * bias)  # zoology's Filter.forward: no skip without use_bias
        return self.out_proj((v * x2).transpose(1, 2))


class _ShiftKernel(nn.Module):
    """The shift SSM's kernel: ``x_t = S·x_{t−1} + e_0·u_t``, ``y_t = C·x_t`` gives ``k[j] = C[j]``
    for ``j < d_state`` (0 after)."""

    def __init__(self, H: int, d_state: int) -> None:
        super().__init__()
        self.C = nn.Parameter(torch.randn(H, d_state) / d_state)

    def forward(self, L: int, state: Any = None, rate: float = 1.0) -> Any:
        H, n = self.C.shape
        k = torch.zeros(1, H, L, dtype=self.C.dtype, device=self.C.device)
        m = min(n, L)
        k[0, :, :m] = self.C[:, :m]
        return k, None


class _DiagKernel(nn.Module):
    """A real diagonal SSM's kernel ``k[j] = Σ_n C_n·B_n·exp(Δ·A_n)^j·Δ`` (``A_n < 0``)."""

    def __init__(self, H: int, d_state: int) -> None:
        super().__init__()
        self.log_dt = nn.Parameter(torch.log(torch.full((H, 1), 0.1)))
        self.log_A = nn.Parameter(torch.log(0.5 + torch.arange(d_state, dtype=torch.float32)).repeat(H, 1))
        self.B = nn.Parameter(torch.ones(H, d_state))
        self.C = nn.Parameter(torch.randn(H, d_state) / d_state)

    def forward(self, L: int, state: Any = None, rate: float = 1.0) -> Any:
        dt = torch.exp(self.log_dt)
        dtA = -dt * torch.exp(self.log_A)
        j = torch.arange(L, dtype=dtA.dtype, device=dtA.device)
        k = torch.einsum("hn,hnl->hl", self.C * self.B * dt, torch.exp(dtA[..., None] * j))
        return k[None], None


class ZoologyH3(nn.Module):
    """A local form of zoology's ``H3`` (``head_dim = 1``): ``q, k, v`` projections, ``k`` through the
    shift SSM (FFT of size ``L_kernel + L``) plus ``ssm_k_D·k``, ``kv = k ⊙ v`` through the diagonal
    SSM plus ``D·kv``, times ``q``, then ``output_linear``."""

    def __init__(self, d_model: int, d_state: int = 8, l_max: int | None = None) -> None:
        _module_sizes("ZoologyH3", d_model=d_model, d_state=d_state, l_max=l_max)
        super().__init__()
        self.d_model, self.H, self.N, self.L, self.head_dim = d_model, d_model, d_state, l_max, 1
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.ssm_k_kernel = _ShiftKernel(d_model, d_state)
        self.ssm_k_D = nn.Parameter(torch.randn(d_model))
        self.kernel = _DiagKernel(d_model, d_state)
        self.D = nn.Parameter(torch.randn(d_model))
        self.output_linear = nn.Linear(d_model, d_model)

    def forward(self, u: Any) -> Any:
        L = u.size(-2)
        Lk = L if self.L is None else min(L, self.L)
        kern = self.kernel(L=Lk)[0][0]
        kshift = self.ssm_k_kernel(L=Lk)[0][0]
        q, k, v = (p(u).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        n = Lk + L
        k = torch.fft.irfft(torch.fft.rfft(kshift, n=n) * torch.fft.rfft(k, n=n), n=n)[..., :L] + self.ssm_k_D[:, None] * k
        kv = k * v
        y = torch.fft.irfft(torch.fft.rfft(kv, n=n) / n * torch.fft.rfft(kern, n=n), n=n, norm="forward")[..., :L]
        y = (y + kv * self.D[:, None]) * q
        return self.output_linear(y.transpose(1, 2))
