"""Butterfly matrices and the kaleidoscope hierarchy: apply and construct (docs/theory.md §3).

Their exact checks (equality to a matrix, a permutation or a linear circuit) are the matrix
prover, :mod:`symverify.kernel.provers.matrix`.

* :mod:`.apply`: exact / symbolic / modular application and exact materialization;
* :mod:`.numeric`: batched float (numpy, torch) and int64-mod-p (numpy) application;
* :mod:`.permutation`: every permutation is one BB* element (Dao et al. Theorem 2);
* :mod:`.sparse`: a matrix with s nonzeros is in (BB*)^5 (Dao et al. Theorem 3, explicit form);
* :mod:`.sparse_dao`: the same in (BB*)^{4⌈s/n⌉}_4 (Dao et al. Theorem 3 as stated);
* :mod:`.linear`: linear circuits as kaleidoscopes (Theorem H.19; Dao et al. Theorem 1);

The IR (:class:`ButterflyFactor`, :class:`BBStar`, :class:`FactorList`, :class:`Kaleidoscope`)
lives in :mod:`symverify.kernel.ir.butterfly`.
"""

from symverify.kaleidoscope.linear import linear_circuit_to_kaleidoscope
from symverify.kaleidoscope.numeric import compile_numpy, compile_torch
from symverify.kaleidoscope.permutation import bit_reversal, permutation_to_kaleidoscope, reversal, route_permutation
from symverify.kaleidoscope.sparse import sparse_to_kaleidoscope
from symverify.kaleidoscope.sparse_dao import sparse_to_kaleidoscope_thm3
from symverify.kernel.ir.affine import Affine
from symverify.kernel.kaleidoscope.apply import apply, apply_batch, materialize, to_matrix
from symverify.kernel.kaleidoscope.circuits import circuit_matrix
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.kaleidoscope.matrix import SparseMatrix
from symverify.kernel.semantics.rings import AffineRing, ScalarRing

__all__ = [
    "apply",
    "apply_batch",
    "compile_numpy",
    "compile_torch",
    "materialize",
    "to_matrix",
    "circuit_matrix",
    "linear_circuit_to_kaleidoscope",
    "Factorization",
    "SparseMatrix",
    "bit_reversal",
    "permutation_to_kaleidoscope",
    "reversal",
    "route_permutation",
    "Affine",
    "AffineRing",
    "ScalarRing",
    "sparse_to_kaleidoscope",
    "sparse_to_kaleidoscope_thm3",
]
