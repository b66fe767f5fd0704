"""What the proof scripts' titles and instance names claim is what they check.

Each test pins one claim of a built-in script (proofs/*.py) against the check behind it: an
"equals the circuit" proof compares with a reference the construction did not build, a title's
formula is the bound held, an instance named by a form (``(BB*)^w_4``) is held to that form's
bounds. The scripts are loaded from this checkout's ``proofs/`` directory by path.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from pathlib import Path
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.compiler.kaleidoscope import kaleidoscope_bounds
from symverify.kaleidoscope import sparse_to_kaleidoscope_thm3, to_matrix
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.provers.outcome import Verdict
from symverify.semantics.exact import evaluate

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _script(name: str) -> ModuleType:
    """The proof script ``proofs/NAME.py`` of this checkout (one loader: test_proof_bounds_audit's)."""
    from test_proof_bounds_audit import _script as load

    return load(name)


# ---- Lemma H.16: the exact proof is against the factor's matrix, not the construction's circuit --------------


def test_h16_a_construction_consistent_with_its_own_wrong_circuit_is_refuted(monkeypatch) -> None:
    """A construction that builds the transposed factor, with a certificate against its own (equally
    transposed) circuit, passes the certificate; the exact check against the factor's matrix refutes it."""
    mod = _script("lemma_h16_butterfly")
    real = mod.factor_model

    def transposed(f: ButterflyFactor, d: int):  # type: ignore[no-untyped-def]
        return real(ButterflyFactor(f.size, f.stride, f.d1, f.d3, f.d2, f.d4), d)

    assert mod._instance(2, 2, 2).verdict is Verdict.PROVED
    monkeypatch.setattr(mod, "factor_model", transposed)
    for rows, d, stride in ((2, 1, 1), (2, 2, 1), (4, 2, 4)):
        inst = mod._instance(rows, d, stride)
        assert inst.verdict is Verdict.REFUTED and not inst.ok, inst


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(2, 1), (4, 1), (2, 2), (4, 2), (8, 4)]), st.data())
def test_h16_reference_circuit_is_the_factor_matrix(shape: tuple[int, int], data: st.DataObject) -> None:
    """``matrix_circuit(f, d)`` computes ``vec(u) ↦ B·vec(u)`` for the exact matrix B of f."""
    mod = _script("lemma_h16_butterfly")
    rows, d = shape
    size = rows * d
    stride = 1 << data.draw(st.integers(0, size.bit_length() - 2))
    val = st.integers(-3, 3)
    diags = [tuple(data.draw(val) for _ in range(size // 2)) for _ in range(4)]
    f = ButterflyFactor(size, stride, *diags)
    x = [data.draw(val) for _ in range(size)]
    got = [v for row in evaluate(mod.matrix_circuit(f, d), [x[i * d:(i + 1) * d] for i in range(rows)]) for v in row]
    want = [sum(b * xi for b, xi in zip(row, x, strict=True)) for row in to_matrix(f)]
    assert got == want


# ---- Dao et al. Theorem 3: (BB*)^w_4 named only where e ≤ 4 is held ------------------------------------------


def test_dao_thm3_names_the_e4_form_only_for_n_a_power_of_two() -> None:
    mod = _script("dao_thm3_sparse")
    rng = random.Random(5)
    for n in (1, 2, 4, 8, 16, 3, 5, 13):
        S = mod._random(rng, n, n)
        _, thm = mod._one(f"n={n}", S)
        if n & (n - 1) == 0:
            assert thm.name.endswith("(BB*)^{4⌈s/n⌉}_4")
            assert thm.bounds["e"] == 4 and thm.resources["e"] <= 4
        else:
            assert "_4" not in thm.name and "N ≤ 4·2^⌈log2 n⌉" in thm.name
            assert thm.bounds["e"] > 4  # e ≤ 4 is not what is held there
    # why: at n = 13 the construction's e = N/n is 64/13 > 4, so "(BB*)^{4⌈s/n⌉}_4" would be false
    f = sparse_to_kaleidoscope_thm3(mod._random(random.Random(1), 13, 13))
    assert f.resources["e"] == Fraction(64, 13)
    assert "for n a power of two" in mod.TITLE and "N ≤ 4·2^⌈log2 n⌉" in mod.TITLE


def test_dao_thm3_quick_tier_never_claims_e4_beyond_a_power_of_two() -> None:
    mod = _script("dao_thm3_sparse")
    for inst in mod.run(True).instances:
        n = int(inst.name.split()[0].removeprefix("n="))
        assert ("_4" in inst.name) == (inst.name.endswith("(BB*)^{4⌈s/n⌉}_4") and n & (n - 1) == 0), inst.name


# ---- Theorem H.21: the title's formula is the bound held ---------------------------------------------------


def test_h21_title_formula_is_the_layers_thm_bound_at_every_width() -> None:
    """``layers_thm`` is ``8·(Δ+1)·(⌈log2 max(w, 2)⌉ + 2) + 3``; at w = 1 that is not ``⌈log2 w⌉ + 2``."""
    mod = _script("thm_h21_general")
    assert "⌈log2 max(w, 2)⌉" in mod.TITLE
    for depth, width in itertools.product(range(4), (1, 2, 3, 5, 16, 17)):
        a = (max(width, 2) - 1).bit_length()
        assert kaleidoscope_bounds(depth, width, 1, 4, depth + 1, depth)["layers_thm"] == 8 * (depth + 1) * (a + 2) + 3
    assert kaleidoscope_bounds(0, 1, 1, 4, 1, 0)["layers_thm"] != 8 * (0 + 2) + 3  # the unqualified ⌈log2 w⌉ = 0


# ---- hand-written primitives: one layer each, except add ------------------------------------------------


def test_handwritten_primitives_title_states_the_layer_counts_held() -> None:
    mod = _script("primitives_handwritten")
    counts = {model.name: layers for (model, _c), layers in mod._suite(3, 2)}
    assert {k for k, v in counts.items() if v != 1} == {"add (running sum)"} and counts["add (running sum)"] == 2
    assert "one-layer BaseConv primitives" not in mod.TITLE and "two for add" in mod.TITLE


# ---- Dao et al. Theorem 2: the exhaustive instance's resources are every permutation's --------------------


def test_dao_thm2_exhaustive_resources_are_those_of_every_permutation() -> None:
    mod = _script("dao_thm2_permutations")
    for n in (1, 2, 3, 4):
        inst = mod._exhaustive(n)
        assert inst.ok and inst.detail.startswith(f"{len(list(itertools.permutations(range(n))))} permutations")
        for perm in itertools.permutations(range(n)):
            one = mod._one("p", perm)
            assert (one.resources, one.bounds) == (inst.resources, inst.bounds)


def test_dao_thm2_exhaustive_fails_at_a_permutation_routed_wrongly(monkeypatch) -> None:
    """Only the first row is built for permutations whose sealed check is proved with the first's
    resources: a later permutation routed as the identity is refuted and named."""
    mod = _script("dao_thm2_permutations")
    real = mod.permutation_to_kaleidoscope
    bad = (2, 0, 1)
    monkeypatch.setattr(mod, "permutation_to_kaleidoscope", lambda p: real((0, 1, 2) if tuple(p) == bad else p))
    inst = mod._exhaustive(3)
    assert not inst.ok and inst.verdict is Verdict.REFUTED
    assert inst.detail.startswith("5 permutations; first failure perm (2, 0, 1)")  # the fifth in order


def test_product_gadget_rows_of_one_fragment_share_its_proof(monkeypatch) -> None:
    """Two shapes with the same layout and positions are one fragment: proved once, and the second
    row carries that proof (same verdict, resources and bounds), naming the first row."""
    mod = _script("thm_h21_product_gadget")
    twice = mod.Shape(1, 1, 1, "contiguous", False)
    monkeypatch.setattr(mod, "shapes", lambda quick: [twice, twice])
    proved = []
    real = mod.fragment_instance
    monkeypatch.setattr(mod, "fragment_instance", lambda *a, **k: proved.append(a[1]) or real(*a, **k))
    rows = mod.run(True).instances[:2]
    assert len(proved) == 1 and rows[0].ok and rows[1].ok
    assert (rows[1].verdict, rows[1].resources, rows[1].bounds) == (rows[0].verdict, rows[0].resources, rows[0].bounds)
    assert rows[1].detail.startswith(f"the same fragment as {rows[0].name!r}")


# ---- argued claims cite a docs section that holds their argument -------------------------------------------

DOCS = PROOFS.parent / "docs"


def _section(basis: str) -> str:
    """The text of the section ``docs/FILE.md § TITLE`` cites: from the heading ``#… TITLE`` (or the
    bold paragraph ``**TITLE.**``) to the next heading; empty when there is none."""
    import re

    path, title = basis.split(" § ", 1)
    text = (PROOFS.parent / path).read_text(encoding="utf-8")
    m = re.search(rf"^(#+) {re.escape(title)}\s*$", text, re.M) or re.search(rf"\*\*{re.escape(title)}\.?\*\*", text)
    if m is None:
        return ""
    end = re.compile(r"^#+ ", re.M).search(text, m.end())
    return text[m.start():end.start() if end else len(text)]


def test_every_argued_claim_cites_a_section_holding_its_argument() -> None:
    argued = [i for name in ("causal_limit", "cor_h22_retnet") for i in _script(name).run(True).instances
              if i.kind.value == "argued"]
    assert len(argued) == 7
    for inst in argued:
        body = _section(inst.basis)
        assert body, f"{inst.name}: cites {inst.basis}, which is not a section"
        if inst.name.startswith("reading C"):
            # the lower bound it rests on: the theorem and its proof, not the table that points to it
            assert inst.basis == "docs/retnet.md § Lower bounds" and "*Proof.*" in body and "d(d+1)/2" in body
        elif inst.name.startswith("reading"):
            assert inst.name.split(":")[0].split()[-1] in {"A", "B", "D"} and "| **" + inst.name[8] + ".**" in body
        else:
            assert "induction" in body and "depends only on input rows `≤ i`" in body, inst.name


def test_the_section_reader_finds_nothing_for_a_missing_section() -> None:
    assert _section("docs/retnet.md § No such section") == ""
    assert "*Proof.*" not in _section("docs/retnet.md § The readings and their verdicts")


# ---- titles: argued readings are not "decided"; each mode of H.19 is named with its own bound ---------------


def test_cor_h22_title_calls_the_readings_argued() -> None:
    mod = _script("cor_h22_retnet")
    readings = [i for i in mod._readings([], {}) if i.name.startswith("reading")]
    assert len(readings) == 4 and all(i.kind.value == "argued" and not i.proved for i in readings)
    assert "decided" not in mod.TITLE and "readings argued" in mod.TITLE


def test_h19_size_mode_is_held_to_dao_theorem_1_not_to_the_live_bound() -> None:
    from symverify.library import prefix_sums

    mod = _script("thm_h19_linear_circuits")
    c = prefix_sums(8)  # depth Δ = 3, 8 inputs
    live, size = mod._one(c, "live"), mod._one(c, "size")
    depth = live.resources["depth"]
    assert live.bounds["w"] == 5 * max(depth, 1) and size.bounds["w"] == 5 * (depth + 1)
    assert size.bounds["e"] == Fraction(8 * c.num_nodes, c.num_inputs)
    assert "O(s/n)} (size mode)" in mod.TITLE and "O(w/n)} (live mode)" in mod.TITLE


# ---- the quick tier (CI) is the full tier's claims at its smaller sizes ------------------------------------


def test_quick_cases_are_among_the_full_tiers_where_the_script_lists_them() -> None:
    """Where a script lists its cases by tier, the quick tier's cases are full-tier cases (the same
    claims; the full tier adds larger sizes), so CI never proves something the full run leaves out."""
    h16 = _script("lemma_h16_butterfly")
    assert set(h16.sweep(True)) < set(h16.sweep(False))
    h18 = _script("lemma_h18_kaleidoscope")
    assert {c[0] for c in h18.cases(True)} < {c[0] for c in h18.cases(False)}
    for name in ("thm_h19_linear_circuits", "cor_h20_linear"):
        mod = _script(name)
        key = [(c.name, c.n, c.d) for c in mod.circuits(True)]
        assert set(key) < {(c.name, c.n, c.d) for c in mod.circuits(False)}, name
    gadget = _script("thm_h21_product_gadget")
    assert set(gadget.shapes(True)) < set(gadget.shapes(False))
    h11 = _script("lemma_h11_composition")
    assert {n for n, _ in h11._clean_stacks(True)} < {n for n, _ in h11._clean_stacks(False)}


# ---- "for all weights": the direct constructions are proved with every weight a symbol ---------------------


def test_direct_constructions_are_proved_with_symbolic_weights() -> None:
    """The circuits h3_direct, hyena_direct and cor_h22_retnet prove against have symbolic weights, and
    the models hold exactly those symbols, so one proof covers every value of every weight."""
    from symverify.compiler.retnet import retnet_direct
    from symverify.library import retnet

    built = [_script("h3_direct")._build(3, 2, 2), _script("hyena_direct")._build(3, 2, 2), (retnet(3, 2), retnet_direct(3, 2))]
    for circuit, compiled in built:
        names = {str(p) for p in circuit.params()}
        assert names and names == {str(p) for p in compiled.model.params()}
    # RetNet at d = 2: γ and every entry of W_A, W_C, W_V
    assert len(built[2][0].params()) == 3 * 2 * 2 + 1


# ---- Lemma H.18: one name, one matrix, in both tiers ----------------------------------------------
def test_h18_cases_of_one_name_are_one_matrix_in_both_tiers():
    """The random cases were drawn from one generator across cases, so the quick tier's
    "symbolic BB* N=4 on 2x2" was another matrix than the full tier's under the same name."""
    m = _script("lemma_h18_kaleidoscope")
    quick = {name: K for name, K, *_ in m.cases(True)}
    full = {name: K for name, K, *_ in m.cases(False)}
    assert set(quick) < set(full) and len(quick) >= 8
    for name, K in quick.items():
        assert to_matrix(K) == to_matrix(full[name]), name
    assert len({str(to_matrix(K)) for K in full.values()}) == len(full)  # and the cases differ from each other


# ---- Lemma H.18: the README's constant is the bound held, also when d is not a power of two ----------------


def _readme_row(result: str) -> str:
    """The row of README's table of stated constants whose first cell is ``result``."""
    text = (PROOFS.parent / "README.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith(f"| {result} |")]
    assert len(rows) == 1, rows
    return rows[0]


def test_h18_readme_constant_counts_the_two_benes_permutations_when_d_is_not_a_power_of_two() -> None:
    """At d = 3 the model needs ``w' = w + 2`` BB* (two Beneš permutations move the gathered cells):
    ``L ≤ 4·w·log2 N_k + 5`` is not met, ``L ≤ 4·(w + 2)·log2 N_k + 5`` is held, and README states the latter."""
    mod = _script("lemma_h18_kaleidoscope")
    name, K, n, d = next(c for c in mod.cases(True) if c[0] == "random (BB*)^1 N=8 on 2x3")
    inst = mod._instance(name, K, n, d)
    w, lg = inst.resources["w"], inst.resources["N_k"].bit_length() - 1
    assert inst.ok and d & (d - 1)
    assert inst.resources["layers"] > 4 * w * lg + 1 + 4
    assert inst.bounds["layers"] == 4 * (w + 2) * lg + 1 + 4
    row = _readme_row("Lemma H.18")
    assert "L ≤ 4·w'·log2 N_k + 1" in row and "w' = w + 2" in row and "4·w·log2" not in row


# ---- Theorem H.19's live mode: 5·max(Δ, 1) BB*, also where its statement is repeated -----------------------


def test_h19_live_mode_is_stated_with_the_factor_count_held_at_depth_0() -> None:
    """A depth-0 circuit still needs its output selection: the live mode takes 5 BB*, not 5Δ = 0, and is
    held to ``5·max(Δ, 1)``; the scripts and the docs that repeat the live form state that count."""
    h19 = _script("thm_h19_linear_circuits")
    inst = h19._one(h19.selection(5), "live")
    assert inst.ok and inst.resources["depth"] == 0 and inst.resources["w"] == inst.bounds["w"] == 5
    texts = {"thm_h19_linear_circuits": h19.__doc__ or "", "cor_h20_linear": _script("cor_h20_linear").__doc__ or ""}
    texts |= {p: (PROOFS.parent / p).read_text(encoding="utf-8") for p in ("README.md", "docs/theory.md")}
    for where, text in texts.items():
        assert "(BB*)^{5Δ}" not in text and "(BB*)^{5·max(Δ,1)}" in text, where
    kal = (PROOFS.parent / "docs/kaleidoscope.md").read_text(encoding="utf-8")
    assert "**proves H.19 as stated**: `M ∈ (𝓑𝓑*)^{5·max(Δ,1)}_e`" in kal


# ---- Lemma H.16: the inner length stated is the one held, ⌊R/2⌋ gaps (none at R = 1) ----------------------


def test_h16_docstring_states_the_inner_length_held_at_r_1() -> None:
    h16 = _script("lemma_h16_butterfly")
    assert (1, 2, 1) in h16.sweep(True)  # R = 1: one track row, d = 2, stride 1
    inst = h16._instance(1, 2, 1)
    assert inst.ok and inst.bounds["inner_n"] == inst.resources["inner_n"] == 3
    assert "``N' = 3·(R + ⌊R/2⌋)``" in (h16.__doc__ or "") and "R/2)``" not in (h16.__doc__ or "").replace("⌊R/2⌋", "")


# ---- docs/kaleidoscope.md §2.5: the expansions stated are those of the constructions, n = 1 included --------


def test_kaleidoscope_constants_table_states_the_expansion_at_n_1() -> None:
    from symverify.kaleidoscope import SparseMatrix, permutation_to_kaleidoscope, sparse_to_kaleidoscope

    assert permutation_to_kaleidoscope([0]).resources["e"] == 2  # N = 2 at n = 1
    assert sparse_to_kaleidoscope(SparseMatrix(1, 1, ())).resources["e"] == 2  # N = 2^⌈log2 max(1, 0, 2)⌉
    table = _section("docs/kaleidoscope.md § 2.5 (d) Constants summary")
    perm = next(line for line in table.splitlines() if line.startswith("| permutation |"))
    sparse = next(line for line in table.splitlines() if line.startswith("| s-sparse n×n |"))
    assert "e = 2 at n = 1" in perm and "max(n, 2s, 2)" in sparse
