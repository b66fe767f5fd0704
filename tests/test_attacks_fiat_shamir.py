"""Attacks on the Fiat–Shamir corner of the randomized method (docs/trusted-base.md, "The trial points").

With the default public seed the trial primes and points are derived from a transcript of both
sides' encodings (:mod:`symverify.kernel.provers.fingerprint`) and the seed
(:mod:`symverify.kernel.provers.challenge`). A false ``proved`` needs two sides whose exact
evaluations differ but which share the points: an encoding that forgets something the evaluation
reads, a transcript whose parts run into each other, a stream that is not uniform, or a change of
the side after it was hashed. Every test here states one of these and tries to break it; the
exact evaluation they compare with is an independent Fraction interpreter written from
docs/theory.md §1.2 (models), §2 (circuits) and §3 (kaleidoscopes), not the package's.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import hashlib
import pickle
import random
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from fingerprint_decode import decode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError, SymverifyError
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, sym
from symverify.kernel.provers import sides as sides_mod
from symverify.kernel.provers.challenge import ChallengeError, Stream, Transcript, _part
from symverify.kernel.provers.fingerprint import EncodingError, encode, fingerprint
from symverify.kernel.provers.randomized import transcript
from symverify.kernel.provers.sides import as_side
from symverify.kernel.semantics.rings import FractionRing

# ---- an independent exact evaluator (docs/theory.md §1.2, §2, §3) -----------------------------------

Env = dict[str, Fraction]


def _value(x: Any, env: Env) -> Fraction:
    """A scalar's value with every parameter replaced by ``env[name]``."""
    if isinstance(x, Sym):
        total = Fraction(0)
        for mono, coeff in x.terms:
            term = Fraction(coeff)
            for name, e in mono:
                term *= env[name] ** e
            total += term
        return total
    assert type(x) in (int, Fraction), type(x)
    return Fraction(x)


def _dense(g: Grid, env: Env) -> list[list[Fraction]]:
    """``fill`` everywhere, then every rectangle painted in order (later ones win)."""
    out = [[_value(g.fill, env)] * g.cols for _ in range(g.rows)]
    for r0, r1, c0, c1, v in g.rects:
        val = _value(v, env)
        for i in range(r0, r1):
            for j in range(c0, c1):
                out[i][j] = val
    return out


def _eval_circuit(c: Circuit, u: list[list[Fraction]], env: Env) -> list[list[Fraction]]:
    x = [v for row in u for v in row]
    for g in c.gates:
        if g.op is Op.CONST:
            x.append(_value(g.coeffs[0], env))
        elif g.op is Op.LIN:
            x.append(_value(g.coeffs[0], env) * x[g.args[0]] + _value(g.coeffs[1], env) * x[g.args[1]])
        else:
            x.append(x[g.args[0]] * x[g.args[1]])
    y = [x[o] for o in c.outputs] + [Fraction(0)] * (c.n * c.d - len(c.outputs))
    return [y[i * c.d : (i + 1) * c.d] for i in range(c.n)]


def _eval_model(m: Model, u: list[list[Fraction]], env: Env) -> list[list[Fraction]]:
    nn, dd = m.inner_n, m.inner_d
    s = [[Fraction(0)] * dd for _ in range(nn)]
    for i in range(m.n):
        for j in range(m.d):
            s[i][j] = u[i][j]
    for layer in m.layers:
        W, b1, h, b2 = (_dense(g, env) for g in (layer.W, layer.b1, layer.h, layer.b2))
        nxt = [[Fraction(0)] * dd for _ in range(nn)]
        for i in range(nn):
            for j in range(dd):
                proj = sum((s[i][k] * W[k][j] for k in range(dd)), Fraction(0)) + b1[i][j]
                if layer.mode is Mode.CAUSAL:
                    conv = sum((h[k][j] * s[i - k][j] for k in range(i + 1)), Fraction(0))
                else:
                    conv = sum((h[k][j] * s[(i - k) % nn][j] for k in range(nn)), Fraction(0))
                nxt[i][j] = proj * (conv + b2[i][j])
        s = nxt
    return [row[: m.d] for row in s[: m.n]]


def _eval_kaleidoscope(k: Kaleidoscope, u: list[list[Fraction]], env: Env) -> list[list[Fraction]]:
    flat = [v for row in u for v in row]
    x = flat + [Fraction(0)] * (k.size - len(flat))
    for group in k.groups:
        for f in group.factors:
            s, out = f.stride, list(x)
            for m in range(f.size // 2):
                p = 2 * s * (m // s) + m % s
                a, b = x[p], x[p + s]
                out[p] = _value(f.d1[m], env) * a + _value(f.d2[m], env) * b
                out[p + s] = _value(f.d3[m], env) * a + _value(f.d4[m], env) * b
            x = out
    d = len(u[0])
    return [x[i * d : (i + 1) * d] for i in range(len(u))]


def _params(obj: Any) -> set[str]:
    return set(as_side(obj).params())


def _shape(obj: Any) -> tuple[int, int]:
    return (obj.n, 1) if isinstance(obj, Kaleidoscope) else (obj.n, obj.d)


def exact(obj: Any, u: list[list[Fraction]], env: Env) -> list[list[Fraction]]:
    if isinstance(obj, Circuit):
        return _eval_circuit(obj, u, env)
    if isinstance(obj, Model):
        return _eval_model(obj, u, env)
    return _eval_kaleidoscope(obj, u, env)


def same_map(x: Any, y: Any, points: int = 4, seed: int = 1) -> bool:
    """Whether ``x`` and ``y`` agree (shape and values) at a few random rational points and
    parameter values: different maps of these small degrees differ at one of them."""
    if type(x) is not type(y) or _shape(x) != _shape(y):
        return False
    rng = random.Random(seed)
    names = sorted(_params(x) | _params(y))
    n, d = _shape(x)
    for _ in range(points):
        u = [[Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 97)) for _ in range(d)] for _ in range(n)]
        env = {name: Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 97)) for name in names}
        if exact(x, u, env) != exact(y, u, env):
            return False
    return True


def test_the_oracle_agrees_with_the_package_and_tells_maps_apart() -> None:
    """The oracle is the package's semantics: on a circuit, a model with both modes and a
    kaleidoscope it gives ``sv.evaluate``'s values, and it separates what differs."""
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.lin(2, Fraction(1, 3), 0, -2)), (3, 2))
    lay = [Layer(Grid.from_rows([[1, 2], [0, 1]]), Grid.full(3, 2, 1), Grid.from_rows([[1, 0], [2, 1], [0, 3]]),
                 Grid.full(3, 2, Fraction(1, 2)), mode) for mode in (Mode.CAUSAL, Mode.CYCLIC)]
    m = Model(2, 2, 3, 2, tuple(lay))
    k = Kaleidoscope(3, 4, (BBStar(4, tuple(ButterflyFactor(4, s, (1, 2), (3, 0), (0, 5), (1, -1))
                                           for s in bbstar_strides(4))),))
    for obj, u in ((c, [[3, 5]]), (m, [[1, 2], [3, -1]]), (k, [[1], [2], [3]])):
        fu = [[Fraction(v) for v in row] for row in u]
        assert [[Fraction(v) for v in row] for row in as_side(obj).evaluate(fu, FractionRing())] == exact(obj, fu, {})
    assert not same_map(m, Model(2, 2, 3, 2, (lay[0], lay[0])))  # the modes differ here
    assert same_map(m, Model(2, 2, 3, 2, tuple(lay), "renamed"))


# ---- 1. what the evaluation reads and the encoding does not ----------------------------------------


def _enc_or_same(x: Any, y: Any) -> None:
    """The rule every field must keep: a change shows in the encoding, or the map is unchanged."""
    assert encode(x) != encode(y) or same_map(x, y), (x, y)
    assert (encode(x) == encode(y)) == (fingerprint(x) == fingerprint(y))


a, b = sym("a"), sym("b")
CIRCUIT = Circuit(2, 1, (Gate.mul(0, 1), Gate.lin(2, 3 * a, 0, Fraction(-1, 2)), Gate.const(7)), (3, 4), "c")
GRID3 = Grid(3, 2, Fraction(1, 3), ((0, 2, 0, 1, 2), (1, 3, 0, 2, a)))
LAYER = Layer(Grid.from_rows([[1, 2], [0, b]]), GRID3, Grid.from_rows([[1, 0], [1, 1], [2, 0]]), Grid.full(3, 2, 1))
MODEL = Model(2, 1, 3, 2, (LAYER, LAYER), "m")
DIAGS = [((1, a), (2, 0), (0, 3), (1, 1)), ((2, 1), (0, 1), (1, 0), (1, 3)), ((1, 1), (1, -1), (0, 2), (5, 1)),
         ((3, 0), (1, 2), (2, 1), (0, 1))]
FACTORS = tuple(ButterflyFactor(4, s, *diags) for s, diags in zip(bbstar_strides(4), DIAGS))
# the stride-2 and stride-1 diagonals swapped: what a change of stride can be inside a valid BB*
SWAPPED = tuple(ButterflyFactor(4, s, *diags) for s, diags in zip(bbstar_strides(4), (DIAGS[1], DIAGS[0], DIAGS[3], DIAGS[2])))
KAL = Kaleidoscope(3, 4, (BBStar(4, FACTORS),))

# (class, field) -> a side built with that field changed to another valid value, and the original side
MUTATIONS: dict[tuple[type, str], Any] = {
    (Circuit, "n"): lambda: (CIRCUIT, dataclasses.replace(CIRCUIT, n=1, d=2)),
    (Circuit, "d"): lambda: (Circuit(1, 2, (Gate.mul(0, 1),), (2,)), Circuit(2, 1, (Gate.mul(0, 1),), (2,))),
    (Circuit, "gates"): lambda: (CIRCUIT, dataclasses.replace(CIRCUIT, gates=(*CIRCUIT.gates[:2], Gate.const(8)))),
    (Circuit, "outputs"): lambda: (CIRCUIT, dataclasses.replace(CIRCUIT, outputs=(4, 3))),
    (Circuit, "name"): lambda: (CIRCUIT, dataclasses.replace(CIRCUIT, name="other")),
    (Gate, "op"): lambda: (Circuit(1, 2, (Gate(Op.MUL, (0, 1)),), (2,)), Circuit(1, 2, (Gate(Op.LIN, (0, 1), (1, 1)),), (2,))),
    (Gate, "args"): lambda: (Circuit(1, 2, (Gate.lin(0, 2, 1, 3),), (2,)), Circuit(1, 2, (Gate.lin(1, 2, 0, 3),), (2,))),
    (Gate, "coeffs"): lambda: (Circuit(1, 2, (Gate.lin(0, 2, 1, 3),), (2,)), Circuit(1, 2, (Gate.lin(0, 3, 1, 2),), (2,))),
    (Model, "n"): lambda: (Model(1, 1, 2, 1, (LAYER1,)), Model(2, 1, 2, 1, (LAYER1,))),
    (Model, "d"): lambda: (Model(1, 1, 1, 2, (LAYER2,)), Model(1, 2, 1, 2, (LAYER2,))),
    (Model, "inner_n"): lambda: (Model(1, 1, 2, 1, (LAYER1,)), Model(1, 1, 3, 1, (Layer.make(3, 1, W=Grid.full(1, 1, 2), b2=Grid.full(3, 1, 1)),))),
    (Model, "inner_d"): lambda: (Model(1, 1, 1, 2, (LAYER2,)), Model(1, 1, 1, 3, (Layer.make(1, 3, W=Grid.full(3, 3, 1), b2=Grid.full(1, 3, 1)),))),
    (Model, "layers"): lambda: (MODEL, dataclasses.replace(MODEL, layers=(LAYER,))),
    (Model, "name"): lambda: (MODEL, dataclasses.replace(MODEL, name="")),
    (Layer, "W"): lambda: (MODEL, _with_layer(dataclasses.replace(LAYER, W=Grid.from_rows([[1, 2], [1, b]])))),
    (Layer, "b1"): lambda: (MODEL, _with_layer(dataclasses.replace(LAYER, b1=Grid.full(3, 2, 1)))),
    (Layer, "h"): lambda: (MODEL, _with_layer(dataclasses.replace(LAYER, h=Grid.from_rows([[1, 0], [0, 1], [2, 0]])))),
    (Layer, "b2"): lambda: (MODEL, _with_layer(dataclasses.replace(LAYER, b2=Grid.full(3, 2, 2)))),
    (Layer, "mode"): lambda: (MODEL, _with_layer(dataclasses.replace(LAYER, mode=Mode.CYCLIC))),
    (Grid, "rows"): lambda: (Model(1, 1, 2, 1, (LAYER1,)), Model(1, 1, 3, 1, (Layer.make(3, 1, W=Grid.full(1, 1, 2), b2=Grid.full(3, 1, 1)),))),
    (Grid, "cols"): lambda: (Model(1, 1, 1, 2, (LAYER2,)), Model(1, 1, 1, 3, (Layer.make(1, 3, W=Grid.full(3, 3, 1), b2=Grid.full(1, 3, 1)),))),
    (Grid, "fill"): lambda: (MODEL, _with_layer(dataclasses.replace(LAYER, b1=dataclasses.replace(GRID3, fill=Fraction(2, 3))))),
    (Grid, "rects"): lambda: (MODEL, _with_layer(dataclasses.replace(LAYER, b1=dataclasses.replace(GRID3, rects=GRID3.rects[::-1])))),
    (Kaleidoscope, "n"): lambda: (KAL, Kaleidoscope(4, 4, KAL.groups)),
    (Kaleidoscope, "size"): lambda: (KAL, KAL.lift(8)),
    (Kaleidoscope, "groups"): lambda: (KAL, Kaleidoscope(3, 4, KAL.groups * 2)),
    (BBStar, "size"): lambda: (Kaleidoscope(2, 2, (BBStar.identity(2),)), Kaleidoscope(2, 4, (BBStar.identity(4),))),
    (BBStar, "factors"): lambda: (KAL, Kaleidoscope(3, 4, (BBStar(4, FACTORS[::-1]),))),
    (ButterflyFactor, "size"): lambda: (Kaleidoscope(2, 2, (BBStar(2, (ButterflyFactor(2, 1, (2,), (1,), (1,), (1,)),) * 2),)),
                                        Kaleidoscope(2, 4, (BBStar(4, tuple(ButterflyFactor(4, s, (2, 1), (1, 0), (1, 0), (1, 1))
                                                                            for s in bbstar_strides(4))),))),
    (ButterflyFactor, "stride"): lambda: (KAL, Kaleidoscope(3, 4, (BBStar(4, SWAPPED),))),
    **{(ButterflyFactor, f"d{i}"): (lambda i=i: (KAL, Kaleidoscope(3, 4, (BBStar(4, tuple(
        dataclasses.replace(f, **{f"d{i}": (5, 6)}) for f in FACTORS)),)))) for i in range(1, 5)},
    (Sym, "terms"): lambda: (Circuit(1, 1, (Gate.const(a),), (1,)), Circuit(1, 1, (Gate.const(a * a),), (1,))),
}
LAYER1 = Layer.make(2, 1, W=Grid.full(1, 1, 2), b2=Grid.full(2, 1, 1))
LAYER2 = Layer.make(1, 2, W=Grid.full(2, 2, 1), b2=Grid.full(1, 2, 1))


def _with_layer(layer: Layer) -> Model:
    return dataclasses.replace(MODEL, layers=(LAYER, layer))


IR_CLASSES = (Circuit, Gate, Model, Layer, Grid, Kaleidoscope, BBStar, ButterflyFactor, Sym)


def test_every_field_of_every_ir_class_has_a_mutation() -> None:
    """Introspection: a field added to an IR class must be added here (and to the encoding). Fields
    that no caller gives (``init=False``) are derived from the others (``ButterflyFactor.all_int``,
    its private plan cache) and take no part in ``==``: they are no content of their own."""
    fields = {(cls, f.name) for cls in IR_CLASSES for f in dataclasses.fields(cls) if f.init}
    assert fields == set(MUTATIONS)
    derived = {(cls.__name__, f.name) for cls in IR_CLASSES for f in dataclasses.fields(cls) if not f.init}
    assert derived == {("ButterflyFactor", "all_int"), ("ButterflyFactor", "_plan_cache")}
    assert all(not f.compare for cls in IR_CLASSES for f in dataclasses.fields(cls) if not f.init)
    assert set(CellArray.__slots__) == {"_hash", "_order", "cols", "extra", "rows", "vals"}  # mutated below


@pytest.mark.parametrize("key", sorted(MUTATIONS, key=lambda k: (k[0].__name__, k[1])), ids=lambda k: f"{k[0].__name__}.{k[1]}")
def test_a_changed_field_changes_the_encoding_or_nothing(key: tuple[type, str]) -> None:
    x, y = MUTATIONS[key]()
    _enc_or_same(x, y)
    if key[1] == "name":
        assert encode(x) == encode(y) and same_map(x, y)  # names are labels: not read, not encoded
    else:
        assert encode(x) != encode(y)


def test_the_mode_is_encoded_even_where_it_changes_nothing() -> None:
    """A layer whose ``h`` is an impulse at lag 0 reads the same in both modes; the encodings
    differ anyway (they describe different layers), and where the mode matters the maps differ."""
    flat = Layer.make(2, 1, W=Grid.full(1, 1, 1), b1=Grid.zeros(2, 1), h=Grid.from_rows([[1], [0]]))
    pair = [Model(2, 1, 2, 1, (dataclasses.replace(flat, mode=mode),)) for mode in Mode]
    assert same_map(*pair) and encode(pair[0]) != encode(pair[1])
    lag = [Model(2, 1, 2, 1, (dataclasses.replace(flat, h=Grid.from_rows([[0], [1]]), mode=mode),)) for mode in Mode]
    assert not same_map(*lag) and encode(lag[0]) != encode(lag[1])


@pytest.mark.parametrize("names", [("a", "b"), ("D1[3]", "D1[30]"), ("a", "a_"), ("I", "T"), ("S", "N"), ("x.y", "x_y"),
                                   ("F", "V"), ("a", "aa")])
def test_parameter_names_are_told_apart(names: tuple[str, str]) -> None:
    """Names equal to encoding tags, prefixes of each other or one character apart."""
    sides = [Circuit(1, 1, (Gate.lin(0, sym(n), 0, 0),), (1,)) for n in names]
    assert encode(sides[0]) != encode(sides[1]) and not same_map(*sides)
    both = Circuit(1, 1, (Gate.lin(0, sym(names[0]) * sym(names[1]) ** 2, 0, sym(names[1])),), (1,))
    assert decode(encode(both)) == both


@pytest.mark.parametrize("name", ["", "a ", " a", "a\x00", "a\x00b", "é", "ａ", "a\n", "1a", "a-b", "a;b", "T\x00\x00",
                                  "\ud800", "a\u200b"])
def test_names_that_are_no_identifier_are_refused(name: str) -> None:
    """Unicode look-alikes, NUL, separators and trailing spaces never reach the encoding."""
    with pytest.raises(IRError, match="identifier"):
        sym(name)
    with pytest.raises(IRError, match="identifier"):
        Sym(((((name, 1),), Fraction(1)),))


def test_grid_from_rows_arrays_and_rectangles_encode_by_their_cells() -> None:
    """One matrix built from rows, from a float array, from cells and from a cell array with an
    exact cell: the same cells in the same order give the same bytes; a different matrix differs."""
    rows = [[Fraction(1, 2), 0, 3], [0, -2, 0]]
    built = [Grid.from_rows(rows), Grid.from_array(np.array([[0.5, 0.0, 3.0], [-0.0, -2.0, 0.0]])),
             Grid.from_cells(2, 3, {(0, 0): Fraction(1, 2), (0, 2): 3, (1, 1): -2}),
             Grid(2, 3, 0, CellArray(np.array([0, 0]), np.array([0, 2]), np.array([0.5, 3.0]), [(1, 1, -2)]))]
    models = [Model(2, 3, 2, 3, (Layer.make(2, 3, W=Grid.full(3, 3, 1), b1=g, b2=Grid.full(2, 3, 1)),)) for g in built]
    assert len({encode(m) for m in models}) == 1 and all(same_map(models[0], m) for m in models)
    painted = Grid(2, 3, 0, ((0, 2, 0, 3, 3), (0, 1, 0, 1, Fraction(1, 2)), (1, 2, 1, 2, -2), (0, 1, 1, 2, 0), (1, 2, 0, 1, 0),
                             (1, 2, 2, 3, 0)))  # the same matrix by overlapping rectangles
    other = Model(2, 3, 2, 3, (Layer.make(2, 3, W=Grid.full(3, 3, 1), b1=painted, b2=Grid.full(2, 3, 1)),))
    assert same_map(models[0], other)  # same semantics, other bytes: allowed
    wrong = Grid.from_rows([[Fraction(1, 2), 0, 3], [0, 2, 0]])
    bad = Model(2, 3, 2, 3, (Layer.make(2, 3, W=Grid.full(3, 3, 1), b1=wrong, b2=Grid.full(2, 3, 1)),))
    assert encode(bad) != encode(models[0]) and not same_map(bad, models[0])


# ---- scalars: non-normal Fractions, numpy scalars, -0.0, int subclasses, huge integers ----------------


class Small(enum.IntEnum):
    THREE = 3


NON_NORMAL = [(Fraction(2, 4, _normalize=False), Fraction(1, 2)), (Fraction(1, -2, _normalize=False), Fraction(-1, 2)),
              (Fraction(-3, -6, _normalize=False), Fraction(1, 2)), (Fraction(0, 5, _normalize=False), 0),
              (Fraction(6, 2, _normalize=False), 3), (Fraction(4, -1, _normalize=False), -4),
              (Small.THREE, 3), (np.int64(-7), -7), (np.uint64(2**64 - 1), 2**64 - 1), (np.int8(-128), -128)]


@pytest.mark.parametrize("given, normal", NON_NORMAL, ids=lambda v: repr(v))
def test_a_scalar_not_in_normal_form_is_stored_normalised(given: Any, normal: Any) -> None:
    """Gates, grid fills and rectangles, diagonals and cell-array cells hold the canonical value
    (its type and its lowest terms), so the side encodes as, equals and decodes to the normal side.
    (A ``Fraction(1, -2, _normalize=False)`` was kept: it compared unequal to ``-1/2``, its model's
    bounds raised a bare ``ValueError`` and its encoding did not decode.)"""
    def sides(v: Any) -> list[Any]:
        return [Circuit(1, 1, (Gate.const(v), Gate.lin(0, v, 1, v), Gate(Op.LIN, (0, 0), (v, 1))), (3,)),
                Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(1, 1, v), b1=Grid(1, 1, 0, ((0, 1, 0, 1, v),)),
                                              b2=Grid.full(1, 1, 1)),)),
                Kaleidoscope(2, 2, (BBStar(2, (ButterflyFactor(2, 1, (v,), (1,), (0,), (v,)),) * 2),))]

    for x, y in zip(sides(given), sides(normal)):
        assert x == y and encode(x) == encode(y) and decode(encode(x)) == x
        for g in (x.gates if isinstance(x, Circuit) else ()):
            assert all(type(c) in (int, Fraction) for c in g.coeffs)
    if normal != 0:
        cells = CellArray(np.array([], dtype=np.int64), np.array([], dtype=np.int64), np.array([]), [(0, 0, given)])
        assert cells.extra == ((0, 0, normal),) and type(cells.extra[0][2]) is type(normal)


def test_a_non_normal_rational_model_is_decided_like_its_normal_form() -> None:
    nn = Fraction(1, -2, _normalize=False)
    m1 = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(1, 1, nn), b2=Grid.full(1, 1, 1)),))
    m2 = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(1, 1, Fraction(-1, 2)), b2=Grid.full(1, 1, 1)),))
    for method in ("exact", "randomized"):
        assert sv.verify(m1, m2, method=method).proved


@pytest.mark.parametrize("coeff", [Fraction(2, 4, _normalize=False), Fraction(1, -2, _normalize=False),
                                   Fraction(-3, -1, _normalize=False)], ids=repr)
def test_a_sym_refuses_a_coefficient_not_in_lowest_terms(coeff: Fraction) -> None:
    mono = (("a", 1),)
    with pytest.raises(IRError, match="lowest terms"):
        Sym(((mono, coeff),))


@pytest.mark.parametrize("value", [np.float64(0.5), np.float32(2.0), -0.0, 0.0, float("nan"), 1.5, np.float16(1.0)],
                         ids=repr)
def test_floats_are_refused_where_exact_values_are_read(value: Any) -> None:
    for build in (lambda: Gate.const(value), lambda: Grid(1, 1, value), lambda: Grid(1, 1, 0, ((0, 1, 0, 1, value),)),
                  lambda: ButterflyFactor(2, 1, (value,), (1,), (0,), (1,))):
        with pytest.raises(IRError, match="float"):
            build()


def test_negative_zero_in_an_array_is_no_cell() -> None:
    g = Grid.from_array(np.array([[-0.0, 1.0]]))
    assert len(g.rects) == 1 and encode(Model(1, 2, 1, 2, (Layer.make(1, 2, b1=g),))) == \
        encode(Model(1, 2, 1, 2, (Layer.make(1, 2, b1=Grid.from_rows([[0, 1]])),)))


EDGES = [2**63 - 1, 2**63, 2**63 + 1, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 2**64 + 1, -(2**64) + 1, -(2**64),
         10**400, -(10**400), 0, 1, -1, 255, 256, -128, -129]
EDGE_SCALARS = EDGES + [Fraction(1, d) for d in (2**63 - 1, 2**63, 2**64 + 1, 3 * 10**400)] + \
    [Fraction(-(2**63), 3), Fraction(2**63, 3), Fraction(10**400 + 1, 2), 10**400 * a, Fraction(1, 2**63) * a]


def test_int64_boundaries_of_every_list_round_trip_and_stay_distinct() -> None:
    """Every value at the int64 edge of the packed ``N``/``A`` forms, alone and next to small
    values, as a coefficient, a fill, a rectangle value and a dimension: all encodings round-trip
    and no two sides share one."""
    seen: dict[bytes, Any] = {}
    count = 0
    for v in EDGE_SCALARS:
        for c in (Circuit(1, 2, (Gate.lin(0, v, 1, 1),), (2,)), Circuit(1, 2, (Gate.lin(0, 1, 1, v),), (2,)),
                  Circuit(1, 2, (Gate.const(v), Gate.const(v)), (2, 3)),
                  Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(1, 1, v), b2=Grid.full(1, 1, 1)),)),
                  Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(1, 1, 0, ((0, 1, 0, 1, v),)), b2=Grid.full(1, 1, 1)),))):
            data = encode(c)
            assert decode(data) == c
            assert seen.setdefault(data, c) == c, (c, seen[data])  # one encoding, one side
            count += 1
    assert len(seen) > count - 10  # only the few sides built twice (v = 1 in either slot, …) coincide
    for n in (2**63 - 1, 2**63, 2**64 + 1):  # dimensions beyond int64 (the wide ints form)
        for side in (Circuit(n, 1, (), ()), Model(1, 1, n, 1, ())):
            assert decode(encode(side)) == side
    assert encode(Circuit(2**63 - 1, 1, (), ())) != encode(Circuit(2**63, 1, (), ()))


def test_circuits_with_repeated_outputs_and_inputs_as_outputs() -> None:
    base = Circuit(1, 3, (Gate.mul(0, 1),), (3, 3, 0))
    variants = [Circuit(1, 3, (Gate.mul(0, 1),), (3, 0, 3)), Circuit(1, 3, (Gate.mul(0, 1),), (3, 3)),
                Circuit(1, 3, (Gate.mul(0, 1),), (0, 1, 2)), Circuit(1, 3, (Gate.mul(0, 1),), ()),
                Circuit(1, 3, (Gate.mul(0, 1),), (3, 3, 0, )), Circuit(1, 3, (), (0, 0, 0))]
    for v in variants:
        _enc_or_same(base, v)
        assert decode(encode(v)) == v
    assert encode(variants[-2]) == encode(base)


def test_kaleidoscope_sizes_orders_and_permutations() -> None:
    """Every permutation of 4 as a kaleidoscope: distinct permutations encode differently, and a
    kaleidoscope and its transpose (another order of the factors) differ where their maps do."""
    from itertools import permutations

    from symverify.kaleidoscope import permutation_to_kaleidoscope

    ks = {p: permutation_to_kaleidoscope(list(p)).kaleidoscope for p in permutations(range(4))}
    assert all(same_map(k, ks[p]) == (p == q) for q, k in list(ks.items())[:6] for p in list(ks)[:6])
    encs = {p: encode(k) for p, k in ks.items()}
    assert len(set(encs.values())) == len(ks)
    for p, k in ks.items():
        assert decode(encs[p]) == k
        _enc_or_same(k, k.transpose())
    assert encode(Kaleidoscope.identity(3, 4)) != encode(Kaleidoscope.identity(3, 8))  # sizes differ, maps do not
    assert same_map(Kaleidoscope.identity(3, 4), Kaleidoscope.identity(3, 8))


def test_a_compiled_object_shares_its_bare_models_points_and_verdict() -> None:
    """The certificate of a compiled object is not read by the randomized method, so the transcript
    hashes the model alone; its verdict is the bare model's."""
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.add(2, 0)), (3,))
    compiled = sv.compile(c)
    with_cert, bare = as_side(compiled), as_side(compiled.model)
    assert sides_mod.certificate_of(with_cert) is not None and sides_mod.certificate_of(bare) is None
    rc = as_side(c)
    assert transcript(with_cert, rc, 0).stream("x").read(32) == transcript(bare, rc, 0).stream("x").read(32)
    r1, r2 = sv.verify(compiled, c, method="randomized"), sv.verify(compiled.model, c, method="randomized")
    assert r1.proved and r2.proved and r1.evidence == r2.evidence


# ---- a side changed after it was hashed: the false proof of a mutable cell array ---------------------


def _float_weight_model(w: float) -> Model:
    return Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.from_array(np.array([[w]])), b2=Grid.full(1, 1, 1)),))


IDENTITY = Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid.identity(1), b2=Grid.full(1, 1, 1)),))


def _tamper(cells: CellArray, how: str) -> None:
    if how == "vals":
        cells.vals[0] = 2.0**61
    elif how == "flag":
        cells.vals.flags.writeable = True
        cells.vals[0] = 2.0**61
    elif how == "attribute":
        cells.vals = np.array([2.0**61])
    else:
        cells.extra = ((0, 0, 2**61),)
        cells.vals = np.array([], dtype=np.float64)
        cells.rows = cells.cols = np.array([], dtype=np.int64)


@pytest.mark.parametrize("how", ["vals", "flag", "attribute", "extra"])
def test_a_cell_array_changed_after_a_proof_is_never_proved_wrong(how: str) -> None:
    """The attack: prove ``u ↦ 1·u`` against the identity (the fingerprint, bounds and plans are
    then kept by the model's identity), change the float weight in place to ``2^61``
    (``≡ 1 mod 2^61 − 1``), verify again. The weight array was writeable, the cached digest and
    height bound were the old model's, so the points and the fixed prime were reused and
    ``u ↦ 2^61·u`` was proved equal to ``u``. Now every change is refused (the arrays are
    read-only and the attributes cannot be assigned), and a verdict is about what the model computes."""
    m = _float_weight_model(1.0)
    assert sv.verify(m, IDENTITY, method="randomized").proved
    cells = m.layers[0].W.rects
    assert isinstance(cells, CellArray)
    try:
        _tamper(cells, how)
        changed = True
    except (ValueError, IRError):
        changed = False
    again = sv.verify(m, IDENTITY, method="randomized")
    assert again.proved == same_map(m, IDENTITY), "a proof about a model that computes something else"
    assert not changed and again.proved and cells.vals.tolist() == [1.0] and m.layers[0].W.get(0, 0) == 1
    assert sv.verify(_float_weight_model(2.0**61), IDENTITY, method="randomized").refuted  # built afresh: refuted


def test_a_cell_array_refuses_every_change_and_still_copies_and_pickles() -> None:
    cells = CellArray(np.array([0, 1]), np.array([1, 0]), np.array([0.5, -3.0]), [(2, 2, Fraction(1, 3))])
    for name in ("rows", "cols", "vals"):
        arr = getattr(cells, name)
        with pytest.raises(ValueError):
            arr[0] = 1
        with pytest.raises(ValueError):
            arr.flags.writeable = True
        with pytest.raises(IRError, match="cannot be changed"):
            setattr(cells, name, arr.copy())
    with pytest.raises(IRError, match="cannot be changed"):
        del cells.extra
    with pytest.raises(IRError, match="cannot be changed"):
        cells._hash = 0
    g = Grid(3, 3, 0, cells)
    for twin in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g), copy.copy(g)):
        assert twin == g and encode(Model(1, 1, 3, 3, (Layer.make(3, 3, W=twin),))) == \
            encode(Model(1, 1, 3, 3, (Layer.make(3, 3, W=g),)))
        assert not twin.rects.vals.flags.writeable
    source = np.array([[0.0, 2.0]])
    built = Grid.from_array(source)
    source[0, 1] = 4.0  # the caller's array is not the grid's
    assert built.get(0, 1) == 2
    rows, cols, vals = np.array([0, 1], dtype=np.int64), np.array([1, 0], dtype=np.int64), np.array([0.5, -3.0])
    direct = CellArray(rows, cols, vals)  # arrays already of the stored dtypes: still copied, once
    rows[0], cols[0], vals[0] = 1, 5, 7.0
    assert (direct.rows.tolist(), direct.cols.tolist(), direct.vals.tolist()) == ([0, 1], [1, 0], [0.5, -3.0])
    assert not any(np.shares_memory(a, b) for a in (rows, cols, vals) for b in (direct.rows, direct.cols, direct.vals))


# ---- a side that shows the encoding one thing and the interpreter another -------------------------

M61 = 2**61 - 1


class _Indexed(tuple):  # type: ignore[type-arg]
    """A rectangle whose value, read by index (as the encoding reads it), is 1, whatever it holds."""

    def __getitem__(self, k: Any) -> Any:
        return 1 if k == 4 else tuple.__getitem__(self, k)


def _weight_model(W: Grid) -> Model:
    return Model(1, 1, 1, 1, (Layer.make(1, 1, W=W, b2=Grid.full(1, 1, 1)),))


def test_a_rectangle_that_indexes_otherwise_than_it_iterates_is_read_as_its_items() -> None:
    """The attack: the honest model ``u ↦ 1·u`` and the identity fix the points; a rectangle
    holding ``w = 1 + p₀·p₁`` (the two trial primes of that pair) but answering ``1`` to
    ``rect[4]`` had the honest model's encoding, while the interpreter (which iterates) used
    ``w ≡ 1`` mod both primes: ``u ↦ w·u`` was proved equal to ``u``. A tuple subclass is now
    stored as the plain tuple of its items, so the encoding sees ``w``."""
    from symverify.kernel.provers.randomized import random_prime

    honest = _weight_model(Grid(1, 1, 0, ((0, 1, 0, 1, 1),)))
    tr = transcript(as_side(honest), as_side(IDENTITY), 0)
    p0, p1 = (random_prime(tr.stream("sz", "python", t, "prime"), 1, 1 << 61) for t in range(2))
    w = 1 + p0 * p1
    forged = _weight_model(Grid(1, 1, 0, (_Indexed((0, 1, 0, 1, w)),)))
    assert not same_map(forged, IDENTITY)
    assert not sv.verify(forged, IDENTITY, method="randomized").proved, "a false proof"
    assert type(forged.layers[0].W.rects[0]) is tuple and forged.layers[0].W.rects[0][4] == w
    assert fingerprint(forged) != fingerprint(honest)
    assert sv.verify(forged, IDENTITY, method="randomized").refuted
    from collections import namedtuple

    Rect = namedtuple("Rect", "r0 r1 c0 c1 v")
    named = Grid(2, 2, 0, (Rect(0, 1, 0, 2, 3), Rect(1, 2, 1, 2, Fraction(1, 2))))
    assert all(type(r) is tuple for r in named.rects) and named == Grid(2, 2, 0, ((0, 1, 0, 2, 3), (1, 2, 1, 2, Fraction(1, 2))))


class _ShownGrid(Grid):
    """A grid whose cells, as the interpreter asks for them, are not its rectangles."""

    def nonzero(self) -> dict[tuple[int, int], Any]:
        return {(0, 0): 1 + M61}

    def to_rows(self) -> list[list[Any]]:
        return [[1 + M61]]


class _Gate(Gate):
    pass


class _Lying(int):
    """An int whose products are 1: as ``n`` it would make ``n·d`` lie about a circuit's inputs."""

    def __mul__(self, other: Any) -> int:
        return 1

    __rmul__ = __mul__


class _Layer(Layer):
    pass


class _Factor(ButterflyFactor):
    pass


class _Group(BBStar):
    pass


class _Cells(CellArray):
    pass


def test_a_grid_subclass_that_evaluates_otherwise_has_no_encoding() -> None:
    """The attack: a ``Grid`` subclass whose rectangles say ``1`` and whose ``nonzero`` says
    ``1 + (2^61 − 1)``: its fingerprint was the identity's, its bounds chose the fixed prime
    ``2^61 − 1``, and ``u ↦ 2^61·u`` was proved equal to ``u``. A side holding an instance of a
    subclass of an IR class now has no encoding (``EncodingError``), and no method reads it (each
    reads a side through its fields, which such a subclass may show each reader differently)."""
    forged = _weight_model(_ShownGrid(1, 1, 0, ((0, 1, 0, 1, 1),)))
    assert [[int(v) for v in row] for row in sv.evaluate(forged, [[2]])] == [[2 * (1 + M61)]]
    for method in ("randomized", "exact"):
        with pytest.raises(EncodingError, match="a subclass may evaluate otherwise"):
            sv.verify(forged, IDENTITY, method=method)


@pytest.mark.parametrize("build", [
    lambda: Circuit(1, 2, (_Gate(Op.MUL, (0, 1)),), (2,)),
    lambda: Model(1, 1, 1, 1, (_Layer(Grid.full(1, 1, 1), Grid(1, 1), Grid(1, 1), Grid.full(1, 1, 1)),)),
    lambda: Model(1, 1, 1, 1, (Layer.make(1, 1, W=_ShownGrid(1, 1, 2)),)),
    lambda: Model(1, 1, 1, 2, (Layer.make(1, 2, W=Grid(2, 2, 0, _Cells(np.array([0]), np.array([1]), np.array([0.5])))),)),
    lambda: Kaleidoscope(2, 2, (_Group(2, (ButterflyFactor(2, 1, (1,), (0,), (0,), (1,)),) * 2),)),
    lambda: Kaleidoscope(2, 2, (BBStar(2, (_Factor(2, 1, (1,), (0,), (0,), (1,)),) * 2),)),
], ids=["gate", "layer", "grid", "cell array", "BB*", "factor"])
def test_every_ir_subclass_is_refused_by_the_encoding(build: Any) -> None:
    with pytest.raises(EncodingError, match="exactly, found an instance of"):
        encode(build())


@pytest.mark.parametrize("build, plain, read", [
    # n·d "is" 1 to the lying int: node 1 would be the gate, not an input
    (lambda: Circuit(_Lying(2), 1, (Gate.mul(0, 0),), (2,)), lambda: Circuit(2, 1, (Gate.mul(0, 0),), (2,)), lambda o: o.n),
    (lambda: Circuit(1, 2, (Gate.mul(_Lying(0), 1),), (2,)), lambda: Circuit(1, 2, (Gate.mul(0, 1),), (2,)),
     lambda o: o.gates[0].args[0]),
    (lambda: Circuit(1, 2, (Gate.mul(0, 1),), (_Lying(2),)), lambda: Circuit(1, 2, (Gate.mul(0, 1),), (2,)), lambda o: o.outputs[0]),
    (lambda: Model(_Lying(1), 1, 1, 1, ()), lambda: Model(1, 1, 1, 1, ()), lambda o: o.n),
    (lambda: Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(_Lying(1), 1)),)), lambda: Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(1, 1)),)),
     lambda o: o.layers[0].W.rows),
    (lambda: Kaleidoscope(_Lying(1), 2, ()), lambda: Kaleidoscope(1, 2, ()), lambda o: o.n),
    (lambda: Kaleidoscope(2, 2, (BBStar(_Lying(2), (ButterflyFactor(_Lying(2), _Lying(1), (1,), (0,), (0,), (1,)),) * 2),)),
     lambda: Kaleidoscope(2, 2, (BBStar(2, (ButterflyFactor(2, 1, (1,), (0,), (0,), (1,)),) * 2),)),
     lambda o: o.groups[0].factors[0].stride),
], ids=["circuit n", "node id", "output", "model n", "grid rows", "kaleidoscope n", "factor size and stride"])
def test_int_subclasses_are_stored_as_plain_ints(build: Any, plain: Any, read: Any) -> None:
    """Sizes, node ids and outputs given as an int subclass are stored as the plain int of their value
    (read without calling the subclass's methods), before any check reads them: the checks, the
    interpreter and the encoding then see one value, and the object equals (and encodes as) the plain one."""
    obj = build()
    assert type(read(obj)) is int
    assert obj == plain() and encode(obj) == encode(plain())


class _Name(str):
    pass


def _sym_terms(which: str) -> Any:
    one = Fraction(1)
    return {"term": (_Indexed(((("a", 1),), one)),), "monomial": ((_Indexed((("a", 1),)), one),),
            "factor": (((_Indexed(("a", 1)),), one),), "name": ((((_Name("a"), 1),), one),),
            "terms": _Indexed((((("a", 1),), one),))}[which]


@pytest.mark.parametrize("which", ["term", "monomial", "factor", "name", "terms"])
def test_a_sym_is_built_of_plain_tuples_and_strs(which: str) -> None:
    """Every container of a ``Sym`` is read more than once (checked, encoded, evaluated): a
    subclass could answer each reading differently, so only plain tuples and strs are taken."""
    with pytest.raises(IRError, match=r"Sym terms|Sym term 0|parameter name"):
        Sym(_sym_terms(which))
    assert Sym((((("a", 1),), Fraction(1)),)) == sym("a")


# ---- 2. hypothesis: decode ∘ encode, injectivity, malformed bytes ---------------------------------

ints = st.one_of(st.integers(-3, 3), st.sampled_from(EDGES), st.integers(-(2**70), 2**70))
rationals = st.builds(Fraction, ints, st.one_of(st.integers(1, 5), st.sampled_from([2**63 - 1, 2**63, 2**64 + 1, 10**20])))
name_st = st.sampled_from(["a", "b", "D1[3]", "D1[30]", "I", "T", "x.y"])


@st.composite
def symbols(draw: st.DrawFn) -> Any:
    out: Any = 0
    for _ in range(draw(st.integers(1, 2))):
        term: Any = draw(rationals.filter(bool))
        for _ in range(draw(st.integers(1, 2))):
            term = term * sym(draw(name_st)) ** draw(st.integers(1, 2))
        out = out + term
    return out + draw(st.sampled_from([0, 1]))


scalars = st.one_of(ints, rationals, symbols(), st.sampled_from([Fraction(2, 4, _normalize=False), Small.THREE, np.int64(5)]))


@st.composite
def grids(draw: st.DrawFn, rows: int, cols: int) -> Grid:
    if draw(st.integers(0, 4)) == 0:
        arr = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, -0.0, 0.5, -3.0, 1e-300, 2.0**60, 2.0**70]),
                                              min_size=cols, max_size=cols), min_size=rows, max_size=rows)))
        return Grid.from_array(arr.reshape(rows, cols))
    rects = []
    for _ in range(draw(st.integers(0, 3))):
        r0, c0 = draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))
        rects.append((r0, draw(st.integers(r0 + 1, rows)), c0, draw(st.integers(c0 + 1, cols)), draw(scalars)))
    return Grid(rows, cols, draw(st.one_of(st.just(0), scalars)), tuple(rects))


@st.composite
def models(draw: st.DrawFn) -> Model:
    n, d = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    nn, dd = n + draw(st.integers(0, 1)), d + draw(st.integers(0, 1))
    layers = tuple(Layer(draw(grids(dd, dd)), draw(grids(nn, dd)), draw(grids(nn, dd)), draw(grids(nn, dd)),
                         draw(st.sampled_from(list(Mode)))) for _ in range(draw(st.integers(0, 2))))
    return Model(n, d, nn, dd, layers)


@st.composite
def circuits(draw: st.DrawFn) -> Circuit:
    n, d = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    gates: list[Gate] = []
    for _ in range(draw(st.integers(0, 5))):
        nodes = n * d + len(gates)
        kind = draw(st.sampled_from(["const", "lin", "mul"]))
        node = st.integers(0, nodes - 1)
        if kind == "const":
            gates.append(Gate.const(draw(scalars)))
        elif kind == "lin":
            gates.append(Gate.lin(draw(node), draw(scalars), draw(node), draw(scalars)))
        else:
            gates.append(Gate.mul(draw(node), draw(node)))
    outs = draw(st.lists(st.integers(0, n * d + len(gates) - 1), max_size=n * d))
    return Circuit(n, d, tuple(gates), tuple(outs))


@st.composite
def kaleidoscopes(draw: st.DrawFn) -> Kaleidoscope:
    size = draw(st.sampled_from([2, 4]))
    diag = st.lists(st.one_of(st.integers(-2, 2), scalars), min_size=size // 2, max_size=size // 2).map(tuple)
    groups = tuple(BBStar(size, tuple(ButterflyFactor(size, s, draw(diag), draw(diag), draw(diag), draw(diag))
                                      for s in bbstar_strides(size))) for _ in range(draw(st.integers(0, 2))))
    return Kaleidoscope(draw(st.integers(1, size)), size, groups)


sides = st.one_of(circuits(), models(), kaleidoscopes())
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@QUICK
@given(sides)
def test_decode_inverts_encode_and_keeps_the_map(x: Any) -> None:
    y = decode(encode(x))
    assert y == x and type(y) is type(x) and encode(y) == encode(x) and same_map(x, y, points=2)


@QUICK
@given(sides, sides)
def test_sides_with_different_maps_never_share_an_encoding(x: Any, y: Any) -> None:
    if encode(x) == encode(y):
        assert x == y and same_map(x, y, points=2)
    elif not same_map(x, y, points=2):
        assert fingerprint(x) != fingerprint(y)


def _mutate(data: bytes, how: int, at: int, blob: bytes) -> bytes:
    at %= len(data) + 1
    if how == 0:  # change one byte
        if at == len(data):
            return data + b"\x00"
        return data[:at] + bytes([data[at] ^ (blob[0] if blob and blob[0] else 1)]) + data[at + 1 :]
    if how == 1:
        return data[:at]  # truncate
    if how == 2:
        return data + (blob or b"\x00")  # extend
    if how == 3:
        return data[:at] + blob + data[at:]  # insert
    return data[:at] + data[at + 1 + len(blob) :]  # delete


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sides, st.integers(0, 4), st.integers(0, 10**6), st.binary(max_size=9))
def test_mangled_bytes_are_refused_or_canonical(x: Any, how: int, at: int, blob: bytes) -> None:
    """Any mutation, truncation or extension of an encoding either raises ``EncodingError`` (a
    ``SymverifyError``, never a bare exception) or decodes to a side whose encoding is exactly
    those bytes: no two byte strings name one side."""
    data = _mutate(encode(x), how, at, blob)
    try:
        y = decode(data)
    except EncodingError:
        return
    assert encode(y) == data


def test_a_second_spelling_of_a_side_is_refused() -> None:
    """Bytes that the reader can parse but that ``encode`` would never write (a coefficient listed
    twice, one listed but unused, the wide form of small values) name a side that already has its
    own encoding: decode refuses them, so each side has exactly one byte string."""
    from symverify.kernel.provers import fingerprint as fpm

    c = Circuit(1, 1, (Gate.const(5), Gate.const(5)), (2,))

    def spell(cidx: list[int], scalars: bytes, outputs: bytes | None = None) -> bytes:
        return (b"C" + fpm._ints([1, 1, 2, 1]) + fpm._bytes(bytes([0, 0])) + fpm._ints([]) + fpm._ints(cidx) + scalars
                + (outputs if outputs is not None else fpm._ints([2])))

    assert spell([0, 0], fpm._scalars([5])) == encode(c) and decode(encode(c)) == c
    for data in (spell([0, 1], fpm._scalars([5, 5])), spell([0, 0], fpm._scalars([5, 7])), spell([1, 1], fpm._scalars([7, 5])),
                 spell([0, 0], b"V" + (1).to_bytes(8, "big") + fpm._int(5)),
                 spell([0, 0], fpm._scalars([5]), b"W" + (1).to_bytes(8, "big") + fpm._int(2))):
        with pytest.raises(EncodingError):
            decode(data)


@pytest.mark.parametrize("data", [b"", b"C", b"Z", b"M" + b"N" + (5).to_bytes(8, "big"), b"K" + b"N" + (2**64 - 1).to_bytes(8, "big"),
                                  b"C" + b"W" + (1).to_bytes(8, "big") + b"I" + (2**64 - 1).to_bytes(8, "big")])
def test_hand_made_garbage_is_an_encoding_error(data: bytes) -> None:
    with pytest.raises(EncodingError):
        decode(data)


# ---- 3. the transcript and the streams --------------------------------------------------------


def test_transcript_parts_are_prefix_free() -> None:
    """Bytes, ints and strs of one content are different parts; moving bytes between parts, empty
    parts, signs and sizes all give different transcripts."""
    contents = [b"1", 1, "1", b"", "", 0, -1, 255, -256, 2**63, -(2**63), 10**400, b"\x00", "\x00", b"I", "I"]
    parts = [_part(c) for c in contents]
    assert len(set(parts)) == len(parts)
    transcripts = [("ab", "c"), ("a", "bc"), ("abc",), ("abc", ""), ("", "abc"), (b"ab", "c"), ("ab", b"c"), (1, 2), (12,),
                   (b"\x01", b"\x02"), (b"\x01\x02",), (), ("",), ("", ""), (0,), (-1,), (2**64,), (2**64 - 1,)]
    keys = {Transcript(*t).stream("s").read(32) for t in transcripts}
    assert len(keys) == len(transcripts)
    # parts concatenate injectively: every part's bytes say where it ends
    for t in transcripts:
        assert b"".join(map(_part, t)) not in {b"".join(map(_part, u)) for u in transcripts if u != t}


@pytest.mark.parametrize("part", [True, False, np.int64(5), np.uint8(0), 1.0, None, [1, 2], (1,), {"a": 1}, Fraction(1, 2),
                                  np.bool_(True)], ids=repr)
def test_a_part_that_is_no_bytes_int_or_str_is_refused(part: Any) -> None:
    """A numpy integer was read as that many zero bytes (``bytes(np.int64(5))``) and a list of
    ints as the bytes it spells (the same part as ``b"\\x01\\x02"``): now each is refused."""
    with pytest.raises(ChallengeError, match="transcript part: expected bytes, an int or a str"):
        _part(part)
    with pytest.raises(ChallengeError):
        Transcript("x", part)
    with pytest.raises(ChallengeError):
        Transcript("x").stream(part)
    assert issubclass(ChallengeError, SymverifyError)


def test_the_parts_end_where_the_label_begins() -> None:
    """A stream hashes the parts, the marker ``"stream"`` and the label in one sequence, so
    ``Transcript(a, "stream", b).stream()`` was ``Transcript(a).stream(b, "stream")``: a part equal
    to the marker is refused. (The randomized method's transcripts, method, seed and two
    fingerprints, never held one; a label may, after the first marker.)"""
    with pytest.raises(ChallengeError, match="marker"):
        Transcript("a", "stream", "b")
    assert Transcript("a").stream("b", "stream").read(32) != Transcript("a", "b").stream("stream").read(32)
    assert Transcript("a", b"stream").stream().read(32) != Transcript("a").stream(b"stream").read(32)
    seqs = {(("a",), ("b", "stream")), (("a", "b"), ("stream",)), (("a",), ("stream", "b")), ((), ("a", "stream", "b"))}
    assert len({Transcript(*parts).stream(*label).read(32) for parts, label in seqs}) == len(seqs)


def test_bytes_like_parts_are_their_bytes() -> None:
    assert _part(bytearray(b"ab")) == _part(memoryview(b"ab")) == _part(b"ab")


def _stream(*label: Any) -> Stream:
    return Transcript("attacks", 0).stream(*label)


def _reference_below(s: Stream, bound: int) -> int:
    """The documented sampler: the low ``bits(bound − 1)`` bits of fresh little-endian stream bytes,
    kept when below ``bound``."""
    bits = (bound - 1).bit_length()
    if bits == 0:
        return 0
    while True:
        x = int.from_bytes(s.read((bits + 7) // 8), "little") & ((1 << bits) - 1)
        if x < bound:
            return x


@pytest.mark.parametrize("bound", [1, 2, 3, 4, 5, 2**8, 2**8 + 1, 2**31 - 1, 2**61 - 1, 2**62, 2**63 + 1, 2**64, 2**200, 2**200 + 1])
def test_below_is_the_documented_rejection_sampler(bound: int) -> None:
    ours, ref = _stream("b", bound), _stream("b", bound)
    got = [ours.below(bound) for _ in range(50)]
    assert got == [_reference_below(ref, bound) for _ in range(50)]
    assert all(0 <= x < bound for x in got)
    assert ours.read(16) == ref.read(16)  # and it used exactly the bytes it should
    if bound > 2:
        assert len(set(got)) > 1


@pytest.mark.parametrize("bound", [0, -1, -(2**64), 2.0, 1.5, True, np.int64(5), None, "7", Fraction(3)], ids=repr)
def test_below_refuses_an_empty_or_non_int_bound(bound: Any) -> None:
    s = _stream()
    for draw in (lambda: s.below(bound), lambda: s.residues(bound, 3), lambda: s.array(bound, 3)):
        with pytest.raises(ChallengeError, match="expected"):
            draw()


def test_counts_and_ranges_are_checked() -> None:
    s = _stream()
    for draw in (lambda: s.residues(7, -1), lambda: s.array(7, -1), lambda: s.read(-1), lambda: s.residues(2**100, -1),
                 lambda: s.array(7, 2.0), lambda: s.between(5, 5), lambda: s.between(6, 5), lambda: s.between(0.0, 5),
                 lambda: s.array(2**62 + 1, 1), lambda: Stream("key")):  # type: ignore[arg-type]
        with pytest.raises(ChallengeError):
            draw()
    assert s.residues(7, 0) == [] and len(s.array(7, 0)) == 0 and s.read(0) == b""


@pytest.mark.parametrize("low, high", [(5, 6), (-3, -2), (-(2**70), -(2**70) + 1), (2**61, 2**62), (-5, 5), (0, 1)])
def test_between_stays_in_its_half_open_range(low: int, high: int) -> None:
    s = _stream("between", low, high)
    xs = [s.between(low, high) for _ in range(200)]
    assert all(low <= x < high for x in xs)
    if high - low == 1:
        assert set(xs) == {low}
    elif high - low == 10:
        assert set(xs) == set(range(low, high))


@pytest.mark.parametrize("bound", [2**62 + 1, 2**63, 2**64 + 3, 2**127 - 1, 10**40])
def test_residues_beyond_int64_are_python_ints_from_below(bound: int) -> None:
    s, t = _stream("r", bound), _stream("r", bound)
    xs = s.residues(bound, 40)
    assert xs == [t.below(bound) for _ in range(40)] and all(type(x) is int and 0 <= x < bound for x in xs)
    assert max(xs) > bound // 4  # not stuck below int64
    with pytest.raises(ChallengeError):
        s.array(bound, 1)


def _chi_square(counts: list[int]) -> float:
    n, k = sum(counts), len(counts)
    return sum((c - n / k) ** 2 / (n / k) for c in counts)


# the 99.99th percentile of chi-square with k − 1 degrees of freedom, for the k used below
CHI2_LIMIT = {3: 18.4, 5: 23.5, 6: 25.7, 7: 27.9, 10: 33.7, 17: 46.0}


@pytest.mark.parametrize("bound", sorted(CHI2_LIMIT))
def test_draws_are_uniform_by_chi_square(bound: int) -> None:
    """A fixed key, so deterministic: both samplers' counts pass a chi-square test at 10^-4 (a
    ``% bound`` reduction of one byte, or a wrong mask, fails it at these sample sizes)."""
    n = 12_000 * bound
    s = _stream("chi", bound)
    small = [s.below(bound) for _ in range(n // 4)]
    arr = s.array(bound, n).tolist()
    for xs in (small, arr):
        counts = [0] * bound
        for x in xs:
            counts[x] += 1
        assert _chi_square(counts) < CHI2_LIMIT[bound], counts
    # a biased sampler fails the same test: the masked candidate reduced mod the bound, not rejected
    mask = (1 << (bound - 1).bit_length()) - 1
    counts = [0] * bound
    for byte in _stream("bias", bound).read(n // 4):
        counts[(byte & mask) % bound] += 1
    assert _chi_square(counts) > CHI2_LIMIT[bound]


def test_labels_and_transcripts_separate_every_purpose() -> None:
    t = Transcript("randomized", 0, b"L", b"R")
    labels = [("sz", "python", 0, "prime"), ("sz", "python", 0, "point", 2**61 - 1), ("sz", "torch", 0, "point", 2**61 - 1),
              ("pre", "python", 0, "prime"), ("sz", "python", 1, "prime"), ("sz", "python", 0, "point", 2**61 + 15),
              ("sz", "python", "0", "prime"), ("sz", "python", b"\x00", "prime"), ("szpython", 0, "prime"), ()]
    keys = {t.stream(*label).read(32) for label in labels}
    assert len(keys) == len(labels)
    others = [Transcript("randomized", 1, b"L", b"R"), Transcript("randomized", 0, b"R", b"L"), Transcript("randomized", 0, b"LR", b""),
              Transcript("randomized", 0, b"L", b"R", b""), Transcript("exact", 0, b"L", b"R"), Transcript("randomized", -1, b"L", b"R")]
    assert len({o.stream("sz").read(32) for o in others} | {t.stream("sz").read(32)}) == len(others) + 1


# ---- 4. what the transcript binds, and why the rest does not matter -----------------------------

HIGH = Circuit(1, 2, (Gate.lin(0, 2**70, 1, 3),), (2,))  # height above 61 bits: random primes, recorded
HIGH_EQ = Circuit(1, 2, (Gate.lin(0, 2**70, 1, 3), Gate.add(2, 2), Gate.lin(3, 1, 2, -1)), (4,))


def _primes(x: Any, y: Any, **kw: Any) -> list[str]:
    r = sv.verify(x, y, method="randomized", **kw)
    assert r.proved, r
    return r.evidence["primes"]


def test_the_sides_their_order_and_the_seed_change_the_points() -> None:
    base = _primes(HIGH, HIGH_EQ)
    assert base == _primes(HIGH, HIGH_EQ)  # reproducible
    assert _primes(HIGH_EQ, HIGH) != base  # the order of the sides
    assert _primes(HIGH, HIGH_EQ, seed=1) != base  # the seed
    renamed = dataclasses.replace(HIGH, name="renamed")
    assert _primes(renamed, HIGH_EQ) == base  # a name is not part of the side
    same_map_other_bytes = Circuit(1, 2, (Gate.lin(1, 3, 0, 2**70),), (2,))
    assert _primes(same_map_other_bytes, HIGH_EQ) != base  # another side (equal map): other points


def test_the_error_bound_and_trials_only_extend_one_sequence_of_trials() -> None:
    """``error_bound`` and ``trials`` are not hashed: they set how many trials run (``k``), and
    trial ``t`` draws its prime and points from the stream labelled ``t``, so a stricter bound runs
    the same first trials and more. That is sound: the claim of each run is about its own ``k``
    independent trials, whose points are fixed by the sides and the seed before any option is
    read; choosing the options cannot move the points, only stop earlier (a weaker stated bound)."""
    weak = _primes(HIGH, HIGH_EQ, error_bound=Fraction(1, 2**40))
    default = _primes(HIGH, HIGH_EQ)
    strict = _primes(HIGH, HIGH_EQ, error_bound=Fraction(1, 2**400))
    more = _primes(HIGH, HIGH_EQ, trials=9)
    assert len(weak) < len(default) < len(strict) and len(more) == 9
    for longer in (default, strict, more):
        assert longer[: len(weak)] == weak
    assert strict[: len(default)] == default


def test_the_engine_and_the_prime_label_the_points() -> None:
    """The prime size is not hashed but the prime is: the points stream of a trial is labelled by
    its prime, so primes of different sizes (or engines) never share points; the prime streams of
    two sizes overlap in their first bytes, but each draw is uniform on its own range."""
    tr = transcript(as_side(HIGH), as_side(HIGH_EQ), 0)
    from symverify.kernel.provers.randomized import random_prime

    p61, p64 = (random_prime(tr.stream("sz", "python", 0, "prime"), 1, 1 << bits) for bits in (61, 64))
    assert p61.bit_length() == 62 and p64.bit_length() == 65
    pts = {(engine, p): tr.stream("sz", engine, 0, "point", p).residues(p61, 4) for engine in ("python", "torch")
           for p in (p61, p64)}
    assert len({tuple(v) for v in pts.values()}) == 4


def test_the_kind_of_a_side_is_bound() -> None:
    """A circuit and a kaleidoscope of one map, and a model whose numbers spell a circuit's, hash apart."""
    k = Kaleidoscope.identity(2, 2)
    c = Circuit(2, 1, (), (0, 1))
    assert exact(k, [[Fraction(3)], [Fraction(5)]], {}) == exact(c, [[Fraction(3)], [Fraction(5)]], {})
    assert fingerprint(k) != fingerprint(c) and encode(k)[:1] != encode(c)[:1]
    assert len({hashlib.sha256(encode(s)).digest() for s in (k, c, Model(2, 1, 2, 1, ()))}) == 3
