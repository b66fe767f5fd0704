"""The bounds the proof scripts hold their instances to, recomputed from docs/theory.md.

Each test evaluates the formula a result states (docs/theory.md §3, §4) at the instance's own
parameters (Δ, w, n, d, s, the kaleidoscope's size) without calling the code that computes the
script's bounds, and compares exactly: a bound weaker than the statement, one taken from the
construction's own resource, or a stated bound left out of an instance fails.

The scripts are loaded from this checkout's ``proofs/`` directory by path, so the copy under test
is the one next to this file whatever ``symverify.proofs`` resolves to.
"""

from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.compiler import compile
from symverify.compiler.dense import dense_bounds
from symverify.compiler.kaleidoscope import kaleidoscope_bounds
from symverify.kernel.ir.analysis import stats
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.scripts.protocol import Instance

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _script(name: str) -> ModuleType:
    """The proof script ``proofs/NAME.py`` of this checkout."""
    key = f"_proof_bounds_audit_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, PROOFS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    spec.loader.exec_module(mod)
    return mod


def _log2c(x: int) -> int:
    """⌈log2 x⌉ for x ≥ 1."""
    return (x - 1).bit_length()


def _tw(d: int) -> int:
    """The track width: the largest power of two ≤ d."""
    return 1 << (d.bit_length() - 1)


def _compared(inst: Instance) -> None:
    """Every stated bound has its resource, and the instance is proved and within them."""
    missing = sorted(set(inst.bounds) - set(inst.resources))
    assert not missing, f"{inst.name}: bounds without a resource: {missing}"
    assert inst.ok, f"{inst.name}: {inst.verdict.value}, over {inst.over_bound()}"


def _h21_stated(depth: int, width: int, d: int) -> dict[str, int]:
    """Theorem H.21's bounds from Δ, w and d (docs/theory.md §4, Theorem H.21)."""
    a = _log2c(max(width, 2))
    r_star = 4 * 2**a // _tw(d)
    return {
        "layers_thm": 8 * (depth + 1) * (a + 2) + 3,
        "layers_c21": 24 * max(depth, 1) * a + 27,
        "N_k": 4 * 2**a,
        "inner_n": 3 * (r_star + r_star // 2),
        "inner_d": d,
        "linear_stages": depth + 1,
        "mul_stages": depth,
    }


# ---- Lemma H.16 -------------------------------------------------------------------------------


def test_h16_each_factor_held_to_its_axis_constant() -> None:
    """Lemma H.16: one factor alone takes ≤ 2 layers on the sequence axis, ≤ 3 on the channel axis;
    N' = 3·(R + ⌊R/2⌋), d' = d. A sequence factor held to 3 would pass with a spare layer."""
    mod = _script("lemma_h16_butterfly")
    seen = set()
    for rows, d, stride in mod.sweep(True):
        inst = mod._instance(rows, d, stride)
        axis = "sequence" if stride >= d else "channel"  # symbolic diagonals: never a diagonal factor
        seen.add(axis)
        assert inst.bounds == {"layers": {"sequence": 2, "channel": 3}[axis], "inner_n": 3 * (rows + rows // 2),
                               "inner_d": d}, inst.name
        _compared(inst)
    assert seen == {"sequence", "channel"}


# ---- Lemma H.18 -------------------------------------------------------------------------------


def test_h18_bounds_from_the_kaleidoscope_size() -> None:
    """L ≤ 4·w'·log2 N_k + 1 (+4), N_k stated a priori, N' = 3·(R + ⌊R/2⌋) with R = N_k/tw, d' = d."""
    mod = _script("lemma_h18_kaleidoscope")
    for name, K, n, d in mod.cases(True):
        inst = mod._instance(name, K, n, d)
        tw = _tw(d)
        g = tw != d
        n_k = max(K.size, 2 ** _log2c(2 * n * tw)) if g else K.size
        R = n_k // tw
        assert inst.bounds == {"layers": 4 * (K.width + 2 * g) * _log2c(n_k) + 1 + 4 * g, "N_k": n_k,
                               "inner_n": 3 * (R + R // 2), "inner_d": d}, name
        _compared(inst)


# ---- Theorem H.19 and Dao et al. Theorems 2, 3 ---------------------------------------------------


def test_h19_live_and_size_bounds() -> None:
    """live: w ≤ 5·max(Δ,1), N ≤ 8(w + n) − 1, e ≤ 8(w + n)/n, W ≤ w; size: w ≤ 5(Δ+1), N ≤ 8s − 1
    with s every node (inputs included), e ≤ 8s/n."""
    mod = _script("thm_h19_linear_circuits")
    for c in mod.circuits(True):
        s = stats(c)
        n, nodes = c.num_inputs, c.num_inputs + len(c.gates)
        live, size = mod._one(c, "live"), mod._one(c, "size")
        assert live.bounds == {"w": 5 * max(s.depth, 1), "N": 8 * (s.width + n) - 1, "e": Fraction(8 * (s.width + n), n),
                               "live_width": s.width}, c.name
        assert size.bounds == {"w": 5 * (s.depth + 1), "N": 8 * nodes - 1, "e": Fraction(8 * nodes, n)}, c.name
        _compared(live)
        _compared(size)


def test_dao_thm2_bounds() -> None:
    """Every permutation of length n is one BB* element at N = 2^⌈log2 max(n, 2)⌉."""
    mod = _script("dao_thm2_permutations")
    for perm in ([0], [1, 0], [2, 0, 1], [4, 3, 2, 1, 0], list(range(9))[::-1]):
        inst = mod._one(f"perm {perm}", perm)
        assert inst.bounds == {"w": 1, "N": 2 ** _log2c(max(len(perm), 2))}
        _compared(inst)


def test_dao_thm3_bounds_both_forms() -> None:
    """(BB*)^5 at N = 2^⌈log2 max(n, 2s, 2)⌉, e ≤ max(2, 4s/n); the theorem's form
    w ≤ max(1, 4⌈s/n⌉), N ≤ 4·2^⌈log2 n⌉."""
    import random

    mod = _script("dao_thm3_sparse")
    rng = random.Random(7)
    for n in (1, 2, 3, 5):
        for label, S in mod._patterns(rng, n):
            s = S.nnz
            five, thm = mod._one(f"n={n} {label}", S)
            assert five.bounds == {"w": 5, "N": 2 ** _log2c(max(n, 2 * s, 2)), "e": max(Fraction(2), Fraction(4 * s, n))}
            n_pad = 2 ** _log2c(n)
            assert thm.bounds == {"w": max(1, 4 * (-(-s // n))), "N": 4 * n_pad, "e": Fraction(4 * n_pad, n), "e_pad": 4}
            _compared(five)
            _compared(thm)


# ---- Corollary H.20 ---------------------------------------------------------------------------


def test_h20_literal_route_bounds() -> None:
    """w_K ≤ 5·max(Δ,1), N_k ≤ 16w, L ≤ 4·w'·(⌈log2 w⌉ + 4) + 1 (+4), N' ≤ 4.5·N_k/tw ≤ 72·w/tw,
    d' = d: all from Δ, w and d; the inner length is compared too."""
    mod = _script("cor_h20_linear")
    for c in mod.circuits(True):
        s = stats(c)
        g = _tw(c.d) != c.d
        lw = _log2c(s.width) + 4
        inst = mod.literal(c, False)
        want = {"w_K": 5 * max(s.depth, 1), "N_k": 16 * s.width,
                "layers": 4 * (5 * max(s.depth, 1) + 2 * g) * lw + 1 + 4 * g,
                "layers_thm": 4 * (int(inst.resources["w_K"]) + 2 * g) * lw + 1 + 4 * g,
                "inner_n": Fraction(72 * s.width, _tw(c.d)), "inner_d": c.d}
        assert inst.bounds == want, c.name
        _compared(inst)


def test_h20_compiler_route_checks_every_h21_bound() -> None:
    """The compiler route is held to every bound of Theorem H.21, including ``layers_c21`` and the
    stage counts that the per-instance ``layers`` bound is computed from."""
    mod = _script("cor_h20_linear")
    for c in mod.circuits(True):
        s = stats(c)
        inst = mod.compiler(c, False)
        want = _h21_stated(s.depth, s.width, c.d)
        assert {k: inst.bounds.get(k) for k in want} == want, c.name
        res = inst.resources
        g = _tw(c.d) != c.d
        assert inst.bounds["layers"] == res["linear_stages"] * (8 * _log2c(int(res["N_k"])) - 1) + res["mul_stages"] + 4 * g
        _compared(inst)


# ---- Theorem H.21 -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 12), d=st.integers(1, 40), data=st.data())
def test_h21_bounds_are_the_stated_formulas(depth: int, d: int, data: st.DataObject) -> None:
    """kaleidoscope_bounds is Theorem H.21's statement at Δ, w, d (w ≥ d: every input is live); at
    the stated stage counts and size its per-instance ``layers`` is at most ``layers_thm`` (equal
    when d is not a power of two)."""
    width = data.draw(st.integers(d, 600))
    a_w = _log2c(max(width, 2))
    n_k = data.draw(st.sampled_from([2**k for k in range(1, a_w + 3)]))
    lin = data.draw(st.integers(1, depth + 1))
    mul = data.draw(st.integers(0, depth))
    got = kaleidoscope_bounds(depth, width, d, n_k, lin, mul)
    g = _tw(d) != d
    assert {k: got[k] for k in _h21_stated(depth, width, d)} == _h21_stated(depth, width, d)
    assert got["layers"] == lin * (8 * _log2c(n_k) - 1) + mul + 4 * g
    top = kaleidoscope_bounds(depth, width, d, 4 * 2**a_w, depth + 1, depth)
    assert top["layers"] <= top["layers_thm"]
    assert (top["layers"] == top["layers_thm"]) == g
    if depth >= 1 and a_w >= 1:
        assert top["layers_thm"] <= top["layers_c21"]


def test_h21_scripts_compare_every_stated_bound() -> None:
    """thm_h21_general and thm_h21_sweep keep a resource for every bound each compiler states."""
    general, sweep = _script("thm_h21_general"), _script("thm_h21_sweep")
    c = Circuit(2, 2, (Gate.mul(0, 1), Gate.add(4, 2), Gate.mul(5, 3)), (6, 4), "audit")
    for method in ("kaleidoscope", "dense"):
        stated = set(compile(c, method=method).bounds)
        assert stated <= set(sweep.KEYS[method]), method
        if method == "kaleidoscope":
            assert stated <= set(general.KEYS)


def test_h21_sweep_instance_bounds() -> None:
    """A quick-tier grid point of thm_h21_sweep is held to Theorem H.21's bounds at its Δ, w, d."""
    mod = _script("thm_h21_sweep")
    inst = mod._instance(8, 2, 0, "kaleidoscope")
    c = mod.layered_circuit(8, 2, 0)
    assert {k: inst.bounds[k] for k in _h21_stated(2, 8, c.d)} == _h21_stated(2, 8, c.d)
    _compared(inst)
    dense = mod._instance(8, 2, 0, "dense")
    assert dense.bounds == {"layers": 9, "inner_n": c.n, "inner_d": 16, "params": 9 * (16 * 16 + 3 * c.n * 16)}
    _compared(dense)


# ---- the dense baseline -----------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(0, 30), width=st.integers(1, 500), n=st.integers(1, 64))
def test_dense_bounds_are_the_stated_formulas(depth: int, width: int, n: int) -> None:
    """L ≤ 2Δ + 5, N' = n, d' ≤ 2w, dense parameters ≤ (2Δ + 5)·((2w)² + 3·n·2w)."""
    L = 2 * depth + 5
    assert dense_bounds(depth, width, n) == {"layers": L, "inner_n": n, "inner_d": 2 * width,
                                             "params": L * ((2 * width) ** 2 + 3 * n * 2 * width)}


@pytest.mark.parametrize("index", range(3))
def test_dense_script_instances(index: int) -> None:
    """thm_h21_dense_baseline's edge cases are held to the dense bounds at their own Δ, w, n."""
    mod = _script("thm_h21_dense_baseline")
    c = mod.edge_cases()[index]
    inst = mod._instance(c, exact=False)
    s = stats(c)
    L = 2 * s.depth + 5
    assert inst.bounds == {"layers": L, "inner_n": c.n, "inner_d": 2 * s.width,
                           "params": L * ((2 * s.width) ** 2 + 3 * c.n * 2 * s.width)}
    _compared(inst)


# ---- Theorem H.21's route in the gated-convolution scripts, the causal limit's dense model ------------


@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
def test_gated_route_held_to_the_h21_bounds(method: str) -> None:
    """h3_direct's quick-tier H.21 route is held to every bound its compiler states at the circuit's
    Δ, w, d (not only to ``direct_layers ≤ layers``, a bound taken from the route's own count)."""
    from symverify.scripts.gated_instances import route_instance

    mod = _script("h3_direct")
    circuit, _ = mod._build(2, 1, 2)
    s = stats(circuit)
    inst = route_instance("h3", mod._build, 2, 1, method)
    if method == "dense":
        L = 2 * s.depth + 5
        want: dict[str, int] = {"layers": L, "inner_n": circuit.n, "inner_d": 2 * s.width,
                                "params": L * ((2 * s.width) ** 2 + 3 * circuit.n * 2 * s.width)}
    else:
        want = _h21_stated(s.depth, s.width, circuit.d)
    assert {k: inst.bounds.get(k) for k in want} == want
    assert inst.bounds["direct_layers"] == inst.resources["layers"]
    _compared(inst)


def test_causal_limit_dense_model_held_to_the_dense_bounds() -> None:
    """The causal limit's cyclic witness (the dense compiler's model) is held to every dense bound."""
    mod = _script("causal_limit")
    c = Circuit(2, 1, (), (1, 1), "every row := x_1")
    inst = next(i for i in mod._impossible(c) if "dense" in i.name)
    s = stats(c)
    L = 2 * s.depth + 5
    assert inst.bounds == {"layers": L, "inner_n": 2, "inner_d": 2 * s.width,
                           "params": L * ((2 * s.width) ** 2 + 3 * 2 * 2 * s.width)}
    _compared(inst)


# ---- the quick tier checks the full tier's claims ----------------------------------------------


def test_sweep_quick_tier_checks_both_compilers() -> None:
    """thm_h21_sweep's quick grid runs every compiler the full grid runs (smaller sizes, same claims)."""
    mod = _script("thm_h21_sweep")
    assert sorted(mod.QUICK["compilers"]) == sorted(mod.FULL["compilers"]) == sorted(mod.COMPILERS)
    assert {case[3] for case in mod.cases(True)} == set(mod.COMPILERS)


# ---- Proposition H.10, and a script's bound added to a fragment's own ------------------------------


def test_fragment_instance_never_loosens_the_fragments_own_bound() -> None:
    """A bound a script adds is met together with the fragment's own: the smaller one holds."""
    from symverify.gadgets.remember import ChannelF, remember_rows
    from symverify.kernel.ir.grid import Grid
    from symverify.scripts.instances import fragment_instance

    frag = remember_rows(3, 2, 1, 1, Grid.symbolic("h", 1, 1), ChannelF((1,)))  # h at lag 0 only: 1 layer
    assert frag.bounds["layers"] == 1
    inst = fragment_instance(frag, "lag 0", {"layers": 2, "inner_n": 3})
    assert inst.bounds["layers"] == 1 and inst.bounds["inner_n"] == 3
    assert fragment_instance(frag, "tighter", {"layers": 0}).over_bound() == ["layers"]


def test_h10_rows_form_held_to_the_layer_count_the_proposition_states() -> None:
    """docs/theory.md §4, Proposition H.10: the rows form takes 1 layer when h has taps at lag 0 only
    or r is empty, else 2. With a = 1 every filter is at lag 0, so those instances are held to 1."""
    import re

    mod = _script("prop_h10_remember")
    rows = [i for i in mod.run(True).instances if i.name.startswith("rows ")]
    assert rows
    for inst in rows:
        m = re.match(r"rows a=(\d+) b=(\d+): (.*)", inst.name)
        assert m is not None, inst.name
        a, b, what = int(m[1]), int(m[2]), m[3]
        lag0 = a == 1 or not what.startswith("all h")
        assert inst.bounds["layers"] == (1 if lag0 or b == 0 else 2), inst.name
        _compared(inst)
