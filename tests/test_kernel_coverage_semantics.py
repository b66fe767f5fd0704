"""Coverage of ``symverify/kernel/semantics/`` (evaluate.py, rings.py, sparse.py, straightline.py,
support.py): input-shape refusals, a symbolic weight without a value mod p, the sparse backend's
whole-model path and its skipping of a cancelled convolution, and the deadline poll of the lane
evaluator. Values are checked against the dense ring interpreter.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.semantics.evaluate import eval_circuit_nodes, eval_layers, eval_model
from symverify.kernel.semantics.layer import run_model
from symverify.kernel.semantics.rings import FractionRing, ModRing
from symverify.kernel.semantics.sparse import SparseArithmetic, eval_layers_sparse, to_cells, to_rows
from symverify.kernel.semantics.straightline import eval_mod, eval_mod_lanes, program
from symverify.kernel.semantics.support import Dependence

_SQ = Circuit(1, 2, (Gate.mul(0, 1),), (2, 2))


def test_circuit_node_values_need_n_times_d_inputs() -> None:
    """evaluate.py ``eval_circuit_nodes`` and straightline.py ``eval_mod``: three inputs for a 1×2 circuit."""
    with pytest.raises(ShapeError, match=r"circuit input: expected n·d = 2 values, found 3"):
        eval_circuit_nodes(_SQ, [1, 2, 3], FractionRing())
    with pytest.raises(ShapeError, match=r"circuit input: expected n·d = 2 values, found 1"):
        eval_mod(program(_SQ), [1], 7, [])
    assert eval_mod(program(_SQ), [3, 4], 7, []) == [3, 4, 5]


@pytest.mark.parametrize("u", ["ab", [1, 2], [[1, 2], "ab"]])
def test_model_input_must_be_rows(u) -> None:
    """evaluate.py ``_check_input``: a string, a flat list, or a row that is a string is not an
    ``n×d`` state."""
    m = Model(2, 2, 2, 2, (Layer.make(2, 2, W=Grid.identity(2), b2=Grid.full(2, 2, 1)),))
    with pytest.raises(ShapeError, match=r"input: expected shape 2×2, a nested list"):
        eval_model(m, u, FractionRing())


def test_a_bad_row_is_reported_with_the_type_of_the_input_passed() -> None:
    """A tuple of rows with a dict row is refused naming the tuple passed, not the list the check
    reads the rows into."""
    m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.identity(1)),))
    with pytest.raises(ShapeError, match=r"a nested list \(rows of values\), found tuple \(\{0: 1\},\)"):
        eval_model(m, ({0: 1},), FractionRing())


def test_mod_ring_needs_a_value_for_every_symbol() -> None:
    """rings.py ``ModRing._sym_frac``: ``a·b`` mod 7 with only ``a`` given names ``b``; with both,
    it is ``a·b mod 7``."""
    with pytest.raises(IRError, match=r"uses the parameter 'b', but no value was given"):
        ModRing(7, {"a": 3}).coerce(sym("a") * sym("b"))
    assert ModRing(7, {"a": 3, "b": 5}).coerce(sym("a") * sym("b") + Fraction(1, 2)) == (15 + 4) % 7


def _cancelling_model() -> Model:
    """One causal layer: projection ``x``, convolution ``x(r) − x(r − 1)``; on a constant column
    the convolution cancels to an exact 0 at every row but the first."""
    return Model(3, 1, 3, 1, (Layer.make(3, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [-1], [0]])),))


def test_sparse_backend_skips_a_cancelled_convolution() -> None:
    """sparse.py ``SparseArithmetic.combine``: the convolution value is 0 at rows 1 and 2, so no
    output cell is stored there; the result equals the dense interpreter's, zeros included."""
    m = _cancelling_model()
    state = [[Fraction(5, 2)], [Fraction(5, 2)], [Fraction(5, 2)]]
    got = eval_layers_sparse(m.layers, to_cells(state), FractionRing())
    assert got == {(0, 0): Fraction(25, 4)}
    assert to_rows(got, 3, 1, 0) == eval_layers(m.layers, state, FractionRing())


def test_sparse_backend_runs_a_whole_model() -> None:
    """sparse.py ``SparseArithmetic.embed`` and ``SparseArithmetic.crop``: the sparse arithmetic
    through ``run_model`` on a model whose inner state is larger than its input gives the dense
    interpreter's output."""
    inner = Layer.make(4, 2, W=Grid.from_rows([[1, 2], [0, 1]]), b1=Grid.full(4, 2, 1),
                       h=Grid.from_rows([[1, 0], [2, 1], [0, 0], [0, 0]]), b2=Grid.full(4, 2, Fraction(1, 3)))
    m = Model(2, 1, 4, 2, (inner, inner))
    u = [[Fraction(1, 2)], [-3]]
    cells = run_model(m, m.layers, u, SparseArithmetic(FractionRing()))
    assert to_rows(cells, 2, 1, 0) == eval_model(m, u, FractionRing())
    assert all(i < 2 and q < 1 for i, q in cells)


def test_to_rows_refuses_a_cell_outside_the_state() -> None:
    """sparse.py ``to_rows``."""
    with pytest.raises(ShapeError, match=r"sparse state: cell \(2, 0\) is outside the 2×1 state"):
        to_rows({(2, 0): 1}, 2, 1, 0)


def test_lane_evaluator_polls_the_deadline_per_level() -> None:
    """straightline.py ``eval_mod_lanes``: ``check`` runs before every level; one that raises stops
    the evaluation, and a counting one sees every level and does not change the values."""
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.mul(2, 2), Gate.mul(3, 0)), (4, 4))  # three levels
    prog = program(c)
    x = np.array([[3, 5], [4, 6]], dtype=np.int64)
    primes = [7, 11]
    calls: list[int] = []
    got = eval_mod_lanes(prog, x, primes, np.zeros((0, 2), dtype=np.int64), check=lambda: calls.append(1))
    assert len(calls) >= 3
    for t, p in enumerate(primes):
        assert [int(v) for v in got[:, t]] == eval_mod(prog, [int(v) for v in x[:, t]], p, [])

    class StopError(Exception):
        pass

    def stop() -> None:
        raise StopError

    with pytest.raises(StopError):
        eval_mod_lanes(prog, x, primes, np.zeros((0, 2), dtype=np.int64), check=stop)


def test_dependence_hash_and_repr() -> None:
    """support.py ``Dependence.__hash__`` and ``Dependence.__repr__``: equal dependences hash alike
    (usable as keys) and print their labels."""
    a, b = Dependence(frozenset({2, 1})), Dependence(frozenset({1, 2}))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert repr(a) == "Dependence([1, 2])"
    zero, const = Dependence(frozenset(), nonzero=False), Dependence(frozenset())
    assert repr(zero) == "Dependence(zero)" and repr(const) == "Dependence([])"
    assert zero != const  # a constant may be nonzero; structural zero is not


def test_lane_evaluator_refuses_unreduced_coefficients() -> None:
    """straightline.py ``eval_mod_lanes``: a coefficient outside ``[0, p)`` of its lane (a product of
    two such values could wrap in int64) is refused; reduced ones give :func:`eval_mod`'s values."""
    c = Circuit(1, 1, (Gate.lin(0, 3, 0, 1),), (1,))  # 3·x + x
    prog = program(c)
    x = np.array([[2, 2]], dtype=np.int64)
    primes = [7, 11]
    ok = np.array([[3, 3], [1, 1]], dtype=np.int64)
    assert [int(v) for v in eval_mod_lanes(prog, x, primes, ok)[1]] == [8 % 7, 8 % 11]
    for bad, where in ((np.array([[3, 3], [1, 11]]), "found 11 for scalar 1 in lane 1 \\(p = 11\\)"),
                       (np.array([[3, 3], [-1, 1]]), "found -1 for scalar 1 in lane 0 \\(p = 7\\)"),
                       (np.array([[2**40, 3], [1, 1]]), f"found {2**40} for scalar 0 in lane 0")):
        with pytest.raises(IRError, match="expected every coefficient a residue 0 ≤ c < p of its lane's prime, " + where):
            eval_mod_lanes(prog, x, primes, bad)
    with pytest.raises(IRError, match="expected every prime below 2\\^31, found 2147483648 in lane 1"):
        eval_mod_lanes(prog, x, [7, 1 << 31], ok)


class _Short(list):  # type: ignore[type-arg]
    """A list whose length says one more value than it stores."""

    def __len__(self) -> int:
        return list.__len__(self) + 1


def test_circuit_node_values_read_the_inputs_stored() -> None:
    """``eval_circuit_nodes`` checked the input count by the sequence's own ``len`` and read it by
    iteration: a list storing one value but claiming two passed the check, then a gate read past it
    (``IndexError``). The values stored are counted; a mapping is no sequence of values."""
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    with pytest.raises(ShapeError, match=r"circuit input: expected n·d = 2 values, found 1"):
        eval_circuit_nodes(c, _Short([3]), FractionRing())
    with pytest.raises(ShapeError, match=r"circuit input: expected a sequence of n·d = 2 values, found dict"):
        eval_circuit_nodes(c, {0: 3, 1: 4}, FractionRing())
    assert eval_circuit_nodes(c, _Short([3, 4]), FractionRing())[-1] == 12  # its len says 3
