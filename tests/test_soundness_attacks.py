"""Adversarial inputs aimed at known false proofs and crashes of ``verify``.

Each test states the attack. A method may answer ``refuted`` or ``unknown`` on these pairs, never
``proved`` (they differ), and it may not crash: an exception is for malformed input only.
"""

import subprocess
import sys
import textwrap
import time
from fractions import Fraction

import pytest

from symverify import Circuit, Gate, IRError, Sym, sym
from symverify.kernel.verification import verify
from symverify.semantics.exact import evaluate

M61 = 2**61 - 1
METHODS = ("exact", "randomized", "z3", "auto")


def x_to_the(e: int) -> Circuit:
    """``x^e`` on a 1×1 input by repeated squaring (MUL gates only)."""
    return Circuit.trace(lambda u: [u[0][0] ** e], n=1, d=1, name=f"x^{e}")


IDENTITY = Circuit(1, 1, (), (0,), "x")


def assert_not_proved(lhs, rhs, report) -> None:
    assert not report.proved, f"false proof: {report}"
    if report.refuted:
        u, ps = [list(r) for r in report.counterexample.inputs], report.counterexample.param_dict()
        i, j = report.counterexample.cell
        cex = report.counterexample
        assert evaluate(lhs, u, cex.params_for(lhs))[i][j] != evaluate(rhs, u, cex.params_for(rhs))[i][j]
        assert ps.keys() == cex.params_for(lhs).keys() | cex.params_for(rhs).keys()


# ---- (a) x^(2^61−1) ≡ x modulo the prime 2^61 − 1 (Fermat), so a fixed-prime test cannot see it ----


def test_fermat_power_circuit_is_small_and_of_degree_2_61_minus_1():
    """The attack pair differs as polynomials (degrees 2^61 − 1 and 1) with a 120-gate circuit."""
    from symverify.kernel.ir.analysis import stats

    c = x_to_the(M61)
    assert c.size == 120 and stats(c).degree_bound == M61  # 60 squarings and 60 products




@pytest.mark.parametrize("method, trials", [
    pytest.param("randomized", 3),
    pytest.param("auto", 3),
    pytest.param("auto", None),
    pytest.param("exact", None),
    ("randomized", None),
])
def test_fermat_power_is_not_proved(method, trials):
    lhs = x_to_the(M61)
    report = verify(lhs, IDENTITY, method=method, trials=trials, timeout=30)
    assert_not_proved(lhs, IDENTITY, report)


@pytest.mark.parametrize("method, trials", [
    pytest.param("randomized", 3),
    pytest.param("auto", 3),
    ("randomized", None),
])
def test_fermat_power_of_a_weight_is_not_proved(method, trials):
    """The same attack through a valid symbolic weight: ``x·a^(2^61−1)`` vs ``x·a``."""
    lhs = Circuit(1, 1, (Gate.scale(0, Sym(((((("a", M61),), Fraction(1))),))),), (1,), "x·a^p")
    rhs = Circuit(1, 1, (Gate.scale(0, sym("a")),), (1,), "x·a")
    report = verify(lhs, rhs, method=method, trials=trials, timeout=30)
    assert_not_proved(lhs, rhs, report)


# ---- (b) negative exponents in Sym: a^−(p−1) ≡ 1 mod p, and Sym.__pow__ drops negative powers ----


@pytest.mark.parametrize("exponent", [-1, 0, -(M61 - 1), Fraction(1, 2), 1.5])
def test_sym_rejects_non_positive_or_non_integer_exponents(exponent):
    with pytest.raises(IRError):
        Sym(((((("a", exponent),), Fraction(1))),))


@pytest.mark.parametrize("k", [-1, -(M61 - 1)])
def test_negative_power_of_a_symbol_raises(k):
    with pytest.raises(IRError):
        sym("a") ** k


def test_symbol_to_the_zero_is_one():
    assert sym("a") ** 0 == 1 and sym("a") ** 2 == sym("a") * sym("a")


@pytest.mark.parametrize("method", METHODS)
def test_weight_with_negative_exponent_is_never_proved(method):
    """``w = a^−(2^61−2)`` is ``1`` mod ``2^61 − 1`` for every ``a ≠ 0`` and ``1`` to z3's term builder, but
    ``x·w ≠ x``. Either the weight cannot be built (IRError) or ``x·w`` vs ``x`` is not proved."""
    try:
        w = Sym(((((("a", -(M61 - 1)),), Fraction(1))),))
    except IRError:
        return
    lhs = Circuit(1, 1, (Gate.scale(0, w),), (1,), "x·w")
    report = verify(lhs, IDENTITY, method=method, timeout=30)
    assert_not_proved(lhs, IDENTITY, report)


# ---- (c) a tiny error bound must not overflow the float logarithm ----


@pytest.mark.parametrize("method", ["randomized", "auto"])
@pytest.mark.parametrize("differ", [False, True])
def test_tiny_error_bound_is_not_a_math_domain_error(method, differ):
    square = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    other = Circuit(1, 1, (Gate.mul(0, 0), Gate.add(1, 0)), (2,)) if differ else square
    report = verify(square, other, method=method, error_bound=Fraction(1, 2**2000))
    assert report.verdict.value == ("refuted" if differ else "proved"), str(report)


def test_tiny_error_bound_is_fine_for_exact():
    square = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    assert verify(square, square, method="exact", error_bound=Fraction(1, 2**2000)).proved


# ---- (d) a huge degree must end in unknown or refuted within the timeout, never abort the process ----

_HUGE = textwrap.dedent("""
    import sys
    from fractions import Fraction
    from symverify import Circuit, Gate, Sym, sym
    from symverify.kernel.verification import verify

    method, case = sys.argv[1], sys.argv[2]
    if case == "power":  # x^(2^40)·(x³ − x) vs 0: zero at x ∈ {−1, 0, 1}, 2^40-bit values elsewhere
        lhs = Circuit.trace(lambda u: [u[0][0] ** (2**40) * (u[0][0] ** 3 - u[0][0])], n=1, d=1)
        rhs = Circuit(1, 1, (), (), "0")
    else:  # x·a^(2^61 − 1) vs x·a: a valid symbolic weight of huge degree
        lhs = Circuit(1, 1, (Gate.scale(0, Sym(((((("a", 2**61 - 1),), Fraction(1))),))),), (1,))
        rhs = Circuit(1, 1, (Gate.scale(0, sym("a")),), (1,))
    report = verify(lhs, rhs, method=method, timeout=10)
    print("VERDICT", report.verdict.value)
""")
_WALL = 45  # seconds: verify's timeout is 10 s; the rest is imports and slack


def run_isolated(runs):
    """Each ``(method, case)`` of ``_HUGE`` in its own process at once; the failures, as text."""
    procs = {run: subprocess.Popen([sys.executable, "-c", _HUGE, *run], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True) for run in runs}
    deadline = time.monotonic() + _WALL
    failures = []
    for (method, case), proc in procs.items():
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            failures.append(f"{method} on {case}: still running after {_WALL} s (timeout=10)")
            continue
        verdict = next((line.split()[1] for line in out.splitlines() if line.startswith("VERDICT")), None)
        if proc.returncode != 0 or verdict not in ("unknown", "refuted"):
            failures.append(f"{method} on {case}: exit status {proc.returncode}, verdict {verdict}, "
                            f"stderr {err.strip()[-300:]!r}")
    return failures


def test_huge_degree_ends_in_unknown_or_refuted_without_aborting():
    """Every run at once, each in its own process, so the wall-clock limit is paid once."""
    failures = run_isolated([("z3", "power"), ("exact", "power"), ("auto", "power"), ("z3", "weight")])
    assert not failures, "; ".join(failures)
