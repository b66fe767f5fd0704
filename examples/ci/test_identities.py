"""Symbolic identities kept as CI regressions with symverify's pytest plugin.

Each test proves an identity exactly and compares the result (verdict, method, resources, bounds)
with its golden file in ``golden/``; ``pytest --symverify-update`` rewrites the golden files.
"""

import symverify as sv
from symverify.library import poly_mult
from symverify.testing import assert_proved, assert_refuted

SQUARE_OF_SUM = sv.Circuit.trace(lambda u: [(u[0][0] + u[0][1]) * (u[0][0] + u[0][1])], n=1, d=2)
EXPANDED = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0] + 2 * u[0][0] * u[0][1] + u[0][1] * u[0][1]], n=1, d=2)


def test_square_of_a_sum(symverify_golden):
    symverify_golden.check(assert_proved(SQUARE_OF_SUM, EXPANDED))


def test_compiled_polynomial_product(symverify_golden):
    circuit = poly_mult(3)
    compiled = sv.compile(circuit)
    symverify_golden.check(compiled, "compiled")
    symverify_golden.check(assert_proved(circuit, compiled.model, certificate=compiled.certificate), "proof")


def test_a_wrong_identity_is_refuted():
    wrong = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0] + u[0][1] * u[0][1]], n=1, d=2)
    assert_refuted(SQUARE_OF_SUM, wrong)
