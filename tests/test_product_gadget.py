"""The H.21 product gadget (M1, M2) as a fragment: proofs for all inputs and constants, every
weight needed, wrong specs and changed weights refuted, bad shapes refused."""

from dataclasses import replace

import pytest

from symverify.compiler.h21 import compact_product_layout, packed_product_layout, smallest_shift
from symverify.compiler.layout import Layout
from symverify.errors import ShapeError
from symverify.kernel.gadgets.fragment import Spec, SpecBuilder
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.fragment import prove_fragment
from symverify.kernel.provers.outcome import Verdict
from symverify.mutate import WeightSite, get_weight, mutate_weight, weight_sites
from symverify.proofs.thm_h21_product_gadget import (
    PRODUCT_LAYERS,
    Shape,
    placement,
    product_fragment,
    shapes,
)
from symverify.semantics.exact import evaluate

SHAPES = [Shape(1, 1, 1, "contiguous", False), Shape(2, 2, 3, "contiguous", True), Shape(3, 2, 3, "scattered", True),
          Shape(4, 3, 0, "scattered", False), Shape(8, 4, 4, "scattered", True, grow=4),
          Shape(1, 2, 3, "compact", True), Shape(4, 3, 4, "compact", False),
          Shape(1, 3, 4, "packed", True), Shape(4, 5, 7, "packed", False)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_product_gadget_is_proved_for_all_inputs_and_constants(shape):
    lay, v1, kr, v3 = shape.build()
    frag = product_fragment(lay, v1, kr, v3, shape.pending)
    p = prove_fragment(frag)
    assert p.proved and p.verdict is Verdict.PROVED, p.failure
    assert frag.depth == PRODUCT_LAYERS and p.ok
    assert frag.spec().circuit.params() >= {f"c{q}" for q in (*v1, *v3)}  # the constants are symbols


def test_sweep_covers_the_stated_shapes():
    full = shapes(False)
    assert {s.d for s in full} == {1, 2, 3, 4, 8}
    assert {s.pending for s in full} == {False, True} and {s.kind for s in full} == {"contiguous", "scattered", "compact", "packed"}
    for s in full:
        lay, v1, kr, v3 = s.build()
        assert 2 * kr * lay.tw <= lay.size
        if s.kind == "compact":  # v3 with a free partner after every other value, then v1, v2 an even shift above
            assert (v1, v3, kr) == compact_product_layout(s.k, s.n3, set(range(2 * s.k, 2 * s.k + s.n3, 2)), lay.tw)
            assert kr * lay.tw % 2 == 0 and min(v1, default=1 << 30) > max(v3, default=-1)
        elif s.kind == "packed":  # v1 from 0, v2 an even shift above, v3 in the gaps
            assert (v1, v3, kr) == packed_product_layout(s.k, s.n3, set(range(2 * s.k, 2 * s.k + s.n3, 2)), lay.tw)
            v2 = {p + kr * lay.tw for p in v1}
            assert kr * lay.tw % 2 == 0 and min(v1, default=0) == 0 and not v2 & set(v3) and not set(v1) & set(v3)
        else:
            assert kr == smallest_shift(v1, v3, lay.tw)


def test_compact_layout_keeps_partners_free():
    """``compact_product_layout``: a two-entry value sits at an even position with ``p + 1`` free,
    also for ``v2`` (an even shift), and ``v2`` meets neither ``v1`` nor ``v3``."""
    for tw in (1, 2, 4):
        v1, v3, kr = compact_product_layout(3, 4, {0, 5, 6, 8}, tw)  # v1[0] (and v2[2]) and v3[0], v3[2] padded
        v2 = [p + kr * tw for p in v1]
        taken = set(v1) | set(v2) | set(v3)
        assert len(taken) == 10
        for p in (v1[0], v1[2], v2[0], v2[2], v3[0], v3[2]):
            assert p % 2 == 0 and p + 1 not in taken, (tw, p)


def test_scattered_placement_is_at_aligned_block_starts():
    v1, v3 = placement("scattered", 2, 3)
    assert (v1, v3) == ((10, 0), (8, 11, 4))  # reads 1, 4, 2, 1, 3: blocks of 4 (slots 1, 4), 2, 1, 1
    assert smallest_shift(v1, v3, 1) == 2 and smallest_shift((0, 1), (2,), 1) == 3 and smallest_shift((0, 1), (2,), 2) == 2


def test_output_matches_the_formula_on_numbers():
    lay = Layout(1, 2, 8)  # tw = 2, R = 4, S = 6, N' = 18
    v1, v3, kr = (0, 1), (2,), 2  # v2 = (4, 5)
    frag = product_fragment(lay, v1, kr, v3, True, {0: 1, 2: 10, 4: 100, 5: -1, 7: 1000})
    state = [[0, 0] for _ in range(lay.rows)]
    for p, (a, b) in {0: (2, 3), 1: (5, 0), 2: (7, 1), 4: (1, 1), 5: (4, 0), 3: (9, 9), 6: (8, 8)}.items():
        (r0, c), (r1, _) = lay.cell(p), lay.cell(p, 1)
        state[r0][c], state[r1][c] = a, b
    out = evaluate(frag.model(), state)
    want = [[0, 0] for _ in range(lay.rows)]
    want[0] = [(2 + 3 + 1) * (1 + 1 + 100), (5 + 0) * (4 + 0 - 1)]  # (T + c)[v1]·(T + c)[v2]
    want[1][0] = 7 + 1 + 10  # v3: T + c; positions 3, 6, 7 and the B1 copies are dropped
    assert out == want


def test_every_weight_is_needed_except_constants_outside_the_masks():
    lay = Layout(1, 2, 16)
    v1, v3 = (0, 1), (2, 3, 4)
    kr = smallest_shift(v1, v3, lay.tw)
    frag = product_fragment(lay, v1, kr, v3, True)
    keep = frag.layers[0].b1.nonzero()
    model = frag.model()
    dead = []
    for site in weight_sites(model):
        mutant = mutate_weight(model, site, "zero")
        p = prove_fragment(replace(frag, layers=mutant.layers))
        if p.proved:
            dead.append(site)
        else:
            assert p.verdict is Verdict.REFUTED and p.exact is False, site
    # only M1's constants at cells that b1 masks out (positions outside v1 ∪ v2 ∪ v3) do nothing
    assert dead and all(s.layer == 0 and s.grid == "b2" and (s.row, s.col) not in keep for s in dead)
    assert len(dead) == lay.size - len(v1) * 2 - len(v3)


@pytest.mark.parametrize("site,op", [
    (WeightSite(0, "b1", 8, 0), "inc"),      # M1: the coefficient 1 of v2 position 4 (B1 row S + 2) → 2
    (WeightSite(0, "b2", 0, 1), "inc"),      # M1: the constant at v1 position 1 (c1 → c1 + 1)
    (WeightSite(1, "b2", 0, 0), "one"),      # M2: a v1 cell also gets the + 1 of v3
    (WeightSite(1, "W", 0, 1), "one"),       # M2: channel 0 leaks into channel 1
    (WeightSite(1, "h", 0, 0), "one"),       # M2: a lag-0 tap
], ids=lambda x: str(x))
def test_a_changed_weight_is_refuted(site, op):
    lay = Layout(1, 2, 8)
    frag = product_fragment(lay, (0, 1), 2, (2,), False)  # v2 = (4, 5) at rows S + 2 = 8 of B1
    model = frag.model()
    assert op != "inc" or get_weight(model, site) != 0
    p = prove_fragment(replace(frag, layers=mutate_weight(model, site, op).layers))
    assert p.verdict is Verdict.REFUTED and not p.compositional and p.exact is False, p.failure


def _wrong_spec(lay, v1, kr, v3, *, multiply_v3=False, constants=True):
    off = {p: sym(f"c{p}") for p in range(lay.size)} if constants else {}

    def build():
        b = SpecBuilder(lay.rows, lay.width)

        def val(p):
            return b.affine([(1, b.cell(*lay.cell(p)))], off.get(p, 0))

        out = {lay.cell(p): b.mul(val(p), val(p + kr * lay.tw)) for p in v1}
        out |= {lay.cell(p): b.mul(val(p), val(p + kr * lay.tw)) if multiply_v3 else val(p) for p in v3}
        return Spec(b.circuit(out, "wrong spec"))

    return build


@pytest.mark.parametrize("how", ["multiply_v3", "no_constants"])
def test_a_wrong_spec_is_refuted(how):
    lay = Layout(1, 1, 16)
    v1, v3 = (0, 1), (2, 3)
    kr = smallest_shift(v1, v3, lay.tw)  # 4: v2 = (4, 5); v3 + 4 = (6, 7) hold entry values too
    frag = product_fragment(lay, v1, kr, v3, False)
    assert prove_fragment(frag).proved
    wrong = _wrong_spec(lay, v1, kr, v3, multiply_v3=how == "multiply_v3", constants=how != "no_constants")
    p = prove_fragment(replace(frag, build_spec=wrong))
    assert p.verdict is Verdict.REFUTED and p.exact is False, p.failure


def test_pending_entry_matters():
    lay = Layout(1, 2, 8)
    clean = product_fragment(lay, (0,), 1, (1,), False)
    pending = product_fragment(lay, (0,), 1, (1,), True)
    assert clean.entry < pending.entry and {lay.position(c)[1] for c in pending.entry - clean.entry} == {1}
    # the clean gadget's layers on a pending state: B1 is dropped, not summed
    p = prove_fragment(replace(pending, layers=clean.layers))
    assert p.verdict is Verdict.REFUTED, p.failure


@pytest.mark.parametrize("v1,k_rows,v3,match", [
    ((0, 6), 2, (1,), r"v2 positions \[8\] .* outside \[0, 8\)"),
    ((0, 1), 1, (2,), r"v2 positions \[1, 2\] .* also v1 or v3 positions"),
    ((0, 1), 2, (1, 3), r"positions \[1\] are in both v1 and v3"),
    ((0, 0), 2, (), r"v1 positions repeat"),
    ((0,), 2, (8,), r"v3 positions \[8\] are outside \[0, 8\)"),
    ((0,), 0, (1,), r"k_rows must be a positive int"),
])
def test_bad_shapes_are_refused(v1, k_rows, v3, match):
    with pytest.raises(ShapeError, match=match):
        product_fragment(Layout(1, 1, 8), v1, k_rows, v3, False)


def test_unknown_placement_is_refused():
    with pytest.raises(ShapeError, match="expected 'contiguous' or 'scattered'"):
        placement("random", 1, 1)


def test_the_compilers_own_calls_are_proved(monkeypatch):
    """Every (M1, M2) the compiler builds for these circuits, with its own positions, pending flag and
    constants, is a proved fragment (and so is the same shape with symbolic constants)."""
    import symverify as sv
    from symverify.compiler.h21 import emit
    from symverify.library import determinant, random_circuit

    calls = []
    real = emit.mul_layers

    def spy(lay, v1, k_rows, v3, pending, offset):
        calls.append((lay, tuple(v1), k_rows, tuple(v3), pending, dict(offset)))
        return real(lay, v1, k_rows, v3, pending, offset)

    monkeypatch.setattr(emit, "mul_layers", spy)
    a = sym("a")
    circuits = [determinant(3), random_circuit(3, 3, 40, 6, 0.3, seed=2, num_outputs=4),
                sv.Circuit.trace(lambda u: [(u[0][0] + 2) * (u[0][1] - a), u[1][0] * u[1][1] + 1, u[1][2]], n=2, d=3)]
    for c in circuits:
        sv.compile(c)
    assert calls and {c[4] for c in calls} == {False, True}
    for lay, v1, kr, v3, pending, off in calls:
        assert kr >= smallest_shift(v1, v3, lay.tw) and 2 * kr * lay.tw <= lay.size  # the smallest, or the compact layout's
        for offset in (off, None):
            p = prove_fragment(product_fragment(lay, v1, kr, v3, pending, offset))
            assert p.proved, p.failure
