"""A model's plan compiled into a flat program of in-place tensor operations (CPU, small states).

Compiled models are long chains (10^3 layers) of small layers on a small state: per layer the
generic loop of :mod:`symverify.kernel.semantics.layer` spends more time in Python (dispatch, branch
bookkeeping, buffer recycling) than in arithmetic. :func:`model_program` turns the per-layer plans
into one list of ``(operation, arguments)`` pairs, run by a tight loop, for one batch size:

- the state lives in preallocated buffers laid out **channels first, batch last**,
  ``(d', L + N' + R, B)``: a shifted copy of the state (a lag of the convolution) is a block of
  rows of every channel, per-row or per-channel factors (masks, taps) broadcast along the
  contiguous batch axis (with ``d' = 4`` channels last, every elementwise operation ran an inner
  loop of 4), and a row range is one ``(d', rows·B)`` matrix with a row stride, so a projection
  is one ``mm`` with ``Wᵀ``. ``L = R = N'`` rows of *halo* above and below the state hold what a
  shift reads outside ``[0, N')``: zeros for a causal layer, the wrapped rows for a cyclic one
  (copied in only for the rows the layer reads; a cyclic lag reads whichever side needs fewer rows);
- two state buffers alternate (ping-pong); a layer whose both branches depend on the state keeps
  its projection in a scratch buffer; nothing is allocated while the program runs;
- **supports**: the zero pattern of the planned weights is propagated from the input's cells
  (the analysis of :mod:`symverify.kernel.semantics.support`, on ``(N', d')`` bool tensors). A layer
  computes only the rows between its output's first and last possibly nonzero row; each lag of
  its convolution only the rows where its shifted state and the projection branch may both be
  nonzero (compiled models keep their state in a few row blocks: most lags then read without
  wrapping and need no halo). The program tracks which rows of each buffer may be nonzero and
  zeroes only rows that were and no longer are;
- the operations are those of :mod:`symverify.executors.torch_float` (``mul``, ``addcmul``,
  ``add``, ``mm``, ``gather``) on the same operands, in the same order, so a layer computes the
  same roundings on every row it computes (the error model of :mod:`symverify.executors.numeric`
  applies unchanged, and integer data stays exact: shifts only, no FFT). Two rewrites keep every
  rounding: a convolution layer's ``b1`` whose entries are 0 and ±1 is folded into the taps
  (``s·fl(a + b) = fl(s·a + s·b)`` for ``s ∈ {0, ±1}``), and a first unit lag is added to the
  second in one call (``x0 + x1``, as copy-then-add). A term left out where the state is a
  structural zero adds an exact 0, so results equal the layer loop's bit for bit (up to the sign
  of zeros), except a dense projection on non-integer data: the program's ``mm`` of ``Wᵀ`` with
  the channels-first state and the loop's ``matmul`` of the state with ``W`` may sum in different
  orders (the last bits, within the error model's ``γ_{k+1}``; exact on integers).

**Native segments.** Where the optional native library builds (:mod:`symverify._native`), every
maximal run of these operations is executed by one call of a small C interpreter
(:mod:`symverify.executors._native_program`): a compiled model's ~2000 torch calls become a few
dozen calls, which removes the per-operation dispatch that bounded small batches. The elementwise
operations round exactly as torch's (``addcmul`` is a fused multiply-add in both), so those give
the same bits; the dense projection sums its ``k`` terms in order with fused multiply-adds, which
torch's ``mm`` also does in its vector body but not in its column tail: there the two may differ
in the last bits on non-integer data, within the error model's ``γ_{k+1}`` (integer data: exact).
Without the library the operations run one by one as torch calls.

Only layers whose convolution runs as shifts (or that have no kernel) compile; a model with an
FFT or blocked-direct layer runs in the generic loop. Programs are cached per plan and batch size;
a program runs one call at a time (:attr:`Program.lock`: a concurrent call waits for it rather than
running the loop, so its result does not depend on what other threads do).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from symverify.kernel.engines._torch import require_torch
from symverify.kernel.engines.plan import Bias, LayerPlan
from symverify.kernel.ir.baseconv import Layer
from symverify.kernel.semantics.support import Support, layer_support, support_of_cells

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["Program", "MAX_PROGRAM_CELLS"]

MAX_PROGRAM_CELLS = 1 << 22
"""States of more than this many entries (B·N'·d') run in the generic loop: there the operations
are large and the per-layer overhead the program removes no longer matters."""

_CACHED_BATCHES = 4  # programs kept per plan (one per batch size)

Op = tuple[Callable[..., Any], tuple[Any, ...]]


def compilable(layers: Sequence[LayerPlan], path: str) -> bool:
    """Does every layer run its convolution as shifts (or have none) under ``path``?"""
    return all(lp.path(path) in ("none", "sparse") for lp in layers)


def _chan_major(v: Any, r0: int, r1: int) -> Any:
    """Rows ``[r0, r1)`` of a ``(N' or 1, d' or 1)`` value, shaped to broadcast over ``(d', rows, B)``."""
    if v.shape[0] != 1:
        v = v[r0:r1]
    return v.T.unsqueeze(-1).contiguous()


def _bias_rows(b: Bias, r0: int, r1: int) -> Any:
    """The bias value for rows ``[r0, r1)``, shaped to broadcast over ``(d', rows, B)``."""
    return _chan_major(b.value(), r0, r1)


def _signs_only(v: Any) -> bool:
    """Is every entry 0, 1 or -1 (a factor whose products round exactly, symmetrically)?"""
    return bool(((v == 0) | (v == 1) | (v == -1)).all())


def _shift_rows(sup: Any, k: int, cyclic: bool) -> Any:
    """``sup`` moved down ``k`` rows (wrapped when cyclic, dropped past the end when causal)."""
    if cyclic:
        return sup.roll(k, 0)
    out = sup.new_zeros(sup.shape)
    out[k:] = sup[: sup.shape[0] - k]
    return out


@dataclass
class _Support:
    """Where one layer's branches and output may be nonzero (``(N', d')`` bool tensors, from the
    planned weights' zero pattern on the input's support: :mod:`symverify.kernel.semantics.support`'s
    analysis, in tensors)."""

    proj: Any
    terms: list[Any]  # per lag: where its shifted state times its tap may be nonzero
    out: Any


def _mask(rows: Sequence[frozenset[int]], n: int) -> Any:
    """A per-channel row support (:data:`symverify.kernel.semantics.support.Support`) as an ``(N', d')`` bool tensor."""
    torch = require_torch()
    out = torch.zeros((n, len(rows)), dtype=torch.bool)
    for q, rs in enumerate(rows):
        if rs:
            out[torch.tensor(sorted(rs)), q] = True
    return out


def _layer_support(lp: LayerPlan, layer: Layer, sup: Support) -> tuple[_Support, Support]:
    """The branches of :func:`symverify.kernel.semantics.support.layer_support` as tensors, with each
    lag's term (its shifted input support where its tap is nonzero); and the output support."""
    ls = layer_support(layer, sup)
    n = layer.inner_n
    inp = _mask(ls.inputs, n)
    terms = [_shift_rows(inp, k, lp.cyclic) & (tap != 0) for k, tap in zip(lp.lags, lp.rows())]
    return _Support(_mask(ls.projection, n), terms, _mask(ls.output, n)), ls.output


def _hull(rows: Any, r0: int = 0, r1: int | None = None) -> tuple[int, int]:
    """``(first, end)`` of the True entries of a 1-d bool tensor within ``[r0, r1)``; ``(r0, r0)`` when none."""
    nz = require_torch().nonzero(rows[r0:r1]).flatten()
    if nz.numel() == 0:
        return r0, r0
    return r0 + int(nz[0]), r0 + int(nz[-1]) + 1


@dataclass
class _Buf:
    t: Any  # (d', L + N' + R, B)
    lo: int  # rows of the state region that may be nonzero: [lo, hi)
    hi: int
    dirty_left: int  # rows of the left halo (next to the state) that may be nonzero


@dataclass
class Program:
    """The compiled operations of one model for one batch size (see the module docstring)."""

    ops: list[Op]
    inp: _Buf
    out: _Buf
    pad: int
    n: int
    d: int
    inner_n: int
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    calls: list[Callable[[], Any]] | None = field(default=None, repr=False)
    """The operations as native segments and torch calls (:mod:`symverify.executors._native_program`),
    None where the native interpreter is not available: then :attr:`ops` run one by one."""

    def run(self, x: Any) -> Any:
        """The model on ``(B, n, d)`` inputs (the batch size the program was built for); a new tensor."""
        t, pad = self.inp.t, self.pad
        t[:, pad : pad + self.inner_n].zero_()
        t[: self.d, pad : pad + self.n].copy_(x.permute(2, 1, 0))
        if self.calls is not None:
            for call in self.calls:
                call()
        else:
            for fn, args in self.ops:
                fn(*args)
        return self.out.t[: self.d, pad : pad + self.n].permute(2, 1, 0).contiguous()


class _Builder:
    def __init__(self, inner_n: int, inner_d: int, bsz: int, dtype: Any) -> None:
        torch = require_torch()
        self.torch = torch
        self.n = inner_n
        self.pad = inner_n
        self.bsz = bsz
        self.ops: list[Op] = []

        def buf() -> _Buf:
            # contents left by an earlier run are unknown: every row and the halo may be nonzero
            return _Buf(torch.zeros((inner_d, 3 * inner_n, bsz), dtype=dtype), 0, inner_n, inner_n)

        self.bufs = [buf(), buf()]
        self.scratch = torch.zeros((inner_d, inner_n, bsz), dtype=dtype)
        self.gathered = torch.zeros((inner_d, inner_n, bsz), dtype=dtype)

    def rows(self, b: _Buf, r0: int, r1: int) -> Any:
        return b.t[:, self.pad + r0 : self.pad + r1]

    def zero_rows(self, b: _Buf, r0: int, r1: int, keep: tuple[int, int] | None = None) -> None:
        """Set rows ``[r0, r1)`` of ``b``'s state to the only rows that may be nonzero, zeroing every
        other row that may be (and, with ``keep``, every one outside ``keep``: the next writes
        cover only ``keep``)."""
        if r1 <= r0:
            r0 = r1 = 0
        k0, k1 = keep if keep is not None else (r0, r1)
        if k1 <= k0:
            k0 = k1 = b.lo
        for a, z in ((b.lo, min(b.hi, k0)), (max(b.lo, k1), b.hi)):
            if z > a:
                self.ops.append((self.rows(b, a, z).zero_, ()))
        b.lo, b.hi = r0, r1

    def shifted(self, x: _Buf, k: int, r0: int, r1: int, cyclic: bool) -> Any:
        """Rows ``[r0, r1)`` of ``shift_k(x)`` as a view, after filling the halo rows it reads."""
        n, pad, t = self.n, self.pad, x.t
        if k == 0:
            return self.rows(x, r0, r1)
        left = max(0, k - r0)  # halo rows above the state the view reads
        right = max(0, r1 - k)  # halo rows below the state, reading from the other side
        if not cyclic:
            if left and x.dirty_left:
                self.ops.append((t[:, pad - x.dirty_left : pad].zero_, ()))
                x.dirty_left = 0
            return t[:, pad + r0 - k : pad + r1 - k]
        if left <= right:
            if left:
                self.ops.append((t[:, pad - left : pad].copy_, (t[:, pad + n - left : pad + n],)))
                x.dirty_left = max(x.dirty_left, left)
            return t[:, pad + r0 - k : pad + r1 - k]
        if right:
            self.ops.append((t[:, pad + n : pad + n + right].copy_, (t[:, pad : pad + right],)))
        return t[:, pad + n + r0 - k : pad + n + r1 - k]

    def convolve(self, lp: LayerPlan, x: _Buf, dst: Any, r0: int, r1: int, spans: Sequence[tuple[int, int]],
                 scale: Any = None) -> None:
        """``dst = h ⊛ x + b2`` on rows ``[r0, r1)``, each lag only over its rows ``spans`` (outside,
        its term is zero or meets a zero factor); with ``scale`` (a ``(d', rows, 1)`` factor of
        entries 0 and ±1), ``dst = scale ⊙ (h ⊛ x + b2)`` with the factor folded into the taps
        (exact: multiplying by 0 or ±1 commutes with rounding). Terms are added in lag order, as
        in the layer loop (a term left out adds an exact zero). Rows of ``dst`` outside the first
        term's span must already be zero (:meth:`layer` zeroes them)."""
        torch = self.torch
        terms = []
        for k, tap, one, (a, b) in zip(lp.lags, lp.rows(), lp.unit, spans):
            if b <= a:
                continue
            c = tap.view(-1, 1, 1)
            if scale is not None:
                c, one = (scale[:, a - r0 : b - r0] * c).contiguous(), False
            terms.append((self.shifted(x, k, a, b, lp.cyclic), c, one, a, b))
        if terms:
            (s0, c0, one0, a0, b0), rest = terms[0], terms[1:]
            out = dst[:, a0 - r0 : b0 - r0]
            if rest and one0 and rest[0][3:] == (a0, b0):  # the first two terms in one call: rounds as copy-then-add
                s1, c1, one1 = rest[0][:3]
                rest = rest[1:]
                if one1:
                    self.ops.append((partial(torch.add, out=out), (s0, s1)))
                else:
                    self.ops.append((partial(torch.addcmul, out=out), (s0, s1, c1)))
            elif one0:
                self.ops.append((out.copy_, (s0,)))
            else:
                self.ops.append((partial(torch.mul, out=out), (s0, c0)))
            for src, c, one, a, b in rest:
                part = dst[:, a - r0 : b - r0]
                if one:
                    self.ops.append((part.add_, (src,)))
                else:
                    self.ops.append((part.addcmul_, (src, c)))
        if lp.b2.kind != "zero":
            b2 = _bias_rows(lp.b2, r0, r1)
            if scale is not None:
                b2 = (scale * b2).contiguous()
            self.ops.append((dst.add_, (b2,)))

    def project(self, lp: LayerPlan, x: _Buf, dst: Any, r0: int, r1: int) -> None:
        xs = self.rows(x, r0, r1)
        if lp.w_kind == "dense":
            dd = xs.shape[0]
            span = lp.w_rows()
            # (d', rows·B) matrices with a row stride: y = Wᵀ·x, no copy
            flat, w = self._flat(x, r0, r1), lp.w
            if span is not None:
                c0, width = span
                flat, w = flat.narrow(0, c0, width), w.narrow(0, c0, width)
            self.ops.append((partial(self.torch.mm, out=self._flat_view(dst, dd)), (w.T, flat)))
        else:
            shape = xs.shape
            idx = [i.view(-1, 1, 1).expand(shape) for i in lp.w_idx.unbind(0)]
            coef = [c.view(-1, 1, 1) for c in lp.w_coef.unbind(0)]
            self.ops.append((partial(self.torch.gather, out=dst), (xs, 0, idx[0])))
            self.ops.append((dst.mul_, (coef[0],)))
            if len(idx) > 1:
                tmp = self.gathered[:, r0:r1]
                for i, c in zip(idx[1:], coef[1:]):
                    self.ops.append((partial(self.torch.gather, out=tmp), (xs, 0, i)))
                    self.ops.append((dst.addcmul_, (tmp, c)))
        if lp.b1.kind != "zero":
            self.ops.append((dst.add_, (_bias_rows(lp.b1, r0, r1),)))

    def _flat(self, x: _Buf, r0: int, r1: int) -> Any:
        b = self.bsz
        return x.t.view(x.t.shape[0], -1)[:, (self.pad + r0) * b : (self.pad + r1) * b]

    def _flat_view(self, dst: Any, dd: int) -> Any:
        """``dst`` (a ``(d', rows, B)`` slice of a buffer) as a ``(d', rows·B)`` matrix view."""
        return dst.as_strided((dd, dst.shape[1] * dst.shape[2]), (dst.stride(0), 1))

    def layer(self, lp: LayerPlan, x: _Buf, y: _Buf, sup: _Support) -> None:
        has_conv = bool(lp.lags)
        has_proj = lp.w_kind != "zero"
        r0, r1 = _hull(sup.out.any(dim=1))
        # a branch the plan holds as identically zero (a weight that rounds to 0 in this dtype, such
        # as 10^-50 in float32, which the exact supports count as nonzero): the output is zero
        if r1 <= r0 or (not has_conv and lp.b2.kind == "zero") or (not has_proj and lp.b1.kind == "zero"):
            self.zero_rows(y, 0, 0)
            return
        # a lag's term matters only where it may be nonzero and the projection branch may be too
        spans = [_hull((t & sup.proj).any(dim=1), r0, r1) for t in sup.terms]
        written = next((sp for sp in spans if sp[1] > sp[0]), (r0, r0)) if has_conv else (r0, r1)
        self.zero_rows(y, r0, r1, written)
        dst = self.rows(y, r0, r1)
        if has_conv and has_proj:
            self.convolve(lp, x, dst, r0, r1, spans)
            p = self.scratch[:, r0:r1]
            self.project(lp, x, p, r0, r1)
            self.ops.append((dst.mul_, (p,)))
        elif has_conv:
            b1 = _bias_rows(lp.b1, r0, r1)
            if _signs_only(b1):
                self.convolve(lp, x, dst, r0, r1, spans, scale=b1.expand(-1, r1 - r0, -1))
            else:
                self.convolve(lp, x, dst, r0, r1, spans)
                self.ops.append((dst.mul_, (b1,)))
        elif has_proj:
            self.project(lp, x, dst, r0, r1)
            self.ops.append((dst.mul_, (_bias_rows(lp.b2, r0, r1),)))
        else:
            prod = _chan_major(lp.b1.value() * lp.b2.value(), r0, r1)
            self.ops.append((dst.copy_, (prod.expand(dst.shape).contiguous(),)))


def build_program(layers: Sequence[LayerPlan], model_layers: Sequence[Layer], n: int, d: int, inner_n: int, inner_d: int,
                  bsz: int, dtype: Any) -> Program:
    """Compile planned layers (on the CPU, in ``dtype``) for a batch of ``bsz`` inputs; the
    supports come from the model's own layers (``model_layers``, the ones the plans were made of)."""
    b = _Builder(inner_n, inner_d, bsz, dtype)
    x, y = b.bufs
    # the input: the embedding writes rows [0, n) after zeroing the state region
    b.ops.clear()
    x.lo, x.hi = 0, n
    first = x
    sup = support_of_cells(((i, j) for i in range(n) for j in range(d)), inner_d)
    for lp, layer in zip(layers, model_layers, strict=True):
        ls, sup = _layer_support(lp, layer, sup)
        b.layer(lp, x, y, ls)
        x, y = y, x
    return Program(b.ops, first, x, b.pad, n, d, inner_n)


def same_plans(kept: tuple[LayerPlan, ...], seen: Sequence[LayerPlan], plans: Sequence[LayerPlan]) -> bool:
    """Are ``plans`` the plans a cached result was made of? The list :meth:`ModelPlan.on` returns
    is cached and never changed, so the same list object (same length, same last plan) answers
    at once; any other sequence is compared plan by plan."""
    if plans is seen and len(plans) == len(kept) and (not kept or plans[-1] is kept[-1]):
        return True
    return len(kept) == len(plans) and all(p is q for p, q in zip(kept, plans))


def model_program(layers: Sequence[LayerPlan], model_layers: Sequence[Layer], n: int, d: int, inner_n: int, inner_d: int,
                  x: Any, path: str) -> Program | None:
    """The (cached) program for these planned layers and ``x``'s batch size and dtype, or None
    when the model does not compile (see :func:`compilable`) or the state is large or not on the CPU."""
    if not layers or x.device.type != "cpu" or x.shape[0] * inner_n * inner_d > MAX_PROGRAM_CELLS:
        return None
    cache = layers[0].programs
    key = ("program", path, int(x.shape[0]), str(x.dtype))
    hit = cache.get(key)
    if hit is not None and same_plans(hit[0], hit[2], layers):
        return hit[1]  # type: ignore[no-any-return]
    if not compilable(layers, path):
        return None
    prog = build_program(layers, model_layers, n, d, inner_n, inner_d, x.shape[0], x.dtype)
    from symverify.executors._native_program import segments

    prog.calls = segments(prog.ops, x.dtype)
    keys = list(cache)
    for k in keys[: max(0, len(keys) - _CACHED_BATCHES + 1)]:
        del cache[k]
    cache[key] = (tuple(layers), prog, layers)
    return prog
