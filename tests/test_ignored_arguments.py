"""No argument of the public API is silently ignored: an argument given where nothing reads it (a
convolution ``path`` for a circuit or on the exact backend, a prime ``p`` for float butterflies, a
layer ``index`` for a lone layer, a new node ``to`` for an operator that keeps the nodes, a symbol
``prefix`` when every weight is given) is a ``SymverifyError`` naming the argument, its value and
where it applies; the combinations that read it still work."""

from fractions import Fraction

import pytest

import symverify as sv
from symverify import library, library_gated, mutate
from symverify.errors import IRError, UsageError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid

torch = pytest.importorskip("torch")

from symverify.executors import execute, modular_eval, numeric_check  # noqa: E402
from symverify.kaleidoscope import compile_numpy  # noqa: E402
from symverify.kernel.ir.butterfly import ButterflyFactor  # noqa: E402

CIRCUIT = Circuit(1, 2, (Gate.mul(0, 1),), (2, 0))
SQUARE = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
PATHS = ("fft", "direct", "sparse")


# ---- execute / modular_eval / numeric_check: ``path`` is a model's convolution path -------------

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("obj, u, why", [
    pytest.param(SQUARE, [[3], [-2]], r"backends 'torch' and 'modular' only \(backend is 'exact'", id="model"),
    pytest.param(CIRCUIT, [[3, 4]], r"models only .*found a circuit", id="circuit"),  # no paths on either count
])
def test_execute_exact_refuses_a_path(obj, u, why, path):
    with pytest.raises(IRError, match=rf"path='{path}' applies to {why}"):
        execute(obj, u, backend="exact", path=path)
    assert execute(obj, u, backend="exact").tolist() == execute(obj, u, path="auto").tolist()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("backend", ["torch", "modular"])
def test_execute_refuses_a_path_for_a_circuit(backend, path):
    with pytest.raises(IRError, match=rf"path='{path}' applies to models only .*found a circuit"):
        execute(CIRCUIT, [[3, 4]], backend=backend, path=path)
    assert execute(CIRCUIT, [[3, 4]], backend=backend).tolist() == [[12, 3]]
    assert execute(SQUARE, [[3], [-2]], backend=backend, path=path).tolist() == [[9], [4]]  # a model reads it


def test_execute_reads_a_path_for_a_compiled_object():
    comp = sv.compile(CIRCUIT, method="dense")
    assert execute(comp, [[3, 4]], backend="torch", path="direct").tolist() == [[12, 3]]  # a compiled object is a model


@pytest.mark.parametrize("path", PATHS)
def test_modular_eval_refuses_a_path_for_a_circuit(path):
    pts = torch.tensor([[[5, 6]]])
    with pytest.raises(IRError, match=rf"path='{path}' applies to models only"):
        modular_eval(CIRCUIT, pts, 7, path=path)
    assert modular_eval(CIRCUIT, pts, 7).tolist() == [[[2, 5]]]
    assert modular_eval(SQUARE, torch.tensor([[[3], [5]]]), 7, path=path).tolist() == [[[2], [4]]]


@pytest.mark.parametrize("path", PATHS)
def test_numeric_check_refuses_a_path_for_a_circuit(path):
    with pytest.raises(IRError, match=rf"path='{path}' applies to models only"):
        numeric_check(CIRCUIT, [[[3, 4]]], path=path)
    assert numeric_check(CIRCUIT, [[[3, 4]]]).ok
    chk = numeric_check(SQUARE, [[[3], [-2]]], path=path)
    assert chk.ok and chk.path == path


def test_a_bad_path_name_is_still_named_first():
    with pytest.raises(IRError, match="path: expected one of"):
        execute(CIRCUIT, [[3, 4]], backend="torch", path="fast")


# ---- compile_numpy: ``p`` is the prime of kind='mod' ---------------------------------------------

def test_compile_numpy_refuses_a_prime_for_floats():
    f = ButterflyFactor(2, 1, (1,), (2,), (3,), (4,))
    with pytest.raises(IRError, match=r"p=7 applies to kind='mod' only \(kind is 'float'\)"):
        compile_numpy(f, "float", 7)
    assert compile_numpy(f, "float").apply([1.0, 1.0]).tolist() == [3.0, 7.0]
    assert compile_numpy(f, "mod", 7).apply([1, 1]).tolist() == [3, 0]


# ---- plot_weights: ``index`` picks a layer of a model ---------------------------------------------

def test_plot_weights_refuses_an_index_for_a_layer():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from symverify.viz import plot_weights

    with pytest.raises(UsageError, match=r"index=0 chooses a layer of a Model or Compiled; found a Layer"):
        plot_weights(SQUARE.layers[0], 0)
    plt.close(plot_weights(SQUARE.layers[0]))
    plt.close(plot_weights(SQUARE, 0))


# ---- mutate: ``to`` is the new node of 'rewire' and of 'node' -----------------------------------

@pytest.mark.parametrize("op", ["op", "coeff", "coeff_sym", "coeff_p"])
def test_mutate_gate_refuses_to_for_other_operators(op):
    c = Circuit(1, 2, (Gate.add(0, 1), Gate.mul(0, 2)), (3,))
    with pytest.raises(UsageError, match=rf"to=1 is the new node of operator 'rewire' only; found operator '{op}'"):
        mutate.mutate_gate(c, 0, op, to=1)
    mutate.mutate_gate(c, 0, op)
    assert mutate.mutate_gate(c, 1, "rewire", which=1, to=1).gates[1].args == (0, 1)


@pytest.mark.parametrize("op", ["coeff", "const", "drop"])
def test_mutate_cell_refuses_to_for_other_operators(op):
    c = library.determinant(2)
    cert = sv.compile(c, method="dense").certificate
    k = next(k for k in range(1, len(cert.boundaries) - 1) if cert.boundaries[k].cells and cert.boundaries[k].cells[0].terms)
    with pytest.raises(UsageError, match=rf"to=0 is the new node of operator 'node' only; found operator '{op}'"):
        mutate.mutate_cell(cert, k, 0, op, to=0)
    mutate.mutate_cell(cert, k, 0, op)
    node = cert.boundaries[k].cells[0].terms[0][0]
    mutate.mutate_cell(cert, k, 0, "node", to=(node + 1) % c.num_nodes)


# ---- weight builders: ``prefix`` names the symbolic weights --------------------------------------

def test_retnet_weights_refuse_a_prefix_with_every_weight_given():
    eye = [[1, 0], [0, 1]]
    with pytest.raises(IRError, match=r"prefix='L0\.' names the symbolic weights, but gamma, W_A, W_C and W_V are all given"):
        library.retnet_weights(2, Fraction(1, 2), eye, eye, eye, prefix="L0.")
    assert library.retnet_weights(2, Fraction(1, 2), eye, eye, eye).gamma == Fraction(1, 2)
    assert str(library.retnet_weights(2, Fraction(1, 2), eye, eye, prefix="L0.").W_V[0][1]) == "L0.W_V[0][1]"


def _gated(d: int) -> dict[str, object]:
    w = 3 * d
    return {"W_in": [[1] * w] * d, "b_in": [0] * w, "short": [[1]] * w, "short_bias": [0] * w, "long": [[[1]] * d],
            "long_skip": [[0] * d], "W_out": [[1] * d] * d, "b_out": [0] * d}


def test_gated_conv_weights_refuse_a_prefix_with_every_weight_given():
    given = _gated(1)
    with pytest.raises(IRError, match=r"gated: prefix='x' names the symbolic weights, but every weight is given"):
        library_gated.gated_conv_weights(2, 1, prefix="x", **given)
    library_gated.gated_conv_weights(2, 1, **given)
    given.pop("b_out")
    assert str(library_gated.gated_conv_weights(2, 1, prefix="x", **given).b_out[0]) == "xb_out[0]"


def test_hyena_weights_refuse_a_prefix_with_every_weight_given():
    g = _gated(1)
    given = {"in_proj": g["W_in"], "in_bias": g["b_in"], "short_filter": g["short"], "short_bias": g["short_bias"],
             "filters": g["long"], "filter_bias": g["long_skip"], "out_proj": g["W_out"], "out_bias": g["b_out"]}
    with pytest.raises(IRError, match=r"hyena: prefix='x' names the symbolic weights, but every weight is given"):
        library_gated.hyena_weights(2, 1, prefix="x", **given)
    given.pop("in_bias")
    assert str(library_gated.hyena_weights(2, 1, prefix="x", **given).b_in[0]) == "xb_in[0]"


def test_h3_weights_refuse_a_prefix_with_every_weight_given():
    one, eye = [1], [[1]]
    given = {"W_q": eye, "b_q": one, "W_k": eye, "b_k": one, "W_v": eye, "b_v": one, "shift_kernel": [[1]],
             "shift_D": one, "ssm_kernel": [[1]], "D": one, "W_out": eye, "b_out": one}
    with pytest.raises(IRError, match=r"h3: prefix='x' names the symbolic weights, but every weight is given"):
        library_gated.h3_weights(2, 1, prefix="x", **given)
    library_gated.h3_weights(2, 1, **given)
    # one weight symbolic: made by h3_weights itself (the gated form's weights are all given then)
    partial = dict(given, W_q=None)
    assert str(library_gated.h3_weights(2, 1, prefix="x", **partial).W_in[0][1]) == "xW_q[0][0]"
    partial = dict(given, b_out=None)
    assert str(library_gated.h3_weights(2, 1, prefix="x", **partial).b_out[0]) == "xb_out[0]"
