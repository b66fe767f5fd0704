"""Adversarial inputs to the ∀-prover: each must be refused, refuted or unknown — never a false
"proved for all" (docs/forall.md §1, §3)."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.kernel.parametric.expr import FALSE, ParametricError, eq, ite, pow2, where
from symverify.parametric import Gadget, Param, PLayer, fam, inp, lt, tap, var

i, q, N, m = var("i"), var("q"), var("N"), var("m")


def _copy(params: tuple[Param, ...], rows: object, spec: object, **kw: object) -> Gadget:
    """A one-layer identity (lag 0, cyclic) with the given specification."""
    return Gadget("g", params, rows, 1, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),), spec, **kw)  # type: ignore[arg-type]


def test_parameter_range_beyond_64_bits_is_refused() -> None:
    # 2^64 wrapped to 0 in the bit-vector encoding made the ranges empty: a wrong gadget was "proved"
    with pytest.raises(ParametricError, match=r"hi < 2\^64"):
        Param("N", 1, 2**64)


def test_condition_never_true_is_refused_not_proved() -> None:
    with pytest.raises(ParametricError, match="vacuous"):
        sv.prove_forall(_copy((Param("N", 1, 10),), N, inp(i, q) * 2, where=lt(N, 1)))


def test_care_never_true_is_refused_not_proved() -> None:
    with pytest.raises(ParametricError, match="vacuous"):
        sv.prove_forall(_copy((Param("N", 1, 10),), N, inp(i, q) * 2, care=FALSE))


def test_condition_undefined_at_small_sizes_is_refused() -> None:
    # (N − 50) is undefined below 50: those sizes must not drop silently out of the claim
    g = Gadget("g", (Param("N", 1, 100),), N, 1,
               (PLayer(b1=where(lt(N, 50), 2, 1), h=(tap(0),), mode="cyclic"),), inp(i, q), where=lt(N - 50, 100))
    with pytest.raises(ParametricError, match="undefined"):
        sv.prove_forall(g)


def test_family_named_like_the_input_cells_is_refused() -> None:
    with pytest.raises(ParametricError, match="reserved"):
        fam("in", i, q)


def test_family_used_with_two_arities_is_refused() -> None:
    # B[0] and B[0, 0] are different symbols in an instance; the key encoding padded them equal
    g = Gadget("g", (Param("N", 1, 10),), N, 1, (PLayer(b1=fam("B", 0), h=(tap(0),), mode="cyclic"),),
               fam("B", 0, 0) * inp(i, q))
    with pytest.raises(ParametricError, match="indices"):
        sv.prove_forall(g)


def test_off_by_one_at_m_39_only_is_refuted_and_rechecked() -> None:
    g = Gadget("g", (Param("m", 0, 40),), pow2(m), 1,
               (PLayer(b1=1, h=(tap(ite(eq(m, 39), 1, 0)),), mode="cyclic"),), inp(i, q))
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED
    assert r.params == {"m": 39}
    assert "concrete interpretation" in r.detail


def test_overflow_at_huge_sizes_only_is_refused() -> None:
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1, (PLayer(b1=1, h=(tap((N * 2**30) >> 40),), mode="cyclic"),), inp(i, q))
    with pytest.raises(ParametricError, match="undefined or out of range"):
        sv.prove_forall(g)


def test_division_by_zero_at_one_huge_size_only_is_refused() -> None:
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1,
               (PLayer(b1=1, h=(tap((N // ite(eq(N, 2**39), 0, 1)) % N),), mode="cyclic"),), inp(i, q))
    with pytest.raises(ParametricError, match="undefined or out of range"):
        sv.prove_forall(g)


@pytest.mark.parametrize("where", ["tap", "spec"])
@pytest.mark.parametrize("bad", ["shift", "div"])
def test_a_constant_shift_beyond_the_width_or_division_by_zero_is_refused(where: str, bad: str) -> None:
    """Linear-looking index expressions the integer encoding cannot take (a shift by a constant
    ``≥ 64``, ``// 0``) are refused as undefined, not an internal error."""
    x = (sv.parametric.lit(0) << 64) if bad == "shift" else N // 0
    lag, row = (x, i) if where == "tap" else (0, i + x)
    g = Gadget("g", (Param("N", 1, 2**10),), N, 1, (PLayer(b1=1, h=(tap(lag),), mode="cyclic"),), inp(row, q))
    with pytest.raises(ParametricError, match="undefined or out of range"):
        sv.prove_forall(g)


@pytest.mark.parametrize("rng", [(1.5, 3), "ab", (1, 2, 3), (True, 3)])
def test_malformed_ranges_are_refused(rng: object) -> None:
    with pytest.raises(ParametricError, match="pair"):
        sv.prove_forall(_copy((Param("N", 1, 10),), N, inp(i, q)), ranges={"N": rng})  # type: ignore[dict-item]


@pytest.mark.parametrize("t", [0, -1, float("nan"), float("inf"), "5"])
def test_malformed_timeouts_are_refused(t: object) -> None:
    with pytest.raises(ParametricError, match="timeout_s"):
        sv.prove_forall(_copy((Param("N", 1, 10),), N, inp(i, q)), timeout_s=t)  # type: ignore[arg-type]


@pytest.mark.parametrize("t", [0, -1, float("nan"), float("inf"), "5", True])
def test_malformed_timeout_is_refused_under_either_name(t: object) -> None:
    with pytest.raises(ParametricError, match=r"prove_forall timeout: expected a positive(, finite)? number"):
        sv.prove_forall(_copy((Param("N", 1, 10),), N, inp(i, q)), timeout=t)  # type: ignore[arg-type]


def test_timeout_and_timeout_s_together_are_refused() -> None:
    with pytest.raises(ParametricError, match="timeout or timeout_s"):
        sv.prove_forall(_copy((Param("N", 1, 10),), N, inp(i, q)), timeout=5, timeout_s=5)


@pytest.mark.parametrize("kw, ms", [({"timeout": 7}, 7000), ({"timeout_s": 7}, 7000), ({}, 60000)])
def test_timeout_is_the_bound_of_the_call(monkeypatch: pytest.MonkeyPatch, kw: dict[str, float], ms: int) -> None:
    """With the clock stopped, every z3 query gets the whole budget: exactly the ``timeout`` given
    (under either name; 60 s by default), in milliseconds."""
    import types

    import symverify.kernel.provers.forall as fa

    z3 = fa._z3()
    seen: list[int] = []

    def try_for(t: object, budget: int) -> object:
        seen.append(budget)
        return z3.TryFor(t, budget)

    class Solver:
        def __init__(self, s: object) -> None:
            self.s = s

        def set(self, key: str, value: int) -> None:
            seen.append(value)
            self.s.set(key, value)  # type: ignore[attr-defined]

        def __getattr__(self, name: str) -> object:
            return getattr(self.s, name)

    spy = types.SimpleNamespace(TryFor=try_for, Solver=lambda: Solver(z3.Solver()),
                                SolverFor=lambda logic: Solver(z3.SolverFor(logic)))
    monkeypatch.setattr(fa, "_z3", lambda: types.SimpleNamespace(**{**vars(z3), **vars(spy)}))
    monkeypatch.setattr(fa, "time", types.SimpleNamespace(perf_counter=lambda: 100.0))
    r = sv.prove_forall(_copy((Param("N", 1, 10),), N, inp(i, q)), **kw)  # type: ignore[arg-type]
    assert r.proved and seen and set(seen) == {ms}, seen


def test_correct_gadget_still_proved() -> None:
    assert sv.prove_forall(_copy((Param("N", 1, 2**40),), N, inp(i, q))).proved


def test_a_family_named_like_the_recheck_inputs_is_refuted_not_a_prover_error() -> None:
    # the re-check named inputs u_r_c and family members name_i_j: a family "u" collided with the input
    g = Gadget("g", (Param("N", 1, 4),), N, 1, (PLayer(b1=fam("u", i, q), h=(tap(0),), mode="cyclic"),), inp(i, q) * inp(i, q))
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED


def test_families_whose_flat_names_collide_are_kept_apart() -> None:
    # B[1, 2] and B_1[2] were both the symbol B_1_2 in the re-check
    g = Gadget("g", (Param("N", 1, 4),), N, 1, (PLayer(b1=fam("B", 1, 2), h=(tap(0),), mode="cyclic"),),
               fam("B_1", 2) * inp(i, q))
    assert sv.prove_forall(g).verdict is sv.Verdict.REFUTED


def test_a_tiny_timeout_bounds_every_query_and_answers_unknown() -> None:
    from symverify.parametric import library

    r = sv.prove_forall(library.butterfly_sequence(), timeout_s=0.05)
    # under load the budget may run out while the terms are expanded, before any z3 term is built
    assert r.verdict is sv.Verdict.UNKNOWN and ("z3" in r.detail or "(timeout)" in r.detail), r


def test_a_short_circuit_condition_defined_everywhere_is_accepted() -> None:
    # (N − 50) is only evaluated where N < 50 fails: defined at every N, so not refused
    g = _copy((Param("N", 1, 100),), N, inp(i, q), where=lt(N, 50) | lt(N - 50, 10))
    r = sv.prove_forall(g)
    assert r.proved and "N < 50" in r.ranges
