"""Lemma H.18: ``u ↦ M·vec(u)`` for ``M ∈ (BB*)^w_e`` is a BaseConv with O(w·log(e·n·d)) layers.

Every kaleidoscope in the sweep is compiled factor by factor (Lemma H.16 gadgets, the sums fused
into the next gadget; :func:`~symverify.compiler.butterfly_to_baseconv.kaleidoscope_model`) and
the model is proved equal to the linear circuit of the kaleidoscope's exact matrix (its stage
certificate, and global exact expansion). Kaleidoscopes: random ``(BB*)^w`` with rational and
with symbolic entries, expansions ``e > 1`` (the ``S·E·Sᵀ`` corner), ``d`` not a power of two
(two extra Beneš permutations move ``vec(u)`` to contiguous positions), and the outputs of the
constructions of Dao et al. (a permutation, Theorem 2; a sparse matrix, Theorem 3), and the layout's
edge ``N_k = tw`` (a swap on 1×2: ``R = 1``, an empty gap, ``N' = 3``).

Stated constants (**c18 = 4**), all computed from the kaleidoscope's size ``N = e·n·d`` (rounded
up), ``n`` and ``d`` before anything is built: ``N_k = N`` when d is a power of two, else
``max(N, 2^⌈log2(2·n·tw)⌉)`` (``tw`` the largest power of two ``≤ d``); ``L ≤ 4·w'·log2(N_k) + 1``
(``+ 4`` gather/scatter layers when d is not a power of two) with ``w' = w`` (``w + 2`` then: the
two Beneš permutations), inner length ``N' ≤ 3·(R + ⌊R/2⌋)`` with ``R = N_k/tw`` (``4.5·N_k/tw`` for
``R ≥ 2``, 3 at ``R = 1``) and inner width ``d' = d``.
"""

from __future__ import annotations

import random
import time
from fractions import Fraction

from symverify.compiler.butterfly_to_baseconv import C18, kaleidoscope_factors, kaleidoscope_model
from symverify.ir.build import from_matrix
from symverify.kaleidoscope import SparseMatrix, permutation_to_kaleidoscope, sparse_to_kaleidoscope, to_matrix
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.scalar import Scalar, sym
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.verification import verify
from symverify.parametric import library as forall_library
from symverify.scripts.instances import forall_instance
from symverify.scripts.protocol import Instance, ProofResult, each, script_main

TITLE = "Lemma H.18 ((BB*)^w_e on vec(u) is a cyclic BaseConv, proved exactly; checked: L ≤ 4·w'·log2 N_k + 1 (+4), N' ≤ 4.5·N_k/tw, d' = d)"
SHARDABLE = True  # one group of instances per case, independent of the others
COST = 3.9  # CPU seconds of the full tier, measured (orders and splits a parallel run)


def random_bbstar(rng: random.Random, size: int, symbolic: str = "") -> BBStar:
    vals: list[Scalar] = [0, 1, 1, -1, 2, Fraction(1, 3)]
    fs = []
    for j, s in enumerate(bbstar_strides(size)):
        if symbolic:
            diags = [tuple(sym(f"{symbolic}{j}_{k}_{m}") for m in range(size // 2)) for k in range(4)]
        else:
            diags = [tuple(rng.choice(vals) for _ in range(size // 2)) for _ in range(4)]
        fs.append(ButterflyFactor(size, s, *diags))
    return BBStar(size, tuple(fs))


def _rng(name: str) -> random.Random:
    """The random source of the case ``name`` alone (a str seed: the same draw in every process, whatever
    its hash seed), so a case has the same matrix in the quick and the full tier and in every shard."""
    return random.Random(f"lemma_h18 {name}")


def cases(quick: bool) -> list[tuple[str, Kaleidoscope, int, int]]:
    out: list[tuple[str, Kaleidoscope, int, int]] = []
    shapes = [(4, 1, 4, 1), (2, 2, 8, 2), (3, 1, 8, 1), (2, 3, 8, 1), (4, 4, 16, 2), (3, 3, 16, 1)]
    if not quick:
        shapes += [(8, 2, 32, 3), (4, 8, 64, 2), (16, 1, 32, 2), (5, 3, 32, 2), (8, 4, 128, 2)]
    for n, d, size, w in shapes:
        name = f"random (BB*)^{w} N={size} on {n}x{d}"
        rng = _rng(name)
        out.append((name, Kaleidoscope(n * d, size, tuple(random_bbstar(rng, size) for _ in range(w))), n, d))
    sym_shapes = [(2, 2, 4)] + ([(4, 2, 8), (2, 3, 8)] if not quick else [])
    for n, d, size in sym_shapes:
        name = f"symbolic BB* N={size} on {n}x{d}"
        out.append((name, Kaleidoscope(n * d, size, (random_bbstar(_rng(name), size, "t"),)), n, d))
    perm = list(range(12))
    _rng("permutation").shuffle(perm)
    out.append(("permutation (Theorem 2) on 4x3", permutation_to_kaleidoscope(perm).kaleidoscope, 4, 3))
    # the layout's edge R = N_k/tw = 1: an empty gap, N' = 3 rows (not 4.5·R)
    out.append(("swap (Theorem 2) N=2 on 1x2", permutation_to_kaleidoscope([1, 0]).kaleidoscope, 1, 2))
    rng = _rng("sparse")
    ents = {(rng.randrange(8), rng.randrange(8)): rng.choice([1, -2, Fraction(3, 4)]) for _ in range(10)}
    out.append(("sparse s=10 (Theorem 3) on 4x2", sparse_to_kaleidoscope(SparseMatrix.from_dict(8, 8, ents)).kaleidoscope, 4, 2))
    return out


def _instance(name: str, K: Kaleidoscope, n: int, d: int) -> Instance:
    start = time.perf_counter()
    circ = from_matrix(to_matrix(K), n, d, name)
    chain = kaleidoscope_model(K, n, d, circ)
    model = chain.model
    cert = check_certificate(circ, model, chain.certificate)
    exact = verify(circ, model, method="exact")
    ok = cert.ok and exact.proved
    lay, _ = kaleidoscope_factors(K, n, d)
    tw = 1 << (d.bit_length() - 1)  # the track width: the largest power of two ≤ d
    gathered = tw != d
    n_k = max(K.size, 1 << (2 * n * tw - 1).bit_length()) if gathered else K.size  # stated a priori (module docstring)
    groups = K.width + (2 if gathered else 0)
    lg = n_k.bit_length() - 1
    R = n_k // tw
    res = {"layers": len(model.layers), "w": K.width, "N_k": lay.size, "inner_n": model.inner_n, "inner_d": model.inner_d,
           "sequence_gadgets": chain.counts["sequence"], "channel_gadgets": chain.counts["channel"], "stages_in_certificate": chain.certificate.num_stages}
    bounds = {"layers": C18 * groups * lg + 1 + (4 if gathered else 0), "N_k": n_k, "inner_n": 3 * (R + R // 2), "inner_d": d}
    detail = "" if ok else f"certificate: {cert.failure}; exact: {exact.verdict.value}"
    return Instance.from_report(name, exact, cert, method="exact+compositional", resources=res, bounds=bounds,
                                seconds=time.perf_counter() - start, detail=detail)


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("lemma_h18_kaleidoscope", TITLE)
    for name, K, n, d in each(cases(quick)):
        result.instances.append(_instance(name, K, n, d))
    for make in (forall_library.gather, forall_library.scatter):  # d not a power of two, every size
        result.instances.append(forall_instance(make()))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
