"""Differential attacks on the three exact methods of ``verify`` (docs/trusted-base.md):
``exact-matrix`` (kaleidoscope against a linear circuit, tried first by ``exact``), ``exact``
(canonical polynomials, flint and sympy backends) and ``z3``.

Every expected answer comes from an independent computation written here: the butterfly factor
matrices are built entry by entry from their definition in docs/theory.md §3 /
docs/kaleidoscope.md §1 (pair ``m`` of a stride-``s`` factor sits at rows and columns ``p`` and
``p + s`` with ``p = 2s·⌊m/s⌋ + (m mod s)``) and multiplied as dense matrices over a small
polynomial type (dicts of monomials to ``Fraction``), and circuits built from sympy expressions are
compared with ``sympy.expand``. The rules checked: ``proved`` exactly when the independent
computation says equal; ``refuted`` only with a counterexample on which the independent values
differ; a perturbed entry (by 1, by 1/2^200, by a symbol) never gives ``proved``.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import ShapeError
from symverify.ir.build import from_matrix, from_sympy
from symverify.kaleidoscope import materialize, to_matrix
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.matrix import verify_circuit, verify_matrix

HUGE = 10**400
TINY = Fraction(1, 2**200)
PARAMS = ("a", "b")

# ---------------------------------------------------------------------------------------------
# An independent polynomial type: {monomial: Fraction}, a monomial a sorted tuple of (name, exp).

Poly = dict


def p_const(c: Any) -> Poly:
    c = Fraction(c)
    return {(): c} if c else {}


def p_var(name: str, e: int = 1) -> Poly:
    return {((name, e),): Fraction(1)}


def p_add(x: Poly, y: Poly) -> Poly:
    out = dict(x)
    for m, c in y.items():
        s = out.get(m, Fraction(0)) + c
        if s:
            out[m] = s
        else:
            out.pop(m, None)
    return out


def p_mul(x: Poly, y: Poly) -> Poly:
    out: Poly = {}
    for m1, c1 in x.items():
        for m2, c2 in y.items():
            exps = dict(m1)
            for name, e in m2:
                exps[name] = exps.get(name, 0) + e
            m = tuple(sorted(exps.items()))
            s = out.get(m, Fraction(0)) + c1 * c2
            if s:
                out[m] = s
            else:
                out.pop(m, None)
    return out


def p_eval(x: Poly, params: dict[str, Any]) -> Fraction:
    total = Fraction(0)
    for m, c in x.items():
        t = c
        for name, e in m:
            t *= Fraction(params[name]) ** e
        total += t
    return total


# Entries are generated as specs, read both as a symverify scalar and as an independent Poly.

def entry_value(spec: tuple) -> tuple[Any, Poly]:
    kind = spec[0]
    if kind == "int":
        return spec[1], p_const(spec[1])
    if kind == "np":
        return np.int64(spec[1]), p_const(spec[1])
    if kind == "frac":
        q = Fraction(spec[1], spec[2])
        return q, p_const(q)
    if kind == "huge":
        return spec[1] * HUGE, p_const(spec[1] * HUGE)
    _, name, coeff, e = spec  # "sym": coeff·name^e
    return coeff * sym(name) ** e, p_mul(p_const(coeff), p_var(name, e))


entries = st.one_of(
    st.just(("int", 0)),
    st.just(("int", 1)),
    st.tuples(st.just("int"), st.integers(-3, 3)),
    st.tuples(st.just("np"), st.integers(-5, 5)),
    st.tuples(st.just("frac"), st.integers(-7, 7), st.sampled_from([2, 3, 2**200 + 1])),
    st.tuples(st.just("huge"), st.sampled_from([1, -1])),
    st.tuples(st.just("sym"), st.sampled_from(PARAMS), st.sampled_from([1, -2, Fraction(1, 3)]), st.integers(1, 2)),
)
int_entries = st.one_of(st.just(("int", 0)), st.just(("int", 1)), st.tuples(st.just("int"), st.integers(-2, 2)))


def bbstar_strides(size: int) -> list[int]:
    """``N/2, …, 1, 1, …, N/2`` (docs/kaleidoscope.md §1), written out here."""
    down, s = [], size // 2
    while s >= 1:
        down.append(s)
        s //= 2
    return down + down[::-1]


@st.composite
def kaleidoscopes(draw: Any, sizes: tuple[int, ...] = (2, 4, 8), max_w: int = 2, ents: Any = entries) -> tuple[Kaleidoscope, list]:
    """A random kaleidoscope and its factors as independent Poly blocks, in application order."""
    size = draw(st.sampled_from(sizes))
    n = draw(st.integers(1, size))
    w = draw(st.integers(0, max_w))
    groups, spec = [], []
    for _ in range(w):
        factors = []
        for s in bbstar_strides(size):
            diags = [[entry_value(draw(ents)) for _ in range(size // 2)] for _ in range(4)]
            factors.append(ButterflyFactor(size, s, *[tuple(v for v, _ in d) for d in diags]))
            spec.append((s, [[p for _, p in d] for d in diags]))
        groups.append(BBStar(size, tuple(factors)))
    return Kaleidoscope(n, size, tuple(groups)), spec


def factor_matrix(size: int, stride: int, diags: list[list[Poly]]) -> list[list[Poly]]:
    """The dense ``size×size`` factor matrix from the definition (docs/theory.md §3)."""
    F: list[list[Poly]] = [[{} for _ in range(size)] for _ in range(size)]
    for m in range(size // 2):
        p = 2 * stride * (m // stride) + m % stride
        q = p + stride
        F[p][p], F[p][q], F[q][p], F[q][q] = diags[0][m], diags[1][m], diags[2][m], diags[3][m]
    return F


def matmul(A: list[list[Poly]], B: list[list[Poly]]) -> list[list[Poly]]:
    rows, inner, cols = len(A), len(B), len(B[0])
    out: list[list[Poly]] = [[{} for _ in range(cols)] for _ in range(rows)]
    for i in range(rows):
        for k in range(inner):
            if A[i][k]:
                for j in range(cols):
                    if B[k][j]:
                        out[i][j] = p_add(out[i][j], p_mul(A[i][k], B[k][j]))
    return out


def reference(k: Kaleidoscope, spec: list) -> list[list[Poly]]:
    """The ``n×n`` corner of ``F_last ⋯ F_first`` (the first factor applied first)."""
    size = k.size
    E: list[list[Poly]] = [[p_const(int(i == j)) for j in range(size)] for i in range(size)]
    for stride, diags in spec:
        E = matmul(factor_matrix(size, stride, diags), E)
    return [row[: k.n] for row in E[: k.n]]


def as_poly(v: Any) -> Poly:
    """A symverify scalar read back as a Poly (its canonical terms)."""
    if isinstance(v, sv.Sym):
        return {tuple(mono): Fraction(c) for mono, c in v.terms}
    return p_const(v)


def to_scalar(x: Poly) -> Any:
    total: Any = 0
    for m, c in x.items():
        t: Any = c
        for name, e in m:
            t = t * sym(name) ** e
        total = total + t
    return total


def corner_at(M: list[list[Poly]], params: dict[str, Any], u: list) -> list[Fraction]:
    """``M·u`` at the parameter values ``params`` (independent evaluation)."""
    return [sum((p_eval(M[i][j], params) * Fraction(u[j]) for j in range(len(u))), Fraction(0)) for i in range(len(M))]


def check_refutation(rep: Any, M_lhs: list[list[Poly]], M_rhs: list[list[Poly]]) -> None:
    """A ``refuted`` verdict's counterexample separates the two reference matrices."""
    cex = rep.counterexample
    assert cex is not None
    u = [x for row in cex.inputs for x in row]
    params = {name: 0 for name in (*PARAMS, "c")} | cex.param_dict()
    assert corner_at(M_lhs, params, u) != corner_at(M_rhs, params, u)


# ---------------------------------------------------------------------------------------------
# exact-matrix and the exact matrices themselves


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kaleidoscopes())
def test_to_matrix_and_materialize_follow_the_definition(ks):
    k, spec = ks
    want = reference(k, spec)
    got = to_matrix(k)
    assert [[as_poly(v) for v in row] for row in got] == want
    rows = materialize(k)[: k.n]
    assert [[as_poly(r.terms.get(j, 0)) for j in range(k.n)] for r in rows] == want


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kaleidoscopes(sizes=(16, 32), max_w=1, ents=int_entries))
def test_to_matrix_follows_the_definition_at_sizes_16_and_32(ks):
    k, spec = ks
    assert [[as_poly(v) for v in row] for row in to_matrix(k)] == reference(k, spec)


PERTURB = st.sampled_from([1, TINY, "a", "c"])  # "c": a parameter on one side only


def _delta(d: Any) -> Any:
    return sym(d) if isinstance(d, str) else d


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kaleidoscopes(), st.booleans(), PERTURB, st.data())
def test_exact_matrix_against_the_reference_matrix(ks, perturb, delta, data):
    k, spec = ks
    want = reference(k, spec)
    target = [[to_scalar(x) for x in row] for row in want]
    if perturb:
        i, j = data.draw(st.integers(0, k.n - 1)), data.draw(st.integers(0, k.n - 1))
        target[i][j] = target[i][j] + _delta(delta)
    check = verify_matrix(k, target)
    assert check.proved is (not perturb)
    if perturb:
        r, c, got, exp = check.first_difference
        assert (r, c) == (i, j) and as_poly(got) == want[i][j] and got != exp
    c = from_matrix(target, k.n, 1)
    assert verify_circuit(k, c).proved is (not perturb)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kaleidoscopes(sizes=(2, 4), max_w=1), st.booleans(), PERTURB, st.data())
def test_verify_methods_kaleidoscope_against_circuit(ks, perturb, delta, data):
    """``exact`` (matrix first), ``exact`` with sympy, ``exact-sympy`` (no matrix shortcut) and
    ``z3`` on a kaleidoscope against the linear circuit of its reference matrix."""
    k, spec = ks
    want = reference(k, spec)
    rhs = [row[:] for row in want]
    if perturb:
        i, j = data.draw(st.integers(0, k.n - 1)), data.draw(st.integers(0, k.n - 1))
        rhs[i][j] = p_add(rhs[i][j], as_poly(_delta(delta)))
    c = from_matrix([[to_scalar(x) for x in row] for row in rhs], k.n, 1)
    for method, backend in (("exact", None), ("exact", "sympy"), ("exact-sympy", None), ("z3", None)):
        rep = sv.verify(k, c, method=method, backend=backend, timeout=30)
        v = rep.verdict.value
        if perturb:
            assert v != "proved", (method, backend)
            if v == "refuted":
                check_refutation(rep, want, rhs)
        else:
            assert v == "proved", (method, backend, rep.notes)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kaleidoscopes(sizes=(2, 4), max_w=1), kaleidoscopes(sizes=(2, 4), max_w=1), st.sampled_from(["lift", "transpose2", "other"]))
def test_verify_methods_kaleidoscope_against_kaleidoscope(ks1, ks2, how):
    k1, spec1 = ks1
    want1 = reference(k1, spec1)
    if how == "lift":
        k2, want2 = k1.lift(2 * k1.size), want1
    elif how == "transpose2":
        k2, want2 = k1.transpose().transpose(), want1
    else:
        k2, spec2 = ks2
        if k2.n != k1.n:
            with pytest.raises(ShapeError):
                sv.verify(k1, k2, method="exact")
            return
        want2 = reference(k2, spec2)
    equal = want1 == want2
    for method, backend in (("exact", None), ("exact", "sympy"), ("z3", None)):
        rep = sv.verify(k1, k2, method=method, backend=backend, timeout=30)
        v = rep.verdict.value
        if equal:
            assert v == "proved", (method, backend, rep.notes)
        else:
            assert v != "proved", (method, backend)
            if v == "refuted":
                check_refutation(rep, want1, want2)


def test_the_transpose_and_the_product_follow_the_definition():
    a, b = sym("a"), sym("b")
    f4 = ButterflyFactor(4, 2, (a, 2), (0, b), (TINY, 1), (HUGE, -1))
    g4 = ButterflyFactor(4, 1, (1, a * b), (3, 0), (0, -1), (Fraction(2, 3), 1))
    k1 = Kaleidoscope(3, 4, (BBStar(4, (f4, g4, g4, f4)),))
    k2 = Kaleidoscope(3, 8, (BBStar(8, tuple(ButterflyFactor(8, s, (a,) * 4, (1,) * 4, (0, 1, 0, b), (1,) * 4) for s in bbstar_strides(8))),))
    spec1 = [(f.stride, [[as_poly(v) for v in d] for d in (f.d1, f.d2, f.d3, f.d4)]) for f in k1.groups[0].factors]
    spec2 = [(f.stride, [[as_poly(v) for v in d] for d in (f.d1, f.d2, f.d3, f.d4)]) for f in k2.groups[0].factors]
    m1, m2 = reference(k1, spec1), reference(k2, spec2)
    t = [[m1[j][i] for j in range(3)] for i in range(3)]
    assert [[as_poly(v) for v in row] for row in to_matrix(k1.transpose())] == t
    # then(): M2·M1 on the corner, even though k1 leaves values outside it (the projector)
    assert [[as_poly(v) for v in row] for row in to_matrix(k1.then(k2))] == matmul(m2, m1)


# ---------------------------------------------------------------------------------------------
# Shapes


@pytest.mark.parametrize("method", ["exact", "z3"])
def test_different_shapes_are_refused_not_decided(method):
    k3 = Kaleidoscope.identity(3, 4)
    with pytest.raises(ShapeError):
        sv.verify(k3, Kaleidoscope.identity(4, 4), method=method)
    with pytest.raises(ShapeError):
        sv.verify(k3, from_matrix([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], 4, 1), method=method)
    with pytest.raises(ShapeError):
        verify_circuit(k3, from_matrix([[1, 0], [0, 1]], 2, 1))


def test_a_padded_corner_is_the_same_matrix_and_a_read_shape_is_row_major():
    eye4 = [[int(i == j) for j in range(4)] for i in range(4)]
    swap = [[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
    for method in ("exact", "z3"):
        assert sv.verify(Kaleidoscope.identity(3, 4), Kaleidoscope.identity(3, 16), method=method).verdict.value == "proved"
        assert sv.verify(Kaleidoscope.identity(4), from_matrix(eye4, 2, 2), method=method).verdict.value == "proved"
        rep = sv.verify(Kaleidoscope.identity(4), from_matrix(swap, 2, 2), method=method)
        assert rep.verdict.value == "refuted"
    # a target smaller than the corner is padded with zeros: the identity's last 1 differs
    check = verify_matrix(Kaleidoscope.identity(3, 4), [[1, 0], [0, 1]])
    assert not check.proved and check.first_difference == (2, 2, 1, 0)


# ---------------------------------------------------------------------------------------------
# exact and z3 on polynomial circuits (sympy.expand is the reference)

X = sympy.symbols("x0:3")
A_, B_ = sympy.symbols("a b")


@st.composite
def polynomials(draw: Any) -> sympy.Expr:
    terms = draw(st.lists(st.tuples(
        st.sampled_from([1, -1, 2, sympy.Rational(1, 3), sympy.Rational(-5, 2**70), sympy.Integer(HUGE)]),
        st.lists(st.sampled_from([*X, A_, B_]), max_size=3),
    ), min_size=1, max_size=4))
    e = sympy.Integer(0)
    for c, vs in terms:
        e += c * sympy.Mul(*vs)
    if draw(st.booleans()):  # an unexpanded power (non-linear structure)
        e = e * (X[0] + draw(st.sampled_from([1, A_, sympy.Rational(1, 2)]))) ** draw(st.integers(2, 3))
    return e


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(polynomials(), st.sampled_from(["same", "expanded", "plus_one", "plus_tiny", "plus_param"]))
def test_exact_and_z3_on_polynomial_circuits(p, how):
    q = {"same": p, "expanded": sympy.expand(p), "plus_one": p + 1, "plus_tiny": p + sympy.Rational(1, 2**200),
         "plus_param": p + sympy.Symbol("c") * X[1]}[how]
    equal = sympy.expand(p - q) == 0
    lhs = from_sympy([p, 0, 0], list(X), 3, 1)
    rhs = from_sympy([q, 0, 0], list(X), 3, 1)
    for method, backend in (("exact", None), ("exact", "sympy"), ("z3", None)):
        rep = sv.verify(lhs, rhs, method=method, backend=backend, timeout=30)
        v = rep.verdict.value
        if equal:
            assert v in (("proved", "unknown") if method == "z3" else ("proved",)), (method, backend, rep.notes)
        else:
            assert v != "proved", (method, backend)
            if v == "refuted":
                cex = rep.counterexample
                subs = {s: cex.inputs[i][0] for i, s in enumerate(X)}
                subs |= {sympy.Symbol(k): v for k, v in cex.param_dict().items()}
                for s in (A_, B_, sympy.Symbol("c")):
                    subs.setdefault(s, 0)
                assert (p - q).subs(subs) != 0


def _square_chain(k: int, plus: int = 0, twist: bool = False) -> Circuit:
    """``(x + y)^(2^k)`` (``plus`` added at the end); ``twist`` writes the first square expanded."""
    gates = [Gate.mul(0, 0), Gate.mul(0, 1), Gate.mul(1, 1), Gate.lin(2, 1, 4, 1), Gate.lin(5, 1, 3, 2)] if twist \
        else [Gate.add(0, 1), Gate.mul(2, 2)]
    cur = len(gates) + 1
    for _ in range(k - 1):
        gates.append(Gate.mul(cur, cur))
        cur += 1
    if plus:
        gates.append(Gate.lin(cur, 1, 0, plus))
        cur += 1
    return Circuit(1, 2, tuple(gates), (cur, cur))


@pytest.mark.parametrize("k", [21, 61])
def test_huge_degrees_are_unknown_fast(k):
    """``(x+y)^(2^k)`` two ways: the exact guard and the z3 degree guard refuse, quickly."""
    for method, backend in (("exact", None), ("exact", "sympy"), ("z3", None)):
        t = time.monotonic()
        rep = sv.verify(_square_chain(k), _square_chain(k, twist=True), method=method, backend=backend, timeout=10)
        assert rep.verdict.value == "unknown" and rep.notes
        assert time.monotonic() - t < 10


def test_a_huge_degree_difference_is_never_proved():
    for method in ("exact", "z3"):
        rep = sv.verify(_square_chain(40), _square_chain(40, plus=1), method=method, timeout=10)
        assert rep.verdict.value in ("refuted", "unknown")
        if rep.verdict.value == "refuted":
            assert rep.counterexample.lhs_value != rep.counterexample.rhs_value


def _sum_power(k: int, twist: bool) -> Circuit:
    """``(x0 + … + x5)^(2^k)``; ``twist`` scales the sum by 2 and then by 1/2 first."""
    gates = [Gate.add(0, 1)] + [Gate.lin(6 + i, 1, i + 2, 1) for i in range(4)]
    if twist:
        gates += [Gate.lin(6 + len(gates) - 1, 2, 0, 0), Gate.lin(6 + len(gates), Fraction(1, 2), 0, 0)]
    for _ in range(k):
        cur = 6 + len(gates) - 1
        gates.append(Gate.mul(cur, cur))
    return Circuit(6, 1, tuple(gates), (6 + len(gates) - 1,))


def test_the_exact_timeout_gives_unknown_within_the_timeout():
    """An expansion the guard admits but that cannot finish in time ends ``unknown`` at the timeout."""
    for backend in ("flint", "sympy"):
        t = time.monotonic()
        rep = sv.verify(_sum_power(4, False), _sum_power(4, True), method="exact", backend=backend, timeout=1)
        assert rep.verdict.value in ("proved", "unknown")
        # stopped near the timeout, not at the end of the expansion (minutes); the slack is wide
        # because a loaded machine (xdist workers beside it) can delay the child's stop by seconds
        assert time.monotonic() - t < 40


# ---------------------------------------------------------------------------------------------
# Regressions


@pytest.mark.parametrize("target", [
    [{1: 7, 0: 3}, {0: 9, 1: 1}],  # rows as {col: value}: iterating gave the keys, read as the identity
    ["10", "01"],  # rows as text: read as characters, the identity
    [{1, 0}, {0, 1}],  # sets have no order
    [iter([1, 0]), [0, 1]],
    (row for row in [[1, 0], [0, 1]]),
    [1, 0],
])
def test_a_dense_target_whose_rows_have_no_order_is_refused(target):
    """``verify_matrix(I₂, [{1: 7, 0: 3}, {0: 9, 1: 1}])`` was proved: each dict row was read as
    its keys ``[1, 0]`` and ``[0, 1]``."""
    from symverify.errors import IRError

    with pytest.raises(IRError):
        verify_matrix(Kaleidoscope.identity(2), target)
    assert verify_matrix(Kaleidoscope.identity(2), np.eye(2, dtype=np.int64)).proved
    assert verify_matrix(Kaleidoscope.identity(2), ((1, 0), (0, 1))).proved


@pytest.mark.parametrize("blocks", [[("57", "91")], [(b"57", (9, 1))], ["ab"]])
def test_a_butterfly_block_given_as_text_is_refused(blocks):
    """``from_blocks(2, 1, [("57", "91")])`` built ``[[5, 7], [9, 1]]`` from the characters."""
    with pytest.raises(ShapeError):
        ButterflyFactor.from_blocks(2, 1, blocks)
    assert to_matrix(ButterflyFactor.from_blocks(2, 1, [((5, 7), [9, 1])])) == [[5, 7], [9, 1]]


def test_polynomials_refuses_a_ring_that_does_not_fit():
    """``polynomials(c, PolyRing(2))`` for a circuit with weight ``a`` raised a bare ``KeyError``,
    ``backend='nope'`` silently used sympy and a backend passed as the ring an ``AttributeError``."""
    from symverify.errors import IRError, UsageError
    from symverify.kernel.semantics.poly import PolyRing, shared_ring

    c = Circuit(1, 2, (Gate.lin(0, sym("a"), 1, 1),), (2,))
    c2 = Circuit(2, 2, (Gate.lin(0, sym("b"), 3, 1),), (4,))
    with pytest.raises(IRError, match="parameters a"):
        sv.polynomials(c, PolyRing(2))
    with pytest.raises(ShapeError):
        sv.polynomials(c2, PolyRing(2, ("b",)))
    # the larger object's inputs are in a ring shared with a smaller one given first
    assert [[str(p) for p in row] for row in sv.polynomials(c2, shared_ring(c, c2))] == [["x0*p_b + x3", "0"], ["0", "0"]]
    with pytest.raises(UsageError):
        sv.polynomials(c, "sympy")
    with pytest.raises(UsageError):
        sv.polynomials(c, backend="nope")
    want = [["x0*p_a + x1", "0"]]
    assert [[str(p) for p in row] for row in sv.polynomials(c, PolyRing(2, ("a",), "sympy"))] == want
    assert [[str(p) for p in row] for row in sv.polynomials(c, shared_ring(c2, c))] == want


def test_z3_builds_a_parameter_power_as_one_term():
    """A gate weight ``a^(10^7)`` that no output reads (the degree guard sees degree 1) was built
    as ``10^7`` z3 products: out of memory after ~45 s, or ``unknown`` at the timeout."""
    a = sym("a")
    lhs = Circuit(1, 1, (Gate.scale(0, a**10_000_000), Gate.lin(0, 1, 0, 1)), (2,))
    rhs = Circuit(1, 1, (Gate.lin(0, 2, 0, 0),), (1,))
    t = time.monotonic()
    assert sv.verify(lhs, rhs, method="z3", timeout=20).verdict.value == "proved"
    assert time.monotonic() - t < 15
    # a power and a chain of products are the same z3 polynomial; a different one is refuted
    sq = Circuit(1, 1, (Gate.scale(0, a**2),), (1,))
    chain = Circuit(1, 1, (Gate.scale(0, a), Gate.scale(1, a)), (2,))
    assert sv.verify(sq, chain, method="z3").verdict.value == "proved"
    rep = sv.verify(Circuit(1, 1, (Gate.scale(0, a**3),), (1,)), chain, method="z3")
    assert rep.verdict.value == "refuted"


@pytest.mark.parametrize("u", [[{0: 1}, {0: 2}], ({1}, {2}), [[1], "2"], {1: [1], 0: [2]}])
def test_exact_evaluation_refuses_rows_without_an_order(u):
    """``evaluate(c, [{0: 1}, {0: 2}])`` read each dict row as its keys (the input ``[[0], [0]]``) and
    returned that output; the kernel's circuit evaluation (what re-checks counterexamples) did the
    same. Rows must be sequences in order (lists, tuples, numpy rows)."""
    import symverify as sv
    from symverify.errors import ShapeError
    from symverify.kernel.semantics.evaluate import eval_circuit
    from symverify.kernel.semantics.rings import FractionRing

    c = sv.Circuit.trace(lambda v: [v[0][0] * v[1][0] + 3, v[1][0]], n=2, d=1)
    for run in (lambda: sv.evaluate(c, u), lambda: sv.evaluate(sv.compile(c), u), lambda: eval_circuit(c, u, FractionRing({}))):
        with pytest.raises(ShapeError, match=r"input: expected shape 2×1, a nested list \(rows of values\)"):
            run()
    assert sv.evaluate(c, ([1], (2,))) == sv.evaluate(c, np.array([[1], [2]])) == [[5], [2]]
