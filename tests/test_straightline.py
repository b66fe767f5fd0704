"""The straight-line circuit code (symverify.kernel.semantics.straightline) against the generic interpreter.

The bounds pass and the mod-p evaluator on circuits run the flat gate code instead of the ring
interpreter; both must compute exactly what the interpreter computes (bounds field by field,
residues entry by entry), for every circuit, including huge heights and degrees.
"""

from __future__ import annotations

import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.bounds import BoundRing, circuit_bounds, common_denominator, structure_bounds
from symverify.kernel.provers.fingerprint import fingerprint
from symverify.kernel.provers.sides import CircuitSide
from symverify.kernel.semantics.evaluate import eval_circuit_nodes
from symverify.kernel.semantics.rings import ModRing
from symverify.kernel.semantics.straightline import eval_mod, eval_mod_lanes, program
from symverify.library import random_circuit
from symverify.strategies import circuits

M61 = (1 << 61) - 1
PRIMES = [2, 3, 7, 1_000_003, (1 << 31) - 1, M61, 2**89 - 1]


def _reference_bounds(c: Circuit, q: int, variables: int) -> tuple[list[tuple[int, int, int, int, int]], int]:
    ring = BoundRing(variables, q)
    vals = eval_circuit_nodes(c, [ring.var] * c.num_inputs, ring)
    outs = [(v.deg, v.s, v.l1.m, v.l1.e, v.cnt) for v in (vals[o] for o in c.outputs)]
    return outs, min(sum(v.cnt for v in vals), 1 << 62)


def _fast_bounds(c: Circuit, q: int, variables: int) -> tuple[list[tuple[int, int, int, int, int]], int]:
    ring = BoundRing(variables, q)
    outs, peak = circuit_bounds(c, ring)
    return [(v.deg, v.s, v.l1.m, v.l1.e, v.cnt) for v in outs], peak


@settings(max_examples=300, deadline=None)
@given(circuits(max_n=3, max_d=2, max_gates=25, allow_sym=True), st.sampled_from([1, 2, 6]))
def test_bounds_pass_equals_the_interpreter(c: Circuit, q: int) -> None:
    variables = c.num_inputs + len(c.params())
    assert _fast_bounds(c, q, variables) == _reference_bounds(c, q, variables)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([0.0, 0.3, 0.9]))
def test_bounds_pass_equals_the_interpreter_on_deep_circuits(seed: int, mul: float) -> None:
    """Deep circuits: degrees and heights far beyond 62 bits (the rounded ``m·2^e`` path)."""
    c = random_circuit(2, 2, 120, 40, mul, seed=seed)
    q = common_denominator(CircuitSide(c, 2, 2))
    assert _fast_bounds(c, q, 4) == _reference_bounds(c, q, 4)


def test_bounds_pass_on_squaring_chain_and_mixed_denominators() -> None:
    gates = [Gate.lin(0, Fraction(1, 3), 1, Fraction(-5, 7))]
    for k in range(80):
        gates.append(Gate.mul(2 + k, 2 + k))
        gates.append(Gate(Op.CONST, (), (1,)))
    c = Circuit(1, 2, tuple(gates), (len(gates), len(gates) + 1 - 1))
    for q in (1, 21):
        assert _fast_bounds(c, q, 2) == _reference_bounds(c, q, 2)


@settings(max_examples=300, deadline=None)
@given(circuits(max_n=3, max_d=2, max_gates=25, allow_sym=True), st.sampled_from(PRIMES), st.data())
def test_eval_mod_equals_the_interpreter(c: Circuit, p: int, data: st.DataObject) -> None:
    prng = random.Random(data.draw(st.integers(0, 2**32)))
    params = {name: prng.randrange(p) for name in sorted(c.params())}
    if p in (2, 3, 7) and any(isinstance(x, Fraction) and x.denominator % p == 0 for x in program(c).scalars):
        return  # such a prime is never drawn (the randomized method avoids the denominators)
    if any(hasattr(x, "terms") and any(cf.denominator % p == 0 for _, cf in x.terms) for x in program(c).scalars):
        return
    ring = ModRing(p, params)
    rng = random.Random(data.draw(st.integers(0, 2**32)))  # spread values: hypothesis favours zeros
    inputs = [rng.randrange(-(p**2), p**2) for _ in range(c.num_inputs)]
    want = eval_circuit_nodes(c, [x % p for x in inputs], ring)
    got = eval_mod(program(c), inputs, p, [ring.coerce(x) for x in program(c).scalars])
    assert got == want


def test_structure_bounds_unchanged_on_symbolic_circuits() -> None:
    a, b = sym("a"), sym("b")
    c = Circuit(1, 2, (Gate.lin(0, a, 1, b * Fraction(1, 2)), Gate.mul(2, 2), Gate.lin(3, 2 * a - 1, 0, 0)), (4, 3))
    side = CircuitSide(c, 1, 2)
    bounds = structure_bounds(side, side)
    q = common_denominator(side)
    ref, _ = _reference_bounds(c, q, 4)
    assert bounds.degree == max(r[0] for r in ref)


def test_program_is_cached_per_circuit_object() -> None:
    c = random_circuit(2, 1, 10, 3, seed=1)
    assert program(c) is program(c)
    other = random_circuit(2, 1, 10, 3, seed=1)
    assert program(other).circuit is other


def test_checks_run_during_both_passes() -> None:
    from symverify.deadline import DeadlineExceededError

    c = random_circuit(2, 2, 3000, 30, seed=3)
    calls: list[int] = []

    def check() -> None:
        calls.append(1)
        if len(calls) > 2:
            raise DeadlineExceededError("stop")

    try:
        circuit_bounds(c, BoundRing(4), check)
    except DeadlineExceededError:
        pass
    assert len(calls) == 3
    calls.clear()
    try:
        eval_mod(program(c), [1, 2, 3, 4], M61, [ModRing(M61).coerce(x) for x in program(c).scalars], check)
    except DeadlineExceededError:
        pass
    assert len(calls) == 3
    q = common_denominator(CircuitSide(c, 2, 2))
    _assert_close(_fast_bounds(c, q, 4), _reference_bounds(c, q, 4))
    ring = BoundRing(4, q)
    assert [(v.deg, v.cnt) for v in circuit_bounds(c, ring, lambda: None)[0]] == [(v[0], v[4]) for v in _fast_bounds(c, q, 4)[0]]


def _assert_close(fast: tuple[list[tuple[int, int, int, int, int]], int], ref: tuple[list[tuple[int, int, int, int, int]], int]) -> None:
    """The bounds pass on a large circuit (evaluated level by level in floats): the interpreter's
    degrees, scalar counts and monomial counts; heights at least the interpreter's and at most one
    bit above; the node count total at least the interpreter's, within a relative ``10^-9``."""
    (outs, peak), (want, want_peak) = fast, ref
    assert [(d, s, n) for d, s, _, _, n in outs] == [(d, s, n) for d, s, _, _, n in want]
    for (_, _, m, e, _), (_, _, rm, re, _) in zip(outs, want):
        assert m << e >= rm << re
        assert (m << e).bit_length() <= (rm << re).bit_length() + 1
    assert want_peak <= peak <= want_peak * (1 + 1e-9) + 1


def test_circuit_fingerprint_sees_every_part() -> None:
    """The flat encoding hashed for Fiat–Shamir tells apart circuits that differ anywhere."""

    base = Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 0), Gate.const(3)), (3, 4))
    variants = [
        Circuit(1, 2, (Gate.lin(0, 1, 1, 1), Gate.mul(2, 0), Gate.const(3)), (3, 4)),  # a coefficient
        Circuit(1, 2, (Gate.lin(0, 1, 1, Fraction(-1, 2)), Gate.mul(2, 0), Gate.const(3)), (3, 4)),
        Circuit(1, 2, (Gate.lin(1, 1, 0, -1), Gate.mul(2, 0), Gate.const(3)), (3, 4)),  # arguments
        Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 1), Gate.const(3)), (3, 4)),
        Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.lin(2, 1, 0, 1), Gate.const(3)), (3, 4)),  # an op
        Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 0), Gate.const(2)), (3, 4)),  # a constant
        Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 0), Gate.const(3)), (4, 3)),  # outputs
        Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 0), Gate.const(3)), (3,)),
        Circuit(2, 1, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 0), Gate.const(3)), (3, 4)),  # the shape
        Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 0), Gate.const(sym("a"))), (3, 4)),
    ]
    prints = {fingerprint(c) for c in [base, *variants]}
    assert len(prints) == 1 + len(variants)
    same = Circuit(1, 2, (Gate.lin(0, 1, 1, -1), Gate.mul(2, 0), Gate.const(3)), (3, 4), name="other name")
    assert fingerprint(same) == fingerprint(base)


@settings(max_examples=200, deadline=None)
@given(circuits(max_n=3, max_d=2, max_gates=30, allow_sym=True), st.integers(1, 5), st.data())
def test_eval_mod_lanes_equals_eval_mod(c: Circuit, lanes: int, data: st.DataObject) -> None:
    """The batched evaluator, lane by lane, against the one-point evaluator (and so the interpreter)."""
    import numpy as np

    rng = random.Random(data.draw(st.integers(0, 2**32)))
    primes = [data.draw(st.sampled_from([3, 5, 1_000_003, 2**31 - 1, 2_147_483_629])) for _ in range(lanes)]
    prog = program(c)
    if any(_bad_denominator(x, p) for x in prog.scalars for p in primes):
        return
    params = {name: rng.randrange(2**31) for name in sorted(c.params())}
    inputs = [[rng.randrange(-(2**40), 2**40) for _ in range(lanes)] for _ in range(c.num_inputs)]
    coeffs = [[ModRing(p, {k: v % p for k, v in params.items()}).coerce(x) for p in primes] for x in prog.scalars]
    got = eval_mod_lanes(prog, np.array(inputs, dtype=np.int64).reshape(c.num_inputs, lanes), primes,
                         np.array(coeffs, dtype=np.int64).reshape(len(prog.scalars), lanes))
    for t, p in enumerate(primes):
        ring = ModRing(p, {k: v % p for k, v in params.items()})
        want = eval_circuit_nodes(c, [row[t] % p for row in inputs], ring)
        assert [int(x) for x in got[:, t]] == want


def _bad_denominator(x: object, p: int) -> bool:
    if isinstance(x, Fraction):
        return x.denominator % p == 0
    terms = getattr(x, "terms", ())
    return any(cf.denominator % p == 0 for _, cf in terms)


def test_eval_mod_lanes_on_a_deep_circuit_and_refuses_large_primes() -> None:
    import numpy as np
    import pytest

    c = random_circuit(3, 2, 2000, 60, seed=5)
    prog = program(c)
    primes = [2**31 - 1, 1_000_003]
    x = np.arange(12, dtype=np.int64).reshape(6, 2) * 7919
    coeffs = np.array([[ModRing(p).coerce(s) for p in primes] for s in prog.scalars], dtype=np.int64)
    got = eval_mod_lanes(prog, x, primes, coeffs)
    for t, p in enumerate(primes):
        assert [int(v) for v in got[:, t]] == eval_mod(prog, [int(v) for v in x[:, t]], p, [int(v) for v in coeffs[:, t]])
    with pytest.raises(IRError, match="expected every prime below 2\\^31, found"):
        eval_mod_lanes(prog, x, [M61, 3], coeffs)


@settings(max_examples=60, deadline=None)
@given(circuits(max_n=3, max_d=2, max_gates=20, allow_sym=True), st.integers(1, 4), st.data())
def test_torch_engine_circuit_path_equals_modular_eval(c: Circuit, batch: int, data: st.DataObject) -> None:
    """The torch engine evaluates circuits as straight-line lanes: the same residues as the torch executor."""
    import numpy as np
    import pytest

    torch = pytest.importorskip("torch")
    from symverify.executors import modular_eval
    from symverify.kernel.provers.modular import TorchEngine

    p = data.draw(st.sampled_from([2**31 - 1, 2_147_483_629, 1_073_741_827]))
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    params = {name: rng.randrange(p) for name in sorted(c.params())}
    points = np.array([[[rng.randrange(p) for _ in range(c.d)] for _ in range(c.n)] for _ in range(batch)], dtype=np.int64)
    x = torch.from_numpy(points)
    got = TorchEngine().evaluate(CircuitSide(c, c.n, c.d), points, p, params)
    want = modular_eval(c, x, p, params=params)
    assert torch.equal(got, want.to(got.dtype))
