"""Circuit measures against hand-computed values (docs/theory.md §2), and the layered form."""

import pytest
from hypothesis import given

from symverify import Circuit, Gate, layered_form, stats
from symverify.kernel.ir.analysis import degree_bounds, live_sets
from symverify.kernel.ir.layered import LinearStage, MulStage
from symverify.kernel.semantics.poly import PolyRing, polynomials
from symverify.library import prefix_sums, walsh_hadamard
from symverify.semantics.layered import check_layered
from symverify.testing import circuits

M, A, C = Gate.mul, Gate.add, Gate.const

# (name, circuit, size, depth, width, gate_width, live set sizes)
HAND = [
    ("mul-then-add", Circuit(1, 2, (M(0, 1), A(2, 0)), (3,)), 2, 2, 2, 1, [2, 2, 1]),
    # x0 is read at level 5 and x1 at level 4: both stay live across the cuts in between.
    ("long-read", Circuit(1, 2, (M(0, 1), M(2, 2), M(3, 3), A(4, 1), A(5, 0)), (6,)), 5, 5, 3, 1, [2, 3, 3, 3, 2, 1]),
    ("unused-input", Circuit(3, 1, (A(0, 1),), (3,)), 1, 1, 3, 1, [3, 1]),
    ("input-is-output", Circuit(2, 1, (), (1, 0)), 0, 0, 2, 0, [2]),
    ("repeated-output", Circuit(2, 1, (M(0, 1),), (2, 2)), 1, 1, 2, 1, [2, 1]),
    ("constant", Circuit(1, 1, (C(3), M(0, 1)), (2,)), 1, 1, 2, 1, [2, 1]),
    ("early-output-kept", Circuit(1, 2, (A(0, 1), M(2, 2), M(3, 0)), (2, 4)), 3, 3, 3, 1, [2, 2, 3, 2]),
    ("dead-gate", Circuit(1, 2, (M(0, 1), A(0, 0)), (2,)), 2, 1, 2, 2, [2, 1]),
    ("walsh-hadamard-4", walsh_hadamard(4), 8, 2, 4, 4, [4, 4, 4]),
    ("prefix-sums-4", prefix_sums(4), 5, 2, 4, 3, [4, 4, 4]),
]


@pytest.mark.parametrize("name, c, size, depth, width, gate_width, live", HAND, ids=[h[0] for h in HAND])
def test_hand_computed_measures(name, c, size, depth, width, gate_width, live):
    s = stats(c)
    assert (s.size, s.depth, s.width, s.gate_width) == (size, depth, width, gate_width)
    assert [len(x) for x in live_sets(c)] == live
    assert s.size_with_inputs == size + c.num_inputs


@pytest.mark.parametrize("name, c", [(h[0], h[1]) for h in HAND], ids=[h[0] for h in HAND])
def test_degree_bound_is_exact_on_hand_cases(name, c):
    polys = [p for row in polynomials(c) for p in row][: len(c.outputs)]
    ring = PolyRing(c.num_inputs)
    bounds = degree_bounds(c)
    for o, p in zip(c.outputs, polys):
        assert ring.degree(p) <= bounds[o]
    assert stats(c).degree_bound == max((bounds[o] for o in c.outputs), default=-1)


def test_degree_bound_can_exceed_exact_degree_after_cancellation():
    c = Circuit(1, 1, (M(0, 0), Gate.sub(1, 1)), (2,))  # x² − x² = 0
    assert degree_bounds(c)[2] == 2
    assert PolyRing(1).degree(polynomials(c)[0][0]) == -1


def test_layered_form_shape():
    c = HAND[1][1]
    lf = layered_form(c)
    kinds = [type(s) for s in lf.stages]
    assert kinds.count(MulStage) == 3 and kinds[-1] is LinearStage
    assert lf.stages[-1].outputs == c.outputs


def _check(c):
    ring = PolyRing(c.num_inputs, tuple(sorted(c.params())))
    lf = layered_form(c)
    check_layered(c, lf, ring, ring.inputs())
    return lf


@pytest.mark.parametrize("name, c", [(h[0], h[1]) for h in HAND], ids=[h[0] for h in HAND])
def test_layered_form_equals_circuit_on_hand_cases(name, c):
    _check(c)


@given(circuits(max_gates=14, allow_sym=True))
def test_layered_form_equals_circuit(c):
    lf = _check(c)
    s = stats(c)
    # between levels the state holds only live values; inside a level the operand copies add ≤ w
    assert lf.width <= 2 * s.width
    for st in lf.stages:
        if isinstance(st, MulStage):
            assert len(st.outputs) <= s.width
        assert set(st.outputs) <= set(range(c.num_nodes))


def test_layered_form_detects_a_wrong_stage():
    from symverify import IRError

    c = HAND[0][1]
    lf = layered_form(c)
    st = lf.stages[-1]
    bad = LinearStage(st.level, st.inputs, st.outputs, (((0, 2),),), st.offset)
    ring = PolyRing(c.num_inputs)
    with pytest.raises(IRError, match="stage 2: slot 0 should hold node %3"):
        check_layered(c, type(lf)(lf.n, lf.d, lf.width, (*lf.stages[:-1], bad)), ring, ring.inputs())
