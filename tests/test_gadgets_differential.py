"""Differential test of the gadget builders and the circuit library against oracles written here.

Every builder of :mod:`symverify.gadgets` (primitives, remember, compose/pad, layout) is built at
random valid arguments (hypothesis, small sizes) and compared with the function its docstring
promises, evaluated here with plain :class:`~fractions.Fraction` arithmetic on random inputs:

* the model is run by :func:`run_layers`, a BaseConv interpreter written in this file from
  docs/theory.md §1.1, ``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` with the causal sum ``Σ_{k ≤ i}`` or the
  cyclic sum modulo ``N'`` (never the package's evaluator);
* the spec circuit is run by :func:`run_circuit`, a gate interpreter written here (docs/theory.md §2);
* ``verify(spec, model)`` must prove the standalone claim, and refute it once one weight of the
  model is moved (``inc``) whenever the interpreter sees the move change the output.

The circuit library (``random_circuit``, ``random_linear_circuit``, ``wired_circuit`` and the named
circuits) is checked the same way: inputs, outputs, size, depth, linearity and the polynomials
the docstrings state, against in-test evaluation and in-test levels. Adversarial arguments must
raise a :class:`SymverifyError` subclass with a message; ``test_the_oracle_catches_a_planted_bug``
shows the gadget oracle failing on a builder patched to use the wrong filter lag.

Examples per property are few by default (the file runs in seconds); set
``SYMVERIFY_GADGETDIFF_EXAMPLES=200`` for a long run.
"""

from __future__ import annotations

import itertools
import math
import os
import random
from collections.abc import Callable
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify import library
from symverify.errors import IRError, ShapeError, SymverifyError, UsageError
from symverify.gadgets import primitives as prim
from symverify.gadgets.compose import compose, pad
from symverify.gadgets.layout import channels_to_rows, rows_to_channels
from symverify.gadgets.remember import ChannelF, ConstF, remember_channels, remember_rows
from symverify.kernel.gadgets.fragment import Fragment, standalone
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.grid import Grid
from symverify.mutate import mutate_weight, weight_sites

EXAMPLES = int(os.environ.get("SYMVERIFY_GADGETDIFF_EXAMPLES", "0"))
FAST = settings(max_examples=EXAMPLES or 6, deadline=None, derandomize=not EXAMPLES)

State = list[list[Fraction]]
Oracle = Callable[[State], State]

# ---- the in-test interpreters ------------------------------------------------------------


def _dense(g: Grid) -> State:
    return [[Fraction(v) for v in row] for row in g.to_rows()]  # type: ignore[arg-type]


def run_layers(layers, state: State) -> State:
    """docs/theory.md §1.1, layer by layer: ``y = (z·W + b1) ⊙ (h ⊛ z + b2)``."""
    z = [list(r) for r in state]
    for layer in layers:
        W, b1, h, b2 = (_dense(g) for g in (layer.W, layer.b1, layer.h, layer.b2))
        nn, dd = len(z), len(z[0])
        cyclic = layer.mode.value == "cyclic"
        y = [[Fraction(0)] * dd for _ in range(nn)]
        for i in range(nn):
            for q in range(dd):
                proj = sum((z[i][p] * W[p][q] for p in range(dd)), Fraction(0)) + b1[i][q]
                if cyclic:
                    conv = sum((h[k][q] * z[(i - k) % nn][q] for k in range(nn)), Fraction(0))
                else:
                    conv = sum((h[k][q] * z[i - k][q] for k in range(i + 1)), Fraction(0))
                y[i][q] = proj * (conv + b2[i][q])
        z = y
    return z


def run_model(model, u: State) -> State:
    """docs/theory.md §1.2: embed ``u`` top-left in a zero ``N'×d'`` state, run, read the corner."""
    z = [[u[i][j] if i < model.n and j < model.d else Fraction(0) for j in range(model.inner_d)] for i in range(model.inner_n)]
    out = run_layers(model.layers, z)
    return [row[: model.d] for row in out[: model.n]]


def run_circuit(c: Circuit, xs: list) -> list:
    """docs/theory.md §2: inputs are ``vec(u)``; CONST, LIN (Σ coeff·operand), MUL; the outputs."""
    vals = list(xs)
    for g in c.gates:
        if g.op is Op.CONST:
            vals.append(Fraction(g.coeffs[0]))  # type: ignore[arg-type]
        elif g.op is Op.LIN:
            vals.append(sum(Fraction(k) * vals[a] for k, a in zip(g.coeffs, g.args, strict=True)))  # type: ignore[arg-type]
        else:
            p = 1
            for a in g.args:
                p = p * vals[a]
            vals.append(p)
    return [vals[o] for o in c.outputs]


def circuit_levels(c: Circuit) -> list[int]:
    """Inputs and constants at level 0, a LIN/MUL gate one above its deepest operand."""
    lv = [0] * c.num_inputs
    for g in c.gates:
        lv.append(0 if g.op is Op.CONST else 1 + max(lv[a] for a in g.args))
    return lv


# ---- helpers -----------------------------------------------------------------------------

VALUES = st.sampled_from([Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(1, 2), Fraction(-3, 4), Fraction(5)])


def _rand_state(rng: random.Random, nn: int, dd: int, cells=None) -> State:
    def val() -> Fraction:
        return Fraction(rng.randint(-9, 9), rng.choice((1, 2, 3, 7)))

    return [[val() if cells is None or (i, j) in cells else Fraction(0) for j in range(dd)] for i in range(nn)]


def _zeros(nn: int, dd: int) -> State:
    return [[Fraction(0)] * dd for _ in range(nn)]


def _grid(draw, rows: int, cols: int) -> Grid:
    return Grid.from_rows([[draw(VALUES) for _ in range(cols)] for _ in range(rows)], rows, cols)


def _conv(h: State, u: State, i: int, j: int, cyclic: bool) -> Fraction:
    nn = len(u)
    if cyclic:
        return sum((h[k][j] * u[(i - k) % nn][j] for k in range(nn)), Fraction(0))
    return sum((h[k][j] * u[i - k][j] for k in range(i + 1)), Fraction(0))


def check_fragment(frag: Fragment, oracle: Oracle, seed: int = 0, verify: bool = True) -> None:
    """Model (in-test interpreter), spec (in-test gate interpreter) and ``verify`` against ``oracle``."""
    rng = random.Random(seed)
    nn, dd = frag.inner_n, frag.inner_d
    spec = frag.spec().circuit
    for _ in range(2):
        u = _rand_state(rng, nn, dd, frag.entry)
        want = oracle(u)
        assert run_layers(frag.layers, u) == want, f"{frag.name}: model disagrees with the oracle on {u}"
        flat = run_circuit(spec, [x for row in u for x in row])
        assert [flat[i * dd:(i + 1) * dd] for i in range(nn)] == want, f"{frag.name}: spec disagrees with the oracle"
    if not verify:
        return
    circuit, model, _ = standalone(frag)
    assert sv.verify(circuit, model).proved, frag.name
    off = len(model.layers) - frag.depth
    sites = [s for s in weight_sites(model) if s.layer >= off]
    if not sites:
        return
    bad = mutate_weight(model, rng.choice(sites), "inc")
    for _ in range(3):
        u = _rand_state(rng, nn, dd)
        clean = [[u[i][j] if (i, j) in frag.entry else Fraction(0) for j in range(dd)] for i in range(nn)]
        if run_model(bad, u) != oracle(clean):
            rep = sv.verify(circuit, bad)
            assert rep.refuted, f"{frag.name}: a moved weight changes the output but verify says {rep.verdict}"
            return


# ---- the builders, each with its oracle ------------------------------------------------------


def _linear_map(draw):
    dd, nn = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    W = _grid(draw, dd, dd)
    Wd = _dense(W)
    return prim.linear_map(W, nn), lambda u: [[sum((u[i][p] * Wd[p][q] for p in range(dd)), Fraction(0)) for q in range(dd)] for i in range(nn)]


def _identity(draw):
    nn, dd = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return prim.identity(nn, dd), lambda u: [list(r) for r in u]


def _affine_map(draw):
    dd, nn = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    W = _grid(draw, dd, dd)
    rows = draw(st.lists(st.integers(0, nn - 1), unique=True)) if draw(st.booleans()) else None
    rs = set(range(nn)) if rows is None else set(rows)
    bias = Grid.from_rows([[draw(VALUES) if i in rs else 0 for _ in range(dd)] for i in range(nn)], nn, dd)
    Wd, Bd = _dense(W), _dense(bias)

    def oracle(u: State) -> State:
        return [[sum((u[i][p] * Wd[p][q] for p in range(dd)), Bd[i][q]) if i in rs else Fraction(0) for q in range(dd)] for i in range(nn)]

    return prim.affine_map(W, nn, bias, rows), oracle


def _convolution(draw):
    nn, dd = draw(st.integers(1, 4)), draw(st.integers(1, 2))
    h = _grid(draw, nn, dd)
    cyclic = draw(st.booleans())
    hd = _dense(h)
    return prim.convolution(h, "cyclic" if cyclic else "causal"), lambda u: [[_conv(hd, u, i, j, cyclic) for j in range(dd)] for i in range(nn)]


def _fixed_gate(draw):
    nn, dd = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    B = _grid(draw, nn, dd)
    Bd = _dense(B)
    return prim.fixed_gate(B), lambda u: [[Bd[i][j] * u[i][j] for j in range(dd)] for i in range(nn)]


def _constant(draw):
    nn, dd = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    R = _grid(draw, nn, dd)
    return prim.constant(R), lambda u: _dense(R)


def _shift_down(draw):
    nn, dd = draw(st.integers(1, 4)), draw(st.integers(1, 2))
    s = draw(st.integers(0, nn - 1))
    return prim.shift_down(nn, dd, s), lambda u: [[u[i - s][j] if i >= s else Fraction(0) for j in range(dd)] for i in range(nn)]


def _shift_up(draw):
    nn, dd = draw(st.integers(1, 4)), draw(st.integers(1, 2))
    s = draw(st.integers(0, nn - 1))
    return prim.shift_up(nn, dd, s), lambda u: [[u[i + s][j] if i + s < nn else Fraction(0) for j in range(dd)] for i in range(nn)]


def _cyclic_shift(draw):
    nn, dd = draw(st.integers(1, 4)), draw(st.integers(1, 2))
    s = draw(st.integers(-2 * nn, 2 * nn))
    return prim.cyclic_shift(nn, dd, s), lambda u: [[u[(i - s) % nn][j] for j in range(dd)] for i in range(nn)]


def _running_add(draw):
    n = draw(st.integers(1, 2))
    nn, dd = draw(st.integers(2 * n, 2 * n + 2)), draw(st.integers(1, 2))

    def oracle(u: State) -> State:
        return [[Fraction(1) if i < n else u[i][j] + u[i - n][j] if i < 2 * n else Fraction(0) for j in range(dd)] for i in range(nn)]

    return prim.running_add(n, nn, dd), oracle


def _move_rows(draw):
    nn, dd = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    count = draw(st.integers(1, nn))
    src, dst = draw(st.integers(0, nn - count)), draw(st.integers(0, nn - count))
    cols = draw(st.lists(st.integers(0, dd - 1), min_size=1, unique=True)) if draw(st.booleans()) else None
    cs = set(range(dd)) if cols is None else set(cols)

    def oracle(u: State) -> State:
        y = _zeros(nn, dd)
        for t in range(count):
            for c in cs:
                y[dst + t][c] = u[src + t][c]
        return y

    return prim.move_rows(nn, dd, src, dst, count, cols), oracle


def _move_cols(draw):
    nn, dd = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    count = draw(st.integers(1, dd))
    src, dst = draw(st.integers(0, dd - count)), draw(st.integers(0, dd - count))
    rows = draw(st.lists(st.integers(0, nn - 1), min_size=1, unique=True)) if draw(st.booleans()) else None
    rs = set(range(nn)) if rows is None else set(rows)

    def oracle(u: State) -> State:
        y = _zeros(nn, dd)
        for r in rs:
            for t in range(count):
                y[r][dst + t] = u[r][src + t]
        return y

    return prim.move_cols(nn, dd, src, dst, count, rows), oracle


def _rows_to_channels(draw):
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    nn, dd = draw(st.integers(n, n + 1)), draw(st.integers(n * d, n * d + 1))

    def oracle(u: State) -> State:
        y = _zeros(nn, dd)
        for r in range(n):
            for j in range(d):
                y[0][r * d + j] = u[r][j]
        return y

    return rows_to_channels(n, d, nn, dd), oracle


def _channels_to_rows(draw):
    m, d = draw(st.integers(0, 5)), draw(st.integers(1, 3))
    nn, dd = draw(st.integers(max(1, -(-m // d)), max(1, -(-m // d)) + 1)), draw(st.integers(max(m, d), max(m, d) + 1))

    def oracle(u: State) -> State:
        y = _zeros(nn, dd)
        for k in range(m):
            y[k // d][k % d] = u[0][k]
        return y

    return channels_to_rows(m, d, nn, dd), oracle


def _remember_rows(draw):
    """Proposition H.10 on blocks of rows: ``[x; r; 0] ↦ [f ⊙ (h ⊛ x); r; 0]`` on the channels ``cols``."""
    a, b = draw(st.integers(1, 2)), draw(st.integers(0, 2))
    lag0 = draw(st.booleans())
    nn = draw(st.integers(2 * (a + b), 2 * (a + b) + 1)) if not lag0 else draw(st.integers(a + b, a + b + 1))
    channel = draw(st.booleans())
    dd = draw(st.integers(1, 2)) * (2 if channel else 1)
    if channel:
        k = dd // 2
        cs, fcols = tuple(range(k)), tuple(range(k, dd))
        f: ConstF | ChannelF = ChannelF(fcols)
    else:
        cs = tuple(sorted(draw(st.lists(st.integers(0, dd - 1), min_size=1, unique=True))))
        F = _grid(draw, a, len(cs))
        f = ConstF(F)
    h = Grid.from_rows([[draw(VALUES) if (k == 0 or not lag0) else 0 for _ in cs] for k in range(a)], a, len(cs))
    hd = _dense(h)

    def oracle(u: State) -> State:
        y = _zeros(nn, dd)
        for t, c in enumerate(cs):
            for i in range(a):
                conv = sum((hd[k][t] * u[i - k][c] for k in range(i + 1)), Fraction(0))
                fv = u[i][f.cols[t]] if isinstance(f, ChannelF) else _dense(f.values)[i][t]
                y[i][c] = fv * conv
            for i in range(a, a + b):
                y[i][c] = u[i][c]
        return y

    return remember_rows(nn, dd, a, b, h, f, None if channel else cs), oracle


def _remember_channels(draw):
    """Proposition H.10 on blocks of channels, rows ``[0, m)``."""
    a, b, m = draw(st.integers(1, 2)), draw(st.integers(0, 2)), draw(st.integers(1, 3))
    nn = draw(st.integers(m, m + 1))
    channel = draw(st.booleans())
    dd = a + b + (a if channel else draw(st.integers(0, 1)))
    f: ConstF | ChannelF = ChannelF(tuple(range(a + b, a + b + a))) if channel else ConstF(_grid(draw, m, a))
    if channel and draw(st.booleans()) and a == 2:
        f = ChannelF((a + b + 1, a + b))  # not consecutive: the hand-written layer
    h = _grid(draw, m, a)
    hd = _dense(h)

    def oracle(u: State) -> State:
        y = _zeros(nn, dd)
        for i in range(m):
            for t in range(a):
                conv = sum((hd[k][t] * u[i - k][t] for k in range(i + 1)), Fraction(0))
                fv = u[i][f.cols[t]] if isinstance(f, ChannelF) else _dense(f.values)[i][t]
                y[i][t] = fv * conv
            for c in range(a, a + b):
                y[i][c] = u[i][c]
        return y

    return remember_channels(nn, dd, a, b, h, f, m), oracle


def _pad(draw):
    """Padding (Lemma H.11's companion): the fragment on the top-left block, 0 elsewhere."""
    inner, oracle = draw(st.sampled_from([_convolution, _shift_up, _move_rows, _fixed_gate]))(draw)
    nn, dd = inner.inner_n, inner.inner_d
    NN = draw(st.integers(nn, 2 * nn + 1))
    DD = draw(st.integers(dd, dd + 1))
    try:
        frag = pad(inner, NN, DD)
    except IRError as e:
        assert "wraps modulo N" in str(e) and NN < 2 * nn - 1
        frag = pad(inner, 2 * nn - 1 if nn > 1 else NN, DD)
        NN = frag.inner_n

    def big(u: State) -> State:
        small = oracle([row[:dd] for row in u[:nn]])
        return [[small[i][j] if i < nn and j < dd else Fraction(0) for j in range(DD)] for i in range(NN)]

    return frag, big


def _compose(draw):
    """Lemma H.11: ``compose(A, B)`` computes ``B ∘ A`` (B with the full entry interface)."""
    A, fa = draw(st.sampled_from([_shift_down, _move_rows, _running_add, _affine_map, _remember_channels]))(draw)
    nn, dd = A.inner_n, A.inner_d
    choice = draw(st.integers(0, 2))
    if choice == 0:
        s = draw(st.integers(-nn, nn))
        B, fb = prim.cyclic_shift(nn, dd, s), (lambda u: [[u[(i - s) % nn][j] for j in range(dd)] for i in range(nn)])
    elif choice == 1:
        h = _grid(draw, nn, dd)
        hd = _dense(h)
        B, fb = prim.convolution(h), (lambda u: [[_conv(hd, u, i, j, False) for j in range(dd)] for i in range(nn)])
    else:
        W = _grid(draw, dd, dd)
        Wd = _dense(W)
        B, fb = prim.linear_map(W, nn), (lambda u: [[sum((u[i][p] * Wd[p][q] for p in range(dd)), Fraction(0)) for q in range(dd)] for i in range(nn)])
    return compose(A, B), lambda u: fb(fa(u))


BUILDERS = {
    "linear_map": _linear_map,
    "identity": _identity,
    "affine_map": _affine_map,
    "convolution": _convolution,
    "fixed_gate": _fixed_gate,
    "constant": _constant,
    "shift_down": _shift_down,
    "shift_up": _shift_up,
    "cyclic_shift": _cyclic_shift,
    "running_add": _running_add,
    "move_rows": _move_rows,
    "move_cols": _move_cols,
    "rows_to_channels": _rows_to_channels,
    "channels_to_rows": _channels_to_rows,
    "remember_rows": _remember_rows,
    "remember_channels": _remember_channels,
    "pad": _pad,
    "compose": _compose,
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@FAST
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_builder_computes_what_its_docstring_states(name, data, seed):
    frag, oracle = BUILDERS[name](data.draw)
    check_fragment(frag, oracle, seed)


def test_generic_layer_spec_is_the_layer_formula_at_random_weights():
    """``generic_layer``'s every weight is a symbol; substituted with random values, model and spec
    agree with the in-test layer formula."""
    rng = random.Random(3)
    for mode in ("causal", "cyclic"):
        frag = prim.generic_layer(2, 2, mode)
        (layer,) = frag.layers
        vals = {name: Fraction(rng.randint(-5, 5), rng.choice((1, 2))) for name in sorted(layer_params(layer))}
        concrete = [[[_subs(v, vals) for v in row] for row in g.to_rows()] for g in (layer.W, layer.b1, layer.h, layer.b2)]
        W, b1, h, b2 = concrete
        u = _rand_state(rng, 2, 2)
        want = [[(sum((u[i][p] * W[p][q] for p in range(2)), Fraction(0)) + b1[i][q]) * (_conv(h, u, i, q, mode == "cyclic") + b2[i][q])
                 for q in range(2)] for i in range(2)]
        spec = frag.spec().circuit
        nodes = list(itertools.chain.from_iterable(u))
        for g in spec.gates:
            if g.op is Op.CONST:
                nodes.append(_subs(g.coeffs[0], vals))
            elif g.op is Op.LIN:
                nodes.append(sum(_subs(k, vals) * nodes[a] for k, a in zip(g.coeffs, g.args, strict=True)))
            else:
                nodes.append(nodes[g.args[0]] * nodes[g.args[1]])
        got = [nodes[o] for o in spec.outputs]
        assert [got[0:2], got[2:4]] == want


def layer_params(layer) -> set[str]:
    out: set[str] = set()
    for _, g in layer.grids():
        for row in g.to_rows():
            for v in row:
                if hasattr(v, "terms"):
                    out |= {name for mono, _ in v.terms for name, _ in mono}
    return out


def _subs(v, vals: dict[str, Fraction]) -> Fraction:
    if not hasattr(v, "terms"):
        return Fraction(v)
    total = Fraction(0)
    for mono, c in v.terms:
        term = Fraction(c)
        for name, e in mono:
            term *= vals[name] ** e
        total += term
    return total


# ---- the planted bug -----------------------------------------------------------------------


def test_the_oracle_catches_a_planted_bug(monkeypatch):
    """``fixed_gate`` patched to read the filter ``e_1`` instead of ``e_0`` (``y[i] = B[i]·u[i−1]``):
    the in-test interpreter disagrees with the docstring's ``B ⊙ u``, and ``verify`` refutes the
    unchanged spec against the planted model."""
    B = Grid.from_rows([[1, 2], [3, 4], [5, 6]])
    Bd = _dense(B)

    def oracle(u: State) -> State:
        return [[Bd[i][j] * u[i][j] for j in range(2)] for i in range(3)]

    check_fragment(prim.fixed_gate(B), oracle)  # the real builder passes
    real = prim.impulse
    monkeypatch.setattr(prim, "impulse", lambda nn, dd, lag, cols=None: real(nn, dd, lag + 1, cols))
    planted = prim.fixed_gate(B)
    with pytest.raises(AssertionError, match="model disagrees with the oracle"):
        check_fragment(planted, oracle)
    circuit, model, _ = standalone(planted)
    assert sv.verify(circuit, model).refuted


def test_the_oracle_catches_a_planted_spec_bug(monkeypatch):
    """``conv_terms`` (the spec side of ``convolution``) patched to drop the wrap-around terms of a
    cyclic filter: the layers are unchanged, the in-test gate interpreter disagrees with ``h ⊛ u``."""
    h = Grid.from_rows([[1], [2], [3]])
    hd = _dense(h)

    def oracle(u: State) -> State:
        return [[_conv(hd, u, i, 0, True)] for i in range(3)]

    check_fragment(prim.convolution(h, "cyclic"), oracle)
    real = prim.conv_terms
    monkeypatch.setattr(prim, "conv_terms", lambda hh, i, j, mode: [(c, r) for c, r in real(hh, i, j, mode) if r <= i])
    with pytest.raises(AssertionError, match="spec disagrees with the oracle"):
        check_fragment(prim.convolution(h, "cyclic"), oracle)


# ---- adversarial arguments ----------------------------------------------------------------

I2 = Grid.identity(2)
I1 = Grid.identity(1)

ADVERSARIAL = [
    (lambda: prim.identity(0, 1), ShapeError, "positive int inner_n"),
    (lambda: prim.identity(2, -1), ShapeError, "positive int inner_d"),
    (lambda: prim.identity(True, 1), ShapeError, "positive int inner_n"),
    (lambda: prim.identity(2.0, 1), ShapeError, "positive int inner_n"),
    (lambda: prim.linear_map(Grid.zeros(2, 3), 2), ShapeError, "expected shape 2×2"),
    (lambda: prim.linear_map([[1]], 2), IRError, "expected a Grid"),
    (lambda: prim.affine_map(I2, 2, rows=[True]), ShapeError, "affine_map rows: expected a list of ints"),
    (lambda: prim.affine_map(I2, 2, rows=[0.5]), ShapeError, "affine_map rows: expected a list of ints"),
    (lambda: prim.affine_map(I2, 2, rows=[-1]), ShapeError, r"rows in \[0, 2\)"),
    (lambda: prim.affine_map(I2, 2, Grid.from_rows([[0, 0], [1, 0]]), rows=[0]), IRError, "outside the rows"),
    (lambda: prim.convolution(Grid.zeros(0, 1)), ShapeError, "positive int h.rows"),
    (lambda: prim.shift_down(3, 1, 3), IRError, "0 ≤ s < N' = 3"),
    (lambda: prim.shift_down(3, 1, -1), IRError, "0 ≤ s < N' = 3"),
    (lambda: prim.shift_down(3, 1, True), IRError, "expected an int shift s"),
    (lambda: prim.shift_up(3, 1, 10**30), IRError, "0 ≤ s < N' = 3"),
    (lambda: prim.cyclic_shift(3, 1, 1.0), IRError, "expected an int shift"),
    (lambda: prim.running_add(True, 3, 1), ShapeError, "running_add: expected 1 ≤ n"),
    (lambda: prim.running_add(0, 3, 1), ShapeError, "running_add: expected 1 ≤ n"),
    (lambda: prim.running_add(1.0, 3, 1), ShapeError, "running_add: expected 1 ≤ n"),
    (lambda: prim.move_rows(4, 1, 0, 1, True), ShapeError, "move_rows: expected an int count"),
    (lambda: prim.move_rows(4, 1, 0, 1, 1.0), ShapeError, "move_rows: expected an int count"),
    (lambda: prim.move_rows(4, 1, 0.5, 1, 1), ShapeError, "move_rows: expected an int src"),
    (lambda: prim.move_rows(4, 1, "0", 1, 1), ShapeError, "move_rows: expected an int src"),
    (lambda: prim.move_rows(4, 1, 0, 1, 0), ShapeError, "do not fit"),
    (lambda: prim.move_rows(4, 1, 0, -1, 1), ShapeError, "do not fit"),
    (lambda: prim.move_rows(4, 1, 0, 1, 1, cols=[]), ShapeError, "move_rows cols: expected a non-empty list"),
    (lambda: prim.move_rows(4, 2, 0, 1, 1, cols=[True]), ShapeError, "move_rows cols: expected a non-empty list"),
    (lambda: prim.move_rows(4, 2, 0, 1, 1, cols=[0.0]), ShapeError, "move_rows cols: expected a non-empty list"),
    (lambda: prim.move_cols(2, 4, 0, 1.0, 1), ShapeError, "move_cols: expected an int dst"),
    (lambda: prim.move_cols(2, 4, 0, 1, 1, rows=[]), ShapeError, "move_cols rows: expected a non-empty list"),
    (lambda: prim.move_cols(2, 4, 0, 1, 1, rows=[True]), ShapeError, "move_cols rows: expected a non-empty list"),
    (lambda: prim.move_cols(2, 4, 0, 1, 10**30), ShapeError, "do not fit"),
    (lambda: rows_to_channels(2.0, 1, 2, 2), ShapeError, "rows_to_channels: expected an int n"),
    (lambda: rows_to_channels(True, 1, 2, 2), ShapeError, "rows_to_channels: expected an int n"),
    (lambda: rows_to_channels("2", 1, 2, 2), ShapeError, "rows_to_channels: expected an int n"),
    (lambda: rows_to_channels(0, 1, 2, 2), ShapeError, "needs N' ≥ n"),
    (lambda: channels_to_rows(3.0, 2, 2, 4), ShapeError, "channels_to_rows: expected an int m"),
    (lambda: channels_to_rows(True, 1, 1, 1), ShapeError, "channels_to_rows: expected an int m"),
    (lambda: channels_to_rows(-1, 1, 1, 1), ShapeError, "needs d' ≥ max"),
    (lambda: remember_rows(4, 1, True, 0, I1, ConstF(I1)), ShapeError, "remember_rows: expected a ≥ 1"),
    (lambda: remember_rows(4, 1, 1.0, 0, I1, ConstF(I1)), ShapeError, "remember_rows: expected a ≥ 1"),
    (lambda: remember_rows(4, 1, 1, -1, I1, ConstF(I1)), ShapeError, "remember_rows: expected a ≥ 1"),
    (lambda: remember_rows(4, 1, 3, 2, Grid.zeros(3, 1), ConstF(Grid.zeros(3, 1))), ShapeError, "a \\+ b ≤ N' = 4"),
    (lambda: remember_rows(4, 2, 1, 0, I1, ConstF(I1), cols=[True]), ShapeError, "remember_rows cols"),
    (lambda: remember_rows(4, 2, 1, 0, I1, ConstF(I1), cols=[]), ShapeError, "remember_rows cols"),
    (lambda: remember_rows(4, 2, 1, 0, I2, ConstF(I1), cols=[0, 0]), ShapeError, "remember_rows cols"),
    (lambda: remember_rows(2, 3, 1, 0, I1, ChannelF((True,)), cols=[0]), ShapeError, "expected int channels"),
    (lambda: remember_rows(2, 2, 1, 0, I1, ChannelF((0,)), cols=[0]), IRError, "also used by the x/r blocks"),
    (lambda: remember_rows(3, 1, 1, 1, Grid.from_rows([[1], [1]]), ConstF(I1)), ShapeError, "expected an 1×1 filter"),
    (lambda: remember_rows(3, 1, 2, 1, Grid.from_rows([[0], [1]]), ConstF(Grid.zeros(2, 1))), ShapeError, "N' ≥ 2\\(a \\+ b\\)"),
    (lambda: remember_rows(4, 1, 1, 0, I1, "f"), IRError, "expected ConstF or ChannelF"),
    (lambda: remember_channels(2, 2, 1, 0, I1, ConstF(I1), m=True), ShapeError, "expected 1 ≤ m"),
    (lambda: remember_channels(2, 2, 1, 0, I1, ConstF(I1), m=3), ShapeError, "expected 1 ≤ m"),
    (lambda: remember_channels(2, 3, 1, 0, I1, ChannelF((True,))), ShapeError, "expected int channels"),
    (lambda: remember_channels(2, 3, 1, 0, I1, ChannelF((2.0,))), ShapeError, "expected int channels"),
    (lambda: remember_channels(2, 3, 1, 0, I1, ChannelF((2, 2))), ShapeError, "one f channel per x channel"),
    (lambda: remember_channels(2, 3, 1, 1, I1, ChannelF((1,))), IRError, "also used by the x/r blocks"),
    (lambda: remember_channels(2, 3, 1, 0, I1, ChannelF((5,))), ShapeError, r"in \[0, 3\)"),
    (lambda: remember_channels(2, 2, 2, 1, I2, ConstF(I2)), ShapeError, "a \\+ b ≤ d' = 2"),
    (lambda: compose(), IRError, "at least one fragment"),
    (lambda: compose(prim.identity(2, 1), 1), IRError, "argument 1 is a int"),
    (lambda: compose(prim.constant(Grid.from_rows([[1], [1], [1]])), remember_rows(3, 1, 1, 0, I1, ConstF(I1))),
     IRError, r"may leave cells \(1, 0\), \(2, 0\) nonzero"),
    (lambda: pad(prim.identity(3, 2), 2, 2), ShapeError, "cannot shrink"),
    (lambda: pad(prim.identity(1, 1), 2.0, 2), ShapeError, r"pad: expected a positive int inner_n, found 2\.0"),
    (lambda: pad(prim.cyclic_shift(3, 1, 1), 4, 1), IRError, "wraps modulo N = 3"),
]


@pytest.mark.parametrize("build,err,match", ADVERSARIAL, ids=[f"adv{k}" for k in range(len(ADVERSARIAL))])
def test_adversarial_arguments_raise_a_clear_error(build, err, match):
    with pytest.raises(err, match=match) as info:
        build()
    assert isinstance(info.value, SymverifyError)


# ---- the circuit library ------------------------------------------------------------------


def _rand_inputs(rng: random.Random, k: int) -> list[Fraction]:
    return [Fraction(rng.randint(-7, 7), rng.choice((1, 2, 5))) for _ in range(k)]


@FAST
@given(n=st.integers(1, 3), d=st.integers(1, 3), depth=st.integers(1, 5), extra=st.integers(0, 6),
       mul=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 999), outs=st.integers(0, 9), consts=st.booleans())
def test_random_circuit_has_its_stated_shape(n, d, depth, extra, mul, seed, outs, consts):
    """``random_circuit``: ``n·d`` inputs, ``size`` non-constant gates, exactly ``depth`` levels (its
    deepest output), the stated output count; no MUL gate when ``mul_fraction = 0`` (then degree ≤ 1)."""
    m = min(outs, n * d)
    c = library.random_circuit(n, d, depth + extra, depth, mul, seed=seed, num_outputs=m, consts=consts)
    assert (c.n, c.d, c.num_inputs) == (n, d, n * d)
    assert sum(1 for g in c.gates if g.op is not Op.CONST) == depth + extra
    assert consts or all(g.op is not Op.CONST for g in c.gates)
    assert len(c.outputs) == m
    lv = circuit_levels(c)
    assert m == 0 or max(lv[o] for o in c.outputs) == depth
    assert set(range(1, depth + 1)) <= {lv[k] for k in range(c.num_inputs, c.num_nodes)}
    if mul == 0.0:
        assert all(g.op is not Op.MUL for g in c.gates)
        assert c.is_linear() == (not any(g.op is Op.CONST for g in c.gates))  # constants make it affine
    if mul == 1.0 and not consts:
        assert all(g.op is Op.MUL for g in c.gates)
    # default output count
    assert len(library.random_circuit(n, d, depth, depth, seed=seed).outputs) == min(n * d, 4)


@FAST
@given(n=st.integers(1, 3), d=st.integers(1, 2), depth=st.integers(1, 4), seed=st.integers(0, 999))
def test_random_linear_circuit_is_linear_by_evaluation(n, d, depth, seed):
    """``random_linear_circuit`` computes a linear map: ``f(a·x + y) = a·f(x) + f(y)`` (in-test evaluation)."""
    c = library.random_linear_circuit(n, d, depth + 2, depth, seed=seed)
    rng = random.Random(seed)
    x, y = _rand_inputs(rng, n * d), _rand_inputs(rng, n * d)
    a = Fraction(rng.randint(2, 9), 3)
    fx, fy = run_circuit(c, x), run_circuit(c, y)
    assert run_circuit(c, [a * p + q for p, q in zip(x, y, strict=True)]) == [a * p + q for p, q in zip(fx, fy, strict=True)]


@FAST
@given(w=st.integers(1, 8), depth=st.integers(1, 4), wiring=st.sampled_from(library.WIRINGS), seed=st.integers(0, 999),
       mul=st.sampled_from([0.0, 0.5, 1.0]), shuffle=st.booleans())
def test_wired_circuit_has_its_stated_shape(w, depth, wiring, seed, mul, shuffle):
    """``wired_circuit``: ``n·d = w`` with ``d`` the first of 4, 2, 1 dividing ``w``, ``depth`` levels of
    ``w`` gates, each reading two nodes of the level below, outputs = the last level (in order or
    permuted); LIN gates are ``a + c·b`` with ``c ∈ {1, 2, −1}``."""
    c = library.wired_circuit(w, depth, wiring, seed=seed, mul_fraction=mul, shuffle_outputs=shuffle)
    d = next(k for k in (4, 2, 1) if w % k == 0)
    assert (c.n, c.d) == (w // d, d)
    assert len(c.gates) == w * depth
    for k, g in enumerate(c.gates):
        level = k // w
        lo, hi = (0, w) if level == 0 else (w + (level - 1) * w, w + level * w)
        assert all(lo <= a < hi for a in g.args), (wiring, k, g)
        if g.op is Op.LIN:
            assert g.coeffs[0] == 1 and g.coeffs[1] in (1, 2, -1)
        if mul == 0.0:
            assert g.op is Op.LIN
        if mul == 1.0:
            assert g.op is Op.MUL
    last = list(range(w + (depth - 1) * w, w + depth * w))
    assert (sorted(c.outputs) if shuffle else list(c.outputs)) == last
    lv = circuit_levels(c)
    assert {lv[o] for o in c.outputs} == {depth}
    if wiring == "reversal":
        assert all(g.args[0] - (w + (k // w - 1) * w if k >= w else 0) == w - 1 - k % w for k, g in enumerate(c.gates))


def sympy_degrees(c: Circuit) -> list[int]:
    """Total degree of each output, by expanding the circuit over sympy symbols in this file."""
    xs = sympy.symbols(f"x0:{c.num_inputs}")
    vals: list = list(xs)
    for g in c.gates:
        if g.op is Op.CONST:
            vals.append(sympy.Rational(str(g.coeffs[0])))
        elif g.op is Op.LIN:
            vals.append(sympy.expand(sum(sympy.Rational(str(k)) * vals[a] for k, a in zip(g.coeffs, g.args, strict=True))))
        else:
            vals.append(sympy.expand(vals[g.args[0]] * vals[g.args[1]]))
    return [sympy.Poly(vals[o], *xs).total_degree() if vals[o] != 0 else -1 for o in c.outputs]


@FAST
@given(n=st.integers(1, 2), d=st.integers(1, 2), depth=st.integers(1, 4), seed=st.integers(0, 999))
def test_random_circuit_stats_are_sound_for_its_polynomials(n, d, depth, seed):
    """``stats``: the stated depth and size are the in-test ones, and the degree bound is at least
    the degree of every output polynomial (expanded here); both are at most ``2^depth``."""
    from symverify.kernel.ir.analysis import stats

    c = library.random_circuit(n, d, depth + 2, depth, 0.5, seed=seed)
    st_ = stats(c)
    assert (st_.depth, st_.size) == (depth, depth + 2)
    degs = sympy_degrees(c)
    assert max(degs) <= st_.degree_bound <= 2**depth


def _sylvester(N: int) -> list[list[int]]:
    return [[(-1) ** bin(i & j).count("1") for j in range(N)] for i in range(N)]


NAMED = [
    ("walsh_hadamard", lambda: library.walsh_hadamard(4, 2), lambda x: [sum(h * v for h, v in zip(row, x, strict=True)) for row in _sylvester(8)], 3),
    ("walsh_hadamard_1", lambda: library.walsh_hadamard(1), lambda x: list(x), 0),
    ("poly_mult", lambda: library.poly_mult(3),
     lambda x: [sum(x[i] * x[3 + k - i] for i in range(3) if 0 <= k - i < 3) for k in range(5)], 1 + math.ceil(math.log2(3))),
    ("prefix_sums", lambda: library.prefix_sums(3, 2), lambda x: [sum(x[: k + 1]) for k in range(6)], math.ceil(math.log2(6))),
    ("product_tree", lambda: library.product_tree(5), lambda x: [math.prod(x)], math.ceil(math.log2(5))),
    ("matvec_bilinear", lambda: library.matvec_bilinear(3),
     lambda x: [sum(x[i * 3 + j] * x[9 + j] for j in range(3)) for i in range(3)], 1 + math.ceil(math.log2(3))),
    ("elementary_symmetric", lambda: library.elementary_symmetric(4),
     lambda x: [sum((math.prod(s) for s in itertools.combinations(x, j)), Fraction(0)) for j in range(1, 5)], None),
    ("elementary_symmetric_k2", lambda: library.elementary_symmetric(2, 2, d=2),
     lambda x: [sum(x), sum((a * b for a, b in itertools.combinations(x, 2)), Fraction(0))], None),
    ("determinant", lambda: library.determinant(3),
     lambda x: [Fraction(str(sympy.Matrix(3, 3, [sympy.Rational(v.numerator, v.denominator) for v in x]).det()))], None),
    ("matvec", lambda: library.matvec([[1, 2, 0], [0, Fraction(1, 2), -1]], 3),
     lambda x: [x[0] + 2 * x[1], Fraction(1, 2) * x[1] - x[2]], None),
]


DEGREES = {"walsh_hadamard": [1] * 8, "poly_mult": [2] * 5, "prefix_sums": [1] * 6, "product_tree": [5], "matvec_bilinear": [2] * 3,
           "elementary_symmetric": [1, 2, 3, 4], "elementary_symmetric_k2": [1, 2], "determinant": [3], "matvec": [1, 1]}


@pytest.mark.parametrize("name,build,oracle,depth", NAMED, ids=[c[0] for c in NAMED])
def test_named_circuit_computes_its_stated_polynomials(name, build, oracle, depth):
    c = build()
    rng = random.Random(7)
    for _ in range(4):
        x = _rand_inputs(rng, c.num_inputs)
        assert run_circuit(c, x) == oracle(x), name
    if depth is not None:
        lv = circuit_levels(c)
        assert max(lv[o] for o in c.outputs) == depth
    if name in DEGREES:
        assert sympy_degrees(c) == DEGREES[name]
        assert c.is_linear() == (max(DEGREES[name]) == 1)


def test_library_rejects_bad_arguments():
    for build, err, match in [
        (lambda: library.walsh_hadamard(3), IRError, "power of two"),
        (lambda: library.poly_mult(0), IRError, "m ≥ 1"),
        (lambda: library.elementary_symmetric(2, 3), IRError, "1 ≤ k ≤ 2"),
        (lambda: library.determinant(6), IRError, "1 ≤ m ≤ 5"),
        (lambda: library.random_circuit(1, 1, 1, 2), IRError, "size ≥ depth"),
        (lambda: library.random_circuit(1, 2, 2, 1, num_outputs=3), IRError, "num_outputs ≤ n·d = 2"),
        (lambda: library.wired_circuit(4, 1, "spiral"), UsageError, "expected one of"),
        (lambda: library.wired_circuit(0, 1, "below"), UsageError, "w ≥ 1"),
        (lambda: library.wired_circuit(4, 1, "below", mul_fraction=1.5), UsageError, "mul_fraction"),
        (lambda: library.wired_circuit(4, 1, "below", d=3), UsageError, "positive divisor"),
    ]:
        with pytest.raises(err, match=match):
            build()
