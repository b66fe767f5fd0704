"""symverify.library_gated: the weights' repr and parameter names, and the refusals of malformed
weights and layout arguments (a string where a matrix is expected, a filter bank of the wrong
size, a sequence length that is not an int).

Each test names the function of ``symverify/library_gated.py`` it is for and why its assertion
bites.
"""

import pytest

from symverify.errors import IRError
from symverify.library_gated import gated_conv_layout, gated_conv_weights


def test_repr_abbreviates_huge_integers():
    """GatedConvWeights.__repr__: the dataclass repr, with a huge entry abbreviated."""
    w = gated_conv_weights(2, 1, W_in=[[10**5000, 1, 1]])
    text = repr(w)
    assert text.startswith("GatedConvWeights(d=1, order=2, W_in=((") and len(text) < 5000


def test_params_are_the_symbolic_weights():
    """GatedConvWeights.params: every weight left None is a parameter, in every field (a field left
    out of the union would drop its names); fully numeric weights have none."""
    w = gated_conv_weights(2, 1, prefix="p_")
    names = w.params()
    for expected in ("p_W_in[0][2]", "p_b_in[1]", "p_s[0][1]", "p_beta[2]", "p_h1[0][1]", "p_D1[0]",
                     "p_W_out[0][0]", "p_b_out[0]"):
        assert expected in names, expected
    assert len(names) == 3 + 3 + 3 * 2 + 3 + 2 + 1 + 1 + 1
    given = gated_conv_weights(2, 1, W_in=[[1, 2, 3]], b_in=[0, 0, 0], short=[[1], [1], [1]], short_bias=[0, 0, 0],
                               long=[[[1, 1]]], long_skip=[[0]], W_out=[[1]], b_out=[0])
    assert given.params() == frozenset()
    assert gated_conv_weights(2, 1, W_in=[[1, 2, 3]]).params() == names_without("W_in", gated_conv_weights(2, 1).params())


def names_without(field: str, names: frozenset) -> frozenset:
    return frozenset(n for n in names if not n.startswith(field + "["))


@pytest.mark.parametrize("kw, match", [
    ({"W_in": "abc"}, r"gated W_in: expected a 1×3 matrix, found str rows"),
    ({"W_out": [[1], [2]]}, r"gated W_out: expected a 1×1 matrix, found 2 rows"),
    ({"b_out": "0"}, r"gated b_out: expected 1 entries, found str"),
    ({"long": [[[1], [2]]]}, r"gated long\[0\]: expected 1 filters \(one per channel\), found 2"),
    ({"long": [5]}, r"gated long\[0\]: expected 1 filters \(one per channel\), found int"),
])
def test_malformed_weights_are_refused(kw, match):
    """_seq, _matrix, the long filter banks (in gated_conv_weights): a string or scalar where a
    sequence is expected, or a sequence of the wrong length, is an IRError naming it."""
    with pytest.raises(IRError, match=match):
        gated_conv_weights(2, 1, **kw)


@pytest.mark.parametrize("N", [2.0, "2", True])
def test_layout_refuses_a_length_that_is_not_an_int(N):
    """gated_conv_layout: an N of another type skips the memo and is refused by the layout's own
    check (not looked up, not built)."""
    w = gated_conv_weights(2, 1)
    with pytest.raises(IRError, match=r"gated: expected an int N \(sequence length\) ≥ 1, found"):
        gated_conv_layout(N, w)


def test_layout_with_a_name_of_another_type():
    """gated_conv_layout: a name that is not a str skips the memo (the circuit's own check then
    refuses it)."""
    w = gated_conv_weights(2, 1, W_in=[[1, 2, 3]], b_in=[0, 0, 0], short=[[1], [1], [1]], short_bias=[0, 0, 0],
                           long=[[[1, 1]]], long_skip=[[0]], W_out=[[1]], b_out=[0])
    c, _ = gated_conv_layout(2, w, "ok")
    assert c.name == "ok"
    with pytest.raises(IRError):
        gated_conv_layout(2, w, 7)  # type: ignore[arg-type]
