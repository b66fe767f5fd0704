"""Mutants as a campaign asks for them, at the edges: the name of the parameter the ``sym`` and
``coeff_sym`` mutants write is checked whatever operator the seed draws (a bad name failed, with an
IRError naming no argument, only for the seeds that drew those operators), and operator ``one``
finds the zero cells of a model that is nearly all nonzero."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify import mutate
from symverify.errors import UsageError
from symverify.kernel.ir.circuit import Circuit, Gate

X = Circuit(1, 2, (Gate.mul(0, 1), Gate.lin(2, 2, 0, -1)), (3, 2))
MODEL = sv.compile(X, method="dense").model
BAD = ["1x", "", "a b", 5, None, b"m"]


@settings(max_examples=30, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(BAD), st.integers(0, 10**6), st.sampled_from([("inc",), ("sym",), tuple(mutate.WEIGHT_OPERATORS)]))
def test_weight_mutant_refuses_a_bad_symbol_for_every_seed_and_operator(symbol, seed, operators):
    with pytest.raises(UsageError, match=r"weight_mutant: symbol: a parameter name must be an identifier"):
        mutate.weight_mutant(MODEL, seed, operators, symbol=symbol)


@settings(max_examples=30, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(BAD), st.integers(0, 10**6), st.sampled_from([("op",), ("coeff_sym",), tuple(mutate.GATE_OPERATORS)]))
def test_gate_mutant_refuses_a_bad_symbol_for_every_seed_and_operator(symbol, seed, operators):
    with pytest.raises(UsageError, match=r"gate_mutant: symbol: a parameter name must be an identifier"):
        mutate.gate_mutant(X, seed, operators, symbol=symbol)


@pytest.mark.parametrize("symbol", ["1x", "", 5])
def test_single_mutations_name_a_bad_symbol(symbol):
    site = mutate.weight_sites(MODEL)[0]
    with pytest.raises(UsageError, match=r"mutate_weight: symbol: a parameter name must be an identifier"):
        mutate.mutate_weight(MODEL, site, "sym", symbol=symbol)
    with pytest.raises(UsageError, match=r"mutate_gate: symbol: a parameter name must be an identifier"):
        mutate.mutate_gate(X, 1, "coeff_sym", symbol=symbol)


def test_a_campaign_with_a_bad_symbol_says_so_instead_of_crashing_on_some_seed():
    with pytest.raises(UsageError, match=r"mutants: no seed from 0 to \d+ gave a mutant; the last said: weight_mutant: symbol"):
        mutate.mutants(lambda s: mutate.weight_mutant(MODEL, s, symbol="1x"), 6)


def test_a_good_symbol_is_written():
    m = mutate.weight_mutant(MODEL, 0, ("sym",), symbol="w.x[2]")
    assert "w.x[2]" in m.obj.params() and "w.x[2]" in m.site
    g = mutate.gate_mutant(X, 0, ("coeff_sym",), symbol="c1")
    assert g.obj.params() == {"c1"}


def _dense_model(n: int, zeros: set[tuple[str, int, int]]) -> sv.Model:
    """One causal layer of n×n grids holding 1 everywhere but the cells ``zeros`` (grid, row, col)."""
    grids = [sv.Grid.from_cells(n, n, {(i, j): 1 for i in range(n) for j in range(n) if (name, i, j) not in zeros})
             for name in mutate.GRIDS]
    return sv.Model(n, n, n, n, (sv.Layer(*grids, "causal"),), "dense")


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(st.integers(4, 8), st.data())
def test_operator_one_finds_the_zero_cells_of_a_nearly_dense_model(n, data):
    """``one`` drew 64 random cells and, when all were nonzero, reported "none of the operators ['one']
    applies to this model" although a zero cell was there (39 seeds of 50 on an 8×8 layer with one
    zero); it then draws from the model's listed zero cells."""
    cell = st.tuples(st.sampled_from(mutate.GRIDS), st.integers(0, n - 1), st.integers(0, n - 1))
    zeros = data.draw(st.sets(cell, min_size=1, max_size=2))
    model = _dense_model(n, zeros)
    for seed in range(12):
        m = mutate.weight_mutant(model, seed, ("one",))
        site = m.site.split(":")[0]
        assert any(site == f"layer 0 {g}[{i}][{j}]" for g, i, j in zeros), m
        assert m.site.endswith("0 → 1")


def test_operator_one_on_a_model_without_zero_cells_still_says_it_does_not_apply():
    with pytest.raises(UsageError, match=r"weight_mutant: none of the operators \['one'\] applies to this model"):
        mutate.weight_mutant(_dense_model(3, set()), 0, ("one",))


@pytest.mark.parametrize("nonzero", [True, 0, 2.5, "W", frozenset(mutate.weight_sites(MODEL)),
                                     (s for s in mutate.weight_sites(MODEL))],
                         ids=["True", "0", "2.5", "str", "frozenset", "generator"])
def test_weight_mutant_refuses_precomputed_sites_that_are_no_list(nonzero):
    """``weight_mutant(model, s, nonzero=True)`` (the flag of ``weight_sites``) raised TypeError ('bool'
    object is not iterable); a set of sites was drawn from in hash order, so the same seed gave another
    mutant in another process."""
    with pytest.raises(UsageError, match=r"weight_mutant: nonzero: expected None or the list weight_sites\(model\)"):
        mutate.weight_mutant(MODEL, 0, nonzero=nonzero)


def test_weight_mutant_takes_precomputed_sites_as_a_list_or_tuple():
    sites = mutate.weight_sites(MODEL)
    want = str(mutate.weight_mutant(MODEL, 3))
    assert str(mutate.weight_mutant(MODEL, 3, nonzero=sites)) == want == str(mutate.weight_mutant(MODEL, 3, nonzero=tuple(sites)))


def test_mutants_refuses_a_count_above_the_cap_before_trying_any_seed():
    """A count of 10**30 tried seeds without end; it is refused before the first seed."""

    def untouched(s: int) -> mutate.Mutation:
        raise AssertionError(f"seed {s} tried for a count past the cap")

    with pytest.raises(UsageError, match=r"mutants: count: expected at most MAX_MUTANTS = 100000 mutants in one call, found 10{30}"):
        mutate.mutants(untouched, 10**30)
    with pytest.raises(UsageError, match=r"found 100001;"):
        mutate.mutants(untouched, 100_001)
    assert len(mutate.mutants(lambda s: mutate.weight_mutant(MODEL, s), 3)) == 3


ONE_GATE = Circuit(1, 2, (Gate.mul(0, 1),), (2,))


def _key(m: mutate.Mutation) -> object:
    from symverify.kernel.ir.certificate import Certificate
    from symverify.kernel.provers.fingerprint import content_digest

    return m.obj if isinstance(m.obj, Certificate) else content_digest(m.obj)


def test_mutants_are_distinct_and_too_few_are_refused():
    """``mutants(make, 20)`` of a one-gate circuit returned 20 mutants of which only 3 differed: a
    campaign ran the same mutant many times and counted each. Now a mutant with the content of an
    earlier one is skipped, and fewer distinct mutants than asked for raise, saying how many."""
    with pytest.raises(UsageError, match=r"mutants: seeds 0 to 95 gave 3 distinct mutants of the 20 asked for "
                                         r"\(93 seeds repeated an earlier mutant\)"):
        mutate.mutants(lambda s: mutate.gate_mutant(ONE_GATE, s), 20)
    three = mutate.mutants(lambda s: mutate.gate_mutant(ONE_GATE, s), 3)
    assert len({_key(m) for m in three}) == 3
    assert [str(m) for m in mutate.mutants(lambda s: mutate.gate_mutant(ONE_GATE, s), 20, fewer=True)] == [str(m) for m in three]


def test_mutants_compare_by_content_not_by_operator_or_site():
    """Mutants built anew, under other names, with the same content count once: the maker below
    builds a new model on every call, each equal to the first."""
    site = mutate.weight_sites(MODEL)[0]

    def renamed(s: int) -> mutate.Mutation:
        return mutate.Mutation(mutate.mutate_weight(MODEL, site, "inc"), f"inc#{s}", f"site {s}")

    assert len(mutate.mutants(renamed, 1)) == 1
    with pytest.raises(UsageError, match=r"gave 1 distinct mutants of the 2 asked for \(23 seeds repeated"):
        mutate.mutants(renamed, 2)
    with pytest.raises(UsageError, match=r"mutants: fewer: expected True or False, found 'yes'"):
        mutate.mutants(renamed, 1, fewer="yes")
    with pytest.raises(UsageError, match=r"mutants: make\(0\): expected a Mutation whose obj is a Circuit, Model, "
                                         r"Kaleidoscope or Certificate, found int"):
        mutate.mutants(lambda s: mutate.Mutation(5, "x", "y"), 1)

    class Sub(Circuit):
        pass

    sub = Sub(1, 2, (Gate.add(0, 1),), (2,))  # an IRError from the encoder, naming neither mutants nor make
    with pytest.raises(UsageError, match=r"mutants: make\(0\): expected a Mutation whose obj is a Circuit, .*found Sub"):
        mutate.mutants(lambda s: mutate.Mutation(sub, "x", "y"), 1)


@settings(max_examples=15, deadline=None, database=None, derandomize=True)
@given(st.integers(0, 10**6), st.integers(1, 12))
def test_mutants_never_repeat_a_mutant(seed, count):
    for make in (lambda s: mutate.weight_mutant(MODEL, s, tuple(mutate.WEIGHT_OPERATORS)),
                 lambda s: mutate.gate_mutant(X, s, tuple(mutate.GATE_OPERATORS))):
        got = mutate.mutants(make, count, seed, fewer=True)
        assert 1 <= len(got) <= count
        assert len({_key(m) for m in got}) == len(got)
