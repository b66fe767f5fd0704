"""Theorem H.21, multiplicative stage: the product gadget ``(M1, M2)`` proved once for all inputs.

The compiler (:func:`symverify.compiler.h21.emit.mul_layers`) builds a multiplicative
stage ``[v1; v2; v3] ↦ [v1 ⊙ v2; v3]`` as two cyclic layers on the ``N'×d`` state of
:class:`~symverify.compiler.layout.Layout` (row blocks ``B0``, ``B1``, ``B2`` at row offsets
``0, S, 2S``; position ``p`` of block ``b`` at cell ``(b·S + p // tw, p % tw)``): ``M1`` completes
a pending sum ``B0 + B1``, adds the linear stage's constants ``c``, keeps ``v1`` and ``v3`` in
``B0`` and moves ``v2`` (the positions ``v1 + k_rows·tw``) into ``B1``; ``M2`` multiplies each
``v1`` cell by the ``B1`` cell ``k_rows`` rows below and keeps each ``v3`` cell.

Here the gadget is a :class:`~symverify.kernel.gadgets.fragment.Fragment` (as ``remember`` is in
``prop_h10_remember``), with ``T[p] = B0[p] + B1[p]`` when ``pending``, else ``T[p] = B0[p]``:

* **entry**: every ``B0`` track cell and, when ``pending``, every ``B1`` track cell (all ``N_k``
  positions, not only the occupied ones: whatever the linear stage leaves elsewhere is dropped);
* **exit**: the ``v1`` and ``v3`` cells of ``B0`` (every other cell ends 0);
* **spec**: the ``v1`` cell of ``p`` holds ``(T[p] + c_p)·(T[q] + c_q)`` with ``q = p + k_rows·tw``,
  the ``v3`` cell of ``p`` holds ``T[p] + c_p``; checkpoint after ``M1``: ``T + c`` at the ``v1``
  and ``v3`` cells of ``B0`` and at the ``v2`` cells of ``B1``, nothing else.

The constants are symbolic, ``c_p = sym("c<p>")`` for **every** position ``p < N_k``, so each
instance holds for all input states and all constant vectors (those outside ``v1 ∪ v2 ∪ v3`` are
dropped by ``M1``). Proved by the fragment prover (stage certificate and exact polynomials, in the
whole state and every ``c_p``) over a sweep of shapes: ``d ∈ {1, 2, 3, 4, 8}`` (``tw`` = the
largest power of two ``≤ d``), several numbers of products ``k`` and kept values ``n3``,
``pending`` and not, ``v1 ∪ v3`` contiguous or at aligned block starts
(:func:`~symverify.kaleidoscope.selection.preferred_positions`, the compiler's placement before a
copy network) with ``k_rows`` the smallest shift that puts ``v2`` on no ``v1`` or ``v3`` position
(:func:`~symverify.compiler.h21.placement.smallest_shift`), or the compiler's compact layout
(:func:`~symverify.compiler.h21.placement.compact_product_layout`: ``v3`` with gaps, then
``v1``, ``v2`` an even shift above it) or its packed one
(:func:`~symverify.compiler.h21.placement.packed_product_layout`: ``v1`` from 0, ``v2`` an
even shift above, ``v3`` in the gaps between and above), ``N_k`` the smallest power of two that holds ``v2`` and
``2·k_rows·tw`` (the compiler's requirement) and, in the full tier, four times that.

The layers proved are exactly those :func:`mul_layers` returns; the compiler then prunes them to
the live cells of each circuit (a change only to weights that multiply cells that are 0 on every
input the model sees, checked per instance by each compiled circuit's certificate).

Stated constants: **2 layers**, ``N' = 3·(R + ⌊R/2⌋)`` with ``R = N_k/tw``, ``d' = d``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import NamedTuple

from symverify.compiler.h21 import (
    compact_product_layout,
    mul_layers,
    packed_product_layout,
    smallest_shift,
)
from symverify.compiler.layout import Layout, track_width
from symverify.errors import ShapeError
from symverify.kaleidoscope.selection import preferred_positions
from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder
from symverify.kernel.ir.baseconv import Layer
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.scalar import Scalar, sym
from symverify.parametric import library as forall_library
from symverify.scripts.instances import forall_instance, fragment_instance
from symverify.scripts.protocol import Instance, ProofResult, each, script_main

TITLE = "Theorem H.21 product gadget (M1, M2): v1 ↦ (v1 + c)·(v2 + c), v3 ↦ v3 + c for all inputs and constants, in 2 layers"
SHARDABLE = True  # one instance per shape, independent of the others
COST = 10  # CPU seconds of the full tier, measured (orders and splits a parallel run)

PRODUCT_LAYERS = 2
"""The stated constant: a multiplicative stage is 2 layers (``M1``, ``M2``)."""

# reads per slot of the next stage's copy network, cycled (0: a slot nobody reads)
_SCATTER_COUNTS = (1, 4, 2, 1, 3, 0, 2, 8)
LAYOUTS = {"compact": compact_product_layout, "packed": packed_product_layout}


def placement(kind: str, k: int, n3: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(v1, v3)`` for ``k`` products and ``n3`` kept values: ``"contiguous"`` (``0 … k+n3−1``) or
    ``"scattered"`` (at aligned block starts, :func:`preferred_positions` of a fixed read pattern)."""
    if kind == "contiguous":
        alls = tuple(range(k + n3))
    elif kind == "scattered":
        alls = preferred_positions([_SCATTER_COUNTS[i % len(_SCATTER_COUNTS)] for i in range(k + n3)])
    else:
        raise ShapeError(f"product gadget placement: expected 'contiguous' or 'scattered', found {kind!r}")
    return alls[:k], alls[k:]


def symbolic_offset(size: int) -> dict[int, Scalar]:
    """``c_p = sym("c<p>")`` for every position ``p < size``."""
    return {p: sym(f"c{p}") for p in range(size)}


def _check_shape(lay: Layout, v1: Sequence[int], k_rows: int, v3: Sequence[int]) -> tuple[int, ...]:
    """Validate the positions; returns ``v2``."""
    what = f"product gadget (N_k = {lay.size}, tw = {lay.tw})"
    if not isinstance(k_rows, int) or isinstance(k_rows, bool) or k_rows < 1:
        raise ShapeError(f"{what}: k_rows must be a positive int, found {k_rows!r}")
    for name, ps in (("v1", v1), ("v3", v3)):
        bad = [p for p in ps if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < lay.size]
        if bad:
            raise ShapeError(f"{what}: {name} positions {bad[:6]} are outside [0, {lay.size})")
        if len(set(ps)) != len(ps):
            raise ShapeError(f"{what}: {name} positions repeat")
    both = sorted(set(v1) & set(v3))
    if both:
        raise ShapeError(f"{what}: positions {both[:6]} are in both v1 and v3")
    v2 = tuple(p + k_rows * lay.tw for p in v1)
    out = [q for q in v2 if q >= lay.size]
    if out:
        raise ShapeError(f"{what}: v2 positions {out[:6]} (v1 + k_rows·tw, k_rows = {k_rows}) are outside [0, {lay.size})")
    clash = sorted(set(v2) & (set(v1) | set(v3)))
    if clash:
        raise ShapeError(f"{what}: v2 positions {clash[:6]} (v1 + k_rows·tw, k_rows = {k_rows}) are also v1 or v3 positions")
    return v2


def product_fragment(lay: Layout, v1: Sequence[int], k_rows: int, v3: Sequence[int], pending: bool,
                     offset: Mapping[int, Scalar] | None = None, *, layers: Sequence[Layer] | None = None) -> Fragment:
    """The multiplicative stage's layers ``mul_layers(lay, v1, k_rows, v3, pending, offset)`` as a
    fragment with the clean interface and spec of the module docstring.

    ``offset`` defaults to :func:`symbolic_offset` (every position). ``layers`` replaces the
    fragment's layers (for tests: a changed weight must be refuted against the same spec).
    Raises :class:`~symverify.errors.ShapeError` when the positions do not fit the layout.
    """
    v1, v3 = tuple(v1), tuple(v3)
    v2 = _check_shape(lay, v1, k_rows, v3)
    off = dict(symbolic_offset(lay.size) if offset is None else offset)
    m1, m2 = mul_layers(lay, v1, k_rows, v3, pending, off)
    blocks = (0, 1) if pending else (0,)
    entry = frozenset(lay.cell(p, b) for p in range(lay.size) for b in blocks)
    exit_ = frozenset(lay.cell(p) for p in (*v1, *v3))

    def build() -> Spec:
        b = SpecBuilder(lay.rows, lay.width)
        val: dict[int, int] = {}
        for p in sorted({*v1, *v2, *v3}):
            val[p] = b.affine([(1, b.cell(*lay.cell(p, blk))) for blk in blocks], off.get(p, 0))
        out = {lay.cell(p): b.mul(val[p], val[q]) for p, q in zip(v1, v2)}
        out |= {lay.cell(p): val[p] for p in v3}
        after_m1 = [Cell.node(*lay.cell(p), val[p]) for p in (*v1, *v3)] + [Cell.node(*lay.cell(q, 1), val[q]) for q in v2]
        circuit = b.circuit(out, f"product gadget spec (N_k = {lay.size}, d = {lay.d})")
        return Spec(circuit, ((1, tuple(sorted(after_m1, key=lambda c: (c.row, c.col)))),))

    name = f"H.21 product gadget N_k={lay.size} d={lay.d} k={len(v1)} n3={len(v3)} k_rows={k_rows}{' pending' if pending else ''}"
    return Fragment(name, lay.rows, lay.width, tuple(layers) if layers is not None else (m1, m2), entry, exit_,
                    {"layers": PRODUCT_LAYERS}, build)


class Shape(NamedTuple):
    """One instance of the sweep (a named tuple: the script is also loaded outside its package)."""

    d: int
    k: int
    n3: int
    kind: str
    pending: bool
    grow: int = 1  # N_k = grow × the smallest size that fits

    def build(self) -> tuple[Layout, tuple[int, ...], int, tuple[int, ...]]:
        tw = track_width(self.d)
        if self.kind in LAYOUTS:  # the compiler's compact or packed layout, some kept values computed by two entries
            v1, v3, kr = LAYOUTS[self.kind](self.k, self.n3, set(range(2 * self.k, 2 * self.k + self.n3, 2)), tw)
        else:
            v1, v3 = placement(self.kind, self.k, self.n3)
            kr = smallest_shift(v1, v3, tw)
        need = max([p + 1 for p in (*v1, *v3)] + [p + kr * tw + 1 for p in v1] + [2 * kr * tw, 2])
        lay = Layout.choose(1, self.d, need * self.grow)
        return lay, v1, kr, v3


def shapes(quick: bool) -> list[Shape]:
    counts = [(1, 1), (2, 3)] if quick else [(1, 0), (1, 1), (2, 3), (3, 0), (4, 4), (5, 7), (8, 8)]
    grows = (1,) if quick else (1, 4)
    return [Shape(d, k, n3, kind, pending, grow)
            for d in (1, 2, 3, 4, 8) for k, n3 in counts for kind in ("contiguous", "scattered", *LAYOUTS)
            for pending in (False, True) for grow in grows]


def run(quick: bool = False) -> ProofResult:
    res = ProofResult("thm_h21_product_gadget", TITLE)
    # Two kinds of placement may give the same positions (the compact layout of contiguous
    # values, ...): the fragment, its spec and its bounds are then the same, determined by the
    # layout, v1, k_rows, v3 and pending, so it is proved once and its proof is the row of each.
    proved: dict[tuple[object, ...], Instance] = {}
    for s in each(shapes(quick)):
        lay, v1, kr, v3 = s.build()
        name = (f"d={s.d} N_k={lay.size} k={s.k} n3={s.n3} {s.kind} k_rows={kr}"
                f"{' pending' if s.pending else ''}: all inputs, all c")
        key = (lay, v1, kr, v3, s.pending)
        if key in proved:
            first = proved[key]
            res.instances.append(first.renamed(name, detail=f"the same fragment as {first.name!r} (its proof){'; ' + first.detail if first.detail else ''}"))
            continue
        frag = product_fragment(lay, v1, kr, v3, s.pending)
        bounds: dict[str, int | Fraction] = {"layers": PRODUCT_LAYERS, "inner_n": 3 * (lay.track_rows + lay.track_rows // 2), "inner_d": s.d}
        proved[key] = fragment_instance(frag, name, bounds)
        res.instances.append(proved[key])
    res.instances.append(forall_instance(forall_library.product_pair()))  # (v2 + c1)·(v1 + c2), every k, block placement
    res.instances.append(forall_instance(forall_library.mul_stage()))  # M1, M2 as compiled: every placement, k_rows, pending
    return res


if __name__ == "__main__":
    raise SystemExit(script_main(run))
