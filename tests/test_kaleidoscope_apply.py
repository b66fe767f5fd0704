"""Applying butterfly products: generic ring kernel, materialization, numpy float / mod p paths."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError, ShapeError
from symverify.kaleidoscope import Affine, apply_batch, circuit_matrix, compile_numpy, materialize, to_matrix
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, FactorList, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.scalar import sym
from symverify.kernel.kaleidoscope.apply import apply, factors_of, params_of
from symverify.kernel.semantics.evaluate import eval_circuit
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.semantics.rings import FractionRing, ModRing, eval_sym
from symverify.library import prefix_sums, walsh_hadamard

P = 2**31 - 1
RATIONALS = st.sampled_from([0, 1, -1, 2, 3, Fraction(1, 2), Fraction(-5, 3)])


@st.composite
def kaleidoscopes(draw, values=RATIONALS, max_size=8):
    size = draw(st.sampled_from([s for s in (2, 4, 8, 16) if s <= max_size]))
    n = draw(st.integers(1, size))
    groups = []
    for _ in range(draw(st.integers(1, 2))):
        fs = []
        for s in bbstar_strides(size):
            fs.append(ButterflyFactor(size, s, *[tuple(draw(st.lists(values, min_size=size // 2, max_size=size // 2))) for _ in range(4)]))
        groups.append(BBStar(size, tuple(fs)))
    return Kaleidoscope(n, size, tuple(groups))


def matvec(M, x):
    return [sum((M[i][j] * x[j] for j in range(len(x))), start=0) for i in range(len(M))]


@settings(max_examples=30)
@given(kaleidoscopes(), st.data())
def test_exact_apply_is_the_materialized_matvec(k, data):
    xs = [data.draw(st.lists(RATIONALS, min_size=k.n, max_size=k.n)) for _ in range(3)]
    M = to_matrix(k)
    assert apply_batch(k, xs) == [matvec(M, x) for x in xs]
    full = [data.draw(RATIONALS) for _ in range(k.size)]
    assert apply(k, full, full=True) == matvec(to_matrix(k.factor_list()), full)


@settings(max_examples=25)
@given(kaleidoscopes(max_size=16), st.data())
def test_modular_paths_agree(k, data):
    xs = [data.draw(st.lists(st.integers(-50, 50), min_size=k.n, max_size=k.n)) for _ in range(4)]
    ring = ModRing(P)
    want = [[ring.coerce(v) for v in matvec(to_matrix(k), x)] for x in xs]
    assert apply_batch(k, [[x % P for x in v] for v in xs], ring) == want
    assert compile_numpy(k, "mod", p=P).apply(np.array(xs)).tolist() == want


@settings(max_examples=20)
@given(kaleidoscopes(max_size=16), st.data())
def test_float_path_is_a_cross_check_of_the_exact_one(k, data):
    x = data.draw(st.lists(st.integers(-9, 9), min_size=k.n, max_size=k.n))
    exact = [float(v) for v in apply(k, x)]
    got = compile_numpy(k).apply(np.array(x, dtype=float))
    assert np.allclose(got, exact, rtol=1e-12, atol=1e-9)


def test_symbolic_diagonals_in_every_ring():
    a, b = sym("a"), sym("b")
    bb = BBStar(4, (
        ButterflyFactor(4, 2, (a, 1), (0, b), (1, 0), (a * b, 1)),
        ButterflyFactor(4, 1, (1, b), (a, 0), (0, 1), (Fraction(1, 2), a)),
        ButterflyFactor.identity(4, 1),
        ButterflyFactor(4, 2, (1, 1), (b - 1, 0), (0, 0), (1, 2)),
    ))
    k = Kaleidoscope(3, 4, (bb,))
    assert params_of(k) == ("a", "b")
    M = to_matrix(k)  # exact Sym entries, canonical
    ring = PolyRing(3, params_of(k))
    xs = ring.inputs()
    want = [sum((ring.coerce(M[i][j]) * xs[j] for j in range(3)), start=ring.zero) for i in range(3)]
    assert apply(k, xs, ring) == want
    vals = {"a": Fraction(2, 3), "b": -3}
    x = [1, Fraction(1, 2), 5]
    M_at = [[eval_sym(v, vals) if not isinstance(v, (int, Fraction)) else v for v in row] for row in M]
    assert apply(k, x, FractionRing(vals)) == matvec(M_at, x)
    mod = ModRing(P, {"a": 7, "b": 11})
    assert compile_numpy(k, "mod", p=P, params={"a": 7, "b": 11}).apply(np.array([1, 2, 3])).tolist() == apply(k, [1, 2, 3], mod)
    assert apply(k, [x * 2 for x in [1, 2, 3]], ring=None) == [2 * v for v in apply(k, [1, 2, 3])]


def test_materialize_returns_sparse_rows_of_the_full_block():
    k = Kaleidoscope(2, 4, (BBStar.identity(4),))
    rows = materialize(k)
    assert len(rows) == 4 and rows[0] == Affine.unit(0) and rows[1] == Affine.unit(1) and rows[2] == Affine()
    f = ButterflyFactor(4, 1, (1, 2), (3, 4), (5, 6), (7, 8))
    assert [dict(r.terms) for r in materialize(f, columns=[1])] == [{1: 3}, {1: 7}, {}, {}]
    assert to_matrix(FactorList(4, (f, f.transpose()))) == [
        [sum(to_matrix(f.transpose())[i][m] * to_matrix(f)[m][j] for m in range(4)) for j in range(4)] for i in range(4)
    ]


def test_linear_forms_match_basis_vector_evaluation():
    """circuit_matrix (one pass over linear forms) equals evaluating on every basis vector."""
    for c in (walsh_hadamard(4, 2), prefix_sums(3, 2)):
        nd = c.num_inputs
        M = circuit_matrix(c).to_dense()
        for j in range(nd):
            e = [[int(i * c.d + q == j) for q in range(c.d)] for i in range(c.n)]
            col = [v for row in eval_circuit(c, e, FractionRing()) for v in row]
            assert col == [M[i][j] for i in range(nd)]
    x0, x1 = Affine.unit(0), Affine.unit(1)
    assert (x0 + x1 + (-1) * x0) == x1 and (0 * x0) == Affine() and repr(x1) == "Affine({1: 1})"


@pytest.mark.parametrize(
    "call, err, match",
    [
        (lambda: apply(Kaleidoscope.identity(3, 4), [1, 2]), ShapeError, "expected a vector of length kaleidoscope corner n = 3, found 2"),
        (lambda: apply(Kaleidoscope.identity(3, 4), [1, 2, 3], full=True), ShapeError, "length size N = 4, found 3"),
        (lambda: apply("bb", [1]), IRError, "expected a ButterflyFactor, BBStar, FactorList, Kaleidoscope or Factorization, found str"),
        (lambda: factors_of(3), IRError, "found int"),
        (lambda: materialize(BBStar.identity(4), columns=[4]), ShapeError, "column 4 is outside 0 … 3"),
        (lambda: compile_numpy(BBStar.identity(4), "mod", p=2**40), IRError, r"expected a prime 2 ≤ p < 2\*\*31"),
        (lambda: compile_numpy(BBStar.identity(4), "mod"), IRError, "found p = None"),
        (lambda: compile_numpy(BBStar.identity(4), "complex"), IRError, "kind must be 'float' or 'mod'"),
        (lambda: compile_numpy(ButterflyFactor(2, 1, (sym("a"),), (0,), (0,), (1,))), IRError, "parameter 'a', but no value was given"),
        (lambda: compile_numpy(Kaleidoscope.identity(2, 4)).apply(np.zeros(3)), ShapeError, r"expected shape \(2,\) or \(batch, 2\)"),
    ],
)
def test_apply_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


@settings(max_examples=30, deadline=None)
@given(st.integers(-(2**62), 2**62), st.integers(-(2**62), 2**62), st.sampled_from([np.int64, np.int32, np.uint64]))
def test_numpy_integer_entries_are_applied_exactly(a, b, kind):
    """``apply`` multiplied numpy integer entries in their own dtype: ``3·10⁹ · np.int64(4·10⁹)``
    wrapped to a negative number (with only a RuntimeWarning), ``np.int32`` raised OverflowError;
    they are read as the ints of their values, as exact as a list of ints."""
    info = np.iinfo(kind)
    a, b = min(max(a, info.min), info.max), min(max(b, info.min), info.max)
    f = ButterflyFactor(2, 1, (3 * 10**9,), (2**40,), (-7,), (Fraction(1, 3),))
    want = apply(f, [a, b])
    got = apply(f, np.array([a, b], dtype=kind))
    assert got == want and all(type(v) in (int, Fraction) for v in got)
    assert apply(f, [kind(a), kind(b)]) == want
    assert apply_batch(f, [np.array([a, b], dtype=kind)] * 2) == [want, want]
