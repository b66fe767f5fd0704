"""Layout gadgets: move the ``n×d`` input into one row of channels, and outputs back to ``n×d``.

Compilers that work in "feature memory" (docs/appendix-h.md §2.5: every live value in its own channel of row
0) need two layout changes; both are built from the primitives' weights (positional gates and
impulse filters) and proved like every other fragment.

* :func:`rows_to_channels` (**2 layers, the second cyclic**): input ``u[r, j]`` at cell ``(r, j)``
  ↦ cell ``(0, r·d + j)`` (so row 0 holds ``vec(u)``), everything else 0.
* :func:`channels_to_rows` (**2 layers, both causal**): value ``k`` at cell ``(0, k)`` ↦ cell
  ``(k // d, k % d)`` (row-major read-out), everything else 0.

Moving a row *up* needs the cyclic mode (see :mod:`symverify.gadgets.causal`); moving *down* does not.
"""

from __future__ import annotations

from symverify.errors import ShapeError
from symverify.gadgets.primitives import _check_ints, _check_state
from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder, block
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.grid import Grid

__all__ = ["rows_to_channels", "channels_to_rows"]


def rows_to_channels(n: int, d: int, inner_n: int, inner_d: int) -> Fragment:
    """``(r, j) ↦ (0, r·d + j)`` for ``r < n, j < d``; needs ``N' ≥ n`` and ``d' ≥ n·d``.

    Layer 1 (spread, row-local): ``W[j, r'·d + j] = 1`` for every r' < n, ``b1 = 0``, ``h = 0``,
    ``b2[r, r·d + j] = 1`` (a positional gate: row r keeps only its own copy), so cell
    ``(r, r·d + j)`` holds ``u[r, j]``. Layer 2 (cyclic): column ``r·d + j`` gets the filter
    ``e_{(−r) mod N'}`` (a cyclic shift up by r) and ``b1[0, r·d + j] = 1``, ``W = 0``, ``b2 = 0``,
    so row 0 receives row r of that column and every other row is 0. With ``n = 1`` the input is
    already in place and the fragment has no layers. A state ``N'·d'`` over
    :data:`symverify.ir.limits.MAX_CELLS` cells is a :class:`~symverify.errors.LimitError`.
    """
    _check_ints("rows_to_channels", n=n, d=d, inner_n=inner_n, inner_d=inner_d)
    if n < 1 or d < 1 or inner_n < n or inner_d < n * d:
        raise ShapeError(f"rows_to_channels: needs N' ≥ n and d' ≥ n·d; found n={n}, d={d}, N'={inner_n}, d'={inner_d}")
    _check_state(inner_n, inner_d, "rows_to_channels")
    nn, dd = inner_n, inner_d
    entry = block(range(n), range(d))
    exit_ = block([0], range(n * d))
    layers: tuple[Layer, ...] = ()
    if n > 1:
        W = Grid.from_cells(dd, dd, {(j, r * d + j): 1 for r in range(n) for j in range(d)})
        b2 = Grid.from_cells(nn, dd, {(r, r * d + j): 1 for r in range(n) for j in range(d)})
        spread = Layer.make(nn, dd, W=W, b2=b2)
        h = Grid.from_cells(nn, dd, {((-r) % nn, r * d + j): 1 for r in range(n) for j in range(d)})
        b1 = Grid.from_cells(nn, dd, {(0, k): 1 for k in range(n * d)})
        layers = (spread, Layer.make(nn, dd, b1=b1, h=h, mode=Mode.CYCLIC))

    def build() -> Spec:
        b = SpecBuilder(nn, dd)
        out = {(0, r * d + j): b.cell(r, j) for r in range(n) for j in range(d)}
        cps = ((1, tuple(Cell.node(r, r * d + j, b.cell(r, j)) for r in range(n) for j in range(d))),) if n > 1 else ()
        return Spec(b.circuit(out, "rows_to_channels"), cps)

    return Fragment(f"rows_to_channels({n}×{d})", nn, dd, layers, entry, exit_, {"layers": 2 if n > 1 else 0}, build)


def channels_to_rows(m: int, d: int, inner_n: int, inner_d: int) -> Fragment:
    """``(0, k) ↦ (k // d, k % d)`` for ``k < m``; needs ``N' ≥ ⌈m/d⌉`` and ``d' ≥ m``.

    Layer 1 (causal shift down per column): column k gets the filter ``e_{k // d}`` and
    ``b1[k // d, k] = 1``, ``W = 0``, ``b2 = 0``, so cell ``(k // d, k)`` holds the value. Layer 2
    (fold, row-local): ``W[k, k % d] = 1``, ``b1 = 0``, ``h = 0``, ``b2[k // d, k % d] = 1``: row i,
    column j sums the columns ``k ≡ j (mod d)``, of which only ``k = i·d + j`` is nonzero in row i.
    With ``m ≤ d`` every value is already in place and the fragment has no layers. A state ``N'·d'``
    over :data:`symverify.ir.limits.MAX_CELLS` cells is a :class:`~symverify.errors.LimitError`.
    """
    _check_ints("channels_to_rows", m=m, d=d, inner_n=inner_n, inner_d=inner_d)
    if m < 0 or d < 1 or inner_d < max(m, d) or inner_n < -(-m // d):
        raise ShapeError(f"channels_to_rows: needs d' ≥ max(m, d) and N' ≥ ⌈m/d⌉; found m={m}, d={d}, N'={inner_n}, d'={inner_d}")
    _check_state(inner_n, inner_d, "channels_to_rows")
    nn, dd = inner_n, inner_d
    entry = block([0], range(m))
    exit_ = frozenset((k // d, k % d) for k in range(m))
    layers: tuple[Layer, ...] = ()
    if m > d:
        h = Grid.from_cells(nn, dd, {(k // d, k): 1 for k in range(m)})
        b1 = Grid.from_cells(nn, dd, {(k // d, k): 1 for k in range(m)})
        W = Grid.from_cells(dd, dd, {(k, k % d): 1 for k in range(m)})
        b2 = Grid.from_cells(nn, dd, {(k // d, k % d): 1 for k in range(m)})
        layers = (Layer.make(nn, dd, b1=b1, h=h), Layer.make(nn, dd, W=W, b2=b2))

    def build() -> Spec:
        b = SpecBuilder(nn, dd)
        out = {(k // d, k % d): b.cell(0, k) for k in range(m)}
        cps = ((1, tuple(Cell.node(k // d, k, b.cell(0, k)) for k in range(m))),) if m > d else ()
        return Spec(b.circuit(out, "channels_to_rows"), cps)

    return Fragment(f"channels_to_rows({m}, d={d})", nn, dd, layers, entry, exit_, {"layers": 2 if m > d else 0}, build)
