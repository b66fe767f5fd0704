"""The flat fingerprints of models and kaleidoscopes (the Fiat–Shamir input of the randomized method)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

import symverify as sv
from symverify.ir.baseconv import Mode, Model
from symverify.ir.scalar import sym
from symverify.library import random_circuit
from symverify.provers import fingerprint as fp
from symverify.provers.randomized import _fingerprint
from symverify.provers.sides import as_side
from symverify.strategies import models

NEW_VALUES = [Fraction(1, 3), Fraction(-7, 2), 5, -4, 2**70, Fraction(1, 2**65), sym("a"), sym("a") * 2 - 1]


def _with_weight(m: Model, layer: int, name: str, i: int, j: int, value: object) -> Model:
    """``m`` with one entry of one grid painted to ``value``."""
    ly = m.layers[layer]
    grid = getattr(ly, name).paint(i, i + 1, j, j + 1, value)
    layers = list(m.layers)
    layers[layer] = replace(ly, **{name: grid})
    return replace(m, layers=tuple(layers))


@st.composite
def _changed_weight(draw: st.DrawFn) -> tuple[Model, Model]:
    m = draw(models(max_n=3, max_d=3, max_layers=3, pad=2).filter(lambda m: len(m.layers) > 0))
    k = draw(st.integers(0, len(m.layers) - 1))
    name = draw(st.sampled_from(["W", "b1", "h", "b2"]))
    g = getattr(m.layers[k], name)
    i, j = draw(st.integers(0, g.rows - 1)), draw(st.integers(0, g.cols - 1))
    old = g.to_rows()[i][j]
    value = draw(st.sampled_from([v for v in NEW_VALUES if v != old]))
    return m, _with_weight(m, k, name, i, j, value)


@given(_changed_weight())
def test_a_changed_weight_changes_the_model_fingerprint(pair: tuple[Model, Model]) -> None:
    m, changed = pair
    assert _fingerprint(as_side(m)) != _fingerprint(as_side(changed))


@given(models(max_n=3, max_d=3, max_layers=3, pad=2))
def test_equal_models_have_equal_fingerprints(m: Model) -> None:
    copy = Model(m.n, m.d, m.inner_n, m.inner_d, tuple(replace(ly) for ly in m.layers), "another name")
    assert _fingerprint(as_side(m)) == _fingerprint(as_side(copy))


@given(models(max_n=3, max_d=2, max_layers=2, pad=2).filter(lambda m: len(m.layers) > 0))
def test_sizes_and_modes_are_part_of_the_model_fingerprint(m: Model) -> None:
    base = _fingerprint(as_side(m))
    flipped = Mode.CYCLIC if m.layers[0].mode is Mode.CAUSAL else Mode.CAUSAL
    layers = (replace(m.layers[0], mode=flipped), *m.layers[1:])
    assert _fingerprint(as_side(replace(m, layers=layers))) != base
    assert _fingerprint(as_side(replace(m, n=m.n + 1, inner_n=m.inner_n + 1, layers=()))) != _fingerprint(
        as_side(replace(m, layers=())))


def test_values_at_and_past_int64_and_symbols_are_told_apart() -> None:
    from symverify.ir.baseconv import Layer
    from symverify.ir.grid import Grid

    def model(v: object) -> Model:
        return Model(1, 1, 2, 1, (Layer.make(2, 1, b1=Grid.full(2, 1, 1), b2=Grid.zeros(2, 1).paint(0, 1, 0, 1, v)),))

    values = [1, Fraction(3, 2), 2**63 - 1, 2**63, -(2**63), Fraction(1, 2**63), sym("a")]
    assert len({_fingerprint(as_side(model(v))) for v in values}) == len(values)
    assert fp.feed_model(hashlib.sha256(), model(2**63 - 1))
    h1, h2 = hashlib.sha256(), hashlib.sha256()
    fp._feed_scalars(h1, [1, 2])
    fp._feed_scalars(h2, [1, Fraction(1, 2)])
    assert h1.digest() != h2.digest()


def test_the_compiled_model_fingerprint_is_flat_and_sees_one_weight() -> None:
    c = random_circuit(4, 2, 24, 4, seed=3)
    model = sv.compile(c).model
    k = next(i for i, ly in enumerate(model.layers) if ly.W.nonzero())
    (i, j), v = next(iter(model.layers[k].W.nonzero().items()))
    changed = _with_weight(model, k, "W", i, j, v + Fraction(1, 7))
    assert _fingerprint(as_side(model)) != _fingerprint(as_side(changed))
    # the flat encoding is used (no field-by-field fallback) for a compiled model
    assert fp.feed_model(hashlib.sha256(), model)


def test_a_repeated_fingerprint_is_the_same_and_a_new_object_is_hashed_afresh() -> None:
    c = random_circuit(2, 2, 8, 3, seed=5)
    model = sv.compile(c).model
    first = _fingerprint(as_side(model))
    assert _fingerprint(as_side(model)) == first
    fp._RECENT.clear()
    assert _fingerprint(as_side(model)) == first  # the cache holds what the encoding gives
    ly = model.layers[0]
    changed = replace(model, layers=(replace(ly, b2=ly.b2.paint(0, 1, 0, 1, Fraction(5, 11))), *model.layers[1:]))
    if changed.layers[0].b2.to_rows() != ly.b2.to_rows():
        assert _fingerprint(as_side(changed)) != first
