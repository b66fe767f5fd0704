"""The randomized method's engines: exact evaluation of both sides mod a prime at a trial's points.

An :class:`Engine` reads a trial's points from its challenge stream and evaluates both sides mod
``p`` there; the one trial loop (:func:`symverify.kernel.provers.randomized.run_randomized`) draws the
primes and decides. Two engines implement it:

* :class:`PythonEngine`: Python ints mod any prime (``p ≥ 2^61`` in the trials), one point per
  trial: circuits as straight-line code (:func:`symverify.kernel.semantics.straightline.eval_mod`), other
  sides through :func:`eval_mod_batch`: the generic interpreter over :class:`BatchModRing` (every
  value a ``(B,)`` object array, point ``t`` mod its own prime ``primes[t]`` with its own
  parameters), or for BaseConv models :func:`model_mod_batch`, the tensor form of docs/theory.md
  §1.1, a backend of the one layer loop (:mod:`symverify.kernel.semantics.layer`) on ``(B, N', d')``
  arrays: ``u·W`` as a matmul (or a few column updates when ``W`` is sparse), the convolution as
  one shifted slice update per kernel lag, then ``(proj mod p) ⊙ (conv mod p) mod p``;
* :class:`TorchEngine`: a batch of points mod one prime ``p < 2^31`` through
  :func:`symverify.executors.modular_eval` (:mod:`symverify.kernel.engines.torch_modular`: models in
  torch int64, circuits as straight-line code in numpy int64 lanes,
  :func:`symverify.kernel.semantics.straightline.eval_mod_lanes`).

The tests check every path against the others and against :class:`ModRing`. Every entry point
takes ``check`` (:mod:`symverify.deadline`, e.g. ``Options.checker()``): it is polled before
every layer and every array operation inside a layer (tensor path), every few hundred operations
(generic path) or between chunks and a model's layers (torch), and raises
:class:`~symverify.deadline.DeadlineExceededError` once the deadline has passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast, runtime_checkable

from symverify.deadline import Check
from symverify.errors import UsageError
from symverify.ir import limits
from symverify.kernel.ir.analysis import params_of
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.ir.scalar import Scalar
from symverify.kernel.provers.challenge import Stream
from symverify.kernel.provers.sides import CircuitSide, ModelSide, Side
from symverify.kernel.semantics.layer import Shape, run_model
from symverify.kernel.semantics.rings import ModRing
from symverify.kernel.semantics.straightline import eval_mod, program

__all__ = ["BatchModRing", "model_mod_batch", "eval_mod_batch", "Engine", "PythonEngine", "TorchEngine", "TORCH_CHUNK"]

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
        self._grids: IdentityMemo[Any] = IdentityMemo(1 << 16)

    def coerce(self, x: Scalar) -> Any:
        key = (type(x), x)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._np.array([r.coerce(x) for r in self.rings], dtype=object)
        return hit

    def reduce(self, x: Any) -> Any:
        return x % self.p

    def grid(self, grid: Grid) -> Any:
        """The grid's entries mod each point's prime: ``(rows, cols)`` when they are integers and the
        batch has one prime, else ``(B, rows, cols)``; cached per grid (compiled models share grids)."""
        return self._grids(grid, lambda: self._grid(grid))

    def _grid(self, grid: Grid) -> Any:
        np = self._np
        if len({int(q) for q in self.p}) == 1 and all(type(v) is int for v in grid.values()):
            p = int(self.p[0])
            if grid.fill == 0 and grid.rows * grid.cols <= limits.MAX_CELLS:
                # zeros, then the nonzero cells: the same array as the dense conversion (0 mod p is 0)
                out = np.zeros((grid.rows, grid.cols), dtype=object)
                for (i, j), v in grid.nonzero().items():
                    out[i, j] = cast(int, v) % p
                return out
            rows = grid.to_rows()
            return np.array([[cast(int, v) % p for v in row] for row in rows], dtype=object).reshape(grid.rows, grid.cols)
        if grid.fill == 0 and grid.rows * grid.cols <= limits.MAX_CELLS:
            # zeros (0 is 0 mod every prime), then each nonzero cell's values at every point at once
            # (:meth:`coerce`, per distinct value): the same array as the dense conversion
            out = np.zeros((len(self.rings), grid.rows, grid.cols), dtype=object)
            for (i, j), v in grid.nonzero().items():
                out[:, i, j] = self.coerce(v)
            return out
        rows = grid.to_rows()
        out = np.empty((len(self.rings), grid.rows, grid.cols), dtype=object)
        for t, r in enumerate(self.rings):
            out[t] = [[r.coerce(v) for v in row] for row in rows] if rows else out[t]
        return out


@dataclass(frozen=True)
class _BatchArithmetic:
    """The layer of :mod:`symverify.kernel.semantics.layer` on ``(B, N', d')`` object arrays, point ``t``
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
        return layer  # grids are converted on first use and cached per grid (:meth:`BatchModRing.grid`)

    def convolve(self, layer: Layer, state: Any) -> Any:
        """``h ⊛ x + b2``, one shifted slice update per lag (causal: rows move down by the lag;
        cyclic: they wrap around)."""
        taps, b2 = layer.h.nonzero(), not layer.b2.is_zero()
        if not taps and not b2:
            return None
        conv = self._zeros(state)
        if taps:
            H = self.ring.grid(layer.h)
            nn = state.shape[1]
            cyclic = layer.mode is Mode.CYCLIC
            for k in sorted({k for k, _ in taps}):
                self._tick()
                hk = H[k] if H.ndim == 2 else H[:, k : k + 1, :]
                conv[:, k:, :] += state[:, : nn - k, :] * hk
                if cyclic and k:
                    conv[:, :k, :] += state[:, nn - k :, :] * hk
        return conv + self.ring.grid(layer.b2) if b2 else conv

    def project(self, layer: Layer, state: Any, conv: Any) -> Any:
        """``x·W + b1``: a matmul, or one column update per nonzero ``W[a, b]`` (its values read
        alone, never a dense ``W``) when ``W`` has at most 2·d' or a dense ``d'×d'`` would exceed
        ``MAX_CELLS`` (the state's ``N'·d'`` may be within it while ``d'²`` is not)."""
        nzW, b1 = layer.W.nonzero(), not layer.b1.is_zero()
        if not nzW and not b1:
            return None
        if len(nzW) > 2 * state.shape[2] and layer.W.rows * layer.W.cols <= limits.MAX_CELLS:
            self._tick()
            proj = self.ring._np.matmul(state, self.ring.grid(layer.W))
        else:
            proj = self._zeros(state)
            for (a, b), v in nzW.items():
                self._tick()
                proj[:, :, b] += state[:, :, a] * self.ring.coerce(v).reshape(-1, 1)
        return proj + self.ring.grid(layer.b1) if b1 else proj

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


@runtime_checkable
class Engine(Protocol):
    """An engine of the randomized method's one trial loop (:func:`~symverify.kernel.provers.randomized.run_randomized`):
    how a trial's points are read from its challenge stream, and both sides evaluated mod a prime.

    ``name`` is the ``backend=`` value and the engine's label in the challenge streams;
    ``backend`` the report's text; every prime it evaluates under is below ``prime_limit`` (None:
    any prime); ``batched`` engines evaluate several points per trial (the report counts them).
    """

    name: ClassVar[str]
    backend: ClassVar[str]
    prime_limit: ClassVar[int | None]
    batched: ClassVar[bool]

    def points(self, stream: Stream, p: int, side: Side, names: Sequence[str], batch: int) -> tuple[Any, dict[str, int]]:
        """``batch`` uniform points of ``F_p^{n×d}`` and one uniform residue per parameter name."""
        ...

    def evaluate(self, side: Side, points: Any, p: int, params: Mapping[str, int], check: Check | None = None) -> Any:
        """``side`` at every point mod ``p``: ``(B, n, d)`` residues."""
        ...

    def first_mismatch(self, lhs: Side, rhs: Side, points: Any, p: int, params: Mapping[str, int],
                       check: Check | None = None) -> tuple[int, list[int]] | None:
        """``(point, [row, column])`` of the first entry where the sides differ mod ``p``; None: they agree at every point."""
        ...

    def evidence(self) -> dict[str, Any]:
        """The engine's own report fields."""
        ...


@dataclass(frozen=True)
class PythonEngine:
    """Python ints mod any prime, one point per trial: circuits as straight-line code
    (:func:`~symverify.kernel.semantics.straightline.eval_mod`), models and kaleidoscopes through
    :func:`eval_mod_batch` (the same residues; the tests compare them)."""

    name: ClassVar[str] = "python"
    backend: ClassVar[str] = "python ints mod p ≥ 2^61"
    prime_limit: ClassVar[int | None] = None
    batched: ClassVar[bool] = False

    def points(self, stream: Stream, p: int, side: Side, names: Sequence[str], batch: int = 1) -> tuple[Any, dict[str, int]]:
        """Every input entry of each point, then every parameter in name order (lists of Python ints)."""
        n, d = side.n, side.d
        flat = stream.residues(p, batch * n * d + len(names))
        return [[flat[(t * n + i) * d : (t * n + i + 1) * d] for i in range(n)] for t in range(batch)], dict(zip(names, flat[batch * n * d :]))

    def evaluate(self, side: Side, points: Any, p: int, params: Mapping[str, int],
                 check: Check | None = None) -> list[list[list[int]]]:
        if not isinstance(side, CircuitSide):
            return eval_mod_batch(side, points, BatchModRing([p] * len(points), [params] * len(points)), check=check)
        c, prog, ring = side.obj, program(side.obj), ModRing(p, dict(params))
        coeffs = [ring.coerce(x) for x in prog.scalars]
        out = []
        for u in points:
            vals = eval_mod(prog, [x for row in u for x in row], p, coeffs, check)
            flat = [vals[o] for o in c.outputs] + [0] * (c.num_inputs - len(c.outputs))
            out.append([flat[i * c.d : (i + 1) * c.d] for i in range(c.n)])
        return out

    def first_mismatch(self, lhs: Side, rhs: Side, points: Any, p: int, params: Mapping[str, int],
                       check: Check | None = None) -> tuple[int, list[int]] | None:
        for t, u in enumerate(points):
            a, b = self.evaluate(lhs, [u], p, params, check)[0], self.evaluate(rhs, [u], p, params, check)[0]
            for i, (ra, rb) in enumerate(zip(a, b)):
                for j, (x, y) in enumerate(zip(ra, rb)):
                    if x != y:
                        return t, [i, j]
        return None

    def evidence(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class TorchEngine:
    """Residues mod primes below ``2^31``, a batch of points per trial (in chunks of ``chunk`` points
    on ``device``, default CPU), through :func:`symverify.executors.modular_eval`: models in torch
    int64, circuits as straight-line code in numpy int64 lanes (both exact; the argument is in
    :mod:`symverify.kernel.engines.torch_modular`). Both sides must be models or circuits (the executor
    has no kaleidoscope form)."""

    device: Any = None
    chunk: int = TORCH_CHUNK
    name: ClassVar[str] = "torch"
    backend: ClassVar[str] = "torch int64 mod 31-bit primes"
    prime_limit: ClassVar[int | None] = 1 << 31
    batched: ClassVar[bool] = True

    def points(self, stream: Stream, p: int, side: Side, names: Sequence[str], batch: int) -> tuple[Any, dict[str, int]]:
        """The parameters first (one residue each, shared by the batch), then a numpy int64 ``(B, n, d)`` array."""
        params = dict(zip(names, stream.residues(p, len(names))))
        return stream.array(p, batch * side.n * side.d).reshape(batch, side.n, side.d), params

    def evaluate(self, side: Side, points: Any, p: int, params: Mapping[str, int], check: Check | None = None) -> Any:
        """A torch int64 tensor ``(B, n, d)`` on ``device``."""
        from symverify.kernel.engines._torch import require_torch
        from symverify.kernel.engines.modular import modular_eval

        if not isinstance(side, (CircuitSide, ModelSide)):
            raise UsageError(f"the torch engine evaluates models and circuits, found a {side.label()}")
        x = require_torch().from_numpy(points).to(self.device or "cpu")
        own = params_of(side.obj)  # the shared parameters this side has (modular_eval refuses others)
        return modular_eval(side.obj, x, p, params={k: v for k, v in params.items() if k in own}, check=check)

    def first_mismatch(self, lhs: Side, rhs: Side, points: Any, p: int, params: Mapping[str, int],
                       check: Check | None = None) -> tuple[int, list[int]] | None:
        """Chunk by chunk; ``check`` is polled before every evaluation of a chunk and inside it
        before each layer of a model or level of a circuit."""
        for start in range(0, len(points), self.chunk):
            block = points[start : start + self.chunk]
            if check is not None:
                check()
            a = self.evaluate(lhs, block, p, params, check)
            if check is not None:
                check()
            diff = (a != self.evaluate(rhs, block, p, params, check)).flatten(1)
            hits = diff.any(dim=1).nonzero()
            if hits.numel():
                t = int(hits[0, 0])
                cell = int(diff[t].nonzero()[0, 0])
                return start + t, [cell // lhs.d, cell % lhs.d]
        return None

    def evidence(self) -> dict[str, Any]:
        return {"device": str(self.device or "cpu")}
