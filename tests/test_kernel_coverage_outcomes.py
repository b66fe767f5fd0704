"""Coverage of small refusal and formatting paths of ``symverify/kernel/``: ``primes.passes_screen``
below 2, ``outcome.is_sealed`` and ``outcome.jsonable``, ``sides.as_side``/``pair_sides`` with a
certificate of the wrong type, and ``counterexample.recheck`` of a counterexample that a prover
left incomplete or malformed (a ProverError, never a confirmed refutation).
"""

from __future__ import annotations

import enum
from fractions import Fraction

import pytest

from symverify.errors import IRError, ProverError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.primes import passes_screen
from symverify.kernel.provers import outcome
from symverify.kernel.provers.counterexample import recheck
from symverify.kernel.provers.outcome import Counterexample
from symverify.kernel.provers.sides import as_side, pair_sides


def test_screen_refuses_below_two() -> None:
    """primes.py ``passes_screen``: 0 and 1 are not prime (the Miller–Rabin loop would call 1 a
    probable prime)."""
    assert passes_screen(0) is False and passes_screen(1) is False
    assert passes_screen(2) is True and passes_screen(4) is False


def test_is_sealed_needs_a_verdict() -> None:
    """outcome.py ``is_sealed``: an object without a Verdict is not a sealed outcome."""

    class Fake:
        verdict = "proved"

    assert outcome.is_sealed(Fake()) is False
    assert outcome.is_sealed(object()) is False


def test_jsonable_enum_to_json_and_fallback() -> None:
    """outcome.py ``jsonable``: an Enum is its value, an object with ``to_json`` is that, and
    anything else is printed as a scalar."""

    class Colour(enum.Enum):
        RED = "red"

    class Box:
        def to_json(self) -> dict[str, object]:
            return {"x": Fraction(1, 3), "c": Colour.RED}

    assert outcome.jsonable(Colour.RED) == "red"
    assert outcome.jsonable(Box()) == outcome.jsonable({"x": Fraction(1, 3), "c": "red"})
    assert outcome.jsonable(Box())["c"] == "red"

    class Other:
        def __str__(self) -> str:
            return "other"

    assert outcome.jsonable(Other()) == "other"


def _model() -> Model:
    return Model(1, 2, 1, 2, (Layer.make(1, 2, W=Grid.identity(2), b2=Grid.full(1, 2, 1)),))


def test_certificates_of_the_wrong_type_are_refused() -> None:
    """sides.py ``as_side`` (a compiled object whose ``certificate`` is not a Certificate) and
    ``pair_sides`` (``certificate=`` not a Certificate)."""
    m = _model()

    class Compiled:
        model = m
        certificate = "boundaries"

    with pytest.raises(IRError, match="the compiled object's certificate must be a Certificate, found str"):
        as_side(Compiled(), "lhs")
    with pytest.raises(IRError, match=r"verify certificate=: expected a Certificate, found int"):
        pair_sides(m, m, certificate=5)


def _sym_pair():
    w = sym("w")
    a = Circuit(1, 2, (Gate.lin(0, w, 1, 1),), (2, 2))
    b = Circuit(1, 2, (Gate.lin(0, 1, 1, 1),), (2, 2))
    return pair_sides(a, b)


def test_recheck_refuses_a_counterexample_without_parameter_values() -> None:
    """counterexample.py ``recheck``: the sides read ``w``, the counterexample gives no value for it."""
    lhs, rhs = _sym_pair()
    cex = Counterexample(((1, 0),), (), (0, 0), 2, 1, found_by="test")
    with pytest.raises(ProverError, match=r"left the parameters \['w'\] without values"):
        recheck(lhs, rhs, cex)
    good = Counterexample(((1, 0),), (("w", 2),), (0, 0), 2, 1, found_by="test")
    assert recheck(lhs, rhs, good).cell == (0, 0)


def test_recheck_refuses_a_malformed_input() -> None:
    """counterexample.py ``recheck``: an input of the wrong shape (one value for a 1×2 side) cannot
    be evaluated: ProverError (its form is checked before anything is evaluated), not a confirmed refutation."""
    lhs, rhs = _sym_pair()
    cex = Counterexample(((1,),), (("w", 2),), (0, 0), 2, 1, found_by="test")
    with pytest.raises(ProverError, match=r"reported inputs = \(\(1,\),\) .*expected a tuple of 1 rows, each a tuple of 2 values"):
        recheck(lhs, rhs, cex)
