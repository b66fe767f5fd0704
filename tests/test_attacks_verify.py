"""Attacks on ``verify(a, b, ...)`` from Python: arguments of the wrong type or range, bounds at
the edge of representable, huge weights and degrees. Each ends in a clear ``SymverifyError`` or an
honest verdict, never a false ``proved`` (tests/test_verify_regressions.py and
test_soundness_attacks.py hold the older ones)."""

import math
from decimal import Decimal
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import UsageError


@pytest.fixture(scope="module")
def pair():
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    return c, sv.compile(c)


@pytest.fixture(scope="module")
def wrong():
    return sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] - u[1][0], u[1][1]], n=2, d=2)


# ---- error bounds whose exact value Python's str() cannot print ---------------------------------
def test_a_tiny_error_bound_is_honoured_not_a_crash(pair):
    """``error_bound = 2^-20000``: the outcome seal printed the failure bound in decimal, beyond
    Python's 4300-digit int/str limit (ValueError). The bound is now sealed in hexadecimal."""
    c, compiled = pair
    report = sv.verify(c, compiled, method="randomized", backend="python", error_bound=Fraction(1, 2**20000))
    assert report.proved and "error ≤ 2^-200" in str(report)


def test_a_tiny_error_bound_still_refutes(pair, wrong):
    _, compiled = pair
    report = sv.verify(wrong, compiled, method="randomized", error_bound=Fraction(1, 2**20000))
    assert report.refuted and report.counterexample is not None


@pytest.mark.parametrize("bound", [Fraction(1, 2**65537), Fraction(1, 2**10**7), Fraction(3, 2**10**7 + 7)],
                         ids=["2^-65537", "2^-10^7", "3/2^(10^7+7)"])
def test_an_error_bound_below_max_error_bits_is_refused_at_once(pair, bound):
    """``error_bound = 2^-10^9`` computed ``k`` and ``eps^k`` exactly on numbers of 10^9 bits (minutes and
    gigabytes, no timeout checked); a bound below ``2^-MAX_ERROR_BITS`` is a ``UsageError`` naming the limit."""
    c, compiled = pair
    found = bound.denominator.bit_length() - bound.numerator.bit_length()
    with pytest.raises(UsageError, match=rf"^error_bound: expected at least 2\^-65536 \(symverify\.ir\.limits\.MAX_ERROR_BITS; "
                                         rf".*found about 2\^-{found}$"):
        sv.verify(c, compiled, method="randomized", error_bound=bound)


@pytest.mark.parametrize("bound", [Decimal("0.001"), "0.001", complex(0.5), "x", [1]], ids=repr)
def test_an_error_bound_of_another_type_is_a_usage_error_saying_what_it_takes(pair, bound):
    """``error_bound=Decimal('0.001')`` was an ``IRError`` "expected an exact value (int, Fraction, Sym or a string
    like '1/2')": a weight's wording, which leaves out the floats ``error_bound`` takes and names ``Sym``, which it
    refuses."""
    c, compiled = pair
    with pytest.raises(UsageError, match=r"^error_bound: expected a number strictly between 0 and 1: an int, a Fraction, "
                                         rf"a string such as '1/1000' or a finite float, found {type(bound).__name__} "):
        sv.verify(c, compiled, method="randomized", error_bound=bound)


def test_max_error_bits_is_read_at_the_call(pair, monkeypatch):
    from symverify.ir import limits

    c, compiled = pair
    assert sv.verify(c, compiled, method="randomized", error_bound=Fraction(1, 2**65536)).proved  # the limit itself
    monkeypatch.setattr(limits, "MAX_ERROR_BITS", 100)
    with pytest.raises(UsageError, match=r"expected at least 2\^-100 .*found about 2\^-101$"):
        sv.verify(c, compiled, method="auto", error_bound=Fraction(1, 2**101))


@pytest.mark.parametrize(("bound", "k"), [(Fraction(1, 10**5000), 277), (Fraction(10**5000 - 1, 10**5000), 1),
                                          (Fraction(2**5000 + 1, 2**5100), 2)], ids=["10^-5000", "1-10^-5000", "2^-100+"])
def test_an_error_bound_with_huge_numerator_and_denominator_is_met_exactly(pair, bound, k):
    """(``verify`` itself holds a ``proved`` to ``failure bound ≤ error_bound`` exactly.)"""
    c, compiled = pair
    report = sv.verify(c, compiled, method="randomized", backend="python", error_bound=bound)
    assert report.proved and report.evidence["k"] == k


def test_a_degree_just_below_2_to_the_30_does_not_hang_the_plan():
    """A circuit of degree 2^30 − 1 hung ``verify(method='randomized')`` at the default bound: the torch plan
    (computed before it is ruled out) sought the least ``B`` with ``((2^30 − 1)/2^30)^B ≤ 2^-100``, about
    7·10^10, by exact powers. A count beyond ``MAX_ERROR_BITS`` is no longer computed (that plan is ruled out
    anyway: its D/2^30 is above 2^-10), and the python engine proves it."""
    from symverify.kernel.provers.bounds import Bounds
    from symverify.kernel.provers.randomized import trial_plan, trials_needed

    e = 2**30 - 1

    def power(u):
        x, r = u[0][0], u[0][0]
        for _ in range(29):
            x = x * x
            r = r * x
        return [r]

    c = sv.Circuit.trace(power, n=1, d=1)
    report = sv.verify(c, c, method="randomized")
    assert report.proved and report.evidence["degree_bound"] == e
    assert trial_plan(Bounds(e, 0, True, 1, 1, 1, 1), 30, target=Fraction(1, 2**100)).batch == 1
    assert trials_needed(Fraction(e, 2**30), Fraction(1, 2**100), cap=10**6) is None
    assert trials_needed(Fraction(10**5000 - 1, 10**5000), Fraction(1, 2), cap=10**6) is None  # log2 cancels to 0
    assert trials_needed(Fraction(1, 2**40), Fraction(1, 2**2000), cap=50) == 50
    assert trials_needed(Fraction(1, 2**40), Fraction(1, 2**2000), cap=49) is None
    # within 2^-1074 of 1 the float estimate is infinite (it divided by zero): the exact search starts at 1
    assert trials_needed(Fraction(2**2000 - 1, 2**2000), Fraction(2**1999 - 1, 2**1999)) == 3


# ---- seeds ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [2**63, -(2**63), 2**20000], ids=["2^63", "-2^63", "2^20000"])
def test_seeds_beyond_63_bits_are_usage_errors(pair, seed):
    """A seed of 20000 bits made ``str(report)`` raise ValueError (Python's int/str limit)."""
    c, compiled = pair
    with pytest.raises(UsageError, match=r"seed: expected an int within ±\(2\^63 − 1\)"):
        sv.verify(c, compiled, method="randomized", seed=seed)


@pytest.mark.parametrize("seed", [2**63 - 1, -(2**63 - 1), -1])
def test_seeds_within_63_bits_are_recorded(pair, seed):
    c, compiled = pair
    report = sv.verify(c, compiled, method="randomized", seed=seed)
    assert report.proved and report.seed == seed and f"seed {seed}" in str(report)


# ---- timeouts ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("timeout", [True, False])
def test_a_bool_timeout_is_a_usage_error(pair, timeout):
    """``timeout=True`` was one second."""
    c, compiled = pair
    with pytest.raises(UsageError, match="timeout: expected a positive number of seconds"):
        sv.verify(c, compiled, timeout=timeout)


def test_an_int_timeout_beyond_a_float_is_a_usage_error(pair):
    """``timeout=10**400`` raised OverflowError adding it to ``time.monotonic()``."""
    c, compiled = pair
    with pytest.raises(UsageError, match="timeout: expected a number of seconds below 2\\^1023"):
        sv.verify(c, compiled, timeout=10**400)


def test_an_infinite_timeout_is_no_limit(pair):
    c, compiled = pair
    assert sv.verify(c, compiled, timeout=math.inf).proved
    assert sv.verify(c, compiled, timeout=10**300).proved


# ---- isolate ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("isolate", ["yes", 1, 0])
def test_isolate_must_be_a_bool(pair, isolate):
    """``isolate='yes'`` (or ``0``, which reads as 'forbid') was taken for its truth value."""
    c, compiled = pair
    with pytest.raises(UsageError, match="isolate: expected True, False or None"):
        sv.verify(c, compiled, method="exact", isolate=isolate)


# ---- huge weights and degrees: honest verdicts ------------------------------------------------------
def test_a_weight_of_2_4000_off_by_one_is_refuted_by_every_method():
    a = sv.Circuit.trace(lambda u: [u[0][0] * 2**4000], n=1, d=1)
    b = sv.Circuit.trace(lambda u: [u[0][0] * (2**4000 + 1)], n=1, d=1)
    for method in ("auto", "exact", "randomized", "z3"):
        report = sv.verify(a, b, method=method, timeout=30)
        assert report.refuted, method
    assert sv.verify(a, sv.compile(b)).refuted
    assert sv.verify(b, sv.compile(b)).proved


def test_a_weight_equal_to_the_mersenne_prime_is_not_zero():
    """``p·x`` vanishes mod ``p = 2^61 − 1``: the randomized engine must not call it equal to ``0·x``."""
    p = 2**61 - 1
    a = sv.Circuit.trace(lambda u: [u[0][0] * p], n=1, d=1)
    zero = sv.Circuit.trace(lambda u: [u[0][0] * 0], n=1, d=1)
    assert sv.verify(a, zero, method="randomized", backend="python").refuted


def _power_tower(plus: int):
    def f(u):
        x = u[0][0]
        for _ in range(200):
            x = x * x
        return [x + plus]
    return sv.Circuit.trace(f, n=1, d=1)


def test_squaring_200_times_is_decided_without_expanding():
    """Degree 2^200: exact works on two monomials, randomized takes primes above the degree, z3
    refuses by its degree guard (unknown with the reason), and a difference is refuted."""
    a, b = _power_tower(0), _power_tower(1)
    assert sv.verify(a, a, method="exact").proved
    rnd = sv.verify(a, a, method="randomized")
    assert rnd.proved and "error ≤ 2^-1" in str(rnd)
    z3 = sv.verify(a, a, method="z3")
    assert not z3.proved and any("degree guard" in n for n in z3.notes)
    for method in ("auto", "exact", "randomized"):
        assert sv.verify(a, b, method=method).refuted, method
