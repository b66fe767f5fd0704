"""A native (C) kernel for the butterfly stages of :mod:`symverify.kaleidoscope._torch_module`.

Stage ``k`` of stride ``s`` maps, in place, every pair ``(x[2s·j + t], x[2s·j + s + t])`` to::

    y0 = fma(T1[j, 0, t], x1, T0[j, 0, t]·x0),    y1 = fma(T1[j, 1, t], x1, T0[j, 1, t]·x0)

(the stage form of :mod:`symverify.kaleidoscope.numeric`): the product ``T0·x0`` rounded, then one
fused multiply-add, which are the roundings of the torch stage form's ``mul`` then ``addcmul_``
(torch's CPU ``addcmul`` is a fused multiply-add, measured on every size and on broadcast
factors); nothing else is contracted (:mod:`symverify._native`), so the result is the same bit for bit. One call runs all
stages on a ``(B, N)`` batch (the first stage may read another buffer, the input, so that a
contiguous input is never copied), rows in chunks of ``R`` (about 256 KiB of state), every stage over a
chunk before the next stage, so a chunk stays in cache across the stages and each stage's twiddles
are read once per chunk. A batch of 1 MiB or more is split into row blocks run on up to
``torch.get_num_threads()`` threads at once (each call releases the GIL). Twiddles are packed as ``(stages, 2, N)``: ``T0`` then ``T1``, each the
``(N/(2s), 2, s)`` array flattened.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from functools import partial
from typing import Any

from symverify._native import load
from symverify.errors import ShapeError

__all__ = ["SOURCE", "Kernel", "bind", "library"]

SOURCE = r"""
#include <stdint.h>

/* one stage of stride s on one row: pairs of x (read) into z (written); X_Q / Z_Q qualify the
   row pointers (restrict where they are distinct rows, nothing where they are the same row) */
#define STAGE(T, FMA, XQ, ZQ)                                                                      \
    if (s == 1) {                                                                                  \
        _Pragma("GCC ivdep")                                                                       \
        for (int64_t p = 0; p < N; p += 2) {                                                       \
            T x0 = x[p], x1 = x[p + 1];                                                            \
            z[p] = FMA(t1[p], x1, t0[p] * x0);                                                     \
            z[p + 1] = FMA(t1[p + 1], x1, t0[p + 1] * x0);                                         \
        }                                                                                          \
    } else {                                                                                       \
        for (int64_t base = 0; base < N; base += 2 * s) {                                          \
            const T *XQ xa = x + base, *XQ xb = x + base + s;                                      \
            T *ZQ za = z + base, *ZQ zb = z + base + s;                                            \
            const T *restrict a0 = t0 + base, *restrict a1 = t0 + base + s;                        \
            const T *restrict b0 = t1 + base, *restrict b1 = t1 + base + s;                        \
            _Pragma("GCC ivdep")                                                                   \
            for (int64_t t = 0; t < s; ++t) {                                                      \
                T x0 = xa[t], x1 = xb[t];                                                          \
                za[t] = FMA(b0[t], x1, a0[t] * x0);                                                \
                zb[t] = FMA(b1[t], x1, a1[t] * x0);                                                \
            }                                                                                      \
        }                                                                                          \
    }

/* all stages on the rows of y; when src != y the first stage reads the rows of src */
#define BFLY(NAME, T, FMA)                                                                         \
void NAME(int64_t N, int64_t nst, const int64_t *strides, const T *restrict tw, int64_t R,        \
          T *y, int64_t B, const T *src) {                                                         \
    for (int64_t r0 = 0; r0 < B; r0 += R) {                                                        \
        int64_t r1 = r0 + R < B ? r0 + R : B;                                                      \
        for (int64_t k = 0; k < nst; ++k) {                                                        \
            const int64_t s = strides[k];                                                          \
            const T *restrict t0 = tw + k * 2 * N;                                                 \
            const T *restrict t1 = t0 + N;                                                         \
            for (int64_t r = r0; r < r1; ++r) {                                                    \
                if (k == 0 && src != y) {                                                          \
                    const T *restrict x = src + r * N;                                             \
                    T *restrict z = y + r * N;                                                     \
                    STAGE(T, FMA, restrict, restrict)                                              \
                } else {                                                                           \
                    T *restrict z = y + r * N;                                                     \
                    T *x = z;                                                                      \
                    STAGE(T, FMA, , )                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
}

BFLY(bfly_f64, double, __builtin_fma)
BFLY(bfly_f32, float, __builtin_fmaf)
"""

CHUNK_BYTES = 1 << 18  # rows per chunk: about this much state
PARALLEL_BYTES = 1 << 20  # batches of at least this much state split over torch's threads


def library() -> Any:
    """The compiled kernels (``bfly_f64``, ``bfly_f32``), or None (:func:`symverify._native.load`)."""
    return load("butterfly", SOURCE, ("bfly_f64", "bfly_f32"))


class Kernel:
    """The kernel bound to one product's packed twiddles in one dtype: ``kernel(y)`` runs every
    stage in place on ``y``, a contiguous CPU ``(B, N)`` tensor of that dtype."""

    def __init__(self, fn: Any, N: int, strides: Any, packed: Any) -> None:
        self.N, self.dtype = N, packed.dtype
        self._parallel_rows = max(1, -(-PARALLEL_BYTES // (N * packed.element_size())))
        self._keep = (strides, packed)  # the pointers bound below stay valid while these live
        c = ctypes
        self._call = partial(fn, c.c_int64(N), c.c_int64(strides.numel()), c.c_void_p(strides.data_ptr()),
                             c.c_void_p(packed.data_ptr()), c.c_int64(max(1, CHUNK_BYTES // (N * packed.element_size()))))

    def __call__(self, y: Any) -> None:
        if not (y.is_contiguous() and y.dtype == self.dtype and y.is_cpu and y.dim() == 2 and y.shape[1] == self.N):
            raise ShapeError(f"native butterfly kernel: expected a contiguous CPU ({self.N}-column) {self.dtype} matrix, "
                             f"found {tuple(y.shape)} {y.dtype}")
        self.run_unchecked(y)

    def run_unchecked(self, y: Any, src: Any = None) -> None:
        """As calling the kernel, for a ``y`` the caller made itself (contiguous, right shape and
        dtype); with ``src`` (the same shape, dtype and layout) the first stage reads ``src``
        instead of ``y``, so ``y`` need not hold a copy of the input.

        A batch of at least ``PARALLEL_BYTES`` is split into row blocks run concurrently on up to
        ``torch.get_num_threads()`` threads (the call releases the GIL; rows are independent, so
        the result is the same)."""
        B, c = y.shape[0], ctypes
        if B >= self._parallel_rows and B > 1:
            import torch

            threads = min(torch.get_num_threads(), B)
            if threads > 1:
                src = y if src is None else src
                step = -(-B // threads)
                parts = [(y[i : i + step], src[i : i + step]) for i in range(0, B, step)]
                list(_pool(threads).map(lambda p: self._run(*p), parts))
                return
        self._call(c.c_void_p(y.data_ptr()), c.c_int64(B), c.c_void_p((y if src is None else src).data_ptr()))

    def _run(self, y: Any, src: Any) -> None:
        c = ctypes
        self._call(c.c_void_p(y.data_ptr()), c.c_int64(y.shape[0]), c.c_void_p(src.data_ptr()))


_pools: dict[int, Any] = {}
_pools_lock = threading.Lock()


def _pool(threads: int) -> Any:
    """A thread pool of ``threads`` workers (kept per size)."""
    with _pools_lock:
        if threads not in _pools:
            from concurrent.futures import ThreadPoolExecutor

            _pools[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="symverify-butterfly")
        return _pools[threads]


def bind(N: int, strides: Sequence[int], stages: Sequence[tuple[Any, Any]], dtype: Any) -> Kernel | None:
    """The kernel for stages of ``strides`` with float64 numpy twiddles ``(T0, T1)`` each
    ``(N/(2s), 2, s)``, rounded to ``dtype`` (torch float64 or float32); None when the native
    library is not available or the dtype is another."""
    import numpy as np
    import torch

    lib = library()
    if lib is None or dtype not in (torch.float64, torch.float32) or not strides:
        return None
    st = torch.tensor(list(strides), dtype=torch.int64)
    packed = np.stack([np.stack((np.asarray(t0, dtype=np.float64).reshape(-1), np.asarray(t1, dtype=np.float64).reshape(-1)))
                       for t0, t1 in stages])
    tw = torch.from_numpy(packed).to(dtype).contiguous()
    return Kernel(lib.bfly_f64 if dtype == torch.float64 else lib.bfly_f32, N, st, tw)
