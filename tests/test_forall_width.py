"""The ∀-prover's narrow bit-vector encodings (the least width that holds the bounds, then
``NARROW_WIDTH`` bits) decide the same statement.

Where every value and literal of a gadget stays below ``2^w`` the gadget is decided at width ``w``;
where a value may reach it (a definedness failure there) or a literal does not fit, it
is decided at the full ``WIDTH``, with the verdict the full width gives. A wrapped literal or a
wrapped value would change the verdict of the gadgets below.
"""

from __future__ import annotations

import pytest

z3 = pytest.importorskip("z3")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_forall_encoding import _exprs  # noqa: E402

from symverify.kernel.parametric.expr import IExpr, ParametricError, bit, inp, lt, var, where  # noqa: E402
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap  # noqa: E402
from symverify.kernel.provers.forall import NARROW_WIDTH, WIDTH, _Enc, _narrow_widths, prove_forall  # noqa: E402

i, q = var("i"), var("q")


@settings(max_examples=150, deadline=None)
@given(_exprs(), st.integers(0, (1 << NARROW_WIDTH) - 1), st.integers(0, 200), st.booleans(), st.integers(8, NARROW_WIDTH))
def test_narrow_encoding_agrees_where_it_is_defined(e: IExpr, a: int, b: int, fast: bool, width: int) -> None:
    """At every narrow width the prover tries (8 to ``NARROW_WIDTH`` bits): where the encoding's
    definedness holds and every literal fits, its value is the concrete one; where the concrete
    value does not exist, its definedness fails."""
    enc = _Enc(z3, ["a", "b"], fast_mod=fast, width=width)
    a %= 1 << width
    term, ok = enc.ix(e)
    if enc.unfit:
        return  # not decided at this width (the prover moves on to WIDTH bits)
    env = {"a": a, "b": b}
    ok_v = z3.simplify(z3.substitute(ok, *[(enc.vars[n], enc.const(v)) for n, v in env.items()]))
    try:
        want = e.eval(env)
    except ParametricError:
        assert z3.is_false(ok_v), (str(e), env)
        return
    if z3.is_true(ok_v):
        got = z3.simplify(z3.substitute(term, *[(enc.vars[n], enc.const(v)) for n, v in env.items()]))
        assert got.as_long() == want, (str(e), env)
    else:  # undefined at the narrow width only where a value reaches 2^NARROW_WIDTH (or a fast mod's side condition)
        assert z3.is_false(ok_v)


def test_a_literal_too_wide_marks_the_encoding_unfit() -> None:
    enc = _Enc(z3, ["a"], width=NARROW_WIDTH)
    enc.const((1 << NARROW_WIDTH) - 1)
    assert not enc.unfit
    enc.const(1 << NARROW_WIDTH)
    assert enc.unfit


def _gadget(kmax: int, spec_cond: object) -> Gadget:
    ps = (Param("N", 1, 1 << 20), Param("k", 0, kmax))
    # the bit test keeps the gadget outside the linear fragment (decided with bit-vectors)
    out = where(bit(i, 0) | ~bit(i, 0), inp(i, q))
    return Gadget("g", ps, var("N"), 1, (PLayer(b1=1, h=(tap(0),)),), where(spec_cond, out))  # type: ignore[arg-type]


def test_the_least_width_is_tried_first() -> None:
    """The least width holding the bounds and the state's size at the top of the ranges (here
    ``N ≤ 2^20``: 21 bits), then ``NARROW_WIDTH``; none beyond it."""
    assert _narrow_widths(_gadget(20, lt(i, var("N"))), {"N": (1, 1 << 20), "k": (0, 20)}) == [21, NARROW_WIDTH]
    assert _narrow_widths(_gadget(20, lt(i, var("N"))), {"N": (1, 1 << 47), "k": (0, 20)}) == [NARROW_WIDTH]
    assert _narrow_widths(_gadget(20, lt(i, var("N"))), {"N": (1, 1 << 48), "k": (0, 20)}) == []
    assert _narrow_widths(_gadget(2, lt(i, var("N"))), {"N": (1, 3), "k": (0, 2)}) == [8, NARROW_WIDTH]
    res = prove_forall(_gadget(20, lt(i, var("N"))))
    assert res.proved and res.stats["encoding"] == "bv21"


def test_a_claim_false_only_beyond_the_least_width_is_refuted() -> None:
    # N·2^k ≤ 2^40 reaches 2^21 (the least width) but not 2^48; the spec is 0 from 2^30 on
    res = prove_forall(_gadget(20, lt(var("N") << var("k"), 1 << 30)))
    assert res.verdict == "refuted" and res.params["N"] << res.params["k"] >= 1 << 30


def test_small_values_are_decided_at_the_narrow_width() -> None:
    res = prove_forall(_gadget(20, lt(i, var("N") << var("k"))))  # N·2^k ≤ 2^40
    assert res.proved and res.stats["encoding"] == f"bv{NARROW_WIDTH}"


def test_values_beyond_the_narrow_width_are_decided_at_the_full_width() -> None:
    res = prove_forall(_gadget(40, lt(i, var("N") << var("k"))))  # N·2^k up to 2^60
    assert res.proved and res.stats["encoding"] == f"bv{WIDTH}"


def test_a_wide_literal_is_decided_at_the_full_width() -> None:
    # N·2^k ≤ 2^40 < 2^50: true everywhere; the literal 2^50 does not fit 48 bits
    res = prove_forall(_gadget(20, lt(var("N") << var("k"), 1 << 50)))
    assert res.proved and res.stats["encoding"] == f"bv{WIDTH}"


def test_a_claim_false_only_beyond_the_narrow_width_is_refuted() -> None:
    # N·2^k reaches 2^50 only for k ≥ 30: the spec is 0 there while the output is not
    res = prove_forall(_gadget(40, lt(var("N") << var("k"), 1 << 50)))
    assert res.verdict == "refuted" and res.params["N"] << res.params["k"] >= 1 << 50
    # and a claim that wraps at 48 bits (i + 2^47 + 2^47 = i at 48 bits) is not proved through a wrap
    res = prove_forall(_gadget(20, lt(i + (1 << 47) + (1 << 47), var("N") << var("k"))))
    assert res.verdict == "refuted"
