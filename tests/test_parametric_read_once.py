"""One value per point: every consumer of a parametric gadget's concrete interpretation (``instantiate``,
``failing_cells``, ``spec_at``, ``cell_value``, ``eval_value``, the ∀-prover's re-check of a witness) reads
each family member, predicate point and input cell once, and one ``read_once`` view passed to several
calls makes them all read one value per point; and each reads a declared family only inside its
declared size (docs/forall.md §1)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric.concrete import (
    cell_value,
    eval_value,
    failing_cells,
    instantiate,
    read_once,
    sizes,
    spec_at,
)
from symverify.kernel.parametric.expr import ParametricError, fam, inp, lt, pred, predicates, var, where
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.rings import ScalarRing

i, q, N, d = (var(x) for x in "iqNd")


def _counting() -> Callable[..., int]:
    """A family answering 1, 2, 3, … at its successive reads, whatever the index."""
    draws = itertools.count(1)
    return lambda *idx: next(draws)


def _alternating(first: bool = True) -> Callable[..., bool]:
    """A predicate answering ``first``, then its negation, then ``first``, … at its successive reads."""
    reads = itertools.count()
    return lambda *idx: (next(reads) % 2 == 0) is first


def _state(r: int, c: int) -> Any:
    return sym(f"u{r}_{c}")


def _square() -> Gadget:
    """Output ``B[0]² · u``: ``W = B[0]`` on the diagonal, ``b2 = B[0]`` (a member read by two fields)."""
    return Gadget("square", (Param("d", 1, 4),), 1, d, (PLayer(W=(tap(q, fam("B", 0)),), b2=fam("B", 0), mode="cyclic"),),
                  fam("B", 0) * fam("B", 0) * inp(i, q), families={"B": (1,)})


def _masked() -> Gadget:
    """Two layers each multiplying by ``[P(i, q)]``: output ``[P]·u``, the spec; ``care`` reads ``P`` too."""
    layer = PLayer(b1=where(pred("P", i, q), 1, 0), h=(tap(0),), mode="cyclic")
    return Gadget("masked", (Param("N", 1, 4),), N, 1, (layer, layer), where(pred("P", i, q), inp(i, q), 0),
                  care=pred("P", i, q) | lt(N, 1))


def test_spec_at_reads_a_family_member_once() -> None:
    """``spec = B[0]·B[0]·u``: a counting family gave ``1·2·u``, the value of no family."""
    assert spec_at(_square(), {"d": 2}, 0, 1, _state, {"B": _counting()}) == sym("u0_1")


def test_cell_value_reads_a_family_member_once() -> None:
    """``B[0]`` read by the tap and by ``b2``: a counting family gave ``1·2·u``."""
    assert cell_value(_square(), {"d": 2}, 0, 1, _state, {"B": _counting()}) == sym("u0_1")


def test_eval_value_reads_a_family_member_once() -> None:
    assert eval_value(fam("B", 0) + fam("B", 0), {}, {"B": _counting()}) == 2


def test_spec_at_reads_a_predicate_point_once() -> None:
    """``care`` and ``spec`` both read ``P(0, 0)``: an alternating block said care holds and the spec is 0."""
    with predicates({"P": _alternating()}):
        assert spec_at(_masked(), {"N": 2}, 0, 0, _state) == sym("u0_0")


def test_cell_value_reads_a_predicate_point_once() -> None:
    """Both layers read ``P(0, 0)``: an alternating block gave ``1·0·u = 0`` at a cell where ``P`` holds."""
    with predicates({"P": _alternating()}):
        assert cell_value(_masked(), {"N": 2}, 0, 0, _state) == sym("u0_0")


def test_cell_value_reads_an_input_cell_once() -> None:
    """``u[0][0]`` is read by ``W`` and by ``h``: a counting state gave ``1·2``, the square of no input."""
    g = Gadget("square", (Param("d", 1, 4),), 1, d, (PLayer(W=(tap(q),), h=(tap(0),), mode="cyclic"),), inp(i, q) * inp(i, q))
    assert cell_value(g, {"d": 1}, 0, 0, _counting()) == 1


def test_one_view_shared_by_spec_at_cell_value_and_instantiate() -> None:
    """A family drawing random weights, given through one ``read_once`` view: the spec, the cell-by-cell
    value and the instance's model all read one value of ``B[0]``."""
    rnd = random.Random(7)
    view = read_once({"B": lambda p: Fraction(rnd.randrange(1, 10**6), rnd.randrange(1, 100))})
    g = _square()
    want = spec_at(g, {"d": 3}, 0, 2, _state, view)
    assert cell_value(g, {"d": 3}, 0, 2, _state, view) == want
    model = Model(1, 3, 1, 3, instantiate(g, {"d": 3}, view))
    assert eval_model(model, [[_state(0, c) for c in range(3)]], ScalarRing())[0][2] == want
    assert read_once(view) == view  # a view is read through, not wrapped again


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(1, 4), st.integers(0, 3))
def test_spec_and_output_agree_on_any_answers(answers: list[bool], n: int, r: int) -> None:
    """Whatever a predicate answers at its successive reads, the spec and the output of the
    cell-by-cell interpretation agree within one view (the gadget meets its spec)."""
    r = r % n
    it = itertools.cycle(answers)
    view = read_once({"P": lambda *idx: next(it)})
    with predicates(view or {}):
        want = spec_at(_masked(), {"N": n}, r, 0, _state)
        got = cell_value(_masked(), {"N": n}, r, 0, _state)
    assert want is None or got == want


def test_the_witness_recheck_reads_one_placement() -> None:
    """A placement false at its first 4 reads (the check of ``assume`` at the 4 cells) and true after:
    the re-check built the instance from ``P`` true, output ``2·u`` against the spec ``u``, and so
    confirmed a difference no placement satisfying ``assume`` makes."""
    from symverify.kernel.provers import forall

    g = Gadget("keep", (Param("N", 1, 8),), N, 1, (PLayer(b1=where(pred("P", i, q), 2, 1), h=(tap(0),), mode="cyclic"),),
               inp(i, q), assume=~pred("P", i, q))
    calls = itertools.count()
    differs, detail = forall._recheck(g, {"N": 4}, 0, 0, {"P": lambda r, c: next(calls) >= 4})
    assert differs is False, detail


def test_a_set_in_a_predicates_block_is_a_placement() -> None:
    """A set of cells in a ``with predicates(...)`` block: ``instantiate`` raised ``TypeError`` (the read-once
    wrapper takes callables only) and the cell-by-cell reads called the set."""
    g = _masked()
    with predicates({"P": {(1, 0)}}):
        model = Model(2, 1, 2, 1, instantiate(g, {"N": 2}))
        assert eval_model(model, [[sym("a")], [sym("b")]], ScalarRing()) == [[0], [sym("b")]]
        assert spec_at(g, {"N": 2}, 1, 0, _state) == sym("u1_0")
        assert cell_value(g, {"N": 2}, 1, 0, _state) == sym("u1_0")
        assert spec_at(g, {"N": 2}, 0, 0, _state) is None
    with predicates({"P": {(1, 0, 0)}}), pytest.raises(ParametricError, match=r"placement P: expected tuples of 2 ints"):
        instantiate(g, {"N": 2})


def test_failing_cells_with_a_placement_outside_int64() -> None:
    """``assume`` with a shift past int64 is evaluated cell by cell: with a placement given and no
    ``predicates`` block that read ``P`` from the (empty) block and raised."""
    g = Gadget("wide", (Param("N", 1, 3),), N, 1, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),), inp(i, q),
               assume=~pred("P", i, q) | lt(N << 62, 1))
    env, nn, dd = sizes(g, {"N": 3})
    assert failing_cells(g, env, nn, dd, {"P": lambda r, c: r == 1}) == [(1, 0)]
    assert failing_cells(g, env, nn, dd, {"P": {(2, 0)}}) == [(2, 0)]


def test_spec_at_and_cell_value_check_their_families() -> None:
    """A misspelt family was ignored (the member read as its free symbol), a non-callable raised deep inside."""
    with pytest.raises(ParametricError, match=r"families: 'C' not among its families \(B\)"):
        spec_at(_square(), {"d": 2}, 0, 0, _state, {"C": lambda p: 1})
    with pytest.raises(ParametricError, match=r"family 'B': expected a callable on its indices .*found int"):
        cell_value(_square(), {"d": 2}, 0, 0, _state, {"B": 3})  # type: ignore[dict-item]
    with pytest.raises(ParametricError, match=r"read_once: expected a mapping from names to callables, found list"):
        read_once([lambda: 1])  # type: ignore[arg-type]
    with pytest.raises(ParametricError, match=r"read_once: 'B': expected a callable on points, found int 3"):
        read_once({"B": 3})  # type: ignore[dict-item]


def _sized_family() -> Gadget:
    """``b1 = B[i]`` with ``B`` declared of size ``N − 1``: the last row reads ``B[N − 1]``, outside it
    (``prove_forall`` refuses the gadget)."""
    return Gadget("famr", (Param("N", 1, 40), Param("d", 1, 2)), N, d, (PLayer(b1=fam("B", i), h=(tap(0),), mode="cyclic"),),
                  fam("B", i) * inp(i, q), families={"B": (N - 1,)})


@pytest.mark.parametrize("n", [3, 30], ids=["cell-by-cell", "bulk"])
def test_a_member_outside_its_declared_size_is_refused(n: int) -> None:
    """``B[N − 1]`` of a family declared of size ``N − 1`` was read silently (its free symbol, or what
    the callable answered), by the instance, the spec and the cell-by-cell value alike."""
    g = _sized_family()
    msg = rf"gadget famr: family B read at \({n - 1},\), outside its declared size \({n - 1},\) at \{{'N': {n}, 'd': 1\}}"
    with pytest.raises(ParametricError, match=msg):
        instantiate(g, {"N": n, "d": 1})
    with pytest.raises(ParametricError, match=msg):
        instantiate(g, {"N": n, "d": 1}, {"B": lambda p: p + 1})
    with pytest.raises(ParametricError, match=msg):
        spec_at(g, {"N": n, "d": 1}, n - 1, 0, _state)
    with pytest.raises(ParametricError, match=msg):
        cell_value(g, {"N": n, "d": 1}, n - 1, 0, _state)
    assert spec_at(g, {"N": n, "d": 1}, n - 2, 0, _state) == sym(f"B[{n - 2}]") * sym(f"u{n - 2}_0")
    assert cell_value(g, {"N": n, "d": 1}, n - 2, 0, _state, {"B": lambda p: 3}) == 3 * sym(f"u{n - 2}_0")


def test_a_family_size_is_evaluated_where_a_member_is_read() -> None:
    """A declared size undefined at ``N = 1`` refuses a read there, and nothing where the family is not read."""
    g = Gadget("undef", (Param("N", 1, 4),), N, 1, (PLayer(b1=fam("B", 0), h=(tap(0),), mode="cyclic"),), fam("B", 0) * inp(i, q),
               families={"B": (N - 2,), "C": (N - 2,)})
    with pytest.raises(ParametricError, match=r"gadget undef: family B: its declared size \(N - 2\) is undefined at \{'N': 1\}"):
        instantiate(g, {"N": 1})
    assert len(instantiate(g, {"N": 3})) == 1


@pytest.mark.parametrize("idx, size, ok", [((), (), True), ((1, 2, 3), (2, 3, 4), True), ((1, 3, 3), (2, 3, 4), False), ((0, 1), (1, 1), False)])
def test_the_declared_size_holds_for_any_number_of_indices(idx: tuple[int, ...], size: tuple[int, ...], ok: bool) -> None:
    g = Gadget("k", (Param("N", 1, 4),), N, 1, (PLayer(b1=fam("B", *idx), h=(tap(0),), mode="cyclic"),), fam("B", *idx) * inp(i, q),
               families={"B": size})
    if ok:
        (layer,) = instantiate(g, {"N": 2})
        assert layer.b1.nonzero()[(0, 0)] == sym("B" + "".join(f"[{x}]" for x in idx))
    else:
        with pytest.raises(ParametricError, match=rf"family B read at \({', '.join(map(str, idx))}\), outside its declared size"):
            instantiate(g, {"N": 2})
