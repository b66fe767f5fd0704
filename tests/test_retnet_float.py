"""Float cross-check of the RetNet models against an independent torch RetNet (not a proof).

The reference is written here from Algorithm 6 alone, in two forms that must agree: the
recurrence ``z^n = γ·z^{n−1} + A[n]ᵀV[n]``, ``y[n] = C[n]·z^n``, and the parallel form
``Y = (C·Aᵀ ⊙ D)·V`` with ``D[n, i] = γ^{n−i}`` for ``i ≤ n`` and 0 above the diagonal. The
BaseConv models (direct constructions, their stacks, and the Theorem H.21 compilations) run on
symverify's float executor with the same weights.
"""

from fractions import Fraction

import pytest
import torch

from symverify.compiler import compile
from symverify.compiler.retnet import retnet_direct, retnet_stack_direct
from symverify.executors import execute
from symverify.library import retnet, retnet_weights


def recurrent(u, gamma, WA, WC, WV):
    A, C, V = u @ WA, u @ WC, u @ WV
    d = u.shape[-1]
    z = torch.zeros(u.shape[0], d, d, dtype=u.dtype)
    ys = []
    for n in range(u.shape[1]):
        z = gamma * z + A[:, n, :, None] * V[:, n, None, :]
        ys.append(torch.einsum("bp,bpq->bq", C[:, n], z))
    return torch.stack(ys, dim=1)


def parallel(u, gamma, WA, WC, WV):
    A, C, V = u @ WA, u @ WC, u @ WV
    N = u.shape[1]
    n = torch.arange(N)
    lag = (n[:, None] - n[None, :]).to(u.dtype)
    D = torch.where(lag >= 0, torch.as_tensor(gamma, dtype=u.dtype) ** lag.clamp(min=0), torch.zeros((), dtype=u.dtype))
    return ((C @ A.transpose(1, 2)) * D) @ V


def _weights(d, seed):
    g = torch.Generator().manual_seed(seed)
    mats = [torch.randint(-3, 4, (d, d), generator=g) for _ in range(3)]
    return [[[Fraction(int(v)) for v in row] for row in M.tolist()] for M in mats]


def _params(prefix, gamma, WA, WC, WV):
    out = {f"{prefix}gamma": gamma}
    for name, M in (("W_A", WA), ("W_C", WC), ("W_V", WV)):
        out.update({f"{prefix}{name}[{p}][{q}]": M[p][q] for p in range(len(M)) for q in range(len(M))})
    return out


def _t(M):
    return torch.tensor([[float(v) for v in row] for row in M], dtype=torch.float64)


def _u(B, N, d, seed):
    return torch.randn(B, N, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _close(a, b):
    scale = max(1.0, float(b.abs().max()))
    assert float((a - b).abs().max()) <= 1e-9 * scale, float((a - b).abs().max())


@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(-3, 4), Fraction(1), Fraction(0)])
@pytest.mark.parametrize("N,d", [(1, 1), (5, 2), (16, 3), (33, 4)])
def test_reference_forms_agree(N, d, gamma):
    WA, WC, WV = (_t(M) for M in _weights(d, N))
    u = _u(3, N, d, d)
    _close(recurrent(u, float(gamma), WA, WC, WV), parallel(u, float(gamma), WA, WC, WV))


@pytest.mark.parametrize("N,d,gamma,group", [(N, d, g, group) for N, d, g in [(8, 2, Fraction(1, 2)), (32, 4, Fraction(-9, 10)),
                                                                           (64, 3, Fraction(99, 100))]
                                              for group in (None, 1, 2) if group is None or group <= d])
def test_direct_model_matches_reference(N, d, gamma, group):
    WA, WC, WV = _weights(d, N + d)
    u = _u(4, N, d, 1)
    want = recurrent(u, float(gamma), _t(WA), _t(WC), _t(WV))
    symbolic = retnet_direct(N, d, group=group).model
    _close(execute(symbolic, u, backend="torch", params=_params("", gamma, WA, WC, WV)), want)
    numeric = retnet_direct(N, d, gamma, WA, WC, WV, group=group).model
    _close(execute(numeric, u, backend="torch"), want)


@pytest.mark.parametrize("fuse", [False, True])
def test_direct_stack_matches_reference(fuse):
    N, d = 12, 3
    ws = [(Fraction(1, 2), *_weights(d, 1)), (Fraction(-1, 3), *_weights(d, 2)), (Fraction(4, 5), *_weights(d, 3))]
    u = _u(2, N, d, 5)
    want = u
    for g, WA, WC, WV in ws:
        want = recurrent(want, float(g), _t(WA), _t(WC), _t(WV))
    model = retnet_stack_direct(N, d, [retnet_weights(d, *w) for w in ws], fuse=fuse).model
    _close(execute(model, u, backend="torch"), want)
    params = {}
    for k, w in enumerate(ws):
        params.update(_params(f"L{k}.", *w))
    _close(execute(retnet_stack_direct(N, d, 3, fuse=fuse).model, u, backend="torch", params=params), want)


@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
def test_h21_compilations_match_reference(method):
    N, d, gamma = 6, 2, Fraction(3, 4)
    WA, WC, WV = _weights(d, 9)
    u = _u(3, N, d, 2)
    model = compile(retnet(N, d, gamma, WA, WC, WV), method=method).model
    _close(execute(model, u, backend="torch"), parallel(u, float(gamma), _t(WA), _t(WC), _t(WV)))
