"""Seeded synthetic BaseConv models for benchmarks and executor tests.

- :func:`impulse_model`: shaped like compiled models (docs/theory.md §4 constructions): every kernel is
  one impulse shared by all channels, biases are rectangle masks, ``W`` is zero or a signed
  permutation. On inputs in {−1, 1} every value stays in {−1, 1} (exact in every dtype).
- :func:`dense_model`: dense random kernels, projections and biases with dyadic entries scaled
  so that values stay of order one.
"""

from __future__ import annotations

import random
from fractions import Fraction

from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid

__all__ = ["impulse_model", "dense_model"]


def _sizes(where: str, inner_n: object, inner_d: object, layers: object) -> None:
    """Refuse sizes that are not positive ints (:class:`ShapeError`), a layer grid of more than
    ``MAX_CELLS`` cells or more than ``MAX_CELLS`` layers (:class:`~symverify.errors.LimitError`):
    ``layers = 10**40`` built layers without end."""
    from symverify.errors import ShapeError
    from symverify.ir import limits

    for name, v in (("inner_n", inner_n), ("inner_d", inner_d), ("layers", layers)):
        if type(v) is not int or v < 1:
            raise ShapeError(f"{where}: {name}: expected a positive int, found {type(v).__name__} {v!r:.40}")
    grid = max(inner_n * inner_d, inner_d * inner_d)  # type: ignore[operator]
    limits.check(grid, "MAX_CELLS", lambda: f"{where}({inner_n}, {inner_d}, {layers}): a layer's grid")
    limits.check(layers, "MAX_CELLS", lambda: f"{where}({inner_n}, {inner_d}, {layers}): layers (one grid each)")  # type: ignore[arg-type]


def _signs(rng: random.Random, n: int, d: int) -> Grid:
    """±1 everywhere: 1 with one rectangle of −1 spanning all columns (per position) or all rows (per channel)."""
    if rng.random() < 0.5:
        a = rng.randrange(n)
        return Grid(n, d, 1, ((a, rng.randrange(a + 1, n + 1), 0, d, -1),))
    a = rng.randrange(d)
    return Grid(n, d, 1, ((0, n, a, rng.randrange(a + 1, d + 1), -1),))


def impulse_model(inner_n: int, inner_d: int, layers: int, *, n: int | None = None, d: int | None = None,
                  seed: int = 0, cyclic_fraction: float = 0.25) -> Model:
    """A compiled-like model: one impulse per kernel (lag < N'/4, tap ±1 on every channel), ``W``
    zero (then ``b1`` is a ±1 sign mask) or a signed permutation (then ``b1 = 0``), and ``b2`` = 1 on
    the rows a causal shift leaves empty. On inputs in {−1, 1} every value stays in {−1, 1}."""
    _sizes("impulse_model", inner_n, inner_d, layers)
    rng = random.Random(seed)
    out = []
    for k in range(layers):
        s = rng.randrange(max(1, inner_n // 4))
        mode = Mode.CYCLIC if rng.random() < cyclic_fraction else Mode.CAUSAL
        h = Grid(inner_n, inner_d, 0, ((s, s + 1, 0, inner_d, rng.choice([1, -1])),))
        if k % 2:
            W, b1 = Grid.zeros(inner_d, inner_d), _signs(rng, inner_n, inner_d)
        else:
            perm = list(range(inner_d))
            rng.shuffle(perm)
            W = Grid.from_cells(inner_d, inner_d, {(perm[q], q): rng.choice([1, -1]) for q in range(inner_d)})
            b1 = Grid.zeros(inner_n, inner_d)
        vacated = () if mode is Mode.CYCLIC or s == 0 else ((0, s, 0, inner_d, 1),)
        out.append(Layer(W, b1, h, Grid(inner_n, inner_d, 0, vacated), mode))
    return Model(inner_n if n is None else n, inner_d if d is None else d, inner_n, inner_d, tuple(out), f"impulse_{inner_n}x{inner_d}_L{layers}")


def _dense(rng: random.Random, rows: int, cols: int, scale: int) -> Grid:
    cells = {(i, j): Fraction(rng.choice([-3, -2, -1, 1, 2, 3]), 4 * scale) for i in range(rows) for j in range(cols)}
    return Grid.from_cells(rows, cols, cells)


def _per_row(rng: random.Random, rows: int, cols: int, scale: int) -> Grid:
    return Grid(rows, cols, 0, tuple((i, i + 1, 0, cols, Fraction(rng.choice([-3, -2, -1, 1, 2, 3]), 4 * scale)) for i in range(rows)))


def dense_model(inner_n: int, inner_d: int, layers: int, *, n: int | None = None, d: int | None = None,
                seed: int = 0, cyclic_fraction: float = 0.5, structured: bool = False) -> Model:
    """Dense random weights: ``W`` entries ±k/(4d'), kernels ±k/(4N'), biases ±k/4 (k ≤ 3), dyadic
    when N', d' are powers of two. ``structured``: every lag's tap and every bias row is shared by
    all channels (one rectangle each), so large models build fast; kernels stay dense in lags."""
    _sizes("dense_model", inner_n, inner_d, layers)
    rng = random.Random(seed)
    out = []
    for _ in range(layers):
        mode = Mode.CYCLIC if rng.random() < cyclic_fraction else Mode.CAUSAL
        if structured:
            b1, h, b2 = _per_row(rng, inner_n, inner_d, 1), _per_row(rng, inner_n, inner_d, inner_n), _per_row(rng, inner_n, inner_d, 1)
        else:
            b1, h, b2 = _dense(rng, inner_n, inner_d, 1), _dense(rng, inner_n, inner_d, inner_n), _dense(rng, inner_n, inner_d, 1)
        out.append(Layer(_dense(rng, inner_d, inner_d, inner_d), b1, h, b2, mode))
    return Model(inner_n if n is None else n, inner_d if d is None else d, inner_n, inner_d, tuple(out), f"dense_{inner_n}x{inner_d}_L{layers}")
