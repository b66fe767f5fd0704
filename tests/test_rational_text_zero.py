"""Rational strings need not be canonical (docs/formats.md, *Exact values*): ``"-0"``, ``"+0"``,
``"-0/5"`` are the rational 0, read as the int 0 and written back as ``"0"``, in a circuit, a model
or a certificate alike; the JSON *integer* ``-0`` (a float negative zero to many JSON readers) is
refused in every field."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify.errors import SerializationError
from symverify.ir.jsonfields import scalar_from_json, scalar_to_json
from symverify.ir.serialize import dumps, loads

CIRCUIT = ('{"format": "symverify.circuit", "version": 1, "n": 1, "d": 2, '
           '"gates": [["mul", [0, 1], []], ["lin", [2, 0], ["1", COEFF]]], "outputs": [3]}')
ZEROS = ['"-0"', '"+0"', '"0"', '"-0/5"', '" - 0 "', '"-0x0"', '"-00"', '{"sym": [["-0", {}]]}']


@pytest.mark.parametrize("zero", ZEROS)
def test_every_spelling_of_zero_reads_as_the_int_0_and_writes_0(zero):
    if zero.startswith('" - 0'):  # no space between the sign and the number
        with pytest.raises(SerializationError, match=r"gates\[1\]\.coeffs\[1\]: expected a rational such as '3' or '-1/2', found ' - 0 '"):
            loads(CIRCUIT.replace("COEFF", zero))
        return
    c = loads(CIRCUIT.replace("COEFF", zero))
    coeff = c.gates[1].coeffs[1] if hasattr(c.gates[1], "coeffs") else None
    canonical = loads(CIRCUIT.replace("COEFF", "0"))
    assert dumps(c) == dumps(canonical) and '"-0"' not in dumps(c)
    if coeff is not None:
        assert coeff == 0 and type(coeff) is int


def test_the_integer_minus_zero_is_refused_where_the_string_is_read():
    with pytest.raises(SerializationError, match=r"gates\[1\]\.coeffs\[1\]: .*found -0 \(a negative zero; write 0\)"):
        loads(CIRCUIT.replace("COEFF", "-0"))
    for coeff, found in (("-0", r"-0 \(a negative zero; write 0\)"), ("0.5", "float 0.5"), ("null", "null"),
                         ("[1]", r"list \[1\]")):
        with pytest.raises(SerializationError, match=r"gates\[1\]\.coeffs\[1\]\.sym\[0\]\[0\]: expected an integer or a rational string such as "
                                                     f"'-1/2', found {found}$"):
            loads(CIRCUIT.replace("COEFF", f'{{"sym": [[{coeff}, {{}}]]}}'))


@given(st.fractions(), st.sampled_from(["", "+", " "]))
def test_a_rational_read_from_any_accepted_spelling_writes_one_text(q, prefix):
    text = scalar_to_json(q)
    assert isinstance(text, str)
    spelled = prefix + text if not text.startswith("-") or prefix == " " else text
    value = scalar_from_json(spelled, "value")
    assert value == q and scalar_to_json(value) == text
    assert scalar_from_json("-" + text.lstrip("-"), "v") == -abs(q)
    if q == 0:
        assert type(value) is int and scalar_to_json(scalar_from_json("-0", "v")) == "0"
    assert Fraction(value) == q
