"""Soundness of the verdicts: no ``proved`` without a valid bound, whatever the caller asks.

Each test is an attack that once produced a false ``proved``, a traceback or a process crash.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.primes import is_prime
from symverify.kernel.provers import randomized as rz
from symverify.kernel.provers.bounds import Bounds
from symverify.kernel.provers.fingerprint import fingerprint

M61 = (1 << 61) - 1
X = Circuit(1, 1, (), (0,))
ZERO = Circuit(1, 1, (Gate.const(0),), (1,))


def power(e: int, times_cubic_minus_x: bool = False) -> Circuit:
    """``x^e`` by square-and-multiply (optionally times ``x³ − x``) on one input."""
    gates: list[Gate] = []

    def add(g: Gate) -> int:
        gates.append(g)
        return len(gates)  # node ids: input 0, gate k is node k + 1

    acc = 0
    for bit in bin(e)[3:]:
        acc = add(Gate.mul(acc, acc))
        if bit == "1":
            acc = add(Gate.mul(acc, 0))
    if times_cubic_minus_x:
        x2 = add(Gate.mul(0, 0))
        x3 = add(Gate.mul(x2, 0))
        cubic = add(Gate.lin(x3, 1, 0, -1))
        acc = add(Gate.mul(acc, cubic))
    return Circuit(1, 1, tuple(gates), (acc,))


FERMAT = power(M61)  # x^(2^61 − 1) ≡ x at every point mod 2^61 − 1


# ---- caller-chosen trials never buy a proof ---------------------------------------------------


@pytest.mark.parametrize("method", ["randomized", "auto"])
@pytest.mark.parametrize("trials", [None, 1, 3])
def test_fermat_pair_is_never_proved(method, trials):
    r = sv.verify(FERMAT, X, method=method, trials=trials)
    assert r.verdict is not sv.Verdict.PROVED
    # the difference was seen modulo a prime larger than the degree bound, and kept as evidence
    assert r.evidence.get("sides_differ_mod_p") is True and int(r.evidence["mismatch_prime"]) > M61
    assert "differ" in r.notes[0]


def test_trials_only_add_trials():
    sq = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    base = sv.verify(sq, sq, method="randomized", backend="python")
    assert base.proved and base.evidence["k"] == 2
    assert sv.verify(sq, sq, method="randomized", backend="python", trials=1).evidence["k"] == 2
    assert sv.verify(sq, sq, method="randomized", backend="python", trials=7).evidence["k"] == 7


def test_fermat_pair_of_small_degree_is_refuted():
    """Where a counterexample is small enough, the large prime's mismatch becomes a refutation."""
    p2 = power(2**20 + 1)  # x^(2^20+1) vs x: differs at x = 2, and 2^(2^20) has 2^20 bits: re-checkable
    r = sv.verify(p2, X, method="randomized")
    assert r.refuted and r.counterexample is not None and r.counterexample.lhs_value == r.counterexample.rhs_value ** (2**20 + 1)


def test_tiny_error_bound_is_met_not_crashed():
    sq = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    r = sv.verify(sq, sq, method="randomized", backend="python", error_bound=Fraction(1, 2**2000))
    assert r.proved and r.evidence["bound_log2"] <= -2000 and r.evidence["k"] == 34


def test_verify_refuses_a_proof_whose_bound_exceeds_the_request(monkeypatch):
    """The rule is also enforced where the report is made: a method that says 'proved' with a
    failure bound above error_bound is a prover bug."""
    from symverify.kernel.provers import registry
    from symverify.kernel.provers.outcome import MethodResult, Verdict, seal

    def lying(*args, **kwargs):  # a buggy prover that bypasses outcome.proved's rule (but not the seal)
        forged = seal("MethodResult", Verdict.PROVED, "randomized", Fraction(1, 2), None)
        return MethodResult(Verdict.PROVED, "randomized", {}, failure_bound=Fraction(1, 2), _seal=forged)

    monkeypatch.setattr(registry, "run_randomized", lying)
    with pytest.raises(sv.ProverError, match="failure bound 1/2, above the requested error_bound"):
        sv.verify(X, X, method="randomized")


# ---- prime sizes follow the degree ------------------------------------------------------------


def _bounds(degree: int, height_bits: int = 10, below: bool = True) -> Bounds:
    return Bounds(degree, height_bits, below, 0, 0, 1, 1)


def test_plan_primes_keeps_2_61_for_small_degrees_and_grows_otherwise():
    small = rz.plan_primes(_bounds(4))
    assert small is not None and small.fixed and small.bits == 61 and small.per_trial == Fraction(4, M61)
    big = rz.plan_primes(_bounds(M61))
    assert big is not None and not big.fixed and big.bits > 64 and big.per_trial <= rz.USEFUL_PER_TRIAL
    tall = rz.plan_primes(_bounds(3, height_bits=10_000, below=False))  # 164 bad primes of ≥ 2^55: 61 bits do
    assert tall is not None and tall.bits == 61 and not tall.fixed and tall.per_trial <= rz.USEFUL_PER_TRIAL
    huge_height = rz.plan_primes(_bounds(3, height_bits=2**50, below=False))  # too many bad 61-bit primes
    assert huge_height is not None and huge_height.bits > 61 and huge_height.per_trial <= rz.USEFUL_PER_TRIAL


def test_plan_primes_trades_trials_for_prime_size_by_cost():
    # 61-bit primes need 3 trials for 2^-100 here (height above 61 bits: beta = ceil(H/61)/2^55)
    tall = Bounds(15_094_648, 36_526_417, False, 0, 0, 2, 1)
    small = rz.plan_primes(tall, ops=100)  # a tiny circuit: drawing a larger prime costs more than two passes
    assert small is not None and small.bits == 61 and rz.trials_needed(small.per_trial, rz.DEFAULT_ERROR_BOUND) == 3
    large = rz.plan_primes(tall, ops=200_000)  # a large one: one trial with a larger prime
    assert large is not None and large.bits > 61 and rz.trials_needed(large.per_trial, rz.DEFAULT_ERROR_BOUND) == 1
    assert large == rz.trial_plan(tall, large.bits)  # the bound is trial_plan's, nothing else
    cost = rz.trial_cost(large, 200_000)
    assert cost < 3 * rz.trial_cost(small, 200_000)
    # a deadline makes proofs of primes above 3.3·10^24 run in a child process: it costs more
    assert rz.trial_cost(large, 200_000, limited=True) > cost
    # the fixed prime that already needs one trial is kept whatever the size
    one = rz.plan_primes(_bounds(4), Fraction(1, 2**40), ops=10**7)
    assert one is not None and one.fixed == M61


@given(st.integers(1, 2**80), st.integers(1, 2**40), st.booleans(), st.integers(0, 10**8), st.integers(20, 400))
@settings(max_examples=150, deadline=None)
def test_plan_primes_never_states_a_bound_above_the_target(degree, height, below, ops, target_bits):
    """Whatever size the cost model picks, its ``trial_plan`` bound with the ``k`` it needs meets the target."""
    target = Fraction(1, 2**target_bits)
    b = Bounds(degree, height, below and height <= 61, 0, 0, 3, 1)
    plan = rz.plan_primes(b, target, ops=ops)
    if plan is None:
        return
    assert plan == rz.trial_plan(b, plan.bits, fixed=plan.fixed)
    k = rz.trials_needed(plan.per_trial, target)
    assert k is not None and plan.per_trial ** k <= target and plan.per_trial <= rz.USEFUL_PER_TRIAL


def test_plan_primes_gives_up_beyond_the_largest_prime():
    assert rz.plan_primes(_bounds(1 << 5000)) is None
    c = power(1 << 5000)  # 5000 squarings: degree 2^5000
    r = sv.verify(c, X, method="randomized")
    assert r.verdict is sv.Verdict.UNKNOWN and "no prime of at most 4096 bits" in r.notes[0]


def test_prime_counts_and_primality_at_every_size():
    assert rz.primes_in_range_lower(61) == 2**55
    assert rz.primes_in_range_lower(128) == 2**128 // 256
    assert is_prime(2**127 - 1) and not is_prime(2**127 + 1) and not is_prime((2**89 - 1) * (2**61 - 1))
    assert is_prime(2**521 - 1) and not is_prime(2**523 - 1)


def test_pow2_text_is_exact_and_never_understates():
    assert rz.pow2_text(Fraction(1, 2**100)) == "2^-100.0"
    assert rz.pow2_text(Fraction(1, 2**100) * Fraction(101, 100)) == "2^-99.9"
    assert rz.pow2_text(Fraction(1)) == "1" and rz.pow2_text(Fraction(3)) == "1" and rz.pow2_text(Fraction(0)) == "0"
    assert rz.pow2_text(Fraction(1, 2**5000)) == "2^-5000.0"


def test_trials_needed_at_extreme_targets():
    assert rz.trials_needed(Fraction(1, 2), Fraction(1, 2**2000)) == 2000
    assert rz.trials_needed(Fraction(1, 2**64), Fraction(1, 2**100)) == 2
    assert rz.trials_needed(Fraction(1), Fraction(1, 2)) is None
    assert rz.trials_needed(Fraction(0), Fraction(1, 2**100)) == 1


# ---- symbolic weights are polynomials ---------------------------------------------------------


def test_sym_refuses_negative_zero_and_fractional_exponents():
    a = sv.sym("a")
    with pytest.raises(sv.IRError, match="negative powers are not allowed"):
        a ** -1
    with pytest.raises(sv.IRError, match="expected an int exponent"):
        a ** Fraction(1, 2)
    with pytest.raises(sv.IRError, match="expected an int exponent"):
        a ** True
    with pytest.raises(sv.IRError, match="must be a positive int, found -2305843009213693950"):
        sv.Sym(((((("a", -(M61 - 1)),), Fraction(1))),))
    with pytest.raises(sv.IRError, match="must be a positive int, found 0"):
        sv.Sym(((((("a", 0),), Fraction(1))),))


@pytest.mark.parametrize(
    "terms, match",
    [
        ((), "at least one term"),
        ((((), Fraction(2)),), "lone constant"),
        (((((("a", 1),), 1)),), "nonzero Fraction coefficient"),
        (((((("a", 1),), Fraction(0))),), "nonzero Fraction coefficient"),
        (((((("1a", 1),), Fraction(1))),), "identifier"),
        (((((("b", 1), ("a", 1)), Fraction(1))),), "sorted and distinct"),
        (((((("a", 1), ("a", 1)), Fraction(1))),), "sorted and distinct"),
        ((((("b", 1),), Fraction(1)), ((("a", 1),), Fraction(1))), "sorted by monomial"),
        ([((("a", 1),), Fraction(1))], "tuple"),
        ((((("a", 1.0),), Fraction(1)),), "positive int"),
    ],
)
def test_sym_refuses_non_canonical_terms(terms, match):
    with pytest.raises(sv.IRError, match=match):
        sv.Sym(terms)


def test_sym_powers_by_squaring_and_the_term_limit():
    a, b = sv.sym("a"), sv.sym("b")
    assert str(a ** (10**9)) == "a^1000000000"  # one term: exponents multiply, instantly
    assert (a + 1) ** 5 == (a + 1) * (a + 1) * (a + 1) * (a + 1) * (a + 1)
    assert (a + b) ** 0 == 1
    with pytest.raises(sv.IRError, match="MAX_SYM_TERMS"):
        (a + b + 1) ** 10_000


def test_a_weight_inverse_by_fermat_cannot_be_built():
    """``a^-(2^61-2) ≡ a mod 2^61 − 1`` once made randomized prove ``x·w ≡ x``: such a weight
    cannot exist, and a legitimate weight is never cancelled mod p."""
    with pytest.raises(sv.IRError):
        sv.sym("a") ** -(M61 - 2)
    w = sv.sym("a") ** (M61 - 1)  # ≡ 1 mod 2^61 − 1 at every a ≠ 0, a genuine polynomial of degree 2^61 − 2
    xw = Circuit(1, 1, (Gate.lin(0, w, 0, 0),), (1,))
    for method in ("randomized", "auto", "exact", "z3"):
        assert not sv.verify(xw, X, method=method, timeout=30).proved, method


# ---- exact and z3 on huge degrees: an answer, never a crash -----------------------------------


def test_exact_on_fermat_pair_is_unknown_not_a_traceback():
    r = sv.verify(FERMAT, X, method="exact")
    assert r.verdict is sv.Verdict.UNKNOWN and "no counterexample small enough" in r.notes[0]


def test_z3_refuses_huge_degree_before_z3_sees_it():
    r = sv.verify(FERMAT, X, method="z3")
    assert r.verdict is sv.Verdict.UNKNOWN and "z3 degree guard" in r.notes[0]


def test_z3_runs_isolated_and_still_decides_small_pairs():
    sq = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    assert sv.verify(sq, sq, method="z3").proved
    r = sv.verify(sq, X, method="z3")
    assert r.refuted and r.evidence["ran"] == "subprocess"


def test_huge_degree_difference_neither_aborts_nor_hangs():
    """``x^(2^40)·(x³ − x)`` vs 0 vanishes on {−1, 0, 1}; once FLINT aborted the process evaluating
    it at 2 (70 s, with timeout=10) and z3 ran out of memory. Run in a child so an abort would show."""
    code = textwrap.dedent(
        """
        import symverify as sv
        from test_soundness_core import power, ZERO
        c = power(2**40, times_cubic_minus_x=True)
        for m in ("exact", "z3", "randomized", "auto"):
            r = sv.verify(c, ZERO, method=m, timeout=10)
            assert not r.proved, m
            print(m, r.verdict)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).parent)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("unknown") + out.stdout.count("refuted") == 4


# ---- the structural bounds every randomized proof rests on ------------------------------------

from symverify.kernel.provers.bounds import structure_bounds  # noqa: E402
from symverify.kernel.provers.sides import pair_sides  # noqa: E402
from symverify.kernel.semantics.poly import polynomials, shared_ring  # noqa: E402
from symverify.testing import circuits, models  # noqa: E402


def _check_bounds_cover(a, b) -> None:
    """The certified degree bounds every output's true degree, and every coefficient of every
    output difference has a numerator below ``2^height_bits`` in magnitude (``Q^S·c`` is an integer
    that the reduced numerator divides: the bad-prime count rests on it)."""
    bounds = structure_bounds(*pair_sides(a, b))
    ring = shared_ring(a, b, backend="flint")
    pa, pb = polynomials(a, ring), polynomials(b, ring)
    for ra, rb in zip(pa, pb):
        for x, y in zip(ra, rb):
            for poly in (x, y):
                assert ring.degree(poly) <= bounds.degree
            diff = x - y
            for c in diff.coeffs():
                assert abs(int(c.p)) < 2**bounds.height_bits


@settings(max_examples=60, deadline=None, derandomize=True)
@given(circuits(max_gates=10, allow_sym=True), circuits(max_gates=10, allow_sym=True))
def test_structure_bounds_cover_random_circuits(c1, c2):
    if (c1.n, c1.d) != (c2.n, c2.d):
        c2 = c1
    _check_bounds_cover(c1, c2)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(models(max_layers=3))
def test_structure_bounds_cover_random_models(m):
    _check_bounds_cover(m, m)


# ---- Fiat–Shamir: the points depend on everything that defines a side --------------------------


def test_fingerprint_sees_every_weight_of_a_kaleidoscope_and_huge_values():
    from symverify.kaleidoscope import SparseMatrix, sparse_to_kaleidoscope

    k1 = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2], [0, 3]])).kaleidoscope
    k2 = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2], [0, 4]])).kaleidoscope
    assert repr(k1) == repr(k2)  # the short repr cannot tell them apart; the fingerprint must
    assert fingerprint(k1) != fingerprint(k2)
    big = Circuit(1, 1, (Gate.const(10**5000),), (1,))
    bigger = Circuit(1, 1, (Gate.const(10**5000 + 1),), (1,))
    assert fingerprint(big) != fingerprint(bigger)
    assert sv.verify(big, bigger, method="randomized").refuted


def test_z3_handles_constants_past_the_int_str_limit():
    big = Circuit(1, 1, (Gate.const(10**5000),), (1,))
    bigger = Circuit(1, 1, (Gate.const(10**5000 + 1),), (1,))
    assert sv.verify(big, big, method="z3").proved
    r = sv.verify(big, bigger, method="z3")
    assert r.refuted and "5001-digit integer" in str(r)


def test_auto_falls_back_when_the_certificate_does_not_fit_the_circuit():
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.mul(1, 0)), (2, 3))
    same = Circuit(1, 2, c.gates, (3, 2))  # the same polynomials, read from the other nodes
    compiled = sv.compile(c, method="dense")
    with pytest.raises(sv.IRError):
        sv.verify(same, compiled, method="compositional")
    r = sv.verify(same, compiled, method="auto")
    assert r.proved and r.method != "compositional" and "does not fit" in r.notes[0]


def test_integral_weights_cost_no_denominator_factor():
    """With ``Q = 2`` somewhere, a chain of integer masks adds no factor ``Q`` to the height: 40
    layers multiplying by the mask 1 keep the height of ``x/2`` (numerator 1), where one factor
    ``Q`` per scalar would give about 40 bits; the bound still covers the true coefficients."""
    half = Layer.make(2, 1, b1=Grid.full(2, 1, Fraction(1, 2)), b2=Grid.full(2, 1, 0), h=Grid.zeros(2, 1).paint(0, 1, 0, 1, 1))
    mask = Layer.make(2, 1, b1=Grid.full(2, 1, 1), b2=Grid.full(2, 1, 0), h=Grid.zeros(2, 1).paint(0, 1, 0, 1, 1))
    m = Model(2, 1, 2, 1, (half,) + (mask,) * 40)
    bounds = structure_bounds(*pair_sides(m, Circuit(2, 1, (), ())))
    assert bounds.denominator == 2 and bounds.height_bits <= 2
    _check_bounds_cover(m, Circuit(2, 1, (), ()))
