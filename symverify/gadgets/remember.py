"""Proposition H.10 (``remember``): apply ``f ⊙ (h ⊛ x)`` to one block and keep another unchanged.

``remember(y : x, r, h, f)`` (docs/theory.md §4): the input state holds blocks ``y = [x; r; 0]`` and the
output is ``[f ⊙ (h ⊛ x); r; 0]``: ``h ⊛ x`` is the causal convolution of the first block along
the sequence axis (taps ``h[k]``, ``k`` < the block length), multiplied entrywise by ``f``, while
``r`` is kept and everything else ends 0. ``f`` is either

* :class:`ConstF`: a fixed matrix, supplied by the bias ``b1`` of the projection branch; or
* :class:`ChannelF`: a value already in the state, in other channels of the same rows as ``x``
  (``f`` for ``x``'s channel ``cols[t]`` sits in channel ``ChannelF.cols[t]``); ``W`` carries it to
  the projection branch. This is the use in Theorem H.21's multiplication stage (``x = v2``,
  ``f = v1``, ``r = v3``, ``h = e_0``), where the operand blocks share rows and differ in channel.
  The ``f`` channels are consumed (0 on exit).

**Choice (O(1) layers, docs/theory.md §4).** :func:`remember_rows` (blocks of rows) uses **at most 2
layers**: 1 when ``h`` has taps at lag 0 only or ``r`` is empty, else 2 with a workspace of
``a + b`` zero rows (``N' ≥ 2(a + b)``). :func:`remember_channels` (blocks of channels, as the
dense compiler lays out a level's operands) always uses **1 layer**, because the filter is
per channel and never mixes ``x`` with ``r``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from symverify.errors import IRError, ShapeError
from symverify.gadgets.primitives import _check_size, conv_terms
from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder, block
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero

__all__ = ["ConstF", "ChannelF", "remember_rows", "remember_channels", "REMEMBER_MAX_LAYERS"]

REMEMBER_MAX_LAYERS = 2
"""The constant of Proposition H.10 as constructed here (docs/theory.md §4 **Choice**)."""


@dataclass(frozen=True)
class ConstF:
    """``f`` is the fixed matrix ``values`` (shaped like the ``x`` block), entered through ``b1``."""

    values: Grid


@dataclass(frozen=True)
class ChannelF:
    """``f`` is in the state: channel ``cols[t]`` holds the ``f`` that multiplies ``x``'s channel t."""

    cols: tuple[int, ...]

    def __post_init__(self) -> None:
        if isinstance(self.cols, (str, bytes)) or not isinstance(self.cols, (Sequence, range)):
            # an int has no channels to list, a mapping would be read as its keys, a str as its characters
            raise ShapeError(f"remember f: ChannelF expected a list of channels, found {type(self.cols).__name__} {self.cols!r:.40}")
        object.__setattr__(self, "cols", tuple(self.cols))


def _check_f(f: object, shape: tuple[int, int], x_cols: Sequence[int], inner_d: int, used: set[int]) -> None:
    if isinstance(f, ConstF):
        if not isinstance(f.values, Grid) or (f.values.rows, f.values.cols) != shape:
            found = f"{f.values.rows}×{f.values.cols}" if isinstance(f.values, Grid) else type(f.values).__name__
            raise ShapeError(f"remember f: expected a constant of the x block's shape {shape[0]}×{shape[1]}, found {found}")
    elif isinstance(f, ChannelF):
        if len(f.cols) != len(x_cols):
            raise ShapeError(f"remember f: expected one f channel per x channel ({len(x_cols)}), found {len(f.cols)}")
        if any(not isinstance(c, int) or isinstance(c, bool) for c in f.cols):
            raise ShapeError(f"remember f: expected int channels, found {list(f.cols)!r}")
        if len(set(f.cols)) != len(f.cols) or any(not 0 <= c < inner_d for c in f.cols):
            raise ShapeError(f"remember f: channels {list(f.cols)} must be distinct and in [0, {inner_d})")
        clash = sorted(set(f.cols) & used)
        if clash:
            raise IRError(f"remember f: channels {clash} are also used by the x/r blocks; f must sit in other channels")
    else:
        raise IRError(f"remember f: expected ConstF or ChannelF, found {type(f).__name__}")


def _instantiated(gadget: str, params: dict[str, int], fams: dict[str, Callable[..., Scalar]]) -> tuple[Layer, ...]:
    """The library definition ``gadget`` at ``params`` and families ``fams``, every grid stored cell by
    cell (:meth:`Grid.from_cells` of its nonzero cells, the storage of the hand-written bodies).
    The definition is the one built once and shared (:mod:`symverify.parametric.definitions`): a
    gadget is immutable, and building it again for every layer cost the checks of its construction
    each time and the concrete interpretation's memos, found by the expressions' identity."""
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.parametric import definitions

    layers = instantiate(getattr(definitions, gadget)(), params, fams)
    out = []
    for layer in layers:
        W, b1, h, b2 = (Grid.from_cells(g.rows, g.cols, g.nonzero()) for _, g in layer.grids())
        out.append(Layer(W, b1, h, b2, layer.mode))
    return tuple(out)


def _two_lags(h: Grid) -> tuple[int, int] | None:
    """Lags ``(l1, l2)`` holding every nonzero tap of ``h`` (``l2 = 0`` when there is one lag), or
    None when ``h`` has taps at more than two lags."""
    lags = sorted({k for (k, _) in h.nonzero()})
    if len(lags) > 2:
        return None
    if len(lags) == 2:
        return lags[0], lags[1]
    return (lags[0], 0) if lags else (0, 0)


def _rows_from_definition(nn: int, dd: int, a: int, b: int, h: Grid, f: ConstF | ChannelF, cs: tuple[int, ...], lag0: bool,
                          two: bool) -> tuple[Layer, ...] | None:
    """:func:`remember_rows`'s layers instantiated from :func:`symverify.parametric.library.remember_rows`
    (one layer) or :func:`~symverify.parametric.library.remember_rows_two` (two layers), None when
    neither expresses them: ``f`` must be a constant on every channel, and two layers need taps at
    at most two lags; the one-layer form with ``b = 0`` and a general filter has no definition."""
    if not isinstance(f, ConstF) or sorted(cs) != list(range(dd)):
        return None
    pos = {c: t for t, c in enumerate(cs)}
    F = f.values

    def fam_f(i: int, c: int) -> Scalar:
        return F.get(i, pos[c]) if i < a else 0

    if lag0:
        return _instantiated("remember_rows", {"N": nn, "d": dd, "a": a, "b": b},
                             {"F": fam_f, "g": lambda c: h.get(0, pos[c])})
    lags = _two_lags(h)
    if not two or lags is None:
        return None
    l1, l2 = lags

    def tapf(lag: int) -> Callable[[int], Scalar]:
        return lambda c: h.get(lag, pos[c])

    fams: dict[str, Callable[..., Scalar]] = {"F": fam_f, "h1": tapf(l1), "h2": tapf(l2) if l2 != l1 else (lambda c: 0)}
    return _instantiated("remember_rows_two", {"N": nn, "d": dd, "a": a, "b": b, "l1": l1, "l2": l2}, fams)


def _channels_from_definition(nn: int, dd: int, a: int, b: int, h: Grid, f: ConstF | ChannelF, m: int) -> tuple[Layer, ...] | None:
    """:func:`remember_channels`'s layer instantiated from :func:`symverify.parametric.library.remember_channels`,
    None when it does not express it: ``f`` must sit in the consecutive channels ``[fo, fo + a)`` and
    ``h`` have taps at at most two lags."""
    lags = _two_lags(h)
    if not isinstance(f, ChannelF) or lags is None:
        return None
    fo = f.cols[0]
    if f.cols != tuple(range(fo, fo + a)):
        return None
    l1, l2 = lags

    def tapf(lag: int) -> Callable[[int], Scalar]:
        return lambda c: h.get(lag, c) if c < a else 0

    fams: dict[str, Callable[..., Scalar]] = {"h1": tapf(l1), "h2": tapf(l2) if l2 != l1 else (lambda c: 0)}
    return _instantiated("remember_channels", {"N": nn, "d": dd, "a": a, "b": b, "m": m, "fo": fo, "l1": l1, "l2": l2}, fams)


def _f_value(b: SpecBuilder, f: ConstF | ChannelF, i: int, t: int, fi: int, conv: list[tuple[Scalar, int]]) -> int:
    """Spec node of ``f[i, t] · Σ coeff·node`` (``fi`` = the row of f's cell for ChannelF)."""
    if isinstance(f, ConstF):
        fv = f.values.get(i, t)
        return b.affine([(fv * c, v) for c, v in conv]) if not is_zero(fv) else b.zero()
    return b.mul(b.cell(fi, f.cols[t]), b.affine(conv))


def _rows_by_hand(nn: int, dd: int, a: int, b: int, h: Grid, f: ConstF | ChannelF, cs: tuple[int, ...], lag0: bool,
                  two: bool) -> tuple[Layer, ...]:
    """:func:`remember_rows`'s layers written by hand (the cases no library definition expresses)."""
    s = a + b

    def cells(*pairs: tuple[tuple[int, int], object]) -> dict[tuple[int, int], object]:
        return {c: v for c, v in pairs if not is_zero(v)}  # type: ignore[arg-type]

    W: dict[tuple[int, int], object] = {}
    b1: dict[tuple[int, int], object] = {}
    h1: dict[tuple[int, int], object] = {}
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

def remember_rows(inner_n: int, inner_d: int, a: int, b: int, h: Grid, f: ConstF | ChannelF,
                  cols: Sequence[int] | None = None) -> Fragment:
    """Blocks of rows: ``x`` = rows ``[0, a)``, ``r`` = rows ``[a, a+b)`` on channels ``cols``.

    ``h`` is ``a × len(cols)`` (lag k, channel t); ``ConstF`` values are ``a × len(cols)``.
    ``cols`` defaults to every channel not holding ``f``. The entry interface is ``x``, ``r`` (and
    ``f``'s channels in the x rows); everything else must be 0.

    *One layer* (h has taps at lag 0 only, or b = 0): ``W[f_t, c_t] = h[0, t]`` (ChannelF) or
    ``b1[i, c_t] = F[i, t]·h[0, t]`` on x rows (ConstF), ``b1 = 1`` on r rows × cols,
    ``h = e_0`` on cols, ``b2 = 0`` (with b = 0 and a general h: ``h`` itself, ``b1 = F``/``W = 1``).

    *Two layers* (general h, b ≥ 1, ``N' ≥ 2(a + b)``, ``s = a + b``):
    layer 1 (causal) ``W[f_t, c_t] = 1`` or ``b1 = F`` on x rows, ``b1 = 1`` on rows ``[a+s, a+b+s)``,
    ``h₁ = h + e_s`` on cols, ``b2 = 0``: x rows become ``f ⊙ (h ⊛ x)``, r moves down by s into the
    workspace, the rest is 0; layer 2 (cyclic) ``W = 0``, ``h₂ = e_0 + e_{N'−s}``, ``b1 = 1`` on rows
    ``[0, a+b)``, ``b2 = 0``: r moves back up, the x rows see only zero rows at lag −s.

    With a constant ``f`` on every channel (and, for two layers, taps at at most two lags) the layers
    are the ∀-proved definitions ``remember_rows`` / ``remember_rows_two`` instantiated; the other
    cases are written by hand (:func:`_rows_by_hand`).
    """
    _check_size(inner_n, inner_d, "remember_rows")
    if cols is not None and (isinstance(cols, (str, bytes)) or not isinstance(cols, Sequence)):
        raise ShapeError(f"remember_rows cols: expected a list of channels, found {type(cols).__name__} {cols!r:.40}")
    cs = tuple(c for c in range(inner_d) if not (isinstance(f, ChannelF) and c in f.cols)) if cols is None else tuple(cols)
    if any(not isinstance(v, int) or isinstance(v, bool) for v in (a, b)) or a < 1 or b < 0 or a + b > inner_n:
        raise ShapeError(f"remember_rows: expected a ≥ 1, b ≥ 0 and a + b ≤ N' = {inner_n}, found a = {a!r}, b = {b!r}")
    if not cs or any(not isinstance(c, int) or isinstance(c, bool) for c in cs) or len(set(cs)) != len(cs) \
            or any(not 0 <= c < inner_d for c in cs):
        raise ShapeError(f"remember_rows cols: expected distinct channels in [0, {inner_d}), found {list(cs)}")
    _check_f(f, (a, len(cs)), cs, inner_d, set(cs))
    if not isinstance(h, Grid) or (h.rows, h.cols) != (a, len(cs)):
        raise ShapeError(f"remember_rows h: expected an {a}×{len(cs)} filter (lag × channel), found {getattr(h, 'rows', '?')}×{getattr(h, 'cols', '?')}")
    lag0 = all(k == 0 for (k, _) in h.nonzero())
    two = not lag0 and b > 0
    if two and inner_n < 2 * (a + b):
        raise ShapeError(f"remember_rows: a general filter with r kept needs a workspace, N' ≥ 2(a + b) = {2 * (a + b)}; found N' = {inner_n}")
    s = a + b
    fcols = f.cols if isinstance(f, ChannelF) else ()

    nn, dd = inner_n, inner_d
    layers = _rows_from_definition(nn, dd, a, b, h, f, cs, lag0, two)
    if layers is None:
        layers = _rows_by_hand(nn, dd, a, b, h, f, cs, lag0, two)
    # x's filter as an a-row grid embedded in N' rows, for the spec's causal convolution
    hx = Grid.from_cells(nn, len(cs), h.nonzero())

    def spec(bld: SpecBuilder) -> dict[tuple[int, int], int]:
        out: dict[tuple[int, int], int] = {}
        for t, c in enumerate(cs):
            for i in range(a):
                conv = [(co, bld.cell(r, c)) for co, r in conv_terms(hx, i, t, Mode.CAUSAL)]
                out[(i, c)] = _f_value(bld, f, i, t, i, conv)
            out.update({(i, c): bld.cell(i, c) for i in range(a, a + b)})
        return out

    def checkpoints(bld: SpecBuilder, nodes: dict[tuple[int, int], int]) -> tuple[tuple[int, tuple[Cell, ...]], ...]:
        if not two:
            return ()
        x_part = [Cell.node(i, c, nodes[(i, c)]) for i in range(a) for c in cs]
        r_part = [Cell.node(i + s, c, bld.cell(i, c)) for i in range(a, a + b) for c in cs]
        return ((1, tuple(x_part + r_part)),)

    def build() -> Spec:
        bld = SpecBuilder(nn, dd)
        nodes = spec(bld)
        return Spec(bld.circuit(nodes, "remember_rows"), checkpoints(bld, nodes))

    entry = block(range(a + b), cs) | block(range(a), fcols)
    exit_ = block(range(a + b), cs)
    return Fragment(f"remember_rows(a={a}, b={b}, {'2 layers' if two else '1 layer'})", nn, dd, tuple(layers), entry, exit_,
                    {"layers": 2 if two else 1}, build)


def _channels_by_hand(nn: int, dd: int, a: int, b: int, h: Grid, f: ConstF | ChannelF, m: int) -> Layer:
    """:func:`remember_channels`'s layer written by hand (the cases the library definition does not express)."""
    W: dict[tuple[int, int], object] = {}
    b1: dict[tuple[int, int], object] = {}
    hh: dict[tuple[int, int], object] = {(k, t): v for (k, t), v in h.nonzero().items()}
    for t in range(a):
        if isinstance(f, ChannelF):
            W[(f.cols[t], t)] = 1
        else:
            b1.update({(i, t): v for i in range(m) if not is_zero(v := f.values.get(i, t))})
    for c in range(a, a + b):
        b1.update({(i, c): 1 for i in range(m)})
        hh[(0, c)] = 1
    layer = Layer(Grid.from_cells(dd, dd, W), Grid.from_cells(nn, dd, b1), Grid.from_cells(nn, dd, hh), Grid.zeros(nn, dd), Mode.CAUSAL)
    return layer


def remember_channels(inner_n: int, inner_d: int, a: int, b: int, h: Grid, f: ConstF | ChannelF, m: int = 1) -> Fragment:
    """Blocks of channels on rows ``[0, m)``: ``x`` = channels ``[0, a)``, ``r`` = channels ``[a, a+b)``.

    ``h`` is ``m × a`` (lag k, channel t), ``ConstF`` values are ``m × a``; ``ChannelF`` columns lie
    outside ``[0, a+b)``. One causal layer: on x channel t, ``W[f_t, t] = 1`` (ChannelF) or
    ``b1[i, t] = F[i, t]`` for ``i < m`` (ConstF), ``h[:, t]`` = the filter, ``b2 = 0``; on r
    channels ``b1 = 1`` on rows ``[0, m)``, ``h = e_0``, ``b2 = 0``; every other channel 0. With
    ``h = e_0`` and ChannelF this is the multiplication layer of Theorem H.21: ``[v2 | v3 | v1] ↦
    [v1 ⊙ v2 | v3 | 0]``.

    With ``f`` in the consecutive channels ``[fo, fo + a)`` and taps at at most two lags the layer is
    the ∀-proved definition ``remember_channels`` instantiated; the other cases are written by hand
    (:func:`_channels_by_hand`).
    """
    _check_size(inner_n, inner_d, "remember_channels")
    if any(not isinstance(v, int) or isinstance(v, bool) for v in (a, b)) or a < 1 or b < 0 or a + b > inner_d:
        raise ShapeError(f"remember_channels: expected a ≥ 1, b ≥ 0 and a + b ≤ d' = {inner_d}, found a = {a!r}, b = {b!r}")
    if not isinstance(m, int) or isinstance(m, bool) or not 1 <= m <= inner_n:
        raise ShapeError(f"remember_channels: expected 1 ≤ m ≤ N' = {inner_n} rows, found {m!r}")
    _check_f(f, (m, a), range(a), inner_d, set(range(a + b)))
    if not isinstance(h, Grid) or (h.rows, h.cols) != (m, a):
        raise ShapeError(f"remember_channels h: expected an {m}×{a} filter (lag × channel), found {getattr(h, 'rows', '?')}×{getattr(h, 'cols', '?')}")
    nn, dd = inner_n, inner_d
    layers = _channels_from_definition(nn, dd, a, b, h, f, m)
    if layers is None:
        layers = (_channels_by_hand(nn, dd, a, b, h, f, m),)
    hx = Grid.from_cells(nn, a, h.nonzero())
    fcols = f.cols if isinstance(f, ChannelF) else ()

    def build() -> Spec:
        bld = SpecBuilder(nn, dd)
        out: dict[tuple[int, int], int] = {}
        for i in range(m):
            for t in range(a):
                conv = [(co, bld.cell(r, t)) for co, r in conv_terms(hx, i, t, Mode.CAUSAL)]
                if isinstance(f, ChannelF):
                    out[(i, t)] = bld.mul(bld.cell(i, f.cols[t]), bld.affine(conv))
                else:
                    out[(i, t)] = _f_value(bld, f, i, t, i, conv)
            out.update({(i, c): bld.cell(i, c) for c in range(a, a + b)})
        return Spec(bld.circuit(out, "remember_channels"))

    entry = block(range(m), range(a + b)) | block(range(m), fcols)
    return Fragment(f"remember_channels(a={a}, b={b})", nn, dd, layers, entry, block(range(m), range(a + b)), {"layers": 1}, build)
