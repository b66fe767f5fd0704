"""The check of a circuit side reads its gates once: the program is made from the lists the check read
(``straightline.keep_checked``), a kept snapshot is compared without a new one (``fingerprint._still``),
and each distinct coefficient object is tested once. Each shortcut must answer exactly as the full
reading it replaces: a side rewritten in place (an op, a node-id tuple, a coefficient tuple, a
``Fraction``'s slot or class, the circuit's own field) is still seen."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from symverify.errors import IRError
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers import fingerprint as fp
from symverify.kernel.semantics import straightline as sl
from symverify.kernel.verification import verify


def _circuit(seed: int, gates: int = 60, shared: Fraction | None = None) -> Circuit:
    rng = random.Random(seed)
    half = shared if shared is not None else Fraction(1, 2)
    out: list[Gate] = []
    for k in range(gates):
        a, b = rng.randrange(4 + k), rng.randrange(4 + k)
        r = rng.random()
        if r < 0.3:
            out.append(Gate.mul(a, b))
        elif r < 0.4:
            out.append(Gate(Op.CONST, (), (rng.choice([3, Fraction(2, 3), sym("w")]),)))
        else:
            out.append(Gate(Op.LIN, (a, b), (rng.choice([1, -1, 0, half, Fraction(5, 7)]), rng.choice([1, 2, half]))))
    return Circuit(2, 2, tuple(out), tuple(range(4 + gates - 4, 4 + gates)))


def _fields(p: sl.Program) -> tuple[Any, ...]:
    return p.scalars, p.ops, p.args, p.coeff_index


@pytest.mark.parametrize("seed", range(6))
def test_the_program_a_check_keeps_is_the_one_build_makes(seed: int) -> None:
    c = _circuit(seed)
    fp.check_plain(c, "lhs")
    kept = sl._PROGRAMS.get(c)
    assert kept is not None  # made from the check's lists, before any reader asks
    assert _fields(kept) == _fields(sl._build(c))
    assert sl.program(c) is kept


def test_a_refused_circuit_keeps_no_program() -> None:
    c = _circuit(1)
    gates = list(c.gates)
    gates[3] = Gate.mul(0, 1)
    object.__setattr__(gates[3], "args", (0, 10_000))  # a node id not yet defined
    object.__setattr__(c, "gates", tuple(gates))
    with pytest.raises(IRError, match="field set after construction"):
        fp.check_plain(c, "lhs")
    assert sl._PROGRAMS.get(c) is None


def test_a_second_check_compares_the_kept_snapshot_without_a_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    c = _circuit(2)
    fp.check_plain(c, "lhs")
    calls: list[object] = []
    state = fp._state
    monkeypatch.setattr(fp, "_state", lambda obj: calls.append(obj) or state(obj))
    fp.check_plain(c, "lhs")
    fp.refresh(c)
    assert calls == []


def test_each_distinct_coefficient_object_is_tested_once(monkeypatch: pytest.MonkeyPatch) -> None:
    half = Fraction(1, 2)
    c = Circuit(1, 1, tuple(Gate(Op.LIN, (0, k), (half, half)) for k in range(500)), (500,))
    seen: list[object] = []
    canonical = fp.is_canonical
    monkeypatch.setattr(fp, "is_canonical", lambda x: seen.append(x) or canonical(x))
    fp.check_plain(c, "lhs")
    assert seen == [half]


class _Half(Fraction):
    __slots__ = ()

    def __mul__(self, other: Any) -> Any:  # reads as 3/2 under evaluation
        return Fraction(3, 2) * other


def _rewrites(c: Circuit) -> list[tuple[str, Any]]:
    """In-place rewrites of ``c`` (each undone by the returned callable)."""
    g = c.gates
    lin = next(k for k, x in enumerate(g) if x.op is Op.LIN and type(x.coeffs[1]) is Fraction)
    frac = g[lin].coeffs[1]

    def field(obj: Any, name: str, value: Any) -> Any:
        old = getattr(obj, name)
        object.__setattr__(obj, name, value)
        return lambda: object.__setattr__(obj, name, old)

    def klass() -> Any:
        frac.__class__ = _Half
        return lambda: setattr(frac, "__class__", Fraction)

    return [
        ("op", lambda: field(g[lin], "op", Op.MUL)),
        ("args", lambda: field(g[lin], "args", (0, 0))),
        ("coeffs", lambda: field(g[lin], "coeffs", (1, 1))),
        ("numerator", lambda: field(frac, "_numerator", 3)),
        ("class", klass),
        ("gates", lambda: field(c, "gates", (*g[:-1], Gate.mul(0, 0)))),
    ]


@pytest.mark.parametrize("which", ["op", "args", "coeffs", "numerator", "class", "gates"])
def test_the_kept_snapshot_comparison_sees_every_rewrite(which: str) -> None:
    c = _circuit(3, shared=Fraction(1, 2))
    fp.check_plain(c, "lhs")
    kept = fp._PLAIN.get(c)
    assert kept is not None and fp._still(kept, c)
    undo = dict(_rewrites(c))[which]()
    try:
        assert fp._same_state(kept, fp._state(c)) is False
        assert fp._still(kept, c) is False
        fp.refresh(c)  # drops the kept program
        assert sl._PROGRAMS.get(c) is None
    finally:
        undo()
    assert fp._still(kept, c)


def test_a_coefficient_whose_class_is_reassigned_after_a_verify_is_refused() -> None:
    """``x/2 + y/2`` proved equal to itself, then one shared ``1/2`` made an instance of a subclass
    reading as 3/2 (its ``__class__`` assigned): the next ``verify`` refuses the side."""
    half = Fraction(1, 2)
    c = Circuit(2, 1, (Gate(Op.LIN, (0, 1), (half, half)),), (2,))
    d = Circuit(2, 1, (Gate(Op.LIN, (0, 1), (Fraction(1, 2), Fraction(1, 2))),), (2,))
    assert verify(c, d, method="randomized").proved
    half.__class__ = _Half
    try:
        with pytest.raises(IRError, match="exact scalar as its constructor stores it"):
            verify(c, d, method="randomized")
    finally:
        half.__class__ = Fraction
