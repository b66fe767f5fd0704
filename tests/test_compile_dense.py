"""The dense baseline compiler and the compile() entry point: proofs, bounds, mutations, dispatch."""

import random
import sys
import types
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings

from symverify.compiler import Compiled, compile
from symverify.compiler.dense import compile_dense, dense_bounds
from symverify.errors import CompileError
from symverify.kernel.ir.analysis import stats
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers.compositional import check_certificate
from symverify.kernel.semantics.poly import polynomials, shared_ring
from symverify.library import random_circuit, standard_library
from symverify.semantics.exact import evaluate
from symverify.testing import circuits


def proved(c: Circuit, out: Compiled, exact: bool = True) -> bool:
    if not check_certificate(c, out.model, out.certificate).ok:
        return False
    if exact:
        ring = shared_ring(c, out.model)
        return polynomials(c, ring) == polynomials(out.model, ring)
    return True


def mutate(model: Model, li: int, gname: str, i: int, j: int, value) -> Model:
    layer = model.layers[li]
    layers = list(model.layers)
    layers[li] = replace(layer, **{gname: getattr(layer, gname).paint_cells([(i, j, value)])})
    return Model(model.n, model.d, model.inner_n, model.inner_d, tuple(layers), model.name)


A = sym("a")
EDGE = [
    Circuit(2, 2, (Gate.lin(0, A, 3, A * A - 1), Gate.const(3), Gate.add(1, 5), Gate.mul(6, 2)), (4, 7), "sym coefficients"),
    Circuit(2, 2, (Gate.const(5), Gate.const(Fraction(-1, 3))), (4, 5, 4), "constants only"),
    Circuit(2, 1, (), (1, 0), "inputs as outputs"),
    Circuit(3, 1, (), (), "no outputs"),
    Circuit(2, 2, (Gate.mul(0, 0), Gate.add(4, 1)), (5, 5, 4, 0), "repeated outputs, unused inputs"),
    Circuit(1, 3, (Gate.mul(0, 1), Gate.mul(3, 2), Gate.lin(4, A, 0, 2)), (5, 3, 4), "one row"),
    Circuit(2, 2, (Gate.const(sym("c")), Gate.mul(4, 0)), (5, 4), "symbolic constant"),
    Circuit(3, 1, (Gate.sub(0, 0), Gate.mul(3, 1)), (4, 2), "cancelling lin gate"),
]


@pytest.mark.parametrize("c", EDGE, ids=[c.name for c in EDGE])
def test_edge_cases_compile_and_prove(c):
    out = compile(c, method="dense")
    assert proved(c, out)
    assert not out.over_bound(), out


@pytest.mark.parametrize("c", standard_library(True), ids=lambda c: c.name)
def test_library_circuits_compile_and_prove(c):
    out = compile(c, method="dense")
    assert out.method == "dense"
    assert proved(c, out)
    st_ = stats(c)
    assert out.resources["layers"] <= 2 * st_.depth + 5
    assert out.resources["inner_n"] == c.n and out.resources["inner_d"] <= 2 * st_.width
    assert out.model.signature == (c.n, out.resources["layers"], c.d, c.n, out.resources["inner_d"])


def test_a_few_hundred_gates_compile_and_prove_compositionally():
    c = random_circuit(4, 4, 300, 20, 0.3, seed=11, num_outputs=16)
    out = compile(c, method="dense")
    res = check_certificate(c, out.model, out.certificate)
    assert res.ok and res.stages_checked == out.model.depth
    assert not out.over_bound()
    u = [[Fraction(random.Random(3).randint(-9, 9), k + 1) for k in range(4)] for _ in range(4)]
    assert evaluate(c, u) == evaluate(out.model, u)


def test_certificate_has_a_boundary_after_every_layer_and_only_layout_is_cyclic():
    c = standard_library(True)[1]
    out = compile(c, method="dense")
    assert [b.layer for b in out.certificate.boundaries] == list(range(out.model.depth + 1))
    cyclic = [k for k, layer in enumerate(out.model.layers) if layer.mode is Mode.CYCLIC]
    assert cyclic == [1] and out.resources["cyclic_layers"] == 1
    assert out.resources["layout_layers"] + out.resources["level_layers"] == out.model.depth


def test_one_row_circuits_need_no_layout_and_no_cyclic_layer():
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    out = compile(c, method="dense")
    assert out.resources["layout_layers"] == 0 and out.model.modes() == {Mode.CAUSAL}
    assert out.model.depth == 2 and proved(c, out)


@settings(max_examples=40)
@given(circuits(max_n=3, max_d=2, max_gates=10, allow_sym=True))
def test_random_circuits_compile_prove_and_respect_the_bounds(c):
    out = compile(c, method="dense")
    assert proved(c, out)
    assert not out.over_bound()
    assert out.bounds == dense_bounds(stats(c).depth, stats(c).width, c.n)


def _all_mutants(model):
    for li, layer in enumerate(model.layers):
        for gname, g in layer.grids():
            for (i, j), v in g.nonzero().items():
                yield li, gname, i, j, v


@pytest.mark.parametrize("c", [standard_library(True)[k] for k in (0, 1, 3, 7)], ids=lambda c: c.name)
def test_every_single_nonzero_weight_mutation_is_refuted(c):
    out = compile(c, method="dense")
    ring = shared_ring(c, out.model)
    want = polynomials(c, ring)
    count = 0
    for li, gname, i, j, v in _all_mutants(out.model):
        bad = mutate(out.model, li, gname, i, j, v + 1)
        assert not check_certificate(c, bad, out.certificate).ok, (li, gname, i, j)
        assert polynomials(bad, ring) != want, (li, gname, i, j)
        count += 1
    assert count == out.model.nonzero_param_count()


def test_zero_weights_acting_on_live_cells_are_refuted():
    c = standard_library(True)[3]  # product tree: every input is used
    out = compile(c, method="dense")
    ring = shared_ring(c, out.model)
    want = polynomials(c, ring)
    bs = out.certificate.boundaries
    rng = random.Random(0)
    tried = 0
    for li, layer in enumerate(out.model.layers):
        live_in = sorted({c_.col for c_ in bs[li].cells if c_.row == 0})
        live_out = sorted({c_.col for c_ in bs[li + 1].cells if c_.row == 0})
        zeros = [(p, q) for p in live_in for q in live_out if layer.W.get(p, q) == 0]
        for p, q in rng.sample(zeros, min(3, len(zeros))):
            bad = mutate(out.model, li, "W", p, q, 1)
            assert not check_certificate(c, bad, out.certificate).ok
            assert polynomials(bad, ring) != want
            tried += 1
        for q in live_out[:2]:
            if layer.b1.get(0, q) == 0:
                bad = mutate(out.model, li, "b1", 0, q, 1)
                assert not check_certificate(c, bad, out.certificate).ok
                tried += 1
    assert tried >= 5


def test_a_mutation_is_refuted_by_verify_with_a_real_counterexample():
    from symverify.kernel.verification import verify

    c = standard_library(True)[3]
    out = compile(c, method="dense")
    li, gname, i, j, v = next(_all_mutants(out.model))
    bad = mutate(out.model, li, gname, i, j, v + 1)
    report = verify(c, bad, method="exact")
    assert report.refuted
    assert verify(c, out, method="compositional").proved


def test_lying_certificate_fails():
    c = standard_library(True)[4]
    out = compile(c, method="dense")
    b = out.certificate.boundaries
    cells = list(b[3].cells)
    cells[0] = replace(cells[0], const=1)  # claims node + 1
    lie = Certificate((*b[:3], replace(b[3], cells=tuple(cells)), *b[4:]))
    assert not check_certificate(c, out.model, lie).ok


# ---- dispatch and the result type ------------------------------------------------------------


def test_compile_rejects_bad_input_and_unknown_methods_and_options():
    c = Circuit(1, 1, (), (0,))
    with pytest.raises(CompileError, match="expected a Circuit, found str"):
        compile("x")
    with pytest.raises(CompileError, match=r"unknown method 'magic'; expected one of \['dense', 'kaleidoscope'\]"):
        compile(c, method="magic")
    with pytest.raises(CompileError, match=r"unknown options \['speed'\]"):
        compile(c, method="dense", speed=3)
    with pytest.raises(CompileError, match="expected a Circuit"):
        compile_dense(42)


def test_kaleidoscope_missing_is_a_compile_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "symverify.compiler.kaleidoscope", None)
    with pytest.raises(CompileError, match="method 'kaleidoscope' is unavailable"):
        compile(Circuit(1, 1, (), (0,)), method="kaleidoscope")


def test_kaleidoscope_without_entry_point_is_a_compile_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "symverify.compiler.kaleidoscope", types.ModuleType("symverify.compiler.kaleidoscope"))
    with pytest.raises(CompileError, match=r"defines no\s+compile_kaleidoscope"):
        compile(Circuit(1, 1, (), (0,)), method="kaleidoscope")


def test_kaleidoscope_dispatch_passes_options(monkeypatch):
    fake = types.ModuleType("symverify.compiler.kaleidoscope")
    model = compile(Circuit(1, 1, (), (0,), "c"), method="dense").model
    fake.compile_kaleidoscope = lambda circuit, **kw: Compiled(model, None, {"called": 1, **kw}, f"fake {circuit.name}")
    monkeypatch.setitem(sys.modules, "symverify.compiler.kaleidoscope", fake)
    out = compile(Circuit(1, 1, (), (0,), "c"), method="kaleidoscope", mode=1)
    assert out.method == "fake c" and dict(out.resources) == {"called": 1, "mode": 1}


def test_compiled_validates_and_reports():
    out = compile(Circuit(2, 1, (Gate.mul(0, 1),), (2,)), method="dense")
    assert out.over_bound() == []
    js = out.to_json()
    assert js["method"] == "dense" and js["signature"] == list(out.model.signature)
    assert "layers=" in str(out)
    with pytest.raises(CompileError, match="expected a Model"):
        Compiled("m", None, {}, "dense")
    with pytest.raises(CompileError, match=r"resources\['layers'\]: expected a number, found bool"):
        Compiled(out.model, None, {"layers": True}, "dense")
    with pytest.raises(CompileError, match="keys must be strings"):
        Compiled(out.model, None, {}, "dense", {1: 2})
    with pytest.raises(CompileError, match="non-empty name"):
        Compiled(out.model, None, {}, "")
    with pytest.raises(CompileError, match="Certificate or None"):
        Compiled(out.model, "cert", {}, "dense")
    over = Compiled(out.model, None, {"layers": 9, "x": Fraction(1, 2)}, "dense", {"layers": 5, "y": 1})
    assert over.over_bound() == ["layers", "y"]
    assert over.to_json()["resources"]["x"] == "1/2"


def test_dense_refuses_layered_forms_it_cannot_lay_out(monkeypatch):
    import symverify.compiler.dense as dense
    from symverify.kernel.ir.layered import LayeredForm, LinearStage, MulStage

    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    mul_first = LayeredForm(1, 2, 2, (MulStage(1, (0, 1), (0, 1), 1, (2,)),))
    monkeypatch.setattr(dense, "layered_form", lambda _c: mul_first)
    with pytest.raises(CompileError, match="not preceded by a linear stage"):
        compile(c, method="dense")
    lin = LinearStage(1, (0, 1), (0, 1), (((0, 1),), ((1, 1),)), (0, 0))
    dup = LayeredForm(1, 2, 2, (lin, MulStage(1, (0, 1), (0, 0), 1, (2,))))
    monkeypatch.setattr(dense, "layered_form", lambda _c: dup)
    with pytest.raises(CompileError, match="does not route a permutation"):
        compile(c, method="dense")
    monkeypatch.setattr(dense, "layered_form", lambda _c: LayeredForm(1, 2, 2, ()))
    with pytest.raises(CompileError, match="has no stages"):
        compile(c, method="dense")
    monkeypatch.setattr(dense, "layered_form", lambda _c: LayeredForm(1, 2, 2, (lin,)))
    with pytest.raises(CompileError, match="not the output list"):
        compile(c, method="dense")


@pytest.mark.parametrize("k", [0, 3], ids=["walsh_hadamard", "product_tree"])
def test_dense_and_kaleidoscope_models_agree(k):
    """The two compilers are independent; their models must be the same polynomial map."""
    c = standard_library(True)[k]
    dense, kal = compile(c, method="dense"), compile(c, method="kaleidoscope")
    assert check_certificate(c, dense.model, dense.certificate).ok
    ring = shared_ring(dense.model, kal.model)
    assert polynomials(dense.model, ring) == polynomials(kal.model, ring)
