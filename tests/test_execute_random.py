"""Random models and circuits: every float path within its error bound, modular = ModRing."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.executors import execute, modular_eval, numeric_check
from symverify.kernel.semantics.evaluate import eval_circuit, eval_model
from symverify.kernel.semantics.rings import ModRing
from symverify.testing import circuits, models

P = 2**31 - 1


def _inputs(seed: int, n: int, d: int, fractional: bool) -> list:
    rng = np.random.default_rng(seed)
    u = rng.integers(-4, 5, size=(2, n, d)).tolist()
    if fractional:
        u = [[[Fraction(x, 3) for x in row] for row in pt] for pt in u]
    return u


@settings(max_examples=60)
@given(models(max_n=4, max_d=3, max_layers=3, pad=2), st.integers(0, 2**32), st.booleans())
def test_random_models_float_and_modular(m, seed, fractional):
    u = _inputs(seed, m.n, m.d, fractional)
    exact = execute(m, u)
    for path in ("auto", "fft", "direct", "sparse"):
        for dtype in ("float64", "float32", "bfloat16"):
            chk = numeric_check(m, u, dtype=dtype, path=path)
            assert chk.ok, (chk, m)
        y = execute(m, u, backend="torch", path=path).numpy()
        top = max(1.0, float(np.abs(exact.astype(float)).max()))
        assert np.allclose(y, exact.astype(float), rtol=0, atol=1e-9 * top)
    pts = torch.randint(0, P, (2, m.n, m.d), generator=torch.Generator().manual_seed(seed))
    ring = ModRing(P)
    want = [eval_model(m, pts[b].tolist(), ring) for b in range(2)]
    for path in ("auto", "direct", "sparse"):
        assert modular_eval(m, pts, P, path=path).tolist() == want


@settings(max_examples=80)
@given(circuits(max_n=3, max_d=2, max_gates=14), st.integers(0, 2**32), st.booleans())
def test_random_circuits_float_and_modular(c, seed, fractional):
    u = _inputs(seed, c.n, c.d, fractional)
    for dtype in ("float64", "float32", "bfloat16"):
        chk = numeric_check(c, u, dtype=dtype)
        assert chk.ok, (chk, c)
    pts = torch.randint(0, P, (3, c.n, c.d), generator=torch.Generator().manual_seed(seed))
    ring = ModRing(P)
    assert modular_eval(c, pts, P).tolist() == [eval_circuit(c, pts[b].tolist(), ring) for b in range(3)]
    exact_mod = execute(c, u, backend="modular")
    ring = ModRing(P)
    assert exact_mod.tolist() == [eval_circuit(c, [[ring.coerce(x) for x in row] for row in pt], ring) for pt in u]
