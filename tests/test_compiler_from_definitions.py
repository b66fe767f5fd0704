"""The compiler gadgets built from the ∀-proved definitions are identical (grid for grid, as stored)
to the layers the compiler wrote out by hand before, which are reproduced here as the reference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.compiler import butterfly_to_baseconv as b2b
from symverify.compiler.circuit_to_baseconv import mul_layers
from symverify.compiler.layout import Layout, axis_of, grid
from symverify.errors import SymverifyError
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero, sym
from symverify.proofs.thm_h21_product_gadget import shapes


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
    tw, rows = lay.tw, lay.rows
    v2 = {p + k_rows * tw for p in v1}
    keep = {lay.cell(q): 1 for q in (*v1, *v3)} | {lay.cell(q, 1): 1 for q in v2}
    off = {lay.cell(q, 1 if q in v2 else 0): v for q, v in offset.items() if not is_zero(v)}
    m1 = _scale_layer(lay, pending, keep, off)
    tap = {((rows - lay.block - k_rows) % rows, c): 1 for c in range(tw)}
    m2 = Layer(grid(lay.width, lay.width, {(c, c): 1 for c in range(tw)}), Grid.zeros(rows, lay.width),
               grid(rows, lay.width, tap), grid(rows, lay.width, {lay.cell(q): 1 for q in v3}), Mode.CYCLIC)
    return m1, m2


def hand_factor_layers(lay: Layout, f: ButterflyFactor, pending: bool = False, support: set[int] | None = None,
                       live: set[tuple[int, int]] | None = None) -> tuple[Layer, ...]:
    axis = axis_of(f, lay.tw)
    first = _scale_layer(lay, pending, _coefficients(lay, f, axis, support))
    if axis == "sequence":
        return (first, _shift_sum_layer(lay, f.stride // lay.tw, live))
    if axis == "channel":
        gate: dict[tuple[int, int], Scalar] = {}
        for p, q in f.pairs():
            gate[lay.cell(p)] = 1
            gate[lay.cell(q, 1)] = 1
        if live is not None:
            gate = {c: v for c, v in gate.items() if c in live}
        return (first, _pair_mix_layer(lay, f.stride, gate))
    return (first,)


def test_mul_layers_identical_to_the_hand_written_stage() -> None:
    checked = 0
    for s in shapes(quick=False)[::2]:
        lay, v1, kr, v3 = s.build()
        offset = {p: (p % 5) - 2 for p in range(0, lay.size, 3)} | {1: sym("c1")}
        assert mul_layers(lay, v1, kr, v3, s.pending, offset) == hand_mul_layers(lay, v1, kr, v3, s.pending, offset), s
        checked += 1
    assert checked >= 100


def test_mul_layers_rejects_an_overlapping_placement() -> None:
    lay = Layout.choose(1, 1, 8)
    with pytest.raises(SymverifyError, match="violates"):
        mul_layers(lay, (0,), 1, (1,), False, {})  # v3 at 1 is v2 = v1 + 1 row


def _factor(size: int, stride: int, symbolic: bool) -> ButterflyFactor:
    pairs = size // 2
    if symbolic:
        return ButterflyFactor(size, stride, *[tuple(sym(f"{n}{m}") for m in range(pairs)) for n in ("a", "b", "c", "e")])
    return ButterflyFactor(size, stride, *[tuple((m * (n + 2)) % 5 - 2 for m in range(pairs)) for n in range(4)])


@pytest.mark.parametrize("d", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("pending", [False, True])
def test_factor_layers_identical_to_the_hand_written_gadget(d: int, pending: bool) -> None:
    """Every stride, symbolic and numeric blocks (with zeros), clean and pending states, ``d`` a power
    of two (from the definitions when clean) or not (written out)."""
    used = 0
    for size in (4 * d, 16 * d):
        lay = Layout.choose(1, d, size)
        stride = 1
        while stride < lay.size:
            for symbolic in (True, False):
                f = _factor(lay.size, stride, symbolic)
                assert b2b.factor_layers(lay, f, pending) == hand_factor_layers(lay, f, pending), (d, size, stride, symbolic)
                if axis_of(f, lay.tw) != "diagonal":  # built from the definition
                    used += 1
            stride *= 2
    assert used


def test_single_row_track_channel_factor() -> None:
    """``N_k = tw`` (one track row, ``R = 1``): inside ``factor_channel``'s range ``r ≥ 0``."""
    lay = Layout.choose(1, 4, 4)
    if lay.track_rows == 1:
        f = _factor(lay.size, 1, True)
        assert b2b.factor_layers(lay, f) == hand_factor_layers(lay, f)


# ---- gather / scatter (d not a power of two) ------------------------------------------------------


def hand_gather_layers(lay: Layout, cells: set[tuple[int, int]] | None = None) -> tuple[Layer, Layer]:
    n, tw, d = lay.n, lay.tw, lay.d
    src = cells if cells is not None else {(i, j) for i in range(n) for j in range(d)}
    taps = {(0 if j < tw else n, j): 1 for j in range(d)}
    moved = {(i if j < tw else n + i, j) for i, j in src}
    W = {(j, j if j < tw else j - tw): 1 for j in range(d)}
    track = {lay.cell(lay.input_position(i * d + j)) for i, j in src}
    return b2b.conv_layer(lay, taps, dict.fromkeys(moved, 1)), b2b.mix_layer(lay, W, dict.fromkeys(track, 1))


def hand_scatter_layers(lay: Layout, outputs: int) -> tuple[Layer, Layer]:
    n, tw, d, rows = lay.n, lay.tw, lay.d, lay.rows
    cells = [divmod(k, d) for k in range(outputs)]
    W = {(j if j < tw else j - tw, j): 1 for j in range(d)}
    gate = {(i if j < tw else n + i, j): 1 for i, j in cells}
    taps = {((0 if j < tw else rows - n), j): 1 for j in range(d)}
    return b2b.mix_layer(lay, W, gate), b2b.conv_layer(lay, taps, dict.fromkeys(cells, 1))


@pytest.mark.parametrize("d", [1, 2, 3, 5, 6, 7, 12])
def test_gather_scatter_identical_to_the_hand_written_layers(d: int) -> None:
    """Every occupied-cell set tried (all, a prefix, a sparse one, none) and every output count."""
    checked = 0
    for n in (1, 2, 3, 5):
        lay = Layout.choose(n, d, 2 * n * d)
        every = {(i, j) for i in range(n) for j in range(d)}
        sparse = {(i, j) for i, j in every if (3 * i + j) % 4 != 1}
        for cells in (None, every, sparse, set(), {(n - 1, d - 1)}):
            assert b2b.gather_layers(lay, cells) == hand_gather_layers(lay, cells), (n, d, cells)
            checked += 1
        for outputs in {0, 1, d, n * d - 1, n * d}:
            if outputs >= 0:
                assert b2b.scatter_layers(lay, outputs) == hand_scatter_layers(lay, outputs), (n, d, outputs)
    assert checked == 20


def test_scatter_layers_reject_more_outputs_than_cells() -> None:
    lay = Layout.choose(2, 3, 16)
    with pytest.raises(SymverifyError, match="outputs ≤ n·d = 6"):
        b2b.scatter_layers(lay, 7)
    with pytest.raises(SymverifyError, match="found -1"):
        b2b.scatter_layers(lay, -1)


def test_gather_layers_reject_an_occupied_cell_below_the_input_rows() -> None:
    lay = Layout.choose(2, 3, 16)
    with pytest.raises(SymverifyError, match="violates"):
        b2b.gather_layers(lay, {(2, 0)})


@pytest.mark.parametrize("d", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("pending", [False, True])
def test_pruned_factor_layers_identical_to_the_hand_written_gadget(d: int, pending: bool) -> None:
    """Pruned gadgets (``support``, ``live``): random supports (empty, one position, sparse, all) and
    live sets, every stride, clean and pending, ``d`` a power of two or not."""
    import random

    rng = random.Random(d * 2 + pending)
    checked = 0
    for size in (4 * d, 16 * d):
        lay = Layout.choose(1, d, size)
        stride = 1
        while stride < lay.size:
            f = _factor(lay.size, stride, rng.random() < 0.5)
            axis = axis_of(f, lay.tw)
            written = {lay.cell(p) for p in range(lay.size)}
            if axis == "channel":
                written = {lay.cell(p) for p, _ in f.pairs()} | {lay.cell(q, 1) for _, q in f.pairs()}
            for sup in (set(), {rng.randrange(lay.size)}, {p for p in range(lay.size) if rng.random() < 0.4}, set(range(lay.size))):
                for live in (None, {c for c in written if rng.random() < 0.5}):
                    assert b2b.factor_layers(lay, f, pending, sup, live) == hand_factor_layers(lay, f, pending, sup, live), \
                        (d, size, stride, sup, live)
                    checked += 1
            stride *= 2
    assert checked >= 40


def _diagonal_factor(size: int, stride: int, symbolic: bool) -> ButterflyFactor:
    pairs = size // 2
    zero = tuple(0 for _ in range(pairs))
    if symbolic:
        return ButterflyFactor(size, stride, tuple(sym(f"a{m}") for m in range(pairs)), zero, zero, tuple(sym(f"e{m}") for m in range(pairs)))
    return ButterflyFactor(size, stride, tuple(m % 3 - 1 for m in range(pairs)), zero, zero, tuple(m % 4 for m in range(pairs)))


@pytest.mark.parametrize("d", [1, 2, 3, 4, 6])
def test_diagonal_factor_identical_to_the_hand_written_layer(d: int) -> None:
    """The one-layer diagonal factor (``block_scale``): every stride, clean and pending, with and without a
    support, numeric (with zeros) and symbolic diagonals."""
    checked = 0
    for size in (4 * d, 16 * d):
        lay = Layout.choose(1, d, size)
        stride = 1
        while stride < lay.size:
            for symbolic in (True, False):
                f = _diagonal_factor(lay.size, stride, symbolic)
                assert axis_of(f, lay.tw) == "diagonal"
                for pending in (False, True):
                    for sup in (None, set(), set(range(0, lay.size, 3))):
                        assert b2b.factor_layers(lay, f, pending, sup) == hand_factor_layers(lay, f, pending, sup), (d, size, stride)
                        checked += 1
            stride *= 2
    assert checked >= 24


def hand_sum_layer(lay: Layout, pending: bool, offset: Mapping[int, Scalar], live: set[tuple[int, int]] | None = None) -> Layer:
    off = {lay.cell(p): v for p, v in offset.items() if not is_zero(v)}
    track = {lay.cell(p) for p in range(lay.size)}
    ones = dict.fromkeys(live if live is not None else track | set(off), 1)
    return _scale_layer(lay, pending, ones, off)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
def test_sum_layer_identical_to_the_hand_written_layer(d: int) -> None:
    import random

    rng = random.Random(d)
    for size in (2 * d, 8 * d, 32 * d):
        lay = Layout.choose(1, d, size)
        track = [lay.cell(p) for p in range(lay.size)]
        for pending in (False, True):
            for offset in ({}, {0: 3, lay.size - 1: sym("c")}, {p: rng.randrange(-2, 3) for p in range(lay.size)}):
                for live in (None, set(), {c for c in track if rng.random() < 0.5}):
                    assert b2b.sum_layer(lay, pending, offset, live) == hand_sum_layer(lay, pending, offset, live), (d, size)


def test_sum_layer_rejects_an_offset_off_the_track() -> None:
    lay = Layout.choose(1, 2, 8)
    with pytest.raises(SymverifyError, match=r"offset positions in \[0, 8\)"):
        b2b.sum_layer(lay, False, {8: 1})


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 9), st.integers(0, 2**30))
def test_gather_scatter_random_cell_sets(n: int, d: int, seed: int) -> None:
    import random

    rng = random.Random(seed)
    lay = Layout.choose(n, d, 2 * n * d)
    cells = {(i, j) for i in range(n) for j in range(d) if rng.random() < 0.5}
    assert b2b.gather_layers(lay, cells) == hand_gather_layers(lay, cells)
    outputs = rng.randrange(n * d + 1)
    assert b2b.scatter_layers(lay, outputs) == hand_scatter_layers(lay, outputs)
