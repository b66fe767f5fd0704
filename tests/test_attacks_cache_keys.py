"""Attacks on the kernel's value caches keyed by ``(type(v), v)``: a value whose class compares and
hashes equal to ``int`` (its metaclass says so) and which itself compares and hashes as another
number took that number's slot, and was coerced, converted or indexed as it. Each cache keys the
canonical form of a value (:func:`symverify.kernel.ir.scalar.canonical`): an ``int`` subclass is read
as the plain int it stores, a ``Fraction`` of one as the Fraction of plain ints, and a value of any
other class is refused.

The grids, gates and spec constants ``verify`` reads are canonical already (their constructors make
them so, and a field set past them is refused by the check of a side), so these values reach the
caches only when a caller hands them in directly: the tests call the cached functions themselves."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.engines.numbers import Converter, mod_numbers
from symverify.kernel.gadgets.fragment import SpecBuilder
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.semantics import evaluate, sparse, straightline
from symverify.kernel.semantics.rings import FractionRing


def _equal_to_int() -> type:
    """A metaclass whose classes compare and hash equal to ``int``."""

    def eq(cls: type, other: object) -> bool:
        return other is int or type.__eq__(cls, other) is True

    def h(cls: type) -> int:
        return type.__hash__(int)

    return type("SaysInt", (type,), {"__eq__": eq, "__hash__": h})


class _SevenAsFive(int, metaclass=_equal_to_int()):  # type: ignore[misc]
    """The int 7 whose class passes for ``int``, and which compares, hashes and takes ``abs`` as 5."""

    def __eq__(self, o: object) -> bool:
        return int(self) == o or o == 5

    def __hash__(self) -> int:
        return hash(5)

    def __abs__(self) -> Any:
        return 5


class _PosesAsFive(metaclass=_equal_to_int()):  # type: ignore[misc]
    """No number at all, whose class passes for ``int`` and which compares and hashes as 5."""

    def __eq__(self, o: object) -> bool:
        return o == 5

    def __hash__(self) -> int:
        return hash(5)


def _seven_thirds_as_five_thirds() -> Fraction:
    """``7/3`` whose numerator is :class:`_SevenAsFive`: it compares and hashes as ``5/3``."""
    f = Fraction(7, 3)
    Fraction.__dict__["_numerator"].__set__(f, _SevenAsFive(7))
    return f


class _Cells:
    """A grid's ``nonzero()`` only, as the sparse and dense interpreters read it."""

    def __init__(self, cells: dict[tuple[int, int], Any]) -> None:
        self.cells = cells

    def nonzero(self) -> dict[tuple[int, int], Any]:
        return dict(self.cells)


def test_the_liars_take_the_slot_of_five() -> None:
    assert {(int, 5): "five"}.get((type(x := _SevenAsFive(7)), x)) == "five"
    assert {(int, 5): "five"}.get((type(y := _PosesAsFive()), y)) == "five"
    f = _seven_thirds_as_five_thirds()
    assert {(Fraction, Fraction(5, 3)): "5/3"}.get((type(f), f)) == "5/3"


def test_sparse_columns_read_an_int_subclass_as_its_value() -> None:
    out = sparse._by_column(_Cells({(0, 0): 5, (1, 0): _SevenAsFive(7)}), FractionRing().coerce)
    assert out == {0: [(0, 5), (1, 7)]} and all(type(v) is int for _, v in out[0])


def test_sparse_columns_refuse_a_value_of_no_number_class() -> None:
    with pytest.raises(IRError, match=r"grid value: expected an exact value .* found _PosesAsFive"):
        sparse._by_column(_Cells({(0, 0): 5, (1, 0): _PosesAsFive()}), FractionRing().coerce)


def test_sparse_coerce_reads_a_fraction_of_a_lying_int_as_its_value() -> None:
    arith = sparse.SparseArithmetic(FractionRing())
    assert arith.coerce(Fraction(5, 3)) == Fraction(5, 3)
    got = arith.coerce(_seven_thirds_as_five_thirds())
    assert got == Fraction(7, 3) and type(got.numerator) is int


def test_dense_columns_read_an_int_subclass_as_its_value() -> None:
    cols = evaluate._columns(_Cells({(0, 0): 5, (1, 0): _SevenAsFive(7)}), FractionRing().coerce, 1)  # type: ignore[arg-type]
    assert cols == [{0: 5, 1: 7}] and type(cols[0][1]) is int


def test_dense_columns_refuse_a_value_of_no_number_class() -> None:
    with pytest.raises(IRError, match=r"grid value: expected an exact value .* found _PosesAsFive"):
        evaluate._columns(_Cells({(0, 0): 5, (1, 0): _PosesAsFive()}), FractionRing().coerce, 1)  # type: ignore[arg-type]


def _two_constants() -> Circuit:
    """``5`` and a second constant set to the lying 7 past the gate's constructor."""
    c = Circuit(1, 2, (Gate(Op.CONST, (), (5,)), Gate(Op.CONST, (), (6,))), (2, 3))
    object.__setattr__(c.gates[1], "coeffs", (_SevenAsFive(7),))
    return c


def test_straight_line_scalars_read_an_int_subclass_as_its_value() -> None:
    prog = straightline._build(_two_constants())
    assert prog.scalars == (5, 7) and all(type(x) is int for x in prog.scalars)


def test_verify_refuses_a_gate_coefficient_set_past_its_constructor() -> None:
    """How ``verify`` keeps such a value from the straight-line cache: the check of a side refuses it."""
    with pytest.raises(IRError, match="coeff"):
        sv.verify(_two_constants(), _two_constants(), method="randomized")


def test_converter_reads_an_int_subclass_as_its_value() -> None:
    conv = Converter(mod_numbers(101, None), "layer 0")
    assert conv(5) == 5 and conv(_SevenAsFive(7)) == 7
    with pytest.raises(IRError, match=r"layer 0: expected an exact value .* found _PosesAsFive"):
        conv(_PosesAsFive())


def test_spec_constants_are_keyed_by_their_canonical_value() -> None:
    """Unreachable already: ``SpecBuilder.const`` keys ``as_scalar``'s value, which is canonical."""
    b = SpecBuilder(1, 1)
    five, seven = b.const(5), b.const(_SevenAsFive(7))
    assert five != seven and b.gates[-1].coeffs == (7,) and type(b.gates[-1].coeffs[0]) is int
    with pytest.raises(IRError, match="spec constant: expected an exact value"):
        b.const(_PosesAsFive())
