"""Coverage of the rare paths of ``symverify/kernel/provers/fingerprint.py`` and
``bounds_vector.py``: the wide (``W``) form of an int list, and every malformed-bytes branch of
the decoder (``tests/fingerprint_decode.py``) that the round-trip tests never reach.

Each malformed input is the encoding of a real side with one part replaced by a production that
breaks exactly one rule of the format (module docstring of ``fingerprint.py``); the test asserts
the message that names that rule, so a decoder that accepted the bytes, or rejected them for
another reason, fails it.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from fingerprint_decode import decode

from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers import fingerprint as fp
from symverify.kernel.provers.bound_rules import scalar_rows
from symverify.kernel.provers.bounds_vector import circuit_rows
from symverify.kernel.semantics.straightline import program

_N = 1 << 64  # rows of an astronomical circuit: node ids of 2^63 and more do not fit int64


def _huge() -> Circuit:
    return Circuit(_N, 1, (Gate.mul(1 << 63, 0), Gate.add(_N, (1 << 63) + 5)), (_N + 1,))


def test_wide_node_ids_round_trip() -> None:
    """fingerprint.py ``_ints`` (it falls back to the ``W`` form), ``_circuit`` (the program has no
    int64 node ids) and ``_Reader.ints`` (the reader accepts a ``W`` list that does not fit int64).
    A wrong ``W`` writer or reader breaks the round trip; the fingerprint must also separate two
    astronomical circuits that differ in one wide node id."""
    c = _huge()
    assert program(c).args is None
    data = fp.encode(c)
    assert data[:2] == b"CW"  # the head [n, d, #gates, #outputs] holds n = 2^64: wide form
    assert decode(data) == c
    other = Circuit(_N, 1, (Gate.mul(1 << 63, 1), Gate.add(_N, (1 << 63) + 5)), (_N + 1,))
    assert fp.fingerprint(other) != fp.fingerprint(c)
    assert decode(fp.encode(other)) == other


def test_circuit_rows_gives_up_without_int64_ids() -> None:
    """bounds_vector.py ``_refs`` and ``circuit_rows``: without int64 node ids the numpy pass
    answers None (its rows are indexed by node id), never an array built from truncated ids."""
    prog = program(_huge())
    assert circuit_rows(prog, scalar_rows(prog.scalars), _N, 1) is None


def _circuit(coeff: object = Fraction(1, 3)) -> Circuit:
    return Circuit(1, 2, (Gate.lin(0, coeff, 1, 2), Gate.mul(2, 0)), (3,))  # type: ignore[arg-type]


def _swap(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) == 1, (old, data)
    return data.replace(old, new)


def test_int_of_zero_bytes() -> None:
    """fingerprint.py ``_Reader._int_body``: an int production of length 0 (the minimal length of 0
    is one byte)."""
    data = fp.encode(_circuit())
    bad = _swap(data, fp._ints([1, 2, 2, 1]), b"W" + fp._u64(4) + b"I" + fp._u64(0) + b"".join(fp._int(v) for v in (2, 2, 1)))
    with pytest.raises(fp.EncodingError, match="an int of zero bytes"):
        decode(bad)


def test_string_not_utf8() -> None:
    """fingerprint.py ``_Reader.str_``: a symbol name whose bytes are not UTF-8."""
    from symverify.kernel.ir.scalar import sym

    data = fp.encode(_circuit(sym("w")))
    bad = _swap(data, fp._str("w"), b"T" + fp._u64(1) + b"\xff")
    with pytest.raises(fp.EncodingError, match="a string that is not UTF-8"):
        decode(bad)


def test_symbol_with_symbol_coefficient() -> None:
    """fingerprint.py ``_Reader.scalar``: a symbol term whose coefficient is again a symbol (a
    symbol's coefficients are rationals; accepting this would give two encodings of one product)."""
    from symverify.kernel.ir.scalar import sym

    w = sym("w")
    data = fp.encode(_circuit(w))
    inner = fp._scalar(w)
    nested = b"S" + fp._u64(1) + fp._u64(1) + fp._str("w") + fp._int(1) + inner
    with pytest.raises(fp.EncodingError, match="a symbol coefficient that is itself a symbol"):
        decode(_swap(data, inner, nested))


def test_symbol_not_canonical() -> None:
    """fingerprint.py ``_Reader.scalar``: a symbol term with coefficient 0 (Sym refuses it; a
    decoder that built it anyway would decode two byte strings to one value)."""
    from symverify.kernel.ir.scalar import sym

    w = sym("w")
    data = fp.encode(_circuit(w))
    inner = fp._scalar(w)
    zero = b"S" + fp._u64(1) + fp._u64(1) + fp._str("w") + fp._int(1) + fp._int(0)
    with pytest.raises(fp.EncodingError, match="a symbol that is not canonical"):
        decode(_swap(data, inner, zero))


def test_packed_rational_not_in_lowest_terms() -> None:
    """fingerprint.py ``_Reader.scalars``: the packed ``A`` form holding 2/6 (1/3 written unreduced)."""
    data = fp.encode(_circuit())
    packed = fp._scalars([Fraction(1, 3), 2])  # the circuit's distinct coefficients, in order
    assert packed[:1] == b"A"
    le = [v.to_bytes(8, "little") for v in (2, 2, 6, 1)]  # numerators 2, 2; denominators 6, 1
    bad = _swap(data, packed, b"A" + fp._u64(2) + b"".join(le))
    with pytest.raises(fp.EncodingError, match=r"a rational 2/6 not in lowest terms"):
        decode(bad)


def _model() -> Model:
    g = Grid(1, 1, 0, ((0, 1, 0, 1, 2),))
    one = Grid(1, 1, 1)
    return Model(1, 1, 1, 1, (Layer(one, g, one, one, Mode.CAUSAL),))


def test_model_value_count() -> None:
    """fingerprint.py ``_read_model``: a model whose value list is one short of fills plus rectangles."""
    m = _model()
    data = fp.encode(m)
    values = fp._scalars([1, 0, 1, 1, 2])
    assert data.endswith(values)
    bad = data[: -len(values)] + fp._scalars([1, 0, 1, 1])
    with pytest.raises(fp.EncodingError, match="model values: expected 5, found 4"):
        decode(bad)


def test_kaleidoscope_diagonal_count() -> None:
    """fingerprint.py ``_read_kaleidoscope``: a kaleidoscope whose diagonal entries are one short of
    its factor shapes."""
    f = ButterflyFactor(2, 1, (1,), (2,), (3,), (4,))
    k = Kaleidoscope(2, 2, (BBStar(2, (f, f)),))  # BB* of size 2: strides [1, 1]
    data = fp.encode(k)
    assert decode(data) == k
    values = fp._scalars([1, 2, 3, 4] * 2)
    assert data.endswith(values)
    with pytest.raises(fp.EncodingError, match="kaleidoscope diagonals: the entry count does not match"):
        decode(data[: -len(values)] + fp._scalars([1, 2, 3, 4, 1, 2, 3]))


def test_encode_refuses_a_float_coefficient() -> None:
    """fingerprint.py ``_scalar``: a float is not an exact scalar and has no encoding."""
    with pytest.raises(fp.EncodingError, match=r"expected an exact scalar .* found float"):
        fp._scalar(0.5)  # type: ignore[arg-type]
