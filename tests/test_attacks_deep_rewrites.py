"""Attacks on ``verify`` through a field written *inside* an object a side holds, past its frozen
dataclass (``object.__setattr__`` on a gate, a layer, a grid, a butterfly factor, a cell array, or a
``Fraction``'s slots), after a first ``verify`` of that side filled the identity memos. The side's
own fields are unchanged, so a lookup by identity would hit; the kernel's check of each side
compares a snapshot of everything it holds (:func:`symverify.kernel.provers.fingerprint.check_plain`)
and drops what the memos keep for a side found changed (:func:`symverify.kernel.ir.memo.forget`).
Without that, the second ``verify`` proved the old content (its straight-line program, bounds and
digest were reused) while ``evaluate`` read the new one."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.memo import IdentityMemo, forget
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers import fingerprint
from symverify.kernel.provers.fingerprint import check_plain, content_digest

METHODS = ["randomized", "auto", "exact"]


def _product() -> Circuit:
    return Circuit(2, 1, (Gate.mul(0, 1), Gate.lin(2, Fraction(1, 3), 0, 1)), (3,))


@pytest.mark.parametrize("method", METHODS)
def test_a_gates_args_rewritten_after_verify_are_read_afresh(method):
    """``x·y/3 + x`` against itself is proved; then gate 0 of ``b`` reads ``x·x`` (args rewritten in
    place, still well-formed): ``verify`` must refute, and its report name the new content's digest."""
    a, b = _product(), _product()
    assert sv.verify(a, b, method=method).proved
    object.__setattr__(b.gates[0], "args", (0, 0))
    report = sv.verify(a, b, method=method)
    assert report.refuted
    assert report.rhs["digest"] == content_digest(Circuit(2, 1, (Gate.mul(0, 0), Gate.lin(2, Fraction(1, 3), 0, 1)), (3,)))


@pytest.mark.parametrize("method", METHODS)
def test_a_gates_op_rewritten_after_verify_is_read_afresh(method):
    """``x·y`` turned into ``x + y`` by rewriting the op and coefficients of the gate in place."""
    a, b = _product(), _product()
    assert sv.verify(a, b, method=method).proved
    object.__setattr__(b.gates[0], "coeffs", (1, 1))
    object.__setattr__(b.gates[0], "op", Gate.lin(0, 1, 1, 1).op)
    assert sv.verify(a, b, method=method).refuted


@pytest.mark.parametrize("method", METHODS)
def test_a_fractions_numerator_rewritten_inside_a_gate_is_read_afresh(method):
    """The coefficient ``1/3`` of gate 1 becomes ``2/3`` through the Fraction's own slot."""
    a, b = _product(), _product()
    assert sv.verify(a, b, method=method).proved
    object.__setattr__(b.gates[1].coeffs[0], "_numerator", 2)
    assert b.gates[1].coeffs[0] == Fraction(2, 3)
    assert sv.verify(a, b, method=method).refuted


def test_a_sym_coefficients_fraction_rewritten_inside_a_gate_is_read_afresh():
    """A symbolic coefficient ``a/3``: its term's Fraction rewritten to ``2/3`` in place."""
    def circ() -> Circuit:
        return Circuit(1, 1, (Gate.lin(0, sym("a") * Fraction(1, 3), 0, 0),), (1,))

    a, b = circ(), circ()
    assert sv.verify(a, b, method="randomized").proved
    coeff = b.gates[0].coeffs[0]
    object.__setattr__(coeff.terms[0][1], "_numerator", 2)
    assert sv.verify(a, b, method="randomized").refuted


def _model(v: object) -> Model:
    return Model(1, 2, 1, 2, (Layer.make(1, 2, W=Grid.from_rows([[1, 0], [0, 1]]), b2=Grid.from_rows([[v, 1]])),))


@pytest.mark.parametrize("method", METHODS)
def test_a_grids_rectangles_rewritten_inside_a_layer_are_read_afresh(method):
    """The model's layer tuple and layer are unchanged; the grid ``b2`` inside gets new rectangles."""
    a, b = _model(Fraction(1, 3)), _model(Fraction(1, 3))
    assert sv.verify(a, b, method=method).proved
    grid = b.layers[0].b2
    object.__setattr__(grid, "rects", Grid.from_rows([[5, 1]]).rects)
    assert sv.verify(a, b, method=method).refuted


@pytest.mark.parametrize("method", METHODS)
def test_a_layers_grid_rewritten_inside_the_model_is_read_afresh(method):
    a, b = _model(1), _model(1)
    assert sv.verify(a, b, method=method).proved
    object.__setattr__(b.layers[0], "b2", Grid.from_rows([[7, 1]]))
    assert sv.verify(a, b, method=method).refuted


def test_a_rectangle_values_fraction_rewritten_in_place_is_read_afresh():
    a, b = _model(Fraction(1, 3)), _model(Fraction(1, 3))
    assert sv.verify(a, b, method="randomized").proved
    value = next(r[4] for r in b.layers[0].b2.rects if type(r[4]) is Fraction)
    object.__setattr__(value, "_numerator", 2)
    assert sv.verify(a, b, method="randomized").refuted


def test_a_cell_arrays_extra_cells_rewritten_in_place_are_read_afresh():
    import numpy as np

    def model() -> Model:
        cells = CellArray(np.array([0]), np.array([0]), np.array([1.0]), extra=[(0, 1, Fraction(1, 3))])
        return Model(1, 2, 1, 2, (Layer.make(1, 2, W=Grid.from_rows([[1, 0], [0, 1]]), b2=Grid(1, 2, 0, cells)),))

    a, b = model(), model()
    assert sv.verify(a, b, method="randomized").proved
    cells = b.layers[0].b2.rects
    object.__setattr__(cells, "extra", ((0, 1, Fraction(2, 3)),))
    assert sv.verify(a, b, method="randomized").refuted


def _kal(entry: object) -> Kaleidoscope:
    f = ButterflyFactor(2, 1, (entry,), (0,), (0,), (1,))
    return Kaleidoscope(2, 2, (BBStar(2, (f, ButterflyFactor.identity(2, 1))),))


@pytest.mark.parametrize("method", METHODS)
def test_a_butterfly_factors_diagonal_rewritten_in_place_is_read_afresh(method):
    a, b = _kal(Fraction(1, 3)), _kal(Fraction(1, 3))
    assert sv.verify(a, b, method=method).proved
    object.__setattr__(b.groups[0].factors[0], "d1", (Fraction(2, 3),))
    assert sv.verify(a, b, method=method).refuted


def test_a_diagonal_entrys_fraction_rewritten_in_place_is_read_afresh():
    a, b = _kal(Fraction(1, 3)), _kal(Fraction(1, 3))
    assert sv.verify(a, b, method="randomized").proved
    object.__setattr__(b.groups[0].factors[0].d1[0], "_numerator", 2)
    assert sv.verify(a, b, method="randomized").refuted


def test_a_bb_star_groups_factor_tuple_rewritten_in_place_is_read_afresh():
    a, b = _kal(Fraction(1, 3)), _kal(Fraction(1, 3))
    assert sv.verify(a, b, method="randomized").proved
    object.__setattr__(b.groups[0], "factors", _kal(Fraction(2, 3)).groups[0].factors)
    assert sv.verify(a, b, method="randomized").refuted


def test_the_digest_after_a_check_is_the_new_contents():
    """``content_digest`` after the side's next check names what the side holds now."""
    c = _product()
    before = content_digest(c)
    check_plain(c, "x")
    object.__setattr__(c.gates[0], "args", (1, 1))
    check_plain(c, "x")
    assert content_digest(c) != before
    assert content_digest(c) == content_digest(Circuit(2, 1, (Gate.mul(1, 1), Gate.lin(2, Fraction(1, 3), 0, 1)), (3,)))


def test_a_side_evicted_from_the_plainness_memo_drops_the_other_memos_entries():
    """A side no longer in the plainness memo (evicted by newer sides) may still have entries in the
    larger memos; its next check drops them before they are read."""
    a, b = _product(), _product()
    assert sv.verify(a, b, method="randomized").proved
    for _ in range(2 * fingerprint._PLAIN.size):
        check_plain(_product(), "filler")
    object.__setattr__(b.gates[0], "args", (0, 0))
    assert sv.verify(a, b, method="randomized").refuted


def test_forget_drops_every_key_of_the_object_in_every_memo_and_nothing_else():
    m1: IdentityMemo[int] = IdentityMemo(8)
    m2: IdentityMemo[int] = IdentityMemo(8)
    x, y = [1], [2]
    m1.put(x, 1), m1.put(x, 2, "k"), m2.put(x, 3), m1.put(y, 4)
    forget(x)
    assert (m1.get(x), m1.get(x, "k"), m2.get(x), m1.get(y)) == (None, None, None, 4)


def test_an_unchanged_side_is_not_walked_again(monkeypatch):
    """The snapshot keeps the plainness check a hit for an unchanged side (no second walk)."""
    c = _product()
    check_plain(c, "x")
    walked = []
    parts = fingerprint._PARTS[Circuit]
    monkeypatch.setitem(fingerprint._PARTS, Circuit, lambda obj, where, state=None: walked.append(obj) or parts(obj, where, state))
    check_plain(c, "x")
    assert walked == []
    object.__setattr__(c.gates[1], "coeffs", (Fraction(1, 5), 1))
    check_plain(c, "x")
    assert walked == [c]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 1), st.integers(0, 1), st.sampled_from([-2, -1, 2, 4, 5]))
def test_any_args_or_coefficient_rewrite_is_decided_on_the_new_content(i, j, k):
    """Random in-place rewrites of gate 0's args or gate 1's first coefficient: the randomized verdict
    agrees with exact evaluation of the rewritten side at a point."""
    a, b = _product(), _product()
    assert sv.verify(a, b, method="randomized").proved
    if k < 0 or k == 5:
        object.__setattr__(b.gates[0], "args", (i, j))
    else:
        object.__setattr__(b.gates[1], "coeffs", (Fraction(k, 3), 1))
    differs = any(sv.evaluate(a, [[x], [y]]) != sv.evaluate(b, [[x], [y]]) for x in (2, 3) for y in (5, 7))
    report = sv.verify(a, b, method="randomized")
    assert report.refuted if differs else report.proved


def test_a_gate_whose_field_read_raises_is_refused_by_the_walk_not_a_crash():
    """A gate subclass whose ``coeffs`` raises ``ValueError`` put into a checked circuit: the snapshot
    cannot be read, and the walk refuses the subclass with its usual error."""
    from symverify.kernel.provers.fingerprint import EncodingError

    class Raising(Gate):
        __slots__ = ()

        @property
        def coeffs(self):  # type: ignore[override]
            raise ValueError("no")

    c = _product()
    check_plain(c, "x")
    odd = object.__new__(Raising)
    object.__setattr__(c, "gates", (odd, *c.gates[1:]))
    with pytest.raises(EncodingError, match=r"x: expected every gate of type Gate exactly, found an instance of .*Raising"):
        check_plain(c, "x")


# ---- the grids' cell maps, kept by content -------------------------------------------------------

_P61 = 2**61 - 1
"""``hash(x + _P61) == hash(x)`` for ints and fractions alike (Python's numeric hash is mod ``2^61 − 1``)."""


def _tapped(fill: object, value: object) -> Model:
    h = Grid(1, 2, fill, ((0, 1, 0, 1, value),))
    return Model(1, 2, 1, 2, (Layer.make(1, 2, W=Grid.from_rows([[1, 0], [0, 1]]), h=h, b1=Grid.from_rows([[1, 1]])),))


@pytest.mark.parametrize("method", [*METHODS, "z3"])
def test_a_grid_rewritten_to_content_of_the_same_hash_poisons_no_other_side(method):
    """A grid's cell map was kept by the grid's equality and hash, with the grid itself as the key:
    once its rectangles were rewritten in place to a value of the same hash (``5 → 5 + 2^61 − 1``),
    a *fresh* model holding ``5 + 2^61 − 1`` found the old cells and every method proved it equal
    to the model holding 5. A cell map is kept by the content it was painted from."""
    b = _tapped(0, 5)
    grid = b.layers[0].h
    assert grid.nonzero() == {(0, 0): 5}  # the first grid of this content: its cell map is kept
    a = _tapped(0, 5)
    assert sv.verify(a, b, method=method).proved
    object.__setattr__(grid, "rects", ((0, 1, 0, 1, 5 + _P61),))
    fresh = _tapped(0, 5 + _P61)
    assert sv.verify(a, fresh, method=method).refuted
    assert sv.verify(a, b, method=method).refuted
    assert grid.nonzero() == {(0, 0): 5 + _P61}
    assert sv.evaluate(fresh, [[3, 4]]) == [[4 * 3 * (5 + _P61), 0]]


def test_a_fraction_rewritten_in_place_to_the_same_hash_is_painted_again():
    """A rectangle whose value equals the fill (``1/3``, another object) is no cell; its Fraction
    rewritten in place to ``(1 + 2^61 − 1)/3`` (the same hash) is one, in the rewritten grid and in
    a fresh grid of that content alike."""
    b = _tapped(Fraction(1, 3), Fraction(1, 3))
    assert b.layers[0].h.cells() == {}  # the first grid of this content: its cell map is kept
    a = _tapped(Fraction(1, 3), Fraction(1, 3))
    assert sv.verify(a, b, method="randomized").proved
    object.__setattr__(b.layers[0].h.rects[0][4], "_numerator", 1 + _P61)
    fresh = _tapped(Fraction(1, 3), Fraction(1 + _P61, 3))
    assert hash(fresh.layers[0].h) == hash(b.layers[0].h)
    assert sv.verify(a, fresh, method="randomized").refuted
    assert sv.verify(a, b, method="randomized").refuted
    assert fresh.layers[0].h.cells() == {(0, 0): Fraction(1 + _P61, 3)}


def test_equal_grids_share_their_cell_map_and_count():
    """Grids of equal content holding the same value objects share one cell map (the kept result)."""
    from symverify.kernel.ir import grid as grid_module

    rects = ((0, 2, 0, 2, 1), (1, 2, 1, 2, Fraction(1, 7)))
    g1, g2 = Grid(2, 2, 0, rects), Grid(2, 2, 0, rects)
    painted = []
    paint = grid_module._paint

    def counting(g: Grid) -> dict:
        painted.append(g)
        return paint(g)

    grid_module._CELLS._entries.clear()
    try:
        grid_module._CELLS(g1, counting)
        grid_module._CELLS(g2, counting)
        assert painted == [g1]
    finally:
        grid_module._CELLS._entries.clear()
    assert g1.nonzero_count() == g2.nonzero_count() == 4


# ---- a digest asked for without a check first -----------------------------------------------------


def test_content_digest_names_the_content_after_an_in_place_rewrite_without_a_check():
    """``content_digest`` returned the digest kept for the side's identity, so after an in-place
    rewrite, with no ``verify`` or ``check_plain`` in between, it named the old content."""
    c = _product()
    before = content_digest(c)
    object.__setattr__(c.gates[0], "args", (1, 1))
    assert content_digest(c) != before
    assert content_digest(c) == content_digest(Circuit(2, 1, (Gate.mul(1, 1), Gate.lin(2, Fraction(1, 3), 0, 1)), (3,)))


def test_a_kaleidoscope_instance_refuses_a_check_of_its_content_before_an_in_place_rewrite():
    """A proof-script row took a matrix check's verdict for a factorization whose kaleidoscope was
    rewritten in place after the check (a factor's diagonal): the factorization's digest was the one
    kept from the check, so the row was ``proved`` for a kaleidoscope that no longer computes it."""
    from symverify.errors import UsageError
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    from symverify.kernel.provers.matrix import verify_matrix
    from symverify.scripts.instances import kaleidoscope_instance

    swap = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    f = copy.deepcopy(permutation_to_kaleidoscope([1, 0, 2]))  # its own objects: the builder keeps and shares what it returns
    check = verify_matrix(f, swap)
    assert check.proved
    factor = f.kaleidoscope.groups[0].factors[0]
    object.__setattr__(factor, "d1", (2, *factor.d1[1:]))
    with pytest.raises(UsageError, match=r"kaleidoscope instance 'swap': the check is of another kaleidoscope of the same sizes"):
        kaleidoscope_instance("swap", f, check)
    assert not verify_matrix(f, swap).proved


def test_a_compile_results_circuit_digest_names_the_circuit_as_compiled():
    """The compilers write the source circuit's digest into the certificate's meta: after an
    in-place rewrite of a gate it is the rewritten circuit's, not the one kept from a ``verify``."""
    a, b = _product(), _product()
    assert sv.verify(a, b, method="randomized").proved
    object.__setattr__(b.gates[0], "args", (0, 0))
    compiled = sv.compile(b)
    fresh = Circuit(2, 1, (Gate.mul(0, 0), Gate.lin(2, Fraction(1, 3), 0, 1)), (3,))
    assert dict(compiled.certificate.meta)["circuit_digest"] == content_digest(fresh)


def test_a_model_with_a_fraction_fill_is_not_walked_again(monkeypatch):
    """The snapshot of a grid whose fill is not an int held a tuple made afresh on every read, so it
    never matched: every check of such a model walked it again and dropped every memo's entries for
    it (its plans, bounds and digest recomputed on every ``verify``)."""
    m = Model(1, 2, 1, 2, (Layer.make(1, 2, W=Grid.from_rows([[1, 0], [0, 1]]), b2=Grid.full(1, 2, Fraction(1, 3))),))
    check_plain(m, "x")
    walked = []
    parts = fingerprint._PARTS[Model]
    monkeypatch.setitem(fingerprint._PARTS, Model, lambda obj, where, state=None: walked.append(obj) or parts(obj, where, state))
    check_plain(m, "x")
    assert walked == []
    object.__setattr__(m.layers[0].b2.fill, "_numerator", 2)
    check_plain(m, "x")
    assert walked == [m]


# ---- a cell array out of its constructor's form ----------------------------------------------------


def _arrayed(extra: list) -> Model:
    import numpy as np

    cells = CellArray(np.array([0, 0]), np.array([0, 1]), np.array([1.0, 2.0]), extra=extra)
    return Model(1, 3, 1, 3, (Layer.make(1, 3, W=Grid.identity(3), b2=Grid(1, 3, 0, cells)),))


@pytest.mark.parametrize(("field", "value", "message"), [
    ("extra", ((0, 0, Fraction(1, 3)),), r"extra cell \(0, 0\) is also an array cell"),
    ("extra", ((0, 2, 0),), r"extra cell \(0, 2\) is 0"),
    ("extra", ((0, 2, 5), (0, 2, 7)), r"extra cell \(0, 2\) is given twice"),
    ("extra", ((0, 2, Fraction(2, 2, _normalize=False)),), r"expected its cells sorted by \(row, col\), each value canonical"),
    ("extra", [(0, 2, 5)], r"cell array extra: expected a tuple of \(row, col, value\) tuples"),
    ("_order", [5], r"the kept positions of its extra cells are not theirs, found \[5\]"),
])
@pytest.mark.parametrize("method", ["exact", "randomized"])
def test_a_cell_array_field_set_out_of_its_constructors_form_is_refused(field, value, message, method):
    """A cell array's ``extra`` or kept positions set past its ``__setattr__``: the readers differ in
    what they trust (iteration follows the kept positions and lets a later cell win, ``Grid.get``
    reads ``extra`` first), so an extra cell on an array cell was proved equal to the model without
    it while ``get`` read ``1/3`` there, and a kept position past the end dropped a cell (a
    ``ValueError`` in every method). The check of a side reads the cell array in its constructor's form."""
    a, b = _arrayed([]), _arrayed([(0, 2, Fraction(1, 3))])
    object.__setattr__(b.layers[0].b2.rects, field, value)
    with pytest.raises(IRError, match=r"rhs: layer 0 b2: .*" + message + r".*\(a .*field set after construction\?\)"):
        sv.verify(a, b, method=method)


def test_a_cell_arrays_writable_array_is_refused():
    """An array set in place of the read-only copy could be written after the check."""
    import numpy as np

    a, b = _arrayed([]), _arrayed([])
    object.__setattr__(b.layers[0].b2.rects, "vals", np.array([1.0, 2.0]))
    with pytest.raises(IRError, match=r"cell array vals: expected a read-only 1-d float64 array as the constructor stores it"):
        sv.verify(a, b, method="randomized")


def test_a_cell_array_with_extra_cells_is_checked_again_and_accepted_after_its_first_read():
    """Its positions kept on first iteration change its snapshot: the next check walks it again and
    accepts them (they are its own)."""
    a, b = _arrayed([(0, 2, Fraction(1, 3))]), _arrayed([(0, 2, Fraction(1, 3))])
    for method in ("randomized", "exact", "randomized"):
        assert sv.verify(a, b, method=method).proved
    assert b.layers[0].b2.rects._order == (2,)
    assert sv.verify(_arrayed([]), b, method="randomized").refuted


# ---- what a memo hands out -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["python", "torch"])
def test_a_circuits_kept_program_cannot_be_changed_through_what_it_hands_out(backend):
    """``program(c)`` is kept for ``c`` and read by every later ``verify`` of it; its ``mod_code``
    and ``code`` were lists, so code that changed one in place (here ``x·y``'s second operand made
    ``x``) had ``randomized`` prove ``x·y ≡ x·x`` while ``evaluate`` read 6 against 4."""
    if backend == "torch":
        pytest.importorskip("torch")
    from symverify.kernel.semantics.straightline import program

    c, xx = Circuit(2, 1, (Gate.mul(0, 1),), (2,)), Circuit(2, 1, (Gate.mul(0, 0),), (2,))
    assert sv.verify(c, xx, method="randomized", backend=backend).refuted
    prog = program(c)
    with pytest.raises(TypeError, match="does not support item assignment"):
        prog.mod_code[2][0] = 0  # type: ignore[index]
    with pytest.raises(TypeError, match="does not support item assignment"):
        prog.code[0] = (0, 0, 0, -1, -1)  # type: ignore[index]
    assert program(c) is prog
    assert sv.verify(c, xx, method="randomized", backend=backend).refuted


def test_the_weight_names_of_a_coefficient_rewritten_in_place_are_read_again_before_a_refusal():
    """The names of a side's symbolic weights are kept by its identity; after a coefficient was
    rewritten in place (``a`` → ``b``), ``evaluate`` refused ``params={'b': …}`` as no weight of it
    and ``execute`` asked for ``a``. The names are read again before a name or value is refused."""
    c = Circuit(1, 1, (Gate.lin(0, sym("a"), 0, 0),), (1,))
    assert sv.evaluate(c, [[2]], {"a": 3}) == [[6]]
    assert sv.execute(c, [[2]], params={"a": 3}).tolist() == [[6]]
    object.__setattr__(c.gates[0], "coeffs", (sym("b"), 0))
    assert sv.evaluate(c, [[2]], {"b": 3}) == [[6]]
    assert sv.execute(c, [[2]], params={"b": 5}).tolist() == [[10]]
    with pytest.raises(IRError, match=r"params: 'a' is not a symbolic weight of the circuit \(its symbolic weights are b\)"):
        sv.evaluate(c, [[2]], {"a": 3})
    with pytest.raises(IRError, match=r"the circuit has symbolic weights b; pass their values"):
        sv.execute(c, [[2]], params={})


def test_a_butterfly_factors_kept_plan_set_past_its_dataclass_is_never_read():
    """A small 0/1 factor keeps its plan, read while its fields are the ones it was made from; a plan
    set with ``object.__setattr__`` naming those very fields (here an empty one: the identity) was
    read for them, and every method proved the swap ``[1, 0, 2]`` equal to the identity. A plan is
    kept in the planner's own table under a mark the factor holds: what is set in its place, a
    forged plan or another factor's mark, is never read, and the swap is refuted."""
    from symverify.ir.build import from_matrix
    from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
    from symverify.kernel.provers.matrix import verify_matrix

    swap, ident = [[0, 1, 0], [1, 0, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    f = copy.deepcopy(permutation_to_kaleidoscope([1, 0, 2]))  # its own objects: the builder keeps and shares what it returns
    assert verify_matrix(f, swap).proved
    assert sv.verify(f, from_matrix(swap, 3, 1), method="exact").proved
    kept = [fac for g in f.kaleidoscope.groups for fac in g.factors if fac._plan_cache is not None]
    assert kept
    for fac in kept:  # a plan naming the factor's own fields, in the form the table holds
        object.__setattr__(fac, "_plan_cache", ((fac.size, fac.stride, fac.d1, fac.d2, fac.d3, fac.d4), ()))
    assert verify_matrix(f, ident).verdict is sv.Verdict.REFUTED
    for method in ("exact", "randomized"):
        assert sv.verify(f.kaleidoscope, from_matrix(ident, 3, 1), method=method).refuted
    ones = ButterflyFactor.identity(4, 1)
    from symverify.kernel.kaleidoscope.apply import _plan
    from symverify.kernel.semantics.rings import ScalarRing

    assert _plan(ones, ScalarRing()) == [] and ones._plan_cache is not None
    for fac in kept:  # another factor's mark: its entry names that factor's fields
        object.__setattr__(fac, "_plan_cache", ones._plan_cache)
    assert verify_matrix(f, ident).verdict is sv.Verdict.REFUTED
    assert verify_matrix(f, swap).proved


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.sampled_from([0, 1, 5, Fraction(1, 3), Fraction(-2, 7)])),
                min_size=1, max_size=5),
       st.sampled_from([0, Fraction(1, 3)]), st.integers(0, 4), st.booleans())
def test_a_grids_cells_are_its_content_after_any_rewrite_of_the_same_hash(cells, fill, k, in_place):
    """Random grids whose cell maps were read, then rewritten to content of the same hash (an int
    ``+ 2^61 − 1`` in place of the rectangles, or a fraction's numerator ``+ 2^61 − 1`` in place):
    their cells, and those of a fresh grid of the new content, are the ones painted from it."""
    from symverify.kernel.ir import grid as grid_module

    rects = tuple((i, i + 1, j, j + 1, Fraction(v.numerator, v.denominator) if type(v) is Fraction else v) for i, j, v in cells)
    g = Grid(3, 3, fill, rects)
    g.cells(), g.nonzero_count()
    r0, r1, c0, c1, v = rects[k % len(rects)]
    if in_place and type(v) is Fraction:
        object.__setattr__(v, "_numerator", v.numerator + _P61)
        new_rects = rects
    elif type(v) is int:
        new_rects = tuple(r if r is not rects[k % len(rects)] else (r0, r1, c0, c1, v + _P61) for r in rects)
        object.__setattr__(g, "rects", new_rects)
    else:
        return
    fresh = Grid(3, 3, fill, tuple((a, b, c, d, Fraction(x.numerator, x.denominator) if type(x) is Fraction else x)
                                   for a, b, c, d, x in new_rects))
    assert hash(fresh) == hash(g)
    for grid in (g, fresh):
        assert grid.cells() == grid_module._paint(grid)
        assert grid.nonzero_count() == grid_module._count(grid)


def test_the_grid_cell_memo_evicts_an_entry_whose_key_fraction_was_rewritten_in_place():
    """A ``Fraction`` of a grid's rectangles, part of a kept cell map's key, rewritten in place hashes
    otherwise: eviction finds the entry by the hash stored with it (a lookup by key raised KeyError
    for every later grid of the process), and the rewritten grid is painted from what it holds now."""
    from symverify.kernel.ir import grid as grid_module

    memo = grid_module._ByContent(3)
    grids = [Grid.from_rows([[Fraction(1, 3), k]]) for k in range(2, 10)]
    memo(grids[0], grid_module._paint)
    value = next(r[4] for r in grids[0].rects if type(r[4]) is Fraction)
    object.__setattr__(value, "_numerator", 2)
    assert memo(grids[0], grid_module._paint)[(0, 0)] == Fraction(2, 3)
    for g in grids[1:]:
        assert memo(g, grid_module._paint)[(0, 1)] == g.rects[-1][4]
    assert len(memo._entries) == 3


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["put", "drop", "get", "clear"]), st.integers(0, 4), st.integers(0, 2)), max_size=40),
       st.integers(1, 4))
def test_a_memos_count_of_entries_per_object_follows_every_put_eviction_drop_and_clear(ops, size):
    """``drop`` skips an object with no entry by a count kept per object; after any sequence of
    puts (with evictions), drops and clears the counts are those of the entries, and a dropped
    object has no entry under any key."""
    memo: IdentityMemo[int] = IdentityMemo(size)
    objs = [[k] for k in range(5)]
    for op, i, key in ops:
        if op == "put":
            memo.put(objs[i], i, key)
        elif op == "drop":
            memo.drop(objs[i])
            assert all(memo.get(objs[i], k) is None for k in range(3))
        elif op == "get":
            assert memo.get(objs[i], key) in (None, i)
        else:
            memo.clear()
        counts: dict[int, int] = {}
        for k in memo._entries:
            counts[k[0]] = counts.get(k[0], 0) + 1
        assert memo._ids == counts and len(memo) <= size


def test_a_grid_value_syms_coefficient_rewritten_in_place_is_read_afresh():
    """A grid holding ``a/3`` whose term's Fraction is rewritten to ``2/3`` in place after its cells
    were read: the cells, the model's verdict against the old model, are the new content's."""
    def model() -> Model:
        return Model(1, 2, 1, 2, (Layer.make(1, 2, W=Grid.from_rows([[1, 0], [0, 1]]),
                                             b2=Grid.from_rows([[sym("a") * Fraction(1, 3), 1]])),))

    a, b = model(), model()
    assert sv.verify(a, b, method="randomized").proved
    grid = b.layers[0].b2
    value = next(r[4] for r in grid.rects if type(r[4]) is not int)
    object.__setattr__(value.terms[0][1], "_numerator", 2)
    assert grid.cells()[(0, 0)] == sym("a") * Fraction(2, 3)
    assert sv.verify(a, b, method="randomized").refuted


class _SaysGate(type):
    """A metaclass whose classes compare (and hash) equal to ``Gate``: ``kind in (Gate,)`` and
    ``{kind} <= {Gate}`` hold for them."""

    def __eq__(cls, other: object) -> bool:
        from symverify.kernel.ir.circuit import Gate

        return other is Gate or type.__eq__(cls, other)

    def __hash__(cls) -> int:
        from symverify.kernel.ir.circuit import Gate

        return type.__hash__(Gate)


class _TwoFacedGate(metaclass=_SaysGate):
    """No ``Gate``: its ``args`` are ``(0, 0)`` to the program builder and ``(0, 1)`` to everyone else."""

    __slots__ = ("coeffs", "op")

    @property
    def args(self) -> tuple[int, int]:
        import sys

        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_name != "_build":
            frame = frame.f_back  # type: ignore[assignment]
        return (0, 0) if frame is not None else (0, 1)


@pytest.mark.parametrize("with_a_gate", [False, True])
def test_a_class_that_compares_equal_to_gate_is_no_gate(with_a_gate: bool) -> None:
    """The check of a side took a class for ``Gate`` by ``==`` (``kind not in (Gate,)``, a set of
    kinds): a gate of a class whose metaclass says it equals ``Gate``, reading ``x·x`` to the program
    and ``x·y`` to ``evaluate``, had ``randomized`` prove ``x·y`` (as ``evaluate`` reads it) equal to
    ``x·x``. Classes are compared by identity."""
    from symverify.kernel.ir.circuit import Circuit, Gate, Op
    from symverify.kernel.provers.fingerprint import EncodingError

    fake = _TwoFacedGate()
    object.__setattr__(fake, "op", Op.MUL)
    object.__setattr__(fake, "coeffs", ())
    first = (Gate.mul(0, 1),) if with_a_gate else ()
    out = (2 + len(first),)
    c = Circuit(2, 1, (*first, Gate.mul(0, 1)), out)
    object.__setattr__(c, "gates", (*first, fake))
    xx = Circuit(2, 1, (*first, Gate.mul(0, 0)), out)
    assert sv.evaluate(c, [[2], [3]]) == [[6], [0]] != sv.evaluate(xx, [[2], [3]])
    with pytest.raises(EncodingError, match=r"expected every gate of type Gate exactly, found an instance of .*_TwoFacedGate"):
        sv.verify(c, xx, method="randomized")
