"""``reused_ring``: the compositional checker's stage rings share their flint generators.

A stage ring with the same number of frontier nodes and the same parameters reuses the context,
generators and zero built for the first one (``symverify.kernel.semantics.poly.reused_ring``); the
ring is the same ring as ``PolyRing(...)`` builds, and the rule that makes sharing safe (no
polynomial changed in place) is kept by the package.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics import poly
from symverify.kernel.semantics.poly import PolyRing, reused_ring

flint = pytest.importorskip("flint")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 40), names=st.lists(st.sampled_from(["a", "b", "g", "w1"]), unique=True, max_size=3))
def test_a_reused_ring_is_the_ring_polyring_builds(n, names):
    """Same generators (by their text and order), zero, parameters and coercions as a new PolyRing."""
    params = tuple(sorted(names))
    new, reused = PolyRing(n, params, "flint"), reused_ring(n, params, "flint")
    assert (reused.num_inputs, reused.params, reused.backend) == (n, params, "flint")
    assert [str(g) for g in reused._gens] == [str(g) for g in new._gens]
    assert reused.zero == new.zero and str(reused.zero) == "0"
    x = sym("a") * 3 + Fraction(1, 2) if "a" in params else Fraction(-7, 3)
    assert str(reused.coerce(x)) == str(new.coerce(x))
    assert [str(g) for g in reused.inputs()] == [str(g) for g in new.inputs()]


def test_reused_rings_share_their_generators_and_not_their_lists():
    a, b = reused_ring(5, ("p",), "flint"), reused_ring(5, ("p",), "flint")
    assert a is not b and a._gens is not b._gens
    assert all(x is y for x, y in zip(a._gens, b._gens))
    assert reused_ring(6, ("p",), "flint")._gens[0] is not a._gens[0]  # another size: its own generators


def test_a_flint_with_in_place_operators_gets_a_new_ring(monkeypatch):
    """A python-flint whose polynomials define ``__iadd__`` (some 0.7 pre-releases changed the left
    side of ``+=`` in place) would let ``g += 1`` change a generator every later ring shares: then
    each ring is built anew."""

    class InPlace(flint.fmpq_mpoly):  # stands for such a release's polynomial type
        def __iadd__(self, other):
            return self

    monkeypatch.setattr(flint, "fmpq_mpoly", InPlace)
    a, b = reused_ring(7, ("p",), "flint"), reused_ring(7, ("p",), "flint")
    assert a._gens[0] is not b._gens[0] and str(a._gens[0]) == "x0"
    monkeypatch.undo()
    assert poly._rebinding_flint()  # the installed python-flint rebinds on +=
    c, d = reused_ring(7, ("p",), "flint"), reused_ring(7, ("p",), "flint")
    assert c._gens[0] is d._gens[0]


def test_the_sympy_backend_gets_a_new_ring():
    pytest.importorskip("sympy")
    a, b = reused_ring(3, (), "sympy"), reused_ring(3, (), "sympy")
    assert a._gens[0] is not b._gens[0] and str(a._gens[0]) == "x0"


@pytest.fixture
def built(monkeypatch):
    """The input counts of the flint rings built from here on (``PolyRing.__post_init__`` calls), the
    cache of reused rings emptied first."""
    seen: list[int] = []
    real = poly.PolyRing.__post_init__

    def counting(self):
        seen.append(self.num_inputs)
        real(self)

    poly._flint_parts.cache_clear()
    monkeypatch.setattr(poly.PolyRing, "__post_init__", counting)
    return seen


def test_check_certificate_builds_the_generators_once_per_frontier_size(built):
    """A compiled chain of stages of one frontier size builds its ring's generators once, not once per stage."""
    from symverify.compiler import compile

    c = Circuit(2, 2, (*(Gate.lin(k, 1, k + 1, 2) for k in range(3)), Gate.mul(4, 5)), (6, 4, 5))
    out = compile(c, method="dense")
    res = check_certificate(c, out.model, out.certificate)
    assert res.ok
    assert out.certificate.num_stages >= 3
    assert len(built) == len(set(built)) < out.certificate.num_stages


def test_no_polynomial_is_changed_in_place():
    """The rule reused_ring rests on: no module calls python-flint's in-place methods."""
    root = Path(poly.__file__).resolve().parents[2]
    found = [f"{p.relative_to(root)}:{n}" for p in sorted(root.rglob("*.py")) for n, line in
             enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if re.search(r"\.i(add|sub|mul)\(", line)]
    assert found == []


def test_the_exact_method_builds_the_generators_once_per_size(built):
    """Two exact comparisons of sides of one size and parameters build their ring's generators once."""
    from symverify.kernel.verification import verify

    a = Circuit(2, 2, (Gate.mul(0, 1), Gate.lin(4, 2, 3, 1)), (5, 2, 1, 0))
    b = Circuit(2, 2, (Gate.lin(3, 1, 0, 0), Gate.mul(1, 0), Gate.lin(5, 2, 4, 1)), (6, 2, 1, 0))
    reports = [verify(a, b, method="exact", isolate=False) for _ in range(3)]
    assert [r.verdict.value for r in reports] == ["proved"] * 3
    assert built.count(4) == 1


def test_a_ring_past_the_limit_is_built_anew():
    """The kept rings are bounded: one of more than REUSED_RING_MAX generators is not kept."""
    big = poly.REUSED_RING_MAX + 1
    a, b = reused_ring(big, (), "flint"), reused_ring(big - 1, ("p",), "flint")
    assert a._gens[0] is not reused_ring(big, (), "flint")._gens[0]
    assert b._gens[0] is not reused_ring(big - 1, ("p",), "flint")._gens[0]
    assert len(a._gens) == big and str(b._gens[-1]) == "p_p"
    edge = reused_ring(poly.REUSED_RING_MAX, (), "flint")
    assert edge._gens[0] is reused_ring(poly.REUSED_RING_MAX, (), "flint")._gens[0]


def test_only_the_last_few_large_rings_are_kept():
    """A ring's memory grows as the square of its generators (about 17 MiB at 4096), so rings of more
    than REUSED_RING_SMALL generators are kept among the last 4 only: a fifth large size evicts the
    first, which is then built anew, while the small rings kept before stay kept."""
    small = reused_ring(7, ("p",), "flint")
    sizes = [poly.REUSED_RING_SMALL + 1 + k for k in range(5)]
    first = reused_ring(sizes[0], (), "flint")
    assert reused_ring(sizes[0], (), "flint")._gens[0] is first._gens[0]
    for n in sizes[1:]:
        reused_ring(n, (), "flint")
    again = reused_ring(sizes[0], (), "flint")
    assert again._gens[0] is not first._gens[0] and [str(g) for g in again._gens] == [str(g) for g in first._gens]
    assert reused_ring(7, ("p",), "flint")._gens[0] is small._gens[0]
    assert reused_ring(sizes[-1], (), "flint")._gens[0] is reused_ring(sizes[-1], (), "flint")._gens[0]
