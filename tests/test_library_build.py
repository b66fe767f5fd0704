"""Builders and the standard circuit library, checked against independent computations."""

import itertools
from fractions import Fraction

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from symverify import Circuit, IRError, stats
from symverify.ir.build import from_matrix, from_sympy, trace
from symverify.kernel.semantics.poly import PolyRing, polynomials
from symverify.library import (
    determinant,
    elementary_symmetric,
    matvec,
    matvec_bilinear,
    poly_mult,
    prefix_sums,
    product_tree,
    random_circuit,
    random_linear_circuit,
    retnet,
    standard_library,
    walsh_hadamard,
)
from symverify.semantics.exact import evaluate


def flat(c, u):
    return [x for row in evaluate(c, u) for x in row]


def test_trace_records_gates_and_constants():
    c = trace(lambda u: [u[0][0] * u[0][1] - 3, 2 * u[0][0], -u[0][1], u[0][0] + 0], n=2, d=2)
    assert flat(c, [[2, 5], [0, 0]]) == [7, 4, -5, 2]
    assert c.outputs[3] == 0  # adding 0 records nothing
    assert Circuit.trace(lambda u: u[0][0] ** 5, n=1, d=1).size == 3  # square-and-multiply


def test_scalar_outputs_become_constant_gates():
    """Regression: constants created for scalar outputs were dropped from the gate list."""
    c = trace(lambda u: [0, u[0][0], "1/2"], n=3, d=1)
    assert flat(c, [[5], [6], [7]]) == [0, 5, Fraction(1, 2)]
    x = sympy.symbols("x0")
    assert flat(from_sympy([0], [x], 1, 1), [[3]]) == [0]


def test_trace_rejects_floats_with_a_hint():
    with pytest.raises(IRError, match=r"found the float 0.5; pass Fraction\(1, 2\)"):
        trace(lambda u: [u[0][0] * 0.5], n=1, d=1)


def test_from_sympy_and_params():
    x = sympy.symbols("x0:4")
    a = sympy.Symbol("a")
    c = from_sympy([x[0] * x[1] + a * x[2] ** 2 - sympy.Rational(1, 2), x[3]], x, n=2, d=2)
    assert c.params() == {"a"}
    ring = PolyRing(4, ("a",))
    g = ring._gens
    assert polynomials(c, ring)[0][0] == g[0] * g[1] + g[4] * g[2] ** 2 - ring.coerce(Fraction(1, 2))
    with pytest.raises(IRError, match="not exact"):
        from_sympy([x[0] * 0.5], x, n=2, d=2)
    with pytest.raises(IRError, match="not a polynomial"):
        from_sympy([sympy.sin(x[0])], x, n=2, d=2)


@given(st.lists(st.lists(st.integers(-3, 3), min_size=4, max_size=4), min_size=1, max_size=4))
def test_from_matrix_is_the_matrix(M):
    c = from_matrix(M, n=2, d=2)
    assert c.is_linear()
    for j in range(4):
        e = [[int(i == j) for i in range(2 * k, 2 * k + 2)] for k in range(2)]
        assert flat(c, e)[: len(M)] == [row[j] for row in M]


def test_walsh_hadamard_matches_sylvester_matrix():
    N = 8
    H = [[(-1) ** bin(i & j).count("1") for j in range(N)] for i in range(N)]
    c = walsh_hadamard(4, 2)
    for j in range(N):
        e = [[int(2 * r + s == j) for s in range(2)] for r in range(4)]
        assert flat(c, e) == [H[i][j] for i in range(N)]
    assert stats(c).depth == 3


def test_poly_mult_prefix_product():
    a, b = [1, 2, 3], [4, 0, -1]
    assert flat(poly_mult(3), [a, b])[:5] == [sum(a[i] * b[k - i] for i in range(3) if 0 <= k - i < 3) for k in range(5)]
    assert flat(prefix_sums(5), [[v] for v in [1, 2, 3, 4, 5]]) == [1, 3, 6, 10, 15]
    assert flat(product_tree(5), [[v] for v in [1, 2, 3, 4, 5]])[0] == 120
    assert stats(prefix_sums(8)).depth == 3 and stats(product_tree(8)).depth == 3


def test_matvec_and_bilinear():
    M = [[1, Fraction(1, 2)], [0, 3]]
    assert flat(matvec(M, 2, 1), [[2], [4]]) == [4, 12]
    assert flat(matvec_bilinear(2), [[1, 2], [3, 4], [5, 6]])[:2] == [17, 39]


def test_elementary_symmetric_matches_sympy():
    xs = sympy.symbols("x0:5")
    c = elementary_symmetric(5)
    polys = [p for row in polynomials(c) for p in row]
    for k in range(1, 6):
        e_k = sum(sympy.prod(s) for s in itertools.combinations(xs, k))
        assert sympy.expand(sympy.sympify(str(polys[k - 1]).replace("^", "**"))) == sympy.expand(e_k)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_determinant_matches_sympy(m):
    U = [[(i * 7 + j * 3) % 5 - 2 + (i == j) for j in range(m)] for i in range(m)]
    assert flat(determinant(m), U)[0] == sympy.Matrix(U).det()


def test_retnet_matches_its_recurrence():
    N, d, g = 3, 2, Fraction(1, 2)
    WA, WC, WV = [[1, 0], [1, 1]], [[1, 2], [0, 1]], [[0, 1], [1, -1]]
    u = [[1, 2], [3, -1], [0, 2]]
    mat = sympy.Matrix
    z = sympy.zeros(d, d)
    want = []
    for t in range(N):
        row = mat([u[t]])
        A, C, V = row * mat(WA), row * mat(WC), row * mat(WV)
        z = sympy.Rational(1, 2) * z + A.T * V
        want.extend(C * z)
    assert flat(retnet(N, d, g, WA, WC, WV), u) == [Fraction(str(v)) for v in want]


@pytest.mark.parametrize("seed", range(5))
def test_random_circuit_has_requested_shape(seed):
    c = random_circuit(3, 2, 30, 6, seed=seed)
    s = stats(c)
    assert s.depth == 6 and s.size == 30 and s.outputs == 4
    assert random_circuit(3, 2, 30, 6, seed=seed) == c
    assert random_linear_circuit(2, 2, 10, 3, seed=seed).is_linear()


def test_library_validation():
    with pytest.raises(IRError, match="walsh_hadamard size n·d: expected a power of two, found 6"):
        walsh_hadamard(3, 2)
    with pytest.raises(IRError, match="expected size ≥ depth"):
        random_circuit(1, 1, 2, 5)
    with pytest.raises(IRError, match="expected 1 ≤ k ≤ 3"):
        elementary_symmetric(3, 4)
    assert len(standard_library()) >= 8


@pytest.mark.parametrize("wiring", ["below", "hub", "hubs", "random", "reversal", "few", "permutation"])
def test_wired_circuits_have_the_stated_width_and_depth(wiring):
    from symverify.library import wired_circuit

    for w, depth in ((1, 1), (2, 3), (6, 2), (16, 4)):
        c = wired_circuit(w, depth, wiring, seed=3, shuffle_outputs=True)
        s = stats(c)
        assert s.depth == depth and s.width == w and s.size == w * depth and sorted(c.outputs) == list(range(w * depth, w * depth + w))
        assert c == wired_circuit(w, depth, wiring, seed=3, shuffle_outputs=True)  # seeded
    hub = wired_circuit(8, 1, "hub", mul_fraction=1.0)
    assert all(g.args[1] == 0 for g in hub.gates)  # every gate reads node 0


def test_wired_circuit_rejects_bad_arguments():
    from symverify.errors import UsageError
    from symverify.library import wired_circuit

    with pytest.raises(UsageError, match="wiring: expected one of below, hub"):
        wired_circuit(4, 2, "star")
    with pytest.raises(UsageError, match=r"expected w ≥ 1, depth ≥ 1 .* found w=0"):
        wired_circuit(0, 2, "hub")
    with pytest.raises(UsageError, match=r"mul_fraction=1\.5"):
        wired_circuit(4, 2, "hub", mul_fraction=1.5)
