"""The normal form of index expressions (:mod:`symverify.kernel.parametric.normal`) and the ∀-prover's
unwinding of ``assume``'s arguments, against direct evaluation: the form equals the expression wherever
it is defined, and where the rows (cells) reaching a point are said to be all of them, every row of a
grid at which the argument reads the point is one of them."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.parametric.expr import Bin
from symverify.kernel.parametric.normal import evaluate, normal
from symverify.kernel.provers.forall import _reaching, _unwind
from symverify.parametric import ParametricError, ite, lit, lt, pred, var

i, q, N, K = var("i"), var("q"), var("N"), var("K")


_LEAVES = st.sampled_from([i, q, N, K, lit(0), lit(1), lit(2), lit(3)])


_ALL_OPS = ("+", "-", "*", "//", "%", "<<", ">>", "^", "&")


def _exprs(leaves: st.SearchStrategy[Any] = _LEAVES, names: tuple[str, ...] = _ALL_OPS) -> st.SearchStrategy[Any]:
    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        ops = st.sampled_from(names)
        small = st.sampled_from([lit(0), lit(1), lit(2), lit(3)])
        return st.one_of(
            st.builds(lambda o, a, b: Bin(o, a, b), ops, inner, inner),
            st.builds(lambda o, a, b: Bin(o, a, b), st.sampled_from(["<<", ">>", "//"]), inner, small),
            st.builds(lambda a, b, x, y: ite(lt(x, y), a, b), inner, inner, inner, inner))
    return st.recursive(leaves, extend, max_leaves=10)


def _value(e: Any, env: dict[str, int]) -> int | None:
    try:
        return int(e.eval(env))
    except ParametricError:
        return None


_ENVS = [{"i": a, "q": b, "N": n, "K": k} for a in range(0, 7) for b in (0, 1, 5) for n in (1, 2, 7) for k in (0, 1, 3)]


@settings(max_examples=300, deadline=None)
@given(_exprs())
def test_the_normal_form_equals_the_expression_wherever_it_is_defined(e: Any) -> None:
    form = normal(e)
    if form is None:
        return
    for env in _ENVS:
        v = _value(e, env)
        if v is not None:
            assert evaluate(form, env) == v, (str(e), form, env)
    for m, c in form.items():
        assert c != 0 and isinstance(c, int)
        assert list(m) == sorted(m, key=lambda x: (type(x).__name__, str(x)))


@settings(max_examples=400, deadline=None)
@given(_exprs(st.sampled_from([i, i, N, K, lit(1), lit(2), lit(3)])), st.integers(0, 12), st.integers(1, 3), st.integers(1, 3))
def test_the_rows_unwound_are_every_row_reading_the_point_when_complete(x: Any, r0: int, n: int, k: int) -> None:
    """For a random argument ``x`` over ``i`` and the parameters (each at least 1), and the point
    ``a = x(r0)``: when the rows found are said to be all of them, every row ``r ≤ 24`` with
    ``x(r) = a`` is one of them, evaluated (any row is sound: completeness is the claim checked)."""
    env = {"N": n, "K": k}
    a = _value(x, {**env, "i": r0})
    if a is None:
        return
    rows, complete = _unwind(x, lit(a), "i", {}, {"N": 1, "K": 1})
    if complete:
        found = {v for r in rows if (v := _value(r, env)) is not None}
        hits = {r for r in range(25) if _value(x, {**env, "i": r}) == a}
        assert r0 in hits and hits <= found, (str(x), a, env, [str(r) for r in rows], hits, found)


_CELL = st.sampled_from([i, q, i, q, N, lit(1), lit(2)])
_LINEAR = ("+", "-", "*", "+", "-")  # mostly sums: arguments whose cells are all found


@settings(max_examples=300, deadline=None)
@given(st.one_of(_exprs(_CELL), _exprs(_CELL, _LINEAR)), st.one_of(_exprs(_CELL), _exprs(_CELL, _LINEAR)),
       st.integers(0, 12), st.integers(0, 12), st.integers(1, 9))
def test_the_cells_reaching_a_point_are_all_found_when_said_complete(x: Any, y: Any, r0: int, c0: int, n: int) -> None:
    """``assume``'s application ``P(x, y)`` (reading ``i`` and ``q``) and the point it reads at a cell
    ``(r0, c0)``: when :func:`_reaching` says complete, every cell of a 13×13 grid at which ``(x, y)``
    reads that point is one of the cells it gives, evaluated."""
    env = {"N": n}
    a, b = _value(x, {**env, "i": r0, "q": c0}), _value(y, {**env, "i": r0, "q": c0})
    if a is None or b is None:
        return
    cells, complete = _reaching(pred("P", lit(a), lit(b)), pred("P", x, y), {"i", "q"}, {"N": 1})  # type: ignore[arg-type]
    if complete:
        found = {(_value(r, env), _value(c, env)) for r, c in cells}
        hits = {(r, c) for r in range(13) for c in range(13)
                if _value(x, {**env, "i": r, "q": c}) == a and _value(y, {**env, "i": r, "q": c}) == b}
        assert (r0, c0) in hits and hits <= found, (str(x), str(y), a, b, n, hits, found)


def test_a_large_shared_expression_has_no_form_and_its_cells_are_not_complete() -> None:
    """``e = e + e`` forty times is 41 nodes in memory and ``2^41`` uses: past ``MAX_FORM_NODES`` (counted
    once per use, as every walk visits them) it has no form, at once, and the cells reaching a point
    through it are not complete. Seven times (511 nodes) it is ``2^7·i + 2^7``. A product of sums of
    large atoms took 74 s before the bound; it has no form either."""
    e: Any = i + 1
    for _ in range(7):
        e = e + e
    assert normal(e) == {(i,): 2**7, (): 2**7}
    assert normal(ite(lt(i, 2), e, e)) == {(i,): 2**7, (): 2**7}  # one form for both branches: the ite is gone
    for _ in range(33):
        e = e + e
    assert normal(e) is None
    assert _reaching(pred("P", lit(5), q), pred("P", e - e + i, q), {"i", "q"}, {}) == ([], False)
    x: Any = i + 1
    for k in range(14):
        x = ite(lt(i, k + 1), x + 1, x + 2)
    assert normal(sum((x ^ k for k in range(1, 9)), i) * sum((x ^ (k + 100) for k in range(1, 9)), N)) is None


def test_a_product_and_quotient_by_a_parameter_unwinds_to_the_point_itself() -> None:
    """``(i * N) // N`` is ``i`` wherever it is defined: the cell reaching the point ``(a, b)`` is ``(a, b)``
    itself, with no product or quotient for z3 (unwound as ``(a * N) // N``, the vacuity check's time
    varied from 0.2 to 22 s of CPU between calls)."""
    a, b = var("a"), var("b")
    for x in ((i * N) // N, i * (N // N), (i << 3) >> 3, (N * i * 2) // (2 * N)):
        assert _reaching(pred("P", a, b), pred("P", x, q), {"i", "q"}, {}) == ([(a, b)], True), str(x)


def _mods_below_twice(x: Any, env: dict[str, int]) -> bool:
    """Every ``a % b`` under ``x`` has ``a < 2b`` at ``env`` (where both are defined)."""
    todo, seen = [x], set()
    while todo:
        y = todo.pop()
        if id(y) in seen:
            continue
        seen.add(id(y))
        if isinstance(y, Bin):
            if y.op == "%":
                a, b = _value(y.a, env), _value(y.b, env)
                if a is not None and b is not None and not a < 2 * b:
                    return False
            todo += [y.a, y.b]
        elif hasattr(y, "a") and hasattr(y, "b"):  # an ite's branches
            todo += [y.a, y.b]
    return True


@settings(max_examples=400, deadline=None)
@given(_exprs(st.sampled_from([i, i, N, K, lit(1), lit(2), lit(3)]), ("+", "-", "*", "%", "%", "//")),
       st.integers(0, 12), st.integers(1, 9), st.integers(1, 3))
def test_a_remainder_unwound_where_every_mod_is_below_twice_its_modulus(x: Any, r0: int, n: int, k: int) -> None:
    """With ``mod_checked`` (the definedness check showed every ``mod``'s argument below twice its
    modulus), the rows found are every row at which ``x`` reads the point, among the rows where every
    ``mod`` in ``x`` is below twice its modulus."""
    env = {"N": n, "K": k}
    a = _value(x, {**env, "i": r0})
    if a is None:
        return
    rows, complete = _unwind(x, lit(a), "i", {}, {"N": 1, "K": 1}, True)
    if complete:
        found = {v for r in rows if (v := _value(r, env)) is not None}
        hits = {r for r in range(25) if _value(x, {**env, "i": r}) == a and _mods_below_twice(x, {**env, "i": r})}
        assert hits <= found, (str(x), a, env, [str(r) for r in rows], hits, found)
