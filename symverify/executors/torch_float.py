"""The float executor: BaseConv models and circuits on batched inputs, in torch (CPU or CUDA).

One layer is ``y = (x·W + b1) ⊙ (h ⊛ x + b2)`` on a ``(B, N', d')`` state (docs/theory.md §1.1); a model
embeds ``(B, N, d)`` in the top-left corner of a zero state, runs its layers and crops (§1.2).
Both run in the one layer loop of :mod:`symverify.kernel.semantics.layer`; :class:`FloatArithmetic` is
its float backend (and :class:`~symverify.kernel.engines.states.TorchStates`, in the trusted base, what it
shares with the modular one).
The convolution runs on one of three paths, chosen per layer by the plan (``path='auto'``: shifts
for a few lags, else FFT) or forced for every layer with a kernel:

- ``sparse``: shifts of the nonzero lags (compiled models: impulses, a few taps);
- ``fft``: ``irfft(rfft(x)·rfft(h))`` of size 2N' for causal (zero padding: no wrap-around)
  and N' for cyclic; the kernel's transform is cached in the plan. bfloat16 states are
  transformed in float32 and rounded back;
- ``direct``: blocked Toeplitz products (:func:`symverify.kernel.engines.kernels.conv_blocked`); no FFT
  rounding, so integer data stays exact.

``conv1d`` is never used. The projection is a matmul (dense ``W``), a few gathers (sparse ``W``)
or nothing (``W = 0``). Circuits run level by level, each level a few gathers. Errors of every
path are bounded in :mod:`symverify.executors.numeric`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from symverify.deadline import Check
from symverify.executors.circuit_plan import CircuitPlan
from symverify.kernel.engines._torch import one_thread_if_small, require_torch
from symverify.kernel.engines.kernels import Pool, conv_blocked, conv_shifts
from symverify.kernel.engines.plan import LayerPlan, ModelPlan
from symverify.kernel.engines.states import TorchStates, embed  # noqa: F401 (importable by name)
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.semantics import layer as loop

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["FloatArithmetic", "TorchStates"]


def _mac(acc: Any, src: Any, tap: Any, one: bool, first: bool) -> None:
    if first:
        if one:
            acc.copy_(src)
        else:
            require_torch().mul(src, tap, out=acc)
    elif one:
        acc.add_(src)
    else:
        acc.addcmul_(src, tap)


def conv_fft(x: Any, h: Any, cyclic: bool, cache: dict[Any, Any] | None = None, out: Any = None) -> Any:
    """``h ⊛ x`` by FFT along the sequence axis (float64 stays float64; float32 and bfloat16
    transform in float32). The transforms run on a channel-major copy, where they are contiguous;
    ``out`` (shaped like ``x``, any strides) receives the result in one copy."""
    torch = require_torch()
    n = x.shape[-2]
    n_fft = n if cyclic else 2 * n
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    key = ("fft", n_fft, work)
    hf = cache.get(key) if cache is not None else None
    if hf is None:
        hf = torch.fft.rfft(h.to(work).T, n=n_fft, dim=-1)
        if cache is not None:
            cache[key] = hf
    xf = torch.fft.rfft(x.to(work).transpose(-1, -2).contiguous(), n=n_fft, dim=-1).mul_(hf)
    y = torch.fft.irfft(xf, n=n_fft, dim=-1)[..., :n]
    if out is not None:
        return out.copy_(y.transpose(-1, -2))
    return y.transpose(-1, -2).to(x.dtype).contiguous()


def _convolve(lp: LayerPlan, x: Any, path: str, pool: Pool | None = None) -> Any:
    kind = lp.path(path)
    if kind == "none":
        return None
    if kind == "sparse":
        return conv_shifts(x, lp.lags, lp.rows(), lp.unit, lp.cyclic, _mac, pool.empty_like(x) if pool else None)
    if kind == "fft":
        span = lp.tap_channels()
        if span is None:
            return conv_fft(x, lp.kernel_dense(), lp.cyclic, lp.fft_kernels)
        c0, w = span  # transform only the channels that have taps (e.g. zoology's pair form: half of them)
        out = pool.empty_like(x) if pool else require_torch().empty_like(x)
        dd = x.shape[-1]
        out.narrow(-1, 0, c0).zero_()
        out.narrow(-1, c0 + w, dd - c0 - w).zero_()
        conv_fft(x.narrow(-1, c0, w), lp.kernel_dense().narrow(-1, c0, w), lp.cyclic, lp.fft_span_kernels,
                 out.narrow(-1, c0, w))
        return out
    torch = require_torch()
    return conv_blocked(x, lp.kernel_dense(), lp.lags, lp.cyclic, torch.bmm, lambda t, v: t.add_(v))


def _project(lp: LayerPlan, x: Any, pool: Pool | None = None) -> Any:
    if lp.w_kind == "zero":
        return None
    torch = require_torch()
    out = pool.empty_like(x) if pool else None
    if lp.w_kind == "dense":
        span = lp.w_rows()
        if span is None:
            return torch.matmul(x, lp.w, out=out)
        r0, w = span  # rows of W outside the span are zero: contract only the channels that meet the rest
        return torch.matmul(x.narrow(-1, r0, w), lp.w.narrow(0, r0, w), out=out)
    idx, coef = lp.gathers(x.shape)
    acc = torch.gather(x, -1, idx[0], out=out).mul_(coef[0])
    for i, c in zip(idx[1:], coef[1:]):
        acc.addcmul_(torch.gather(x, -1, i), c)
    return acc


def _affine(core: Any, bias: Any) -> Any:
    """``core + bias`` (core, when present, is a fresh full-size tensor and is updated in place)."""
    if core is None:
        return bias
    return core if bias is None else core.add_(bias)


def combine(x: Any, proj: Any, conv: Any) -> Any:
    """``proj ⊙ conv`` as a ``(B, N', d')`` state (zeros when a branch is identically zero).

    A full-size branch is a fresh tensor (see :func:`layer_parts`) and takes the product in place.
    """
    if conv is None or proj is None:
        return require_torch().zeros_like(x)
    if conv.shape == x.shape:
        return conv.mul_(proj)
    if proj.shape == x.shape:
        return proj.mul_(conv)
    return (proj * conv).expand_as(x)


@dataclass(frozen=True)
class FloatArithmetic(TorchStates):
    """The layer in a float dtype: branches are fresh full-size tensors (updated in place),
    broadcastable biases, or None (identically zero)."""

    path: str = "auto"
    pool: Pool | None = None

    def convolve(self, lp: LayerPlan, x: Any) -> Any:
        return _affine(_convolve(lp, x, self.path, self.pool), lp.b2.value())

    def project(self, lp: LayerPlan, x: Any, conv: Any) -> Any:
        return _affine(_project(lp, x, self.pool), lp.b1.value())

    def combine(self, lp: LayerPlan, x: Any, proj: Any, conv: Any) -> Any:
        return self._recycle(combine(x, proj, conv), proj, conv)


def layer_parts(lp: LayerPlan, x: Any, path: str = "auto", pool: Pool | None = None) -> tuple[Any, Any]:
    """The two branches ``(x·W + b1, h ⊛ x + b2)``; None for a branch that is identically zero
    (the projection is not computed when the convolution branch is zero)."""
    return loop.layer_parts(lp, x, FloatArithmetic(path, pool))


def run_layer(lp: LayerPlan, x: Any, path: str = "auto", pool: Pool | None = None) -> Any:
    """One layer on a ``(B, N', d')`` state (``pool``: buffers to reuse, see :class:`Pool`)."""
    return loop.run_layer(lp, x, FloatArithmetic(path, pool))


def run_model(plan: ModelPlan, x: Any, path: str = "auto", check: Check | None = None) -> Any:
    """The model on ``(B, N, d)`` inputs (already on the right device and dtype); ``check`` runs
    before every layer. Without ``check``, a model whose layers all convolve by shifts runs as a
    compiled program on the CPU (:mod:`symverify.executors.program`: the same operations per row;
    concurrent calls on one model and batch size take turns on it), and on CUDA with ``SYMVERIFY_CUDA_GRAPHS=1`` as a replayed CUDA graph (:mod:`.cuda_graph`)."""
    layers = plan.on(x.device, x.dtype)
    if check is None:
        from symverify.executors.program import model_program

        m = plan.model
        prog = model_program(layers, m.layers, m.n, m.d, m.inner_n, m.inner_d, x, path)
        if prog is not None:  # one run at a time (its buffers): a concurrent call waits, never takes the loop,
            with prog.lock:  # whose dense projections may round otherwise, so a result never depends on other threads
                with one_thread_if_small(x.shape[0] * m.inner_n * m.inner_d, x.device):
                    return prog.run(x)
        if layers and x.device.type == "cuda":
            from symverify.executors.cuda_graph import graphed_run

            out = graphed_run(layers[0].graphs, ("run_model", path),
                              lambda s: loop.run_model(plan.model, layers, s, FloatArithmetic(path, Pool()), None), x)
            if out is not None:
                return out
    return loop.run_model(plan.model, layers, x, FloatArithmetic(path, Pool()), check)


def circuit_values(plan: CircuitPlan, x: Any, p: int | None = None) -> Any:
    """Every node's value on ``(B, n, d)`` inputs, a ``(nodes, B)`` table filled level by level;
    with ``p``, int64 residues reduced mod p after every step (residues < 2^31, so a step's
    ``α·a + β·b`` stays below 2^63)."""
    torch = require_torch()
    c = plan.circuit
    cp = plan.on(x.device, x.dtype)
    bsz, nd = x.shape[0], c.num_inputs
    vals = torch.empty((c.num_nodes, bsz), dtype=x.dtype, device=x.device)
    vals[:nd] = x.reshape(bsz, nd).T

    def red(t: Any) -> Any:
        return t if p is None else t % p

    for s in cp.steps:
        dst, a, b, al, be = s.lin
        if dst.numel():
            vals[dst] = red(al[:, None] * vals[a] + be[:, None] * vals[b])
        dst, a, b = s.mul
        if dst.numel():
            vals[dst] = red(vals[a] * vals[b])
        dst, v = s.const
        if dst.numel():
            vals[dst] = v[:, None].expand(-1, bsz)
    return vals


def read_outputs(c: Circuit, vals: Any, outputs: Any) -> Any:
    """The ``(B, n, d)`` output: the output nodes row-major, the rest zero (docs/theory.md §2)."""
    torch = require_torch()
    bsz = vals.shape[1]
    out = torch.zeros((bsz, c.num_inputs), dtype=vals.dtype, device=vals.device)
    if len(c.outputs):
        out[:, : len(c.outputs)] = vals[outputs.to(vals.device)].T
    return out.reshape(bsz, c.n, c.d)


def run_circuit(plan: CircuitPlan, x: Any) -> Any:
    """The circuit on ``(B, n, d)`` inputs."""
    return read_outputs(plan.circuit, circuit_values(plan, x), plan.outputs)
