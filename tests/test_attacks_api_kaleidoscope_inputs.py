"""Attacks on the kaleidoscope IR (butterfly factors, kaleidoscopes), the certificate types and exact
scalars with odd arguments (huge integers, 0-d and 1-d numpy arrays, negative pair indices, None):
each ends in a ``SymverifyError`` naming what was expected and what was found, never in a bare
``ValueError`` (printing a 100 000-bit integer), ``TypeError`` or ``AttributeError``, nor in a block of
another pair read through a negative index."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symverify import BBStar, ButterflyFactor, Certificate, Gate, Kaleidoscope, Sym, sym
from symverify.errors import IRError, LimitError, ShapeError
from symverify.kernel.ir.butterfly import product
from symverify.kernel.ir.certificate import Boundary, Cell

HUGE = 2**100_000  # its decimal text is beyond Python's 4300-digit limit: str() or repr() raise ValueError
BIG = r"<100001-bit integer"
_K = Kaleidoscope(3, 4, (BBStar.identity(4),))


@pytest.mark.parametrize("make, error, message", [
    (lambda: ButterflyFactor(2, HUGE + 1, (1,), (0,), (0,), (1,)), ShapeError, rf"butterfly factor stride: .* found {BIG}"),
    (lambda: ButterflyFactor.identity(4, HUGE), ShapeError, rf"butterfly factor stride: .* found {BIG}"),
    (lambda: ButterflyFactor.identity(HUGE + 1, 1), ShapeError, rf"butterfly factor size: expected a power of two ≥ 2, found {BIG}"),
    (lambda: ButterflyFactor.from_blocks(2, 1, np.array(2)), ShapeError, r"expected 1 2×2 blocks \(size/2\), found ndarray"),
    (lambda: ButterflyFactor.from_blocks(2, 1, [((HUGE, 0), (0,))]), ShapeError, rf"butterfly factor block 0: .* found \(\({BIG}"),
    (lambda: Kaleidoscope(HUGE, 4, ()), ShapeError, rf"kaleidoscope: expected 1 ≤ n ≤ size = 4, found n = {BIG}"),
    (lambda: Kaleidoscope(3, HUGE, ()), LimitError, rf"kaleidoscope of size {BIG}"),
    (lambda: Kaleidoscope(3, HUGE + 1, ()), ShapeError, rf"kaleidoscope size: expected a power of two, found {BIG}"),
    (lambda: Kaleidoscope.identity(-HUGE), ShapeError, r"kaleidoscope identity: expected an int n ≥ 1, found n = -<100001-bit"),
    (lambda: _K.lift(np.array([8, 16])), ShapeError, r"lifting a kaleidoscope of size 4: expected a power of two ≥ 4, found array"),
    (lambda: _K.absorb_diagonal((1, 1, 1, 1), HUGE), IRError, rf"side must be 'before' .* or 'after', found {BIG}"),
    (lambda: product(None, _K), IRError, r"kaleidoscope product: expected a Kaleidoscope, found NoneType"),
    (lambda: Cell(0, 0, np.array(2)), IRError, r"certificate cell \(0, 0\): expected a sequence of \(node, coefficient\) pairs, found ndarray"),
    (lambda: Boundary(0, np.array(2)), IRError, r"expected .*found ndarray"),
    (lambda: Certificate(np.array(2)), IRError, r"certificate: expected a sequence of Boundary objects, found ndarray"),
    (lambda: Certificate((), np.array(2)), IRError, r"certificate meta: expected \(key, value\) string pairs, found ndarray"),
    (lambda: Sym((((("a", -HUGE),), Fraction(1)),)), IRError, rf"the exponent of 'a' must be a positive int, found -{BIG}"),
    (lambda: sym("a") ** -HUGE, IRError, rf"Sym \*\* k: expected an int exponent k ≥ 0, found -{BIG}"),
    (lambda: Gate.const([HUGE]), IRError, rf"constant: expected an exact value .* found list \[{BIG}"),
])
def test_odd_arguments_are_refused_by_name(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_a_butterfly_block_is_read_at_a_pair_of_the_factor_only():
    """``block(-1)`` read the last pair's block (Python's negative index) and ``block(2**70)`` raised
    ``IndexError``; a pair index outside ``[0, size/2)`` is an ``IRError``, a numpy integer reads by value."""
    f = ButterflyFactor(4, 1, (1, 2), (3, 4), (5, 6), (7, 8))
    assert f.block(np.int64(1)) == ((2, 4), (6, 8))
    for m in (-1, 2, 2**70, None, 1.0, True):
        with pytest.raises(IRError, match=r"butterfly factor block: expected a pair index, an int in \[0, 2\), found"):
            f.block(m)


def test_a_kaleidoscope_lifts_to_a_numpy_size_by_its_value():
    assert _K.lift(np.int64(4)) is _K
    assert _K.lift(np.int64(8)).size == 8
