"""The bound rules (symverify.kernel.provers.bound_rules): both backends cover the truth and each other.

Random expression trees of sums and products over variables, integers, fractions and Syms are
expanded exactly (the truth: a dict of monomials), and evaluated with the exact rules and with the
numpy rules (rows, rounded up after every step as the passes do). The exact value must cover the
truth (degree, ``Q^s·f`` integral with ``ℓ1 ≤ m·2^e``, term count); the numpy value, converted back
with ``to_exact``, must have the same degree and scalar count and at least the exact height and
count, at most one bit above. A rule planted to underestimate is caught by the same checks, and by
the soundness property of ``structure_bounds``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import Sym, sym
from symverify.kernel.provers import bound_rules as br
from symverify.kernel.provers.bounds import structure_bounds
from symverify.kernel.provers.sides import pair_sides
from symverify.kernel.semantics.poly import polynomials, shared_ring

NAMES = ("x0", "x1", "x2", "a", "b")
A, B = sym("a"), sym("b")

scalars = st.one_of(
    st.integers(-9, 9),
    st.builds(Fraction, st.integers(-9, 9), st.sampled_from([2, 3, 4])),
    st.sampled_from([A, B, A * B - 3, Fraction(1, 2) * A**2 + B, 2 * A**3 * B - Fraction(5, 3)]),
)
leaves = st.one_of(st.tuples(st.just("var"), st.integers(0, 2)), st.tuples(st.just("const"), scalars))
trees = st.recursive(leaves, lambda kids: st.tuples(st.sampled_from(["add", "mul"]), kids, kids), max_leaves=14)

Poly = dict[tuple[int, ...], Fraction]


def _truth(t: Any) -> Poly:
    kind = t[0]
    if kind == "var":
        mono = [0] * 5
        mono[t[1]] = 1
        return {tuple(mono): Fraction(1)}
    if kind == "const":
        x = t[1]
        if isinstance(x, Sym):
            out: Poly = {}
            for m, c in x.terms:
                mono = [0] * 5
                for name, e in m:
                    mono[NAMES.index(name)] = e
                out[tuple(mono)] = Fraction(c)
            return out
        return {(0,) * 5: Fraction(x)} if x != 0 else {}
    f, g = _truth(t[1]), _truth(t[2])
    acc: Poly = dict(f)
    if kind == "add":
        for m, c in g.items():
            acc[m] = acc.get(m, Fraction(0)) + c
    else:
        acc = {}
        for m1, c1 in f.items():
            for m2, c2 in g.items():
                m = tuple(i + j for i, j in zip(m1, m2))
                acc[m] = acc.get(m, Fraction(0)) + c1 * c2
    return {m: c for m, c in acc.items() if c != 0}


def _denominator(t: Any) -> int:
    if t[0] == "var":
        return 1
    if t[0] == "const":
        x = t[1]
        return math.lcm(*(Fraction(c).denominator for _, c in x.terms)) if isinstance(x, Sym) else Fraction(x).denominator
    return math.lcm(_denominator(t[1]), _denominator(t[2]))


def _exact(t: Any, rules: br.ExactRules) -> br.Val:
    if t[0] == "var":
        return br.VAR_VAL
    if t[0] == "const":
        return rules.scalar(t[1])
    x, y = _exact(t[1], rules), _exact(t[2], rules)
    return rules.add(x, y) if t[0] == "add" else rules.mul(x, y)


def _numpy(t: Any, caps: Any) -> Any:
    if t[0] == "var":
        return np.array([br.VAR])
    if t[0] == "const":
        return br.scalar_rows([t[1]])
    x, y = _numpy(t[1], caps), _numpy(t[2], caps)
    out = br.oplus(x, y, np.empty_like(x)) if t[0] == "add" else br.otimes(x, y)
    # the passes size their rounding for their operations; here: generously, for any magnitude
    br.round_up(out[:, 2:], 0.0, np.where(np.isfinite(out[:, 2:]), (np.abs(out[:, 2:]) + 8) * 2.0**-44, 0.0))
    br.cap_counts(out, caps)
    return out


def _check_exact_covers(v: br.Val, truth: Poly, q: int) -> None:
    deg, s, m, e, cnt = v
    if not truth:
        return
    assert deg >= max(sum(mono) for mono in truth)
    assert cnt >= len(truth)
    scaled = [c * q**s for c in truth.values()]
    assert all(c.denominator == 1 for c in scaled)  # Q^s·f has integer coefficients
    assert sum(abs(c) for c in scaled) <= m << e


def _check_numpy_covers(row: Any, v: br.Val, q: int) -> None:
    got = br.to_exact(row, q)
    if v[0] < 0:
        assert got == br.ZERO_VAL  # both propagate a structural zero alike
        return
    assert (got[0], got[1]) == (v[0], v[1])
    assert got[4] >= v[4]
    exact_bits, numpy_bits = br.UB(v[2], v[3]).bits(), br.UB(got[2], got[3]).bits()
    assert exact_bits <= numpy_bits <= exact_bits + 1


@settings(max_examples=150, deadline=None, derandomize=True)
@given(trees)
def test_both_backends_cover_the_truth_and_each_other(t: Any) -> None:
    q = _denominator(t)
    rules = br.ExactRules(5, q)
    v = _exact(t, rules)
    _check_exact_covers(v, _truth(t), q)
    with np.errstate(invalid="ignore"):  # the degree −∞ of a zero row casts to any index; take clips it
        _check_numpy_covers(_numpy(t, br.count_caps(5))[0], v, q)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(trees, min_size=2, max_size=9))
def test_a_sum_of_many_terms_covers_the_pairwise_sums(ts: list[Any]) -> None:
    """``oplus_rows`` (the model pass's sums of ``t`` terms: convolutions, projections) against the
    exact sum rule folded over the same terms."""
    q = math.lcm(*map(_denominator, ts))
    rules, caps = br.ExactRules(5, q), br.count_caps(5)
    v = br.ZERO_VAL
    for t in ts:
        v = rules.add(v, _exact(t, rules))
    with np.errstate(invalid="ignore"):
        out = br.oplus_rows(np.stack([_numpy(t, caps) for t in ts], axis=1))
        br.round_up(out[:, 2:], 0.0, np.where(np.isfinite(out[:, 2:]), (np.abs(out[:, 2:]) + 8) * 2.0**-44, 0.0))
        br.cap_counts(out, caps)
    truth: Poly = {}
    for t in ts:
        for m, c in _truth(t).items():
            truth[m] = truth.get(m, Fraction(0)) + c
    _check_exact_covers(v, {m: c for m, c in truth.items() if c != 0}, q)
    _check_numpy_covers(out[0], v, q)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(-1, 200), st.integers(0, 3), st.integers(0, 2**70), st.integers(0, 300), st.integers(0, 2**70))
def test_conversions_round_up_both_ways(deg: int, s: int, m: int, e: int, cnt: int) -> None:
    m, e = br.ub_norm(m, e)
    v = (deg, s, m, e, min(cnt, br.COUNT_CAP)) if deg >= 0 and m and cnt else br.ZERO_VAL
    back = br.to_exact(np.array(br.from_exact(v)), 3)
    if v[0] < 0:
        assert back == br.ZERO_VAL
        return
    assert back[:2] == v[:2] and back[4] >= v[4]
    assert (back[2] << back[3]) >= (v[2] << v[3])  # s·log2 3 added on top: still above


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(0, 2**200), st.integers(0, 2**200))
def test_ub_sum_and_product_are_upper_bounds(x: int, y: int) -> None:
    ux, uy = br.UB.of(x), br.UB.of(y)
    assert x <= ux.m << ux.e < 2 * x + 1
    s, p = ux + uy, ux * uy
    assert x + y <= s.m << s.e and x * y <= p.m << p.e
    assert s.m < 2**62 and p.m < 2**62


def test_sym_degree_is_the_largest_monomial_degree() -> None:
    assert (A * B + A**3).degree == 3 and (A + 1).degree == 1 and (A**2 * B**5 - B).degree == 7


# ---- a planted underestimate is caught ---------------------------------------------------------


def _square() -> Circuit:
    return Circuit(1, 1, (Gate.mul(0, 0),), (1,))


def _planted(self: br.ExactRules) -> Any:
    add, mul = _RULES(self)

    def low_mul(x: br.Val, y: br.Val) -> br.Val:  # one degree too few on every nonconstant product
        out = mul(x, y)
        return (out[0] - 1, *out[1:]) if out[0] >= 2 else out

    return add, low_mul


_RULES = br.ExactRules._rules


def test_an_underestimating_exact_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    t = ("mul", ("var", 0), ("var", 1))
    _check_exact_covers(_exact(t, br.ExactRules(5, 1)), _truth(t), 1)
    monkeypatch.setattr(br.ExactRules, "_rules", _planted)
    with pytest.raises(AssertionError):
        _check_exact_covers(_exact(t, br.ExactRules(5, 1)), _truth(t), 1)
    # and through the production pass: the degree the randomized method's ε uses is too small
    c = _square()
    bounds = structure_bounds(*pair_sides(c, c))
    ring = shared_ring(c, c, backend="flint")
    assert ring.degree(polynomials(c, ring)[0][0]) == 2 > bounds.degree


def test_an_underestimating_numpy_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    t = ("add", ("var", 0), ("var", 0))  # ℓ1(2·x0) = 2
    v = _exact(t, br.ExactRules(5, 1))
    _check_numpy_covers(_numpy(t, br.count_caps(5))[0], v, 1)

    def max_only(x: Any, y: Any, out: Any) -> Any:  # heights and counts by max, not by sum
        np.maximum(x, y, out=out)
        return out

    monkeypatch.setattr(br, "oplus", max_only)
    with pytest.raises(AssertionError):
        _check_numpy_covers(_numpy(t, br.count_caps(5))[0], v, 1)


def test_the_count_cap_of_an_unbounded_degree_is_the_largest() -> None:
    """Rows whose degree is infinite, NaN, negative or past the table take the table's last cap
    (casting ``inf`` or NaN to an index was undefined: it could pick ``C(V, 0) = 1`` and cap a
    monomial count to 0); a finite degree takes its own."""
    caps = br.count_caps(3)
    out = np.array([[d, 0.0, 0.0, 70.0] for d in (math.inf, math.nan, -math.inf, 1e300, 4097.0, 2.0)])
    with np.errstate(invalid="ignore"):
        br.cap_counts(out, caps)
    assert list(out[:5, 3]) == [min(70.0, caps[-1])] * 5
    assert out[5, 3] == caps[2] and caps[2] < caps[-1]


# ---- a weight's parts: Sym coefficients read as they are -----------------------------------------

_COEFFS = st.one_of(st.integers(-5, 5), st.integers(-(2**80), 2**80), st.fractions(max_denominator=60))
_NAMES = st.sampled_from(["a", "b", "c"])


@st.composite
def _weights(draw: Any) -> Any:
    x = draw(_COEFFS)
    for _ in range(draw(st.integers(0, 3))):
        term = draw(_COEFFS)
        for name in draw(st.lists(_NAMES, max_size=3)):
            term = term * sym(name)
        x = x + term
    return x


def _reference_parts(x: Any) -> Any:
    """The parts by their definition: degree, any non-integer coefficient, Σ|c| and the term count."""
    if isinstance(x, Sym):
        coeffs = [abs(Fraction(c)) for _, c in x.terms]
        return x.degree, int(any(c.denominator != 1 for c in coeffs)), sum(coeffs, Fraction(0)), len(coeffs)
    if x == 0:
        return None
    v = abs(Fraction(x))
    return 0, int(v.denominator != 1), v, 1


@settings(max_examples=300, deadline=None)
@given(_weights())
def test_scalar_parts_are_the_definition(x: Any) -> None:
    got, want = br.scalar_parts(x), _reference_parts(x)
    assert got == want
    if got is not None:
        assert type(got[2]) is Fraction and all(type(v) is int for v in (got[0], got[1], got[3]))


def test_a_single_term_weight_builds_no_fraction(monkeypatch: Any) -> None:
    """A symbol or a scaled monomial (most weights of a symbolic model) is read off its one term:
    no Fraction is built for it (the sum and the copy of each coefficient cost more than the rest)."""
    built = []

    class Counting(Fraction):
        def __new__(cls, *args: Any) -> Any:
            built.append(args)
            return Fraction(*args)

    monkeypatch.setattr(br, "Fraction", Counting)
    for x, want in ((sym("a"), (1, 0, Fraction(1), 1)), (-Fraction(3, 4) * sym("a") * sym("b") ** 2, (3, 1, Fraction(3, 4), 1))):
        assert br.scalar_parts(x) == want
    assert built == []


def test_the_kept_count_caps_are_read_only() -> None:
    """``count_caps`` keeps its table per ``V`` and hands every caller the same one: a write into it
    lowered a cap (a monomial count bound) for every later pass; it raises."""
    caps = br.count_caps(6)
    before = caps.copy()
    with pytest.raises(ValueError, match="read-only"):
        caps[10] = 0.0
    assert br.count_caps(6) is caps and np.array_equal(br.count_caps(6), before)
