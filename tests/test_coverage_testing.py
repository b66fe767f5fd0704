"""symverify.testing: the rarer lines of a failed assertion's message (a stage counterexample, a
mismatch without a re-checked counterexample, a verdict with nothing more to say, a long or
uncomputable difference, a side whose repr fails) and the golden records of proof instances,
proof results and values that are only enums or only printable.

Each test names the function of ``symverify/testing.py`` it is for and why its assertion bites.
"""

import enum

import pytest

import symverify as sv
from symverify import testing
from symverify.errors import UsageError
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.library import determinant
from symverify.mutate import weight_mutant
from symverify.scripts.protocol import Instance, ProofResult
from symverify.testing import assert_proved, assert_refuted, explain, golden_record

M61 = 2**61 - 1


def power(e: int) -> Circuit:
    """x^e on one input, by square and multiply (x^(2^61 − 1) ≡ x at every point mod 2^61 − 1)."""
    gates: list[Gate] = []

    def add(g: Gate) -> int:
        gates.append(g)
        return len(gates)

    acc = 0
    for bit in bin(e)[3:]:
        acc = add(Gate.mul(acc, acc))
        if bit == "1":
            acc = add(Gate.mul(acc, 0))
    return Circuit(1, 1, tuple(gates), (acc,))


X = Circuit(1, 1, (), (0,))


def test_explain_names_the_first_failing_stage():
    """explain: a compositional refutation names its stage (a one-weight mutant of the compiled
    determinant, as the certificate tests do)."""
    c = determinant(2)
    comp = sv.compile(c, method="dense")
    mutant = weight_mutant(comp.model, 3, ("inc",)).obj
    r = sv.verify(c, mutant, method="compositional", certificate=comp.certificate)
    assert r.refuted and r.counterexample.stage
    assert f"first failing stage: {r.counterexample.stage}" in explain(r).splitlines()


def test_headline_of_a_mismatch_without_a_counterexample():
    """_headline: x^(2^61−1) vs x differ modulo a larger prime but no counterexample is small enough
    to re-check: the first line says so and names the prime (not the note)."""
    with pytest.raises(AssertionError) as e:
        assert_proved(power(M61), X, method="randomized")
    first = str(e.value).splitlines()[0]
    assert first.startswith("expected proved, found unknown (method randomized): the sides differ mod ")
    prime = int(first.split("differ mod ")[1].split()[0])
    assert prime > M61 and first.endswith("(no re-checked counterexample)")


def test_headline_of_a_bare_verdict():
    """_headline: an exact proof has no counterexample, notes or bound: the first line of
    assert_refuted's failure is the verdict and method alone."""
    sq = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    with pytest.raises(AssertionError) as e:
        assert_refuted(sq, sq, method="exact")
    assert str(e.value).splitlines()[0] == "expected refuted, found proved (method exact)"


def test_difference_of_sides_that_are_not_circuits_or_models_is_empty():
    """_difference (its inner small): only circuits and models get a polynomial difference."""
    assert testing._difference([[1]], [[2]]) == ""


def test_difference_is_a_display_aid_that_never_raises(monkeypatch):
    """_difference: a failure while expanding gives no difference line, not an error."""
    import symverify.kernel.semantics.poly as poly

    def broken(*a, **k):
        raise RuntimeError("no ring")

    monkeypatch.setattr(poly, "shared_ring", broken)
    sq = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    assert testing._difference(sq, X) == ""


def test_a_long_difference_is_cut_and_counted():
    """_difference: more than MAX_DIFF_TEXT characters are cut and the entries counted."""
    n = 40
    lhs = Circuit(n, 1, (), tuple(range(n)))
    rhs = Circuit(n, 1, tuple(Gate.mul(i, i) for i in range(n)), tuple(range(n, 2 * n)))
    text = testing._difference(lhs, rhs)
    assert text.startswith("lhs − rhs: (0, 0): ")
    assert f"… ({n} nonzero entries in all) (inputs" in text
    assert len(text) < testing.MAX_DIFF_TEXT + 100


def test_short_repr_of_an_object_whose_repr_fails():
    """_short_repr: a side whose repr raises is shown by its type name."""
    class Bad:
        def __repr__(self):
            raise ValueError("no repr")

    assert testing._short_repr(Bad()) == "<Bad>"
    assert testing._short_repr("x" * 300, 10) == "'xxxxxxxx…"


class Color(enum.Enum):
    RED = "red"


class Shown:
    def __str__(self):
        return "shown"


def test_golden_record_of_enums_and_printable_values():
    """_stable: a plain enum is recorded by its value; an object of a type golden records do not
    know is refused, even with its own __str__ (its text may elide values)."""
    assert golden_record({"c": Color.RED}) == {"c": "red"}
    with pytest.raises(UsageError, match=r"expected values of the supported types .*found a Shown"):
        golden_record({"s": Shown()})


def test_golden_record_of_an_instance_and_a_proof_result():
    """golden_record: the fields of a proof instance and of a result (its instances recorded in
    order), without timings."""
    a = Instance.computed("a", True, "rank over Q", "exact", resources={"layers": 3}, bounds={"layers": 4}, seconds=9.5)
    b = Instance.computed("b", None, "rank over Q", "exact")
    rec_a = {"kind": "instance", "name": "a", "verdict": "proved", "claim": "computed", "basis": "rank over Q",
             "method": "exact", "resources": {"layers": 3}, "bounds": {"layers": 4}, "ok": True}
    assert golden_record(a) == rec_a
    r = ProofResult("p", "T")
    r.instances += [a, b]
    rec = golden_record(r)
    assert rec["kind"] == "proof" and rec["name"] == "p" and rec["title"] == "T" and rec["ok"] is False
    assert rec["instances"][0] == rec_a and rec["instances"][1]["verdict"] == "unknown"
