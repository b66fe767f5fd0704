"""The float error model and :func:`symverify.executors.numeric_check` (a cross-check, never a proof).

**Model.** Every float operation obeys ``fl(a ∘ b) = (a ∘ b)(1 + δ)``, ``|δ| ≤ u = 2^-t`` (t = 53,
24, 8 significand bits for float64, float32, bfloat16); ``γ_k = k·u/(1 − k·u)``. The bound is a
*running error bound* (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.3): it is
evaluated next to the computation, from the values actually computed, entry by entry. For a state
``x̂`` with error bound ``E ≥ |x̂ − x|`` one layer ``(x·W + b1) ⊙ (h ⊛ x + b2)`` gives

    E_P = E·|W| + (γ_{k+1} + ω)·(|x̂|·|W| + |b1|) + k·η                   (k terms per dot product)
    E_C = |h| ⊛ E + (γ_{m+1} + ω)·(|h| ⊛ |x̂| + |b2|) + m·η                (m = #lags or N': sparse or direct)
    E_C = |h| ⊛ E + c(n)·u_w·‖x̂_q‖₂‖h_q‖₂ + 2u·|Ĉ| + ω·(|h| ⊛ |x̂| + |b2|) + U_n + η   (FFT of size n)
    E'  = |P̂|·E_C + |Ĉ|·E_P + E_P·E_C + u·|P̂ ⊙ Ĉ| + η + F

with ``ω = u`` when a weight is not exactly a number of the dtype (else 0), ``c(n) = 21·log2(n) + 3``
(n a power of two; :func:`fft_constant` for other sizes) and ``u_w`` the unit roundoff of the
FFT's working precision (float64 for float64, float32 otherwise). The FFT term is the normwise bound of the standard FFT analysis
(Higham Thm 24.2, ``η ≤ u + γ_4(√2 + u)`` per stage, accurate twiddles assumed), applied to two
forward transforms, the product and the inverse through Parseval; ``‖·‖∞ ≤ ‖·‖₂``.

**Range.** The model ``(1 + δ)`` holds only inside the dtype's range. Below it a product is
rounded to a subnormal or flushed to zero: ``fl(a·b) = a·b·(1 + δ) + η`` with ``|η| ≤ η_t``, the
smallest normal number of the dtype (sums of floats are exact there). Each product of a dot
product, a shift or a Toeplitz term, and the gate, adds ``η``; an FFT adds ``U_n + η`` (``η``: the
result's rounding to the dtype),
``U_n = 8·(log2(n) + 1)·n·η_w·(1 + ‖x̂_q‖₁ + ‖h_q‖₁)`` (at most ``4η_w`` per butterfly product,
``log2(n)`` stages of norm ``√2``, the product with ``|H| ≤ ‖h‖₁`` and ``|X| ≤ ‖x‖₁``, with a factor 2 to
spare); a weight that is not exact in the dtype adds ``η·(1 + Σ(|x̂| + E))`` per branch (rounded to
nearest, first to float64 and then to the dtype, a weight is off by at most ``u_64|w| + u|ŵ|``,
covered by ``ω``, plus ``σ_64/2 + σ/2 ≤ η`` below the range, ``σ`` the smallest subnormal; the
exact state is at most ``|x̂| + E``). A weight may round to 0 (``|w| < 2^-1075``, or below half
the dtype's smallest subnormal): the executor then skips what it multiplies, and a branch whose
weights all rounded to 0 is computed as identically 0; its bound is that of a branch that computed
0, ``E_P`` or ``E_C`` (the weight term above), and ``E' = |P̂|·E_C + |Ĉ|·E_P + E_P·E_C``: only a
layer whose exact weights are 0 gets ``E' = 0`` for an identically zero output. The bound itself is
computed in float64, where a term below ``2^-1074`` is lost: ``F = (2·(k + m) + 16)·2^-1074`` covers
the operations of one entry's bound. Above the range, a float computation whose output is infinite
or NaN has no bound: :func:`assess` raises ``OverflowError`` (``numeric_check``: an ``IRError``).
Gradual underflow is assumed: on a device that flushes subnormal numbers to zero (inputs read as 0,
e.g. ``torch.set_flush_denormal(True)``) :func:`assess` raises ``IRError``
(:func:`check_gradual_underflow`). oneDNN's bfloat16 matrix products on CPUs with AVX512-BF16 or
AMX (``VDPBF16PS``, ``TDPBF16PS``) flush whatever the flush mode, for large enough products only:
a result over the bound there is re-run with oneDNN off, and when that run is within the bound
:func:`assess` raises ``IRError`` (the flush, not the executor, broke the bound;
:func:`gemm_flushes_subnormals`).

Float32 matrix products are assumed to round in float32: under
``torch.set_float32_matmul_precision("high"|"medium")`` (TF32 or bfloat16 inside) :func:`assess`
raises ``IRError`` (:func:`check_matmul_precision`).

**Growth with depth.** Since ``E' ≈ |P̂|·E_C + |Ĉ|·E_P``, the relative error of a layer's output
is about the sum of the relative errors of its two branches, each at least the input's: the
relative error **doubles per layer** in the worst case, plus the roundings of that layer. After L
layers it is about ``2^L·r_0 + (2^L − 1)·(γ_P + γ_C + 2ω + u)``. These relative errors are relative
to the magnitudes summed (``|x̂|·|W| + |b1|``, ``|h| ⊛ |x̂| + |b2|``), not to the result: cancellation
makes the error relative to the result unbounded (``2^60 + 1 − 2^60`` in float64: relative error 1
after one layer on exact inputs), which the absolute bound ``E'`` still covers.

**Exactness.** When the inputs and every weight are integers and exact in the dtype, an entry
whose absolute computation (``|x̂|·|W| + |b1|``, which bounds every partial sum) is below ``2^t``
is computed exactly, and gets no rounding term (sparse and direct paths; an FFT always rounds).
Compiled models with integer weights on small integer inputs thus have bound 0 in float64.

**Circuits**, gate by gate on computed values: linear ``E = |α|E_a + |β|E_b + (γ_2 + ω)(|α||â| +
|β||b̂|) + 2η + F`` (plus ``η(|â| + E_a + |b̂| + E_b)`` for a coefficient not exact in the dtype), product
``E = |â|E_b + |b̂|E_a + E_a E_b + u|â b̂| + η + F``, constant ``E = ω|c| + η`` (rounding and
underflow terms only where a value is not exact, see *Exactness*; ``F = 8·2^-1074``).

The bounds are computed in float64 and compared with a relative slack of 2^-30; a measured error,
and each input's rounding error (the initial ``E``), is rounded up to a float (a nonzero error
never reads 0, even below float64's range). A measured error above its bound means an
executor bug. A bound is ``inf`` (vacuous) where ``(k+1)·u ≥ 1``, e.g. a bfloat16 sum of 256 or more
terms (use float32 there), and where an intermediate value left the range.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from symverify.errors import IRError, NumericMismatchError
from symverify.executors.circuit_plan import CircuitPlan
from symverify.executors.torch_float import (
    FloatArithmetic,
    _convolve,
    _project,
    circuit_values,
    combine,
    embed,
    read_outputs,
)
from symverify.kernel.engines._torch import dtype_name, require_torch, significand_bits, unit_roundoff
from symverify.kernel.engines.numbers import FloatNumbers
from symverify.kernel.engines.plan import Bias, LayerPlan, ModelPlan, sparse_tap_limit
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.semantics import layer as loop
from symverify.kernel.semantics.layer import Shape

if TYPE_CHECKING:
    import torch

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["NumericCheck"]

SLACK = 1 + 2.0**-30
_FLUSH = 2.0**-1074  # the smallest float64 subnormal: a bound term below it is lost
_ABS_DIRECT_MAX_N = 1024


@dataclass(frozen=True)
class NumericCheck:
    """Measured float error against exact evaluation, and the running error bound.

    ``max_abs_err`` and ``max_rel_err`` (= max_abs_err / max|exact|, divided by the exact
    max|exact|: an output below float64's range is not 0 there; inf only for a nonzero error of
    outputs that are all exactly 0, or a ratio beyond float64) are over all points and entries;
    ``max_abs_exact`` is max|exact| rounded to float64; ``tolerance`` is the largest per-point
    bound; ``ok`` holds when every point's error is within its own bound.
    """

    backend: str
    dtype: str
    device: str
    path: str
    points: int
    max_abs_err: float
    max_rel_err: float
    tolerance: float
    max_abs_exact: float
    ok: bool

    def __str__(self) -> str:
        verdict = "within" if self.ok else "EXCEEDS"
        return (
            f"numeric check ({self.backend} {self.dtype} on {self.device}, path={self.path}, {self.points} points): "
            f"max abs error {self.max_abs_err:.3g} (relative {self.max_rel_err:.3g}) {verdict} the bound {self.tolerance:.3g}"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def raise_if_failed(self) -> NumericCheck:
        """Raise :class:`NumericMismatchError` when some point exceeds its bound."""
        if not self.ok:
            raise NumericMismatchError(str(self))
        return self


def _eta(dtype: Any) -> float:
    """``η_t``: a product's absolute error below the dtype's range (the smallest normal number)."""
    return float(require_torch().finfo(dtype).tiny)


def _gamma(k: int, u: float) -> float:
    return k * u / (1 - k * u) if k * u < 1 else math.inf


def fft_constant(n_fft: int) -> float:
    """``c(n) = 21·log2(n) + 3`` for a power of two: 3 transforms at ``log2(n)·η``, ``η ≤ 6.7u``,
    plus the product (2√2 u). Other sizes may run as Bluestein's algorithm (three transforms of a
    power of two ``m ≥ 2n − 1`` and chirp products), so they get ``3·c(m)``."""
    if n_fft & (n_fft - 1) == 0:
        return 21.0 * math.log2(max(2, n_fft)) + 3.0
    m = 1 << (2 * n_fft - 2).bit_length()
    return 3.0 * (21.0 * math.log2(m) + 3.0)


def _representable(lp: LayerPlan, dtype: Any) -> bool:
    """Are this layer's float64 weights exact in ``dtype`` (and exact rationals in float64)?"""
    if not lp.stats.exact64:
        return False
    key = str(dtype)
    if key not in lp.exact_in:
        tensors = [lp.w, lp.w_coef, lp.taps, lp.b1.value(), lp.b2.value()]
        lp.exact_in[key] = all(bool((t.to(dtype).to(t.dtype) == t).all()) for t in tensors if t is not None)
    return lp.exact_in[key]


def _abs_plan(lp: LayerPlan) -> LayerPlan:
    """The same layer with every weight replaced by its absolute value (float64, cached)."""
    if lp.abs_plan is None:
        def ab(t: Any) -> Any:
            return None if t is None else t.abs()

        lp.abs_plan = LayerPlan(
            lp.index, lp.cyclic, lp.inner_n, lp.w_kind, ab(lp.w), lp.w_idx, ab(lp.w_coef),
            Bias(lp.b1.kind, ab(lp.b1.a), ab(lp.b1.b)), lp.lags, ab(lp.taps), lp.unit,
            Bias(lp.b2.kind, ab(lp.b2.a), ab(lp.b2.b)), lp.auto_path, lp.stats,
        )
    return lp.abs_plan


def _abs_conv(ap: LayerPlan, x: Any) -> Any:
    """An upper bound on ``|h| ⊛ x`` for ``x ≥ 0``, computed without cancellation."""
    if len(ap.lags) <= sparse_tap_limit(ap.inner_n):
        return _convolve(ap, x, "sparse")
    if ap.inner_n <= _ABS_DIRECT_MAX_N:
        return _convolve(ap, x, "direct")
    y = _convolve(ap, x, "fft")
    n_fft = ap.inner_n if ap.cyclic else 2 * ap.inner_n
    slack = fft_constant(n_fft) * 2.0**-53 * x.norm(dim=-2, keepdim=True) * ap.kernel_dense().norm(dim=0)
    return y.clamp_min(0) + slack


def _layer_bound(lp: LayerPlan, ap: LayerPlan, x: Any, E: Any, parts: tuple[Any, Any], exact: Any,
                 dtype: Any, path: str, representable: bool) -> Any:
    """The running bound ``E'`` of one layer's output (see the module docstring). ``lp`` is the
    run's plan (weights rounded to ``dtype``), ``ap`` the float64 plan's magnitudes, and
    ``representable`` whether the float64 weights are numbers of ``dtype`` (:func:`_representable`
    of the float64 plan: on ``lp`` it would always hold, its weights being rounded already), which
    decides ``ω`` and the weights' underflow term."""
    torch = require_torch()
    proj, conv = parts
    if proj is None or conv is None:
        if lp.stats.exact64:  # a branch whose float64 weights are all 0 is exactly 0: so is the output
            return torch.zeros_like(E)
        # a weight may have rounded to 0 (below float64's range): the float branch is identically
        # zero, the exact one is not; bound it as a branch that computed 0 (the output is 0)
        conv = torch.zeros_like(x) if conv is None else conv
        if proj is None:  # not computed when the convolution branch is zero: the executor's own value
            proj = FloatArithmetic(path).project(lp, x, conv)
            proj = torch.zeros_like(x) if proj is None else proj.expand_as(x)
    u, big, eta = unit_roundoff(dtype), 2.0 ** significand_bits(dtype), _eta(dtype)
    omega = 0.0 if representable else u
    xa = x.double().abs()
    xe = xa + E  # bounds |x| for the exact state: a weight's absolute error multiplies it
    weight_uf = eta * (1 + xe.sum(dim=-1, keepdim=True) + xe.sum(dim=-2, keepdim=True)) if omega else 0.0
    both = torch.cat([xa, E])
    bsz = x.shape[0]
    ex = exact[:, None, None]

    def split(t: Any, bias: Any) -> tuple[Any, Any]:
        if t is None:
            zero = torch.zeros_like(E)
            return (zero if bias is None else zero + bias), zero
        a, e = t[:bsz], t[bsz:]
        return (a if bias is None else a + bias), e

    PA, EP = split(_project(ap, both), ap.b1.value())
    terms = {"zero": 0, "sparse": lp.w_idx.shape[0] if lp.w_idx is not None else 0, "dense": E.shape[-1]}[lp.w_kind]
    EP = EP + torch.where(ex & (PA < big), 0.0, (_gamma(terms + 1, u) + omega) * PA + terms * eta + weight_uf)
    kind = lp.path(path)
    m = {"none": 0, "sparse": len(lp.lags), "direct": lp.inner_n, "fft": 2 * lp.inner_n}[kind]
    CA, EC = split(_abs_conv(ap, both) if kind != "none" else None, ap.b2.value())
    if kind == "fft":
        n_fft = lp.inner_n if lp.cyclic else 2 * lp.inner_n
        work = torch.float64 if dtype == torch.float64 else torch.float32
        u_w, eta_w = unit_roundoff(work), _eta(work)
        hk = ap.kernel_dense()
        fft = fft_constant(n_fft) * u_w * x.double().norm(dim=-2, keepdim=True) * hk.norm(dim=0)
        under = 8 * (math.log2(n_fft) + 1) * n_fft * eta_w * (1 + xa.sum(dim=-2, keepdim=True) + hk.sum(dim=0)) + eta
        EC = EC + fft + 2 * u * conv.double().abs() + omega * CA + under + weight_uf
    else:
        g = {"none": 0.0, "sparse": _gamma(len(lp.lags) + 1, u), "direct": _gamma(lp.inner_n + 1, u)}[kind]
        EC = EC + torch.where(ex & (CA < big), 0.0, (g + omega) * CA + m * eta + weight_uf)
    Pa, Ca = proj.double().abs(), conv.double().abs()
    prod = Pa * Ca
    flush = (2 * (terms + m) + 16) * _FLUSH
    return (Pa * EC + Ca * EP + EP * EC + torch.where(ex & (prod < big), 0.0, u * prod + eta + flush)).expand_as(E)


class Tracked(NamedTuple):
    """A ``(B, N', d')`` state ``x`` as the executor computed it, with its running bound
    ``E ≥ |x − exact|`` entrywise (float64) and ``exact``: per point, whether every value so far
    is an integer computed without rounding (see *Exactness* above)."""

    x: Any
    E: Any
    exact: Any


@dataclass(frozen=True)
class TrackedArithmetic:
    """The float backend of :mod:`symverify.kernel.semantics.layer` with a running error bound: the
    branches and their product are :class:`~symverify.executors.torch_float.FloatArithmetic`'s
    (the executor's own arithmetic), and each product also bounds its error (:func:`_layer_bound`).
    A layer is given as its plan in the run's dtype and in float64 (for the bound)."""

    dtype: Any
    path: str = "auto"

    def prepare(self, layer: tuple[LayerPlan, LayerPlan]) -> tuple[LayerPlan, LayerPlan]:
        return layer

    def convolve(self, plan: tuple[LayerPlan, LayerPlan], st: Tracked) -> Any:
        return FloatArithmetic(self.path).convolve(plan[0], st.x)

    def project(self, plan: tuple[LayerPlan, LayerPlan], st: Tracked, conv: Any) -> Any:
        return FloatArithmetic(self.path).project(plan[0], st.x, conv)

    def combine(self, plan: tuple[LayerPlan, LayerPlan], st: Tracked, proj: Any, conv: Any) -> Tracked:
        lp, lp64 = plan
        representable = _representable(lp64, self.dtype)
        exact = st.exact & (lp.stats.integral and representable)
        E = _layer_bound(lp, _abs_plan(lp64), st.x, st.E, (proj, conv), exact, self.dtype, self.path, representable)
        x = combine(st.x, proj, conv)  # after the bound: the product reuses a branch's storage
        return Tracked(x, E, exact & (E.amax(dim=(1, 2)) == 0))

    def embed(self, u: Tracked, shape: Shape) -> Tracked:
        """``u``: the input, the bound on its rounding (``E``) and whether the exact input is
        integral (``exact``)."""
        E = embed(u.E, shape.inner_n, shape.inner_d)
        return Tracked(embed(u.x, shape.inner_n, shape.inner_d), E, (E.amax(dim=(1, 2)) == 0) & u.exact)

    def crop(self, st: Tracked, shape: Shape) -> Tracked:
        return Tracked(st.x[:, : shape.n, : shape.d].contiguous(), st.E[:, : shape.n, : shape.d], st.exact)

    def retire(self, old: Tracked, new: Tracked) -> None:
        return None


def tracked_model(plan: ModelPlan, x: Any, e0: Any, integral: bool, path: str) -> tuple[Any, Any]:
    """Run the model on ``x`` (the executor's own arithmetic) and bound each point's output error.

    ``e0 ≥ |x − u|`` entrywise (rounding of the exact input ``u``); ``integral``: ``u`` is integral.
    Returns ``(y, bounds)`` with ``bounds`` a float64 ``(B,)`` tensor.
    """
    torch = require_torch()
    layers = zip(plan.on(x.device, x.dtype), plan.on(x.device, torch.float64))
    u = Tracked(x, e0.to(device=x.device, dtype=torch.float64), integral)
    out = loop.run_model(plan.model, layers, u, TrackedArithmetic(x.dtype, path))
    bounds = out.E.amax(dim=(1, 2)) if out.E.numel() else torch.zeros(x.shape[0], dtype=torch.float64)
    return out.x, torch.nan_to_num(bounds * SLACK, nan=math.inf, posinf=math.inf)


def tracked_circuit(plan: CircuitPlan, x: Any, e0: Any, integral: Any) -> tuple[Any, Any]:
    """Run the circuit on ``x`` and bound each point's output error (``e0``, ``integral``: ``(B, n, d)``)."""
    torch = require_torch()
    c, dtype = plan.circuit, x.dtype
    u, big, eta = unit_roundoff(dtype), 2.0 ** significand_bits(dtype), _eta(dtype)
    vals = circuit_values(plan, x)
    cp = plan.on(x.device, torch.float64)
    V = vals.double().abs()
    bsz, nd = x.shape[0], c.num_inputs
    E = torch.zeros_like(V)
    integ = torch.zeros(V.shape, dtype=torch.bool, device=V.device)
    E[:nd] = e0.to(V.device).reshape(bsz, nd).T
    integ[:nd] = integral.to(V.device).reshape(bsz, nd).T
    g2 = _gamma(2, u)
    for s in cp.steps:
        dst, a, b, al, be = s.lin
        if dst.numel():
            ci, ce = (t.to(V.device) for t in s.lin_exact)
            rep = ce & (al.to(dtype).double() == al) & (be.to(dtype).double() == be)
            al_, be_ = al.abs()[:, None], be.abs()[:, None]
            t = al_ * V[a] + be_ * V[b]
            clean = (E[a] == 0) & (E[b] == 0) & integ[a] & integ[b] & (ci & rep)[:, None] & (t < big)
            off = (~rep).to(torch.float64)  # float64: a Python scalar in torch.where would make float32, where η_64 is 0
            rnd = ((g2 + u * off)[:, None] * t + (eta * off)[:, None] * (V[a] + E[a] + V[b] + E[b]) + (2 * eta + 8 * _FLUSH))
            E[dst] = al_ * E[a] + be_ * E[b] + torch.where(clean, 0.0, rnd)
            integ[dst] = integ[a] & integ[b] & ci[:, None]
        dst, a, b = s.mul
        if dst.numel():
            t = V[a] * V[b]
            clean = (E[a] == 0) & (E[b] == 0) & integ[a] & integ[b] & (t < big)
            E[dst] = V[a] * E[b] + V[b] * E[a] + E[a] * E[b] + torch.where(clean, 0.0, u * t + eta + 8 * _FLUSH)
            integ[dst] = integ[a] & integ[b]
        dst, v = s.const
        if dst.numel():
            ci, ce = (t.to(V.device) for t in s.const_exact)
            rep = ce & (v.to(dtype).double() == v)
            E[dst] = torch.where(rep, 0.0, u * v.abs() + eta)[:, None].expand(-1, bsz)
            integ[dst] = ci[:, None].expand(-1, bsz)
    y = read_outputs(c, vals, plan.outputs)
    if not len(c.outputs):
        return y, torch.zeros(bsz, dtype=torch.float64)
    bounds = E[cp.outputs].amax(dim=0)
    return y, torch.nan_to_num(bounds * SLACK, nan=math.inf, posinf=math.inf)


def _up(q: Fraction) -> float:
    """``q ≥ 0`` as a float rounded up (a nonzero error never reads 0)."""
    f = float(q)
    return math.nextafter(f, math.inf) if Fraction(f) < q else f


def _errors(approx: Any, exact: np.ndarray) -> tuple[np.ndarray, Fraction]:
    """Per-point max |approx − exact|, computed exactly (a float is a dyadic rational) and rounded
    up, and max|exact| (exact: below float64's range it is no float)."""
    a = approx.detach().to("cpu").double().numpy()
    errs = np.zeros(exact.shape[0])
    top = Fraction(0)
    for idx, y in np.ndenumerate(exact):
        diff = _up(abs(Fraction(float(a[idx])) - Fraction(y))) if math.isfinite(a[idx]) else math.inf
        errs[idx[0]] = max(float(errs[idx[0]]), diff)
        top = max(top, abs(Fraction(y)))
    return errs, top


def _relative(err: float, top: Fraction) -> float:
    """``err / top`` (0 for 0/0, inf for a nonzero error of an exact 0 or beyond float64's range):
    from the exact ``top``, so an exact output below float64's range is not read as 0."""
    if top == 0:
        return 0.0 if err == 0 else math.inf
    if not math.isfinite(err):
        return math.inf
    try:
        return float(Fraction(err) / top)
    except OverflowError:
        return math.inf


def check_matmul_precision(dtype: torch.dtype) -> None:
    """IRError for float32 unless ``torch.get_float32_matmul_precision()`` is ``"highest"``: under
    ``"high"`` CUDA runs float32 matrix products in TF32 (10 significand bits) and under
    ``"medium"`` in bfloat16 (on the CPU too, where it has AVX512-BF16 or AMX: one bfloat16 pass
    measured an error of 0.17 against 5·10^-5 on a 256×256 product; a split into several passes
    stays near float32's accuracy with other bits), while the error model (*Model*) takes ``u = 2^-24`` for every float32 operation."""
    torch = require_torch()
    if dtype == torch.float32 and (prec := torch.get_float32_matmul_precision()) != "highest":
        raise IRError(f"numeric_check: float32 matrix products run at precision {prec!r} (TF32 or bfloat16 "
                      "inside), the error bounds assume float32 rounding: call "
                      "torch.set_float32_matmul_precision('highest') to check")


def check_gradual_underflow(dtype: torch.dtype, device: torch.device) -> None:
    """IRError when ``device`` flushes subnormal ``dtype`` numbers to zero (flush-to-zero or
    denormals-are-zero, e.g. after ``torch.set_flush_denormal(True)``): the error model (*Range*)
    assumes IEEE 754 gradual underflow, and a subnormal input read as 0 makes ``x·y`` wrong by
    ``|x·y|``, which no ``η`` term covers. Probed on each call: ``(tiny/4)·4`` is ``tiny`` exactly
    under gradual underflow and 0 under either flush."""
    torch = require_torch()
    tiny = torch.full((1,), torch.finfo(dtype).tiny, dtype=dtype, device=device)
    if not bool(((tiny / 4) * 4 == tiny).all()):
        raise IRError(f"numeric_check: {device} flushes subnormal {dtype_name(dtype)} numbers to zero "
                      "(torch.set_flush_denormal(True) or the device's own mode); the error bounds assume "
                      "gradual underflow, the IEEE 754 default: call torch.set_flush_denormal(False) to check")


def gemm_flushes_subnormals(dtype: torch.dtype, device: torch.device) -> bool:
    """Whether a large ``dtype`` matrix product on ``device`` reads subnormal numbers as 0 although
    elementwise arithmetic keeps them (:func:`check_gradual_underflow` passed): oneDNN's bfloat16
    products on CPUs with AVX512-BF16 or AMX do (the instructions ignore the flush mode), and only
    above a size oneDNN chooses, so the probe is a ``512×64 @ 64×64`` product: every entry is
    ``64·(tiny/4) = 16·tiny`` exactly under gradual underflow, 0 under a flush."""
    torch = require_torch()
    tiny = torch.finfo(dtype).tiny
    a = torch.full((512, 64), tiny / 4, dtype=dtype, device=device)
    return not bool(((a @ torch.ones((64, 64), dtype=dtype, device=device)) == 16 * tiny).all())


def _without_onednn() -> Any:
    """A context in which CPU matrix products do not use oneDNN (its TF32 notice silenced)."""
    import contextlib
    import warnings

    torch = require_torch()
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore", UserWarning)
    stack.enter_context(torch.backends.mkldnn.flags(enabled=False))
    return stack


def assess(obj: Model | Circuit, numbers: FloatNumbers, arr: np.ndarray, exact: np.ndarray, dtype: torch.dtype,
           device: torch.device, path: str) -> NumericCheck:
    """Run ``obj`` in ``dtype`` on the exact inputs ``arr`` and compare with ``exact`` (its exact outputs).
    An empty batch runs nothing: 0 points, errors and bound 0, ``ok`` (on every path)."""
    from symverify.executors.circuit_plan import circuit_plan
    from symverify.kernel.engines.plan import model_plan

    torch = require_torch()
    check_matmul_precision(dtype)
    check_gradual_underflow(dtype, device)
    if arr.shape[0] == 0:  # an empty batch: nothing to run (torch's FFT refuses empty batches), nothing to exceed
        return NumericCheck("torch", dtype_name(dtype), str(device), path, 0, 0.0, 0.0, 0.0, 0.0, True)
    x = torch.from_numpy(np.vectorize(float, otypes=[np.float64])(arr)).to(dtype=dtype)
    xr = x.double().numpy()
    # the inputs' rounding errors, rounded up: below float64's range a nearest float may be 0
    e0 = torch.from_numpy(np.vectorize(lambda a, b: _up(abs(Fraction(b) - Fraction(a))), otypes=[np.float64])(arr, xr))
    integral = np.vectorize(lambda a: Fraction(a).denominator == 1, otypes=[bool])(arr)
    x = x.to(device)

    def run() -> tuple[np.ndarray, Fraction, np.ndarray]:
        if isinstance(obj, Model):
            y, bounds = tracked_model(model_plan(obj, numbers), x, e0, bool(integral.all()), path)
        else:
            y, bounds = tracked_circuit(circuit_plan(obj, numbers), x, e0, torch.from_numpy(integral))
        if not bool(torch.isfinite(y).all()):  # the inputs are finite: the computation left the range
            raise OverflowError(f"the {dtype_name(dtype)} computation overflowed to {y[~torch.isfinite(y)][0].item()}; "
                                "the error model has no bound outside the range")
        errs, top = _errors(y, exact)
        return errs, top, bounds.detach().cpu().double().numpy()

    errs, top, b = run()
    ok = bool(np.all(errs <= b))
    if not ok and device.type == "cpu" and gemm_flushes_subnormals(dtype, device):
        with _without_onednn():
            again, _, b_again = run()
        if bool(np.all(again <= b_again)):
            raise IRError(f"numeric_check: this CPU's oneDNN {dtype_name(dtype)} matrix products read subnormal numbers "
                          "as 0 (AVX512-BF16 or AMX), and the result exceeds the bounds, which assume gradual underflow; "
                          "with oneDNN off it is within them: run under torch.backends.mkldnn.flags(enabled=False) to check")
    mx = float(errs.max()) if errs.size else 0.0
    return NumericCheck(
        "torch", dtype_name(dtype), str(device), path, int(errs.size), mx,
        _relative(mx, top), float(b.max()) if b.size else 0.0, float(top), ok,
    )
