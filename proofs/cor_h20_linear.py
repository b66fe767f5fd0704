"""Corollary H.20: an (nd, s, Δ, w) linear circuit is an (n, O(Δ·log w), d, O(w), d) BaseConv.

Two routes, each proved against the circuit (stage certificate; global exact expansion when small):

* **literal** (H.19 then H.18): the circuit's matrix as one kaleidoscope ``(BB*)^{5·max(Δ,1)}``
  (:func:`~symverify.kaleidoscope.linear_circuit_to_kaleidoscope`, live-width form, ``N < 8(w+nd)``)
  compiled by :func:`~symverify.compiler.butterfly_to_baseconv.kaleidoscope_model`. The
  certificate's cells are linear forms over the *inputs*. Stated and checked, from ``Δ``, ``w`` and
  ``d`` only: ``w_K ≤ 5·max(Δ,1)``, ``N_k ≤ 16w``, ``L ≤ 4·w'·(⌈log2 w⌉ + 4) + 1`` (``+ 4``
  gather/scatter layers when d is not a power of two; ``w' = w_K``, or ``w_K + 2`` then), which
  follows from Lemma H.18's ``L ≤ 4·w'·log2 N_k + 1`` and ``N_k ≤ 16w``, and, with ``w_K`` replaced
  by its bound, ``L ≤ 4·(5·max(Δ,1) [+ 2])·(⌈log2 w⌉ + 4) + 1 [+ 4]``; Lemma H.18's inner length
  ``N' ≤ 4.5·N_k/tw ≤ 72·w/tw`` (``tw`` the largest power of two ``≤ d``); and ``d' = d``;
* **compiler** (:func:`~symverify.compiler.kaleidoscope.compile_kaleidoscope`, the H.21 pipeline on a
  circuit without products): every layered stage is its own ``(BB*)^{≤5}`` and the certificate
  re-anchors on circuit nodes after every stage; its bounds are those of Theorem H.21
  (``L ≤ 8·(Δ+1)·(a + 2) + 3``, ``L ≤ 24·max(Δ,1)·a + 27``, ``N_k ≤ 4·2^a`` with ``a = ⌈log2 max(w, 2)⌉``, at most
  ``Δ + 1`` linear and ``Δ`` multiplicative stages, ``N' ≤ 18·2^a/tw``), every one checked.
"""

from __future__ import annotations

import time
from fractions import Fraction

from symverify.compiler.butterfly_to_baseconv import C18, kaleidoscope_factors, kaleidoscope_model
from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.kaleidoscope import linear_circuit_to_kaleidoscope
from symverify.kernel.ir.analysis import stats
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.verification import verify
from symverify.library import matvec, prefix_sums, random_linear_circuit, symbolic_mixing, walsh_hadamard
from symverify.scripts.protocol import Decided, Instance, ProofResult, each, script_main

TITLE = "Corollary H.20 (linear circuits → BaseConv via H.19 and H.18, proved exactly; checked: w_K ≤ 5·max(Δ,1), N_k ≤ 16w, L ≤ 4·w'·(⌈log2 w⌉+4)+1, N' ≤ 72w/tw, d' = d; the H.21 compiler within its stated bounds)"
SHARDABLE = True  # one group of instances per case, independent of the others
COST = 6.4  # CPU seconds of the full tier, measured (orders and splits a parallel run)




def circuits(quick: bool) -> list[Circuit]:
    M = [[1, 2, 0, -1], [0, 1, Fraction(1, 2), 0], [3, 0, 0, 1], [0, 0, 1, 1]]
    out = [walsh_hadamard(4, 2), prefix_sums(4, 2), matvec(M, 2, 2), symbolic_mixing(4),
           Circuit(2, 3, (), (5, 4, 3, 0), "selection_2x3"), random_linear_circuit(3, 2, 20, 4, seed=1)]
    if not quick:
        out += [walsh_hadamard(16), walsh_hadamard(8, 4), prefix_sums(32), symbolic_mixing(16),
                random_linear_circuit(8, 4, 200, 10, seed=2, num_outputs=16), random_linear_circuit(5, 3, 120, 12, seed=3)]
    return out


def _checks(c: Circuit, model, cert, exact: bool) -> tuple[tuple[Decided, ...], str]:
    """The certificate check, then (``exact``) the exact method; and what failed."""
    res = check_certificate(c, model, cert)
    if not res.ok:
        return (res,), str(res.failure)
    if exact:
        rep = verify(c, model, method="exact")
        return (res, rep), "" if rep.proved else "global exact expansion differs"
    return (res,), ""


def _log2_ceil(x: int) -> int:
    return max(0, (x - 1).bit_length())


def literal(c: Circuit, exact: bool) -> Instance:
    start = time.perf_counter()
    st = stats(c)
    K = linear_circuit_to_kaleidoscope(c, "live").kaleidoscope
    chain = kaleidoscope_model(K, c.n, c.d, c)
    lay, _ = kaleidoscope_factors(K, c.n, c.d)
    checks, detail = _checks(c, chain.model, chain.certificate, exact)
    gathered = c.d & (c.d - 1) != 0  # d not a power of two: two Beneš permutations and 4 gather/scatter layers
    tw = 1 << (c.d.bit_length() - 1)  # the track width: the largest power of two ≤ d
    wp = K.width + (2 if gathered else 0)
    extra = 4 if gathered else 0
    res = {"depth": st.depth, "width": st.width, "w_K": K.width, "N_k": lay.size, "layers": len(chain.model.layers),
           "layers_thm": len(chain.model.layers), "inner_n": chain.model.inner_n, "inner_d": chain.model.inner_d}
    bounds = {"w_K": 5 * max(st.depth, 1), "N_k": 16 * st.width, "layers": C18 * 5 * max(st.depth, 1) * (_log2_ceil(st.width) + 4) + 1 + extra
              + (2 * C18 * (_log2_ceil(st.width) + 4) if gathered else 0),
              "layers_thm": C18 * wp * (_log2_ceil(st.width) + 4) + 1 + extra,
              "inner_n": Fraction(72 * st.width, tw), "inner_d": c.d}
    return Instance.from_report(f"{c.name} {c.n}x{c.d} [H.19→H.18]", *checks, resources=res, bounds=bounds,
                                seconds=time.perf_counter() - start, detail=detail)


def compiler(c: Circuit, exact: bool) -> Instance:
    start = time.perf_counter()
    out = compile_kaleidoscope(c)
    checks, detail = _checks(c, out.model, out.certificate, exact)
    keys = ("depth", "width", "layers", "layers_thm", "mul_stages", "N_k", "inner_n", "inner_d", "bbstar", "L_over_delta_log2_w")
    res = {k: out.resources[k] for k in dict.fromkeys((*keys, *out.bounds))}  # every stated bound next to its resource
    bounds = dict(out.bounds)
    return Instance.from_report(f"{c.name} {c.n}x{c.d} [compiler]", *checks, resources=res, bounds=bounds,
                                seconds=time.perf_counter() - start, detail=detail)


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("cor_h20_linear", TITLE)
    for c in each(circuits(quick)):
        exact = c.num_inputs <= 16
        result.instances.append(literal(c, exact))
        result.instances.append(compiler(c, exact))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
