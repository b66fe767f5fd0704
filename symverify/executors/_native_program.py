"""A compiled program's elementwise operations run by one native (C) call per run of them.

A program (:mod:`symverify.executors.program`) of a compiled model is ~2000 small torch calls
(``zero_``, ``copy_``, ``mul``, ``add``, ``addcmul``, ``gather``, ``mm``) for ~500 layers; at
small batches each call costs more in dispatch than in arithmetic. :func:`segments` turns the
operation list into *segments*: every maximal run of elementwise operations becomes one array of
descriptors executed by one call of the C interpreter below; an operation it does not take
(``mm``: torch's product sums with fused multiply-adds in its vector body and without them in
its column tail, an order tied to the layout, not reproduced here; any operand of another dtype or device; a
shape that does not broadcast) stays a torch call between two segments.

Each descriptor is 20 int64: ``kind, n0, n1, n2`` and, for the destination and up to three
operands, ``pointer, stride0, stride1, stride2`` (in elements; a broadcast axis has stride 0),
with the three axes collapsed where every operand is contiguous across them. Kinds and roundings
(the same as torch's CPU kernels, measured bit for bit: ``addcmul`` is a fused multiply-add)::

    ZERO  d = +0        COPY  d = a        ADD  d = a + b        MUL  d = a·b
    FMA   d = fma(b, c, a)          (torch.addcmul(a, b, c), a.addcmul_(b, c))

``gather`` along the channel axis with an index constant per channel (a signed-permutation
projection) becomes one ``COPY`` per output channel. Operations run in the program's order, each
over its elements in row-major order, so a program gives the same bits with or without native
segments. The library is :mod:`symverify._native`'s (optional: without it every operation is a
torch call, as before).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from symverify._native import load

__all__ = ["SOURCE", "segments", "library"]

ZERO, COPY, ADD, MUL, FMA, MM = range(6)
WIDTH = 20  # int64 per descriptor

SOURCE = r"""
#include <stdint.h>

/* one operation: the outer two axes by pointer steps, the inner one with the steps DS..CS
   (constants 1 or 0 in the specialised loops, so they vectorise) */
#define NEST(T, OP, DS, AS, BS, CS) {                                                              \
    T *d0 = (T *)(intptr_t)o[4];                                                                   \
    const T *a0 = (const T *)(intptr_t)o[8], *b0 = (const T *)(intptr_t)o[12];                     \
    const T *c0 = (const T *)(intptr_t)o[16];                                                      \
    for (int64_t i0 = 0; i0 < n0; ++i0, d0 += o[5], a0 += o[9], b0 += o[13], c0 += o[17]) {       \
        T *d = d0;                                                                                 \
        const T *a = a0, *b = b0, *c = c0;                                                         \
        for (int64_t i1 = 0; i1 < n1; ++i1, d += o[6], a += o[10], b += o[14], c += o[18]) {       \
            _Pragma("GCC ivdep")                                                                   \
            for (int64_t i = 0; i < n2; ++i)                                                       \
                d[i * (DS)] = OP(a[i * (AS)], b[i * (BS)], c[i * (CS)]);                           \
        }                                                                                          \
    }                                                                                              \
}

#define DISPATCH(T, OP)                                                                            \
    if (ds == 1 && as == 1 && bs == 1 && cs == 1) NEST(T, OP, 1, 1, 1, 1)                          \
    else if (ds == 1 && as == 1 && bs == 1 && cs == 0) NEST(T, OP, 1, 1, 1, 0)                     \
    else if (ds == 1 && as == 1 && bs == 0 && cs == 0) NEST(T, OP, 1, 1, 0, 0)                     \
    else if (ds == 1 && as == 0 && bs == 0 && cs == 0) NEST(T, OP, 1, 0, 0, 0)                     \
    else NEST(T, OP, ds, as, bs, cs)

#define OP_ZERO(x, y, z) 0
#define OP_COPY(x, y, z) (x)
#define OP_ADD(x, y, z) ((x) + (y))
#define OP_MUL(x, y, z) ((x) * (y))
#define OP_FMA64(x, y, z) __builtin_fma((y), (z), (x))
#define OP_FMA32(x, y, z) __builtin_fmaf((y), (z), (x))

#define PROG(NAME, T, OP_FMA)                                                                      \
void NAME(const int64_t *ops, int64_t nops) {                                                      \
    for (int64_t k = 0; k < nops; ++k) {                                                           \
        const int64_t *o = ops + k * 20;                                                           \
        const int64_t n0 = o[1], n1 = o[2], n2 = o[3];                                             \
        const int64_t ds = o[7], as = o[11], bs = o[15], cs = o[19];                               \
        if (o[0] == 5) { /* d[i, m] = a[i, 0]·b[0, m], then fma over k in order (torch.mm's body) */  \
            T *D = (T *)(intptr_t)o[4];                                                            \
            const T *A = (const T *)(intptr_t)o[8], *Bm = (const T *)(intptr_t)o[12];              \
            /* columns in chunks of 256: a chunk of every row of b stays in cache over all i */    \
            for (int64_t m0 = 0; m0 < n2; m0 += 256) {                                             \
                const int64_t m1 = m0 + 256 < n2 ? m0 + 256 : n2;                                  \
                for (int64_t i = 0; i < n0; ++i) {                                                 \
                    T *d = D + i * o[5];                                                           \
                    const T *a = A + i * o[9];                                                     \
                    if (n1 == 0) { for (int64_t m = m0; m < m1; ++m) d[m * ds] = 0; continue; }    \
                    const T a0 = a[0];                                                             \
                    if (ds == 1 && bs == 1) {                                                      \
                        _Pragma("GCC ivdep")                                                       \
                        for (int64_t m = m0; m < m1; ++m) d[m] = a0 * Bm[m];                       \
                        for (int64_t k = 1; k < n1; ++k) {                                         \
                            const T ak = a[k * o[10]];                                             \
                            const T *bk = Bm + k * o[13];                                          \
                            _Pragma("GCC ivdep")                                                   \
                            for (int64_t m = m0; m < m1; ++m) d[m] = OP_FMA(d[m], ak, bk[m]);      \
                        }                                                                          \
                    } else {                                                                       \
                        for (int64_t m = m0; m < m1; ++m) d[m * ds] = a0 * Bm[m * bs];             \
                        for (int64_t k = 1; k < n1; ++k) {                                         \
                            const T ak = a[k * o[10]];                                             \
                            const T *bk = Bm + k * o[13];                                          \
                            for (int64_t m = m0; m < m1; ++m) d[m * ds] = OP_FMA(d[m * ds], ak, bk[m * bs]); \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            continue;                                                                              \
        }                                                                                          \
        switch (o[0]) {                                                                            \
        case 0: DISPATCH(T, OP_ZERO) break;                                                        \
        case 1: DISPATCH(T, OP_COPY) break;                                                        \
        case 2: DISPATCH(T, OP_ADD) break;                                                         \
        case 3: DISPATCH(T, OP_MUL) break;                                                         \
        case 4: DISPATCH(T, OP_FMA) break;                                                         \
        }                                                                                          \
    }                                                                                              \
}

PROG(prog_f64, double, OP_FMA64)
PROG(prog_f32, float, OP_FMA32)
"""



def library() -> Any:
    """The compiled interpreter (``prog_f64``, ``prog_f32``), or None (:func:`symverify._native.load`)."""
    return load("program", SOURCE, ("prog_f64", "prog_f32"))


def _collapse(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """Axes of length 1 dropped and adjacent axes merged where every operand steps evenly across
    them; padded in front to three axes (``shape`` has three: the result never has more)."""
    axes = [(n, [s[i] for s in strides]) for i, n in enumerate(shape) if n != 1]
    out: list[tuple[int, list[int]]] = []
    for n, st in axes:
        if out:
            pn, pst = out[-1]
            if all(ps == n * s for ps, s in zip(pst, st)):
                out[-1] = (pn * n, st)
                continue
        out.append((n, st))
    while len(out) < 3:
        out.insert(0, (1, [0] * len(strides)))
    return [n for n, _ in out], [[st[i] for _, st in out] for i in range(len(strides))]


def _descriptor(kind: int, dst: Any, srcs: Sequence[Any], dtype: Any) -> list[int] | None:
    """The descriptor of ``dst = kind(srcs)``, or None when an operand is not of ``dtype`` on the
    CPU or does not broadcast to ``dst``."""
    ops = [dst]
    for s in srcs:
        if not hasattr(s, "expand") or s.dtype != dtype or not s.is_cpu:
            return None
        try:
            ops.append(s.expand(dst.shape))
        except RuntimeError:
            return None
    if dst.dtype != dtype or not dst.is_cpu or dst.dim() > 3 or dst.numel() == 0:
        return None
    shape = [1] * (3 - dst.dim()) + list(dst.shape)
    strides = [[0] * (3 - dst.dim()) + list(t.stride()) for t in ops]
    dims, st = _collapse(shape, strides)
    row = [kind, *dims]
    for i in range(4):  # an unused operand slot points at the destination with zero steps (never read)
        row += [ops[i].data_ptr(), *st[i]] if i < len(ops) else [dst.data_ptr(), 0, 0, 0]
    return row


def _mm(out: Any, a: Any, b: Any, dtype: Any) -> list[list[int]] | None:
    """The descriptor of ``out = a @ b`` (2-d, all of ``dtype`` on the CPU), or None."""
    ts = (out, a, b)
    if any(not hasattr(t, "dim") or t.dim() != 2 or t.dtype != dtype or not t.is_cpu for t in ts):
        return None
    (n0, k), (k2, m) = a.shape, b.shape
    if k2 != k or tuple(out.shape) != (n0, m) or out.numel() == 0:
        return None
    (d0, d1), (a0, a1), (b0, b1) = out.stride(), a.stride(), b.stride()
    return [[MM, n0, k, m, out.data_ptr(), d0, 0, d1, a.data_ptr(), a0, a1, 0, b.data_ptr(), b0, 0, b1,
             out.data_ptr(), 0, 0, 0]]


def _describe(fn: Any, args: tuple[Any, ...], dtype: Any) -> list[list[int]] | None:
    """The descriptors of one program operation, or None when it stays a torch call."""
    import torch

    if isinstance(fn, partial):
        out, f = fn.keywords.get("out"), fn.func
        if out is None or fn.args:
            return None
        if f is torch.add and len(args) == 2:
            d = _descriptor(ADD, out, args, dtype)
        elif f is torch.mul and len(args) == 2:
            d = _descriptor(MUL, out, args, dtype)
        elif f is torch.addcmul and len(args) == 3:
            d = _descriptor(FMA, out, args, dtype)
        elif f is torch.mm and len(args) == 2:
            return _mm(out, *args, dtype)
        elif f is torch.gather and len(args) == 3 and args[1] == 0 and out.dim() == 3 and out.shape[0] > 0:
            src, _, idx = args
            constant = all(st == 0 or n == 1 for n, st in zip(idx.shape[1:], idx.stride()[1:]))  # one index per channel
            if idx.shape != out.shape or not constant or src.shape[1:] != out.shape[1:]:
                return None
            picks = idx[:, 0, 0].tolist()
            if not all(0 <= i < src.shape[0] for i in picks):
                return None
            rows = [_descriptor(COPY, out[c], (src[int(i)],), dtype) for c, i in enumerate(picks)]
            return None if any(r is None for r in rows) else rows  # type: ignore[return-value]
        else:
            return None
        return None if d is None else [d]
    dst, name = getattr(fn, "__self__", None), getattr(fn, "__name__", "")
    if not isinstance(dst, torch.Tensor):
        return None
    if name == "zero_" and not args:
        d = _descriptor(ZERO, dst, (), dtype)
    elif name == "copy_" and len(args) == 1:
        d = _descriptor(COPY, dst, args, dtype)
    elif name == "add_" and len(args) == 1:
        d = _descriptor(ADD, dst, (dst, *args), dtype)
    elif name == "mul_" and len(args) == 1:
        d = _descriptor(MUL, dst, (dst, *args), dtype)
    elif name == "addcmul_" and len(args) == 2:
        d = _descriptor(FMA, dst, (dst, *args), dtype)
    else:
        return None
    return None if d is None else [d]


def segments(ops: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]], dtype: Any) -> list[Callable[[], Any]] | None:
    """The operations as a list of calls: one native call per maximal run of elementwise
    operations, the rest as they are; None when the library is not available or ``dtype`` is not
    float64 or float32. The calls read and write the program's own buffers and constants (the
    ``ops`` keep them alive)."""
    import torch

    lib = library()
    if lib is None or dtype not in (torch.float64, torch.float32):
        return None
    fn = lib.prog_f64 if dtype == torch.float64 else lib.prog_f32
    out: list[Callable[[], Any]] = []
    run: list[list[int]] = []

    def flush() -> None:
        if run:
            table = torch.tensor(run, dtype=torch.int64)
            out.append(partial(_call, fn, table, ctypes.c_void_p(table.data_ptr()), ctypes.c_int64(len(run))))
            run.clear()

    for f, args in ops:
        rows = _describe(f, args, dtype)
        if rows is None:
            flush()
            out.append(partial(f, *args))
        else:
            run.extend(rows)
    flush()
    return out


def _call(fn: Any, table: Any, ptr: Any, count: Any) -> None:
    """One native segment (``table`` is held here so that ``ptr`` stays valid)."""
    fn(ptr, count)
