"""Attacks on ``verify`` through IR objects rewritten after they were built and after a first ``verify``
read them: the kernel's identity memos (programs, bounds, fingerprints, the plainness check) must
never hand the new content what was computed for the old (:mod:`symverify.kernel.ir.memo`)."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.provers.fingerprint import content_digest


def _square() -> Circuit:
    return Circuit(1, 1, (Gate.mul(0, 0),), (1,))


@pytest.mark.parametrize("method", ["randomized", "exact", "auto", "z3"])
def test_a_circuit_whose_gates_are_rewritten_after_verify_is_read_afresh(method):
    """``object.__setattr__(a, "gates", ...)`` after ``verify(a, b)`` proved ``x² ≡ x²``: the second
    ``verify`` compares ``x + x`` with ``x²`` (randomized used the old straight-line program and said
    ``proved``), and its report names the new content's digest, not the old one's."""
    a, b = _square(), _square()
    assert sv.verify(a, b, method=method).proved
    object.__setattr__(a, "gates", (Gate.add(0, 0),))
    report = sv.verify(a, b, method=method)
    assert report.refuted
    assert report.lhs["digest"] == content_digest(Circuit(1, 1, (Gate.add(0, 0),), (1,)))
    assert report.lhs["digest"] != report.rhs["digest"]


def test_a_model_whose_layers_are_rewritten_after_verify_is_read_afresh():
    """The same for a model's layer tuple, by the randomized method."""
    def model(v: int) -> Model:
        return Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.from_rows([[1]]), b2=Grid.from_rows([[v]])),))

    a, b = model(1), model(1)
    assert sv.verify(a, b, method="randomized").proved
    object.__setattr__(a, "layers", model(2).layers)
    assert sv.verify(a, b, method="randomized").refuted


def test_a_gate_subclass_written_into_a_checked_circuit_is_still_refused():
    """The plainness check (a side holding an instance of a subclass of the IR's classes is refused) is
    remembered per side; a gate tuple put into the circuit after a first ``verify`` is walked again."""
    class Shifty(Gate):
        __slots__ = ()

    a, b = _square(), _square()
    assert sv.verify(a, b, method="randomized").proved
    shifty = object.__new__(Shifty)
    for name, value in (("op", a.gates[0].op), ("args", (0, 0)), ("coeffs", ())):
        object.__setattr__(shifty, name, value)
    object.__setattr__(a, "gates", (shifty,))
    with pytest.raises(IRError, match=r"lhs: expected every gate of type Gate exactly, found an instance of .*Shifty"):
        sv.verify(a, b, method="randomized")


def test_identity_memo_misses_once_a_field_of_its_object_is_assigned():
    """A stored entry is a hit for the very object with the same field objects, a miss once a field
    (a slot or an instance-dict entry) refers to another object, and a hit again once stored anew."""
    memo: IdentityMemo[str] = IdentityMemo(4)
    c = _square()
    memo.put(c, "old")
    assert memo.get(c) == "old"
    object.__setattr__(c, "outputs", (0,))
    assert memo.get(c) is None
    assert memo(c, lambda: "new") == "new" and memo.get(c) == "new"

    class Plain:
        pass

    p = Plain()
    p.x = [1]  # type: ignore[attr-defined]
    memo.put(p, "one")
    assert memo.get(p) == "one"
    p.x = [1]  # type: ignore[attr-defined]  # an equal, but other, object
    assert memo.get(p) is None
    p.y = 2  # type: ignore[attr-defined]
    memo.put(p, "two")
    del p.y  # type: ignore[attr-defined]
    assert memo.get(p) is None


def test_fields_now_reads_slots_unset_slots_and_the_instance_dict():
    """Slots of the class, then of its bases, an unset slot as a marker of its own, then the dict's keys and values."""
    from symverify.kernel.ir.memo import fields_now

    class Base:
        __slots__ = ("a",)

    class Child(Base):
        __slots__ = ("__dict__", "b")

    x = Child()
    x.a = 1
    before = fields_now(x)
    assert len(before) == 2 and before[0] is not None and before[1] == 1  # the class's own slots first
    x.b = 2
    x.c = 3  # type: ignore[attr-defined]
    assert fields_now(x) == (2, 1, "c", 3)


def test_fields_now_reads_a_slot_past_a_property_that_shadows_it():
    """A subclass property named as a slot could answer one object every time while the slot changes;
    the slot is read through its own descriptor."""
    from symverify.kernel.ir.memo import fields_now

    class Base:
        __slots__ = ("a",)

    class Shadow(Base):
        __slots__ = ()
        a = property(lambda self: "always")  # type: ignore[assignment]

    x = Shadow()
    Base.a.__set__(x, 1)  # type: ignore[attr-defined]
    before = fields_now(x)
    Base.a.__set__(x, 2)  # type: ignore[attr-defined]
    assert before == (1,) and fields_now(x) == (2,)
