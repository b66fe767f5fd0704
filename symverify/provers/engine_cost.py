"""The randomized method's engine choice: the estimated time of each engine, from a cost model.

Both engines run ``k`` trials of both sides (docs/theory.md §5); they differ in the prime size
(so in ``k``), in the points per trial ``B`` and in what one evaluation costs:

* *python* (:func:`~symverify.kernel.provers.randomized.plan_primes`: primes ``≥ 2^61`` of the size
  whose ``k`` trials cost least, ``B = 1``):
  a circuit side runs its straight-line code, ``gates · PY_GATE`` seconds; a model side runs the
  layer loop on numpy object arrays, ``L · PY_LAYER + cells · PY_CELL + macs · PY_MAC``;
* *torch* (:func:`~symverify.kernel.provers.randomized.engine_plan`: primes in ``[2^30, 2^31)``,
  ``B`` points): a circuit side runs in numpy int64 lanes, ``gates · (TORCH_GATE + B·TORCH_LANE)``;
  a model side plans its weights for the trial's prime and runs the torch executor,
  ``L · TORCH_LAYER + B · (cells · TORCH_CELL + macs · TORCH_MAC)``;

where ``(L, cells, macs)`` are :meth:`ModelSide.terms`: the layers, ``L·N'·d'`` and the nonzero
entries of every ``W`` and ``h`` times ``N'`` (the multiply-adds of one point). The constants are seconds per unit measured on one CPU thread by
:func:`calibrate` (``benchmarks/verify_methods.py`` prints them next to this table and checks that
the engine chosen is the faster one measured); they are fixed here, so the choice, and with it
every report, is the same on every run and machine. The choice only affects speed: both engines
state a certified failure bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from symverify.kernel.ir.baseconv import Model
from symverify.kernel.provers.sides import CircuitSide, ModelSide, Side

__all__ = ["TORCH_MARGIN", "Estimate", "calibrate", "COSTS"]  # estimate, side_seconds: internal (take prover sides)

COSTS: dict[str, float] = {
    "PY_GATE": 1.2e-7,
    "PY_LAYER": 3.2e-5,
    "PY_CELL": 2.8e-7,
    "PY_MAC": 3.3e-8,
    "TORCH_GATE": 7.2e-8,
    "TORCH_LANE": 3.2e-9,
    "TORCH_LAYER": 1.1e-4,
    "TORCH_CELL": 1.0e-9,
    "TORCH_MAC": 7.4e-9,
}
"""Seconds per unit of each term of the cost model (see the module docstring)."""

TORCH_MARGIN = 2.0
"""How many times cheaper the torch engine must be estimated to be chosen."""


@dataclass(frozen=True)
class Estimate:
    """The estimated seconds of each engine for a pair (``None``: the engine cannot run it)."""

    python: float | None
    torch: float | None

    def cheaper(self) -> str:
        """The engine to run: torch only when estimated :data:`TORCH_MARGIN` times cheaper (its
        times vary more with the machine's load and the thread pool than the python engine's)."""
        if self.torch is None:
            return "python"
        if self.python is None:
            return "torch"
        return "torch" if self.torch * TORCH_MARGIN < self.python else "python"

    def text(self) -> str:
        def s(x: float | None) -> str:
            return "-" if x is None else f"{x:.2g} s"

        return f"estimated python {s(self.python)}, torch {s(self.torch)}"


def side_seconds(side: Side, engine: str, batch: int = 1, costs: dict[str, float] = COSTS) -> float:
    """One evaluation of ``side`` by ``engine`` at ``batch`` points (torch) or one point (python)."""
    if isinstance(side, CircuitSide):
        gates = len(side.obj.gates)
        if engine == "python":
            return gates * costs["PY_GATE"]
        return gates * (costs["TORCH_GATE"] + batch * costs["TORCH_LANE"])
    if not isinstance(side, ModelSide):
        return float(side.cost()) * costs["PY_CELL"]  # kaleidoscopes run on python ints only
    layers, cells, macs = side.terms()
    if engine == "python":
        return layers * costs["PY_LAYER"] + cells * costs["PY_CELL"] + macs * costs["PY_MAC"]
    return layers * costs["TORCH_LAYER"] + batch * (cells * costs["TORCH_CELL"] + macs * costs["TORCH_MAC"])


def estimate(lhs: Side, rhs: Side, k_python: int | None, k_torch: int | None, batch: int,
             costs: dict[str, float] = COSTS) -> Estimate:
    """Each engine's ``k × (lhs + rhs)`` (``k = None``: that engine has no useful bound)."""
    py = None if k_python is None else k_python * (side_seconds(lhs, "python", 1, costs) + side_seconds(rhs, "python", 1, costs))
    tt = None if k_torch is None else k_torch * (side_seconds(lhs, "torch", batch, costs) + side_seconds(rhs, "torch", batch, costs))
    return Estimate(py, tt)


# ---- measuring the constants ----------------------------------------------------------------


def _best(f: Any, repeat: int = 3) -> float:
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        out = min(out, time.perf_counter() - t)
    return out


def calibrate() -> dict[str, float]:
    """The constants of :data:`COSTS` measured on this machine (about a second; imports torch).

    The three model terms are solved from three synthetic models (many small layers; a few large
    compiled-like ones; a few with a dense ``W``); each torch model run uses a fresh prime, so it
    includes planning the weights, as a trial does.
    """
    from dataclasses import replace

    import numpy as np
    import torch

    from symverify.executors import modular_eval
    from symverify.executors.synthetic import impulse_model
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.provers.modular import BatchModRing, model_mod_batch
    from symverify.kernel.semantics.straightline import eval_mod, eval_mod_lanes, program
    from symverify.library import random_circuit

    p0 = (1 << 31) - 1
    primes = iter([2147483629, 2147483587, 2147483579, 2147483563, 2147483549, 2147483543, 2147483497, 2147483489,
                   2147483477, 2147483423, 2147483399, 2147483353, 2147483323, 2147483269])
    wide = impulse_model(64, 64, 10, seed=3)
    dense_w = Grid.from_rows([[(i * 7 + j * 3) % 5 - 2 or 1 for j in range(64)] for i in range(64)])
    models = [impulse_model(16, 4, 200, seed=1), impulse_model(512, 32, 20, seed=2),
              Model(64, 64, 64, 64, tuple(replace(ly, W=dense_w, b1=Grid.zeros(64, 64)) for ly in wide.layers))]
    fits: dict[str, list[float]] = {}
    for engine in ("python", "torch"):
        rows, times = [], []
        for m in models:
            if engine == "python":
                u = [[[1] * m.d for _ in range(m.n)]]
                t = _best(lambda m=m, u=u: model_mod_batch(m, u, BatchModRing([p0], [{}])))
            else:
                x = torch.ones((1, m.n, m.d), dtype=torch.int64)
                t = _best(lambda m=m, x=x: modular_eval(m, x, next(primes)))
            rows.append(ModelSide(m, m.n, m.d).terms())
            times.append(t)
        fits[engine] = [max(float(v), 0.0) for v in np.linalg.solve(np.array(rows, dtype=float), np.array(times))]
    c = random_circuit(8, 4, 4000, 20, seed=3)
    prog = program(c)
    gates = len(c.gates)
    coeffs = [x % p0 if isinstance(x, int) else 1 for x in prog.scalars]  # residues, as the engines pass them
    py_gate = _best(lambda: eval_mod(prog, [1] * c.num_inputs, p0, coeffs)) / gates
    lanes = 64
    pv = np.full(lanes, p0, dtype=np.int64)
    lane_coeffs = np.array(coeffs, dtype=np.int64).reshape(-1, 1).repeat(lanes, axis=1)
    t1 = _best(lambda: eval_mod_lanes(prog, np.ones((c.num_inputs, 1), dtype=np.int64), pv[:1], lane_coeffs[:, :1]))
    t64 = _best(lambda: eval_mod_lanes(prog, np.ones((c.num_inputs, lanes), dtype=np.int64), pv, lane_coeffs))
    lane = max((t64 - t1) / (lanes - 1), 0.0) / gates
    return {
        "PY_GATE": py_gate,
        "PY_LAYER": fits["python"][0],
        "PY_CELL": fits["python"][1],
        "PY_MAC": fits["python"][2],
        "TORCH_GATE": max(t1 / gates - lane, 0.0),
        "TORCH_LANE": lane,
        "TORCH_LAYER": fits["torch"][0],
        "TORCH_CELL": fits["torch"][1],
        "TORCH_MAC": fits["torch"][2],
    }
