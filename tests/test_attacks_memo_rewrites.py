"""Attacks on what is kept by an object's identity after a node inside it was rewritten in place
(``object.__setattr__`` past a frozen dataclass): every reader must see the content held now.

The concrete interpretation keeps the cut points of a bias expression (``concrete._CUTS``,
``concrete._PRED_FREE``) by the expression's identity; a comparison's operand rewritten inside it
left its top-level fields unchanged, so the old cut points painted a block across a row where the
new content changes value: ``instantiate`` built layers of neither content, and ``prove_forall``'s
exact re-check of a true counterexample disagreed with z3 (a ``ProverError`` instead of ``refuted``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import ProverError
from symverify.kernel.parametric import concrete
from symverify.kernel.parametric.expr import Lit
from symverify.kernel.provers.forall import prove_forall
from symverify.kernel.provers.outcome import Verdict
from symverify.parametric import Gadget, Param, PLayer, inp, instantiate, lt, tap, var, where

i, q, N = var("i"), var("q"), var("N")


def _mask_gadget(k: int = 2, lo: int = 3, hi: int = 8) -> tuple[Gadget, object]:
    """``out = b1 ⊙ in`` with ``b1 = 1 on rows i < N − k``, spec ``in`` on those rows; the comparison returned."""
    cond = lt(i, N - k)
    g = Gadget("mask", (Param("N", lo, hi),), N, 1, (PLayer(b1=where(cond, 1, 0), h=(tap(0),)),),
               where(lt(i, N - 2), inp(i, q), 0))
    return g, cond


def _fresh(g: Gadget, n: int) -> list[object]:
    concrete._CUTS.clear()
    concrete._PRED_FREE.clear()
    (layer,) = instantiate(g, {"N": n})
    return [layer.b1.get(r, 0) for r in range(n)]


def test_a_comparison_rewritten_in_place_gives_the_new_cut_points() -> None:
    g, cond = _mask_gadget()
    (layer,) = instantiate(g, {"N": 6})
    assert [layer.b1.get(r, 0) for r in range(6)] == [1, 1, 1, 1, 0, 0]
    object.__setattr__(cond, "b", N - 4)  # i < N − 4: rows 0, 1 only; the old blocks were [0, 4), [4, 5), [5, 6)
    (layer,) = instantiate(g, {"N": 6})
    assert [layer.b1.get(r, 0) for r in range(6)] == [1, 1, 0, 0, 0, 0]


def test_a_literal_rewritten_deep_inside_gives_the_new_cut_points() -> None:
    g, cond = _mask_gadget()
    instantiate(g, {"N": 7})
    lit = cond.b.b  # N − 2: the literal 2
    assert type(lit) is Lit
    object.__setattr__(lit, "value", 5)
    (layer,) = instantiate(g, {"N": 7})
    assert [layer.b1.get(r, 0) for r in range(7)] == [1, 1, 0, 0, 0, 0, 0]


def test_prove_forall_refutes_a_gadget_rewritten_after_an_instance() -> None:
    """The true counterexample of the rewritten gadget re-checks (was a ``ProverError``: the
    re-check's instance model kept the old cut points and agreed with the spec)."""
    g, cond = _mask_gadget(lo=6, hi=6)
    assert prove_forall(g).proved
    instantiate(g, {"N": 6})
    object.__setattr__(cond, "b", N - 4)
    result = prove_forall(g)
    assert result.verdict == Verdict.REFUTED
    assert "output 0 ≠ spec" in str(result)


def test_a_condition_list_changed_after_an_instance_is_read_again() -> None:
    """A field rewritten to a list (its items can change with no field assigned) is never kept."""
    g, cond = _mask_gadget()
    both = cond & lt(i, N - 1)
    g = Gadget("m2", (Param("N", 3, 8),), N, 1, (PLayer(b1=where(both, 1, 0), h=(tap(0),)),), inp(i, q))
    items = list(both.items)
    object.__setattr__(both, "items", items)
    (layer,) = instantiate(g, {"N": 6})
    assert [layer.b1.get(r, 0) for r in range(6)] == [1, 1, 1, 1, 0, 0]
    items[0] = lt(i, 1)
    (layer,) = instantiate(g, {"N": 6})
    assert [layer.b1.get(r, 0) for r in range(6)] == [1, 0, 0, 0, 0, 0]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 24), before=st.integers(0, 24), after=st.integers(0, 24))
def test_instantiate_after_a_rewrite_matches_a_fresh_evaluation(n: int, before: int, after: int) -> None:
    cond = lt(i, before)
    g = Gadget("t", (Param("N", 3, 24),), N, 1, (PLayer(b1=where(cond, 1, 2), h=(tap(0),)),), inp(i, q))
    instantiate(g, {"N": n})
    object.__setattr__(cond, "b", Lit(after))
    (layer,) = instantiate(g, {"N": n})
    got = [layer.b1.get(r, 0) for r in range(n)]
    assert got == [1 if r < after else 2 for r in range(n)]
    assert got == _fresh(g, n)


def test_cut_points_are_still_kept_for_an_unchanged_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    g, _ = _mask_gadget()
    instantiate(g, {"N": 6})
    calls: list[object] = []
    real = concrete._cuts_v
    monkeypatch.setattr(concrete, "_cuts_v", lambda *a: calls.append(a) or real(*a))
    instantiate(g, {"N": 6})
    assert calls == []


def test_a_permutation_factor_rewritten_in_place_is_not_handed_to_the_next_caller() -> None:
    """Small permutations share their switch factors; one result's swap factor rewritten in place to
    the identity changed what every later caller got (``[1, 0, 3, 2]`` routed as the identity)."""
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    from symverify.kernel.kaleidoscope.apply import apply
    from symverify.kernel.provers.matrix import verify_matrix

    first = permutation_to_kaleidoscope([1, 0, 3, 2])
    f = next(f for f in first.kaleidoscope.groups[0].factors if any(f.d2))
    for name, v in (("d1", 1), ("d2", 0), ("d3", 0), ("d4", 1)):
        object.__setattr__(f, name, tuple(v for _ in getattr(f, name)))
    assert apply(first.kaleidoscope, ["a", "b", "c", "d"]) == ["a", "b", "c", "d"]  # the caller's own rewrite
    again = permutation_to_kaleidoscope([1, 0, 3, 2])
    assert all(g is not f for g in again.kaleidoscope.groups[0].factors)
    assert apply(again.kaleidoscope, ["a", "b", "c", "d"]) == ["b", "a", "d", "c"]
    swap = [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]
    assert verify_matrix(again.kaleidoscope, swap).verdict == Verdict.PROVED


@settings(max_examples=30, deadline=None)
@given(perm=st.permutations(range(8)), which=st.integers(0, 5))
def test_permutations_after_a_rewrite_route_as_they_should(perm: list[int], which: int) -> None:
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    from symverify.kernel.kaleidoscope.apply import apply

    f = permutation_to_kaleidoscope(perm).kaleidoscope.groups[0].factors[which]
    object.__setattr__(f, "d1", tuple(1 - x for x in f.d1))
    got = apply(permutation_to_kaleidoscope(perm).kaleidoscope, list(range(8)))
    assert [got[perm[k]] for k in range(8)] == list(range(8))


def _lin_circuit():  # type: ignore[no-untyped-def]
    from fractions import Fraction

    from symverify.kernel.ir.circuit import Circuit, Gate

    return Circuit(2, 1, (Gate.mul(0, 1), Gate.lin(2, Fraction(1, 3), 0, 1)), (3,))


def test_stats_of_a_circuit_rewritten_in_place_are_measured_again() -> None:
    """``x·y/3 + x`` has depth 2 and degree 2; its last gate rewritten to read the inputs only
    (``x/3 + y``) has depth 1 and degree 1 (the kept measures were the old gates')."""
    from symverify.kernel.ir.analysis import stats

    c = _lin_circuit()
    assert (stats(c).depth, stats(c).degree_bound) == (2, 2)
    object.__setattr__(c.gates[1], "args", (0, 1))
    assert (stats(c).depth, stats(c).degree_bound) == (1, 1)


def test_stats_see_a_coefficient_made_zero_in_place() -> None:
    from fractions import Fraction

    from symverify.kernel.ir.analysis import stats
    from symverify.kernel.ir.circuit import Circuit, Gate

    third = Fraction(1, 3)
    c = Circuit(2, 1, (Gate.mul(0, 1), Gate.lin(2, third, 0, 0)), (3,))
    assert stats(c).degree_bound == 2
    object.__setattr__(c.gates[1].coeffs[0], "_numerator", 0)  # the product's weight is now 0
    object.__setattr__(c.gates[1].coeffs[0], "_denominator", 1)
    assert stats(c).degree_bound == -1  # both weights 0: the output is the zero polynomial


def test_verify_reports_the_stats_of_the_content_now() -> None:
    import symverify as sv

    c = _lin_circuit()
    assert sv.verify(c, _lin_circuit(), method="randomized").lhs["depth"] == 2
    object.__setattr__(c.gates[1], "args", (0, 1))
    report = sv.verify(c, _lin_circuit(), method="randomized")
    assert report.lhs["depth"] == 1 and report.lhs["degree_bound"] == 1


def _bias_model(fill: int):  # type: ignore[no-untyped-def]
    from symverify.kernel.ir.baseconv import Layer, Mode, Model
    from symverify.kernel.ir.grid import Grid

    layer = Layer(Grid.from_cells(1, 1, {(0, 0): 1}), Grid(2, 1, 0, ()), Grid.from_cells(2, 1, {(0, 0): 1}), Grid(2, 1, fill, ()),
                  Mode.CAUSAL)
    return Model(2, 1, 2, 1, (layer,))


def test_numeric_check_of_a_model_rewritten_in_place_runs_the_content_now() -> None:
    """A bias grid's fill rewritten in place after a first float run: the float executor's kept
    plan ran the old bias, so the cross-check against exact evaluation failed (errors of 14 and 35)."""
    pytest.importorskip("torch")
    from symverify.executors import execute, numeric_check

    m = _bias_model(3)
    assert numeric_check(m, [[[2], [5]]]).ok
    object.__setattr__(m.layers[0].b2, "fill", 10)
    check = numeric_check(m, [[[2], [5]]])
    assert check.ok and check.max_abs_err == 0.0
    assert execute(m, [[2], [5]], backend="torch").tolist() == [[24.0], [75.0]]


@pytest.mark.parametrize("backend", ["torch", "modular"])
def test_execute_after_forget_runs_the_content_now(backend: str) -> None:
    """``execute`` keeps a plan per object by identity (a snapshot on every call would cost more than
    a small batch's run): ``forget(obj)`` (or any check of it) drops it after an in-place rewrite."""
    pytest.importorskip("torch")
    from symverify.executors import execute
    from symverify.kernel.ir.memo import forget

    c = _lin_circuit()
    execute(c, [[2], [5]], backend=backend)
    object.__setattr__(c.gates[1], "args", (0, 1))
    forget(c)
    from fractions import Fraction

    from symverify.kernel.ir.circuit import Circuit, Gate

    truth = Circuit(2, 1, (Gate.mul(0, 1), Gate.lin(0, Fraction(1, 3), 1, 1)), (3,))  # x/3 + y
    assert execute(c, [[2], [5]], backend=backend).tolist() == execute(truth, [[2], [5]], backend=backend).tolist()


def test_refresh_drops_the_plans_of_a_side_changed_in_place_only() -> None:
    pytest.importorskip("torch")
    from symverify.executors import execute
    from symverify.kernel.engines import numbers
    from symverify.kernel.provers.fingerprint import refresh

    m = _bias_model(3)
    assert execute(m, [[2], [5]], backend="modular").tolist() == [[10], [40]]
    refresh(m)
    kept = len(numbers._PLANS)
    refresh(m)  # nothing changed: the plan is kept
    assert len(numbers._PLANS) == kept
    object.__setattr__(m.layers[0].b2, "fill", 10)
    refresh(m)
    assert execute(m, [[2], [5]], backend="modular").tolist() == [[24], [75]]


def _extra_cell_model():  # type: ignore[no-untyped-def]
    """``u ↦ u·W`` on a 1×2 state, ``W = diag(1, 1/3)``, its 1/3 an exact extra cell of a cell array."""
    from fractions import Fraction

    import numpy as np

    from symverify.kernel.ir.baseconv import Layer, Mode, Model
    from symverify.kernel.ir.cellarray import CellArray
    from symverify.kernel.ir.grid import Grid

    cells = CellArray(np.array([0]), np.array([0]), np.array([1.0]), [(1, 1, Fraction(1, 3))])
    layer = Layer(Grid(2, 2, 0, cells), Grid(1, 2, 0, ()), Grid.from_cells(1, 2, {}), Grid(1, 2, 1, ()), Mode.CAUSAL)
    return Model(1, 2, 1, 2, (layer,))


@pytest.mark.parametrize("method", ["exact", "randomized", "auto"])
def test_a_cell_arrays_kept_positions_cannot_be_written_in_place(method: str) -> None:
    """The positions of a cell array's extra cells, kept on its first iteration, were a list: one
    entry written in place after a ``verify`` (no field assigned, so the side's snapshot still
    matched) dropped the extra cell from the interpreter and the encoding, and every method proved
    ``diag(1, 1/3)`` equal to ``diag(1, 0)``. They are a tuple."""
    import contextlib
    from fractions import Fraction

    import symverify as sv
    from symverify.kernel.ir.circuit import Circuit, Gate

    m = _extra_cell_model()
    truth = Circuit(1, 2, (Gate.lin(1, Fraction(1, 3), 1, 0),), (0, 2))  # (x, y/3)
    dropped = Circuit(1, 2, (Gate.const(0),), (0, 2))  # (x, 0)
    assert sv.verify(m, truth, method=method).proved
    assert sv.verify(m, truth, method=method).proved  # the snapshot now holds the kept positions
    cells = m.layers[0].W.rects
    assert cells._order is not None
    with contextlib.suppress(TypeError):
        cells._order[0] = 10**6
    assert sv.verify(m, dropped, method=method).refuted
    assert sv.verify(m, truth, method=method).proved
    assert sv.evaluate(m, [[3, 6]]) == [[3, 2]]


def test_a_kept_schedules_arrays_cannot_be_written() -> None:
    """``schedule(program(c))`` is kept for the circuit and read by the torch engine's every trial:
    a node id written into one of its arrays (``x·y`` read as ``x·x``) had ``randomized`` prove
    ``x·y ≡ x·x``. Its arrays are read-only over ``bytes``, and cannot be made writable."""
    pytest.importorskip("torch")
    import symverify as sv
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.semantics.straightline import program, schedule

    c = Circuit(2, 1, (Gate.mul(0, 1),), (2,))
    assert sv.verify(c, Circuit(2, 1, (Gate.mul(0, 1),), (2,)), method="randomized", backend="torch").proved
    b = schedule(program(c)).steps[0][0][3]  # (kind, out, a, b, i, j): the second operand of x·y
    with pytest.raises(ValueError, match="read-only"):
        b[0] = 0
    with pytest.raises(ValueError, match="WRITEABLE"):
        b.flags.writeable = True
    assert sv.verify(c, Circuit(2, 1, (Gate.mul(0, 0),), (2,)), method="randomized", backend="torch").refuted


def test_a_kept_layout_rewritten_in_place_is_not_handed_to_the_next_caller() -> None:
    """``retnet(N, d)`` hands equal calls one kept circuit: a gate of one caller's circuit rewritten
    in place (``x·y`` made ``x·x``) was every later caller's ``retnet`` (the reference its models are
    proved against)."""
    import symverify as sv
    from symverify.library import _retnet_layout, retnet, retnet_weights

    c = retnet(2, 1)
    assert retnet(2, 1) is c  # shared while unchanged
    k = next(k for k, g in enumerate(c.gates) if len(g.args) == 2 and g.args[0] != g.args[1])
    object.__setattr__(c.gates[k], "args", (c.gates[k].args[0],) * 2)
    again = retnet(2, 1)
    assert again is not c
    reference, _ = _retnet_layout(2, 1, [retnet_weights(1)], None)
    assert sv.verify(again, reference, method="exact").proved


def test_a_weights_key_rewritten_to_the_same_hash_gets_its_own_layout() -> None:
    """A weights object used as the memo's key, rewritten in place afterwards to content of the same
    hash (``5 → 5 + 2^61 − 1``), was the stored key: equal to a later caller's fresh weights of that
    content, it handed them the circuit built for ``b_out = 5``."""
    import symverify as sv
    from symverify.library_gated import _gated_conv_layout, gated_conv_layout, gated_conv_weights

    big = 5 + (1 << 61) - 1
    assert hash(big) == hash(5)
    w = gated_conv_weights(2, 1, b_out=[5])
    first, _ = gated_conv_layout(2, w)
    object.__setattr__(w, "b_out", (big,))
    fresh = gated_conv_weights(2, 1, b_out=[big])
    got, _ = gated_conv_layout(2, fresh)
    assert got is not first
    assert sv.verify(got, _gated_conv_layout(2, fresh, None)[0], method="exact").proved


def test_a_value_memo_takes_held_and_same_together() -> None:
    from symverify.errors import UsageError
    from symverify.ir.value_memo import ValueMemo

    with pytest.raises(UsageError, match="held and same go together"):
        ValueMemo(4, held=lambda v: v)


def test_refresh_drops_what_is_kept_for_a_subclass_each_time() -> None:
    """A subclass of the IR's classes has no snapshot (its fields may answer otherwise): nothing kept
    for it is read after a refresh."""
    from symverify.kernel.ir.analysis import _STATS, stats
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.provers.fingerprint import refresh

    class Sub(Circuit):
        pass

    c = Sub(2, 1, (Gate.mul(0, 1),), (2,))
    stats(c)
    assert _STATS.get(c) is not None
    refresh(c)
    assert _STATS.get(c) is None


def test_stats_of_gates_set_as_a_list_are_never_kept() -> None:
    from symverify.kernel.ir.analysis import stats

    c = _lin_circuit()
    gates = list(c.gates)
    object.__setattr__(c, "gates", gates)
    assert stats(c).depth == 2
    gates[1] = type(gates[1]).lin(0, 1, 1, 1)  # x + y, read by no other gate: depth 1
    assert stats(c).depth == 1


def _evict_programs() -> None:
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.semantics.straightline import program

    for k in range(20):  # more circuits than the program memo keeps; the plainness memo is not touched
        program(Circuit(2, 1, (Gate.mul(0, 1),) * (k + 1), (2,)))


@pytest.mark.parametrize("writer", ["program", "execute"])
def test_a_program_kept_while_a_side_was_rewritten_is_not_read_once_it_is_restored(writer: str) -> None:
    """A reader outside a check (``program(c)``, ``execute``) kept the program of ``x·x`` for a circuit
    rewritten in place from ``x·y``; its gate's old args put back (the very objects its snapshot holds),
    the next check matched and ``randomized`` proved ``x·y ≡ x·x`` with the kept program. Such a
    memo compares the side's snapshot before it stores a value."""
    import symverify as sv
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.semantics.straightline import program

    c = Circuit(2, 1, (Gate.mul(0, 1),), (2,))
    xx = Circuit(2, 1, (Gate.mul(0, 0),), (2,))
    assert sv.verify(c, xx, method="randomized").refuted
    _evict_programs()
    old = c.gates[0].args
    object.__setattr__(c.gates[0], "args", (0, 0))
    if writer == "program":
        program(c)
    else:
        assert sv.execute(c, [[3], [5]], backend="modular").tolist() == [[9], [0]]
    object.__setattr__(c.gates[0], "args", old)
    assert sv.verify(c, xx, method="randomized").refuted
    assert sv.verify(c, Circuit(2, 1, (Gate.mul(0, 1),), (2,)), method="randomized").proved


def test_measures_kept_while_a_side_was_rewritten_are_not_reported_once_it_is_restored() -> None:
    import symverify as sv
    from symverify.kernel.ir.analysis import _STATS, stats

    c = _lin_circuit()
    assert sv.verify(c, _lin_circuit(), method="randomized").lhs["depth"] == 2
    _STATS.clear()
    old = c.gates[1].args
    object.__setattr__(c.gates[1], "args", (0, 1))
    assert stats(c).depth == 1
    object.__setattr__(c.gates[1], "args", old)
    assert sv.verify(c, _lin_circuit(), method="randomized").lhs["depth"] == 2


def test_a_check_scope_skips_the_validator_for_its_own_objects_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from symverify.kernel.ir import memo

    seen: list[object] = []
    monkeypatch.setattr(memo, "_VALIDATOR", [seen.append])
    kept: memo.IdentityMemo[int] = memo.IdentityMemo(4, validate=True)
    a, b = [1], [2]
    with memo.checked_scope(a):
        kept.put(a, 1)
        kept.put(b, 2)
        assert seen == [b]
    assert seen == [b, a]  # leaving the block compares a's snapshot once
    kept.put(a, 3)
    assert seen == [b, a, a]
    with memo.checked_scope(a, compare_after=False):
        kept.put(a, 4)
    assert seen == [b, a, a]
    with memo.checked_scope(a, b):  # nothing stored for either: nothing to compare
        assert kept.get(a) == 4
    assert seen == [b, a, a]
    with memo.checked_scope(a), memo.checked_scope(a, compare_after=False):
        kept.put(a, 5)  # the enclosing block compares when it ends
    assert seen == [b, a, a, a]


def test_a_digest_kept_while_a_model_was_rewritten_is_not_reported_once_it_is_restored() -> None:
    """``checked_digest`` of a model whose bias was rewritten in place kept that content's digest; the
    old fill put back, the next ``verify`` matched its snapshot and its sealed report named the
    rewritten model's digest. The digest memo compares the side's snapshot before storing."""
    import symverify as sv
    from symverify.kernel.provers.fingerprint import _RECENT, checked_digest, content_digest

    m = _bias_model(3)
    assert sv.verify(m, _bias_model(3), method="randomized").proved
    _RECENT.clear()
    grid = m.layers[0].b2
    object.__setattr__(grid, "fill", 10)
    checked_digest(m)
    object.__setattr__(grid, "fill", 3)
    report = sv.verify(m, _bias_model(3), method="randomized")
    assert report.lhs["digest"] == content_digest(_bias_model(3)) != content_digest(_bias_model(10))


def _xy_and_xx():  # type: ignore[no-untyped-def]
    from symverify.kernel.ir.circuit import Circuit, Gate

    return Circuit(2, 1, (Gate.mul(0, 1),), (2,)), Circuit(2, 1, (Gate.mul(0, 0),), (2,))


def _read_in_a_call_that_rewrites_it(call: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run one ``verify`` of ``x·y`` in which code the caller hands in (or code outside the kernel)
    rewrites its gate to ``x·x`` after the side was checked; the old args are put back after the call.
    The next ``verify`` must read ``x·y``: its check matches the first call's snapshot again. What the
    call itself says is not asserted (it read a side changed under it: the method may meet both)."""
    import contextlib

    import symverify as sv
    import symverify.progress

    c, xx = _xy_and_xx()
    old = c.gates[0].args
    _evict_programs()

    def rewrite() -> None:
        object.__setattr__(c.gates[0], "args", (0, 0))

    class Compiled:  # a compiled object whose .model is read after the lhs was checked
        @property
        def model(self):  # type: ignore[no-untyped-def]
            rewrite()
            return sv.compile(xx).model

    class Seed:  # read by operator.index after both sides were checked
        def __index__(self) -> int:
            rewrite()
            return 0

    @contextlib.contextmanager
    def activity(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        rewrite()  # symverify.progress is outside the kernel: it runs within the call
        _evict_programs()  # what the call kept of x·y before it (public calls on other circuits)
        yield

    try:
        if call == "property":
            sv.verify(c, Compiled(), method="randomized")
        elif call == "seed":
            sv.verify(c, xx, method="randomized", seed=Seed())  # type: ignore[arg-type]
        else:
            monkeypatch.setattr(symverify.progress, "activity", activity)
            sv.verify(c, xx, method="randomized")
    except ProverError:  # the trials and the exact re-check read the side at different times
        pass
    monkeypatch.undo()
    object.__setattr__(c.gates[0], "args", old)
    return c, xx


@pytest.mark.parametrize("call", ["property", "seed", "activity"])
@pytest.mark.parametrize("method", ["randomized", "auto", "exact"])
def test_a_side_rewritten_within_a_verify_and_put_back_after_is_read_as_it_is(
        call: str, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within ``verify``'s call its two sides skipped the snapshot comparison before the memos stored
    (``checked_scope``): a side rewritten there by code run in the call (another argument's
    ``.model``, a seed's ``__index__``, the progress display) had its program of ``x·x`` kept, and
    with its old args put back the next ``verify`` proved ``x·y ≡ x·x``. Leaving the call compares
    the sides' snapshots once more and drops what is kept for one that changed."""
    import symverify as sv

    c, xx = _read_in_a_call_that_rewrites_it(call, monkeypatch)
    c2, _ = _xy_and_xx()
    assert sv.verify(c, xx, method=method).refuted
    assert sv.verify(c, c2, method=method).proved


def test_a_side_rewritten_by_another_arguments_property_is_checked_as_it_is_then() -> None:
    """``verify`` checked the lhs, then read the rhs's ``.model``: a property rewriting the lhs from
    ``x·y`` to ``x·x`` there went unseen, the run read the program kept for ``x·y`` and proved the
    ``x·x`` circuit equal to ``x·y``, its sealed report naming ``x·x``'s digest. Both sides are read
    first, then checked."""
    import symverify as sv
    from symverify.kernel.provers.fingerprint import _RECENT, content_digest

    c, xx = _xy_and_xx()
    xy, _ = _xy_and_xx()
    assert sv.verify(c, xy, method="randomized").proved  # keeps c's program
    _RECENT.clear()

    class Compiled:
        @property
        def model(self):  # type: ignore[no-untyped-def]
            object.__setattr__(c.gates[0], "args", (0, 0))
            return sv.compile(xy).model

    report = sv.verify(c, Compiled(), method="randomized")
    assert report.refuted
    assert report.lhs["digest"] == content_digest(xx)


@pytest.mark.parametrize("backend", ["python", "torch"])
def test_a_kept_program_whose_fields_were_set_is_not_handed_out_again(backend: str) -> None:
    """``program(c)`` hands out the program kept for ``c``, which every later ``verify`` reads: its
    fields set by the holder (``object.__setattr__``; its columns were kept in its ``__dict__``) to
    those of ``x·x``'s program had ``randomized`` prove ``x·y ≡ x·x``. Its fields are slots, its
    columns kept elsewhere, and a program whose fields changed is a miss."""
    import contextlib

    import symverify as sv
    from symverify.kernel.semantics.straightline import program

    if backend == "torch":
        pytest.importorskip("torch")
    c, xx = _xy_and_xx()
    assert sv.verify(c, xx, method="randomized", backend=backend).refuted
    kept, other = program(c), program(xx)
    for name in ("scalars", "ops", "args", "coeff_index"):
        object.__setattr__(kept, name, getattr(other, name))
    for name in ("code", "mod_code"):  # where the object takes them (it no longer does)
        with contextlib.suppress(AttributeError):
            object.__setattr__(kept, name, getattr(other, name))
    assert sv.verify(c, xx, method="randomized", backend=backend).refuted
    assert program(c) is not kept and program(c).code == ((0, 0, 1, -1, -1),)


def test_a_kept_schedule_whose_steps_were_set_is_not_read_again() -> None:
    """``schedule(program(c))`` hands out the schedule the torch engine's every trial reads: its
    ``steps`` set to those of ``x·x`` (``object.__setattr__``) had ``randomized`` prove ``x·y ≡ x·x``."""
    import symverify as sv
    from symverify.kernel.semantics.straightline import program, schedule

    pytest.importorskip("torch")
    c, xx = _xy_and_xx()
    assert sv.verify(c, xx, method="randomized", backend="torch").refuted
    kept = schedule(program(c))
    object.__setattr__(kept, "steps", schedule(program(xx)).steps)
    assert sv.verify(c, xx, method="randomized", backend="torch").refuted
    assert schedule(program(c)) is not kept


def test_measures_handed_out_and_rewritten_are_not_another_callers() -> None:
    """``stats(c)`` handed out the measures it kept for ``c``: a depth set on them by one caller
    (``object.__setattr__``) was every later caller's, and the sealed report of the next ``verify``
    stated it. Each call hands out its own copy."""
    import symverify as sv
    from symverify.kernel.ir.analysis import stats

    c = _lin_circuit()
    assert sv.verify(c, _lin_circuit(), method="randomized").lhs["depth"] == 2
    object.__setattr__(stats(c), "depth", 1)
    assert stats(c).depth == 2
    assert sv.verify(c, _lin_circuit(), method="randomized").lhs["depth"] == 2
