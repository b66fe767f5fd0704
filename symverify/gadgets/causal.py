"""The causal limit: Theorem H.21 is false for causal-only BaseConv stacks (docs/theory.md §4 **Choice**).

**Lemma (causal row dependence).** In an (N, L, d, N', d')-BaseConv whose layers are all causal,
for every weight values and every depth, output row i is a polynomial in the input rows ≤ i only.

*Proof.* By induction on the layers, for the inner states ``z_0 = embed(u), z_1, …, z_L``: in
``z_0``, row i is input row i (or 0 when i ≥ N). If row i of ``z_ℓ`` depends only on input rows
≤ i for every i, then in ``z_{ℓ+1} = (z_ℓ W + b1) ⊙ (h ⊛ z_ℓ + b2)`` row i is the entrywise
product of ``z_ℓ[i]·W + b1[i]`` (row i only: W acts on the right, within a row) and
``Σ_{k≤i} h[k]·z_ℓ[i−k] + b2[i]`` (rows ``i − k ≤ i``: the causal sum); biases and weights are
constants. So row i of ``z_{ℓ+1}`` depends only on rows ≤ i of ``z_ℓ``, hence on input rows ≤ i.
The read-out keeps rows < N unchanged. ∎

**Consequence.** A circuit whose output entry in row r *depends* on an input in a later row
(its exact polynomial contains that variable) is computed by no causal stack, of any depth or
inner size: e.g. ``n = 2, d = 1`` with output 0 ``:= x_1`` (``y = [x_1; 0]``), or "every row
:= x_1" (``y = [x_1; x_1]``). By contrast "every row := x_0" is causal and has a 2-layer causal
model. This module checks the lemma's conclusion for concrete sizes two ways:

* :func:`exact_row_dependence`: exactly the input rows whose variables occur in the output
  polynomials of a model whose every weight is a distinct symbol (:func:`symbolic_model`), so "no
  variable of a later row occurs" holds for *all* weights at once (the sound superset below, matched
  by an expansion at integer weights; the full expansion only where the two differ);
* :func:`row_support`: an abstract interpretation (each value is structurally zero or carries the
  set of input rows it may involve; the dependence lattice of :mod:`symverify.kernel.semantics.support`),
  a sound over-approximation that scales to any size.

:func:`causal_obstruction` finds the violating output of a circuit exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from symverify.errors import IRError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import is_bool

__all__ = [
    "symbolic_model",
    "row_support",
    "exact_row_dependence",
    "later_row_reads",
    "CausalObstruction",
    "causal_obstruction",
    "LEMMA",
]

LEMMA = (
    "in a causal BaseConv stack, output row i depends only on input rows ≤ i "
    "(induction on layers: the projection is row-local, the causal convolution reads rows ≤ i)"
)


def symbolic_model(inner_n: int, inner_d: int, layers: int, *, n: int | None = None, d: int | None = None,
                   mode: Mode | str = Mode.CAUSAL, prefix: str = "w") -> Model:
    """An ``(n, L, d, N', d')`` model whose every W, b1, h, b2 entry is a distinct symbol.

    Layer l's symbols are named ``{prefix}{l}.W[p][q]``, ``{prefix}{l}.h[k][j]``, …; ``n``, ``d``
    default to ``N'``, ``d'`` (the whole state is the input).

    >>> m = symbolic_model(2, 1, 2)
    >>> m.signature, len(m.params())
    ((2, 2, 1, 2, 1), 14)
    """
    from symverify.gadgets.primitives import as_mode, generic_layer

    if not isinstance(layers, int) or isinstance(layers, bool) or layers < 0:
        raise IRError(f"symbolic_model: expected a layer count ≥ 0, found {layers!r}")
    m = as_mode(mode, "symbolic_model")
    stack = tuple(generic_layer(inner_n, inner_d, m, prefix=f"{prefix}{ell}").layers[0] for ell in range(layers))
    return Model(inner_n if n is None else n, inner_d if d is None else d, inner_n, inner_d, stack, f"symbolic {m.value} stack")


def row_support(model: Model) -> tuple[frozenset[int], ...]:
    """For each output row, a superset of the input rows its entries depend on (sound, any size).

    Raises:
        IRError: ``model`` is not a :class:`Model`.
    """
    _check_model(model, "row_support")
    from symverify.kernel.semantics.evaluate import eval_model
    from symverify.kernel.semantics.support import Dependence, DependenceRing

    u = [[Dependence(frozenset({i})) for _ in range(model.d)] for i in range(model.n)]
    out = eval_model(model, u, DependenceRing())
    return tuple(frozenset().union(*(c.labels for c in row)) for row in out)


def exact_row_dependence(model: Model, backend: str = "flint") -> tuple[frozenset[int], ...]:
    """For each output row, exactly the input rows whose variables occur in its polynomials.

    The polynomials are those in the inputs *and* the model's symbols (all weights at once). Computed
    by a sandwich, exact in both directions: with ``S_i`` = the rows of :func:`row_support` (a sound
    superset, so ``dep_i ⊆ S_i``) and ``T_i`` = the rows whose variables occur in output row ``i``
    after every symbol is replaced by a fixed integer (:func:`_rows_at_integer_weights`; substituting
    parameters never makes an input variable appear, so ``T_i ⊆ dep_i``), ``T = S`` gives
    ``dep = S`` exactly. Only where they differ are the full polynomials expanded (the former
    computation, far costlier: their terms grow with every weight symbol).

    Raises:
        IRError: ``model`` is not a :class:`Model`.
    """
    _check_model(model, "exact_row_dependence")
    if not model.params():
        return _expanded_row_dependence(model, backend)
    upper = row_support(model)
    if _rows_at_integer_weights(model, backend) == upper:
        return upper
    return _expanded_row_dependence(model, backend)


def _check_model(model: object, where: str) -> None:
    if not isinstance(model, Model):
        raise IRError(f"{where}: expected a Model, found {type(model).__name__}")


def _expanded_row_dependence(model: Model, backend: str) -> tuple[frozenset[int], ...]:
    """The input rows occurring in each output row's fully expanded polynomials (inputs and symbols)."""
    from symverify.kernel.semantics.poly import polynomials

    polys = polynomials(model, backend=backend)  # type: ignore[arg-type]
    return tuple(frozenset(v // model.d for p in row for v in _variables(p, model.n * model.d)) for row in polys)


def _rows_at_integer_weights(model: Model, backend: str) -> tuple[frozenset[int], ...]:
    """The input rows occurring in each output row's polynomials in the inputs alone, every symbol
    replaced by a fixed integer (distinct odd values ``3, 5, 7, …`` in sorted name order).

    Each of these is a subset of the exact dependence: if ``p(x, w)`` does not contain ``x_v``,
    neither does ``p(x, w0)``."""
    from symverify.kernel.ir.scalar import Sym
    from symverify.kernel.semantics.evaluate import eval_model
    from symverify.kernel.semantics.poly import PolyRing

    values = {name: 2 * k + 3 for k, name in enumerate(sorted(model.params()))}

    class _AtWeights(PolyRing):
        """The ring of the inputs alone; a symbolic weight is read as its value at ``values``."""

        def coerce(self, x: Any) -> Any:
            if isinstance(x, Sym):
                total: Any = 0
                for mono, c in x.terms:
                    term: Any = c
                    for name, e in mono:
                        term *= values[name] ** e
                    total += term
                x = total
            return super().coerce(x)

    at = _AtWeights(model.n * model.d, (), backend)  # type: ignore[arg-type]
    polys = eval_model(model, at.grid_input(model.n, model.d), at)
    return tuple(frozenset(v // model.d for p in row for v in _variables(p, model.n * model.d)) for row in polys)


def _variables(p: Any, num_inputs: int) -> list[int]:
    """Input variables (indices < ``num_inputs``) that occur in the polynomial ``p``."""
    degs = p.degrees()
    return [v for v in range(num_inputs) if degs[v] > 0]


def later_row_reads(deps: Sequence[frozenset[int]]) -> list[tuple[int, int]]:
    """``(output row, input row)`` pairs with input row > output row (the causal violations).

    ``deps[i]`` is the set of input rows output row ``i`` depends on (what :func:`row_support` and
    :func:`exact_row_dependence` return): a sequence of sets of non-negative ints, else an
    :class:`IRError` naming the entry."""
    if isinstance(deps, (str, bytes, dict)) or not isinstance(deps, Sequence):
        raise IRError(f"later_row_reads: expected a sequence of sets of input rows (one per output row), found "
                      f"{type(deps).__name__} {safe_repr(deps, 40)}")
    for i, rows in enumerate(deps):
        if not isinstance(rows, (set, frozenset)) or any(not isinstance(r, int) or is_bool(r) or r < 0 for r in rows):
            raise IRError(f"later_row_reads: deps[{i}]: expected a set of input rows (non-negative ints), found "
                          f"{type(rows).__name__} {safe_repr(rows, 40)}")
    return [(i, r) for i, rows in enumerate(deps) for r in sorted(rows) if r > i]


@dataclass(frozen=True)
class CausalObstruction:
    """Output entry ``output`` (cell) depends exactly on input ``input_node`` from a later row."""

    output_index: int
    output_cell: tuple[int, int]
    input_node: int
    input_cell: tuple[int, int]

    def __str__(self) -> str:
        return (
            f"output {self.output_index} at cell {self.output_cell} depends on input x_{self.input_node} at "
            f"{self.input_cell}, a later row; by the lemma ({LEMMA}) no causal stack of any depth or inner "
            "size computes this circuit"
        )


def causal_obstruction(circuit: Circuit, backend: str = "flint") -> CausalObstruction | None:
    """The first output that depends (exactly) on a later input row, or None if there is none.

    >>> from symverify.kernel.ir.circuit import Circuit
    >>> str(causal_obstruction(Circuit(2, 1, (), (1,))))[:60]
    'output 0 at cell (0, 0) depends on input x_1 at (1, 0), a la'

    Raises:
        IRError: ``circuit`` is not a :class:`Circuit` (a model has no output list to name).
    """
    if not isinstance(circuit, Circuit):
        raise IRError(f"causal_obstruction: expected a Circuit, found {type(circuit).__name__}")
    from symverify.kernel.semantics.poly import polynomials

    polys = polynomials(circuit, backend=backend)  # type: ignore[arg-type]
    d = circuit.d
    for k in range(len(circuit.outputs)):
        r, c = divmod(k, d)
        for v in _variables(polys[r][c], circuit.num_inputs):
            if v // d > r:
                return CausalObstruction(k, (r, c), v, (v // d, v % d))
    return None
