"""Attacks on the helpers users put in their CI: ``symverify.testing``, the pytest plugin's golden
files, the hypothesis strategies of ``symverify.strategies`` and ``symverify.mutate``. Wrong
argument types, corrupt golden files and campaigns that cannot make a mutant end in a clear
``SymverifyError`` or a failed test naming the problem, never in a bare Python exception, an
unstable golden file or a test that passes without checking anything
(tests/test_testing_plugin.py, test_golden_files.py, test_assertions.py and test_mutate.py hold the
ordinary checks)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import symverify as sv
from symverify import mutate
from symverify.errors import UsageError
from symverify.pytest_plugin import golden_stem
from symverify.strategies import circuits, coefficients, models, rational_inputs
from symverify.testing import explain, golden_record, golden_text

pytest_plugins = ["pytester"]

# The in-process pytester runs forget the modules they import; load the heavy ones here.
_X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
_COMPILED = sv.compile(_X)
golden_text(sv.verify(_X, _X, method="exact"))


# ---- golden records -----------------------------------------------------------------------------
def test_golden_records_hold_integers_of_any_size_exactly():
    """An int of 100 000 bits raised ValueError (Python's 4300-digit int/str limit) in golden_text."""
    big = 2**100_000 + 1
    rec = golden_record({"a": big, "q": Fraction(1, 3**3000), "small": 5, "r": Fraction(4, 5)})
    assert rec["small"] == 5 and rec["r"] == "4/5"
    from symverify.ir.bigint import parse_rational

    assert parse_rational(rec["a"]) == big and parse_rational(rec["q"]) == Fraction(1, 3**3000)
    assert golden_text({"a": big}) == golden_text({"a": big})


def test_golden_records_refuse_what_has_no_stable_text():
    """``{"a": object()}`` was stored as '<object object at 0x…>', a file that differs every run."""
    with pytest.raises(UsageError, match=r"golden_record: expected values of the supported types .*found a object; its text may elide values or name its address"):
        golden_record({"a": object()})


def test_golden_records_refuse_keys_that_collide_as_text():
    """``{1: 2, "1": 3}`` kept one of the two values and dropped the other without a word."""
    with pytest.raises(UsageError, match=r"keys that read the same as text \('1'\) would overwrite each other"):
        golden_record({1: 2, "1": 3})


def test_explain_needs_a_report():
    with pytest.raises(UsageError, match=r"explain: expected a Report \(from symverify.verify\), found NoneType"):
        explain(None)  # type: ignore[arg-type]


# ---- the pytest plugin ------------------------------------------------------------------------
_USER = '''
import symverify as sv
from symverify.testing import assert_proved

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)

def test_identity(symverify_golden):
    symverify_golden.check(assert_proved(X, sv.compile(X).model, method="exact"))

def test_int_key(symverify_golden):
    symverify_golden.check({"a": 1}, key=3)

def test_none_key(symverify_golden):
    symverify_golden.check({"a": 1}, key=None)
'''


def test_corrupt_golden_files_and_bad_keys_fail_naming_the_problem(pytester):
    """A golden file that is not UTF-8 raised UnicodeDecodeError inside the plugin, a directory in its
    place IsADirectoryError, ``key=3`` TypeError from re.sub; ``key=None`` was taken as no key."""
    pytester.makepyfile(test_user=_USER)
    pytester.runpytest("--symverify-update", "-k", "identity").assert_outcomes(passed=1)
    stored = pytester.path / "golden" / "test_user" / f"{golden_stem('test_user.py::test_identity')}.json"
    stored.write_bytes(b"\xff\xfe\x00 not a golden record")
    res = pytester.runpytest()
    res.assert_outcomes(failed=3)
    res.stdout.fnmatch_lines([
        "*golden file *test_identity-*.json is not UTF-8 text (byte 0: invalid start byte)*--symverify-update*",
        "*symverify_golden.check: key: expected a str (the file's suffix), found int 3",
        "*symverify_golden.check: key: expected a str (the file's suffix), found NoneType None",
    ])
    assert "UnicodeDecodeError" not in res.stdout.str() and "TypeError" not in res.stdout.str()
    pytester.runpytest("--symverify-update", "-k", "identity").assert_outcomes(passed=1)  # rewritten
    assert stored.read_text(encoding="utf-8").startswith("{")
    stored.unlink()
    stored.mkdir()
    res = pytester.runpytest("-k", "identity")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*cannot read the golden file *test_identity-*.json: Is a directory (a directory is in its place)"])


# ---- hypothesis strategies: bad arguments refused when the strategy is made ---------------------
@pytest.mark.parametrize(("make", "message"), [
    (lambda: circuits(max_n=0), r"circuits\(max_n\): expected an int ≥ 1, found 0"),
    (lambda: circuits(max_n=True), r"circuits\(max_n\): expected an int ≥ 1, found True"),
    (lambda: circuits(max_d=2.5), r"circuits\(max_d\): expected an int ≥ 1, found 2.5"),
    (lambda: circuits(max_gates=-1), r"circuits\(max_gates\): expected an int ≥ 0, found -1"),
    (lambda: circuits(min_outputs=100), r"circuits\(min_outputs\): at most max_n·max_d = 6 outputs fit, found 100"),
    (lambda: circuits(linear="yes"), r"circuits\(linear\): expected True or False, found 'yes'"),
    (lambda: models(pad=-1), r"models\(pad\): expected an int ≥ 0, found -1"),
    (lambda: models(max_layers=-1), r"models\(max_layers\): expected an int ≥ 0, found -1"),
    (lambda: models(modes=()), r"models\(modes\): expected a non-empty tuple of modes"),
    (lambda: models(modes="causal"), r"models\(modes\): expected a non-empty tuple of modes"),
    (lambda: models(modes=("bogus",)), r"models\(modes\): expected modes among 'causal', 'cyclic'"),
    (lambda: rational_inputs(0, 2), r"rational_inputs\(n\): expected an int ≥ 1, found 0"),
    (lambda: coefficients("yes"), r"coefficients\(allow_sym\): expected True or False, found 'yes'"),
    (lambda: rational_inputs(64, 32), r"rational_inputs: expected n·d ≤ MAX_INPUT_CELLS = 1024 .*found 64×32"),
])
def test_strategies_refuse_bad_arguments_when_made(make, message):
    """These were hypothesis's InvalidArgument at draw time, in hypothesis's own terms
    ("Cannot have max_value=0 < min_value=1"), or silently clamped (``min_outputs=100``, ``max_n=True``)."""
    with pytest.raises(UsageError, match=message):
        make()


def test_strategies_still_draw_valid_objects():
    from hypothesis import given, settings

    seen = []

    @settings(max_examples=10, database=None, derandomize=True)
    @given(circuits(max_n=2, max_d=2, min_outputs=4), models(modes=("causal",)))
    def run(c, m):
        assert len(c.outputs) >= min(4, c.n * c.d)
        assert all(ly.mode.value == "causal" for ly in m.layers)
        seen.append(c)

    run()
    assert seen


def test_large_circuits_and_inputs_can_be_drawn():
    """``circuits(max_n=200, max_d=200)`` drew its outputs as one fixed-size list, which hypothesis
    refuses beyond about 8000 entries (``InvalidArgument``: "can never generate a value") whenever
    n·d was drawn large; outputs are drawn one by one now. ``rational_inputs`` at its limit draws."""
    from hypothesis import HealthCheck, given, settings

    seen = []

    @settings(max_examples=15, database=None, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large])
    @given(circuits(max_n=200, max_d=200, max_gates=3, min_outputs=20), rational_inputs(32, 32))
    def run(c, u):
        assert len(c.outputs) >= min(20, c.n * c.d) and all(0 <= o < c.num_nodes for o in c.outputs)
        assert len(u) == 32 and all(len(r) == 32 for r in u)
        seen.append(c.n * c.d)

    run()
    assert seen and max(seen) > 8192


# ---- mutate -----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1.5, None, True, "x"])
def test_mutant_seeds_must_be_ints(seed):
    """Any object was a seed (formatted into the RNG's key): 1.5, None and True gave mutants."""
    with pytest.raises(UsageError, match=r"weight_mutant: seed: expected an int, found "):
        mutate.weight_mutant(_COMPILED.model, seed)
    with pytest.raises(UsageError, match=r"gate_mutant: seed: expected an int, found "):
        mutate.gate_mutant(_X, seed)


def test_mutators_refuse_the_wrong_object():
    """weight_mutant(circuit) and gate_mutant(model) raised AttributeError."""
    with pytest.raises(UsageError, match=r"weight_mutant: expected a Model, found Circuit"):
        mutate.weight_mutant(_X, 0)
    with pytest.raises(UsageError, match=r"gate_mutant: expected a Circuit, found Model"):
        mutate.gate_mutant(_COMPILED.model, 0)
    with pytest.raises(UsageError, match=r"certificate_mutant: expected a Certificate, found Model"):
        mutate.certificate_mutant(_COMPILED.model, 5, 0)
    with pytest.raises(UsageError, match=r"weight_sites: expected a Model, found Circuit"):
        mutate.weight_sites(_X)


def test_flags_must_be_bools():
    """``interior='no'`` and ``live='yes'`` were read by truth value (so 'no' meant True)."""
    with pytest.raises(UsageError, match=r"certificate_mutant: interior: expected True or False, found 'no'"):
        mutate.certificate_mutant(_COMPILED.certificate, _X.num_nodes, 0, interior="no")
    with pytest.raises(UsageError, match=r"gate_mutant: live: expected True or False, found 'yes'"):
        mutate.gate_mutant(_X, 0, live="yes")
    with pytest.raises(UsageError, match=r"weight_sites: nonzero: expected True or False, found 1"):
        mutate.weight_sites(_COMPILED.model, nonzero=1)


def test_indices_are_ints_in_range_not_bools_floats_or_from_the_end():
    """``swap_outputs(c, -1, 0)`` swapped the last output (Python's negative index), 5 raised
    IndexError; ``flip_mode(m, True)`` flipped layer 1; ``flip_mode(m, 1.0)`` and
    ``mutate_gate(c, 1.0, …)`` raised TypeError; ``get_weight`` at row 1.0 read a cell."""
    m = _COMPILED.model
    with pytest.raises(UsageError, match=r"swap_outputs: output position -1: expected an index in \[0, 2\), found -1"):
        mutate.swap_outputs(_X, -1, 0)
    with pytest.raises(UsageError, match=r"output position 5: expected an index in \[0, 2\), found 5"):
        mutate.swap_outputs(_X, 5, 0)
    with pytest.raises(UsageError, match=r"flip_mode: layer: expected an int, found True"):
        mutate.flip_mode(m, True)
    with pytest.raises(UsageError, match=r"flip_mode: layer: expected an int, found 1.0"):
        mutate.flip_mode(m, 1.0)
    with pytest.raises(UsageError, match=r"mutate_gate: gate k: expected an int, found 1.0"):
        mutate.mutate_gate(_X, 1.0, "op")
    with pytest.raises(UsageError, match=r"mutate_gate: which: expected an int, found True"):
        mutate.mutate_gate(_X, 1, "coeff", which=True)
    with pytest.raises(UsageError, match=r"W\[1.0\]\[0\]: row: expected an int, found 1.0"):
        mutate.get_weight(m, mutate.WeightSite(0, "W", 1.0, 0))
    with pytest.raises(UsageError, match=r"mutate_cell: boundary: expected an int, found True"):
        mutate.mutate_cell(_COMPILED.certificate, True, 0, "const")
    with pytest.raises(UsageError, match=r"certificate_mutant: num_nodes .* must be positive, found 0"):
        mutate.certificate_mutant(_COMPILED.certificate, 0, 0)


def test_a_campaign_that_makes_no_mutant_does_not_pass_silently():
    """``mutants`` of a maker that always refuses returned [] (a CI mutation test then checks
    nothing); a negative count returned [] and 1.5 worked as 2."""
    empty = sv.Model(1, 1, 1, 1, ())
    with pytest.raises(UsageError, match=r"mutants: no seed from 0 to 19 gave a mutant; the last said: weight_mutant: the model has no layers"):
        mutate.mutants(lambda s: mutate.weight_mutant(empty, s), 1)
    with pytest.raises(UsageError, match=r"mutants: count must be ≥ 0, found -1"):
        mutate.mutants(lambda s: mutate.weight_mutant(_COMPILED.model, s), -1)
    with pytest.raises(UsageError, match=r"mutants: count: expected an int, found 1.5"):
        mutate.mutants(lambda s: mutate.weight_mutant(_COMPILED.model, s), 1.5)
    assert mutate.mutants(lambda s: mutate.weight_mutant(empty, s), 0) == []
