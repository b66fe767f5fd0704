"""Lemma H.11: composition with clean interfaces, padding, and the refusals that keep it sound."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError, ShapeError
from symverify.gadgets.compose import compose, interface_mismatch, pad, pad_layer
from symverify.gadgets.primitives import (
    convolution,
    cyclic_shift,
    fixed_gate,
    generic_layer,
    identity,
    move_rows,
    running_add,
    shift_down,
    shift_up,
)
from symverify.gadgets.remember import ChannelF, ConstF, remember_rows
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.fragment import prove_fragment


def test_clean_stack_is_proved_and_layers_and_bounds_add():
    frag = compose(shift_down(3, 2, 1), fixed_gate(Grid.symbolic("B", 3, 2)), convolution(Grid.symbolic("h", 3, 2)))
    assert frag.depth == 3 and frag.bounds["layers"] == 3
    assert prove_fragment(frag).proved


def test_mask_then_two_layer_remember_is_proved():
    mask = fixed_gate(Grid.from_cells(6, 1, {(i, 0): 1 for i in range(3)}))
    frag = compose(mask, remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1))))
    p = prove_fragment(frag)
    assert p.proved and frag.depth == 3
    # the spec records the junction and the inner checkpoint
    assert [layer for layer, _ in frag.spec().checkpoints] == [1, 2]


def test_unclean_stack_is_refused_naming_the_cells():
    rem = remember_rows(3, 2, 1, 1, Grid.from_cells(1, 1, {(0, 0): 1}), ChannelF((1,)))
    assert interface_mismatch(identity(3, 2), rem) == {(1, 1), (2, 0), (2, 1)}
    with pytest.raises(IRError, match=r"may leave cells \(1, 1\), \(2, 0\), \(2, 1\) nonzero.*requires them to be 0"):
        compose(identity(3, 2), rem)


def test_unchecked_unclean_stack_really_computes_something_else():
    rem = remember_rows(3, 2, 1, 1, Grid.from_cells(1, 1, {(0, 0): 1}), ChannelF((1,)))
    frag = compose(identity(3, 2), rem, check_interfaces=False)
    p = prove_fragment(frag)
    assert p.exact is False and not p.compositional


def test_workspace_garbage_leaks_without_the_interface_rule():
    rem = remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1)))
    with pytest.raises(IRError, match=r"\(3, 0\)"):
        compose(identity(6, 1), rem)
    assert prove_fragment(compose(identity(6, 1), rem, check_interfaces=False)).exact is False


@pytest.mark.parametrize(
    "small,big,mode",
    [((2, 1), (3, 2), "causal"), ((2, 2), (4, 3), "causal"), ((2, 1), (3, 1), "cyclic"), ((3, 1), (5, 2), "cyclic"), ((2, 2), (5, 2), "cyclic")],
)
def test_padding_a_generic_layer_keeps_its_function_for_all_weights(small, big, mode):
    frag = pad(generic_layer(*small, mode), *big)
    assert (frag.inner_n, frag.inner_d) == big
    p = prove_fragment(frag)
    assert p.proved, p.failure


def test_padding_a_cyclic_layer_too_little_is_refused():
    with pytest.raises(IRError, match="wraps modulo N = 3; in N' = 4 rows row 0 would read other rows"):
        pad(generic_layer(3, 1, "cyclic"), 4, 1)
    # a cyclic filter at lag 0 only pads to any size
    assert prove_fragment(pad(convolution(Grid.from_rows([[sym("g")], [0], [0]]), "cyclic"), 4, 1)).proved


def test_padded_shift_up_still_shifts():
    frag = pad(shift_up(2, 1, 1), 3, 2)
    assert prove_fragment(frag).proved


def test_compose_pads_to_the_largest_inner_size():
    frag = compose(generic_layer(2, 1, prefix="A"), generic_layer(3, 2, prefix="B"))
    assert (frag.inner_n, frag.inner_d, frag.depth) == (3, 2, 2)
    assert prove_fragment(frag).proved


def test_pad_is_identity_at_the_same_size_and_refuses_to_shrink():
    frag = shift_down(3, 1, 1)
    assert pad(frag, 3, 1) is frag
    with pytest.raises(ShapeError, match="cannot shrink a 3×1 layer to 2×1"):
        pad_layer(frag.layers[0], 2, 1)


def test_compose_validation():
    with pytest.raises(IRError, match="at least one fragment"):
        compose()
    with pytest.raises(IRError, match="argument 1 is a str, not a Fragment"):
        compose(identity(2, 1), "layer")


def _chain_parts(draw, nn, dd):
    choice = draw(st.sampled_from(["shift_down", "shift_up", "cyclic", "gate", "conv", "identity", "move", "add"]))
    s = draw(st.integers(0, nn - 1))
    if choice == "shift_down":
        return shift_down(nn, dd, s)
    if choice == "shift_up":
        return shift_up(nn, dd, s)
    if choice == "cyclic":
        return cyclic_shift(nn, dd, -s)
    if choice == "gate":
        return fixed_gate(Grid.from_cells(nn, dd, {(i, j): draw(st.sampled_from([0, 1, 2, sym("g")])) for i in range(nn) for j in range(dd)}))
    if choice == "conv":
        return convolution(Grid.from_cells(nn, dd, {(s, j): sym(f"h{j}") for j in range(dd)}), draw(st.sampled_from(["causal", "cyclic"])))
    if choice == "move":
        count = draw(st.integers(1, nn))
        return move_rows(nn, dd, draw(st.integers(0, nn - count)), draw(st.integers(0, nn - count)), count)
    if choice == "add" and nn >= 2:
        return running_add(1, nn, dd)
    return identity(nn, dd)


@settings(max_examples=25)
@given(data=st.data())
def test_random_clean_chains_of_primitives_are_proved(data):
    nn, dd = data.draw(st.integers(2, 4)), data.draw(st.integers(1, 2))
    parts = [_chain_parts(data.draw, nn, dd) for _ in range(data.draw(st.integers(1, 4)))]
    frag = compose(*parts)
    p = prove_fragment(frag)
    assert p.proved, p.failure
    assert frag.depth == sum(f.depth for f in parts) and not frag.over_bound()


def test_move_then_remember_then_move_back():
    mask = fixed_gate(Grid.from_cells(5, 2, {(0, 0): 1, (0, 1): 1, (1, 0): 1}))
    rem = remember_rows(5, 2, 1, 1, Grid.from_cells(1, 1, {(0, 0): 1}), ChannelF((1,)))
    frag = compose(mask, rem, move_rows(5, 2, 0, 3, 2, cols=[0]), move_rows(5, 2, 3, 0, 2, cols=[0]))
    assert prove_fragment(frag).proved
