"""Attacks on ``verify(a, b, ...)`` from Python: arguments of the wrong type or range, bounds at
the edge of representable, huge weights and degrees. Each ends in a clear ``SymverifyError`` or an
honest verdict, never a false ``proved`` (tests/test_verify_regressions.py and
test_soundness_attacks.py hold the older ones)."""

import math
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
