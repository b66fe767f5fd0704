"""The straight-line program built in bulk (symverify.kernel.semantics.straightline._build) against the
gate-by-gate builder it replaced, kept here as the reference: every field equal on random circuits
(Fractions, ``Sym`` parameters, zero coefficients, CONST gates, equal values held by distinct
objects), so fingerprints, the bounds pass and the mod-p evaluator see exactly the same program."""

from __future__ import annotations

import sys
from array import array
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.deadline import CHECK_EVERY
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.scalar import Scalar, is_zero, sym
from symverify.kernel.provers.fingerprint import fingerprint
from symverify.kernel.semantics import straightline as sl

_ADD, _SUB = 5, 6


def _reference(c: Circuit) -> dict[str, Any]:
    """The former gate-by-gate builder, field by field."""
    index: dict[Any, int] = {}
    scalars: list[Scalar] = []

    def idx(x: Scalar) -> int:
        key = (type(x), x)
        k = index.get(key)
        if k is None:
            k = index[key] = len(scalars)
            scalars.append(x)
        return k

    code: list[tuple[int, int, int, int, int]] = []
    mod: list[tuple[int, int, int, int, int]] = []
    ops = bytearray()
    args: list[int] = []
    cidx = array("q")
    for g in c.gates:
        args.extend(g.args)
        if g.op is Op.MUL:
            ops.append(2)
            a, b = g.args
            ins = (sl.MUL, a, b, -1, -1)
            code.append(ins)
            mod.append(ins)
        elif g.op is Op.LIN:
            ops.append(1)
            (a, b), (al, be) = g.args, g.coeffs
            ia, ib = idx(al), idx(be)
            cidx.append(ia)
            cidx.append(ib)
            if is_zero(be):
                ins = (sl.SCALE, a, a, ia, -1) if not is_zero(al) else (sl.ZERO, -1, -1, -1, -1)
            elif is_zero(al):
                ins = (sl.SCALE, b, b, ib, -1)
            else:
                ins = (sl.LIN, a, b, ia, ib)
            code.append(ins)
            if ins[0] == sl.LIN and type(al) is int and al == 1 and type(be) is int and be in (1, -1):
                mod.append((_ADD if be == 1 else _SUB, a, b, -1, -1))
            else:
                mod.append(ins)
        else:
            ops.append(0)
            ins = (sl.CONST, -1, -1, idx(g.coeffs[0]), -1)
            cidx.append(ins[3])
            code.append(ins)
            mod.append(ins)
    if sys.byteorder != "little":  # pragma: no cover
        cidx.byteswap()
    try:
        a64 = array("q", args)
        if sys.byteorder != "little":  # pragma: no cover
            a64.byteswap()
        abytes: bytes | None = a64.tobytes()
    except OverflowError:
        abytes = None
    return {"code": code, "scalars": tuple(scalars), "mod_code": mod, "ops": bytes(ops), "args": abytes,
            "coeff_index": cidx.tobytes()}


def _fresh_big(k: int) -> int:
    return int(str(2**70 + k))  # a new int object each time: equal values, distinct objects


_COEFFS = st.one_of(
    st.sampled_from([0, 1, -1, 2, Fraction(1, 2), Fraction(-3, 7), sym("a"), sym("b") * 2 - 1]),
    st.integers(-3, 3).map(_fresh_big),
    st.integers(-(2**80), 2**80),
    st.builds(lambda n, d: Fraction(n, d), st.integers(-9, 9), st.integers(1, 5)),
)


@st.composite
def _circuits(draw: Any) -> Circuit:
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    gates: list[Gate] = []
    for _ in range(draw(st.integers(0, 40))):
        nodes = n * d + len(gates)
        kind = draw(st.sampled_from(["lin", "lin", "mul", "const"]))
        if kind == "const":
            gates.append(Gate(Op.CONST, (), (draw(_COEFFS),)))
            continue
        a, b = draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1))
        if kind == "mul":
            gates.append(Gate(Op.MUL, (a, b), ()))
        else:
            gates.append(Gate(Op.LIN, (a, b), (draw(_COEFFS), draw(_COEFFS))))
    outs = tuple(draw(st.lists(st.integers(0, n * d + len(gates) - 1), max_size=n * d)))
    return Circuit(n, d, tuple(gates), outs, "build")


def _assert_same(c: Circuit) -> None:
    ref, prog = _reference(c), sl._build(c)
    for name, want in ref.items():
        got = getattr(prog, name)
        if name == "scalars":  # same values, types and order
            assert [(type(x), x) for x in got] == [(type(x), x) for x in want]
        elif name == "mod_code":  # five columns: the same gates
            assert list(zip(*got)) == want
        elif name == "code":  # handed out as a tuple, so what the next verify reads cannot be changed through it
            assert got == tuple(want), name
        else:
            assert got == want, name
    assert prog.size == len(c.gates)


@given(_circuits())
@settings(max_examples=300, deadline=None)
def test_bulk_build_equals_the_gate_by_gate_builder(c: Circuit) -> None:
    _assert_same(c)


def test_bulk_build_on_edge_cases() -> None:
    a, b = sym("a"), sym("b")
    gates = (
        Gate(Op.LIN, (0, 1), (0, 0)),  # ZERO
        Gate(Op.LIN, (0, 1), (0, 3)),  # SCALE of b
        Gate(Op.LIN, (0, 1), (Fraction(1, 2), 0)),  # SCALE of a
        Gate(Op.LIN, (0, 1), (1, 1)),  # ADD
        Gate(Op.LIN, (2, 3), (1, -1)),  # SUB
        Gate(Op.LIN, (2, 3), (-1, 1)),  # LIN, not SUB
        Gate(Op.LIN, (2, 3), (a, b)),
        Gate(Op.CONST, (), (0,)),
        Gate(Op.CONST, (), (a,)),
        Gate(Op.MUL, (4, 5), ()),
        Gate(Op.LIN, (6, 7), (_fresh_big(0), _fresh_big(0))),  # one value, two objects: one scalar
    )
    c = Circuit(1, 2, gates, (12,), "edges")
    _assert_same(c)
    prog = sl._build(c)
    assert sum(1 for x in prog.scalars if x == 2**70) == 1
    assert [ins[0] for ins in prog.code][:7] == [sl.ZERO, sl.SCALE, sl.SCALE, sl.LIN, sl.LIN, sl.LIN, sl.LIN]
    assert prog.mod_code[0][3:6] == (_ADD, _SUB, sl.LIN)
    assert prog.code[1] == (sl.SCALE, 1, 1, prog.scalars.index(3), -1)
    _assert_same(Circuit(2, 2, (), (0, 3), "empty"))


def test_bulk_build_keeps_fingerprints_on_long_circuits() -> None:
    gates = tuple(Gate(Op.LIN, (k % 4, (k + 1) % 4), (k % 3, Fraction(1, 1 + k % 2))) for k in range(3 * CHECK_EVERY + 5))
    c = Circuit(2, 2, gates, (len(gates) + 3,), "long")
    _assert_same(c)
    prog = sl._build(c)
    p = (1 << 61) - 1
    coeffs = [x.numerator * pow(x.denominator, -1, p) % p if isinstance(x, Fraction) else x % p for x in prog.scalars]
    vals = sl.eval_mod(prog, [3, 5, 7, 11], p, coeffs)  # every chunk of CHECK_EVERY gates evaluated
    assert len(vals) == 4 + len(gates)
    assert vals[-1] == (gates[-1].coeffs[0] * vals[gates[-1].args[0]] + coeffs[prog.scalars.index(gates[-1].coeffs[1])]
                        * vals[gates[-1].args[1]]) % p
    c2 = Circuit(2, 2, gates, (len(gates) + 3,), "long")
    assert fingerprint(c) == fingerprint(c2)


def test_node_ids_beyond_int64_build_the_same_code() -> None:
    big = 2**63  # n·d = 2^63 + 1 inputs: node ids do not fit in int64
    gates = (Gate(Op.MUL, (big, 0), ()), Gate(Op.LIN, (big + 1, big), (2, 0)))
    try:
        c = Circuit(1, big + 1, gates, (0,), "wide")
    except Exception:  # the IR may refuse such a size; nothing to compare then
        return
    _assert_same(c)
