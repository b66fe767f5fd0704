"""The randomized method's torch engine (int64 mod fresh 31-bit primes, batched) and ``numeric=``.

The torch engine must agree with the python engine (Python ints mod primes ≥ 2^61) on the shared
case table, refute every mutant with a counterexample that separates the sides under an
independent exact evaluator, state its bound (≤ 2^-100, recomputed here exactly), and never turn a
modular disagreement into a refutation without an exact re-check. The numeric cross-check is
reported and never changes a verdict.
"""

import sys
import time
from dataclasses import replace
from fractions import Fraction

import pytest
from cases import CASES, MUTATIONS, QUARTIC_C, QUARTIC_M, SQUARE_C, SQUARE_M, SWAP_K, dense_model, trace_model
from hypothesis import given, settings

import symverify as sv
from symverify.errors import BackendUnavailableError, ProverError
from symverify.executors.synthetic import impulse_model
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers import randomized as rz
from symverify.kernel.provers.bounds import structure_bounds
from symverify.kernel.provers.challenge import Stream
from symverify.kernel.provers.modular import TorchEngine
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.outcome import UsageError
from symverify.kernel.provers.sides import as_side, pair_sides
from symverify.kernel.verification import Verdict, verify
from symverify.library import random_circuit
from symverify.provers import engine_cost
from symverify.semantics.exact import evaluate
from symverify.testing import models

TARGET = Fraction(1, 2**100)
TORCH_CASES = [c for c in CASES if "kaleidoscope" not in c.tags]
KALEIDOSCOPE_CASES = [c for c in CASES if "kaleidoscope" in c.tags]


def separates(a, b, cex) -> bool:
    """The counterexample's entry differs under the independent exact evaluator, with the claimed values."""
    u, ps = [list(r) for r in cex.inputs], cex.param_dict()
    ya, yb = evaluate(a, u, cex.params_for(a)), evaluate(b, u, cex.params_for(b))
    assert ps.keys() == cex.params_for(a).keys() | cex.params_for(b).keys()
    i, j = cex.cell
    return ya[i][j] != yb[i][j] and (ya[i][j], yb[i][j]) == (cex.lhs_value, cex.rhs_value)


def recomputed_bound(report, a, b) -> Fraction:
    """``(β + (D/2^30)^B)^k`` from the certified bounds, exactly; the evidence must match it."""
    bounds = structure_bounds(*pair_sides(a, b))
    symbolic = bool(a.params() | b.params())
    plan = rz.engine_plan("torch", bounds, symbolic, TARGET)
    ev = report.evidence
    assert ev["points_per_trial"] == plan.batch and ev["degree_bound"] == bounds.degree
    return plan.per_trial ** ev["k"]


# ---- the two engines agree --------------------------------------------------------------------------


@pytest.mark.parametrize("case", TORCH_CASES, ids=lambda c: c.id)
def test_torch_and_python_engines_agree_on_the_case_table(case):
    t = verify(case.lhs, case.rhs, method="randomized", backend="torch")
    p = verify(case.lhs, case.rhs, method="randomized", backend="python")
    assert t.verdict is p.verdict is case.expected, (str(t), str(p))
    assert t.evidence["backend"] == rz.BACKEND_TORCH and p.evidence["backend"] == rz.BACKEND_PYTHON
    if case.expected is Verdict.REFUTED:
        assert separates(case.lhs, case.rhs, t.counterexample)
    else:
        bound = recomputed_bound(t, case.lhs, case.rhs)
        assert bound <= TARGET and t.evidence["bound_log2"] <= -100


@pytest.mark.parametrize("case", KALEIDOSCOPE_CASES, ids=lambda c: c.id)
def test_kaleidoscope_sides_take_the_python_engine(case):
    with pytest.raises(UsageError, match="the torch executor takes models and circuits, not kaleidoscope"):
        verify(case.lhs, case.rhs, method="randomized", backend="torch")
    rep = verify(case.lhs, case.rhs, method="randomized")
    assert rep.verdict is case.expected and rep.evidence["backend"] == rz.BACKEND_PYTHON
    assert "kaleidoscope" in rep.evidence["backend_choice"]


@settings(max_examples=12)
@given(models(max_n=3, max_d=2, max_layers=2))
def test_random_model_and_its_traced_circuit_are_proved_on_torch(m):
    rep = verify(trace_model(m), m, method="randomized", backend="torch")
    assert rep.proved and rep.evidence["backend"] == rz.BACKEND_TORCH, str(rep)


# ---- evidence and the bound ----------------------------------------------------------------------------


def test_torch_evidence_names_backend_primes_k_degree_and_bound():
    rep = verify(QUARTIC_C, QUARTIC_M, method="randomized", backend="torch")
    ev = rep.evidence
    assert rep.proved and ev["backend"] == "torch int64 mod 31-bit primes"
    assert ev["p"] == "uniform random primes in [2^30, 2^31)" and len(ev["primes"]) == ev["k"]
    assert all(2**30 <= int(q) < 2**31 and rz.is_prime(int(q)) for q in ev["primes"])
    assert ev["points"] == ev["k"] * ev["points_per_trial"] and ev["degree_bound"] == 4
    assert ev["bad_prime_bound"] == "0"  # every coefficient is below 2^30: no 31-bit prime divides one
    # (4/2^30)^4 per trial (four points under one prime), one trial
    assert (ev["k"], ev["points_per_trial"]) == (1, 4) and recomputed_bound(rep, QUARTIC_C, QUARTIC_M) == Fraction(4, 2**30) ** 4
    text = str(rep)
    assert "torch int64 mod 31-bit primes" in text and "× 4 points" in text and "error ≤ 2^-112.0" in text  # exactly 2^-112
    assert rep.to_json()["evidence"]["backend"] == rz.BACKEND_TORCH


def test_tall_coefficients_need_several_fresh_primes():
    """Coefficients ≥ 2^30 may be divisible by the prime: the bad-prime term enters, k grows."""
    m = dense_model(3, 2, 3, seed=1)
    rep = verify(m, m, method="randomized", backend="torch")
    ev = rep.evidence
    assert rep.proved and ev["height_bits"] > 30 and ev["bad_prime_bound"] != "0"
    assert ev["k"] >= 4 and len(set(ev["primes"])) == ev["k"]
    assert recomputed_bound(rep, m, m) <= TARGET


def test_symbolic_weights_get_one_point_per_trial():
    case = next(c for c in CASES if c.id == "linear-symbolic-W")
    rep = verify(case.lhs, case.rhs, method="randomized", backend="torch")
    assert rep.proved and rep.evidence["points_per_trial"] == 1 and rep.evidence["k"] >= 4
    assert recomputed_bound(rep, case.lhs, case.rhs) <= TARGET


def test_explicit_trials_and_a_looser_target():
    rep = verify(QUARTIC_C, QUARTIC_M, method="randomized", backend="torch", trials=3)
    assert rep.evidence["k"] == 3 and len(rep.evidence["primes"]) == 3
    loose = verify(QUARTIC_C, QUARTIC_M, method="randomized", backend="torch", error_bound=Fraction(1, 2**40))
    assert loose.evidence["points_per_trial"] == 2 and loose.evidence["bound_log2"] <= -40


def test_torch_trial_error_formula():
    bounds = structure_bounds(*pair_sides(QUARTIC_C, QUARTIC_M))
    tall = replace(bounds, height_bits=95, denominator=6)
    plan = rz.engine_plan("torch", tall, False, TARGET)
    beta = Fraction(4, 2**25 - 1)  # ⌈95/30⌉ bad primes among ≥ 2^25 − ⌈3/30⌉
    assert plan.bad == beta and plan.point == Fraction(4, 2**30)
    assert plan.batch == 1 and plan.per_trial == beta + Fraction(4, 2**30)  # 4/2^30 ≤ β already
    assert rz.engine_plan("torch", tall, True, TARGET).batch == 1
    assert rz.engine_plan("torch", replace(bounds, degree=0), False, TARGET).per_trial == 0


# ---- refutations on the torch engine -------------------------------------------------------------------


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: f"{m[0]}: {m[1]}")
def test_mutants_are_refuted_on_torch_with_separating_counterexamples(mutation):
    _, _, a, b = mutation
    rep = verify(a, b, method="randomized", backend="torch")
    assert rep.refuted and rep.evidence["backend"] == rz.BACKEND_TORCH, str(rep)
    assert rep.evidence["mismatch_trial"] < rep.evidence["k"]
    assert separates(a, b, rep.counterexample)


def test_lifted_torch_point_is_the_counterexample_when_the_search_finds_none(monkeypatch):
    monkeypatch.setattr(rz, "search_or_stop", lambda *a, **k: None)
    _, _, a, b = MUTATIONS[1]
    rep = verify(a, b, method="randomized", backend="torch")
    cex = rep.counterexample
    assert rep.refuted and cex.found_by == "randomized (lifted trial point)"
    prime = int(rep.evidence["primes"][rep.evidence["mismatch_trial"]])
    assert all(0 <= x < prime for row in cex.inputs for x in row)
    assert separates(a, b, cex)


def test_a_modular_disagreement_that_exact_evaluation_denies_raises(monkeypatch):
    monkeypatch.setattr(TorchEngine, "first_mismatch", lambda *a, **k: (0, [0, 0]))
    with pytest.raises(ProverError, match=r"torch int64 mod 31-bit primes.*agree under exact evaluation"):
        verify(SQUARE_C, SQUARE_M, method="randomized", backend="torch")


def test_fresh_primes_defeat_a_difference_divisible_by_a_fixed_31_bit_prime():
    """y = x against y = (q1·q2 + 1)·x with q1, q2 primes in [2^30, 2^31): the difference vanishes mod both."""
    q1, q2 = 2**31 - 1, 2**31 - 19
    assert rz.is_prime(q1) and rz.is_prime(q2)
    c = Circuit(1, 1, (), (0,))
    m = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.from_rows([[q1 * q2 + 1]]), b2=Grid.from_rows([[1]])),))
    rep = verify(c, m, method="randomized", backend="torch")
    assert rep.refuted and separates(c, m, rep.counterexample)
    proved = verify(m, m, method="randomized", backend="torch")
    assert proved.proved and proved.evidence["bad_prime_bound"] != "0"


def test_weights_with_a_31_bit_prime_denominator():
    q = 2**31 - 1
    w = Fraction(1, q)
    c = Circuit(1, 1, (Gate.scale(0, w),), (1,))
    bad = Circuit(1, 1, (Gate.scale(0, 2 * w),), (1,))
    assert verify(c, c, method="randomized", backend="torch").proved
    rep = verify(c, bad, method="randomized", backend="torch")
    assert rep.refuted and separates(c, bad, rep.counterexample)


def test_random_prime_avoids_divisors_of_the_denominator():
    s = Stream(b"three" * 7)
    assert {rz.random_prime(s, 11, low=8) for _ in range(30)} == {13}  # the primes of [8, 16) are 11, 13
    assert all(rz.random_prime(s, low=rz.TORCH_PRIME_LOW) < 2**31 for _ in range(5))


def test_torch_timeout_gives_unknown():
    a, b = pair_sides(QUARTIC_C, QUARTIC_M)
    res = rz.run_randomized(a, b, Options(deadline=time.monotonic() - 1, modular="torch"))
    assert res.verdict is Verdict.UNKNOWN and res.notes[0].startswith("timeout after 0 of")
    assert res.evidence["backend"] == rz.BACKEND_TORCH


# ---- choosing and forcing the engine --------------------------------------------------------------------


def test_forcing_the_python_engine():
    rep = verify(QUARTIC_C, QUARTIC_M, method="randomized", backend="python")
    ev = rep.evidence
    assert rep.proved and ev["backend"] == "python ints mod p ≥ 2^61" and ev["p"] == "2^61-1"
    assert ev["backend_choice"] == "requested (backend='python')" and ev["bound_log2"] <= -100
    assert "python ints mod p ≥ 2^61" in str(rep)


def test_auto_engine_choice(monkeypatch):
    small = verify(QUARTIC_C, QUARTIC_M, method="randomized")
    assert small.evidence["backend"] == rz.BACKEND_PYTHON and "does not pay off" in small.evidence["backend_choice"]
    monkeypatch.setattr(rz, "TORCH_MIN_COST", 0)
    cheap_py = verify(QUARTIC_C, QUARTIC_M, method="randomized")  # tiny: the cost model prefers python ints
    assert cheap_py.proved and cheap_py.evidence["backend"] == rz.BACKEND_PYTHON
    assert "cheaper by the cost model (estimated python" in cheap_py.evidence["backend_choice"]
    monkeypatch.setitem(engine_cost.COSTS, "PY_GATE", 1.0)  # python made dear: torch wins
    monkeypatch.setitem(engine_cost.COSTS, "PY_CELL", 1.0)
    big = verify(QUARTIC_C, QUARTIC_M, method="randomized")
    assert big.proved and big.evidence["backend"] == rz.BACKEND_TORCH and "D/p ≤ 2^-10" in big.evidence["backend_choice"]
    assert "cheaper by the cost model" in big.evidence["backend_choice"]
    assert verify(SWAP_K, next(c for c in CASES if c.id == "kaleidoscope-swap").rhs, method="randomized").proved


def test_cost_model_prefers_torch_for_wide_states_and_python_for_many_small_layers():
    """With the stated constants: a few layers on a 2^18-cell state go to torch (one batch of points
    under one 31-bit prime), a compiled model's hundreds of layers on a small state to python ints."""
    wide = impulse_model(4096, 64, 4, seed=1)
    rep = verify(wide, impulse_model(4096, 64, 4, seed=1), method="randomized")
    assert rep.proved and rep.evidence["backend"] == rz.BACKEND_TORCH, rep.evidence["backend_choice"]
    deep = sv.compile(random_circuit(4, 2, 400, 20, seed=2)).model  # hundreds of layers on a small state
    rep = verify(deep, replace(deep), method="randomized")
    assert rep.proved and rep.evidence["backend"] == rz.BACKEND_PYTHON, rep.evidence["backend_choice"]
    assert "cheaper by the cost model" in rep.evidence["backend_choice"]


def test_cost_estimate_arithmetic():
    lhs, rhs = as_side(QUARTIC_C), as_side(QUARTIC_M)
    costs = dict.fromkeys(engine_cost.COSTS, 0.0) | {"PY_GATE": 1.0, "TORCH_LAYER": 1.0}
    est = engine_cost.estimate(lhs, rhs, 3, 2, 4, costs)
    assert est.python == 3 * len(QUARTIC_C.gates) and est.torch == 2 * len(QUARTIC_M.layers)
    assert engine_cost.estimate(lhs, rhs, None, 2, 4, costs).cheaper() == "torch"
    assert engine_cost.estimate(lhs, rhs, 3, None, 4, costs).cheaper() == "python"
    assert "python -" in engine_cost.estimate(lhs, rhs, None, 2, 4, costs).text()


def test_degree_beyond_2_to_the_20_stays_on_python_ints():
    gates = tuple(Gate.mul(k, k) for k in range(21))  # x^(2^21)
    c = Circuit(1, 1, gates, (21,))
    rep = verify(c, c, method="randomized")
    assert rep.proved and rep.evidence["backend"] == rz.BACKEND_PYTHON and "exceeds 2^20" in rep.evidence["backend_choice"]
    with pytest.raises(UsageError, match="exceeds 2\\^20"):
        verify(c, c, method="randomized", backend="torch")


def test_backend_validation():
    with pytest.raises(UsageError, match="applies to method 'randomized' only, found method 'exact'"):
        verify(SQUARE_C, SQUARE_M, method="exact", backend="torch")
    with pytest.raises(UsageError, match="applies to method 'randomized' only, found method 'auto'"):
        verify(SQUARE_C, SQUARE_M, backend="python")
    with pytest.raises(UsageError, match="'torch' or 'python' \\(randomized engines"):
        verify(SQUARE_C, SQUARE_M, method="randomized", backend="gpu")
    a, b = pair_sides(SQUARE_C, SQUARE_M)
    with pytest.raises(UsageError, match="randomized engine: expected one of auto, torch, python, found 'cuda'"):
        rz.run_randomized(a, b, Options(modular="cuda"))


def test_without_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails, find_spec says absent
    rep = verify(QUARTIC_C, QUARTIC_M, method="randomized")
    assert rep.proved and rep.evidence["backend_choice"] == "torch is not installed"
    with pytest.raises(BackendUnavailableError, match="needs PyTorch"):
        verify(QUARTIC_C, QUARTIC_M, method="randomized", backend="torch")
    with pytest.raises(BackendUnavailableError, match="needs PyTorch"):
        verify(QUARTIC_C, QUARTIC_M, numeric=True)


# ---- the numeric cross-check ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "quartic-two-layer", "conv-cyclic-symbolic", "padded-two-layer", "square-vs-quartic", "W-vs-W-transposed")],
    ids=lambda c: c.id)
def test_numeric_cross_check_is_reported_and_keeps_the_verdict(case):
    plain = verify(case.lhs, case.rhs, method="exact")
    rep = verify(case.lhs, case.rhs, method="exact", numeric=True)
    assert rep.verdict is plain.verdict is case.expected
    num = rep.numeric
    assert num is not None and num.dtype == "float64" and num.points == 2 and num.passed
    assert [s.side for s in num.sides] == ["lhs", "rhs"] and all(s.max_abs_err <= s.bound for s in num.sides)
    assert "numeric cross-check (float64, 2 points; not a proof)" in str(rep)
    data = rep.to_json()["numeric"]
    assert data["passed"] is True and data["dtype"] == "float64" and "never a proof" in data["note"]
    assert plain.numeric is None and plain.to_json()["numeric"] is None


def test_numeric_float32_and_kaleidoscope_sides():
    rep = verify(QUARTIC_C, QUARTIC_M, method="randomized", numeric="float32")
    assert rep.proved and rep.numeric.dtype == "float32" and rep.numeric.passed
    assert rep.numeric.max_abs_err <= rep.numeric.bound
    case = next(c for c in CASES if c.id == "kaleidoscope-swap")
    kal = verify(case.lhs, case.rhs, numeric=True)
    assert kal.proved and kal.numeric.skipped == ("lhs kaleidoscope: no float executor",)
    assert [s.side for s in kal.numeric.sides] == ["rhs"] and "no float executor (skipped)" in str(kal)


def test_a_weight_beyond_float64_is_reported_not_raised():
    huge = 10**400
    c = Circuit(1, 1, (Gate.scale(0, huge),), (1,))
    rep = verify(c, c, method="exact", numeric=True)
    assert rep.proved and rep.numeric.sides == () and len(rep.numeric.skipped) == 2
    assert "does not fit in float64" in rep.numeric.skipped[0]


def test_a_failing_numeric_check_does_not_change_the_verdict(monkeypatch):
    import symverify.executors as ex
    from symverify.executors.numeric import NumericCheck

    bad = NumericCheck("torch", "float64", "cpu", "auto", 2, 1.0, 0.5, 1e-12, 2.0, False)
    monkeypatch.setattr(ex, "numeric_check", lambda *a, **k: bad)
    rep = verify(SQUARE_C, SQUARE_M, method="exact", numeric=True)
    assert rep.proved and not rep.numeric.passed and rep.numeric.max_abs_err == 1.0
    assert "FAILED" in str(rep) and any("exceeded its own error bound" in n for n in rep.notes)


def test_numeric_validation():
    with pytest.raises(UsageError, match="numeric: expected False, True or one of 'float64'"):
        verify(SQUARE_C, SQUARE_M, numeric="float16")
    with pytest.raises(UsageError, match="numeric: expected"):
        verify(SQUARE_C, SQUARE_M, numeric=1.0)


def test_calibrate_measures_every_constant_of_the_cost_model():
    measured = engine_cost.calibrate()
    assert set(measured) == set(engine_cost.COSTS)
    assert all(v >= 0 and v == v and v < 1 for v in measured.values()), measured
    assert measured["PY_GATE"] > 0 and measured["TORCH_LAYER"] > 0  # every engine does some work per unit
