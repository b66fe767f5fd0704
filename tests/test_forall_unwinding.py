"""``assume`` is instantiated at the cells whose application in it reads a point ``care`` or ``entry``
reads; an argument is normalised (the coefficients of each variable and the constant collected
exactly) before it is unwound, so ``i + i − i + 1`` reaches the same cells as ``i + 1``. Where the
cells reaching a point are not all found (a bit operation on ``i``, ``i`` read by ``assume`` but by
no argument, a product by a parameter that may be 0), a statement that would be proved is unknown,
with the reason: never a proof about a ``care`` that ``assume`` allows at no cell."""

from __future__ import annotations

from typing import Any

import pytest

import symverify as sv
from symverify.parametric import Gadget, Param, ParametricError, PLayer, eq, inp, ite, lit, lt, pred, tap, var

i, q, N, K = var("i"), var("q"), var("N"), var("K")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)  # output cell = input cell


def P(*idx: object) -> Any:
    return pred("P", *idx)


# assume's application (equal to ``P(i + 1, q)`` wherever it is defined), read at every row but the
# last; ``care`` reads ``P`` false at a row ``≥ 1``, which the application at the row above forbids
_SHAPES: dict[str, Any] = {
    "i + i - i + 1": i + i - i + 1,
    "2*i - i + 1": 2 * i - i + 1,
    "(i << 1) - i + 1": (i << 1) - i + 1,
    "i*1 + i*1 - i + 1": i * 1 + i * 1 - i + 1,
    "(i + 1) + 0*q": (i + 1) + 0 * q,
    "i - (N - N - 1 + 2)... as i + 1 - (N - N)": i + 1 - (N - N),
    "(N - (N - i)) + 1": (N - (N - i)) + 1,
    "3*(i + 1) - 2*(i + 1)": 3 * (i + 1) - 2 * (i + 1),
    "(i*N) // N + 1": (i * N) // N + 1,
    "(2*i + 2) // 2": (2 * i + 2) // 2,
    "((i + 1) << 3) >> 3": ((i + 1) << 3) >> 3,
    "ite(i < 3, i + i - i + 1, i + 1)": ite(lt(i, 3), i + i - i + 1, i + 1),
    "nested ite": ite(lt(i, 2), ite(eq(i, 0), 2 * i - i + 1, i + 1), i + i + 1 - i),
    "ite(i < 3, i, 2*i) + i + 1 - i*1 ... as ite(..., i, i) + 1": ite(lt(i, 3), i, 2 * i - i) + 1,
    "i + ite(i < 3, i, i) + 1 - i": i + ite(lt(i, 3), i, i) + 1 - i,
}


def _gadget(x: Any, forbidden: bool, spec: Any) -> Gadget:
    at = P(x, q) if forbidden else ~P(x, q)
    return Gadget("copy", (Param("N", 6, 8),), N, 1, _COPY, spec, assume=at | ~lt(i + 1, N),
                  care=~lt(i, 1) & ~P(i, q))


@pytest.mark.parametrize("name", sorted(_SHAPES))
@pytest.mark.parametrize("spec", ["right", "wrong"])
def test_a_care_assume_forbids_through_a_normalised_argument_is_refused(name: str, spec: str) -> None:
    """Each was proved (its spec right) or not refuted (wrong): the argument, which reads ``i`` on
    both sides of an operation, was not unwound, so no instance of ``assume`` was taken at the row
    whose application reads the point ``care`` reads."""
    g = _gadget(_SHAPES[name], True, inp(i, q) if spec == "right" else 2 * inp(i, q))
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(g, timeout=120)


@pytest.mark.parametrize("name", sorted(_SHAPES))
def test_the_same_care_is_decided_where_assume_allows_it(name: str) -> None:
    assert sv.prove_forall(_gadget(_SHAPES[name], False, inp(i, q)), timeout=120).proved
    assert sv.prove_forall(_gadget(_SHAPES[name], False, 2 * inp(i, q)), timeout=120).verdict is sv.Verdict.REFUTED


def test_every_remainder_of_a_literal_quotient_is_instantiated() -> None:
    """``assume = P((i + 2) // 2, q)`` at the odd rows only: the point ``(3, 0)`` is read at rows 4 and 5,
    and only row 5 forbids ``care``. Only row 4 (``2·3 − 2``) was instantiated: proved vacuously."""
    assume = P((i + 2) // 2, q) | eq(i % 2, 0) | ~lt(i, N)
    g = Gadget("copy", (Param("N", 6, 8),), N, 1, _COPY, inp(i, q), assume=assume, care=~P(3, q))
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(g, timeout=120)


def test_a_product_by_a_parameter_at_least_1_is_unwound_completely() -> None:
    assume = P(K * i + 1, q) | ~lt(K * i + 1, N)
    ranges = (Param("N", 6, 8), Param("K", 1, 2))
    g = Gadget("copy", ranges, N, 1, _COPY, inp(i, q), assume=assume, care=~P(1, q))
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(g, timeout=120)
    allowed = Gadget("copy", ranges, N, 1, _COPY, inp(i, q), assume=~P(K * i + 1, q) | ~lt(K * i + 1, N), care=~P(1, q))
    assert sv.prove_forall(allowed, timeout=120).proved


# ``care`` reads ``P`` false where ``assume`` forbids it, through an application whose cells reaching
# that point are not all found: each was proved (a statement about nothing); now unknown, with why
_GAPS: dict[str, tuple[Any, int, Any, Any]] = {  # assume, channels, the range of K, care
    "P(q), i read elsewhere": (P(q) | ~eq(i, 3), 1, (0, 0), ~P(q)),
    "P(i), q read elsewhere": (P(i) | ~eq(q, 1), 2, (0, 0), ~P(i)),
    "P(i * K, q), K may be 0": (P(i * K, q) | ~eq(i, 3), 1, (0, 2), ~P(0, q) & eq(K, 0)),
    "P(i ^ 1, q)": (P(i ^ 1, q) | ~lt(i ^ 1, N), 1, (0, 0), ~P(i, q) & lt(i, 6)),
    "P(i * i, q)": (P(i * i, q) | ~lt(i * i, N) | ~lt(0, i), 1, (0, 0), ~P(i, q) & eq(i, 4)),
    "P(i % 3, q)": (P(i % 3, q) | ~eq(i, 4), 1, (0, 0), ~P(1, q)),
    "Z(), read at every cell": (pred("Z") | ~eq(i, 3), 1, (0, 0), ~pred("Z")),
}


@pytest.mark.parametrize("name", sorted(_GAPS))
def test_a_care_behind_an_application_not_unwound_is_unknown_not_proved(name: str) -> None:
    assume, cols, (lo, hi), care = _GAPS[name]
    g = Gadget("copy", (Param("N", 6, 8), Param("K", lo, hi)), N, cols, _COPY, inp(i, q), assume=assume, care=care)
    try:
        r = sv.prove_forall(g, timeout=120)
    except ParametricError as e:  # a refusal is as good: never proved
        assert "vacuous" in str(e), e
        return
    assert r.verdict is sv.Verdict.UNKNOWN, r
    assert "whether care and entry hold at some cell that assume allows is not decided" in r.detail, r.detail
    # a wrong spec is still refuted: a refutation is re-checked on a placement satisfying assume
    wrong = Gadget("copy", (Param("N", 6, 8), Param("K", lo, hi)), N, cols, _COPY, 2 * inp(i, q), assume=assume, care=care)
    assert sv.prove_forall(wrong, timeout=120).verdict is not sv.Verdict.PROVED


def test_a_care_true_whatever_the_points_not_unwound_is_still_proved() -> None:
    """``assume`` reads ``P`` through ``i ^ 1`` (not unwound), ``care`` reads ``P`` at the cell but holds
    whatever ``P`` is there: the statement is about something, so it is proved (and a wrong spec refuted)."""
    assume = P(i ^ 1, q) | ~lt(i ^ 1, N)
    care = P(i, q) | ~P(i, q) & lt(i, 6)
    g = Gadget("copy", (Param("N", 6, 8),), N, 1, _COPY, inp(i, q), assume=assume, care=care)
    assert sv.prove_forall(g, timeout=120).proved
    wrong = Gadget("copy", (Param("N", 6, 8),), N, 1, _COPY, 2 * inp(i, q), assume=assume, care=care)
    assert sv.prove_forall(wrong, timeout=120).verdict is sv.Verdict.REFUTED


def test_an_entry_behind_an_application_not_unwound_is_unknown_not_proved() -> None:
    """``entry`` true only where ``assume`` (through ``i ^ 1``) forbids it: a statement about the zero
    input only, which was proved; ``care`` reads no predicate."""
    assume = P(i ^ 1, q) | ~lt(i ^ 1, N)
    g = Gadget("copy", (Param("N", 6, 8),), N, 1, _COPY, inp(i, q), assume=assume, entry=~P(i, q) & lt(i, 6))
    r = sv.prove_forall(g, timeout=120)
    assert r.verdict is sv.Verdict.UNKNOWN and "no cell has entry whatever" in r.detail, r


def test_an_argument_with_a_coefficient_past_2_64_is_refused_as_undefined_not_a_literal_error() -> None:
    """``i + (N << 62)·4`` normalises to ``i + 2^64·N``, which no literal holds: building the unwound cell
    raised "index literal: expected an int in [0, 2^64)"; the argument is undefined, which the definedness
    check names."""
    g = Gadget("g", (Param("N", 6, 8),), N, 1, _COPY, inp(i, q), assume=P(i + (N << 62) * 4, q) | ~lt(i + 1, N),
               care=lt(0, i) & ~P(i, q))
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*: assume"):
        sv.prove_forall(g, timeout=60)


def test_a_product_by_a_difference_of_parameters_is_unwound() -> None:
    """``(N − 1)·i + 1`` (a coefficient of both signs): the cell where it is positive is instantiated, so
    the ``care`` it forbids is refused; the cells are not known complete, so the allowed one is unknown
    unless ``care`` holds whatever ``P`` is."""
    forbid = Gadget("g", (Param("N", 6, 8),), N, 1, _COPY, inp(i, q), assume=P((N - 1) * i + 1, q) | lt(i, 1),
                    care=~P(N, q))
    with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
        sv.prove_forall(forbid, timeout=60)


@pytest.mark.parametrize("forbidden", [True, False])
def test_a_cyclic_successor_reaches_every_row(forbidden: bool) -> None:
    """``assume = P((i + 1) % N, q)``: the point ``(0, b)`` is read at row ``N − 1`` only (``(i + 1) % N`` is
    below twice ``N``, which the definedness check shows, so its preimages of ``t`` are ``t − 1`` and
    ``t + N − 1``). ``care = ¬P(0, q)``, which it forbids, was proved; it is refused, and the allowed
    one (``assume = ¬P(...)``) proved, not unknown."""
    app = P((i + 1) % N, q)
    g = Gadget("copy", (Param("N", 2, 8),), N, 1, _COPY, inp(i, q), assume=app if forbidden else ~app, care=~P(0, q))
    if forbidden:
        with pytest.raises(ParametricError, match=r"vacuous statement: no parameter value .* and no cell with care"):
            sv.prove_forall(g, timeout=60)
    else:
        assert sv.prove_forall(g, timeout=60).proved


def test_a_negation_is_refused_when_written_and_a_negative_literal_is_undefined() -> None:
    """``i − (−1)`` and ``−(−i) + 1`` are not index expressions (they are unsigned); ``i − (0 − 1)``
    is one, undefined at every cell, which the definedness check names before any unwinding."""
    with pytest.raises(ParametricError, match=r"index expressions are unsigned; write a subtraction"):
        _ = -i  # the inner negation of -(-i) + 1
    with pytest.raises(ParametricError, match=r"expected an int in \[0, 2\^64\), found -1"):
        _ = i - (-1)
    g = _gadget(i - (lit(0) - 1), True, inp(i, q))
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*: assume"):
        sv.prove_forall(g, timeout=60)
