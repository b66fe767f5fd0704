"""The pieces behind verify(): certified bounds, primes, modular evaluation, guards, z3, dispatch."""

import os
import random
import time
from fractions import Fraction

import pytest
from cases import QUARTIC_C, QUARTIC_M, SQUARE_C, SWAP_K, dense_model
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import Kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.bounds import UB, structure_bounds
from symverify.kernel.provers.challenge import Stream
from symverify.kernel.provers.guard import run_limited
from symverify.kernel.provers.modular import BatchModRing, eval_mod_batch, model_mod_batch
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.randomized import M61, is_prime, plan_primes, random_prime, trials_needed
from symverify.kernel.provers.sides import as_side, pair_sides
from symverify.kernel.provers.z3_backend import run_z3
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.poly import polynomials, shared_ring
from symverify.kernel.semantics.rings import ModRing
from symverify.kernel.verification import Verdict, verify
from symverify.testing import circuits, models

# ---- certified bounds -------------------------------------------------------------------------


def _true_degree_and_height(a, b):
    ring = shared_ring(a, b)
    pa, pb = polynomials(a, ring), polynomials(b, ring)
    deg, height = -1, 0
    for ra, rb in zip(pa, pb):
        for x, y in zip(ra, rb):
            deg = max(deg, ring.degree(x), ring.degree(y))
            for c in (x - y).to_dict().values():
                height = max(height, abs(int(c.p)))
    return deg, height


@settings(max_examples=30)
@given(models(max_n=3, max_d=2, max_layers=3))
def test_degree_and_height_bounds_hold(m):
    c = Circuit(m.n, m.d, (), ())  # the zero map: the difference is the model itself
    bounds = structure_bounds(*pair_sides(m, c))
    deg, height = _true_degree_and_height(m, c)
    assert deg <= max(bounds.degree, 0)
    assert height < 2**bounds.height_bits


def test_degree_bound_is_per_cell_not_two_to_the_L():
    shift = Layer.make(4, 1, b1=Grid.full(4, 1, 1), h=Grid.zeros(4, 1).paint(1, 2, 0, 1, 1))
    m = Model(4, 1, 4, 1, (shift,) * 3)  # W = 0 in every layer: affine projection branch, degree stays 1
    assert structure_bounds(*pair_sides(m, m)).degree == 1
    assert structure_bounds(*pair_sides(QUARTIC_M, QUARTIC_C)).degree == 4


def test_symbolic_weights_count_in_the_degree():
    case_w = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.from_cells(1, 1, {(0, 0): "0"}).paint(0, 1, 0, 1, 1),
                                           h=Grid.from_rows([[1]])),))
    from symverify.kernel.ir.scalar import sym

    a = sym("a")
    sym_m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.from_cells(1, 1, {(0, 0): a * a}), h=Grid.from_rows([[1]])),))
    assert structure_bounds(*pair_sides(case_w, case_w)).degree == 2
    assert structure_bounds(*pair_sides(sym_m, sym_m)).degree == 4  # a²·x·x


@given(st.integers(0, 2**200), st.integers(0, 2**200))
def test_upper_bounds_round_up(a, b):
    assert (UB.of(a) + UB.of(b)).m << (UB.of(a) + UB.of(b)).e >= a + b
    prod = UB.of(a) * UB.of(b)
    assert prod.m << prod.e >= a * b
    assert a < 2 ** UB.of(a).bits()
    assert UB.of(a).less_than(a + 1) and not UB.of(a).less_than(a)


# ---- primes and trial counts --------------------------------------------------------------------


def test_is_prime_matches_sympy():
    import sympy

    rng = random.Random(5)
    nums = [2, 3, 4, 561, 1105, M61, M61 + 2, 2**61 + 1, 3825123056546413051, 318665857834031151167461]
    nums += [rng.randrange(2**61, 2**62) for _ in range(300)] + list(range(0, 400))
    assert [is_prime(x) for x in nums] == [bool(sympy.isprime(x)) for x in nums]
    p = random_prime(Stream(b"prime" * 7))
    assert 2**61 <= p < 2**62 and sympy.isprime(p)


def test_trials_needed():
    assert trials_needed(Fraction(4, M61), Fraction(1, 2**100)) == 2
    assert trials_needed(Fraction(1, 2), Fraction(1, 2**100)) == 100
    assert trials_needed(Fraction(0), Fraction(1, 2**100)) == 1
    assert trials_needed(Fraction(1), Fraction(1, 2**100)) is None


def test_difference_divisible_by_the_fixed_prime_is_still_refuted():
    """y = x against y = (2^61 − 1 + 1)·x: the difference vanishes mod 2^61 − 1 as a polynomial.

    The height bound exceeds p, so the randomized method switches to random primes and refutes.
    """
    c = Circuit(1, 1, (), (0,))
    m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.from_rows([[M61 + 1]]), b2=Grid.from_rows([[1]])),))
    bounds = structure_bounds(*pair_sides(c, m))
    assert not bounds.height_below_m61 and not plan_primes(bounds).fixed
    report = verify(c, m, method="randomized")
    assert report.verdict is Verdict.REFUTED
    assert report.evidence["p"].startswith("uniform random primes")
    assert report.counterexample.lhs_value != report.counterexample.rhs_value
    proved = verify(m, m, method="randomized")
    assert proved.proved and len(proved.evidence["primes"]) == proved.evidence["k"]


# ---- modular evaluation: two paths, one answer ------------------------------------------------------


@settings(max_examples=40)
@given(models(max_n=4, max_d=3, max_layers=3), st.integers(0, 2**32))
def test_tensor_form_matches_the_interpreter_mod_p(m, seed):
    rng = random.Random(seed)
    primes = [M61, random_prime(Stream(seed.to_bytes(8, 'big')))]
    pts = [[[rng.randrange(p) for _ in range(m.d)] for _ in range(m.n)] for p in primes]
    ring = BatchModRing(primes, [{}, {}])
    side = as_side(m)
    tensor = model_mod_batch(m, pts, ring)
    generic = eval_mod_batch(side, pts, ring, tensor=False)
    single = [eval_model(m, pt, ModRing(p)) for pt, p in zip(pts, primes)]
    assert tensor == generic == single


@settings(max_examples=30)
@given(circuits(max_n=2, max_d=2, max_gates=8, allow_sym=True), st.integers(0, 2**32))
def test_batched_circuit_evaluation_matches_modring(c, seed):
    rng = random.Random(seed)
    params = {k: rng.randrange(M61) for k in c.params()}
    pts = [[[rng.randrange(M61) for _ in range(c.d)] for _ in range(c.n)] for _ in range(3)]
    from symverify.kernel.semantics.evaluate import eval_circuit

    got = eval_mod_batch(as_side(c), pts, BatchModRing([M61] * 3, [params] * 3))
    assert got == [eval_circuit(c, pt, ModRing(M61, params)) for pt in pts]


# ---- the subprocess guard --------------------------------------------------------------------------


def _raise() -> None:
    raise IRError("bad input inside the child")


def _sleep() -> int:
    time.sleep(30)
    return 0


def _abort() -> None:
    os.abort()


def test_guard_outcomes():
    assert run_limited(pow, (3, 4), memory=1 << 30, timeout=30).value == 81
    with pytest.raises(IRError, match="bad input inside the child"):
        run_limited(_raise, (), memory=1 << 30, timeout=30)
    t = time.perf_counter()
    assert run_limited(_sleep, (), memory=1 << 30, timeout=0.2).status == "timeout"
    assert time.perf_counter() - t < 10
    crashed = run_limited(_abort, (), memory=1 << 30, timeout=30)
    assert crashed.status == "crashed" and "SIGABRT" in crashed.detail


# ---- z3 and dispatch ------------------------------------------------------------------------------------


def test_z3_refuses_large_instances():
    m = dense_model(64, 8, 3)
    res = run_z3(*pair_sides(m, m), Options())
    assert res.verdict is Verdict.UNKNOWN and res.notes[0].startswith("refused")


def test_exact_backends_agree_on_monomial_counts():
    m = dense_model(3, 2, 2, seed=3)
    a = verify(m, m, method="exact")
    b = verify(m, m, method="exact-sympy")
    c = verify(m, m, method="exact", backend="sympy")
    assert a.proved and b.proved and c.proved
    assert a.evidence["monomials_compared"] == b.evidence["monomials_compared"] == c.evidence["monomials_compared"] > 100


def test_kaleidoscope_against_models_and_shapes():
    ident = Model(1, 2, 1, 2, (Layer.make(1, 2, W=Grid.identity(2), b2=Grid.full(1, 2, 1)),))
    for method in ("exact", "randomized", "z3", "auto"):
        assert verify(Kaleidoscope.identity(2), ident, method=method).proved
        assert verify(SWAP_K, ident, method=method).verdict is Verdict.REFUTED
    assert pair_sides(SWAP_K, SWAP_K)[0].shape == (2, 1)
    assert verify(SWAP_K, SWAP_K, method="exact").proved


def test_sides_describe_models_and_circuits():
    a, b = pair_sides(SQUARE_C, QUARTIC_M)
    assert a.describe()["size"] == 6 and a.describe()["depth"] == 1
    d = b.describe()
    assert d["signature"] == [3, 2, 2, 3, 2] and d["layers"] == 2 and d["modes"] == ["causal"]
    mixed = Circuit(1, 1, (Gate.const(Fraction(1, 2)),), (1,))
    assert structure_bounds(*pair_sides(mixed, mixed)).denominator == 2
    assert verify(mixed, mixed, method="randomized").proved


def test_model_cyclic_and_causal_layers_in_one_model():
    rot = Layer.make(3, 1, b1=Grid.full(3, 1, 1), h=Grid.zeros(3, 1).paint(2, 3, 0, 1, 1), mode=Mode.CYCLIC)
    sq = Layer.make(3, 1, W=Grid.identity(1), h=Grid.zeros(3, 1).paint(0, 1, 0, 1, 1))
    m = Model(3, 1, 3, 1, (rot, sq))
    c = Circuit(3, 1, (Gate.mul(1, 1), Gate.mul(2, 2), Gate.mul(0, 0)), (3, 4, 5))
    for method in ("exact", "randomized", "z3"):
        assert verify(c, m, method=method).proved


@pytest.mark.parametrize("backend", ["flint", "sympy"])
def test_exact_expansion_returns_a_point_where_the_difference_is_nonzero(backend, monkeypatch):
    from symverify.kernel.provers import exact
    from symverify.kernel.provers.counterexample import confirm

    a, b = pair_sides(SQUARE_C, QUARTIC_M)
    out = exact.expand_compare(a, b, backend, 10**6, None)
    assert out.verdict is Verdict.REFUTED and out.cell == (0, 0) and "x0^4" in out.difference.replace("**", "^")
    u, ps = out.point
    assert abs(u[0][0]) >= 2  # x0² − x0⁴ vanishes on {−1, 0, 1}
    assert confirm(a, b, [list(r) for r in u], dict(ps), "test") is not None
    monkeypatch.setattr(exact, "search_or_stop", lambda *args, **kw: None)  # the point alone must do
    report = verify(SQUARE_C, QUARTIC_M, method="exact", backend=backend)
    assert report.refuted and report.counterexample.found_by.startswith("exact")


def test_weights_with_the_prime_in_a_denominator():
    """1/(2^61 − 1) has no residue mod 2^61 − 1: screening and trials must avoid that prime."""
    w = Fraction(1, M61)
    c = Circuit(1, 1, (Gate.scale(0, w),), (1,))
    bad = Circuit(1, 1, (Gate.scale(0, 2 * w),), (1,))
    assert verify(c, c, method="randomized").proved
    report = verify(c, bad, method="randomized")
    assert report.refuted and report.counterexample.lhs_value * 2 == report.counterexample.rhs_value
    assert verify(c, bad, method="exact").refuted and verify(c, bad, method="auto").refuted
