"""Exact evaluation mod primes ``p ≥ 2^61``, batched over points (numpy arrays of Python ints).

Point ``t`` of a batch is reduced mod its own prime ``primes[t]`` with its own parameter values.
Two paths, which the tests check against each other and against :class:`ModRing`:

* :class:`BatchModRing`: the generic interpreter with every value a ``(B,)`` array (circuits,
  kaleidoscopes, any model);
* :func:`model_mod_batch`: the tensor form of docs/theory.md §1.1 for BaseConv models, a backend of the
  one layer loop (:mod:`symverify.semantics.layer`) on ``(B, N', d')`` arrays: the projection
  ``u·W`` as a matmul (or a few column updates when ``W`` is sparse), the convolution as one
  shifted slice update per kernel lag (impulse kernels cost ``O(N'·d')``),
  then ``(proj mod p) ⊙ (conv mod p) mod p``.

Values are Python ints in object arrays: exact at any prime size, with the Python-level loop
overhead paid once per array rather than once per entry.

:func:`torch_first_mismatch` is the other engine of the randomized method: both sides at a batch
of points mod one prime ``p < 2^31`` in torch int64 (:func:`symverify.executors.modular_eval`, exact;
its overflow argument is in :mod:`symverify.executors.torch_modular`); circuits run as straight-line
code in numpy int64 lanes (:func:`symverify.semantics.straightline.eval_mod_lanes`).

Every entry point takes ``check`` (:mod:`symverify.deadline`, e.g. ``Options.checker()``): it is
polled before every layer and every array operation inside a layer (tensor path), every few
hundred operations (generic path) or between chunks and a model's layers (torch), and raises
:class:`~symverify.deadline.DeadlineExceededError` once the deadline has passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from symverify.deadline import Check
from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar
from symverify.provers.sides import CircuitSide, ModelSide, Side, TorchSide
from symverify.semantics.layer import Shape, run_model
from symverify.semantics.rings import ModRing
from symverify.semantics.straightline import eval_mod_lanes, program

__all__ = ["BatchModRing", "model_mod_batch", "eval_mod_batch", "torch_first_mismatch", "TORCH_CHUNK"]

TORCH_CHUNK = 64  # points per modular_eval call (bounds the int64 working set)


class BatchModRing:
    """Values are ``(B,)`` object arrays; entry ``t`` lives mod ``primes[t]`` with ``params[t]``."""

    falsy_is_zero: ClassVar[bool] = False

    def __init__(self, primes: Sequence[int], params: Sequence[Mapping[str, int]]) -> None:
        import numpy as np

        self._np = np
        self.rings = [ModRing(p, dict(ps)) for p, ps in zip(primes, params)]
        self.p = np.array(list(primes), dtype=object)
        self.zero = np.zeros(len(primes), dtype=object)
        self._cache: dict[Any, Any] = {}
        self._grids: dict[int, tuple[Grid, Any]] = {}

    def coerce(self, x: Scalar) -> Any:
        key = (type(x), x)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._np.array([r.coerce(x) for r in self.rings], dtype=object)
        return hit

    def reduce(self, x: Any) -> Any:
        return x % self.p

    def constant_array(self, grid: Grid) -> Any:
        """``(B, rows, cols)`` array of the grid's entries mod each point's prime."""
        np = self._np
        rows = grid.to_rows()
        out = np.empty((len(self.rings), grid.rows, grid.cols), dtype=object)
        for t, r in enumerate(self.rings):
            out[t] = [[r.coerce(v) for v in row] for row in rows] if rows else out[t]
        return out


def _grid_arr(grid: Grid, ring: BatchModRing) -> Any:
    """The grid as ``(rows, cols)`` (integer entries, one prime) or ``(B, rows, cols)``; cached per grid,
    since compiled models share grids between layers."""
    hit = ring._grids.get(id(grid))
    if hit is not None and hit[0] is grid:
        return hit[1]
    np = ring._np
    if len({int(q) for q in ring.p}) == 1 and all(type(v) is int for v in grid.values()):
        p = int(ring.p[0])
        rows = [[cast(int, v) % p for v in row] for row in grid.to_rows()]
        arr = np.array(rows, dtype=object).reshape(grid.rows, grid.cols)
    else:
        arr = ring.constant_array(grid)
    ring._grids[id(grid)] = (grid, arr)
    return arr


@dataclass(frozen=True)
class _BatchArithmetic:
    """The layer of :mod:`symverify.semantics.layer` on ``(B, N', d')`` object arrays, point ``t``
    mod ``primes[t]`` (docs/theory.md §1.1 in tensor form): the projection as a matmul or a few column
    updates, the convolution as one shifted slice update per lag, then
    ``(proj mod p) ⊙ (conv mod p) mod p``. ``check`` runs before every array operation."""

    ring: BatchModRing
    pcol: Any  # the primes as a (B, 1, 1) array
    check: Check | None = None

    def _tick(self) -> None:
        if self.check is not None:
            self.check()

    def _zeros(self, x: Any) -> Any:
        return self.ring._np.zeros(x.shape, dtype=object)

    def prepare(self, layer: Layer) -> Layer:
        return layer  # grids are converted on first use and cached per grid (:func:`_grid_arr`)

    def convolve(self, layer: Layer, state: Any) -> Any:
        """``h ⊛ x + b2``, one shifted slice update per lag (causal: rows move down by the lag;
        cyclic: they wrap around)."""
        taps, b2 = layer.h.nonzero(), not layer.b2.is_zero()
        if not taps and not b2:
            return None
        conv = self._zeros(state)
        if taps:
            H = _grid_arr(layer.h, self.ring)
            nn = state.shape[1]
            cyclic = layer.mode is Mode.CYCLIC
            for k in sorted({k for k, _ in taps}):
                self._tick()
                hk = H[k] if H.ndim == 2 else H[:, k : k + 1, :]
                conv[:, k:, :] += state[:, : nn - k, :] * hk
                if cyclic and k:
                    conv[:, :k, :] += state[:, nn - k :, :] * hk
        return conv + _grid_arr(layer.b2, self.ring) if b2 else conv

    def project(self, layer: Layer, state: Any, conv: Any) -> Any:
        """``x·W + b1``: a matmul, or one column update per entry when ``W`` has at most 2·d'."""
        nzW, b1 = layer.W.nonzero(), not layer.b1.is_zero()
        if not nzW and not b1:
            return None
        if len(nzW) > 2 * state.shape[2]:
            self._tick()
            proj = self.ring._np.matmul(state, _grid_arr(layer.W, self.ring))
        else:
            proj = self._zeros(state)
            if nzW:
                W = _grid_arr(layer.W, self.ring)
                for (a, b) in nzW:
                    self._tick()
                    w = W[a, b] if W.ndim == 2 else W[:, a, b].reshape(-1, 1)
                    proj[:, :, b] += state[:, :, a] * w
        return proj + _grid_arr(layer.b1, self.ring) if b1 else proj

    def combine(self, layer: Layer, state: Any, proj: Any, conv: Any) -> Any:
        """``(proj mod p) ⊙ (conv mod p) mod p``; zeros when a branch is identically zero."""
        if proj is None or conv is None:
            return self._zeros(state)
        self._tick()
        p = self.pcol
        return (proj % p) * (conv % p) % p

    def embed(self, inputs: Sequence[Sequence[Sequence[int]]], shape: Shape) -> Any:
        np = self.ring._np
        B = len(inputs)
        state = np.zeros((B, shape.inner_n, shape.inner_d), dtype=object)
        state[:, : shape.n, : shape.d] = np.array(inputs, dtype=object).reshape(B, shape.n, shape.d)
        return state

    def crop(self, state: Any, shape: Shape) -> Any:
        return state[:, : shape.n, : shape.d]

    def retire(self, old: Any, new: Any) -> None:
        return None


def _no_check() -> None:
    return None


def model_mod_batch(model: Model, inputs: Sequence[Sequence[Sequence[int]]], ring: BatchModRing,
                    check: Check | None = None) -> list[list[list[int]]]:
    """The model's ``N×d`` outputs at each point of the batch (tensor form; see the module doc)."""
    arith = _BatchArithmetic(ring, ring.p.reshape(len(inputs), 1, 1), check)
    out = run_model(model, model.layers, inputs, arith, check)
    return [[[int(out[t, i, j]) for j in range(model.d)] for i in range(model.n)] for t in range(len(inputs))]


def eval_mod_batch(side: Side, inputs: Sequence[Sequence[Sequence[int]]], ring: BatchModRing, *, tensor: bool = True,
                   check: Check | None = None) -> list[list[list[int]]]:
    """``side`` at every point of the batch, each reduced mod its prime.

    ``check`` (e.g. ``Options.checker()``) is polled throughout and raises
    :class:`~symverify.deadline.DeadlineExceededError` once the deadline has passed.
    """
    if isinstance(side, ModelSide) and tensor:
        return model_mod_batch(side.obj, inputs, ring, check)
    np = ring._np
    B = len(inputs)
    u = [[np.array([inputs[t][i][j] for t in range(B)], dtype=object) for j in range(side.d)] for i in range(side.n)]
    out = side.evaluate(u, ring, check)
    res: list[list[list[int]]] = [[[0] * side.d for _ in range(side.n)] for _ in range(B)]
    for i, row in enumerate(out):
        for j, v in enumerate(row):
            arr = np.broadcast_to(np.asarray(v, dtype=object) % ring.p, (B,))
            for t in range(B):
                res[t][i][j] = int(arr[t])
    return res


def _side_mod(torch: Any, side: TorchSide, block: Any, x: Any, p: int, params: Mapping[str, int], device: Any,
              check: Check | None) -> Any:
    """One side at the points ``block`` (numpy ``(B, n, d)``, ``x`` the same on ``device``) mod ``p``:
    a circuit through its straight-line code in lanes (:func:`~symverify.semantics.straightline.eval_mod_lanes`,
    numpy int64, the same residues), a model through :func:`symverify.executors.modular_eval`."""
    if isinstance(side, CircuitSide):
        import numpy as np

        c = side.obj
        prog = program(c)
        B = block.shape[0]
        ring = ModRing(p, dict(params))
        coeffs = np.array([ring.coerce(v) for v in prog.scalars], dtype=np.int64).reshape(-1, 1).repeat(B, axis=1)
        vals = eval_mod_lanes(prog, block.reshape(B, -1).T, np.full(B, p, dtype=np.int64), coeffs, check)
        out = np.zeros((c.num_inputs, B), dtype=np.int64)
        if c.outputs:
            out[: len(c.outputs)] = vals[list(c.outputs)]
        return torch.from_numpy(np.ascontiguousarray(out.T.reshape(B, c.n, c.d))).to(device or "cpu")
    from symverify.executors import modular_eval

    return modular_eval(side.obj, x, p, params=params, check=check)


def torch_first_mismatch(lhs: TorchSide, rhs: TorchSide, points: Any, p: int, params: Mapping[str, int], device: Any = None,
                         chunk: int = TORCH_CHUNK, check: Check | None = None) -> int | None:
    """The index of the first point where the sides differ mod ``p``, or None where they agree at every point.

    ``points`` is a numpy int64 array ``(B, n, d)`` of residues in ``[0, p)``, ``p < 2^31`` prime;
    ``params`` gives every symbolic weight a residue (shared by the batch). Both sides must be
    models or circuits (the torch executor has no kaleidoscope form). Runs in chunks of ``chunk``
    points on ``device`` (default CPU); ``check`` is polled before every evaluation of a chunk
    and, for a model, before each of its layers (a circuit's evaluation cannot be interrupted).
    """
    from symverify.executors._torch import require_torch

    torch = require_torch()
    tick = check if check is not None else _no_check
    for start in range(0, len(points), chunk):
        tick()
        block = points[start : start + chunk]
        x = torch.from_numpy(block).to(device or "cpu")
        a = _side_mod(torch, lhs, block, x, p, params, device, check)
        tick()
        b = _side_mod(torch, rhs, block, x, p, params, device, check)
        hits = (a != b).flatten(1).any(dim=1).nonzero()
        if hits.numel():
            return start + int(hits[0, 0])
    return None
