"""Deadlines inside long computations, and the compositional method's memory guard.

Every method must come back within ``max(1 s, 10 %)`` of its timeout, and no certificate stage may
be expanded in this process unless a certified bound says it is small (FLINT aborts the whole
process when it runs out of memory). The wall-clock limits below are correctness checks of the
deadline, not performance asserts: they allow :data:`SLACK` seconds for forking and a loaded
2-core CI machine on top of the guarantee.
"""

from __future__ import annotations

import random
import time
from fractions import Fraction

import numpy as np
import pytest

import symverify as sv
from symverify.deadline import Deadline, DeadlineExceededError, as_check
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.bounds import BoundRing, structure_bounds
from symverify.kernel.provers.compositional import (
    STAGE_IN_PROCESS_MONOMIALS,
    STAGE_REFUSE_FACTOR,
    _check_stage,
    check_certificate,
    plan_stage,
)
from symverify.kernel.provers.counterexample import search_or_stop
from symverify.kernel.provers.modular import BatchModRing, eval_mod_batch
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.sides import as_side, pair_sides
from symverify.kernel.semantics import evaluate as ev
from symverify.kernel.semantics.poly import PolyRing
from symverify.kernel.semantics.rings import FractionRing, ModRing
from symverify.kernel.verification import verify
from symverify.library import random_circuit

SLACK = 3.0
M61 = (1 << 61) - 1


def within(timeout: float) -> float:
    """The wall-clock limit for a call with this timeout: the guarantee plus :data:`SLACK`."""
    return timeout + max(1.0, 0.1 * timeout) + SLACK


def past() -> Deadline:
    return Deadline(time.monotonic() - 1.0)


def dense_model(n: int, d: int, inner_n: int, inner_d: int, layers: int, seed: int = 0) -> Model:
    """Dense ``W``, three filter taps, 0/1 biases: no structural zeros for the bounds to skip."""
    rng = random.Random(seed)
    out = []
    for _ in range(layers):
        W = Grid.from_rows([[rng.randint(-2, 2) for _ in range(inner_d)] for _ in range(inner_d)])
        h = Grid.from_rows([[rng.randint(-1, 1) if k < 3 else 0 for _ in range(inner_d)] for k in range(inner_n)])
        b = Grid.from_rows([[rng.randint(0, 1) for _ in range(inner_d)] for _ in range(inner_n)])
        out.append(Layer.make(inner_n, inner_d, W=W, h=h, b1=b, b2=b))
    return Model(n, d, inner_n, inner_d, tuple(out), f"dense_{inner_n}x{inner_d}_L{layers}")


def power_of_sum(d: int, k: int) -> Circuit:
    """``(x0 + … + x_{d−1})^(2^k)``: ``C(2^k + d − 1, d − 1)`` monomials, from ``d − 1 + k`` gates."""
    gates: list[Gate] = []

    def add(g: Gate) -> int:
        gates.append(g)
        return d + len(gates) - 1

    s = 0
    for i in range(1, d):
        s = add(Gate.add(s, i))
    for _ in range(k):
        s = add(Gate.mul(s, s))
    return Circuit(1, d, tuple(gates), (s,), f"sum_pow_{d}_{k}")


def coarse(cert: Certificate) -> Certificate:
    """One stage over the whole model: only the input and output boundaries (a valid certificate)."""
    return Certificate((cert.boundaries[0], cert.boundaries[-1]))


@pytest.fixture(scope="module")
def dense_pair():
    """Two equal dense models (distinct objects); the bounds pass over both takes ≈ 5 s on CI."""
    return dense_model(4, 4, 32, 32, 36, seed=1), dense_model(4, 4, 32, 32, 36, seed=1)


@pytest.fixture(scope="module")
def compiled_mid():
    """A random circuit of depth 16 and its kaleidoscope compilation (1182 layers, 688 stages)."""
    c = random_circuit(16, 4, 384, 16, seed=1, num_outputs=32)
    return c, sv.compile(c)


@pytest.fixture(scope="module")
def sum_pow():
    """``(x0+…+x5)^16`` (74613 monomials) and ``^32`` (435897), compiled."""
    return {k: (power_of_sum(6, k), sv.compile(power_of_sum(6, k))) for k in (4, 5, 6)}


# ---- the checker ------------------------------------------------------------------------------


def test_deadline_checker_basics():
    assert Deadline.at(None) is None and as_check(None) is None
    with pytest.raises(DeadlineExceededError):
        past()()
    far = Deadline(time.monotonic() + 3600)
    far()  # no exception
    assert not far.expired() and far.remaining() > 3000
    assert isinstance(as_check(time.monotonic()), Deadline)
    probe = lambda: None  # noqa: E731
    assert as_check(probe) is probe


def test_a_nan_deadline_is_refused_not_taken_as_never():
    """NaN compares False with every time, so a checker holding it would never stop a loop."""
    from symverify.errors import UsageError

    with pytest.raises(UsageError, match="found NaN"):
        as_check(float("nan"))
    with pytest.raises(UsageError, match="found NaN"):
        Deadline.at(float("nan"))
    with pytest.raises(UsageError, match="found NaN"):
        as_check(np.float64("nan"))


def test_options_build_the_checker():
    assert Options().checker() is None
    Options().check()
    late = Options(deadline=time.monotonic() - 1)
    with pytest.raises(DeadlineExceededError):
        late.check()
    with pytest.raises(DeadlineExceededError):
        late.checker()()  # type: ignore[misc]


# ---- interpreter loops ------------------------------------------------------------------------


def test_eval_model_circuit_and_layer_stop_at_a_past_deadline(dense_pair):
    m = dense_pair[0]
    u = [[Fraction(i + j, 3) for j in range(m.d)] for i in range(m.n)]
    for call in (lambda: ev.eval_model(m, u, FractionRing(), past()),
                 lambda: ev.eval_layer(m.layers[0], ev.embed(u, m.inner_n, m.inner_d, 0), FractionRing(), past()),
                 lambda: ev.eval_layers(m.layers, ev.embed(u, m.inner_n, m.inner_d, 0), FractionRing(), past())):
        t = time.perf_counter()
        with pytest.raises(DeadlineExceededError):
            call()
        assert time.perf_counter() - t < 0.5
    c = random_circuit(2, 2, 3000, 30, seed=3)
    with pytest.raises(DeadlineExceededError):
        ev.eval_circuit(c, [[1, 2], [3, 4]], FractionRing(), past())


def test_kaleidoscope_side_stops_at_a_past_deadline():
    from symverify.kaleidoscope import bit_reversal, permutation_to_kaleidoscope

    side = as_side(permutation_to_kaleidoscope(bit_reversal(16)))
    u = [[i] for i in range(side.n)]
    assert side.evaluate(u, FractionRing(), Deadline(time.monotonic() + 60)) == side.evaluate(u, FractionRing())
    with pytest.raises(DeadlineExceededError):
        side.evaluate(u, FractionRing(), past())


@pytest.mark.parametrize("every", [1, 3, 100])
def test_checked_evaluation_gives_the_same_values(monkeypatch, every):
    """Cutting the cells into checked blocks changes no value, in any ring (both layer paths)."""
    monkeypatch.setattr(ev, "CHECK_EVERY", every)
    calls = []

    def check() -> None:
        calls.append(1)

    for seed in range(3):
        c = random_circuit(2, 3, 40, 6, seed=seed, num_outputs=4)
        out = sv.compile(c, method="dense") if seed == 1 else sv.compile(c)
        m = out.model
        u = [[random.Random(seed).randint(-3, 3) for _ in range(m.d)] for _ in range(m.n)]
        rings = [FractionRing(), ModRing(M61), BoundRing(m.n * m.d)]
        for ring in rings:
            uu = u if not isinstance(ring, BoundRing) else [[ring.var] * m.d for _ in range(m.n)]
            plain = ev.eval_model(m, uu, ring)
            checked = ev.eval_model(m, uu, ring, check)
            if isinstance(ring, BoundRing):
                assert [[(x.deg, x.cnt) for x in r] for r in plain] == [[(x.deg, x.cnt) for x in r] for r in checked]
            else:
                assert plain == checked
        poly = PolyRing(m.n * m.d, (), "flint")
        assert ev.eval_model(m, poly.grid_input(m.n, m.d), poly) == ev.eval_model(m, poly.grid_input(m.n, m.d), poly, check)
        assert ev.eval_circuit(c, u, FractionRing()) == ev.eval_circuit(c, u, FractionRing(), check)
    assert calls


def test_structure_bounds_stops_at_the_deadline(dense_pair):
    a, b = pair_sides(*dense_pair)
    t = time.perf_counter()
    with pytest.raises(DeadlineExceededError):
        structure_bounds(a, b, deadline=time.monotonic() - 1)
    assert time.perf_counter() - t < 0.5
    t = time.perf_counter()
    with pytest.raises(DeadlineExceededError):
        structure_bounds(a, b, deadline=time.monotonic() + 0.3)
    assert time.perf_counter() - t < within(0.3)


def test_structure_bounds_with_a_far_deadline_is_unchanged():
    c = random_circuit(2, 2, 30, 6, seed=7)
    a, b = pair_sides(c, sv.compile(c))
    assert structure_bounds(a, b) == structure_bounds(a, b, deadline=time.monotonic() + 600)


def test_modular_evaluation_stops_at_the_deadline(dense_pair):
    m = dense_pair[0]
    side = as_side(m)
    ring = BatchModRing([M61], [{}])
    pt = [[[i + j for j in range(m.d)] for i in range(m.n)]]
    for tensor in (True, False):
        with pytest.raises(DeadlineExceededError):
            eval_mod_batch(side, pt, ring, tensor=tensor, check=past())
    small = as_side(dense_model(2, 2, 8, 8, 6))
    pt = [[[i + j for j in range(2)] for i in range(2)]]
    far = Deadline(time.monotonic() + 600)
    assert eval_mod_batch(small, pt, ring, check=far) == eval_mod_batch(small, pt, ring, tensor=False, check=far)


def test_counterexample_search_gives_up_at_the_deadline(dense_pair):
    a = as_side(dense_pair[0])
    b = as_side(dense_model(4, 4, 32, 32, 36, seed=2))
    t = time.perf_counter()
    with pytest.raises(DeadlineExceededError):
        search_or_stop(a, b, Options(deadline=time.monotonic() - 1), found_by="test")
    assert time.perf_counter() - t < 0.5


# ---- compositional: deadline inside stages ------------------------------------------------------


def test_check_certificate_past_deadline_is_a_timeout(compiled_mid):
    c, comp = compiled_mid
    t = time.perf_counter()
    res = check_certificate(c, comp.model, comp.certificate, deadline=time.monotonic() - 1)
    assert not res.ok and res.failure is None and res.stopped == "timeout" and res.notes == ("timeout",)
    assert time.perf_counter() - t < 1.0


def test_check_certificate_stops_inside_one_large_stage(compiled_mid):
    """A coarse certificate makes one stage of the whole model: the deadline still applies inside it."""
    c, comp = compiled_mid
    t = time.perf_counter()
    res = check_certificate(c, comp.model, coarse(comp.certificate), deadline=time.monotonic() + 0.2)
    assert time.perf_counter() - t < within(0.2)  # the stage alone takes about 0.5 s on a fast idle machine
    assert not res.ok and res.stopped == "timeout" and res.stages_checked == 0


# ---- compositional: the memory guard -----------------------------------------------------------


def test_compiled_certificates_stay_in_process(compiled_mid):
    c, comp = compiled_mid
    res = check_certificate(c, comp.model, comp.certificate)
    assert res.ok and res.stages_isolated == 0 and 0 < res.largest_estimate <= STAGE_IN_PROCESS_MONOMIALS


def test_stage_estimates_bound_the_checked_monomials():
    for seed in range(4):
        c = random_circuit(3, 2, 30, 6, seed=seed, num_outputs=3)
        comp = sv.compile(c)
        params = tuple(sorted(c.params() | comp.model.params()))
        bs = comp.certificate.boundaries
        for k in range(len(bs) - 1):
            plan = plan_stage(c, comp.model, bs[k], bs[k + 1], params)
            failure, mono = _check_stage(c, comp.model, k, bs[k], bs[k + 1], k == len(bs) - 2, "flint", params)
            assert failure is None and plan.where == "in-process" and mono <= plan.estimate


def test_coarse_certificate_beyond_the_budget_is_refused_not_expanded(sum_pow):
    """(x0+…+x5)^64 has 1.3·10^8 monomials: expanding it in-process would exhaust memory (FLINT aborts)."""
    c, comp = sum_pow[6]
    cert = coarse(comp.certificate)
    b0, b1 = cert.boundaries
    plan = plan_stage(c, comp.model, b0, b1, ())
    assert plan.where == "refused" and plan.estimate > STAGE_REFUSE_FACTOR * 5_000_000
    t = time.perf_counter()
    res = check_certificate(c, comp.model, cert)
    assert time.perf_counter() - t < 5.0
    assert not res.ok and res.failure is None and res.stopped == "budget"
    assert "not expanded" in res.notes[0] and "max_monomials" in res.notes[0]
    assert check_certificate(c, comp.model, comp.certificate).ok  # the compiled certificate checks stage by stage


def test_small_max_monomials_refuses_a_coarse_stage(sum_pow):
    c, comp = sum_pow[4]
    res = check_certificate(c, comp.model, coarse(comp.certificate), max_monomials=1000)
    assert not res.ok and res.stopped == "budget" and res.stages_isolated == 0


def test_a_large_stage_runs_in_a_memory_limited_process(sum_pow):
    c, comp = sum_pow[4]
    cert = coarse(comp.certificate)
    res = check_certificate(c, comp.model, cert)
    assert res.ok and res.stages_isolated == 1 and res.largest_estimate > STAGE_IN_PROCESS_MONOMIALS
    kept = check_certificate(c, comp.model, cert, isolate=False)  # the caller's explicit choice
    assert kept.ok and kept.stages_isolated == 0


def test_a_failing_stage_in_the_child_is_reported(sum_pow):
    c, comp = sum_pow[4]
    wrong = Circuit(c.n, c.d, (Gate.sub(0, 1), *c.gates[1:]), c.outputs, "wrong")  # x0 − x1 instead of x0 + x1
    res = check_certificate(wrong, comp.model, coarse(comp.certificate))
    assert not res.ok and res.failure is not None and res.stages_isolated == 1
    assert res.failure.stage == 0 and res.failure.cell == (0, 0)


_OVER_THE_LIMIT = """
import json, sys
import symverify as sv
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.verification import verify
sys.path.insert(0, {tests!r})
from test_timeouts import coarse, power_of_sum

c = power_of_sum(6, 5)
comp = sv.compile(c)
cert = coarse(comp.certificate)
res = check_certificate(c, comp.model, cert, memory_limit=1 << 20)
rep = verify(comp.model, c, certificate=cert, method="compositional", memory_limit=1 << 20)
print(json.dumps({{"ok": res.ok, "failure": res.failure is not None, "stopped": res.stopped, "notes": list(res.notes),
                  "isolated": res.stages_isolated, "verdict": rep.verdict.value, "report_notes": list(rep.notes),
                  "report_isolated": rep.evidence.get("stages_isolated")}}))
"""


def test_a_stage_over_the_memory_limit_is_unknown_not_an_abort():
    """The child's limit is address space beyond the parent's, so this runs in a fresh interpreter:
    a test worker's freed heap would otherwise be reused by the child without counting."""
    import json
    import os
    import subprocess
    import sys

    tests = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(tests), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _OVER_THE_LIMIT.format(tests=tests)], capture_output=True, text=True,
                         env=env, timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert not got["ok"] and not got["failure"] and got["stopped"] in ("memory", "crashed") and got["isolated"] == 1
    assert "memory-limited process" in got["notes"][0]
    assert got["verdict"] == "unknown" and "memory-limited process" in got["report_notes"][0]
    assert got["report_isolated"] == 1


def test_verify_with_a_coarse_certificate_beyond_the_budget(sum_pow):
    c, comp = sum_pow[6]
    cert = coarse(comp.certificate)
    rep = verify(comp.model, c, certificate=cert, method="compositional")
    assert rep.verdict == "unknown" and "not expanded" in rep.notes[0] and rep.evidence["stopped"] == "budget"
    rep = verify(comp.model, c, certificate=cert, method="auto")
    assert rep.proved and rep.method == "randomized"
    assert any("not expanded" in n for n in rep.notes)


# ---- verify(..., timeout=1) returns in time ------------------------------------------------------


@pytest.mark.parametrize("method", ["exact", "randomized", "z3", "auto"])
def test_verify_large_dense_models_returns_in_time(dense_pair, method):
    a, b = dense_pair
    t = time.perf_counter()
    rep = verify(a, b, method=method, timeout=1)
    took = time.perf_counter() - t
    assert took <= within(1.0), f"{method}: {took:.2f} s ({rep})"
    assert rep.verdict in ("unknown", "proved")


@pytest.mark.parametrize("method", ["compositional", "auto"])
@pytest.mark.parametrize("which", ["compiled", "coarse"])
def test_verify_large_compiled_model_returns_in_time(compiled_mid, method, which):
    c, comp = compiled_mid
    cert = comp.certificate if which == "compiled" else coarse(comp.certificate)
    t = time.perf_counter()
    rep = verify(comp.model, c, certificate=cert, method=method, timeout=1)
    took = time.perf_counter() - t
    assert took <= within(1.0), f"{method}/{which}: {took:.2f} s ({rep})"
    assert rep.verdict in ("unknown", "proved")
