"""Attacks through a gate's fields set after construction (``object.__setattr__`` past the frozen
dataclass, before any ``verify``): an op, node ids or coefficients the constructors would refuse. The
readers disagreed on such a gate (``evaluate`` read an op ``"mul"`` as a constant 1, ``randomized`` as a
sum, and proved it), so every method refuses a side whose gates are not as their constructors leave
them (:func:`symverify.kernel.provers.fingerprint.check_plain`)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.compositional import check_certificate

METHODS = ["exact", "randomized", "z3", "auto"]


class _Three(int):
    """An int equal to 2 whose products are 3's."""

    def __mul__(self, other: object) -> int:
        return int.__mul__(3, other)  # type: ignore[call-overload, no-any-return]

    __rmul__ = __mul__


def _twice() -> Circuit:
    return Circuit(1, 1, (Gate.add(0, 0),), (1,))


def _rewritten(field: str, value: object, gate: Gate | None = None) -> Circuit:
    c = Circuit(1, 1, (gate or Gate.scale(0, 2),), (1,))
    object.__setattr__(c.gates[0], field, value)
    return c


@pytest.mark.parametrize("method", METHODS)
def test_an_int_subclass_coefficient_is_refused(method):
    """``evaluate`` reads ``3·x`` (the subclass's ``*``), every method read ``2·x`` and proved it equal to
    ``x + x``."""
    c = _rewritten("coeffs", (_Three(2), 0))
    assert sv.evaluate(c, [[5]]) == [[15]]
    with pytest.raises(IRError, match=r"lhs: expected every gate coefficient an exact scalar .* found .*_Three"):
        sv.verify(c, _twice(), method=method)


@pytest.mark.parametrize("method", METHODS)
def test_an_op_that_is_a_string_is_refused(method):
    """``"mul"`` equals ``Op.MUL`` (a str enum) but is no member: ``evaluate`` read the sum ``x + x`` as
    the constant 1 and ``randomized`` as the sum, and proved it equal to ``x + x``."""
    c = _rewritten("op", "mul", Gate.add(0, 0))
    assert sv.evaluate(c, [[5]]) == [[1]]
    with pytest.raises(IRError, match=r"lhs: expected every gate op of type Op exactly, found an instance of builtins\.str"):
        sv.verify(c, _twice(), method=method)


@pytest.mark.parametrize(("field", "value", "match"), [
    ("args", (0,), r"expected 2 args and 2 coefficients, found 1 args"),
    ("args", (0, 1), r"gate 0 \(node %1\) \(lin\) reads node %1, which is defined later at gate 0"),
    ("args", [0, 0], r"expected every gate's args container of type tuple exactly, found an instance of builtins\.list"),
    ("coeffs", (2,), r"expected 2 args and 2 coefficients, found 2 args and 1 coefficients"),
    ("coeffs", [2, 0], r"coefficients container of type tuple exactly, found an instance of builtins\.list"),
    ("coeffs", (Fraction(4, 2, _normalize=False), 0), r"gate coefficient an exact scalar .* found fractions\.Fraction"),
    ("coeffs", (True, 0), r"gate coefficient an exact scalar .* found builtins\.bool"),
    ("coeffs", (2.0, 0), r"gate coefficient an exact scalar .* found builtins\.float"),
])
def test_other_fields_out_of_form_are_refused_by_every_method(field, value, match):
    c = _rewritten(field, value)
    for method in METHODS:
        with pytest.raises(IRError, match=match):
            sv.verify(c, _twice(), method=method)


def test_a_gate_reading_a_later_node_is_refused():
    c = Circuit(1, 1, (Gate.add(0, 0), Gate.add(1, 1)), (2,))
    object.__setattr__(c.gates[0], "args", (2, 0))
    with pytest.raises(IRError, match=r"gate 0 \(node %1\) \(lin\) reads node %2, which is defined later"):
        sv.verify(c, Circuit(1, 1, (Gate.scale(0, 4),), (1,)))


def test_the_certificate_checker_refuses_the_same():
    compiled = sv.compile(_twice())
    c = _rewritten("coeffs", (_Three(2), 0))
    assert type(compiled.certificate) is Certificate
    with pytest.raises(IRError, match=r"gate coefficient an exact scalar"):
        check_certificate(c, compiled.model, compiled.certificate)
    with pytest.raises(IRError, match=r"gate coefficient an exact scalar"):
        sv.verify(c, compiled.model, method="compositional", certificate=compiled.certificate)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["op", "args", "coeffs"]), st.sampled_from(["mul", "lin", "const", (), (0,), (0, 0, 0), (5, 0), [0, 0],
                                                                   (1,), (_Three(1), 1), (1, 1, 1)]))
def test_no_rewritten_gate_is_proved_equal_to_what_evaluate_does_not_read(field, value):
    """Whatever a field is rewritten to, ``verify`` either refuses the circuit or agrees with the
    circuit's own evaluation at a point (the rewritten field may be a valid one)."""
    c = _rewritten(field, value, Gate.add(0, 0))
    try:
        report = sv.verify(c, _twice(), method="randomized")
    except IRError:
        return
    assert report.proved == (sv.evaluate(c, [[7]]) == [[14]])


_A = (("a", 1),)  # the monomial a


@pytest.mark.parametrize(("terms", "match"), [
    ([(_A, Fraction(2))], r"Sym terms: expected a tuple of \(monomial, coefficient\) pairs, found list"),
    (((_A, Fraction(1)), (_A, Fraction(-1))), r"Sym term 1"),
    (((_A, Fraction(0)),), r"Sym term 0"),
])
def test_a_symbol_whose_terms_were_rewritten_is_refused(terms, match):
    """A ``Sym`` coefficient's terms set after construction: a list crashed every method (``TypeError``),
    ``a − a`` or a zero coefficient is no canonical form."""
    s = sv.sym("a") * 2
    object.__setattr__(s, "terms", terms)
    c = _rewritten("coeffs", (s, 0))
    for method in METHODS:
        with pytest.raises(IRError, match=r"lhs: a gate coefficient: " + match):
            sv.verify(c, Circuit(1, 1, (Gate.scale(0, sv.sym("a") * 2),), (1,)), method=method)
