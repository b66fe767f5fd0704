"""Zoology Theorem H.19 (Dao et al. 2020, Theorem 1): linear circuits are kaleidoscope matrices.

For every linear circuit the matrix ``M`` (``vec(y) = M·vec(u)``, n = n_rows·d inputs) is built
in both modes and compared exactly with the circuit's own matrix (from its linear forms):

* live mode (docs/kaleidoscope.md §2.4): ``(BB*)^{5·max(Δ,1)}`` (a depth-0 circuit still needs its output
  selection) with ``e < 8(w + n)/n``, w the cut width (docs/theory.md §2);
  the instance also records the largest live state W ≤ w;
* size mode (docs/kaleidoscope.md §2.3): ``(BB*)^{5(Δ+1)}`` with ``e < 8s/n``, s the nodes with inputs.

Each instance fails when a construction exceeds its stated constant (``w`` = BB* factors,
``N`` strictly below the stated figure, ``e``). Circuits: the library's linear families
(Walsh–Hadamard, prefix sums, a fixed matvec), seeded random linear circuits, a long-range one
(inputs read again at the last level), a depth-0 selection and symbolic coefficients.
"""

from __future__ import annotations

from fractions import Fraction

from symverify.kaleidoscope import linear_circuit_to_kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.matrix import verify_circuit
from symverify.library import matvec, prefix_sums, random_linear_circuit, symbolic_mixing, walsh_hadamard
from symverify.scripts.instances import kaleidoscope_instance
from symverify.scripts.protocol import Instance, ProofResult, each, script_main, timed

TITLE = "Zoology Theorem H.19 / Dao et al. 2020, Theorem 1 (linear circuits are in (BB*)^{O(Δ)}_{O(w/n)} (live mode) and (BB*)^{O(Δ)}_{O(s/n)} (size mode))"
SHARDABLE = True  # one group of instances per case, independent of the others
COST = 6.2  # CPU seconds of the full tier, measured (orders and splits a parallel run)


def long_range(n: int) -> Circuit:
    """A running sum whose last level also reads every input again (large live width)."""
    gates, acc = [], 0
    for i in range(1, n):
        gates.append(Gate.add(acc, i))
        acc = n + len(gates) - 1
    outs = []
    for i in range(n):
        gates.append(Gate.lin(acc, 1, i, Fraction(i + 1, 2)))
        outs.append(n + len(gates) - 1)
    return Circuit(n, 1, tuple(gates), tuple(outs), f"long_range_{n}")


def selection(n: int) -> Circuit:
    """Depth 0: the outputs are inputs (reversed, one repeated)."""
    return Circuit(n, 1, (), (*range(n - 1, 0, -1), 0), f"selection_{n}")




def circuits(quick: bool) -> list[Circuit]:
    M = [[1, 2, 0, -1], [0, 1, Fraction(1, 2), 0], [3, 0, 0, 1], [0, 0, 1, 1]]
    out = [walsh_hadamard(4, 2), walsh_hadamard(8), prefix_sums(4, 2), matvec(M, 2, 2), long_range(6), selection(5), symbolic_mixing(4)]
    out += [random_linear_circuit(3, 2, 20, 4, seed=s) for s in range(3)]
    if not quick:
        out += [walsh_hadamard(64), walsh_hadamard(16, 16), prefix_sums(64), long_range(40), symbolic_mixing(16)]
        out += [random_linear_circuit(8, 4, 300, 12, seed=s, num_outputs=20) for s in range(3)]
        out += [random_linear_circuit(4, 1, 60, 20, seed=10 + s) for s in range(3)]
    return out


def _one(c: Circuit, mode: str) -> Instance:
    with timed() as t:
        f = linear_circuit_to_kaleidoscope(c, mode)  # type: ignore[arg-type]
        check = verify_circuit(f, c)
    return kaleidoscope_instance(f"{c.name} {c.n}x{c.d} [{mode}]", f, check, t[0])


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("thm_h19_linear_circuits", TITLE)
    for c in each(circuits(quick)):
        for mode in ("live", "size"):
            result.instances.append(_one(c, mode))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))
