"""Adversarial tests of fragments and their prover (``Fragment``, ``standalone``, ``prove_fragment``).

A fragment claims: *for every state that is 0 outside ``entry``, its layers produce exactly the
spec's outputs* (so 0 outside ``exit``), and after each checkpoint's layer the listed cells hold
the given spec values and every other cell is 0 (symverify/kernel/gadgets/fragment.py). A claim
that is proved but false would let a compiled model rest on a wrong lemma, so this file decides
every claim again with an oracle written here and never with the package's evaluators:

* :class:`P` is a sparse polynomial with :class:`~fractions.Fraction` coefficients over the input
  cells and the weight symbols; :func:`run_layers` is docs/theory.md §1.1's layer
  ``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` (causal sum ``Σ_{k ≤ i}`` or the cyclic sum modulo ``N'``) on
  such polynomials; :func:`run_circuit` is docs/theory.md §2's gate semantics;
* random small fragments (sparse weights with 0, ±1, Fractions with huge denominators, ``10^400``
  and symbols; both modes; 1–3 layers; random interfaces) get a spec built here from the layers,
  then are perturbed (a gate or constant changed, an exit cell dropped or added, an entry cell
  dropped, a checkpoint wrong, a weight moved); ``prove_fragment(...).verdict`` must be ``proved``
  exactly when the oracle says the claim holds, and a malformed spec must raise a
  :class:`~symverify.errors.SymverifyError`;
* every shipped gadget family is proved at several sizes, and a weight of its first, middle and
  last layer that changes its function (by the oracle) is not;
* bad fragments, specs and checkpoints raise a ``SymverifyError`` naming what was expected and found;
* ``Fragment`` and ``FragmentProof`` survive pickling and copying, hash, and the verdict rule.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify.kernel.provers.fragment as fragment_prover
from symverify.errors import IRError, ProverError, SymverifyError
from symverify.gadgets import primitives as prim
from symverify.gadgets.compose import compose, pad
from symverify.gadgets.layout import channels_to_rows, rows_to_channels
from symverify.gadgets.remember import ChannelF, ConstF, remember_channels, remember_rows
from symverify.kernel.gadgets.fragment import Fragment, Spec, SpecBuilder, all_cells, fragment_boundaries
from symverify.kernel.ir.baseconv import Layer, Mode
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, sym
from symverify.kernel.provers.fragment import FragmentProof, prove_fragment
from symverify.kernel.provers.outcome import Verdict, is_sealed

Mono = tuple[tuple[str, int], ...]

# ---- the oracle: polynomials, layers and circuits written here ------------------------------------


class P:
    """A polynomial: sorted monomials ``((name, exponent), ...)`` → nonzero Fraction."""

    __slots__ = ("t",)

    def __init__(self, t: dict[Mono, Fraction] | None = None) -> None:
        self.t = {m: c for m, c in (t or {}).items() if c != 0}

    @staticmethod
    def var(name: str) -> P:
        return P({((name, 1),): Fraction(1)})

    @staticmethod
    def of(x: Any) -> P:
        """A weight or coefficient: an int, a Fraction or a Sym (read term by term)."""
        if isinstance(x, Sym):
            return P({m: Fraction(c) for m, c in x.terms})
        assert isinstance(x, (int, Fraction)) and not isinstance(x, bool), x
        return P({(): Fraction(x)})

    def __add__(self, o: P) -> P:
        t = dict(self.t)
        for m, c in o.t.items():
            t[m] = t.get(m, Fraction(0)) + c
        return P(t)

    def __mul__(self, o: P) -> P:
        t: dict[Mono, Fraction] = {}
        for m1, c1 in self.t.items():
            for m2, c2 in o.t.items():
                e = dict(m1)
                for name, k in m2:
                    e[name] = e.get(name, 0) + k
                m = tuple(sorted(e.items()))
                t[m] = t.get(m, Fraction(0)) + c1 * c2
        return P(t)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, P) and self.t == o.t

    def __bool__(self) -> bool:
        return bool(self.t)

    def __repr__(self) -> str:
        return f"P({len(self.t)} terms)"


ZERO = P()
State = list[list[P]]


def dense(g: Grid) -> list[list[Any]]:
    return g.to_rows()


def run_layer(layer: Layer, u: State) -> State:
    """docs/theory.md §1.1: ``y[i][q] = (Σ_p u[i][p]·W[p][q] + b1[i][q]) · (Σ_k h[k][q]·u[i−k][q] + b2[i][q])``."""
    nn, dd = len(u), len(u[0])
    W, b1, h, b2 = dense(layer.W), dense(layer.b1), dense(layer.h), dense(layer.b2)
    cyclic = layer.mode is Mode.CYCLIC
    y = [[ZERO] * dd for _ in range(nn)]
    for i in range(nn):
        for q in range(dd):
            proj = P.of(b1[i][q])
            for p in range(dd):
                proj = proj + u[i][p] * P.of(W[p][q])
            conv = P.of(b2[i][q])
            for k in range(nn):
                if i - k < 0 and not cyclic:
                    continue
                conv = conv + P.of(h[k][q]) * u[(i - k) % nn][q]
            y[i][q] = proj * conv
    return y


def clean_state(nn: int, dd: int, entry: frozenset[tuple[int, int]]) -> State:
    return [[P.var(f"x{i}_{j}") if (i, j) in entry else ZERO for j in range(dd)] for i in range(nn)]


def run_layers(layers: tuple[Layer, ...], u: State) -> list[State]:
    """Every state: ``[u, after layer 1, …, after layer L]``."""
    out = [u]
    for layer in layers:
        out.append(run_layer(layer, out[-1]))
    return out


def run_circuit(c: Circuit, inputs: list[P]) -> list[P]:
    """docs/theory.md §2: the value of every node (inputs first, then the gates in order)."""
    vals = list(inputs)
    for g in c.gates:
        if g.op is Op.CONST:
            vals.append(P.of(g.coeffs[0]))
        elif g.op is Op.LIN:
            (a, b), (al, be) = g.args, g.coeffs
            vals.append(P.of(al) * vals[a] + P.of(be) * vals[b])
        else:
            vals.append(vals[g.args[0]] * vals[g.args[1]])
    return vals


def cell_value(cell: Cell, vals: list[P]) -> P:
    acc = P.of(cell.const)
    for v, co in cell.terms:
        acc = acc + P.of(co) * vals[v]
    return acc


def read_nodes(c: Circuit, roots: list[int]) -> set[int]:
    """Every node the roots depend on syntactically (themselves included)."""
    seen, stack, nd = set(), list(roots), c.n * c.d
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v >= nd:
            stack.extend(c.gates[v - nd].args)
    return seen


@dataclasses.dataclass
class Judgement:
    """What the oracle says about a fragment's claim: ``malformed`` (why, or ""), else whether the
    exit claim holds (``exit_ok``) and whether every checkpoint holds (``checkpoints_ok``)."""

    malformed: str
    exit_ok: bool = False
    checkpoints_ok: bool = False

    @property
    def holds(self) -> bool:
        return not self.malformed and self.exit_ok and self.checkpoints_ok


def judge(frag: Fragment, spec: Spec | tuple[Circuit, list[tuple[int, tuple[Cell, ...]]]]) -> Judgement:
    """Decide ``frag``'s claim with ``spec`` (or its circuit and checkpoints) from the definitions
    (module docstring)."""
    nn, dd, L = frag.inner_n, frag.inner_d, len(frag.layers)
    c, checkpoints = (spec.circuit, spec.checkpoints) if isinstance(spec, Spec) else spec
    if (c.n, c.d) != (nn, dd) or len(c.outputs) != nn * dd:
        return Judgement("shape")
    for k, o in enumerate(c.outputs):
        g = c.gate(o)
        if (k // dd, k % dd) not in frag.exit and not (g is not None and g.op is Op.CONST and g.coeffs[0] == 0
                                                       and not isinstance(g.coeffs[0], Sym)):
            return Judgement(f"output {k} outside exit")
    inputs_read = {v for v in read_nodes(c, list(c.outputs)) if v < nn * dd}
    cp_roots = [v for _, cells in checkpoints for cell in cells for v, _ in cell.terms]
    if any(not 0 <= v < c.num_nodes for v in cp_roots):
        return Judgement("checkpoint node out of range")
    inputs_read |= {v for v in read_nodes(c, cp_roots) if v < nn * dd}
    if any((v // dd, v % dd) not in frag.entry for v in inputs_read):
        return Judgement("reads outside entry")
    known = c.params().union(*(g.params() for layer in frag.layers for _, g in layer.grids()))
    if any(not cell.params() <= known for _, cells in checkpoints for cell in cells):
        return Judgement("checkpoint parameters")
    prev = 0
    for layer, cells in checkpoints:
        if not 0 <= layer <= L or layer < prev:
            return Judgement("checkpoint layer")
        prev = layer
        where = [(cell.row, cell.col) for cell in cells]
        if len(set(where)) != len(where) or any(not (0 <= i < nn and 0 <= j < dd) for i, j in where):
            return Judgement("checkpoint cells")
    states = run_layers(frag.layers, clean_state(nn, dd, frag.entry))
    inputs = [P.var(f"x{v // dd}_{v % dd}") if (v // dd, v % dd) in frag.entry else ZERO for v in range(nn * dd)]
    vals = run_circuit(c, inputs)
    exit_ok = all(states[-1][k // dd][k % dd] == vals[o] for k, o in enumerate(c.outputs))
    cps_ok = True
    for layer, cells in checkpoints:
        want = {(cell.row, cell.col): cell_value(cell, vals) for cell in cells}
        cps_ok &= all(states[layer][i][j] == want.get((i, j), ZERO) for i in range(nn) for j in range(dd))
    return Judgement("", exit_ok, cps_ok)


# ---- random fragments and specs built from the layers -----------------------------------------------

HUGE = 10**400
POOL: list[Any] = [1, -1, 2, -3, Fraction(1, 3), Fraction(-5, 2**127 - 1), Fraction(7, 10**60 + 3), HUGE, -HUGE,
                   Fraction(HUGE + 1, HUGE - 1), sym("a"), sym("b"), 2 * sym("a") * sym("b") - Fraction(1, 3)]


def random_grid(rng: random.Random, rows: int, cols: int, density: float, symbols: bool) -> Grid:
    """Sparse cells over 0, or (one time in four) overlapping rectangles, zeros among them, painted
    in order over a nonzero fill."""
    pool = POOL if symbols else [x for x in POOL if not isinstance(x, Sym)]
    if rng.random() < 0.25:
        g = Grid.full(rows, cols, rng.choice(pool))
        for _ in range(rng.randrange(4)):
            r0, c0 = rng.randrange(rows), rng.randrange(cols)
            g = g.paint(r0, rng.randrange(r0 + 1, rows + 1), c0, rng.randrange(c0 + 1, cols + 1), rng.choice([0, 0, *pool]))
        return g
    cells = {(i, j): rng.choice(pool) for i in range(rows) for j in range(cols) if rng.random() < density}
    return Grid.from_cells(rows, cols, cells)


def random_layer(rng: random.Random, nn: int, dd: int, symbols: bool) -> Layer:
    mode = rng.choice([Mode.CAUSAL, Mode.CYCLIC])
    return Layer(*(random_grid(rng, r, c, rng.choice([0.3, 0.6, 0.9]), symbols and rng.random() < 0.5)
                   for r, c in ((dd, dd), (nn, dd), (nn, dd), (nn, dd))), mode)


class Builder:
    """Gates of a spec circuit (no zero coefficients ever read a node)."""

    def __init__(self, nn: int, dd: int) -> None:
        self.nd = nn * dd
        self.gates: list[Gate] = []
        self.consts: dict[Any, int] = {}
        self.zero = self.const(0)

    def emit(self, g: Gate) -> int:
        self.gates.append(g)
        return self.nd + len(self.gates) - 1

    def const(self, v: Any) -> int:
        key = (type(v), v)
        if key not in self.consts:
            self.consts[key] = self.emit(Gate(Op.CONST, (), (v,)))
        return self.consts[key]

    def affine(self, terms: list[tuple[Any, int]], const: Any) -> int:
        live = [(co, v) for co, v in terms if co != 0 and v != self.zero]
        if const != 0:
            live.append((1, self.const(const)))
        if not live:
            return self.zero
        co, acc = live[0]
        if co != 1:
            acc = self.emit(Gate(Op.LIN, (acc, acc), (co, 0)))
        for co, v in live[1:]:
            acc = self.emit(Gate(Op.LIN, (acc, v), (1, co)))
        return acc


@dataclasses.dataclass
class Made:
    """A random fragment with a correct spec: its parts, kept apart so that they can be perturbed."""

    nn: int
    dd: int
    layers: tuple[Layer, ...]
    entry: frozenset[tuple[int, int]]
    exit: frozenset[tuple[int, int]]
    gates: list[Gate]
    outputs: list[int]
    checkpoints: list[tuple[int, tuple[Cell, ...]]]
    zero: int

    def circuit(self) -> Circuit:
        return Circuit(self.nn, self.dd, tuple(self.gates), tuple(self.outputs), "spec")

    def spec(self) -> Spec:
        return Spec(self.circuit(), tuple(self.checkpoints))

    def fragment(self) -> Fragment:
        return Fragment("random", self.nn, self.dd, self.layers, self.entry, self.exit, {}, self.spec)


def spec_nodes(nn: int, dd: int, layers: tuple[Layer, ...], entry: frozenset[tuple[int, int]]) -> tuple[Builder, list[list[list[int]]]]:
    """The spec gates of the layers, written gate by gate from docs/theory.md §1.1; a cell holds the
    constant 0 only when it is 0 by structure (a factor with no terms), so that the certificate
    checker, which gives every node at a checkpoint a fresh variable, can follow every stage."""
    b = Builder(nn, dd)
    node = [[i * dd + j if (i, j) in entry else b.zero for j in range(dd)] for i in range(nn)]
    nodes = [node]
    for layer in layers:
        W, b1, h, b2 = dense(layer.W), dense(layer.b1), dense(layer.h), dense(layer.b2)
        nxt = [[b.zero] * dd for _ in range(nn)]
        for i in range(nn):
            for q in range(dd):
                proj = b.affine([(W[p][q], node[i][p]) for p in range(dd)], b1[i][q])
                taps = [(h[k][q], node[(i - k) % nn][q]) for k in range(nn) if i - k >= 0 or layer.mode is Mode.CYCLIC]
                conv = b.affine(taps, b2[i][q])
                if b.zero not in (proj, conv):
                    nxt[i][q] = b.emit(Gate(Op.MUL, (proj, conv), ()))
        node = nxt
        nodes.append(node)
    return b, nodes


def make(rng: random.Random, *, layers: int | None = None, symbols: bool = True, shape: tuple[int, int] | None = None) -> Made:
    nn, dd = shape or rng.choice([(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2), (2, 3), (4, 1), (5, 1), (4, 2)])
    L = rng.choice([0, 1, 1, 2, 2, 3]) if layers is None else layers
    if (L == 3 and nn * dd > 4) or (L == 2 and nn * dd > 6):
        nn, dd = 2, 2
    stack = tuple(random_layer(rng, nn, dd, symbols) for _ in range(L))
    cells = sorted(all_cells(nn, dd))
    entry = frozenset(c for c in cells if rng.random() < 0.7)
    b, nodes = spec_nodes(nn, dd, stack, entry)
    last = nodes[-1]
    live = {(i, j) for i in range(nn) for j in range(dd) if last[i][j] != b.zero}
    exit_ = frozenset(live | {c for c in cells if rng.random() < 0.2})
    outputs = [last[i][j] for i in range(nn) for j in range(dd)]
    cps = []
    for k in sorted(rng.sample(range(L + 1), rng.choice([0, 0, 1, 2]) if L else 0)):
        cps.append((k, tuple(Cell.node(i, j, nodes[k][i][j]) for i in range(nn) for j in range(dd) if nodes[k][i][j] != b.zero)))
    return Made(nn, dd, stack, entry, exit_, b.gates, outputs, cps, b.zero)


def bump(x: Any) -> Any:
    return x + 1


def perturb(rng: random.Random, m: Made, kind: str) -> tuple[Made, str]:
    """``m`` with one thing changed (``kind``); the second value says what."""
    m = dataclasses.replace(m, gates=list(m.gates), outputs=list(m.outputs), checkpoints=list(m.checkpoints))
    nn, dd, nd = m.nn, m.dd, m.nn * m.dd
    cells = sorted(all_cells(nn, dd))
    if kind == "gate":
        k = rng.randrange(len(m.gates))
        g = m.gates[k]
        if g.op is Op.CONST:
            m.gates[k] = Gate(Op.CONST, (), (bump(g.coeffs[0]),))
        elif g.op is Op.LIN:
            co = list(g.coeffs)
            t = rng.randrange(2)
            co[t] = rng.choice([bump(co[t]), rng.choice(POOL), -co[t] if co[t] != 0 else 1])
            m.gates[k] = Gate(Op.LIN, g.args, tuple(co))
        else:
            m.gates[k] = Gate(Op.LIN, g.args, (1, 1))
        return m, f"gate {k}: {g} -> {m.gates[k]}"
    if kind == "exit-drop" and m.exit:
        c = rng.choice(sorted(m.exit))
        m.exit = m.exit - {c}
        if rng.random() < 0.7:
            m.outputs[c[0] * dd + c[1]] = m.zero
        return m, f"exit cell {c} dropped"
    if kind == "exit-add":
        c = rng.choice(cells)
        m.exit = m.exit | {c}
        if rng.random() < 0.5:
            m.outputs[c[0] * dd + c[1]] = rng.randrange(nd + len(m.gates))
        return m, f"exit cell {c} added"
    if kind == "entry-drop" and m.entry:
        c = rng.choice(sorted(m.entry))
        m.entry = m.entry - {c}
        if rng.random() < 0.5:  # a spec for the smaller interface: a true claim
            fresh = dataclasses.replace(m)
            b, nodes = spec_nodes(nn, dd, m.layers, m.entry)
            last = nodes[-1]
            fresh.gates, fresh.zero = b.gates, b.zero
            fresh.outputs = [last[i][j] if (i, j) in m.exit else b.zero for i in range(nn) for j in range(dd)]
            fresh.checkpoints = [(k, tuple(Cell.node(i, j, nodes[k][i][j]) for i in range(nn) for j in range(dd)
                                           if nodes[k][i][j] != b.zero)) for k, _ in m.checkpoints]
            return fresh, f"entry cell {c} dropped, spec rebuilt"
        return m, f"entry cell {c} dropped"
    if kind == "checkpoint" and m.checkpoints:
        t = rng.randrange(len(m.checkpoints))
        layer, cps = m.checkpoints[t]
        how = rng.choice(["node", "drop", "add", "layer", "coeff", "term"])
        cl = list(cps)
        if how == "node" and cl:
            s = rng.randrange(len(cl))
            cl[s] = Cell.node(cl[s].row, cl[s].col, rng.randrange(nd + len(m.gates)))
        elif how == "drop" and cl:
            cl.pop(rng.randrange(len(cl)))
        elif how == "coeff" and cl:
            s = rng.randrange(len(cl))
            cl[s] = Cell(cl[s].row, cl[s].col, cl[s].terms, rng.choice(POOL))
        elif how == "term" and cl:  # a second term: 0·node (declares the node), a number or a symbol times it
            s = rng.randrange(len(cl))
            extra = (rng.randrange(nd + len(m.gates)), rng.choice([0, 0, *POOL]))
            cl[s] = Cell(cl[s].row, cl[s].col, (*cl[s].terms, extra), cl[s].const)
        elif how == "layer":
            layer = layer + rng.choice([-1, 1])
        else:
            free = [c for c in cells if c not in {(x.row, x.col) for x in cl}]
            if free:
                i, j = rng.choice(free)
                cl.append(Cell.node(i, j, rng.randrange(nd + len(m.gates))))
        m.checkpoints[t] = (layer, tuple(cl))
        return m, f"checkpoint {t} ({how})"
    if kind == "weight" and m.layers:
        t = rng.randrange(len(m.layers))
        layer = m.layers[t]
        name = rng.choice(["W", "b1", "h", "b2"])
        g: Grid = getattr(layer, name)
        i, j = rng.randrange(g.rows), rng.randrange(g.cols)
        new = g.paint(i, i + 1, j, j + 1, rng.choice([0, bump(g.get(i, j)), rng.choice(POOL)]))
        m.layers = (*m.layers[:t], dataclasses.replace(layer, **{name: new}), *m.layers[t + 1:])
        return m, f"layer {t} {name}[{i}][{j}]"
    if kind == "swap":
        a, b = rng.randrange(nd), rng.randrange(nd)
        m.outputs[a], m.outputs[b] = m.outputs[b], m.outputs[a]
        return m, f"outputs {a} and {b} swapped"
    return m, "unchanged"


KINDS = ["none", "gate", "exit-drop", "exit-add", "entry-drop", "checkpoint", "weight", "swap"]


def expect_outcome(frag: Fragment, spec: Spec | tuple[Circuit, list[tuple[int, tuple[Cell, ...]]]], what: str, *,
                   complete: bool = True) -> Judgement:
    """``prove_fragment`` agrees with :func:`judge`: an error for a malformed spec; ``proved``
    exactly when the claim holds (``complete=False``: only never ``proved`` for a false claim);
    ``exact`` false exactly when the exit claim is false; and without the exact check (the
    certificate alone decides) never ``proved`` for a false claim either."""
    j = judge(frag, spec)
    if j.malformed:
        with pytest.raises(SymverifyError):
            prove_fragment(frag)
        return j
    p = prove_fragment(frag)
    assert p.exact is j.exit_ok, (what, j, p)
    if j.holds:
        if complete:
            assert p.verdict is Verdict.PROVED and p.compositional, (what, p)
    else:
        assert p.verdict is not Verdict.PROVED and not p.proved, (what, j, p)
        assert p.verdict is (Verdict.REFUTED if not j.exit_ok else Verdict.UNKNOWN), (what, j, p)
    alone = prove_fragment(frag, exact=False)
    assert alone.exact is None and alone.compositional is p.compositional, (what, p, alone)
    return j


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(KINDS))
def test_prove_fragment_agrees_with_the_oracle_on_random_fragments(seed: int, kind: str) -> None:
    rng = random.Random(seed)
    m, what = perturb(rng, make(rng), kind)
    expect_outcome(m.fragment(), (m.circuit(), m.checkpoints), what, complete=kind != "checkpoint")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_random_compositions_are_judged_and_proved_alike(seed: int, check_interfaces: bool) -> None:
    """Lemma H.11 as built by ``compose``: a stack of true claims with clean interfaces is a true
    claim (by the oracle) and is proved; an unchecked unclean stack is proved exactly when the
    oracle says it holds; a refused stack is refused for its interfaces or its padding."""
    rng = random.Random(seed)
    small = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)]
    first = make(rng, layers=rng.choice([0, 1, 1, 2]), shape=rng.choice(small))
    second = make(rng, layers=rng.choice([0, 1]), shape=rng.choice(small))
    fa, fb = first.fragment(), second.fragment()
    try:
        stack = compose(fa, fb, check_interfaces=check_interfaces)
    except SymverifyError as e:
        assert str(e).startswith(("compose:", "pad:")), e
        return
    nn, dd = stack.inner_n, stack.inner_d
    clean = not (pad(fa, nn, dd).exit - pad(fb, nn, dd).entry)
    j = expect_outcome(stack, stack.spec(), f"{fa.name} ; {fb.name}", complete=clean)
    assert j.holds or not clean, j


@pytest.mark.parametrize("seed", range(6))
def test_both_polynomial_backends_give_the_same_verdict(seed: int) -> None:
    rng = random.Random(1000 + seed)
    m, what = perturb(rng, make(rng, layers=rng.choice([1, 2])), rng.choice(["none", "gate", "weight"]))
    frag = m.fragment()
    j = judge(frag, m.spec())
    if j.malformed:
        return
    flint, sympy_ = prove_fragment(frag), prove_fragment(frag, backend="sympy")
    assert flint.verdict is sympy_.verdict is (Verdict.PROVED if j.holds else Verdict.REFUTED), (what, flint, sympy_)


def test_the_generator_makes_true_claims_and_the_oracle_sees_false_ones() -> None:
    """The unperturbed spec always holds; a perturbation is false often enough to matter."""
    false = 0
    for seed in range(40):
        rng = random.Random(seed)
        m = make(rng)
        assert judge(m.fragment(), m.spec()).holds, seed
        p, _ = perturb(rng, m, "gate")
        false += not judge(p.fragment(), p.spec()).holds
    assert false >= 10


# ---- the shipped gadget families ---------------------------------------------------------------------


def _e0(rows: int, cols: int) -> Grid:
    return Grid.from_cells(rows, cols, {(0, c): 1 for c in range(cols)})


GADGETS: list[tuple[str, Callable[[], Fragment]]] = [
    ("linear_map 1x1", lambda: prim.linear_map(Grid.symbolic("W", 1, 1), 1)),
    ("linear_map 3x2", lambda: prim.linear_map(Grid.symbolic("W", 2, 2), 3)),
    ("linear_map numeric", lambda: prim.linear_map(Grid.from_rows([[HUGE, 0], [Fraction(1, 3), -1]]), 2)),
    ("identity 1x1", lambda: prim.identity(1, 1)),
    ("identity 3x2", lambda: prim.identity(3, 2)),
    ("affine_map", lambda: prim.affine_map(Grid.symbolic("W", 2, 2), 3, Grid.from_cells(3, 2, {(0, 1): sym("c")}), rows=[0, 2])),
    ("affine_map all rows", lambda: prim.affine_map(Grid.from_rows([[1, 2], [0, 1]]), 2, Grid.full(2, 2, 5))),
    ("convolution causal 2x1", lambda: prim.convolution(Grid.symbolic("h", 2, 1), "causal")),
    ("convolution causal 3x2", lambda: prim.convolution(Grid.symbolic("h", 3, 2), Mode.CAUSAL)),
    ("convolution cyclic 3x2", lambda: prim.convolution(Grid.symbolic("h", 3, 2), "cyclic")),
    ("fixed_gate 2x2", lambda: prim.fixed_gate(Grid.symbolic("B", 2, 2))),
    ("fixed_gate sparse", lambda: prim.fixed_gate(Grid.from_cells(3, 1, {(1, 0): Fraction(-7, 2**89 - 1)}))),
    ("constant", lambda: prim.constant(Grid.symbolic("R", 2, 2))),
    ("shift_down 3x1 s=0", lambda: prim.shift_down(3, 1, 0)),
    ("shift_down 3x2 s=1", lambda: prim.shift_down(3, 2, 1)),
    ("shift_down 4x1 s=3", lambda: prim.shift_down(4, 1, 3)),
    ("shift_up 4x1 s=1", lambda: prim.shift_up(4, 1, 1)),
    ("shift_up 3x2 s=2", lambda: prim.shift_up(3, 2, 2)),
    ("cyclic_shift 3x1 s=-1", lambda: prim.cyclic_shift(3, 1, -1)),
    ("cyclic_shift 4x2 s=2", lambda: prim.cyclic_shift(4, 2, 2)),
    ("running_add n=1", lambda: prim.running_add(1, 2, 1)),
    ("running_add n=2", lambda: prim.running_add(2, 5, 2)),
    ("move_rows down", lambda: prim.move_rows(5, 2, 0, 2, 2)),
    ("move_rows up", lambda: prim.move_rows(5, 2, 3, 0, 2, cols=[1])),
    ("move_cols", lambda: prim.move_cols(2, 4, 0, 2, 2, rows=[1])),
    ("move_cols all rows", lambda: prim.move_cols(3, 3, 2, 0, 1)),
    ("generic_layer causal 1x1", lambda: prim.generic_layer(1, 1)),
    ("generic_layer causal 2x2", lambda: prim.generic_layer(2, 2)),
    ("generic_layer cyclic 3x1", lambda: prim.generic_layer(3, 1, "cyclic")),
    ("remember_rows const 1 layer", lambda: remember_rows(4, 1, 2, 1, _e0(2, 1), ConstF(Grid.symbolic("F", 2, 1)))),
    ("remember_rows channel 1 layer", lambda: remember_rows(4, 2, 2, 1, _e0(2, 1), ChannelF((1,)))),
    ("remember_rows const 2 layers", lambda: remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1)))),
    ("remember_rows channel 2 layers", lambda: remember_rows(8, 4, 2, 2, Grid.symbolic("h", 2, 2), ChannelF((3, 0)), cols=(1, 2))),
    ("remember_channels H.21", lambda: remember_channels(1, 5, 2, 1, _e0(1, 2), ChannelF((3, 4)))),
    ("remember_channels const", lambda: remember_channels(3, 3, 2, 1, Grid.symbolic("h", 3, 2), ConstF(Grid.symbolic("F", 3, 2)), m=3)),
    ("rows_to_channels 2x1", lambda: rows_to_channels(2, 1, 2, 2)),
    ("rows_to_channels 3x2", lambda: rows_to_channels(3, 2, 3, 6)),
    ("rows_to_channels no layers", lambda: rows_to_channels(1, 3, 1, 3)),
    ("channels_to_rows 3 by 1", lambda: channels_to_rows(3, 1, 3, 3)),
    ("channels_to_rows 5 by 2", lambda: channels_to_rows(5, 2, 3, 6)),
    ("channels_to_rows no layers", lambda: channels_to_rows(2, 3, 1, 3)),
    ("pad shift_up", lambda: pad(prim.shift_up(3, 1, 1), 5, 2)),
    ("pad generic cyclic", lambda: pad(prim.generic_layer(2, 1, "cyclic"), 3, 2)),
    ("compose shifts", lambda: compose(prim.shift_down(4, 1, 1), prim.shift_up(4, 1, 1))),
    ("compose three", lambda: compose(prim.move_rows(4, 2, 0, 2, 2), prim.running_add(2, 4, 2),
                                      prim.fixed_gate(Grid.symbolic("B", 4, 2)))),
    ("compose padded", lambda: compose(prim.generic_layer(1, 1), prim.shift_down(3, 2, 1), prim.identity(3, 2))),
    ("compose gate leaving r zero ; remember", lambda: compose(prim.fixed_gate(Grid.from_cells(6, 1, {(0, 0): 1, (1, 0): sym("g")})),
                                                               remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1),
                                                                             ConstF(Grid.symbolic("F", 2, 1))))),
    ("compose constant ; add ; add", lambda: compose(prim.constant(Grid.from_cells(4, 1, {(1, 0): 3})), prim.running_add(1, 4, 1),
                                                     prim.running_add(1, 4, 1))),
    ("compose remember", lambda: compose(prim.move_rows(6, 1, 0, 0, 3),
                                         remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1))),
                                         prim.shift_down(6, 1, 2))),
]


def _moved(frag: Fragment, t: int, name: str, i: int, j: int, value: Any) -> Fragment:
    layer = frag.layers[t]
    g: Grid = getattr(layer, name)
    moved = dataclasses.replace(layer, **{name: g.paint(i, i + 1, j, j + 1, value)})
    return Fragment(frag.name, frag.inner_n, frag.inner_d, (*frag.layers[:t], moved, *frag.layers[t + 1:]),
                    frag.entry, frag.exit, frag.bounds, frag.build_spec)


def breaking_weight(frag: Fragment, spec: Spec, t: int) -> tuple[Fragment, str] | None:
    """The first weight of layer ``t`` (nonzero ones first) whose move by 1 makes the claim false."""
    layer = frag.layers[t]
    sites = [(name, i, j) for name, g in layer.grids() for i in range(g.rows) for j in range(g.cols)]
    sites.sort(key=lambda s: getattr(layer, s[0]).get(s[1], s[2]) == 0)
    for name, i, j in sites:
        moved = _moved(frag, t, name, i, j, getattr(layer, name).get(i, j) + 1)
        if not judge(moved, spec).holds:
            return moved, f"layer {t} {name}[{i}][{j}]"
    return None


@pytest.mark.parametrize("build", [g[1] for g in GADGETS], ids=[g[0] for g in GADGETS])
def test_shipped_gadget_is_proved_and_a_weight_that_matters_is_not(build: Callable[[], Fragment]) -> None:
    frag = build()
    spec = frag.spec()
    assert judge(frag, spec).holds
    p = prove_fragment(frag)
    assert p.verdict is Verdict.PROVED and p.compositional and p.exact and is_sealed(p), p
    assert p.ok, (p.resources, p.bounds)
    L = len(frag.layers)
    for t in sorted({0, L // 2, L - 1} if L else set()):
        found = breaking_weight(frag, spec, t)
        assert found is not None, f"no weight of layer {t} matters"
        moved, what = found
        expect_outcome(moved, spec, what)


def test_the_gadget_oracle_sees_a_planted_bug() -> None:
    """A shift_down built with the printed proof's lag s + 1 is judged false, and not proved."""
    right = prim.shift_down(3, 1, 1)
    wrong_layer = prim.shift_down(3, 1, 2).layers[0]
    wrong = Fragment("planted", 3, 1, (wrong_layer,), right.entry, right.exit, right.bounds, right.build_spec)
    assert not judge(wrong, wrong.spec()).holds
    assert prove_fragment(wrong).verdict is Verdict.REFUTED


# ---- validation ---------------------------------------------------------------------------------------

BASE = prim.running_add(1, 2, 1)  # 2×1 state, 2 layers, a checkpoint after layer 1
BASE_SPEC = BASE.spec()
GOOD_CP = BASE_SPEC.checkpoints[0][1]


def _frag(**changes: Any) -> Fragment:
    fields = dict(name="f", inner_n=2, inner_d=1, layers=BASE.layers, entry=BASE.entry, exit=BASE.exit, bounds={},
                  build_spec=BASE.build_spec)
    fields.update(changes)
    return Fragment(**fields)  # type: ignore[arg-type]


def _with(checkpoints: Any = (), circuit: Any = None) -> Fragment:
    return _frag(build_spec=lambda: Spec(circuit if circuit is not None else BASE_SPEC.circuit, checkpoints))


BAD_FRAGMENTS: list[tuple[str, Callable[[], object], str]] = [
    ("entry cell out of range", lambda: _frag(entry={(2, 0)}), r"entry interface: cells \(2, 0\) are outside the 2×1 state"),
    ("entry cell negative", lambda: _frag(entry={(0, -1)}), r"cells \(0, -1\) are outside"),
    ("exit cell out of range", lambda: _frag(exit=[(0, 1)]), r"exit interface: cells \(0, 1\) are outside"),
    ("entry float cell", lambda: _frag(entry=[(0.0, 0), (1, 0)]), r"entry interface: expected cells \(row, col\) of two ints, found \(0.0, 0\)"),
    ("entry bool cell", lambda: _frag(entry=[(True, 0)]), r"of two ints, found \(True, 0\)"),
    ("entry numpy bool cell", lambda: _frag(entry=[(np.bool_(True), 0)]), r"of two ints, found"),
    ("exit triple", lambda: _frag(exit=[(0, 0, 1)]), r"exit interface: expected cells \(row, col\) of two ints, found \(0, 0, 1\)"),
    ("entry bare ints", lambda: _frag(entry=[0, 1]), r"of two ints, found 0"),
    ("entry string", lambda: _frag(entry="01"), r"entry interface: expected a collection of \(row, col\) cells, found str"),
    ("entry dict", lambda: _frag(entry={(0, 0): False}), r"found dict"),
    ("entry None", lambda: _frag(entry=None), r"found NoneType"),
    ("layers set", lambda: _frag(layers=set(BASE.layers)), r"layers: expected a sequence of layers in order, found set"),
    ("layers dict", lambda: _frag(layers=dict.fromkeys(BASE.layers)), r"found dict"),
    ("layer not a Layer", lambda: _frag(layers=(BASE.layers[0], "L")), r"layer 1: expected a Layer, found str"),
    ("name not str", lambda: _frag(name=7), r"fragment name: expected a str, found int 7"),
    ("bounds float", lambda: _frag(bounds={"layers": 2.0}), r"bounds: expected resource name \(str\) → int or Fraction, found 'layers' → float"),
    ("bounds bool", lambda: _frag(bounds={"layers": True}), r"found 'layers' → bool"),
    ("bounds pairs", lambda: _frag(bounds=[("layers", 2)]), r"bounds: expected a mapping .* found list"),
    ("build_spec not callable", lambda: _frag(build_spec=BASE_SPEC), r"build_spec: expected a function returning a Spec"),
    ("build_spec returns a circuit", lambda: prove_fragment(_frag(build_spec=lambda: BASE_SPEC.circuit)),
     r"expected build_spec to return a Spec, found Circuit"),
    ("spec circuit not a circuit", lambda: Spec("c"), r"spec circuit: expected a Circuit, found str"),  # type: ignore[arg-type]
    ("spec wrong shape", lambda: prove_fragment(_with(circuit=Circuit(1, 2, BASE_SPEC.circuit.gates, BASE_SPEC.circuit.outputs))),
     r"the spec must read and list the whole 2×1 state; found a 1×2 circuit"),
    ("spec too few outputs", lambda: prove_fragment(_with(circuit=Circuit(2, 1, BASE_SPEC.circuit.gates, BASE_SPEC.circuit.outputs[:1]))),
     r"found a 2×1 circuit with 1 outputs"),
    ("spec reads outside entry", lambda: prove_fragment(_frag(entry={(1, 0)})), r"reads cells \(0, 0\) outside the entry interface"),
    ("checkpoints dict", lambda: Spec(BASE_SPEC.circuit, {1: GOOD_CP}), r"spec checkpoints: expected a sequence of \(layer, cells\) pairs, found dict"),
    ("checkpoint triple", lambda: Spec(BASE_SPEC.circuit, ((1, GOOD_CP, 0),)), r"spec checkpoint 0: expected a \(layer, cells\) pair"),
    ("checkpoint layer bool", lambda: Spec(BASE_SPEC.circuit, ((True, GOOD_CP),)), r"spec checkpoint 0: expected an int layer ≥ 0, found True"),
    ("checkpoint layer float", lambda: Spec(BASE_SPEC.circuit, ((1.0, GOOD_CP),)), r"found 1.0"),
    ("checkpoint layer str", lambda: Spec(BASE_SPEC.circuit, (("1", GOOD_CP),)), r"found '1'"),
    ("checkpoint layer negative", lambda: Spec(BASE_SPEC.circuit, ((-1, GOOD_CP),)), r"found -1"),
    ("checkpoint cells dict", lambda: Spec(BASE_SPEC.circuit, ((1, {GOOD_CP[0]: 1}),)), r"expected a collection of Cells, found dict"),
    ("checkpoint cell not a Cell", lambda: Spec(BASE_SPEC.circuit, ((1, ((1, 0, 2),)),)), r"expected Cell objects, found tuple"),
    ("checkpoint layer past L", lambda: prove_fragment(_with(((3, GOOD_CP),))), r"checkpoint after layer 3 is outside \[0, 2\]"),
    ("checkpoints out of order", lambda: prove_fragment(_with(((2, ()), (1, GOOD_CP)))), r"checkpoints must come in order of layer"),
    ("checkpoint cell outside the state", lambda: prove_fragment(_with(((1, (Cell.node(2, 0, 2),)),))),
     r"checkpoint 0 \(after layer 1\): cell \(2, 0\) is outside the 2×1 state"),
    ("checkpoint cell twice", lambda: prove_fragment(_with(((1, GOOD_CP + GOOD_CP),))), r"cell \(1, 0\) is listed twice"),
    ("checkpoint node missing", lambda: prove_fragment(_with(((1, (Cell.node(1, 0, 99),)),))), r"names node %99, but the spec has 4 nodes"),
    ("checkpoint node missing (boundaries)", lambda: fragment_boundaries(_with(((1, (Cell.node(1, 0, 99),)),)), (), 0),
     r"names node %99"),
    ("checkpoint names an unknown parameter", lambda: prove_fragment(_with(((1, (Cell(1, 0, ((2, 1),), sym("q")),)),))),
     r"checkpoint 0 \(after layer 1\): uses the parameter\(s\) \['q'\], which neither the spec nor the layers have"),
    ("checkpoint reads outside entry", lambda: prove_fragment(_frag(entry={(0, 0)}, build_spec=lambda: Spec(
        _masked_spec(), ((0, (Cell.node(1, 0, 1),)),)))),
     r"checkpoint 0 \(after layer 0\): reads cells \(1, 0\) outside the entry interface"),
    ("compose a part whose checkpoint names a missing node", lambda: compose(_with(((1, (Cell.node(1, 0, 99),)),)),
                                                                             prim.identity(2, 1)).spec(), r"fragment 'f': checkpoint 0 .* names node %99"),
    ("pad a part whose checkpoint names a missing node", lambda: pad(_with(((1, (Cell.node(1, 0, 99),)),)), 3, 1).spec(),
     r"names node %99"),
    ("compose a part whose spec leaves its exit", lambda: compose(_frag(exit=()), prim.identity(2, 1)).spec(),
     r"fragment 'f': cell \(0, 0\) is outside the exit interface but the spec gives it node"),
    ("boundaries with tuples for cells", lambda: fragment_boundaries(prim.identity(2, 1), [(0, 0, 1)], 0),
     r"boundaries: expected entry Cells, found tuple \(0, 0, 1\)"),
    ("boundaries with a dict of cells", lambda: fragment_boundaries(prim.identity(2, 1), {Cell.node(0, 0, 0): 1}, 0),
     r"expected a collection of entry Cells, found dict"),
    ("boundaries with a cell twice", lambda: fragment_boundaries(prim.identity(2, 1), [Cell.node(0, 0, 0), Cell.node(0, 0, 1)], 0),
     r"entry cell \(0, 0\) is listed twice"),
    ("boundaries after layer True", lambda: fragment_boundaries(prim.identity(2, 1), [Cell.node(0, 0, 0)], True),
     r"expected an int first_layer ≥ 0, found True"),
    ("boundaries after layer -1", lambda: fragment_boundaries(prim.identity(2, 1), [Cell.node(0, 0, 0)], -1), r"found -1"),
    ("spec builder cell past the row", lambda: SpecBuilder(2, 2).cell(0, 2), r"spec builder: cell \(0, 2\) is not a cell of the 2×2 state"),
    ("spec builder cell past the state", lambda: SpecBuilder(2, 2).cell(2, 0), r"cell \(2, 0\) is not a cell"),
    ("spec builder cell as bool", lambda: SpecBuilder(2, 2).cell(True, 0), r"cell \(True, 0\) is not a cell"),
    ("spec builder exit key outside", lambda: SpecBuilder(2, 2).circuit({(5, 0): 0}, "s"), r"\(5, 0\) is not a cell of the 2×2 state"),
    ("spec builder exit as pairs", lambda: SpecBuilder(2, 2).circuit([((0, 0), 0)], "s"), r"expected a mapping of cells to nodes, found list"),
    ("prove a model", lambda: prove_fragment(BASE.model()), r"prove_fragment: expected a Fragment, found Model"),  # type: ignore[arg-type]
    ("prove exact as int", lambda: prove_fragment(BASE, exact=0), r"prove_fragment exact: expected True or False, found int 0"),  # type: ignore[arg-type]
    ("prove exact as str", lambda: prove_fragment(BASE, exact="no"), r"found str 'no'"),  # type: ignore[arg-type]
    ("proof by hand with ints", lambda: FragmentProof("f", 1, True), r"expected compositional a bool and exact a bool or None"),  # type: ignore[arg-type]
    ("proof by hand exact str", lambda: FragmentProof("f", True, "yes"), r"found bool True and str 'yes'"),  # type: ignore[arg-type]
]


def _masked_spec() -> Circuit:
    """A 2×1 spec reading only cell (0, 0): output (0, 0) = 1, (1, 0) = x0 (running_add with S = 0)."""
    return Circuit(2, 1, (Gate(Op.CONST, (), (1,)),), (2, 0), "masked")


@pytest.mark.parametrize("build,match", [(b[1], b[2]) for b in BAD_FRAGMENTS], ids=[b[0] for b in BAD_FRAGMENTS])
def test_bad_input_raises_a_clear_symverify_error(build: Callable[[], object], match: str) -> None:
    with pytest.raises(SymverifyError, match=match):
        build()


def test_accepted_forms_mean_what_the_docstrings_say() -> None:
    """Sets and duplicates are one cell each, numpy integers are ints, a generator of layers is
    read in order, a set of checkpoint cells is those cells, and a fragment with no layers claims
    that the spec is the identity on clean states."""
    listed = _frag(entry=[(0, 0), (0, 0), (1, 0)], exit=BASE.exit)
    numpy = _frag(entry={(np.int64(0), np.int32(0)), (1, np.uint8(0))})
    assert listed.entry == numpy.entry == BASE.entry
    assert SpecBuilder(3, 2).cell(np.int64(2), np.int32(1)) == 5
    assert all(type(x) is int for c in numpy.entry for x in c)
    assert _frag(layers=(layer for layer in BASE.layers)).layers == BASE.layers
    spec = Spec(BASE_SPEC.circuit, [(np.int64(1), set(GOOD_CP))])
    assert spec.checkpoints == ((1, GOOD_CP),) and type(spec.checkpoints[0][0]) is int
    assert prove_fragment(_frag(build_spec=lambda: spec)).verdict is Verdict.PROVED
    empty = rows_to_channels(1, 2, 2, 2)  # no layers; entry row 0 is not the whole state: the mask alone
    assert empty.layers == () and prove_fragment(empty).verdict is Verdict.PROVED
    lying = Fragment("no layers", 1, 2, (), all_cells(1, 2), all_cells(1, 2), {},
                     lambda: Spec(Circuit(1, 2, (), (1, 0)), ()))  # claims a swap with no layers
    assert prove_fragment(lying).verdict is Verdict.REFUTED


def test_a_non_full_entry_is_masked_so_the_claim_is_about_clean_states_only() -> None:
    """running_add with S claimed 0 (entry = x only): rows become (1, x), which is proved; the same
    spec with S allowed in the entry is false (S is added) and refuted."""
    clean = _frag(entry={(0, 0)}, build_spec=lambda: Spec(_masked_spec()))
    assert prove_fragment(clean).verdict is Verdict.PROVED
    assert judge(clean, clean.spec()).holds
    dirty = _frag(build_spec=lambda: Spec(_masked_spec()))
    assert not judge(dirty, dirty.spec()).holds
    assert prove_fragment(dirty).verdict is Verdict.REFUTED


# ---- the objects: pickling, copying, equality, hash, the verdict rule ---------------------------------


@pytest.mark.parametrize("build", [g[1] for g in GADGETS[::7]], ids=[g[0] for g in GADGETS[::7]])
def test_fragments_pickle_copy_compare_and_hash(build: Callable[[], Fragment]) -> None:
    frag = build()
    for other in (pickle.loads(pickle.dumps(frag)), copy.copy(frag), copy.deepcopy(frag)):
        assert other == frag and hash(other) == hash(frag)
        assert other.spec() == frag.spec()
        assert prove_fragment(other).verdict is Verdict.PROVED
    assert len({frag, copy.deepcopy(frag)}) == 1
    renamed = dataclasses.replace(frag, name=frag.name + "'")
    assert renamed != frag and renamed.spec() == frag.spec()
    specless = dataclasses.replace(frag, build_spec=None)
    assert specless == frag  # equality never looks at the spec ...
    with pytest.raises(SymverifyError, match="has no specification"):
        pickle.loads(pickle.dumps(specless)).spec()  # ... but a copy keeps having none


def test_fragment_proofs_pickle_copy_compare_hash_and_stay_sealed() -> None:
    good = prove_fragment(prim.shift_down(3, 1, 1))
    bad = prove_fragment(_frag(build_spec=lambda: Spec(_masked_spec())))
    for p in (good, bad):
        for other in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
            assert other == p and hash(other) == hash(p) and other.verdict is p.verdict
            assert is_sealed(other)
    assert good != bad and good.verdict is Verdict.PROVED and bad.verdict is Verdict.REFUTED
    forged = dataclasses.replace(bad, exact=True, compositional=True)
    assert forged.verdict is Verdict.PROVED and not is_sealed(forged)  # a hand-made proof carries no seal


VERDICTS = [((True, True), Verdict.PROVED), ((True, None), Verdict.PROVED),
            ((False, True), Verdict.UNKNOWN), ((False, None), Verdict.UNKNOWN), ((False, False), Verdict.REFUTED)]


def test_two_exact_checks_that_disagree_are_a_prover_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checked certificate with differing exact polynomials is a defect of one of the two exact
    checks: a ``ProverError``, never a verdict (it was ``refuted`` with no re-checked counterexample),
    by hand and from ``prove_fragment`` (its exact comparison made to disagree)."""
    with pytest.raises(ProverError, match=r"fragment proof 'f': the certificate check held but the exact polynomials differ"):
        FragmentProof("f", True, False, "cell (0, 0)")
    monkeypatch.setattr(fragment_prover, "_compare_exactly", lambda *a: (False, "exact: cell (0, 0) differs"))
    with pytest.raises(ProverError, match=r"two exact checks disagree.*expected them to agree"):
        prove_fragment(prim.shift_down(3, 1, 1))


@pytest.mark.parametrize("checks,verdict", VERDICTS, ids=[f"{c}-{e}" for (c, e), _ in VERDICTS])
def test_the_verdict_rule_and_its_one_door(monkeypatch: pytest.MonkeyPatch, checks: tuple[bool, bool | None],
                                           verdict: Verdict) -> None:
    """``proved`` when the certificate checked and the exact comparison did not fail (None: not
    run); ``refuted`` when the exact polynomials differ; else ``unknown``; always through
    ``outcome.exact_comparison``."""
    calls: list[object] = []
    real = fragment_prover.exact_comparison

    def spy(equal: bool | None) -> Verdict:
        calls.append(equal)
        return real(equal)

    monkeypatch.setattr(fragment_prover, "exact_comparison", spy)
    p = FragmentProof("f", *checks)
    assert p.verdict is verdict and calls
    assert p.proved is (verdict is Verdict.PROVED)
    assert p.ok is (verdict is Verdict.PROVED)


def test_a_large_exact_comparison_runs_in_the_guarded_child_and_still_decides() -> None:
    """Six squaring layers on 2×2: a certified estimate of millions of monomials sends the exact
    comparison to the memory-limited child, which still finds the difference."""
    layer = Layer.make(2, 2, W=Grid.full(2, 2, 1), b1=Grid.full(2, 2, 1), h=Grid.from_cells(2, 2, {(0, 0): 1, (0, 1): 1}),
                       b2=Grid.full(2, 2, 1))
    spec = Spec(Circuit(2, 2, (Gate(Op.CONST, (), (0,)),), (4, 4, 4, 4)))
    p = prove_fragment(Fragment("six", 2, 2, (layer,) * 6, all_cells(2, 2), all_cells(2, 2), {}, lambda: spec))
    assert p.verdict is Verdict.REFUTED and p.exact is False and "exact: cell (0, 0) differs" in p.failure, p


def test_a_stopped_certificate_check_says_why() -> None:
    layer = Layer.make(2, 2, W=Grid.full(2, 2, 1), b1=Grid.full(2, 2, 1), h=Grid.from_cells(2, 2, {(0, 0): 1}),
                       b2=Grid.full(2, 2, 1))
    spec = Spec(Circuit(2, 2, (Gate(Op.CONST, (), (0,)),), (4, 4, 4, 4)))
    p = prove_fragment(Fragment("deep", 2, 2, (layer,) * 8, all_cells(2, 2), all_cells(2, 2), {}, lambda: spec), exact=False)
    assert p.verdict is Verdict.UNKNOWN and p.failure.startswith("certificate: check stopped (budget): stage 0"), p.failure


def test_prove_fragment_without_the_exact_check_rests_on_the_certificate() -> None:
    right = prove_fragment(prim.running_add(1, 2, 1), exact=False)
    assert right.exact is None and right.verdict is Verdict.PROVED and is_sealed(right)
    wrong = prove_fragment(_frag(build_spec=lambda: Spec(_masked_spec())), exact=False)
    assert wrong.exact is None and not wrong.compositional and wrong.verdict is Verdict.UNKNOWN


DEEP = """
import time
from symverify.kernel.gadgets.fragment import Fragment, Spec, all_cells
from symverify.kernel.ir.baseconv import Layer
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.fragment import prove_fragment

# (u·1 + 1) ⊙ (h ⊛ u + 1) twelve times: degree 4096 in 4 variables, far beyond any budget
layer = Layer.make(2, 2, W=Grid.full(2, 2, 1), b1=Grid.full(2, 2, 1), h=Grid.from_cells(2, 2, {(0, 0): 1, (0, 1): 1}),
                   b2=Grid.full(2, 2, 1))
spec = Spec(Circuit(2, 2, (Gate.const(0),), (4, 4, 4, 4)))
p = prove_fragment(Fragment("deep", 2, 2, (layer,) * 12, all_cells(2, 2), all_cells(2, 2), {}, lambda: spec))
print(p.verdict.value, p.exact, p.failure)
"""


def test_a_deep_fragment_is_not_expanded_beyond_the_budget() -> None:
    """The exact comparison runs under the exact method's guard: a fragment whose polynomials have
    billions of terms is not expanded (``exact`` None, ``unknown``) instead of exhausting memory,
    which aborted the process (FLINT) or ran for minutes."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = subprocess.run([sys.executable, "-c", DEEP], capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert done.returncode == 0, done.stderr[-500:]
    verdict, exact, failure = done.stdout.strip().split(" ", 2)
    assert (verdict, exact) == ("unknown", "None") and "exact: not compared (refused" in failure, done.stdout


@pytest.mark.parametrize("kw, msg", [
    ({"timeout": 0}, r"timeout: expected a positive number of seconds, found 0"),
    ({"timeout": True}, r"timeout: expected a positive number of seconds, found True"),
    ({"timeout": "5"}, r"timeout: expected a positive number of seconds, found '5'"),
    ({"max_monomials": -1}, r"max_monomials: expected an int ≥ 0, found -1"),
    ({"max_monomials": 2.5}, r"max_monomials: expected an int ≥ 0, found 2.5"),
    ({"memory_limit": 0}, r"memory_limit: expected an int ≥ 1, found 0"),
    ({"backend": "numpy"}, r"backend"),
])
def test_prove_fragment_budget_arguments_are_checked_as_verify_checks_them(kw: dict[str, Any], msg: str) -> None:
    from symverify.errors import UsageError

    with pytest.raises(UsageError, match=msg):
        prove_fragment(prim.shift_down(3, 1, 1), **kw)


def test_a_budget_that_stops_both_checks_is_unknown_never_proved() -> None:
    """A timeout that has passed before the first stage, and a monomial budget of 1: neither check
    is decided, the verdict is ``unknown`` and ``failure`` says what stopped each."""
    f = prim.shift_down(3, 2, 1)
    assert prove_fragment(f).verdict is Verdict.PROVED
    late = prove_fragment(f, timeout=1e-9)
    assert late.verdict is Verdict.UNKNOWN and not late.compositional and late.exact is None
    assert "certificate: check stopped (timeout)" in late.failure and "exact: not compared (the timeout passed)" in late.failure
    g = prim.generic_layer(2, 2)  # symbolic weights: polynomials of 6 monomials per cell
    assert prove_fragment(g).verdict is Verdict.PROVED
    tiny = prove_fragment(g, max_monomials=3)
    assert tiny.verdict is Verdict.UNKNOWN and not tiny.compositional and tiny.exact is None, tiny
    assert "certificate: check stopped (budget)" in tiny.failure and "exact: expansion stopped (budget)" in tiny.failure


def test_a_large_fragment_is_compared_in_a_memory_limited_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the exact method's in-process size the fragment's comparison runs in a child process
    (the guard's rule, ``exact.expand_guarded``): equal polynomials are still ``exact`` True, and a
    child that dies decides nothing (``exact`` None, the child's end and its memory limit in
    ``failure``; the certificate check alone still proves the claim)."""
    import os
    import signal

    import symverify.kernel.provers.exact as exact_method

    monkeypatch.setattr(exact_method, "IN_PROCESS_MONOMIALS", -1)  # every fragment counts as large
    ran: list[int] = []
    real = exact_method.expand_compare

    def in_child(*args: Any) -> Any:
        ran.append(os.getpid())
        return real(*args)

    monkeypatch.setattr(exact_method, "expand_compare", in_child)  # the fork inherits it
    f = prim.generic_layer(2, 2)
    p = prove_fragment(f, memory_limit=1 << 30)
    assert p.verdict is Verdict.PROVED and p.exact is True and not ran  # the child's list is the child's

    def killed(*args: Any) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(exact_method, "expand_compare", killed)
    dead = prove_fragment(prim.generic_layer(2, 2), memory_limit=1 << 30)  # a new object: no proof kept for it
    assert dead.exact is None and dead.compositional and dead.verdict is Verdict.PROVED
    assert f"exact: expansion stopped (crashed) in a process limited to {1 << 30} bytes" in dead.failure, dead.failure


def test_the_deadline_reaches_the_guarded_exact_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact comparison expands under the call's deadline (``time.monotonic()`` + timeout)."""
    seen: list[object] = []
    real = fragment_prover._compare_exactly

    def spy(circuit: Any, model: Any, opts: Any) -> Any:
        seen.append(opts.deadline)
        return real(circuit, model, opts)

    monkeypatch.setattr(fragment_prover, "_compare_exactly", spy)
    p = prove_fragment(prim.shift_down(3, 1, 1), timeout=3600)
    assert p.verdict is Verdict.PROVED and isinstance(seen[0], float) and seen[0] > time.monotonic() + 3000


def test_a_fragment_bound_reads_a_numpy_integer_by_its_value():
    """``Fragment(bounds={"layers": np.int64(2)})`` was refused (found int64), where ``Compiled``, ``Factorization``
    and the IR read a numpy integer by its value; a numpy bool is still refused."""
    frag = _frag(bounds={"layers": np.int64(0), "inner_n": np.uint64(2**64 - 1)})
    assert dict(frag.bounds) == {"layers": 0, "inner_n": 2**64 - 1} and type(frag.bounds["layers"]) is int
    assert frag.over_bound() == ["layers"]  # BASE has a layer; inner_n = 2 is within
    with pytest.raises(IRError, match=r"found 'layers' → bool"):
        _frag(bounds={"layers": np.True_})
