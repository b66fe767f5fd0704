"""The compositional checker's expansion of circuit gates (``_expected``) against plain arithmetic."""

from __future__ import annotations

from fractions import Fraction

from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers import compositional as comp_mod
from symverify.kernel.semantics.rings import FractionRing


def test_expected_lin_coefficients_zero_one_and_others_and_mul() -> None:
    x, y = Fraction(2), Fraction(5)
    gates = (
        Gate.lin(0, 1, 1, 0),  # 2: x
        Gate.lin(0, 0, 1, 0),  # 3: 0 (every coefficient zero)
        Gate.lin(0, 2, 1, Fraction(-1, 3)),  # 4: 2x - y/3
        Gate.lin(1, 1, 3, -1),  # 5: y - 0 = y
        Gate.mul(4, 5),  # 6: (2x - y/3)·y
        Gate.const(Fraction(7, 2)),  # 7
        Gate.lin(6, 1, 7, 1),  # 8
    )
    c = Circuit(1, 2, gates, (8, 3))
    need = list(range(2, 9))
    vals = comp_mod._expected(c, {0: x, 1: y}, need, FractionRing())
    want = {2: x, 3: 0, 4: 2 * x - y / 3, 5: y, 6: (2 * x - y / 3) * y, 7: Fraction(7, 2), 8: (2 * x - y / 3) * y + Fraction(7, 2)}
    assert {v: vals[v] for v in need} == want
    assert comp_mod._read_args(gates[0]) == (0,) and comp_mod._read_args(gates[1]) == ()


def test_circuit_count_is_the_same_with_the_coefficient_values_kept_per_program() -> None:
    """The coefficients' values are kept per program across stages of other variable counts:
    each count equals the one computed from scratch."""
    from symverify.library import random_circuit

    c = random_circuit(2, 2, 24, 5, seed=3, num_outputs=2)
    need = list(range(c.num_inputs, c.num_nodes))
    frontier = set(range(c.num_inputs))
    half = need[: len(need) // 2]
    for variables in (4, 1, 9, 4):
        comp_mod._PROGRAM_SCALARS.clear()
        fresh = comp_mod._circuit_count(c, frontier, half, variables + 1)
        comp_mod._PROGRAM_SCALARS.clear()
        comp_mod._circuit_count(c, frontier, need, variables)  # keeps the values for this program
        assert comp_mod._circuit_count(c, frontier, half, variables + 1) == fresh
