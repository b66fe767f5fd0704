"""Builders and the standard circuit library, checked against independent computations."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from symverify import Circuit, IRError, SymverifyError, stats
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
    retnet_stack,
    retnet_weights,
    standard_library,
    symbolic_mixing,
    walsh_hadamard,
    wired_circuit,
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
    with pytest.raises(IRError, match="expected an int 1 ≤ k ≤ 3, found 4"):
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
    with pytest.raises(UsageError, match=r"wired_circuit: expected 0 ≤ mul_fraction ≤ 1, found 1\.5"):
        wired_circuit(4, 2, "hub", mul_fraction=1.5)


# ---- sizes of the wrong type or too large are refused before anything is built ----

@pytest.mark.parametrize("call, match", [
    (lambda: walsh_hadamard(4.0), r"walsh_hadamard: expected an int n ≥ 1, found 4\.0"),
    (lambda: walsh_hadamard(4, True), r"walsh_hadamard: expected an int d ≥ 1, found True"),
    (lambda: poly_mult(2.5), r"poly_mult: expected an int m ≥ 1, found 2\.5"),
    (lambda: poly_mult(0), r"poly_mult: expected an int m ≥ 1, found 0"),
    (lambda: prefix_sums(3, 0), r"prefix_sums: expected an int d ≥ 1, found 0"),
    (lambda: product_tree("4"), r"product_tree: expected an int N ≥ 1, found '4'"),
    (lambda: matvec_bilinear(0), r"matvec_bilinear: expected an int m ≥ 1, found 0"),
    (lambda: elementary_symmetric(3, True), r"elementary_symmetric: expected an int 1 ≤ k ≤ 3, found True"),
    (lambda: elementary_symmetric(3, 2.0), r"expected an int 1 ≤ k ≤ 3, found 2\.0"),
    (lambda: determinant(2.5), r"determinant: expected an int 1 ≤ m ≤ 5 .* found 2\.5"),
    (lambda: random_circuit(2, 1, 5, 3, mul_fraction=2), r"random_circuit: expected 0 ≤ mul_fraction ≤ 1, found 2"),
    (lambda: random_circuit(2, 1, 5, 3, mul_fraction=float("nan")), r"expected 0 ≤ mul_fraction ≤ 1, found nan"),
    (lambda: random_circuit(2, 1, 5.0, 3), r"random_circuit: expected an int size, found 5\.0"),
    (lambda: random_circuit(2, 1.0, 5, 3), r"random_circuit: expected an int d ≥ 1, found 1\.0"),
])
def test_library_sizes_of_the_wrong_type_are_refused(call, match):
    with pytest.raises(IRError, match=match):
        call()


def test_wired_circuit_sizes_of_the_wrong_type_are_refused():
    from symverify.errors import UsageError
    from symverify.library import wired_circuit

    with pytest.raises(UsageError, match=r"found w=4\.0"):
        wired_circuit(4.0, 2, "hub")
    with pytest.raises(UsageError, match=r"found w=4, depth=True"):
        wired_circuit(4, True, "hub")


@pytest.mark.parametrize("call, name", [
    (lambda: walsh_hadamard(2 ** 40), r"walsh_hadamard\(n=1099511627776, d=1\): 1099511627776 inputs.*MAX_INPUTS"),
    (lambda: walsh_hadamard(128, 2), r"walsh_hadamard\(n=128, d=2\): 2048 gates.*MAX_GATES"),
    (lambda: poly_mult(40), r"poly_mult\(m=40\): 1600 gates.*MAX_GATES"),
    (lambda: prefix_sums(100, 2), r"prefix_sums\(N=100, d=2\): 1345 gates.*MAX_GATES"),
    (lambda: product_tree(10 ** 9), r"product_tree\(N=1000000000, d=1\): 1000000000 inputs.*MAX_INPUTS"),
    (lambda: matvec_bilinear(40), r"matvec_bilinear\(m=40\): 1600 gates"),
    (lambda: elementary_symmetric(100, 20), r"elementary_symmetric\(N=100, k=20, d=1\): 1710 gates"),
    (lambda: retnet(20, 8), r"retnet\(N=20, d=8\) with 1 layer\(s\): 1280 gates"),
    (lambda: retnet_stack(2, 8, 10 ** 6), r"retnet_stack\(d=8\) of 1000000 layers .*: 64000000 gates"),
    (lambda: retnet_weights(3000), r"retnet_weights\(d=3000\): each d×d projection: 9000000 cells.*MAX_CELLS"),
    (lambda: symbolic_mixing(600), r"symbolic_mixing\(n=600\): 1200 gates"),
])
def test_library_sizes_beyond_the_limits_are_refused_before_building(monkeypatch, call, name):
    """The builders check their sizes against MAX_INPUTS and a lower bound of their gate count against
    MAX_GATES first (the message names the builder and its arguments): with the limit lowered to
    1000 gates, every size here is refused at once; without the check the recorder's own guard (which
    names only 'a circuit on n×d inputs') or the machine's memory would stop it."""
    from symverify.errors import LimitError
    from symverify.ir import limits

    monkeypatch.setattr(limits, "MAX_GATES", 1000)
    with pytest.raises(LimitError, match=name):
        call()


def test_the_gate_lower_bounds_are_lower_bounds():
    """Each builder's gate estimate never exceeds the gates it builds (so no buildable size is refused)."""
    from symverify.ir import limits

    for call in (lambda: walsh_hadamard(8, 2), lambda: poly_mult(5), lambda: prefix_sums(7, 3), lambda: product_tree(9),
                 lambda: matvec_bilinear(4), lambda: elementary_symmetric(7, 3), lambda: elementary_symmetric(5),
                 lambda: retnet(3, 2), lambda: symbolic_mixing(5)):
        gates = len(call().gates)
        saved = limits.MAX_GATES
        try:
            limits.MAX_GATES = gates  # exactly the built count: still accepted
            call()
        finally:
            limits.MAX_GATES = saved


def test_a_runaway_trace_stops_at_the_gate_limit(monkeypatch):
    """The recorder refuses the gate past MAX_GATES (any trace, not only the library's)."""
    from symverify.errors import LimitError
    from symverify.ir import limits

    monkeypatch.setattr(limits, "MAX_GATES", 50)

    def runaway(u):
        x = u[0][0]
        for _ in range(100):
            x = x * x + 1
        return [x]

    with pytest.raises(LimitError, match=r"a circuit on 1×1 inputs: 51 gates is more than symverify.ir.limits.MAX_GATES = 50"):
        trace(runaway, 1, 1)
    with pytest.raises(LimitError, match=r"a circuit on 4194305×1 inputs: 4194305 inputs.*MAX_INPUTS"):
        trace(lambda u: [u[0][0]], limits.MAX_INPUTS + 1, 1)


def test_seeded_random_circuits_are_stable():
    """A seed names the same circuit in every version (users keep seeds in their regressions)."""
    import hashlib

    from symverify.kernel.provers.fingerprint import encode

    h = hashlib.sha256()
    for n, d, size, depth, seed in ((2, 2, 12, 4, 1), (3, 2, 200, 17, 5), (4, 4, 1000, 30, 9), (1, 1, 50, 50, 2)):
        h.update(encode(random_circuit(n, d, size, depth, seed=seed)))
        h.update(encode(random_linear_circuit(n, d, size, depth, seed=seed)))
    assert h.hexdigest() == "d05d781f3a364a32c828b37398c69318a9b11a2efe1db817f69a5893c4e8f8b7"


@pytest.mark.parametrize("value", [np.float32(0.5), np.float64(0.25), np.float16(1.0)], ids=["float32", "float64", "float16"])
def test_random_circuits_take_a_numpy_mul_fraction_by_its_value(value):
    """``random_circuit(..., np.float32(0.5))`` was refused as "expected 0 ≤ mul_fraction ≤ 1, found
    np.float32(0.5)", a value in range; a numpy float is read as the float of its value."""
    assert random_circuit(2, 2, 8, 3, value, seed=1) == random_circuit(2, 2, 8, 3, float(value), seed=1)
    assert wired_circuit(4, 2, "hub", mul_fraction=value) == wired_circuit(4, 2, "hub", mul_fraction=float(value))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: random_circuit(2, 1, 5, 3, "0.5"),
     r"random_circuit: expected a real number 0 ≤ mul_fraction ≤ 1, found str '0\.5'"),
    (lambda: random_circuit(2, 1, 5, 3, True),
     r"random_circuit: expected a real number 0 ≤ mul_fraction ≤ 1, found bool True"),
    (lambda: wired_circuit(4, 2, "hub", mul_fraction=np.float32(1.5)),
     r"wired_circuit: expected 0 ≤ mul_fraction ≤ 1, found 1\.5"),
])
def test_a_mul_fraction_that_is_no_real_number_in_range_is_named(call, message):
    with pytest.raises(SymverifyError, match=message):
        call()
