"""``scalars_held`` (what a snapshot of a side compares for its values) reads a list of plain
``Sym`` values by C-level maps: the same objects, in the same order, as its loop over each value."""

from __future__ import annotations

from fractions import Fraction

import pytest

from symverify.kernel.ir.memo import fields_now
from symverify.kernel.ir.scalar import Sym, _sym_coefficients, scalars_held, sym


def _loop(rest: list[object]) -> tuple[list[object], list[object]]:
    """The fields and the terms' coefficients of ``rest``, value by value (the reference)."""
    fields: list[object] = []
    coefficients: list[object] = []
    for x in rest:
        fields.extend(fields_now(x))
        if type(x) is Sym and type(x.terms) is tuple:
            coefficients.extend([t[1] for t in x.terms if type(t) is tuple and len(t) == 2])
    return fields, coefficients


def _syms() -> list[object]:
    a, b = sym("a"), sym("b")
    return [a, 2 * a * b - Fraction(1, 3), a + b + 7, b**3]


def test_plain_syms_are_read_as_the_loop_reads_them() -> None:
    rest = _syms()
    out: list[object] = []
    coefficients = _sym_coefficients(rest, out)
    fields, want = _loop(rest)
    assert coefficients is not None
    assert len(out) == len(fields) and all(x is y for x, y in zip(out, fields))
    assert len(coefficients) == len(want) and all(x is y for x, y in zip(coefficients, want))


def _rewritten_terms() -> list[object]:
    rest = _syms()
    object.__setattr__(rest[1], "terms", list(rest[1].terms))  # a list: no longer the tuple the loop reads
    return rest


def _odd_term() -> list[object]:
    rest = _syms()
    object.__setattr__(rest[2], "terms", (*rest[2].terms[:1], (("a", 1),)))  # a term of one item
    return rest


def _unset_slot() -> list[object]:
    rest = _syms()
    object.__delattr__(rest[0], "terms")
    return rest


@pytest.mark.parametrize("make", [_rewritten_terms, _odd_term, _unset_slot, lambda: [*_syms(), Fraction(1, 2)], lambda: []])
def test_anything_else_is_left_to_the_loop(make) -> None:  # type: ignore[no-untyped-def]
    out: list[object] = []
    assert _sym_coefficients(make(), out) is None and out == []


@pytest.mark.parametrize("make", [_syms, _rewritten_terms, _odd_term])
def test_scalars_held_sees_every_value_field_and_coefficient(make) -> None:  # type: ignore[no-untyped-def]
    rest = make()
    held = scalars_held([3, *rest])
    fields, coefficients = _loop(rest)
    assert all(any(x is y for y in held) for x in [*rest, *fields, *coefficients])
    before = scalars_held(rest)
    if type(rest[1].terms) is tuple and len(rest[1].terms[0]) == 2:
        object.__setattr__(rest[1].terms[0][1], "_numerator", 5)  # a coefficient rewritten in place: its slot is new
        assert len(before) != len(scalars_held(rest)) or any(x is not y for x, y in zip(before, scalars_held(rest)))


def test_a_deleted_terms_slot_is_a_clear_refusal_not_an_attribute_error() -> None:
    """A ``Sym`` whose ``terms`` slot was deleted past its class (``object.__delattr__``) after a
    first check: ``verify`` refuses the side naming the coefficient, and ``stats`` still answers."""
    import symverify as sv
    from symverify.errors import IRError
    from symverify.kernel.ir.analysis import stats
    from symverify.kernel.ir.circuit import Circuit, Gate

    s = sym("a") * Fraction(1, 3)
    c = Circuit(1, 1, (Gate.lin(0, s, 0, 0),), (1,))
    assert sv.verify(c, c, method="exact").verdict.value == "proved"
    object.__delattr__(s, "terms")
    with pytest.raises(IRError, match="gate coefficient: Sym terms: expected a tuple"):
        sv.verify(c, c, method="exact")
    assert stats(c).depth == 1
    assert scalars_held([s])[0] is s
