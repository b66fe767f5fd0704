"""Attacks on a stage certificate changed after it was built: fields set past the constructors' checks.

``Cell``, ``Boundary`` and ``Certificate`` check and normalise their fields when they are made, but
they are frozen dataclasses, and ``object.__setattr__`` sets a field without running those checks.
The certificate checker (:func:`~symverify.kernel.provers.compositional.check_certificate`) reads
the certificate again in the form the constructors give it, so such a change is refused before any
stage is checked. Each attack below builds a model that computes ``2·x`` against the identity
circuit and a certificate that the checker, reading one value otherwise than the stages do, would
take as a proof of ``x ≡ 2·x``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.compositional import check_certificate

IDENTITY = Circuit(1, 1, (), (0,))
COPY = Layer.make(1, 1, b1=Grid.from_rows([[1]]), h=Grid.from_rows([[1]]))  # y = x
DOUBLE = Layer.make(1, 1, b1=Grid.from_rows([[2]]), h=Grid.from_rows([[1]]))  # y = 2·x
TWICE = Model(1, 1, 1, 1, (DOUBLE,))


class EqualToAll(int):
    """An int that says it equals everything (1 to the output rule, while its value is 2)."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = int.__hash__


class IteratesOtherwise(tuple):  # type: ignore[type-arg]
    """A tuple whose iteration yields ``other`` while indexing and ``len`` read its items."""

    other: tuple[Any, ...] = ()

    def __iter__(self) -> Any:
        return iter(self.other)


def _input() -> Boundary:
    return Boundary(0, (Cell.node(0, 0, 0),), "input")


def _output_cell(**fields: Any) -> Cell:
    """The output cell ``(0, 0) = %0``, then ``fields`` set on it past its checks."""
    cell = Cell.node(0, 0, 0)
    for name, value in fields.items():
        object.__setattr__(cell, name, value)
    return cell


def _refused(model: Model, cert: Certificate, match: str, *, container: bool = False) -> None:
    """The certificate is refused by the checker and by ``verify``; ``auto`` decides without a
    certificate whose cells the checker refuses, and refuses one whose containers are malformed
    (``container``: the side takes no such certificate, :func:`~symverify.kernel.ir.certificate.check_form`)."""
    assert sv.verify(IDENTITY, model, method="exact").verdict is sv.Verdict.REFUTED
    with pytest.raises(IRError, match=match):
        check_certificate(IDENTITY, model, cert)
    with pytest.raises(IRError, match=match):
        sv.verify(IDENTITY, model, certificate=cert, method="compositional")
    if container:
        with pytest.raises(IRError, match=match):
            sv.verify(IDENTITY, model, certificate=cert)
        return
    rep = sv.verify(IDENTITY, model, certificate=cert)
    assert rep.verdict is sv.Verdict.REFUTED
    assert any("does not fit" in n for n in rep.notes)


def test_a_coefficient_equal_to_everything_set_after_construction_is_refused() -> None:
    cert = Certificate((_input(), Boundary(1, (_output_cell(terms=((0, EqualToAll(2)),)),))))
    _refused(TWICE, cert, r"canonical exact scalar.*int, EqualToAll")


def test_a_fraction_of_a_lying_int_set_after_construction_is_refused() -> None:
    two = object.__new__(Fraction)  # the stored integers, as a Fraction's slots hold them: 2 / 1
    two._numerator, two._denominator = EqualToAll(2), 1  # type: ignore[attr-defined]
    cert = Certificate((_input(), Boundary(1, (_output_cell(terms=((0, two),)),))))
    _refused(TWICE, cert, r"canonical exact scalar.*int, Fraction")


def test_a_cell_subclass_put_into_a_boundary_after_construction_is_refused() -> None:
    class SaysOutput(Cell):
        __slots__ = ()

        def single_node(self) -> int | None:  # the output rule reads 1·%0; the stages read 2·%0
            return 0

    liar = SaysOutput(0, 0, ((0, 2),))
    last = Boundary(1, (Cell.node(0, 0, 0),))
    object.__setattr__(last, "cells", (liar,))
    _refused(TWICE, Certificate((_input(), last)), r"expected Cells of plain ints.*found SaysOutput")


def test_terms_that_iterate_otherwise_than_they_index_are_refused() -> None:
    terms = IteratesOtherwise(((0, 1),))
    terms.other = ((0, 2),)  # indexing (the output rule) reads 1·%0, iteration (the stages) 2·%0
    cell = _output_cell(terms=terms, const=Fraction(0, 1, _normalize=False))  # type: ignore[call-arg]
    _refused(TWICE, Certificate((_input(), Boundary(1, (cell,)))), r"expected Cells of plain ints.*IteratesOtherwise")


def test_a_layer_index_set_after_construction_is_refused() -> None:
    """The last boundary says it sits at layer 2 (the model's end) while the stage slices read 1:
    the doubling second layer would never be checked."""
    model = Model(1, 1, 1, 1, (COPY, DOUBLE))
    last = Boundary(1, (Cell.node(0, 0, 0),))
    object.__setattr__(last, "layer", EqualToAll(1))
    _refused(model, Certificate((_input(), last)), r"boundary 1: expected a Boundary with an int layer.*EqualToAll",
             container=True)


@pytest.mark.parametrize("field, value, match", [
    ("boundaries", "list", r"boundaries as a tuple, found list"),
    ("cells", "list", r"boundary 1: expected a Boundary with .* a tuple of cells.*cells: list"),
    ("label", b"out", r"boundary 1: expected a Boundary with .* a str label.*label: bytes"),
    ("cell", 5, r"boundary 1: expected Cells of plain ints.*found int"),
])
def test_containers_set_after_construction_are_refused(field: str, value: Any, match: str) -> None:
    last = Boundary(1, (Cell.node(0, 0, 0),))
    cert = Certificate((_input(), last))
    if field == "boundaries":
        object.__setattr__(cert, "boundaries", list(cert.boundaries))
    elif field == "cells":
        object.__setattr__(last, "cells", list(last.cells))
    elif field == "cell":
        object.__setattr__(last, "cells", (value,))
    else:
        object.__setattr__(last, field, value)
    with pytest.raises(IRError, match=match):
        check_certificate(IDENTITY, Model(1, 1, 1, 1, (COPY,)), cert)


_coefficients = st.one_of(st.integers(-5, 5), st.fractions(max_denominator=7))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 1), _coefficients), min_size=1, max_size=3), _coefficients)
def test_cells_as_their_constructor_makes_them_are_read_as_before(terms: list[tuple[int, Any]], const: Any) -> None:
    """A middle boundary of cells built by ``Cell`` (ints and fractions, normalised there) passes
    the structural rules: the stage check then decides, and a false claim is never proved."""
    circuit = Circuit(1, 2, (), (0, 1))
    model = Model(1, 2, 1, 2, (Layer.make(1, 2, b1=Grid.from_rows([[1, 1]]), h=Grid.from_rows([[1, 1]])),
                               Layer.make(1, 2, b1=Grid.from_rows([[1, 1]]), h=Grid.from_rows([[1, 1]]))))
    middle = Boundary(1, (Cell(0, 0, tuple(terms), const), Cell.node(0, 1, 1)))
    cert = Certificate((Boundary(0, (Cell.node(0, 0, 0), Cell.node(0, 1, 1))), middle,
                        Boundary(2, (Cell.node(0, 0, 0), Cell.node(0, 1, 1)))))
    res = check_certificate(circuit, model, cert)
    claim = middle.cells[0].form()
    honest = dict(claim.terms) == {0: 1} and claim.const == 0
    assert res.ok is honest, (terms, const, res.failure)


# ---- fragments: the resources a fragment proof states are those of the layers it proved ----------


class ShortWhereCounted(tuple):  # type: ignore[type-arg]
    """A layer tuple whose ``len`` says 1 to :meth:`Fragment.resources` and its true length elsewhere."""

    def __len__(self) -> int:
        import sys

        return 1 if sys._getframe(1).f_code.co_name == "resources" else tuple.__len__(self)


def _three_shifts() -> Any:
    """``shift_down(1)`` (stated ``layers ≤ 1``) with three of its layers and the spec of a shift by 3,
    set after construction: the proof is of three layers."""
    from symverify.gadgets.primitives import shift_down

    frag, by_three = shift_down(4, 1, 1), shift_down(4, 1, 3)
    layers = ShortWhereCounted(frag.layers * 3)
    object.__setattr__(frag, "layers", layers)
    object.__setattr__(frag, "build_spec", by_three.build_spec)
    return frag


def test_a_fragment_proof_states_the_resources_of_the_layers_it_proved() -> None:
    from symverify.kernel.provers.fragment import prove_fragment

    frag = _three_shifts()
    assert frag.bounds == {"layers": 1} and frag.resources()["layers"] == 1 and tuple.__len__(frag.layers) == 3
    with pytest.raises(IRError, match=r"fragment 'shift_down\(1\)': expected .*layers: ShortWhereCounted.*after construction"):
        prove_fragment(frag)


@pytest.mark.parametrize("field, value", [("inner_n", EqualToAll(4)), ("inner_d", EqualToAll(1)), ("layers", "list")])
def test_fragment_fields_set_after_construction_are_refused(field: str, value: Any) -> None:
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.provers.fragment import prove_fragment

    frag = shift_down(4, 1, 1)
    object.__setattr__(frag, field, list(frag.layers) if value == "list" else value)
    with pytest.raises(IRError, match=rf"expected .*{field}: .*after construction"):
        prove_fragment(frag)


# ---- the sides: their containers are read as the constructors store them -----------------------


class LenOne(tuple):  # type: ignore[type-arg]
    """A tuple whose ``len`` says 1, whatever it holds."""

    def __len__(self) -> int:
        return 1


def _copy_then_double() -> Model:
    """``x ↦ 2·x`` in two layers, its ``layers`` set after construction to a tuple saying it has one."""
    model = Model(1, 1, 1, 1, (COPY, DOUBLE))
    object.__setattr__(model, "layers", LenOne(model.layers))
    return model


ONE_LAYER = Certificate((_input(), Boundary(1, (Cell.node(0, 0, 0),))))


@pytest.mark.parametrize("seen_first", [False, True])
def test_a_model_whose_layers_say_one_for_two_is_refused(seen_first: bool) -> None:
    """The checker read ``L = len(layers) = 1`` and checked the copy only: ``x ≡ 2·x`` proved. Also
    when the model was read (and remembered as plain) before its layers were set."""
    model = Model(1, 1, 1, 1, (COPY, DOUBLE))
    if seen_first:
        assert sv.verify(IDENTITY, model, method="exact").verdict is sv.Verdict.REFUTED
    object.__setattr__(model, "layers", LenOne(model.layers))
    with pytest.raises(IRError, match=r"the model: expected every layers container of type tuple exactly.*LenOne"):
        check_certificate(IDENTITY, model, ONE_LAYER)
    for method in ("compositional", "exact", "randomized"):
        with pytest.raises(IRError, match=r"layers container of type tuple exactly.*LenOne"):
            sv.verify(IDENTITY, model, certificate=ONE_LAYER if method == "compositional" else None, method=method)


@pytest.mark.parametrize("field", ["gates", "outputs"])
def test_a_circuit_container_set_after_construction_is_refused(field: str) -> None:
    circuit = Circuit(1, 1, (), (0,))
    object.__setattr__(circuit, field, LenOne(getattr(circuit, field)))
    with pytest.raises(IRError, match=r"expected every gates/outputs container of type tuple exactly.*LenOne"):
        sv.verify(circuit, IDENTITY, method="exact")


@pytest.mark.parametrize("method", ["compositional", "auto"])
@pytest.mark.parametrize("where, field, value, match", [
    ("boundary", "layer", "1", r"boundary 1: expected a Boundary with an int layer.*layer: str"),
    ("certificate", "meta", 5, r"certificate meta: expected a tuple of \(key, value\) str pairs, found 5"),
    ("certificate", "boundaries", 7, r"expected its boundaries as a tuple, found int"),
    ("boundary", "cells", None, r"boundary 1: expected a Boundary with .*cells: NoneType"),
])
def test_verify_names_a_certificate_field_set_after_construction(method: str, where: str, field: str, value: Any,
                                                                 match: str) -> None:
    """Read before the stages (the side's description, the meta note, the stage sizing), such a field
    raised a ``TypeError``; it is the ``IRError`` naming it."""
    last = Boundary(1, (Cell.node(0, 0, 0),))
    cert = Certificate((_input(), last), (("circuit", "identity"),))
    object.__setattr__(last if where == "boundary" else cert, field, value)
    with pytest.raises(IRError, match=match):
        sv.verify(IDENTITY, Model(1, 1, 1, 1, (COPY,)), certificate=cert, method=method)
