"""The link between the ∀-proved definitions (:mod:`symverify.parametric.library`) and the layers the
compilers and gadget builders emit.

* Every definition of ``library.ALL`` has a ∀ row in a proof script (``PROOF_MAP``), so no definition
  the compiler instantiates is unproved.
* Every definition at every parameter value of a small box inside its ranges (and its ``where``), with
  free symbols for its families and placements drawn to satisfy ``assume``, instantiates to a model that
  ``verify(..., method="exact")`` proves equal to the definition's spec evaluated directly
  (:func:`~symverify.kernel.parametric.concrete.spec_at`) on inputs that are 0 off ``entry``.
* In context: compiling circuits and kaleidoscopes, every call the compilers make to ``instantiate`` is
  of a library definition; each such instance (its real families and placements) is proved equal to the
  spec exactly, and every layer of the compiled model is an instantiated layer or one the emitter's
  pruning (:func:`symverify.kernel.semantics.support.prune_layer`) cut from one, only by dropping weights.
* ``instantiate`` at the ends of the declared ranges (``lo``, ``hi``, ``hi − 1``) and at ``where``'s
  boundary: accepted exactly inside, refused with ``ParametricError`` one step outside.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, sym
from symverify.kernel.parametric import concrete
from symverify.kernel.parametric.expr import ParametricError, predicates
from symverify.kernel.parametric.gadget import Gadget
from symverify.parametric import library as lib

ROOT = Path(__file__).resolve().parents[1]

# definition → (proof script, tier: "quick" = also in the quick run, "full" = full tier only)
PROOF_MAP: dict[str, tuple[str, str]] = {
    **{f.__name__: ("proofs/primitives.py", "quick") for f in lib.PRIMITIVES},
    "remember_rows": ("proofs/prop_h10_remember.py", "quick"),
    "remember_rows_two": ("proofs/prop_h10_remember.py", "quick"),
    "remember_channels": ("proofs/prop_h10_remember.py", "quick"),
    "butterfly_channel": ("proofs/lemma_h16_butterfly.py", "quick"),
    "block_scale": ("proofs/lemma_h16_butterfly.py", "quick"),
    "butterfly_sequence": ("proofs/lemma_h16_butterfly.py", "full"),
    "factor_channel": ("proofs/lemma_h16_butterfly.py", "full"),
    "factor_sequence": ("proofs/lemma_h16_butterfly.py", "full"),
    "gather": ("proofs/lemma_h18_kaleidoscope.py", "quick"),
    "scatter": ("proofs/lemma_h18_kaleidoscope.py", "quick"),
    "product_pair": ("proofs/thm_h21_product_gadget.py", "quick"),
    "mul_stage": ("proofs/thm_h21_product_gadget.py", "quick"),
}


def _forall_rows(script: str) -> tuple[set[str], set[str]]:
    """The definitions a proof script's ``run`` passes to ``forall_instance``: (every tier, quick
    tier), read from its source (``forall_library.X()`` calls, ``forall_library.PRIMITIVES`` loops,
    and tuples of ``forall_library.X`` looped over); a row under ``if not quick`` is full tier only."""
    tree = ast.parse((ROOT / script).read_text())
    every: set[str] = set()
    quick: set[str] = set()

    def names(node: ast.AST) -> set[str]:
        out: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "forall_library":
                if n.attr == "PRIMITIVES":
                    out |= {f.__name__ for f in lib.PRIMITIVES}
                elif n.attr != "ALL":
                    out.add(n.attr)
        return out

    def visit(body: list[ast.stmt], full_only: bool) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) \
                    and isinstance(stmt.test.operand, ast.Name) and stmt.test.operand.id == "quick":
                visit(stmt.body, True)
                visit(stmt.orelse, full_only)
                continue
            if "forall_instance" in ast.unparse(stmt):
                found = names(stmt)
                every.update(found)
                if not full_only:
                    quick.update(found)
            elif isinstance(stmt, (ast.For, ast.If, ast.With)):
                visit(list(stmt.body), full_only)

    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "run":
            visit(fn.body, False)
    return every, quick


def test_every_definition_has_a_forall_row() -> None:
    names = {f.__name__ for f in lib.ALL}
    assert set(PROOF_MAP) == names, "library.ALL and the proof map differ"
    for name, (script, tier) in PROOF_MAP.items():
        every, quick = _forall_rows(script)
        assert name in every, f"{name}: no ∀ row in {script}"
        assert (name in quick) == (tier == "quick"), f"{name}: tier in {script}"


def test_proof_map_reader_sees_a_missing_row(tmp_path: Path) -> None:
    """The reader is not vacuous: a script without the row is seen to lack it."""
    every, _ = _forall_rows("proofs/lemma_h18_kaleidoscope.py")
    assert {"gather", "scatter"} <= every and "mul_stage" not in every
    every, quick = _forall_rows("proofs/lemma_h16_butterfly.py")
    assert "factor_sequence" in every and "factor_sequence" not in quick and "block_scale" in quick


# ---- exact instances --------------------------------------------------------------------------------


def _symbolic_state(r: int, c: int) -> Any:
    return sym(f"in[{r}][{c}]")


def _entry_mask(g: Gadget, env: Mapping[str, int], nn: int, dd: int) -> Layer:
    """``y = 1_entry ⊙ u``: the model then computes the gadget on the input zeroed off ``entry``."""
    cells = {(r, c): 1 for r in range(nn) for c in range(dd) if g.entry.eval({**env, "i": r, "q": c})}
    return Layer.make(nn, dd, b1=Grid.from_cells(nn, dd, cells), h=Grid.from_cells(nn, dd, {(0, c): 1 for c in range(dd)}))


def _callables(placement: Mapping[str, Any]) -> dict[str, Callable[..., bool]]:
    return {k: (v if callable(v) else (lambda s: lambda *idx: idx in s)(v)) for k, v in placement.items()}


def exact_instance(g: Gadget, params: Mapping[str, int], families: Mapping[str, Callable[..., Any]] | None = None,
                   placement: Mapping[str, Any] | None = None, layers: tuple[Layer, ...] | None = None) -> None:
    """``verify(mask_entry ∘ layers, spec, method="exact")`` is proved: ``layers`` (default: the
    instance) compute the spec of ``g`` at ``params`` on every input that is 0 off ``entry``, with the
    spec evaluated directly by :func:`~symverify.kernel.parametric.concrete.spec_at`."""
    placement = placement or {}
    with predicates(_callables(placement)):
        env, nn, dd = concrete.sizes(g, params)
        if layers is None:
            layers = concrete.instantiate(g, params, families, placement or None)
        spec = {(r, c): concrete.spec_at(g, params, r, c, _symbolic_state, families) for r in range(nn) for c in range(dd)}
        mask = _entry_mask(g, env, nn, dd)
    assert all(v is not None for v in spec.values()), "care fails somewhere: compare only where it holds"

    def circuit(u: list[list[Any]]) -> list[Any]:
        subst = {f"in[{r}][{c}]": u[r][c] for r in range(nn) for c in range(dd)}
        return [_substitute(spec[(r, c)], subst) for r in range(nn) for c in range(dd)]

    rhs = Circuit.trace(circuit, nn, dd, name=f"{g.name} spec")
    lhs = Model(nn, dd, nn, dd, (mask, *layers), name=f"{g.name}{dict(env)}")
    rep = symverify.verify(lhs, rhs, method="exact")
    assert rep.verdict == "proved", f"{g.name} at {dict(env)} {placement and sorted(placement)}: {rep}"


def _substitute(v: Any, subst: Mapping[str, Any]) -> Any:
    """``v`` (an exact scalar, or a :class:`Sym` polynomial in the symbols ``in[r][c]`` and family
    members) with each input symbol replaced by the circuit's wire (family members stay constants)."""
    if not isinstance(v, Sym):
        return v
    out: Any = 0
    for mono, coef in v.terms:
        term: Any = coef
        for name, exp in mono:
            for _ in range(exp):
                term = term * subst.get(name, sym(name))
        out = out + term
    return out


# small boxes: each parameter from its lo to lo + 3 (clipped to hi) unless narrowed here, so that N'·d' stays small
BOX: dict[str, dict[str, tuple[int, int]]] = {
    "butterfly_sequence": {"r": (1, 2), "tw": (1, 2), "e": (0, 1)},
    "butterfly_channel": {"r": (1, 2), "j": (0, 2), "e": (0, 1)},
    "factor_sequence": {"r": (1, 2), "tw": (1, 2), "d": (1, 3), "e": (0, 1)},
    "factor_channel": {"r": (0, 2), "j": (0, 2), "d": (1, 5), "e": (0, 1)},
    "block_scale": {"R": (1, 3), "tw": (1, 2), "d": (1, 3)},
    "mul_stage": {"R": (2, 4), "tw": (1, 2), "d": (1, 3), "k": (1, 2)},
    "gather": {"N": (2, 6), "d": (1, 3), "n": (1, 3), "tw": (1, 2)},
    "scatter": {"N": (2, 6), "d": (1, 3), "n": (1, 3), "tw": (1, 2)},
    "remember_rows_two": {"N": (4, 8), "d": (1, 2), "a": (1, 2), "b": (1, 2), "l1": (0, 1), "l2": (0, 1)},
    "remember_channels": {"N": (1, 3), "d": (2, 6), "a": (1, 2), "b": (0, 1), "m": (1, 2), "fo": (1, 4), "l1": (0, 1), "l2": (0, 1)},
    "product_pair": {"N": (2, 7), "d": (1, 2), "a": (0, 2), "off": (1, 3), "k": (1, 2)},
    "running_add": {"N": (2, 6), "d": (1, 2), "n": (1, 3)},
}
PER_GADGET = 10  # instances drawn per definition (plus the first and last of its box)


def box_points(g: Gadget, name: str) -> list[dict[str, int]]:
    """Every parameter value in the box that lies in the ranges and satisfies ``where``."""
    over = BOX.get(name, {})
    axes = []
    for p in g.params:
        lo, hi = over.get(p.name, (p.lo, min(p.hi, p.lo + 3)))
        assert p.lo <= lo <= hi <= p.hi, f"{name}: box of {p.name} outside its range"
        axes.append([(p.name, v) for v in range(lo, hi + 1)])
    out = []
    for combo in itertools.product(*axes):
        env = dict(combo)
        try:
            with predicates({k: (lambda *idx: False) for k in g.predicate_names}):
                g.check_params(env)
        except ParametricError:
            continue
        out.append(env)
    return out


def placement_for(g: Gadget, env: Mapping[str, int], rng: random.Random) -> dict[str, set[tuple[int, int]]]:
    """Random cell sets for the free predicates, cut down (cell by cell, where ``assume`` fails) until
    they satisfy ``assume`` at every cell; every library ``assume`` only forbids cells."""
    if not g.predicate_names:
        return {}
    with predicates({k: (lambda *idx: False) for k in g.predicate_names}):
        _, nn, dd = concrete.sizes(g, env)
    cells = [(r, c) for r in range(nn) for c in range(dd)]
    place = {k: {x for x in cells if rng.random() < 0.6} for k in sorted(g.predicate_names)}
    for _ in range(len(cells) + 1):
        with predicates(_callables(place)):
            bad = concrete._violation(g, dict(env), nn, dd, place)
        if bad is None:
            return place
        for s in place.values():
            s.discard(bad)
    raise AssertionError(f"{g.name}: no placement found")


def _draws() -> Iterator[tuple[str, dict[str, int]]]:
    rng = random.Random(20261206)
    for make in (*lib.ALL, lib.user_cyclic_shift):
        g = make()
        pts = box_points(g, make.__name__)
        assert pts, f"{make.__name__}: empty box"
        chosen = [pts[0], pts[-1], *rng.sample(pts, min(PER_GADGET, len(pts)))]
        for env in chosen:
            yield make.__name__, env


DRAWS = list(_draws())


@pytest.mark.parametrize(("name", "env"), DRAWS, ids=[f"{n}-{'-'.join(map(str, e.values()))}" for n, e in DRAWS])
def test_instance_proved_exactly_against_spec(name: str, env: dict[str, int]) -> None:
    g = getattr(lib, name)()
    rng = random.Random(repr((name, sorted(env.items()))))
    exact_instance(g, env, placement=placement_for(g, env, rng))


def test_exact_instance_check_can_fail() -> None:
    """A layer off by one (the user example's ``e_{s+1}``) is not proved at an instance where it differs."""
    g = lib.user_cyclic_shift(off_by_one=True)
    with pytest.raises(AssertionError, match="user_cyclic_shift_off_by_one"):
        exact_instance(g, {"N": 3, "d": 1, "s": 1})
    good = lib.user_cyclic_shift()
    with pytest.raises(AssertionError, match="cyclic_shift"):
        exact_instance(good, {"N": 3, "d": 1, "s": 1}, layers=concrete.instantiate(g, {"N": 3, "d": 1, "s": 1}))


# ---- in context: what the compilers emit ----------------------------------------------------------


def _key(layer: Layer) -> tuple[Any, ...]:
    return (layer.mode, *(tuple(sorted(g.nonzero().items())) for _, g in layer.grids()))


def _cut_from(new: Layer, old: Layer) -> bool:
    """``new`` is ``old`` with some weights dropped (every kept weight unchanged)."""
    if new.mode != old.mode:
        return False
    for (_, gn), (_, go) in zip(new.grids(), old.grids()):
        before = go.nonzero()
        if any(before.get(k) != v for k, v in gn.nonzero().items()):
            return False
    return True


def _compile_recorded(monkeypatch: pytest.MonkeyPatch, jobs: list[Callable[[], Any]]) -> tuple[list[Any], list[Any], list[Model]]:
    from symverify.compiler import butterfly_to_baseconv as btb

    calls: list[Any] = []
    cuts: list[Any] = []
    real_instantiate, real_pruned = concrete.instantiate, btb.GadgetEmitter.pruned

    def instantiate(g: Gadget, params: Mapping[str, int], families: Any = None, placement: Any = None) -> tuple[Layer, ...]:
        out = real_instantiate(g, params, families, placement)
        calls.append((g, dict(params), families, placement, out))
        return out

    def pruned(self: Any, layers: Any) -> tuple[Layer, ...]:
        out = real_pruned(self, layers)
        cuts.extend(zip(layers, out))
        return out

    monkeypatch.setattr(concrete, "instantiate", instantiate)
    monkeypatch.setattr(btb.GadgetEmitter, "pruned", pruned)
    models = []
    for job in jobs:
        res = job()
        models.append(res if hasattr(res, "layers") else res.model)
    return calls, cuts, models


def _circuits() -> list[Circuit]:
    from symverify import library as circuits

    return [circuits.random_circuit(3, 3, 10, 3, seed=1), circuits.random_circuit(4, 2, 12, 3, seed=2),
            circuits.random_circuit(2, 3, 8, 3, seed=3), circuits.walsh_hadamard(4, 2), circuits.prefix_sums(4, 3)]


def test_compilers_emit_the_instantiated_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiling (kaleidoscope and dense): every ``instantiate`` call is of a library definition, unchanged;
    the first instances of each (the compiler's own families and placements) are proved against the spec
    exactly; every model layer is an instantiated layer (stored otherwise) or cut from one by the
    emitter's pruning, which only drops weights."""
    cs = _circuits()
    jobs = [(lambda c=c: symverify.compile(c)) for c in cs] + [(lambda c=c: symverify.compile(c, method="dense")) for c in cs[:3]]
    calls, cuts, models = _compile_recorded(monkeypatch, jobs)
    used = {g.name for g, *_ in calls}
    assert {"mul_stage", "factor_sequence", "factor_channel", "block_scale", "gather", "scatter"} <= used, used
    checked: dict[str, int] = {}
    for g, params, fams, place, _ in calls:
        assert g == getattr(lib, g.name)(), f"{g.name}: not the library's definition"
        with predicates(_callables(place or {})):
            _, nn, dd = concrete.sizes(g, params)
        if checked.get(g.name, 0) < 2 and nn * dd <= 400:
            checked[g.name] = checked.get(g.name, 0) + 1
            exact_instance(g, params, fams, place)
    assert set(checked) == used, f"no small instance of {used - set(checked)}"
    made = {_key(layer) for *_, out in calls for layer in out}
    cut = {_key(new): old for old, new in cuts}
    for old, new in cuts:
        assert _cut_from(new, old)
    for m in models:
        for k, layer in enumerate(m.layers):
            key = _key(layer)
            if key in made or "dense" in m.name:  # the dense baseline writes its other layers by hand
                continue
            assert key in cut and _key(cut[key]) in made, f"{m.name} layer {k}: neither a definition's layer nor cut from one"
        assert any(_key(layer) in made for layer in m.layers), f"{m.name}: no layer from a definition"


def test_remember_builders_emit_the_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proposition H.10's builders, where a definition expresses the layers, emit its instance unchanged,
    and that instance (the builder's own families) is proved against the spec exactly."""
    from symverify.gadgets.remember import ChannelF, ConstF, remember_channels, remember_rows

    h2 = Grid.from_cells(2, 1, {(0, 0): sym("h0"), (1, 0): sym("h1")})
    jobs = [lambda: remember_rows(3, 1, 2, 1, Grid.from_cells(2, 1, {(0, 0): sym("g")}), ConstF(Grid.symbolic("F", 2, 1))),
            lambda: remember_rows(6, 1, 2, 1, h2, ConstF(Grid.symbolic("F", 2, 1))),
            lambda: remember_channels(2, 4, 1, 1, Grid.from_cells(2, 1, {(0, 0): sym("h0"), (1, 0): 2}), ChannelF((2,)), m=2)]
    calls, _, frags = _compile_recorded(monkeypatch, jobs)
    assert [g.name for g, *_ in calls] == ["remember_rows", "remember_rows_two", "remember_channels"]
    for (g, params, fams, place, out), frag in zip(calls, frags):
        assert g == getattr(lib, g.name)()
        assert [_key(x) for x in frag.layers] == [_key(x) for x in out]
        exact_instance(g, params, fams, place)


def test_pruning_changes_what_the_definitions_give(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emitted layers are not always the instantiated ones: the emitter's pruning drops taps and ``W``
    entries that only meet structural zeros (docs/forall.md §5 says so)."""
    calls, cuts, _ = _compile_recorded(monkeypatch, [lambda: symverify.compile(_circuits()[0])])
    assert calls and any(_key(a) != _key(b) for a, b in cuts)
    text = (ROOT / "docs" / "forall.md").read_text()
    assert "What the compiler emits there is the proved definition itself" not in text
    assert "prune_layer" in text.split("## 5.")[1]


@pytest.mark.parametrize("name", ["shift_down", "shift_up", "cyclic_shift", "running_add"])
def test_primitive_fragments_are_the_definitions(name: str) -> None:
    """The fragments of symverify/gadgets/primitives.py at every small size are the instantiated definitions."""
    from symverify.gadgets import primitives

    g = getattr(lib, name)()
    for env in box_points(g, name):
        if name == "running_add":
            frag = primitives.running_add(env["n"], env["N"], env["d"])
        else:
            frag = getattr(primitives, name)(env["N"], env["d"], env["s"])
        assert [_key(x) for x in frag.layers] == [_key(x) for x in concrete.instantiate(g, env)], (name, env)


# ---- instantiate at the ends of the ranges ---------------------------------------------------------

MN, MD = lib.MAX_N, lib.MAX_D
TOP: list[tuple[str, dict[str, int]]] = [
    *[(name, env) for name in ("shift_down", "shift_up", "cyclic_shift", "user_cyclic_shift")
      for env in ({"N": MN, "d": 2, "s": MN - 1}, {"N": MN, "d": 1, "s": MN - 2}, {"N": MN, "d": 1, "s": 0},
                  {"N": MN - 1, "d": 1, "s": MN - 2}, {"N": 2, "d": 1 << 12, "s": 1})],  # d = 2^20: ~13 s each
    ("running_add", {"N": MN, "d": 1, "n": MN // 2}), ("running_add", {"N": MN, "d": 2, "n": MN // 2 - 1}),
    ("running_add", {"N": MN - 1, "d": 1, "n": MN // 2 - 1}),
    ("mask", {"N": MN, "d": 3, "r0": 0, "r1": MN, "c0": 0, "c1": 3}), ("mask", {"N": MN, "d": 3, "r0": MN - 1, "r1": MN, "c0": 2, "c1": 3}),
    ("mask", {"N": MN, "d": 2, "r0": MN, "r1": MN, "c0": 0, "c1": 2}),
    ("move_rows", {"N": MN, "d": 1, "src": 0, "dst": MN - 1, "c": 1}), ("move_rows", {"N": MN, "d": 2, "src": MN - 1, "dst": 0, "c": 1}),
    ("move_rows", {"N": MN, "d": 1, "src": 0, "dst": 0, "c": MN}), ("move_rows", {"N": MN, "d": 1, "src": 1, "dst": 0, "c": MN - 1}),
    ("move_cols", {"N": MN, "d": 3, "src": 0, "dst": 2, "c": 1}), ("move_cols", {"N": 2, "d": 4, "src": 1, "dst": 0, "c": 3}),
    ("product_pair", {"N": MN, "d": 2, "a": 0, "off": MN // 2, "k": MN // 2}),
    ("product_pair", {"N": MN, "d": 1, "a": MN - 2, "off": 1, "k": 1}),
    ("remember_rows", {"N": MN, "d": 1, "a": MN - 1, "b": 1}),  # F varies per cell: refused, LimitError
]


def _boundary_cells(env: Mapping[str, int], nn: int, dd: int) -> list[tuple[int, int]]:
    vals = {0, 1, nn - 2, nn - 1} | {v + k for v in env.values() for k in (-1, 0, 1)}
    rows = sorted(r for r in vals if 0 <= r < nn)
    cols = sorted(c for c in vals | {dd - 2, dd - 1} if 0 <= c < dd)
    return [(r, c) for r in rows for c in cols[:6]]


@pytest.mark.parametrize(("name", "env"), TOP, ids=[f"{n}-{i}" for i, (n, _) in enumerate(TOP)])
def test_instantiate_at_the_top_of_the_ranges(name: str, env: dict[str, int]) -> None:
    """At ``hi`` and ``hi − 1`` (``N' = 2^40``, ``s = N − 1``, …) the layers ``instantiate`` builds hold,
    at the cells next to every cut point, the values of the definition's expressions evaluated there,
    and the layer formula there (cell by cell) gives the spec."""
    from symverify.errors import LimitError

    g = getattr(lib, name)()
    _, nn, dd = concrete.sizes(g, env)
    try:
        layers = concrete.instantiate(g, env)
    except LimitError:
        assert name == "remember_rows"  # a bias varying per row at 2^40 rows: refused, never truncated
        return
    assert name != "remember_rows"
    cells = _boundary_cells(env, nn, dd)
    for pl, layer in zip(g.layers, layers):
        for field, grid_ in (("b1", layer.b1), ("b2", layer.b2)):
            for r, c in cells:
                want = concrete.eval_value(getattr(pl, field), {**env, "i": r, "q": c})
                assert grid_.get(r, c) == want, (name, env, field, r, c)
        for c in sorted({c for _, c in cells}):
            for taps, grid_, bound in ((pl.h, layer.h, nn), (pl.W, layer.W, dd)):
                want_taps = concrete._taps(taps, dict(env), c, bound, "tap", None)
                got = {k: v for (k, cc), v in grid_.nonzero().items() if cc == c}
                assert got == want_taps, (name, env, c)
    for r, c in cells:
        assert concrete.cell_value(g, env, r, c, _symbolic_state) == concrete.spec_at(g, env, r, c, _symbolic_state), (name, env, r, c)


WHERE_EDGE: list[tuple[str, dict[str, int], str, int]] = [
    # (definition, a valid point on the edge of its where, the parameter, the value one step over it)
    ("shift_down", {"N": 5, "d": 1, "s": 4}, "s", 5), ("shift_up", {"N": 5, "d": 1, "s": 4}, "s", 5),
    ("cyclic_shift", {"N": 5, "d": 1, "s": 4}, "s", 5), ("running_add", {"N": 6, "d": 1, "n": 3}, "N", 5),
    ("mask", {"N": 3, "d": 2, "r0": 0, "r1": 3, "c0": 0, "c1": 2}, "r1", 4),
    ("mask", {"N": 3, "d": 2, "r0": 0, "r1": 3, "c0": 0, "c1": 2}, "c1", 3),
    ("move_rows", {"N": 5, "d": 1, "src": 2, "dst": 0, "c": 3}, "src", 3),
    ("move_cols", {"N": 1, "d": 4, "src": 0, "dst": 1, "c": 3}, "dst", 2),
    ("remember_rows", {"N": 4, "d": 1, "a": 2, "b": 2}, "N", 3),
    ("remember_rows_two", {"N": 6, "d": 1, "a": 2, "b": 1, "l1": 1, "l2": 0}, "l1", 2),
    ("remember_rows_two", {"N": 6, "d": 1, "a": 2, "b": 1, "l1": 1, "l2": 0}, "N", 5),
    ("remember_channels", {"N": 2, "d": 5, "a": 2, "b": 1, "m": 2, "fo": 3, "l1": 1, "l2": 0}, "fo", 2),
    ("remember_channels", {"N": 2, "d": 5, "a": 2, "b": 1, "m": 2, "fo": 3, "l1": 1, "l2": 0}, "d", 4),
    ("remember_channels", {"N": 2, "d": 5, "a": 2, "b": 1, "m": 2, "fo": 3, "l1": 1, "l2": 0}, "l1", 2),
    ("product_pair", {"N": 5, "d": 1, "a": 1, "off": 2, "k": 2}, "off", 1),
    ("product_pair", {"N": 5, "d": 1, "a": 1, "off": 2, "k": 2}, "N", 4),
    ("mul_stage", {"R": 4, "tw": 2, "d": 3, "k": 2, "pend": 0}, "k", 3),
    ("mul_stage", {"R": 4, "tw": 2, "d": 3, "k": 2, "pend": 0}, "d", 4),
    ("gather", {"N": 4, "d": 2, "n": 2, "tw": 2}, "tw", 3), ("gather", {"N": 4, "d": 3, "n": 2, "tw": 2}, "d", 4),
    ("scatter", {"N": 4, "d": 3, "n": 2, "tw": 2}, "N", 3),
    ("block_scale", {"R": 2, "tw": 2, "d": 2, "pend": 1}, "d", 1),
    ("factor_channel", {"r": 1, "j": 2, "d": 4, "e": 1, "pend": 0, "x1": 1, "x2": 0}, "e", 2),
    ("factor_channel", {"r": 1, "j": 2, "d": 4, "e": 1, "pend": 0, "x1": 1, "x2": 0}, "x2", 1),
    ("factor_sequence", {"r": 2, "tw": 1, "d": 1, "e": 1, "pend": 0, "x1": 1, "x2": 1}, "e", 2),
    ("butterfly_sequence", {"r": 2, "tw": 1, "e": 1}, "e", 2),
    ("butterfly_channel", {"r": 1, "j": 2, "e": 1}, "e", 2),
]


@pytest.mark.parametrize(("name", "env", "p", "over"), WHERE_EDGE, ids=[f"{n}-{p}" for n, _, p, _ in WHERE_EDGE])
def test_where_boundary(name: str, env: dict[str, int], p: str, over: int) -> None:
    """On the edge of ``where`` the instance is built and proved exactly against the spec; one step
    over it ``instantiate`` refuses it, naming the condition (never built outside the theorem)."""
    g = getattr(lib, name)()
    rng = random.Random(name + p)
    exact_instance(g, env, placement=placement_for(g, env, rng))
    with pytest.raises(ParametricError, match="violate its condition"):
        with predicates({k: (lambda *idx: False) for k in g.predicate_names}):
            concrete.instantiate(g, {**env, p: over}, placement={k: set() for k in g.predicate_names} or None)


@pytest.mark.parametrize("make", [*lib.ALL, lib.user_cyclic_shift], ids=lambda f: f.__name__)
def test_ranges_refused_one_step_outside(make: Callable[[], Gadget]) -> None:
    """Every parameter one below ``lo`` or one above ``hi`` is refused by ``instantiate`` before any
    layer is built, naming the parameter and its range; ``lo`` and ``hi`` themselves pass the range check."""
    g = make()
    base = box_points(g, make.__name__)[0]
    place = {k: set() for k in g.predicate_names} or None
    for p in g.params:
        for bad in (p.lo - 1, p.hi + 1):
            if bad < 0:
                continue
            with pytest.raises(ParametricError, match=rf"parameter {p.name} = {bad} outside its range \[{p.lo}, {p.hi}\]"):
                concrete.instantiate(g, {**base, p.name: bad}, placement=place)
        for ok in (p.lo, p.hi - 1, p.hi):
            try:
                with predicates({k: (lambda *idx: False) for k in g.predicate_names}):
                    g.check_params({**base, p.name: ok})
            except ParametricError as e:
                assert "violate its condition" in str(e), str(e)


# ---- family values: exact scalars of every kind ------------------------------------------------------

WITH_FAMILIES = [f for f in lib.ALL if f().families]
_SCALARS = st.one_of(st.integers(-3, 3), st.fractions(min_value=-2, max_value=2, max_denominator=4),
                     st.builds(lambda k, c: sym("w") * k + c, st.integers(-2, 2), st.fractions(max_denominator=3, min_value=-1, max_value=1)))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_family_values_of_every_kind(data: st.DataObject) -> None:
    """Families given as callables returning ints, Fractions and ``Sym`` polynomials (0 included): the
    instance is proved exactly against the spec evaluated with the same values."""
    make = data.draw(st.sampled_from(WITH_FAMILIES), label="definition")
    g = make()
    env = data.draw(st.sampled_from(box_points(g, make.__name__)), label="params")
    table: dict[tuple[str, tuple[int, ...]], Any] = {}

    def family(name: str) -> Callable[..., Any]:
        def member(*idx: int) -> Any:
            if (name, idx) not in table:
                table[(name, idx)] = data.draw(_SCALARS, label=f"{name}{list(idx)}")
            return table[(name, idx)]
        return member

    fams = {name: family(name) for name in g.families}
    exact_instance(g, env, fams, placement_for(g, env, random.Random(repr(env))))


@pytest.mark.parametrize("bad", [0.5, float("nan"), None, "x+"], ids=repr)
def test_family_values_not_exact_are_refused(bad: object) -> None:
    g = lib.gate()
    with pytest.raises(ParametricError, match=r"family B at \(0, 0\)"):
        concrete.instantiate(g, {"N": 1, "d": 1}, {"B": lambda i, q: bad})
    assert Fraction(1, 2) == concrete.instantiate(g, {"N": 1, "d": 1}, {"B": lambda i, q: Fraction(1, 2)})[0].b1.get(0, 0)


def test_hand_written_primitives_against_the_definitions() -> None:
    """``fixed_gate``, ``constant`` and ``move_cols`` of symverify/gadgets/primitives.py are written by hand
    and have the definitions' layers; ``move_rows`` has the same weights, causal when moving down (the
    definition is cyclic; the two agree there, as no tap wraps onto a destination row)."""
    from symverify.gadgets import primitives

    for env in box_points(lib.move_cols(), "move_cols"):
        frag = primitives.move_cols(env["N"], env["d"], env["src"], env["dst"], env["c"])
        assert [_key(x) for x in frag.layers] == [_key(x) for x in concrete.instantiate(lib.move_cols(), env)]
    for env in box_points(lib.move_rows(), "move_rows"):
        frag = primitives.move_rows(env["N"], env["d"], env["src"], env["dst"], env["c"])
        (mine,), (theirs,) = frag.layers, concrete.instantiate(lib.move_rows(), env)
        assert _key(mine)[1:] == _key(theirs)[1:]
        assert mine.mode.value == ("causal" if env["dst"] >= env["src"] else "cyclic") and theirs.mode.value == "cyclic"
        if mine.mode != theirs.mode:
            exact_instance(lib.move_rows(), env, layers=(mine,))
    for N, d in ((1, 1), (3, 2)):
        B, R = Grid.symbolic("B", N, d), Grid.symbolic("R", N, d)
        assert [_key(x) for x in primitives.fixed_gate(B).layers] == [_key(x) for x in concrete.instantiate(lib.gate(), {"N": N, "d": d})]
        assert [_key(x) for x in primitives.constant(R).layers] == [_key(x) for x in concrete.instantiate(lib.constant(), {"N": N, "d": d})]
