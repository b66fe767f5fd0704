"""Parametric gadgets and the ∀-prover (docs/forall.md).

The symbolic interpretation is checked against the concrete one: every library gadget is
instantiated at every size up to ``2^10`` rows (cells sampled when large) and its built layers
are evaluated exactly, cell by cell, against the symbolic terms and the spec. The prover is
checked on proofs, on refutations (re-checked by instantiation) and on mutations refuted at sizes
outside the instance sweeps; every definedness rule has a negative test.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from cases import replace_expr

from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric.concrete import (
    cell_value,
    entry_state,
    family_symbol,
    instance_model,
    instantiate,
    spec_at,
)
from symverify.kernel.parametric.expr import ParametricError, bit, fam, inp, lt, predicates, var, where
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap
from symverify.kernel.parametric.symbolic import eval_terms, output_terms
from symverify.kernel.provers.forall import prove_forall
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.rings import ScalarRing
from symverify.parametric import library as lib

i, q = var("i"), var("q")

CAPS = {"N": 1 << 10, "d": 6, "r": 8, "j": 3, "e": 8}


def _samples(g: Gadget, count: int, seed: int) -> list[dict[str, int]]:
    """Parameter values with ``N' ≤ 2^10``-ish: every ``N = 2^m`` (m ≤ 10) in turn, the rest random."""
    rng = random.Random(seed)
    out: list[dict[str, int]] = []
    names = [p.name for p in g.params]
    tries = 0
    while len(out) < count and tries < 20000:
        tries += 1
        env: dict[str, int] = {}
        for p in g.params:
            cap = CAPS.get(p.name, 0)
            if p.name == "N":
                env["N"] = 1 << (len(out) % 11) if rng.random() < 0.7 else rng.randint(1, CAPS["N"])
                continue
            if p.name == "r":
                env["r"] = 1 + len(out) % CAPS["r"]
                continue
            hi = min(p.hi, cap if cap else max(env.get("N", 16), 1))
            env[p.name] = rng.randint(p.lo, max(p.lo, hi))
        try:
            g.check_params({n: env[n] for n in names})
        except ParametricError:
            continue
        out.append(env)
    assert out, g.name
    return out


def _model_cell(layers: Any, nn: int, level: int, i0: int, q0: int, state: Any, memo: dict) -> Any:
    """Cell ``(i0, q0)`` after ``level`` built layers, from their Grids (the layer formula)."""
    if level == 0:
        return state(i0, q0)
    key = (level, i0, q0)
    if key in memo:
        return memo[key]
    layer, nz = layers[level - 1]
    conv: Any = layer.b2.get(i0, q0)
    for k, hv in nz["h"].get(q0, ()):
        src = i0 - k
        if src < 0:
            if layer.mode.value == "causal":
                continue
            src %= nn
        conv = conv + hv * _model_cell(layers, nn, level - 1, src, q0, state, memo)
    proj: Any = layer.b1.get(i0, q0)
    for p, wv in nz["W"].get(q0, ()):
        proj = proj + wv * _model_cell(layers, nn, level - 1, i0, p, state, memo)
    memo[key] = proj * conv
    return memo[key]


def _by_col(cells: dict) -> dict:
    out: dict = {}
    for (a, c), v in cells.items():
        out.setdefault(c, []).append((a, v))
    return out


def u(r: int, c: int) -> Any:
    return sym(f"u_{r}_{c}")


def _fam(name: str, *idx: int) -> Any:
    return family_symbol(name, *idx)


def _placement(g: Gadget, env: dict[str, int], rng: random.Random) -> dict[str, Any]:
    """A random placement satisfying the gadget's ``assume`` (``mul_stage``, ``gather``, ``scatter``)."""
    if g.name in ("gather", "scatter"):
        n, d = env["n"], env["d"]
        cells = {(r, c) for r in range(n) for c in range(d) if rng.random() < 0.6}
        return {"IN" if g.name == "gather" else "OUT": lambda r, c: (r, c) in cells}
    if g.name == "block_scale":
        keep = {(r, c) for r in range(env["R"]) for c in range(env["tw"]) if rng.random() < 0.6}
        return {"KEEP": lambda r, c: (r, c) in keep}
    if g.name in ("factor_sequence", "factor_channel"):
        R = 1 << env["r"]
        S = R + R // 2
        tw = env["tw"] if "tw" in env else 1 << env["j"]
        e = env["e"]

        def allowed(r: int, c: int) -> bool:
            if g.name == "factor_channel":
                return env["x1"] == 1
            return env["x1" if r >> e & 1 else "x2"] == 1

        sup = {(r, c) for r in range(R) for c in range(tw) if allowed(r, c) and rng.random() < 0.6}
        blocks = (0, S) if g.name == "factor_channel" else (0,)
        live = {(b + r, c) for b in blocks for r in range(R) for c in range(tw) if rng.random() < 0.7}
        return {"SUP": lambda r, c: (r, c) in sup, "LIVE": lambda r, c: (r, c) in live}
    if g.name != "mul_stage":
        return {}
    R, tw, k = env["R"], env["tw"], env["k"]
    v1 = {(r, c) for r in range(R - k) for c in range(tw) if rng.random() < 0.3}
    v1 = {(r, c) for r, c in v1 if (r - k, c) not in v1}
    taken = v1 | {(r + k, c) for r, c in v1}
    v3 = {(r, c) for r in range(R) for c in range(tw) if (r, c) not in taken and rng.random() < 0.3}
    return {"V1": lambda r, c: (r, c) in v1, "V3": lambda r, c: (r, c) in v3}


@pytest.mark.parametrize("make", lib.ALL, ids=lambda f: f.__name__)
def test_symbolic_matches_concrete_up_to_2_pow_10(make: Any) -> None:
    g = make()
    terms = output_terms(g)
    rng = random.Random(7)
    for env in _samples(g, 14, seed=sum(map(ord, g.name))):
        with predicates(_placement(g, env, rng)):
            _compare_at(g, terms, env, rng)


def _compare_at(g: Gadget, terms: Any, env: dict[str, int], rng: random.Random) -> None:
    model = instance_model(g, env)
    nn, dd = model.inner_n, model.inner_d
    inp_state = entry_state(g, env, u)
    if nn * dd <= 128:
        full = eval_model(model, [[inp_state(r, c) for c in range(dd)] for r in range(nn)], ScalarRing())
        cells = [(a, c) for a in range(nn) for c in range(dd)]
    else:
        full = None
        cells = [(rng.randrange(nn), rng.randrange(dd)) for _ in range(12)] + [(0, 0), (nn - 1, dd - 1)]
    layers = [(layer, {"h": _by_col(layer.h.nonzero()), "W": _by_col(layer.W.nonzero())}) for layer in model.layers]
    memo: dict = {}
    for a, c in cells:
        built = full[a][c] if full is not None else _model_cell(layers, nn, len(layers), a, c, inp_state, memo)
        symbolic = eval_terms(terms, {**env, "i": a, "q": c}, inp_state, _fam)
        assert built == symbolic, (g.name, env, (a, c))
        assert cell_value(g, env, a, c, u) == built
        want = spec_at(g, env, a, c, u)
        if want is not None:
            assert want == built, (g.name, env, (a, c))


FAST = [f for f in lib.ALL if f not in (lib.butterfly_sequence, lib.factor_sequence)]


@pytest.mark.parametrize("make", FAST, ids=lambda f: f.__name__)
def test_library_proved_for_all_sizes(make: Any) -> None:
    res = prove_forall(make())
    assert res.verdict == "proved", str(res)
    assert "∈" in res.ranges


@pytest.mark.slow
def test_butterfly_sequence_proved_for_all_sizes() -> None:
    assert prove_forall(lib.butterfly_sequence()).verdict == "proved"


def test_user_example_proved_and_off_by_one_refuted() -> None:
    assert prove_forall(lib.user_cyclic_shift()).verdict == "proved"
    bad = prove_forall(lib.user_cyclic_shift(off_by_one=True))
    assert bad.verdict == "refuted"
    assert bad.cell is not None and "≠" in bad.detail
    # the counterexample really is one: instantiate and evaluate by hand
    g = lib.user_cyclic_shift(off_by_one=True)
    a, c = bad.cell
    assert cell_value(g, bad.params, a, c, u) != spec_at(g, bad.params, a, c, u)


# ---- mutations, refuted at sizes no instance sweep contains (N ≥ 2^10, r ≥ 10) ----------------


def _mutate_layer(g: Gadget, k: int, **fields: Any) -> Gadget:
    layers = list(g.layers)
    old = layers[k]
    layers[k] = PLayer(**{"W": old.W, "b1": old.b1, "h": old.h, "b2": old.b2, "mode": old.mode, **fields})
    return dataclasses.replace(g, name=g.name + "_mutant", layers=tuple(layers))


BIG_N = {"N": (1 << 10, lib.MAX_N)}


def test_mutation_tap_off_by_one_refuted_beyond_sweeps() -> None:
    g = lib.shift_down()
    s = var("s")
    res = prove_forall(_mutate_layer(g, 0, h=(tap(s + 1, 1, lt(s + 1, var("N"))),)), ranges=BIG_N)
    assert res.verdict == "refuted" and res.params["N"] >= 1 << 10


def test_mutation_bias_on_wrong_block_refuted_beyond_sweeps() -> None:
    g = lib.running_add()
    n = var("n")
    res = prove_forall(_mutate_layer(g, 1, b2=where(lt(i, n + 1), 1)), ranges=BIG_N)
    assert res.verdict == "refuted" and res.params["N"] >= 1 << 10


def test_mutation_wrong_bit_test_refuted_beyond_sweeps() -> None:
    g = lib.butterfly_channel()
    e = var("e")
    gate = g.layers[1]
    mutant = _mutate_layer(g, 1, b2=replace_expr(gate.b2, bit(q, e), bit(q, e + 1)))
    res = prove_forall(mutant, ranges={"r": (10, 38)})
    assert res.verdict == "refuted" and res.params["r"] >= 10


def test_mutation_shift_misread_refuted_beyond_sweeps() -> None:
    g = lib.move_rows()
    src, dst = var("src"), var("dst")
    N = var("N")
    mutant = _mutate_layer(g, 0, h=(tap((N + dst - (src + 1)) % N),))  # reads one row too far up
    res = prove_forall(mutant, ranges=BIG_N)
    assert res.verdict == "refuted" and res.params["N"] >= 1 << 10


# ---- refusals -----------------------------------------------------------------------------------


def _one(layer: PLayer, spec: Any = None, where_: Any = None) -> Gadget:
    ps = (Param("N", 1, 1 << 20), Param("d", 1, 8), Param("s", 0, 1 << 20))
    from symverify.kernel.parametric.expr import TRUE

    return Gadget("g", ps, var("N"), var("d"), (layer,), inp(i, q) if spec is None else spec, where=TRUE if where_ is None else where_)


def test_refuses_a_lag_outside_the_state() -> None:
    with pytest.raises(ParametricError, match=r"h tap lag .* inside \[0, N\)"):
        prove_forall(_one(PLayer(b1=1, h=(tap(var("s")),))))


def test_refuses_a_subtraction_below_zero() -> None:
    with pytest.raises(ParametricError, match="undefined or out of range"):
        prove_forall(_one(PLayer(b1=1, h=(tap(0),)), spec=inp(i - var("s"), q), where_=lt(var("s"), var("N"))))


def test_refuses_a_division_by_zero() -> None:
    with pytest.raises(ParametricError, match="undefined or out of range"):
        prove_forall(_one(PLayer(b1=1, h=(tap(0),)), spec=inp(i // var("s"), q)))


def test_refuses_an_overflow_of_the_width() -> None:
    big = Gadget("g", (Param("N", 1, 1 << 20), Param("k", 0, 80)), var("N"), 1,
                 (PLayer(b1=1, h=(tap(0),)),), where(lt(i, (var("N") << var("k"))), inp(i, q)))
    with pytest.raises(ParametricError, match="undefined or out of range"):
        prove_forall(big)


def test_refuses_a_family_index_outside_its_size() -> None:
    g = Gadget("g", (Param("N", 1, 1 << 20),), var("N"), 1, (PLayer(b1=fam("B", i + 1), h=(tap(0),)),),
               fam("B", i + 1) * inp(i, q), families={"B": (var("N"),)})
    with pytest.raises(ParametricError, match=r"family index B\[\(i \+ 1\)\]"):
        prove_forall(g)


def test_concrete_interpretation_refuses_the_same() -> None:
    g = _one(PLayer(b1=1, h=(tap(var("s")),)))
    with pytest.raises(ParametricError, match=r"outside \[0, 4\)"):
        instantiate(g, {"N": 4, "d": 1, "s": 4})
    with pytest.raises(ParametricError, match="outside its range"):
        instantiate(g, {"N": 4, "d": 1, "s": -1})
    with pytest.raises(ParametricError, match=r"subtraction below 0"):
        (i - 3).eval({"i": 1})


def test_prove_forall_rejects_ranges_outside_the_declared_ones() -> None:
    with pytest.raises(ParametricError, match="not inside the declared"):
        prove_forall(lib.shift_down(), ranges={"N": (0, 5)})
    with pytest.raises(ParametricError, match="unknown parameter"):
        prove_forall(lib.shift_down(), ranges={"zz": (0, 5)})


def test_gadget_validation() -> None:
    with pytest.raises(ParametricError, match="unknown variables"):
        Gadget("g", (Param("N", 1, 4),), var("N"), var("d"), (PLayer(),), 0)
    with pytest.raises(ParametricError, match="row i"):
        PLayer(W=(tap(i),))
    with pytest.raises(ParametricError, match="cannot read input"):
        PLayer(b1=inp(0, 0))
    with pytest.raises(ParametricError, match="identifier other than i, q"):
        Param("i", 0, 1)


# ---- the builders that instantiate the definitions build what they built before -------------------


def _reference_layers(kind: str, nn: int, dd: int, s: int) -> tuple:
    """The hand-written constructions the builders used before they instantiated the definitions."""
    from symverify.gadgets.primitives import impulse
    from symverify.kernel.ir.baseconv import Layer, Mode
    from symverify.kernel.ir.grid import Grid

    if kind == "shift_down":
        return (Layer.make(nn, dd, b1=Grid.full(nn, dd, 1), h=impulse(nn, dd, s)),)
    if kind == "shift_up":
        b1 = Grid.zeros(nn, dd).paint(0, nn - s, 0, dd, 1)
        return (Layer.make(nn, dd, b1=b1, h=impulse(nn, dd, (-s) % nn), mode=Mode.CYCLIC),)
    if kind == "cyclic_shift":
        return (Layer.make(nn, dd, b1=Grid.full(nn, dd, 1), h=impulse(nn, dd, s % nn), mode=Mode.CYCLIC),)
    n = s
    h1 = impulse(nn, dd, 0).paint(n, n + 1, 0, dd, 1)
    return (Layer.make(nn, dd, b1=Grid.zeros(nn, dd).paint(n, 2 * n, 0, dd, 1), h=h1),
            Layer.make(nn, dd, b1=Grid.full(nn, dd, 1), h=impulse(nn, dd, 0), b2=Grid.zeros(nn, dd).paint(0, n, 0, dd, 1)))


def test_primitive_builders_match_the_reference_cell_by_cell() -> None:
    from symverify.gadgets import primitives as prim

    checked = 0
    for nn in [*range(1, 18), 64, 100, 1024]:
        for dd in (1, 3):
            cases = [(k, s) for k in ("shift_down", "shift_up", "cyclic_shift") for s in sorted({0, 1, nn // 2, nn - 1}) if s < nn]
            cases += [("running_add", n) for n in sorted({1, nn // 2}) if 1 <= n and 2 * n <= nn]
            for kind, s in cases:
                built = prim.running_add(s, nn, dd).layers if kind == "running_add" else getattr(prim, kind)(nn, dd, s).layers
                ref = _reference_layers(kind, nn, dd, s)
                assert len(built) == len(ref)
                for a, b in zip(built, ref):
                    assert a.mode == b.mode
                    for (name, ga), (_, gb) in zip(a.grids(), b.grids()):
                        assert ga.to_rows() == gb.to_rows(), (kind, nn, dd, s, name)
                checked += 1
    assert checked > 200


# ---- the compiler's layers are the instantiated definitions ------------------------------------


def _same_layers(a: Any, b: Any, what: Any) -> None:
    assert len(a) == len(b), what
    for la, lb in zip(a, b):
        assert la.mode == lb.mode, what
        for (name, ga), (_, gb) in zip(la.grids(), lb.grids()):
            assert ga.to_rows() == gb.to_rows(), (what, name)


def test_compiler_mul_layers_are_the_mul_stage_definition() -> None:
    """``mul_layers`` (compiler) equals ``mul_stage`` instantiated at the same layout, placement,
    shift and constants, cell by cell, over the product-gadget proof sweep's shapes."""
    from symverify.compiler.circuit_to_baseconv import mul_layers
    from symverify.proofs.thm_h21_product_gadget import shapes

    checked = 0
    for s in shapes(quick=False)[::3]:
        lay, v1, kr, v3 = s.build()
        if not v1:
            continue
        tw = lay.tw
        offset = {p: (p % 5) - 2 for p in range(0, lay.size, 3)}
        built = mul_layers(lay, v1, kr, v3, s.pending, offset)
        s1, s3 = set(v1), set(v3)
        placement = {"V1": lambda r, c, s1=s1, tw=tw: c < tw and r * tw + c in s1,
                     "V3": lambda r, c, s3=s3, tw=tw: c < tw and r * tw + c in s3}
        fams = {"C": lambda r, c, off=offset, tw=tw: off.get(r * tw + c, 0)}
        params = {"R": lay.track_rows, "tw": tw, "d": lay.width, "k": kr, "pend": int(s.pending)}
        _same_layers(built, instantiate(lib.mul_stage(), params, fams, placement), (s, params))
        checked += 1
    assert checked >= 40


def test_compiler_butterfly_layers_are_the_h16_definitions() -> None:
    """Layers A and B / A and C of a clean, unpruned Lemma H.16 gadget (``factor_layers``) equal the
    ``butterfly_sequence`` / ``butterfly_channel`` definitions instantiated at the same layout, with the
    factor's blocks as the families, for every stride (``d`` a power of two)."""
    from symverify.compiler.butterfly_to_baseconv import factor_layers
    from symverify.compiler.layout import Layout
    from symverify.kernel.ir.butterfly import ButterflyFactor

    checked = 0
    for d in (1, 2, 4):
        for size in (4 * d, 8 * d, 16 * d):
            lay = Layout.choose(1, d, size)
            if lay.track_rows < 2:
                continue
            tw = lay.tw
            stride = 1
            while stride < lay.size:
                pairs = lay.size // 2
                f = ButterflyFactor(lay.size, stride, *[tuple(sym(f"{n}{m}") for m in range(pairs)) for n in ("a", "b", "c", "e")])
                low = {p: m for m, (p, _) in enumerate(f.pairs())}

                def family(name: str, f: Any = f, low: Any = low, tw: int = tw) -> Any:
                    col = {"d1": f.d1, "d2": f.d2, "d3": f.d3, "d4": f.d4}[name]
                    return lambda row, ch: col[low[row * tw + ch]]

                fams = {n: family(n) for n in ("d1", "d2", "d3", "d4")}
                r = lay.track_rows.bit_length() - 1
                j = tw.bit_length() - 1
                if stride >= tw:
                    g, params = lib.butterfly_sequence(), {"r": r, "tw": tw, "e": (stride // tw).bit_length() - 1}
                else:
                    g, params = lib.butterfly_channel(), {"r": r, "j": j, "e": stride.bit_length() - 1}
                built = factor_layers(lay, f)
                _same_layers(built, instantiate(g, params, fams), (d, size, stride))
                checked += 1
                stride *= 2
    assert checked >= 15


def test_mutation_stride_misread_on_the_sequence_axis_refuted_at_a_huge_size() -> None:
    """Layer B reads ``B2`` at ``S + 2t`` instead of ``S + t``: refuted at some ``R ≥ 2^10`` (≈ 2.5 s
    of CPU; the witness is re-checked cell by cell, the model being far too large to build)."""
    from symverify.kernel.parametric.expr import pow2

    g = lib.butterfly_sequence()
    B = g.layers[1]
    R = pow2(var("r"))
    S, t = R + (R >> 1), pow2(var("e"))
    mutant = _mutate_layer(g, 1, h=(B.h[0], B.h[1], tap(S + t + t)))
    res = prove_forall(mutant, ranges={"r": (10, 38)})
    assert res.verdict == "refuted" and res.params["r"] >= 10


@pytest.mark.slow
def test_factor_sequence_proved_for_all_sizes() -> None:
    """The sequence-axis gadget in every compiled form (pending, pruned, off-track channels)."""
    assert prove_forall(lib.factor_sequence(), timeout_s=600).verdict == "proved"
