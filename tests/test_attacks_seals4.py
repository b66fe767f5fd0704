"""Attacks on seals that bound too little: a report's evidence, seed and side statistics, the
statement of a certificate or fragment check, and a ∀ counterexample's huge parameter values.

Each attack changes an outcome after its prover made it (``dataclasses.replace``, a field set in
place, a seal copied from another outcome) and checks that the changed outcome is no longer sealed,
so ``Instance.from_report`` refuses it rather than recording what it now says.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import ProverError
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.outcome import Verdict, is_sealed, seal_outcome
from symverify.scripts.protocol import Instance

SQUARE = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
DOUBLE = Circuit(1, 1, (Gate.add(0, 0),), (1,))
SEALED_FIELDS = "sealed fields"


def _randomized() -> sv.Report:
    rep = sv.verify(SQUARE, SQUARE, method="randomized", error_bound=Fraction(1, 2))
    assert rep.verdict is Verdict.PROVED and 0 < rep.failure_bound <= Fraction(1, 2)
    return rep


@pytest.mark.parametrize("change", [
    {"evidence": {"bound": "2^-1000"}}, {"seed": 7}, {"lhs": {"kind": "circuit"}}, {"rhs": {}},
    {"notes": ("n",)}, {"failure_bound": Fraction(1, 2**1000)},
])
def test_a_reports_shown_fields_replaced_are_refused(change: dict[str, object]) -> None:
    """``dataclasses.replace(report, evidence=…)`` kept the seal: the text and JSON of a randomized
    proof could state a smaller error bound than the one it was proved with."""
    rep = _randomized()
    if "evidence" in change:
        change = {"evidence": {**rep.evidence, **change["evidence"]}}  # type: ignore[dict-item]
    with pytest.raises(ProverError, match="replaced"):
        replace(rep, **change)  # type: ignore[arg-type]


def test_a_reports_evidence_changed_in_place_unseals_it() -> None:
    rep = _randomized()
    assert is_sealed(rep)
    rep.evidence["bound"] = "2^-1000"  # type: ignore[index]
    assert not is_sealed(rep)
    with pytest.raises(ProverError, match="was not made by its prover"):
        Instance.from_report("x² = x²", rep)


def test_a_report_with_a_huge_evidence_value_is_sealed() -> None:
    """Sealing binds values exactly: an int beyond Python's 4300-digit ``str`` limit is no crash."""
    deep = Circuit(1, 1, tuple(Gate.mul(i, i) for i in range(14_400)), (14_400,))  # degree 2^14400: 4335 digits
    rep = sv.verify(deep, deep, method="randomized")
    assert is_sealed(rep) and rep.lhs["degree_bound"].bit_length() > 14_400
    with pytest.raises(ProverError, match=SEALED_FIELDS):
        replace(rep, lhs={**rep.lhs, "degree_bound": rep.lhs["degree_bound"] + 1})


def test_a_certificate_checks_seal_copied_onto_another_result_is_refused() -> None:
    """``CompositionalResult`` and ``FragmentProof`` seals bound only the class, verdict and method:
    a proved one's seal made any result of the class with that verdict pass as sealed."""
    from symverify.kernel.provers.compositional import CompositionalResult, check_certificate

    comp = sv.compile(DOUBLE)
    real = check_certificate(DOUBLE, comp.model, comp.certificate)
    assert real.ok and is_sealed(real)
    fake = CompositionalResult(True, 1000, 1000)
    object.__setattr__(fake, "_seal", real._seal)
    assert not is_sealed(fake)
    with pytest.raises(ProverError, match="was not made by its prover"):
        Instance.from_report("a claim of 1000 stages", fake)


def test_a_fragment_proofs_seal_copied_onto_another_statement_is_refused() -> None:
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.provers.fragment import FragmentProof, prove_fragment

    real = prove_fragment(shift_down(3, 1, 1))
    assert real.verdict is Verdict.PROVED and is_sealed(real)
    for fake in (FragmentProof("another fragment", True, True, "", 0.0, dict(real.resources), dict(real.bounds)),
                 FragmentProof(real.name, True, True, "", 0.0, {**real.resources, "layers": 0}, dict(real.bounds))):
        object.__setattr__(fake, "_seal", real._seal)
        assert not is_sealed(fake)
    real.resources["layers"] = 0  # set in place
    assert not is_sealed(real)


def test_a_forall_counterexample_with_a_huge_parameter_is_sealed_exactly() -> None:
    """``ForallResult.params`` entered the seal by its dict ``repr``, a ``ValueError`` for an int of
    more than 4300 digits; it is now bound in exact hexadecimal, so another huge value unseals it."""
    from symverify.kernel.provers.forall import ForallResult

    huge = 10**5000 + 1
    res = seal_outcome(ForallResult("g", Verdict.REFUTED, "N ∈ [1, 10^5001]", {"N": huge}, (0, 0), "1 vs 2"))
    assert is_sealed(res)
    object.__setattr__(res, "params", {"N": huge + 1})
    assert not is_sealed(res)


def test_one_huge_certificate_cell_is_polled_for_the_deadline() -> None:
    """``validate_certificate`` polled the deadline only between boundaries: one cell of millions of
    terms ran past the timeout. It polls every ``CHECK_EVERY`` cells and terms too (the timeout
    then stops the check: ``check_certificate`` says unknown, ``stopped="timeout"``)."""
    from symverify.deadline import DeadlineExceededError
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.provers.compositional import validate_certificate

    many = 20_000
    circuit = Circuit(1, 1, tuple(Gate.add(0, 0) for _ in range(many)), (0,))
    copy_layer = Layer(Grid.from_cells(2, 2, {(0, 0): 1, (0, 1): 1}), Grid(1, 2, 0, ()), Grid(1, 2, 0, ()), Grid(1, 2, 1, ()))
    model = Model(1, 1, 1, 2, (copy_layer,))
    huge = Cell(0, 1, tuple((v, 1) for v in range(many)))
    cert = Certificate((Boundary(0, (Cell.node(0, 0, 0),)), Boundary(1, (Cell.node(0, 0, 0), huge))))  # (0, 1): not read out
    polls = []

    def check() -> None:  # the deadline passes after a poll per boundary and one before the huge cell
        polls.append(1)
        if len(polls) > len(cert.boundaries) + 1:
            raise DeadlineExceededError("the deadline passed")

    with pytest.raises(DeadlineExceededError, match="the deadline passed"):
        validate_certificate(circuit, model, cert, check)
    validate_certificate(circuit, model, cert)  # without a deadline the certificate is well formed
