"""Attacks on what a verdict carries after it is made: seals, counterexamples and the records built from them.

A ``refuted`` outcome is sealed where its prover makes it (:mod:`symverify.kernel.provers.outcome`);
``Instance.from_report`` writes its counterexample into a proof run. Each attack below changes an
outcome after the fact, the way a script could by mistake (``dataclasses.replace``, copying), and
checks that the changed outcome is refused rather than recorded.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import replace
from fractions import Fraction

import pytest

import symverify as sv
from symverify.errors import ProverError
from symverify.kernel.ir.certificate import Boundary, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers import outcome
from symverify.kernel.provers.outcome import Counterexample, is_sealed
from symverify.scripts.protocol import Instance

SQUARE = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
IDENTITY = Circuit(1, 1, (), (0,))
SWAPPED = "had its verdict, method, failure bound or counterexample replaced"


def _refutation() -> sv.Report:
    rep = sv.verify(SQUARE, IDENTITY, method="exact")
    assert rep.verdict is sv.Verdict.REFUTED and rep.counterexample is not None
    return rep


def _forgeries(cex: Counterexample) -> dict[str, Counterexample]:
    """Counterexamples that differ from ``cex`` in one field each; the first is a point where the
    two sides agree (``1² = 1``), so nothing about it re-checks."""
    return {
        "a point where the sides agree": replace(cex, inputs=((1,),), lhs_value=5, rhs_value=7),
        "the input": replace(cex, inputs=((3,),)),
        "the lhs value": replace(cex, lhs_value=cex.lhs_value + 1),
        "the rhs value": replace(cex, rhs_value=Fraction(1, 3)),
        "a huge value": replace(cex, lhs_value=(1 << 20_000) + 1),
        "the stage": replace(cex, stage="stage 0"),
        "the finder": replace(cex, found_by="compositional"),
        "a parameter": replace(cex, params=(("a", 1),)),
    }


@pytest.mark.parametrize("what", sorted(_forgeries(Counterexample(((2,),), (), (0, 0), 4, 2))))
def test_a_refutations_counterexample_swapped_by_replace_is_refused(what: str) -> None:
    """``dataclasses.replace(report, counterexample=other)`` kept the seal (it bound only that a
    counterexample was there), so ``Instance.from_report`` wrote one that does not re-check."""
    rep = _refutation()
    fake = _forgeries(rep.counterexample)[what]
    with pytest.raises(ProverError, match=SWAPPED):
        replace(rep, counterexample=fake)
    res = outcome.refuted("exact", {}, rep.counterexample)
    with pytest.raises(ProverError, match=SWAPPED):
        replace(res, counterexample=fake)


def test_a_counterexample_set_in_place_unseals_the_report() -> None:
    rep = _refutation()
    forged = copy.copy(rep)
    object.__setattr__(forged, "counterexample", _forgeries(rep.counterexample)["a point where the sides agree"])
    assert is_sealed(rep) and not is_sealed(forged)
    with pytest.raises(ProverError, match="was not made by its prover"):
        Instance.from_report("x² = x", forged)
    inst = Instance.from_report("x² = x", rep)  # the report itself still counts, with its own counterexample
    assert inst.verdict is sv.Verdict.REFUTED and inst.counterexample == rep.counterexample.to_json()


def test_an_equal_counterexample_copied_or_pickled_keeps_the_seal() -> None:
    rep = _refutation()
    for same in (copy.deepcopy(rep), pickle.loads(pickle.dumps(rep)),
                 replace(rep, counterexample=copy.deepcopy(rep.counterexample))):
        assert is_sealed(same) and same.counterexample == rep.counterexample
        assert Instance.from_report("x² = x", same).verdict is sv.Verdict.REFUTED
    with pytest.raises(ProverError, match="sealed fields"):  # the notes are shown: sealed too
        replace(rep, notes=("a note",))
    proof = sv.verify(SQUARE, SQUARE, method="exact")
    with pytest.raises(ProverError, match=SWAPPED):  # a proof given a counterexample is no proof
        replace(proof, counterexample=rep.counterexample)


def test_a_counterexample_that_is_no_counterexample_is_refused() -> None:
    res = outcome.refuted("exact", {}, _refutation().counterexample)
    for junk in ("u = 2", Counterexample(((object(),),), (), (0, 0), 4, 2)):
        with pytest.raises(ProverError, match=SWAPPED):
            replace(res, counterexample=junk)


def test_a_stage_label_that_is_no_valid_utf8_still_gives_a_sealed_refutation() -> None:
    """The failing stage's text (a certificate label, untrusted) is part of the sealed
    counterexample: a lone surrogate in it is sealed, not a ``UnicodeEncodeError``."""
    double = Circuit(1, 1, (Gate.add(0, 0),), (1,))  # u ↦ 2u
    comp = sv.compile(double)
    bs = comp.certificate.boundaries
    cert = Certificate((*bs[:-1], Boundary(bs[-1].layer, bs[-1].cells, "exit \ud800")))
    triple = Circuit(1, 1, (Gate.scale(0, 3),), (1,))  # u ↦ 3u, its node %1 where the certificate puts 2u
    rep = sv.verify(triple, comp.model, certificate=cert, method="compositional")
    assert rep.verdict is sv.Verdict.REFUTED and "\ud800" in (rep.counterexample.stage or "")
    assert is_sealed(rep)


def _matrix_refutation(target: list[list[int]]) -> object:
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    from symverify.kernel.provers.matrix import verify_matrix

    check = verify_matrix(permutation_to_kaleidoscope([1, 0, 2]), target)
    assert check.verdict is sv.Verdict.REFUTED and is_sealed(check)
    return check


@pytest.mark.parametrize("field, value", [("first_difference", (0, 0, 5, 5)), ("first_difference", (2, 2, 1, 0)),
                                          ("width", 0), ("size", 3), ("n", 2), ("garbage_free_checked", False)])
def test_a_matrix_checks_difference_or_sizes_set_in_place_unseal_it(field: str, value: object) -> None:
    """A ``KaleidoscopeCheck``'s seal bound only its class, verdict and method: a first difference
    set in place (one where both values agree) was written by ``Instance.from_report``."""
    check = _matrix_refutation([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert Instance.from_report("swap = id", check).counterexample == {"entry": [0, 0], "found": 0, "expected": 1}
    object.__setattr__(check, field, value)
    assert not is_sealed(check)
    with pytest.raises(ProverError, match="was not made by its prover"):
        Instance.from_report("swap = id", check)


def test_a_matrix_check_with_an_entry_beyond_repr_is_sealed() -> None:
    """The sealed first difference is written in hexadecimal: an entry of more than 4300 digits
    (which ``repr`` refuses) is sealed, and a change of its last bit unseals it."""
    big = (1 << 20_000) + 1
    check = _matrix_refutation([[big, 1, 0], [1, 0, 0], [0, 0, 1]])
    i, j, got, want = check.first_difference
    assert (i, j, got, want) == (0, 0, 0, big)
    object.__setattr__(check, "first_difference", (i, j, got, want - 1))
    assert not is_sealed(check)


def test_a_fragment_subclass_stating_fewer_resources_is_refused() -> None:
    """A ``Fragment`` subclass answering ``resources()`` with 0 layers made a 1-layer fragment held
    to ``layers ≤ 0`` a proved, ok row of ``fragment_instance``; only ``Fragment`` itself is proved."""
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.gadgets.fragment import Fragment
    from symverify.kernel.provers.fragment import prove_fragment
    from symverify.scripts.instances import fragment_instance

    class Lying(Fragment):
        def resources(self) -> dict[str, int]:
            return {**super().resources(), "layers": 0}

    f = shift_down(3, 1, 1)
    args = (f.name, f.inner_n, f.inner_d, f.layers, f.entry, f.exit, {"layers": 0}, f.build_spec)
    honest = fragment_instance(Fragment(*args))
    assert honest.verdict is sv.Verdict.PROVED and not honest.ok and honest.over_bound() == ["layers"]
    for run in (prove_fragment, fragment_instance):
        with pytest.raises(sv.IRError, match=r"expected a Fragment, found Lying \(a subclass is not accepted\)"):
            run(Lying(*args))


def test_a_grid_subclass_is_refused_by_the_certificate_check_and_prove_fragment() -> None:
    """``verify`` refuses a side holding a subclass of the IR's classes, but ``check_certificate``
    and ``prove_fragment`` (whose outcomes ``Instance.from_report`` takes) read it: a grid whose
    ``nonzero()`` hides its bias 1 was proved to make ``u ↦ u`` the zero map."""
    from symverify.kernel.gadgets.fragment import Fragment, Spec, all_cells
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.certificate import Cell
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.provers.compositional import check_certificate
    from symverify.kernel.provers.fragment import prove_fragment

    class Hiding(Grid):
        __slots__ = ()

        def nonzero(self) -> dict:
            return {}

    def model(b2: Grid) -> Model:  # y = (u·1) ⊙ b2: u when b2 = 1
        return Model(1, 1, 1, 1, (Layer(Grid(1, 1, 1, ()), Grid(1, 1, 0, ()), Grid(1, 1, 0, ()), b2),))

    zero = Circuit(1, 1, (Gate.const(0),), (1,))
    cert = Certificate((Boundary(0, (Cell.node(0, 0, 0),)), Boundary(1, (Cell.node(0, 0, 1),))))
    plain = model(Grid(1, 1, 1, ()))
    assert sv.verify(zero, plain, method="exact").verdict is sv.Verdict.REFUTED  # the fields say u ↦ u
    assert not check_certificate(zero, plain, cert).ok
    lying = model(Hiding(1, 1, 1, ()))
    with pytest.raises(sv.IRError, match="certificate check: the model: expected every grid of type Grid exactly"):
        check_certificate(zero, lying, cert)
    frag = Fragment("hiding", 1, 1, lying.layers, all_cells(1, 1), all_cells(1, 1), {}, lambda: Spec(zero))
    for exact in (False, True):
        with pytest.raises(sv.IRError, match="expected every grid of type Grid exactly"):
            prove_fragment(frag, exact=exact)


def test_a_kaleidoscope_subclass_stating_another_width_is_refused() -> None:
    """``verify_matrix`` took a ``Kaleidoscope`` subclass, so one answering ``width`` with 0 gave a
    sealed proof of ``w = 0`` for a kaleidoscope of one BB* group; it is refused as ``verify`` refuses it."""
    import dataclasses

    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.provers.matrix import verify_matrix, verify_permutation

    class Narrow(Kaleidoscope):
        @property
        def width(self) -> int:
            return 0

    k = permutation_to_kaleidoscope([1, 0, 2]).kaleidoscope
    swap = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    assert verify_matrix(k, swap).width == k.width == 1
    lie = Narrow(**{f.name: getattr(k, f.name) for f in dataclasses.fields(k)})
    with pytest.raises(sv.IRError, match="kaleidoscope check: expected a Circuit, Model or Kaleidoscope exactly"):
        verify_matrix(lie, swap)
    with pytest.raises(sv.IRError, match="kaleidoscope check: expected"):
        verify_permutation(lie, [1, 0, 2])


def test_a_symbolic_difference_is_sealed_by_its_exact_terms() -> None:
    """A ``Sym``'s repr abbreviates a huge coefficient (digit count and residue mod 10^9): two
    entries that print alike are still sealed apart."""
    from symverify.kernel.ir.scalar import sym
    from symverify.kernel.provers.matrix import KaleidoscopeCheck
    from symverify.kernel.provers.outcome import seal_outcome

    a, b = sym("w") * (10**5000 + 7), sym("w") * (2 * 10**5000 + 7)
    assert repr(a) == repr(b) and a != b
    check = seal_outcome(KaleidoscopeCheck(sv.Verdict.REFUTED, "exact-matrix", 2, 2, 1, False, (0, 0, a, 1)))
    assert is_sealed(check)
    object.__setattr__(check, "first_difference", (0, 0, b, 1))
    assert not is_sealed(check)


def test_the_last_boundary_claims_only_the_read_out_block_and_the_docs_say_so() -> None:
    """A cell outside the ``N×d`` read-out block is never read out: the last boundary may leave out
    a nonzero one (a copy of ``u`` in channel 1 here) and the proof holds; the format and the
    certificate's docstrings say so (they said every unlisted cell claims 0)."""
    from pathlib import Path

    from symverify.kernel.ir import certificate as cert_module
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.certificate import Cell
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.provers.compositional import check_certificate

    copy_layer = Layer(Grid.from_cells(2, 2, {(0, 0): 1, (0, 1): 1}), Grid(1, 2, 0, ()), Grid(1, 2, 0, ()), Grid(1, 2, 1, ()))
    model = Model(1, 1, 1, 2, (copy_layer,))  # state after the layer: [u, u]; read-out: u
    assert sv.evaluate(model, [[5]]) == [[5]]
    ident = Circuit(1, 1, (), (0,))
    cert = Certificate((Boundary(0, (Cell.node(0, 0, 0),)), Boundary(1, (Cell.node(0, 0, 0),))))
    assert check_certificate(ident, model, cert).ok
    middle = Certificate((*cert.boundaries[:1], Boundary(1, (Cell.node(0, 0, 0),)), cert.boundaries[1]))
    assert check_certificate(ident, model, middle).failure is not None  # not at an inner boundary
    formats = Path(__file__).resolve().parents[1].joinpath("docs", "formats.md").read_text(encoding="utf-8")
    assert "except at the last boundary, where only the `N×d` read-out block is claimed" in formats
    assert "except at the last boundary" in (cert_module.__doc__ or "")


def test_check_certificate_names_a_swapped_or_wrong_argument() -> None:
    """``check_certificate(model, circuit, cert)`` raised ``AttributeError`` (``'Circuit' object has
    no attribute 'layers'``); each argument of the wrong kind is an ``IRError`` naming it."""
    from symverify.kernel.provers.compositional import check_certificate

    double = Circuit(1, 1, (Gate.add(0, 0),), (1,))
    comp = sv.compile(double)
    assert check_certificate(double, comp.model, comp.certificate).ok
    cases = [((comp.model, double, comp.certificate), "expected a Circuit as the circuit, found Model"),
             ((double, comp, comp.certificate), "expected a Model as the model, found Compiled"),
             (("x", comp.model, comp.certificate), "expected a Circuit as the circuit, found str"),
             ((double, comp.model, None), "expected a Certificate, found NoneType")]
    for args, message in cases:
        with pytest.raises(sv.IRError, match=message):
            check_certificate(*args)
