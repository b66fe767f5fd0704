"""The RetNet circuit (one linear gate per step) and the direct causal construction (beyond Corollary H.22)."""

import math
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction

import pytest

import symverify as sv
from symverify.compiler.retnet import direct_layout, retnet_direct, retnet_stack_direct
from symverify.errors import CompileError, IRError
from symverify.kernel.ir.analysis import stats
from symverify.kernel.ir.baseconv import Mode
from symverify.kernel.verification import verify
from symverify.library import retnet, retnet_layout, retnet_stack, retnet_weights
from symverify.mutate import certificate_mutant, get_weight, set_weight, weight_sites

WA, WC, WV = [[1, 0], [1, 1]], [[1, 2], [0, 1]], [[0, 1], [1, -1]]


def _proved(circuit, compiled, method="compositional"):
    report = verify(circuit, compiled, method=method)
    assert report.verdict.value == "proved", report
    return report


# ---- the circuit -------------------------------------------------------------------------------


@pytest.mark.parametrize("N,d", [(1, 2), (4, 2), (8, 2), (5, 3), (6, 4), (16, 4)])
def test_retnet_depth_is_one_gate_per_step(N, d):
    lg = math.ceil(math.log2(d))
    assert stats(retnet(N, d)).depth == N + 1 + 2 * lg


def test_retnet_depth_d1_and_numeric_weights():
    assert stats(retnet(5, 1)).depth == 5 + 2  # the symbolic projection is one scale gate
    assert stats(retnet(5, 2, Fraction(1, 2), WA, WC, WV)).depth <= 5 + 1 + 2


def test_retnet_recurrence_is_one_linear_gate():
    _, (nodes,) = retnet_layout(3, 2, [retnet_weights(2)])
    c = retnet(3, 2)
    for t in (1, 2):
        g = c.gate(nodes.z[t][0][1])
        assert g.op.value == "lin" and g.args == (nodes.z[t - 1][0][1], nodes.outer[t][0][1])
        assert str(g.coeffs[0]) == "gamma" and g.coeffs[1] == 1


def test_retnet_defaults_are_symbols():
    names = retnet(2, 2).params()
    assert "gamma" in names and "W_A[1][0]" in names and "W_V[0][1]" in names and len(names) == 13
    assert retnet_stack(2, 1, 2).params() == {f"L{k}.{n}" for k in range(2) for n in ("gamma", "W_A[0][0]", "W_C[0][0]", "W_V[0][0]")}


def test_retnet_stack_is_the_composition():
    u = [[1, 2], [3, -1], [0, 2]]
    w = retnet_weights(2, Fraction(1, 2), WA, WC, WV)
    once = sv.evaluate(retnet(3, 2, Fraction(1, 2), WA, WC, WV), u)
    twice = sv.evaluate(retnet_stack(3, 2, [w, w]), u)
    assert twice == sv.evaluate(retnet(3, 2, Fraction(1, 2), WA, WC, WV), once)


def test_retnet_bad_weights():
    with pytest.raises(IRError, match=r"retnet W_C: expected a 2×2 matrix"):
        retnet(2, 2, 1, WA, [[1, 2]], WV)
    with pytest.raises(IRError, match=r"not exact|float"):
        retnet(2, 2, 0.5, WA, WC, WV)
    with pytest.raises(IRError, match="positive int N"):
        retnet(0, 2)
    with pytest.raises(IRError, match="expected weights for d = 2, found d = 3"):
        retnet_layout(2, 2, [retnet_weights(3)])
    with pytest.raises(IRError, match="at least one layer"):
        retnet_stack(2, 2, 0)


# ---- the direct construction -------------------------------------------------------------------


@pytest.mark.parametrize("N,d,group", [(1, 1, None), (2, 2, None), (3, 2, 1), (4, 3, None), (4, 3, 1), (4, 3, 2), (6, 4, 3)])
def test_direct_is_proved_for_all_weights(N, d, group):
    out = retnet_direct(N, d, group=group)
    _proved(retnet(N, d), out)
    lay = direct_layout(N, d, group)
    assert out.model.signature == (N, lay.layers, d, N, lay.inner_d)
    assert all(layer.mode is Mode.CAUSAL for layer in out.model.layers)
    assert not out.over_bound()
    assert out.model.params() == retnet(N, d).params()


def test_direct_resources_of_the_two_ends():
    wide, narrow = retnet_direct(16, 4), retnet_direct(16, 4, group=1)
    assert (wide.model.depth, wide.model.inner_d) == (4, 4 + 16)
    assert (narrow.model.depth, narrow.model.inner_d) == (13, 12)
    assert wide.resources["params"] == 4 * (20**2 + 3 * 16 * 20)
    assert narrow.resources["params"] == 13 * (9 * 16 + 9 * 16 * 4)


def test_direct_exact_agrees_on_small_instances():
    _proved(retnet(3, 2), retnet_direct(3, 2), method="exact")
    _proved(retnet(3, 2), retnet_direct(3, 2, group=1), method="exact")


def test_direct_numeric_weights():
    g = Fraction(-2, 3)
    out = retnet_direct(5, 2, g, WA, WC, WV)
    assert out.model.params() == frozenset()
    _proved(retnet(5, 2, g, WA, WC, WV), out)
    _proved(retnet(5, 2, 0, WA, WC, WV), retnet_direct(5, 2, 0, WA, WC, WV))


@pytest.mark.parametrize("N,d,group", [(4, 2, None), (5, 3, None), (5, 3, 1), (6, 4, 2)])
def test_direct_meets_the_causal_lower_bound(N, d, group):
    """L·d' ≥ d(d+1)/2 for every causal BaseConv computing RetNet (docs/retnet.md): the direct
    models' long-filter channels are d² ≥ d(d+1)/2."""
    m = retnet_direct(N, d, group=group).model
    long = {(i, c) for i, layer in enumerate(m.layers) for (k, c) in layer.h.nonzero() if k >= 1}
    assert len(long) == d * d >= d * (d + 1) // 2


def test_direct_against_the_wrong_circuit_is_not_proved():
    out = retnet_direct(3, 2)
    report = verify(retnet(3, 2, 1), out)  # γ fixed to 1 in the circuit only
    assert report.verdict.value == "refuted"


@pytest.mark.parametrize("group", [None, 1])
def test_every_single_weight_perturbation_is_refuted(group):
    out = retnet_direct(3, 2, group=group)
    c = retnet(3, 2)
    sites = weight_sites(out.model)
    assert len(sites) > 40
    for site in sites:
        model = set_weight(out.model, site, get_weight(out.model, site) + 1)
        report = verify(c, replace(out, model=model))
        assert report.verdict.value == "refuted", (site, report)
        assert report.counterexample is not None


def test_decay_tap_perturbation_at_n64_is_refuted():
    out = retnet_direct(64, 2)
    c = retnet(64, 2)
    decay = next(i for i, layer in enumerate(out.model.layers) if any(k >= 1 for k, _ in layer.h.nonzero()))
    site = next(s for s in weight_sites(out.model) if s.layer == decay and s.grid == "h" and s.row == 63)
    model = set_weight(out.model, site, get_weight(out.model, site) * 2)
    assert verify(c, replace(out, model=model), method="compositional").verdict.value != "proved"
    assert verify(c, replace(out, model=model), method="randomized").verdict.value != "proved"


@pytest.mark.parametrize("seed", range(12))
def test_certificate_mutants_are_never_proved(seed):
    out = retnet_direct(3, 2)
    c = retnet(3, 2)
    m = certificate_mutant(out.certificate, c.num_nodes, seed)
    try:
        report = verify(c, out.model, method="compositional", certificate=m.obj)
    except IRError:
        return  # a structurally invalid certificate is refused outright
    assert report.verdict.value != "proved", (m, report)


# ---- stacks (Lemma H.11) -----------------------------------------------------------------------


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("N,d,k,group", [(3, 2, 2, None), (4, 2, 3, 1), (3, 3, 2, None)])
def test_stack_is_proved(N, d, k, group, fuse):
    out = retnet_stack_direct(N, d, k, group=group, fuse=fuse)
    _proved(retnet_stack(N, d, k), out)
    per = direct_layout(N, d, group).layers
    assert out.model.depth == k * per - (k - 1 if fuse else 0)
    assert group == 1 or out.model.depth <= 4 * k
    labels = [b.label for b in out.certificate.boundaries]
    assert any(lab.startswith("layer 1:") for lab in labels)


def test_stack_junction_is_a_clean_interface():
    """Unfused, the boundary after RetNet layer 0 lists exactly its N×d output (every other cell 0)."""
    out = retnet_stack_direct(3, 2, 2)
    b = next(b for b in out.certificate.boundaries if b.label == "layer 0: y")
    assert sorted((c.row, c.col) for c in b.cells) == [(t, q) for t in range(3) for q in range(2)]
    assert b.layer == 4


def test_stack_with_numeric_weights():
    ws = [retnet_weights(2, Fraction(1, 2), WA, WC, WV), retnet_weights(2, 3, WV, WA, WC)]
    _proved(retnet_stack(4, 2, ws), retnet_stack_direct(4, 2, ws, fuse=True))


# ---- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize("args,kwargs,match", [
    ((0, 2), {}, r"N must be a positive int, found 0"),
    ((2, 0), {}, r"d must be a positive int, found 0"),
    ((2, True), {}, r"d must be a positive int, found True"),
    ((2, 2), {"group": 0}, r"group must be an int in \[1, d\] = \[1, 2\], found 0"),
    ((2, 2), {"group": 3}, r"group must be an int in \[1, d\]"),
    ((2, 2), {"group": 1.0}, r"group must be an int"),
    ((2, 2, None, [[1, 2]]), {}, r"retnet_direct: retnet W_A: expected a 2×2 matrix"),
    ((2, 2, 0.5), {}, r"retnet_direct: .*gamma"),
])
def test_direct_refuses_bad_input(args, kwargs, match):
    with pytest.raises(CompileError, match=match):
        retnet_direct(*args, **kwargs)


def test_stack_refuses_bad_input():
    with pytest.raises(CompileError, match="at least one layer"):
        retnet_stack_direct(2, 2, 0)
    with pytest.raises(CompileError, match="expected weights for d = 2, found d = 3"):
        retnet_stack_direct(2, 2, [retnet_weights(3)])
    with pytest.raises(CompileError, match="expected a layer count or a sequence"):
        retnet_stack_direct(2, 2, "two")
    with pytest.raises(CompileError, match="N must be a positive int"):
        retnet_stack_direct(-1, 2, 1)


def test_direct_refuses_states_over_the_cell_limit(monkeypatch):
    from symverify.errors import LimitError
    from symverify.ir import limits

    monkeypatch.setattr(limits, "MAX_CELLS", 100)
    with pytest.raises(LimitError, match="MAX_CELLS"):
        retnet_direct(64, 2)


# ---- package face --------------------------------------------------------------------------------


def test_exported_lazily():
    assert sv.retnet_direct is retnet_direct
    code = "import sys, symverify; print('symverify.compiler.retnet' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


# ---- the proof script's readings can fail ---------------------------------------------------------


def _script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "proofs" / "cor_h22_retnet.py"
    spec = importlib.util.spec_from_file_location("proofs_cor_h22_retnet_readings", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _verdicts(mod, rows, ranks):
    """Each reading's checks on the rows: the readings are argued claims (docs/retnet.md), so the
    script's checks of them, not a verdict, are what holds or fails."""
    return {i.name.split(":")[0]: {True: "holds", False: "fails"}[i.checks] for i in mod._readings(rows, ranks)}


def test_readings_hold_on_honest_rows_and_fail_on_violations():
    mod = _script()
    Row = mod.Row
    # route, N, d, k, group, proved, layers, N', d', params, nonzero, cyclic, long_channels
    wide = Row("direct", 8, 2, 1, 2, True, 4, 8, 6, 4 * (36 + 3 * 8 * 6), 100, 0, 4)
    narrow = Row("direct", 8, 2, 1, 1, True, 7, 8, 6, 7 * (36 + 3 * 8 * 6), 100, 0, 4)
    stack = Row("stack", 3, 2, 2, 2, True, 8, 3, 6, 8 * (36 + 3 * 3 * 6), 100, 0, 8)
    ranks = {2: 3}
    honest = _verdicts(mod, [wide, narrow, stack], ranks)
    assert set(honest.values()) == {"holds"}, honest
    assert _verdicts(mod, [wide._replace(layers=5), narrow, stack], ranks)["reading A"] == "fails"
    assert _verdicts(mod, [wide._replace(proved=False), narrow, stack], ranks)["reading A"] == "fails"
    fat = narrow._replace(inner_d=40, params=7 * (1600 + 3 * 8 * 40))
    assert _verdicts(mod, [wide, fat, stack], ranks)["reading B"] == "fails"
    assert _verdicts(mod, [wide._replace(long_channels=2), narrow, stack], ranks)["reading C"] == "fails"
    assert _verdicts(mod, [wide, narrow, stack], {2: 2})["reading C"] == "fails"
    assert _verdicts(mod, [wide, narrow, stack._replace(layers=9)], ranks)["reading D"] == "fails"


def test_rank_premise_reads_the_jacobian_exactly_in_flint_and_as_sympy_does():
    """The rank premise works in python-flint's exact ring (not sympy's, about 20× slower there):
    each ring it builds is flint, and its Jacobian's rank is the one sympy's exact polynomials
    give at the same point."""
    import random
    from fractions import Fraction

    from symverify.kernel.semantics.poly import PolyRing, polynomials

    mod = _script()
    made = []

    def recording(*args, **kw):
        ring = PolyRing(*args, **kw)
        made.append(ring.backend)
        return ring

    mod.PolyRing = recording
    for d in (2, 3, 4):
        made.clear()
        inst, rank = mod._rank_premise(d)
        assert made == ["flint"] and inst.proved and rank == d * (d + 1) // 2
        # the same Jacobian from sympy's polynomials
        N, n = d + 1, d
        ring = PolyRing(N * d, (), "sympy")
        ys = polynomials(mod.retnet(N, d, *mod._witness(d, 7)), ring)
        x = ring.inputs()
        rng = random.Random(8)
        point = [Fraction(rng.randint(-4, 4), rng.randint(1, 3)) for _ in range(n * d)] + [Fraction(0)] * d
        J = [[ring.evaluate(ys[n][q].diff(x[n * d + r]).diff(x[i]), point) for i in range(n * d)] for r in range(d) for q in range(d)]
        assert mod._rank(J) == rank
