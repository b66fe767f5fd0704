"""Primitives of docs/appendix-h.md §2.3 and the Fragment type: proofs, closed forms, errata, validation."""

from dataclasses import replace
from fractions import Fraction

import pytest

from symverify.errors import IRError, ShapeError
from symverify.gadgets.layout import channels_to_rows, rows_to_channels
from symverify.gadgets.primitives import (
    affine_map,
    constant,
    convolution,
    cyclic_shift,
    fixed_gate,
    generic_layer,
    identity,
    impulse,
    linear_map,
    move_cols,
    move_rows,
    running_add,
    shift_down,
    shift_up,
)
from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder, all_cells, block, check_spec, standalone
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.fragment import prove_fragment
from symverify.scripts.instances import fragment_instance
from symverify.semantics.exact import evaluate

PRIMITIVES = [
    ("linear_map", lambda: linear_map(Grid.symbolic("W", 2, 2), 3)),
    ("identity", lambda: identity(3, 2)),
    ("affine_map", lambda: affine_map(Grid.symbolic("W", 2, 2), 3, Grid.from_cells(3, 2, {(0, 1): sym("c")}), rows=[0])),
    ("conv_causal", lambda: convolution(Grid.symbolic("h", 3, 2), "causal")),
    ("conv_cyclic", lambda: convolution(Grid.symbolic("h", 3, 2), Mode.CYCLIC)),
    ("gate", lambda: fixed_gate(Grid.symbolic("B", 3, 2))),
    ("constant", lambda: constant(Grid.symbolic("R", 2, 2))),
    ("shift_down0", lambda: shift_down(3, 2, 0)),
    ("shift_down2", lambda: shift_down(3, 2, 2)),
    ("shift_up1", lambda: shift_up(4, 1, 1)),
    ("shift_up3", lambda: shift_up(4, 2, 3)),
    ("cyclic_shift", lambda: cyclic_shift(3, 2, -1)),
    ("add", lambda: running_add(2, 5, 2)),
    ("move_rows_down", lambda: move_rows(5, 2, 0, 2, 2)),
    ("move_rows_up", lambda: move_rows(5, 2, 3, 0, 2, cols=[1])),
    ("move_cols", lambda: move_cols(2, 4, 0, 2, 2, rows=[1])),
    ("generic_causal", lambda: generic_layer(2, 2)),
    ("generic_cyclic", lambda: generic_layer(2, 2, "cyclic")),
    ("rows_to_channels", lambda: rows_to_channels(3, 2, 3, 6)),
    ("channels_to_rows", lambda: channels_to_rows(5, 2, 3, 6)),
    ("rows_to_channels_no_layers", lambda: rows_to_channels(1, 3, 1, 3)),
    ("channels_to_rows_no_layers", lambda: channels_to_rows(2, 3, 1, 3)),
]


@pytest.mark.parametrize("name,build", PRIMITIVES, ids=[p[0] for p in PRIMITIVES])
def test_primitive_is_proved_within_its_bound(name, build):
    frag = build()
    proof = prove_fragment(frag)
    assert proof.compositional and proof.exact, proof.failure
    assert proof.ok and not frag.over_bound()
    assert frag.resources()["layers"] <= frag.bounds["layers"]


def test_shift_down_uses_kernel_x_to_the_s_not_s_plus_1():
    frag = shift_down(4, 1, 2)
    assert frag.layers[0].h.nonzero() == {(2, 0): 1}
    # the printed kernel X^{s+1} is refuted
    wrong = replace(frag.layers[0], h=impulse(4, 1, 3))
    bad = Fragment("shift_down with X^{s+1}", 4, 1, (wrong,), frag.entry, frag.exit, frag.bounds, frag.build_spec)
    p = prove_fragment(bad)
    assert not p.proved and p.exact is False and not p.compositional


def test_identity_filter_does_not_reverse_the_sequence():
    """The printed 3-layer shift_up proof claims a cyclic identity filter reverses rows: false."""
    conv = convolution(impulse(3, 1, 0), Mode.CYCLIC)

    def reversal(b):
        return {(i, 0): b.cell(2 - i, 0) for i in range(3)}

    def spec():
        b = SpecBuilder(3, 1)
        return Spec(b.circuit(reversal(b), "reverse"))

    claim = Fragment("identity filter as reversal", 3, 1, conv.layers, conv.entry, all_cells(3, 1), {}, spec)
    assert prove_fragment(claim).exact is False
    assert prove_fragment(conv).proved  # it is the identity


def test_shift_up_is_one_cyclic_layer():
    frag = shift_up(5, 2, 2)
    assert frag.depth == 1 and frag.layers[0].mode is Mode.CYCLIC
    out = evaluate(frag.model(), [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]])
    assert out == [[5, 6], [7, 8], [9, 10], [0, 0], [0, 0]]


def test_add_puts_ones_in_the_first_block_and_the_sum_in_the_second():
    frag = running_add(2, 5, 1)
    out = evaluate(frag.model(), [[1], [2], [10], [20], [99]])
    assert out == [[1], [1], [11], [22], [0]]
    assert frag.depth == 2


def test_constant_ignores_input_and_gate_scales():
    R = Grid.from_rows([[1, "1/2"], [0, -3]])
    assert evaluate(constant(R).model(), [[7, 8], [9, 10]]) == [[1, Fraction(1, 2)], [0, -3]]
    assert evaluate(fixed_gate(R).model(), [[2, 4], [9, 10]]) == [[2, 2], [0, -30]]


def test_a_perturbed_primitive_is_refuted():
    frag = move_rows(4, 1, 0, 1, 2)
    layer = frag.layers[0]
    for (i, j), v in layer.b1.nonzero().items():
        mutated = replace(layer, b1=layer.b1.paint_cells([(i, j, v + 1)]))
        bad = Fragment("mutated", 4, 1, (mutated,), frag.entry, frag.exit, frag.bounds, frag.build_spec)
        p = prove_fragment(bad)
        assert p.exact is False and not p.compositional


def test_standalone_masks_a_non_full_entry_and_lists_the_interface():
    frag = channels_to_rows(3, 1, 3, 3)
    circuit, model, cert = standalone(frag)
    assert model.depth == frag.depth + 1  # the masking gate
    assert {(c.row, c.col) for c in cert.boundaries[1].cells} == frag.entry
    assert circuit.n == 3 and circuit.d == 3 and len(circuit.outputs) == 9


def test_fragment_instance_reports_verdict_resources_and_bounds():
    inst = fragment_instance(shift_down(3, 1, 1), "shift", {"inner_n": 3})
    assert inst.verdict == "proved" and inst.ok
    assert inst.resources["layers"] == 1 and inst.bounds == {"layers": 1, "inner_n": 3}
    bad = fragment_instance(shift_down(3, 1, 1), "shift", {"inner_n": 2})
    assert not bad.ok and bad.over_bound() == ["inner_n"]


def test_spec_builder_affine_drops_zero_terms_and_folds_constants():
    b = SpecBuilder(1, 2)
    assert b.affine([(1, 0)]) == 0  # a lone unit term is the node itself
    assert b.affine([(0, 0), (0, 1)]) == b.zero()
    node = b.affine([(2, 0), (sym("a"), 1)], 3)
    c = b.circuit({(0, 0): node}, "t")
    assert evaluate(c, [[1, 1]], {"a": 5}) == [[10, 0]]


# ---- validation -----------------------------------------------------------------------------


def test_fragment_rejects_bad_shapes_and_cells():
    layer = shift_down(3, 1, 1).layers[0]
    with pytest.raises(ShapeError, match="expected inner shape 2×1"):
        Fragment("f", 2, 1, (layer,), frozenset(), frozenset())
    with pytest.raises(ShapeError, match=r"entry interface: cells \(5, 0\)"):
        Fragment("f", 3, 1, (layer,), frozenset({(5, 0)}), frozenset())
    with pytest.raises(IRError, match="expected a Layer"):
        Fragment("f", 3, 1, ("layer",), frozenset(), frozenset())
    with pytest.raises(ShapeError, match="inner_n: expected a positive int"):
        Fragment("f", 0, 1, (), frozenset(), frozenset())
    with pytest.raises(IRError, match="has no specification"):
        Fragment("f", 3, 1, (layer,), frozenset(), frozenset()).spec()


def test_check_spec_rejects_specs_that_disagree_with_the_interface():
    frag = shift_down(3, 1, 1)

    def with_spec(fn):
        def build():
            b = SpecBuilder(3, 1)
            return Spec(b.circuit(fn(b), "s"))

        return Fragment("f", 3, 1, frag.layers, frag.entry, frag.exit, {}, build)

    narrow = Fragment("f", 3, 1, frag.layers, block([0], [0]), frag.exit, {}, frag.build_spec)
    with pytest.raises(IRError, match=r"reads cells \(1, 0\) outside the entry interface"):
        check_spec(narrow, narrow.spec())
    f2 = with_spec(lambda b: {(0, 0): b.cell(0, 0)})
    with pytest.raises(IRError, match=r"cell \(0, 0\) is outside the exit interface"):
        check_spec(f2, f2.spec())
    f3 = Fragment("f", 3, 1, frag.layers, frag.entry, frag.exit, {}, lambda: Spec(shift_down(2, 1, 1).spec().circuit))
    with pytest.raises(ShapeError, match="must read and list the whole 3×1 state"):
        standalone(f3)
    f4 = Fragment("f", 3, 1, frag.layers, frag.entry, frag.exit, {}, lambda: Spec(frag.spec().circuit, ((5, ()),)))
    with pytest.raises(IRError, match="checkpoint after layer 5"):
        standalone(f4)


@pytest.mark.parametrize(
    "build,err,match",
    [
        (lambda: shift_down(3, 1, 3), IRError, "0 ≤ s < N' = 3"),
        (lambda: shift_up(3, 1, -1), IRError, "0 ≤ s < N' = 3"),
        (lambda: cyclic_shift(3, 1, 1.5), IRError, "expected an int shift"),
        (lambda: linear_map(Grid.zeros(2, 3), 2), ShapeError, "expected shape 2×2"),
        (lambda: linear_map([[1]], 2), IRError, "expected a Grid"),
        (lambda: affine_map(Grid.identity(2), 2, Grid.from_cells(2, 2, {(1, 0): 1}), rows=[0]), IRError, "outside the rows"),
        (lambda: affine_map(Grid.identity(2), 2, rows=[2]), ShapeError, r"rows in \[0, 2\)"),
        (lambda: affine_map(Grid.identity(2), 2, Grid.zeros(3, 2)), ShapeError, "bias: expected shape 2×2"),
        (lambda: convolution(Grid.zeros(2, 1), "sideways"), IRError, "mode 'causal' or 'cyclic'"),
        (lambda: convolution("h"), IRError, "expected a Grid"),
        (lambda: fixed_gate(None), IRError, "expected a Grid"),
        (lambda: constant(Grid.zeros(0, 1)), ShapeError, "positive int R.rows"),
        (lambda: running_add(2, 3, 1), ShapeError, "2n ≤ N' = 3"),
        (lambda: move_rows(4, 1, 2, 3, 2), ShapeError, r"do not fit in N' = 4"),
        (lambda: move_rows(4, 1, 0, 1, 1, cols=[2]), ShapeError, "columns in"),
        (lambda: move_cols(2, 3, 0, 2, 2), ShapeError, "do not fit in d' = 3"),
        (lambda: move_cols(2, 3, 0, 1, 1, rows=[5]), ShapeError, "rows in"),
        (lambda: generic_layer(2, 0), ShapeError, "positive int inner_d"),
        (lambda: rows_to_channels(2, 2, 2, 3), ShapeError, "d' ≥ n·d"),
        (lambda: channels_to_rows(5, 2, 2, 6), ShapeError, "N' ≥ ⌈m/d⌉"),
    ],
)
def test_primitive_validation(build, err, match):
    with pytest.raises(err, match=match):
        build()


def test_layers_of_gadgets_are_well_formed_layers():
    for _, build in PRIMITIVES:
        for layer in build().layers:
            assert isinstance(layer, Layer)


def test_fragment_boundaries_relabel_affine_gadgets_in_circuit_nodes():
    from symverify.kernel.gadgets.fragment import fragment_boundaries
    from symverify.kernel.ir.certificate import Cell

    frag = rows_to_channels(2, 2, 2, 4)
    bounds = fragment_boundaries(frag, [Cell.node(i // 2, i % 2, 10 + i) for i in range(4)], 7)
    assert [b.layer for b in bounds] == [8, 9]
    assert {(c.row, c.col, c.single_node()) for c in bounds[-1].cells} == {(0, k, 10 + k) for k in range(4)}
    # an affine combination passes through a linear gadget, scaled by a symbolic weight
    lin = linear_map(Grid.from_cells(1, 1, {(0, 0): sym("w")}), 1)
    (b,) = fragment_boundaries(lin, [Cell(0, 0, ((3, 2),), 1)], 0)
    assert b.cells == (Cell(0, 0, ((3, 2 * sym("w")),), sym("w")),)


def test_fragment_boundaries_refuse_products_and_foreign_entry_cells():
    from symverify.gadgets.remember import ChannelF, remember_channels
    from symverify.kernel.gadgets.fragment import fragment_boundaries
    from symverify.kernel.ir.certificate import Cell

    rem = remember_channels(1, 3, 1, 1, Grid.from_rows([[1]]), ChannelF((2,)))
    with pytest.raises(IRError, match="product of two non-constant values"):
        fragment_boundaries(rem, [Cell.node(0, 0, 1), Cell.node(0, 2, 2)], 0)
    with pytest.raises(IRError, match=r"entry cell \(0, 5\) is outside its entry interface"):
        fragment_boundaries(channels_to_rows(2, 1, 2, 6), [Cell.node(0, 5, 1)], 0)


def test_fragment_rejects_exit_cells_outside_the_state():
    with pytest.raises(ShapeError, match=r"exit interface: cells \(0, 3\)"):
        Fragment("f", 1, 1, (), frozenset(), frozenset({(0, 3)}))
