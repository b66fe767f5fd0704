"""Linear circuits as kaleidoscope matrices (Zoology Theorem H.19; Dao et al. 2020, Theorem 1).

A linear circuit (docs/theory.md §2: inputs and ``lin`` gates only) on ``n = n_rows·d`` inputs computes
``vec(y) = M·vec(u)`` for an ``n×n`` matrix ``M`` (rows past the output list are 0). Each level
becomes a sparse matrix and each sparse matrix ``(BB*)^5`` (Theorem 3, :mod:`.sparse`); the
pieces are garbage-free, so they are lifted to one size ``N`` (``diag(E, I)``) and concatenated.

* ``mode='live'`` (Theorem H.19, docs/kaleidoscope.md §2.4): the stages of :func:`~symverify.kernel.ir.layered.layered_form`
  map the live state after level ℓ−1 to the live state after level ℓ, the last one to the output
  list. A stage has at most ``W`` rows of ≤ 2 entries (``W`` = the largest state, ``W ≤ w``, the
  cut width), so ``N_ℓ ≤ 2^⌈log2 4W⌉ < 8W``. Result: ``(BB*)^{5·max(Δ, 1)}`` with ``e < 8(w+n)/n``
  (a depth-0 circuit still needs its output selection).
* ``mode='size'`` (Kaleidoscope's proof, docs/kaleidoscope.md §2.3): slot ``v`` holds node ``v`` (``s`` = nodes,
  inputs included); level ℓ's matrix copies every node of level < ℓ and computes level ℓ; a final
  0/1 matrix puts the outputs in order. Result: ``(BB*)^{5(Δ+1)}`` with ``e < 8s/n``.
* ``mode='structured'`` (docs/kaleidoscope.md §2.4, "Structured levels"): when every level is one
  butterfly factor under some placement of its outputs (:mod:`.structured`), those factors and one
  Beneš routing of the outputs, packed into as few BB* as their strides allow (a Walsh–Hadamard
  transform on N points: one BB*, ``log2 N`` non-identity factors); otherwise the ``live`` result.
  Stated: ``w ≤ Δ + 2`` (``≤ Δ + 1`` stages, each opening at most one new BB*, and the routing at
  most one more), at most ``Δ + 1 + 2·log2 N`` non-identity factors, and ``N ≤ 2^⌈log2 max(w, 2)⌉``
  (every position a stage places is below ``2^⌈log2 max(W, n, 2)⌉``, ``n ≤ W ≤ w``), so
  ``e ≤ 2^⌈log2 max(w, 2)⌉/n < 2·max(w, 2)/n``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from symverify.errors import CompileError
from symverify.kaleidoscope.sparse import sparse_to_kaleidoscope
from symverify.kaleidoscope.structured import structured_kaleidoscope
from symverify.kernel.ir.analysis import levels, stats
from symverify.kernel.ir.butterfly import Kaleidoscope, next_power_of_two
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.layered import LinearStage, layered_form
from symverify.kernel.ir.scalar import Scalar, is_zero
from symverify.kernel.kaleidoscope.circuits import check_linear
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import SparseMatrix

__all__ = ["chain", "linear_circuit_to_kaleidoscope"]

Mode = Literal["live", "size", "structured"]


def chain(pieces: list[Factorization], n: int, theorem: str) -> Kaleidoscope:
    """Garbage-free factorizations applied in order, lifted to one size, as one ``n×n`` corner.

    Piece ``k`` maps ``(z_k, 0)`` to ``(z_{k+1}, 0)`` whatever its own corner size is, so the
    concatenation is exact without projectors.
    """
    if not all(p.garbage_free for p in pieces):
        raise CompileError(f"{theorem}: chaining needs garbage-free pieces")
    size = max([p.N for p in pieces] + [max(2, next_power_of_two(n))])
    return Kaleidoscope(n, size, tuple(g for p in pieces for g in p.kaleidoscope.lift(size).groups))


def _live_stages(c: Circuit) -> list[SparseMatrix]:
    out = []
    for st in layered_form(c).stages:
        if not isinstance(st, LinearStage) or any(not is_zero(o) for o in st.offset):
            raise CompileError(f"linear circuit {c.name or '<unnamed>'}: layered stage {st!r} is not linear")
        ents = tuple((r, slot, co) for r, row in enumerate(st.rows) for slot, co in row)
        out.append(SparseMatrix(len(st.outputs), len(st.inputs), ents))
    return out


def _size_stages(c: Circuit, delta: int) -> list[SparseMatrix]:
    lv = levels(c)
    nd, s = c.num_inputs, c.num_nodes
    out = []
    for ell in range(1, delta + 1):
        ents: dict[tuple[int, int], Scalar] = {(v, v): 1 for v in range(s) if lv[v] < ell}
        for k, g in enumerate(c.gates):
            v = nd + k
            if lv[v] == ell:
                for a, co in zip(g.args, g.coeffs):
                    ents[(v, a)] = ents.get((v, a), 0) + co
        out.append(SparseMatrix.from_dict(s, s, ents))
    out.append(SparseMatrix(s, s, tuple((i, o, 1) for i, o in enumerate(c.outputs))))
    return out


def linear_circuit_to_kaleidoscope(c: Circuit, mode: Mode = "live") -> Factorization:
    """``M ∈ (BB*)^{w}_e`` for the matrix ``M`` of the linear circuit ``c`` (see the module doc).

    Resources: ``w`` (BB* factors), ``N``, ``n``, ``e``, and the circuit's ``depth`` Δ,
    ``cut_width``, ``size`` (gates) and ``nodes`` (with inputs); ``live_width`` W in live mode.
    Bounds: live mode ``w ≤ 5·max(Δ, 1)``, ``N ≤ 8(w_cut + n) − 1`` and ``W ≤ w_cut``; size mode
    ``w ≤ 5(Δ+1)``, ``N ≤ 8s − 1``; structured mode ``w ≤ Δ + 2``, ``factors ≤ Δ + 1 + 2·log2 N``
    (non-identity factors, recorded as ``factors``), ``N ≤ 2^⌈log2 max(w_cut, 2)⌉``; ``e`` is
    bounded by the ``N`` figure divided by ``n``.

    >>> from symverify.kernel.ir.circuit import Gate
    >>> f = linear_circuit_to_kaleidoscope(Circuit(2, 1, (Gate.add(0, 1), Gate.sub(0, 1)), (2, 3)))
    >>> f.resources["w"], f.bounds["w"]
    (5, 5)
    """
    check_linear(c)
    st = stats(c)
    n = c.num_inputs
    res: dict[str, int | Fraction] = {"depth": st.depth, "cut_width": st.width, "size": st.size, "nodes": c.num_nodes}
    if mode == "live":
        mats = _live_stages(c)
        res["live_width"] = max([n] + [m.rows for m in mats])
        big = 8 * (st.width + n)
        bounds: dict[str, int | Fraction] = {"w": 5 * max(st.depth, 1), "N": big - 1, "e": Fraction(big, n), "live_width": st.width}
        theorem = "Zoology Theorem H.19 (live-width form, docs/kaleidoscope.md §2.4)"
    elif mode == "structured":
        K = structured_kaleidoscope(layered_form(c).stages, n, len(c.outputs))
        if K is None:
            return linear_circuit_to_kaleidoscope(c, "live")
        res["factors"] = sum(1 for f in K.factor_list().factors if not f.is_identity())
        theorem = "Zoology Theorem H.19, structured levels (one butterfly factor each, docs/kaleidoscope.md §2.4)"
        # ≤ Δ + 1 stages of one factor each (a new BB* at most per stage) and one Beneš routing
        # (2·log2 N factors in BB* order: at most one more BB*); positions stay below
        # 2^⌈log2 max(W, n, 2)⌉ with n ≤ W ≤ w (docs/kaleidoscope.md §2.4).
        top = next_power_of_two(max(st.width, 2))
        bounds = {"w": st.depth + 2, "factors": st.depth + 1 + 2 * (K.size.bit_length() - 1), "N": top,
                  "e": Fraction(top, n)}
        return Factorization(K, theorem, garbage_free=True, resources=res, bounds=bounds)
    elif mode == "size":
        mats = _size_stages(c, st.depth)
        big = 8 * c.num_nodes
        bounds = {"w": 5 * (st.depth + 1), "N": big - 1, "e": Fraction(big, n)}
        theorem = "Dao et al. 2020, Theorem 1 (size form, docs/kaleidoscope.md §2.3)"
    else:
        raise CompileError(f"linear_circuit_to_kaleidoscope: mode must be 'live', 'size' or 'structured', found {mode!r}")
    pieces = [sparse_to_kaleidoscope(m) for m in mats]
    res["stage_nnz_max"] = max((m.nnz for m in mats), default=0)
    return Factorization(chain(pieces, n, theorem), theorem, garbage_free=True, resources=res, bounds=bounds)
