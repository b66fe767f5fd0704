"""``shared_ring`` refuses what is no circuit or model (a list passed as one argument raised
AttributeError) and holds every object's inputs (objects of different shapes got the first one's
ring, too small for a larger one after it)."""

from __future__ import annotations

import pytest

from symverify.errors import UsageError
from symverify.ir.build import trace
from symverify.kernel.semantics.poly import polynomials, shared_ring


def _square(n: int, d: int):
    return trace(lambda u: [u[0][0] * u[0][0]] * (n * d), n, d, "square")


def test_shared_ring_of_two_circuits_reads_both() -> None:
    a, c = _square(1, 2), _square(1, 2)
    ring = shared_ring(a, c)
    assert polynomials(a, ring) == polynomials(c, ring)


def test_shared_ring_refuses_a_list_as_one_argument() -> None:
    with pytest.raises(UsageError, match=r"argument 0: expected a Circuit or Model, found list .*shared_ring\(\*objs\)"):
        shared_ring([_square(1, 2), _square(1, 2)])  # type: ignore[arg-type]


def test_shared_ring_refuses_no_object() -> None:
    with pytest.raises(UsageError, match="expected one or more circuits or models, found none"):
        shared_ring()


def test_shared_ring_of_objects_of_different_shapes_holds_the_largest() -> None:
    """Ordered smaller first, the ring had the first object's 2 inputs only, and the larger object's
    polynomials were refused (ShapeError) in a ring meant for both."""
    small, large = _square(1, 2), _square(2, 2)
    ring = shared_ring(small, large)
    assert ring.num_inputs == 4
    assert polynomials(large, ring) == polynomials(large, shared_ring(large))


def test_shared_ring_reads_a_compiled_object_as_its_model() -> None:
    """``polynomials`` takes a compiled object for its model; ``shared_ring`` refused one."""
    import symverify as sv

    c = _square(1, 1)
    out = sv.compile(c)
    ring = shared_ring(c, out)
    assert [[str(p) for p in row] for row in polynomials(out, ring)] == [[str(p) for p in row] for row in polynomials(c, ring)]
