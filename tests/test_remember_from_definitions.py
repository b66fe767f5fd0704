"""Proposition H.10's builders instantiate the ∀-proved definitions: the same layers as by hand.

``_ref_rows`` / ``_ref_channels`` are the hand-written constructions of
:mod:`symverify.gadgets.remember` kept as the reference; the builders must give layers equal
(``==``, storage included) to them on every case, instantiated from
:mod:`symverify.parametric.library` wherever a definition expresses them.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.gadgets import remember as rem
from symverify.gadgets.remember import ChannelF, ConstF, remember_channels, remember_rows
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import is_zero, sym


def _ref_rows(nn, dd, a, b, h, f, cs):
    lag0 = all(k == 0 for (k, _) in h.nonzero())
    two = not lag0 and b > 0
    s = a + b

    def cells(*pairs):
        return {c: v for c, v in pairs if not is_zero(v)}

    W, b1, h1 = {}, {}, {}
    for t, c in enumerate(cs):
        scale = h.get(0, t) if lag0 else 1
        if isinstance(f, ChannelF):
            W.update(cells(((f.cols[t], c), scale)))
        else:
            b1.update(cells(*(((i, c), f.values.get(i, t) * scale) for i in range(a))))
        if lag0:
            h1[(0, c)] = 1
        else:
            h1.update(cells(*(((k, c), h.get(k, t)) for k in range(a))))
        r0 = a + s if two else a
        b1.update({(i, c): 1 for i in range(r0, r0 + b)})
        if two:
            h1[(s, c)] = 1
    layers = [Layer(Grid.from_cells(dd, dd, W), Grid.from_cells(nn, dd, b1), Grid.from_cells(nn, dd, h1), Grid.zeros(nn, dd), Mode.CAUSAL)]
    if two:
        h2 = {(0, c): 1 for c in cs} | {(nn - s, c): 1 for c in cs}
        b1b = {(i, c): 1 for i in range(a + b) for c in cs}
        layers.append(Layer(Grid.zeros(dd, dd), Grid.from_cells(nn, dd, b1b), Grid.from_cells(nn, dd, h2), Grid.zeros(nn, dd), Mode.CYCLIC))
    return tuple(layers)


def _ref_channels(nn, dd, a, b, h, f, m):
    W, b1 = {}, {}
    hh = dict(h.nonzero())
    for t in range(a):
        if isinstance(f, ChannelF):
            W[(f.cols[t], t)] = 1
        else:
            b1.update({(i, t): v for i in range(m) if not is_zero(v := f.values.get(i, t))})
    for c in range(a, a + b):
        b1.update({(i, c): 1 for i in range(m)})
        hh[(0, c)] = 1
    return (Layer(Grid.from_cells(dd, dd, W), Grid.from_cells(nn, dd, b1), Grid.from_cells(nn, dd, hh), Grid.zeros(nn, dd), Mode.CAUSAL),)


_VALUES = st.one_of(st.integers(-3, 3), st.sampled_from([sym("p"), sym("q")]))


@st.composite
def _filter(draw, rows, cols, max_lags):
    lags = draw(st.lists(st.integers(0, rows - 1), min_size=0, max_size=max_lags, unique=True))
    cells = {(k, t): draw(_VALUES) for k in lags for t in range(cols)}
    return Grid.from_cells(rows, cols, {c: v for c, v in cells.items() if not is_zero(v)})


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_remember_rows_equals_the_hand_written_layers(data):
    a = data.draw(st.integers(1, 4))
    b = data.draw(st.integers(0, 3))
    dd = data.draw(st.integers(1, 4))
    nn = data.draw(st.integers(2 * (a + b), 2 * (a + b) + 3))
    const = data.draw(st.booleans()) or dd == 1
    if const:
        cs = tuple(data.draw(st.permutations(range(dd)))) if data.draw(st.booleans()) else tuple(range(dd))
        f = ConstF(Grid.from_cells(a, dd, {(i, t): data.draw(_VALUES) for i in range(a) for t in range(dd)}))
    else:
        fc = data.draw(st.integers(0, dd - 1))
        cs = tuple(c for c in range(dd) if c != fc)[:1]
        f = ChannelF((fc,))
    h = data.draw(_filter(a, len(cs), 3))
    frag = remember_rows(nn, dd, a, b, h, f, cols=cs)
    assert frag.layers == _ref_rows(nn, dd, a, b, h, f, cs)
    lag0 = all(k == 0 for (k, _) in h.nonzero())
    lags = len({k for (k, _) in h.nonzero()})
    expressible = const and sorted(cs) == list(range(dd)) and (lag0 or (b > 0 and lags <= 2))
    assert (rem._rows_from_definition(nn, dd, a, b, h, f, cs, lag0, not lag0 and b > 0) is not None) == expressible


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_remember_channels_equals_the_hand_written_layer(data):
    a = data.draw(st.integers(1, 3))
    b = data.draw(st.integers(0, 2))
    m = data.draw(st.integers(1, 4))
    nn = data.draw(st.integers(m, m + 2))
    h = data.draw(_filter(m, a, 3))
    kind = data.draw(st.sampled_from(["consecutive", "reversed", "const"]))
    if kind == "const":
        dd = a + b + data.draw(st.integers(0, 2))
        f: ConstF | ChannelF = ConstF(Grid.from_cells(m, a, {(i, t): data.draw(_VALUES) for i in range(m) for t in range(a)}))
    else:
        fo = a + b + data.draw(st.integers(0, 2))
        dd = fo + a + data.draw(st.integers(0, 1))
        f = ChannelF(tuple(range(fo, fo + a)) if kind == "consecutive" else tuple(reversed(range(fo, fo + a))))
    frag = remember_channels(nn, dd, a, b, h, f, m=m)
    assert frag.layers == _ref_channels(nn, dd, a, b, h, f, m)
    lags = len({k for (k, _) in h.nonzero()})
    expressible = isinstance(f, ChannelF) and (kind == "consecutive" or a == 1) and lags <= 2
    assert (rem._channels_from_definition(nn, dd, a, b, h, f, m) is not None) == expressible


def test_theorem_h21_multiplication_layer_comes_from_the_definition():
    f = ChannelF((3, 4))
    e0 = Grid.from_cells(1, 2, {(0, 0): 1, (0, 1): 1})
    assert rem._channels_from_definition(1, 5, 2, 1, e0, f, 1) is not None
    assert remember_channels(1, 5, 2, 1, e0, f).layers == _ref_channels(1, 5, 2, 1, e0, f, 1)


def test_rows_layers_come_from_the_definitions_where_expressible():
    F = ConstF(Grid.symbolic("F", 2, 2))
    lag0 = Grid.from_cells(2, 2, {(0, 0): sym("g"), (0, 1): 2})
    two = Grid.from_cells(2, 2, {(0, 0): sym("u"), (1, 1): sym("v")})
    assert rem._rows_from_definition(3, 2, 2, 1, lag0, F, (0, 1), True, False) is not None
    assert len(rem._rows_from_definition(6, 2, 2, 1, two, F, (0, 1), False, True) or ()) == 2
    for h, n, is_two in ((lag0, 3, False), (two, 6, True)):
        assert remember_rows(n, 2, 2, 1, h, F).layers == _ref_rows(n, 2, 2, 1, h, F, (0, 1))
        assert remember_rows(n, 2, 2, 1, h, F).depth == (2 if is_two else 1)


def test_each_remember_form_instantiates_the_one_shared_definition(monkeypatch):
    """Every form instantiates the definition built once (symverify.parametric.definitions), never
    a fresh copy per layer; the layers are the hand-written ones all the same."""
    from symverify.kernel.parametric import concrete
    from symverify.parametric import definitions

    seen = []
    real = concrete.instantiate

    def spy(g, *args, **kwargs):
        seen.append(g)
        return real(g, *args, **kwargs)

    monkeypatch.setattr(concrete, "instantiate", spy)
    F = ConstF(Grid.symbolic("F", 2, 2))
    lag0 = Grid.from_cells(2, 2, {(0, 0): sym("g"), (0, 1): 2})
    two = Grid.from_cells(2, 2, {(0, 0): sym("u"), (1, 1): sym("v")})
    e0 = Grid.from_cells(1, 2, {(0, 0): 1, (0, 1): 1})
    for _ in range(2):
        assert remember_rows(3, 2, 2, 1, lag0, F).layers == _ref_rows(3, 2, 2, 1, lag0, F, (0, 1))
        assert remember_rows(6, 2, 2, 1, two, F).layers == _ref_rows(6, 2, 2, 1, two, F, (0, 1))
        assert remember_channels(1, 5, 2, 1, e0, ChannelF((3, 4))).layers == _ref_channels(1, 5, 2, 1, e0, ChannelF((3, 4)), 1)
    shared = [definitions.remember_rows(), definitions.remember_rows_two(), definitions.remember_channels()]
    assert len(seen) == 6 and all(g is shared[k % 3] for k, g in enumerate(seen))
