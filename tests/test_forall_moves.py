"""The gather and scatter layers (``d`` not a power of two) as ∀-proved definitions: proved for every
size and every set of occupied / output cells, and every mutation of the compiler's layers — a tap
off by one, a gate on the wrong rows, a wrong channel test, a stride misread — refuted at a concrete
size outside the instance sweeps, re-checked by instantiation (by the prover before it reports, and
here once more through the built layers)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from symverify.errors import SymverifyError
from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric.concrete import cell_value, instantiate, spec_at
from symverify.kernel.parametric.expr import ge, lt, pred, predicates, var, where
from symverify.kernel.parametric.gadget import Gadget, tap
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import library as lib

i, q = var("i"), var("q")
N, n, tw, D = var("N"), var("n"), var("tw"), var("d")
SIZES = {"N": (1 << 10, 1 << 11), "d": (3, 7)}  # N'·d' ≤ 2^14: the re-check builds the instance


def _mutate(g: Gadget, k: int, **fields: Any) -> Gadget:
    layers = list(g.layers)
    layers[k] = dataclasses.replace(layers[k], **fields)
    return dataclasses.replace(g, name=g.name + "_mutant", layers=tuple(layers))


def u(r: int, c: int) -> Any:
    return sym(f"u_{r}_{c}")


@pytest.mark.parametrize("make", [lib.gather, lib.scatter], ids=lambda f: f.__name__)
def test_proved_for_all_sizes_and_placements(make: Any) -> None:
    res = prove_forall(make())
    assert res.verdict == "proved", str(res)
    assert "tw ∈ [1, 2^20]" in res.ranges


def _refuted(mutant: Gadget, name: str) -> None:
    """Refuted at ``N' ≥ 2^10`` (no instance sweep goes there), small enough for the re-check to build
    the instance and confirm the witness's placement against ``assume`` at every cell; then the
    mutant is evaluated through its layers with another placement satisfying ``assume`` (every cell
    of the input rows) and differs from the spec on the witness's rows."""
    res = prove_forall(mutant, ranges=SIZES)
    assert res.verdict == "refuted", str(res)
    assert res.params["N"] >= 1 << 10 and res.cell is not None and "≠" in res.detail
    env = res.params
    a = res.cell[0]
    rows = {a, a % env["n"], min(a + env["n"], env["N"] - 1)}
    with predicates({name: lambda r, c: r < env["n"]}):
        diffs = [(r, c) for r in rows for c in range(env["d"]) if cell_value(mutant, env, r, c, u) != spec_at(mutant, env, r, c, u)]
    assert diffs, (env, res.cell)


def test_gather_tap_off_by_one_refuted() -> None:
    lo = lt(q, tw)
    _refuted(_mutate(lib.gather(), 0, h=(tap(0, 1, lo), tap(n + 1, 1, ~lo))), "IN")


def test_gather_gate_on_wrong_rows_refuted() -> None:
    lo = lt(q, tw)
    bad = where(lo & pred("IN", i, q), 1, where(~lo & ge(i, n + 1) & pred("IN", i - n, q), 1))
    _refuted(_mutate(lib.gather(), 0, b1=bad), "IN")


def test_gather_wrong_channel_test_refuted() -> None:
    up = q + tw
    _refuted(_mutate(lib.gather(), 1, W=(tap(q, 1, lt(q, tw)), tap(up, 1, lt(q, tw) & lt(up + 1, D)))), "IN")


def test_scatter_stride_misread_refuted() -> None:
    lo = lt(q, tw)
    _refuted(_mutate(lib.scatter(), 1, h=(tap(0, 1, lo), tap(N - n - 1, 1, ~lo))), "OUT")


def test_scatter_bias_on_wrong_block_refuted() -> None:
    # the moved channels gated on the output rows instead of n rows below them
    _refuted(_mutate(lib.scatter(), 0, b2=where(pred("OUT", i, q), 1)), "OUT")


def test_a_placement_breaking_assume_is_refused() -> None:
    with pytest.raises(SymverifyError, match="violates"):
        instantiate(lib.gather(), {"N": 8, "d": 3, "n": 2, "tw": 2}, placement={"IN": {(2, 0)}})
    with pytest.raises(SymverifyError, match="violates"):
        instantiate(lib.scatter(), {"N": 8, "d": 3, "n": 2, "tw": 2}, placement={"OUT": {(3, 1)}})


@pytest.mark.parametrize("seed", range(12))
def test_a_witness_placement_free_at_unconstrained_cells_is_repaired(seed: int) -> None:
    """With some z3 seeds (1 and 6 in a fresh process) the model of ``IN`` is true at a cell no query constrained (a row ``≥ n``),
    so the placement read off it breaks ``assume``; the prover drops such cells, re-checks, and
    still refutes the mutant (it was ``unknown`` before)."""
    import z3

    lo = lt(q, tw)
    try:
        z3.set_param("smt.random_seed", seed)
        z3.set_param("sat.random_seed", seed)
        res = prove_forall(_mutate(lib.gather(), 0, h=(tap(0, 1, lo), tap(n + 1, 1, ~lo))), ranges=SIZES)
    finally:
        z3.set_param("smt.random_seed", 0)
        z3.set_param("sat.random_seed", 0)
    assert res.verdict == "refuted", str(res)


def test_gather_is_proved_for_every_input_state() -> None:
    """The gather's statement has no ``entry`` restriction: cells outside ``IN`` may hold anything and
    end 0. A mutant that moves every cell of the input rows (``b1`` and ``b2`` not gated on ``IN``) is
    refuted; the same mutant with the input assumed 0 outside ``IN`` (the former statement) is proved,
    so the stronger statement is what rules it out."""
    lo = lt(q, tw)
    everything = _mutate(_mutate(lib.gather(), 0, b1=where(lo & lt(i, n), 1, where(~lo & ge(i, n) & lt(i, 2 * n), 1))),
                         1, b2=where(lo & lt(i, 2 * n), 1))
    assert lib.gather().entry == everything.entry and str(lib.gather().entry) == "true"
    res = prove_forall(everything, ranges=SIZES)
    assert res.verdict == "refuted", str(res)
    assert prove_forall(dataclasses.replace(everything, entry=pred("IN", i, q)), ranges=SIZES).verdict == "proved"
