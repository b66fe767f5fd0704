"""Benchmark: compiler gadgets built from their ∀-proved definitions vs written out by hand.

Run ``python benchmarks/parametric_instantiate.py [--sizes 512,4096,32768] [--repeat 5]``. For each
layout size N_k it times (median of ``--repeat`` runs, interleaved) two builders of the same layers:

* ``mul``: the multiplicative stage ``M1``, ``M2`` with N_k/4 products and N_k/8 kept values:
  :func:`symverify.compiler.circuit_to_baseconv.mul_layers` (which instantiates
  :func:`symverify.parametric.library.mul_stage`) against the hand-written builder it replaced
  (reproduced below);
* ``seq`` / ``chan``: one Lemma H.16 gadget (a sequence-axis and, with d = 4, a channel-axis
  factor): :func:`symverify.compiler.butterfly_to_baseconv.factor_layers` (which instantiates
  ``factor_sequence`` / ``factor_channel``, with the full support and live sets as placements)
  against the hand-written layers it replaced.

A ``mul-1by1`` row (N_k ≤ 4096) times the definition evaluated cell by cell (bulk evaluation
off), for comparison. It checks that both builders give equal layers and prints the ratio definition / hand-written
(≤ 1 means the definition is as fast). Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import partial
from typing import Any

from symverify.compiler import butterfly_to_baseconv as b2b
from symverify.compiler.circuit_to_baseconv import mul_layers, smallest_shift
from symverify.compiler.layout import Layout, axis_of, grid
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero
from symverify.kernel.parametric import concrete


# ---- the hand-written layer builders the compiler used before (reference copies) ----------------
def _scale_layer(lay: Layout, pending: bool, scale: Mapping[tuple[int, int], Scalar],
                 offset: Mapping[tuple[int, int], Scalar] | None = None) -> Layer:
    """Layer ``A``: block taps summing ``B0 (+ B1)`` onto every block ``scale`` names, then ``b1 = scale``."""
    blocks = {r // lay.block for r, _ in scale} | {0}
    return b2b.conv_layer(lay, b2b.block_taps(lay, {0, 1} if pending else {0}, blocks), scale, offset)


def _shift_sum_layer(lay: Layout, t: int, live: AbstractSet[tuple[int, int]] | None = None) -> Layer:
    """Layer ``B`` of a sequence gadget: taps ``0``, ``N' − S − t``, ``S + t``; ones on ``B0``'s live cells."""
    S, rows = lay.block, lay.rows
    taps = {(k % rows, c): 1 for k in (0, rows - S - t, S + t) for c in range(lay.tw)}
    cells = live if live is not None else {lay.cell(p) for p in range(lay.size)}
    return b2b.conv_layer(lay, taps, dict.fromkeys(cells, 1))


def _pair_mix_layer(lay: Layout, s: int, gate: Mapping[tuple[int, int], Scalar]) -> Layer:
    """Layer ``C`` of a channel gadget: ``(u·(I + P_s)) ⊙ G``."""
    W: dict[tuple[int, int], Scalar] = {}
    for c in range(lay.tw):
        W[(c, c)] = 1
        W[(c ^ s, c)] = 1
    return b2b.mix_layer(lay, W, gate)


def _coefficients(lay: Layout, f: ButterflyFactor, axis: str, support: AbstractSet[int] | None) -> dict[tuple[int, int], Scalar]:
    """The destination coefficients ``b1`` of layer ``A`` (only on ``support`` when given)."""
    G: dict[tuple[int, int], Scalar] = {}
    cell = lay.cell

    def live(p: int) -> bool:
        return support is None or p in support

    for m, (p, q) in enumerate(f.pairs()):
        lp, lq = live(p), live(q)
        if axis == "channel":
            if lp:
                G[cell(p)], G[cell(p, 1)] = f.d1[m], f.d3[m]
            if lq:
                G[cell(q)], G[cell(q, 1)] = f.d2[m], f.d4[m]
            continue
        if lp:
            G[cell(p)] = f.d1[m]
        if lq:
            G[cell(q)] = f.d4[m]
        if axis == "sequence":
            if lq:
                G[cell(q, 1)] = f.d2[m]
            if lp:
                G[cell(p, 2)] = f.d3[m]
    return G


def hand_mul_layers(lay: Layout, v1: Sequence[int], k_rows: int, v3: Sequence[int], pending: bool,
                    offset: Mapping[int, Scalar]) -> tuple[Layer, Layer]:
    """The multiplicative stage as it was written out by hand."""
    tw, rows = lay.tw, lay.rows
    v2 = {p + k_rows * tw for p in v1}
    keep = {lay.cell(q): 1 for q in (*v1, *v3)} | {lay.cell(q, 1): 1 for q in v2}
    off = {lay.cell(q, 1 if q in v2 else 0): v for q, v in offset.items() if not is_zero(v)}
    m1 = _scale_layer(lay, pending, keep, off)
    tap = {((rows - lay.block - k_rows) % rows, c): 1 for c in range(tw)}
    m2 = Layer(grid(lay.width, lay.width, {(c, c): 1 for c in range(tw)}), Grid.zeros(rows, lay.width),
               grid(rows, lay.width, tap), grid(rows, lay.width, {lay.cell(q): 1 for q in v3}), Mode.CYCLIC)
    return m1, m2


def hand_factor_layers(lay: Layout, f: ButterflyFactor) -> tuple[Layer, ...]:
    """A clean, unpruned Lemma H.16 gadget as it was written out by hand."""
    axis = axis_of(f, lay.tw)
    first = _scale_layer(lay, False, _coefficients(lay, f, axis, None))
    if axis == "sequence":
        return (first, _shift_sum_layer(lay, f.stride // lay.tw, None))
    gate: dict[tuple[int, int], Scalar] = {}
    for p, q in f.pairs():
        gate[lay.cell(p)] = 1
        gate[lay.cell(q, 1)] = 1
    return (first, _pair_mix_layer(lay, f.stride, gate))


def _time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    ts, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def _same(a: Sequence[Layer], b: Sequence[Layer]) -> bool:
    return len(a) == len(b) and all(x.mode == y.mode and all(g.to_rows() == h.to_rows() for (_, g), (_, h) in zip(x.grids(), y.grids()))
                                    for x, y in zip(a, b))


def _factor(size: int, stride: int) -> ButterflyFactor:
    pairs = size // 2
    return ButterflyFactor(size, stride, *[tuple((m % 7) - 3 + 10 * n for m in range(pairs)) for n in range(4)])


def _cell_by_cell(fn: Callable[..., Any], *args: Any) -> Any:
    saved = concrete._BULK_FROM
    concrete._BULK_FROM = 1 << 62
    try:
        return fn(*args)
    finally:
        concrete._BULK_FROM = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="512,4096,32768")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'case':<9}{'N_k':>8}{'definition s':>14}{'hand s':>10}{'ratio':>8}  equal")
    for size in (int(x) for x in args.sizes.split(",")):
        k, n3 = size // 4, size // 8
        v1 = tuple(range(0, 2 * k, 2))
        v3 = tuple(range(2 * k + 1, 2 * k + 1 + 2 * n3, 2))
        kr = smallest_shift(v1, v3, 1)
        lay = Layout.choose(1, 1, size)
        offset = {p: (p % 5) - 2 for p in range(0, lay.size, 3)}
        lay4 = Layout.choose(1, 4, size)
        f, f4 = _factor(lay.size, 2), _factor(lay4.size, 2)
        cases: list[tuple[str, Layout, Callable[[], Any], Callable[[], Any]]] = [
            ("mul", lay, partial(mul_layers, lay, v1, kr, v3, True, offset), partial(hand_mul_layers, lay, v1, kr, v3, True, offset)),
            ("seq", lay, partial(b2b.factor_layers, lay, f), partial(hand_factor_layers, lay, f)),
            ("chan", lay4, partial(b2b.factor_layers, lay4, f4), partial(hand_factor_layers, lay4, f4)),
        ]
        if size <= 4096:  # the definition evaluated cell by cell, as before bulk evaluation
            cases.append(("mul-1by1", lay, partial(_cell_by_cell, mul_layers, lay, v1, kr, v3, True, offset),
                          partial(hand_mul_layers, lay, v1, kr, v3, True, offset)))
        for name, lay_, new, old in cases:
            t_new, a = _time(new, args.repeat)
            t_old, b = _time(old, args.repeat)
            print(f"{name:<9}{lay_.size:>8}{t_new:>14.4f}{t_old:>10.4f}{t_new / t_old:>8.2f}  {_same(a, b)}")


if __name__ == "__main__":
    main()
