"""The randomized method's engines and its one trial loop.

Every engine implements :class:`~symverify.kernel.provers.modular.Engine`; the engines give the same
residues and the same first mismatch on random pairs; and an engine that wrongly says "equal"
cannot buy a ``proved`` beyond the bound the one formula (:func:`~symverify.kernel.provers.randomized.trial_plan`)
states: ``k`` comes from ``ε``, so one lie costs at most one trial's worth of the bound.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from cases import MUTATIONS, QUARTIC_C, QUARTIC_M, SWAP_K, perturb, trace_model
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from symverify.errors import UsageError
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.provers import randomized as rz
from symverify.kernel.provers.bounds import M61, structure_bounds
from symverify.kernel.provers.challenge import Stream
from symverify.kernel.provers.modular import Engine, PythonEngine, TorchEngine
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.outcome import MethodResult, Verdict
from symverify.kernel.provers.sides import as_side, pair_sides
from symverify.strategies import circuits, models

torch = pytest.importorskip("torch")
TARGET = Fraction(1, 2**100)
ENGINES = [PythonEngine(), TorchEngine()]
PRIMES = [2**31 - 1, 2_147_483_629, 1_073_741_827]


def test_every_engine_implements_the_protocol():
    assert all(isinstance(e, Engine) for e in ENGINES)
    assert [e.name for e in ENGINES] == ["python", "torch"] and set(rz.ENGINES) == {"auto", "python", "torch"}
    assert (PythonEngine.backend, TorchEngine.backend) == (rz.BACKEND_PYTHON, rz.BACKEND_TORCH)
    assert PythonEngine.prime_limit is None and TorchEngine.prime_limit == 1 << 31
    assert not PythonEngine.batched and TorchEngine.batched


def test_engines_draw_uniform_points_of_the_requested_shape():
    for e in ENGINES:
        pts, ps = e.points(Stream(b"k" * 32), 101, as_side(QUARTIC_C), ["a", "b"], 3)
        arr = np.asarray(pts)
        assert arr.shape == (3, QUARTIC_C.n, QUARTIC_C.d) and set(ps) == {"a", "b"}
        assert (arr >= 0).all() and (arr < 101).all() and all(0 <= v < 101 for v in ps.values())


def _as_array(x: object) -> np.ndarray:
    return x.cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=np.int64)


@settings(max_examples=40, deadline=None)
@given(circuits(max_n=3, max_d=2, max_gates=16, allow_sym=True), st.integers(1, 3), st.data())
def test_engines_agree_on_random_circuits(c: Circuit, batch: int, data: st.DataObject) -> None:
    p = data.draw(st.sampled_from(PRIMES))
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    params = {name: rng.randrange(p) for name in sorted(c.params())}
    pts = np.array([[[rng.randrange(p) for _ in range(c.d)] for _ in range(c.n)] for _ in range(batch)], dtype=np.int64)
    side = as_side(c)
    py, tc = (_as_array(e.evaluate(side, pts.tolist() if not e.batched else pts, p, params)) for e in ENGINES)
    assert np.array_equal(py, tc)


@settings(max_examples=20, deadline=None)
@given(models(max_n=3, max_d=2, max_layers=2), st.integers(1, 3), st.data())
def test_engines_agree_on_random_pairs(m, batch: int, data: st.DataObject) -> None:
    """A model against its traced circuit (equal) and against a perturbed copy (different): the same
    residues on every side and the same first mismatch from every engine."""
    assume(m.layers)
    p = data.draw(st.sampled_from(PRIMES))
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    pts = np.array([[[rng.randrange(p) for _ in range(m.d)] for _ in range(m.n)] for _ in range(batch)], dtype=np.int64)
    layer = data.draw(st.integers(0, len(m.layers) - 1))
    grid = data.draw(st.sampled_from(["W", "b1", "h", "b2"]))
    g = getattr(m.layers[layer], grid)
    cell = (data.draw(st.integers(0, g.rows - 1)), data.draw(st.integers(0, g.cols - 1)))
    a, same, other = as_side(m), as_side(trace_model(m)), as_side(perturb(m, layer, grid, cell))
    for lhs, rhs in ((a, same), (a, other)):
        outs = [(_as_array(e.evaluate(lhs, pts if e.batched else pts.tolist(), p, {})),
                 _as_array(e.evaluate(rhs, pts if e.batched else pts.tolist(), p, {}))) for e in ENGINES]
        assert np.array_equal(outs[0][0], outs[1][0]) and np.array_equal(outs[0][1], outs[1][1])
        hits = [e.first_mismatch(lhs, rhs, pts if e.batched else pts.tolist(), p, {}) for e in ENGINES]
        assert hits[0] == hits[1]
        assert (hits[0] is None) == np.array_equal(outs[0][0], outs[0][1])
    assert PythonEngine().first_mismatch(a, same, pts.tolist(), p, {}) is None


def test_the_torch_engine_refuses_a_kaleidoscope():
    k = as_side(SWAP_K)
    with pytest.raises(UsageError, match="models and circuits, found a kaleidoscope"):
        TorchEngine().evaluate(k, np.zeros((1, k.n, k.d), dtype=np.int64), 101, {})


# ---- one formula, one loop ------------------------------------------------------------------------


def test_both_engines_take_their_bound_from_the_one_formula():
    bounds = structure_bounds(*pair_sides(QUARTIC_C, QUARTIC_M))
    py = rz.engine_plan("python", bounds, False, TARGET)
    tc = rz.engine_plan("torch", bounds, False, TARGET)
    assert py == rz.trial_plan(bounds, 61, fixed=M61) and py.per_trial == Fraction(bounds.degree, M61)
    assert tc == rz.trial_plan(bounds, 30, target=TARGET) and tc.per_trial == Fraction(bounds.degree, 2**30) ** tc.batch
    for backend, plan in (("python", py), ("torch", tc)):
        rep = _run(QUARTIC_C, QUARTIC_M, backend)
        assert rep.verdict is Verdict.PROVED and rep.evidence["k"] == rz.trials_needed(plan.per_trial, TARGET)
        assert rep.failure_bound == plan.per_trial ** rep.evidence["k"] <= TARGET


def _run(a: object, b: object, engine: str, trials: int | None = None) -> MethodResult:
    return rz.run_randomized(*pair_sides(a, b), Options(modular=engine, trials=trials))


def _lying(monkeypatch: pytest.MonkeyPatch, engine: type, lie_on: set[tuple[int, int]]) -> None:
    """Plant a wrong engine: at the points ``(trial, point)`` of ``lie_on`` it says the sides agree
    whatever they are (it skips them); everywhere else it is the real engine."""
    real = engine.first_mismatch
    trial = iter(range(10**6))

    def first_mismatch(self, lhs, rhs, points, p, params, check=None):
        t = next(trial)
        keep = [i for i in range(len(points)) if (t, i) not in lie_on]
        shown = points[keep] if isinstance(points, np.ndarray) else [points[i] for i in keep]
        hit = real(self, lhs, rhs, shown, p, params, check)
        return None if hit is None else (keep[hit[0]], hit[1])

    monkeypatch.setattr(engine, "first_mismatch", first_mismatch)


@pytest.mark.parametrize("engine", [PythonEngine, TorchEngine], ids=lambda e: e.name)
def test_a_planted_wrong_engine_never_proves_beyond_its_stated_bound(monkeypatch, engine):
    """A differing pair; the engine says "equal" wrongly at one point: the next point finds the
    difference, since ``k`` (from ``ε``, the one formula) times ``B`` is more than one. Lying at
    every point is the event the bound ``ε^k`` prices, and only then is the pair proved, with
    exactly that failure bound; a caller's extra trial is still run and refutes."""
    _, _, a, b = MUTATIONS[1]
    plan = rz.engine_plan(engine.name, structure_bounds(*pair_sides(a, b)), False, TARGET)
    k = rz.trials_needed(plan.per_trial, TARGET)
    where = [(t, i) for t in range(k) for i in range(plan.batch)]
    assert len(where) >= 2

    def run(lie_on: set[tuple[int, int]], trials: int | None = None) -> MethodResult:
        with monkeypatch.context() as mp:
            _lying(mp, engine, lie_on)
            return _run(a, b, engine.name, trials)

    for n, lie in enumerate(where):
        rep = run({lie})
        t, i = where[1] if n == 0 else where[0]
        assert rep.verdict is Verdict.REFUTED and rep.evidence["mismatch_trial"] == t, str(rep)
        assert rep.evidence.get("mismatch_point", 0) == i
    fooled = run(set(where))
    assert fooled.verdict is Verdict.PROVED and fooled.evidence["k"] == k and fooled.failure_bound == plan.per_trial**k <= TARGET
    more = run(set(where), trials=k + 1)
    assert more.verdict is Verdict.REFUTED and more.evidence["mismatch_trial"] == k
