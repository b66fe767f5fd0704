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
from functools import partial
from typing import Any

from symverify.compiler import butterfly_to_baseconv as b2b
from symverify.compiler.circuit_to_baseconv import mul_layers, smallest_shift
from symverify.compiler.layout import Layout, axis_of, grid
from symverify.ir.baseconv import Layer, Mode
from symverify.ir.butterfly import ButterflyFactor
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar, is_zero
from symverify.parametric import concrete


def hand_mul_layers(lay: Layout, v1: Sequence[int], k_rows: int, v3: Sequence[int], pending: bool,
                    offset: Mapping[int, Scalar]) -> tuple[Layer, Layer]:
    """The multiplicative stage as it was written out by hand."""
    tw, rows = lay.tw, lay.rows
    v2 = {p + k_rows * tw for p in v1}
    keep = {lay.cell(q): 1 for q in (*v1, *v3)} | {lay.cell(q, 1): 1 for q in v2}
    off = {lay.cell(q, 1 if q in v2 else 0): v for q, v in offset.items() if not is_zero(v)}
    m1 = b2b.scale_layer(lay, pending, keep, off)
    tap = {((rows - lay.block - k_rows) % rows, c): 1 for c in range(tw)}
    m2 = Layer(grid(lay.width, lay.width, {(c, c): 1 for c in range(tw)}), Grid.zeros(rows, lay.width),
               grid(rows, lay.width, tap), grid(rows, lay.width, {lay.cell(q): 1 for q in v3}), Mode.CYCLIC)
    return m1, m2


def hand_factor_layers(lay: Layout, f: ButterflyFactor) -> tuple[Layer, ...]:
    """A clean, unpruned Lemma H.16 gadget as it was written out by hand."""
    axis = axis_of(f, lay.tw)
    first = b2b.scale_layer(lay, False, b2b._coefficients(lay, f, axis, None))
    if axis == "sequence":
        return (first, b2b.shift_sum_layer(lay, f.stride // lay.tw, None))
    gate: dict[tuple[int, int], Scalar] = {}
    for p, q in f.pairs():
        gate[lay.cell(p)] = 1
        gate[lay.cell(q, 1)] = 1
    return (first, b2b.pair_mix_layer(lay, f.stride, gate))


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
