"""Regressions found in review; each test's docstring says what went wrong."""

from fractions import Fraction

import pytest

from symverify import Circuit, Gate, UsageError, sym
from symverify.kernel.ir.butterfly import Kaleidoscope
from symverify.kernel.provers.challenge import Transcript
from symverify.kernel.provers.randomized import random_prime
from symverify.kernel.verification import verify
from symverify.semantics.exact import evaluate


def _forge(tag: str, k: int) -> list[int]:
    """The points a fixed, public seed would give if the sides were not hashed into the challenge:
    the transcript of the seed alone, read as the method reads it."""
    tr = Transcript("randomized", 0)
    out = []
    for t in range(k):
        p = random_prime(tr.stream(tag, "python", t, "prime"), 1)
        out.append(tr.stream(tag, "python", t, "point", p).below(p))
    return out


def test_public_seed_cannot_be_used_to_forge_a_proof():
    """With seed=0 the trial points were predictable, so y = x + Π(x − r_i) passed as y = x."""
    roots = _forge("pre", 1) + _forge("sz", 2)
    gates: list[Gate] = []

    def add(g: Gate) -> int:
        gates.append(g)
        return len(gates)

    prod = None
    for r in roots:
        f = add(Gate.sub(0, add(Gate.const(r))))
        prod = f if prod is None else add(Gate.mul(prod, f))
    out = add(Gate.add(0, prod))
    sq = add(Gate.add(0, add(Gate.const(1))))
    for _ in range(19):  # a dead high-degree chain pushes auto past exact expansion
        sq = add(Gate.mul(sq, sq))
    lhs, rhs = Circuit(1, 1, (), (0,)), Circuit(1, 1, tuple(gates), (out,))
    for method in ("auto", "randomized"):
        report = verify(lhs, rhs, method=method)
        assert report.refuted, str(report)
        u = [list(r) for r in report.counterexample.inputs]
        assert evaluate(lhs, u) != evaluate(rhs, u)


def test_randomized_evidence_names_how_points_are_drawn():
    c = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    report = verify(c, c, method="randomized", backend="python")
    assert report.proved and "Fiat" in report.evidence["points_from"]


def test_kaleidoscope_difference_only_in_the_weights_is_refuted_not_a_prover_error():
    """A symbolic difference vanishing on small integers made the exact-matrix path raise ProverError."""
    a = sym("a")
    P = 1
    for c in range(-3, 4):
        P = P * (a - c)
    rhs = Circuit(1, 1, (Gate.scale(0, 1 + P),), (1,))
    for method in ("exact", "auto"):
        report = verify(Kaleidoscope.identity(1), rhs, method=method)
        assert report.refuted, str(report)


def test_huge_degree_counterexample_is_unknown_not_a_hang():
    """x^(2^40) vs x^(2^40) + x³ − x differ only at |x| ≥ 2, where exact values have 2^40 bits."""
    gates = [Gate.mul(0, 0)]
    for _ in range(39):
        gates.append(Gate.mul(len(gates), len(gates)))
    top = len(gates)
    lhs = Circuit(1, 1, tuple(gates), (top,))
    x3 = len(gates) + 1
    more = [Gate.mul(0, 0), Gate.mul(x3, 0), Gate.sub(x3 + 1, 0), Gate.add(top, x3 + 2)]
    rhs = Circuit(1, 1, tuple(gates) + tuple(more), (top + 4,))
    report = verify(lhs, rhs, method="randomized", backend="python", timeout=30)
    assert report.verdict.value == "unknown", str(report)
    assert "too large to re-check" in report.notes[0]


@pytest.mark.parametrize("bound", [0, 1, 2, -1, 0.0, 1.0, float("nan"), float("inf"), -0.5, True, False])
def test_error_bound_outside_unit_interval_is_a_usage_error(bound):
    c = Circuit(1, 1, (), (0,))
    with pytest.raises(UsageError, match="error_bound: expected a number strictly between 0 and 1"):
        verify(c, c, method="randomized", error_bound=bound)


def test_a_float_error_bound_is_read_at_its_exact_value():
    """``error_bound=1e-9`` was refused ("expected an exact value ..., pass Fraction(0, 1)"): a
    finite float is its exact binary value, and the proof's failure bound is at most that."""
    import math

    c = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    ks = []
    for eb in (0.25, 1e-9, 2.0 ** -200):
        report = verify(c, c, method="randomized", error_bound=eb, backend="python")
        assert report.proved and report.evidence["bound_log2"] <= math.log2(eb)
        ks.append(report.evidence["k"])
    assert ks[0] < ks[2]  # the tighter bound took more trials


def test_a_numpy_float_error_bound_is_read_at_its_exact_value():
    """A numpy float of any width is a float too: ``np.float32(0.25)`` was refused with the
    "pass Fraction" hint while ``np.float64`` was accepted; numpy bools and NaN get the range error."""
    import numpy as np

    from symverify.kernel.provers.options import _check_error_bound

    assert _check_error_bound(np.float32(0.1)) == Fraction(float(np.float32(0.1)))
    assert _check_error_bound(np.float16(0.25)) == Fraction(1, 4)
    assert _check_error_bound(np.longdouble(1) / 3) == Fraction(*(np.longdouble(1) / 3).as_integer_ratio())
    c = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    assert verify(c, c, method="randomized", error_bound=np.float32(0.25), backend="python").proved
    for bad in (np.True_, np.float32("nan"), np.float32("inf"), np.float32(1.0)):
        with pytest.raises(UsageError, match="error_bound: expected a number strictly between 0 and 1"):
            verify(c, c, method="randomized", error_bound=bad)


def test_timeout_must_be_positive():
    c = Circuit(1, 1, (), (0,))
    with pytest.raises(UsageError, match="timeout: expected a positive number"):
        verify(c, c, timeout=0)


@pytest.mark.parametrize("kwargs, match", [
    ({"seed": "abc"}, r"seed: expected an int"),
    ({"seed": 1.5}, r"seed: expected an int"),
    ({"trials": "5", "method": "randomized"}, r"trials: expected a positive int, found '5'"),
    ({"memory_limit": "1GB"}, r"memory_limit: expected an int ≥ 1"),
    ({"max_monomials": -1}, r"max_monomials: expected an int ≥ 0"),
])
def test_option_types_are_checked(kwargs, match):
    c = Circuit(1, 1, (), (0,))
    with pytest.raises(UsageError, match=match):
        verify(c, c, **kwargs)


def test_execute_catches_a_misspelt_parameter():
    from symverify import IRError
    from symverify.executors import execute

    c = Circuit(1, 1, (Gate.scale(0, sym("a")),), (1,))
    assert execute(c, [[2]], params={"a": 3}).tolist() == [[6]]
    with pytest.raises(IRError, match=r"'A' is not a symbolic weight of the circuit \(its symbolic weights are a\)"):
        execute(c, [[2]], params={"A": 3})
    with pytest.raises(IRError, match=r"'A' is not a symbolic weight of the circuit"):
        execute(c, [[2]], params={"a": 3, "A": 3})  # even when every weight has its value
