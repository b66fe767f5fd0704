"""A model's plan compiled into a flat program of in-place tensor operations (CPU, small states).

Compiled models are long chains (10^3 layers) of small layers on a small state: per layer the
generic loop of :mod:`symverify.semantics.layer` spends more time in Python (dispatch, branch
bookkeeping, buffer recycling) than in arithmetic. :func:`model_program` turns the per-layer plans
into one list of ``(operation, arguments)`` pairs, run by a tight loop, for one batch size:

- the state lives in preallocated buffers laid out **rows first**, ``(L + N' + R, B, d')``: a
  shifted copy of the state (a lag of the convolution) is a contiguous block of rows, and so is a
  range of rows (the projection of a row range is one ``mm`` on a contiguous ``(rows·B, d')``
  block). ``L = R = N'`` rows of *halo* above and below the state hold what a shift reads outside
  ``[0, N')``: zeros for a causal layer, the wrapped rows for a cyclic one (copied in only for the
  rows the layer reads; a cyclic lag reads whichever side needs fewer rows);
- two state buffers alternate (ping-pong); a layer whose both branches depend on the state keeps
  its projection in a scratch buffer; nothing is allocated while the program runs;
- **row spans**: a layer whose projection or convolution branch is a constant (``W = 0``: the
  branch is ``b1``; no kernel: ``b2``) is zero on every row where that constant is zero, and
  compiled models gate with sparse positional masks. The program computes only the rows between
  the first and last nonzero row of such a mask, tracks which rows of each buffer may be nonzero,
  and zeroes only rows that were nonzero and no longer are;
- the operations are those of :mod:`symverify.executors.torch_float` (``mul``, ``addcmul_``,
  ``add_``, ``mm``, ``gather``) on the same operands, so a layer computes the same roundings
  on every row it computes (the error model of :mod:`symverify.executors.numeric` applies
  unchanged, and integer data stays exact: shifts only, no FFT).

Only layers whose convolution runs as shifts (or that have no kernel) compile; a model with an
FFT or blocked-direct layer runs in the generic loop. Programs are cached per plan and batch size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ._torch import require_torch
from .plan import Bias, LayerPlan

__all__ = ["Program", "model_program", "compilable", "MAX_PROGRAM_CELLS"]

MAX_PROGRAM_CELLS = 1 << 22
"""States of more than this many entries (B·N'·d') run in the generic loop: there the operations
are large and the per-layer overhead the program removes no longer matters."""

_CACHED_BATCHES = 4  # programs kept per plan (one per batch size)

Op = tuple[Callable[..., Any], tuple[Any, ...]]


def compilable(layers: Sequence[LayerPlan], path: str) -> bool:
    """Does every layer run its convolution as shifts (or have none) under ``path``?"""
    return all(lp.path(path) in ("none", "sparse") for lp in layers)


def _rows_of(b: Bias, n: int) -> tuple[int, int] | None:
    """``(first, end)`` of the rows where the bias may be nonzero; None when it is zero."""
    v = b.value()
    if v is None:
        return None
    if v.shape[0] == 1:
        return (0, n)
    nz = require_torch().nonzero((v != 0).any(dim=1)).flatten()
    if nz.numel() == 0:
        return None
    return int(nz[0]), int(nz[-1]) + 1


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

    def run(self, x: Any) -> Any:
        """The model on ``(B, n, d)`` inputs (the batch size the program was built for); a new tensor."""
        t, pad = self.inp.t, self.pad
        t[:, pad : pad + self.inner_n].zero_()
        t[: self.d, pad : pad + self.n].copy_(x.permute(2, 1, 0))
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

    def zero_rows(self, b: _Buf, r0: int, r1: int) -> None:
        """Set rows ``[r0, r1)`` of ``b``'s state to the only rows that may be nonzero, zeroing the rest."""
        if r1 <= r0:
            r0 = r1 = 0
        for a, z in ((b.lo, min(b.hi, r0)), (max(b.lo, r1), b.hi)):
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

    def convolve(self, lp: LayerPlan, x: _Buf, dst: Any, r0: int, r1: int, scale: Any = None) -> None:
        """``dst = h ⊛ x + b2`` on rows ``[r0, r1)``; with ``scale`` (a ``(d', rows, 1)`` factor of
        entries 0 and ±1), ``dst = scale ⊙ (h ⊛ x + b2)`` with the factor folded into the taps
        (exact: multiplying by 0 or ±1 commutes with rounding)."""
        torch = self.torch
        terms = []
        for k, tap, one in zip(lp.lags, lp.rows(), lp.unit):
            c = tap.view(-1, 1, 1)
            if scale is not None:
                c, one = (scale * c).contiguous(), False
            terms.append((self.shifted(x, k, r0, r1, lp.cyclic), c, one))
        (s0, c0, one0), rest = terms[0], terms[1:]
        if rest and one0:  # the first two terms in one call: x0 + x1 or x0 + x1·t1 rounds as copy-then-add
            s1, c1, one1 = rest[0]
            rest = rest[1:]
            if one1:
                self.ops.append((partial(torch.add, out=dst), (s0, s1)))
            else:
                self.ops.append((partial(torch.addcmul, out=dst), (s0, s1, c1)))
        elif one0:
            self.ops.append((dst.copy_, (s0,)))
        else:
            self.ops.append((partial(torch.mul, out=dst), (s0, c0)))
        for src, c, one in rest:
            if one:
                self.ops.append((dst.add_, (src,)))
            else:
                self.ops.append((dst.addcmul_, (src, c)))
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

    def layer(self, lp: LayerPlan, x: _Buf, y: _Buf) -> None:
        n = self.n
        has_conv = bool(lp.lags)
        has_proj = lp.w_kind != "zero"
        r0, r1 = 0, n
        for const, b in ((not has_conv, lp.b2), (not has_proj, lp.b1)):
            if const:
                span = _rows_of(b, n)
                if span is None:
                    r0, r1 = 0, 0
                else:
                    r0, r1 = max(r0, span[0]), min(r1, span[1])
        if r1 <= r0:
            self.zero_rows(y, 0, 0)
            return
        self.zero_rows(y, r0, r1)
        dst = self.rows(y, r0, r1)
        if has_conv and has_proj:
            self.convolve(lp, x, dst, r0, r1)
            p = self.scratch[:, r0:r1]
            self.project(lp, x, p, r0, r1)
            self.ops.append((dst.mul_, (p,)))
        elif has_conv:
            b1 = _bias_rows(lp.b1, r0, r1)
            if _signs_only(b1):
                self.convolve(lp, x, dst, r0, r1, scale=b1)
            else:
                self.convolve(lp, x, dst, r0, r1)
                self.ops.append((dst.mul_, (b1,)))
        elif has_proj:
            self.project(lp, x, dst, r0, r1)
            self.ops.append((dst.mul_, (_bias_rows(lp.b2, r0, r1),)))
        else:
            prod = _chan_major(lp.b1.value() * lp.b2.value(), r0, r1)
            self.ops.append((dst.copy_, (prod.expand(dst.shape).contiguous(),)))


def build_program(layers: Sequence[LayerPlan], n: int, d: int, inner_n: int, inner_d: int, bsz: int, dtype: Any) -> Program:
    """Compile planned layers (on the CPU, in ``dtype``) for a batch of ``bsz`` inputs."""
    b = _Builder(inner_n, inner_d, bsz, dtype)
    x, y = b.bufs
    # the input: the embedding writes rows [0, n) after zeroing the state region
    b.ops.clear()
    x.lo, x.hi = 0, n
    first = x
    for lp in layers:
        b.layer(lp, x, y)
        x, y = y, x
    return Program(b.ops, first, x, b.pad, n, d, inner_n)


def model_program(layers: Sequence[LayerPlan], n: int, d: int, inner_n: int, inner_d: int, x: Any,
                  path: str) -> Program | None:
    """The (cached) program for these planned layers and ``x``'s batch size and dtype, or None
    when the model does not compile (see :func:`compilable`) or the state is large or not on the CPU."""
    if not layers or x.device.type != "cpu" or x.shape[0] * inner_n * inner_d > MAX_PROGRAM_CELLS:
        return None
    cache = layers[0].cache
    key = ("program", path, x.shape[0], str(x.dtype))
    hit = cache.get(key)
    if hit is not None and len(hit[0]) == len(layers) and all(p is q for p, q in zip(hit[0], layers)):
        return hit[1]  # type: ignore[no-any-return]
    if not compilable(layers, path):
        return None
    prog = build_program(layers, n, d, inner_n, inner_d, x.shape[0], x.dtype)
    keys = [k for k in cache if isinstance(k, tuple) and k and k[0] == "program"]
    for k in keys[: max(0, len(keys) - _CACHED_BATCHES + 1)]:
        del cache[k]
    cache[key] = (tuple(layers), prog)
    return prog
