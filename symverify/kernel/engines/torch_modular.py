"""Exact arithmetic mod a prime ``p < 2^31`` in torch int64, for the randomized verifier.

Every value is a residue ``0 ≤ r < p``. Overflow argument (int64 holds ``< 2^63``):

- a product of two residues is ``≤ (p−1)² < 2^62``; adding a residue or a second such product
  keeps it ``< 2^63`` (``2·(2^31−2)² < 2^63``). So ``(a·b + c) % p`` and ``(α·a + β·b) % p`` are
  computed exactly, reducing after every product-accumulate.
- Dense contractions (``x·W``, Toeplitz blocks) split both operands into 16-bit limbs,
  ``x = x_hi·2^16 + x_lo`` with ``x_lo < 2^16``, ``x_hi < 2^15``, and run four float64 matmuls.
  Every partial sum of a limb product over K terms is an integer ``< K·2^32``; the middle term
  adds two of them, ``< K·2^33``. With ``K ≤ 2^20`` all are ``< 2^53``, hence exact in float64
  whatever the summation order (BLAS, FMA, GPU). The three parts are reduced mod p and
  recombined as ``(hi·(2^32 mod p) + mid·2^16 + lo) mod p``, each term ``< 2^62``.

Convolution: shifts for sparse kernels, blocked direct (Toeplitz) products on limbs for dense ones.
The cost model and the shared kernels are in :mod:`symverify.kernel.engines.kernels`. Models run in the
one layer loop of :mod:`symverify.kernel.semantics.layer`, with :class:`ModularArithmetic` as its backend;
circuits run as straight-line code in numpy int64 lanes (:func:`run_circuit_mod`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from symverify.deadline import Check
from symverify.errors import IRError, ShapeError
from symverify.kernel.engines._torch import one_thread_if_small, require_torch
from symverify.kernel.engines.kernels import Pool, conv_blocked, conv_shifts
from symverify.kernel.engines.numbers import ModNumbers, check_params
from symverify.kernel.engines.plan import LayerPlan, ModelPlan
from symverify.kernel.engines.states import TorchStates
from symverify.kernel.engines.states import gather as _gather
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import plain_int
from symverify.kernel.primes import is_prime
from symverify.kernel.semantics import layer as loop
from symverify.kernel.semantics.straightline import eval_mod_lanes, program

if TYPE_CHECKING:
    import torch

__all__ = ["run_model_mod", "ModularArithmetic", "run_circuit_mod", "check_prime", "check_residues",
           "limb_contract", "MAX_CONTRACTION"]

MAX_CONTRACTION = 2**20  # K above which limb partial sums could reach 2^53


def check_prime(p: object) -> int:
    """Validate the modulus: a prime with ``p < 2^31`` (so products of residues fit in int64),
    returned as a plain ``int`` (an ``int`` subclass is read as the int of its value: its ``__rmod__``
    would answer every ``x % p`` of the plans and the rings)."""
    p = plain_int(p)
    if not isinstance(p, int) or isinstance(p, bool) or not 2 <= p < 2**31 or not _is_prime(p):
        raise IRError(f"modulus p: expected a prime 2 ≤ p < 2^31 (e.g. 2147483647 = 2^31 − 1), found {p!r}")
    return p


@lru_cache(maxsize=256)
def _is_prime(p: int) -> bool:
    """:func:`symverify.kernel.primes.is_prime`, remembered per modulus (every chunk of every trial checks it)."""
    return is_prime(p)


def check_residues(x: torch.Tensor, p: int, where: str = "points") -> None:
    torch = require_torch()
    if not isinstance(x, torch.Tensor) or x.dtype != torch.int64:
        found = f"a {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
        raise IRError(f"{where}: expected an int64 tensor of residues mod {p}, found {found}")
    if x.is_meta:
        raise IRError(f"{where}: expected residues, found a meta tensor of shape {tuple(x.shape)} (it has no data)")
    if x.numel() and (bool((x < 0).any()) or bool((x >= p).any())):
        raise IRError(f"{where}: expected residues in [0, {p}), found values from {int(x.min())} to {int(x.max())}")


def _limbs(x: Any) -> tuple[Any, Any]:
    torch = require_torch()
    return (x & 0xFFFF).to(torch.float64), (x >> 16).to(torch.float64)


def limb_contract(a: Any, b: Any, p: int, contract: Any, k: int) -> Any:
    """``contract(a, b) mod p`` exactly, for residue tensors and a bilinear ``contract`` over K ≤ 2^20 terms."""
    torch = require_torch()
    if k > MAX_CONTRACTION:
        raise ShapeError(f"modular contraction over {k} terms: at most 2^20 keep float64 limb sums exact")
    (alo, ahi), (blo, bhi) = _limbs(a), _limbs(b)

    def part(t: Any) -> Any:
        return t.to(torch.int64) % p

    lo = part(contract(alo, blo))
    mid = part(contract(alo, bhi) + contract(ahi, blo))
    hi = part(contract(ahi, bhi))
    return (hi * (2**32 % p) + mid * 2**16 + lo) % p


def _convolve(lp: LayerPlan, x: Any, p: int, path: str, pool: Pool | None) -> Any:
    kind = lp.path(path)
    if kind == "none":
        return None
    torch = require_torch()
    if kind == "sparse":
        def mac(acc: Any, src: Any, tap: Any, one: bool, first: bool) -> None:
            if first:
                if one:
                    acc.copy_(src)
                else:
                    torch.mul(src, tap, out=acc).remainder_(p)
                return
            term = src + acc if one else (src * tap).add_(acc)
            torch.remainder(term, p, out=acc)

        return conv_shifts(x, lp.lags, lp.taps, lp.unit, lp.cyclic, mac, pool.empty_like(x) if pool else None)
    return conv_blocked(
        x, lp.kernel_dense(), lp.lags, lp.cyclic,
        lambda hm, src: limb_contract(hm, src, p, torch.bmm, hm.shape[-1]),
        lambda tgt, v: torch.remainder(tgt + v, p, out=tgt),
    )


def _project(lp: LayerPlan, x: Any, p: int, pool: Pool | None) -> Any:
    if lp.w_kind == "zero":
        return None
    if lp.w_kind == "dense":
        return limb_contract(x, lp.w, p, lambda a, b: a @ b, lp.w.shape[0])
    torch = require_torch()
    acc = _gather(x, lp.w_idx[0], pool.empty_like(x) if pool else None).mul_(lp.w_coef[0]).remainder_(p)
    for k in range(1, lp.w_idx.shape[0]):
        term = _gather(x, lp.w_idx[k]).mul_(lp.w_coef[k]).add_(acc)
        torch.remainder(term, p, out=acc)
    return acc


def _affine(core: Any, bias: Any, p: int) -> Any:
    """``(core + bias) mod p``; core, when present, is fresh and full-size and is updated in place."""
    if core is None:
        return bias
    return core if bias is None else core.add_(bias).remainder_(p)


@dataclass(frozen=True)
class ModularArithmetic(TorchStates):
    """The layer on int64 residues mod ``p``: every branch and product reduced mod p (see the
    module docstring for why nothing overflows); branches as in
    :class:`~symverify.executors.torch_float.FloatArithmetic`."""

    p: int
    path: str = "auto"
    pool: Pool | None = None

    def convolve(self, lp: LayerPlan, x: Any) -> Any:
        return _affine(_convolve(lp, x, self.p, self.path, self.pool), lp.b2.value(self.p), self.p)

    def project(self, lp: LayerPlan, x: Any, conv: Any) -> Any:
        return _affine(_project(lp, x, self.p, self.pool), lp.b1.value(self.p), self.p)

    def combine(self, lp: LayerPlan, x: Any, proj: Any, conv: Any) -> Any:
        """``proj ⊙ conv mod p`` (a full-size branch is fresh and takes the product in place)."""
        p = self.p
        if conv is None or proj is None:
            y = require_torch().zeros_like(x)
        elif conv.shape == x.shape:
            y = conv.mul_(proj).remainder_(p)
        elif proj.shape == x.shape:
            y = proj.mul_(conv).remainder_(p)
        else:
            y = ((proj * conv) % p).expand_as(x)
        return self._recycle(y, proj, conv)


def run_model_mod(plan: ModelPlan, x: torch.Tensor, path: str = "auto", check: Check | None = None) -> torch.Tensor:
    """The model on ``(B, N, d)`` residues mod ``plan.numbers.p``; ``check`` runs before every layer."""
    torch = require_torch()
    arith = ModularArithmetic(plan.numbers.p, path, Pool())
    layers = plan.on(x.device, torch.int64)
    with one_thread_if_small(x.shape[0] * plan.model.inner_n * plan.model.inner_d, x.device):
        return loop.run_model(plan.model, layers, x, arith, check)


def run_circuit_mod(c: Circuit, x: torch.Tensor, numbers: ModNumbers, check: Check | None = None) -> torch.Tensor:
    """The circuit on ``(B, n, d)`` residues mod ``numbers.p``, as straight-line code in numpy int64
    lanes (:func:`~symverify.kernel.semantics.straightline.eval_mod_lanes`; every product of residues is
    below ``2^62``); the result is on ``x``'s device. ``check`` runs before every level."""
    import numpy as np

    check_params(c, numbers)
    prog, ring, B, p = program(c), numbers.ring(), x.shape[0], numbers.p
    try:
        coeffs = np.array([ring.coerce(v) for v in prog.scalars], dtype=np.int64).reshape(-1, 1).repeat(B, axis=1)
    except IRError as e:
        raise type(e)(f"circuit {c.name or '<unnamed>'}, a weight mod {p}: {e}") from None
    vals = eval_mod_lanes(prog, x.cpu().numpy().reshape(B, c.num_inputs).T, np.full(B, p, dtype=np.int64), coeffs, check)
    out = np.zeros((c.num_inputs, B), dtype=np.int64)
    if c.outputs:
        out[: len(c.outputs)] = vals[list(c.outputs)]
    return require_torch().from_numpy(np.ascontiguousarray(out.T.reshape(B, c.n, c.d))).to(x.device)
