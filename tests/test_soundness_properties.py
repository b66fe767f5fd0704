"""Soundness properties: no method proves a pair that differs, and every refutation re-checks.

Pairs come from :mod:`symverify.mutate` applied to hypothesis-drawn circuits and models and to
compiled models and their certificates (symbolic weights included). Ground truth and the
counterexample check come from the mutation campaign's reference interpreter
(``benchmarks/mutation_campaign.py``): docs/theory.md §1–§2 written out again over sympy's polynomial ring,
independent of :mod:`symverify.semantics` and of the flint engine. The campaign's quick tier runs
here too and must find no false proof.
"""

import importlib.util
import pathlib
import sys

import pytest
from hypothesis import assume, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify import mutate
from symverify.errors import UsageError
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.verification import verify
from symverify.testing import circuits, models


def _load_campaign():
    path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "mutation_campaign.py"
    spec = importlib.util.spec_from_file_location("mutation_campaign", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


campaign = _load_campaign()
ALL = ("exact", "exact-sympy", "randomized", "z3", "auto")
seeds = st.integers(0, 10**6)


def check_sound(lhs, rhs, methods=ALL, certificate=None) -> bool:
    """Run ``methods``; none may prove a differing pair; every refutation must re-check independently.
    Returns whether the pair is equal (the ground truth)."""
    equal = campaign.same_polynomials(lhs, rhs)
    if currently_in_test_context():  # hypothesis statistics: how many drawn pairs really differ
        event("equal pair" if equal else "differing pair")
    for method in methods:
        kwargs = {"certificate": certificate} if certificate is not None and method in ("compositional", "auto") else {}
        report = verify(lhs, rhs, method=method, timeout=20, **kwargs)
        assert equal or not report.proved, f"FALSE PROOF by {method}: {report}"
        if report.refuted:
            assert not equal, f"{method} refuted an equal pair: {report}"
            problem = campaign.confirm_counterexample(lhs, rhs, report.counterexample)
            assert problem is None, f"{method}: {problem}"
    return equal


def _mutant(make):
    try:
        return make()
    except UsageError:  # the operator has nothing to act on in this object
        assume(False)


@settings(max_examples=30)
@given(circuits(max_n=2, max_d=2, max_gates=8, allow_sym=True, min_outputs=1), seeds)
def test_mutated_circuits_are_never_falsely_proved(c, seed):
    symbol = "a" if seed % 2 else "m"
    mu = _mutant(lambda: mutate.gate_mutant(c, seed, tuple(mutate.GATE_OPERATORS), symbol=symbol, live=True))
    check_sound(c, mu.obj)


@settings(max_examples=20)
@given(circuits(max_n=2, max_d=2, max_gates=6, allow_sym=True, min_outputs=1), st.sampled_from(["dense", "kaleidoscope"]), seeds)
def test_mutated_compiled_models_with_the_old_certificate_are_never_falsely_proved(c, compiler, seed):
    comp = sv.compile(c, method=compiler)
    assume(comp.model.layers)
    mu = _mutant(lambda: mutate.weight_mutant(comp.model, seed, tuple(mutate.WEIGHT_OPERATORS)))
    check_sound(c, mu.obj, ("compositional", *ALL), certificate=comp.certificate)


@settings(max_examples=20)
@given(circuits(max_n=2, max_d=2, max_gates=6, allow_sym=True, min_outputs=1), st.sampled_from(["dense", "kaleidoscope"]), seeds,
       st.booleans())
def test_mutated_certificates_never_prove_a_difference_nor_refute_an_equality(c, compiler, seed, also_weight):
    comp = sv.compile(c, method=compiler)
    cm = _mutant(lambda: mutate.certificate_mutant(comp.certificate, c.num_nodes, seed))
    model = comp.model
    if also_weight:
        model = _mutant(lambda: mutate.weight_mutant(model, seed)).obj
    check_sound(c, model, ("compositional", "auto"), certificate=cm.obj)


@settings(max_examples=30)
@given(models(max_n=3, max_d=2, max_layers=2), seeds, st.sampled_from(["m", "a"]))
def test_models_with_symbolic_weights_are_never_falsely_proved(m, seed, symbol):
    assume(m.layers)
    base = _mutant(lambda: mutate.weight_mutant(m, seed, ("sym",), symbol="a")).obj  # one symbolic weight a
    mu = _mutant(lambda: mutate.weight_mutant(base, seed + 1, tuple(mutate.WEIGHT_OPERATORS), symbol=symbol))
    check_sound(base, mu.obj)


def test_symbolic_grid_model_against_its_mutants():
    """Every weight symbolic (statements "for all weights"): each single change is refuted or invisible."""
    from symverify.kernel.ir.baseconv import Layer, Model

    layer = Layer(Grid.symbolic("W", 2, 2), Grid.symbolic("B", 2, 2), Grid.symbolic("H", 2, 2), Grid.zeros(2, 2).paint(0, 1, 0, 2, 1))
    m = Model(2, 1, 2, 2, (layer,), "symbolic")
    refuted = 0
    for mu in mutate.mutants(lambda s: mutate.weight_mutant(m, s, ("inc", "neg", "zero", "sym"), symbol="W[0][0]"), 12):
        refuted += not check_sound(m, mu.obj)
    assert refuted >= 6


def test_sym_weight_equal_to_its_own_polynomial_is_proved():
    """Sanity: mutants are not differences by construction; ``a·a`` vs ``a²`` weights are equal."""
    from symverify.kernel.ir.baseconv import Layer, Model

    def model(w):
        return Model(1, 1, 1, 1, (Layer(Grid.full(1, 1, w), Grid.zeros(1, 1), Grid.zeros(1, 1), Grid.full(1, 1, 1)),))

    a = sym("a")
    assert check_sound(model(a * a), model(a**2))


def test_campaign_quick_tier_finds_no_false_proof():
    summary = campaign.run_campaign(quick=True)
    assert summary.ok, summary.report()
    for method in campaign.METHODS:  # the campaign did real work for every method
        assert summary.total("refuted", method) > 0, summary.report()
    assert summary.mutants["weight"] >= 20 and summary.mutants["gate"] >= 10


def test_campaign_mutants_are_distinct_in_both_tiers():
    """The full tier drew 32 gate mutants per subject whatever the subject had: 24 of its 2040 pairs
    repeated a gate mutant of the same subject (``determinant(2)`` has 21 distinct live ones). Each
    subject now gives its distinct mutants only, and the tier builds."""
    from symverify.kernel.ir.certificate import Certificate
    from symverify.kernel.provers.fingerprint import content_digest

    def key(side):
        return side if isinstance(side, Certificate) else (type(side).__name__, content_digest(side))

    for quick in (True, False):
        cases = campaign.build_cases(quick)
        keys = [(c.family, c.subject, key(c.lhs), key(c.rhs), None if c.certificate is None else key(c.certificate))
                for c in cases]
        assert len(set(keys)) == len(keys)
    assert len(cases) == 2016


@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
def test_campaign_reference_interpreter_matches_symverify(method):
    """The campaign's ground truth agrees with ``sv.polynomials`` on compiled library models."""
    from symverify import library
    from symverify.kernel.semantics.poly import polynomials, shared_ring

    c = library.determinant(2)
    comp = sv.compile(c, method=method)
    assert campaign.same_polynomials(c, comp.model)
    for mu in mutate.mutants(lambda s: mutate.weight_mutant(comp.model, s, tuple(mutate.WEIGHT_OPERATORS)), 20):
        ring = shared_ring(c, mu.obj, backend="sympy")
        truth = polynomials(c, ring) == polynomials(mu.obj, ring)
        assert campaign.same_polynomials(c, mu.obj) == truth, str(mu)
