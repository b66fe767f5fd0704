"""The provers behind one interface: the registry, the Side union, Options.from_call, Verdict everywhere."""

import argparse
import json
import time
from dataclasses import FrozenInstanceError
from fractions import Fraction
from types import SimpleNamespace

import pytest
from cases import BY_ID, QUARTIC_C, QUARTIC_CERT, QUARTIC_M, SQUARE_C, SQUARE_M, SWAP_K

import symverify as sv
from symverify import cli
from symverify.deadline import DeadlineExceededError
from symverify.errors import IRError, UsageError
from symverify.gadgets.primitives import shift_down
from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
from symverify.kernel.provers import registry
from symverify.kernel.provers.compositional import CompositionalResult
from symverify.kernel.provers.exact import expand_compare
from symverify.kernel.provers.fragment import FragmentProof, prove_fragment
from symverify.kernel.provers.matrix import verify_permutation
from symverify.kernel.provers.options import (
    CERTIFICATE_METHODS,
    DEFAULT_ERROR_BOUND,
    DEFAULT_MAX_MONOMIALS,
    METHODS,
    Options,
)
from symverify.kernel.provers.outcome import MethodResult, Verdict
from symverify.kernel.provers.sides import (
    CircuitSide,
    KaleidoscopeSide,
    ModelSide,
    as_side,
    certificate_of,
    pair_sides,
    torch_executable,
)
from symverify.kernel.verification import verify
from symverify.scripts.protocol import ClaimKind, Instance, ProofResult

# ---- the registry ------------------------------------------------------------------------------


def test_every_method_is_a_registered_prover_in_order():
    assert tuple(registry.PROVERS) == METHODS == ("auto", "exact", "exact-sympy", "compositional", "randomized", "z3")
    for name in METHODS:
        assert registry.prover_for(name) is registry.PROVERS[name]
        assert callable(registry.prover_for(name).prove)
    with pytest.raises(TypeError):
        registry.PROVERS["extra"] = registry.Z3Prover()


def test_unknown_method_lists_the_methods():
    for bad in ("nope", "", None, ["exact"]):
        with pytest.raises(UsageError, match="method: expected one of auto, exact, exact-sympy, compositional, randomized, z3"):
            registry.prover_for(bad)
        with pytest.raises(UsageError, match="method: expected one of auto"):
            verify(SQUARE_C, SQUARE_C, method=bad)


def test_cli_offers_exactly_the_registered_methods():
    sub = next(a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction))
    method = next(a for a in sub.choices["verify"]._actions if a.dest == "method")
    assert tuple(method.choices) == METHODS


def test_provers_share_one_signature_and_agree_with_verify():
    a, b = pair_sides(QUARTIC_C, QUARTIC_M, QUARTIC_CERT)
    opts = Options.from_call("auto")
    for name in METHODS:
        timings: dict[str, float] = {}
        res = registry.PROVERS[name].prove(a, b, opts, registry.LazyBounds(a, b, timings))
        assert isinstance(res, MethodResult) and res.verdict is Verdict.PROVED, name
        cert = QUARTIC_CERT if name in CERTIFICATE_METHODS else None
        assert res.verdict is verify(QUARTIC_C, QUARTIC_M, method=name, certificate=cert).verdict


def test_lazy_bounds_are_computed_once_and_timed():
    a, b = pair_sides(QUARTIC_C, QUARTIC_M)
    timings: dict[str, float] = {}
    lazy = registry.LazyBounds(a, b, timings)
    assert lazy.value is None and "bounds" not in timings
    assert lazy() is lazy() and lazy.degree() == 4 and "bounds" in timings


def test_run_prover_turns_the_deadline_into_unknown():
    class Slow:
        def prove(self, a, b, opts, bounds):
            bounds()
            raise DeadlineExceededError()

    a, b = pair_sides(SQUARE_C, SQUARE_M)
    opts = Options.from_call("exact", timeout=5)
    timings: dict[str, float] = {}
    res = registry.run_prover("exact", Slow(), a, b, opts, timings)
    assert res.verdict is Verdict.UNKNOWN and res.notes == ("timeout: 5 s ran out before exact decided",)
    assert "structure" in res.evidence and {"bounds", "method"} <= set(timings)
    late = Options.from_call("exact", timeout=1e-9)
    time.sleep(1e-6)
    early = registry.run_prover("exact", Slow(), a, b, late, {})
    assert early.notes == ("timeout: 1e-09 s ran out before any method started",) and not early.evidence


def test_exact_without_matrix_first_leaves_kaleidoscopes_to_expansion():
    swap = BY_ID["kaleidoscope-swap"]
    a, b = pair_sides(swap.lhs, swap.rhs)
    opts = Options.from_call("exact")
    fast = registry.ExactProver(matrix_first=True).prove(a, b, opts, registry.LazyBounds(a, b, {}))
    slow = registry.ExactProver(matrix_first=False).prove(a, b, opts, registry.LazyBounds(a, b, {}))
    assert fast.method == "exact-matrix" and slow.method == "exact" and fast.verdict is slow.verdict is Verdict.PROVED


# ---- the Side union ----------------------------------------------------------------------------


def test_as_side_gives_one_class_per_kind():
    compiled = sv.compile(QUARTIC_C)
    for obj, cls, kind in ((SQUARE_C, CircuitSide, "circuit"), (SQUARE_M, ModelSide, "model"),
                           (SWAP_K, KaleidoscopeSide, "kaleidoscope"), (compiled, ModelSide, "model")):
        side = as_side(obj)
        assert type(side) is cls and side.kind == kind
    assert certificate_of(as_side(compiled)) is compiled.certificate
    assert certificate_of(as_side(SQUARE_C)) is None and certificate_of(as_side(SWAP_K)) is None
    assert torch_executable(as_side(SQUARE_C)) and torch_executable(as_side(SQUARE_M))
    assert not torch_executable(as_side(SWAP_K))
    with pytest.raises(FrozenInstanceError):
        as_side(SQUARE_C).n = 3
    with pytest.raises(IRError, match="expected a Circuit, Model, Kaleidoscope"):
        as_side(3)


def test_pair_sides_reshapes_kaleidoscopes_and_attaches_certificates():
    perm = permutation_to_kaleidoscope([1, 0, 3, 2])
    c = sv.Circuit(2, 2, (), (1, 0, 3, 2))
    k, circ = pair_sides(perm, c)
    assert isinstance(k, KaleidoscopeSide) and k.shape == (2, 2) and k.label() == "kaleidoscope (2×2)"
    assert isinstance(circ, CircuitSide) and as_side(perm).shape == (4, 1)
    m_left, c_right = pair_sides(QUARTIC_M, QUARTIC_C, QUARTIC_CERT)
    assert isinstance(m_left, ModelSide) and m_left.certificate is QUARTIC_CERT and certificate_of(c_right) is None
    with pytest.raises(IRError, match="neither side is a model"):
        pair_sides(SQUARE_C, SQUARE_C, QUARTIC_CERT)


# ---- Options.from_call ------------------------------------------------------------------------


def test_options_from_call_defaults_and_values():
    opts = Options.from_call("auto")
    assert (opts.seed, opts.trials, opts.deadline, opts.timeout, opts.numeric) == (0, None, None, None, None)
    assert opts.max_monomials == DEFAULT_MAX_MONOMIALS and opts.error_bound == DEFAULT_ERROR_BOUND
    assert opts.modular == "auto" and opts.backend in ("flint", "sympy")
    assert type(Options.from_call("auto", seed=None).seed) is int
    assert Options.from_call("exact-sympy").backend == "sympy"
    assert Options.from_call("randomized", backend="python").modular == "python"
    timed = Options.from_call("randomized", timeout=2.5, error_bound=Fraction(1, 8), trials=3)
    assert timed.timeout == 2.5 and timed.deadline is not None and timed.error_bound == Fraction(1, 8) and timed.trials == 3


@pytest.mark.parametrize("method", ["randomized", "z3"])
@pytest.mark.parametrize("backend", ["flint", "sympy"])
def test_an_exact_engine_for_a_method_that_expands_nothing_is_refused(method, backend):
    """``verify(method='randomized'|'z3', backend='flint'|'sympy')`` ignored the engine."""
    from symverify.kernel.provers.options import EXACT_ENGINE_METHODS

    with pytest.raises(UsageError, match=rf"backend='{backend}': an exact engine, which only methods 'auto', .* use; found method '{method}'"):
        verify(QUARTIC_C, QUARTIC_M, method=method, backend=backend)
    for m in EXACT_ENGINE_METHODS:
        if m != "exact-sympy" or backend == "sympy":
            assert Options.from_call(m, backend=backend).backend == backend


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name,value", [("trials", 3), ("max_monomials", 10), ("isolate", False)])
def test_a_budget_the_method_never_reads_is_refused(method, name, value):
    """``trials`` with ``exact``, ``max_monomials`` with ``randomized``, ... were ignored; they are
    UsageErrors naming the methods that read them, and accepted by those methods."""
    from symverify.kernel.provers.options import READ_BY

    if method in READ_BY[name]:
        assert getattr(Options.from_call(method, **{name: value}), name) == value
        return
    with pytest.raises(UsageError, match=rf"{name}={value!r}: only methods .*'auto'.* read it; found method '{method}'"):
        verify(QUARTIC_C, QUARTIC_M, method=method, **{name: value})


def _read_by_cases() -> list[tuple[str, str]]:
    from symverify.kernel.provers.options import READ_BY

    return [(name, method) for name, methods in READ_BY.items() for method in methods]


@pytest.mark.parametrize("name,method", _read_by_cases())
def test_every_method_read_by_lists_reads_the_budget(name, method, monkeypatch):
    """``READ_BY`` names only methods whose result the budget changes (the test above only checks
    that they accept it): ``trials=40`` runs 40 trials (``auto`` once ``max_monomials=0`` sends it
    to randomized); ``max_monomials=0`` refuses exact expansion and stage checks; ``isolate=True``
    runs the expansion in a child process, and ``compositional`` hands ``isolate`` to its stage
    checks (``isolate=False`` keeps a large stage in-process; these stages are small)."""
    kw: dict = {"certificate": QUARTIC_CERT} if method == "compositional" else {}
    if name == "trials":
        extra = {"max_monomials": 0} if method == "auto" else {}
        rep = verify(QUARTIC_C, QUARTIC_M, method=method, trials=40, **extra, **kw)
        assert rep.proved and rep.method == "randomized" and rep.evidence["k"] == 40
    elif name == "max_monomials":
        rep = verify(QUARTIC_C, QUARTIC_M, method=method, max_monomials=0, **kw)
        assert rep.method == "randomized" if method == "auto" else rep.verdict is sv.Verdict.UNKNOWN
        assert "max_monomials" in " ".join(rep.notes) or "> max" in " ".join(rep.notes)
    elif method == "compositional":
        from symverify.kernel.provers import certified

        seen = []
        real = certified.check_certificate
        monkeypatch.setattr(certified, "check_certificate", lambda *a, **k: seen.append(k["isolate"]) or real(*a, **k))
        assert verify(QUARTIC_C, QUARTIC_M, method=method, isolate=False, **kw).proved and seen == [False]
    else:
        rep = verify(QUARTIC_C, QUARTIC_M, method=method, isolate=True, **kw)
        assert rep.proved and rep.evidence["ran"] == "subprocess"
        assert verify(QUARTIC_C, QUARTIC_M, method=method, **kw).evidence["ran"] == "in-process"


@pytest.mark.parametrize("kwargs,match", [
    ({"backend": "gpu"}, "backend: expected 'flint' or 'sympy'"),
    ({"seed": "s"}, "seed: expected an int"),
    ({"max_monomials": -1}, "max_monomials: expected an int ≥ 0"),
    ({"memory_limit": 0}, "memory_limit: expected an int ≥ 1"),
    ({"error_bound": 2}, "error_bound: expected a number strictly between 0 and 1"),
    ({"timeout": 0}, "timeout: expected a positive number of seconds"),
    ({"trials": 0}, "trials: expected a positive int"),
    ({"numeric": "float16"}, "numeric: expected False, True or one of 'float64'"),
])
def test_options_from_call_messages_match_verify(kwargs, match):
    with pytest.raises(UsageError, match=match):
        Options.from_call("auto", **kwargs)
    with pytest.raises(UsageError, match=match):
        verify(SQUARE_C, SQUARE_C, **kwargs)


def test_options_from_call_checks_the_backend_against_the_method():
    with pytest.raises(UsageError, match="method 'exact-sympy' uses the sympy backend"):
        Options.from_call("exact-sympy", backend="flint")
    with pytest.raises(UsageError, match="applies to method 'randomized' only, found method 'exact'"):
        Options.from_call("exact", backend="torch")


# ---- Verdict everywhere ------------------------------------------------------------------------


def test_kaleidoscope_check_verdict_is_a_verdict():
    good = verify_permutation(permutation_to_kaleidoscope([1, 0, 2]), [1, 0, 2])
    bad = verify_permutation(permutation_to_kaleidoscope([1, 0, 2]), [0, 1, 2])
    assert good.verdict is Verdict.PROVED and good.proved and str(good).startswith("proved (exact-matrix)")
    assert bad.verdict is Verdict.REFUTED and not bad.proved and str(bad).startswith("refuted (exact-matrix)")


def test_fragment_proof_verdict():
    assert prove_fragment(shift_down(3, 1, 1)).verdict is Verdict.PROVED
    assert FragmentProof("f", True, None).verdict is Verdict.PROVED
    assert FragmentProof("f", False, True).verdict is Verdict.UNKNOWN
    assert FragmentProof("f", False, False).verdict is Verdict.REFUTED


def test_exact_outcome_verdicts():
    a, b = pair_sides(SQUARE_C, QUARTIC_M)
    assert expand_compare(a, a, "flint", 10**6, None).verdict is Verdict.PROVED
    differ = expand_compare(a, b, "flint", 10**6, None)
    assert differ.verdict is Verdict.REFUTED and differ.cell == (0, 0) and differ.stopped == ""
    over = expand_compare(*pair_sides(QUARTIC_C, QUARTIC_M), "flint", 0, None)
    assert over.verdict is Verdict.UNKNOWN and over.stopped == "budget" and "max_monomials = 0" in over.detail


def test_instance_kinds_and_their_verdicts():
    report = verify(SQUARE_C, SQUARE_C, method="exact")
    inst = Instance.from_report("claim", report, resources={"layers": 1}, bounds={"layers": 2})
    assert inst.verdict is Verdict.PROVED and inst.kind is ClaimKind.PROVER and inst.method == "exact" and inst.ok
    computed = Instance.computed("rank", False, "exact rank over Q", "rank")
    assert computed.verdict is Verdict.REFUTED and computed.kind is ClaimKind.COMPUTED and not computed.ok
    assert Instance.computed("rank", None, "exact rank over Q", "rank").verdict is Verdict.UNKNOWN
    argued = Instance.argued("lemma", "docs/theory.md § Choice (causality)", checks=True)
    assert argued.verdict is Verdict.UNKNOWN and argued.ok and not argued.proved
    assert not Instance.argued("lemma", "docs/theory.md § Choice (causality)", checks=False).ok


def test_from_report_combines_verdicts_refuted_first():
    proved = verify(SQUARE_C, SQUARE_C, method="exact")
    refuted = verify(SQUARE_C, QUARTIC_M, method="exact")
    stopped = verify(QUARTIC_C, QUARTIC_M, method="exact", max_monomials=0)
    assert stopped.verdict is Verdict.UNKNOWN and refuted.verdict is Verdict.REFUTED
    assert Instance.from_report("x", proved, stopped).verdict is Verdict.UNKNOWN
    assert Instance.from_report("x", proved, stopped, refuted).verdict is Verdict.REFUTED
    assert Instance.from_report("x", proved, proved).method == "exact"


@pytest.mark.parametrize("make, match", [
    (lambda: Instance("claim", "proved", "exact", kind=ClaimKind.PROVER), "verdict: expected a Verdict .* found str 'proved'"),
    (lambda: Instance("claim", True, "exact", kind=ClaimKind.PROVER), "verdict: expected a Verdict .* found bool True"),
    (lambda: Instance.from_report("claim", True), "expected a prover's outcome with a verdict .* found bool"),
    (lambda: Instance.from_report("claim", CompositionalResult(True, 1, 1), SimpleNamespace(verdict=Verdict.PROVED)),
     "expected a prover's outcome with a verdict .* found SimpleNamespace"),
    (lambda: Instance.computed("claim", True, "  ", "rank"), "a computed claim names its exact computation; found none"),
    (lambda: Instance.computed("claim", 1, "rank", "rank"), "expected True, False or None, found int 1"),
    (lambda: Instance.argued("claim", "theory.md"), "cites .* as 'docs/FILE.md § SECTION', found 'theory.md'"),
    (lambda: Instance.argued("claim", "docs/theory.md §"), "found 'docs/theory.md §'"),
    (lambda: Instance("claim", Verdict.PROVED, "lemma", kind=ClaimKind.ARGUED, basis="docs/theory.md § 4"),
     "an argued claim is not decided by the tool; its verdict must be unknown, found proved"),
    (lambda: Instance("claim", Verdict.PROVED, "exact", kind="guessed"), "kind: expected one of prover, computed, argued"),
    (lambda: Instance("claim", Verdict.PROVED, "exact", kind=ClaimKind.PROVER, checks=True), "checks= belongs to argued claims"),
    (lambda: Instance.computed("claim", True, "rank", "eyeballing"), "method 'eyeballing': expected words from"),
])
def test_instance_validation(make, match):
    with pytest.raises(UsageError, match=match):
        make()


def test_instance_json_and_table_write_the_verdict_and_the_kind():
    report = verify(SQUARE_C, SQUARE_C, method="exact")
    result = ProofResult("demo", "Demo", [
        Instance.from_report("a", report, resources={"layers": 1}, bounds={"layers": 2}),
        Instance.computed("b", None, "exact rank over Q", "rank"),
        Instance.argued("c", "docs/theory.md § Choice (causality)", checks=True),
    ])
    data = json.loads(json.dumps(result.to_json()))
    assert [(i["verdict"], i["kind"]) for i in data["instances"]] == [("proved", "prover"), ("unknown", "computed"),
                                                                      ("unknown", "argued")]
    assert data["instances"][2]["basis"] == "docs/theory.md § Choice (causality)" and data["instances"][2]["ok"]
    assert data["counts"] == {"proved": 1, "refuted": 0, "unknown": 1, "argued": 1}
    lines = result.table().splitlines()
    assert lines[0] == "Demo (demo): FAILED  {'proved': 1, 'refuted': 0, 'unknown': 1, 'argued': 1}"
    assert lines[1].startswith("  proved   prover   exact          a ")
    assert lines[2].startswith("  unknown  computed rank           b ") and lines[2].endswith("  <--")
    assert lines[3].startswith("  argued   argued   lemma          c ") and not lines[3].endswith("  <--")
