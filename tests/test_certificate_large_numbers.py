"""A short stage over huge weights or certificate coefficients runs in the memory-limited child.

Stages are planned by monomial counts, blind to coefficient size; ``run_compositional`` runs the
whole certificate check in a memory-limited child process where coefficients may exceed
``IN_PROCESS_BITS`` bits. For stages of at most ``SHORT_STAGE_LAYERS`` layers only the circuit's
sizes were read, on the argument that weights within the file limits stay small; a model built in
Python has weights of any size, and so has a certificate's coefficient. A 1×1 model of eight
layers ``(w·x)·(w·x)`` raises a 4096-bit weight ``w`` to the 510th power, about ``2^21``-bit
coefficients, and was expanded in this process (a weight of a few MB would need GBs there, where
FLINT aborts the whole process, not ``unknown``).
"""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers import certified
from symverify.kernel.provers.certified import SHORT_STAGE_LAYERS, SHORT_WEIGHT_BITS, large_number_bits, stage_peak_bits
from symverify.kernel.provers.exact import IN_PROCESS_BITS
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.sides import as_side

LAYERS = SHORT_STAGE_LAYERS


def _squares(w: object) -> tuple[Circuit, Model, Certificate]:
    """``x^(2^L)`` and the model ``L`` layers of ``(w·x)·(w·x)`` on a 1×1 state, one stage."""
    layer = Layer(Grid.from_rows([[w]]), Grid.zeros(1, 1), Grid.from_rows([[w]]), Grid.zeros(1, 1))
    model = Model(1, 1, 1, 1, (layer,) * LAYERS)
    c = Circuit(1, 1, tuple(Gate.mul(k, k) for k in range(LAYERS)), (LAYERS,))
    cert = Certificate((Boundary(0, (Cell(0, 0, ((0, 1),)),), "input"), Boundary(LAYERS, (Cell(0, 0, ((LAYERS, 1),)),), "out")))
    return c, model, cert


def _spy_children(monkeypatch: pytest.MonkeyPatch, module: object) -> list[str]:
    """What each call of ``module.run_limited`` (a check in the memory-limited child) says it runs."""
    seen: list[str] = []
    real = module.run_limited  # type: ignore[attr-defined]

    def spy(*args: object, **kw: object) -> object:
        seen.append(str(kw.get("what")))
        return real(*args, **kw)

    monkeypatch.setattr(module, "run_limited", spy)
    return seen


def _ran_in_child(monkeypatch: pytest.MonkeyPatch, c: Circuit, m: Model, cert: Certificate) -> tuple[list[str], sv.Report]:
    seen = _spy_children(monkeypatch, certified)
    return seen, sv.verify(c, m, certificate=cert, method="compositional", timeout=60)


@pytest.mark.parametrize("w", [1 << 4096, -(1 << 4096) + 1, sym("a") * (1 << 4096)], ids=["int", "negative", "symbol"])
def test_a_huge_weight_sends_the_check_to_the_child(monkeypatch: pytest.MonkeyPatch, w: object) -> None:
    c, m, cert = _squares(w)
    opts = Options.from_call("compositional")
    assert stage_peak_bits(as_side(c, "c"), as_side(m, "m"), opts) <= IN_PROCESS_BITS  # the circuit alone is small
    assert large_number_bits(m, cert) > IN_PROCESS_BITS
    seen, rep = _ran_in_child(monkeypatch, c, m, cert)
    assert seen == ["the certificate check"]
    assert rep.verdict is not sv.Verdict.PROVED


def test_a_huge_certificate_coefficient_sends_the_check_to_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    c, m, _ = _squares(1)
    big = 1 << 4096
    cert = Certificate((Boundary(0, (Cell(0, 0, ((0, 1),)),), "input"),
                        Boundary(1, (Cell(0, 0, ((0, big),)),), "scaled"),
                        Boundary(LAYERS, (Cell(0, 0, ((LAYERS, 1),)),), "out")))
    assert large_number_bits(m, cert) > IN_PROCESS_BITS
    seen, rep = _ran_in_child(monkeypatch, c, m, cert)
    assert seen == ["the certificate check"]
    assert rep.verdict is not sv.Verdict.PROVED


def test_small_numbers_stay_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    c, m, cert = _squares(1 << (SHORT_WEIGHT_BITS - 1))  # exactly SHORT_WEIGHT_BITS bits: the limit itself
    assert large_number_bits(m, cert) == 0
    seen, rep = _ran_in_child(monkeypatch, c, m, cert)
    assert seen == []
    assert rep.verdict is not sv.Verdict.PROVED
    c, m, cert = _squares(1)
    seen, rep = _ran_in_child(monkeypatch, c, m, cert)
    assert seen == [] and rep.proved



def _heavy_fragment(w: int) -> object:
    """A 1×1 fragment of eight layers ``(w·x)·(w·x)`` claimed to square ``x`` eight times."""
    from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder

    layer = Layer(Grid.from_rows([[w]]), Grid.zeros(1, 1), Grid.from_rows([[w]]), Grid.zeros(1, 1))

    def build() -> Spec:
        b = SpecBuilder(1, 1)
        x = b.cell(0, 0)
        for _ in range(LAYERS):
            x = b.mul(x, x)
        return Spec(b.circuit({(0, 0): x}, "squares"))

    return Fragment("squares", 1, 1, (layer,) * LAYERS, frozenset({(0, 0)}), frozenset({(0, 0)}), {"layers": LAYERS}, build)


def test_prove_fragment_checks_a_heavy_certificate_in_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """``prove_fragment``'s certificate check ran in this process whatever its coefficients' size:
    it follows the rule of ``run_compositional`` (its budget says the same ``memory_limit``)."""
    from symverify.kernel.provers import guard
    from symverify.kernel.provers.fragment import prove_fragment

    seen = _spy_children(monkeypatch, guard)
    proof = prove_fragment(_heavy_fragment(1 << 4096), exact=False)  # type: ignore[arg-type]
    assert seen == ["the certificate check"]
    assert not proof.proved and "stage 0" in proof.failure
    seen.clear()
    ok = prove_fragment(_heavy_fragment(1), exact=False)  # type: ignore[arg-type]
    assert seen == [] and ok.proved


def test_prove_fragment_stopped_child_is_not_proved(monkeypatch: pytest.MonkeyPatch) -> None:
    from symverify.kernel.provers import guard
    from symverify.kernel.provers.fragment import prove_fragment

    def stopped(*args: object, **kw: object) -> object:
        return guard.Limited("memory", None, "the child ran out of its memory budget")

    monkeypatch.setattr(guard, "run_limited", stopped)
    proof = prove_fragment(_heavy_fragment(1 << 4096), exact=False)  # type: ignore[arg-type]
    assert proof.verdict is sv.Verdict.UNKNOWN and not proof.compositional
    assert "check stopped (memory)" in proof.failure and "memory budget" in proof.failure
